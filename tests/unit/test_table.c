/* Unit tests for src/table: values, schema, rows, batches, catalog. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <stdio.h>

#include "table/catalog.h"
#include "table/schema.h"
#include "table/table.h"
#include "table/table_int.h"
#include "table/value.h"

/* A schema: title TEXT, price FLOAT, qty INT, cat STRING, v FLOAT_VECTOR(3). */
static Schema *make_schema(void) {
    Schema s = {0};
    ColumnSchema aCol[5] = {
        {(char *)"title", COL_TEXT, COLF_INDEXED | COLF_STORED, {0}},
        {(char *)"price", COL_FLOAT, 0, {0}},
        {(char *)"qty", COL_INT, 0, {0}},
        {(char *)"cat", COL_STRING, 0, {0}},
        {(char *)"v", COL_VECTOR, 0, {0}},
    };
    aCol[4].vec.nDims = 3;
    s.aCol = aCol;
    s.nCol = 5;
    return schema_dup(&s);
}

static void row_values(Value *a, const char *zTitle, double price, int64_t qty) {
    a[0] = zTitle ? value_str(zTitle, (uint32_t)strlen(zTitle)) : value_null();
    a[1] = value_float(price);
    a[2] = value_int(qty);
    a[3] = value_null();
    a[4] = value_null();
}

static int64_t snap_count(Table *t) {
    TableSnap *s = table_snapshot(t);
    int64_t n = (int64_t)table_snap_count(s);
    table_snapshot_release(s);
    return n;
}

static void test_coerce(void **state) {
    (void)state;
    Schema *s = make_schema();
    Arena a;
    arena_init(&a, 0);
    LpError err;
    Value out;
    /* INT range */
    assert_int_equal(value_coerce(&s->aCol[2], value_int(2147483647), &a, &out, &err), LP_OK);
    assert_int_equal(value_coerce(&s->aCol[2], value_int(2147483648LL), &a, &out, &err), LP_RANGE);
    assert_non_null(strstr(err.zMsg, "out of range for INT column 'qty'"));
    assert_int_equal(value_coerce(&s->aCol[2], value_int(-2147483649LL), &a, &out, &err), LP_RANGE);
    assert_int_equal(value_coerce(&s->aCol[2], value_str("42", 2), &a, &out, &err), LP_OK);
    assert_int_equal(out.u.i, 42);
    assert_int_equal(value_coerce(&s->aCol[2], value_float(3.0), &a, &out, &err), LP_OK);
    assert_int_equal(value_coerce(&s->aCol[2], value_float(3.5), &a, &out, &err), LP_BADINPUT);
    assert_int_equal(value_coerce(&s->aCol[2], value_str("4x", 2), &a, &out, &err), LP_BADINPUT);
    /* FLOAT: float32 range, numeric strings only */
    assert_int_equal(value_coerce(&s->aCol[1], value_float(1e39), &a, &out, &err), LP_RANGE);
    assert_int_equal(value_coerce(&s->aCol[1], value_str("inf", 3), &a, &out, &err), LP_BADINPUT);
    assert_int_equal(value_coerce(&s->aCol[1], value_str("-1.5", 4), &a, &out, &err), LP_OK);
    assert_true(out.u.f == -1.5);
    assert_int_equal(value_coerce(&s->aCol[1], value_float(0.1), &a, &out, &err), LP_OK);
    assert_true(out.u.f == (double)0.1f);
    /* UTF-8 */
    assert_int_equal(value_coerce(&s->aCol[3], value_str("ok \xe2\x82\xac", 6), &a, &out, &err),
                     LP_OK);
    assert_int_equal(value_coerce(&s->aCol[3], value_str("ab\xc3", 3), &a, &out, &err),
                     LP_BADINPUT);
    assert_int_equal(err.pos, 2);
    assert_int_equal(value_coerce(&s->aCol[3], value_str("\xed\xa0\x80", 3), &a, &out, &err),
                     LP_BADINPUT); /* a surrogate */
    /* numbers into strings become text */
    assert_int_equal(value_coerce(&s->aCol[3], value_int(-7), &a, &out, &err), LP_OK);
    assert_int_equal(out.kind, VAL_STR);
    assert_memory_equal(out.u.s.z, "-7", 2);
    /* vectors */
    float af[2] = {1, 2};
    Value v2 = {VAL_VEC, {.v = {af, 2}}};
    assert_int_equal(value_coerce(&s->aCol[4], v2, &a, &out, &err), LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "3 dimensions"));
    assert_int_equal(value_coerce(&s->aCol[4], value_str("[1, 2.5, -3]", 12), &a, &out, &err),
                     LP_OK);
    assert_int_equal(out.u.v.n, 3);
    assert_true(out.u.v.a[2] == -3.0f);
    assert_int_equal(value_coerce(&s->aCol[2], v2, &a, &out, &err), LP_BADINPUT);
    /* NULL fits every column */
    for (int i = 0; i < s->nCol; i++) {
        assert_int_equal(value_coerce(&s->aCol[i], value_null(), &a, &out, &err), LP_OK);
        assert_int_equal(out.kind, VAL_NULL);
    }
    /* JSON, TIMESTAMP, BOOL */
    ColumnSchema j = {(char *)"j", COL_JSON, 0, {0}};
    assert_int_equal(value_coerce(&j, value_str("{ \"a\" : [1, 2] }", 16), &a, &out, &err), LP_OK);
    assert_int_equal(out.u.s.n, strlen("{\"a\":[1,2]}"));
    assert_memory_equal(out.u.s.z, "{\"a\":[1,2]}", out.u.s.n);
    assert_int_equal(value_coerce(&j, value_str("{\"a\":", 5), &a, &out, &err), LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "invalid JSON"));
    ColumnSchema ts = {(char *)"ts", COL_TIMESTAMP, 0, {0}};
    assert_int_equal(value_coerce(&ts, value_str("2024-02-29 12:00:01", 19), &a, &out, &err), LP_OK);
    assert_int_equal(out.u.i, 1709208001);
    assert_int_equal(value_coerce(&ts, value_str("2023-02-29", 10), &a, &out, &err), LP_BADINPUT);
    assert_int_equal(value_coerce(&ts, value_int(-1), &a, &out, &err), LP_RANGE);
    ColumnSchema bo = {(char *)"b", COL_BOOL, 0, {0}};
    assert_int_equal(value_coerce(&bo, value_str("TRUE", 4), &a, &out, &err), LP_OK);
    assert_int_equal(out.u.i, 1);
    assert_int_equal(value_coerce(&bo, value_int(2), &a, &out, &err), LP_RANGE);
    arena_free(&a);
    schema_free(s);
}

