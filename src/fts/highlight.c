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
**      for an unstemmed analyzer, a term) matches. With stemming, a second
**      run, analyzer_run(), gives the stemmed terms of the same words (the
**      stop words left out), matched to the list by start offset. Stop
**      words cannot match: the query side dropped them too.
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

typedef struct HlTerm {
    const char *z; /* bytes (in the query's arena) */
    int n;         /* their length */
    int bGlob;     /* a prefix entry that is a wildcard's pattern ('*', '?', '%') */
    const char *const *azZone; /* ZONE:/ZONESPAN: limits: the word is marked only
                               ** inside a span of one of these (lower case) ... */
    int nZone;                 /* ... 0: anywhere (some leaf has no limit) */
} HlTerm;

struct FtsHlQuery {
    HlTerm *aTerm;   /* analysed terms, sorted by bytes, unique */
    int nTerm;       /* how many */
    HlTerm *aPrefix; /* normalised prefixes, unique */
    int nPrefix;     /* how many */
    int bZones;      /* some term has zones (nZone > 0) */
};

void fts_hl_options_init(FtsHlOptions *o) {
    memset(o, 0, sizeof(*o));
    o->zBefore = "<b>";
    o->zAfter = "</b>";
    o->zChunkSep = " ... ";
    o->limit = 256;
    o->around = 5;
}

/* ------------------------------------------------------------------ */
/* Query side                                                          */

typedef struct TermList {
    HlTerm *a; /* in the arena; old arrays abandoned there */
    int n;     /* used */
    int cap;   /* allocated */
} TermList;

typedef struct Builder {
    Arena *a;                      /* where the terms go */
    const Analyzer *an;            /* the table's analyzer */
    int iField;                    /* the field, or -1 for any */
    TermList terms;                /* analysed terms */
    TermList prefixes;             /* normalised prefixes */
    const FtsZones *pZones;        /* the zones of the leaf being added, or NULL */
    uint32_t iPosLimit;            /* on_term keeps tokens before this position */
    char aLast[ANALYZER_MAX_TERM]; /* on_last: the last unstemmed token ... */
    int nLast;                     /* ... its length (0: none) */
    uint32_t iLastPos;             /* ... and position */
    int bStar;                     /* expand_keywords' star: a plain word is a prefix too */
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
    l->a[l->n].azZone = b->pZones ? b->pZones->azName : NULL;
    l->a[l->n].nZone = b->pZones ? b->pZones->nName : 0;
    l->n++;
    return LP_OK;
}

static int on_term(void *ctx, const Token *t) {
    Builder *b = ctx;
    if (t->iPos >= b->iPosLimit) return LP_OK;
    return termlist_add(b, &b->terms, t->z, t->n);
}

static int on_last(void *ctx, const Token *t) {
    Builder *b = ctx;
    memcpy(b->aLast, t->z, (size_t)t->n);
    b->nLast = t->n;
    b->iLastPos = t->iPos;
    return LP_OK;
}

