/* expr.c — see expr.h. */
#include "query/expr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "query/jsonpath.h"
#include "text/regexp.h"
#include "text/utf8.h"
#include "util/strbuf.h"

static QExpr *node(Arena *a, QExprKind kind) {
    QExpr *e = arena_zalloc(a, sizeof(QExpr));
    if (e) e->kind = kind;
    return e;
}

QExpr *qexpr_const(Arena *a, Value v) {
    QExpr *e = node(a, QE_CONST);
    if (e) e->u.v = v;
    return e;
}

QExpr *qexpr_json(Arena *a, int iCol, const JsonStep *aStep, int nStep) {
    QExpr *e = node(a, QE_JSON);
    if (e) e->u.json.iCol = iCol, e->u.json.aStep = aStep, e->u.json.nStep = nStep;
    return e;
}

QExpr *qexpr_column(Arena *a, int iCol) {
    QExpr *e = node(a, QE_COLUMN);
    if (e) e->u.col.iCol = iCol;
    return e;
}

QExpr *qexpr_unary(Arena *a, QOp op, const QExpr *x) {
    QExpr *e = node(a, QE_UNARY);
    if (e) e->op = op, e->a = x;
    return e;
}

QExpr *qexpr_binary(Arena *a, QOp op, const QExpr *x, const QExpr *y) {
    QExpr *e = node(a, QE_BINARY);
    if (e) e->op = op, e->a = x, e->b = y;
    return e;
}

static int cmp_value_qsort(const void *x, const void *y) {
    return value_cmp(x, y);
}

QExpr *qexpr_in(Arena *a, const QExpr *x, const Value *aVal, int nVal, int bNot) {
    QExpr *e = node(a, QE_IN);
    Value *aCopy = arena_alloc(a, sizeof(Value) * (size_t)(nVal ? nVal : 1));
    if (!e || !aCopy) return NULL;
    memcpy(aCopy, aVal, sizeof(Value) * (size_t)nVal);
    int bInts = 1;
    for (int i = 0; i < nVal; i++) bInts &= aCopy[i].kind == VAL_INT;
    if (bInts && nVal > 1) qsort(aCopy, (size_t)nVal, sizeof(Value), cmp_value_qsort);
    e->a = x;
    e->bNot = bNot;
    e->u.list.aVal = aCopy;
    e->u.list.nVal = nVal;
    e->u.list.bSorted = bInts;
    return e;
}

QExpr *qexpr_mva(Arena *a, const QExpr *x, QOp op, const QExpr *y, const QExpr *z, const Value *aVal,
                 int nVal, int bAll, int bElemNot, int bNot) {
    QExpr *e;
    if (op == QOP_NONE) {
        if (!(e = qexpr_in(a, x, aVal, nVal, 0))) return NULL;
        e->kind = QE_MVA;
    } else if (!(e = node(a, QE_MVA))) {
        return NULL;
    }
    e->op = op;
    e->a = x;
    e->b = y;
    e->c = z;
    e->bAll = bAll;
    e->bElemNot = bElemNot;
    e->bNot = bNot;
    return e;
}

QExpr *qexpr_between(Arena *a, const QExpr *x, const QExpr *lo, const QExpr *hi, int bNot) {
    QExpr *e = node(a, QE_BETWEEN);
    if (e) e->a = x, e->b = lo, e->c = hi, e->bNot = bNot;
    return e;
}

QExpr *qexpr_isnull(Arena *a, const QExpr *x, int bNot) {
    QExpr *e = node(a, QE_ISNULL);
    if (e) e->a = x, e->bNot = bNot;
    return e;
}

QExpr *qexpr_weight(Arena *a) {
    return node(a, QE_WEIGHT);
}

QExpr *qexpr_knn_dist(Arena *a) {
    return node(a, QE_KNN_DIST);
}

QExpr *qexpr_hybrid(Arena *a) {
    return node(a, QE_HYBRID);
}

QExpr *qexpr_slot(Arena *a, int i) {
    QExpr *e = node(a, QE_SLOT);
    if (e) e->u.col.iCol = i;
    return e;
}

QExpr *qexpr_for(Arena *a, QOp op, const QExpr *arr, const QExpr *cond) {
    QExpr *e = node(a, QE_FOR);
    if (e) e->op = op, e->a = arr, e->b = cond;
    return e;
}

QExpr *qexpr_elem(Arena *a) {
    return node(a, QE_ELEM);
}

QExpr *qexpr_call(Arena *a, QCallFn xCall, const void *pArg, const QExpr *const *aArg, int nArg) {
    QExpr *e = node(a, QE_CALL);
    if (e) {
        e->u.call.xCall = xCall;
        e->u.call.pArg = pArg;
        e->u.call.aArg = aArg;
        e->u.call.nArg = nArg;
    }
    return e;
}

QExpr *qexpr_func(Arena *a, QFunc fn, const QExpr *const *aArg, int nArg, uint64_t salt, int bDouble) {
    QExpr *e = node(a, QE_FUNC);
    if (e) {
        e->u.fn.fn = fn;
        e->u.fn.aArg = aArg;
        e->u.fn.nArg = nArg;
        e->u.fn.salt = salt;
        e->u.fn.bDouble = bDouble;
    }
    return e;
}

