/*
** ftsfn.h — functions of a full-text query evaluated per result row
** (QE_CALL callbacks): EXPLAIN_SCORE(), and HIGHLIGHT() / SNIPPET().
** Their results live in the row's scratch arena (QRow.pScratch).
*/
#ifndef LP_QUERY_FTSFN_H
#define LP_QUERY_FTSFN_H

#include "query/expr.h"

/* EXPLAIN_SCORE(): the JSON breakdown of the row's WEIGHT() (fts/search.h). */
Value qfn_explain_score(const QExpr *e, const QRow *row);

/* PACKEDFACTORS(): fts_query_packed_factors' text for the row's document
** (pArg non-NULL: {no_atc=1}), NULL when it is not a match. */
Value qfn_packed_factors(const QExpr *e, const QRow *row);


#include "fts/highlight.h"

/* HIGHLIGHT() and SNIPPET(): what the binder prepares once per statement. */
typedef struct QHighlight {
    FtsHlOptions opt;
    const char *zFieldSep;      /* between fields (HIGHLIGHT), default " | " */
    const Analyzer *an;
    int nField;                 /* HIGHLIGHT: fields to show, in order */
    const int *aCol;            /* their schema columns */
    const FtsHlQuery *const *apHl; /* their terms */
    const QExpr *pText;         /* SNIPPET: the text argument */
    const FtsHlQuery *pHlText;  /* SNIPPET: the terms */
    int bLimitsPerField;        /* limits_per_field: each field has the limits (1); 0:
                                ** the fields share them (fts_highlight_shared) */
} QHighlight;

/* Fills *h with the defaults: no fields, no query, the options' defaults. */
void qhl_init(QHighlight *h);

/* Sets the highlighting option zName (Manticore's names: before_match,
** after_match, chunk_separator or snippet_separator, field_separator,
** limit, around, limit_passages, limit_words, limits_per_field,
** allow_empty, force_all_words, force_passages, start_passage_id,
** weight_order, exact_phrase, passage_boundary or snippet_boundary,
** use_boundaries, emit_zones, html_strip_mode, and loupe's escape_html) from v; strings
** are copied into a, numbers may be given as strings. The options are
** checked against each other and the table by fts_hl_options_check once
** all are set. LP_OK; LP_BADINPUT with the reason in zWhy[0..nWhy);
** LP_NOMEM. */
int qhl_option(QHighlight *h, Arena *a, const char *zName, Value v, char *zWhy, size_t nWhy);

/* HIGHLIGHT(): the row's fields, highlighted, joined by zFieldSep
** (pArg: a QHighlight). */
Value qfn_highlight(const QExpr *e, const QRow *row);
/* SNIPPET(text, 'query', ...): the text highlighted (pArg: a QHighlight). */
Value qfn_snippet(const QExpr *e, const QRow *row);

#endif /* LP_QUERY_FTSFN_H */
