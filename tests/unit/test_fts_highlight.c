/*
** test_fts_highlight.c — unit tests for src/fts/highlight.c with the real
** analyzer (English stemming, English stop words): exact outputs for
** terms, stems, prefixes, phrases, negations and field scopes; passages
** under limit/around/limit_passages and the order they are chosen in;
** the start of the text when nothing matches; UTF-8 cuts (CJK, accents,
** emoji); every option; empty inputs and invalid UTF-8.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fts/highlight.h"
#include "fts/search.h"
#include "text/utf8.h"

static const char *const azField[] = {"title", "body"};
#define NFIELD 2
#define F_TITLE 0
#define F_BODY 1

static Analyzer *gStem;  /* stem_en + stopwords en */
static Analyzer *gPlain; /* no morphology, no stop words */
static Analyzer *gZones; /* html_strip, index_zones 'z*' */
static Analyzer *gSp;    /* html_strip, index_sp, index_zones 'z*' */
static Arena gArena;
static char gOut[1 << 16]; /* the last result, copied out of its StrBuf */
static int gExpand;        /* expand_keywords bits for hl_an (FTS_EXPAND_*) */

/* ------------------------------------------------------------- helpers */

/* Highlights zText in field iField for zQuery with analyzer an; returns
** the result (valid until the next call). */
static const char *hl_an(const Analyzer *an, const char *zQuery, int iField, const char *zText,
                         size_t nText, const FtsHlOptions *o) {
    arena_reset(&gArena);
    LpError err;
    lp_err_clear(&err);
    FtsNode *root;
    if (fts_match_parse(&gArena, zQuery, strlen(zQuery), azField, NFIELD, &root, &err) != LP_OK) {
        fail_msg("parse of %s: %s", zQuery, err.zMsg);
    }
    FtsHlQuery *q;
    if (fts_hl_query_build(&gArena, an, root, iField, gExpand, o && o->bExactPhrase, &q, &err) != LP_OK)
        fail_msg("build: %s", err.zMsg);
    StrBuf sb = {0};
    int rc = fts_highlight(an, q, zText, nText, o, &sb, &err, NULL);
    snprintf(gOut, sizeof(gOut), "%s", sb.z ? sb.z : "");
    size_t n = sb.n;
    strbuf_free(&sb);
    if (rc != LP_OK) fail_msg("highlight: %s", err.zMsg);
    assert_true(n < sizeof(gOut));
    /* Whatever the cut, the output is valid UTF-8. */
    assert_int_equal(utf8_check(gOut, n), -1);
    return gOut;
}

static const char *hl(const char *zQuery, int iField, const char *zText, const FtsHlOptions *o) {
    return hl_an(gStem, zQuery, iField, zText, strlen(zText), o);
}

static void check(const char *zQuery, int iField, const char *zText, const FtsHlOptions *o,
                  const char *zWant) {
    const char *zGot = hl(zQuery, iField, zText, o);
    if (strcmp(zGot, zWant) != 0) {
        fail_msg("query %s on \"%s\":\n got  \"%s\"\n want \"%s\"", zQuery, zText, zGot, zWant);
    }
}

/* "w0 w1 ... w<n-1>" into z. */
static void words(char *z, size_t nz, int n) {
    size_t k = 0;
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(z + k, nz - k, "%sw%d", i ? " " : "", i);
}

static FtsHlOptions opts(int limit, int around) {
    FtsHlOptions o;
    fts_hl_options_init(&o);
    o.limit = limit;
    o.around = around;
    return o;
}

/* opts() with limit_words too. */
static FtsHlOptions opts_words(int limit, int around, int limitWords) {
    FtsHlOptions o = opts(limit, around);
    o.limitWords = limitWords;
    return o;
}

/* ------------------------------------------------------------- tests */

static void test_defaults(void **state) {
    (void)state;
    FtsHlOptions o;
    fts_hl_options_init(&o);
    assert_string_equal(o.zBefore, "<b>");
    assert_string_equal(o.zAfter, "</b>");
    assert_string_equal(o.zChunkSep, " ... ");
    assert_int_equal(o.limit, 256);
    assert_int_equal(o.around, 5);
    assert_int_equal(o.limitPassages, 0);
    assert_int_equal(o.bAllowEmpty + o.bForceAllWords + o.bWeightOrder + o.bEscapeHtml, 0);
}

static void test_terms(void **state) {
    (void)state;
    check("try", F_BODY, "Don`t try to compete in childishness, said Bliss.", NULL,
          "Don`t <b>try</b> to compete in childishness, said Bliss.");
    /* Case and accents are normalised for the comparison only. */
    check("hello", F_BODY, "Hello, HELLO; hello!", NULL,
          "<b>Hello</b>, <b>HELLO</b>; <b>hello</b>!");
    check("CAF\xc3\x89", F_BODY, "un caf\xc3\xa9 noir", NULL, "un <b>caf\xc3\xa9</b> noir");
    /* Adjacent words are tagged one by one. */
    check("new york", F_BODY, "in New York today", NULL, "in <b>New</b> <b>York</b> today");
    /* A query word the analyzer splits marks each part. */
    check("e-mail", F_BODY, "send e-mail now", NULL, "send <b>e</b>-<b>mail</b> now");
    check("cat | dog", F_BODY, "x cat y dog z", NULL, "x <b>cat</b> y <b>dog</b> z");
    /* Nothing matches: the text as it is. */
    check("zebra", F_BODY, "no match here", NULL, "no match here");
}

static void test_stemming(void **state) {
    (void)state;
    check("running", F_BODY, "He runs, ran and is running.", NULL,
          "He <b>runs</b>, ran and is <b>running</b>.");
    check("connections", F_BODY, "connected, connecting, connection", NULL,
          "<b>connected</b>, <b>connecting</b>, <b>connection</b>");
    /* Without stemming only the same word matches. */
    const char *z = "He runs, ran and is running.";
    const char *zGot = hl_an(gPlain, "running", F_BODY, z, strlen(z), NULL);
    assert_string_equal(zGot, "He runs, ran and is <b>running</b>.");
    /* Stop words: dropped from the query, so never marked. */
    check("the cat", F_BODY, "The cat and the hat", NULL, "The <b>cat</b> and the hat");
    zGot = hl_an(gPlain, "the cat", F_BODY, "The cat", 7, NULL);
    assert_string_equal(zGot, "<b>The</b> <b>cat</b>");
}

