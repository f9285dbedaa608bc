/*
** highlight.c — see highlight.h.
**
** Query side. The positive leaves of the tree are analysed once into two
** sorted, de-duplicated arrays: analysed terms (binary search) and
** normalised prefixes and wildcard patterns (scanned: queries hold few). A term's index in the
** first array, or nTerm + a prefix's index, is its id.
**
** Text side, in three steps:
**   1. Words. analyzer_run_unstemmed() lists every word of the text with
**      its byte and character offsets, and marks the ones a prefix (or,
**      for an unstemmed analyzer, a term) matches. With stemming, word
**      forms or blend characters, a second run, analyzer_run(), gives the
**      terms of the same words (the stop words left out), each matched to
**      the word that holds its first byte (a blend token's forms and parts
**      are inside its one word); a word form's term marks every word of
**      its source. Stop words cannot match: the query side dropped them
**      too.
**   2. Candidates. Each marked word opens a window of `around` words on
**      both sides; a window that touches the previous one joins it while
**      the joined span still fits in `limit`.
**   3. Selection. Greedy by "query terms not shown yet", which only falls
**      as passages are chosen, so a stale score is an upper bound and a
**      max-heap with lazy re-scoring picks the same passages as rescoring
**      everything each round (the usual lazy greedy of set cover).
** Output then walks the chosen byte ranges, copying the original bytes
** and wrapping marked words in the tags.
*/
#include "fts/highlight.h"
#include "fts/search.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

typedef struct HlTerm {
    const char *z; /* bytes (in the query's arena) */
    int n;         /* their length */
    int bGlob;     /* a prefix entry that is a wildcard's pattern ('*', '?', '%') */
    /* Where a word is marked, when some leaf limits it (each of its
    ** leaves adds a place; none: anywhere, as is a leaf without a limit): */
    const char *const *azZone; /* inside a span of one of these zones (lower case) */
    int nZone;
    const int *aGroup;         /* inside a span where one of these ZONESPAN groups
                               ** (FtsHlQuery.apGroup) holds */
    int nGroup;
    const int *aPhrase;        /* inside a match of one of these exact phrases
                               ** (FtsHlQuery.aPhrase) */
    int nPhrase;
} HlTerm;

/* An exact phrase of the query whose words are marked only where it
** matches: its terms (ids) and their places after the first's. */
typedef struct HlPhrase {
    const int *aId;
    const uint32_t *aOff;
    int n;
} HlPhrase;

/* A leaf under a ZONESPAN group, with the ids of the words it asks for
** (its terms and its prefix, ascending, once each): what the group's
** test needs to know of it. */
typedef struct HlLeaf {
    const FtsNode *x;
    const int *aId;
    int nId;
    int iStar;      /* the id of the word's star expansion (expand_keywords),
                    ** which matches instead of it; -1: none */
} HlLeaf;

struct FtsHlQuery {
    HlTerm *aTerm;   /* analysed terms, sorted by bytes, unique */
    int nTerm;       /* how many */
    HlTerm *aPrefix; /* normalised prefixes, unique */
    int nPrefix;     /* how many */
    int bZones;      /* some term has a place (nZone or nGroup > 0) */
    const FtsNode **apGroup; /* the ZONESPAN groups (ANDs with pSpan) of marked leaves */
    int nGroup;
    HlLeaf *aLeaf;   /* the leaves under them that may match in the field */
    int nLeaf;
    int bSpans;      /* some term has zones or groups (the text's zones are read) */
    HlPhrase *aPhrase; /* the exact phrases of phrase-limited terms */
    int nPhrase;
};

static int term_anywhere(const HlTerm *t) {
    return t->nZone == 0 && t->nGroup == 0 && t->nPhrase == 0;
}

void fts_hl_options_init(FtsHlOptions *o) {
    memset(o, 0, sizeof(*o));
    o->zBefore = "<b>";
    o->zAfter = "</b>";
    o->zChunkSep = " ... ";
    o->limit = 256;
    o->around = 5;
    o->startPassageId = 1;
}

/* ------------------------------------------------------------------ */
/* Query side                                                          */

typedef struct TermList {
    HlTerm *a; /* in the arena; old arrays abandoned there */
    int n;     /* used */
    int cap;   /* allocated */
} TermList;

/* A group leaf's words before the lists are sorted: its entries of the
** term and prefix lists, by their bytes. */
typedef struct LeafWords {
    const char *z;
    int n;
    int kind;               /* LW_TERM, LW_PREFIX, or LW_STAR: a word's star
                            ** expansion (expand_keywords), an alternative */
} LeafWords;

enum { LW_TERM, LW_PREFIX, LW_STAR };

/* A word of an exact phrase whose words are marked only where it matches:
** its term, its place in the phrase, and the phrase's index. */
typedef struct PhraseWord {
    const char *z;
    int n;
    uint32_t iPos;
    int iPhrase;
} PhraseWord;

typedef struct Builder {
    Arena *a;                      /* where the terms go */
    const Analyzer *an;            /* the table's analyzer */
    int iField;                    /* the field, or -1 for any */
    TermList terms;                /* analysed terms */
    TermList prefixes;             /* normalised prefixes */
    const FtsZones *pZones;        /* the zones of the leaf being added, or NULL ... */
    const int *pGroup;             /* ... or its ZONESPAN group (an apGroup index), or NULL */
    VEC(const FtsNode *) groups;   /* the ZONESPAN groups met */
    VEC(LeafWords) leafWords;      /* the group leaves' words, leaf after leaf ... */
    VEC(int) leafEnd;              /* ... each one's end in leafWords */
    VEC(const FtsNode *) leaves;   /* ... and the leaves */
    uint32_t iPosLimit;            /* on_term keeps tokens before this position */
    char aLast[ANALYZER_MAX_TERM]; /* on_last: the last unstemmed token ... */
    int nLast;                     /* ... its length (0: none) */
    uint32_t iLastPos;             /* ... and position */
    int bStar;                     /* expand_keywords' star: a plain word is a prefix too */
    const FtsNode *pPhrase;        /* on_term: the leaf being added (a phrase's or quorum's
                                   ** prefixes: "a wor*") */
    int bExactPhrase;              /* exact_phrase: phrases' words only where they match */
    const int *pPhrasePlace;       /* on_term: the exact phrase (its index) whose words
                                   ** are being added, or NULL */
    VEC(PhraseWord) phraseWords;   /* the exact phrases' words, phrase after phrase */
    int nPhrase;                   /* how many phrases */
    LpError *err;                  /* filled on failure */
} Builder;

static int termlist_add(Builder *b, TermList *l, const char *z, int n) {
    HlTerm *a = arena_grow(b->a, l->a, l->n, &l->cap, sizeof(HlTerm), 16);
    if (!a) return lp_err_set(b->err, LP_NOMEM, "out of memory building the highlight terms");
    l->a = a;
    char *zCopy = arena_strndup(b->a, z, (size_t)n);
    if (!zCopy) return lp_err_set(b->err, LP_NOMEM, "out of memory building the highlight terms");
    l->a[l->n].z = zCopy;
    l->a[l->n].n = n;
    l->a[l->n].bGlob = 0;
    for (int i = 0; i < n; i++) l->a[l->n].bGlob |= fts_is_wild_char(z[i]);
    l->a[l->n].bGlob |= fts_match_is_regex(z, n);
    l->a[l->n].azZone = b->pZones ? b->pZones->azName : NULL;
    l->a[l->n].nZone = b->pZones ? b->pZones->nName : 0;
    l->a[l->n].aGroup = b->pGroup;
    l->a[l->n].nGroup = b->pGroup != NULL;
    l->a[l->n].aPhrase = b->pPhrasePlace;
    l->a[l->n].nPhrase = b->pPhrasePlace != NULL;
    l->n++;
    return LP_OK;
}

static int on_last(void *ctx, const Token *t) {
    Builder *b = ctx;
    memcpy(b->aLast, t->z, (size_t)t->n);
    b->nLast = t->n;
    b->iLastPos = t->iPos;
    return LP_OK;
}

static int on_term(void *ctx, const Token *t) {
    Builder *b = ctx;
    if (t->iPos >= b->iPosLimit) return LP_OK;
    const FtsNode *x = b->pPhrase;
    uint32_t lo, hi;
    if (x && fts_phrase_wildcard_at(x, t->iStart, &lo, &hi)) return LP_OK; /* a wildcard word's part */
    if (x && fts_phrase_word_is_prefix(x, t)) {
        /* a prefix in a phrase: its unstemmed text, as the planner has it */
        b->nLast = 0;
        int rc = analyzer_run_unstemmed(b->an, x->z + t->iStart, t->iEnd - t->iStart, on_last, b, b->err);
        return rc || b->nLast == 0 ? rc : termlist_add(b, &b->prefixes, b->aLast, b->nLast);
    }
    int rc = termlist_add(b, &b->terms, t->z, t->n);
    if (rc == LP_OK && b->pPhrasePlace) {
        /* the term's copy, and where it is in the phrase */
        const HlTerm *k = &b->terms.a[b->terms.n - 1];
        if (VEC_PUSH(&b->phraseWords, ((PhraseWord){k->z, k->n, t->iPos, *b->pPhrasePlace}))) {
            rc = lp_err_set(b->err, LP_NOMEM, "out of memory building the highlight terms");
        }
    }
    return rc;
}

/* Is x an exact phrase whose words are marked only where it matches
** (exact_phrase, as in Manticore, and Sphinx's query_mode): words only (no
** prefix, '*' or alternatives), no anchor, no zone or ZONESPAN limit? */
static int phrase_is_placed(const Builder *b, const FtsNode *x) {
    if (!b->bExactPhrase || x->kind != FTSN_PHRASE || x->nSlop != 0 || x->anchor || x->aMark || b->pZones ||
        b->pGroup) {
        return 0;
    }
    for (int i = 0; i < x->n; i++) {
        if (x->z[i] == '*' || x->z[i] == '(' || x->z[i] == '|') return 0;
    }
    return 1;
}

/* expand_keywords: the plain words of word, phrase or quorum x also matched as
** '*word*' or 'word*' (where the planner expands them, fts_expand_star):
** not a phrase's prefixes, nor words written '=word'. */
static int add_star_words(Builder *b, const FtsNode *x) {
    TokenList l = {{0}, {0}};
    int rc = analyzer_collect(b->an, x->z, (size_t)x->n, ANALYZE_UNSTEMMED, &l, b->err);
    for (size_t i = 0; rc == LP_OK && i < l.a.n; i++) {
        const Token *t = &l.a.a[i];
        if ((t->iEnd < (uint32_t)x->n && x->z[t->iEnd] == '*') || (t->iStart > 0 && x->z[t->iStart - 1] == '=')) {
            continue;
        }
        int star = fts_expand_star(b->an, t->z, t->n);
        if (star == FTS_STAR_PREFIX) {
            rc = termlist_add(b, &b->prefixes, t->z, t->n);
        } else if (star == FTS_STAR_INFIX) {
            char *z = fts_star_pattern(b->a, t->z, t->n);
            if (!z) {
                rc = lp_err_set(b->err, LP_NOMEM, "out of memory building the highlight terms");
                break;
            }
            rc = termlist_add(b, &b->prefixes, z, t->n + 2);
        }
    }
    token_list_free(&l);
    return rc == LP_NOMEM && !b->err->code ? lp_err_set(b->err, LP_NOMEM, "out of memory") : rc;
}

