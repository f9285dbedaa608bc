/*
** multi.c — see multi.h.
**
** Two modes, chosen in fts_multi_new:
**   - forward: one non-empty part, at base 0. Every source call is passed
**     to the part as it is (infos, cursors and aLoc are the part's own);
**     only nDocs (which may count an empty last part's gap) and xDocLen's
**     range are the multi's.
**   - merge: the parts' answers are combined. An info's aLoc, made by
**     multi_lookup or multi_scan, is:
**         aLoc[0]  bit i set when part i (of the non-empty parts) holds
**                  the key; bit 63 stands for every part from 63 on
**         aLoc[1]  the multi's tag (its address, scrambled), so an info
**                  from elsewhere is recognised and every part searched
**         aLoc[2]  0
**     A cursor (MultiCursor) holds one cursor per part that holds the key,
**     in ordinal order, and walks them one after the other.
**
** Invariants of a MultiCursor:
**   (1) pCur is aSub[iCur].c while iCur < nSub; once every part is used up
**       iCur == nSub and pCur is &endCur, a sentinel whose xNext and
**       xAdvance answer FTS_NO_DOC, so the hot paths need no bounds test.
**   (2) curBase/curEnd are aSub[iCur]'s range ([0, 0) for the sentinel).
**   (3) the parts after iCur have not been moved (their cursors are
**       before their first document); the ones before it are done with.
**   (4) base.doc is pCur's doc + curBase (or FTS_BEFORE_FIRST before the
**       first move, FTS_NO_DOC at the end), base.tf pCur's tf.
*/
#include "fts/multi.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

typedef struct MultiPart {
    FtsSource *src; /* borrowed */
    uint32_t base;  /* ordinal of the part's document 0 */
    uint32_t end;   /* base + the part's nDocs */
} MultiPart;

struct FtsMulti {
    FtsSource src;                    /* must be first: fts_multi_source returns &src */
    MultiPart *aPart;                 /* the non-empty parts, in ordinal order */
    int nPart;                        /* entries in aPart */
    uint64_t tag;                     /* marks the infos this multi made (aLoc[1]) */
    uint64_t aSumLen[FTS_MAX_FIELDS]; /* src.aSumLen points here */
};

#define MULTI_MASK_ALL UINT64_MAX

/* The bit of aLoc[0] that stands for part i. */
static inline uint64_t part_bit(int i) {
    return (uint64_t)1 << (i < 63 ? i : 63);
}

