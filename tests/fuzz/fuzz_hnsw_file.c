/*
** fuzz_hnsw_file.c — libFuzzer target for the sealed HNSW file reader
** (vec_hnsw_open_mem in src/vec/hnsw.c).
**
** Each input is taken as a whole graph file and opened from memory with
** the checksums off (VEC_HNSW_NOCHECKSUM), so that mutations reach the
** structure checks instead of stopping at a CRC. When it opens, the graph
** is used as a server would: top-k searches at several k and ef, with a
** bitmap filter, a callback filter, exact searches, range searches, the
** stored vectors as queries, and a writable copy that takes a few more
** rows (inserting links into lists that came from the file). Beyond "no
** crash, no leak, no out-of-bounds read, no hang" (the sanitizers and
** -timeout) it checks the promises: a refused file is LP_CORRUPT naming
** it, with no graph returned; hits are rows, nearest first, at most k,
** and pass the filter.
**
** Seeds: tests/fuzz/corpus/hnsw_file/, made by gen_hnsw_file.c.
*/
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/bitset.h"
#include "vec/hnsw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.hnsw"
#define MAX_K 32

static void expect_corrupt(int rc, const LpError *err) {
    if (rc != LP_CORRUPT || err->code != LP_CORRUPT || !strstr(err->zMsg, NAME)) abort();
}

/* Whether distances are ordered: a file may hold finite components whose
** products overflow (inf - inf is NaN in an inner product), as an
** in-memory graph may; NaN distances have no order, so order and radius
** are only checked for moderate vectors. */
static int g_bOrdered;

/* Hits are rows, ascending by distance, at most k, allowed by pAllow. */
static void check_hits(VecHnsw *h, const VecHit *a, int n, int k, const Bitset *pAllow) {
    int i;
    if (n < 0 || n > k) abort();
    for (i = 0; i < n; i++) {
        if (a[i].id >= vec_hnsw_count(h)) abort();
        if (pAllow && !bitset_test(pAllow, a[i].id)) abort();
        if (g_bOrdered && i && !(a[i - 1].dist <= a[i].dist)) abort();
    }
}

static int cb_odd(void *pCtx, uint32_t id) {
    (void)pCtx;
    return id & 1;
}

/* Every search on query q. */
static void search_all(VecHnsw *h, const float *q, int k, int ef, const Bitset *pAllow) {
    VecHit aHit[MAX_K];
    VecFilter fBit = {0}, fCb = {0};
    VecSearchStats st;
    LpError err;
    int nHit;
    fBit.pAllow = pAllow;
    fBit.nAllow = -1;
    fCb.xAllow = cb_odd;
    fCb.nAllow = -1;
    if (vec_hnsw_search(h, q, k, ef, NULL, aHit, &nHit, &st, &err) != LP_OK) abort();
    check_hits(h, aHit, nHit, k, NULL);
    /* Unfiltered top-k returns min(k, rows). */
    if ((uint32_t)nHit != (vec_hnsw_count(h) < (uint32_t)k ? vec_hnsw_count(h) : (uint32_t)k)) abort();
    if (vec_hnsw_search(h, q, k, ef, &fBit, aHit, &nHit, &st, &err) != LP_OK) abort();
    check_hits(h, aHit, nHit, k, pAllow);
    if (vec_hnsw_search(h, q, k, ef, &fCb, aHit, &nHit, &st, &err) != LP_OK) abort();
    check_hits(h, aHit, nHit, k, NULL);
    if (vec_hnsw_search_exact(h, q, k, &fBit, aHit, &nHit, &st, &err) != LP_OK) abort();
    check_hits(h, aHit, nHit, k, pAllow);
    if (vec_hnsw_search_exact(h, q, k, NULL, aHit, &nHit, &st, &err) != LP_OK) abort();
    check_hits(h, aHit, nHit, k, NULL);
    {
        float radius = nHit ? aHit[nHit - 1].dist : 1.0f;
        if (!isfinite(radius)) radius = 1.0f;
        if (vec_hnsw_range(h, q, radius, k, ef, NULL, aHit, &nHit, &st, &err) != LP_OK) abort();
        check_hits(h, aHit, nHit, k, NULL);
        for (int i = 0; i < nHit && g_bOrdered; i++)
            if (!(aHit[i].dist <= radius)) abort();
        if (vec_hnsw_range(h, q, radius, k, ef, &fBit, aHit, &nHit, &st, &err) != LP_OK) abort();
        check_hits(h, aHit, nHit, k, pAllow);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* A heap copy of exactly size bytes, so ASan catches any read past the
    ** end (malloc's alignment satisfies open_mem's 4 bytes). */
    uint8_t *a = malloc(size ? size : 1);
    VecHnsw *h = (VecHnsw *)1;
    LpError err;
    int rc;
    if (!a) return 0;
    if (size) memcpy(a, data, size);
    rc = vec_hnsw_open_mem(a, size, NAME, VEC_HNSW_NOCHECKSUM, &h, &err);
    if (rc != LP_OK) {
        if (h) abort();
        if (rc != LP_NOMEM) expect_corrupt(rc, &err);
        free(a);
        return 0;
    }

    uint32_t n = vec_hnsw_count(h), dims = vec_hnsw_dims(h), i;
    float *q = malloc(sizeof(float) * dims);
    Bitset allow;
    if (!q || bitset_init(&allow, n ? n : 1) != LP_OK) abort();
    for (i = 0; i < n; i += 3) bitset_set(&allow, i);
    if (vec_hnsw_vector(h, n) != NULL) abort();
    g_bOrdered = 1;
    for (i = 0; i < n && g_bOrdered; i++) {
        const float *v = vec_hnsw_vector(h, i);
        if (!v) abort();
        for (uint32_t j = 0; j < dims; j++)
            if (!(fabsf(v[j]) < 1e15f)) g_bOrdered = 0;
    }

    /* Queries from the input's bytes (a few shapes), then stored rows. */
    for (int r = 0; r < 4; r++) {
        for (i = 0; i < dims; i++) q[i] = size ? (float)(int8_t)data[(i * 7 + (uint32_t)r * 13) % size] / 16.0f : 0;
        search_all(h, q, 1 + r * 7, r == 3 ? 0 : 4 + r * 20, &allow);
    }
    for (i = 0; i < n && i < 8; i++) {
        const float *v = vec_hnsw_vector(h, (i * 2654435761u) % n);
        if (!v) abort();
        memcpy(q, v, sizeof(float) * dims);
        search_all(h, q, MAX_K, 0, &allow);
    }

    /* A read-only graph refuses rows; a copy of it takes them. */
    uint32_t id;
    if (vec_hnsw_add(h, q, &id, &err) != LP_UNSUPPORTED) abort();
    VecHnsw *c = vec_hnsw_copy(h, n + 4, &err);
    if (c) {
        for (int r = 0; r < 4; r++) {
            for (i = 0; i < dims; i++) q[i] = (float)(r + 1) * (i % 3 ? 0.5f : -0.25f);
            if (vec_hnsw_add(c, q, &id, &err) != LP_OK || id != n + (uint32_t)r) abort();
        }
        search_all(c, q, 4, 0, &allow);
        vec_hnsw_free(c);
    } else if (err.code != LP_NOMEM) {
        abort();
    }

    bitset_free(&allow);
    free(q);
    vec_hnsw_free(h);
    free(a);
    return 0;
}
