/* Unit tests for src/query: expression semantics and top-k selection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "query/expr.h"
#include "query/jsonpath.h"
#include "query/select.h"

static Schema *one_int_schema(void) {
    ColumnSchema c = {(char *)"n", COL_INT, 0, {0}};
    Schema s = {&c, 1, NULL, 0};
    return schema_dup(&s);
}

static void test_three_valued(void **state) {
    (void)state;
    Arena a;
    arena_init(&a, 0);
    QExpr *nul = qexpr_const(&a, value_null());
    QExpr *one = qexpr_const(&a, value_int(1));
    QExpr *zero = qexpr_const(&a, value_int(0));
    /* NULL AND 0 = 0, NULL AND 1 = NULL, NULL OR 1 = 1, NULL OR 0 = NULL */
    assert_int_equal(qexpr_eval(qexpr_binary(&a, QOP_AND, nul, zero), NULL).u.i, 0);
    assert_int_equal(qexpr_eval(qexpr_binary(&a, QOP_AND, nul, one), NULL).kind, VAL_NULL);
    assert_int_equal(qexpr_eval(qexpr_binary(&a, QOP_OR, nul, one), NULL).u.i, 1);
    assert_int_equal(qexpr_eval(qexpr_binary(&a, QOP_OR, nul, zero), NULL).kind, VAL_NULL);
    assert_int_equal(qexpr_eval(qexpr_unary(&a, QOP_NOT, nul), NULL).kind, VAL_NULL);
    assert_int_equal(qexpr_eval(qexpr_binary(&a, QOP_EQ, nul, nul), NULL).kind, VAL_NULL);
    /* IN with a NULL in the list: a match is 1, a miss is NULL */
    Value list[3] = {value_int(5), value_null(), value_int(1)};
    assert_int_equal(qexpr_eval(qexpr_in(&a, one, list, 3, 0), NULL).u.i, 1);
    assert_int_equal(qexpr_eval(qexpr_in(&a, zero, list, 3, 0), NULL).kind, VAL_NULL);
    assert_int_equal(qexpr_eval(qexpr_in(&a, zero, list, 3, 1), NULL).kind, VAL_NULL);
    Value ints[4] = {value_int(9), value_int(-3), value_int(4), value_int(0)};
    assert_int_equal(qexpr_eval(qexpr_in(&a, zero, ints, 4, 0), NULL).u.i, 1);
    assert_int_equal(qexpr_eval(qexpr_in(&a, one, ints, 4, 1), NULL).u.i, 1);
    arena_free(&a);
}

static void test_arith(void **state) {
    (void)state;
    Arena a;
    arena_init(&a, 0);
    QExpr *big = qexpr_const(&a, value_int(INT64_MAX));
    QExpr *two = qexpr_const(&a, value_int(2));
    QExpr *zero = qexpr_const(&a, value_int(0));
    Value v = qexpr_eval(qexpr_binary(&a, QOP_ADD, big, two), NULL);
    assert_int_equal(v.kind, VAL_FLOAT); /* overflow leaves the integers, never wraps */
    v = qexpr_eval(qexpr_binary(&a, QOP_DIV, two, zero), NULL);
    assert_int_equal(v.kind, VAL_NULL);
    v = qexpr_eval(qexpr_binary(&a, QOP_DIV, qexpr_const(&a, value_int(7)), two), NULL);
    assert_true(v.kind == VAL_FLOAT && v.u.f == 3.5);
    v = qexpr_eval(qexpr_binary(&a, QOP_IDIV, qexpr_const(&a, value_int(-7)), two), NULL);
    assert_int_equal(v.u.i, -3);
    v = qexpr_eval(qexpr_binary(&a, QOP_MOD, qexpr_const(&a, value_int(INT64_MIN)),
                                qexpr_const(&a, value_int(-1))), NULL);
    assert_int_equal(v.u.i, 0);
    v = qexpr_eval(qexpr_unary(&a, QOP_NEG, qexpr_const(&a, value_int(INT64_MIN))), NULL);
    assert_int_equal(v.kind, VAL_FLOAT);
    /* mixed int/float comparison by value; strings case-insensitively */
    Value x = value_int(3), y = value_float(3.0);
    assert_int_equal(value_cmp(&x, &y), 0);
    Value s1 = value_str("abc", 3), s2 = value_str("ABD", 3);
    assert_true(value_cmp(&s1, &s2) < 0);
    Value n = value_null();
    assert_true(value_cmp(&n, &x) < 0); /* NULL sorts first */
    arena_free(&a);
}

