/*
** fuzz_table_seg.c — libFuzzer target for the readers of a stored table's
** own files: the sealed segment's rows file and tombstone file
** (src/table/rowfile.c, with the table's row check) and the manifest
** (src/table/manifest.c).
**
** The first input byte picks the reader:
**   0 mod 4  rows file and its text file (u32 size of the rows file, the
**            rows file, the text file), opened from memory without their
**            checksums (so
**            mutations reach the structure checks); when it opens, every
**            row is read back column by column (text decompressed from
**            its stored block), every id looked up, every node map
**            and column array walked: all of it must stay inside the
**            input;
**   1 mod 4  tombstone file (checksums on: it is small and flat);
**   2 mod 4  manifest (its checksum line is recomputed for the mutated
**            JSON unless the input's second byte is odd, so mutations
**            reach the JSON and segment-list checks);
**   3 mod 4  patch file of a 1000-ordinal segment (checksums on).
** The schema is fuzz_wal's: title TEXT, tag STRING, batch INT,
** v FLOAT_VECTOR(4) hnsw.
**
** Seeds: tests/fuzz/corpus/table_seg/, files of a real server's table
** (seg-N.rows + seg-N.text, seg-N.del-G, manifest, seg-N.patch-G) with
** the mode byte in front.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "table/manifest.h"
#include "table/rowfile.h"
#include "table/table.h"
#include "table/table_int.h"
#include "util/crc32c.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static Schema *g_schema;
static char g_dir[64];

static Schema *make_schema(void) {
    Schema s = {0};
    ColumnSchema aCol[4] = {
        {(char *)"title", COL_TEXT, COLF_INDEXED | COLF_STORED, {0}},
        {(char *)"tag", COL_STRING, 0, {0}},
        {(char *)"batch", COL_INT, 0, {0}},
        {(char *)"v", COL_VECTOR, 0, {0}},
    };
    aCol[3].vec.nDims = 4;
    aCol[3].vec.bHnsw = 1;
    s.aCol = aCol;
    s.nCol = 4;
    return schema_dup(&s);
}

static int check_row(void *ctx, const RowFile *f, const void *p, size_t n, int64_t *pId) {
    if (!table_row_valid(ctx, p, n, f)) return 0;
    *pId = row_id(p);
    return 1;
}

static void write_file(const char *zPath, const uint8_t *p, size_t n) {
    FILE *f = fopen(zPath, "wb");
    if (!f) abort();
    if (n) fwrite(p, 1, n, f);
    fclose(f);
}

static void fuzz_rows(const uint8_t *p, size_t n) {
    /* u32 size of the rows file, the rows file, then its text file (none
    ** when empty); each copied to 8-aligned memory, as a mapping would be. */
    if (n < 4) return;
    uint32_t nRows;
    memcpy(&nRows, p, 4);
    p += 4;
    n -= 4;
    if (nRows > n) nRows = (uint32_t)n;
    size_t nText = n - nRows;
    uint64_t *a = malloc(nRows / 8 * 8 + 8);
    uint64_t *t = nText ? malloc(nText / 8 * 8 + 8) : NULL;
    if (!a || (nText && !t)) {
        free(a);
        free(t);
        return;
    }
    memcpy(a, p, nRows);
    if (nText) memcpy(t, p + nRows, nText);
    n = nRows;
    RowFile *f = NULL;
    LpError err;
    lp_err_clear(&err);
    if (rowfile_open_mem((const uint8_t *)a, n, (const uint8_t *)t, nText, "fuzz.rows", ROWFILE_NOCHECKSUM,
                         check_row, g_schema, &f, &err) == LP_OK) {
        uint64_t sum = 0;
        /* Text of packed rows through a reader over a part of this file. */
        Part part = {0};
        part.pRows = f;
        Part *ap[1] = {&part};
        RowReader rd;
        row_reader_init_parts(&rd, ap, 1);
        for (uint32_t i = 0; i < rowfile_nord(f); i++) {
            const MemRow *r = rowfile_row(f, i);
            if (!r) continue;
            for (int c = 0; c < g_schema->nCol; c++) {
                Value v = row_read(&rd, g_schema, r, c);
                if (v.kind == VAL_STR && v.u.s.n) sum += (uint8_t)v.u.s.z[v.u.s.n - 1];
                if (v.kind == VAL_VEC && v.u.v.n) {
                    uint32_t bits; /* read the last component: it must be inside the input */
                    memcpy(&bits, &v.u.v.a[v.u.v.n - 1], 4);
                    sum += bits;
                }
            }
            if (rowfile_find(f, row_id(r)) != (int64_t)i) abort(); /* the index names the row */
        }
        /* The column arrays (format 4): each value and NULL word inside. */
        for (int c = 0; c < g_schema->nCol; c++) {
            const uint64_t *aNull, *aCol = rowfile_column(f, (uint32_t)c, &aNull);
            for (uint32_t i = 0; aCol && i < rowfile_nord(f); i++) sum += aCol[i] + (aNull[i / 64] >> (i % 64) & 1);
        }
        uint32_t nNode;
        const uint32_t *aNode = rowfile_map(f, 3, &nNode);
        for (uint32_t i = 0; aNode && i < nNode; i++) {
            if (aNode[i] != UINT32_MAX && aNode[i] >= rowfile_nord(f)) abort();
        }
        (void)sum;
        row_reader_free(&rd);
        rowfile_close(f);
    } else if (err.code != LP_CORRUPT && err.code != LP_NOMEM) {
        abort();
    }
    free(a);
    free(t);
}

