/* Unit tests for sealed table segments: the rows file and tombstone file
** (src/table/rowfile.c) round trips and damage, and a table flushed into
** segments (src/table/flush.c) through the catalog: the same answers
** before and after FLUSH, after changes to sealed rows, and after the
** catalog is closed and opened again. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "table/catalog.h"
#include "table/idfence.h"
#include "table/rowfile.h"
#include "table/table.h"
#include "table/table_int.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/log.h"

static char g_dir[256];

static int setup(void **state) {
    (void)state;
    snprintf(g_dir, sizeof(g_dir), "/tmp/loupe-test-seg-XXXXXX");
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

/* ------------------------------------------------------------------ */
/* Rows file                                                           */

/* Test blocks: i64 id, u32 size, u32 0, then size-16 bytes of (id & 0xff). */
static int check_block(void *ctx, const RowFile *f, const void *p, size_t n, int64_t *pId) {
    (void)ctx;
    (void)f;
    const uint8_t *b = p;
    int64_t id;
    uint32_t nByte;
    memcpy(&id, b, 8);
    memcpy(&nByte, b + 8, 4);
    if (nByte != n || id <= 0) return 0;
    for (size_t i = 16; i < n; i++) {
        if (b[i] != (uint8_t)id) return 0;
    }
    *pId = id;
    return 1;
}

static void *make_block(int64_t id, uint32_t n) {
    uint8_t *b = malloc(n);
    memcpy(b, &id, 8);
    memcpy(b + 8, &n, 4);
    memset(b + 12, 0, 4);
    memset(b + 16, (uint8_t)id, n - 16);
    return b;
}

/* Writes a rows file through the writer: nBlk stored blocks apBlk/anBlk,
** then the rows. */
static int write_rows(const char *zPath, uint32_t nCol, uint32_t nOrd, void *const *ap,
                      const uint32_t *an, const RowFileMap *aMap, int nMap, void *const *apBlk,
                      const size_t *anBlk, int nBlk, LpError *err) {
    RowFileWriter *w;
    char zText[1100];
    snprintf(zText, sizeof(zText), "%s.text", zPath);
    int rc = rowfile_writer_new(zPath, zText, nCol, nOrd, &w, err);
    for (int b = 0; rc == LP_OK && b < nBlk; b++) {
        assert_int_equal(rowfile_writer_nblock(w), b);
        rc = rowfile_writer_block(w, apBlk[b], anBlk[b], err);
    }
    for (uint32_t i = 0; rc == LP_OK && i < nOrd; i++) {
        if (ap[i]) rc = rowfile_writer_row(w, i, ap[i], an[i], err);
    }
    return rc == LP_OK ? rowfile_writer_finish(w, aMap, nMap, err) : rc;
}

static int open_rows(const char *zPath, RowFile **pp, LpError *err) {
    char zText[1100];
    snprintf(zText, sizeof(zText), "%s.text", zPath);
    return rowfile_open(zPath, zText, check_block, NULL, pp, err);
}

