/*
** test_fts_match.c — unit tests for src/fts/match.c: every operator and
** its precedence (through fts_match_dump), field scopes, escapes, phrases,
** prefixes, where a negation may stand, node offsets, UTF-8, the exact
** text and offset of every syntax error, nesting limits and long queries.
** Every successful parse is also checked against the tree's invariants.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fts/match.h"
#include "util/strbuf.h"

static const char *const azField[] = {"title", "body", "tags"};
#define NFIELD 3

static Arena gArena; /* reset by each parse */

/* ------------------------------------------------------------- helpers */

/* The tree's promises: offsets inside the query, leaves carry
** NUL-terminated text, AND/OR have two or more children and are flat, NOT
** has one child and an AND parent, and every AND has a positive child. */
static void check_node(const FtsNode *x, const FtsNode *parent, size_t n) {
    assert_true(x->pos >= 0 && x->len >= 0 && (size_t)x->pos + (size_t)x->len <= n);
    switch (x->kind) {
    case FTSN_TERM:
    case FTSN_PREFIX:
    case FTSN_WILDCARD:
    case FTSN_PHRASE:
    case FTSN_QUORUM:
        if (x->kind == FTSN_QUORUM) {
            assert_true((x->nQuorum >= 1 && x->nQuorum <= FTS_MATCH_MAX_QUORUM) ||
                        (x->nQuorum == 0 && x->fQuorum > 0 && x->fQuorum <= 1));
        }
        if (x->anchor) assert_true(x->kind != FTSN_PREFIX && x->kind != FTSN_WILDCARD && x->nSlop == 0);
        if (x->kind == FTSN_WILDCARD) assert_true(strcspn(x->z, "*?%") < (size_t)x->n || fts_match_is_regex(x->z, x->n));
        assert_true(x->nPosLimit <= FTS_MATCH_MAX_POS_LIMIT);
        if (x->pZones) {
            const FtsZones *zs = x->pZones;
            assert_true(zs->nName >= 1 && zs->pos >= 0 && (size_t)(zs->pos + zs->len) <= n);
            for (int k = 0; k < zs->nName; k++) {
                size_t m = strlen(zs->azName[k]);
                assert_true(m >= 1 && m <= FTS_MATCH_MAX_ZONE_NAME);
                for (size_t i = 0; i < m; i++) assert_false(zs->azName[k][i] >= 'A' && zs->azName[k][i] <= 'Z');
            }
        }
        assert_non_null(x->z);
        assert_int_equal(strnlen(x->z, (size_t)x->n + 1) <= (size_t)x->n, 1);
        assert_int_equal(x->z[x->n], 0);
        assert_int_equal(x->nChild, 0);
        if (x->kind != FTSN_PHRASE && x->kind != FTSN_QUORUM) assert_true(x->n > 0);
        return;
    case FTSN_MAYBE:
        assert_int_equal(x->nChild, 2);
        for (int k = 0; k < 2; k++) {
            assert_int_not_equal(x->aChild[k]->kind, FTSN_NOT);
            check_node(x->aChild[k], x, n);
        }
        return;
    case FTSN_BEFORE:
    case FTSN_NEAR:
    case FTSN_SENTENCE:
    case FTSN_PARAGRAPH:
        assert_true(x->nChild >= 2);
        for (int k = 0; k < x->nChild; k++) {
            const FtsNode *c = x->aChild[k];
            /* '<<' over prefixes and wildcards is an ORDER */
            assert_true(c->kind == FTSN_TERM || (c->kind == FTSN_PHRASE && c->nSlop == 0) ||
                        (x->kind != FTSN_BEFORE && (c->kind == FTSN_PREFIX || c->kind == FTSN_WILDCARD)));
            /* anchors: on words and exact phrases only */
            assert_true(c->anchor == 0 || c->kind == FTSN_TERM || c->kind == FTSN_PHRASE);
            if (x->kind == FTSN_NEAR && k) assert_true(x->aDist[k - 1] >= 1);
            check_node(c, x, n);
        }
        return;
    case FTSN_ORDER:
        /* '<<' with an operand a chain cannot take: positive, unboosted
        ** operands (anchored: words and exact phrases only), in the
        ** query's order */
        assert_true(x->nChild >= 2);
        for (int k = 0; k < x->nChild; k++) {
            const FtsNode *c = x->aChild[k];
            assert_true(c->kind != FTSN_NOT && c->fBoost == 0);
            assert_true(c->anchor == 0 || c->kind == FTSN_TERM || c->kind == FTSN_PHRASE);
            if (k) assert_true(c->pos >= x->aChild[k - 1]->pos + x->aChild[k - 1]->len);
            check_node(c, x, n);
        }
        return;
    case FTSN_NEAR_ANY:
        /* NEAR/N with an operand a chain cannot take: positive, unboosted
        ** operands, each linked to the one before by a distance */
        assert_true(x->nChild >= 2);
        for (int k = 0; k < x->nChild; k++) {
            const FtsNode *c = x->aChild[k];
            assert_true(c->kind != FTSN_NOT && c->fBoost == 0);
            if (k) assert_true(x->aDist[k - 1] >= 1 && x->aDist[k - 1] <= FTS_MATCH_MAX_SLOP);
            check_node(c, x, n);
        }
        return;
    case FTSN_NOT:
        assert_int_equal(x->nChild, 1);
        assert_non_null(parent);
        assert_int_equal(parent->kind, FTSN_AND);
        assert_int_not_equal(x->aChild[0]->kind, FTSN_NOT);
        check_node(x->aChild[0], x, n);
        return;
    case FTSN_AND:
    case FTSN_OR: {
        assert_true(x->nChild >= 2);
        int nPos = 0;
        /* flat, but for a ZONESPAN's AND (one span for its parts) */
        assert_true(!x->pSpan || (x->kind == FTSN_AND && x->pSpan->bSpan));
        for (int k = 0; k < x->nChild; k++) {
            if (!x->aChild[k]->pSpan) assert_int_not_equal(x->aChild[k]->kind, x->kind);
            if (x->aChild[k]->kind != FTSN_NOT) nPos++;
            check_node(x->aChild[k], x, n);
        }
        assert_true(nPos > 0);
        return;
    }
    }
    fail_msg("bad node kind %d", (int)x->kind);
}

static FtsNode *parse_n(const char *z, size_t n) {
    FtsNode *root = (FtsNode *)1;
    LpError err;
    lp_err_clear(&err);
    arena_reset(&gArena);
    int rc = fts_match_parse(&gArena, z, n, azField, NFIELD, &root, &err);
    if (rc != LP_OK) fail_msg("parse of \"%s\" failed: %s", z, err.zMsg);
    assert_int_equal(err.code, LP_OK);
    if (root) check_node(root, NULL, n);
    return root;
}

static FtsNode *parse(const char *z) {
    return parse_n(z, strlen(z));
}

/* Asserts that z parses to the dump zWant. */
static void check(const char *z, const char *zWant) {
    FtsNode *root = parse(z);
    StrBuf sb = {0};
    fts_match_dump(root, azField, NFIELD, &sb);
    assert_false(sb.oom);
    /* Copied out so that a failure (a longjmp) leaks nothing. */
    static char zGot[4096];
    snprintf(zGot, sizeof(zGot), "%s", sb.z);
    int bSame = strcmp(sb.z, zWant) == 0;
    strbuf_free(&sb);
    if (!bSame) fail_msg("%s:\n got  %s\n want %s", z, zGot, zWant);
}

/* Asserts the syntax error of z[0..n) parsed with flags (FTS_MATCH_*):
** message, offset, codes. */
static void check_error_flags(const char *z, size_t n, unsigned flags, int pos, const char *zMsg) {
    FtsNode *root = (FtsNode *)1;
    LpError err;
    lp_err_clear(&err);
    arena_reset(&gArena);
    int rc = fts_match_parse_opts(&gArena, z, n, azField, NFIELD, flags, &root, &err);
    if (rc == LP_OK) fail_msg("parse of \"%s\" succeeded", z);
    assert_null(root);
    assert_int_equal(rc, LP_BADINPUT);
    assert_int_equal(err.code, LP_BADINPUT);
    assert_int_equal(err.detail, FTS_MATCH_ER_PARSE);
    if (strcmp(err.zMsg, zMsg) != 0) fail_msg("%s:\n got  %s\n want %s", z, err.zMsg, zMsg);
    if (err.pos != pos) fail_msg("%s: pos %d, want %d", z, (int)err.pos, pos);
}

static void check_error_n(const char *z, size_t n, int pos, const char *zMsg) {
    check_error_flags(z, n, 0, pos, zMsg);
}

static void check_error(const char *z, int pos, const char *zMsg) {
    check_error_n(z, strlen(z), pos, zMsg);
}

/* ------------------------------------------------------------- tests */

/* FTS_MATCH_EXACT_FORMS (OPTION morphology=none): the tree of each query
** is the one of the query with every word written =word and every phrase
** and quorum ="…"; prefixes and wildcards stay. */
static void test_exact_forms_flag(void **state) {
    (void)state;
    static const char *const az[][2] = {
        {"running", "=running"},
        {"=running fast", "=running =fast"},
        {"\"a b\" | \"c d\"/1 | \"e f\"~2", "=\"a b\" | =\"c d\"/1 | =\"e f\"~2"},
        {"^start end$ -not x*", "^=start =end$ -=not x*"},
        {"f NEAR/2 (g | h) << i", "=f NEAR/2 (=g | =h) << =i"},
        {"@title a MAYBE b", "@title =a MAYBE =b"},
    };
    for (size_t i = 0; i < sizeof(az) / sizeof(az[0]); i++) {
        StrBuf a = {0}, b = {0};
        LpError err;
        FtsNode *root;
        arena_reset(&gArena);
        assert_int_equal(fts_match_parse_opts(&gArena, az[i][0], strlen(az[i][0]), azField, NFIELD,
                                              FTS_MATCH_EXACT_FORMS, &root, &err), LP_OK);
        fts_match_dump(root, azField, NFIELD, &a);
        assert_int_equal(fts_match_parse_opts(&gArena, az[i][1], strlen(az[i][1]), azField, NFIELD, 0, &root, &err),
                         LP_OK);
        fts_match_dump(root, azField, NFIELD, &b);
        static char zA[2048], zB[2048];
        snprintf(zA, sizeof(zA), "%s", a.z);
        snprintf(zB, sizeof(zB), "%s", b.z);
        strbuf_free(&a);
        strbuf_free(&b);
        if (strcmp(zA, zB) != 0) fail_msg("%s:\n got  %s\n want %s", az[i][0], zA, zB);
        if (i == 0) assert_string_equal(zA, "=running");
    }
    /* and without the flag, a word stays a word */
    check("running", "running");
}

static void test_empty(void **state) {
    (void)state;
    assert_null(parse(""));
    assert_null(parse("   \t\n "));
    assert_null(parse(":"));            /* ':' not after a field separates */
    assert_null(parse("\xe3\x80\x80")); /* U+3000 ideographic space */
    check("", "EMPTY");
}

