/* lower.c — see lower.h. */
#include "fts/lower.h"

#include <string.h>

int fts_lower_open(FtsLower *lw, FtsSource *src, const uint8_t *key, int nKey, LpError *err) {
    uint8_t low[FTS_MAX_KEY];
    memcpy(low, key, (size_t)nKey);
    lw->n = 0;
    for (int f = 0; f < key[0]; f++) {
        low[0] = (uint8_t)f;
        FtsPostings *l = src->vt->xOpen(src, low, nKey, 0, err);
        if (!l) {
            int rc = err && err->code != LP_OK ? err->code : LP_NOMEM;
            fts_lower_close(lw, rc, err);
            return rc;
        }
        if (l->vt->xNext(l) == FTS_NO_DOC) {
            l->vt->xClose(l);
        } else {
            lw->a[lw->n++] = l;
        }
    }
    return LP_OK;
}

int fts_lower_has(FtsLower *lw, uint32_t doc) {
    int bHas = 0;
    for (int i = 0; i < lw->n; i++) {
        FtsPostings *l = lw->a[i];
        if (l->doc < doc) l->vt->xAdvance(l, doc);
        bHas |= l->doc == doc;
    }
    return bHas;
}

int fts_lower_close(FtsLower *lw, int rc, LpError *err) {
    for (int i = 0; i < lw->n; i++) {
        FtsPostings *l = lw->a[i];
        if (rc == LP_OK && l->vt->xStatus) rc = l->vt->xStatus(l, err);
        l->vt->xClose(l);
    }
    lw->n = 0;
    return rc;
}