/* Index of the part holding ordinal doc, or -1 (a gap, or past the end). */
static int part_of(const FtsMulti *m, uint32_t doc) {
    int lo = 0, hi = m->nPart; /* first part with base > doc */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (m->aPart[mid].base <= doc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && doc < m->aPart[lo - 1].end ? lo - 1 : -1;
}

/* ------------------------------------------------------------------ */
/* The cursor                                                          */

typedef struct MultiSub {
    FtsPostings *c; /* the part's cursor (owned) */
    uint32_t base;  /* its part's range: ordinal of document 0 ... */
    uint32_t end;   /* ... and the end of its documents */
} MultiSub;

typedef struct MultiCursor {
    FtsPostings base;
    FtsPostings *pCur;  /* the part being read: see invariants (1)-(4) */
    uint32_t curBase;   /* its range: ordinal of its document 0 ... */
    uint32_t curEnd;    /* ... and the end of its documents */
    int iCur;           /* its index in aSub */
    int nSub;           /* entries in aSub */
    FtsPostings endCur; /* sentinel once every part is used up */
    MultiSub aSub[];    /* one per part that holds the key */
} MultiCursor;

/* -- the sentinel -- */

static uint32_t end_next(FtsPostings *p) {
    (void)p;
    return FTS_NO_DOC;
}

static uint32_t end_advance(FtsPostings *p, uint32_t target) {
    (void)p;
    (void)target;
    return FTS_NO_DOC;
}

static int end_positions(FtsPostings *p, uint32_t *aPos, LpError *err) {
    (void)p;
    (void)aPos;
    return lp_err_set(err, LP_INTERNAL,
                      "fts: positions asked of a list without a current document");
}

static uint32_t end_shallow(FtsPostings *p, uint32_t target, uint32_t *pMaxTf, uint32_t *pMinLen) {
    (void)p;
    (void)target;
    *pMaxTf = 0;
    *pMinLen = UINT32_MAX;
    return FTS_NO_DOC;
}

static void end_close(FtsPostings *p) {
    (void)p;
}

static int end_status(FtsPostings *p, LpError *err) {
    (void)p;
    (void)err;
    return LP_OK;
}

static const FtsPostingsVt end_vt = {end_next,  end_advance, end_positions, end_shallow,
                                     end_close, end_status,  NULL, NULL};

/* -- the multi cursor -- */

/* Makes aSub[i] the current part (i < nSub) or the sentinel (i == nSub). */
static void mc_select(MultiCursor *c, int i) {
    c->iCur = i;
    if (i < c->nSub) {
        c->pCur = c->aSub[i].c;
        c->curBase = c->aSub[i].base;
        c->curEnd = c->aSub[i].end;
    } else {
        c->pCur = &c->endCur;
        c->curBase = c->curEnd = 0;
    }
}

static uint32_t mc_found(MultiCursor *c, uint32_t d) {
    c->base.tf = c->pCur->tf;
    return c->base.doc = d + c->curBase;
}

static uint32_t mc_done(MultiCursor *c) {
    mc_select(c, c->nSub);
    return c->base.doc = FTS_NO_DOC;
}

/* xNext's slow path: the current part is used up; the next part's first
** document, or the end. */
static uint32_t mc_next_part(MultiCursor *c) {
    for (int i = c->iCur + 1; i < c->nSub; i++) {
        mc_select(c, i);
        uint32_t d = c->pCur->vt->xNext(c->pCur);
        if (d != FTS_NO_DOC) return mc_found(c, d);
    }
    return mc_done(c);
}

/* The hot path: one call into the part and an add. */
static uint32_t mc_next(FtsPostings *p) {
    MultiCursor *c = (MultiCursor *)p;
    FtsPostings *s = c->pCur;
    uint32_t d = s->vt->xNext(s);
    if (d != FTS_NO_DOC) {
        p->tf = s->tf;
        return p->doc = d + c->curBase;
    }
    return mc_next_part(c);
}

/* Moves part s (translated target t) to its first document >= t. A part
** not moved yet takes xNext first, as the engine does: sources need not
** accept xAdvance before the first document. */
static inline uint32_t sub_seek(FtsPostings *s, uint32_t t) {
    if (s->doc == FTS_BEFORE_FIRST) {
        uint32_t d = s->vt->xNext(s);
        return d < t ? s->vt->xAdvance(s, t) : d; /* FTS_NO_DOC is never < t */
    }
    if (s->doc >= t) return s->doc; /* target not past the current document */
    return s->vt->xAdvance(s, t);
}

/* xAdvance's slow path: target lies past the current part's documents.
** Parts whose range ends at or before target are passed over unopened. */
static uint32_t mc_advance_part(MultiCursor *c, uint32_t target) {
    for (int i = c->iCur + 1; i < c->nSub; i++) {
        if (target >= c->aSub[i].end) continue;
        mc_select(c, i);
        uint32_t t = target > c->curBase ? target - c->curBase : 0;
        uint32_t d = sub_seek(c->pCur, t);
        if (d != FTS_NO_DOC) return mc_found(c, d);
    }
    return mc_done(c);
}

static uint32_t mc_advance(FtsPostings *p, uint32_t target) {
    MultiCursor *c = (MultiCursor *)p;
    if (target < c->curEnd) {
        FtsPostings *s = c->pCur;
        uint32_t d = sub_seek(s, target > c->curBase ? target - c->curBase : 0);
        if (d != FTS_NO_DOC) {
            p->tf = s->tf;
            return p->doc = d + c->curBase;
        }
    }
    return mc_advance_part(c, target);
}

static int mc_positions(FtsPostings *p, uint32_t *aPos, LpError *err) {
    MultiCursor *c = (MultiCursor *)p;
    return c->pCur->vt->xPositions(c->pCur, aPos, err);
}

/* Only in mc_vt_bytes: every part's cursor has xPosBytes. */
static int mc_posbytes(FtsPostings *p, const uint8_t **pp, size_t *pn, LpError *err) {
    MultiCursor *c = (MultiCursor *)p;
    if (c->iCur >= c->nSub) {
        return lp_err_set(err, LP_INTERNAL, "positions requested past the end of a postings list");
    }
    return c->pCur->vt->xPosBytes(c->pCur, pp, pn, err);
}

/* The parts before iCur are done with, so the search starts at the
** current one (as a single source's starts at its current block). */
static uint32_t mc_shallow(FtsPostings *p, uint32_t target, uint32_t *pMaxTf, uint32_t *pMinLen) {
    MultiCursor *c = (MultiCursor *)p;
    for (int i = c->iCur; i < c->nSub; i++) {
        const MultiSub *u = &c->aSub[i];
        if (target >= u->end) continue;
        uint32_t t = target > u->base ? target - u->base : 0;
        uint32_t last = u->c->vt->xShallow(u->c, t, pMaxTf, pMinLen);
        if (last != FTS_NO_DOC) return last + u->base;
    }
    *pMaxTf = 0;
    *pMinLen = UINT32_MAX;
    return FTS_NO_DOC;
}

static void mc_close(FtsPostings *p) {
    MultiCursor *c = (MultiCursor *)p;
    for (int i = 0; i < c->nSub; i++)
        c->aSub[i].c->vt->xClose(c->aSub[i].c);
    free(c);
}

static int mc_status(FtsPostings *p, LpError *err) {
    MultiCursor *c = (MultiCursor *)p;
    for (int i = 0; i < c->nSub; i++) {
        FtsPostings *s = c->aSub[i].c;
        int rc = s->vt->xStatus ? s->vt->xStatus(s, err) : LP_OK;
        if (rc != LP_OK) return rc;
    }
    return LP_OK;
}

static const FtsPostingsVt mc_vt = {mc_next,  mc_advance, mc_positions, mc_shallow,
                                    mc_close, mc_status,  NULL, NULL};
static const FtsPostingsVt mc_vt_bytes = {mc_next,  mc_advance, mc_positions, mc_shallow,
                                          mc_close, mc_status,  mc_posbytes, NULL};

/* Opens key in the parts of mask that hold it. A key that only a part at
** base 0 holds gets that part's cursor as it is. */
static FtsPostings *multi_open_mask(FtsMulti *m, const uint8_t *key, int nKey, uint64_t mask,
                                    int bPositions, LpError *err) {
    MultiCursor *c = malloc(sizeof(MultiCursor) + sizeof(MultiSub) * (size_t)m->nPart);
    if (!c) {
        lp_err_set(err, LP_NOMEM, "out of memory opening a postings list");
        return NULL;
    }
    memset(c, 0, sizeof(MultiCursor));
    c->base.vt = &mc_vt;
    c->base.doc = FTS_BEFORE_FIRST;
    c->base.minLen = UINT32_MAX;
    c->endCur.vt = &end_vt;
    c->endCur.doc = FTS_NO_DOC;
    c->endCur.minLen = UINT32_MAX;
    for (int i = 0; i < m->nPart; i++) {
        if (!(mask & part_bit(i))) continue;
        const MultiPart *pt = &m->aPart[i];
        FtsTermInfo info;
        int r = pt->src->vt->xLookup(pt->src, key, nKey, &info, err);
        if (r < 0) goto fail;
        if (r == 0) continue;
        FtsPostings *s = pt->src->vt->xOpenFound(pt->src, key, nKey, &info, bPositions, err);
        if (!s) goto fail;
        c->aSub[c->nSub++] = (MultiSub){s, pt->base, pt->end};
        c->base.df += s->df;
        if (s->maxTf > c->base.maxTf) c->base.maxTf = s->maxTf;
        if (s->minLen < c->base.minLen) c->base.minLen = s->minLen;
    }
    if (c->nSub == 1 && c->aSub[0].base == 0) {
        FtsPostings *s = c->aSub[0].c;
        free(c);
        return s;
    }
    int bBytes = 1;
    for (int i = 0; i < c->nSub; i++) bBytes &= c->aSub[i].c->vt->xPosBytes != NULL;
    if (bBytes) c->base.vt = &mc_vt_bytes;
    mc_select(c, 0);
    return &c->base;
fail: /* the part filled err */
    for (int i = 0; i < c->nSub; i++)
        c->aSub[i].c->vt->xClose(c->aSub[i].c);
    free(c);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* The source, merge mode                                              */

/* a + b for nEarlier counts, unknown when either is. */
static uint32_t earlier_add(uint32_t a, uint32_t b) {
    return a == FTS_EARLIER_UNKNOWN || b == FTS_EARLIER_UNKNOWN ? FTS_EARLIER_UNKNOWN : a + b;
}

static int multi_lookup(FtsSource *s, const uint8_t *key, int nKey, FtsTermInfo *pInfo,
                        LpError *err) {
    FtsMulti *m = (FtsMulti *)s;
    uint32_t df = 0, nEarlier = 0;
    uint64_t cf = 0, mask = 0;
    for (int i = 0; i < m->nPart; i++) {
        FtsSource *p = m->aPart[i].src;
        FtsTermInfo info;
        int r = p->vt->xLookup(p, key, nKey, &info, err);
        if (r < 0) return r;
        if (r == 0) continue;
        df += info.df;
        nEarlier = earlier_add(nEarlier, info.nEarlier);
        cf += info.cf;
        mask |= part_bit(i);
    }
    if (!mask) return 0;
    *pInfo = (FtsTermInfo){.df = df, .nEarlier = nEarlier, .cf = cf, .aLoc = {mask, m->tag, 0}};
    return 1;
}

static FtsPostings *multi_open(FtsSource *s, const uint8_t *key, int nKey, int bPositions,
                               LpError *err) {
    return multi_open_mask((FtsMulti *)s, key, nKey, MULTI_MASK_ALL, bPositions, err);
}

static FtsPostings *multi_open_found(FtsSource *s, const uint8_t *key, int nKey,
                                     const FtsTermInfo *info, int bPositions, LpError *err) {
    FtsMulti *m = (FtsMulti *)s;
    uint64_t mask = info && info->aLoc[1] == m->tag ? info->aLoc[0] : MULTI_MASK_ALL;
    return multi_open_mask(m, key, nKey, mask, bPositions, err);
}

static uint32_t multi_doclen(FtsSource *s, int iField, uint32_t doc) {
    FtsMulti *m = (FtsMulti *)s;
    int i = part_of(m, doc);
    if (i < 0) return 0;
    FtsSource *p = m->aPart[i].src;
    return p->vt->xDocLen(p, iField, doc - m->aPart[i].base);
}

/* -- xScan: a merge of the parts' key streams --
** The keys of every part but one (the largest, "streamed") are collected
** first, each list ascending as its part reports it; then the streamed
** part is scanned, and before each of its keys the collected keys below it
** are reported, merged among themselves, and the collected keys equal to
** it are summed into it. What is left is reported after the scan. */

typedef struct ScanKey {
    size_t off; /* key bytes in the list's bytes */
    uint64_t cf;
    uint32_t df;
    uint32_t nEarlier;
    uint8_t nKey;
} ScanKey;

typedef struct ScanList {
    VEC(ScanKey) keys;
    VEC(uint8_t) bytes;
    size_t iHead; /* next key to report */
    int iPart;    /* the part it came from */
    int rc;       /* LP_NOMEM when collecting failed */
} ScanList;

typedef struct ScanMerge {
    FtsMulti *m;
    ScanList *aList; /* the collected parts */
    int nList;
    FtsKeyFn xKey; /* the caller's */
    void *ctx;
    int iStream; /* the streamed part */
    int rcUser;  /* the caller's non-zero value, when it stopped the scan */
} ScanMerge;

static int key_cmp(const uint8_t *a, int na, const uint8_t *b, int nb) {
    int c = memcmp(a, b, (size_t)(na < nb ? na : nb));
    return c ? c : na - nb;
}

static int collect_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    ScanList *l = ctx;
    ScanKey k = {l->bytes.n, info->cf, info->df, info->nEarlier, (uint8_t)nKey}; /* nKey <= FTS_MAX_KEY */
    if (VEC_RESERVE(&l->bytes, l->bytes.n + (size_t)nKey) || VEC_PUSH(&l->keys, k)) {
        return l->rc = LP_NOMEM;
    }
    memcpy(l->bytes.a + l->bytes.n, key, (size_t)nKey);
    l->bytes.n += (size_t)nKey;
    return LP_OK;
}

/* Reports key (df, nEarlier, cf, mask) merged with the collected heads
** equal to it (advancing them). */
static int scan_emit(ScanMerge *x, const uint8_t *key, int nKey, uint32_t df, uint32_t nEarlier,
                     uint64_t cf, uint64_t mask) {
    for (int j = 0; j < x->nList; j++) {
        ScanList *l = &x->aList[j];
        if (l->iHead >= l->keys.n) continue;
        const ScanKey *h = &l->keys.a[l->iHead];
        if (key_cmp(l->bytes.a + h->off, h->nKey, key, nKey) != 0) continue;
        df += h->df;
        nEarlier = earlier_add(nEarlier, h->nEarlier);
        cf += h->cf;
        mask |= part_bit(l->iPart);
        l->iHead++;
    }
    FtsTermInfo info = {.df = df, .nEarlier = nEarlier, .cf = cf, .aLoc = {mask, x->m->tag, 0}};
    int r = x->xKey(x->ctx, key, nKey, &info);
    if (r) x->rcUser = r;
    return r;
}

/* Reports the collected keys below key[0..nKey) (all of them when key is
** NULL), in order. */
static int scan_emit_below(ScanMerge *x, const uint8_t *key, int nKey) {
    for (;;) {
        const ScanList *lMin = NULL;
        const ScanKey *hMin = NULL;
        for (int j = 0; j < x->nList; j++) {
            const ScanList *l = &x->aList[j];
            if (l->iHead >= l->keys.n) continue;
            const ScanKey *h = &l->keys.a[l->iHead];
            if (!hMin ||
                key_cmp(l->bytes.a + h->off, h->nKey, lMin->bytes.a + hMin->off, hMin->nKey) < 0) {
                lMin = l;
                hMin = h;
            }
        }
        if (!hMin) return LP_OK;
        const uint8_t *k = lMin->bytes.a + hMin->off;
        if (key && key_cmp(k, hMin->nKey, key, nKey) >= 0) return LP_OK;
        /* scan_emit advances lMin's head (and the equal ones) */
        int r = scan_emit(x, k, hMin->nKey, 0, 0, 0, 0);
        if (r) return r;
    }
}

static int stream_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    ScanMerge *x = ctx;
    int r = scan_emit_below(x, key, nKey);
    if (r) return r;
    return scan_emit(x, key, nKey, info->df, info->nEarlier, info->cf, part_bit(x->iStream));
}