static uint8_t *slurp(const char *zPath, size_t *pn) {
    FILE *f = fopen(zPath, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *a = malloc((size_t)n + 8);
    assert_int_equal(fread(a, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *pn = (size_t)n;
    return a;
}

static void test_rowfile_round_trip(void **state) {
    (void)state;
    enum { N = 500 };
    void *ap[N];
    uint32_t an[N];
    uint32_t aNode[N + 7];
    /* Ids out of order, some ordinals without a row, odd sizes. */
    for (int i = 0; i < N; i++) {
        int64_t id = (int64_t)((i * 7919) % 100003) + 1;
        an[i] = 16 + (uint32_t)(i % 29);
        ap[i] = i % 11 == 3 ? NULL : make_block(id, an[i]);
    }
    for (int i = 0; i < N + 7; i++) aNode[i] = i % 5 == 0 ? UINT32_MAX : (uint32_t)(i % N);
    RowFileMap map = {3, N + 7, aNode};
    /* Stored blocks of words (compressible) and of noise, one empty. */
    enum { NBLK = 9 };
    void *apBlk[NBLK];
    size_t anBlk[NBLK];
    uint32_t seed = 7;
    for (int b = 0; b < NBLK; b++) {
        anBlk[b] = b == 4 ? 0 : (size_t)(b * 4099 + 13);
        char *z = malloc(anBlk[b] + 1);
        for (size_t i = 0; i < anBlk[b]; i++) {
            seed = seed * 1103515245u + 12345u;
            z[i] = b % 2 ? (char)(seed >> 16) : "the quick brown fox "[(seed >> 16) % 20];
        }
        apBlk[b] = z;
    }
    char zPath[512];
    snprintf(zPath, sizeof(zPath), "%s/seg-1.rows", g_dir);
    LpError err;
    lp_err_clear(&err);
    assert_int_equal(write_rows(zPath, 4, N, ap, an, &map, 1, apBlk, anBlk, NBLK, &err), LP_OK);
    RowFile *f = NULL;
    assert_int_equal(open_rows(zPath, &f, &err), LP_OK);
    assert_int_equal(rowfile_nord(f), N);
    assert_int_equal(rowfile_ncol(f), 4);
    assert_int_equal(rowfile_nblock(f), NBLK);
    void *dctx = rowfile_dctx_new();
    for (int b = 0; b < NBLK; b++) {
        assert_int_equal(rowfile_block_raw(f, (uint32_t)b), anBlk[b]);
        char *z = malloc(anBlk[b] + 1);
        assert_int_equal(rowfile_block_read(f, (uint32_t)b, z, b % 2 ? NULL : dctx, &err), LP_OK);
        assert_memory_equal(z, apBlk[b], anBlk[b]);
        free(z);
    }
    /* The shared cache: a second pin of a block is a hit on the same
    ** copy; closing the file drops its blocks. */
    uint64_t nHit0, nMiss0, nHit1, nMiss1;
    size_t nByte0, nByte1;
    rowfile_cache_stats(&nHit0, &nMiss0, &nByte0);
    const uint8_t *p1 = rowfile_block_pin(f, 2, &dctx, &err);
    const uint8_t *p2 = rowfile_block_pin(f, 2, &dctx, &err);
    assert_non_null(p1);
    assert_ptr_equal(p1, p2);
    assert_memory_equal(p1, apBlk[2], anBlk[2]);
    rowfile_cache_stats(&nHit1, &nMiss1, &nByte1);
    assert_int_equal(nHit1 - nHit0, 1);
    assert_int_equal(nMiss1 - nMiss0, 1);
    assert_int_equal(nByte1 - nByte0, anBlk[2]);
    rowfile_block_unpin(f, 2);
    rowfile_block_unpin(f, 2);
    rowfile_dctx_free(dctx);
    assert_int_equal(rowfile_block_raw(f, NBLK), 0);
    assert_int_equal(rowfile_block_read(f, NBLK, NULL, NULL, &err), LP_INTERNAL);
    /* Words compress: a file of the word blocks alone is less than half
    ** their size. */
    {
        char zWords[600];
        snprintf(zWords, sizeof(zWords), "%s.words", zPath);
        void *apW[NBLK];
        size_t anW[NBLK], nIn = 0;
        int nW = 0;
        for (int b = 0; b < NBLK; b += 2) {
            apW[nW] = apBlk[b];
            anW[nW++] = anBlk[b];
            nIn += anBlk[b];
        }
        assert_int_equal(write_rows(zWords, 1, 0, NULL, NULL, NULL, 0, apW, anW, nW, &err), LP_OK);
        RowFile *g;
        assert_int_equal(open_rows(zWords, &g, &err), LP_OK);
        assert_true(rowfile_size(g) < nIn / 2);
        rowfile_close(g);
        unlink(zWords);
    }
    uint32_t nRow = 0;
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < N; i++) {
        const void *b = rowfile_row(f, (uint32_t)i);
        if (!ap[i]) {
            assert_null(b);
            continue;
        }
        nRow++;
        assert_non_null(b);
        assert_int_equal((uintptr_t)b % 8, 0);
        assert_memory_equal(b, ap[i], an[i]);
        int64_t id;
        memcpy(&id, ap[i], 8);
        assert_int_equal(rowfile_find(f, id), i);
        if (id < lo) lo = id;
        if (id > hi) hi = id;
    }
    assert_int_equal(rowfile_nrow(f), nRow);
    assert_int_equal(rowfile_min_id(f), lo);
    assert_int_equal(rowfile_max_id(f), hi);
    assert_int_equal(rowfile_find(f, 100004), -1);
    assert_int_equal(rowfile_find(f, 0), -1);
    /* Every id not in the file is not found (the id filter only skips
    ** searches; a false positive still searches). */
    uint8_t *aHas = calloc(100005, 1);
    for (int i = 0; i < N; i++) {
        if (ap[i]) aHas[(i * 7919) % 100003 + 1] = 1;
    }
    for (int64_t id = 1; id <= 100004; id++) {
        if (!aHas[id]) assert_int_equal(rowfile_find(f, id), -1);
    }
    free(aHas);
    assert_false(rowfile_sorted(f));
    uint32_t nNode;
    const uint32_t *a = rowfile_map(f, 3, &nNode);
    assert_non_null(a);
    assert_int_equal(nNode, N + 7);
    assert_memory_equal(a, aNode, sizeof(aNode));
    assert_null(rowfile_map(f, 2, &nNode));
    rowfile_close(f);
    rowfile_cache_stats(&nHit1, &nMiss1, &nByte1);
    assert_int_equal(nByte1, nByte0);

    /* Every flipped byte in the header and footer, and a sample in the
    ** sections, of either file is LP_CORRUPT naming it; so is every
    ** truncation, and a rows file without its text file. */
    size_t n, nT;
    char zText[1100];
    snprintf(zText, sizeof(zText), "%s.text", zPath);
    uint8_t *img = slurp(zPath, &n), *txt = slurp(zText, &nT);
    for (size_t i = 0; i < n; i += (i < 64 || i + 64 > n) ? 1 : 97) {
        img[i] ^= 0x21;
        lp_err_clear(&err);
        int rc = rowfile_open_mem(img, n, txt, nT, "x.rows", 0, check_block, NULL, &f, &err);
        assert_int_equal(rc, LP_CORRUPT);
        assert_non_null(strstr(err.zMsg, "x.rows"));
        img[i] ^= 0x21;
    }
    for (size_t i = 0; i < nT; i += (i < 64 || i + 64 > nT) ? 1 : 97) {
        txt[i] ^= 0x21;
        lp_err_clear(&err);
        int rc = rowfile_open_mem(img, n, txt, nT, "x.rows", 0, check_block, NULL, &f, &err);
        assert_int_equal(rc, LP_CORRUPT);
        assert_non_null(strstr(err.zMsg, "x.rows (text)"));
        txt[i] ^= 0x21;
    }
    for (size_t k = 0; k < n; k += 131) {
        assert_int_equal(rowfile_open_mem(img, k, txt, nT, "x.rows", 0, check_block, NULL, &f, &err),
                         LP_CORRUPT);
    }
    for (size_t k = 0; k < nT; k += 131) {
        assert_int_equal(rowfile_open_mem(img, n, txt, k, "x.rows", 0, check_block, NULL, &f, &err),
                         LP_CORRUPT);
    }
    assert_int_equal(rowfile_open_mem(img, n, NULL, 0, "x.rows", 0, check_block, NULL, &f, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "text file is missing"));
    /* Without checksums the structure is still checked: a row offset
    ** pointing elsewhere, an id index out of order. */
    assert_int_equal(rowfile_open_mem(img, n, txt, nT, "x.rows", ROWFILE_NOCHECKSUM, check_block, NULL, &f, &err),
                     LP_OK);
    rowfile_close(f);
    free(img);
    free(txt);
    for (int i = 0; i < N; i++) free(ap[i]);
    for (int b = 0; b < NBLK; b++) free(apBlk[b]);
}

/* Fixed-width columns (COLS): declared columns come back as arrays with
** their NULL bitmaps, undeclared ones are absent, a change through
** rowfile_column_mut is seen, damage in the section is LP_CORRUPT, and a
** file of format 3 (no COLS) still opens, without arrays. */
static void test_rowfile_columns(void **state) {
    (void)state;
    enum { N = 20000 }; /* more than two of the writer's in-memory chunks (8192) */
    char zPath[512], zText[600];
    snprintf(zPath, sizeof(zPath), "%s/seg-3.rows", g_dir);
    snprintf(zText, sizeof(zText), "%s.text", zPath);
    LpError err;
    lp_err_clear(&err);
    RowFileWriter *w;
    assert_int_equal(rowfile_writer_new(zPath, zText, 4, N, &w, &err), LP_OK);
    const uint32_t aiBad[2] = {3, 1};
    assert_int_equal(rowfile_writer_columns(w, aiBad, 2, &err), LP_INTERNAL); /* not ascending: w freed */
    assert_int_equal(rowfile_writer_new(zPath, zText, 4, N, &w, &err), LP_OK);
    const uint32_t ai[2] = {1, 3};
    assert_int_equal(rowfile_writer_columns(w, ai, 2, &err), LP_OK);
    void **ap = calloc(N, sizeof(void *));
    for (uint32_t i = 0; i < N; i++) {
        /* a run of ordinals without rows crosses a chunk boundary */
        ap[i] = i % 7 == 2 || (i > 8000 && i < 8500) ? NULL : make_block((int64_t)i + 1, 16);
        if (!ap[i]) continue;
        rowfile_writer_value(w, 0, i, (uint64_t)i * 3, i % 5 == 0);
        rowfile_writer_value(w, 1, i, UINT64_MAX - i, 0);
        assert_int_equal(rowfile_writer_row(w, i, ap[i], 16, &err), LP_OK);
    }
    assert_int_equal(rowfile_writer_finish(w, NULL, 0, &err), LP_OK);
    RowFile *f;
    assert_int_equal(open_rows(zPath, &f, &err), LP_OK);
    const uint64_t *aNull1, *aNull3;
    const uint64_t *a1 = rowfile_column(f, 1, &aNull1), *a3 = rowfile_column(f, 3, &aNull3);
    assert_non_null(a1);
    assert_non_null(a3);
    assert_null(rowfile_column(f, 0, NULL));
    assert_null(rowfile_column(f, 2, NULL));
    assert_null(rowfile_column(f, 4, NULL));
    for (uint32_t i = 0; i < N; i++) {
        int bNull = ap[i] && i % 5 == 0;
        assert_int_equal((aNull1[i / 64] >> (i % 64)) & 1, bNull);
        assert_int_equal((aNull3[i / 64] >> (i % 64)) & 1, 0);
        assert_int_equal(a1[i], ap[i] && !bNull ? (uint64_t)i * 3 : 0);
        assert_int_equal(a3[i], ap[i] ? UINT64_MAX - i : 0);
    }
    const uint64_t *aNoRow = rowfile_norow(f);
    assert_non_null(aNoRow);
    for (uint32_t i = 0; i < N; i++) assert_int_equal((aNoRow[i / 64] >> (i % 64)) & 1, ap[i] == NULL);
    uint64_t *aNullMut, *aMut = rowfile_column_mut(f, 1, &aNullMut);
    aMut[10] = 77;
    aNullMut[0] |= 1ull << 11;
    assert_int_equal(rowfile_column(f, 1, NULL)[10], 77);
    rowfile_close(f);

    size_t n, nT;
    uint8_t *img = slurp(zPath, &n), *txt = slurp(zText, &nT);
    /* COLS: from the end of the (empty) node maps to the footer. */
    size_t nCols = 8 + 2 * (8 + 8 * (size_t)N + 8 * ((N + 63) / 64)), offCols = n - 56 - nCols;
    assert_int_equal(get_u32le(img + offCols), 2);
    for (size_t i = offCols; i < n - 56; i += 997) {
        img[i] ^= 0x10;
        lp_err_clear(&err);
        assert_int_equal(rowfile_open_mem(img, n, txt, nT, "c.rows", 0, check_block, NULL, &f, &err), LP_CORRUPT);
        assert_non_null(strstr(err.zMsg, "c.rows"));
        img[i] ^= 0x10;
    }
    /* Structure checked without checksums: a column number out of range. */
    put_u32le(img + offCols + 8, 9);
    assert_int_equal(rowfile_open_mem(img, n, txt, nT, "c.rows", ROWFILE_NOCHECKSUM, check_block, NULL, &f, &err),
                     LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "column number"));
    put_u32le(img + offCols + 8, 1);
    /* The same file in format 3: no COLS, footer byte 44 zero. */
    uint8_t *old = malloc(n);
    memcpy(old, img, offCols);
    memcpy(old + offCols, img + n - 56, 56);
    size_t nOld = offCols + 56;
    uint8_t *ft = old + nOld - 56;
    put_u32le(old + 8, 3);
    put_u32le(old + 28, crc32c_update(0, old, 28));
    put_u32le(ft + 44, 0);
    put_u32le(ft + 48, crc32c_update(0, ft, 48));
    lp_err_clear(&err);
    assert_int_equal(rowfile_open_mem(old, nOld, txt, nT, "old.rows", 0, check_block, NULL, &f, &err), LP_OK);
    assert_null(rowfile_column(f, 1, NULL));
    assert_int_equal(rowfile_find(f, 5), 4);
    rowfile_close(f);
    /* ... and a format 3 file with bytes after its node maps is damaged. */
    put_u32le(img + 8, 3);
    put_u32le(img + 28, crc32c_update(0, img, 28));
    assert_int_equal(rowfile_open_mem(img, n, txt, nT, "c.rows", ROWFILE_NOCHECKSUM, check_block, NULL, &f, &err),
                     LP_CORRUPT);
    free(old);
    free(img);
    free(txt);
    for (int i = 0; i < N; i++) free(ap[i]);
    free(ap);
}

static void test_rowfile_sorted_and_empty(void **state) {
    (void)state;
    char zPath[512];
    snprintf(zPath, sizeof(zPath), "%s/seg-2.rows", g_dir);
    LpError err;
    RowFile *f;
    assert_int_equal(write_rows(zPath, 1, 0, NULL, NULL, NULL, 0, NULL, NULL, 0, &err), LP_OK);
    assert_int_equal(open_rows(zPath, &f, &err), LP_OK);
    assert_int_equal(rowfile_nord(f), 0);
    assert_int_equal(rowfile_max_id(f), 0);
    assert_int_equal(rowfile_find(f, 1), -1);
    rowfile_close(f);
    void *ap[3] = {make_block(5, 24), make_block(9, 16), make_block(70, 40)};
    uint32_t an[3] = {24, 16, 40};
    assert_int_equal(write_rows(zPath, 1, 3, ap, an, NULL, 0, NULL, NULL, 0, &err), LP_OK);
    assert_int_equal(open_rows(zPath, &f, &err), LP_OK);
    assert_true(rowfile_sorted(f));
    rowfile_close(f);
    for (int i = 0; i < 3; i++) free(ap[i]);
}

static void test_dead_file(void **state) {
    (void)state;
    char zPath[512];
    snprintf(zPath, sizeof(zPath), "%s/seg-1.del-4", g_dir);
    Bitset b, r;
    assert_int_equal(bitset_init(&b, 1000), LP_OK);
    for (size_t i = 0; i < 1000; i += 7) bitset_set(&b, i);
    LpError err;
    assert_int_equal(rowfile_write_dead(zPath, &b, &err), LP_OK);
    assert_int_equal(rowfile_read_dead(zPath, 1000, &r, &err), LP_OK);
    assert_int_equal(r.nBit, 1000);
    assert_memory_equal(r.aWord, b.aWord, 8 * BITSET_NWORD(1000));
    bitset_free(&r);
    /* The wrong segment size, a flipped bit, a truncation. */
    assert_int_equal(rowfile_read_dead(zPath, 999, &r, &err), LP_CORRUPT);
    size_t n;
    uint8_t *img = slurp(zPath, &n);
    for (size_t i = 0; i < n; i += 5) {
        img[i] ^= 4;
        FILE *f = fopen(zPath, "wb");
        fwrite(img, 1, n, f);
        fclose(f);
        lp_err_clear(&err);
        assert_int_equal(rowfile_read_dead(zPath, 1000, &r, &err), LP_CORRUPT);
        assert_non_null(strstr(err.zMsg, zPath));
        img[i] ^= 4;
    }
    FILE *f = fopen(zPath, "wb");
    fwrite(img, 1, n - 8, f);
    fclose(f);
    assert_int_equal(rowfile_read_dead(zPath, 1000, &r, &err), LP_CORRUPT);
    free(img);
    bitset_free(&b);
}

static void test_patch_file(void **state) {
    (void)state;
    char zPath[512];
    snprintf(zPath, sizeof(zPath), "%s/seg-1.patch-9", g_dir);
    enum { NHEAD = 24, NENT = 3 };
    uint8_t a[NENT * (8 + NHEAD)];
    for (int i = 0; i < NENT; i++) {
        uint32_t ord = (uint32_t)(10 * i + 1), zero = 0;
        memcpy(a + i * (8 + NHEAD), &ord, 4);
        memcpy(a + i * (8 + NHEAD) + 4, &zero, 4);
        memset(a + i * (8 + NHEAD) + 8, 0x30 + i, NHEAD);
    }
    LpError err;
    assert_int_equal(rowfile_write_patch(zPath, 100, NHEAD, a, NENT, &err), LP_OK);
    uint8_t *b;
    uint32_t n;
    assert_int_equal(rowfile_read_patch(zPath, 100, NHEAD, &b, &n, &err), LP_OK);
    assert_int_equal(n, NENT);
    assert_memory_equal(a, b, sizeof(a));
    free(b);
    /* Another segment's size or head, a flipped byte, a truncation. */
    assert_int_equal(rowfile_read_patch(zPath, 99, NHEAD, &b, &n, &err), LP_CORRUPT);
    assert_int_equal(rowfile_read_patch(zPath, 100, NHEAD + 8, &b, &n, &err), LP_CORRUPT);
    size_t nFile;
    uint8_t *img = slurp(zPath, &nFile);
    for (size_t i = 0; i < nFile; i++) {
        img[i] ^= 0x10;
        FILE *f = fopen(zPath, "wb");
        fwrite(img, 1, nFile, f);
        fclose(f);
        lp_err_clear(&err);
        assert_int_equal(rowfile_read_patch(zPath, 100, NHEAD, &b, &n, &err), LP_CORRUPT);
        assert_non_null(strstr(err.zMsg, zPath));
        img[i] ^= 0x10;
    }
    FILE *f = fopen(zPath, "wb");
    fwrite(img, 1, nFile - 1, f);
    fclose(f);
    assert_int_equal(rowfile_read_patch(zPath, 100, NHEAD, &b, &n, &err), LP_CORRUPT);
    free(img);
}

/* ------------------------------------------------------------------ */
/* Tables with segments                                                */

static Schema *make_schema(void) {
    Schema s = {0};
    ColumnSchema aCol[3] = {
        {(char *)"title", COL_TEXT, COLF_INDEXED | COLF_STORED, {0}},
        {(char *)"qty", COL_INT, 0, {0}},
        {(char *)"v", COL_VECTOR, 0, {0}},
    };
    aCol[2].vec.nDims = 2;
    aCol[2].vec.bHnsw = 1;
    s.aCol = aCol;
    s.nCol = 3;
    return schema_dup(&s);
}

static int put(Table *t, TableOpKind kind, int64_t id, const char *zTitle, int64_t qty) {
    float v[2] = {(float)id, (float)-id};
    Value a[3] = {value_str(zTitle, (uint32_t)strlen(zTitle)), value_int(qty), {0}};
    a[2].kind = VAL_VEC;
    a[2].u.v.a = v;
    a[2].u.v.n = 2;
    uint8_t aSet[3] = {0, 1, 0};
    TableOp op = {kind, id, a, kind == TOP_UPDATE ? aSet : NULL, NULL, NULL};
    LpError err;
    return table_apply(t, &op, 1, NULL, &err);
}

/* "id:title:qty;" for every live row by global slot, plus the count. */
static char *dump(Table *t) {
    TableSnap *s = table_snapshot(t);
    const Schema *sc = table_schema(t);
    size_t cap = 1 << 20, n = 0;
    char *z = calloc(1, cap);
    RowReader rd;
    row_reader_init(&rd, s);
    for (size_t i = 0; i < table_snap_nslot(s); i++) {
        const MemRow *r = table_snap_slot(s, i);
        if (!r) continue;
        Value title = row_read(&rd, sc, r, 0), qty = row_get(sc, r, 1);
        assert_int_equal(title.kind, VAL_STR);
        n += (size_t)snprintf(z + n, cap - n, "%lld:%.*s:%lld;", (long long)row_id(r),
                              (int)title.u.s.n, title.u.s.z, (long long)qty.u.i);
        assert_ptr_equal(table_snap_get(s, row_id(r)), r);
    }
    snprintf(z + n, cap - n, "#%zu", table_snap_count(s));
    row_reader_free(&rd);
    table_snapshot_release(s);
    return z;
}

/* The rows with a sealed version and a RAM one are listed in slot order,
** so dumps compare the set: sort the entries. */
static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *canon(char *z) {
    char *ap[4096];
    int n = 0;
    for (char *p = strtok(z, ";"); p && n < 4096; p = strtok(NULL, ";")) ap[n++] = p;
    qsort(ap, (size_t)n, sizeof(char *), cmp_str);
    char *o = calloc(1, 1 << 20);
    for (int i = 0; i < n; i++) {
        strcat(o, ap[i]);
        strcat(o, ";");
    }
    free(z);
    return o;
}

static int count_files(const char *zDir, const char *zPrefix) {
    DIR *d = opendir(zDir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) n += strncmp(e->d_name, zPrefix, strlen(zPrefix)) == 0;
    if (d) closedir(d);
    return n;
}

/* Does the table's log (folder wal/) hold a file starting at LSN 1? */
static int wal_has_first_file(const char *zTab) {
    char zPath[700];
    struct stat st;
    snprintf(zPath, sizeof(zPath), "%s/wal/%016llx.wal", zTab, 1ull);
    return stat(zPath, &st) == 0;
}

/* Flushes, changes to sealed rows, a merge, a reopen: with the log's file
** replaced at every flush (walFileBytes 0) or kept (the default, which
** these few rows never reach), when replay must skip the covered
** records still in it; with a pool (the full-text file is written on it
** beside the rows file) or without. */
static void flush_and_reopen(const char *zName, uint64_t walFileBytes, Tpool *pool) {
    char zData[512], zTab[600];
    snprintf(zData, sizeof(zData), "%s/%s", g_dir, zName);
    snprintf(zTab, sizeof(zTab), "%s/tables/t", zData);
    LpError err;
    lp_err_clear(&err);
    assert_int_equal(mkdir(zData, 0755), 0);
    Catalog *c = catalog_new(&(CatalogConfig){.zDataDir = zData, .pool = pool}, &err);
    assert_non_null(c);
    assert_int_equal(catalog_create(c, "t", make_schema(), 0, NULL, &err), LP_OK);
    Table *t = catalog_get(c, "t");
    t->walFileBytes = walFileBytes;
    char zTitle[64];
    for (int i = 1; i <= 300; i++) {
        snprintf(zTitle, sizeof(zTitle), "doc %d group%d", i, i % 7);
        assert_int_equal(put(t, TOP_INSERT, i, zTitle, i), LP_OK);
        if (i == 100 || i == 200) assert_int_equal(table_flush(t, &err), LP_OK);
    }
    assert_int_equal(count_files(zTab, "seg-"), 2 * 4); /* rows, text, fts, vec2 each */
    /* Changes to sealed rows of both segments and to RAM rows. */
    assert_int_equal(put(t, TOP_DELETE, 5, "", 0), LP_OK);
    assert_int_equal(put(t, TOP_UPDATE, 150, "", -150), LP_OK);
    assert_int_equal(put(t, TOP_REPLACE, 20, "twenty again", 20), LP_OK);
    assert_int_equal(put(t, TOP_INSERT, 150, "dup", 1), LP_EXISTS);
    assert_int_equal(put(t, TOP_UPDATE, 250, "", -250), LP_OK);
    char *z1 = canon(dump(t));
    assert_non_null(strstr(z1, "150:doc 150 group3:-150;"));
    assert_null(strstr(z1, "5:doc 5 "));
    assert_non_null(strstr(z1, "#299"));
    assert_int_equal(table_flush(t, &err), LP_OK);
    char *z2 = canon(dump(t));
    assert_string_equal(z1, z2);
    assert_int_equal(count_files(zTab, "seg-"), 3 * 4 + 2); /* + two tombstone files */
    /* A flush with nothing new writes nothing. */
    assert_int_equal(table_flush(t, &err), LP_OK);
    assert_int_equal(count_files(zTab, "seg-"), 3 * 4 + 2);
    assert_int_equal(put(t, TOP_DELETE, 7, "", 0), LP_OK); /* only in the log */
    char *z3 = canon(dump(t));
    /* Merging everything into one segment keeps every answer and leaves
    ** only its three files; the rows stay in id order where they were. */
    assert_int_equal(put(t, TOP_INSERT, 400, "late row", 4), LP_OK);
    assert_int_equal(put(t, TOP_DELETE, 400, "", 0), LP_OK);
    assert_int_equal(table_optimize(t, 1, &err), LP_OK);
    char *zOpt = canon(dump(t));
    assert_string_equal(z3, zOpt);
    free(zOpt);
    assert_int_equal(count_files(zTab, "seg-"), 4);
    int nSeg;
    table_disk_bytes(t, &nSeg, NULL, NULL);
    assert_int_equal(nSeg, 1);
    /* Replaced: the old files went once the manifest covered them. Kept:
    ** the first file holds every record, most of them covered. */
    assert_int_equal(wal_has_first_file(zTab), walFileBytes == 0 ? 0 : 1);
    table_unref(t);
    catalog_free(c);

    c = catalog_new(&(CatalogConfig){.zDataDir = zData, .pool = pool}, &err);
    assert_non_null(c);
    t = catalog_get(c, "t");
    assert_non_null(t);
    char *z4 = canon(dump(t));
    assert_string_equal(z3, z4);
    assert_int_equal(table_next_id(t), 401);
    /* TRUNCATE drops the segments and their files. */
    assert_int_equal(table_truncate(t, &err), LP_OK);
    assert_int_equal(count_files(zTab, "seg-"), 0);
    table_unref(t);
    catalog_free(c);
    c = catalog_new(&(CatalogConfig){.zDataDir = zData, .pool = pool}, &err);
    t = catalog_get(c, "t");
    char *z5 = dump(t);
    assert_string_equal(z5, "#0");
    table_unref(t);
    catalog_free(c);
    free(z1);
    free(z2);
    free(z3);
    free(z4);
    free(z5);
}

static void test_flush_and_reopen(void **state) {
    (void)state;
    LpError err;
    Tpool *pool = tpool_new(2, &err);
    assert_non_null(pool);
    flush_and_reopen("kept", TABLE_WAL_FILE_BYTES, pool);
    flush_and_reopen("replaced", 0, NULL);
    tpool_free(pool);
}

/* ------------------------------------------------------------ id fence */

static uint64_t next_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void put_ids(uint8_t *p, const int64_t *a, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) put_u64le(p + 16 * (size_t)i, (uint64_t)a[i]);
}

