/*
** test_analyzer.c — unit tests for src/text/analyzer.c: word splitting,
** NFKC + case folding, stop words, stemming, offsets and positions, UTF-8
** errors, truncation, limits, configuration errors and use from several
** threads.
**
** Normalisation is also checked exhaustively: every code point the
** splitter treats as a word character is analysed alone and after an
** ASCII letter, and the term compared with utf8proc's own NFKC + case
** folding of the same bytes, so the analyzer's fast paths cannot drift
** from utf8proc.
*/
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libstemmer.h>
#include <pthread.h>
#include <utf8proc.h>

#include "text/analyzer.h"
#include "text/editdist.h"
#include "text/stoplists.h"
#include "text/html.h"
#include "text/metaphone.h"
#include "text/regexp.h"
#include "text/stemdict.h"
#include "text/utf8.h"

/* ------------------------------------------------------------- helpers */

typedef struct Tok {
    char z[ANALYZER_MAX_TERM + 1];  /* the term, NUL-terminated */
    int n;
    uint32_t iPos, iStart, iEnd;
} Tok;

typedef struct Toks {
    Tok *a;
    int n, nAlloc;
    int nStopAfter;     /* when > 0, the callback returns 99 at this token */
} Toks;

static int collect(void *ctx, const Token *t) {
    Toks *p = ctx;
    if (p->n == p->nAlloc) {
        p->nAlloc = p->nAlloc ? 2 * p->nAlloc : 64;
        p->a = realloc(p->a, sizeof(Tok) * (size_t)p->nAlloc);
        assert_non_null(p->a);
    }
    Tok *k = &p->a[p->n++];
    assert_true(t->n >= 1 && t->n <= ANALYZER_MAX_TERM);
    memcpy(k->z, t->z, (size_t)t->n);
    k->z[t->n] = 0;
    k->n = t->n;
    k->iPos = t->iPos;
    k->iStart = t->iStart;
    k->iEnd = t->iEnd;
    if (p->nStopAfter > 0 && p->n == p->nStopAfter) return 99;
    return 0;
}

static void toks_free(Toks *p) {
    free(p->a);
    memset(p, 0, sizeof(*p));
}

static Analyzer *mk(const char *zMorph, const char *zStop) {
    AnalyzerConfig cfg = {zMorph, zStop, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = NULL;
    LpError err;
    lp_err_clear(&err);
    int rc = analyzer_new(&cfg, &a, &err);
    if (rc != LP_OK) {
        fail_msg("analyzer_new(%s, %s): %s", zMorph ? zMorph : "-", zStop ? zStop : "-", err.zMsg);
    }
    return a;
}

/* Runs a over z and returns its tokens; *piEnd gets the end position. */
static Toks run_full(const Analyzer *a, const char *z, uint32_t iBase, uint32_t *piEnd) {
    Toks t = {0};
    LpError err;
    lp_err_clear(&err);
    int rc = analyzer_run(a, z, strlen(z), iBase, collect, &t, piEnd, &err);
    if (rc != LP_OK) fail_msg("analyzer_run(\"%s\"): %s", z, err.zMsg);
    return t;
}

/* The terms of z, space-separated, with the default (plain) analyzer. */
static char *terms_of(const Analyzer *a, const char *z) {
    Toks t = run_full(a, z, 0, NULL);
    size_t cap = 1;
    for (int i = 0; i < t.n; i++) cap += (size_t)t.a[i].n + 1;
    char *zOut = calloc(1, cap);
    assert_non_null(zOut);
    for (int i = 0; i < t.n; i++) {
        if (i) strcat(zOut, " ");
        strcat(zOut, t.a[i].z);
    }
    toks_free(&t);
    return zOut;
}

static void check_terms(const Analyzer *a, const char *z, const char *zWant) {
    char *zGot = terms_of(a, z);
    if (strcmp(zGot, zWant) != 0) fail_msg("\"%s\" → \"%s\", want \"%s\"", z, zGot, zWant);
    free(zGot);
}

/* An analyzer with remove_diacritics on or off, and nothing else. */
static Analyzer *mk_strip(int bStrip) {
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, bStrip, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = NULL;
    LpError err;
    if (analyzer_new(&cfg, &a, &err) != LP_OK) fail_msg("analyzer_new: %s", err.zMsg);
    return a;
}

/* remove_diacritics as analyzer.h words it, over the decomposed, case
** folded code points a[0..n): marks after a Latin or Greek base letter
** dropped, ø ł đ ħ ŧ turned into o l d h t. */
static utf8proc_ssize_t ref_strip(utf8proc_int32_t *a, utf8proc_ssize_t n) {
    static const uint32_t aStroke[][2] = {{0xF8, 'o'}, {0x142, 'l'}, {0x111, 'd'}, {0x127, 'h'}, {0x167, 't'}};
    utf8proc_ssize_t k = 0;
    int bLatin = 0;
    for (utf8proc_ssize_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)a[i];
        utf8proc_category_t cat = utf8proc_category(a[i]);
        if (cat >= UTF8PROC_CATEGORY_MN && cat <= UTF8PROC_CATEGORY_ME) {
            if (bLatin) continue;
        } else {
            /* the Latin and Greek blocks */
            bLatin = c <= 0x24F || (c >= 0x370 && c <= 0x3FF) || (c >= 0x1E00 && c <= 0x1FFF) ||
                     (c >= 0x2C60 && c <= 0x2C7F) || (c >= 0xA720 && c <= 0xA7FF) || (c >= 0xAB30 && c <= 0xAB6F);
            for (size_t j = 0; j < sizeof(aStroke) / sizeof(aStroke[0]); j++) {
                if (c == aStroke[j][0]) c = aStroke[j][1];
            }
        }
        a[k++] = (utf8proc_int32_t)c;
    }
    return k;
}

/* utf8proc's NFKC + case folding of z[0..n) (and remove_diacritics when
** bStrip), cut as the analyzer cuts. */
static char *ref_fold_ex(const char *z, size_t n, int bStrip, int *pn) {
    utf8proc_uint8_t *zOut = NULL;
    utf8proc_ssize_t m;
    if (!bStrip) {
        m = utf8proc_map((const utf8proc_uint8_t *)z, (utf8proc_ssize_t)n, &zOut,
                         UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD);
    } else {
        /* NFKD + case folding, the marks dropped, then NFC */
        utf8proc_int32_t a[256];
        const int opt = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD;
        utf8proc_ssize_t nCp = utf8proc_decompose((const utf8proc_uint8_t *)z, (utf8proc_ssize_t)n, a, 255, opt);
        assert_true(nCp >= 0 && nCp <= 255);
        nCp = ref_strip(a, nCp);
        char zMid[1024];
        size_t k = 0;
        for (utf8proc_ssize_t i = 0; i < nCp; i++) k += (size_t)utf8proc_encode_char(a[i], (utf8proc_uint8_t *)zMid + k);
        m = utf8proc_map((const utf8proc_uint8_t *)zMid, (utf8proc_ssize_t)k, &zOut, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    }
    assert_true(m >= 0);
    *pn = (int)utf8_floor((const char *)zOut, m > ANALYZER_MAX_TERM ? ANALYZER_MAX_TERM : (size_t)m);
    return (char *)zOut;
}

static char *ref_fold(const char *z, size_t n, int *pn) {
    return ref_fold_ex(z, n, 0, pn);
}

static size_t put_cp(char *z, uint32_t cp) {
    return (size_t)utf8proc_encode_char((utf8proc_int32_t)cp, (utf8proc_uint8_t *)z);
}

/* -------------------------------------------------------------- splitting */

static void test_ascii(void **state) {
    Analyzer *a = mk(NULL, NULL);
    uint32_t iEnd = 0;
    Toks t = run_full(a, "Hello, World! 42 foo_bar\tBAZ9x", 0, &iEnd);
    static const struct {
        const char *z;
        uint32_t iStart, iEnd;
    } want[] = {{"hello", 0, 5}, {"world", 7, 12}, {"42", 14, 16}, {"foo", 17, 20}, {"bar", 21, 24}, {"baz9x", 25, 30}};
    assert_int_equal(t.n, (int)LP_ARRAY_SIZE(want));
    for (int i = 0; i < t.n; i++) {
        assert_string_equal(t.a[i].z, want[i].z);
        assert_int_equal(t.a[i].iPos, i);
        assert_int_equal(t.a[i].iStart, want[i].iStart);
        assert_int_equal(t.a[i].iEnd, want[i].iEnd);
    }
    assert_int_equal(iEnd, 6);
    toks_free(&t);
    analyzer_free(a);
}

static void test_separators(void **state) {
    Analyzer *a = mk(NULL, NULL);
    /* Apostrophes (straight and curly) and hyphens split words. */
    check_terms(a, "don't it’s e-mail well—known", "don t it s e mail well known");
    /* Emoji, symbols, punctuation, controls, zero-width joiner. */
    check_terms(a, "hello😀world ♥a§b 👩\u200D💻x <tag>y</tag> a\x01z", "hello world a b x tag y tag a z");
    check_terms(a, "3.14 1,000 2024-01-05", "3 14 1 000 2024 01 05");
    /* Digits of other scripts are digits (NFKC keeps them). */
    check_terms(a, "٣٤ ۵ ४२", "٣٤ ۵ ४२");
    check_terms(a, "   \t\n.,;!?", "");
    analyzer_free(a);
}

static void test_case_folding(void **state) {
    Analyzer *a = mk(NULL, NULL);
    /* Full Unicode folding, not Turkish-specific: İ → i + U+0307, ı stays. */
    check_terms(a, "İstanbul ISTANBUL ılık", "i\xCC\x87stanbul istanbul ılık");
    check_terms(a, "STRASSE Straße ẞ", "strasse strasse ss");
    /* Greek: capital and final sigma fold to σ, accents are kept. */
    check_terms(a, "ΣΊΣΥΦΟΣ σίσυφος", "σίσυφοσ σίσυφοσ");
    check_terms(a, "ПРИВЕТ Ǆemal ǅ ﬀ", "привет džemal dž ff");
    analyzer_free(a);
}

static void test_nfkc(void **state) {
    Analyzer *a = mk(NULL, NULL);
    check_terms(a, "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ１２３", "fullwidth abc123");
    check_terms(a, "ﬁne ﬂow ﬃx", "fine flow ffix");
    check_terms(a, "x² H₂O ① ⑫ Ⅻ ℌ K", "x2 h2o 1 12 xii h k");
    /* A normal form containing a separator stays one term. */
    check_terms(a, "½ ¾", "1⁄2 3⁄4");
    /* Precomposed and decomposed forms give the same term. */
    check_terms(a, "café cafe\xCC\x81 CAFE\xCC\x81", "café café café");
    analyzer_free(a);
}

static void test_combining_marks(void **state) {
    Analyzer *a = mk(NULL, NULL);
    uint32_t iEnd;
    /* A mark with nothing before it is a separator. */
    Toks t = run_full(a, "\xCC\x81" "abc e\xCC\x81" "cole", 0, &iEnd);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.a[0].z, "abc");
    assert_int_equal(t.a[0].iStart, 2);
    assert_string_equal(t.a[1].z, "école");
    assert_int_equal(t.a[1].iStart, 6);
    assert_int_equal(t.a[1].iEnd, 13);
    toks_free(&t);
    /* Marks stay in the word, in canonical order, composed where they can
    ** be (a + U+0338 + U+0301 → á + U+0338); after a digit too. */
    check_terms(a, "a\xCC\xB8\xCC\x81 1\xE2\x83\xA3", "\xC3\xA1\xCC\xB8 1\xE2\x83\xA3");
    /* Devanagari vowel signs (Mc/Mn) belong to their word. */
    check_terms(a, "हिन्दी भाषा", "हिन्दी भाषा");
    analyzer_free(a);
}

static void test_cjk(void **state) {
    Analyzer *a = mk(NULL, NULL);
    uint32_t iEnd;
    Toks t = run_full(a, "漢字abc日本語 한국어", 0, &iEnd);
    static const struct {
        const char *z;
        uint32_t iStart, iEnd;
    } want[] = {{"漢", 0, 3},   {"字", 3, 6},   {"abc", 6, 9},  {"日", 9, 12},
                {"本", 12, 15}, {"語", 15, 18}, {"한", 19, 22}, {"국", 22, 25}, {"어", 25, 28}};
    assert_int_equal(t.n, (int)LP_ARRAY_SIZE(want));
    for (int i = 0; i < t.n; i++) {
        assert_string_equal(t.a[i].z, want[i].z);
        assert_int_equal(t.a[i].iPos, i);
        assert_int_equal(t.a[i].iStart, want[i].iStart);
        assert_int_equal(t.a[i].iEnd, want[i].iEnd);
    }
    assert_int_equal(iEnd, 9);
    toks_free(&t);
    check_terms(a, "ひらがなカタカナ", "ひ ら が な カ タ カ ナ");
    /* Half-width kana fold to full width; the half-width voiced mark joins
    ** its kana, as does a combining one. */
    check_terms(a, "ｶﾞｷﾞ か\xE3\x82\x99", "ガ ギ が");
    /* Compatibility ideographs and an extension B ideograph. */
    check_terms(a, "\xEF\xA4\x80\xF0\xA0\x80\x80x", "\xE8\xB1\x88 \xF0\xA0\x80\x80 x");
    /* CJK punctuation separates. */
    check_terms(a, "東京、大阪。", "東 京 大 阪");
    analyzer_free(a);
}

/* For every token, the original bytes z[iStart..iEnd) analysed alone give
** exactly that token: offsets cover the whole word and nothing else. */
static void test_offsets_original(void **state) {
    Analyzer *a = mk(NULL, NULL);
    const char *z = "  Ｆｕｌｌ-width ﬁne, STRASSE; 漢字abc e\xCC\x81t\xC3\xA9 ΣΟΦΟΣ x²y (½) ｶﾞ 😀end";
    uint32_t iEnd;
    Toks t = run_full(a, z, 0, &iEnd);
    assert_true(t.n > 10);
    uint32_t iPrevEnd = 0;
    for (int i = 0; i < t.n; i++) {
        assert_true(t.a[i].iStart >= iPrevEnd);
        assert_true(t.a[i].iStart < t.a[i].iEnd);
        assert_true(t.a[i].iEnd <= strlen(z));
        assert_int_equal(t.a[i].iPos, i);
        iPrevEnd = t.a[i].iEnd;
        Toks one = {0};
        LpError err;
        int rc = analyzer_run_unstemmed(a, z + t.a[i].iStart, t.a[i].iEnd - t.a[i].iStart, collect, &one, &err);
        assert_int_equal(rc, LP_OK);
        assert_int_equal(one.n, 1);
        assert_string_equal(one.a[0].z, t.a[i].z);
        assert_int_equal(one.a[0].iStart, 0);
        assert_int_equal(one.a[0].iEnd, t.a[i].iEnd - t.a[i].iStart);
        toks_free(&one);
    }
    toks_free(&t);
    analyzer_free(a);
}

/* ---------------------------------------------- stop words and stemming */

/* analyzer_collect keeps a run's tokens, each NUL-terminated in the list's
** buffer: stemmed and without stop words, or neither. */
static void test_collect(void **state) {
    (void)state;
    Analyzer *a = mk("stem_en", "en");
    const char *z = "The Runners ran";
    for (int bStem = 0; bStem < 2; bStem++) {
        TokenList l = {{0}, {0}};
        LpError err;
        assert_int_equal(analyzer_collect(a, z, strlen(z), bStem, &l, &err), LP_OK);
        static const char *const azWant[2][3] = {{"the", "runners", "ran"}, {"runner", "ran", NULL}};
        size_t nWant = bStem ? 2 : 3;
        assert_int_equal(l.a.n, nWant);
        for (size_t i = 0; i < nWant; i++) {
            assert_string_equal(l.a.a[i].z, azWant[bStem][i]);
            assert_int_equal(l.a.a[i].n, (int)strlen(azWant[bStem][i]));
            assert_int_equal(l.a.a[i].iPos, bStem ? i + 1 : i);
        }
        token_list_free(&l);
    }
    TokenList l = {{0}, {0}};
    LpError err;
    assert_int_equal(analyzer_collect(a, "ab\xff", 3, 1, &l, &err), LP_BADINPUT);
    assert_int_equal(err.pos, 2);
    token_list_free(&l);
    analyzer_free(a);
}

static void test_stopwords(void **state) {
    Analyzer *a = mk(NULL, "en");
    uint32_t iEnd;
    Toks t = run_full(a, "The quick brown fox AND the lazy dog cannot", 0, &iEnd);
    static const struct {
        const char *z;
        uint32_t iPos;
    } want[] = {{"quick", 1}, {"brown", 2}, {"fox", 3}, {"lazy", 6}, {"dog", 7}};
    assert_int_equal(t.n, (int)LP_ARRAY_SIZE(want));
    for (int i = 0; i < t.n; i++) {
        assert_string_equal(t.a[i].z, want[i].z);
        assert_int_equal(t.a[i].iPos, want[i].iPos);
    }
    assert_int_equal(iEnd, 9);
    toks_free(&t);
    /* Continuing numbering, as for the next value of a multi-valued field. */
    t = run_full(a, "of mice", 9, &iEnd);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.a[0].iPos, 10);
    assert_int_equal(iEnd, 11);
    toks_free(&t);
    /* Compared after folding (full-width "THE" is "the"); near misses stay;
    ** contractions are split before the list is consulted. */
    check_terms(a, "ＴＨＥ thee them their theirs theirselves don't", "thee theirselves don t");
    /* All stop words: nothing emitted, positions still counted. */
    t = run_full(a, "i me my myself we our yourselves very", 0, &iEnd);
    assert_int_equal(t.n, 0);
    assert_int_equal(iEnd, 8);
    toks_free(&t);
    analyzer_free(a);
}

