/*
** hnsw.c — see hnsw.h.
**
** Layout of the arrays (cap rows allocated, nRow ids assigned):
**   aVec    cap * dims floats      row i at aVec + i*dims
**   aL0     cap * (1 + M0) uint32  row i's layer-0 record: count, then ids
**   aUp     cap pointers           NULL, or nLevel records of (1 + M) uint32
**                                  for layers 1..nLevel (record l-1 = layer l)
**   aLevel  cap int8               top layer, -1 until the row is written
**   aLock   cap bytes              per-row spin locks
** hnswlib interleaves list and vector in one record; separate arrays keep
** the lists of a whole neighbourhood in few cache lines and the vectors in
** one scannable block for exact searches.
**
** Invariants that make lock-free reading safe:
**   (1) A row's vector, level and upper-layer block are written, and its
**       aLevel stored with release, before its id is stored in any list or
**       becomes the entry point.
**   (2) List slots and counts change only under the row's lock, slot
**       stores are release stores, and a new count is stored after its
**       slots; readers load count and slots with acquire. So a slot below
**       any count ever published holds some valid id (maybe a stale one
**       during a prune, which costs recall at worst, not safety).
**   (3) A thread holds at most one row lock, and never waits for anything
**       while holding it: no lock order to get wrong.
**   (4) aVec/aL0/aUp/aLevel/aLock move only under growLock's exclusive
**       side; every add and search holds the shared side throughout.
**
** The entry point and top layer are one 64-bit word (level << 32 | id),
** read atomically by searches. An insert whose level exceeds the current
** top holds epMutex for its whole duration, as hnswlib does, so two new
** tops cannot race.
**
** Concurrent inserts see each other. Two rows inserted at once cannot find
** each other by search (neither is linked yet): near twins then both link
** to the same neighbours, whose pruning keeps one and drops the other
** (shadowed by its twin), and nothing links to the dropped one. Measured on
** 3,000 clustered 32-d rows from 3 threads: 1-16 rows without an in-link
** per build, recall@10 down to 0.984 against 1.000 built serially. So, as
** JVector does, a row being linked registers in aBusy, takes the ids of
** the rows being linked at that moment (its peers) as candidates on every
** layer they reach, and merges into its own lists the back-links that
** peers added while it searched (instead of overwriting them).
**
** Visited sets: a Scratch (pooled, one per running operation) holds a
** uint16 mark per row and the current epoch; a row is visited when its
** mark equals the epoch. Each layer search bumps the epoch, so nothing is
** cleared per query; the array is zeroed only when the epoch wraps (every
** 65535 searches) or the graph grew past its size.
**
** Measurements behind two choices (clustered 128-d L2 data, M 16, efC
** 200, k 10, -O2, AVX-512 kernels, a shared 2-core machine: best of 5).
** Exact scan vs filtered beam at ef 64, microseconds per query:
**     rows kept      20k rows: beam / scan     100k rows: beam / scan
**     100%               43 / 385                  80 / 4405
**     50%                75 / 174                 120 / 2731
**     30%               129 / 106                 228 / 1178
**     20%               194 / 73                  400 / 735
**     10%               393 / 39                 1027 / 268
**     1%               2930 / 4                  9334 / 16
** The beam's cost grows as the filter tightens (it must reach ef allowed
** rows); crossovers at ~33% of 20k and ~16.5% of 100k rows fit the
** sqrt(factor * ef * n) rule with factor 34..42 (default 36, hnsw.h).
** Prefetching the next neighbour's vector in search_layer: queries/s at
** ef 16/32/64 on 100k rows 30.7k/18.9k/11.1k with, 18.9k/12.6k/9.3k
** without; on 20k rows the best of three runs 32.7k vs 27.4k at ef 64. The
** machine was noisy, but every paired run favoured prefetching: kept.
**
** SEALED FILE LAYOUT (vec_hnsw_save writes it, hf_open reads it)
**
**     header | vectors | layer 0 | levels | upper layers | footer
**
** Integers and floats are little-endian (the host order: the reader uses
** the sections in place). Each section starts at a multiple of 64 bytes;
** the zero bytes between a section's end and the next 64-byte boundary are
** padding (the reader requires them to be zero). count is the number of
** rows, nUp the number of upper-layer records (the sum of the levels).
**
** HEADER (64 bytes)
**     OFFSET SIZE DESCRIPTION
**      0      8   magic "LOUPEHNS"
**      8      4   format version (1)
**     12      4   dims (1..VEC_HNSW_MAX_DIMS)
**     16      4   metric: VecMetric (0 L2, 1 IP, 2 COSINE)
**     20      4   M (2..VEC_HNSW_MAX_M)
**     24      4   M0 (= 2*M)
**     28      4   efConstruction (>= M)
**     32      8   seed of the level draw
**     40      8   exactFactor, an IEEE-754 double (finite, not 0)
**     48      4   count: rows, ids 0..count-1
**     52      4   entry point id (0xFFFFFFFF when count is 0)
**     56      4   entry point level (the entry row's level; 0 when empty)
**     60      4   flags (0; a reader rejects unknown flags)
** Its CRC32C is in the footer.
**
** VECTORS SECTION (at 64): count * dims float32, row i at i*dims, as
** stored in memory (unit length for COSINE), all finite.
**
** LAYER-0 SECTION: count records of (1 + M0) uint32, exactly aL0: the
** neighbour count n (<= M0), then n ids (< count), then M0 - n zeros.
**
** LEVELS SECTION: count int8, row i's top layer (0..31).
**
** UPPER-LAYER SECTION: for each row with level L > 0, in row order, L
** records of (1 + M) uint32 for layers 1..L: the count n (<= M), n ids,
** M - n zeros. An id on layer l names a row whose level is >= l. Row i's
** block starts after the blocks of the rows before it: the reader builds
** the aUp pointer table (8 bytes per row) by one pass over the levels.
**
** FOOTER (128 bytes, at the end of the file)
**     OFFSET SIZE DESCRIPTION
**      0     64   per section (vectors, layer 0, levels, upper layers):
**                 file offset (8), size without padding (8)
**     64      8   nUp: upper-layer records
**     72      4   CRC32C of the header
**     76     16   CRC32C of each section (4 each, same order, padding excluded)
**     92     24   reserved (0)
**    116      4   CRC32C of footer bytes 0..115
**    120      8   magic "LPHNSEND"
**
** The reader verifies, before it returns a graph: both magics, the
** version, the header fields' ranges, that the offsets and sizes in the
** footer are the ones count, dims, M and nUp imply and the file has
** exactly their length, zero padding, every CRC (unless
** VEC_HNSW_NOCHECKSUM), every level in range and their sum nUp, the entry
** point's level, every neighbour count and id (and on upper layers the
** neighbour's level), and that every vector component is finite. What a
** search then follows (lists from the entry down through the layers) can
** only name rows and records that exist, so a searched file never reads
** out of bounds; cost at open is one pass over the file.
** Measured on 100k x 128 clustered rows, M 16 (a 62 MiB file, a shared
** 2-core machine, -O2): open 20-26 ms with the file in the page cache
** (open_mem on a heap copy: 13 ms, 6 ms of it structure and finiteness
** checks, the rest CRCs; mapping adds the page faults), 40-73 ms after
** evicting the file; k 10 ef 64 searches, thread CPU time, median of 15
** rounds of 2,000 queries: 21.0k q/s file-backed, 19.7k in memory over an
** identical graph (vec_hnsw_copy of the file), 19.8k for the same graph
** with the hnsw.c from before sealed files existed. Identical results.
*/
#include "vec/hnsw.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/bytes.h"
#include "util/crc32c.h"

#define EP_NONE UINT64_MAX
#define MAX_LEVEL 31            /* levels above are astronomically unlikely */
#define EXACT_BLOCK 256         /* rows per vec_dist_batch call in exact scans */
#define MAX_BUSY 64             /* inserts that see each other (more just don't) */

#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

typedef struct Cand {
    float d;                    /* distance to the query */
    uint32_t id;                /* row */
} Cand;

/* Per-operation working memory, pooled in the graph. */
typedef struct Scratch {
    uint16_t *aMark;            /* visited marks, one per row */
    uint32_t nMark;             /* rows aMark covers */
    uint16_t epoch;             /* current mark value */
    Cand *aCand;                /* min-heap of candidates to expand */
    size_t nCand, capCand;
    Cand *aRes;                 /* max-heap of the best ef allowed rows */
    size_t nRes, capRes;
    Cand *aWithin;              /* range search: allowed rows within the radius */
    size_t nWithin, capWithin;
    Cand *aPrune;               /* a row's list plus one, while pruning (1 + M0) */
    uint32_t *aNew;             /* unvisited neighbours of the node being expanded */
    float *aNewD;               /* ... and their distances */
    float *aQuery;              /* normalised copy of the query (COSINE) */
    uint32_t aPeer[MAX_BUSY];   /* inserting: rows being linked when it began */
    int nPeer;
    struct Scratch *pNext;      /* free list link */
} Scratch;

struct VecHnsw {
    uint32_t dims;              /* floats per vector */
    VecMetric metric;           /* distance */
    VecDistFn xDist;            /* kernel for metric */
    uint32_t M, M0;             /* list sizes: upper layers, layer 0 */
    uint32_t efC;               /* beam width while inserting */
    double mult;                /* 1 / ln(M) */
    uint64_t seed;              /* level draw */
    double exactFactor;         /* exact-scan rule constant (hnsw.h) */
    size_t nL0;                 /* uint32 per layer-0 record (1 + M0) */
    size_t nUp;                 /* uint32 per upper record (1 + M) */

    pthread_rwlock_t growLock;  /* shared: add/search; exclusive: growth (4) */
    uint32_t cap;               /* rows allocated; changes only exclusively */
    uint32_t nRow;              /* ids assigned (atomic) */
    float *aVec;                /* see the layout above */
    uint32_t *aL0;
    uint32_t **aUp;
    int8_t *aLevel;
    uint8_t *aLock;
    size_t nUpBytes;            /* bytes in upper-layer blocks (atomic) */

    pthread_mutex_t epMutex;    /* held by an insert that raises the top layer */
    uint64_t ep;                /* level << 32 | entry id, or EP_NONE (atomic) */

    pthread_mutex_t busyMutex;  /* guards aBusy */
    uint32_t aBusy[MAX_BUSY];   /* rows being linked, UINT32_MAX in free slots */

    pthread_mutex_t poolMutex;  /* guards pFree */
    Scratch *pFree;             /* idle scratches */

