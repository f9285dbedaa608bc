/*
** fuzz_fts_match.c — libFuzzer target for the MATCH query parser.
**
** Each input is one query against a table with the fields title, body and
** tags. Beyond "no crash, no leak, no out-of-bounds read" (the
** sanitizers), it checks the parser's promises: success gives a tree
** whose every node lies inside the query, with flat AND/OR of two or more
** children, NOT only under an AND that also holds something positive,
** MAYBE of two, chains ('<<', NEAR/N; NOTNEAR/N of two) of words and
** exact phrases (but for '<<', prefixes and wildcards too), ORDERs ('<<'
** over more) of two or more operands
** none of them negated, anchored or boosted,
** quorum thresholds in range, and NUL-terminated leaf text ('?' and '%'
** are inline wildcards for inputs of odd length), and the dump
** of any tree succeeds; failure
** gives no tree, a message and, for a syntax error, an offset inside the
** query.
**
** A parsed query is then planned and run against a small in-memory index
** of documents over the words a, b, c, x, y and hello and the blend tokens
** x&y and & (so the fuzzer's words match; stemmed, with exact forms, '&' a
** blend character): every match in order, the top 5, the plan text and the
** score breakdown of the best hit. Planning may refuse a query
** (LP_BADINPUT, with a message); running may not fail, the top 5 must be
** matches, and their number min(5, matches). The ranker (each of them,
** proximity rankers and a ranking expression included) is chosen by the
** query's length, and
** expand_keywords by its first byte.
**
** Then HIGHLIGHT(): the query's words are marked in each field's text of
** the first documents (markup, zones and all), whole (limit 0) and cut to
** passages. Building the marked words may refuse what the planner
** refuses (with a message); highlighting may not fail, and with tags that cannot occur
** in a text, the whole text with the tags taken out must be the text the
** analyzer indexes.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fts/highlight.h"
#include "fts/match.h"
#include "fts/rankexpr.h"
#include "fts/memindex.h"
#include "fts/search.h"
#include "text/analyzer.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const azField[] = {"title", "body", "tags"};

/* The tree's invariants; aborts on a broken one. */
static int g_bNotOnly; /* the input is parsed with FTS_MATCH_NOT_ONLY */

