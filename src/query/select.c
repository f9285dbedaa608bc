/*
** select.c — see select.h.
**
** Top-k. The best k = offset+limit rows are kept in a binary heap whose
** root is the worst row kept, so each candidate costs one comparison with
** the root and, when it is better, O(log k) to replace it. Sort keys are
** evaluated once per candidate and stored beside the row pointer. Ties are
** broken by id so results are stable. When there is no ORDER BY and the
** table's slots are in ascending id order, the first k matches are the
** answer and the rest of the scan only counts.
**
** A streamed query (bStream) skips the heap: offer() hands each match to
** the caller as it is found.
**
** Under MATCH the full-text engine finds the rows: either its own top-k by
** score (no ORDER BY, or ORDER BY WEIGHT() DESC), or every match handed to
** the heap above with WEIGHT() available to the sort keys.
**
** Column arrays. Sealed segments keep numeric attributes as arrays
** (table_snap_column). The WHERE's tests of them (colscan.h) run there
** first, 4096 slots at a time into a bitmap: a full scan reads only the
** rows left, counts without reading rows when the arrays decide the WHERE,
** takes ORDER BY keys that are numeric attributes from the arrays (rows
** whose first key cannot beat the full heap's worst are dropped from the
** bitmap unread), and without ORDER BY walks an unsorted segment's id index
** so the smallest matching ids come first. kNN filters build their
** allow-bitmaps from the arrays, and MATCH candidates are tested there
** before their rows are read. Segments without arrays (the RAM segment,
** older files) are scanned row by row.
*/
#include "query/select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/colscan.h"
#include "query/query_int.h"
#include "util/clock.h"
#include "util/bitset.h"
#include "util/bytes.h"
#include "util/hashmap.h"
#include "vec/distance.h"
#include "vec/hnsw.h"

typedef struct Cand {
    const MemRow *row;
    uint32_t ord;               /* slot / full-text ordinal */
    double weight;              /* WEIGHT() */
    double dist;                /* KNN_DIST() */
    Value *aKey;                /* nOrder sort keys */
    double hybrid;              /* HYBRID_SCORE() */
} Cand;

typedef struct TopK {
    const QSelect *q;
    Cand *a;                    /* heap, worst at a[0] */
    size_t n, cap;              /* cap = k */
    Value *aKeyPool;            /* cap * nOrder keys */
} TopK;

/* <0 when x should come before y in the output. */
static int cand_cmp(const QSelect *q, const Cand *x, const Cand *y) {
    for (int i = 0; i < q->nOrder; i++) {
        int c = value_cmp(&x->aKey[i], &y->aKey[i]);
        if (c) return q->aOrder[i].bDesc ? -c : c;
    }
    int64_t a = row_id(x->row), b = row_id(y->row);
    return (a > b) - (a < b);
}

/* Heap order: the parent is worse (comes later) than its children. */
static void sift_down(TopK *h, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < h->n && cand_cmp(h->q, &h->a[l], &h->a[w]) > 0) w = l;
        if (r < h->n && cand_cmp(h->q, &h->a[r], &h->a[w]) > 0) w = r;
        if (w == i) return;
        Cand t = h->a[i];
        h->a[i] = h->a[w];
        h->a[w] = t;
        i = w;
    }
}

static void sift_up(TopK *h, size_t i) {
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (cand_cmp(h->q, &h->a[i], &h->a[p]) <= 0) return;
        Cand t = h->a[i];
        h->a[i] = h->a[p];
        h->a[p] = t;
        i = p;
    }
}

/* Offers a candidate with keys aKey (scratch, copied when kept). */
static void topk_offer(TopK *h, const MemRow *r, uint32_t ord, double weight, double dist, double hybrid,
                       const Value *aKey) {
    int nOrder = h->q->nOrder;
    Cand c = {r, ord, weight, dist, (Value *)aKey, hybrid};
    if (h->n < h->cap) {
        Cand *slot = &h->a[h->n];
        *slot = c;
        slot->aKey = h->aKeyPool + h->n * (size_t)nOrder;
        if (nOrder) memcpy(slot->aKey, aKey, sizeof(Value) * (size_t)nOrder);
        h->n++;
        sift_up(h, h->n - 1);
        return;
    }
    if (h->cap == 0 || cand_cmp(h->q, &c, &h->a[0]) >= 0) return;
    Value *keys = h->a[0].aKey;
    h->a[0] = c;
    h->a[0].aKey = keys;
    if (nOrder) memcpy(keys, aKey, sizeof(Value) * (size_t)nOrder);
    sift_down(h, 0);
}

/* Sorts the kept candidates best-first, in place: heapsort finishing the
** heap that is already there (qsort would need the query as context). */
static void sort_cands(TopK *h) {
    size_t n = h->n;
    while (h->n > 1) {
        Cand t = h->a[0];
        h->a[0] = h->a[h->n - 1];
        h->a[h->n - 1] = t;
        h->n--;
        sift_down(h, 0);
    }
    h->n = n;
}

/* ORDER BY keys that are all numeric attributes, read from a segment's
** column arrays: a row that cannot enter the full top-k heap is then
** passed over without reading it. */
typedef struct ColKeys {
    int n;                      /* 0: the keys are not all columns */
    int *aiCol;                 /* n column numbers */
    const uint64_t **apVal, **apNull; /* n arrays of the current segment */
} ColKeys;

/* Everything one execution needs, passed to the callbacks. */
typedef struct Exec {
    const QSelect *q;
    TableSnap *snap;
    const Schema *s;
    QMeta meta;
    TopK h;
    Value *aKey;                /* scratch for one candidate's keys */
    Arena scratch;              /* QE_CALL results, reset per row */
    RowReader rd;               /* TEXT values of sealed rows */
    struct QFtsCtx *fts;
    Arena *pWork;               /* lives as long as the execution */
    /* Under MATCH: the WHERE's numeric tests, tried on the column arrays of
    ** the segment of the last document asked about (slots [docLo, docHi)). */
    ColFilter cfDoc;
    const uint64_t **apDocVal, **apDocNull; /* cfDoc.n each; apDocVal NULL: no arrays there */
    size_t docLo, docHi;
    /* ... and its ORDER BY keys, when all are numeric attributes (slots
    ** [keyLo, keyHi); bKeyArrays: that segment has their arrays). */
    ColKeys ckDoc;
    size_t keyLo, keyHi;
    int bKeyArrays;
    int rc;
    int64_t t0;                 /* when query_select started (max_query_time) */
    int bStop;                  /* a scan reached OPTION cutoff or max_query_time
                                ** (meta.fts.bCutoff or bTimedOut says which) */
    int knnK;                   /* rows the kNN search keeps (q->knnK, or a
                                ** hybrid search's window) */
    float *aTextW;              /* MATCH with knn() unfused: each slot's text
                                ** score, NAN where the MATCH did not find it;
                                ** the kNN search keeps to the rows it found */
    QRowFn xRow;                /* the caller's, for a streamed query */
    void *pRowCtx;
} Exec;

/* Does row pass the WHERE? What its string functions made in the scratch
** arena is freed again (the arena is reset only as rows are output, and a
** scan tests every row). */
static int where_true(Exec *x, const QRow *row) {
    ArenaMark m = arena_mark(&x->scratch);
    int bTrue = qexpr_true(x->q->pWhere, row);
    arena_rewind(&x->scratch, &m);
    return bTrue;
}

static void eval_keys(Exec *x, const QRow *row) {
    for (int k = 0; k < x->q->nOrder; k++) x->aKey[k] = qexpr_eval(x->q->aOrder[k].pExpr, row);
}

/* Evaluates the output of one row and hands it to xRow. */
static int emit(Exec *x, QRowFn xRow, void *ctx, const Cand *c) {
    Value aStack[32];
    const QSelect *q = x->q;
    Value *aOut = q->nOut <= 32 ? aStack : malloc(sizeof(Value) * (size_t)q->nOut);
    if (!aOut) return LP_NOMEM;
    QRow row = {x->s, c->row, c->weight, c->ord, c->dist, x->fts, &x->scratch, &x->rd, c->hybrid, NULL, NULL};
    for (int c = 0; c < q->nOut; c++) aOut[c] = qexpr_eval(q->aOut[c], &row);
    int rc = xRow(ctx, aOut, q->nOut);
    arena_reset(&x->scratch);
    if (aOut != aStack) free(aOut);
    x->meta.nReturned++;
    return rc;
}

static int topk_init(Exec *x, uint64_t nRows, LpError *err) {
    const QSelect *q = x->q;
    uint64_t k = (uint64_t)q->iOffset + (uint64_t)q->iLimit;
    if (k > nRows) k = nRows; /* never more than can match */
    x->h.q = q;
    x->h.cap = (size_t)k;
    x->h.a = malloc(sizeof(Cand) * (x->h.cap ? x->h.cap : 1));
    x->h.aKeyPool =
        malloc(sizeof(Value) * (x->h.cap ? x->h.cap : 1) * (size_t)(q->nOrder ? q->nOrder : 1));
    if (!x->h.a || !x->h.aKeyPool) {
        return lp_err_set(err, LP_NOMEM, "out of memory keeping %llu result rows",
                          (unsigned long long)k);
    }
    return LP_OK;
}

