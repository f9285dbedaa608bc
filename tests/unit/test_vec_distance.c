/*
** test_vec_distance.c — unit tests for src/vec/distance.c and its SIMD
** backends: every kernel of every ISA this CPU has (pair and batched, L2,
** IP, cosine) against a double-precision reference on random data of many
** dimensions, unaligned and ending right before an unmapped page (so any
** read past the end crashes the test); the CPU feature detection against
** the compiler's; the LOUPE_VEC_ISA choice, both as a pure function and
** end to end in a child process started with the variable set;
** vec_normalize; zero-length vectors.
**
** Random data comes from a constant-seeded PRNG, so failures reproduce.
*/
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "vec/distance.h"
#include "vec/distance_int.h"

static uint64_t g_rng = 0x5eedd157ULL;

static uint64_t rnd(void) {
    uint64_t x = (g_rng += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Uniform in [-1, 1). */
static float rndf(void) {
    return (float)((double)(rnd() >> 11) * 0x1.0p-52 - 1.0);
}

static void fill(float *v, size_t n, float scale) {
    for (size_t i = 0; i < n; i++) v[i] = scale * rndf();
}

/* 0..70 every one, then the sizes real models use and their neighbours. */
static const size_t aBigDim[] = {96, 127, 128, 129, 255, 256, 384, 511, 768, 1023, 1024, 1536};
#define N_SMALL_DIM 71
#define N_DIM (N_SMALL_DIM + sizeof(aBigDim) / sizeof(aBigDim[0]))

static size_t dim_at(size_t k) {
    return k < N_SMALL_DIM ? k : aBigDim[k - N_SMALL_DIM];
}

/* --------------------------------------------------------- reference */

/* The reference distance in double and the sum of the absolute values of
** its terms (the scale of the rounding error a float sum may make). */
static double ref_dist(VecMetric m, const float *a, const float *b, size_t n, double *pAbs) {
    double s = 0.0, abs = 0.0;
    for (size_t i = 0; i < n; i++) {
        double t = m == VEC_L2 ? ((double)a[i] - b[i]) * ((double)a[i] - b[i]) : (double)a[i] * b[i];
        s += t;
        abs += fabs(t);
    }
    *pAbs = abs;
    return m == VEC_L2 ? s : 1.0 - s;
}

static int close_enough(float got, double ref, double abs) {
    return fabs((double)got - ref) <= 1e-5 * (1.0 + fabs(ref) + abs);
}

static void check_dist(VecMetric m, const float *a, const float *b, size_t n, float got, const char *zWhat) {
    double abs, ref = ref_dist(m, a, b, n, &abs);
    if (!close_enough(got, ref, abs)) {
        fail_msg("%s metric %d n=%zu: got %.9g, reference %.9g", zWhat, (int)m, n, (double)got, ref);
    }
}

/* ------------------------------------------------- guarded buffers */

/* nFloat floats that end exactly where an unmapped page begins: a kernel
** that reads one float too many faults. */
typedef struct Guarded {
    void *pMap;   /* the mapping */
    size_t nMap;  /* its size, guard page included */
    float *a;     /* the floats */
} Guarded;

static void guarded_alloc(Guarded *g, size_t nFloat) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t nData = (nFloat * sizeof(float) + page - 1) / page * page;
    g->nMap = nData + page;
    g->pMap = mmap(NULL, g->nMap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(g->pMap != MAP_FAILED);
    assert_int_equal(mprotect((char *)g->pMap + nData, page, PROT_NONE), 0);
    g->a = (float *)((char *)g->pMap + nData) - nFloat;
}

static void guarded_free(Guarded *g) {
    munmap(g->pMap, g->nMap);
}

static const VecMetric aMetric[] = {VEC_L2, VEC_IP, VEC_COSINE};

/* ----------------------------------------------------------- tests */

/* The detection agrees with the compiler runtime's, which also checks that
** the OS saves the YMM/ZMM state. */
static void test_isa_detection(void **state) {
    (void)state;
    unsigned m = vec_isa_available();
    assert_true(m & (1u << VEC_ISA_SCALAR));
#if defined(__x86_64__)
    __builtin_cpu_init();
    int bAvx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int bAvx512 = !!__builtin_cpu_supports("avx512f");
    assert_int_equal(!!(m & (1u << VEC_ISA_AVX2)), bAvx2);
    assert_int_equal(!!(m & (1u << VEC_ISA_AVX512)), bAvx512);
#else
    assert_int_equal(m, 1u << VEC_ISA_SCALAR);
#endif
    for (int isa = 0; isa < 3; isa++) {
        int bHas = (m >> isa) & 1;
        for (size_t k = 0; k < 3; k++) {
            assert_int_equal(vec_dist_fn_isa(aMetric[k], (VecIsa)isa) != NULL, bHas);
            assert_int_equal(vec_batch_fn_isa(aMetric[k], (VecIsa)isa) != NULL, bHas);
        }
    }
    assert_null(vec_dist_fn_isa(VEC_L2, (VecIsa)3));
    /* The kernels in use are those of the chosen ISA; cosine is IP's. */
    VecIsa isa = vec_dist_init();
    assert_true(m & (1u << isa));
    assert_int_equal(isa, vec_isa_pick(getenv("LOUPE_VEC_ISA"), m, NULL));
    assert_ptr_equal(vec_dist_fn(VEC_L2), vec_dist_fn_isa(VEC_L2, isa));
    assert_ptr_equal(vec_dist_fn(VEC_IP), vec_dist_fn_isa(VEC_IP, isa));
    assert_ptr_equal(vec_dist_fn(VEC_COSINE), vec_dist_fn(VEC_IP));
    assert_string_equal(vec_isa_name(VEC_ISA_SCALAR), "scalar");
    assert_string_equal(vec_isa_name(VEC_ISA_AVX2), "avx2");
    assert_string_equal(vec_isa_name(VEC_ISA_AVX512), "avx512");
}

static void test_isa_pick(void **state) {
    (void)state;
    unsigned all = 7, noAvx512 = 3, scalarOnly = 1;
    int bRefused = -1;
    assert_int_equal(vec_isa_pick(NULL, all, &bRefused), VEC_ISA_AVX512);
    assert_int_equal(bRefused, 0);
    assert_int_equal(vec_isa_pick("", noAvx512, &bRefused), VEC_ISA_AVX2);
    assert_int_equal(bRefused, 0);
    assert_int_equal(vec_isa_pick(NULL, scalarOnly, NULL), VEC_ISA_SCALAR);
    assert_int_equal(vec_isa_pick(NULL, 1u | (1u << VEC_ISA_AVX512), NULL), VEC_ISA_AVX512);
    assert_int_equal(vec_isa_pick("scalar", all, &bRefused), VEC_ISA_SCALAR);
    assert_int_equal(bRefused, 0);
    assert_int_equal(vec_isa_pick("avx2", all, &bRefused), VEC_ISA_AVX2);
    assert_int_equal(bRefused, 0);
    assert_int_equal(vec_isa_pick("AVX512", all, &bRefused), VEC_ISA_AVX512);
    assert_int_equal(bRefused, 0);
    /* Refused: the CPU lacks it, or no such name; the best is used. */
    assert_int_equal(vec_isa_pick("avx512", noAvx512, &bRefused), VEC_ISA_AVX2);
    assert_int_equal(bRefused, 1);
    assert_int_equal(vec_isa_pick("avx2", scalarOnly, &bRefused), VEC_ISA_SCALAR);
    assert_int_equal(bRefused, 1);
    assert_int_equal(vec_isa_pick("sse", all, &bRefused), VEC_ISA_AVX512);
    assert_int_equal(bRefused, 1);
}

/* Runs this test binary with LOUPE_VEC_ISA=zWant (NULL: unset) and
** --print-isa; returns the ISA name it printed (static buffer). */
static const char *child_isa(const char *zWant) {
    static char zOut[64];
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        /* The refusal warning is expected; keep the test output clean. */
        int fdNull = open("/dev/null", O_WRONLY);
        if (fdNull >= 0) dup2(fdNull, 2);
        if (zWant) setenv("LOUPE_VEC_ISA", zWant, 1);
        else unsetenv("LOUPE_VEC_ISA");
        execl("/proc/self/exe", "test_vec_distance", "--print-isa", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t nOut = 0;
    ssize_t r;
    while (nOut < sizeof(zOut) - 1 && (r = read(fd[0], zOut + nOut, sizeof(zOut) - 1 - nOut)) > 0) nOut += (size_t)r;
    close(fd[0]);
    zOut[nOut] = 0;
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *zNl = strchr(zOut, '\n');
    if (zNl) *zNl = 0;
    return zOut;
}

/* LOUPE_VEC_ISA end to end: each ISA the CPU has is chosen when named, one
** it lacks or an unknown name gives the best. */
static void test_isa_env(void **state) {
    (void)state;
    unsigned m = vec_isa_available();
    const char *zBest = vec_isa_name(vec_isa_pick(NULL, m, NULL));
    assert_string_equal(child_isa(NULL), zBest);
    assert_string_equal(child_isa("bogus"), zBest);
    for (int isa = 0; isa < 3; isa++) {
        const char *zName = vec_isa_name((VecIsa)isa);
        assert_string_equal(child_isa(zName), (m >> isa) & 1 ? zName : zBest);
    }
}

/* Every pair kernel of every ISA, every dimension, aligned or not, each
** vector ending at a guard page. */
static void test_pair_kernels(void **state) {
    (void)state;
    Guarded ga, gb;
    size_t nMax = dim_at(N_DIM - 1);
    guarded_alloc(&ga, nMax + 1);
    guarded_alloc(&gb, nMax + 1);
    for (int isa = 0; isa < 3; isa++) {
        for (size_t im = 0; im < 3; im++) {
            VecDistFn x = vec_dist_fn_isa(aMetric[im], (VecIsa)isa);
            if (!x) continue;
            for (size_t k = 0; k < N_DIM; k++) {
                size_t n = dim_at(k);
                for (int rep = 0; rep < 4; rep++) {
                    /* rep & 1: one vector one float off the other's
                    ** alignment; rep & 2: values of a larger scale. */
                    float *a = ga.a + nMax + 1 - n - (rep & 1);
                    float *b = gb.a + nMax + 1 - n;
                    float scale = rep & 2 ? 37.5f : 1.0f;
                    fill(a, n, scale);
                    fill(b, n, scale);
                    if (aMetric[im] == VEC_COSINE) {
                        vec_normalize(a, n);
                        vec_normalize(b, n);
                    }
                    check_dist(aMetric[im], a, b, n, x(a, b, n), vec_isa_name((VecIsa)isa));
                    /* A vector against itself: L2 exactly 0. */
                    if (aMetric[im] == VEC_L2) assert_true(x(a, a, n) == 0.0f);
                }
            }
        }
    }
    guarded_free(&ga);
    guarded_free(&gb);
}

/* The batched kernels of every ISA against the reference and against the
** pair kernel: rows in order and through an index list (with repeats), row
** counts around the 4-row blocking, stride > n, the last row ending at a
** guard page, nothing written past out[nIdx). */
static void test_batch_kernels(void **state) {
    (void)state;
    static const size_t aRows[] = {0, 1, 3, 4, 5, 7, 8, 9, 13, 37};
    enum { MAX_ROWS = 37 };
    size_t nMax = dim_at(N_DIM - 1);
    Guarded gq, gbase;
    guarded_alloc(&gq, nMax + 1);
    guarded_alloc(&gbase, (size_t)MAX_ROWS * (nMax + 3));
    uint32_t aIdx[MAX_ROWS];
    float out[MAX_ROWS + 1];
    for (int isa = 0; isa < 3; isa++) {
        for (size_t im = 0; im < 3; im++) {
            VecBatchFn xb = vec_batch_fn_isa(aMetric[im], (VecIsa)isa);
            VecDistFn x = vec_dist_fn_isa(aMetric[im], (VecIsa)isa);
            if (!xb) continue;
            for (size_t k = 0; k < N_DIM; k++) {
                size_t n = dim_at(k), stride = n + (k & 3);
                float *q = gq.a + nMax + 1 - n - (k & 1);
                fill(q, n, 1.0f);
                for (size_t ir = 0; ir < sizeof(aRows) / sizeof(aRows[0]); ir++) {
                    size_t nRow = aRows[ir];
                    /* The rows end at the guard: the last one's n floats
                    ** are the last floats mapped. */
                    float *base = gbase.a + (size_t)MAX_ROWS * (nMax + 3) - (nRow ? (nRow - 1) * stride + n : 0);
                    fill(base, nRow ? (nRow - 1) * stride + n : 0, 1.0f);
                    if (aMetric[im] == VEC_COSINE) {
                        vec_normalize(q, n);
                        for (size_t r = 0; r < nRow; r++) vec_normalize(base + r * stride, n);
                    }
                    for (int bIdx = 0; bIdx < 2; bIdx++) {
                        for (size_t i = 0; i < nRow; i++) aIdx[i] = (uint32_t)(rnd() % nRow);
                        out[nRow] = -12345.0f;
                        xb(q, base, stride, bIdx ? aIdx : NULL, nRow, n, out);
                        assert_true(out[nRow] == -12345.0f);
                        for (size_t i = 0; i < nRow; i++) {
                            const float *row = base + (bIdx ? aIdx[i] : i) * stride;
                            check_dist(aMetric[im], q, row, n, out[i], vec_isa_name((VecIsa)isa));
                            double abs, ref = ref_dist(aMetric[im], q, row, n, &abs);
                            float pair = x(q, row, n);
                            /* Both within the tolerance of the reference,
                            ** so within twice of each other. */
                            assert_true(fabs((double)out[i] - pair) <= 2e-5 * (1.0 + fabs(ref) + abs));
                        }
                    }
                }
            }
        }
    }
    guarded_free(&gq);
    guarded_free(&gbase);
}

/* The public entry points use the chosen kernels. */
static void test_public_api(void **state) {
    (void)state;
    enum { N = 384, ROWS = 10 };
    float q[N], base[ROWS * N], out[ROWS];
    fill(q, N, 1.0f);
    fill(base, ROWS * N, 1.0f);
    for (size_t im = 0; im < 3; im++) {
        VecMetric m = aMetric[im];
        vec_dist_batch(m, q, base, N, NULL, ROWS, N, out);
        for (int i = 0; i < ROWS; i++) {
            float one = vec_distance(m, q, base + i * N, N);
            assert_true(one == vec_dist_fn(m)(q, base + i * N, N));
            check_dist(m, q, base + i * N, N, one, "vec_distance");
            check_dist(m, q, base + i * N, N, out[i], "vec_dist_batch");
        }
    }
}

static void test_zero_length(void **state) {
    (void)state;
    float a[1] = {3.0f}, b[1] = {-2.0f}, out[5];
    uint32_t aIdx[4] = {0, 0, 0, 0};
    for (int isa = 0; isa < 3; isa++) {
        VecDistFn l2 = vec_dist_fn_isa(VEC_L2, (VecIsa)isa);
        if (!l2) continue;
        assert_true(l2(a, b, 0) == 0.0f);
        assert_true(vec_dist_fn_isa(VEC_IP, (VecIsa)isa)(a, b, 0) == 1.0f);
        assert_true(vec_dist_fn_isa(VEC_COSINE, (VecIsa)isa)(a, b, 0) == 1.0f);
        for (int bIdx = 0; bIdx < 2; bIdx++) {
            out[4] = 7.0f;
            vec_batch_fn_isa(VEC_L2, (VecIsa)isa)(a, b, 0, bIdx ? aIdx : NULL, 4, 0, out);
            for (int i = 0; i < 4; i++) assert_true(out[i] == 0.0f);
            vec_batch_fn_isa(VEC_IP, (VecIsa)isa)(a, b, 0, bIdx ? aIdx : NULL, 4, 0, out);
            for (int i = 0; i < 4; i++) assert_true(out[i] == 1.0f);
            assert_true(out[4] == 7.0f);
        }
    }
    assert_true(vec_distance(VEC_L2, a, b, 0) == 0.0f);
    assert_true(vec_normalize(a, 0) == 0.0f);
    assert_true(a[0] == 3.0f);
}

static void test_normalize(void **state) {
    (void)state;
    float v[1536], w[1536];
    for (size_t k = 1; k < N_DIM; k++) {
        size_t n = dim_at(k);
        fill(v, n, 5.0f);
        double s = 0.0;
        for (size_t i = 0; i < n; i++) s += (double)v[i] * v[i];
        memcpy(w, v, n * sizeof(float));
        float norm = vec_normalize(v, n);
        assert_true(fabs(norm - sqrt(s)) <= 1e-6 * sqrt(s));
        double s1 = 0.0;
        for (size_t i = 0; i < n; i++) {
            s1 += (double)v[i] * v[i];
            /* Direction kept: each component scaled by the same 1/norm. */
            assert_true(fabs(v[i] - w[i] / sqrt(s)) <= 1e-6);
        }
        assert_true(fabs(s1 - 1.0) <= 1e-6);
        /* Cosine of a unit vector with itself is 0, with its negation 2. */
        for (size_t i = 0; i < n; i++) w[i] = -v[i];
        assert_true(fabsf(vec_distance(VEC_COSINE, v, v, n)) <= 1e-5f);
        assert_true(fabsf(vec_distance(VEC_COSINE, v, w, n) - 2.0f) <= 1e-5f);
    }
    /* The zero vector stays as it is. */
    float z[5] = {0};
    assert_true(vec_normalize(z, 5) == 0.0f);
    for (int i = 0; i < 5; i++) assert_true(z[i] == 0.0f);
    /* Magnitudes whose squares overflow float still normalise. */
    float big[3] = {3e30f, 4e30f, 0.0f};
    assert_true(fabsf(vec_normalize(big, 3) - 5e30f) <= 1e24f);
    assert_true(fabsf(big[0] - 0.6f) <= 1e-7f && fabsf(big[1] - 0.8f) <= 1e-7f && big[2] == 0.0f);
}

int main(int argc, char **argv) {
    /* The child of test_isa_env: report the choice and stop. */
    if (argc == 2 && strcmp(argv[1], "--print-isa") == 0) {
        printf("%s\n", vec_isa_name(vec_dist_init()));
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_isa_detection),
        cmocka_unit_test(test_isa_pick),
        cmocka_unit_test(test_isa_env),
        cmocka_unit_test(test_pair_kernels),
        cmocka_unit_test(test_batch_kernels),
        cmocka_unit_test(test_public_api),
        cmocka_unit_test(test_zero_length),
        cmocka_unit_test(test_normalize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
