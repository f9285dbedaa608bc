/*
** loupe_vec.c — the vector benchmark's driver for loupe's own HNSW
** (src/vec/hnsw.h), linked against liblp_vec.a and liblp_util.a.
**
** Protocol and measurements: driver.h. Build: vec_hnsw_new with M,
** efConstruction and capacity = every base row (so no growth during the
** build, as hnswlib is given max_elements), then vec_hnsw_add from T
** pthreads taking rows from a shared atomic counter. Concurrent inserts
** assign ids in the order the adds happen, so each thread records which
** base row got which id and searches map ids back to base rows. COSINE:
** the raw rows go in; the library normalises them and the queries.
** index_bytes: vec_hnsw_memory (vectors, neighbour lists, locks). Query
** replies carry exact_share: the searches the library answered by its
** exact scan rather than the graph (VecSearchStats.path).
*/
#include <pthread.h>
#include <stdatomic.h>

#include "vec/hnsw.h"
#include "driver.h"

typedef struct LoupeEng {
    VecHnsw *h;
    int32_t *aRowOfId;          /* id -> base row */
    VecHit *aHit;               /* search scratch */
    int nHitAlloc;
    const DriverData *d;
    atomic_uint next;           /* next base row to insert */
    atomic_int failed;
    uint64_t nSearch, nExact;   /* searches, and those answered by an exact scan */
    LpError err;                /* the first insert failure */
    pthread_mutex_t errMutex;
} LoupeEng;

static void *loupe_insert_thread(void *pArg) {
    LoupeEng *e = (LoupeEng *)pArg;
    const DriverData *d = e->d;
    LpError err;
    for (;;) {
        uint32_t row = atomic_fetch_add(&e->next, 1), id;
        if (row >= d->n || atomic_load(&e->failed)) break;
        lp_err_clear(&err);
        if (vec_hnsw_add(e->h, d->aBase + (size_t)row * d->dims, &id, &err) != LP_OK) {
            pthread_mutex_lock(&e->errMutex);
            if (!atomic_exchange(&e->failed, 1)) e->err = err;
            pthread_mutex_unlock(&e->errMutex);
            break;
        }
        e->aRowOfId[id] = (int32_t)row;
    }
    return NULL;
}

static void loupe_drop(void *pEng) {
    LoupeEng *e = (LoupeEng *)pEng;
    vec_hnsw_free(e->h);
    e->h = NULL;
}

static int loupe_build(void *pEng, const DriverData *d, int nThread, size_t *pnByte, char *zErr, size_t nErr) {
    LoupeEng *e = (LoupeEng *)pEng;
    VecHnswConfig cfg;
    pthread_t aTid[64];
    LpError err;
    int i;
    if (nThread < 1 || nThread > 64) {
        snprintf(zErr, nErr, "threads must be 1..64");
        return -1;
    }
    vec_hnsw_config_init(&cfg, d->dims, d->cosine ? VEC_COSINE : VEC_L2);
    cfg.M = (uint32_t)d->M;
    cfg.efConstruction = (uint32_t)d->efConstruction;
    cfg.capacity = d->n;
    cfg.seed = d->seed;
    lp_err_clear(&err);
    e->h = vec_hnsw_new(&cfg, &err);
    if (!e->h) {
        snprintf(zErr, nErr, "vec_hnsw_new: %s", err.zMsg);
        return -1;
    }
    e->d = d;
    atomic_store(&e->next, 0);
    atomic_store(&e->failed, 0);
    for (i = 0; i < nThread; i++) {
        if (pthread_create(&aTid[i], NULL, loupe_insert_thread, e) != 0) {
            atomic_store(&e->failed, 1);
            snprintf(e->err.zMsg, sizeof e->err.zMsg, "pthread_create failed");
            break;
        }
    }
    while (i-- > 0) pthread_join(aTid[i], NULL);
    if (atomic_load(&e->failed)) {
        snprintf(zErr, nErr, "vec_hnsw_add: %s", e->err.zMsg);
        return -1;
    }
    *pnByte = vec_hnsw_memory(e->h);
    return 0;
}

static int loupe_search(void *pEng, const float *q, int k, int ef, int32_t *aRow, char *zErr, size_t nErr) {
    LoupeEng *e = (LoupeEng *)pEng;
    VecSearchStats st;
    LpError err;
    int nHit = 0, i;
    if (k > e->nHitAlloc) {
        VecHit *a = (VecHit *)realloc(e->aHit, sizeof(VecHit) * (size_t)k);
        if (!a) {
            snprintf(zErr, nErr, "out of memory");
            return -1;
        }
        e->aHit = a;
        e->nHitAlloc = k;
    }
    lp_err_clear(&err);
    if (vec_hnsw_search(e->h, q, k, ef, NULL, e->aHit, &nHit, &st, &err) != LP_OK) {
        snprintf(zErr, nErr, "vec_hnsw_search: %s", err.zMsg);
        return -1;
    }
    e->nSearch++;
    if (st.path != VEC_PATH_GRAPH) e->nExact++;
    for (i = 0; i < nHit; i++) aRow[i] = e->aRowOfId[e->aHit[i].id];
    return nHit;
}

/* The share of searches the library answered by an exact scan instead of
** the graph (its cost model picks the scan for small graphs at large ef),
** so the report can say which numbers are not the graph's. */
static void loupe_query_note(void *pEng, char *z, size_t n) {
    LoupeEng *e = (LoupeEng *)pEng;
    snprintf(z, n, ", \"exact_share\": %.4f", e->nSearch ? (double)e->nExact / (double)e->nSearch : 0.0);
    e->nSearch = e->nExact = 0;
}

int main(int argc, char **argv) {
    static LoupeEng eng;
    DriverData d;
    DriverOps ops = {loupe_drop, loupe_build, loupe_search, loupe_query_note};
    char zVersion[64];
    int rc;
    if (drv_load(argc, argv, &d) != 0) return 2;
    eng.aRowOfId = (int32_t *)malloc(sizeof(int32_t) * d.n);
    if (!eng.aRowOfId) {
        fprintf(stderr, "loupe_vec: out of memory\n");
        return 1;
    }
    pthread_mutex_init(&eng.errMutex, NULL);
    snprintf(zVersion, sizeof zVersion, "loupe vec, %s kernels", vec_isa_name(vec_dist_init()));
    rc = drv_main(&eng, &ops, &d, zVersion);
    loupe_drop(&eng);
    free(eng.aRowOfId);
    free(eng.aHit);
    free(d.aBase);
    free(d.aQuery);
    return rc;
}
