/*
** distance_avx2.c — AVX2+FMA kernels (8 floats a register).
**
** The same design as distance_avx512.c at half the width (read that file's
** header): target attributes instead of -m flags, four accumulators in the
** pair kernels; in the batched kernels, indexed rows four at a time with two
** accumulators each and the next four prefetched, consecutive rows one at a
** time through the pair kernel. The last n % 8 floats go through
** vmaskmovps, which neither reads nor faults on masked-off lanes, so any n
** and alignment is safe without a scalar tail.
*/
#include "vec/distance_int.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define LP_AVX2 __attribute__((target("avx2,fma")))
#define LP_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) static inline

/* Eight -1 then eight 0: loading 8 ints at offset 8 - r gives a mask whose
** low r lanes are set. */
static const int32_t aTailMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* The lanes of the last, partial register (0 < r < 8). */
LP_AVX2_INLINE __m256i tail_mask(size_t r) {
    return _mm256_loadu_si256((const __m256i *)(aTailMask + 8 - r));
}

/* acc += (a - b)^2 for L2, acc += a * b for IP (bL2 constant at each call). */
LP_AVX2_INLINE __m256 step(__m256 acc, __m256 a, __m256 b, int bL2) {
    if (bL2) {
        __m256 d = _mm256_sub_ps(a, b);
        return _mm256_fmadd_ps(d, d, acc);
    }
    return _mm256_fmadd_ps(a, b, acc);
}

LP_AVX2_INLINE float hsum(__m256 v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
}

LP_AVX2_INLINE float pair(const float *a, const float *b, size_t n, int bL2) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = step(s0, _mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), bL2);
        s1 = step(s1, _mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), bL2);
        s2 = step(s2, _mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), bL2);
        s3 = step(s3, _mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), bL2);
    }
    for (; i + 8 <= n; i += 8) s0 = step(s0, _mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), bL2);
    if (i < n) {
        __m256i m = tail_mask(n - i);
        s1 = step(s1, _mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m), bL2);
    }
    return hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

LP_AVX2 float vec_l2_avx2(const float *a, const float *b, size_t n) {
    return pair(a, b, n, 1);
}

LP_AVX2 float vec_ip_avx2(const float *a, const float *b, size_t n) {
    return 1.0f - pair(a, b, n, 0);
}

/* The horizontal sums of a, b, c, d as one 4-float vector. */
LP_AVX2_INLINE __m128 hsum4(__m256 a, __m256 b, __m256 c, __m256 d) {
    __m256 ab = _mm256_add_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
    __m256 cd = _mm256_add_ps(_mm256_unpacklo_ps(c, d), _mm256_unpackhi_ps(c, d));
    __m256 abcd = _mm256_add_ps(_mm256_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)),
                                _mm256_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
    return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

/* out[0..3] = the L2 sums (bL2) or the dot products of q with r[0..3]. */
LP_AVX2_INLINE void rows4(const float *q, const float *const r[4], size_t n, int bL2, float *out) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    __m256 b0 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps(), b2 = _mm256_setzero_ps(), b3 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 q0 = _mm256_loadu_ps(q + i), q1 = _mm256_loadu_ps(q + i + 8);
        a0 = step(a0, q0, _mm256_loadu_ps(r[0] + i), bL2);
        a1 = step(a1, q0, _mm256_loadu_ps(r[1] + i), bL2);
        a2 = step(a2, q0, _mm256_loadu_ps(r[2] + i), bL2);
        a3 = step(a3, q0, _mm256_loadu_ps(r[3] + i), bL2);
        b0 = step(b0, q1, _mm256_loadu_ps(r[0] + i + 8), bL2);
        b1 = step(b1, q1, _mm256_loadu_ps(r[1] + i + 8), bL2);
        b2 = step(b2, q1, _mm256_loadu_ps(r[2] + i + 8), bL2);
        b3 = step(b3, q1, _mm256_loadu_ps(r[3] + i + 8), bL2);
    }
    if (i + 8 <= n) {
        __m256 q0 = _mm256_loadu_ps(q + i);
        a0 = step(a0, q0, _mm256_loadu_ps(r[0] + i), bL2);
        a1 = step(a1, q0, _mm256_loadu_ps(r[1] + i), bL2);
        a2 = step(a2, q0, _mm256_loadu_ps(r[2] + i), bL2);
        a3 = step(a3, q0, _mm256_loadu_ps(r[3] + i), bL2);
        i += 8;
    }
    if (i < n) {
        __m256i m = tail_mask(n - i);
        __m256 q0 = _mm256_maskload_ps(q + i, m);
        b0 = step(b0, q0, _mm256_maskload_ps(r[0] + i, m), bL2);
        b1 = step(b1, q0, _mm256_maskload_ps(r[1] + i, m), bL2);
        b2 = step(b2, q0, _mm256_maskload_ps(r[2] + i, m), bL2);
        b3 = step(b3, q0, _mm256_maskload_ps(r[3] + i, m), bL2);
    }
    __m128 s = hsum4(_mm256_add_ps(a0, b0), _mm256_add_ps(a1, b1), _mm256_add_ps(a2, b2), _mm256_add_ps(a3, b3));
    if (!bL2) s = _mm_sub_ps(_mm_set1_ps(1.0f), s);
    _mm_storeu_ps(out, s);
}

/* Every cache line of a row of n floats, into L1. */
LP_AVX2_INLINE void prefetch_row(const float *p, size_t n) {
    for (size_t o = 0; o < n; o += 16) _mm_prefetch((const char *)(p + o), _MM_HINT_T0);
}

LP_AVX2_INLINE void batch(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx,
                          size_t n, float *out, int bL2) {
    size_t i = 0;
    /* Only indexed rows are blocked by four; consecutive rows go one at a
    ** time (see the header). */
    for (; aIdx && i + 4 <= nIdx; i += 4) {
        const float *r[4];
        for (int k = 0; k < 4; k++) r[k] = base + aIdx[i + k] * stride;
        for (size_t k = i + 4; k < i + 8 && k < nIdx; k++) prefetch_row(base + aIdx[k] * stride, n);
        rows4(q, r, n, bL2, out + i);
    }
    for (; i < nIdx; i++) out[i] = bL2 ? vec_l2_avx2(q, base + (aIdx ? aIdx[i] : i) * stride, n)
                                       : vec_ip_avx2(q, base + (aIdx ? aIdx[i] : i) * stride, n);
}

LP_AVX2 void vec_l2_batch_avx2(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx,
                               size_t n, float *out) {
    batch(q, base, stride, aIdx, nIdx, n, out, 1);
}

LP_AVX2 void vec_ip_batch_avx2(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx,
                               size_t n, float *out) {
    batch(q, base, stride, aIdx, nIdx, n, out, 0);
}

#endif /* __x86_64__ */