/* Adds leaf x's terms when it is positive and may match in b->iField
** (excluded words are never marked). */
static int add_leaf(void *ctx, const FtsNode *x, int bNegated) {
    Builder *b = ctx;
    if (bNegated) return LP_OK;
    if (b->iField >= 0 && !fts_fieldset_has(&x->fields, b->iField)) return LP_OK;
    b->pZones = x->pZones && x->pZones->nName > 0 ? x->pZones : NULL;
    if (x->kind == FTSN_WILDCARD) {
        /* kept with the prefixes: a pattern has a '*', a prefix none */
        const char *z;
        int n;
        int rc = fts_wildcard_pattern(b->a, b->an, x, &z, &n, NULL, b->err);
        return rc ? rc : termlist_add(b, &b->prefixes, z, n);
    }
    if (x->kind != FTSN_PREFIX) {
        b->iPosLimit = UINT32_MAX;
        int rc = analyzer_run_query(b->an, x->z, (size_t)x->n, x->bExact, on_term, b, b->err);
        if (rc || !b->bStar || !fts_expand_applies(x)) return rc;
        /* expand_keywords: the word also matched as a prefix (where the
        ** planner expands it: one word that 'word*' may search) */
        b->nLast = 0;
        rc = analyzer_run_unstemmed(b->an, x->z, (size_t)x->n, on_last, b, b->err);
        if (rc || b->nLast == 0 || b->iLastPos > 0 || !analyzer_prefix_ok(b->an, b->aLast, b->nLast)) {
            return rc;
        }
        return termlist_add(b, &b->prefixes, b->aLast, b->nLast);
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

static int term_cmp(const void *pa, const void *pb) {
    const HlTerm *a = pa, *b = pb;
    int c = memcmp(a->z, b->z, (size_t)(a->n < b->n ? a->n : b->n));
    return c ? c : (a->n > b->n) - (a->n < b->n);
}

/* Sorts l and drops duplicates; a term kept for several leaves is marked
** anywhere when one of them has no zone limit, else in the zones of all. */
static int termlist_unique(Builder *b, TermList *l) {
    if (l->n < 2) return LP_OK;
    qsort(l->a, (size_t)l->n, sizeof(HlTerm), term_cmp);
    int o = 1;
    for (int i = 1; i < l->n; i++) {
        HlTerm *k = &l->a[o - 1], *t = &l->a[i];
        if (term_cmp(t, k) != 0) {
            l->a[o++] = *t;
        } else if (k->nZone == 0 || t->nZone == 0) {
            k->nZone = 0;
            k->azZone = NULL;
        } else {
            const char **az = arena_alloc(b->a, sizeof(char *) * (size_t)(k->nZone + t->nZone));
            if (!az) return lp_err_set(b->err, LP_NOMEM, "out of memory building the highlight terms");
            memcpy(az, k->azZone, sizeof(char *) * (size_t)k->nZone);
            memcpy(az + k->nZone, t->azZone, sizeof(char *) * (size_t)t->nZone);
            k->azZone = az;
            k->nZone += t->nZone;
        }
    }
    l->n = o;
    return LP_OK;
}

int fts_hl_query_build(Arena *a, const Analyzer *an, const FtsNode *root, int iField, int expand,
                       FtsHlQuery **pp, LpError *err) {
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
    b.err = err;
    int rc = fts_match_leaves(root, add_leaf, &b);
    if (rc == LP_OK) rc = termlist_unique(&b, &b.terms);
    if (rc == LP_OK) rc = termlist_unique(&b, &b.prefixes);
    if (rc) return rc;
    FtsHlQuery *q = arena_zalloc(a, sizeof(FtsHlQuery));
    if (!q) return lp_err_set(err, LP_NOMEM, "out of memory building the highlight terms");
    q->aTerm = b.terms.a;
    q->nTerm = b.terms.n;
    q->aPrefix = b.prefixes.a;
    q->nPrefix = b.prefixes.n;
    for (int i = 0; i < q->nTerm; i++) q->bZones |= q->aTerm[i].nZone > 0;
    for (int i = 0; i < q->nPrefix; i++) q->bZones |= q->aPrefix[i].nZone > 0;
    *pp = q;
    return LP_OK;
}

/* Id of the term z[0..n), or -1. */
static int term_find(const FtsHlQuery *q, const char *z, int n) {
    if (q->nTerm == 0) return -1; /* bsearch may not be given a NULL array */
    HlTerm key = {z, n, 0, NULL, 0};
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
    uint32_t iPos;         /* its position (as the index numbers it) */
    int id;                /* the query term it matches, or -1 */
} HlWord;

/* A zone's span in the text: words at positions first..last (the
** analyzer's span terms, analyzer_run_doc). */
typedef struct HlSpan {
    size_t iName;         /* the element's name, lower case: Hl.spanNames at iName ... */
    int nName;            /* ... this many bytes */
    uint32_t first, last; /* last: UINT32_MAX until its end is read */
} HlSpan;

/* A passage: words lo..hi, or (cut) bytes [iStart, iEnd). */
typedef struct Cand {
    int lo, hi;            /* first and last word */
    int m0, m1;            /* its marked words: aMatch[m0..m1) */
    int nDistinct;         /* distinct terms among them */
    int nNew;              /* of those, not shown yet (may be stale: an upper bound) */
    uint32_t iStart, iEnd; /* bytes, set when chosen */
} Cand;

typedef struct Hl {
    const FtsHlQuery *q;   /* what to mark */
    const FtsHlOptions *o; /* how */
    const char *z;         /* the text */
    uint32_t n;            /* its length in bytes */
    uint32_t nChars;       /* ... and in characters */
    int bStemmed;          /* the analyzer stems: step 1 needs two runs */
    HlWord *aW;            /* every word, in text order */
    int nW, capW;          /* used, allocated */
    uint32_t iScan, cScan; /* counting characters: byte iScan is character cScan */
    int iCur;              /* the second run's position in aW */
    int *aMatch;           /* indices of the marked words, ascending */
    int nMatch;            /* how many */
    Cand *aCand;           /* candidate passages */
    int nCand;             /* how many */
    int *aHeap;            /* max-heap of candidate indices */
    int nHeap;             /* its size */
    unsigned char *aShown; /* per term id: in a chosen passage */
    uint32_t *aStamp;      /* per term id: scratch for distinct counts */
    uint32_t iStamp;       /* the last stamp used */
    StrBuf *out;           /* the result is appended here */
    LpError *err;          /* filled on failure */
    HlSpan *aSpan;         /* zone spans (only when the query has zone limits) */
    int nSpan, capSpan;
    StrBuf spanNames;      /* their names, back to back */
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
    if (h->nW == h->capW) {
        int cap = h->capW ? h->capW * 2 : 64;
        HlWord *a = realloc(h->aW, sizeof(HlWord) * (size_t)cap);
        if (!a) return hl_nomem(h);
        h->aW = a;
        h->capW = cap;
    }
    HlWord *w = &h->aW[h->nW++];
    w->iStart = t->iStart;
    w->iEnd = t->iEnd;
    w->iPos = t->iPos;
    h->cScan += count_chars(h->z, h->iScan, t->iStart);
    w->cStart = h->cScan;
    h->cScan += count_chars(h->z, t->iStart, t->iEnd);
    w->cEnd = h->cScan;
    h->iScan = t->iEnd;
    w->id = h->bStemmed ? -1 : term_find(h->q, t->z, t->n);
    if (w->id < 0 && h->q->nPrefix) w->id = prefix_find(h->q, t->z, t->n);
    return LP_OK;
}

static int on_stemmed(void *ctx, const Token *t) {
    Hl *h = ctx;
    while (h->iCur < h->nW && h->aW[h->iCur].iStart < t->iStart)
        h->iCur++;
    if (h->iCur < h->nW && h->aW[h->iCur].iStart == t->iStart) {
        int id = term_find(h->q, t->z, t->n);
        if (id >= 0) h->aW[h->iCur].id = id;
    }
    return LP_OK;
}

/* analyzer_run_doc's tokens: keeps the zones' span terms, '<h1' at a
** span's first word and '</h1' at its last. It gives each name's starts,
** then its ends, both in order, and a name's spans do not overlap, so an
** end closes the first span of its name still open (the k-th end the k-th
** start). */
static int on_zone_term(void *ctx, const Token *t) {
    Hl *h = ctx;
    if (t->n < 2 || t->z[0] != ANALYZER_ZONE_MARK) return LP_OK;
    if (t->z[1] == '/') {
        for (int i = 0; i < h->nSpan; i++) {
            HlSpan *sp = &h->aSpan[i];
            if (sp->last == UINT32_MAX && sp->nName == t->n - 2 &&
                memcmp(h->spanNames.z + sp->iName, t->z + 2, (size_t)sp->nName) == 0) {
                sp->last = t->iPos;
                break;
            }
        }
        return LP_OK;
    }
    if (h->nSpan == h->capSpan) {
        int cap = h->capSpan ? h->capSpan * 2 : 16;
        HlSpan *a = realloc(h->aSpan, sizeof(HlSpan) * (size_t)cap);
        if (!a) return hl_nomem(h);
        h->aSpan = a;
        h->capSpan = cap;
    }
    h->aSpan[h->nSpan++] = (HlSpan){h->spanNames.n, t->n - 1, t->iPos, UINT32_MAX};
    strbuf_append(&h->spanNames, t->z + 1, (size_t)t->n - 1);
    return h->spanNames.oom ? hl_nomem(h) : LP_OK;
}

/* Is position iPos inside a span of one of term t's zones? */
static int in_zones(const Hl *h, const HlTerm *t, uint32_t iPos) {
    for (int i = 0; i < h->nSpan; i++) {
        const HlSpan *sp = &h->aSpan[i];
        if (iPos < sp->first || iPos > sp->last) continue;
        for (int z = 0; z < t->nZone; z++) {
            if ((int)strlen(t->azZone[z]) == sp->nName &&
                memcmp(t->azZone[z], h->spanNames.z + sp->iName, (size_t)sp->nName) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

/* With zone limits in the query: reads the zones' spans from the text as
** stored (zOrig, markup and all) and unmarks each word that a limited term
** marked outside its zones. */
static int apply_zones(Hl *h, const Analyzer *an, const char *zOrig, size_t nOrig) {
    int rc = analyzer_run_doc(an, zOrig, nOrig, 0, on_zone_term, h, NULL, h->err);
    for (int k = 0; rc == LP_OK && k < h->nW; k++) {
        HlWord *w = &h->aW[k];
        if (w->id < 0) continue;
        const HlTerm *t = w->id < h->q->nTerm ? &h->q->aTerm[w->id] : &h->q->aPrefix[w->id - h->q->nTerm];
        if (t->nZone > 0 && !in_zones(h, t, w->iPos)) w->id = -1;
    }
    return rc;
}

/* Bytes and characters of the passage lo..hi: the first word's start (the
** text's start for word 0) to the last word's end (the text's end for the
** last word), so edge punctuation is kept. */
static uint32_t span_start(const Hl *h, int lo) {
    return lo == 0 ? 0 : h->aW[lo].iStart;
}
static uint32_t span_end(const Hl *h, int hi) {
    return hi == h->nW - 1 ? h->n : h->aW[hi].iEnd;
}
static uint32_t span_chars(const Hl *h, int lo, int hi) {
    uint32_t c0 = lo == 0 ? 0 : h->aW[lo].cStart;
    uint32_t c1 = hi == h->nW - 1 ? h->nChars : h->aW[hi].cEnd;
    return c1 - c0;
}

/* Distinct terms among c's marked words within lo..hi; bNew: only those
** not shown yet. */
static int count_terms(Hl *h, const Cand *c, int bNew) {
    uint32_t stamp = ++h->iStamp;
    int n = 0;
    for (int j = c->m0; j < c->m1; j++) {
        int iw = h->aMatch[j];
        if (iw < c->lo || iw > c->hi) continue;
        int id = h->aW[iw].id;
        if (h->aStamp[id] == stamp || (bNew && h->aShown[id])) continue;
        h->aStamp[id] = stamp;
        n++;
    }
    return n;
}

/* Heap order: more new terms, more distinct terms, more marked words,
** earlier. */
static int cand_better(const Hl *h, int a, int b) {
    const Cand *x = &h->aCand[a], *y = &h->aCand[b];
    if (x->nNew != y->nNew) return x->nNew > y->nNew;
    if (x->nDistinct != y->nDistinct) return x->nDistinct > y->nDistinct;
    if (x->m1 - x->m0 != y->m1 - y->m0) return x->m1 - x->m0 > y->m1 - y->m0;
    return x->lo < y->lo;
}

static void heap_push(Hl *h, int c) {
    int i = h->nHeap++;
    h->aHeap[i] = c;
    while (i > 0 && cand_better(h, h->aHeap[i], h->aHeap[(i - 1) / 2])) {
        int p = (i - 1) / 2, t = h->aHeap[p];
        h->aHeap[p] = h->aHeap[i];
        h->aHeap[i] = t;
        i = p;
    }
}

static int heap_pop(Hl *h) {
    int top = h->aHeap[0];
    h->aHeap[0] = h->aHeap[--h->nHeap];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->nHeap && cand_better(h, h->aHeap[l], h->aHeap[m])) m = l;
        if (r < h->nHeap && cand_better(h, h->aHeap[r], h->aHeap[m])) m = r;
        if (m == i) break;
        int t = h->aHeap[m];
        h->aHeap[m] = h->aHeap[i];
        h->aHeap[i] = t;
        i = m;
    }
    return top;
}

/* Step 2: windows around the marked words, joined while they fit. */
static int build_candidates(Hl *h) {
    h->aCand = malloc(sizeof(Cand) * (size_t)h->nMatch);
    if (!h->aCand) return hl_nomem(h);
    int64_t around = h->o->around;
    for (int j = 0; j < h->nMatch; j++) {
        int m = h->aMatch[j];
        int lo = (int)(m - around < 0 ? 0 : m - around);
        int hi = (int)(m + around > h->nW - 1 ? h->nW - 1 : m + around);
        Cand *c = h->nCand ? &h->aCand[h->nCand - 1] : NULL;
        if (c && lo <= c->hi + 1 && span_chars(h, c->lo, hi) <= (uint32_t)h->o->limit) {
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

/* Shrinks c to at most budget characters around its first marked word
** with a term not shown yet (else its first). A word longer than the
** budget is cut inside only for the first passage (bCut); otherwise the
** passage is dropped (returns 0). */
static int shrink(Hl *h, Cand *c, uint32_t budget, int bCut) {
    int a = h->aMatch[c->m0];
    for (int j = c->m0; j < c->m1; j++) {
        if (!h->aShown[h->aW[h->aMatch[j]].id]) {
            a = h->aMatch[j];
            break;
        }
    }
    if (span_chars(h, a, a) > budget) {
        if (!bCut) return 0;
        c->lo = c->hi = a;
        c->iStart = h->aW[a].iStart;
        c->iEnd = skip_chars(h, c->iStart, budget);
        return 1;
    }
    int lo = a, hi = a, bGrew;
    do {
        bGrew = 0;
        if (hi < c->hi && span_chars(h, lo, hi + 1) <= budget) hi++, bGrew = 1;
        if (lo > c->lo && span_chars(h, lo - 1, hi) <= budget) lo--, bGrew = 1;
    } while (bGrew);
    c->lo = lo;
    c->hi = hi;
    c->iStart = span_start(h, lo);
    c->iEnd = span_end(h, hi);
    return 1;
}

/* Copies z[from..to) to the output, HTML-escaped when asked. */
static void emit_text(Hl *h, uint32_t from, uint32_t to) {
    if (!h->o->bEscapeHtml) {
        strbuf_append(h->out, h->z + from, to - from);
        return;
    }
    uint32_t i0 = from;
    for (uint32_t i = from; i < to; i++) {
        const char *zRep;
        switch (h->z[i]) {
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
        strbuf_append(h->out, h->z + i0, i - i0);
        strbuf_appendz(h->out, zRep);
        i0 = i + 1;
    }
    strbuf_append(h->out, h->z + i0, to - i0);
}

/* Copies bytes [from, to) with the marked words in it wrapped in tags. */
static void emit_range(Hl *h, uint32_t from, uint32_t to) {
    /* The first word ending after `from` (binary search). */
    int lo = 0, hi = h->nW;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (h->aW[mid].iEnd <= from) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    uint32_t i = from;
    for (int k = lo; k < h->nW && h->aW[k].iStart < to; k++) {
        const HlWord *w = &h->aW[k];
        if (w->id < 0) continue;
        uint32_t s = w->iStart > from ? w->iStart : from;
        uint32_t e = w->iEnd < to ? w->iEnd : to;
        emit_text(h, i, s);
        strbuf_appendz(h->out, h->o->zBefore);
        emit_text(h, s, e);
        strbuf_appendz(h->out, h->o->zAfter);
        i = e;
    }
    emit_text(h, i, to);
}

static int cand_by_start(const void *pa, const void *pb) {
    const Cand *a = pa, *b = pb;
    return (a->iStart > b->iStart) - (a->iStart < b->iStart);
}

/* Steps 2 and 3, then the output, for a text longer than the limit. */
static int emit_passages(Hl *h) {
    int rc = build_candidates(h);
    if (rc) return rc;
    h->aHeap = malloc(sizeof(int) * (size_t)h->nCand);
    Cand *aChosen = malloc(sizeof(Cand) * (size_t)h->nCand);
    if (!h->aHeap || !aChosen) {
        free(aChosen);
        return hl_nomem(h);
    }
    for (int k = 0; k < h->nCand; k++)
        heap_push(h, k);

    const FtsHlOptions *o = h->o;
    int64_t remaining = o->limit;
    int nChosen = 0;
    while (h->nHeap > 0 && (o->limitPassages == 0 || nChosen < o->limitPassages)) {
        int k = heap_pop(h);
        Cand *c = &h->aCand[k];
        int nNew = count_terms(h, c, 1);
        if (nNew < c->nNew) {
            /* Stale: put it back unless it still beats the best left. */
            c->nNew = nNew;
            if (h->nHeap > 0 && cand_better(h, h->aHeap[0], k)) {
                heap_push(h, k);
                continue;
            }
        }
        int bForce = o->bForceAllWords && nNew > 0;
        if (remaining <= 0 && !bForce) {
            if (!o->bForceAllWords) break;
            continue;
        }
        uint32_t len = span_chars(h, c->lo, c->hi);
        if (len <= remaining || bForce) {
            c->iStart = span_start(h, c->lo);
            c->iEnd = span_end(h, c->hi);
        } else {
            if (!shrink(h, c, (uint32_t)remaining, nChosen == 0)) continue;
            len = count_chars(h->z, c->iStart, c->iEnd);
        }
        for (int j = c->m0; j < c->m1; j++) {
            int iw = h->aMatch[j];
            if (iw >= c->lo && iw <= c->hi) h->aShown[h->aW[iw].id] = 1;
        }
        remaining -= len;
        aChosen[nChosen++] = *c;
    }

    int nOut = nChosen;
    if (!o->bWeightOrder && nChosen > 1) {
        /* Text order; overlapping or touching passages become one. */
        qsort(aChosen, (size_t)nChosen, sizeof(Cand), cand_by_start);
        nOut = 1;
        for (int k = 1; k < nChosen; k++) {
            Cand *p = &aChosen[nOut - 1], *c = &aChosen[k];
            if (c->iStart <= p->iEnd || c->lo <= p->hi + 1) {
                if (c->iEnd > p->iEnd) p->iEnd = c->iEnd;
                if (c->hi > p->hi) p->hi = c->hi;
            } else {
                aChosen[nOut++] = *c;
            }
        }
    }
    for (int k = 0; k < nOut; k++) {
        if (k > 0 || aChosen[k].iStart > 0) strbuf_appendz(h->out, o->zChunkSep);
        emit_range(h, aChosen[k].iStart, aChosen[k].iEnd);
    }
    if (nOut > 0 && aChosen[nOut - 1].iEnd < h->n) strbuf_appendz(h->out, o->zChunkSep);
    free(aChosen);
    return LP_OK;
}

/* No marked word: the start of the text, cut after a whole word. */
static void emit_start(Hl *h) {
    uint32_t cut = skip_chars(h, 0, (uint32_t)h->o->limit);
    uint32_t end = 0;
    for (int k = 0; k < h->nW && h->aW[k].iEnd <= cut; k++)
        end = h->aW[k].iEnd;
    if (end == 0) end = cut; /* even the first word is too long: cut inside it */
    emit_text(h, 0, end);
    strbuf_appendz(h->out, h->o->zChunkSep);
}

int fts_highlight(const Analyzer *an, const FtsHlQuery *q, const char *zText, size_t nText,
                  const FtsHlOptions *opt, StrBuf *out, LpError *err) {
    FtsHlOptions def;
    if (!opt) {
        fts_hl_options_init(&def);
        opt = &def;
    }
    if (opt->limit < 0 || opt->around < 0 || opt->limitPassages < 0) {
        return lp_err_set(err, LP_BADINPUT,
                          "highlight: limit, around and limit_passages must not be negative");
    }
    if (!opt->zBefore || !opt->zAfter || !opt->zChunkSep) {
        return lp_err_set(err, LP_BADINPUT,
                          "highlight: before_match, after_match and chunk_separator must be set");
    }
    /* With html_strip, the text shown is the text indexed: no markup. */
    StrBuf html = {0};
    const char *zOrig = zText;
    size_t nOrig = nText;
    int rcText = analyzer_doc_text(an, zText, nText, &html, &zText, &nText, err);
    if (rcText != LP_OK || nText == 0) {
        strbuf_free(&html);
        return rcText;
    }

    Hl h;
    memset(&h, 0, sizeof(h));
    h.q = q;
    h.o = opt;
    h.z = zText;
    h.n = (uint32_t)nText;
    h.bStemmed = analyzer_is_stemmed(an);
    h.out = out;
    h.err = err;

    /* Step 1: the words, and which of them the query marks. The analyzer
    ** refuses texts of 4 GiB and more, so the uint32_t offsets hold. */
    int rc = analyzer_run_unstemmed(an, zText, nText, on_word, &h, err);
    if (rc == LP_OK && h.bStemmed && q->nTerm > 0)
        rc = analyzer_run(an, zText, nText, 0, on_stemmed, &h, NULL, err);
    if (rc == LP_OK && q->bZones) rc = apply_zones(&h, an, zOrig, nOrig);
    if (rc) goto done;
    h.nChars = h.cScan + count_chars(zText, h.iScan, h.n);
    for (int k = 0; k < h.nW; k++)
        h.nMatch += h.aW[k].id >= 0;

    if (h.nMatch == 0 && opt->bAllowEmpty) goto done;
    if (opt->limit == 0 || h.nChars <= (uint32_t)opt->limit) {
        emit_range(&h, 0, h.n);
    } else if (h.nMatch == 0) {
        emit_start(&h);
    } else {
        int nIds = q->nTerm + q->nPrefix;
        h.aMatch = malloc(sizeof(int) * (size_t)h.nMatch);
        h.aShown = calloc((size_t)nIds, 1);
        h.aStamp = calloc((size_t)nIds, sizeof(uint32_t));
        if (!h.aMatch || !h.aShown || !h.aStamp) {
            rc = hl_nomem(&h);
            goto done;
        }
        int j = 0;
        for (int k = 0; k < h.nW; k++) {
            if (h.aW[k].id >= 0) h.aMatch[j++] = k;
        }
        rc = emit_passages(&h);
    }
    if (rc == LP_OK && out->oom) rc = hl_nomem(&h);

done:
    strbuf_free(&html);
    strbuf_free(&h.spanNames);
    free(h.aSpan);
    free(h.aW);
    free(h.aMatch);
    free(h.aCand);
    free(h.aHeap);
    free(h.aShown);
    free(h.aStamp);
    return rc;
}
