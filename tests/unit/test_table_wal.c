/* Unit tests for src/table/wal.c, manifest.c and the table's use of the
** log: round trips, torn tails, damage in the middle, a full disk, group
** commit, rotation, and a table closed and opened again. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "table/catalog.h"
#include "table/manifest.h"
#include "table/table.h"
#include "table/wal.h"
#include "util/log.h"

static char g_dir[256];

static int setup(void **state) {
    (void)state;
    snprintf(g_dir, sizeof(g_dir), "/tmp/loupe-test-wal-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    log_set_level(LOG_LEVEL_ERROR);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char zCmd[512];
    snprintf(zCmd, sizeof(zCmd), "rm -rf '%s'", g_dir);
    return system(zCmd) == 0 ? 0 : -1;
}

static void sub(char *z, size_t n, const char *zName) {
    snprintf(z, n, "%s/%s", g_dir, zName);
}

/* Records collected by replay. */
typedef struct Got {
    int n;
    uint64_t aLsn[4096];
    size_t aLen[4096];
    uint32_t aFirst[4096]; /* first 4 bytes of each payload */
} Got;

static int collect(void *ctx, uint64_t lsn, const uint8_t *p, size_t n, LpError *err) {
    (void)err;
    Got *g = ctx;
    if (g->n < 4096) {
        g->aLsn[g->n] = lsn;
        g->aLen[g->n] = n;
        memcpy(&g->aFirst[g->n], p, 4);
        g->n++;
    }
    return LP_OK;
}

/* Appends record i: 4-byte i then (i % 97) filler bytes. */
static void append_n(Wal *w, int from, int to) {
    uint8_t buf[128];
    for (int i = from; i < to; i++) {
        uint32_t v = (uint32_t)i;
        memcpy(buf, &v, 4);
        memset(buf + 4, 'a' + i % 26, (size_t)(i % 97));
        uint64_t lsn = 0;
        LpError err;
        assert_int_equal(wal_append(w, buf, 4 + (size_t)(i % 97), &lsn, &err), LP_OK);
        assert_int_equal(lsn, (uint64_t)i + 1);
        assert_int_equal(wal_commit(w, lsn, &err), LP_OK);
    }
}

static off_t file_size(const char *zPath) {
    struct stat st;
    return stat(zPath, &st) == 0 ? st.st_size : -1;
}

static void test_round_trip_and_rotate(void **state) {
    (void)state;
    char zDir[300];
    sub(zDir, sizeof(zDir), "rt");
    Wal *w = NULL;
    LpError err;
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, NULL, NULL, &w, &err), LP_OK);
    append_n(w, 0, 100);
    assert_int_equal(wal_rotate(w, 0, &err), LP_OK);
    append_n(w, 100, 250);
    assert_int_equal(wal_rotate(w, 0, &err), LP_OK);
    append_n(w, 250, 300);
    assert_int_equal(wal_next_lsn(w), 301);
    wal_close(w);

    Got *g = calloc(1, sizeof(Got));
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, collect, g, &w, &err), LP_OK);
    assert_int_equal(g->n, 300);
    for (int i = 0; i < 300; i++) {
        assert_int_equal(g->aLsn[i], (uint64_t)i + 1);
        assert_int_equal(g->aLen[i], 4 + (size_t)(i % 97));
        assert_int_equal(g->aFirst[i], (uint32_t)i);
    }
    /* Only records from LSN 120 on. */
    wal_close(w);
    memset(g, 0, sizeof(*g));
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 120, collect, g, &w, &err), LP_OK);
    assert_int_equal(g->n, 181);
    assert_int_equal(g->aLsn[0], 120);
    /* The first file (LSNs 1..100) is wholly before 120 and goes; the
    ** second (101..250) holds 120 and stays. */
    assert_int_equal(wal_drop_before(w, 120, &err), LP_OK);
    char zPath[400];
    snprintf(zPath, sizeof(zPath), "%s/%016llx.wal", zDir, 1ull);
    assert_int_equal(file_size(zPath), -1);
    snprintf(zPath, sizeof(zPath), "%s/%016llx.wal", zDir, 101ull);
    assert_true(file_size(zPath) > 0);
    append_n(w, 300, 310);
    wal_close(w);
    memset(g, 0, sizeof(*g));
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, collect, g, &w, &err), LP_OK);
    assert_int_equal(g->n, 210);
    assert_int_equal(g->aLsn[0], 101);
    assert_int_equal(g->aLsn[209], 310);
    wal_close(w);
    free(g);
}