/* Snowball's lists of other languages, several at once, and their words
** normalised as the text is: with remove_diacritics a list's "für" drops
** the text's "FÜR" and "fur"; without it, only the first. Every word of
** every list is a stop word of an analyzer that loads them all. */
static void test_stopwords_languages(void **state) {
    (void)state;
    Analyzer *a = mk(NULL, "DE, en");
    check_terms(a, "Für die Häuser und the Bücher", "häuser bücher");
    check_terms(a, "FÜR fur über", "fur");
    analyzer_free(a);
    AnalyzerConfig cfg = {"stem_de", "de", 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    LpError err;
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    check_terms(a, "FÜR fur Über Häuser", "haus");
    analyzer_free(a);
    a = mk(NULL, "ru");
    check_terms(a, "Он был в ДОМЕ", "доме");
    analyzer_free(a);
    a = mk(NULL, "fr es it pt nl sv no da fi hu tr ne");
    check_terms(a, "nous avons été heureux", "heureux");
    check_terms(a, "zij hebben het gedaan", "gedaan");
    analyzer_free(a);
    /* each list whole, folded or not: every word it holds is dropped,
    ** written as in the list or in upper case */
    static const struct {
        const char *zLang;
        const char *const *az;
        size_t n;
    } aList[] = {
#define L(code) {#code, azStop_##code, LP_ARRAY_SIZE(azStop_##code)}
        L(da), L(de), L(es), L(fi), L(fr), L(hu), L(it), L(ne), L(nl), L(no), L(pt), L(ru), L(sv), L(tr),
#undef L
    };
    size_t nWord = 0;
    for (int strip = 0; strip < 2; strip++) {
        for (size_t i = 0; i < LP_ARRAY_SIZE(aList); i++) {
            AnalyzerConfig c = {NULL, aList[i].zLang, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, strip, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
            assert_int_equal(analyzer_new(&c, &a, &err), LP_OK);
            for (size_t k = 0; k < aList[i].n; k++) {
                const char *z = aList[i].az[k];
                char *zUp = NULL;
                utf8proc_map((const utf8proc_uint8_t *)z, (utf8proc_ssize_t)strlen(z), (utf8proc_uint8_t **)&zUp,
                             UTF8PROC_STABLE | UTF8PROC_COMPOSE);
                assert_non_null(zUp);
                for (char *p = zUp; *p; p++) *p = (char)((unsigned char)*p < 0x80 ? toupper((unsigned char)*p) : *p);
                Toks t = {0};
                assert_int_equal(analyzer_run_unstemmed(a, z, strlen(z), collect, &t, &err), LP_OK);
                int nWords = t.n;
                toks_free(&t);
                uint32_t iEnd;
                t = run_full(a, z, 0, &iEnd);
                if (t.n != 0) fail_msg("%s%s: '%s' is not dropped", aList[i].zLang, strip ? " (folded)" : "", z);
                toks_free(&t);
                t = run_full(a, zUp, 0, &iEnd);
                if (t.n != 0) fail_msg("%s: '%s' is not dropped", aList[i].zLang, zUp);
                toks_free(&t);
                assert_int_equal(nWords, 1);
                free(zUp);
                nWord++;
            }
            analyzer_free(a);
        }
    }
    assert_int_equal(nWord, 2 * 2597); /* the lists of stoplists.h */
}

/* Several stemmers: a word goes through them in order until one changes
** it, so the order decides where both would ("gardens": English "garden",
** German "gard"); stem_enru is stem_en, stem_ru. min_stemming_len leaves
** shorter words as they are. */
static void test_stemming_several(void **state) {
    (void)state;
    Analyzer *a = mk("stem_en, stem_de", NULL);
    assert_true(analyzer_is_stemmed(a));
    check_terms(a, "gardens kindern running", "garden kind run");
    check_terms(a, "gardens kindern running", "garden kind run"); /* through the memos */
    analyzer_free(a);
    a = mk("STEM_DE,stem_en", NULL);
    check_terms(a, "gardens kindern running", "gard kind run");
    analyzer_free(a);
    a = mk("stem_enru", NULL);
    check_terms(a, "running книги", "run книг");
    analyzer_free(a);
    a = mk("stem_ru stem_en stem_ru", NULL); /* spaces, and a repeat taken once */
    check_terms(a, "running книги", "run книг");
    analyzer_free(a);
    /* with the English dictionary second, and exact forms */
    AnalyzerConfig cfg = {"stem_ru, stem_en", NULL, 0, 1, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    LpError err;
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    check_terms(a, "generously книги", "=generously generous =книги книг");
    analyzer_free(a);
    AnalyzerConfig ml = {"stem_en", NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 5, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    assert_int_equal(analyzer_new(&ml, &a, &err), LP_OK);
    check_terms(a, "runs running cats kittens", "runs run cats kitten");
    Toks t = {0};
    assert_int_equal(analyzer_run_query(a, "runs running", 12, 0, collect, &t, &err), LP_OK);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.a[0].z, "runs");
    assert_string_equal(t.a[1].z, "run");
    toks_free(&t);
    analyzer_free(a);
    ml.minStemmingLen = 65;
    assert_int_equal(analyzer_new(&ml, &a, &err), LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "min_stemming_len 65 is out of range"));
}

static void test_stemming(void **state) {
    Analyzer *a = mk("stem_en", NULL);
    assert_true(analyzer_is_stemmed(a));
    check_terms(a, "running libraries generously Connected", "run librari generous connect");
    /* Through the per-thread memo: the second sighting gives the same stem. */
    check_terms(a, "running running RUNNING", "run run run");
    analyzer_free(a);

    /* Stop words are tested before stemming: "having" is a stop word; its
    ** stem "have" is never looked up. "doings" is not one (stem "do"). */
    a = mk("stem_en", "en");
    check_terms(a, "having doings the runners", "do runner");
    analyzer_free(a);

    a = mk("stem_porter", NULL);
    check_terms(a, "generously libraries", "gener librari");
    analyzer_free(a);
    a = mk("STEM_DE", NULL);
    check_terms(a, "Häuser Bücher", "haus buch");
    analyzer_free(a);
    a = mk("stem_fr", NULL);
    check_terms(a, "continuation chevaux", "continu cheval");
    analyzer_free(a);
    a = mk("stem_ru", NULL);
    check_terms(a, "КНИГИ бегущий", "книг бегущ");
    analyzer_free(a);
    a = mk("stem_el", NULL);
    check_terms(a, "ΑΝΘΡΩΠΟΙ", "ανθρωπ");
    analyzer_free(a);

    /* Every language offered can be created and run. */
    static const char *azLang[] = {"ar", "ca", "da", "de", "el", "en", "es", "eu", "fi", "fr",
                                   "ga", "hi", "hu", "hy", "id", "it", "lt", "ne", "nl", "no",
                                   "porter", "pt", "ro", "ru", "sr", "sv", "ta", "tr", "yi"};
    for (size_t i = 0; i < LP_ARRAY_SIZE(azLang); i++) {
        char zMorph[32];
        snprintf(zMorph, sizeof(zMorph), "stem_%s", azLang[i]);
        a = mk(zMorph, NULL);
        char *z = terms_of(a, "words 漢字 ΣΟΦΟΣ книги");
        assert_true(strlen(z) > 0);
        free(z);
        analyzer_free(a);
    }
    a = mk("none", "none");
    assert_false(analyzer_is_stemmed(a));
    check_terms(a, "running the", "running the");
    analyzer_free(a);
}

static void test_unstemmed(void **state) {
    Analyzer *a = mk("stem_en", "en");
    Toks t = {0};
    LpError err;
    const char *z = "The RUNNING libraries";
    assert_int_equal(analyzer_run_unstemmed(a, z, strlen(z), collect, &t, &err), LP_OK);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.a[0].z, "the");
    assert_string_equal(t.a[1].z, "running");
    assert_string_equal(t.a[2].z, "libraries");
    for (int i = 0; i < 3; i++) assert_int_equal(t.a[i].iPos, i);
    assert_int_equal(t.a[1].iStart, 4);
    toks_free(&t);
    analyzer_free(a);
}

/* ------------------------------------------------------ errors and limits */

static void test_invalid_utf8(void **state) {
    static const struct {
        const char *z;
        size_t n;
        int64_t iBad;
    } aCase[] = {
        {"\xFF" "abc", 4, 0},                 /* never valid */
        {"hello w\x80rld", 11, 7},            /* lone continuation byte */
        {"caf\xC3", 4, 3},                    /* truncated at the end */
        {"ab \xC0\xAF", 5, 3},                /* overlong '/' */
        {"x\xED\xA0\x80y", 5, 1},             /* UTF-16 surrogate */
        {"ok \xF4\x90\x80\x80", 7, 3},        /* above U+10FFFF */
        {"漢字\xE6\xBC", 8, 6},               /* truncated ideograph */
        {"valid words, then 17 \xC3\x28", 23, 21},
    };
    Analyzer *a = mk("stem_en", "en");
    for (size_t i = 0; i < LP_ARRAY_SIZE(aCase); i++) {
        for (int bUnstemmed = 0; bUnstemmed < 2; bUnstemmed++) {
            Toks t = {0};
            LpError err;
            lp_err_clear(&err);
            uint32_t iEnd = 12345;
            int rc = bUnstemmed ? analyzer_run_unstemmed(a, aCase[i].z, aCase[i].n, collect, &t, &err)
                                : analyzer_run(a, aCase[i].z, aCase[i].n, 0, collect, &t, &iEnd, &err);
            assert_int_equal(rc, LP_BADINPUT);
            assert_int_equal(err.code, LP_BADINPUT);
            assert_int_equal(err.pos, aCase[i].iBad);
            char zWant[64];
            snprintf(zWant, sizeof(zWant), "invalid UTF-8 at byte %lld", (long long)aCase[i].iBad);
            assert_string_equal(err.zMsg, zWant);
            assert_int_equal(t.n, 0);
            assert_int_equal(iEnd, 12345);
            toks_free(&t);
        }
    }
    analyzer_free(a);
}

static void test_truncation(void **state) {
    Analyzer *a = mk(NULL, NULL);
    char z[1024];
    /* ASCII: 100 letters → the first 64, lower-cased; offsets span all 100. */
    for (int i = 0; i < 100; i++) z[i] = (char)('A' + i % 26);
    z[100] = 0;
    Toks t = run_full(a, z, 0, NULL);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.a[0].n, 64);
    for (int i = 0; i < 64; i++) assert_int_equal(t.a[0].z[i], 'a' + i % 26);
    assert_int_equal(t.a[0].iEnd, 100);
    toks_free(&t);

    /* Characters of 2, 3 and 4 bytes after a prefix, so that a cut at 64
    ** bytes would fall inside a character (or exactly after one). */
    static const struct {
        const char *zPrefix, *zChar;
        int nReps, nWant;
    } aCase[] = {
        {"x", "é", 40, 63},          /* 1 + 31*2 = 63 (the 32nd would end at 65) */
        {"x", "क", 30, 64},          /* Devanagari, 3 bytes: 1 + 21*3, exact fit */
        {"xy", "क", 30, 62},         /* 2 + 20*3 = 62 (the 21st would end at 65) */
        {"x", "\xF0\x90\x8C\xB0", 20, 61}, /* Gothic, 4 bytes: 1 + 15*4 */
        {"x", "ß", 40, 64},          /* folds to "ss" */
        {"x", "ﬃ", 30, 64},          /* 3 bytes fold to "ffi" */
    };
    for (size_t c = 0; c < LP_ARRAY_SIZE(aCase); c++) {
        size_t n = strlen(aCase[c].zPrefix);
        memcpy(z, aCase[c].zPrefix, n);
        for (int r = 0; r < aCase[c].nReps; r++) {
            memcpy(z + n, aCase[c].zChar, strlen(aCase[c].zChar));
            n += strlen(aCase[c].zChar);
        }
        z[n] = 0;
        t = run_full(a, z, 0, NULL);
        assert_int_equal(t.n, 1);
        assert_int_equal(t.a[0].n, aCase[c].nWant);
        assert_int_equal(utf8_check(t.a[0].z, (size_t)t.a[0].n), -1);
        assert_int_equal(t.a[0].iEnd, n);
        int nRef;
        char *zRef = ref_fold(z, n, &nRef);
        assert_int_equal(nRef, aCase[c].nWant);
        assert_memory_equal(t.a[0].z, zRef, (size_t)nRef);
        free(zRef);
        toks_free(&t);
    }
    analyzer_free(a);

    /* A long word through the stemmer stays within the limit. */
    a = mk("stem_en", NULL);
    memset(z, 'e', 300);
    memcpy(z + 290, "ationally", 10);
    t = run_full(a, z, 0, NULL);
    assert_int_equal(t.n, 1);
    assert_true(t.a[0].n <= ANALYZER_MAX_TERM);
    toks_free(&t);
    analyzer_free(a);
}

static int is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A megabyte-size text of random ASCII words against a naive splitter;
** in its second half words are long (many over 16 bytes, some over 64). */
static void test_long_input(void **state) {
    Analyzer *a = mk(NULL, NULL);
    const size_t n = 2u << 20;
    char *z = malloc(n + 1);
    assert_non_null(z);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    static const char sep[] = " \t\n.,;:'-_()\"";
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        unsigned r = (unsigned)(x >> 32) % 100;
        if (i >= n / 2 && r >= 85 && (x & 0xF00) != 0) r %= 85; /* one separator in 100 */
        z[i] = r < 70 ? (char)('a' + r % 26) : r < 80 ? (char)('A' + r % 26) : r < 85 ? (char)('0' + r % 10)
                                                                                : sep[r % (sizeof(sep) - 1)];
    }
    z[n] = 0;
    uint32_t iEnd;
    Toks t = run_full(a, z, 0, &iEnd);
    int k = 0;
    for (size_t i = 0; i < n;) {
        if (!is_alnum(z[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && is_alnum(z[j])) j++;
        assert_true(k < t.n);
        assert_int_equal(t.a[k].iStart, i);
        assert_int_equal(t.a[k].iEnd, j);
        assert_int_equal(t.a[k].iPos, k);
        size_t m = j - i > ANALYZER_MAX_TERM ? ANALYZER_MAX_TERM : j - i;
        assert_int_equal(t.a[k].n, (int)m);
        for (size_t c = 0; c < m; c++) {
            char ch = z[i + c];
            if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
            assert_int_equal(t.a[k].z[c], ch);
        }
        k++;
        i = j;
    }
    assert_int_equal(k, t.n);
    assert_int_equal(iEnd, (uint32_t)k);
    int nLong = 0, nCut = 0;
    for (int i = 0; i < t.n; i++) {
        nLong += t.a[i].iEnd - t.a[i].iStart > 16;
        nCut += t.a[i].iEnd - t.a[i].iStart > ANALYZER_MAX_TERM;
    }
    assert_true(nLong > 1000 && nCut > 100);
    toks_free(&t);
    free(z);
    analyzer_free(a);
}

static void test_empty(void **state) {
    Analyzer *a = mk("stem_en", "en");
    Toks t = {0};
    LpError err;
    uint32_t iEnd = 0;
    assert_int_equal(analyzer_run(a, "", 0, 7, collect, &t, &iEnd, &err), LP_OK);
    assert_int_equal(t.n, 0);
    assert_int_equal(iEnd, 7);
    assert_int_equal(analyzer_run(a, NULL, 0, 0, collect, &t, NULL, &err), LP_OK);
    assert_int_equal(analyzer_run_unstemmed(a, "", 0, collect, &t, &err), LP_OK);
    assert_int_equal(analyzer_run(a, " -- ", 4, 3, collect, &t, &iEnd, &err), LP_OK);
    assert_int_equal(t.n, 0);
    assert_int_equal(iEnd, 3);
    analyzer_free(a);
}

static void test_callback_stop(void **state) {
    Analyzer *a = mk("stem_en", NULL);
    Toks t = {0};
    t.nStopAfter = 2;
    LpError err;
    const char *z = "one two three four";
    uint32_t iEnd = 77;
    assert_int_equal(analyzer_run(a, z, strlen(z), 0, collect, &t, &iEnd, &err), 99);
    assert_int_equal(t.n, 2);
    assert_int_equal(iEnd, 77);
    toks_free(&t);
    analyzer_free(a);
}

static void test_limits(void **state) {
    Analyzer *a = mk(NULL, NULL);
    Toks t = {0};
    LpError err;
    /* Checked before the text is read: the size alone is refused. */
    assert_int_equal(analyzer_run(a, "x", (size_t)UINT32_MAX + 1, 0, collect, &t, NULL, &err), LP_LIMIT);
    /* Positions must fit in uint32_t, end position included. */
    uint32_t iEnd;
    assert_int_equal(analyzer_run(a, "a b", 3, UINT32_MAX - 2, collect, &t, &iEnd, &err), LP_OK);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.a[1].iPos, UINT32_MAX - 1);
    assert_int_equal(iEnd, UINT32_MAX);
    toks_free(&t);
    assert_int_equal(analyzer_run(a, "a b c", 5, UINT32_MAX - 2, collect, &t, &iEnd, &err), LP_LIMIT);
    assert_int_equal(err.code, LP_LIMIT);
    assert_int_equal(t.n, 0);
    analyzer_free(a);
}