    /* Read-only graphs (vec_hnsw_open_file/_mem): aVec, aL0 and aLevel
    ** point into pMap, aUp[i] too (the table itself is on the heap), aLock
    ** is NULL, cap == nRow and nothing ever changes. */
    int bReadOnly;              /* no inserts; the arrays are not ours to free */
    const uint8_t *pMap;        /* the file's bytes, or NULL */
    size_t nMap;                /* their length */
    int bMapped;                /* pMap is our mmap, unmapped by vec_hnsw_free */
};

/* ---- small helpers ---------------------------------------------------- */

static inline void row_lock(uint8_t *p) {
    int nSpin = 0;
    while (__atomic_exchange_n(p, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(p, __ATOMIC_RELAXED)) {
            /* Critical sections are a prune at most (tens of microseconds):
            ** spin briefly, then let the holder run. */
            if (++nSpin < 64) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else {
                sched_yield();
            }
        }
    }
}

static inline void row_unlock(uint8_t *p) { __atomic_store_n(p, 0, __ATOMIC_RELEASE); }

static inline const float *row_vec(const VecHnsw *h, uint32_t id) { return h->aVec + (size_t)id * h->dims; }

static inline uint32_t *row_list(const VecHnsw *h, uint32_t id, int layer) {
    if (layer == 0) return h->aL0 + (size_t)id * h->nL0;
    return h->aUp[id] + (size_t)(layer - 1) * h->nUp;
}

static inline int cand_less(Cand a, Cand b) { return a.d < b.d || (a.d == b.d && a.id < b.id); }

static int grow_buf(Cand **pa, size_t *pCap, size_t need) {
    size_t nNew = *pCap ? *pCap : 64;
    Cand *a;
    if (need <= *pCap) return LP_OK;
    while (nNew < need) nNew *= 2;
    a = realloc(*pa, nNew * sizeof(Cand));
    if (!a) return LP_NOMEM;
    *pa = a;
    *pCap = nNew;
    return LP_OK;
}

/* Min-heap on (d, id) of candidates. */
static int cand_push(Scratch *s, Cand c) {
    size_t i;
    if (s->nCand == s->capCand && grow_buf(&s->aCand, &s->capCand, s->nCand + 1)) return LP_NOMEM;
    i = s->nCand++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!cand_less(c, s->aCand[p])) break;
        s->aCand[i] = s->aCand[p];
        i = p;
    }
    s->aCand[i] = c;
    return LP_OK;
}

static Cand cand_pop(Scratch *s) {
    Cand top = s->aCand[0], last = s->aCand[--s->nCand];
    size_t i = 0, n = s->nCand;
    for (;;) {
        size_t l = 2 * i + 1, m;
        if (l >= n) break;
        m = (l + 1 < n && cand_less(s->aCand[l + 1], s->aCand[l])) ? l + 1 : l;
        if (!cand_less(s->aCand[m], last)) break;
        s->aCand[i] = s->aCand[m];
        i = m;
    }
    if (n) s->aCand[i] = last;
    return top;
}

/* Max-heap on (d, id) of results: the root is the worst kept. */
static int res_push(Scratch *s, Cand c) {
    size_t i;
    if (s->nRes == s->capRes && grow_buf(&s->aRes, &s->capRes, s->nRes + 1)) return LP_NOMEM;
    i = s->nRes++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!cand_less(s->aRes[p], c)) break;
        s->aRes[i] = s->aRes[p];
        i = p;
    }
    s->aRes[i] = c;
    return LP_OK;
}

static Cand res_pop(Scratch *s) {
    Cand top = s->aRes[0], last = s->aRes[--s->nRes];
    size_t i = 0, n = s->nRes;
    for (;;) {
        size_t l = 2 * i + 1, m;
        if (l >= n) break;
        m = (l + 1 < n && cand_less(s->aRes[l], s->aRes[l + 1])) ? l + 1 : l;
        if (!cand_less(last, s->aRes[m])) break;
        s->aRes[i] = s->aRes[m];
        i = m;
    }
    if (n) s->aRes[i] = last;
    return top;
}

/* Empties the result heap into a[0..n) in ascending order; returns n. */
static size_t res_drain(Scratch *s, Cand *a) {
    size_t n = s->nRes;
    while (s->nRes) {
        Cand c = res_pop(s);
        a[s->nRes] = c;
    }
    return n;
}

static int cand_cmp(const void *pa, const void *pb) {
    Cand a = *(const Cand *)pa, b = *(const Cand *)pb;
    return cand_less(a, b) ? -1 : cand_less(b, a) ? 1 : 0;
}

static inline int filter_pass(const VecFilter *f, uint32_t id) {
    if (!f) return 1;
    if (f->pAllow && (id >= f->pAllow->nBit || !bitset_test(f->pAllow, id))) return 0;
    if (f->xAllow && !f->xAllow(f->pCtx, id)) return 0;
    return 1;
}

static uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* floor(-ln(u) * mult), u uniform in (0,1], from (seed, id). */
static int draw_level(const VecHnsw *h, uint32_t id) {
    uint64_t x = splitmix64(h->seed ^ splitmix64(id));
    double u = (double)((x >> 11) + 1) * (1.0 / 9007199254740992.0);
    double l = -log(u) * h->mult;
    return l >= MAX_LEVEL ? MAX_LEVEL : (int)l;
}

