/* arena.c — see arena.h. */
#include "util/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


struct ArenaBlock {
    ArenaBlock *pNext;      /* older block */
    size_t nSize;           /* usable bytes in aData */
    size_t nUsed;           /* bytes handed out from aData */
    _Alignas(16) unsigned char aData[];
};

#define ALIGN16(n) (((n) + 15) & ~(size_t)15)

void arena_init(Arena *a, size_t szBlock) {
    a->pHead = NULL;
    a->szBlock = szBlock ? szBlock : ARENA_DEFAULT_BLOCK;
    a->nBytes = 0;
}

static ArenaBlock *block_new(size_t nSize) {
    ArenaBlock *b = malloc(sizeof(ArenaBlock) + nSize);
    if (!b) return NULL;
    b->pNext = NULL;
    b->nSize = nSize;
    b->nUsed = 0;
    return b;
}

void *arena_alloc(Arena *a, size_t n) {
    size_t need = ALIGN16(n ? n : 1);
    if (need < n) return NULL; /* overflow */
    ArenaBlock *b = a->pHead;
    if (b && b->nSize - b->nUsed >= need) {
        void *p = b->aData + b->nUsed;
        b->nUsed += need;
        a->nBytes += need;
        return p;
    }
    if (need > a->szBlock / 4) {
        /* A private block, linked behind the head so the head keeps its
        ** free space for the small allocations that follow. */
        if (need > SIZE_MAX - sizeof(ArenaBlock)) return NULL;
        ArenaBlock *big = block_new(need);
        if (!big) return NULL;
        big->nUsed = need;
        if (b) {
            big->pNext = b->pNext;
            b->pNext = big;
        } else {
            a->pHead = big;
        }
        a->nBytes += need;
        return big->aData;
    }
    ArenaBlock *nb = block_new(a->szBlock);
    if (!nb) return NULL;
    nb->pNext = b;
    a->pHead = nb;
    nb->nUsed = need;
    a->nBytes += need;
    return nb->aData;
}

void *arena_zalloc(Arena *a, size_t n) {
    void *p = arena_alloc(a, n);
    if (p) memset(p, 0, n);
    return p;
}

char *arena_strndup(Arena *a, const char *z, size_t n) {
    char *p = arena_alloc(a, n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, z, n);
    p[n] = 0;
    return p;
}

void *arena_grow(Arena *a, void *p, int n, int *pcap, size_t elsz, int nFirst) {
    if (n < *pcap) return p;
    int cap = *pcap ? 2 * *pcap : nFirst;
    void *q = arena_alloc(a, elsz * (size_t)cap);
    if (!q) return NULL;
    if (n) memcpy(q, p, elsz * (size_t)n);
    *pcap = cap;
    return q;
}

char *arena_printf(Arena *a, const char *zFmt, ...) {
    va_list ap;
    va_start(ap, zFmt);
    int n = vsnprintf(NULL, 0, zFmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *p = arena_alloc(a, (size_t)n + 1);
    if (!p) return NULL;
    va_start(ap, zFmt);
    vsnprintf(p, (size_t)n + 1, zFmt, ap);
    va_end(ap);
    return p;
}

ArenaMark arena_mark(const Arena *a) {
    ArenaMark m = {a->pHead, a->pHead ? a->pHead->pNext : NULL, a->pHead ? a->pHead->nUsed : 0, a->nBytes};
    return m;
}

void arena_rewind(Arena *a, const ArenaMark *m) {
    /* blocks made since: new heads before the mark's head, and private
    ** blocks linked behind a head (the mark's own included) */
    ArenaBlock *b = a->pHead;
    while (b && b != m->pHead) {
        ArenaBlock *next = b->pNext;
        free(b);
        b = next;
    }
    a->pHead = b;
    if (b) {
        ArenaBlock *x = b->pNext;
        while (x && x != m->pNext) {
            ArenaBlock *next = x->pNext;
            free(x);
            x = next;
        }
        b->pNext = x;
        b->nUsed = m->nUsed;
    }
    a->nBytes = m->nBytes;
}

void arena_reset(Arena *a) {
    /* Keep the newest ordinary-sized block; free the rest. */
    ArenaBlock *keep = NULL;
    ArenaBlock *b = a->pHead;
    while (b) {
        ArenaBlock *next = b->pNext;
        if (!keep && b->nSize == a->szBlock) {
            keep = b;
        } else {
            free(b);
        }
        b = next;
    }
    if (keep) {
        keep->pNext = NULL;
        keep->nUsed = 0;
    }
    a->pHead = keep;
    a->nBytes = 0;
}

void arena_free(Arena *a) {
    ArenaBlock *b = a->pHead;
    while (b) {
        ArenaBlock *next = b->pNext;
        free(b);
        b = next;
    }
    a->pHead = NULL;
    a->nBytes = 0;
}
