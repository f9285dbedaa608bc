/*
** search.h — running a full-text query over one segment: planning the
** MATCH tree into iterators, BM25 scoring with per-query weights, and
** top-k retrieval (block-max MaxScore where the query allows it).
**
** Scoring (ranker bm25f, the default). A clause (a term, an expanded
** prefix term, a phrase or proximity clause, an anchored word or phrase,
** a '<<' or NEAR chain) contributes
**     type_weight * idf * x*(k1+1) / (x + k1),
**     x = sum over the fields it matches in of
**         field_weight * tf / (1 - b + b*dl/avgdl)
** with idf = max(ln((N - df + 0.5)/(df + 0.5)), 1e-6), df the number of
** documents holding the clause in any of its fields (exact for a field
** set 0..k, else the largest per-field count: search.c's term_df), dl
** the document's length in the field and avgdl the field's average over
** the segment. A phrase's tf is
** its number of matches and its idf the sum of its words' (a chain's:
** 1, and the sum over all its operands' words; an anchored word is a
** term matched at one place; under a position limit, @title[50], a word,
** phrase or chain counts only its matches in the field's first 50
** positions, with the idf it has without the limit). MAYBE adds its optional side's weight
** where it matches; a quorum sums the words that match. Ranker bm25
** instead sums per field field_weight * idf_field * the saturated tf of
** that field alone. Manticore's proximity rankers (proximity_bm25, sph04,
** proximity, wordcount, matchany, fieldmask) weigh each field's keyword
** positions (lcs, hit and word counts, first position, exact field) with
** the BM25F weight squeezed under 1000: search.c's factor_weight. A document's weight is the sum of the contributions of
** the positive clauses it matches. Weights and k1/b are query-time
** parameters: nothing stored depends on them.
**
** Plans (reported as the strategy in SHOW META):
**   maxscore        an OR of terms (bag of words): block-max MaxScore; only
**                   documents that can still enter the top k are scored,
**                   total_found is a lower bound
**   and_intersect   an AND of terms: leapfrog intersection, all scored
**   phrase_topk     one positional clause (phrase, proximity, anchor,
**                   chain, a word under a position limit): the positions of a
**                   document holding all its words are read only when its
**                   score, bounded by its rarest word's frequency, can
**                   still enter the top k; total_found is a lower bound
**                   when some were not read
**   bool_fallback   anything else (phrases among other clauses, NOT,
**                   nested groups, MAYBE, quorum), and any query under a
**                   proximity ranker: every match is enumerated and scored
**   full_scan       MATCH('') or a query of stop words only: every document
**   no_ranking      OPTION ranker=none: matches in ordinal order, weight 1
** zWhyNotFast says why maxscore was not used when it was not.
**
** Ownership: an FtsQuery lives in the caller's arena plus cursors it opens;
** fts_query_free closes them. It borrows the source (valid while the
** caller's snapshot is held) and the analyzer.
*/
#ifndef LP_FTS_SEARCH_H
#define LP_FTS_SEARCH_H

#include <stdint.h>

#include "fts/match.h"
#include "fts/source.h"
#include "text/analyzer.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/strbuf.h"

/* The rankers after NONE are Manticore's proximity rankers (search.c's
** factor_weight has their formulas): every match is scored. */
typedef enum FtsRanker {
    FTS_RANK_BM25F = 0, FTS_RANK_BM25, FTS_RANK_NONE, FTS_RANK_PROXIMITY_BM25, FTS_RANK_SPH04,
    FTS_RANK_PROXIMITY, FTS_RANK_WORDCOUNT, FTS_RANK_MATCHANY, FTS_RANK_FIELDMASK,
    FTS_RANK_EXPR /* OPTION ranker=expr('...'): FtsRankParams.pExpr (rankexpr.h) */
} FtsRanker;

/* The names fts_ranker_from_name takes, for messages. */
#define FTS_RANKER_NAMES \
    "bm25f, bm25, none, proximity_bm25, sph04, proximity, wordcount, matchany, fieldmask or expr('...')"

/* The ranker named z (OPTION ranker=..., any case), or -1 (also for
** "expr", which needs its expression); and back ("expr" for FTS_RANK_EXPR). */
int fts_ranker_from_name(const char *z);
const char *fts_ranker_name(FtsRanker r);

