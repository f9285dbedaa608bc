/* colscan.c — see colscan.h. */
#include "query/colscan.h"

#include <string.h>

/* The numeric constant e stands for (a constant, or a negated one, as
** the evaluator negates it), or 0 when it is not one. */
static int const_number(const QExpr *e, Value *pv) {
    if (e->kind == QE_UNARY && e->op == QOP_NEG) {
        Value x;
        if (!const_number(e->a, &x)) return 0;
        if (x.kind == VAL_INT) *pv = x.u.i == INT64_MIN ? value_float(-(double)x.u.i) : value_int(-x.u.i);
        else *pv = value_float(-x.u.f);
        return 1;
    }
    if (e->kind != QE_CONST || (e->u.v.kind != VAL_INT && e->u.v.kind != VAL_FLOAT)) return 0;
    *pv = e->u.v;
    return 1;
}

/* The numeric attribute e reads (its column number), or -1. */
static int numeric_column(const Schema *s, const QExpr *e) {
    if (e->kind != QE_COLUMN || e->u.col.iCol < 0 || e->u.col.iCol >= s->nCol) return -1;
    return coltype_is_numeric(s->aCol[e->u.col.iCol].type) ? e->u.col.iCol : -1;
}

static QOp flip(QOp op) {
    switch (op) {
    case QOP_LT: return QOP_GT;
    case QOP_LE: return QOP_GE;
    case QOP_GT: return QOP_LT;
    case QOP_GE: return QOP_LE;
    default: return op;
    }
}

static ColPred base_pred(const Schema *s, int iCol) {
    ColPred p;
    memset(&p, 0, sizeof(p));
    p.iCol = iCol;
    p.bFloat = s->aCol[iCol].type == COL_FLOAT;
    return p;
}

/* col op c as a ColPred. */
static ColPred compare_pred(const Schema *s, int iCol, QOp op, Value c) {
    ColPred p = base_pred(s, iCol);
    if (p.bFloat || c.kind == VAL_FLOAT) {
        p.kind = CP_DCMP;
        p.op = op;
        p.d = c.kind == VAL_INT ? (double)c.u.i : c.u.f;
        return p;
    }
    int64_t v = c.u.i;
    p.kind = CP_IRANGE;
    p.iLo = INT64_MIN;
    p.iHi = INT64_MAX;
    switch (op) {
    case QOP_EQ: p.iLo = p.iHi = v; break;
    case QOP_NE: p.iLo = p.iHi = v; p.bNot = 1; break;
    case QOP_LT: if (v == INT64_MIN) p.iLo = 1, p.iHi = 0; else p.iHi = v - 1; break; /* empty: lo > hi */
    case QOP_LE: p.iHi = v; break;
    case QOP_GT: if (v == INT64_MAX) p.iLo = 1, p.iHi = 0; else p.iLo = v + 1; break;
    default: p.iLo = v; break;
    }
    return p;
}

/* One conjunct into at most two ColPreds (*pn of them); 0 when it does
** not compile. */
static int compile_leaf(Arena *a, const Schema *s, const QExpr *e, ColPred *out, int *pn) {
    Value c, c2;
    int iCol;
    *pn = 0;
    switch (e->kind) {
    case QE_BINARY:
        if (e->op < QOP_EQ || e->op > QOP_GE) return 0;
        if ((iCol = numeric_column(s, e->a)) >= 0 && const_number(e->b, &c)) {
            out[(*pn)++] = compare_pred(s, iCol, e->op, c);
            return 1;
        }
        if ((iCol = numeric_column(s, e->b)) >= 0 && const_number(e->a, &c)) {
            out[(*pn)++] = compare_pred(s, iCol, flip(e->op), c);
            return 1;
        }
        return 0;
    case QE_BETWEEN:
        if ((iCol = numeric_column(s, e->a)) < 0 || !const_number(e->b, &c) || !const_number(e->c, &c2)) {
            return 0;
        }
        if (!e->bNot) { /* x >= lo AND x <= hi, each compared as the evaluator does */
            out[(*pn)++] = compare_pred(s, iCol, QOP_GE, c);
            out[(*pn)++] = compare_pred(s, iCol, QOP_LE, c2);
            return 1;
        }
        if (s->aCol[iCol].type == COL_FLOAT || c.kind != VAL_INT || c2.kind != VAL_INT) return 0;
        out[0] = base_pred(s, iCol);
        out[0].kind = CP_IRANGE;
        out[0].iLo = c.u.i;
        out[0].iHi = c2.u.i;
        out[0].bNot = 1;
        *pn = 1;
        return 1;
    case QE_IN: {
        if ((iCol = numeric_column(s, e->a)) < 0 || s->aCol[iCol].type == COL_FLOAT || !e->u.list.bSorted) {
            return 0;
        }
        int n = e->u.list.nVal;
        int64_t *aIn = arena_alloc(a, sizeof(int64_t) * (size_t)(n ? n : 1));
        if (!aIn) return -1;
        for (int i = 0; i < n; i++) {
            if (e->u.list.aVal[i].kind != VAL_INT) return 0;
            aIn[i] = e->u.list.aVal[i].u.i;
        }
        out[0] = base_pred(s, iCol);
        out[0].kind = CP_IN;
        out[0].aIn = aIn;
        out[0].nIn = n;
        out[0].bNot = e->bNot;
        *pn = 1;
        return 1;
    }
    case QE_ISNULL:
        if ((iCol = numeric_column(s, e->a)) < 0) return 0;
        out[0] = base_pred(s, iCol);
        out[0].kind = CP_ISNULL;
        out[0].bNot = e->bNot;
        *pn = 1;
        return 1;
    default:
        return 0;
    }
}