static void test_prefix(void **state) {
    (void)state;
    check("insul*", F_BODY, "Insulin, insulation; insult. Insular?", NULL,
          "<b>Insulin</b>, <b>insulation</b>; <b>insult</b>. <b>Insular</b>?");
    /* The text's word is compared unstemmed: "running" starts with "runn",
    ** although its stem "run" does not. */
    check("runn*", F_BODY, "runs running runner", NULL, "runs <b>running</b> <b>runner</b>");
    /* A prefix is not stemmed either ("connection*" would stem to "connect"). */
    check("connection*", F_BODY, "connect connections", NULL, "connect <b>connections</b>");
    /* A prefix that analyses to several words: the last is the prefix. */
    check("e-ma*", F_BODY, "e-mail e-max email ma", NULL,
          "<b>e</b>-<b>mail</b> <b>e</b>-<b>max</b> email <b>ma</b>");
    check("\xc3\x89T\xc3\x89*", F_BODY, "l'\xc3\xa9t\xc3\xa9 \xc3\xa9ternel", NULL,
          "l'<b>\xc3\xa9t\xc3\xa9</b> \xc3\xa9ternel");
}

static void test_wildcard(void **state) {
    (void)state;
    /* Words the pattern fits, folded and unstemmed, as prefixes are. */
    check("*SUL*", F_BODY, "Insulin, sulk; rest. Sul", NULL,
          "<b>Insulin</b>, <b>sulk</b>; rest. <b>Sul</b>");
    check("*ing", F_BODY, "running ingot sing", NULL, "<b>running</b> ingot <b>sing</b>");
    check("r*in*g", F_BODY, "running rang ring rig", NULL,
          "<b>running</b> rang <b>ring</b> rig");
    check("cat *og* -*ird", F_BODY, "cat dogs bird", NULL, "<b>cat</b> <b>dogs</b> bird");
    check("@title *og*", F_BODY, "dogs", NULL, "dogs");
}

static void test_phrase(void **state) {
    (void)state;
    /* by default each word of a phrase is marked wherever it is, as
    ** Manticore does with exact_phrase off */
    check("\"type 1\" diabetes", F_BODY, "Type 1 diabetes differs from type 2.", NULL,
          "<b>Type</b> <b>1</b> <b>diabetes</b> differs from <b>type</b> 2.");
    check("\"quick foxes\"~3", F_BODY, "the quick brown fox", NULL,
          "the <b>quick</b> brown <b>fox</b>");
    /* exact_phrase: an exact phrase's words only where it matches, as
    ** Sphinx's excerpts with query_mode mark them ... */
    FtsHlOptions o;
    fts_hl_options_init(&o);
    o.bExactPhrase = 1;
    check("\"type 1\" diabetes", F_BODY, "Type 1 diabetes differs from type 2.", &o,
          "<b>Type</b> <b>1</b> <b>diabetes</b> differs from type 2.");
    check("\"cat sat\"", F_BODY, "the cat sat on the mat with a cat", &o,
          "the <b>cat</b> <b>sat</b> on the mat with a cat");
    /* ... unless the query also asks for the word alone */
    check("\"type 1\" type", F_BODY, "Type 1 diabetes differs from type 2.", &o,
          "<b>Type</b> <b>1</b> diabetes differs from <b>type</b> 2.");
    check("\"diabetes differs\" | type", F_BODY, "Type 1 diabetes differs from type 2.", &o,
          "<b>Type</b> 1 <b>diabetes</b> <b>differs</b> from <b>type</b> 2.");
    /* stemmed, and across a stop word the query leaves a gap for */
    check("\"cats sitting\"", F_BODY, "a cat sits; the cats sit.", &o,
          "a <b>cat</b> <b>sits</b>; the <b>cats</b> <b>sit</b>.");
    check("\"cat the mat\"", F_BODY, "cat on mat, cat the mat, the mat", &o,
          "<b>cat</b> on <b>mat</b>, <b>cat</b> the <b>mat</b>, the mat");
    check("\"mat cat\"", F_BODY, "cat mat mat", &o, "cat mat mat");
    /* overlapping matches; a phrase of one word after analysis */
    check("\"ho ho\"", F_BODY, "ho ho ho, hey ho", &o, "<b>ho</b> <b>ho</b> <b>ho</b>, hey ho");
    check("\"the ho\"", F_BODY, "ho hey ho", &o, "<b>ho</b> hey <b>ho</b>");
    /* proximity phrases, phrases with a prefix and anchored ones are
    ** marked word by word still */
    check("\"quick foxes\"~3", F_BODY, "the quick brown fox", &o, "the <b>quick</b> brown <b>fox</b>");
    check("\"type 1*\"", F_BODY, "Type 1 diabetes differs from type 2.", &o,
          "<b>Type</b> <b>1</b> diabetes differs from <b>type</b> 2.");
    /* inside a chain, a phrase operand is a phrase too */
    check("\"type 1\" NEAR/3 diabetes", F_BODY, "Type 1 diabetes differs from type 2.", &o,
          "<b>Type</b> <b>1</b> <b>diabetes</b> differs from type 2.");
}

static void test_not(void **state) {
    (void)state;
    check("apple -banana", F_BODY, "apple banana apples", NULL,
          "<b>apple</b> banana <b>apples</b>");
    check("apple -(banana | cherr*)", F_BODY, "apple banana cherry", NULL,
          "<b>apple</b> banana cherry");
    /* A word both wanted and excluded elsewhere is marked. */
    check("apple -(apple pie)", F_BODY, "apple pie", NULL, "<b>apple</b> pie");
}

static void test_fields(void **state) {
    (void)state;
    const char *z = "apple banana cherry";
    check("@title apple @body banana", F_BODY, z, NULL, "apple <b>banana</b> cherry");
    check("@title apple @body banana", F_TITLE, z, NULL, "<b>apple</b> banana cherry");
    check("title:apple banana", F_BODY, z, NULL, "apple <b>banana</b> cherry");
    check("title:apple banana", F_TITLE, z, NULL, "<b>apple</b> <b>banana</b> cherry");
    check("@(title,body) cherry", F_BODY, z, NULL, "apple banana <b>cherry</b>");
    check("@title \"banana cherry\" | apple*", F_BODY, z, NULL, "apple banana cherry");
    /* -1: any field (SNIPPET over an arbitrary text). */
    check("@title apple @body banana", -1, z, NULL, "<b>apple</b> <b>banana</b> cherry");
}

