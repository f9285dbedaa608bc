/*
** rankexpr.c — see rankexpr.h.
**
** A recursive-descent parser into a small tree, evaluated by a recursive
** walk per document. The grammar, loosest first:
**   or    := and { OR and }
**   and   := not { AND not }
**   not   := NOT not | cmp
**   cmp   := add [ ( < | <= | > | >= | = | == | != | <> ) add ]
**   add   := mul { ( + | - ) mul }
**   mul   := unary { ( * | / ) unary }
**   unary := - unary | prim
**   prim  := number | name | name '(' [ or { ',' or } ] ')' | '(' or ')'
*/
#include "fts/rankexpr.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum RxKind {
    RX_NUM, RX_FIELD, RX_DOC, RX_NEG, RX_NOT, RX_BIN, RX_FUNC1, RX_FUNC2, RX_IF, RX_SUM, RX_TOP, RX_BM25
} RxKind;

/* Field factors (RX_FIELD) and document factors (RX_DOC). */
enum {
    F_LCS, F_USER_WEIGHT, F_HIT_COUNT, F_WORD_COUNT, F_MIN_HIT_POS, F_EXACT_HIT, F_SUM_IDF, F_MIN_IDF,
    F_MAX_IDF, F_TF_IDF, F_LCCS, F_WLCCS, F_MIN_BEST_SPAN_POS, F_EXACT_ORDER, F_ATC, F_MIN_GAPS,
    F_MAX_WINDOW_HITS /* max_window_hits(n): a function, not in azField */
};
enum { D_BM25, D_BM25F, D_MAX_LCS, D_FIELD_MASK, D_DOC_WORD_COUNT, D_QUERY_WORD_COUNT };

static const char *const azField[] = {
    "lcs",     "user_weight", "hit_count", "word_count", "min_hit_pos",       "exact_hit", "sum_idf",
    "min_idf", "max_idf",     "tf_idf",    "lccs",       "wlccs",             "min_best_span_pos",
    "exact_order", "atc", "min_gaps"};
static const char *const azDoc[] = {"bm25",           "bm25f",           "max_lcs", "field_mask",
                                    "doc_word_count", "query_word_count"};
static const char *const azFunc1[] = {"abs", "ln", "log2", "log10", "sqrt", "exp", "floor", "ceil"};
static const char *const azFunc2[] = {"min", "max", "pow"};

typedef struct RxNode RxNode;
struct RxNode {
    RxKind kind;
    int op;           /* RX_BIN: OP_*; RX_FUNC1/2: index in azFunc1/2; RX_FIELD: F_*; RX_DOC: D_*;
                      ** RX_BM25: 1 for bm25f, 0 for bm25a */
    double v;         /* RX_NUM; RX_BM25: k1 */
    double bParam;    /* RX_BM25: b */
    const double *aW; /* RX_BM25: the field weights ... */
    int nW;           /* ... of the fields known at compile time (0: none) */
    RxNode *a, *b, *c;
};

/* RX_BIN operators. */
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, OP_AND, OP_OR };

struct FtsRankExpr {
    RxNode *root;
    int bOcc;         /* reads atc, min_gaps or max_window_hits(n) */
    uint32_t nWindow; /* max_window_hits(n)'s n, or 0 */
};

typedef struct RxParser {
    Arena *a;
    const char *z;
    int n, i;
    int depth;
    int bAgg;         /* inside sum()/top(): field factors allowed */
    const char *const *azField; /* the table's full-text fields (bm25f's weights) */
    int nField;
    int bOcc;         /* atc, min_gaps or max_window_hits(n) was read */
    uint32_t nWindow; /* max_window_hits(n)'s n so far, or 0 */
    LpError *err;
} RxParser;