/* A match found by a scan or the full-text engine: into the heap (its
** keys in x->aKey), or straight to the caller when the query streams; a
** caller's error stops the search (x->rc). */
static void offer(Exec *x, const MemRow *r, uint32_t ord, double weight) {
    if (!x->q->bStream) {
        topk_offer(&x->h, r, ord, weight, 0, 0, x->aKey);
        return;
    }
    if (x->rc) return;
    Cand c = {r, ord, weight, 0, NULL, 0};
    int rc = emit(x, x->xRow, x->pRowCtx, &c);
    if (rc != LP_OK) {
        x->rc = rc;
        x->bStop = 1;
    }
}

/* ------------------------------------------------------------------ */
/* Without MATCH                                                       */

/* OPTION cutoff and max_query_time in a scan, as under MATCH: the scan
** stops once it has counted cutoff matches, or once the query has run
** max_query_time (checked every SCAN_CHUNK slots); the rows are the best
** of the matches found by then. */

/* Stops the scan when the matches counted reach the cutoff. */
static inline void scan_cutoff(Exec *x) {
    if (x->q->nCutoff && x->meta.nTotalFound >= x->q->nCutoff) {
        x->meta.fts.bCutoff = 1;
        x->bStop = 1;
    }
}

/* Stops the scan past max_query_time; returns x->bStop. */
static int scan_deadline(Exec *x) {
    if (x->q->nsMaxTime > 0 && lp_now_ns() - x->t0 >= x->q->nsMaxTime) {
        x->meta.fts.bTimedOut = 1;
        x->bStop = 1;
    }
    return x->bStop;
}

static void consider(Exec *x, const MemRow *r, uint32_t ord) {
    const QSelect *q = x->q;
    QRow row = {x->s, r, 1.0, ord, 0, NULL, &x->scratch, &x->rd, 0, NULL, NULL};
    x->meta.nExamined++;
    if (q->pWhere && !where_true(x, &row)) return;
    x->meta.nTotalFound++;
    if (q->bCountOnly) return;
    eval_keys(x, &row);
    offer(x, r, ord, 1.0);
}

/* One slot of a full scan without columns (or a column scan's survivor:
** bPassed when it passed the whole WHERE already). */
static void scan_slot(Exec *x, size_t i, int bEarly, int bPassed) {
    const QSelect *q = x->q;
    const MemRow *r = table_snap_slot(x->snap, i);
    if (!r) return;
    if (bEarly && x->h.n == x->h.cap) {
        /* only count what is left */
        x->meta.nExamined++;
        if (bPassed || !q->pWhere) {
            x->meta.nTotalFound++;
        } else {
            QRow row = {x->s, r, 1.0, (uint32_t)i, 0, NULL, &x->scratch, &x->rd, 0, NULL, NULL};
            if (where_true(x, &row)) x->meta.nTotalFound++;
        }
        return;
    }
    if (bPassed) { /* (a counting scan counted its chunk already) */
        QRow row = {x->s, r, 1.0, (uint32_t)i, 0, NULL, &x->scratch, &x->rd, 0, NULL, NULL};
        x->meta.nExamined++;
        x->meta.nTotalFound++;
        eval_keys(x, &row);
        offer(x, r, (uint32_t)i, 1.0);
        return;
    }
    consider(x, r, (uint32_t)i);
}

/* Slots per pass of a column scan: its bitmap stays in L1. */
#define SCAN_CHUNK 4096

/* Bits [0, n) of a set to 1, the rest of the last word 0. */
static void bits_fill(uint64_t *a, size_t n) {
    size_t nw = (n + 63) / 64;
    for (size_t w = 0; w < nw; w++) a[w] = ~0ull;
    if (n % 64) a[nw - 1] = (1ull << (n % 64)) - 1;
}

static uint64_t bits_count(const uint64_t *a, size_t n) {
    uint64_t c = 0;
    for (size_t w = 0; w < (n + 63) / 64; w++) c += (uint64_t)__builtin_popcountll(a[w]);
    return c;
}

/* The arrays of the columns cf tests, of the segment holding slot i, into
** apVal/apNull, its slot range into *pLo, *pHi: 1 when it has them all. */
static int filter_arrays(const Exec *x, const ColFilter *cf, size_t i, const uint64_t **apVal,
                         const uint64_t **apNull, size_t *pLo, size_t *pHi) {
    int bAll = 1;
    for (int k = 0; k < cf->n; k++) {
        apVal[k] = table_snap_column(x->snap, i, cf->a[k].iCol, pLo, pHi, &apNull[k]);
        if (!apVal[k]) bAll = 0;
    }
    return bAll;
}

/* The same for sort keys ck (into ck's own arrays). */
static int key_arrays(const Exec *x, ColKeys *ck, size_t i, size_t *pLo, size_t *pHi) {
    int bAll = 1;
    for (int k = 0; k < ck->n; k++) {
        ck->apVal[k] = table_snap_column(x->snap, i, ck->aiCol[k], pLo, pHi, &ck->apNull[k]);
        if (!ck->apVal[k]) bAll = 0;
    }
    return bAll;
}

/* Whether every ORDER BY key of q is a numeric attribute. */
static int order_keys_are_columns(const QSelect *q, const Schema *s) {
    for (int k = 0; k < q->nOrder; k++) {
        const QExpr *e = q->aOrder[k].pExpr;
        if (e->kind != QE_COLUMN || e->u.col.iCol < 0 || !coltype_is_numeric(s->aCol[e->u.col.iCol].type)) return 0;
    }
    return q->nOrder > 0;
}

/* ck for q's ORDER BY when every key is a numeric attribute (else ck->n
** stays 0), its arrays in arena a. LP_OK or LP_NOMEM. */
static int key_init(Arena *a, const QSelect *q, const Schema *s, ColKeys *ck) {
    memset(ck, 0, sizeof(*ck));
    if (q->bCountOnly || !order_keys_are_columns(q, s)) return LP_OK;
    ck->aiCol = arena_alloc(a, sizeof(int) * (size_t)q->nOrder);
    ck->apVal = arena_alloc(a, sizeof(*ck->apVal) * (size_t)q->nOrder);
    ck->apNull = arena_alloc(a, sizeof(*ck->apNull) * (size_t)q->nOrder);
    if (!ck->aiCol || !ck->apVal || !ck->apNull) return LP_NOMEM;
    for (int k = 0; k < q->nOrder; k++) ck->aiCol[k] = q->aOrder[k].pExpr->u.col.iCol;
    ck->n = q->nOrder;
    return LP_OK;
}

/* Key k of slot j (0-based in the segment) as row_get gives it. */
static Value col_key(const Exec *x, const ColKeys *ck, int k, size_t j) {
    if ((ck->apNull[k][j / 64] >> (j % 64)) & 1) return value_null();
    uint64_t v = ck->apVal[k][j];
    if (x->s->aCol[ck->aiCol[k]].type == COL_FLOAT) {
        Value r;
        r.kind = VAL_FLOAT;
        memcpy(&r.u.f, &v, sizeof(double));
        return r;
    }
    return value_int((int64_t)v);
}

/* Slot j's keys against the heap's worst row's: > 0 when the slot comes
** after it (cannot enter), 0 on a tie (the ids decide: read the row). */
static int keys_vs_root(const Exec *x, const ColKeys *ck, size_t j) {
    const QSelect *q = x->q;
    for (int k = 0; k < ck->n; k++) {
        Value v = col_key(x, ck, k, j);
        int c = value_cmp(&v, &x->h.a[0].aKey[k]);
        if (c) return q->aOrder[k].bDesc ? -c : c;
    }
    return 0;
}

/* Keeps in aBits (n slots from slot j0 of the segment) only the rows
** whose first key is at least as good as the full heap's worst row's: a
** necessary condition to enter it. */
static void key_threshold(const Exec *x, const ColKeys *ck, size_t j0, size_t n, uint64_t *aBits) {
    const Value *root = &x->h.a[0].aKey[0];
    int bDesc = x->q->aOrder[0].bDesc;
    if (root->kind == VAL_NULL) return; /* NULL sorts first: no bound worth it */
    ColPred p;
    memset(&p, 0, sizeof(p));
    p.iCol = ck->aiCol[0];
    if (x->s->aCol[p.iCol].type == COL_FLOAT || root->kind == VAL_FLOAT) {
        p.kind = CP_DCMP;
        p.bFloat = x->s->aCol[p.iCol].type == COL_FLOAT;
        p.op = bDesc ? QOP_GE : QOP_LE;
        p.d = root->kind == VAL_FLOAT ? root->u.f : (double)root->u.i;
    } else {
        p.kind = CP_IRANGE;
        p.iLo = bDesc ? root->u.i : INT64_MIN;
        p.iHi = bDesc ? INT64_MAX : root->u.i;
    }
    const uint64_t *aNull = ck->apNull[0] + j0 / 64;
    size_t nw = (n + 63) / 64;
    uint64_t aKeep[SCAN_CHUNK / 64];
    memcpy(aKeep, aBits, 8 * nw);
    colscan_eval(&p, ck->apVal[0] + j0, aNull, n, aBits);
    /* Ascending, a NULL key sorts before any value: such rows stay. */
    if (!bDesc) {
        for (size_t w = 0; w < nw; w++) aBits[w] |= aKeep[w] & aNull[w];
    }
}