int qexpr_uses_match(const QExpr *e) {
    if (!e) return 0;
    if (e->kind == QE_WEIGHT || e->kind == QE_CALL) return 1;
    for (int i = 0; e->kind == QE_FUNC && i < e->u.fn.nArg; i++) {
        if (qexpr_uses_match(e->u.fn.aArg[i])) return 1;
    }
    return qexpr_uses_match(e->a) || qexpr_uses_match(e->b) || qexpr_uses_match(e->c);
}

/* Does e or a subexpression have kind k? */
static int uses_kind(const QExpr *e, QExprKind k) {
    if (!e) return 0;
    if (e->kind == k) return 1;
    for (int i = 0; e->kind == QE_FUNC && i < e->u.fn.nArg; i++) {
        if (uses_kind(e->u.fn.aArg[i], k)) return 1;
    }
    return uses_kind(e->a, k) || uses_kind(e->b, k) || uses_kind(e->c, k);
}

int qexpr_uses_knn(const QExpr *e) {
    return uses_kind(e, QE_KNN_DIST);
}

int qexpr_uses_hybrid(const QExpr *e) {
    return uses_kind(e, QE_HYBRID);
}

/* ------------------------------------------------------------------ */

static int is_num(const Value *v) {
    return v->kind == VAL_INT || v->kind == VAL_FLOAT;
}

static double as_double(const Value *v) {
    return v->kind == VAL_INT ? (double)v->u.i : v->u.f;
}

int value_cmp(const Value *x, const Value *y) {
    if (x->kind == VAL_NULL || y->kind == VAL_NULL) {
        return (x->kind != VAL_NULL) - (y->kind != VAL_NULL);
    }
    if (x->kind == VAL_INT && y->kind == VAL_INT) {
        return (x->u.i > y->u.i) - (x->u.i < y->u.i);
    }
    if (is_num(x) && is_num(y)) {
        double a = as_double(x), b = as_double(y);
        return (a > b) - (a < b);
    }
    if (is_num(x) != is_num(y)) return is_num(x) ? -1 : 1;
    if (x->kind == VAL_STR && y->kind == VAL_STR) {
        return value_strcmp_ci(x->u.s.z, x->u.s.n, y->u.s.z, y->u.s.n);
    }
    if (x->kind != y->kind) return x->kind == VAL_STR ? -1 : x->kind < y->kind ? -1 : 1;
    if (x->kind == VAL_MVA) { /* lexicographic over items, then length */
        uint32_t n = x->u.m.n < y->u.m.n ? x->u.m.n : y->u.m.n;
        for (uint32_t i = 0; i < n; i++) {
            int64_t a = x->u.m.a[i], b = y->u.m.a[i];
            if (a != b) return a < b ? -1 : 1;
        }
        return (x->u.m.n > y->u.m.n) - (x->u.m.n < y->u.m.n);
    }
    /* vectors: lexicographic over components, then length */
    uint32_t n = x->u.v.n < y->u.v.n ? x->u.v.n : y->u.v.n;
    for (uint32_t i = 0; i < n; i++) {
        float a = x->u.v.a[i], b = y->u.v.a[i];
        if (a != b) return a < b ? -1 : 1;
    }
    return (x->u.v.n > y->u.v.n) - (x->u.v.n < y->u.v.n);
}

/* F(n) modulo 2^32 by doubling: F(2k) = F(k) (2 F(k+1) - F(k)),
** F(2k+1) = F(k)^2 + F(k+1)^2, in 32-bit unsigned arithmetic. */
static int64_t fibonacci32(uint64_t n) {
    uint32_t f = 0, g = 1; /* F(k), F(k+1) for the bits of n read so far */
    for (int bit = 63; bit >= 0; bit--) {
        uint32_t f2 = f * (2 * g - f), g2 = f * f + g * g;
        f = f2;
        g = g2;
        if ((n >> bit) & 1) {
            uint32_t t = f + g;
            f = g;
            g = t;
        }
    }
    return (int64_t)f;
}

static Value arith(QOp op, Value x, Value y) {
    if (x.kind == VAL_NULL || y.kind == VAL_NULL || !is_num(&x) || !is_num(&y)) {
        return value_null();
    }
    if (op == QOP_BITAND || op == QOP_BITOR) {
        if (x.kind != VAL_INT || y.kind != VAL_INT) return value_null();
        return value_int(op == QOP_BITAND ? x.u.i & y.u.i : x.u.i | y.u.i);
    }
    if (x.kind == VAL_INT && y.kind == VAL_INT && op != QOP_DIV) {
        int64_t a = x.u.i, b = y.u.i, r;
        switch (op) {
        case QOP_ADD:
            if (!__builtin_add_overflow(a, b, &r)) return value_int(r);
            break;
        case QOP_SUB:
            if (!__builtin_sub_overflow(a, b, &r)) return value_int(r);
            break;
        case QOP_MUL:
            if (!__builtin_mul_overflow(a, b, &r)) return value_int(r);
            break;
        case QOP_MOD:
            if (b == 0) return value_null();
            return value_int(b == -1 ? 0 : a % b);
        case QOP_IDIV:
            if (b == 0) return value_null();
            if (a == INT64_MIN && b == -1) break;
            return value_int(a / b);
        default:
            return value_null();
        }
        /* overflow: fall through to double arithmetic */
    }
    double a = as_double(&x), b = as_double(&y);
    switch (op) {
    case QOP_ADD: return value_float(a + b);
    case QOP_SUB: return value_float(a - b);
    case QOP_MUL: return value_float(a * b);
    case QOP_DIV: return b == 0 ? value_null() : value_float(a / b);
    case QOP_MOD: return b == 0 ? value_null() : value_float(fmod(a, b));
    case QOP_IDIV: return b == 0 ? value_null() : value_float(trunc(a / b));
    default: return value_null();
    }
}

