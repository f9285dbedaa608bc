/*
** hnsw.h — an HNSW graph over float32 vectors: concurrent inserts,
** filtered top-k search, range search, exact scans; in memory, or
** read-only straight from a sealed segment file.
**
** Contract. A VecHnsw stores vectors of cfg.dims floats under dense ids
** 0, 1, 2... in insert order, and a Hierarchical Navigable Small World
** graph over them (Malkov & Yashunin; the construction follows hnswlib):
**   - a new row's top layer is floor(-ln(u) / ln(M)), u uniform in (0,1],
**     drawn from a hash of (seed, id), so the levels do not depend on the
**     order in which threads insert;
**   - layer 0 keeps up to M0 = 2*M neighbours per row, upper layers M;
**   - an insert descends greedily through the layers above the new row's
**     top, then runs an efConstruction-wide beam search on each of its
**     layers, keeps M neighbours chosen by the diversity heuristic
**     (hnswlib's getNeighborsByHeuristic2: a candidate is dropped when it
**     is closer to an already kept neighbour than to the new row) and links
**     back, pruning an overflowing list with the same heuristic.
** Distances are those of vec/distance.h (smaller is closer). COSINE rows
** and queries are normalised (vec_normalize) on the way in; the caller's
** arrays are never modified.
**
** Search. vec_hnsw_search returns the k nearest rows the filter allows,
** nearest first, ties by smaller id. ef (the beam width on layer 0) is
** raised to k when smaller; ef <= 0 means max(k, VEC_HNSW_DEFAULT_EF).
** A filter never "eats" k: rows it rejects are still traversed but never
** returned, and the beam keeps going until it holds ef allowed rows or
** runs out of candidates; if the graph search still ends with fewer than k
** rows (few rows pass, or they are unreachable from the entry point), the
** exact scan runs, so a filtered search returns min(k, rows passing) rows.
** When the rows a filter keeps (counted from the bitmap, or the caller's
** nAllow) number at most ef, or nAllow^2 <= cfg.exactFactor * ef * n, the
** exact scan runs instead of the graph (VecSearchStats.path says which).
** The square root rule is a cost model: a filtered beam must reach about
** ef allowed rows, so it computes some ef*n/nAllow distances at random
** addresses, while the scan computes nAllow of them sequentially; the
** crossover count grows as sqrt(n), not as a fixed fraction of n.
**
** Range search returns the rows within distance <= radius (at most
** maxResults, the nearest ones; a k plus a radius is maxResults = k).
** On the graph path the beam keeps expanding every candidate within the
** radius in addition to the ef nearest, so the region around the query is
** flooded rather than sampled: approximate (recall measured in the unit
** test), exact on the exact path.
**
** Storage, chosen for cache locality: the vectors are one contiguous
** float array (row i at i*dims); layer-0 neighbour lists are fixed-size
** records next to each other (count + M0 ids per row); only rows with
** upper layers get a malloc'd block of nLevel records of (count + M ids).
** cfg.capacity rows are allocated up front; when an insert needs more,
** the arrays grow (doubling) under an exclusive lock (see Thread safety).
** Memory: per row 4*dims + 4*(1+M0) + ~1 bytes, plus ~4*(1+M)/(M-1) for
** upper layers, plus a visited array of 2 bytes per row per concurrent
** search.
**
** Deleted rows: the graph never removes rows; the caller's allow-bitmap
** leaves tombstones out.
**
** Sealed files. vec_hnsw_save writes a graph to a file whose sections are
** the in-memory arrays themselves (byte layout at the top of hnsw.c):
** vectors, layer-0 records, levels, upper-layer records, each 64-byte
** aligned, with CRC32C checksums. vec_hnsw_open_file maps such a file
** (read-only, shared: the pages are the page cache's) and returns a
** read-only graph whose vectors, layer-0 lists, levels and upper-layer
** lists are read from the mapping, not copied; the heap holds only the
** struct and an 8-byte pointer per row into the upper-layer section. Its
** searches run the same code over the same bytes as the graph that was
** saved, so they return the same ids and distances. Nothing is served
** before the whole file is verified (header, sizes, checksums, and every
** count, id, level and vector component a search could follow): a
** damaged file is LP_CORRUPT naming the file and the byte offset, never a
** crash, an out-of-bounds read or a hang. Opening costs one pass over the
** file (checksums and structure). A read-only graph answers searches,
** vec_hnsw_vector and the accessors; vec_hnsw_add fails with
** LP_UNSUPPORTED. To grow it (a merge that starts from its largest input),
** vec_hnsw_copy makes a writable in-memory copy: same config, same rows
** and links, so the copy's searches agree with the original's until rows
** are added, and rows added get the levels they would have had in a graph
** built in one go (levels hash (seed, id)).
**
** Errors: vec_hnsw_new returns NULL with LP_BADINPUT (dims 0 or over
** VEC_HNSW_MAX_DIMS, M < 2 or over VEC_HNSW_MAX_M, unknown metric) or
** LP_NOMEM. vec_hnsw_add: LP_BADINPUT (a NaN or infinite component),
** LP_LIMIT (2^32-1 rows), LP_UNSUPPORTED (a read-only graph), LP_NOMEM;
** an LP_NOMEM after the id was assigned
** (while linking) still returns the id in *pId: the row is stored, found
** by exact scans, and may lack some links. The searches: LP_BADINPUT
** (k < 1, maxResults < 1, NaN radius or query components) or LP_NOMEM.
** vec_hnsw_save: LP_IOERR (create, write, fsync, close; the partial file
** is removed), LP_NOMEM, LP_INTERNAL (a row still being inserted), each
** naming the file. vec_hnsw_open_file/_mem: LP_CORRUPT (file and offset),
** LP_IOERR (open, stat, mmap), LP_BADINPUT (a buffer not 4-byte aligned),
** LP_NOMEM. vec_hnsw_copy: LP_NOMEM.
**
** Thread safety: vec_hnsw_add and the searches may be called from any
** number of threads at once. Rows are linked under per-row spin locks
** (one held at a time, so no lock order to respect), the entry point
** changes under one global mutex, and readers walk the neighbour lists
** without locks: ids and counts are stored with release and loaded with
** acquire semantics (plain moves on x86), every id ever stored in a list
** names a fully written row, so a reader racing a prune sees a valid if
** momentarily mixed list. A search running during inserts sees every row
** whose insert returned before it began, and perhaps some in progress.
** Growth takes the exclusive side of a writer-preferring rwlock whose
** shared side every add and search holds; vec_hnsw_free must not race
** with anything. A read-only graph never changes: any number of threads
** may search it at once. vec_hnsw_save and vec_hnsw_copy read a graph
** that no insert modifies during the call (the caller's promise; searches
** may run).
*/
#ifndef LP_VEC_HNSW_H
#define LP_VEC_HNSW_H

