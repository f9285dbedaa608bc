/*
** test_fts_rankexpr.c — unit tests for src/fts/rankexpr.c: the grammar and
** its precedence, every factor and function, aggregates over the matched
** fields only, the values that would not be finite, and the exact text and
** offset of every error. That ranker=expr gives the built-in proximity
** rankers' weights is checked in test_fts_search.c, on real queries.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fts/rankexpr.h"

static Arena gArena;

/* Three fields: 0 matched (lcs 2, 3 hits, 2 words, first at 1, exact; two
** terms of idf 0.5 and 1.5, one twice; lccs 2 of idfs 2 in all, its best
** span at 1, in query order), 1 not matched, 2 matched (lcs 1, 1 hit, 1
** word, first at 4; a term of idf 2; lccs 1, wlccs 2, span at 4, not in
** order). Field 0's atc is 0.25 and min_gaps 3, field 2's 0 and 0 (one
** occurrence). The query
** has 3 positions, 2 distinct words. */
static const FtsFieldFactors aFF[3] = {{2, 3, 2, 1, 1, 2.0, 0.5, 1.5, 3.5, 2, 2.0, 1, 1, 0.25, 3, 3},
                                       {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                       {1, 1, 1, 4, 0, 2.0, 2.0, 2.0, 2.0, 1, 2.0, 4, 0, 0, 0, 1}};
static const double aW[3] = {2, 5, 0.5};
static const FtsDocFactors gDoc = {aFF, aW, 3, 3.0, 3, 2, 2, NULL, NULL};

static double ev(const char *z) {
    FtsRankExpr *e;
    LpError err;
    lp_err_clear(&err);
    arena_reset(&gArena);
    if (fts_rankexpr_compile(&gArena, z, strlen(z), &e, &err) != LP_OK) {
        fail_msg("compile of \"%s\": %s", z, err.zMsg);
    }
    return fts_rankexpr_eval(e, &gDoc);
}

static void check(const char *z, double want) {
    double got = ev(z);
    if (!(got == want || (got - want < 1e-12 && want - got < 1e-12))) {
        fail_msg("\"%s\": %.17g, want %.17g", z, got, want);
    }
}

/* A table's fields, for bm25f()'s weights. */
static const char *const azFields[] = {"title", "body", "tags"};

/* z (compiled knowing the first nField of azFields) is refused at pos
** with zMsg. */
static void check_fields_error(const char *z, int nField, int pos, const char *zMsg) {
    FtsRankExpr *e = (FtsRankExpr *)1;
    LpError err;
    lp_err_clear(&err);
    arena_reset(&gArena);
    int rc = fts_rankexpr_compile_fields(&gArena, z, strlen(z), azFields, nField, &e, &err);
    if (rc == LP_OK) fail_msg("compile of \"%s\" succeeded", z);
    assert_int_equal(rc, LP_BADINPUT);
    assert_null(e);
    if (strcmp(err.zMsg, zMsg) != 0) fail_msg("%s:\n got  %s\n want %s", z, err.zMsg, zMsg);
    if (err.pos != pos) fail_msg("%s: pos %d, want %d", z, (int)err.pos, pos);
}

static void check_error(const char *z, int pos, const char *zMsg) {
    check_fields_error(z, 0, pos, zMsg);
}

static void test_arithmetic(void **state) {
    (void)state;
    check("1", 1);
    check("1+2*3", 7);
    check("(1+2)*3", 9);
    check("10-4-3", 3);
    check("12/4/3", 1);
    check("-2*-3", 6);
    check("--2", 2);
    check("2.5e1 + .5 + 1E-1", 25.6);
    check(" \t7\n", 7);
    /* comparisons and logic give 1 or 0; AND binds tighter than OR */
    check("1<2", 1);
    check("2<=2", 1);
    check("3>4", 0);
    check("3>=4", 0);
    check("2=2", 1);
    check("2==3", 0);
    check("2!=3", 1);
    check("2<>2", 0);
    check("1+1=2", 1);
    check("1 or 0 and 0", 1);
    check("(1 OR 0) And 0", 0);
    check("not 0", 1);
    check("NOT 2 = 2", 0);
    check("not not 5", 1);
}

static void test_functions(void **state) {
    (void)state;
    check("abs(-3)", 3);
    check("ln(exp(2))", 2);
    check("log2(8)", 3);
    check("log10(1000)", 3);
    check("sqrt(16)", 4);
    check("floor(2.7) + ceil(2.2)", 5);
    check("min(3, 2) + MAX(3, 2)", 5);
    check("pow(2, 10)", 1024);
    check("if(1 > 2, 10, 20)", 20);
    check("if(2, 10, 20)", 10);
    /* what would not be finite is 0 */
    check("1/0", 0);
    check("ln(0) + log2(-1) + log10(0) + sqrt(-4)", 0);
    check("exp(1000)", 0);
    check("pow(10, 400)", 0);
    check("1e308 * 10", 0);
}

static void test_factors(void **state) {
    (void)state;
    /* aggregates read the matched fields only (0 and 2) */
    check("sum(lcs)", 3);
    check("sum(lcs*user_weight)", 2 * 2 + 1 * 0.5);
    check("sum(hit_count)", 4);
    check("sum(word_count)", 3);
    check("sum(min_hit_pos)", 5);
    check("sum(exact_hit)", 1);
    check("top(min_hit_pos)", 4);
    check("top(-lcs)", -1);
    check("sum(1)", 2);
    check("top(user_weight)", 2);
    check("sum(sum_idf)", 4);
    check("top(min_idf)", 2);
    check("sum(max_idf*user_weight)", 1.5 * 2 + 2 * 0.5);
    check("sum(tf_idf)", 5.5);
    check("doc_word_count", 2);
    check("sum(lccs)", 3);
    check("top(wlccs) + sum(wlccs)", 2 + 4);
    check("sum(min_best_span_pos*user_weight)", 1 * 2 + 4 * 0.5);
    check("sum(exact_order)", 1);
    check("query_word_count", 2);
    check("sum(atc) + top(atc)", 0.5);
    check("sum(min_gaps) * 2", 6);
    check("sum(max_window_hits(3)) + top(max_window_hits(3))", 3 + 1 + 3);
    check("sum(bm25f)", 6); /* a document factor inside: the same in each field */
    /* document factors */
    check("bm25f", 3);
    check("bm25", 999 * 3.0 / 4);
    check("max_lcs", 3);
    check("field_mask", 5);
    /* the built-in rankers' formulas */
    check("sum(lcs*user_weight)*1000+bm25", 4500 + 999 * 3.0 / 4);
    check("sum((4*lcs+2*(min_hit_pos==1)+exact_hit)*user_weight)*1000+bm25",
          ((4 * 2 + 2 + 1) * 2 + (4 * 1) * 0.5) * 1000 + 999 * 3.0 / 4);
    check("sum((word_count+(lcs-1)*max_lcs)*user_weight)", (2 + 1 * 3) * 2 + (1 + 0) * 0.5);
    /* no matched field: aggregates are 0 */
    static const FtsFieldFactors aNone[1];
    FtsDocFactors d = {aNone, aW, 1, 0, 1, 0, 0, NULL, NULL};
    FtsRankExpr *e;
    LpError err;
    arena_reset(&gArena);
    assert_int_equal(fts_rankexpr_compile(&gArena, "top(lcs) + sum(1) + bm25 + field_mask", 37, &e, &err), LP_OK);
    assert_true(fts_rankexpr_eval(e, &d) == 0);
}

static void test_errors(void **state) {
    (void)state;
    check_error("", 0, "ranker expression: unexpected end at offset 0: expected a number, a factor, a "
                       "function or '('");
    check_error("1 +", 3, "ranker expression: unexpected end at offset 3: expected a number, a factor, a "
                          "function or '('");
    check_error("1 2", 2, "ranker expression: near '2' at offset 2: expected an operator or the end");
    check_error("(1", 2, "ranker expression: unexpected end at offset 2: expected ')' to close the '(' "
                         "at offset 0");
    check_error("lcs", 0, "ranker expression: near 'lcs' at offset 0: lcs is a per-field factor: use it "
                          "inside sum() or top()");
    check_error("bm25 + hit_count", 7, "ranker expression: near 'hit_count' at offset 7: hit_count is a "
                                       "per-field factor: use it inside sum() or top()");
    check_error("foo", 0, "ranker expression: near 'foo' at offset 0: unknown factor 'foo' (per field: "
                          "lcs, user_weight, hit_count, word_count, min_hit_pos, exact_hit, sum_idf, "
                          "min_idf, max_idf, tf_idf, lccs, wlccs, min_best_span_pos, exact_order, atc, "
                          "min_gaps, max_window_hits(n); per document: bm25, bm25f, max_lcs, field_mask, "
                          "doc_word_count, "
                          "query_word_count)");
    check_error("lccs", 0, "ranker expression: near 'lccs' at offset 0: lccs is a per-field factor: use "
                           "it inside sum() or top()");
    check_error("bogus(1)", 0, "ranker expression: near 'bogus(1)' at offset 0: unknown function 'bogus' "
                               "(there are sum, top, if, abs, ln, log2, log10, sqrt, exp, floor, ceil, "
                               "min, max, pow, bm25a, bm25f and max_window_hits)");
    check_error("max_window_hits(3)", 0, "ranker expression: near 'max_window_hits(3)' at offset 0: "
                                         "max_window_hits() is a per-field factor: use it inside sum() or top()");
    check_error("sum(max_window_hits(2.5))", 20, "ranker expression: near '2.5))' at offset 20: "
                                                 "max_window_hits() takes a whole number of positions");
    check_error("sum(max_window_hits(0))", 20, "ranker expression: near '0))' at offset 20: the window (in "
                                               "positions) in max_window_hits() is a number from 1 to 1e+06");
    check_error("sum(max_window_hits(lcs))", 20, "ranker expression: near 'lcs))' at offset 20: "
                                                 "max_window_hits() takes the window (in positions) as a number "
                                                 "written out");
    check_error("sum(max_window_hits(3)) + top(max_window_hits(4))", 46,
                "ranker expression: near '4))' at offset 46: max_window_hits(): one window per expression "
                "(3 already)");
    check_error("sum(max_window_hits(3 4))", 22, "ranker expression: near '4))' at offset 22: expected ')' "
                                                 "to end max_window_hits()");
    check_error("sum(top(lcs))", 4, "ranker expression: near 'top(lcs))' at offset 4: top() cannot be "
                                    "inside another sum() or top()");
    check_error("max(1)", 3, "ranker expression: near '(1)' at offset 3: max() takes 2 arguments, not 1");
    check_error("sqrt()", 4, "ranker expression: near '()' at offset 4: sqrt() takes 1 argument, not 0");
    check_error("if(1, 2)", 2, "ranker expression: near '(1, 2)' at offset 2: if() takes 3 arguments, "
                               "not 2");
    check_error("min(1 2)", 6, "ranker expression: near '2)' at offset 6: expected ',' or ')' in the "
                               "arguments of min()");
    check_error("1..2", 0, "ranker expression: near '1..2' at offset 0: not a number");
    check_error("1 # 2", 2, "ranker expression: near '# 2' at offset 2: expected an operator or the end");
    /* nesting and length are bounded, so no text overflows the stack */
    char z[FTS_RANKEXPR_MAX_LEN + 2];
    memset(z, '(', 200);
    z[200] = '1';
    memset(z + 201, ')', 200);
    z[401] = 0;
    FtsRankExpr *e;
    LpError err;
    arena_reset(&gArena);
    assert_int_equal(fts_rankexpr_compile(&gArena, z, strlen(z), &e, &err), LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "nested deeper than 64 levels"));
    memset(z, '-', 200);
    z[200] = '1';
    z[201] = 0;
    assert_int_equal(fts_rankexpr_compile(&gArena, z, strlen(z), &e, &err), LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "nested deeper than 64 levels"));
    memset(z, ' ', sizeof(z));
    z[0] = '1';
    z[FTS_RANKEXPR_MAX_LEN + 1] = 0;
    assert_int_equal(fts_rankexpr_compile(&gArena, z, strlen(z), &e, &err), LP_BADINPUT);
    assert_string_equal(err.zMsg, "ranker expression: longer than 4096 bytes");
    z[FTS_RANKEXPR_MAX_LEN] = 0; /* 4096 bytes: fine */
    assert_int_equal(fts_rankexpr_compile(&gArena, z, strlen(z), &e, &err), LP_OK);
    assert_int_equal(fts_rankexpr_compile(&gArena, "1\0+1", 4, &e, &err), LP_BADINPUT);
    assert_int_equal(err.pos, 1);
}

