/* Unit tests for the in-memory HNSW graph: recall against brute force on
** clustered and uniform data (L2, cosine), filtered search (never a
** rejected row, always min(k, passing) rows), range search against brute
** force, concurrent inserts, and edge cases.
**
** Sizes: optimised builds without sanitizers run the check,
** 20,000 x 128 clustered vectors (Gaussian mixture, 200 centres, noise
** 0.3, fixed seed); Debug and sanitizer builds use 3,000 x 32 so the suite
** stays within seconds under ASan/TSan. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/bitset.h"
#include "util/clock.h"
#include "vec/distance.h"
#include "vec/hnsw.h"

#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define BIG 1
#define NROW 20000
#define DIMS 128
#define NQUERY 200
#else
#define BIG 0
#define NROW 3000
#define DIMS 32
#define NQUERY 100
#endif
#define NCENTRE 200
#define K 10

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

/* n rows of a Gaussian mixture (centres N(0,1), noise sd 0.3) after n0
** rows drawn by the same seed (queries use rows past the data). */
static float *gen_clustered(int n, int dims, uint64_t seed) {
    float *aCentre = malloc(sizeof(float) * NCENTRE * dims);
    float *a = malloc(sizeof(float) * n * dims);
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
    float *a = malloc(sizeof(float) * n * dims);
    int i;
    g_rng = seed;
    for (i = 0; i < n * dims; i++) a[i] = (float)rnd_unit() * 2 - 1;
    return a;
}

/* ---- reference -------------------------------------------------------- */

typedef struct Ref {
    float d;
    uint32_t id;
} Ref;

static int ref_cmp(const void *pa, const void *pb) {
    const Ref *a = pa, *b = pb;
    if (a->d != b->d) return a->d < b->d ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Every row's distance to q (the graph's stored vectors, so COSINE rows
** are normalised alike), sorted; rows failing pass (if given) are left out.
** Returns the count. */
static int brute(VecHnsw *h, const float *q, const Bitset *pass, Ref *aOut) {
    uint32_t i, n = vec_hnsw_count(h), dims = vec_hnsw_dims(h);
    float *qn = malloc(sizeof(float) * dims);
    int nOut = 0;
    memcpy(qn, q, sizeof(float) * dims);
    if (vec_hnsw_metric(h) == VEC_COSINE) vec_normalize(qn, dims);
    for (i = 0; i < n; i++) {
        if (pass && !bitset_test(pass, i)) continue;
        aOut[nOut].id = i;
        aOut[nOut].d = vec_distance(vec_hnsw_metric(h), qn, vec_hnsw_vector(h, i), dims);
        nOut++;
    }
    free(qn);
    qsort(aOut, nOut, sizeof(Ref), ref_cmp);
    return nOut;
}

static VecHnsw *build(const float *a, int n, int dims, VecMetric m, uint32_t cap) {
    VecHnswConfig cfg;
    LpError err;
    VecHnsw *h;
    int i;
    vec_hnsw_config_init(&cfg, dims, m);
    cfg.capacity = cap;
    h = vec_hnsw_new(&cfg, &err);
    assert_non_null(h);
    for (i = 0; i < n; i++) {
        uint32_t id;
        assert_int_equal(vec_hnsw_add(h, a + (size_t)i * dims, &id, &err), LP_OK);
        assert_int_equal(id, (uint32_t)i);
    }
    return h;
}