/* xScan (pHas NULL) and xScanHas: each part scanned with pHas. */
static int multi_scan_has(FtsSource *s, const uint8_t *prefix, int nPrefix, const FtsScanHas *pHas,
                          FtsKeyFn xKey, void *ctx, LpError *err) {
    FtsMulti *m = (FtsMulti *)s;
    if (m->nPart == 0) return LP_OK;
    ScanMerge x = {m, NULL, 0, xKey, ctx, 0, 0};
    for (int i = 1; i < m->nPart; i++) {
        if (m->aPart[i].end - m->aPart[i].base >
            m->aPart[x.iStream].end - m->aPart[x.iStream].base) {
            x.iStream = i;
        }
    }
    int rc = LP_OK;
    if (m->nPart > 1) {
        x.aList = calloc((size_t)m->nPart - 1, sizeof(ScanList));
        if (!x.aList) return lp_err_set(err, LP_NOMEM, "out of memory merging term dictionaries");
    }
    for (int i = 0; i < m->nPart && rc == LP_OK; i++) {
        if (i == x.iStream) continue;
        ScanList *l = &x.aList[x.nList++];
        l->iPart = i;
        FtsSource *p = m->aPart[i].src;
        rc = fts_source_scan_has(p, prefix, nPrefix, pHas, collect_key, l, err);
        if (l->rc) rc = lp_err_set(err, LP_NOMEM, "out of memory merging term dictionaries");
    }
    if (rc == LP_OK) {
        FtsSource *p = m->aPart[x.iStream].src;
        rc = fts_source_scan_has(p, prefix, nPrefix, pHas, stream_key, &x, err);
        if (x.rcUser) {
            rc = x.rcUser; /* the caller stopped the scan */
        } else if (rc == LP_OK) {
            rc = scan_emit_below(&x, NULL, 0);
        }
    }
    for (int j = 0; j < x.nList; j++) {
        VEC_FREE(&x.aList[j].keys);
        VEC_FREE(&x.aList[j].bytes);
    }
    free(x.aList);
    return rc;
}

