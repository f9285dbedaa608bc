/* Unit tests for the in-memory full-text index and the query engine:
** every operator against a brute-force reference evaluator on random
** documents, BM25 against hand-computed values, block-max MaxScore against
** exhaustive top-k. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <fnmatch.h>
#include <regex.h>

#include "fts/match.h"
#include "fts/memindex.h"
#include "fts/memindex_int.h"
#include "fts/rankexpr.h"
#include "fts/search.h"
#include "fts/segflush.h"
#include "fts/segment.h"
#include "text/analyzer.h"
#include "util/threadpool.h"

#define NF 2
#define NWORD 40
#define MAXLEN 400

typedef struct Doc {
    int aLen[NF];
    int aaWord[NF][MAXLEN];
} Doc;

static Doc *g_docs;
static int g_nDoc;
static FtsMem *g_mem;
static FtsSource *g_src;         /* what check_query searches: g_mem or a segment */
static Analyzer *g_an;
static const char *const g_azField[NF] = {"title", "body"};
static unsigned g_seed = 12345;

static unsigned rnd(void) {
    g_seed = g_seed * 1103515245u + 12345u;
    return (g_seed >> 16) & 0x7fff;
}

/* Zipf-ish: small word numbers are frequent. */
static int rnd_word(void) {
    double u = (rnd() + 1) / 32769.0;
    int w = (int)(NWORD * u * u * u);
    return w < NWORD ? w : NWORD - 1;
}

static void word_text(int w, char *buf) {
    /* distinct words; some share prefixes (ab0, ab1, ...); made once (the
    ** reference asks for them in its inner loops) */
    static char aText[NWORD][16];
    if (!aText[w][0]) snprintf(aText[w], 16, "%s%d", w % 3 == 0 ? "ab" : w % 3 == 1 ? "abc" : "xy", w);
    memcpy(buf, aText[w], 16);
}

static int g_aDf[NF][NWORD];     /* df per field and word, filled by build_index */
static int g_aDfUpTo[NF][NWORD]; /* docs with the word in any of fields 0..f */
static double g_aAvg[NF];        /* average field lengths */
static int df_count(int f, int w);
static int df_count_upto(int top, int w);

static int build_index(int nDoc) {
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 2, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0}; /* min_infix_len 2 */
    LpError err;
    if (analyzer_new(&cfg, &g_an, &err)) return -1;
    g_docs = calloc((size_t)nDoc, sizeof(Doc));
    g_mem = fts_mem_new(NF);
    g_nDoc = nDoc;
    FtsDocBuf d = {0};
    for (int i = 0; i < nDoc; i++) {
        fts_docbuf_reset(&d);
        for (int f = 0; f < NF; f++) {
            /* One body in eight is long: positions past 127 and 16383
            ** take two varint bytes, and frequent words recur often
            ** (the phrase matcher searches, rather than walks, those). */
            int len = f == 0 ? (int)(rnd() % 6) : rnd() % 8 == 0 ? 130 + (int)(rnd() % (MAXLEN - 130))
                                                                   : (int)(rnd() % 60);
            char text[MAXLEN * 16] = "";
            for (int k = 0; k < len; k++) {
                int w = rnd_word();
                g_docs[i].aaWord[f][k] = w;
                char buf[16];
                word_text(w, buf);
                strcat(text, buf);
                strcat(text, k % 5 == 4 ? ". " : " ");
            }
            g_docs[i].aLen[f] = len;
            if (fts_docbuf_field(&d, g_an, f, text, strlen(text), &err)) return -1;
        }
        if (fts_mem_add(g_mem, (uint32_t)i, &d)) return -1;
    }
    fts_docbuf_free(&d);
    g_src = fts_mem_source(g_mem);
    for (int f = 0; f < NF; f++) {
        double sum = 0;
        for (int i = 0; i < nDoc; i++) sum += g_docs[i].aLen[f];
        g_aAvg[f] = sum / nDoc;
        for (int w = 0; w < NWORD; w++) g_aDf[f][w] = df_count(f, w);
        for (int w = 0; w < NWORD; w++) g_aDfUpTo[f][w] = df_count_upto(f, w);
    }
    return 0;
}

static int setup(void **state) {
    (void)state;
    return build_index(1500);
}

static int teardown(void **state) {
    (void)state;
    fts_mem_free(g_mem);
    analyzer_free(g_an);
    free(g_docs);
    return 0;
}

/* ---- the reference ---- */

static int word_of(const char *z, int n) {
    for (int w = 0; w < NWORD; w++) {
        char buf[16];
        word_text(w, buf);
        if ((int)strlen(buf) == n && memcmp(buf, z, (size_t)n) == 0) return w;
    }
    return -1;
}

static int df_of(int f, int w) {
    return g_aDf[f][w];
}

static int df_count(int f, int w) {
    int n = 0;
    for (int i = 0; i < g_nDoc; i++) {
        for (int k = 0; k < g_docs[i].aLen[f]; k++) {
            if (g_docs[i].aaWord[f][k] == w) {
                n++;
                break;
            }
        }
    }
    return n;
}

/* Documents holding word w in any of fields 0..top. */
static int df_count_upto(int top, int w) {
    int n = 0;
    for (int i = 0; i < g_nDoc; i++) {
        int bHas = 0;
        for (int f = 0; f <= top && !bHas; f++) {
            for (int k = 0; k < g_docs[i].aLen[f] && !bHas; k++) bHas = g_docs[i].aaWord[f][k] == w;
        }
        n += bHas;
    }
    return n;
}

/* A clause's df over the fields of fs: the documents holding w in any of
** them when fs is fields 0..k, else the largest field's df. */
static int df_clause(const FtsFieldSet *fs, int w) {
    int dfMax = 0, top = -1, bPrefix = 1;
    for (int f = 0; f < NF; f++) {
        if (!fts_fieldset_has(fs, f)) continue;
        if (df_of(f, w) > dfMax) dfMax = df_of(f, w);
        top = f;
    }
    for (int f = 0; f < top; f++) bPrefix &= fts_fieldset_has(fs, f);
    return top >= 0 && bPrefix ? g_aDfUpTo[top][w] : dfMax;
}

static double avglen(int f) {
    return g_aAvg[f];
}

/* BM25F with the default parameters (k1 = 1.2, b = 0.75): a clause's
** frequencies, each divided by its field's length normalisation, are
** summed over the fields, saturated once and multiplied by the idf. */
static double norm(double dl, double avg) {
    return 0.25 + 0.75 * dl / avg;
}

static double sat(double x) {
    return x * 2.2 / (x + 1.2);
}

static double idf(int df) {
    double v = log((g_nDoc - df + 0.5) / (df + 0.5));
    return v > 1e-6 ? v : 1e-6;
}

/* A phrase's '*': a place any word fills. */
#define WILD (-2)

/* A word of a phrase or chain that is a prefix ("ab*") or a wildcard
** ("*b1*"): PAT - i stands for the fnmatch pattern g_azPat[i]. */
#define PAT (-1000)
#define PAT_MAX 256
static char g_azPat[PAT_MAX][24];
static int g_nPat;

static int pat_id(const char *z, int n) {
    for (int i = 0; i < g_nPat; i++) {
        if ((int)strlen(g_azPat[i]) == n && memcmp(g_azPat[i], z, (size_t)n) == 0) return PAT - i;
    }
    assert_true(g_nPat < PAT_MAX && n < 24);
    memcpy(g_azPat[g_nPat], z, (size_t)n);
    g_azPat[g_nPat][n] = 0;
    return PAT - g_nPat++;
}

/* The words of a phrase's text, split on spaces (-1: not a vocabulary
** word; WILD: a '*'; PAT - i: a prefix, "ab*"). */
/* A vocabulary word anchored inside a phrase or quorum ("a ^b c$"~3):
** its id with these bits (only where fits_at reads them). */
#define ANC_START (1 << 24)
#define ANC_END (1 << 25)
#define WORD_OF(w) ((w) >= 0 ? (w) & (ANC_START - 1) : (w))

static int split_words(const FtsNode *x, int *aw, int nMax) {
    const char *z = x->z;
    int nw = 0;
    const char *p = z;
    while (*p && nw < nMax) {
        while (*p == ' ') p++;
        const char *e = p;
        while (*e && *e != ' ') e++;
        if (e > p) {
            int w = e - p == 1 && *p == '*'            ? WILD
                    : memchr(p, '*', (size_t)(e - p)) ? pat_id(p, (int)(e - p))
                                                      : word_of(p, (int)(e - p));
            int o0 = (int)(p - z), o1 = (int)(e - z);
            if (w >= 0 && x->aMark && o0 > 0 && x->aMark[o0 - 1] == '^') w |= ANC_START;
            if (w >= 0 && x->aMark && o1 < x->n && x->aMark[o1] == '$') w |= ANC_END;
            aw[nw++] = w;
        }
        p = e;
    }
    return nw;
}

/* Does the word buf fit wildcard pattern pat: a glob (fnmatch), or the
** text of a REGEX(/…/) operator, matched whole by POSIX's extended
** regular expressions (an implementation of its own, for the reference;
** the patterns here mean the same in PCRE2's syntax)? */
static int ref_wild(const char *pat, const char *buf) {
    size_t n = strlen(pat);
    if (n < 9 || memcmp(pat, "REGEX(", 6) != 0) return fnmatch(pat, buf, 0) == 0;
    static char zLast[64];
    static regex_t re;
    static int bRe;
    if (!bRe || strcmp(zLast, pat) != 0) {
        char zWhole[80];
        snprintf(zWhole, sizeof(zWhole), "^(%.*s)$", (int)n - 9, pat + 7);
        if (bRe) regfree(&re);
        assert_int_equal(regcomp(&re, zWhole, REG_EXTENDED | REG_NOSUB), 0);
        snprintf(zLast, sizeof(zLast), "%s", pat);
        bRe = 1;
    }
    return regexec(&re, buf, 0, NULL, 0) == 0;
}

/* Does word d fill the place of query word w? */
static int word_fits(int d, int w) {
    w = WORD_OF(w);
    if (w <= PAT) {
        char buf[16];
        word_text(d, buf);
        return ref_wild(g_azPat[PAT - w], buf);
    }
    return w == WILD || d == w;
}

/* Does position k of a field holding d[0..len) fill the place of query
** word w, its anchors included? */
static int fits_at(const int *d, int k, int len, int w) {
    if ((w >= 0 && (w & ANC_START) && k != 0) || (w >= 0 && (w & ANC_END) && k != len - 1)) return 0;
    return word_fits(d[k], w);
}

/* Is w a word a document can hold (a vocabulary word or a pattern)? */
static int is_real_word(int w) {
    return w >= 0 || w <= PAT;
}

/* Field f's df of query word w: a pattern's is its words' summed (at
** most the documents), as the engine reads them as one list. */
static int df_word(int f, int w) {
    w = WORD_OF(w);
    if (w >= 0) return df_of(f, w);
    if (w > PAT) return 0;
    int df = 0;
    for (int t = 0; t < NWORD; t++) df += word_fits(t, w) ? df_of(f, t) : 0;
    return df < g_nDoc ? df : g_nDoc;
}

/* How many leading positions of doc i's field f a leaf limited to nLimit
** (@field[N]; 0: none) can match in. Lengths for BM25 and the field's
** end ('$') stay the whole field's. */
static int scan_len(uint32_t nLimit, int i, int f) {
    int len = g_docs[i].aLen[f];
    return nLimit && (int64_t)nLimit < len ? (int)nLimit : len;
}

/* The words of a chain operand (a TERM, an exact PHRASE, a PREFIX or a
** WILDCARD: one pattern). */
static int operand_words(const FtsNode *x, int *aw) {
    if (x->kind == FTSN_PREFIX) {
        char z[24];
        snprintf(z, sizeof(z), "%.*s*", x->n, x->z);
        aw[0] = pat_id(z, (int)strlen(z));
        return 1;
    }
    if (x->kind == FTSN_WILDCARD) {
        aw[0] = pat_id(x->z, x->n);
        return 1;
    }
    return split_words(x, aw, 8);
}

/* Are operands r and o of chain n the same words (a NEAR's repeat, which
** takes an occurrence of its own, as in Sphinx)? */
static int same_operand(const FtsNode *n, int r, int o) {
    int ar[8], ao[8];
    int nr = operand_words(n->aChild[r], ar), no = operand_words(n->aChild[o], ao);
    return nr == no && memcmp(ar, ao, sizeof(int) * (size_t)nr) == 0 && n->aChild[r]->anchor == n->aChild[o]->anchor;
}

/* Does chain operand x, nw words from position s of doc i's field f, fit
** its anchor ('^': s is the field's first position; '$': its last word
** the field's last)? */
static int anchor_fits(const FtsNode *x, int i, int f, int s, int nw) {
    if ((x->anchor & FTS_ANCHOR_START) && s != 0) return 0;
    return !(x->anchor & FTS_ANCHOR_END) || s + nw == g_docs[i].aLen[f];
}

static int g_aPick[16]; /* chain_holds: each operand's start so far */

/* Does doc i's field f hold the chain n from operand o on, given the span
** [lo, hi] the operands before o took? Depth-first over every choice of
** occurrence: independent of the engine's greedy and span pruning. A
** NEAR's repeated operand ("a NEAR/3 a") takes another occurrence. */
static int chain_holds(const FtsNode *n, int i, int f, int o, int lo, int hi) {
    if (o == n->nChild) return 1;
    int aw[8];
    int nw = operand_words(n->aChild[o], aw);
    assert_true(o < 16);
    const int *d = g_docs[i].aaWord[f];
    int scan = scan_len(n->aChild[o]->nPosLimit, i, f);
    for (int s = 0; s + nw <= scan; s++) {
        int ok = anchor_fits(n->aChild[o], i, f, s, nw);
        for (int j = 0; j < nw && ok; j++) ok = fits_at(d, s + j, g_docs[i].aLen[f], aw[j]);
        if (!ok) continue;
        int bTaken = 0;
        for (int r = 0; r < o && n->kind == FTSN_NEAR && !bTaken; r++) bTaken = g_aPick[r] == s && same_operand(n, r, o);
        if (bTaken) continue;
        g_aPick[o] = s;
        int e = s + nw - 1, nlo = s, nhi = e;
        if (o > 0) {
            if (n->kind == FTSN_BEFORE) {
                if (s <= hi) continue;
            } else if (n->kind == FTSN_NEAR) {
                int gap = s > hi ? s - hi : lo > e ? lo - e : 0;
                if (gap > n->aDist[o - 1]) continue;
                nlo = s < lo ? s : lo;
                nhi = e > hi ? e : hi;
            }
        }
        if (chain_holds(n, i, f, o + 1, nlo, nhi)) return 1;
    }
    return 0;
}

/* NEAR/N as Sphinx and Manticore match it: their automaton (sphinxsearch's
** FSMmultinear), written out here from its description, for chains that
** repeat no operand. A run of links of one distance is a level whose
** first child is the level before; a level reads its children's
** occurrences in position order (at one position: the child with more
** documents first, a phrase or prefix before any word, then the later
** child) and the chains it completes are the next level's first child's. */
typedef struct RHit {
    int pos, len, who;
    unsigned tie;
} RHit;

static int rhit_cmp(const void *x, const void *y) {
    const RHit *a = x, *b = y;
    if (a->pos != b->pos) return a->pos - b->pos;
    if (a->tie != b->tie) return a->tie > b->tie ? -1 : 1;
    return b->who - a->who;
}

/* Runs one level over its sorted stream a[0..n); its chains into out. */
static int ref_near_level(const RHit *a, int n, int nChild, int near, RHit *out) {
    int nOut = 0, lastP = 0, lastLen = 0, preP = 0, preLen = 0, firstP = 0, firstWho = -1;
    int aHeld[32], nHeld = 0, iRing = 0;
    RHit aRing[32];
    assert_true(nChild <= 32);
    for (int k = 0; k < n; k++) {
        RHit h = a[k];
        int p = h.pos;
        if (lastP == p) {
            if (!(preP && lastLen < h.len)) continue;
            lastLen = preLen;
            firstP = lastP = preP;
        }
        if (lastP == 0 || lastP + lastLen + near <= p) {
            firstP = lastP = p;
            lastLen = h.len;
            firstWho = h.who;
            nHeld = 1;
            aHeld[0] = h.who;
            aRing[iRing] = h;
            continue;
        }
        int tail = (iRing + nHeld - 1) % nChild;
        if (nChild == 2) {
            if (firstP + lastLen > p && firstP + lastLen < p + h.len && lastLen != h.len) {
                firstP = lastP = p;
                lastLen = h.len;
                firstWho = h.who;
                continue;
            }
            if (h.who == firstWho) {
                if (lastP < p) {
                    preLen = lastLen, preP = lastP;
                    firstP = lastP = p;
                    lastLen = h.len;
                }
                continue;
            }
        } else if (h.who < aHeld[0] || h.who > aHeld[nHeld - 1]) {
            int at = h.who < aHeld[0] ? 0 : nHeld;
            for (int j = nHeld; j > at; j--) aHeld[j] = aHeld[j - 1];
            aHeld[at] = h.who;
            nHeld++;
        } else if (h.who != aHeld[0] && h.who != aHeld[nHeld - 1]) {
            int lo = 0, hi = nHeld, bSkip = 0;
            while (hi - lo > 1 && !bSkip) {
                int mid = (lo + hi) / 2;
                if (h.who == aHeld[mid]) {
                    if (h.who == aRing[iRing].who) {
                        firstP = aRing[iRing].pos;
                        iRing = (iRing + 1) % nChild;
                    } else if (h.who != aRing[tail].who) {
                        bSkip = 1;
                    }
                }
                if (h.who < aHeld[mid]) hi = mid; else lo = mid;
            }
            if (bSkip) continue;
            for (int j = nHeld; j > hi; j--) aHeld[j] = aHeld[j - 1];
            aHeld[hi] = h.who;
            nHeld++;
        } else if (h.who == aRing[iRing].who) {
            firstP = aRing[iRing].pos;
            iRing = (iRing + 1) % nChild;
        } else if (h.who != aRing[tail].who) {
            continue;
        }
        lastLen = h.len;
        if (nChild != 2) aRing[(iRing + nHeld - 1) % nChild] = h;
        if (nChild == 2 || nHeld == nChild) {
            out[nOut++] = (RHit){firstP, p - firstP + lastLen, 0, 0};
            preP = 0;
            if (nChild == 2) firstP = lastP = p; else lastP = 0;
            continue;
        }
        lastP = p;
    }
    return nOut;
}

/* Does doc i's field f hold the NEAR chain n (no operand repeated)? With
** aChain (room for 4 * MAXLEN), the chains the last level completes go
** there, *pnChain of them, starts 1-based. */
static int near_sphinx(const FtsNode *n, int i, int f, RHit *aChain, int *pnChain) {
    enum { CAP = 4 * MAXLEN };
    static RHit aS[CAP], aPrev[CAP], aOut[CAP];
    int nPrev = 0;
    for (int o0 = 0; o0 < n->nChild;) {
        int near = n->aDist[o0 ? o0 - 1 : 0], o1 = o0 + 1;
        while (o1 < n->nChild && n->aDist[o1 - 1] == near) o1++;
        int m = 0, who = 0;
        if (o0) {
            for (int k = 0; k < nPrev; k++) aS[m++] = (RHit){aPrev[k].pos, aPrev[k].len, 0, UINT_MAX};
            who = 1;
        }
        for (int o = o0; o < o1; o++, who++) {
            int aw[8], nw = operand_words(n->aChild[o], aw);
            int bWord = nw == 1 && n->aChild[o]->kind != FTSN_PREFIX && n->aChild[o]->kind != FTSN_WILDCARD;
            unsigned tie = bWord ? (unsigned)df_word(f, aw[0]) : UINT_MAX;
            const int *d = g_docs[i].aaWord[f];
            int scan = scan_len(n->aChild[o]->nPosLimit, i, f);
            for (int s = 0; s + nw <= scan; s++) {
                int ok = anchor_fits(n->aChild[o], i, f, s, nw);
                for (int j = 0; j < nw && ok; j++) ok = fits_at(d, s + j, g_docs[i].aLen[f], aw[j]);
                if (ok) {
                    assert_true(m < CAP);
                    aS[m++] = (RHit){s + 1, nw, who, tie};
                }
            }
        }
        qsort(aS, (size_t)m, sizeof(RHit), rhit_cmp);
        nPrev = ref_near_level(aS, m, who, near, aOut);
        if (aChain && o1 == n->nChild) {
            memcpy(aChain, aOut, sizeof(RHit) * (size_t)nPrev);
            *pnChain = nPrev;
        }
        if (nPrev == 0) return 0;
        memcpy(aPrev, aOut, sizeof(RHit) * (size_t)nPrev);
        o0 = o1;
    }
    return 1;
}

/* Does doc i's field f hold the chain n (NEAR: see near_sphinx; NEAR with
** a repeated operand: below)? */
static int chain_holds_near(const FtsNode *n, int i, int f) {
    for (int o = 1; o < n->nChild; o++) {
        for (int r = 0; r < o; r++) {
            if (same_operand(n, r, o)) return chain_holds(n, i, f, 0, 0, -1);
        }
    }
    return near_sphinx(n, i, f, NULL, NULL);
}

typedef struct ROcc ROcc;
static void ref_keep_occ(ROcc *a, int *pn, int s, int e);

/* Occurrences of a NOTNEAR's first operand in doc i's field f with no
** occurrence of the second within the distance (the gap NEAR measures),
** every pair compared; with a, each is appended to it (*pn of them). */
static int notnear_count_occ(const FtsNode *n, int i, int f, ROcc *a, int *pn) {
    int aw0[8], aw1[8];
    int nw0 = operand_words(n->aChild[0], aw0), nw1 = operand_words(n->aChild[1], aw1);
    const int *d = g_docs[i].aaWord[f];
    int scan0 = scan_len(n->aChild[0]->nPosLimit, i, f), scan1 = scan_len(n->aChild[1]->nPosLimit, i, f);
    int nKeep = 0;
    for (int s = 0; s + nw0 <= scan0; s++) {
        int ok = anchor_fits(n->aChild[0], i, f, s, nw0);
        for (int j = 0; j < nw0 && ok; j++) ok = fits_at(d, s + j, g_docs[i].aLen[f], aw0[j]);
        if (!ok) continue;
        int lo = s, hi = s + nw0 - 1, bNear = 0, bSame = same_operand(n, 0, 1);
        for (int t = 0; t + nw1 <= scan1 && !bNear; t++) {
            int m = !(bSame && t == s) && anchor_fits(n->aChild[1], i, f, t, nw1);
            for (int j = 0; j < nw1 && m; j++) m = fits_at(d, t + j, g_docs[i].aLen[f], aw1[j]);
            int e = t + nw1 - 1;
            int gap = t > hi ? t - hi : lo > e ? lo - e : 0;
            bNear = m && gap <= n->aDist[0];
        }
        nKeep += !bNear;
        if (!bNear && a) ref_keep_occ(a, pn, s, s + nw0);
    }
    return nKeep;
}

static int notnear_count(const FtsNode *n, int i, int f) {
    return notnear_count_occ(n, i, f, NULL, NULL);
}

static int ref_eval(const FtsNode *n, int i, double *pScore);

/* An occurrence of an ORDER operand in one field: [s, e). */
struct ROcc {
    int s, e;
};
#define ROCC_MAX 2048