/* Mean recall@k of the graph search over nq queries (ef as given);
** prints queries/s when bPrint. */
static double recall_at(VecHnsw *h, const float *aq, int nq, int k, int ef, int bPrint, const char *zWhat) {
    Ref *aRef = malloc(sizeof(Ref) * vec_hnsw_count(h));
    VecHit aHit[128];
    int i, j, l, nHit, nFound = 0;
    int64_t t0, tSearch = 0;
    LpError err;
    for (i = 0; i < nq; i++) {
        const float *q = aq + (size_t)i * vec_hnsw_dims(h);
        VecSearchStats st;
        int nRef = brute(h, q, NULL, aRef);
        t0 = lp_now_ns();
        assert_int_equal(vec_hnsw_search(h, q, k, ef, NULL, aHit, &nHit, &st, &err), LP_OK);
        tSearch += lp_now_ns() - t0;
        assert_int_equal(nHit, k < nRef ? k : nRef);
        for (j = 0; j < nHit; j++) {
            if (j) assert_true(aHit[j - 1].dist <= aHit[j].dist);
            for (l = 0; l < nHit; l++)
                if (aHit[j].id == aRef[l].id) nFound++;
        }
    }
    free(aRef);
    if (bPrint)
        print_message("%s: recall@%d %.4f at ef %d, %.0f queries/s\n", zWhat, k, (double)nFound / (nq * k), ef,
                      nq / (tSearch / 1e9));
    return (double)nFound / (nq * k);
}

/* ---- shared clustered L2 index --------------------------------------- */

static float *g_aData, *g_aQuery;
static VecHnsw *g_h;
static double g_buildS;

static int setup(void **state) {
    int64_t t0;
    float *a = gen_clustered(NROW + NQUERY, DIMS, 1234);
    g_aData = a;
    g_aQuery = a + (size_t)NROW * DIMS;
    t0 = lp_now_ns();
    g_h = build(g_aData, NROW, DIMS, VEC_L2, 1000);
    g_buildS = (lp_now_ns() - t0) / 1e9;
    return 0;
}

static int teardown(void **state) {
    vec_hnsw_free(g_h);
    free(g_aData);
    return 0;
}

static void test_recall_l2_clustered(void **state) {
    double r;
    print_message("build %dx%d L2 (1 thread, %s kernels): %.2f s, index %.1f MiB\n", NROW, DIMS,
                  vec_isa_name(vec_dist_init()), g_buildS, vec_hnsw_memory(g_h) / 1048576.0);
    r = recall_at(g_h, g_aQuery, NQUERY, K, 0, 1, "L2 clustered");
    assert_true(r >= 0.95);
    /* More beam, more recall. */
    assert_true(recall_at(g_h, g_aQuery, NQUERY, K, 200, 1, "L2 clustered") >= r);
    recall_at(g_h, g_aQuery, NQUERY, K, 16, 1, "L2 clustered");
}

static void test_recall_cosine_clustered(void **state) {
    VecHnsw *h = build(g_aData, NROW, DIMS, VEC_COSINE, 0);
    int i;
    assert_true(recall_at(h, g_aQuery, NQUERY, K, 0, 1, "cosine clustered") >= 0.95);
    /* Stored rows are unit vectors. */
    for (i = 0; i < 10; i++) {
        const float *v = vec_hnsw_vector(h, i);
        float s = 0;
        int j;
        for (j = 0; j < DIMS; j++) s += v[j] * v[j];
        assert_true(fabsf(s - 1) < 1e-4f);
    }
    vec_hnsw_free(h);
}

/* Uniform data has no clusters to exploit and its intrinsic dimension is
** the full dimension: at 32 dims the default ef reaches 0.95; at 64 dims
** it takes ef 200 (measured: ef 64 gives 0.86, ef 128 0.96). */
static void test_recall_uniform(void **state) {
    int n = BIG ? 10000 : 2000, d;
    for (d = 32; d <= 64; d += 32) {
        float *a = gen_uniform(n + NQUERY, d, 99 + d);
        int ef = d == 32 ? 0 : 200;
        VecHnsw *h = build(a, n, d, VEC_L2, 0);
        assert_true(recall_at(h, a + (size_t)n * d, NQUERY, K, ef, 1, "L2 uniform") >= 0.95);
        vec_hnsw_free(h);
        h = build(a, n, d, VEC_IP, 0);
        assert_true(recall_at(h, a + (size_t)n * d, NQUERY, K, ef, 1, "IP uniform") >= 0.90);
        vec_hnsw_free(h);
        free(a);
    }
}

/* ---- exact search, filters ------------------------------------------- */