static void fuzz_dead(const uint8_t *p, size_t n) {
    char zPath[128];
    snprintf(zPath, sizeof(zPath), "%s/seg-1.del-1", g_dir);
    write_file(zPath, p, n);
    uint32_t nOrd = n >= 16 ? (uint32_t)p[12] | (uint32_t)p[13] << 8 : 0;
    Bitset b;
    LpError err;
    lp_err_clear(&err);
    if (rowfile_read_dead(zPath, nOrd, &b, &err) == LP_OK) {
        if (b.nBit != nOrd) abort();
        bitset_free(&b);
    } else if (err.code != LP_CORRUPT && err.code != LP_NOMEM && err.code != LP_IOERR) {
        abort();
    }
}

/* A patch file of a 1000-ordinal segment of the fuzz schema (4 columns:
** heads of 40 bytes). */
static void fuzz_patch(const uint8_t *p, size_t n) {
    char zPath[128];
    snprintf(zPath, sizeof(zPath), "%s/seg-1.patch-2", g_dir);
    write_file(zPath, p, n);
    uint8_t *a;
    uint32_t nEntry;
    LpError err;
    if (rowfile_read_patch(zPath, 1000, 40, &a, &nEntry, &err) == LP_OK) {
        uint32_t prev = 0;
        for (uint32_t i = 0; i < nEntry; i++) {
            uint32_t ord;
            memcpy(&ord, a + (size_t)i * 48, 4);
            if (ord >= 1000 || (i && ord <= prev)) abort(); /* the reader checked these */
            prev = ord;
        }
        free(a);
    } else if (err.code != LP_CORRUPT && err.code != LP_NOMEM && err.code != LP_IOERR) {
        abort();
    }
}

static void fuzz_manifest(const uint8_t *p, size_t n, int bKeepCrc) {
    char zPath[128];
    snprintf(zPath, sizeof(zPath), "%s/manifest", g_dir);
    if (bKeepCrc) {
        write_file(zPath, p, n);
    } else {
        /* The first line as the JSON, a correct checksum line after it. */
        const uint8_t *nl = memchr(p, '\n', n);
        size_t nJson = nl ? (size_t)(nl - p) : n;
        char zTail[32];
        snprintf(zTail, sizeof(zTail), "\ncrc32c %08x\n", crc32c_update(0, p, nJson));
        uint8_t *b = malloc(nJson + 32);
        if (!b) return;
        memcpy(b, p, nJson);
        memcpy(b + nJson, zTail, strlen(zTail));
        write_file(zPath, b, nJson + strlen(zTail));
        free(b);
    }
    Manifest m;
    LpError err;
    lp_err_clear(&err);
    if (manifest_read(g_dir, &m, &err) == LP_OK) {
        for (int i = 0; i < m.nSeg; i++) {
            for (int j = 0; j < i; j++) {
                if (m.aSeg[i].id == m.aSeg[j].id) abort(); /* ids are unique */
            }
        }
        manifest_clear(&m);
    } else if (err.code != LP_CORRUPT && err.code != LP_NOMEM && err.code != LP_BADINPUT) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    if (!g_schema) {
        log_set_level(LOG_LEVEL_OFF);
        g_schema = make_schema();
        snprintf(g_dir, sizeof(g_dir), "/tmp/loupe-fuzz-seg-%d", (int)getpid());
        mkdir(g_dir, 0755);
    }
    switch (data[0] % 4) {
    case 0:
        fuzz_rows(data + 1, size - 1);
        break;
    case 1:
        fuzz_dead(data + 1, size - 1);
        break;
    case 2:
        fuzz_manifest(data + 2, size - 2, data[1] & 1);
        break;
    default:
        fuzz_patch(data + 1, size - 1);
        break;
    }
    return 0;
}