static void test_passages(void **state) {
    (void)state;
    char z[2048];
    words(z, sizeof(z), 100); /* 390 characters */
    FtsHlOptions o = opts(40, 2);
    check("w50", F_BODY, z, &o, " ... w48 w49 <b>w50</b> w51 w52 ... ");
    /* At the edges the passage takes the text's start or end. */
    check("w0", F_BODY, z, &o, "<b>w0</b> w1 w2 ... ");
    check("w99", F_BODY, z, &o, " ... w97 w98 <b>w99</b>");
    /* Two matches far apart: two passages, in text order. */
    o = opts(100, 1);
    check("w80 | w10", F_BODY, z, &o, " ... w9 <b>w10</b> w11 ... w79 <b>w80</b> w81 ... ");
    /* Touching windows are one passage. */
    check("w10 | w13", F_BODY, z, &o, " ... w9 <b>w10</b> w11 w12 <b>w13</b> w14 ... ");
    check("w10 | w12", F_BODY, z, &o, " ... w9 <b>w10</b> w11 <b>w12</b> w13 ... ");
    /* around 0: the matched words alone. */
    o = opts(100, 0);
    check("w10 | w12", F_BODY, z, &o, " ... <b>w10</b> ... <b>w12</b> ... ");
    /* The limit: the third passage is shrunk to what is left (25 - 10 - 11
    ** = 4 characters: "w90", its neighbours do not fit). */
    o = opts(25, 1);
    check("w10 | w50 | w90", F_BODY, z, &o,
          " ... w9 <b>w10</b> w11 ... w49 <b>w50</b> w51 ... <b>w90</b> ... ");
    /* ... and one character less leaves no room for it. */
    o = opts(23, 1);
    check("w10 | w50 | w90", F_BODY, z, &o, " ... w9 <b>w10</b> w11 ... w49 <b>w50</b> w51 ... ");
    /* limit_passages. */
    o = opts(200, 1);
    o.limitPassages = 1;
    check("w10 | w50 | w90", F_BODY, z, &o, " ... w9 <b>w10</b> w11 ... ");
    o.limitPassages = 2;
    check("w10 | w50 | w90", F_BODY, z, &o, " ... w9 <b>w10</b> w11 ... w49 <b>w50</b> w51 ... ");
}

static void test_passage_choice(void **state) {
    (void)state;
    char z[4096];
    words(z, sizeof(z), 100);
    /* Replace w5 by alpha, and w60 w61 by alpha beta. */
    char t[4096];
    strcpy(t, "w0 w1 w2 w3 w4 alpha w6");
    for (int i = 7; i < 60; i++)
        sprintf(t + strlen(t), " w%d", i);
    strcat(t, " alpha beta");
    for (int i = 62; i < 100; i++)
        sprintf(t + strlen(t), " w%d", i);
    FtsHlOptions o = opts(100, 1);
    o.limitPassages = 1;
    /* More distinct terms first, though later in the text. */
    check("alpha | beta", F_BODY, t, &o, " ... w59 <b>alpha</b> <b>beta</b> w62 ... ");
    /* Then terms not shown yet: alpha at 5 brings nothing new. */
    strcpy(t, "w0 w1 w2 w3 w4 alpha w6");
    for (int i = 7; i < 30; i++)
        sprintf(t + strlen(t), " w%d", i);
    strcat(t, " alpha");
    for (int i = 31; i < 70; i++)
        sprintf(t + strlen(t), " w%d", i);
    strcat(t, " beta");
    for (int i = 71; i < 100; i++)
        sprintf(t + strlen(t), " w%d", i);
    o.limitPassages = 2;
    check("alpha | beta", F_BODY, t, &o, " ... w4 <b>alpha</b> w6 ... w69 <b>beta</b> w71 ... ");
    /* weight_order: in the order chosen (the best first). */
    strcpy(t, "w0 w1 w2 w3 w4 alpha w6");
    for (int i = 7; i < 60; i++)
        sprintf(t + strlen(t), " w%d", i);
    strcat(t, " alpha beta");
    for (int i = 62; i < 100; i++)
        sprintf(t + strlen(t), " w%d", i);
    o.limitPassages = 2;
    check("alpha | beta", F_BODY, t, &o,
          " ... w4 <b>alpha</b> w6 ... w59 <b>alpha</b> <b>beta</b> w62 ... ");
    o.bWeightOrder = 1;
    check("alpha | beta", F_BODY, t, &o,
          " ... w59 <b>alpha</b> <b>beta</b> w62 ... w4 <b>alpha</b> w6 ... ");
    /* force_all_words: beta is shown although the limit is spent. */
    strcpy(t, "w0 w1 w2 w3 w4 alpha w6");
    for (int i = 7; i < 70; i++)
        sprintf(t + strlen(t), " w%d", i);
    strcat(t, " beta");
    for (int i = 71; i < 100; i++)
        sprintf(t + strlen(t), " w%d", i);
    o = opts(12, 1);
    check("alpha | beta", F_BODY, t, &o, " ... w4 <b>alpha</b> w6 ... ");
    o.bForceAllWords = 1;
    check("alpha | beta", F_BODY, t, &o, " ... w4 <b>alpha</b> w6 ... w69 <b>beta</b> w71 ... ");
}

static void test_no_match(void **state) {
    (void)state;
    const char *z = "The quick brown fox jumps over the lazy dog";
    FtsHlOptions o = opts(20, 5);
    /* The start of the text, cut after the last whole word that fits. */
    check("zebra", F_BODY, z, &o, "The quick brown fox ... ");
    o.bAllowEmpty = 1;
    check("zebra", F_BODY, z, &o, "");
    /* allow_empty with a match changes nothing. */
    check("lazy", F_BODY, z, &o, " ... over the <b>lazy</b> dog");
    /* A text that fits is returned whole. */
    o = opts(100, 5);
    check("zebra", F_BODY, z, &o, z);
    /* The empty query marks nothing. */
    check("", F_BODY, z, &o, z);
    /* A first word longer than the limit is cut inside (on a character). */
    o = opts(5, 5);
    check("zebra", F_BODY, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 x", &o,
          "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 ... ");
}

static void test_limit_zero(void **state) {
    (void)state;
    char z[2048];
    words(z, sizeof(z), 100);
    FtsHlOptions o = opts(0, 1);
    const char *zGot = hl("w50", F_BODY, z, &o);
    assert_int_equal(strlen(zGot), strlen(z) + 7);
    assert_non_null(strstr(zGot, " w49 <b>w50</b> w51 "));
    assert_memory_equal(zGot, "w0 w1", 5);
    /* The limit counts characters, not bytes: 3 two-byte characters fit in 3. */
    o = opts(3, 1);
    check("zebra", F_BODY, "\xc3\xa9\xc3\xa9\xc3\xa9", &o, "\xc3\xa9\xc3\xa9\xc3\xa9");
}