static int rx_error(RxParser *p, int pos, const char *zFmt, ...) __attribute__((format(printf, 3, 4)));
static int rx_error(RxParser *p, int pos, const char *zFmt, ...) {
    char zWhat[384]; /* the unknown-factor message lists every factor */
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(zWhat, sizeof(zWhat), zFmt, ap);
    va_end(ap);
    if (pos >= p->n) {
        return lp_err_setpos(p->err, LP_BADINPUT, pos, "ranker expression: unexpected end at offset %d: %s",
                             pos, zWhat);
    }
    int nNear = p->n - pos > 24 ? 24 : p->n - pos;
    return lp_err_setpos(p->err, LP_BADINPUT, pos, "ranker expression: near '%.*s' at offset %d: %s",
                         nNear, p->z + pos, pos, zWhat);
}

static RxNode *rx_node(RxParser *p, RxKind kind) {
    RxNode *x = arena_zalloc(p->a, sizeof(RxNode));
    if (!x) lp_err_set(p->err, LP_NOMEM, "out of memory compiling a ranker expression");
    else x->kind = kind;
    return x;
}

static void rx_space(RxParser *p) {
    while (p->i < p->n && (p->z[p->i] == ' ' || (p->z[p->i] >= '\t' && p->z[p->i] <= '\r'))) p->i++;
}

static int is_name_char(char c, int bFirst) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!bFirst && c >= '0' && c <= '9');
}

/* The name at the cursor, if any: its length (0: none). */
static int rx_name(RxParser *p) {
    int k = p->i;
    if (k >= p->n || !is_name_char(p->z[k], 1)) return 0;
    while (k < p->n && is_name_char(p->z[k], 0)) k++;
    return k - p->i;
}

/* Is the name at the cursor the keyword zKw (standing alone)? */
static int rx_keyword(RxParser *p, const char *zKw) {
    int n = rx_name(p);
    return n == (int)strlen(zKw) && strncasecmp(p->z + p->i, zKw, (size_t)n) == 0;
}

static int lookup(const char *const *az, int nAz, const char *z, int n) {
    for (int k = 0; k < nAz; k++) {
        if ((int)strlen(az[k]) == n && strncasecmp(az[k], z, (size_t)n) == 0) return k;
    }
    return -1;
}

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static RxNode *rx_or(RxParser *p);

static RxNode *rx_bin(RxParser *p, int op, RxNode *l, RxNode *r) {
    RxNode *x = l && r ? rx_node(p, RX_BIN) : NULL;
    if (!x) return NULL;
    x->op = op;
    x->a = l;
    x->b = r;
    return x;
}

/* The arguments of a call at the cursor (on the '('): exactly nWant. */
static int rx_args(RxParser *p, const char *zFn, int nWant, RxNode **aArg) {
    int iOpen = p->i++;
    int n = 0;
    rx_space(p);
    if (p->i < p->n && p->z[p->i] == ')') {
        p->i++;
    } else {
        for (;;) {
            RxNode *x = rx_or(p);
            if (!x) return p->err->code;
            if (n < nWant) aArg[n] = x;
            n++;
            rx_space(p);
            if (p->i < p->n && p->z[p->i] == ',') {
                p->i++;
                continue;
            }
            if (p->i < p->n && p->z[p->i] == ')') {
                p->i++;
                break;
            }
            return rx_error(p, p->i, "expected ',' or ')' in the arguments of %s()", zFn);
        }
    }
    if (n != nWant) {
        return rx_error(p, iOpen, "%s() takes %d argument%s, not %d", zFn, nWant, nWant == 1 ? "" : "s", n);
    }
    return LP_OK;
}

/* A number written out at the cursor (digits, '.', an exponent): LP_OK
** with *pv, or the error. */
static int rx_number(RxParser *p, double *pv) {
    char zNum[64];
    int k = p->i, m = 0;
    while (k < p->n && m < 63 &&
           ((p->z[k] >= '0' && p->z[k] <= '9') || p->z[k] == '.' ||
            ((p->z[k] == 'e' || p->z[k] == 'E') && k > p->i) ||
            ((p->z[k] == '+' || p->z[k] == '-') && k > p->i && (p->z[k - 1] == 'e' || p->z[k - 1] == 'E')))) {
        zNum[m++] = p->z[k++];
    }
    zNum[m] = 0;
    char *zEnd;
    double v = strtod(zNum, &zEnd);
    if (m == 0 || zEnd != zNum + m || !isfinite(v)) return rx_error(p, p->i, "not a number");
    *pv = v;
    p->i = k;
    return LP_OK;
}