static void ref_keep_occ(ROcc *a, int *pn, int s, int e) {
    assert_true(*pn < ROCC_MAX);
    a[(*pn)++] = (ROcc){s, e};
}

/* Does word d of doc i's field f fit leaf x (a TERM, PREFIX or WILDCARD)? */
static int leaf_fits(const FtsNode *x, int d) {
    char buf[16];
    word_text(d, buf);
    if (x->kind == FTSN_WILDCARD) return ref_wild(x->z, buf);
    if (x->kind == FTSN_PREFIX) return (int)strlen(buf) >= x->n && !memcmp(buf, x->z, (size_t)x->n);
    return (int)strlen(buf) == x->n && !memcmp(buf, x->z, (size_t)x->n);
}

/* Appends to a the places of words aw[0..nw) among doc i's first scan
** words of field f, one position each. */
static void ref_word_places(const int *aw, int nw, int i, int f, int scan, ROcc *a, int *pn) {
    const int *d = g_docs[i].aaWord[f];
    for (int k = 0; k < scan; k++) {
        int bIn = 0;
        for (int j = 0; j < nw; j++) bIn |= is_real_word(aw[j]) && fits_at(d, k, g_docs[i].aLen[f], aw[j]);
        if (!bIn) continue;
        assert_true(*pn < ROCC_MAX);
        a[(*pn)++] = (ROcc){k, k + 1};
    }
}

static void ref_order_scan(const FtsNode *x, int i, int f, ROcc *a, int *pn);
static int near_any_ref(const FtsNode *n, int i, int f, RHit *aChain, int *pnChain);
static int notnear_any_ref(const FtsNode *n, int i, int f, ROcc *a, int *pn);

/* Appends to a the windows of the proximity phrase aw[0..nw)~nSlop among
** doc i's first scan words of field f, in order of their start: from each
** occurrence s of one of its words, the span to the first occurrences
** at or after s of every word (a word the query repeats m times: its
** first m), when it spans fewer than nSlop + nw positions. Overlapping
** windows are all there: the phrase's frequency counts those that do not
** overlap an earlier one, an ORDER sees them all. */
static void ref_prox_windows(const int *aw, int nw, int nSlop, int i, int f, int scan, ROcc *a, int *pn) {
    const int *d = g_docs[i].aaWord[f];
    for (int s = 0; s < scan; s++) {
        int limit = nSlop + nw, e = s + limit - 2;
        if (e >= scan) e = scan - 1;
        int ok = 1, hi = s;
        for (int j = 0; j < nw && ok; j++) {
            int need = 0, found = -1;
            for (int m = 0; m < nw; m++) need += aw[m] == aw[j];
            for (int k = s; k <= e && found < 0; k++) {
                if (fits_at(d, k, g_docs[i].aLen[f], aw[j]) && --need == 0) found = k;
            }
            ok = found >= 0;
            if (found > hi) hi = found;
        }
        int first = 0;
        for (int j = 0; j < nw && ok; j++) first |= fits_at(d, s, g_docs[i].aLen[f], aw[j]);
        if (!ok || !first) continue;
        assert_true(*pn < ROCC_MAX);
        a[(*pn)++] = (ROcc){s, hi + 1};
    }
}

/* ref_occ for an FTSN_NEAR_ANY (1) or an ORDER (0): a proximity phrase's
** windows as the one reading them sees them. */
static int g_occNear;

/* The windows of the proximity phrase aw[0..nw)~nSlop as NEAR reads them:
** at each occurrence of one of its words, in position order, the window
** of every word's latest occurrences up to it (a word the query repeats m
** times: its latest m), when they span fewer than nSlop + nw positions
** and it starts after the window before. */
static void ref_prox_latest(const int *aw, int nw, int nSlop, int i, int f, int scan, ROcc *a, int *pn) {
    const int *d = g_docs[i].aaWord[f];
    int n0 = *pn; /* this phrase's windows: from a[n0] */
    for (int k = 0; k < scan; k++) {
        int bWord = 0;
        for (int j = 0; j < nw; j++) bWord |= fits_at(d, k, g_docs[i].aLen[f], aw[j]);
        if (!bWord) continue;
        int lo = k, ok = 1;
        for (int j = 0; j < nw && ok; j++) {
            int need = 0, found = -1;
            for (int m = 0; m < nw; m++) need += aw[m] == aw[j];
            for (int t = k; t >= 0 && found < 0; t--) {
                if (fits_at(d, t, g_docs[i].aLen[f], aw[j]) && --need == 0) found = t;
            }
            ok = found >= 0;
            if (found >= 0 && found < lo) lo = found;
        }
        if (!ok || k - lo + 1 >= nSlop + nw || (*pn > n0 && lo <= a[*pn - 1].s)) continue;
        assert_true(*pn < ROCC_MAX);
        a[(*pn)++] = (ROcc){lo, k + 1};
    }
}

/* Appends to a (room for ROCC_MAX) the occurrences of x, a part of an ORDER
** that matches doc i, in field f: a word's, prefix's or wildcard's
** places; an exact phrase's matches; a proximity phrase's windows; a NEAR
** chain's words where it holds in f; the positive parts' of an AND, the
** matching parts' of an OR, a quorum's words, a MAYBE's two sides' (the
** optional one's where it matches). */
static void ref_occ(const FtsNode *x, int i, int f, ROcc *a, int *pn) {
    const int *d = g_docs[i].aaWord[f];
    int len = g_docs[i].aLen[f];
    double sc;
    switch (x->kind) {
    case FTSN_TERM:
    case FTSN_PREFIX:
    case FTSN_WILDCARD:
        if (!fts_fieldset_has(&x->fields, f)) return;
        for (int k = 0; k < scan_len(x->nPosLimit, i, f); k++) {
            if (!leaf_fits(x, d[k])) continue;
            if ((x->anchor & FTS_ANCHOR_START) && k != 0) continue;
            if ((x->anchor & FTS_ANCHOR_END) && k != len - 1) continue;
            assert_true(*pn < ROCC_MAX);
            a[(*pn)++] = (ROcc){k, k + 1};
        }
        return;
    case FTSN_PHRASE: {
        int aw[8], nw = split_words(x, aw, 8);
        if (!fts_fieldset_has(&x->fields, f)) return;
        if (x->nSlop) {
            /* a proximity phrase: its windows in f */
            for (int j = 0; j < nw; j++) {
                if (aw[j] == -1) return;
            }
            if (g_occNear) ref_prox_latest(aw, nw, x->nSlop, i, f, scan_len(x->nPosLimit, i, f), a, pn);
            else ref_prox_windows(aw, nw, x->nSlop, i, f, scan_len(x->nPosLimit, i, f), a, pn);
            return;
        }
        for (int k = 0; k + nw <= scan_len(x->nPosLimit, i, f); k++) {
            int ok = 1;
            for (int j = 0; j < nw && ok; j++) ok = aw[j] != -1 && fits_at(d, k + j, g_docs[i].aLen[f], aw[j]);
            if ((x->anchor & FTS_ANCHOR_START) && k != 0) ok = 0;
            if ((x->anchor & FTS_ANCHOR_END) && k + nw != len) ok = 0;
            if (!ok) continue;
            assert_true(*pn < ROCC_MAX);
            a[(*pn)++] = (ROcc){k, k + nw};
        }
        return;
    }
    case FTSN_QUORUM: {
        int aw[64], nw = split_words(x, aw, 64);
        if (fts_fieldset_has(&x->fields, f)) ref_word_places(aw, nw, i, f, scan_len(x->nPosLimit, i, f), a, pn);
        return;
    }
    case FTSN_BEFORE:
        /* '<<' over words is an ORDER too */
        if (fts_fieldset_has(&x->fields, f)) ref_order_scan(x, i, f, a, pn);
        return;
    case FTSN_NEAR: {
        if (x->bNotNear) {
            /* its first operand's occurrences that the second is not near */
            if (fts_fieldset_has(&x->fields, f)) notnear_count_occ(x, i, f, a, pn);
            return;
        }
        if (!fts_fieldset_has(&x->fields, f) || !chain_holds_near(x, i, f)) return;
        /* one distance and no operand repeated: the chains Sphinx's
        ** automaton completes; else the operands' words */
        int bOneLevel = 1;
        for (int o = 1; o < x->nChild; o++) {
            bOneLevel &= g_occNear || o + 1 == x->nChild || x->aDist[o] == x->aDist[0];
            for (int r = 0; r < o; r++) bOneLevel &= !same_operand(x, r, o);
        }
        if (bOneLevel) {
            /* ORDER: each from its start, one position per operand; NEAR:
            ** the last level's chains, each its span */
            static RHit aChain[4 * MAXLEN];
            int nChain = 0, len = x->nChild;
            near_sphinx(x, i, f, aChain, &nChain);
            for (int k = 0; k < nChain; k++) {
                assert_true(*pn < ROCC_MAX);
                a[(*pn)++] = (ROcc){aChain[k].pos - 1, aChain[k].pos - 1 + (g_occNear ? aChain[k].len : len)};
            }
            return;
        }
        for (int c = 0; c < x->nChild; c++) {
            int aw[8], nw = operand_words(x->aChild[c], aw);
            ref_word_places(aw, nw, i, f, scan_len(x->aChild[c]->nPosLimit, i, f), a, pn);
        }
        return;
    }
    case FTSN_AND:
        for (int c = 0; c < x->nChild; c++) {
            if (x->aChild[c]->kind != FTSN_NOT) ref_occ(x->aChild[c], i, f, a, pn);
        }
        return;
    case FTSN_ORDER:
        ref_order_scan(x, i, f, a, pn);
        return;
    case FTSN_NEAR_ANY: {
        if (x->bNotNear) {
            notnear_any_ref(x, i, f, a, pn);
            return;
        }
        /* the chains the automaton completes, each from its start, one
        ** position per operand */
        RHit *aChain = malloc(sizeof(RHit) * 4 * ROCC_MAX);
        int nChain = 0;
        assert_non_null(aChain);
        if (near_any_ref(x, i, f, aChain, &nChain)) {
            for (int k = 0; k < nChain; k++) {
                assert_true(*pn < ROCC_MAX);
                a[(*pn)++] = (ROcc){aChain[k].pos - 1, aChain[k].pos - 1 + x->nChild};
            }
        }
        free(aChain);
        return;
    }
    case FTSN_OR:
        for (int c = 0; c < x->nChild; c++) {
            if (ref_eval(x->aChild[c], i, &sc)) ref_occ(x->aChild[c], i, f, a, pn);
        }
        return;
    case FTSN_MAYBE:
        ref_occ(x->aChild[0], i, f, a, pn);
        if (ref_eval(x->aChild[1], i, &sc)) ref_occ(x->aChild[1], i, f, a, pn);
        return;
    default:
        fail_msg("ref_occ: node kind %d", (int)x->kind);
    }
}

/* An ORDER (or '<<' chain) x inside an ORDER hands it, in doc i's field
** f, the occurrences of the chains Sphinx's scan finds (ExtOrder's
** GetMatchingHits): every operand's occurrences in position order (the
** earlier operand first at one place), a longest chain and a most recent
** one kept; a complete chain's occurrences are appended to a and both
** chains start over. */
static void ref_order_scan(const FtsNode *x, int i, int f, ROcc *a, int *pn) {
    int n = x->nChild, nAll = 0;
    ROcc *occ = malloc(sizeof(ROcc) * ROCC_MAX);
    int *who = malloc(sizeof(int) * ROCC_MAX);
    assert_true(occ && who && n <= 16);
    int bWas = g_occNear; /* an ORDER reads its operands as ORDER does */
    g_occNear = 0;
    for (int c = 0; c < n; c++) {
        int n0 = nAll;
        ref_occ(x->aChild[c], i, f, occ, &nAll);
        for (int k = n0; k < nAll; k++) who[k] = c;
    }
    g_occNear = bWas;
    /* position order, ties by operand: a selection sort will do */
    for (int k = 0; k < nAll; k++) {
        int m = k;
        for (int j = k + 1; j < nAll; j++) {
            if (occ[j].s < occ[m].s || (occ[j].s == occ[m].s && who[j] < who[m])) m = j;
        }
        ROcc t = occ[k];
        occ[k] = occ[m], occ[m] = t;
        int w = who[k];
        who[k] = who[m], who[m] = w;
    }
    ROcc aLong[16], aRecent[16];
    int nLong = 0, nRecent = 0, posLong = 0, posRecent = 0, bStarted = 0;
    for (int k = 0; k < nAll; k++) {
        int c = who[k];
        if (!bStarted) {
            if (c != 0) continue;
            bStarted = 1;
            aLong[nLong++] = occ[k];
            posLong = occ[k].e;
        } else if (c == nLong && occ[k].s >= posLong) {
            aLong[nLong++] = occ[k];
            posLong = occ[k].e;
            if (nLong == n) {
                for (int j = 0; j < n; j++) {
                    assert_true(*pn < ROCC_MAX);
                    a[(*pn)++] = aLong[j];
                }
                nLong = nRecent = 0;
                posRecent = posLong;
            }
        } else if (c == 0) {
            aRecent[0] = occ[k];
            nRecent = 1;
            posRecent = occ[k].e;
            if (nLong == 0) aLong[nLong++] = occ[k], posLong = occ[k].e;
        } else if (c == nRecent && occ[k].s >= posRecent) {
            aRecent[nRecent++] = occ[k];
            posRecent = occ[k].e;
            if (nRecent == nLong) {
                memcpy(aLong, aRecent, sizeof(ROcc) * (size_t)nRecent);
                nRecent = 0;
                posLong = posRecent;
            }
        }
    }
    free(occ);
    free(who);
}

/* Does doc i's field f hold NOTNEAR n over any operands (an FTSN_NEAR_ANY
** with bNotNear, whose first operand matches doc i): an occurrence of the
** first there (as NEAR reads it) with no occurrence of the second (none
** where it does not match doc i) within the distance, one at the very
** same place not counted? Every pair compared; with a, each such first
** occurrence is appended to it (*pn of them). */
static int notnear_any_ref(const FtsNode *n, int i, int f, ROcc *a, int *pn) {
    ROcc *occ0 = malloc(sizeof(ROcc) * ROCC_MAX), *occ1 = malloc(sizeof(ROcc) * ROCC_MAX);
    assert_true(occ0 && occ1);
    int n0 = 0, n1 = 0, nKeep = 0, bWas = g_occNear;
    double sc;
    g_occNear = 1;
    ref_occ(n->aChild[0], i, f, occ0, &n0);
    if (ref_eval(n->aChild[1], i, &sc)) ref_occ(n->aChild[1], i, f, occ1, &n1);
    g_occNear = bWas;
    for (int k = 0; k < n0; k++) {
        int bNear = 0;
        for (int j = 0; j < n1 && !bNear; j++) {
            if (occ1[j].s == occ0[k].s && occ1[j].e == occ0[k].e) continue;
            int gap = occ1[j].s > occ0[k].e - 1 ? occ1[j].s - (occ0[k].e - 1)
                      : occ0[k].s > occ1[j].e - 1 ? occ0[k].s - (occ1[j].e - 1)
                                                 : 0;
            bNear = gap <= n->aDist[0];
        }
        if (bNear) continue;
        nKeep++;
        if (a) ref_keep_occ(a, pn, occ0[k].s, occ0[k].e);
    }
    free(occ0);
    free(occ1);
    return nKeep > 0;
}

/* Does doc i's field f hold FTSN_NEAR_ANY n: its operands' occurrences
** there (ref_occ: each where it matches) make a chain by Sphinx's
** automaton, level by level as near_sphinx runs it? With aChain (room for
** 4 * ROCC_MAX), the chains the last level completes, *pnChain of them. */
static int near_any_ref(const FtsNode *n, int i, int f, RHit *aChain, int *pnChain) {
    enum { CAP = 4 * ROCC_MAX };
    RHit *aS = malloc(sizeof(RHit) * CAP), *aPrev = malloc(sizeof(RHit) * CAP), *aOut = malloc(sizeof(RHit) * CAP);
    ROcc *occ = malloc(sizeof(ROcc) * ROCC_MAX);
    assert_true(aS && aPrev && aOut && occ);
    int nPrev = 0, bHolds = 1;
    for (int o0 = 0; o0 < n->nChild && bHolds;) {
        int near = n->aDist[o0 ? o0 - 1 : 0], o1 = o0 + 1;
        while (o1 < n->nChild && n->aDist[o1 - 1] == near) o1++;
        int m = 0, who = 0;
        if (o0) {
            for (int k = 0; k < nPrev; k++) aS[m++] = (RHit){aPrev[k].pos, aPrev[k].len, 0, UINT_MAX};
            who = 1;
        }
        for (int o = o0; o < o1; o++, who++) {
            const FtsNode *c = n->aChild[o];
            int w = c->kind == FTSN_TERM && !c->anchor && !c->nPosLimit ? word_of(c->z, c->n) : -1;
            unsigned tie = w >= 0 ? (unsigned)df_word(f, w) : UINT_MAX;
            int nOcc = 0, bWas = g_occNear;
            g_occNear = 1;
            ref_occ(c, i, f, occ, &nOcc);
            g_occNear = bWas;
            for (int k = 0; k < nOcc; k++) {
                assert_true(m < CAP);
                aS[m++] = (RHit){occ[k].s + 1, occ[k].e - occ[k].s, who, tie};
            }
        }
        qsort(aS, (size_t)m, sizeof(RHit), rhit_cmp);
        nPrev = ref_near_level(aS, m, who, near, aOut);
        if (aChain && o1 == n->nChild) {
            memcpy(aChain, aOut, sizeof(RHit) * (size_t)nPrev);
            *pnChain = nPrev;
        }
        bHolds = nPrev > 0;
        memcpy(aPrev, aOut, sizeof(RHit) * (size_t)nPrev);
        o0 = o1;
    }
    free(aS);
    free(aPrev);
    free(aOut);
    free(occ);
    return bHolds;
}

/* Does doc i's field f hold ORDER n's operands from o on, each starting at
** or after the end of the one before (from)? Every choice, depth first. */
static int order_holds_ref(const FtsNode *n, int i, int f, int o, int from) {
    if (o == n->nChild) return 1;
    ROcc *a = malloc(sizeof(ROcc) * ROCC_MAX);
    int na = 0, bHolds = 0;
    assert_non_null(a);
    ref_occ(n->aChild[o], i, f, a, &na);
    for (int k = 0; k < na && !bHolds; k++) bHolds = a[k].s >= from && order_holds_ref(n, i, f, o + 1, a[k].e);
    free(a);
    return bHolds;
}

