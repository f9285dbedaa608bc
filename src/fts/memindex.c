/*
** memindex.c — see memindex.h.
**
** Layout of one term's postings in memory (all varints are LEB128):
**
**   doc stream   per posting: varint(doc - previous doc), varint(tf)
**                (the first posting's "previous doc" is 0 and its delta is
**                doc + 1, so a delta is never 0 and doc 0 is representable)
**   pos stream   per posting: tf varints, the first position absolute and
**                the others as deltas from the previous one
**   skips        one entry per completed block of FTS_BLOCK postings: the
**                block's last doc, the stream offsets just past it, and its
**                impact (largest tf, smallest field length)
**
** A cursor decodes the doc stream sequentially; xAdvance first binary
** searches the skips for the block that may hold the target and jumps to
** its start. Positions are skipped lazily: the cursor only counts how many
** position varints lie before the current doc and walks over them when
** xPositions is called (phrase queries), so term and boolean queries never
** touch the pos stream.
**
** Writers reserve first (fts_mem_add may not fail inside table_apply's
** last phase), so each add is: reserve space for every stream it will grow,
** then append. See fts_mem_reserve in memindex_int.h.
**
** A document buffer (FtsDocBuf) holds one group per field analysed into
** it, back to back, unaligned. A group is a header of MEM_SHARDS 4-byte
** sizes (native byte order), then one run of records per shard in shard
** order (shard: the low bits of the key's hash), each run as many bytes as
** its size says: a task that adds some shards' part of a batch jumps to
** their runs and reads no other record. A record per distinct key:
**
**   size   varint: bytes of the rest of the record
**   term   4 bytes, native byte order: 1 + the index of the key's
**          MemTerm in its shard's term list, written by fts_mem_reserve
**   tfe    varint(tf << 1 | bEarlier): bEarlier is bit 0 of its first
**          byte, so it can be set in place (docbuf_mark_earlier)
**   key    a length byte, then the key (field byte + term)
**   pos    the rest: the posting's positions as the pos stream holds
**          them, so appending them is a copy
**
** Memory. Most keys occur in one or two documents, so a term costs what
** those need: one bump allocation (MemTerm, its key, and the first
** MEM_INLINE bytes of each stream), an 8-byte slot in its shard's table
** and a pointer in the shard's term list; its streams move to blocks of
** their own only when they outgrow the inline bytes. All of it comes from
** the index's own pages (util/slab.h: huge pages where the kernel has
** them, each shard carving its own), not from malloc: on some virtual
** machines the first touch of a 4 KiB page costs as much as analysing a
** hundred words, and a 2 MiB huge page costs what 20 of them do.
*/
#include "fts/memindex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fts/codec.h"
#include "fts/infix.h"
#include "fts/memindex_int.h"
#include "util/slab.h"
#include "util/threadlocal.h"
#include "util/bytes.h"
#include "util/varint.h"
#include "util/vec.h"

typedef struct MemSkip {
    uint32_t lastDoc;       /* last doc of the block */
    uint32_t docOff;        /* doc stream offset just past the block */
    uint32_t posOff;        /* pos stream offset just past the block */
    uint32_t maxTf;         /* block impact */
    uint32_t minLen;
} MemSkip;

/* A term's streams start in the term itself, in the 8 bytes that later
** hold their heap pointer, and move to the heap when they outgrow them:
** most keys of a collection occur in one or two documents, and then need
** no allocation of their own. */
#define MEM_INLINE 8

typedef union MemStream {
    uint8_t *p;             /* on the heap (lg != 0) */
    uint8_t inl[MEM_INLINE]; /* inline (lg == 0) */
} MemStream;

typedef struct MemTerm {
    MemStream doc;          /* doc stream */
    MemStream pos;          /* pos stream */
    MemSkip *aSkip;         /* completed blocks: df / FTS_BLOCK of them */
    uint32_t nDoc, nPos;    /* stream bytes */
    uint32_t df;            /* postings */
    uint32_t cf;            /* total tf (at most nPos: each takes a byte) */
    uint32_t lastDoc;       /* last doc appended */
    uint32_t tailMaxTf;     /* impact of the incomplete last block */
    uint32_t tailMinLen;
    uint32_t maxTf;         /* impact of the whole list */
    uint32_t minLen;
    uint32_t nEarlier;      /* postings whose document holds the term in a lower field */
    uint32_t resDoc, resPos;/* stream bytes reserved for: at least nDoc and
                            ** nPos; equal to them after each append */
    uint8_t lgDoc, lgPos;   /* log2 of the heap streams' capacity; 0: inline */
    uint8_t lgSkip;         /* log2 of aSkip's capacity; 0: none */
    uint8_t nKey;
    uint8_t key[];          /* field byte + term */
} MemTerm;

static inline uint8_t *stream_bytes(MemStream *u, uint8_t lg) {
    return lg ? u->p : u->inl;
}
#define term_doc(t) stream_bytes((MemStream *)&(t)->doc, (t)->lgDoc)
#define term_pos(t) stream_bytes((MemStream *)&(t)->pos, (t)->lgPos)
#define term_nskip(t) ((t)->df / FTS_BLOCK)

/* The terms are split into shards by the hash of their key, so the work of
** adding a batch of documents can be shared out: each shard's terms are
** found, grown and appended to by one thread, in document order. */
#define MEM_SHARDS 8 /* a power of two */

/* A shard's terms are found through an open-addressing table of 8-byte
** slots: the key's hash (the one the document buffers computed) in the
** high half, 1 + the term's index in aTerm in the low half, 0 = empty. */
typedef struct MemShard {
    uint64_t *aSlot;        /* nSlot slots (a power of two), or NULL */
    uint32_t nSlot;
    VEC(MemTerm *) aTerm;   /* every term, in order of creation (cap: a power
                            ** of two, from slab) */
    Slab slab;              /* its table, term list and streams, and the
                            ** MemTerm structs its pool task created */
    size_t nBytes;          /* heap bytes in its terms and streams */
    int bNewTerms;          /* the last reservation created terms */
    size_t nSorted;         /* its first terms (of aTerm) in FtsMem.aSorted */
    size_t nInfix;          /* and in FtsMem.infix */
} MemShard;

/* One trigram's terms in the infix index: their ids, ascending. */
typedef struct MemGram {
    uint32_t gram;          /* b0 << 16 | b1 << 8 | b2, + 1 (0: an empty slot) */
    uint32_t n, cap;
    uint32_t *a;
} MemGram;

/* The RAM segment's infix index (see mem_scan_has): for each trigram of
** some term, the ids of the terms holding it; a term's id is its place in
** aById, the order the index took the terms in, so each list only grows
** at its end. */
typedef struct MemInfix {
    MemGram *aSlot;         /* open addressing by trigram, nSlot a power of two */
    uint32_t nSlot, nUsed;
    VEC(MemTerm *) byId;
    size_t nListBytes;      /* allocated in the lists */
} MemInfix;

struct FtsMem {
    FtsSource src;          /* must be first: fts_mem_source returns &src */
    MemShard aShard[MEM_SHARDS];
    SlabPages *pPages;      /* the memory of the shards' slabs and of slab */
    Slab slab;              /* the MemTerm structs of terms created by a batch
                            ** reserved on one thread: in one piece rather
                            ** than eight, a small index has one part-filled
                            ** piece of them, not eight */
    VEC(uint32_t) aLen[FTS_MAX_FIELDS]; /* per field: length of each doc */
    uint64_t aSumLen[FTS_MAX_FIELDS];
    uint32_t nDocs;         /* highest ordinal added + 1 */
    Tpool *pPool;           /* shares out large batches, or NULL */
    pthread_mutex_t mu;     /* guards the sorted-key cache below */
    Slab sortSlab;          /* aSorted and the sort's scratch (guarded by mu) */
    int lgSorted;           /* aSorted is a block of 2^lgSorted bytes */
    MemTerm **aSorted;      /* the terms in key order (NULL: none yet): every
                            ** shard's first nSorted */
    size_t nSorted;
    int bSortedStale;       /* some shard has terms past its nSorted */
    uint32_t nHasScans;     /* wildcard scans served (guarded by mu) */
    int bInfix;             /* infix is kept (from the MEM_INFIX_AFTER-th) */
    int bInfixBuilding;     /* a scan is building it, outside mu (guarded by mu) */
    MemInfix infix;         /* guarded by mu */
    atomic_size_t nInfixBytes; /* its memory, for fts_mem_bytes (read unlocked) */
};

static void infix_free(MemInfix *x);

/* ------------------------------------------------------------------ */
/* Document buffers                                                    */

void fts_docbuf_reset(FtsDocBuf *d) {
    d->n = 0;
    d->nTerm = 0;
    memset(d->aLen, 0, sizeof(d->aLen));
    if (d->nFields > FTS_DOC_LEN_INLINE) {
        memset(d->aLenMore, 0, sizeof(uint32_t) * (size_t)(d->nFields - FTS_DOC_LEN_INLINE));
    }
    d->nFields = 0;
}

void fts_docbuf_free(FtsDocBuf *d) {
    free(d->a);
    free(d->aLenMore);
    memset(d, 0, sizeof(*d));
}

/* Keys are a few bytes long: lp_hash_short. The hash also picks a key's
** shard (its low bits), so readers and the document buffers agree on it;
** it lives only in memory. */
static inline uint32_t key_hash(const uint8_t *k, size_t n) {
    return lp_hash_short(k, n);
}

/* A thread's scratch for analysing one field: its distinct keys found
** through a hash table, each with a chain of its occurrences. Kept for
** the thread's next field and freed when the thread ends
** (util/threadlocal.h). */
typedef struct ScratchTerm {
    uint32_t off;           /* key offset in keys */
    uint32_t tf;
    uint32_t iFirst, iLast; /* chain of occurrences in occ; once the field is
                            ** analysed, iLast holds its positions' bytes */
    uint32_t h;
    uint32_t nKey : 8;      /* at most FTS_MAX_KEY */
    uint32_t bEarlier : 1;  /* the document holds the term in a lower field too */
} ScratchTerm;