/* 1 true, 0 false, -1 unknown (NULL). */
static int truth(const Value *v) {
    switch (v->kind) {
    case VAL_NULL: return -1;
    case VAL_INT: return v->u.i != 0;
    case VAL_FLOAT: return v->u.f != 0;
    case VAL_STR: return v->u.s.n != 0;
    default: return 1;
    }
}

static Value tri(int t) {
    return t < 0 ? value_null() : value_int(t);
}

static int in_list(const QExpr *e, const Value *x) {
    const Value *a = e->u.list.aVal;
    int n = e->u.list.nVal;
    if (e->u.list.bSorted && x->kind == VAL_INT) {
        int lo = 0, hi = n - 1;
        while (lo <= hi) {
            int mid = (lo + hi) / 2;
            if (a[mid].u.i == x->u.i) return 1;
            if (a[mid].u.i < x->u.i) lo = mid + 1; else hi = mid - 1;
        }
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (a[i].kind != VAL_NULL && value_cmp(x, &a[i]) == 0) return 1;
    }
    return 0;
}

/* Does item i of multi-value m pass e's test (QE_MVA)? -1: unknown (a NULL bound). */
static int mva_item(const QExpr *e, int64_t i, const Value *y, const Value *z) {
    Value x = value_int(i);
    int t;
    if (e->op == QOP_NONE) {
        t = in_list(e, &x);
    } else if (y->kind == VAL_NULL || (e->op == QOP_AND && z->kind == VAL_NULL)) {
        return -1;
    } else if (e->op == QOP_AND) {
        t = value_cmp(&x, y) >= 0 && value_cmp(&x, z) <= 0;
    } else {
        int c = value_cmp(&x, y);
        switch (e->op) {
        case QOP_EQ: t = c == 0; break;
        case QOP_NE: t = c != 0; break;
        case QOP_LT: t = c < 0; break;
        case QOP_LE: t = c <= 0; break;
        case QOP_GT: t = c > 0; break;
        default: t = c >= 0; break;
        }
    }
    return e->bElemNot ? !t : t;
}

/* ANY/ALL(m) op k for an integer k, from the set's order: its least and
** greatest items, or a binary search. */
static int mva_sorted(const QExpr *e, const int64_t *a, uint32_t n, int64_t k) {
    int bAll = e->bAll;
    switch (e->op) {
    case QOP_EQ:
    case QOP_NE: {
        uint32_t lo = 0, hi = n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (a[mid] < k) lo = mid + 1;
            else hi = mid;
        }
        int bFound = lo < n && a[lo] == k, bOnly = a[0] == k && a[n - 1] == k;
        return e->op == QOP_EQ ? (bAll ? bOnly : bFound) : (bAll ? !bFound : !bOnly);
    }
    case QOP_LT: return (bAll ? a[n - 1] : a[0]) < k;
    case QOP_LE: return (bAll ? a[n - 1] : a[0]) <= k;
    case QOP_GT: return (bAll ? a[0] : a[n - 1]) > k;
    default: return (bAll ? a[0] : a[n - 1]) >= k;
    }
}

static Value eval_mva(const QExpr *e, const QRow *row) {
    Value m = qexpr_eval(e->a, row);
    if (m.kind != VAL_MVA) return value_null();
    Value y = value_null(), z = value_null();
    if (e->op != QOP_NONE) y = qexpr_eval(e->b, row);
    if (e->op == QOP_AND) z = qexpr_eval(e->c, row);
    if (m.u.m.n && y.kind == VAL_INT && e->op >= QOP_EQ && e->op <= QOP_GE && !e->bElemNot) {
        int r = mva_sorted(e, m.u.m.a, m.u.m.n, y.u.i); /* the items are ascending */
        return value_int(e->bNot ? !r : r);
    }
    int r = 0;
    if (m.u.m.n) {
        r = e->bAll;
        for (uint32_t k = 0; k < m.u.m.n; k++) {
            int t = mva_item(e, m.u.m.a[k], &y, &z);
            if (t < 0) return value_null();
            if (t != e->bAll) { /* one passing item decides ANY, one failing ALL */
                r = t;
                break;
            }
        }
    }
    return value_int(e->bNot ? !r : r);
}