/* wal_rotate below its size keeps the file but still syncs it, under a
** policy that otherwise would not; replay then skips the covered records
** at its start, and appends continue in it. */
static void test_rotate_keeps_small_file(void **state) {
    (void)state;
    char zDir[300], zPath[400];
    sub(zDir, sizeof(zDir), "keep");
    Wal *w = NULL;
    LpError err;
    assert_int_equal(wal_open(zDir, WAL_SYNC_NONE, 0, NULL, NULL, &w, &err), LP_OK);
    append_n(w, 0, 10);
    uint64_t nSync = wal_sync_count(w);
    assert_int_equal(wal_rotate(w, 1 << 20, &err), LP_OK);
    assert_int_equal(wal_sync_count(w), nSync + 1);
    assert_int_equal(wal_rotate(w, 1 << 20, &err), LP_OK); /* nothing new: no sync */
    assert_int_equal(wal_sync_count(w), nSync + 1);
    assert_int_equal(wal_next_lsn(w), 11);
    append_n(w, 10, 15);
    uint64_t nBytes = wal_bytes(w);
    /* Below minBytes by one: kept; at it: replaced. */
    assert_int_equal(wal_rotate(w, nBytes + 1, &err), LP_OK);
    snprintf(zPath, sizeof(zPath), "%s/%016llx.wal", zDir, 16ull);
    assert_int_equal(file_size(zPath), -1);
    assert_int_equal(wal_drop_before(w, 16, &err), LP_OK); /* the current file stays */
    snprintf(zPath, sizeof(zPath), "%s/%016llx.wal", zDir, 1ull);
    assert_int_equal(file_size(zPath), (off_t)nBytes);
    append_n(w, 15, 20);
    wal_close(w);

    Got *g = calloc(1, sizeof(Got));
    assert_int_equal(wal_open(zDir, WAL_SYNC_NONE, 11, collect, g, &w, &err), LP_OK);
    assert_int_equal(g->n, 10);
    assert_int_equal(g->aLsn[0], 11);
    assert_int_equal(g->aLsn[9], 20);
    assert_int_equal(wal_next_lsn(w), 21);
    nBytes = wal_bytes(w);
    assert_int_equal(wal_rotate(w, nBytes, &err), LP_OK);
    snprintf(zPath, sizeof(zPath), "%s/%016llx.wal", zDir, 21ull);
    assert_true(file_size(zPath) > 0);
    assert_int_equal(wal_drop_before(w, 21, &err), LP_OK);
    snprintf(zPath, sizeof(zPath), "%s/%016llx.wal", zDir, 1ull);
    assert_int_equal(file_size(zPath), -1);
    wal_close(w);
    free(g);
}

