/*
** distance.c — the scalar kernels and the run-time choice of kernels.
**
** Design. One API, three backends (as redis's ae.c over ae_epoll.c and
** ae_kqueue.c): the scalar kernels live here, the AVX2+FMA and AVX-512F
** ones in distance_avx2.c and distance_avx512.c, compiled for their ISA
** through function attributes so that the rest of the build stays baseline
** x86-64. The first vec_dist_init() (pthread_once) asks cpuid which ISAs
** the CPU has and xgetbv which register state the OS saves on a context
** switch (a CPU with AVX-512 under an OS that does not save ZMM state must
** not run AVX-512 code), applies LOUPE_VEC_ISA, and fixes the kernel table
** for the life of the process.
**
** The scalar kernels are the portable fallback (non-x86 builds and old
** CPUs). They keep four partial sums: independent chains run faster than
** one long dependency chain, and the rounding error grows more slowly.
*/
#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "util/error.h"
#include "util/log.h"
#include "vec/distance.h"
#include "vec/distance_int.h"

/* ------------------------------------------------------------ scalar */

float vec_l2_scalar(const float *a, const float *b, size_t n) {
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float d0 = a[i] - b[i], d1 = a[i + 1] - b[i + 1];
        float d2 = a[i + 2] - b[i + 2], d3 = a[i + 3] - b[i + 3];
        s0 += d0 * d0;
        s1 += d1 * d1;
        s2 += d2 * d2;
        s3 += d3 * d3;
    }
    for (; i < n; i++) {
        float d = a[i] - b[i];
        s0 += d * d;
    }
    return (s0 + s1) + (s2 + s3);
}

float vec_ip_scalar(const float *a, const float *b, size_t n) {
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return 1.0f - ((s0 + s1) + (s2 + s3));
}

void vec_l2_batch_scalar(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx, size_t n,
                         float *out) {
    for (size_t i = 0; i < nIdx; i++) out[i] = vec_l2_scalar(q, base + (aIdx ? aIdx[i] : i) * stride, n);
}

void vec_ip_batch_scalar(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx, size_t n,
                         float *out) {
    for (size_t i = 0; i < nIdx; i++) out[i] = vec_ip_scalar(q, base + (aIdx ? aIdx[i] : i) * stride, n);
}

/* ------------------------------------------------------ CPU features */

#if defined(__x86_64__)
/* XCR0, the register-state components the OS saves (read only after cpuid
** reported OSXSAVE, else xgetbv faults). Inline asm rather than _xgetbv(),
** which would need the xsave target for this file. */
static uint64_t read_xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

unsigned vec_isa_available(void) {
    unsigned m = 1u << VEC_ISA_SCALAR;
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return m;
    int bFma = (c >> 12) & 1, bOsxsave = (c >> 27) & 1, bAvx = (c >> 28) & 1;
    if (!bOsxsave || !bAvx) return m;
    uint64_t xcr0 = read_xcr0();
    /* Bits 1 (XMM) and 2 (YMM upper halves): the OS saves AVX state. */
    if ((xcr0 & 0x6) != 0x6) return m;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return m;
    int bAvx2 = (b >> 5) & 1, bAvx512f = (b >> 16) & 1;
    if (bAvx2 && bFma) m |= 1u << VEC_ISA_AVX2;
    /* Bits 5-7: opmask registers, ZMM0-15 upper halves, ZMM16-31. */
    if (bAvx512f && (xcr0 & 0xE0) == 0xE0) m |= 1u << VEC_ISA_AVX512;
#endif
    return m;
}

/* ---------------------------------------------------------- dispatch */

typedef struct VecKernels {
    VecDistFn xL2;        /* squared Euclidean */
    VecDistFn xIp;        /* 1 - dot (IP and COSINE) */
    VecBatchFn xL2Batch;  /* batched xL2 */
    VecBatchFn xIpBatch;  /* batched xIp */
} VecKernels;