static int all_finite(const float *v, uint32_t n) {
    uint32_t i;
    for (i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* ---- scratch pool ----------------------------------------------------- */

static void scratch_free(Scratch *s) {
    if (!s) return;
    free(s->aMark);
    free(s->aCand);
    free(s->aRes);
    free(s->aWithin);
    free(s->aPrune);
    free(s->aNew);
    free(s->aNewD);
    free(s->aQuery);
    free(s);
}

/* A scratch whose marks cover h->cap rows (caller holds growLock shared),
** or NULL when memory runs out. */
static Scratch *scratch_get(VecHnsw *h) {
    Scratch *s;
    pthread_mutex_lock(&h->poolMutex);
    s = h->pFree;
    if (s) h->pFree = s->pNext;
    pthread_mutex_unlock(&h->poolMutex);
    if (!s) {
        s = calloc(1, sizeof(*s));
        if (!s) return NULL;
        s->aPrune = malloc((h->M0 + 1) * sizeof(Cand));
        s->aNew = malloc(h->M0 * sizeof(uint32_t));
        s->aNewD = malloc(h->M0 * sizeof(float));
        s->aQuery = malloc(h->dims * sizeof(float));
        if (!s->aPrune || !s->aNew || !s->aNewD || !s->aQuery) {
            scratch_free(s);
            return NULL;
        }
    }
    if (s->nMark < h->cap) {
        uint16_t *a = realloc(s->aMark, (size_t)h->cap * sizeof(uint16_t));
        if (!a) {
            scratch_free(s);
            return NULL;
        }
        memset(a, 0, (size_t)h->cap * sizeof(uint16_t));
        s->aMark = a;
        s->nMark = h->cap;
        s->epoch = 0;
    }
    return s;
}

static void scratch_put(VecHnsw *h, Scratch *s) {
    if (!s) return;
    pthread_mutex_lock(&h->poolMutex);
    s->pNext = h->pFree;
    h->pFree = s;
    pthread_mutex_unlock(&h->poolMutex);
}

/* Starts a new visited set. */
static void scratch_epoch(Scratch *s) {
    if (++s->epoch == 0) {
        memset(s->aMark, 0, (size_t)s->nMark * sizeof(uint16_t));
        s->epoch = 1;
    }
}

/* Marks id visited; returns 1 when it was not visited yet. */
static inline int scratch_visit(Scratch *s, uint32_t id) {
    if (s->aMark[id] == s->epoch) return 0;
    s->aMark[id] = s->epoch;
    return 1;
}

/* ---- construction and teardown --------------------------------------- */

void vec_hnsw_config_init(VecHnswConfig *cfg, uint32_t dims, VecMetric metric) {
    memset(cfg, 0, sizeof(*cfg));
    cfg->dims = dims;
    cfg->metric = metric;
    cfg->M = VEC_HNSW_DEFAULT_M;
    cfg->efConstruction = VEC_HNSW_DEFAULT_EF_CONSTRUCTION;
    cfg->capacity = VEC_HNSW_DEFAULT_CAPACITY;
    cfg->seed = 42;
    cfg->exactFactor = VEC_HNSW_DEFAULT_EXACT_FACTOR;
}

/* Reallocates every per-row array to newCap rows and initialises the new
** part. Caller holds growLock exclusively (or owns h alone). */
static int resize_arrays(VecHnsw *h, uint32_t newCap) {
    size_t oldCap = h->cap, n = newCap;
    float *aVec;
    uint32_t *aL0;
    uint32_t **aUp;
    int8_t *aLevel;
    uint8_t *aLock;
    /* Each array is kept as soon as its realloc succeeds (it is only
    ** larger), and cap moves last, so a failure leaves a consistent graph. */
    if (!(aVec = realloc(h->aVec, n * h->dims * sizeof(float)))) return LP_NOMEM;
    h->aVec = aVec;
    if (!(aL0 = realloc(h->aL0, n * h->nL0 * sizeof(uint32_t)))) return LP_NOMEM;
    h->aL0 = aL0;
    if (!(aUp = realloc(h->aUp, n * sizeof(*aUp)))) return LP_NOMEM;
    h->aUp = aUp;
    if (!(aLevel = realloc(h->aLevel, n))) return LP_NOMEM;
    h->aLevel = aLevel;
    if (!(aLock = realloc(h->aLock, n))) return LP_NOMEM;
    h->aLock = aLock;
    memset(h->aL0 + oldCap * h->nL0, 0, (n - oldCap) * h->nL0 * sizeof(uint32_t));
    memset(h->aUp + oldCap, 0, (n - oldCap) * sizeof(*aUp));
    memset(h->aLevel + oldCap, 0xff, n - oldCap);
    memset(h->aLock + oldCap, 0, n - oldCap);
    h->cap = newCap;
    return LP_OK;
}

VecHnsw *vec_hnsw_new(const VecHnswConfig *cfg, LpError *err) {
    VecHnsw *h;
    pthread_rwlockattr_t attr;
    uint32_t M = cfg->M ? cfg->M : VEC_HNSW_DEFAULT_M;
    uint32_t cap = cfg->capacity ? cfg->capacity : VEC_HNSW_DEFAULT_CAPACITY;
    if (cfg->dims == 0 || cfg->dims > VEC_HNSW_MAX_DIMS) {
        lp_err_set(err, LP_BADINPUT, "hnsw: dims %u out of range 1..%d", cfg->dims, VEC_HNSW_MAX_DIMS);
        return NULL;
    }
    if (M < 2 || M > VEC_HNSW_MAX_M) {
        lp_err_set(err, LP_BADINPUT, "hnsw: M %u out of range 2..%d", M, VEC_HNSW_MAX_M);
        return NULL;
    }
    if (cfg->metric != VEC_L2 && cfg->metric != VEC_IP && cfg->metric != VEC_COSINE) {
        lp_err_set(err, LP_BADINPUT, "hnsw: unknown metric %d", (int)cfg->metric);
        return NULL;
    }
    h = calloc(1, sizeof(*h));
    if (!h) goto nomem;
    h->dims = cfg->dims;
    h->metric = cfg->metric;
    h->xDist = vec_dist_fn(cfg->metric);
    h->M = M;
    h->M0 = 2 * M;
    h->efC = cfg->efConstruction ? cfg->efConstruction : VEC_HNSW_DEFAULT_EF_CONSTRUCTION;
    if (h->efC < M) h->efC = M;
    h->mult = 1.0 / log((double)M);
    h->seed = cfg->seed;
    h->exactFactor = cfg->exactFactor == 0 ? VEC_HNSW_DEFAULT_EXACT_FACTOR : cfg->exactFactor;
    h->nL0 = 1 + (size_t)h->M0;
    h->nUp = 1 + (size_t)M;
    h->ep = EP_NONE;
    if (resize_arrays(h, cap)) {
        free(h->aVec);
        free(h->aL0);
        free(h->aUp);
        free(h->aLevel);
        free(h->aLock);
        free(h);
        goto nomem;
    }
    /* Writer preference: a growing insert must not starve behind a steady
    ** stream of searches (nobody takes the shared side recursively). */
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&h->growLock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&h->epMutex, NULL);
    pthread_mutex_init(&h->busyMutex, NULL);
    memset(h->aBusy, 0xff, sizeof(h->aBusy));
    pthread_mutex_init(&h->poolMutex, NULL);
    return h;
nomem:
    lp_err_set(err, LP_NOMEM, "hnsw: out of memory allocating %u rows of %u dims", cap, cfg->dims);
    return NULL;
}

void vec_hnsw_free(VecHnsw *h) {
    uint32_t i;
    if (!h) return;
    while (h->pFree) {
        Scratch *s = h->pFree;
        h->pFree = s->pNext;
        scratch_free(s);
    }
    if (h->bReadOnly) {
        /* Only the pointer table is ours; the rows are in pMap. */
        free(h->aUp);
        if (h->bMapped) munmap((void *)h->pMap, h->nMap);
    } else {
        for (i = 0; i < h->cap; i++) free(h->aUp[i]);
        free(h->aVec);
        free(h->aL0);
        free(h->aUp);
        free(h->aLevel);
        free(h->aLock);
    }
    pthread_rwlock_destroy(&h->growLock);
    pthread_mutex_destroy(&h->epMutex);
    pthread_mutex_destroy(&h->busyMutex);
    pthread_mutex_destroy(&h->poolMutex);
    free(h);
}

uint32_t vec_hnsw_count(const VecHnsw *h) { return __atomic_load_n(&h->nRow, __ATOMIC_ACQUIRE); }
uint32_t vec_hnsw_dims(const VecHnsw *h) { return h->dims; }
VecMetric vec_hnsw_metric(const VecHnsw *h) { return h->metric; }

size_t vec_hnsw_memory(const VecHnsw *h) {
    size_t perRow;
    if (h->bReadOnly) return sizeof(*h) + (size_t)h->cap * sizeof(*h->aUp);
    perRow = h->dims * sizeof(float) + h->nL0 * sizeof(uint32_t) + sizeof(uint32_t *) + 2;
    return sizeof(*h) + (size_t)h->cap * perRow + __atomic_load_n(&h->nUpBytes, __ATOMIC_RELAXED);
}

const float *vec_hnsw_vector(const VecHnsw *h, uint32_t id) {
    if (id >= vec_hnsw_count(h) || LOAD_ACQ(&h->aLevel[id]) < 0) return NULL;
    return row_vec(h, id);
}

/* ---- graph walks ------------------------------------------------------ */

/* Greedy descent on one upper layer: moves *pCur to the nearest row
** reachable by strictly improving steps. */
static void greedy_layer(const VecHnsw *h, const float *q, int layer, uint32_t *pCur, float *pDist,
                         VecSearchStats *st) {
    uint32_t cur = *pCur;
    float curD = *pDist;
    int bChanged = 1;
    uint32_t aNb[VEC_HNSW_MAX_M];
    float aD[VEC_HNSW_MAX_M];
    while (bChanged) {
        const uint32_t *pList = row_list(h, cur, layer);
        uint32_t i, n = LOAD_ACQ(&pList[0]);
        bChanged = 0;
        if (n > h->M) n = h->M;
        if (st) st->nVisited++;
        /* All of a list's rows in one batched call, their first lines
        ** fetched as the ids are read (the upper layers' rows are spread
        ** over the whole array: each is a cache miss). */
        for (i = 0; i < n; i++) {
            aNb[i] = LOAD_ACQ(&pList[1 + i]);
            __builtin_prefetch(row_vec(h, aNb[i]));
        }
        vec_dist_batch(h->metric, q, h->aVec, h->dims, aNb, n, h->dims, aD);
        if (st) st->nDist += n;
        for (i = 0; i < n; i++) {
            if (aD[i] < curD) {
                curD = aD[i];
                cur = aNb[i];
                bChanged = 1;
            }
        }
    }
    *pCur = cur;
    *pDist = curD;
}

/* What one beam search on a layer is asked. */
typedef struct LayerQuery {
    const float *q;             /* query vector */
    int layer;                  /* layer to search */
    size_t ef;                  /* beam width: allowed rows kept in aRes */
    const VecFilter *filter;    /* NULL: every row allowed */
    int bRange;                 /* also flood and collect rows within radius */
    float radius;               /* range searches only */
} LayerQuery;

/* The ef-bounded beam search (hnswlib's searchBaseLayer, with the filter
** and range extensions): leaves the best ef allowed rows in s->aRes (a
** max-heap) and, for range searches, the allowed rows within the radius
** in s->aWithin. Filtered-out rows are expanded like any other; the search
** stops only once the beam holds ef allowed rows (with a filter) and the
** nearest candidate is farther than the worst of them and, for a range
** search, outside the radius. LP_OK or LP_NOMEM. */
static int search_layer(const VecHnsw *h, Scratch *s, const LayerQuery *lq, uint32_t ep, float epD,
                        VecSearchStats *st) {
    const float *q = lq->q;
    const VecFilter *f = lq->filter;
    uint32_t maxM = lq->layer ? h->M : h->M0;
    float lower = INFINITY;
    Cand c = {epD, ep};
    scratch_epoch(s);
    s->nCand = s->nRes = s->nWithin = 0;
    scratch_visit(s, ep);
    if (filter_pass(f, ep)) {
        if (res_push(s, c)) return LP_NOMEM;
        lower = epD;
        if (lq->bRange && epD <= lq->radius) {
            if (grow_buf(&s->aWithin, &s->capWithin, 1)) return LP_NOMEM;
            s->aWithin[s->nWithin++] = c;
        }
    }
    if (cand_push(s, c)) return LP_NOMEM;
    while (s->nCand) {
        const uint32_t *pList;
        uint32_t i, n, nNew = 0;
        c = s->aCand[0];
        if (c.d > lower && (s->nRes >= lq->ef || !f) && !(lq->bRange && c.d <= lq->radius)) break;
        cand_pop(s);
        /* The next candidate to expand is most likely the new top: fetch
        ** its list while this one is scored (as hnswlib does). */
        if (s->nCand) __builtin_prefetch(row_list(h, s->aCand[0].id, lq->layer));
        pList = row_list(h, c.id, lq->layer);
        n = LOAD_ACQ(&pList[0]);
        if (n > maxM) n = maxM;
        if (st) st->nVisited++;
        /* First the unvisited neighbours, then all their distances in one
        ** batched call (four rows at a time with the query loaded once, the
        ** next rows prefetched: queries/s +45% on 100k x 128 at ef 20/40).
        ** A range search compares distances with a radius, so it keeps the
        ** single-pair kernel whose rounding the exact scan and the caller's
        ** distances share (the batched sums associate differently). */
        for (i = 0; i < n; i++) {
            uint32_t nb = LOAD_ACQ(&pList[1 + i]);
            if (scratch_visit(s, nb)) {
                s->aNew[nNew++] = nb;
                __builtin_prefetch(row_vec(h, nb));
            }
        }
        if (!lq->bRange) {
            if (nNew) vec_dist_batch(h->metric, q, h->aVec, h->dims, s->aNew, nNew, h->dims, s->aNewD);
        } else {
            for (i = 0; i < nNew; i++) {
                if (i + 1 < nNew) __builtin_prefetch(row_vec(h, s->aNew[i + 1]));
                s->aNewD[i] = h->xDist(q, row_vec(h, s->aNew[i]), h->dims);
            }
        }
        if (st) st->nDist += nNew;
        for (i = 0; i < nNew; i++) {
            uint32_t nb = s->aNew[i];
            float d = s->aNewD[i];
            if (s->nRes < lq->ef || d < lower || (lq->bRange && d <= lq->radius)) {
                Cand e = {d, nb};
                if (cand_push(s, e)) return LP_NOMEM;
                if (!filter_pass(f, nb)) continue;
                if (lq->bRange && d <= lq->radius) {
                    if (grow_buf(&s->aWithin, &s->capWithin, s->nWithin + 1)) return LP_NOMEM;
                    s->aWithin[s->nWithin++] = e;
                }
                if (s->nRes < lq->ef || cand_less(e, s->aRes[0])) {
                    if (res_push(s, e)) return LP_NOMEM;
                    if (s->nRes > lq->ef) res_pop(s);
                    lower = s->aRes[0].d;
                }
            }
        }
    }
    return LP_OK;
}

/* Greedy descent from the entry point down to layer `to`+1; returns the
** entry for layer `to` in *pCur and *pDist. */
static void descend(const VecHnsw *h, const float *q, uint64_t ep, int to, uint32_t *pCur, float *pDist,
                    VecSearchStats *st) {
    uint32_t cur = (uint32_t)ep;
    int layer, top = (int)(ep >> 32);
    float d = h->xDist(q, row_vec(h, cur), h->dims);
    if (st) st->nDist++;
    for (layer = top; layer > to; layer--) greedy_layer(h, q, layer, &cur, &d, st);
    /* The batched kernel rounds differently from the single-pair one that
    ** range searches and exact scans compare with: the entry's distance
    ** is recomputed with the latter (its row is in cache). */
    if (cur != (uint32_t)ep) d = h->xDist(q, row_vec(h, cur), h->dims);
    *pCur = cur;
    *pDist = d;
}

/* ---- insertion -------------------------------------------------------- */

/* hnswlib's getNeighborsByHeuristic2: keeps, in a[0..n) sorted by distance
** to the base row, at most nMax rows, each closer to the base than to any
** row kept before it. Returns the number kept (at the front of a). */
static size_t select_heuristic(const VecHnsw *h, Cand *a, size_t n, size_t nMax) {
    size_t i, j, nKeep = 0;
    if (n <= nMax) return n;
    for (i = 0; i < n && nKeep < nMax; i++) {
        const float *v = row_vec(h, a[i].id);
        int bGood = 1;
        for (j = 0; j < nKeep; j++) {
            if (h->xDist(row_vec(h, a[j].id), v, h->dims) < a[i].d) {
                bGood = 0;
                break;
            }
        }
        if (bGood) a[nKeep++] = a[i];
    }
    return nKeep;
}

/* Loads the n ids of list pList, with their distances to v, into
** s->aPrune[0..n). */
static void list_load(const VecHnsw *h, Scratch *s, const float *v, const uint32_t *pList, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        uint32_t o = LOAD_ACQ(&pList[1 + i]);
        s->aPrune[i].id = o;
        s->aPrune[i].d = h->xDist(v, row_vec(h, o), h->dims);
    }
}