/* Multi-values: coerced from a list, one integer or a string; sorted,
** repeats dropped; MULTI's range; shown as "1,2,3"; a row keeps them
** (an empty one too) and the row check refuses a disordered set. */
static void test_coerce_mva(void **state) {
    (void)state;
    Arena a;
    arena_init(&a, 0);
    LpError err;
    Value out;
    ColumnSchema m = {(char *)"tags", COL_MULTI, 0, {0}}, m64 = {(char *)"big", COL_MULTI64, 0, {0}};
    int64_t in[] = {5, 3, 5, -0, 4294967295LL, 3};
    Value list = {VAL_MVA, {.m = {in, 6}}};
    assert_int_equal(value_coerce(&m, list, &a, &out, &err), LP_OK);
    assert_int_equal(out.kind, VAL_MVA);
    assert_int_equal(out.u.m.n, 4);
    int64_t want[] = {0, 3, 5, 4294967295LL};
    assert_memory_equal(out.u.m.a, want, sizeof(want));
    assert_int_equal(in[0], 5); /* the input is not sorted in place */
    StrBuf sb = {0};
    value_format(&out, 0, &sb);
    assert_string_equal(sb.z, "0,3,5,4294967295");
    strbuf_free(&sb);
    int64_t neg[] = {1, -1};
    Value bad = {VAL_MVA, {.m = {neg, 2}}};
    assert_int_equal(value_coerce(&m, bad, &a, &out, &err), LP_RANGE);
    assert_non_null(strstr(err.zMsg, "out of range for MULTI column 'tags'"));
    assert_int_equal(value_coerce(&m64, bad, &a, &out, &err), LP_OK);
    assert_int_equal(out.u.m.a[0], -1);
    assert_int_equal(value_coerce(&m, value_int(7), &a, &out, &err), LP_OK);
    assert_true(out.kind == VAL_MVA && out.u.m.n == 1 && out.u.m.a[0] == 7);
    assert_int_equal(value_coerce(&m64, value_str(" (9, -2 ,9) ", 12), &a, &out, &err), LP_OK);
    assert_true(out.u.m.n == 2 && out.u.m.a[0] == -2 && out.u.m.a[1] == 9);
    assert_int_equal(value_coerce(&m, value_str("", 0), &a, &out, &err), LP_OK);
    assert_true(out.kind == VAL_MVA && out.u.m.n == 0);
    assert_int_equal(value_coerce(&m, value_str("[]", 2), &a, &out, &err), LP_OK);
    assert_int_equal(out.u.m.n, 0);
    assert_int_equal(value_coerce(&m, value_str("1,,2", 4), &a, &out, &err), LP_BADINPUT);
    assert_int_equal(value_coerce(&m, value_str("1,2,", 4), &a, &out, &err), LP_BADINPUT);
    assert_int_equal(value_coerce(&m, value_str("1,x", 3), &a, &out, &err), LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "expected a list of integers"));
    assert_int_equal(value_coerce(&m64, value_str("99999999999999999999", 20), &a, &out, &err), LP_RANGE);
    assert_int_equal(value_coerce(&m, value_float(1.5), &a, &out, &err), LP_BADINPUT);
    assert_int_equal(value_coerce(&m, value_null(), &a, &out, &err), LP_OK);
    assert_int_equal(out.kind, VAL_NULL);

    /* rows: an empty set, a set, NULL; then a broken one is refused */
    Schema sd = {0};
    ColumnSchema aCol[3] = {m, m64, {(char *)"n", COL_INT, 0, {0}}};
    sd.aCol = aCol;
    sd.nCol = 3;
    Table *t = table_new("t", schema_dup(&sd), NULL);
    int64_t two[] = {2, 1};
    Value row1[3] = {{VAL_MVA, {.m = {NULL, 0}}}, {VAL_MVA, {.m = {two, 2}}}, value_int(4)};
    Value row2[3] = {value_null(), {VAL_MVA, {.m = {in, 1}}}, value_null()};
    Value c1[3], c2[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(value_coerce(&aCol[i], row1[i], &a, &c1[i], &err), LP_OK);
        assert_int_equal(value_coerce(&aCol[i], row2[i], &a, &c2[i], &err), LP_OK);
    }
    TableOp ops[2] = {{TOP_INSERT, 1, c1, NULL, NULL, NULL}, {TOP_INSERT, 2, c2, NULL, NULL, NULL}};
    TableApplyOut o;
    assert_int_equal(table_apply(t, ops, 2, &o, &err), LP_OK);
    TableSnap *sn = table_snapshot(t);
    const Schema *sc = table_schema(t);
    const MemRow *r = table_snap_get(sn, 1);
    Value v = row_get(sc, r, 0);
    assert_true(v.kind == VAL_MVA && v.u.m.n == 0);
    v = row_get(sc, r, 1);
    assert_true(v.kind == VAL_MVA && v.u.m.n == 2 && v.u.m.a[0] == 1 && v.u.m.a[1] == 2);
    assert_int_equal((uintptr_t)v.u.m.a % 8, 0);
    assert_int_equal(row_get(sc, r, 2).u.i, 4);
    const MemRow *r2 = table_snap_get(sn, 2);
    assert_int_equal(row_get(sc, r2, 0).kind, VAL_NULL);
    assert_int_equal(row_get(sc, r2, 1).u.m.a[0], 5);
    /* a copy of row 1 with its items swapped fails the check */
    uint32_t nb = row_nbyte(r);
    uint64_t *cp = malloc(nb);
    assert_non_null(cp);
    memcpy(cp, r, nb);
    MemRow *rc = (MemRow *)(void *)cp;
    int64_t *items = (int64_t *)(void *)((char *)cp + (rc->aSlot[1] >> 32));
    assert_int_equal(table_row_valid(sc, rc, nb, NULL), 1);
    items[0] = 3; /* 3, 2: not ascending */
    assert_int_equal(table_row_valid(sc, rc, nb, NULL), 0);
    items[0] = 1;
    rc->aSlot[0] = ((uint64_t)nb + 8) << 32; /* the empty set's offset past the block */
    assert_int_equal(table_row_valid(sc, rc, nb, NULL), 0);
    free(cp);
    table_snapshot_release(sn);
    table_unref(t);
    arena_free(&a);
}