/* Expects byte c at the cursor (after spaces), then skips it. */
static int rx_expect(RxParser *p, char c, const char *zWhat) {
    rx_space(p);
    if (p->i >= p->n || p->z[p->i] != c) return rx_error(p, p->i, "expected %s", zWhat);
    p->i++;
    return LP_OK;
}

/* A number from lo to hi at the cursor (after spaces), or the error
** naming what it is. */
static int rx_param(RxParser *p, const char *zFn, const char *zWhat, double lo, double hi, double *pv) {
    rx_space(p);
    int iNum = p->i;
    if (p->i >= p->n || !((p->z[p->i] >= '0' && p->z[p->i] <= '9') || p->z[p->i] == '.')) {
        return rx_error(p, iNum, "%s() takes %s as a number written out", zFn, zWhat);
    }
    if (rx_number(p, pv)) return p->err->code;
    if (*pv < lo || *pv > hi) return rx_error(p, iNum, "%s in %s() is a number from %g to %g", zWhat, zFn, lo, hi);
    return LP_OK;
}

/* bm25a(k1, b) or bm25f(k1, b [, {field=weight, ...}]) (bF), the cursor
** on the '(': numbers written out, as Manticore takes them; the weights
** by the table's field names, a field not named weighing 1. */
static RxNode *rx_bm25(RxParser *p, const char *zFn, int bF) {
    p->i++;
    double k1, b;
    if (rx_param(p, zFn, "k1", 0, 100, &k1) || rx_expect(p, ',', "',' after k1") ||
        rx_param(p, zFn, "b", 0, 1, &b)) {
        return NULL;
    }
    int nf = p->nField > 0 ? p->nField : 1;
    double *aW = arena_alloc(p->a, sizeof(double) * (size_t)nf);
    if (!aW) return lp_err_set(p->err, LP_NOMEM, "out of memory compiling a ranker expression"), NULL;
    for (int f = 0; f < nf; f++) aW[f] = 1;
    rx_space(p);
    if (bF && p->i < p->n && p->z[p->i] == ',') {
        p->i++;
        if (rx_expect(p, '{', "'{' to open the field weights ({title=2, body=1})")) return NULL;
        for (;;) {
            rx_space(p);
            int iName = p->i, nName = rx_name(p), f = -1;
            if (nName == 0) return rx_error(p, iName, "expected a field name"), NULL;
            for (int k = 0; k < p->nField && f < 0; k++) {
                if ((int)strlen(p->azField[k]) == nName && strncasecmp(p->azField[k], p->z + iName, (size_t)nName) == 0) {
                    f = k;
                }
            }
            if (f < 0) {
                char zList[200] = "";
                for (int k = 0, o = 0; k < p->nField && o < (int)sizeof(zList) - 1; k++) {
                    o += snprintf(zList + o, sizeof(zList) - (size_t)o, "%s%s", k ? ", " : "", p->azField[k]);
                }
                return rx_error(p, iName, "%s(): '%.*s' is not a full-text field (%s%s)", zFn,
                                nName > 64 ? 64 : nName, p->z + iName,
                                p->nField ? "the table's: " : "no fields are known here", zList), NULL;
            }
            p->i += nName;
            if (rx_expect(p, '=', "'=' after the field name") ||
                rx_param(p, zFn, "a field weight", 0, 1e6, &aW[f])) {
                return NULL;
            }
            rx_space(p);
            if (p->i < p->n && p->z[p->i] == ',') {
                p->i++;
                continue;
            }
            if (rx_expect(p, '}', "',' or '}' in the field weights")) return NULL;
            break;
        }
    }
    if (rx_expect(p, ')', bF ? "')' or ', {field=weight, ...}' to end bm25f()" : "')' to end bm25a()")) return NULL;
    RxNode *x = rx_node(p, RX_BM25);
    if (!x) return NULL;
    x->op = bF;
    x->v = k1;
    x->bParam = b;
    x->aW = aW;
    x->nW = p->nField > 0 ? p->nField : 0;
    return x;
}

