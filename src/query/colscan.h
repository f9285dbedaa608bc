/*
** colscan.h — a WHERE's numeric attribute tests run over column arrays.
**
** Contract. colscan_compile() takes the conjuncts of a WHERE (the operands
** of its top-level ANDs) that test one numeric attribute against constants
**     col = c, <>, <, <=, >, >=   (either side)
**     col [NOT] BETWEEN c1 AND c2      col [NOT] IN (integers)
**     col IS [NOT] NULL
** and turns each into a ColPred. A row passes every ColPred whenever it
** passes the WHERE (they are necessary conditions: each conjunct must hold),
** so a scan may drop rows that fail one without evaluating anything else;
** when every conjunct was compiled (bExact) the ColPreds are also
** sufficient, and rows that pass them need no evaluation at all.
** Comparisons keep the expression evaluator's semantics exactly (expr.c:
** integers compared as integers, anything with a FLOAT as doubles, a NULL
** value passes no test but IS NULL).
**
** colscan_eval() ANDs into a bitmap the result of one ColPred over n values
** of a column array (table_snap_column: slot encoding, NULL bitmap).
*/
#ifndef LP_QUERY_COLSCAN_H
#define LP_QUERY_COLSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "query/expr.h"
#include "table/schema.h"
#include "util/arena.h"

typedef enum ColPredKind {
    CP_IRANGE,      /* integer column, iLo <= v <= iHi (bNot: outside) */
    CP_DCMP,        /* as doubles: cmp(v, d) satisfies op */
    CP_IN,          /* integer column, v in aIn (bNot: not in) */
    CP_ISNULL,      /* bNot: IS NOT NULL */
} ColPredKind;

typedef struct ColPred {
    int iCol;
    ColPredKind kind;
    int bNot;
    int bFloat;             /* the column is FLOAT: values are double bits */
    int64_t iLo, iHi;       /* CP_IRANGE */
    QOp op;                 /* CP_DCMP: QOP_EQ .. QOP_GE */
    double d;
    const int64_t *aIn;     /* CP_IN: sorted ascending */
    int nIn;
} ColPred;

typedef struct ColFilter {
    ColPred *a;
    int n;
    int bExact;             /* the ColPreds are the whole WHERE */
} ColFilter;

/* Compiles pWhere (NULL: no filter, n 0, bExact 1) for schema s, ColPreds
** in arena a. Returns LP_OK or LP_NOMEM. */
int colscan_compile(Arena *a, const Schema *s, const QExpr *pWhere, ColFilter *f);
/* The same for the AND of apExpr[0..nExpr). */
int colscan_compile_all(Arena *a, const Schema *s, const QExpr *const *apExpr, int nExpr, ColFilter *f);

/* aBits[j/64] bit j &= "value j passes p", for j in [0, n); aVal and aNull
** start at the same value (aNull's bit 0 = aVal[0]'s); the range starts on
** a 64-value boundary of aNull. */
void colscan_eval(const ColPred *p, const uint64_t *aVal, const uint64_t *aNull, size_t n, uint64_t *aBits);

/* Whether one value (NULL when bNull) passes p. */
int colscan_test1(const ColPred *p, uint64_t v, int bNull);

#endif /* LP_QUERY_COLSCAN_H */
