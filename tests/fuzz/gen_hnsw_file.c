/*
** gen_hnsw_file.c — writes the seed corpus of fuzz_hnsw_file: a few small,
** valid graph files: the empty graph, one row, and graphs of 12 to 80 rows
** over each metric with small M (2, 3, 4), so they have several upper
** layers, at dims 1, 2, 4 and 9.
** Not built by CMake; from the repository root:
**   gcc -std=gnu11 -D_GNU_SOURCE -Isrc tests/fuzz/gen_hnsw_file.c src/vec/hnsw.c \
**       src/vec/distance.c src/vec/distance_avx2.c src/vec/distance_avx512.c \
**       src/util/crc32c.c src/util/error.c src/util/bitset.c src/util/log.c -lm -lpthread \
**       -o /tmp/gen_hnsw_file &&
**   /tmp/gen_hnsw_file tests/fuzz/corpus/hnsw_file
** The output is deterministic for a given set of distance kernels (a fixed
** PRNG seed, levels from the graph's seed; links follow the kernels' rounding).
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "vec/hnsw.h"

static uint64_t g_rng = 0xC0FFEE;

static float rnd(void) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((g_rng >> 40) % 2001) / 1000.0f - 1.0f;
}

static int write_graph(const char *zDir, const char *zName, uint32_t dims, VecMetric m, uint32_t M, int n) {
    char zPath[512];
    VecHnswConfig cfg;
    LpError err;
    VecHnsw *h;
    float v[16];
    uint32_t id, j;
    int i, rc;
    vec_hnsw_config_init(&cfg, dims, m);
    cfg.M = M;
    cfg.efConstruction = 16;
    cfg.capacity = 8;
    h = vec_hnsw_new(&cfg, &err);
    if (!h) {
        fprintf(stderr, "%s\n", err.zMsg);
        return 1;
    }
    for (i = 0; i < n; i++) {
        for (j = 0; j < dims; j++) v[j] = rnd();
        if (vec_hnsw_add(h, v, &id, &err) != LP_OK) {
            fprintf(stderr, "%s\n", err.zMsg);
            return 1;
        }
    }
    snprintf(zPath, sizeof(zPath), "%s/%s", zDir, zName);
    rc = vec_hnsw_save(h, zPath, &err);
    if (rc) fprintf(stderr, "%s\n", err.zMsg);
    vec_hnsw_free(h);
    return rc != LP_OK;
}

int main(int argc, char **argv) {
    const char *zDir = argc > 1 ? argv[1] : ".";
    int rc = 0;
    rc |= write_graph(zDir, "empty", 3, VEC_L2, 2, 0);
    rc |= write_graph(zDir, "one", 2, VEC_IP, 2, 1);
    rc |= write_graph(zDir, "l2_m2", 4, VEC_L2, 2, 40);
    rc |= write_graph(zDir, "cos_m3", 2, VEC_COSINE, 3, 60);
    rc |= write_graph(zDir, "ip_m4_d1", 1, VEC_IP, 4, 30);
    rc |= write_graph(zDir, "l2_m2_d9", 9, VEC_L2, 2, 80);
    rc |= write_graph(zDir, "cos_m4_small", 4, VEC_COSINE, 4, 12);
    return rc;
}