/* limit_words (words, Manticore's count: every word shown, matched or
** not), force_passages, and the %PASSAGE_ID% macro from start_passage_id,
** as Sphinx numbers it: one more after each marked word written. */
static void test_words_and_passage_ids(void **state) {
    (void)state;
    char z[2048];
    words(z, sizeof(z), 100);
    /* No character limit, 5 words: the passage around w50 has 5 */
    FtsHlOptions o = opts_words(0, 3, 5);
    check("w50", F_BODY, z, &o, " ... w48 w49 <b>w50</b> w51 w52 ... ");
    /* both limits: the tighter one cuts (10 characters: "w49 w50 w51") */
    o = opts_words(11, 3, 5);
    check("w50", F_BODY, z, &o, " ... w49 <b>w50</b> w51 ... ");
    /* the words budget is spent across passages: 3 + 1 */
    o = opts_words(0, 1, 4);
    check("w10 | w50 | w90", F_BODY, z, &o, " ... w9 <b>w10</b> w11 ... <b>w50</b> ... ");
    /* a text within both limits is whole, unless force_passages */
    const char *zShort = "The quick brown fox jumps over the lazy dog";
    o = opts_words(256, 1, 9);
    check("fox", F_BODY, zShort, &o, "The quick brown <b>fox</b> jumps over the lazy dog");
    o.limitWords = 8;
    check("fox", F_BODY, zShort, &o, " ... brown <b>fox</b> jumps ... ");
    o.limitWords = 0;
    o.bForcePassages = 1;
    check("fox | dog", F_BODY, zShort, &o, " ... brown <b>fox</b> jumps ... lazy <b>dog</b>");
    /* ... and without a match the start, cut by words as by characters */
    o = opts_words(0, 1, 3);
    check("zebra", F_BODY, zShort, &o, "The quick brown ... ");
    /* %PASSAGE_ID% and %SNIPPET_ID% in either tag; other % stay */
    o = opts(0, 1);
    o.zBefore = "<a id=\"m%PASSAGE_ID%\" x=100%>";
    o.zAfter = "</a %SNIPPET_ID%>";
    check("fox | dog", F_BODY, zShort, &o,
          "The quick brown <a id=\"m1\" x=100%>fox</a 1> jumps over the lazy <a id=\"m2\" x=100%>dog</a 2>");
    o.startPassageId = 7;
    o.limit = 20;
    check("quick | dog", F_BODY, zShort, &o,
          "The <a id=\"m7\" x=100%>quick</a 7> brown ... <a id=\"m8\" x=100%>dog</a 8>");
    /* pnMarked: how many were written, for the next field's numbers */
    arena_reset(&gArena);
    LpError err;
    FtsNode *root;
    assert_int_equal(fts_match_parse(&gArena, "w1 | w50", 8, azField, NFIELD, &root, &err), LP_OK);
    FtsHlQuery *q;
    assert_int_equal(fts_hl_query_build(&gArena, gStem, root, F_BODY, 0, 0, &q, &err), LP_OK);
    StrBuf sb = {0};
    FtsHlStats st;
    o = opts_words(0, 1, 1); /* room for w1 alone: w50 is not written */
    assert_int_equal(fts_highlight(gStem, q, z, strlen(z), &o, &sb, &err, &st), LP_OK);
    assert_string_equal(sb.z, " ... <b>w1</b> ... ");
    assert_int_equal(st.nMarked, 1);
    assert_int_equal(st.nWords, 1);
    assert_int_equal(st.nChars, 2);
    assert_int_equal(st.nPassages, 1);
    sb.n = 0;
    o.limitWords = 0;
    assert_int_equal(fts_highlight(gStem, q, z, strlen(z), &o, &sb, &err, &st), LP_OK);
    assert_int_equal(st.nMarked, 2);
    strbuf_free(&sb);
}

static void test_utf8(void **state) {
    (void)state;
    /* CJK ideographs are words of one character each. */
    check("\xe6\x97\xa5\xe6\x9c\xac", F_BODY, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", NULL,
          "<b>\xe6\x97\xa5</b><b>\xe6\x9c\xac</b>\xe8\xaa\x9e");
    /* Emoji are separators, kept as they are. */
    check("pizza", F_BODY, "I \xe2\x9d\xa4\xef\xb8\x8f pizza\xf0\x9f\x8d\x95!", NULL,
          "I \xe2\x9d\xa4\xef\xb8\x8f <b>pizza</b>\xf0\x9f\x8d\x95!");
    /* A long CJK text with no match: the first `limit` characters. */
    char z[1024] = "";
    for (int i = 0; i < 100; i++)
        strcat(z, "\xe4\xb8\x80"); /* 一 x100 */
    FtsHlOptions o = opts(4, 2);
    check("zebra", F_BODY, z, &o, "\xe4\xb8\x80\xe4\xb8\x80\xe4\xb8\x80\xe4\xb8\x80 ... ");
    /* A CJK passage: around counts characters (words). */
    strcpy(z, "");
    for (int i = 0; i < 20; i++)
        strcat(z, "\xe4\xb8\x80");
    strcat(z, "\xe6\x97\xa5");
    for (int i = 0; i < 20; i++)
        strcat(z, "\xe4\xb8\x80");
    o = opts(10, 1);
    check("\xe6\x97\xa5", F_BODY, z, &o, " ... \xe4\xb8\x80<b>\xe6\x97\xa5</b>\xe4\xb8\x80 ... ");
    /* A marked word longer than the limit is cut inside, tags closed. */
    strcpy(z, "");
    for (int i = 0; i < 30; i++)
        strcat(z, "\xc3\xa9");
    strcat(z, " tail");
    o = opts(4, 2);
    check("\xc3\xa9\xc3\xa9*", F_BODY, z, &o, "<b>\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9</b> ... ");
    /* Emoji and accents around a match in a passage keep their bytes. */
    o = opts(12, 1);
    check("zz", F_BODY,
          "x y \xf0\x9f\x98\x80 a\xc3\xa9 \xf0\x9f\x98\x80 zz \xf0\x9f\x98\x80 c\xc3\xa9 d e f g h",
          &o, " ... a\xc3\xa9 \xf0\x9f\x98\x80 <b>zz</b> \xf0\x9f\x98\x80 c\xc3\xa9 ... ");
}