static void check_node(const FtsNode *x, const FtsNode *parent, size_t n) {
    if (x->pos < 0 || x->len < 0 || (size_t)x->pos + (size_t)x->len > n) abort();
    switch (x->kind) {
    case FTSN_TERM:
    case FTSN_PREFIX:
    case FTSN_WILDCARD:
    case FTSN_PHRASE:
    case FTSN_QUORUM:
        if (!x->z || x->n < 0 || x->z[x->n] != 0 || x->nChild != 0) abort();
        if (x->kind == FTSN_TERM || x->kind == FTSN_PREFIX || x->kind == FTSN_WILDCARD) {
            if (x->n == 0) abort();
        }
        /* a wildcard has a wildcard character and a part without one; no
        ** run of '*'s */
        if (x->kind == FTSN_WILDCARD && !fts_match_is_regex(x->z, x->n) &&
            (strcspn(x->z, "*?%") == (size_t)x->n || strspn(x->z, "*?%") == (size_t)x->n || strstr(x->z, "**"))) {
            abort();
        }
        if (x->pZones && (x->pZones->nName < 1 || x->pZones->pos < 0 ||
                          (size_t)x->pZones->pos + (size_t)x->pZones->len > n)) {
            abort();
        }
        if (x->kind == FTSN_QUORUM &&
            !((x->nQuorum >= 1 && x->nQuorum <= FTS_MATCH_MAX_QUORUM) ||
              (x->nQuorum == 0 && x->fQuorum > 0 && x->fQuorum <= 1))) {
            abort();
        }
        if (x->anchor && (x->kind == FTSN_PREFIX || x->kind == FTSN_WILDCARD || x->kind == FTSN_QUORUM ||
                          x->nSlop)) {
            abort();
        }
        if (x->nPosLimit > FTS_MATCH_MAX_POS_LIMIT) abort();
        /* a boost only on a word, in (0, FTS_MATCH_MAX_BOOST] */
        if (x->fBoost != 0 && (x->kind != FTSN_TERM || !(x->fBoost > 0) || x->fBoost > FTS_MATCH_MAX_BOOST)) {
            abort();
        }
        return;
    case FTSN_MAYBE:
        if (x->nChild != 2) abort();
        for (int k = 0; k < 2; k++) {
            if (x->aChild[k]->kind == FTSN_NOT) abort();
            check_node(x->aChild[k], x, n);
        }
        return;
    case FTSN_ORDER:
        if (x->nChild < 2) abort();
        for (int k = 0; k < x->nChild; k++) {
            const FtsNode *c = x->aChild[k];
            /* anchored: words and exact phrases only */
            if (c->kind == FTSN_NOT || c->fBoost) abort();
            if (c->anchor && c->kind != FTSN_TERM && c->kind != FTSN_PHRASE) abort();
            check_node(c, x, n);
        }
        return;
    case FTSN_NEAR_ANY:
        if (x->nChild < 2 || (x->bNotNear && x->nChild != 2)) abort(); /* NOTNEAR over any operands: two */
        for (int k = 0; k < x->nChild; k++) {
            const FtsNode *c = x->aChild[k];
            if (c->kind == FTSN_NOT || fts_match_is_negative(c) || c->fBoost) abort();
            if (k && (x->aDist[k - 1] < 1 || x->aDist[k - 1] > FTS_MATCH_MAX_SLOP)) abort();
            check_node(c, x, n);
        }
        return;
    case FTSN_BEFORE:
    case FTSN_NEAR:
    case FTSN_SENTENCE:
    case FTSN_PARAGRAPH:
        if (x->nChild < 2) abort();
        if (x->bNotNear && (x->kind != FTSN_NEAR || x->nChild != 2)) abort(); /* a NOTNEAR/N b */
        for (int k = 0; k < x->nChild; k++) {
            const FtsNode *c = x->aChild[k];
            /* words, exact phrases, and (but for '<<', an ORDER then) prefixes and wildcards */
            int bWords = c->kind == FTSN_TERM || (c->kind == FTSN_PHRASE && c->nSlop == 0);
            int bExpand = x->kind != FTSN_BEFORE && (c->kind == FTSN_PREFIX || c->kind == FTSN_WILDCARD);
            if (!(bWords || bExpand) || (c->anchor && !bWords) || c->fBoost) abort();
            if (x->kind == FTSN_NEAR && k && (x->aDist[k - 1] < 1 || x->aDist[k - 1] > FTS_MATCH_MAX_SLOP)) {
                abort();
            }
            check_node(c, x, n);
        }
        return;
    case FTSN_NOT:
        /* inside an AND; or the root itself, where only negations are allowed */
        if (x->nChild != 1 || (parent ? parent->kind != FTSN_AND : !g_bNotOnly)) abort();
        if (x->aChild[0]->kind == FTSN_NOT) abort();
        check_node(x->aChild[0], x, n);
        return;
    case FTSN_AND:
    case FTSN_OR: {
        if (x->nChild < 2) abort();
        int nPos = 0;
        if (x->pSpan && (x->kind != FTSN_AND || !x->pSpan->bSpan)) abort();
        for (int k = 0; k < x->nChild; k++) {
            /* flat, but for ZONESPAN groups and a chain's choices */
            if (x->aChild[k]->kind == x->kind && !x->aChild[k]->pSpan && !x->aChild[k]->bChoices) abort();
            if (x->aChild[k]->kind != FTSN_NOT) nPos++;
            check_node(x->aChild[k], x, n);
        }
        if (nPos == 0 && !(x->kind == FTSN_AND && !parent && g_bNotOnly)) abort();
        return;
    }
    }
    abort();
}

static Analyzer *g_an;
static Analyzer *g_anRx; /* g_an's reading with regexp_filter rules, no zones */
static FtsMem *g_mem;

#define HL_DOCS 4
static char g_azText[HL_DOCS][3][1024]; /* the fields of the first documents, as indexed */