/* Does doc i match node n; *pScore = its contribution. */
static int ref_eval(const FtsNode *n, int i, double *pScore) {
    *pScore = 0;
    switch (n->kind) {
    case FTSN_TERM:
        if (n->anchor) {
            /* the word first and/or last in a field: tf 0 or 1 */
            int w = word_of(n->z, n->n);
            if (w < 0) return 0;
            double x = 0;
            for (int f = 0; f < NF; f++) {
                int len = g_docs[i].aLen[f];
                if (!fts_fieldset_has(&n->fields, f) || len == 0) continue;
                /* one occurrence at the start and/or the end */
                int ok = 0;
                for (int k = 0; k < scan_len(n->nPosLimit, i, f) && !ok; k++) {
                    ok = g_docs[i].aaWord[f][k] == w &&
                         (!(n->anchor & FTS_ANCHOR_START) || k == 0) &&
                         (!(n->anchor & FTS_ANCHOR_END) || k == len - 1);
                }
                if (ok) x += 1 / norm(len, avglen(f));
            }
            if (x == 0) return 0;
            *pScore = idf(df_clause(&n->fields, w)) * sat(x) * (n->fBoost ? n->fBoost : 1);
            return 1;
        }
        /* fall through */
    case FTSN_PREFIX:
    case FTSN_WILDCARD: {
        int any = 0;
        for (int w = 0; w < NWORD; w++) {
            char buf[16];
            word_text(w, buf);
            int ok = n->kind == FTSN_TERM     ? (int)strlen(buf) == n->n && !memcmp(buf, n->z, (size_t)n->n)
                     : n->kind == FTSN_WILDCARD ? ref_wild(n->z, buf)
                                                : (int)strlen(buf) >= n->n && !memcmp(buf, n->z, (size_t)n->n);
            if (!ok) continue;
            double x = 0;
            for (int f = 0; f < NF; f++) {
                if (!fts_fieldset_has(&n->fields, f)) continue;
                int tf = 0;
                for (int k = 0; k < scan_len(n->nPosLimit, i, f); k++) tf += g_docs[i].aaWord[f][k] == w;
                if (tf) x += tf / norm(g_docs[i].aLen[f], avglen(f));
            }
            if (x == 0) continue;
            any = 1;
            *pScore += idf(df_clause(&n->fields, w)) * sat(x) * (n->fBoost ? n->fBoost : 1);
        }
        return any;
    }
    case FTSN_PHRASE: {
        int aw[8];
        int nw = split_words(n, aw, 8);
        for (int j = 0; j < nw; j++) {
            if (aw[j] == -1) return 0;
        }
        /* a '*' first or last requires nothing (but under the phrase's own
        ** anchor) */
        int nLead = 0;
        while (!(n->anchor & FTS_ANCHOR_START) && nLead < nw && aw[nLead] == WILD) nLead++;
        while (!(n->anchor & FTS_ANCHOR_END) && nw > nLead && aw[nw - 1] == WILD) nw--;
        if (nLead) memmove(aw, aw + nLead, sizeof(int) * (size_t)(nw -= nLead));
        if (nw == 0) return 0;
        if (nw == 1 && aw[0] >= 0 && WORD_OF(aw[0]) != aw[0]) {
            /* one anchored word ("a$ *"): as 'a$' outside quotes */
            char buf[16];
            FtsNode t = *n;
            word_text(aw[0] & (ANC_START - 1), buf);
            t.kind = FTSN_TERM;
            t.z = buf;
            t.n = (int)strlen(buf);
            t.aMark = NULL;
            t.anchor |= (aw[0] & ANC_START ? FTS_ANCHOR_START : 0) | (aw[0] & ANC_END ? FTS_ANCHOR_END : 0);
            return ref_eval(&t, i, pScore);
        }
        if (nw == 1 && aw[0] <= PAT && !n->anchor) {
            /* "ab*": the prefix, "*b1": the wildcard, as outside quotes */
            FtsNode t = *n;
            t.z = g_azPat[PAT - aw[0]];
            t.n = (int)strlen(t.z);
            t.aMark = NULL;
            t.kind = memchr(t.z, '*', (size_t)t.n - 1) ? FTSN_WILDCARD : FTSN_PREFIX;
            if (t.kind == FTSN_PREFIX) t.n--;
            return ref_eval(&t, i, pScore);
        }
        int any = 0;
        double x = 0, gidf = -1;
        for (int f = 0; f < NF; f++) {
            if (!fts_fieldset_has(&n->fields, f)) continue;
            /* a field lacking a word cannot hold the phrase: it plays no part */
            double sidf = 0;
            int bAll = 1;
            for (int j = 0; j < nw; j++) {
                if (aw[j] == WILD) continue;
                bAll &= df_word(f, aw[j]) > 0;
                sidf += idf(df_word(f, aw[j]) ? df_word(f, aw[j]) : 1);
            }
            if (!bAll) continue;
            if (gidf < 0 || sidf < gidf) gidf = sidf;
            int tf = 0, scan = scan_len(n->nPosLimit, i, f);
            if (n->nSlop == 0) {
                for (int k = 0; k + nw <= scan; k++) {
                    int ok = 1;
                    for (int j = 0; j < nw && ok; j++) ok = fits_at(g_docs[i].aaWord[f], k + j, g_docs[i].aLen[f], aw[j]);
                    if ((n->anchor & FTS_ANCHOR_START) && k != 0) ok = 0;
                    if ((n->anchor & FTS_ANCHOR_END) && k + nw != g_docs[i].aLen[f]) ok = 0;
                    tf += ok;
                }
            } else {
                /* the windows, not overlapping */
                ROcc aWin[ROCC_MAX];
                int nWin = 0, lastEnd = -1;
                ref_prox_windows(aw, nw, n->nSlop, i, f, scan, aWin, &nWin);
                for (int k = 0; k < nWin; k++) {
                    if (aWin[k].s <= lastEnd) continue;
                    tf++;
                    lastEnd = aWin[k].e - 1;
                }
            }
            if (!tf) continue;
            any = 1;
            x += tf / norm(g_docs[i].aLen[f], avglen(f));
        }
        if (any) *pScore = gidf * sat(x);
        return any;
    }
    case FTSN_AND: {
        int ok = 1;
        for (int c = 0; c < n->nChild && ok; c++) {
            double sc;
            if (n->aChild[c]->kind == FTSN_NOT) {
                ok = !ref_eval(n->aChild[c]->aChild[0], i, &sc);
            } else {
                ok = ref_eval(n->aChild[c], i, &sc);
                *pScore += sc;
            }
        }
        return ok;
    }
    case FTSN_OR: {
        int any = 0;
        for (int c = 0; c < n->nChild; c++) {
            double sc;
            if (ref_eval(n->aChild[c], i, &sc)) {
                any = 1;
                *pScore += sc;
            }
        }
        return any;
    }
    case FTSN_ORDER: {
        /* the operands scored as an AND, matched in order in one field */
        for (int c = 0; c < n->nChild; c++) {
            double sc;
            if (!ref_eval(n->aChild[c], i, &sc)) return 0;
            *pScore += sc;
        }
        for (int f = 0; f < NF; f++) {
            if (order_holds_ref(n, i, f, 0, 0)) return 1;
        }
        *pScore = 0;
        return 0;
    }
    case FTSN_NEAR_ANY: {
        if (n->bNotNear) {
            /* NOTNEAR over any operands: scored as its first operand */
            if (!ref_eval(n->aChild[0], i, pScore)) return 0;
            for (int f = 0; f < NF; f++) {
                if (notnear_any_ref(n, i, f, NULL, NULL)) return 1;
            }
            *pScore = 0;
            return 0;
        }
        /* the operands scored as an AND, their occurrences a chain in one field */
        for (int c = 0; c < n->nChild; c++) {
            double sc;
            if (!ref_eval(n->aChild[c], i, &sc)) return 0;
            *pScore += sc;
        }
        for (int f = 0; f < NF; f++) {
            if (near_any_ref(n, i, f, NULL, NULL)) return 1;
        }
        *pScore = 0;
        return 0;
    }
    case FTSN_MAYBE: {
        double sc;
        if (!ref_eval(n->aChild[0], i, pScore)) return 0;
        if (ref_eval(n->aChild[1], i, &sc)) *pScore += sc;
        return 1;
    }
    case FTSN_QUORUM: {
        /* at least the threshold of the distinct words, each scored as a term */
        int aw[64], nw = split_words(n, aw, 64), nDistinct = 0, nHit = 0;
        for (int j = 0; j < nw; j++) {
            /* a repeat counts once, anchored as its first */
            int k = 0;
            while (k < j && WORD_OF(aw[k]) != WORD_OF(aw[j])) k++;
            if (k < j) continue;
            nDistinct++;
            if (!is_real_word(aw[j])) continue;
            char buf[24];
            FtsNode t = *n;
            if (aw[j] <= PAT) {
                /* a prefix or a wildcard: as outside quotes */
                snprintf(buf, sizeof(buf), "%s", g_azPat[PAT - aw[j]]);
                t.n = (int)strlen(buf);
                t.kind = memchr(buf, '*', (size_t)t.n - 1) ? FTSN_WILDCARD : FTSN_PREFIX;
                if (t.kind == FTSN_PREFIX) t.n--;
            } else {
                /* an anchored word ("a$ b"/1): as '^a' or 'a$' outside it */
                word_text(aw[j] & (ANC_START - 1), buf); /* (a real word: not negative) */
                t.kind = FTSN_TERM;
                t.n = (int)strlen(buf);
                t.anchor = (aw[j] & ANC_START ? FTS_ANCHOR_START : 0) | (aw[j] & ANC_END ? FTS_ANCHOR_END : 0);
            }
            t.aMark = NULL;
            t.z = buf;
            double sc;
            if (ref_eval(&t, i, &sc)) {
                nHit++;
                *pScore += sc;
            }
        }
        int nThr = n->nQuorum ? n->nQuorum : (int)floor(n->fQuorum * nDistinct + 0.5);
        if (nThr < 1) nThr = 1;
        if (nThr > nDistinct) nThr = nDistinct;
        return nHit >= nThr;
    }
    case FTSN_BEFORE:
    case FTSN_NEAR:
    case FTSN_SENTENCE:
    case FTSN_PARAGRAPH: {
        /* scored as a phrase of all the operands' words, tf 1 per field;
        ** SENTENCE and PARAGRAPH: this index has no boundaries, so every
        ** operand in the field (test_sentences has them);
        ** NOTNEAR as a phrase of its first operand's, tf its occurrences
        ** that no occurrence of the second is near */
        double x = 0, gidf = -1;
        for (int f = 0; f < NF; f++) {
            if (!fts_fieldset_has(&n->fields, f)) continue;
            double sidf = 0;
            int bAll = 1;
            for (int c = 0; c < (n->bNotNear ? 1 : n->nChild); c++) {
                int aw[8], nw = operand_words(n->aChild[c], aw);
                for (int j = 0; j < nw; j++) {
                    if (aw[j] == WILD) continue;
                    bAll &= is_real_word(aw[j]) && df_word(f, aw[j]) > 0;
                    if (is_real_word(aw[j])) sidf += idf(df_word(f, aw[j]) ? df_word(f, aw[j]) : 1);
                }
            }
            if (!bAll) continue;
            if (gidf < 0 || sidf < gidf) gidf = sidf;
            if (n->bNotNear) {
                x += notnear_count(n, i, f) / norm(g_docs[i].aLen[f], avglen(f));
            } else if (n->kind == FTSN_NEAR ? chain_holds_near(n, i, f) : chain_holds(n, i, f, 0, 0, -1)) {
                x += 1 / norm(g_docs[i].aLen[f], avglen(f));
            }
        }
        if (x == 0) return 0;
        *pScore = gidf * sat(x);
        return 1;
    }
    default:
        return 0;
    }
}

/* ---- the reference of the proximity rankers ---- */

/* A keyword in one field: a word (under a position limit or not) and the
** query positions it stands at. */
typedef struct RefKey {
    int f, w;
    uint32_t lim;
    int aQ[32];
    int nQ;
    int aPhr[16], nPhr;     /* the phrases and chains it is a word of (aPhr of
                            ** RefKeys, from 0): its occurrences count where one of
                            ** them matches ... */
    int bPlain;             /* ... unless it is a plain word too: each counts, */
    int aGuard[16], nGuard; /* or a plain word under clauses that can fail where
                            ** the query matches (aGuard of RefKeys, from 1: each
                            ** place's innermost): each counts where one holds */
} RefKey;

/* A phrase, proximity phrase or chain of two words or more whose words
** are keys: x; an exact phrase's words from query position base on, its
** anchors and limit (a match lies before it). */
typedef struct RefPhr {
    const FtsNode *x;
    int aw[64];
    int nw, base, anchor;
    uint32_t lim;
    int guard;              /* the clause around it that can fail (from 1), 0: none */
    int holdDoc, holdF;     /* ref_counts' cache: doc + 1 (0: none) and field of */
    int hold;               /* ... ref_holds_in's answer */
} RefPhr;

/* An AND (a '<<' of any operands), a MAYBE or a quorum that is a part of
** an OR or a MAYBE's optional part: it can fail where the query matches,
** and then its words count nowhere (a clause that does not match passes on
** no occurrences, as Sphinx's AND). */
typedef struct RefGuard {
    const FtsNode *x;
    int parent;             /* the guard around it (from 1), 0: none */
} RefGuard;

typedef struct RefKeys {
    RefKey a[1024];
    int n;
    RefPhr aPhr[64];
    int nPhr;
    uint8_t aWord[256];     /* per query position: a positive word stands there */
    int aWordId[256];       /* ... which (word_of: -1 unknown), or PAT - i for a
                            ** prefix or wildcard (pat_id: its pattern, "ab*") */
    int nPos;               /* query positions taken */
    RefGuard aGuard[64];
    int nGuard;
    int curGuard;           /* while collecting: the innermost guard (from 1), 0: none */
} RefKeys;

static void ref_key(RefKeys *k, int f, int w, uint32_t lim, int qpos, int phr) {
    RefKey *x = NULL;
    for (int i = 0; i < k->n && !x; i++) {
        if (k->a[i].f == f && k->a[i].w == w && k->a[i].lim == lim) x = &k->a[i];
    }
    if (!x) {
        assert_true(k->n < 1024);
        x = &k->a[k->n++];
        memset(x, 0, sizeof(*x));
        x->f = f, x->w = w, x->lim = lim;
    }
    /* phr: the phrase or chain (aPhr, from 1) it comes from; 0: none */
    if (!phr && !k->curGuard) x->bPlain = 1;
    if (!phr && k->curGuard && (!x->nGuard || x->aGuard[x->nGuard - 1] != k->curGuard)) {
        assert_true(x->nGuard < 16);
        x->aGuard[x->nGuard++] = k->curGuard;
    }
    if (phr && (!x->nPhr || x->aPhr[x->nPhr - 1] != phr - 1)) {
        assert_true(x->nPhr < 16);
        x->aPhr[x->nPhr++] = phr - 1;
    }
    for (int i = 0; i < x->nQ; i++) {
        if (x->aQ[i] == qpos) return;
    }
    assert_true(x->nQ < 32);
    x->aQ[x->nQ++] = qpos;
}

/* Words aw[0..nw) from query position base: keys in each field of fs
** where all of them occur in the table (bAll; else, a word alone, where
** it occurs), aLim[j] each one's limit. */
static void ref_words(RefKeys *k, const FtsFieldSet *fs, const int *aw, int nw, const uint32_t *aLim,
                      int base, int bNeg, int phr) {
    /* a '*' takes a place, as a stop word does, and is no keyword */
    for (int j = 0; j < nw; j++) {
        if (!bNeg && aw[j] != WILD) k->aWord[base + j] = 1, k->aWordId[base + j] = WORD_OF(aw[j]);
    }
    if (bNeg) return;
    for (int f = 0; f < NF; f++) {
        if (!fts_fieldset_has(fs, f)) continue;
        int bAll = 1;
        for (int j = 0; j < nw; j++) bAll &= aw[j] == WILD || (is_real_word(aw[j]) && df_word(f, aw[j]) > 0);
        if (!bAll) continue;
        for (int j = 0; j < nw; j++) {
            if (aw[j] >= 0) ref_key(k, f, WORD_OF(aw[j]), aLim[j], base + j, phr);
            /* a prefix: each of its words the field holds */
            for (int t = 0; aw[j] <= PAT && t < NWORD; t++) {
                if (word_fits(t, aw[j]) && df_of(f, t) > 0) ref_key(k, f, t, aLim[j], base + j, phr);
            }
        }
    }
}

/* Registers x, a phrase or chain whose words aw[0..nw) start at query
** position k->nPos, as a clause its keys count the occurrences of where
** it matches: its number (aPhr, from 1). */
static int ref_phrase(RefKeys *k, const FtsNode *x, const int *aw, int nw) {
    assert_true(k->nPhr < 64 && nw <= 64);
    RefPhr *ph = &k->aPhr[k->nPhr++];
    memcpy(ph->aw, aw, sizeof(int) * (size_t)nw);
    ph->x = x, ph->nw = nw, ph->base = k->nPos, ph->anchor = x->anchor, ph->lim = x->nPosLimit;
    ph->guard = k->curGuard;
    return k->nPhr;
}

/* The keywords of x in query order, as the planner numbers them. */
static void ref_keys(RefKeys *k, const FtsNode *x, int bNeg) {
    int aw[64];
    uint32_t aLim[64];
    switch (x->kind) {
    case FTSN_TERM:
    case FTSN_PHRASE: {
        int nw = split_words(x, aw, 64), nReal = 0;
        for (int j = 0; j < nw; j++) aLim[j] = x->nPosLimit, nReal += aw[j] != WILD;
        /* an anchored word counts where it is anchored, as a phrase */
        int phr = ((x->kind == FTSN_PHRASE && nReal > 1) || (x->anchor && nReal == 1 && nw == 1)) && !bNeg
                      ? ref_phrase(k, x, aw, nw)
                      : 0;
        for (int j = 0; j < nw && !phr && !bNeg && nReal == 1 && !x->anchor; j++) {
            /* one word anchored in its phrase ("a$ *"): that word, where it is */
            if (aw[j] < 0 || WORD_OF(aw[j]) == aw[j]) continue;
            phr = ref_phrase(k, x, &aw[j], 1);
            k->aPhr[phr - 1].base = k->nPos + j;
        }
        ref_words(k, &x->fields, aw, nw, aLim, k->nPos, bNeg, phr);
        /* stars after the last word take no query position, as the planner
        ** counts them */
        while (nw > 0 && aw[nw - 1] == WILD) nw--;
        k->nPos += nw;
        return;
    }
    case FTSN_QUORUM: {
        /* every word a keyword at its place, a repeated one too (it counts
        ** once towards the threshold, ref_eval's business) */
        int nw = split_words(x, aw, 64);
        for (int j = 0; j < nw; j++) {
            aLim[0] = x->nPosLimit;
            /* an anchored word ("a$ b"/1) counts where it is anchored */
            int phr = 0;
            if (!bNeg && aw[j] >= 0 && WORD_OF(aw[j]) != aw[j]) {
                phr = ref_phrase(k, x, &aw[j], 1);
                k->aPhr[phr - 1].base = k->nPos + j;
            }
            ref_words(k, &x->fields, &aw[j], 1, aLim, k->nPos + j, bNeg, phr);
        }
        k->nPos += nw;
        return;
    }
    case FTSN_PREFIX:
    case FTSN_WILDCARD: {
        if (!bNeg) {
            char zPat[24];
            assert_true(x->n + 1 < (int)sizeof(zPat));
            memcpy(zPat, x->z, (size_t)x->n);
            zPat[x->n] = '*';
            k->aWord[k->nPos] = 1;
            k->aWordId[k->nPos] = x->kind == FTSN_WILDCARD ? pat_id(x->z, x->n) : pat_id(zPat, x->n + 1);
        }
        for (int w = 0; w < NWORD && !bNeg; w++) {
            char buf[16];
            word_text(w, buf);
            if (x->kind == FTSN_WILDCARD ? !ref_wild(x->z, buf)
                                         : (int)strlen(buf) < x->n || memcmp(buf, x->z, (size_t)x->n)) {
                continue;
            }
            for (int f = 0; f < NF; f++) {
                if (fts_fieldset_has(&x->fields, f) && df_of(f, w) > 0) ref_key(k, f, w, x->nPosLimit, k->nPos, 0);
            }
        }
        k->nPos++;
        return;
    }
    case FTSN_BEFORE:
    case FTSN_NEAR:
    case FTSN_SENTENCE:
    case FTSN_PARAGRAPH: {
        /* all operands' words, each with its operand's limit, in the
        ** fields the chain is in */
        int nw = 0;
        for (int c = 0; c < x->nChild; c++) nw += operand_words(x->aChild[c], aw + nw);
        int phr = !bNeg && nw > 1 ? ref_phrase(k, x, aw, nw) : 0;
        nw = 0;
        for (int c = 0; c < x->nChild; c++) {
            int m = operand_words(x->aChild[c], aw + nw);
            for (int j = 0; j < m; j++) aLim[nw + j] = x->aChild[c]->nPosLimit;
            if (x->bNotNear) {
                /* NOTNEAR: its second operand's words are no keywords */
                ref_words(k, &x->fields, aw + nw, m, aLim + nw, k->nPos + nw, bNeg || c == 1, phr);
            }
            nw += m;
        }
        if (!x->bNotNear) ref_words(k, &x->fields, aw, nw, aLim, k->nPos, bNeg, phr);
        k->nPos += nw;
        return;
    }
    case FTSN_AND:
    case FTSN_OR:
    case FTSN_MAYBE:
    case FTSN_NOT:
    case FTSN_ORDER:
    case FTSN_NEAR_ANY:
        for (int c = 0; c < x->nChild; c++) {
            const FtsNode *y = x->aChild[c];
            int g = k->curGuard;
            if ((x->kind == FTSN_OR || (x->kind == FTSN_MAYBE && c > 0)) && !bNeg &&
                (y->kind == FTSN_AND || y->kind == FTSN_ORDER || y->kind == FTSN_NEAR_ANY || y->kind == FTSN_MAYBE ||
                 y->kind == FTSN_QUORUM)) {
                assert_true(k->nGuard < 64);
                k->aGuard[k->nGuard++] = (RefGuard){y, g};
                k->curGuard = k->nGuard;
            }
            ref_keys(k, y, bNeg || x->kind == FTSN_NOT || (x->bNotNear && c == 1));
            k->curGuard = g;
        }
        return;
    }
}

typedef struct RefHit {
    int pos, q;
} RefHit;

static int refhit_cmp(const void *x, const void *y) {
    const RefHit *a = x, *b = y;
    return a->pos != b->pos ? a->pos - b->pos : a->q - b->q;
}

/* Does exact phrase ph match field f of doc i from position s? */
static int ref_phrase_at(const RefPhr *ph, int i, int f, int s) {
    int len = g_docs[i].aLen[f];
    if (s < 0 || s + ph->nw > len || (ph->lim && (uint32_t)(s + ph->nw) > ph->lim)) return 0;
    if ((ph->anchor & FTS_ANCHOR_START) && s != 0) return 0;
    if ((ph->anchor & FTS_ANCHOR_END) && s + ph->nw != len) return 0;
    for (int j = 0; j < ph->nw; j++) {
        if (!fits_at(g_docs[i].aaWord[f], s + j, g_docs[i].aLen[f], ph->aw[j])) return 0;
    }
    return 1;
}

/* Does phrase or chain n (not an exact phrase) match field f of doc i? */
static int ref_holds_in(const FtsNode *n, int i, int f) {
    if (n->kind == FTSN_PHRASE) {
        int aw[64], nw = split_words(n, aw, 64), nWin = 0;
        ROcc aWin[ROCC_MAX];
        ref_prox_windows(aw, nw, n->nSlop, i, f, scan_len(n->nPosLimit, i, f), aWin, &nWin);
        return nWin > 0;
    }
    if (n->bNotNear) return notnear_count(n, i, f) > 0;
    return n->kind == FTSN_NEAR ? chain_holds_near(n, i, f) : chain_holds(n, i, f, 0, 0, -1);
}

/* Do guard g (from 1; 0: none) and the guards around it match doc i? */
static int ref_guard_holds(const RefKeys *k, int g, int i) {
    for (; g; g = k->aGuard[g - 1].parent) {
        double sc;
        if (!ref_eval(k->aGuard[g - 1].x, i, &sc)) return 0;
    }
    return 1;
}

/* Does key x's word at position p of field f of doc i count? It must be
** the key's word; for a word of phrases or chains only, one of them must
** match field f, and an exact phrase's match hold it (at its place in the
** phrase). */
static int ref_counts(const RefKeys *k, const RefKey *x, int i, int f, int p) {
    if (g_docs[i].aaWord[f][p] != x->w) return 0;
    if (x->bPlain) return 1;
    for (int j = 0; j < x->nGuard; j++) {
        if (ref_guard_holds(k, x->aGuard[j], i)) return 1;
    }
    for (int j = 0; j < x->nPhr; j++) {
        const RefPhr *ph = &k->aPhr[x->aPhr[j]];
        if (!ref_guard_holds(k, ph->guard, i)) continue;
        /* (an anchored word is an exact phrase of one, a quorum's too) */
        if ((ph->x->kind != FTSN_PHRASE && ph->x->kind != FTSN_TERM && ph->x->kind != FTSN_QUORUM) ||
            ph->x->nSlop) {
            /* asked for each occurrence of each key: kept per doc and field */
            RefPhr *c = (RefPhr *)ph;
            if (c->holdDoc != i + 1 || c->holdF != f) {
                c->hold = ref_holds_in(ph->x, i, f);
                c->holdDoc = i + 1;
                c->holdF = f;
            }
            if (c->hold) return 1;
            continue;
        }
        for (int m = 0; m < x->nQ; m++) {
            int off = x->aQ[m] - ph->base;
            if (off >= 0 && off < ph->nw && ref_phrase_at(ph, i, f, p - off)) return 1;
        }
    }
    return 0;
}

/* The word at query position v, for word_count and doc_word_count: the
** first position holding the same word (a prefix, a wildcard or an
** unknown word is its own). */
static int ref_qword(const RefKeys *k, int v) {
    if (k->aWordId[v] == -1 || k->aWordId[v] == WILD) return v;
    int u = 0;
    while (u < v && !(k->aWord[u] && k->aWordId[u] == k->aWordId[v])) u++;
    return u;
}

/* Doc i's weight by ranker r, bm25f its BM25F weight. */
static double ref_factor_weight(const RefKeys *k, int i, FtsRanker r, double bm25f) {
    int nQW = 0, qMin = -1, qMax = -1;
    for (int v = 0; v < k->nPos; v++) {
        if (!k->aWord[v]) continue;
        nQW++;
        if (qMin < 0) qMin = v;
        qMax = v;
    }
    double sum = 0, mask = 0;
    for (int f = 0; f < NF; f++) {
        static RefHit aHit[MAXLEN * 32];
        int nHit = 0, hitCount = 0;
        for (int j = 0; j < k->n; j++) {
            const RefKey *x = &k->a[j];
            if (x->f != f) continue;
            for (int p = 0; p < scan_len(x->lim, i, f); p++) {
                if (!ref_counts(k, x, i, f, p)) continue;
                hitCount++;
                for (int m = 0; m < x->nQ; m++) aHit[nHit++] = (RefHit){p, x->aQ[m]};
            }
        }
        if (!hitCount) continue;
        qsort(aHit, (size_t)nHit, sizeof(RefHit), refhit_cmp);
        /* each hit as the start of a run: the next hit position must hold
        ** the query position as far on */
        int lcs = 0, exact = 0, wordCount = 0;
        for (int h = 0; h < nHit; h++) {
            int len = 1, cur = h;
            for (;;) {
                int nx = cur + 1;
                while (nx < nHit && aHit[nx].pos == aHit[cur].pos) nx++;
                if (nx == nHit) break;
                int want = aHit[cur].q + (aHit[nx].pos - aHit[cur].pos), found = -1;
                for (int t = nx; t < nHit && aHit[t].pos == aHit[nx].pos; t++) {
                    if (aHit[t].q == want) found = t;
                }
                if (found < 0) break;
                cur = found;
                len++;
            }
            if (len > lcs) lcs = len;
            if (len == nQW && aHit[h].pos == 0 && aHit[h].q == qMin && aHit[cur].q == qMax &&
                aHit[cur].pos == g_docs[i].aLen[f] - 1) {
                exact = 1;
            }
            int seen = 0;
            for (int t = 0; t < h && !seen; t++) seen = ref_qword(k, aHit[t].q) == ref_qword(k, aHit[h].q);
            wordCount += !seen;
        }
        int minHitPos = aHit[0].pos + 1;
        switch (r) {
        case FTS_RANK_PROXIMITY_BM25:
        case FTS_RANK_PROXIMITY: sum += lcs; break;
        case FTS_RANK_SPH04: sum += 4 * lcs + 2 * (minHitPos == 1) + exact; break;
        case FTS_RANK_WORDCOUNT: sum += hitCount; break;
        case FTS_RANK_MATCHANY: sum += wordCount + (lcs - 1) * nQW * NF; break; /* max_lcs: every field weighs 1 */
        case FTS_RANK_FIELDMASK: mask += 1 << f; break;
        default: break;
        }
    }
    double bm25 = bm25f > 0 ? 999 * bm25f / (bm25f + 1) : 0;
    return r == FTS_RANK_FIELDMASK ? mask
           : r == FTS_RANK_PROXIMITY_BM25 || r == FTS_RANK_SPH04 ? 1000 * sum + bm25 : sum;
}

