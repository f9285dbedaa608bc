/* Unit tests for sealed HNSW files (vec_hnsw_save, vec_hnsw_open_file,
** vec_hnsw_open_mem, vec_hnsw_copy):
**   - round trips at dims 1, 17 and 128, uniform and clustered data, all
**     three metrics: the file-backed graph returns the same ids, distances,
**     paths and distance counts as the in-memory graph for top-k, exact
**     and range searches, unfiltered and with bitmap and callback filters;
**   - the empty and the one-row graph;
**   - copies (of an in-memory and of a file-backed graph) answer alike,
**     and grow exactly as the original does;
**   - damage: every byte of header and footer, random bytes of every
**     section and of the padding, truncations and extensions are
**     LP_CORRUPT naming the file; with VEC_HNSW_NOCHECKSUM, structural
**     damage (ids, counts, levels, entry point, NaN) is still refused at
**     the right offset;
**   - read-only: add is LP_UNSUPPORTED; I/O errors while saving remove
**     the partial file.
** The tests read the file through its documented layout (hnsw.c) rather
** than through the code under test. Optimised builds without sanitizers
** also print open time and queries/s of a file-backed vs in-memory graph. */
#include <errno.h>
#include <math.h>
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

#include "util/bitset.h"
#include "util/bytes.h"
#include "util/clock.h"
#include "vec/distance.h"
#include "vec/hnsw.h"

#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define BIG 1
#else
#define BIG 0
#endif
#define NCENTRE 50
#define K 10
#define NQ 100                  /* queries per round-trip configuration */

/* ---- data ------------------------------------------------------------- */

static uint64_t g_rng;

