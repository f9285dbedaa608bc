/*
** expr.h — bound expressions: what WHERE, ORDER BY and select lists
** compute for each row.
**
** Contract. A QExpr is an expression whose names are already resolved (a
** column is its index in the schema, constants are typed Values) and whose
** types were checked by whoever built it (the SQL binder): evaluation
** cannot fail. Nodes are allocated in the caller's arena with the qexpr_*
** constructors and are read-only afterwards, so one tree may be evaluated
** from several threads at once.
**
** Semantics follow SQL: arithmetic on integers stays integer (with
** wrap-around refused: an overflowing + - * gives a double), `/` always
** gives a double, division by zero gives NULL (as MySQL does); comparisons
** give 1, 0 or NULL; NULL compared with anything is NULL; AND/OR use
** three-valued logic; a row matches a WHERE only when it evaluates to a
** non-zero, non-NULL value. Strings compare with value_strcmp_ci (ASCII
** case-insensitive, as STRING columns do). A multi-value is tested item by
** item (QE_MVA), as Manticore's ANY() and ALL().
*/
#ifndef LP_QUERY_EXPR_H
#define LP_QUERY_EXPR_H

#include <stdint.h>

#include "table/table.h"
#include "table/value.h"
#include "util/arena.h"

typedef enum QExprKind {
    QE_CONST,       /* u.v */
    QE_COLUMN,      /* u.col */
    QE_UNARY,       /* op, a */
    QE_BINARY,      /* op, a, b */
    QE_IN,          /* a IN (u.list) — constants; bNot for NOT IN */
    QE_BETWEEN,     /* a BETWEEN b AND c; bNot */
    QE_ISNULL,      /* a IS NULL; bNot for IS NOT NULL */
    QE_WEIGHT,      /* WEIGHT(): the row's full-text score (1 without MATCH) */
    QE_KNN_DIST,    /* KNN_DIST(): the row's distance to the knn() query vector */
    QE_HYBRID,      /* HYBRID_SCORE(): the row's fused rank score (hybrid search) */
    QE_CALL,        /* u.call: a function evaluated by a callback at output
                    ** time (EXPLAIN_SCORE(), HIGHLIGHT(), SNIPPET()) */
    QE_FUNC,        /* u.fn: a scalar function of its arguments (IF(), ABS(), ...) */
    QE_SLOT,        /* u.col.iCol: the row's aSlot[iCol] (a group's values, HAVING) */
    QE_JSON,        /* u.json: a property of a JSON column (query/jsonpath.h) */
    QE_FOR,         /* ANY/ALL/INDEXOF(b FOR x IN a): b tested for each
                    ** element of a (a JSON array's text, or a multi-value),
                    ** the element being QE_ELEM; op QOP_OR is ANY (1 when
                    ** one holds), QOP_AND ALL (1 when all do, 0 when empty),
                    ** QOP_NONE INDEXOF (the first's index from 0, else -1).
                    ** NULL a or not an array: NULL */
    QE_ELEM,        /* the element QE_FOR is testing */
    QE_MVA,         /* ANY/ALL over the items of a multi-value a: each item
                    ** tested by op against b (QOP_EQ..QOP_GE), between b and
                    ** c (QOP_AND), or for membership in u.list (QOP_NONE);
                    ** bElemNot negates each item's test; bAll: every item
                    ** must pass, else one; bNot negates the result. A NULL
                    ** multi-value gives NULL, an empty one 0 (before bNot). */
} QExprKind;