/* Keeps the first k set bits of a[0..n) bits (k below their count). */
static void bits_keep_first(uint64_t *a, size_t n, uint64_t k) {
    size_t nw = (n + 63) / 64, w = 0;
    for (; w < nw; w++) {
        uint64_t c = (uint64_t)__builtin_popcountll(a[w]);
        if (c > k) break;
        k -= c;
    }
    if (w == nw) return;
    uint64_t m = a[w];
    while ((uint64_t)__builtin_popcountll(m) > k) m &= ~(1ull << (63 - __builtin_clzll(m)));
    a[w++] = m;
    for (; w < nw; w++) a[w] = 0;
}

/* Counts the live rows of aBits (n slots from slot c) as matches; at the
** cutoff only the first ones, the rest cleared. */
static void count_matches(Exec *x, size_t c, size_t n, uint64_t *aBits) {
    table_snap_keep_live(x->snap, c, n, aBits);
    uint64_t nPass = bits_count(aBits, n);
    if (x->q->nCutoff && x->meta.nTotalFound + nPass >= x->q->nCutoff) {
        nPass = x->q->nCutoff - x->meta.nTotalFound;
        bits_keep_first(aBits, n, nPass);
    }
    x->meta.nExamined += nPass;
    x->meta.nTotalFound += nPass;
    scan_cutoff(x);
}

/* Slots [lo, hi) of one segment through its column arrays apVal/apNull
** (one per ColPred) and, when ck->n, its sort keys' arrays: the conditions
** tested a chunk at a time into a bitmap, then only the slots left are
** read as rows. */
static void scan_columns(Exec *x, const ColFilter *cf, const uint64_t *const *apVal,
                         const uint64_t *const *apNull, const ColKeys *ck, size_t lo, size_t hi, int bEarly) {
    uint64_t aBits[SCAN_CHUNK / 64];
    for (size_t c = lo; c < hi && !scan_deadline(x); c += SCAN_CHUNK) {
        size_t n = hi - c < SCAN_CHUNK ? hi - c : SCAN_CHUNK, nw = (n + 63) / 64;
        x->meta.nColumnTested += n;
        bits_fill(aBits, n);
        for (int k = 0; k < cf->n; k++) {
            colscan_eval(&cf->a[k], apVal[k] + (c - lo), apNull[k] + (c - lo) / 64, n, aBits);
        }
        if (cf->bExact && (x->q->bCountOnly || (bEarly && x->h.n == x->h.cap))) {
            count_matches(x, c, n, aBits); /* only counting: no row is read */
            if (x->bStop) break;
            continue;
        }
        if (ck->n && cf->bExact) {
            /* Sort keys from the arrays, the WHERE decided by them too:
            ** every live row left is a match (counted at once); only rows
            ** whose keys can enter the full heap are read. The first key
            ** against the heap's worst narrows the chunk in one pass. */
            count_matches(x, c, n, aBits);
            if (x->h.cap == 0) continue;
            if (x->h.n == x->h.cap) key_threshold(x, ck, c - lo, n, aBits);
            for (size_t w = 0; w < nw; w++) {
                for (uint64_t m = aBits[w]; m; m &= m - 1) {
                    size_t slot = c + 64 * w + (size_t)__builtin_ctzll(m);
                    if (x->h.n == x->h.cap && keys_vs_root(x, ck, slot - lo) > 0) continue;
                    const MemRow *r = table_snap_slot(x->snap, slot);
                    QRow row = {x->s, r, 1.0, (uint32_t)slot, 0, NULL, &x->scratch, &x->rd, 0, NULL, NULL};
                    eval_keys(x, &row);
                    topk_offer(&x->h, r, (uint32_t)slot, 1.0, 0, 0, x->aKey);
                }
            }
            if (x->bStop) break;
            continue;
        }
        for (size_t w = 0; w < nw && !x->bStop; w++) {
            for (uint64_t m = aBits[w]; m && !x->bStop; m &= m - 1) {
                scan_slot(x, c + 64 * w + (size_t)__builtin_ctzll(m), bEarly, cf->bExact);
                scan_cutoff(x);
            }
        }
    }
}

/* The slots of the sealed segment starting at slot lo that hold live rows
** passing cf's tests, as a malloc'd bitmap (bit j: slot lo+j), with the
** segment's range in *pLo, *pHi; NULL when that segment keeps no arrays for
** some column cf tests (or memory ran out): the caller tests rows. With no
** tests (cf->n 0) the caller has made sure the segment is a sealed one. */
static uint64_t *column_bits(Exec *x, const ColFilter *cf, size_t lo, size_t *pLo, size_t *pHi) {
    if (lo >= table_snap_nslot(x->snap)) return NULL;
    const uint64_t *aV[cf->n ? cf->n : 1], *aN[cf->n ? cf->n : 1];
    if (!cf->n) (void)table_snap_column(x->snap, lo, -1, pLo, pHi, NULL); /* the range alone */
    if (!filter_arrays(x, cf, lo, aV, aN, pLo, pHi) || *pLo != lo) return NULL;
    size_t n = *pHi - lo, nw = (n + 63) / 64;
    uint64_t *aBits = malloc(8 * (nw ? nw : 1));
    if (!aBits) return NULL;
    bits_fill(aBits, n);
    for (int k = 0; k < cf->n; k++) colscan_eval(&cf->a[k], aV[k], aN[k], n, aBits);
    table_snap_keep_live(x->snap, lo, n, aBits);
    x->meta.nColumnTested += n;
    return aBits;
}

/* No ORDER BY (ascending ids) in a segment whose rows are not in id
** order, the WHERE decided by column arrays: the matches are a bitmap,
** counted at once, and the segment's id index, walked in ascending id
** order, hands the heap its matches until the next id cannot enter.
** Returns 0 (nothing done) when the segment keeps no arrays or index. */
static int scan_by_id(Exec *x, const ColFilter *cf, size_t lo, size_t *pHi) {
    size_t hiSeg, nIds;
    const uint8_t *pIds = table_snap_id_index(x->snap, lo, &nIds);
    uint64_t *aBits = pIds ? column_bits(x, cf, lo, &lo, &hiSeg) : NULL;
    if (!aBits) return 0;
    size_t n = hiSeg - lo;
    uint64_t nPass = bits_count(aBits, n); /* live rows only: column_bits */
    x->meta.nExamined += nPass;
    x->meta.nTotalFound += nPass;
    for (size_t i = 0; i < nIds && x->h.cap; i++) {
        const uint8_t *e = pIds + 16 * i;
        uint32_t ord = get_u32le(e + 8);
        if (ord >= n || !((aBits[ord / 64] >> (ord % 64)) & 1)) continue;
        if (x->h.n == x->h.cap && (int64_t)get_u64le(e) > row_id(x->h.a[0].row)) break;
        const MemRow *r = table_snap_slot(x->snap, lo + ord);
        topk_offer(&x->h, r, (uint32_t)(lo + ord), 1.0, 0, 0, x->aKey);
    }
    free(aBits);
    *pHi = hiSeg;
    return 1;
}

static int run_plain(Exec *x, LpError *err) {
    const QSelect *q = x->q;
    Arena *a = x->pWork;
    uint64_t nRows = q->aId ? (uint64_t)q->nId : table_snap_count(x->snap);
    if (!q->bCountOnly && !q->bStream && topk_init(x, nRows, err)) return LP_NOMEM;
    x->meta.bTotalExact = 1;
    if (q->aId) {
        x->meta.zPlan = "id_lookup";
        /* Candidate ids may repeat (id IN (1,1)): a row counts once. */
        IdMap seen;
        idmap_init(&seen);
        int rc = idmap_reserve(&seen, (size_t)q->nId);
        for (int i = 0; i < q->nId && rc == LP_OK; i++) {
            uint64_t v;
            if (idmap_get(&seen, (uint64_t)q->aId[i], &v)) continue;
            rc = idmap_put(&seen, (uint64_t)q->aId[i], 1);
            const MemRow *r = table_snap_get(x->snap, q->aId[i]);
            if (r) consider(x, r, 0);
            scan_cutoff(x);
            if (x->bStop) break;
        }
        idmap_free(&seen);
        if (rc != LP_OK) return lp_err_set(err, LP_NOMEM, "out of memory");
        return x->rc;
    }
    x->meta.zPlan = "full_scan";
    if (q->bCountOnly && !q->pWhere) { /* COUNT(*) of the whole table */
        x->meta.nTotalFound = table_snap_count(x->snap);
        if (q->nCutoff && x->meta.nTotalFound > q->nCutoff) {
            x->meta.nTotalFound = q->nCutoff;
            x->meta.fts.bCutoff = 1;
            x->meta.bTotalExact = 0;
        }
        return LP_OK;
    }
    size_t nSlot = table_snap_nslot(x->snap);
    /* In id order with no ORDER BY, the first k matches are the answer. */
    int bEarly = q->nOrder == 0 && table_snap_sorted(x->snap) && !q->bCountOnly && !q->bStream;
    ColFilter cf;
    const uint64_t **apVal = NULL, **apNull = NULL;
    if (colscan_compile(a, x->s, q->pWhere, &cf) != LP_OK ||
        (cf.n && (!(apVal = arena_alloc(a, sizeof(*apVal) * (size_t)cf.n)) ||
                  !(apNull = arena_alloc(a, sizeof(*apNull) * (size_t)cf.n))))) {
        return lp_err_set(err, LP_NOMEM, "out of memory");
    }
    ColKeys ck;
    if (key_init(a, q, x->s, &ck) != LP_OK) return lp_err_set(err, LP_NOMEM, "out of memory");
    for (size_t i = 0; i < nSlot && !scan_deadline(x);) {
        size_t lo = i, hi = nSlot;
        int bCols = (cf.n > 0 || ck.n > 0) & filter_arrays(x, &cf, i, apVal, apNull, &lo, &hi) &
                    key_arrays(x, &ck, i, &lo, &hi);
        /* (a whole segment's matches at once: not under a cutoff) */
        if (!q->nOrder && !bEarly && !q->bCountOnly && !q->bStream && cf.bExact && (bCols || !cf.n) && !q->nCutoff &&
            scan_by_id(x, &cf, i, &hi)) {
            i = hi;
            continue;
        }
        if (!cf.n && !ck.n) hi = nSlot;
        if (hi > nSlot) hi = nSlot;
        if (bCols && lo == i) {
            scan_columns(x, &cf, apVal, apNull, &ck, lo, hi, bEarly);
        } else {
            for (; i < hi && !x->bStop; i++) {
                if (i % SCAN_CHUNK == 0 && scan_deadline(x)) break;
                scan_slot(x, i, bEarly, 0);
                scan_cutoff(x);
            }
        }
        if (x->bStop) break;
        i = hi;
    }
    x->meta.bTotalExact = !x->bStop;
    return x->rc ? x->rc : LP_OK;
}

