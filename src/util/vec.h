/*
** vec.h — type-generic growable arrays.
**
** Contract. VEC(T) declares an anonymous struct {T *a; size_t n, cap;}.
** A zero-initialised VEC is empty and valid. VEC_PUSH appends one element
** and evaluates to LP_OK, or LP_NOMEM when growing failed (the array is then
** unchanged). VEC_RESERVE makes room for at least `need` elements in total.
** VEC_FREE releases the storage and leaves an empty, valid VEC. The element
** storage is one malloc'd block; a pointer into it is invalidated by any
** push that grows it.
**
**     VEC(int) v = {0};
**     if (VEC_PUSH(&v, 42)) return LP_NOMEM;
**     ... v.a[0], v.n ...
**     VEC_FREE(&v);
**
** Thread safety: none.
*/
#ifndef LP_UTIL_VEC_H
#define LP_UTIL_VEC_H

#include <stddef.h>
#include <stdlib.h>

#include "util/error.h"

#define VEC(T) struct { T *a; size_t n; size_t cap; }

/* Grows *pa (elements of elsz bytes, capacity *pcap) to hold at least need
** elements, doubling. Returns LP_OK or LP_NOMEM (nothing changed). */
int vec_grow_(void **pa, size_t *pcap, size_t need, size_t elsz);

#define VEC_RESERVE(v, need)                                                      \
    ((need) <= (v)->cap ? LP_OK                                                   \
                        : vec_grow_((void **)&(v)->a, &(v)->cap, (need), sizeof(*(v)->a)))

#define VEC_PUSH(v, x)                                                             \
    (VEC_RESERVE((v), (v)->n + 1) == LP_OK ? ((v)->a[(v)->n++] = (x), LP_OK) : LP_NOMEM)

#define VEC_FREE(v) (free((v)->a), (v)->a = NULL, (v)->n = 0, (v)->cap = 0)

#endif /* LP_UTIL_VEC_H */
