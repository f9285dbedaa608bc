/*
** fuzz_wordforms.c — libFuzzer target for word forms: the rules parser
** (text/wordforms.c), the analyzer's run over rules (text/analyzer.c) and
** the query's joining of bare words (fts_match_join_words, fts/match.c).
**
** An input is rules, a NUL byte, then a text (no NUL: rules only), and
** optionally a second NUL and an ignore_chars list (text/charset.c). The
** rules build two analyzers: plain with them as word forms, and English
** stemming with stop words, exact forms, sentence boundaries,
** ignore_chars (so the characters the text loses move its tokens'
** offsets) and the rules as word forms, as exceptions (text/exceptions.c)
** and as the table's own stop words. Beyond the sanitizers it checks:
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *pNul = memchr(data, 0, size);
    size_t nRules = pNul ? (size_t)(pNul - data) : size;
    char *zRules = malloc(nRules + 1);
    if (!zRules) return 0;
    memcpy(zRules, data, nRules);
    zRules[nRules] = 0;
    const char *zText = pNul ? (const char *)pNul + 1 : "";
    size_t nText = pNul ? size - nRules - 1 : 0;
    /* a second NUL: what follows is the second analyzer's ignore_chars */
    const char *pNul2 = pNul ? memchr(zText, 0, nText) : NULL;
    char *zIgnore = NULL;
    if (pNul2) {
        size_t nIgnore = nText - (size_t)(pNul2 - zText) - 1;
        nText = (size_t)(pNul2 - zText);
        zIgnore = malloc(nIgnore + 1);
        if (!zIgnore) {
            free(zRules);
            return 0;
        }
        memcpy(zIgnore, pNul2 + 1, nIgnore);
        zIgnore[nIgnore] = 0;
        if (memchr(zIgnore, 0, nIgnore)) zIgnore[strlen(zIgnore)] = 0; /* up to a third NUL */
    }

    const AnalyzerConfig aCfg[2] = {
        {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 1, 0, zRules, NULL, NULL, NULL, 0, 0},
        /* stop words and short words that take no position, beside word
        ** forms' shifts */
        {"stem_en", "en", 0, 1, 1, 0, NULL, 0, NULL, 2, NULL, 1, 0, zRules, zIgnore ? zIgnore : "U+AD, -, U+301, a..c",
         zRules, zRules, 1, 1},
    };
    for (int k = 0; k < 2; k++) {
        Analyzer *a = NULL;
        LpError err;
        lp_err_clear(&err);
        int rc = analyzer_new(&aCfg[k], &a, &err);
        if (rc != LP_OK) {
            /* ignore_chars and the stop words name the item, not a place */
            int bCharset = strncmp(err.zMsg, "ignore_chars: ", 14) == 0 || strncmp(err.zMsg, "stop word '", 11) == 0;
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
    free(zIgnore);
    return 0;
}
