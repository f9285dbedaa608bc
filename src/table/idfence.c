/*
** idfence.c — the id fence (idfence.h): cells of the id line, each with
** the segments that may hold its ids.
**
** Layout. aLo[j] is the first id of cell j, ascending; cell j ends where
** cell j+1 starts (the last one at INT64_MAX). Its sources are
** aSrc[aOff[j] .. aOff[j+1]), newest (largest number) first. Ids below
** aLo[0] are in no cell. A cell with no sources is a gap between runs.
** Neighbouring cells never list the same sources (they are merged while
** building), so the cells are at most twice the runs.
**
** Building sweeps the runs' ends in id order keeping, per source, a bit
** saying whether the sweep is inside one of its runs; at each end the cell
** that starts there lists the sources inside. O(E log E + E * (nSrc/64 +
** depth)) for E ends.
*/
#include "table/idfence.h"

#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"

struct IdFence {
    int64_t *aLo;           /* nCell */
    uint32_t *aOff;         /* nCell + 1 */
    uint16_t *aSrc;         /* aOff[nCell] */
    uint32_t nCell;
    uint32_t nMaxDepth;
};

/* ------------------------------------------------------------ runs */

typedef struct Gap {
    uint64_t w;             /* ids[i+1] - ids[i] */
    uint32_t i;
} Gap;

static void gap_sift_down(Gap *h, uint32_t n, uint32_t i) {
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < n && h[l].w < h[m].w) m = l;
        if (l + 1 < n && h[l + 1].w < h[m].w) m = l + 1;
        if (m == i) return;
        Gap x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int64_t id_at(const uint8_t *pIds, size_t stride, uint32_t i) {
    return (int64_t)get_u64le(pIds + stride * (size_t)i);
}

uint32_t idfence_runs(const uint8_t *pIds, size_t stride, uint32_t nId, IdRun *aRun, uint32_t nMax) {
    if (nId == 0 || nMax == 0) return 0;
    /* The widest nMax-1 gaps wider than 1, in a min-heap: a gap enters
    ** only when wider than the narrowest kept, which with mostly
    ** consecutive ids is almost never. */
    uint32_t nKeep = nMax - 1, nHeap = 0;
    Gap *h = nKeep ? malloc(sizeof(Gap) * nKeep) : NULL;
    if (nKeep && !h) nKeep = 0; /* out of memory: one run, still correct */
    int64_t prev = id_at(pIds, stride, 0);
    for (uint32_t i = 0; i + 1 < nId; i++) {
        int64_t next = id_at(pIds, stride, i + 1);
        uint64_t w = (uint64_t)next - (uint64_t)prev;
        prev = next;
        if (w <= 1 || nKeep == 0) continue;
        if (nHeap < nKeep) {
            uint32_t k = nHeap++;
            h[k] = (Gap){w, i};
            while (k > 0 && h[(k - 1) / 2].w > h[k].w) { /* sift up */
                Gap x = h[k];
                h[k] = h[(k - 1) / 2];
                h[(k - 1) / 2] = x;
                k = (k - 1) / 2;
            }
        } else if (w > h[0].w) {
            h[0] = (Gap){w, i};
            gap_sift_down(h, nHeap, 0);
        }
    }
    /* The cuts in id order: run r ends at ids[cut[r]]. */
    uint32_t *aCut = (uint32_t *)h; /* reuses the heap's memory */
    for (uint32_t k = 0; k < nHeap; k++) aCut[k] = h[k].i;
    if (nHeap) qsort(aCut, nHeap, sizeof(uint32_t), cmp_u32);
    uint32_t nRun = 0, iStart = 0;
    for (uint32_t k = 0; k < nHeap; k++) {
        aRun[nRun++] = (IdRun){id_at(pIds, stride, iStart), id_at(pIds, stride, aCut[k])};
        iStart = aCut[k] + 1;
    }
    aRun[nRun++] = (IdRun){id_at(pIds, stride, iStart), id_at(pIds, stride, nId - 1)};
    free(h);
    return nRun;
}

/* ----------------------------------------------------------- build */

typedef struct End {
    int64_t at;             /* a run of iSrc starts here, or one ended just before */
    uint16_t iSrc;
} End;

static int cmp_end(const void *a, const void *b) {
    const End *x = a, *y = b;
    return (x->at > y->at) - (x->at < y->at);
}

/* The sources inside (bits of aIn, nWord words), newest first, into aOut;
** returns how many. O(nWord + their number). */
static uint32_t sources_inside(const uint64_t *aIn, size_t nWord, uint16_t *aOut) {
    uint32_t n = 0;
    for (size_t w = nWord; w-- > 0;) {
        for (uint64_t x = aIn[w]; x; x &= ~(1ull << (63 - __builtin_clzll(x)))) {
            aOut[n++] = (uint16_t)(w * 64 + (size_t)(63 - __builtin_clzll(x)));
        }
    }
    return n;
}

