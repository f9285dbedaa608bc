/*
** source.h — what the full-text query engine reads from: an index of one
** segment (the in-memory index of the RAM segment, or a sealed segment
** file), behind one interface, as redis's ae.h hides its backends.
**
** Model. A segment numbers its documents with dense ordinals 0..nDocs-1.
** Terms are keys of bytes: one byte for the field (0..FTS_MAX_FIELDS-1, the
** table's TEXT fields in declaration order), then the analysed term, so
** all the terms of one field are contiguous in key order and a prefix query
** is a range scan. Each key has a postings list: the ordinals of the
** documents holding it, ascending, each with its frequency (tf) and, on
** request, the word positions.
**
** Postings lists are read through an FtsPostings cursor:
**   - doc/tf are plain fields (no call needed to read them); doc is
**     FTS_NO_DOC once the list is exhausted; before the first xNext() or
**     xAdvance() it is FTS_BEFORE_FIRST.
**   - xAdvance(target) moves to the first doc >= target (never backwards).
**   - xPositions() gives the current doc's positions (tf of them,
**     ascending); only for cursors opened with positions.
**   - Block-max pruning: lists are cut into blocks of FTS_BLOCK postings and
**     each block records its impact: the largest tf in it and the smallest
**     field length among its documents. No BM25 parameter enters a stored
**     impact, so weights and k1/b can change per query: the caller turns
**     (maxTf, minLen) into a score bound. xShallow(target) reports the
**     block holding target (its last doc and impact) without decoding it;
**     past the end it returns FTS_NO_DOC with maxTf 0, minLen UINT32_MAX.
**   - Errors: a damaged sealed segment ends a list early; xStatus tells.
**     xScan returns LP_OK, the callback's non-zero value, or a (positive)
**     LP_* error code.
**
** Lifetime: a source and its cursors are valid while the snapshot that
** produced them is held. Sealed-segment cursors point into the mmap'd file.
** Thread safety: a source may be read from many threads at once; a cursor
** belongs to one thread.
*/
#ifndef LP_FTS_SOURCE_H
#define LP_FTS_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define FTS_BLOCK 128
#define FTS_MAX_FIELDS 255
#define FTS_MAX_KEY (1 + 64)            /* field byte + ANALYZER_MAX_TERM */
#define FTS_NO_DOC UINT32_MAX
#define FTS_BEFORE_FIRST (UINT32_MAX - 1)

typedef struct FtsPostings FtsPostings;

typedef struct FtsPostingsVt {
    /* Next document, or FTS_NO_DOC. */
    uint32_t (*xNext)(FtsPostings *p);
    /* First document >= target, or FTS_NO_DOC. target > current doc. */
    uint32_t (*xAdvance)(FtsPostings *p, uint32_t target);
    /* Positions of the current document into aPos (room for p->tf).
    ** LP_OK, or LP_CORRUPT (sealed segment damaged; err names the file). */
    int (*xPositions)(FtsPostings *p, uint32_t *aPos, LpError *err);
    /* The block holding the first doc >= target: stores its impact and
    ** returns its last doc (FTS_NO_DOC past the end). Does not move doc. */
    uint32_t (*xShallow)(FtsPostings *p, uint32_t target, uint32_t *pMaxTf, uint32_t *pMinLen);
    void (*xClose)(FtsPostings *p);
    /* LP_OK, or the error that ended the list early (a damaged block of a
    ** sealed segment: doc became FTS_NO_DOC before the real end). Callers
    ** check it once a list is exhausted. */
    int (*xStatus)(FtsPostings *p, LpError *err);
    /* Optional (NULL: use xPositions): the current document's positions as
    ** a sealed segment stores them (tf varints, the first position itself,
    ** then each one's distance from the one before: segwriter.c) in
    ** [*pp, *pp + *pn), valid while the cursor is not moved; they then
    ** count as read, as after xPositions. LP_OK, or as xPositions. A flush
    ** or merge copies them into the new segment instead of decoding and
    ** encoding them again. */
    int (*xPosBytes)(FtsPostings *p, const uint8_t **pp, size_t *pn, LpError *err);
    /* Optional (NULL: use xNext and xPosBytes): the list's next block, for
    ** a flush that copies whole lists. Only on a cursor opened with
    ** positions that nothing but xBlock has moved: the next FTS_BLOCK
    ** postings (fewer only at the end of the list), their documents into
    ** aDoc and tfs into aTf (room for FTS_BLOCK each), their positions as
    ** xPosBytes gives them, back to back, in [*pp, *pp + *pn) (valid while
    ** the cursor is not moved). doc and tf become the block's last.
    ** Returns the postings (0 at the end), or -LP_INTERNAL when the cursor
    ** was moved otherwise, with err. */
    int (*xBlock)(FtsPostings *p, uint32_t *aDoc, uint32_t *aTf, const uint8_t **pp, size_t *pn,
                  LpError *err);
} FtsPostingsVt;

struct FtsPostings {
    const FtsPostingsVt *vt;
    uint32_t doc;           /* current document ordinal */
    uint32_t tf;            /* its term frequency (valid when doc is a document) */
    uint32_t df;            /* documents in the whole list */
    uint32_t maxTf;         /* impact of the whole list: largest tf ... */
    uint32_t minLen;        /* ... and smallest field length */
};