static int multi_scan(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                      LpError *err) {
    return multi_scan_has(s, prefix, nPrefix, NULL, xKey, ctx, err);
}

/* No xScanSkip: fts_scan_skipping() asks the parts one by one. */
static const FtsSourceVt multi_vt = {multi_lookup,     multi_open,      multi_scan, multi_doclen,
                                     multi_open_found, multi_scan_has, NULL};

/* ------------------------------------------------------------------ */
/* The source, forward mode: one part at base 0                        */

static inline FtsSource *only_part(FtsSource *s) {
    return ((FtsMulti *)s)->aPart[0].src;
}

static int fwd_lookup(FtsSource *s, const uint8_t *key, int nKey, FtsTermInfo *pInfo,
                      LpError *err) {
    FtsSource *p = only_part(s);
    return p->vt->xLookup(p, key, nKey, pInfo, err);
}

static FtsPostings *fwd_open(FtsSource *s, const uint8_t *key, int nKey, int bPositions,
                             LpError *err) {
    FtsSource *p = only_part(s);
    return p->vt->xOpen(p, key, nKey, bPositions, err);
}

static int fwd_scan(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                    LpError *err) {
    FtsSource *p = only_part(s);
    return p->vt->xScan(p, prefix, nPrefix, xKey, ctx, err);
}