static uint64_t rnd64(void) {
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rnd_unit(void) { return (double)((rnd64() >> 11) + 1) / 9007199254740993.0; }

static float rnd_gauss(void) {
    double u = rnd_unit(), v = rnd_unit();
    return (float)(sqrt(-2.0 * log(u)) * cos(2 * M_PI * v));
}

/* n rows of a Gaussian mixture (centres N(0,1), noise sd 0.3). */
static float *gen_clustered(int n, int dims, uint64_t seed) {
    float *aCentre = malloc(sizeof(float) * NCENTRE * dims);
    float *a = calloc((size_t)n * dims, sizeof(float));
    int i, j;
    g_rng = seed;
    for (i = 0; i < NCENTRE * dims; i++) aCentre[i] = rnd_gauss();
    for (i = 0; i < n; i++) {
        int c = (int)(rnd64() % NCENTRE);
        for (j = 0; j < dims; j++) a[i * dims + j] = aCentre[c * dims + j] + 0.3f * rnd_gauss();
    }
    free(aCentre);
    return a;
}

static float *gen_uniform(int n, int dims, uint64_t seed) {
    float *a = calloc((size_t)n * dims, sizeof(float));
    int i;
    g_rng = seed;
    for (i = 0; i < n * dims; i++) a[i] = (float)rnd_unit() * 2 - 1;
    return a;
}

/* exactFactor < 0 keeps the small graphs on the graph path (see hnsw.h). */
static VecHnsw *build(const float *a, int n, int dims, VecMetric m, uint32_t M, uint32_t efC, double exactFactor) {
    VecHnswConfig cfg;
    LpError err;
    VecHnsw *h;
    int i;
    vec_hnsw_config_init(&cfg, dims, m);
    cfg.M = M;
    cfg.efConstruction = efC;
    cfg.capacity = 64;          /* exercises growth before the save */
    cfg.seed = 7;
    cfg.exactFactor = exactFactor;
    h = vec_hnsw_new(&cfg, &err);
    assert_non_null(h);
    for (i = 0; i < n; i++) {
        uint32_t id;
        assert_int_equal(vec_hnsw_add(h, a + (size_t)i * dims, &id, &err), LP_OK);
        assert_int_equal(id, (uint32_t)i);
    }
    return h;
}

/* ---- files ------------------------------------------------------------ */

static char g_zDir[64];

static void path_of(char *zOut, size_t n, const char *zName) { snprintf(zOut, n, "%s/%s", g_zDir, zName); }

static uint8_t *read_all(const char *zPath, size_t *pn) {
    FILE *f = fopen(zPath, "rb");
    uint8_t *a;
    long n;
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    a = malloc(n ? (size_t)n : 1);
    assert_non_null(a);
    assert_int_equal(fread(a, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *pn = (size_t)n;
    return a;
}

static void write_all(const char *zPath, const uint8_t *a, size_t n) {
    FILE *f = fopen(zPath, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(a, 1, n, f), n);
    fclose(f);
}

/* The file as documented at the top of hnsw.c. */
typedef struct Layout {
    uint32_t dims, M, M0, count, entry, entryLevel;
    uint64_t aOff[4], aSize[4];     /* vectors, layer 0, levels, upper */
    uint64_t offFoot, nUp;
} Layout;

static void parse_layout(const uint8_t *a, size_t n, Layout *L) {
    int s;
    assert_true(n >= 192);
    assert_memory_equal(a, "LOUPEHNS", 8);
    assert_memory_equal(a + n - 8, "LPHNSEND", 8);
    L->dims = get_u32le(a + 12);
    L->M = get_u32le(a + 20);
    L->M0 = get_u32le(a + 24);
    L->count = get_u32le(a + 48);
    L->entry = get_u32le(a + 52);
    L->entryLevel = get_u32le(a + 56);
    L->offFoot = n - 128;
    for (s = 0; s < 4; s++) {
        L->aOff[s] = get_u64le(a + L->offFoot + 16 * s);
        L->aSize[s] = get_u64le(a + L->offFoot + 16 * s + 8);
        assert_int_equal(L->aOff[s] % 64, 0);
    }
    L->nUp = get_u64le(a + L->offFoot + 64);
    assert_int_equal(L->aOff[0], 64);
    assert_int_equal(L->aSize[0], (uint64_t)L->count * L->dims * 4);
    assert_int_equal(L->aSize[1], (uint64_t)L->count * (1 + L->M0) * 4);
    assert_int_equal(L->aSize[2], L->count);
    assert_int_equal(L->aSize[3], L->nUp * (1 + L->M) * 4);
    assert_int_equal(L->offFoot % 64, 0);
}

/* A copy of a in a fresh heap block (so ASan sees reads past the end).
** Not inlined: GCC's -O2 object-size analysis would follow the n == 0
** path into the callers' writes and warn. */
static __attribute__((noinline)) uint8_t *dup_bytes(const uint8_t *a, size_t n) {
    uint8_t *b = malloc(n);     /* n may be 0: NULL or a unique pointer */
    if (n) {
        assert_non_null(b);
        memcpy(b, a, n);
    }
    return b;
}

/* Opening a (n bytes) must fail with LP_CORRUPT naming zName; returns the
** error's position. */
static int64_t expect_corrupt_mem(const uint8_t *a, size_t n, int flags, const char *zWhat) {
    uint8_t *b = dup_bytes(a, n);
    VecHnsw *h = (VecHnsw *)1;
    LpError err;
    int rc;
    memset(&err, 0, sizeof(err));
    rc = vec_hnsw_open_mem(b, n, "damaged.hnsw", flags, &h, &err);
    if (rc != LP_CORRUPT) print_message("%s: rc %d (%s)\n", zWhat, rc, rc ? err.zMsg : "opened");
    assert_int_equal(rc, LP_CORRUPT);
    assert_int_equal(err.code, LP_CORRUPT);
    assert_null(h);
    assert_non_null(strstr(err.zMsg, "damaged.hnsw"));
    assert_non_null(strstr(err.zMsg, "offset"));
    assert_true(err.pos >= 0 && (size_t)err.pos <= n);
    free(b);
    return err.pos;
}

/* ---- comparing two graphs --------------------------------------------- */

static int cb_allow(void *pCtx, uint32_t id) { return bitset_test((const Bitset *)pCtx, id); }

static void same_hits(const VecHit *a, int na, const VecHit *b, int nb) {
    int i;
    assert_int_equal(na, nb);
    for (i = 0; i < na; i++) {
        assert_int_equal(a[i].id, b[i].id);
        /* Bit for bit: the same kernels over the same bytes. */
        assert_memory_equal(&a[i].dist, &b[i].dist, sizeof(float));
    }
}

static void same_stats(const VecSearchStats *a, const VecSearchStats *b) {
    assert_int_equal(a->path, b->path);
    assert_int_equal(a->nDist, b->nDist);
    assert_int_equal(a->nVisited, b->nVisited);
    assert_int_equal(a->nAllow, b->nAllow);
}

/* Runs every kind of search on both graphs for nq queries and requires
** identical answers. Returns how many graph-path searches ran (so the
** caller can tell the graph was exercised, not only scans). */
static int compare_graphs(VecHnsw *ha, VecHnsw *hb, const float *aq, int nq) {
    uint32_t n = vec_hnsw_count(ha), dims = vec_hnsw_dims(ha), i;
    VecHit aA[64], aB[64];
    VecSearchStats sA, sB;
    Bitset half, few;
    VecFilter fNone = {0}, fHalf = {0}, fFew = {0}, fCb = {0};
    const VecFilter *apF[4];
    LpError err;
    int q, f, nA, nB, nGraph = 0;

    assert_int_equal(vec_hnsw_count(hb), n);
    assert_int_equal(vec_hnsw_dims(hb), dims);
    assert_int_equal(vec_hnsw_metric(hb), vec_hnsw_metric(ha));
    for (i = 0; i < n; i++) assert_memory_equal(vec_hnsw_vector(ha, i), vec_hnsw_vector(hb, i), dims * sizeof(float));
    assert_null(vec_hnsw_vector(hb, n));

    assert_int_equal(bitset_init(&half, n ? n : 1), LP_OK);
    assert_int_equal(bitset_init(&few, n ? n : 1), LP_OK);
    g_rng = 99;
    for (i = 0; i < n; i++) {
        if (rnd64() % 2) bitset_set(&half, i);
        if (rnd64() % 40 == 0) bitset_set(&few, i);
    }
    fNone.nAllow = -1;
    fHalf.pAllow = &half;
    fHalf.nAllow = -1;
    fFew.pAllow = &few;
    fFew.nAllow = -1;
    fCb.xAllow = cb_allow;      /* unknown count: the graph path */
    fCb.pCtx = &few;
    fCb.nAllow = -1;
    apF[0] = NULL;
    apF[1] = &fHalf;
    apF[2] = &fFew;
    apF[3] = &fCb;
    (void)fNone;

    for (q = 0; q < nq; q++) {
        const float *pq = aq + (size_t)q * dims;
        for (f = 0; f < 4; f++) {
            int k = f == 0 ? (q % 3 == 0 ? 1 : K) : K, ef = q % 2 ? 16 : 0;
            float radius;
            assert_int_equal(vec_hnsw_search(ha, pq, k, ef, apF[f], aA, &nA, &sA, &err), LP_OK);
            assert_int_equal(vec_hnsw_search(hb, pq, k, ef, apF[f], aB, &nB, &sB, &err), LP_OK);
            same_hits(aA, nA, aB, nB);
            same_stats(&sA, &sB);
            if (sA.path != VEC_PATH_EXACT) nGraph++;
            assert_int_equal(vec_hnsw_search_exact(ha, pq, K, apF[f], aA, &nA, &sA, &err), LP_OK);
            assert_int_equal(vec_hnsw_search_exact(hb, pq, K, apF[f], aB, &nB, &sB, &err), LP_OK);
            same_hits(aA, nA, aB, nB);
            same_stats(&sA, &sB);
            /* A radius that holds some rows: the exact 5th distance. */
            radius = nA ? aA[nA < 5 ? nA - 1 : 4].dist : 1.0f;
            assert_int_equal(vec_hnsw_range(ha, pq, radius, 64, ef, apF[f], aA, &nA, &sA, &err), LP_OK);
            assert_int_equal(vec_hnsw_range(hb, pq, radius, 64, ef, apF[f], aB, &nB, &sB, &err), LP_OK);
            same_hits(aA, nA, aB, nB);
            same_stats(&sA, &sB);
        }
    }
    bitset_free(&half);
    bitset_free(&few);
    return nGraph;
}

/* ---- round trips ------------------------------------------------------ */

static void roundtrip_one(int dims, VecMetric m, int bClustered, int n) {
    static const char *azMetric[] = {"l2", "ip", "cosine"};
    char zPath[128], zName[64];
    float *a = bClustered ? gen_clustered(n + NQ, dims, 1000 + dims) : gen_uniform(n + NQ, dims, 2000 + dims);
    VecHnsw *h = build(a, n, dims, m, 8, 48, -1), *hf = NULL, *hm = NULL;
    uint8_t *aFile;
    size_t nFile;
    LpError err;
    Layout L;
    struct stat st;
    int nGraph;

    snprintf(zName, sizeof(zName), "rt-%d-%s-%s.hnsw", dims, azMetric[m], bClustered ? "clu" : "uni");
    path_of(zPath, sizeof(zPath), zName);
    assert_int_equal(vec_hnsw_save(h, zPath, &err), LP_OK);
    assert_int_equal(stat(zPath, &st), 0);
    assert_int_equal(vec_hnsw_open_file(zPath, &hf, &err), LP_OK);
    assert_non_null(hf);
    assert_int_equal(vec_hnsw_mapped_bytes(hf), (size_t)st.st_size);
    assert_int_equal(vec_hnsw_mapped_bytes(h), 0);
    /* The heap keeps the struct and 8 bytes a row, not the rows. */
    assert_true(vec_hnsw_memory(hf) <= 4096 + (size_t)n * 8);
    assert_true(vec_hnsw_memory(hf) < vec_hnsw_memory(h));

    /* The file is the documented layout, with the graph's own arrays. */
    aFile = read_all(zPath, &nFile);
    parse_layout(aFile, nFile, &L);
    assert_int_equal(L.count, (uint32_t)n);
    assert_int_equal(L.dims, (uint32_t)dims);
    assert_int_equal(L.M0, 2 * L.M);
    assert_memory_equal(aFile + L.aOff[0], vec_hnsw_vector(h, 0), (size_t)n * dims * 4);

    nGraph = compare_graphs(h, hf, a + (size_t)n * dims, NQ);
    /* Stored rows as queries too: exact hits at distance ~0. */
    compare_graphs(h, hf, a, 20);
    assert_true(nGraph > NQ);
    /* The same through open_mem over a heap copy. */
    assert_int_equal(vec_hnsw_open_mem(aFile, nFile, zName, 0, &hm, &err), LP_OK);
    compare_graphs(h, hm, a + (size_t)n * dims, 10);
    /* Saving the file-backed graph gives the same bytes. */
    {
        char zPath2[160];
        uint8_t *aFile2;
        size_t nFile2;
        snprintf(zPath2, sizeof(zPath2), "%s.again", zPath);
        assert_int_equal(vec_hnsw_save(hf, zPath2, &err), LP_OK);
        aFile2 = read_all(zPath2, &nFile2);
        assert_int_equal(nFile2, nFile);
        assert_memory_equal(aFile2, aFile, nFile);
        free(aFile2);
        unlink(zPath2);
    }
    vec_hnsw_free(hm);
    vec_hnsw_free(hf);
    vec_hnsw_free(h);
    free(aFile);
    free(a);
    unlink(zPath);
}

static void test_roundtrip(void **state) {
    static const int aDims[] = {1, 17, 128};
    static const int aN[] = {1200, 1200, 700};
    int d, m, c;
    for (d = 0; d < 3; d++)
        for (m = 0; m < 3; m++)
            for (c = 0; c < 2; c++) {
                /* dims 1 with cosine is two points (+1, -1): still valid. */
                roundtrip_one(aDims[d], (VecMetric)m, c, aN[d]);
            }
}

/* Default M (16) and efConstruction, a larger graph with several upper
** layers, searched from four threads at once. */
typedef struct Worker {
    VecHnsw *h;                 /* the file-backed graph */
    const float *aq;            /* queries */
    const VecHit *aWant;        /* K expected hits per query */
    int nq, dims, nBad;
} Worker;

static void *worker(void *p) {
    Worker *w = p;
    VecHit aHit[K];
    LpError err;
    int q, j, nHit, r;
    for (r = 0; r < 3; r++)
        for (q = 0; q < w->nq; q++) {
            if (vec_hnsw_search(w->h, w->aq + (size_t)q * w->dims, K, 0, NULL, aHit, &nHit, NULL, &err) || nHit != K)
                w->nBad++;
            for (j = 0; j < nHit; j++)
                if (aHit[j].id != w->aWant[q * K + j].id) w->nBad++;
        }
    return NULL;
}

static void test_concurrent_readers(void **state) {
    const int n = BIG ? 20000 : 3000, dims = 32, nq = 100;
    float *a = gen_clustered(n + nq, dims, 77);
    VecHnswConfig cfg;
    VecHnsw *h, *hf;
    VecHit *aWant = malloc(sizeof(VecHit) * nq * K);
    Worker aW[4];
    pthread_t aT[4];
    char zPath[128];
    LpError err;
    int i, nHit;
    uint32_t id;
    vec_hnsw_config_init(&cfg, dims, VEC_L2);
    h = vec_hnsw_new(&cfg, &err);
    for (i = 0; i < n; i++) assert_int_equal(vec_hnsw_add(h, a + (size_t)i * dims, &id, &err), LP_OK);
    path_of(zPath, sizeof(zPath), "concurrent.hnsw");
    assert_int_equal(vec_hnsw_save(h, zPath, &err), LP_OK);
    assert_int_equal(vec_hnsw_open_file(zPath, &hf, &err), LP_OK);
    for (i = 0; i < nq; i++) {
        assert_int_equal(vec_hnsw_search(h, a + (size_t)(n + i) * dims, K, 0, NULL, aWant + i * K, &nHit, NULL, &err),
                         LP_OK);
        assert_int_equal(nHit, K);
    }
    for (i = 0; i < 4; i++) {
        aW[i].h = hf;
        aW[i].aq = a + (size_t)n * dims;
        aW[i].aWant = aWant;
        aW[i].nq = nq;
        aW[i].dims = dims;
        aW[i].nBad = 0;
        assert_int_equal(pthread_create(&aT[i], NULL, worker, &aW[i]), 0);
    }
    for (i = 0; i < 4; i++) {
        pthread_join(aT[i], NULL);
        assert_int_equal(aW[i].nBad, 0);
    }
    compare_graphs(h, hf, a + (size_t)n * dims, 30);
    vec_hnsw_free(hf);
    vec_hnsw_free(h);
    free(aWant);
    free(a);
    unlink(zPath);
}

static void test_empty_and_one(void **state) {
    VecHnswConfig cfg;
    VecHnsw *h, *hf, *hc;
    VecHit aHit[4];
    VecSearchStats st;
    char zPath[128];
    LpError err;
    float v[3] = {1, 2, 3}, q[3] = {0, 0, 0};
    uint8_t *aFile;
    size_t nFile;
    uint32_t id;
    int nHit;

    vec_hnsw_config_init(&cfg, 3, VEC_IP);
    h = vec_hnsw_new(&cfg, &err);
    path_of(zPath, sizeof(zPath), "empty.hnsw");
    assert_int_equal(vec_hnsw_save(h, zPath, &err), LP_OK);
    aFile = read_all(zPath, &nFile);
    assert_int_equal(nFile, 64 + 128);
    assert_int_equal(get_u32le(aFile + 52), UINT32_MAX);
    free(aFile);
    assert_int_equal(vec_hnsw_open_file(zPath, &hf, &err), LP_OK);
    assert_int_equal(vec_hnsw_count(hf), 0);
    assert_int_equal(vec_hnsw_dims(hf), 3);
    assert_int_equal(vec_hnsw_metric(hf), VEC_IP);
    assert_null(vec_hnsw_vector(hf, 0));
    assert_int_equal(vec_hnsw_search(hf, q, 3, 0, NULL, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 0);
    assert_int_equal(vec_hnsw_search_exact(hf, q, 3, NULL, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 0);
    assert_int_equal(vec_hnsw_range(hf, q, 10.0f, 3, 0, NULL, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 0);
    /* An empty copy grows from nothing. */
    hc = vec_hnsw_copy(hf, 0, &err);
    assert_non_null(hc);
    assert_int_equal(vec_hnsw_add(hc, v, &id, &err), LP_OK);
    assert_int_equal(id, 0);
    assert_int_equal(vec_hnsw_search(hc, q, 3, 0, NULL, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 1);
    vec_hnsw_free(hc);
    vec_hnsw_free(hf);

    /* One row. */
    assert_int_equal(vec_hnsw_add(h, v, &id, &err), LP_OK);
    assert_int_equal(vec_hnsw_save(h, zPath, &err), LP_OK);
    assert_int_equal(vec_hnsw_open_file(zPath, &hf, &err), LP_OK);
    assert_int_equal(vec_hnsw_count(hf), 1);
    assert_memory_equal(vec_hnsw_vector(hf, 0), v, sizeof(v));
    assert_int_equal(vec_hnsw_search(hf, q, 3, 0, NULL, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 1);
    assert_int_equal(aHit[0].id, 0);
    assert_true(fabsf(aHit[0].dist - 1.0f) < 1e-6f);
    compare_graphs(h, hf, q, 1);
    vec_hnsw_free(hf);
    vec_hnsw_free(h);
    unlink(zPath);
}

/* ---- copies ----------------------------------------------------------- */

static void test_copy(void **state) {
    const int n = 1500, nMore = 500, dims = 24;
    float *a = gen_clustered(n + nMore + NQ, dims, 31);
    const float *aq = a + (size_t)(n + nMore) * dims;
    VecHnsw *h = build(a, n, dims, VEC_COSINE, 8, 64, 0), *hf, *hcf, *hcm, *hSmall;
    VecHit aHit[K];
    char zPath[128];
    LpError err;
    uint32_t id;
    int i, j, nHit, nFound = 0;

    path_of(zPath, sizeof(zPath), "copy.hnsw");
    assert_int_equal(vec_hnsw_save(h, zPath, &err), LP_OK);
    assert_int_equal(vec_hnsw_open_file(zPath, &hf, &err), LP_OK);
    hcf = vec_hnsw_copy(hf, n + nMore, &err);
    hcm = vec_hnsw_copy(h, 0, &err);    /* capacity below count: count */
    assert_non_null(hcf);
    assert_non_null(hcm);
    assert_int_equal(vec_hnsw_mapped_bytes(hcf), 0);
    /* Before additions: the same answers as the original. */
    compare_graphs(h, hcf, aq, 40);
    compare_graphs(h, hcm, aq, 40);
    /* The read-only graph refuses rows; its copies take them, and as the
    ** construction is deterministic on one thread, they grow exactly as
    ** the original does. */
    for (i = n; i < n + nMore; i++) {
        const float *v = a + (size_t)i * dims;
        assert_int_equal(vec_hnsw_add(hf, v, &id, &err), LP_UNSUPPORTED);
        assert_int_equal(vec_hnsw_add(h, v, &id, &err), LP_OK);
        assert_int_equal(id, (uint32_t)i);
        assert_int_equal(vec_hnsw_add(hcf, v, &id, &err), LP_OK);
        assert_int_equal(id, (uint32_t)i);
        assert_int_equal(vec_hnsw_add(hcm, v, &id, &err), LP_OK);
        assert_int_equal(id, (uint32_t)i);
    }
    assert_int_equal(vec_hnsw_count(hf), n);
    compare_graphs(h, hcf, aq, 40);
    compare_graphs(h, hcm, aq, 40);
    /* New rows are found: each added row is its own nearest neighbour. */
    for (i = n; i < n + nMore; i += 5) {
        assert_int_equal(vec_hnsw_search(hcf, a + (size_t)i * dims, K, 0, NULL, aHit, &nHit, NULL, &err), LP_OK);
        for (j = 0; j < nHit; j++)
            if (aHit[j].id == (uint32_t)i) nFound++;
    }
    assert_true(nFound >= nMore / 5 * 95 / 100);
    /* A copy of a copy, from capacity 1, grows through the doubling. */
    hSmall = vec_hnsw_copy(hcf, 1, &err);
    assert_non_null(hSmall);
    assert_int_equal(vec_hnsw_add(hSmall, a, &id, &err), LP_OK);
    assert_int_equal(id, (uint32_t)(n + nMore));
    vec_hnsw_free(hSmall);
    vec_hnsw_free(hcm);
    vec_hnsw_free(hcf);
    vec_hnsw_free(hf);
    vec_hnsw_free(h);
    free(a);
    unlink(zPath);
}

/* ---- damage ----------------------------------------------------------- */

/* A small graph with upper layers (M 4: about a quarter of the rows). */
static uint8_t *small_file(size_t *pn, Layout *L, VecHnsw **ph, const char *zName) {
    const int n = 400, dims = 6;
    float *a = gen_uniform(n, dims, 5);
    VecHnsw *h = build(a, n, dims, VEC_L2, 4, 32, 0);
    char zPath[128];
    uint8_t *aFile;
    LpError err;
    path_of(zPath, sizeof(zPath), zName);
    assert_int_equal(vec_hnsw_save(h, zPath, &err), LP_OK);
    aFile = read_all(zPath, pn);
    parse_layout(aFile, *pn, L);
    assert_true(L->nUp > 50);
    assert_true(L->entryLevel >= 2);
    free(a);
    if (ph) *ph = h;
    else vec_hnsw_free(h);
    return aFile;
}

static void test_flips_checksummed(void **state) {
    size_t n, i;
    Layout L;
    uint8_t *a = small_file(&n, &L, NULL, "flip.hnsw"), *b;
    VecHnsw *h;
    char zPath[128];
    LpError err;
    int s, r;

    /* Sound: opens both ways. */
    assert_int_equal(vec_hnsw_open_mem(a, n, "flip.hnsw", 0, &h, &err), LP_OK);
    vec_hnsw_free(h);
    /* Every byte of header and footer, two flips each. */
    for (i = 0; i < n; i++) {
        if (i == 64) i = L.offFoot;
        a[i] ^= 0x01;
        expect_corrupt_mem(a, n, 0, "header/footer flip");
        a[i] ^= 0x01 ^ 0xA5;
        expect_corrupt_mem(a, n, 0, "header/footer flip");
        a[i] ^= 0xA5;
    }
    /* Random bytes of every section, its padding included. */
    g_rng = 4242;
    for (s = 0; s < 4; s++) {
        uint64_t end = s < 3 ? L.aOff[s + 1] : L.offFoot;
        for (r = 0; r < 300; r++) {
            size_t p = L.aOff[s] + (size_t)(rnd64() % (end - L.aOff[s]));
            uint8_t x = (uint8_t)(1 + rnd64() % 255);
            a[p] ^= x;
            expect_corrupt_mem(a, n, 0, "section flip");
            a[p] ^= x;
        }
    }
    /* Through a real file: a few flips, the path in the message. */
    path_of(zPath, sizeof(zPath), "flip.hnsw");
    b = dup_bytes(a, n);
    for (r = 0; r < 8; r++) {
        size_t p = r < 4 ? (size_t)r * 16 + 3 : (size_t)(rnd64() % n);
        b[p] ^= 0x10;
        write_all(zPath, b, n);
        h = (VecHnsw *)1;
        assert_int_equal(vec_hnsw_open_file(zPath, &h, &err), LP_CORRUPT);
        assert_null(h);
        assert_non_null(strstr(err.zMsg, zPath));
        b[p] ^= 0x10;
    }
    write_all(zPath, b, n);
    assert_int_equal(vec_hnsw_open_file(zPath, &h, &err), LP_OK);
    vec_hnsw_free(h);
    free(b);
    free(a);
    unlink(zPath);
}

static void test_truncated(void **state) {
    size_t n, len;
    Layout L;
    uint8_t *a = small_file(&n, &L, NULL, "trunc.hnsw"), *b;
    VecHnsw *h;
    char zPath[128];
    LpError err;
    int flags;

    for (flags = 0; flags <= VEC_HNSW_NOCHECKSUM; flags++) {
        for (len = 0; len < n; len += (len < 300 ? 1 : 97)) expect_corrupt_mem(a, len, flags, "truncated");
        expect_corrupt_mem(a, n - 1, flags, "truncated");
        expect_corrupt_mem(a, n - 64, flags, "truncated");
        expect_corrupt_mem(a, L.offFoot, flags, "truncated");
    }
    /* A truncated file keeps its footer's bytes only if cut from the
    ** middle: splice the footer onto a shorter body, and grow the file. */
    for (len = 64; len < L.offFoot; len += 64) {
        b = malloc(len + 128);
        memcpy(b, a, len);
        memcpy(b + len, a + L.offFoot, 128);
        expect_corrupt_mem(b, len + 128, VEC_HNSW_NOCHECKSUM, "spliced");
        free(b);
    }
    b = calloc(1, n + 64);
    memcpy(b, a, L.offFoot);
    memcpy(b + L.offFoot + 64, a + L.offFoot, 128);
    expect_corrupt_mem(b, n + 64, VEC_HNSW_NOCHECKSUM, "extended");
    free(b);
    /* On disk. */
    path_of(zPath, sizeof(zPath), "trunc.hnsw");
    for (len = 0; len < n; len += n / 7) {
        write_all(zPath, a, len);
        h = (VecHnsw *)1;
        assert_int_equal(vec_hnsw_open_file(zPath, &h, &err), LP_CORRUPT);
        assert_null(h);
        assert_non_null(strstr(err.zMsg, zPath));
    }
    free(a);
    unlink(zPath);
}

/* With NOCHECKSUM, each damage is caught by the structure checks. */
static void test_structural(void **state) {
    size_t n;
    Layout L;
    VecHnsw *hMem, *h;
    uint8_t *a = small_file(&n, &L, &hMem, "struct.hnsw"), *b;
    uint32_t *aL0, *aUp, i, row, rowUp = UINT32_MAX, rowLow = UINT32_MAX;
    int8_t *aLevel;
    float *aVec;
    LpError err;
    int64_t pos;
    size_t nL0 = 1 + L.M0, nUp = 1 + L.M;

#define FRESH() (free(b), b = dup_bytes(a, n), aVec = (float *)(void *)(b + L.aOff[0]), aL0 = (uint32_t *)(b + L.aOff[1]), \
                 aLevel = (int8_t *)(b + L.aOff[2]), aUp = (uint32_t *)(b + L.aOff[3]))
    b = NULL;
    FRESH();
    assert_int_equal(vec_hnsw_open_mem(b, n, "s", VEC_HNSW_NOCHECKSUM, &h, &err), LP_OK);
    compare_graphs(hMem, h, aVec, 5);
    vec_hnsw_free(h);
    /* The first row with upper layers, and one without. */
    for (i = 0; i < L.count; i++) {
        if (aLevel[i] > 0 && rowUp == UINT32_MAX) rowUp = i;
        if (aLevel[i] == 0 && rowLow == UINT32_MAX) rowLow = i;
    }
    assert_true(rowUp != UINT32_MAX && rowLow != UINT32_MAX);
    row = 17;
    assert_true(aL0[row * nL0] >= 1);

    /* Layer 0: an id out of range, a count over M0. */
    aL0[row * nL0 + 1] = L.count;
    pos = expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "l0 id");
    assert_int_equal(pos, (int64_t)(L.aOff[1] + (row * nL0 + 1) * 4));
    FRESH();
    aL0[row * nL0 + 1] = UINT32_MAX;
    expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "l0 id");
    FRESH();
    aL0[row * nL0] = L.M0 + 1;
    pos = expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "l0 count");
    assert_int_equal(pos, (int64_t)(L.aOff[1] + row * nL0 * 4));
    /* ... but an id in an unused slot is not followed: accepted. */
    FRESH();
    if (aL0[row * nL0] < L.M0) {
        aL0[row * nL0 + L.M0] = L.count + 5;
        assert_int_equal(vec_hnsw_open_mem(b, n, "s", VEC_HNSW_NOCHECKSUM, &h, &err), LP_OK);
        vec_hnsw_free(h);
    }

    /* Upper layers: the first record is rowUp's layer 1. */
    FRESH();
    assert_true(aUp[0] >= 1);
    aUp[1] = L.count + 1;
    pos = expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "upper id");
    assert_int_equal(pos, (int64_t)(L.aOff[3] + 4));
    FRESH();
    aUp[0] = L.M + 1;
    pos = expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "upper count");
    assert_int_equal(pos, (int64_t)L.aOff[3]);
    FRESH();
    aUp[1] = rowLow;            /* a row without layer 1 */
    pos = expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "upper id level");
    assert_int_equal(pos, (int64_t)(L.aOff[3] + 4));
    (void)nUp;

    /* Levels: out of range, negative, and a change the upper-layer
    ** section no longer matches. */
    FRESH();
    aLevel[rowLow] = 32;
    pos = expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "level 32");
    assert_int_equal(pos, (int64_t)(L.aOff[2] + rowLow));
    FRESH();
    aLevel[rowLow] = -1;
    expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "level -1");
    FRESH();
    aLevel[rowLow] = 1;
    expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "level sum");
    FRESH();
    /* Moving a level between rows keeps the sum: the records then belong
    ** to other rows, whose neighbours' levels betray it (or the entry). */
    aLevel[rowUp] -= 1;
    aLevel[rowLow] += 1;
    expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "level moved");

    /* Entry point: out of range, another row, a wrong level, empty. */
    FRESH();
    put_u32le(b + 52, L.count);
    assert_int_equal(expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "entry"), 52);
    FRESH();
    put_u32le(b + 52, rowLow);
    assert_int_equal(expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "entry row"), 56);
    FRESH();
    put_u32le(b + 56, L.entryLevel + 1);
    assert_int_equal(expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "entry level"), 56);
    FRESH();
    put_u32le(b + 52, UINT32_MAX);
    expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "no entry");

    /* Vectors: NaN and infinity. */
    FRESH();
    aVec[5 * L.dims + 2] = NAN;
    pos = expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "nan");
    assert_int_equal(pos, (int64_t)(L.aOff[0] + (5 * L.dims + 2) * 4));
    FRESH();
    aVec[L.count * L.dims - 1] = -INFINITY;
    expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "inf");

    /* Header fields. */
    FRESH();
    put_u32le(b + 8, 2);
    assert_int_equal(expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "version"), 8);
    FRESH();
    put_u32le(b + 12, 0);
    assert_int_equal(expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "dims 0"), 12);
    FRESH();
    put_u32le(b + 12, L.dims + 1);
    expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "dims + 1");
    FRESH();
    put_u32le(b + 16, 3);
    assert_int_equal(expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "metric"), 16);
    FRESH();
    put_u32le(b + 20, 1);
    assert_int_equal(expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "M"), 20);
    FRESH();
    put_u32le(b + 24, L.M0 + 1);
    assert_int_equal(expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "M0"), 24);
    FRESH();
    put_u32le(b + 48, L.count - 1);
    expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "count");
    FRESH();
    put_u64le(b + L.offFoot + 64, L.nUp + 1);
    expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "nUp");
    FRESH();
    b[L.aOff[2] + L.count] = 1; /* padding after the levels */
    assert_int_equal(expect_corrupt_mem(b, n, VEC_HNSW_NOCHECKSUM, "padding"), (int64_t)(L.aOff[2] + L.count));