static void test_torn_tail(void **state) {
    (void)state;
    char zDir[300], zPath[400];
    sub(zDir, sizeof(zDir), "torn");
    snprintf(zPath, sizeof(zPath), "%s/%016llx.wal", zDir, 1ull);
    Wal *w = NULL;
    LpError err;
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, NULL, NULL, &w, &err), LP_OK);
    append_n(w, 0, 10);
    wal_close(w);
    off_t full = file_size(zPath);
    Got *g = calloc(1, sizeof(Got));
    /* Cut the last record (9 + 16 header + 4 bytes) in the middle, at
    ** every length: each leaves the first 9 records. */
    size_t nLast = 16 + 4 + 9;
    for (size_t cut = 1; cut < nLast; cut++) {
        assert_int_equal(truncate(zPath, full - (off_t)cut), 0);
        memset(g, 0, sizeof(*g));
        assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, collect, g, &w, &err), LP_OK);
        assert_int_equal(g->n, 9);
        assert_int_equal(file_size(zPath), full - (off_t)nLast); /* cut back */
        append_n(w, 9, 10);                                     /* LSN 10 again */
        wal_close(w);
        assert_int_equal(file_size(zPath), full);
    }
    /* Zeros where the last record should be (a file extended, data never
    ** written). */
    assert_int_equal(truncate(zPath, full - (off_t)nLast), 0);
    assert_int_equal(truncate(zPath, full + 4096), 0);
    memset(g, 0, sizeof(*g));
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, collect, g, &w, &err), LP_OK);
    assert_int_equal(g->n, 9);
    assert_int_equal(wal_next_lsn(w), 10);
    wal_close(w);
    /* Garbage in the last record's payload: checksum fails, nothing after. */
    w = NULL;
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, NULL, NULL, &w, &err), LP_OK);
    append_n(w, 9, 10);
    wal_close(w);
    int fd = open(zPath, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "XY", 2, full - 3), 2);
    close(fd);
    memset(g, 0, sizeof(*g));
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, collect, g, &w, &err), LP_OK);
    assert_int_equal(g->n, 9);
    wal_close(w);
    free(g);
}

static void test_corrupt_middle(void **state) {
    (void)state;
    char zDir[300], zPath[400];
    sub(zDir, sizeof(zDir), "mid");
    snprintf(zPath, sizeof(zPath), "%s/%016llx.wal", zDir, 1ull);
    Wal *w = NULL;
    LpError err;
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, NULL, NULL, &w, &err), LP_OK);
    append_n(w, 0, 10);
    wal_close(w);
    off_t full = file_size(zPath);
    /* Record 3 (LSN 3, i=2): header 32 + records 0 (16+4) and 1 (16+5). */
    off_t off3 = 32 + (16 + 4) + (16 + 5);
    int fd = open(zPath, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "!", 1, off3 + 16 + 2), 1); /* a payload byte */
    close(fd);
    Got *g = calloc(1, sizeof(Got));
    lp_err_clear(&err);
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, collect, g, &w, &err), LP_CORRUPT);
    assert_null(w);
    assert_non_null(strstr(err.zMsg, zPath));
    char zOff[64];
    snprintf(zOff, sizeof(zOff), "offset %lld", (long long)off3);
    assert_non_null(strstr(err.zMsg, zOff));
    assert_int_equal(err.pos, off3);
    assert_int_equal(file_size(zPath), full); /* nothing cut */
    /* A damaged header of an older file is damage too. */
    free(g);
}

static void test_full_disk(void **state) {
    (void)state;
    char zDir[300];
    sub(zDir, sizeof(zDir), "full");
    Wal *w = NULL;
    LpError err;
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, NULL, NULL, &w, &err), LP_OK);
    append_n(w, 0, 5);
    /* The file-size limit makes writes past it fail (EFBIG), as a full
    ** disk would (ENOSPC): a record that does not fit is cut back. */
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = 4096;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    static uint8_t big[8192];
    memset(big, 'z', sizeof(big));
    uint64_t lsn = 0;
    lp_err_clear(&err);
    assert_int_equal(wal_append(w, big, sizeof(big), &lsn, &err), LP_IOERR);
    assert_non_null(strstr(err.zMsg, "cannot write to WAL file"));
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    append_n(w, 5, 8); /* LSN 6..8: the failed append used no LSN */
    wal_close(w);
    Got *g = calloc(1, sizeof(Got));
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, collect, g, &w, &err), LP_OK);
    assert_int_equal(g->n, 8);
    assert_int_equal(g->aFirst[7], 7);
    wal_close(w);
    free(g);
}

