/*
** fuzz_wordforms.c — libFuzzer target for word forms: the rules parser
** (text/wordforms.c), the analyzer's run over rules (text/analyzer.c) and
** the query's joining of bare words (fts_match_join_words, fts/match.c).
**
** An input is rules, a NUL byte, then a text (no NUL: rules only), and
** optionally a second NUL and an ignore_chars list (text/charset.c), and
** a third NUL and a charset_table (text/charset.c). The rules build three
** analyzers: plain with them as word forms; English stemming with stop
** words, exact forms, sentence boundaries, ignore_chars (so the
** characters the text loses move its tokens' offsets) and the rules as
** word forms, as exceptions (text/exceptions.c) and as the table's own
** stop words; and the same under the charset_table (named characters
** mapped, '+', '#' and '-' word characters where the input gives none)
** with blend characters ('&', '@', '!', '-'; three blend modes),
** n-gram characters (CJK, U+3000..U+303F, 'Q') and stemmed stop words
** (stopwords_unstemmed='0').
** Beyond the sanitizers it checks:
**   - building succeeds, or fails with LP_BADINPUT naming a byte of the
**     rules (err->pos inside them) and a message; nothing else;
**   - a document's tokens: terms 1..ANALYZER_MAX_TERM bytes of valid
**     UTF-8; offsets inside the text, non-empty, starts never going back;
**     positions never going back, the last one below the end position
**     reported; an exact form is followed by its term, at its place;
**   - rules that hold no rule (blanks, comments) give the analyzer
**     without them, token for token;
**   - the query side (analyzer_run_query) keeps the same order promises;
**   - the text parsed as a MATCH query, its prefixes and wildcards split
**     into words (fts_match_split_words), then its bare words joined
**     (fts_match_join_words): LP_OK, and every leaf's text analyses.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fts/match.h"
#include "text/analyzer.h"
#include "text/utf8.h"
#include "util/arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct Tok {
    char z[ANALYZER_MAX_TERM];
    int n;
    uint32_t iPos, iStart, iEnd;
} Tok;

typedef struct Run {
    int bDoc;           /* a document's run: exact forms come with their term */
    size_t nInput;
    Tok *a;
    size_t n, nAlloc;
} Run;

static int on_token(void *ctx, const Token *t) {
    Run *r = ctx;
    if (t->n < 1 || t->n > ANALYZER_MAX_TERM) abort();
    if (utf8_check(t->z, (size_t)t->n) != -1) abort();
    if (t->iStart >= t->iEnd || t->iEnd > r->nInput) abort();
    if (r->n > 0) {
        const Tok *p = &r->a[r->n - 1];
        if (t->iStart < p->iStart || t->iPos < p->iPos) abort();
        /* an exact form is followed by its word's term, at its place */
        if (r->bDoc && p->z[0] == ANALYZER_EXACT_MARK && t->z[0] != ANALYZER_EXACT_MARK &&
            (t->iPos != p->iPos || t->iStart != p->iStart || t->iEnd != p->iEnd)) {
            abort();
        }
    }
    if (r->n == r->nAlloc) {
        size_t nNew = r->nAlloc ? 2 * r->nAlloc : 64;
        Tok *aNew = realloc(r->a, nNew * sizeof(Tok));
        if (!aNew) return 1;
        r->a = aNew;
        r->nAlloc = nNew;
    }
    Tok *k = &r->a[r->n++];
    memcpy(k->z, t->z, (size_t)t->n);
    k->n = t->n;
    k->iPos = t->iPos;
    k->iStart = t->iStart;
    k->iEnd = t->iEnd;
    return 0;
}

/* Runs a over the text: a document, checked; returns its tokens. */
static Run run_doc(const Analyzer *a, const char *z, size_t n) {
    Run r = {1, n, NULL, 0, 0};
    uint32_t nEnd = 0;
    LpError err;
    int rc = analyzer_run(a, z, n, 0, on_token, &r, &nEnd, &err);
    if (rc == LP_OK) {
        if (r.n > 0 && r.a[r.n - 1].iPos >= nEnd) abort();
    } else if (rc != LP_BADINPUT && rc != LP_LIMIT) {
        abort();
    }
    return r;
}

static void same_runs(const Run *x, const Run *y) {
    if (x->n != y->n) abort();
    for (size_t i = 0; i < x->n; i++) {
        const Tok *p = &x->a[i], *q = &y->a[i];
        if (p->n != q->n || memcmp(p->z, q->z, (size_t)p->n) || p->iPos != q->iPos || p->iStart != q->iStart ||
            p->iEnd != q->iEnd) {
            abort();
        }
    }
}

static int leaf_ok(void *ctx, const FtsNode *leaf, int bNegated) {
    (void)bNegated;
    const Analyzer *a = ctx;
    if (leaf->kind != FTSN_TERM && leaf->kind != FTSN_PHRASE) return LP_OK;
    if (leaf->n < 0 || (leaf->n > 0 && !leaf->z)) abort();
    TokenList l = {{0}, {0}};
    LpError err;
    int rc = analyzer_collect(a, leaf->z, (size_t)leaf->n, ANALYZE_QUERY, &l, &err);
    token_list_free(&l);
    if (rc != LP_OK && rc != LP_BADINPUT && rc != LP_NOMEM) abort();
    return LP_OK;
}