static void test_and_or(void **state) {
    (void)state;
    check("hello", "hello");
    check("hello world", "AND(hello, world)");
    check("  hello \t world  ", "AND(hello, world)");
    check("a | b", "OR(a, b)");
    check("a|b", "OR(a, b)");
    check("a | b | c", "OR(a, b, c)");
    /* '|' binds tighter than the implicit AND. */
    check("a b | c", "AND(a, OR(b, c))");
    check("a | b c", "AND(OR(a, b), c)");
    check("a | b c | d", "AND(OR(a, b), OR(c, d))");
    check("(a b) | c", "OR(AND(a, b), c)");
    check("a | (b c)", "OR(a, AND(b, c))");
    /* Nested ANDs and ORs are flattened; one-element groups vanish. */
    check("a (b c)", "AND(a, b, c)");
    check("(a b) (c d)", "AND(a, b, c, d)");
    check("a | (b | c)", "OR(a, b, c)");
    check("((a | b) | c) | d", "OR(a, b, c, d)");
    check("((a))", "a");
    check("(((a b)))", "AND(a, b)");
    check("(a | b) (c | d)", "AND(OR(a, b), OR(c, d))");
    /* Groups glue to words without spaces. */
    check("a(b|c)d", "AND(a, OR(b, c), d)");
}

static void test_not(void **state) {
    (void)state;
    check("a -b", "AND(a, NOT(b))");
    check("a !b", "AND(a, NOT(b))");
    check("a - b", "AND(a, NOT(b))");
    check("-a b", "AND(NOT(a), b)");
    check("a -(b | c)", "AND(a, NOT(OR(b, c)))");
    check("a -(b c)", "AND(a, NOT(AND(b, c)))");
    check("a -\"b c\"", "AND(a, NOT(PHRASE(\"b c\")))");
    check("a -b*", "AND(a, NOT(PREFIX(b*)))");
    /* A negation takes the whole '|' list after it (Sphinx's orlistf). */
    check("-a | b c", "AND(NOT(OR(a, b)), c)");
    check("c -a | b", "AND(c, NOT(OR(a, b)))");
    /* A group of negations next to a positive term joins its AND. */
    check("a (-b -c)", "AND(a, NOT(b), NOT(c))");
    check("(-b) a", "AND(NOT(b), a)");
    check("a -(b -c)", "AND(a, NOT(AND(b, NOT(c))))");
    /* Inside a word '-' and '!' are just characters. */
    check("e-mail", "e-mail");
    check("yahoo! c++ me@host.com", "AND(yahoo!, c++, me@host.com)");
    check("a-", "a-");
}

static void test_not_errors(void **state) {
    (void)state;
    const char *zOnly = "MATCH: a query of only negated terms matches nothing useful: add a term "
                        "that is not negated (or, for every row without them, OPTION "
                        "not_terms_only_allowed=1)";
    check_error("-a", 0, zOnly);
    check_error("!a", 0, zOnly);
    check_error("-a -b", 0, zOnly);
    check_error("  -a", 2, zOnly);
    check_error("(-a -b)", 0, zOnly);
    check_error("-a | b", 0, zOnly);
    check_error("@title -a", 7, zOnly);
    check_error("a | -b", 4,
                "MATCH: near '-b' at offset 4: '|' cannot take a negated operand (write -(a | b) "
                "to exclude both)");
    check_error("a | !b", 4,
                "MATCH: near '!b' at offset 4: '|' cannot take a negated operand (write -(a | b) "
                "to exclude both)");
    check_error("a | (-b)", 4,
                "MATCH: near '(-b)' at offset 4: '|' cannot take a negated operand (write -(a | b) "
                "to exclude both)");
    check_error("x (-b) | a", 2,
                "MATCH: near '(-b) | a' at offset 2: '|' cannot take a negated operand (write -(a "
                "| b) to exclude "
                "both)");
    check_error("a -(-b)", 3,
                "MATCH: near '(-b)' at offset 3: cannot negate a group of only negated terms");
    check_error("a --b", 3, "MATCH: near '-b' at offset 3: expected a word, phrase or '('");
    check_error("a -!b", 3, "MATCH: near '!b' at offset 3: expected a word, phrase or '('");
    check_error("a +-b", 3, "MATCH: near '-b' at offset 3: expected a word, phrase or '('");
    check_error("a -", 3,
                "MATCH: unexpected end of query at offset 3: expected a word, phrase or '('");
}

static void test_required(void **state) {
    (void)state;
    check("+a b", "AND(a, b)");
    check("+\"a b\" +c*", "AND(PHRASE(\"a b\"), PREFIX(c*))");
    check("+(a | b) c", "AND(OR(a, b), c)");
    FtsNode *root = parse("+a b +\"c\"");
    assert_int_equal(root->kind, FTSN_AND);
    assert_int_equal(root->aChild[0]->bRequired, 1);
    assert_int_equal(root->aChild[1]->bRequired, 0);
    assert_int_equal(root->aChild[2]->bRequired, 1);
    assert_int_equal(root->aChild[0]->pos, 1); /* the word, not the '+' */
    check_error("a +", 3,
                "MATCH: unexpected end of query at offset 3: expected a word, phrase or '('");
    check_error("++a", 1, "MATCH: near '+a' at offset 1: expected a word, phrase or '('");
}

static void test_phrase(void **state) {
    (void)state;
    check("\"hello world\"", "PHRASE(\"hello world\")");
    check("\"hello world\"~3", "PHRASE(\"hello world\"~3)");
    check("\"hello world\"~0", "PHRASE(\"hello world\")");
    check("\"a b\"~10 c", "AND(PHRASE(\"a b\"~10), c)");
    /* Operators inside quotes are plain text for the analyzer. */
    check("\"a (b) | -c @title d\"", "PHRASE(\"a (b) | -c @title d\")");
    check("\"\"", "PHRASE(\"\")");
    check("a\"b c\"d", "AND(a, PHRASE(\"b c\"), d)");
    check("\"a \\\" b\"", "PHRASE(\"a \\\" b\")");
    FtsNode *x = parse("\"a \\\" \\\\b\"~2");
    assert_int_equal(x->kind, FTSN_PHRASE);
    assert_string_equal(x->z, "a \" \\b");
    assert_int_equal(x->n, 6);
    assert_int_equal(x->nSlop, 2);
    check_error("\"abc def", 8,
                "MATCH: unexpected end of query at offset 8: expected closing '\"'");
    check_error("a \"b\\\"", 6,
                "MATCH: unexpected end of query at offset 6: expected closing '\"'");
    check_error("\"a\"~", 3, "MATCH: near '~' at offset 3: expected a number after '~'");
    check_error("\"a\"~x", 3, "MATCH: near '~x' at offset 3: expected a number after '~'");
    check_error("\"a\"~100001", 4,
                "MATCH: near '100001' at offset 4: proximity distance larger than 100000");
    check("\"a\"~100000", "PHRASE(\"a\"~100000)");
    check_error("\"a\" ~2", 4,
                "MATCH: near '~2' at offset 4: '~N' must follow a phrase (\"a b\"~N)");
    check_error("a~2", 1, "MATCH: near '~2' at offset 1: '~N' must follow a phrase (\"a b\"~N)");
}

static void test_prefix(void **state) {
    (void)state;
    check("hel*", "PREFIX(hel*)");
    check("hel* world", "AND(PREFIX(hel*), world)");
    check("hel** | x", "OR(PREFIX(hel*), x)");
    check("(hel*)", "PREFIX(hel*)");
    check("a*(b)", "AND(PREFIX(a*), b)");
    FtsNode *x = parse("hel***");
    assert_int_equal(x->kind, FTSN_PREFIX);
    assert_string_equal(x->z, "hel");
    assert_int_equal(x->pos, 0);
    assert_int_equal(x->len, 6); /* the stars belong to the node's text */
    check_error(
        "*", 0,
        "MATCH: near '*' at offset 0: expected a word before '*' (a prefix is written 'abc*')");
    check_error(
        "a *", 2,
        "MATCH: near '*' at offset 2: expected a word before '*' (a prefix is written 'abc*')");
    /* '*' before or inside a word: a wildcard (the planner checks
    ** min_infix_len) */
    check("*abc", "WILDCARD(*abc)");
    check("ab*cd", "WILDCARD(ab*cd)");
    check("**ab**c*** x", "AND(WILDCARD(*ab*c*), x)");
    check("@title a*b* | c", "OR(WILDCARD(a*b*)@{title}, c@{title})");
    check("*ab\\*c", "WILDCARD(*ab\\ c)");
    check("\\**c2", "WILDCARD(\\ *c2)"); /* an escaped star then a wildcard */
    x = parse("*ab*");
    assert_int_equal(x->kind, FTSN_WILDCARD);
    assert_string_equal(x->z, "*ab*");
    assert_int_equal(x->len, 4);
    check_error("=ab*c", 0,
                "MATCH: near '=ab*c' at offset 0: the exact form operator '=' does not apply to a "
                "wildcard ('=ab*c')");
    /* an anchored wildcard or prefix: the anchored phrase of that word (Sphinx's) */
    check("^*ab", "^PHRASE(\"*ab\")");
    check("*ab*$", "PHRASE(\"*ab*\")$");
    check("a << *b*", "ORDER(a, WILDCARD(*b*))");
    check("a NEAR/2 *b*", "NEAR(a, /2, WILDCARD(*b*))");
    check_error(
        "ab*~", 2,
        "MATCH: near '*~' at offset 2: '*' is only supported at the end of a word (prefix search)");
    /* An escaped star is a character of the word. */
    check("\\*", "\\*");
    check("a\\*", "a\\*");
}

static void test_fields(void **state) {
    (void)state;
    check("@title a b", "AND(a@{title}, b@{title})");
    check("@title a @body b", "AND(a@{title}, b@{body})");
    check("@(title,body) a", "a@{title,body}");
    check("@( body , title ) a", "a@{title,body}");
    check("@(title,body,tags) a", "a");
    check("@title a @* b", "AND(a@{title}, b)");
    check("@TITLE a", "a@{title}");
    check("@tags\"x y\"~2", "PHRASE(\"x y\"~2)@{tags}");
    check("@title hel*", "PREFIX(hel*)@{title}");
    check("@title -a b", "AND(NOT(a@{title}), b@{title})");
    /* A group starts with its parent's scope; its changes end with it. */
    check("@title (a @body b) c", "AND(a@{title}, b@{body}, c@{title})");
    check("(@title a) b", "AND(a@{title}, b)");
    check("@title (a | (@body b c) d) e",
          "AND(OR(a@{title}, AND(b@{body}, c@{body})), d@{title}, e@{title})");
    /* A scope set inside a '|' list lasts for the rest of the group. */
    check("a | @title b c", "AND(OR(a, b@{title}), c@{title})");
    check("@title a | @body b", "OR(a@{title}, b@{body})");
    check("-@title a b", "AND(NOT(a@{title}), b@{title})");
    check_error("a @title | b", 9, "MATCH: near '| b' at offset 9: expected a word, phrase or '('");
    check_error("@title (@body)", 13,
                "MATCH: near ')' at offset 13: expected a word, phrase or '(' after the field "
                "operator at offset 8");
    /* An operator that scopes nothing is an error, as in Sphinx. */
    check_error("@title", 6, "MATCH: unexpected end of query at offset 6: expected a word, phrase "
                             "or '(' after the field operator at offset 0");
    check_error("a @title", 8, "MATCH: unexpected end of query at offset 8: expected a word, "
                               "phrase or '(' after the field operator at offset 2");
    check_error("(a @*) b", 5, "MATCH: near ') b' at offset 5: expected a word, phrase or '(' "
                               "after the field operator at offset 3");
    check_error("a ZONE:(h1)", 11, "MATCH: unexpected end of query at offset 11: expected a word, "
                                   "phrase or '(' after the ZONE: operator at offset 2");
    check("@title a @body b", "AND(a@{title}, b@{body})");
}