typedef struct FtsRankParams {
    FtsRanker ranker;
    double k1;                              /* default 1.2 */
    double b;                               /* default 0.75 */
    double wTerm, wPhrase, wPrefix;         /* query-type weights, default 1 */
    int nExpansionLimit;                    /* most terms one prefix expands to */
    int expand;                             /* FTS_EXPAND_* bits (expand_keywords) */
    const struct FtsRankExpr *pExpr;        /* FTS_RANK_EXPR: compiled (fts_rankexpr_compile),
                                            ** living as long as the query */
    double aFieldWeight[FTS_MAX_FIELDS];    /* default 1; last, as fts_query_new copies
                                            ** only the source's fields' weights */
} FtsRankParams;

/* expand_keywords, as in Manticore: each plain word of the query (not in a
** phrase, quorum or chain, not anchored, not under NOT, not itself '=word')
** also matches, in an OR at the same query position,
**   FTS_EXPAND_EXACT  its exact form '=word' (tables with
**                     index_exact_words='1' and stemming; else nothing),
**   FTS_EXPAND_STAR   the terms that hold it, as '*word*' would, on a table
**                     with min_infix_len where the word is at least that
**                     long; else the terms it begins, as 'word*' would, on
**                     a table with min_prefix_len where it is at least that
**                     long; else nothing (fts_expand_star, as Sphinx and
**                     Manticore expand: infixes first, and neither where
**                     the table sets neither length).
** A document holding the word as written so scores above one holding only
** another form of it. */
#define FTS_EXPAND_EXACT 1
#define FTS_EXPAND_STAR 2

enum { FTS_STAR_NONE = 0, FTS_STAR_PREFIX, FTS_STAR_INFIX };

/* What expand_keywords' star part makes of the word z[0..n) (its
** unstemmed term): one of FTS_STAR_*. */
int fts_expand_star(const Analyzer *an, const char *z, int n);

/* "*" + z[0..n) + "*", NUL-terminated, in a: the pattern of an infix
** search for the word (FTS_STAR_INFIX); NULL when out of memory. */
char *fts_star_pattern(Arena *a, const char *z, int n);

/* Does expand_keywords apply to leaf x: a plain word, not anchored, not
** written '=word' (phrases, quorums and chain operands are other kinds or
** not leaves of their own)? The planner also needs it to analyse to one
** term and stand outside any NOT; HIGHLIGHT() skips negated leaves. */
int fts_expand_applies(const FtsNode *x);

/* Is byte k of phrase or quorum x's text inside a wildcard word ("*ak",
** "ka*ak", "*ig*": a run of non-blanks holding a '*' that neither stands
** alone nor only ends it, as a prefix's does)? Then its bytes are
** [*pLo, *pHi). Each is one word of the phrase, its pattern
** fts_wildcard_pattern's of that text (the planner's, HIGHLIGHT()'s and
** SHOW META's keywords); the words its parts analyse to are not. */
int fts_phrase_wildcard_at(const FtsNode *x, uint32_t k, uint32_t *pLo, uint32_t *pHi);

/* Is the word t of phrase or quorum x (a token of x->z's analysis; any
** other leaf: no) a prefix, one that a '*' ends ("hello wor*")? The planner, HIGHLIGHT() and SHOW META's
** keywords ask the same; its terms are those of its unstemmed text. */
int fts_phrase_word_is_prefix(const FtsNode *x, const Token *t);

/* The FTS_EXPAND_* bits of an expand_keywords value ("0", "1" = both,
** "exact", "star", or "exact,star"; any case), or -1. */
int fts_expand_from_name(const char *z);

/* Wildcards (FTSN_WILDCARD: "*abc*", "ab*cd", "t?st", "tes%"; tables with
** min_infix_len).
** fts_wildcard_pattern gives leaf n's pattern: each part between wildcard
** characters ('*', '?', '%') normalised as a prefix is (folded, not
** stemmed), the parts joined by those characters (a run of '*'s as one),
** in *pz (in a, NUL-terminated; *pn bytes); *pnFirst (may be NULL) is the
** length of its first part (0 when it starts with a wildcard). LP_BADINPUT
** (err->pos: the leaf) when the table has no min_infix_len, a part is not
** one word, the longest part is shorter than min_infix_len, or a pattern
** with '?' or '%' is longer than FTS_GLOB_MAX bytes; LP_NOMEM. The
** planner, HIGHLIGHT() and CALL KEYWORDS all read a wildcard through it.
** fts_glob_match: does t[0..nt) match pattern p[0..np), each '*' any bytes
** (none too), each '?' one character, each '%' one or none? Terms hold
** none of them (fts_is_wild_char).
** A REGEX(/…/) leaf (fts_match_is_regex) is read through them too: its
** pattern is its text, which fts_glob_match matches whole as a regular
** expression (text/regexp.h); it needs min_infix_len or min_prefix_len
** (Manticore's rule), and its literal start (*pnFirst: a run of ASCII
** letters and digits every match begins with, 0 with a '|') is at
** fts_pattern_start(pattern), which is the pattern itself for the others;
** its other literal runs narrow a scan as a wildcard's parts do. */
#define FTS_GLOB_MAX 256
int fts_wildcard_pattern(Arena *a, const Analyzer *an, const FtsNode *n, const char **pz, int *pn,
                         int *pnFirst, LpError *err);