typedef struct Collect {
    int64_t a[64];
    int n;
} Collect;

static int collect(void *ctx, const Value *aVal, int nVal) {
    Collect *c = ctx;
    assert_int_equal(nVal, 1);
    c->a[c->n++] = aVal[0].u.i;
    return 0;
}

static Table *filled_table(int nRow) {
    Table *t = table_new("t", one_int_schema(), NULL);
    LpError err;
    for (int i = 1; i <= nRow; i++) {
        Value v = (i % 7 == 0) ? value_null() : value_int((i * 37) % 11); /* repeats, NULLs */
        TableOp op = {TOP_INSERT, i, &v, NULL, NULL, NULL};
        assert_int_equal(table_apply(t, &op, 1, NULL, &err), LP_OK);
    }
    return t;
}

static void test_topk(void **state) {
    (void)state;
    Table *t = filled_table(50);
    Arena a;
    arena_init(&a, 0);
    const QExpr *idc = qexpr_column(&a, SCHEMA_ID_COL);
    QOrder ord[1] = {{qexpr_column(&a, 0), 1}}; /* ORDER BY n DESC, then id */
    QSelect q = {0};
    q.pTable = t;
    q.aOut = &idc;
    q.nOut = 1;
    q.aOrder = ord;
    q.nOrder = 1;
    q.iOffset = 3;
    q.iLimit = 10;
    Collect c = {{0}, 0};
    QMeta m;
    LpError err;
    assert_int_equal(query_select(&q, collect, &c, &m, &err), LP_OK);
    assert_int_equal(m.nTotalFound, 50);
    assert_int_equal(c.n, 10);
    /* Reference: sort all rows the same way and compare the window. */
    int64_t ids[50];
    for (int i = 0; i < 50; i++) ids[i] = i + 1;
    for (int i = 0; i < 50; i++) {
        for (int j = i + 1; j < 50; j++) {
            int64_t x = ids[i], y = ids[j];
            int64_t nx = x % 7 == 0 ? -1 : (x * 37) % 11, ny = y % 7 == 0 ? -1 : (y * 37) % 11;
            if (ny > nx || (ny == nx && y < x)) ids[i] = y, ids[j] = x;
        }
    }
    for (int i = 0; i < 10; i++) assert_int_equal(c.a[i], ids[3 + i]);

    /* a filter, id order, LIMIT smaller than the matches */
    QExpr *w = qexpr_binary(&a, QOP_GT, qexpr_column(&a, 0), qexpr_const(&a, value_int(5)));
    QSelect q2 = {0};
    q2.pTable = t;
    q2.pWhere = w;
    q2.aOut = &idc;
    q2.nOut = 1;
    q2.iLimit = 3;
    c.n = 0;
    assert_int_equal(query_select(&q2, collect, &c, &m, &err), LP_OK);
    assert_int_equal(c.n, 3);
    assert_true(c.a[0] < c.a[1] && c.a[1] < c.a[2]);
    uint64_t nExpect = 0;
    for (int i = 1; i <= 50; i++) nExpect += i % 7 != 0 && (i * 37) % 11 > 5;
    assert_int_equal(m.nTotalFound, nExpect);
    assert_string_equal(m.zPlan, "full_scan");

    /* id lookup: repeated and missing ids, filter still applied */
    int64_t cand[5] = {9, 9, 1000, 14, 2};
    q2.aId = cand;
    q2.nId = 5;
    q2.iLimit = 10;
    q2.pWhere = NULL;
    c.n = 0;
    assert_int_equal(query_select(&q2, collect, &c, &m, &err), LP_OK);
    assert_string_equal(m.zPlan, "id_lookup");
    assert_int_equal(c.n, 3);
    assert_int_equal(c.a[0], 2);
    assert_int_equal(c.a[1], 9);
    assert_int_equal(c.a[2], 14);

    /* count only */
    q2.bCountOnly = 1;
    c.n = 0;
    assert_int_equal(query_select(&q2, collect, &c, &m, &err), LP_OK);
    assert_int_equal(c.n, 0);
    assert_int_equal(m.nTotalFound, 3);
    arena_free(&a);
    table_unref(t);
}