static void test_lucene_fields(void **state) {
    (void)state;
    check("title:a b", "AND(a@{title}, b)");
    check("title:\"a b\"~1", "PHRASE(\"a b\"~1)@{title}");
    check("title:hel*", "PREFIX(hel*)@{title}");
    check("title:(a b) c", "AND(a@{title}, b@{title}, c)");
    check("title: a", "a@{title}");
    check("Body:a", "a@{body}");
    check("-title:a b", "AND(NOT(a@{title}), b)");
    check("+title:a", "a@{title}");
    check("@body title:a b", "AND(a@{title}, b@{body})");
    check("body:title:a", "a@{title}");
    check("a | title:b", "OR(a, b@{title})");
    /* Not a field: ':' separates words. */
    check("nofield:a", "AND(nofield, a)");
    check("http://example", "AND(http, //example)");
    check("a:", "a");
    check_error("title:", 6,
                "MATCH: unexpected end of query at offset 6: expected a word, phrase or '('");
    check_error("title:-a", 6, "MATCH: near '-a' at offset 6: expected a word, phrase or '('");
}

static void test_field_errors(void **state) {
    (void)state;
    check_error("@titel a", 1, "MATCH: unknown field 'titel' at offset 1");
    check_error("a @(title,bdy) b", 10, "MATCH: unknown field 'bdy' at offset 10");
    check_error("a | @nope b", 5, "MATCH: unknown field 'nope' at offset 5");
    check_error("@ a", 0,
                "MATCH: near '@ a' at offset 0: expected a field name, '(' or '*' after '@'");
    check_error(
        "a @", 3,
        "MATCH: unexpected end of query at offset 3: expected a field name, '(' or '*' after '@'");
    check_error("a @@relaxed b", 2,
                "MATCH: near '@@relaxed b' at offset 2: '@@relaxed' is the only query option, and "
                "it must come first in the query");
    check_error("@!", 2, "MATCH: unexpected end of query at offset 2: expected a field name or '(' "
                         "after '@!'");
    check_error("@!nope a", 2, "MATCH: unknown field 'nope' at offset 2");
    check_error(
        "@(title", 7,
        "MATCH: unexpected end of query at offset 7: expected ',' or ')' in the field list");
    check_error("@(title body) a", 8,
                "MATCH: near 'body) a' at offset 8: expected ',' or ')' in the field list");
    check_error("@(title,) a", 8, "MATCH: near ') a' at offset 8: expected a field name");
    check_error("@() a", 2, "MATCH: near ') a' at offset 2: expected a field name");
    /* A long unknown name is cut in the message. */
    char z[200];
    memset(z, 'x', sizeof(z));
    z[0] = '@';
    z[sizeof(z) - 1] = 0;
    char zWant[160];
    snprintf(zWant, sizeof(zWant), "MATCH: unknown field '%.64s...' at offset 1", z + 1);
    check_error(z, 1, zWant);
}

static void test_escapes(void **state) {
    (void)state;
    check("a\\|b", "a|b");
    check("\\(a\\)", "\\(a\\)");
    check("\\-a b", "AND(-a, b)"); /* an escaped '-' is not a negation */
    check("\\@title", "@title");
    check("a\\ b", "a\\ b");
    check("title\\:a", "title:a");
    check("\\\\", "\\\\");
    check("\\\"x", "\\\"x");
    FtsNode *x = parse("\\(a\\)");
    assert_string_equal(x->z, "(a)");
    assert_int_equal(x->n, 3);
    assert_int_equal(x->pos, 0);
    assert_int_equal(x->len, 5);
    /* An escaped multi-byte character is taken whole. */
    x = parse("\\\xc3\xa9t\xc3\xa9");
    assert_string_equal(x->z, "\xc3\xa9t\xc3\xa9");
    check_error("a\\", 2,
                "MATCH: unexpected end of query at offset 2: expected a character after '\\'");
}

static void test_utf8(void **state) {
    (void)state;
    check("h\xc3\xa9llo w\xc3\xb6rld", "AND(h\xc3\xa9llo, w\xc3\xb6rld)");
    check("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e");
    check("a\xe3\x80\x80"
          "b",
          "AND(a, b)"); /* U+3000 */
    check("a\xc2\xa0"
          "b",
          "AND(a, b)"); /* U+00A0 */
    check("\xf0\x9f\x98\x80 | x", "OR(\xf0\x9f\x98\x80, x)");
    check("@title \xd0\xbf\xd1\x80\xd0\xb8*", "PREFIX(\xd0\xbf\xd1\x80\xd0\xb8*)@{title}");
    check_error("ab\xff", 2, "MATCH: invalid UTF-8 at offset 2");
    check_error("\"\xc3\"", 1, "MATCH: invalid UTF-8 at offset 1");
    check_error("\xed\xa0\x80", 0, "MATCH: invalid UTF-8 at offset 0"); /* a surrogate */
    /* The excerpt of an error is cut on a character boundary. */
    char z[64];
    strcpy(z, ")");
    for (int i = 0; i < 15; i++)
        strcat(z, "\xc3\xa9"); /* 31 bytes so far */
    strcat(z, "\xc3\xa9");     /* the 32nd byte is inside this one */
    check_error(z, 0,
                "MATCH: near "
                "')\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...' at offset 0: unmatched ')'");
}

static void test_syntax_errors(void **state) {
    (void)state;
    check_error("(a | )", 5, "MATCH: near ')' at offset 5: expected a word, phrase or '('");
    check_error("a )", 2, "MATCH: near ')' at offset 2: unmatched ')'");
    check_error("a ) b", 2, "MATCH: near ') b' at offset 2: unmatched ')'");
    check_error("(a", 2, "MATCH: unexpected end of query at offset 2: expected ')'");
    check_error("(a   ", 5, "MATCH: unexpected end of query at offset 5: expected ')'");
    check_error("()", 1, "MATCH: near ')' at offset 1: expected a word, phrase or '('");
    check_error("a |", 3,
                "MATCH: unexpected end of query at offset 3: expected a word, phrase or '('");
    check_error("| a", 0, "MATCH: near '| a' at offset 0: expected a word, phrase or '('");
    check_error("a || b", 3, "MATCH: near '| b' at offset 3: expected a word, phrase or '('");
    /* The excerpt is at most 32 bytes, then "...". */
    check_error("a | ) bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 4,
                "MATCH: near ') bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb...' at offset 4: expected a word, "
                "phrase or '('");
    /* A NUL byte separates words and ends an excerpt. */
    check_error_n("a )\0b", 5, 2, "MATCH: near ')...' at offset 2: unmatched ')'");
    FtsNode *x = parse_n("a\0b", 3);
    assert_int_equal(x->kind, FTSN_AND);
    assert_int_equal(x->nChild, 2);
}

static void test_offsets(void **state) {
    (void)state;
    const char *z = "a  \"b c\"~2 -d | e* @title (f g)";
    FtsNode *r = parse(z);
    assert_int_equal(r->kind, FTSN_AND);
    assert_int_equal(r->nChild, 5);
    assert_int_equal(r->pos, 0);
    assert_int_equal(r->len, (int)strlen(z));
    const FtsNode *a = r->aChild[0], *ph = r->aChild[1], *no = r->aChild[2];
    assert_int_equal(a->pos, 0);
    assert_int_equal(a->len, 1);
    assert_int_equal(ph->pos, 3);
    assert_int_equal(ph->len, 7); /* "b c"~2 */
    assert_int_equal(no->kind, FTSN_NOT);
    assert_int_equal(no->pos, 11);
    assert_int_equal(no->len, 7); /* -d | e* */
    const FtsNode *orr = no->aChild[0];
    assert_int_equal(orr->kind, FTSN_OR);
    assert_int_equal(orr->pos, 12);
    assert_int_equal(orr->len, 6);
    assert_int_equal(orr->aChild[1]->pos, 16);
    assert_int_equal(orr->aChild[1]->len, 2);
    /* f and g were taken into the top AND; their offsets are their own. */
    assert_int_equal(r->aChild[3]->pos, 27);
    assert_int_equal(r->aChild[3]->len, 1);
    /* A group's AND/OR covers its parentheses. */
    r = parse("x | (a b)");
    assert_int_equal(r->aChild[1]->kind, FTSN_AND);
    assert_int_equal(r->aChild[1]->pos, 4);
    assert_int_equal(r->aChild[1]->len, 5);
    /* `title:a`: the word's own offset. */
    r = parse("title:abc");
    assert_int_equal(r->pos, 6);
    assert_int_equal(r->len, 3);
}

static void test_depth(void **state) {
    (void)state;
    char z[512];
    int n = 0;
    for (int i = 0; i < FTS_MATCH_MAX_DEPTH; i++)
        z[n++] = '(';
    z[n++] = 'a';
    z[n++] = ' ';
    z[n++] = 'b';
    for (int i = 0; i < FTS_MATCH_MAX_DEPTH; i++)
        z[n++] = ')';
    z[n] = 0;
    check(z, "AND(a, b)");
    /* One more level is refused, at the offending '('. */
    memmove(z + 1, z, (size_t)n + 1);
    z[0] = '(';
    z[n + 1] = ')';
    z[n + 2] = 0;
    check_error(z, FTS_MATCH_MAX_DEPTH,
                "MATCH: near '(a b))))))))))))))))))))))))))))...' at offset 100: groups nested "
                "deeper than 100 "
                "levels");
    /* Negations nest too: a -(b -(c -(... d))). */
    StrBuf q = {0}, want = {0};
    strbuf_appendz(&q, "x0");
    for (int i = 1; i < FTS_MATCH_MAX_DEPTH; i++)
        strbuf_appendf(&q, " -(x%d", i);
    strbuf_appendz(&q, " y");
    for (int i = 1; i < FTS_MATCH_MAX_DEPTH; i++)
        strbuf_appendc(&q, ')');
    strbuf_appendz(&want, "AND(x0");
    for (int i = 1; i < FTS_MATCH_MAX_DEPTH; i++)
        strbuf_appendf(&want, ", NOT(AND(x%d", i);
    strbuf_appendz(&want, ", y");
    for (int i = 1; i < FTS_MATCH_MAX_DEPTH; i++)
        strbuf_appendz(&want, "))");
    strbuf_appendc(&want, ')');
    check(q.z, want.z);
    strbuf_free(&q);
    strbuf_free(&want);
    /* Unbalanced deep input fails cleanly. */
    memset(z, '(', 300);
    z[300] = 0;
    check_error(z, 100,
                "MATCH: near '((((((((((((((((((((((((((((((((...' at offset 100: groups nested "
                "deeper than 100 "
                "levels");
}