/* ------------------------------------------------------------------ */
/* With MATCH                                                          */

/* Document doc's values in the column arrays of its segment: 0 when one
** fails cfDoc, 1 when all pass, -1 when the segment keeps no arrays. */
static int doc_columns(Exec *x, uint32_t doc) {
    const ColFilter *cf = &x->cfDoc;
    if ((doc < x->docLo || doc >= x->docHi) && !filter_arrays(x, cf, doc, x->apDocVal, x->apDocNull, &x->docLo, &x->docHi)) {
        x->apDocVal[0] = NULL;
    }
    if (!x->apDocVal[0]) return -1;
    size_t j = doc - x->docLo;
    x->meta.nColumnTested++;
    for (int k = 0; k < cf->n; k++) {
        if (!colscan_test1(&cf->a[k], x->apDocVal[k][j], (int)((x->apDocNull[k][j / 64] >> (j % 64)) & 1))) return 0;
    }
    return 1;
}

/* Is the document a live row that passes the attribute filter? */
static int accept_doc(void *ctx, uint32_t doc) {
    Exec *x = ctx;
    if (doc >= table_snap_nslot(x->snap)) return 0;
    const MemRow *r = table_snap_slot(x->snap, doc);
    if (!r) return 0;
    x->meta.nExamined++;
    if (!x->q->pWhere) return 1;
    if (x->cfDoc.n) {
        int v = doc_columns(x, doc);
        if (v == 0 || (v == 1 && x->cfDoc.bExact)) return v;
    }
    QRow row = {x->s, r, 1.0, doc, 0, NULL, &x->scratch, &x->rd, 0, NULL, NULL};
    return where_true(x, &row);
}

/* The id of the row at ordinal doc: what equal weights are ordered by. */
static int64_t tie_id(void *ctx, uint32_t doc) {
    Exec *x = ctx;
    const MemRow *r = doc < table_snap_nslot(x->snap) ? table_snap_slot(x->snap, doc) : NULL;
    return r ? row_id(r) : INT64_MAX;
}

/* What count_hit and order_hit return to stop fts_query_all at the
** cutoff (not an LP_* code). */
#define HIT_CUTOFF (-2)

static int count_hit(void *ctx, uint32_t doc, double score) {
    Exec *x = ctx;
    (void)score;
    if (accept_doc(x, doc)) x->meta.nTotalFound++;
    return x->q->nCutoff && x->meta.nTotalFound >= x->q->nCutoff ? HIT_CUTOFF : LP_OK;
}

static int order_hit(void *ctx, uint32_t doc, double score) {
    Exec *x = ctx;
    if (!accept_doc(x, doc)) return LP_OK;
    if (x->q->nCutoff && x->meta.nTotalFound >= x->q->nCutoff) return HIT_CUTOFF;
    x->meta.nTotalFound++;
    if (x->ckDoc.n && x->h.cap && x->h.n == x->h.cap) {
        /* Keys in the arrays: a match that cannot enter is not read. */
        if (doc < x->keyLo || doc >= x->keyHi) x->bKeyArrays = key_arrays(x, &x->ckDoc, doc, &x->keyLo, &x->keyHi);
        if (x->bKeyArrays && keys_vs_root(x, &x->ckDoc, doc - x->keyLo) > 0) return LP_OK;
    }
    const MemRow *r = table_snap_slot(x->snap, doc);
    QRow row = {x->s, r, score, doc, 0, x->fts, &x->scratch, &x->rd, 0, NULL, NULL};
    eval_keys(x, &row);
    topk_offer(&x->h, r, doc, score, 0, 0, x->aKey);
    return LP_OK;
}

/* A streamed query's match: to the caller now. */
static int stream_hit(void *ctx, uint32_t doc, double score) {
    Exec *x = ctx;
    if (!accept_doc(x, doc)) return LP_OK;
    if (x->q->nCutoff && x->meta.nTotalFound >= x->q->nCutoff) return HIT_CUTOFF;
    x->meta.nTotalFound++;
    offer(x, table_snap_slot(x->snap, doc), doc, score);
    return x->rc;
}

static int plan_match(Exec *x, Arena *a, FtsQuery **ppQ, LpError *err) {
    const QSelect *q = x->q;
    FtsSource *src = table_snap_fts(x->snap);
    if (!src) {
        return lp_err_set(err, LP_BADINPUT, "table '%s' has no indexed full-text field to MATCH",
                          table_name(q->pTable));
    }
    int64_t t0 = lp_now_ns();
    int rc = fts_query_new(a, q->pMatch, q->zMatch, table_analyzer(q->pTable), src, &q->rank, ppQ,
                           err);
    if (rc == LP_OK) {
        /* EXPLAIN and EXPLAIN_SCORE() name the fields: the table's names,
        ** held as long as the table (the MATCH text was parsed with them) */
        const char *const *azName;
        int nName = table_fts_fields(q->pTable, &azName, NULL);
        fts_query_set_field_names(*ppQ, azName, nName);
    }
    x->meta.nsPlan = lp_now_ns() - t0;
    return rc;
}

static int run_match(Exec *x, Arena *a, LpError *err) {
    const QSelect *q = x->q;
    FtsQuery *fq = NULL;
    int rc = plan_match(x, a, &fq, err);
    if (rc != LP_OK) return rc;
    x->fts->q = fq;
    x->meta.zPlan = "fulltext";
    if (q->pWhere && colscan_compile(a, x->s, q->pWhere, &x->cfDoc) != LP_OK) {
        return lp_err_set(err, LP_NOMEM, "out of memory");
    }
    if (x->cfDoc.n) {
        x->apDocVal = arena_alloc(a, sizeof(*x->apDocVal) * (size_t)x->cfDoc.n);
        x->apDocNull = arena_alloc(a, sizeof(*x->apDocNull) * (size_t)x->cfDoc.n);
        if (!x->apDocVal || !x->apDocNull) return lp_err_set(err, LP_NOMEM, "out of memory");
        x->docLo = x->docHi = 0;
    }
    if (key_init(a, q, x->s, &x->ckDoc) != LP_OK) return lp_err_set(err, LP_NOMEM, "out of memory");
    x->keyLo = x->keyHi = 0;
    int64_t t0 = lp_now_ns();
    if (q->nsMaxTime > 0) fts_query_set_deadline(fq, x->t0 + q->nsMaxTime);
    if (q->nCutoff) fts_query_set_cutoff(fq, q->nCutoff);
    if (q->bCountOnly || q->bStream) {
        rc = fts_query_all(fq, q->bStream ? stream_hit : count_hit, x, &x->meta.fts, err);
        if (rc == HIT_CUTOFF) rc = LP_OK, x->meta.fts.bCutoff = 1;
        x->meta.bTotalExact = !x->meta.fts.bTimedOut && !x->meta.fts.bCutoff;
    } else if (q->nOrder == 0 || q->bOrderByWeight) {
        uint64_t k = (uint64_t)q->iOffset + (uint64_t)q->iLimit;
        uint64_t nDocs = table_snap_nslot(x->snap);
        if (k > nDocs) k = nDocs;
        FtsHit *aHit = malloc(sizeof(FtsHit) * (size_t)(k ? k : 1));
        int nHit = 0;
        if (!aHit) return lp_err_set(err, LP_NOMEM, "out of memory");
        /* Equal weights go to the smaller id (Manticore's order); ordinals
        ** follow ids unless rows came in out of id order. */
        if (!table_snap_sorted(x->snap)) fts_query_set_tie_key(fq, tie_id, x);
        /* Column tests that decide the filter are cheaper than scoring. */
        fts_query_set_accept_first(fq, x->cfDoc.n > 0 && x->cfDoc.bExact);
        rc = fts_query_topk(fq, (int)k, accept_doc, x, aHit, &nHit, &x->meta.fts, err);
        x->meta.nTotalFound = x->meta.fts.nAccepted;
        x->meta.bTotalExact = x->meta.fts.bTotalExact;
        /* Hand the hits to the common output path as sorted candidates. */
        if (rc == LP_OK && (rc = topk_init(x, (uint64_t)nHit, err)) == LP_OK) {
            for (int i = 0; i < nHit; i++) {
                x->h.a[i] = (Cand){table_snap_slot(x->snap, aHit[i].doc), aHit[i].doc,
                                   aHit[i].score, 0, NULL, 0};
            }
            x->h.n = (size_t)nHit;
        }
        free(aHit);
        x->meta.nsMatch = lp_now_ns() - t0;
        return rc == LP_OK ? 1 : rc; /* 1: already sorted */
    } else {
        if ((rc = topk_init(x, table_snap_count(x->snap), err)) != LP_OK) return rc;
        rc = fts_query_all(fq, order_hit, x, &x->meta.fts, err);
        if (rc == HIT_CUTOFF) rc = LP_OK, x->meta.fts.bCutoff = 1;
        x->meta.bTotalExact = !x->meta.fts.bTimedOut && !x->meta.fts.bCutoff;
    }
    x->meta.nsMatch = lp_now_ns() - t0;
    return rc;
}