static RxNode *rx_prim(RxParser *p) {
    rx_space(p);
    if (p->i >= p->n) return rx_error(p, p->i, "expected a number, a factor, a function or '('"), NULL;
    char c = p->z[p->i];
    if (c == '(') {
        int iOpen = p->i++;
        RxNode *x = rx_or(p);
        if (!x) return NULL;
        rx_space(p);
        if (p->i >= p->n || p->z[p->i] != ')') {
            return rx_error(p, p->i, "expected ')' to close the '(' at offset %d", iOpen), NULL;
        }
        p->i++;
        return x;
    }
    if ((c >= '0' && c <= '9') || c == '.') {
        double v;
        if (rx_number(p, &v)) return NULL;
        RxNode *x = rx_node(p, RX_NUM);
        if (x) x->v = v;
        return x;
    }
    int nName = rx_name(p);
    if (nName == 0) return rx_error(p, p->i, "expected a number, a factor, a function or '('"), NULL;
    int iName = p->i;
    const char *zName = p->z + iName;
    p->i += nName;
    rx_space(p);
    if (p->i < p->n && p->z[p->i] == '(') {
        char zFn[32];
        snprintf(zFn, sizeof(zFn), "%.*s", nName, zName);
        for (char *q = zFn; *q; q++) *q = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
        RxNode *aArg[3] = {NULL, NULL, NULL};
        int k;
        RxNode *x = NULL;
        if (strcmp(zFn, "bm25a") == 0 || strcmp(zFn, "bm25f") == 0) {
            return rx_bm25(p, zFn, zFn[4] == 'f');
        }
        if (strcmp(zFn, "max_window_hits") == 0) {
            /* a field factor with its window: one window per query, as in
            ** Manticore (the ranker keeps one) */
            if (!p->bAgg) {
                return rx_error(p, iName, "max_window_hits() is a per-field factor: use it inside sum() or top()"),
                       NULL;
            }
            p->i++;
            double w;
            int iNum = p->i;
            if (rx_param(p, zFn, "the window (in positions)", 1, 1e6, &w)) return NULL;
            if (w != floor(w)) return rx_error(p, iNum, "max_window_hits() takes a whole number of positions"), NULL;
            if (p->nWindow && p->nWindow != (uint32_t)w) {
                return rx_error(p, iNum, "max_window_hits(): one window per expression (%u already)", p->nWindow),
                       NULL;
            }
            if (rx_expect(p, ')', "')' to end max_window_hits()")) return NULL;
            p->nWindow = (uint32_t)w;
            p->bOcc = 1;
            RxNode *x = rx_node(p, RX_FIELD);
            if (x) x->op = F_MAX_WINDOW_HITS;
            return x;
        }
        if (strcmp(zFn, "sum") == 0 || strcmp(zFn, "top") == 0) {
            if (p->bAgg) return rx_error(p, iName, "%s() cannot be inside another sum() or top()", zFn), NULL;
            p->bAgg = 1;
            int rc = rx_args(p, zFn, 1, aArg);
            p->bAgg = 0;
            if (rc || !(x = rx_node(p, zFn[0] == 's' ? RX_SUM : RX_TOP))) return NULL;
        } else if (strcmp(zFn, "if") == 0) {
            if (rx_args(p, zFn, 3, aArg) || !(x = rx_node(p, RX_IF))) return NULL;
        } else if ((k = lookup(azFunc1, COUNT(azFunc1), zName, nName)) >= 0) {
            if (rx_args(p, zFn, 1, aArg) || !(x = rx_node(p, RX_FUNC1))) return NULL;
            x->op = k;
        } else if ((k = lookup(azFunc2, COUNT(azFunc2), zName, nName)) >= 0) {
            if (rx_args(p, zFn, 2, aArg) || !(x = rx_node(p, RX_FUNC2))) return NULL;
            x->op = k;
        } else {
            return rx_error(p, iName, "unknown function '%s' (there are sum, top, if, abs, ln, log2, log10, "
                                      "sqrt, exp, floor, ceil, min, max, pow, bm25a, bm25f and "
                                      "max_window_hits)", zFn), NULL;
        }
        x->a = aArg[0];
        x->b = aArg[1];
        x->c = aArg[2];
        return x;
    }
    int k = lookup(azField, COUNT(azField), zName, nName);
    if (k >= 0) {
        if (!p->bAgg) {
            return rx_error(p, iName, "%s is a per-field factor: use it inside sum() or top()", azField[k]), NULL;
        }
        RxNode *x = rx_node(p, RX_FIELD);
        if (x) x->op = k;
        if (k == F_ATC || k == F_MIN_GAPS) p->bOcc = 1;
        return x;
    }
    if ((k = lookup(azDoc, COUNT(azDoc), zName, nName)) >= 0) {
        RxNode *x = rx_node(p, RX_DOC);
        if (x) x->op = k;
        return x;
    }
    return rx_error(p, iName, "unknown factor '%.*s' (per field: lcs, user_weight, hit_count, word_count, "
                              "min_hit_pos, exact_hit, sum_idf, min_idf, max_idf, tf_idf, lccs, wlccs, "
                              "min_best_span_pos, exact_order, atc, min_gaps, max_window_hits(n); per document: "
                              "bm25, bm25f, max_lcs, "
                              "field_mask, doc_word_count, query_word_count)",
                    nName > 32 ? 32 : nName, zName), NULL;
}