static void test_format(void **state) {
    (void)state;
    char buf[32];
    value_fmt_float(0.1f, buf);
    assert_string_equal(buf, "0.1");
    value_fmt_float(3.4028235e38f, buf);
    assert_true(strtof(buf, NULL) == 3.4028235e38f);
    value_fmt_float(1e-45f, buf);
    assert_true(strtof(buf, NULL) == 1e-45f);
    value_fmt_double(0.1, buf);
    assert_string_equal(buf, "0.1");
    value_fmt_double(1.0 / 3.0, buf);
    assert_true(strtod(buf, NULL) == 1.0 / 3.0);
    StrBuf sb = {0};
    float af[3] = {0.5f, -1, 2.25f};
    Value v = {VAL_VEC, {.v = {af, 3}}};
    value_format(&v, 1, &sb);
    assert_string_equal(sb.z, "0.5,-1,2.25");
    strbuf_free(&sb);
    assert_true(value_strcmp_ci("Books", 5, "bOOKS", 5) == 0);
    assert_true(value_strcmp_ci("a", 1, "ab", 2) < 0);
}

static void test_schema_sql(void **state) {
    (void)state;
    Schema *s = make_schema();
    StrBuf sb = {0};
    schema_to_sql(s, "select", &sb);
    assert_non_null(strstr(sb.z, "CREATE TABLE `select` (\nid bigint,\ntitle text indexed stored"));
    assert_non_null(strstr(sb.z, "v float_vector knn_dims='3'"));
    assert_int_equal(schema_find(s, "qty"), 2);
    assert_int_equal(schema_find(s, "id"), SCHEMA_ID_COL);
    assert_int_equal(schema_find(s, "nope"), SCHEMA_NO_COL);
    strbuf_free(&sb);
    schema_free(s);
}

