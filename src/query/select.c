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
*/
#include "query/select.h"

#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

typedef struct Cand {
    const MemRow *row;
    Value *aKey;                /* nOrder sort keys (NULL without ORDER BY) */
} Cand;

typedef struct TopK {
    const QSelect *q;
    Cand *a;                    /* heap, worst at a[0] */
    size_t n, cap;              /* cap = k */
    Value *aKeyPool;            /* cap * nOrder keys, slot i owned by a[?] */
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

/* Offers row r with keys aKey (scratch, copied when kept). */
static void topk_offer(TopK *h, const MemRow *r, const Value *aKey) {
    int nOrder = h->q->nOrder;
    Cand c = {r, (Value *)aKey};
    if (h->n < h->cap) {
        Cand *slot = &h->a[h->n];
        slot->row = r;
        slot->aKey = h->aKeyPool + h->n * (size_t)nOrder;
        if (nOrder) memcpy(slot->aKey, aKey, sizeof(Value) * (size_t)nOrder);
        h->n++;
        sift_up(h, h->n - 1);
        return;
    }
    if (h->cap == 0 || cand_cmp(h->q, &c, &h->a[0]) >= 0) return;
    h->a[0].row = r;
    if (nOrder) memcpy(h->a[0].aKey, aKey, sizeof(Value) * (size_t)nOrder);
    sift_down(h, 0);
}

/* Sorts the kept candidates best-first, in place: heapsort finishing the
** heap that is already there (qsort would need the query as context). */
static void sort_cands(TopK *h) {
    /* The heap's root is the worst: repeatedly move it to the end. */
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

int query_select(const QSelect *q, QRowFn xRow, void *ctx, QMeta *pMeta, LpError *err) {
    QMeta meta = {0};
    int rc = LP_OK;
    int64_t t0 = lp_now_ns();
    const Schema *s = table_schema(q->pTable);
    TableSnap *snap = table_snapshot(q->pTable);
    if (!snap) return lp_err_set(err, LP_NOMEM, "out of memory");

    TopK h = {0};
    h.q = q;
    Value aKeyStack[16];
    Value *aKey = aKeyStack;
    if (!q->bCountOnly) {
        uint64_t k = (uint64_t)q->iOffset + (uint64_t)q->iLimit;
        uint64_t nRows = q->aId ? (uint64_t)q->nId : table_snap_count(snap);
        if (k > nRows) k = nRows; /* never more than can match */
        h.cap = (size_t)k;
        h.a = malloc(sizeof(Cand) * (h.cap ? h.cap : 1));
        h.aKeyPool = malloc(sizeof(Value) * (h.cap ? h.cap : 1) * (size_t)(q->nOrder ? q->nOrder : 1));
        if (q->nOrder > 16) aKey = malloc(sizeof(Value) * (size_t)q->nOrder);
        if (!h.a || !h.aKeyPool || !aKey) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory keeping %llu result rows",
                            (unsigned long long)k);
            goto done;
        }
    }

    if (q->aId) {
        meta.zPlan = "id_lookup";
        for (int i = 0; i < q->nId; i++) {
            /* Candidate ids may repeat (id IN (1,1)): a row counts once. */
            int dup = 0;
            for (int j = 0; j < i && !dup; j++) dup = q->aId[j] == q->aId[i];
            if (dup) continue;
            const MemRow *r = table_snap_get(snap, q->aId[i]);
            if (!r) continue;
            meta.nExamined++;
            if (q->pWhere && !qexpr_true(q->pWhere, s, r)) continue;
            meta.nTotalFound++;
            if (q->bCountOnly) continue;
            for (int k = 0; k < q->nOrder; k++) aKey[k] = qexpr_eval(q->aOrder[k].pExpr, s, r);
            topk_offer(&h, r, aKey);
        }
    } else {
        meta.zPlan = "full_scan";
        size_t nSlot = table_snap_nslot(snap);
        /* In id order with no ORDER BY, the first k matches are the answer. */
        int bEarly = q->nOrder == 0 && table_snap_sorted(snap);
        for (size_t i = 0; i < nSlot; i++) {
            const MemRow *r = table_snap_slot(snap, i);
            if (!r) continue;
            meta.nExamined++;
            if (q->pWhere && !qexpr_true(q->pWhere, s, r)) continue;
            meta.nTotalFound++;
            if (q->bCountOnly || (bEarly && h.n == h.cap)) continue;
            for (int k = 0; k < q->nOrder; k++) aKey[k] = qexpr_eval(q->aOrder[k].pExpr, s, r);
            topk_offer(&h, r, aKey);
        }
    }
    int64_t t1 = lp_now_ns();
    meta.nsMatch = t1 - t0;

    if (!q->bCountOnly) {
        sort_cands(&h);
        Value aOutStack[32];
        Value *aOut = q->nOut <= 32 ? aOutStack : malloc(sizeof(Value) * (size_t)q->nOut);
        if (!aOut) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory");
            goto done;
        }
        for (size_t i = (size_t)q->iOffset; i < h.n && rc == LP_OK; i++) {
            for (int c = 0; c < q->nOut; c++) aOut[c] = qexpr_eval(q->aOut[c], s, h.a[i].row);
            rc = xRow(ctx, aOut, q->nOut);
            meta.nReturned++;
        }
        if (aOut != aOutStack) free(aOut);
    }
    meta.nsOutput = lp_now_ns() - t1;

done:
    table_snapshot_release(snap);
    free(h.a);
    free(h.aKeyPool);
    if (aKey != aKeyStack) free(aKey);
    if (pMeta) *pMeta = meta;
    return rc;
}