/* QE_FOR: b for each element of the array a. */
static Value eval_for(const QExpr *e, const QRow *row) {
    Value arr = qexpr_eval(e->a, row);
    JsonIter it;
    if (arr.kind == VAL_STR ? !json_iter_init(&it, arr.u.s.z, arr.u.s.n) : arr.kind != VAL_MVA) return value_null();
    QRow r;
    if (row) r = *row;
    else memset(&r, 0, sizeof(r));
    Value v;
    int64_t k = 0;
    for (;; k++) {
        if (arr.kind == VAL_MVA) {
            if ((uint64_t)k >= arr.u.m.n) break;
            v = value_int(arr.u.m.a[k]);
        } else if (!json_iter_next(&it, row ? row->pScratch : NULL, &v)) {
            break;
        }
        r.pElem = &v;
        int t = qexpr_true(e->b, &r);
        if (e->op == QOP_NONE && t) return value_int(k);
        if (e->op == QOP_OR && t) return value_int(1);
        if (e->op == QOP_AND && !t) return value_int(0);
    }
    return value_int(e->op == QOP_NONE ? -1 : e->op == QOP_OR ? 0 : k > 0);
}

/* A double as a Value, NULL when not finite (a domain or range error). */
static Value finite_or_null(double d) {
    return isfinite(d) ? value_float(d) : value_null();
}

/* A whole double as an integer Value, NULL outside int64's range. */
static Value whole(double d) {
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return value_null();
    return value_int((int64_t)d);
}

static uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A string result of n bytes, made in the row's scratch arena; NULL (and
** *pz NULL) without one or out of memory. */
static Value scratch_str(const QRow *row, size_t n, char **pz) {
    *pz = row && row->pScratch && n < UINT32_MAX ? arena_alloc(row->pScratch, n + 1) : NULL;
    return *pz ? value_str(*pz, (uint32_t)n) : value_null();
}

/* A string's number (leading spaces, then as much as reads as one; 0 when
** nothing does), for BIGINT() and DOUBLE() of strings. */
static double str_number(const Value *x) {
    char buf[64];
    size_t n = x->u.s.n < sizeof(buf) - 1 ? x->u.s.n : sizeof(buf) - 1;
    memcpy(buf, x->u.s.z, n);
    buf[n] = 0;
    double d = strtod(buf, NULL);
    return isfinite(d) ? d : 0;
}

/* Code points of z[0..n) into a (room for n); how many. Bytes that are not
** UTF-8 count one each. */
static size_t code_points(const char *z, size_t n, uint32_t *a) {
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        int len = utf8_decode((const unsigned char *)z + i, n - i, &a[k]);
        if (len == 0) a[k] = 0xFFFD, len = 1;
        i += (size_t)len;
        k++;
    }
    return k;
}

/* LEVENSHTEIN(a, b, {normalize, length_delta}): the textbook table, one
** row at a time, over code points (scratch for the arrays); NULL when the
** table would have more than LEVENSHTEIN_CELLS cells (a fraction of a
** second of work: two strings of 16,384 characters). */
#define LEVENSHTEIN_CELLS ((size_t)1 << 28)

static Value eval_levenshtein(const QExpr *e, const Value *a, const Value *b, const QRow *row) {
    if (!row || !row->pScratch) return value_null();
    uint32_t *x = arena_alloc(row->pScratch, sizeof(uint32_t) * ((size_t)a->u.s.n + 1));
    uint32_t *y = arena_alloc(row->pScratch, sizeof(uint32_t) * ((size_t)b->u.s.n + 1));
    uint32_t *d = arena_alloc(row->pScratch, sizeof(uint32_t) * ((size_t)b->u.s.n + 1));
    if (!x || !y || !d) return value_null();
    size_t nx = code_points(a->u.s.z, a->u.s.n, x), ny = code_points(b->u.s.z, b->u.s.n, y);
    size_t nMax = nx > ny ? nx : ny, dist;
    if (e->u.fn.salt && (nx > ny ? nx - ny : ny - nx) > e->u.fn.salt) {
        dist = nMax;
    } else if (nx && ny > LEVENSHTEIN_CELLS / nx) {
        return value_null(); /* too long to compare in bounded time */
    } else {
        for (size_t j = 0; j <= ny; j++) d[j] = (uint32_t)j;
        for (size_t i = 1; i <= nx; i++) {
            uint32_t diag = d[0];
            d[0] = (uint32_t)i;
            for (size_t j = 1; j <= ny; j++) {
                uint32_t up = d[j];
                uint32_t v = diag + (x[i - 1] != y[j - 1]);
                if (up + 1 < v) v = up + 1;
                if (d[j - 1] + 1 < v) v = d[j - 1] + 1;
                d[j] = v;
                diag = up;
            }
        }
        dist = d[ny];
    }
    if (e->u.fn.bDouble) return value_float(nMax ? (double)dist / (double)nMax : 0.0);
    return value_int((int64_t)dist);
}