#include <stddef.h>
#include <stdint.h>

#include "util/bitset.h"
#include "util/error.h"
#include "vec/distance.h"

#define VEC_HNSW_DEFAULT_M 16
#define VEC_HNSW_DEFAULT_EF_CONSTRUCTION 200
#define VEC_HNSW_DEFAULT_EF 64
#define VEC_HNSW_DEFAULT_CAPACITY 1024
#define VEC_HNSW_MAX_DIMS 65536
#define VEC_HNSW_MAX_M 256
/* The exact-scan rule's constant (see above), measured on clustered
** 128-d data (1 centre per 100 rows, noise 0.3), k 10, ef 64, bitmap
** filters: the filtered beam and the scan cost the same at about 6,600 of
** 20,000 rows (factor 34) and 16,500 of 100,000 (factor 42); numbers in
** hnsw.c. */
#define VEC_HNSW_DEFAULT_EXACT_FACTOR 36.0

/* vec_hnsw_open_mem flag: skip the CRC checks, keep every structural one
** (fuzzing, so that mutations reach the structure checks). */
#define VEC_HNSW_NOCHECKSUM 1

typedef struct VecHnswConfig {
    uint32_t dims;              /* vector length, 1..VEC_HNSW_MAX_DIMS */
    VecMetric metric;           /* VEC_L2, VEC_IP or VEC_COSINE */
    uint32_t M;                 /* neighbours per upper layer; 0: default */
    uint32_t efConstruction;    /* beam width while inserting; 0: default */
    uint32_t capacity;          /* rows allocated up front; 0: default */
    uint64_t seed;              /* seeds the level draw */
    double exactFactor;         /* see above; 0: default, < 0: only when nAllow <= ef */
} VecHnswConfig;