typedef struct ScratchOcc {
    uint32_t pos;           /* word position */
    uint32_t next;          /* next occurrence of the key, UINT32_MAX at the end */
} ScratchOcc;

typedef struct DocScratch {
    uint32_t *aSlot;        /* hash table: index + 1 into terms, 0 = empty */
    uint32_t nSlot;         /* slots in use for this field (a power of two) */
    uint32_t capSlot;       /* slots allocated */
    VEC(ScratchTerm) terms; /* distinct keys, in order of first occurrence */
    VEC(uint8_t) keys;      /* concatenated keys */
    VEC(ScratchOcc) occ;    /* every occurrence */
} DocScratch;

static __thread DocScratch *t_pScratch;

/* Frees x's buffers; x stays usable. */
static void scratch_release(DocScratch *x) {
    free(x->aSlot);
    x->aSlot = NULL;
    x->nSlot = x->capSlot = 0;
    VEC_FREE(&x->terms);
    VEC_FREE(&x->keys);
    VEC_FREE(&x->occ);
}

static void scratch_free(void *p) {
    DocScratch *x = p;
    scratch_release(x);
    free(x);
    if (t_pScratch == x) t_pScratch = NULL;
}

static ThreadLocal g_scratches = THREAD_LOCAL_INIT(scratch_free);

static DocScratch *scratch_get(void) {
    DocScratch *x = t_pScratch;
    if (x) return x;
    if (!(x = calloc(1, sizeof(*x)))) return NULL;
    if (thread_local_set(&g_scratches, x) != LP_OK) {
        free(x);
        return NULL;
    }
    return t_pScratch = x;
}

/* A scratch that a large field grew past this is released after it, so a
** thread does not keep the memory of the largest document it ever saw. */
#define SCRATCH_KEEP_BYTES (512 * 1024)

static void scratch_trim(DocScratch *x) {
    size_t n = sizeof(uint32_t) * x->capSlot + sizeof(ScratchTerm) * x->terms.cap + x->keys.cap +
               sizeof(ScratchOcc) * x->occ.cap;
    if (n > SCRATCH_KEEP_BYTES) scratch_release(x);
}

/* Sizes the hash table for nSlot slots, empty (or, when bKeep, holding
** the scratch's terms). */
static int scratch_slots(DocScratch *x, uint32_t nSlot, int bKeep) {
    if (nSlot > x->capSlot) {
        uint32_t *a = malloc(sizeof(uint32_t) * nSlot);
        if (!a) return LP_NOMEM;
        free(x->aSlot);
        x->aSlot = a;
        x->capSlot = nSlot;
    }
    x->nSlot = nSlot;
    memset(x->aSlot, 0, sizeof(uint32_t) * nSlot);
    for (size_t i = 0; bKeep && i < x->terms.n; i++) {
        uint32_t j = x->terms.a[i].h & (nSlot - 1);
        while (x->aSlot[j]) j = (j + 1) & (nSlot - 1);
        x->aSlot[j] = (uint32_t)i + 1;
    }
    return LP_OK;
}

typedef struct DocBufCtx {
    DocScratch *x;
    uint8_t field;
} DocBufCtx;

/* The scratch's key equal to key[0..nKey) (hash h), or NULL and in *pj the
** empty slot where it would go. */
static inline ScratchTerm *scratch_find(const DocScratch *x, const uint8_t *key, uint32_t nKey,
                                        uint32_t h, uint32_t *pj) {
    uint32_t j = h & (x->nSlot - 1);
    for (; x->aSlot[j]; j = (j + 1) & (x->nSlot - 1)) {
        ScratchTerm *y = &x->terms.a[x->aSlot[j] - 1];
        if (y->h == h && y->nKey == nKey && lp_bytes_eq(x->keys.a + y->off, key, nKey)) return y;
    }
    *pj = j;
    return NULL;
}

static int docbuf_token(void *ctx, const Token *t) {
    DocBufCtx *c = ctx;
    DocScratch *x = c->x;
    size_t nKey = 1 + (size_t)t->n;
    if (VEC_RESERVE(&x->keys, x->keys.n + nKey) || VEC_RESERVE(&x->occ, x->occ.n + 1)) {
        return LP_NOMEM;
    }
    /* The key is written at the end of keys; kept only when it is new. */
    uint8_t *k = x->keys.a + x->keys.n;
    k[0] = c->field;
    memcpy(k + 1, t->z, (size_t)t->n);
    if (2 * (x->terms.n + 1) > x->nSlot && scratch_slots(x, x->nSlot * 2, 1)) return LP_NOMEM;
    uint32_t h = key_hash(k, nKey), j = 0;
    ScratchTerm *e = scratch_find(x, k, (uint32_t)nKey, h, &j);
    uint32_t iOcc = (uint32_t)x->occ.n;
    x->occ.a[x->occ.n++] = (ScratchOcc){t->iPos, UINT32_MAX};
    if (e) {
        x->occ.a[e->iLast].next = iOcc;
        e->iLast = iOcc;
        e->tf++;
        return LP_OK;
    }
    ScratchTerm n = {(uint32_t)x->keys.n, 1, iOcc, iOcc, h, (uint32_t)nKey, 0};
    if (VEC_PUSH(&x->terms, n)) return LP_NOMEM;
    x->aSlot[j] = (uint32_t)x->terms.n;
    x->keys.n += nKey;
    return LP_OK;
}

/* A varint known to be well formed (the writer made it). */
static inline uint32_t get_varint(const uint8_t **pp) {
    const uint8_t *p = *pp;
    uint32_t v = *p++;
    if (v >= 0x80) {
        v &= 0x7f;
        int shift = 7;
        uint32_t b;
        do {
            b = *p++;
            v |= (b & 0x7f) << shift;
            shift += 7;
        } while (b >= 0x80);
    }
    *pp = p;
    return v;
}

/* A record of a document buffer, read (layout at the top of the file). */
typedef struct DocRec {
    uint8_t *pTerm;         /* its 4 bytes of term index */
    uint8_t *pTfe;          /* its varint(tf << 1 | bEarlier) */
    uint32_t tf;
    uint32_t bEarlier;
    uint32_t nKey;
    const uint8_t *key;     /* key[0] is the field */
    const uint8_t *pos;
    uint32_t nPos;          /* bytes at pos */
} DocRec;

/* A record names its term by index rather than pointer, and its shard
** rather than its hash (recomputed by the one pass that needs it): for
** a word seen once in a document, that is 16 bytes instead of 23, and a
** large INSERT's buffers are a third smaller. */
#define DOCREC_TERM_BYTES 4

/* A group's header: the bytes of each shard's run. */
#define DOCGRP_HEAD (4 * MEM_SHARDS)

/* Reads the header of the group at offset off into aRun; returns the
** offset of its first run. Walks use offsets, not pointers: a buffer
** without records may have no allocation. */
static inline size_t docgrp_runs(const FtsDocBuf *d, size_t off, uint32_t aRun[MEM_SHARDS]) {
    memcpy(aRun, d->a + off, DOCGRP_HEAD);
    return off + DOCGRP_HEAD;
}

/* The record of d at offset off: the offset of the rest of it in *pRest;
** returns the next record's offset. */
static inline size_t docrec_head(const FtsDocBuf *d, size_t off, size_t *pRest) {
    const uint8_t *p = d->a + off, *q = p;
    uint32_t nRest = get_varint(&q);
    *pRest = off + (size_t)(q - p);
    return *pRest + nRest;
}

/* The rest of d's record from offset rest to offset end. */
static inline void docrec_rest(const FtsDocBuf *d, size_t rest, size_t end, DocRec *r) {
    r->pTerm = d->a + rest;
    r->pTfe = r->pTerm + DOCREC_TERM_BYTES;
    const uint8_t *q = r->pTfe;
    uint32_t tfe = get_varint(&q);
    r->tf = tfe >> 1;
    r->bEarlier = tfe & 1;
    r->nKey = *q++;
    r->key = q;
    r->pos = q + r->nKey;
    r->nPos = (uint32_t)(d->a + end - r->pos);
}

/* A buffer's allocation is rounded up to this. Exact odd sizes, once the
** batch's buffers are freed, are kept by glibc in caches per size that are
** never merged, and the next large allocation (the segment writer's) then
** touches fresh pages instead of reusing them. */
#define DOCBUF_ROUND 256

/* Appends the field analysed in x to d as a group: a record per key,
** each with its positions, in runs by shard. d grows to what it holds,
** rounded up to DOCBUF_ROUND. */
static int docbuf_take(FtsDocBuf *d, DocScratch *x) {
    if (x->terms.n == 0) return LP_OK; /* nothing to add (d->a may be NULL) */
    /* The records' size by shard, and in each term's iLast its positions'
    ** bytes. */
    uint32_t aRun[MEM_SHARDS] = {0};
    size_t need = DOCGRP_HEAD;
    for (size_t i = 0; i < x->terms.n; i++) {
        ScratchTerm *y = &x->terms.a[i];
        uint32_t nPos = 0, prev = 0;
        for (uint32_t k = y->iFirst; k != UINT32_MAX; k = x->occ.a[k].next) {
            nPos += (uint32_t)varint_len_u64(x->occ.a[k].pos - prev);
            prev = x->occ.a[k].pos;
        }
        y->iLast = nPos;
        size_t nRest = DOCREC_TERM_BYTES + varint_len_u64((uint64_t)y->tf << 1) + 1 + y->nKey + nPos;
        size_t nRec = varint_len_u64(nRest) + nRest;
        if (nRec > UINT32_MAX - aRun[y->h & (MEM_SHARDS - 1)]) return LP_NOMEM;
        aRun[y->h & (MEM_SHARDS - 1)] += (uint32_t)nRec;
        need += nRec;
    }
    if (d->n + need > d->cap) {
        size_t cap = (d->n + need + DOCBUF_ROUND - 1) & ~(size_t)(DOCBUF_ROUND - 1);
        uint8_t *a = realloc(d->a, cap);
        if (!a) return LP_NOMEM;
        d->a = a;
        d->cap = cap;
    }
    uint8_t *aOut[MEM_SHARDS]; /* where each shard's next record goes */
    memcpy(d->a + d->n, aRun, DOCGRP_HEAD);
    aOut[0] = d->a + d->n + DOCGRP_HEAD;
    for (int i = 1; i < MEM_SHARDS; i++) aOut[i] = aOut[i - 1] + aRun[i - 1];
    for (size_t i = 0; i < x->terms.n; i++) {
        const ScratchTerm *y = &x->terms.a[i];
        uint32_t nTfe = (uint32_t)varint_len_u64((uint64_t)y->tf << 1);
        uint8_t **po = &aOut[y->h & (MEM_SHARDS - 1)], *o = *po;
        o += varint_put_u32(o, DOCREC_TERM_BYTES + nTfe + 1 + y->nKey + y->iLast);
        memset(o, 0, DOCREC_TERM_BYTES);
        o += DOCREC_TERM_BYTES;
        o += varint_put_u32(o, y->tf << 1 | y->bEarlier);
        *o++ = (uint8_t)y->nKey;
        memcpy(o, x->keys.a + y->off, y->nKey);
        o += y->nKey;
        uint32_t prev = 0;
        for (uint32_t k = y->iFirst; k != UINT32_MAX; k = x->occ.a[k].next) {
            o += varint_put_u32(o, x->occ.a[k].pos - prev);
            prev = x->occ.a[k].pos;
        }
        *po = o;
    }
    d->n += need;
    d->nTerm += (uint32_t)x->terms.n;
    return LP_OK;
}

