/*
** gen_fts_segment.c — writes the seed corpus of fuzz_fts_segment: a few
** small, valid segment files covering each kind of postings list (single
** document, varint tail, packed blocks of width 0 and above, tail after
** blocks), several fields and doc-length widths, a dictionary of several
** blocks, keys longer than 8 bytes that agree on their first 8 across
** blocks, nEarlier counts, and the empty segment. (The flag0-* seeds are
** the same files as written before nEarlier was kept: header flags 0; the
** infix-* seeds hold the INFIX section, FTS_SEGW_INFIX; infix-exact, of
** exact forms' keys only, FTS_SEGW_INFIX_EXACT.)
** Not built by CMake; from the repository root:
**   gcc -std=gnu11 -D_GNU_SOURCE -Isrc tests/fuzz/gen_fts_segment.c src/fts/segwriter.c \
**       src/fts/infix.c src/fts/codec.c src/util/varint.c src/util/strbuf.c src/util/crc32c.c \
**       src/util/error.c src/util/vec.c -o /tmp/gen_fts_segment &&
**   /tmp/gen_fts_segment tests/fuzz/corpus/fts_segment
** The output is deterministic (a fixed PRNG seed).
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fts/segment.h"

static uint64_t g_rng = 0xfeedface;

static uint32_t rnd(uint32_t n) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((g_rng >> 33) % n);
}

/* One key of field f: a short word, and its postings (docs ascending). */
typedef struct Spec {
    int f;
    const char *z;
    uint32_t df; /* documents, spread over nDocs (or dense) */
    int bDense;  /* consecutive documents from 0 */
} Spec;

static unsigned g_flags; /* fts_segw_open_flags' */