/* morphology='soundex', alone and in a chain, against the codes searchd
** 2.2.11 gives the same words (CALL KEYWORDS): first letter, digits
** without repeats, 0s up to four but not past the word, no cut; words
** with other characters as they are; in a chain the first processor that
** changes a word wins. */
static void test_soundex(void **state) {
    (void)state;
    static const char *const az[][3] = {
        {"soundex", "Robert Rupert Rubin Ashcraft Tymczak Pfister Honeyman hello 123abc x",
         "r163 r163 r150 a2613 t520 p1236 h500 h400 123abc x"},
        {"stem_en, soundex", "running run cats cat a ab abc Robert", "run r50 cat c30 a a1 a12 r163"},
        {"soundex, stem_en", "running run cats cat a ab abc Robert", "r520 r50 c320 c30 a a1 a12 r163"},
    };
    for (size_t i = 0; i < LP_ARRAY_SIZE(az); i++) {
        Analyzer *a = mk(az[i][0], NULL);
        assert_true(analyzer_is_stemmed(a));
        char *z = terms_of(a, az[i][1]);
        if (strcmp(z, az[i][2]) != 0) fail_msg("%s: \"%s\"\n got  \"%s\"\n want \"%s\"", az[i][0], az[i][1], z, az[i][2]);
        free(z);
        analyzer_free(a);
    }
    /* with exact forms, and stop words compared after it (stopwords_unstemmed='0') */
    AnalyzerConfig cfg = {"soundex", NULL, 0, 1, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = NULL;
    LpError err;
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    char *z = terms_of(a, "Robert");
    assert_string_equal(z, "=robert r163");
    free(z);
    analyzer_free(a);
    cfg.bExactWords = 0;
    cfg.zStopwordsList = "rupert";
    cfg.bStopwordsStemmed = 1;
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    z = terms_of(a, "Robert Rubin");
    assert_string_equal(z, "r150"); /* robert sounds as the stop word rupert */
    free(z);
    analyzer_free(a);
}

/* morphology='metaphone': the codes searchd 2.2.11 gives the same words
** (CALL KEYWORDS on a metaphone index; bench-parity's table xm and a run
** over the 35,520 words of four collections agree), the special cases
** the algorithm names, words it leaves as they are; in a chain. */
static void test_metaphone(void **state) {
    (void)state;
    static const char *const az[][2] = {
        {"smith smyth schmidt knight gnome wright psychology xavier", "SM0 SM0 XMT NT NM RT SXLJ SF"},
        {"caesar chianti michael chorus chemistry architect orchestra bacchus", "SSR KNT MKL KRS KMSTR ARKTKT ARKSTR PKS"},
        {"accident bellocchio focaccia czerny edge edgar ghislane laugh", "AKSTNT PLX FKX SRN AJ ATKR JLN LF"},
        {"hugh tough tagliaro gerber biaggi jose san jankelowicz", "H TF TKLR KRPR PJ HS SN JNKLTS"},
        {"cabrillo gallegos dumb thumb campbell rogier island sugar", "KPRL KLKS TM 0M KMPL RJ ALNT XKR"},
        {"school schermerhorn schenker resnais breaux zhao filipowicz arnow", "SKL XRMRRN XNKR RSN PR J FLPTS ARN"},
        {"wasserman thomas thumb mcclellan mchugh 123abc x h", "ASRMN TMS 0M MKLLN MK PK S h"},
        {"hh the a0 danger", "hh 0 A TNJR"},
    };
    Analyzer *a = mk("metaphone", NULL);
    assert_true(analyzer_is_stemmed(a));
    for (size_t i = 0; i < LP_ARRAY_SIZE(az); i++) {
        char *z = terms_of(a, az[i][0]);
        if (strcmp(z, az[i][1]) != 0) fail_msg("\"%s\"\n got  \"%s\"\n want \"%s\"", az[i][0], z, az[i][1]);
        free(z);
    }
    analyzer_free(a);
    /* the first processor that changes a word wins */
    a = mk("stem_en, metaphone", NULL);
    char *z = terms_of(a, "running run h");
    assert_string_equal(z, "run RN h");
    free(z);
    analyzer_free(a);
    /* Ç and Ñ are read (the searchd codes, with a charset_table that keeps
    ** them); any other letter beyond ASCII leaves the word as it is */
    char out[ANALYZER_MAX_TERM];
    static const char *const azLatin[][2] = {
        {"fa\xc3\xa7" "ade", "FST"}, {"ni\xc3\xb1o", "NN"}, {"gar\xc3\xa7on", "KRSN"}, {"\xc3\xb1" "andu", "NNT"},
        {"\xc3\xa7" "ava", "SF"},    {"x\xc3\xa7", "SS"},
    };
    for (size_t i = 0; i < LP_ARRAY_SIZE(azLatin); i++) {
        int n = metaphone_code(azLatin[i][0], (int)strlen(azLatin[i][0]), out, (int)sizeof(out));
        assert_int_equal(n, (int)strlen(azLatin[i][1]));
        assert_memory_equal(out, azLatin[i][1], (size_t)n);
    }
    assert_int_equal(metaphone_code("caf\xc3\xa9", 5, out, (int)sizeof(out)), 0);
    assert_int_equal(metaphone_code("123", 3, out, (int)sizeof(out)), 0);
    /* a code longer than the room is cut there */
    assert_int_equal(metaphone_code("xxxxxxxx", 8, out, 4), 4);
    assert_memory_equal(out, "SKSK", 4);
}

/* regexp_filter rules applied to z: the result, or "ERR:<message>". */
static const char *apply_rules(const char *zRules, const char *z) {
    static char zOut[512];
    RegexpFilter *f = NULL;
    LpError err;
    lp_err_clear(&err);
    int rc = regexp_filter_new(zRules, &f, &err);
    if (rc == LP_OK) {
        StrBuf sb = {0};
        const char *zr;
        size_t nr;
        rc = regexp_filter_apply(f, z, strlen(z), &sb, &zr, &nr, &err);
        if (rc == LP_OK) snprintf(zOut, sizeof(zOut), "%.*s", (int)nr, zr);
        strbuf_free(&sb);
    }
    regexp_filter_free(f);
    if (rc != LP_OK) snprintf(zOut, sizeof(zOut), "ERR:%.400s", err.zMsg);
    return zOut;
}

/* regexp_filter_apply_map: the same text as regexp_filter_apply, and
** where each byte came from, written "lo-hi" per byte; "" when no rule
** matched (no map). */
static const char *map_rules(const char *zRules, const char *z) {
    static char zOut[512];
    RegexpFilter *f = NULL;
    LpError err;
    if (regexp_filter_new(zRules, &f, &err) != LP_OK) fail_msg("rules \"%s\": %s", zRules, err.zMsg);
    StrBuf sb = {0}, ref = {0};
    const char *zr, *zRef;
    size_t nr, nRef;
    uint32_t *aMap = (uint32_t *)1;
    assert_int_equal(regexp_filter_apply_map(f, z, strlen(z), &sb, &zr, &nr, &aMap, &err), LP_OK);
    assert_int_equal(regexp_filter_apply(f, z, strlen(z), &ref, &zRef, &nRef, &err), LP_OK);
    assert_int_equal(nr, nRef);
    assert_memory_equal(zr, zRef, nr);
    zOut[0] = 0;
    size_t o = 0;
    for (size_t i = 0; aMap && i < nr && o < sizeof(zOut) - 24; i++) {
        o += (size_t)snprintf(zOut + o, sizeof(zOut) - o, "%s%u-%u", i ? " " : "", aMap[2 * i], aMap[2 * i + 1]);
    }
    if (!aMap) assert_ptr_equal(zr, z);
    free(aMap);
    strbuf_free(&sb);
    strbuf_free(&ref);
    regexp_filter_free(f);
    return zOut;
}

/* Where the rules' bytes came from: copied bytes from themselves, a
** replacement's (text or group) from the whole match, through every rule. */
static void test_regexp_filter_map(void **state) {
    (void)state;
    static const char *const az[][3] = {
        {"zzz => y", "abc", ""},
        {"b => XY", "abc", "0-1 1-2 1-2 2-3"},
        {"(\\d+) ?GB => \\1gb", "1 GB!", "0-4 0-4 0-4 4-5"},
        {"x* => -", "axxb", "0-1 1-3 3-4"},
        /* deleted text: the bytes around it keep their own sources */
        {"\\? => ", "a?b", "0-1 2-3"},
        /* the second rule reads the first's output: its sources go through */
        {"ab => X\nX => yz", "cab", "0-1 1-3 1-3"},
        {"a => b\nb => c", "ab", "0-1 1-2"},
        {"(\\w)(\\w) => \\2\\1", "ab cd", "0-2 0-2 2-3 3-5 3-5"},
        /* UTF-8: every byte of a character */
        {"\xc3\xa9 => e", "caf\xc3\xa9!", "0-1 1-2 2-3 3-5 5-6"},
    };
    for (size_t i = 0; i < LP_ARRAY_SIZE(az); i++) {
        const char *zGot = map_rules(az[i][0], az[i][1]);
        if (strcmp(zGot, az[i][2]) != 0) fail_msg("rules \"%s\" on \"%s\":\n got  \"%s\"\n want \"%s\"", az[i][0], az[i][1], zGot, az[i][2]);
    }
}

/* Term patterns match a whole term, search patterns anywhere; one text
** cached both ways is two patterns. */
static void test_regexp_term_and_search(void **state) {
    (void)state;
    static const char zT[] = "t.?e";
    assert_int_equal(regexp_term_match(zT, 4, (const unsigned char *)"tie", 3), 1);
    assert_int_equal(regexp_term_match(zT, 4, (const unsigned char *)"there", 5), 0);
    assert_int_equal(regexp_search_match(zT, 4, "there", 5), 1);
    assert_int_equal(regexp_search_match(zT, 4, "abc", 3), 0);
    assert_int_equal(regexp_term_match(zT, 4, (const unsigned char *)"there", 5), 0); /* still anchored */
    assert_int_equal(regexp_search_match("^ab$", 4, "ab", 2), 1);
    assert_int_equal(regexp_search_match("^ab$", 4, "xab", 3), 0);
    LpError err;
    lp_err_clear(&err);
    assert_int_equal(regexp_search_check("a(", 2, &err), LP_BADINPUT);
    assert_int_equal(err.pos, 2);
    assert_int_equal(regexp_search_check("(?i)x+", 6, &err), LP_OK);
    assert_int_equal(regexp_search_match("(?i)x+", 6, "aXb", 3), 1);
    assert_int_equal(regexp_search_match("a(", 2, "a(", 2), 0); /* does not compile: no match */
}

/* regexp_filter: rules in order, every match, groups, empty matches,
** UTF-8, blank lines; the errors; the matching bound; and an analyzer
** reading documents and queries through its rules. */
static void test_regexp_filter(void **state) {
    (void)state;
    static const char *const az[][3] = {
        /* Manticore's examples */
        {"(BLUE|RED) => COLOR", "RED TUBE and BLUE PLANK", "COLOR TUBE and COLOR PLANK"},
        {"\\**(\\d+)\" => \\1 inch", "RED TUBE 5\" LONG, PLANK 2\" x 4\"", "RED TUBE 5 inch LONG, PLANK 2 inch x 4 inch"},
        /* in order: the second rule reads the first's output */
        {"a => b\nb => c", "ab", "cc"},
        {"b => c\na => b", "ab", "bc"},
        /* groups, \0, an unset group, a backslash; case and classes */
        {"(\\w+)@(\\w+) => \\2 at \\1 (\\0)\\\\", "me@host", "host at me (me@host)\\"},
        {"(a)(x)? => [\\2\\1]", "aa", "[a][a]"},
        {"(?i)colou?r => color", "Colour COLOR", "color color"},
        /* an empty match replaces nothing */
        {"x* => -", "axxb", "a-b"},
        {"^ => >", "text", "text"},
        /* UTF-8 in patterns, replacements and text */
        {"caf\xc3\xa9 => coffee\n\xc3\xa9 => e", "caf\xc3\xa9 \xc3\xa9t\xc3\xa9", "coffee ete"},
        {"(.) => <\\1>", "\xd0\xb4\xc3\xa9", "<\xd0\xb4><\xc3\xa9>"},
        /* blank lines and spaces around the arrow */
        {"\n  a   =>   b  \n\n", "a", "b"},
        /* no match: the text itself */
        {"zzz => y", "abc", "abc"},
        /* errors, naming the rule */
        {"a => b\nno arrow", "x", "ERR:regexp_filter rule 2 'no arrow': expected 'pattern => replacement'"},
        {"(a => b", "x", "ERR:regexp_filter rule 1: the pattern '(a' at offset 2: missing closing parenthesis"},
        {"(a) => \\2", "x", "ERR:regexp_filter rule 1: the replacement names group \\2, and the pattern has 1"},
        {" => b", "x", "ERR:regexp_filter rule 1: the pattern is empty"},
        {"(a+)+$ => x", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", "ERR:regexp_filter rule 1 stopped on this text: match limit exceeded"},
    };
    for (size_t i = 0; i < LP_ARRAY_SIZE(az); i++) {
        const char *zGot = apply_rules(az[i][0], az[i][1]);
        if (strcmp(zGot, az[i][2]) != 0) fail_msg("rules \"%s\" on \"%s\":\n got  \"%s\"\n want \"%s\"", az[i][0], az[i][1], zGot, az[i][2]);
    }
    /* no rules: no filter */
    RegexpFilter *f = (RegexpFilter *)1;
    LpError err;
    assert_int_equal(regexp_filter_new("\n \n", &f, &err), LP_OK);
    assert_null(f);
    assert_int_equal(regexp_filter_new(NULL, &f, &err), LP_OK);
    assert_null(f);
    /* invalid UTF-8 in the text is refused, with its offset */
    assert_int_equal(regexp_filter_new("a => b", &f, &err), LP_OK);
    StrBuf sb = {0};
    const char *zr;
    size_t nr;
    assert_int_equal(regexp_filter_apply(f, "ab\xff", 3, &sb, &zr, &nr, &err), LP_BADINPUT);
    assert_int_equal(err.pos, 2);
    regexp_filter_free(f);
    strbuf_free(&sb);
    /* an analyzer reads documents (after html_strip) and queries through them */
    AnalyzerConfig cfg = {"stem_en", NULL, 0, 0, 0, 1, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, "(BLUE|RED) => COLOR\n<b> => x", NULL, 0};
    Analyzer *a = NULL;
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    assert_true(analyzer_has_regexp(a));
    const char *zDoc;
    size_t nDoc;
    assert_int_equal(analyzer_doc_text(a, "<b>RED</b> tubes", 16, &sb, &zDoc, &nDoc, &err), LP_OK);
    assert_int_equal(nDoc, 11);
    assert_memory_equal(zDoc, "COLOR tubes", 11); /* the tags went first: no "<b>" left to rewrite */
    assert_int_equal(analyzer_query_text(a, "BLUE | RED", 10, &sb, &zDoc, &nDoc, &err), LP_OK);
    assert_int_equal(nDoc, 13);
    assert_memory_equal(zDoc, "COLOR | COLOR", 13);
    strbuf_free(&sb);
    analyzer_free(a);
    /* not with index_zones */
    cfg.zIndexZones = "h1";
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_BADINPUT);
    assert_string_equal(err.zMsg, "regexp_filter cannot be used with index_zones");
}

static void test_config(void **state) {
    static const struct {
        const char *zMorph, *zStop;
        int minPrefix;
        const char *zNeedle; /* in the message */
    } aBad[] = {
        {"stem_xx", NULL, 0, "unknown morphology 'stem_xx' (supported: none, stem_ar"},
        {"stem_cz", NULL, 0, "stem_en"},
        {"lemmatize_en", NULL, 0, "lemmatizers are not supported"},
        {"stem_en, stem_xx", NULL, 0, "morphology 'stem_en, stem_xx': unknown processor 'stem_xx'"},
        {"stem_en,stem_ru,stem_de,stem_fr,stem_es", NULL, 0, "at most 4 stemmers"},
        {"stem_en,stem_ru,stem_de,stem_fr,stem_zz", NULL, 0, "unknown processor 'stem_zz'"},
        {" , ", NULL, 0, "names no processor"},
        {"libstemmer_xx", NULL, 0, "no Snowball stemmer for 'libstemmer_xx'"},
        {"libstemmer_", NULL, 0, "no Snowball stemmer for 'libstemmer_'"},
        {"soundx", NULL, 0, "unknown morphology 'soundx'"},
        {"metafone", NULL, 0, "unknown morphology 'metafone' (supported: none, stem_ar"},
        {"stem_en, soundex, stem_ru, stem_de, stem_fr", NULL, 0, "at most 4 stemmers"},
        {NULL, "xx", 0, "unknown stop-word list 'xx' (supported: none, en, da, de, es"},
        {NULL, "en, de xx", 0, "unknown stop-word list 'xx'"},
        {NULL, " , ", 0, "names no list"},
        {NULL, "/etc/stopwords.txt", 0, "unknown stop-word list"},
        {NULL, NULL, 65, "min_prefix_len 65 is out of range 0..64"},
        {NULL, NULL, -1, "min_prefix_len -1"},
        {NULL, NULL, -65, "min_infix_len 65 is out of range 0..64"}, /* minPrefix < -64: infix */
    };
    for (size_t i = 0; i < LP_ARRAY_SIZE(aBad); i++) {
        /* minPrefix below -64 stands for min_infix_len -minPrefix */
        int bInfix = aBad[i].minPrefix < -64;
        AnalyzerConfig cfg = {aBad[i].zMorph, aBad[i].zStop, bInfix ? 0 : aBad[i].minPrefix, 0, 0, 0, NULL,
                              bInfix ? -aBad[i].minPrefix : 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
        Analyzer *a = (Analyzer *)&cfg; /* must be reset to NULL */
        LpError err;
        lp_err_clear(&err);
        assert_int_equal(analyzer_new(&cfg, &a, &err), LP_BADINPUT);
        assert_null(a);
        assert_int_equal(err.code, LP_BADINPUT);
        if (!strstr(err.zMsg, aBad[i].zNeedle)) fail_msg("message \"%s\" lacks \"%s\"", err.zMsg, aBad[i].zNeedle);
    }
    /* Manticore's libstemmer_<code or algorithm> is loupe's stem_<code>: the
    ** same Snowball stemmer */
    static const char *const azSame[][2] = {
        {"stem_de", "libstemmer_de"}, {"stem_de", "LIBSTEMMER_German"}, {"stem_fr, stem_en", "libstemmer_french, libstemmer_en"},
    };
    const char *zText = "H\xc3\xa4user laufen chevaux running";
    for (size_t i = 0; i < LP_ARRAY_SIZE(azSame); i++) {
        Analyzer *a1 = mk(azSame[i][0], NULL), *a2 = mk(azSame[i][1], NULL);
        char *z1 = terms_of(a1, zText), *z2 = terms_of(a2, zText);
        assert_string_equal(z1, z2);
        assert_string_not_equal(z1, "h\xc3\xa4user laufen chevaux running"); /* it stems */
        free(z1);
        free(z2);
        analyzer_free(a1);
        analyzer_free(a2);
    }
    AnalyzerConfig cfg = {"", "NONE", 64, 0, 0, 0, NULL, 64, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = NULL;
    LpError err;
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    assert_int_equal(analyzer_min_prefix_len(a), 64);
    assert_int_equal(analyzer_min_infix_len(a), 64);
    assert_false(analyzer_is_stemmed(a));
    analyzer_free(a);
    assert_int_equal(analyzer_new(NULL, &a, &err), LP_OK);
    assert_int_equal(analyzer_min_prefix_len(a), 0);
    analyzer_free(a);
    analyzer_free(NULL);
}

/* ----------------------------------------------------------- normalising */

/* Every word character, alone and after an ASCII letter, against utf8proc.
** Exercises the ASCII path, the two-byte table, the CJK identity ranges
** and the general path. */
static void normalise_exhaustive(int bStrip) {
    Analyzer *a = mk_strip(bStrip);
    int nWord = 0;
    for (uint32_t cp = 0x80; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        char z[8];
        size_t n = put_cp(z, cp);
        Toks t = {0};
        LpError err;
        assert_int_equal(analyzer_run_unstemmed(a, z, n, collect, &t, &err), LP_OK);
        utf8proc_category_t cat = utf8proc_category((utf8proc_int32_t)cp);
        int bWordChar = cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_NO &&
                        !(cat >= UTF8PROC_CATEGORY_MN && cat <= UTF8PROC_CATEGORY_ME);
        if (cp == 0xFF9E || cp == 0xFF9F) bWordChar = 0; /* half-width voiced marks attach like marks */
        if (!bWordChar) {
            if (t.n != 0) fail_msg("U+%04X (category %d) made a word", cp, (int)cat);
            toks_free(&t);
            continue;
        }
        nWord++;
        if (t.n != 1) fail_msg("U+%04X: %d words", cp, t.n);
        int nRef;
        char *zRef = ref_fold_ex(z, n, bStrip, &nRef);
        if (t.a[0].n != nRef || memcmp(t.a[0].z, zRef, (size_t)nRef) != 0) {
            fail_msg("U+%04X: got \"%s\", utf8proc says \"%.*s\"", cp, t.a[0].z, nRef, zRef);
        }
        free(zRef);
        toks_free(&t);

        /* After "Q": one word unless cp is a CJK-style single letter. */
        char z2[16] = "Q";
        memcpy(z2 + 1, z, n);
        assert_int_equal(analyzer_run_unstemmed(a, z2, n + 1, collect, &t, &err), LP_OK);
        if (t.n == 1) {
            zRef = ref_fold_ex(z2, n + 1, bStrip, &nRef);
            if (t.a[0].n != nRef || memcmp(t.a[0].z, zRef, (size_t)nRef) != 0) {
                fail_msg("Q U+%04X: got \"%s\", utf8proc says \"%.*s\"", cp, t.a[0].z, nRef, zRef);
            }
            free(zRef);
        } else {
            assert_int_equal(t.n, 2);
            assert_string_equal(t.a[0].z, "q");
            assert_int_equal(t.a[1].iStart, 1);
        }
        toks_free(&t);
    }
    assert_true(nWord > 100000);
    analyzer_free(a);
}

static void test_normalise_exhaustive(void **state) {
    (void)state;
    normalise_exhaustive(0);
}

/* The same under remove_diacritics: its table (aFold2[1]) and its general
** path against the rule. */
static void test_normalise_exhaustive_strip(void **state) {
    (void)state;
    normalise_exhaustive(1);
}

/* Pairs of two-byte letters (the table path) against utf8proc: no pair
** composes, so folding them one by one is exact. A stride keeps it quick
** while every character appears on both sides of a pair. */
static void normalise_pairs(int bStrip) {
    Analyzer *a = mk_strip(bStrip);
    for (uint32_t c1 = 0xC0; c1 < 0x800; c1 += 1) {
        for (uint32_t c2 = 0xC0 + (c1 % 37); c2 < 0x800; c2 += 37) {
            char z[8];
            size_t n = put_cp(z, c1);
            n += put_cp(z + n, c2);
            Toks t = {0};
            LpError err;
            assert_int_equal(analyzer_run_unstemmed(a, z, n, collect, &t, &err), LP_OK);
            if (t.n != 1 || t.a[0].iStart != 0 || t.a[0].iEnd != n) { /* not a two-letter word */
                toks_free(&t);
                continue;
            }
            int nRef;
            char *zRef = ref_fold_ex(z, n, bStrip, &nRef);
            if (t.a[0].n != nRef || memcmp(t.a[0].z, zRef, (size_t)nRef) != 0) {
                fail_msg("U+%04X U+%04X: got \"%s\", utf8proc says \"%.*s\"", c1, c2, t.a[0].z, nRef, zRef);
            }
            free(zRef);
            toks_free(&t);
        }
    }
    analyzer_free(a);
}

static void test_normalise_pairs(void **state) {
    (void)state;
    normalise_pairs(0);
    normalise_pairs(1);
}

/* remove_diacritics by example: Latin and Greek marks go, whether the text
** has them composed or not, other scripts keep theirs; index and query
** sides agree. */
static void test_remove_diacritics(void **state) {
    (void)state;
    Analyzer *a = mk_strip(1);
    LpError err;
    check_terms(a, "Café NAÏVE crème brûlée", "cafe naive creme brulee");
    check_terms(a, "Cafe\xcc\x81 Re\xcc\x81sume\xcc\x81", "cafe resume");   /* combining acute */
    check_terms(a, "Ærøskøbing Łódź Đakovo Ħamrun", "æroskobing lodz dakovo hamrun");
    check_terms(a, "Straße ﬁancé", "strasse fiance");                            /* folds still apply */
    check_terms(a, "Tiếng Việt", "tieng viet");                                   /* stacked marks */
    check_terms(a, "ΆΓΙΟΣ Ἀθῆναι ὄνομα", "αγιοσ αθηναι ονομα");
    check_terms(a, "йогурт Ёж Її", "йогурт ёж її");                                /* Cyrillic keeps them */
    check_terms(a, "हिन्दी", "हिन्दी");                                              /* so does Devanagari */
    check_terms(a, "œuvre ıspanak", "œuvre ıspanak");                              /* no marks to drop */
    check_terms(a, "x\xcc\x81", "x");                                            /* any Latin base */
    /* joiners inside a word (soft hyphen, ZWJ, word joiner, ZWNBSP) join */
    check_terms(a, "Re\xc2\xadsu\xc2\xadme Wort\xe2\x81\xa0teil a\xef\xbb\xbf" "b \xc2\xadlead trail\xc2\xad",
                "resume wortteil ab lead trail");
    /* marks a dropped joiner kept apart end in canonical order (nukta,
    ** class 7, before virama, 9), as the text without the joiner has
    ** them: the term is its own normal form (fuzz_analyzer found it) */
    check_terms(a, "\xd2\x95\xe0\xa5\x8d\xe2\x80\x8d\xe0\xa4\xbc", "\xd2\x95\xe0\xa4\xbc\xe0\xa5\x8d");
    check_terms(a, "\xd2\x95\xe0\xa5\x8d\xe0\xa4\xbc", "\xd2\x95\xe0\xa4\xbc\xe0\xa5\x8d");
    check_terms(a, "\xe0\xa4\x95\xe0\xa5\x8d\xe2\x80\x8d\xe0\xa4\xb7", "\xe0\xa4\x95\xe0\xa5\x8d\xe0\xa4\xb7");
    Toks tj = {0};
    uint32_t iEndJ;
    tj = run_full(a, "re\xc2\xadsume \xc2\xadx", 0, &iEndJ);
    assert_int_equal(tj.n, 2);
    assert_int_equal(tj.a[0].iStart, 0);
    assert_int_equal(tj.a[0].iEnd, 8);           /* the whole word, its soft hyphen too */
    assert_int_equal(tj.a[1].iStart, 11);        /* a leading joiner is not part of it */
    assert_int_equal(tj.a[1].iPos, 1);
    toks_free(&tj);
    analyzer_free(a);
    /* off: as before */
    Analyzer *b = mk(NULL, NULL);
    check_terms(b, "Café Łódź ΆΓΙΟΣ", "café łódź άγιοσ");
    check_terms(b, "re\xc2\xadsume", "re sume"); /* off: a joiner separates */
    analyzer_free(b);
    /* with stemming, before the stemmer; and prefixes on the query side */
    AnalyzerConfig cs = {"stem_en", NULL, 2, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    assert_int_equal(analyzer_new(&cs, &a, &err), LP_OK);
    check_terms(a, "Cafés façades", "cafe facad");
    Toks t = {0};
    assert_int_equal(analyzer_run_query(a, "FAÇADES", strlen("FAÇADES"), 0, collect, &t, &err), LP_OK);
    assert_int_equal(t.n, 1);
    assert_string_equal(t.a[0].z, "facad");
    toks_free(&t);
    analyzer_free(a);
}

/* ------------------------------------------------------------- threads */

static const char *const azThreadText[] = {
    "The running libraries generously connected ΣΟΦΟΣ Straße 漢字abc ｶﾞ ①",
    "Relational databases and search engines index documents; engineers query them.",
    "Книги бегущий людей, Häuser und Bücher, naïve café résumé",
};

typedef struct ThreadArg {
    const Analyzer *const *aAn;     /* analyzers shared by all threads */
    int nAn;
    char *azOut[16];                /* the terms per (analyzer, text), set by the thread */
} ThreadArg;

static void *thread_main(void *p) {
    ThreadArg *arg = p;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < arg->nAn; i++) {
            for (size_t k = 0; k < LP_ARRAY_SIZE(azThreadText); k++) {
                char *z = terms_of(arg->aAn[i], azThreadText[k]);
                char **pz = &arg->azOut[i * (int)LP_ARRAY_SIZE(azThreadText) + (int)k];
                if (*pz && strcmp(*pz, z) != 0) fail_msg("round %d differs: %s vs %s", round, *pz, z);
                free(*pz);
                *pz = z;
            }
        }
    }
    return NULL;
}

static void test_threads(void **state) {
    const Analyzer *aAn[4] = {mk("stem_en", "en"), mk("stem_de", NULL), mk("stem_ru", "en"), mk(NULL, NULL)};
    ThreadArg ref = {aAn, 4, {0}};
    thread_main(&ref);
    ThreadArg aArg[4];
    pthread_t aThread[4];
    for (int i = 0; i < 4; i++) {
        aArg[i] = (ThreadArg){aAn, 4, {0}};
        assert_int_equal(pthread_create(&aThread[i], NULL, thread_main, &aArg[i]), 0);
    }
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_join(aThread[i], NULL), 0);
    int nOut = 4 * (int)LP_ARRAY_SIZE(azThreadText);
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < nOut; k++) {
            assert_string_equal(aArg[i].azOut[k], ref.azOut[k]);
            free(aArg[i].azOut[k]);
        }
    }
    assert_string_equal(ref.azOut[0], "run librari generous connect σοφοσ strass 漢 字 abc ガ 1");
    for (int k = 0; k < nOut; k++) free(ref.azOut[k]);
    for (int i = 0; i < 4; i++) analyzer_free((Analyzer *)aAn[i]);
}