/* Appends cell (lo, aNew: nNew sources, newest first) unless it lists the
** same sources as the cell before it. */
static int add_cell(IdFence *f, int64_t lo, const uint16_t *aNew, uint32_t nNew, size_t *pnCellCap,
                    size_t *pnSrcCap) {
    if (f->nCell) {
        uint32_t b = f->aOff[f->nCell - 1], n = f->aOff[f->nCell] - b;
        if (n == nNew && memcmp(f->aSrc + b, aNew, sizeof(uint16_t) * n) == 0) return 0;
    }
    if (f->nCell + 1 >= *pnCellCap) {
        size_t nCap = *pnCellCap * 2;
        int64_t *aLo = realloc(f->aLo, sizeof(int64_t) * nCap);
        if (!aLo) return -1;
        f->aLo = aLo;
        uint32_t *aOff = realloc(f->aOff, sizeof(uint32_t) * (nCap + 1));
        if (!aOff) return -1;
        f->aOff = aOff;
        *pnCellCap = nCap;
    }
    uint32_t off = f->aOff[f->nCell];
    if (off + nNew > *pnSrcCap) {
        size_t nCap = *pnSrcCap * 2 + nNew;
        if (nCap > UINT32_MAX) return -1;
        uint16_t *aSrc = realloc(f->aSrc, sizeof(uint16_t) * nCap);
        if (!aSrc) return -1;
        f->aSrc = aSrc;
        *pnSrcCap = nCap;
    }
    memcpy(f->aSrc + off, aNew, sizeof(uint16_t) * nNew);
    f->aLo[f->nCell++] = lo;
    f->aOff[f->nCell] = off + nNew;
    if (nNew > f->nMaxDepth) f->nMaxDepth = nNew;
    return 0;
}

IdFence *idfence_build(const IdRun *const *apRun, const uint32_t *anRun, int nSrc) {
    if (nSrc < 0 || nSrc > IDFENCE_MAX_SOURCES) return NULL;
    size_t nEnd = 0;
    for (int i = 0; i < nSrc; i++) nEnd += 2 * (size_t)anRun[i];
    IdFence *f = calloc(1, sizeof(*f));
    End *aEnd = malloc(sizeof(End) * (nEnd ? nEnd : 1));
    size_t nWord = (size_t)nSrc / 64 + 1;
    uint64_t *aIn = calloc(nWord, sizeof(uint64_t)); /* bit i: inside a run of source i */
    uint16_t *aNew = malloc(sizeof(uint16_t) * (size_t)(nSrc ? nSrc : 1));
    size_t nCellCap = 16, nSrcCap = 16;
    if (f) {
        f->aLo = malloc(sizeof(int64_t) * nCellCap);
        f->aOff = calloc(nCellCap + 1, sizeof(uint32_t));
        f->aSrc = malloc(sizeof(uint16_t) * nSrcCap);
    }
    if (!f || !aEnd || !aIn || !aNew || !f->aLo || !f->aOff || !f->aSrc) goto oom;
    size_t n = 0;
    for (int i = 0; i < nSrc; i++) {
        for (uint32_t r = 0; r < anRun[i]; r++) {
            aEnd[n++] = (End){apRun[i][r].lo, (uint16_t)i};
            if (apRun[i][r].hi < INT64_MAX) aEnd[n++] = (End){apRun[i][r].hi + 1, (uint16_t)i};
        }
    }
    qsort(aEnd, n, sizeof(End), cmp_end);
    for (size_t k = 0; k < n;) {
        int64_t at = aEnd[k].at;
        /* A source's runs are disjoint: at one id, one of its runs may end
        ** and the next start, never two overlap. */
        for (; k < n && aEnd[k].at == at; k++) aIn[aEnd[k].iSrc / 64] ^= 1ull << (aEnd[k].iSrc % 64);
        if (add_cell(f, at, aNew, sources_inside(aIn, nWord, aNew), &nCellCap, &nSrcCap)) goto oom;
    }
    free(aEnd);
    free(aIn);
    free(aNew);
    return f;
oom:
    free(aEnd);
    free(aIn);
    free(aNew);
    idfence_free(f);
    return NULL;
}

void idfence_free(IdFence *f) {
    if (!f) return;
    free(f->aLo);
    free(f->aOff);
    free(f->aSrc);
    free(f);
}

/* ---------------------------------------------------------- lookup */

const uint16_t *idfence_lookup(const IdFence *f, int64_t id, uint32_t *pn) {
    *pn = 0;
    if (f->nCell == 0 || id < f->aLo[0]) return NULL;
    uint32_t lo = 0, hi = f->nCell; /* the last cell with aLo <= id */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->aLo[mid] <= id) lo = mid;
        else hi = mid;
    }
    *pn = f->aOff[lo + 1] - f->aOff[lo];
    return f->aSrc + f->aOff[lo];
}

void idfence_stats(const IdFence *f, uint32_t *pnCell, uint32_t *pnMaxDepth) {
    *pnCell = f ? f->nCell : 0;
    *pnMaxDepth = f ? f->nMaxDepth : 0;
}