/* Which rows a search may return. Both parts are optional; a row must pass
** every part given. Rows at or past the bitmap's nBit are rejected (rows
** added after the bitmap was built). The filter is borrowed for the call
** and must not change during it. */
typedef struct VecFilter {
    const Bitset *pAllow;                    /* bit i set: row i allowed; NULL: no bitmap */
    int (*xAllow)(void *pCtx, uint32_t id);  /* nonzero: allowed; NULL: no callback */
    void *pCtx;                              /* xAllow's first argument */
    int64_t nAllow;                          /* rows that pass if known, -1 unknown: then
                                             ** counted from the bitmap, or assumed all
                                             ** when there is only a callback */
} VecFilter;

typedef struct VecHit {
    uint32_t id;                /* row id */
    float dist;                 /* distance to the query */
} VecHit;

typedef enum VecPath {
    VEC_PATH_GRAPH = 0,         /* HNSW traversal */
    VEC_PATH_EXACT = 1,         /* brute-force scan chosen up front */
    VEC_PATH_GRAPH_EXACT = 2    /* the graph found fewer than k rows; the exact scan re-ran */
} VecPath;

typedef struct VecSearchStats {
    VecPath path;               /* which path answered */
    uint64_t nDist;             /* distances computed */
    uint64_t nVisited;          /* rows reached (graph: neighbour lists read; exact: rows scanned) */
    int64_t nAllow;             /* rows the filter keeps as used for the choice, -1 unknown */
} VecSearchStats;

typedef struct VecHnsw VecHnsw; /* opaque */

/* Fills cfg with the defaults for dims and metric. */
void vec_hnsw_config_init(VecHnswConfig *cfg, uint32_t dims, VecMetric metric);

/* A new empty graph. Errors above. */
VecHnsw *vec_hnsw_new(const VecHnswConfig *cfg, LpError *err);
/* Frees everything (and unmaps a file-backed graph); NULL is a no-op. */
void vec_hnsw_free(VecHnsw *h);

/* Writes rows 0..count-1 of h (no insert may run during the call) to a
** new file zPath (replaced if it exists), fsyncs it and closes it. The
** caller fsyncs the folder and publishes the file. On failure zPath is
** removed. zPath must not be the file a read-only h is mapped from.
** Errors above. */
int vec_hnsw_save(VecHnsw *h, const char *zPath, LpError *err);

/* Makes every row findable again by a search for its own vector. Rows
** can lose their in-links: a neighbour list that overflows is pruned by
** the diversity heuristic, which drops a row shadowed by a closer one, and
** in low dimensions, where rows shadow each other often, a few rows end up
** in no list, or only in lists far from where searches near them go. No
** search returns them (measured: 0-4 of 20,000 random 4-d rows, M 4,
** built from 2 threads; concurrent inserts take each other as candidates,
** see hnsw.c, so threads add few of their own). First, for every row, a
** search for its vector (beam 16); a row it does not find is appended to
** the lists of the two nearest rows found that have room (the heuristic
** leaves most lists short of M0). Then a walk of layer 0 from the entry
** point links any row still not reached to the nearest reached row with
** room. *pnFound: rows that needed a link; *pnLeft: those no list had
** room for (still not findable). Cost: one narrow search per row (about
** a tenth of building the graph). No insert may run during the call (the
** caller's promise); searches may, as for inserts' links. LP_UNSUPPORTED
** (read-only graph), LP_NOMEM. */
int vec_hnsw_repair(VecHnsw *h, uint32_t *pnFound, uint32_t *pnLeft, LpError *err);