static void test_apply_basic(void **state) {
    (void)state;
    Table *t = table_new("t", make_schema(), NULL);
    Value a[5], b[5];
    row_values(a, "one", 1.5, 10);
    row_values(b, "two", 2.5, 20);
    TableOp ops[2] = {{TOP_INSERT, 0, a, NULL, NULL, NULL}, {TOP_INSERT, 0, b, NULL, NULL, NULL}};
    TableApplyOut out;
    LpError err;
    assert_int_equal(table_apply(t, ops, 2, &out, &err), LP_OK);
    assert_int_equal(out.nAffected, 2);
    assert_int_equal(out.iFirstAutoId, 1);

    TableSnap *s = table_snapshot(t);
    const MemRow *r = table_snap_get(s, 2);
    assert_non_null(r);
    Value v = row_get(table_schema(t), r, 0);
    assert_int_equal(v.kind, VAL_STR);
    assert_memory_equal(v.u.s.z, "two", 3);
    assert_int_equal(row_get(table_schema(t), r, 2).u.i, 20);
    assert_int_equal(row_get(table_schema(t), r, 3).kind, VAL_NULL);
    assert_int_equal(row_get(table_schema(t), r, SCHEMA_ID_COL).u.i, 2);
    assert_null(table_snap_get(s, 3));
    table_snapshot_release(s);

    /* duplicate id in the middle of a batch: nothing of the batch applies */
    Value c[5];
    row_values(c, "three", 3, 30);
    TableOp bad[3] = {{TOP_INSERT, 10, c, NULL, NULL, NULL}, {TOP_INSERT, 1, c, NULL, NULL, NULL}, {TOP_INSERT, 11, c, NULL, NULL, NULL}};
    assert_int_equal(table_apply(t, bad, 3, &out, &err), LP_EXISTS);
    assert_string_equal(err.zMsg, "duplicate id '1'");
    assert_int_equal(snap_count(t), 2);
    /* ... also a duplicate inside the batch itself */
    TableOp bad2[2] = {{TOP_INSERT, 50, c, NULL, NULL, NULL}, {TOP_INSERT, 50, c, NULL, NULL, NULL}};
    assert_int_equal(table_apply(t, bad2, 2, &out, &err), LP_EXISTS);
    assert_int_equal(snap_count(t), 2);

    /* REPLACE, UPDATE after INSERT in one batch, DELETE of a missing id */
    Value upd[5];
    uint8_t set[5] = {0, 0, 1, 0, 0};
    row_values(upd, NULL, 0, 99);
    TableOp mix[4] = {{TOP_REPLACE, 1, c, NULL, NULL, NULL},
                      {TOP_INSERT, 7, a, NULL, NULL, NULL},
                      {TOP_UPDATE, 7, upd, set, NULL, NULL},
                      {TOP_DELETE, 1234, NULL, NULL, NULL, NULL}};
    assert_int_equal(table_apply(t, mix, 4, &out, &err), LP_OK);
    assert_int_equal(out.nAffected, 3);
    s = table_snapshot(t);
    r = table_snap_get(s, 7);
    assert_int_equal(row_get(table_schema(t), r, 2).u.i, 99);
    assert_memory_equal(row_get(table_schema(t), r, 0).u.s.z, "one", 3); /* untouched column */
    assert_memory_equal(row_get(table_schema(t), table_snap_get(s, 1), 0).u.s.z, "three", 5);
    assert_int_equal(table_snap_count(s), 3);
    table_snapshot_release(s);

    /* a compare-and-set UPDATE (aWas): made when the columns it sets are as
    ** read, passed over (and flagged) when not, or when an earlier op of the
    ** batch changed the row */
    Value was[5], now99[5], upd2[5];
    row_values(was, NULL, 0, 99);
    row_values(now99, NULL, 0, 5);
    row_values(upd2, NULL, 0, 100);
    uint8_t aStale[3] = {9, 9, 9};
    TableOp cas[3] = {{TOP_UPDATE, 7, upd2, set, was, &aStale[0]},   /* 99 as read: made */
                      {TOP_UPDATE, 7, upd2, set, was, &aStale[1]},   /* after the first: passed over */
                      {TOP_UPDATE, 1, upd2, set, now99, &aStale[2]}}; /* row 1 holds 30: passed over */
    aStale[0] = aStale[1] = aStale[2] = 0;
    assert_int_equal(table_apply(t, cas, 3, &out, &err), LP_OK);
    assert_int_equal(out.nAffected, 1);
    assert_int_equal(aStale[0], 0);
    assert_int_equal(aStale[1], 1);
    assert_int_equal(aStale[2], 1);
    s = table_snapshot(t);
    assert_int_equal(row_get(table_schema(t), table_snap_get(s, 7), 2).u.i, 100);
    assert_int_equal(row_get(table_schema(t), table_snap_get(s, 1), 2).u.i, 30);
    table_snapshot_release(s);

    /* automatic ids continue after the largest id ever held */
    TableOp del = {TOP_DELETE, 7, NULL, NULL, NULL, NULL};
    assert_int_equal(table_apply(t, &del, 1, &out, &err), LP_OK);
    TableOp ins = {TOP_INSERT, 0, a, NULL, NULL, NULL};
    assert_int_equal(table_apply(t, &ins, 1, &out, &err), LP_OK);
    assert_int_equal(out.iFirstAutoId, 8);

    assert_int_equal(table_truncate(t, NULL), LP_OK);
    assert_int_equal(snap_count(t), 0);
    assert_int_equal(table_apply(t, &ins, 1, &out, &err), LP_OK);
    assert_int_equal(out.iFirstAutoId, 1);
    table_unref(t);
}