static void test_long(void **state) {
    (void)state;
    enum { N = 20000 };
    StrBuf q = {0};
    for (int i = 0; i < N; i++)
        strbuf_appendf(&q, "w%d ", i);
    FtsNode *r = parse(q.z);
    assert_int_equal(r->kind, FTSN_AND);
    assert_int_equal(r->nChild, N);
    assert_string_equal(r->aChild[N - 1]->z, "w19999");
    strbuf_reset(&q);
    for (int i = 0; i < N; i++)
        strbuf_appendf(&q, "%sw%d", i ? "|" : "", i);
    r = parse(q.z);
    assert_int_equal(r->kind, FTSN_OR);
    assert_int_equal(r->nChild, N);
    strbuf_reset(&q);
    /* A long word and a long phrase. */
    for (int i = 0; i < N; i++)
        strbuf_appendc(&q, 'x');
    r = parse(q.z);
    assert_int_equal(r->kind, FTSN_TERM);
    assert_int_equal(r->n, N);
    strbuf_reset(&q);
    strbuf_appendc(&q, '"');
    for (int i = 0; i < N; i++)
        strbuf_appendz(&q, "ab ");
    strbuf_appendz(&q, "\"~7");
    r = parse(q.z);
    assert_int_equal(r->kind, FTSN_PHRASE);
    assert_int_equal(r->n, 3 * N);
    assert_int_equal(r->nSlop, 7);
    strbuf_free(&q);
}

static void test_field_sets(void **state) {
    (void)state;
    /* 256 fields: the last one is reachable and named in the dump. */
    static char azName[256][16];
    const char *az[256];
    for (int i = 0; i < 256; i++) {
        snprintf(azName[i], sizeof(azName[i]), "f%d", i);
        az[i] = azName[i];
    }
    FtsNode *root;
    LpError err;
    arena_reset(&gArena);
    assert_int_equal(fts_match_parse(&gArena, "@(f0,f255) a b", 14, az, 256, &root, &err), LP_OK);
    assert_true(fts_fieldset_has(&root->aChild[0]->fields, 255));
    assert_true(fts_fieldset_has(&root->aChild[0]->fields, 0));
    assert_false(fts_fieldset_has(&root->aChild[0]->fields, 1));
    StrBuf sb = {0};
    fts_match_dump(root, az, 256, &sb);
    assert_string_equal(sb.z, "AND(a@{f0,f255}, b@{f0,f255})");
    /* Without names the dump shows numbers. */
    strbuf_reset(&sb);
    fts_match_dump(root, NULL, 256, &sb);
    assert_string_equal(sb.z, "AND(a@{0,255}, b@{0,255})");
    strbuf_free(&sb);
    /* All fields by default: every bit of the table's fields set. */
    arena_reset(&gArena);
    assert_int_equal(fts_match_parse(&gArena, "a", 1, azField, NFIELD, &root, &err), LP_OK);
    for (int i = 0; i < NFIELD; i++)
        assert_true(fts_fieldset_has(&root->fields, i));
    assert_false(fts_fieldset_has(&root->fields, NFIELD));
    /* A table without full-text fields: no field can be named. */
    arena_reset(&gArena);
    assert_int_equal(fts_match_parse(&gArena, "@title a", 8, NULL, 0, &root, &err), LP_BADINPUT);
    assert_string_equal(err.zMsg, "MATCH: unknown field 'title' at offset 1");
    assert_int_equal(fts_match_parse(&gArena, "title:a", 7, NULL, 0, &root, &err), LP_OK);
    /* Too many fields for a field set is the caller's bug. */
    assert_int_equal(fts_match_parse(&gArena, "a", 1, az, 257, &root, &err), LP_INTERNAL);
}

