/*
** memtune.c — see memtune.h.
*/
#include "util/memtune.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h> /* defines __GLIBC__ on glibc */
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/mman.h>
#if defined(__linux__)
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

static int g_thp;
static pthread_once_t g_thpOnce = PTHREAD_ONCE_INIT;

static void thp_probe(void) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    char z[128] = {0};
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (fgets(z, sizeof(z), f)) g_thp = strstr(z, "[always]") || strstr(z, "[madvise]");
        fclose(f);
    }
#endif
}

int lp_huge_pages(void) {
    pthread_once(&g_thpOnce, thp_probe);
    return g_thp;
}

static size_t huge_round(size_t n) {
    return (n + LP_HUGE_PAGE - 1) & ~(LP_HUGE_PAGE - 1);
}

void *lp_map_huge(size_t n) {
    if (n == 0 || n > SIZE_MAX - 2 * LP_HUGE_PAGE) return NULL;
    n = huge_round(n);
    /* Mapped a huge page larger, then trimmed to the aligned part. */
    size_t nMap = n + LP_HUGE_PAGE;
    uint8_t *p = mmap(NULL, nMap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    uintptr_t a = ((uintptr_t)p + LP_HUGE_PAGE - 1) & ~(uintptr_t)(LP_HUGE_PAGE - 1);
    size_t nHead = (size_t)(a - (uintptr_t)p);
    if (nHead) munmap(p, nHead);
    if (nMap - nHead > n) munmap((uint8_t *)a + n, nMap - nHead - n);
#if defined(MADV_HUGEPAGE)
    (void)madvise((void *)a, n, MADV_HUGEPAGE);
#endif
    return (void *)a;
}

void lp_unmap_huge(void *p, size_t n) {
    if (p) munmap(p, huge_round(n));
}
