/* segflush.c — see segflush.h. */
#include "fts/segflush.h"

#include <stdlib.h>
#include <string.h>

#include "fts/segment.h"
#include "util/vec.h"

typedef struct KeyList {
    VEC(uint8_t) bytes;     /* keys back to back */
    VEC(uint32_t) offs;     /* start of key i; key i ends at offs[i+1] */
} KeyList;

static int collect_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    KeyList *l = ctx;
    (void)info;
    if (VEC_PUSH(&l->offs, (uint32_t)l->bytes.n)) return LP_NOMEM;
    if (VEC_RESERVE(&l->bytes, l->bytes.n + (size_t)nKey)) return LP_NOMEM;
    memcpy(l->bytes.a + l->bytes.n, key, (size_t)nKey);
    l->bytes.n += (size_t)nKey;
    return LP_OK;
}

int fts_seg_write_source(const char *zPath, FtsSource *src, const uint32_t *aMap,
                         uint32_t nDocsOut, LpError *err) {
    uint32_t nIn = src->nDocs;
    uint32_t nOut = aMap ? nDocsOut : nIn;
    KeyList keys = {{0}, {0}};
    uint32_t *aLen = calloc(nOut ? nOut : 1, sizeof(uint32_t)); /* docs past the source: 0 */
    VEC(uint32_t) pos = {0};
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
    if (rc == LP_OK) {
        rc = src->vt->xScan(src, (const uint8_t *)"", 0, collect_key, &keys, err);
        if (rc == LP_NOMEM) lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
    }
    for (size_t k = 0; k < keys.offs.n && rc == LP_OK; k++) {
        const uint8_t *key = keys.bytes.a + keys.offs.a[k];
        uint32_t end = k + 1 < keys.offs.n ? keys.offs.a[k + 1] : (uint32_t)keys.bytes.n;
        int nKey = (int)(end - keys.offs.a[k]);
        FtsPostings *c = src->vt->xOpen(src, key, nKey, 1, err);
        if (!c) {
            rc = err ? err->code : LP_NOMEM;
            break;
        }
        int bStarted = 0;
        for (uint32_t d = c->vt->xNext(c); d != FTS_NO_DOC && rc == LP_OK; d = c->vt->xNext(c)) {
            uint32_t to = aMap ? aMap[d] : d;
            if (to == FTS_NO_DOC) continue; /* a tombstone: dropped */
            if (VEC_RESERVE(&pos, c->tf)) {
                rc = lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
                break;
            }
            if ((rc = c->vt->xPositions(c, pos.a, err)) != LP_OK) break;
            /* A term whose documents are all dropped is not written. */
            if (!bStarted && (rc = fts_segw_term(w, key, nKey)) != LP_OK) break;
            bStarted = 1;
            rc = fts_segw_posting(w, to, pos.a, c->tf);
        }
        if (rc == LP_OK && c->vt->xStatus) rc = c->vt->xStatus(c, err);
        c->vt->xClose(c);
    }
    if (rc == LP_OK) {
        rc = fts_segw_finish(w, err);
        w = NULL;
    } else if (err && err->code == LP_OK) {
        lp_err_set(err, rc, "writing %s failed", zPath);
    }
done:
    fts_segw_abort(w);
    free(aLen);
    VEC_FREE(&pos);
    VEC_FREE(&keys.bytes);
    VEC_FREE(&keys.offs);
    return rc;
}