/* Field iField, analysed in x, joins the fields already in d: of every
** term in both, the key of the higher field is marked bEarlier. Costs a
** probe per key already in d (a title's, when the body comes second). */
static void docbuf_mark_earlier(FtsDocBuf *d, DocScratch *x, int iField) {
    uint8_t probe[FTS_MAX_KEY];
    DocRec r;
    uint32_t aRun[MEM_SHARDS];
    /* Every group's runs lie back to back after its header: its records
    ** are read in one stretch. */
    for (size_t g = 0; g < d->n;) {
        size_t off = docgrp_runs(d, g, aRun), end = off;
        for (int i = 0; i < MEM_SHARDS; i++) end += aRun[i];
        for (size_t rest, next; off < end; off = next) {
            next = docrec_head(d, off, &rest);
            docrec_rest(d, rest, next, &r);
            uint32_t nKey = r.nKey;
            if (r.key[0] == iField) continue;
            probe[0] = (uint8_t)iField;
            memcpy(probe + 1, r.key + 1, nKey - 1);
            uint32_t j;
            ScratchTerm *y = scratch_find(x, probe, nKey, key_hash(probe, nKey), &j);
            if (!y) continue;
            if (r.key[0] < iField) {
                y->bEarlier = 1;
            } else {
                *r.pTfe |= 1;
            }
        }
        g = end;
    }
}

int fts_docbuf_field(FtsDocBuf *d, const Analyzer *an, int iField, const char *z, size_t n,
                     LpError *err) {
    if (iField < 0 || iField >= FTS_MAX_FIELDS) {
        return lp_err_set(err, LP_INTERNAL, "full-text field %d out of range", iField);
    }
    /* Positions restart at 0 per field and a field's keys are its own
    ** (the field byte); analysing the same field twice would repeat them. */
    if (iField < d->nFields && fts_docbuf_len(d, iField)) {
        return lp_err_set(err, LP_INTERNAL, "full-text field %d analysed twice", iField);
    }
    if (iField >= FTS_DOC_LEN_INLINE + d->nLenMore) {
        int nMore = iField + 1 - FTS_DOC_LEN_INLINE;
        uint32_t *a = realloc(d->aLenMore, sizeof(uint32_t) * (size_t)nMore);
        if (!a) return lp_err_set(err, LP_NOMEM, "out of memory analysing a document");
        memset(a + d->nLenMore, 0, sizeof(uint32_t) * (size_t)(nMore - d->nLenMore));
        d->aLenMore = a;
        d->nLenMore = nMore;
    }
    DocScratch *x = scratch_get();
    if (!x) return lp_err_set(err, LP_NOMEM, "out of memory analysing a document");
    x->terms.n = x->keys.n = x->occ.n = 0;
    /* Room for the likely number of words up front (about one per six
    ** bytes of text, half of them distinct). */
    size_t nGuess = n / 6 + 1;
    uint32_t nSlot = 64;
    while (nSlot < nGuess && nSlot < (UINT32_C(1) << 20)) nSlot *= 2;
    if (scratch_slots(x, nSlot, 0) || VEC_RESERVE(&x->occ, nGuess) || VEC_RESERVE(&x->keys, n + 1) ||
        VEC_RESERVE(&x->terms, nGuess / 2 + 1)) {
        return lp_err_set(err, LP_NOMEM, "out of memory analysing a document");
    }
    DocBufCtx c = {x, (uint8_t)iField};
    uint32_t nWords = 0;
    /* With html_strip, the words of the text without its markup (and its
    ** zones' terms, with index_zones). */
    int rc = analyzer_run_doc(an, z, n, 0, docbuf_token, &c, &nWords, err);
    if (rc == LP_OK && d->nTerm) docbuf_mark_earlier(d, x, iField);
    if (rc == LP_OK && docbuf_take(d, x) != LP_OK) rc = LP_NOMEM;
    scratch_trim(x);
    if (rc != LP_OK) {
        /* Drop the half-analysed document's buffer entirely: callers
        ** discard a document whose field failed. */
        fts_docbuf_reset(d);
        if (rc == LP_NOMEM) lp_err_set(err, LP_NOMEM, "out of memory analysing a document");
        return rc;
    }
    if (iField < FTS_DOC_LEN_INLINE) {
        d->aLen[iField] += nWords;
    } else {
        d->aLenMore[iField - FTS_DOC_LEN_INLINE] += nWords;
    }
    if (iField + 1 > d->nFields) d->nFields = iField + 1;
    return LP_OK;
}

/* ------------------------------------------------------------------ */
/* The index                                                           */

/* log2 of the bytes of a table of nSlot slots, and of a term list of
** room for cap terms (both powers of two). */
static int slot_lg(uint32_t nSlot) {
    return 3 + __builtin_ctz(nSlot);
}

static int list_lg(size_t cap) {
    return 3 + __builtin_ctzll(cap);
}