/* The operand of a prefix operator (unary '-', NOT) read by xNext, as a
** node of kind; as deep as FTS_RANKEXPR_MAX_DEPTH, like any nesting. */
static RxNode *rx_prefixed(RxParser *p, RxKind kind, RxNode *(*xNext)(RxParser *)) {
    if (++p->depth > FTS_RANKEXPR_MAX_DEPTH) {
        return rx_error(p, p->i, "nested deeper than %d levels", FTS_RANKEXPR_MAX_DEPTH), NULL;
    }
    RxNode *y = xNext(p);
    p->depth--;
    RxNode *x = y ? rx_node(p, kind) : NULL;
    if (x) x->a = y;
    return x;
}

static RxNode *rx_unary(RxParser *p) {
    rx_space(p);
    if (p->i < p->n && p->z[p->i] == '-') {
        p->i++;
        return rx_prefixed(p, RX_NEG, rx_unary);
    }
    return rx_prim(p);
}

static RxNode *rx_mul(RxParser *p) {
    RxNode *x = rx_unary(p);
    for (;;) {
        if (!x) return NULL;
        rx_space(p);
        if (p->i >= p->n || (p->z[p->i] != '*' && p->z[p->i] != '/')) return x;
        int op = p->z[p->i++] == '*' ? OP_MUL : OP_DIV;
        x = rx_bin(p, op, x, rx_unary(p));
    }
}

static RxNode *rx_add(RxParser *p) {
    RxNode *x = rx_mul(p);
    for (;;) {
        if (!x) return NULL;
        rx_space(p);
        if (p->i >= p->n || (p->z[p->i] != '+' && p->z[p->i] != '-')) return x;
        int op = p->z[p->i++] == '+' ? OP_ADD : OP_SUB;
        x = rx_bin(p, op, x, rx_mul(p));
    }
}

static RxNode *rx_cmp(RxParser *p) {
    RxNode *x = rx_add(p);
    if (!x) return NULL;
    rx_space(p);
    if (p->i >= p->n) return x;
    const char *z = p->z + p->i;
    int n = p->n - p->i, op = -1, len = 1;
    if (n >= 2 && z[0] == '<' && z[1] == '=') op = OP_LE, len = 2;
    else if (n >= 2 && z[0] == '>' && z[1] == '=') op = OP_GE, len = 2;
    else if (n >= 2 && z[0] == '<' && z[1] == '>') op = OP_NE, len = 2;
    else if (n >= 2 && z[0] == '!' && z[1] == '=') op = OP_NE, len = 2;
    else if (n >= 2 && z[0] == '=' && z[1] == '=') op = OP_EQ, len = 2;
    else if (z[0] == '<') op = OP_LT;
    else if (z[0] == '>') op = OP_GT;
    else if (z[0] == '=') op = OP_EQ;
    if (op < 0) return x;
    p->i += len;
    return rx_bin(p, op, x, rx_add(p));
}

