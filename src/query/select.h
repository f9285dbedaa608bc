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
**
** Full-text. With bMatch, the rows are the documents matching pMatch
** (fts/search.h) that also pass pWhere; WEIGHT() is their score. Without
** ORDER BY, or with ORDER BY WEIGHT() DESC alone (bOrderByWeight), the
** best offset+limit are found by the full-text engine's top-k (maxscore when
** the query is a bag of words; total_found is then a lower bound,
** bTotalExact 0). Any other order needs every match, scored, then sorted.
**
** Hybrid search. With bMatch, bKnn and bFusion, the text search and the
** kNN search each retrieve their best window of rows (both through
** pWhere), and a row's HYBRID_SCORE() is the sum over the searches that
** found it of w / (rankConstant + its rank there, from 1), w the search's
** weight (wFusionText, wFusionKnn): Reciprocal Rank
** Fusion, as Manticore's fusion_method='rrf'. aKnnMore are more kNN
** searches fused the same way (a row's KNN_DIST() is then the smallest
** distance a search that found it measured), and the text search may be
** absent (bMatch 0: kNN searches only). WEIGHT() is the row's text
** score (0 when only the kNN search found it), KNN_DIST() its distance to
** the query vector (computed for the rows only the text found; NULL
** without a vector). Every fused row is a match (total_found); aOrder
** orders them (the binder makes it HYBRID_SCORE() descending by default).
**
** With bMatch and bKnn but not bFusion (Manticore's plain MATCH with knn()),
** the rows are the knnK nearest among those the MATCH finds that pass
** pWhere, WEIGHT() their text score.
**
** Streaming. With bStream (a grouped query: every matching row is wanted
** and their order does not matter), a scan or a MATCH without knn() hands
** each matching row to xRow as it is found, in no set order, ignoring
** aOrder, iOffset and iLimit: no row is kept, so memory does not grow with
** the matches. A kNN or hybrid search keeps its window and hands it over
** in its order as without bStream.
**
** Vectors. With bKnn, the rows are the knnK rows nearest to the query
** vector (by the column's similarity: squared L2, 1 - dot, 1 - cosine)
** among those that pass pWhere; KNN_DIST() is their distance and may be
** used in pWhere itself (a radius). They are then ordered by aOrder (the
** binder makes it KNN_DIST() ascending when the query has none) and cut
** by offset and limit. The column's HNSW graph answers ("knn_hnsw"; the
** filter is an allow-bitmap, and the library scans exactly when few rows
** pass, "knn_exact"); a KNN_DIST() in pWhere needs every distance, so an
** exact scan of every row answers it. Rows whose vector is NULL are never
** neighbours.
*/
#ifndef LP_QUERY_SELECT_H
#define LP_QUERY_SELECT_H

#include <stdint.h>

#include "fts/match.h"
#include "fts/search.h"
#include "query/expr.h"
#include "table/table.h"
#include "util/error.h"

typedef struct QOrder {
    const QExpr *pExpr;
    int bDesc;
} QOrder;

/* The most knn() one hybrid search fuses. */
#define QSELECT_MAX_KNN 8

/* A hybrid search's kNN search beyond the first (whose are QSelect's own
** knn fields). */
typedef struct QKnn {
    int iCol;                   /* the vector column */
    int k;                      /* its k */
    int ef;                     /* {ef=N}, 0 for the default */
    const float *aVec;          /* the query vector, or NULL: ... */
    int64_t iRefId;             /* ... the vector of the row with this id */
    double wFusion;             /* its weight in the fusion (1) */
} QKnn;

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
    int bStream;                /* every match to xRow as found, unordered (above) */
    int bMatch;                 /* a MATCH() clause: pMatch (NULL = every doc) */
    const FtsNode *pMatch;
    const char *zMatch;         /* its text, for error positions */
    size_t nMatch;              /* its length */
    unsigned matchFlags;        /* FTS_MATCH_* it was parsed with, beyond the table's */
    int64_t nsMaxTime;          /* OPTION max_query_time: the search (MATCH
                                ** or scan) stops this long after the query
                                ** started (0: no limit); QMeta.fts.bTimedOut */
    uint64_t nCutoff;           /* OPTION cutoff: the search (MATCH or scan)
                                ** stops after this many accepted matches (0:
                                ** no limit); QMeta.fts.bCutoff */
    FtsRankParams rank;         /* ranker, k1, b, weights */
    int bOrderByWeight;         /* ORDER BY is WEIGHT() DESC only */
    int bKnn;                   /* a knn() clause: the rows are the knnK nearest */
    int iKnnCol;                /* its vector column */
    int knnK;                   /* how many nearest rows */
    int knnEf;                  /* {ef=N}, 0 for the default */
    const float *aKnnVec;       /* the query vector (knnDims floats), or NULL: ... */
    int64_t iKnnRefId;          /* ... the vector of the row with this id */
    int64_t nsKnnEmbed;         /* time the caller spent embedding a knn() text (SHOW META) */
    int bFusion;                /* hybrid search: MATCH and knn() each find their
                                ** best rows, fused by reciprocal rank (below) */
    int rankConstant;           /* RRF's constant (60) */
    int windowSize;             /* rows each side retrieves (0: the larger of k and
                                ** offset+limit) */
    double wFusionText, wFusionKnn; /* each search's weight in the fusion (1) */
    const QKnn *aKnnMore;       /* more kNN searches fused (bFusion), nKnnMore */
    int nKnnMore;
} QSelect;

typedef struct QMeta {
    const char *zPlan;          /* "id_lookup", "full_scan", "fulltext" (static) */
    uint64_t nExamined;         /* rows the filter was evaluated on */
    uint64_t nColumnTested;     /* slots whose numeric attributes were tested
                                ** in column arrays (full scan) */
    uint64_t nTotalFound;       /* rows that matched */
    int bTotalExact;            /* nTotalFound counts every match (else a lower bound) */
    uint64_t nReturned;         /* rows handed to xRow */
    FtsStats fts;               /* full-text counters, when bMatch; a scan sets
                                ** only bCutoff and bTimedOut */
    uint64_t nKnnDist;          /* vector distances computed, when bKnn */
    int64_t nsPlan;             /* planning the full-text query */
    int64_t nsMatch;            /* finding (and scoring) the rows */
    int64_t nsRank;             /* ordering them */
    int64_t nsOutput;           /* evaluating and delivering the output */
    int64_t nsEmbed;            /* embedding the knn() text (QSelect.nsKnnEmbed) */
} QMeta;

typedef int (*QRowFn)(void *ctx, const Value *aVal, int nVal);

/* Returns LP_OK, LP_NOMEM, LP_BADINPUT (a MATCH query the analyzer
** refuses: err says where), LP_CORRUPT, or what xRow returned. */
int query_select(const QSelect *q, QRowFn xRow, void *ctx, QMeta *pMeta, LpError *err);

/* The full-text plan of q as text (EXPLAIN), without running it. */
int query_explain(const QSelect *q, StrBuf *out, LpError *err);

#endif /* LP_QUERY_SELECT_H */