/* Sorts s->aPrune[0..n), keeps at most maxM by the heuristic and stores
** them as list pList (caller holds its row's lock). */
static void list_prune_store(const VecHnsw *h, Scratch *s, uint32_t *pList, size_t n, uint32_t maxM) {
    qsort(s->aPrune, n, sizeof(Cand), cand_cmp);
    size_t nKeep = select_heuristic(h, s->aPrune, n, maxM);
    for (size_t i = 0; i < nKeep; i++) STORE_REL(&pList[1 + i], s->aPrune[i].id);
    STORE_REL(&pList[0], (uint32_t)nKeep);
}

/* Adds id (at distance d) to row nb's list on layer, pruning with the
** heuristic when the list is full. A peer (see above) may have put id
** there already: then nothing changes. */
static void link_back(const VecHnsw *h, Scratch *s, uint32_t nb, uint32_t id, float d, int layer) {
    uint32_t maxM = layer ? h->M : h->M0;
    uint32_t *pList = row_list(h, nb, layer);
    uint32_t n, i;
    row_lock(&h->aLock[nb]);
    n = LOAD_ACQ(&pList[0]);
    for (i = 0; i < n; i++) {
        if (LOAD_ACQ(&pList[1 + i]) == id) {
            row_unlock(&h->aLock[nb]);
            return;
        }
    }
    if (n < maxM) {
        STORE_REL(&pList[1 + n], id);
        STORE_REL(&pList[0], n + 1);
    } else {
        list_load(h, s, row_vec(h, nb), pList, n);
        s->aPrune[n].id = id;
        s->aPrune[n].d = d;
        list_prune_store(h, s, pList, n + 1, maxM);
    }
    row_unlock(&h->aLock[nb]);
}

/* Adds to a[0..n) (sorted by distance to v) the peers that reach layer
** and are not in it yet, keeping the order. a has room for s->nPeer more.
** Returns the new count. */
static size_t add_peers(const VecHnsw *h, const Scratch *s, const float *v, int layer, Cand *a, size_t n) {
    for (int p = 0; p < s->nPeer; p++) {
        uint32_t o = s->aPeer[p];
        size_t i;
        if (LOAD_ACQ(&h->aLevel[o]) < layer) continue;
        for (i = 0; i < n && a[i].id != o; i++) {
        }
        if (i < n) continue;
        Cand c = {h->xDist(v, row_vec(h, o), h->dims), o};
        for (i = n++; i > 0 && a[i - 1].d > c.d; i--) a[i] = a[i - 1];
        a[i] = c;
    }
    return n;
}

/* Stores a[0..n) (sorted, n <= M) as row id's list on layer. Peers may
** have linked to id while it searched: those links are kept, pruned with
** the heuristic when the list overflows (as link_back prunes). */
static void store_list(const VecHnsw *h, Scratch *s, uint32_t id, int layer, const Cand *a, size_t n) {
    uint32_t maxM = layer ? h->M : h->M0;
    uint32_t *pList = row_list(h, id, layer);
    uint32_t nOld, i, j;
    row_lock(&h->aLock[id]);
    nOld = LOAD_ACQ(&pList[0]);
    if (nOld == 0) {
        for (i = 0; i < n; i++) STORE_REL(&pList[1 + i], a[i].id);
        STORE_REL(&pList[0], (uint32_t)n);
        row_unlock(&h->aLock[id]);
        return;
    }
    /* The back-links first, then the chosen rows not among them, as many
    ** as aPrune holds (1 + M0: all of them unless some 30 peers linked). */
    list_load(h, s, row_vec(h, id), pList, nOld);
    size_t nAll = nOld;
    for (i = 0; i < n && nAll < h->M0 + 1; i++) {
        for (j = 0; j < nOld && s->aPrune[j].id != a[i].id; j++) {
        }
        if (j == nOld) s->aPrune[nAll++] = a[i];
    }
    list_prune_store(h, s, pList, nAll, maxM);
    row_unlock(&h->aLock[id]);
}

/* Links row id (vector v, top layer level) into the graph below entry
** point ep. */
static int link_row(VecHnsw *h, Scratch *s, const float *v, uint32_t id, int level, uint64_t ep) {
    LayerQuery lq = {v, 0, h->efC, NULL, 0, 0};
    int top = (int)(ep >> 32), layer;
    uint32_t cur;
    float d;
    descend(h, v, ep, level < top ? level : top, &cur, &d, NULL);
    for (layer = level < top ? level : top; layer >= 0; layer--) {
        size_t i, n, nKeep;
        Cand *a;
        lq.layer = layer;
        if (search_layer(h, s, &lq, cur, d, NULL)) return LP_NOMEM;
        /* The drained beam lands in aCand (free now), sorted ascending. */
        if (grow_buf(&s->aCand, &s->capCand, s->nRes + (size_t)s->nPeer)) return LP_NOMEM;
        a = s->aCand;
        n = res_drain(s, a);
        n = add_peers(h, s, v, layer, a, n);
        nKeep = select_heuristic(h, a, n, h->M);
        store_list(h, s, id, layer, a, nKeep);
        for (i = 0; i < nKeep; i++) link_back(h, s, a[i].id, id, a[i].d, layer);
        cur = a[0].id;
        d = a[0].d;
    }
    return LP_OK;
}

/* Registers id as being linked and copies the other such rows into
** s->aPeer. Returns its slot, or -1 when every slot is taken. */
static int busy_enter(VecHnsw *h, Scratch *s, uint32_t id) {
    int slot = -1;
    s->nPeer = 0;
    pthread_mutex_lock(&h->busyMutex);
    for (int i = 0; i < MAX_BUSY; i++) {
        if (h->aBusy[i] != UINT32_MAX) {
            s->aPeer[s->nPeer++] = h->aBusy[i];
        } else if (slot < 0) {
            h->aBusy[i] = id;
            slot = i;
        }
    }
    pthread_mutex_unlock(&h->busyMutex);
    return slot;
}

static void busy_leave(VecHnsw *h, int slot) {
    if (slot < 0) return;
    pthread_mutex_lock(&h->busyMutex);
    h->aBusy[slot] = UINT32_MAX;
    pthread_mutex_unlock(&h->busyMutex);
}

