/*
** fuzz_wal.c — libFuzzer target for the write-ahead log reader and the
** table's replay of its records (src/table/wal.c, table.c).
**
** The first input byte picks a mode:
**   even  the rest is a WAL file's body: written after a valid file header,
**         so mutations reach the record framing (lengths, checksums, LSNs,
**         torn tails);
**   odd   the rest is a list of chunks, each a 2-byte little-endian length
**         and that many bytes, written as records with correct checksums and
**         LSNs, so mutations reach the payload decoding and the row checks.
** The file is replayed into a table of a fixed schema (title TEXT, tag
** STRING, batch INT, v FLOAT_VECTOR(4) hnsw). Beyond "no crash, no leak"
** it checks the contract: wal_open either succeeds or fails with
** LP_CORRUPT (or LP_NOMEM) and a message, and a table that opened answers
** a snapshot.
**
** Seeds: tests/fuzz/corpus/wal/, WAL files of a real server turned into
** the chunk form (mode 1) and raw (mode 0); chunk-patch holds two patch
** entries (UPDATE of numeric columns in place).
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "table/table.h"
#include "table/wal.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

static char g_dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof(g_dir), "/tmp/loupe-fuzz-wal-%d", (int)getpid());
        log_set_level(LOG_LEVEL_OFF);
    }
    char zFile[128];
    snprintf(zFile, sizeof(zFile), "%s/%016llx.wal", g_dir, 1ull);
    mkdir(g_dir, 0755);
    FILE *f = fopen(zFile, "wb");
    if (!f) abort();
    uint8_t h[32] = {0};
    memcpy(h, "LOUPEWAL", 8);
    put_u32le(h + 8, 1);
    put_u64le(h + 16, 1);
    put_u32le(h + 24, crc32c_update(0, h, 24));
    fwrite(h, 1, 32, f);
    if ((data[0] & 1) == 0) {
        fwrite(data + 1, 1, size - 1, f);
    } else {
        size_t off = 1;
        uint64_t lsn = 1;
        while (off + 2 <= size) {
            size_t n = (size_t)data[off] | (size_t)data[off + 1] << 8;
            off += 2;
            if (n > size - off) n = size - off;
            if (n == 0) continue;
            uint8_t r[16];
            put_u32le(r, (uint32_t)n);
            put_u64le(r + 8, lsn++);
            put_u32le(r + 4, crc32c_update(crc32c_update(0, r + 8, 8), data + off, n));
            fwrite(r, 1, 16, f);
            fwrite(data + off, 1, n, f);
            off += n;
        }
    }
    fclose(f);

    LpError err;
    lp_err_clear(&err);
    Table *t = table_new("fuzz", make_schema(), &err);
    if (!t) abort();
    int rc = table_open_wal(t, g_dir, WAL_SYNC_NONE, &err);
    if (rc != LP_OK) {
        if ((rc != LP_CORRUPT && rc != LP_NOMEM && rc != LP_LIMIT) || !err.zMsg[0]) abort();
    } else {
        TableSnap *s = table_snapshot(t);
        if (!s) abort();
        size_t n = table_snap_count(s);
        if (n > table_snap_nslot(s)) abort();
        table_snapshot_release(s);
    }
    table_unref(t);
    /* Fresh folder for the next input. */
    unlink(zFile);
    char zCmd[160];
    snprintf(zCmd, sizeof(zCmd), "%s/%016llx.wal", g_dir, 2ull);
    unlink(zCmd);
    return 0;
}