/* A fresh thread's memo starts small and doubles in place as the words it
** has not seen pile up: across every doubling (20,000 distinct words, seen
** three times each) each word's stem is the stemmer's own. */
static void *memo_thread(void *arg) {
    const Analyzer *a = arg;
    struct sb_stemmer *pRef = sb_stemmer_new("english", NULL);
    assert_non_null(pRef);
    static const char *azSuffix[] = {"ing", "ies", "ness", "ed", "ations", "ly", "s", "ful"};
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 20000; i++) {
            char zWord[40];
            uint32_t x = (uint32_t)i * 2654435761u;
            int n = 0;
            for (int k = 0; k < 3 + (int)(x % 5); k++) zWord[n++] = (char)('a' + (x >> (3 * k)) % 26);
            n += snprintf(zWord + n, sizeof(zWord) - (size_t)n, "%c%s", (char)('a' + i % 26),
                          azSuffix[i % (int)LP_ARRAY_SIZE(azSuffix)]);
            n += snprintf(zWord + n, sizeof(zWord) - (size_t)n, "%c", (char)('a' + (i / 26) % 26));
            Toks t = run_full(a, zWord, 0, NULL);
            assert_int_equal(t.n, 1);
            const sb_symbol *zRef = sb_stemmer_stem(pRef, (const sb_symbol *)zWord, n);
            int nRef = sb_stemmer_length(pRef);
            if (t.a[0].n != nRef || memcmp(t.a[0].z, zRef, (size_t)nRef) != 0) {
                fail_msg("round %d: %s stems to %s, want %.*s", round, zWord, t.a[0].z, nRef, zRef);
            }
            toks_free(&t);
        }
    }
    sb_stemmer_delete(pRef);
    return NULL;
}

static void test_stem_memo_growth(void **state) {
    (void)state;
    Analyzer *a = mk("stem_en", NULL);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, memo_thread, a), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    analyzer_free(a);
}

/* The built-in English dictionary: it holds Debian's word list (tens of
** thousands of words: an empty one would make the test below vacuous),
** every entry gives libstemmer's own stem, both looked up directly and
** through the analyzer (stem_en), and a word it lacks gives none. */
/* A word's analysis does not depend on its neighbours or on what the
** thread analysed before (the stem memo, the dictionary): every word of a
** long mixed text comes out as it does alone, with the same term, its own
** position and byte range, stop words skipped in place; and a callback
** that stops the run stops it at its own token. */
static void test_words_as_alone(void **state) {
    (void)state;
    static const char *azWord[] = {
        "running", "the", "libraries", "Generously", "qqqzzx", "naïve", "Straße", "漢", "字",
        "ΑΝΘΡΩΠΟΙ", "x", "2024", "connected", "and", "happy", "loupe2", "internationalization",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "café",
        "of", "runners", "RUNNING", "ｆｕｌｌ", "ﬁsh"};
    enum { N_WORD = (int)LP_ARRAY_SIZE(azWord), N_TEXT = 997 };
    static const char *azCfg[][2] = {{"stem_en", "en"}, {"stem_en", NULL}, {"stem_de", NULL}, {NULL, NULL}};
    for (size_t c = 0; c < LP_ARRAY_SIZE(azCfg); c++) {
        Analyzer *a = mk(azCfg[c][0], azCfg[c][1]);
        /* Each word alone: its term, or none (a stop word). */
        Toks aAlone[N_WORD];
        for (int k = 0; k < N_WORD; k++) {
            aAlone[k] = run_full(a, azWord[k], 0, NULL);
            assert_true(aAlone[k].n <= 1);
        }
        /* A text of N_TEXT words picked by a fixed sequence, separators varied. */
        static const char *azSep[] = {" ", ", ", "\n", " -- ", "\t("};
        char *z = malloc((size_t)N_TEXT * 96);
        assert_non_null(z);
        int aPick[N_TEXT];
        uint32_t aStart[N_TEXT];
        size_t nz = 0;
        uint32_t x = 12345;
        for (int i = 0; i < N_TEXT; i++) {
            x = x * 1103515245u + 12345u;
            aPick[i] = (int)((x >> 8) % N_WORD);
            const char *zSep = azSep[(x >> 20) % LP_ARRAY_SIZE(azSep)];
            memcpy(z + nz, zSep, strlen(zSep));
            nz += strlen(zSep);
            aStart[i] = (uint32_t)nz;
            memcpy(z + nz, azWord[aPick[i]], strlen(azWord[aPick[i]]));
            nz += strlen(azWord[aPick[i]]);
        }
        z[nz] = 0;
        uint32_t iEnd = 0;
        Toks t = run_full(a, z, 7, &iEnd);
        assert_int_equal(iEnd, 7 + N_TEXT);
        int j = 0;
        for (int i = 0; i < N_TEXT; i++) {
            const Toks *o = &aAlone[aPick[i]];
            if (o->n == 0) continue;
            assert_true(j < t.n);
            assert_string_equal(t.a[j].z, o->a[0].z);
            assert_int_equal(t.a[j].iPos, 7 + (uint32_t)i);
            assert_int_equal(t.a[j].iStart, aStart[i] + o->a[0].iStart);
            assert_int_equal(t.a[j].iEnd, aStart[i] + o->a[0].iEnd);
            j++;
        }
        assert_int_equal(j, t.n);
        /* Stopped by the callback part way: exactly that many tokens. */
        for (int nStop = 1; nStop <= 20 && nStop <= t.n; nStop += 3) {
            Toks u = {0};
            u.nStopAfter = nStop;
            LpError err;
            assert_int_equal(analyzer_run(a, z, nz, 0, collect, &u, NULL, &err), 99);
            assert_int_equal(u.n, nStop);
            for (int k = 0; k < nStop; k++) assert_string_equal(u.a[k].z, t.a[k].z);
            toks_free(&u);
        }
        toks_free(&t);
        for (int k = 0; k < N_WORD; k++) toks_free(&aAlone[k]);
        free(z);
        analyzer_free(a);
    }
}

/* The analyzer's words of zText (words of letters, one space after each)
** are the reference stemmer's stems; returns how many. */
static int check_stems(Analyzer *a, struct sb_stemmer *pRef, char *zText, size_t nText) {
    zText[nText] = 0;
    Toks t = run_full(a, zText, 0, NULL);
    const char *z = zText;
    for (int i = 0; i < t.n; i++) {
        size_t n = strcspn(z, " ");
        const sb_symbol *zRef = sb_stemmer_stem(pRef, (const sb_symbol *)z, (int)n);
        int nRef = sb_stemmer_length(pRef);
        if (t.a[i].n != nRef || memcmp(t.a[i].z, zRef, (size_t)nRef) != 0) {
            fail_msg("%.*s stems to %s, want %.*s", (int)n, z, t.a[i].z, nRef, zRef);
        }
        z += n + 1;
    }
    assert_ptr_equal(z, zText + nText);
    int n = t.n;
    toks_free(&t);
    return n;
}

static void test_stem_dictionary(void **state) {
    (void)state;
    const StemDict *d = &lp_stemdict_en;
    if (d->nWord < 50000) {
        fail_msg("the English stem dictionary has %u words: is wamerican installed "
                 "(/usr/share/dict/american-english)?", d->nWord);
    }
    struct sb_stemmer *pRef = sb_stemmer_new("english", NULL);
    assert_non_null(pRef);
    Analyzer *a = mk("stem_en", NULL);
    uint32_t nSeen = 0, nAnalysed = 0;
    char zText[8192];
    size_t nText = 0;
    const unsigned char *pEnd = d->aPool + d->aBucket[(size_t)1 << d->nBits];
    for (const unsigned char *p = d->aPool; p < pEnd; p += stemdict_entry_size(p)) {
        int n = p[0];
        const char *zWord = (const char *)p + 3;
        char zStem[STEMDICT_MAX_WORD + STEMDICT_MAX_SUFFIX];
        memcpy(zStem, zWord, (size_t)n);
        int nStem = stemdict_find(d, zStem, n, stemdict_hash(zWord, n));
        const sb_symbol *zRef = sb_stemmer_stem(pRef, (const sb_symbol *)zWord, n);
        int nRef = sb_stemmer_length(pRef);
        if (nStem != nRef || memcmp(zStem, zRef, (size_t)nRef) != 0) {
            fail_msg("%.*s: the dictionary says %.*s, the stemmer %.*s", n, zWord, nStem < 0 ? 0 : nStem,
                     zStem, nRef, zRef);
        }
        nSeen++;
        /* Every word also goes through the analyzer, in texts, which read
        ** their copy of the dictionary (in huge pages, where the system
        ** has them). */
        if (nText + (size_t)n + 2 > sizeof(zText)) {
            nAnalysed += (uint32_t)check_stems(a, pRef, zText, nText);
            nText = 0;
        }
        memcpy(zText + nText, zWord, (size_t)n);
        nText += (size_t)n;
        zText[nText++] = ' ';
    }
    assert_int_equal(nSeen, d->nWord);
    nAnalysed += (uint32_t)check_stems(a, pRef, zText, nText);
    assert_int_equal(nAnalysed, nSeen);
    char zOut[STEMDICT_MAX_WORD + STEMDICT_MAX_SUFFIX];
    static const char *azAbsent[] = {"loupe2", "qqqzzx", "running1", "Running", ""};
    for (size_t i = 0; i < LP_ARRAY_SIZE(azAbsent); i++) {
        int n = (int)strlen(azAbsent[i]);
        memcpy(zOut, azAbsent[i], (size_t)n);
        assert_int_equal(stemdict_find(d, zOut, n, stemdict_hash(zOut, n)), -1);
        assert_memory_equal(zOut, azAbsent[i], (size_t)n); /* untouched */
    }
    memcpy(zOut, "running", 7);
    assert_int_equal(stemdict_find(d, zOut, 7, stemdict_hash(zOut, 7)), 3);
    assert_memory_equal(zOut, "run", 3);
    memcpy(zOut, "happy", 5); /* a stem with a suffix of its own */
    assert_int_equal(stemdict_find(d, zOut, 5, stemdict_hash(zOut, 5)), 5);
    assert_memory_equal(zOut, "happi", 5);
    analyzer_free(a);
    sb_stemmer_delete(pRef);
}

/* ------------------------------------------------------------ exact forms */

static Analyzer *mk_exact(const char *zMorph, const char *zStop) {
    AnalyzerConfig cfg = {zMorph, zStop, 0, 1, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = NULL;
    LpError err;
    lp_err_clear(&err);
    if (analyzer_new(&cfg, &a, &err) != LP_OK) fail_msg("analyzer_new: %s", err.zMsg);
    assert_true(analyzer_exact_words(a));
    return a;
}

/* "term@pos" for each token of the query side's run over z, space-separated. */
static void check_query(const Analyzer *a, const char *z, const char *zWant) {
    Toks t = {0};
    LpError err;
    lp_err_clear(&err);
    if (analyzer_run_query(a, z, strlen(z), 0, collect, &t, &err) != LP_OK) {
        fail_msg("analyzer_run_query(\"%s\"): %s", z, err.zMsg);
    }
    char zGot[512] = "";
    for (int i = 0; i < t.n; i++) {
        size_t k = strlen(zGot);
        snprintf(zGot + k, sizeof(zGot) - k, "%s%s@%u", i ? " " : "", t.a[i].z, t.a[i].iPos);
    }
    toks_free(&t);
    if (strcmp(zGot, zWant) != 0) fail_msg("query \"%s\" → \"%s\", want \"%s\"", z, zGot, zWant);
}

static void test_exact_forms(void **state) {
    (void)state;
    Analyzer *a = mk_exact("stem_en", "en");
    /* Documents: the exact form first, at the word's position and offsets;
    ** stop words get neither; positions still count them. */
    uint32_t iEnd = 0;
    Toks t = run_full(a, "The Running cats", 0, &iEnd);
    assert_int_equal(iEnd, 3);
    assert_int_equal(t.n, 4);
    const char *azWant[] = {"=running", "run", "=cats", "cat"};
    const uint32_t aPos[] = {1, 1, 2, 2}, aStart[] = {4, 4, 12, 12};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(t.a[i].z, azWant[i]);
        assert_int_equal(t.a[i].iPos, aPos[i]);
        assert_int_equal(t.a[i].iStart, aStart[i]);
    }
    toks_free(&t);
    /* NFKC and folding apply to the exact form; the mark plus the word
    ** stays within ANALYZER_MAX_TERM, cut at a character boundary. */
    check_terms(a, "ﬁnding", "=finding find");
    char zLong[80], zWant[80];
    memset(zLong, 'x', 62);
    memcpy(zLong + 62, "\xc3\xa9s", 4); /* 62 x, é (2 bytes), s: 65 bytes */
    snprintf(zWant, sizeof(zWant), "=%.62s", zLong);
    t = run_full(a, zLong, 0, NULL);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.a[0].z, zWant); /* "=" + 62 x is 63 bytes: é does not fit */
    toks_free(&t);

    /* Queries: '=word' looks up the exact form alone; other words as ever. */
    check_query(a, "running =running", "run@0 =running@1");
    check_query(a, "raining =Cats and =dogs", "rain@0 =cats@1 =dogs@3");
    /* '=' after a letter or digit separates two plain words. */
    check_query(a, "x=running 5=cats", "x@0 run@1 5@2 cat@3");
    check_query(a, "(=running) \"=cats\" ==dogs", "=running@0 =cats@1 =dogs@2");
    check_query(a, "=the cats", "cat@1"); /* a stop word is dropped either way */
    /* ="…": every word exact (the query side of a phrase written so). */
    Toks e = {0};
    LpError err0;
    lp_err_clear(&err0);
    assert_int_equal(analyzer_run_query(a, "Running the cats", 16, 1, collect, &e, &err0), LP_OK);
    assert_int_equal(e.n, 2);
    assert_string_equal(e.a[0].z, "=running");
    assert_string_equal(e.a[1].z, "=cats");
    assert_int_equal(e.a[1].iPos, 2);
    toks_free(&e);
    analyzer_free(a);

    /* Unstemmed, a word is its own exact form: '=' changes nothing, and
    ** documents get no second term. */
    a = mk_exact(NULL, NULL);
    check_terms(a, "Running cats", "running cats");
    check_query(a, "=Running cats", "running@0 cats@1");
    analyzer_free(a);

    /* analyzer_prefix_ok counts characters, not bytes */
    AnalyzerConfig pc = {NULL, NULL, 3, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *ap = NULL;
    assert_int_equal(analyzer_new(&pc, &ap, &err0), LP_OK);
    assert_false(analyzer_prefix_ok(ap, "ab", 2));
    assert_false(analyzer_prefix_ok(ap, "\xc3\xa9\xc3\xa9", 4)); /* "éé": 2 characters */
    assert_true(analyzer_prefix_ok(ap, "\xc3\xa9\xc3\xa9" "a", 5));
    assert_false(analyzer_prefix_ok(ap, "", 0));
    analyzer_free(ap);

    /* Stemmed without exact forms: '=word' is an error at the '='. */
    a = mk("stem_en", NULL);
    assert_false(analyzer_exact_words(a));
    check_terms(a, "Running cats", "run cat");
    Toks u = {0};
    LpError err;
    lp_err_clear(&err);
    const char *z = "cats =running";
    assert_int_equal(analyzer_run_query(a, z, strlen(z), 0, collect, &u, &err), LP_BADINPUT);
    assert_int_equal(err.pos, 5);
    assert_string_equal(err.zMsg, "the exact form '=running' needs the table option "
                                  "index_exact_words='1' (words are indexed stemmed only)");
    toks_free(&u);
    assert_int_equal(analyzer_run_query(a, z, strlen(z), 1, collect, &u, &err), LP_BADINPUT);
    assert_int_equal(err.pos, 0); /* every word is exact: the first one fails */
    toks_free(&u);
    /* analyzer_collect's stemmed side is the query side. */
    TokenList l = {0};
    assert_int_equal(analyzer_collect(a, z, strlen(z), 1, &l, &err), LP_BADINPUT);
    token_list_free(&l);
    analyzer_free(a);
}

/* The query side's any-word place: a '*' that does not end a word takes a
** position; documents, the unstemmed run and a '*' ending a word do not. */
/* ------------------------------------------------ sentences, paragraphs */

/* "term@pos" for each token analyzer_run gives z, space-separated. */
static void check_doc(const Analyzer *a, const char *z, const char *zWant) {
    uint32_t iEnd = 0;
    Toks t = run_full(a, z, 0, &iEnd);
    char zGot[512] = "";
    for (int i = 0; i < t.n; i++) {
        size_t k = strlen(zGot);
        snprintf(zGot + k, sizeof(zGot) - k, "%s%s@%u", i ? " " : "", t.a[i].z, t.a[i].iPos);
    }
    /* the field ends with a word: its length is the last position + 1
    ** (less the phrase boundaries' steps, checked by their test) */
    if (t.n && !analyzer_phrase_boundary_step(a)) assert_int_equal(iEnd, t.a[t.n - 1].iPos + 1);
    toks_free(&t);
    if (strcmp(zGot, zWant) != 0) fail_msg("\"%s\" → \"%s\", want \"%s\"", z, zGot, zWant);
}