static void test_options(void **state) {
    (void)state;
    FtsHlOptions o;
    fts_hl_options_init(&o);
    o.zBefore = "[";
    o.zAfter = "]";
    check("fox", F_BODY, "the fox", &o, "the [fox]");
    char z[2048];
    words(z, sizeof(z), 100);
    o = opts(100, 0);
    o.zChunkSep = " | ";
    o.zBefore = "<em>";
    o.zAfter = "</em>";
    check("w10 | w12", F_BODY, z, &o, " | <em>w10</em> | <em>w12</em> | ");
    /* HTML escaping of the text, not of the tags. */
    fts_hl_options_init(&o);
    check("c", F_BODY, "a<b & \"c\" 'd'", &o, "a<b & \"<b>c</b>\" 'd'");
    o.bEscapeHtml = 1;
    check("c", F_BODY, "a<b & \"c\" 'd'", &o, "a&lt;b &amp; &quot;<b>c</b>&quot; &#39;d&#39;");
    check("b", F_BODY, "<b>", &o, "&lt;<b>b</b>&gt;");
}

static void test_edge_cases(void **state) {
    (void)state;
    check("fox", F_BODY, "", NULL, "");
    check("fox", F_BODY, "   ", NULL, "   ");
    check("fox", F_BODY, "fox", NULL, "<b>fox</b>");
    check("fox", F_BODY, "...fox...", NULL, "...<b>fox</b>...");
    /* Errors. */
    arena_reset(&gArena);
    LpError err;
    FtsHlQuery *q;
    assert_int_equal(fts_hl_query_build(&gArena, gStem, NULL, F_BODY, 0, 0, &q, &err), LP_OK);
    StrBuf sb = {0};
    assert_int_equal(fts_highlight(gStem, q, "ab\xff", 3, NULL, &sb, &err, NULL), LP_BADINPUT);
    assert_int_equal(err.pos, 2);
    FtsHlOptions o = opts(-1, 5);
    assert_int_equal(fts_highlight(gStem, q, "ab", 2, &o, &sb, &err, NULL), LP_BADINPUT);
    o = opts(10, 5);
    o.zAfter = NULL;
    assert_int_equal(fts_highlight(gStem, q, "ab", 2, &o, &sb, &err, NULL), LP_BADINPUT);
    strbuf_free(&sb);
    /* The output is appended to what the buffer holds. */
    FtsNode *root;
    assert_int_equal(fts_match_parse(&gArena, "b", 1, azField, NFIELD, &root, &err), LP_OK);
    assert_int_equal(fts_hl_query_build(&gArena, gStem, root, F_BODY, 0, 0, &q, &err), LP_OK);
    strbuf_appendz(&sb, "x:");
    assert_int_equal(fts_highlight(gStem, q, "a b", 3, NULL, &sb, &err, NULL), LP_OK);
    assert_string_equal(sb.z, "x:a <b>b</b>");
    strbuf_free(&sb);
}

/* A large text with many matches: bounded output, reasonable time. */
static void test_large(void **state) {
    (void)state;
    size_t cap = 2u << 20, n = 0;
    char *z = malloc(cap);
    assert_non_null(z);
    for (int i = 0; n + 32 < cap; i++)
        n += (size_t)snprintf(z + n, cap - n, "%s ", i % 7 == 0 ? "alpha" : "filler");
    FtsHlOptions o;
    fts_hl_options_init(&o);
    const char *zGot = hl_an(gStem, "alpha | fill*", F_BODY, z, n, &o);
    /* 256 characters of text at most, plus tags and separators. */
    size_t nText = 0;
    for (const char *p = zGot; *p;) {
        if (*p == '<') {
            p = strchr(p, '>') + 1;
        } else if (strncmp(p, " ... ", 5) == 0) {
            p += 5;
        } else {
            nText++;
            p++;
        }
    }
    assert_true(nText <= 256);
    assert_true(nText > 200);
    assert_non_null(strstr(zGot, "<b>alpha</b>"));
    assert_non_null(strstr(zGot, "<b>filler</b>"));
    free(z);
}

/* ZONE: marks a word inside its zones' spans; a ZONESPAN: group's words
** are marked only inside the spans (of its zones, overlapping ones
** joined) where the whole group holds, words compared as everywhere. */
static void test_zones(void **state) {
    (void)state;
    static const struct {
        const char *zQuery, *zText, *zWant;
    } aCase[] = {
        {"ZONE:za cat", "<za>cat dog</za> cat", "<b>cat</b> dog cat"},
        {"ZONESPAN:za cat dog", "<za>cat dog</za> cat <za>cat eel</za> dog",
         "<b>cat</b> <b>dog</b> cat cat eel dog"},
        /* a phrase holds where its words are */
        {"ZONESPAN:za \"cat dog\" eel", "<za>dog eel cat</za> <za>cat dog</za>",
         "<b>dog</b> <b>eel</b> <b>cat</b> cat dog"},
        /* a quorum where enough of its words are */
        {"ZONESPAN:za \"cat dog eel\"/2 ant", "<za>cat ant</za> <za>cat dog ant</za>",
         "cat ant <b>cat</b> <b>dog</b> <b>ant</b>"},
        /* an OR where one of its parts is */
        {"ZONESPAN:za cat (dog | eel)", "<za>cat eel</za> <za>cat</za> <za>dog</za>",
         "<b>cat</b> <b>eel</b> cat dog"},
        /* spans of the group's zones that overlap are one */
        {"ZONESPAN:(za,zb) cat dog", "<za>cat <zb>x</za> dog</zb> cat", "<b>cat</b> x <b>dog</b> cat"},
        {"ZONESPAN:za cat dog", "<za>cat <zb>x</za> dog</zb> cat", "cat x dog cat"},
        /* a word outside the group is marked anywhere */
        {"cat ZONESPAN:za dog eel", "<za>dog</za> cat <za>dog eel</za>", "dog <b>cat</b> <b>dog</b> <b>eel</b>"},
        /* ... even when the group names it too */
        {"dog ZONESPAN:za dog eel", "<za>dog</za> cat <za>dog eel</za>", "<b>dog</b> cat <b>dog</b> <b>eel</b>"},
        /* a negation is not tested */
        {"ZONESPAN:za cat -dog", "<za>cat</za> eel", "<b>cat</b> eel"},
        /* a prefix takes part in the group's test */
        {"ZONESPAN:za cat do*", "<za>cat doe</za> <za>cat</za> dove", "<b>cat</b> <b>doe</b> cat dove"},
        /* no span of the zones: nothing of the group */
        {"ZONESPAN:zc cat dog", "<za>cat dog</za>", "cat dog"},
        /* a span never closed ends with the text */
        {"ZONESPAN:za cat dog", "eel <za>cat x dog", "eel <b>cat</b> x <b>dog</b>"},
        /* with expand_keywords (the last two, below), a word holds where
        ** it or its star expansion is */
        {"ZONESPAN:za cat dog", "<za>category dog</za> <za>cat</za>", "category dog cat"},
        {"ZONESPAN:za cat dog", "<za>category dog</za> <za>cat</za>", "<b>category</b> <b>dog</b> cat"},
        {"ZONESPAN:za cat dog", "<za>cats dog</za> <za>dog</za>", "<b>cats</b> <b>dog</b> dog"},
    };
    const size_t nCase = sizeof(aCase) / sizeof(aCase[0]);
    FtsHlOptions o = opts(0, 5);
    for (size_t i = 0; i < nCase; i++) {
        gExpand = i + 2 >= nCase ? FTS_EXPAND_STAR : 0;
        hl_an(gZones, aCase[i].zQuery, F_BODY, aCase[i].zText, strlen(aCase[i].zText), &o);
        gExpand = 0;
        /* the tags stripped leave spaces: compare with runs of them as one */
        char *zGot = gOut;
        size_t k = 0;
        for (size_t j = 0; gOut[j]; j++) {
            if (gOut[j] != ' ' || (k > 0 && zGot[k - 1] != ' ')) zGot[k++] = gOut[j];
        }
        while (k > 0 && zGot[k - 1] == ' ') k--;
        zGot[k] = 0;
        if (strcmp(zGot, aCase[i].zWant) != 0) {
            fail_msg("query %s on \"%s\":\n got  \"%s\"\n want \"%s\"", aCase[i].zQuery, aCase[i].zText,
                     zGot, aCase[i].zWant);
        }
    }
}