/* Sphinx's other operators: MAYBE, quorum, anchors, '<<', NEAR/N, '@!',
** '@@relaxed'; and the ones refused by name. */
static void test_sphinx_operators(void **state) {
    (void)state;
    check("a MAYBE b", "MAYBE(a, b)");
    check("a | b MAYBE c", "MAYBE(OR(a, b), c)");
    check("a MAYBE b | c", "OR(MAYBE(a, b), c)");
    check("a MAYBE b MAYBE c", "MAYBE(MAYBE(a, b), c)");
    check("x a MAYBE (b c)", "AND(x, MAYBE(a, AND(b, c)))");
    check("a maybe b", "AND(a, maybe, b)"); /* lower case: a word */
    check("aMAYBE b", "AND(aMAYBE, b)");
    check_error("MAYBE a", 0, "MATCH: near 'MAYBE a' at offset 0: MAYBE is an operator: expected a "
                              "word, phrase or '(' before it (write it in lower case to search "
                              "the word)");
    check_error("a MAYBE", 7, "MATCH: unexpected end of query at offset 7: expected a word, "
                              "phrase or '('");
    check_error("a MAYBE (-b)", 8, "MATCH: near '(-b)' at offset 8: MAYBE cannot take a negated "
                                   "operand (write the exclusion on its own: a MAYBE b -c)");
    check("x -a MAYBE b", "AND(x, NOT(MAYBE(a, b)))"); /* '-' negates the or-list */
    check_error("a MAYBE -b", 8, "MATCH: near '-b' at offset 8: '|' cannot take a negated operand "
                                 "(write -(a | b) to exclude both)");

    check("\"a b c\"/2", "QUORUM(\"a b c\"/2)");
    check("\"a b c\"/0.5", "QUORUM(\"a b c\"/0.5)");
    check("\"a b c\"/1.0 d", "AND(QUORUM(\"a b c\"/1), d)");
    check("@title \"a b\"/1", "QUORUM(\"a b\"/1)@{title}");
    FtsNode *x = parse("\"a b c\"/0.25");
    assert_int_equal(x->kind, FTSN_QUORUM);
    assert_int_equal(x->nQuorum, 0);
    assert_true(x->fQuorum == 0.25);
    check_error("\"a b\"/0", 6, "MATCH: near '0' at offset 6: a quorum threshold must be at least 1");
    check_error("\"a b\"/257", 6, "MATCH: near '257' at offset 6: a quorum threshold must be at "
                                   "most 256");
    check_error("\"a b\"/1.5", 6, "MATCH: near '1.5' at offset 6: a quorum fraction must be above "
                                   "0 and at most 1.0");
    check_error("\"a b\"/0.0", 6, "MATCH: near '0.0' at offset 6: a quorum fraction must be above "
                                   "0 and at most 1.0");
    check_error("\"a b\"/1.", 5, "MATCH: near '/1.' at offset 5: expected digits after the '.' of "
                                  "a quorum fraction");
    check_error("\"a b\"/x", 5, "MATCH: near '/x' at offset 5: expected a number after '/' "
                                 "(quorum: \"a b c\"/2)");

    check("^a b$", "AND(^a, b$)");
    check("^a$", "^a$");
    check("\"^a b$\"", "^PHRASE(\" a b \")$");
    check("\"a b\\$\"", "PHRASE(\"a b$\")"); /* escaped: a character */
    check("a$b", "a$b");                    /* '$' inside a word is part of it */
    check("@title ^a", "^a@{title}");
    check_error("^ a", 0, "MATCH: near '^ a' at offset 0: expected a word right after '^' (inside "
                          "quotes, \"^a b\" anchors a phrase)");
    check_error("^\"a b\"", 0, "MATCH: near '^\"a b\"' at offset 0: expected a word right after "
                                "'^' (inside quotes, \"^a b\" anchors a phrase)");
    check("^ab*", "^PHRASE(\"ab*\")");
    check("ab*$ c", "AND(PHRASE(\"ab*\")$, c)");
    /* anchors on a phrase's words (Sphinx's): a proximity's and a quorum's
    ** all, an exact phrase's but its own first '^' and last '$' */
    check("\"^a b\"~2", "PHRASE(\"^a b\"~2)");
    check("\"a$ ^b c\"/2", "QUORUM(\"a$ ^b c\"/2)");
    check("\"^a b$ c$\"", "^PHRASE(\" a b$ c \")$");
    check("\"a ^ b\"", "PHRASE(\"a ^ b\")");     /* '^' before a blank: a character */
    check("\"a \\^b c\\$\"", "PHRASE(\"a ^b c$\")"); /* escaped: characters (dumped alike) */
    check("\"(a | b$) ^c\"", "OR(PHRASE(\"a ^c\"), PHRASE(\"b$ ^c\"))");
    check_error("$ a", 0, "MATCH: near '$ a' at offset 0: expected a word before '$' (the field end "
                          "is written 'word$')");

    check("a << b", "BEFORE(a, b)");
    check("a<<b<<\"c d\"", "BEFORE(a, b, PHRASE(\"c d\"))");
    check("x a << b y", "AND(x, BEFORE(a, b), y)");
    check("a NEAR/3 b", "NEAR(a, /3, b)");
    check("a NEAR/3 b NEAR/10 \"c d\"", "NEAR(a, /3, b, /10, PHRASE(\"c d\"))");
    check("@title a << b", "BEFORE(a@{title}, b@{title})");
    check("a near/3 b", "AND(a, near/3, b)");
    check("a<b", "a<b");
    x = parse("@title a << @(title,body) b");
    assert_int_equal(x->kind, FTSN_BEFORE);
    assert_true(fts_fieldset_has(&x->fields, 0) && !fts_fieldset_has(&x->fields, 1));
    /* as in Sphinx, `a << b NEAR/2 c` is `(a << b) NEAR/2 c`: the '<<'
    ** chain an operand whose occurrences are where it holds */
    check("a << b NEAR/2 c", "NEARANY(BEFORE(a, b), /2, c)");
    check("(a << b) NEAR/2 c NEAR/2 d", "NEARANY(BEFORE(a, b), /2, c, /2, d)");
    /* SENTENCE and PARAGRAPH bind tighter than '<<' (Sphinx's reading):
    ** the last operand and what they join to it are one operand */
    check("a << b SENTENCE c", "ORDER(a, SENTENCE(b, c))");
    check("a << b PARAGRAPH c PARAGRAPH d << e", "ORDER(a, PARAGRAPH(b, c, d), e)");
    check("a NEAR/1 b << c SENTENCE d", "ORDER(NEAR(a, /1, b), SENTENCE(c, d))");
    check_error("a << b SENTENCE c PARAGRAPH d", 5, "MATCH: near 'b SENTENCE c PARAGRAPH d' at offset 5: "
                                                    "PARAGRAPH joins words, prefixes, wildcards, exact phrases "
                                                    "and OR lists of them; this operand is a SENTENCE chain");
    check("a << b NOTNEAR/2 c", "NOTNEARANY(BEFORE(a, b), /2, c)");
    /* Sphinx's chain operators are left-associative: a NEAR/N, NOTNEAR/N,
    ** SENTENCE or PARAGRAPH chain before '<<' is its first operand */
    check("a NEAR/3 b << c", "ORDER(NEAR(a, /3, b), c)");
    check("a NEAR/3 b NEAR/1 c << d << e", "ORDER(NEAR(a, /3, b, /1, c), d, e)");
    check("x a SENTENCE b << \"c d\" y", "AND(x, ORDER(SENTENCE(a, b), PHRASE(\"c d\")), y)");
    check("a NOTNEAR/2 b << c", "ORDER(NOTNEAR(a, /2, b), c)");
    check("(a | b) NEAR/2 c << d", "ORDER(OR(NEAR(a, /2, c), NEAR(b, /2, c)), d)");
    check("(a -x) NEAR/2 c << d", "ORDER(AND(NEAR(a, /2, c), NOT(x)), d)");
    check("a NEAR/2 b << c*", "ORDER(NEAR(a, /2, b), PREFIX(c*))");
    /* '<<' over more than words (Manticore's "(bag of words) << "exact
    ** phrase" << red|green|blue"): an ORDER, its OR lists kept whole */
    check("a* << b", "ORDER(PREFIX(a*), b)");
    check("(bag of words) << \"exact phrase\" << red|green|blue",
          "ORDER(AND(bag, of, words), PHRASE(\"exact phrase\"), OR(red, green, blue))");
    check("a << (b c) << d", "ORDER(a, AND(b, c), d)");
    check("(a MAYBE b) << c", "ORDER(MAYBE(a, b), c)");
    check("(a -b) << \"c d\"~2 << \"e f g\"/2", "ORDER(AND(a, NOT(b)), PHRASE(\"c d\"~2), QUORUM(\"e f g\"/2))");
    check("(a << b) << (c d)", "ORDER(a, b, AND(c, d))"); /* left-nested: one chain, as in Sphinx */
    check("c << (a << b)", "ORDER(c, BEFORE(a, b))");
    check("(a << (b c)) << d", "ORDER(a, AND(b, c), d)");
    check("(^a b) << c", "ORDER(AND(^a, b), c)");
    check("x (a b) << c y", "AND(x, ORDER(AND(a, b), c), y)");
    check("(a b) << c | d", "ORDER(AND(a, b), OR(c, d))");
    check_error("a << -b", 5, "MATCH: near '-b' at offset 5: '<<' orders words, phrases, prefixes, "
                              "wildcards, quorums and groups; this operand is a negation");
    check_error("(a b) << (-c -d)", 9, "MATCH: near '(-c -d)' at offset 9: '<<' orders words, phrases, "
                                        "prefixes, wildcards, quorums and groups; this operand is a "
                                        "negation");
    check("(a << b) | c", "OR(BEFORE(a, b), c)");
    /* OR lists as operands (Sphinx's "red|green|blue << car"): '|' binds
    ** tighter, and the chain becomes one chain per choice, the first
    ** operand's choice varying slowest; nested lists are flattened */
    check("a << b | c", "OR(BEFORE(a, b), BEFORE(a, c))");
    check("(a | b) << c", "OR(BEFORE(a, c), BEFORE(b, c))");
    check("(a | b) NEAR/2 (c | \"d e\") NEAR/1 f",
          "OR(NEAR(a, /2, c, /1, f), NEAR(a, /2, PHRASE(\"d e\"), /1, f), NEAR(b, /2, c, /1, f), "
          "NEAR(b, /2, PHRASE(\"d e\"), /1, f))");
    check("(a | (b | (c | d))) << e",
          "OR(BEFORE(a, e), BEFORE(b, e), BEFORE(c, e), BEFORE(d, e))");
    check("(a | b) NOTNEAR/3 c", "OR(NOTNEAR(a, /3, c), NOTNEAR(b, /3, c))");
    check("x (a | b) << c y", "AND(x, OR(BEFORE(a, c), BEFORE(b, c)), y)");
    /* each chain's field scope is what its own operands share */
    x = parse("(@title a | @body b) << @(title,body) c");
    assert_int_equal(x->kind, FTSN_OR);
    assert_int_equal(x->nChild, 2);
    assert_true(fts_fieldset_has(&x->aChild[0]->fields, 0) && !fts_fieldset_has(&x->aChild[0]->fields, 1));
    assert_true(!fts_fieldset_has(&x->aChild[1]->fields, 0) && fts_fieldset_has(&x->aChild[1]->fields, 1));
    /* 2^8 chains are allowed, 2^9 are not */
    x = parse("(a|b) << (a|b) << (a|b) << (a|b) << (a|b) << (a|b) << (a|b) << (a|b)");
    assert_int_equal(x->kind, FTSN_OR);
    assert_int_equal(x->nChild, 256);
    check_error("x << (a|b) << (a|b) << (a|b) << (a|b) << (a|b) << (a|b) << (a|b) << (a|b) << (a|b)", 0,
                "MATCH: near 'x << (a|b) << (a|b) << (a|b) <<...' at offset 0: the OR lists of this "
                "chain make more than 256 chains");
    check("a NOTNEAR/3 (b | c)", "NOTNEARANY(a, /3, OR(b, c))");
    check("a NOTNEAR/3 b*", "NOTNEAR(a, /3, PREFIX(b*))");
    check("a << (b | c*)", "ORDER(a, OR(b, PREFIX(c*)))");
    check_error("a << b MAYBE c", 5, "MATCH: near 'b MAYBE c' at offset 5: '<<' orders words, phrases, "
                                     "prefixes, wildcards, quorums and groups; this operand is a MAYBE "
                                     "(it binds tighter: write (a << b) MAYBE c, or (a MAYBE b) << c)");
    /* a group's operands join a NEAR chain with its distance, its negations
    ** apply to the chain, and a chain in parentheses first keeps its own */
    check("a NEAR/1 (b c)", "NEAR(a, /1, b, /1, c)");
    check("(a (b \"c d\")) NEAR/2 e NEAR/3 f", "NEAR(a, /2, b, /2, PHRASE(\"c d\"), /2, e, /3, f)");
    check("x NEAR/2 (a -b) NEAR/4 d", "AND(NEAR(x, /2, a, /4, d), NOT(b))");
    check("(a NEAR/1 b) NEAR/3 c", "NEAR(a, /1, b, /3, c)");
    check("(a (b | c)) NEAR/2 d", "OR(NEAR(a, /2, b, /2, d), NEAR(a, /2, c, /2, d))");
    check("(a* -b) NEAR/2 c", "AND(NEAR(PREFIX(a*), /2, c), NOT(b))");
    /* a MAYBE, a quorum and a group with a negation and more stand for
    ** their words' occurrences, as in Sphinx, and must match themselves
    ** too (a MAYBE in a group spliced into the chain is an operand) */
    check("(a b -c) NEAR/2 d", "AND(OR(NEAR(a, /2, d), NEAR(b, /2, d)), a, b, NOT(c))");
    check("a NEAR/1 (b MAYBE c)", "AND(OR(NEAR(a, /1, b), NEAR(a, /1, c)), MAYBE(b, c))");
    check("\"a b* c\"/2 NEAR/3 d", "AND(OR(NEAR(a, /3, d), NEAR(PREFIX(b*), /3, d), NEAR(c, /3, d)), QUORUM(\"a b* c\"/2))");
    /* anchored, its prefix is the phrase of that word, as `^b*` alone */
    check("\"a ^b* c\"/2 NEAR/3 d", "AND(OR(NEAR(a, /3, d), NEAR(^PHRASE(\"b*\"), /3, d), NEAR(c, /3, d)), "
                                     "QUORUM(\"a ^b* c\"/2))");
    check("(a (b MAYBE c)) NEAR/1 d NEAR/1 e",
          "AND(OR(NEAR(a, /1, b, /1, d, /1, e), NEAR(a, /1, c, /1, d, /1, e)), MAYBE(b, c))");
    /* its phrases stand where they match, a proximity's making the chain
    ** a NEARANY; a quorum's wildcard is one of its words */
    check("(a \"b c\" -d) NEAR/2 e", "AND(OR(NEAR(a, /2, e), NEAR(PHRASE(\"b c\"), /2, e)), a, PHRASE(\"b c\"), "
                                   "NOT(d))");
    check("(a \"b c\"~2 -d) NEAR/2 e", "AND(NEARANY(OR(a, PHRASE(\"b c\"~2)), /2, e), a, PHRASE(\"b c\"~2), NOT(d))");
    check("\"a *b* c\"/2 NEAR/3 d", "AND(OR(NEAR(a, /3, d), NEAR(WILDCARD(*b*), /3, d), NEAR(c, /3, d)), "
                                  "QUORUM(\"a *b* c\"/2))");
    check("(a (b << c) -d) NEAR/2 e", "AND(NEARANY(OR(a, BEFORE(b, c)), /2, e), a, BEFORE(b, c), NOT(d))");
    check("(a (b MAYBE \"c d\") -x) NEAR/2 e",
          "AND(OR(NEAR(a, /2, e), NEAR(b, /2, e), NEAR(PHRASE(\"c d\"), /2, e)), a, MAYBE(b, PHRASE(\"c d\")), NOT(x))");
    check("(a (b NOTNEAR/1 c) -d) NEAR/2 e", "AND(NEARANY(OR(a, NOTNEAR(b, /1, c)), /2, e), a, NOTNEAR(b, /1, c), NOT(d))");
    check("a NEAR/1 (\"b c\" MAYBE d)", "NEARANY(a, /1, MAYBE(PHRASE(\"b c\"), d))");
    check_error("a NEAR/1 b MAYBE c", 9, "MATCH: near 'b MAYBE c' at offset 9: NEAR/N joins words, prefixes, "
                                        "wildcards, exact phrases, OR lists of them and groups of these; this "
                                        "operand is a MAYBE (it binds tighter: write (a NEAR/3 b) MAYBE c, or "
                                        "(a MAYBE b) NEAR/3 c)");
    check("c NEAR/3 (a NEAR/1 b)", "NEARANY(c, /3, NEAR(a, /1, b))");
    check("c NEAR/3 (a NOTNEAR/1 b)", "NEARANY(c, /3, NOTNEAR(a, /1, b))");
    check_error("a SENTENCE (b c)", 11, "MATCH: near '(b c)' at offset 11: SENTENCE joins words, prefixes, "
                                       "wildcards, exact phrases and OR lists of them; this operand is a "
                                       "group");
    check("a NEAR/2 \"b c\"~3", "NEARANY(a, /2, PHRASE(\"b c\"~3))");
    check("(\"a b\"~1 | c) NEAR/2 (d << e) NEAR/1 f", "NEARANY(OR(PHRASE(\"a b\"~1), c), /2, BEFORE(d, e), /1, f)");
    check("(\"a b\"~2 | cd*) NEAR/1 e", "NEARANY(OR(PHRASE(\"a b\"~2), PREFIX(cd*)), /1, e)");
    check("a NEAR/1 (b* | \"c d*\")", "OR(NEAR(a, /1, PREFIX(b*)), NEAR(a, /1, PHRASE(\"c d*\")))");
    /* an anchored word or exact phrase is a chain operand, as in Sphinx */
    check("^a << b$", "BEFORE(^a, b$)");
    check("\"^a b\" NEAR/2 c$", "NEAR(^PHRASE(\" a b\"), /2, c$)"); /* anchor blanked */
    check("^a << (b c)", "ORDER(^a, AND(b, c))");
    check("(^a | b) SENTENCE c", "OR(SENTENCE(^a, c), SENTENCE(b, c))");
    check_error("a << b^2", 5, "MATCH: near 'b^2' at offset 5: '<<' orders words, phrases, prefixes, "
                               "wildcards, quorums and groups; a boost (^N) cannot apply to an operand "
                               "itself (it can to a word in a group)");
    check_error("a <<", 4, "MATCH: unexpected end of query at offset 4: expected a word or phrase "
                           "after '<<'");
    check_error("<< a", 0, "MATCH: near '<< a' at offset 0: expected a word or phrase before '<<'");
    check_error("a NEAR/0 b", 7, "MATCH: near '0 b' at offset 7: NEAR/N takes a distance from 1 to "
                                 "100000");
    check_error("NEAR/2 b", 0, "MATCH: near 'NEAR/2 b' at offset 0: NEAR/N is an operator: expected a "
                               "word, phrase or '(' before it (write it in lower case to search the "
                               "word)");

    check("@!title a", "a@{body,tags}");
    check("@!(title,tags) a", "a@{body}");

    /* Position limits: on every leaf of the scope, until the next field
    ** operator or the group's end; '@*' ends it too. */
    check("@title[50] a", "a@{title}[50]");
    check("@title [50] a b*", "AND(a@{title}[50], PREFIX(b*)@{title}[50])");
    check("@title[ 3 ] \"a b\"~2 | \"c d e\"/2", "OR(PHRASE(\"a b\"~2)@{title}[3], "
                                                  "QUORUM(\"c d e\"/2)@{title}[3])");
    check("@(title,body)[7] ^a$", "^a$@{title,body}[7]");
    check("@!title[2] a", "a@{body,tags}[2]");
    check("@title[5] a @body b @* c", "AND(a@{title}[5], b@{body}, c)");
    check("(@title[5] a) b", "AND(a@{title}[5], b)");
    check("@body[4] a << @body[9] b", "BEFORE(a@{body}[4], b@{body}[9])");
    check("@title[1000000000] a", "a@{title}[1000000000]");
    check("title:a @title[2] b", "AND(a@{title}, b@{title}[2])");
    check_error("@title[0] a", 7, "MATCH: near '0] a' at offset 7: a field position limit is a "
                                  "number of positions from 1 to 1000000000 ('@title[50]')");
    check_error("@title[1000000001] a", 7, "MATCH: near '1000000001] a' at offset 7: a field "
                                           "position limit is a number of positions from 1 to "
                                           "1000000000 ('@title[50]')");
    check_error("@title[99999999999999999999999] a", 7,
                "MATCH: near '99999999999999999999999] a' at offset 7: a field position limit is a "
                "number of positions from 1 to 1000000000 ('@title[50]')");
    check_error("@title[] a", 7, "MATCH: near '] a' at offset 7: a field position limit is a number "
                                 "of positions from 1 to 1000000000 ('@title[50]')");
    check_error("@title[-1] a", 7, "MATCH: near '-1] a' at offset 7: a field position limit is a "
                                   "number of positions from 1 to 1000000000 ('@title[50]')");
    check_error("@title[5 a", 9, "MATCH: near 'a' at offset 9: expected ']' after the field "
                                 "position limit");
    check_error("@title[5", 8, "MATCH: unexpected end of query at offset 8: expected ']' after the "
                               "field position limit");
    check("@@relaxed @(title,nope) a", "a@{title}");
    /* a scope of only unknown fields: its words are left out (@{-}), as
    ** Sphinx drops them; '@!nope' is every field */
    check("@@relaxed @nope a b", "AND(a@{-}, b@{-})");
    check("@@relaxed a @nope b | c*", "AND(a, OR(b@{-}, PREFIX(c*)@{-}))");
    check("@@relaxed @nope (a @title b)", "AND(a@{-}, b@{title})");
    check("@@relaxed @!nope a", "a");
    check("@@relaxed @(nope,title) a @* b", "AND(a@{title}, b)");

    /* The exact form: the '=' stays in the word's text, where the
    ** analyzer's query side reads it (tested in test_analyzer). */
    check("=cats", "=cats");
    check("raining =cats and =dogs", "AND(raining, =cats, and, =dogs)");
    check("@title =cats | ^=dogs$", "OR(=cats@{title}, ^=dogs$@{title})");
    check("\"=cats and =dogs\"", "PHRASE(\"=cats and =dogs\")");
    check("\\=cats", "\\ cats");   /* escaped: a separator, not the operator */
    check("\"a \\=b\"", "PHRASE(\"a  b\")");
    check_error("=cats*", 0, "MATCH: near '=cats*' at offset 0: the exact form operator '=' does "
                             "not apply to a prefix ('=word*')");
    check("a =\"b c\"", "AND(a, =PHRASE(\"b c\"))");
    check("=\"b c\"~3 | =\"a b c\"/2", "OR(=PHRASE(\"b c\"~3), =QUORUM(\"a b c\"/2))");
    check("@title =\"^b c$\"", "^=PHRASE(\" b c \")$@{title}"); /* anchors blanked */
    check_error("=\"b c", 5, "MATCH: unexpected end of query at offset 5: expected closing '\"'");
    check("a = b", "AND(a, =, b)"); /* a lone '=' is punctuation */
    /* NOTNEAR/N: two operands (left-associative, as the other chains);
    ** its second is reported as negated */
    check("a NOTNEAR/3 b", "NOTNEAR(a, /3, b)");
    check("x \"a b\" NOTNEAR/1 c", "AND(x, NOTNEAR(PHRASE(\"a b\"), /1, c))");
    check("a notnear/3 b", "AND(a, notnear/3, b)");
    check("a NOTNEAR/3 b NOTNEAR/2 c", "NOTNEARANY(NOTNEAR(a, /3, b), /2, c)");
    check("a NEAR/3 b NOTNEAR/2 c", "NOTNEARANY(NEAR(a, /3, b), /2, c)");
    check_error("a NOTNEAR/0 b", 10, "MATCH: near '0 b' at offset 10: NOTNEAR/N takes a distance from "
                                     "1 to 100000");
    check_error("NOTNEAR/3 b", 0, "MATCH: near 'NOTNEAR/3 b' at offset 0: NOTNEAR/N is an operator: "
                                  "expected a word, phrase or '(' before it (write it in lower case to "
                                  "search the word)");
    check("a* NOTNEAR/3 *b", "NOTNEAR(PREFIX(a*), /3, WILDCARD(*b))");
    /* as Manticore's, its operands may be groups, lists and chains: then
    ** a NOTNEARANY, whose second operand is not expanded into choices */
    check("(a b -c) NOTNEAR/2 \"d e\"~3", "NOTNEARANY(AND(a, b, NOT(c)), /2, PHRASE(\"d e\"~3))");
    check("\"a b c\"/2 NOTNEAR/1 (d | e*)", "NOTNEARANY(QUORUM(\"a b c\"/2), /1, OR(d, PREFIX(e*)))");
    check("a NOTNEAR/3 b SENTENCE c", "NOTNEARANY(a, /3, SENTENCE(b, c))");
    check("a NOTNEAR/3 (b MAYBE c) x", "AND(NOTNEARANY(a, /3, MAYBE(b, c)), x)");
    check("a NOTNEAR/3 b NEAR/2 c", "NEARANY(NOTNEAR(a, /3, b), /2, c)");
    check_error("a NOTNEAR/3 -b", 12, "MATCH: near '-b' at offset 12: NOTNEAR/N joins words, phrases, prefixes, "
                                      "wildcards, quorums, chains and groups; this operand is a negation");
    check_error("(-a -b) NOTNEAR/3 c", 0, "MATCH: near '(-a -b) NOTNEAR/3 c' at offset 0: NOTNEAR/N joins words, "
                                          "phrases, prefixes, wildcards, quorums, chains and groups; this operand "
                                          "is a negation");
    check_error("a NOTNEAR/3 b MAYBE c", 12, "MATCH: near 'b MAYBE c' at offset 12: NOTNEAR/N joins words, "
                                             "phrases, prefixes, wildcards, quorums, chains and groups; this "
                                             "operand is a MAYBE (it binds tighter: write (a NOTNEAR/3 b) MAYBE c, "
                                             "or (a MAYBE b) NOTNEAR/3 c)");
    check_error("a NOTNEAR/3 b^2", 12, "MATCH: near 'b^2' at offset 12: NOTNEAR/N joins words, phrases, "
                                           "prefixes, wildcards, quorums, chains and groups; a boost (^N) cannot "
                                           "apply to an operand itself (it can to a word in a group)");
    check("a NOTNEAR/3 (b c)", "NOTNEARANY(a, /3, AND(b, c))");
    /* SENTENCE and PARAGRAPH: chains whose operands share a sentence or a
    ** paragraph, in any order */
    check("a SENTENCE b", "SENTENCE(a, b)");
    check("x a PARAGRAPH \"b c\" PARAGRAPH d y", "AND(x, PARAGRAPH(a, PHRASE(\"b c\"), d), y)");
    check("(a | b) SENTENCE c", "OR(SENTENCE(a, c), SENTENCE(b, c))");
    check("a sentence b", "AND(a, sentence, b)");
    check_error("a SENTENCE b PARAGRAPH c", 13, "MATCH: near 'PARAGRAPH c' at offset 13: SENTENCE and "
                                                "PARAGRAPH cannot be mixed in one chain");
    check_error("SENTENCE b", 0, "MATCH: near 'SENTENCE b' at offset 0: SENTENCE is an operator: "
                                 "expected a word, phrase or '(' before it (write it in lower case to "
                                 "search the word)");
    check_error("a PARAGRAPH", 11, "MATCH: unexpected end of query at offset 11: expected a word or "
                                   "phrase after PARAGRAPH");
    check("a PARAGRAPH b*", "PARAGRAPH(a, PREFIX(b*))");
    check("*a* SENTENCE \"b c*\"", "SENTENCE(WILDCARD(*a*), PHRASE(\"b c*\"))");
}