/* The expression IDF_EXPR (ranker=expr's idf factors and doc_word_count)
** for doc i, from the keys: per field, each key (word and limit) with
** occurrences counts once, its idf from the field's df. */
#define IDF_EXPR "sum(tf_idf) + 3*top(sum_idf) + 5*sum(min_idf) + 7*sum(max_idf) + 11*doc_word_count"
static double ref_idf_expr(const RefKeys *k, int i) {
    double tfIdf = 0, topSum = 0, mins = 0, maxs = 0;
    static int aQSeen[256];
    memset(aQSeen, 0, sizeof(aQSeen));
    int nDocWords = 0;
    for (int f = 0; f < NF; f++) {
        double sum = 0, mn = 0, mx = 0;
        int any = 0;
        for (int j = 0; j < k->n; j++) {
            const RefKey *x = &k->a[j];
            if (x->f != f) continue;
            int tf = 0;
            for (int p = 0; p < scan_len(x->lim, i, f); p++) tf += ref_counts(k, x, i, f, p);
            if (!tf) continue;
            double v = idf(df_of(f, x->w));
            sum += v;
            tfIdf += tf * v;
            if (!any || v < mn) mn = v;
            if (!any || v > mx) mx = v;
            any = 1;
            for (int m = 0; m < x->nQ; m++) {
                int w = ref_qword(k, x->aQ[m]);
                if (!aQSeen[w]) aQSeen[w] = 1, nDocWords++;
            }
        }
        if (!any) continue;
        if (sum > topSum) topSum = sum;
        mins += mn;
        maxs += mx;
    }
    return tfIdf + 3 * topSum + 5 * mins + 7 * maxs + 11 * nDocWords;
}

/* The expression SPAN_EXPR (ranker=expr's lccs, wlccs, min_best_span_pos
** and exact_order) for doc i, from the keys, computed from each hit
** forward rather than as the engine does (each hit from the one before):
**   lccs   a run steps from a hit to one at the next position holding hits,
**          whose query position is the next keyword's and as far on as
**          the document position; wlccs the largest sum of a run's idfs,
**          a query position's idf the largest of its field's keys there
**          that occur in the document;
**   min_best_span_pos  the start (from 1) of the run of lcs hits (steps
**          as far on in both, any query position) that ends first;
**   exact_order  every keyword position in query order, each at a later
**          document position than the one before. */
#define SPAN_EXPR "sum(lccs) + 3*top(wlccs) + 5*sum(min_best_span_pos) + 7*sum(exact_order)"
static double ref_span_expr(const RefKeys *k, int i) {
    int aKw[256], nKw = 0;
    for (int v = 0; v < k->nPos; v++) {
        if (k->aWord[v]) aKw[nKw++] = v;
    }
    double sumLccs = 0, topW = 0, sumSpan = 0, sumOrder = 0;
    for (int f = 0; f < NF; f++) {
        static RefHit aHit[MAXLEN * 32];
        static double aIdf[256];
        memset(aIdf, 0, sizeof(aIdf));
        int nHit = 0;
        for (int j = 0; j < k->n; j++) {
            const RefKey *x = &k->a[j];
            if (x->f != f) continue;
            int tf = 0;
            for (int p = 0; p < scan_len(x->lim, i, f); p++) {
                if (!ref_counts(k, x, i, f, p)) continue;
                tf++;
                for (int m = 0; m < x->nQ; m++) aHit[nHit++] = (RefHit){p, x->aQ[m]};
            }
            double v = idf(df_of(f, x->w));
            for (int m = 0; tf && m < x->nQ; m++) {
                if (v > aIdf[x->aQ[m]]) aIdf[x->aQ[m]] = v;
            }
        }
        if (!nHit) continue;
        qsort(aHit, (size_t)nHit, sizeof(RefHit), refhit_cmp);
        int lccs = 0, lcs = 0, lcsEnd = nHit, span = 0;
        double wlccs = 0;
        for (int h = 0; h < nHit; h++) {
            /* the contiguous run from h */
            int len = 1, cur = h;
            double w = aIdf[aHit[h].q];
            if (w > wlccs) wlccs = w;
            for (;;) {
                int nx = cur + 1;
                while (nx < nHit && aHit[nx].pos == aHit[cur].pos) nx++;
                if (nx == nHit) break;
                int want = -1;
                for (int t = 0; t < nKw && want < 0; t++) {
                    if (aKw[t] > aHit[cur].q) want = aKw[t];
                }
                if (want < 0 || want - aHit[cur].q != aHit[nx].pos - aHit[cur].pos) break;
                int found = -1;
                for (int t = nx; t < nHit && aHit[t].pos == aHit[nx].pos && found < 0; t++) {
                    if (aHit[t].q == want) found = t;
                }
                if (found < 0) break;
                cur = found;
                len++;
                w += aIdf[want];
                if (w > wlccs) wlccs = w;
            }
            if (len > lccs) lccs = len;
            /* the lcs run from h (steps as far on in both) */
            len = 1, cur = h;
            for (;;) {
                int nx = cur + 1;
                while (nx < nHit && aHit[nx].pos == aHit[cur].pos) nx++;
                if (nx == nHit) break;
                int want = aHit[cur].q + (aHit[nx].pos - aHit[cur].pos), found = -1;
                for (int t = nx; t < nHit && aHit[t].pos == aHit[nx].pos && found < 0; t++) {
                    if (aHit[t].q == want) found = t;
                }
                if (found < 0) break;
                cur = found;
                len++;
            }
            if (len > lcs || (len == lcs && cur < lcsEnd)) lcs = len, lcsEnd = cur, span = aHit[h].pos + 1;
        }
        /* exact_order: the earliest fitting occurrence of each keyword */
        int last = -1, t = 0;
        for (; t < nKw; t++) {
            int at = -1;
            for (int h = 0; h < nHit && at < 0; h++) {
                if (aHit[h].q == aKw[t] && aHit[h].pos > last) at = aHit[h].pos;
            }
            if (at < 0) break;
            last = at;
        }
        sumLccs += lccs;
        if (wlccs > topW) topW = wlccs;
        sumSpan += span;
        sumOrder += nKw > 0 && t == nKw;
    }
    return sumLccs + 3 * topW + 5 * sumSpan + 7 * sumOrder;
}

/* sum(atc) for doc i: per field, every occurrence of every key that
** counts (ref_counts; a key once, whatever query positions it stands at),
** and for it each key's nearest other such occurrence on each side by a
** scan of the field. */
static double ref_atc(const RefKeys *k, int i) {
    /* aAt[a][p]: key a's occurrence at p counts (ref_counts, asked once
    ** each: it evaluates clauses, and a prefix makes many keys) */
    static uint8_t aAt[sizeof(k->a) / sizeof(k->a[0])][MAXLEN];
    double total = 0;
    for (int f = 0; f < NF; f++) {
        double sum = 0;
        int any = 0;
        for (int a = 0; a < k->n; a++) {
            const RefKey *x = &k->a[a];
            int len = x->f == f ? scan_len(x->lim, i, f) : 0;
            for (int p = 0; p < len; p++) aAt[a][p] = (uint8_t)ref_counts(k, x, i, f, p);
        }
        for (int a = 0; a < k->n; a++) {
            const RefKey *x = &k->a[a];
            if (x->f != f) continue;
            int len = scan_len(x->lim, i, f);
            for (int p = 0; p < len; p++) {
                if (!aAt[a][p]) continue;
                any = 1;
                double s = 0;
                for (int b = 0; b < k->n; b++) {
                    const RefKey *y = &k->a[b];
                    if (y->f != f) continue;
                    int ylen = scan_len(y->lim, i, f), l = -1, r = -1;
                    for (int t = 0; t < ylen; t++) {
                        if (!aAt[b][t]) continue;
                        if (t < p) l = t;
                        if (t > p && r < 0) r = t;
                    }
                    double v = idf(df_of(f, y->w));
                    if (l >= 0) s += v * pow(p - l, -1.75);
                    if (r >= 0) s += v * pow(r - p, -1.75);
                }
                sum += idf(df_of(f, x->w)) * s;
            }
        }
        if (any) total += log(1 + sum);
    }
    return total;
}

/* sum(min_gaps) for doc i: per field, the query words it holds (a key's
** word is its first query position) and every stretch [l, r] of the field
** tried for holding them all. */
static double ref_min_gaps(const RefKeys *k, int i) {
    double total = 0;
    for (int f = 0; f < NF; f++) {
        static int aWordAt[MAXLEN][8];
        static int anAt[MAXLEN];
        int len = g_docs[i].aLen[f], aWord[256], nWord = 0;
        memset(anAt, 0, sizeof(anAt));
        for (int a = 0; a < k->n; a++) {
            const RefKey *x = &k->a[a];
            if (x->f != f) continue;
            int w = x->aQ[0];
            for (int m = 1; m < x->nQ; m++) if (x->aQ[m] < w) w = x->aQ[m];
            for (int p = 0; p < scan_len(x->lim, i, f); p++) {
                if (!ref_counts(k, x, i, f, p)) continue;
                if (anAt[p] < 8) aWordAt[p][anAt[p]++] = w;
                int seen = 0;
                for (int t = 0; t < nWord && !seen; t++) seen = aWord[t] == w;
                if (!seen) aWord[nWord++] = w;
            }
        }
        if (nWord < 2) continue;
        int best = -1;
        for (int l = 0; l < len && best != 0; l++) {
            /* the shortest stretch from l holding every word */
            static uint8_t aHave[256];
            memset(aHave, 0, sizeof(aHave));
            int nHave = 0;
            for (int r = l; r < len && nHave < nWord; r++) {
                for (int j = 0; j < anAt[r]; j++) {
                    if (!aHave[aWordAt[r][j]]) aHave[aWordAt[r][j]] = 1, nHave++;
                }
                if (nHave == nWord) {
                    int gaps = r - l + 1 - nWord;
                    if (gaps < 0) gaps = 0;
                    if (best < 0 || gaps < best) best = gaps;
                }
            }
        }
        total += best;
    }
    return total;
}

/* The query's distinct keywords (query_word_count), or -1 when the
** reference cannot tell (a prefix, or a word outside the vocabulary,
** whose text it does not keep). */
static int ref_query_word_count(const RefKeys *k) {
    int n = 0;
    for (int v = 0; v < k->nPos; v++) {
        if (!k->aWord[v]) continue;
        if (k->aWordId[v] < 0) return -1;
        int seen = 0;
        for (int u = 0; u < v && !seen; u++) seen = k->aWord[u] && k->aWordId[u] == k->aWordId[v];
        n += !seen;
    }
    return n;
}

typedef struct Collect {
    double *aScore;         /* per doc, -1 = not matched */
    int n;
} Collect;

static int collect_hit(void *ctx, uint32_t doc, double score) {
    Collect *c = ctx;
    assert_true(doc < (uint32_t)g_nDoc);
    assert_true(c->aScore[doc] < 0); /* each doc once, in order */
    c->aScore[doc] = score;
    c->n++;
    return 0;
}

static int accept_odd_filter(void *ctx, uint32_t doc) {
    (void)ctx;
    return doc % 7 != 3; /* a filter that drops some docs */
}

static int accept_rare_filter(void *ctx, uint32_t doc) {
    (void)ctx;
    return doc % 7 == 3; /* a filter that drops most docs */
}

/* Runs zQuery through the engine and checks it against the reference. */
/* Runs zQuery with ranker r (every match, then top-k) and compares both
** with the reference. */
static void check_query_ranked(const char *zQuery, FtsRanker r) {
    Arena a;
    arena_init(&a, 0);
    FtsNode *root;
    LpError err;
    /* a query of only negations too (OPTION not_terms_only_allowed=1) */
    if (fts_match_parse_opts(&a, zQuery, strlen(zQuery), g_azField, NF, FTS_MATCH_NOT_ONLY, &root, &err) != LP_OK) {
        fail_msg("parse of %s: %s", zQuery, err.zMsg);
    }
    int bNeg = fts_match_is_negative(root);
    FtsRankParams rank;
    fts_rank_defaults(&rank);
    rank.ranker = r;
    static RefKeys keys;
    memset(&keys, 0, sizeof(keys));
    if (root && !bNeg && r != FTS_RANK_BM25F) ref_keys(&keys, root, 0);
    FtsQuery *q;
    if (fts_query_new(&a, root, zQuery, g_an, g_src, &rank, &q, &err) != LP_OK) {
        fail_msg("query %s: %s", zQuery, err.zMsg);
    }
    Collect c = {calloc((size_t)g_nDoc, sizeof(double)), 0};
    for (int i = 0; i < g_nDoc; i++) c.aScore[i] = -1;
    FtsStats st;
    if (fts_query_all(q, collect_hit, &c, &st, &err) != LP_OK) fail_msg("run of %s: %s", zQuery, err.zMsg);
    fts_query_free(q);
    for (int i = 0; i < g_nDoc; i++) {
        double ref = 1;
        int m = 1;
        if (bNeg) {
            /* every document that none of the negations matches, weighing 1 */
            for (int k = 0; k < (root->kind == FTSN_NOT ? 1 : root->nChild) && m; k++) {
                double sc;
                const FtsNode *x = root->kind == FTSN_NOT ? root : root->aChild[k];
                m = !ref_eval(x->aChild[0], i, &sc);
            }
        } else if (root) {
            m = ref_eval(root, i, &ref);
            if (m && r != FTS_RANK_BM25F) ref = ref_factor_weight(&keys, i, r, ref);
        }
        if (m != (c.aScore[i] >= 0)) {
            fail_msg("query %s doc %d: reference %s, engine %s", zQuery, i, m ? "matches" : "no",
                     c.aScore[i] >= 0 ? "matches" : "no");
        }
        if (m && root && fabs(ref - c.aScore[i]) > 1e-9 * (1 + ref)) {
            fail_msg("query %s ranker %s doc %d: score %.12g, reference %.12g", zQuery,
                     fts_ranker_name(r), i, c.aScore[i], ref);
        }
    }
    /* top-k (maxscore where the engine chooses it) against the exhaustive
    ** order; the filter asked after scoring, then before */
    for (int it = 0; it < 4; it++) {
        int k = it % 2 ? 50 : 1;
        assert_int_equal(fts_query_new(&a, root, zQuery, g_an, g_src, &rank, &q, &err),
                         LP_OK);
        /* the rare filter makes an accept-first maxscore ask before scoring */
        fts_query_set_accept_first(q, it >= 2);
        FtsAcceptFn xAcc = it >= 2 ? accept_rare_filter : accept_odd_filter;
        FtsHit aHit[50];
        int nHit;
        assert_int_equal(fts_query_topk(q, k, xAcc, NULL, aHit, &nHit, &st, &err), LP_OK);
        fts_query_free(q);
        /* reference: best k among accepted matches, score desc, doc asc */
        int nExpect = 0;
        for (int i = 0; i < g_nDoc; i++) nExpect += c.aScore[i] >= 0 && xAcc(NULL, (uint32_t)i);
        assert_int_equal(nHit, nExpect < k ? nExpect : k);
        for (int h = 0; h < nHit; h++) {
            uint32_t d = aHit[h].doc;
            assert_true(xAcc(NULL, d));
            assert_true(c.aScore[d] >= 0);
            assert_true(fabs(aHit[h].score - c.aScore[d]) < 1e-9 * (1 + c.aScore[d]));
            /* no accepted doc outside the hits beats the last hit */
            if (h == nHit - 1) {
                for (int i = 0; i < g_nDoc; i++) {
                    if (c.aScore[i] < 0 || !xAcc(NULL, (uint32_t)i)) continue;
                    int in = 0;
                    for (int j = 0; j < nHit; j++) in |= aHit[j].doc == (uint32_t)i;
                    if (in) continue;
                    if (c.aScore[i] > aHit[h].score ||
                        (c.aScore[i] == aHit[h].score && (uint32_t)i < aHit[h].doc)) {
                        fail_msg("query %s k=%d (%s): doc %d (%.12g) missing, last hit %u (%.12g)",
                                 zQuery, k, st.zStrategy, i, c.aScore[i], aHit[h].doc, aHit[h].score);
                    }
                }
            }
        }
    }
    free(c.aScore);
    arena_free(&a);
}

static void check_query(const char *zQuery) {
    check_query_ranked(zQuery, FTS_RANK_BM25F);
}