/* 40 documents of 0..29 words per field, from a fixed generator. */
static void build_index(void) {
    static const char *const azWord[] = {"a", "b", "c", "x", "y", "hello", "x&y", "&"};
    LpError err;
    /* Stemmed, with exact forms, so '=word' is planned too (the stems of
    ** these words are the words), with sentences and paragraphs, and HTML
    ** zones h1.. and th (ZONE:). */
    AnalyzerConfig cfg = {"stem_en", NULL, 0, 1, 1, 1, NULL, 1, NULL, 0, "h*, th", 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0}; /* wildcards planned too */
    /* blend tokens ("x&y": forms inside one word, for HIGHLIGHT()) */
    cfg.zBlendChars = "&";
    cfg.zBlendMode = "trim_none, trim_head";
    if (analyzer_new(&cfg, &g_an, &err)) abort();
    /* rules that join words, split them, drop text and move it: what
    ** HIGHLIGHT() shows is the text before them */
    cfg.zIndexZones = NULL;
    cfg.zRegexpFilter = "(hello) (\\w) => \\1\\2\nb => bee b\n\\? => \n(\\w+) (x) => \\2 \\1 X\nx&y => xy";
    if (analyzer_new(&cfg, &g_anRx, &err)) abort();
    g_mem = fts_mem_new(3);
    if (!g_mem) abort();
    unsigned seed = 7;
    FtsDocBuf d = {0};
    for (uint32_t doc = 0; doc < 40; doc++) {
        fts_docbuf_reset(&d);
        for (int f = 0; f < 3; f++) {
            char zText[1024] = "";
            seed = seed * 1103515245u + 12345u;
            int nWord = (int)((seed >> 16) % 30);
            for (int k = 0; k < nWord; k++) {
                seed = seed * 1103515245u + 12345u;
                if (k % 5 == 1) strcat(zText, "<h1>");
                if (k % 11 == 3) strcat(zText, "<th>");
                strcat(zText, azWord[(seed >> 16) % 6]);
                if (k % 7 == 5) strcat(zText, "</h1>");
                if (k % 13 == 6) strcat(zText, " </th>");
                strcat(zText, k % 9 == 8 ? "\n\n" : k % 4 == 3 ? "? " : " ");
            }
            if (doc < HL_DOCS) memcpy(g_azText[doc][f], zText, sizeof(zText));
            if (fts_docbuf_field(&d, g_an, f, zText, strlen(zText), &err)) abort();
        }
        if (fts_mem_add(g_mem, doc, &d)) abort();
    }
    fts_docbuf_free(&d);
}

static int count_hit(void *ctx, uint32_t doc, double score) {
    (void)doc;
    if (!(score >= 0)) abort();
    (*(int *)ctx)++;
    return 0;
}

/* Plans and runs root (parsed from z[0..n)) against the index. */
static void run_query(Arena *a, const FtsNode *root, const char *z, size_t n) {
    FtsRankParams rank;
    fts_rank_defaults(&rank);
    /* every ranker, by the query's length: the proximity rankers read
    ** positions on paths of their own */
    rank.ranker = (FtsRanker)(n % (FTS_RANK_EXPR + 1));
    if (rank.ranker == FTS_RANK_EXPR) {
        /* a ranking expression reading every factor */
        static const char zExpr[] = "sum((4*lcs+2*(min_hit_pos==1)+exact_hit)*user_weight)*1000+bm25"
                                    "+top(word_count+hit_count)/max_lcs+field_mask+bm25f"
                                    "+sum(tf_idf+sum_idf*min_idf/max_idf+lccs*wlccs)"
                                    "+top(min_best_span_pos+exact_order)+doc_word_count"
                                    "*query_word_count+bm25a(1.2,0.75)+bm25f(0.5,1)+top(atc)+sum(min_gaps)"
                                    "+sum(max_window_hits(3))";
        FtsRankExpr *e;
        LpError ex;
        if (fts_rankexpr_compile(a, zExpr, sizeof(zExpr) - 1, &e, &ex) != LP_OK) abort();
        rank.pExpr = e;
    }
    /* and every expand_keywords, by the query's first byte */
    rank.expand = n ? (unsigned char)z[0] % 4 : 0;
    FtsQuery *q;
    LpError err;
    lp_err_clear(&err);
    int rc = fts_query_new(a, root, z, g_an, fts_mem_source(g_mem), &rank, &q, &err);
    if (rc != LP_OK) {
        if (rc != LP_BADINPUT || err.zMsg[0] == 0) abort();
        return;
    }
    int nAll = 0;
    FtsStats st;
    if (fts_query_all(q, count_hit, &nAll, &st, &err) != LP_OK) abort();
    fts_query_free(q);
    if (fts_query_new(a, root, z, g_an, fts_mem_source(g_mem), &rank, &q, &err) != LP_OK) abort();
    FtsHit aHit[5];
    int nHit = 0;
    if (fts_query_topk(q, 5, NULL, NULL, aHit, &nHit, &st, &err) != LP_OK) abort();
    if (nHit != (nAll < 5 ? nAll : 5)) abort();
    StrBuf sb = {0};
    fts_query_plan_text(q, &sb);
    fts_query_free(q);
    if (nHit > 0) {
        if (fts_query_new(a, root, z, g_an, fts_mem_source(g_mem), &rank, &q, &err) != LP_OK) abort();
        if (fts_query_explain_doc(q, aHit[0].doc, &sb, &err) != LP_OK) abort();
        fts_query_free(q);
        /* PACKEDFACTORS(): refused unless the ranker weighs factors */
        if (fts_query_new(a, root, z, g_an, fts_mem_source(g_mem), &rank, &q, &err) != LP_OK) abort();
        int rc = fts_query_packed_factors(q, aHit[nHit - 1].doc, (int)(n & 1), &sb, &err);
        if (rank.ranker >= FTS_RANK_PROXIMITY_BM25 ? rc != LP_OK : rc != LP_BADINPUT) abort();
        fts_query_free(q);
    }
    strbuf_free(&sb);
}