typedef struct Writer {
    Wal *w;
    pthread_mutex_t *mu; /* serialises appends, as the table lock does */
    int n;
} Writer;

static void *writer(void *arg) {
    Writer *wr = arg;
    for (int i = 0; i < wr->n; i++) {
        uint64_t lsn;
        LpError err;
        pthread_mutex_lock(wr->mu);
        int rc = wal_append(wr->w, "payload!", 8, &lsn, &err);
        pthread_mutex_unlock(wr->mu);
        if (rc != LP_OK || wal_commit(wr->w, lsn, &err) != LP_OK) abort();
    }
    return NULL;
}

static void test_group_commit(void **state) {
    (void)state;
    char zDir[300];
    sub(zDir, sizeof(zDir), "group");
    Wal *w = NULL;
    LpError err;
    assert_int_equal(wal_open(zDir, WAL_SYNC_COMMIT, 0, NULL, NULL, &w, &err), LP_OK);
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    enum { NT = 8, NPER = 100 };
    pthread_t at[NT];
    Writer wr = {w, &mu, NPER};
    uint64_t nSync0 = wal_sync_count(w);
    for (int i = 0; i < NT; i++) pthread_create(&at[i], NULL, writer, &wr);
    for (int i = 0; i < NT; i++) pthread_join(at[i], NULL);
    uint64_t nSync = wal_sync_count(w) - nSync0;
    /* Every commit was durable; syncs were shared: never more than one per
    ** commit, and with 8 writers waiting on each other, fewer. */
    assert_true(nSync >= 1 && nSync <= NT * NPER);
    print_message("group commit: %d commits, %llu fdatasync calls\n", NT * NPER,
                  (unsigned long long)nSync);
    assert_int_equal(wal_next_lsn(w), NT * NPER + 1);
    wal_close(w);
    /* Policies "1s" and "none" do not sync per commit. */
    assert_int_equal(wal_open(zDir, WAL_SYNC_NONE, 0, NULL, NULL, &w, &err), LP_OK);
    nSync0 = wal_sync_count(w);
    append_n(w, NT * NPER, NT * NPER + 50);
    assert_int_equal(wal_sync_count(w), nSync0);
    wal_close(w);
    assert_int_equal(wal_sync_parse("commit"), WAL_SYNC_COMMIT);
    assert_int_equal(wal_sync_parse("1"), WAL_SYNC_COMMIT);
    assert_int_equal(wal_sync_parse("1S"), WAL_SYNC_1S);
    assert_int_equal(wal_sync_parse("none"), WAL_SYNC_NONE);
    assert_int_equal(wal_sync_parse("sometimes"), -1);
}

/* ------------------------------------------------------------------ */
/* Tables                                                              */

static Schema *make_schema(void) {
    Schema s = {0};
    ColumnSchema aCol[4] = {
        {(char *)"title", COL_TEXT, COLF_INDEXED | COLF_STORED, {0}},
        {(char *)"qty", COL_INT, 0, {0}},
        {(char *)"v", COL_VECTOR, 0, {0}},
        {(char *)"tag", COL_STRING, 0, {0}},
    };
    aCol[2].vec.nDims = 2;
    aCol[2].vec.bHnsw = 1;
    s.aCol = aCol;
    s.nCol = 4;
    TableOpt opt = {(char *)"morphology", (char *)"stem_en"};
    s.aOpt = &opt;
    s.nOpt = 1;
    return schema_dup(&s);
}