static void rand_query(char *buf) {
    static const char *const aOp[] = {" ", " | ", " -", " MAYBE "};
    buf[0] = 0;
    int n = 1 + (int)(rnd() % 4);
    for (int i = 0; i < n; i++) {
        if (i) strcat(buf, aOp[rnd() % 4]);
        char w[16], w2[16], w3[16];
        word_text(rnd_word(), w);
        word_text(rnd_word(), w2);
        word_text(rnd_word(), w3);
        switch (rnd() % 16) {
        case 14: {
            /* a position limit: the rest of the query is in its scope */
            static const char *const aScope[] = {"@title", "@body", "@(title,body)", "@!title"};
            sprintf(buf + strlen(buf), "%s[%u] ", aScope[rnd() % 4], 1 + rnd() % 12);
            switch (rnd() % 5) {
            case 0: sprintf(buf + strlen(buf), "\"%s %s\"", w, w2); break;
            case 1: sprintf(buf + strlen(buf), "%.*s*", 2 + (int)(rnd() % 2), w); break;
            case 2: sprintf(buf + strlen(buf), "\"%s %s\"~%u", w, w2, rnd() % 4); break;
            case 3: sprintf(buf + strlen(buf), "%s$", w); break;
            default: strcat(buf, w);
            }
            break;
        }
        case 15:
            /* operands of one chain, each with its own limit */
            sprintf(buf + strlen(buf), "@body[%u] %s %s @body[%u] %s @*", 1 + rnd() % 10, w,
                    rnd() % 2 ? "<<" : "NEAR/3", 1 + rnd() % 10, w2);
            break;
        case 8:
            if (rnd() % 4 == 0) {
                sprintf(buf + strlen(buf), "\"%s %.2s* %s\"/%u", w, w2, w3, 1 + rnd() % 3);
            } else if (rnd() % 2) {
                sprintf(buf + strlen(buf), "\"%s %s %s\"/%u", w, w2, w3, 1 + rnd() % 3);
            } else {
                sprintf(buf + strlen(buf), "\"%s %s %s\"/0.%u", w, w2, w3, 1 + rnd() % 9);
            }
            break;
        case 9:
            sprintf(buf + strlen(buf), rnd() % 2 ? "^%s" : "%s$", w);
            break;
        case 10:
            /* anchors: a phrase's, or on words of a phrase, proximity or quorum */
            switch (rnd() % 8) {
            case 0: sprintf(buf + strlen(buf), "\"%s$ %s\"", w, w2); break;
            case 1: sprintf(buf + strlen(buf), "\"%s ^%s\"", w, w2); break;
            case 2: sprintf(buf + strlen(buf), "\"%s$ *\"", w); break;
            case 3: sprintf(buf + strlen(buf), "\"%s ^%s %s$\"~%u", w, w2, w3, rnd() % 5); break;
            case 4: sprintf(buf + strlen(buf), "\"%s$ %s\"~%u", w, rnd() % 2 ? w : w2, 1 + rnd() % 4); break;
            case 5: sprintf(buf + strlen(buf), "\"%s$ ^%s %s\"/%u", w, w2, w3, 1 + rnd() % 3); break;
            default: sprintf(buf + strlen(buf), rnd() % 2 ? "\"^%s %s\"" : "\"%s %s$\"", w, w2);
            }
            break;
        case 11:
            if (rnd() % 4 == 0) { /* anchored operands: their occurrences at a field's start or end */
                static const char *const aAnc[] = {"^%s << %s%.0s", "%s << %s$%.0s", "^%s NEAR/2 %s%.0s",
                                                   "%s NEAR/3 %s$%.0s", "\"^%s %s\" << %s", "%s NOTNEAR/2 %s$%.0s",
                                                   "^%s NOTNEAR/3 %s%.0s", "^%s << (%s %s)", "%s << \"%s %s$\"",
                                                   "(^%s | %s) NEAR/2 %s", "^%s NEAR/4 %s NEAR/4 %s",
                                                   "%s$ NEAR/2 %s NEAR/1 %s", "^%s NEAR/3 %s$%.0s",
                                                   "^%s << %s << %s$", "(%s NEAR/3 %s$) << %s"};
                sprintf(buf + strlen(buf), aAnc[rnd() % 15], w, w2, w3);
            } else if (rnd() % 3 == 0) { /* OR lists as operands: one chain per choice */
                static const char *const aOp[] = {"<<", "NEAR/2", "NOTNEAR/2"};
                sprintf(buf + strlen(buf), "(%s | \"%s %s\") %s %s", w, w3, w2, aOp[rnd() % 3], w2);
                if (rnd() % 2 && !strstr(buf, "NOTNEAR")) sprintf(buf + strlen(buf), " | %s", w3);
            } else {
                sprintf(buf + strlen(buf), "%s << %s", w, w2);
            }
            break;
        case 12:
            if (rnd() % 4 == 0) {
                /* prefixes and wildcards as operands */
                static const char *const aPre[] = {"%s NEAR/%u %.2s*", "%.3s* NEAR/%u %s", "%s NOTNEAR/%u %.2s*",
                                                   "%.2s* NOTNEAR/%u %s", "%s NEAR/%u *%.2s*",
                                                   "\"%s %.2s*\" NEAR/%u %s"};
                int k = (int)(rnd() % 6);
                if (k == 5) sprintf(buf + strlen(buf), aPre[k], w, w2, 1 + rnd() % 6, w3);
                else sprintf(buf + strlen(buf), aPre[k], w, 1 + rnd() % 6, k == 4 ? w2 + 1 : w2);
            } else if (rnd() % 5 == 0) {
                /* an operand repeated: another occurrence of it */
                static const char *const aRep[] = {"%s NEAR/%u %s", "%s NOTNEAR/%u %s", "%.2s* NEAR/%u %.2s*",
                                                   "\"%s %s\" NEAR/%u \"%s %s\""};
                int k = (int)(rnd() % 5);
                unsigned d = 1 + rnd() % 6;
                if (k == 4) sprintf(buf + strlen(buf), "%s NEAR/%u %s NEAR/%u %s", w, d, w2, 1 + rnd() % 6, w);
                else if (k == 3) sprintf(buf + strlen(buf), aRep[k], w, w2, d, w, w2);
                else sprintf(buf + strlen(buf), aRep[k], w, d, w);
            } else if (rnd() % 4 == 0) {
                /* groups: their operands join the chain (Sphinx's) */
                static const char *const aGrp[] = {"(%s %s) NEAR/%u %s", "(%s NEAR/2 %s) NEAR/%u %s",
                                                   "(%s -%s) NEAR/%u %s", "(%s %s*) NEAR/%u %s",
                                                   "(%s \"%s %s\") NEAR/%u %s"};
                int k = (int)(rnd() % 6);
                unsigned d = 1 + rnd() % 6;
                if (k == 5) sprintf(buf + strlen(buf), "%s NEAR/%u (%s %s) NEAR/%u %s", w, d, w2, w3, 1 + rnd() % 6, w);
                else if (k == 4) sprintf(buf + strlen(buf), aGrp[k], w, w2, w3, d, w);
                else sprintf(buf + strlen(buf), aGrp[k], w, w2, d, w3);
            } else if (rnd() % 3 == 0) {
                sprintf(buf + strlen(buf), "%s NOTNEAR/%u %s", w, 1 + rnd() % 6, w2);
            } else if (rnd() % 2) {
                sprintf(buf + strlen(buf), "%s NEAR/%u %s", w, 1 + rnd() % 6, w2);
            } else {
                unsigned d1 = 1 + rnd() % 8, d2 = 1 + rnd() % 8;
                sprintf(buf + strlen(buf), "%s NEAR/%u %s NEAR/%u %s", w, d1, w2, d2, w3);
            }
            break;
        case 13:
            if (rnd() % 3 == 0) {
                /* '<<' over groups, prefixes, quorums (FTSN_ORDER) */
                static const char *const aOrd[] = {"(%s %s) << %s", "%s << (%s | %.2s*)", "%s << %.2s* << %s",
                                                   "(%s -%s) << \"%s %s\"", "\"%s %s %s\"/1 << %s",
                                                   "@title (%s | %s) << %s", "(%s MAYBE %s) << %s",
                                                   "(%s << %s) << (%s %s)", "((%s %s) << %s) << %s*",
                                                   "%s << (%s << %s) << %s", "%s << ((%s %s) << %s)",
                                                   "%s << \"%s %s\"~3", "\"%s %s\"~2 << %s",
                                                   "%s << (%s NEAR/2 %s)", "(%s NEAR/3 %s) << %s",
                                                   "%s << (%s NEAR/1 %s NEAR/3 %s)"};
                int k = (int)(rnd() % 16);
                sprintf(buf + strlen(buf), aOrd[k], w, w2, k == 1 ? w : w3, w);
            } else if (rnd() % 3 == 0) {
                /* NEAR/N over proximity phrases, '<<' chains, MAYBEs with
                ** phrases (FTSN_NEAR_ANY) */
                static const char *const aAny[] = {"\"%s %s\"~2 NEAR/%u %s", "%s NEAR/%u (%s << %s)",
                                                   "%s << %s NEAR/%u %s", "(%s MAYBE \"%s %s\") NEAR/%u %s",
                                                   "(\"%s %s\"~1 | %s) NEAR/%u %s",
                                                   "\"%s %s\"~3 NEAR/%u %s NEAR/2 %s",
                                                   "%s NEAR/%u %s NEAR/%u \"%s %s\"~2",
                                                   "%s NEAR/%u (%s NEAR/%u %s)",
                                                   "(\"%s %s\"~1 | %.2s*) NEAR/%u %s",
                                                   "(%s \"%s %s\" -xy5) NEAR/%u %s",
                                                   "(%s \"%s %s\"~2 -xy5) NEAR/%u %s",
                                                   "\"%s *%s\"/1 NEAR/%u %s"};
                int k = (int)(rnd() % 12);
                unsigned d = 1 + rnd() % 5, d2 = 1 + rnd() % 5;
                switch (k) {
                case 0: sprintf(buf + strlen(buf), aAny[k], w, w2, d, w3); break;
                case 1: sprintf(buf + strlen(buf), aAny[k], w, d, w2, w3); break;
                case 2: sprintf(buf + strlen(buf), aAny[k], w, w2, d, w3); break;
                case 3: sprintf(buf + strlen(buf), aAny[k], w, w2, w3, d, w); break;
                case 4: sprintf(buf + strlen(buf), aAny[k], w, w2, w3, d, w); break;
                case 5: sprintf(buf + strlen(buf), aAny[k], w, w2, d, w3, w); break;
                case 7: sprintf(buf + strlen(buf), aAny[k], w, d, w2, d2, w3); break;
                case 8: sprintf(buf + strlen(buf), aAny[k], w, w2, w3, d, w); break;
                case 9:
                case 10: sprintf(buf + strlen(buf), aAny[k], w, w2, w3, d, w); break;
                case 11: sprintf(buf + strlen(buf), aAny[k], w, w2 + 1, d, w3); break;
                default: sprintf(buf + strlen(buf), aAny[k], w, d, w2, d2, w3, w); break;
                }
            } else if (rnd() % 3 == 0) {
                /* NOTNEAR/N over groups, lists, phrases and chains
                ** (FTSN_NEAR_ANY with bNotNear), and as an operand */
                static const char *const aNot[] = {
                    "$1 NOTNEAR/#1 ($2 | $3)", "($1 $2) NOTNEAR/#1 $3", "$1 NOTNEAR/#1 ($2 $3)",
                    "\"$1 $2\"~2 NOTNEAR/#1 $3", "($1 << $2) NOTNEAR/#1 $3", "$1 NEAR/#1 $2 NOTNEAR/#2 $3",
                    "$1 NOTNEAR/#1 $2 NOTNEAR/#2 $3", "($1 NOTNEAR/#1 $2) NEAR/#2 $3", "$3 << ($1 NOTNEAR/#1 $2)",
                    "\"$1 $2 $3\"/2 NOTNEAR/#1 $2", "($1 MAYBE $2) NOTNEAR/#1 $3", "($1 -$2) NOTNEAR/#1 ($3 | @*)",
                    "($1 | \"$2 $3\") NOTNEAR/#1 ($2 | $1)", "$1 NOTNEAR/#1 \"$2 $3\"~1", "($1 $2) NOTNEAR/#1 $1"};
                const char *zf = aNot[rnd() % 15];
                unsigned d = 1 + rnd() % 5, d2 = 1 + rnd() % 5;
                char *o = buf + strlen(buf);
                for (; *zf; zf++) {
                    if (*zf == '$') {
                        zf++;
                        o += sprintf(o, "%s", *zf == '1' ? w : *zf == '2' ? w2 : w3);
                    } else if (*zf == '#') {
                        zf++;
                        o += sprintf(o, "%u", *zf == '1' ? d : d2);
                    } else if (*zf == '@') {
                        o += sprintf(o, "%.2s", w3);
                    } else {
                        *o++ = *zf;
                        *o = 0;
                    }
                }
            } else if (rnd() % 2) {
                sprintf(buf + strlen(buf), "%s << \"%s %s\"", w, w2, rnd() % 2 ? w3 : w);
            } else {
                sprintf(buf + strlen(buf), "\"%s %s\" %s/%u %s", w, w2, rnd() % 2 ? "NEAR" : "NOTNEAR",
                        1 + rnd() % 4, w3);
            }
            break;
        case 0: {
            char w2[16];
            word_text(rnd_word(), w2);
            /* '*' places between the words, now and then */
            static const char *const aGap[] = {" ", " ", " * ", " * * "};
            if (rnd() % 4 == 0) { /* alternatives */
                sprintf(buf + strlen(buf), "\"(%s | %s) %s\"", w, w3, w2);
            } else if (rnd() % 8 == 0) { /* wildcard words */
                switch (rnd() % 5) {
                case 0: sprintf(buf + strlen(buf), "\"*%s %s\"", w + 1, w2); break;
                case 1: sprintf(buf + strlen(buf), "\"%s *%.2s*\"", w, w2 + 1); break;
                case 2: sprintf(buf + strlen(buf), "\"%.1s*%s %s\"", w, w + 1, w2); break;
                case 3: sprintf(buf + strlen(buf), "\"*%s %s\"~%u", w + 1, w2, rnd() % 4); break;
                default: sprintf(buf + strlen(buf), "\"%s *%s\"/1", w, w2 + 1);
                }
            } else if (rnd() % 3 == 0) { /* prefixes */
                static const char *const aPre[] = {"\"%s %.2s*\"", "\"%.3s* %s\"", "\"%.2s* %.2s*\"",
                                                   "\"^%.2s* %s\"", "\"%s * %.3s*\"", "\"%.2s*\""};
                sprintf(buf + strlen(buf), aPre[rnd() % 6], w, w2);
            } else {
                sprintf(buf + strlen(buf), "\"%s%s%s\"", w, aGap[rnd() % 4], w2);
            }
            break;
        }
        case 1: {
            char w2[16];
            word_text(rnd_word(), w2);
            if (rnd() % 3 == 0) {
                sprintf(buf + strlen(buf), rnd() % 2 ? "\"%.2s* %s\"~%u" : "\"%s %.3s*\"~%u", w, w2, rnd() % 4);
            } else {
                sprintf(buf + strlen(buf), "\"%s %s\"~%u", w, w2, rnd() % 4);
            }
            break;
        }
        case 2:
            switch (rnd() % 6) {
            /* wildcards (infix search, min_infix_len 2) */
            case 0: sprintf(buf + strlen(buf), "*%s", w + 1); break;
            case 1: sprintf(buf + strlen(buf), "*%.2s*", w + 1); break;
            case 2: sprintf(buf + strlen(buf), "%.1s*%s", w, w + 1); break;
            case 3: sprintf(buf + strlen(buf), "*%.2s*%s", w + 1, w + strlen(w) - 1); break;
            default: sprintf(buf + strlen(buf), "%.*s*", 2 + (int)(rnd() % 2), w);
            }
            break;
        case 3:
            sprintf(buf + strlen(buf), "@title %s", w);
            break;
        case 4:
            sprintf(buf + strlen(buf), "(%s | abc%d)", w, (int)(rnd() % NWORD));
            break;
        case 5:
            /* a boosted word */
            if (rnd() % 2) sprintf(buf + strlen(buf), "%s^%u", w, 1 + rnd() % 5);
            else sprintf(buf + strlen(buf), "%s^0.%u", w, 1 + rnd() % 9);
            break;
        default:
            strcat(buf, w);
        }
    }
}

/* ORs and quorums of every word, by ranker r: more children than
** OR_HEAP_MIN, so their iterators keep them in a heap (and a proximity
** ranker its keys). bFew: four of them (the reference is slow on these). */
/* Every word in each field on its own, ORed: 2 * NWORD clauses for
** maxscore_topk (words, not a prefix's terms: see test_taat). Into buf
** (room for 1200). */
static const char *or_per_field(char *buf) {
    buf[0] = 0;
    for (int w = 0; w < NWORD; w++) {
        char t[16];
        word_text(w, t);
        sprintf(buf + strlen(buf), "%s@title %s | @body %s", w ? " | " : "", t, t);
    }
    return buf;
}

static void check_large_queries(FtsRanker r, int bFew) {
    char zAll[1024] = "", zWords[1024] = "", zq[1200], zPer[1200];
    check_query_ranked(or_per_field(zPer), r);
    for (int w = 0; w < NWORD; w++) {
        char t[16];
        word_text(w, t);
        if (w) strcat(zAll, " | "), strcat(zWords, " ");
        strcat(zAll, t);
        strcat(zWords, t);
    }
    static const char *const aLarge[] = {"%s", "(%s) ab3", "(%s) -xy2", "ab0 MAYBE (%s)",
                                         "(%s) \"ab0 abc1\"", "@title (%s) | nothere"};
    for (size_t i = 0; i < (bFew ? 2 : sizeof(aLarge) / sizeof(aLarge[0])); i++) {
        snprintf(zq, sizeof(zq), aLarge[i], zAll);
        check_query_ranked(zq, r);
    }
    for (int nThr = bFew ? 5 : 1; nThr <= (bFew ? 5 : 9); nThr += 4) {
        snprintf(zq, sizeof(zq), "\"%s\"/%d", zWords, nThr);
        check_query_ranked(zq, r);
        snprintf(zq, sizeof(zq), "\"%s\"/%d -ab0", zWords, nThr);
        check_query_ranked(zq, r);
    }
}

/* A random query into buf (room for 512): 1 when the parser takes it
** (a query of only NOTs, or one starting with an operator, it refuses). */
static int rand_valid_query(char *buf) {
    rand_query(buf);
    if (buf[0] == ' ' || buf[1] == '-' || strncmp(buf, " MAYBE", 6) == 0) return 0;
    Arena a;
    arena_init(&a, 0);
    FtsNode *root;
    LpError err;
    int rc = fts_match_parse(&a, buf, strlen(buf), g_azField, NF, &root, &err);
    arena_free(&a);
    return rc == LP_OK;
}

static void test_operators_vs_reference(void **state) {
    (void)state;
    static const char *const aFixed[] = {
        /* only negations (OPTION not_terms_only_allowed=1): every document without them */
        "-ab0", "-ab0 -xy2", "-\"ab0 abc1\" !xy5", "-ab*", "-(ab0 | xy2)", "-@title ab0", "-nothere",
        "(-ab0 -abc1)", "-(ab0 << abc1)", "-*c1* -\"ab0 xy2\"~2",
        "ab0", "ab0 | xy2", "ab0 xy2", "ab0 -xy2", "\"ab0 abc1\"", "\"ab0 abc1\"~3", "ab*",
        "*c1", "*bc*", "a*c1", "*bc*1*", "ab*c*13", "@title *c1*", "ab0 -*y2", "*y3* | ab0", "*bc1*",
        "ab*1", "xy*", "*nothere*", "(*b1 | xy*) MAYBE *c4",
        /* REGEX(): the terms a regular expression matches whole */
        "REGEX(/ab[0-9]/)", "REGEX(/a.c1.*/)", "REGEX(/(ab|xy)1[0-9]+/) | ab0", "@title REGEX(/x.[25]/)",
        "REGEX(|abc?[13]|) -ab3", "ab0 NEAR/3 REGEX(/xy[0-9]+/)", "REGEX(/ab[0-9]+/) << xy2", "REGEX(/nothere/)",
        /* ... whose literal runs narrow the scan (regex_has) */
        "REGEX(/.*c1.*/)", "REGEX(/.*bc[0-9]+/)", "REGEX(/x?y[0-9]/)", "REGEX(/(ab)?c1[0-9]/)",
        /* ... and each top-level alternative's runs its own scan's (a term
        ** two of them find found once) */
        "REGEX(/ab1[0-9]|xy2.*/)", "REGEX(/abc1|ab.|xy3[0-9]/)", "REGEX(/ab[0-9]+|.*c1.*/)",
        "REGEX(/ab1.*|.*b1[0-9]/) xy2", "REGEX(/ab0|.*/)", "REGEX(/xy[0-9]|ab[0-9]|zz9/) << ab0",
        "REGEX(/[a-c]+c1[0-9]/)", "REGEX(/.*b[c]?1[0-9]*/)", "REGEX(/[^x]bc1.*/)", "REGEX(/.*(c|y)1/)",
        "abc*", "@title ab0", "@body ab0 | xy2", "(ab0 | abc1) xy2", "ab0 | abc1 | xy2 | ab3 | abc4",
        "@(title,body) xy5", "title:ab0", "+ab0 +abc1", "ab0 !abc1", "nothere", "ab0 nothere",
        "ab0 | nothere", "", "\"ab0 ab0\"", "\"abc1 ab0\"~1", "@title \"ab0 abc1\"",
        "\"ab0 xy2 ab0\"", "\"ab0 ab3\"~5",
        "ab0 MAYBE xy2", "ab3 MAYBE (ab0 abc1)", "ab0 | abc1 MAYBE xy2", "xy5 MAYBE nothere",
        "\"ab0 abc1 xy2\"/2", "\"ab0 abc1 xy2 ab3\"/0.5", "\"ab0 abc1 xy2\"/3", "\"ab0 nothere\"/2",
        "\"ab0 ab0 abc1\"/2", "@title \"ab0 abc1 xy2\"/2", "xy5 \"ab0 abc1 xy2\"/2",
        "^ab0", "ab0$", "^ab0$", "\"^ab0 abc1\"", "\"ab0 abc1$\"", "@title ^abc1", "^ab0 xy2",
        "ab0 << abc1", "abc1 << ab0", "ab0 << ab0", "ab0 << abc1 << xy2", "ab0 << \"abc1 xy2\"",
        "(ab0 abc1) << xy2", "xy2 << (ab0 abc1)", "ab0 << (abc1 | xy*)", "ab* << abc1", "ab0 << ab*",
        "(ab0 << abc1) << xy2", "@title (ab0 | abc1) << xy2", "(ab0 -abc1) << xy2", "(ab0 xy2) << ab0",
        "\"ab0 abc1 xy2\"/2 << ab3", "(ab0 MAYBE xy2) << abc1", "(^ab0 xy2) << abc1", "*c1 << (ab0 | xy2)",
        "(ab0 abc1) << \"xy2 ab3\" << (abc4 | xy5)", "ab0 << (nothere abc1)", "(ab0 | nothere) << abc1",
        "((ab0 abc1) << xy2) << ab*", "(ab* << (abc1 xy2)) << (ab3 | xy5)", "xy2 << (ab0 << (abc1 ab3))",
        "xy2 << \"ab0 abc1\"~3", "\"ab0 abc1\"~2 << xy2", "ab3 << \"ab0 ab0 abc1\"~4 << xy2",
        "xy2 << (ab0 MAYBE abc1)", "(ab0 MAYBE (abc1 | ab3)) << xy2", "xy2 << (ab0 MAYBE nothere)",
        "xy2 << (ab0 NEAR/3 abc1)", "(ab0 NEAR/4 abc1) << xy2", "(\"ab0 abc1\" NEAR/3 xy2) << ab3", "(ab0 NEAR/2 abc1 NEAR/2 xy2) << ab3", "(ab0 NEAR/1 abc1 NEAR/4 xy2) << ab3",
        /* an OR of parts that match nothing makes an AND match nothing */
        "ab0 (nothere | nothere2)", "ab0 (nothere | \"nothere abc1\")", "ab0 -xy2 (nothere | nothere*)",
        "ab0 NEAR/1 abc1", "ab0 NEAR/3 abc1", "ab0 NEAR/2 abc1 NEAR/2 xy2", "xy5 NEAR/8 ab0",
        "ab0 NOTNEAR/1 abc1", "ab0 NOTNEAR/5 abc1", "abc1 NOTNEAR/2 ab0", "ab0 NOTNEAR/3 nothere",
        "\"ab0 abc1\" NOTNEAR/2 \"xy2 ab3\"", "@body ab0 NOTNEAR/4 xy2", "ab0 NOTNEAR/1 ab0",
        "xy2 (ab0 NOTNEAR/2 abc1) | ab3", "@body[6] ab0 NOTNEAR/2 @body[3] abc1",
        "\"ab0 abc1\" NEAR/4 xy2", "@title ab0 << abc1", "(ab0 | xy2) << abc1", "abc1 << ab0 | xy2",
        "(ab0 | \"xy2 ab3\") NEAR/2 abc1 NEAR/3 (xy5 | ab0)", "(ab0 | abc1) NOTNEAR/2 xy2",
        "@title (ab0 | abc1) << @body xy2 | ab0", "ab0 SENTENCE abc1", "ab0 PARAGRAPH \"abc1 xy2\"",
        "(ab0 | xy2) SENTENCE abc1 SENTENCE ab3", "@body[5] ab0 SENTENCE abc1",
        /* an OR whose first part plans to an OR, more parts after it */
        "\"(ab0 | xy2) abc1\" | ab3 | xy5", "(ab0 << abc1 | xy2) | ab3 | xy5 | abc4", "ab0 NEAR/3 nothere", "xy2 (ab0 << abc1) | ab3",
        "@!title ab0", "@@relaxed @(body,nope) ab0",
        /* NEAR chains of frequent words: many spans per document */
        "ab0 NEAR/2 abc1 NEAR/1 ab0 NEAR/3 abc1", "abc1 NEAR/5 ab0 NEAR/1 xy2 NEAR/2 ab0",
        "ab0 NEAR/1 ab0 NEAR/1 ab0", "xy2 NEAR/7 abc1 NEAR/1 ab0 NEAR/9 xy2", "ab0 NEAR/300 xy5",
        /* position limits (@field[N]) on every kind of clause */
        "@title[1] ab0", "@body[3] ab0", "@body[3] ab0 | xy2", "@(title,body)[2] ab0 abc1",
        "@body[4] \"ab0 abc1\"", "@body[6] \"ab0 abc1\"~2", "@body[2] ab*", "@title[1] ab0$",
        "@body[5] ^ab0", "@body[5] \"ab0 abc1 xy2\"/2", "@body[3] ab0 << abc1",
        "@body[4] ab0 NEAR/2 @body abc1", "ab0 @body[2] -abc1", "@body[1] ab0 MAYBE xy2",
        "(@title[2] ab0) abc1", "@body[1000000000] ab0", "@!title[3] xy2",
        /* '*' places in phrases; boosts */
        "\"ab0 * abc1\"", "\"ab0 * * xy2\"", "\"ab0 * ab0\"", "\"^* ab0 abc1\"", "\"ab0 * abc1$\"",
        "@body \"xy2 * ab0 abc1\"", "ab0 << \"abc1 * xy2\"", "\"ab0 * abc1\" NEAR/3 xy2",
        "ab0^2", "ab0^0.5 | abc1", "ab0^3 ab0", "ab0^2 | ab0 | ab0^2", "^ab0^2", "ab0$^1.5 | xy2",
        "@title ab0^4 | @body abc1^0.25", "ab0 -abc1^2", "ab0 MAYBE xy2^3", "nothere^2 | ab0",
        "\"(ab0 | xy2) abc1\"", "\"ab0 ((abc1 xy2) | ab3)\"", "\"^(ab0 | abc1) xy2\" ab3",
    };
    for (size_t i = 0; i < sizeof(aFixed) / sizeof(aFixed[0]); i++) check_query(aFixed[i]);
    check_large_queries(FTS_RANK_BM25F, 0);
    char buf[512];
    for (int i = 0; i < 200; i++) {
        if (rand_valid_query(buf)) check_query(buf);
    }
}

/* Every match's weight of zQuery with rank (all documents, -1 = none). */
static double *all_weights(const char *zQuery, const FtsRankParams *rank) {
    Arena a;
    arena_init(&a, 0);
    FtsNode *root;
    LpError err;
    assert_int_equal(fts_match_parse(&a, zQuery, strlen(zQuery), g_azField, NF, &root, &err), LP_OK);
    FtsQuery *q;
    assert_int_equal(fts_query_new(&a, root, zQuery, g_an, g_src, rank, &q, &err), LP_OK);
    Collect c = {calloc((size_t)g_nDoc, sizeof(double)), 0};
    for (int i = 0; i < g_nDoc; i++) c.aScore[i] = -1;
    FtsStats st;
    assert_int_equal(fts_query_all(q, collect_hit, &c, &st, &err), LP_OK);
    fts_query_free(q);
    arena_free(&a);
    return c.aScore;
}