static void test_sorted_and_compact(void **state) {
    (void)state;
    Table *t = table_new("t", make_schema(), NULL);
    Value a[5];
    row_values(a, "x", 1, 1);
    LpError err;
    TableApplyOut out;
    for (int64_t id = 1; id <= 5000; id++) {
        TableOp op = {TOP_INSERT, id, a, NULL, NULL, NULL};
        assert_int_equal(table_apply(t, &op, 1, &out, &err), LP_OK);
    }
    TableSnap *s = table_snapshot(t);
    assert_true(table_snap_sorted(s));
    table_snapshot_release(s);
    /* delete most rows: the slot array is compacted and lookups still work */
    for (int64_t id = 1; id <= 5000; id++) {
        if (id % 10 == 0) continue;
        TableOp op = {TOP_DELETE, id, NULL, NULL, NULL, NULL};
        assert_int_equal(table_apply(t, &op, 1, &out, &err), LP_OK);
    }
    s = table_snapshot(t);
    assert_int_equal(table_snap_count(s), 500);
    assert_true(table_snap_nslot(s) < 5000);
    int64_t prev = 0;
    size_t nSeen = 0;
    for (size_t i = 0; i < table_snap_nslot(s); i++) {
        const MemRow *r = table_snap_slot(s, i);
        if (!r) continue;
        assert_true(row_id(r) > prev);
        prev = row_id(r);
        nSeen++;
        assert_ptr_equal(table_snap_get(s, row_id(r)), r);
    }
    assert_int_equal(nSeen, 500);
    table_snapshot_release(s);
    /* an id below the last one breaks ascending order */
    TableOp op = {TOP_INSERT, 3, a, NULL, NULL, NULL};
    assert_int_equal(table_apply(t, &op, 1, &out, &err), LP_OK);
    s = table_snapshot(t);
    assert_false(table_snap_sorted(s));
    table_snapshot_release(s);
    table_unref(t);
}

