/*
** memtune.c — see memtune.h.
*/
#include "util/memtune.h"

#include <stdint.h>
#include <stdlib.h> /* defines __GLIBC__ on glibc */
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older headers lack it */
#endif
#if defined(__linux__) && !defined(MADV_POPULATE_READ)
#define MADV_POPULATE_READ 22
#endif

void lp_memtune(void) {
#if defined(__GLIBC__)
    mallopt(M_TRIM_THRESHOLD, 32 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
#endif
}

#if defined(__linux__)
/* Populates the pages of p[0..n) with advice: the whole pages inside the
** range (bOuter 0: memory about to be written, whose partial end pages
** may hold someone else's data) or every page it touches (bOuter 1). */
static void populate(const void *p, size_t n, int bOuter, int advice) {
    static size_t szPage;
    if (!szPage) {
        long v = sysconf(_SC_PAGESIZE);
        szPage = v > 0 ? (size_t)v : 4096;
    }
    uintptr_t m = (uintptr_t)(szPage - 1);
    uintptr_t lo = bOuter ? (uintptr_t)p & ~m : ((uintptr_t)p + m) & ~m;
    uintptr_t hi = bOuter ? ((uintptr_t)p + n + m) & ~m : ((uintptr_t)p + n) & ~m;
    /* EINVAL from a kernel before 5.14 is ignored: the pages fault later. */
    if (hi > lo) (void)madvise((void *)lo, hi - lo, advice);
}
#endif

void lp_prefault_read(const void *p, size_t n) {
#if defined(__linux__)
    populate(p, n, 1, MADV_POPULATE_READ);
#else
    (void)p;
    (void)n;
#endif
}

void lp_prefault(void *p, size_t n) {
#if defined(__linux__)
    populate(p, n, 0, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}