static void test_min_word_len(void **state) {
    (void)state;
    AnalyzerConfig cfg = {"stem_en", NULL, 0, 1, 0, 0, NULL, 0, NULL, 3, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = NULL;
    LpError err;
    if (analyzer_new(&cfg, &a, &err) != LP_OK) fail_msg("analyzer_new: %s", err.zMsg);
    /* shorter words are dropped, their positions counted; characters, not
    ** bytes, are counted ("été" is three), and exact forms go with them */
    check_doc(a, "An ox ran to the big été fields", "=ran@2 ran@2 =the@4 the@4 =big@5 big@5 =été@6 été@6 "
                                                      "=fields@7 field@7");
    check_query(a, "an ox RUNS été", "run@2 été@3");
    check_query(a, "to =ox", "");
    analyzer_free(a);
    /* 0 and 1: every word */
    for (int m = 0; m <= 1; m++) {
        AnalyzerConfig c1 = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, m, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
        if (analyzer_new(&c1, &a, &err) != LP_OK) fail_msg("analyzer_new: %s", err.zMsg);
        check_doc(a, "a b c", "a@0 b@1 c@2");
        analyzer_free(a);
    }
    AnalyzerConfig bad = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 65, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    assert_int_equal(analyzer_new(&bad, &a, &err), LP_BADINPUT);
    assert_string_equal(err.zMsg, "min_word_len 65 is out of range 0..64");
}

static Analyzer *mk_cfg(const AnalyzerConfig *cfg);

/* stopword_step and overshort_step 0 (Manticore's): a dropped word takes
** no position, in documents and queries, each option for its own kind of
** word; the field's length counts only the positions taken. */
static void test_position_steps(void **state) {
    (void)state;
    static const struct {
        int bStop, bShort;
        const char *zDoc, *zQuery;
    } aCase[] = {
        {0, 0, "big the office a x ran", "big@0 offic@2 ran@5"},
        {1, 0, "big the office a x ran", "big@0 offic@1 ran@4"},
        {0, 1, "big the office a x ran", "big@0 offic@2 ran@3"},
        {1, 1, "big the office a x ran", "big@0 offic@1 ran@2"},
    };
    for (size_t i = 0; i < LP_ARRAY_SIZE(aCase); i++) {
        /* "the" is a stop word; "a" and "x" are under min_word_len 2 */
        AnalyzerConfig cfg = {"stem_en", NULL, 0, 0, 0, 0, NULL, 0, NULL, 2, NULL, 0, 0, NULL, NULL,
                              NULL, "the", aCase[i].bStop, aCase[i].bShort, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
        Analyzer *a = mk_cfg(&cfg);
        assert_int_equal(analyzer_renumbers(a), aCase[i].bStop || aCase[i].bShort);
        check_doc(a, aCase[i].zDoc, aCase[i].zQuery);
        check_query(a, aCase[i].zDoc, aCase[i].zQuery);
        analyzer_free(a);
    }
    /* a dropped last word: the length ends at the last position taken */
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, "the", 1, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = mk_cfg(&cfg);
    uint32_t iEnd = 0;
    Toks t = run_full(a, "the cat the the", 0, &iEnd);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.a[0].iPos, 0);
    assert_int_equal(iEnd, 1);
    toks_free(&t);
    /* unstemmed runs (HIGHLIGHT's word list) still number every word */
    t = (Toks){0};
    LpError err;
    lp_err_clear(&err);
    assert_int_equal(analyzer_run_unstemmed(a, "the cat", 7, collect, &t, &err), LP_OK);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.a[1].iPos, 1);
    toks_free(&t);
    analyzer_free(a);
    /* with word forms: their shifts and the steps add up */
    AnalyzerConfig wf = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, "s02e02 > season 2 episode 2",
                         NULL, NULL, "the", 1, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    a = mk_cfg(&wf);
    check_doc(a, "the s02e02 the end", "season@0 2@1 episode@2 2@3 end@4");
    check_query(a, "the s02e02 the end", "season@0 2@1 episode@2 2@3 end@4");
    analyzer_free(a);
    /* with index_sp: a boundary keeps its place among the words taken */
    AnalyzerConfig sp = {NULL, NULL, 0, 0, 1, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, "the", 1, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    a = mk_cfg(&sp);
    check_doc(a, "The cat. The dog", "cat@0 .@1 dog@2");
    analyzer_free(a);
}

/* The analyzer cfg asks for; the test fails if it is refused. */
static Analyzer *mk_cfg(const AnalyzerConfig *cfg) {
    Analyzer *a = NULL;
    LpError err;
    lp_err_clear(&err);
    if (analyzer_new(cfg, &a, &err) != LP_OK) fail_msg("analyzer_new: %s", err.zMsg);
    return a;
}

/* cfg must be refused with LP_BADINPUT and the message zWant; zWhat names
** the option tried, for the failure's message. */
static void check_cfg_error(const AnalyzerConfig *cfg, const char *zWhat, const char *zWant) {
    Analyzer *a = NULL;
    LpError err;
    lp_err_clear(&err);
    if (analyzer_new(cfg, &a, &err) != LP_BADINPUT) fail_msg("%s was accepted", zWhat);
    assert_null(a);
    if (strcmp(err.zMsg, zWant) != 0) fail_msg("%s: \"%s\", want \"%s\"", zWhat, err.zMsg, zWant);
}

/* An analyzer with word forms zRules (and the morphology, stop words,
** exact forms and boundaries given). */
static Analyzer *mk_wf(const char *zMorph, const char *zStop, int bExact, int bSp, const char *zRules) {
    AnalyzerConfig cfg = {zMorph, zStop, 0, bExact, bSp, 0, NULL, 0, NULL, 0, NULL, 1, 0, zRules, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    return mk_cfg(&cfg);
}

static void check_wf_error(const char *zRules, const char *zWant) {
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, zRules, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    check_cfg_error(&cfg, zRules, zWant);
}

static void test_wordforms(void **state) {
    (void)state;
    /* One word for one: not stemmed after (the stem of "goose" is
    ** "goos"), not dropped; other words as before. */
    Analyzer *a = mk_wf("stem_en", "en", 0, 0, "geese > goose\nwalked => walk; The > tHe");
    assert_true(analyzer_has_wordforms(a));
    check_doc(a, "The geese walked, geese running", "the@0 goose@1 walk@2 goose@3 run@4");
    check_doc(a, "a goose", "goos@1");
    check_query(a, "GEESE runs", "goose@0 run@1");
    /* a query's prefix takes part in no rule */
    check_query(a, "geese* walked", "gees@0 walk@1");
    /* the unstemmed run (prefixes, highlighting) sees the words themselves */
    {
        Toks t = {0};
        LpError err;
        assert_int_equal(analyzer_run_unstemmed(a, "geese walked", 12, collect, &t, &err), LP_OK);
        assert_int_equal(t.n, 2);
        assert_string_equal(t.a[0].z, "geese");
        assert_string_equal(t.a[1].z, "walked");
        toks_free(&t);
    }
    analyzer_free(a);

    /* Several words for one, one for several: positions close up or open
    ** out; each destination word has the whole source's bytes. */
    a = mk_wf(NULL, NULL, 0, 0, "core 2 duo > c2d; s02e02 > season 2 episode 2; core > kernel");
    check_doc(a, "my Core 2 Duo cpu", "my@0 c2d@1 cpu@2");
    check_doc(a, "see S02E02 now", "see@0 season@1 2@2 episode@3 2@4 now@5");
    check_doc(a, "core 2 duo, core 2 duo", "c2d@0 c2d@1");
    /* separators between the words do not matter, positions do */
    check_doc(a, "core-2 (duo)", "c2d@0");
    /* the longest source that matches wins; the rest is read again */
    check_doc(a, "core 2 quad", "kernel@0 2@1 quad@2");
    check_doc(a, "a core 2", "a@0 kernel@1 2@2");
    check_doc(a, "core core 2 duo core", "kernel@0 c2d@1 kernel@2");
    {
        uint32_t iEnd = 0;
        Toks t = run_full(a, "x core 2 duo y", 10, &iEnd);
        assert_int_equal(t.n, 3);
        assert_int_equal(t.a[1].iPos, 11);
        assert_int_equal(t.a[1].iStart, 2);
        assert_int_equal(t.a[1].iEnd, 12);
        assert_int_equal(t.a[2].iPos, 12);
        assert_int_equal(iEnd, 13);
        toks_free(&t);
    }
    /* in a query too; a '*' standing alone takes a position, so the words
    ** around it are not consecutive */
    check_query(a, "\"core 2 duo\" s02e02", "c2d@0 season@1 2@2 episode@3 2@4");
    check_query(a, "core * duo", "kernel@0 duo@2");
    check_query(a, "core 2 duo*", "kernel@0 2@1 duo@2");
    analyzer_free(a);

    /* Sources that overlap are read left to right; stop words inside a
    ** source are part of it; a sentence boundary breaks a run. */
    a = mk_wf(NULL, "en", 0, 1, "a b > x; b c > y; the who > thewho");
    check_doc(a, "a b c", "x@0 c@1");
    check_doc(a, "b c", "y@0");
    check_doc(a, "The Who sang, the band", "thewho@0 sang@1 band@3");
    check_doc(a, "Ask a. B c", "ask@0 .@2 y@3");
    analyzer_free(a);

    /* '~': after stemming, against the stem. */
    a = mk_wf("stem_en", NULL, 0, 0, "~run > walk");
    check_doc(a, "running runs ran run", "walk@0 walk@1 ran@2 walk@3");
    check_query(a, "runner RUNS", "runner@0 walk@1");
    analyzer_free(a);

    /* Exact forms: the destination's, on both sides. */
    a = mk_wf("stem_en", NULL, 1, 0, "geese > goose; core 2 duo > c2d");
    check_doc(a, "geese Core 2 duo", "=goose@0 goose@0 =c2d@1 c2d@1");
    check_query(a, "=geese geese =core 2 duo", "=goose@0 goose@1 =c2d@2");
    analyzer_free(a);

    /* Escapes, comments, blanks; a later rule replaces an earlier one. */
    a = mk_wf(NULL, NULL, 0, 0,
              "# a comment\n\n  x\\;y > xy  # joined\r\n\\~tilde > t; a\\> > abc ; \\#hash > h; one > 1; one > uno;;");
    check_doc(a, "x;y ~tilde a> #hash one", "xy@0 t@1 abc@2 h@3 uno@4");
    analyzer_free(a);
    a = mk_wf(NULL, NULL, 0, 0, "  # nothing but a comment ; \n ");
    assert_false(analyzer_has_wordforms(a));
    analyzer_free(a);

    /* Errors name the rule and where it starts. */
    check_wf_error("a > b\nc d", "wordforms rule 2 (line 2, byte 6) 'c d': expected 'source > destination'");
    check_wf_error("a > b > c", "wordforms rule 1 (line 1, byte 0): more than one '>' (write '\\>' for the character itself)");
    check_wf_error("x > y; > b", "wordforms rule 2 (line 1, byte 6): its source has no word");
    check_wf_error("a > ...", "wordforms rule 1 (line 1, byte 0): its destination has no word");
    check_wf_error("~a b > c", "wordforms rule 1 (line 1, byte 0): its source has more than one word (a '~' rule "
                                "maps one word to one)");
    check_wf_error("a b c d e f g h i j k l m n o p q > x",
                   "wordforms rule 1 (line 1, byte 0): its source has more than 16 words");
    check_wf_error("a > \xff", "wordforms rule 1 (line 1, byte 0): its destination: invalid UTF-8 at byte 1");
}

static Analyzer *mk_ignore(const char *zIgnore, const char *zRules) {
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, zRules, zIgnore, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    return mk_cfg(&cfg);
}

static void check_ignore_error(const char *zIgnore, const char *zWant) {
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, zIgnore, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    check_cfg_error(&cfg, zIgnore, zWant);
}

static void test_ignore_chars(void **state) {
    (void)state;
    Analyzer *a = mk_ignore(" U+AD, -,U+301 ", NULL);
    check_doc(a, "e-mail re\xc2\xadsume", "email@0 resume@1");
    /* a lone ignored character is nothing; before or after a word, it
    ** joins nothing */
    check_doc(a, "a - b -c d-", "a@0 b@1 c@2 d@3");
    /* a combining accent dropped before normalising (Russian stress marks) */
    check_doc(a, "\xd0\xb8\xcc\x81\xd0\xb4\xd1\x83", "\xd0\xb8\xd0\xb4\xd1\x83@0");
    check_query(a, "E-Mail", "email@0");
    {
        /* the offsets are the text's as given */
        uint32_t iEnd = 0;
        Toks t = run_full(a, "x e-mail -- y", 0, &iEnd);
        assert_int_equal(t.n, 3);
        assert_int_equal(t.a[1].iStart, 2);
        assert_int_equal(t.a[1].iEnd, 8);
        assert_int_equal(t.a[2].iStart, 12);
        assert_int_equal(t.a[2].iEnd, 13);
        toks_free(&t);
        /* an error's offset too */
        LpError err;
        t = (Toks){0};
        assert_int_equal(analyzer_run(a, "--a\xff", 4, 0, collect, &t, NULL, &err), LP_BADINPUT);
        assert_int_equal(err.pos, 3);
        toks_free(&t);
    }
    analyzer_free(a);
    /* ranges; letters may be ignored too; word forms see the text without them */
    a = mk_ignore("a..c, U+2E", "dd > x");
    check_doc(a, "abcd cab d.b.d", "d@0 x@1");
    analyzer_free(a);
    a = mk_ignore("-", "e-mail > mail");
    check_doc(a, "email e-mail e - mail", "mail@0 mail@1 e@2 mail@3");
    analyzer_free(a);

    /* an empty list ignores nothing */
    a = mk_ignore(" ", NULL);
    check_doc(a, "e-mail", "e@0 mail@1");
    analyzer_free(a);

    check_ignore_error("a->b", "ignore_chars: 'a->b': maps a character: only characters and ranges are allowed here");
    check_ignore_error("z..a", "ignore_chars: 'z..a': a range must not end before it starts");
    check_ignore_error("U+D800", "ignore_chars: 'U+D800': not a Unicode character (U+0, above U+10FFFF, or a surrogate)");
    check_ignore_error("U+110000", "ignore_chars: 'U+110000': not a Unicode character (U+0, above U+10FFFF, or a surrogate)");
    check_ignore_error("a,,b", "ignore_chars: an empty item (two commas in a row)");
    check_ignore_error("U+", "ignore_chars: 'U+': expected a character, U+hex or a range such as a..z");
    check_ignore_error("ab", "ignore_chars: 'ab': expected a character, U+hex or a range such as a..z");
}

/* An analyzer with charset_table zMap (remove_diacritics bStrip; stemming,
** exceptions as given). */
static Analyzer *mk_map(const char *zMap, int bStrip, const char *zMorph, const char *zExc) {
    AnalyzerConfig cfg = {zMorph, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, bStrip, 0, NULL, NULL, zExc, NULL, 0, 0, zMap, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    return mk_cfg(&cfg);
}

static void check_map_error(const char *zMap, int bSp, const char *zZones, const char *zWant) {
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, bSp, zZones != NULL, NULL, 0, NULL, 0, zZones, 1, 0, NULL, NULL, NULL, NULL, 0, 0, zMap, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    check_cfg_error(&cfg, zMap, zWant);
}

/* charset_table (Manticore's): named characters are word characters and
** become their targets as they are; the aliases non_cjk and cjk take in
** the default classes, normalised as without the table; the rest
** separates words. */
static void test_charset_table(void **state) {
    (void)state;
    Analyzer *a = mk_map("non_cjk, +, #", 1, NULL, NULL);
    check_doc(a, "C++ and C# rock, Café", "c++@0 and@1 c#@2 rock@3 cafe@4");
    check_query(a, "c++ * C#", "c++@0 c#@2");
    {
        /* the bytes of the text as given */
        Toks t = run_full(a, "x  C++ y", 0, NULL);
        assert_int_equal(t.n, 3);
        assert_int_equal(t.a[1].iStart, 3);
        assert_int_equal(t.a[1].iEnd, 6);
        toks_free(&t);
    }
    analyzer_free(a);
    /* without cjk, CJK letters separate words; with it, each is a word */
    a = mk_map("non_cjk", 1, NULL, NULL);
    check_doc(a, "\xe6\x9d\xb1\xe4\xba\xac" "abc x_y", "abc@0 x@1 y@2");
    analyzer_free(a);
    a = mk_map("cjk, non_cont, _", 1, NULL, NULL);
    check_doc(a, "\xe6\x9d\xb1\xe4\xba\xac" "abc x_y", "\xe6\x9d\xb1@0 \xe4\xba\xac@1 abc@2 x_y@3");
    analyzer_free(a);
    /* english is A..Z->a..z, a..z: other letters separate words */
    a = mk_map("english, 0..9", 1, NULL, NULL);
    check_doc(a, "Caf\xc3\xa9 \xc3\x9c" "ber R2D2", "caf@0 ber@1 r2d2@2");
    analyzer_free(a);
    /* a named character is not case-folded: 'T' is no word character */
    a = mk_map("a..z", 1, NULL, NULL);
    check_doc(a, "The cat", "he@0 cat@1");
    analyzer_free(a);
    /* the later item wins; a range onto one character; pairs */
    a = mk_map("a..z, a->b, 0..9->x, U+100..U+105/2", 1, NULL, NULL);
    check_doc(a, "aab 2026 \xc4\x80\xc4\x81\xc4\x82", "bbb@0 xxxx@1 \xc4\x81\xc4\x81\xc4\x83@2");
    analyzer_free(a);
    /* a range of a million characters onto one is one entry */
    a = mk_map("non_cjk, U+E000..U+10FFFF->x", 1, NULL, NULL);
    check_doc(a, "a\xee\x80\x80" "b \xf4\x8f\xbf\xbf", "axb@0 x@1");
    analyzer_free(a);
    /* a named character inside an alias's word: the rest normalised */
    a = mk_map("non_cjk, U+E9->e, -", 0, NULL, NULL);
    check_doc(a, "CAF\xc3\xa9-Na\xc3\xafve", "cafe-na\xc3\xafve@0");
    analyzer_free(a);
    a = mk_map("russian", 1, NULL, NULL);
    check_doc(a, "\xd0\x81\xd0\xb6 ok", "\xd1\x91\xd0\xb6@0");
    analyzer_free(a);
    {
        /* the built-in stop lists' words are split and normalised by the
        ** table too: one that keeps 'ü' drops German's "für" as written
        ** (folded to "fur" it would drop nothing), and one that maps 'ü'
        ** to 'u' drops "fur"; a table without ü splits "für" into "f" and
        ** "r", both stop words then, as in Manticore */
        AnalyzerConfig cfg = {NULL, "de", 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, NULL, NULL, NULL, 0, 0,
                              "a..z, A..Z->a..z, U+FC, U+DC->U+FC", NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
        a = mk_cfg(&cfg);
        check_doc(a, "F\xc3\xbcr fur Haus", "fur@1 haus@2");
        analyzer_free(a);
        cfg.zCharsetTable = "a..z, A..Z->a..z, U+FC->u";
        a = mk_cfg(&cfg);
        check_doc(a, "F\xc3\xbcr fur Haus", "haus@2");
        analyzer_free(a);
        cfg.zCharsetTable = "a..z, A..Z->a..z";
        a = mk_cfg(&cfg);
        check_doc(a, "F\xc3\xbcr fab r Haus", "fab@2 haus@4");
        analyzer_free(a);
    }
    /* stemming still applies; an exception's ends are word characters of
    ** the table */
    a = mk_map("non_cjk, +", 1, "stem_en", "c++ => cplusplus");
    check_doc(a, "running c++ xc++ c++s", "run@0 cplusplus@1 xc++@2 c++s@3");
    analyzer_free(a);

    check_map_error("a->*", 0, NULL,
                    "charset_table: 'a->*': '*' cannot be a word character: it is the query language's prefix and "
                    "wildcard operator");
    check_map_error("U+21..U+40", 0, NULL,
                    "charset_table: 'U+21..U+40': '*' cannot be a word character: it is the query language's prefix "
                    "and wildcard operator");
    check_map_error("=", 0, NULL,
                    "charset_table: '=': '=' cannot be a word character: it marks an exact form in a query (=word)");
    check_map_error("a..z->a..y", 0, NULL,
                    "charset_table: 'a..z->a..y': a range maps onto a range of as many characters (A..Z->a..z) or "
                    "onto one character (a..z->x)");
    check_map_error("U+100..U+102/2", 0, NULL,
                    "charset_table: 'U+100..U+102/2': a range of pairs (/2) holds an even count of characters");
    check_map_error("latin", 0, NULL,
                    "charset_table: 'latin': expected a character, U+hex, a range such as a..z, a mapping such as "
                    "A..Z->a..z, a range of pairs such as U+100..U+17F/2, or an alias: non_cjk, non_cont, cjk, "
                    "cont, chinese, japanese, korean, english, russian");
    check_map_error("a,,b", 0, NULL, "charset_table: an empty item (two commas in a row)");
    check_map_error("non_cjk, \\ ", 0, NULL,
                    "charset_table: '\\ ': a space or a control character cannot be a word character");
    check_map_error("U+0..U+7F", 0, NULL,
                    "charset_table: 'U+0..U+7F': not a Unicode character (U+0, above U+10FFFF, or a surrogate)");
    check_map_error("U+1..U+7F", 0, NULL,
                    "charset_table: 'U+1..U+7F': a space or a control character cannot be a word character");
    check_map_error("U+7F", 0, NULL, "charset_table: 'U+7F': a space or a control character cannot be a word character");
    check_map_error("U+0", 0, NULL, "charset_table: 'U+0': not a Unicode character (U+0, above U+10FFFF, or a surrogate)");
    check_map_error("non_cjk, .", 1, NULL,
                    "charset_table: '.' cannot be a word character in a table with index_sp='1' (the sentence "
                    "boundary's term is '.')");
    check_map_error("non_cjk, U+3C", 0, "h1",
                    "charset_table: '<' cannot be a word character in a table with index_zones (a zone's terms "
                    "start with '<')");
    /* '.' is fine without index_sp */
    a = mk_map("non_cjk, .", 1, NULL, NULL);
    check_doc(a, "www.example.com. x", "www.example.com.@0 x@1");
    analyzer_free(a);
}

/* An analyzer with blend_chars zBlend and blend_mode zMode (charset_table
** zMap, stemming as given). */
static Analyzer *mk_blend(const char *zBlend, const char *zMode, const char *zMap, const char *zMorph) {
    AnalyzerConfig cfg = {zMorph, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, NULL, NULL, NULL, 0, 0, zMap, zBlend, zMode, 0, 0, NULL, NULL, NULL, 0};
    return mk_cfg(&cfg);
}

static void check_blend_error(const char *zBlend, const char *zMode, int bSp, const char *zWant) {
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, bSp, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, zBlend, zMode, 0, 0, NULL, NULL, NULL, 0};
    check_cfg_error(&cfg, zBlend, zWant);
}

/* blend_chars and blend_mode (Manticore's): a token with blend characters
** is indexed as its parts (the blend characters read as separators) and,
** at its first part's position, as the variants blend_mode names; a query
** looks for one variant, its parts' positions passed over. */
static void test_blend_chars(void **state) {
    (void)state;
    Analyzer *a = mk_blend("&, @->_", NULL, NULL, NULL);
    check_doc(a, "AT&T company", "at&t@0 at@0 t@1 company@2");
    check_query(a, "AT&T company", "at&t@0 company@2");
    check_query(a, "at t", "at@0 t@1");
    /* mapped; pure tokens are words of their own */
    check_doc(a, "@dude one & two", "_dude@0 dude@0 one@1 &@2 two@3");
    check_query(a, "one & two", "one@0 &@1 two@2");
    {
        /* a variant's bytes are the token's */
        Toks t = run_full(a, "x AT&T", 0, NULL);
        assert_int_equal(t.n, 4);
        assert_int_equal(t.a[1].iStart, 2);
        assert_int_equal(t.a[1].iEnd, 6);
        assert_int_equal(t.a[3].iStart, 5);
        toks_free(&t);
    }
    analyzer_free(a);
    /* modes: several variants, each once; a variant equal to a part is none */
    a = mk_blend("@, !", "trim_head, trim_tail, trim_both, skip_pure", NULL, NULL);
    check_doc(a, "@dude! one @@@ two", "dude!@0 @dude@0 dude@0 one@1 two@2");
    check_query(a, "@dude!", "dude!@0");
    check_query(a, "@dude", "@dude@0");
    check_query(a, "dude", "dude@0");
    analyzer_free(a);
    /* Sphinx's rules: a pure token is a word as written in every mode (not
    ** only trim_none's); a query looks for the token as written where a
    ** variant is that, else for its first variant */
    a = mk_blend("&", "trim_head, trim_tail", NULL, NULL);
    check_doc(a, "x && y & z", "x@0 &&@1 y@2 &@3 z@4");
    check_query(a, "x && y", "x@0 &&@1 y@2");
    check_doc(a, "&at&t", "at&t@0 &at&t@0 at@0 t@1");
    check_query(a, "&at&t", "&at&t@0");
    check_query(a, "at&t&", "at&t&@0");
    check_query(a, "&at&t&", "at&t&@0");
    analyzer_free(a);
    {
        /* word forms, as Sphinx applies them: a rule of one word to one
        ** takes a variant or a part too; a rule of several words takes
        ** runs of plain words only, never a part */
        AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0,
                              "at&t > telco; t mobile > cell; at t > zzz; t > tee; big at > nope", NULL, NULL, NULL,
                              0, 0, NULL, "&", NULL, 0, 0, NULL, NULL, NULL, 0};
        a = mk_cfg(&cfg);
        check_doc(a, "at&t mobile", "telco@0 at@0 tee@1 mobile@2");
        check_doc(a, "big at&t", "big@0 telco@1 at@1 tee@2");
        check_doc(a, "at t mobile", "zzz@0 mobile@1");
        check_doc(a, "x t mobile t", "x@0 cell@1 tee@2");
        check_query(a, "at&t", "telco@0");
        check_query(a, "at&t*", "at&t@0");
        check_query(a, "\"at&t mobile\"", "telco@0 mobile@2");
        analyzer_free(a);
    }
    a = mk_blend("_", "trim_all", NULL, NULL);
    check_doc(a, "some_thing _x_", "something@0 some@0 thing@1 x@2");
    check_query(a, "some_thing", "something@0");
    {
        /* the positions a query's text takes: a token's parts each one,
        ** whichever form it is looked for by (what '$' reads) */
        LpError err = {0};
        uint32_t nPos = 99;
        assert_int_equal(analyzer_query_span(a, "some_thing", 10, ANALYZE_QUERY, &nPos, &err), LP_OK);
        assert_int_equal(nPos, 2);
        assert_int_equal(analyzer_query_span(a, "a_b_c d", 7, ANALYZE_QUERY_EXACT, &nPos, &err), LP_OK);
        assert_int_equal(nPos, 4);
        assert_int_equal(analyzer_query_span(a, "", 0, ANALYZE_QUERY, &nPos, &err), LP_OK);
        assert_int_equal(nPos, 0);
        assert_int_equal(analyzer_query_span(a, "x", 1, ANALYZE_UNSTEMMED, &nPos, &err), LP_INTERNAL);
        assert_int_equal(analyzer_query_span(a, "\xff", 1, ANALYZE_QUERY, &nPos, &err), LP_BADINPUT);
    }
    analyzer_free(a);
    a = mk_blend(".", "trim_both", NULL, "stem_en");
    check_doc(a, "the U.S.A. runs", "the@0 u.s.a@1 u@1 s@2 a@3 run@4");
    analyzer_free(a);
    /* with a charset_table: its words, the blend characters between them */
    a = mk_blend("-", NULL, "english, +", NULL);
    check_doc(a, "C++-Code", "c++-code@0 c++@0 code@1");
    analyzer_free(a);

    {
        /* with stopword_step 0, a dropped first part keeps the variants'
        ** position, and a dropped variant moves nothing */
        AnalyzerConfig cfg = {NULL, "en", 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, NULL, NULL, "at&t", 1, 0,
                              NULL, "&", "trim_none, trim_all", 0, 0, NULL, NULL, NULL, 0};
        a = mk_cfg(&cfg);
        check_doc(a, "AT&T rocks, the AT&T", "att@0 t@1 rocks@2 att@3 t@4");
        check_query(a, "the at&t", "att@0");
        analyzer_free(a);
    }
    check_blend_error("&", "trim_some", 0,
                      "blend_mode: 'trim_some': expected trim_none, trim_head, trim_tail, trim_both, trim_all or "
                      "skip_pure (a comma-separated list)");
    check_blend_error("non_cjk", NULL, 0,
                      "blend_chars: 'non_cjk': expected a character, U+hex, a range such as a..z, a mapping such as "
                      "@->_ or a range of pairs such as U+100..U+17F/2");
    check_blend_error(".", NULL, 1,
                      "blend_chars: '.' cannot be a word character in a table with index_sp='1' (the sentence "
                      "boundary's term is '.')");
    check_blend_error("*", NULL, 0,
                      "blend_chars: '*': '*' cannot be a word character: it is the query language's prefix and "
                      "wildcard operator");
}

/* stopwords_unstemmed='0' (Manticore's default): the stop words are
** stemmed, and a word is dropped where its stem is one of them, in
** documents and queries; min_word_len still looks at the word as written;
** exact forms go with their word. Without stemming it changes nothing. */
static void test_stopwords_stemmed(void **state) {
    (void)state;
    AnalyzerConfig cfg = {"stem_en", "en", 0, 1, 0, 0, NULL, 0, NULL, 2, NULL, 1, 0, NULL, NULL, NULL, "runnings", 0, 0,
                          NULL, NULL, NULL, 1, 0, NULL, NULL, NULL, 0};
    Analyzer *a = mk_cfg(&cfg);
    check_doc(a, "others haves x ran running nothing", "=ran@3 ran@3 =nothing@5 noth@5");
    check_query(a, "others haves ran run", "ran@2");
    assert_false(analyzer_word_indexed(a, "others", 6));
    assert_false(analyzer_word_indexed(a, "x", 1));
    assert_true(analyzer_word_indexed(a, "ran", 3));
    analyzer_free(a);
    /* as written (the default): only the listed forms */
    cfg.bStopwordsStemmed = 0;
    a = mk_cfg(&cfg);
    check_doc(a, "others haves x ran running",
              "=others@0 other@0 =haves@1 have@1 =ran@3 ran@3 =running@4 run@4");
    assert_true(analyzer_word_indexed(a, "others", 6));
    analyzer_free(a);
    /* unstemmed tables: nothing to stem */
    cfg.zMorphology = NULL;
    cfg.bExactWords = 0;
    cfg.bStopwordsStemmed = 1;
    a = mk_cfg(&cfg);
    check_doc(a, "others have xy", "others@0 xy@2");
    analyzer_free(a);
}

static void check_ngram(const char *zMap, int nLen, const char *zNgram, const char *zDoc, const char *zWant) {
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, NULL, NULL, NULL, 0, 0,
                          zMap, NULL, NULL, 0, nLen, zNgram, NULL, NULL, 0};
    Analyzer *a = mk_cfg(&cfg);
    check_doc(a, zDoc, zWant);
    analyzer_free(a);
}

/* ngram_len='1' with ngram_chars (Manticore's way to index CJK): each
** such character is a word of its own, mapped where an item says; the
** CJK aliases take in the CJK letters loupe's default already splits. */
static void test_ngram_chars(void **state) {
    (void)state;
    /* charset_table without CJK: the aliases bring them back, one a word */
    check_ngram("non_cont", 1, "cont", "\xe6\x9d\xb1\xe4\xba\xac" "abc", "\xe6\x9d\xb1@0 \xe4\xba\xac@1 abc@2");
    check_ngram("non_cont", 0, NULL, "\xe6\x9d\xb1\xe4\xba\xac" "abc", "abc@0");
    /* named characters: each a word, mapped; they end the word before */
    check_ngram(NULL, 1, "x, U+3000..U+303F, Q->q", "abxcdQ", "ab@0 x@1 cd@2 q@3");
    {
        AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, NULL, NULL, NULL, 0, 0,
                              NULL, NULL, NULL, 0, 0, "cont", NULL, NULL, 0};
        check_cfg_error(&cfg, "ngram_chars without ngram_len",
                        "ngram_chars needs ngram_len='1' (each of them is then a word of one character)");
        cfg.nNgramLen = 2;
        check_cfg_error(&cfg, "ngram_len 2", "ngram_len 2: only 0 and 1 are supported, as in Manticore");
        cfg.nNgramLen = 1;
        cfg.zNgramChars = "non_cjk";
        check_cfg_error(&cfg, "ngram_chars non_cjk",
                        "ngram_chars: non_cjk and non_cont are no n-gram characters: it takes characters, ranges, "
                        "mappings and cjk, cont, chinese, japanese or korean");
        cfg.zNgramChars = "x->*";
        check_cfg_error(&cfg, "ngram_chars x->*",
                        "ngram_chars: 'x->*': '*' cannot be a word character: it is the query language's prefix and "
                        "wildcard operator");
    }
}