/* hl_an's result for analyzer an, or fail when it is not zWant. */
static void check_an(const Analyzer *an, const char *zQuery, const char *zText, const FtsHlOptions *o,
                     const char *zWant) {
    const char *zGot = hl_an(an, zQuery, F_BODY, zText, strlen(zText), o);
    if (strcmp(zGot, zWant) != 0) {
        fail_msg("query %s on \"%s\":\n got  \"%s\"\n want \"%s\"", zQuery, zText, zGot, zWant);
    }
}

/* fts_hl_options_check's verdict on o for an, or its message. */
static const char *check_error(const Analyzer *an, const char *zQuery, const FtsHlOptions *o) {
    static LpError err;
    arena_reset(&gArena);
    lp_err_clear(&err);
    FtsNode *root;
    FtsHlQuery *q;
    assert_int_equal(fts_match_parse(&gArena, zQuery, strlen(zQuery), azField, NFIELD, &root, &err), LP_OK);
    assert_int_equal(fts_hl_query_build(&gArena, an, root, F_BODY, 0, 0, &q, &err), LP_OK);
    int rc = fts_hl_options_check(o, an, q, &err);
    /* fts_highlight refuses the same */
    StrBuf sb = {0};
    LpError err2;
    assert_int_equal(fts_highlight(an, q, "a b", 3, o, &sb, &err2, NULL), rc);
    strbuf_free(&sb);
    return rc == LP_OK ? NULL : err.zMsg;
}

static void test_boundaries(void **state) {
    (void)state;
    const char *zSent = "One two three five. Four five six. Seven five eight. Nine ten eleven five.";
    FtsHlOptions o = opts(0, 1);
    o.boundary = FTS_HL_BOUNDARY_SENTENCE;
    /* windows stay in their sentence, passages end after its terminator,
    ** and touching passages of two sentences are not joined */
    check_an(gSp, "five", zSent, &o,
             " ... three <b>five</b>. ... Four <b>five</b> six. ... Seven <b>five</b> eight. ... eleven <b>five</b>.");
    o.around = 3;
    check_an(gSp, "five", zSent, &o,
             "One two three <b>five</b>. ... Four <b>five</b> six. ... Seven <b>five</b> eight. ... Nine ten eleven "
             "<b>five</b>.");
    /* without the boundary the same text is shown whole */
    o.boundary = FTS_HL_BOUNDARY_NONE;
    check_an(gSp, "five", zSent, &o,
             "One two three <b>five</b>. Four <b>five</b> six. Seven <b>five</b> eight. Nine ten eleven <b>five</b>.");
    /* paragraphs: a sentence's end does not cut */
    o.boundary = FTS_HL_BOUNDARY_PARAGRAPH;
    o.around = 5;
    check_an(gSp, "five", "One five. Two.\n\nThree five four", &o, "One <b>five</b>. Two. ... Three <b>five</b> four");
    /* zones: a span's start and end cut; emit_zones names the innermost */
    o.boundary = FTS_HL_BOUNDARY_ZONE;
    o.around = 1;
    const char *zZoned = "<za>one five</za> two five <zb>six <zc>seven five</zc></zb> eight";
    check_an(gSp, "five", zZoned, &o, " one <b>five</b> ... two <b>five</b> ... seven <b>five</b> ... ");
    o.bEmitZones = 1;
    check_an(gSp, "five", zZoned, &o, "<za> one <b>five</b> ... two <b>five</b> ... <zc>seven <b>five</b> ... ");
    /* the limits still hold */
    o.limit = 9;
    check_an(gSp, "five", zZoned, &o, "<za> one <b>five</b> ... ");
    o = opts(0, 5);
    /* index_sp positions: a ZONE: limit after a sentence is found (the
    ** words take the index's positions, boundaries counted) */
    check_an(gSp, "ZONE:za five", "One. Two five. <za>four five</za>", &o, "One. Two five.  four <b>five</b> ");

    /* use_boundaries: a phrase boundary (',' then a separator) cuts too,
    ** and a passage ending there keeps it; not with a passage_boundary */
    AnalyzerConfig pbc = {NULL, NULL, 1, 0, 0, 1, NULL, 0, NULL, 0, "z*", 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, "U+2C", 0};
    Analyzer *pPb;
    LpError err;
    assert_int_equal(analyzer_new(&pbc, &pPb, &err), LP_OK);
    o = opts(30, 5);
    o.bUseBoundaries = 1;
    check_an(pPb, "five", "One two three, four five six seven eight, nine ten", &o, " ... four <b>five</b> six seven eight, ... ");
    check_an(pPb, "five", "One two three,four five six seven eight,nine ten", &o, " ... two three,four <b>five</b> six seven ... ");
    o.around = 1;
    o.limit = 0;
    o.bForcePassages = 1;
    check_an(pPb, "five", "<za>a b, c five d</za> e", &o, " ... c <b>five</b> d ... ");
    assert_non_null(strstr(check_error(gSp, "five", &o), "use_boundaries needs"));
    o.boundary = FTS_HL_BOUNDARY_ZONE;
    assert_non_null(strstr(check_error(pPb, "five", &o), "cannot be combined"));
    analyzer_free(pPb);
    o = opts(0, 0);
    o.boundary = FTS_HL_BOUNDARY_SENTENCE;
    assert_non_null(strstr(check_error(gSp, "five", &o), "needs around above 0"));
    o = opts(0, 5);

    /* what cannot be honoured */
    o.boundary = FTS_HL_BOUNDARY_SENTENCE;
    assert_non_null(strstr(check_error(gZones, "five", &o), "index_sp"));
    o.boundary = FTS_HL_BOUNDARY_ZONE;
    assert_non_null(strstr(check_error(gPlain, "five", &o), "index_zones"));
    o.boundary = FTS_HL_BOUNDARY_NONE;
    o.bEmitZones = 1;
    assert_non_null(strstr(check_error(gSp, "five", &o), "emit_zones needs"));
    o.bEmitZones = 0;
    o.htmlMode = FTS_HL_HTML_NONE;
    assert_non_null(strstr(check_error(gSp, "ZONE:za five", &o), "ZONE: limits"));
    assert_null(check_error(gSp, "five", &o));
    o.around = -1;
    assert_non_null(strstr(check_error(gSp, "five", &o), "negative"));
}