/* The string functions (QF_CONCAT and after); x is the first argument, not NULL. */
static Value eval_string_func(const QExpr *e, Value x, const QRow *row) {
    const QExpr *const *a = e->u.fn.aArg;
    int n = e->u.fn.nArg;
    char *z = NULL;
    Value r;
    switch (e->u.fn.fn) {
    case QF_CONCAT: {
        Value aV[64];
        size_t len = 0;
        aV[0] = x;
        for (int i = 0; i < n && i < 64; i++) {
            if (i) aV[i] = qexpr_eval(a[i], row);
            if (aV[i].kind == VAL_NULL) return value_null();
            if (aV[i].kind != VAL_STR) return value_null();
            len += aV[i].u.s.n;
        }
        r = scratch_str(row, len, &z);
        if (!z) return r;
        for (int i = 0; i < n && i < 64; i++) {
            memcpy(z, aV[i].u.s.z, aV[i].u.s.n);
            z += aV[i].u.s.n;
        }
        *z = 0;
        return r;
    }
    case QF_CRC32:
        if (x.kind != VAL_STR) return value_null();
        return value_int((int64_t)crc32(0L, (const Bytef *)x.u.s.z, (uInt)x.u.s.n));
    case QF_UPPER:
    case QF_LOWER: {
        if (x.kind != VAL_STR) return value_null();
        r = scratch_str(row, 4 * (size_t)x.u.s.n, &z);
        if (!z) return r;
        r.u.s.n = (uint32_t)utf8_map_case(x.u.s.z, x.u.s.n, e->u.fn.fn == QF_UPPER, z);
        z[r.u.s.n] = 0;
        return r;
    }
    case QF_SUBSTRING_INDEX: {
        Value dv = qexpr_eval(a[1], row), cv = qexpr_eval(a[2], row);
        if (x.kind != VAL_STR || dv.kind != VAL_STR || cv.kind != VAL_INT) return value_null();
        const char *s = x.u.s.z, *dl = dv.u.s.z;
        size_t ns = x.u.s.n, nd = dv.u.s.n, lo = 0, hi = ns;
        int64_t k = cv.u.i;
        if (k == 0 || nd == 0) {
            hi = 0;
        } else if (k > 0) { /* before the k-th delimiter from the start */
            for (size_t i = 0; i + nd <= ns; i++) {
                if (memcmp(s + i, dl, nd) == 0 && --k == 0) {
                    hi = i;
                    break;
                }
            }
        } else { /* after the k-th from the end */
            for (size_t i = ns >= nd ? ns - nd + 1 : 0; i-- > 0;) {
                if (memcmp(s + i, dl, nd) == 0 && ++k == 0) {
                    lo = i + nd;
                    break;
                }
            }
        }
        r = scratch_str(row, hi - lo, &z);
        if (!z) return r;
        memcpy(z, s + lo, hi - lo);
        z[hi - lo] = 0;
        return r;
    }
    case QF_TO_STRING: {
        if (x.kind == VAL_STR) return x;
        StrBuf sb = {0};
        value_format(&x, e->u.fn.bDouble, &sb);
        r = sb.oom ? value_null() : scratch_str(row, sb.n, &z);
        if (z && !sb.oom) {
            memcpy(z, sb.z ? sb.z : "", sb.n);
            z[sb.n] = 0;
        }
        strbuf_free(&sb);
        return r;
    }
    case QF_LEVENSHTEIN: {
        Value y = qexpr_eval(a[1], row);
        if (x.kind != VAL_STR || y.kind != VAL_STR) return value_null();
        return eval_levenshtein(e, &x, &y, row);
    }
    default: return value_null();
    }
}

/* The great-circle distance in metres between two points (radians) on a
** sphere of the Earth's mean radius: the haversine formula. */
static double geo_haversine(double la1, double lo1, double la2, double lo2) {
    double h = pow(sin((la2 - la1) / 2), 2) + cos(la1) * cos(la2) * pow(sin((lo2 - lo1) / 2), 2);
    return 2 * 6371008.8 * asin(h < 1 ? sqrt(h) : 1);
}

/* The distance in metres between two points (radians) on the WGS84
** ellipsoid, by Lambert's formula (reduced latitudes, the central angle,
** then the flattening's correction): within metres of the geodesic over
** thousands of kilometres, and exact to the millimetre near by. */
static double geo_ellipsoid(double la1, double lo1, double la2, double lo2) {
    const double a = 6378137.0, f = 1 / 298.257223563;
    double b1 = atan((1 - f) * tan(la1)), b2 = atan((1 - f) * tan(la2));
    double h = pow(sin((b2 - b1) / 2), 2) + cos(b1) * cos(b2) * pow(sin((lo2 - lo1) / 2), 2);
    double sig = 2 * asin(h < 1 ? sqrt(h) : 1);
    if (sig < 1e-12) return 0;
    double cs = cos(sig / 2), ss = sin(sig / 2);
    double P = (b1 + b2) / 2, Q = (b2 - b1) / 2, xn = pow(sin(P) * cos(Q), 2);
    /* nearly antipodal, off the meridians and the equator: the formula
    ** does not hold there; the sphere's distance is within 0.5% */
    if (cs < 1e-6 && xn > 1e-12) return geo_haversine(la1, lo1, la2, lo2);
    double X = xn == 0 || cs == 0 ? 0 : (sig - sin(sig)) * xn / (cs * cs);
    double Y = (sig + sin(sig)) * pow(cos(P) * sin(Q), 2) / (ss * ss);
    return a * (sig - f / 2 * (X + Y));
}