/* Adds leaf x's terms (see add_leaf). */
static int add_leaf_words(Builder *b, const FtsNode *x) {
    if (x->kind == FTSN_WILDCARD) {
        /* kept with the prefixes: a pattern has a '*', a prefix none */
        const char *z;
        int n;
        int rc = fts_wildcard_pattern(b->a, b->an, x, &z, &n, NULL, b->err);
        return rc ? rc : termlist_add(b, &b->prefixes, z, n);
    }
    if (x->kind != FTSN_PREFIX) {
        uint32_t lo, hi;
        for (uint32_t k = 0; k < (uint32_t)x->n; k++) {
            /* a phrase's wildcard words ("*ak hen"): their patterns */
            if (x->z[k] != '*' || !fts_phrase_wildcard_at(x, k, &lo, &hi)) continue;
            FtsNode w = *x;
            w.kind = FTSN_WILDCARD;
            w.z = x->z + lo;
            w.n = (int)(hi - lo);
            w.aMark = NULL;
            int rc = add_leaf_words(b, &w);
            if (rc) return rc;
            k = hi;
        }
        b->iPosLimit = UINT32_MAX;
        b->pPhrase = x;
        size_t iTerm = (size_t)b->terms.n, iWord = b->phraseWords.n;
        if (phrase_is_placed(b, x)) {
            int *pi = arena_alloc(b->a, sizeof(int));
            if (!pi) return lp_err_set(b->err, LP_NOMEM, "out of memory building the highlight terms");
            *pi = b->nPhrase;
            b->pPhrasePlace = pi;
        }
        int rc = analyzer_run_query(b->an, x->z, (size_t)x->n, x->bExact, on_term, b, b->err);
        b->pPhrase = NULL;
        if (b->pPhrasePlace) {
            if (b->phraseWords.n - iWord >= 2) {
                b->nPhrase++;
            } else {
                /* one word: marked wherever it is */
                for (size_t i = iTerm; i < (size_t)b->terms.n; i++) b->terms.a[i].aPhrase = NULL, b->terms.a[i].nPhrase = 0;
                b->phraseWords.n = iWord;
            }
            b->pPhrasePlace = NULL;
        }
        if (rc || !b->bStar) return rc;
        if (x->kind == FTSN_PHRASE || x->kind == FTSN_QUORUM
                ? x->anchor || (x->kind == FTSN_PHRASE && x->aMark) || x->bExact
                : !fts_expand_applies(x)) {
            return LP_OK;
        }
        return add_star_words(b, x);
    }
    /* A prefix may analyse to several words ("e-ma*"): the last one is the
    ** prefix, the ones before it are plain terms. */
    b->nLast = 0;
    int rc = analyzer_run_unstemmed(b->an, x->z, (size_t)x->n, on_last, b, b->err);
    if (rc || b->nLast == 0) return rc;
    if (b->iLastPos > 0) {
        b->iPosLimit = b->iLastPos;
        rc = analyzer_run_query(b->an, x->z, (size_t)x->n, x->bExact, on_term, b, b->err);
        if (rc) return rc;
    }
    return termlist_add(b, &b->prefixes, b->aLast, b->nLast);
}

/* The index of group g in b->groups, added if new; -1 when out of memory. */
static int group_index(Builder *b, const FtsNode *g) {
    for (size_t i = 0; i < b->groups.n; i++) {
        if (b->groups.a[i] == g) return (int)i;
    }
    if (VEC_PUSH(&b->groups, g)) return -1;
    return (int)b->groups.n - 1;
}

/* Adds leaf x's terms when it is positive and may match in b->iField
** (excluded words are never marked). A leaf of a ZONESPAN group whose
** limit is the group's (not a ZONE: of its own) is marked only inside
** spans where the whole group holds; the group's test is made of its
** leaves' words, noted here. */
static int add_leaf(void *ctx, const FtsNode *x, int bNegated, const FtsNode *pGroup) {
    Builder *b = ctx;
    if (bNegated) return LP_OK;
    if (b->iField >= 0 && !fts_fieldset_has(&x->fields, b->iField)) return LP_OK;
    b->pZones = x->pZones && x->pZones->nName > 0 ? x->pZones : NULL;
    b->pGroup = NULL;
    size_t iTerm = (size_t)b->terms.n, iPrefix = (size_t)b->prefixes.n;
    if (pGroup) {
        int g = group_index(b, pGroup);
        int *pg = g < 0 ? NULL : arena_alloc(b->a, sizeof(int));
        if (!pg) return lp_err_set(b->err, LP_NOMEM, "out of memory building the highlight terms");
        *pg = g;
        if (!b->pZones || b->pZones == pGroup->pSpan) {
            b->pGroup = pg;
            b->pZones = NULL;
        }
    }
    int rc = add_leaf_words(b, x);
    if (rc || !pGroup) return rc;
    for (size_t i = iTerm; i < (size_t)b->terms.n; i++) {
        if (VEC_PUSH(&b->leafWords, ((LeafWords){b->terms.a[i].z, b->terms.a[i].n, LW_TERM}))) goto nomem;
    }
    /* a word's prefix entry is its star expansion, which it may match
    ** instead (a prefix leaf's is the prefix itself) */
    int kind = x->kind == FTSN_TERM || x->kind == FTSN_PHRASE ? LW_STAR : LW_PREFIX;
    for (size_t i = iPrefix; i < (size_t)b->prefixes.n; i++) {
        if (VEC_PUSH(&b->leafWords, ((LeafWords){b->prefixes.a[i].z, b->prefixes.a[i].n, kind}))) goto nomem;
    }
    if (VEC_PUSH(&b->leaves, x) || VEC_PUSH(&b->leafEnd, (int)b->leafWords.n)) goto nomem;
    return LP_OK;
nomem:
    return lp_err_set(b->err, LP_NOMEM, "out of memory building the highlight terms");
}

static int term_cmp(const void *pa, const void *pb) {
    const HlTerm *a = pa, *b = pb;
    int c = memcmp(a->z, b->z, (size_t)(a->n < b->n ? a->n : b->n));
    return c ? c : (a->n > b->n) - (a->n < b->n);
}

/* Appends b[0..nb) to a[0..na) in the arena (a new array). */
static const void *arena_concat(Arena *ar, const void *a, int na, const void *b, int nb, size_t sz) {
    char *z = arena_alloc(ar, sz * (size_t)(na + nb));
    if (!z) return NULL;
    if (na) memcpy(z, a, sz * (size_t)na);
    if (nb) memcpy(z + sz * (size_t)na, b, sz * (size_t)nb);
    return z;
}

/* Sorts l and drops duplicates; a term kept for several leaves is marked
** anywhere when one of them has no limit, else in the places of all. */
static int termlist_unique(Builder *b, TermList *l) {
    if (l->n < 2) return LP_OK;
    qsort(l->a, (size_t)l->n, sizeof(HlTerm), term_cmp);
    int o = 1;
    for (int i = 1; i < l->n; i++) {
        HlTerm *k = &l->a[o - 1], *t = &l->a[i];
        if (term_cmp(t, k) != 0) {
            l->a[o++] = *t;
        } else if (term_anywhere(k) || term_anywhere(t)) {
            k->nZone = k->nGroup = k->nPhrase = 0;
            k->azZone = NULL;
            k->aGroup = NULL;
            k->aPhrase = NULL;
        } else {
            if (t->nPhrase) {
                k->aPhrase = arena_concat(b->a, k->aPhrase, k->nPhrase, t->aPhrase, t->nPhrase, sizeof(int));
                if (!k->aPhrase) goto nomem;
                k->nPhrase += t->nPhrase;
            }
            if (t->nZone) {
                k->azZone = arena_concat(b->a, k->azZone, k->nZone, t->azZone, t->nZone, sizeof(char *));
                if (!k->azZone) goto nomem;
                k->nZone += t->nZone;
            }
            if (t->nGroup) {
                k->aGroup = arena_concat(b->a, k->aGroup, k->nGroup, t->aGroup, t->nGroup, sizeof(int));
                if (!k->aGroup) goto nomem;
                k->nGroup += t->nGroup;
            }
        }
    }
    l->n = o;
    return LP_OK;
nomem:
    return lp_err_set(b->err, LP_NOMEM, "out of memory building the highlight terms");
}

static int term_find(const FtsHlQuery *q, const char *z, int n);

static int int_cmp(const void *pa, const void *pb) {
    int a = *(const int *)pa, b = *(const int *)pb;
    return (a > b) - (a < b);
}

/* Gives q the groups and their leaves, each leaf's words as ids of the
** sorted lists. */
static int groups_finish(Builder *b, FtsHlQuery *q) {
    if (b->groups.n == 0) return LP_OK;
    q->apGroup = arena_alloc(b->a, sizeof(FtsNode *) * b->groups.n);
    q->aLeaf = arena_alloc(b->a, sizeof(HlLeaf) * (b->leaves.n ? b->leaves.n : 1));
    int *aId = arena_alloc(b->a, sizeof(int) * (b->leafWords.n ? b->leafWords.n : 1));
    if (!q->apGroup || !q->aLeaf || !aId) {
        return lp_err_set(b->err, LP_NOMEM, "out of memory building the highlight terms");
    }
    memcpy(q->apGroup, b->groups.a, sizeof(FtsNode *) * b->groups.n);
    q->nGroup = (int)b->groups.n;
    int iWord = 0;
    for (size_t i = 0; i < b->leaves.n; i++) {
        int *a = aId + iWord, n = 0, iStar = -1;
        for (; iWord < b->leafEnd.a[i]; iWord++) {
            const LeafWords *w = &b->leafWords.a[iWord];
            int id = -1;
            if (w->kind == LW_TERM) {
                id = term_find(q, w->z, w->n);
            } else {
                for (int k = 0; k < q->nPrefix && id < 0; k++) {
                    const HlTerm *p = &q->aPrefix[k];
                    if (p->n == w->n && memcmp(p->z, w->z, (size_t)w->n) == 0) id = q->nTerm + k;
                }
            }
            /* always found: the lists hold every leaf's words */
            if (id >= 0 && w->kind == LW_STAR) {
                iStar = id;
            } else if (id >= 0) {
                a[n++] = id;
            }
        }
        qsort(a, (size_t)n, sizeof(int), int_cmp);
        int o = 0;
        for (int k = 0; k < n; k++) {
            if (o == 0 || a[o - 1] != a[k]) a[o++] = a[k];
        }
        q->aLeaf[q->nLeaf++] = (HlLeaf){b->leaves.a[i], a, o, iStar};
    }
    return LP_OK;
}

/* Gives q the exact phrases of phrase-limited terms, each word as an id
** of the sorted term list and its place after the phrase's first word. */
static int phrases_finish(Builder *b, FtsHlQuery *q) {
    if (b->nPhrase == 0) return LP_OK;
    q->aPhrase = arena_alloc(b->a, sizeof(HlPhrase) * (size_t)b->nPhrase);
    int *aId = arena_alloc(b->a, sizeof(int) * b->phraseWords.n);
    uint32_t *aOff = arena_alloc(b->a, sizeof(uint32_t) * b->phraseWords.n);
    if (!q->aPhrase || !aId || !aOff) {
        return lp_err_set(b->err, LP_NOMEM, "out of memory building the highlight terms");
    }
    for (size_t i = 0; i < b->phraseWords.n;) {
        const PhraseWord *w0 = &b->phraseWords.a[i];
        HlPhrase *ph = &q->aPhrase[w0->iPhrase];
        ph->aId = aId + i;
        ph->aOff = aOff + i;
        ph->n = 0;
        for (; i < b->phraseWords.n && b->phraseWords.a[i].iPhrase == w0->iPhrase; i++) {
            const PhraseWord *w = &b->phraseWords.a[i];
            aId[i] = term_find(q, w->z, w->n); /* always found: its leaf added it */
            aOff[i] = w->iPos - w0->iPos;
            ph->n++;
        }
    }
    q->nPhrase = b->nPhrase;
    return LP_OK;
}