static int insert(Table *t, int64_t id, const char *zTitle, int64_t qty, float x) {
    float v[2] = {x, -x};
    Value a[4] = {value_str(zTitle, (uint32_t)strlen(zTitle)), value_int(qty), {0}, value_null()};
    a[2].kind = VAL_VEC;
    a[2].u.v.a = v;
    a[2].u.v.n = 2;
    TableOp op = {TOP_INSERT, id, a, NULL, NULL, NULL};
    LpError err;
    return table_apply(t, &op, 1, NULL, &err);
}

/* "id:title:qty:v0;" for every live row in id order. */
static char *dump(Table *t) {
    TableSnap *s = table_snapshot(t);
    const Schema *sc = table_schema(t);
    size_t cap = 1 << 20;
    char *z = calloc(1, cap), *p = z;
    for (int64_t id = 1; id < 2000; id++) {
        const MemRow *r = table_snap_get(s, id);
        if (!r) continue;
        Value title = row_get(sc, r, 0), qty = row_get(sc, r, 1), v = row_get(sc, r, 2);
        p += snprintf(p, cap - (size_t)(p - z), "%lld:%.*s:%lld:%g;", (long long)id,
                      (int)title.u.s.n, title.u.s.z, (long long)qty.u.i,
                      v.kind == VAL_VEC ? (double)v.u.v.a[0] : -1.0);
    }
    table_snapshot_release(s);
    return z;
}

static void test_table_reopen(void **state) {
    (void)state;
    char zDir[300];
    sub(zDir, sizeof(zDir), "tbl");
    LpError err;
    Table *t = table_new("t", make_schema(), &err);
    assert_non_null(t);
    assert_int_equal(table_open_wal(t, zDir, WAL_SYNC_COMMIT, &err), LP_OK);
    for (int i = 1; i <= 300; i++) {
        char z[64];
        snprintf(z, sizeof(z), "document number %d", i);
        assert_int_equal(insert(t, i % 7 == 0 ? 0 : i, z, i, (float)i), LP_OK);
    }
    assert_int_equal(insert(t, 5, "dup", 1, 1), LP_EXISTS); /* not logged */
    /* A batch: update, delete, replace, insert. */
    Value aU[4] = {value_null(), value_int(-1), value_null(), value_str("x", 1)};
    uint8_t aSet[4] = {0, 1, 0, 1};
    float v[2] = {9, 9};
    Value aR[4] = {value_str("replaced words", 14), value_int(42), {0}, value_null()};
    aR[2].kind = VAL_VEC;
    aR[2].u.v.a = v;
    aR[2].u.v.n = 2;
    TableOp aOp[4] = {
        {TOP_UPDATE, 10, aU, aSet, NULL, NULL},
        {TOP_DELETE, 11, NULL, NULL, NULL, NULL},
        {TOP_REPLACE, 12, aR, NULL, NULL, NULL},
        {TOP_UPDATE, 13, aU, aSet, NULL, NULL},
    };
    assert_int_equal(table_apply(t, aOp, 4, NULL, &err), LP_OK);
    char *zBefore = dump(t);
    uint64_t nWal = table_wal_bytes(t);
    assert_true(nWal > 300 * 20);
    table_unref(t);

    t = table_new("t", make_schema(), &err);
    assert_int_equal(table_open_wal(t, zDir, WAL_SYNC_COMMIT, &err), LP_OK);
    char *zAfter = dump(t);
    assert_string_equal(zBefore, zAfter);
    /* The automatic ids continue after the largest ever held. */
    TableOp op = {TOP_INSERT, 0, aR, NULL, NULL, NULL};
    TableApplyOut out;
    assert_int_equal(table_apply(t, &op, 1, &out, &err), LP_OK);
    assert_int_equal(out.iFirstAutoId, 301);
    /* TRUNCATE is logged too. */
    assert_int_equal(table_truncate(t, &err), LP_OK);
    assert_int_equal(insert(t, 0, "after truncate", 1, 1), LP_OK);
    table_unref(t);
    t = table_new("t", make_schema(), &err);
    assert_int_equal(table_open_wal(t, zDir, WAL_SYNC_COMMIT, &err), LP_OK);
    char *zT = dump(t);
    assert_string_equal(zT, "1:after truncate:1:1;");
    table_unref(t);
    free(zBefore);
    free(zAfter);
    free(zT);
}