/* ranker=expr with each built-in ranker's formula (rankexpr.h) gives that
** ranker's weights, which test_proximity_rankers_vs_reference checks
** against the reference; with field weights, on fixed and random queries. */
static void test_rank_expressions(void **state) {
    (void)state;
    static const struct {
        FtsRanker r;
        const char *zExpr;
    } aCase[] = {
        {FTS_RANK_PROXIMITY_BM25, "sum(lcs*user_weight)*1000+bm25"},
        {FTS_RANK_SPH04, "sum((4*lcs+2*(min_hit_pos==1)+exact_hit)*user_weight)*1000+bm25"},
        {FTS_RANK_PROXIMITY, "sum(lcs*user_weight)"},
        {FTS_RANK_WORDCOUNT, "sum(hit_count*user_weight)"},
        {FTS_RANK_MATCHANY, "sum((word_count+(lcs-1)*max_lcs)*user_weight)"},
        {FTS_RANK_FIELDMASK, "field_mask"},
        {FTS_RANK_BM25F, "bm25f"},
    };
    static const char *const aFixed[] = {
        "ab0", "ab0 abc1", "ab0 | abc1 | xy2", "\"ab0 abc1\"", "ab* xy2", "\"ab0 abc1 ab0\"/2",
        "@title ab0 abc1", "ab0 MAYBE abc1", "abc1 << ab0 xy2", "^ab0 abc1$", "ab0 -abc1", "ab0^2 xy2",
        /* a quorum's repeat with anchors of its own: a keyword where they hold */
        "\"ab0$ ^ab0 abc34\"/2 MAYBE ab3", "\"^ab0 xy2 ab0$\"/2",
    };
    char buf[512];
    for (int it = 0; it < 40 + (int)(sizeof(aFixed) / sizeof(aFixed[0])); it++) {
        const char *zq = it < (int)(sizeof(aFixed) / sizeof(aFixed[0])) ? aFixed[it] : buf;
        if (zq == buf && !rand_valid_query(buf)) continue;
        for (size_t k = 0; k < sizeof(aCase) / sizeof(aCase[0]); k++) {
            FtsRankParams rank;
            fts_rank_defaults(&rank);
            rank.aFieldWeight[0] = it % 2 ? 3 : 1;
            rank.aFieldWeight[1] = it % 3 ? 0.5 : 1;
            rank.ranker = aCase[k].r;
            double *aWant = all_weights(zq, &rank);
            Arena a;
            arena_init(&a, 0);
            LpError err;
            FtsRankExpr *e;
            assert_int_equal(fts_rankexpr_compile(&a, aCase[k].zExpr, strlen(aCase[k].zExpr), &e, &err), LP_OK);
            rank.ranker = FTS_RANK_EXPR;
            rank.pExpr = e;
            double *aGot = all_weights(zq, &rank);
            for (int i = 0; i < g_nDoc; i++) {
                if ((aWant[i] < 0) != (aGot[i] < 0) || fabs(aWant[i] - aGot[i]) > 1e-9 * (1 + fabs(aWant[i]))) {
                    fail_msg("query %s, %s vs expr('%s'), doc %d: %.12g vs %.12g", zq, fts_ranker_name(aCase[k].r),
                             aCase[k].zExpr, i, aWant[i], aGot[i]);
                }
            }
            free(aWant);
            free(aGot);
            arena_free(&a);
        }
    }
    /* the idf factors and doc_word_count against the reference */
    for (int it = 0; it < 60; it++) {
        const char *zq = it < (int)(sizeof(aFixed) / sizeof(aFixed[0])) ? aFixed[it] : buf;
        if (zq == buf && !rand_valid_query(buf)) continue;
        Arena a;
        arena_init(&a, 0);
        LpError err;
        FtsRankExpr *e;
        assert_int_equal(fts_rankexpr_compile(&a, IDF_EXPR, strlen(IDF_EXPR), &e, &err), LP_OK);
        FtsRankParams rank;
        fts_rank_defaults(&rank);
        rank.ranker = FTS_RANK_EXPR;
        rank.pExpr = e;
        double *aGot = all_weights(zq, &rank);
        FtsNode *root;
        assert_int_equal(fts_match_parse(&a, zq, strlen(zq), g_azField, NF, &root, &err), LP_OK);
        static RefKeys keys;
        memset(&keys, 0, sizeof(keys));
        if (root) ref_keys(&keys, root, 0);
        for (int i = 0; i < g_nDoc; i++) {
            if (aGot[i] < 0) continue;
            double want = ref_idf_expr(&keys, i);
            if (fabs(want - aGot[i]) > 1e-9 * (1 + want)) {
                fail_msg("query %s, expr('%s'), doc %d: %.12g, reference %.12g", zq, IDF_EXPR, i, aGot[i], want);
            }
        }
        free(aGot);
        arena_free(&a);
    }
    /* lccs, wlccs, min_best_span_pos, exact_order and query_word_count
    ** against the reference */
    for (int it = 0; it < 40; it++) {
        const char *zq = it < (int)(sizeof(aFixed) / sizeof(aFixed[0])) ? aFixed[it] : buf;
        if (zq == buf && !rand_valid_query(buf)) continue;
        Arena a;
        arena_init(&a, 0);
        LpError err;
        FtsNode *root;
        assert_int_equal(fts_match_parse(&a, zq, strlen(zq), g_azField, NF, &root, &err), LP_OK);
        static RefKeys keys;
        memset(&keys, 0, sizeof(keys));
        if (root) ref_keys(&keys, root, 0);
        static const char *const azExpr[] = {SPAN_EXPR, "query_word_count", "sum(atc)", "sum(min_gaps)"};
        for (int x = 0; x < 4; x++) {
            int nQwc = ref_query_word_count(&keys);
            if (x == 1 && nQwc < 0) continue;
            FtsRankExpr *e;
            assert_int_equal(fts_rankexpr_compile(&a, azExpr[x], strlen(azExpr[x]), &e, &err), LP_OK);
            FtsRankParams rank;
            fts_rank_defaults(&rank);
            rank.ranker = FTS_RANK_EXPR;
            rank.pExpr = e;
            double *aGot = all_weights(zq, &rank);
            for (int i = 0; i < g_nDoc; i++) {
                if (aGot[i] < 0) continue;
                double want = x == 0 ? ref_span_expr(&keys, i) : x == 1 ? nQwc
                                                                 : x == 2 ? ref_atc(&keys, i) : ref_min_gaps(&keys, i);
                if (fabs(want - aGot[i]) > 1e-9 * (1 + want)) {
                    fail_msg("query %s, expr('%s'), doc %d: %.12g, reference %.12g", zq, azExpr[x], i,
                             aGot[i], want);
                }
            }
            free(aGot);
        }
        arena_free(&a);
    }
    /* bm25a(k1, b) is ranker=bm25 with that k1 and b and every field
    ** weighing 1; bm25f(k1, b, {...}) is ranker=bm25f with those field
    ** weights: the same weights, whatever the query's own k1, b and
    ** field_weights */
    for (int it = 0; it < 30; it++) {
        const char *zq = it < (int)(sizeof(aFixed) / sizeof(aFixed[0])) ? aFixed[it] : buf;
        if (zq == buf && !rand_valid_query(buf)) continue;
        static const struct {
            const char *zExpr;
            FtsRanker r;
            double k1, b, w1;
        } aBm[] = {{"bm25a(0.9, 0.4)", FTS_RANK_BM25, 0.9, 0.4, 1},
                   {"bm25f(1.5, 0.3, {body=2.5})", FTS_RANK_BM25F, 1.5, 0.3, 2.5},
                   {"bm25f(0, 1)", FTS_RANK_BM25F, 0, 1, 1}};
        for (size_t x = 0; x < sizeof(aBm) / sizeof(aBm[0]); x++) {
            Arena a;
            arena_init(&a, 0);
            LpError err;
            FtsRankExpr *e;
            assert_int_equal(fts_rankexpr_compile_fields(&a, aBm[x].zExpr, strlen(aBm[x].zExpr), g_azField, NF, &e,
                                                         &err),
                             LP_OK);
            FtsRankParams rank;
            fts_rank_defaults(&rank);
            rank.ranker = FTS_RANK_EXPR;
            rank.pExpr = e;
            rank.k1 = 2.0; /* the query's own, which bm25a/bm25f do not use */
            rank.b = 0.1;
            rank.aFieldWeight[0] = 7;
            double *aGot = all_weights(zq, &rank);
            fts_rank_defaults(&rank);
            rank.ranker = aBm[x].r;
            rank.k1 = aBm[x].k1;
            rank.b = aBm[x].b;
            rank.aFieldWeight[1] = aBm[x].w1;
            double *aWant = all_weights(zq, &rank);
            for (int i = 0; i < g_nDoc; i++) {
                if ((aGot[i] < 0) != (aWant[i] < 0) || fabs(aGot[i] - aWant[i]) > 1e-9 * (1 + fabs(aWant[i]))) {
                    fail_msg("query %s, expr('%s') doc %d: %.12g, ranker %s %.12g", zq, aBm[x].zExpr, i,
                             aGot[i], fts_ranker_name(aBm[x].r), aWant[i]);
                }
            }
            free(aGot);
            free(aWant);
            arena_free(&a);
        }
    }
    /* a ranker=expr query without its expression is refused */
    FtsRankParams rank;
    fts_rank_defaults(&rank);
    rank.ranker = FTS_RANK_EXPR;
    Arena a;
    arena_init(&a, 0);
    FtsQuery *q;
    LpError err;
    assert_int_equal(fts_query_new(&a, NULL, "", g_an, g_src, &rank, &q, &err), LP_INTERNAL);
    arena_free(&a);
    assert_int_equal(fts_ranker_from_name("expr"), -1);
    assert_string_equal(fts_ranker_name(FTS_RANK_EXPR), "expr");
}

/* Manticore's proximity rankers: each against the reference's factors
** (lcs, hit and word counts, first position, exact field) on fixed and
** random queries, every match and top-k. */
static void test_proximity_rankers_vs_reference(void **state) {
    (void)state;
    static const char *const aFixed[] = {
        "ab0", "ab0 abc1", "ab0 | abc1 | xy2", "\"ab0 abc1\"", "ab0 abc1 xy2 ab3", "ab0 -abc1",
        "ab* xy2", "\"ab0 ab0\" abc1", "ab0 nothere | abc1", "\"ab0 abc1 ab0\"/2", "@title ab0 abc1",
        "ab0 MAYBE abc1", "abc1 << ab0 xy2", "(ab0 NEAR/3 abc1) | xy5", "^ab0 abc1$", "@body[5] ab0 abc1",
        "@body[4] ab0 NEAR/2 @body abc1", "ab0 (abc1 | xy2) -xy5", "\"abc1 ab0\"~2 ab3",
        "\"ab0 * abc1\" xy2", "ab0^2 abc1", "\"ab0 * * abc1\" | ab0^0.5", "-ab0 -xy2",
        "ab0 abc1 ab0 abc1 xy2", "xy2 | ab0 | xy2 | abc1 | ab0", "ab0* | \"abc1 abc1 ab12\"/3",
        "xy2 | (ab0 abc1) | (ab0 abc1)", "ab3 | \"ab0 abc1 ab0 xy2\"/2",
    };
    static const FtsRanker aR[] = {FTS_RANK_PROXIMITY_BM25, FTS_RANK_SPH04, FTS_RANK_PROXIMITY,
                                   FTS_RANK_WORDCOUNT, FTS_RANK_MATCHANY, FTS_RANK_FIELDMASK};
    for (size_t r = 0; r < sizeof(aR) / sizeof(aR[0]); r++) {
        for (size_t i = 0; i < sizeof(aFixed) / sizeof(aFixed[0]); i++) check_query_ranked(aFixed[i], aR[r]);
        /* the keys' heap (a ranker's keys past OR_HEAP_MIN) on two of them:
        ** the reference is slow on queries of every word */
        if (r == 0 || r == 4) check_large_queries(aR[r], 1);
    }
    char buf[512];
    for (int i = 0; i < 60; i++) {
        if (rand_valid_query(buf)) check_query_ranked(buf, aR[i % 6]);
    }
}

/* A query that is one phrase runs phrase_topk: with k = 1 on the shared
** index most documents holding both words are passed over unread, the
** count of matches is then a lower bound, and the hit is the best of the
** exhaustive run (check_query compares every k and filter). */
static void test_phrase_topk_prunes(void **state) {
    (void)state;
    static const char *const azQ[] = {"\"ab0 abc1\"", "\"ab0 ab3\"~2"};
    for (size_t iq = 0; iq < LP_ARRAY_SIZE(azQ); iq++) {
        const char *zQ = azQ[iq];
        Arena a;
        arena_init(&a, 0);
        FtsNode *root;
        LpError err;
        assert_int_equal(fts_match_parse(&a, zQ, strlen(zQ), g_azField, NF, &root, &err), LP_OK);
        FtsRankParams rank;
        fts_rank_defaults(&rank);
        FtsQuery *q;
        assert_int_equal(fts_query_new(&a, root, zQ, g_an, g_src, &rank, &q, &err), LP_OK);
        Collect c = {calloc((size_t)g_nDoc, sizeof(double)), 0};
        for (int i = 0; i < g_nDoc; i++) c.aScore[i] = -1;
        FtsStats st;
        assert_int_equal(fts_query_all(q, collect_hit, &c, &st, &err), LP_OK);
        fts_query_free(q);
        assert_true(c.n > 20);
        int iBest = -1;
        for (int i = 0; i < g_nDoc; i++) {
            if (c.aScore[i] >= 0 && (iBest < 0 || c.aScore[i] > c.aScore[iBest])) iBest = i;
        }
        assert_int_equal(fts_query_new(&a, root, zQ, g_an, g_src, &rank, &q, &err), LP_OK);
        FtsHit hit;
        int nHit;
        assert_int_equal(fts_query_topk(q, 1, NULL, NULL, &hit, &nHit, &st, &err), LP_OK);
        fts_query_free(q);
        assert_string_equal(st.zStrategy, "phrase_topk");
        assert_int_equal(nHit, 1);
        assert_int_equal(hit.doc, (uint32_t)iBest);
        assert_true(hit.score == c.aScore[iBest]);
        assert_false(st.bTotalExact);
        assert_true(st.nCandidates < (uint64_t)c.n / 2);
        free(c.aScore);
        arena_free(&a);
    }
}

static int64_t reversed(void *ctx, uint32_t doc) {
    return *(const int *)ctx - (int64_t)doc;
}

/* The hits of a top-k cut off at nCut matches are the best of the matches
** up to where it stopped (aScore: every document's weight, -1 for none;
** within 1e-9, as the top-k may sum in another order). Counting every
** match (bPrunes 0: term at a time), it stops at the nCut-th in document
** order. Counting only those it scores (bPrunes 1), it stops later when
** it passed some over, and the prefix runs to its last hit at least; as
** more documents can only add better ones, the top k of that shortest
** prefix is what it must have found. */
static void check_cutoff_hits(const double *aScore, int nDoc, int nCut, const FtsHit *aHit, int nHit, int bPrunes) {
    int nSeen = 0;
    uint32_t last = 0;
    for (int i = 0; i < nDoc && nSeen < nCut; i++) {
        if (aScore[i] >= 0) nSeen++, last = (uint32_t)i;
    }
    assert_int_equal(nSeen, nCut);
    for (int h = 0; h < nHit; h++) {
        assert_true(aScore[aHit[h].doc] >= 0); /* a match */
        if (!bPrunes) assert_true(aHit[h].doc <= last);
        if (aHit[h].doc > last) last = aHit[h].doc;
    }
    for (uint32_t i = 0; i <= last; i++) {
        int in = 0;
        for (int j = 0; j < nHit; j++) in |= aHit[j].doc == i;
        if (!in && aScore[i] >= 0) assert_true(aScore[i] <= aHit[nHit - 1].score + 1e-9);
    }
}

/* A prefix of 100 words over 40,000 documents runs term at a time, in
** windows of 16,384 documents, with a gap of documents none of its words
** holds (a window with nothing is skipped): its top k, with and without a
** filter, are the best of every match's weight (fts_query_all), ties by
** ordinal, and equal scores are equal bit for bit; a cutoff keeps the
** best of the first matches, a deadline stops it. */
static void test_taat(void **state) {
    (void)state;
    enum { N = 40000, NW = 100, K = 50 };
    FtsMem *m = fts_mem_new(1);
    FtsDocBuf d = {0};
    LpError err;
    unsigned seed = 7;
    for (int i = 0; i < N; i++) {
        char z[64] = "filler";
        if (i < 17000 || i >= 35000) {
            /* a few words, often the same few: equal scores to order */
            int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 3;
            z[0] = 0;
            for (int k = 0; k < n; k++) {
                unsigned x = (seed = seed * 1103515245u + 12345u) >> 16;
                sprintf(z + strlen(z), "w%u ", i % 5 == 0 ? (unsigned)k : x % NW);
            }
        }
        fts_docbuf_reset(&d);
        assert_int_equal(fts_docbuf_field(&d, g_an, 0, z, strlen(z), &err), LP_OK);
        assert_int_equal(fts_mem_add(m, (uint32_t)i, &d), LP_OK);
    }
    fts_docbuf_free(&d);
    const char *zQ = "w*";
    const char *const azF[] = {"body"};
    Arena a;
    arena_init(&a, 0);
    FtsNode *root;
    assert_int_equal(fts_match_parse(&a, zQ, strlen(zQ), azF, 1, &root, &err), LP_OK);
    FtsRankParams rank;
    fts_rank_defaults(&rank);
    FtsQuery *q;
    assert_int_equal(fts_query_new(&a, root, zQ, g_an, fts_mem_source(m), &rank, &q, &err), LP_OK);
    Collect c = {calloc(N, sizeof(double)), 0};
    for (int i = 0; i < N; i++) c.aScore[i] = -1;
    FtsStats st;
    int saveN = g_nDoc;
    g_nDoc = N; /* collect_hit checks the range */
    assert_int_equal(fts_query_all(q, collect_hit, &c, &st, &err), LP_OK);
    g_nDoc = saveN;
    fts_query_free(q);
    for (int bFilter = 0; bFilter < 2; bFilter++) {
        FtsAcceptFn xAcc = bFilter ? accept_odd_filter : NULL;
        assert_int_equal(fts_query_new(&a, root, zQ, g_an, fts_mem_source(m), &rank, &q, &err), LP_OK);
        FtsHit aHit[K];
        int nHit;
        assert_int_equal(fts_query_topk(q, K, xAcc, NULL, aHit, &nHit, &st, &err), LP_OK);
        fts_query_free(q);
        assert_string_equal(st.zStrategy, "taat");
        assert_int_equal(nHit, K);
        /* the reference: accepted matches by weight (as fts_query_all
        ** summed it, which may differ in the last bits), then ordinal */
        int nRank = 0;
        for (int h = 0; h < nHit; h++) {
            uint32_t dh = aHit[h].doc;
            assert_true(dh < 17000 || dh >= 35000);
            assert_true(!xAcc || xAcc(NULL, dh));
            assert_true(fabs(aHit[h].score - c.aScore[dh]) < 1e-9 * (1 + c.aScore[dh]));
            if (h) {
                assert_true(aHit[h].score < aHit[h - 1].score ||
                            (aHit[h].score == aHit[h - 1].score && dh > aHit[h - 1].doc));
            }
        }
        for (int i = 0; i < N; i++) {
            if (c.aScore[i] < 0 || (xAcc && !xAcc(NULL, (uint32_t)i))) continue;
            int in = 0;
            for (int h = 0; h < nHit; h++) in |= aHit[h].doc == (uint32_t)i;
            const FtsHit *last = &aHit[nHit - 1];
            if (!in && (c.aScore[i] > last->score + 1e-9 * (1 + last->score) ||
                        (fabs(c.aScore[i] - last->score) <= 1e-9 * (1 + last->score) && (uint32_t)i < last->doc))) {
                fail_msg("doc %d (%.17g) should be in the top %d (last %u, %.17g)", i, c.aScore[i], K,
                         last->doc, last->score);
            }
            nRank++;
        }
        assert_true(nRank > 3 * K);
        /* every match was a candidate: the total is exact */
        assert_true(st.bTotalExact);
        assert_int_equal(st.nAccepted, nRank);
        /* documents of the same words (every fifth: w0 .. w(n-1)) score the same */
        int nSame = 0;
        for (int h = 1; h < nHit; h++) nSame += aHit[h].score == aHit[h - 1].score;
        assert_true(nSame > 0);
    }
    /* a cutoff of 40: the best of the first 40 matches in ordinal order */
    assert_int_equal(fts_query_new(&a, root, zQ, g_an, fts_mem_source(m), &rank, &q, &err), LP_OK);
    fts_query_set_cutoff(q, 40);
    FtsHit aHit[5];
    int nHit;
    assert_int_equal(fts_query_topk(q, 5, NULL, NULL, aHit, &nHit, &st, &err), LP_OK);
    fts_query_free(q);
    assert_true(st.bCutoff && !st.bTotalExact);
    assert_int_equal(st.nAccepted, 40);
    assert_int_equal(nHit, 5);
    check_cutoff_hits(c.aScore, N, 40, aHit, nHit, 0);
    /* a deadline already past: stopped within 64 candidates */
    assert_int_equal(fts_query_new(&a, root, zQ, g_an, fts_mem_source(m), &rank, &q, &err), LP_OK);
    fts_query_set_deadline(q, 1);
    assert_int_equal(fts_query_topk(q, 5, NULL, NULL, aHit, &nHit, &st, &err), LP_OK);
    fts_query_free(q);
    assert_true(st.bTimedOut && !st.bTotalExact);
    assert_true(st.nCandidates <= 64);
    free(c.aScore);
    arena_free(&a);
    fts_mem_free(m);
}

/* Equal scores come back by ordinal, or by the tie key when one is set,
** on every strategy (maxscore, bool_fallback, no_ranking), even when the
** pruning could skip documents that only tie the k-th score. */
static void test_tie_key(void **state) {
    (void)state;
    enum { N = 300 };
    FtsMem *m = fts_mem_new(1);
    FtsDocBuf d = {0};
    LpError err;
    for (int i = 0; i < N; i++) {
        fts_docbuf_reset(&d);
        const char *z = "same words here";
        assert_int_equal(fts_docbuf_field(&d, g_an, 0, z, strlen(z), &err), LP_OK);
        assert_int_equal(fts_mem_add(m, (uint32_t)i, &d), LP_OK);
    }
    fts_docbuf_free(&d);
    const char *const azF[] = {"body"};
    static const char *const azQ[] = {"same | words", "\"same words\"", "same"};
    for (int iq = 0; iq < 3; iq++) {
        for (int bNone = 0; bNone < 2; bNone++) {
            for (int bKey = 0; bKey < 2; bKey++) {
                Arena a;
                arena_init(&a, 0);
                FtsNode *root;
                assert_int_equal(fts_match_parse(&a, azQ[iq], (int)strlen(azQ[iq]), azF, 1, &root, &err),
                                 LP_OK);
                FtsRankParams rank;
                fts_rank_defaults(&rank);
                if (bNone) rank.ranker = FTS_RANK_NONE;
                FtsQuery *q;
                assert_int_equal(fts_query_new(&a, root, azQ[iq], g_an, fts_mem_source(m), &rank, &q, &err),
                                 LP_OK);
                int last = N - 1;
                if (bKey) fts_query_set_tie_key(q, reversed, &last);
                FtsHit aHit[5];
                int n;
                FtsStats st;
                assert_int_equal(fts_query_topk(q, 5, NULL, NULL, aHit, &n, &st, &err), LP_OK);
                fts_query_free(q);
                assert_int_equal(n, 5);
                for (int i = 0; i < 5; i++) {
                    assert_int_equal(aHit[i].doc, bKey ? N - 1 - i : i);
                    assert_true(aHit[i].score == aHit[0].score);
                }
                arena_free(&a);
            }
        }
    }
    fts_mem_free(m);
}