static void test_html_modes(void **state) {
    (void)state;
    const char *zHtml = "<p>four <i>fi</i>ve s&eacute;ven <img alt=\"five\"> six</p>";
    FtsHlOptions o = opts(0, 5);
    /* index: as the table reads it (gSp strips, gPlain does not) */
    check_an(gSp, "five | s\xc3\xa9ven", zHtml, &o, "\n\nfour <b>five</b> <b>s\xc3\xa9ven</b>  six\n\n");
    check_an(gPlain, "six", zHtml, &o, "<p>four <i>fi</i>ve s&eacute;ven <img alt=\"five\"> <b>six</b></p>");
    /* none: markup is text; strip: always stripped */
    o.htmlMode = FTS_HL_HTML_NONE;
    check_an(gSp, "five", zHtml, &o, "<p>four <i>fi</i>ve s&eacute;ven <img alt=\"<b>five</b>\"> six</p>");
    o.htmlMode = FTS_HL_HTML_STRIP;
    check_an(gPlain, "five", zHtml, &o, "\n\nfour <b>five</b> s\xc3\xa9ven  six\n\n");
    /* retain: shown as stored; a word split by markup gets a pair of tags
    ** per piece, a reference is marked whole, an attribute never */
    o.htmlMode = FTS_HL_HTML_RETAIN;
    check_an(gPlain, "five | s\xc3\xa9ven", zHtml, &o,
             "<p>four <i><b>fi</b></i><b>ve</b> <b>s&eacute;ven</b> <img alt=\"five\"> six</p>");
    o.zBefore = "[%PASSAGE_ID%:";
    o.zAfter = "]";
    check_an(gSp, "five | six", zHtml, &o, "<p>four <i>[1:fi]</i>[1:ve] s&eacute;ven <img alt=\"five\"> [2:six]</p>");
    o.bAllowEmpty = 1;
    check_an(gSp, "zebra", zHtml, &o, "");
    /* it shows the whole text: no limits */
    o = opts(10, 5);
    o.htmlMode = FTS_HL_HTML_RETAIN;
    assert_non_null(strstr(check_error(gSp, "five", &o), "limit, limit_words and limit_passages be 0"));
    o.limit = 0;
    o.bForcePassages = 1;
    assert_non_null(strstr(check_error(gSp, "five", &o), "force_passages"));
    o.bForcePassages = 0;
    o.bEscapeHtml = 1;
    assert_non_null(strstr(check_error(gSp, "five", &o), "escape_html"));
}

/* FtsHlStats, and bWholeWords (a later text of a shared budget). */
static void test_stats(void **state) {
    (void)state;
    arena_reset(&gArena);
    LpError err;
    FtsNode *root;
    assert_int_equal(fts_match_parse(&gArena, "zebra", 5, azField, NFIELD, &root, &err), LP_OK);
    FtsHlQuery *q;
    assert_int_equal(fts_hl_query_build(&gArena, gPlain, root, F_BODY, 0, 0, &q, &err), LP_OK);
    StrBuf sb = {0};
    FtsHlStats st;
    const char *z = "alphabet soup zebra";
    FtsHlOptions o = opts(0, 5);
    assert_int_equal(fts_highlight(gPlain, q, z, strlen(z), &o, &sb, &err, &st), LP_OK);
    assert_int_equal(st.nChars, 19);
    assert_int_equal(st.nWords, 3);
    assert_int_equal(st.nPassages, 1);
    assert_int_equal(st.nMarked, 1);
    /* no match: the start, a word cut only when bWholeWords allows */
    z = "alphabet soup";
    sb.n = 0;
    o.limit = 4;
    assert_int_equal(fts_highlight(gPlain, q, z, strlen(z), &o, &sb, &err, &st), LP_OK);
    assert_string_equal(sb.z, "alph ... ");
    assert_int_equal(st.nChars, 4);
    sb.n = 0;
    o.bWholeWords = 1;
    assert_int_equal(fts_highlight(gPlain, q, z, strlen(z), &o, &sb, &err, &st), LP_OK);
    assert_int_equal(sb.n, 0);
    assert_int_equal(st.nChars, 0);
    assert_int_equal(st.nPassages, 0);
    strbuf_free(&sb);
}

/* Texts sharing one set of limits (limits_per_field=0): the query zQuery,
** each text in its field (title, body), joined by " | " where shown. */
static const char *hl_shared(const char *zQuery, const char *zTitle, const char *zBody, const FtsHlOptions *o,
                             FtsHlStats *aSt) {
    arena_reset(&gArena);
    LpError err;
    FtsNode *root;
    if (fts_match_parse(&gArena, zQuery, strlen(zQuery), azField, NFIELD, &root, &err) != LP_OK) {
        fail_msg("parse of %s: %s", zQuery, err.zMsg);
    }
    const FtsHlQuery *apQ[2];
    for (int f = 0; f < 2; f++) {
        FtsHlQuery *q;
        assert_int_equal(fts_hl_query_build(&gArena, gPlain, root, f, 0, 0, &q, &err), LP_OK);
        apQ[f] = q;
    }
    const char *az[2] = {zTitle, zBody};
    size_t an[2] = {strlen(zTitle), strlen(zBody)};
    StrBuf aOut[2] = {{0}, {0}};
    if (fts_highlight_shared(gPlain, apQ, az, an, 2, o, aOut, &err, aSt) != LP_OK) fail_msg("%s", err.zMsg);
    snprintf(gOut, sizeof(gOut), "%s%s%s", aOut[0].n ? aOut[0].z : "", aOut[0].n && aOut[1].n ? " | " : "",
             aOut[1].n ? aOut[1].z : "");
    strbuf_free(&aOut[0]);
    strbuf_free(&aOut[1]);
    return gOut;
}