/* ------------------------------------------------------------------ */
/* With knn()                                                          */

typedef struct KnnHit {
    const MemRow *r;
    uint32_t ord;
    double dist;
    int64_t id;
} KnnHit;

/* Is a farther than b (ties: the larger id)? The heap keeps the worst of
** the k nearest at the top. */
static int knn_worse(const KnnHit *a, const KnnHit *b) {
    return a->dist > b->dist || (a->dist == b->dist && a->id > b->id);
}

static void knn_push(KnnHit *h, int *pn, int k, KnnHit e) {
    int n = *pn, i;
    if (n < k) {
        for (i = n++; i > 0 && knn_worse(&e, &h[(i - 1) / 2]); i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
        h[i] = e;
        *pn = n;
        return;
    }
    if (!knn_worse(&h[0], &e)) return;
    for (i = 0;;) {
        int l = 2 * i + 1, r = l + 1, w = i;
        const KnnHit *pw = &e;
        if (l < n && knn_worse(&h[l], pw)) w = l, pw = &h[l];
        if (r < n && knn_worse(&h[r], pw)) w = r;
        if (w == i) break;
        h[i] = h[w];
        i = w;
    }
    h[i] = e;
}

/* The distance of the column's similarity between the query (unit length
** for cosine) and v. Cosine divides by v's norm: stored vectors are kept
** as inserted. */
static double knn_distance(VecMetric m, const float *aQ, const float *v, size_t n) {
    if (m != VEC_COSINE) return vec_distance(m, aQ, v, n);
    double dot = 1.0 - vec_distance(VEC_IP, aQ, v, n);
    double norm2 = 1.0 - vec_distance(VEC_IP, v, v, n);
    return norm2 > 0 ? 1.0 - dot / sqrt(norm2) : 1.0;
}

/* The query vector: the literal, or the vector of the row knn() names. */
static int knn_query_vector(Exec *x, float *aQ, size_t n, LpError *err) {
    const QSelect *q = x->q;
    const char *zCol = x->s->aCol[q->iKnnCol].zName;
    if (q->aKnnVec) {
        memcpy(aQ, q->aKnnVec, sizeof(float) * n);
        return LP_OK;
    }
    const MemRow *r = table_snap_get(x->snap, q->iKnnRefId);
    if (!r) {
        return lp_err_set(err, LP_NOTFOUND, "knn(): no row with id %lld to take the query vector from",
                          (long long)q->iKnnRefId);
    }
    Value v = row_get(x->s, r, q->iKnnCol);
    if (v.kind != VAL_VEC || v.u.v.n != n) {
        return lp_err_set(err, LP_BADINPUT, "knn(): row %lld has no vector in column '%s'",
                          (long long)q->iKnnRefId, zCol);
    }
    memcpy(aQ, v.u.v.a, sizeof(float) * n);
    return LP_OK;
}

/* The graph path's filter: the node is a live row of the snapshot. */
typedef struct KnnCtx {
    Exec *x;
    const uint32_t *aMap;   /* node -> the segment's ordinal */
    uint32_t nMap;
    uint64_t base;          /* the segment's first global ordinal */
} KnnCtx;

static const MemRow *knn_node_row(const KnnCtx *c, uint32_t node, uint32_t *pSlot) {
    if (node >= c->nMap || c->aMap[node] == UINT32_MAX) return NULL;
    uint64_t slot = c->base + c->aMap[node];
    if (slot >= table_snap_nslot(c->x->snap)) return NULL;
    *pSlot = (uint32_t)slot;
    return table_snap_slot(c->x->snap, slot);
}

static int knn_node_live(void *ctx, uint32_t node) {
    uint32_t slot;
    return knn_node_row(ctx, node, &slot) != NULL;
}

/* kNN through the column's HNSW graph. The attribute filter becomes an
** allow-bitmap over the graph's nodes (evaluated for every live row, so the
** graph never returns a row the filter rejects, and the library can choose
** an exact scan when few pass); without one, a callback skips rows deleted
** or not in this snapshot. */
/* A WHERE with KNN_DIST() that a graph can answer: AND-ed conditions
** KNN_DIST() < r (or <=, or r > KNN_DIST()) give the radius (the
** smallest); the other AND-ed conditions (aRest) must not use KNN_DIST()
** and become the allow-bitmap. The whole WHERE is checked again on every
** row the range search returns, with its distance. */
#define KNN_MAX_REST 32

typedef struct KnnRadius {
    float radius;
    const QExpr *aRest[KNN_MAX_REST];
    int nRest;
} KnnRadius;

static int knn_const(const QExpr *e, double *pV) {
    if (!e || e->kind != QE_CONST) return 0;
    if (e->u.v.kind == VAL_INT) *pV = (double)e->u.v.u.i;
    else if (e->u.v.kind == VAL_FLOAT) *pV = e->u.v.u.f;
    else return 0;
    return 1;
}

/* Splits e's AND-ed conditions into r; 0 when one of them uses KNN_DIST()
** in any other way (OR, arithmetic, >), or there are more than
** KNN_MAX_REST of them: the exact scan answers those. */
static int knn_radius_split(const QExpr *e, KnnRadius *r) {
    if (e->kind == QE_BINARY && e->op == QOP_AND) {
        return knn_radius_split(e->a, r) && knn_radius_split(e->b, r);
    }
    double v;
    if (e->kind == QE_BINARY && (e->op == QOP_LT || e->op == QOP_LE) && e->a->kind == QE_KNN_DIST &&
        knn_const(e->b, &v)) {
        if (v < r->radius) r->radius = (float)v;
        return 1;
    }
    if (e->kind == QE_BINARY && (e->op == QOP_GT || e->op == QOP_GE) && e->b->kind == QE_KNN_DIST &&
        knn_const(e->a, &v)) {
        if (v < r->radius) r->radius = (float)v;
        return 1;
    }
    if (qexpr_uses_knn(e) || r->nRest == KNN_MAX_REST) return 0;
    r->aRest[r->nRest++] = e;
    return 1;
}

/* One segment's graph search: its filter, built on the statement's
** thread (the WHERE is evaluated there), then the search itself, which
** may run on a pool thread. */
typedef struct KnnJob {
    const TableKnnPart *kp;
    KnnCtx c;
    VecFilter f;
    Bitset allow;
    int bBitmap;
    const float *aQ;
    int k, ef;
    const KnnRadius *pRad;  /* range search within a radius, or NULL */
    VecHit *aHit;
    int nHit;
    VecSearchStats st;
    int rc;
    LpError err;
} KnnJob;

static int knn_job_prepare(Exec *x, KnnJob *j, const TableKnnPart *kp, const float *aQ,
                           const KnnRadius *pRad, const ColFilter *cf, LpError *err) {
    const QSelect *q = x->q;
    uint32_t nMap = kp->nNode;
    j->kp = kp;
    j->pRad = pRad;
    j->c = (KnnCtx){x, kp->aNodeSlot, nMap, kp->base};
    j->aQ = aQ;
    j->k = x->knnK;
    j->ef = q->knnEf;
    /* The live rows bound the rows the callback passes: after many deletes
    ** the library can then prefer an exact scan of the few left to a walk
    ** through a graph of mostly deleted nodes. */
    j->f = (VecFilter){NULL, knn_node_live, &j->c, (int64_t)kp->nLive};
    if (!(j->aHit = malloc(sizeof(VecHit) * (size_t)x->knnK))) {
        return lp_err_set(err, LP_NOMEM, "out of memory");
    }
    j->bBitmap = (pRad ? pRad->nRest > 0 : q->pWhere != NULL) || x->aTextW;
    if (!j->bBitmap) return LP_OK;
    if (bitset_init(&j->allow, nMap ? nMap : 1)) return lp_err_set(err, LP_NOMEM, "out of memory");
    /* The segment's column arrays first, when it keeps them: then only
    ** the rows they pass are read (none when they decide the filter). */
    size_t lo = 0, hi = 0;
    uint64_t *aPass = cf ? column_bits(x, cf, kp->base, &lo, &hi) : NULL;
    int64_t nAllow = 0;
    for (uint32_t node = 0; node < nMap; node++) {
        if (x->aTextW) { /* only the rows the MATCH found */
            uint32_t ord = kp->aNodeSlot[node];
            if (ord == UINT32_MAX || kp->base + ord >= table_snap_nslot(x->snap) ||
                isnan(x->aTextW[kp->base + ord])) {
                continue;
            }
        }
        if (aPass) {
            uint32_t ord = kp->aNodeSlot[node];
            if (ord == UINT32_MAX || kp->base + ord >= hi || !((aPass[ord / 64] >> (ord % 64)) & 1)) continue;
            if (cf->bExact) {
                x->meta.nExamined++;
                bitset_set(&j->allow, node);
                nAllow++;
                continue;
            }
        }
        uint32_t slot;
        const MemRow *r = knn_node_row(&j->c, node, &slot);
        if (!r) continue;
        x->meta.nExamined++;
        QRow row = {x->s, r, 1.0, slot, 0, NULL, &x->scratch, &x->rd, 0, NULL, NULL};
        int bOk = 1;
        if (!q->pWhere) { /* the MATCH alone */
            bitset_set(&j->allow, node);
            nAllow++;
            continue;
        }
        if (pRad) {
            for (int i = 0; i < pRad->nRest && bOk; i++) bOk = qexpr_true(pRad->aRest[i], &row);
        } else {
            bOk = where_true(x, &row);
        }
        if (!bOk) continue;
        bitset_set(&j->allow, node);
        nAllow++;
    }
    free(aPass);
    j->f = (VecFilter){&j->allow, NULL, NULL, nAllow};
    return LP_OK;
}

static void knn_job_run(void *arg) {
    KnnJob *j = arg;
    if (j->pRad) {
        j->rc = vec_hnsw_range(j->kp->h, j->aQ, j->pRad->radius, j->k, j->ef, &j->f, j->aHit, &j->nHit,
                               &j->st, &j->err);
    } else {
        j->rc = vec_hnsw_search(j->kp->h, j->aQ, j->k, j->ef, &j->f, j->aHit, &j->nHit, &j->st,
                                &j->err);
    }
}

/* kNN through the column's HNSW graphs, one per segment, searched in
** parallel on the table's pool when there are several; their top-k merge
** in the heap. The attribute filter becomes an allow-bitmap over each
** graph's nodes (evaluated for every live row, so a graph never returns a
** row the filter rejects, and the library can choose an exact scan when
** few pass); without one, a callback skips rows deleted or not in this
** snapshot. */
static int knn_graphs(Exec *x, const TableKnnPart *aPart, int nPart, const float *aQ,
                      const KnnRadius *pRad, KnnHit *aHeap, int *pnHeap, LpError *err) {
    const QSelect *q = x->q;
    KnnJob *aJob = calloc((size_t)(nPart ? nPart : 1), sizeof(KnnJob));
    int rc = aJob ? LP_OK : lp_err_set(err, LP_NOMEM, "out of memory");
    /* The filter's tests of numeric attributes, for segments' columns. */
    ColFilter cf;
    const QExpr *const *apFilter = pRad ? pRad->aRest : (const QExpr *const *)&q->pWhere;
    int nFilter = pRad ? pRad->nRest : q->pWhere != NULL;
    if (rc == LP_OK && colscan_compile_all(x->pWork, x->s, apFilter, nFilter, &cf) != LP_OK) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory");
    }
    for (int i = 0; i < nPart && rc == LP_OK; i++) {
        rc = knn_job_prepare(x, &aJob[i], &aPart[i], aQ, pRad, cf.n ? &cf : NULL, err);
    }
    Tpool *pool = table_pool(q->pTable);
    if (rc == LP_OK && nPart > 1 && pool) {
        TpoolGroup g;
        tpool_group_init(&g, pool);
        for (int i = 0; i < nPart; i++) {
            if (tpool_group_submit(&g, knn_job_run, &aJob[i]) != LP_OK) knn_job_run(&aJob[i]);
        }
        tpool_group_wait(&g);
    } else if (rc == LP_OK) {
        for (int i = 0; i < nPart; i++) knn_job_run(&aJob[i]);
    }
    x->meta.zPlan = NULL;
    for (int i = 0; i < nPart && rc == LP_OK; i++) {
        KnnJob *j = &aJob[i];
        if (j->rc != LP_OK) {
            rc = j->rc;
            if (err) *err = j->err;
            break;
        }
        /* Over several segments the plan names the graph path when any
        ** segment took it. */
        const char *zPath = j->st.path == VEC_PATH_GRAPH   ? (pRad ? "knn_hnsw_range" : "knn_hnsw")
                            : j->st.path == VEC_PATH_EXACT ? "knn_exact"
                                                           : "knn_hnsw_then_exact";
        if (!x->meta.zPlan || strcmp(x->meta.zPlan, "knn_exact") == 0) x->meta.zPlan = zPath;
        x->meta.nKnnDist += j->st.nDist;
        for (int h = 0; h < j->nHit; h++) {
            uint32_t slot;
            const MemRow *r = knn_node_row(&j->c, j->aHit[h].id, &slot);
            if (!r) continue;
            if (pRad) { /* the whole WHERE, now that the distance is known */
                QRow row = {x->s, r, 1.0, slot, j->aHit[h].dist, NULL, &x->scratch, &x->rd, 0, NULL, NULL};
                if (!qexpr_true(q->pWhere, &row)) continue;
            }
            knn_push(aHeap, pnHeap, x->knnK, (KnnHit){r, slot, j->aHit[h].dist, row_id(r)});
        }
    }
    if (!x->meta.zPlan) x->meta.zPlan = "knn_hnsw";
    for (int i = 0; aJob && i < nPart; i++) {
        free(aJob[i].aHit);
        if (aJob[i].bBitmap) bitset_free(&aJob[i].allow);
    }
    free(aJob);
    return rc;
}