#undef FRESH
    free(b);
    free(a);
    vec_hnsw_free(hMem);
    {
        char zPath[128];
        path_of(zPath, sizeof(zPath), "struct.hnsw");
        unlink(zPath);
    }
}

/* ---- read-only and I/O errors ----------------------------------------- */

static void test_errors(void **state) {
    size_t n;
    Layout L;
    VecHnsw *hMem, *h;
    uint8_t *a = small_file(&n, &L, &hMem, "err.hnsw"), *b;
    char zPath[128], zBad[160];
    float v[6] = {1, 2, 3, 4, 5, 6};
    struct rlimit old, lim;
    struct stat st;
    LpError err;
    uint32_t id = 12345;

    path_of(zPath, sizeof(zPath), "err.hnsw");
    assert_int_equal(vec_hnsw_open_file(zPath, &h, &err), LP_OK);
    assert_int_equal(vec_hnsw_add(h, v, &id, &err), LP_UNSUPPORTED);
    assert_int_equal(err.code, LP_UNSUPPORTED);
    assert_non_null(strstr(err.zMsg, "read-only (sealed segment)"));
    assert_int_equal(id, 12345);
    assert_int_equal(vec_hnsw_count(h), L.count);
    vec_hnsw_free(h);

    /* Missing files and folders. */
    snprintf(zBad, sizeof(zBad), "%s/nope/x.hnsw", g_zDir);
    assert_int_equal(vec_hnsw_open_file(zBad, &h, &err), LP_IOERR);
    assert_null(h);
    assert_non_null(strstr(err.zMsg, zBad));
    assert_int_equal(vec_hnsw_save(hMem, zBad, &err), LP_IOERR);
    assert_non_null(strstr(err.zMsg, zBad));
    /* A misaligned buffer. */
    b = malloc(n + 4);
    memcpy(b + 1, a, n);
    assert_int_equal(vec_hnsw_open_mem(b + 1, n, "x", 0, &h, &err), LP_BADINPUT);
    free(b);

    /* A write that fails half way (file size limit): LP_IOERR naming the
    ** file, and no partial file left. */
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 4096;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    unlink(zPath);
    assert_int_equal(vec_hnsw_save(hMem, zPath, &err), LP_IOERR);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    assert_non_null(strstr(err.zMsg, zPath));
    assert_int_equal(stat(zPath, &st), -1);
    assert_int_equal(errno, ENOENT);
    /* And once the limit is lifted, it saves. */
    assert_int_equal(vec_hnsw_save(hMem, zPath, &err), LP_OK);
    assert_int_equal(vec_hnsw_open_file(zPath, &h, &err), LP_OK);
    vec_hnsw_free(h);
    vec_hnsw_free(hMem);
    free(a);
    unlink(zPath);
}