static Analyzer *mk_exc(const char *zMorph, int bSp, const char *zExc, const char *zRules) {
    AnalyzerConfig cfg = {zMorph, "en", 0, 0, bSp, 0, NULL, 0, NULL, 0, NULL, 1, 0, zRules, NULL, zExc, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    return mk_cfg(&cfg);
}

static void check_exc_error(const char *zExc, const char *zWant) {
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, NULL, zExc, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    check_cfg_error(&cfg, zExc, zWant);
}

static void test_exceptions(void **state) {
    (void)state;
    Analyzer *a = mk_exc("stem_en", 1,
                         "C++ => cplusplus\nc++ => cplusplus; C# => csharp; AT & T => AT&T\n"
                         "MS Windows => ms windows; .NET => dotnet; C => clang", "the apps > app");
    /* case for case, whole tokens only; the keyword as written, one
    ** position, no stop word or stemming; the longest source wins */
    check_doc(a, "Coding C++ and C# apps on MS  Windows", "code@0 cplusplus@1 csharp@3 app@4 ms windows@6");
    check_doc(a, "c++, C++11, xC++, Ms Windows, C", "cplusplus@0 clang@1 11@2 xc@3 ms@4 window@5 clang@6");
    check_doc(a, "AT &\tT and AT&T and .NET ASP.NET", "AT&T@0 t@3 dotnet@5 asp@6 net@7");
    /* between words, boundaries and word forms go on as before */
    check_doc(a, "I like C#. The apps", "like@1 csharp@2 .@3 app@4");
    check_query(a, "C++ programming", "cplusplus@0 program@1");
    {
        /* the keyword spans the source's bytes; the unstemmed run has it too */
        Toks t = {0};
        LpError err;
        assert_int_equal(analyzer_run_unstemmed(a, "use AT  & T now", 15, collect, &t, &err), LP_OK);
        assert_int_equal(t.n, 3);
        assert_string_equal(t.a[1].z, "AT&T");
        assert_int_equal(t.a[1].iStart, 4);
        assert_int_equal(t.a[1].iEnd, 11);
        assert_int_equal(t.a[2].iPos, 2);
        toks_free(&t);
    }
    analyzer_free(a);
    /* the later rule for a source wins */
    a = mk_exc(NULL, 0, "X1 => first; X1 => second", NULL);
    check_doc(a, "X1", "second@0");
    analyzer_free(a);
    a = mk_exc(NULL, 0, " ; ", NULL);
    check_doc(a, "C++", "c@0");
    analyzer_free(a);

    check_exc_error("C++ => ", "exceptions rule 1 (line 1, byte 0): its destination is empty");
    check_exc_error("a => b; => x", "exceptions rule 2 (line 1, byte 7): its source is empty");
    check_exc_error("a => =b", "exceptions rule 1 (line 1, byte 0): its destination starts with '=', which the "
                               "index keeps for terms of its own");
    check_exc_error("a => 12345678901234567890123456789012345678901234567890123456789012345",
                    "exceptions rule 1 (line 1, byte 0): its destination is longer than 64 bytes");
    check_exc_error("a\xff => b", "exceptions rule 1 (line 1, byte 0): it is not valid UTF-8");
    check_exc_error("a b", "wordforms rule 1 (line 1, byte 0) 'a b': expected 'source > destination'");
}

static void test_stopwords_list(void **state) {
    (void)state;
    /* the table's own words, split and normalised as the text is, with a
    ** language's list; positions still count */
    AnalyzerConfig cfg = {"stem_en", "en", 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, "-", NULL,
                          "Foo; BAR\nbaz-qux Café\\; x", 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = mk_cfg(&cfg);
    check_doc(a, "the foo bars bar baz-qux CAFE cafés x xs running", "bar@2 cafe@6 xs@8 run@9");
    check_query(a, "FOO the running", "run@2");
    analyzer_free(a);
    /* without a language's list too; an empty list drops nothing */
    AnalyzerConfig c2 = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, NULL, NULL, NULL, "and, or", 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    a = mk_cfg(&c2);
    check_doc(a, "cats and dogs or the", "cats@0 dogs@2 the@4");
    analyzer_free(a);
    c2.zStopwordsList = " ; ";
    a = mk_cfg(&c2);
    check_doc(a, "and or", "and@0 or@1");
    analyzer_free(a);
    /* errors */
    c2.zStopwordsList = "a\xff";
    check_cfg_error(&c2, "stopwords_list", "stopwords_list: invalid UTF-8 at byte 1");
    c2.zStopwordsList = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz";
    check_cfg_error(&c2, "stopwords_list",
                    "stop word 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz' is longer than 48 bytes");
}

static void test_index_sp(void **state) {
    (void)state;
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 1, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = NULL;
    LpError err;
    lp_err_clear(&err);
    if (analyzer_new(&cfg, &a, &err) != LP_OK) fail_msg("analyzer_new: %s", err.zMsg);
    /* a boundary takes a position of its own, between two words only */
    check_doc(a, "One two. Three!", "one@0 two@1 .@2 three@3");
    check_doc(a, ". One? Two?! Three...", "one@0 .@1 two@2 .@3 three@4");
    check_doc(a, "Why? Because", "why@0 .@1 because@2");
    /* Sphinx's exceptions for '.' */
    check_doc(a, "Goldman Sachs S.p.A. Next", "goldman@0 sachs@1 s@2 p@3 a@4 next@5"); /* "A." an initial */
    check_doc(a, "Goldman Sachs S.p.AB. Next", "goldman@0 sachs@1 s@2 p@3 ab@4 .@5 next@6");
    check_doc(a, "pi is 3.14 Next", "pi@0 is@1 3@2 14@3 next@4");
    check_doc(a, "S.p.A., founded", "s@0 p@1 a@2 founded@3");
    check_doc(a, "News Corp. announced it", "news@0 corp@1 announced@2 it@3");
    check_doc(a, "News Corp. Announced", "news@0 corp@1 .@2 announced@3");
    check_doc(a, "John D. Doe", "john@0 d@1 doe@2");
    check_doc(a, "It was D. Then", "it@0 was@1 d@2 then@3");      /* a middle initial, as Sphinx has it */
    check_doc(a, "Plan B.\nThen", "plan@0 b@1 then@2");            /* any white space counts */
    check_doc(a, "Plan BB. Then", "plan@0 bb@1 .@2 then@3");
    check_doc(a, "x.D. Then", "x@0 d@1 then@2");                   /* an initial after anything */
    check_doc(a, "Ends in É. Then", "ends@0 in@1 é@2 .@3 then@4");  /* Sphinx's capitals are ASCII's */
    check_doc(a, "Ein Satz. übrigens", "ein@0 satz@1 .@2 übrigens@3"); /* and so its lower case letters */
    check_doc(a, "Inc. (the firm", "inc@0 the@1 firm@2");            /* '(' and a lower-case letter */
    check_doc(a, "Inc. (The firm", "inc@0 .@1 the@2 firm@3");
    /* titles and salutations: a capital and a letter that is none, MR, MS
    ** and DR, mrs and drs in any case */
    check_doc(a, "Mr. Doe", "mr@0 doe@1");
    check_doc(a, "Xx. Doe", "xx@0 doe@1");
    check_doc(a, "DR. Doe", "dr@0 doe@1");
    check_doc(a, "MS. Doe", "ms@0 doe@1");
    check_doc(a, "XX. Doe", "xx@0 .@1 doe@2");
    check_doc(a, "xX. Doe", "xx@0 .@1 doe@2");
    check_doc(a, "Mrs. Doe", "mrs@0 doe@1");
    check_doc(a, "dRS. Doe", "drs@0 doe@1");
    check_doc(a, "Mrx. Doe", "mrx@0 .@1 doe@2");
    check_doc(a, "end.-Doe", "end@0 doe@1");                         /* '-' and '_' right after it */
    check_doc(a, "end.\xe2\x80\x9c" "Doe", "end@0 .@1 doe@2");      /* a quotation mark: no word's */
    /* paragraphs: a blank line; it outranks the sentence's end before it */
    check_doc(a, "One.\n\nTwo\n \t\r\nThree\nfour", "one@0 ..@1 two@2 ..@3 three@4 four@5");
    check_doc(a, "One\xe2\x80\xa9Two", "one@0 ..@1 two@2");
    check_doc(a, "一个句子\xe3\x80\x82第二", "一@0 个@1 句@2 子@3 .@4 第@5 二@6");
    check_doc(a, "Full\xef\xbc\x81width\xef\xbc\x9fmarks", "full@0 .@1 width@2 .@3 marks@4");
    /* the terminator's bytes are the boundary's offsets */
    Toks t = run_full(a, "ab. Cd", 0, NULL);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.a[1].iStart, 2);
    assert_int_equal(t.a[1].iEnd, 3);
    toks_free(&t);
    /* a base position carries on; queries and unstemmed runs have no boundaries */
    t = run_full(a, "Aaa. B", 10, NULL);
    assert_int_equal(t.a[2].iPos, 12);
    toks_free(&t);
    check_query(a, "One. Two", "one@0 two@1");
    Toks u = {0};
    assert_int_equal(analyzer_run_unstemmed(a, "One. Two", 8, collect, &u, &err), LP_OK);
    assert_int_equal(u.n, 2);
    toks_free(&u);
    analyzer_free(a);
    /* without index_sp, nothing changes */
    a = NULL;
    cfg.bIndexSp = 0;
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    check_doc(a, "One two. Three!\n\nFour", "one@0 two@1 three@2 four@3");
    analyzer_free(a);
}

static int count_tokens(void *ctx, const Token *t) {
    (void)ctx;
    (void)t;
    return 0;
}

static void test_phrase_boundary(void **state) {
    (void)state;
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, "U+2C, ?, U+2026", 100};
    Analyzer *a = NULL;
    LpError err;
    lp_err_clear(&err);
    if (analyzer_new(&cfg, &a, &err) != LP_OK) fail_msg("analyzer_new: %s", err.zMsg);
    assert_true(analyzer_has_phrase_boundary(a));
    assert_int_equal(analyzer_phrase_boundary_step(a), 100);
    /* a boundary followed by a separator adds the step, once per gap */
    check_doc(a, "one two, three four", "one@0 two@1 three@102 four@103");
    check_doc(a, "one,, ?two", "one@0 two@101");
    check_doc(a, "one\xe2\x80\xa6 two", "one@0 two@101");
    /* not before a word's character, nor before the first word */
    check_doc(a, "x,y z", "x@0 y@1 z@2");
    check_doc(a, ", one, two", "one@0 two@101");
    check_doc(a, "one two,", "one@0 two@1");
    /* the length leaves the steps out; a base position carries on */
    uint32_t iEnd = 0;
    Toks t = run_full(a, "a, b, c", 7, &iEnd);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.a[2].iPos, 209);
    assert_int_equal(iEnd, 10);
    toks_free(&t);
    /* a large text with the largest step: its steps are bounded by its
    ** boundary characters, not by its words, so one boundary in 13 MB
    ** passes; one after every word of as long a text would overflow
    ** positions, an error before any word goes out */
    AnalyzerConfig big = cfg;
    big.phraseBoundaryStep = ANALYZER_MAX_PHRASE_STEP;
    Analyzer *pBig = NULL;
    assert_int_equal(analyzer_new(&big, &pBig, &err), LP_OK);
    size_t nBig = 13200000;
    char *zBig = malloc(nBig);
    assert_non_null(zBig);
    for (size_t i = 0; i < nBig; i += 3) memcpy(zBig + i, "ab ", 3);
    zBig[2] = ',';
    uint32_t iBigEnd = 0;
    assert_int_equal(analyzer_run(pBig, zBig, nBig, 0, count_tokens, NULL, &iBigEnd, &err), LP_OK);
    assert_int_equal(iBigEnd, nBig / 3);
    for (size_t i = 0; i < nBig; i += 3) memcpy(zBig + i, "a, ", 3);
    lp_err_clear(&err);
    assert_int_equal(analyzer_run(pBig, zBig, nBig, 0, count_tokens, NULL, NULL, &err), LP_LIMIT);
    assert_non_null(strstr(err.zMsg, "would overflow positions"));
    free(zBig);
    analyzer_free(pBig);
    /* queries and unstemmed runs have none */
    check_query(a, "two, three", "two@0 three@1");
    Toks u = {0};
    assert_int_equal(analyzer_run_unstemmed(a, "a, b", 4, collect, &u, &err), LP_OK);
    assert_int_equal(u.a[1].iPos, 1);
    toks_free(&u);
    /* the gaps the highlighter asks about */
    assert_true(analyzer_gap_is_phrase_boundary(a, "a, b", 1, 3));
    assert_false(analyzer_gap_is_phrase_boundary(a, "a,b", 1, 2));
    assert_false(analyzer_gap_is_phrase_boundary(a, "a. b", 1, 3));
    analyzer_free(a);
    /* with index_sp too: both take their places */
    cfg.bIndexSp = 1;
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    check_doc(a, "One, two. Three", "one@0 two@101 .@102 three@103");
    analyzer_free(a);
    /* under a charset_table (the other scanner) */
    cfg.bIndexSp = 0;
    cfg.zCharsetTable = "non_cjk, U+2D";
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    check_doc(a, "x-y, z", "x-y@0 z@101");
    analyzer_free(a);
    /* an exception's keyword after a boundary goes the step further on too */
    cfg.zCharsetTable = NULL;
    cfg.zExceptions = "AT & T => att";
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    check_doc(a, "one, AT & T, two", "one@0 att@101 two@202");
    analyzer_free(a);
    cfg.zExceptions = NULL;
    /* step 0: positions as without boundaries */
    cfg.phraseBoundaryStep = 0;
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    check_doc(a, "one, two", "one@0 two@1");
    analyzer_free(a);
    /* what cannot be a boundary */
    static const struct {
        const char *zPb, *zCharset, *zBlend, *zIgnore;
        int step;
        const char *zErr;
    } aBad[] = {
        {"a", NULL, NULL, NULL, 0, "U+0061 is a character of words"},
        {"U+2D", "non_cjk, U+2D", NULL, NULL, 0, "U+002D is a character of words (charset_table)"},
        {"&", NULL, "&", NULL, 0, "U+0026 is a blend character"},
        {"U+AD", NULL, NULL, "U+AD", 0, "U+00AD is an ignored character"},
        {"U+2C", NULL, NULL, NULL, 1001, "phrase_boundary_step must be from 0 to 1000"},
        {"U+2C..", NULL, NULL, NULL, 0, "phrase_boundary"},
    };
    for (size_t i = 0; i < sizeof(aBad) / sizeof(aBad[0]); i++) {
        AnalyzerConfig bad = cfg;
        bad.zPhraseBoundary = aBad[i].zPb;
        bad.zCharsetTable = aBad[i].zCharset;
        bad.zBlendChars = aBad[i].zBlend;
        bad.zIgnoreChars = aBad[i].zIgnore;
        bad.phraseBoundaryStep = aBad[i].step;
        a = NULL;
        lp_err_clear(&err);
        assert_int_equal(analyzer_new(&bad, &a, &err), LP_BADINPUT);
        assert_null(a);
        if (!strstr(err.zMsg, aBad[i].zErr)) fail_msg("%s: got \"%s\"", aBad[i].zPb, err.zMsg);
    }
}