static RxNode *rx_not(RxParser *p) {
    rx_space(p);
    if (rx_keyword(p, "not")) {
        p->i += 3;
        return rx_prefixed(p, RX_NOT, rx_not);
    }
    return rx_cmp(p);
}

static RxNode *rx_and(RxParser *p) {
    RxNode *x = rx_not(p);
    for (;;) {
        if (!x) return NULL;
        rx_space(p);
        if (!rx_keyword(p, "and")) return x;
        p->i += 3;
        x = rx_bin(p, OP_AND, x, rx_not(p));
    }
}

static RxNode *rx_or(RxParser *p) {
    if (++p->depth > FTS_RANKEXPR_MAX_DEPTH) {
        return rx_error(p, p->i, "nested deeper than %d levels", FTS_RANKEXPR_MAX_DEPTH), NULL;
    }
    RxNode *x = rx_and(p);
    for (;;) {
        if (!x) break;
        rx_space(p);
        if (!rx_keyword(p, "or")) break;
        p->i += 2;
        x = rx_bin(p, OP_OR, x, rx_and(p));
    }
    p->depth--;
    return x;
}

int fts_rankexpr_compile(Arena *a, const char *z, size_t n, FtsRankExpr **pp, LpError *err) {
    return fts_rankexpr_compile_fields(a, z, n, NULL, 0, pp, err);
}

int fts_rankexpr_compile_fields(Arena *a, const char *z, size_t n, const char *const *azField,
                                int nField, FtsRankExpr **pp, LpError *err) {
    *pp = NULL;
    RxParser p = {a, z, (int)n, 0, 0, 0, azField, nField, 0, 0, err};
    if (n > FTS_RANKEXPR_MAX_LEN) {
        return lp_err_setpos(err, LP_BADINPUT, FTS_RANKEXPR_MAX_LEN,
                             "ranker expression: longer than %d bytes", FTS_RANKEXPR_MAX_LEN);
    }
    for (size_t i = 0; i < n; i++) {
        if (z[i] == 0) return rx_error(&p, (int)i, "a NUL byte");
    }
    RxNode *root = rx_or(&p);
    if (!root) return err->code ? err->code : LP_NOMEM;
    rx_space(&p);
    if (p.i < p.n) return rx_error(&p, p.i, "expected an operator or the end");
    FtsRankExpr *e = arena_alloc(a, sizeof(FtsRankExpr));
    if (!e) return lp_err_set(err, LP_NOMEM, "out of memory compiling a ranker expression");
    e->root = root;
    e->bOcc = p.bOcc;
    e->nWindow = p.nWindow;
    *pp = e;
    return LP_OK;
}

/* ------------------------------------------------------------ evaluation */

static double finite_or_0(double v) {
    return isfinite(v) ? v : 0;
}

