/*
** segment.h — the sealed full-text segment file: a streaming writer and an
** mmap'd reader that serves the file through the FtsSource interface
** (source.h). The byte layout is documented at the top of segwriter.c.
**
** Writer. fts_segw_open() creates the file; the caller then feeds it in
** order, as the in-memory index does when it flushes:
**   - fts_segw_doclens(iField, aLen) once per field, giving the nDocs
**     lengths of that field. A field's lengths must be given before its
**     first term (the writer computes each block's impact, whose minLen
**     needs them), and every field's before fts_segw_finish().
**   - fts_segw_term(key) for each key, strictly ascending (memcmp order,
**     a shorter key first when one is a prefix of the other); key[0] is
**     the field (< nFields); 1 <= nKey <= FTS_MAX_KEY. A term given no
**     postings is not written.
**   - fts_segw_earlier(nEarlier), optionally, any time before the next
**     key: of the current key's documents, how many hold its term in a
**     lower field too (FtsTermInfo.nEarlier; 0 when not given; must be 0
**     for field 0 and at most the key's df).
**   - fts_segw_posting(doc, aPos, tf) for each document of the current
**     term: docs strictly ascending and < nDocs, tf >= 1, aPos the tf
**     word positions in non-decreasing order (positions are always
**     stored).
**   - fts_segw_finish() writes the dictionary, the doc lengths and the
**     footer, fsyncs and closes the file (the caller fsyncs the folder
**     when it publishes the file), and frees the writer, success or not.
**     fts_segw_abort() instead removes the partial file and frees.
** Errors are sticky, as in SQLite's fts5_index.c: the first failing call
** returns its code (LP_BADINPUT for an order or range violation, LP_NOMEM,
** LP_IOERR) and keeps the message; every later call returns the same code
** without doing anything, and fts_segw_finish() reports the message in err
** and removes the file. Memory: the writer keeps the doc lengths, the
** dictionary being built (about 10 bytes a term) and the current term's
** postings (8 bytes a posting plus its encoded positions).
**
** Reader. fts_segr_open() maps the file read-only and verifies, before
** anything is served: the header and footer (magic, version, checksums),
** the CRC32C of every section, that the sections tile the file exactly and
** the structure of the dictionary index and doc lengths. Everything
** decoded later (dictionary entries, postings blocks, bit widths, varints,
** positions) is bounds-checked as it is read, so a damaged file is
** LP_CORRUPT with a message naming the file and the byte offset, never a
** crash, an out-of-bounds read or an endless loop; fts_segr_check() walks
** the whole file eagerly (for tools and tests). The file must not change
** while mapped (sealed files never do): a file truncated under a live
** mapping faults.
**
** Cursors follow the in-memory index's conventions: a missing key gives
** an empty cursor (df 0, maxTf 0, minLen UINT32_MAX); xShallow() past the
** end returns FTS_NO_DOC with maxTf 0 and minLen UINT32_MAX; a list of
** fewer than 128 postings is one block. Positions are stored for every
** posting, so xPositions() works whatever bPositions was at xOpen().
**
** Errors met by a postings cursor. xNext/xAdvance/xShallow have no error
** channel in FtsPostingsVt, so a cursor that finds a damaged block ends
** its list: doc becomes FTS_NO_DOC, xShallow() reports FTS_NO_DOC, and the
** error is kept in the cursor: fts_segr_postings_status() returns it (with
** the message), and xPositions() returns it too. A caller that must tell
** "exhausted" from "damaged" checks the status when a list ends.
**
** Ownership and lifetime. The FtsSource of a segment (fts_segr_source) is
** owned by the segment; keys, cursors' data and positions point into the
** mapping and are valid until fts_segr_close(), which must come after
** every cursor of the segment has been closed.
**
** Thread safety. A writer belongs to one thread. An open segment is
** read-only: its source may be used from many threads at once; a cursor
** belongs to one thread.
*/
#ifndef LP_FTS_SEGMENT_H
#define LP_FTS_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "fts/source.h"
#include "util/error.h"