/* ZONE:(…): the rest of the group's leaves carry the zones, until a field
** operator or another ZONE:; ZONESPAN: is refused by name. */
static void test_zones(void **state) {
    (void)state;
    check("ZONE:(h3, H4) a \"b c\" d* @title e", "AND(a<h3,h4>, PHRASE(\"b c\")<h3,h4>, PREFIX(d*)<h3,h4>, e@{title})");
    check("ZONE:th a | b", "OR(a<th>, b<th>)");
    check("ZONE: th a", "a<th>");
    check("x (ZONE:th a) b", "AND(x, a<th>, b)");
    check("ZONE:th a ZONE:td b", "AND(a<th>, b<td>)");
    check("@title ZONE:th a", "a@{title}<th>");
    check("ZONE:th a -b", "AND(a<th>, NOT(b<th>))");
    check("ZONE:th a << b", "BEFORE(a<th>, b<th>)");
    check("ZONE:th \"a b c\"/2 *ab*", "AND(QUORUM(\"a b c\"/2)<th>, WILDCARD(*ab*)<th>)");
    check("ZONE:th title:a b", "AND(a@{title}, b<th>)"); /* a Lucene field scope is a field operator */
    check("zone:th a", "AND(zone, th, a)");                 /* lower case: words */
    check_error("ZONE:", 5, "MATCH: unexpected end of query at offset 5: expected a zone name (an "
                            "HTML element such as h3)");
    check_error("ZONE:(h3,) a", 9, "MATCH: near ') a' at offset 9: expected a zone name (an HTML "
                                   "element such as h3)");
    check_error("ZONE:(h3 h4) a", 9, "MATCH: near 'h4) a' at offset 9: expected ',' or ')' in the zone list");
    check_error("ZONE:abcdefghijklmnopqrstuvwxyzabcdefg a", 5,
                "MATCH: near 'abcdefghijklmnopqrstuvwxyzabcdef...' at offset 5: a zone name is at most "
                "32 bytes");
    /* ZONESPAN: the scope's items are one AND, in one span; a group
    ** inside it too */
    check("ZONESPAN:th a b", "SPAN(a<<th>>, b<<th>>)");
    check("x ZONESPAN:(th,h1) a \"b c\" @title d", "AND(x, SPAN(a<<th,h1>>, PHRASE(\"b c\")<<th,h1>>), d@{title})");
    check("ZONESPAN:th a", "a<<th>>");
    check("ZONESPAN:th (a b) | c", "OR(SPAN(a<<th>>, b<<th>>), c<<th>>)");
    check("ZONESPAN:th a b ZONE:h1 c", "AND(SPAN(a<<th>>, b<<th>>), c<h1>)");
    check("(ZONESPAN:th a b) (c d)", "AND(SPAN(a<<th>>, b<<th>>), c, d)");
    check("ZONESPAN:th -a x", "SPAN(NOT(a<<th>>), x<<th>>)");
    check("x ZONESPAN:th -a -b", "AND(x, NOT(a<<th>>), NOT(b<<th>>))"); /* nothing positive: no span */
    check("ZONESPAN:th a << b c", "SPAN(BEFORE(a<<th>>, b<<th>>), c<<th>>)");
    check("ZONESPAN:th a << ZONE:h1 b c", "SPAN(BEFORE(a<<th>>, b<h1>), c<h1>)"); /* an operand's ZONE: */
    check_error("x | ZONESPAN:th a", 4, "MATCH: near 'ZONESPAN:th a' at offset 4: ZONESPAN: starts an item "
                                        "of its group: not after '|', MAYBE or a chain operator (write "
                                        "(ZONESPAN:… a b) there)");
    check_error("ZONESPAN:th", 11, "MATCH: unexpected end of query at offset 11: expected a word, "
                                   "phrase or '(' after ZONESPAN:");
    check_error("ZONESPAN:th @title a", 12, "MATCH: near '@title a' at offset 12: expected a word, "
                                            "phrase or '(' after ZONESPAN:");
    check_error("(ZONESPAN:th a))", 15, "MATCH: near ')' at offset 15: unmatched ')'");
}