/* Walks the AND tree under e; leaves that compile are appended to f. */
static int walk(Arena *a, const Schema *s, const QExpr *e, ColFilter *f, int *pnCap) {
    if (e->kind == QE_BINARY && e->op == QOP_AND) {
        int rc = walk(a, s, e->a, f, pnCap);
        return rc != LP_OK ? rc : walk(a, s, e->b, f, pnCap);
    }
    ColPred aOut[2];
    int n;
    int ok = compile_leaf(a, s, e, aOut, &n);
    if (ok < 0) return LP_NOMEM;
    if (!ok) {
        f->bExact = 0;
        return LP_OK;
    }
    if (f->n + n > *pnCap) {
        int nNew = *pnCap ? 2 * *pnCap : 8;
        ColPred *aNew = arena_alloc(a, sizeof(ColPred) * (size_t)nNew);
        if (!aNew) return LP_NOMEM;
        if (f->n) memcpy(aNew, f->a, sizeof(ColPred) * (size_t)f->n);
        f->a = aNew;
        *pnCap = nNew;
    }
    memcpy(f->a + f->n, aOut, sizeof(ColPred) * (size_t)n);
    f->n += n;
    return LP_OK;
}

int colscan_compile(Arena *a, const Schema *s, const QExpr *pWhere, ColFilter *f) {
    return colscan_compile_all(a, s, &pWhere, pWhere ? 1 : 0, f);
}

int colscan_compile_all(Arena *a, const Schema *s, const QExpr *const *apExpr, int nExpr, ColFilter *f) {
    memset(f, 0, sizeof(*f));
    f->bExact = 1;
    int nCap = 0, rc = LP_OK;
    for (int i = 0; i < nExpr && rc == LP_OK; i++) rc = walk(a, s, apExpr[i], f, &nCap);
    return rc;
}

/* ------------------------------------------------------------------ */

/* Lists up to this long are compared value by value, without branches. */
#define IN_LINEAR 16

static int in_sorted(const int64_t *a, int n, int64_t v) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] == v) return 1;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid - 1;
    }
    return 0;
}

/* Bits of "cmp(x_j, d) satisfies op" for nj values, with value_cmp's
** cmp = (x > d) - (x < d) (so a NaN compares equal), one loop per
** operator so that each is a plain compare. X(j) reads value j as a
** double. */
#define DCMP_WORD(X)                                                         \
    uint64_t bits = 0;                                                       \
    switch (op) {                                                            \
    case QOP_EQ: for (size_t j = 0; j < nj; j++) bits |= (uint64_t)!((int)(X(j) > d) | (int)(X(j) < d)) << j; break; \
    case QOP_NE: for (size_t j = 0; j < nj; j++) bits |= (uint64_t)((int)(X(j) > d) | (int)(X(j) < d)) << j; break; \
    case QOP_LT: for (size_t j = 0; j < nj; j++) bits |= (uint64_t)(X(j) < d) << j; break;              \
    case QOP_LE: for (size_t j = 0; j < nj; j++) bits |= (uint64_t)!(X(j) > d) << j; break;             \
    case QOP_GT: for (size_t j = 0; j < nj; j++) bits |= (uint64_t)(X(j) > d) << j; break;              \
    default: for (size_t j = 0; j < nj; j++) bits |= (uint64_t)!(X(j) < d) << j; break;                 \
    }                                                                        \
    return bits

static inline double bits_double(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof(x));
    return x;
}

static uint64_t dcmp_word_float(QOp op, double d, const uint64_t *v, size_t nj) {
#define XF(j) bits_double(v[j])
    DCMP_WORD(XF);
#undef XF
}

static uint64_t dcmp_word_int(QOp op, double d, const uint64_t *v, size_t nj) {
#define XI(j) ((double)(int64_t)v[j])
    DCMP_WORD(XI);
#undef XI
}

void colscan_eval(const ColPred *p, const uint64_t *aVal, const uint64_t *aNull, size_t n, uint64_t *aBits) {
    for (size_t w = 0; w * 64 < n; w++) {
        uint64_t m = aBits[w];
        if (!m) continue;
        size_t j0 = w * 64, nj = n - j0 < 64 ? n - j0 : 64;
        uint64_t nulls = aNull[w], bits = 0;
        const uint64_t *v = aVal + j0;
        switch (p->kind) {
        case CP_IRANGE:
            if (p->iLo <= p->iHi) {
                uint64_t lo = (uint64_t)p->iLo, span = (uint64_t)p->iHi - lo;
                for (size_t j = 0; j < nj; j++) bits |= (uint64_t)(v[j] - lo <= span) << j;
            }
            if (p->bNot) bits = ~bits;
            break;
        case CP_DCMP:
            bits = p->bFloat ? dcmp_word_float(p->op, p->d, v, nj) : dcmp_word_int(p->op, p->d, v, nj);
            break;
        case CP_IN:
            if (p->nIn <= IN_LINEAR) { /* branch-free: compare with every value */
                for (size_t j = 0; j < nj; j++) {
                    uint64_t hit = 0;
                    for (int k = 0; k < p->nIn; k++) hit |= v[j] == (uint64_t)p->aIn[k];
                    bits |= hit << j;
                }
            } else {
                for (size_t j = 0; j < nj; j++) bits |= (uint64_t)in_sorted(p->aIn, p->nIn, (int64_t)v[j]) << j;
            }
            if (p->bNot) bits = ~bits;
            break;
        case CP_ISNULL:
            aBits[w] = m & (p->bNot ? ~nulls : nulls);
            continue;
        }
        aBits[w] = m & bits & ~nulls;
    }
}

int colscan_test1(const ColPred *p, uint64_t v, int bNull) {
    uint64_t bits = 1, nulls = bNull ? 1 : 0;
    colscan_eval(p, &v, &nulls, 1, &bits);
    return (int)(bits & 1);
}