/* Assigns the next id, growing the arrays when full. On LP_OK the caller
** holds growLock shared. */
static int reserve_id(VecHnsw *h, uint32_t *pId, LpError *err) {
    pthread_rwlock_rdlock(&h->growLock);
    for (;;) {
        uint32_t n = __atomic_load_n(&h->nRow, __ATOMIC_RELAXED);
        if (n == UINT32_MAX) {
            pthread_rwlock_unlock(&h->growLock);
            return lp_err_set(err, LP_LIMIT, "hnsw: row limit of %u reached", UINT32_MAX);
        }
        if (n < h->cap) {
            if (__atomic_compare_exchange_n(&h->nRow, &n, n + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
                *pId = n;
                return LP_OK;
            }
            continue;
        }
        pthread_rwlock_unlock(&h->growLock);
        pthread_rwlock_wrlock(&h->growLock);
        if (h->cap <= n) {
            uint64_t want = (uint64_t)h->cap * 2;
            int rc = resize_arrays(h, want > UINT32_MAX ? UINT32_MAX : (uint32_t)want);
            if (rc) {
                pthread_rwlock_unlock(&h->growLock);
                return lp_err_set(err, rc, "hnsw: out of memory growing to %llu rows",
                                  (unsigned long long)want);
            }
        }
        pthread_rwlock_unlock(&h->growLock);
        pthread_rwlock_rdlock(&h->growLock);
    }
}

int vec_hnsw_add(VecHnsw *h, const float *v, uint32_t *pId, LpError *err) {
    uint32_t id = 0;
    float *pRow;
    int level, rc = LP_OK, bTop = 0, bLinked = 1;
    uint64_t ep;
    Scratch *s;
    if (h->bReadOnly) return lp_err_set(err, LP_UNSUPPORTED, "hnsw: graph is read-only (sealed segment)");
    if (!all_finite(v, h->dims)) return lp_err_set(err, LP_BADINPUT, "hnsw: vector has a NaN or infinite component");
    rc = reserve_id(h, &id, err);
    if (rc) return rc;
    *pId = id;
    pRow = h->aVec + (size_t)id * h->dims;
    memcpy(pRow, v, h->dims * sizeof(float));
    if (h->metric == VEC_COSINE) vec_normalize(pRow, h->dims);
    level = draw_level(h, id);
    if (level > 0) {
        h->aUp[id] = calloc((size_t)level * h->nUp, sizeof(uint32_t));
        if (h->aUp[id]) {
            __atomic_fetch_add(&h->nUpBytes, (size_t)level * h->nUp * sizeof(uint32_t), __ATOMIC_RELAXED);
        } else {
            /* Kept on layer 0 only: still a valid row (see the contract). */
            level = 0;
            rc = lp_err_set(err, LP_NOMEM, "hnsw: out of memory for the upper layers of row %u", id);
        }
    }
    STORE_REL(&h->aLevel[id], (int8_t)level);     /* (1): the row is written */

    ep = LOAD_ACQ(&h->ep);
    if (ep == EP_NONE || level > (int)(ep >> 32)) {
        pthread_mutex_lock(&h->epMutex);
        bTop = 1;
        ep = LOAD_ACQ(&h->ep);
    }
    if (ep != EP_NONE) {
        s = scratch_get(h);
        int slot = s ? busy_enter(h, s, id) : -1;
        if (!s || link_row(h, s, pRow, id, level, ep)) {
            rc = lp_err_set(err, LP_NOMEM, "hnsw: out of memory linking row %u", id);
            bLinked = 0;
        }
        busy_leave(h, slot);
        scratch_put(h, s);
    }
    if (bTop) {
        /* A row whose links are incomplete must not become the entry. */
        if (ep == EP_NONE || (bLinked && level > (int)(ep >> 32)))
            STORE_REL(&h->ep, ((uint64_t)level << 32) | id);
        pthread_mutex_unlock(&h->epMutex);
    }
    pthread_rwlock_unlock(&h->growLock);
    return rc;
}

/* ---- searching -------------------------------------------------------- */

/* Puts the (normalised when COSINE) query into s->aQuery. */
static const float *prepare_query(const VecHnsw *h, Scratch *s, const float *q) {
    if (h->metric != VEC_COSINE) return q;
    memcpy(s->aQuery, q, h->dims * sizeof(float));
    vec_normalize(s->aQuery, h->dims);
    return s->aQuery;
}

static const VecFilter *effective_filter(const VecFilter *f) {
    return f && (f->pAllow || f->xAllow) ? f : NULL;
}

/* Rows the filter keeps among n, or -1 when unknown. */
static int64_t filter_count(const VecFilter *f, uint32_t n) {
    if (!f) return n;
    if (f->nAllow >= 0) return f->nAllow;
    if (f->pAllow && !f->xAllow) {
        size_t c = bitset_count(f->pAllow);
        return c < n ? (int64_t)c : n;
    }
    return -1;
}

/* Whether a query with beam ef should scan exactly. */
static int choose_exact(const VecHnsw *h, int64_t nAllow, uint32_t n, size_t ef) {
    if (nAllow < 0) return 0;
    if ((uint64_t)nAllow <= ef) return 1;
    return h->exactFactor > 0 && (double)nAllow * (double)nAllow <= h->exactFactor * (double)ef * n;
}

/* The exact scan: every allowed, written row below n, by blocks of
** vec_dist_batch. With bRange, rows within radius go to s->aWithin;
** otherwise the best k go to the s->aRes heap. */
static int scan_exact(const VecHnsw *h, Scratch *s, const float *q, uint32_t n, size_t k,
                      const VecFilter *f, int bRange, float radius, VecSearchStats *st) {
    uint32_t aIdx[EXACT_BLOCK];
    float aD[EXACT_BLOCK];
    const Bitset *pAllow = f ? f->pAllow : NULL;
    uint32_t iRow = 0, i;
    s->nRes = s->nWithin = 0;
    while (iRow < n) {
        uint32_t nIdx = 0;
        while (iRow < n && nIdx < EXACT_BLOCK) {
            if (pAllow) {
                /* Jump over rejected rows 64 at a time. */
                size_t j = bitset_next(pAllow, iRow);
                if (j >= n) break;
                iRow = (uint32_t)j;
            }
            if (LOAD_ACQ(&h->aLevel[iRow]) >= 0 && filter_pass(f, iRow)) aIdx[nIdx++] = iRow;
            iRow++;
        }
        if (!nIdx) break;
        vec_dist_batch(h->metric, q, h->aVec, h->dims, aIdx, nIdx, h->dims, aD);
        if (st) {
            st->nDist += nIdx;
            st->nVisited += nIdx;
        }
        for (i = 0; i < nIdx; i++) {
            Cand c = {aD[i], aIdx[i]};
            if (bRange) {
                if (c.d > radius) continue;
                if (grow_buf(&s->aWithin, &s->capWithin, s->nWithin + 1)) return LP_NOMEM;
                s->aWithin[s->nWithin++] = c;
            } else if (s->nRes < k || cand_less(c, s->aRes[0])) {
                if (res_push(s, c)) return LP_NOMEM;
                if (s->nRes > k) res_pop(s);
            }
        }
    }
    return LP_OK;
}

/* Copies the best k of the result heap into aHit, ascending. */
static int emit_res(Scratch *s, size_t k, VecHit *aHit) {
    size_t i, n;
    while (s->nRes > k) res_pop(s);
    n = s->nRes;
    if (grow_buf(&s->aCand, &s->capCand, n)) return -1;
    res_drain(s, s->aCand);
    for (i = 0; i < n; i++) {
        aHit[i].id = s->aCand[i].id;
        aHit[i].dist = s->aCand[i].d;
    }
    return (int)n;
}

static void stats_init(VecSearchStats *st) {
    if (!st) return;
    memset(st, 0, sizeof(*st));
    st->nAllow = -1;
}

/* Shared entry of the searches: validation, locking, scratch. */
static int search_begin(VecHnsw *h, const float *q, Scratch **ps, LpError *err) {
    if (!all_finite(q, h->dims)) return lp_err_set(err, LP_BADINPUT, "hnsw: query has a NaN or infinite component");
    pthread_rwlock_rdlock(&h->growLock);
    *ps = scratch_get(h);
    if (!*ps) {
        pthread_rwlock_unlock(&h->growLock);
        return lp_err_set(err, LP_NOMEM, "hnsw: out of memory for search scratch");
    }
    return LP_OK;
}

static void search_end(VecHnsw *h, Scratch *s) {
    scratch_put(h, s);
    pthread_rwlock_unlock(&h->growLock);
}

/* ---- repair of unreachable rows --------------------------------------- */

static int repair_allow(void *pCtx, uint32_t id) { return ((const uint8_t *)pCtx)[id]; }

/* Breadth-first over layer 0: marks in aSeen every row reachable from the
** queued rows aQ[*pHead..*pnQ), queueing each one it marks. */
static void repair_reach(const VecHnsw *h, uint8_t *aSeen, uint32_t *aQ, uint32_t *pHead, uint32_t *pnQ,
                         uint32_t n) {
    uint32_t head = *pHead, nQ = *pnQ;
    while (head < nQ) {
        const uint32_t *pList = row_list(h, aQ[head++], 0);
        uint32_t c = LOAD_ACQ(&pList[0]);
        if (c > h->M0) c = h->M0;
        for (uint32_t i = 0; i < c; i++) {
            uint32_t nb = LOAD_ACQ(&pList[1 + i]);
            if (nb < n && !aSeen[nb]) {
                aSeen[nb] = 1;
                aQ[nQ++] = nb;
            }
        }
    }
    *pHead = head;
    *pnQ = nQ;
}

/* The beam of repair's own-vector searches: a row found at this width is
** found by the default one. */
#define REPAIR_EF 16

/* Appends u to w's layer-0 list if it has room and u is not w: 1 if so. */
static int append_link(const VecHnsw *h, uint32_t w, uint32_t u) {
    uint32_t *pList = row_list(h, w, 0);
    int bLinked = 0;
    if (w == u) return 0;
    row_lock(&h->aLock[w]);
    uint32_t c = LOAD_ACQ(&pList[0]);
    if (c < h->M0) {
        STORE_REL(&pList[1 + c], u);
        STORE_REL(&pList[0], c + 1);
        bLinked = 1;
    }
    row_unlock(&h->aLock[w]);
    return bLinked;
}

int vec_hnsw_repair(VecHnsw *h, uint32_t *pnFound, uint32_t *pnLeft, LpError *err) {
    uint32_t n = vec_hnsw_count(h), nFound = 0, nLeft = 0, head = 0, nQ = 1;
    uint64_t ep = LOAD_ACQ(&h->ep);
    *pnFound = *pnLeft = 0;
    if (h->bReadOnly) return lp_err_set(err, LP_UNSUPPORTED, "hnsw: a read-only graph cannot be repaired");
    if (ep == EP_NONE || n < 2) return LP_OK;
    uint8_t *aSeen = calloc(n, 1), *aCounted = calloc(n, 1);
    uint32_t *aQ = malloc(sizeof(uint32_t) * (size_t)n);
    Cand *aNear = malloc(sizeof(Cand) * (size_t)(h->efC > REPAIR_EF ? h->efC : REPAIR_EF));
    Scratch *s = NULL;
    int rc = aSeen && aCounted && aQ && aNear ? LP_OK : LP_NOMEM;
    if (rc == LP_OK) {
        pthread_rwlock_rdlock(&h->growLock);
        s = scratch_get(h);
        if (!s) {
            pthread_rwlock_unlock(&h->growLock);
            rc = LP_NOMEM;
        }
    }
    if (rc == LP_OK) {
        /* First every row a search for its own vector does not find (a
        ** row with no in-link, or one listed only far from where searches
        ** near it go): linked from the nearest rows that search found. */
        for (uint32_t u = 0; u < n && rc == LP_OK; u++) {
            const float *v = row_vec(h, u);
            LayerQuery lq = {v, 0, REPAIR_EF, NULL, 0, 0};
            uint32_t cur;
            float d;
            descend(h, v, ep, 0, &cur, &d, NULL);
            if ((rc = search_layer(h, s, &lq, cur, d, NULL)) != LP_OK) break;
            size_t nNear = res_drain(s, aNear), nLink = 0;
            int bFound = 0;
            for (size_t i = 0; i < nNear && !bFound; i++) bFound = aNear[i].id == u;
            if (bFound) continue;
            nFound++;
            for (size_t i = 0; i < nNear && nLink < 2; i++) nLink += append_link(h, aNear[i].id, u);
            if (!nLink) {
                nLeft++;
                aCounted[u] = 1; /* the walk below must not count it again */
            }
        }
        aSeen[(uint32_t)ep] = 1;
        aQ[0] = (uint32_t)ep;
        repair_reach(h, aSeen, aQ, &head, &nQ, n);
        for (uint32_t u = 0; u < n && rc == LP_OK && nQ < n; u++) {
            if (aSeen[u]) continue;
            if (!aCounted[u]) nFound++;
            const float *v = row_vec(h, u);
            VecFilter f = {NULL, repair_allow, aSeen, -1};
            LayerQuery lq = {v, 0, h->efC, &f, 0, 0};
            uint32_t cur;
            float d;
            descend(h, v, ep, 0, &cur, &d, NULL);
            if ((rc = search_layer(h, s, &lq, cur, d, NULL)) != LP_OK) break;
            size_t nNear = res_drain(s, aNear);
            int bLinked = 0;
            for (size_t i = 0; i < nNear && !bLinked; i++) bLinked = append_link(h, aNear[i].id, u);
            if (!bLinked) {
                if (!aCounted[u]) nLeft++;
                continue;
            }
            if (aCounted[u]) nLeft--;
            aSeen[u] = 1;
            aQ[nQ++] = u;
            repair_reach(h, aSeen, aQ, &head, &nQ, n);
        }
        search_end(h, s);
    }
    free(aSeen);
    free(aCounted);
    free(aQ);
    free(aNear);
    *pnFound = nFound;
    *pnLeft = nLeft;
    return rc == LP_OK ? LP_OK : lp_err_set(err, rc, "hnsw: out of memory repairing the graph");
}

int vec_hnsw_search_exact(VecHnsw *h, const float *q, int k, const VecFilter *filter, VecHit *aHit,
                          int *pnHit, VecSearchStats *st, LpError *err) {
    Scratch *s;
    int rc, n;
    *pnHit = 0;
    stats_init(st);
    if (k < 1) return lp_err_set(err, LP_BADINPUT, "hnsw: k must be at least 1 (got %d)", k);
    if ((rc = search_begin(h, q, &s, err))) return rc;
    filter = effective_filter(filter);
    if (st) {
        st->path = VEC_PATH_EXACT;
        st->nAllow = filter_count(filter, vec_hnsw_count(h));
    }
    rc = scan_exact(h, s, prepare_query(h, s, q), vec_hnsw_count(h), (size_t)k, filter, 0, 0, st);
    if (!rc && (n = emit_res(s, (size_t)k, aHit)) >= 0) *pnHit = n;
    else rc = LP_NOMEM;
    search_end(h, s);
    return rc ? lp_err_set(err, rc, "hnsw: out of memory during exact search") : LP_OK;
}

int vec_hnsw_search(VecHnsw *h, const float *q, int k, int ef, const VecFilter *filter, VecHit *aHit,
                    int *pnHit, VecSearchStats *st, LpError *err) {
    Scratch *s;
    uint32_t n, cur;
    uint64_t ep;
    int64_t nAllow;
    int rc, nOut;
    float d;
    VecSearchStats st0;
    *pnHit = 0;
    if (!st) st = &st0;
    stats_init(st);
    if (k < 1) return lp_err_set(err, LP_BADINPUT, "hnsw: k must be at least 1 (got %d)", k);
    if (ef <= 0) ef = k > VEC_HNSW_DEFAULT_EF ? k : VEC_HNSW_DEFAULT_EF;
    if (ef < k) ef = k;
    if ((rc = search_begin(h, q, &s, err))) return rc;
    filter = effective_filter(filter);
    q = prepare_query(h, s, q);
    n = vec_hnsw_count(h);
    ep = LOAD_ACQ(&h->ep);
    st->nAllow = nAllow = filter_count(filter, n);
    if (ep == EP_NONE || choose_exact(h, nAllow, n, (size_t)ef)) {
        st->path = VEC_PATH_EXACT;
        rc = scan_exact(h, s, q, n, (size_t)k, filter, 0, 0, st);
    } else {
        LayerQuery lq = {q, 0, (size_t)ef, filter, 0, 0};
        st->path = VEC_PATH_GRAPH;
        descend(h, q, ep, 0, &cur, &d, st);
        rc = search_layer(h, s, &lq, cur, d, st);
        /* Too few allowed rows reachable: only a scan can be sure. */
        if (!rc && s->nRes < (size_t)k && (nAllow < 0 || (uint64_t)nAllow > s->nRes)) {
            st->path = VEC_PATH_GRAPH_EXACT;
            rc = scan_exact(h, s, q, n, (size_t)k, filter, 0, 0, st);
        }
    }
    if (!rc) {
        nOut = emit_res(s, (size_t)k, aHit);
        if (nOut < 0) rc = LP_NOMEM;
        else *pnHit = nOut;
    }
    search_end(h, s);
    return rc ? lp_err_set(err, rc, "hnsw: out of memory during search") : LP_OK;
}

int vec_hnsw_range(VecHnsw *h, const float *q, float radius, int maxResults, int ef,
                   const VecFilter *filter, VecHit *aHit, int *pnHit, VecSearchStats *st,
                   LpError *err) {
    Scratch *s;
    uint32_t n, cur;
    uint64_t ep;
    int64_t nAllow;
    int rc;
    float d;
    VecSearchStats st0;
    *pnHit = 0;
    if (!st) st = &st0;
    stats_init(st);
    if (maxResults < 1) return lp_err_set(err, LP_BADINPUT, "hnsw: maxResults must be at least 1 (got %d)", maxResults);
    if (isnan(radius)) return lp_err_set(err, LP_BADINPUT, "hnsw: radius is NaN");
    if (ef <= 0) ef = VEC_HNSW_DEFAULT_EF;
    if ((rc = search_begin(h, q, &s, err))) return rc;
    filter = effective_filter(filter);
    q = prepare_query(h, s, q);
    n = vec_hnsw_count(h);
    ep = LOAD_ACQ(&h->ep);
    st->nAllow = nAllow = filter_count(filter, n);
    if (ep == EP_NONE || choose_exact(h, nAllow, n, (size_t)ef)) {
        st->path = VEC_PATH_EXACT;
        rc = scan_exact(h, s, q, n, 0, filter, 1, radius, st);
    } else {
        LayerQuery lq = {q, 0, (size_t)ef, filter, 1, radius};
        st->path = VEC_PATH_GRAPH;
        descend(h, q, ep, 0, &cur, &d, st);
        rc = search_layer(h, s, &lq, cur, d, st);
    }
    if (!rc) {
        size_t i, nOut = s->nWithin < (size_t)maxResults ? s->nWithin : (size_t)maxResults;
        if (s->nWithin > 1) qsort(s->aWithin, s->nWithin, sizeof(Cand), cand_cmp);
        for (i = 0; i < nOut; i++) {
            aHit[i].id = s->aWithin[i].id;
            aHit[i].dist = s->aWithin[i].d;
        }
        *pnHit = (int)nOut;
    }
    search_end(h, s);
    return rc ? lp_err_set(err, rc, "hnsw: out of memory during range search") : LP_OK;
}

/* ---- sealed files ------------------------------------------------------ */

/* The byte layout is described at the top of this file. The in-memory
** arrays are used in place, so the file's integers and floats must have
** the host's byte order. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "hnsw files map little-endian arrays directly; a big-endian host needs a converting reader"
#endif

#define HF_MAGIC "LOUPEHNS"
#define HF_FOOT_MAGIC "LPHNSEND"
#define HF_VERSION 1
#define HF_HEADER_SIZE 64
#define HF_FOOTER_SIZE 128
#define HF_ALIGN 64             /* every section starts at a multiple of this */
#define HF_NONE UINT32_MAX      /* entry id of an empty graph */
#define HF_NSEC 4               /* vectors, layer 0, levels, upper layers */
#define HF_WBUF (1u << 20)      /* write buffer */

static const char *const azHfSec[HF_NSEC] = {"vectors", "layer-0", "levels", "upper-layer"};

/* Where each section lies in a file of count rows. */
typedef struct HfLayout {
    uint64_t aOff[HF_NSEC];     /* section offsets */
    uint64_t aSize[HF_NSEC];    /* section sizes, padding excluded */
    uint64_t offFoot;           /* footer offset */
    uint64_t nFile;             /* file size */
} HfLayout;

static uint64_t hf_align(uint64_t x) { return (x + HF_ALIGN - 1) & ~(uint64_t)(HF_ALIGN - 1); }

/* No product here overflows 64 bits: count < 2^32, dims <= 2^16,
** 1 + M0 <= 513, nUpRec <= 31 * count (the reader checks that first). */
static void hf_layout(uint32_t count, uint32_t dims, uint32_t M, uint64_t nUpRec, HfLayout *L) {
    uint64_t off = HF_HEADER_SIZE;
    int s;
    L->aSize[0] = (uint64_t)count * dims * sizeof(float);
    L->aSize[1] = (uint64_t)count * (1 + 2 * (uint64_t)M) * sizeof(uint32_t);
    L->aSize[2] = count;
    L->aSize[3] = nUpRec * (1 + (uint64_t)M) * sizeof(uint32_t);
    for (s = 0; s < HF_NSEC; s++) {
        L->aOff[s] = off;
        off = hf_align(off + L->aSize[s]);
    }
    L->offFoot = off;
    L->nFile = off + HF_FOOTER_SIZE;
}

/* -- writing -- */

typedef struct HfWriter {
    const char *zPath;          /* for messages */
    int fd;                     /* the file being written */
    uint64_t off;               /* bytes handed to hf_put so far */
    uint8_t *aBuf;              /* HF_WBUF bytes of buffer */
    size_t nBuf;                /* bytes buffered */
    uint32_t crc;               /* running CRC32C of the current section */
    int rc;                     /* sticky: first error */
    LpError *err;               /* where it went */
} HfWriter;

static int hf_fail_io(HfWriter *w, const char *zWhat, int e) {
    if (w->rc) return w->rc;
    w->rc = lp_err_set(w->err, LP_IOERR, "hnsw file %s: %s at offset %llu: %s", w->zPath, zWhat,
                       (unsigned long long)w->off, strerror(e));
    return w->rc;
}

static int hf_write_raw(HfWriter *w, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return hf_fail_io(w, "write", errno);
        }
        if (k == 0) return hf_fail_io(w, "write", EIO);
        p += k;
        n -= (size_t)k;
    }
    return LP_OK;
}

