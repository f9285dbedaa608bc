/*
** arena.h — a bump allocator for objects that die together.
**
** Contract. An Arena hands out memory from large blocks; nothing is freed
** individually. arena_reset() makes all of it reusable at once (keeping one
** block to avoid going back to malloc for the next user), arena_free()
** returns everything to the system. A parse tree, a query plan and a result
** set each live in one arena owned by the statement that made them.
**
** Every pointer returned is aligned to 16 bytes. Allocation failure returns
** NULL (never aborts): callers turn it into LP_NOMEM. Requests larger than a
** quarter of the block size get a block of their own, so a single huge
** string does not waste the rest of a shared block.
**
** Thread safety: none. An arena belongs to one thread at a time.
*/
#ifndef LP_UTIL_ARENA_H
#define LP_UTIL_ARENA_H

#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;   /* opaque */

typedef struct Arena {
    ArenaBlock *pHead;      /* most recent block; allocation happens here */
    size_t szBlock;         /* size of ordinary blocks */
    size_t nBytes;          /* total bytes handed out since the last reset */
} Arena;

#define ARENA_DEFAULT_BLOCK 8192

/* Prepares an empty arena. szBlock 0 means ARENA_DEFAULT_BLOCK. No memory is
** allocated until the first arena_alloc. */
void arena_init(Arena *a, size_t szBlock);

/* n bytes, 16-aligned, uninitialised; NULL when out of memory. n==0 gives a
** valid unique pointer. */
void *arena_alloc(Arena *a, size_t n);

/* As arena_alloc, zero-filled. */
void *arena_zalloc(Arena *a, size_t n);

/* A NUL-terminated copy of the n bytes at z (which need not be terminated). */
char *arena_strndup(Arena *a, const char *z, size_t n);

/* Room for one more element in array p (n elements of elsz bytes used, room
** for *pcap) that lives in the arena: p itself while n < *pcap, else a new
** array of twice the room (nFirst the first time) holding p's n elements
** (p is abandoned in the arena), *pcap updated. NULL out of memory (p and
** *pcap unchanged). */
void *arena_grow(Arena *a, void *p, int n, int *pcap, size_t elsz, int nFirst);

/* A point in an arena's life: arena_rewind() frees what was allocated
** after it (as if those allocations never happened), keeping what was
** before. A value that may be thrown away (a filter's temporary strings)
** costs nothing once rewound. Marks nest: a rewind to an older mark undoes
** the newer ones too; a mark is invalid after a rewind to an older one or
** a reset. */
typedef struct ArenaMark {
    ArenaBlock *pHead, *pNext;
    size_t nUsed, nBytes;
} ArenaMark;

ArenaMark arena_mark(const Arena *a);
void arena_rewind(Arena *a, const ArenaMark *m);

/* printf into the arena. */
char *arena_printf(Arena *a, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));

/* Forgets every allocation; keeps one block for reuse. Pointers handed out
** before are invalid afterwards. */
void arena_reset(Arena *a);

/* Releases all memory. The arena may be reused after arena_init. */
void arena_free(Arena *a);

#endif /* LP_UTIL_ARENA_H */
