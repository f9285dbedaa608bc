/*
** query_int.h — internals shared by select.c and ftsfn.c.
*/
#ifndef LP_QUERY_INT_H
#define LP_QUERY_INT_H

#include "fts/search.h"
#include "query/expr.h"
#include "table/table.h"

/* The full-text query a SELECT is running, as QE_CALL functions see it. */
struct QFtsCtx {
    FtsQuery *q;                /* the plan, for EXPLAIN_SCORE */
    const FtsNode *root;        /* the MATCH tree, for HIGHLIGHT */
    const Analyzer *an;
    const Table *t;
    Arena *a;                   /* lives as long as the statement's execution */
    void **apHl;                /* per full-text field: its highlight query, built lazily */
};

#endif /* LP_QUERY_INT_H */