/* A JSON value as text: "s:..." a string, "i:N", "f:X", "null". */
static const char *jv_text(Value v) {
    static char out[256];
    if (v.kind == VAL_STR) snprintf(out, sizeof(out), "s:%.*s", (int)v.u.s.n, v.u.s.z);
    else if (v.kind == VAL_INT) snprintf(out, sizeof(out), "i:%lld", (long long)v.u.i);
    else if (v.kind == VAL_FLOAT) snprintf(out, sizeof(out), "f:%g", v.u.f);
    else snprintf(out, sizeof(out), "null");
    return out;
}

/* The value at a path given as "key", "#N" (an index) steps, as jv_text. */
static const char *jpath(const char *zDoc, const char *const *azStep, int nStep) {
    JsonStep a[8];
    for (int i = 0; i < nStep; i++) {
        if (azStep[i][0] == '#') a[i] = (JsonStep){NULL, 0, atoll(azStep[i] + 1)};
        else a[i] = (JsonStep){azStep[i], (uint32_t)strlen(azStep[i]), -1};
    }
    Arena ar;
    arena_init(&ar, 1024);
    const char *z = jv_text(json_path_value(zDoc, strlen(zDoc), a, nStep, &ar));
    arena_free(&ar);
    return z;
}

#define JP(doc, ...) jpath(doc, (const char *const[]){__VA_ARGS__}, \
                           (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)))