static int fwd_scan_has(FtsSource *s, const uint8_t *prefix, int nPrefix, const FtsScanHas *pHas,
                        FtsKeyFn xKey, void *ctx, LpError *err) {
    return fts_source_scan_has(only_part(s), prefix, nPrefix, pHas, xKey, ctx, err);
}

static uint32_t fwd_doclen(FtsSource *s, int iField, uint32_t doc) {
    FtsMulti *m = (FtsMulti *)s;
    FtsSource *p = m->aPart[0].src;
    return doc < m->aPart[0].end ? p->vt->xDocLen(p, iField, doc) : 0;
}

static FtsPostings *fwd_open_found(FtsSource *s, const uint8_t *key, int nKey,
                                   const FtsTermInfo *info, int bPositions, LpError *err) {
    FtsSource *p = only_part(s);
    return p->vt->xOpenFound(p, key, nKey, info, bPositions, err);
}

static const FtsSourceVt fwd_vt = {fwd_lookup, fwd_open,       fwd_scan,
                                   fwd_doclen, fwd_open_found, fwd_scan_has, NULL};

/* ------------------------------------------------------------------ */
/* A scan that skips                                                   */

typedef struct NoSkip {
    FtsKeyFn xKey;
    void *ctx;
} NoSkip;

/* For a source without xScanSkip: a skip is read through. */
static int no_skip_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    NoSkip *x = ctx;
    int r = x->xKey(x->ctx, key, nKey, info);
    return r < 0 ? 0 : r;
}

