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
    for (uint32_t d = c->vt->xNext(c); d != FTS_NO_DOC && rc == LP_OK; d = c->vt->xNext(c)) {
        uint32_t to = x->aMap ? x->aMap[d] : d;
        if (to == FTS_NO_DOC) continue; /* a tombstone: dropped */
        /* A term whose documents are all dropped is not written. */
        if (!bStarted && (rc = fts_segw_term(x->w, key, nKey)) != LP_OK) break;
        bStarted = 1;
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
        if (bCount) nEarlier += (uint32_t)fts_lower_has(&lw, d);
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
    /* Each key is written as the scan reaches it, in key order. */
    WriteCtx x = {src, w, aMap, {0}, zPath, err};
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