/* Part k (0..3) of the input, as a NUL-ended copy (*pn: its bytes):
** the parts are separated by the first three NULs; NULL when the input
** has no part k, or out of memory. */
static char *input_part(const uint8_t *data, size_t size, int k, size_t *pn) {
    size_t i = 0;
    for (int j = 0; j < k; j++) {
        const uint8_t *p = memchr(data + i, 0, size - i);
        if (!p) return NULL;
        i = (size_t)(p - data) + 1;
    }
    const uint8_t *pEnd = k < 3 ? memchr(data + i, 0, size - i) : NULL;
    size_t n = (pEnd ? (size_t)(pEnd - data) : size) - i;
    char *z = malloc(n + 1);
    if (!z) return NULL;
    memcpy(z, data + i, n);
    z[n] = 0;
    *pn = n;
    return z;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t nRules = 0, nText = 0, nIgnore = 0, nCharset = 0;
    char *zRules = input_part(data, size, 0, &nRules);
    char *zTextCopy = input_part(data, size, 1, &nText);
    char *zIgnore = input_part(data, size, 2, &nIgnore);
    char *zCharset = input_part(data, size, 3, &nCharset);
    if (!zRules) {
        free(zTextCopy);
        free(zIgnore);
        free(zCharset);
        return 0;
    }
    const char *zText = zTextCopy ? zTextCopy : "";
    if (!zTextCopy) nText = 0;

    const char *zIgnoreUsed = zIgnore ? zIgnore : "U+AD, -, U+301, a..c";
    const AnalyzerConfig aCfg[3] = {
        {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, zRules, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0},
        /* stop words and short words that take no position, beside word
        ** forms' shifts */
        {"stem_en", "en", 0, 1, 1, 0, NULL, 0, NULL, 2, NULL, 1, 0, zRules, zIgnoreUsed, zRules, zRules, 1, 1, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0},
        {"stem_en", "en", 0, 1, 1, 0, NULL, 0, NULL, 2, NULL, 1, 0, zRules, zIgnoreUsed, zRules, zRules, 1, 1,
         zCharset ? zCharset : "non_cjk, +, #, U+2D, A..Z->a..z, U+E9->e, U+100..U+17F/2", "&, @->_, !, U+2D",
         "trim_none, trim_head, trim_all", 1, 1, "cont, U+3000..U+303F, Q->q", NULL, NULL, 0},
    };
    for (int k = 0; k < 3; k++) {
        Analyzer *a = NULL;
        LpError err;
        lp_err_clear(&err);
        int rc = analyzer_new(&aCfg[k], &a, &err);
        if (rc != LP_OK) {
            /* ignore_chars and the stop words name the item, not a place */
            int bCharset = strncmp(err.zMsg, "ignore_chars: ", 14) == 0 || strncmp(err.zMsg, "stop word '", 11) == 0 ||
                           strncmp(err.zMsg, "charset_table: ", 15) == 0 || strncmp(err.zMsg, "blend_chars: ", 13) == 0;
            if (rc != LP_BADINPUT || a || !err.zMsg[0] || (!bCharset && (err.pos < 0 || (size_t)err.pos > nRules))) {
                abort();
            }
            continue;
        }
        Run doc = run_doc(a, zText, nText);
        if (!analyzer_has_wordforms(a) && !analyzer_has_exceptions(a)) {
            /* no rule in the text: the analyzer without rules */
            AnalyzerConfig c = aCfg[k];
            c.zWordforms = NULL;
            c.zExceptions = NULL;
            Analyzer *b = NULL;
            if (analyzer_new(&c, &b, &err) != LP_OK) abort();
            Run plain = run_doc(b, zText, nText);
            same_runs(&doc, &plain);
            free(plain.a);
            analyzer_free(b);
        }
        free(doc.a);

        Run q = {0, nText, NULL, 0, 0};
        rc = analyzer_run_query(a, zText, nText, 0, on_token, &q, &err);
        if (rc != LP_OK && rc != LP_BADINPUT && rc != LP_LIMIT) abort();
        free(q.a);

        static const char *const azField[] = {"title", "body"};
        Arena ar;
        arena_init(&ar, 0);
        FtsNode *root = NULL;
        if (fts_match_parse(&ar, zText, nText, azField, 2, &root, &err) == LP_OK) {
            if (fts_match_split_words(&ar, root, a, &err) != LP_OK) abort();
            if (fts_match_join_words(&ar, zText, root, a, &err) != LP_OK) abort();
            fts_match_leaves(root, leaf_ok, a);
        }
        arena_free(&ar);
        analyzer_free(a);
    }
    free(zRules);
    free(zTextCopy);
    free(zIgnore);
    free(zCharset);
    return 0;
}