/* ------------------------------------------------------------ html_strip */

static void check_strip_attrs(const char *z, const char *const *azRemove, const char *const *azAttr,
                              const char *zWant) {
    StrBuf sb = {0};
    html_strip(z, strlen(z), azRemove, azAttr, &sb);
    assert_false(sb.oom);
    const char *zGot = sb.z ? sb.z : "";
    assert_true(sb.n <= strlen(z)); /* never longer than the input */
    if (strcmp(zGot, zWant) != 0) {
        char zCopy[512];
        snprintf(zCopy, sizeof(zCopy), "%s", zGot);
        strbuf_free(&sb);
        fail_msg("strip(\"%s\") → \"%s\", want \"%s\"", z, zCopy, zWant);
    }
    /* html_strip_map gives the same text, each byte mapped to the input
    ** that produced it: ranges in order, inside the input, a byte of text
    ** (a range of one) itself */
    size_t n = strlen(z);
    uint32_t *aMap = malloc(sizeof(uint32_t) * 2 * (n ? n : 1));
    assert_non_null(aMap);
    StrBuf mapped = {0};
    html_strip_map(z, n, azRemove, azAttr, aMap, &mapped);
    assert_int_equal(mapped.n, sb.n);
    assert_true(sb.n == 0 || memcmp(mapped.z, sb.z, sb.n) == 0);
    for (size_t i = 0; i < mapped.n; i++) {
        assert_true(aMap[2 * i] < aMap[2 * i + 1] && aMap[2 * i + 1] <= n);
        if (i > 0) assert_true(aMap[2 * i] >= aMap[2 * i - 2]);
        if (aMap[2 * i + 1] - aMap[2 * i] == 1) assert_int_equal(z[aMap[2 * i]], mapped.z[i]);
    }
    free(aMap);
    strbuf_free(&mapped);
    strbuf_free(&sb);
}

static void check_strip(const char *z, const char *const *azRemove, const char *zWant) {
    check_strip_attrs(z, azRemove, NULL, zWant);
}

static void test_html_strip_map(void **state) {
    (void)state;
    const char *z = "a<b>c</b>&eacute;<p>d";
    uint32_t aMap[2 * 32];
    StrBuf sb = {0};
    html_strip_map(z, strlen(z), NULL, NULL, aMap, &sb);
    assert_int_equal(sb.n, 7); /* "ac" "\xc3\xa9" "\n\n" "d" */
    static const uint32_t aWant[] = {0, 1, 4, 5, 9, 17, 9, 17, 17, 20, 17, 20, 20, 21};
    for (size_t i = 0; i < 14; i++) assert_int_equal(aMap[i], aWant[i]);
    strbuf_free(&sb);
}

static void test_html_strip(void **state) {
    (void)state;
    static const char *const azRemove[] = {"script", "style", NULL};
    /* inline tags vanish, others leave a space, block-level ones a blank line */
    check_strip("te<b>st</b> text", NULL, "test text");
    check_strip("te<p>st</p>", NULL, "te\n\nst\n\n");
    check_strip("a<br>b<BR/>c", NULL, "a b c");
    check_strip("<A HREF=\"x>y\" title='a>b'>link</a>", NULL, "link");
    check_strip("x<!-- a <b> comment -->y<!DOCTYPE html>z<?xml v?>w", NULL, "x y z w");
    /* what is not markup stays */
    check_strip("a < b > c", NULL, "a < b > c");
    check_strip("1<2 and x<y", NULL, "1<2 and x<y"); /* "<y" has no '>': text */
    check_strip("x <unfinished tag", NULL, "x <unfinished tag");
    check_strip("<!-- no end", NULL, "<!-- no end");
    check_strip("</ b>", NULL, "</ b>");
    /* references */
    check_strip("caf&eacute; &amp; &lt;b&gt; &#233;&#xE9;&#XE9; &nbsp;", NULL,
                "caf\xc3\xa9 & <b> \xc3\xa9\xc3\xa9\xc3\xa9 \xc2\xa0");
    check_strip("&Mu;&ne;&#0;&#x10FFFF;", NULL, "\xce\x9c\xe2\x89\xa0\xef\xbf\xbd\xf4\x8f\xbf\xbf");
    check_strip("&bogus; &amp &#xD800; &#x110000; &#; &", NULL, "&bogus; &amp &#xD800; &#x110000; &#; &");
    /* removed elements, with their content */
    check_strip("a<script type=x>if (a<b) x();</script>b<STYLE>p{}</Style >c", azRemove, "a b c");
    check_strip("a<script>never closed", azRemove, "a ");
    check_strip("a<scripts>kept</scripts>b", azRemove, "a kept b");
    check_strip("a<script>x</script>b", NULL, "a x b");
    /* html_index_attrs: listed attributes of opening tags are text */
    static const char *const azAttr[] = {"img", "alt", "img", "title", "a", "title", "td", "abbr", NULL};
    check_strip_attrs("pre<img src=x.png alt=\"A &amp; B\" title='t'>post", NULL, azAttr,
                      "pre A & B t post");
    check_strip_attrs("<A HREF=\"u\" TITLE = spaced>link</a>", NULL, azAttr, " spaced link");
    check_strip_attrs("<td abbr=\"x>y\">c</td>", NULL, azAttr, "\n\n x>y c\n\n");
    check_strip_attrs("<img alt>x<img alt=''>y<p title=no>z", NULL, azAttr, "x  y\n\nz");
    check_strip_attrs("<img alt=a/>", NULL, azAttr, " a/ ");
    check_strip_attrs("te<b title=x>st", NULL, azAttr, "test"); /* b is not listed */
    check_strip_attrs("<img alt=x>", NULL, NULL, "");
    /* through the analyzer: the words of the stripped text */
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 1, 1, "script, STYLE", 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = NULL;
    LpError err;
    lp_err_clear(&err);
    if (analyzer_new(&cfg, &a, &err) != LP_OK) fail_msg("analyzer_new: %s", err.zMsg);
    assert_true(analyzer_html_strip(a));
    StrBuf buf = {0};
    const char *z;
    size_t n;
    const char *zDoc = "<p>One <i>t</i>wo.</p><p>Three</p><script>four</script>";
    assert_int_equal(analyzer_doc_text(a, zDoc, strlen(zDoc), &buf, &z, &n, &err), LP_OK);
    Toks t = {0};
    assert_int_equal(analyzer_run(a, z, n, 0, collect, &t, NULL, &err), LP_OK);
    assert_int_equal(t.n, 4); /* one two .. three */
    assert_string_equal(t.a[1].z, "two");
    assert_string_equal(t.a[2].z, "..");
    assert_string_equal(t.a[3].z, "three");
    toks_free(&t);
    /* invalid UTF-8 is refused at its offset in the original, even in a tag */
    assert_int_equal(analyzer_doc_text(a, "ab<b \xff>", 7, &buf, &z, &n, &err), LP_BADINPUT);
    assert_int_equal(err.pos, 5);
    strbuf_free(&buf);
    analyzer_free(a);
    /* without the option the text is the text */
    cfg.bHtmlStrip = 0;
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK);
    assert_int_equal(analyzer_doc_text(a, "<b>x", 4, &buf, &z, &n, &err), LP_OK);
    assert_true(z[0] == '<' && n == 4);
    analyzer_free(a);
    /* html_remove_elements must name elements */
    cfg.zHtmlRemove = "script, 1x";
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_BADINPUT);
    assert_string_equal(err.zMsg, "html_remove_elements: '1x' is not an element name (expected names "
                                  "such as 'script, style')");
    /* html_index_attrs: element=attribute[,attribute]; ... */
    cfg.zHtmlRemove = NULL;
    cfg.bHtmlStrip = 1;
    cfg.zHtmlIndexAttrs = " IMG = alt , Title ;a=title; ";
    if (analyzer_new(&cfg, &a, &err) != LP_OK) fail_msg("analyzer_new: %s", err.zMsg);
    zDoc = "<a title=\"Go home\" href=x>link</a><img alt=Logo title='The &quot;logo&quot;'>";
    assert_int_equal(analyzer_doc_text(a, zDoc, strlen(zDoc), &buf, &z, &n, &err), LP_OK);
    assert_int_equal(analyzer_run(a, z, n, 0, collect, &t, NULL, &err), LP_OK);
    const char *const azWant[] = {"go", "home", "link", "logo", "the", "logo"};
    assert_int_equal(t.n, 6);
    for (int i = 0; i < 6; i++) assert_string_equal(t.a[i].z, azWant[i]);
    toks_free(&t);
    strbuf_free(&buf);
    analyzer_free(a);
    static const char *const azBad[] = {"img", "img=", "=alt", "1mg=alt", "img=alt; a", "img=al t$"};
    for (size_t i = 0; i < LP_ARRAY_SIZE(azBad); i++) {
        cfg.zHtmlIndexAttrs = azBad[i];
        assert_int_equal(analyzer_new(&cfg, &a, &err), LP_BADINPUT);
        if (!strstr(err.zMsg, "html_index_attrs: '") || !strstr(err.zMsg, "is not element=attribute")) {
            fail_msg("%s: %s", azBad[i], err.zMsg);
        }
    }
}

/* ---------------------------------------------------------- index_zones */

/* The tokens analyzer_run_doc gives for z, "term@pos ...". */
static void check_zones(const Analyzer *a, const char *z, const char *zWant) {
    Toks t = {0};
    LpError err;
    lp_err_clear(&err);
    uint32_t iEnd = 0;
    if (analyzer_run_doc(a, z, strlen(z), 0, collect, &t, &iEnd, &err) != LP_OK) {
        fail_msg("analyzer_run_doc(\"%s\"): %s", z, err.zMsg);
    }
    char zGot[1024] = "";
    uint32_t nWordEnd = 0;
    for (int i = 0; i < t.n; i++) {
        size_t k = strlen(zGot);
        snprintf(zGot + k, sizeof(zGot) - k, "%s%s@%u", i ? " " : "", t.a[i].z, t.a[i].iPos);
        if (t.a[i].z[0] != ANALYZER_ZONE_MARK && t.a[i].iPos + 1 > nWordEnd) nWordEnd = t.a[i].iPos + 1;
    }
    /* zones' terms take no position: the length is the words' */
    assert_int_equal(iEnd, nWordEnd);
    toks_free(&t);
    if (strcmp(zGot, zWant) != 0) fail_msg("\"%s\" → \"%s\", want \"%s\"", z, zGot, zWant);
}

typedef struct ZoneLog {
    char z[512];
} ZoneLog;

static void zone_log(void *ctx, const char *zName, size_t nName, size_t iOut, int bClose) {
    ZoneLog *l = ctx;
    size_t k = strlen(l->z);
    snprintf(l->z + k, sizeof(l->z) - k, "%s%s%.*s@%zu", k ? " " : "", bClose ? "/" : "", (int)nName, zName, iOut);
}

static void test_index_zones(void **state) {
    (void)state;
    /* html_strip_zones reports the listed elements' tags where they are */
    static const char *const azZone[] = {"h*", "th", NULL};
    ZoneLog log = {""};
    HtmlZones hz = {azZone, zone_log, &log};
    StrBuf sb = {0};
    const char *zDoc = "a<H2 class=x>b</h2><th>c<hr/>d</TH><thead>e</thead><b>f</b><hr>g";
    html_strip_zones(zDoc, strlen(zDoc), NULL, NULL, &hz, &sb);
    /* "a\n\nb\n\n\n\nc d\n\n\n\ne\n\nf g": <hr/> closes itself (no span),
    ** thead is neither th nor h* */
    assert_string_equal(log.z, "H2@1 /h2@4 th@6 /TH@11 hr@19");
    strbuf_free(&sb);

    AnalyzerConfig cfg = {"stem_en", NULL, 0, 0, 0, 1, "script", 0, NULL, 0, " H*,th , title,B", 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = NULL;
    LpError err;
    lp_err_clear(&err);
    if (analyzer_new(&cfg, &a, &err) != LP_OK) fail_msg("analyzer_new: %s", err.zMsg);
    assert_true(analyzer_has_zones(a));
    assert_true(analyzer_zone_indexed(a, "h1", 2) && analyzer_zone_indexed(a, "h", 1) &&
                analyzer_zone_indexed(a, "th", 2) && analyzer_zone_indexed(a, "title", 5));
    assert_false(analyzer_zone_indexed(a, "t", 1) || analyzer_zone_indexed(a, "thead", 5) ||
                 analyzer_zone_indexed(a, "bb", 2));
    /* a span's terms at its first and last word; words after the markers */
    check_zones(a, "<title>Running cats</title> and <b>dogs</b>",
                "run@0 cat@1 and@2 dog@3 <b@3 </b@3 <title@0 </title@1");
    /* one word; spans of one name in order; names lower-cased */
    check_zones(a, "<TH>one</TH> two <th>three four</th>", "one@0 two@1 three@2 four@3 <th@0 <th@2 </th@0 </th@3");
    /* nested and overlapping spans of one name are one; other names apart */
    check_zones(a, "<h1>a <h1>b</h1> c</h1> <h2>d <h1>e</h1></h2>",
                "a@0 b@1 c@2 d@3 e@4 <h1@0 <h1@4 </h1@2 </h1@4 <h2@3 </h2@4");
    /* a span with no word is not indexed; an unclosed one ends with the
    ** field; a stray closing tag is ignored */
    check_zones(a, "x <th></th> <th> </th> </h3> <h4>y z", "x@0 y@1 z@2 <h4@1 </h4@2");
    /* a span holds the words wholly inside it: an inline tag inside a word
    ** does not split it, and the word is in no span; a block-level tag
    ** splits it; a removed element holds no zone */
    check_zones(a, "ca<b>t</b>s <script><th>x</th></script>", "cat@0");
    check_zones(a, "ca<h5>t</h5>s", "ca@0 t@1 s@2 <h5@1 </h5@1");
    /* no zones: the words only, as analyzer_doc_text + analyzer_run */
    check_zones(a, "no markup at all", "no@0 markup@1 at@2 all@3");
    /* invalid UTF-8 is refused where it is */
    Toks t = {0};
    assert_int_equal(analyzer_run_doc(a, "<th>\xff</th>", 9, 0, collect, &t, NULL, &err), LP_BADINPUT);
    assert_int_equal(err.pos, 4);
    toks_free(&t);
    analyzer_free(a);

    /* index_sp: boundaries take positions inside spans too */
    cfg.bIndexSp = 1;
    cfg.zMorphology = NULL;
    if (analyzer_new(&cfg, &a, &err) != LP_OK) fail_msg("analyzer_new: %s", err.zMsg);
    check_zones(a, "<h1>One. Two</h1> three", "one@0 .@1 two@2 ..@3 three@4 <h1@0 </h1@2");
    analyzer_free(a);

    /* the option's errors */
    cfg.bHtmlStrip = 0;
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_BADINPUT);
    assert_string_equal(err.zMsg, "index_zones needs html_strip='1': zones are HTML elements");
    cfg.bHtmlStrip = 1;
    static const char *const azBad[] = {"h1, 2x", "*", "h-1", "t*t", "abcdefghijklmnopqrstuvwxyzabcdefg"};
    for (size_t i = 0; i < LP_ARRAY_SIZE(azBad); i++) {
        cfg.zIndexZones = azBad[i];
        assert_int_equal(analyzer_new(&cfg, &a, &err), LP_BADINPUT);
        if (!strstr(err.zMsg, "index_zones: '") || !strstr(err.zMsg, "is not an element name")) {
            fail_msg("%s: %s", azBad[i], err.zMsg);
        }
    }
    cfg.zIndexZones = " , ";
    assert_int_equal(analyzer_new(&cfg, &a, &err), LP_OK); /* an empty list: no zones */
    assert_false(analyzer_has_zones(a));
    analyzer_free(a);
}