/* Scalar functions (Manticore's, as MySQL has them where both do). A NULL
** argument gives NULL, except IF()'s condition (NULL is false). Numbers
** only, except IF()'s branches and MIN/MAX/GREATEST/LEAST, which take
** strings too (all or none); the binder checks that. */
typedef enum QFunc {
    QF_IF,          /* IF(cond, a, b) */
    QF_ABS, QF_CEIL, QF_FLOOR,      /* CEIL and FLOOR give integers */
    QF_SQRT, QF_LN, QF_LOG2, QF_LOG10, QF_EXP, QF_POW,  /* doubles; NULL out of range */
    QF_MIN, QF_MAX, /* the smallest or largest of the arguments (2 or more) */
    QF_INTERVAL,    /* INTERVAL(x, p1, p2, ...): how many points x reaches */
    QF_RAND,        /* RAND([seed]): [0, 1), per row from its id */
    QF_YEAR, QF_MONTH, QF_DAY, QF_HOUR, QF_MINUTE, QF_SECOND,  /* of unix seconds, UTC */
    QF_YEARMONTH, QF_YEARMONTHDAY,  /* 202612, 20261207 */
    QF_BIGINT, QF_DOUBLE,           /* conversions (BIGINT truncates) */
    QF_SIN, QF_COS, QF_ATAN2,       /* radians; ATAN2(y, x) */
    QF_FIBONACCI,   /* FIBONACCI(n): F(0) = 0, F(1) = 1, ..., modulo 2^32 as Manticore */
    QF_UINT, QF_SINT, /* the low 32 bits, unsigned; read as signed (Manticore's) */
    QF_BITDOT,      /* BITDOT(mask, w0, w1, ...): the sum of w_i over mask's set bits i */
    QF_REGEX,       /* REGEX(str, 'pattern'): 1 when the pattern matches somewhere
                    ** in it (text/regexp.h; the pattern a constant) */
    QF_LENGTH,      /* LENGTH(x): a multi-value's items, a string's bytes */
    QF_GEODIST,     /* GEODIST(lat1, lon1, lat2, lon2, k): the distance between
                    ** two points over the WGS84 ellipsoid (Lambert's formula;
                    ** salt bit 1: over a sphere, haversine), in metres times
                    ** the constant k; salt bit 0: the inputs are degrees,
                    ** else radians */
    QF_MVA_MIN, QF_MVA_MAX, /* LEAST(mva), GREATEST(mva): NULL when empty */
    QF_CONTAINS,    /* CONTAINS(polygon, x, y): 1 when the point (the two
                    ** arguments) lies inside u.fn.aXY's polygon (even-odd
                    ** rule), else 0 */
    QF_HISTOGRAM,   /* HISTOGRAM(x, interval, offset): the lower bound of x's
                    ** bucket, offset + interval * floor((x - offset) / interval)
                    ** (integers when all three are) */
    QF_RANGE,       /* RANGE(x): the index of the first of u.fn.aXY's ranges
                    ** (from, to pairs; from <= x < to, +-inf where open) that
                    ** holds x, else -1 */
    QF_DATE_HISTOGRAM, /* DATE_HISTOGRAM(t): the start of unix time t's bucket,
                    ** UTC: salt & 7 is 0 for fixed buckets of salt >> 3
                    ** seconds, 1 week (from Monday), 2 month, 3 quarter,
                    ** 4 year */
    /* Strings: results are made in the row's pScratch (NULL without one) */
    QF_CONCAT,      /* CONCAT(s1, s2, ...) */
    QF_UPPER, QF_LOWER, /* Unicode simple case mapping */
    QF_CRC32,           /* CRC32(s): the CRC-32 (zlib's, MySQL's) of the string's bytes */
    QF_SUBSTRING_INDEX, /* (s, delim, n): before the n-th delim (n > 0), or after
                    ** the n-th from the end (n < 0), as MySQL */
    QF_TO_STRING,   /* any value as text, as the MySQL protocol shows it
                    ** (bDouble: a float32 column's value, its digits) */
    QF_LEVENSHTEIN, /* (a, b): edits in characters; bDouble: normalized by the
                    ** longer length (0..1); salt > 0: length_delta (lengths
                    ** further apart give the longer length, uncounted);
                    ** NULL past 2^28 cells of work (two 16,384-character strings) */
} QFunc;

typedef enum QOp {
    QOP_NONE = 0,
    QOP_NEG, QOP_NOT,
    QOP_ADD, QOP_SUB, QOP_MUL, QOP_DIV, QOP_MOD, QOP_IDIV,
    QOP_EQ, QOP_NE, QOP_LT, QOP_LE, QOP_GT, QOP_GE,
    QOP_AND, QOP_OR,
    QOP_BITAND, QOP_BITOR, /* integers only: NULL for anything else */
} QOp;

typedef struct QExpr QExpr;
typedef struct QRow QRow;

/* A QE_CALL callback: the value of e for row (payload in row->pScratch). */
typedef Value (*QCallFn)(const QExpr *e, const QRow *row);

struct QExpr {
    QExprKind kind;
    QOp op;
    int bNot;               /* QE_IN, QE_BETWEEN, QE_ISNULL, QE_MVA */
    int bAll, bElemNot;     /* QE_MVA */
    const QExpr *a, *b, *c; /* operands */
    union {
        Value v;            /* QE_CONST (payload in the arena) */
        struct {
            int iCol;       /* schema column, or SCHEMA_ID_COL */
        } col;
        struct {
            const Value *aVal;  /* QE_IN constants, sorted when bSorted */
            int nVal;
            int bSorted;        /* all ints, sorted: binary search */
        } list;
        struct {
            QFunc fn;
            const QExpr *const *aArg;
            int nArg;
            uint64_t salt;      /* QF_RAND: mixed with each row's id */
            int bDouble;        /* an integer result is given as a double (IF,
                                ** MIN and MAX over integers and doubles) */
            const double *aXY;  /* QF_CONTAINS: the polygon's vertices, x y x y
                                ** ... (in the arena) */
            int nXY;            /* ... how many doubles */
        } fn;
        struct {
            int iCol;               /* the JSON column */
            const struct JsonStep *aStep; /* the path into it */
            int nStep;
        } json;
        struct {
            QCallFn xCall;
            const void *pArg;   /* the callback's bound arguments (arena) */
            const QExpr *const *aArg; /* evaluated arguments, if any */
            int nArg;
        } call;
    } u;
};