/* The column's metric. */
static VecMetric knn_metric(const Exec *x) {
    const VectorOpts *vo = &x->s->aCol[x->q->iKnnCol].vec;
    return vo->sim == VSIM_L2 ? VEC_L2 : vo->sim == VSIM_IP ? VEC_IP : VEC_COSINE;
}

/* The kNN search: the x->knnK nearest rows that pass the WHERE, into
** *paHeap (a heap, not sorted: *pnHeap of them), and the query vector into
** *paQ (normalised for cosine); the caller frees both, also on error.
** Through the column's HNSW graphs when it has them and the WHERE allows
** (see knn_graphs); else exact: every live row with a vector is scored, the
** filter (which may use KNN_DIST()) applied, the k nearest kept. */
static int knn_search(Exec *x, float **paQ, KnnHit **paHeap, int *pnHeap, LpError *err) {
    const QSelect *q = x->q;
    const VectorOpts *vo = &x->s->aCol[q->iKnnCol].vec;
    VecMetric m = knn_metric(x);
    size_t n = (size_t)vo->nDims;
    x->meta.zPlan = "knn_exact";
    x->meta.bTotalExact = 1;
    float *aQ = *paQ = malloc(sizeof(float) * (n ? n : 1));
    KnnHit *aHeap = *paHeap = malloc(sizeof(KnnHit) * (size_t)(x->knnK ? x->knnK : 1));
    int nHeap = 0, rc = LP_OK;
    *pnHeap = 0;
    if (!aQ || !aHeap) return lp_err_set(err, LP_NOMEM, "out of memory");
    if ((rc = knn_query_vector(x, aQ, n, err)) != LP_OK) return rc;
    if (m == VEC_COSINE && vec_normalize(aQ, n) == 0) {
        return lp_err_set(err, LP_BADINPUT, "knn(): the query vector is all zeros, which has no cosine distance");
    }
    /* One graph per segment; their top-k merge in the heap. A radius in
    ** the WHERE (AND-ed KNN_DIST() < r) is a range search on each graph;
    ** any other use of KNN_DIST() in the WHERE needs every distance: the
    ** exact scan below answers it. */
    int nPart = table_snap_nparts(x->snap);
    TableKnnPart aPartStack[8];
    TableKnnPart *aPart = nPart <= 8 ? aPartStack : malloc(sizeof(TableKnnPart) * (size_t)nPart);
    if (!aPart) return lp_err_set(err, LP_NOMEM, "out of memory");
    int bGraph = 0;
    nPart = table_snap_knn_parts(x->snap, q->iKnnCol, aPart, nPart);
    KnnRadius rad = {INFINITY, {0}, 0};
    int bRange = qexpr_uses_knn(q->pWhere) && knn_radius_split(q->pWhere, &rad) &&
                 rad.radius < INFINITY && !isnan(rad.radius);
    if ((bRange || !qexpr_uses_knn(q->pWhere)) && vo->bHnsw && vo->nDims > 0) {
        bGraph = 1;
        rc = knn_graphs(x, aPart, nPart, aQ, bRange ? &rad : NULL, aHeap, &nHeap, err);
    }
    if (aPart != aPartStack) free(aPart);
    if (rc != LP_OK || bGraph) {
        *pnHeap = nHeap;
        return rc;
    }
    size_t nSlot = table_snap_nslot(x->snap);
    for (size_t i = 0; i < nSlot; i++) {
        const MemRow *r = table_snap_slot(x->snap, i);
        if (!r) continue;
        if (x->aTextW && isnan(x->aTextW[i])) continue; /* only the rows the MATCH found */
        Value v = row_get(x->s, r, q->iKnnCol);
        if (v.kind != VAL_VEC || v.u.v.n != n) continue;
        double dist = knn_distance(m, aQ, v.u.v.a, n);
        x->meta.nKnnDist++;
        x->meta.nExamined++;
        QRow row = {x->s, r, 1.0, (uint32_t)i, dist, NULL, &x->scratch, &x->rd, 0, NULL, NULL};
        if (q->pWhere && !where_true(x, &row)) continue;
        knn_push(aHeap, &nHeap, x->knnK, (KnnHit){r, (uint32_t)i, dist, row_id(r)});
    }
    *pnHeap = nHeap;
    return LP_OK;
}