/* Maps the file zPath, verifies it (see Sealed files) and sets *ppH to a
** read-only graph over the mapping, unmapped by vec_hnsw_free. The file
** must not change while mapped (sealed files never do; a truncation would
** fault, as for any mapping). On failure *ppH is NULL. Errors above. */
int vec_hnsw_open_file(const char *zPath, VecHnsw **ppH, LpError *err);

/* The same over the n bytes at a (4-byte aligned), which the caller keeps
** unchanged and alive until vec_hnsw_free; nothing is copied. zName (may
** be NULL) names the file in messages and is not kept. flags: 0 or
** VEC_HNSW_NOCHECKSUM. */
int vec_hnsw_open_mem(const uint8_t *a, size_t n, const char *zName, int flags, VecHnsw **ppH, LpError *err);

/* A writable in-memory copy of src (in memory or read-only; no insert may
** run on it during the call) with the same config (dims, metric, M,
** efConstruction, seed, exactFactor), rows, levels, links and entry point,
** and room for max(capacity, count) rows before it grows. NULL with
** LP_NOMEM. */
VecHnsw *vec_hnsw_copy(const VecHnsw *src, uint32_t capacity, LpError *err);

/* Rows inserted (ids 0..n-1 have been assigned; see Thread safety). */
uint32_t vec_hnsw_count(const VecHnsw *h);
uint32_t vec_hnsw_dims(const VecHnsw *h);
VecMetric vec_hnsw_metric(const VecHnsw *h);
/* Heap bytes held by vectors, neighbour lists and locks (not scratch);
** for a read-only graph the struct and its pointer table only. */
size_t vec_hnsw_memory(const VecHnsw *h);
/* Bytes of the file a read-only graph reads from (its mapping, or the
** caller's buffer); 0 for in-memory graphs. */
size_t vec_hnsw_mapped_bytes(const VecHnsw *h);
/* The stored vector of row id (normalised for COSINE), owned by the graph,
** valid until the next insert that grows the arrays (so: while no insert
** runs), for a read-only graph until vec_hnsw_free (it points into the
** mapping). NULL when id is not a row. */
const float *vec_hnsw_vector(const VecHnsw *h, uint32_t id);

/* Inserts v (dims floats, copied) and sets *pId to its id. */
int vec_hnsw_add(VecHnsw *h, const float *v, uint32_t *pId, LpError *err);

/* The k nearest allowed rows to q into aHit[0..*pnHit) (aHit has room for
** k), nearest first. filter and st may be NULL. */
int vec_hnsw_search(VecHnsw *h, const float *q, int k, int ef, const VecFilter *filter, VecHit *aHit,
                    int *pnHit, VecSearchStats *st, LpError *err);

/* The same by a brute-force scan over every allowed row (exact). */
int vec_hnsw_search_exact(VecHnsw *h, const float *q, int k, const VecFilter *filter, VecHit *aHit,
                          int *pnHit, VecSearchStats *st, LpError *err);

/* The allowed rows within distance <= radius of q, at most maxResults of
** them (the nearest), nearest first, into aHit (room for maxResults). ef
** is the beam width beyond the radius (<= 0: VEC_HNSW_DEFAULT_EF). */
int vec_hnsw_range(VecHnsw *h, const float *q, float radius, int maxResults, int ef,
                   const VecFilter *filter, VecHit *aHit, int *pnHit, VecSearchStats *st,
                   LpError *err);

#endif /* LP_VEC_HNSW_H */