int fts_glob_match(const char *p, int np, const uint8_t *t, int nt);
const char *fts_pattern_start(const char *z, int n);
int fts_is_wild_char(char c);

#define FTS_DEFAULT_EXPANSION_LIMIT 1000

void fts_rank_defaults(FtsRankParams *p);

typedef struct FtsQuery FtsQuery; /* opaque */

/* Plans root (NULL: every document) against src. Words are analysed with
** an; prefixes and wildcards expanded (at most nExpansionLimit terms
** each). Errors: LP_BADINPUT (a prefix shorter than min_prefix_len, a
** wildcard fts_wildcard_pattern refuses, invalid
** UTF-8 in the query: err->pos is the offset in the MATCH text), LP_NOMEM,
** LP_CORRUPT (a sealed segment). */
int fts_query_new(Arena *a, const FtsNode *root, const char *zMatch, const Analyzer *an,
                  FtsSource *src, const FtsRankParams *rank, FtsQuery **ppQuery, LpError *err);
void fts_query_free(FtsQuery *q);

/* Decides whether a matching document counts (not deleted, passes the
** attribute filter). */
typedef int (*FtsAcceptFn)(void *ctx, uint32_t doc);

typedef struct FtsHit {
    uint32_t doc;
    double score;
    int64_t tie;            /* breaks equal scores, smaller first: the ordinal,
                            ** or the key fts_query_set_tie_key gives */
} FtsHit;

/* The key that orders documents of equal score (the table passes the id
** when its ordinals are not in id order, so ties go to the smaller id as
** in Manticore). */
typedef int64_t (*FtsTieKeyFn)(void *ctx, uint32_t doc);

/* Makes fts_query_topk break ties by xKey(ctx, doc) instead of by
** ordinal; then no document whose bound equals the k-th score can be
** skipped, so pruning is a little less aggressive. */
void fts_query_set_tie_key(FtsQuery *q, FtsTieKeyFn xKey, void *ctx);

/* Tells fts_query_topk that its accept check is cheap (the caller tests
** column arrays, not rows): maxscore then asks it before scoring a
** candidate instead of after, so a selective filter saves the scoring of
** the documents it rejects. The answer is the same either way. */
void fts_query_set_accept_first(FtsQuery *q, int bFirst);

/* Stops the search once lp_now_ns() passes nsDeadline (0: never), as
** OPTION max_query_time asks: the documents found by then are the answer
** (the best among them for top-k), FtsStats.bTimedOut says so and
** bTotalExact is 0. The clock is read every 64 candidates. */
void fts_query_set_deadline(FtsQuery *q, int64_t nsDeadline);

/* Stops fts_query_topk once nCutoff matches were accepted (0: never), as
** OPTION cutoff asks, with FtsStats.bCutoff set and bTotalExact 0. Only
** the matches top-k scores are counted: those its bounds pass over (WAND,
** block-max, phrase bounds) could not have entered the top k and are not.
** So the answer is exactly the top k of every match up to the document
** where it stopped, which holds nCutoff matches or more: a cutoff bounds
** the scoring work and keeps the pruning (Lucene's early termination
** counts collected documents alike). (fts_query_all leaves accepting to
** its caller, which stops it by returning non-zero from xHit.) */
void fts_query_set_cutoff(FtsQuery *q, uint64_t nCutoff);

/* Names the fields (azName[f] for field f, nName of them; the array must
** outlive q) in what EXPLAIN and EXPLAIN_SCORE() print: "field title:"
** instead of "field 0:", "field_name":"title" beside "field":0. */
void fts_query_set_field_names(FtsQuery *q, const char *const *azName, int nName);