static void test_json_path(void **state) {
    (void)state;
    const char *d = "{\"a\":1,\"b\":{\"c\":[10,-2.5,\"x\\\"y\",{\"d\":true}],\"e\":null},"
                    "\"k\\u00e9y\":\"\\ud83d\\ude00\",\"big\":123456789012345678901,\"f\":false}";
    assert_string_equal(JP(d, "a"), "i:1");
    assert_string_equal(JP(d, "b", "c", "#0"), "i:10");
    assert_string_equal(JP(d, "b", "c", "#1"), "f:-2.5");
    assert_string_equal(JP(d, "b", "c", "#2"), "s:x\"y");
    assert_string_equal(JP(d, "b", "c", "#3", "d"), "i:1");
    assert_string_equal(JP(d, "f"), "i:0");
    assert_string_equal(JP(d, "b", "e"), "null");
    assert_string_equal(JP(d, "b", "c"), "s:[10,-2.5,\"x\\\"y\",{\"d\":true}]");
    assert_string_equal(JP(d, "k\xc3\xa9y"), "s:\xf0\x9f\x98\x80"); /* escaped key, surrogate pair */
    assert_string_equal(JP(d, "big"), "f:1.23457e+20");                  /* past int64: a double */
    /* paths that lead nowhere */
    assert_string_equal(JP(d, "A"), "null");
    assert_string_equal(JP(d, "b", "c", "#4"), "null");
    assert_string_equal(JP(d, "a", "x"), "null");
    assert_string_equal(JP(d, "b", "#0"), "null");
    assert_string_equal(JP("[ 1 , [2, 3] ]", "#1", "#1"), "i:3");
    assert_string_equal(JP("{ \"a\" : { \"b\" : \"c\" } }", "a", "b"), "s:c");
    /* text that is not JSON never reads past its end */
    static const char *const azBad[] = {"{", "{\"a", "{\"a\"", "{\"a\":", "{\"a\":[1,", "[\"\\", "{\"a\":\"\\u12",
                                        "{\"b\":{\"c\":[}", "{\"a\"1}", "[1 2]", "", "\"", "{\"b\":\"x\",}"};
    for (size_t i = 0; i < sizeof(azBad) / sizeof(azBad[0]); i++) {
        char *z = malloc(strlen(azBad[i]) + 1); /* exact size: ASan sees any overread */
        memcpy(z, azBad[i], strlen(azBad[i]));
        JsonStep st[2] = {{"a", 1, -1}, {NULL, 0, 0}};
        Arena ar;
        arena_init(&ar, 256);
        (void)json_path_value(z, strlen(azBad[i]), st, 1, &ar);
        (void)json_path_value(z, strlen(azBad[i]), st + 1, 1, &ar);
        arena_free(&ar);
        free(z);
    }
    /* random bytes of JSON's alphabet, random paths: no crash, no overread */
    uint64_t seed = 7;
    static const char alpha[] = "{}[]\":,\\u0a1 -.e9tnfx";
    for (int round = 0; round < 20000; round++) {
        char buf[48];
        size_t n = 0;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t len = (seed >> 33) % sizeof(buf);
        for (; n < len; n++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            buf[n] = alpha[(seed >> 33) % (sizeof(alpha) - 1)];
        }
        char *z = malloc(n ? n : 1);
        memcpy(z, buf, n);
        JsonStep st[3] = {{"a", 1, -1}, {NULL, 0, (int64_t)(seed % 3)}, {"x", 1, -1}};
        Arena ar;
        arena_init(&ar, 256);
        (void)json_path_value(z, n, st + (seed >> 40) % 2, 1 + (int)((seed >> 50) % 2), &ar);
        JsonIter it; /* and every element of it as an array */
        Value v;
        for (int k = 0; json_iter_init(&it, z, n) && k < 64 && json_iter_next(&it, &ar, &v); k++) continue;
        arena_free(&ar);
        free(z);
    }
}

/* The elements of an array, as json_path_value gives values; an empty
** array, a non-array, and text that stops being JSON. */
static void test_json_iter(void **state) {
    (void)state;
    static const struct {
        const char *zDoc, *zWant; /* the elements as JV() shows them, ';'-joined, "-" when not an array */
    } a[] = {
        {" [ 1 , -2.5, \"a\\\"b\", true, null, [1, [2]], {\"k\": [3]} ] ", "i:1;f:-2.5;s:a\"b;i:1;null;s:[1, [2]];s:{\"k\": [3]}"},
        {"[]", ""},
        {"[ ]", ""},
        {"{\"a\": [1]}", "-"},
        {"\"[1]\"", "-"},
        {"[1, 2", "i:1;i:2"},
        {"[1, }", "i:1"},
        {"[\"x", ""},
    };
    for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
        size_t n = strlen(a[i].zDoc);
        char *z = malloc(n + 1); /* exact size, as above */
        memcpy(z, a[i].zDoc, n);
        Arena ar;
        arena_init(&ar, 256);
        StrBuf sb = {0};
        JsonIter it;
        Value v;
        if (!json_iter_init(&it, z, n)) strbuf_appendz(&sb, "-");
        else for (int k = 0; json_iter_next(&it, &ar, &v); k++) {
            if (k) strbuf_appendc(&sb, ';');
            strbuf_appendz(&sb, jv_text(v));
        }
        assert_string_equal(sb.z ? sb.z : "", a[i].zWant);
        strbuf_free(&sb);
        arena_free(&ar);
        free(z);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_path),
        cmocka_unit_test(test_json_iter),
        cmocka_unit_test(test_three_valued),
        cmocka_unit_test(test_arith),
        cmocka_unit_test(test_topk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