/* A kNN query: the search's rows go through the common ordering (ORDER BY,
** KNN_DIST() ascending by default). */
static int run_knn(Exec *x, LpError *err) {
    const QSelect *q = x->q;
    float *aQ = NULL;
    KnnHit *aHeap = NULL;
    int nHeap = 0;
    int rc = knn_search(x, &aQ, &aHeap, &nHeap, err);
    if (rc == LP_OK) {
        x->meta.nTotalFound = (uint64_t)nHeap;
        if (!q->bCountOnly && (rc = topk_init(x, (uint64_t)nHeap, err)) == LP_OK) {
            for (int i = 0; i < nHeap; i++) {
                double w = x->aTextW ? x->aTextW[aHeap[i].ord] : 1.0;
                QRow row = {x->s, aHeap[i].r, w, aHeap[i].ord, aHeap[i].dist, x->fts, &x->scratch, &x->rd, 0, NULL, NULL};
                eval_keys(x, &row);
                topk_offer(&x->h, aHeap[i].r, aHeap[i].ord, w, aHeap[i].dist, 0, x->aKey);
            }
        }
    }
    free(aQ);
    free(aHeap);
    return rc;
}

/* MATCH's hit, kept for the kNN search that keeps to them. */
static int text_hit(void *ctx, uint32_t doc, double score) {
    Exec *x = ctx;
    if (accept_doc(x, doc)) x->aTextW[doc] = (float)score;
    return LP_OK;
}

/* MATCH() with knn() and no fusion, as Manticore runs it: a kNN search
** among the rows the MATCH finds (and the WHERE passes), nearest first;
** WEIGHT() is their text score. */
static int run_match_knn(Exec *x, Arena *a, LpError *err) {
    FtsQuery *fq = NULL;
    int rc = plan_match(x, a, &fq, err);
    if (rc != LP_OK) return rc;
    x->fts->q = fq;
    int64_t t0 = lp_now_ns();
    size_t nSlot = table_snap_nslot(x->snap);
    if (!(x->aTextW = malloc(sizeof(float) * (nSlot ? nSlot : 1)))) return lp_err_set(err, LP_NOMEM, "out of memory");
    for (size_t i = 0; i < nSlot; i++) x->aTextW[i] = NAN;
    if (x->q->nsMaxTime > 0) fts_query_set_deadline(fq, x->t0 + x->q->nsMaxTime);
    rc = fts_query_all(fq, text_hit, x, &x->meta.fts, err);
    if (rc == LP_OK) rc = run_knn(x, err);
    if (rc == LP_OK) x->meta.zPlan = "fulltext_then_knn";
    x->meta.nsMatch = lp_now_ns() - t0;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Hybrid search                                                        */

/* A row of the fusion. */
typedef struct Fused {
    uint32_t slot;
    const MemRow *r;
    double weight;              /* text score, 0 when the text search did not find it */
    double dist;                /* distance, NAN until known */
    double score;               /* the fused score */
} Fused;

/* A row one of the searches found, at its rank there. */
typedef struct Found {
    uint32_t slot;
    int src;                    /* -1: the text search; j: the j-th kNN search */
    int rank;                   /* from 1 */
    double v;                   /* its text score, or its distance */
} Found;

static int found_by_slot(const void *a, const void *b) {
    const Found *x = a, *y = b;
    if (x->slot != y->slot) return (x->slot > y->slot) - (x->slot < y->slot);
    return (x->src > y->src) - (x->src < y->src);
}

static int knn_by_rank(const void *a, const void *b) {
    const KnnHit *x = a, *y = b;
    return knn_worse(x, y) ? 1 : knn_worse(y, x) ? -1 : 0;
}

/* The j-th kNN search of a hybrid search as a query of its own: the first
** is q's, the others aKnnMore's. */
static QSelect knn_nth(const QSelect *q, int j) {
    QSelect one = *q;
    if (j > 0) {
        const QKnn *m = &q->aKnnMore[j - 1];
        one.iKnnCol = m->iCol;
        one.knnK = m->k;
        one.knnEf = m->ef;
        one.aKnnVec = m->aVec;
        one.iKnnRefId = m->iRefId;
    }
    return one;
}

/* MATCH and each knn() retrieve their window of best rows (all through the
** WHERE); each row found gets w / (rankConstant + rank) from each search
** that found it (Reciprocal Rank Fusion, w the search's weight); then the
** common ordering, HYBRID_SCORE() descending by default. */
static int run_hybrid(Exec *x, Arena *a, LpError *err) {
    const QSelect *q = x->q;
    uint64_t nSlot = table_snap_nslot(x->snap);
    uint64_t w = q->windowSize > 0 ? (uint64_t)q->windowSize : (uint64_t)q->iOffset + (uint64_t)q->iLimit;
    for (int j = 0; q->windowSize <= 0 && j <= q->nKnnMore; j++) {
        int k = j ? q->aKnnMore[j - 1].k : q->knnK;
        if (w < (uint64_t)k) w = (uint64_t)k;
    }
    if (w > nSlot) w = nSlot;
    if (w == 0) w = 1;
    double rc0 = q->rankConstant > 0 ? q->rankConstant : 60;
    int64_t t0 = lp_now_ns();
    int nSearch = 1 + q->nKnnMore, nFound = 0, rc = LP_OK;
    FtsHit *aHit = malloc(sizeof(FtsHit) * (size_t)w);
    Found *aAll = malloc(sizeof(Found) * (size_t)w * (size_t)(nSearch + 1));
    float *aQ = NULL; /* the first kNN search's query vector */
    Fused *aF = NULL;
    if (!aHit || !aAll) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory");
        goto out;
    }
    if (q->bMatch) { /* the text search's window, best first */
        FtsQuery *fq = NULL;
        if ((rc = plan_match(x, a, &fq, err)) != LP_OK) goto out;
        x->fts->q = fq;
        if (!table_snap_sorted(x->snap)) fts_query_set_tie_key(fq, tie_id, x);
        if (q->nsMaxTime > 0) fts_query_set_deadline(fq, x->t0 + q->nsMaxTime);
        int nHit = 0;
        if ((rc = fts_query_topk(fq, (int)w, accept_doc, x, aHit, &nHit, &x->meta.fts, err)) != LP_OK) goto out;
        for (int i = 0; i < nHit; i++) aAll[nFound++] = (Found){aHit[i].doc, -1, i + 1, aHit[i].score};
    }
    x->knnK = (int)w;
    for (int j = 0; j < nSearch; j++) { /* each kNN search's window, nearest first */
        QSelect one = knn_nth(q, j);
        float *aQj = NULL;
        KnnHit *aHeap = NULL;
        int nHeap = 0;
        x->q = &one;
        rc = knn_search(x, &aQj, &aHeap, &nHeap, err);
        x->q = q;
        if (rc == LP_OK) {
            qsort(aHeap, (size_t)nHeap, sizeof(KnnHit), knn_by_rank);
            for (int i = 0; i < nHeap; i++) aAll[nFound++] = (Found){aHeap[i].ord, j, i + 1, aHeap[i].dist};
        }
        if (j == 0) aQ = aQj;
        else free(aQj);
        free(aHeap);
        if (rc != LP_OK) goto out;
    }
    /* fuse: the entries of one row are adjacent once sorted by slot */
    qsort(aAll, (size_t)nFound, sizeof(Found), found_by_slot);
    if (!(aF = malloc(sizeof(Fused) * (size_t)(nFound + 1)))) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory");
        goto out;
    }
    int nF = 0;
    VecMetric m = knn_metric(x);
    size_t nDim = (size_t)x->s->aCol[q->iKnnCol].vec.nDims;
    for (int i = 0; i < nFound;) {
        /* WEIGHT() is 1 without a MATCH, as for any query */
        Fused f = {aAll[i].slot, table_snap_slot(x->snap, aAll[i].slot), q->bMatch ? 0 : 1, NAN, 0};
        int bFirstKnn = 0;
        for (; i < nFound && aAll[i].slot == f.slot; i++) {
            const Found *e = &aAll[i];
            double wSrc = e->src < 0 ? q->wFusionText : e->src == 0 ? q->wFusionKnn : q->aKnnMore[e->src - 1].wFusion;
            f.score += wSrc / (rc0 + e->rank);
            if (e->src < 0) f.weight = e->v;
            else if (isnan(f.dist) || e->v < f.dist) f.dist = e->v; /* the nearest any search measured */
            bFirstKnn |= e->src == 0;
        }
        if (!f.r) continue;
        if (isnan(f.dist) && aQ && !bFirstKnn) {
            /* only the text found it: its distance by the first kNN search */
            Value v = row_get(x->s, f.r, q->iKnnCol);
            if (v.kind == VAL_VEC && v.u.v.n == nDim) {
                f.dist = knn_distance(m, aQ, v.u.v.a, nDim);
                x->meta.nKnnDist++;
            }
        }
        aF[nF++] = f;
    }
    x->meta.zPlan = "hybrid_rrf";
    x->meta.nTotalFound = (uint64_t)nF;
    x->meta.bTotalExact = 1;
    if (q->bCountOnly) goto out;
    if ((rc = topk_init(x, (uint64_t)nF, err)) != LP_OK) goto out;
    for (int i = 0; i < nF; i++) {
        QRow row = {x->s, aF[i].r, aF[i].weight, aF[i].slot, aF[i].dist, x->fts, &x->scratch, &x->rd, aF[i].score, NULL, NULL};
        eval_keys(x, &row);
        topk_offer(&x->h, aF[i].r, aF[i].slot, aF[i].weight, aF[i].dist, aF[i].score, x->aKey);
    }