static void test_exact_matches_brute(void **state) {
    Ref *aRef = malloc(sizeof(Ref) * NROW);
    VecHit aHit[K];
    VecSearchStats st;
    LpError err;
    int i, j, nHit;
    for (i = 0; i < 20; i++) {
        const float *q = g_aQuery + (size_t)i * DIMS;
        brute(g_h, q, NULL, aRef);
        assert_int_equal(vec_hnsw_search_exact(g_h, q, K, NULL, aHit, &nHit, &st, &err), LP_OK);
        assert_int_equal(nHit, K);
        assert_int_equal(st.path, VEC_PATH_EXACT);
        assert_int_equal(st.nDist, NROW);
        for (j = 0; j < K; j++) {
            /* Kernels may round differently from vec_distance: equal ids
            ** unless two distances are within rounding. */
            assert_true(fabsf(aHit[j].dist - aRef[j].d) <= 1e-4f * (1 + aRef[j].d));
            if (aHit[j].id != aRef[j].id) assert_true(fabsf(aRef[j].d - aRef[j + 1].d) < 1e-3f * (1 + aRef[j].d));
        }
    }
    free(aRef);
}

static int cb_allow(void *pCtx, uint32_t id) { return bitset_test((const Bitset *)pCtx, id); }

/* One filter run: every hit passes, exactly min(K, passing) hits, recall
** against the filtered brute force. Returns the recall. */
static double check_filter(VecHnsw *h, const Bitset *pass, int bCallback, VecPath *pPath) {
    Ref *aRef = malloc(sizeof(Ref) * NROW);
    VecHit aHit[K];
    VecSearchStats st;
    VecFilter f = {0};
    LpError err;
    int i, j, l, nHit, nFound = 0, nWant = 0;
    if (bCallback) {
        f.xAllow = cb_allow;
        f.pCtx = (void *)pass;
    } else {
        f.pAllow = pass;
    }
    f.nAllow = -1;
    for (i = 0; i < NQUERY; i++) {
        const float *q = g_aQuery + (size_t)i * DIMS;
        int nRef = brute(h, q, pass, aRef);
        int nExp = nRef < K ? nRef : K;
        assert_int_equal(vec_hnsw_search(h, q, K, 0, &f, aHit, &nHit, &st, &err), LP_OK);
        assert_int_equal(nHit, nExp);
        *pPath = st.path;
        for (j = 0; j < nHit; j++) {
            assert_true(bitset_test(pass, aHit[j].id));
            for (l = 0; l < nExp; l++)
                if (aHit[j].id == aRef[l].id) nFound++;
        }
        nWant += nExp;
    }
    free(aRef);
    return nWant ? (double)nFound / nWant : 1.0;
}

/* The documented choice of the exact scan at the default factor. */
static int expect_exact(size_t nAllow, size_t n, int ef) {
    return nAllow <= (size_t)ef || (double)nAllow * nAllow <= VEC_HNSW_DEFAULT_EXACT_FACTOR * ef * n;
}

static void make_filter(Bitset *pass, double frac, uint64_t seed) {
    uint32_t i;
    assert_int_equal(bitset_init(pass, NROW), LP_OK);
    g_rng = seed;
    for (i = 0; i < NROW; i++)
        if (rnd_unit() < frac) bitset_set(pass, i);
}

static void test_filtered(void **state) {
    static const double aFrac[] = {0.5, 0.05, 0.001};
    Bitset pass;
    size_t f;
    for (f = 0; f < LP_ARRAY_SIZE(aFrac); f++) {
        VecPath path, pathCb;
        double r, rCb;
        make_filter(&pass, aFrac[f], 777 + f);
        r = check_filter(g_h, &pass, 0, &path);
        rCb = check_filter(g_h, &pass, 1, &pathCb);
        print_message("filter %.1f%% (%zu rows): bitmap recall %.4f path %d, callback recall %.4f path %d\n",
                      aFrac[f] * 100, bitset_count(&pass), r, (int)path, rCb, (int)pathCb);
        if (expect_exact(bitset_count(&pass), NROW, VEC_HNSW_DEFAULT_EF)) {
            assert_int_equal(path, VEC_PATH_EXACT);
            assert_true(r == 1.0);
        } else {
            assert_int_equal(path, VEC_PATH_GRAPH);
            assert_true(r >= 0.9);
        }
        /* A callback has no count: the graph runs and must not lose k. */
        assert_true(rCb >= 0.9);
        bitset_free(&pass);
    }
}