/* Readers never see half a batch: every batch inserts two rows whose qty
** sum to zero, and readers check the sum over the table. */
typedef struct Shared {
    Table *t;
    int stop;
} Shared;

static void *reader(void *arg) {
    Shared *sh = arg;
    int64_t nBad = 0;
    while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
        TableSnap *s = table_snapshot(sh->t);
        int64_t sum = 0;
        for (size_t i = 0; i < table_snap_nslot(s); i++) {
            const MemRow *r = table_snap_slot(s, i);
            if (r) sum += row_get(table_schema(sh->t), r, 2).u.i;
        }
        if (sum != 0) nBad++;
        table_snapshot_release(s);
    }
    return (void *)(intptr_t)nBad;
}

static void test_concurrent_batches(void **state) {
    (void)state;
    Shared sh = {table_new("t", make_schema(), NULL), 0};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, reader, &sh);
    Value a[5], b[5];
    LpError err;
    TableApplyOut out;
    for (int i = 0; i < 3000; i++) {
        row_values(a, "p", 0, i);
        row_values(b, "n", 0, -i);
        TableOp ops[2] = {{TOP_INSERT, 0, a, NULL, NULL, NULL}, {TOP_INSERT, 0, b, NULL, NULL, NULL}};
        assert_int_equal(table_apply(sh.t, ops, 2, &out, &err), LP_OK);
    }
    __atomic_store_n(&sh.stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++) {
        void *ret;
        pthread_join(th[i], &ret);
        assert_int_equal((intptr_t)ret, 0);
    }
    assert_int_equal(snap_count(sh.t), 6000);
    table_unref(sh.t);
}

/* ---- large writes analysed on a pool ---- */

typedef struct Digest {
    FtsSource *src;
    uint64_t h;             /* FNV-1a over every key, posting and position */
    size_t nKeys;
    int rc;
} Digest;

static void digest_bytes(Digest *d, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) d->h = (d->h ^ b[i]) * 1099511628211ull;
}

static int digest_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    Digest *d = ctx;
    LpError err;
    digest_bytes(d, key, (size_t)nKey);
    digest_bytes(d, &info->df, sizeof(info->df));
    FtsPostings *p = d->src->vt->xOpen(d->src, key, nKey, 1, &err);
    if (!p) return d->rc = -1;
    uint32_t aPos[4096];
    while (p->vt->xNext(p) != FTS_NO_DOC) {
        digest_bytes(d, &p->doc, sizeof(p->doc));
        digest_bytes(d, &p->tf, sizeof(p->tf));
        if (p->tf > 4096 || p->vt->xPositions(p, aPos, &err) != LP_OK) {
            d->rc = -1;
            break;
        }
        digest_bytes(d, aPos, sizeof(uint32_t) * p->tf);
    }
    p->vt->xClose(p);
    d->nKeys++;
    return d->rc;
}

static uint64_t fts_digest(Table *t, size_t *pnKeys) {
    TableSnap *s = table_snapshot(t);
    Digest d = {table_snap_fts(s), 1469598103934665603ull, 0, 0};
    LpError err;
    assert_int_equal(d.src->vt->xScan(d.src, (const uint8_t *)"", 0, digest_key, &d, &err), 0);
    assert_int_equal(d.rc, 0);
    for (uint32_t i = 0; i < d.src->nDocs; i++) {
        uint32_t n = d.src->vt->xDocLen(d.src, 0, i);
        digest_bytes(&d, &n, sizeof(n));
    }
    table_snapshot_release(s);
    *pnKeys = d.nKeys;
    return d.h;
}