int fts_hl_query_build(Arena *a, const Analyzer *an, const FtsNode *root, int iField, int expand,
                       int bExactPhrase, FtsHlQuery **pp, LpError *err) {
    *pp = NULL;
    if (iField < -1 || iField >= 256) {
        return lp_err_set(err, LP_INTERNAL, "highlight: field %d is out of range", iField);
    }
    Builder b;
    memset(&b, 0, sizeof(b));
    b.a = a;
    b.an = an;
    b.iField = iField;
    b.bStar = (expand & FTS_EXPAND_STAR) != 0;
    b.bExactPhrase = bExactPhrase;
    b.err = err;
    int rc = fts_match_leaves_grouped(root, add_leaf, &b);
    if (rc == LP_OK) rc = termlist_unique(&b, &b.terms);
    if (rc == LP_OK) rc = termlist_unique(&b, &b.prefixes);
    FtsHlQuery *q = NULL;
    if (rc == LP_OK && !(q = arena_zalloc(a, sizeof(FtsHlQuery)))) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory building the highlight terms");
    }
    if (rc == LP_OK) {
        q->aTerm = b.terms.a;
        q->nTerm = b.terms.n;
        q->aPrefix = b.prefixes.a;
        q->nPrefix = b.prefixes.n;
        for (int i = 0; i < q->nTerm + q->nPrefix; i++) {
            const HlTerm *t = i < q->nTerm ? &q->aTerm[i] : &q->aPrefix[i - q->nTerm];
            q->bZones |= !term_anywhere(t);
            q->bSpans |= t->nZone > 0 || t->nGroup > 0;
        }
        rc = groups_finish(&b, q);
    }
    if (rc == LP_OK) rc = phrases_finish(&b, q);
    VEC_FREE(&b.phraseWords);
    VEC_FREE(&b.groups);
    VEC_FREE(&b.leafWords);
    VEC_FREE(&b.leafEnd);
    VEC_FREE(&b.leaves);
    if (rc == LP_OK) *pp = q;
    return rc;
}

/* Id of the term z[0..n), or -1. */
static int term_find(const FtsHlQuery *q, const char *z, int n) {
    if (q->nTerm == 0) return -1; /* bsearch may not be given a NULL array */
    HlTerm key = {z, n, 0, NULL, 0, NULL, 0, NULL, 0};
    const HlTerm *p = bsearch(&key, q->aTerm, (size_t)q->nTerm, sizeof(HlTerm), term_cmp);
    return p ? (int)(p - q->aTerm) : -1;
}

