/*
** search.c — see search.h.
**
** Two stages. Planning (fts_query_new) turns the MATCH tree into a tree of
** PlanNodes: words are analysed (a word that yields several terms becomes
** a phrase, one that yields none — a stop word — disappears), each clause
** is split per field it may match in, prefixes are expanded into the terms
** they cover, and every leaf gets its idf and weight. Nothing is read but
** the dictionary. Execution instantiates the plan into iterators over
** postings cursors (an iterator per PlanNode), which the top-k loops
** drive. EXPLAIN_SCORE instantiates a fresh copy and advances it to one
** document.
**
** Iterators share one interface (It): doc is the current document,
** FTS_BEFORE_FIRST before the first call, FTS_NO_DOC at the end; next and
** advance move forward only; score is valid at the current document.
*/
#include "fts/search.h"

#include "fts/rankexpr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/regexp.h"
#include "text/utf8.h"
#include "util/clock.h"

_Static_assert(FTS_MATCH_MAX_ZONE_NAME == ANALYZER_ZONE_NAME_MAX, "zone names: one limit");
#include "util/hashmap.h"
#include "util/vec.h"

typedef enum PNKind {
    PN_LEAF, PN_PHRASE, PN_GROUP, PN_AND, PN_OR, PN_MAYBE, PN_QUORUM, PN_ALL, PN_NONE
} PNKind;
typedef enum QType { QT_TERM, QT_PREFIX, QT_PHRASE, QT_WILDCARD } QType;

static const char *const azQType[] = {"term", "prefix", "phrase", "wildcard"};

/* Plan nodes. A clause (a term, an expanded prefix term, a phrase) is a
** GROUP whose children are its LEAF (term) or PHRASE nodes, one per field
** it occurs in; the group is the unit of scoring: BM25F combines its
** fields' frequencies before saturating them, BM25 sums per-field scores.
** Groups are combined by AND, OR, MAYBE (aChild[0] required, aChild[1]
** only scored) and QUORUM (at least nThreshold of its children).
**
** A PHRASE node is also what the other positional clauses become, all
** matched over the words' positions in one field: a word or exact phrase
** anchored to the field's start or end (anchor), and a chain of operands
** joined by '<<' or NEAR/N (nOp > 0: operand o is words
** [aOpStart[o], aOpStart[o+1]), an exact phrase; aDist holds NEAR's
** distances, NULL for '<<'). A chain counts once per field it holds in:
** its tf is 1. Under a position limit (@field[N]: aPosLimit) every clause
** is a PHRASE node, a word or an expanded prefix term too (of one word),
** and each word's positions past its limit are dropped as they are read,
** so the limited word or phrase counts only the matches before it. */
typedef struct PlanNode PlanNode;
static int phrase_required(const PlanNode *pn);
struct PlanNode {
    PNKind kind;
    QType qtype;                /* GROUP, LEAF, PHRASE */
    int iField;                 /* LEAF, PHRASE */
    const uint8_t *key;         /* LEAF: field byte + term */
    int nKey;
    FtsTermInfo info;           /* LEAF: what the dictionary said of the key */
    const uint8_t **aKey;       /* PHRASE: one key per word (a prefix's or wildcard's:
                                ** the pattern, "wor*", which no term is) */
    FtsTermInfo *aInfo;         /* PHRASE: per word, as info */
    int *anKey;
    uint32_t *aQPos;            /* PHRASE: query positions of the words (gaps = stop
                                ** words), from the clause's first word */
    uint32_t qpos;              /* LEAF: the word's position in the whole query ... */
    uint32_t *aGQPos;           /* PHRASE: ... and each word's (set for the proximity
                                ** rankers only, which compare query and document order) */
    int nTerm;
    int nSlop;                  /* PHRASE: proximity window, 0 = exact */
    int anchor;                 /* PHRASE: FTS_ANCHOR_* (exact phrases only) */
    int nOp;                    /* PHRASE: operands of a chain, 0 for a phrase */
    int *aOpStart;              /* chain: nOp + 1 word offsets */
    const int *aDist;           /* chain: NEAR's nOp - 1 distances; NULL: '<<' */
    const int *aOpSame;         /* chain: per operand, the first operand with the same
                                ** words (itself if none); NULL: no operand repeats */
    const int *aOpAnchor;       /* chain: per operand, FTS_ANCHOR_* of an anchored word or
                                ** exact phrase (^a << b); NULL: no operand is anchored */
    uint32_t nEndTail;          /* PHRASE anchored at the end: the positions its last
                                ** word spans past its own (end_tail) */
    const uint32_t *aOpTail;    /* chain: per operand, the same (NULL: all 0) */
    int bNotNear;               /* chain of two: NOTNEAR/aDist[0], the second operand's
                                ** words optional (absent or far: the first matches) */
    int iSp;                    /* chain: SP_SENTENCE or SP_PARAGRAPH (any order, in one
                                ** part); words [aOpStart[nOp], nTerm) are the
                                ** boundaries' terms, optional; 0: neither */
    const uint8_t *aWordAnchor; /* PHRASE: per word, FTS_ANCHOR_* of an anchor written on
                                ** it ("a ^b c$"~3, WordMarks): only its occurrences first
                                ** / last in the field count; NULL: no word has one */
    const uint32_t *aWordTail;  /* ... and for '$', the positions it spans past its own
                                ** (end_tail's; NULL: all 0) */
    const uint32_t *aPosLimit;  /* per word: only its positions below this count
                                ** (@field[N]; 0: all); NULL: no word is limited */
    const FtsZones *pZones;     /* PHRASE: ZONE:(…): its words count only inside spans
                                ** of these zones (boundaries' terms always); NULL: all */
    int nZone;                  /* PHRASE: how many of them have spans in the field ... */
    const uint8_t **aZoneKey;   /* ... and their terms: [2z] '<name', [2z+1] '</name' */
    int *anZoneKey;
    FtsTermInfo *aZoneInfo;
    int nThreshold;             /* QUORUM: children that must match (2..nChild-1) */
    double idf;                 /* LEAF: from its field's df; PHRASE: sum over words;
                                ** GROUP: the clause's (term_df; a phrase: its fields' smallest) */
    double boost;               /* GROUP: word^N's N, already in idf (and in its
                                ** fields'); 0: none */
    double typeWeight;          /* GROUP: OPTION query_type_weights */
    int nRepeat;                /* GROUP: times an OR holds this clause (a bag of
                                ** words repeating a word counts it each time) */
    uint32_t df;                /* LEAF: postings */
    PlanNode **aChild;          /* GROUP: per field; AND (positives then negatives); OR */
    int nChild;
    int nNeg;                   /* AND: the last nNeg children are NOT */
    const FtsZones *pSpan;      /* AND: ZONESPAN: its positive children match in one span */
    const struct PhraseAlt *aAlt; /* PHRASE: NULL, or per word the terms it stands for
                                ** (n 0: the word's own key) */
    const PlanNode *pOwner;     /* a clause kept for its keywords only (apMerged): the
                                ** node it stands in, whose guards are its own (NULL:
                                ** none known) */
    int bOrder;                 /* AND: ORDER_BEFORE: '<<' over any operands (FTSN_ORDER):
                                ** its children, in this order, hold occurrences each
                                ** after the previous one's end in one field
                                ** (order_holds); ORDER_NEAR: NEAR/N over any operands
                                ** (FTSN_NEAR_ANY, aDist: the links): their
                                ** occurrences in one field make a chain (near_any);
                                ** ORDER_NOTNEAR: NOTNEAR/aDist[0] over any operands:
                                ** the first child, where an occurrence of it in one
                                ** field has none of the second (its one negative
                                ** child, which does not exclude documents) near it
                                ** (notnear_any_holds) */
};

/* PlanNode.bOrder: an AND whose children's occurrences are read. */
#define ORDER_BEFORE 1
#define ORDER_NEAR 2
#define ORDER_NOTNEAR 3

/* The terms a word of a phrase or chain stands for when it is a prefix or
** a wildcard ("hello wor*", a NEAR/3 *ing): their keys in the node's
** field, found when planning (at most nExpansionLimit), read as one list
** (UnionPostings). */
typedef struct AltTerm {
    const uint8_t *key;
    int nKey;
    FtsTermInfo info;
} AltTerm;

typedef struct PhraseAlt {
    int n, cap;
    AltTerm *a;
} PhraseAlt;

/* A word of a phrase or chain that is a prefix ("hello wor*") or a
** wildcard (a NEAR/3 *ing): what phrase_pn expands it from. */
typedef struct WordExp {
    const char *zPre;   /* the terms' literal start, normalised, unstemmed;
                        ** NULL: a plain word */
    int nPre;
    const char *zGlob;  /* a wildcard's pattern (fts_wildcard_pattern), or
                        ** NULL: a prefix */
    int nGlob;
    /* expand_keywords in a phrase (phrase_expansions): the word's own term
    ** and its exact form (either may be NULL) beside the star part's terms
    ** (zPre; NULL: none) */
    const char *zSelf;
    int nSelf;
    const char *zExact;
    int nExact;
} WordExp;

/* Anchors written on single words of a phrase, quorum or chain operand
** ("a ^b c$"~3: FtsNode.aMark), per analysed word (word_marks). */
typedef struct WordMarks {
    uint8_t *aAnchor;   /* FTS_ANCHOR_* bits; NULL: no word has one */
    uint32_t *aTail;    /* for '$': the positions the word spans past its
                        ** own (word_tail); NULL: all 0 */
} WordMarks;

/* Does e make its word stand for several terms? */
static int wexp_used(const WordExp *e) {
    return e->zPre || e->zSelf;
}

/* PlanNode.iSp */
enum { SP_NONE = 0, SP_SENTENCE, SP_PARAGRAPH };

typedef struct FtsFactors FtsFactors; /* the proximity rankers' state */
static void factors_free(FtsFactors *fx);

/* Does r weigh keyword positions (Manticore's proximity rankers)? Only
** then does planning note each word's query position. */
static int is_factor_ranker(FtsRanker r) {
    return r >= FTS_RANK_PROXIMITY_BM25;
}

typedef struct It It;
typedef struct ItVt {
    uint32_t (*next)(It *);
    uint32_t (*advance)(It *, uint32_t);
    double (*score)(It *);
} ItVt;

struct It {
    const ItVt *vt;
    uint32_t doc;
    const PlanNode *pn;
    FtsQuery *q;
};

struct FtsQuery {
    Arena *a;
    const char *zMatch;
    const Analyzer *an;
    FtsSource *src;
    PlanNode *root;
    /* The per-field arrays below hold src->nFields entries, in the arena:
    ** a query zeroes what it uses, not FTS_MAX_FIELDS of each (about 7 KB,
    ** a tenth of a term query's time on a small collection). */
    double *aAvgLen;
    double normA;               /* norm_len = normA + aNormB[f] * dl: 1 - b ... */
    double *aNormB;             /* ... and b / avgdl, so scoring a document
                                ** divides once fewer (a division's latency was
                                ** a fifth of a term query's time) */
    VEC(FtsPostings *) cursors; /* every cursor opened, closed by fts_query_free */
    FtsTieKeyFn xTie;           /* fts_query_set_tie_key, or NULL: the ordinal */
    void *pTieCtx;
    int bAcceptFirst;           /* fts_query_set_accept_first */
    HashMap lookups;            /* while planning: key -> FtsTermInfo* (arena), so each
                                ** key is looked up once */
    uint32_t *aNormDoc;         /* doc_norm's cache: the document ... */
    double *aNorm;              /* ... and its norm_len, per field */
    const double *aFw;          /* each field's weight as scored: rank.aFieldWeight, or
                                ** bm25a()/bm25f()'s while they rescore */
    FtsStats st;
    int64_t nsDeadline;         /* fts_query_set_deadline, or 0 */
    uint32_t nTick;             /* must_stop's counter */
    uint64_t nCutoff;           /* fts_query_set_cutoff, or 0 */
    const char *const *azFieldName; /* fts_query_set_field_names, or NULL */
    int nFieldName;
    uint32_t nQPos;             /* while planning: the next word's query position */
    int nNotDepth;              /* while planning: NOTs around the clause */
    int bStrictChoice;          /* while planning a bChoices OR's chains: one whose
                                ** OR-list operand (orOps) is only stop words is
                                ** left out whole */
    uint32_t qposExpand;        /* while planning a word's star expansion: its query
                                ** position (plan_prefix takes none); else UINT32_MAX */
    PlanNode **apMerged;        /* clauses merge_repeats folded into an earlier one (their */
    int nMerged, capMerged;     /* words' query positions are keywords too), in the arena */
    uint32_t *aQWord;           /* per query position < nQPos (in the arena): where a
                                ** word not under NOT stands, found in the index or not,
                                ** 1 + the first position of that word (a word repeated
                                ** in the query is one word: word_count); else 0 */
    uint32_t nQWordCap;         /* room in aQWord */
    HashMap qwords;             /* while planning, for a proximity ranker: the distinct
                                ** terms of those words (arena copies) to 1 + their
                                ** first position ... */
    uint32_t nQWordUniq;        /* ... and their count (query_word_count) */
    FtsFactors *fx;             /* proximity rankers: built by the first run */
    uint64_t *aSpanKey;         /* ZONESPAN: scratch of span sets (span_of), in the arena */
    size_t nSpanKey, nSpanKeyCap;
    int nOrderInst;             /* while instantiating: ORDERs around the node (its
                                ** leaves' cursors then read positions) */
    int rc;                     /* sticky error from iteration */
    LpError *err;               /* where iteration errors go */
    LpError errIter;
    /* Last, and copied in part: the scalars and the weights of the
    ** source's fields (a whole FtsRankParams is 2 KB, most of it the
    ** weights of fields no table has). */
    FtsRankParams rank;
};

/* ------------------------------------------------------------------ */
/* BM25                                                                */

/* Length normalisation of field iField for a document of dl words:
** 1 - b + b*dl/avgdl (an avgdl of 0, an empty field, taken as 1). */
static double norm_len(const FtsQuery *q, int iField, double dl) {
    return q->normA + q->aNormB[iField] * dl;
}

/* The BM25 saturation of a (normalised) frequency x = num/den:
** x*(k1+1)/(x + k1), with one division. */
static double saturate_frac(const FtsQuery *q, double num, double den) {
    return num * (q->rank.k1 + 1) / (num + q->rank.k1 * den);
}

static double saturate(const FtsQuery *q, double x) {
    return saturate_frac(q, x, 1);
}

/* Robertson-Sparck Jones idf, floored just above 0 so a term in more than
** half the documents still counts a little (as SQLite FTS5 does). */
static double idf_of(uint32_t nDocs, uint32_t df) {
    double v = log(((double)nDocs - df + 0.5) / ((double)df + 0.5));
    return v > 1e-6 ? v : 1e-6;
}

/* ------------------------------------------------------------------ */
/* Iterators                                                           */

/* Opens a key planning found (info->df > 0) where the dictionary search
** left it, or searches for it. */
static FtsPostings *open_cursor(FtsQuery *q, const uint8_t *key, int nKey, const FtsTermInfo *info,
                                int bPos) {
    FtsPostings *c = info->df ? q->src->vt->xOpenFound(q->src, key, nKey, info, bPos, &q->errIter)
                              : q->src->vt->xOpen(q->src, key, nKey, bPos, &q->errIter);
    if (!c) {
        q->rc = q->errIter.code ? q->errIter.code : LP_NOMEM;
        return NULL;
    }
    if (VEC_PUSH(&q->cursors, c)) {
        c->vt->xClose(c);
        q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
        return NULL;
    }
    return c;
}

/* -- a word that stands for several terms: one list of theirs --
** What a PhraseIt reads for a prefix or wildcard word (PhraseAlt): a
** document is on the list when some term's list holds it, its tf the sum
** of theirs, its positions theirs merged. xPositions sets tf to how many
** positions it gave: two terms at one position (a word indexed under
** both) count once. The terms' cursors are open_cursor's, closed with the
** query. They are kept in a min-heap by document, the exhausted ones
** moved past its end, so a move touches only the cursors behind the
** target (a prefix may have a thousand terms, most of them rare). */
/* A heap entry: a cursor and, beside it, its document (the heap compares
** without touching the cursor). */
typedef struct UnionSlot {
    uint32_t doc;
    FtsPostings *c;
} UnionSlot;

typedef struct UnionPostings {
    FtsPostings base;
    UnionSlot *a;       /* every cursor: the heap a[0..n) (a[0] has the smallest
                        ** doc), then the exhausted ones */
    int n;              /* cursors in the heap */
    int nAll;           /* cursors in all */
    int bStarted;       /* each cursor has been moved once */
} UnionPostings;

/* Moves slot i's exhausted cursor past the heap's end (the last slot of
** the heap takes its place). */
static void union_drop(UnionPostings *u, int i) {
    UnionSlot t = u->a[i];
    u->a[i] = u->a[--u->n];
    u->a[u->n] = t;
}

/* Restores the heap below slot i, whose cursor has moved on (its doc is
** read again); drops it when it is exhausted. */
static void union_sift(UnionPostings *u, int i) {
    UnionSlot *a = u->a;
    a[i].doc = a[i].c->doc;
    if (a[i].doc == FTS_NO_DOC) {
        union_drop(u, i);
        if (i >= u->n) return;
        /* the last one, moved up here, may be smaller than i's parent */
        while (i > 0 && a[(i - 1) / 2].doc > a[i].doc) {
            UnionSlot t = a[i];
            a[i] = a[(i - 1) / 2];
            a[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    }
    UnionSlot x = a[i];
    for (;;) {
        int l = 2 * i + 1, m = l;
        if (l >= u->n) break;
        if (l + 1 < u->n && a[l + 1].doc < a[l].doc) m = l + 1;
        if (a[m].doc >= x.doc) break;
        a[i] = a[m];
        i = m;
    }
    a[i] = x;
}

/* The tf of the cursors on document d in the heap below slot i. */
static uint32_t union_tf(const UnionPostings *u, int i, uint32_t d) {
    if (i >= u->n || u->a[i].doc != d) return 0;
    return u->a[i].c->tf + union_tf(u, 2 * i + 1, d) + union_tf(u, 2 * i + 2, d);
}

static uint32_t union_settle(UnionPostings *u) {
    uint32_t d = u->n ? u->a[0].doc : FTS_NO_DOC;
    u->base.tf = d == FTS_NO_DOC ? 0 : union_tf(u, 0, d);
    return u->base.doc = d;
}

/* Moves every cursor to its first document >= target (0: its first) and
** makes the heap. */
static uint32_t union_start(UnionPostings *u, uint32_t target) {
    u->bStarted = 1;
    for (int i = 0; i < u->n;) {
        FtsPostings *c = u->a[i].c;
        c->vt->xNext(c);
        if (c->doc < target) c->vt->xAdvance(c, target);
        if (c->doc == FTS_NO_DOC) {
            union_drop(u, i);
        } else {
            u->a[i++].doc = c->doc;
        }
    }
    for (int i = u->n / 2 - 1; i >= 0; i--) union_sift(u, i);
    return union_settle(u);
}

static uint32_t union_next(FtsPostings *p) {
    UnionPostings *u = (UnionPostings *)p;
    if (!u->bStarted) return union_start(u, 0);
    uint32_t d = p->doc;
    while (u->n && u->a[0].doc == d) {
        u->a[0].c->vt->xNext(u->a[0].c);
        union_sift(u, 0);
    }
    return union_settle(u);
}

static uint32_t union_advance(FtsPostings *p, uint32_t target) {
    UnionPostings *u = (UnionPostings *)p;
    if (!u->bStarted) return union_start(u, target);
    while (u->n && u->a[0].doc < target) {
        u->a[0].c->vt->xAdvance(u->a[0].c, target);
        union_sift(u, 0);
    }
    return union_settle(u);
}

static int u32_cmp(const void *pa, const void *pb) {
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return (a > b) - (a < b);
}

/* Appends the positions of the cursors on document d below slot i to
** aPos + *pn; *pnList counts the cursors. */
static int union_pos(UnionPostings *u, int i, uint32_t d, uint32_t *aPos, uint32_t *pn, int *pnList,
                     LpError *err) {
    if (i >= u->n || u->a[i].doc != d) return LP_OK;
    FtsPostings *c = u->a[i].c;
    int rc = c->vt->xPositions(c, aPos + *pn, err);
    if (rc != LP_OK) return rc;
    *pn += c->tf;
    (*pnList)++;
    rc = union_pos(u, 2 * i + 1, d, aPos, pn, pnList, err);
    return rc != LP_OK ? rc : union_pos(u, 2 * i + 2, d, aPos, pn, pnList, err);
}

static int union_positions(FtsPostings *p, uint32_t *aPos, LpError *err) {
    UnionPostings *u = (UnionPostings *)p;
    uint32_t n = 0;
    int nList = 0;
    int rc = union_pos(u, 0, p->doc, aPos, &n, &nList, err);
    if (rc != LP_OK) return rc;
    if (nList > 1) {
        /* a few sorted runs: insertion sort, unless they are long */
        if (n > 64) {
            qsort(aPos, n, sizeof(uint32_t), u32_cmp);
        } else {
            for (uint32_t k = 1; k < n; k++) {
                uint32_t v = aPos[k], j = k;
                while (j > 0 && aPos[j - 1] > v) {
                    aPos[j] = aPos[j - 1];
                    j--;
                }
                aPos[j] = v;
            }
        }
        uint32_t o = 1;
        for (uint32_t k = 1; k < n; k++) {
            if (aPos[k] != aPos[o - 1]) aPos[o++] = aPos[k];
        }
        n = o;
    }
    p->tf = n;
    return LP_OK;
}

/* No block impacts: one block, as large as any. */
static uint32_t union_shallow(FtsPostings *p, uint32_t target, uint32_t *pMaxTf, uint32_t *pMinLen) {
    (void)target;
    *pMaxTf = p->maxTf;
    *pMinLen = p->minLen;
    return FTS_NO_DOC;
}

static void union_close(FtsPostings *p) {
    (void)p; /* the terms' cursors are the query's */
}

static int union_status(FtsPostings *p, LpError *err) {
    UnionPostings *u = (UnionPostings *)p;
    for (int i = 0; i < u->nAll; i++) {
        int rc = u->a[i].c->vt->xStatus(u->a[i].c, err);
        if (rc != LP_OK) return rc;
    }
    return LP_OK;
}

static const FtsPostingsVt union_vt = {union_next, union_advance, union_positions, union_shallow,
                                       union_close, union_status, NULL, NULL};

/* The list of alt's terms, with positions; NULL on error (q->rc set). */
static FtsPostings *open_union(FtsQuery *q, const PhraseAlt *alt) {
    UnionPostings *u = arena_zalloc(q->a, sizeof(*u));
    UnionSlot *ac = arena_alloc(q->a, sizeof(UnionSlot) * (size_t)alt->n);
    if (!u || !ac) {
        q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
        return NULL;
    }
    u->base.vt = &union_vt;
    u->base.doc = FTS_BEFORE_FIRST;
    u->a = ac;
    u->n = u->nAll = alt->n;
    for (int i = 0; i < alt->n; i++) {
        FtsPostings *c = open_cursor(q, alt->a[i].key, alt->a[i].nKey, &alt->a[i].info, 1);
        if (!c) return NULL;
        ac[i] = (UnionSlot){FTS_BEFORE_FIRST, c};
        uint64_t df = (uint64_t)u->base.df + c->df;
        u->base.df = df < q->src->nDocs ? (uint32_t)df : q->src->nDocs;
        uint64_t mtf = (uint64_t)u->base.maxTf + c->maxTf;
        u->base.maxTf = mtf < UINT32_MAX ? (uint32_t)mtf : UINT32_MAX;
        if (i == 0 || c->minLen < u->base.minLen) u->base.minLen = c->minLen;
    }
    return &u->base;
}

/* -- leaf: one term in one field -- */
typedef struct LeafIt {
    It base;
    FtsPostings *c;
} LeafIt;

static uint32_t leaf_next(It *it) {
    LeafIt *l = (LeafIt *)it;
    it->q->st.nPostings++;
    return it->doc = l->c->vt->xNext(l->c);
}

static uint32_t leaf_advance(It *it, uint32_t target) {
    LeafIt *l = (LeafIt *)it;
    it->q->st.nPostings++;
    if (l->c->doc != FTS_BEFORE_FIRST && l->c->doc >= target) return it->doc = l->c->doc;
    if (l->c->doc == FTS_BEFORE_FIRST) {
        if (l->c->vt->xNext(l->c) >= target) return it->doc = l->c->doc;
    }
    return it->doc = l->c->vt->xAdvance(l->c, target);
}

static const ItVt leaf_vt = {leaf_next, leaf_advance, NULL};

/* -- OR: union -- */
/* A min-heap of small integers (children, keys) by the document each is
** at, ties by the integer; xDoc(ctx, i) says where i is. Used where a
** scan of every element per document would be quadratic. */
typedef uint32_t (*DocOfFn)(const void *ctx, int i);

static int dh_less(DocOfFn xDoc, const void *ctx, int x, int y) {
    uint32_t a = xDoc(ctx, x), b = xDoc(ctx, y);
    return a < b || (a == b && x < y);
}

/* Adds c to the heap a[0..*pn), unless it is exhausted (at FTS_NO_DOC). */
static void dh_push(int *a, int *pn, DocOfFn xDoc, const void *ctx, int c) {
    if (xDoc(ctx, c) == FTS_NO_DOC) return;
    int i = (*pn)++;
    while (i > 0 && dh_less(xDoc, ctx, c, a[(i - 1) / 2])) {
        a[i] = a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    a[i] = c;
}

/* Takes the smallest out of the heap a[0..*pn), *pn > 0. */
static int dh_pop(int *a, int *pn, DocOfFn xDoc, const void *ctx) {
    int top = a[0], c = a[--*pn], i = 0, n = *pn;
    for (;;) {
        int l = 2 * i + 1, m = l;
        if (l >= n) break;
        if (l + 1 < n && dh_less(xDoc, ctx, a[l + 1], a[l])) m = l + 1;
        if (!dh_less(xDoc, ctx, a[m], c)) break;
        a[i] = a[m];
        i = m;
    }
    if (n) a[i] = c;
    return top;
}

/* Inserts c into the sorted a[0..*pn). */
static void sorted_add(int *a, int *pn, int c) {
    int k = (*pn)++;
    while (k > 0 && a[k - 1] > c) a[k] = a[k - 1], k--;
    a[k] = c;
}

typedef struct OrIt {
    It base;
    It **a;
    int n;
    /* a large OR (OR_HEAP_MIN children or more): */
    int *aHeap;             /* the children not at base.doc, a min-heap by doc */
    int nHeap;              /* (exhausted ones left out) */
    int *aAt;               /* the children at base.doc, by index */
    int nAt;
    int bStarted;           /* the children were first moved */
} OrIt;

/* From this many children on, an OR keeps them in a heap: a prefix may
** expand to thousands of terms, and a scan of all of them per document
** made such a query quadratic. */
#define OR_HEAP_MIN 32

static uint32_t or_min(OrIt *o) {
    uint32_t d = FTS_NO_DOC;
    for (int i = 0; i < o->n; i++) {
        if (o->a[i]->doc < d) d = o->a[i]->doc;
    }
    return o->base.doc = d;
}

static uint32_t or_next(It *it) {
    OrIt *o = (OrIt *)it;
    uint32_t cur = it->doc;
    for (int i = 0; i < o->n; i++) {
        It *c = o->a[i];
        if (cur == FTS_BEFORE_FIRST || c->doc == cur) c->vt->next(c);
    }
    return or_min(o);
}

static uint32_t or_advance(It *it, uint32_t target) {
    OrIt *o = (OrIt *)it;
    for (int i = 0; i < o->n; i++) {
        It *c = o->a[i];
        if (c->doc == FTS_BEFORE_FIRST || c->doc < target) c->vt->advance(c, target);
    }
    return or_min(o);
}

static double or_score(It *it) {
    OrIt *o = (OrIt *)it;
    double s = 0;
    for (int i = 0; i < o->n; i++) {
        if (o->a[i]->doc == it->doc) s += o->a[i]->vt->score(o->a[i]);
    }
    return s;
}

static const ItVt or_vt = {or_next, or_advance, or_score};

static uint32_t orh_doc(const void *ctx, int i) {
    return ((const OrIt *)ctx)->a[i]->doc;
}

static void orh_push(OrIt *o, int c) {
    dh_push(o->aHeap, &o->nHeap, orh_doc, o, c);
}

static int orh_pop(OrIt *o) {
    return dh_pop(o->aHeap, &o->nHeap, orh_doc, o);
}

/* Takes the children at the smallest document out of the heap into aAt,
** in index order (so their scores add up as the scan adds them). */
static uint32_t orh_gather(OrIt *o) {
    o->nAt = 0;
    if (o->nHeap == 0) return o->base.doc = FTS_NO_DOC;
    uint32_t d = o->a[o->aHeap[0]]->doc;
    while (o->nHeap && o->a[o->aHeap[0]]->doc == d) sorted_add(o->aAt, &o->nAt, orh_pop(o));
    return o->base.doc = d;
}

/* Moves every child first (next, or advance to target), then heaps them. */
static void orh_start(OrIt *o, int bAdvance, uint32_t target) {
    o->bStarted = 1;
    for (int i = 0; i < o->n; i++) {
        It *c = o->a[i];
        if (bAdvance) c->vt->advance(c, target); else c->vt->next(c);
        orh_push(o, i);
    }
}

static uint32_t orh_next(It *it) {
    OrIt *o = (OrIt *)it;
    if (!o->bStarted) {
        orh_start(o, 0, 0);
    } else {
        for (int k = 0; k < o->nAt; k++) {
            o->a[o->aAt[k]]->vt->next(o->a[o->aAt[k]]);
            orh_push(o, o->aAt[k]);
        }
    }
    return orh_gather(o);
}

static uint32_t orh_advance(It *it, uint32_t target) {
    OrIt *o = (OrIt *)it;
    if (!o->bStarted) {
        orh_start(o, 1, target);
    } else {
        for (int k = 0; k < o->nAt; k++) {
            It *c = o->a[o->aAt[k]];
            if (c->doc < target) c->vt->advance(c, target);
            orh_push(o, o->aAt[k]);
        }
        while (o->nHeap && o->a[o->aHeap[0]]->doc < target) {
            int i = orh_pop(o);
            o->a[i]->vt->advance(o->a[i], target);
            orh_push(o, i);
        }
    }
    return orh_gather(o);
}

static double orh_score(It *it) {
    OrIt *o = (OrIt *)it;
    double s = 0;
    for (int k = 0; k < o->nAt; k++) s += o->a[o->aAt[k]]->vt->score(o->a[o->aAt[k]]);
    return s;
}

static const ItVt orh_vt = {orh_next, orh_advance, orh_score};

/* -- AND with optional NOTs: leapfrog -- */
typedef struct AndIt {
    It base;
    It **a;                 /* positives */
    int n;
    It **aNeg;
    int nNeg;
    int (*xOk)(struct AndIt *); /* ZONESPAN's and ORDER's further test of a
                                ** document all the parts match, or NULL */
} AndIt;

static uint32_t and_settle(AndIt *x, uint32_t d) {
    for (;;) {
        if (d == FTS_NO_DOC) return x->base.doc = FTS_NO_DOC;
        int ok = 1;
        for (int i = 0; i < x->n; i++) {
            It *c = x->a[i];
            if (c->doc == FTS_BEFORE_FIRST || c->doc < d) c->vt->advance(c, d);
            if (c->doc != d) {
                d = c->doc;
                ok = 0;
                break;
            }
        }
        if (!ok) continue;
        for (int i = 0; i < x->nNeg && ok; i++) {
            It *c = x->aNeg[i];
            if (c->doc == FTS_BEFORE_FIRST || c->doc < d) c->vt->advance(c, d);
            if (c->doc == d) ok = 0;
        }
        if (ok) return x->base.doc = d;
        d++;
    }
}

static uint32_t and_next(It *it) {
    AndIt *x = (AndIt *)it;
    uint32_t d = it->doc == FTS_BEFORE_FIRST ? 0 : it->doc + 1;
    if (it->doc == FTS_NO_DOC) return FTS_NO_DOC;
    return and_settle(x, d);
}

static uint32_t and_advance(It *it, uint32_t target) {
    AndIt *x = (AndIt *)it;
    return and_settle(x, target);
}

static double and_score(It *it) {
    AndIt *x = (AndIt *)it;
    double s = 0;
    for (int i = 0; i < x->n; i++) s += x->a[i]->vt->score(x->a[i]);
    return s;
}

static const ItVt and_vt = {and_next, and_advance, and_score};

/* -- MAYBE: the required side's documents, the optional side's score -- */
typedef struct MaybeIt {
    It base;
    It *req;
    It *opt;
} MaybeIt;

static uint32_t maybe_next(It *it) {
    MaybeIt *m = (MaybeIt *)it;
    return it->doc = m->req->vt->next(m->req);
}

static uint32_t maybe_advance(It *it, uint32_t target) {
    MaybeIt *m = (MaybeIt *)it;
    return it->doc = m->req->vt->advance(m->req, target);
}

/* Moves the optional side to the current document; does it match there? */
static int maybe_opt_at(MaybeIt *m) {
    It *o = m->opt;
    if (o->doc == FTS_BEFORE_FIRST || o->doc < m->base.doc) o->vt->advance(o, m->base.doc);
    return o->doc == m->base.doc;
}

static double maybe_score(It *it) {
    MaybeIt *m = (MaybeIt *)it;
    double s = m->req->vt->score(m->req);
    return maybe_opt_at(m) ? s + m->opt->vt->score(m->opt) : s;
}

static const ItVt maybe_vt = {maybe_next, maybe_advance, maybe_score};

/* -- QUORUM: an OR that needs nThreshold of its children at a document -- */
static uint32_t quorum_settle(OrIt *o) {
    int nThr = o->base.pn->nThreshold;
    for (;;) {
        uint32_t d = or_min(o);
        if (d == FTS_NO_DOC) return d;
        int nAt = 0;
        for (int i = 0; i < o->n; i++) nAt += o->a[i]->doc == d;
        if (nAt >= nThr) return d;
        for (int i = 0; i < o->n; i++) {
            if (o->a[i]->doc == d) o->a[i]->vt->next(o->a[i]);
        }
    }
}

static uint32_t quorum_next(It *it) {
    or_next(it);
    return quorum_settle((OrIt *)it);
}

static uint32_t quorum_advance(It *it, uint32_t target) {
    or_advance(it, target);
    return quorum_settle((OrIt *)it);
}

static const ItVt quorum_vt = {quorum_next, quorum_advance, or_score};

/* quorum_settle over a heaped OR: the children at the document are aAt. */
static uint32_t quorumh_settle(OrIt *o) {
    while (o->base.doc != FTS_NO_DOC && o->nAt < o->base.pn->nThreshold) orh_next(&o->base);
    return o->base.doc;
}

static uint32_t quorumh_next(It *it) {
    orh_next(it);
    return quorumh_settle((OrIt *)it);
}

static uint32_t quorumh_advance(It *it, uint32_t target) {
    orh_advance(it, target);
    return quorumh_settle((OrIt *)it);
}

static const ItVt quorumh_vt = {quorumh_next, quorumh_advance, orh_score};

/* -- phrase, proximity, anchors and chains in one field -- */

/* The words a PHRASE node's documents must hold: all, but for NOTNEAR
** those of its first operand, and for SENTENCE and PARAGRAPH those of
** its operands (they come first, the boundaries' terms after them). */
static int phrase_required(const PlanNode *pn) {
    return pn->bNotNear ? pn->aOpStart[1] : pn->iSp ? pn->aOpStart[pn->nOp] : pn->nTerm;
}

/* Positions [lo, hi]: a zone's span. */
typedef struct Span {
    uint32_t lo, hi;
} Span;

/* The spans of some zones (ZONE:(…)) in one field of one document: a
** zone-limited phrase's, or the keys of the proximity rankers' factors
** that share its zones and field. */
typedef struct ZoneSpans {
    FtsPostings **ac;       /* the zones' terms: [2z] '<name', [2z+1] '</name' */
    int nZone;
    uint32_t doc;           /* the document a holds the spans of (FTS_NO_DOC: none) */
    Span *a;                /* its spans in the field, sorted, disjoint */
    uint32_t n, cap;
    uint32_t *aPos;         /* scratch: one zone term's positions */
    uint32_t nPosCap;
} ZoneSpans;

typedef struct PhraseIt {
    It base;
    FtsPostings **ac;
    int n;
    uint32_t **aaPos;       /* per word: positions in the current doc */
    uint32_t *anPos;
    uint32_t *anCap;
    uint32_t tf;            /* matches in the current doc */
    int *aOrder;            /* the words by ascending df: the order lists are
                            ** intersected in, the rarest leading */
    uint32_t *aLo;          /* phrase_count's scratch, one per word */
    /* chains only (nOp > 0): */
    uint32_t **aaStart;     /* per operand: where it starts in the document, */
    uint32_t *anStart;      /* how many times, */
    uint32_t *anStartCap;   /* and room for how many */
    struct NearHit *aNear[2]; /* NEAR: near_scan's chains of the level before
                            ** and of this level, */
    uint32_t anNearCap[2];
    struct NearRun *aNearRun; /* its children, */
    int *aFsmWho;           /* and its automaton's scratch (nOp + 1 each) */
    struct NearHit *aFsmRing;
    ZoneSpans zs;           /* zone limits only (pn->nZone > 0) */
    /* ZONESPAN (pn->pZones->bSpan): */
    uint32_t hitDoc;        /* the document aHit is of */
    uint32_t *aHit;         /* the first positions of the spans it matches in */
    uint32_t nHit, nHitCap;
    uint32_t **aaAll;       /* scratch: each word's positions in all the spans */
    uint32_t *anAll, *aCur;
} PhraseIt;

static int zones_load(FtsQuery *q, ZoneSpans *zs, uint32_t d);
static uint32_t zones_keep(const ZoneSpans *zs, uint32_t *a, uint32_t n);

static int pos_load(PhraseIt *p, int i) {
    FtsPostings *c = p->ac[i];
    if (c->tf > p->anCap[i]) {
        uint32_t cap = c->tf * 2;
        uint32_t *a = arena_alloc(p->base.q->a, sizeof(uint32_t) * cap);
        if (!a) return lp_err_set(&p->base.q->errIter, LP_NOMEM, "out of memory");
        p->aaPos[i] = a;
        p->anCap[i] = cap;
    }
    int rc = c->vt->xPositions(c, p->aaPos[i], &p->base.q->errIter);
    p->anPos[i] = c->tf; /* (after: a union of terms counts a position once) */
    const PlanNode *pn = p->base.pn;
    if (rc == LP_OK && pn->nZone && !(pn->iSp && i >= pn->aOpStart[pn->nOp])) {
        /* ZONE:(…): the positions outside the zones' spans do not exist
        ** for this word (a chain's boundaries are not limited) */
        if ((rc = zones_load(p->base.q, &p->zs, p->base.doc)) != LP_OK) return rc;
        p->anPos[i] = zones_keep(&p->zs, p->aaPos[i], p->anPos[i]);
    }
    const uint32_t *aLim = p->base.pn->aPosLimit;
    if (rc == LP_OK && aLim && aLim[i]) {
        /* @field[N]: the positions past the limit do not exist for this
        ** word (they come sorted: keep those below it) */
        uint32_t lo = 0, hi = p->anPos[i];
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (p->aaPos[i][mid] < aLim[i]) lo = mid + 1; else hi = mid;
        }
        p->anPos[i] = lo;
    }
    const uint8_t *aAnc = p->base.pn->aWordAnchor;
    if (rc == LP_OK && aAnc && aAnc[i]) {
        /* "a ^b c$"~3: the word's positions not first / last in the field
        ** do not exist for it */
        uint32_t want = 0, m = 0;
        if (aAnc[i] & FTS_ANCHOR_END) {
            uint32_t dl = p->base.q->src->vt->xDocLen(p->base.q->src, pn->iField, p->base.doc);
            uint32_t tail = pn->aWordTail ? pn->aWordTail[i] : 0;
            want = dl > tail ? dl - 1 - tail : UINT32_MAX;
        }
        for (uint32_t k = 0; k < p->anPos[i]; k++) {
            uint32_t v = p->aaPos[i][k];
            if ((aAnc[i] & FTS_ANCHOR_START) && v != 0) continue;
            if ((aAnc[i] & FTS_ANCHOR_END) && v != want) continue;
            p->aaPos[i][m++] = v;
        }
        p->anPos[i] = m;
    }
    return rc;
}

/* Is v in a[*pLo..n)? The targets of one word come in increasing order,
** so the search starts where the last one ended (*pLo, moved on): a
** word with many positions is searched, one with few is walked. */
static int has_pos_from(const uint32_t *a, uint32_t n, uint32_t v, uint32_t *pLo) {
    uint32_t lo = *pLo, hi = n;
    /* Most words occur a few times in a document: walked, no search. */
    while (hi - lo <= 8) {
        if (lo == hi || a[lo] >= v) {
            *pLo = lo;
            return lo < n && a[lo] == v;
        }
        lo++;
    }
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (a[mid] < v) lo = mid + 1; else hi = mid;
    }
    *pLo = lo;
    return lo < n && a[lo] == v;
}

/* Where words [w0, w1) of p's node occur as an exact phrase in the
** current document (positions loaded): the position of word w0 at each
** occurrence, increasing, into aOut unless NULL (room for anPos[w0]).
** Returns how many; anchors apply (the node's, for a whole phrase). The
** word with the fewest positions proposes the starts, the others are
** looked up. */
static uint32_t exact_starts(PhraseIt *p, int w0, int w1, uint32_t *aOut) {
    const PlanNode *pn = p->base.pn;
    if (w1 - w0 == 2 && !pn->anchor) {
        /* Two words, the most common phrase: one merge of the two lists,
        ** the second word's positions sought delta after the first's. */
        const uint32_t *a = p->aaPos[w0], *b = p->aaPos[w0 + 1];
        uint32_t na = p->anPos[w0], nb = p->anPos[w0 + 1], j = 0, nMatch = 0;
        uint64_t delta = pn->aQPos[w0 + 1] - pn->aQPos[w0];
        for (uint32_t k = 0; k < na && j < nb; k++) {
            uint64_t want = a[k] + delta;
            while (j < nb && b[j] < want) j++;
            if (j < nb && b[j] == want) {
                if (aOut) aOut[nMatch] = a[k];
                nMatch++;
            }
        }
        return nMatch;
    }
    uint32_t *aLo = p->aLo;
    int iPiv = w0;
    for (int i = w0; i < w1; i++) {
        aLo[i] = 0;
        if (p->anPos[i] < p->anPos[iPiv]) iPiv = i;
    }
    uint32_t offPiv = pn->aQPos[iPiv] - pn->aQPos[w0];
    uint32_t len = pn->aQPos[w1 - 1] - pn->aQPos[w0]; /* last word's offset */
    uint32_t wantStart = 0, wantLast = 0;
    int bStart = (pn->anchor & FTS_ANCHOR_START) != 0, bEnd = (pn->anchor & FTS_ANCHOR_END) != 0;
    if (bStart) wantStart = pn->aQPos[w0]; /* stop words the query put before it */
    if (bEnd) {
        uint32_t dl = p->base.q->src->vt->xDocLen(p->base.q->src, pn->iField, p->base.doc);
        if (dl <= pn->nEndTail) return 0; /* (and an empty field) */
        wantLast = dl - 1 - pn->nEndTail;
    }
    uint32_t nMatch = 0;
    for (uint32_t k = 0; k < p->anPos[iPiv]; k++) {
        if (p->aaPos[iPiv][k] < offPiv) continue;
        uint32_t start = p->aaPos[iPiv][k] - offPiv;
        if ((bStart && start != wantStart) || (bEnd && start + len != wantLast)) continue;
        int ok = 1;
        for (int i = w0; i < w1 && ok; i++) {
            if (i == iPiv) continue;
            ok = has_pos_from(p->aaPos[i], p->anPos[i], start + (pn->aQPos[i] - pn->aQPos[w0]), &aLo[i]);
        }
        if (ok && aOut) aOut[nMatch] = start;
        nMatch += ok;
    }
    return nMatch;
}

static int span_cmp(const void *x, const void *y) {
    const Span *a = x, *b = y;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    return (a->hi < b->hi) - (a->hi > b->hi); /* the widest first */
}

/* SENTENCE, PARAGRAPH: the part of the field position v is in, the
** boundaries before it (the words from b0 on are the boundaries' terms). */
static uint32_t sp_part(const PhraseIt *p, int b0, uint32_t v) {
    uint32_t part = 0;
    for (int b = b0; b < p->n; b++) {
        uint32_t lo = 0, hi = p->anPos[b];
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (p->aaPos[b][mid] < v) lo = mid + 1; else hi = mid;
        }
        part += lo;
    }
    return part;
}

/* SENTENCE and PARAGRAPH: does one part of the field hold an occurrence
** of every operand (their starts in aaStart)? The boundaries' positions
** (the words after the operands': a paragraph's term, and for SENTENCE a
** sentence's too) cut the field into parts, and an occurrence's part is
** the number of boundaries before it. An occurrence never spans a
** boundary, whose position holds no word. Rewrites aaStart: each
** operand's starts become their parts (rising, as the starts do), and
** aaStart[0] keeps the parts every operand so far has. */
static uint32_t sp_holds(PhraseIt *p) {
    const PlanNode *pn = p->base.pn;
    int b0 = pn->aOpStart[pn->nOp];
    uint32_t nCommon = 0;
    for (int o = 0; o < pn->nOp; o++) {
        uint32_t *a = p->aaStart[o], n = p->anStart[o];
        uint32_t aj[2] = {0, 0}; /* per boundary word: how many lie before a[k] */
        for (uint32_t k = 0; k < n; k++) {
            uint32_t part = 0;
            for (int b = b0; b < p->n; b++) {
                uint32_t j = aj[b - b0];
                while (j < p->anPos[b] && p->aaPos[b][j] < a[k]) j++;
                aj[b - b0] = j;
                part += j;
            }
            a[k] = part;
        }
        uint32_t m = 0;
        if (o == 0) {
            for (uint32_t k = 0; k < n; k++) {
                if (m == 0 || a[k] != a[m - 1]) a[m++] = a[k];
            }
        } else {
            uint32_t *c = p->aaStart[0];
            for (uint32_t k = 0, j = 0; k < nCommon; k++) {
                while (j < n && a[j] < c[k]) j++;
                if (j < n && a[j] == c[k]) c[m++] = c[k];
            }
        }
        nCommon = m;
        if (nCommon == 0) return 0;
    }
    return 1;
}

/* Does the current document hold p's chain (positions loaded)? 1 or 0;
** 0 with q->rc set when out of memory.
**   '<<': each operand starts after the previous one ends. The earliest
**   fitting occurrence of each operand in turn is the best choice, as all
**   of an operand's occurrences are the same length.
**   NEAR/N: as Sphinx and Manticore find it (near_scan), or, when the
**   chain repeats an operand, each repeat at its own place
**   (near_distinct). */
/* How many steps near_distinct takes at most in one field of one
** document: past it, the chain is taken not to hold there. */
#define NEAR_DISTINCT_MAX_STEPS 100000

/* A NEAR chain that repeats an operand ("big NEAR/3 big", a NEAR/1 b
** NEAR/1 a): does it hold from operand o on, given the span [lo, hi] the
** ones before took and their starts aPick? As in Sphinx, each repeat takes
** an occurrence of its own (different operands may share positions, as a
** phrase and one of its words do). Depth first over the operands' starts,
** each within its distance of the span before it, as the span algorithm of
** chain_count would, which cannot tell the occurrences apart; such chains
** are rare and their operands' lists short. */
static int near_distinct(const PhraseIt *p, int o, uint32_t lo, uint32_t hi, uint32_t *aPick, uint64_t *pnStep) {
    const PlanNode *pn = p->base.pn;
    if (o == pn->nOp) return 1;
    uint32_t len = pn->aQPos[pn->aOpStart[o + 1] - 1] - pn->aQPos[pn->aOpStart[o]];
    uint64_t dist = o ? (uint64_t)pn->aDist[o - 1] : 0;
    const uint32_t *a = p->aaStart[o];
    uint32_t n = p->anStart[o], k = 0;
    if (o) {
        /* the first start whose occurrence can reach the span */
        uint32_t hiK = n;
        while (k < hiK) {
            uint32_t mid = (k + hiK) / 2;
            if ((uint64_t)a[mid] + len + dist < lo) k = mid + 1; else hiK = mid;
        }
    }
    for (; k < n; k++) {
        uint32_t s = a[k], e = s + len;
        if (o && (uint64_t)s > (uint64_t)hi + dist) break;
        if (++*pnStep > NEAR_DISTINCT_MAX_STEPS) return 0;
        int bTaken = 0;
        for (int r = 0; r < o && !bTaken; r++) bTaken = pn->aOpSame[r] == pn->aOpSame[o] && aPick[r] == s;
        if (bTaken) continue;
        aPick[o] = s;
        if (near_distinct(p, o + 1, o && lo < s ? lo : s, o && hi > e ? hi : e, aPick, pnStep)) return 1;
    }
    return 0;
}

/* An occurrence in near_scan's stream: where it starts (its position
** plus 1: 0 is "none", as in Sphinx, whose positions start at 1), its
** length in positions, and which child of the level it is of. */
typedef struct NearHit {
    uint32_t pos, len;
    int who;
    uint32_t tie;           /* at one position, the higher first */
} NearHit;

/* A child of a level of near_scan: its occurrences, sorted (the chains
** of the level before, or an operand's starts, all len long), the next
** one to read (i) and its tie (NearHit). */
typedef struct NearRun {
    const uint32_t *aStart;
    const NearHit *aHit;
    uint32_t n, i, len, tie;
} NearRun;

/* Room for n hits in p->aNear[i] (its content kept). */
static int near_room(PhraseIt *p, int i, uint64_t n) {
    if (n <= p->anNearCap[i]) return LP_OK;
    if (n > UINT32_MAX / 2) return LP_NOMEM;
    uint32_t cap = (uint32_t)n * 2;
    NearHit *a = arena_alloc(p->base.q->a, sizeof(NearHit) * cap);
    if (!a) return LP_NOMEM;
    if (p->anNearCap[i]) memcpy(a, p->aNear[i], sizeof(NearHit) * p->anNearCap[i]);
    p->aNear[i] = a;
    p->anNearCap[i] = cap;
    return LP_OK;
}

/* The state of Sphinx's NEAR automaton (sphinxsearch.cpp, FSMmultinear)
** over one level's stream of nChild children: the chain it is building. */
typedef struct NearFsm {
    int nChild;
    uint32_t near;          /* N */
    uint32_t lastP, lastLen, preP, preLen, firstP;
    int firstWho;           /* two children: the first hit's child */
    int nWho;               /* more: the children the chain holds, ascending, */
    int *aWho;              /* (room for nChild) */
    NearHit *aRing;         /* and its hits, oldest first from iRing (nChild) */
    int iRing;
} NearFsm;

static int fsm_tail(const NearFsm *m) {
    return (m->iRing + m->nWho - 1) % m->nChild;
}

/* Feeds hit h to m; 1 when it completes a chain, whose start and length
** are then in *pOut. The automaton is Sphinx's, step for step, so that a
** query finds the rows it finds there: a chain grows while each hit
** starts fewer than N positions after the end of the one before; a hit
** of a child it already holds replaces the oldest hit when that is the
** same child's, or the newest, and is otherwise passed over; two children
** chain pairwise, each hit pairing with the one before. */
static int fsm_step(NearFsm *m, const NearHit *h, NearHit *pOut) {
    uint32_t p = h->pos;
    int who = h->who;
    if (m->lastP == p) {
        /* another hit at the same place: only a longer one replaces it */
        if (m->preP && m->lastLen < h->len) {
            m->lastLen = m->preLen;
            m->firstP = m->lastP = m->preP;
        } else {
            return 0;
        }
    }
    if (m->lastP == 0 || (uint64_t)m->lastP + m->lastLen + m->near <= p) {
        /* too far from the chain: a new one starts here */
        m->firstP = m->lastP = p;
        m->lastLen = h->len;
        if (m->nChild == 2) {
            m->firstWho = who;
        } else {
            m->nWho = 1;
            m->aWho[0] = who;
            m->aRing[fsm_tail(m)] = *h;
        }
        return 0;
    }
    if (m->nChild == 2) {
        uint64_t firstEnd = (uint64_t)m->firstP + m->lastLen;
        if (firstEnd > p && firstEnd < (uint64_t)p + h->len && m->lastLen != h->len) {
            /* overlapping the first hit, and of another length: it is the
            ** first now */
            m->firstP = m->lastP = p;
            m->lastLen = h->len;
            m->firstWho = who;
            return 0;
        }
        if (who == m->firstWho) {
            if (m->lastP < p) {
                m->preLen = m->lastLen;
                m->preP = m->lastP;
                m->firstP = m->lastP = p;
                m->lastLen = h->len;
            }
            return 0;
        }
    } else {
        int n = m->nWho, *a = m->aWho;
        if (who < a[0] || who > a[n - 1]) {
            int at = who < a[0] ? 0 : n;
            memmove(a + at + 1, a + at, sizeof(int) * (size_t)(n - at));
            a[at] = who;
            m->nWho++;
        } else if (who != a[0] && who != a[n - 1]) {
            /* between: a binary search, which takes the hit (and adds the
            ** child once more, as Sphinx's does) when it finds the child
            ** oldest or newest in the chain */
            int iStart = 0, iEnd = n;
            while (iEnd - iStart > 1) {
                int iMid = (iStart + iEnd) / 2;
                if (who == a[iMid]) {
                    if (who == m->aRing[m->iRing].who) {
                        m->firstP = m->aRing[m->iRing].pos;
                        m->iRing = (m->iRing + 1) % m->nChild;
                    } else if (who != m->aRing[fsm_tail(m)].who) {
                        return 0;
                    }
                }
                if (who < a[iMid]) iEnd = iMid; else iStart = iMid;
            }
            memmove(a + iEnd + 1, a + iEnd, sizeof(int) * (size_t)(n - iEnd));
            a[iEnd] = who;
            m->nWho++;
        } else if (who == m->aRing[m->iRing].who) {
            m->firstP = m->aRing[m->iRing].pos;
            m->iRing = (m->iRing + 1) % m->nChild;
        } else if (who != m->aRing[fsm_tail(m)].who) {
            return 0;
        }
    }
    m->lastLen = h->len;
    if (m->nChild != 2) m->aRing[fsm_tail(m)] = *h;
    if (m->nChild == 2 || m->nWho == m->nChild) {
        pOut->pos = m->firstP;
        pOut->len = p - m->firstP + m->lastLen;
        m->preP = 0;
        if (m->nChild == 2) {
            m->firstP = m->lastP = p; /* the pair slides on (firstWho stays) */
        } else {
            m->lastP = 0;
        }
        return 1;
    }
    m->lastP = p;
    return 0;
}

/* The level of a NEAR chain of n operands (links aDist) that starts at
** operand o0: its distance in *pNear; returns the operand after it (a run
** of links of one distance is one level). */
static int near_level(const int *aDist, int n, int o0, uint32_t *pNear) {
    uint32_t near = (uint32_t)aDist[o0 ? o0 - 1 : 0];
    int o1 = o0 + 1;
    while (o1 < n && (uint32_t)aDist[o1 - 1] == near) o1++;
    *pNear = near;
    return o1;
}

/* An automaton over nChild children at distance near, its scratch aWho
** and aRing (nChild entries each). */
static NearFsm fsm_new(int nChild, uint32_t near, int *aWho, NearHit *aRing) {
    NearFsm m;
    memset(&m, 0, sizeof(m));
    m.nChild = nChild;
    m.near = near;
    m.aWho = aWho;
    m.aRing = aRing;
    return m;
}

/* NEAR/N, the way Sphinx and Manticore match it. Their parser makes
** `a NEAR/3 b NEAR/3 c NEAR/2 d` the node NEAR/2((a NEAR/3 b NEAR/3 c), d):
** a run of links of one distance is one level, and a level's first child
** is the level before it. A level reads its children's occurrences in the
** field in position order (at one position, the rarer word last, as their
** AND of the children hands them over), merging the children's sorted
** lists, through their automaton (fsm_step), and the chains it completes
** are the next level's occurrences of its first child. The chain holds
** when the last level completes one. Occurrences times children per
** level. 1 or 0 in *pbHolds. With pnChain, the last level goes on to the
** end and leaves every chain it completes in p->aNear[1], *pnChain of
** them: what Sphinx's ORDER sees of the chain (in "bb aa xx aa bb",
** aa NEAR/3 bb completes 1-2 and 2-4, the pair sliding on, and not 4-5,
** so xx << (aa NEAR/3 bb) does not hold there). LP_OK or LP_NOMEM. */
static int near_scan(PhraseIt *p, uint32_t *pbHolds, uint32_t *pnChain) {
    const PlanNode *pn = p->base.pn;
    uint32_t nPrev = 0;
    *pbHolds = 0;
    if (pnChain) *pnChain = 0;
    if (!p->aFsmWho) {
        p->aFsmWho = arena_alloc(p->base.q->a, sizeof(int) * (size_t)(pn->nOp + 1));
        p->aFsmRing = arena_alloc(p->base.q->a, sizeof(NearHit) * (size_t)(pn->nOp + 1));
        p->aNearRun = arena_alloc(p->base.q->a, sizeof(NearRun) * (size_t)(pn->nOp + 1));
        if (!p->aFsmWho || !p->aFsmRing || !p->aNearRun) return LP_NOMEM;
    }
    for (int o0 = 0; o0 < pn->nOp;) {
        uint32_t near;
        int o1 = near_level(pn->aDist, pn->nOp, o0, &near); /* the level's operands: [o0, o1) */
        /* The level's children, each's occurrences sorted: the chains of
        ** the level before, in the order it completed them (by start: a
        ** chain starts where the one before ended or later, and fsm_step's
        ** roll-back to preP never reaches past a chain completed), then
        ** the operands' starts. */
        NearRun *aRun = p->aNearRun;
        int nRun = 0;
        uint64_t nAll = nPrev;
        if (o0) aRun[nRun++] = (NearRun){NULL, p->aNear[0], nPrev, 0, 0, UINT32_MAX};
        for (int o = o0; o < o1; o++) {
            int w0 = pn->aOpStart[o], w1 = pn->aOpStart[o + 1];
            /* Sphinx sorts its children by documents: a word's df, any
            ** other operand's as many as can be */
            uint32_t tie = w1 - w0 == 1 && !(pn->aAlt && pn->aAlt[w0].n) ? p->ac[w0]->df : UINT32_MAX;
            aRun[nRun++] = (NearRun){p->aaStart[o], NULL, p->anStart[o], 0,
                                     pn->aQPos[w1 - 1] - pn->aQPos[w0] + 1, tie};
            nAll += p->anStart[o];
        }
        if ((o1 < pn->nOp || pnChain) && near_room(p, 1, nAll)) return LP_NOMEM;
        NearFsm m = fsm_new(nRun, near, p->aFsmWho, p->aFsmRing);
        uint32_t nOut = 0;
        for (;;) {
            /* the next occurrence: the least start; at one start, the
            ** higher tie, then the later child */
            NearHit h = {0, 0, -1, 0};
            for (int r = 0; r < nRun; r++) {
                const NearRun *x = &aRun[r];
                if (x->i == x->n) continue;
                uint32_t pos = x->aHit ? x->aHit[x->i].pos : x->aStart[x->i] + 1;
                if (h.who < 0 || pos < h.pos || (pos == h.pos && x->tie >= h.tie)) {
                    h = (NearHit){pos, x->aHit ? x->aHit[x->i].len : x->len, r, x->tie};
                }
            }
            if (h.who < 0) break;
            aRun[h.who].i++;
            NearHit out;
            if (!fsm_step(&m, &h, &out)) continue;
            if (o1 == pn->nOp) {
                /* the last level: one chain is enough, unless all are asked for */
                *pbHolds = 1;
                if (!pnChain) return LP_OK;
            }
            p->aNear[1][nOut++] = out;
        }
        if (o1 == pn->nOp) {
            if (pnChain) *pnChain = nOut;
            return LP_OK;
        }
        if (nOut == 0) return LP_OK;
        NearHit *t = p->aNear[0];
        uint32_t tc = p->anNearCap[0];
        p->aNear[0] = p->aNear[1], p->anNearCap[0] = p->anNearCap[1];
        p->aNear[1] = t, p->anNearCap[1] = tc;
        nPrev = nOut;
        o0 = o1;
    }
    return LP_OK; /* (not reached: the last level returns) */
}

/* Keeps, of operand o's starts (aaStart[o]), those where its anchor holds:
** '^', the field's first position (after the stop words the query puts
** before its first word); '$', its last word on the field's last
** position. Returns how many are kept. */
static uint32_t anchored_starts(PhraseIt *p, int o) {
    const PlanNode *pn = p->base.pn;
    int anchor = pn->aOpAnchor[o];
    uint32_t w0 = (uint32_t)pn->aOpStart[o], w1 = (uint32_t)pn->aOpStart[o + 1];
    uint32_t len = pn->aQPos[w1 - 1] - pn->aQPos[w0], wantLast = 0;
    if (anchor & FTS_ANCHOR_END) {
        uint32_t dl = p->base.q->src->vt->xDocLen(p->base.q->src, pn->iField, p->base.doc);
        uint32_t tail = pn->aOpTail ? pn->aOpTail[o] : 0;
        if (dl <= tail) return 0;
        wantLast = dl - 1 - tail;
    }
    uint32_t *a = p->aaStart[o], nKeep = 0;
    for (uint32_t k = 0; k < p->anStart[o]; k++) {
        if ((anchor & FTS_ANCHOR_START) && a[k] != pn->aQPos[w0]) continue;
        if ((anchor & FTS_ANCHOR_END) && a[k] + len != wantLast) continue;
        a[nKeep++] = a[k];
    }
    return nKeep;
}

/* Where chain operand o starts in the current document (its anchor
** applied): p->aaStart[o], p->anStart[o]. LP_OK or LP_NOMEM. */
static int op_starts(PhraseIt *p, int o) {
    const PlanNode *pn = p->base.pn;
    int w0 = pn->aOpStart[o];
    if (p->anPos[w0] > p->anStartCap[o]) {
        uint32_t cap = p->anPos[w0] * 2;
        uint32_t *a = arena_alloc(p->base.q->a, sizeof(uint32_t) * cap);
        if (!a) return LP_NOMEM;
        p->aaStart[o] = a;
        p->anStartCap[o] = cap;
    }
    p->anStart[o] = exact_starts(p, w0, pn->aOpStart[o + 1], p->aaStart[o]);
    if (pn->aOpAnchor && pn->aOpAnchor[o]) p->anStart[o] = anchored_starts(p, o);
    return LP_OK;
}

/* NOTNEAR/N over words (a PHRASE with bNotNear): where its operands start
** in the current document (the second's nowhere when a word of it is
** absent), then the first operand's starts with no occurrence of the
** second within the distance, on either side (NEAR's test, negated):
** how many, and with aKeep (room for p->anStart[0]) which. LP_NOMEM:
** UINT32_MAX. */
static uint32_t notnear_keep(PhraseIt *p, uint32_t *aKeep) {
    const PlanNode *pn = p->base.pn;
    if (op_starts(p, 0) != LP_OK) return UINT32_MAX;
    p->anStart[1] = 0;
    int bAll = 1;
    for (int i = pn->aOpStart[1]; i < pn->aOpStart[2]; i++) bAll &= p->anPos[i] > 0;
    if (bAll && op_starts(p, 1) != LP_OK) return UINT32_MAX;
    const uint32_t *anStart = p->anStart;
    uint32_t len0 = pn->aQPos[pn->aOpStart[1] - 1] - pn->aQPos[pn->aOpStart[0]];
    uint32_t len1 = pn->aQPos[pn->aOpStart[2] - 1] - pn->aQPos[pn->aOpStart[1]];
    uint64_t dist = (uint64_t)pn->aDist[0];
    uint32_t nKeep = 0, j = 0;
    int bSame = pn->aOpSame && pn->aOpSame[1] == 0; /* "a NOTNEAR/3 a": another a */
    for (uint32_t k = 0; k < anStart[0]; k++) {
        uint64_t t = p->aaStart[0][k];
        /* the second's starts that end before t - dist are far for this
        ** and every later first-operand start */
        while (j < anStart[1] && (uint64_t)p->aaStart[1][j] + len1 + dist < t) j++;
        uint32_t i = j;
        if (bSame && i < anStart[1] && p->aaStart[1][i] == t) i++;
        if (i < anStart[1] && (uint64_t)p->aaStart[1][i] <= t + len0 + dist) continue;
        if (aKeep) aKeep[nKeep] = (uint32_t)t;
        nKeep++;
    }
    return nKeep;
}

static uint32_t chain_count(PhraseIt *p) {
    const PlanNode *pn = p->base.pn;
    FtsQuery *q = p->base.q;
    if (pn->bNotNear) {
        uint32_t n = notnear_keep(p, NULL);
        if (n == UINT32_MAX) goto nomem;
        return n;
    }
    for (int o = 0; o < pn->nOp; o++) {
        if (op_starts(p, o) != LP_OK) goto nomem;
        if (p->anStart[o] == 0) return 0;
    }
    if (pn->iSp) return sp_holds(p);
    const uint32_t *anStart = p->anStart;
    if (!pn->aDist) {
        int64_t prevEnd = -1;
        for (int o = 0; o < pn->nOp; o++) {
            uint32_t len = pn->aQPos[pn->aOpStart[o + 1] - 1] - pn->aQPos[pn->aOpStart[o]];
            uint32_t k = 0;
            while (k < anStart[o] && (int64_t)p->aaStart[o][k] <= prevEnd) k++;
            if (k == anStart[o]) return 0;
            prevEnd = (int64_t)p->aaStart[o][k] + len;
        }
        return 1;
    }
    if (pn->aOpSame) {
        /* a repeated operand ("a NEAR/3 a"): each repeat another occurrence
        ** (aLo: phrase_count's scratch, of nTerm >= nOp entries) */
        uint64_t nStep = 0;
        return near_distinct(p, 0, 0, 0, p->aLo, &nStep);
    }
    uint32_t bHolds;
    if (near_scan(p, &bHolds, NULL) != LP_OK) goto nomem;
    return bHolds;
nomem:
    q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory matching a NEAR or '<<' clause");
    return 0;
}

/* Proximity (Sphinx): all words within a span of fewer than nSlop +
** nWords positions, in any order. A window slides over the merged
** positions, its lowest occurrence moving on each step. A word the query
** repeats m times needs m distinct occurrences: each distinct word takes
** its m consecutive occurrences from aIdx[u] on. Without aWin: the number
** of windows that start a new match (p's frequency). With aWin (room for
** two entries per occurrence of each word): every window that fits, as
** first and last position in turn, overlapping ones too, which is what
** Sphinx's ORDER sees of a proximity phrase (in "a x b a", "a b"~3 is at
** 1-3 and at 3-4, so x << "a b"~3 holds); returns how many. */
/* The distinct words of proximity phrase pn's first n (a word anchored
** otherwise is another: "a a$"~3): each's first index in aWord[u], how
** often the phrase has it in aMul[u]. Returns how many. */
static int prox_words(const PlanNode *pn, int n, int *aWord, int *aMul) {
    int nu = 0;
    for (int i = 0; i < n; i++) {
        int u = 0;
        while (u < nu && !(pn->anKey[aWord[u]] == pn->anKey[i] &&
                           memcmp(pn->aKey[aWord[u]], pn->aKey[i], (size_t)pn->anKey[i]) == 0 &&
                           (!pn->aWordAnchor || pn->aWordAnchor[aWord[u]] == pn->aWordAnchor[i]))) {
            u++;
        }
        if (u == nu) aWord[nu] = i, aMul[nu++] = 0;
        aMul[u]++;
    }
    return nu;
}

static uint32_t prox_scan(const PhraseIt *p, uint32_t *aWin) {
    const PlanNode *pn = p->base.pn;
    uint32_t nMatch = 0;
    enum { MAXW = 64 };
    int n = p->n > MAXW ? MAXW : p->n;
    int aWord[MAXW] = {0}, aMul[MAXW] = {0}, nu = prox_words(pn, n, aWord, aMul);
    uint32_t aIdx[MAXW] = {0};
    uint32_t limit = (uint32_t)pn->nSlop + (uint32_t)n; /* span must be < limit */
    uint32_t lastEnd = 0;
    int bAny = 0;
    for (;;) {
        /* the window [min, max] over each word's current occurrences */
        uint32_t lo = UINT32_MAX, hi = 0;
        int iMin = -1;
        for (int u = 0; u < nu; u++) {
            int i = aWord[u];
            if (aIdx[u] + (uint32_t)aMul[u] > p->anPos[i]) return nMatch;
            uint32_t v0 = p->aaPos[i][aIdx[u]], v1 = p->aaPos[i][aIdx[u] + (uint32_t)aMul[u] - 1];
            if (v0 < lo) lo = v0, iMin = u;
            if (v1 > hi) hi = v1;
        }
        if (hi - lo + 1 < limit) {
            if (aWin) {
                aWin[2 * nMatch] = lo;
                aWin[2 * nMatch++ + 1] = hi;
            } else if (!bAny || lo > lastEnd) {
                nMatch++;
                bAny = 1;
                lastEnd = hi;
            }
        }
        aIdx[iMin]++;
    }
}

/* The windows of proximity phrase p (positions loaded) as Sphinx's NEAR
** reads them: read in position order, each occurrence completes the window
** of every word's latest occurrences (a word the query repeats m times:
** its latest m) when they all fit (span < nSlop + words) and it starts
** after the window before; that window, first and last position, goes
** into aWin (room for two entries per occurrence). So "ant pig"~2 in "ant
** ant pig" is at 2-3 only, where prox_scan also finds 1-3, and "owl
** yak"~3 in "yak owl yak yak" at 1-2 and 2-3, not 2-4. Returns how many. */
static uint32_t prox_latest(const PhraseIt *p, uint32_t *aWin) {
    const PlanNode *pn = p->base.pn;
    enum { MAXW = 64 };
    int n = p->n > MAXW ? MAXW : p->n;
    int aWord[MAXW] = {0}, aMul[MAXW] = {0}, nu = prox_words(pn, n, aWord, aMul);
    uint32_t aIdx[MAXW] = {0}; /* per distinct word: its occurrences read */
    uint32_t limit = (uint32_t)pn->nSlop + (uint32_t)n, nWin = 0;
    for (;;) {
        /* the next occurrence of any word */
        int uNext = -1;
        uint32_t pos = UINT32_MAX;
        for (int u = 0; u < nu; u++) {
            int i = aWord[u];
            if (aIdx[u] < p->anPos[i] && p->aaPos[i][aIdx[u]] < pos) pos = p->aaPos[i][aIdx[u]], uNext = u;
        }
        if (uNext < 0) return nWin;
        aIdx[uNext]++;
        /* every word's latest aMul occurrences so far: the window's start */
        uint32_t lo = pos;
        int bAll = 1;
        for (int u = 0; u < nu && bAll; u++) {
            int i = aWord[u];
            if (aIdx[u] < (uint32_t)aMul[u]) bAll = 0;
            else if (p->aaPos[i][aIdx[u] - (uint32_t)aMul[u]] < lo) lo = p->aaPos[i][aIdx[u] - (uint32_t)aMul[u]];
        }
        if (bAll && pos - lo + 1 < limit && (nWin == 0 || lo > aWin[2 * nWin - 2])) {
            aWin[2 * nWin] = lo;
            aWin[2 * nWin++ + 1] = pos;
        }
    }
}

/* Matches of the phrase in the current doc (positions loaded). */
static uint32_t phrase_count(PhraseIt *p) {
    const PlanNode *pn = p->base.pn;
    if (pn->nOp) return chain_count(p);
    if (pn->nSlop == 0) return exact_starts(p, 0, p->n, NULL);
    return prox_scan(p, NULL);
}

/* c moved to its first document >= d (from before its first too). */
static inline uint32_t cursor_to(FtsPostings *c, uint32_t d) {
    uint32_t cd = c->doc;
    if (cd == FTS_BEFORE_FIRST) cd = c->vt->xNext(c);
    if (cd < d) cd = c->vt->xAdvance(c, d);
    return cd;
}

/* Reads the spans of zs's zones in its field of document d into zs->a
** (unless they are there already): each zone's k-th opening term and k-th
** closing term bound its k-th span (text/analyzer.h); several zones' spans
** are merged. Documents come in increasing order. LP_OK or an error (q->rc
** set). */
static int zones_load(FtsQuery *q, ZoneSpans *zs, uint32_t d) {
    if (zs->doc == d) return LP_OK;
    zs->doc = d;
    zs->n = 0;
    for (int z = 0; z < zs->nZone; z++) {
        FtsPostings *co = zs->ac[2 * z], *cc = zs->ac[2 * z + 1];
        if (cursor_to(co, d) != d || cursor_to(cc, d) != d) continue;
        uint32_t nOpen = co->tf, nClose = cc->tf, n = nOpen < nClose ? nOpen : nClose;
        uint32_t nMax = nOpen > nClose ? nOpen : nClose;
        if (nMax > zs->nPosCap) {
            uint32_t *a = arena_alloc(q->a, sizeof(uint32_t) * 2 * (size_t)nMax);
            if (!a) return q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
            zs->aPos = a;
            zs->nPosCap = 2 * nMax;
        }
        if ((uint64_t)zs->n + n > zs->cap) {
            uint64_t cap = 2 * ((uint64_t)zs->n + n);
            Span *a = cap <= UINT32_MAX ? arena_alloc(q->a, sizeof(Span) * (size_t)cap) : NULL;
            if (!a) return q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
            if (zs->n) memcpy(a, zs->a, sizeof(Span) * zs->n);
            zs->a = a;
            zs->cap = (uint32_t)cap;
        }
        if (co->vt->xPositions(co, zs->aPos, &q->errIter) != LP_OK) return q->rc = q->errIter.code;
        for (uint32_t k = 0; k < n; k++) zs->a[zs->n + k].lo = zs->aPos[k];
        if (cc->vt->xPositions(cc, zs->aPos, &q->errIter) != LP_OK) return q->rc = q->errIter.code;
        for (uint32_t k = 0; k < n; k++) zs->a[zs->n + k].hi = zs->aPos[k];
        zs->n += n;
    }
    if (zs->nZone > 1 && zs->n > 1) {
        qsort(zs->a, zs->n, sizeof(Span), span_cmp);
        uint32_t m = 0;
        for (uint32_t k = 1; k < zs->n; k++) {
            if (zs->a[k].lo <= zs->a[m].hi) {
                if (zs->a[k].hi > zs->a[m].hi) zs->a[m].hi = zs->a[k].hi;
            } else {
                zs->a[++m] = zs->a[k];
            }
        }
        zs->n = m + 1;
    }
    return LP_OK;
}

/* Keeps the positions a[0..n) (ascending) that lie in zs's spans, in
** place; returns how many. */
static uint32_t zones_keep(const ZoneSpans *zs, uint32_t *a, uint32_t n) {
    uint32_t m = 0, z = 0;
    for (uint32_t k = 0; k < n; k++) {
        while (z < zs->n && zs->a[z].hi < a[k]) z++;
        if (z == zs->n) break;
        if (a[k] >= zs->a[z].lo) a[m++] = a[k];
    }
    return m;
}

/* Opens the cursors of pn's zones' terms into zs. Returns 1, or 0 with
** q->rc set. */
static int zones_open(FtsQuery *q, const PlanNode *pn, ZoneSpans *zs) {
    zs->doc = FTS_NO_DOC;
    zs->nZone = pn->nZone;
    zs->ac = arena_zalloc(q->a, sizeof(FtsPostings *) * 2 * (size_t)pn->nZone);
    if (!zs->ac) {
        q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
        return 0;
    }
    for (int k = 0; k < 2 * pn->nZone; k++) {
        if (!(zs->ac[k] = open_cursor(q, pn->aZoneKey[k], pn->anZoneKey[k], &pn->aZoneInfo[k], 1))) return 0;
    }
    return 1;
}

/* Moves p to the first document >= d that holds all its words, their
** positions not yet compared (phrase_verify does that). */
static uint32_t phrase_approx(PhraseIt *p, uint32_t d) {
    const int nReq = phrase_required(p->base.pn), n = p->n;
    FtsPostings *const *ac = p->ac;
    const int *aOrder = p->aOrder;
    uint64_t nPost = 0; /* counted here, added once: no store per step */
    if (n == 2 && nReq == 2) {
        /* The loop below for two words, the most common phrase. */
        FtsPostings *c0 = ac[aOrder[0]], *c1 = ac[aOrder[1]];
        while (d != FTS_NO_DOC) {
            nPost++;
            uint32_t cd = cursor_to(c0, d);
            if (cd != d) {
                d = cd;
                continue;
            }
            nPost++;
            if ((cd = cursor_to(c1, d)) == d) break;
            d = cd;
        }
        p->base.q->st.nPostings += nPost;
        return p->base.doc = d;
    }
    while (d != FTS_NO_DOC) {
        int k = 0;
        for (; k < n; k++) {
            if (aOrder[k] >= nReq) continue; /* NOTNEAR's second operand */
            nPost++;
            uint32_t cd = cursor_to(ac[aOrder[k]], d);
            if (cd != d) {
                d = cd;
                break;
            }
        }
        if (k == n) break;
    }
    p->base.q->st.nPostings += nPost;
    return p->base.doc = d;
}

/* ZONESPAN: the matches of the phrase inside one span at a time, summed;
** the spans with one are kept in p->aHit (positions loaded, limited to
** the spans). */
static uint32_t phrase_count_spans(PhraseIt *p) {
    FtsQuery *q = p->base.q;
    const int n = p->n, nReq = phrase_required(p->base.pn);
    p->hitDoc = p->base.doc;
    p->nHit = 0;
    if (zones_load(q, &p->zs, p->base.doc) != LP_OK) return 0;
    if (p->zs.n > p->nHitCap) {
        uint32_t *a = arena_alloc(q->a, sizeof(uint32_t) * 2 * (size_t)p->zs.n);
        if (!a) {
            q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
            return 0;
        }
        p->aHit = a;
        p->nHitCap = 2 * p->zs.n;
    }
    for (int i = 0; i < n; i++) {
        p->aaAll[i] = p->aaPos[i];
        p->anAll[i] = p->anPos[i];
        p->aCur[i] = 0;
    }
    uint32_t tf = 0;
    for (uint32_t z = 0; z < p->zs.n; z++) {
        int ok = 1;
        for (int i = 0; i < n; i++) {
            uint32_t lo = p->aCur[i], hi;
            while (lo < p->anAll[i] && p->aaAll[i][lo] < p->zs.a[z].lo) lo++;
            for (hi = lo; hi < p->anAll[i] && p->aaAll[i][hi] <= p->zs.a[z].hi; hi++) {}
            p->aaPos[i] = p->aaAll[i] ? p->aaAll[i] + lo : NULL; /* NULL: never loaded (NOTNEAR) */
            p->anPos[i] = hi - lo;
            p->aCur[i] = hi;
            if (i < nReq && hi == lo) ok = 0;
        }
        uint32_t c = ok ? phrase_count(p) : 0;
        if (c) {
            tf += c;
            p->aHit[p->nHit++] = p->zs.a[z].lo;
        }
    }
    for (int i = 0; i < n; i++) {
        p->aaPos[i] = p->aaAll[i];
        p->anPos[i] = p->anAll[i];
    }
    return tf;
}

/* Reads the words' positions in p's document and counts the matches
** into p->tf. LP_OK, or an error (q->rc set). */
static int phrase_verify(PhraseIt *p) {
    int nReq = phrase_required(p->base.pn);
    for (int i = 0; i < p->n; i++) {
        if (i >= nReq) {
            /* NOTNEAR's second operand: its positions where it occurs */
            FtsPostings *c = p->ac[i];
            if (c->doc == FTS_BEFORE_FIRST) c->vt->xNext(c);
            if (c->doc < p->base.doc) c->vt->xAdvance(c, p->base.doc);
            if (c->doc != p->base.doc) {
                p->anPos[i] = 0;
                continue;
            }
        }
        if (pos_load(p, i) != LP_OK) {
            p->tf = 0;
            return p->base.q->rc = p->base.q->errIter.code;
        }
    }
    const FtsZones *z = p->base.pn->pZones;
    p->tf = z && z->bSpan ? phrase_count_spans(p) : phrase_count(p);
    return p->base.q->rc;
}

/* At most how many matches p's document can hold, before its positions
** are read: each match takes an occurrence of every word (a proximity
** match too), so no more than the rarest word's frequency. */
static uint32_t phrase_tf_bound(const PhraseIt *p) {
    uint32_t m = UINT32_MAX;
    for (int i = 0; i < phrase_required(p->base.pn); i++) {
        if (p->ac[i]->tf < m) m = p->ac[i]->tf;
    }
    return m;
}

static uint32_t phrase_settle(PhraseIt *p, uint32_t d) {
    for (;;) {
        if ((d = phrase_approx(p, d)) == FTS_NO_DOC) return d;
        if (phrase_verify(p) != LP_OK) return p->base.doc = FTS_NO_DOC;
        if (p->tf) return d;
        d++;
    }
}

static uint32_t phrase_next(It *it) {
    if (it->doc == FTS_NO_DOC) return FTS_NO_DOC;
    return phrase_settle((PhraseIt *)it, it->doc == FTS_BEFORE_FIRST ? 0 : it->doc + 1);
}

static uint32_t phrase_advance(It *it, uint32_t target) {
    return phrase_settle((PhraseIt *)it, target);
}

static const ItVt phrase_vt = {phrase_next, phrase_advance, NULL};

/* -- group: one clause in each of its fields, scored together -- */
typedef struct GroupIt {
    It base;
    It **a;                 /* LeafIt or PhraseIt, one per field */
    int n;
} GroupIt;

/* The frequency of a group child at its current document. */
static uint32_t child_tf(const It *c) {
    return c->pn->kind == PN_LEAF ? ((const LeafIt *)c)->c->tf : ((const PhraseIt *)c)->tf;
}

static uint32_t group_min(GroupIt *g) {
    uint32_t d = FTS_NO_DOC;
    for (int i = 0; i < g->n; i++) {
        if (g->a[i]->doc < d) d = g->a[i]->doc;
    }
    return g->base.doc = d;
}

static uint32_t group_next(It *it) {
    GroupIt *g = (GroupIt *)it;
    uint32_t cur = it->doc, d = FTS_NO_DOC;
    for (int i = 0; i < g->n; i++) {
        It *c = g->a[i];
        if (cur == FTS_BEFORE_FIRST || c->doc == cur) {
            /* A term's leaf directly: a term query moves it per document. */
            if (c->vt == &leaf_vt) {
                leaf_next(c);
            } else {
                c->vt->next(c);
            }
        }
        if (c->doc < d) d = c->doc;
    }
    return it->doc = d;
}

static uint32_t group_advance(It *it, uint32_t target) {
    GroupIt *g = (GroupIt *)it;
    uint32_t d = FTS_NO_DOC;
    for (int i = 0; i < g->n; i++) {
        It *c = g->a[i];
        if (c->doc == FTS_BEFORE_FIRST || c->doc < target) {
            /* A term's leaf is called directly: an AND of groups moves
            ** them once per candidate document. */
            if (c->vt == &leaf_vt) {
                leaf_advance(c, target);
            } else {
                c->vt->advance(c, target);
            }
        }
        if (c->doc < d) d = c->doc;
    }
    return it->doc = d;
}

/* The group's score from per-field frequencies and length normalisations
** (aTf[i] = 0 for a field that does not match; aNorm[i] = norm_len of the
** document's length in it): BM25F saturates the weighted sum of the
** fields' normalised frequencies once, with the clause's idf; BM25 scores
** each field on its own, with that field's idf, and sums. The same
** function gives MaxScore's bounds when fed the largest tf and smallest
** length a block can hold, as both formulas grow with tf and shrink with
** length. */
static double group_formula(const FtsQuery *q, const PlanNode *g, const double *aTf,
                            const double *aNorm) {
    double s = 0;
    if (q->rank.ranker != FTS_RANK_BM25) {
        /* x = sum of weight * tf / norm, kept as the fraction num / den so
        ** that saturate(x) divides once per document instead of once per
        ** field and again to saturate. den is a product of norms, each in
        ** [2^-32, 2^64] (dl >= 1 where tf > 0, dl and nDocs < 2^32, b in
        ** [0, 1]): eight of them stay far inside a double's range, more
        ** could overflow or underflow, so past eight fields den is folded
        ** back into num whenever it leaves [1e-100, 1e100]. */
        double num = 0, den = 1;
        int bWide = g->nChild > 8;
        for (int i = 0; i < g->nChild; i++) {
            if (aTf[i] > 0) {
                num = num * aNorm[i] + q->aFw[g->aChild[i]->iField] * aTf[i] * den;
                den *= aNorm[i];
                if (bWide && (den > 1e100 || den < 1e-100)) num /= den, den = 1;
            }
        }
        return num > 0 ? g->nRepeat * g->typeWeight * g->idf * saturate_frac(q, num, den) : 0;
    }
    for (int i = 0; i < g->nChild; i++) {
        const PlanNode *c = g->aChild[i];
        if (aTf[i] > 0) s += q->aFw[c->iField] * c->idf * saturate(q, aTf[i] / aNorm[i]);
    }
    return g->nRepeat * g->typeWeight * s;
}

/* norm_len of doc's length in field f. The clauses of a query that match
** one document all need it: computed once per document and field. */
static double doc_norm(FtsQuery *q, int f, uint32_t doc) {
    if (q->aNormDoc[f] != doc) {
        q->aNormDoc[f] = doc;
        q->aNorm[f] = norm_len(q, f, q->src->vt->xDocLen(q->src, f, doc));
    }
    return q->aNorm[f];
}

static double group_score(It *it) {
    GroupIt *g = (GroupIt *)it;
    FtsQuery *q = it->q;
    double aTf[FTS_MAX_FIELDS], aNorm[FTS_MAX_FIELDS];
    for (int i = 0; i < g->n; i++) {
        const It *c = g->a[i];
        aTf[i] = c->doc == it->doc ? child_tf(c) : 0;
        aNorm[i] = aTf[i] > 0 ? doc_norm(q, c->pn->iField, it->doc) : 1;
    }
    return group_formula(q, it->pn, aTf, aNorm);
}

static const ItVt group_vt = {group_next, group_advance, group_score};

/* -- ZONESPAN: an AND whose positive parts match inside one span -- */

/* Spans where a subtree matches at a document: keys (field << 32 | the
** span's first position), sorted and distinct, q->aSpanKey[off..off+n);
** bAny: any span will do (nothing below is limited to spans). */
typedef struct SpanSet {
    int bAny;
    size_t off, n;
} SpanSet;

static int span_key_push(FtsQuery *q, uint64_t k) {
    if (q->nSpanKey == q->nSpanKeyCap) {
        size_t cap = q->nSpanKeyCap ? 2 * q->nSpanKeyCap : 64;
        uint64_t *a = arena_alloc(q->a, sizeof(uint64_t) * cap);
        if (!a) return q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory matching ZONESPAN");
        if (q->nSpanKey) memcpy(a, q->aSpanKey, sizeof(uint64_t) * q->nSpanKey);
        q->aSpanKey = a;
        q->nSpanKeyCap = cap;
    }
    q->aSpanKey[q->nSpanKey++] = k;
    return LP_OK;
}

static int key_cmp(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Sorts q->aSpanKey[off..) and keeps the keys that occur at least nMin
** times there, once each: the set's size. */
static size_t span_keep(FtsQuery *q, size_t off, int nMin) {
    uint64_t *a = q->aSpanKey + off;
    size_t n = q->nSpanKey - off, m = 0;
    if (n > 1) qsort(a, n, sizeof(uint64_t), key_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && a[j] == a[i]) j++;
        if ((int)(j - i) >= nMin) a[m++] = a[i];
        i = j;
    }
    q->nSpanKey = off + m;
    return m;
}

static SpanSet span_of(FtsQuery *q, It *it, uint32_t d) {
    const PlanNode *pn = it->pn;
    SpanSet r = {0, q->nSpanKey, 0};
    switch (pn->kind) {
    case PN_PHRASE: {
        const PhraseIt *p = (const PhraseIt *)it;
        if (!pn->pZones || !pn->pZones->bSpan) {
            r.bAny = 1;
        } else if (it->doc == d && p->hitDoc == d) {
            for (uint32_t k = 0; k < p->nHit && q->rc == LP_OK; k++) {
                span_key_push(q, (uint64_t)pn->iField << 32 | p->aHit[k]);
            }
            r.n = q->nSpanKey - r.off;
        }
        return r;
    }
    case PN_GROUP:
    case PN_OR:
    case PN_QUORUM: {
        /* the children's sets one after another, then the keys enough of
        ** them hold: one (a union), or nThreshold for a quorum */
        It **a = pn->kind == PN_GROUP ? ((GroupIt *)it)->a : ((OrIt *)it)->a;
        int n = pn->kind == PN_GROUP ? ((GroupIt *)it)->n : ((OrIt *)it)->n, nAny = 0;
        for (int i = 0; i < n; i++) {
            if (a[i]->doc != d) continue;
            SpanSet c = span_of(q, a[i], d);
            nAny += c.bAny;
        }
        int nMin = pn->kind == PN_QUORUM ? pn->nThreshold - nAny : 1 - nAny;
        if (nMin <= 0) {
            q->nSpanKey = r.off;
            r.bAny = 1;
        } else {
            r.n = span_keep(q, r.off, nMin);
        }
        return r;
    }
    case PN_AND: {
        /* the positive parts' sets intersected, in place */
        AndIt *x = (AndIt *)it;
        int bFirst = 1;
        for (int i = 0; i < x->n && q->rc == LP_OK; i++) {
            SpanSet c = span_of(q, x->a[i], d);
            if (c.bAny) continue;
            if (bFirst) {
                bFirst = 0;
                r.n = c.n;
                continue;
            }
            const uint64_t *b = q->aSpanKey + c.off;
            uint64_t *o = q->aSpanKey + r.off;
            size_t m = 0, j = 0;
            for (size_t k = 0; k < r.n; k++) {
                while (j < c.n && b[j] < o[k]) j++;
                if (j < c.n && b[j] == o[k]) o[m++] = o[k];
            }
            r.n = m;
            q->nSpanKey = r.off + m;
        }
        r.bAny = bFirst;
        return r;
    }
    case PN_MAYBE:
        return span_of(q, ((MaybeIt *)it)->req, d);
    case PN_NONE:
        return r;
    default: /* LEAF, ALL: not limited to spans */
        r.bAny = 1;
        return r;
    }
}

/* Is the AND x, at its document, inside one span? */
static int span_and_ok(AndIt *x) {
    FtsQuery *q = x->base.q;
    size_t mark = q->nSpanKey;
    SpanSet s = span_of(q, &x->base, x->base.doc);
    q->nSpanKey = mark;
    return q->rc == LP_OK && (s.bAny || s.n > 0);
}

/* Moves the AND x on from its document to the first that xOk accepts
** (ZONESPAN's one span, ORDER's order). */
static uint32_t and_settle_test(AndIt *x, int (*xOk)(AndIt *)) {
    while (x->base.doc != FTS_NO_DOC && !xOk(x)) {
        if (x->base.q->rc != LP_OK) return x->base.doc = FTS_NO_DOC;
        and_next(&x->base);
    }
    return x->base.doc;
}

static uint32_t tested_and_next(It *it) {
    and_next(it);
    return and_settle_test((AndIt *)it, ((AndIt *)it)->xOk);
}

static uint32_t tested_and_advance(It *it, uint32_t target) {
    and_advance(it, target);
    return and_settle_test((AndIt *)it, ((AndIt *)it)->xOk);
}

/* An AND with xOk (ZONESPAN: span_and_ok; ORDER: order_holds). */
static const ItVt tested_and_vt = {tested_and_next, tested_and_advance, and_score};

/* -- ORDER: '<<' over any operands, an AND whose children's occurrences
** must come in order -- */

/* An occurrence of an ORDER operand: [pos, end) in field f. */
typedef struct OHit {
    uint32_t f, pos, end;
} OHit;

typedef struct OrderIt {
    AndIt and;              /* must be first: an AND, its score included */
    OHit *aHit;             /* the children's occurrences at the document, */
    int nHit, nHitCap;
    int *aStart;            /* child i's from aStart[i], sorted (n + 1 entries) */
    uint32_t *aPos;         /* scratch: one cursor's positions, or a phrase's starts */
    uint32_t nPosCap;
    int bNested;            /* inside another ORDER, which reads aOut: */
    OHit *aOut;             /* the occurrences of the chains order_scan finds */
    int nOut, nOutCap;
    struct OScan *aScan;    /* order_scan's scratch */
    int nScanCap;
    OHit *aChain;           /* ... and order_collect's, for a '<<' chain of words */
    int nChain, nChainCap;
    int *aChainStart;
    int nChainStartCap;
    struct NearHit *aNear;  /* near_any's scratch: a level's stream, its chains and
                            ** the level before's (3 * nNearCap) */
    int nNearCap;
    int *aFsmWho;           /* ... and its automaton's (nChild + 1 each) */
    struct NearHit *aFsmRing;
} OrderIt;

static uint32_t exact_starts(PhraseIt *p, int w0, int w1, uint32_t *aOut);

/* Appends the occurrence [pos, end) in field f to *pa (*pn used, room
** for *pcap). LP_OK or LP_NOMEM. */
static int ohit_append(Arena *ar, OHit **pa, int *pn, int *pcap, uint32_t f, uint32_t pos, uint32_t end) {
    OHit *a = arena_grow(ar, *pa, *pn, pcap, sizeof(OHit), 64);
    if (!a) return LP_NOMEM;
    *pa = a;
    a[(*pn)++] = (OHit){f, pos, pos < end ? end : pos + 1};
    return LP_OK;
}

static int ohit_push(OrderIt *o, uint32_t f, uint32_t pos, uint32_t end) {
    return ohit_append(o->and.base.q->a, &o->aHit, &o->nHit, &o->nHitCap, f, pos, end);
}

/* Room for n entries in o->aPos. */
static int opos_room(OrderIt *o, uint32_t n) {
    if (n <= o->nPosCap) return LP_OK;
    uint32_t *a = arena_alloc(o->and.base.q->a, sizeof(uint32_t) * 2 * (size_t)n);
    if (!a) return LP_NOMEM;
    o->aPos = a;
    o->nPosCap = 2 * n;
    return LP_OK;
}

/* Appends the occurrences of it, at document d, to o->aHit: a word's
** positions; an exact phrase's matches (an anchored one's only where it
** is anchored), each from its first word to past its last; a proximity
** phrase's windows (prox_scan), each from its first position to past its
** last; a NEAR chain's of one distance, its chains (near_scan), each
** from its start, one position per operand; another NEAR chain's, a NOTNEAR's or a quorum's words where they
** are; a group's, an AND's, an OR's and a quorum's parts' that match d; a
** MAYBE's two sides' (the optional one's where it matches d), an ORDER's
** inside (read from what it collected at d). Negations add nothing.
** LP_OK or LP_NOMEM. */
static int order_scan(OrderIt *o, const OHit *aHit, const int *aStart, int n, OHit **pa, int *pn, int *pcap);

static int order_collect(OrderIt *o, It *it, uint32_t d) {
    if (it->doc != d) return LP_OK;
    const PlanNode *pn = it->pn;
    FtsQuery *q = it->q;
    switch (pn->kind) {
    case PN_LEAF: {
        FtsPostings *c = ((LeafIt *)it)->c;
        if (opos_room(o, c->tf)) return LP_NOMEM;
        if (c->vt->xPositions(c, o->aPos, &q->errIter) != LP_OK) {
            q->rc = q->errIter.code;
            return LP_OK; /* reported by the query */
        }
        for (uint32_t k = 0, n = c->tf; k < n; k++) {
            if (ohit_push(o, (uint32_t)pn->iField, o->aPos[k], o->aPos[k] + 1)) return LP_NOMEM;
        }
        return LP_OK;
    }
    case PN_PHRASE: {
        PhraseIt *p = (PhraseIt *)it;
        if (!pn->nOp && !pn->nSlop) {
            uint32_t nMax = 0;
            for (int i = 0; i < p->n; i++) nMax = p->anPos[i] > nMax ? p->anPos[i] : nMax;
            if (opos_room(o, nMax + 1)) return LP_NOMEM;
            uint32_t n = exact_starts(p, 0, p->n, o->aPos), len = pn->aQPos[p->n - 1] - pn->aQPos[0] + 1;
            for (uint32_t k = 0; k < n; k++) {
                if (ohit_push(o, (uint32_t)pn->iField, o->aPos[k], o->aPos[k] + len)) return LP_NOMEM;
            }
            return LP_OK;
        }
        if (pn->nSlop && !pn->nOp) {
            uint32_t nRoom = 0;
            for (int i = 0; i < p->n; i++) nRoom += p->anPos[i];
            if (opos_room(o, 2 * nRoom)) return LP_NOMEM;
            /* NEAR reads them as they complete, ORDER every window */
            uint32_t n = o->and.base.pn->bOrder >= ORDER_NEAR ? prox_latest(p, o->aPos) : prox_scan(p, o->aPos);
            for (uint32_t k = 0; k < n; k++) {
                if (ohit_push(o, (uint32_t)pn->iField, o->aPos[2 * k], o->aPos[2 * k + 1] + 1)) return LP_NOMEM;
            }
            return LP_OK;
        }
        if (pn->bNotNear) {
            /* NOTNEAR: its first operand's occurrences that the second is
            ** not near, each from its first word to past its last */
            if (opos_room(o, p->anPos[0] + 1)) return LP_NOMEM; /* (the starts: at most its first word's) */
            uint32_t n = notnear_keep(p, o->aPos), len = pn->aQPos[pn->aOpStart[1] - 1] - pn->aQPos[0] + 1;
            if (n == UINT32_MAX) return LP_NOMEM;
            for (uint32_t k = 0; k < n; k++) {
                if (ohit_push(o, (uint32_t)pn->iField, o->aPos[k], o->aPos[k] + len)) return LP_NOMEM;
            }
            return LP_OK;
        }
        int bNearIn = o->and.base.pn->bOrder >= ORDER_NEAR; /* read by NEAR/N (or NOTNEAR/N), not '<<' */
        int bOneLevel = pn->nOp && pn->aDist && !pn->iSp && !pn->bNotNear && !pn->aOpSame;
        for (int op = 1; bOneLevel && !bNearIn && op + 1 < pn->nOp; op++) bOneLevel = pn->aDist[op] == pn->aDist[0];
        if (bOneLevel) {
            /* a NEAR chain of one distance: the chains Sphinx's automaton
            ** completes (its starts are 1-based). Of several distances,
            ** Sphinx's ORDER sees something else, neither the outer
            ** chains nor the words (in "aa bb xx cc", (aa NEAR/1 bb NEAR/3
            ** cc) << xx holds, in "cc xx aa bb", xx << (aa NEAR/1 bb NEAR/3
            ** cc) does not): its words, as before. */
            uint32_t bHolds, nChain, len = (uint32_t)pn->nOp;
            if (near_scan(p, &bHolds, &nChain) != LP_OK) return LP_NOMEM;
            /* Sphinx's ORDER reads a chain's occurrence as one position
            ** long per operand (a phrase's too), not its span: in "dog owl
            ** gnu emu", (dog NEAR/3 emu) << gnu holds there and << owl
            ** does not, and in "aa yy xx bb", ("aa yy" NEAR/3 bb) << xx
            ** holds. Its NEAR reads the span, and the last level's chains
            ** of a chain of several distances (probed: bench-parity) */
            for (uint32_t k = 0; k < nChain; k++) {
                uint32_t s = p->aNear[1][k].pos - 1;
                if (ohit_push(o, (uint32_t)pn->iField, s, s + (bNearIn ? p->aNear[1][k].len : len))) return LP_NOMEM;
            }
            return LP_OK;
        }
        if (pn->nOp && !pn->aDist && !pn->iSp) {
            /* a '<<' chain of words and phrases is an ORDER too: the chains
            ** Sphinx's scan finds over its operands' starts (chain_count
            ** found them at d) */
            if (pn->nOp + 1 > o->nChainStartCap) {
                int *a = arena_alloc(q->a, sizeof(int) * 2 * (size_t)(pn->nOp + 1));
                if (!a) return LP_NOMEM;
                o->aChainStart = a;
                o->nChainStartCap = 2 * (pn->nOp + 1);
            }
            o->nChain = 0;
            for (int op = 0; op < pn->nOp; op++) {
                uint32_t len = pn->aQPos[pn->aOpStart[op + 1] - 1] - pn->aQPos[pn->aOpStart[op]] + 1;
                o->aChainStart[op] = o->nChain;
                for (uint32_t k = 0; k < p->anStart[op]; k++) {
                    uint32_t s = p->aaStart[op][k];
                    if (ohit_append(q->a, &o->aChain, &o->nChain, &o->nChainCap, (uint32_t)pn->iField, s, s + len)) {
                        return LP_NOMEM;
                    }
                }
            }
            o->aChainStart[pn->nOp] = o->nChain;
            return order_scan(o, o->aChain, o->aChainStart, pn->nOp, &o->aHit, &o->nHit, &o->nHitCap);
        }
        if (pn->iSp && pn->nOp > 1) {
            /* SENTENCE, PARAGRAPH: its operands' occurrences in the parts
            ** of the field that hold every operand, as Sphinx's operator
            ** passes them on (in "aa bb. Cc dd bb", aa << (dd SENTENCE bb)
            ** holds by the second bb, not the first) */
            int b0 = pn->aOpStart[pn->nOp];
            uint32_t nMax = 0, nCommon = 0;
            for (int op = 0; op < pn->nOp; op++) {
                if (op_starts(p, op) != LP_OK) return LP_NOMEM;
                if (p->anStart[op] > nMax) nMax = p->anStart[op];
            }
            if (opos_room(o, 2 * nMax + 2)) return LP_NOMEM;
            uint32_t *aCommon = o->aPos, *aPart = o->aPos + nMax + 1;
            for (int op = 0; op < pn->nOp; op++) {
                uint32_t m = 0, c = 0;
                for (uint32_t k = 0; k < p->anStart[op]; k++) {
                    uint32_t part = sp_part(p, b0, p->aaStart[op][k]);
                    if (m == 0 || aPart[m - 1] != part) aPart[m++] = part;
                }
                if (op == 0) {
                    memcpy(aCommon, aPart, sizeof(uint32_t) * m);
                    nCommon = m;
                    continue;
                }
                for (uint32_t k = 0, j = 0; k < nCommon; k++) {
                    while (j < m && aPart[j] < aCommon[k]) j++;
                    if (j < m && aPart[j] == aCommon[k]) aCommon[c++] = aCommon[k];
                }
                nCommon = c;
            }
            for (int op = 0; op < pn->nOp && nCommon; op++) {
                uint32_t len = pn->aQPos[pn->aOpStart[op + 1] - 1] - pn->aQPos[pn->aOpStart[op]] + 1, j = 0;
                for (uint32_t k = 0; k < p->anStart[op]; k++) {
                    uint32_t s = p->aaStart[op][k], part = sp_part(p, b0, s);
                    while (j < nCommon && aCommon[j] < part) j++;
                    if (j < nCommon && aCommon[j] == part && ohit_push(o, (uint32_t)pn->iField, s, s + len)) {
                        return LP_NOMEM;
                    }
                }
            }
            return LP_OK;
        }
        for (int i = 0; i < phrase_required(pn); i++) {
            for (uint32_t k = 0; k < p->anPos[i]; k++) {
                if (ohit_push(o, (uint32_t)pn->iField, p->aaPos[i][k], p->aaPos[i][k] + 1)) return LP_NOMEM;
            }
        }
        return LP_OK;
    }
    case PN_GROUP: {
        GroupIt *g = (GroupIt *)it;
        for (int i = 0; i < g->n; i++) {
            if (order_collect(o, g->a[i], d)) return LP_NOMEM;
        }
        return LP_OK;
    }
    case PN_AND: {
        AndIt *x = (AndIt *)it;
        if (pn->bOrder) {
            /* an ORDER inside: the occurrences on its chains, which its own
            ** test collected at d (a cursor's positions are read once per
            ** document) */
            const OrderIt *in = (const OrderIt *)it;
            for (int k = 0; k < in->nOut; k++) {
                if (ohit_push(o, in->aOut[k].f, in->aOut[k].pos, in->aOut[k].end)) return LP_NOMEM;
            }
            return LP_OK;
        }
        for (int i = 0; i < x->n; i++) {
            if (order_collect(o, x->a[i], d)) return LP_NOMEM;
        }
        return LP_OK;
    }
    case PN_OR:
    case PN_QUORUM: {
        OrIt *x = (OrIt *)it;
        for (int i = 0; i < x->n; i++) {
            if (order_collect(o, x->a[i], d)) return LP_NOMEM;
        }
        return LP_OK;
    }
    case PN_MAYBE: {
        /* both sides', the optional one's where it matches, as Sphinx's
        ** ORDER sees them (in "bb xx aa", (aa MAYBE bb) << xx holds) */
        MaybeIt *m = (MaybeIt *)it;
        if (order_collect(o, m->req, d)) return LP_NOMEM;
        return maybe_opt_at(m) ? order_collect(o, m->opt, d) : LP_OK;
    }
    case PN_ALL:
    case PN_NONE:
        break;
    }
    return LP_OK;
}

static int ohit_cmp(const void *x, const void *y) {
    const OHit *a = x, *b = y;
    if (a->f != b->f) return a->f < b->f ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* An occurrence in order_scan's stream: whose it is. */
typedef struct OScan {
    OHit h;
    int i;
} OScan;

static int oscan_cmp(const void *x, const void *y) {
    const OScan *a = x, *b = y;
    if (a->h.f != b->h.f) return a->h.f < b->h.f ? -1 : 1;
    if (a->h.pos != b->h.pos) return a->h.pos < b->h.pos ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* Sphinx's ORDER hands an ORDER around it the occurrences of the chains
** one pass finds (ExtOrder's GetMatchingHits), one per operand: the n
** operands' occurrences aHit[aStart[i] .. aStart[i + 1]) are read in
** (field, position) order, the earlier operand first at one place,
** keeping the longest chain begun so far and the most recent one; a
** chain complete is appended to *pa (*pn used, *pcap room) and both
** start over. Its scratch grows in o. LP_OK or LP_NOMEM. */
static int order_scan(OrderIt *o, const OHit *aHit, const int *aStart, int n, OHit **pa, int *pn, int *pcap) {
    Arena *ar = o->and.base.q->a;
    int nAll = aStart[n] - aStart[0];
    /* the stream, then the two chains (n entries each) */
    if (nAll + 2 * n > o->nScanCap) {
        int cap = 2 * (nAll + 2 * n);
        OScan *a = arena_alloc(ar, sizeof(OScan) * (size_t)cap);
        if (!a) return LP_NOMEM;
        o->aScan = a;
        o->nScanCap = cap;
    }
    OScan *aS = o->aScan, *aLong = aS + nAll, *aRecent = aLong + n;
    for (int i = 0, k = 0; i < n; i++) {
        for (int j = aStart[i]; j < aStart[i + 1]; j++) aS[k++] = (OScan){aHit[j], i};
    }
    qsort(aS, (size_t)nAll, sizeof(OScan), oscan_cmp);
    int nLong = 0, nRecent = 0;
    uint32_t posLong = 0, posRecent = 0, f = UINT32_MAX;
    for (int k = 0; k < nAll; k++) {
        const OScan *x = &aS[k];
        uint32_t end = x->h.end;
        if (x->h.f != f) {
            /* a new field: only the first operand starts a chain there */
            nLong = nRecent = 0;
            if (x->i == 0) {
                aLong[nLong++] = *x;
                posLong = end;
                f = x->h.f;
            }
        } else if (x->i == nLong && x->h.pos >= posLong) {
            aLong[nLong++] = *x;
            posLong = end;
            if (nLong == n) {
                for (int i = 0; i < n; i++) {
                    if (ohit_append(ar, pa, pn, pcap, aLong[i].h.f, aLong[i].h.pos, aLong[i].h.end)) return LP_NOMEM;
                }
                nLong = nRecent = 0;
                posRecent = posLong;
            }
        } else if (x->i == 0) {
            aRecent[0] = *x;
            nRecent = 1;
            posRecent = end;
            if (nLong == 0) {
                aLong[nLong++] = *x;
                posLong = end;
            }
        } else if (x->i == nRecent && x->h.pos >= posRecent) {
            aRecent[nRecent++] = *x;
            posRecent = end;
            if (nRecent == nLong) {
                /* the most recent chain is as long: it takes over */
                memcpy(aLong, aRecent, sizeof(OScan) * (size_t)nRecent);
                nRecent = 0;
                posLong = posRecent;
            }
        }
    }
    return LP_OK;
}

/* Does o's document hold, in one field, an occurrence of each child, each
** starting at or after the end of the one before (Sphinx's ORDER)? Per
** field, the earliest end of a chain of the first children is enough to
** know (greedy): a later child only needs an occurrence past it. Inside
** another ORDER, the occurrences of the chains Sphinx's scan finds are
** kept for that one (order_scan). */
static int near_any_holds(AndIt *x);

/* Reads the occurrences of x's first n children at its document into
** o->aHit, each child's sorted by (field, position). LP_OK or LP_NOMEM
** (q->rc set). */
static int order_collect_all(AndIt *x, int n) {
    OrderIt *o = (OrderIt *)x;
    uint32_t d = x->base.doc;
    o->nHit = 0;
    for (int i = 0; i < n; i++) {
        o->aStart[i] = o->nHit;
        if (order_collect(o, x->a[i], d)) {
            return x->base.q->rc = lp_err_set(&x->base.q->errIter, LP_NOMEM, "out of memory");
        }
        if (o->nHit - o->aStart[i] > 1) {
            qsort(o->aHit + o->aStart[i], (size_t)(o->nHit - o->aStart[i]), sizeof(OHit), ohit_cmp);
        }
    }
    o->aStart[n] = o->nHit;
    return LP_OK;
}

static int notnear_any_holds(AndIt *x);

static int order_holds(AndIt *x) {
    if (x->base.pn->bOrder == ORDER_NEAR) return near_any_holds(x);
    if (x->base.pn->bOrder == ORDER_NOTNEAR) return notnear_any_holds(x);
    OrderIt *o = (OrderIt *)x;
    if (order_collect_all(x, x->n)) return 0;
    o->nOut = 0;
    int bHolds = 0;
    for (int k = o->aStart[0]; k < o->aStart[1]; k++) {
        uint32_t f = o->aHit[k].f;
        if (k > o->aStart[0] && o->aHit[k - 1].f == f) continue; /* one try per field */
        uint32_t end = 0;
        int i = 0;
        for (; i < x->n; i++) {
            uint32_t best = UINT32_MAX;
            for (int j = o->aStart[i]; j < o->aStart[i + 1]; j++) {
                const OHit *h = &o->aHit[j];
                if (h->f == f && h->pos >= end && h->end < best) best = h->end;
            }
            if (best == UINT32_MAX) break;
            end = best;
        }
        if (i == x->n) {
            bHolds = 1;
            break;
        }
    }
    if (bHolds && o->bNested && order_scan(o, o->aHit, o->aStart, x->n, &o->aOut, &o->nOut, &o->nOutCap)) {
        x->base.q->rc = lp_err_set(&x->base.q->errIter, LP_NOMEM, "out of memory");
        return 0;
    }
    return bHolds;
}

/* near_any's stream order: by position; at one position, the higher tie
** first, then the later child (as near_scan merges its children). */
static int nearhit_cmp(const void *x, const void *y) {
    const NearHit *a = x, *b = y;
    if (a->pos != b->pos) return a->pos < b->pos ? -1 : 1;
    if (a->tie != b->tie) return a->tie > b->tie ? -1 : 1;
    return (a->who < b->who) - (a->who > b->who);
}

/* Sphinx sorts NEAR's children by their documents: a word's df in field f,
** any other child's as many as can be (as near_scan ties them). */
static uint32_t near_any_tie(const PlanNode *c, uint32_t f) {
    if (c->kind == PN_LEAF) return c->df;
    if (c->kind != PN_GROUP || c->boost) return UINT32_MAX;
    for (int i = 0; i < c->nChild; i++) {
        const PlanNode *l = c->aChild[i];
        if (l->kind != PN_LEAF) return UINT32_MAX;
        if ((uint32_t)l->iField == f) return l->df;
    }
    return UINT32_MAX;
}

/* NEAR/N over any operands (ORDER_NEAR): do the children's occurrences
** (order_collect: each where it matches) make a chain in one field, as
** Sphinx's NEAR matches its children's hits? Per field, near_scan's levels
** (a run of links of one distance is one level, whose first child is the
** level before) through the same automaton (fsm_step). Inside another
** ORDER, the chains the last level completes are kept for it, each from
** its start, one position per operand (as near_scan's). */
static int near_any_holds(AndIt *x) {
    OrderIt *o = (OrderIt *)x;
    const PlanNode *pn = x->base.pn;
    FtsQuery *q = x->base.q;
    if (order_collect_all(x, x->n)) return 0;
    int n = x->n;
    o->nOut = 0;
    if (!o->aFsmWho) {
        o->aFsmWho = arena_alloc(q->a, sizeof(int) * (size_t)(n + 1));
        o->aFsmRing = arena_alloc(q->a, sizeof(NearHit) * (size_t)(n + 1));
        if (!o->aFsmWho || !o->aFsmRing) goto nomem;
    }
    if (o->nHit + 1 > o->nNearCap) {
        int cap = 2 * (o->nHit + 1);
        NearHit *a = arena_alloc(q->a, sizeof(NearHit) * 3 * (size_t)cap);
        if (!a) goto nomem;
        o->aNear = a;
        o->nNearCap = cap;
    }
    int bHolds = 0;
    for (int k = o->aStart[0]; k < o->aStart[1]; k++) {
        uint32_t f = o->aHit[k].f;
        if (k > o->aStart[0] && o->aHit[k - 1].f == f) continue; /* one try per field */
        NearHit *aS = o->aNear, *aOut = aS + o->nNearCap, *aPrev = aOut + o->nNearCap;
        int nPrev = 0, bField = 0;
        for (int o0 = 0; o0 < n;) {
            uint32_t near;
            int o1 = near_level(pn->aDist, n, o0, &near); /* the level's operands: [o0, o1) */
            int m = 0, who = 0;
            if (o0) {
                for (int j = 0; j < nPrev; j++) aS[m++] = (NearHit){aPrev[j].pos, aPrev[j].len, 0, UINT32_MAX};
                who = 1;
            }
            for (int c = o0; c < o1; c++, who++) {
                uint32_t tie = near_any_tie(pn->aChild[c], f);
                for (int j = o->aStart[c]; j < o->aStart[c + 1]; j++) {
                    const OHit *h = &o->aHit[j];
                    if (h->f == f) aS[m++] = (NearHit){h->pos + 1, h->end - h->pos, who, tie};
                }
            }
            qsort(aS, (size_t)m, sizeof(NearHit), nearhit_cmp);
            NearFsm fsm = fsm_new(who, near, o->aFsmWho, o->aFsmRing);
            int nOut = 0;
            for (int j = 0; j < m; j++) {
                NearHit out;
                if (fsm_step(&fsm, &aS[j], &out)) aOut[nOut++] = out;
            }
            if (nOut == 0) break;
            if (o1 == n) {
                bField = 1;
                for (int j = 0; o->bNested && j < nOut; j++) {
                    uint32_t s0 = aOut[j].pos - 1;
                    if (ohit_append(q->a, &o->aOut, &o->nOut, &o->nOutCap, f, s0, s0 + (uint32_t)n)) goto nomem;
                }
                break;
            }
            memcpy(aPrev, aOut, sizeof(NearHit) * (size_t)nOut);
            nPrev = nOut;
            o0 = o1;
        }
        bHolds |= bField;
        if (bHolds && !o->bNested) break;
    }
    return bHolds;
nomem:
    q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
    return 0;
}


/* NOTNEAR/N over any operands (ORDER_NOTNEAR): has the first child an
** occurrence (order_collect: where it matches, as NEAR reads it) in some
** field with no occurrence of the second child (x->a[1], moved to the
** document; none where it does not match) within the distance on either
** side in that field? An occurrence of the second at the very place of
** the first's is that one, not another near it (as `a NOTNEAR/3 a` wants
** another a). Inside another ORDER, every such occurrence is kept for it. */
static int notnear_any_holds(AndIt *x) {
    OrderIt *o = (OrderIt *)x;
    It *pNot = x->a[1];
    uint32_t d = x->base.doc;
    if (pNot->doc == FTS_BEFORE_FIRST || pNot->doc < d) pNot->vt->advance(pNot, d);
    if (order_collect_all(x, 2)) return 0;
    uint64_t dist = (uint64_t)x->base.pn->aDist[0];
    const OHit *a = o->aHit;
    int b0 = o->aStart[1], b1 = o->aStart[2], lo = b0, bHolds = 0;
    uint32_t nMaxLen = 0; /* the second's longest occurrence */
    for (int j = b0; j < b1; j++) {
        if (a[j].end - a[j].pos > nMaxLen) nMaxLen = a[j].end - a[j].pos;
    }
    o->nOut = 0;
    for (int k = o->aStart[0]; k < b0; k++) {
        const OHit *h = &a[k];
        /* the second's occurrences before this field, or ending too far
        ** before this one to be near it or any later one */
        while (lo < b1 && (a[lo].f < h->f || (a[lo].f == h->f && (uint64_t)a[lo].pos + nMaxLen + dist < h->pos))) {
            lo++;
        }
        int bNear = 0;
        for (int j = lo; j < b1 && !bNear && a[j].f == h->f && (uint64_t)a[j].pos <= (uint64_t)h->end - 1 + dist; j++) {
            bNear = (uint64_t)a[j].end - 1 + dist >= h->pos && !(a[j].pos == h->pos && a[j].end == h->end);
        }
        if (bNear) continue;
        bHolds = 1;
        if (!o->bNested) break;
        if (ohit_append(x->base.q->a, &o->aOut, &o->nOut, &o->nOutCap, h->f, h->pos, h->end)) {
            x->base.q->rc = lp_err_set(&x->base.q->errIter, LP_NOMEM, "out of memory");
            return 0;
        }
    }
    return bHolds;
}


/* -- every document / no document -- */
static uint32_t all_next(It *it) {
    uint32_t d = it->doc == FTS_BEFORE_FIRST ? 0 : it->doc + 1;
    return it->doc = d < it->q->src->nDocs ? d : FTS_NO_DOC;
}

static uint32_t all_advance(It *it, uint32_t target) {
    return it->doc = target < it->q->src->nDocs ? target : FTS_NO_DOC;
}

static double all_score(It *it) {
    (void)it;
    return 1.0;
}

static const ItVt all_vt = {all_next, all_advance, all_score};

static uint32_t none_move(It *it) {
    return it->doc = FTS_NO_DOC;
}

static uint32_t none_advance(It *it, uint32_t target) {
    (void)target;
    return it->doc = FTS_NO_DOC;
}

static const ItVt none_vt = {none_move, none_advance, all_score};

/* Builds the iterator tree for pn; NULL on error (q->rc set). */
static It *instantiate(FtsQuery *q, const PlanNode *pn) {
    Arena *a = q->a;
    It *it = NULL;
    switch (pn->kind) {
    case PN_LEAF: {
        LeafIt *l = arena_zalloc(a, sizeof(*l));
        /* (an ORDER reads its operands' positions) */
        if (!l || !(l->c = open_cursor(q, pn->key, pn->nKey, &pn->info, q->nOrderInst > 0))) break;
        l->base.vt = &leaf_vt;
        it = &l->base;
        break;
    }
    case PN_PHRASE: {
        PhraseIt *p = arena_zalloc(a, sizeof(*p));
        if (!p) break;
        p->n = pn->nTerm;
        p->ac = arena_zalloc(a, sizeof(FtsPostings *) * (size_t)p->n);
        p->aaPos = arena_zalloc(a, sizeof(uint32_t *) * (size_t)p->n);
        p->anPos = arena_zalloc(a, sizeof(uint32_t) * (size_t)p->n);
        p->anCap = arena_zalloc(a, sizeof(uint32_t) * (size_t)p->n);
        p->aOrder = arena_zalloc(a, sizeof(int) * (size_t)p->n);
        p->aLo = arena_zalloc(a, sizeof(uint32_t) * (size_t)p->n);
        if (!p->ac || !p->aaPos || !p->anPos || !p->anCap || !p->aOrder || !p->aLo) break;
        if (pn->nOp) {
            p->aaStart = arena_zalloc(a, sizeof(uint32_t *) * (size_t)pn->nOp);
            p->anStart = arena_zalloc(a, sizeof(uint32_t) * (size_t)pn->nOp);
            p->anStartCap = arena_zalloc(a, sizeof(uint32_t) * (size_t)pn->nOp);
            if (!p->aaStart || !p->anStart || !p->anStartCap) break;
        }
        int ok = 1;
        for (int i = 0; i < p->n && ok; i++) {
            ok = (p->ac[i] = pn->aAlt && pn->aAlt[i].n
                                 ? open_union(q, &pn->aAlt[i])
                                 : open_cursor(q, pn->aKey[i], pn->anKey[i], &pn->aInfo[i], 1)) != NULL;
            /* insertion into aOrder by df */
            int j = i - 1;
            while (ok && j >= 0 && p->ac[p->aOrder[j]]->df > p->ac[i]->df) {
                p->aOrder[j + 1] = p->aOrder[j];
                j--;
            }
            p->aOrder[j + 1] = i;
        }
        if (ok && pn->nZone && pn->pZones->bSpan) {
            p->hitDoc = FTS_NO_DOC;
            p->aaAll = arena_zalloc(a, sizeof(uint32_t *) * (size_t)p->n);
            p->anAll = arena_zalloc(a, sizeof(uint32_t) * (size_t)p->n);
            p->aCur = arena_zalloc(a, sizeof(uint32_t) * (size_t)p->n);
            ok = p->aaAll && p->anAll && p->aCur;
        }
        if (ok && pn->nZone) ok = zones_open(q, pn, &p->zs);
        if (!ok) break;
        p->base.vt = &phrase_vt;
        it = &p->base;
        break;
    }
    case PN_GROUP: {
        GroupIt *g = arena_zalloc(a, sizeof(*g));
        if (!g) break;
        g->n = pn->nChild;
        g->a = arena_zalloc(a, sizeof(It *) * (size_t)(g->n ? g->n : 1));
        if (!g->a) break;
        int ok = 1;
        for (int i = 0; i < g->n && ok; i++) ok = (g->a[i] = instantiate(q, pn->aChild[i])) != NULL;
        if (!ok) break;
        g->base.vt = &group_vt;
        it = &g->base;
        break;
    }
    case PN_AND: {
        AndIt *x = arena_zalloc(a, pn->bOrder ? sizeof(OrderIt) : sizeof(AndIt));
        if (!x) break;
        x->n = pn->nChild - pn->nNeg;
        x->nNeg = pn->nNeg;
        x->a = arena_zalloc(a, sizeof(It *) * (size_t)pn->nChild);
        if (!x->a) break;
        x->aNeg = x->a + x->n;
        int ok = 1;
        q->nOrderInst += pn->bOrder != 0;
        for (int i = 0; i < pn->nChild && ok; i++) ok = (x->a[i] = instantiate(q, pn->aChild[i])) != NULL;
        q->nOrderInst -= pn->bOrder != 0;
        if (!ok) break;
        x->xOk = pn->pSpan ? span_and_ok : pn->bOrder ? order_holds : NULL;
        x->base.vt = x->xOk ? &tested_and_vt : &and_vt;
        if (pn->bOrder == ORDER_NOTNEAR) x->nNeg = 0; /* the second operand: x->a[1], read, not excluded */
        if (pn->bOrder) {
            OrderIt *o = (OrderIt *)x;
            o->bNested = q->nOrderInst > 0;
            if (!(o->aStart = arena_alloc(a, sizeof(int) * (size_t)(pn->nChild + 1)))) break;
        }
        it = &x->base;
        break;
    }
    case PN_OR:
    case PN_QUORUM: {
        OrIt *o = arena_zalloc(a, sizeof(*o));
        if (!o) break;
        o->n = pn->nChild;
        o->a = arena_zalloc(a, sizeof(It *) * (size_t)(o->n ? o->n : 1));
        if (!o->a) break;
        int ok = 1;
        for (int i = 0; i < o->n && ok; i++) ok = (o->a[i] = instantiate(q, pn->aChild[i])) != NULL;
        if (!ok) break;
        o->base.vt = pn->kind == PN_OR ? &or_vt : &quorum_vt;
        if (o->n >= OR_HEAP_MIN) {
            o->aHeap = arena_alloc(a, sizeof(int) * (size_t)o->n);
            o->aAt = arena_alloc(a, sizeof(int) * (size_t)o->n);
            if (!o->aHeap || !o->aAt) break;
            o->base.vt = pn->kind == PN_OR ? &orh_vt : &quorumh_vt;
        }
        it = &o->base;
        break;
    }
    case PN_MAYBE: {
        MaybeIt *m = arena_zalloc(a, sizeof(*m));
        if (!m || !(m->req = instantiate(q, pn->aChild[0])) || !(m->opt = instantiate(q, pn->aChild[1]))) {
            break;
        }
        m->base.vt = &maybe_vt;
        it = &m->base;
        break;
    }
    case PN_ALL:
    case PN_NONE:
        it = arena_zalloc(a, sizeof(It));
        if (it) it->vt = pn->kind == PN_ALL ? &all_vt : &none_vt;
        break;
    }
    if (!it) {
        if (!q->rc) q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
        return NULL;
    }
    it->doc = FTS_BEFORE_FIRST;
    it->pn = pn;
    it->q = q;
    return it;
}

/* ------------------------------------------------------------------ */
/* Planning                                                            */

/* Analyses a query word or phrase; on error err->pos is made relative to
** the MATCH text. */
static int analyse(FtsQuery *q, const FtsNode *n, int bStem, TokenList *l, LpError *err) {
    if (n->bMissed) return LP_OK; /* @@relaxed, no field of the table: no words */
    int rc = analyzer_collect(q->an, n->z, (size_t)n->n,
                              !bStem ? ANALYZE_UNSTEMMED : n->bExact ? ANALYZE_QUERY_EXACT : ANALYZE_QUERY,
                              l, err);
    if (rc == LP_NOMEM) return lp_err_set(err, LP_NOMEM, "out of memory analysing the query");
    if (rc != LP_OK) {
        int64_t off = n->pos + (err->pos >= 0 ? err->pos : 0);
        return lp_err_setpos(err, rc, off, "MATCH: %s (in '%.*s' at offset %d)", err->zMsg,
                             n->n > 40 ? 40 : n->n, n->z, n->pos);
    }
    return LP_OK;
}

/* The positions word t of x (its text x->z[t->iStart..t->iEnd)) spans past
** its own as documents index it, into *pTail: where '$' must find it. A
** blend token's forms stand at its first part's position, its later parts
** after it ("at&t$" ends the field where its part "t" does: 1); 0 for any
** other word, and on tables without blend_chars. */
static int word_tail(FtsQuery *q, const FtsNode *x, const Token *t, uint32_t *pTail, LpError *err) {
    *pTail = 0;
    if (!analyzer_has_blend(q->an) || t->iEnd <= t->iStart || t->iEnd > (uint32_t)x->n) return LP_OK;
    uint32_t nPos = 0;
    int rc = analyzer_query_span(q->an, x->z + t->iStart, t->iEnd - t->iStart,
                                 x->bExact ? ANALYZE_QUERY_EXACT : ANALYZE_QUERY, &nPos, err);
    if (rc != LP_OK) return rc;
    if (nPos > 1) *pTail = nPos - 1;
    return LP_OK;
}

/* For a clause of x anchored at the field's end ('$'; l: its analysed
** words): in *pTail, word_tail of its last word. */
static int end_tail(FtsQuery *q, const FtsNode *x, const TokenList *l, uint32_t *pTail, LpError *err) {
    *pTail = 0;
    if (!(x->anchor & FTS_ANCHOR_END) || l->a.n == 0) return LP_OK;
    return word_tail(q, x, &l->a.a[l->a.n - 1], pTail, err);
}

static int is_blank(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* The anchors written on words of phrase or quorum x (FtsNode.aMark; a[0..n):
** its analysed words): a '^' anchors the words that start first after it, a
** '$' those that end last before it (of a word that analyses to several,
** the first or the last), unless a blank is between them. Into m, in the
** arena (m->aAnchor NULL when no word has one). LP_OK or an error. */
static int word_marks(FtsQuery *q, const FtsNode *x, const Token *a, size_t n, WordMarks *m, LpError *err) {
    m->aAnchor = NULL;
    m->aTail = NULL;
    if (!x->aMark || n == 0) return LP_OK;
    for (int k = 0; k < x->n; k++) {
        if (x->aMark[k] != '^' && x->aMark[k] != '$') continue; /* (a quorum's groups) */
        int bStart = x->aMark[k] == '^';
        uint32_t best = bStart ? UINT32_MAX : 0;
        int bFound = 0;
        for (size_t i = 0; i < n; i++) {
            if (bStart ? a[i].iStart > (uint32_t)k && a[i].iStart <= best
                       : a[i].iEnd <= (uint32_t)k && a[i].iEnd >= best && a[i].iEnd > a[i].iStart) {
                best = bStart ? a[i].iStart : a[i].iEnd;
                bFound = 1;
            }
        }
        if (!bFound) continue; /* a stop word's, or one on nothing */
        uint32_t lo = bStart ? (uint32_t)k + 1 : best, hi = bStart ? best : (uint32_t)k;
        int bBlank = 0;
        for (uint32_t j = lo; j < hi && !bBlank; j++) bBlank = is_blank(x->z[j]);
        if (bBlank) continue;
        if (!m->aAnchor && !(m->aAnchor = arena_zalloc(q->a, n))) return lp_err_set(err, LP_NOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            if (bStart ? a[i].iStart != best : a[i].iEnd != best || a[i].iEnd <= a[i].iStart) continue;
            m->aAnchor[i] |= bStart ? FTS_ANCHOR_START : FTS_ANCHOR_END;
            if (bStart) continue;
            uint32_t tail;
            int rc = word_tail(q, x, &a[i], &tail, err);
            if (rc != LP_OK) return rc;
            if (tail && !m->aTail && !(m->aTail = arena_zalloc(q->a, sizeof(uint32_t) * n))) {
                return lp_err_set(err, LP_NOMEM, "out of memory");
            }
            if (tail) m->aTail[i] = tail;
        }
    }
    return LP_OK;
}

static uint8_t *make_key(Arena *a, int iField, const char *z, int n) {
    uint8_t *k = arena_alloc(a, (size_t)n + 1);
    if (!k) return NULL;
    k[0] = (uint8_t)iField;
    memcpy(k + 1, z, (size_t)n);
    return k;
}

static PlanNode *new_pn(FtsQuery *q, PNKind kind) {
    PlanNode *pn = arena_zalloc(q->a, sizeof(PlanNode));
    if (pn) pn->kind = kind;
    return pn;
}

static PlanNode g_none = {.kind = PN_NONE};

/* An OR of the nodes in a[0..n): none, one, or several. */
static PlanNode *or_of(FtsQuery *q, PlanNode **a, int n) {
    if (n == 0) return &g_none;
    if (n == 1) return a[0];
    PlanNode *pn = new_pn(q, PN_OR);
    PlanNode **ac = arena_alloc(q->a, sizeof(PlanNode *) * (size_t)n);
    if (!pn || !ac) return NULL;
    memcpy(ac, a, sizeof(PlanNode *) * (size_t)n);
    pn->aChild = ac;
    pn->nChild = n;
    return pn;
}

/* The key's df and cf (0 when absent). A long bag of words repeats words
** and asks for each in every field: the dictionary is searched once per
** key. key must live in the query's arena. */
static int lookup(FtsQuery *q, const uint8_t *key, int nKey, FtsTermInfo *info, LpError *err) {
    const FtsTermInfo *c = hmap_get(&q->lookups, key, (size_t)nKey);
    if (c) {
        *info = *c;
        return LP_OK;
    }
    int r = q->src->vt->xLookup(q->src, key, nKey, info, err);
    if (r < 0) return -r;
    if (r == 0) info->df = 0, info->cf = 0;
    FtsTermInfo *p = arena_alloc(q->a, sizeof(FtsTermInfo));
    if (p) {
        *p = *info;
        /* A failed insert only means a later lookup of this key searches again. */
        (void)hmap_put(&q->lookups, key, (size_t)nKey, p, NULL);
    }
    return LP_OK;
}

/* The documents holding a term in any field of fs, from its leaves
** a[0..n) (one per field of fs that holds it). Exact when fs is fields
** 0..k of the table and every source keeps nEarlier: each document is
** counted in the lowest field holding the term, so the count is the sum of
** df - nEarlier. Otherwise (another field set, a segment file from before
** nEarlier was kept) the largest df, a bound from below. */
static uint32_t term_df(const FtsQuery *q, const FtsFieldSet *fs, PlanNode *const *a, int n) {
    uint32_t dfMax = 0;
    uint64_t sum = 0;
    int bExact = 1, top = -1;
    for (int i = 0; i < n; i++) {
        if (a[i]->df > dfMax) dfMax = a[i]->df;
        if (a[i]->info.nEarlier == FTS_EARLIER_UNKNOWN) bExact = 0;
        else sum += a[i]->df - a[i]->info.nEarlier;
    }
    for (int f = 0; f < q->src->nFields; f++) {
        if (fts_fieldset_has(fs, f)) top = f;
    }
    for (int f = 0; f < top && bExact; f++) bExact = fts_fieldset_has(fs, f);
    return bExact && sum > dfMax ? (uint32_t)sum : dfMax;
}

/* A group of the per-field nodes a[0..n) of one clause; its idf comes from
** df, the documents holding the clause in any of its fields (term_df for
** a term). &g_none when no field has it. */
static PlanNode *group_of(FtsQuery *q, PlanNode **a, int n, uint32_t df, QType qtype) {
    if (n == 0) return &g_none;
    PlanNode *pn = new_pn(q, PN_GROUP);
    PlanNode **ac = arena_alloc(q->a, sizeof(PlanNode *) * (size_t)n);
    if (!pn || !ac) return NULL;
    memcpy(ac, a, sizeof(PlanNode *) * (size_t)n);
    pn->aChild = ac;
    pn->nChild = n;
    pn->qtype = qtype;
    pn->idf = idf_of(q->src->nDocs, df);
    pn->typeWeight = qtype == QT_PHRASE ? q->rank.wPhrase
                     : qtype == QT_PREFIX || qtype == QT_WILDCARD ? q->rank.wPrefix : q->rank.wTerm;
    pn->nRepeat = 1;
    return pn;
}

static int expand_word(FtsQuery *q, int f, const WordExp *e, PhraseAlt *alt, FtsTermInfo *pInfo,
                       LpError *err);

/* A PHRASE node in field f over the analysed words a[0..k) (their iPos
** are the query positions); aExp, unless NULL, says which of them are
** prefixes or wildcards (their terms in the field are found now). NULL
** when out of memory or a lookup fails (err set); *pbAll = 0 when some
** word is not in the field. */
static PlanNode *phrase_pn(FtsQuery *q, int f, const Token *a, const WordExp *aExp, int k, int *pbAll,
                           LpError *err) {
    PlanNode *pn = new_pn(q, PN_PHRASE);
    if (!pn) return NULL;
    pn->aKey = arena_alloc(q->a, sizeof(uint8_t *) * (size_t)k);
    pn->anKey = arena_alloc(q->a, sizeof(int) * (size_t)k);
    pn->aQPos = arena_alloc(q->a, sizeof(uint32_t) * (size_t)k);
    pn->aInfo = arena_alloc(q->a, sizeof(FtsTermInfo) * (size_t)k);
    if (!pn->aKey || !pn->anKey || !pn->aQPos || !pn->aInfo) return NULL;
    *pbAll = 1;
    for (int i = 0; i < k; i++) {
        const WordExp *e = aExp && wexp_used(&aExp[i]) ? &aExp[i] : NULL;
        FtsTermInfo info;
        pn->aQPos[i] = a[i].iPos;
        if (e) {
            /* its key is its pattern ("wor*"; an expanded word's, its term
            ** and its pattern: "run|*running*"), which no term is: words
            ** compare by key (a proximity phrase's repeats) */
            PhraseAlt *aAlt = (PhraseAlt *)pn->aAlt;
            if (!aAlt && !(pn->aAlt = aAlt = arena_zalloc(q->a, sizeof(PhraseAlt) * (size_t)k))) return NULL;
            uint8_t *key;
            int nId;
            if (e->zSelf) {
                /* the pattern's bytes (a prefix's and its '*') after "self|" */
                const char *zStar = e->zGlob ? e->zGlob : e->zPre;
                int nStar = e->zGlob ? e->nGlob : e->zPre ? e->nPre + 1 : 0;
                nId = e->nSelf + (nStar ? 1 + nStar : 0);
                char *zId = arena_alloc(q->a, (size_t)nId + 1);
                if (!zId) return NULL;
                memcpy(zId, e->zSelf, (size_t)e->nSelf);
                if (nStar) {
                    zId[e->nSelf] = '|';
                    memcpy(zId + e->nSelf + 1, zStar, (size_t)(e->zGlob ? nStar : nStar - 1));
                    if (!e->zGlob) zId[nId - 1] = '*';
                }
                if (!(key = make_key(q->a, f, zId, nId))) return NULL;
            } else {
                nId = e->zGlob ? e->nGlob : e->nPre + 1;
                if (!(key = make_key(q->a, f, e->zGlob ? e->zGlob : e->zPre, nId))) return NULL;
                if (!e->zGlob) key[nId] = '*';
            }
            pn->aKey[i] = key;
            pn->anKey[i] = nId + 1;
            if (expand_word(q, f, e, &aAlt[i], &info, err)) return NULL;
            pn->aInfo[i] = info;
            if (info.df == 0) *pbAll = 0;
            pn->idf += idf_of(q->src->nDocs, info.df ? info.df : 1);
            continue;
        }
        if (!(pn->aKey[i] = make_key(q->a, f, a[i].z, a[i].n))) return NULL;
        pn->anKey[i] = a[i].n + 1;
        if (lookup(q, pn->aKey[i], pn->anKey[i], &info, err)) return NULL;
        pn->aInfo[i] = info;
        if (info.df == 0) *pbAll = 0;
        pn->idf += idf_of(q->src->nDocs, info.df ? info.df : 1);
    }
    pn->qtype = QT_PHRASE;
    pn->iField = f;
    pn->nTerm = k;
    if (k == 1) {
        /* an anchored word: a term's df, for term_df */
        pn->info = pn->aInfo[0];
        pn->df = pn->aInfo[0].df;
    }
    return pn;
}

/* Limits every word of pn to the first nLimit positions of its field
** (@field[N]); nLimit 0 leaves it as it is. LP_OK or LP_NOMEM. */
static int limit_positions(FtsQuery *q, PlanNode *pn, uint32_t nLimit) {
    if (!nLimit) return LP_OK;
    uint32_t *a = arena_alloc(q->a, sizeof(uint32_t) * (size_t)pn->nTerm);
    if (!a) return LP_NOMEM;
    for (int i = 0; i < pn->nTerm; i++) a[i] = nLimit;
    pn->aPosLimit = a;
    return LP_OK;
}

/* Limits pn's words to the spans of the zones z (ZONE:(…); NULL leaves it
** as it is): finds the zones' terms in its field. Returns 1, 0 when none
** of the zones has a span in the field (pn then matches nothing there),
** or -1 with err set. */
static int zone_pn(FtsQuery *q, PlanNode *pn, const FtsZones *z, LpError *err) {
    if (!z) return 1;
    pn->pZones = z;
    pn->aZoneKey = arena_alloc(q->a, sizeof(uint8_t *) * 2 * (size_t)z->nName);
    pn->anZoneKey = arena_alloc(q->a, sizeof(int) * 2 * (size_t)z->nName);
    pn->aZoneInfo = arena_alloc(q->a, sizeof(FtsTermInfo) * 2 * (size_t)z->nName);
    if (!pn->aZoneKey || !pn->anZoneKey || !pn->aZoneInfo) goto nomem;
    for (int k = 0; k < z->nName; k++) {
        char zTerm[FTS_MATCH_MAX_ZONE_NAME + 2];
        size_t nName = strlen(z->azName[k]);
        int nz = pn->nZone;
        for (int bEnd = 0; bEnd < 2; bEnd++) {
            zTerm[0] = ANALYZER_ZONE_MARK;
            zTerm[1] = '/';
            memcpy(zTerm + 1 + bEnd, z->azName[k], nName);
            int nTerm = (int)nName + 1 + bEnd;
            const uint8_t *key = make_key(q->a, pn->iField, zTerm, nTerm);
            if (!key) goto nomem;
            pn->aZoneKey[2 * nz + bEnd] = key;
            pn->anZoneKey[2 * nz + bEnd] = nTerm + 1;
            if (lookup(q, key, nTerm + 1, &pn->aZoneInfo[2 * nz + bEnd], err)) return -1;
        }
        /* a zone without spans in this field has no terms here */
        if (pn->aZoneInfo[2 * nz].df && pn->aZoneInfo[2 * nz + 1].df) pn->nZone++;
    }
    return pn->nZone > 0;
nomem:
    lp_err_set(err, LP_NOMEM, "out of memory");
    return -1;
}

/* Sets pn's words' positions in the whole query: qBase, where the clause
** starts, plus their offsets in it. LP_OK or LP_NOMEM. */
static int global_qpos(FtsQuery *q, PlanNode *pn, uint32_t qBase) {
    if (!is_factor_ranker(q->rank.ranker)) return LP_OK;
    if (!(pn->aGQPos = arena_alloc(q->a, sizeof(uint32_t) * (size_t)pn->nTerm))) return LP_NOMEM;
    for (int i = 0; i < pn->nTerm; i++) pn->aGQPos[i] = qBase + pn->aQPos[i];
    return LP_OK;
}

/* Takes the query positions of a clause of the words in l (whose iPos
** count from 0; aExp, when not NULL, says which are prefixes or
** wildcards): returns where it starts. For a proximity ranker, also marks
** them in aQWord, each word by its term, a prefix by its text and a star
** (another word than the prefix written out: "ab ab*" holds two), a
** wildcard by its pattern. */
static uint32_t take_qpos(FtsQuery *q, const TokenList *l, const WordExp *aExp) {
    uint32_t base = q->nQPos;
    if (l->a.n) q->nQPos += l->a.a[l->a.n - 1].iPos + 1;
    if (!is_factor_ranker(q->rank.ranker)) return base;
    if (q->nQPos > q->nQWordCap) {
        uint32_t cap = q->nQPos < 32 ? 64 : q->nQPos * 2;
        uint32_t *a = arena_zalloc(q->a, sizeof(uint32_t) * cap);
        if (!a) return base; /* out of memory: the proximity rankers miss these words */
        if (q->nQWordCap) memcpy(a, q->aQWord, sizeof(uint32_t) * q->nQWordCap);
        q->aQWord = a;
        q->nQWordCap = cap;
    }
    for (size_t i = 0; i < l->a.n && !q->nNotDepth; i++) {
        const Token *t = &l->a.a[i];
        uint32_t v = base + t->iPos;
        const WordExp *e = aExp && aExp[i].zPre && !aExp[i].zSelf ? &aExp[i] : NULL;
        const char *zKey = t->z;
        int nKey = t->n;
        char zStar[FTS_MAX_KEY + 2];
        if (e && e->zGlob) {
            zKey = e->zGlob, nKey = e->nGlob;
        } else if (e && e->nPre < FTS_MAX_KEY) {
            memcpy(zStar, e->zPre, (size_t)e->nPre);
            zStar[e->nPre] = '*';
            zKey = zStar, nKey = e->nPre + 1;
        }
        void *pFirst = hmap_get(&q->qwords, zKey, (size_t)nKey);
        q->aQWord[v] = pFirst ? (uint32_t)(uintptr_t)pFirst : v + 1;
        if (pFirst) continue;
        /* a new keyword; out of memory: query_word_count misses it */
        char *z = arena_strndup(q->a, zKey, (size_t)nKey);
        if (z && hmap_put(&q->qwords, z, (size_t)nKey, (void *)(uintptr_t)(v + 1), NULL) == LP_OK) {
            q->nQWordUniq++;
        }
    }
    return base;
}

/* The word at query position j: the first position the query holds it
** at (word_count and doc_word_count count a repeated word once). */
static uint32_t qword_of(const FtsQuery *q, uint32_t j) {
    return j < q->nQWordCap && q->aQWord[j] ? q->aQWord[j] - 1 : j;
}

/* A phrase's idf is the sum of its words'; over its fields the smallest
** (its largest per-field df, a bound from below on the documents holding
** it in any field). */
static void phrase_group_idf(PlanNode *g) {
    if (!g || g->kind != PN_GROUP) return;
    g->idf = g->aChild[0]->idf;
    for (int i = 1; i < g->nChild; i++) {
        if (g->aChild[i]->idf < g->idf) g->idf = g->aChild[i]->idf;
    }
}

/* The per-field nodes of one clause made of the analysed words in l
** (anchor: FTS_ANCHOR_* for an exact phrase or a word, nEndTail its
** end_tail; pm: the anchors on its words, or NULL; nPosLimit: the
** position limit of @field[N], 0 for none). A word alone is a term
** leaf, unless anchored or limited: then a phrase of one word, whose
** positions are read. */
static PlanNode *plan_words(FtsQuery *q, const FtsNode *n, const TokenList *l, const WordExp *aExp,
                            const WordMarks *pm, QType qtype, int nSlop, int anchor, uint32_t nEndTail,
                            uint32_t nPosLimit, const FtsZones *pZones, uint32_t qBase, LpError *err) {
    PlanNode *aField[FTS_MAX_FIELDS];
    int nField = 0;
    uint32_t N = q->src->nDocs;
    if (pm && !pm->aAnchor) pm = NULL;
    for (int f = 0; f < q->src->nFields; f++) {
        if (!fts_fieldset_has(&n->fields, f)) continue;
        if (l->a.n == 1 && !anchor && !pm && !nPosLimit && !pZones && !(aExp && aExp[0].zPre)) {
            PlanNode *pn = new_pn(q, PN_LEAF);
            if (!pn || !(pn->key = make_key(q->a, f, l->a.a[0].z, l->a.a[0].n))) return NULL;
            pn->nKey = l->a.a[0].n + 1;
            FtsTermInfo info;
            if (lookup(q, pn->key, pn->nKey, &info, err)) return NULL;
            if (info.df == 0) continue; /* matches nothing in this field */
            pn->qtype = QT_TERM;
            pn->iField = f;
            pn->qpos = qBase + l->a.a[0].iPos;
            pn->info = info;
            pn->df = info.df;
            pn->idf = idf_of(N, info.df);
            aField[nField++] = pn;
            continue;
        }
        int bAll;
        PlanNode *pn = phrase_pn(q, f, l->a.a, aExp, (int)l->a.n, &bAll, err);
        if (!pn) return NULL;
        if (!bAll) continue;
        pn->nSlop = nSlop;
        pn->anchor = anchor;
        pn->nEndTail = nEndTail;
        if (pm) {
            pn->aWordAnchor = pm->aAnchor;
            pn->aWordTail = pm->aTail;
        }
        if (limit_positions(q, pn, nPosLimit) || global_qpos(q, pn, qBase)) return NULL;
        int rz = zone_pn(q, pn, pZones, err);
        if (rz < 0) return NULL;
        if (rz == 0) continue;
        aField[nField++] = pn;
    }
    PlanNode *g = group_of(q, aField, nField, l->a.n == 1 ? term_df(q, &n->fields, aField, nField) : 0,
                           qtype);
    if (qtype == QT_PHRASE) phrase_group_idf(g);
    return g;
}

/* A one-word view of a token, for plan_words. */
static TokenList token_list_one(Token *t) {
    TokenList l = {{0}, {0}};
    l.a.a = t;
    l.a.n = 1;
    l.a.cap = 1;
    return l;
}

static void sort_by_cost(Arena *ar, PlanNode **a, int n);
static void keep_keywords(FtsQuery *q, PlanNode *pn);
static int phrase_prefixes(FtsQuery *q, const FtsNode *n, TokenList *l, WordExp **paExp, LpError *err);
static int phrase_expansions(FtsQuery *q, const FtsNode *n, const TokenList *l, WordExp **paExp,
                             LpError *err);
static PlanNode *plan_expanded(FtsQuery *q, const FtsNode *n, const TokenList *l, uint32_t qBase,
                               LpError *err);
static int operand_words(FtsQuery *q, const FtsNode *x, TokenList *l, WordExp **paExp, LpError *err);
static PlanNode *expand_terms(FtsQuery *q, const FtsNode *n, uint32_t qpos, const uint8_t *pre,
                              int nPre, const char *zGlob, int nGlob, LpError *err);

/* Quorum word i of l (its prefix or wildcard aExp[i] when aExp has one,
** its anchors in wm), as the quorum counts it: an anchored word a phrase
** of one word, as '^cat'; with bExpand (expand_keywords) a plain word
** planned as one outside the quorum. NULL on error. */
static PlanNode *quorum_word(FtsQuery *q, const FtsNode *n, const TokenList *l, const WordExp *aExp,
                             const WordMarks *wm, size_t i, int bExpand, uint32_t qBase, LpError *err) {
    TokenList one = token_list_one(&l->a.a[i]);
    const WordExp *e = aExp && aExp[i].zPre ? &aExp[i] : NULL;
    const Token *t = &l->a.a[i];
    WordMarks m1 = {wm->aAnchor ? &wm->aAnchor[i] : NULL, wm->aTail ? &wm->aTail[i] : NULL};
    if (m1.aAnchor && *m1.aAnchor) {
        return plan_words(q, n, &one, e, &m1, QT_TERM, 0, 0, 0, n->nPosLimit, n->pZones, qBase, err);
    }
    if (e) return expand_terms(q, n, qBase + t->iPos, (const uint8_t *)e->zPre, e->nPre, e->zGlob, e->nGlob, err);
    if (bExpand && t->n > 0 && t->z[0] != ANALYZER_EXACT_MARK && !(t->iStart > 0 && n->z[t->iStart - 1] == '=')) {
        /* the word alone, as a node of its own text */
        FtsNode x = *n;
        x.kind = FTSN_TERM;
        x.z = arena_strndup(q->a, n->z + t->iStart, t->iEnd - t->iStart);
        x.n = (int)(t->iEnd - t->iStart);
        x.anchor = 0;
        x.aMark = NULL;
        x.bExact = 0;
        Token t0 = *t;
        t0.iPos = 0;
        TokenList one0 = token_list_one(&t0);
        return x.z ? plan_expanded(q, &x, &one0, qBase + t->iPos, err) : NULL;
    }
    return plan_words(q, n, &one, NULL, NULL, QT_TERM, 0, 0, 0, n->nPosLimit, n->pZones, qBase, err);
}

/* Quorum x's OR groups (FtsNode.aMark '(' '|' ')', quorum_groups in
** match.c): per byte of x->z, the group it is in (-1: none) into aGroup
** and its part of that group into aPart. Returns how many groups. */
static int quorum_group_map(const FtsNode *x, int *aGroup, int *aPart) {
    int nGroup = 0, g = -1, part = 0;
    for (int k = 0; k < x->n; k++) {
        uint8_t m = x->aMark ? x->aMark[k] : 0;
        if (m == '(') g = nGroup++, part = 0;
        else if (m == '|') part++;
        else if (m == ')') g = -1;
        aGroup[k] = g;
        aPart[k] = part;
    }
    return nGroup;
}

/* "a b c"/N: a group per distinct word, of which nThreshold must match;
** an OR group ("a (b | c)"/1, Manticore's) is one of them, matched by any
** of its parts (a part of several words: their exact phrase). */
static PlanNode *plan_quorum(FtsQuery *q, const FtsNode *n, int *pbDropped, LpError *err) {
    TokenList l = {{0}, {0}};
    PlanNode *res = NULL;
    WordExp *aExp; /* its prefixes ("a b*"/1), or NULL */
    WordMarks wm; /* its words' anchors ("a$ b c"/2) */
    if (analyse(q, n, 1, &l, err) || phrase_prefixes(q, n, &l, &aExp, err) ||
        word_marks(q, n, l.a.a, l.a.n, &wm, err)) {
        goto done;
    }
    /* its OR groups: each word's group and part, -1 outside any */
    int *aByteGroup = arena_alloc(q->a, sizeof(int) * 2 * ((size_t)n->n + 1));
    int *aGroup = arena_alloc(q->a, sizeof(int) * 2 * (l.a.n + 1));
    if (!aByteGroup || !aGroup) goto nomem;
    int *aPart = aGroup + l.a.n + 1;
    int nGroup = quorum_group_map(n, aByteGroup, aByteGroup + n->n + 1);
    for (size_t i = 0; i < l.a.n; i++) {
        uint32_t k = l.a.a[i].iStart;
        aGroup[i] = nGroup && k < (uint32_t)n->n ? aByteGroup[k] : -1;
        aPart[i] = nGroup && k < (uint32_t)n->n ? aByteGroup[n->n + 1 + k] : 0;
    }
    /* expand_keywords: its plain words, each planned as one outside it */
    int bExpand = q->rank.expand && !q->nNotDepth && !n->bExact;
    uint32_t qBase = take_qpos(q, &l, aExp);
    int nWord = 0, iMerged = q->nMerged;
    for (size_t i = 0; i < l.a.n; i++) {
        int j = 0, bPre = aExp && aExp[i].zPre;
        while (aGroup[i] < 0 && j < nWord &&
               !(aGroup[j] < 0 && l.a.a[j].n == l.a.a[i].n && !memcmp(l.a.a[j].z, l.a.a[i].z, (size_t)l.a.a[i].n) &&
                 (aExp && aExp[j].zPre) == bPre)) {
            j++;
        }
        if (aGroup[i] >= 0 || j == nWord) {
            if (aExp) aExp[nWord] = aExp[i];
            if (wm.aAnchor) wm.aAnchor[nWord] = wm.aAnchor[i];
            if (wm.aTail) wm.aTail[nWord] = wm.aTail[i];
            aGroup[nWord] = aGroup[i];
            aPart[nWord] = aPart[i];
            l.a.a[nWord++] = l.a.a[i];
        } else if (is_factor_ranker(q->rank.ranker) && !bPre) {
            /* a repeat counts once (with the anchors of its first, as in
            ** Sphinx: "^dog dog run"/2 is "^dog run"/2), but its place in
            ** the query is a keyword's, its own anchors too */
            Token t = l.a.a[i];
            TokenList one = token_list_one(&t);
            /* (its marks copied: the node keeps them, and the words after
            ** it move down over wm's as the loop goes on) */
            WordMarks mi = {NULL, NULL};
            if (wm.aAnchor && wm.aAnchor[i]) {
                mi.aAnchor = arena_alloc(q->a, 1);
                mi.aTail = arena_alloc(q->a, sizeof(uint32_t));
                if (!mi.aAnchor || !mi.aTail) goto nomem;
                *mi.aAnchor = wm.aAnchor[i];
                *mi.aTail = wm.aTail ? wm.aTail[i] : 0;
            }
            PlanNode *g = plan_words(q, n, &one, NULL, mi.aAnchor ? &mi : NULL, QT_TERM, 0, 0, 0, n->nPosLimit,
                                     n->pZones, qBase, err);
            if (!g) goto nomem;
            keep_keywords(q, g);
        }
    }
    l.a.n = (size_t)nWord;
    /* what the threshold counts: each word outside a group, each group */
    PlanNode **a = arena_alloc(q->a, sizeof(PlanNode *) * 2 * ((size_t)nWord + 1));
    if (!a) goto nomem;
    PlanNode **aAlt = a + nWord + 1; /* a group's parts */
    int nCount = 0, nPresent = 0;
    for (int i = 0; i < nWord;) {
        if (aGroup[i] < 0) {
            PlanNode *g = quorum_word(q, n, &l, aExp, &wm, (size_t)i, bExpand, qBase, err);
            if (!g) goto nomem;
            if (g->kind != PN_NONE) a[nPresent++] = g;
            nCount++;
            i++;
            continue;
        }
        int nAlt = 0, iEnd = i;
        while (iEnd < nWord && aGroup[iEnd] == aGroup[i]) iEnd++;
        for (int b = i, e; b < iEnd; b = e) {
            for (e = b + 1; e < iEnd && aPart[e] == aPart[b];) e++;
            PlanNode *g;
            if (e == b + 1) {
                g = quorum_word(q, n, &l, aExp, &wm, (size_t)b, bExpand, qBase, err);
            } else {
                /* a part of several words: their phrase, anchors and all */
                TokenList sub = {{l.a.a + b, (size_t)(e - b), (size_t)(e - b)}, {0}};
                WordMarks ms = {wm.aAnchor ? wm.aAnchor + b : NULL, wm.aTail ? wm.aTail + b : NULL};
                g = plan_words(q, n, &sub, aExp ? aExp + b : NULL, &ms, QT_PHRASE, 0, 0, 0, n->nPosLimit, n->pZones,
                               qBase, err);
            }
            if (!g) goto nomem;
            if (g->kind != PN_NONE) aAlt[nAlt++] = g;
        }
        PlanNode *g = or_of(q, aAlt, nAlt);
        if (!g) goto nomem;
        if (g->kind != PN_NONE) a[nPresent++] = g;
        nCount++;
        i = iEnd;
    }
    if (nCount == 0) {
        *pbDropped = 1;
        goto done;
    }
    int nThr = n->nQuorum ? n->nQuorum : (int)floor(n->fQuorum * nCount + 0.5);
    if (nThr < 1) nThr = 1;
    if (nThr > nCount) nThr = nCount;
    if (nPresent < nThr) {
        res = &g_none;
    } else if (nThr == 1) {
        res = or_of(q, a, nPresent);
    } else {
        res = new_pn(q, nThr == nPresent ? PN_AND : PN_QUORUM);
        if (!res) goto nomem;
        if (nThr == nPresent) sort_by_cost(q->a, a, nPresent);
        res->aChild = a;
        res->nChild = nPresent;
        res->nThreshold = nThr;
    }
    if (!res) goto nomem;
    /* the repeats' keywords count where the quorum does */
    for (int i = iMerged; i < q->nMerged && res != &g_none; i++) q->apMerged[i]->pOwner = res;
done:
    token_list_free(&l);
    return res;
nomem:
    if (!err->code) lp_err_set(err, LP_NOMEM, "out of memory");
    token_list_free(&l);
    return NULL;
}

/* Are operands r and o of a chain (words aTok[aOpStart[r]..], each a
** prefix or wildcard where aExp says so) the same words, at the same
** distances, with the same anchors (aAnchor: per operand, or NULL; pm:
** per word)? */
static int same_operand(const Token *aTok, const WordExp *aExp, const WordMarks *pm, const int *aOpStart,
                        const int *aAnchor, int r, int o) {
    int n = aOpStart[r + 1] - aOpStart[r];
    if (aOpStart[o + 1] - aOpStart[o] != n || (aAnchor && aAnchor[r] != aAnchor[o])) return 0;
    for (int i = 0; i < n; i++) {
        const Token *a = &aTok[aOpStart[r] + i], *b = &aTok[aOpStart[o] + i];
        if (pm->aAnchor && pm->aAnchor[aOpStart[r] + i] != pm->aAnchor[aOpStart[o] + i]) return 0;
        if (a->n != b->n || memcmp(a->z, b->z, (size_t)a->n) != 0 || a->iPos - aTok[aOpStart[r]].iPos !=
                                                                        b->iPos - aTok[aOpStart[o]].iPos) {
            return 0;
        }
        const WordExp *ea = aExp ? &aExp[aOpStart[r] + i] : NULL, *eb = aExp ? &aExp[aOpStart[o] + i] : NULL;
        int bA = ea && ea->zPre, bB = eb && eb->zPre;
        if (bA != bB || (bA && ((ea->zGlob != NULL) != (eb->zGlob != NULL)))) return 0;
    }
    return 1;
}

/* a << b << "c d", a NEAR/3 b, a SENTENCE b: one PHRASE node per field
** (nOp operands), grouped and scored as a phrase. An operand that analyses
** to nothing (stop words) is left out with the link before it (after it,
** for the first); a chain of one operand is that word or phrase alone.
** SENTENCE and PARAGRAPH add the boundaries' terms after the operands'
** words, as words a document need not hold (where it has none, the whole
** field is one part). */
static PlanNode *plan_chain(FtsQuery *q, const FtsNode *n, int *pbDropped, LpError *err) {
    TokenList *aL = arena_zalloc(q->a, sizeof(TokenList) * (size_t)n->nChild);
    int *aOpStart = arena_alloc(q->a, sizeof(int) * (size_t)(n->nChild + 1));
    int *aDist = n->kind == FTSN_NEAR ? arena_alloc(q->a, sizeof(int) * (size_t)n->nChild) : NULL;
    PlanNode *res = NULL;
    if (!aL || !aOpStart || (n->kind == FTSN_NEAR && !aDist)) {
        lp_err_set(err, LP_NOMEM, "out of memory");
        return NULL;
    }
    int nOp = 0, nTok = 0;
    uint32_t *aOpBase = arena_alloc(q->a, sizeof(uint32_t) * (size_t)n->nChild);
    if (!aOpBase) {
        lp_err_set(err, LP_NOMEM, "out of memory");
        return NULL;
    }
    uint32_t nOneLimit = 0; /* the position limit of the last operand kept */
    int bLimited = 0;       /* some operand has one */
    const FtsZones *pZones = NULL; /* the operands' zone limit (one for all) */
    int bZoned = 0;
    WordExp **aaExp = arena_zalloc(q->a, sizeof(WordExp *) * (size_t)n->nChild);
    WordExp *aExp = NULL; /* per word of all operands, when some is a prefix or wildcard */
    WordMarks *aMarks = arena_zalloc(q->a, sizeof(WordMarks) * (size_t)n->nChild); /* per operand */
    WordMarks wm = {NULL, NULL}; /* per word of all operands, when some is anchored ("a$ b" << c) */
    int *aOpAnchor = NULL; /* per operand kept, when some is anchored */
    uint32_t *aOpTail = NULL; /* per operand kept, when some end anchor has a tail */
    if (!aaExp || !aMarks) {
        lp_err_set(err, LP_NOMEM, "out of memory");
        return NULL;
    }
    for (int c = 0; c < n->nChild; c++) {
        if (operand_words(q, n->aChild[c], &aL[c], &aaExp[c], err) ||
            word_marks(q, n->aChild[c], aL[c].a.a, aL[c].a.n, &aMarks[c], err)) {
            goto out;
        }
        int bNeg = n->bNotNear && c == 1; /* NOTNEAR's second operand is no keyword */
        /* expand_keywords: an operand's plain words, as a phrase's (NOTNEAR's
        ** second too: what is near is any of its forms) */
        const FtsNode *x = n->aChild[c];
        if (q->rank.expand && !q->nNotDepth && (x->kind == FTSN_TERM || x->kind == FTSN_PHRASE) &&
            phrase_expansions(q, x, &aL[c], &aaExp[c], err)) {
            goto out;
        }
        q->nNotDepth += bNeg;
        aOpBase[c] = take_qpos(q, &aL[c], aaExp[c]);
        q->nNotDepth -= bNeg;
        if (aL[c].a.n == 0 && n->bNotNear && c == 0) {
            *pbDropped = 1; /* nothing to match near or far from */
            goto out;
        }
        if (aL[c].a.n == 0 && q->bStrictChoice && c < 64 && ((n->orOps >> c) & 1)) {
            /* one alternative of an OR list, only stop words: the OR leaves
            ** it out, so this choice is none ((the | cat) << dog is cat << dog) */
            *pbDropped = 1;
            goto out;
        }
        if (aL[c].a.n == 0) continue;
        nOneLimit = n->aChild[c]->nPosLimit;
        bLimited |= nOneLimit != 0;
        if (bZoned && n->aChild[c]->pZones != pZones) {
            const FtsNode *x = n->aChild[c];
            lp_err_setpos(err, LP_BADINPUT, x->pos, "MATCH: the operands of '<<', NEAR, NOTNEAR, SENTENCE "
                          "and PARAGRAPH take one ZONE limit: the operand at offset %d has another", x->pos);
            err->detail = FTS_MATCH_ER_PARSE;
            goto out;
        }
        pZones = n->aChild[c]->pZones;
        bZoned = 1;
        if (aDist && nOp > 0) aDist[nOp - 1] = n->aDist[c - 1];
        if (n->aChild[c]->anchor) {
            if (!aOpAnchor && !(aOpAnchor = arena_zalloc(q->a, sizeof(int) * (size_t)n->nChild))) goto nomem;
            aOpAnchor[nOp] = n->aChild[c]->anchor;
            uint32_t tail;
            if (end_tail(q, n->aChild[c], &aL[c], &tail, err)) goto out;
            if (tail && !aOpTail && !(aOpTail = arena_zalloc(q->a, sizeof(uint32_t) * (size_t)n->nChild))) {
                goto nomem;
            }
            if (tail) aOpTail[nOp] = tail;
        }
        aOpStart[nOp++] = nTok;
        nTok += (int)aL[c].a.n;
    }
    aOpStart[nOp] = nTok;
    if (nOp == 0) {
        *pbDropped = 1;
        goto out;
    }
    int iSp = n->kind == FTSN_SENTENCE ? SP_SENTENCE : n->kind == FTSN_PARAGRAPH ? SP_PARAGRAPH : SP_NONE;
    int nBound = nOp == 1 ? 0 : iSp == SP_SENTENCE ? 2 : iSp == SP_PARAGRAPH ? 1 : 0;
    Token *aTok = arena_alloc(q->a, sizeof(Token) * (size_t)(nTok + nBound));
    if (!aTok) goto nomem;
    int k = 0;
    for (int c = 0; c < n->nChild; c++) {
        if (aaExp[c] && !aExp && !(aExp = arena_zalloc(q->a, sizeof(WordExp) * (size_t)(nTok + nBound)))) {
            goto nomem;
        }
        if (aMarks[c].aAnchor && !wm.aAnchor &&
            (!(wm.aAnchor = arena_zalloc(q->a, (size_t)(nTok + nBound))) ||
             !(wm.aTail = arena_zalloc(q->a, sizeof(uint32_t) * (size_t)(nTok + nBound))))) {
            goto nomem;
        }
        for (size_t i = 0; i < aL[c].a.n; i++) {
            if (aaExp[c]) aExp[k] = aaExp[c][i];
            if (aMarks[c].aAnchor) wm.aAnchor[k] = aMarks[c].aAnchor[i];
            if (aMarks[c].aTail) wm.aTail[k] = aMarks[c].aTail[i];
            aTok[k++] = aL[c].a.a[i];
        }
    }
    /* NEAR and NOTNEAR: the operands a chain repeats take occurrences of
    ** their own (near_distinct); aOpSame[o]: the first operand like o */
    int *aOpSame = aDist ? arena_alloc(q->a, sizeof(int) * (size_t)nOp) : NULL, bRepeat = 0;
    if (aDist && !aOpSame) goto nomem;
    for (int o = 0; aDist && o < nOp; o++) {
        int r = 0;
        while (r < o && !same_operand(aTok, aExp, &wm, aOpStart, aOpAnchor, r, o)) r++;
        aOpSame[o] = r;
        bRepeat |= r < o;
    }
    if (!bRepeat) aOpSame = NULL;
    /* the boundaries' terms: a paragraph's ends a sentence too */
    for (int b = 0; b < nBound; b++) {
        const char *z = b == 0 ? ANALYZER_PARAGRAPH : ANALYZER_SENTENCE;
        aTok[k++] = (Token){z, (int)strlen(z), 0, 0, 0};
    }
    if (nOp == 1) {
        TokenList l = token_list_one(aTok);
        l.a.n = (size_t)nTok;
        uint32_t qBase = 0;
        for (int c = 0; c < n->nChild; c++) {
            if (aL[c].a.n) qBase = aOpBase[c];
        }
        if (nTok == 1 && aExp && aExp[0].zPre && !aExp[0].zSelf && !nOneLimit && !pZones) {
            /* a prefix or wildcard alone: as it is outside a chain */
            res = expand_terms(q, n, qBase, (const uint8_t *)aExp[0].zPre, aExp[0].nPre, aExp[0].zGlob,
                               aExp[0].nGlob, err);
        } else {
            res = plan_words(q, n, &l, aExp, wm.aAnchor ? &wm : NULL, nTok > 1 ? QT_PHRASE : QT_TERM, 0,
                             aOpAnchor ? aOpAnchor[0] : 0,
                             aOpTail ? aOpTail[0] : 0, nOneLimit, pZones, qBase, err);
        }
        if (!res) goto nomem;
        goto out;
    }
    PlanNode *aField[FTS_MAX_FIELDS];
    int nField = 0;
    for (int f = 0; f < q->src->nFields; f++) {
        if (!fts_fieldset_has(&n->fields, f)) continue;
        int bAll;
        PlanNode *pn = phrase_pn(q, f, aTok, aExp, nTok + nBound, &bAll, err);
        if (!pn) goto nomem;
        if (n->bNotNear || iSp) {
            /* only the first operand (NOTNEAR), or the operands and not
            ** the boundaries (SENTENCE, PARAGRAPH), must be in the field;
            ** the idf is theirs */
            bAll = 1;
            pn->idf = 0;
            for (int i = 0; i < (iSp ? nTok : aOpStart[1]); i++) {
                bAll &= pn->aInfo[i].df > 0;
                pn->idf += idf_of(q->src->nDocs, pn->aInfo[i].df ? pn->aInfo[i].df : 1);
            }
        }
        if (!bAll) continue;
        int rz = zone_pn(q, pn, pZones, err);
        if (rz < 0) goto nomem;
        if (rz == 0) continue;
        pn->nOp = nOp;
        pn->aOpStart = aOpStart;
        pn->aDist = aDist;
        pn->aOpSame = aOpSame;
        pn->aOpAnchor = aOpAnchor;
        pn->aOpTail = aOpTail;
        pn->aWordAnchor = wm.aAnchor;
        pn->aWordTail = wm.aTail;
        pn->bNotNear = n->bNotNear;
        pn->iSp = iSp;
        if (bLimited) {
            /* each operand's words take its own limit */
            uint32_t *aLim = arena_zalloc(q->a, sizeof(uint32_t) * (size_t)(nTok + nBound));
            if (!aLim) goto nomem;
            for (int c = 0, w = 0; c < n->nChild; c++) {
                for (size_t i = 0; i < aL[c].a.n; i++) aLim[w++] = n->aChild[c]->nPosLimit;
            }
            pn->aPosLimit = aLim;
        }
        /* each operand's words from where it starts in the query */
        if (is_factor_ranker(q->rank.ranker)) {
            if (!(pn->aGQPos = arena_zalloc(q->a, sizeof(uint32_t) * (size_t)(nTok + nBound)))) goto nomem;
            for (int c = 0, w = 0; c < n->nChild; c++) {
                for (size_t i = 0; i < aL[c].a.n; i++) pn->aGQPos[w++] = aOpBase[c] + aL[c].a.a[i].iPos;
            }
        }
        aField[nField++] = pn;
    }
    res = group_of(q, aField, nField, 0, QT_PHRASE);
    if (!res) goto nomem;
    phrase_group_idf(res);
out:
    for (int c = 0; c < n->nChild; c++) token_list_free(&aL[c]);
    return res;
nomem:
    if (!err->code) lp_err_set(err, LP_NOMEM, "out of memory");
    res = NULL;
    goto out;
}

typedef struct Expand {
    FtsQuery *q;
    int iField;
    uint32_t nPosLimit;         /* @field[N], or 0: each term a phrase of one word */
    const FtsZones *pZones;     /* ZONE:(…), or NULL: as nPosLimit */
    uint32_t qpos;              /* the prefix's position in the query */
    VEC(PlanNode *) leaves;     /* of the field being scanned, in key order */
    int nLimit;                 /* most distinct terms over all fields */
    int bCapped;
    int bWildcard;              /* its terms are a wildcard's (QT_WILDCARD), not a prefix's */
    LpError *err;
    int aStart[FTS_MAX_FIELDS + 1]; /* where each field scanned starts in leaves */
    int nScanned;
} Expand;

int fts_is_wild_char(char c) {
    return c == '*' || c == '?' || c == '%';
}

/* fts_glob_match for a pattern with '?' or '%': the set of pattern
** places reached, moved one character of t at a time (an NFA). */
static int glob_match_chars(const char *p, int np, const uint8_t *t, int nt) {
    enum { MAXP = FTS_GLOB_MAX };
    uint8_t aCur[MAXP + 1], aNext[MAXP + 1];
    if (np > MAXP) return 0;
    memset(aCur, 0, (size_t)np + 1);
    aCur[0] = 1;
    for (int i = 0; i < np; i++) { /* '*' and '%' may match nothing */
        if (aCur[i] && (p[i] == '*' || p[i] == '%')) aCur[i + 1] = 1;
    }
    for (int j = 0; j < nt;) {
        /* the character at j: its bytes (a stray byte is one) */
        int len = t[j] < 0xC0 ? 1 : t[j] < 0xE0 ? 2 : t[j] < 0xF0 ? 3 : 4;
        if (j + len > nt) len = nt - j;
        memset(aNext, 0, (size_t)np + 1);
        int bAny = 0;
        for (int i = 0; i < np; i++) {
            if (!aCur[i]) continue;
            if (p[i] == '*') {
                aNext[i] = bAny = 1;
            } else if (p[i] == '?' || p[i] == '%') {
                aNext[i + 1] = bAny = 1;
            } else if (i + len <= np && memcmp(p + i, t + j, (size_t)len) == 0) {
                aNext[i + len] = bAny = 1;
            }
        }
        if (!bAny) return 0;
        for (int i = 0; i < np; i++) {
            if (aNext[i] && (p[i] == '*' || p[i] == '%')) aNext[i + 1] = 1;
        }
        memcpy(aCur, aNext, (size_t)np + 1);
        j += len;
    }
    return aCur[np];
}

/* Each middle part is taken where it first occurs: with '*' the only
** wildcard, a leftmost match never loses one a later match would find. */
int fts_glob_match(const char *p, int np, const uint8_t *t, int nt) {
    if (fts_match_is_regex(p, np)) return regexp_term_match(p + 7, (size_t)np - 9, t, (size_t)nt);
    for (int k = 0; k < np; k++) {
        if (p[k] == '?' || p[k] == '%') return glob_match_chars(p, np, t, nt);
    }
    int i = 0;
    while (i < np && p[i] != '*') i++;
    if (i == np) return np == nt && memcmp(p, t, (size_t)nt) == 0;
    if (i > nt || memcmp(p, t, (size_t)i) != 0) return 0;
    int j = i; /* t[0..j) is consumed */
    for (;;) {
        int b = ++i; /* past the '*' */
        while (i < np && p[i] != '*') i++;
        int m = i - b;
        if (i == np) return m <= nt - j && memcmp(t + nt - m, p + b, (size_t)m) == 0;
        if (m) {
            /* terms are short: a byte loop beats memmem's set-up */
            int k = j;
            while (k + m <= nt && (t[k] != (uint8_t)p[b] || memcmp(t + k + 1, p + b + 1, (size_t)m - 1) != 0)) {
                k++;
            }
            if (k + m > nt) return 0;
            j = k + m;
        }
    }
}

/* The literal parts of a wildcard's pattern z[0..n), the strings between
** its wildcard characters, for xScanHas: a source may then skip keys
** without them (fts_source_scan_has). At most GLOB_HAS_MAX are passed:
** any of them narrows the scan. */
#define GLOB_HAS_MAX 16
typedef struct GlobHas {
    const uint8_t *aPart[GLOB_HAS_MAX];
    int anPart[GLOB_HAS_MAX];
    FtsScanHas has;
} GlobHas;

static const FtsScanHas *glob_has(GlobHas *g, const char *z, int n) {
    int k = 0;
    for (int i = 0; i < n && k < GLOB_HAS_MAX;) {
        if (fts_is_wild_char(z[i])) {
            i++;
            continue;
        }
        int b = i;
        while (i < n && !fts_is_wild_char(z[i])) i++;
        g->aPart[k] = (const uint8_t *)z + b;
        g->anPart[k++] = i - b;
    }
    g->has = (FtsScanHas){g->aPart, g->anPart, k};
    return &g->has;
}

/* The literal runs every term regular expression z[0..n) matches whole
** must hold, for xScanHas as glob_has's parts: runs of ASCII letters and
** digits outside any group or class (less a last letter that '?', '*' or
** '{' makes optional). None when the pattern has a '|' or an inline
** option ("(?i)"), or an escape that may stand for a letter or digit
** (only \d \w \s \b and their capitals, and escaped punctuation, are
** read past): then any term may match. */
static const FtsScanHas *regex_has(GlobHas *g, const char *z, int n) {
    int k = 0, depth = 0, bClass = 0;
    g->has = (FtsScanHas){g->aPart, g->anPart, 0};
    if (memchr(z, '|', (size_t)n)) return &g->has;
    for (int i = 0; i < n && k < GLOB_HAS_MAX;) {
        char c = z[i];
        int bAlnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (c == '\\') {
            char d = i + 1 < n ? z[i + 1] : 0;
            int bDigitish = (d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') || (d >= '0' && d <= '9');
            if (bDigitish && !strchr("dwsbDWSB", d)) return &g->has;
            i += 2;
        } else if (bClass) {
            bClass = c != ']';
            i++;
        } else if (c == '[') {
            bClass = 1;
            i += 1 + (i + 1 < n && z[i + 1] == '^');
            if (i < n && z[i] == ']') i++; /* "[]a]": a literal ']' first */
        } else if (c == '(') {
            if (i + 1 < n && z[i + 1] == '?') return &g->has;
            depth++;
            i++;
        } else if (c == ')') {
            depth--;
            i++;
        } else if (!bAlnum || depth > 0) {
            i++;
        } else {
            int b = i;
            while (i < n && ((z[i] >= 'a' && z[i] <= 'z') || (z[i] >= 'A' && z[i] <= 'Z') || (z[i] >= '0' && z[i] <= '9'))) {
                i++;
            }
            int e = i < n && (z[i] == '?' || z[i] == '*' || z[i] == '{') ? i - 1 : i;
            if (e > b) {
                g->aPart[k] = (const uint8_t *)z + b;
                g->anPart[k++] = e - b;
            }
        }
    }
    g->has.nPart = k;
    return &g->has;
}

/* A regular expression's top-level alternatives ("insulin|glucos.*"),
** each of which holds literal runs (regex_has), two bytes long at least:
** scan_fields then reads, per alternative, only the keys that may hold its
** runs, instead of the whole dictionary. */
#define REGEX_ALT_MAX 8
typedef struct RegexAlts {
    GlobHas aHas[REGEX_ALT_MAX];
    int n;
} RegexAlts;

/* Splits regular expression z[0..n) at its top-level '|' (outside
** groups, classes and escapes) into *pa; 0 when it has none, more than
** REGEX_ALT_MAX alternatives, or one without a run of two bytes or more
** (then nothing narrows the scan). */
static int regex_alts(RegexAlts *pa, const char *z, int n) {
    int depth = 0, bClass = 0, b = 0;
    pa->n = 0;
    for (int i = 0; i <= n; i++) {
        char c = i < n ? z[i] : '|';
        if (i < n && c == '\\') {
            i++;
        } else if (bClass) {
            bClass = c != ']';
        } else if (c == '[') {
            bClass = 1;
            if (i + 1 < n && z[i + 1] == '^') i++;
            if (i + 1 < n && z[i + 1] == ']') i++; /* "[]a]": a literal ']' first */
        } else if (c == '(') {
            depth++;
        } else if (c == ')') {
            depth--;
        } else if (c == '|' && depth == 0) {
            if (pa->n == REGEX_ALT_MAX) return 0;
            const FtsScanHas *h = regex_has(&pa->aHas[pa->n], z + b, i - b);
            int nLong = 0;
            for (int k = 0; k < h->nPart; k++) nLong = h->anPart[k] > nLong ? h->anPart[k] : nLong;
            if (nLong < 2) return 0;
            pa->aHas[pa->n].has.aPart = pa->aHas[pa->n].aPart; /* (the copy's own arrays) */
            pa->aHas[pa->n].has.anPart = pa->aHas[pa->n].anPart;
            pa->n++;
            b = i + 1;
        }
    }
    return pa->n > 1 ? pa->n : 0;
}

/* Is key (field byte + term) a word's term? Exact forms ('='), sentence
** marks ('.') and zones' terms ('<') are not. */
static int is_word_key(const uint8_t *key, int nKey) {
    return nKey >= 2 && key[1] != ANALYZER_EXACT_MARK && key[1] != '.' && key[1] != ANALYZER_ZONE_MARK;
}

/* Is key a term a prefix or wildcard expands to: a word's term (exact
** forms, sentence marks and zones' terms are not; with bExact, only exact
** forms are, and the pattern applies past their mark) that fits the
** pattern zGlob (NULL: a prefix, which the scan's range already fits)? */
static int key_fits(int bExact, const char *zGlob, int nGlob, const uint8_t *key, int nKey) {
    if (bExact) {
        return nKey >= 3 && key[1] == ANALYZER_EXACT_MARK &&
               (!zGlob || fts_glob_match(zGlob, nGlob, key + 2, nKey - 2));
    }
    return is_word_key(key, nKey) && (!zGlob || fts_glob_match(zGlob, nGlob, key + 1, nKey - 1));
}

/* scan_fields' filter in front of its caller's xKey: keys key_fits
** takes. */
typedef struct ScanFit {
    int bExact;
    const char *zGlob;
    int nGlob;
    FtsKeyFn xKey;
    void *ctx;
} ScanFit;

static int scan_fit(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    ScanFit *s = ctx;
    return key_fits(s->bExact, s->zGlob, s->nGlob, key, nKey) ? s->xKey(s->ctx, key, nKey, info) : 0;
}

/* The keys of one field that the alternatives of a regular expression
** find, gathered (each alternative's scan, which may find a key another
** found too) to be handed on in key order, each once, as one scan of the
** whole dictionary would. */
typedef struct AltKey {
    uint8_t *key;
    int nKey;
    FtsTermInfo info;
} AltKey;
typedef VEC(AltKey) AltKeys;

static int alt_key_keep(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    AltKeys *v = ctx;
    if (VEC_RESERVE(v, v->n + 1)) return LP_NOMEM;
    AltKey *a = &v->a[v->n];
    if (!(a->key = malloc((size_t)nKey))) return LP_NOMEM;
    memcpy(a->key, key, (size_t)nKey);
    a->nKey = nKey;
    a->info = *info;
    v->n++;
    return 0;
}

static int alt_key_cmp(const void *x, const void *y) {
    const AltKey *a = x, *b = y;
    int c = memcmp(a->key, b->key, (size_t)(a->nKey < b->nKey ? a->nKey : b->nKey));
    return c ? c : (a->nKey > b->nKey) - (a->nKey < b->nKey);
}

/* Field key[0]'s keys from key[0..nKey) on that fit s (a regular
** expression with the alternatives pAlts), each alternative's scan reading
** only the keys that may hold its runs; handed to s's xKey in key order,
** each once. Returns what the scan would: LP_OK, 1 (xKey stopped it) or an
** error. */
static int scan_alts(FtsSource *src, const uint8_t *key, int nKey, const RegexAlts *pAlts, ScanFit *s,
                     LpError *err) {
    AltKeys v = {0};
    ScanFit f = *s;
    f.xKey = alt_key_keep;
    f.ctx = &v;
    int rc = LP_OK;
    for (int i = 0; i < pAlts->n && rc == LP_OK; i++) {
        rc = fts_source_scan_has(src, key, nKey, &pAlts->aHas[i].has, scan_fit, &f, err);
        if (rc == LP_NOMEM) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    }
    if (rc == LP_OK && v.n > 1) qsort(v.a, v.n, sizeof(AltKey), alt_key_cmp);
    for (size_t i = 0; i < v.n && rc == LP_OK; i++) {
        if (i == 0 || alt_key_cmp(&v.a[i - 1], &v.a[i]) != 0) rc = s->xKey(s->ctx, v.a[i].key, v.a[i].nKey, &v.a[i].info);
    }
    for (size_t i = 0; i < v.n; i++) free(v.a[i].key);
    VEC_FREE(&v);
    return rc;
}

/* Hands xKey the keys of each field of fields that a prefix or wildcard
** expands to (key_fits): the terms starting with pre[0..nPre) and, with
** zGlob (a wildcard's pattern, of which pre is the literal start), fitting
** it, the scan narrowed to keys that may hold its parts
** (fts_source_scan_has). On a table with exact forms
** (analyzer_has_exact_forms) they are exact forms: the keys that start
** with ANALYZER_EXACT_MARK and pre, pre cut as the index cuts an exact
** form's word (to ANALYZER_MAX_TERM - 1 bytes, at a character boundary),
** so a prefix as long as a long word still finds it. Before each field's
** scan, xField(ctx, f) (may be NULL) readies xKey's state for it; non-zero
** stops. A scan that xKey stopped (1: a cap) goes on with the next field.
** The planner, CALL KEYWORDS and fts_expansions read prefixes and
** wildcards through it. LP_OK or an error. */
static int scan_fields(FtsSource *src, const Analyzer *an, const FtsFieldSet *fields, const char *pre,
                       int nPre, const char *zGlob, int nGlob, int (*xField)(void *ctx, int f),
                       FtsKeyFn xKey, void *ctx, LpError *err) {
    uint8_t key[FTS_MAX_KEY];
    int bExact = analyzer_has_exact_forms(an);
    if (bExact && nPre > ANALYZER_MAX_TERM - 1) nPre = (int)utf8_floor(pre, ANALYZER_MAX_TERM - 1);
    if (bExact + nPre + 1 > FTS_MAX_KEY) return LP_OK; /* no key is that long */
    key[1] = ANALYZER_EXACT_MARK;
    memcpy(key + 1 + bExact, pre, (size_t)nPre);
    nPre += bExact;
    GlobHas gh;
    int bRegex = zGlob && fts_match_is_regex(zGlob, nGlob);
    const FtsScanHas *pHas = !zGlob    ? NULL
                             : bRegex ? regex_has(&gh, zGlob + 7, nGlob - 9)
                                      : glob_has(&gh, zGlob, nGlob);
    RegexAlts *pAlts = NULL; /* (large: only for a pattern with '|') */
    if (bRegex && memchr(zGlob + 7, '|', (size_t)nGlob - 9)) {
        pAlts = malloc(sizeof(RegexAlts));
        if (!pAlts) return lp_err_set(err, LP_NOMEM, "out of memory");
        if (!regex_alts(pAlts, zGlob + 7, nGlob - 9)) {
            free(pAlts);
            pAlts = NULL;
        }
    }
    ScanFit fit = {bExact, zGlob, nGlob, xKey, ctx};
    int rc = LP_OK;
    for (int f = 0; f < src->nFields && rc == LP_OK; f++) {
        if (!fts_fieldset_has(fields, f)) continue;
        if (xField && xField(ctx, f)) break;
        key[0] = (uint8_t)f;
        rc = pAlts ? scan_alts(src, key, nPre + 1, pAlts, &fit, err)
                   : fts_source_scan_has(src, key, nPre + 1, pHas, scan_fit, &fit, err);
        if (rc == 1) rc = LP_OK;
    }
    free(pAlts);
    return rc;
}

static int expand_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    Expand *x = ctx;
    FtsQuery *q = x->q;
    if ((int)x->leaves.n >= x->nLimit) {
        x->bCapped = 1;
        return 1; /* stop the scan */
    }
    PlanNode *pn = new_pn(q, x->nPosLimit || x->pZones ? PN_PHRASE : PN_LEAF);
    uint8_t *k = arena_alloc(q->a, (size_t)nKey);
    if (!pn || !k) return LP_NOMEM;
    memcpy(k, key, (size_t)nKey);
    pn->key = k;
    pn->nKey = nKey;
    if (x->nPosLimit || x->pZones) {
        /* positions must be read: a phrase of this one word */
        pn->aKey = arena_alloc(q->a, sizeof(uint8_t *));
        pn->anKey = arena_alloc(q->a, sizeof(int));
        pn->aQPos = arena_zalloc(q->a, sizeof(uint32_t));
        pn->aInfo = arena_alloc(q->a, sizeof(FtsTermInfo));
        if (!pn->aKey || !pn->anKey || !pn->aQPos || !pn->aInfo) return LP_NOMEM;
        pn->aKey[0] = k;
        pn->anKey[0] = nKey;
        pn->aInfo[0] = *info;
        pn->nTerm = 1;
        if (limit_positions(q, pn, x->nPosLimit) || global_qpos(q, pn, x->qpos)) return LP_NOMEM;
        pn->iField = x->iField;
        int rz = zone_pn(q, pn, x->pZones, x->err);
        if (rz <= 0) return rz < 0 ? x->err->code : LP_OK; /* no span of the zones: no leaf */
    }
    pn->qpos = x->qpos;
    pn->qtype = x->bWildcard ? QT_WILDCARD : QT_PREFIX;
    pn->iField = x->iField;
    pn->info = *info;
    pn->df = info->df;
    pn->idf = idf_of(q->src->nDocs, info->df);
    return VEC_PUSH(&x->leaves, pn) ? LP_NOMEM : LP_OK;
}

/* Orders leaves of different fields by their term (the key without its
** field byte). */
static int cmp_leaf_term(const PlanNode *a, const PlanNode *b) {
    int n = a->nKey < b->nKey ? a->nKey : b->nKey;
    int c = memcmp(a->key + 1, b->key + 1, (size_t)n - 1);
    return c ? c : (a->nKey > b->nKey) - (a->nKey < b->nKey);
}

/* The OR of the terms of n's fields that start with pre[0..nPre) and, with
** zGlob, match that pattern: each field scanned, then the fields' sorted
** lists merged into one group per distinct term, at most
** nExpansionLimit of them (a cut is reported in the query's stats). */
/* scan_fields' xField for expand_terms. */
static int expand_field(void *ctx, int f) {
    Expand *x = ctx;
    x->aStart[x->nScanned++] = (int)x->leaves.n;
    x->iField = f;
    x->nLimit = (int)x->leaves.n + x->q->rank.nExpansionLimit;
    return 0;
}

static PlanNode *expand_terms(FtsQuery *q, const FtsNode *n, uint32_t qpos, const uint8_t *pre,
                              int nPre, const char *zGlob, int nGlob, LpError *err) {
    Expand x = {q, 0, n->nPosLimit, n->pZones, qpos, {0}, q->rank.nExpansionLimit, 0, zGlob != NULL, err,
                {0}, 0};
    PlanNode *res = NULL;
    int rc = scan_fields(q->src, q->an, &n->fields, (const char *)pre, nPre, zGlob, nGlob, expand_field,
                         expand_key, &x, err);
    int *aStart = x.aStart, nScanned = x.nScanned;
    aStart[nScanned] = (int)x.leaves.n;
    VEC(PlanNode *) groups = {0};
    if (rc == LP_OK) {
        int aAt[FTS_MAX_FIELDS];
        for (int i = 0; i < nScanned; i++) aAt[i] = aStart[i];
        while (rc == LP_OK && (int)groups.n < q->rank.nExpansionLimit) {
            /* the smallest term among the fields' next leaves */
            PlanNode *best = NULL;
            for (int i = 0; i < nScanned; i++) {
                if (aAt[i] < aStart[i + 1] &&
                    (!best || cmp_leaf_term(x.leaves.a[aAt[i]], best) < 0)) {
                    best = x.leaves.a[aAt[i]];
                }
            }
            if (!best) break;
            PlanNode *aSame[FTS_MAX_FIELDS];
            int nSame = 0;
            for (int i = 0; i < nScanned; i++) {
                if (aAt[i] < aStart[i + 1] && cmp_leaf_term(x.leaves.a[aAt[i]], best) == 0) {
                    aSame[nSame++] = x.leaves.a[aAt[i]++];
                }
            }
            PlanNode *g = group_of(q, aSame, nSame, term_df(q, &n->fields, aSame, nSame),
                                   zGlob ? QT_WILDCARD : QT_PREFIX);
            if (!g || VEC_PUSH(&groups, g)) rc = LP_NOMEM;
        }
        for (int i = 0; i < nScanned; i++) x.bCapped |= aAt[i] < aStart[i + 1];
    }
    if (rc == LP_OK) {
        q->st.nExpanded += (int)groups.n;
        q->st.bExpansionCapped |= x.bCapped;
        res = or_of(q, groups.a, (int)groups.n);
        if (!res) rc = LP_NOMEM;
    }
    if (rc == LP_NOMEM) {
        lp_err_set(err, LP_NOMEM, "out of memory expanding a %s", zGlob ? "wildcard" : "prefix");
    }
    VEC_FREE(&groups);
    VEC_FREE(&x.leaves);
    return res;
}

/* Prefix leaf n's analysed (unstemmed) tokens l: LP_OK when they are one
** word that min_prefix_len allows, else LP_BADINPUT naming the leaf. The
** planner and fts_expansions ask the same. */
static int prefix_word(const Analyzer *an, const FtsNode *n, const TokenList *l, LpError *err) {
    if (l->a.n != 1) {
        return lp_err_setpos(err, LP_BADINPUT, n->pos, "MATCH: prefix '%.*s*' at offset %d must be one word",
                             n->n > 40 ? 40 : n->n, n->z, n->pos);
    }
    if (!analyzer_prefix_ok(an, l->a.a[0].z, l->a.a[0].n)) {
        return lp_err_setpos(err, LP_BADINPUT, n->pos,
                             "MATCH: prefix '%.*s*' at offset %d is shorter than min_prefix_len=%d",
                             n->n > 40 ? 40 : n->n, n->z, n->pos, analyzer_min_prefix_len(an));
    }
    return LP_OK;
}

static PlanNode *plan_prefix(FtsQuery *q, const FtsNode *n, LpError *err) {
    TokenList l = {{0}, {0}};
    if (analyse(q, n, 0, &l, err) || prefix_word(q->an, n, &l, err)) {
        token_list_free(&l);
        return NULL;
    }
    Token t0 = l.a.a[0];
    t0.iPos = 0;
    TokenList one = token_list_one(&t0);
    WordExp e = {t0.z, t0.n, NULL, 0, NULL, 0, NULL, 0};
    uint32_t qpos = q->qposExpand != UINT32_MAX ? q->qposExpand : take_qpos(q, &one, &e);
    PlanNode *res = expand_terms(q, n, qpos, (const uint8_t *)l.a.a[0].z, l.a.a[0].n, NULL, 0, err);
    token_list_free(&l);
    return res;
}

/* How many bytes every term a regular expression z[0..n) matches whole
** starts with, read off its start: a run of ASCII letters and digits, less
** its last when a '?', '*' or '{' follows it; 0 when the pattern has a '|'
** (an alternative may start otherwise). */
static int regex_literal_len(const char *z, int n) {
    if (memchr(z, '|', (size_t)n)) return 0;
    int i = 0;
    while (i < n && ((z[i] >= 'a' && z[i] <= 'z') || (z[i] >= 'A' && z[i] <= 'Z') || (z[i] >= '0' && z[i] <= '9'))) i++;
    if (i > 0 && i < n && (z[i] == '?' || z[i] == '*' || z[i] == '{')) i--;
    return i;
}

const char *fts_pattern_start(const char *z, int n) {
    return fts_match_is_regex(z, n) ? z + 7 : z;
}

int fts_wildcard_pattern(Arena *a, const Analyzer *an, const FtsNode *n, const char **pz, int *pn,
                         int *pnFirst, LpError *err) {
    int nMin = analyzer_min_infix_len(an);
    int nShow = n->n > 40 ? 40 : n->n;
    if (fts_match_is_regex(n->z, n->n)) {
        /* REGEX(/…/): its text is its pattern (fts_glob_match reads it) */
        if (nMin == 0 && analyzer_min_prefix_len(an) == 0) {
            return lp_err_setpos(err, LP_BADINPUT, n->pos,
                                 "MATCH: '%.*s' at offset %d: REGEX() needs the table option "
                                 "min_infix_len or min_prefix_len (as in Manticore)", nShow, n->z, n->pos);
        }
        *pz = n->z;
        *pn = n->n;
        if (pnFirst) *pnFirst = regex_literal_len(n->z + 7, n->n - 9);
        return LP_OK;
    }
    if (nMin == 0) {
        return lp_err_setpos(err, LP_BADINPUT, n->pos,
                             "MATCH: wildcard '%.*s' at offset %d: a '*' before or inside a word "
                             "(infix search) needs the table option min_infix_len",
                             nShow, n->z, n->pos);
    }
    /* each part analyses to one term of at most ANALYZER_MAX_TERM bytes */
    size_t cap = (size_t)n->n * (ANALYZER_MAX_TERM + 1) + 2;
    char *zGlob = arena_alloc(a, cap);
    if (!zGlob) return lp_err_set(err, LP_NOMEM, "out of memory expanding a wildcard");
    int nGlob = 0, nLongest = 0, nFirst = 0;
    for (int i = 0; i <= n->n; i++) {
        int e = i;
        while (e < n->n && !fts_is_wild_char(n->z[e])) e++;
        if (e > i) {
            TokenList l = {{0}, {0}};
            int rc = analyzer_collect(an, n->z + i, (size_t)(e - i), ANALYZE_UNSTEMMED, &l, err);
            if (rc == LP_OK && (l.a.n != 1 || (size_t)(nGlob + l.a.a[0].n) + 2 > cap)) {
                rc = lp_err_setpos(err, LP_BADINPUT, n->pos,
                                   "MATCH: wildcard '%.*s' at offset %d: each part between "
                                   "wildcards ('*', '?', '%%') must be one word",
                                   nShow, n->z, n->pos);
            } else if (rc != LP_OK && rc != LP_NOMEM) {
                rc = lp_err_setpos(err, rc, n->pos + i + (err->pos >= 0 ? err->pos : 0),
                                   "MATCH: %s (in '%.*s' at offset %d)", err->zMsg, nShow, n->z,
                                   n->pos);
            }
            if (rc != LP_OK) {
                token_list_free(&l);
                return rc == LP_NOMEM ? lp_err_set(err, LP_NOMEM, "out of memory analysing the query")
                                      : rc;
            }
            int nChars = 0;
            for (int k = 0; k < l.a.a[0].n; k++) nChars += (l.a.a[0].z[k] & 0xC0) != 0x80;
            if (nChars > nLongest) nLongest = nChars;
            if (i == 0) nFirst = l.a.a[0].n;
            memcpy(zGlob + nGlob, l.a.a[0].z, (size_t)l.a.a[0].n);
            nGlob += l.a.a[0].n;
            token_list_free(&l);
        }
        if (e < n->n) zGlob[nGlob++] = n->z[e];
        i = e;
    }
    zGlob[nGlob] = 0;
    if (nGlob > FTS_GLOB_MAX && (memchr(zGlob, '?', (size_t)nGlob) || memchr(zGlob, '%', (size_t)nGlob))) {
        return lp_err_setpos(err, LP_BADINPUT, n->pos,
                             "MATCH: wildcard '%.*s' at offset %d: a pattern with '?' or '%%' is at "
                             "most %d bytes", nShow, n->z, n->pos, FTS_GLOB_MAX);
    }
    if (nLongest < nMin) {
        return lp_err_setpos(err, LP_BADINPUT, n->pos,
                             "MATCH: wildcard '%.*s' at offset %d: its longest part without a "
                             "wildcard is shorter than min_infix_len=%d",
                             nShow, n->z, n->pos, nMin);
    }
    *pz = zGlob;
    *pn = nGlob;
    if (pnFirst) *pnFirst = nFirst;
    return LP_OK;
}

/* A wildcard ("*abc*", "ab*cd", "*ing"; tables with min_infix_len): the OR
** of the terms of its fields that match its pattern (fts_wildcard_pattern),
** as the index holds them: the exact forms where the table has them
** (analyzer_has_exact_forms), else the stems where it stems. A pattern that
** starts with a literal part scans that prefix's range of the dictionary;
** one that starts with '*' scans every term of each field. */
static PlanNode *plan_wildcard(FtsQuery *q, const FtsNode *n, LpError *err) {
    const char *zGlob;
    int nGlob, nFirst;
    if (fts_wildcard_pattern(q->a, q->an, n, &zGlob, &nGlob, &nFirst, err)) return NULL;
    Token t0 = {zGlob, nGlob, 0, 0, (uint32_t)n->n};
    TokenList one = token_list_one(&t0);
    uint32_t qpos = q->qposExpand != UINT32_MAX ? q->qposExpand : take_qpos(q, &one, NULL);
    return expand_terms(q, n, qpos, (const uint8_t *)fts_pattern_start(zGlob, nGlob), nFirst, zGlob, nGlob, err);
}

/* expand_word's scan: the keys of one field that a prefix or wildcard
** word stands for. */
typedef struct AltScan {
    FtsQuery *q;
    const WordExp *e;
    PhraseAlt *alt;
    int bCapped;
} AltScan;

static int alt_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    AltScan *x = ctx;
    FtsQuery *q = x->q;
    PhraseAlt *alt = x->alt;
    if (alt->n >= q->rank.nExpansionLimit) {
        x->bCapped = 1;
        return 1; /* stop the scan */
    }
    AltTerm *a = arena_grow(q->a, alt->a, alt->n, &alt->cap, sizeof(AltTerm), 8);
    uint8_t *k = arena_alloc(q->a, (size_t)nKey);
    if (!a || !k) return LP_NOMEM;
    memcpy(k, key, (size_t)nKey);
    alt->a = a;
    a[alt->n++] = (AltTerm){k, nKey, *info};
    return 0;
}

/* Adds the term z[0..n) of field f to alt when the field has it and alt
** has it not yet. */
static int alt_add_term(FtsQuery *q, int f, const char *z, int n, PhraseAlt *alt, LpError *err) {
    uint8_t *key = make_key(q->a, f, z, n);
    if (!key) return lp_err_set(err, LP_NOMEM, "out of memory");
    for (int i = 0; i < alt->n; i++) {
        if (alt->a[i].nKey == n + 1 && memcmp(alt->a[i].key, key, (size_t)n + 1) == 0) return LP_OK;
    }
    FtsTermInfo info;
    if (lookup(q, key, n + 1, &info, err)) return err->code;
    if (info.df == 0) return LP_OK;
    AltTerm *a = arena_grow(q->a, alt->a, alt->n, &alt->cap, sizeof(AltTerm), 8);
    if (!a) return lp_err_set(err, LP_NOMEM, "out of memory");
    alt->a = a;
    alt->a[alt->n++] = (AltTerm){key, n + 1, info};
    return LP_OK;
}

/* The terms of field f that the prefix or wildcard word e stands for, at
** most nExpansionLimit (a cut is reported in the query's stats), and for
** an expanded word its own term and exact form, into *alt; *pInfo: what a
** list of all of them would hold (df at most the documents). LP_OK or an
** error. */
static int expand_word(FtsQuery *q, int f, const WordExp *e, PhraseAlt *alt, FtsTermInfo *pInfo,
                       LpError *err) {
    FtsFieldSet one;
    memset(&one, 0, sizeof(one));
    one.a[f >> 6] = (uint64_t)1 << (f & 63);
    AltScan x = {q, e, alt, 0};
    int rc = e->zPre ? scan_fields(q->src, q->an, &one, e->zPre, e->nPre, e->zGlob, e->nGlob, NULL, alt_key, &x, err)
                     : LP_OK;
    if (rc != LP_OK) {
        return rc == LP_NOMEM ? lp_err_set(err, LP_NOMEM, "out of memory expanding a %s",
                                           e->zGlob ? "wildcard" : "prefix")
                              : rc;
    }
    q->st.nExpanded += alt->n;
    q->st.bExpansionCapped |= x.bCapped;
    /* an expanded word: its own term and exact form too (once) */
    if (e->zSelf && alt_add_term(q, f, e->zSelf, e->nSelf, alt, err)) return err->code;
    if (e->zExact && alt_add_term(q, f, e->zExact, e->nExact, alt, err)) return err->code;
    memset(pInfo, 0, sizeof(*pInfo));
    uint64_t df = 0;
    for (int i = 0; i < alt->n; i++) {
        df += alt->a[i].info.df;
        pInfo->cf += alt->a[i].info.cf;
    }
    pInfo->df = df < q->src->nDocs ? (uint32_t)df : q->src->nDocs;
    pInfo->nEarlier = FTS_EARLIER_UNKNOWN;
    return LP_OK;
}

char *fts_star_pattern(Arena *a, const char *z, int n) {
    char *p = arena_alloc(a, (size_t)n + 3);
    if (p) {
        p[0] = '*';
        memcpy(p + 1, z, (size_t)n);
        p[n + 1] = '*';
        p[n + 2] = 0;
    }
    return p;
}

/* expand_keywords over the words l of phrase n (or of a word that
** analyses to several, "hello-world"), as Sphinx expands them: each plain
** word (not a prefix, not written '=word') stands at its place for its own
** term, its exact form ('exact', on a table with exact forms) and the
** terms of its star part ('star': '*word*' or 'word*', fts_expand_star),
** where it has more than its own term. Into *paExp (allocated when NULL),
** beside phrase_prefixes' entries. */
static int phrase_expansions(FtsQuery *q, const FtsNode *n, const TokenList *l, WordExp **paExp,
                             LpError *err) {
    int bExact = (q->rank.expand & FTS_EXPAND_EXACT) && analyzer_has_exact_forms(q->an) && !n->bExact;
    int bStar = (q->rank.expand & FTS_EXPAND_STAR) != 0;
    for (size_t i = 0; i < l->a.n; i++) {
        const Token *t = &l->a.a[i];
        if ((*paExp && (*paExp)[i].zPre) || t->n == 0 || t->z[0] == ANALYZER_EXACT_MARK) continue;
        const char *zWord = n->z + t->iStart;
        size_t nWord = t->iEnd - t->iStart;
        if (nWord == 0 || zWord[0] == ANALYZER_EXACT_MARK || (t->iStart > 0 && zWord[-1] == '=')) continue;
        TokenList lu = {{0}, {0}};
        int rc = analyzer_collect(q->an, zWord, nWord, ANALYZE_UNSTEMMED, &lu, err);
        if (rc == LP_NOMEM) return lp_err_set(err, LP_NOMEM, "out of memory analysing the query");
        int star = rc == LP_OK && lu.a.n == 1 && bStar ? fts_expand_star(q->an, lu.a.a[0].z, lu.a.a[0].n)
                                                       : FTS_STAR_NONE;
        WordExp e;
        memset(&e, 0, sizeof(e));
        if (star == FTS_STAR_PREFIX) {
            if (!(e.zPre = arena_strndup(q->a, lu.a.a[0].z, (size_t)lu.a.a[0].n))) rc = LP_NOMEM;
            e.nPre = lu.a.a[0].n;
        } else if (star == FTS_STAR_INFIX) {
            char *z = fts_star_pattern(q->a, lu.a.a[0].z, lu.a.a[0].n);
            if (!z) {
                rc = LP_NOMEM;
            } else {
                e.zGlob = e.zPre = z;
                e.nGlob = lu.a.a[0].n + 2;
                e.nPre = 0; /* no literal start: every term of the field */
            }
        }
        int bOne = rc == LP_OK && lu.a.n == 1;
        token_list_free(&lu);
        if (rc == LP_NOMEM) return lp_err_set(err, LP_NOMEM, "out of memory");
        if (!bOne) continue; /* a word the table splits further: left alone */
        if (bExact) {
            /* "=" + the word: the query side makes its exact form */
            char *z = arena_alloc(q->a, nWord + 2);
            if (!z) return lp_err_set(err, LP_NOMEM, "out of memory");
            z[0] = '=';
            memcpy(z + 1, zWord, nWord);
            z[nWord + 1] = 0;
            TokenList lx = {{0}, {0}};
            rc = analyzer_collect(q->an, z, nWord + 1, ANALYZE_QUERY, &lx, err);
            if (rc == LP_NOMEM) return lp_err_set(err, LP_NOMEM, "out of memory analysing the query");
            if (rc == LP_OK && lx.a.n == 1 && lx.a.a[0].z[0] == ANALYZER_EXACT_MARK) {
                if (!(e.zExact = arena_strndup(q->a, lx.a.a[0].z, (size_t)lx.a.a[0].n))) rc = LP_NOMEM;
                e.nExact = lx.a.a[0].n;
            }
            token_list_free(&lx);
            if (rc == LP_NOMEM) return lp_err_set(err, LP_NOMEM, "out of memory");
        }
        if (!e.zPre && !e.zExact) continue;
        if (!(e.zSelf = arena_strndup(q->a, t->z, (size_t)t->n))) return lp_err_set(err, LP_NOMEM, "out of memory");
        e.nSelf = t->n;
        if (!*paExp && !(*paExp = arena_zalloc(q->a, sizeof(WordExp) * l->a.n))) {
            return lp_err_set(err, LP_NOMEM, "out of memory");
        }
        (*paExp)[i] = e;
    }
    return LP_OK;
}

/* A byte of a word as the query language sees one (ASCII letters and
** digits, any byte of a character beyond ASCII), or a star. */
static int is_wordish(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (unsigned char)c >= 0x80 ||
           c == '*';
}

int fts_phrase_wildcard_at(const FtsNode *x, uint32_t k, uint32_t *pLo, uint32_t *pHi) {
    if ((x->kind != FTSN_PHRASE && x->kind != FTSN_QUORUM) || k >= (uint32_t)x->n || !is_wordish(x->z[k])) return 0;
    uint32_t lo = k, hi = k;
    while (lo > 0 && is_wordish(x->z[lo - 1])) lo--;
    while (hi < (uint32_t)x->n && is_wordish(x->z[hi])) hi++;
    /* a star a word ends, before no more of it, makes a prefix ("wor*") */
    int bWild = 0, bWord = 0;
    for (uint32_t j = lo; j < hi; j++) {
        if (x->z[j] != '*') bWord = 1;
        else if (!(j > lo && x->z[j - 1] != '*' && j + 1 == hi)) bWild = 1;
    }
    if (!bWild || !bWord) return 0; /* a prefix, a star alone */
    *pLo = lo;
    *pHi = hi;
    return 1;
}

/* Phrase or quorum n's wildcard words ("*ak hen", "ka*ak hen"), into its
** analysed words l (analyse: each was its parts there): each becomes one
** word, its pattern (fts_wildcard_pattern), at the place it takes in the
** query, and *paExp (allocated here, one entry per word of the new l)
** says so. LP_OK when n has none (l and *paExp untouched), or an error. */
static int phrase_wildcards(FtsQuery *q, const FtsNode *n, TokenList *l, WordExp **paExp, LpError *err) {
    uint32_t lo, hi;
    int nWild = 0;
    for (uint32_t k = 0; k < (uint32_t)n->n; k++) {
        if (n->z[k] == '*' && fts_phrase_wildcard_at(n, k, &lo, &hi)) nWild++, k = hi;
    }
    if (nWild == 0) return LP_OK;
    /* each wildcard word a lone '*' (a place that holds no word), then
    ** analysed again: the other words at their places */
    char *z2 = arena_strndup(q->a, n->z, (size_t)n->n);
    Token *aWild = arena_alloc(q->a, sizeof(Token) * (size_t)nWild);
    WordExp *aWe = arena_alloc(q->a, sizeof(WordExp) * (size_t)nWild);
    if (!z2 || !aWild || !aWe) return lp_err_set(err, LP_NOMEM, "out of memory");
    int w = 0;
    for (uint32_t k = 0; k < (uint32_t)n->n; k++) {
        if (n->z[k] != '*' || !fts_phrase_wildcard_at(n, k, &lo, &hi)) continue;
        memset(z2 + lo, ' ', hi - lo);
        z2[lo] = '*';
        FtsNode x = *n;
        x.kind = FTSN_WILDCARD;
        x.pos = n->pos + 1 + (int)lo;
        x.z = arena_strndup(q->a, n->z + lo, hi - lo);
        x.n = (int)(hi - lo);
        x.aMark = NULL;
        if (!x.z) return lp_err_set(err, LP_NOMEM, "out of memory");
        const char *zGlob;
        int nGlob, nFirst;
        if (fts_wildcard_pattern(q->a, q->an, &x, &zGlob, &nGlob, &nFirst, err)) return err->code;
        aWild[w] = (Token){zGlob, nGlob, 0, lo, hi};
        aWe[w++] = (WordExp){fts_pattern_start(zGlob, nGlob), nFirst, zGlob, nGlob, NULL, 0, NULL, 0};
        k = hi;
    }
    FtsNode y = *n;
    y.z = z2;
    TokenList l2 = {{0}, {0}};
    int rc = analyse(q, &y, 1, &l2, err);
    /* a wildcard's place: those the text before it takes, its '*' the last */
    int mode = n->bExact ? ANALYZE_QUERY_EXACT : ANALYZE_QUERY;
    for (int i = 0; i < nWild && rc == LP_OK; i++) {
        uint32_t nPos = 0;
        rc = analyzer_query_span(q->an, z2, aWild[i].iStart + 1, mode, &nPos, err);
        aWild[i].iPos = nPos ? nPos - 1 : 0;
    }
    TokenList out = {{0}, {0}};
    WordExp *aExp = rc == LP_OK ? arena_zalloc(q->a, sizeof(WordExp) * (l2.a.n + (size_t)nWild)) : NULL;
    if (rc == LP_OK && !aExp) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    for (size_t i = 0, j = 0; rc == LP_OK && (i < l2.a.n || j < (size_t)nWild);) {
        int bWild = j < (size_t)nWild && (i >= l2.a.n || aWild[j].iStart < l2.a.a[i].iStart);
        if (bWild) aExp[out.a.n] = aWe[j];
        if (VEC_PUSH(&out.a, bWild ? aWild[j] : l2.a.a[i])) rc = lp_err_set(err, LP_NOMEM, "out of memory");
        if (bWild) j++;
        else i++;
    }
    if (rc != LP_OK) {
        token_list_free(&l2);
        token_list_free(&out);
        return rc;
    }
    /* the words' text stays in l2's buffer, which out takes over */
    out.buf = l2.buf;
    VEC_FREE(&l2.a);
    token_list_free(l);
    *l = out;
    *paExp = aExp;
    return LP_OK;
}

/* The prefixes and wildcards among the words l of phrase or quorum n (a
** word whose text a '*' ends: "hello wor*"; phrase_wildcards), as phrase_pn
** takes them: *paExp NULL when there are none, else one entry per word.
** LP_OK, or an error naming a prefix that min_prefix_len refuses or a
** wildcard that fts_wildcard_pattern refuses. */
static int phrase_prefixes(FtsQuery *q, const FtsNode *n, TokenList *l, WordExp **paExp, LpError *err) {
    *paExp = NULL;
    int rc = phrase_wildcards(q, n, l, paExp, err);
    if (rc != LP_OK) return rc;
    for (size_t i = 0; i < l->a.n; i++) {
        const Token *t = &l->a.a[i];
        if ((*paExp && (*paExp)[i].zGlob) || !fts_phrase_word_is_prefix(n, t)) continue;
        if (!*paExp && !(*paExp = arena_zalloc(q->a, sizeof(WordExp) * l->a.n))) {
            return lp_err_set(err, LP_NOMEM, "out of memory");
        }
        /* the prefix as a prefix search takes it: normalised, unstemmed */
        TokenList lu = {{0}, {0}};
        int rc = analyzer_collect(q->an, n->z + t->iStart, t->iEnd - t->iStart, ANALYZE_UNSTEMMED, &lu, err);
        if (rc != LP_OK || lu.a.n != 1) {
            token_list_free(&lu);
            return rc == LP_NOMEM  ? lp_err_set(err, LP_NOMEM, "out of memory analysing the query")
                   : rc != LP_OK ? rc
                                 : lp_err_set(err, LP_INTERNAL, "a phrase's word did not analyse to one word");
        }
        const Token *u = &lu.a.a[0];
        if (!analyzer_prefix_ok(q->an, u->z, u->n)) {
            int64_t off = n->pos + 1 + (int64_t)t->iStart;
            token_list_free(&lu);
            lp_err_setpos(err, LP_BADINPUT, off, "MATCH: prefix '%.*s*' at offset %lld (in a phrase) is "
                          "shorter than min_prefix_len=%d", (int)(t->iEnd - t->iStart), n->z + t->iStart,
                          (long long)off, analyzer_min_prefix_len(q->an));
            err->detail = FTS_MATCH_ER_PARSE;
            return LP_BADINPUT;
        }
        char *z = arena_alloc(q->a, (size_t)u->n + 1);
        if (!z) {
            token_list_free(&lu);
            return lp_err_set(err, LP_NOMEM, "out of memory");
        }
        memcpy(z, u->z, (size_t)u->n);
        z[u->n] = 0;
        (*paExp)[i] = (WordExp){z, u->n, NULL, 0, NULL, 0, NULL, 0};
        token_list_free(&lu);
    }
    return LP_OK;
}

/* The words of x as an operand of a chain (NEAR/N, NOTNEAR/N, SENTENCE,
** PARAGRAPH, '<<' over words) into the empty *l, and which of them are
** prefixes or wildcards into *paExp (NULL: none): a prefix or a wildcard
** is one such word; a word or exact phrase is its words, prefixes among
** them ("hello wor*"). LP_OK or an error. */
static int operand_words(FtsQuery *q, const FtsNode *x, TokenList *l, WordExp **paExp, LpError *err) {
    *paExp = NULL;
    if (x->bMissed) return LP_OK; /* @@relaxed, no field of the table: no words */
    if (x->kind == FTSN_PREFIX || x->kind == FTSN_WILDCARD) {
        const char *zPre, *zGlob = NULL;
        int nPre, nGlob = 0;
        if (x->kind == FTSN_PREFIX) {
            if (analyse(q, x, 0, l, err) || prefix_word(q->an, x, l, err)) return err->code;
            char *z = arena_alloc(q->a, (size_t)l->a.a[0].n + 1);
            if (!z) return lp_err_set(err, LP_NOMEM, "out of memory");
            memcpy(z, l->a.a[0].z, (size_t)l->a.a[0].n);
            z[l->a.a[0].n] = 0;
            zPre = z;
            nPre = l->a.a[0].n;
            l->a.a[0].z = z;
        } else {
            if (fts_wildcard_pattern(q->a, q->an, x, &zGlob, &nGlob, &nPre, err)) return err->code;
            zPre = fts_pattern_start(zGlob, nGlob);
            Token t = {zGlob, nGlob, 0, 0, (uint32_t)x->n};
            if (VEC_PUSH(&l->a, t)) return lp_err_set(err, LP_NOMEM, "out of memory");
        }
        l->a.a[0].iPos = 0;
        if (!(*paExp = arena_alloc(q->a, sizeof(WordExp)))) return lp_err_set(err, LP_NOMEM, "out of memory");
        **paExp = (WordExp){zPre, nPre, zGlob, nGlob, NULL, 0, NULL, 0};
        return LP_OK;
    }
    if (analyse(q, x, 1, l, err)) return err->code;
    return x->kind == FTSN_PHRASE ? phrase_prefixes(q, x, l, paExp, err) : LP_OK;
}

/* About how many postings iterating pn visits: what an AND orders its
** parts by, so the rarest part leads the intersection and the others
** only skip to its documents. */
static uint64_t pn_cost(const PlanNode *pn) {
    uint64_t c = 0;
    switch (pn->kind) {
    case PN_LEAF:
        return pn->df;
    case PN_PHRASE:
        return UINT32_MAX; /* its words' lists are not kept in the plan; phrases go last */
    case PN_MAYBE:
        return pn_cost(pn->aChild[0]);
    case PN_AND:
        c = UINT64_MAX;
        for (int i = 0; i < pn->nChild - pn->nNeg; i++) {
            uint64_t x = pn_cost(pn->aChild[i]);
            if (x < c) c = x;
        }
        return c;
    default: /* GROUP, OR: the union of the parts */
        for (int i = 0; i < pn->nChild; i++) c += pn_cost(pn->aChild[i]);
        return c;
    }
}

/* Stable insertion sort of an AND's positive parts by pn_cost, each cost
** computed once (it walks the part's subtree). Best effort: unsorted when
** the scratch array cannot be had. */
static void sort_by_cost(Arena *ar, PlanNode **a, int n) {
    uint64_t *aCost = n > 1 ? arena_alloc(ar, sizeof(uint64_t) * (size_t)n) : NULL;
    if (!aCost) return;
    for (int i = 0; i < n; i++) aCost[i] = pn_cost(a[i]);
    for (int i = 1; i < n; i++) {
        PlanNode *x = a[i];
        uint64_t cx = aCost[i];
        int j = i - 1;
        while (j >= 0 && aCost[j] > cx) {
            a[j + 1] = a[j];
            aCost[j + 1] = aCost[j];
            j--;
        }
        a[j + 1] = x;
        aCost[j + 1] = cx;
    }
}

/* Are a and b the same term clause (same words in the same fields, with
** the same boost)? */
static int same_term_group(const PlanNode *a, const PlanNode *b) {
    if (a->kind != PN_GROUP || b->kind != PN_GROUP || a->qtype != b->qtype ||
        a->nChild != b->nChild || a->typeWeight != b->typeWeight || a->boost != b->boost) {
        return 0;
    }
    for (int i = 0; i < a->nChild; i++) {
        const PlanNode *x = a->aChild[i], *y = b->aChild[i];
        if (x->kind != PN_LEAF || y->kind != PN_LEAF || x->nKey != y->nKey ||
            memcmp(x->key, y->key, (size_t)x->nKey) != 0) {
            return 0;
        }
    }
    return 1;
}

/* Keeps pn, a clause planning folded into another, for the proximity
** rankers: its words' query positions are keywords too (unless under a
** NOT). Out of memory, they are left out. */
static void keep_keywords(FtsQuery *q, PlanNode *pn) {
    if (!is_factor_ranker(q->rank.ranker) || q->nNotDepth || pn->kind == PN_NONE) return;
    if (q->nMerged == q->capMerged) {
        int cap = q->capMerged ? q->capMerged * 2 : 8;
        PlanNode **ap = arena_alloc(q->a, sizeof(PlanNode *) * (size_t)cap);
        if (!ap) return;
        if (q->nMerged) memcpy(ap, q->apMerged, sizeof(PlanNode *) * (size_t)q->nMerged);
        q->apMerged = ap;
        q->capMerged = cap;
    }
    q->apMerged[q->nMerged++] = pn;
}

/* Folds the repeats of a term clause among an OR's children a[0..n) into
** its first occurrence (nRepeat counts them: the score is the same sum,
** computed once); returns the new count. Quadratic in the distinct terms,
** which a query has at most a few hundred of. */
static int merge_repeats(FtsQuery *q, PlanNode **a, int n) {
    int m = 0;
    for (int i = 0; i < n; i++) {
        int j = 0;
        if (a[i]->kind == PN_GROUP) {
            while (j < m && !same_term_group(a[j], a[i])) j++;
        } else {
            j = m;
        }
        if (j < m) {
            a[j]->nRepeat += a[i]->nRepeat;
            keep_keywords(q, a[i]); /* its query positions still count, */
            a[i]->pOwner = a[j];    /* where the first's do */
        } else {
            a[m++] = a[i];
        }
    }
    return m;
}

/* expand_keywords: the word n (analysed to the single term in l, at query
** position qBase) as OR(term, its exact form, its expansions as a prefix),
** each part where the table and the word allow it (search.h). */
static PlanNode *plan_expanded(FtsQuery *q, const FtsNode *n, const TokenList *l, uint32_t qBase,
                               LpError *err) {
    PlanNode *a[3];
    int k = 0;
    PlanNode *pn = plan_words(q, n, l, NULL, NULL, QT_TERM, 0, 0, 0, n->nPosLimit, n->pZones, qBase, err);
    if (!pn) return NULL;
    if (pn->kind != PN_NONE) a[k++] = pn;
    if ((q->rank.expand & FTS_EXPAND_EXACT) && analyzer_has_exact_forms(q->an)) {
        /* "=" + the word's text: the analyzer's query side makes the exact
        ** form (unless the text starts with a separator: then no '=word'). */
        FtsNode x = *n;
        char *z = arena_alloc(q->a, (size_t)n->n + 2);
        if (!z) return NULL;
        z[0] = '=';
        memcpy(z + 1, n->z, (size_t)n->n + 1);
        x.z = z;
        x.n = n->n + 1;
        TokenList lx = {{0}, {0}};
        int rc = analyse(q, &x, 1, &lx, err);
        if (rc == LP_OK && lx.a.n == 1 && lx.a.a[0].z[0] == ANALYZER_EXACT_MARK) {
            pn = plan_words(q, n, &lx, NULL, NULL, QT_TERM, 0, 0, 0, n->nPosLimit, n->pZones, qBase, err);
            if (pn && pn->kind != PN_NONE) a[k++] = pn;
        }
        token_list_free(&lx);
        if (rc != LP_OK || !pn) return NULL;
    }
    if (q->rank.expand & FTS_EXPAND_STAR) {
        /* '*word*' or 'word*', where the table's lengths allow one */
        TokenList lu = {{0}, {0}};
        int rc = analyse(q, n, 0, &lu, err);
        int star = rc == LP_OK && lu.a.n == 1 ? fts_expand_star(q->an, lu.a.a[0].z, lu.a.a[0].n) : FTS_STAR_NONE;
        token_list_free(&lu);
        if (rc != LP_OK) return NULL;
        if (star != FTS_STAR_NONE) {
            FtsNode x = *n;
            x.kind = star == FTS_STAR_INFIX ? FTSN_WILDCARD : FTSN_PREFIX;
            if (star == FTS_STAR_INFIX) {
                char *z = fts_star_pattern(q->a, n->z, n->n);
                if (!z) return NULL;
                x.z = z;
                x.n = n->n + 2;
            }
            /* with exact forms the star part's terms are exact forms, the
            ** word's own among them, as in the OR written out */
            q->qposExpand = qBase;
            pn = star == FTS_STAR_INFIX ? plan_wildcard(q, &x, err) : plan_prefix(q, &x, err);
            q->qposExpand = UINT32_MAX;
            if (!pn) return NULL;
            if (pn->kind != PN_NONE) a[k++] = pn;
        }
    }
    return or_of(q, a, k);
}

/* word^N: the idf of each clause planned for the word (its group's and its
** fields', and those of every part an expand_keywords OR made) times N,
** so that every formula and bound that reads idf sees the boost. */
static void boost_idf(PlanNode *pn, double f) {
    if (pn->kind == PN_LEAF || pn->kind == PN_PHRASE) {
        pn->idf *= f;
        return;
    }
    if (pn->kind == PN_GROUP) {
        pn->idf *= f;
        pn->boost = f;
    } else if (pn->kind != PN_OR) {
        return; /* PN_NONE (shared) */
    }
    for (int i = 0; i < pn->nChild; i++) boost_idf(pn->aChild[i], f);
}

/* Plans n. Returns NULL with err set on error; a clause that analyses to
** nothing (stop words) gives *pbDropped = 1 and NULL with no error. */
static PlanNode *plan(FtsQuery *q, const FtsNode *n, int *pbDropped, LpError *err);

/* NOTNEAR/N over any operands (an FTSN_NEAR_ANY with bNotNear): an AND of
** the first operand and the second as its one negative child, bOrder
** ORDER_NOTNEAR. Its iterator does not exclude the second's documents but
** reads the second's occurrences (notnear_any_holds); the second is
** planned as a negation is (no keyword, never scored, no expansion). An
** operand of stop words only is left out: the first, and the whole is;
** the second, and the first is all, as when it matches nothing. */
static PlanNode *plan_notnear_any(FtsQuery *q, const FtsNode *n, int *pbDropped, LpError *err) {
    int bDrop0, bDrop1;
    PlanNode *p0 = plan(q, n->aChild[0], &bDrop0, err);
    if (!p0 && !bDrop0) return NULL;
    q->nNotDepth++;
    PlanNode *p1 = plan(q, n->aChild[1], &bDrop1, err);
    q->nNotDepth--;
    if (!p1 && !bDrop1) return NULL;
    if (bDrop0) {
        *pbDropped = 1;
        return NULL;
    }
    if (p0->kind == PN_NONE || bDrop1 || p1->kind == PN_NONE) return p0;
    PlanNode *pn = new_pn(q, PN_AND);
    PlanNode **ac = arena_alloc(q->a, sizeof(PlanNode *) * 2);
    if (!pn || !ac) return lp_err_set(err, LP_NOMEM, "out of memory"), NULL;
    ac[0] = p0;
    ac[1] = p1;
    pn->aChild = ac;
    pn->nChild = 2;
    pn->nNeg = 1;
    pn->bOrder = ORDER_NOTNEAR;
    pn->aDist = n->aDist;
    return pn;
}

static PlanNode *plan(FtsQuery *q, const FtsNode *n, int *pbDropped, LpError *err) {
    *pbDropped = 0;
    switch (n->kind) {
    case FTSN_TERM:
    case FTSN_PHRASE: {
        TokenList l = {{0}, {0}};
        if (analyse(q, n, 1, &l, err)) {
            token_list_free(&l);
            return NULL;
        }
        PlanNode *pn = NULL;
        WordExp *aExp = NULL; /* a phrase's prefixes ("hello wor*") and expanded words */
        WordMarks wm = {NULL, NULL}; /* anchors on its words ("a ^b c$"~3) */
        if ((n->kind == FTSN_PHRASE && phrase_prefixes(q, n, &l, &aExp, err)) ||
            (q->rank.expand && l.a.n > 1 && !n->anchor && !n->aMark && !q->nNotDepth &&
             phrase_expansions(q, n, &l, &aExp, err)) ||
            word_marks(q, n, l.a.a, l.a.n, &wm, err)) {
            token_list_free(&l);
            return NULL;
        }
        if (l.a.n == 0) {
            *pbDropped = 1;
        } else {
            uint32_t qBase = take_qpos(q, &l, aExp);
            if (aExp && l.a.n == 1 && !n->anchor && !wm.aAnchor) {
                /* "wor*": the prefix, as outside quotes */
                pn = expand_terms(q, n, qBase, (const uint8_t *)aExp[0].zPre, aExp[0].nPre, aExp[0].zGlob,
                                  aExp[0].nGlob, err);
            } else if (q->rank.expand && fts_expand_applies(n) && l.a.n == 1 && !q->nNotDepth) {
                pn = plan_expanded(q, n, &l, qBase, err);
            } else {
                uint32_t tail;
                if (end_tail(q, n, &l, &tail, err) == LP_OK) {
                    pn = plan_words(q, n, &l, aExp, wm.aAnchor ? &wm : NULL,
                                    n->kind == FTSN_PHRASE && l.a.n > 1 ? QT_PHRASE : QT_TERM,
                                    n->kind == FTSN_PHRASE ? n->nSlop : 0, n->anchor, tail, n->nPosLimit,
                                    n->pZones, qBase, err);
                }
            }
            if (pn && n->fBoost) boost_idf(pn, n->fBoost);
        }
        token_list_free(&l);
        if (!pn && !*pbDropped && !err->code) lp_err_set(err, LP_NOMEM, "out of memory");
        return pn;
    }
    case FTSN_PREFIX:
    case FTSN_WILDCARD:
        if (n->bMissed) { /* @@relaxed, no field of the table: left out */
            *pbDropped = 1;
            return NULL;
        }
        return n->kind == FTSN_PREFIX ? plan_prefix(q, n, err) : plan_wildcard(q, n, err);
    case FTSN_QUORUM:
        return plan_quorum(q, n, pbDropped, err);
    case FTSN_BEFORE:
    case FTSN_NEAR:
    case FTSN_SENTENCE:
    case FTSN_PARAGRAPH:
        return plan_chain(q, n, pbDropped, err);
    case FTSN_ORDER:
    case FTSN_NEAR_ANY: {
        if (n->bNotNear) return plan_notnear_any(q, n, pbDropped, err);
        /* an AND of the operands in the query's order (see bOrder); an
        ** operand of stop words only is left out (NEAR/N: its links to
        ** its neighbours become the wider one), one that matches nothing
        ** makes the whole match nothing */
        int bNear = n->kind == FTSN_NEAR_ANY;
        PlanNode **a = arena_alloc(q->a, sizeof(PlanNode *) * (size_t)n->nChild);
        int *aDist = bNear ? arena_alloc(q->a, sizeof(int) * (size_t)n->nChild) : NULL;
        if (!a || (bNear && !aDist)) return lp_err_set(err, LP_NOMEM, "out of memory"), NULL;
        int m = 0, bNone = 0, link = 0; /* the widest link since the last operand kept */
        for (int i = 0; i < n->nChild; i++) {
            int bDrop;
            PlanNode *pc = plan(q, n->aChild[i], &bDrop, err);
            if (!pc && !bDrop) return NULL;
            if (bNear && i && n->aDist[i - 1] > link) link = n->aDist[i - 1];
            if (bDrop) continue;
            bNone |= pc->kind == PN_NONE;
            if (bNear && m > 0) aDist[m - 1] = link;
            link = 0;
            a[m++] = pc;
        }
        if (m == 0) {
            *pbDropped = 1;
            return NULL;
        }
        if (bNone) return &g_none;
        if (m == 1) return a[0];
        PlanNode *pn = new_pn(q, PN_AND);
        if (!pn) return lp_err_set(err, LP_NOMEM, "out of memory"), NULL;
        pn->aChild = a;
        pn->nChild = m;
        pn->bOrder = bNear ? ORDER_NEAR : ORDER_BEFORE;
        pn->aDist = aDist;
        return pn;
    }
    case FTSN_MAYBE: {
        int bReqDrop, bOptDrop;
        PlanNode *req = plan(q, n->aChild[0], &bReqDrop, err);
        if (!req && !bReqDrop) return NULL;
        PlanNode *opt = plan(q, n->aChild[1], &bOptDrop, err);
        if (!opt && !bOptDrop) return NULL;
        if (bReqDrop) { /* nothing required: the optional side alone */
            *pbDropped = bOptDrop;
            return opt;
        }
        if (bOptDrop || opt->kind == PN_NONE || req->kind == PN_NONE) return req;
        PlanNode *pn = new_pn(q, PN_MAYBE);
        PlanNode **ac = arena_alloc(q->a, sizeof(PlanNode *) * 2);
        if (!pn || !ac) {
            lp_err_set(err, LP_NOMEM, "out of memory");
            return NULL;
        }
        ac[0] = req;
        ac[1] = opt;
        pn->aChild = ac;
        pn->nChild = 2;
        return pn;
    }
    case FTSN_AND:
    case FTSN_OR: {
        int bAnd = n->kind == FTSN_AND;
        PlanNode **aPos = arena_alloc(q->a, sizeof(PlanNode *) * (size_t)n->nChild);
        PlanNode **aNeg = arena_alloc(q->a, sizeof(PlanNode *) * (size_t)n->nChild);
        if (!aPos || !aNeg) {
            lp_err_set(err, LP_NOMEM, "out of memory");
            return NULL;
        }
        int nPos = 0, nNeg = 0, bNone = 0, bAnyNone = 0, cap = n->nChild;
        int bStrict = q->bStrictChoice;
        for (int i = 0; i < n->nChild; i++) {
            const FtsNode *c = n->aChild[i];
            int bNot = c->kind == FTSN_NOT;
            int bDrop;
            q->nNotDepth += bNot;
            q->bStrictChoice = n->bChoices;
            PlanNode *pc = plan(q, bNot ? c->aChild[0] : c, &bDrop, err);
            q->bStrictChoice = bStrict;
            q->nNotDepth -= bNot;
            if (!pc && !bDrop) return NULL;
            if (bDrop) continue;
            if (bNot) {
                if (pc->kind != PN_NONE) aNeg[nNeg++] = pc; /* NOT nothing excludes nothing */
                continue;
            }
            if (pc->kind == PN_NONE) {
                bNone |= bAnd; /* an AND with a part that matches nothing matches nothing */
                bAnyNone = 1;
                continue;
            }
            if (!bAnd && pc->kind == PN_OR) { /* flatten */
                /* room for its children and one slot per child of n
                ** still to come (cap >= nPos + n->nChild - i always) */
                if (nPos + pc->nChild + (n->nChild - i - 1) > cap) {
                    cap = nPos + pc->nChild + n->nChild;
                    PlanNode **a2 = arena_alloc(q->a, sizeof(PlanNode *) * (size_t)cap);
                    if (!a2) return lp_err_set(err, LP_NOMEM, "out of memory"), NULL;
                    memcpy(a2, aPos, sizeof(PlanNode *) * (size_t)nPos);
                    aPos = a2;
                }
                for (int j = 0; j < pc->nChild; j++) aPos[nPos++] = pc->aChild[j];
                continue;
            }
            aPos[nPos++] = pc;
        }
        /* Left out only when every part was (stop words): an OR whose
        ** parts all match nothing matches nothing, so (zz | yy) in an AND
        ** makes it match nothing, as in Sphinx. */
        if (nPos == 0 && nNeg == 0 && !bAnyNone) {
            /* every choice of a chain's OR lists was left out: they hold only
            ** stop words, and the chain is left without them, as an operand
            ** of only stop words is (cat << (the | of) is cat) */
            if (n->bChoices) return plan(q, n->aChild[0], pbDropped, err);
            *pbDropped = 1;
            return NULL;
        }
        if (bNone || nPos == 0) return &g_none;
        if (!bAnd) nPos = merge_repeats(q, aPos, nPos);
        if (bAnd) sort_by_cost(q->a, aPos, nPos);
        if (nPos == 1 && nNeg == 0) return aPos[0];
        PlanNode *pn = new_pn(q, bAnd ? PN_AND : PN_OR);
        PlanNode **ac = arena_alloc(q->a, sizeof(PlanNode *) * (size_t)(nPos + nNeg));
        if (!pn || !ac) {
            lp_err_set(err, LP_NOMEM, "out of memory");
            return NULL;
        }
        memcpy(ac, aPos, sizeof(PlanNode *) * (size_t)nPos);
        memcpy(ac + nPos, aNeg, sizeof(PlanNode *) * (size_t)nNeg);
        pn->aChild = ac;
        pn->nChild = nPos + nNeg;
        pn->nNeg = bAnd ? nNeg : 0;
        if (bAnd && nPos > 1) pn->pSpan = n->pSpan;
        return pn;
    }
    case FTSN_NOT:
        break;
    }
    lp_err_set(err, LP_INTERNAL, "MATCH: NOT outside of an AND");
    return NULL;
}

/* Does q match documents without scoring them: every document (MATCH(''))
** or every one but some (only negations, plan_negations)? Each weighs 1,
** as in a full scan. */
static int root_unscored(const FtsQuery *q) {
    const PlanNode *r = q->root;
    return r->kind == PN_ALL || (r->kind == PN_AND && r->nChild == r->nNeg + 1 && r->aChild[0]->kind == PN_ALL);
}

/* A query of only negations (FTS_MATCH_NOT_ONLY: Manticore's OPTION
** not_terms_only_allowed=1): every document AND NOT each of them. A
** negation that matches nothing (or only stop words) excludes nothing. */
static PlanNode *plan_negations(FtsQuery *q, const FtsNode *root, LpError *err) {
    int n = root->kind == FTSN_NOT ? 1 : root->nChild;
    PlanNode **ac = arena_alloc(q->a, sizeof(PlanNode *) * (size_t)(n + 1));
    PlanNode *pAll = new_pn(q, PN_ALL), *pn = new_pn(q, PN_AND);
    if (!ac || !pAll || !pn) return lp_err_set(err, LP_NOMEM, "out of memory"), NULL;
    int nNeg = 0;
    for (int i = 0; i < n; i++) {
        const FtsNode *x = root->kind == FTSN_NOT ? root : root->aChild[i];
        int bDrop;
        q->nNotDepth++;
        PlanNode *pc = plan(q, x->aChild[0], &bDrop, err);
        q->nNotDepth--;
        if (!pc && !bDrop) return NULL;
        if (!bDrop && pc->kind != PN_NONE) ac[1 + nNeg++] = pc;
    }
    if (nNeg == 0) return pAll;
    ac[0] = pAll;
    pn->aChild = ac;
    pn->nChild = 1 + nNeg;
    pn->nNeg = nNeg;
    return pn;
}

static const char *const azRanker[] = {"bm25f",     "bm25",      "none",      "proximity_bm25",
                                       "sph04",     "proximity", "wordcount", "matchany",
                                       "fieldmask", "expr"};

int fts_ranker_from_name(const char *z) {
    for (int i = 0; i < (int)(sizeof(azRanker) / sizeof(azRanker[0])); i++) {
        if (strcasecmp(z, azRanker[i]) == 0) return i == FTS_RANK_EXPR ? -1 : i;
    }
    return -1;
}

const char *fts_ranker_name(FtsRanker r) {
    return (int)r >= 0 && (int)r < (int)(sizeof(azRanker) / sizeof(azRanker[0])) ? azRanker[r] : "?";
}

void fts_rank_defaults(FtsRankParams *p) {
    p->ranker = FTS_RANK_BM25F;
    p->k1 = 1.2;
    p->b = 0.75;
    for (int i = 0; i < FTS_MAX_FIELDS; i++) p->aFieldWeight[i] = 1.0;
    p->wTerm = p->wPhrase = p->wPrefix = 1.0;
    p->nExpansionLimit = FTS_DEFAULT_EXPANSION_LIMIT;
    p->expand = 0;
    p->pExpr = NULL;
}

int fts_phrase_word_is_prefix(const FtsNode *x, const Token *t) {
    uint32_t lo, hi;
    return (x->kind == FTSN_PHRASE || x->kind == FTSN_QUORUM) && t->iEnd < (uint32_t)x->n &&
           x->z[t->iEnd] == '*' && !fts_phrase_wildcard_at(x, t->iStart, &lo, &hi);
}

int fts_expand_star(const Analyzer *an, const char *z, int n) {
    int nChars = 0;
    for (int i = 0; i < n; i++) nChars += (z[i] & 0xC0) != 0x80;
    int nInfix = analyzer_min_infix_len(an), nPrefix = analyzer_min_prefix_len(an);
    if (nInfix > 0 && nChars >= nInfix) return FTS_STAR_INFIX;
    if (nPrefix > 0 && nChars >= nPrefix) return FTS_STAR_PREFIX;
    return FTS_STAR_NONE;
}

int fts_expand_applies(const FtsNode *x) {
    return x->kind == FTSN_TERM && !x->anchor && x->z[0] != ANALYZER_EXACT_MARK;
}

int fts_expand_from_name(const char *z) {
    if (strcmp(z, "0") == 0) return 0;
    if (strcmp(z, "1") == 0) return FTS_EXPAND_EXACT | FTS_EXPAND_STAR;
    int bits = 0;
    for (;;) {
        size_t n = strcspn(z, ",");
        if (n == 5 && strncasecmp(z, "exact", 5) == 0) bits |= FTS_EXPAND_EXACT;
        else if (n == 4 && strncasecmp(z, "star", 4) == 0) bits |= FTS_EXPAND_STAR;
        else return -1;
        if (!z[n]) return bits;
        z += n + 1;
    }
}

/* The zone limits of a query's leaves, checked against the table's zones
** before planning (so the answer does not depend on what is indexed). */
typedef struct ZoneCheck {
    const Analyzer *an;
    LpError *err;
    const FtsZones *pLast;      /* checked already */
} ZoneCheck;

static int zone_check(void *ctx, const FtsNode *leaf, int bNegated) {
    ZoneCheck *zc = ctx;
    const FtsZones *z = leaf->pZones;
    (void)bNegated;
    if (!z || z == zc->pLast) return LP_OK;
    zc->pLast = z;
    if (!analyzer_has_zones(zc->an)) {
        lp_err_setpos(zc->err, LP_BADINPUT, z->pos, "MATCH: %s at offset %d needs the table option "
                      "index_zones (with html_strip='1'): this table indexes no zones",
                      z->bSpan ? "ZONESPAN:" : "ZONE:", z->pos);
        zc->err->detail = FTS_MATCH_ER_PARSE;
        return LP_BADINPUT;
    }
    for (int k = 0; k < z->nName; k++) {
        if (!analyzer_zone_indexed(zc->an, z->azName[k], strlen(z->azName[k]))) {
            lp_err_setpos(zc->err, LP_BADINPUT, z->pos, "MATCH: zone '%s' of the %s at offset %d is "
                          "not one of the table's index_zones", z->azName[k], z->bSpan ? "ZONESPAN:" : "ZONE:",
                          z->pos);
            zc->err->detail = FTS_MATCH_ER_PARSE;
            return LP_BADINPUT;
        }
    }
    return LP_OK;
}

int fts_query_new(Arena *a, const FtsNode *root, const char *zMatch, const Analyzer *an,
                  FtsSource *src, const FtsRankParams *rank, FtsQuery **ppQuery, LpError *err) {
    *ppQuery = NULL;
    if (rank->ranker == FTS_RANK_EXPR && !rank->pExpr) {
        return lp_err_set(err, LP_INTERNAL, "ranker=expr without a compiled expression");
    }
    size_t nf = src->nFields > 0 ? (size_t)src->nFields : 1;
    if (nf > FTS_MAX_FIELDS) return lp_err_set(err, LP_INTERNAL, "%zu fields", nf);
    FtsQuery *q = arena_alloc(a, sizeof(FtsQuery));
    if (!q) return lp_err_set(err, LP_NOMEM, "out of memory");
    memset(q, 0, offsetof(FtsQuery, rank));
    memcpy(&q->rank, rank, offsetof(FtsRankParams, aFieldWeight) + sizeof(double) * nf);
    q->a = a;
    q->aFw = q->rank.aFieldWeight;
    q->zMatch = zMatch;
    q->qposExpand = UINT32_MAX;
    q->an = an;
    q->src = src;
    lp_err_clear(&q->errIter);
    q->aAvgLen = arena_alloc(a, sizeof(double) * nf);
    q->aNormB = arena_alloc(a, sizeof(double) * nf);
    q->aNorm = arena_zalloc(a, sizeof(double) * nf);
    q->aNormDoc = arena_alloc(a, sizeof(uint32_t) * nf);
    if (!q->aAvgLen || !q->aNormB || !q->aNorm || !q->aNormDoc) return lp_err_set(err, LP_NOMEM, "out of memory");
    for (int f = 0; f < src->nFields; f++) {
        q->aAvgLen[f] = src->nDocs ? (double)src->aSumLen[f] / src->nDocs : 0;
        q->aNormB[f] = rank->b / (q->aAvgLen[f] > 0 ? q->aAvgLen[f] : 1);
        q->aNormDoc[f] = FTS_NO_DOC;
    }
    q->normA = 1 - rank->b;
    if (!root) {
        q->root = new_pn(q, PN_ALL);
        if (!q->root) return lp_err_set(err, LP_NOMEM, "out of memory");
    } else {
        int bDrop;
        lp_err_clear(err);
        ZoneCheck zc = {an, err, NULL};
        int rc = fts_match_leaves(root, zone_check, &zc);
        if (rc != LP_OK) return rc;
        q->root = fts_match_is_negative(root) ? plan_negations(q, root, err) : plan(q, root, &bDrop, err);
        hmap_free(&q->lookups); /* the plan keeps what it needs of each lookup */
        hmap_free(&q->qwords);
        if (!q->root && !bDrop) return err->code ? err->code : LP_NOMEM;
        if (!q->root) q->root = &g_none; /* only stop words */
    }
    *ppQuery = q;
    return LP_OK;
}

/* After a run: the first cursor that ended early on a damaged file. */
static int cursors_status(FtsQuery *q) {
    for (size_t i = 0; i < q->cursors.n && q->rc == LP_OK; i++) {
        FtsPostings *c = q->cursors.a[i];
        if (c->vt->xStatus && c->vt->xStatus(c, &q->errIter) != LP_OK) q->rc = q->errIter.code;
    }
    return q->rc;
}

void fts_query_free(FtsQuery *q) {
    if (!q) return;
    for (size_t i = 0; i < q->cursors.n; i++) q->cursors.a[i]->vt->xClose(q->cursors.a[i]);
    VEC_FREE(&q->cursors);
    factors_free(q->fx);
}

/* ------------------------------------------------------------------ */
/* Proximity rankers                                                   */

/* Manticore's rankers other than BM25 weigh, per field, how the query's
** keywords occur in it (Sphinx's "factors"):
**   lcs          the longest run of keyword occurrences that follows the
**                query: each one a keyword at the query position after
**                the previous one's, as many positions on in the
**                document as in the query (a stop word skipped in both)
**   hit_count    keyword occurrences
**   word_count   distinct query positions matched
**   min_hit_pos  the first occurrence's position, from 1
**   exact_hit    the field is the whole query: a run of every query
**                position that starts at the field's first position and
**                ends at its last
** The keywords are every positive word of the query (under NOT: not), a
** phrase's or chain's words each at its own query position, a prefix's
** expansions all at the prefix's; a position limit (@f[N]) drops the
** occurrences past it here too, and a zone limit (ZONE:, ZONESPAN:) those
** outside every span of its zones. A word of a ZONESPAN group (an AND
** whose words must all be in one span) counts only in the spans where the
** whole group holds in the scored document, the spans the search found
** (span_of), as Sphinx's zonespan AND passes on only the hits that share
** a span; where the group does not hold, nowhere. Each (field, term,
** limit, zones, group) has its own cursor with positions, moved forward
** with the documents scored; the keys of one field limited to the same
** zones share their spans. */

typedef struct FKey {
    const uint8_t *key;         /* field byte + term */
    int nKey;
    int iField;
    uint32_t nPosLimit;         /* @field[N], or 0 */
    int iZone;                  /* ZONE: its spans are fx->zones.a[iZone - 1]; 0: none */
    FtsTermInfo info;
    uint32_t *aQ;               /* the query positions it stands at, distinct */
    int nQ;
    FtsPostings *c;             /* this run's cursor */
    double idf;                 /* from its field's df: ranker=expr's idf factors */
    int iGroup;                 /* its ZONESPAN group is fx->groups.a[iGroup - 1]; 0: none */
    int *aPhrase;               /* the phrases and chains it is a word of (their
                                ** indexes in fx->phrases; in the arena): its
                                ** occurrences count where one of them matches ... */
    int nPhrase;
    int bPlain;                 /* ... unless it is a plain word too: every one counts */
    int *aGuard;                /* ... or a plain word under clauses that can fail where
                                ** the query matches: each such place's innermost (its
                                ** index in fx->guards; in the arena): every one counts
                                ** where one of them holds */
    int nGuard;
    int bFreeAt;                /* at the scored document: every occurrence counts
                                ** (bPlain, or one of aGuard holds) */
} FKey;

/* A phrase, proximity phrase or chain of two words or more whose words are
** keys, and where it matches in the scored document (valid while
** factor_weight runs). */
typedef struct FPhrase {
    const PlanNode *pn;         /* the PN_PHRASE (one field) */
    It *it;                     /* its iterator in this run, or NULL (not found) */
    int bExact;                 /* an exact phrase: aStart holds its matches */
    int iGuard;                 /* the innermost clause around it that can fail where
                                ** the query matches (fx->guards, from 1), 0: none */
    int bAt;                    /* it matches the scored document, and so does iGuard */
    uint32_t startDoc;          /* the document aStart is of (FTS_NO_DOC: none) */
    uint32_t *aStart;           /* the matches' first positions, ascending, found
                                ** when a key needs them (phrase_starts) */
    uint32_t nStart, nCap;
    int anchorKept;             /* not in the tree: an anchored word kept for its
                                ** keywords only (a quorum's repeat, the ^a of
                                ** "a$ ^a b"/2): FTS_ANCHOR_* of that word, which
                                ** counts where its anchor holds (kept_holds) and
                                ** iGuard does; 0: none */
} FPhrase;

/* A clause that can fail at a document the query matches: an AND (a '<<'
** chain of any operands too), a MAYBE or a quorum that is a part of an OR
** or a MAYBE's optional part. A clause that does not match a document
** passes on none of its words' occurrences there (as Sphinx's AND), so the
** words under it count where it holds (and every clause around it does).
** An OR of words needs none: a word tells for itself. */
typedef struct FGuard {
    const PlanNode *pn;
    int iParent;                /* the guard around it (fx->guards, from 1), 0: none */
    It *it;                     /* its iterator in this run, or NULL (not found: it
                                ** limits nothing) */
    int bAt;                    /* it and its parents match the scored document */
} FGuard;

/* A ZONESPAN group some keys belong to, and the spans where it holds in
** the scored document: q->aSpanKey[off, off + n) (field << 32 | the
** span's first position, sorted), valid while factor_weight runs. */
typedef struct FGroup {
    const PlanNode *pn;         /* the AND with pSpan */
    It *it;                     /* its iterator in this run, or NULL (not found) */
    int bAny;                   /* holds without a span (no limited part): no limit */
    int bAt;                    /* matches the scored document */
    size_t off, n;
} FGroup;


/* A run of the lcs so far: where it reached and where it started. */
typedef struct FRun {
    uint32_t qpos, len, pos0, q0;
    uint32_t lenC;              /* the contiguous run (lccs) ending here ... */
    double idfC;                /* ... and its keywords' idfs added (wlccs) */
} FRun;
typedef VEC(FRun) FRunVec;


/* The zones a key is limited to: the phrase they come from (its field's
** zone terms) and their spans in the scored document. */
typedef struct FZone {
    const PlanNode *pn;
    ZoneSpans zs;
} FZone;

struct FtsFactors {
    VEC(FKey) keys;             /* sorted by field */
    VEC(FZone) zones;           /* the distinct zone limits of keys */
    VEC(FGroup) groups;         /* the ZONESPAN groups of keys */
    VEC(FPhrase) phrases;       /* the exact phrases some keys are words of */
    VEC(FGuard) guards;         /* the clauses that can fail around some keys, each
                                ** after the one around it */
    uint8_t *aMergedDone;       /* while collecting: per q->apMerged, its keys taken */
    It *pGroupRoot;             /* the run's tree groups[].it and phrases[].it were
                                ** found in */
    HashMap byKey;              /* while collecting: key + limit -> index in keys + 1 */
    int *aHeap;                 /* the keys whose cursor is not exhausted, a min-heap by
                                ** its doc (a prefix may expand to thousands: a scan of
                                ** every key per document would be quadratic) */
    int nHeap;
    int *aAt;                   /* the keys at the scored document, by index (so by field) */
    int nAt;
    int bHeap;                  /* OR_HEAP_MIN keys or more: the heap; fewer: a scan */
    int bScoreFirst;            /* the tree has a MAYBE: its optional side moves to the
                                ** document as it is scored, and the factors read the
                                ** clauses where they stand (doc_weight) */
    uint32_t nQWords;           /* the query's words not under NOT (aQWord), found in
                                ** the index or not */
    double maxLcs;              /* max_lcs (max_lcs()) */
    uint32_t qMin, qMax;        /* the smallest and largest of their positions */
    VEC(uint64_t) occ;          /* scratch for atc and min_gaps, one field: position << 32 |
                                ** the key's index among the field's keys found; */
    VEC(double) occIdf;         /* those keys' idfs, */
    VEC(uint32_t) occWord;      /* and their query words (first query position), */
    VEC(uint32_t) wordCnt;      /* min_gaps' count per query position in its window */
    VEC(uint32_t) near;         /* and their nearest positions on one side */
    VEC(uint64_t) hits;         /* scratch for one field: position << 32 | query position, */
    VEC(uint64_t) tmp;          /* in runs sorted each (one per key), merged via tmp */
    VEC(size_t) runs;           /* where each run starts, then the end */
    VEC(uint32_t) pos;          /* scratch: one key's positions */
    VEC(uint64_t) bits;         /* scratch for plain fields (field_factors_plain): the
                                ** positions holding a keyword, a bit each, all zero
                                ** between fields (bits.n words are); */
    VEC(int) slotK;             /* and the key at each of them (its index in keys); */
    VEC(uint32_t) prePos;       /* and each key's positions as it read them (a cursor
                                ** reads a document's once): aAt[preFirst, preFirst +
                                ** nPre) from prePos[preOff[i]] on, for field_factors
                                ** when two keys share a position after all */
    VEC(size_t) preOff;
    int preFirst, nPre;
    FRunVec prev, cur;          /* scratch: the runs at two positions */
    uint8_t *aSeen;             /* scratch: per query position, matched in this field */
    FtsFieldFactors *aFF;       /* per field of the scored document, for ranker=expr
                                ** when the caller keeps none (nFields entries) */
    uint32_t *aPrevKw;          /* per query position: the keyword position before it, or
                                ** UINT32_MAX (lccs: keywords next to each other, only
                                ** stop words between them in the query) */
    uint32_t *aKw;              /* the keyword positions ascending (exact_order) */
    double *aFwAlt, *aNormBAlt, *aNormAlt; /* rescore()'s parameters, per field */
    uint32_t *aNormDocAlt;
    double *aQIdf;              /* scratch, per query position: the largest idf of the
                                ** keys standing there found in the field (wlccs) */
    uint8_t *aSeenDoc;          /* ... and in some field of the scored document, */
    VEC(uint32_t) seenDoc;      /* those positions (doc_word_count) */
    uint32_t *aWordTf;          /* PACKEDFACTORS(), per query position: occurrences
                                ** in the document over its fields (when not NULL), */
    double *aWordIdf;           /* and the largest idf among its keys found there */
};

static void factors_free(FtsFactors *fx) {
    if (!fx) return; /* the rest is in the query's arena */
    hmap_free(&fx->byKey);
    VEC_FREE(&fx->keys);
    VEC_FREE(&fx->zones);
    VEC_FREE(&fx->groups);
    VEC_FREE(&fx->phrases);
    VEC_FREE(&fx->guards);
    VEC_FREE(&fx->hits);
    VEC_FREE(&fx->tmp);
    VEC_FREE(&fx->runs);
    VEC_FREE(&fx->pos);
    VEC_FREE(&fx->bits);
    VEC_FREE(&fx->slotK);
    VEC_FREE(&fx->prePos);
    VEC_FREE(&fx->preOff);
    VEC_FREE(&fx->prev);
    VEC_FREE(&fx->cur);
    VEC_FREE(&fx->seenDoc);
    VEC_FREE(&fx->occ);
    VEC_FREE(&fx->occIdf);
    VEC_FREE(&fx->occWord);
    VEC_FREE(&fx->wordCnt);
    VEC_FREE(&fx->near);
}

/* The zone limit of phrase pn (0: none) as an index into fx->zones plus
** one: the first entry with the same zone terms (so the same field), or a
** new one. -1 out of memory. */
static int fzone_of(FtsFactors *fx, const PlanNode *pn) {
    if (!pn->nZone) return 0;
    for (size_t i = 0; i < fx->zones.n; i++) {
        const PlanNode *o = fx->zones.a[i].pn;
        int k = 0;
        if (o->nZone != pn->nZone) continue;
        while (k < 2 * pn->nZone && o->anZoneKey[k] == pn->anZoneKey[k] &&
               memcmp(o->aZoneKey[k], pn->aZoneKey[k], (size_t)pn->anZoneKey[k]) == 0) {
            k++;
        }
        if (k == 2 * pn->nZone) return (int)i + 1;
    }
    FZone z = {pn, {0}};
    return VEC_PUSH(&fx->zones, z) ? -1 : (int)fx->zones.n;
}

static int fkey_add(FtsQuery *q, FtsFactors *fx, int iField, const uint8_t *key, int nKey,
                    const FtsTermInfo *info, uint32_t nLimit, int iZone, int iGroup, int iPhrase,
                    int iGuard, uint32_t qpos) {
    /* a prefix can expand to thousands of keys: found by hash, not by scan
    ** (key holds the field byte; the limits are appended; the map borrows
    ** its keys, so a new one is copied to the arena) */
    uint8_t id[FTS_MAX_KEY + sizeof(nLimit) + sizeof(iZone) + sizeof(iGroup)];
    memcpy(id, key, (size_t)nKey);
    memcpy(id + nKey, &nLimit, sizeof(nLimit));
    memcpy(id + nKey + sizeof(nLimit), &iZone, sizeof(iZone));
    memcpy(id + nKey + sizeof(nLimit) + sizeof(iZone), &iGroup, sizeof(iGroup));
    size_t nId = (size_t)nKey + sizeof(nLimit) + sizeof(iZone) + sizeof(iGroup);
    uintptr_t at = (uintptr_t)hmap_get(&fx->byKey, id, nId);
    FKey *k;
    if (at) {
        k = &fx->keys.a[at - 1];
    } else {
        uint8_t *idKept = arena_alloc(q->a, nId);
        FKey z = {key, nKey, iField, nLimit, iZone, *info, NULL, 0, NULL,
                  idf_of(q->src->nDocs, info->df ? info->df : 1), iGroup, NULL, 0, 0, NULL, 0, 0};
        if (!idKept || VEC_PUSH(&fx->keys, z)) return LP_NOMEM;
        memcpy(idKept, id, nId);
        if (hmap_put(&fx->byKey, idKept, nId, (void *)(uintptr_t)fx->keys.n, NULL)) return LP_NOMEM;
        k = &fx->keys.a[fx->keys.n - 1];
    }
    /* iPhrase: the phrase or chain (fx->phrases, from 1) it comes from, 0: none;
    ** iGuard: the clause that can fail around a plain word (from 1), 0: none */
    if (!iPhrase && !iGuard) k->bPlain = 1;
    if (!iPhrase && iGuard && !k->bPlain) {
        int *a = arena_alloc(q->a, sizeof(int) * (size_t)(k->nGuard + 1));
        if (!a) return LP_NOMEM;
        if (k->nGuard) memcpy(a, k->aGuard, sizeof(int) * (size_t)k->nGuard);
        a[k->nGuard++] = iGuard - 1;
        k->aGuard = a;
    }
    if (iPhrase && (!k->nPhrase || k->aPhrase[k->nPhrase - 1] != iPhrase - 1)) {
        int *a = arena_alloc(q->a, sizeof(int) * (size_t)(k->nPhrase + 1));
        if (!a) return LP_NOMEM;
        if (k->nPhrase) memcpy(a, k->aPhrase, sizeof(int) * (size_t)k->nPhrase);
        a[k->nPhrase++] = iPhrase - 1;
        k->aPhrase = a;
    }
    for (int i = 0; i < k->nQ; i++) {
        if (k->aQ[i] == qpos) return LP_OK;
    }
    uint32_t *a = arena_alloc(q->a, sizeof(uint32_t) * (size_t)(k->nQ + 1));
    if (!a) return LP_NOMEM;
    if (k->nQ) memcpy(a, k->aQ, sizeof(uint32_t) * (size_t)k->nQ);
    a[k->nQ++] = qpos;
    k->aQ = a;
    return LP_OK;
}

/* The keywords of pn's positive parts; iGroup is the innermost ZONESPAN
** group around pn (fx->groups, from 1), iGuard the innermost clause
** around it that can fail where the query matches (fx->guards, from 1),
** 0 for none. */
static int fkeys_collect(FtsQuery *q, FtsFactors *fx, const PlanNode *pn, int iGroup, int iGuard) {
    int rc = LP_OK;
    /* the clauses kept for their keywords that stand in pn: under its guards
    ** (a term's leaf stands for no kept clause: a group or a quorum does) */
    for (int i = 0; i < q->nMerged && rc == LP_OK && pn->kind != PN_LEAF; i++) {
        if (q->apMerged[i]->pOwner != pn || fx->aMergedDone[i]) continue;
        fx->aMergedDone[i] = 1;
        rc = fkeys_collect(q, fx, q->apMerged[i], iGroup, iGuard);
    }
    if (rc != LP_OK) return rc;
    switch (pn->kind) {
    case PN_LEAF:
        return fkey_add(q, fx, pn->iField, pn->key, pn->nKey, &pn->info, 0, 0, 0, 0, iGuard, pn->qpos);
    case PN_PHRASE: {
        int iZone = fzone_of(fx, pn);
        if (iZone < 0) return LP_NOMEM;
        /* the group limits the words its zones limit (one with a ZONE: of
        ** its own keeps that) */
        if (iGroup && pn->pZones != fx->groups.a[iGroup - 1].pn->pSpan) iGroup = 0;
        /* a phrase's or chain's words count where it matches, as Sphinx's
        ** operators pass on the occurrences they matched: an exact
        ** phrase's at its matches (an anchored word's where it is
        ** anchored), the others' in the fields they hold in */
        int iPhrase = 0;
        if ((pn->nTerm > 1 || ((pn->anchor || pn->aWordAnchor) && !pn->nOp && !pn->nSlop)) && pn->aGQPos) {
            FPhrase ph = {pn, NULL, !pn->nOp && !pn->nSlop, iGuard, 0, FTS_NO_DOC, NULL, 0, 0, 0};
            if (VEC_PUSH(&fx->phrases, ph)) return LP_NOMEM;
            iPhrase = (int)fx->phrases.n;
        }
        /* (a chain's boundaries' terms, the words past phrase_required,
        ** are not keywords) */
        for (int i = 0; i < phrase_required(pn) && rc == LP_OK; i++) {
            uint32_t lim = pn->aPosLimit ? pn->aPosLimit[i] : 0;
            const PhraseAlt *alt = pn->aAlt && pn->aAlt[i].n ? &pn->aAlt[i] : NULL;
            if (!alt) {
                rc = fkey_add(q, fx, pn->iField, pn->aKey[i], pn->anKey[i], &pn->aInfo[i], lim, iZone, iGroup,
                              iPhrase, iGuard, pn->aGQPos[i]);
            }
            /* a prefix's or wildcard's: each of its terms, as outside a phrase */
            for (int k = 0; alt && k < alt->n && rc == LP_OK; k++) {
                rc = fkey_add(q, fx, pn->iField, alt->a[k].key, alt->a[k].nKey, &alt->a[k].info, lim, iZone,
                              iGroup, iPhrase, iGuard, pn->aGQPos[i]);
            }
        }
        return rc;
    }
    case PN_AND:
        if (pn->pSpan) {
            FGroup g = {pn, NULL, 0, 0, 0, 0};
            if (VEC_PUSH(&fx->groups, g)) return LP_NOMEM;
            iGroup = (int)fx->groups.n;
        }
        /* fall through */
    case PN_GROUP:
    case PN_OR:
    case PN_MAYBE:
    case PN_QUORUM:
        for (int i = 0; i < pn->nChild - (pn->kind == PN_AND ? pn->nNeg : 0) && rc == LP_OK; i++) {
            const PlanNode *c = pn->aChild[i];
            int iIn = iGuard;
            /* an AND (a '<<' too), MAYBE or quorum that is a part of an OR,
            ** or a MAYBE's optional part, may fail where pn matches (a word
            ** or phrase, a group of its fields, tells for itself, and so
            ** does an OR of them) */
            int bMayFail = pn->kind == PN_OR || (pn->kind == PN_MAYBE && i > 0);
            if (bMayFail && (c->kind == PN_AND || c->kind == PN_MAYBE || c->kind == PN_QUORUM)) {
                FGuard g = {c, iGuard, NULL, 0};
                if (VEC_PUSH(&fx->guards, g)) return LP_NOMEM;
                iIn = (int)fx->guards.n;
            }
            rc = fkeys_collect(q, fx, c, iGroup, iIn);
        }
        return rc;
    case PN_ALL:
    case PN_NONE:
        break;
    }
    return LP_OK;
}

static uint32_t fkh_doc(const void *ctx, int i) {
    return ((const FtsFactors *)ctx)->keys.a[i].c->doc;
}

/* Puts key i in the heap, unless its cursor is exhausted. */
static void fkh_push(FtsFactors *fx, int c) {
    dh_push(fx->aHeap, &fx->nHeap, fkh_doc, fx, c);
}

static int fkh_pop(FtsFactors *fx) {
    return dh_pop(fx->aHeap, &fx->nHeap, fkh_doc, fx);
}

/* Moves the keys' cursors to doc (documents come in increasing order)
** and takes those there out of the heap into aAt, sorted. */
static void fkh_gather(FtsFactors *fx, uint32_t doc) {
    if (!fx->bHeap) {
        fx->nAt = 0;
        for (size_t i = 0; i < fx->keys.n; i++) {
            FtsPostings *c = fx->keys.a[i].c;
            if (c->doc < doc) c->vt->xAdvance(c, doc);
            if (c->doc == doc) fx->aAt[fx->nAt++] = (int)i;
        }
        return;
    }
    while (fx->nHeap && fx->keys.a[fx->aHeap[0]].c->doc < doc) {
        int i = fkh_pop(fx);
        FtsPostings *c = fx->keys.a[i].c;
        c->vt->xAdvance(c, doc);
        fkh_push(fx, i);
    }
    fx->nAt = 0;
    while (fx->nHeap && fx->keys.a[fx->aHeap[0]].c->doc == doc) sorted_add(fx->aAt, &fx->nAt, fkh_pop(fx));
}

static int fkey_cmp(const void *x, const void *y) {
    const FKey *a = x, *b = y;
    return (a->iField > b->iField) - (a->iField < b->iField);
}

/* max_lcs: the largest sum(lcs * w) over the fields can be, the query's
** keywords times the sum of every field's weight (as Manticore has it; a
** matchany weight needs it to put a whole-query run in one field above
** any mix of shorter runs in all). */
static double max_lcs(const FtsQuery *q) {
    double w = 0;
    for (int f = 0; f < q->src->nFields; f++) w += q->rank.aFieldWeight[f];
    return w * q->fx->nQWords;
}

/* Does the plan under pn hold a MAYBE? */
static int plan_has_maybe(const PlanNode *pn) {
    if (!pn) return 0;
    if (pn->kind == PN_MAYBE) return 1;
    for (int i = 0; i < pn->nChild; i++) {
        if (plan_has_maybe(pn->aChild[i])) return 1;
    }
    return 0;
}

/* Readies q's factors for a run over increasing documents: the keywords
** (once per query) and a fresh cursor for each. */
static int factors_open(FtsQuery *q) {
    FtsFactors *fx = q->fx;
    if (!fx) {
        if (!(fx = arena_zalloc(q->a, sizeof(*fx)))) goto nomem;
        q->fx = fx;
        fx->aMergedDone = arena_zalloc(q->a, (size_t)q->nMerged + 1);
        if (!fx->aMergedDone) goto nomem;
        int rc = fkeys_collect(q, fx, q->root, 0, 0);
        for (int i = 0; i < q->nMerged && rc == LP_OK; i++) {
            if (!fx->aMergedDone[i]) fx->aMergedDone[i] = 1, rc = fkeys_collect(q, fx, q->apMerged[i], 0, 0);
        }
        hmap_free(&fx->byKey);
        if (rc) goto nomem;
        size_t nf = q->src->nFields > 0 ? (size_t)q->src->nFields : 1;
        if (!(fx->aSeen = arena_zalloc(q->a, q->nQPos ? q->nQPos : 1)) ||
            !(fx->aSeenDoc = arena_zalloc(q->a, q->nQPos ? q->nQPos : 1)) ||
            !(fx->aFF = arena_alloc(q->a, sizeof(FtsFieldFactors) * nf)) ||
            !(fx->aFwAlt = arena_alloc(q->a, sizeof(double) * nf)) ||
            !(fx->aNormBAlt = arena_alloc(q->a, sizeof(double) * nf)) ||
            !(fx->aNormAlt = arena_zalloc(q->a, sizeof(double) * nf)) ||
            !(fx->aNormDocAlt = arena_alloc(q->a, sizeof(uint32_t) * nf))) {
            goto nomem;
        }
        if (fx->keys.n > 1) qsort(fx->keys.a, fx->keys.n, sizeof(FKey), fkey_cmp);
        fx->bHeap = fx->keys.n >= OR_HEAP_MIN;
        fx->bScoreFirst = plan_has_maybe(q->root);
        for (int i = 0; i < q->nMerged; i++) fx->bScoreFirst |= plan_has_maybe(q->apMerged[i]);
        fx->aHeap = arena_alloc(q->a, sizeof(int) * (fx->keys.n + 1));
        fx->aAt = arena_alloc(q->a, sizeof(int) * (fx->keys.n + 1));
        if (!fx->aHeap || !fx->aAt) goto nomem;
        for (size_t i = 0; i < fx->keys.n; i++) {
            /* each key's query positions ascending: its hits make a sorted run */
            uint32_t *aQ = fx->keys.a[i].aQ;
            for (int j = 1; j < fx->keys.a[i].nQ; j++) {
                uint32_t v = aQ[j];
                int m = j;
                while (m > 0 && aQ[m - 1] > v) aQ[m] = aQ[m - 1], m--;
                aQ[m] = v;
            }
        }
        /* the query's words, those the index lacks included */
        size_t nq = q->nQPos ? q->nQPos : 1;
        if (!(fx->aPrevKw = arena_alloc(q->a, sizeof(uint32_t) * nq)) ||
            !(fx->aKw = arena_alloc(q->a, sizeof(uint32_t) * nq)) ||
            !(fx->aQIdf = arena_zalloc(q->a, sizeof(double) * nq))) {
            goto nomem;
        }
        fx->qMin = UINT32_MAX;
        uint32_t prev = UINT32_MAX;
        for (uint32_t v = 0; v < q->nQPos; v++) {
            fx->aPrevKw[v] = prev;
            if (v >= q->nQWordCap || !q->aQWord[v]) continue;
            fx->aKw[fx->nQWords++] = v;
            if (v < fx->qMin) fx->qMin = v;
            fx->qMax = v;
            prev = v;
        }
        fx->maxLcs = max_lcs(q);
    }
    fx->nHeap = 0;
    fx->pGroupRoot = NULL; /* this run's iterators are found on its first document */
    for (size_t i = 0; i < fx->zones.n; i++) {
        if (!zones_open(q, fx->zones.a[i].pn, &fx->zones.a[i].zs)) return q->rc;
    }
    for (size_t i = 0; i < fx->keys.n; i++) {
        FKey *k = &fx->keys.a[i];
        if (!(k->c = open_cursor(q, k->key, k->nKey, &k->info, 1))) return q->rc;
        k->c->vt->xNext(k->c);
        if (fx->bHeap) fkh_push(fx, (int)i);
    }
    return LP_OK;
nomem:
    return q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
}

/* Merges fx->hits' sorted runs (fx->runs: their starts and the end) pairwise
** until one is left; returns it (fx->hits.a or fx->tmp.a, which has room). A
** document holds few keywords, so few runs: cheaper than sorting. */
static uint64_t *merge_runs(FtsFactors *fx) {
    uint64_t *src = fx->hits.a, *dst = fx->tmp.a;
    size_t *s = fx->runs.a, nRun = fx->runs.n - 1;
    while (nRun > 1) {
        size_t k = 0;
        for (size_t r = 0; r < nRun; r += 2) {
            size_t i = s[r], j = r + 1 < nRun ? s[r + 1] : s[nRun], mid = j, end = s[r + 2 <= nRun ? r + 2 : nRun];
            size_t o = i;
            while (i < mid && j < end) dst[o++] = src[i] <= src[j] ? src[i++] : src[j++];
            while (i < mid) dst[o++] = src[i++];
            while (j < end) dst[o++] = src[j++];
            s[k++] = s[r];
        }
        s[k] = s[nRun];
        nRun = k;
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

static int u64_cmp(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* One side's part of atc: for each occurrence of fx->occ (sorted), from
** the first (bRight 0) or the last, each key's idf times d^-1.75 for d
** the distance to its nearest occurrence before (after) on that side;
** occurrences at one position do not see each other. Each occurrence's
** sum times its own key's idf is added to *pSum. */
static void atc_side(FtsFactors *fx, int bRight, double *pSum) {
    size_t n = fx->occ.n, nk = fx->occIdf.n;
    uint32_t *aNear = fx->near.a;
    for (size_t k = 0; k < nk; k++) aNear[k] = UINT32_MAX;
    for (size_t g = 0; g < n;) {
        /* the group of occurrences at one position */
        size_t e = g;
        uint32_t p = (uint32_t)(fx->occ.a[bRight ? n - 1 - g : g] >> 32);
        while (e < n && (uint32_t)(fx->occ.a[bRight ? n - 1 - e : e] >> 32) == p) e++;
        double s = 0;
        for (size_t k = 0; k < nk; k++) {
            if (aNear[k] == UINT32_MAX) continue;
            double d = bRight ? (double)aNear[k] - p : (double)p - aNear[k];
            s += fx->occIdf.a[k] * pow(d, -1.75);
        }
        for (size_t i = g; i < e; i++) {
            uint32_t k = (uint32_t)fx->occ.a[bRight ? n - 1 - i : i];
            *pSum += fx->occIdf.a[k] * s;
        }
        for (size_t i = g; i < e; i++) aNear[(uint32_t)fx->occ.a[bRight ? n - 1 - i : i]] = p;
        g = e;
    }
}

/* min_gaps from fx->occ (sorted) and fx->occWord: the shortest stretch
** holding an occurrence of every query word the field matches, less
** those words; the window's right end moves on, its left end as far as it
** can while it still holds them all. nQPos: the query's positions. */
static int field_min_gaps(FtsFactors *fx, uint32_t nQPos, uint32_t *pGaps) {
    if (VEC_RESERVE(&fx->wordCnt, nQPos ? nQPos : 1)) return LP_NOMEM;
    uint32_t *aCnt = fx->wordCnt.a, nWord = 0, nIn = 0, best = UINT32_MAX;
    memset(aCnt, 0, sizeof(uint32_t) * (nQPos ? nQPos : 1));
    for (size_t i = 0; i < fx->occ.n; i++) {
        uint32_t w = fx->occWord.a[(uint32_t)fx->occ.a[i]];
        nWord += aCnt[w]++ == 0;
    }
    *pGaps = 0;
    if (nWord < 2) return LP_OK;
    memset(aCnt, 0, sizeof(uint32_t) * nQPos);
    for (size_t l = 0, r = 0; r < fx->occ.n; r++) {
        nIn += aCnt[fx->occWord.a[(uint32_t)fx->occ.a[r]]]++ == 0;
        while (nIn == nWord) {
            uint32_t span = (uint32_t)(fx->occ.a[r] >> 32) - (uint32_t)(fx->occ.a[l] >> 32) + 1;
            if (span < best) best = span;
            nIn -= --aCnt[fx->occWord.a[(uint32_t)fx->occ.a[l++]]] == 0;
        }
    }
    *pGaps = best > nWord ? best - nWord : 0;
    return LP_OK;
}

/* atc and min_gaps from fx->occ, fx->occIdf and fx->occWord (see
** rankexpr.h). */
static int field_occurrences(FtsQuery *q, FtsFieldFactors *out) {
    FtsFactors *fx = q->fx;
    if (VEC_RESERVE(&fx->near, fx->occIdf.n)) return LP_NOMEM;
    qsort(fx->occ.a, fx->occ.n, sizeof(uint64_t), u64_cmp);
    double sum = 0;
    atc_side(fx, 0, &sum);
    atc_side(fx, 1, &sum);
    out->atc = log(1 + sum);
    /* max_window_hits(n): the occurrences, sorted, in a window of the
    ** expression's n positions sliding over them (1 without one, as in
    ** Manticore) */
    uint64_t nWin = q->rank.pExpr && fts_rankexpr_window(q->rank.pExpr) ? fts_rankexpr_window(q->rank.pExpr) : 1;
    for (size_t i = 0, j = 0; j < fx->occ.n; j++) {
        uint64_t pj = fx->occ.a[j] >> 32;
        while ((fx->occ.a[i] >> 32) + nWin <= pj) i++;
        if (j - i + 1 > out->maxWindowHits) out->maxWindowHits = (uint32_t)(j - i + 1);
    }
    return field_min_gaps(fx, q->nQPos, &out->minGaps);
}

/* The iterator of plan node pn in the tree under it (its positive
** parts), or NULL. */
static It *it_find(It *it, const PlanNode *pn) {
    if (it->pn == pn) return it;
    It **a;
    int n;
    switch (it->pn->kind) {
    case PN_GROUP:
        a = ((GroupIt *)it)->a, n = ((GroupIt *)it)->n;
        break;
    case PN_AND:
        a = ((AndIt *)it)->a, n = ((AndIt *)it)->n;
        break;
    case PN_OR:
    case PN_QUORUM:
        a = ((OrIt *)it)->a, n = ((OrIt *)it)->n;
        break;
    case PN_MAYBE: {
        It *r = it_find(((MaybeIt *)it)->req, pn);
        return r ? r : it_find(((MaybeIt *)it)->opt, pn);
    }
    default:
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        It *r = it_find(a[i], pn);
        if (r) return r;
    }
    return NULL;
}

/* Where each ZONESPAN group of the keys holds in doc, root's document:
** its spans pushed onto q->aSpanKey, which the caller resets; and where
** each exact phrase matches. A group or phrase whose iterator is not in
** the tree (a clause planning folded into another) limits nothing. */
static void clauses_at(FtsQuery *q, It *root, uint32_t doc) {
    FtsFactors *fx = q->fx;
    if (fx->pGroupRoot != root) {
        for (size_t i = 0; i < fx->guards.n; i++) fx->guards.a[i].it = it_find(root, fx->guards.a[i].pn);
        for (size_t i = 0; i < fx->groups.n; i++) fx->groups.a[i].it = it_find(root, fx->groups.a[i].pn);
        for (size_t i = 0; i < fx->phrases.n; i++) {
            FPhrase *ph = &fx->phrases.a[i];
            const PlanNode *pn = ph->pn;
            ph->it = it_find(root, pn);
            ph->startDoc = FTS_NO_DOC;
            int bOneWord = pn->nTerm == 1 && !pn->nOp && !pn->nSlop;
            ph->anchorKept = !ph->it && bOneWord ? pn->anchor | (pn->aWordAnchor ? pn->aWordAnchor[0] : 0) : 0;
        }
        fx->pGroupRoot = root;
    }
    /* a guard's parent comes before it; one whose parent fails is not read
    ** (under a clause that missed the document, an iterator may lag) */
    for (size_t i = 0; i < fx->guards.n; i++) {
        FGuard *g = &fx->guards.a[i];
        g->bAt = (!g->iParent || fx->guards.a[g->iParent - 1].bAt) && (!g->it || g->it->doc == doc);
    }
    for (size_t i = 0; i < fx->phrases.n; i++) {
        FPhrase *ph = &fx->phrases.a[i];
        ph->bAt = (ph->it ? ph->it->doc == doc : ph->anchorKept != 0) &&
                  (!ph->iGuard || fx->guards.a[ph->iGuard - 1].bAt);
    }
    for (size_t i = 0; i < fx->groups.n && q->rc == LP_OK; i++) {
        FGroup *g = &fx->groups.a[i];
        g->bAt = g->it && g->it->doc == doc;
        g->bAny = !g->it;
        g->n = 0;
        if (!g->bAt) continue;
        SpanSet st = span_of(q, g->it, doc);
        g->bAny = st.bAny;
        g->off = st.off;
        g->n = st.n;
    }
}

/* Keeps the positions a[0..n) (ascending, each in a span of zs; zs NULL:
** no span) that lie in the spans where group g holds in field f, in
** place; returns how many. */
static uint32_t group_keep(const FtsQuery *q, const FGroup *g, const ZoneSpans *zs, int f, uint32_t *a,
                           uint32_t n) {
    if (g->bAny) return n;
    if (!g->bAt || !zs) return 0;
    const uint64_t *aKey = q->aSpanKey + g->off;
    size_t j = 0;
    uint32_t m = 0, z = 0;
    for (uint32_t k = 0; k < n; k++) {
        while (z < zs->n && zs->a[z].hi < a[k]) z++;
        if (z == zs->n) break;
        if (a[k] < zs->a[z].lo) continue;
        uint64_t key = (uint64_t)(uint32_t)f << 32 | zs->a[z].lo;
        while (j < g->n && aKey[j] < key) j++;
        if (j < g->n && aKey[j] == key) a[m++] = a[k];
    }
    return m;
}

/* Finds where exact phrase ph, which matches doc, matches there (once per
** document). LP_OK or LP_NOMEM (q->rc set). */
static int phrase_starts(FtsQuery *q, FPhrase *ph, uint32_t doc) {
    if (ph->startDoc == doc) return LP_OK;
    /* its words' positions are loaded: it matched doc */
    PhraseIt *p = (PhraseIt *)ph->it;
    uint32_t nMax = 0;
    for (int w = 0; w < p->n; w++) nMax = p->anPos[w] > nMax ? p->anPos[w] : nMax;
    if (nMax > ph->nCap) {
        uint32_t *a = arena_alloc(q->a, sizeof(uint32_t) * 2 * (size_t)nMax);
        if (!a) return q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
        ph->aStart = a;
        ph->nCap = 2 * nMax;
    }
    ph->nStart = exact_starts(p, 0, p->n, ph->aStart);
    ph->startDoc = doc;
    return LP_OK;
}

/* Does exact phrase ph, at the scored document, hold key k's word at
** position p: is there a match that starts at p less the word's offset in
** the phrase (one of k's query positions that is ph's)? */
static int phrase_holds(const FPhrase *ph, const FKey *k, uint32_t p) {
    const PlanNode *pn = ph->pn;
    for (int j = 0; j < k->nQ; j++) {
        int w = 0;
        while (w < pn->nTerm && pn->aGQPos[w] != k->aQ[j]) w++;
        if (w == pn->nTerm) continue; /* a place in another clause */
        uint32_t off = pn->aQPos[w] - pn->aQPos[0], lo = 0;
        if (p >= off && has_pos_from(ph->aStart, ph->nStart, p - off, &lo)) return 1;
    }
    return 0;
}

/* Keeps the positions a[0..n) (ascending) of key k, a word of phrases or
** chains only, that count, in place; returns how many. One counts where
** one of them matches (the scored document's field): a proximity phrase
** or chain, anywhere in the field; an exact phrase, where a match holds
** it. Sphinx's operators likewise pass on only the occurrences they
** matched (a field without the phrase counts none of its words). */
/* Does anchored word ph (FPhrase.anchorKept), at the scored document doc,
** hold at position p: first in its field (as many stop words on as the
** query put before it), or last (less the positions it spans past its
** own)? */
static int kept_holds(const FtsQuery *q, const FPhrase *ph, uint32_t doc, uint32_t p) {
    const PlanNode *pn = ph->pn;
    if ((ph->anchorKept & FTS_ANCHOR_START) && p != (pn->anchor & FTS_ANCHOR_START ? pn->aQPos[0] : 0)) return 0;
    if (ph->anchorKept & FTS_ANCHOR_END) {
        uint32_t dl = q->src->vt->xDocLen(q->src, pn->iField, doc);
        uint32_t tail = pn->anchor & FTS_ANCHOR_END ? pn->nEndTail : pn->aWordTail ? pn->aWordTail[0] : 0;
        if (dl <= tail || p != dl - 1 - tail) return 0;
    }
    return 1;
}

static uint32_t phrases_keep(FtsQuery *q, const FKey *k, uint32_t doc, uint32_t *a, uint32_t n) {
    FtsFactors *fx = q->fx;
    int bExact = 0;
    for (int j = 0; j < k->nPhrase; j++) {
        const FPhrase *ph = &fx->phrases.a[k->aPhrase[j]];
        if ((!ph->it && !ph->anchorKept) || (ph->bAt && !ph->bExact)) return n;
        bExact |= ph->bAt;
    }
    if (!bExact) return 0;
    for (int j = 0; j < k->nPhrase; j++) {
        FPhrase *ph = &fx->phrases.a[k->aPhrase[j]];
        if (ph->bAt && ph->it && phrase_starts(q, ph, doc) != LP_OK) return 0; /* q->rc: the query fails */
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        int bKeep = 0;
        for (int j = 0; j < k->nPhrase && !bKeep; j++) {
            const FPhrase *ph = &fx->phrases.a[k->aPhrase[j]];
            bKeep = ph->bAt && (ph->it ? phrase_holds(ph, k, a[i]) : kept_holds(q, ph, doc, a[i]));
        }
        if (bKeep) a[m++] = a[i];
    }
    return m;
}

/* What field_factors computes beyond what the built-in rankers read (lcs,
** hit_count, word_count, min_hit_pos, exact_hit and the idf sums). */
#define FF_EXPR 1 /* ranker=expr's other factors, doc_word_count among them */
#define FF_OCC 2  /* atc and min_gaps (FF_EXPR too) */

/* Key k's n occurrences that count in a field, added to its hit count
** and idf factors. */
static void key_counts(FtsFieldFactors *out, const FKey *k, uint32_t n) {
    out->hitCount += n;
    out->sumIdf += k->idf;
    out->tfIdf += n * k->idf;
    if (out->maxIdf == 0 || k->idf < out->minIdf) out->minIdf = k->idf;
    if (k->idf > out->maxIdf) out->maxIdf = k->idf;
}

/* The most query positions one key of a plain field may stand at. */
#define FF_PLAIN_MAXQ 16

/* field_factors for a built-in ranker over a plain field: no limit on
** which occurrences of its keys count (field position, zone, ZONESPAN
** group or phrase), each key at FF_PLAIN_MAXQ query positions or fewer.
** Then no position holds two keys (a key is a term), so the hits are read
** in order off a bitmap of the keys' positions, each with its key: no
** merge, and a run continues from one position's few. A field where one
** key at one query position occurs needs no positions at all, unless
** sph04 reads min_hit_pos and exact_hit. Returns -1 (the field is not
** plain, or two keys share a position after all: *pAt as it was, and the
** keys' positions kept for field_factors in prePos), LP_OK, or an error
** (q->rc). The same factors as
** field_factors (test_fts_search holds both to its reference). */
static int field_factors_plain(FtsQuery *q, int f, uint32_t doc, int *pAt, FtsFieldFactors *out) {
    FtsFactors *fx = q->fx;
    int end = *pAt;
    for (; end < fx->nAt && fx->keys.a[fx->aAt[end]].iField == f; end++) {
        const FKey *k = &fx->keys.a[fx->aAt[end]];
        if (k->nQ > FF_PLAIN_MAXQ || k->nPosLimit || k->iZone || k->iGroup || !k->bFreeAt) {
            return -1;
        }
    }
    memset(out, 0, sizeof(*out));
    int iFirst = *pAt;
    *pAt = end;
    for (int i = iFirst; i < end; i++) {
        const FKey *k = &fx->keys.a[fx->aAt[i]];
        uint32_t n = k->c->tf;
        key_counts(out, k, n);
        /* a word the query repeats counts once (its first position) */
        for (int j = 0; j < k->nQ; j++) {
            uint32_t w = qword_of(q, k->aQ[j]);
            if (!fx->aSeen[w]) fx->aSeen[w] = 1, out->wordCount++;
        }
    }
    for (int i = iFirst; i < end; i++) {
        const FKey *k = &fx->keys.a[fx->aAt[i]];
        for (int j = 0; j < k->nQ; j++) fx->aSeen[qword_of(q, k->aQ[j])] = 0;
    }
    if (end - iFirst == 1 && fx->keys.a[fx->aAt[iFirst]].nQ == 1 && q->rank.ranker != FTS_RANK_SPH04) {
        out->lcs = out->hitCount > 0;
        return LP_OK;
    }
    uint32_t dl = q->src->vt->xDocLen(q->src, f, doc);
    uint32_t nWord = 0; /* bit words that may be set */
    int bClash = 0;     /* two keys at one position: not plain after all */
    out->minHitPos = UINT32_MAX;
    fx->prePos.n = fx->preOff.n = 0;
    for (int i = iFirst; i < end; i++) {
        const FKey *k = &fx->keys.a[fx->aAt[i]];
        FtsPostings *c = k->c;
        uint32_t n = c->tf;
        if (VEC_RESERVE(&fx->prePos, fx->prePos.n + n) || VEC_PUSH(&fx->preOff, fx->prePos.n)) goto nomem;
        uint32_t *aPos = fx->prePos.a + fx->prePos.n;
        if (c->vt->xPositions(c, aPos, &q->errIter) != LP_OK) return q->rc = q->errIter.code;
        fx->prePos.n += n;
        if (n == 0 || bClash) continue;
        uint32_t last = aPos[n - 1];
        size_t need = (size_t)last / 64 + 1;
        if (need > fx->bits.n) {
            if (VEC_RESERVE(&fx->bits, need)) goto nomem;
            memset(fx->bits.a + fx->bits.n, 0, (need - fx->bits.n) * sizeof(uint64_t));
            fx->bits.n = need;
        }
        if (VEC_RESERVE(&fx->slotK, (size_t)last + 1)) goto nomem;
        if (need > nWord) nWord = (uint32_t)need;
        if (aPos[0] + 1 < out->minHitPos) out->minHitPos = aPos[0] + 1;
        for (uint32_t p = 0; p < n && !bClash; p++) {
            uint32_t pos = aPos[p];
            uint64_t bit = (uint64_t)1 << (pos & 63);
            bClash = (fx->bits.a[pos >> 6] & bit) != 0;
            fx->bits.a[pos >> 6] |= bit;
            fx->slotK.a[pos] = fx->aAt[i];
        }
    }
    if (bClash) {
        /* (an exact form shares its word's position, a blend its parts')
        ** field_factors takes over with the positions read */
        memset(fx->bits.a, 0, nWord * sizeof(uint64_t));
        fx->preFirst = iFirst;
        fx->nPre = end - iFirst;
        *pAt = iFirst;
        return -1;
    }
    if (out->minHitPos == UINT32_MAX) out->minHitPos = 0;
    /* runs, as field_factors finds them: a hit continues the run at the
    ** hit before it whose query position is as far behind as its document
    ** position (Sphinx's lcs: a run may skip what the query skips) */
    FRun aRun[2][FF_PLAIN_MAXQ];
    int nPrev = 0, iCur = 0;
    uint32_t prevPos = 0;
    for (uint32_t wi = 0; wi < nWord; wi++) {
        uint64_t b = fx->bits.a[wi];
        fx->bits.a[wi] = 0;
        while (b) {
            uint32_t p = wi * 64 + (uint32_t)__builtin_ctzll(b);
            b &= b - 1;
            const FKey *k = &fx->keys.a[fx->slotK.a[p]];
            const FRun *prev = aRun[!iCur];
            FRun *cur = aRun[iCur];
            uint32_t d = p - prevPos;
            for (int jj = 0; jj < k->nQ; jj++) {
                uint32_t j = k->aQ[jj];
                FRun r = {j, 1, p, j, 0, 0};
                for (int m = 0; j >= d && m < nPrev; m++) {
                    if (prev[m].qpos == j - d) {
                        r.len = prev[m].len + 1;
                        r.pos0 = prev[m].pos0;
                        r.q0 = prev[m].q0;
                        break;
                    }
                }
                if (r.len > out->lcs) {
                    out->lcs = r.len;
                    out->minBestSpanPos = r.pos0 + 1;
                }
                if (r.len == fx->nQWords && r.pos0 == 0 && r.q0 == fx->qMin && j == fx->qMax && p + 1 == dl) {
                    out->exactHit = 1;
                }
                cur[jj] = r;
            }
            nPrev = k->nQ;
            iCur = !iCur;
            prevPos = p;
        }
    }
    return LP_OK;
nomem:
    return q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
}

/* Field f's factors in doc from the keys aAt[*pAt ..] of field f, whose
** cursors are at doc (*pAt moves past them); more with the FF_* bits of
** mode. LP_OK or an error (q->rc). */
static int field_factors(FtsQuery *q, int f, uint32_t doc, int *pAt, FtsFieldFactors *out, int mode) {
    FtsFactors *fx = q->fx;
    const int bExpr = (mode & FF_EXPR) != 0;
    fx->nPre = 0;
    if (mode == 0 && !fx->aWordTf) {
        int rc = field_factors_plain(q, f, doc, pAt, out);
        if (rc != -1) return rc;
    }
    memset(out, 0, sizeof(*out));
    fx->hits.n = 0;
    fx->runs.n = 0;
    fx->occ.n = 0;
    fx->occIdf.n = 0;
    fx->occWord.n = 0;
    for (; *pAt < fx->nAt && fx->keys.a[fx->aAt[*pAt]].iField == f; (*pAt)++) {
        FKey *k = &fx->keys.a[fx->aAt[*pAt]];
        FtsPostings *c = k->c;
        if (VEC_RESERVE(&fx->pos, c->tf)) goto nomem;
        int iPre = *pAt - fx->preFirst;
        if (fx->nPre && iPre >= 0 && iPre < fx->nPre) {
            memcpy(fx->pos.a, fx->prePos.a + fx->preOff.a[iPre], sizeof(uint32_t) * c->tf);
        } else if (c->vt->xPositions(c, fx->pos.a, &q->errIter) != LP_OK) {
            return q->rc = q->errIter.code;
        }
        uint32_t n = c->tf;
        while (k->nPosLimit && n > 0 && fx->pos.a[n - 1] >= k->nPosLimit) n--;
        ZoneSpans *zs = k->iZone ? &fx->zones.a[k->iZone - 1].zs : NULL;
        if (zs) {
            if (zones_load(q, zs, doc) != LP_OK) return q->rc;
            n = zones_keep(zs, fx->pos.a, n);
        }
        if (k->iGroup) n = group_keep(q, &fx->groups.a[k->iGroup - 1], zs, f, fx->pos.a, n);
        if (!k->bFreeAt && (n = k->nPhrase ? phrases_keep(q, k, doc, fx->pos.a, n) : 0) == 0 && q->rc) {
            return q->rc;
        }
        if (n == 0) continue;
        key_counts(out, k, n);
        if (VEC_RESERVE(&fx->hits, fx->hits.n + (size_t)n * (size_t)k->nQ) ||
            VEC_PUSH(&fx->runs, fx->hits.n)) {
            goto nomem;
        }
        for (int j = 0; j < k->nQ && bExpr; j++) {
            if (k->idf > fx->aQIdf[k->aQ[j]]) fx->aQIdf[k->aQ[j]] = k->idf;
        }
        for (int j = 0; j < k->nQ && fx->aWordTf; j++) {
            fx->aWordTf[k->aQ[j]] += n;
            if (k->idf > fx->aWordIdf[k->aQ[j]]) fx->aWordIdf[k->aQ[j]] = k->idf;
        }
        if (mode & FF_OCC) {
            /* the key's occurrences, once each whatever its query positions */
            uint64_t iKey = fx->occIdf.n;
            if (VEC_PUSH(&fx->occIdf, k->idf) || VEC_PUSH(&fx->occWord, k->aQ[0]) ||
                VEC_RESERVE(&fx->occ, fx->occ.n + n)) {
                goto nomem;
            }
            for (uint32_t p = 0; p < n; p++) fx->occ.a[fx->occ.n++] = (uint64_t)fx->pos.a[p] << 32 | iKey;
        }
        /* a run: positions ascending, and at each the query positions (aQ
        ** is sorted) */
        for (uint32_t p = 0; p < n; p++) {
            for (int j = 0; j < k->nQ; j++) {
                fx->hits.a[fx->hits.n++] = (uint64_t)fx->pos.a[p] << 32 | k->aQ[j];
            }
        }
    }
    if (fx->hits.n == 0) return LP_OK;
    size_t n = fx->hits.n;
    if (VEC_PUSH(&fx->runs, n) || VEC_RESERVE(&fx->tmp, n)) goto nomem;
    const uint64_t *a = merge_runs(fx);
    out->minHitPos = (uint32_t)(a[0] >> 32) + 1;
    uint32_t dl = q->src->vt->xDocLen(q->src, f, doc);
    uint32_t prevPos = 0;
    uint32_t nOrder = 0;            /* keywords met in query order so far (exact_order) */
    uint32_t posOrder = UINT32_MAX; /* the document position that met the last one */
    fx->prev.n = 0;
    for (size_t i = 0; i < n;) {
        uint32_t p = (uint32_t)(a[i] >> 32);
        fx->cur.n = 0;
        for (; i < n && (uint32_t)(a[i] >> 32) == p; i++) {
            uint32_t j = (uint32_t)a[i];
            /* a word the query repeats counts once (its first position) */
            uint32_t w = qword_of(q, j);
            if (!fx->aSeen[w]) fx->aSeen[w] = 1, out->wordCount++;
            if (bExpr) {
                if (!fx->aSeenDoc[w]) {
                    fx->aSeenDoc[w] = 1;
                    if (VEC_PUSH(&fx->seenDoc, w)) goto nomem;
                }
                /* exact_order: each keyword in turn, each from a later
                ** occurrence than the one before it (the earliest such
                ** choice finds an order whenever there is one) */
                if (nOrder < fx->nQWords && j == fx->aKw[nOrder] && p != posOrder) {
                    nOrder++;
                    posOrder = p;
                }
            }
            /* continues the run at the previous position whose query
            ** position is as far behind as its document position; the
            ** contiguous run too when that is the keyword just before */
            FRun r = {j, 1, p, j, 1, fx->aQIdf[j]};
            uint32_t d = p - prevPos;
            for (size_t m = 0; j >= d && m < fx->prev.n; m++) {
                if (fx->prev.a[m].qpos == j - d) {
                    r.len = fx->prev.a[m].len + 1;
                    r.pos0 = fx->prev.a[m].pos0;
                    r.q0 = fx->prev.a[m].q0;
                    if (bExpr && j - d == fx->aPrevKw[j]) {
                        r.lenC = fx->prev.a[m].lenC + 1;
                        r.idfC = fx->prev.a[m].idfC + fx->aQIdf[j];
                    }
                    break;
                }
            }
            if (r.len > out->lcs) {
                out->lcs = r.len;
                out->minBestSpanPos = r.pos0 + 1;
            }
            if (r.lenC > out->lccs) out->lccs = r.lenC;
            if (r.idfC > out->wlccs) out->wlccs = r.idfC;
            if (r.len == fx->nQWords && r.pos0 == 0 && r.q0 == fx->qMin && j == fx->qMax &&
                p + 1 == dl) {
                out->exactHit = 1;
            }
            if (VEC_PUSH(&fx->cur, r)) goto nomem;
        }
        FRunVec t = fx->prev;
        fx->prev = fx->cur;
        fx->cur = t;
        prevPos = p;
    }
    out->exactOrder = fx->nQWords > 0 && nOrder == fx->nQWords;
    if ((mode & FF_OCC) && field_occurrences(q, out) != LP_OK) goto nomem;
    for (size_t i = 0; i < n; i++) fx->aSeen[qword_of(q, (uint32_t)a[i])] = 0;
    for (size_t i = 0; i < n && bExpr; i++) fx->aQIdf[(uint32_t)a[i]] = 0;
    return LP_OK;
nomem:
    return q->rc = lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
}


/* The BM25F weight W squeezed into [0, 999), in the same order. */
static double bm25_part(double W) {
    return W > 0 ? 999 * W / (W + 1) : 0;
}

/* bm25a()/bm25f(): the query's clauses at root's document scored again
** with k1, b and the field weights aW (f < nW; the others 1), by per-field
** BM25 or BM25F (bF). Every parameter the scoring reads is swapped in and
** back: the ranker, k1, the length normalisation and its per-document
** cache, and the field weights (aFw). */
typedef struct Rescore {
    FtsQuery *q;
    It *root;
} Rescore;

static double rescore(void *pCtx, int bF, double k1, double b, const double *aW, int nW) {
    Rescore *r = pCtx;
    FtsQuery *q = r->q;
    FtsFactors *fx = q->fx;
    int nf = q->src->nFields;
    for (int f = 0; f < nf; f++) {
        fx->aFwAlt[f] = f < nW ? aW[f] : 1;
        fx->aNormBAlt[f] = b / (q->aAvgLen[f] > 0 ? q->aAvgLen[f] : 1);
        fx->aNormDocAlt[f] = FTS_NO_DOC;
    }
    FtsRanker r0 = q->rank.ranker;
    double k10 = q->rank.k1, a0 = q->normA, *pB0 = q->aNormB, *pN0 = q->aNorm;
    uint32_t *pD0 = q->aNormDoc;
    q->rank.ranker = bF ? FTS_RANK_BM25F : FTS_RANK_BM25;
    q->rank.k1 = k1;
    q->normA = 1 - b;
    q->aNormB = fx->aNormBAlt;
    q->aNorm = fx->aNormAlt;
    q->aNormDoc = fx->aNormDocAlt;
    q->aFw = fx->aFwAlt;
    double w = r->root->vt->score(r->root);
    q->rank.ranker = r0;
    q->rank.k1 = k10;
    q->normA = a0;
    q->aNormB = pB0;
    q->aNorm = pN0;
    q->aNormDoc = pD0;
    q->aFw = q->rank.aFieldWeight;
    return w;
}

/* The weight of root's document by a proximity ranker or ranker=expr,
** from W, its BM25F weight:
**   proximity_bm25  1000 * sum(lcs * w) + bm25
**   sph04           1000 * sum((4 * lcs + 2 * (min_hit_pos == 1) + exact_hit) * w) + bm25
**   proximity       sum(lcs * w)
**   wordcount       sum(hit_count * w)
**   matchany        sum((word_count + (lcs - 1) * max_lcs) * w) over matched fields
**   fieldmask       the fields matched, bit f for field f < 32
** w a field's weight (OPTION field_weights), max_lcs the largest sum(lcs *
** w) can be (max_lcs()), bm25 = 999 * W / (W + 1): BM25F squeezed under
** 1000, in the same order, so the proximity part decides first
** (Manticore's bm25 is likewise a 0..999 integer). *pnDocWords (may be
** NULL) receives the distinct keywords matched in some field. aOut (may
** be NULL) receives each field's factors. LP_OK or an error (q->rc). */
static int factor_weight_at(FtsQuery *q, It *root, double W, double *pWeight, FtsFieldFactors *aOut,
                            uint32_t *pnDocWords) {
    uint32_t doc = root->doc;
    FtsFactors *fx = q->fx;
    FtsRanker r = q->rank.ranker;
    double sum = 0, mask = 0, maxLcs = fx->maxLcs;
    fkh_gather(fx, doc);
    for (int i = 0; i < fx->nAt; i++) {
        FKey *k = &fx->keys.a[fx->aAt[i]];
        int bFree = k->bPlain;
        for (int j = 0; j < k->nGuard && !bFree; j++) bFree = fx->guards.a[k->aGuard[j]].bAt;
        k->bFreeAt = bFree;
    }
    int iAt = 0;
    /* ranker=expr reads every field's factors at the end */
    FtsFieldFactors *aKeep = aOut ? aOut : r == FTS_RANK_EXPR ? fx->aFF : NULL;
    /* the built-in rankers' factors only, unless an expression or
    ** EXPLAIN_SCORE() reads the rest; atc and min_gaps only when read */
    int mode = aOut ? FF_EXPR | FF_OCC
               : r != FTS_RANK_EXPR ? 0
               : fts_rankexpr_uses_occurrences(q->rank.pExpr) ? FF_EXPR | FF_OCC : FF_EXPR;
    for (int f = 0; f < q->src->nFields; f++) {
        FtsFieldFactors ff;
        memset(&ff, 0, sizeof(ff));
        int rc = iAt < fx->nAt && fx->keys.a[fx->aAt[iAt]].iField == f ? field_factors(q, f, doc, &iAt, &ff, mode)
                                                                       : LP_OK;
        if (rc != LP_OK) return q->rc;
        if (aKeep) aKeep[f] = ff;
        if (ff.hitCount == 0) continue;
        double w = q->rank.aFieldWeight[f];
        switch (r) {
        case FTS_RANK_PROXIMITY_BM25:
        case FTS_RANK_PROXIMITY:
            sum += ff.lcs * w;
            break;
        case FTS_RANK_SPH04:
            sum += (4.0 * ff.lcs + 2.0 * (ff.minHitPos == 1) + ff.exactHit) * w;
            break;
        case FTS_RANK_WORDCOUNT:
            sum += ff.hitCount * w;
            break;
        case FTS_RANK_MATCHANY:
            sum += (ff.wordCount + ((double)ff.lcs - 1) * maxLcs) * w;
            break;
        case FTS_RANK_FIELDMASK:
            if (f < 32) mask += (double)(1u << f);
            break;
        default:
            break;
        }
    }
    /* back into the heap: moved on when a later document is scored */
    for (int k = 0; k < fx->nAt && fx->bHeap; k++) fkh_push(fx, fx->aAt[k]);
    fx->nAt = 0;
    uint32_t nDocWords = (uint32_t)fx->seenDoc.n;
    for (size_t i = 0; i < fx->seenDoc.n; i++) fx->aSeenDoc[fx->seenDoc.a[i]] = 0;
    fx->seenDoc.n = 0;
    if (pnDocWords) *pnDocWords = nDocWords;
    if (r == FTS_RANK_EXPR) {
        Rescore rs = {q, root};
        FtsDocFactors d = {aKeep, q->rank.aFieldWeight, q->src->nFields, W, maxLcs, nDocWords,
                           q->nQWordUniq, rescore, &rs};
        *pWeight = fts_rankexpr_eval(q->rank.pExpr, &d);
        return LP_OK;
    }
    double bm25 = bm25_part(W);
    *pWeight = r == FTS_RANK_FIELDMASK                                 ? mask
               : r == FTS_RANK_PROXIMITY_BM25 || r == FTS_RANK_SPH04 ? 1000 * sum + bm25
                                                                       : sum;
    return LP_OK;
}

/* factor_weight_at, with the ZONESPAN groups' spans found first (kept in
** q->aSpanKey while it runs). */
static int factor_weight(FtsQuery *q, It *root, double W, double *pWeight, FtsFieldFactors *aOut,
                         uint32_t *pnDocWords) {
    size_t mark = q->nSpanKey;
    if (q->fx->groups.n || q->fx->phrases.n || q->fx->guards.n) clauses_at(q, root, root->doc);
    int rc = q->rc != LP_OK ? q->rc : factor_weight_at(q, root, W, pWeight, aOut, pnDocWords);
    q->nSpanKey = mark;
    return rc;
}

/* A matched document's weight: the tree's, or a proximity ranker's. Top-k
** passes its heap's threshold theta: a weight that cannot pass it need not
** be exact (it is returned below theta). Unless a MAYBE needs the scoring
** to settle (bScoreFirst), the rankers that do not read BM25F (proximity,
** wordcount, matchany, fieldmask) never score the tree, and proximity_bm25
** and sph04 score it only when the proximity part plus the most bm25 can
** add (under 999) passes theta. */
static double doc_weight(FtsQuery *q, It *root, double theta) {
    FtsRanker r = q->rank.ranker;
    if (!is_factor_ranker(r)) return root->vt->score(root);
    double v = 0;
    if (r == FTS_RANK_EXPR || q->fx->bScoreFirst) {
        double w = root->vt->score(root);
        return factor_weight(q, root, w, &v, NULL, NULL) == LP_OK ? v : 0;
    }
    /* bm25_part(0) is 0: v is the part before bm25 */
    if (factor_weight(q, root, 0, &v, NULL, NULL) != LP_OK) return 0;
    if (r != FTS_RANK_PROXIMITY_BM25 && r != FTS_RANK_SPH04) return v;
    if (v + 999 < theta) return v;
    return v + bm25_part(root->vt->score(root));
}

/* ------------------------------------------------------------------ */
/* Top-k                                                               */

typedef struct Heap {
    FtsHit *a;
    int n, k;
} Heap;

/* Is x worse than y (lower score; on a tie, the higher ordinal)? */
static inline int worse(const FtsHit *x, const FtsHit *y) {
    return x->score < y->score || (x->score == y->score && x->tie > y->tie);
}

void fts_query_set_tie_key(FtsQuery *q, FtsTieKeyFn xKey, void *ctx) {
    q->xTie = xKey;
    q->pTieCtx = ctx;
}

void fts_query_set_deadline(FtsQuery *q, int64_t nsDeadline) {
    q->nsDeadline = nsDeadline;
}

void fts_query_set_cutoff(FtsQuery *q, uint64_t nCutoff) {
    q->nCutoff = nCutoff;
}

void fts_query_set_field_names(FtsQuery *q, const char *const *azName, int nName) {
    q->azFieldName = azName;
    q->nFieldName = nName;
}

/* Should the search stop: has it run past its deadline, or accepted its
** cutoff's number of matches? Asked once per candidate, it reads the clock
** every 64th time; once it says stop, it keeps saying it. */
static inline int must_stop(FtsQuery *q) {
    if (q->nCutoff && q->st.nAccepted >= q->nCutoff) {
        q->st.bCutoff = 1;
        return 1;
    }
    if (!q->nsDeadline) return 0;
    if (q->st.bTimedOut) return 1;
    if (++q->nTick & 63) return 0;
    if (lp_now_ns() < q->nsDeadline) return 0;
    q->st.bTimedOut = 1;
    return 1;
}

void fts_query_set_accept_first(FtsQuery *q, int bFirst) {
    q->bAcceptFirst = bFirst;
}

static void heap_push(FtsQuery *q, Heap *h, uint32_t doc, double score) {
    FtsHit e = {doc, score, q->xTie ? q->xTie(q->pTieCtx, doc) : (int64_t)doc};
    if (h->n < h->k) {
        int i = h->n++;
        while (i > 0) {
            int p = (i - 1) / 2;
            if (!worse(&e, &h->a[p])) break;
            h->a[i] = h->a[p];
            i = p;
        }
        h->a[i] = e;
        return;
    }
    if (!worse(&h->a[0], &e)) return;
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, w = i;
        const FtsHit *pw = &e;
        if (l < h->n && worse(&h->a[l], pw)) w = l, pw = &h->a[l];
        if (r < h->n && worse(&h->a[r], pw)) w = r;
        if (w == i) break;
        h->a[i] = h->a[w];
        i = w;
    }
    h->a[i] = e;
}

#define OR_MAX_GROUPS 4096
/* From this many groups on, at least half of them a prefix's or a
** wildcard's terms, an OR runs term at a time (taat_topk), in windows of
** TAAT_WINDOW documents. A long query of words keeps maxscore_topk: its
** common words' small bounds let MaxScore pass over most of their
** documents (taat_topk was 4% slower on CISI's 35 queries of 64 words or
** more), where an expansion's terms are all rare and bound alike. */
#define TAAT_MIN_GROUPS 64
#define TAAT_WINDOW 16384

static double heap_threshold(const Heap *h) {
    return h->n < h->k ? -1.0 : h->a[0].score;
}

static int cmp_hit(const void *x, const void *y) {
    const FtsHit *a = x, *b = y;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return (a->tie > b->tie) - (a->tie < b->tie);
}

/* Below this many elements, an insertion sort: a top 10 or a query's
** handful of clauses sort in a few dozen comparisons, where qsort's set-up
** and indirect calls cost more than the sorting. */
#define SMALL_SORT 24
#define SMALL_SORT_ELEM 64 /* largest element sort_small takes */

/* Sorts a[0..n) of sz-byte elements by cmp, stable. */
static void sort_small(void *a, size_t n, size_t sz, int (*cmp)(const void *, const void *)) {
    if (n >= SMALL_SORT) {
        qsort(a, n, sz, cmp);
        return;
    }
    uint8_t *p = a, tmp[SMALL_SORT_ELEM];
    for (size_t i = 1; i < n; i++) {
        size_t j = i;
        memcpy(tmp, p + i * sz, sz);
        while (j > 0 && cmp(p + (j - 1) * sz, tmp) > 0) {
            memcpy(p + j * sz, p + (j - 1) * sz, sz);
            j--;
        }
        if (j != i) memcpy(p + j * sz, tmp, sz);
    }
}

/* Is pn a group of plain terms (one leaf per field)? MaxScore's unit. */
static int is_term_group(const PlanNode *pn) {
    if (pn->kind != PN_GROUP) return 0;
    for (int i = 0; i < pn->nChild; i++) {
        if (pn->aChild[i]->kind != PN_LEAF) return 0;
    }
    return 1;
}

/* Is pn a phrase or proximity clause alone, one per field it is in? */
static int is_phrase_group(const PlanNode *pn) {
    if (pn->kind != PN_GROUP || pn->nChild == 0) return 0;
    for (int i = 0; i < pn->nChild; i++) {
        if (pn->aChild[i]->kind != PN_PHRASE) return 0;
    }
    return 1;
}

/* Collects the term groups of a pure OR of terms (maxscore's input) into a
** (or just counts them when a is NULL). 0 when the plan is something else,
** with *pzWhy saying what. */
static int collect_or_groups(const PlanNode *pn, const PlanNode **a, int *pn_,
                             const char **pzWhy) {
    if (is_term_group(pn)) {
        if (*pn_ >= OR_MAX_GROUPS) {
            *pzWhy = "more terms than maxscore handles";
            return 0;
        }
        if (a) a[*pn_] = pn;
        (*pn_)++;
        return 1;
    }
    if (pn->kind == PN_OR) {
        for (int i = 0; i < pn->nChild; i++) {
            if (!collect_or_groups(pn->aChild[i], a, pn_, pzWhy)) return 0;
        }
        return 1;
    }
    *pzWhy = pn->kind == PN_GROUP    ? "the query has a positional clause (phrase, proximity, "
                                       "anchor, position limit, zone limit, NEAR or '<<')"
             : pn->kind == PN_AND    ? (pn->bOrder == ORDER_NOTNEAR ? "the query has NOTNEAR over more than words"
                                        : pn->nNeg   ? "the query has NOT"
                                        : pn->bOrder == ORDER_NEAR
                                            ? "the query has NEAR over a proximity phrase, '<<' or MAYBE"
                                        : pn->bOrder ? "the query has '<<' over a group, prefix or quorum"
                                                     : "the query has an AND")
             : pn->kind == PN_MAYBE  ? "the query has MAYBE"
             : pn->kind == PN_QUORUM ? "the query has a quorum"
                                     : "the query matches all or no documents";
    return 0;
}

/* The term groups of a pure OR that a prefix or a wildcard expanded to. */
static int expanded_groups(const PlanNode *pn) {
    if (pn->kind == PN_OR) {
        int n = 0;
        for (int i = 0; i < pn->nChild; i++) n += expanded_groups(pn->aChild[i]);
        return n;
    }
    return pn->qtype == QT_PREFIX || pn->qtype == QT_WILDCARD;
}

const char *fts_query_strategy(const FtsQuery *q, const char **pzWhyNot) {
    const PlanNode *r = q->root;
    *pzWhyNot = NULL;
    if (root_unscored(q)) return "full_scan";
    if (r->kind == PN_NONE) return "empty";
    if (q->rank.ranker == FTS_RANK_NONE) {
        *pzWhyNot = "ranker=none: no scores to prune with";
        return "no_ranking";
    }
    int n = 0;
    if (is_factor_ranker(q->rank.ranker)) {
        *pzWhyNot = "the ranker weighs the keywords' positions in every match";
    } else {
        if (collect_or_groups(r, NULL, &n, pzWhyNot)) {
            return n >= TAAT_MIN_GROUPS && expanded_groups(r) * 2 >= n ? "taat" : "maxscore";
        }
        if (is_phrase_group(r)) return "phrase_topk";
    }
    if (r->kind == PN_AND && r->nNeg == 0 && !r->bOrder) {
        int bTerms = 1;
        for (int i = 0; i < r->nChild; i++) bTerms &= is_term_group(r->aChild[i]);
        if (bTerms) return "and_intersect";
    }
    return "bool_fallback";
}

/* An upper bound of g's score: over its whole lists (bBlock 0), or over the
** blocks that hold the first documents >= target (bBlock 1; *pEnd = the
** last document all those blocks cover). */
static double group_bound(FtsQuery *q, GroupIt *g, int bBlock, uint32_t target, uint32_t *pEnd) {
    double aTf[FTS_MAX_FIELDS], aNorm[FTS_MAX_FIELDS];
    uint32_t end = FTS_NO_DOC;
    for (int i = 0; i < g->n; i++) {
        FtsPostings *c = ((LeafIt *)g->a[i])->c;
        uint32_t mtf = c->maxTf, mlen = c->minLen;
        if (bBlock) {
            uint32_t e = c->vt->xShallow(c, target, &mtf, &mlen);
            if (e < end) end = e;
        }
        aTf[i] = mtf;
        aNorm[i] = mtf ? norm_len(q, g->a[i]->pn->iField, mlen) : 1;
    }
    if (pEnd) *pEnd = end;
    return group_formula(q, g->base.pn, aTf, aNorm);
}

/* MaxScore (Turtle & Flood 1995) over the term groups of a pure OR. The
** groups are ordered by their list bounds; the ones whose bounds add up to
** no more than the current k-th score (theta) are "non-essential": a
** document none of the others holds cannot enter the top k. So documents
** are enumerated from the essential groups only, and each non-essential
** group is consulted (advanced to the document) only while the score so
** far plus the bounds of the groups not yet consulted still beats theta.
** As theta rises, more groups become non-essential; with a query's common
** words (tiny idf) that happens as soon as the heap is full. */
typedef struct MLeaf {
    GroupIt *g;
    double ub;              /* bound over the whole list */
    int iPlan;              /* position in the query, for the final sum */
    double ubBlock;         /* bound over the blocks holding docs up to blockEnd */
    uint32_t blockEnd;
    int bBlock;             /* ubBlock/blockEnd are set */
} MLeaf;

/* Can no document whose score is at most bound enter a heap whose k-th
** score is theta? Documents come in ordinal order, so one that only ties
** theta loses to the earlier one, unless ties are broken by another key. */
static inline int out_of_reach(const FtsQuery *q, double bound, double theta) {
    return q->xTie ? bound < theta : bound <= theta;
}

/* A group's score at the current candidate, by its position in the query. */
typedef struct MHit {
    int iPlan;
    double score;
} MHit;

/* The candidate's weight: its groups' scores summed in query order, so a
** document's weight does not depend on which groups were essential when
** it was met (a sort of the few groups that matched it). */
static double sum_in_query_order(MHit *a, int n) {
    for (int i = 1; i < n; i++) {
        MHit x = a[i];
        int j = i - 1;
        while (j >= 0 && a[j].iPlan > x.iPlan) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = x;
    }
    double w = 0;
    for (int i = 0; i < n; i++) w += a[i].score;
    return w;
}

/* The smallest current document of the essential groups L[e..n). */
static uint32_t essential_min(const MLeaf *L, int e, int n) {
    uint32_t d = FTS_NO_DOC;
    for (int i = e; i < n; i++) {
        if (L[i].g->base.doc < d) d = L[i].g->base.doc;
    }
    return d;
}

static int cmp_mleaf(const void *x, const void *y) {
    const MLeaf *a = x, *b = y;
    if (a->ub != b->ub) return a->ub < b->ub ? -1 : 1;
    return a->iPlan - b->iPlan;
}

static int maxscore_topk(FtsQuery *q, Heap *h, FtsAcceptFn xAccept, void *ctx) {
    int n = 0;
    const char *zWhy;
    collect_or_groups(q->root, NULL, &n, &zWhy);
    size_t nAlloc = (size_t)(n ? n : 1);
    const PlanNode **aPn = arena_alloc(q->a, sizeof(PlanNode *) * nAlloc);
    MLeaf *L = arena_alloc(q->a, sizeof(MLeaf) * nAlloc);
    double *aCum = arena_alloc(q->a, sizeof(double) * nAlloc);
    MHit *aHit = arena_alloc(q->a, sizeof(MHit) * nAlloc);
    if (!aPn || !L || !aCum || !aHit) return lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
    n = 0;
    collect_or_groups(q->root, aPn, &n, &zWhy);
    for (int i = 0; i < n; i++) {
        GroupIt *g = (GroupIt *)instantiate(q, aPn[i]);
        if (!g) return q->rc;
        L[i] = (MLeaf){g, group_bound(q, g, 0, 0, NULL), i, 0, 0, 0};
        group_next(&g->base);
    }
    _Static_assert(sizeof(MLeaf) <= SMALL_SORT_ELEM, "MLeaf too large for sort_small");
    sort_small(L, (size_t)n, sizeof(MLeaf), cmp_mleaf);
    for (int i = 0; i < n; i++) aCum[i] = (i ? aCum[i - 1] : 0) + L[i].ub;
    double theta = heap_threshold(h);
    int e = 0; /* L[e..n) are essential */
    while (e < n && out_of_reach(q, aCum[e], theta)) e++;
    uint32_t d = essential_min(L, e, n);
    /* With a cheap accept check, asking it first pays when it rejects
    ** most candidates: decided (and revised) from the rates so far. */
    int bCheap = q->bAcceptFirst && xAccept, bFirst = 0;
    while (e < n && d != FTS_NO_DOC && q->rc == LP_OK && !must_stop(q)) {
        if (bCheap) bFirst = q->st.nCandidates >= 32 && 2 * q->st.nAccepted < q->st.nCandidates;
        if (theta >= 0) {
            /* Block-max: bound every document from d to the end of the
            ** essential groups' current blocks; skip them all at once
            ** when even that cannot beat theta. A block's bound is
            ** recomputed only when d passes its end (d never moves back). */
            double ub = e ? aCum[e - 1] : 0;
            uint32_t end = FTS_NO_DOC;
            for (int i = e; i < n; i++) {
                MLeaf *m = &L[i];
                if (!m->bBlock || d > m->blockEnd) {
                    m->ubBlock = group_bound(q, m->g, 1, d, &m->blockEnd);
                    m->bBlock = 1;
                }
                ub += m->ubBlock;
                if (m->blockEnd < end) end = m->blockEnd;
            }
            if (out_of_reach(q, ub, theta)) {
                if (end == FTS_NO_DOC) break;
                for (int i = e; i < n; i++) {
                    if (L[i].g->base.doc <= end) group_advance(&L[i].g->base, end + 1);
                }
                d = essential_min(L, e, n);
                continue;
            }
        }
        int bAsked = 0;
        if (bFirst) {
            q->st.nCandidates++;
            if (!xAccept(ctx, d)) {
                /* rejected before any scoring: the essential groups move on */
                uint32_t dNext = FTS_NO_DOC;
                for (int i = e; i < n; i++) {
                    GroupIt *g = L[i].g;
                    if (g->base.doc == d) group_next(&g->base);
                    if (g->base.doc < dNext) dNext = g->base.doc;
                }
                d = dNext;
                continue;
            }
            q->st.nAccepted++;
            bAsked = 1;
        }
        /* Score d in the essential groups, moving them on, and find the
        ** next candidate in the same pass. */
        double s = 0;
        int nHit = 0;
        uint32_t dNext = FTS_NO_DOC;
        for (int i = e; i < n; i++) {
            GroupIt *g = L[i].g;
            if (g->base.doc == d) {
                double x = group_score(&g->base);
                s += x;
                aHit[nHit++] = (MHit){L[i].iPlan, x};
                group_next(&g->base);
            }
            if (g->base.doc < dNext) dNext = g->base.doc;
        }
        int bDrop = 0;
        for (int i = e - 1; i >= 0; i--) {
            if (out_of_reach(q, s + aCum[i], theta)) {
                bDrop = 1;
                break;
            }
            GroupIt *g = L[i].g;
            if (g->base.doc < d) group_advance(&g->base, d);
            if (g->base.doc == d) {
                double x = group_score(&g->base);
                s += x;
                aHit[nHit++] = (MHit){L[i].iPlan, x};
            }
        }
        if (!bDrop) {
            if (!bAsked) q->st.nCandidates++;
            if (bAsked || !xAccept || xAccept(ctx, d)) {
                if (!bAsked) q->st.nAccepted++;
                heap_push(q, h, d, sum_in_query_order(aHit, nHit));
                theta = heap_threshold(h);
                int e0 = e;
                while (e < n && out_of_reach(q, aCum[e], theta)) e++;
                /* Groups that stopped being essential may hold dNext. */
                if (e != e0) dNext = essential_min(L, e, n);
            }
        }
        d = dNext;
    }
    return q->rc;
}

/* Term at a time, for an OR of many groups (a wildcard's or a prefix's
** hundreds of terms; see TAAT_MIN_GROUPS): maxscore_topk finds each
** candidate by looking at every essential group, so its work grows with
** the groups times the candidates, 17 ms for `*ation`'s 1,000 terms on
** SciFact. Here the documents are taken in windows of TAAT_WINDOW
** ordinals (fewer for a smaller table): each group in query order adds
** its scores at its documents in the window to an array, then the
** window's matches, ascending, are pushed to the heap, so the work is the
** postings read plus a test per group and window. Weights, order and ties
** are maxscore_topk's: a document's weight is its groups' scores summed in
** query order (the first sets the sum, as 0 + x is x) and documents are
** offered in ordinal order. Every match is a candidate and goes through
** the accept callback, so the total and a cutoff are exact (a cutoff
** stops at the N-th accepted match in ordinal order). */

static int taat_topk(FtsQuery *q, Heap *h, FtsAcceptFn xAccept, void *ctx) {
    int n = 0;
    const char *zWhy;
    collect_or_groups(q->root, NULL, &n, &zWhy);
    const PlanNode **aPn = arena_alloc(q->a, sizeof(PlanNode *) * (size_t)(n ? n : 1));
    GroupIt **aG = arena_alloc(q->a, sizeof(GroupIt *) * (size_t)(n ? n : 1));
    /* a table smaller than a window takes a window of its size (a multiple
    ** of 64 ordinals, as aSeen's words) */
    uint64_t nDocs = q->src->nDocs;
    uint32_t nWin = nDocs < TAAT_WINDOW ? (uint32_t)((nDocs + 63) & ~(uint64_t)63) : TAAT_WINDOW;
    if (nWin == 0) nWin = 64;
    double *aAcc = arena_alloc(q->a, sizeof(double) * nWin);
    uint64_t *aSeen = arena_alloc(q->a, sizeof(uint64_t) * (nWin / 64));
    if (!aPn || !aG || !aAcc || !aSeen) return lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
    n = 0;
    collect_or_groups(q->root, aPn, &n, &zWhy);
    uint32_t first = FTS_NO_DOC;
    for (int i = 0; i < n; i++) {
        if (!(aG[i] = (GroupIt *)instantiate(q, aPn[i]))) return q->rc;
        uint32_t d = group_next(&aG[i]->base);
        if (d < first) first = d;
    }
    double theta = heap_threshold(h);
    uint64_t base = first - first % nWin; /* 64 bits: base + nWin never wraps */
    while (first != FTS_NO_DOC && base < q->src->nDocs) {
        uint64_t end = base + nWin;
        uint32_t next = FTS_NO_DOC;
        memset(aSeen, 0, sizeof(uint64_t) * (nWin / 64));
        for (int i = 0; i < n && q->rc == LP_OK; i++) {
            GroupIt *g = aG[i];
            uint32_t d = g->base.doc;
            for (; d < end; d = group_next(&g->base)) {
                uint32_t j = (uint32_t)(d - base);
                double x = group_score(&g->base);
                uint64_t bit = (uint64_t)1 << (j & 63);
                if (aSeen[j >> 6] & bit) {
                    aAcc[j] += x;
                } else {
                    aSeen[j >> 6] |= bit;
                    aAcc[j] = x;
                }
            }
            if (d < next) next = d;
        }
        for (uint32_t w = 0; w < nWin / 64 && q->rc == LP_OK; w++) {
            for (uint64_t m = aSeen[w]; m; m &= m - 1) {
                if (must_stop(q)) return q->rc;
                uint32_t j = w * 64 + (uint32_t)__builtin_ctzll(m);
                uint32_t doc = (uint32_t)base + j;
                q->st.nCandidates++;
                if (xAccept && !xAccept(ctx, doc)) continue;
                q->st.nAccepted++;
                if (!out_of_reach(q, aAcc[j], theta)) {
                    heap_push(q, h, doc, aAcc[j]);
                    theta = heap_threshold(h);
                }
            }
        }
        if (next == FTS_NO_DOC) break;
        base = next - next % nWin; /* the next window holding a document */
    }
    return q->rc;
}

/* maxscore_topk for a query of one term (one group of a leaf per field):
** the most common query, and one where the general loop's bookkeeping (the
** essential set, each group's iterator calls, the sum in query order) was
** most of the work per document. The same algorithm, specialised: the
** fields' cursors are read directly, each document scored by
** group_formula from its frequencies and lengths, whole blocks skipped by
** their bound, and the search ends when the list's bound falls to theta.
** The weights, stats and order are maxscore_topk's. */
static int term_topk(FtsQuery *q, Heap *h, FtsAcceptFn xAccept, void *ctx) {
    GroupIt *g = (GroupIt *)instantiate(q, q->root);
    if (!g) return q->rc;
    const PlanNode *pn = q->root;
    int n = g->n;
    FtsPostings **ac = arena_alloc(q->a, sizeof(FtsPostings *) * (size_t)n);
    int *aField = arena_alloc(q->a, sizeof(int) * (size_t)n);
    double *aTf = arena_alloc(q->a, sizeof(double) * (size_t)n);
    double *aNorm = arena_alloc(q->a, sizeof(double) * (size_t)n);
    if (!ac || !aField || !aTf || !aNorm) return lp_err_set(&q->errIter, LP_NOMEM, "out of memory");
    uint32_t d = FTS_NO_DOC;
    for (int i = 0; i < n; i++) {
        ac[i] = ((LeafIt *)g->a[i])->c;
        aField[i] = g->a[i]->pn->iField;
        q->st.nPostings++;
        g->a[i]->doc = ac[i]->vt->xNext(ac[i]);
        if (g->a[i]->doc < d) d = g->a[i]->doc;
    }
    g->base.doc = d;
    double ub = group_bound(q, g, 0, 0, NULL), ubBlock = 0;
    double theta = heap_threshold(h);
    uint32_t blockEnd = 0;
    int bBlock = 0, bCheap = q->bAcceptFirst && xAccept;
    while (d != FTS_NO_DOC && q->rc == LP_OK && !must_stop(q)) {
        if (theta >= 0) {
            /* Every document up to the end of the current blocks is
            ** bounded at once (group_bound asks the cursors for their
            ** blocks' largest tf and smallest length). */
            if (!bBlock || d > blockEnd) {
                ubBlock = group_bound(q, g, 1, d, &blockEnd);
                bBlock = 1;
            }
            if (out_of_reach(q, ubBlock, theta)) {
                if (blockEnd == FTS_NO_DOC) break;
                d = FTS_NO_DOC;
                for (int i = 0; i < n; i++) {
                    if (g->a[i]->doc <= blockEnd) {
                        q->st.nPostings++;
                        g->a[i]->doc = ac[i]->vt->xAdvance(ac[i], blockEnd + 1);
                    }
                    if (g->a[i]->doc < d) d = g->a[i]->doc;
                }
                continue;
            }
        }
        int bAsked = 0;
        if (bCheap && q->st.nCandidates >= 32 && 2 * q->st.nAccepted < q->st.nCandidates) {
            q->st.nCandidates++;
            bAsked = 1;
            if (!xAccept(ctx, d)) bAsked = -1;
            else q->st.nAccepted++;
        }
        /* Score d (unless rejected) and move the fields holding it on,
        ** finding the next document in the same pass. */
        uint32_t dNext = FTS_NO_DOC;
        for (int i = 0; i < n; i++) {
            uint32_t di = g->a[i]->doc;
            if (di == d) {
                if (bAsked >= 0) {
                    aTf[i] = ac[i]->tf;
                    aNorm[i] = norm_len(q, aField[i], q->src->vt->xDocLen(q->src, aField[i], d));
                }
                q->st.nPostings++;
                di = g->a[i]->doc = ac[i]->vt->xNext(ac[i]);
            } else {
                aTf[i] = 0;
                aNorm[i] = 1;
            }
            if (di < dNext) dNext = di;
        }
        if (bAsked >= 0) {
            if (!bAsked) q->st.nCandidates++;
            if (bAsked || !xAccept || xAccept(ctx, d)) {
                if (!bAsked) q->st.nAccepted++;
                heap_push(q, h, d, group_formula(q, pn, aTf, aNorm));
                theta = heap_threshold(h);
                if (out_of_reach(q, ub, theta)) break;
            }
        }
        d = dNext;
    }
    g->base.doc = d;
    return q->rc;
}

/* The top k of a query that is one phrase or proximity clause. Finding
** the documents that hold all its words is cheap; reading and comparing
** their positions is most of the work. So a document's score is first
** bounded with each field's frequency taken as its rarest word's there
** (phrase_tf_bound) and its exact lengths, and its positions are read only
** when that bound can still enter the top k. The score of a document
** that is read is group_score's, by the same formula. Sets bTotalExact
** to whether every candidate was read. */
static int phrase_topk(FtsQuery *q, Heap *h, FtsAcceptFn xAccept, void *ctx) {
    GroupIt *g = (GroupIt *)instantiate(q, q->root);
    if (!g) return q->rc;
    const PlanNode *pn = q->root;
    for (int i = 0; i < g->n; i++) phrase_approx((PhraseIt *)g->a[i], 0);
    double theta = heap_threshold(h);
    int bSkipped = 0;
    uint32_t d;
    while ((d = group_min(g)) != FTS_NO_DOC && !must_stop(q)) {
        double aTf[FTS_MAX_FIELDS], aNorm[FTS_MAX_FIELDS];
        for (int i = 0; i < g->n; i++) {
            PhraseIt *p = (PhraseIt *)g->a[i];
            aTf[i] = p->base.doc == d ? phrase_tf_bound(p) : 0;
            aNorm[i] = aTf[i] > 0 ? doc_norm(q, p->base.pn->iField, d) : 1;
        }
        int bMatch = 0;
        if (theta >= 0 && out_of_reach(q, group_formula(q, pn, aTf, aNorm), theta)) {
            bSkipped = 1;
        } else {
            for (int i = 0; i < g->n; i++) {
                PhraseIt *p = (PhraseIt *)g->a[i];
                if (p->base.doc != d) continue;
                if (phrase_verify(p) != LP_OK) return q->rc;
                aTf[i] = p->tf;
                bMatch |= p->tf > 0;
            }
        }
        if (bMatch) {
            q->st.nCandidates++;
            if (!xAccept || xAccept(ctx, d)) {
                q->st.nAccepted++;
                heap_push(q, h, d, group_formula(q, pn, aTf, aNorm));
                theta = heap_threshold(h);
            }
        }
        for (int i = 0; i < g->n; i++) {
            PhraseIt *p = (PhraseIt *)g->a[i];
            if (p->base.doc == d) phrase_approx(p, d + 1);
        }
    }
    q->st.bTotalExact = !bSkipped;
    return q->rc;
}

static int generic_topk(FtsQuery *q, Heap *h, FtsAcceptFn xAccept, void *ctx, int bScore) {
    It *root = instantiate(q, q->root);
    if (!root) return q->rc;
    if (bScore && is_factor_ranker(q->rank.ranker) && factors_open(q) != LP_OK) return q->rc;
    while (!must_stop(q) && root->vt->next(root) != FTS_NO_DOC) {
        uint32_t d = root->doc;
        q->st.nCandidates++;
        if (xAccept && !xAccept(ctx, d)) continue;
        q->st.nAccepted++;
        if (!bScore) {
            /* In ordinal order with equal weights: the first k are the answer,
            ** but keep counting the matches. */
            if (q->xTie) {
                heap_push(q, h, d, 1.0); /* ties, all of them: the key decides */
            } else if (h->n < h->k) {
                h->a[h->n++] = (FtsHit){d, 1.0, d};
            }
            continue;
        }
        heap_push(q, h, d, doc_weight(q, root, heap_threshold(h)));
    }
    return q->rc;
}

int fts_query_topk(FtsQuery *q, int k, FtsAcceptFn xAccept, void *ctx, FtsHit *aHit, int *pnHit,
                   FtsStats *pStats, LpError *err) {
    Heap h = {aHit, 0, k};
    const char *zWhy;
    const char *zStrategy = fts_query_strategy(q, &zWhy);
    q->st.zStrategy = zStrategy;
    q->st.zWhyNotFast = zWhy;
    int rc;
    if (k <= 0) {
        rc = LP_OK;
    } else if (strcmp(zStrategy, "maxscore") == 0) {
        rc = is_term_group(q->root) ? term_topk(q, &h, xAccept, ctx) : maxscore_topk(q, &h, xAccept, ctx);
        /* Documents are passed over only against the k-th score, so a
        ** heap that never filled saw every match, and one as large as the
        ** index filled with the last document: the count is exact. */
        q->st.bTotalExact = h.n < h.k || (uint64_t)h.k >= q->src->nDocs;
    } else if (strcmp(zStrategy, "taat") == 0) {
        rc = taat_topk(q, &h, xAccept, ctx);
        q->st.bTotalExact = 1;
    } else if (strcmp(zStrategy, "phrase_topk") == 0) {
        rc = phrase_topk(q, &h, xAccept, ctx);
    } else {
        rc = generic_topk(q, &h, xAccept, ctx, q->rank.ranker != FTS_RANK_NONE && !root_unscored(q));
        q->st.bTotalExact = 1;
    }
    if (rc == LP_OK) rc = cursors_status(q);
    if (rc != LP_OK) {
        *err = q->errIter;
        return rc;
    }
    if (q->st.bTimedOut || q->st.bCutoff) q->st.bTotalExact = 0;
    _Static_assert(sizeof(FtsHit) <= SMALL_SORT_ELEM, "FtsHit too large for sort_small");
    sort_small(aHit, (size_t)h.n, sizeof(FtsHit), cmp_hit);
    *pnHit = h.n;
    if (pStats) *pStats = q->st;
    return LP_OK;
}

int fts_query_all(FtsQuery *q, FtsHitFn xHit, void *ctx, FtsStats *pStats, LpError *err) {
    const char *zWhy;
    fts_query_strategy(q, &zWhy);
    q->st.zStrategy = root_unscored(q) ? "full_scan" : "bool_fallback";
    q->st.zWhyNotFast = "every match is needed (ORDER BY other than WEIGHT(), or COUNT)";
    q->st.bTotalExact = 1;
    It *root = instantiate(q, q->root);
    int rc = root ? LP_OK : q->rc;
    int bScore = q->rank.ranker != FTS_RANK_NONE && !root_unscored(q);
    if (rc == LP_OK && bScore && is_factor_ranker(q->rank.ranker)) rc = factors_open(q);
    while (rc == LP_OK && !must_stop(q) && root->vt->next(root) != FTS_NO_DOC) {
        q->st.nCandidates++;
        double w = bScore ? doc_weight(q, root, -HUGE_VAL) : 1.0;
        rc = q->rc ? q->rc : xHit(ctx, root->doc, w);
    }
    if (q->st.bTimedOut) q->st.bTotalExact = 0;
    if (rc == LP_OK && cursors_status(q)) {
        rc = q->rc;
        *err = q->errIter;
    }
    if (pStats) *pStats = q->st;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Explaining                                                          */

static void json_str(StrBuf *sb, const char *z, int n) {
    strbuf_appendc(sb, '"');
    for (int i = 0; i < n; i++) {
        unsigned char c = (unsigned char)z[i];
        if (c == '"' || c == '\\') {
            strbuf_appendc(sb, '\\');
            strbuf_appendc(sb, (char)c);
        } else if (c < 0x20) {
            strbuf_appendf(sb, "\\u%04x", c);
        } else {
            strbuf_appendc(sb, (char)c);
        }
    }
    strbuf_appendc(sb, '"');
}

/* Field f as EXPLAIN names it: by name where the caller gave the names
** (fts_query_set_field_names), else by number. */
static void field_label(const FtsQuery *q, int f, StrBuf *sb) {
    if (f >= 0 && f < q->nFieldName) strbuf_appendz(sb, q->azFieldName[f]);
    else strbuf_appendf(sb, "%d", f);
}

/* {"field":f, and its name where known ("field_name":"title",), opening
** EXPLAIN_SCORE()'s object for field f. */
static void field_json(const FtsQuery *q, int f, StrBuf *sb) {
    strbuf_appendf(sb, "{\"field\":%d,", f);
    if (f >= 0 && f < q->nFieldName) {
        strbuf_appendz(sb, "\"field_name\":");
        json_str(sb, q->azFieldName[f], (int)strlen(q->azFieldName[f]));
        strbuf_appendc(sb, ',');
    }
}

/* The text of a plan node's words, for humans. */
static void pn_text(const PlanNode *pn, StrBuf *sb) {
    if (pn->kind == PN_LEAF) {
        json_str(sb, (const char *)pn->key + 1, pn->nKey - 1);
        return;
    }
    StrBuf t = {0};
    if (pn->anchor & FTS_ANCHOR_START) strbuf_appendc(&t, '^');
    int nShow = pn->iSp ? pn->aOpStart[pn->nOp] : pn->nTerm; /* not the boundaries */
    for (int i = 0, o = 0; i < nShow; i++) {
        if (pn->nOp && o + 1 < pn->nOp && i == pn->aOpStart[o + 1]) {
            if (pn->aOpAnchor && (pn->aOpAnchor[o] & FTS_ANCHOR_END)) strbuf_appendc(&t, '$');
            if (pn->aDist) strbuf_appendf(&t, pn->bNotNear ? " NOTNEAR/%d " : " NEAR/%d ", pn->aDist[o]);
            else if (pn->iSp) strbuf_appendz(&t, pn->iSp == SP_SENTENCE ? " SENTENCE " : " PARAGRAPH ");
            else strbuf_appendz(&t, " << ");
            o++;
        } else if (i) {
            strbuf_appendc(&t, ' ');
        }
        if (pn->nOp && pn->aOpAnchor && i == pn->aOpStart[o] && (pn->aOpAnchor[o] & FTS_ANCHOR_START)) {
            strbuf_appendc(&t, '^');
        }
        int wa = pn->aWordAnchor ? pn->aWordAnchor[i] : 0;
        if (wa & FTS_ANCHOR_START) strbuf_appendc(&t, '^');
        strbuf_append(&t, pn->aKey[i] + 1, (size_t)pn->anKey[i] - 1);
        if (wa & FTS_ANCHOR_END) strbuf_appendc(&t, '$');
    }
    if (pn->nOp && pn->aOpAnchor && (pn->aOpAnchor[pn->nOp - 1] & FTS_ANCHOR_END)) strbuf_appendc(&t, '$');
    if (pn->anchor & FTS_ANCHOR_END) strbuf_appendc(&t, '$');
    json_str(sb, t.z ? t.z : "", (int)t.n);
    strbuf_free(&t);
}

/* A PHRASE node's position limits: one number when every word has the
** same, else one per word (a chain's operands may differ), as a JSON
** array with 0 for none or (bJson 0) a list with "all". */
static void limits_text(const PlanNode *pn, StrBuf *sb, int bJson) {
    int bSame = 1;
    for (int i = 1; i < pn->nTerm; i++) bSame &= pn->aPosLimit[i] == pn->aPosLimit[0];
    if (bSame) {
        strbuf_appendf(sb, "%u", pn->aPosLimit[0]);
        return;
    }
    if (bJson) strbuf_appendc(sb, '[');
    for (int i = 0; i < pn->nTerm; i++) {
        if (i) strbuf_appendc(sb, ',');
        if (pn->aPosLimit[i] || bJson) strbuf_appendf(sb, "%u", pn->aPosLimit[i]);
        else strbuf_appendz(sb, "all");
    }
    if (bJson) strbuf_appendc(sb, ']');
}

/* ,"first_positions":… for a clause under a position limit, ,"zones":[…]
** for one under a zone limit. */
static void limit_json(const PlanNode *pn, StrBuf *sb) {
    if (pn->kind != PN_PHRASE) return;
    if (pn->aPosLimit) {
        strbuf_appendz(sb, ",\"first_positions\":");
        limits_text(pn, sb, 1);
    }
    if (pn->pZones) {
        strbuf_appendz(sb, ",\"zones\":[");
        for (int k = 0; k < pn->pZones->nName; k++) {
            if (k) strbuf_appendc(sb, ',');
            json_str(sb, pn->pZones->azName[k], (int)strlen(pn->pZones->azName[k]));
        }
        strbuf_appendc(sb, ']');
    }
}

static void explain_it(FtsQuery *q, It *it, uint32_t doc, StrBuf *sb, int *pnOut, double *pTotal) {
    const PlanNode *pn = it->pn;
    if (it->doc != doc) return;
    if (pn->kind == PN_GROUP) {
        GroupIt *g = (GroupIt *)it;
        int bF = q->rank.ranker != FTS_RANK_BM25; /* the proximity rankers' clauses too */
        int bNone = q->rank.ranker == FTS_RANK_NONE;
        if ((*pnOut)++) strbuf_appendc(sb, ',');
        strbuf_appendf(sb, "{\"type\":\"%s\",\"terms\":", azQType[pn->qtype]);
        pn_text(pn->aChild[0], sb);
        strbuf_appendz(sb, ",\"fields\":[");
        if (bNone) {
            /* Without ranking every match weighs 1: say where it matched. */
            int nf = 0;
            for (int i = 0; i < g->n; i++) {
                const It *c = g->a[i];
                if (c->doc != doc) continue;
                if (nf++) strbuf_appendc(sb, ',');
                field_json(q, c->pn->iField, sb);
                strbuf_appendf(sb, "\"tf\":%u", child_tf(c));
                limit_json(c->pn, sb);
                strbuf_appendc(sb, '}');
            }
            strbuf_appendz(sb, "]}");
            return;
        }
        double contrib = group_score(it);
        int nf = 0;
        double x = 0;
        for (int i = 0; i < g->n; i++) {
            const It *c = g->a[i];
            if (c->doc != doc) continue;
            int f = c->pn->iField;
            double tf = child_tf(c);
            double dl = q->src->vt->xDocLen(q->src, f, doc);
            double nt = tf / norm_len(q, f, dl);
            if (nf++) strbuf_appendc(sb, ',');
            field_json(q, f, sb);
            strbuf_appendf(sb, "\"tf\":%.0f,\"dl\":%.0f,\"avgdl\":%.4g,\"field_weight\":%g", tf, dl,
                           q->aAvgLen[f], q->rank.aFieldWeight[f]);
            limit_json(c->pn, sb);
            if (bF) {
                x += q->rank.aFieldWeight[f] * nt;
                strbuf_appendf(sb, ",\"weighted_norm_tf\":%.6g}", q->rank.aFieldWeight[f] * nt);
            } else {
                strbuf_appendf(sb, ",\"idf\":%.6g,\"bm25\":%.6g}", c->pn->idf,
                               q->rank.aFieldWeight[f] * c->pn->idf * saturate(q, nt));
            }
        }
        strbuf_appendz(sb, "]");
        if (bF) {
            strbuf_appendf(sb, ",\"idf\":%.6g,\"bm25f\":%.6g", pn->idf, pn->idf * saturate(q, x));
        }
        if (pn->boost) strbuf_appendf(sb, ",\"boost\":%g", pn->boost);
        strbuf_appendf(sb, ",\"type_weight\":%g", pn->typeWeight);
        if (pn->nRepeat > 1) strbuf_appendf(sb, ",\"repeat\":%d", pn->nRepeat);
        strbuf_appendf(sb, ",\"contribution\":%.6g}", contrib);
        *pTotal += contrib;
        return;
    }
    if (pn->kind == PN_OR || pn->kind == PN_QUORUM) {
        OrIt *o = (OrIt *)it;
        for (int i = 0; i < o->n; i++) explain_it(q, o->a[i], doc, sb, pnOut, pTotal);
    } else if (pn->kind == PN_MAYBE) {
        MaybeIt *m = (MaybeIt *)it;
        explain_it(q, m->req, doc, sb, pnOut, pTotal);
        if (maybe_opt_at(m)) explain_it(q, m->opt, doc, sb, pnOut, pTotal);
    } else if (pn->kind == PN_AND) {
        AndIt *x = (AndIt *)it;
        for (int i = 0; i < x->n; i++) explain_it(q, x->a[i], doc, sb, pnOut, pTotal);
    }
}

int fts_query_explain_doc(FtsQuery *q, uint32_t doc, StrBuf *out, LpError *err) {
    It *root = instantiate(q, q->root);
    if (!root) {
        *err = q->errIter;
        return q->rc;
    }
    root->vt->advance(root, doc);
    int nOut = 0;
    double total = 0;
    strbuf_appendz(out, "{\"matches\":[");
    if (root->doc == doc && !root_unscored(q)) explain_it(q, root, doc, out, &nOut, &total);
    if ((root_unscored(q) || q->rank.ranker == FTS_RANK_NONE) && root->doc == doc) total = 1;
    strbuf_appendc(out, ']');
    if (is_factor_ranker(q->rank.ranker) && !root_unscored(q) && root->doc == doc) {
        /* the clauses above make the BM25F weight; the ranker's own
        ** weight is from each field's factors */
        FtsFieldFactors *aFF = arena_alloc(q->a, sizeof(FtsFieldFactors) * (size_t)q->src->nFields);
        double w = 0;
        uint32_t nDocWords = 0;
        if (!aFF) return lp_err_set(err, LP_NOMEM, "out of memory");
        if (factors_open(q) == LP_OK && factor_weight(q, root, total, &w, aFF, &nDocWords) == LP_OK) {
            strbuf_appendz(out, ",\"factors\":[");
            for (int f = 0, nf = 0; f < q->src->nFields; f++) {
                const FtsFieldFactors *x = &aFF[f];
                if (!x->hitCount) continue;
                if (nf++) strbuf_appendc(out, ',');
                field_json(q, f, out);
                strbuf_appendf(out, "\"lcs\":%u,\"hit_count\":%u,\"word_count\":%u,"
                                    "\"min_hit_pos\":%u,\"exact_hit\":%u,\"field_weight\":%g,"
                                    "\"sum_idf\":%.6g,\"min_idf\":%.6g,\"max_idf\":%.6g,\"tf_idf\":%.6g,"
                                    "\"lccs\":%u,\"wlccs\":%.6g,\"min_best_span_pos\":%u,"
                                    "\"exact_order\":%u,\"atc\":%.6g,\"min_gaps\":%u}",
                               x->lcs, x->hitCount, x->wordCount, x->minHitPos,
                               x->exactHit, q->rank.aFieldWeight[f], x->sumIdf, x->minIdf, x->maxIdf,
                               x->tfIdf, x->lccs, x->wlccs, x->minBestSpanPos, x->exactOrder, x->atc,
                               x->minGaps);
            }
            strbuf_appendf(out, "],\"max_lcs\":%.6g,\"doc_word_count\":%u,\"query_word_count\":%u,"
                                "\"bm25f\":%.6g,\"bm25\":%.6g",
                           q->fx->maxLcs, nDocWords, q->nQWordUniq, total, bm25_part(total));
        }
        total = w;
    }
    strbuf_appendf(out, ",\"ranker\":\"%s\",\"k1\":%g,\"b\":%g,\"weight\":%.6g}",
                   fts_ranker_name(q->rank.ranker), q->rank.k1, q->rank.b, total);
    if (q->rc) {
        *err = q->errIter;
        return q->rc;
    }
    return out->oom ? lp_err_set(err, LP_NOMEM, "out of memory") : LP_OK;
}

int fts_query_packed_factors(FtsQuery *q, uint32_t doc, int bNoAtc, StrBuf *out, LpError *err) {
    if (!is_factor_ranker(q->rank.ranker)) {
        return lp_err_set(err, LP_BADINPUT, "PACKEDFACTORS() needs ranker=expr('...') or ranker=export('...')");
    }
    It *root = instantiate(q, q->root);
    if (!root) {
        *err = q->errIter;
        return q->rc;
    }
    root->vt->advance(root, doc);
    if (root->doc != doc || root_unscored(q)) return LP_OK; /* not a match: nothing to say */
    int nf = q->src->nFields;
    size_t nq = q->nQPos ? q->nQPos : 1;
    FtsFieldFactors *aFF = arena_alloc(q->a, sizeof(FtsFieldFactors) * (size_t)nf);
    if (!aFF || factors_open(q) != LP_OK) goto fail;
    FtsFactors *fx = q->fx;
    if (!(fx->aWordTf = arena_zalloc(q->a, sizeof(uint32_t) * nq)) ||
        !(fx->aWordIdf = arena_zalloc(q->a, sizeof(double) * nq))) {
        fx->aWordTf = NULL;
        goto fail;
    }
    double W = root->vt->score(root), w = 0;
    uint32_t nDocWords = 0;
    int rc = factor_weight(q, root, W, &w, aFF, &nDocWords);
    uint32_t *aWordTf = fx->aWordTf;
    fx->aWordTf = NULL;
    if (rc != LP_OK) goto fail;
    Rescore rs = {q, root};
    static const double aNoWeight[1] = {1}; /* nW 0: every field weighs 1 */
    double bm25a = rescore(&rs, 0, q->rank.k1, q->rank.b, aNoWeight, 0);
    uint32_t mask = 0;
    for (int f = 0; f < nf && f < 32; f++) mask |= aFF[f].hitCount ? 1u << f : 0;
    strbuf_appendf(out, "bm25=%d, bm25a=%.8f, field_mask=%u, doc_word_count=%u", (int)bm25_part(W), bm25a,
                   mask, nDocWords);
    for (int f = 0; f < nf; f++) {
        const FtsFieldFactors *x = &aFF[f];
        if (!x->hitCount) continue;
        strbuf_appendf(out, ", field%d=(lcs=%u, hit_count=%u, word_count=%u, tf_idf=%.8f, min_idf=%.8f, "
                            "max_idf=%.8f, sum_idf=%.8f, min_hit_pos=%u, min_best_span_pos=%u, exact_hit=%u, "
                            "max_window_hits=%u, min_gaps=%u, exact_order=%u, lccs=%u, wlccs=%.8f, atc=%.6f)",
                       f, x->lcs, x->hitCount, x->wordCount, x->tfIdf, x->minIdf, x->maxIdf, x->sumIdf,
                       x->minHitPos, x->minBestSpanPos, x->exactHit, x->maxWindowHits, x->minGaps,
                       x->exactOrder, x->lccs, x->wlccs, bNoAtc ? 0.0 : x->atc);
    }
    for (uint32_t k = 0; k < fx->nQWords; k++) {
        uint32_t v = fx->aKw[k];
        if (aWordTf[v]) strbuf_appendf(out, ", word%u=(tf=%u, idf=%.8f)", k, aWordTf[v], fx->aWordIdf[v]);
    }
    if (q->rc) goto fail;
    return out->oom ? lp_err_set(err, LP_NOMEM, "out of memory") : LP_OK;
fail:
    if (q->rc) {
        *err = q->errIter;
        return q->rc;
    }
    return lp_err_set(err, LP_NOMEM, "out of memory");
}

static void plan_text(const FtsQuery *q, const PlanNode *pn, int depth, StrBuf *sb) {
    strbuf_appendf(sb, "%*s", depth * 2, "");
    switch (pn->kind) {
    case PN_LEAF:
        strbuf_appendz(sb, "field ");
        field_label(q, pn->iField, sb);
        strbuf_appendf(sb, ": df=%u idf=%.4g weight=%g\n", pn->df, pn->idf, q->rank.aFieldWeight[pn->iField]);
        return;
    case PN_PHRASE:
        strbuf_appendz(sb, "field ");
        field_label(q, pn->iField, sb);
        strbuf_appendf(sb, ": idf=%.4g weight=%g", pn->idf, q->rank.aFieldWeight[pn->iField]);
        if (pn->aPosLimit) {
            strbuf_appendz(sb, " first_positions=");
            limits_text(pn, sb, 0);
        }
        if (pn->pZones) {
            /* the zones asked for: those with spans in the field are read */
            strbuf_appendz(sb, " zones=");
            for (int k = 0; k < pn->pZones->nName; k++) {
                strbuf_appendf(sb, "%s%s", k ? "," : "", pn->pZones->azName[k]);
            }
        }
        strbuf_appendc(sb, '\n');
        return;
    case PN_GROUP:
        strbuf_appendf(sb, "%s ", pn->aChild[0]->nOp ? (pn->aChild[0]->bNotNear ? "notnear"
                                                        : pn->aChild[0]->aDist ? "near"
                                                        : pn->aChild[0]->iSp == SP_SENTENCE ? "sentence"
                                                        : pn->aChild[0]->iSp == SP_PARAGRAPH ? "paragraph"
                                                                                : "before")
                                  : pn->qtype == QT_PHRASE && pn->aChild[0]->nSlop ? "proximity"
                                  : pn->aChild[0]->anchor ? "anchored"
                                                           : azQType[pn->qtype]);
        pn_text(pn->aChild[0], sb);
        if (pn->qtype == QT_PHRASE && pn->aChild[0]->nSlop) strbuf_appendf(sb, "~%d", pn->aChild[0]->nSlop);
        strbuf_appendf(sb, " idf=%.4g", pn->idf);
        if (pn->boost) strbuf_appendf(sb, " boost=%g", pn->boost);
        strbuf_appendf(sb, " type_weight=%g", pn->typeWeight);
        if (pn->nRepeat > 1) strbuf_appendf(sb, " repeat=%d", pn->nRepeat);
        strbuf_appendc(sb, '\n');
        for (int i = 0; i < pn->nChild; i++) plan_text(q, pn->aChild[i], depth + 1, sb);
        return;
    case PN_ALL:
        strbuf_appendz(sb, "all documents\n");
        return;
    case PN_NONE:
        strbuf_appendz(sb, "no documents (terms absent or only stop words)\n");
        return;
    case PN_MAYBE:
        strbuf_appendz(sb, "MAYBE\n");
        plan_text(q, pn->aChild[0], depth + 1, sb);
        strbuf_appendf(sb, "%*soptional\n", (depth + 1) * 2, "");
        plan_text(q, pn->aChild[1], depth + 2, sb);
        return;
    case PN_QUORUM:
        strbuf_appendf(sb, "QUORUM at least %d of %d\n", pn->nThreshold, pn->nChild);
        for (int i = 0; i < pn->nChild; i++) plan_text(q, pn->aChild[i], depth + 1, sb);
        return;
    case PN_AND:
    case PN_OR:
        strbuf_appendz(sb, pn->bOrder == ORDER_BEFORE ? "ORDER (each after the one before, in one field)"
                           : pn->bOrder == ORDER_NEAR ? "NEAR (where each matches, in one field:"
                           : pn->bOrder == ORDER_NOTNEAR ? "NOTNEAR (the first where it matches, in one field, "
                                                           "with no occurrence of the second within"
                           : pn->kind == PN_AND       ? "AND"
                                                      : "OR");
        for (int i = 0; pn->bOrder == ORDER_NEAR && i + 1 < pn->nChild; i++) {
            strbuf_appendf(sb, " /%d%s", pn->aDist[i], i + 2 == pn->nChild ? ")" : "");
        }
        if (pn->bOrder == ORDER_NOTNEAR) strbuf_appendf(sb, " %d)", pn->aDist[0]);
        if (pn->pSpan) {
            /* ZONESPAN: the positive parts in one span of these zones */
            strbuf_appendz(sb, " zonespan=");
            for (int k = 0; k < pn->pSpan->nName; k++) {
                strbuf_appendf(sb, "%s%s", k ? "," : "", pn->pSpan->azName[k]);
            }
        }
        strbuf_appendc(sb, '\n');
        for (int i = 0; i < pn->nChild; i++) {
            if (pn->kind == PN_AND && i >= pn->nChild - pn->nNeg) {
                strbuf_appendf(sb, "%*s%s\n", (depth + 1) * 2, "", pn->bOrder == ORDER_NOTNEAR ? "NOT NEAR" : "NOT");
                plan_text(q, pn->aChild[i], depth + 2, sb);
            } else {
                plan_text(q, pn->aChild[i], depth + 1, sb);
            }
        }
        return;
    }
}

void fts_query_plan_text(FtsQuery *q, StrBuf *out) {
    plan_text(q, q->root, 0, out);
}

/* ------------------------------------------------------------------ */
/* Keyword statistics (SHOW META)                                      */

typedef struct KwWalk {
    const Analyzer *an;
    FtsSource *src;
    int nLimit;                 /* expansion limit per field */
    int nMax;                   /* most keywords */
    FtsKeywordFn xKw;
    void *ctx;
    LpError *err;
    StrBuf seen;                /* the keywords reported: each NUL-terminated */
    int nSeen;
    const FtsFieldSet *pFields; /* the scope of the leaf being counted */
    uint64_t docs, hits;        /* a prefix's sums */
    int nScanned;               /* keys a prefix scan took in this field */
    const FtsNode *pPhrase;     /* the leaf being counted (a phrase's or quorum's prefixes:
                                ** "a wor*"), or NULL */
    uint32_t wildEnd;           /* the end of its wildcard word reported last */
} KwWalk;

static int kw_leaf(void *ctx, const FtsNode *x, int bNegated);

/* Was z[0..n) reported already? Keywords are few: a linear search. */
static int kw_seen(const KwWalk *w, const char *z, int n) {
    const char *p = w->seen.z;
    for (int i = 0; i < w->nSeen; i++) {
        size_t len = strlen(p);
        if (len == (size_t)n && memcmp(p, z, (size_t)n) == 0) return 1;
        p += len + 1;
    }
    return 0;
}

#define KW_DONE (-1) /* nMax reached or xKw said stop: not an LP_* code */

/* Reports keyword z[0..n) once: LP_OK, KW_DONE or LP_NOMEM. */
static int kw_report(KwWalk *w, const char *z, int n, uint64_t docs, uint64_t hits) {
    if (w->nSeen >= w->nMax) return KW_DONE;
    if (kw_seen(w, z, n) || memchr(z, 0, (size_t)n)) return LP_OK;
    strbuf_append(&w->seen, z, (size_t)n);
    strbuf_appendc(&w->seen, 0);
    if (w->seen.oom) return LP_NOMEM;
    w->nSeen++;
    return w->xKw(w->ctx, z, n, docs, hits) ? KW_DONE : LP_OK;
}

int fts_term_stats(FtsSource *src, const FtsFieldSet *fs, const char *z, int n, uint64_t *pDocs,
                   uint64_t *pHits, LpError *err) {
    uint8_t key[FTS_MAX_KEY];
    uint64_t sum = 0, hits = 0;
    uint32_t dfMax = 0;
    int bExact = 1, top = -1;
    *pDocs = *pHits = 0;
    if (n + 1 > (int)sizeof(key)) return LP_OK;
    memcpy(key + 1, z, (size_t)n);
    for (int f = 0; f < src->nFields; f++) {
        if (fs && !fts_fieldset_has(fs, f)) continue;
        top = f;
        key[0] = (uint8_t)f;
        FtsTermInfo info;
        int r = src->vt->xLookup(src, key, n + 1, &info, err);
        if (r < 0) return -r;
        if (r == 0) continue;
        hits += info.cf;
        if (info.df > dfMax) dfMax = info.df;
        if (info.nEarlier == FTS_EARLIER_UNKNOWN) bExact = 0;
        else sum += info.df - info.nEarlier;
    }
    for (int f = 0; f < top && bExact && fs; f++) bExact = fts_fieldset_has(fs, f);
    *pDocs = bExact && sum > dfMax ? sum : dfMax;
    *pHits = hits;
    return LP_OK;
}

static int kw_field(void *ctx, int f);
static int kw_expand(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info);
static int kw_last(void *ctx, const Token *t);

/* Reports the prefix pre[0..n) ("wor" of wor*) with its terms' sums. */
static int kw_prefix(KwWalk *w, StrBuf *pre) {
    w->docs = w->hits = 0;
    int rc = scan_fields(w->src, w->an, w->pFields, pre->z, (int)pre->n, NULL, 0, kw_field, kw_expand, w, w->err);
    strbuf_appendc(pre, '*');
    if (rc == LP_OK) rc = pre->oom ? LP_NOMEM : kw_report(w, pre->z, (int)pre->n, w->docs, w->hits);
    return rc;
}

static int kw_token(void *ctx, const Token *t) {
    KwWalk *w = ctx;
    const FtsNode *x = w->pPhrase;
    uint32_t lo, hi;
    if (x && fts_phrase_wildcard_at(x, t->iStart, &lo, &hi)) {
        /* a wildcard word ("*ak hen"): its pattern, at its first part */
        if (lo < w->wildEnd) return LP_OK;
        w->wildEnd = hi;
        FtsNode y = *x;
        y.kind = FTSN_WILDCARD;
        y.z = x->z + lo;
        y.n = (int)(hi - lo);
        y.aMark = NULL;
        w->pPhrase = NULL;
        int rc = kw_leaf(w, &y, 0);
        w->pPhrase = x;
        return rc;
    }
    if (x && fts_phrase_word_is_prefix(x, t)) {
        /* a prefix in a phrase: its unstemmed text, as the planner has it */
        StrBuf pre = {0};
        int rc = analyzer_run_unstemmed(w->an, x->z + t->iStart, t->iEnd - t->iStart, kw_last, &pre, w->err);
        if (rc == LP_OK && pre.n > 0) rc = kw_prefix(w, &pre);
        strbuf_free(&pre);
        return rc;
    }
    uint64_t docs = 0, hits = 0;
    int rc = fts_term_stats(w->src, w->pFields, t->z, t->n, &docs, &hits, w->err);
    return rc ? rc : kw_report(w, t->z, t->n, docs, hits);
}

static int kw_expand(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    KwWalk *w = ctx;
    if (w->nScanned++ >= w->nLimit) return 1;
    w->docs += info->df;
    w->hits += info->cf;
    return 0;
}

static int kw_last(void *ctx, const Token *t) {
    StrBuf *sb = ctx;
    strbuf_reset(sb);
    strbuf_append(sb, t->z, (size_t)t->n);
    return sb->oom ? LP_NOMEM : LP_OK;
}

/* scan_fields' xField for kw_leaf. */
static int kw_field(void *ctx, int f) {
    (void)f;
    ((KwWalk *)ctx)->nScanned = 0;
    return 0;
}

/* Reports leaf x's keywords (negated ones too). */
static int kw_leaf(void *ctx, const FtsNode *x, int bNegated) {
    KwWalk *w = ctx;
    (void)bNegated;
    if (x->kind == FTSN_WILDCARD) {
        /* the pattern, its terms counted as the planner finds them */
        Arena a;
        arena_init(&a, 0);
        const char *zGlob;
        int nGlob, nFirst, rc = fts_wildcard_pattern(&a, w->an, x, &zGlob, &nGlob, &nFirst, w->err);
        if (rc == LP_OK) {
            w->docs = w->hits = 0;
            rc = scan_fields(w->src, w->an, &x->fields, fts_pattern_start(zGlob, nGlob), nFirst, zGlob, nGlob,
                             kw_field, kw_expand, w, w->err);
            if (rc == LP_OK) rc = kw_report(w, zGlob, nGlob, w->docs, w->hits);
        }
        arena_free(&a);
        return rc;
    }
    w->pFields = &x->fields;
    if (x->kind != FTSN_PREFIX) {
        w->pPhrase = x;
        w->wildEnd = 0;
        int rc = analyzer_run_query(w->an, x->z, (size_t)x->n, x->bExact, kw_token, w, w->err);
        w->pPhrase = NULL;
        return rc;
    }
    /* the prefix is the last word of the text (as the planner has it) */
    StrBuf pre = {0};
    int rc = analyzer_run_unstemmed(w->an, x->z, (size_t)x->n, kw_last, &pre, w->err);
    if (rc == LP_OK && pre.n > 0) rc = kw_prefix(w, &pre);
    strbuf_free(&pre);
    return rc;
}

int fts_keywords(const FtsNode *root, const Analyzer *an, FtsSource *src, int nExpansionLimit,
                 int nMax, FtsKeywordFn xKw, void *ctx, LpError *err) {
    KwWalk w = {an, src, nExpansionLimit, nMax, xKw, ctx, err, {0}, 0, NULL, 0, 0, 0, NULL, 0};
    int rc = fts_match_leaves(root, kw_leaf, &w);
    strbuf_free(&w.seen);
    if (rc == KW_DONE) return LP_OK;
    if (rc == LP_NOMEM) return lp_err_set(err, LP_NOMEM, "out of memory");
    return rc;
}

/* fts_expansions: keys of one field's scan, their terms kept. */
typedef struct ExpWalk {
    int nLimit;        /* most terms per field */
    int nTaken;        /* taken from this field */
    VEC(char *) terms; /* NUL-terminated copies (malloc'd) */
    int bNoMem;
} ExpWalk;

/* scan_fields' xField for fts_expansions: stops once memory ran out. */
static int exp_field(void *ctx, int f) {
    ExpWalk *w = ctx;
    (void)f;
    w->nTaken = 0;
    return w->bNoMem;
}

static int exp_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    ExpWalk *w = ctx;
    (void)info;
    if (w->nTaken++ >= w->nLimit) return 1;
    char *z = VEC_RESERVE(&w->terms, w->terms.n + 1) ? NULL : malloc((size_t)nKey);
    if (!z) {
        w->bNoMem = 1;
        return 1;
    }
    memcpy(z, key + 1, (size_t)nKey - 1);
    z[nKey - 1] = 0;
    w->terms.a[w->terms.n++] = z;
    return 0;
}

static int cmp_cstr(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int fts_expansions(Arena *a, const FtsNode *x, const Analyzer *an, FtsSource *src, int nLimit,
                   const char **pzPattern, FtsKeywordFn xTerm, void *ctx, LpError *err) {
    ExpWalk w = {nLimit > 0 ? nLimit : FTS_DEFAULT_EXPANSION_LIMIT, 0, {0}, 0};
    const char *zPre, *zGlob = NULL; /* the wildcard's pattern, or NULL: a prefix */
    int nPre, nGlob = 0, rc = LP_OK;
    if (x->kind == FTSN_WILDCARD) {
        rc = fts_wildcard_pattern(a, an, x, &zGlob, &nGlob, &nPre, err);
        if (rc) return rc;
        zPre = fts_pattern_start(zGlob, nGlob);
        *pzPattern = zGlob;
    } else if (x->kind == FTSN_PREFIX) {
        TokenList l = {{0}, {0}};
        rc = analyzer_collect(an, x->z, (size_t)x->n, ANALYZE_UNSTEMMED, &l, err);
        if (rc == LP_OK) rc = prefix_word(an, x, &l, err);
        char *z = rc == LP_OK ? arena_alloc(a, (size_t)l.a.a[0].n + 2) : NULL;
        if (rc == LP_OK && !z) rc = lp_err_set(err, LP_NOMEM, "out of memory");
        if (rc == LP_OK) {
            memcpy(z, l.a.a[0].z, (size_t)l.a.a[0].n);
            z[l.a.a[0].n] = '*';
            z[l.a.a[0].n + 1] = 0;
            nPre = l.a.a[0].n;
        }
        token_list_free(&l);
        if (rc) return rc;
        zPre = z;
        *pzPattern = z;
    } else {
        return lp_err_set(err, LP_INTERNAL, "fts_expansions: not a prefix or a wildcard");
    }
    rc = scan_fields(src, an, &x->fields, zPre, nPre, zGlob, nGlob, exp_field, exp_key, &w, err);
    if (rc == LP_OK && w.bNoMem) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    /* the fields' terms, each once, in order, at most nLimit */
    if (w.terms.n > 1) qsort(w.terms.a, w.terms.n, sizeof(char *), cmp_cstr);
    int nOut = 0;
    for (size_t i = 0; i < w.terms.n && rc == LP_OK && nOut < w.nLimit; i++) {
        if (i > 0 && strcmp(w.terms.a[i], w.terms.a[i - 1]) == 0) continue;
        uint64_t docs, hits;
        int n = (int)strlen(w.terms.a[i]);
        rc = fts_term_stats(src, &x->fields, w.terms.a[i], n, &docs, &hits, err);
        if (rc == LP_OK) rc = xTerm(ctx, w.terms.a[i], n, docs, hits);
        nOut++;
    }
    for (size_t i = 0; i < w.terms.n; i++) free(w.terms.a[i]);
    VEC_FREE(&w.terms);
    return rc;
}