static void test_idfence_runs(void **state) {
    (void)state;
    uint8_t buf[16 * 16];
    IdRun aRun[8];
    /* Consecutive ids: one run, whatever the cap. */
    int64_t aSeq[] = {5, 6, 7, 8};
    put_ids(buf, aSeq, 4);
    assert_int_equal(idfence_runs(buf, 16, 4, aRun, 8), 1);
    assert_true(aRun[0].lo == 5 && aRun[0].hi == 8);
    assert_int_equal(idfence_runs(buf, 16, 0, aRun, 8), 0);
    /* Cut at the widest gaps: 1..3 | 100..101 | 1000 | 5000 with cap 3
    ** leaves out the gaps 1000->5000 (4000) and 101->1000 (899). */
    int64_t aGap[] = {1, 2, 3, 100, 101, 1000, 5000};
    put_ids(buf, aGap, 7);
    assert_int_equal(idfence_runs(buf, 16, 7, aRun, 3), 3);
    assert_true(aRun[0].lo == 1 && aRun[0].hi == 101);
    assert_true(aRun[1].lo == 1000 && aRun[1].hi == 1000);
    assert_true(aRun[2].lo == 5000 && aRun[2].hi == 5000);
    assert_int_equal(idfence_runs(buf, 16, 7, aRun, 1), 1);
    assert_true(aRun[0].lo == 1 && aRun[0].hi == 5000);
    assert_int_equal(idfence_runs(buf, 16, 7, aRun, 8), 4);
    assert_true(aRun[1].lo == 100 && aRun[1].hi == 101);
    /* The widest possible gap, and a run ending at INT64_MAX. */
    int64_t aWide[] = {1, INT64_MAX - 1, INT64_MAX};
    put_ids(buf, aWide, 3);
    assert_int_equal(idfence_runs(buf, 16, 3, aRun, 2), 2);
    assert_true(aRun[0].lo == 1 && aRun[0].hi == 1);
    assert_true(aRun[1].lo == INT64_MAX - 1 && aRun[1].hi == INT64_MAX);
}