/* fts_highlight_shared: the passages of all the texts compete for the
** limits, as in Manticore; whole texts where all fit; starts, in order,
** where nothing is marked. */
static void test_shared_limits(void **state) {
    (void)state;
    FtsHlStats aSt[2];
    /* the body's passage holds both words: it wins, and the title, the
    ** earlier text, has nothing left */
    FtsHlOptions o = opts(16, 5);
    assert_string_equal(hl_shared("alpha | omega", "alpha beta gamma", "x alpha omega y", &o, aSt),
                        "x <b>alpha</b> <b>omega</b> y");
    assert_int_equal(aSt[0].nPassages, 0);
    assert_int_equal(aSt[1].nPassages, 1);
    assert_int_equal(aSt[1].nChars, 15);
    assert_int_equal(aSt[1].nMarked, 2);
    /* distinct terms are counted over all the texts' terms: the body's two
    ** beat the title's one, marked twice */
    o = opts(13, 5);
    assert_string_equal(hl_shared("alpha | omega", "alpha x alpha", "alpha omega", &o, NULL),
                        "<b>alpha</b> <b>omega</b>");
    /* room for both: the title's passage too; a term the body showed is
    ** no longer new there, %PASSAGE_ID% numbers on across the texts */
    o = opts(40, 1);
    o.zBefore = "[%PASSAGE_ID%]";
    o.zAfter = "";
    assert_string_equal(hl_shared("alpha | omega", "one two alpha beta gamma delta epsilon zeta",
                                  "x alpha omega y", &o, aSt),
                        " ... two [1]alpha beta ...  | x [2]alpha [3]omega y");
    assert_int_equal(aSt[0].nMarked, 1);
    assert_int_equal(aSt[1].nMarked, 2);
    /* within the limits together: both whole */
    o = opts(31, 5);
    assert_string_equal(hl_shared("alpha", "alpha beta gamma", "x alpha omega y", &o, NULL),
                        "<b>alpha</b> beta gamma | x <b>alpha</b> omega y");
    /* limit_passages across the texts; a tie goes to the earlier text */
    o = opts(0, 1);
    o.limitWords = 5;
    o.limitPassages = 1;
    assert_string_equal(hl_shared("alpha", "a b alpha c d e f", "g h alpha i j k l", &o, NULL),
                        " ... b <b>alpha</b> c ... ");
    /* nothing marked: each start within what the texts before it left,
    ** a later one never cut inside a word; allow_empty: nothing */
    o = opts(20, 5);
    assert_string_equal(hl_shared("zebra", "one two three", "four five six", &o, aSt), "one two three | four ... ");
    assert_int_equal(aSt[0].nChars, 13);
    assert_int_equal(aSt[1].nChars, 4);
    o = opts(15, 5);
    assert_string_equal(hl_shared("zebra", "one two three", "four five six", &o, NULL), "one two three");
    o.bAllowEmpty = 1;
    assert_string_equal(hl_shared("zebra", "one two three", "four five six", &o, NULL), "");
    /* an option that cannot be honoured is refused for the row */
    arena_reset(&gArena);
    o = opts(10, 5);
    o.htmlMode = FTS_HL_HTML_RETAIN;
    LpError err;
    StrBuf out = {0};
    const char *z = "x";
    size_t n = 1;
    assert_int_equal(fts_highlight_shared(gPlain, NULL, &z, &n, 0, &o, &out, &err, NULL), LP_OK);
    FtsNode *root;
    assert_int_equal(fts_match_parse(&gArena, "x", 1, azField, NFIELD, &root, &err), LP_OK);
    FtsHlQuery *q;
    assert_int_equal(fts_hl_query_build(&gArena, gPlain, root, F_BODY, 0, 0, &q, &err), LP_OK);
    const FtsHlQuery *cq = q;
    assert_int_equal(fts_highlight_shared(gPlain, &cq, &z, &n, 1, &o, &out, &err, NULL), LP_BADINPUT);
    assert_int_equal(out.n, 0);
    strbuf_free(&out);
}

static int setup(void **state) {
    (void)state;
    LpError err;
    AnalyzerConfig cfg = {"stem_en", "en", 0, 0, 0, 0, NULL, 2, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0}; /* min_infix_len 2 */
    if (analyzer_new(&cfg, &gStem, &err) != LP_OK) return -1;
    AnalyzerConfig plain = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    if (analyzer_new(&plain, &gPlain, &err) != LP_OK) return -1;
    /* min_prefix_len 1: expand_keywords' star part is 'word*' */
    AnalyzerConfig zones = {NULL, NULL, 1, 0, 0, 1, NULL, 0, NULL, 0, "z*", 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    if (analyzer_new(&zones, &gZones, &err) != LP_OK) return -1;
    AnalyzerConfig sp = {NULL, NULL, 1, 0, 1, 1, NULL, 0, NULL, 0, "z*", 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    if (analyzer_new(&sp, &gSp, &err) != LP_OK) return -1;
    arena_init(&gArena, 0);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    analyzer_free(gStem);
    analyzer_free(gPlain);
    analyzer_free(gZones);
    analyzer_free(gSp);
    arena_free(&gArena);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),       cmocka_unit_test(test_terms),
        cmocka_unit_test(test_stemming),       cmocka_unit_test(test_prefix),
        cmocka_unit_test(test_wildcard),
        cmocka_unit_test(test_phrase),         cmocka_unit_test(test_not),
        cmocka_unit_test(test_fields),         cmocka_unit_test(test_passages),
        cmocka_unit_test(test_passage_choice), cmocka_unit_test(test_no_match),
        cmocka_unit_test(test_limit_zero),     cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_words_and_passage_ids),
        cmocka_unit_test(test_options),        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_large),          cmocka_unit_test(test_zones),
        cmocka_unit_test(test_boundaries),     cmocka_unit_test(test_html_modes),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_shared_limits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
