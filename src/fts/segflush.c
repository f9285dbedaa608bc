/* segflush.c — see segflush.h. */
#include "fts/segflush.h"

#include <stdlib.h>
#include <string.h>

#include "fts/lower.h"
#include "fts/segment.h"
#include "util/slab.h"
#include "util/vec.h"

/* The state of one write, for the scan's callback. */
typedef struct WriteCtx {
    FtsSource *src;
    FtsSegWriter *w;
    const uint32_t *aMap;   /* old ordinal -> new, or NULL */
    VEC(uint32_t) pos;      /* positions of the current posting */
    const char *zPath;
    LpError *err;
} WriteCtx;

/* Copies c's postings block by block (xBlock): every document kept, as
** numbered. Counts into *pnEarlier those that lw holds when lw is open.
** LP_OK or the error. */
static int write_blocks(WriteCtx *x, const uint8_t *key, int nKey, FtsPostings *c, FtsLower *lw,
                        uint32_t *pnEarlier, int *pbStarted) {
    uint32_t aDoc[FTS_BLOCK], aTf[FTS_BLOCK];
    const uint8_t *pPos;
    size_t nPos;
    int n, rc = LP_OK;
    while ((n = c->vt->xBlock(c, aDoc, aTf, &pPos, &nPos, x->err)) > 0) {
        if (!*pbStarted && (rc = fts_segw_term(x->w, key, nKey)) != LP_OK) return rc;
        *pbStarted = 1;
        if ((rc = fts_segw_postings(x->w, aDoc, aTf, (uint32_t)n, pPos, nPos)) != LP_OK) return rc;
        for (int i = 0; lw->n && i < n; i++) *pnEarlier += (uint32_t)fts_lower_has(lw, aDoc[i]);
    }
    return -n;
}

/* Copies c's postings one at a time, renumbered by x->aMap (a document
** mapped to FTS_NO_DOC is dropped). As write_blocks otherwise. */
static int write_postings(WriteCtx *x, const uint8_t *key, int nKey, FtsPostings *c, FtsLower *lw,
                          uint32_t *pnEarlier, int *pbStarted) {
    LpError *err = x->err;
    int rc = LP_OK;
    for (uint32_t d = c->vt->xNext(c); d != FTS_NO_DOC && rc == LP_OK; d = c->vt->xNext(c)) {
        uint32_t to = x->aMap ? x->aMap[d] : d;
        if (to == FTS_NO_DOC) continue; /* a tombstone: dropped */
        /* A term whose documents are all dropped is not written. */
        if (!*pbStarted && (rc = fts_segw_term(x->w, key, nKey)) != LP_OK) break;
        *pbStarted = 1;
        if (c->vt->xPosBytes) {
            /* Stored as the new file stores them: copied. */
            const uint8_t *pPos;
            size_t nPos;
            if ((rc = c->vt->xPosBytes(c, &pPos, &nPos, err)) != LP_OK) break;
            rc = fts_segw_posting_enc(x->w, to, c->tf, pPos, nPos);
        } else {
            if (VEC_RESERVE(&x->pos, c->tf)) {
                rc = lp_err_set(err, LP_NOMEM, "out of memory writing %s", x->zPath);
                break;
            }
            if ((rc = c->vt->xPositions(c, x->pos.a, err)) != LP_OK) break;
            rc = fts_segw_posting(x->w, to, x->pos.a, c->tf);
        }
        if (lw->n) *pnEarlier += (uint32_t)fts_lower_has(lw, d);
    }
    return rc;
}

/* Writes one key's postings, from where the scan found it, and its
** nEarlier. When every document is kept, the source's count is the one
** (the in-memory index's flush); otherwise (a merge dropping deleted
** documents, or a source that cannot tell) it is counted over the
** documents written, walking the key's term in each lower field alongside
** (those lists opened without positions). */
static int write_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    WriteCtx *x = ctx;
    FtsSource *src = x->src;
    LpError *err = x->err;
    FtsLower lw = {.n = 0};
    int rc = LP_OK, bStarted = 0;
    int bCount = x->aMap || info->nEarlier == FTS_EARLIER_UNKNOWN;
    if (bCount && (rc = fts_lower_open(&lw, src, key, nKey, err)) != LP_OK) return rc;
    FtsPostings *c = src->vt->xOpenFound(src, key, nKey, info, 1, err);
    if (!c) return fts_lower_close(&lw, err && err->code != LP_OK ? err->code : LP_NOMEM, err);
    uint32_t nEarlier = 0;
    if (!x->aMap && c->vt->xBlock) {
        rc = write_blocks(x, key, nKey, c, &lw, &nEarlier, &bStarted);
    } else {
        rc = write_postings(x, key, nKey, c, &lw, &nEarlier, &bStarted);
    }
    if (rc == LP_OK && c->vt->xStatus) rc = c->vt->xStatus(c, err);
    c->vt->xClose(c);
    rc = fts_lower_close(&lw, rc, err);
    if (rc == LP_OK && bStarted) rc = fts_segw_earlier(x->w, bCount ? nEarlier : info->nEarlier);
    return rc;
}