/* Removes every \x01 and \x02 (the tags) from sb. */
static void drop_tags(StrBuf *sb) {
    size_t o = 0;
    for (size_t i = 0; i < sb->n; i++) {
        if (sb->z[i] != 1 && sb->z[i] != 2) sb->z[o++] = sb->z[i];
    }
    sb->n = o;
}

/* Marks in out: \1 and \2 in turn, each pair around some text; -1 when
** they are not. */
static int count_marks(const StrBuf *out) {
    int nTag = 0, bOpen = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (out->z[i] == 1) {
            if (bOpen || i + 1 >= out->n || out->z[i + 1] == 2) return -1;
            bOpen = 1;
            nTag++;
        } else if (out->z[i] == 2) {
            if (!bOpen) return -1;
            bOpen = 0;
        }
    }
    return bOpen ? -1 : nTag;
}

/* HIGHLIGHT() of root with g_anRx (regexp_filter rules) in field f of the
** first documents: whole, the text before the rules (retain: as stored)
** with each mark around some of it; cut, within the limits. */
static void run_highlight_rules(Arena *a, const FtsNode *root, size_t n, int f) {
    FtsHlQuery *hq;
    LpError err;
    if (fts_hl_query_build(a, g_anRx, root, f, (int)(n % 4), (int)(n / 4 % 2), &hq, &err) != LP_OK) return;
    FtsHlOptions o;
    fts_hl_options_init(&o);
    o.zBefore = "\x01";
    o.zAfter = "\x02";
    o.zChunkSep = "\x03";
    for (int d = 0; d < HL_DOCS; d++) {
        const char *z = g_azText[d][f];
        StrBuf out = {0}, ref = {0};
        FtsHlStats st;
        o.limit = o.limitWords = 0;
        o.around = (int)(n % 5);
        o.htmlMode = n % 3 == 2 ? FTS_HL_HTML_RETAIN : FTS_HL_HTML_INDEX;
        if (fts_highlight(g_anRx, hq, z, strlen(z), &o, &out, &err, &st) != LP_OK) abort();
        int nTag = count_marks(&out);
        if (!out.oom && (nTag < 0 || nTag != st.nMarked)) abort();
        const char *zDoc = z;
        size_t nDoc = strlen(z);
        if (!o.htmlMode && analyzer_doc_text_as(g_anRx, 1, 0, z, nDoc, &ref, &zDoc, &nDoc, NULL, &err)) abort();
        drop_tags(&out);
        if (!out.oom && (out.n != nDoc || (nDoc && memcmp(out.z, zDoc, nDoc) != 0))) {
            fprintf(stderr, "DBG mode %d\n got  [%.*s]\n want [%.*s]\n", o.htmlMode, (int)out.n, out.z, (int)nDoc, zDoc);
            abort();
        }
        out.n = 0;
        o.htmlMode = FTS_HL_HTML_INDEX;
        o.limit = 10 + (int)(n % 40);
        o.limitWords = (int)(n % 7);
        if (fts_highlight(g_anRx, hq, z, strlen(z), &o, &out, &err, &st) != LP_OK) abort();
        nTag = count_marks(&out);
        if (!out.oom && (nTag < 0 || nTag != st.nMarked)) abort();
        if (st.nChars > o.limit || (o.limitWords && st.nWords > o.limitWords)) abort();
        /* the passages are pieces of the text shown, in order */
        if (!o.htmlMode && analyzer_doc_text_as(g_anRx, 1, 0, z, strlen(z), &ref, &zDoc, &nDoc, NULL, &err)) abort();
        drop_tags(&out);
        size_t iDoc = 0;
        for (size_t i = 0; !out.oom && i < out.n;) {
            size_t j = i;
            while (j < out.n && out.z[j] != 3) j++;
            const char *p = j > i ? memmem(zDoc + iDoc, nDoc - iDoc, out.z + i, j - i) : zDoc + iDoc;
            if (!p) abort();
            iDoc = (size_t)(p - zDoc) + (j - i);
            i = j + 1;
        }
        strbuf_free(&out);
        strbuf_free(&ref);
    }
}