typedef struct FtsStats {
    const char *zStrategy;      /* static string, see above */
    const char *zWhyNotFast;    /* static string or NULL */
    uint64_t nPostings;         /* postings entries read (next/advance results) */
    uint64_t nCandidates;       /* documents that reached the accept check */
    uint64_t nAccepted;         /* of those, accepted */
    int bTotalExact;            /* nAccepted counts every match */
    int nExpanded;              /* terms prefixes expanded to */
    int bExpansionCapped;       /* some prefix hit nExpansionLimit */
    int bTimedOut;              /* stopped at the deadline: results are partial */
    int bCutoff;                /* stopped at the cutoff: results are partial */
} FtsStats;

/* The k best accepted documents, best first (score descending, then tie
** key ascending), into aHit (room for k); *pnHit = how many. */
int fts_query_topk(FtsQuery *q, int k, FtsAcceptFn xAccept, void *ctx, FtsHit *aHit, int *pnHit,
                   FtsStats *pStats, LpError *err);

/* Every matching document in ordinal order, with its score, to xHit
** (accept checks are the caller's). A non-zero return stops the run. */
typedef int (*FtsHitFn)(void *ctx, uint32_t doc, double score);
int fts_query_all(FtsQuery *q, FtsHitFn xHit, void *ctx, FtsStats *pStats, LpError *err);

/* A JSON breakdown of doc's score: every matching clause with its field,
** type, term, tf, dl, idf, base BM25, weights and contribution. */
int fts_query_explain_doc(FtsQuery *q, uint32_t doc, StrBuf *out, LpError *err);

/* Manticore's PACKEDFACTORS() text for doc: the document's factors (bm25
** as a 0..999 integer, bm25a with the query's k1 and b, field_mask,
** doc_word_count), then fieldN=(...) for each field it matches (every
** field factor of ranker=expr, max_window_hits over the expression's
** window or 1; atc 0 when bNoAtc), then wordN=(tf, idf) for each keyword it
** holds, N counting the query's keywords from 0. Nothing for a document
** the query does not match. LP_BADINPUT unless the ranker weighs factors
** (expr, export or a proximity ranker); LP_NOMEM, LP_CORRUPT. */
int fts_query_packed_factors(FtsQuery *q, uint32_t doc, int bNoAtc, StrBuf *out, LpError *err);

/* The plan as indented text (EXPLAIN), one line per node. */
void fts_query_plan_text(FtsQuery *q, StrBuf *out);

/* The strategy fts_query_topk would choose, and why not maxscore. */
const char *fts_query_strategy(const FtsQuery *q, const char **pzWhyNot);

/* The keywords of a MATCH tree with their statistics in src (SHOW META's
** keyword[i], docs[i], hits[i]): each distinct term once, in query order,
** negated ones included. docs: the documents holding the term in some
** field of its scope (counted as a clause's df: exact for fields 0..k,
** else the largest field's count); hits: its occurrences there. A prefix
** is one keyword, its text and '*', with docs and hits summed over the
** terms it expands to (at most nExpansionLimit per field; a document
** holding two of them counts twice). Stops after nMax keywords or when
** xKw returns non-zero. LP_OK, LP_NOMEM, the analyzer's error (err->pos
** in the word), LP_CORRUPT. */
typedef int (*FtsKeywordFn)(void *ctx, const char *z, int n, uint64_t docs, uint64_t hits);

/* One term's docs and hits as fts_keywords counts them, over the fields
** of fs (NULL: every field). LP_OK (0 and 0 for an absent term) or the
** source's error. */
int fts_term_stats(FtsSource *src, const FtsFieldSet *fs, const char *z, int n, uint64_t *pDocs,
                   uint64_t *pHits, LpError *err);
int fts_keywords(const FtsNode *root, const Analyzer *an, FtsSource *src, int nExpansionLimit,
                 int nMax, FtsKeywordFn xKw, void *ctx, LpError *err);

/* The terms prefix or wildcard leaf x (FTSN_PREFIX, FTSN_WILDCARD) expands
** to in src, as the planner expands it (with its checks and errors: a
** prefix of several words or under min_prefix_len, fts_wildcard_pattern's):
** at most nLimit distinct terms over x's fields (0: the default), each
** once, in byte order, with fts_term_stats' docs and hits, to xTerm (a
** non-zero return stops and is returned). *pzPattern: the normalised
** pattern ("cat*", "*cat*"), in a. CALL KEYWORDS lists them. LP_OK,
** LP_BADINPUT (err->pos: the leaf), LP_NOMEM, LP_CORRUPT. */
int fts_expansions(Arena *a, const FtsNode *x, const Analyzer *an, FtsSource *src, int nLimit,
                   const char **pzPattern, FtsKeywordFn xTerm, void *ctx, LpError *err);

#endif /* LP_FTS_SEARCH_H */