/* ---- in parts, on a pool ---- */

/* A key the scan reported: its bytes at off in the keys' buffer. */
typedef struct ScanKey {
    size_t off;
    int nKey;
    FtsTermInfo info;
} ScanKey;

/* Every key of the source, gathered before the parts are cut. A large
** flush has millions (48 bytes each): fresh memory, in huge pages
** (util/slab.h) rather than a page fault per 4 KiB. */
typedef struct KeyList {
    SlabPages *pPages;
    Slab slab;
    uint8_t *aByte;         /* the keys' bytes, back to back ... */
    size_t nByte;
    int lgByte;             /* ... in a block of 2^lgByte */
    ScanKey *a;             /* the keys, in scan order ... */
    size_t n;
    int lgA;                /* ... in a block of 2^lgA */
    uint64_t nPostings;
} KeyList;

static int collect_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    KeyList *l = ctx;
    ScanKey k = {l->nByte, nKey, *info};
    size_t nA = sizeof(ScanKey) * l->n;
    uint8_t *aByte = slab_append(&l->slab, l->aByte, &l->lgByte, &l->nByte, key, (size_t)nKey, 16);
    if (!aByte) return LP_NOMEM;
    l->aByte = aByte;
    ScanKey *a = slab_append(&l->slab, l->a, &l->lgA, &nA, &k, sizeof(k), 16);
    if (!a) return LP_NOMEM;
    l->a = a;
    l->n++;
    l->nPostings += info->df;
    return LP_OK;
}

/* One part: keys [i0, i1) of the list into its own writer. */
typedef struct PartJob {
    WriteCtx x;
    const KeyList *l;
    size_t i0, i1;
    int rc;
    LpError err;
} PartJob;

static void part_run(void *arg) {
    PartJob *j = arg;
    for (size_t i = j->i0; i < j->i1 && j->rc == LP_OK; i++) {
        const ScanKey *k = &j->l->a[i];
        j->rc = write_key(&j->x, j->l->aByte + k->off, k->nKey, &k->info);
    }
    VEC_FREE(&j->x.pos);
}

/* A write of at least this many postings is shared out over the pool;
** below this many documents its keys are not even gathered to count. */
#define WRITE_PARALLEL_POSTINGS 32768
#define WRITE_PARALLEL_DOCS 512

/* Writes src's keys (every document kept where it is) to w as parts, one
** per thread, cut between dictionary blocks where the postings before
** reach each thread's share; a source too small to share out, on this
** thread. LP_OK or an error. */
static int write_parts(FtsSegWriter *w, FtsSource *src, Tpool *pool, const char *zPath, LpError *err) {
    KeyList l = {0};
    if (!(l.pPages = slab_pages_new())) return lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
    slab_init(&l.slab, l.pPages);
    int rc = src->vt->xScan(src, (const uint8_t *)"", 0, collect_key, &l, err);
    int nPart = tpool_size(pool) + 1;
    if (nPart > 8) nPart = 8;
    PartJob aJob[8];
    int nJob = 0;
    if (rc == LP_OK && (l.nPostings < WRITE_PARALLEL_POSTINGS || l.n < (size_t)(2 * nPart * FTS_SEG_DICT_BLOCK))) {
        /* too small to share out: the keys gathered go to w here */
        PartJob one = {{src, w, NULL, {0}, zPath, err}, &l, 0, l.n, LP_OK, {0}};
        part_run(&one);
        rc = one.rc;
    } else if (rc == LP_OK) {
        uint64_t nSeen = 0;
        size_t i0 = 0;
        for (size_t i = 0; i < l.n && nJob < nPart - 1; i++) {
            nSeen += l.a[i].info.df;
            size_t iCut = (i + 1) / FTS_SEG_DICT_BLOCK * FTS_SEG_DICT_BLOCK;
            if (nSeen * (uint64_t)nPart >= l.nPostings * (uint64_t)(nJob + 1) && iCut > i0) {
                aJob[nJob++] = (PartJob){{src, NULL, NULL, {0}, zPath, NULL}, &l, i0, iCut, LP_OK, {0}};
                i0 = iCut;
            }
        }
        aJob[nJob++] = (PartJob){{src, NULL, NULL, {0}, zPath, NULL}, &l, i0, l.n, LP_OK, {0}};
        /* The first part goes to w itself, straight to the file; only the
        ** others wait in memory to be appended. */
        for (int k = 0; k < nJob; k++) {
            aJob[k].x.err = &aJob[k].err;
            lp_err_clear(&aJob[k].err);
            if (!(aJob[k].x.w = k == 0 ? w : fts_segw_open_part(w, err))) rc = LP_NOMEM;
        }
    }
    if (rc == LP_OK) {
        TpoolGroup g;
        tpool_group_init(&g, pool);
        for (int k = 0; k < nJob; k++) {
            if (tpool_group_submit(&g, part_run, &aJob[k]) != LP_OK) part_run(&aJob[k]);
        }
        tpool_group_wait(&g);
        for (int k = 0; k < nJob && rc == LP_OK; k++) {
            if (aJob[k].rc != LP_OK) {
                rc = aJob[k].rc;
                if (err) *err = aJob[k].err;
            }
        }
    }
    /* Appended in order (each frees its part), the rest freed. */
    for (int k = 0; k < nJob; k++) {
        if (!aJob[k].x.w || aJob[k].x.w == w) continue;
        if (rc == LP_OK) {
            rc = fts_segw_append_part(w, aJob[k].x.w);
        } else {
            fts_segw_abort(aJob[k].x.w);
        }
    }
    slab_free(&l.slab, l.aByte, l.lgByte);
    slab_free(&l.slab, l.a, l.lgA);
    slab_pages_free(l.pPages);
    return rc;
}

