/*
** memindex.h — the in-memory inverted index of a RAM segment.
**
** Contract. An FtsMem indexes documents numbered by ordinals the caller
** assigns in increasing order (the table's slot numbers). Adding is two
** steps so the expensive part runs outside the table's write lock:
**   1. fts_docbuf_field() analyses each full-text field of a new document
**      into an FtsDocBuf (no shared state touched; any thread);
**   2. fts_mem_add() appends the buffered terms under ordinal `doc` (with
**      the writer's exclusive access), which must be larger than every
**      ordinal added before.
** Documents are never removed: the caller skips deleted ordinals when it
** reads (the table's tombstones), and rebuilds the index when it compacts.
**
** fts_mem_source() exposes the index through the FtsSource interface
** (source.h). Readers may run concurrently with each other but not with
** fts_mem_add(): the table's rwlock provides exactly that.
*/
#ifndef LP_FTS_MEMINDEX_H
#define LP_FTS_MEMINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "fts/source.h"
#include "text/analyzer.h"
#include "util/error.h"
#include "util/threadpool.h"

/* The analysed terms of one document, before it is added: one record per
** distinct key (field byte + term), in order of first occurrence per field,
** each with its positions already in the form the index stores them. A
** field is analysed in a per-thread scratch buffer (hash table, occurrence
** chains) and only its records are copied here, into one allocation sized
** to them exactly: the buffers of a large INSERT all live until it is
** applied, and hold about what their documents will add to the index.
** The record layout is described at the top of memindex.c. */
#define FTS_DOC_LEN_INLINE 6

typedef struct FtsDocBuf {
    uint8_t *a;             /* the records, back to back */
    size_t n, cap;          /* bytes of records, bytes allocated */
    uint32_t nTerm;         /* records */
    /* Words per field (stop words included): the first FTS_DOC_LEN_INLINE
    ** fields here, the others in aLenMore (fts_docbuf_len reads either). */
    uint32_t aLen[FTS_DOC_LEN_INLINE];
    uint32_t *aLenMore;     /* fields FTS_DOC_LEN_INLINE .. nFields-1, or NULL */
    int nFields;            /* fields seen so far (highest index + 1) */
    int nLenMore;           /* entries allocated in aLenMore */
} FtsDocBuf;

/* The words of field iField (< nFields) of d. */
static inline uint32_t fts_docbuf_len(const FtsDocBuf *d, int iField) {
    return iField < FTS_DOC_LEN_INLINE ? d->aLen[iField] : d->aLenMore[iField - FTS_DOC_LEN_INLINE];
}

/* Empties the buffer for the next document (keeps its memory). */
void fts_docbuf_reset(FtsDocBuf *d);
/* Releases its memory; the buffer is then empty and may be used again. */
void fts_docbuf_free(FtsDocBuf *d);
/* Analyses z[0..n) as field iField of the document. LP_OK, LP_BADINPUT
** (invalid UTF-8: err names the byte offset), LP_NOMEM. */
int fts_docbuf_field(FtsDocBuf *d, const Analyzer *an, int iField, const char *z, size_t n,
                     LpError *err);

typedef struct FtsMem FtsMem; /* opaque */

FtsMem *fts_mem_new(int nFields);
void fts_mem_free(FtsMem *m);

/* Lets large batches of documents (fts_mem_reserve/fts_mem_append_batch in
** memindex_int.h) be added by pool's threads as well as the caller's, each
** thread taking a share of the terms. The pool must outlive the index;
** NULL (the default) keeps the work on the caller's thread. */
void fts_mem_set_pool(FtsMem *m, Tpool *pool);

/* Appends document `doc`. LP_OK or LP_NOMEM (then nothing of the document
** is visible: the index is as before). */
int fts_mem_add(FtsMem *m, uint32_t doc, FtsDocBuf *d);

/* Reads through the FtsSource interface (valid until fts_mem_free). */
FtsSource *fts_mem_source(FtsMem *m);

/* Heap bytes used (SHOW TABLE STATUS; the RAM segment's flush limit), the
** wildcards' trigram index included once built. */
size_t fts_mem_bytes(const FtsMem *m);
/* Distinct keys. */
size_t fts_mem_nterms(const FtsMem *m);

#endif /* LP_FTS_MEMINDEX_H */