static Value eval_geodist(const QExpr *e, const QRow *row) {
    double c[4];
    for (int i = 0; i < 4; i++) {
        Value v = qexpr_eval(e->u.fn.aArg[i], row);
        if (!is_num(&v)) return value_null();
        c[i] = as_double(&v) * (e->u.fn.salt & 1 ? M_PI / 180 : 1);
        if (!isfinite(c[i])) return value_null();
    }
    double m = e->u.fn.salt & 2 ? geo_haversine(c[0], c[1], c[2], c[3]) : geo_ellipsoid(c[0], c[1], c[2], c[3]);
    return value_float(m * e->u.fn.aArg[4]->u.v.u.f);
}

/* Is (x, y) inside polygon a[0..n) (x y pairs, closed implicitly)? The
** even-odd rule: a ray from the point crosses its edges an odd number of
** times. */
static int poly_contains(const double *a, int n, double x, double y) {
    int bIn = 0;
    for (int i = 0, j = n - 2; i < n; j = i, i += 2) {
        double xi = a[i], yi = a[i + 1], xj = a[j], yj = a[j + 1];
        if ((yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi) bIn = !bIn;
    }
    return bIn;
}

/* x's bucket of HISTOGRAM(x, interval, offset). */
static Value eval_histogram(Value x, const Value *iv, const Value *off) {
    if (x.kind == VAL_INT && iv->kind == VAL_INT && off->kind == VAL_INT) {
        int64_t d;
        if (!__builtin_sub_overflow(x.u.i, off->u.i, &d)) {
            int64_t q = d / iv->u.i - (d % iv->u.i < 0); /* floor */
            int64_t k;
            if (!__builtin_mul_overflow(q, iv->u.i, &k) && !__builtin_add_overflow(k, off->u.i, &k)) return value_int(k);
        }
    }
    double i = as_double(iv), o = as_double(off);
    return finite_or_null(o + i * floor((as_double(&x) - o) / i));
}

/* The start of unix time t's DATE_HISTOGRAM bucket (see QF_DATE_HISTOGRAM). */
static Value eval_date_histogram(int64_t t, uint64_t how) {
    int kind = (int)(how & 7);
    if (kind == 0 || kind == 1) { /* fixed, or weeks from a Monday (1970-01-05) */
        int64_t step = kind ? 7 * 86400 : (int64_t)(how >> 3), base = kind ? 4 * 86400 : 0, d = t - base;
        return value_int(base + (d / step - (d % step < 0)) * step);
    }
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm)) return value_null();
    int64_t y = tm.tm_year + 1900, m = tm.tm_mon; /* 0..11 */
    if (kind == 3) m -= m % 3;
    if (kind == 4) m = 0;
    return value_int(value_days_from_civil(y, (unsigned)m + 1, 1) * 86400);
}