int fts_seg_write_source(const char *zPath, FtsSource *src, const uint32_t *aMap,
                         uint32_t nDocsOut, LpError *err) {
    return fts_seg_write_source_pool(zPath, src, aMap, nDocsOut, NULL, err);
}

int fts_seg_write_source_pool(const char *zPath, FtsSource *src, const uint32_t *aMap,
                              uint32_t nDocsOut, Tpool *pool, LpError *err) {
    return fts_seg_write_source_flags(zPath, src, aMap, nDocsOut, pool, 0, err);
}

int fts_seg_write_source_flags(const char *zPath, FtsSource *src, const uint32_t *aMap,
                               uint32_t nDocsOut, Tpool *pool, unsigned flags, LpError *err) {
    uint32_t nIn = src->nDocs;
    uint32_t nOut = aMap ? nDocsOut : nIn;
    uint32_t *aLen = calloc(nOut ? nOut : 1, sizeof(uint32_t)); /* docs past the source: 0 */
    int rc = LP_OK;
    FtsSegWriter *w = NULL;
    if (!aLen) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
        goto done;
    }
    if (!(w = fts_segw_open_flags(zPath, nOut, src->nFields, flags, err))) {
        rc = err ? err->code : LP_IOERR;
        goto done;
    }
    for (int f = 0; f < src->nFields && rc == LP_OK; f++) {
        for (uint32_t d = 0; d < nIn; d++) {
            uint32_t to = aMap ? aMap[d] : d;
            if (to != FTS_NO_DOC) aLen[to] = src->vt->xDocLen(src, f, d);
        }
        rc = fts_segw_doclens(w, f, aLen);
    }
    /* A map that keeps every document where it is (a flush with nothing
    ** deleted) is no map: the lists are copied as they are. */
    uint32_t d = 0;
    while (aMap && d < nIn && aMap[d] == d) d++;
    if (aMap && d == nIn) aMap = NULL;
    /* Each key is written as the scan reaches it, in key order; a large
    ** source with nothing to renumber, in parts on the pool's threads. */
    WriteCtx x = {src, w, aMap, {0}, zPath, err};
    if (rc == LP_OK && pool && tpool_size(pool) > 0 && !aMap && nIn >= WRITE_PARALLEL_DOCS) {
        rc = write_parts(w, src, pool, zPath, err);
    } else if (rc == LP_OK) {
        rc = src->vt->xScan(src, (const uint8_t *)"", 0, write_key, &x, err);
    }
    if (rc == LP_NOMEM) lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
    VEC_FREE(&x.pos);
    if (rc == LP_OK) {
        rc = fts_segw_finish(w, err);
        w = NULL;
    } else if (err && err->code == LP_OK) {
        lp_err_set(err, rc, "writing %s failed", zPath);
    }
done:
    fts_segw_abort(w);
    free(aLen);
    return rc;
}