/* ---- speed (printed, optimised builds only) -------------------------- */

static void test_speed(void **state) {
    const int n = BIG ? 20000 : 2000, dims = BIG ? 128 : 16, nq = BIG ? 2000 : 200;
    float *a = gen_clustered(n + nq, dims, 4321);
    VecHnswConfig cfg;
    VecHnsw *h, *hf;
    VecHit aHit[K];
    char zPath[128];
    LpError err;
    int64_t t0, tOpen, aT[2] = {0, 0};
    int i, r, g, nHit;
    uint32_t id;
    vec_hnsw_config_init(&cfg, dims, VEC_L2);
    h = vec_hnsw_new(&cfg, &err);
    for (i = 0; i < n; i++) assert_int_equal(vec_hnsw_add(h, a + (size_t)i * dims, &id, &err), LP_OK);
    path_of(zPath, sizeof(zPath), "speed.hnsw");
    assert_int_equal(vec_hnsw_save(h, zPath, &err), LP_OK);
    t0 = lp_now_ns();
    assert_int_equal(vec_hnsw_open_file(zPath, &hf, &err), LP_OK);
    tOpen = lp_now_ns() - t0;
    /* Alternate rounds so machine noise hits both alike. */
    for (r = 0; r < 3; r++)
        for (g = 0; g < 2; g++) {
            VecHnsw *hh = g ? hf : h;
            t0 = lp_now_ns();
            for (i = 0; i < nq; i++)
                assert_int_equal(vec_hnsw_search(hh, a + (size_t)(n + i) * dims, K, 64, NULL, aHit, &nHit, NULL, &err),
                                 LP_OK);
            aT[g] += lp_now_ns() - t0;
        }
    print_message("%d x %d clustered, ef 64, 1 thread: open %.1f ms (%.1f MiB file), in memory %.0f q/s, "
                  "file-backed %.0f q/s\n",
                  n, dims, tOpen / 1e6, vec_hnsw_mapped_bytes(hf) / 1048576.0, 3.0 * nq / (aT[0] / 1e9),
                  3.0 * nq / (aT[1] / 1e9));
    vec_hnsw_free(hf);
    vec_hnsw_free(h);
    free(a);
    unlink(zPath);
}

static int setup(void **state) {
    snprintf(g_zDir, sizeof(g_zDir), "/tmp/lp-hnswfile-XXXXXX");
    return mkdtemp(g_zDir) ? 0 : -1;
}

static int teardown(void **state) { return rmdir(g_zDir); }

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_concurrent_readers),
        cmocka_unit_test(test_empty_and_one),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_flips_checksummed),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_structural),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