/* FtsTermInfo.nEarlier when the source cannot tell (a segment file
** written before the count was kept). */
#define FTS_EARLIER_UNKNOWN UINT32_MAX

typedef struct FtsTermInfo {
    uint32_t df;            /* documents containing the key */
    uint32_t nEarlier;      /* of those, the documents that also hold the
                            ** key's term in a lower field (key byte 0 lower):
                            ** 0 for field 0, else up to df, or
                            ** FTS_EARLIER_UNKNOWN. A term's documents over
                            ** fields 0..f are the sum of df - nEarlier. */
    uint64_t cf;            /* total occurrences */
    uint64_t aLoc[3];       /* where the source keeps the key (opaque to callers):
                            ** lets xOpenFound skip the dictionary search */
} FtsTermInfo;

/* Called per key of a prefix scan, in ascending key order; non-zero stops
** the scan and is returned. */
typedef int (*FtsKeyFn)(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info);

/* A scan callback's answer (xScanSkip, fts_scan_skipping() in multi.h)
** that passes over the keys no longer wanted: those beginning with the
** key's first n bytes (1 <= n <= nKey). The scan searches for the first
** key after them, or may report some of them still (the callback then
** answers them the same). */
#define FTS_SCAN_SKIP(n) (-(n))

/* Into out (room for FTS_MAX_KEY bytes), the least byte string above every
** key that begins with key[0..n): its length, or 0 when there is none
** (the bytes are all 0xFF). */
static inline int fts_key_after(const uint8_t *key, int n, uint8_t *out) {
    while (n > 0 && key[n - 1] == 0xFF) n--;
    for (int i = 0; i + 1 < n; i++) out[i] = key[i];
    if (n > 0) out[n - 1] = (uint8_t)(key[n - 1] + 1);
    return n;
}

/* Byte strings that every key a scan is after holds in its term (the
** bytes after the field byte): the literal parts of a wildcard such as
** `*cat*ing`. A source may leave out keys that lack one of them; it need
** not (the in-memory index does not), so the callback still checks each
** key it is given. */
typedef struct FtsScanHas {
    const uint8_t *const *aPart; /* the strings ... */
    const int *anPart;           /* ... their lengths (a string shorter
                                 ** than a source can use is ignored) */
    int nPart;
} FtsScanHas;

typedef struct FtsSource FtsSource;

typedef struct FtsSourceVt {
    /* 1 and *pInfo when the key exists, 0 when not, <0 (-LP_*) on error. */
    int (*xLookup)(FtsSource *s, const uint8_t *key, int nKey, FtsTermInfo *pInfo, LpError *err);
    /* Opens the key's postings (NULL + err on error; a missing key gives an
    ** empty cursor, never NULL). */
    FtsPostings *(*xOpen)(FtsSource *s, const uint8_t *key, int nKey, int bPositions,
                          LpError *err);
    /* Every key starting with prefix[0..nPrefix), ascending. */
    int (*xScan)(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                 LpError *err);
    /* Length (words) of field iField of document doc; 0 when the document
    ** has none. */
    uint32_t (*xDocLen)(FtsSource *s, int iField, uint32_t doc);
    /* As xOpen, for a key that xLookup or xScan of this source reported
    ** with *info: opened where the dictionary search found it, not
    ** searched for again (a query looks every key up while planning). */
    FtsPostings *(*xOpenFound)(FtsSource *s, const uint8_t *key, int nKey, const FtsTermInfo *info,
                               int bPositions, LpError *err);
    /* Optional (NULL: xScan): as xScan, but keys whose term lacks one of
    ** pHas's strings may be left out (see FtsScanHas); what it reports is
    ** in xScan's order. fts_source_scan_has() picks the call. */
    int (*xScanHas)(FtsSource *s, const uint8_t *prefix, int nPrefix, const FtsScanHas *pHas,
                    FtsKeyFn xKey, void *ctx, LpError *err);
    /* Optional (NULL: xScan, nothing passed over): as xScan, but xKey may
    ** also answer FTS_SCAN_SKIP(n), and the scan goes on at the first key
    ** that does not begin with the key's first n bytes, found by a search
    ** rather than by reading the keys between; or, when that key is near
    ** (a search would cost more than reading), it reads on and reports
    ** them: the callback answers them again (it remembers the prefix).
    ** fts_scan_skipping() (multi.h) picks the call. */
    int (*xScanSkip)(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                     LpError *err);
} FtsSourceVt;

struct FtsSource {
    const FtsSourceVt *vt;
    uint32_t nDocs;                     /* documents (ordinals) in the segment */
    int nFields;                        /* full-text fields */
    const uint64_t *aSumLen;            /* per field: total length of all documents */
};

/* s's xScanHas, or its xScan when it has none or pHas is NULL. */
static inline int fts_source_scan_has(FtsSource *s, const uint8_t *prefix, int nPrefix,
                                      const FtsScanHas *pHas, FtsKeyFn xKey, void *ctx,
                                      LpError *err) {
    if (pHas && pHas->nPart > 0 && s->vt->xScanHas) {
        return s->vt->xScanHas(s, prefix, nPrefix, pHas, xKey, ctx, err);
    }
    return s->vt->xScan(s, prefix, nPrefix, xKey, ctx, err);
}

#endif /* LP_FTS_SOURCE_H */