static void test_catalog_persists(void **state) {
    (void)state;
    char zData[300];
    sub(zData, sizeof(zData), "data");
    mkdir(zData, 0755);
    LpError err;
    Catalog *c = catalog_new(&(CatalogConfig){.zDataDir = zData}, &err);
    assert_non_null(c);
    assert_int_equal(catalog_create(c, "alpha", make_schema(), 0, NULL, &err), LP_OK);
    assert_int_equal(catalog_create(c, "beta", make_schema(), 0, NULL, &err), LP_OK);
    assert_int_equal(catalog_create(c, "gone", make_schema(), 0, NULL, &err), LP_OK);
    Table *t = catalog_get(c, "alpha");
    assert_int_equal(insert(t, 7, "seven", 7, 7), LP_OK);
    table_unref(t);
    assert_int_equal(catalog_drop(c, "gone", 0, &err), LP_OK);
    catalog_free(c);

    /* Damage beta's log in the middle. */
    char zPath[400];
    snprintf(zPath, sizeof(zPath), "%s/tables/beta", zData);
    c = catalog_new(&(CatalogConfig){.zDataDir = zData}, &err);
    t = catalog_get(c, "beta");
    assert_int_equal(insert(t, 1, "one", 1, 1), LP_OK);
    assert_int_equal(insert(t, 2, "two", 2, 2), LP_OK);
    table_unref(t);
    catalog_free(c);
    snprintf(zPath, sizeof(zPath), "%s/tables/beta/wal/%016llx.wal", zData, 1ull);
    int fd = open(zPath, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "\xff", 1, 32 + 20), 1);
    close(fd);

    c = catalog_new(&(CatalogConfig){.zDataDir = zData}, &err);
    assert_non_null(c);
    char **az;
    int n;
    assert_int_equal(catalog_names(c, &az, &n), LP_OK);
    assert_int_equal(n, 2); /* alpha, beta (broken but listed); not gone */
    assert_string_equal(az[0], "alpha");
    assert_string_equal(az[1], "beta");
    catalog_names_free(az, n);
    t = catalog_get(c, "alpha");
    assert_non_null(t);
    char *z = dump(t);
    assert_string_equal(z, "7:seven:7:7;");
    free(z);
    table_unref(t);
    assert_null(catalog_get(c, "beta"));
    lp_err_clear(&err);
    assert_int_equal(catalog_open_error(c, "beta", &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "damaged at offset"));
    assert_int_equal(catalog_create(c, "beta", make_schema(), 0, NULL, &err), LP_EXISTS);
    assert_int_equal(catalog_drop(c, "beta", 0, &err), LP_OK);
    assert_int_equal(catalog_create(c, "beta", make_schema(), 0, NULL, &err), LP_OK);
    catalog_free(c);

    /* A damaged manifest. */
    snprintf(zPath, sizeof(zPath), "%s/tables/alpha/manifest", zData);
    fd = open(zPath, O_RDWR);
    assert_int_equal(pwrite(fd, "X", 1, 5), 1);
    close(fd);
    c = catalog_new(&(CatalogConfig){.zDataDir = zData}, &err);
    lp_err_clear(&err);
    assert_int_equal(catalog_open_error(c, "alpha", &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "checksum"));
    t = catalog_get(c, "beta");
    assert_non_null(t);
    table_unref(t);
    catalog_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_and_rotate),
        cmocka_unit_test(test_rotate_keeps_small_file),
        cmocka_unit_test(test_torn_tail),
        cmocka_unit_test(test_corrupt_middle),
        cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_group_commit),
        cmocka_unit_test(test_table_reopen),
        cmocka_unit_test(test_catalog_persists),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