/* A document with more fields than a buffer keeps inline, filled out of
** order, and terms whose streams outgrow the term's inline bytes: every
** field's length, every posting and every position must come back from
** the index, with each key's count of documents holding its term in a
** lower field, and a field may not be analysed twice. Frequencies reach
** 69, so a buffer's records hold varints of one and of two bytes. */
static void test_docbuf_fields_and_streams(void **state) {
    (void)state;
    enum { NFLD = 10, NDOC = 70 };
    static const int aOrder[NFLD] = {9, 0, 7, 3, 8, 1, 6, 2, 5, 4};
    FtsMem *m = fts_mem_new(NFLD);
    FtsDocBuf d = {0};
    LpError err;
    char z[4096];
    for (int i = 0; i < NDOC; i++) {
        if (i % 2) fts_docbuf_free(&d); else fts_docbuf_reset(&d);
        for (int k = 0; k < NFLD; k++) {
            int f = aOrder[(k + i) % NFLD];
            /* Field f of doc i: f + i % 5 words "wF", then "x" repeated i
            ** times (tf i: long position lists), then "uI" (unique). */
            size_t n = 0;
            for (int w = 0; w < f + i % 5; w++) n += (size_t)snprintf(z + n, sizeof(z) - n, "w%d ", f);
            for (int w = 0; w < i; w++) n += (size_t)snprintf(z + n, sizeof(z) - n, "x ");
            n += (size_t)snprintf(z + n, sizeof(z) - n, "u%d", i);
            if ((f + i) % 7 == 0) continue; /* some fields are absent */
            assert_int_equal(fts_docbuf_field(&d, g_an, f, z, n, &err), LP_OK);
        }
        int f0 = aOrder[i % NFLD];
        if ((f0 + i) % 7 != 0) {
            assert_int_equal(fts_docbuf_field(&d, g_an, f0, "again", 5, &err), LP_INTERNAL);
        }
        assert_int_equal(fts_mem_add(m, (uint32_t)i, &d), LP_OK);
    }
    fts_docbuf_free(&d);
    FtsSource *src = fts_mem_source(m);
    for (int f = 0; f < NFLD; f++) {
        for (int i = 0; i < NDOC; i++) {
            uint32_t len = (f + i) % 7 == 0 ? 0 : (uint32_t)(f + i % 5 + i + 1);
            assert_int_equal(src->vt->xDocLen(src, f, (uint32_t)i), len);
        }
        uint8_t key[8] = {(uint8_t)f, 'x'};
        /* "x" is in field f of doc i (i >= 1) unless (f + i) % 7 == 0; it
        ** is in a lower field too unless every lower field is absent. */
        uint32_t df = 0, nEarlier = 0;
        uint64_t cf = 0;
        for (int i = 1; i < NDOC; i++) {
            if ((f + i) % 7 == 0) continue;
            df++;
            cf += (uint64_t)i;
            int bLower = 0;
            for (int g = 0; g < f; g++) bLower |= (g + i) % 7 != 0;
            nEarlier += (uint32_t)bLower;
        }
        FtsTermInfo info;
        assert_int_equal(src->vt->xLookup(src, key, 2, &info, &err), 1);
        assert_int_equal(info.df, df);
        assert_int_equal(info.nEarlier, nEarlier);
        assert_int_equal(info.cf, cf);
        FtsPostings *c = src->vt->xOpen(src, key, 2, 1, &err);
        assert_non_null(c);
        int i = 1;
        for (uint32_t doc = c->vt->xNext(c); doc != FTS_NO_DOC; doc = c->vt->xNext(c), i++) {
            while ((f + i) % 7 == 0) i++;
            assert_int_equal(doc, (uint32_t)i);
            assert_int_equal(c->tf, (uint32_t)i);
            uint32_t aPos[NDOC];
            assert_int_equal(c->vt->xPositions(c, aPos, &err), LP_OK);
            for (int j = 0; j < i; j++) assert_int_equal(aPos[j], (uint32_t)(f + i % 5 + j));
        }
        assert_true(i >= NDOC - 1);
        c->vt->xClose(c);
    }
    fts_mem_free(m);
}

/* A field large enough that the thread's scratch is released after it,
** then small ones on the same thread: each document's terms, frequencies
** and positions come back from the index. */
static void test_docbuf_large_field(void **state) {
    (void)state;
    enum { NW = 60000 };
    size_t cap = (size_t)NW * 8;
    char *z = malloc(cap);
    assert_non_null(z);
    size_t n = 0;
    for (int i = 0; i < NW; i++) n += (size_t)snprintf(z + n, cap - n, "q%d ", i);
    FtsMem *m = fts_mem_new(1);
    FtsDocBuf d = {0};
    LpError err;
    for (int doc = 0; doc < 3; doc++) {
        fts_docbuf_reset(&d);
        if (doc == 1) {
            assert_int_equal(fts_docbuf_field(&d, g_an, 0, z, n, &err), LP_OK);
            assert_int_equal(d.nTerm, NW);
        } else {
            assert_int_equal(fts_docbuf_field(&d, g_an, 0, "q7 zz q7 q59999", 15, &err), LP_OK);
            assert_int_equal(d.nTerm, 3);
        }
        assert_int_equal(fts_mem_add(m, (uint32_t)doc, &d), LP_OK);
    }
    fts_docbuf_free(&d);
    free(z);
    FtsSource *src = fts_mem_source(m);
    static const struct {
        const char *zTerm;
        uint32_t aTf[3];                /* per document, 0 = absent */
        uint32_t aPos[3][2];
    } aCase[] = {
        {"q7", {2, 1, 2}, {{0, 2}, {7}, {0, 2}}},
        {"q59999", {1, 1, 1}, {{3}, {59999}, {3}}},
        {"q30000", {0, 1, 0}, {{0}, {30000}, {0}}},
        {"zz", {1, 0, 1}, {{1}, {0}, {1}}},
    };
    for (size_t k = 0; k < LP_ARRAY_SIZE(aCase); k++) {
        uint8_t key[16] = {0};
        size_t nKey = strlen(aCase[k].zTerm);
        memcpy(key + 1, aCase[k].zTerm, nKey);
        FtsPostings *c = src->vt->xOpen(src, key, (int)nKey + 1, 1, &err);
        assert_non_null(c);
        for (uint32_t doc = 0; doc < 3; doc++) {
            if (!aCase[k].aTf[doc]) continue;
            assert_int_equal(c->vt->xNext(c), doc);
            assert_int_equal(c->tf, aCase[k].aTf[doc]);
            uint32_t aPos[2];
            assert_int_equal(c->vt->xPositions(c, aPos, &err), LP_OK);
            for (uint32_t j = 0; j < c->tf; j++) assert_int_equal(aPos[j], aCase[k].aPos[doc][j]);
        }
        assert_int_equal(c->vt->xNext(c), FTS_NO_DOC);
        c->vt->xClose(c);
    }
    fts_mem_free(m);
}

/* BM25F and BM25 against hand-computed values on a 5-document index with
** two fields. */
static void test_bm25_by_hand(void **state) {
    (void)state;
    FtsMem *m = fts_mem_new(2);
    FtsDocBuf d = {0};
    LpError err;
    const char *aTitle[] = {"cat", "dog", "bird", "eel", "ant"};
    const char *aBody[] = {"cat dog", "cat cat bird fish", "fish", "eel cat", "ant cat"};
    for (int i = 0; i < 5; i++) {
        fts_docbuf_reset(&d);
        assert_int_equal(fts_docbuf_field(&d, g_an, 0, aTitle[i], strlen(aTitle[i]), &err), LP_OK);
        assert_int_equal(fts_docbuf_field(&d, g_an, 1, aBody[i], strlen(aBody[i]), &err), LP_OK);
        assert_int_equal(fts_mem_add(m, (uint32_t)i, &d), LP_OK);
    }
    fts_docbuf_free(&d);
    Arena a;
    arena_init(&a, 0);
    const char *const azF[] = {"title", "body"};
    FtsNode *root;
    assert_int_equal(fts_match_parse(&a, "dog", 3, azF, 2, &root, &err), LP_OK);
    FtsRankParams rank;
    fts_rank_defaults(&rank);
    FtsQuery *q;
    FtsHit aHit[3];
    int n;
    FtsStats st;
    /* "dog": title df 1 (doc 1), body df 1 (doc 0): 2 documents hold the
    ** clause. N = 5, so its idf is ln((5 - 2 + 0.5)/(2 + 0.5)) = ln(1.4)
    ** (the larger field's df alone would give ln(3)). avgdl: title 1, body
    ** 11/5.
    ** doc 1: title tf 1, dl 1: x = 1/(0.25 + 0.75) = 1.
    ** doc 0: body tf 1, dl 2: x = 1/(0.25 + 0.75*2/(11/5)) = 1/0.931818... */
    double idf = log(1.4);
    double x1 = 1.0, x0 = 1.0 / (0.25 + 0.75 * 2 / (11.0 / 5.0));
    double s1 = idf * x1 * 2.2 / (x1 + 1.2), s0 = idf * x0 * 2.2 / (x0 + 1.2);
    assert_int_equal(fts_query_new(&a, root, "dog", g_an, fts_mem_source(m), &rank, &q, &err), LP_OK);
    assert_int_equal(fts_query_topk(q, 3, NULL, NULL, aHit, &n, &st, &err), LP_OK);
    fts_query_free(q);
    assert_int_equal(n, 2);
    assert_string_equal(st.zStrategy, "maxscore");
    assert_int_equal(aHit[0].doc, 0); /* x0 > x1: the longer body is still shorter than average */
    assert_true(fabs(aHit[0].score - s0) < 1e-12);
    assert_int_equal(aHit[1].doc, 1);
    assert_true(fabs(aHit[1].score - s1) < 1e-12);

    /* BM25F: a field weight scales the field's frequency before saturation,
    ** a type weight scales the clause's score. */
    rank.aFieldWeight[0] = 2;
    rank.wTerm = 1.5;
    double w1 = 1.5 * idf * (2 * x1) * 2.2 / (2 * x1 + 1.2);
    assert_int_equal(fts_query_new(&a, root, "dog", g_an, fts_mem_source(m), &rank, &q, &err), LP_OK);
    assert_int_equal(fts_query_topk(q, 3, NULL, NULL, aHit, &n, &st, &err), LP_OK);
    assert_int_equal(aHit[0].doc, 1);
    assert_true(fabs(aHit[0].score - w1) < 1e-12);
    StrBuf sb = {0};
    assert_int_equal(fts_query_explain_doc(q, 1, &sb, &err), LP_OK);
    assert_non_null(strstr(sb.z, "\"fields\":[{\"field\":0,\"tf\":1,\"dl\":1,\"avgdl\":1,\"field_weight\":2"));
    assert_non_null(strstr(sb.z, "\"type_weight\":1.5"));
    assert_non_null(strstr(sb.z, "\"ranker\":\"bm25f\""));
    strbuf_free(&sb);
    fts_query_free(q);

    /* ranker=bm25: each field scored with its own idf, then weighted, summed.
    ** Per-field idf of "dog" is ln(4.5/1.5) = ln(3) in both fields. */
    rank.ranker = FTS_RANK_BM25;
    double b1 = 1.5 * 2 * log(3.0) * x1 * 2.2 / (x1 + 1.2);
    assert_int_equal(fts_query_new(&a, root, "dog", g_an, fts_mem_source(m), &rank, &q, &err), LP_OK);
    assert_int_equal(fts_query_topk(q, 3, NULL, NULL, aHit, &n, &st, &err), LP_OK);
    assert_int_equal(aHit[0].doc, 1);
    assert_true(fabs(aHit[0].score - b1) < 1e-12);
    fts_query_free(q);

    /* a term in more than half the documents ("cat": 4 of 5) keeps a tiny
    ** positive idf */
    assert_int_equal(fts_match_parse(&a, "cat", 3, azF, 2, &root, &err), LP_OK);
    fts_rank_defaults(&rank);
    assert_int_equal(fts_query_new(&a, root, "cat", g_an, fts_mem_source(m), &rank, &q, &err), LP_OK);
    assert_int_equal(fts_query_topk(q, 3, NULL, NULL, aHit, &n, &st, &err), LP_OK);
    assert_int_equal(n, 3);
    assert_true(aHit[0].score > 0 && aHit[0].score < 1e-5);
    fts_query_free(q);
    arena_free(&a);
    fts_mem_free(m);
}

/* BM25F on a term in every one of FTS_MAX_FIELDS fields, at length
** normalisations far from 1: the per-field terms are summed as a fraction
** whose denominator is the product of the norms, which must neither
** overflow (norm ~38 per field: 38^255 > DBL_MAX) nor underflow (norm 0.01
** per field: 0.01^255 < DBL_MIN). Each case's score is checked against
** idf * saturate(sum over fields of tf / norm), computed directly. */
static void test_bm25f_many_fields(void **state) {
    (void)state;
    enum { NFLD = FTS_MAX_FIELDS };
    static char z[8192];
    char **azF = malloc(sizeof(char *) * NFLD);
    assert_non_null(azF);
    for (int f = 0; f < NFLD; f++) {
        azF[f] = malloc(16);
        assert_non_null(azF[f]);
        snprintf(azF[f], 16, "f%d", f);
    }
    /* case 0: doc 0 long (z + 999 words), 39 one-word docs: norm ~38.5.
    ** case 1: doc 0 is "z", doc 1 has 1000 words, 8 docs hold one word in
    ** field 0 only: norm ~0.01. b = 1 in both. */
    for (int iCase = 0; iCase < 2; iCase++) {
        int nDoc = iCase == 0 ? 40 : 10;
        FtsMem *m = fts_mem_new(NFLD);
        FtsDocBuf d = {0};
        LpError err;
        double aSum[NFLD] = {0};
        for (int i = 0; i < nDoc; i++) {
            fts_docbuf_reset(&d);
            int nWord = iCase == 0 ? (i == 0 ? 1000 : 1) : (i == 1 ? 1000 : 1);
            size_t n = 0;
            for (int w = 0; w < nWord; w++) {
                n += (size_t)snprintf(z + n, sizeof(z) - n, "%s ", i == 0 && w == 0 ? "z" : "y");
            }
            for (int f = 0; f < NFLD; f++) {
                if (iCase == 1 && i >= 2 && f > 0) continue;
                assert_int_equal(fts_docbuf_field(&d, g_an, f, z, n, &err), LP_OK);
                aSum[f] += nWord;
            }
            assert_int_equal(fts_mem_add(m, (uint32_t)i, &d), LP_OK);
        }
        fts_docbuf_free(&d);
        double x = 0, dl0 = iCase == 0 ? 1000 : 1;
        for (int f = 0; f < NFLD; f++) x += 1.0 / (dl0 / (aSum[f] / nDoc));
        double want = log((nDoc - 1 + 0.5) / 1.5) * x * 2.2 / (x + 1.2);
        Arena a;
        arena_init(&a, 0);
        FtsNode *root;
        assert_int_equal(fts_match_parse(&a, "z", 1, (const char *const *)azF, NFLD, &root, &err), LP_OK);
        FtsRankParams rank;
        fts_rank_defaults(&rank);
        rank.b = 1;
        FtsQuery *q;
        FtsHit aHit[2];
        int nHit;
        FtsStats st;
        assert_int_equal(fts_query_new(&a, root, "z", g_an, fts_mem_source(m), &rank, &q, &err), LP_OK);
        assert_int_equal(fts_query_topk(q, 2, NULL, NULL, aHit, &nHit, &st, &err), LP_OK);
        fts_query_free(q);
        assert_int_equal(nHit, 1);
        assert_int_equal(aHit[0].doc, 0);
        assert_true(isfinite(aHit[0].score));
        assert_true(fabs(aHit[0].score - want) < 1e-12 * want);
        arena_free(&a);
        fts_mem_free(m);
    }
    for (int f = 0; f < NFLD; f++) free(azF[f]);
    free(azF);
}

/* Cursor operations on long lists (several blocks), against the docs. */
static void test_cursor_blocks(void **state) {
    (void)state;
    FtsSource *src = fts_mem_source(g_mem);
    LpError err;
    for (int w = 0; w < NWORD; w += 7) {
        char buf[16];
        word_text(w, buf);
        uint8_t key[32];
        key[0] = 1;
        memcpy(key + 1, buf, strlen(buf));
        FtsPostings *c = src->vt->xOpen(src, key, (int)strlen(buf) + 1, 1, &err);
        assert_non_null(c);
        uint32_t expect = 0, nSeen = 0;
        for (uint32_t doc = c->vt->xNext(c); doc != FTS_NO_DOC;) {
            /* expect = next doc holding w in the body */
            while (1) {
                int tf = 0;
                for (int k = 0; k < g_docs[expect].aLen[1]; k++) tf += g_docs[expect].aaWord[1][k] == w;
                if (tf) {
                    assert_int_equal(doc, expect);
                    assert_int_equal(c->tf, (uint32_t)tf);
                    uint32_t aPos[MAXLEN];
                    if (nSeen % 3 == 0) {
                        assert_int_equal(c->vt->xPositions(c, aPos, &err), LP_OK);
                        for (uint32_t j = 0; j < c->tf; j++) assert_int_equal(g_docs[doc].aaWord[1][aPos[j]], w);
                    }
                    break;
                }
                expect++;
            }
            nSeen++;
            expect++;
            /* sometimes jump ahead */
            if (nSeen % 10 == 0 && expect + 50 < (uint32_t)g_nDoc) {
                uint32_t mtf, mlen;
                uint32_t end = c->vt->xShallow(c, expect + 50, &mtf, &mlen);
                assert_true(end >= expect + 50 || end == FTS_NO_DOC);
                doc = c->vt->xAdvance(c, expect + 50);
                expect += 50;
            } else {
                doc = c->vt->xNext(c);
            }
            if (doc != FTS_NO_DOC) {
                /* docs skipped by advance must not hold w */
                while (expect < doc) {
                    int tf = 0;
                    for (int k = 0; k < g_docs[expect].aLen[1]; k++) tf += g_docs[expect].aaWord[1][k] == w;
                    if (nSeen % 10 != 0) assert_int_equal(tf, 0);
                    expect++;
                }
            }
        }
        assert_int_equal(nSeen > 0, 1);
        c->vt->xClose(c);
    }
}

/* The same queries over a sealed segment written from the index. */
static void test_operators_on_segment(void **state) {
    char zPath[] = "/tmp/loupe-test-segXXXXXX";
    int fd = mkstemp(zPath);
    assert_true(fd >= 0);
    close(fd);
    LpError err;
    assert_int_equal(fts_seg_write_source(zPath, fts_mem_source(g_mem), NULL, 0, &err), LP_OK);
    FtsSegment *seg;
    assert_int_equal(fts_segr_open(zPath, &seg, &err), LP_OK);
    assert_int_equal(fts_segr_check(seg, &err), LP_OK);
    g_src = fts_segr_source(seg);
    g_seed = 777;
    test_operators_vs_reference(state);
    test_proximity_rankers_vs_reference(state);
    g_src = fts_mem_source(g_mem);
    fts_segr_close(seg);
    unlink(zPath);
}

/* ---- SENTENCE and PARAGRAPH on an index_sp index ---- */

#define SP_DOCS 600
#define SP_MAXW 40
#define SP_VOCAB 6

typedef struct SpDoc {
    int n;             /* words */
    int aw[SP_MAXW];   /* each word, 0..SP_VOCAB-1 */
    int aSent[SP_MAXW]; /* its sentence, counted over the field */
    int aPara[SP_MAXW]; /* its paragraph */
} SpDoc;

static const char *const azSpWord[SP_VOCAB] = {"red", "fox", "big", "dog", "sun", "sky"};

/* A text of random words, joined by what ends a sentence ("? ", "! ",
** ". " before a capital), a paragraph ("\n\n", ".\n \n"), or neither (" ",
** ", ", ". " before a lower-case word, which Sphinx reads as an
** abbreviation). The reference numbers sentences and paragraphs from
** these choices, not from the analyzer. */
static void sp_doc_make(SpDoc *d, char *z) {
    d->n = 1 + (int)(rnd() % SP_MAXW);
    int sent = 0, para = 0;
    z[0] = 0;
    for (int k = 0; k < d->n; k++) {
        d->aw[k] = (int)(rnd() % SP_VOCAB);
        int bCap = 0;
        if (k) {
            switch (rnd() % 10) {
            case 0: strcat(z, "? "); sent++; break;
            case 1: strcat(z, "! "); sent++; break;
            case 2: strcat(z, ". "); sent++; bCap = 1; break;
            case 3: strcat(z, "\n\n"); sent++; para++; break;
            case 4: strcat(z, ".\n \n"); sent++; para++; break;
            case 5: strcat(z, ". "); break; /* "x. dog": an abbreviation */
            case 6: strcat(z, ", "); break;
            default: strcat(z, " "); break;
            }
        }
        d->aSent[k] = sent;
        d->aPara[k] = para;
        size_t at = strlen(z);
        strcat(z, azSpWord[d->aw[k]]);
        if (bCap) z[at] = (char)(z[at] - 'a' + 'A');
    }
    if (rnd() % 2) strcat(z, ".");
}

/* Does d hold operand words aw[0..nw) as a phrase starting at s, and in
** which part (aPart: aSent or aPara)? -1 if not; the words must share
** their sentence, as a boundary takes a position. */
static int sp_phrase_at(const SpDoc *d, const int *aw, int nw, int s) {
    if (s + nw > d->n) return -1;
    for (int j = 0; j < nw; j++) {
        if (d->aw[s + j] != aw[j] || d->aSent[s + j] != d->aSent[s]) return -1;
    }
    return s;
}

/* The reference: does d hold every operand in one part? */
static int sp_holds_ref(const SpDoc *d, int aaw[][3], const int *anw, int nOp, int bPara) {
    const int *aPart = bPara ? d->aPara : d->aSent;
    int nPart = aPart[d->n - 1] + 1;
    for (int part = 0; part < nPart; part++) {
        int bAll = 1;
        for (int o = 0; o < nOp && bAll; o++) {
            int bHas = 0;
            for (int s = 0; s < d->n && !bHas; s++) {
                bHas = sp_phrase_at(d, aaw[o], anw[o], s) >= 0 && aPart[s] == part;
            }
            bAll = bHas;
        }
        if (bAll) return 1;
    }
    return 0;
}

