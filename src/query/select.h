/*
** select.h — running a SELECT over one table.
**
** Contract. query_select() takes a snapshot of the table, finds the rows
** that match the filter, keeps the best iOffset+iLimit of them in the
** requested order, evaluates the output expressions for the rows in
** [iOffset, iOffset+iLimit) and hands each one to xRow, in order, while the
** snapshot is still held (so the Values xRow sees may borrow strings from
** the rows; they are valid only during the call). It also counts every
** matching row (total_found, for SHOW META), so a LIMIT never changes the
** counts. When xRow returns non-zero the run stops and that code is
** returned.
**
** Plans. When the caller knows the only candidate ids (WHERE id = … or
** id IN (…) at the top of the filter), it passes them in aId and only those
** rows are looked up; otherwise every row is scanned. Without ORDER BY the
** rows come in ascending id order. The chosen plan and the counters are
** reported in QMeta.
*/
#ifndef LP_QUERY_SELECT_H
#define LP_QUERY_SELECT_H

#include <stdint.h>

#include "query/expr.h"
#include "table/table.h"
#include "util/error.h"

typedef struct QOrder {
    const QExpr *pExpr;
    int bDesc;
} QOrder;

typedef struct QSelect {
    Table *pTable;              /* the table (caller holds a reference) */
    const QExpr *pWhere;        /* filter, or NULL */
    const int64_t *aId;         /* candidate ids, or NULL for a scan */
    int nId;
    const QExpr *const *aOut;   /* output expressions */
    int nOut;
    const QOrder *aOrder;       /* ORDER BY keys, or NULL: ascending id */
    int nOrder;
    int64_t iOffset;            /* rows to skip */
    int64_t iLimit;             /* rows to return (>= 0) */
    int bCountOnly;             /* only count matches: xRow is not called */
} QSelect;

typedef struct QMeta {
    const char *zPlan;          /* "id_lookup", "full_scan" (static string) */
    uint64_t nExamined;         /* rows the filter was evaluated on */
    uint64_t nTotalFound;       /* rows that matched */
    uint64_t nReturned;         /* rows handed to xRow */
    int64_t nsMatch;            /* time finding and ordering the rows */
    int64_t nsOutput;           /* time evaluating and delivering the output */
} QMeta;

typedef int (*QRowFn)(void *ctx, const Value *aVal, int nVal);

/* Returns LP_OK, LP_NOMEM, or what xRow returned. */
int query_select(const QSelect *q, QRowFn xRow, void *ctx, QMeta *pMeta, LpError *err);

#endif /* LP_QUERY_SELECT_H */