FtsMem *fts_mem_new(int nFields) {
    FtsMem *m = calloc(1, sizeof(*m));
    if (!m) return NULL;
    m->src.vt = &fts_mem_vt;
    m->src.nFields = nFields;
    m->src.aSumLen = m->aSumLen;
    /* Terms and their streams, tables and lists live in the index's own
    ** pages (util/slab.h): no per-array header, no page fault per 4 KiB
    ** written, and all of it returned at once. */
    if (!(m->pPages = slab_pages_new())) {
        free(m);
        return NULL;
    }
    for (int i = 0; i < MEM_SHARDS; i++) slab_init(&m->aShard[i].slab, m->pPages);
    slab_init(&m->slab, m->pPages);
    slab_init(&m->sortSlab, m->pPages);
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

void fts_mem_set_pool(FtsMem *m, Tpool *pool) {
    m->pPool = pool;
}

void fts_mem_free(FtsMem *m) {
    if (!m) return;
    for (int i = 0; i < MEM_SHARDS; i++) {
        MemShard *sh = &m->aShard[i];
        /* The slab's pages go at once; only big blocks one by one. */
        for (size_t k = 0; k < sh->aTerm.n; k++) {
            MemTerm *t = sh->aTerm.a[k];
            if (slab_is_big(t->lgDoc)) slab_free(&sh->slab, t->doc.p, t->lgDoc);
            if (slab_is_big(t->lgPos)) slab_free(&sh->slab, t->pos.p, t->lgPos);
            free(t->aSkip);
        }
        if (sh->aSlot && slab_is_big(slot_lg(sh->nSlot))) slab_free(&sh->slab, sh->aSlot, slot_lg(sh->nSlot));
        if (sh->aTerm.cap && slab_is_big(list_lg(sh->aTerm.cap))) {
            slab_free(&sh->slab, sh->aTerm.a, list_lg(sh->aTerm.cap));
        }
    }
    if (m->aSorted && slab_is_big(m->lgSorted)) slab_free(&m->sortSlab, m->aSorted, m->lgSorted);
    slab_pages_free(m->pPages);
    for (int i = 0; i < FTS_MAX_FIELDS; i++) VEC_FREE(&m->aLen[i]);
    infix_free(&m->infix);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

FtsSource *fts_mem_source(FtsMem *m) {
    return &m->src;
}

size_t fts_mem_bytes(const FtsMem *m) {
    size_t n = 0;
    for (int i = 0; i < MEM_SHARDS; i++) n += m->aShard[i].nBytes;
    for (int i = 0; i < m->src.nFields; i++) n += m->aLen[i].cap * sizeof(uint32_t);
    /* the wildcards' trigram index (mem_scan_has), once built */
    return n + atomic_load_explicit(&m->nInfixBytes, memory_order_relaxed);
}

size_t fts_mem_nterms(const FtsMem *m) {
    size_t n = 0;
    for (int i = 0; i < MEM_SHARDS; i++) n += m->aShard[i].aTerm.n;
    return n;
}

/* The index in sh's term list of key (hash h), or UINT32_MAX. */
static uint32_t shard_find(const MemShard *sh, const uint8_t *key, int nKey, uint32_t h) {
    if (!sh->aSlot) return UINT32_MAX;
    uint32_t mask = sh->nSlot - 1;
    for (uint32_t j = (h >> 3) & mask;; j = (j + 1) & mask) {
        uint64_t v = sh->aSlot[j];
        if (!v) return UINT32_MAX;
        if ((uint32_t)(v >> 32) == h) {
            const MemTerm *t = sh->aTerm.a[(uint32_t)v - 1];
            if (t->nKey == nKey && lp_bytes_eq(t->key, key, (size_t)nKey)) return (uint32_t)v - 1;
        }
    }
}

/* The term of key in whichever shard holds it, or NULL. */
static const MemTerm *term_lookup(const FtsMem *m, const uint8_t *key, int nKey) {
    uint32_t h = key_hash(key, (size_t)nKey);
    const MemShard *sh = &m->aShard[h & (MEM_SHARDS - 1)];
    uint32_t i = shard_find(sh, key, nKey, h);
    return i == UINT32_MAX ? NULL : sh->aTerm.a[i];
}

/* Puts slot value v (hash in the high half) into a table without it. */
static void slot_put(uint64_t *aSlot, uint32_t mask, uint64_t v) {
    uint32_t j = ((uint32_t)(v >> 32) >> 3) & mask;
    while (aSlot[j]) j = (j + 1) & mask;
    aSlot[j] = v;
}

/* Makes room in sh's term list for one more term, doubling it. */
static int list_grow(MemShard *sh) {
    if (sh->aTerm.n < sh->aTerm.cap) return LP_OK;
    size_t cap = sh->aTerm.cap ? 2 * sh->aTerm.cap : 64;
    int lgOld = sh->aTerm.cap ? list_lg(sh->aTerm.cap) : 0;
    MemTerm **a = slab_realloc(&sh->slab, sh->aTerm.a, lgOld, list_lg(cap), sizeof(MemTerm *) * sh->aTerm.n);
    if (!a) return LP_NOMEM;
    sh->aTerm.a = a;
    sh->aTerm.cap = cap;
    return LP_OK;
}

/* Makes room in sh's table for one more term (load at most 3/4). */
static int shard_grow(MemShard *sh) {
    if (sh->aTerm.n + 1 <= (size_t)sh->nSlot / 4 * 3) return list_grow(sh);
    if (sh->nSlot >= (UINT32_C(1) << 31)) return LP_NOMEM;
    /* Small at first: eight shards' tables and term lists are pages
    ** touched even for a handful of documents. Then four times larger
    ** while small: each size's table and list are fresh memory (freed
    ** at the next growth, too small for the larger ones to reuse), and
    ** skipping every other size touches a third fewer pages on the way
    ** to a few thousand terms. */
    uint32_t nSlot = !sh->nSlot ? 64 : sh->nSlot < 1024 ? sh->nSlot * 4 : sh->nSlot * 2;
    uint64_t *a = slab_alloc(&sh->slab, slot_lg(nSlot));
    if (!a) return LP_NOMEM;
    memset(a, 0, sizeof(uint64_t) * nSlot);
    for (uint32_t j = 0; j < sh->nSlot; j++) {
        if (sh->aSlot[j]) slot_put(a, nSlot - 1, sh->aSlot[j]);
    }
    sh->nBytes += sizeof(uint64_t) * (size_t)(nSlot - sh->nSlot);
    if (sh->aSlot) slab_free(&sh->slab, sh->aSlot, slot_lg(sh->nSlot));
    sh->aSlot = a;
    sh->nSlot = nSlot;
    return list_grow(sh);
}

/* Grows a stream to hold need bytes: from its inline start (lg 0, cap
** MEM_INLINE) to the heap, then by doubling. Most postings fit in what
** their stream has: that test is inline (grow_stream), the rest is not. */
static int grow_stream_slow(Slab *s, MemStream *u, uint8_t *plg, uint64_t used, uint64_t need,
                            size_t *pnBytes) {
    uint64_t cap = *plg ? (uint64_t)1 << *plg : MEM_INLINE;
    if (need > UINT32_MAX) return LP_NOMEM;
    int lg = slab_lg((size_t)need);
    uint8_t *a;
    if (*plg) {
        a = slab_realloc(s, u->p, *plg, lg, (size_t)used);
    } else if ((a = slab_alloc(s, lg)) != NULL) {
        memcpy(a, u->inl, (size_t)used);
    }
    if (!a) return LP_NOMEM;
    *pnBytes += (size_t)(((uint64_t)1 << lg) - (*plg ? cap : 0));
    u->p = a;
    *plg = (uint8_t)lg;
    return LP_OK;
}

static inline int grow_stream(Slab *s, MemStream *u, uint8_t *plg, uint64_t used, uint64_t need,
                              size_t *pnBytes) {
    uint64_t cap = *plg ? (uint64_t)1 << *plg : MEM_INLINE;
    return need <= cap ? LP_OK : grow_stream_slow(s, u, plg, used, need, pnBytes);
}

/* Finds or creates the term for key (hash h) in its shard, a new one's
** struct from pNew, and its index in the shard's list in *piTerm; NULL
** when out of memory. A new term has df 0, which readers treat as
** absent. */
static MemTerm *term_get(MemShard *sh, Slab *pNew, const uint8_t *key, int nKey, uint32_t h,
                         uint32_t *piTerm) {
    uint32_t i = shard_find(sh, key, nKey, h);
    if (i != UINT32_MAX) {
        *piTerm = i;
        return sh->aTerm.a[i];
    }
    MemTerm *t;
    if (shard_grow(sh)) return NULL;
    /* One bump allocation, streams included while they are short. */
    size_t sz = (offsetof(MemTerm, key) + (size_t)nKey + 7) & ~(size_t)7;
    t = slab_bump(pNew, sz);
    if (!t) return NULL;
    memset(t, 0, offsetof(MemTerm, key));
    t->nKey = (uint8_t)nKey;
    memcpy(t->key, key, (size_t)nKey);
    t->minLen = t->tailMinLen = UINT32_MAX;
    *piTerm = (uint32_t)sh->aTerm.n;
    sh->aTerm.a[sh->aTerm.n++] = t;
    slot_put(sh->aSlot, sh->nSlot - 1, (uint64_t)h << 32 | (uint64_t)sh->aTerm.n);
    sh->nBytes += sz + sizeof(MemTerm *);
    sh->bNewTerms = 1;
    return t;
}

/* Reserves for one posting of r in its shard, in a batch whose doc deltas
** take at most nDeltaBytes: grows the term's streams, and its skip entries,
** to what its postings reserved so far may need. Each bound is exact
** enough that a term found once or twice keeps its streams inline. A
** reservation that fails leaves resDoc and resPos above nDoc and nPos,
** which only makes the next one ask for more than it needs. */
static int reserve_term(MemShard *sh, Slab *pNew, const DocRec *r, uint32_t nDeltaBytes) {
    uint32_t iTerm;
    MemTerm *t = term_get(sh, pNew, r->key, (int)r->nKey, key_hash(r->key, r->nKey), &iTerm);
    if (!t) return LP_NOMEM;
    iTerm++;
    memcpy(r->pTerm, &iTerm, sizeof(iTerm));
    uint64_t resDoc = (uint64_t)t->resDoc + nDeltaBytes + varint_len_u64(r->tf);
    uint64_t resPos = (uint64_t)t->resPos + r->nPos;
    int rc = grow_stream(&sh->slab, &t->doc, &t->lgDoc, t->nDoc, resDoc, &sh->nBytes);
    if (rc == LP_OK) rc = grow_stream(&sh->slab, &t->pos, &t->lgPos, t->nPos, resPos, &sh->nBytes);
    if (rc != LP_OK) return rc;
    t->resDoc = (uint32_t)resDoc;
    t->resPos = (uint32_t)resPos;
    /* A skip entry per completed block: none for a short list. A posting
    ** takes at least 2 doc stream bytes, so half the bytes reserved past
    ** nDoc bound the postings to come. */
    uint32_t nSkipNeed = (t->df + (t->resDoc - t->nDoc) / 2) / FTS_BLOCK;
    uint32_t capSkip = t->lgSkip ? UINT32_C(1) << t->lgSkip : 0;
    if (nSkipNeed > capSkip) {
        int lg = t->lgSkip ? t->lgSkip : 2;
        while ((UINT32_C(1) << lg) < nSkipNeed) lg++;
        MemSkip *a = realloc(t->aSkip, sizeof(MemSkip) << lg);
        if (!a) return LP_NOMEM;
        sh->nBytes += sizeof(MemSkip) * ((UINT32_C(1) << lg) - capSkip);
        t->aSkip = a;
        t->lgSkip = (uint8_t)lg;
    }
    return LP_OK;
}

/* Some shards' part of a batch (reserve or append), as a pool task. */
typedef struct ShardJob {
    FtsMem *m;
    unsigned mask;          /* the shards: bit i for shard i */
    uint32_t nDeltaBytes;   /* reserve: bound on a doc delta's varint */
    FtsDocBuf *const *apDoc;
    const uint32_t *aOrd;   /* append: the documents' ordinals */
    int nDoc;
    int rc;
} ShardJob;

/* The shards of mask's part of a batch, or every shard's when mask is
** MEM_ALL_SHARDS (on one thread): documents and their terms are walked in
** order either way (a term's key and positions follow those of the terms
** before it). */
#define MEM_ALL_SHARDS ((1u << MEM_SHARDS) - 1)

static inline int in_shard(uint32_t iShard, unsigned mask) {
    return (mask >> iShard) & 1;
}

static int reserve_docs(FtsMem *m, FtsDocBuf *const *apDoc, int nDoc, unsigned mask, int bShared,
                        uint32_t nDeltaBytes) {
    int rc = LP_OK;
    for (int k = 0; k < nDoc && rc == LP_OK; k++) {
        const FtsDocBuf *d = apDoc[k];
        DocRec r;
        uint32_t aRun[MEM_SHARDS];
        for (size_t g = 0; g < d->n && rc == LP_OK;) {
            size_t off = docgrp_runs(d, g, aRun);
            for (uint32_t i = 0; i < MEM_SHARDS && rc == LP_OK; off += aRun[i++]) {
                if (!in_shard(i, mask)) continue;
                MemShard *sh = &m->aShard[i];
                /* Pool tasks create terms in their shard's own slab. */
                Slab *pNew = bShared ? &sh->slab : &m->slab;
                for (size_t o = off, rest, next; o < off + aRun[i] && rc == LP_OK; o = next) {
                    next = docrec_head(d, o, &rest);
                    docrec_rest(d, rest, next, &r);
                    rc = reserve_term(sh, pNew, &r, nDeltaBytes);
                }
            }
            g = off;
        }
    }
    return rc;
}

static void append_term(uint32_t doc, const FtsDocBuf *d, MemTerm *t, const DocRec *r);

static void append_doc(FtsMem *m, uint32_t doc, const FtsDocBuf *d, unsigned mask) {
    DocRec r;
    uint32_t aRun[MEM_SHARDS];
    for (size_t g = 0; g < d->n;) {
        size_t off = docgrp_runs(d, g, aRun);
        for (uint32_t i = 0; i < MEM_SHARDS; off += aRun[i++]) {
            if (!in_shard(i, mask)) continue;
            MemTerm **aTerm = m->aShard[i].aTerm.a;
            for (size_t o = off, rest, next; o < off + aRun[i]; o = next) {
                uint32_t iTerm;
                next = docrec_head(d, o, &rest);
                docrec_rest(d, rest, next, &r);
                memcpy(&iTerm, r.pTerm, sizeof(iTerm));
                append_term(doc, d, aTerm[iTerm - 1], &r);
            }
        }
        g = off;
    }
}

static void shard_reserve(void *arg) {
    ShardJob *j = arg;
    j->rc = reserve_docs(j->m, j->apDoc, j->nDoc, j->mask, 1, j->nDeltaBytes);
}

static void shard_append(void *arg) {
    ShardJob *j = arg;
    for (int k = 0; k < j->nDoc; k++) append_doc(j->m, j->aOrd[k], j->apDoc[k], j->mask);
}

/* Is a batch big enough to share out? Each task reads every document's
** group headers to find its shards' runs, and a task on the pool costs a
** wake-up, so small batches stay on this thread. */
static int batch_parallel(const FtsMem *m, FtsDocBuf *const *apDoc, int nDoc) {
    if (!m->pPool) return 0;
    size_t nTerms = 0;
    for (int k = 0; k < nDoc; k++) nTerms += apDoc[k]->nTerm;
    return nTerms >= 4096;
}

/* Shares the shards out as tasks, one per thread that can run them (the
** pool's and this one), at most one per shard: shard i goes to task
** i % nJob. Fills aJob from proto; returns the task count. */
static int shard_jobs(const FtsMem *m, ShardJob *aJob, ShardJob proto) {
    int nJob = tpool_size(m->pPool) + 1;
    if (nJob > MEM_SHARDS) nJob = MEM_SHARDS;
    for (int i = 0; i < nJob; i++) {
        aJob[i] = proto;
        aJob[i].mask = 0;
    }
    for (int i = 0; i < MEM_SHARDS; i++) aJob[i % nJob].mask |= 1u << i;
    return nJob;
}

/* Runs the nJob tasks of aJob on the pool and this thread. A task the pool
** cannot queue runs here. */
static void run_shards(FtsMem *m, TpoolFn xJob, ShardJob *aJob, int nJob) {
    TpoolGroup g;
    tpool_group_init(&g, m->pPool);
    for (int i = 0; i < nJob; i++) {
        if (tpool_group_submit(&g, xJob, &aJob[i]) != LP_OK) xJob(&aJob[i]);
    }
    tpool_group_wait(&g);
}

int fts_mem_reserve(FtsMem *m, FtsDocBuf *const *apDoc, int nDoc, uint32_t lastDoc) {
    int rc = LP_OK;
    /* A delta is at most doc + 1 (the first posting's). */
    uint32_t nDeltaBytes = (uint32_t)varint_len_u64((uint64_t)lastDoc + 1);
    if (batch_parallel(m, apDoc, nDoc)) {
        ShardJob aJob[MEM_SHARDS];
        int nJob = shard_jobs(m, aJob, (ShardJob){m, 0, nDeltaBytes, apDoc, NULL, nDoc, LP_OK});
        run_shards(m, shard_reserve, aJob, nJob);
        for (int i = 0; i < nJob && rc == LP_OK; i++) rc = aJob[i].rc;
    } else {
        rc = reserve_docs(m, apDoc, nDoc, MEM_ALL_SHARDS, 0, nDeltaBytes);
    }
    int bNew = 0;
    for (int i = 0; i < MEM_SHARDS; i++) {
        bNew |= m->aShard[i].bNewTerms;
        m->aShard[i].bNewTerms = 0;
    }
    if (bNew) {
        /* The next scan merges the new terms into the sorted cache; no
        ** reader runs now (none holds the old array). */
        m->bSortedStale = 1;
    }
    for (int f = 0; f < m->src.nFields && rc == LP_OK; f++) {
        if (VEC_RESERVE(&m->aLen[f], (size_t)lastDoc + 1)) rc = LP_NOMEM;
    }
    return rc;
}

/* Appends the posting of record r (reserved: its term is t) for document
** doc. */
static void append_term(uint32_t doc, const FtsDocBuf *d, MemTerm *t, const DocRec *r) {
    uint32_t tf = r->tf;
    uint32_t len = fts_docbuf_len(d, t->key[0]);
    uint32_t delta = t->df ? doc - t->lastDoc : doc + 1;
    uint8_t *pDoc = term_doc(t), *pPos = term_pos(t);
    t->nDoc += (uint32_t)varint_put_u32(pDoc + t->nDoc, delta);
    t->nDoc += (uint32_t)varint_put_u32(pDoc + t->nDoc, tf);
    memcpy(pPos + t->nPos, r->pos, r->nPos);
    t->nPos += r->nPos;
    t->resDoc = t->nDoc;
    t->resPos = t->nPos;
    t->df++;
    t->cf += tf;
    t->nEarlier += r->bEarlier;
    t->lastDoc = doc;
    if (tf > t->tailMaxTf) t->tailMaxTf = tf;
    if (len < t->tailMinLen) t->tailMinLen = len;
    if (tf > t->maxTf) t->maxTf = tf;
    if (len < t->minLen) t->minLen = len;
    if (t->df % FTS_BLOCK == 0) {
        MemSkip *s = &t->aSkip[term_nskip(t) - 1];
        s->lastDoc = doc;
        s->docOff = t->nDoc;
        s->posOff = t->nPos;
        s->maxTf = t->tailMaxTf;
        s->minLen = t->tailMinLen;
        t->tailMaxTf = 0;
        t->tailMinLen = UINT32_MAX;
    }
}

/* The field lengths of document doc. */
static void append_lengths(FtsMem *m, uint32_t doc, const FtsDocBuf *d) {
    for (int f = 0; f < m->src.nFields; f++) {
        /* Ordinals without a document (gaps) have length 0. */
        while (m->aLen[f].n < doc) m->aLen[f].a[m->aLen[f].n++] = 0;
        uint32_t len = f < d->nFields ? fts_docbuf_len(d, f) : 0;
        m->aLen[f].a[m->aLen[f].n++] = len;
        m->aSumLen[f] += len;
    }
    if (doc + 1 > m->nDocs) m->nDocs = doc + 1;
    m->src.nDocs = m->nDocs;
}

void fts_mem_append(FtsMem *m, uint32_t doc, const FtsDocBuf *d) {
    append_lengths(m, doc, d);
    append_doc(m, doc, d, MEM_ALL_SHARDS);
}

void fts_mem_append_batch(FtsMem *m, const uint32_t *aOrd, FtsDocBuf *const *apDoc, int nDoc) {
    if (!batch_parallel(m, apDoc, nDoc)) {
        for (int k = 0; k < nDoc; k++) fts_mem_append(m, aOrd[k], apDoc[k]);
        return;
    }
    for (int k = 0; k < nDoc; k++) append_lengths(m, aOrd[k], apDoc[k]);
    ShardJob aJob[MEM_SHARDS];
    int nJob = shard_jobs(m, aJob, (ShardJob){m, 0, 0, apDoc, aOrd, nDoc, LP_OK});
    run_shards(m, shard_append, aJob, nJob);
}

int fts_mem_add(FtsMem *m, uint32_t doc, FtsDocBuf *d) {
    FtsDocBuf *ap[1] = {d};
    if (fts_mem_reserve(m, ap, 1, doc) != LP_OK) return LP_NOMEM;
    fts_mem_append(m, doc, d);
    return LP_OK;
}

/* ------------------------------------------------------------------ */
/* Reading: cursors                                                    */

typedef struct MemCursor {
    FtsPostings base;
    const MemTerm *t;
    const uint8_t *p;       /* next byte of the doc stream */
    const uint8_t *pEnd;
    uint32_t iNext;         /* index of the next posting to decode */
    const uint8_t *pPos;    /* pos stream, at the start of some earlier doc */
    uint32_t nPosSkip;      /* position varints between pPos and the current doc */
    uint32_t prevTf;        /* tf of the current doc, to count it when moving on */
    int bPositions;
} MemCursor;

static uint32_t mem_next(FtsPostings *pp) {
    MemCursor *c = (MemCursor *)pp;
    if (c->iNext >= c->t->df) return c->base.doc = FTS_NO_DOC;
    uint32_t delta = get_varint(&c->p);
    /* Deltas are doc - previous doc, except the first one which is doc + 1. */
    c->base.doc = c->iNext == 0 ? delta - 1 : c->base.doc + delta;
    c->nPosSkip += c->prevTf;
    c->base.tf = c->prevTf = get_varint(&c->p);
    c->iNext++;
    return c->base.doc;
}

static uint32_t mem_advance(FtsPostings *pp, uint32_t target) {
    MemCursor *c = (MemCursor *)pp;
    const MemTerm *t = c->t;
    /* Jump over whole blocks when the target lies past the current one. */
    uint32_t iBlk = c->iNext / FTS_BLOCK; /* block of the next posting */
    uint32_t nSkip = term_nskip(t);
    if (iBlk < nSkip && t->aSkip[iBlk].lastDoc < target) {
        uint32_t lo = iBlk + 1, hi = nSkip; /* first block whose lastDoc >= target */
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (t->aSkip[mid].lastDoc < target) lo = mid + 1; else hi = mid;
        }
        const MemSkip *s = &t->aSkip[lo - 1]; /* the block before it ends here */
        c->p = term_doc(t) + s->docOff;
        c->pPos = term_pos(t) + s->posOff;
        c->nPosSkip = 0;
        c->prevTf = 0;
        c->iNext = lo * FTS_BLOCK;
        c->base.doc = s->lastDoc; /* the next delta is relative to it */
    }
    while (mem_next(pp) < target) {
    }
    return c->base.doc;
}

/* p moved past n varints of c's pos stream (codec.h's skip, which reads
** sixteen bytes at a time; the stream holds them: memory is not damaged). */
static inline const uint8_t *pos_skip(const MemCursor *c, const uint8_t *p, uint32_t n) {
    fts_codec_skip_varints(&p, term_pos(c->t) + c->t->nPos, n);
    return p;
}

static int mem_positions(FtsPostings *pp, uint32_t *aPos, LpError *err) {
    MemCursor *c = (MemCursor *)pp;
    if (!c->bPositions) return lp_err_set(err, LP_INTERNAL, "cursor opened without positions");
    /* Walk over the varints of the docs before this one. */
    const uint8_t *p = pos_skip(c, c->pPos, c->nPosSkip);
    uint32_t pos = 0;
    for (uint32_t i = 0; i < c->base.tf; i++) {
        pos += get_varint(&p);
        aPos[i] = pos;
    }
    c->pPos = p;           /* now at the start of the next doc */
    c->nPosSkip = 0;
    c->prevTf = 0;         /* this doc's positions are consumed */
    return LP_OK;
}

/* The pos stream holds a posting's positions as a segment file does. */
static int mem_posbytes(FtsPostings *pp, const uint8_t **ppOut, size_t *pn, LpError *err) {
    MemCursor *c = (MemCursor *)pp;
    if (!c->bPositions) return lp_err_set(err, LP_INTERNAL, "cursor opened without positions");
    const uint8_t *p = pos_skip(c, c->pPos, c->nPosSkip);
    const uint8_t *q = pos_skip(c, p, c->base.tf);
    *ppOut = p;
    *pn = (size_t)(q - p);
    c->pPos = q;
    c->nPosSkip = 0;
    c->prevTf = 0;
    return LP_OK;
}

/* The doc stream decoded a block at a time; the block's positions are the
** pos stream up to the skip entry's offset (the stream's end for the last
** block). */
static int mem_block(FtsPostings *pp, uint32_t *aDoc, uint32_t *aTf, const uint8_t **ppPos, size_t *pn,
                     LpError *err) {
    MemCursor *c = (MemCursor *)pp;
    const MemTerm *t = c->t;
    uint32_t i0 = c->iNext;
    if (i0 >= t->df) {
        c->base.doc = FTS_NO_DOC;
        return 0;
    }
    if (!c->bPositions || i0 % FTS_BLOCK != 0 || c->nPosSkip != 0 || c->prevTf != 0) {
        return -lp_err_set(err, LP_INTERNAL,
                           "a postings block read from a cursor opened without positions or moved otherwise");
    }
    uint32_t n = t->df - i0 < FTS_BLOCK ? t->df - i0 : FTS_BLOCK;
    const uint8_t *p = c->p;
    /* The first delta is doc + 1: from UINT32_MAX it wraps to doc. */
    uint32_t doc = i0 == 0 ? UINT32_MAX : c->base.doc;
    for (uint32_t k = 0; k < n; k++) {
        doc += get_varint(&p);
        aDoc[k] = doc;
        aTf[k] = get_varint(&p);
    }
    c->p = p;
    c->iNext = i0 + n;
    c->base.doc = doc;
    c->base.tf = aTf[n - 1];
    const uint8_t *pEnd = term_pos(t) + (c->iNext % FTS_BLOCK ? t->nPos : t->aSkip[c->iNext / FTS_BLOCK - 1].posOff);
    *ppPos = c->pPos;
    *pn = (size_t)(pEnd - c->pPos);
    c->pPos = pEnd;
    return (int)n;
}

static uint32_t mem_shallow(FtsPostings *pp, uint32_t target, uint32_t *pMaxTf, uint32_t *pMinLen) {
    MemCursor *c = (MemCursor *)pp;
    const MemTerm *t = c->t;
    uint32_t nSkip = term_nskip(t);
    uint32_t lo = c->iNext ? (c->iNext - 1) / FTS_BLOCK : 0, hi = nSkip;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (t->aSkip[mid].lastDoc < target) lo = mid + 1; else hi = mid;
    }
    if (lo < nSkip) {
        *pMaxTf = t->aSkip[lo].maxTf;
        *pMinLen = t->aSkip[lo].minLen;
        return t->aSkip[lo].lastDoc;
    }
    if (t->df % FTS_BLOCK == 0 || target > t->lastDoc) { /* past the end */
        *pMaxTf = 0;
        *pMinLen = UINT32_MAX;
        return FTS_NO_DOC;
    }
    *pMaxTf = t->tailMaxTf;
    *pMinLen = t->tailMinLen;
    return t->lastDoc;
}