static double eval(const RxNode *x, const FtsDocFactors *d, const FtsFieldFactors *ff, int iField) {
    switch (x->kind) {
    case RX_NUM:
        return x->v;
    case RX_FIELD:
        switch (x->op) {
        case F_LCS: return ff->lcs;
        case F_USER_WEIGHT: return d->aWeight[iField];
        case F_HIT_COUNT: return ff->hitCount;
        case F_WORD_COUNT: return ff->wordCount;
        case F_MIN_HIT_POS: return ff->minHitPos;
        case F_EXACT_HIT: return ff->exactHit;
        case F_SUM_IDF: return ff->sumIdf;
        case F_MIN_IDF: return ff->minIdf;
        case F_MAX_IDF: return ff->maxIdf;
        case F_LCCS: return ff->lccs;
        case F_WLCCS: return ff->wlccs;
        case F_MIN_BEST_SPAN_POS: return ff->minBestSpanPos;
        case F_EXACT_ORDER: return ff->exactOrder;
        case F_ATC: return ff->atc;
        case F_MIN_GAPS: return ff->minGaps;
        case F_MAX_WINDOW_HITS: return ff->maxWindowHits;
        default: return ff->tfIdf;
        }
    case RX_DOC:
        switch (x->op) {
        case D_BM25: return d->bm25f > 0 ? 999 * d->bm25f / (d->bm25f + 1) : 0;
        case D_BM25F: return d->bm25f;
        case D_MAX_LCS: return d->maxLcs;
        case D_DOC_WORD_COUNT: return d->docWordCount;
        case D_QUERY_WORD_COUNT: return d->queryWordCount;
        default: {
            double m = 0;
            for (int f = 0; f < d->nField && f < 32; f++) {
                if (d->aField[f].hitCount) m += (double)(1u << f);
            }
            return m;
        }
        }
    case RX_NEG:
        return -eval(x->a, d, ff, iField);
    case RX_NOT:
        return eval(x->a, d, ff, iField) == 0;
    case RX_BIN: {
        double l = eval(x->a, d, ff, iField);
        if (x->op == OP_AND && l == 0) return 0;
        if (x->op == OP_OR && l != 0) return 1;
        double r = eval(x->b, d, ff, iField);
        switch (x->op) {
        case OP_ADD: return l + r;
        case OP_SUB: return l - r;
        case OP_MUL: return l * r;
        case OP_DIV: return r != 0 ? finite_or_0(l / r) : 0;
        case OP_LT: return l < r;
        case OP_LE: return l <= r;
        case OP_GT: return l > r;
        case OP_GE: return l >= r;
        case OP_EQ: return l == r;
        case OP_NE: return l != r;
        default: return r != 0; /* AND, OR: the left side did not decide */
        }
    }
    case RX_FUNC1: {
        double v = eval(x->a, d, ff, iField);
        switch (x->op) {
        case 0: return fabs(v);
        case 1: return v > 0 ? log(v) : 0;
        case 2: return v > 0 ? log2(v) : 0;
        case 3: return v > 0 ? log10(v) : 0;
        case 4: return v >= 0 ? sqrt(v) : 0;
        case 5: return finite_or_0(exp(v));
        case 6: return floor(v);
        default: return ceil(v);
        }
    }
    case RX_FUNC2: {
        double l = eval(x->a, d, ff, iField), r = eval(x->b, d, ff, iField);
        return x->op == 0 ? (l < r ? l : r) : x->op == 1 ? (l > r ? l : r) : finite_or_0(pow(l, r));
    }
    case RX_IF:
        return eval(x->a, d, ff, iField) != 0 ? eval(x->b, d, ff, iField) : eval(x->c, d, ff, iField);
    case RX_BM25:
        return d->xBm25 ? finite_or_0(d->xBm25(d->pBm25Ctx, x->op, x->v, x->bParam, x->aW, x->nW)) : 0;
    case RX_SUM:
    case RX_TOP: {
        double s = 0;
        int bAny = 0;
        for (int f = 0; f < d->nField; f++) {
            if (!d->aField[f].hitCount) continue;
            double v = eval(x->a, d, &d->aField[f], f);
            s = x->kind == RX_SUM ? s + v : !bAny || v > s ? v : s;
            bAny = 1;
        }
        return s;
    }
    }
    return 0;
}

double fts_rankexpr_eval(const FtsRankExpr *e, const FtsDocFactors *d) {
    static const FtsFieldFactors none;
    return finite_or_0(eval(e->root, d, &none, 0));
}

int fts_rankexpr_uses_occurrences(const FtsRankExpr *e) {
    return e->bOcc;
}

uint32_t fts_rankexpr_window(const FtsRankExpr *e) {
    return e->nWindow;
}