static int hf_flush(HfWriter *w) {
    if (w->rc || !w->nBuf) return w->rc;
    hf_write_raw(w, w->aBuf, w->nBuf);
    w->nBuf = 0;
    return w->rc;
}

/* Appends n bytes, extending the section CRC. Large blocks (the vectors)
** go straight to the file. */
static int hf_put(HfWriter *w, const void *p, size_t n) {
    if (w->rc) return w->rc;
    w->crc = crc32c_update(w->crc, p, n);
    if (w->nBuf + n > HF_WBUF) {
        if (hf_flush(w)) return w->rc;
        if (n >= HF_WBUF) {
            hf_write_raw(w, p, n);
            w->off += n;
            return w->rc;
        }
    }
    memcpy(w->aBuf + w->nBuf, p, n);
    w->nBuf += n;
    w->off += n;
    return LP_OK;
}

/* Zeros up to the next HF_ALIGN boundary (outside any CRC). */
static void hf_pad(HfWriter *w) {
    static const uint8_t aZero[HF_ALIGN];
    uint32_t crc = w->crc;
    hf_put(w, aZero, (size_t)(hf_align(w->off) - w->off));
    w->crc = crc;
}

/* Writes one neighbour record: the count (clamped to nMax, as searches
** read it) and its ids, unused slots zeroed so files are deterministic. */
static void hf_put_list(HfWriter *w, uint32_t *aRec, const uint32_t *pList, uint32_t nMax) {
    uint32_t i, n = LOAD_ACQ(&pList[0]);
    if (n > nMax) n = nMax;
    aRec[0] = n;
    for (i = 0; i < n; i++) aRec[1 + i] = LOAD_ACQ(&pList[1 + i]);
    memset(aRec + 1 + n, 0, (size_t)(nMax - n) * sizeof(uint32_t));
    hf_put(w, aRec, (1 + (size_t)nMax) * sizeof(uint32_t));
}