static void mem_close(FtsPostings *pp) {
    free(pp);
}

static int mem_status(FtsPostings *pp, LpError *err) {
    (void)pp;
    (void)err;
    return LP_OK; /* memory cannot be damaged the way a file can */
}

static const FtsPostingsVt mem_cursor_vt = {mem_next,  mem_advance, mem_positions, mem_shallow,
                                            mem_close, mem_status,  mem_posbytes, mem_block};

/* An empty term, for keys the index does not hold. */
static const MemTerm empty_term = {.minLen = UINT32_MAX, .tailMinLen = UINT32_MAX};

static int mem_lookup(FtsSource *s, const uint8_t *key, int nKey, FtsTermInfo *pInfo,
                      LpError *err) {
    (void)err;
    FtsMem *m = (FtsMem *)s;
    const MemTerm *t = term_lookup(m, key, nKey);
    if (!t || t->df == 0) return 0;
    *pInfo = (FtsTermInfo){.df = t->df, .nEarlier = t->nEarlier, .cf = t->cf, .aLoc = {(uintptr_t)t}};
    return 1;
}

static FtsPostings *cursor_new(const MemTerm *t, int bPositions, LpError *err) {
    MemCursor *c = calloc(1, sizeof(*c));
    if (!c) {
        lp_err_set(err, LP_NOMEM, "out of memory opening a postings list");
        return NULL;
    }
    c->base.vt = &mem_cursor_vt;
    c->base.doc = FTS_BEFORE_FIRST;
    c->base.df = t->df;
    c->base.maxTf = t->maxTf;
    c->base.minLen = t->minLen;
    c->t = t;
    c->p = term_doc(t);
    c->pEnd = c->p + t->nDoc;
    c->pPos = term_pos(t);
    c->bPositions = bPositions;
    return &c->base;
}

