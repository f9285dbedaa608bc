/*
** slab.h — memory for many small arrays that grow by doubling and die
** together.
**
** Contract. An in-memory index holds hundreds of thousands of small arrays
** (postings streams, hash tables, term lists) that double as they grow and
** are all freed with the index. From the C library each costs a header, a
** realloc, and a page fault per 4 KiB the first time it is written; on the
** virtual machines measured a fault costs as much as analysing a hundred
** words (and populating pages ahead, MADV_POPULATE_WRITE, saves only a
** quarter of that). A SlabPages is one owner's memory instead: regions
** mapped from the system, aligned to 2 MiB and advised as transparent huge
** pages, so that where the kernel grants them (measured: 0.12 ms for 2 MiB
** against 5.8 ms in 4 KiB pages) one fault brings in 2 MiB; handed out as
** 64 KiB pieces (populated in one call where the kernel has no huge
** pages); and returned to the system at once by slab_pages_free.
**
** A Slab carves pieces into
**   - blocks of 2^lg bytes, SLAB_MIN_LG <= lg: those up to SLAB_MAX_LG come
**     from the pieces (those of a piece or more, a piece of their own), and
**     slab_free keeps them on a free list of their size for the Slab's next
**     request of that size; larger ones ("big") are mapped each on its own,
**     as huge pages where the kernel grants them, and must be given back
**     with slab_free;
**   - bump allocations (slab_bump), never freed on their own.
** Everything is 8-byte aligned. Blocks up to SLAB_MAX_LG and bump
** allocations need not be freed: slab_pages_free takes them all. Blocks are
** not zeroed.
**
** Memory. The first region is 2 MiB, each next one twice the last, up to
** 64 MiB; mapped pages are backed only once written, but with huge pages
** 2 MiB at a time: an owner that has written anything holds at least
** 2 MiB, and up to 2 MiB more than it wrote. A Slab's free lists keep
** freed blocks for its own use only.
**
** Thread safety. A SlabPages may serve Slabs on several threads (a mutex,
** taken once per piece); a Slab belongs to one thread at a time.
**
** Under AddressSanitizer, memory not handed out (the rest of a piece, free
** blocks) is poisoned, so an overrun of a block is reported as it would be
** for malloc's.
*/
#ifndef LP_UTIL_SLAB_H
#define LP_UTIL_SLAB_H

#include <stddef.h>
#include <stdint.h>

#define SLAB_MIN_LG 5   /* 32 bytes */
#define SLAB_MAX_LG 20  /* 1 MiB: larger blocks are mapped on their own */

typedef struct SlabPages SlabPages; /* opaque */

typedef struct Slab {
    SlabPages *pPages;
    uint8_t *p, *pEnd;                /* the unused rest of its current piece */
    void *apFree[SLAB_MAX_LG + 1];    /* free blocks by lg, linked through their first word */
} Slab;

/* A new, empty SlabPages (nothing is mapped before the first piece);
** NULL when out of memory. */
SlabPages *slab_pages_new(void);

/* Unmaps every region. Blocks above SLAB_MAX_LG must have been freed. */
void slab_pages_free(SlabPages *pp);

/* Bytes mapped so far (not all of it necessarily backed). */
size_t slab_pages_mapped(const SlabPages *pp);

/* A Slab that takes its pieces from pp. */
void slab_init(Slab *s, SlabPages *pp);

/* Is a block of 2^lg bytes big (one that slab_free must give back)? */
static inline int slab_is_big(int lg) {
    return lg > SLAB_MAX_LG;
}

/* The lg of the smallest block that holds n bytes (at least SLAB_MIN_LG);
** above 40 when n is too large for any. */
static inline int slab_lg(size_t n) {
    int lg = SLAB_MIN_LG;
    while (lg <= 40 && ((size_t)1 << lg) < n) lg++;
    return lg;
}

/* A block of 2^lg bytes (SLAB_MIN_LG <= lg <= 40); NULL when out of memory. */
void *slab_alloc(Slab *s, int lg);

/* Gives back p, a block of 2^lg bytes from slab_alloc or slab_realloc on
** a Slab of the same SlabPages (NULL: nothing). */
void slab_free(Slab *s, void *p, int lg);

/* Block p of 2^lgOld bytes (NULL with lgOld 0: none) moved to a block of
** 2^lgNew >= 2^lgOld bytes holding its first nKeep bytes (nKeep <= 2^lgOld);
** p is freed. NULL when out of memory, and p is then left as it was. */
void *slab_realloc(Slab *s, void *p, int lgOld, int lgNew, size_t nKeep);

/* Block p of 2^*plg bytes (NULL with *plg 0: none), of which nUsed are
** used, made to hold at least nNeed bytes: p itself when it does, else a
** block of the next power of two that does (at least 2^lgFirst), holding
** the nUsed bytes, *plg updated. NULL when out of memory (p and *plg are
** then as they were). For arrays that grow by doubling. */
void *slab_grow(Slab *s, void *p, int *plg, size_t nUsed, size_t nNeed, int lgFirst);

/* The byte array p (block of 2^*plg bytes, *pn of them used; NULL with *plg
** 0: none) with the n bytes at src appended, grown by slab_grow (at least
** 2^lgFirst); *pn updated. NULL when out of memory (p, *plg and *pn are
** then as they were). */
void *slab_append(Slab *s, void *p, int *plg, size_t *pn, const void *src, size_t n, int lgFirst);

/* n bytes (rounded up to 8), 8-byte aligned, that live until the
** SlabPages is freed; NULL when out of memory or n is 64 KiB or more. */
void *slab_bump(Slab *s, size_t n);

#endif /* LP_UTIL_SLAB_H */