int vec_hnsw_save(VecHnsw *h, const char *zPath, LpError *err) {
    HfWriter w;
    HfLayout L;
    uint8_t aHdr[HF_HEADER_SIZE], aFoot[HF_FOOTER_SIZE];
    uint32_t aCrc[1 + HF_NSEC], *aRec = NULL;
    uint32_t i, count, entry = HF_NONE, entryLevel = 0;
    uint64_t ep, nUpRec = 0, bits;
    int s, l;

    memset(&w, 0, sizeof(w));
    w.zPath = zPath;
    w.fd = -1;
    w.err = err;
    pthread_rwlock_rdlock(&h->growLock);
    count = vec_hnsw_count(h);
    ep = LOAD_ACQ(&h->ep);
    /* The caller promised no insert runs: every row is complete. Check
    ** the invariants the reader will, rather than write a file it refuses. */
    for (i = 0; i < count; i++) {
        int8_t lv = LOAD_ACQ(&h->aLevel[i]);
        if (lv < 0 || lv > MAX_LEVEL || (lv > 0 && !h->aUp[i])) {
            w.rc = lp_err_set(err, LP_INTERNAL, "hnsw file %s: row %u is incomplete (an insert is running?)",
                              zPath, i);
            goto done;
        }
        nUpRec += (uint64_t)lv;
    }
    if (ep != EP_NONE) {
        entry = (uint32_t)ep;
        entryLevel = (uint32_t)(ep >> 32);
    }
    if ((count == 0) != (entry == HF_NONE) || (count && (entry >= count || entryLevel != (uint32_t)h->aLevel[entry]))) {
        w.rc = lp_err_set(err, LP_INTERNAL, "hnsw file %s: entry point inconsistent with %u rows", zPath, count);
        goto done;
    }
    hf_layout(count, h->dims, h->M, nUpRec, &L);

    w.aBuf = malloc(HF_WBUF);
    aRec = malloc((1 + (size_t)h->M0) * sizeof(uint32_t));
    if (!w.aBuf || !aRec) {
        w.rc = lp_err_set(err, LP_NOMEM, "hnsw file %s: out of memory for the write buffer", zPath);
        goto done;
    }
    w.fd = open(zPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w.fd < 0) {
        w.rc = lp_err_set(err, LP_IOERR, "hnsw file %s: cannot create: %s", zPath, strerror(errno));
        goto done;
    }

    memset(aHdr, 0, sizeof(aHdr));
    memcpy(aHdr, HF_MAGIC, 8);
    put_u32le(aHdr + 8, HF_VERSION);
    put_u32le(aHdr + 12, h->dims);
    put_u32le(aHdr + 16, (uint32_t)h->metric);
    put_u32le(aHdr + 20, h->M);
    put_u32le(aHdr + 24, h->M0);
    put_u32le(aHdr + 28, h->efC);
    put_u64le(aHdr + 32, h->seed);
    memcpy(&bits, &h->exactFactor, sizeof(bits));
    put_u64le(aHdr + 40, bits);
    put_u32le(aHdr + 48, count);
    put_u32le(aHdr + 52, entry);
    put_u32le(aHdr + 56, entryLevel);
    put_u32le(aHdr + 60, 0);
    w.crc = 0;
    hf_put(&w, aHdr, sizeof(aHdr));
    aCrc[0] = w.crc;

    /* Vectors: the array as it is. */
    w.crc = 0;
    hf_put(&w, h->aVec, (size_t)L.aSize[0]);
    aCrc[1] = w.crc;
    hf_pad(&w);
    /* Layer 0: the records in place. */
    w.crc = 0;
    for (i = 0; i < count && !w.rc; i++) hf_put_list(&w, aRec, row_list(h, i, 0), h->M0);
    aCrc[2] = w.crc;
    hf_pad(&w);
    /* Levels. */
    w.crc = 0;
    hf_put(&w, h->aLevel, count);
    aCrc[3] = w.crc;
    hf_pad(&w);
    /* Upper layers: each row's block, rows in order. */
    w.crc = 0;
    for (i = 0; i < count && !w.rc; i++)
        for (l = 1; l <= h->aLevel[i]; l++) hf_put_list(&w, aRec, row_list(h, i, l), h->M);
    aCrc[4] = w.crc;
    hf_pad(&w);
    if (w.rc) goto done;
    if (w.off != L.offFoot) {
        w.rc = lp_err_set(err, LP_INTERNAL, "hnsw file %s: wrote %llu bytes before the footer, expected %llu",
                          zPath, (unsigned long long)w.off, (unsigned long long)L.offFoot);
        goto done;
    }

    memset(aFoot, 0, sizeof(aFoot));
    for (s = 0; s < HF_NSEC; s++) {
        put_u64le(aFoot + 16 * s, L.aOff[s]);
        put_u64le(aFoot + 16 * s + 8, L.aSize[s]);
    }
    put_u64le(aFoot + 64, nUpRec);
    for (s = 0; s <= HF_NSEC; s++) put_u32le(aFoot + 72 + 4 * s, aCrc[s]);
    put_u32le(aFoot + 116, crc32c_update(0, aFoot, 116));
    memcpy(aFoot + 120, HF_FOOT_MAGIC, 8);
    hf_put(&w, aFoot, sizeof(aFoot));
    if (hf_flush(&w)) goto done;
    if (fsync(w.fd) != 0) {
        hf_fail_io(&w, "fsync", errno);
        goto done;
    }

done:
    pthread_rwlock_unlock(&h->growLock);
    if (w.fd >= 0) {
        if (close(w.fd) != 0 && !w.rc) hf_fail_io(&w, "close", errno);
        /* A partial file must not be mistaken for a segment. */
        if (w.rc) unlink(zPath);
    }
    free(w.aBuf);
    free(aRec);
    return w.rc;
}

/* -- reading -- */

/* LP_CORRUPT naming the file and the offset of the damage. */
static int hf_corrupt(const char *zName, LpError *err, uint64_t off, const char *zFmt, ...)
    __attribute__((format(printf, 4, 5)));
static int hf_corrupt(const char *zName, LpError *err, uint64_t off, const char *zFmt, ...) {
    char zMsg[LP_ERRMSG_MAX];
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(zMsg, sizeof(zMsg), zFmt, ap);
    va_end(ap);
    return lp_err_setpos(err, LP_CORRUPT, (int64_t)off, "hnsw file %s: corrupt: %s at offset %llu", zName, zMsg,
                         (unsigned long long)off);
}

/* Checks one neighbour record at file offset off: count <= nMax, every id
** a row, and on upper layers (layer > 0) a row that has the layer. */
static int hf_check_list(const char *zName, LpError *err, const uint32_t *pRec, uint64_t off, uint32_t nMax,
                         uint32_t count, const int8_t *aLevel, int layer, uint32_t row) {
    uint32_t i, n = pRec[0];
    if (n > nMax)
        return hf_corrupt(zName, err, off, "row %u layer %d: %u neighbours (at most %u)", row, layer, n, nMax);
    for (i = 0; i < n; i++) {
        uint32_t nb = pRec[1 + i];
        if (nb >= count)
            return hf_corrupt(zName, err, off + 4 * (1 + (uint64_t)i), "row %u layer %d: neighbour %u of %u rows",
                              row, layer, nb, count);
        if (aLevel[nb] < layer)
            return hf_corrupt(zName, err, off + 4 * (1 + (uint64_t)i),
                              "row %u layer %d: neighbour %u has only %d layers above 0", row, layer, nb, aLevel[nb]);
    }
    return LP_OK;
}