static FtsPostings *mem_open(FtsSource *s, const uint8_t *key, int nKey, int bPositions,
                             LpError *err) {
    FtsMem *m = (FtsMem *)s;
    const MemTerm *t = term_lookup(m, key, nKey);
    return cursor_new(t ? t : &empty_term, bPositions, err);
}

/* The term is the one mem_lookup/mem_scan put in info: terms never move. */
static FtsPostings *mem_open_found(FtsSource *s, const uint8_t *key, int nKey,
                                   const FtsTermInfo *info, int bPositions, LpError *err) {
    const MemTerm *t = (const MemTerm *)(uintptr_t)info->aLoc[0];
    if (!t) return mem_open(s, key, nKey, bPositions, err);
    return cursor_new(t, bPositions, err);
}

static int cmp_term_key(const MemTerm *a, const MemTerm *b) {
    int n = a->nKey < b->nKey ? a->nKey : b->nKey;
    int c = memcmp(a->key, b->key, (size_t)n);
    return c ? c : (a->nKey > b->nKey) - (a->nKey < b->nKey);
}

/* A term and its key's first 8 bytes as a big-endian number (zero padded:
** keys hold no zero byte past the field byte, so the order of the numbers
** is the keys' order unless they are equal). */
typedef struct SortTerm {
    uint64_t k8;
    MemTerm *t;
} SortTerm;

static inline int sort_less(const SortTerm *a, const SortTerm *b) {
    if (a->k8 != b->k8) return a->k8 < b->k8;
    return cmp_term_key(a->t, b->t) < 0;
}