/* Keys per prefix-compressed dictionary block. A lookup binary-searches
** the blocks' first keys (an in-memory table of their first 8 bytes),
** then reads up to K entries of one block. 8 against 16: 9-12% fewer
** instructions per query on adi's term, AND, OR and phrase queries, 2-4%
** on scifact's, for 1-4% more segment bytes (4: 3-7% fewer again on adi,
** for 12% more bytes there). Readers take K from the footer, so segments
** written with another K still open. */
#define FTS_SEG_DICT_BLOCK 8

typedef struct FtsSegWriter FtsSegWriter; /* opaque */
typedef struct FtsSegment FtsSegment;     /* opaque */

/* ---------------------------------------------------------------- writer */

/* Creates (or truncates) zPath for a segment of nDocs documents (0 ..
** FTS_BEFORE_FIRST) and nFields full-text fields (1 .. FTS_MAX_FIELDS).
** NULL + err on error: LP_BADINPUT (counts out of range), LP_IOERR, LP_NOMEM. */
FtsSegWriter *fts_segw_open(const char *zPath, uint32_t nDocs, int nFields, LpError *err);

/* fts_segw_open with options: FTS_SEGW_INFIX also stores the infix filter
** (fts/infix.h) for the table's wildcards, so that no reader has to build
** it from the dictionary (tables with min_infix_len). */
#define FTS_SEGW_INFIX 1u
/* With FTS_SEGW_INFIX: the filter covers the exact forms' keys only
** ('=' after the field byte), for a table with exact forms
** (analyzer_has_exact_forms), whose scans read no other key: on stemmed
** SciFact 0.74 MB instead of 1.14. A scan of other keys then reads every
** block of its range. */
#define FTS_SEGW_INFIX_EXACT 2u
FtsSegWriter *fts_segw_open_flags(const char *zPath, uint32_t nDocs, int nFields, unsigned flags,
                                  LpError *err);

/* Starts key[0..nKey). LP_OK, or LP_BADINPUT (not ascending, bad length or
** field, field lengths not given yet), LP_NOMEM, LP_IOERR, or the earlier
** sticky error. */
int fts_segw_term(FtsSegWriter *w, const uint8_t *key, int nKey);

/* Adds a document to the current term. LP_OK, or LP_BADINPUT (no current
** term, doc not ascending or >= nDocs, tf 0, aPos NULL or descending),
** LP_NOMEM, or the earlier sticky error. */
int fts_segw_posting(FtsSegWriter *w, uint32_t doc, const uint32_t *aPos, uint32_t tf);

/* fts_segw_posting with the positions already encoded as the file stores
** them (FtsPostingsVt.xPosBytes): pPos[0..nPos) is copied after a check
** that it holds exactly tf varints of at most VARINT_MAX32 bytes
** (LP_BADINPUT otherwise). */
int fts_segw_posting_enc(FtsSegWriter *w, uint32_t doc, uint32_t tf, const uint8_t *pPos, size_t nPos);

/* fts_segw_posting_enc for n postings at once: documents aDoc[0..n) with
** tfs aTf[0..n), their positions back to back in pPos[0..nPos) (as
** FtsPostingsVt.xBlock gives them), checked as fts_segw_posting_enc checks
** each posting's. LP_OK (nothing to do when n is 0), or as
** fts_segw_posting_enc. */
int fts_segw_postings(FtsSegWriter *w, const uint32_t *aDoc, const uint32_t *aTf, uint32_t n,
                      const uint8_t *pPos, size_t nPos);

/* Writing in parts, on several threads. fts_segw_open_part(pMain) makes a
** writer of pMain's documents and fields whose data section and
** dictionary are kept in memory; it reads pMain's doc lengths, so every
** field's must be given to pMain first, and pMain must outlive it. Terms
** and postings go to it as to any writer (one thread per writer).
** fts_segw_append_part(w, part) then appends the part's keys to w, as if
** they had been given to w (the file is byte for byte the same), and frees
** the part: parts are appended in key order, each after the keys before
** it, and every part but the last must hold a multiple of
** FTS_SEG_DICT_BLOCK keys (a dictionary block is not split). w may take
** the first part's keys itself, on any one thread while the parts are
** written: its last key is finished when the next part is appended. A part's
** error becomes w's. LP_OK, the part's error, LP_INTERNAL (a block would
** be split), LP_NOMEM, LP_IOERR. */
FtsSegWriter *fts_segw_open_part(const FtsSegWriter *pMain, LpError *err);
int fts_segw_append_part(FtsSegWriter *w, FtsSegWriter *part);