/* Filters that pass fewer than k rows; a filter whose rows lie far from
** every query (only the exact fallback can collect them all). */
static void test_filter_fewer_than_k(void **state) {
    Bitset pass;
    VecHit aHit[K];
    VecSearchStats st;
    VecFilter f = {.pAllow = &pass, .nAllow = -1};
    LpError err;
    int nHit, i;
    assert_int_equal(bitset_init(&pass, NROW), LP_OK);
    bitset_set(&pass, 3);
    bitset_set(&pass, NROW - 1);
    assert_int_equal(vec_hnsw_search(g_h, g_aQuery, K, 0, &f, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 2);
    assert_int_equal(st.nAllow, 2);
    /* Nothing passes. */
    bitset_clear(&pass, 3);
    bitset_clear(&pass, NROW - 1);
    assert_int_equal(vec_hnsw_search(g_h, g_aQuery, K, 0, &f, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 0);
    /* A callback passing 7 rows: the graph may find them or not; either
    ** way all 7 come back. */
    for (i = 0; i < 7; i++) bitset_set(&pass, (size_t)i * (NROW / 7));
    f.pAllow = NULL;
    f.xAllow = cb_allow;
    f.pCtx = &pass;
    assert_int_equal(vec_hnsw_search(g_h, g_aQuery, K, 0, &f, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 7);
    assert_int_equal(st.path, VEC_PATH_GRAPH_EXACT);
    for (i = 0; i < nHit; i++) assert_true(bitset_test(&pass, aHit[i].id));
    /* A bitmap shorter than the graph rejects the rows past its end. */
    bitset_free(&pass);
    assert_int_equal(bitset_init(&pass, 100), LP_OK);
    for (i = 0; i < 100; i++) bitset_set(&pass, i);
    f.pAllow = &pass;
    f.xAllow = NULL;
    assert_int_equal(vec_hnsw_search(g_h, g_aQuery, K, 0, &f, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, K);
    for (i = 0; i < nHit; i++) assert_true(aHit[i].id < 100);
    bitset_free(&pass);
}

/* ---- range search ----------------------------------------------------- */

/* Range search with radius = the distance of the query's r-th neighbour;
** returns recall and checks precision (every hit within the radius and
** passing) and order. */
static double check_range(int r, const VecFilter *f, const Bitset *pass, VecPath wantPath, int maxResults) {
    Ref *aRef = malloc(sizeof(Ref) * NROW);
    VecHit *aHit = malloc(sizeof(VecHit) * NROW);
    VecSearchStats st;
    LpError err;
    int i, j, l, nHit, nFound = 0, nWant = 0;
    for (i = 0; i < NQUERY; i++) {
        const float *q = g_aQuery + (size_t)i * DIMS;
        int nRef, nIn = 0;
        float radius;
        brute(g_h, q, NULL, aRef);
        radius = aRef[r].d;
        nRef = brute(g_h, q, pass, aRef);
        while (nIn < nRef && aRef[nIn].d <= radius) nIn++;
        assert_int_equal(vec_hnsw_range(g_h, q, radius, maxResults, 0, f, aHit, &nHit, &st, &err), LP_OK);
        assert_int_equal(st.path, wantPath);
        assert_true(nHit <= maxResults);
        for (j = 0; j < nHit; j++) {
            assert_true(aHit[j].dist <= radius);
            if (pass) assert_true(bitset_test(pass, aHit[j].id));
            if (j) assert_true(aHit[j - 1].dist <= aHit[j].dist);
        }
        /* Exact path: the very rows of the brute force, up to rounding at
        ** the radius (kernels may round a boundary row either way). */
        if (wantPath == VEC_PATH_EXACT)
            while (nIn > 0 && aRef[nIn - 1].d >= radius * (1 - 1e-4f)) nIn--;
        if (nIn > maxResults) nIn = maxResults;
        for (j = 0; j < nIn; j++)
            for (l = 0; l < nHit; l++)
                if (aHit[l].id == aRef[j].id) nFound++;
        nWant += nIn;
    }
    free(aRef);
    free(aHit);
    return nWant ? (double)nFound / nWant : 1.0;
}

static void test_range(void **state) {
    size_t nPass;
    static const int aR[] = {0, 5, 50, 300};
    Bitset pass;
    VecFilter f = {.pAllow = &pass, .nAllow = -1};
    size_t i;
    uint32_t id;
    for (i = 0; i < LP_ARRAY_SIZE(aR); i++) {
        double r = check_range(aR[i], NULL, NULL, VEC_PATH_GRAPH, NROW);
        print_message("range, radius of neighbour %d: graph recall %.4f\n", aR[i] + 1, r);
        assert_true(r >= 0.95);
    }
    /* A k plus a radius: the nearest 5 within the radius. */
    assert_true(check_range(50, NULL, NULL, VEC_PATH_GRAPH, 5) >= 0.95);
    /* A selective filter: the exact scan decides, exactly. */
    assert_int_equal(bitset_init(&pass, NROW), LP_OK);
    for (id = 0; id < NROW; id += 100) bitset_set(&pass, id);
    assert_true(check_range(300, &f, &pass, VEC_PATH_EXACT, NROW) == 1.0);
    assert_true(check_range(300, &f, &pass, VEC_PATH_EXACT, 3) == 1.0);
    /* Half the rows: the graph with the filter applied. */
    for (id = 0; id < NROW; id++)
        if (id % 2) bitset_set(&pass, id);
    nPass = bitset_count(&pass);
    assert_true(check_range(50, &f, &pass, expect_exact(nPass, NROW, VEC_HNSW_DEFAULT_EF) ? VEC_PATH_EXACT : VEC_PATH_GRAPH,
                            NROW) >= 0.95);
    bitset_free(&pass);
}

/* ---- concurrency ------------------------------------------------------ */

typedef struct Job {
    VecHnsw *h;
    const float *a;
    int i0, n, step;
    uint32_t *aId;              /* aId[row] = id the graph assigned */
} Job;

static void *add_worker(void *p) {
    Job *j = p;
    LpError err;
    int i;
    for (i = j->i0; i < j->n; i += j->step) {
        int rc = vec_hnsw_add(j->h, j->a + (size_t)i * DIMS, &j->aId[i], &err);
        if (rc) return (void *)1;
    }
    return NULL;
}

/* Searches while rows are inserted: results must stay sane. */
static void *search_worker(void *p) {
    Job *j = p;
    VecHit aHit[K];
    LpError err;
    int i, nHit;
    for (i = 0; i < 200; i++) {
        if (vec_hnsw_search(j->h, g_aQuery + (size_t)(i % NQUERY) * DIMS, K, 0, NULL, aHit, &nHit, NULL, &err))
            return (void *)1;
        if (nHit > K) return (void *)1;
    }
    return NULL;
}

/* Random 4-d rows with 3 decimals, M 4, built from 2 threads: low
** dimension and short lists make rows shadow each other in the pruning
** heuristic, and a few lose their in-links, so searching a row's own
** vector misses it (measured: 0-4 of 20,000 per build, none in a third of
** the builds; M 16 gives none at all since concurrent inserts see each
** other). vec_hnsw_repair must link them back: afterwards every row finds
** itself, and a second repair finds nothing to do. */
typedef struct LowJob {
    VecHnsw *h;
    const float *a;
    int i0, n;
} LowJob;

static void *low_worker(void *p) {
    LowJob *j = p;
    LpError err;
    uint32_t id;
    for (int i = j->i0; i < j->n; i += 2) {
        if (vec_hnsw_add(j->h, j->a + (size_t)i * 4, &id, &err)) return (void *)1;
    }
    return NULL;
}

static int self_misses(VecHnsw *h, const float *a, int n) {
    int nMiss = 0;
    for (int i = 0; i < n; i++) {
        VecHit aHit[10];
        int nHit, bFound = 0;
        LpError err;
        const float *v = vec_hnsw_vector(h, (uint32_t)i);
        assert_int_equal(vec_hnsw_search(h, v, 10, 64, NULL, aHit, &nHit, NULL, &err), LP_OK);
        for (int k = 0; k < nHit; k++) bFound |= aHit[k].id == (uint32_t)i;
        nMiss += !bFound;
    }
    (void)a;
    return nMiss;
}

static void test_repair_unreachable(void **state) {
    (void)state;
    enum { N = 20000 };
    float *a = malloc(sizeof(float) * 4 * N);
    VecHnswConfig cfg;
    LpError err;
    vec_hnsw_config_init(&cfg, 4, VEC_L2);
    cfg.M = 4;
    cfg.capacity = N;
    cfg.exactFactor = -1;       /* the graph answers, never the exact scan */
    int nBefore = 0, nAfter = 0;
    uint32_t nFound = 0, nLeft = 0, nTotalFound = 0;
    /* Which rows end up unreachable depends on the data and on thread
    ** timing: build new data until repair finds one (at most 10 tries,
    ** each finding none about 1 time in 3). */
    for (int attempt = 0; attempt < 10 && nTotalFound == 0; attempt++) {
        unsigned seed = 4242 + (unsigned)attempt;
        for (int i = 0; i < 4 * N; i++) {
            seed = seed * 1103515245u + 12345u;
            a[i] = (float)((seed >> 8) % 1000) / 1000.0f;
        }
        VecHnsw *h = vec_hnsw_new(&cfg, &err);
        assert_non_null(h);
        pthread_t aT[2];
        LowJob aJob[2] = {{h, a, 0, N}, {h, a, 1, N}};
        for (int t = 0; t < 2; t++) assert_int_equal(pthread_create(&aT[t], NULL, low_worker, &aJob[t]), 0);
        for (int t = 0; t < 2; t++) {
            void *pRet;
            pthread_join(aT[t], &pRet);
            assert_null(pRet);
        }
        nBefore = self_misses(h, a, N);
        assert_int_equal(vec_hnsw_repair(h, &nFound, &nLeft, &err), LP_OK);
        nTotalFound += nFound;
        nAfter = self_misses(h, a, N);
        print_message("repair: %d of %d rows missed their own vector; %u needed a link, %u left; "
                      "%d missed after\n", nBefore, N, nFound, nLeft, nAfter);
        assert_true(nAfter <= (int)nLeft);
        assert_true(nBefore == 0 || nFound > 0);
        /* Nothing left to do the second time. */
        uint32_t nFound2, nLeft2;
        assert_int_equal(vec_hnsw_repair(h, &nFound2, &nLeft2, &err), LP_OK);
        assert_int_equal(nFound2, nLeft);
        vec_hnsw_free(h);
    }
    assert_true(nTotalFound > 0);
    free(a);
}

static void test_concurrent_build(void **state) {
    enum { NTHREAD = 3 };
    VecHnswConfig cfg;
    LpError err;
    pthread_t aT[NTHREAD + 1];
    Job aJob[NTHREAD + 1];
    uint32_t *aId = malloc(sizeof(uint32_t) * NROW);
    char *aSeen = calloc(NROW, 1);
    VecHnsw *h;
    int t, i;
    int64_t t0;
    double rSerial, rPar;
    vec_hnsw_config_init(&cfg, DIMS, VEC_L2);
    cfg.capacity = 16;          /* growth happens under concurrent inserts */
    cfg.exactFactor = -1;       /* the graph answers filters down to ef rows */
    h = vec_hnsw_new(&cfg, &err);
    assert_non_null(h);
    t0 = lp_now_ns();
    for (t = 0; t < NTHREAD; t++) {
        aJob[t] = (Job){h, g_aData, t, NROW, NTHREAD, aId};
        assert_int_equal(pthread_create(&aT[t], NULL, add_worker, &aJob[t]), 0);
    }
    aJob[NTHREAD] = (Job){h, NULL, 0, 0, 0, NULL};
    assert_int_equal(pthread_create(&aT[NTHREAD], NULL, search_worker, &aJob[NTHREAD]), 0);
    for (t = 0; t <= NTHREAD; t++) {
        void *pRet;
        pthread_join(aT[t], &pRet);
        assert_null(pRet);
    }
    print_message("build %dx%d with %d threads: %.2f s\n", NROW, DIMS, NTHREAD, (lp_now_ns() - t0) / 1e9);
    assert_int_equal(vec_hnsw_count(h), NROW);
    /* Ids are dense and each holds the row that got it. */
    for (i = 0; i < NROW; i++) {
        assert_true(aId[i] < NROW);
        assert_false(aSeen[aId[i]]);
        aSeen[aId[i]] = 1;
        assert_memory_equal(vec_hnsw_vector(h, aId[i]), g_aData + (size_t)i * DIMS, sizeof(float) * DIMS);
    }
    rSerial = recall_at(g_h, g_aQuery, NQUERY, K, 0, 0, NULL);
    rPar = recall_at(h, g_aQuery, NQUERY, K, 0, 1, "concurrent build");
    assert_true(rPar >= 0.95);
    assert_true(rPar >= rSerial - 0.01);
    /* Selective filters on the graph path still return k rows. */
    {
        static const double aFrac[] = {0.05, 0.005};
        size_t f;
        for (f = 0; f < LP_ARRAY_SIZE(aFrac); f++) {
            Bitset pass;
            VecPath path;
            double r;
            make_filter(&pass, aFrac[f], 555 + f);
            r = check_filter(h, &pass, 0, &path);
            print_message("graph forced, filter %.1f%% (%zu rows): recall %.4f\n", aFrac[f] * 100,
                          bitset_count(&pass), r);
            assert_int_equal(path, bitset_count(&pass) <= VEC_HNSW_DEFAULT_EF ? VEC_PATH_EXACT : VEC_PATH_GRAPH);
            assert_true(r >= 0.9);
            bitset_free(&pass);
        }
    }
    vec_hnsw_free(h);
    free(aId);
    free(aSeen);
}

/* ---- edge cases ------------------------------------------------------- */

static void test_edges(void **state) {
    VecHnswConfig cfg;
    LpError err;
    VecHit aHit[320];
    VecSearchStats st;
    VecHnsw *h;
    float v[4] = {0}, q[1] = {0.4f};
    uint32_t id;
    int nHit, i;

    /* Bad configurations. */
    vec_hnsw_config_init(&cfg, 0, VEC_L2);
    assert_null(vec_hnsw_new(&cfg, &err));
    assert_int_equal(err.code, LP_BADINPUT);
    vec_hnsw_config_init(&cfg, 4, VEC_L2);
    cfg.M = 1;
    assert_null(vec_hnsw_new(&cfg, &err));
    assert_int_equal(err.code, LP_BADINPUT);

    /* An empty graph: no rows, no error. */
    vec_hnsw_config_init(&cfg, 1, VEC_L2);
    cfg.capacity = 1;
    h = vec_hnsw_new(&cfg, &err);
    assert_non_null(h);
    assert_int_equal(vec_hnsw_search(h, q, 5, 0, NULL, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 0);
    assert_int_equal(vec_hnsw_range(h, q, 1.0f, 5, 0, NULL, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 0);
    assert_null(vec_hnsw_vector(h, 0));

    /* dims 1, k > n, growth from capacity 1: values 0..39. */
    for (i = 0; i < 40; i++) {
        v[0] = (float)i;
        assert_int_equal(vec_hnsw_add(h, v, &id, &err), LP_OK);
        assert_int_equal(id, (uint32_t)i);
    }
    assert_int_equal(vec_hnsw_search(h, q, 64, 0, NULL, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 40);
    for (i = 0; i < 40; i++) assert_int_equal(aHit[i].id, (uint32_t)i);
    /* A large index on one dimension goes through the graph. */
    for (i = 40; i < 3000; i++) {
        v[0] = (float)i;
        assert_int_equal(vec_hnsw_add(h, v, &id, &err), LP_OK);
    }
    q[0] = 1000.2f;
    assert_int_equal(vec_hnsw_search(h, q, 3, 0, NULL, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(st.path, VEC_PATH_GRAPH);
    assert_int_equal(nHit, 3);
    assert_int_equal(aHit[0].id, 1000);
    assert_int_equal(aHit[1].id, 1001);
    assert_int_equal(aHit[2].id, 999);
    /* Range on a line: [996.9, 1003.5] holds 997..1003. */
    assert_int_equal(vec_hnsw_range(h, q, 3.3f * 3.3f, 100, 0, NULL, aHit, &nHit, &st, &err), LP_OK);
    assert_int_equal(nHit, 7);

    /* Bad arguments. */
    assert_int_equal(vec_hnsw_search(h, q, 0, 0, NULL, aHit, &nHit, &st, &err), LP_BADINPUT);
    assert_int_equal(vec_hnsw_range(h, q, NAN, 5, 0, NULL, aHit, &nHit, &st, &err), LP_BADINPUT);
    q[0] = NAN;
    assert_int_equal(vec_hnsw_search(h, q, 1, 0, NULL, aHit, &nHit, &st, &err), LP_BADINPUT);
    assert_int_equal(vec_hnsw_add(h, q, &id, &err), LP_BADINPUT);
    assert_int_equal(vec_hnsw_count(h), 3000);
    vec_hnsw_free(h);

    /* Duplicates: 300 copies of one vector and one other; ties by id. */
    vec_hnsw_config_init(&cfg, 4, VEC_COSINE);
    h = vec_hnsw_new(&cfg, &err);
    assert_non_null(h);
    for (i = 0; i < 300; i++) {
        float d[4] = {1, 2, 3, 4};
        assert_int_equal(vec_hnsw_add(h, d, &id, &err), LP_OK);
    }
    {
        float o[4] = {-1, 0, 0, 0}, qd[4] = {2, 4, 6, 8};
        assert_int_equal(vec_hnsw_add(h, o, &id, &err), LP_OK);
        assert_int_equal(vec_hnsw_search(h, qd, 10, 0, NULL, aHit, &nHit, &st, &err), LP_OK);
        assert_int_equal(nHit, 10);
        for (i = 0; i < 10; i++) assert_true(fabsf(aHit[i].dist) < 1e-5f);
        /* Every tie is broken by id: whichever copies the graph found,
        ** they come in increasing id order. */
        for (i = 1; i < 10; i++) assert_true(aHit[i - 1].id < aHit[i].id);
        assert_int_equal(vec_hnsw_search(h, o, 1, 0, NULL, aHit, &nHit, &st, &err), LP_OK);
        assert_int_equal(aHit[0].id, 300);
        /* A zero vector stays zero (cosine distance 1 to everything). */
        memset(o, 0, sizeof(o));
        assert_int_equal(vec_hnsw_add(h, o, &id, &err), LP_OK);
        assert_int_equal(vec_hnsw_search_exact(h, qd, 302, NULL, aHit, &nHit, &st, &err), LP_OK);
        assert_int_equal(nHit, 302);
        assert_int_equal(aHit[300].id, 301);
        assert_true(fabsf(aHit[300].dist - 1) < 1e-5f);
    }
    vec_hnsw_free(h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recall_l2_clustered),
        cmocka_unit_test(test_recall_cosine_clustered),
        cmocka_unit_test(test_recall_uniform),
        cmocka_unit_test(test_exact_matches_brute),
        cmocka_unit_test(test_filtered),
        cmocka_unit_test(test_filter_fewer_than_k),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_concurrent_build),
        cmocka_unit_test(test_repair_unreachable),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