/* Verifies the whole file (see the contract in hnsw.h) and, when it is
** sound, returns a read-only graph over it in *ppH. */
static int hf_open(const uint8_t *a, size_t n, const char *zName, int flags, VecHnsw **ppH, LpError *err) {
    const int bCrc = !(flags & VEC_HNSW_NOCHECKSUM);
    const uint8_t *pFoot;
    uint32_t dims, metric, M, M0, efC, count, entry, entryLevel, i;
    uint64_t offFoot, nUpRec, sumLevel = 0, bits, off;
    double exactFactor;
    const int8_t *aLevel;
    const uint32_t *pRec;
    const float *aVec;
    HfLayout L;
    VecHnsw *h;
    int s, l;

    /* Footer, then the header it vouches for. */
    if (n < HF_HEADER_SIZE + HF_FOOTER_SIZE) return hf_corrupt(zName, err, 0, "file too small (%zu bytes)", n);
    offFoot = n - HF_FOOTER_SIZE;
    pFoot = a + offFoot;
    if (memcmp(pFoot + 120, HF_FOOT_MAGIC, 8) != 0)
        return hf_corrupt(zName, err, offFoot + 120, "bad footer magic (truncated file?)");
    if (bCrc && crc32c_update(0, pFoot, 116) != get_u32le(pFoot + 116))
        return hf_corrupt(zName, err, offFoot + 116, "footer checksum mismatch");
    if (memcmp(a, HF_MAGIC, 8) != 0) return hf_corrupt(zName, err, 0, "bad magic");
    if (bCrc && crc32c_update(0, a, HF_HEADER_SIZE) != get_u32le(pFoot + 72))
        return hf_corrupt(zName, err, 0, "header checksum mismatch");
    if (get_u32le(a + 8) != HF_VERSION)
        return hf_corrupt(zName, err, 8, "unknown format version %u", get_u32le(a + 8));
    dims = get_u32le(a + 12);
    metric = get_u32le(a + 16);
    M = get_u32le(a + 20);
    M0 = get_u32le(a + 24);
    efC = get_u32le(a + 28);
    bits = get_u64le(a + 40);
    memcpy(&exactFactor, &bits, sizeof(exactFactor));
    count = get_u32le(a + 48);
    entry = get_u32le(a + 52);
    entryLevel = get_u32le(a + 56);
    if (dims == 0 || dims > VEC_HNSW_MAX_DIMS) return hf_corrupt(zName, err, 12, "dims %u", dims);
    if (metric != VEC_L2 && metric != VEC_IP && metric != VEC_COSINE)
        return hf_corrupt(zName, err, 16, "unknown metric %u", metric);
    if (M < 2 || M > VEC_HNSW_MAX_M) return hf_corrupt(zName, err, 20, "M %u", M);
    if (M0 != 2 * M) return hf_corrupt(zName, err, 24, "M0 %u with M %u", M0, M);
    if (efC < M) return hf_corrupt(zName, err, 28, "efConstruction %u below M %u", efC, M);
    if (!isfinite(exactFactor) || exactFactor == 0)
        return hf_corrupt(zName, err, 40, "exact-scan factor %g", exactFactor);
    if (count == 0 ? entry != HF_NONE || entryLevel != 0 : entry >= count || entryLevel > MAX_LEVEL)
        return hf_corrupt(zName, err, 52, "entry point %u level %u with %u rows", entry, entryLevel, count);
    if (get_u32le(a + 60) != 0) return hf_corrupt(zName, err, 60, "unknown flags 0x%x", get_u32le(a + 60));

    /* The sections: where they must be, then their checksums. */
    nUpRec = get_u64le(pFoot + 64);
    if (nUpRec > (uint64_t)count * MAX_LEVEL)
        return hf_corrupt(zName, err, offFoot + 64, "%llu upper-layer records for %u rows",
                          (unsigned long long)nUpRec, count);
    hf_layout(count, dims, M, nUpRec, &L);
    if (L.nFile != n)
        return hf_corrupt(zName, err, n < L.nFile ? n : L.nFile, "file is %zu bytes, its header and footer say %llu", n,
                          (unsigned long long)L.nFile);
    for (s = 0; s < HF_NSEC; s++) {
        if (get_u64le(pFoot + 16 * s) != L.aOff[s] || get_u64le(pFoot + 16 * s + 8) != L.aSize[s])
            return hf_corrupt(zName, err, offFoot + 16 * s, "%s section at %llu size %llu, expected %llu size %llu",
                              azHfSec[s], (unsigned long long)get_u64le(pFoot + 16 * s),
                              (unsigned long long)get_u64le(pFoot + 16 * s + 8), (unsigned long long)L.aOff[s],
                              (unsigned long long)L.aSize[s]);
    }
    for (off = 92; off < 116; off++)
        if (pFoot[off]) return hf_corrupt(zName, err, offFoot + off, "reserved footer byte not zero");
    for (s = 0; s < HF_NSEC; s++) {
        uint64_t end = L.aOff[s] + L.aSize[s], next = s + 1 < HF_NSEC ? L.aOff[s + 1] : L.offFoot;
        for (off = end; off < next; off++)
            if (a[off]) return hf_corrupt(zName, err, off, "padding after the %s section not zero", azHfSec[s]);
        if (bCrc && crc32c_update(0, a + L.aOff[s], (size_t)L.aSize[s]) != get_u32le(pFoot + 76 + 4 * s))
            return hf_corrupt(zName, err, L.aOff[s], "%s section checksum mismatch", azHfSec[s]);
    }

    /* Structure: everything a search will follow. */
    aVec = (const float *)(const void *)(a + L.aOff[0]);
    aLevel = (const int8_t *)(a + L.aOff[2]);
    for (i = 0; i < count; i++) {
        if (aLevel[i] < 0 || aLevel[i] > MAX_LEVEL)
            return hf_corrupt(zName, err, L.aOff[2] + i, "row %u: level %d", i, aLevel[i]);
        sumLevel += (uint64_t)aLevel[i];
    }
    if (sumLevel != nUpRec)
        return hf_corrupt(zName, err, offFoot + 64, "%llu upper-layer records, the levels need %llu",
                          (unsigned long long)nUpRec, (unsigned long long)sumLevel);
    if (count && (uint32_t)aLevel[entry] != entryLevel)
        return hf_corrupt(zName, err, 56, "entry point %u has level %d, header says %u", entry, aLevel[entry],
                          entryLevel);
    pRec = (const uint32_t *)(a + L.aOff[1]);
    for (i = 0; i < count; i++, pRec += 1 + M0) {
        int rc = hf_check_list(zName, err, pRec, L.aOff[1] + (uint64_t)i * (1 + M0) * 4, M0, count, aLevel, 0, i);
        if (rc) return rc;
    }
    pRec = (const uint32_t *)(a + L.aOff[3]);
    for (i = 0; i < count; i++) {
        for (l = 1; l <= aLevel[i]; l++, pRec += 1 + M) {
            int rc = hf_check_list(zName, err, pRec, (uint64_t)((const uint8_t *)pRec - a), M, count, aLevel, l, i);
            if (rc) return rc;
        }
    }
    for (off = 0; off < (uint64_t)count * dims; off++)
        if (!isfinite(aVec[off]))
            return hf_corrupt(zName, err, L.aOff[0] + 4 * off, "row %llu: component %llu is not finite",
                              (unsigned long long)(off / dims), (unsigned long long)(off % dims));

    /* Sound: a read-only graph whose arrays are the sections. */
    h = calloc(1, sizeof(*h));
    if (h) h->aUp = calloc(count ? count : 1, sizeof(*h->aUp));
    if (!h || !h->aUp) {
        free(h);
        return lp_err_set(err, LP_NOMEM, "hnsw file %s: out of memory for %u rows", zName, count);
    }
    h->dims = dims;
    h->metric = (VecMetric)metric;
    h->xDist = vec_dist_fn(h->metric);
    h->M = M;
    h->M0 = M0;
    h->efC = efC;
    h->mult = 1.0 / log((double)M);
    h->seed = get_u64le(a + 32);
    h->exactFactor = exactFactor;
    h->nL0 = 1 + (size_t)M0;
    h->nUp = 1 + (size_t)M;
    h->cap = h->nRow = count;
    h->aVec = (float *)(uintptr_t)aVec;
    h->aL0 = (uint32_t *)(uintptr_t)(a + L.aOff[1]);
    h->aLevel = (int8_t *)(uintptr_t)aLevel;
    pRec = (const uint32_t *)(a + L.aOff[3]);
    for (i = 0; i < count; i++) {
        if (aLevel[i] == 0) continue;
        h->aUp[i] = (uint32_t *)(uintptr_t)pRec;
        pRec += (size_t)aLevel[i] * h->nUp;
    }
    h->ep = count ? (uint64_t)entryLevel << 32 | entry : EP_NONE;
    h->bReadOnly = 1;
    h->pMap = a;
    h->nMap = n;
    pthread_rwlock_init(&h->growLock, NULL);
    pthread_mutex_init(&h->epMutex, NULL);
    pthread_mutex_init(&h->busyMutex, NULL);
    memset(h->aBusy, 0xff, sizeof(h->aBusy));
    pthread_mutex_init(&h->poolMutex, NULL);
    *ppH = h;
    return LP_OK;
}

int vec_hnsw_open_mem(const uint8_t *a, size_t n, const char *zName, int flags, VecHnsw **ppH, LpError *err) {
    *ppH = NULL;
    if (!zName) zName = "(memory)";
    if ((uintptr_t)a % sizeof(uint32_t) != 0)
        return lp_err_set(err, LP_BADINPUT, "hnsw file %s: buffer is not 4-byte aligned", zName);
    return hf_open(a, n, zName, flags, ppH, err);
}

int vec_hnsw_open_file(const char *zPath, VecHnsw **ppH, LpError *err) {
    struct stat st;
    size_t n;
    void *a;
    int fd, e, rc;
    *ppH = NULL;
    fd = open(zPath, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return lp_err_set(err, LP_IOERR, "hnsw file %s: cannot open: %s", zPath, strerror(errno));
    if (fstat(fd, &st) != 0) {
        e = errno;
        close(fd);
        return lp_err_set(err, LP_IOERR, "hnsw file %s: cannot stat: %s", zPath, strerror(e));
    }
    n = (size_t)st.st_size;
    /* mmap refuses a length of 0: report small files before mapping. */
    if (n < HF_HEADER_SIZE + HF_FOOTER_SIZE) {
        close(fd);
        return hf_corrupt(zPath, err, 0, "file too small (%zu bytes)", n);
    }
    /* Shared and read-only: the pages are the page cache's, shared by
    ** every reader of the file; the descriptor is not needed once mapped. */
    a = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
    e = errno;
    close(fd);
    if (a == MAP_FAILED) return lp_err_set(err, LP_IOERR, "hnsw file %s: cannot map: %s", zPath, strerror(e));
    rc = hf_open(a, n, zPath, 0, ppH, err);
    if (rc != LP_OK) {
        munmap(a, n);
        return rc;
    }
    (*ppH)->bMapped = 1;
    return LP_OK;
}

size_t vec_hnsw_mapped_bytes(const VecHnsw *h) { return h->bReadOnly ? h->nMap : 0; }

/* ---- copies ------------------------------------------------------------ */

VecHnsw *vec_hnsw_copy(const VecHnsw *src, uint32_t capacity, LpError *err) {
    VecHnsw *s = (VecHnsw *)(uintptr_t)src; /* only its lock is taken */
    VecHnswConfig cfg;
    VecHnsw *h;
    uint32_t i, count;
    pthread_rwlock_rdlock(&s->growLock);
    count = vec_hnsw_count(src);
    memset(&cfg, 0, sizeof(cfg));
    cfg.dims = src->dims;
    cfg.metric = src->metric;
    cfg.M = src->M;
    cfg.efConstruction = src->efC;
    cfg.capacity = capacity > count ? capacity : count;
    cfg.seed = src->seed;
    cfg.exactFactor = src->exactFactor;
    h = vec_hnsw_new(&cfg, err);
    if (!h) goto done;
    memcpy(h->aVec, src->aVec, (size_t)count * src->dims * sizeof(float));
    memcpy(h->aL0, src->aL0, (size_t)count * src->nL0 * sizeof(uint32_t));
    memcpy(h->aLevel, src->aLevel, count);
    for (i = 0; i < count; i++) {
        size_t nByte = (size_t)(src->aLevel[i] > 0 ? src->aLevel[i] : 0) * src->nUp * sizeof(uint32_t);
        if (!nByte) continue;
        h->aUp[i] = malloc(nByte);
        if (!h->aUp[i]) {
            lp_err_set(err, LP_NOMEM, "hnsw: out of memory copying the upper layers of row %u", i);
            vec_hnsw_free(h);
            h = NULL;
            goto done;
        }
        memcpy(h->aUp[i], src->aUp[i], nByte);
        h->nUpBytes += nByte;
    }
    h->nRow = count;
    h->ep = LOAD_ACQ(&src->ep);
done:
    pthread_rwlock_unlock(&s->growLock);
    return h;
}