static void test_query_stars(void **state) {
    (void)state;
    Analyzer *a = mk("stem_en", "en");
    check_query(a, "exact * phrase", "exact@0 phrase@2");
    check_query(a, "x * * y", "x@0 y@3");
    check_query(a, "x ** y", "x@0 y@3");
    check_query(a, "* cats *", "cat@1");
    check_query(a, "the * cats", "cat@2");          /* a stop word's place counts too */
    check_query(a, "cats* dogs", "cat@0 dog@1");     /* ends a word: no place */
    check_query(a, "cats *dogs", "cat@0 dog@2");
    check_query(a, "caf\xc3\xa9 * x", "caf\xc3\xa9@0 x@2");
    check_query(a, "\xe7\x8c\xab * \xe7\x8b\x97", "\xe7\x8c\xab@0 \xe7\x8b\x97@2"); /* CJK */
    /* ="…" (every word exact) counts them alike */
    Analyzer *e = mk_exact("stem_en", NULL);
    Toks t = {0};
    LpError err;
    lp_err_clear(&err);
    assert_int_equal(analyzer_run_query(e, "Running * cats", 14, 1, collect, &t, &err), LP_OK);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.a[1].z, "=cats");
    assert_int_equal(t.a[1].iPos, 2);
    toks_free(&t);
    analyzer_free(e);
    /* a document's stars are separators */
    uint32_t iEnd = 0;
    t = run_full(a, "exact * phrase", 0, &iEnd);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.a[1].iPos, 1);
    assert_int_equal(iEnd, 2);
    toks_free(&t);
    assert_int_equal(analyzer_run_unstemmed(a, "exact * phrase", 14, collect, &t, &err), LP_OK);
    assert_int_equal(t.a[1].iPos, 1);
    toks_free(&t);
    /* as is analyzer_collect's query mode */
    TokenList l = {0};
    assert_int_equal(analyzer_collect(a, "x * y", 5, ANALYZE_QUERY, &l, &err), LP_OK);
    assert_int_equal(l.a.n, 2);
    assert_int_equal(l.a.a[1].iPos, 2);
    token_list_free(&l);
    analyzer_free(a);
}


/* ------------------------------------------------------ edit distance */

/* The whole table, no bound: the reference both implementations answer
** to. */
static int ref_distance(const uint32_t *a, int na, const uint32_t *b, int nb) {
    int d[EDIT_WORD_MAX + 1][EDIT_WORD_MAX + 1];
    for (int i = 0; i <= na; i++) d[i][0] = i;
    for (int j = 0; j <= nb; j++) d[0][j] = j;
    for (int i = 1; i <= na; i++) {
        for (int j = 1; j <= nb; j++) {
            int x = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < x) x = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < x) x = d[i][j - 1] + 1;
            d[i][j] = x;
        }
    }
    return d[na][nb];
}

/* Code points from UTF-8 (valid input). */
static int to_cps(const char *z, uint32_t *a) {
    int n = 0;
    for (size_t i = 0, nz = strlen(z); i < nz;) {
        int len = utf8_decode((const unsigned char *)z + i, nz - i, &a[n++]);
        assert_true(len > 0);
        i += (size_t)len;
    }
    return n;
}

static void test_edit_distance(void **state) {
    (void)state;
    static const struct {
        const char *a, *b;
        int d;
    } aCase[] = {{"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"protien", "protein", 2}, {"abc", "", 3},
                 {"a", "a", 0}, {"naïve", "naive", 1}, {"東京", "京都", 2}, {"straße", "strasse", 2},
                 {"insulen", "insulin", 1}, {"ab", "ba", 2}};
    for (size_t c = 0; c < sizeof(aCase) / sizeof(aCase[0]); c++) {
        uint32_t a[EDIT_WORD_MAX], b[EDIT_WORD_MAX];
        int na = to_cps(aCase[c].a, a), nb = to_cps(aCase[c].b, b);
        for (int max = 0; max <= 5; max++) {
            int want = aCase[c].d > max ? max + 1 : aCase[c].d;
            assert_int_equal(edit_distance(a, na, b, nb, max), want);
            assert_int_equal(edit_distance(b, nb, a, na, max), want);
            EditPattern p;
            edit_pattern_init(&p, a, na);
            assert_int_equal(edit_pattern_distance(&p, aCase[c].b, (int)strlen(aCase[c].b), max), want);
            if (nb > 0) {
                edit_pattern_init(&p, b, nb);
                assert_int_equal(edit_pattern_distance(&p, aCase[c].a, (int)strlen(aCase[c].a), max), want);
            }
        }
    }
    /* a byte that starts no character is one, U+FFFD */
    uint32_t aBad[] = {'a', 0xFFFD, 'b'};
    EditPattern p;
    edit_pattern_init(&p, aBad, 3);
    assert_int_equal(edit_pattern_distance(&p, "a\xff" "b", 3, 4), 0);
    assert_int_equal(edit_pattern_distance(&p, "a\xc3" "b", 3, 4), 0);
    assert_int_equal(edit_pattern_distance(&p, "axb", 3, 4), 1);

    /* random words over a small alphabet (ASCII, two-byte and three-byte
    ** characters), every length up to EDIT_WORD_MAX, against the table */
    static const uint32_t aAlpha[] = {'a', 'b', 'c', 0xE9, 0x6771, 'd'};
    unsigned seed = 12345;
    for (int iter = 0; iter < 20000; iter++) {
        uint32_t a[EDIT_WORD_MAX], b[EDIT_WORD_MAX];
        seed = seed * 1103515245u + 12345u;
        int na = 1 + (int)((seed >> 8) % (iter % 10 == 0 ? EDIT_WORD_MAX : 12));
        seed = seed * 1103515245u + 12345u;
        int nb = (int)((seed >> 8) % (iter % 10 == 0 ? EDIT_WORD_MAX + 1 : 13));
        seed = seed * 1103515245u + 12345u;
        int nAlpha = 2 + (int)((seed >> 8) % 5);
        char zb[4 * EDIT_WORD_MAX];
        size_t nz = 0;
        for (int i = 0; i < na; i++) {
            seed = seed * 1103515245u + 12345u;
            a[i] = aAlpha[(seed >> 8) % (unsigned)nAlpha];
        }
        for (int j = 0; j < nb; j++) {
            seed = seed * 1103515245u + 12345u;
            b[j] = aAlpha[(seed >> 8) % (unsigned)nAlpha];
            nz += utf8_encode(b[j], zb + nz);
        }
        int ref = ref_distance(a, na, b, nb);
        int max = iter % 3 == 0 ? EDIT_WORD_MAX : iter % 7;
        int want = ref > max ? max + 1 : ref;
        assert_int_equal(edit_distance(a, na, b, nb, max), want);
        edit_pattern_init(&p, a, na);
        assert_int_equal(edit_pattern_distance(&p, zb, (int)nz, max), want);
        /* to the nearest prefix, suffix and part of b: the least over them */
        int aRef[4] = {ref, na, na, na};
        for (int i = 0; i <= nb; i++) {
            for (int k = i; k <= nb; k++) {
                int d = ref_distance(a, na, b + i, k - i);
                if (i == 0 && d < aRef[EDIT_PREFIX]) aRef[EDIT_PREFIX] = d;
                if (k == nb && d < aRef[EDIT_SUFFIX]) aRef[EDIT_SUFFIX] = d;
                if (d < aRef[EDIT_INFIX]) aRef[EDIT_INFIX] = d;
            }
        }
        for (int mode = 0; mode < 4; mode++) {
            int w = aRef[mode] > max ? max + 1 : aRef[mode];
            if (edit_pattern_distance_to(&p, zb, (int)nz, max, mode) != w) {
                fail_msg("iteration %d mode %d: got %d, want %d", iter, mode,
                         edit_pattern_distance_to(&p, zb, (int)nz, max, mode), w);
            }
        }
    }
    /* a word being typed: "helo" completes to "hello world" in one edit */
    uint32_t aw[] = {'h', 'e', 'l', 'o'};
    edit_pattern_init(&p, aw, 4);
    assert_int_equal(edit_pattern_distance_to(&p, "hello world", 11, 3, EDIT_PREFIX), 1);
    assert_int_equal(edit_pattern_distance_to(&p, "help", 4, 3, EDIT_PREFIX), 1);
    assert_int_equal(edit_pattern_distance_to(&p, "", 0, 3, EDIT_PREFIX), 3 + 1);
    assert_int_equal(edit_pattern_distance_to(&p, "xyz", 3, 2, EDIT_PREFIX), 3);
    assert_int_equal(edit_pattern_distance_to(&p, "othello", 7, 3, EDIT_SUFFIX), 1);
    assert_int_equal(edit_pattern_distance_to(&p, "othellos", 8, 3, EDIT_SUFFIX), 2);
    assert_int_equal(edit_pattern_distance_to(&p, "othellos", 8, 3, EDIT_INFIX), 1);
}

/* The text b[0..nb) as UTF-8 into z (room for 4 * nb bytes), each
** character's end into aEnd[1..nb] (aEnd[0] = 0): the bytes. */
static int encode_ends(const uint32_t *b, int nb, char *z, int *aEnd) {
    int nz = 0;
    aEnd[0] = 0;
    for (int j = 0; j < nb; j++) aEnd[j + 1] = nz += (int)utf8_encode(b[j], z + nz);
    return nz;
}

static int cmp_text(const void *x, const void *y) {
    const uint32_t *a = x, *b = y; /* [0]: length, then the characters */
    char za[4 * 32], zb[4 * 32];
    int ea[33], eb[33];
    int na = encode_ends(a + 1, (int)a[0], za, ea), nb = encode_ends(b + 1, (int)b[0], zb, eb);
    int c = memcmp(za, zb, (size_t)(na < nb ? na : nb));
    return c ? c : na - nb;
}

/* An EditWalk over sorted lists of random texts (many sharing prefixes),
** against the table: a text's distance is edit_pattern_distance_to's (or
** max + 1 past maxChars), and the same as a walk of that text alone; a
** prefix it calls past hope has no extension within max and of at most
** maxChars characters (random ones, and the text), and the prefix a
** character shorter is not past hope; when it finds none, some extension
** is near (the text completed by the rest of the word from some
** position), maxChars aside. */
static void test_edit_walk(void **state) {
    (void)state;
    /* letters, and two characters that are not: a digit, a symbol */
    static const uint32_t aAlpha[] = {'a', 'b', 'c', 0xE9, 0x6771, 'd', 'e', '1', 0x2603};
    unsigned seed = 777;
#define NEXT() (seed = seed * 1103515245u + 12345u, (seed >> 8))
    int nDeadSeen = 0, nLiveSeen = 0, nSteps = 0;
    for (int iter = 0; iter < 1500; iter++) {
        uint32_t a[EDIT_WORD_MAX];
        int na = 1 + (int)(NEXT() % 10), nAlpha = 2 + (int)(NEXT() % 8);
        int max = (int)(NEXT() % 4), mode = (int)(NEXT() % 4), bLetters = (int)(NEXT() % 2);
        int maxChars = NEXT() % 3 ? EDIT_WALK_MAX : (int)(NEXT() % 12);
        for (int i = 0; i < na; i++) a[i] = aAlpha[NEXT() % (unsigned)nAlpha];
        /* texts: [0] the length, then up to 14 characters; a few grown
        ** from the word, so that some are near */
        uint32_t aText[40][16];
        int nText = 1 + (int)(NEXT() % 40);
        for (int t = 0; t < nText; t++) {
            int nb = (int)(NEXT() % 15);
            aText[t][0] = (uint32_t)nb;
            for (int j = 0; j < nb; j++) {
                aText[t][1 + j] = NEXT() % 3 == 0 && j < na ? a[j] : aAlpha[NEXT() % (unsigned)nAlpha];
            }
        }
        qsort(aText, (size_t)nText, sizeof(aText[0]), cmp_text);
        EditPattern p;
        edit_pattern_init(&p, a, na);
        EditWalk *w = malloc(sizeof(EditWalk)), *w1 = malloc(sizeof(EditWalk));
        assert_non_null(w);
        assert_non_null(w1);
        edit_walk_init(w, &p, max, mode, maxChars, bLetters);
        for (int t = 0; t < nText; t++) {
            const uint32_t *b = aText[t] + 1;
            int nb = (int)aText[t][0];
            char zb[4 * 16];
            int aEnd[17];
            int nz = encode_ends(b, nb, zb, aEnd);
            int nDead = -1, nChars = -1, nDead1 = -1, nChars1 = -1;
            int d = edit_walk_next(w, zb, nz, &nDead, &nChars);
            edit_walk_init(w1, &p, max, mode, maxChars, bLetters);
            assert_int_equal(edit_walk_next(w1, zb, nz, &nDead1, &nChars1), d);
            assert_int_equal(nDead1, nDead);
            nSteps++;
            int ref = edit_pattern_distance_to(&p, zb, nz, max, mode);
            int bOther = 0; /* holds a character that is not a letter */
            for (int j = 0; j < nb; j++) bOther |= b[j] == '1' || b[j] == 0x2603;
            if (nDead == 0) {
                nLiveSeen++;
                assert_int_equal(nChars, nb);
                assert_int_equal(d, nb > maxChars ? max + 1 : ref);
                assert_false(bLetters && bOther);
                /* some extension is wanted: the rest of the word from row i
                ** (the least cell of the last column is at most max) */
                int bNear = 0;
                for (int i = 0; i <= na && !bNear; i++) {
                    char ze[4 * (16 + EDIT_WORD_MAX)];
                    int ne = nz;
                    memcpy(ze, zb, (size_t)nz);
                    for (int k = i; k < na; k++) ne += (int)utf8_encode(a[k], ze + ne);
                    bNear = edit_pattern_distance_to(&p, ze, ne, max, mode) <= max;
                }
                /* (maxChars aside; a text whose part may lie anywhere is cut
                ** by its length only) */
                if (!bNear && !(mode & EDIT_SUFFIX)) {
                    fail_msg("iteration %d text %d: nothing past hope, yet no extension near", iter, t);
                }
            } else {
                nDeadSeen++;
                int nc = 0;
                while (nc <= nb && aEnd[nc] != nDead) nc++;
                assert_true(nc >= 1 && nc <= nb); /* whole characters */
                assert_int_equal(d, max + 1);
                assert_true(nb > maxChars || ref > max || (bLetters && bOther));
                int bOtherIn = 0; /* in the prefix past hope */
                for (int j = 0; j < nc; j++) bOtherIn |= b[j] == '1' || b[j] == 0x2603;
                for (int e = 0; e < 20; e++) {
                    char ze[4 * 40];
                    int ne = aEnd[nc], nt = nc + (int)(NEXT() % 8);
                    memcpy(ze, zb, (size_t)ne);
                    for (int j = nc; j < nt; j++) {
                        ne += (int)utf8_encode(e % 2 ? a[NEXT() % (unsigned)na] : aAlpha[NEXT() % (unsigned)nAlpha], ze + ne);
                    }
                    if (nt <= maxChars && !(bLetters && bOtherIn) && edit_pattern_distance_to(&p, ze, ne, max, mode) <= max) {
                        fail_msg("iteration %d text %d: a text past the dead prefix is wanted", iter, t);
                    }
                }
                /* the shortest: one character less is not past hope */
                edit_walk_init(w1, &p, max, mode, maxChars, bLetters);
                edit_walk_next(w1, zb, aEnd[nc - 1], &nDead1, &nChars1);
                assert_int_equal(nDead1, 0);
            }
        }
        free(w);
        free(w1);
    }
#undef NEXT
    /* both outcomes are exercised */
    assert_true(nDeadSeen > nSteps / 10 && nLiveSeen > nSteps / 10);
    uint32_t aw[] = {'d', 'i', 'a', 'b', 'e', 't', 'i', 's'};
    EditPattern p;
    edit_pattern_init(&p, aw, 8);
    EditWalk *w = malloc(sizeof(EditWalk));
    assert_non_null(w);
    int nDead, nChars;
    edit_walk_init(w, &p, 2, EDIT_WHOLE, EDIT_WALK_MAX, 0);
    /* "xyzzy": past "xyz" nothing is within 2 of diabetis */
    assert_int_equal(edit_walk_next(w, "xyzzy", 5, &nDead, &nChars), 3);
    assert_int_equal(nDead, 3);
    assert_int_equal(edit_walk_next(w, "diabetes", 8, &nDead, &nChars), 1);
    assert_int_equal(nDead, 0);
    assert_int_equal(nChars, 8);
    assert_int_equal(edit_walk_next(w, "diabetesmellitus", 16, &nDead, &nChars), 3);
    assert_int_equal(nDead, 10);
    edit_walk_init(w, &p, 2, EDIT_PREFIX, EDIT_WALK_MAX, 0);
    assert_int_equal(edit_walk_next(w, "diabetesmellitus", 16, &nDead, &nChars), 1);
    assert_int_equal(nDead, 0);
    /* at most 9 characters: "diabetesm" is wanted, "diabetesme" past hope */
    edit_walk_init(w, &p, 2, EDIT_PREFIX, 9, 0);
    assert_int_equal(edit_walk_next(w, "diabetesm", 9, &nDead, &nChars), 1);
    assert_int_equal(edit_walk_next(w, "diabetesmellitus", 16, &nDead, &nChars), 3);
    assert_int_equal(nDead, 10);
    /* a lead byte without its continuation, then with it: read anew */
    edit_walk_init(w, &p, 2, EDIT_WHOLE, EDIT_WALK_MAX, 0);
    edit_walk_next(w, "diabet\xc3", 7, &nDead, &nChars);
    assert_int_equal(nChars, 7);
    assert_int_equal(edit_walk_next(w, "diabet\xc3\xa9s", 9, &nDead, &nChars), 1);
    assert_int_equal(nChars, 8);
    /* letters only: past "diab3" nothing is wanted, however near */
    edit_walk_init(w, &p, 2, EDIT_WHOLE, EDIT_WALK_MAX, 1);
    assert_int_equal(edit_walk_next(w, "diab3tis", 8, &nDead, &nChars), 3);
    assert_int_equal(nDead, 5);
    assert_int_equal(edit_walk_next(w, "diab\xc3\xa9tis", 9, &nDead, &nChars), 1);
    assert_int_equal(nDead, 0);
    free(w);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_stars),
        cmocka_unit_test(test_ascii),
        cmocka_unit_test(test_separators),
        cmocka_unit_test(test_case_folding),
        cmocka_unit_test(test_nfkc),
        cmocka_unit_test(test_combining_marks),
        cmocka_unit_test(test_cjk),
        cmocka_unit_test(test_offsets_original),
        cmocka_unit_test(test_stopwords),
        cmocka_unit_test(test_stopwords_languages),
        cmocka_unit_test(test_stemming_several),
        cmocka_unit_test(test_min_word_len),
        cmocka_unit_test(test_position_steps),
        cmocka_unit_test(test_collect),
        cmocka_unit_test(test_stemming),
        cmocka_unit_test(test_unstemmed),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_long_input),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_callback_stop),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_regexp_filter),
        cmocka_unit_test(test_regexp_term_and_search),
        cmocka_unit_test(test_soundex),
        cmocka_unit_test(test_metaphone),
        cmocka_unit_test(test_normalise_exhaustive),
        cmocka_unit_test(test_normalise_exhaustive_strip),
        cmocka_unit_test(test_normalise_pairs),
        cmocka_unit_test(test_remove_diacritics),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_stem_memo_growth),
        cmocka_unit_test(test_words_as_alone),
        cmocka_unit_test(test_stem_dictionary),
        cmocka_unit_test(test_exact_forms),
        cmocka_unit_test(test_wordforms),
        cmocka_unit_test(test_ignore_chars),
        cmocka_unit_test(test_charset_table),
        cmocka_unit_test(test_blend_chars),
        cmocka_unit_test(test_stopwords_stemmed),
        cmocka_unit_test(test_ngram_chars),
        cmocka_unit_test(test_exceptions),
        cmocka_unit_test(test_stopwords_list),
        cmocka_unit_test(test_index_sp),
        cmocka_unit_test(test_phrase_boundary),
        cmocka_unit_test(test_html_strip),
        cmocka_unit_test(test_html_strip_map),
        cmocka_unit_test(test_regexp_filter_map),
        cmocka_unit_test(test_index_zones),
        cmocka_unit_test(test_edit_distance),
        cmocka_unit_test(test_edit_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