out:
    x->meta.nsMatch = lp_now_ns() - t0;
    free(aHit);
    free(aAll);
    free(aQ);
    free(aF);
    return rc;
}

int query_select(const QSelect *q, QRowFn xRow, void *ctx, QMeta *pMeta, LpError *err) {
    Exec x;
    memset(&x, 0, sizeof(x));
    x.q = q;
    x.s = table_schema(q->pTable);
    arena_init(&x.scratch, 4096);
    Arena work;
    arena_init(&work, 8192);
    struct QFtsCtx fc = {0};
    int rc = LP_OK;
    int64_t t0 = lp_now_ns();
    x.t0 = t0;
    Value aKeyStack[16];
    x.aKey = q->nOrder <= 16 ? aKeyStack : malloc(sizeof(Value) * (size_t)q->nOrder);
    if (!x.aKey || !(x.snap = table_snapshot(q->pTable))) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory");
        goto done;
    }
    row_reader_init(&x.rd, x.snap);
    x.pWork = &work;
    x.knnK = q->knnK;
    x.xRow = xRow;
    x.pRowCtx = ctx;
    if (q->bMatch) {
        fc.root = q->pMatch;
        fc.an = table_analyzer(q->pTable);
        fc.t = q->pTable;
        fc.a = &work;
        x.fts = &fc;
        rc = !q->bKnn ? run_match(&x, &work, err) : q->bFusion ? run_hybrid(&x, &work, err)
                                                                : run_match_knn(&x, &work, err);
    } else if (q->bKnn) {
        rc = q->bFusion ? run_hybrid(&x, &work, err) : run_knn(&x, err); /* several knn(), or one */
        x.meta.nsMatch = lp_now_ns() - t0;
    } else {
        rc = run_plain(&x, err);
        x.meta.nsMatch = lp_now_ns() - t0;
    }
    int bSorted = rc == 1;
    if (rc == 1) rc = LP_OK;
    if (rc != LP_OK || q->bCountOnly || (q->bStream && !q->bKnn)) goto done; /* (streamed: handed over) */

    int64_t t1 = lp_now_ns();
    if (!bSorted) sort_cands(&x.h);
    int64_t t2 = lp_now_ns();
    x.meta.nsRank = t2 - t1;
    for (size_t i = (size_t)q->iOffset; i < x.h.n && rc == LP_OK; i++) {
        rc = emit(&x, xRow, ctx, &x.h.a[i]);
    }
    x.meta.nsOutput = lp_now_ns() - t2;

done:
    if (fc.q) fts_query_free(fc.q);
    row_reader_free(&x.rd);
    table_snapshot_release(x.snap);
    free(x.h.a);
    free(x.h.aKeyPool);
    free(x.aTextW);
    if (x.aKey != aKeyStack) free(x.aKey);
    arena_free(&x.scratch);
    arena_free(&work);
    x.meta.nsEmbed = q->nsKnnEmbed;
    if (pMeta) *pMeta = x.meta;
    return rc;
}

int query_explain(const QSelect *q, StrBuf *out, LpError *err) {
    Exec x;
    memset(&x, 0, sizeof(x));
    x.q = q;
    Arena work;
    arena_init(&work, 8192);
    int rc = LP_OK;
    if (!(x.snap = table_snapshot(q->pTable))) return lp_err_set(err, LP_NOMEM, "out of memory");
    int bHybrid = q->bKnn && q->bFusion;
    if (bHybrid) {
        strbuf_appendf(out, "hybrid: reciprocal rank fusion (rank_constant=%d) of %d searches' best %s rows\n",
                       q->rankConstant > 0 ? q->rankConstant : 60, q->bMatch + 1 + q->nKnnMore,
                       q->windowSize > 0 ? "window_size" : "max(k, offset+limit)");
        for (int j = 0; j <= q->nKnnMore; j++) {
            QSelect one = knn_nth(q, j);
            strbuf_appendf(out, "knn: column %s, k=%d, its HNSW graphs\n",
                           table_schema(q->pTable)->aCol[one.iKnnCol].zName, one.knnK);
        }
    }
    if (q->bMatch) {
        FtsQuery *fq = NULL;
        rc = plan_match(&x, &work, &fq, err);
        if (rc == LP_OK) {
            const char *zWhy;
            const char *zStrategy = fts_query_strategy(fq, &zWhy);
            int bTopk = bHybrid || (!q->bCountOnly && (q->nOrder == 0 || q->bOrderByWeight));
            strbuf_appendf(out, "fulltext: strategy=%s%s%s%s\n",
                           bTopk ? zStrategy : "bool_fallback",
                           bTopk && zWhy ? " (not maxscore: " : "", bTopk && zWhy ? zWhy : "",
                           bTopk && zWhy ? ")" : "");
            if (!bTopk && !q->bKnn) {
                strbuf_appendz(out, q->bCountOnly ? "  every match is counted (COUNT)\n"
                                                  : "  every match is scored, then sorted by the ORDER BY\n");
            }
            fts_query_plan_text(fq, out);
            fts_query_free(fq);
        }
    }
    if (q->bMatch && q->bKnn && !bHybrid) {
        strbuf_appendf(out, "knn: column %s, k=%d, among the rows the MATCH finds (every match read first)\n",
                       table_schema(q->pTable)->aCol[q->iKnnCol].zName, q->knnK);
    } else if (q->bKnn && !q->bMatch && !bHybrid) {
        /* which path each segment takes is decided as it runs (how many
        ** rows the filter passes there): SHOW META's plan names it */
        const ColumnSchema *c = &table_schema(q->pTable)->aCol[q->iKnnCol];
        const char *zSim = c->vec.sim == VSIM_L2 ? "l2" : c->vec.sim == VSIM_IP ? "ip" : "cosine";
        strbuf_appendf(out, "knn: column %s, k=%d", c->zName, q->knnK);
        if (q->knnEf) strbuf_appendf(out, ", ef=%d", q->knnEf);
        strbuf_appendf(out, ", %s distance: each segment's HNSW graph, or an exact scan of the segment "
                            "when the filter passes few of its rows or the WHERE reads KNN_DIST() other than as "
                            "a radius (SHOW META's plan says which ran)\n", zSim);
    } else if (!q->bMatch && !q->bKnn) {
        strbuf_appendf(out, "%s\n", q->aId ? "id_lookup" : "full_scan");
    }
    if (rc == LP_OK && q->pWhere) {
        ColFilter cf;
        if (q->aId || colscan_compile(&work, table_schema(q->pTable), q->pWhere, &cf) != LP_OK || !cf.n) {
            strbuf_appendz(out, "filter: attribute condition on each row\n");
        } else {
            strbuf_appendf(out, "filter: %s tested on the column arrays of sealed segments%s\n",
                           cf.bExact ? "the whole condition" : "part of the condition",
                           cf.bExact ? "" : ", the rest on each row left");
        }
    }
    if (rc == LP_OK && q->nOrder) {
        int bCols = !q->bMatch && !q->bKnn && !q->aId && order_keys_are_columns(q, table_schema(q->pTable));
        strbuf_appendf(out, "order: %d key(s)%s, top-k heap\n", q->nOrder,
                       bCols ? " read from the column arrays of sealed segments" : "");
    }
    table_snapshot_release(x.snap);
    arena_free(&work);
    if (rc == LP_OK && out->oom) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    return rc;
}
