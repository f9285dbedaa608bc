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

void lp_memtune(void) {
#if defined(__GLIBC__)
    mallopt(M_TRIM_THRESHOLD, 32 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
#endif
}

void lp_prefault(void *p, size_t n) {
#if defined(__linux__)
    static size_t szPage;
    if (!szPage) {
        long v = sysconf(_SC_PAGESIZE);
        szPage = v > 0 ? (size_t)v : 4096;
    }
    uintptr_t lo = ((uintptr_t)p + szPage - 1) & ~(uintptr_t)(szPage - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)(szPage - 1);
    /* EINVAL from a kernel before 5.14 is ignored: the pages fault later. */
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}