/* A '*' standing alone inside an exact phrase is one any-word position
** (the analyzer's query side counts it); joined to a word, or in a
** proximity or quorum, it is refused rather than silently dropped. */
static void test_phrase_stars(void **state) {
    (void)state;
    check("\"exact * phrase\"", "PHRASE(\"exact * phrase\")");
    check("\"a * * b\"", "PHRASE(\"a * * b\")");
    check("\"a ** b\"", "PHRASE(\"a ** b\")");
    check("\"* a\" \"a *\" \"*\"", "AND(PHRASE(\"* a\"), PHRASE(\"a *\"), PHRASE(\"*\"))");
    check("\"^* a\"", "^PHRASE(\" * a\")");
    check("\"a *$\"", "PHRASE(\"a * \")$");
    check("=\"a * b\"", "=PHRASE(\"a * b\")");
    check("@title \"a\t*\nb\"", "PHRASE(\"a\t*\nb\")@{title}");
    /* '\*' is a literal star: a separator, so the text holds a space */
    FtsNode *x = parse("\"a \\* b\"");
    assert_string_equal(x->z, "a   b");
    x = parse("\"a\\*\"");
    assert_string_equal(x->z, "a ");
    x = parse("\"a\\\\ * b\""); /* an escaped backslash, then a star alone */
    assert_string_equal(x->z, "a\\ * b");
    x = parse("\"a \\** b\""); /* a literal star, then a star alone */
    assert_string_equal(x->z, "a  * b");
    /* a star that ends a word: a prefix, in any phrase */
    check("\"exact phrase*\"", "PHRASE(\"exact phrase*\")");
    check("\"a\\x* b\"", "PHRASE(\"ax* b\")");
    check("\"^ab* c$\"", "^PHRASE(\" ab* c \")$");
    check("\"ab* c\"~3", "PHRASE(\"ab* c\"~3)");
    check("\"ab* c d\"/2", "QUORUM(\"ab* c d\"/2)");
    check("\"(a* | b) c\"", "OR(PHRASE(\"a* c\"), PHRASE(\"b c\"))");
    /* a '*' before or inside a word makes it a wildcard word, read by the
    ** planner (its text stays) */
    check("\"a *b\"", "PHRASE(\"a *b\")");
    check("\"a b*c\"~2", "PHRASE(\"a b*c\"~2)");
    check("\"*b* c\"/1", "QUORUM(\"*b* c\"/1)");
    check_error("\"ab** c\"", 3,
                "MATCH: near '** c\"' at offset 3: a prefix inside a phrase ends in one '*' "
                "(\"hello wor*\")");
    check_error("\"a * b\"~2", 3,
                "MATCH: near '* b\"~2' at offset 3: '*' stands for one word of an exact phrase; a "
                "proximity (~N) or quorum (/N) has no word order for it to keep");
    check_error("\"a * b c\"/2", 3,
                "MATCH: near '* b c\"/2' at offset 3: '*' stands for one word of an exact phrase; a "
                "proximity (~N) or quorum (/N) has no word order for it to keep");
}

/* "(a | b) c": each alternative in turn, as an OR of phrases. */
static void test_phrase_alternatives(void **state) {
    (void)state;
    check("\"(a | b) c\"", "OR(PHRASE(\"a c\"), PHRASE(\"b c\"))");
    check("\"(a|b)c\"", "OR(PHRASE(\"a c\"), PHRASE(\"b c\"))");
    check("\"((a b c) | d) e\"", "OR(PHRASE(\"a b c e\"), PHRASE(\"d e\"))");
    check("\"x (a | b) y (c | d)\"",
          "OR(PHRASE(\"x a y c\"), PHRASE(\"x a y d\"), PHRASE(\"x b y c\"), "
          "PHRASE(\"x b y d\"))");
    check("\"man (happy | sad) but all ((as good) | (as fast))\"",
          "OR(PHRASE(\"man happy but all as good\"), PHRASE(\"man happy but all as fast\"), "
          "PHRASE(\"man sad but all as good\"), PHRASE(\"man sad but all as fast\"))");
    /* the phrase's scope, slop, anchors and exactness go to each */
    check("@title \"(a | b) c\"~2", "OR(PHRASE(\"a c\"~2)@{title}, PHRASE(\"b c\"~2)@{title})");
    check("\"^(a | b) c$\"", "OR(^PHRASE(\"a c\")$, ^PHRASE(\"b c\")$)");
    check("=\"(a | b) c\"", "OR(=PHRASE(\"a c\"), =PHRASE(\"b c\"))");
    FtsNode *x = parse("=\"(a|b) c\" d");
    assert_int_equal(x->aChild[0]->kind, FTSN_OR);
    assert_int_equal(x->aChild[0]->pos, 0);
    assert_int_equal(x->aChild[0]->aChild[1]->pos, 0);
    assert_int_equal(x->aChild[0]->aChild[1]->len, 10);
    /* an OR of such phrases and words is one flat OR */
    check("\"(a | b) c\" | d", "OR(PHRASE(\"a c\"), PHRASE(\"b c\"), d)");
    check("-\"(a | b) c\" d", "AND(NOT(OR(PHRASE(\"a c\"), PHRASE(\"b c\"))), d)");
    /* a repeated alternative is one phrase; so is a single one */
    check("\"(a | a) b\"", "PHRASE(\"a b\")");
    check("\"(a | ) b\"", "OR(PHRASE(\"a b\"), PHRASE(\"b\"))");
    /* no '|' inside parentheses: text as before */
    check("\"a (b) c\"", "PHRASE(\"a (b) c\")");
    check("\"a | b c\"", "PHRASE(\"a | b c\")");
    check("\"(a | b c\"", "PHRASE(\"(a | b c\")");
    check("\"a) | (b\"", "PHRASE(\"a) | (b\")");
    check("\"\\(a | b\\) c\"", "PHRASE(\"(a | b) c\")");
    check("\"(a \\| b) c\"", "PHRASE(\"(a | b) c\")");
    /* 2^8 phrases are allowed, 2^9 are not */
    char z[200] = "\"";
    for (int i = 0; i < 8; i++) strcat(z, "(a|b) ");
    strcat(z, "\"");
    x = parse(z);
    assert_int_equal(x->kind, FTSN_OR);
    assert_int_equal(x->nChild, 256);
    z[strlen(z) - 1] = 0;
    strcat(z, "(c|d)\"");
    check_error(z, 0, "MATCH: near '\"(a|b) (a|b) (a|b) (a|b) (a|b) (...' at offset 0: "
                      "a phrase's alternatives make more than 256 phrases");
    /* in a quorum a group is one of the words it counts (Manticore's):
    ** its '(', '|' and ')' marked for the planner */
    {
        LpError err;
        FtsNode *q = NULL;
        const char *zq = "\"x (a | b c) (d)\"/2";
        assert_int_equal(fts_match_parse(&gArena, zq, strlen(zq), NULL, 0, &q, &err), LP_OK);
        assert_int_equal(q->kind, FTSN_QUORUM);
        assert_non_null(q->aMark);
        char zm[32] = "";
        for (int k = 0; k < q->n; k++) zm[k] = q->aMark[k] ? (char)q->aMark[k] : '.';
        assert_string_equal(zm, "..(..|....)....");
    }
    check_error("\"a | b c\"/2", 3, "MATCH: near '| b c\"/2' at offset 3: '|' in a quorum separates the words "
                                   "of a group in parentheses: \"happy (sad | angry) man\"/2");
    check_error("\"(a | (b | c))\"/1", 6, "MATCH: near '(b | c))\"/1' at offset 6: a quorum's OR group "
                                         "('(a | b)') cannot hold another one");
    /* a phrase's alternatives are an OR list: as a chain operand, one chain each */
    check("x << \"(a | b) c\"", "OR(BEFORE(x, PHRASE(\"a c\")), BEFORE(x, PHRASE(\"b c\")))");
    check("x << \"(a | b) c\"~2", "ORDER(x, OR(PHRASE(\"a c\"~2), PHRASE(\"b c\"~2)))");
    check("x NEAR/2 \"(a | b) c\"~2", "NEARANY(x, /2, OR(PHRASE(\"a c\"~2), PHRASE(\"b c\"~2)))");
    /* nesting is limited as groups outside phrases are */
    char zDeep[400];
    strcpy(zDeep, "\"");
    for (int i = 0; i < 101; i++) strcat(zDeep, "(");
    strcat(zDeep, "a|b");
    for (int i = 0; i < 101; i++) strcat(zDeep, ")");
    strcat(zDeep, "\"");
    FtsNode *root = (FtsNode *)1;
    LpError err;
    arena_reset(&gArena);
    assert_int_equal(fts_match_parse(&gArena, zDeep, strlen(zDeep), azField, NFIELD, &root, &err), LP_BADINPUT);
    assert_int_equal(err.pos, 101);
    assert_non_null(strstr(err.zMsg, "groups nested deeper than 100 levels"));
}