static Value eval_func(const QExpr *e, const QRow *row) {
    const QExpr *const *a = e->u.fn.aArg;
    int n = e->u.fn.nArg;
    QFunc fn = e->u.fn.fn;
    if (fn == QF_IF) {
        Value c = qexpr_eval(a[0], row);
        Value v = qexpr_eval(a[truth(&c) == 1 ? 1 : 2], row);
        return e->u.fn.bDouble && v.kind == VAL_INT ? value_float((double)v.u.i) : v;
    }
    if (fn == QF_RAND) {
        /* the same row gets the same number within a statement (sorting
        ** reads it more than once), another row another */
        uint64_t id = row && row->r ? (uint64_t)row_id(row->r) : row ? row->ord : 0;
        return value_float((double)(mix64(e->u.fn.salt ^ mix64(id)) >> 11) * 0x1.0p-53);
    }
    if (fn == QF_GEODIST) return eval_geodist(e, row);
    if (fn == QF_CONTAINS) {
        Value x = qexpr_eval(a[0], row), y = qexpr_eval(a[1], row);
        if (!is_num(&x) || !is_num(&y)) return value_null();
        return value_int(poly_contains(e->u.fn.aXY, e->u.fn.nXY, as_double(&x), as_double(&y)));
    }
    Value x = qexpr_eval(a[0], row);
    if (x.kind == VAL_NULL) return x;
    if (fn == QF_REGEX) {
        const Value *pat = &a[1]->u.v; /* a constant string: the binder checked */
        if (x.kind != VAL_STR || pat->kind != VAL_STR) return value_null();
        return value_int(regexp_search_match(pat->u.s.z, pat->u.s.n, x.u.s.z, x.u.s.n));
    }
    if (fn == QF_MIN || fn == QF_MAX) {
        for (int i = 1; i < n; i++) {
            Value y = qexpr_eval(a[i], row);
            if (y.kind == VAL_NULL) return y;
            int c = value_cmp(&y, &x);
            if (fn == QF_MIN ? c < 0 : c > 0) x = y;
        }
        return e->u.fn.bDouble && x.kind == VAL_INT ? value_float((double)x.u.i) : x;
    }
    if (fn == QF_HISTOGRAM) return is_num(&x) ? eval_histogram(x, &a[1]->u.v, &a[2]->u.v) : value_null();
    if (fn == QF_RANGE) {
        if (!is_num(&x)) return value_null();
        double d = as_double(&x);
        for (int i = 0; i < e->u.fn.nXY; i += 2) {
            if (d >= e->u.fn.aXY[i] && d < e->u.fn.aXY[i + 1]) return value_int(i / 2);
        }
        return value_int(-1);
    }
    if (fn == QF_DATE_HISTOGRAM) {
        if (!is_num(&x) || !(as_double(&x) > -1e15 && as_double(&x) < 1e15)) return value_null();
        return eval_date_histogram(x.kind == VAL_INT ? x.u.i : (int64_t)floor(x.u.f), e->u.fn.salt);
    }
    if (fn == QF_LENGTH) return value_int(x.kind == VAL_MVA ? x.u.m.n : x.kind == VAL_STR ? x.u.s.n : 1);
    if (fn == QF_MVA_MIN || fn == QF_MVA_MAX) {
        if (x.kind != VAL_MVA || x.u.m.n == 0) return value_null();
        return value_int(x.u.m.a[fn == QF_MVA_MIN ? 0 : x.u.m.n - 1]);
    }
    if (fn >= QF_CONCAT) return eval_string_func(e, x, row);
    if (x.kind == VAL_STR && (fn == QF_BIGINT || fn == QF_DOUBLE)) {
        double v = str_number(&x);
        return fn == QF_DOUBLE ? value_float(v) : whole(trunc(v));
    }
    if (fn == QF_INTERVAL) {
        int64_t k = 0;
        for (int i = 1; i < n; i++) {
            Value p = qexpr_eval(a[i], row);
            if (p.kind == VAL_NULL || value_cmp(&x, &p) < 0) break;
            k = i;
        }
        return value_int(k);
    }
    if (!is_num(&x)) return value_null();
    double d = as_double(&x);
    switch (fn) {
    case QF_ABS:
        if (x.kind == VAL_INT) return x.u.i == INT64_MIN ? value_float(-d) : value_int(x.u.i < 0 ? -x.u.i : x.u.i);
        return value_float(fabs(d));
    case QF_CEIL: return x.kind == VAL_INT ? x : whole(ceil(d));
    case QF_FLOOR: return x.kind == VAL_INT ? x : whole(floor(d));
    case QF_BIGINT: return x.kind == VAL_INT ? x : whole(trunc(d));
    case QF_DOUBLE: return value_float(d);
    case QF_SQRT: return d < 0 ? value_null() : value_float(sqrt(d));
    case QF_LN: return d <= 0 ? value_null() : value_float(log(d));
    case QF_LOG2: return d <= 0 ? value_null() : value_float(log2(d));
    case QF_LOG10: return d <= 0 ? value_null() : value_float(log10(d));
    case QF_EXP: return finite_or_null(exp(d));
    case QF_POW: {
        Value y = qexpr_eval(a[1], row);
        if (!is_num(&y)) return value_null();
        return finite_or_null(pow(d, as_double(&y)));
    }
    case QF_SIN: return finite_or_null(sin(d));
    case QF_COS: return finite_or_null(cos(d));
    case QF_ATAN2: {
        Value y = qexpr_eval(a[1], row);
        if (!is_num(&y)) return value_null();
        return finite_or_null(atan2(d, as_double(&y)));
    }
    case QF_FIBONACCI:
    case QF_UINT:
    case QF_SINT:
    case QF_BITDOT: {
        if (x.kind != VAL_INT && !(d > -9.2e18 && d < 9.2e18)) return value_null();
        int64_t v = x.kind == VAL_INT ? x.u.i : (int64_t)trunc(d);
        if (fn == QF_UINT) return value_int((int64_t)(uint32_t)v);
        if (fn == QF_SINT) return value_int((int64_t)(int32_t)(uint32_t)v);
        if (fn == QF_FIBONACCI) return value_int(v < 0 ? 0 : fibonacci32((uint64_t)v));
        /* BITDOT: the weights of the set bits, an integer sum unless one is not */
        int64_t iSum = 0;
        double fSum = 0;
        for (int i = 1; i < n && i <= 64; i++) {
            if (!(((uint64_t)v >> (i - 1)) & 1)) continue;
            Value w = qexpr_eval(a[i], row);
            if (!is_num(&w)) return value_null();
            if (e->u.fn.bDouble) {
                fSum += as_double(&w);
            } else if (__builtin_add_overflow(iSum, w.u.i, &iSum)) {
                return value_null();
            }
        }
        return e->u.fn.bDouble ? finite_or_null(fSum) : value_int(iSum);
    }
    default: break;
    }
    /* the parts of a date: unix seconds, UTC */
    if (!(d >= -62135596800.0 && d < 253402300800.0)) return value_null(); /* years 1..9999 */
    time_t t = (time_t)floor(d);
    struct tm tm;
    if (!gmtime_r(&t, &tm)) return value_null();
    int64_t y = tm.tm_year + 1900, m = tm.tm_mon + 1;
    switch (fn) {
    case QF_YEAR: return value_int(y);
    case QF_MONTH: return value_int(m);
    case QF_DAY: return value_int(tm.tm_mday);
    case QF_HOUR: return value_int(tm.tm_hour);
    case QF_MINUTE: return value_int(tm.tm_min);
    case QF_SECOND: return value_int(tm.tm_sec);
    case QF_YEARMONTH: return value_int(y * 100 + m);
    case QF_YEARMONTHDAY: return value_int(y * 10000 + m * 100 + tm.tm_mday);
    default: return value_null();
    }
}