/* Random sources of random ids, summarised with few runs: for every id
** probed, the fence lists exactly the sources with a run covering it,
** newest first, and so every source holding it. */
static void test_idfence_vs_brute_force(void **state) {
    (void)state;
    enum { N_SRC = 12, MAX_IDS = 300, SPAN = 5000 };
    uint64_t rnd = 0x1234567;
    for (int iter = 0; iter < 40; iter++) {
        static int64_t aaId[N_SRC][MAX_IDS];
        uint32_t anId[N_SRC], anRun[N_SRC];
        IdRun aaRun[N_SRC][6];
        const IdRun *apRun[N_SRC];
        uint8_t buf[16 * MAX_IDS];
        int nSrc = 1 + (int)(next_rand(&rnd) % N_SRC);
        for (int s = 0; s < nSrc; s++) {
            /* A source: a dense range, plus scattered ids (REPLACEs). */
            int64_t lo = 1 + (int64_t)(next_rand(&rnd) % SPAN);
            uint32_t n = 0;
            for (int64_t id = lo; id < lo + 50 && n < MAX_IDS; id++) {
                if (next_rand(&rnd) % 4) aaId[s][n++] = id;
            }
            for (int k = 0; k < 20; k++) aaId[s][n++] = 1 + (int64_t)(next_rand(&rnd) % SPAN);
            for (uint32_t i = 1; i < n; i++) { /* sort, dedupe */
                for (uint32_t j = i; j > 0 && aaId[s][j - 1] > aaId[s][j]; j--) {
                    int64_t x = aaId[s][j];
                    aaId[s][j] = aaId[s][j - 1];
                    aaId[s][j - 1] = x;
                }
            }
            uint32_t m = 0;
            for (uint32_t i = 0; i < n; i++) {
                if (m == 0 || aaId[s][m - 1] != aaId[s][i]) aaId[s][m++] = aaId[s][i];
            }
            anId[s] = m;
            put_ids(buf, aaId[s], m);
            anRun[s] = idfence_runs(buf, 16, m, aaRun[s], 6);
            assert_true(anRun[s] >= 1 && anRun[s] <= 6);
            apRun[s] = aaRun[s];
        }
        if (iter % 5 == 0) anRun[nSrc / 2] = 0; /* a segment without rows */
        IdFence *f = idfence_build(apRun, anRun, nSrc);
        assert_non_null(f);
        uint32_t nCell, nDepth, nDepthSeen = 0;
        idfence_stats(f, &nCell, &nDepth);
        uint32_t nRunAll = 0;
        for (int s = 0; s < nSrc; s++) nRunAll += anRun[s];
        assert_true(nRunAll == 0 ? nCell == 0 : nCell >= 1 && nCell <= 2 * nRunAll);
        for (int64_t id = -2; id < SPAN + 60; id++) {
            uint32_t n;
            const uint16_t *a = idfence_lookup(f, id, &n);
            int aWant[N_SRC] = {0}, nWant = 0;
            for (int s = 0; s < nSrc; s++) {
                for (uint32_t r = 0; r < anRun[s]; r++) {
                    if (aaRun[s][r].lo <= id && id <= aaRun[s][r].hi) aWant[s] = 1;
                }
                int bHeld = 0;
                for (uint32_t i = 0; i < anId[s]; i++) bHeld |= aaId[s][i] == id;
                if (bHeld && anRun[s]) assert_true(aWant[s]); /* runs cover every id */
                nWant += aWant[s];
            }
            assert_int_equal(n, nWant);
            for (uint32_t k = 0; k < n; k++) {
                assert_true(aWant[a[k]]);
                if (k) assert_true(a[k - 1] > a[k]);
            }
            if (n > nDepthSeen) nDepthSeen = n;
        }
        assert_int_equal(nDepth, nDepthSeen);
        idfence_free(f);
    }
    /* No sources, and a source covering everything (a frozen part). */
    IdFence *f = idfence_build(NULL, NULL, 0);
    assert_non_null(f);
    uint32_t n;
    assert_null(idfence_lookup(f, 7, &n));
    assert_int_equal(n, 0);
    idfence_free(f);
    IdRun all = {1, INT64_MAX}, one = {10, 10};
    const IdRun *ap[2] = {&all, &one};
    uint32_t an[2] = {1, 1};
    f = idfence_build(ap, an, 2);
    const uint16_t *a = idfence_lookup(f, 10, &n);
    assert_int_equal(n, 2);
    assert_true(a[0] == 1 && a[1] == 0);
    a = idfence_lookup(f, INT64_MAX, &n);
    assert_true(n == 1 && a[0] == 0);
    idfence_lookup(f, 0, &n);
    assert_int_equal(n, 0);
    idfence_free(f);
    /* Runs of one source that touch: the sweep stays inside across them. */
    IdRun adj[2] = {{1, 5}, {6, 9}}, seven = {7, 7};
    const IdRun *ap2[2] = {adj, &seven};
    uint32_t an2[2] = {2, 1};
    f = idfence_build(ap2, an2, 2);
    a = idfence_lookup(f, 6, &n);
    assert_true(n == 1 && a[0] == 0);
    a = idfence_lookup(f, 7, &n);
    assert_true(n == 2 && a[0] == 1 && a[1] == 0);
    a = idfence_lookup(f, 9, &n);
    assert_true(n == 1 && a[0] == 0);
    idfence_lookup(f, 10, &n);
    assert_int_equal(n, 0);
    idfence_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rowfile_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rowfile_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rowfile_sorted_and_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dead_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_patch_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush_and_reopen, setup, teardown),
        cmocka_unit_test(test_idfence_runs),
        cmocka_unit_test(test_idfence_vs_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