/* Sorts a[0..n) by key: quicksort on the prefixes (median of three,
** recursing into the smaller side), insertion sort below 16. */
static void sort_terms(SortTerm *a, size_t n) {
    while (n > 16) {
        size_t m = n / 2;
        SortTerm *lo = &a[0], *mid = &a[m], *hi = &a[n - 1], x;
        if (sort_less(mid, lo)) x = *mid, *mid = *lo, *lo = x;
        if (sort_less(hi, mid)) {
            x = *hi, *hi = *mid, *mid = x;
            if (sort_less(mid, lo)) x = *mid, *mid = *lo, *lo = x;
        }
        SortTerm p = *mid;
        size_t i = 0, j = n - 1;
        for (;;) {
            while (sort_less(&a[i], &p)) i++;
            while (sort_less(&p, &a[j])) j--;
            if (i >= j) break;
            x = a[i], a[i] = a[j], a[j] = x;
            i++;
            j--;
        }
        /* a[0..j] <= p <= a[j+1..n) */
        size_t nLeft = j + 1;
        if (nLeft < n - nLeft) {
            sort_terms(a, nLeft);
            a += nLeft;
            n -= nLeft;
        } else {
            sort_terms(a + nLeft, n - nLeft);
            n = nLeft;
        }
    }
    for (size_t i = 1; i < n; i++) {
        SortTerm x = a[i];
        size_t j = i;
        for (; j > 0 && sort_less(&x, &a[j - 1]); j--) a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Readies m->aSorted (the caller holds m->mu): the terms created since
** it was made are sorted alone and merged in, so a write that adds a few
** terms to a large dictionary costs a merge, not a sort of everything.
** LP_OK or LP_NOMEM (the cache is then as it was). */
static int mem_sorted(FtsMem *m, LpError *err) {
    if (m->aSorted && !m->bSortedStale) return LP_OK;
    size_t nNew = 0, nOld = m->aSorted ? m->nSorted : 0;
    for (int i = 0; i < MEM_SHARDS; i++) nNew += m->aShard[i].aTerm.n - m->aShard[i].nSorted;
    /* From the index's pages (a large index's arrays are megabytes of
    ** fresh memory at every merge). */
    int lgNew = slab_lg(sizeof(SortTerm) * nNew), lgA = slab_lg(sizeof(MemTerm *) * (nOld + nNew));
    SortTerm *aNew = slab_alloc(&m->sortSlab, lgNew);
    MemTerm **a = slab_alloc(&m->sortSlab, lgA);
    if (!aNew || !a) {
        slab_free(&m->sortSlab, aNew, lgNew);
        slab_free(&m->sortSlab, a, lgA);
        return lp_err_set(err, LP_NOMEM, "out of memory sorting the term dictionary");
    }
    size_t k = 0;
    for (int i = 0; i < MEM_SHARDS; i++) {
        const MemShard *sh = &m->aShard[i];
        for (size_t j = sh->nSorted; j < sh->aTerm.n; j++) {
            MemTerm *t = sh->aTerm.a[j];
            uint64_t k8 = 0;
            for (int b = 0; b < 8; b++) k8 = k8 << 8 | (b < t->nKey ? t->key[b] : 0);
            aNew[k++] = (SortTerm){k8, t};
        }
    }
    sort_terms(aNew, nNew);
    /* Few new terms (a write's): each one's place in the old array by
    ** binary search, the old runs between them copied whole, as a merge
    ** that compared every old term would read each one's key (a cache
    ** miss apiece: 2 ms for 46,000 terms). Many: that merge. */
    const int bSearch = nNew * 32 <= nOld;
    size_t i = 0, o = 0;
    for (size_t j = 0; j < nNew; j++) {
        size_t at = i;
        if (bSearch) {
            size_t hi = nOld;
            while (at < hi) {
                size_t mid = at + (hi - at) / 2;
                if (cmp_term_key(m->aSorted[mid], aNew[j].t) < 0) at = mid + 1; else hi = mid;
            }
        } else {
            while (at < nOld && cmp_term_key(m->aSorted[at], aNew[j].t) < 0) at++;
        }
        if (at > i) memcpy(a + o, m->aSorted + i, sizeof(MemTerm *) * (at - i));
        o += at - i;
        i = at;
        a[o++] = aNew[j].t;
    }
    if (nOld > i) memcpy(a + o, m->aSorted + i, sizeof(MemTerm *) * (nOld - i));
    o += nOld - i;
    slab_free(&m->sortSlab, aNew, lgNew);
    slab_free(&m->sortSlab, m->aSorted, m->lgSorted);
    m->aSorted = a;
    m->lgSorted = lgA;
    m->nSorted = o;
    for (int s = 0; s < MEM_SHARDS; s++) m->aShard[s].nSorted = m->aShard[s].aTerm.n;
    m->bSortedStale = 0;
    return LP_OK;
}

/* The first of a[0..n) (sorted) whose key is not below prefix[0..nPrefix). */
static size_t sorted_seek(MemTerm *const *a, size_t n, const uint8_t *prefix, int nPrefix) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const MemTerm *t = a[mid];
        int k = t->nKey < nPrefix ? t->nKey : nPrefix;
        int c = memcmp(t->key, prefix, (size_t)k);
        if (c < 0 || (c == 0 && t->nKey < nPrefix)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Hands xKey the terms a[i] for i in [from, to) while their keys start
** with prefix (*pbPast set at the first that does not), those with
** postings; xKey's non-zero result is returned. */
static int sorted_run(MemTerm *const *a, size_t from, size_t to, const uint8_t *prefix, int nPrefix,
                      FtsKeyFn xKey, void *ctx, int *pbPast) {
    for (size_t i = from; i < to; i++) {
        const MemTerm *t = a[i];
        if (t->nKey < nPrefix || memcmp(t->key, prefix, (size_t)nPrefix) != 0) {
            *pbPast = 1;
            return 0;
        }
        if (t->df == 0) continue;
        FtsTermInfo info = {.df = t->df, .nEarlier = t->nEarlier, .cf = t->cf, .aLoc = {(uintptr_t)t}};
        int rc = xKey(ctx, t->key, t->nKey, &info);
        if (rc) return rc;
    }
    return 0;
}

/* The terms in key order, into *pa and *pn: LP_OK, or an error (err).
** The array cannot change while this reader holds the table's read lock. */
static int mem_terms_sorted(FtsMem *m, MemTerm ***pa, size_t *pn, LpError *err) {
    pthread_mutex_lock(&m->mu);
    int rc = mem_sorted(m, err);
    *pa = m->aSorted;
    *pn = m->nSorted;
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static int mem_scan(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                    LpError *err) {
    MemTerm **a;
    size_t n;
    int rc = mem_terms_sorted((FtsMem *)s, &a, &n, err);
    if (rc != LP_OK) return rc;
    int bPast = 0;
    return sorted_run(a, sorted_seek(a, n, prefix, nPrefix), n, prefix, nPrefix, xKey, ctx, &bPast);
}

/* FtsSourceVt.xScanSkip: a skip is a binary search of the rest. */
static int mem_scan_skip(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                         LpError *err) {
    MemTerm **a;
    size_t n;
    int rc = mem_terms_sorted((FtsMem *)s, &a, &n, err);
    if (rc != LP_OK) return rc;
    if (nPrefix <= 0) prefix = (const uint8_t *)"", nPrefix = 0;
    for (size_t i = sorted_seek(a, n, prefix, nPrefix); i < n;) {
        const MemTerm *t = a[i++];
        if (t->nKey < nPrefix || memcmp(t->key, prefix, (size_t)nPrefix) != 0) break;
        if (t->df == 0) continue;
        FtsTermInfo info = {.df = t->df, .nEarlier = t->nEarlier, .cf = t->cf, .aLoc = {(uintptr_t)t}};
        int r = xKey(ctx, t->key, t->nKey, &info);
        if (r > 0) return r;
        if (r < 0) {
            uint8_t aAfter[FTS_MAX_KEY];
            int nAfter = fts_key_after(t->key, -r < t->nKey ? -r : t->nKey, aAfter);
            if (nAfter == 0) break;
            /* galloping: a skip passes a few keys as often as many */
            size_t step = 1;
            while (i + step < n && sorted_seek(a + i + step - 1, 1, aAfter, nAfter) == 1) step *= 2;
            size_t lo = i + step / 2, hi = i + step < n ? i + step : n;
            i = lo + sorted_seek(a + lo, hi - lo, aAfter, nAfter);
        }
    }
    return LP_OK;
}

/* The infix index of the RAM segment. A wildcard whose parts hold 3
** bytes or more (`*kinase*`) finds its candidate terms by intersecting the
** id lists of its parts' trigrams, then hands them over in key order
** (sorted: they are few), rather than reading every key of the field. The
** index is built on the MEM_INFIX_AFTER-th wildcard scan of the segment
** (building it costs about as much as that many scans of every key: 15 ms
** for SciFact's 46,000 terms; it is built outside the segment's mutex, and
** the scans meanwhile read every key), then each scan adds the terms created
** since the last one, so a table written to between its wildcards pays
** for its new terms only. It lives until the segment is freed. */
#define MEM_INFIX_AFTER 8

static void infix_free(MemInfix *x) {
    for (uint32_t i = 0; i < x->nSlot; i++) free(x->aSlot[i].a);
    free(x->aSlot);
    VEC_FREE(&x->byId);
    memset(x, 0, sizeof(*x));
}

/* The slot of trigram g (+ 1), or the empty one where it would go. */
static MemGram *infix_slot(const MemInfix *x, uint32_t g1) {
    uint32_t mask = x->nSlot - 1, i = (g1 * 0x9E3779B1u) & mask;
    while (x->aSlot[i].gram && x->aSlot[i].gram != g1) i = (i + 1) & mask;
    return &x->aSlot[i];
}

/* Appends id to trigram g's list. LP_OK or LP_NOMEM. */
static int infix_add(MemInfix *x, uint32_t g, uint32_t id) {
    if (x->nUsed + 1 > x->nSlot / 4 * 3) {
        uint32_t n = x->nSlot ? x->nSlot * 2 : 1024;
        MemGram *a = calloc(n, sizeof(MemGram));
        if (!a) return LP_NOMEM;
        MemInfix y = {a, n, x->nUsed, {0}, 0};
        for (uint32_t i = 0; i < x->nSlot; i++) {
            if (x->aSlot[i].gram) *infix_slot(&y, x->aSlot[i].gram) = x->aSlot[i];
        }
        free(x->aSlot);
        x->aSlot = a;
        x->nSlot = n;
    }
    MemGram *e = infix_slot(x, g + 1);
    if (!e->gram) {
        e->gram = g + 1;
        x->nUsed++;
    }
    if (e->n > 0 && e->a[e->n - 1] == id) return LP_OK; /* the term holds it twice */
    if (e->n == e->cap) {
        uint32_t cap = e->cap ? e->cap * 2 : 2;
        uint32_t *a = realloc(e->a, sizeof(uint32_t) * cap);
        if (!a) return LP_NOMEM;
        x->nListBytes += sizeof(uint32_t) * (cap - e->cap);
        e->a = a;
        e->cap = cap;
    }
    e->a[e->n++] = id;
    return LP_OK;
}

/* Adds to x each shard's terms from aNext[i] on, moving aNext[i] past
** them (no writer runs: the caller is a reader). LP_OK or LP_NOMEM. */
static int infix_add_terms(const FtsMem *m, MemInfix *x, size_t *aNext) {
    for (int i = 0; i < MEM_SHARDS; i++) {
        const MemShard *sh = &m->aShard[i];
        for (; aNext[i] < sh->aTerm.n; aNext[i]++) {
            MemTerm *t = sh->aTerm.a[aNext[i]];
            uint32_t id = (uint32_t)x->byId.n;
            if (VEC_PUSH(&x->byId, t)) return LP_NOMEM;
            for (int j = 1; j + 3 <= t->nKey; j++) {
                if (infix_add(x, fts_infix_gram(t->key + j), id)) return LP_NOMEM;
            }
        }
    }
    return LP_OK;
}

/* Drops m's index (it is tried again MEM_INFIX_AFTER scans on); the
** caller holds m->mu. */
static void infix_drop(FtsMem *m) {
    infix_free(&m->infix);
    atomic_store_explicit(&m->nInfixBytes, 0, memory_order_relaxed);
    for (int i = 0; i < MEM_SHARDS; i++) m->aShard[i].nInfix = 0;
    m->bInfix = 0;
    m->nHasScans = 0;
}

/* Adds the terms created since the last call (the caller holds m->mu; no
** writer runs). LP_OK or LP_NOMEM (the index is then dropped). */
static int infix_update(FtsMem *m) {
    MemInfix *x = &m->infix;
    size_t aNext[MEM_SHARDS];
    for (int i = 0; i < MEM_SHARDS; i++) aNext[i] = m->aShard[i].nInfix;
    int rc = infix_add_terms(m, x, aNext);
    if (rc != LP_OK) {
        infix_drop(m);
        return rc;
    }
    for (int i = 0; i < MEM_SHARDS; i++) m->aShard[i].nInfix = aNext[i];
    atomic_store_explicit(&m->nInfixBytes,
                          x->nListBytes + sizeof(MemGram) * x->nSlot + sizeof(MemTerm *) * x->byId.cap,
                          memory_order_relaxed);
    return LP_OK;
}

/* Builds m's index from every term, outside m->mu, which the caller
** holds on entry and on return, having set bInfixBuilding: the first build
** takes about 15 ms for 46,000 terms, and prefix scans (the sorted-key
** cache) and other wildcards, which read every key meanwhile, need not
** wait for it. No writer runs while the caller, a reader, holds the
** table's read lock, so the terms stay as they are. */
static void infix_build(FtsMem *m) {
    pthread_mutex_unlock(&m->mu);
    MemInfix x;
    memset(&x, 0, sizeof(x));
    size_t aNext[MEM_SHARDS] = {0};
    int rc = infix_add_terms(m, &x, aNext);
    pthread_mutex_lock(&m->mu);
    m->bInfixBuilding = 0;
    if (rc != LP_OK) {
        infix_free(&x);
        m->nHasScans = 0; /* tried again MEM_INFIX_AFTER scans on */
        return;
    }
    m->infix = x;
    for (int i = 0; i < MEM_SHARDS; i++) m->aShard[i].nInfix = aNext[i];
    m->bInfix = 1;
}

static int cmp_term_ptr(const void *a, const void *b) {
    return cmp_term_key(*(MemTerm *const *)a, *(MemTerm *const *)b);
}

/* FtsInfixListFn over the index: trigram g's term ids. */
static int infix_ids(void *ctx, uint32_t g, const uint32_t **pa, uint32_t *pn) {
    const MemInfix *x = ctx;
    const MemGram *e = x->nSlot ? infix_slot(x, g + 1) : NULL;
    if (!e || !e->gram) return 0;
    *pa = e->a;
    *pn = e->n;
    return 1;
}

/* The terms holding every trigram of pHas's strings and starting with
** prefix, in a malloc'd array (*pa, *pn; NULL and 0 when there are none),
** from the index (the caller holds m->mu). LP_OK or LP_NOMEM. */
static int infix_candidates(const FtsMem *m, const uint8_t *prefix, int nPrefix, const FtsScanHas *pHas,
                            MemTerm ***pa, size_t *pn) {
    const MemInfix *x = &m->infix;
    FtsInfixIter ii;
    *pa = NULL;
    *pn = 0;
    if (!fts_infix_iter_init(&ii, pHas, infix_ids, (void *)x) || ii.nL == 0) return LP_OK;
    MemTerm **a = malloc(sizeof(MemTerm *) * ii.aL[0].n); /* the shortest list bounds them */
    if (!a) return LP_NOMEM;
    size_t n = 0;
    for (uint64_t id = fts_infix_iter_next(&ii, 0); id != UINT64_MAX; id = fts_infix_iter_next(&ii, id)) {
        MemTerm *t = x->byId.a[id];
        if (t->nKey >= nPrefix && memcmp(t->key, prefix, (size_t)nPrefix) == 0) a[n++] = t;
    }
    *pa = a;
    *pn = n;
    return LP_OK;
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return (x > y) - (x < y);
}

typedef VEC(MemTerm *) TermVec;

/* Appends to v the terms of trigram g (+ 1) in the index. */
static int pair_gram_terms(const MemInfix *x, uint32_t g1, TermVec *v) {
    const MemGram *e = infix_slot(x, g1);
    if (!e->gram) return LP_OK;
    if (VEC_RESERVE(v, v->n + e->n)) return LP_NOMEM;
    for (uint32_t k = 0; k < e->n; k++) v->a[v->n++] = x->byId.a[e->a[k]];
    return LP_OK;
}

/* infix_candidates for pHas's strings of 2 bytes (fts_infix_pair_usable):
** per string, the terms of the trigrams that begin or end with it and the
** term of just those 2 bytes in the prefix's field (prefix[0]); the terms
** every string allows. */
static int pair_candidates(const FtsMem *m, const uint8_t *prefix, int nPrefix, const FtsScanHas *pHas,
                           MemTerm ***pa, size_t *pn) {
    const MemInfix *x = &m->infix;
    TermVec all = {0}, part = {0};
    int rc = LP_OK, bFirst = 1;
    for (int i = 0; i < pHas->nPart && rc == LP_OK; i++) {
        if (pHas->anPart[i] != 2) continue;
        const uint8_t *p = pHas->aPart[i];
        part.n = 0;
        for (uint32_t k = 0; k < FTS_INFIX_PAIR_GRAMS && rc == LP_OK && x->nSlot; k++) {
            rc = pair_gram_terms(x, fts_infix_pair_gram(p, k) + 1, &part);
        }
        uint8_t key[3] = {prefix[0], p[0], p[1]};
        const MemTerm *t = term_lookup(m, key, 3);
        if (rc == LP_OK && t && VEC_PUSH(&part, (MemTerm *)t)) rc = LP_NOMEM;
        if (rc != LP_OK) break;
        if (part.n > 1) qsort(part.a, part.n, sizeof(MemTerm *), cmp_ptr);
        size_t nu = 0;
        for (size_t k = 0; k < part.n; k++) {
            if (k == 0 || part.a[k] != part.a[k - 1]) part.a[nu++] = part.a[k];
        }
        part.n = nu;
        if (bFirst) {
            TermVec tmp = all;
            all = part;
            part = tmp;
            bFirst = 0;
            continue;
        }
        size_t o = 0, j = 0; /* all &= part, both ascending */
        for (size_t k = 0; k < all.n; k++) {
            while (j < part.n && (uintptr_t)part.a[j] < (uintptr_t)all.a[k]) j++;
            if (j < part.n && part.a[j] == all.a[k]) all.a[o++] = all.a[k];
        }
        all.n = o;
    }
    VEC_FREE(&part);
    if (rc != LP_OK) {
        VEC_FREE(&all);
        return rc;
    }
    size_t n = 0;
    for (size_t k = 0; k < all.n; k++) {
        MemTerm *t = all.a[k];
        if (t->df && t->nKey >= nPrefix && memcmp(t->key, prefix, (size_t)nPrefix) == 0) all.a[n++] = t;
    }
    *pa = all.a; /* malloc'd by the VEC, freed by the caller */
    *pn = n;
    return LP_OK;
}

/* FtsSourceVt.xScanHas: once the segment keeps its infix index, the terms
** that hold every trigram of pHas's strings (or, when its longest strings
** have 2 bytes, a trigram beginning or ending with each: pair_candidates),
** in key order; before, every key of the prefix, as mem_scan. */
static int mem_scan_has(FtsSource *s, const uint8_t *prefix, int nPrefix, const FtsScanHas *pHas,
                        FtsKeyFn xKey, void *ctx, LpError *err) {
    FtsMem *m = (FtsMem *)s;
    int bPairs = fts_infix_pair_usable(pHas) && nPrefix >= 1;
    if (!fts_infix_usable(pHas) && !bPairs) return mem_scan(s, prefix, nPrefix, xKey, ctx, err);
    pthread_mutex_lock(&m->mu);
    int rc = LP_OK;
    if (!m->bInfix && !m->bInfixBuilding && ++m->nHasScans >= MEM_INFIX_AFTER) {
        m->bInfixBuilding = 1;
        infix_build(m); /* out of memory: this scan reads every key */
    }
    if (m->bInfix) rc = infix_update(m); /* the same */
    MemTerm **a = NULL;
    size_t n = 0;
    int bIndexed = m->bInfix && rc == LP_OK;
    if (bIndexed) {
        rc = bPairs ? pair_candidates(m, prefix, nPrefix, pHas, &a, &n)
                    : infix_candidates(m, prefix, nPrefix, pHas, &a, &n);
    }
    pthread_mutex_unlock(&m->mu);
    if (!bIndexed) return mem_scan(s, prefix, nPrefix, xKey, ctx, err);
    if (rc != LP_OK) return lp_err_set(err, LP_NOMEM, "out of memory reading the infix index");
    if (n > 1) qsort(a, n, sizeof(MemTerm *), cmp_term_ptr);
    int bPast = 0;
    rc = sorted_run(a, 0, n, prefix, nPrefix, xKey, ctx, &bPast);
    free(a);
    return rc;
}

static uint32_t mem_doclen(FtsSource *s, int iField, uint32_t doc) {
    FtsMem *m = (FtsMem *)s;
    if (iField < 0 || iField >= m->src.nFields || doc >= m->aLen[iField].n) return 0;
    return m->aLen[iField].a[doc];
}

const FtsSourceVt fts_mem_vt = {mem_lookup,     mem_open,     mem_scan,     mem_doclen,
                                mem_open_found, mem_scan_has, mem_scan_skip};
