/*
** slab.c — see slab.h.
*/
#include "util/slab.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/memtune.h"

#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif
#if defined(SLAB_ASAN)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define PIECE_LG 16
#define PIECE ((size_t)1 << PIECE_LG)       /* a Slab's piece */
#define REGION_FIRST LP_HUGE_PAGE
#define REGION_MAX ((size_t)64 << 20)

typedef struct Region {
    void *p;
    size_t n;
} Region;

struct SlabPages {
    pthread_mutex_t mu;
    uint8_t *p, *pEnd;      /* the unused rest of the newest region */
    size_t szNext;          /* the next region's size */
    size_t nMapped;
    Region *aRegion;
    int nRegion, capRegion;
};

SlabPages *slab_pages_new(void) {
    SlabPages *pp = calloc(1, sizeof(*pp));
    if (!pp) return NULL;
    pthread_mutex_init(&pp->mu, NULL);
    pp->szNext = REGION_FIRST;
    return pp;
}

void slab_pages_free(SlabPages *pp) {
    if (!pp) return;
    for (int i = 0; i < pp->nRegion; i++) {
        UNPOISON(pp->aRegion[i].p, pp->aRegion[i].n);
        lp_unmap_huge(pp->aRegion[i].p, pp->aRegion[i].n);
    }
    free(pp->aRegion);
    pthread_mutex_destroy(&pp->mu);
    free(pp);
}

size_t slab_pages_mapped(const SlabPages *pp) {
    return pp->nMapped;
}

/* A piece of n bytes (a power of two, at most 2^SLAB_MAX_LG) of fresh
** memory, poisoned; NULL when out of memory. */
static uint8_t *pages_take(SlabPages *pp, size_t n) {
    pthread_mutex_lock(&pp->mu);
    uint8_t *p = NULL;
    if ((size_t)(pp->pEnd - pp->p) < n) {
        /* A new region; the old one's rest (less than n) stays unused. */
        if (pp->nRegion == pp->capRegion) {
            int cap = pp->capRegion ? 2 * pp->capRegion : 8;
            Region *a = realloc(pp->aRegion, sizeof(Region) * (size_t)cap);
            if (!a) goto out;
            pp->aRegion = a;
            pp->capRegion = cap;
        }
        /* A region the next size (each twice the last; at least n). */
        size_t sz = pp->szNext;
        while (sz < n) sz *= 2;
        uint8_t *r = lp_map_huge(sz);
        if (!r) goto out;
        POISON(r, sz);
        pp->aRegion[pp->nRegion++] = (Region){r, sz};
        pp->nMapped += sz;
        pp->p = r;
        pp->pEnd = r + sz;
        pp->szNext = sz < REGION_MAX ? 2 * sz : REGION_MAX;
    }
    p = pp->p;
    pp->p += n;
out:
    pthread_mutex_unlock(&pp->mu);
    /* Huge pages fault in as first written, 2 MiB at a time. Without
    ** them, a piece's pages are populated in one call instead of a fault
    ** each. */
    if (p && !lp_huge_pages()) lp_prefault(p, n);
    return p;
}

void slab_init(Slab *s, SlabPages *pp) {
    memset(s, 0, sizeof(*s));
    s->pPages = pp;
}

/* Puts the rest of s's piece on its free lists, largest blocks first, so
** that it serves later requests of those sizes; under 32 bytes is lost. */
static void rest_to_free(Slab *s) {
    for (int lg = PIECE_LG - 1; lg >= SLAB_MIN_LG; lg--) {
        size_t sz = (size_t)1 << lg;
        while ((size_t)(s->pEnd - s->p) >= sz) {
            UNPOISON(s->p, sizeof(void *));
            *(void **)s->p = s->apFree[lg];
            POISON(s->p, sizeof(void *));
            s->apFree[lg] = s->p;
            s->p += sz;
        }
    }
    s->p = s->pEnd = NULL;
}

/* Makes s's piece hold at least n more bytes (n < PIECE). */
static int piece_room(Slab *s, size_t n) {
    if ((size_t)(s->pEnd - s->p) >= n) return 0;
    uint8_t *p = pages_take(s->pPages, PIECE);
    if (!p) return -1;
    rest_to_free(s);
    s->p = p;
    s->pEnd = p + PIECE;
    return 0;
}

/* A big block: its own region (a multiple of LP_HUGE_PAGE), written pages
** faulted in as they are touched (with huge pages, 2 MiB a fault). */
static void *big_alloc(int lg) {
    if (lg > 40) return NULL;
    return lp_map_huge((size_t)1 << lg);
}

void *slab_alloc(Slab *s, int lg) {
    if (slab_is_big(lg)) return big_alloc(lg);
    size_t sz = (size_t)1 << lg;
    void *p = s->apFree[lg];
    if (p) {
        UNPOISON(p, sz);
        s->apFree[lg] = *(void **)p;
        return p;
    }
    if (sz >= PIECE) {
        p = pages_take(s->pPages, sz);
    } else if (piece_room(s, sz) == 0) {
        p = s->p;
        s->p += sz;
    }
    if (p) UNPOISON(p, sz);
    return p;
}

void slab_free(Slab *s, void *p, int lg) {
    if (!p) return;
    if (slab_is_big(lg)) {
        lp_unmap_huge(p, (size_t)1 << lg);
        return;
    }
    *(void **)p = s->apFree[lg];
    s->apFree[lg] = p;
    POISON(p, (size_t)1 << lg);
}

void *slab_realloc(Slab *s, void *p, int lgOld, int lgNew, size_t nKeep) {
    /* Big blocks are copied too (not mremap'd): a moved mapping is
    ** seldom aligned for huge pages. */
    void *q = slab_alloc(s, lgNew);
    if (!q) return NULL;
    if (nKeep) memcpy(q, p, nKeep);
    slab_free(s, p, lgOld);
    return q;
}

void *slab_grow(Slab *s, void *p, int *plg, size_t nUsed, size_t nNeed, int lgFirst) {
    if (p && nNeed <= (size_t)1 << *plg) return p;
    int lg = slab_lg(nNeed), lgMin = p ? *plg + 1 : lgFirst;
    if (lg < lgMin) lg = lgMin;
    if (lg > 40) return NULL;
    void *q = slab_realloc(s, p, p ? *plg : 0, lg, nUsed);
    if (q) *plg = lg;
    return q;
}

void *slab_append(Slab *s, void *p, int *plg, size_t *pn, const void *src, size_t n, int lgFirst) {
    uint8_t *a = slab_grow(s, p, plg, *pn, *pn + n, lgFirst);
    if (!a) return NULL;
    if (n) memcpy(a + *pn, src, n);
    *pn += n;
    return a;
}

void *slab_bump(Slab *s, size_t n) {
    n = (n + 7) & ~(size_t)7;
    if (n == 0) n = 8;
    if (n >= PIECE || piece_room(s, n)) return NULL;
    void *p = s->p;
    s->p += n;
    UNPOISON(p, n);
    return p;
}