Value qexpr_eval(const QExpr *e, const QRow *row) {
    switch (e->kind) {
    case QE_CONST:
        return e->u.v;
    case QE_COLUMN:
        if (!row || !row->r) return value_null();
        return row->rd ? row_read(row->rd, row->s, row->r, e->u.col.iCol) : row_get(row->s, row->r, e->u.col.iCol);
    case QE_WEIGHT:
        return value_float(row ? row->weight : 1.0);
    case QE_KNN_DIST:
        /* NaN: a hybrid search's row without a vector */
        return row && !isnan(row->dist) ? value_float(row->dist) : value_null();
    case QE_HYBRID:
        return value_float(row ? row->hybrid : 0);
    case QE_SLOT:
        return row && row->aSlot ? row->aSlot[e->u.col.iCol] : value_null();
    case QE_JSON: {
        if (!row || !row->r) return value_null();
        int c = e->u.json.iCol;
        Value doc = row->rd ? row_read(row->rd, row->s, row->r, c) : row_get(row->s, row->r, c);
        if (doc.kind != VAL_STR) return value_null();
        return json_path_value(doc.u.s.z, doc.u.s.n, e->u.json.aStep, e->u.json.nStep, row->pScratch);
    }
    case QE_CALL:
        return e->u.call.xCall(e, row);
    case QE_FUNC:
        return eval_func(e, row);
    case QE_UNARY: {
        Value x = qexpr_eval(e->a, row);
        if (e->op == QOP_NOT) {
            int t = truth(&x);
            return tri(t < 0 ? -1 : !t);
        }
        if (x.kind == VAL_INT) {
            if (x.u.i == INT64_MIN) return value_float(-(double)x.u.i);
            return value_int(-x.u.i);
        }
        if (x.kind == VAL_FLOAT) return value_float(-x.u.f);
        return value_null();
    }
    case QE_BINARY: {
        if (e->op == QOP_AND || e->op == QOP_OR) {
            Value x = qexpr_eval(e->a, row);
            int tx = truth(&x);
            if (e->op == QOP_AND && tx == 0) return value_int(0);
            if (e->op == QOP_OR && tx == 1) return value_int(1);
            Value y = qexpr_eval(e->b, row);
            int ty = truth(&y);
            if (e->op == QOP_AND) return tri(ty == 0 ? 0 : (tx < 0 || ty < 0) ? -1 : 1);
            return tri(ty == 1 ? 1 : (tx < 0 || ty < 0) ? -1 : 0);
        }
        Value x = qexpr_eval(e->a, row);
        Value y = qexpr_eval(e->b, row);
        if (e->op >= QOP_EQ && e->op <= QOP_GE) {
            if (x.kind == VAL_NULL || y.kind == VAL_NULL) return value_null();
            int c = value_cmp(&x, &y);
            switch (e->op) {
            case QOP_EQ: return value_int(c == 0);
            case QOP_NE: return value_int(c != 0);
            case QOP_LT: return value_int(c < 0);
            case QOP_LE: return value_int(c <= 0);
            case QOP_GT: return value_int(c > 0);
            default: return value_int(c >= 0);
            }
        }
        return arith(e->op, x, y);
    }
    case QE_IN: {
        Value x = qexpr_eval(e->a, row);
        if (x.kind == VAL_NULL) return value_null();
        if (in_list(e, &x)) return value_int(!e->bNot);
        /* x NOT IN (…, NULL) is unknown, as is x IN (…, NULL) without a match */
        for (int i = 0; i < e->u.list.nVal; i++) {
            if (e->u.list.aVal[i].kind == VAL_NULL) return value_null();
        }
        return value_int(e->bNot);
    }
    case QE_BETWEEN: {
        Value x = qexpr_eval(e->a, row);
        Value lo = qexpr_eval(e->b, row);
        Value hi = qexpr_eval(e->c, row);
        if (x.kind == VAL_NULL || lo.kind == VAL_NULL || hi.kind == VAL_NULL) return value_null();
        int in = value_cmp(&x, &lo) >= 0 && value_cmp(&x, &hi) <= 0;
        return value_int(e->bNot ? !in : in);
    }
    case QE_ISNULL: {
        Value x = qexpr_eval(e->a, row);
        int isnull = x.kind == VAL_NULL;
        return value_int(e->bNot ? !isnull : isnull);
    }
    case QE_MVA:
        return eval_mva(e, row);
    case QE_FOR:
        return eval_for(e, row);
    case QE_ELEM:
        return row && row->pElem ? *row->pElem : value_null();
    }
    return value_null();
}

int qexpr_true(const QExpr *e, const QRow *row) {
    Value v = qexpr_eval(e, row);
    return truth(&v) == 1;
}