/* bm25a()/bm25f(): what the expression hands the rescoring callback. The
** fake encodes its arguments: bF*1000 + k1*100 + b*10 + sum of each of
** the three fields' weight times (field + 1), a field past nW weighing 1. */
static double fake_bm25(void *pCtx, int bF, double k1, double b, const double *aW, int nW) {
    (*(int *)pCtx)++;
    double w = 0;
    for (int f = 0; f < 3; f++) w += (f < nW ? aW[f] : 1) * (f + 1);
    return bF * 1000 + k1 * 100 + b * 10 + w;
}

static double ev_fields(const char *z, int nField, int *pnCalls) {
    FtsRankExpr *e;
    LpError err;
    arena_reset(&gArena);
    if (fts_rankexpr_compile_fields(&gArena, z, strlen(z), azFields, nField, &e, &err) != LP_OK) {
        fail_msg("compile of \"%s\": %s", z, err.zMsg);
    }
    FtsDocFactors d = gDoc;
    d.xBm25 = fake_bm25;
    d.pBm25Ctx = pnCalls;
    return fts_rankexpr_eval(e, &d);
}

static void test_bm25_functions(void **state) {
    (void)state;
    int n = 0;
    assert_true(ev_fields("bm25a(1.2, 0.75)", 3, &n) == 120 + 7.5 + 6);
    assert_true(ev_fields("BM25F(2, 0.5, {title=3, TAGS=0.5})", 3, &n) == 1000 + 200 + 5 + (3 + 2 + 1.5));
    assert_true(ev_fields("bm25f(0,0)", 3, &n) == 1000 + 6);
    assert_true(ev_fields("bm25f(1, 1, { body = 0 })", 3, &n) == 1000 + 100 + 10 + (1 + 0 + 3));
    /* called per evaluation, wherever it stands; in an aggregate too */
    n = 0;
    assert_true(ev_fields("bm25a(1,0) + sum(bm25a(1,0))", 3, &n) == 3 * (100 + 6));
    assert_int_equal(n, 3); /* once, then once per matched field (two) */
    /* compiled without fields: every field weighs 1 */
    n = 0;
    assert_true(ev_fields("bm25f(1, 0.5)", 0, &n) == 1000 + 100 + 5 + 6);
    /* no callback: 0 */
    arena_reset(&gArena);
    FtsRankExpr *e;
    LpError err;
    assert_int_equal(fts_rankexpr_compile(&gArena, "bm25a(1,1) + 2", 14, &e, &err), LP_OK);
    assert_true(fts_rankexpr_eval(e, &gDoc) == 2);
    /* the errors */
    check_fields_error("bm25a(k1, 0.5)", 3, 6, "ranker expression: near 'k1, 0.5)' at offset 6: bm25a() takes "
                                                "k1 as a number written out");
    check_fields_error("bm25a(101, 0.5)", 3, 6, "ranker expression: near '101, 0.5)' at offset 6: k1 in "
                                                 "bm25a() is a number from 0 to 100");
    check_fields_error("bm25a(1, 2)", 3, 9, "ranker expression: near '2)' at offset 9: b in bm25a() is a "
                                             "number from 0 to 1");
    check_fields_error("bm25a(1)", 3, 7, "ranker expression: near ')' at offset 7: expected ',' after k1");
    check_fields_error("bm25a(1, 0.5, {title=1})", 3, 12, "ranker expression: near ', {title=1})' at offset "
                                                           "12: expected ')' to end bm25a()");
    check_fields_error("bm25f(1, 0.5, {nope=1})", 3, 15, "ranker expression: near 'nope=1})' at offset 15: "
                                                          "bm25f(): 'nope' is not a full-text field (the "
                                                          "table's: title, body, tags)");
    check_fields_error("bm25f(1, 0.5, {title=1})", 0, 15, "ranker expression: near 'title=1})' at offset 15: "
                                                           "bm25f(): 'title' is not a full-text field (no "
                                                           "fields are known here)");
    check_fields_error("bm25f(1, 0.5, {title 1})", 3, 21, "ranker expression: near '1})' at offset 21: "
                                                           "expected '=' after the field name");
    check_fields_error("bm25f(1, 0.5, {title=2 body=1})", 3, 23, "ranker expression: near 'body=1})' at "
                                                                  "offset 23: expected ',' or '}' in the "
                                                                  "field weights");
    check_fields_error("bm25f(1, 0.5, {title=-1})", 3, 21, "ranker expression: near '-1})' at offset 21: "
                                                            "bm25f() takes a field weight as a number "
                                                            "written out");
    check_fields_error("bm25f(1, 0.5, title)", 3, 14, "ranker expression: near 'title)' at offset 14: "
                                                       "expected '{' to open the field weights ({title=2, "
                                                       "body=1})");
    check_fields_error("bm25f(1, 0.5, {})", 3, 15, "ranker expression: near '})' at offset 15: expected a "
                                                    "field name");
}

int main(void) {
    arena_init(&gArena, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_functions),
        cmocka_unit_test(test_factors),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_bm25_functions),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    arena_free(&gArena);
    return rc;
}
