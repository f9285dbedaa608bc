/*
** distance_int.h — internals of vec/distance: the per-ISA kernels and the
** choice logic, shared by distance.c, distance_avx2.c, distance_avx512.c
** and the unit tests. Not part of the public contract (see distance.h).
**
** Every ISA provides four functions: the L2 and IP pair kernels (VecDistFn;
** the IP one returns 1 - dot) and their batched forms (VecBatchFn, the
** semantics of vec_dist_batch for one metric). The AVX2 and AVX-512 ones
** exist on x86-64 only and may be called only when the CPU and the OS
** support that ISA (vec_isa_available).
*/
#ifndef LP_VEC_DISTANCE_INT_H
#define LP_VEC_DISTANCE_INT_H

#include "vec/distance.h"

/* out[i] = kernel(q, base + (aIdx ? aIdx[i] : i) * stride, n), i < nIdx. */
typedef void (*VecBatchFn)(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx,
                           size_t n, float *out);

float vec_l2_scalar(const float *a, const float *b, size_t n);
float vec_ip_scalar(const float *a, const float *b, size_t n);
void vec_l2_batch_scalar(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx, size_t n,
                         float *out);
void vec_ip_batch_scalar(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx, size_t n,
                         float *out);

#if defined(__x86_64__)
float vec_l2_avx2(const float *a, const float *b, size_t n);
float vec_ip_avx2(const float *a, const float *b, size_t n);
void vec_l2_batch_avx2(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx, size_t n,
                       float *out);
void vec_ip_batch_avx2(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx, size_t n,
                       float *out);

float vec_l2_avx512(const float *a, const float *b, size_t n);
float vec_ip_avx512(const float *a, const float *b, size_t n);
void vec_l2_batch_avx512(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx, size_t n,
                         float *out);
void vec_ip_batch_avx512(const float *q, const float *base, size_t stride, const uint32_t *aIdx, size_t nIdx, size_t n,
                         float *out);
#endif

/* Bit (1u << isa) set for every ISA this CPU and OS support (scalar always). */
unsigned vec_isa_available(void);

/* The choice vec_dist_init makes: the ISA named by zWant (the value of
** LOUPE_VEC_ISA; NULL or "" when unset) if it is in mAvail, else the best
** in mAvail. *pbRefused (may be NULL) is set to 1 when zWant named nothing
** usable (unknown name or an ISA missing from mAvail), else 0. Pure, so the
** tests can exercise it without the environment. */
VecIsa vec_isa_pick(const char *zWant, unsigned mAvail, int *pbRefused);

/* The batched kernel for metric m and a given ISA; NULL when the CPU lacks
** it (tests). */
VecBatchFn vec_batch_fn_isa(VecMetric m, VecIsa isa);

#endif /* LP_VEC_DISTANCE_INT_H */