/* A batch with enough text is analysed on the pool in several ranges: the
** index it builds is the serial one, bit for bit, and a bad row fails the
** batch with the serial error. */
static void test_pool_batch(void **state) {
    (void)state;
    static const char *const azWord[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta",
                                         "eta", "theta", "iota", "kappa", "lambda", "mu", "Ünïcode",
                                         "running", "runs", "ran", "東京"};
    enum { N = 400 };
    char *azText[N];
    Value aVal[N][5];
    TableOp aOp[N];
    uint32_t x = 12345;
    for (int i = 0; i < N; i++) {
        char buf[1024];
        size_t n = 0;
        int nWords = 20 + i % 140;
        for (int w = 0; w < nWords && n < sizeof(buf) - 32; w++) {
            x = x * 1103515245u + 12345u;
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", w ? " " : "",
                                  azWord[(x >> 16) % (sizeof(azWord) / sizeof(azWord[0]))]);
        }
        azText[i] = strdup(buf);
        row_values(aVal[i], azText[i], i, i);
        aOp[i] = (TableOp){TOP_INSERT, 0, aVal[i], NULL, NULL, NULL};
    }
    LpError err;
    Tpool *pool = tpool_new(2, &err);
    assert_non_null(pool);
    Table *tSerial = table_new("s", make_schema(), NULL);
    Table *tPool = table_new("p", make_schema(), NULL);
    table_set_pool(tPool, pool);
    TableApplyOut out;
    assert_int_equal(table_apply(tSerial, aOp, N, &out, &err), LP_OK);
    assert_int_equal(table_apply(tPool, aOp, N, &out, &err), LP_OK);
    assert_int_equal(out.nAffected, N);
    size_t nKeysS, nKeysP;
    uint64_t hS = fts_digest(tSerial, &nKeysS), hP = fts_digest(tPool, &nKeysP);
    assert_true(nKeysS >= 10);
    assert_int_equal(nKeysS, nKeysP);
    assert_true(hS == hP);

    /* Invalid UTF-8 in two rows of the second half: the earlier one is
    ** reported, as the serial run reports it, and nothing is added. */
    for (int i = 0; i < N; i++) aOp[i].id = 1000 + i;
    static const char zBad1[] = "good \xC3 bad", zBad2[] = "\xFF";
    aVal[300][0] = value_str(zBad1, (uint32_t)strlen(zBad1));
    aVal[350][0] = value_str(zBad2, 1);
    LpError errS, errP;
    assert_int_equal(table_apply(tSerial, aOp, N, &out, &errS), LP_BADINPUT);
    assert_int_equal(table_apply(tPool, aOp, N, &out, &errP), LP_BADINPUT);
    assert_string_equal(errS.zMsg, errP.zMsg);
    assert_int_equal(errP.pos, 5);
    assert_int_equal(snap_count(tPool), N);
    assert_true(fts_digest(tPool, &nKeysP) == hP);

    table_unref(tSerial);
    table_unref(tPool);
    tpool_free(pool);
    for (int i = 0; i < N; i++) free(azText[i]);
}

static void test_catalog(void **state) {
    (void)state;
    LpError err;
    Catalog *c = catalog_new(&(CatalogConfig){0}, &err);
    assert_non_null(c);
    int bExisted;
    assert_int_equal(catalog_create(c, "b", make_schema(), 0, &bExisted, &err), LP_OK);
    assert_int_equal(catalog_create(c, "a", make_schema(), 0, &bExisted, &err), LP_OK);
    assert_int_equal(catalog_create(c, "a", make_schema(), 0, &bExisted, &err), LP_EXISTS);
    assert_string_equal(err.zMsg, "table 'a' already exists");
    assert_int_equal(catalog_create(c, "a", make_schema(), 1, &bExisted, &err), LP_OK);
    assert_int_equal(bExisted, 1);
    assert_int_equal(catalog_create(c, "9x", make_schema(), 0, &bExisted, &err), LP_BADINPUT);
    assert_int_equal(catalog_create(c, "a-b", make_schema(), 0, &bExisted, &err), LP_BADINPUT);
    char **az;
    int n;
    assert_int_equal(catalog_names(c, &az, &n), LP_OK);
    assert_int_equal(n, 2);
    assert_string_equal(az[0], "a");
    assert_string_equal(az[1], "b");
    catalog_names_free(az, n);
    /* a table dropped while referenced stays usable until released */
    Table *t = catalog_get(c, "a");
    assert_non_null(t);
    assert_int_equal(catalog_drop(c, "a", 0, &err), LP_OK);
    assert_null(catalog_get(c, "a"));
    assert_int_equal(snap_count(t), 0);
    table_unref(t);
    assert_int_equal(catalog_drop(c, "a", 0, &err), LP_NOTFOUND);
    assert_int_equal(catalog_drop(c, "a", 1, &err), LP_OK);
    catalog_free(c);
}