/* HIGHLIGHT() of root in each field of the first documents. */
static void run_highlight(Arena *a, const FtsNode *root, size_t n) {
    FtsHlOptions o;
    fts_hl_options_init(&o);
    o.zBefore = "\x01";
    o.zAfter = "\x02";
    for (int f = 0; f < 3; f++) {
        FtsHlQuery *hq;
        LpError err;
        /* field f, or any field (SNIPPET()) for odd lengths */
        /* refused as the planner refuses (a wildcard too short): with a message;
        ** exact_phrase on for half the lengths */
        run_highlight_rules(a, root, n, f);
        int rc = fts_hl_query_build(a, g_an, root, n % 2 ? -1 : f, (int)(n % 4), (int)(n / 4 % 2), &hq, &err);
        if (rc == LP_BADINPUT && err.zMsg[0]) return;
        if (rc != LP_OK) abort();
        for (int d = 0; d < HL_DOCS; d++) {
            const char *z = g_azText[d][f];
            StrBuf out = {0}, ref = {0};
            /* no limit: the whole text, as indexed; or (html_strip_mode
            ** retain, for a third of the lengths) as stored, markup and all */
            o.limit = o.limitWords = o.bForcePassages = o.boundary = o.bEmitZones = 0;
            o.htmlMode = n % 3 == 2 ? FTS_HL_HTML_RETAIN : FTS_HL_HTML_INDEX;
            if (fts_highlight(g_an, hq, z, strlen(z), &o, &out, &err, NULL) != LP_OK) abort();
            const char *zDoc = z;
            size_t nDoc = strlen(z);
            if (!o.htmlMode && analyzer_doc_text(g_an, z, strlen(z), &ref, &zDoc, &nDoc, &err) != LP_OK) abort();
            drop_tags(&out);
            if (!out.oom && (out.n != nDoc || (nDoc && memcmp(out.z, zDoc, nDoc) != 0))) abort();
            out.n = 0;
            o.htmlMode = FTS_HL_HTML_INDEX;
            o.limit = 20 + (int)(n % 40);
            o.around = (int)(n % 5);
            /* limit_words, force_passages, passage_boundary (the table
            ** indexes sentences and zones); the marks reported are the
            ** marks written, and the limits hold (force_all_words is off) */
            o.limitWords = (int)(n % 7);
            o.bForcePassages = (int)(n / 8 % 2);
            o.boundary = (int)(n / 16 % 4);
            if (o.boundary && o.around == 0) o.around = 1; /* refused, as in Manticore */
            o.bEmitZones = o.boundary == FTS_HL_BOUNDARY_ZONE && n % 2;
            FtsHlStats st;
            int nTag = 0;
            if (fts_highlight(g_an, hq, z, strlen(z), &o, &out, &err, &st) != LP_OK) abort();
            for (size_t i = 0; i < out.n; i++) nTag += out.z[i] == 1;
            if (!out.oom && nTag != st.nMarked) abort();
            if (st.nChars > o.limit || (o.limitWords && st.nWords > o.limitWords)) abort();
            strbuf_free(&out);
            strbuf_free(&ref);
        }
    }
    /* limits_per_field=0: the three fields share the limits; the marks
    ** reported are the marks written, and the limits hold together */
    const FtsHlQuery *apQ[3];
    for (int f = 0; f < 3; f++) {
        FtsHlQuery *hq;
        LpError err;
        if (fts_hl_query_build(a, g_an, root, f, (int)(n % 4), (int)(n / 4 % 2), &hq, &err) != LP_OK) return;
        apQ[f] = hq;
    }
    o.htmlMode = FTS_HL_HTML_INDEX;
    o.limit = 10 + (int)(n % 60);
    o.around = 1 + (int)(n % 4);
    o.limitWords = (int)(n % 9);
    o.limitPassages = (int)(n / 3 % 4);
    o.bForcePassages = (int)(n / 8 % 2);
    o.boundary = (int)(n / 16 % 4);
    o.bEmitZones = o.boundary == FTS_HL_BOUNDARY_ZONE && n % 2;
    o.bAllowEmpty = (int)(n / 32 % 2);
    o.startPassageId = 7;
    for (int d = 0; d < HL_DOCS; d++) {
        const char *az[3];
        size_t anText[3];
        StrBuf aOut[3] = {{0}, {0}, {0}};
        FtsHlStats aSt[3];
        LpError err;
        for (int f = 0; f < 3; f++) az[f] = g_azText[d][f], anText[f] = strlen(az[f]);
        if (fts_highlight_shared(g_an, apQ, az, anText, 3, &o, aOut, &err, aSt) != LP_OK) abort();
        int64_t nChars = 0, nWords = 0, nPassages = 0;
        for (int f = 0; f < 3; f++) {
            int nTag = 0;
            for (size_t i = 0; i < aOut[f].n; i++) nTag += aOut[f].z[i] == 1;
            if (!aOut[f].oom && nTag != aSt[f].nMarked) abort();
            if ((aOut[f].n == 0) != (aSt[f].nPassages == 0) && !o.bAllowEmpty) abort();
            nChars += aSt[f].nChars;
            nWords += aSt[f].nWords;
            nPassages += aSt[f].nPassages;
            strbuf_free(&aOut[f]);
        }
        if (nChars > o.limit || (o.limitWords && nWords > o.limitWords)) abort();
        if (o.limitPassages && nPassages > o.limitPassages) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_mem) build_index();
    /* A heap copy of exactly size bytes, so ASan catches any read past the
    ** end (the fuzzer's own buffer may have slack). */
    char *z = malloc(size ? size : 1);
    if (!z) return 0;
    if (size) memcpy(z, data, size);
    Arena a;
    arena_init(&a, 0);
    FtsNode *root = (FtsNode *)1;
    LpError err;
    lp_err_clear(&err);
    /* '?' and '%' are wildcards (the index has min_infix_len) for inputs of
    ** odd length, words for the others */
    /* and a query of only negations is allowed (not_terms_only_allowed=1)
    ** for lengths 2 and 3 modulo 4 */
    g_bNotOnly = (size / 2) % 2;
    /* and every word its exact form (OPTION morphology=none; the index
    ** has them) for lengths 8 to 15 modulo 16 */
    unsigned flags = (size % 2 ? FTS_MATCH_INLINE_WILDCARDS : 0) | (g_bNotOnly ? FTS_MATCH_NOT_ONLY : 0) |
                     ((size / 8) % 2 ? FTS_MATCH_EXACT_FORMS : 0);
    int rc = fts_match_parse_opts(&a, z, size, azField, 3, flags, &root, &err);
    if (rc == LP_OK) {
        if (err.code != LP_OK) abort();
        if (root) check_node(root, NULL, size);
        /* as the server reads a MATCH: prefixes and wildcards of several
        ** words split into them (the tree keeps its promises) */
        if (fts_match_split_words(&a, root, g_an, &err) != LP_OK) abort();
        if (root) check_node(root, NULL, size);
        StrBuf sb = {0};
        fts_match_dump(root, azField, 3, &sb);
        if (!sb.oom && (!sb.z || sb.n == 0)) abort();
        strbuf_free(&sb);
        run_query(&a, root, z, size);
        run_highlight(&a, root, size);
    } else {
        if (root || err.code != rc || err.zMsg[0] == 0) abort();
        if (rc == LP_BADINPUT &&
            (err.detail != FTS_MATCH_ER_PARSE || err.pos < 0 || (size_t)err.pos > size)) {
            abort();
        }
    }
    arena_free(&a);
    free(z);
    return 0;
}