/* Id of the first prefix that z[0..n) starts with, or wildcard pattern
** it matches, or -1. */
static int prefix_find(const FtsHlQuery *q, const char *z, int n) {
    for (int i = 0; i < q->nPrefix; i++) {
        const HlTerm *p = &q->aPrefix[i];
        if (p->bGlob ? fts_glob_match(p->z, p->n, (const uint8_t *)z, n)
                     : p->n <= n && memcmp(p->z, z, (size_t)p->n) == 0) {
            return q->nTerm + i;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* Text side                                                           */

typedef struct HlWord {
    uint32_t iStart, iEnd; /* bytes of the word in the text */
    uint32_t cStart, cEnd; /* the same in characters */
    uint32_t iPos;         /* its position (as the index numbers it) ... */
    uint32_t iPosLast;     /* ... to this one: a word whose word form has
                           ** several words takes their positions */
    uint32_t iPosRaw;      /* its position among the text's words */
    int bTerm;             /* a term of the index run gave it its positions */
    int id;                /* the query term it matches, or -1 */
    int pid;               /* the prefix it matches (an id), or -1; looked up only
                           ** when no term matches it or for ZONESPAN groups */
    uint32_t seg;          /* its part of the text between passage boundaries
                           ** (passage_boundary; 0 without) */
    uint32_t iTail;        /* a passage ending at it ends at this byte instead (the
                           ** punctuation that ends its sentence), or 0 */
} HlWord;

/* A passage boundary (passage_boundary) among the positions: before
** position p (key 2p: a sentence or paragraph's own position, a zone span's
** first word) or after it (2p + 1: a span's last word). */
typedef struct HlCut {
    uint64_t key;
} HlCut;

/* A zone met in the text: its name, and its first span still open. */
typedef struct HlZone {
    size_t iName;         /* the element's name, lower case: Hl.spanNames at iName ... */
    int nName;            /* ... this many bytes */
    int iOpen;            /* the first of its spans not closed yet, or -1 */
} HlZone;

/* A zone's span in the text: words at positions first..last (the
** analyzer's span terms, analyzer_run_doc). */
typedef struct HlSpan {
    int iZone;            /* its zone: Hl.zones.a[iZone] */
    uint32_t first, last; /* last: UINT32_MAX until its end is read */
} HlSpan;

/* Positions lo..hi: a span of the zones a limit names (overlapping spans
** of those zones joined into one, as the search joins them). */
typedef struct HlInterval {
    uint32_t lo, hi;
} HlInterval;

/* A range of Hl.held: held.a[from .. to). */
typedef struct HlRange {
    int from, to;
} HlRange;

/* A passage: words lo..hi, or (cut) bytes [iStart, iEnd). */
typedef struct Cand {
    int lo, hi;            /* first and last word */
    int m0, m1;            /* its marked words: aMatch[m0..m1) */
    int nDistinct;         /* distinct terms among them */
    int nNew;              /* of those, not shown yet (may be stale: an upper bound) */
    uint32_t iStart, iEnd; /* bytes, set when chosen */
} Cand;

/* A term of the text as the index has it that a query term matches. */
typedef struct HlTok {
    int id;
    uint32_t iPos;
} HlTok;

typedef struct Hl {
    const FtsHlQuery *q;   /* what to mark */
    const FtsHlOptions *o; /* how */
    const char *z;         /* the text */
    uint32_t n;            /* its length in bytes */
    uint32_t nChars;       /* ... and in characters */
    const Analyzer *an;    /* the table's */
    int bStemmed;          /* the analyzer stems or renumbers: step 1
                           ** needs two runs */
    VEC(HlWord) words;     /* every word, in text order */
    int bRenumber;         /* word forms, or stop words that take no position:
                           ** the index numbers terms, not words; words
                           ** take their terms' positions */
    VEC(HlTok) toks;       /* the second run's terms a query term matches,
                           ** in position order (read with bRenumber) */
    uint32_t iScan, cScan; /* counting characters: byte iScan is character cScan */
    int iCur;              /* the second run's position in words */
    int *aMatch;           /* indices of the marked words, ascending */
    int nMatch;            /* how many */
    Cand *aCand;           /* candidate passages */
    int nCand;             /* how many */
    unsigned char *aShown; /* per term id: in a chosen passage */
    uint32_t *aStamp;      /* per term id: scratch for distinct counts */
    const int *aGid;       /* texts sharing limits: each term id's id among all
                           ** their queries' terms, which aShown and aStamp are
                           ** indexed by (NULL: the id itself) ... */
    uint32_t *piStamp;     /* ... and the last stamp they used (NULL: iStamp) */
    uint32_t iStamp;       /* the last stamp used */
    StrBuf *out;           /* the result is appended here */
    int bIdMacro;          /* a tag holds %PASSAGE_ID% or %SNIPPET_ID% */
    int64_t iPassageId;    /* the next marked word's number in the output */
    LpError *err;          /* filled on failure */
    VEC(HlSpan) spans;     /* zone spans (only when the query has zone limits) */
    VEC(HlZone) zones;     /* their zones */
    StrBuf spanNames;      /* the zones' names, back to back */
    VEC(HlInterval) held;  /* the places of limited words (places_build) ... */
    HlRange *aGroupPlace;  /* ... each ZONESPAN group's: held.a[from .. to) */
    HlRange *aZonePlace;   /* ... and each term id's zones' */
    HlRange *aPhrasePlace; /* ... and each exact phrase's matches */
    VEC(HlCut) cuts;       /* passage boundaries (passage_boundary) */
    const uint32_t *aMap;  /* html_strip_mode retain: where each byte of z came
                           ** from in zOrig (html_strip_map, then the rules') */
    const char *zOrig;     /* the text as stored */
    uint32_t nOrig;
    const uint32_t *aSrc;  /* regexp_filter rules rewrote the text read (other
                           ** modes than retain): where each byte of z came
                           ** from in zShow, the text before them, which is
                           ** what is shown (NULL: z is shown) ... */
    const char *zShow;
    uint32_t nShow;
    uint32_t iShown;       /* ... how much of zShow is written, and */
    uint32_t iRead;        /* ... the end in z of the last bytes shown */
    FtsHlStats st;         /* what was shown */
} Hl;

static int hl_nomem(Hl *h) {
    return lp_err_set(h->err, LP_NOMEM, "out of memory highlighting a text");
}

/* Characters in z[from..to): bytes that do not continue a character. */
static uint32_t count_chars(const char *z, uint32_t from, uint32_t to) {
    uint32_t c = 0;
    for (uint32_t i = from; i < to; i++)
        c += ((unsigned char)z[i] & 0xC0) != 0x80;
    return c;
}

/* The byte offset k characters after byte from (or the end). */
static uint32_t skip_chars(const Hl *h, uint32_t from, uint32_t k) {
    uint32_t i = from;
    while (i < h->n && k > 0) {
        i++;
        while (i < h->n && ((unsigned char)h->z[i] & 0xC0) == 0x80)
            i++;
        k--;
    }
    return i;
}

static int on_word(void *ctx, const Token *t) {
    Hl *h = ctx;
    if (VEC_RESERVE(&h->words, h->words.n + 1)) return hl_nomem(h);
    HlWord *w = &h->words.a[h->words.n++];
    w->iStart = t->iStart;
    w->iEnd = t->iEnd;
    w->iPos = w->iPosLast = w->iPosRaw = t->iPos;
    w->bTerm = 0;
    w->seg = w->iTail = 0;
    h->cScan += count_chars(h->z, h->iScan, t->iStart);
    w->cStart = h->cScan;
    h->cScan += count_chars(h->z, t->iStart, t->iEnd);
    w->cEnd = h->cScan;
    h->iScan = t->iEnd;
    w->id = h->bStemmed ? -1 : term_find(h->q, t->z, t->n);
    w->pid = h->q->nPrefix && (w->id < 0 || h->q->nGroup) ? prefix_find(h->q, t->z, t->n) : -1;
    /* a stop word (or one under min_word_len) fits no prefix: not indexed */
    if (w->pid >= 0 && !analyzer_word_indexed(h->an, t->z, t->n)) w->pid = -1;
    if (w->id < 0) w->id = w->pid;
    return LP_OK;
}

/* The second run's term t: matched to the first word its bytes overlap.
** That is the word that starts where it does, but for a blend token's
** forms and parts (trim_head's "at&t" in "&at&t", the part "t"), which lie
** in the one word the first run gives for the token (itself one of its
** forms, so trim_tail's "@dude" starts before trim_head's "dude!"), in no
** order among themselves. */
static int on_stemmed(void *ctx, const Token *t) {
    Hl *h = ctx;
    int b = h->o->boundary;
    if ((b == FTS_HL_BOUNDARY_SENTENCE || b == FTS_HL_BOUNDARY_PARAGRAPH) && t->z[0] == '.') {
        /* a boundary's term (index_sp): no word's term starts with '.' */
        int bPara = t->n == (int)strlen(ANALYZER_PARAGRAPH);
        if (b == FTS_HL_BOUNDARY_SENTENCE || bPara) {
            HlCut c = {2 * (uint64_t)t->iPos};
            if (VEC_PUSH(&h->cuts, c)) return hl_nomem(h);
        }
        return LP_OK;
    }
    int n = (int)h->words.n;
    while (h->iCur + 1 < n && h->words.a[h->iCur + 1].iStart <= t->iStart)
        h->iCur++;
    int k0 = h->iCur;
    if (k0 < n && h->words.a[k0].iEnd <= t->iStart) k0++;
    if (k0 < n && h->words.a[k0].iStart < t->iEnd && t->iStart < h->words.a[k0].iEnd) {
        int id = term_find(h->q, t->z, t->n);
        if (id >= 0 && VEC_PUSH(&h->toks, ((HlTok){id, t->iPos}))) return hl_nomem(h);
        /* a word form's term stands for every word of its source */
        for (int k = k0; k < n && h->words.a[k].iStart < t->iEnd; k++) {
            HlWord *w = &h->words.a[k];
            if (id >= 0) w->id = id;
            if (!h->bRenumber) continue;
            if (!w->bTerm) w->iPos = t->iPos;
            w->iPosLast = t->iPos;
            w->bTerm = 1;
        }
    }
    return LP_OK;
}

/* With bRenumber: the words no term numbered (stop words) take the
** positions their neighbours' shift gives them, so positions still rise
** with the text. */
static void renumber_rest(Hl *h) {
    int64_t shift = 0;
    for (size_t k = 0; k < h->words.n; k++) {
        HlWord *w = &h->words.a[k];
        if (w->bTerm) {
            shift = (int64_t)w->iPosLast - (int64_t)w->iPosRaw;
        } else {
            int64_t p = (int64_t)w->iPosRaw + shift;
            w->iPos = w->iPosLast = p < 0 ? 0 : (uint32_t)p;
        }
    }
}

/* analyzer_run_doc's tokens: keeps the zones' span terms, '<h1' at a
** span's first word and '</h1' at its last. It gives each name's starts,
** then its ends, both in order, and a name's spans do not overlap, so an
** end closes the first span of its name still open (the k-th end the k-th
** start). */
static int on_zone_term(void *ctx, const Token *t) {
    Hl *h = ctx;
    if (t->n < 2 || t->z[0] != ANALYZER_ZONE_MARK) return LP_OK;
    int bClose = t->z[1] == '/';
    const char *zName = t->z + 1 + bClose;
    int nName = t->n - 1 - bClose, iz = 0;
    for (; iz < (int)h->zones.n; iz++) {
        const HlZone *zn = &h->zones.a[iz];
        if (zn->nName == nName && memcmp(h->spanNames.z + zn->iName, zName, (size_t)nName) == 0) break;
    }
    if (bClose) {
        HlZone *zn = iz < (int)h->zones.n ? &h->zones.a[iz] : NULL;
        if (!zn || zn->iOpen < 0) return LP_OK;
        h->spans.a[zn->iOpen].last = t->iPos;
        /* its spans end in the order they start: the next one is open */
        int j = zn->iOpen + 1;
        while (j < (int)h->spans.n && h->spans.a[j].iZone != iz) j++;
        zn->iOpen = j < (int)h->spans.n ? j : -1;
        return LP_OK;
    }
    if (iz == (int)h->zones.n) {
        if (VEC_PUSH(&h->zones, ((HlZone){h->spanNames.n, nName, -1}))) return hl_nomem(h);
        strbuf_append(&h->spanNames, zName, (size_t)nName);
        if (h->spanNames.oom) return hl_nomem(h);
    }
    if (VEC_PUSH(&h->spans, ((HlSpan){iz, t->iPos, UINT32_MAX}))) return hl_nomem(h);
    if (h->zones.a[iz].iOpen < 0) h->zones.a[iz].iOpen = (int)h->spans.n - 1;
    return LP_OK;
}

/* Is span sp (of h) a span of one of the zones azName[0..nName)? */
static int span_named(const Hl *h, const HlSpan *sp, const char *const *azName, int nName) {
    const HlZone *zn = &h->zones.a[sp->iZone];
    for (int z = 0; z < nName; z++) {
        if ((int)strlen(azName[z]) == zn->nName &&
            memcmp(azName[z], h->spanNames.z + zn->iName, (size_t)zn->nName) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The leaf x of a group, or NULL (it cannot match in this field). */
static const HlLeaf *leaf_of(const FtsHlQuery *q, const FtsNode *x) {
    for (int i = 0; i < q->nLeaf; i++) {
        if (q->aLeaf[i].x == x) return &q->aLeaf[i];
    }
    return NULL;
}

/* Does x (a group or a node inside one) hold in a span whose words'
** ids have aStamp[id] == iStamp? As the highlighter compares words, not
** positions: a phrase or NEAR holds where all its words are, a quorum
** where enough of its distinct words are; negations are not tested. */
static int group_holds(const Hl *h, const FtsNode *x) {
    switch (x->kind) {
    case FTSN_TERM:
    case FTSN_PREFIX:
    case FTSN_WILDCARD:
    case FTSN_PHRASE:
    case FTSN_QUORUM: {
        const HlLeaf *l = leaf_of(h->q, x);
        if (!l) return 0;
        if (l->iStar >= 0 && h->aStamp[l->iStar] == h->iStamp) return 1;
        int nIn = 0;
        for (int k = 0; k < l->nId; k++) nIn += h->aStamp[l->aId[k]] == h->iStamp;
        int nNeed = l->nId;
        if (x->kind == FTSN_QUORUM && l->nId > 0) {
            nNeed = x->nQuorum ? x->nQuorum : (int)(x->fQuorum * l->nId + 0.5);
            if (nNeed < 1) nNeed = 1;
            if (nNeed > l->nId) nNeed = l->nId;
        }
        return nIn >= nNeed;
    }
    case FTSN_NOT:
        return 1;
    case FTSN_OR:
        for (int k = 0; k < x->nChild; k++) {
            if (group_holds(h, x->aChild[k])) return 1;
        }
        return 0;
    case FTSN_MAYBE:
        return group_holds(h, x->aChild[0]);
    default: /* AND, BEFORE, ORDER, NEAR (NOTNEAR: its first operand), SENTENCE, PARAGRAPH */
        for (int k = 0; k < x->nChild; k++) {
            if (!(x->bNotNear && k == 1) && !group_holds(h, x->aChild[k])) return 0;
        }
        return 1;
    }
}

static int interval_cmp(const void *pa, const void *pb) {
    const HlInterval *a = pa, *b = pb;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Appends to h->held the spans of the zones azName[0..nName), ascending,
** overlapping ones joined (as the search joins them); returns how many,
** or -1 when out of memory. */
static int join_spans(Hl *h, const char *const *azName, int nName) {
    size_t iFirst = h->held.n;
    for (size_t i = 0; i < h->spans.n; i++) {
        const HlSpan *sp = &h->spans.a[i];
        if (span_named(h, sp, azName, nName) && VEC_PUSH(&h->held, ((HlInterval){sp->first, sp->last}))) {
            return -1;
        }
    }
    size_t n = h->held.n - iFirst, o = 0;
    if (n == 0) return 0;
    HlInterval *a = h->held.a + iFirst;
    qsort(a, n, sizeof(HlInterval), interval_cmp);
    for (size_t i = 0; i < n; i++) {
        if (o > 0 && a[i].lo <= a[o - 1].hi) {
            if (a[i].hi > a[o - 1].hi) a[o - 1].hi = a[i].hi;
        } else {
            a[o++] = a[i];
        }
    }
    h->held.n = iFirst + o;
    return (int)o;
}

/* Does one of the spans h->held.a[r.from .. r.to) (ascending, disjoint)
** hold a position of iPos..iLast? */
static int in_spans(const Hl *h, HlRange r, uint32_t iPos, uint32_t iLast) {
    if (r.from == r.to) return 0; /* (held.a may be NULL) */
    const HlInterval *a = h->held.a + r.from;
    int n = r.to - r.from, lo = 0, hi = n;
    while (lo < hi) { /* the first span ending at or after iPos */
        int mid = lo + (hi - lo) / 2;
        if (a[mid].hi < iPos) lo = mid + 1; else hi = mid;
    }
    return lo < n && a[lo].lo <= iLast;
}

/* The term (or prefix) of id. */
static const HlTerm *term_of(const FtsHlQuery *q, int id) {
    return id < q->nTerm ? &q->aTerm[id] : &q->aPrefix[id - q->nTerm];
}

/* The places of the query's limited words, into h->held: for each
** ZONESPAN group, the joined spans of its zones where the whole group
** holds (h->aGroupPlace[g]); for each term id with zones, the joined spans
** of them (h->aZonePlace[id]; ids whose terms share a zone list share its
** spans). */
static int places_build(Hl *h) {
    const FtsHlQuery *q = h->q;
    int nId = q->nTerm + q->nPrefix;
    h->aGroupPlace = malloc(sizeof(HlRange) * (size_t)(q->nGroup ? q->nGroup : 1));
    h->aZonePlace = malloc(sizeof(HlRange) * (size_t)(nId ? nId : 1));
    /* the groups' test stamps the ids present in a span */
    h->aStamp = q->nGroup ? calloc((size_t)(nId ? nId : 1), sizeof(uint32_t)) : NULL;
    if (!h->aGroupPlace || !h->aZonePlace || (q->nGroup && !h->aStamp)) return hl_nomem(h);
    for (int g = 0; g < q->nGroup; g++) {
        const FtsZones *zs = q->apGroup[g]->pSpan;
        int iFirst = (int)h->held.n;
        int n = join_spans(h, zs->azName, zs->nName);
        if (n < 0) return hl_nomem(h);
        /* Keep the joined spans where the group holds: stamp the ids of
        ** the words inside (words is in position order), then test. */
        HlInterval *a = n ? h->held.a + iFirst : NULL;
        int kept = 0, k = 0;
        for (int i = 0; i < n; i++) {
            h->iStamp++;
            while (k < (int)h->words.n && h->words.a[k].iPos < a[i].lo) k++;
            for (int j = k; j < (int)h->words.n && h->words.a[j].iPos <= a[i].hi; j++) {
                if (h->words.a[j].id >= 0) h->aStamp[h->words.a[j].id] = h->iStamp;
                if (h->words.a[j].pid >= 0) h->aStamp[h->words.a[j].pid] = h->iStamp;
            }
            if (group_holds(h, q->apGroup[g])) a[kept++] = a[i];
        }
        h->held.n = (size_t)(iFirst + kept);
        h->aGroupPlace[g] = (HlRange){iFirst, iFirst + kept};
    }
    for (int id = 0; id < nId; id++) {
        const HlTerm *t = term_of(q, id);
        int j = 0;
        while (j < id && !(term_of(q, j)->azZone == t->azZone && term_of(q, j)->nZone == t->nZone)) j++;
        if (t->nZone == 0 || j < id) {
            h->aZonePlace[id] = t->nZone ? h->aZonePlace[j] : (HlRange){0, 0};
            continue;
        }
        int iFirst = (int)h->held.n;
        int n = join_spans(h, t->azZone, t->nZone);
        if (n < 0) return hl_nomem(h);
        h->aZonePlace[id] = (HlRange){iFirst, iFirst + n};
    }
    /* each placed phrase's matches: where its first word is, and each
    ** other word at its place after it. With word forms, over the second
    ** run's terms (a word form's words each have their own position
    ** there), else over the words; either list is in position order. */
    if (q->nPhrase && !(h->aPhrasePlace = malloc(sizeof(HlRange) * (size_t)q->nPhrase))) return hl_nomem(h);
    for (int p = 0; p < q->nPhrase; p++) {
        const HlPhrase *ph = &q->aPhrase[p];
        int iFirst = (int)h->held.n;
        int bToks = h->bRenumber, n = bToks ? (int)h->toks.n : (int)h->words.n;
        for (int k = 0; k < n; k++) {
            if ((bToks ? h->toks.a[k].id : h->words.a[k].id) != ph->aId[0]) continue;
            uint32_t start = bToks ? h->toks.a[k].iPos : h->words.a[k].iPos;
            int ok = 1, j = k;
            for (int w = 1; w < ph->n && ok; w++) {
                uint32_t want = start + ph->aOff[w];
                /* the entries at that place: the one with the word's id */
                while (j < n && (bToks ? h->toks.a[j].iPos : h->words.a[j].iPos) < want) j++;
                int m = j;
                ok = 0;
                while (!ok && m < n && (bToks ? h->toks.a[m].iPos : h->words.a[m].iPos) == want) {
                    ok = (bToks ? h->toks.a[m].id : h->words.a[m].id) == ph->aId[w];
                    m++;
                }
            }
            if (ok && VEC_PUSH(&h->held, ((HlInterval){start, start + ph->aOff[ph->n - 1]}))) return hl_nomem(h);
        }
        h->aPhrasePlace[p] = (HlRange){iFirst, (int)h->held.n};
    }
    /* the passages' choice starts its own stamps from zero */
    free(h->aStamp);
    h->aStamp = NULL;
    h->iStamp = 0;
    return LP_OK;
}

/* Is position iPos inside one of the places of word id? */
static int in_place(const Hl *h, int id, uint32_t iPos, uint32_t iLast) {
    const HlTerm *t = term_of(h->q, id);
    if (in_spans(h, h->aZonePlace[id], iPos, iLast)) return 1;
    for (int i = 0; i < t->nGroup; i++) {
        if (in_spans(h, h->aGroupPlace[t->aGroup[i]], iPos, iLast)) return 1;
    }
    for (int i = 0; i < t->nPhrase; i++) {
        if (in_spans(h, h->aPhrasePlace[t->aPhrase[i]], iPos, iLast)) return 1;
    }
    return 0;
}

/* With limits in the query: reads the zones' spans from the text as
** stored (zOrig, markup and all) and unmarks each word that a limited
** term marked outside its places. */
static int apply_zones(Hl *h, const Analyzer *an, const char *zOrig, size_t nOrig, int bSpans) {
    int rc = bSpans ? analyzer_run_doc(an, zOrig, nOrig, 0, on_zone_term, h, NULL, h->err) : LP_OK;
    if (rc == LP_OK) rc = places_build(h);
    for (int k = 0; rc == LP_OK && k < (int)h->words.n; k++) {
        HlWord *w = &h->words.a[k];
        if (w->id >= 0 && !term_anywhere(term_of(h->q, w->id)) && !in_place(h, w->id, w->iPos, w->iPosLast)) {
            w->id = -1;
        }
    }
    return rc;
}

static int cut_cmp(const void *pa, const void *pb) {
    const HlCut *a = pa, *b = pb;
    return (a->key > b->key) - (a->key < b->key);
}

/* passage_boundary, use_boundaries: each word's part of the text (the
** boundaries before it), and where a passage ending at the last word of
** a sentence, paragraph or phrase ends. */
static int assign_segments(Hl *h) {
    if (h->o->boundary == FTS_HL_BOUNDARY_ZONE) {
        for (size_t i = 0; i < h->spans.n; i++) {
            const HlSpan *sp = &h->spans.a[i];
            if (VEC_PUSH(&h->cuts, ((HlCut){2 * (uint64_t)sp->first}))) return hl_nomem(h);
            if (sp->last != UINT32_MAX && VEC_PUSH(&h->cuts, ((HlCut){2 * (uint64_t)sp->last + 1}))) {
                return hl_nomem(h);
            }
        }
    }
    int bPhrase = h->o->bUseBoundaries;
    if (h->cuts.n == 0 && !bPhrase) return LP_OK;
    if (h->cuts.n) qsort(h->cuts.a, h->cuts.n, sizeof(HlCut), cut_cmp);
    size_t c = 0;
    uint32_t nPhrase = 0; /* use_boundaries: the phrase boundaries so far */
    for (size_t k = 0; k < h->words.n; k++) {
        HlWord *w = &h->words.a[k];
        while (c < h->cuts.n && h->cuts.a[c].key <= 2 * (uint64_t)w->iPos) c++;
        if (bPhrase && k > 0) {
            nPhrase += (uint32_t)analyzer_gap_is_phrase_boundary(h->an, h->z, h->words.a[k - 1].iEnd, w->iStart);
        }
        w->seg = (uint32_t)c + nPhrase;
    }
    /* the last word before a sentence's, paragraph's or phrase's end: what
    ** ends it follows ("five.", "five,"), up to white space; not before a
    ** zone's edge, which keeps what follows outside (use_boundaries does
    ** not come with passage_boundary) */
    if (h->o->boundary == FTS_HL_BOUNDARY_ZONE) return LP_OK;
    for (size_t k = 0; k + 1 < h->words.n; k++) {
        HlWord *w = &h->words.a[k];
        const HlWord *x = &h->words.a[k + 1];
        if (x->seg == w->seg) continue;
        uint32_t e = w->iEnd, next = x->iStart;
        while (e < next && !strchr(" \t\r\n\f\v", h->z[e])) e++;
        if (e > w->iEnd) w->iTail = e;
    }
    return LP_OK;
}

/* Bytes and characters of the passage lo..hi: the first word's start (the
** text's start for word 0) to the last word's end (the text's end for the
** last word), so edge punctuation is kept. */
static uint32_t span_start(const Hl *h, int lo) {
    return lo == 0 ? 0 : h->words.a[lo].iStart;
}
static uint32_t span_end(const Hl *h, int hi) {
    const HlWord *w = &h->words.a[hi];
    return hi == (int)h->words.n - 1 ? h->n : w->iTail ? w->iTail : w->iEnd;
}
static uint32_t span_chars(const Hl *h, int lo, int hi) {
    const HlWord *w = &h->words.a[hi];
    uint32_t c0 = lo == 0 ? 0 : h->words.a[lo].cStart;
    uint32_t c1 = hi == (int)h->words.n - 1 ? h->nChars
                  : w->iTail                 ? w->cEnd + count_chars(h->z, w->iEnd, w->iTail)
                                             : w->cEnd;
    return c1 - c0;
}

/* Do words lo..hi fit in nChars characters and nWords words (each < 0:
** no limit)? */
static int span_fits(const Hl *h, int lo, int hi, int64_t nChars, int64_t nWords) {
    return (nWords < 0 || hi - lo + 1 <= nWords) && (nChars < 0 || span_chars(h, lo, hi) <= nChars);
}

/* An option's limit as a budget: 0 (none) is -1, no limit. */
static int64_t budget_of(int limit) {
    return limit > 0 ? limit : -1;
}

static int gid_of(const Hl *h, int id) {
    return h->aGid ? h->aGid[id] : id;
}

/* Distinct terms among c's marked words within lo..hi; bNew: only those
** not shown yet. */
static int count_terms(Hl *h, const Cand *c, int bNew) {
    uint32_t stamp = h->piStamp ? ++*h->piStamp : ++h->iStamp;
    int n = 0;
    for (int j = c->m0; j < c->m1; j++) {
        int iw = h->aMatch[j];
        if (iw < c->lo || iw > c->hi) continue;
        int id = gid_of(h, h->words.a[iw].id);
        if (h->aStamp[id] == stamp || (bNew && h->aShown[id])) continue;
        h->aStamp[id] = stamp;
        n++;
    }
    return n;
}

/* Is passage x better than y on what they show: more new terms, more
** distinct terms, more marked words? 1 (x), -1 (y), or 0 (a tie). */
static int cand_rank(const Cand *x, const Cand *y) {
    if (x->nNew != y->nNew) return x->nNew > y->nNew ? 1 : -1;
    if (x->nDistinct != y->nDistinct) return x->nDistinct > y->nDistinct ? 1 : -1;
    if (x->m1 - x->m0 != y->m1 - y->m0) return x->m1 - x->m0 > y->m1 - y->m0 ? 1 : -1;
    return 0;
}

/* Step 2: windows around the marked words, joined while they fit. */
static int build_candidates(Hl *h) {
    h->aCand = malloc(sizeof(Cand) * (size_t)h->nMatch);
    if (!h->aCand) return hl_nomem(h);
    int64_t around = h->o->around;
    for (int j = 0; j < h->nMatch; j++) {
        int m = h->aMatch[j];
        int lo = (int)(m - around < 0 ? 0 : m - around);
        int hi = (int)(m + around > (int)h->words.n - 1 ? (int)h->words.n - 1 : m + around);
        uint32_t seg = h->words.a[m].seg; /* a window stays within its part */
        while (h->words.a[lo].seg != seg) lo++;
        while (h->words.a[hi].seg != seg) hi--;
        Cand *c = h->nCand ? &h->aCand[h->nCand - 1] : NULL;
        if (c && lo <= c->hi + 1 && h->words.a[c->lo].seg == seg &&
            span_fits(h, c->lo, hi, budget_of(h->o->limit), budget_of(h->o->limitWords))) {
            if (hi > c->hi) c->hi = hi;
            c->m1 = j + 1;
            continue;
        }
        c = &h->aCand[h->nCand++];
        memset(c, 0, sizeof(*c));
        c->lo = lo;
        c->hi = hi;
        c->m0 = j;
        c->m1 = j + 1;
    }
    for (int k = 0; k < h->nCand; k++) {
        Cand *c = &h->aCand[k];
        c->nDistinct = c->nNew = count_terms(h, c, 0);
    }
    return LP_OK;
}

/* Shrinks c to at most budget characters and nWords words (each < 0: no
** limit) around its first marked word with a term not shown yet (else its
** first). A word longer than the budget is cut inside only for the first
** passage (bCut); otherwise the passage is dropped (returns 0). */
static int shrink(Hl *h, Cand *c, int64_t budget, int64_t nWords, int bCut) {
    int a = h->aMatch[c->m0];
    for (int j = c->m0; j < c->m1; j++) {
        if (!h->aShown[gid_of(h, h->words.a[h->aMatch[j]].id)]) {
            a = h->aMatch[j];
            break;
        }
    }
    if (budget >= 0 && span_chars(h, a, a) > budget) {
        if (!bCut) return 0;
        c->lo = c->hi = a;
        c->iStart = h->words.a[a].iStart;
        c->iEnd = skip_chars(h, c->iStart, (uint32_t)budget);
        return 1;
    }
    int lo = a, hi = a, bGrew;
    do {
        bGrew = 0;
        if (hi < c->hi && span_fits(h, lo, hi + 1, budget, nWords)) hi++, bGrew = 1;
        if (lo > c->lo && span_fits(h, lo - 1, hi, budget, nWords)) lo--, bGrew = 1;
    } while (bGrew);
    c->lo = lo;
    c->hi = hi;
    c->iStart = span_start(h, lo);
    c->iEnd = span_end(h, hi);
    return 1;
}

/* Copies z[from..to) to the output, HTML-escaped when asked. */
static void emit_bytes(Hl *h, const char *z, uint32_t from, uint32_t to) {
    if (!h->o->bEscapeHtml) {
        strbuf_append(h->out, z + from, to - from);
        return;
    }
    uint32_t i0 = from;
    for (uint32_t i = from; i < to; i++) {
        const char *zRep;
        switch (z[i]) {
        case '&':
            zRep = "&amp;";
            break;
        case '<':
            zRep = "&lt;";
            break;
        case '>':
            zRep = "&gt;";
            break;
        case '"':
            zRep = "&quot;";
            break;
        case '\'':
            zRep = "&#39;";
            break;
        default:
            continue;
        }
        strbuf_append(h->out, z + i0, i - i0);
        strbuf_appendz(h->out, zRep);
        i0 = i + 1;
    }
    strbuf_append(h->out, z + i0, to - i0);
}

/* With regexp_filter rules: where the boundary before byte p of the text
** read lies in the text shown. A boundary inside a replacement's bytes
** lies at the start of what it replaced, or with bUp at its end; the
** text's start and end at the shown text's. */
static uint32_t shown_at(const Hl *h, uint32_t p, int bUp) {
    if (p == 0) return 0;
    if (p >= h->n) return h->nShow;
    return bUp ? h->aSrc[2 * (size_t)p - 1] : h->aSrc[2 * (size_t)p];
}

/* With regexp_filter rules: the first byte of the text shown that
** z[from..) was read from and is not shown yet; where from follows what
** was shown last, the text the rules dropped there too. */
static uint32_t shown_from(const Hl *h, uint32_t from) {
    if (from == h->iRead) return h->iShown;
    uint32_t lo = shown_at(h, from, 0);
    return lo > h->iShown ? lo : h->iShown;
}

/* Shows z[from..to): those bytes, or with regexp_filter rules, the text
** they were read from that is not shown yet (bUp: a replacement cut at
** `to` shown whole). */
static void emit_text(Hl *h, uint32_t from, uint32_t to, int bUp) {
    if (!h->aSrc) {
        emit_bytes(h, h->z, from, to);
        return;
    }
    uint32_t lo = shown_from(h, from), hi = shown_at(h, to, bUp);
    h->iRead = to;
    h->iShown = lo; /* what a jump to `from` left out stays out */
    if (hi <= lo) return;
    emit_bytes(h, h->zShow, lo, hi);
    h->iShown = hi;
}

/* Appends a tag, its %PASSAGE_ID% and %SNIPPET_ID% replaced by the
** current match's number. */
static void emit_tag(Hl *h, const char *zTag) {
    if (!h->bIdMacro) {
        strbuf_appendz(h->out, zTag);
        return;
    }
    for (const char *p = zTag; *p;) {
        const char *m = strchr(p, '%');
        if (!m) {
            strbuf_appendz(h->out, p);
            break;
        }
        strbuf_append(h->out, p, (size_t)(m - p));
        if (strncmp(m, "%PASSAGE_ID%", 12) == 0 || strncmp(m, "%SNIPPET_ID%", 12) == 0) {
            strbuf_appendf(h->out, "%lld", (long long)h->iPassageId);
            p = m + 12;
        } else {
            strbuf_appendc(h->out, '%');
            p = m + 1;
        }
    }
}

/* Copies bytes [from, to) with the marked words in it wrapped in tags. */
static void emit_range(Hl *h, uint32_t from, uint32_t to) {
    /* The first word ending after `from` (binary search). */
    int lo = 0, hi = (int)h->words.n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (h->words.a[mid].iEnd <= from) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    uint32_t i = from;
    for (int k = lo; k < (int)h->words.n && h->words.a[k].iStart < to; k++) {
        const HlWord *w = &h->words.a[k];
        if (w->id < 0) continue;
        uint32_t s = w->iStart > from ? w->iStart : from;
        uint32_t e = w->iEnd < to ? w->iEnd : to;
        emit_text(h, i, s, 0);
        i = e;
        /* a word from a replacement shown already (with a word before it
        ** from the same one) gets no tags of its own */
        if (h->aSrc && shown_at(h, e, 1) <= shown_from(h, s)) {
            emit_text(h, s, e, 1); /* nothing: only where the text read is */
            continue;
        }
        emit_tag(h, h->o->zBefore);
        emit_text(h, s, e, 1);
        emit_tag(h, h->o->zAfter);
        h->iPassageId++;
    }
    emit_text(h, i, to, 1);
}

/* emit_zones: "<name>" of the innermost zone span holding word k, if any. */
static void emit_zone_name(Hl *h, int k) {
    uint32_t p = h->words.a[k].iPos;
    const HlSpan *best = NULL;
    for (size_t i = 0; i < h->spans.n; i++) {
        const HlSpan *sp = &h->spans.a[i];
        if (sp->first > p || sp->last < p) continue;
        if (!best || sp->first > best->first || (sp->first == best->first && sp->last < best->last)) best = sp;
    }
    if (!best) return;
    const HlZone *zn = &h->zones.a[best->iZone];
    strbuf_appendc(h->out, '<');
    strbuf_append(h->out, h->spanNames.z + zn->iName, (size_t)zn->nName);
    strbuf_appendc(h->out, '>');
}

/* html_strip_mode retain: the stored text whole, its markup kept, with each
** marked word's bytes there (html_strip_map) wrapped in tags; words read
** from attribute values, which lie inside a tag, are not marked. */
static void emit_retain(Hl *h) {
    uint32_t i = 0;
    for (size_t k = 0; k < h->words.n; k++) {
        const HlWord *w = &h->words.a[k];
        if (w->id < 0) continue;
        const uint32_t *m = h->aMap;
        if (m[2 * (size_t)w->iStart] < i || h->zOrig[m[2 * (size_t)w->iStart]] == '<') continue;
        /* each run of the word's bytes that lie side by side in the stored
        ** text gets its own tags, so that markup inside a word ("fi<i>ve")
        ** stays outside them and they nest */
        for (uint32_t j = w->iStart; j < w->iEnd;) {
            uint32_t j1 = j + 1;
            /* the next byte is of the same character reference, or follows */
            while (j1 < w->iEnd && (m[2 * (size_t)j1] == m[2 * (size_t)j1 - 2] || m[2 * (size_t)j1] == m[2 * (size_t)j1 - 1])) {
                j1++;
            }
            uint32_t s = m[2 * (size_t)j], e = m[2 * (size_t)j1 - 1];
            strbuf_append(h->out, h->zOrig + i, s - i);
            emit_tag(h, h->o->zBefore);
            strbuf_append(h->out, h->zOrig + s, e - s);
            emit_tag(h, h->o->zAfter);
            i = e;
            j = j1;
        }
        h->iPassageId++;
    }
    strbuf_append(h->out, h->zOrig + i, h->nOrig - i);
}

static int cand_by_start(const void *pa, const void *pb) {
    const Cand *a = pa, *b = pb;
    return (a->iStart > b->iStart) - (a->iStart < b->iStart);
}

/* Takes candidate c of h into the passages shown, within what is left of
** the limits (*pChars, *pWords; < 0: none): whole where it fits (or
** bForce: force_all_words), else shrunk (bCut: the first passage shown,
** which may cut inside a word). Its terms are then shown, the limits
** spent. 0 when it does not fit at all. */
static int choose(Hl *h, Cand *c, int bForce, int bCut, int64_t *pChars, int64_t *pWords) {
    uint32_t len;
    if (bForce || span_fits(h, c->lo, c->hi, *pChars, *pWords)) {
        c->iStart = span_start(h, c->lo);
        c->iEnd = span_end(h, c->hi);
        len = span_chars(h, c->lo, c->hi);
    } else {
        if (!shrink(h, c, *pChars, *pWords, bCut)) return 0;
        len = count_chars(h->z, c->iStart, c->iEnd);
    }
    for (int j = c->m0; j < c->m1; j++) {
        int iw = h->aMatch[j];
        if (iw >= c->lo && iw <= c->hi) h->aShown[gid_of(h, h->words.a[iw].id)] = 1;
    }
    /* a forced passage may overdraw: the budget then stays spent */
    int64_t nw = c->hi - c->lo + 1;
    if (*pChars >= 0) *pChars = *pChars > len ? *pChars - len : 0;
    if (*pWords >= 0) *pWords = *pWords > nw ? *pWords - nw : 0;
    h->st.nChars += len;
    h->st.nWords += nw;
    h->st.nPassages++;
    return 1;
}

/* Writes the passages chosen, aChosen[0..nChosen): in text order
** (weight_order: as chosen), overlapping or touching ones merged, with
** chunk_separator between them and at either end where text was left
** out. */
static void emit_chosen(Hl *h, Cand *aChosen, int nChosen) {
    const FtsHlOptions *o = h->o;
    int nOut = nChosen;
    if (!o->bWeightOrder && nChosen > 1) {
        qsort(aChosen, (size_t)nChosen, sizeof(Cand), cand_by_start);
        nOut = 1;
        for (int k = 1; k < nChosen; k++) {
            Cand *p = &aChosen[nOut - 1], *c = &aChosen[k];
            if ((c->iStart <= p->iEnd || c->lo <= p->hi + 1) && h->words.a[c->lo].seg == h->words.a[p->hi].seg) {
                if (c->iEnd > p->iEnd) p->iEnd = c->iEnd;
                if (c->hi > p->hi) p->hi = c->hi;
            } else {
                aChosen[nOut++] = *c;
            }
        }
    }
    for (int k = 0; k < nOut; k++) {
        if (k > 0 || aChosen[k].iStart > 0) strbuf_appendz(h->out, o->zChunkSep);
        if (o->bEmitZones) emit_zone_name(h, aChosen[k].lo);
        emit_range(h, aChosen[k].iStart, aChosen[k].iEnd);
    }
    if (nOut > 0 && aChosen[nOut - 1].iEnd < h->n) strbuf_appendz(h->out, o->zChunkSep);
}

/* No marked word: the start of the text, cut after a whole word. */
static void emit_start(Hl *h) {
    uint32_t cut = h->o->limit > 0 ? skip_chars(h, 0, (uint32_t)h->o->limit) : h->n;
    uint32_t end = 0;
    int nWords = h->o->limitWords > 0 ? h->o->limitWords : (int)h->words.n;
    int k = 0;
    for (; k < (int)h->words.n && k < nWords && h->words.a[k].iEnd <= cut; k++)
        end = h->words.a[k].iEnd;
    if (end == 0 && h->o->bWholeWords) return; /* nothing fits */
    if (end == 0) end = cut; /* even the first word is too long: cut inside it */
    emit_text(h, 0, end, 1);
    h->st.nChars = count_chars(h->z, 0, end);
    h->st.nWords = k ? k : h->words.n > 0;
    h->st.nPassages = 1;
    strbuf_appendz(h->out, h->o->zChunkSep);
}

int fts_hl_options_check(const FtsHlOptions *o, const Analyzer *an, const FtsHlQuery *q, LpError *err) {
    if (o->limit < 0 || o->around < 0 || o->limitPassages < 0 || o->limitWords < 0) {
        return lp_err_set(err, LP_BADINPUT,
                          "highlight: limit, around, limit_passages and limit_words must not be negative");
    }
    if (!o->zBefore || !o->zAfter || !o->zChunkSep) {
        return lp_err_set(err, LP_BADINPUT, "highlight: before_match, after_match and chunk_separator must be set");
    }
    static const char *const azBoundary[] = {"", "sentence", "paragraph", "zone"};
    static const char *const azMode[] = {"index", "none", "strip", "retain"};
    if (o->boundary < 0 || o->boundary > FTS_HL_BOUNDARY_ZONE || o->htmlMode < 0 || o->htmlMode > FTS_HL_HTML_RETAIN) {
        return lp_err_set(err, LP_BADINPUT, "highlight: unknown passage_boundary or html_strip_mode");
    }
    const char *zB = azBoundary[o->boundary], *zM = azMode[o->htmlMode];
    int bZone = o->boundary == FTS_HL_BOUNDARY_ZONE;
    if ((o->boundary == FTS_HL_BOUNDARY_SENTENCE || o->boundary == FTS_HL_BOUNDARY_PARAGRAPH) &&
        !analyzer_index_sp(an)) {
        return lp_err_set(err, LP_BADINPUT,
                          "highlight: passage_boundary='%s' needs a table that indexes sentences and "
                          "paragraphs (index_sp='1')",
                          zB);
    }
    if (o->bUseBoundaries && !analyzer_has_phrase_boundary(an)) {
        return lp_err_set(err, LP_BADINPUT, "highlight: use_boundaries needs a table with phrase_boundary characters");
    }
    if (o->boundary && o->around == 0) {
        /* as Manticore: a passage is the words around a match, and none */
        return lp_err_set(err, LP_BADINPUT, "highlight: passage_boundary='%s' needs around above 0", zB);
    }
    if (o->boundary && o->bUseBoundaries) {
        return lp_err_set(err, LP_BADINPUT,
                          "highlight: passage_boundary='%s' and use_boundaries cannot be combined (as in "
                          "Manticore): choose one kind of boundary",
                          zB);
    }
    if (o->bEmitZones && !bZone) {
        return lp_err_set(err, LP_BADINPUT, "highlight: emit_zones needs passage_boundary='zone'");
    }
    if (bZone && !analyzer_has_zones(an)) {
        return lp_err_set(err, LP_BADINPUT,
                          "highlight: passage_boundary='zone' needs a table that indexes zones (index_zones)");
    }
    if (o->htmlMode == FTS_HL_HTML_NONE && analyzer_html_strip(an) && (bZone || (q && q->bSpans))) {
        return lp_err_set(err, LP_BADINPUT,
                          "highlight: html_strip_mode='none' reads the markup as text, so it has no zones: %s",
                          bZone ? "passage_boundary='zone' needs them" : "the query's ZONE: limits need them");
    }
    if (o->htmlMode == FTS_HL_HTML_RETAIN) {
        const char *zWhy = o->limit || o->limitWords || o->limitPassages ? "limit, limit_words and limit_passages be 0"
                           : o->bForcePassages                          ? "force_passages be 0"
                           : o->boundary                                ? "no passage_boundary"
                           : o->bEscapeHtml                             ? "escape_html be 0"
                                                                        : NULL;
        if (zWhy) {
            return lp_err_set(err, LP_BADINPUT,
                              "highlight: html_strip_mode='%s' shows the whole text with its markup, so it "
                              "needs %s",
                              zM, zWhy);
        }
    }
    return LP_OK;
}

/* A text to highlight: its Hl (step 1 done) and what it owns. */
typedef struct HlText {
    Hl h;
    FtsHlOptions o;        /* its options (texts sharing limits: what is left) */
    StrBuf html;           /* the text stripped of markup, when it is */
    StrBuf rules;          /* the text as the regexp_filter rules left it, when
                           ** they rewrote it: the text read */
    uint32_t *aMap;        /* html_strip_mode retain: html_strip_map */
    uint32_t *aSrc;        /* the rules rewrote the text: where each byte of
                           ** rules came from (retain: in the text given) */
    int bEmpty;            /* nothing to read: no Hl */
} HlText;

static void hl_text_free(HlText *t) {
    Hl *h = &t->h;
    strbuf_free(&t->html);
    strbuf_free(&t->rules);
    free(t->aMap);
    free(t->aSrc);
    VEC_FREE(&h->cuts);
    strbuf_free(&h->spanNames);
    VEC_FREE(&h->spans);
    VEC_FREE(&h->zones);
    VEC_FREE(&h->held);
    free(h->aGroupPlace);
    free(h->aZonePlace);
    free(h->aPhrasePlace);
    VEC_FREE(&h->words);
    VEC_FREE(&h->toks);
    free(h->aMatch);
    free(h->aCand);
    if (h->aGid) {
        free((void *)h->aGid); /* aShown and aStamp: the texts' together */
    } else {
        free(h->aShown);
        free(h->aStamp);
    }
}

/* Step 1 for text zText[0..nText) with the options in t->o: its words,
** which of them the query marks (aMatch), and, when bShown, the
** scratch its terms need (aShown, aStamp). t->bEmpty: nothing to read.
** LP_OK or an error; t is freed by hl_text_free either way. */
static int hl_text_open(HlText *t, const Analyzer *an, const FtsHlQuery *q, const char *zText, size_t nText,
                        StrBuf *out, LpError *err, int bShown) {
    const FtsHlOptions *opt = &t->o;
    Hl *h = &t->h;
    /* With html_strip (or html_strip_mode strip, retain), the text read is
    ** the text indexed: no markup. */
    int bHtml = opt->htmlMode == FTS_HL_HTML_INDEX ? analyzer_html_strip(an) : opt->htmlMode != FTS_HL_HTML_NONE;
    int bRetain = opt->htmlMode == FTS_HL_HTML_RETAIN;
    if (bRetain && nText >= UINT32_MAX) {
        return lp_err_set(err, LP_LIMIT, "highlight: a text of %zu bytes is longer than 4 GiB", nText);
    }
    if (bRetain && nText > 0 && !(t->aMap = malloc(sizeof(uint32_t) * 2 * nText))) {
        return lp_err_set(err, LP_NOMEM, "out of memory highlighting a text");
    }
    const char *zOrig = zText;
    size_t nOrig = nText;
    int rc = analyzer_doc_text_as(an, bHtml, 0, zText, nText, &t->html, &zText, &nText, t->aMap, err);
    /* The rules read the text as stripped, and what they wrote is read;
    ** what is shown is the text before them (retain: as stored). */
    const char *zShow = zText;
    size_t nShow = nText;
    if (rc == LP_OK && analyzer_has_regexp(an)) {
        rc = analyzer_rules_map(an, zShow, nShow, &t->rules, &zText, &nText, &t->aSrc, err);
    }
    if (rc != LP_OK) return rc;
    if (t->aSrc && bRetain) {
        /* the rules' sources are bytes of the text stripped: in the text
        ** given they came from the first's start to the last's end */
        for (size_t i = 0; i < nText; i++) {
            uint32_t lo = t->aSrc[2 * i], hi = t->aSrc[2 * i + 1];
            t->aSrc[2 * i] = t->aMap[2 * (size_t)lo];
            t->aSrc[2 * i + 1] = t->aMap[2 * (size_t)hi - 1];
        }
    }
    if (nText == 0) {
        t->bEmpty = 1;
        return LP_OK;
    }
    h->q = q;
    h->o = opt;
    h->z = zText;
    h->n = (uint32_t)nText;
    h->an = an;
    h->bRenumber = analyzer_renumbers(an);
    h->bStemmed = analyzer_is_stemmed(an) || h->bRenumber || analyzer_has_blend(an);
    h->out = out;
    h->err = err;
    h->iPassageId = opt->startPassageId;
    h->bIdMacro = strstr(opt->zBefore, "_ID%") || strstr(opt->zAfter, "_ID%");
    h->aMap = t->aSrc && bRetain ? t->aSrc : t->aMap;
    h->zOrig = zOrig;
    h->nOrig = (uint32_t)nOrig;
    if (t->aSrc && !bRetain) {
        h->aSrc = t->aSrc;
        h->zShow = zShow;
        h->nShow = (uint32_t)nShow;
    }

    /* The analyzer refuses texts of 4 GiB and more, so the uint32_t
    ** offsets hold. index_sp gives boundaries positions of their own,
    ** phrase_boundary_step spreads phrases: the words take the index's
    ** positions, as with word forms. */
    int bSp = analyzer_index_sp(an) || analyzer_phrase_boundary_step(an) > 0;
    if (bSp) h->bRenumber = h->bStemmed = 1;
    rc = analyzer_run_unstemmed(an, zText, nText, on_word, h, err);
    if (rc == LP_OK && h->bStemmed && (q->nTerm > 0 || bSp)) rc = analyzer_run(an, zText, nText, 0, on_stemmed, h, NULL, err);
    if (rc == LP_OK && h->bRenumber) renumber_rest(h);
    int bSpans = q->bSpans || opt->boundary == FTS_HL_BOUNDARY_ZONE;
    if (rc == LP_OK && (q->bZones || bSpans)) rc = apply_zones(h, an, zOrig, nOrig, bSpans);
    if (rc == LP_OK) rc = assign_segments(h);
    if (rc) return rc;
    h->nChars = h->cScan + count_chars(zText, h->iScan, h->n);
    for (int k = 0; k < (int)h->words.n; k++)
        h->nMatch += h->words.a[k].id >= 0;
    if (h->nMatch == 0) return LP_OK;
    h->aMatch = malloc(sizeof(int) * (size_t)h->nMatch);
    if (!h->aMatch) return hl_nomem(h);
    for (int k = 0, j = 0; k < (int)h->words.n; k++) {
        if (h->words.a[k].id >= 0) h->aMatch[j++] = k;
    }
    if (bShown) {
        int nIds = q->nTerm + q->nPrefix;
        h->aShown = calloc((size_t)nIds, 1);
        h->aStamp = calloc((size_t)nIds, sizeof(uint32_t));
        if (!h->aShown || !h->aStamp) return hl_nomem(h);
    }
    return LP_OK;
}

/* The whole text (retain: with its markup). */
static void emit_whole(Hl *h) {
    if (h->o->htmlMode == FTS_HL_HTML_RETAIN) {
        emit_retain(h);
    } else {
        emit_range(h, 0, h->n);
    }
    h->st.nChars = h->nChars;
    h->st.nWords = (int64_t)h->words.n;
    h->st.nPassages = 1;
}

/* A candidate passage of one of several texts (fts_highlight_shared). */
typedef struct SharedCand {
    int iText, k; /* texts[iText].h.aCand[k] */
} SharedCand;

/* Heap order across texts: cand_rank, then the earlier text, then the
** earlier in it. */
static int shared_better(HlText *aT, SharedCand x, SharedCand y) {
    const Cand *a = &aT[x.iText].h.aCand[x.k], *b = &aT[y.iText].h.aCand[y.k];
    int r = cand_rank(a, b);
    if (r) return r > 0;
    if (x.iText != y.iText) return x.iText < y.iText;
    return a->lo < b->lo;
}

static void shared_push(HlText *aT, SharedCand *aHeap, int *pn, SharedCand c) {
    int i = (*pn)++;
    aHeap[i] = c;
    while (i > 0 && shared_better(aT, aHeap[i], aHeap[(i - 1) / 2])) {
        SharedCand t = aHeap[(i - 1) / 2];
        aHeap[(i - 1) / 2] = aHeap[i];
        aHeap[i] = t;
        i = (i - 1) / 2;
    }
}

static SharedCand shared_pop(HlText *aT, SharedCand *aHeap, int *pn) {
    SharedCand top = aHeap[0];
    aHeap[0] = aHeap[--*pn];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < *pn && shared_better(aT, aHeap[l], aHeap[m])) m = l;
        if (r < *pn && shared_better(aT, aHeap[r], aHeap[m])) m = r;
        if (m == i) break;
        SharedCand t = aHeap[m];
        aHeap[m] = aHeap[i];
        aHeap[i] = t;
        i = m;
    }
    return top;
}

/* Steps 2 and 3 over the texts aT[0..n) at once (one, or several that
** share the limits): the windows around each text's marked words, then
** the best of all of them while the limits last, each text's into
** aaChosen[i] (anChosen[i] of them). LP_OK or LP_NOMEM (err set). */
static int select_passages(HlText *aT, int n, const FtsHlOptions *o, Cand **aaChosen, int *anChosen,
                           LpError *err) {
    int nCand = 0, rc = LP_OK;
    for (int i = 0; i < n && rc == LP_OK; i++) {
        if (aT[i].bEmpty || aT[i].h.nMatch == 0) continue;
        rc = build_candidates(&aT[i].h);
        nCand += aT[i].h.nCand;
        if (rc == LP_OK && !(aaChosen[i] = malloc(sizeof(Cand) * (size_t)aT[i].h.nCand))) rc = hl_nomem(&aT[i].h);
    }
    if (rc) return rc;
    SharedCand *aHeap = malloc(sizeof(SharedCand) * (size_t)(nCand ? nCand : 1));
    if (!aHeap) return lp_err_set(err, LP_NOMEM, "out of memory highlighting");
    int nHeap = 0;
    for (int i = 0; i < n; i++) {
        for (int k = 0; !aT[i].bEmpty && k < aT[i].h.nCand; k++) shared_push(aT, aHeap, &nHeap, (SharedCand){i, k});
    }
    int64_t leftChars = budget_of(o->limit), leftWords = budget_of(o->limitWords);
    int nChosen = 0;
    while (nHeap > 0 && (o->limitPassages == 0 || nChosen < o->limitPassages)) {
        SharedCand sc = shared_pop(aT, aHeap, &nHeap);
        Hl *h = &aT[sc.iText].h;
        Cand *c = &h->aCand[sc.k];
        int nNew = count_terms(h, c, 1);
        if (nNew < c->nNew) {
            /* Stale: put it back unless it still beats the best left. */
            c->nNew = nNew;
            if (nHeap > 0 && shared_better(aT, aHeap[0], sc)) {
                shared_push(aT, aHeap, &nHeap, sc);
                continue;
            }
        }
        int bForce = o->bForceAllWords && nNew > 0;
        if ((leftChars == 0 || leftWords == 0) && !bForce) {
            if (!o->bForceAllWords) break;
            continue;
        }
        if (choose(h, c, bForce, nChosen == 0 && !o->bWholeWords, &leftChars, &leftWords)) {
            aaChosen[sc.iText][anChosen[sc.iText]++] = *c;
            nChosen++;
        }
    }
    free(aHeap);
    return LP_OK;
}

int fts_highlight(const Analyzer *an, const FtsHlQuery *q, const char *zText, size_t nText,
                  const FtsHlOptions *opt, StrBuf *out, LpError *err, FtsHlStats *pStats) {
    if (pStats) memset(pStats, 0, sizeof(*pStats));
    HlText t;
    memset(&t, 0, sizeof(t));
    if (opt) {
        t.o = *opt;
    } else {
        fts_hl_options_init(&t.o);
    }
    int rc = fts_hl_options_check(&t.o, an, q, err);
    if (rc) return rc;
    rc = hl_text_open(&t, an, q, zText, nText, out, err, 1);
    Hl *h = &t.h;
    if (rc || t.bEmpty || (h->nMatch == 0 && t.o.bAllowEmpty)) goto done;
    opt = &t.o;
    int bWhole = (opt->limit == 0 || h->nChars <= (uint32_t)opt->limit) &&
                 (opt->limitWords == 0 || h->words.n <= (size_t)opt->limitWords);
    if (bWhole && !((opt->bForcePassages || opt->boundary) && h->nMatch > 0)) {
        emit_whole(h);
    } else if (h->nMatch == 0) {
        emit_start(h);
    } else {
        Cand *aChosen = NULL;
        int nChosen = 0;
        rc = select_passages(&t, 1, opt, &aChosen, &nChosen, err);
        if (rc == LP_OK) emit_chosen(h, aChosen, nChosen);
        free(aChosen);
    }
    if (rc == LP_OK && out->oom) rc = hl_nomem(h);
    h->st.nMarked = (int)(h->iPassageId - opt->startPassageId);
    if (rc == LP_OK && pStats) *pStats = h->st;
done:
    hl_text_free(&t);
    return rc;
}

/* Gives every term of every text's query one id among all of them (the
** same bytes, the same id; a prefix apart from a term), so that a term
** shown in one text is not new in another. */
static int shared_ids(HlText *aT, int n, unsigned char **paShown, uint32_t **paStamp, uint32_t *piStamp) {
    int nAll = 0;
    for (int i = 0; i < n; i++) {
        if (!aT[i].bEmpty) nAll += aT[i].h.q->nTerm + aT[i].h.q->nPrefix;
    }
    const HlTerm **apSeen = malloc(sizeof(HlTerm *) * (size_t)(nAll ? nAll : 1));
    int *aPrefix = malloc(sizeof(int) * (size_t)(nAll ? nAll : 1));
    *paShown = calloc((size_t)(nAll ? nAll : 1), 1);
    *paStamp = calloc((size_t)(nAll ? nAll : 1), sizeof(uint32_t));
    if (!apSeen || !aPrefix || !*paShown || !*paStamp) {
        free(apSeen);
        free(aPrefix);
        return LP_NOMEM;
    }
    int nSeen = 0;
    for (int i = 0; i < n; i++) {
        if (aT[i].bEmpty) continue;
        const FtsHlQuery *q = aT[i].h.q;
        int nIds = q->nTerm + q->nPrefix;
        int *aGid = malloc(sizeof(int) * (size_t)(nIds ? nIds : 1));
        if (!aGid) {
            free(apSeen);
            free(aPrefix);
            return LP_NOMEM;
        }
        for (int id = 0; id < nIds; id++) {
            int bPre = id >= q->nTerm;
            const HlTerm *t = bPre ? &q->aPrefix[id - q->nTerm] : &q->aTerm[id];
            int g = 0;
            while (g < nSeen && !(aPrefix[g] == bPre && apSeen[g]->n == t->n && !memcmp(apSeen[g]->z, t->z, (size_t)t->n))) g++;
            if (g == nSeen) {
                apSeen[nSeen] = t;
                aPrefix[nSeen++] = bPre;
            }
            aGid[id] = g;
        }
        aT[i].h.aGid = aGid;
        aT[i].h.aShown = *paShown;
        aT[i].h.aStamp = *paStamp;
        aT[i].h.piStamp = piStamp;
    }
    free(apSeen);
    free(aPrefix);
    return LP_OK;
}

int fts_highlight_shared(const Analyzer *an, const FtsHlQuery *const *apQ, const char *const *azText,
                         const size_t *anText, int nText, const FtsHlOptions *opt, StrBuf *aOut, LpError *err,
                         FtsHlStats *aStats) {
    FtsHlOptions def;
    if (!opt) {
        fts_hl_options_init(&def);
        opt = &def;
    }
    for (int i = 0; i < nText; i++) {
        if (aStats) memset(&aStats[i], 0, sizeof(aStats[i]));
        int rc = fts_hl_options_check(opt, an, apQ[i], err);
        if (rc) return rc;
    }
    if (nText <= 0) return LP_OK;
    HlText *aT = calloc((size_t)nText, sizeof(HlText));
    if (!aT) return lp_err_set(err, LP_NOMEM, "out of memory highlighting a row");
    unsigned char *aShown = NULL;
    uint32_t *aStamp = NULL, iStamp = 0; /* the texts' together (shared_ids) */
    Cand **aaChosen = calloc((size_t)nText, sizeof(Cand *));
    int *anChosen = calloc((size_t)nText, sizeof(int));
    int rc = aaChosen && anChosen ? LP_OK : lp_err_set(err, LP_NOMEM, "out of memory highlighting a row");
    /* Step 1 for every text; what is shown, all together */
    uint64_t nChars = 0, nWords = 0;
    int nMatch = 0;
    for (int i = 0; i < nText && rc == LP_OK; i++) {
        aT[i].o = *opt;
        rc = hl_text_open(&aT[i], an, apQ[i], azText[i], anText[i], &aOut[i], err, 0);
        if (rc || aT[i].bEmpty) continue;
        nChars += aT[i].h.nChars;
        nWords += aT[i].h.words.n;
        nMatch += aT[i].h.nMatch;
    }
    if (rc) goto done;
    if (nMatch == 0 && opt->bAllowEmpty) goto done;
    int bWhole = (opt->limit == 0 || nChars <= (uint64_t)opt->limit) &&
                 (opt->limitWords == 0 || nWords <= (uint64_t)opt->limitWords);
    int64_t leftChars = budget_of(opt->limit), leftWords = budget_of(opt->limitWords);
    int64_t nextId = opt->startPassageId;
    if ((bWhole && !((opt->bForcePassages || opt->boundary) && nMatch > 0)) || nMatch == 0) {
        /* every text whole; or, with no marked word anywhere, each text's
        ** start within what the texts before it left (a text is a
        ** passage) */
        int nShown = 0;
        for (int i = 0; i < nText; i++) {
            HlText *t = &aT[i];
            Hl *h = &t->h;
            if (t->bEmpty) continue;
            if (leftChars == 0 || leftWords == 0 || (opt->limitPassages && nShown == opt->limitPassages)) break;
            int64_t idStart = h->iPassageId = nextId;
            if (bWhole || ((leftChars < 0 || h->nChars <= leftChars) && (leftWords < 0 || (int64_t)h->words.n <= leftWords))) {
                emit_whole(h);
            } else {
                t->o.limit = leftChars < 0 ? 0 : (int)leftChars;
                t->o.limitWords = leftWords < 0 ? 0 : (int)leftWords;
                t->o.bWholeWords = nShown > 0;
                emit_start(h);
            }
            if (h->st.nPassages == 0) continue; /* nothing fitted */
            nShown++;
            h->st.nMarked = (int)(h->iPassageId - idStart);
            nextId = h->iPassageId;
            if (leftChars > 0) leftChars = leftChars > h->st.nChars ? leftChars - h->st.nChars : 0;
            if (leftWords > 0) leftWords = leftWords > h->st.nWords ? leftWords - h->st.nWords : 0;
        }
        goto done;
    }
    /* Steps 2 and 3 over all the texts at once: the best passages of any
    ** text while the limits last */
    if ((rc = shared_ids(aT, nText, &aShown, &aStamp, &iStamp)) != LP_OK) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory highlighting a row");
        goto done;
    }
    if ((rc = select_passages(aT, nText, opt, aaChosen, anChosen, err)) != LP_OK) goto done;
    for (int i = 0; i < nText; i++) {
        if (!anChosen[i]) continue;
        /* %PASSAGE_ID% goes on from one text to the next */
        aT[i].h.iPassageId = nextId;
        emit_chosen(&aT[i].h, aaChosen[i], anChosen[i]);
        aT[i].h.st.nMarked = (int)(aT[i].h.iPassageId - nextId);
        nextId = aT[i].h.iPassageId;
    }
done:
    for (int i = 0; i < nText; i++) {
        Hl *h = &aT[i].h;
        if (aT[i].bEmpty) continue;
        if (rc == LP_OK && aOut[i].oom) rc = hl_nomem(h);
        if (rc == LP_OK && aStats) aStats[i] = h->st;
    }
    for (int i = 0; i < nText; i++) {
        if (aaChosen) free(aaChosen[i]);
        hl_text_free(&aT[i]);
    }
    free(aT);
    free(aShown);
    free(aStamp);
    free(aaChosen);
    free(anChosen);
    return rc;
}
