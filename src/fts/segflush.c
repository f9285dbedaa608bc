/* segflush.c — see segflush.h. */
#include "fts/segflush.h"

#include <stdlib.h>
#include <string.h>

#include "fts/lower.h"
#include "fts/segment.h"
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

int fts_seg_write_source(const char *zPath, FtsSource *src, const uint32_t *aMap,
                         uint32_t nDocsOut, LpError *err) {
    uint32_t nIn = src->nDocs;
    uint32_t nOut = aMap ? nDocsOut : nIn;
    uint32_t *aLen = calloc(nOut ? nOut : 1, sizeof(uint32_t)); /* docs past the source: 0 */
    int rc = LP_OK;
    FtsSegWriter *w = NULL;
    if (!aLen) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
        goto done;
    }
    if (!(w = fts_segw_open(zPath, nOut, src->nFields, err))) {
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
    /* Each key is written as the scan reaches it, in key order. */
    WriteCtx x = {src, w, aMap && d == nIn ? NULL : aMap, {0}, zPath, err};
    if (rc == LP_OK) {
        rc = src->vt->xScan(src, (const uint8_t *)"", 0, write_key, &x, err);
        if (rc == LP_NOMEM) lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
    }
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