static int write_seg(const char *zDir, const char *zName, uint32_t nDocs, int nFields,
                     const Spec *aSpec, int nSpec) {
    char zPath[512];
    snprintf(zPath, sizeof(zPath), "%s/%s", zDir, zName);
    LpError err;
    FtsSegWriter *w = fts_segw_open_flags(zPath, nDocs, nFields, g_flags, &err);
    if (!w) {
        fprintf(stderr, "%s\n", err.zMsg);
        return 1;
    }
    uint32_t *aLen = calloc(nDocs ? nDocs : 1, sizeof(uint32_t));
    for (int f = 0; f < nFields; f++) {
        /* widths 1, 2 and 4 across the fields */
        uint32_t m = f == 0 ? 200 : f == 1 ? 60000 : 100000;
        for (uint32_t d = 0; d < nDocs; d++)
            aLen[d] = 1 + rnd(m);
        fts_segw_doclens(w, f, aLen);
    }
    free(aLen);
    uint32_t aPos[8];
    /* Each key's documents, for the nEarlier of the keys after it. */
    uint8_t *aHas = calloc((size_t)(nSpec ? nSpec : 1) * (nDocs ? nDocs : 1), 1);
    for (int i = 0; i < nSpec; i++) {
        uint8_t key[FTS_MAX_KEY];
        int n = (int)strlen(aSpec[i].z);
        key[0] = (uint8_t)aSpec[i].f;
        memcpy(key + 1, aSpec[i].z, (size_t)n);
        fts_segw_term(w, key, n + 1);
        uint32_t need = aSpec[i].df;
        for (uint32_t d = 0; d < nDocs && need > 0; d++) {
            if (!aSpec[i].bDense && rnd(nDocs - d) >= need) continue;
            need--;
            uint32_t tf = rnd(5) == 0 ? 2 + rnd(6) : 1;
            uint32_t p = rnd(50);
            for (uint32_t k = 0; k < tf; k++)
                aPos[k] = p += rnd(4);
            fts_segw_posting(w, d, aPos, tf);
            aHas[(size_t)i * nDocs + d] = 1;
        }
        uint32_t nEarlier = 0;
        for (uint32_t d = 0; d < nDocs; d++) {
            int bLow = 0;
            for (int j = 0; j < i; j++) {
                bLow |= aSpec[j].f < aSpec[i].f && strcmp(aSpec[j].z, aSpec[i].z) == 0 &&
                        aHas[(size_t)j * nDocs + d];
            }
            nEarlier += aHas[(size_t)i * nDocs + d] && bLow;
        }
        if (aSpec[i].f > 0) fts_segw_earlier(w, nEarlier);
    }
    free(aHas);
    int rc = fts_segw_finish(w, &err);
    if (rc != LP_OK) fprintf(stderr, "%s\n", err.zMsg);
    return rc != LP_OK;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    const char *zDir = argv[1];
    static const Spec aOne[] = {{0, "x", 1, 0}};
    static const Spec aSmall[] = {
        {0, "ab", 3, 0}, {0, "abc", 1, 0}, {0, "abd", 5, 0}, {0, "b", 20, 0},
        {1, "ab", 2, 0}, {1, "zz", 1, 0},  {2, "", 4, 0},    {2, "q", 30, 0},
    };
    static const Spec aBlocks[] = {
        {0, "dense", 256, 1},
        {0, "mid", 200, 0},
        {0, "rare", 2, 0},
        {1, "wide", 300, 0},
    };
    /* 90 keys: three dictionary blocks, shared prefixes across them. */
    static char azMany[90][8];
    static Spec aMany[90];
    for (int i = 0; i < 90; i++) {
        snprintf(azMany[i], sizeof(azMany[i]), "k%02d", i % 45);
        aMany[i] = (Spec){i / 45, azMany[i], 1 + (uint32_t)(i % 3), 0};
    }
    /* 40 keys whose first 11 bytes agree: the blocks' first 8 bytes tie,
    ** so a lookup must compare the whole keys to pick a block. */
    static char azLong[40][16];
    static Spec aLong[40];
    for (int i = 0; i < 40; i++) {
        snprintf(azLong[i], sizeof(azLong[i]), "longprefix%c%02d", i < 20 ? 'a' : 'b', i % 20);
        aLong[i] = (Spec){0, azLong[i], 1 + (uint32_t)(i % 2), 0};
    }
    int rc = 0;
    rc |= write_seg(zDir, "longkeys", 12, 1, aLong, 40);
    rc |= write_seg(zDir, "empty", 0, 1, NULL, 0);
    rc |= write_seg(zDir, "nokeys", 5, 2, NULL, 0);
    rc |= write_seg(zDir, "one", 1, 1, aOne, 1);
    rc |= write_seg(zDir, "small", 40, 3, aSmall, (int)(sizeof(aSmall) / sizeof(aSmall[0])));
    rc |= write_seg(zDir, "blocks", 400, 2, aBlocks, (int)(sizeof(aBlocks) / sizeof(aBlocks[0])));
    rc |= write_seg(zDir, "manykeys", 20, 2, aMany, 90);
    g_flags = FTS_SEGW_INFIX;
    rc |= write_seg(zDir, "infix-longkeys", 12, 1, aLong, 40);
    rc |= write_seg(zDir, "infix-small", 40, 3, aSmall, (int)(sizeof(aSmall) / sizeof(aSmall[0])));
    rc |= write_seg(zDir, "infix-manykeys", 20, 2, aMany, 90);
    rc |= write_seg(zDir, "infix-nokeys", 5, 2, NULL, 0);
    /* exact forms ('=' after the field byte) beside stems */
    static const Spec aExact[] = {
        {0, "=ab", 2, 0}, {0, "=abc", 1, 0}, {0, "=running", 3, 0}, {0, "ab", 3, 0},
        {0, "run", 4, 0}, {1, "=zz", 1, 0},  {1, "zz", 1, 0},
    };
    g_flags = FTS_SEGW_INFIX | FTS_SEGW_INFIX_EXACT;
    rc |= write_seg(zDir, "infix-exact", 30, 2, aExact, (int)(sizeof(aExact) / sizeof(aExact[0])));
    return rc;
}
