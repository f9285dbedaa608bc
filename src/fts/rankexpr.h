/*
** rankexpr.h — ranking expressions: OPTION ranker=expr('...'), as in
** Manticore, computed from the factors the proximity rankers gather.
**
** The language (case-insensitive names, numbers as in C: 12, 0.5, 1e3):
**   arithmetic   + - * /  and unary -; parentheses
**   comparisons  < <= > >= = == != <>   (1 or 0)
**   logic        AND OR NOT              (on non-zero / zero)
**   functions    abs ln log2 log10 sqrt exp floor ceil (one argument);
**                min(a,b) max(a,b) pow(a,b); if(cond, a, b)
**   aggregates   sum(x)  the sum of x over the fields the document matches
**                top(x)  its largest value over them (0 when none)
** Field factors (only inside an aggregate, per matched field):
**   lcs          the longest run of query keywords matched in query order
**   user_weight  the field's weight (OPTION field_weights, default 1)
**   hit_count    keyword occurrences in the field
**   word_count   distinct keywords matched in the field
**   min_hit_pos  first matched position, from 1
**   exact_hit    1 when the field equals the query (all its words, in order)
**   sum_idf      the idf of each term matched in the field, added (each term
**                once; a prefix's expansions are terms of their own)
**   min_idf, max_idf   the smallest and largest of them
**   tf_idf       each matched term's occurrences times its idf, added
**                (idf is the field's BM25 idf, log((N - df + 0.5) / (df + 0.5))
**                floored just above 0: ranker=bm25's, not Manticore's scale)
**   lccs         the longest run of keywords next to each other in both the
**                query (only stop words between) and the field
**   wlccs        the largest sum of the idfs of such a run
**   min_best_span_pos  where (from 1) the first run of lcs keywords starts
**   exact_order  1 when every keyword occurs in the field in query order
**   atc          aggregate term closeness, log(1 + sum over each keyword
**                occurrence o of idf(o) * sum over each keyword term t of
**                idf(t) * d^-1.75 for d the distance from o to t's nearest
**                other occurrence on each side): higher when rare keywords
**                stand close together
**   min_gaps     the fewest positions not holding a keyword in a stretch
**                of the field that holds every keyword the field matches
**                (a keyword: a query word, with its expansions); 0 when
**                fewer than two match
**   max_window_hits(n)  the most keyword occurrences in n positions
**                running (n a whole number written out, one n per
**                expression)
** Document factors (anywhere):
**   bm25         the BM25F weight squeezed into [0, 999), as the built-in
**                proximity rankers add it
**   bm25f        the BM25F weight itself (k1, b, field_weights, query
**                type weights of the query)
**   max_lcs      the largest sum(lcs*user_weight) can be: the query's
**                keyword count times the sum of every field's weight
**   doc_word_count  the query's distinct keywords matched in some field
**   field_mask   the matched fields, bit f for field f < 32
**   query_word_count  the query's distinct keywords
**   bm25a(k1, b) the document's weight by ranker=bm25 (per-field BM25)
**                with these k1 and b, every field weighing 1
**   bm25f(k1, b) and bm25f(k1, b, {field=weight, ...})  by BM25F with
**                these k1, b and field weights (a field not named: 1);
**                k1 from 0 to 100, b from 0 to 1, weights from 0 to 1e6,
**                all numbers written out, fields by the table's names
** So `sum(lcs*user_weight)*1000+bm25` is ranker=proximity_bm25.
** A division by zero, the log or square root of a number out of range and
** any result that is not finite give 0, so a weight is always a number.
**
** Contract. fts_rankexpr_compile() parses z[0..n) into a tree in the
** caller's arena; errors are LP_BADINPUT with err->pos the byte offset in
** z and a message `ranker expression: near 'xyz' at offset 4: ...`.
** fts_rankexpr_eval() is pure: it reads only the expression and the
** factors it is given (safe on any thread).
*/
#ifndef LP_FTS_RANKEXPR_H
#define LP_FTS_RANKEXPR_H

#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/error.h"

/* One field's factors for the scored document (all 0: no match there). */
typedef struct FtsFieldFactors {
    uint32_t lcs, hitCount, wordCount, minHitPos, exactHit;
    double sumIdf, minIdf, maxIdf;  /* over the terms matched in the field */
    double tfIdf;                   /* sum of each matched term's tf * idf */
    uint32_t lccs;                  /* longest run of keywords next to each other in
                                    ** both the query and the field */
    double wlccs;                   /* the largest sum of idfs of such a run */
    uint32_t minBestSpanPos;        /* where (from 1) the first run of lcs keywords starts */
    uint32_t exactOrder;            /* 1: every keyword occurs, in the query's order */
    double atc;                     /* aggregate term closeness (see atc below) */
    uint32_t minGaps;               /* see min_gaps below */
    uint32_t maxWindowHits;         /* most keyword occurrences in n positions
                                    ** running: max_window_hits(n), n the
                                    ** expression's (1 when it has none) */
} FtsFieldFactors;

/* bm25a(k1, b) and bm25f(k1, b, {...}): the document's weight by the
** query's clauses, rescored with k1 and b: per-field BM25 (bF 0) or BM25F
** (bF 1), field f weighing aW[f] when f < nW, else 1. */
typedef double (*FtsBm25Fn)(void *pCtx, int bF, double k1, double b, const double *aW, int nW);

/* What an expression reads for one document. */
typedef struct FtsDocFactors {
    const FtsFieldFactors *aField;  /* per field */
    const double *aWeight;          /* per field: user_weight */
    int nField;
    double bm25f;                   /* the BM25F weight */
    double maxLcs;                  /* keywords times the fields' weights summed */
    uint32_t docWordCount;          /* distinct keywords matched in some field */
    uint32_t queryWordCount;        /* distinct keywords of the query (not under NOT) */
    FtsBm25Fn xBm25;                /* bm25a()/bm25f(); NULL: they are 0 */
    void *pBm25Ctx;
} FtsDocFactors;

#define FTS_RANKEXPR_MAX_LEN 4096   /* bytes of expression text */
#define FTS_RANKEXPR_MAX_DEPTH 64   /* nesting */

typedef struct FtsRankExpr FtsRankExpr;

int fts_rankexpr_compile(Arena *a, const char *z, size_t n, FtsRankExpr **pp, LpError *err);
/* The same for a table whose full-text fields are azField[0..nField)
** (bm25f's weights name them); fts_rankexpr_compile knows no field. */
int fts_rankexpr_compile_fields(Arena *a, const char *z, size_t n, const char *const *azField,
                                int nField, FtsRankExpr **pp, LpError *err);
double fts_rankexpr_eval(const FtsRankExpr *e, const FtsDocFactors *d);
/* Does e read atc, min_gaps or max_window_hits(n)? (They need a field's
** keyword occurrences sorted, atc's cost growing with occurrences times
** terms: computed only when read.) */
int fts_rankexpr_uses_occurrences(const FtsRankExpr *e);
/* The n of e's max_window_hits(n) (one per expression), or 0. */
uint32_t fts_rankexpr_window(const FtsRankExpr *e);

#endif /* LP_FTS_RANKEXPR_H */