/* Sets the current term's nEarlier (see above). LP_OK, or LP_BADINPUT (no
** current term, non-zero in field 0; more than the term's df is reported
** when the term ends), or the earlier sticky error. */
int fts_segw_earlier(FtsSegWriter *w, uint32_t nEarlier);

/* Gives field iField's lengths aLen[0..nDocs) (copied). LP_OK, or
** LP_BADINPUT (iField out of range, given twice, or after its first
** term), LP_NOMEM, or the earlier sticky error. */
int fts_segw_doclens(FtsSegWriter *w, int iField, const uint32_t *aLen);

/* Completes the file (see above) and frees w. LP_OK, or the sticky error,
** LP_BADINPUT (a field's lengths missing), LP_LIMIT (dictionary over
** 4 GiB), LP_IOERR or LP_NOMEM, with err filled; on error the file is
** removed. */
int fts_segw_finish(FtsSegWriter *w, LpError *err);

/* Removes the partial file and frees w. w may be NULL. */
void fts_segw_abort(FtsSegWriter *w);

/* ---------------------------------------------------------------- reader */

/* Opens and verifies zPath (see above). LP_OK and *ppSeg, or NULL and
** LP_IOERR (cannot open/map), LP_CORRUPT (damaged; message names zPath and
** the offset), LP_NOMEM. */
int fts_segr_open(const char *zPath, FtsSegment **ppSeg, LpError *err);

/* fts_segr_open_mem flag: skip every CRC32C verification (header, footer,
** sections); the structure is still verified. For the fuzz target and the
** damage tests, which must get past the checksums to reach the decoders;
** never for real files. */
#define FTS_SEGR_NOCHECKSUM 0x1

/* As fts_segr_open over a[0..n), which the caller keeps unchanged and
** alive until fts_segr_close(); zName names it in messages. */
int fts_segr_open_mem(const uint8_t *a, size_t n, const char *zName, int flags, FtsSegment **ppSeg,
                      LpError *err);

/* The segment's FtsSource, owned by the segment. */
FtsSource *fts_segr_source(FtsSegment *seg);

/* Unmaps and frees. seg may be NULL. */
void fts_segr_close(FtsSegment *seg);

/* Counts and sizes, for tools (loupe-inspect) and reports. */
typedef struct FtsSegInfo {
    uint32_t nDocs;       /* documents */
    int nFields;          /* full-text fields */
    uint64_t nTerms;      /* keys in the dictionary */
    uint64_t nPostings;   /* sum of df over all keys */
    uint64_t nPositions;  /* sum of cf over all keys */
    uint64_t szFile;      /* bytes in the file */
    uint64_t szData;      /* postings + positions section */
    uint64_t szPositions; /* of which positions */
    uint64_t szDict;      /* dictionary blocks */
    uint64_t szDictIndex; /* sparse index of the blocks */
    uint64_t szDocLens;   /* doc lengths */
    uint64_t szInfix;     /* the infix filter: its INFIX section in the file,
                          ** or in memory once a wildcard scan has built it
                          ** (a file without it); else 0 */
} FtsSegInfo;

/* Fills *pInfo. szPositions needs a walk of the dictionary: LP_OK, or
** LP_CORRUPT with err filled. */
int fts_segr_info(FtsSegment *seg, FtsSegInfo *pInfo, LpError *err);

/* Decodes and cross-checks everything: key order and fields, every
** postings block against its skip entry and impact, df, cf, every
** position list, and that the term regions tile the data section. LP_OK,
** LP_CORRUPT (err names the file, term and offset) or LP_NOMEM. */
int fts_segr_check(FtsSegment *seg, LpError *err);

/* LP_OK, or the error that ended the list of p (a cursor of a segment
** source), copied into err. */
int fts_segr_postings_status(const FtsPostings *p, LpError *err);

#endif /* LP_FTS_SEGMENT_H */