int fts_scan_skipping(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                      LpError *err) {
    if (s->vt == &multi_vt) {
        FtsMulti *m = (FtsMulti *)s;
        for (int i = 0; i < m->nPart; i++) {
            int rc = fts_scan_skipping(m->aPart[i].src, prefix, nPrefix, xKey, ctx, err);
            if (rc) return rc;
        }
        return LP_OK;
    }
    if (s->vt == &fwd_vt) return fts_scan_skipping(only_part(s), prefix, nPrefix, xKey, ctx, err);
    if (s->vt->xScanSkip) return s->vt->xScanSkip(s, prefix, nPrefix, xKey, ctx, err);
    NoSkip x = {xKey, ctx};
    return s->vt->xScan(s, prefix, nPrefix, no_skip_key, &x, err);
}

/* ------------------------------------------------------------------ */
/* Making one                                                          */

FtsMulti *fts_multi_new(FtsSource *const *aPart, const uint32_t *aBase, int nPart, LpError *err) {
    if (nPart < 0 || (nPart > 0 && (!aPart || !aBase))) {
        lp_err_set(err, LP_BADINPUT, "fts multi: %s",
                   nPart < 0 ? "negative part count" : "no parts given");
        return NULL;
    }
    int nFields = -1, iFirst = -1;
    uint64_t prevEnd = 0;
    int nNonEmpty = 0;
    for (int i = 0; i < nPart; i++) {
        FtsSource *p = aPart[i];
        uint64_t end = (uint64_t)aBase[i] + (p ? p->nDocs : 0);
        if (i > 0 && aBase[i] < prevEnd) {
            lp_err_set(err, LP_BADINPUT,
                       "fts multi: part %d starts at ordinal %u, before part %d ends (at %llu)", i,
                       aBase[i], i - 1, (unsigned long long)prevEnd);
            return NULL;
        }
        if (end > FTS_BEFORE_FIRST) {
            lp_err_set(err, LP_BADINPUT,
                       "fts multi: part %d (ordinals %u..%llu) reaches past the largest ordinal %u",
                       i, aBase[i], (unsigned long long)end - 1, FTS_BEFORE_FIRST - 1);
            return NULL;
        }
        prevEnd = end;
        if (!p) continue;
        if (p->nFields < 0 || p->nFields > FTS_MAX_FIELDS) {
            lp_err_set(err, LP_BADINPUT, "fts multi: part %d has %d full-text fields", i,
                       p->nFields);
            return NULL;
        }
        if (nFields < 0) {
            nFields = p->nFields;
            iFirst = i;
        } else if (p->nFields != nFields) {
            lp_err_set(err, LP_BADINPUT,
                       "fts multi: part %d has %d full-text fields, part %d has %d", i, p->nFields,
                       iFirst, nFields);
            return NULL;
        }
        if (p->nDocs > 0) nNonEmpty++;
    }
    FtsMulti *m = calloc(1, sizeof(FtsMulti));
    MultiPart *a = malloc(sizeof(MultiPart) * (size_t)(nNonEmpty ? nNonEmpty : 1));
    if (!m || !a) {
        free(m);
        free(a);
        lp_err_set(err, LP_NOMEM, "out of memory making a multi-segment source");
        return NULL;
    }
    m->aPart = a;
    for (int i = 0; i < nPart; i++) {
        FtsSource *p = aPart[i];
        if (!p || p->nDocs == 0) continue;
        a[m->nPart++] = (MultiPart){p, aBase[i], aBase[i] + p->nDocs};
        for (int f = 0; f < nFields; f++)
            m->aSumLen[f] += p->aSumLen[f];
    }
    /* Scrambled so that an info from another source is unlikely to match. */
    m->tag = (uint64_t)(uintptr_t)m * 0x9E3779B97F4A7C15ull ^ 0x6d756c7469736567ull;
    /* No part at all is the merge of none: no keys, lengths 0. */
    m->src.vt = m->nPart == 1 && m->aPart[0].base == 0 ? &fwd_vt : &multi_vt;
    m->src.nDocs = (uint32_t)prevEnd;
    m->src.nFields = nFields < 0 ? 0 : nFields;
    m->src.aSumLen = m->aSumLen;
    return m;
}

FtsSource *fts_multi_source(FtsMulti *m) {
    return &m->src;
}

void fts_multi_free(FtsMulti *m) {
    if (!m) return;
    free(m->aPart);
    free(m);
}