/* Indexed by VecIsa; the x86 entries stay NULL elsewhere. */
static const VecKernels aKernels[3] = {
    [VEC_ISA_SCALAR] = {vec_l2_scalar, vec_ip_scalar, vec_l2_batch_scalar, vec_ip_batch_scalar},
#if defined(__x86_64__)
    [VEC_ISA_AVX2] = {vec_l2_avx2, vec_ip_avx2, vec_l2_batch_avx2, vec_ip_batch_avx2},
    [VEC_ISA_AVX512] = {vec_l2_avx512, vec_ip_avx512, vec_l2_batch_avx512, vec_ip_batch_avx512},
#endif
};

static const char *const azIsaName[3] = {"scalar", "avx2", "avx512"};

/* Written once under gOnce, read-only afterwards (pthread_once orders the
** writes before any caller's reads). */
static pthread_once_t gOnce = PTHREAD_ONCE_INIT;
static unsigned gAvail;  /* vec_isa_available() */
static VecIsa gIsa;      /* the ISA in use */

VecIsa vec_isa_pick(const char *zWant, unsigned mAvail, int *pbRefused) {
    VecIsa best = VEC_ISA_SCALAR;
    for (int i = VEC_ISA_AVX512; i > VEC_ISA_SCALAR; i--) {
        if (mAvail & (1u << i)) {
            best = (VecIsa)i;
            break;
        }
    }
    if (pbRefused) *pbRefused = 0;
    if (!zWant || !*zWant) return best;
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(zWant, azIsaName[i]) == 0 && (mAvail & (1u << i))) return (VecIsa)i;
    }
    if (pbRefused) *pbRefused = 1;
    return best;
}

static void choose_once(void) {
    gAvail = vec_isa_available();
    const char *zWant = getenv("LOUPE_VEC_ISA");
    int bRefused;
    gIsa = vec_isa_pick(zWant, gAvail, &bRefused);
    if (bRefused) {
        LOG_WARN("LOUPE_VEC_ISA=%s is unknown or not supported by this CPU; using %s", zWant, azIsaName[gIsa]);
    }
}

VecIsa vec_dist_init(void) {
    pthread_once(&gOnce, choose_once);
    return gIsa;
}

const char *vec_isa_name(VecIsa isa) {
    return (unsigned)isa < 3 ? azIsaName[isa] : "unknown";
}

VecDistFn vec_dist_fn_isa(VecMetric m, VecIsa isa) {
    vec_dist_init();
    if ((unsigned)isa >= 3 || !(gAvail & (1u << isa))) return NULL;
    return m == VEC_L2 ? aKernels[isa].xL2 : aKernels[isa].xIp;
}

VecBatchFn vec_batch_fn_isa(VecMetric m, VecIsa isa) {
    vec_dist_init();
    if ((unsigned)isa >= 3 || !(gAvail & (1u << isa))) return NULL;
    return m == VEC_L2 ? aKernels[isa].xL2Batch : aKernels[isa].xIpBatch;
}

VecDistFn vec_dist_fn(VecMetric m) {
    VecIsa isa = vec_dist_init();
    return m == VEC_L2 ? aKernels[isa].xL2 : aKernels[isa].xIp;
}

float vec_distance(VecMetric m, const float *a, const float *b, size_t n) {
    return vec_dist_fn(m)(a, b, n);
}

void vec_dist_batch(VecMetric m, const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx,
                    size_t n, float *out) {
    assert(stride >= n);
    VecIsa isa = vec_dist_init();
    VecBatchFn x = m == VEC_L2 ? aKernels[isa].xL2Batch : aKernels[isa].xIpBatch;
    x(q, base, stride, aIdx, nIdx, n, out);
}

/* Not a hot path (once per stored vector and per query), so it sums in
** double: the norm of a 1536-d vector keeps full float precision. */
float vec_normalize(float *v, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)v[i] * v[i];
    double norm = sqrt(s);
    if (norm == 0.0) return 0.0f;
    for (size_t i = 0; i < n; i++) v[i] = (float)(v[i] / norm);
    return (float)norm;
}