/* Runs zQuery over the SP_DOCS documents of src: each one's score into
** aScore, -1 where it does not match. Returns how many match. */
static int sp_run(FtsSource *src, const Analyzer *an, const char *zQuery, double *aScore) {
    static const char *const azF[] = {"body"};
    Arena a;
    arena_init(&a, 0);
    FtsNode *root;
    LpError err;
    FtsRankParams rank;
    FtsQuery *q;
    fts_rank_defaults(&rank);
    if (fts_match_parse(&a, zQuery, strlen(zQuery), azF, 1, &root, &err) != LP_OK) {
        fail_msg("%s: %s", zQuery, err.zMsg);
    }
    assert_int_equal(fts_query_new(&a, root, zQuery, an, src, &rank, &q, &err), LP_OK);
    for (int i = 0; i < SP_DOCS; i++) aScore[i] = -1;
    Collect c = {aScore, 0};
    FtsStats st;
    int saveN = g_nDoc;
    g_nDoc = SP_DOCS; /* collect_hit checks the range */
    assert_int_equal(fts_query_all(q, collect_hit, &c, &st, &err), LP_OK);
    g_nDoc = saveN;
    fts_query_free(q);
    arena_free(&a);
    return c.n;
}

static void sp_check(FtsSource *src, const Analyzer *an, const SpDoc *aDoc, const char *zQuery,
                     int aaw[][3], const int *anw, int nOp, int bPara, int bPhrase) {
    double aScore[SP_DOCS];
    int nGot = sp_run(src, an, zQuery, aScore);
    int nWant = 0;
    for (int i = 0; i < SP_DOCS; i++) {
        int bWant;
        if (bPhrase) {
            bWant = 0;
            for (int s = 0; s < aDoc[i].n && !bWant; s++) bWant = sp_phrase_at(&aDoc[i], aaw[0], anw[0], s) >= 0;
        } else {
            bWant = sp_holds_ref(&aDoc[i], aaw, anw, nOp, bPara);
        }
        nWant += bWant;
        if (bWant != (aScore[i] >= 0)) {
            fail_msg("%s: doc %d: engine %s, reference %s", zQuery, i, aScore[i] >= 0 ? "matches" : "does not",
                     bWant ? "matches" : "does not");
        }
    }
    assert_int_equal(nGot, nWant);
}

/* x << (a SENTENCE b ...) and (a SENTENCE b ...) << x (bAfter: x last),
** or with NEAR/nNear for '<<' (nNear > 0), operands aw[0..nOp) of one
** word each, none of them x: the chain's occurrences are its operands' in
** the parts that hold all of them, as Sphinx's operator passes them on,
** and x must come before (after) one, or within nNear of one (a boundary
** takes a position). bImplicit leaves the parentheses out, as SENTENCE
** and PARAGRAPH bind tighter. */
static void sp_order_check(FtsSource *src, const Analyzer *an, const SpDoc *aDoc, int x, const int *aw, int nOp,
                           int bPara, int bAfter, int bImplicit, int nNear) {
    char z[256] = "", zOp[16] = " << ";
    if (nNear) snprintf(zOp, sizeof(zOp), " NEAR/%d ", nNear);
    if (!bAfter) snprintf(z, sizeof(z), "%s%s%s", azSpWord[x], zOp, bImplicit ? "" : "(");
    else if (!bImplicit) strcat(z, "(");
    for (int o = 0; o < nOp; o++) {
        if (o) strcat(z, bPara ? " PARAGRAPH " : " SENTENCE ");
        strcat(z, azSpWord[aw[o]]);
    }
    if (!bImplicit) strcat(z, ")");
    if (bAfter) strcat(z, zOp), strcat(z, azSpWord[x]);
    double aScore[SP_DOCS];
    sp_run(src, an, z, aScore);
    for (int i = 0; i < SP_DOCS; i++) {
        const SpDoc *d = &aDoc[i];
        const int *aPart = bPara ? d->aPara : d->aSent;
        int bWant = 0;
        for (int k = 0; k < d->n && !bWant; k++) {
            /* k: an operand's word in a part holding every operand */
            int bOp = 0;
            for (int o = 0; o < nOp; o++) bOp |= d->aw[k] == aw[o];
            for (int o = 0; o < nOp && bOp; o++) {
                int bHas = 0;
                for (int j = 0; j < d->n && !bHas; j++) bHas = d->aw[j] == aw[o] && aPart[j] == aPart[k];
                bOp = bHas;
            }
            for (int j = 0; j < d->n && bOp && !bWant; j++) {
                int gap = (j + d->aSent[j]) - (k + d->aSent[k]); /* positions */
                bWant = d->aw[j] == x && (nNear ? abs(gap) <= nNear : bAfter ? j > k : j < k);
            }
        }
        if (bWant != (aScore[i] >= 0)) {
            fail_msg("%s: doc %d: engine %s, reference %s", z, i, aScore[i] >= 0 ? "matches" : "does not",
                     bWant ? "matches" : "does not");
        }
    }
}

static void sp_run_queries(FtsSource *src, const Analyzer *an, const SpDoc *aDoc) {
    for (int t = 0; t < 200; t++) {
        /* a SENTENCE or PARAGRAPH chain as an operand of '<<' or NEAR/N */
        int aw[3], nOp = 2 + (int)(rnd() % 2), x = (int)(rnd() % SP_VOCAB);
        for (int o = 0; o < nOp; o++) {
            do aw[o] = (int)(rnd() % SP_VOCAB);
            while (aw[o] == x);
        }
        int bAfter = rnd() % 2, nNear = rnd() % 2 ? 1 + (int)(rnd() % 4) : 0;
        sp_order_check(src, an, aDoc, x, aw, nOp, rnd() % 3 == 0, bAfter, (nNear || !bAfter) && rnd() % 2, nNear);
    }
    for (int t = 0; t < 300; t++) {
        int nOp = 2 + (int)(rnd() % 2), bPara = rnd() % 3 == 0;
        int aaw[3][3], anw[3];
        char z[256] = "";
        for (int o = 0; o < nOp; o++) {
            anw[o] = rnd() % 4 == 0 ? 2 : 1;
            if (o) strcat(z, bPara ? " PARAGRAPH " : " SENTENCE ");
            if (anw[o] == 2) strcat(z, "\"");
            for (int j = 0; j < anw[o]; j++) {
                aaw[o][j] = (int)(rnd() % SP_VOCAB);
                if (j) strcat(z, " ");
                strcat(z, azSpWord[aaw[o][j]]);
            }
            if (anw[o] == 2) strcat(z, "\"");
        }
        sp_check(src, an, aDoc, z, aaw, anw, nOp, bPara, 0);
        /* a phrase never spans a boundary */
        char zp[64];
        int aw2[1][3] = {{aaw[0][0], aaw[1][0], 0}}, n2[1] = {2};
        snprintf(zp, sizeof(zp), "\"%s %s\"", azSpWord[aw2[0][0]], azSpWord[aw2[0][1]]);
        sp_check(src, an, aDoc, zp, aw2, n2, 1, 0, 1);
    }
}

static void test_sentences(void **state) {
    (void)state;
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 1, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *an;
    LpError err;
    assert_int_equal(analyzer_new(&cfg, &an, &err), LP_OK);
    SpDoc *aDoc = calloc(SP_DOCS, sizeof(SpDoc));
    assert_non_null(aDoc);
    FtsMem *m = fts_mem_new(1);
    FtsDocBuf d = {0};
    g_seed = 4242;
    for (int i = 0; i < SP_DOCS; i++) {
        char z[SP_MAXW * 16];
        sp_doc_make(&aDoc[i], z);
        fts_docbuf_reset(&d);
        assert_int_equal(fts_docbuf_field(&d, an, 0, z, strlen(z), &err), LP_OK);
        assert_int_equal(fts_mem_add(m, (uint32_t)i, &d), LP_OK);
    }
    fts_docbuf_free(&d);
    sp_run_queries(fts_mem_source(m), an, aDoc);
    /* the same through a sealed segment */
    char zPath[] = "/tmp/loupe-test-spXXXXXX";
    int fd = mkstemp(zPath);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(fts_seg_write_source(zPath, fts_mem_source(m), NULL, 0, &err), LP_OK);
    FtsSegment *seg;
    assert_int_equal(fts_segr_open(zPath, &seg, &err), LP_OK);
    assert_int_equal(fts_segr_check(seg, &err), LP_OK);
    g_seed = 4343;
    sp_run_queries(fts_segr_source(seg), an, aDoc);
    fts_segr_close(seg);
    unlink(zPath);
    fts_mem_free(m);
    free(aDoc);
    analyzer_free(an);
}

/* Dropping documents while writing renumbers them. */
static void test_segment_drop_docs(void **state) {
    (void)state;
    char zPath[] = "/tmp/loupe-test-segXXXXXX";
    int fd = mkstemp(zPath);
    assert_true(fd >= 0);
    close(fd);
    uint32_t *aMap = malloc(sizeof(uint32_t) * (size_t)g_nDoc);
    uint32_t n = 0;
    for (int i = 0; i < g_nDoc; i++) aMap[i] = i % 3 == 1 ? FTS_NO_DOC : n++;
    LpError err;
    assert_int_equal(fts_seg_write_source(zPath, fts_mem_source(g_mem), aMap, n, &err), LP_OK);
    FtsSegment *seg;
    assert_int_equal(fts_segr_open(zPath, &seg, &err), LP_OK);
    FtsSource *src = fts_segr_source(seg);
    assert_int_equal(src->nDocs, n);
    /* every posting of a word maps back to an old doc holding it */
    char buf[16];
    word_text(0, buf);
    uint8_t key[32];
    key[0] = 1;
    memcpy(key + 1, buf, strlen(buf));
    FtsPostings *c = src->vt->xOpen(src, key, (int)strlen(buf) + 1, 0, &err);
    uint32_t nSeen = 0, nExpect = 0;
    for (int i = 0; i < g_nDoc; i++) {
        if (aMap[i] == FTS_NO_DOC) continue;
        int tf = 0;
        for (int k = 0; k < g_docs[i].aLen[1]; k++) tf += g_docs[i].aaWord[1][k] == 0;
        if (!tf) continue;
        nExpect++;
        assert_int_equal(c->vt->xNext(c), aMap[i]);
        assert_int_equal(c->tf, (uint32_t)tf);
        assert_int_equal(src->vt->xDocLen(src, 1, aMap[i]), (uint32_t)g_docs[i].aLen[1]);
        nSeen++;
    }
    assert_int_equal(c->vt->xNext(c), FTS_NO_DOC);
    assert_int_equal(nSeen, nExpect);
    c->vt->xClose(c);
    fts_segr_close(seg);
    free(aMap);
    unlink(zPath);
}

/* Everything a source holds, as text: per key its df, nEarlier and cf,
** then each posting (doc, tf, positions); then every document's field
** lengths. */
typedef struct DumpCtx {
    FtsSource *src;
    FILE *f;
} DumpCtx;

static int dump_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    DumpCtx *x = ctx;
    LpError err;
    fprintf(x->f, "%d:%.*s df=%u e=%u cf=%llu:", key[0], nKey - 1, (const char *)key + 1, info->df,
            info->nEarlier, (unsigned long long)info->cf);
    FtsPostings *c = x->src->vt->xOpen(x->src, key, nKey, 1, &err);
    if (!c) return 1;
    for (uint32_t doc = c->vt->xNext(c); doc != FTS_NO_DOC; doc = c->vt->xNext(c)) {
        uint32_t aPos[MAXLEN];
        if (c->tf > MAXLEN || c->vt->xPositions(c, aPos, &err) != LP_OK) {
            c->vt->xClose(c);
            return 1;
        }
        fprintf(x->f, " %u/%u", doc, c->tf);
        for (uint32_t j = 0; j < c->tf; j++) fprintf(x->f, ",%u", aPos[j]);
    }
    c->vt->xClose(c);
    fputc('\n', x->f);
    return 0;
}

static char *dump_source(FtsSource *src) {
    char *z = NULL;
    size_t n = 0;
    DumpCtx x = {src, open_memstream(&z, &n)};
    assert_non_null(x.f);
    LpError err;
    assert_int_equal(src->vt->xScan(src, (const uint8_t *)"", 0, dump_key, &x, &err), 0);
    fprintf(x.f, "docs %u\n", src->nDocs);
    for (uint32_t i = 0; i < src->nDocs; i++) {
        for (int f = 0; f < src->nFields; f++) fprintf(x.f, "%u ", src->vt->xDocLen(src, f, i));
    }
    fclose(x.f);
    return z;
}

/* The documents of the shared index added again in batches of several
** sizes, as table_apply adds an INSERT (reserve the whole batch, then
** append it), on this thread and shared out over a pool: the index must
** be the one that adding them one at a time built. A batch of 400 holds
** the commonest words in nearly all its documents, so one reservation
** covers postings across several blocks (skip entries grown for them). */
static void test_batches_match_single_adds(void **state) {
    (void)state;
    static const int aBatch[] = {1, 37, 400, 2, 700};
    char *zWant = dump_source(g_src);
    LpError err;
    for (int bPool = 0; bPool < 2; bPool++) {
        Tpool *pool = bPool ? tpool_new(2, &err) : NULL;
        assert_true(!bPool || pool);
        FtsMem *m = fts_mem_new(NF);
        fts_mem_set_pool(m, pool);
        FtsDocBuf *aDoc = calloc(700, sizeof(FtsDocBuf));
        FtsDocBuf *apDoc[700];
        uint32_t aOrd[700];
        int i = 0;
        for (int b = 0; i < g_nDoc; b++) {
            int n = aBatch[b % (int)LP_ARRAY_SIZE(aBatch)];
            if (n > g_nDoc - i) n = g_nDoc - i;
            for (int k = 0; k < n; k++) {
                fts_docbuf_reset(&aDoc[k]);
                for (int f = 0; f < NF; f++) {
                    char text[MAXLEN * 16] = "";
                    for (int w = 0; w < g_docs[i + k].aLen[f]; w++) {
                        char buf[16];
                        word_text(g_docs[i + k].aaWord[f][w], buf);
                        strcat(text, buf);
                        strcat(text, w % 5 == 4 ? ". " : " ");
                    }
                    assert_int_equal(fts_docbuf_field(&aDoc[k], g_an, f, text, strlen(text), &err), LP_OK);
                }
                apDoc[k] = &aDoc[k];
                aOrd[k] = (uint32_t)(i + k);
            }
            assert_int_equal(fts_mem_reserve(m, apDoc, n, (uint32_t)(i + n - 1)), LP_OK);
            fts_mem_append_batch(m, aOrd, apDoc, n);
            i += n;
        }
        for (int k = 0; k < 700; k++) fts_docbuf_free(&aDoc[k]);
        free(aDoc);
        char *zGot = dump_source(fts_mem_source(m));
        assert_string_equal(zGot, zWant);
        free(zGot);
        fts_mem_free(m);
        tpool_free(pool);
    }
    free(zWant);
}

static int count_doc(void *ctx, uint32_t doc, double score) {
    (void)doc;
    (void)score;
    (*(int *)ctx)++;
    return 0;
}

/* z parsed and planned with the default ranking, in a. */
static FtsQuery *plan_query(Arena *a, const char *z) {
    FtsNode *root;
    LpError err;
    FtsRankParams rank;
    FtsQuery *q;
    fts_rank_defaults(&rank);
    assert_int_equal(fts_match_parse(a, z, strlen(z), g_azField, NF, &root, &err), LP_OK);
    assert_int_equal(fts_query_new(a, root, z, g_an, g_src, &rank, &q, &err), LP_OK);
    return q;
}

/* A deadline already past stops every strategy within 64 candidates,
** says so, and makes the total a lower bound; none (0) changes nothing. */
static void test_deadline(void **state) {
    (void)state;
    char zPer[1200];
    const char *const azQuery[] = {"ab0", "ab0 | abc1", "ab0 abc1", "\"ab0 abc1\"",
                                   "ab0 -abc1", "ab0 NEAR/3 abc1", or_per_field(zPer)};
    for (size_t iq = 0; iq < sizeof(azQuery) / sizeof(azQuery[0]); iq++) {
        Arena a;
        arena_init(&a, 0);
        LpError err;
        FtsStats st;
        int aAll[2];
        for (int bLate = 0; bLate < 2; bLate++) {
            FtsQuery *q = plan_query(&a, azQuery[iq]);
            fts_query_set_deadline(q, bLate ? 1 : 0);
            aAll[bLate] = 0;
            assert_int_equal(fts_query_all(q, count_doc, &aAll[bLate], &st, &err), LP_OK);
            assert_int_equal(st.bTimedOut, bLate);
            assert_int_equal(st.bTotalExact, !bLate);
            fts_query_free(q);
            /* top-k through whatever strategy the query gets */
            FtsHit aHit[10];
            int nHit;
            q = plan_query(&a, azQuery[iq]);
            fts_query_set_deadline(q, bLate ? 1 : 0);
            assert_int_equal(fts_query_topk(q, 10, NULL, NULL, aHit, &nHit, &st, &err), LP_OK);
            assert_int_equal(st.bTimedOut, bLate);
            if (bLate) assert_int_equal(st.bTotalExact, 0);
            assert_true(nHit <= 10);
            fts_query_free(q);
        }
        assert_true(aAll[0] > 64); /* enough matches to be cut */
        assert_true(aAll[1] < 64);
        arena_free(&a);
    }
}

/* A cutoff stops top-k once that many matches were accepted, says so,
** and keeps the best of the matches up to where it stopped, on every
** strategy: term, maxscore (AND, OR) and phrase top-k count only what
** they score, so they may stop past the 40th match ("ab0 | abc1" does
** here), and what they passed over must not have been better. */
static void test_cutoff(void **state) {
    (void)state;
    static const char *const azQuery[] = {"ab0 abc1", "\"ab0 abc1\"", "ab0 -abc1", "ab0 MAYBE xy2", "ab0", "ab0 | abc1", "ab0 | xy2 | abc1", "\"ab0 abc1\"~3", "abc1"};
    for (size_t iq = 0; iq < sizeof(azQuery) / sizeof(azQuery[0]); iq++) {
        Arena a;
        arena_init(&a, 0);
        LpError err;
        FtsStats st;
        FtsHit aHit[5];
        int nHit;
        /* every match and its score, in document order */
        Collect c = {calloc((size_t)g_nDoc, sizeof(double)), 0};
        for (int i = 0; i < g_nDoc; i++) c.aScore[i] = -1;
        FtsQuery *q = plan_query(&a, azQuery[iq]);
        assert_int_equal(fts_query_all(q, collect_hit, &c, &st, &err), LP_OK);
        fts_query_free(q);
        assert_true(c.n > 40);
        q = plan_query(&a, azQuery[iq]);
        fts_query_set_cutoff(q, 40);
        assert_int_equal(fts_query_topk(q, 5, NULL, NULL, aHit, &nHit, &st, &err), LP_OK);
        fts_query_free(q);
        assert_int_equal(st.bCutoff, 1);
        assert_int_equal(st.bTotalExact, 0);
        assert_int_equal(st.nAccepted, 40);
        assert_int_equal(nHit, 5);
        check_cutoff_hits(c.aScore, g_nDoc, 40, aHit, nHit, 1);
        free(c.aScore);
        arena_free(&a);
    }
}

/* expand_keywords values: Manticore's 0, 1, exact and star, in any case
** and as a list; nothing else. */
static void test_expand_names(void **state) {
    (void)state;
    assert_int_equal(fts_expand_from_name("0"), 0);
    assert_int_equal(fts_expand_from_name("1"), FTS_EXPAND_EXACT | FTS_EXPAND_STAR);
    assert_int_equal(fts_expand_from_name("exact"), FTS_EXPAND_EXACT);
    assert_int_equal(fts_expand_from_name("STAR"), FTS_EXPAND_STAR);
    assert_int_equal(fts_expand_from_name("star,Exact"), FTS_EXPAND_EXACT | FTS_EXPAND_STAR);
    const char *azBad[] = {"", "2", "-1", "01", "exactly", "exact,", ",star", "exact,,star", "star exact"};
    for (size_t i = 0; i < sizeof(azBad) / sizeof(azBad[0]); i++) {
        if (fts_expand_from_name(azBad[i]) != -1) fail_msg("'%s' was accepted", azBad[i]);
    }
    FtsRankParams p;
    fts_rank_defaults(&p);
    assert_int_equal(p.expand, 0);
}

/* A reference glob: '*' any characters, '?' one, '%' one or none
** (characters of UTF-8), by plain recursion. */
static int ref_glob(const char *p, const char *t) {
    if (!*p) return !*t;
    int len = *t ? ((unsigned char)*t < 0xC0 ? 1 : (unsigned char)*t < 0xE0 ? 2 : 3) : 0;
    if (*p == '*') return ref_glob(p + 1, t) || (*t && ref_glob(p, t + len));
    if (*p == '%') return ref_glob(p + 1, t) || (*t && ref_glob(p + 1, t + len));
    if (*p == '?') return *t && ref_glob(p + 1, t + len);
    return *p == *t && ref_glob(p + 1, t + 1);
}

/* fts_glob_match with '?' and '%' (Manticore's inline wildcards) against
** the reference on random patterns and terms, multi-byte characters too. */
static void test_glob_inline(void **state) {
    (void)state;
    static const char *const azChar[] = {"a", "b", "\xc3\xa9"}; /* é: two bytes */
    static const char *const azPat[] = {"a", "b", "\xc3\xa9", "*", "?", "%"};
    unsigned seed = 5;
    int nMatch = 0;
    for (int iter = 0; iter < 20000; iter++) {
        char zP[32] = "", zT[32] = "";
        seed = seed * 1103515245u + 12345u;
        int np = (int)((seed >> 16) % 6), nt = (int)((seed >> 8) % 6);
        for (int k = 0; k < np; k++) {
            seed = seed * 1103515245u + 12345u;
            strcat(zP, azPat[(seed >> 16) % 6]);
        }
        for (int k = 0; k < nt; k++) {
            seed = seed * 1103515245u + 12345u;
            strcat(zT, azChar[(seed >> 16) % 3]);
        }
        int want = ref_glob(zP, zT);
        int got = fts_glob_match(zP, (int)strlen(zP), (const uint8_t *)zT, (int)strlen(zT));
        if (got != want) fail_msg("glob '%s' on '%s': %d, want %d", zP, zT, got, want);
        nMatch += want;
    }
    assert_true(nMatch > 1000); /* both answers are exercised */
    assert_true(fts_glob_match("t?st", 4, (const uint8_t *)"t\xc3\xa9st", 5));
    assert_false(fts_glob_match("t?st", 4, (const uint8_t *)"teast", 5));
    assert_true(fts_glob_match("tes%", 4, (const uint8_t *)"tes", 3));
    assert_false(fts_glob_match("tes%", 4, (const uint8_t *)"testing", 7));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bm25_by_hand),
        cmocka_unit_test(test_bm25f_many_fields),
        cmocka_unit_test(test_tie_key),
        cmocka_unit_test(test_taat),
        cmocka_unit_test(test_docbuf_fields_and_streams),
        cmocka_unit_test(test_docbuf_large_field),
        cmocka_unit_test(test_batches_match_single_adds),
        cmocka_unit_test(test_cursor_blocks),
        cmocka_unit_test(test_operators_vs_reference),
        cmocka_unit_test(test_proximity_rankers_vs_reference),
        cmocka_unit_test(test_rank_expressions),
        cmocka_unit_test(test_phrase_topk_prunes),
        cmocka_unit_test(test_operators_on_segment),
        cmocka_unit_test(test_sentences),
        cmocka_unit_test(test_segment_drop_docs),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_cutoff),
        cmocka_unit_test(test_expand_names),
        cmocka_unit_test(test_glob_inline),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