/* word^N: Manticore's keyword IDF boost, on words only. */
static void test_boost(void **state) {
    (void)state;
    check("a^2", "a^2");
    check("a^1.5 b", "AND(a^1.5, b)");
    check("a^.25 | b^10", "OR(a^0.25, b^10)");
    check("^a^2 b$^3", "AND(^a^2, b$^3)");
    check("@title a^2", "a^2@{title}");
    check("title:a^2", "a^2@{title}");
    check("-a^2 b", "AND(NOT(a^2), b)");
    check("a^1000", "a^1000");
    check("(a^2)", "a^2");
    check("a^2|b", "OR(a^2, b)");
    FtsNode *x = parse("abc^1.5");
    assert_int_equal(x->kind, FTSN_TERM);
    assert_string_equal(x->z, "abc");
    assert_true(x->fBoost == 1.5);
    assert_int_equal(x->len, 7);
    x = parse("abc");
    assert_true(x->fBoost == 0);
    /* '^' not followed by a number stays part of the word, as before */
    check("a^b", "a^b");
    check("a^", "a^");
    check_error("a^0", 2, "MATCH: near '0' at offset 2: a boost must be above 0 and at most 1000");
    check_error("a^0.0", 2, "MATCH: near '0.0' at offset 2: a boost must be above 0 and at most 1000");
    check_error("a^1001", 2, "MATCH: near '1001' at offset 2: a boost must be above 0 and at most 1000");
    check_error("a^99999999999999999999", 2, "MATCH: near '99999999999999999999' at offset 2: a boost "
                                             "must be above 0 and at most 1000");
    check_error("a^2.", 1, "MATCH: near '^2.' at offset 1: expected digits after the '.' of a boost "
                           "(word^1.5)");
    check_error("a^2x", 3, "MATCH: near 'x' at offset 3: expected a space or an operator after the "
                           "boost '^2'");
    check_error("\"a b\"^2", 5, "MATCH: near '^2' at offset 5: a boost (^N) applies to a word "
                                 "(word^1.5), not a phrase");
    check_error("\"a b c\"/2^2", 9, "MATCH: near '^2' at offset 9: a boost (^N) applies to a word "
                                     "(word^1.5), not a phrase");
    check_error("(a b)^2", 5, "MATCH: near '^2' at offset 5: a boost (^N) applies to a word "
                              "(word^1.5), not a group");
    check_error("ab*^2", 3, "MATCH: near '^2' at offset 3: a boost (^N) applies to a word "
                            "(word^1.5), not a prefix");
    check_error("a^2 << b", 0, "MATCH: near 'a^2 << b' at offset 0: '<<' orders words, phrases, "
                               "prefixes, wildcards, quorums and groups; a boost (^N) cannot apply "
                               "to an operand itself (it can to a word in a group)");
    check_error("a NEAR/2 b^2", 9, "MATCH: near 'b^2' at offset 9: NEAR/N joins words and exact "
                                   "phrases; a boost (^N) cannot apply to them");
}

static void test_dump_escapes(void **state) {
    (void)state;
    /* Words holding the dump's own punctuation stay unambiguous. */
    check("a,b x\\)y", "AND(a\\,b, x\\)y)");
    check("\"say \\\"hi\\\"\"", "PHRASE(\"say \\\"hi\\\"\")");
    check("{x}", "\\{x\\}");
    StrBuf sb = {0};
    fts_match_dump(NULL, azField, NFIELD, &sb);
    assert_string_equal(sb.z, "EMPTY");
    strbuf_free(&sb);
}

/* '?' and '%' (FTS_MATCH_INLINE_WILDCARDS: min_infix_len tables) */
static void check_inline(const char *z, const char *zWant) {
    FtsNode *root = NULL;
    LpError err;
    lp_err_clear(&err);
    arena_reset(&gArena);
    if (fts_match_parse_opts(&gArena, z, strlen(z), azField, NFIELD, FTS_MATCH_INLINE_WILDCARDS, &root, &err)) {
        fail_msg("parse of \"%s\" failed: %s", z, err.zMsg);
    }
    if (root) check_node(root, NULL, strlen(z));
    StrBuf sb = {0};
    fts_match_dump(root, azField, NFIELD, &sb);
    static char zGot[512];
    snprintf(zGot, sizeof(zGot), "%s", sb.z);
    strbuf_free(&sb);
    if (strcmp(zGot, zWant) != 0) fail_msg("%s:\n got  %s\n want %s", z, zGot, zWant);
}

static void test_inline_wildcards(void **state) {
    (void)state;
    check_inline("t?st tes% c?t* \xc3\xa9?", "AND(WILDCARD(t?st), WILDCARD(tes%), WILDCARD(c?t*), WILDCARD(\xc3\xa9?))");
    check_inline("a?b*c *x%", "AND(WILDCARD(a?b*c), WILDCARD(*x%))");
    check_inline("what? ? %% x", "AND(WILDCARD(what?), ?, %%, x)"); /* alone: a word of nothing */
    check_inline("te\\?st \\%x", "AND(te\\ st, \\ x)"); /* escaped: separators */
    check_inline("a?\\*\\*b c%\\**", "AND(WILDCARD(a?\\ \\ b), WILDCARD(c%\\ *))"); /* an escaped '*' too */
    check_inline("@title t?st", "WILDCARD(t?st)@{title}");
    check("t?st tes%", "AND(t?st, tes%)");                           /* without the flag: words */
    const unsigned f = FTS_MATCH_INLINE_WILDCARDS;
    check_error_flags("x *%*", 5, f, 2, "MATCH: near '*%*' at offset 2: a wildcard needs a word beside its "
                                        "'*', '?' or '%' ('*ab*', 't?st')"); /* a wildcard of no word */
    check_error_flags("^t?st", 5, f, 0, "MATCH: near '^t?st' at offset 0: '^' and '$' anchor a word, a "
                                        "prefix, a '*' wildcard or an exact phrase, not a wildcard with '?' "
                                        "or '%'");
    check_error_flags("t?st^2", 6, f, 4, "MATCH: near '^2' at offset 4: a boost (^N) applies to a word "
                                         "(word^1.5), not a wildcard");
}

/* REGEX(/pattern/): a wildcard leaf of the whole text; the pattern ends
** at the first delimiter followed by ')', and one that does not compile
** is an error at its offset. */
static void test_regex(void **state) {
    (void)state;
    check("REGEX(/t.?e/)", "WILDCARD(REGEX\\(/t.?e/\\))");
    check("a REGEX(|x|y|) b", "AND(a, WILDCARD(REGEX\\(|x|y|\\)), b)");
    check("@title REGEX(/a[)]b/) | c", "OR(WILDCARD(REGEX\\(/a[\\)]b/\\))@{title}, c@{title})");
    check("a NEAR/2 REGEX(/b.*/)", "NEAR(a, /2, WILDCARD(REGEX\\(/b.*/\\)))");
    check("regex(/a/)", "AND(regex, /a/)"); /* lower case: words */
    assert_true(fts_match_is_regex("REGEX(/a/)", 10));
    assert_false(fts_match_is_regex("REGEX(/a)", 9));
    assert_false(fts_match_is_regex("*regex(/a/)*", 12));
    check_error("REGEX(/a(/)", 9, "MATCH: near '/)' at offset 9: REGEX() pattern: missing closing parenthesis");
    check_error("x REGEX(/ab", 8, "MATCH: near '/ab' at offset 8: expected '/)' to end REGEX(/...");
    check_error("REGEX()", 6, "MATCH: near ')' at offset 6: expected a delimiter and a pattern after 'REGEX(' "
                              "(REGEX(/t.?e/))");
    check_error("REGEX(//)", 7, "MATCH: near '/)' at offset 7: REGEX() needs a pattern between its delimiters");
    check_error("^REGEX(/a/)", 0, "MATCH: near '^REGEX(/a/)' at offset 0: '^' and '$' do not apply to REGEX()");
    check_error("REGEX(/a/)^2", 10, "MATCH: near '^2' at offset 10: a boost (^N) applies to a word (word^1.5), "
                                    "not REGEX()");
}

int main(void) {
    arena_init(&gArena, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_forms_flag), cmocka_unit_test(test_empty),         cmocka_unit_test(test_and_or),
        cmocka_unit_test(test_not),           cmocka_unit_test(test_not_errors),
        cmocka_unit_test(test_required),      cmocka_unit_test(test_phrase),
        cmocka_unit_test(test_prefix),        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_lucene_fields), cmocka_unit_test(test_field_errors),
        cmocka_unit_test(test_escapes),       cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_syntax_errors), cmocka_unit_test(test_offsets),
        cmocka_unit_test(test_depth),         cmocka_unit_test(test_long),
        cmocka_unit_test(test_field_sets),    cmocka_unit_test(test_dump_escapes),
        cmocka_unit_test(test_sphinx_operators), cmocka_unit_test(test_zones), cmocka_unit_test(test_inline_wildcards),
        cmocka_unit_test(test_phrase_stars),  cmocka_unit_test(test_regex),
        cmocka_unit_test(test_boost),         cmocka_unit_test(test_phrase_alternatives),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    arena_free(&gArena);
    return rc;
}