struct QFtsCtx; /* select.c: the running full-text query, for QE_CALLs */

/* What an expression is evaluated against: a row of a table (r may be
** NULL for constant expressions) and, under MATCH, its score. */
struct QRow {
    const Schema *s;
    const MemRow *r;
    double weight;          /* WEIGHT() */
    uint32_t ord;           /* the row's slot / full-text ordinal */
    double dist;            /* KNN_DIST() under knn() */
    struct QFtsCtx *fts;    /* the MATCH being run, or NULL */
    Arena *pScratch;        /* where QE_CALLs put their results; reset per row */
    RowReader *rd;          /* reads r's TEXT values (NULL: row_get, RAM rows only) */
    double hybrid;          /* HYBRID_SCORE() under hybrid search */
    const Value *aSlot;     /* QE_SLOT's values (a group's, for HAVING), or NULL */
    const Value *pElem;     /* QE_ELEM's value: the element of ANY(... FOR x IN
                            ** ...) being tested (QE_FOR sets it), or NULL */
};

QExpr *qexpr_const(Arena *a, Value v);
QExpr *qexpr_column(Arena *a, int iCol);
QExpr *qexpr_unary(Arena *a, QOp op, const QExpr *x);
QExpr *qexpr_binary(Arena *a, QOp op, const QExpr *x, const QExpr *y);
/* The list is copied; integer lists are sorted for binary search. */
QExpr *qexpr_in(Arena *a, const QExpr *x, const Value *aVal, int nVal, int bNot);
QExpr *qexpr_between(Arena *a, const QExpr *x, const QExpr *lo, const QExpr *hi, int bNot);
QExpr *qexpr_isnull(Arena *a, const QExpr *x, int bNot);
/* QE_MVA over multi-value x: op against y (QOP_EQ..QOP_GE), between y and z
** (QOP_AND), or in aVal[0..nVal) (QOP_NONE: copied and, integers, sorted). */
QExpr *qexpr_mva(Arena *a, const QExpr *x, QOp op, const QExpr *y, const QExpr *z, const Value *aVal,
                 int nVal, int bAll, int bElemNot, int bNot);
QExpr *qexpr_weight(Arena *a);
QExpr *qexpr_knn_dist(Arena *a);
QExpr *qexpr_hybrid(Arena *a);
QExpr *qexpr_slot(Arena *a, int i);
QExpr *qexpr_for(Arena *a, QOp op, const QExpr *arr, const QExpr *cond);
QExpr *qexpr_elem(Arena *a);
/* The property at path aStep[0..nStep) (in the arena) of JSON column iCol;
** its strings with escapes are unescaped into the row's pScratch. */
QExpr *qexpr_json(Arena *a, int iCol, const struct JsonStep *aStep, int nStep);
QExpr *qexpr_call(Arena *a, QCallFn xCall, const void *pArg, const QExpr *const *aArg, int nArg);
/* Scalar function fn of aArg[0..nArg) (the array is kept, not copied);
** salt seeds QF_RAND; bDouble: see u.fn. */
QExpr *qexpr_func(Arena *a, QFunc fn, const QExpr *const *aArg, int nArg, uint64_t salt, int bDouble);

/* Evaluates e for row (row->r may be NULL when e uses no column; row
** itself may be NULL for constant expressions). Strings and vectors in the
** result are borrowed from the row, the tree, row->pScratch or row->rd's
** current block (valid while the same row is being evaluated). */
Value qexpr_eval(const QExpr *e, const QRow *row);

/* Does e hold for row? (non-zero and non-NULL) */
int qexpr_true(const QExpr *e, const QRow *row);

/* Does e (or a subexpression) use WEIGHT() or a QE_CALL? */
int qexpr_uses_match(const QExpr *e);
/* Does e (or a subexpression) use KNN_DIST()? */
int qexpr_uses_knn(const QExpr *e);
/* Does e (or a subexpression) use HYBRID_SCORE()? */
int qexpr_uses_hybrid(const QExpr *e);

/* Total order used by ORDER BY and IN: NULL first, then numbers (ints and
** doubles compared by value), then strings (case-insensitive), then
** vectors, then multi-values (each lexicographically). */
int value_cmp(const Value *x, const Value *y);

#endif /* LP_QUERY_EXPR_H */
