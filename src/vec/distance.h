/*
** distance.h — float32 vector distances, SIMD, chosen at run time.
**
** Contract. Every function here takes vectors of n float32 (any n >= 0,
** not only multiples of the SIMD width; no alignment needed) and returns
** a distance where smaller means closer:
**   VEC_L2      the squared Euclidean distance, sum (a_i - b_i)^2
**   VEC_IP      1 - sum a_i * b_i (inner product as a distance, as hnswlib)
**   VEC_COSINE  1 - sum a_i * b_i of vectors the caller has normalised to
**               unit length (vec_normalize): cosine is IP on unit vectors,
**               so the kernels are IP's
** Kernels exist in a scalar reference, AVX2+FMA and AVX-512F versions; the
** first call of vec_dist_init() (called by the others as needed) picks the
** best the CPU offers (cpuid/xgetbv), or the one named by the environment
** variable LOUPE_VEC_ISA ("scalar", "avx2", "avx512"; one the CPU lacks is
** refused and the best available is used) so tests can run every path.
** SIMD sums associate differently from the scalar loop: results agree to
** float rounding (relative 1e-5 for n up to a few thousand), not bit for
** bit.
**
** Batched forms compute one query against many vectors (exact scans, graph
** construction) without a call per pair.
**
** Thread safety: all functions may be called from any thread; the choice
** of kernels is made once (pthread_once).
*/
#ifndef LP_VEC_DISTANCE_H
#define LP_VEC_DISTANCE_H

#include <stddef.h>
#include <stdint.h>

typedef enum VecMetric { VEC_L2 = 0, VEC_IP = 1, VEC_COSINE = 2 } VecMetric;

typedef enum VecIsa { VEC_ISA_SCALAR = 0, VEC_ISA_AVX2 = 1, VEC_ISA_AVX512 = 2 } VecIsa;

/* A distance kernel: smaller is closer (see above). */
typedef float (*VecDistFn)(const float *a, const float *b, size_t n);

/* Picks the kernels (idempotent). Returns the instruction set in use. */
VecIsa vec_dist_init(void);
/* "scalar", "avx2" or "avx512". */
const char *vec_isa_name(VecIsa isa);

/* The kernel for metric m with the chosen instruction set. */
VecDistFn vec_dist_fn(VecMetric m);
/* The same for a given instruction set (tests); NULL when the CPU lacks it. */
VecDistFn vec_dist_fn_isa(VecMetric m, VecIsa isa);

/* Convenience: one distance. */
float vec_distance(VecMetric m, const float *a, const float *b, size_t n);

/* out[i] = distance(q, base + aIdx[i] * stride) for i < nIdx (aIdx NULL:
** rows 0..nIdx-1). stride is in floats (>= n). */
void vec_dist_batch(VecMetric m, const float *q, const float *base, size_t stride,
                    const uint32_t *aIdx, size_t nIdx, size_t n, float *out);

/* Scales v to unit length in place; returns its norm before (0 leaves the
** zero vector unchanged). */
float vec_normalize(float *v, size_t n);

#endif /* LP_VEC_DISTANCE_H */