/* value_date_math: each form against its value worked out by hand, and
** the errors with their offsets. */
static void test_date_math(void **state) {
    (void)state;
    const int64_t now = 1488803430; /* 2017-03-06 12:30:30, a Monday */
    static const struct {
        const char *z;
        int64_t t;
    } aOk[] = {
        {"now", 1488803430},
        {"now/d", 1488758400},                     /* 2017-03-06 */
        {"now-1d/d", 1488672000},                  /* 2017-03-05 */
        {"now+4h", 1488803430 + 4 * 3600},
        {"now-90s/m", 1488803340},                 /* 12:29:00 */
        {"now/w", 1488758400},                     /* the Monday itself */
        {"now-1d/w", 1488153600},                  /* Sunday: the Monday before, 2017-02-27 */
        {"now/M", 1488326400},                     /* 2017-03-01 */
        {"now/y", 1483228800},                     /* 2017-01-01 */
        {"2017||", 1483228800},
        {"2017-03||", 1488326400},
        {"2017-03-05||", 1488672000},
        {"2017-03-05 10:20||", 1488672000 + 10 * 3600 + 20 * 60},
        {"2017-03-05T10:20:30||", 1488672000 + 10 * 3600 + 20 * 60 + 30},
        {"2017||+2M/M", 1488326400},
        {"2016-12-31||+2M", 1488240000},           /* 2017-02-28: February has no 31st */
        {"2016-02-29||+1y", 1488240000},           /* 2017-02-28 */
        {"2016-02-29||+4y", 1582934400},           /* 2020-02-29 */
        {"2017-01-31||-2M", 1480464000},           /* 2016-11-30 */
        {"2017-05||-1d+36h/h", 1493640000},        /* 2017-05-01 12:00 */
        {"1970||-1M", -31 * 86400},                /* 1969-12-01 */
        {"1970-01-01||-1s/d", -86400},             /* 1969-12-31 */
        {"2017||+1H", 1483228800 + 3600},
    };
    for (size_t i = 0; i < sizeof(aOk) / sizeof(aOk[0]); i++) {
        int64_t t = 0;
        int at = -1;
        const char *zWhy = value_date_math(aOk[i].z, now, &t, &at);
        if (zWhy) fail_msg("'%s': %s at %d", aOk[i].z, zWhy, at);
        if (t != aOk[i].t) fail_msg("'%s': %lld, want %lld", aOk[i].z, (long long)t, (long long)aOk[i].t);
    }
    static const struct {
        const char *z;
        int at;
        const char *zWhy;
    } aBad[] = {
        {"yesterday", 0, "expected now or a date"},
        {"2017", 0, "expected now or a date"},
        {"17||", 0, "expected a date as YYYY"},
        {"2017-3||", 0, "expected a date as YYYY"},
        {"-2017||", 0, "expected a date as YYYY"},
        {"2017-02-29||", 0, "expected a date as YYYY"},
        {"2017-03-05 10||", 0, "expected a date as YYYY"},
        {"2017-03-05 24:00||", 0, "expected a date as YYYY"},
        {"now+1q", 5, "expected a unit"},
        {"now+1", 5, "expected a unit"},
        {"now-M", 4, "expected a whole number"},
        {"now+1000001d", 4, "expected a whole number"},
        {"now 1d", 3, "expected +N, -N or /"},
        {"now/", 4, "expected a unit"},
        {"2017||+1000000y", 6, "the date is out of range"},
        {"2017||+100000y+1000000y", 14, "the date is out of range"},
    };
    for (size_t i = 0; i < sizeof(aBad) / sizeof(aBad[0]); i++) {
        int64_t t = 0;
        int at = -1;
        const char *zWhy = value_date_math(aBad[i].z, now, &t, &at);
        if (!zWhy || !strstr(zWhy, aBad[i].zWhy) || at != aBad[i].at) {
            fail_msg("'%s': %s at %d, want %s at %d", aBad[i].z, zWhy ? zWhy : "(none)", at, aBad[i].zWhy, aBad[i].at);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coerce),
        cmocka_unit_test(test_coerce_mva),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_schema_sql),
        cmocka_unit_test(test_apply_basic),
        cmocka_unit_test(test_sorted_and_compact),
        cmocka_unit_test(test_concurrent_batches),
        cmocka_unit_test(test_pool_batch),
        cmocka_unit_test(test_catalog),
        cmocka_unit_test(test_date_math),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
