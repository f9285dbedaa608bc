/*
** test_util.c — unit tests for src/util: error, arena, vec, strbuf, log,
** slab, hashmap (IdMap, HashMap), varint and delta codecs, bitset, crc32c,
** clock.
** The thread pool has its own file (test_threadpool.c).
**
** The containers are checked against deliberately naive references (flat
** arrays indexed by key number) over long random operation sequences; the
** PRNG is seeded with a constant, so a failure reproduces exactly.
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/arena.h"
#include "util/bytes.h"
#include "util/bitset.h"
#include "util/clock.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/memtune.h"
#include "util/slab.h"
#include "util/strbuf.h"
#include "util/varint.h"
#include "util/vec.h"

/* ------------------------------------------------------------- helpers */

/* Under ASan, impossible allocations return NULL (as glibc's do) instead of
** aborting, so the LP_NOMEM paths can be tested. Unused without ASan. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
    return "allocator_may_return_null=1";
}

/* splitmix64: a bijection on uint64, so distinct inputs give distinct keys. */
static uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t g_rng = 0x1234567887654321ull;

static uint64_t rnd(void) {
    g_rng = mix64(g_rng);
    return g_rng;
}

/* Uniform-enough in [0, n). */
static size_t rnd_below(size_t n) {
    return (size_t)(rnd() % n);
}

/* --------------------------------------------------------------- error */

static void test_error_set_and_prefix(void **state) {
    (void)state;
    LpError err;
    lp_err_clear(&err);
    assert_int_equal(err.code, LP_OK);
    assert_int_equal(err.pos, -1);
    assert_string_equal(err.zMsg, "");

    assert_int_equal(lp_err_set(&err, LP_NOTFOUND, "no table '%s'", "t1"), LP_NOTFOUND);
    assert_int_equal(err.code, LP_NOTFOUND);
    assert_string_equal(err.zMsg, "no table 't1'");
    assert_int_equal(err.pos, -1);

    assert_int_equal(lp_err_setpos(&err, LP_BADINPUT, 15, "expected %s", "FROM"), LP_BADINPUT);
    assert_int_equal(err.pos, 15);
    assert_int_equal(lp_err_prefix(&err, "near \"%s\"", "FORM"), LP_BADINPUT);
    assert_string_equal(err.zMsg, "near \"FORM\": expected FROM");
    assert_int_equal(err.pos, 15);

    /* A NULL err is allowed everywhere: the code still comes back. */
    assert_int_equal(lp_err_set(NULL, LP_IOERR, "x"), LP_IOERR);
    assert_int_equal(lp_err_setpos(NULL, LP_CORRUPT, 3, "x"), LP_CORRUPT);
    lp_err_clear(NULL);

    assert_string_equal(lp_code_name(LP_OK), "OK");
    assert_string_equal(lp_code_name(LP_NOMEM), "NOMEM");
    assert_string_equal(lp_code_name(LP_INTERNAL), "INTERNAL");
    assert_string_equal(lp_code_name(LP_NCODES), "UNKNOWN");
    assert_string_equal(lp_code_name(-1), "UNKNOWN");
}

static void test_error_truncation(void **state) {
    (void)state;
    LpError err;
    char zLong[2000];
    memset(zLong, 'x', sizeof(zLong) - 1);
    zLong[sizeof(zLong) - 1] = 0;

    lp_err_set(&err, LP_LIMIT, "%s", zLong);
    assert_int_equal(strlen(err.zMsg), LP_ERRMSG_MAX - 1);

    /* A prefix on a full message keeps the prefix and cuts the old text. */
    lp_err_prefix(&err, "table %s", "t");
    assert_int_equal(strlen(err.zMsg), LP_ERRMSG_MAX - 1);
    assert_memory_equal(err.zMsg, "table t: xxx", 12);

    /* A prefix longer than the buffer still leaves a terminated message. */
    lp_err_set(&err, LP_LIMIT, "old");
    lp_err_prefix(&err, "%s", zLong);
    assert_int_equal(strlen(err.zMsg), LP_ERRMSG_MAX - 1);
    assert_int_equal(err.code, LP_LIMIT);
}

/* --------------------------------------------------------------- arena */

static void test_arena_alignment_and_contents(void **state) {
    (void)state;
    Arena a;
    arena_init(&a, 1024);
    unsigned char *ap[500];
    size_t an[500];
    for (int i = 0; i < 500; i++) {
        an[i] = (size_t)(i % 97);
        ap[i] = arena_alloc(&a, an[i]);
        assert_non_null(ap[i]);
        assert_int_equal((uintptr_t)ap[i] % 16, 0);
        memset(ap[i], i & 0xff, an[i]);
    }
    /* No allocation overlapped another: every byte still holds its mark. */
    for (int i = 0; i < 500; i++) {
        for (size_t k = 0; k < an[i]; k++) assert_int_equal(ap[i][k], i & 0xff);
    }
    /* Zero-size requests give distinct pointers. */
    void *z1 = arena_alloc(&a, 0), *z2 = arena_alloc(&a, 0);
    assert_non_null(z1);
    assert_ptr_not_equal(z1, z2);

    char *s = arena_strndup(&a, "hello world", 5);
    assert_string_equal(s, "hello");
    char *f = arena_printf(&a, "%d-%s", 42, "x");
    assert_string_equal(f, "42-x");
    unsigned char *zz = arena_zalloc(&a, 100);
    for (int k = 0; k < 100; k++) assert_int_equal(zz[k], 0);
    /* arena_grow: the same array while there is room, then twice the room
    ** with the elements kept */
    int *v = NULL, n = 0, cap = 0;
    for (int k = 0; k < 1000; k++) {
        int had = cap;
        int *w = arena_grow(&a, v, n, &cap, sizeof(int), 4);
        assert_non_null(w);
        if (n < had) assert_ptr_equal(w, v);
        if (n == had) assert_int_equal(cap, had ? 2 * had : 4);
        v = w;
        v[n++] = k * 3;
        assert_true(n <= cap);
    }
    assert_int_equal(cap, 1024);
    for (int k = 0; k < 1000; k++) assert_int_equal(v[k], k * 3);
    arena_free(&a);
}

/* Can this kernel populate pages (MADV_POPULATE_WRITE, Linux 5.14)? */
static int kernel_populates(void) {
    long pg = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 0;
    int ok = madvise(p, (size_t)pg, 23 /* MADV_POPULATE_WRITE */) == 0;
    munmap(p, (size_t)pg);
    return ok;
}

/* Pages of [p, p + n) that are resident. */
static size_t resident_pages(void *p, size_t n) {
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char v[64];
    assert_true(n / (size_t)pg <= sizeof(v));
    assert_int_equal(mincore(p, n, v), 0);
    size_t k = 0;
    for (size_t i = 0; i < n / (size_t)pg; i++) k += v[i] & 1;
    return k;
}

static void test_prefault(void **state) {
    (void)state;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = 16 * pg;
    /* Memory already written keeps every byte, whatever the range's
    ** alignment. */
    unsigned char *buf = malloc(n);
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)(i * 7 + 3);
    lp_prefault(buf + 3, n - 7);
    lp_prefault(buf, 0);
    lp_prefault(buf + 1, 10); /* inside one page: no whole page, nothing to do */
    for (size_t i = 0; i < n; i++) assert_int_equal(buf[i], (unsigned char)(i * 7 + 3));
    free(buf);
    /* Fresh memory: the whole pages inside the range become resident and
    ** read as zero; the ones outside it are left alone. */
    unsigned char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(resident_pages(m, n), 0);
    lp_prefault(m + pg / 2, 4 * pg); /* whole pages 1, 2 and 3 */
    if (kernel_populates()) {
        assert_int_equal(resident_pages(m, n), 3);
        assert_int_equal(resident_pages(m + pg, 3 * pg), 3);
    }
    for (size_t i = 0; i < n; i++) assert_int_equal(m[i], 0);
    munmap(m, n);
}

/* lp_map_huge: aligned to a huge page, rounded up to whole ones, zeroed,
** writable to the end; NULL for nothing or more than the address space. */
static void test_map_huge(void **state) {
    (void)state;
    assert_null(lp_map_huge(0));
    assert_null(lp_map_huge(SIZE_MAX - 100));
    size_t aN[] = {1, 4096, LP_HUGE_PAGE - 1, LP_HUGE_PAGE, LP_HUGE_PAGE + 1, 3 * LP_HUGE_PAGE};
    for (size_t k = 0; k < sizeof(aN) / sizeof(aN[0]); k++) {
        size_t n = aN[k], nWhole = (n + LP_HUGE_PAGE - 1) / LP_HUGE_PAGE * LP_HUGE_PAGE;
        unsigned char *p = lp_map_huge(n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % LP_HUGE_PAGE, 0);
        for (size_t i = 0; i < nWhole; i += 4096) assert_int_equal(p[i], 0);
        assert_int_equal(p[nWhole - 1], 0);
        memset(p, 0xA5, nWhole); /* all of the rounded size is ours */
        assert_int_equal(p[nWhole - 1], 0xA5);
        lp_unmap_huge(p, n);
    }
    lp_unmap_huge(NULL, 10); /* nothing */
    (void)lp_huge_pages();   /* 0 or 1, read once: no crash without sysfs */
}

/* ------------------------------------------------------------- slab */

#if defined(__SANITIZE_ADDRESS__)
#define SLAB_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_TEST_ASAN 1
#endif
#endif
#if defined(SLAB_TEST_ASAN)
#include <sanitizer/asan_interface.h>
#endif

/* Fills block p of n bytes with id's pattern, or checks it holds it. */
static void slab_fill(unsigned char *p, size_t n, uint32_t id) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(id * 31 + i * 7);
}

static void slab_check(const unsigned char *p, size_t n, uint32_t id) {
    for (size_t i = 0; i < n; i++) {
        if (p[i] != (unsigned char)(id * 31 + i * 7)) fail_msg("block %u byte %zu changed", id, i);
    }
}

/* Random allocations, growths and frees on two Slabs of one SlabPages,
** against the blocks' own contents: a block that overlapped another, or
** a growth that lost bytes, shows as a changed byte. */
static void test_slab_blocks_random(void **state) {
    (void)state;
    enum { N = 600 };
    SlabPages *pp = slab_pages_new();
    assert_non_null(pp);
    Slab s[2];
    slab_init(&s[0], pp);
    slab_init(&s[1], pp);
    unsigned char *ap[N] = {0};
    int alg[N] = {0};
    size_t an[N] = {0};
    for (int step = 0; step < 20000; step++) {
        int i = (int)rnd_below(N);
        Slab *sl = &s[i & 1];
        int op = (int)rnd_below(4);
        if (!ap[i]) {
            /* mostly small; now and then up to 4 MiB (big blocks) */
            int lg = SLAB_MIN_LG + (int)rnd_below(rnd_below(50) == 0 ? 18 : 8);
            ap[i] = slab_alloc(sl, lg);
            assert_non_null(ap[i]);
            assert_int_equal((uintptr_t)ap[i] % 8, 0);
            alg[i] = lg;
            an[i] = ((size_t)1 << lg) - rnd_below((size_t)1 << (lg - 1));
            slab_fill(ap[i], an[i], (uint32_t)i);
        } else if (op == 0) {
            slab_check(ap[i], an[i], (uint32_t)i);
            slab_free(sl, ap[i], alg[i]);
            ap[i] = NULL;
        } else if (op == 1 && alg[i] < 23) {
            int lg = alg[i] + 1 + (int)rnd_below(2);
            unsigned char *q = slab_realloc(sl, ap[i], alg[i], lg, an[i]);
            assert_non_null(q);
            slab_check(q, an[i], (uint32_t)i);
            ap[i] = q;
            alg[i] = lg;
            size_t n = ((size_t)1 << lg) - rnd_below((size_t)1 << (lg - 1));
            slab_fill(q, n, (uint32_t)i);
            an[i] = n;
        }
    }
    for (int i = 0; i < N; i++) {
        if (!ap[i]) continue;
        slab_check(ap[i], an[i], (uint32_t)i);
        if (slab_is_big(alg[i])) slab_free(&s[i & 1], ap[i], alg[i]);
    }
    assert_true(slab_pages_mapped(pp) >= ((size_t)2 << 20));
    slab_pages_free(pp); /* the small blocks go with it */
}

/* A freed block serves the next request of its size on the same Slab;
** regions start on a 2 MiB boundary (so huge pages can back them); a
** growth from nothing is an allocation; bump allocations are 8-aligned,
** keep their bytes, and are refused at 64 KiB. */
static void test_slab_reuse_and_bump(void **state) {
    (void)state;
    SlabPages *pp = slab_pages_new();
    assert_non_null(pp);
    assert_int_equal(slab_pages_mapped(pp), 0);
    Slab s;
    slab_init(&s, pp);
    unsigned char *a = slab_alloc(&s, 6);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % ((uintptr_t)2 << 20), 0);
    assert_int_equal(slab_pages_mapped(pp), (size_t)2 << 20);
    slab_free(&s, a, 6);
#if defined(SLAB_TEST_ASAN)
    assert_true(__asan_address_is_poisoned(a + 8));
#endif
    assert_ptr_equal(slab_alloc(&s, 6), a);
    assert_ptr_not_equal(slab_alloc(&s, 6), a);
    unsigned char *g = slab_realloc(&s, NULL, 0, 7, 0);
    assert_non_null(g);
    memset(g, 0xab, 128);
    slab_free(&s, NULL, 9); /* nothing */

    /* An array grown by slab_grow: kept while it holds what is needed,
    ** doubled (from lgFirst) when not, its used bytes kept. */
    unsigned char *arr = NULL;
    int lgArr = 0;
    size_t nArr = 0;
    for (size_t i = 0; i < 3000000; i += 1 + i / 3) {
        int lgOld = lgArr;
        unsigned char *q = slab_grow(&s, arr, &lgArr, nArr, i + 1, 10);
        assert_non_null(q);
        assert_true(((size_t)1 << lgArr) >= i + 1 && lgArr >= 10);
        if (arr && i + 1 <= (size_t)1 << lgOld) assert_ptr_equal(q, arr);
        if (arr && i + 1 > (size_t)1 << lgOld) assert_int_equal(lgArr, lgOld + 1);
        arr = q;
        for (size_t k = nArr; k <= i; k++) arr[k] = (unsigned char)(k * 13);
        nArr = i + 1;
    }
    for (size_t k = 0; k < nArr; k++) assert_int_equal(arr[k], (unsigned char)(k * 13));
    int lgKept = lgArr;
    assert_ptr_equal(slab_grow(&s, arr, &lgArr, nArr, (size_t)1 << lgArr, 10), arr);
    assert_int_equal(lgArr, lgKept);
    assert_null(slab_grow(&s, arr, &lgArr, nArr, (size_t)1 << 41, 10));
    assert_int_equal(lgArr, lgKept);
    slab_free(&s, arr, lgArr); /* big: given back on its own */

    /* slab_lg: the smallest block that holds n bytes */
    assert_int_equal(slab_lg(0), SLAB_MIN_LG);
    assert_int_equal(slab_lg(32), 5);
    assert_int_equal(slab_lg(33), 6);
    assert_int_equal(slab_lg((size_t)1 << 20), 20);
    assert_true(slab_lg(((size_t)1 << 40) + 1) > 40);
    /* slab_append: bytes appended in order, the array grown as needed */
    unsigned char *buf = NULL, chunk[97];
    int lgBuf = 0;
    size_t nBuf = 0;
    for (int i = 0; i < 2000; i++) {
        for (size_t k = 0; k < sizeof(chunk); k++) chunk[k] = (unsigned char)(i + k);
        unsigned char *q = slab_append(&s, buf, &lgBuf, &nBuf, chunk, 1 + (size_t)i % sizeof(chunk), 6);
        assert_non_null(q);
        buf = q;
        assert_true(((size_t)1 << lgBuf) >= nBuf && lgBuf >= 6);
    }
    size_t at = 0;
    for (int i = 0; i < 2000; i++) {
        for (size_t k = 0; k < 1 + (size_t)i % sizeof(chunk); k++) assert_int_equal(buf[at++], (unsigned char)(i + k));
    }
    assert_int_equal(at, nBuf);
    size_t nBefore = nBuf;
    assert_null(slab_append(&s, buf, &lgBuf, &nBuf, chunk, (size_t)1 << 41, 6));
    assert_int_equal(nBuf, nBefore);
    slab_free(&s, buf, lgBuf);

    unsigned char *ab[500];
    size_t anb[500];
    for (int i = 0; i < 500; i++) {
        anb[i] = 1 + rnd_below(700);
        ab[i] = slab_bump(&s, anb[i]);
        assert_non_null(ab[i]);
        assert_int_equal((uintptr_t)ab[i] % 8, 0);
        slab_fill(ab[i], anb[i], (uint32_t)i);
    }
    for (int i = 0; i < 500; i++) slab_check(ab[i], anb[i], (uint32_t)i);
    assert_null(slab_bump(&s, (size_t)64 << 10));
    assert_non_null(slab_bump(&s, ((size_t)64 << 10) - 8));
    assert_non_null(slab_bump(&s, 0));
    /* A block too large to map at all. */
    assert_null(slab_alloc(&s, 41));
    slab_pages_free(pp);
}

typedef struct SlabThread {
    SlabPages *pp;
    uint32_t seed;
    int ok;
} SlabThread;

static void *slab_thread(void *arg) {
    SlabThread *t = arg;
    Slab s;
    slab_init(&s, t->pp);
    enum { N = 3000 };
    unsigned char **ap = calloc(N, sizeof(*ap));
    t->ok = ap != NULL;
    for (int i = 0; t->ok && i < N; i++) {
        int lg = SLAB_MIN_LG + (int)((t->seed + (uint32_t)i * 7) % 9);
        if (!(ap[i] = slab_alloc(&s, lg))) t->ok = 0;
        else memset(ap[i], (int)((t->seed + (uint32_t)i) & 0xff), 32);
    }
    for (int i = 0; t->ok && i < N; i++) {
        for (int k = 0; k < 32; k++) {
            if (ap[i][k] != (unsigned char)((t->seed + (uint32_t)i) & 0xff)) t->ok = 0;
        }
    }
    free(ap);
    return NULL;
}

/* Slabs on four threads share one SlabPages: no block is handed out
** twice. */
static void test_slab_threads(void **state) {
    (void)state;
    SlabPages *pp = slab_pages_new();
    assert_non_null(pp);
    pthread_t th[4];
    SlabThread t[4];
    for (int i = 0; i < 4; i++) {
        t[i] = (SlabThread){pp, (uint32_t)i * 1000003u, 0};
        assert_int_equal(pthread_create(&th[i], NULL, slab_thread, &t[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_true(t[i].ok);
    }
    slab_pages_free(pp);
}

static void test_arena_big_allocations(void **state) {
    (void)state;
    Arena a;
    arena_init(&a, 1024);
    char *small1 = arena_alloc(&a, 16);
    /* Over a quarter of the block: a private block. */
    char *big = arena_alloc(&a, 100000);
    assert_non_null(big);
    assert_int_equal((uintptr_t)big % 16, 0);
    memset(big, 0xab, 100000);
    /* The next small allocation still comes from the first block, right
    ** after small1: the big one did not waste it. */
    char *small2 = arena_alloc(&a, 16);
    assert_ptr_equal(small2, small1 + 16);
    assert_int_equal(a.nBytes, 16 + 100000 + 16);

    /* A big first allocation on an empty arena, then small ones. */
    Arena b;
    arena_init(&b, 0);
    assert_int_equal(b.szBlock, ARENA_DEFAULT_BLOCK);
    char *big2 = arena_alloc(&b, 50000);
    memset(big2, 1, 50000);
    char *s = arena_printf(&b, "%0500d", 7);
    assert_int_equal(strlen(s), 500);
    char *big3 = arena_alloc(&b, 70000);
    memset(big3, 2, 70000);
    assert_int_equal(big2[49999], 1);

    /* Requests that cannot be satisfied fail cleanly. */
    assert_null(arena_alloc(&a, SIZE_MAX));
    assert_null(arena_alloc(&a, SIZE_MAX - 8));
    arena_free(&a);
    arena_free(&b);
}

static void test_arena_reset_reuse(void **state) {
    (void)state;
    Arena a;
    arena_init(&a, 4096);
    void *p1 = arena_alloc(&a, 32);
    for (int i = 0; i < 1000; i++) assert_non_null(arena_alloc(&a, 100));
    assert_non_null(arena_alloc(&a, 1 << 20));
    assert_true(a.nBytes > 100000);
    arena_reset(&a);
    assert_int_equal(a.nBytes, 0);
    /* One ordinary block survives and is reused from its start. */
    assert_non_null(a.pHead);
    void *p2 = arena_alloc(&a, 32);
    assert_non_null(p2);
    for (int i = 0; i < 1000; i++) assert_non_null(arena_alloc(&a, 100));
    arena_reset(&a);
    arena_reset(&a);
    assert_non_null(arena_alloc(&a, 10));
    (void)p1;
    arena_free(&a);
    assert_null(a.pHead);
    /* Reusable after free, as after init. */
    assert_non_null(arena_alloc(&a, 10));
    arena_free(&a);
}

/* Rewinding to a mark frees what came after it (ordinary and private
** blocks; run under ASan, a leak or a double free fails) and keeps what
** came before, which later allocations do not overwrite. */
static void test_arena_mark_rewind(void **state) {
    (void)state;
    Arena a;
    arena_init(&a, 1024);
    ArenaMark m0 = arena_mark(&a); /* an empty arena */
    char *keep = arena_strndup(&a, "kept", 4);
    assert_non_null(arena_alloc(&a, 5000)); /* private block behind the head */
    size_t nBefore = a.nBytes;
    ArenaMark m = arena_mark(&a);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 200; i++) assert_non_null(arena_alloc(&a, 40)); /* new heads */
        assert_non_null(arena_alloc(&a, 3000));                             /* private blocks */
        ArenaMark inner = arena_mark(&a);
        assert_non_null(arena_alloc(&a, 2000));
        arena_rewind(&a, &inner);
        arena_rewind(&a, &m);
        assert_int_equal(a.nBytes, nBefore);
        char *p = arena_strndup(&a, "next", 4);
        assert_non_null(p);
        assert_string_equal(keep, "kept");
        arena_rewind(&a, &m);
    }
    arena_rewind(&a, &m0);
    assert_null(a.pHead);
    assert_int_equal(a.nBytes, 0);
    assert_non_null(arena_alloc(&a, 10));
    arena_free(&a);
}

/* ----------------------------------------------------------------- vec */

typedef struct Pair {
    int k;
    double v;
} Pair;

static void test_vec(void **state) {
    (void)state;
    VEC(int) v = {0};
    for (int i = 0; i < 10000; i++) assert_int_equal(VEC_PUSH(&v, i * 3), LP_OK);
    assert_int_equal(v.n, 10000);
    assert_true(v.cap >= v.n);
    for (int i = 0; i < 10000; i++) assert_int_equal(v.a[i], i * 3);
    VEC_FREE(&v);
    assert_null(v.a);
    assert_int_equal(v.n, 0);
    assert_int_equal(v.cap, 0);

    VEC(Pair) vp = {0};
    assert_int_equal(VEC_RESERVE(&vp, 100), LP_OK);
    size_t cap = vp.cap;
    assert_true(cap >= 100);
    for (int i = 0; i < 100; i++) VEC_PUSH(&vp, ((Pair){i, i * 0.5}));
    assert_int_equal(vp.cap, cap); /* reserved: no regrowth */
    assert_int_equal(vp.a[99].k, 99);
    /* Impossible sizes fail and leave the vector as it was. */
    assert_int_equal(VEC_RESERVE(&vp, SIZE_MAX), LP_NOMEM);
    assert_int_equal(VEC_RESERVE(&vp, SIZE_MAX / 8), LP_NOMEM);
    assert_int_equal(vp.cap, cap);
    assert_int_equal(vp.n, 100);
    VEC_FREE(&vp);
}

/* -------------------------------------------------------------- strbuf */

static void test_strbuf(void **state) {
    (void)state;
    StrBuf sb = {0};
    strbuf_appendz(&sb, "abc");
    strbuf_appendc(&sb, '-');
    strbuf_append(&sb, "xyz\0q", 5);
    assert_int_equal(sb.n, 9);
    assert_memory_equal(sb.z, "abc-xyz\0q", 10); /* includes the final NUL */
    strbuf_appendf(&sb, "[%d]", 17);
    assert_string_equal(sb.z + 9, "[17]");

    /* appendf beyond its 256-byte stack buffer. */
    char zBig[5000];
    memset(zBig, 'k', sizeof(zBig) - 1);
    zBig[sizeof(zBig) - 1] = 0;
    strbuf_reset(&sb);
    assert_int_equal(sb.n, 0);
    assert_string_equal(sb.z, "");
    strbuf_appendf(&sb, "<%s|%d>", zBig, 123);
    assert_int_equal(sb.n, 4999 + 6);
    assert_int_equal(sb.z[0], '<');
    assert_int_equal(sb.z[4999], 'k');
    assert_string_equal(sb.z + 5000, "|123>");
    assert_int_equal(strlen(sb.z), sb.n);

    /* Many single characters across growth boundaries. */
    strbuf_reset(&sb);
    for (int i = 0; i < 3000; i++) strbuf_appendc(&sb, (char)('a' + i % 26));
    assert_int_equal(sb.n, 3000);
    assert_int_equal(sb.z[2999], 'a' + 2999 % 26);
    assert_int_equal(sb.z[3000], 0);

    /* reserve + commit. */
    char *dst = strbuf_reserve(&sb, 4);
    memcpy(dst, "WXYZ", 4);
    strbuf_commit(&sb, 3);
    assert_int_equal(sb.n, 3003);
    assert_string_equal(sb.z + 3000, "WXY");

    /* The oom flag is sticky until reset. */
    assert_null(strbuf_reserve(&sb, SIZE_MAX - 10));
    assert_true(sb.oom);
    strbuf_appendz(&sb, "ignored");
    assert_int_equal(sb.n, 3003);
    strbuf_reset(&sb);
    assert_false(sb.oom);
    strbuf_appendz(&sb, "ok");
    assert_string_equal(sb.z, "ok");

    size_t n;
    char *z = strbuf_detach(&sb, &n);
    assert_int_equal(n, 2);
    assert_string_equal(z, "ok");
    assert_null(sb.z);
    free(z);
    strbuf_free(&sb);
}

/* ----------------------------------------------------------------- log */

static void test_log(void **state) {
    (void)state;
    assert_int_equal(log_level_parse("debug"), LOG_LEVEL_DEBUG);
    assert_int_equal(log_level_parse("WARNING"), LOG_LEVEL_WARN);
    assert_int_equal(log_level_parse("off"), LOG_LEVEL_OFF);
    assert_int_equal(log_level_parse("loud"), -1);

    int fd[2];
    assert_int_equal(pipe(fd), 0);
    int oldLevel = log_get_level();
    log_set_fd(fd[1]);
    log_set_level(LOG_LEVEL_WARN);
    LOG_INFO("filtered %d", 1);
    LOG_DEBUG("filtered %d", 2);
    LOG_WARN("kept %d", 3);
    LOG_ERROR("%s", "also kept");
    log_set_fd(2);
    log_set_level(oldLevel);
    close(fd[1]);

    char buf[4096];
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd[0], buf + n, sizeof(buf) - 1 - n)) > 0) n += (size_t)r;
    close(fd[0]);
    buf[n] = 0;
    assert_null(strstr(buf, "filtered"));
    char *w = strstr(buf, "[warn] kept 3\n");
    char *e = strstr(buf, "[error] also kept\n");
    assert_non_null(w);
    assert_non_null(e);
    assert_true(w < e);
    /* Lines start with an ISO-8601 UTC timestamp. */
    assert_int_equal(buf[4], '-');
    assert_int_equal(buf[10], 'T');
    assert_int_equal(buf[23], 'Z');
}

/* --------------------------------------------------------------- IdMap */

/* Checks the table's shape and that iteration yields exactly the
** reference's entries. */
static void idmap_check_all(const IdMap *m, const uint64_t *aKey, const int *aHas,
                            const uint64_t *aVal, size_t nKey) {
    size_t nRef = 0;
    for (size_t i = 0; i < nKey; i++) nRef += aHas[i] ? 1 : 0;
    assert_int_equal(idmap_count(m), nRef);
    if (m->nSlot) {
        assert_int_equal(m->nSlot & (m->nSlot - 1), 0);
        assert_true(m->nUsed * 4 <= m->nSlot * 3);
    }
    /* Iteration: every entry once, matching the reference. */
    IdMap seen;
    idmap_init(&seen);
    IdMapIter it = {0};
    uint64_t k, v;
    size_t nIter = 0;
    while (idmap_next(m, &it, &k, &v)) {
        assert_false(idmap_get(&seen, k, NULL));
        assert_int_equal(idmap_put(&seen, k, v), LP_OK);
        nIter++;
    }
    assert_int_equal(nIter, nRef);
    for (size_t i = 0; i < nKey; i++) {
        uint64_t got;
        assert_int_equal(idmap_get(&seen, aKey[i], &got), aHas[i]);
        if (aHas[i]) assert_int_equal(got, aVal[i]);
    }
    idmap_free(&seen);
}

/* nOp random put/overwrite/delete/get over a universe of nKey keys. */
static void idmap_random_run(size_t nKey, size_t nOp) {
    uint64_t *aKey = malloc(nKey * sizeof(uint64_t));
    uint64_t *aVal = calloc(nKey, sizeof(uint64_t));
    int *aHas = calloc(nKey, sizeof(int));
    assert_non_null(aKey);
    /* Key 0 (kept outside the slots) and the extremes are always in. */
    aKey[0] = 0;
    aKey[1] = 1;
    aKey[2] = UINT64_MAX;
    for (size_t i = 3; i < nKey; i++) {
        aKey[i] = mix64(i);
        assert_true(aKey[i] > 1 && aKey[i] < UINT64_MAX);
    }
    IdMap m = {0}; /* zero-initialised is valid */
    for (size_t op = 0; op < nOp; op++) {
        size_t i = rnd_below(nKey);
        unsigned r = (unsigned)rnd_below(100);
        if (r < 45) {
            uint64_t v = rnd();
            assert_int_equal(idmap_put(&m, aKey[i], v), LP_OK);
            aHas[i] = 1;
            aVal[i] = v;
        } else if (r < 70) {
            uint64_t old = 0;
            int found = idmap_del(&m, aKey[i], &old);
            assert_int_equal(found, aHas[i]);
            if (found) assert_int_equal(old, aVal[i]);
            aHas[i] = 0;
        } else {
            uint64_t got = 0;
            assert_int_equal(idmap_get(&m, aKey[i], &got), aHas[i]);
            if (aHas[i]) assert_int_equal(got, aVal[i]);
        }
        if (op % 10000 == 9999) idmap_check_all(&m, aKey, aHas, aVal, nKey);
    }
    idmap_check_all(&m, aKey, aHas, aVal, nKey);
    idmap_free(&m);
    assert_int_equal(idmap_count(&m), 0);
    assert_false(idmap_get(&m, aKey[3], NULL));
    free(aKey);
    free(aVal);
    free(aHas);
}

static void test_idmap_random(void **state) {
    (void)state;
    /* Wide universe: the map grows to thousands of slots. */
    idmap_random_run(20000, 100000);
    /* At most 11 keys never grow the 16-slot table (11+1 <= 12), so the
    ** runs are long, wrap around the end and get shifted on every delete. */
    idmap_random_run(12, 100000);
}

static void test_idmap_growth_and_reserve(void **state) {
    (void)state;
    IdMap m;
    idmap_init(&m);
    /* Sequential ids, as auto-assigned document ids are. */
    for (uint64_t k = 1; k <= 200000; k++) assert_int_equal(idmap_put(&m, k, k * 7), LP_OK);
    assert_int_equal(idmap_count(&m), 200000);
    assert_true(m.nUsed * 4 <= m.nSlot * 3);
    for (uint64_t k = 1; k <= 200000; k++) {
        uint64_t v;
        assert_true(idmap_get(&m, k, &v));
        assert_int_equal(v, k * 7);
    }
    assert_false(idmap_get(&m, 200001, NULL));
    /* Delete every other key, then check both halves. */
    for (uint64_t k = 2; k <= 200000; k += 2) assert_true(idmap_del(&m, k, NULL));
    assert_int_equal(idmap_count(&m), 100000);
    for (uint64_t k = 1; k <= 200000; k++) assert_int_equal(idmap_get(&m, k, NULL), k & 1);
    assert_false(idmap_del(&m, 2, NULL));
    idmap_free(&m);

    /* Reserve: no reallocation while filling to the reserved count. */
    assert_int_equal(idmap_reserve(&m, 1000), LP_OK);
    IdMapSlot *a = m.aSlot;
    size_t nSlot = m.nSlot;
    for (uint64_t k = 1; k <= 1000; k++) assert_int_equal(idmap_put(&m, mix64(k), k), LP_OK);
    assert_ptr_equal(m.aSlot, a);
    assert_int_equal(m.nSlot, nSlot);
    /* Reserving less than present is a no-op; absurd sizes fail. */
    assert_int_equal(idmap_reserve(&m, 10), LP_OK);
    assert_ptr_equal(m.aSlot, a);
    assert_int_equal(idmap_reserve(&m, SIZE_MAX), LP_NOMEM);
    assert_int_equal(idmap_reserve(&m, SIZE_MAX / 16), LP_NOMEM);
    assert_int_equal(idmap_count(&m), 1000);
    idmap_free(&m);

    /* Key 0 alone, with an empty slot array. */
    assert_false(idmap_get(&m, 0, NULL));
    assert_false(idmap_del(&m, 0, NULL));
    assert_int_equal(idmap_put(&m, 0, 5), LP_OK);
    uint64_t v = 0;
    assert_true(idmap_get(&m, 0, &v));
    assert_int_equal(v, 5);
    assert_int_equal(idmap_count(&m), 1);
    IdMapIter it = {0};
    uint64_t k = 99;
    assert_true(idmap_next(&m, &it, &k, &v));
    assert_int_equal(k, 0);
    assert_false(idmap_next(&m, &it, &k, &v));
    assert_true(idmap_del(&m, 0, &v));
    assert_int_equal(v, 5);
    assert_int_equal(idmap_count(&m), 0);
    idmap_free(&m);
}

/* ------------------------------------------------------------- HashMap */

/* Key universe for the HashMap test: key i is aLen[i] bytes at offset
** i * KEY_STRIDE of each of two copies of the key bytes, so a stored key
** pointer tells which key and which copy it is, and replacement of the
** stored key pointer on overwrite can be checked. */
#define KEY_STRIDE 48

typedef struct KeyPool {
    char *aBuf[2];      /* the two copies of all key bytes */
    size_t *aLen;       /* key i's length */
    size_t nKey;
} KeyPool;

static void keypool_init(KeyPool *kp, size_t nKey) {
    static const char *const azFixed[] = {"", "a", "ab", "abc", "a\0b", "a\0c", "A"};
    static const size_t anFixed[] = {0, 1, 2, 3, 3, 3, 1};
    size_t nFixed = LP_ARRAY_SIZE(azFixed);
    kp->nKey = nKey;
    kp->aLen = malloc(nKey * sizeof(size_t));
    kp->aBuf[0] = malloc(nKey * KEY_STRIDE);
    kp->aBuf[1] = malloc(nKey * KEY_STRIDE);
    for (size_t i = 0; i < nKey; i++) {
        char *p = kp->aBuf[0] + i * KEY_STRIDE;
        size_t len;
        if (i < nFixed) {
            len = anFixed[i];
            memcpy(p, azFixed[i], len);
        } else {
            /* A unique 4-byte prefix, then 0..36 random bytes (NULs too). */
            uint32_t u = (uint32_t)i;
            memcpy(p, &u, 4);
            len = 4 + rnd_below(37);
            for (size_t k = 4; k < len; k++) p[k] = (char)rnd();
        }
        kp->aLen[i] = len;
    }
    memcpy(kp->aBuf[1], kp->aBuf[0], nKey * KEY_STRIDE);
}

static void keypool_free(KeyPool *kp) {
    free(kp->aBuf[0]);
    free(kp->aBuf[1]);
    free(kp->aLen);
}

static const char *keypool_key(const KeyPool *kp, size_t i, int copy) {
    return kp->aBuf[copy] + i * KEY_STRIDE;
}

static void hmap_check_all(const HashMap *m, const KeyPool *kp, void *const *aRef,
                           const char *const *aRefKey) {
    size_t nRef = 0;
    for (size_t i = 0; i < kp->nKey; i++) nRef += aRef[i] ? 1 : 0;
    assert_int_equal(hmap_count(m), nRef);
    if (m->nSlot) {
        assert_int_equal(m->nSlot & (m->nSlot - 1), 0);
        assert_true(m->nUsed * 4 <= m->nSlot * 3);
    }
    /* Every iterated entry is a live reference entry, with the key pointer
    ** of its latest put; with the count check, a bijection. */
    HMapIter it = {0};
    const void *pKey;
    size_t nKey;
    void *pVal;
    size_t nIter = 0;
    while (hmap_next(m, &it, &pKey, &nKey, &pVal)) {
        const char *z = pKey;
        int copy = z >= kp->aBuf[1] && z < kp->aBuf[1] + kp->nKey * KEY_STRIDE;
        size_t off = (size_t)(z - kp->aBuf[copy]);
        assert_int_equal(off % KEY_STRIDE, 0);
        size_t i = off / KEY_STRIDE;
        assert_true(i < kp->nKey);
        assert_int_equal(kp->aLen[i], nKey);
        assert_ptr_equal(aRefKey[i], z);
        assert_ptr_equal(aRef[i], pVal);
        nIter++;
    }
    assert_int_equal(nIter, nRef);
}

static void hmap_random_run(size_t nKey, size_t nOp) {
    KeyPool kp;
    keypool_init(&kp, nKey);
    void **aRef = calloc(nKey, sizeof(void *));
    const char **aRefKey = calloc(nKey, sizeof(char *));
    HashMap m;
    hmap_init(&m);
    for (size_t op = 0; op < nOp; op++) {
        size_t i = rnd_below(nKey);
        int copy = (int)(rnd() & 1); /* look up / store through either copy */
        const char *z = keypool_key(&kp, i, copy);
        size_t n = kp.aLen[i];
        unsigned r = (unsigned)rnd_below(100);
        if (r < 45) {
            void *pVal = (void *)(uintptr_t)(op + 1);
            void *pOld = (void *)1;
            assert_int_equal(hmap_put(&m, z, n, pVal, &pOld), LP_OK);
            assert_ptr_equal(pOld, aRef[i]);
            aRef[i] = pVal;
            aRefKey[i] = z;
        } else if (r < 70) {
            assert_ptr_equal(hmap_del(&m, z, n), aRef[i]);
            aRef[i] = NULL;
            aRefKey[i] = NULL;
        } else {
            assert_ptr_equal(hmap_get(&m, z, n), aRef[i]);
        }
        if (op % 10000 == 9999) hmap_check_all(&m, &kp, aRef, aRefKey);
    }
    hmap_check_all(&m, &kp, aRef, aRefKey);
    hmap_free(&m);
    assert_int_equal(hmap_count(&m), 0);
    assert_null(hmap_get(&m, "a", 1));
    free(aRef);
    free(aRefKey);
    keypool_free(&kp);
}

static void test_hmap_random(void **state) {
    (void)state;
    hmap_random_run(20000, 100000);
    hmap_random_run(11, 100000); /* stays at 16 slots: long, wrapping runs */
}

static void test_hmap_keys(void **state) {
    (void)state;
    HashMap m = {0};
    int v1, v2, v3;
    assert_null(hmap_get(&m, NULL, 0));
    assert_null(hmap_del(&m, "x", 1));
    /* The empty key, spelt NULL or "", is one key. */
    assert_int_equal(hmap_put(&m, NULL, 0, &v1, NULL), LP_OK);
    assert_ptr_equal(hmap_get(&m, "", 0), &v1);
    assert_ptr_equal(hmap_get(&m, "zzz", 0), &v1);
    /* Bytes after a NUL count; a prefix is a different key. */
    assert_int_equal(hmap_put(&m, "a\0b", 3, &v2, NULL), LP_OK);
    assert_null(hmap_get(&m, "a\0c", 3));
    assert_null(hmap_get(&m, "a", 1));
    assert_ptr_equal(hmap_get(&m, "a\0b", 3), &v2);
    /* Overwrite returns the old value and keeps the count. */
    void *pOld = NULL;
    assert_int_equal(hmap_put(&m, "a\0b", 3, &v3, &pOld), LP_OK);
    assert_ptr_equal(pOld, &v2);
    assert_int_equal(hmap_count(&m), 2);
    assert_ptr_equal(hmap_del(&m, NULL, 0), &v1);
    assert_null(hmap_get(&m, "", 0));
    assert_int_equal(hmap_count(&m), 1);

    /* Table names: growth through many inserts, all found afterwards. */
    char aName[5000][24];
    for (int i = 0; i < 5000; i++) {
        snprintf(aName[i], sizeof(aName[i]), "table_%d", i);
        assert_int_equal(hmap_put(&m, aName[i], strlen(aName[i]), aName[i], NULL), LP_OK);
    }
    assert_int_equal(hmap_count(&m), 5001);
    for (int i = 0; i < 5000; i++) {
        char z[24];
        snprintf(z, sizeof(z), "table_%d", i);
        assert_ptr_equal(hmap_get(&m, z, strlen(z)), aName[i]);
    }
    hmap_free(&m);
}

/* -------------------------------------------------------------- varint */

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* lp_hash_short reads nothing past the string (it ends at an unreadable
** page here), and spreads words over its low and high bits. */
static void test_hash_short(void **state) {
    (void)state;
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char *a = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(a != MAP_FAILED);
    assert_int_equal(mprotect(a + pg, (size_t)pg, PROT_NONE), 0);
    uint32_t aSeen[40];
    for (size_t n = 0; n < 40; n++) {
        unsigned char *z = a + pg - n;
        for (size_t i = 0; i < n; i++) z[i] = (unsigned char)('a' + i % 26);
        aSeen[n] = lp_hash_short(z, n); /* faults if it reads past z + n */
        for (size_t m = 0; m < n; m++) assert_int_not_equal(aSeen[m], aSeen[n]); /* prefixes differ */
    }
    munmap(a, (size_t)pg * 2);

    /* Every word of 1 to 3 letters and "w0".."w99999": ~118k keys. */
    enum { N = 26 + 26 * 26 + 26 * 26 * 26 + 100000 };
    uint32_t *aH = malloc(sizeof(uint32_t) * N);
    assert_non_null(aH);
    size_t k = 0;
    char z[128]; /* as long as XXH3's longest short path reads: -O3 cannot bound len below */
    for (int len = 1; len <= 3; len++) {
        int nAll = len == 1 ? 26 : len == 2 ? 676 : 17576;
        for (int v = 0; v < nAll; v++) {
            for (int i = 0, x = v; i < len; i++, x /= 26) z[i] = (char)('a' + x % 26);
            aH[k++] = lp_hash_short(z, (size_t)len);
        }
    }
    for (int v = 0; v < 100000; v++) {
        int len = snprintf(z, sizeof(z), "w%d", v);
        aH[k++] = lp_hash_short(z, (size_t)len);
    }
    assert_int_equal(k, N);
    uint32_t aLow[256] = {0}, aHigh[256] = {0};
    for (size_t i = 0; i < k; i++) {
        aLow[aH[i] & 255]++;
        aHigh[aH[i] >> 24]++;
    }
    for (int b = 0; b < 256; b++) { /* mean 462, sd about 21 */
        assert_true(aLow[b] > 462 - 120 && aLow[b] < 462 + 120);
        assert_true(aHigh[b] > 462 - 120 && aHigh[b] < 462 + 120);
    }
    qsort(aH, k, sizeof(uint32_t), cmp_u32);
    int nSame = 0;
    for (size_t i = 1; i < k; i++) nSame += aH[i] == aH[i - 1];
    assert_true(nSame <= 10); /* about 1.6 expected */
    free(aH);
}

static void test_varint_edges(void **state) {
    (void)state;
    static const struct {
        uint64_t v;
        size_t n;
        const char *z;
    } aCase[] = {
        {0, 1, "\x00"},
        {1, 1, "\x01"},
        {127, 1, "\x7f"},
        {128, 2, "\x80\x01"},
        {300, 2, "\xac\x02"},
        {16383, 2, "\xff\x7f"},
        {16384, 3, "\x80\x80\x01"},
        {UINT32_MAX, 5, "\xff\xff\xff\xff\x0f"},
        {(uint64_t)UINT32_MAX + 1, 5, "\x80\x80\x80\x80\x10"},
        {UINT64_MAX, 10, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"},
    };
    for (size_t c = 0; c < LP_ARRAY_SIZE(aCase); c++) {
        uint8_t buf[VARINT_MAX64];
        assert_int_equal(varint_put_u64(buf, aCase[c].v), aCase[c].n);
        assert_memory_equal(buf, aCase[c].z, aCase[c].n);
        assert_int_equal(varint_len_u64(aCase[c].v), aCase[c].n);
        /* Decode from a buffer of exactly the encoding's size, so ASan
        ** would see any read past the end. */
        uint8_t *exact = malloc(aCase[c].n);
        memcpy(exact, buf, aCase[c].n);
        const uint8_t *p = exact;
        uint64_t got;
        assert_int_equal(varint_get_u64(&p, exact + aCase[c].n, &got), LP_OK);
        assert_int_equal(got, aCase[c].v);
        assert_ptr_equal(p, exact + aCase[c].n);
        if (aCase[c].v <= UINT32_MAX) {
            uint32_t g32;
            p = exact;
            assert_int_equal(varint_put_u32(buf, (uint32_t)aCase[c].v), aCase[c].n);
            assert_int_equal(varint_get_u32(&p, exact + aCase[c].n, &g32), LP_OK);
            assert_int_equal(g32, aCase[c].v);
            assert_ptr_equal(p, exact + aCase[c].n);
        } else {
            uint32_t g32 = 7;
            p = exact;
            assert_int_equal(varint_get_u32(&p, exact + aCase[c].n, &g32), LP_CORRUPT);
            assert_ptr_equal(p, exact);
            assert_int_equal(g32, 7);
        }
        /* Every proper prefix is truncated, including the empty one. */
        for (size_t k = 0; k < aCase[c].n; k++) {
            uint8_t *pre = malloc(k ? k : 1);
            memcpy(pre, buf, k);
            p = pre;
            got = 12345;
            assert_int_equal(varint_get_u64(&p, pre + k, &got), LP_CORRUPT);
            assert_ptr_equal(p, pre);
            assert_int_equal(got, 12345);
            uint32_t g32;
            assert_int_equal(varint_get_u32(&p, pre + k, &g32), LP_CORRUPT);
            free(pre);
        }
        free(exact);
    }
    /* All powers of two and their neighbours round-trip. */
    for (int b = 0; b < 64; b++) {
        uint64_t base = (uint64_t)1 << b;
        for (int d = -1; d <= 1; d++) {
            uint64_t v = base + (uint64_t)(int64_t)d;
            uint8_t buf[VARINT_MAX64];
            size_t n = varint_put_u64(buf, v);
            assert_int_equal(n, varint_len_u64(v));
            const uint8_t *p = buf;
            uint64_t got;
            assert_int_equal(varint_get_u64(&p, buf + n, &got), LP_OK);
            assert_int_equal(got, v);
        }
    }
}

static void test_varint_overlong(void **state) {
    (void)state;
    static const struct {
        const char *z;
        size_t n;
        int ok32, ok64; /* 1 = accepted */
    } aCase[] = {
        {"\x80\x00", 2, 0, 0},                                  /* 0 in two bytes */
        {"\xff\x80\x00", 3, 0, 0},                              /* trailing zero group */
        {"\xff\xff\xff\xff\x1f", 5, 0, 1},                      /* 2^33-1: too big for u32 */
        {"\xff\xff\xff\xff\x8f\x01", 6, 0, 1},                  /* six bytes */
        {"\x80\x80\x80\x80\x80\x00", 6, 0, 0},
        {"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10, 0, 0}, /* 2^64 */
        {"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81\x00", 11, 0, 0},
        {"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11, 0, 0},
        {"\xff\xff\xff\xff\x0f", 5, 1, 1},                      /* control: 2^32-1 */
    };
    for (size_t c = 0; c < LP_ARRAY_SIZE(aCase); c++) {
        const uint8_t *b = (const uint8_t *)aCase[c].z;
        const uint8_t *p = b;
        uint32_t v32;
        uint64_t v64;
        assert_int_equal(varint_get_u32(&p, b + aCase[c].n, &v32),
                         aCase[c].ok32 ? LP_OK : LP_CORRUPT);
        if (!aCase[c].ok32) assert_ptr_equal(p, b);
        p = b;
        assert_int_equal(varint_get_u64(&p, b + aCase[c].n, &v64),
                         aCase[c].ok64 ? LP_OK : LP_CORRUPT);
        if (!aCase[c].ok64) assert_ptr_equal(p, b);
    }
}

static void test_varint_stream_and_zigzag(void **state) {
    (void)state;
    /* 100k values of random widths, back to back in one buffer. */
    enum { N = 100000 };
    uint64_t *aV = malloc(N * sizeof(uint64_t));
    uint8_t *buf = malloc(N * VARINT_MAX64);
    size_t n = 0;
    for (size_t i = 0; i < N; i++) {
        aV[i] = rnd() >> rnd_below(64);
        n += varint_put_u64(buf + n, aV[i]);
    }
    const uint8_t *p = buf;
    for (size_t i = 0; i < N; i++) {
        uint64_t v;
        assert_int_equal(varint_get_u64(&p, buf + n, &v), LP_OK);
        assert_int_equal(v, aV[i]);
    }
    assert_ptr_equal(p, buf + n);
    uint64_t v;
    assert_int_equal(varint_get_u64(&p, buf + n, &v), LP_CORRUPT);
    free(aV);
    free(buf);

    /* Zigzag: the documented mapping, the extremes, and round trips. */
    assert_int_equal(varint_zigzag64(0), 0);
    assert_int_equal(varint_zigzag64(-1), 1);
    assert_int_equal(varint_zigzag64(1), 2);
    assert_int_equal(varint_zigzag64(-2), 3);
    assert_int_equal(varint_zigzag64(INT64_MAX), UINT64_MAX - 1);
    assert_int_equal(varint_zigzag64(INT64_MIN), UINT64_MAX);
    assert_true(varint_unzigzag64(UINT64_MAX) == INT64_MIN);
    assert_true(varint_unzigzag64(UINT64_MAX - 1) == INT64_MAX);
    assert_int_equal(varint_zigzag32(-1), 1);
    assert_int_equal(varint_zigzag32(INT32_MIN), UINT32_MAX);
    assert_int_equal(varint_zigzag32(INT32_MAX), UINT32_MAX - 1);
    assert_true(varint_unzigzag32(UINT32_MAX) == INT32_MIN);
    for (int i = 0; i < 100000; i++) {
        int64_t s = (int64_t)(rnd() >> rnd_below(64));
        if (rnd() & 1) s = -s;
        assert_true(varint_unzigzag64(varint_zigzag64(s)) == s);
        int32_t s32 = (int32_t)s;
        assert_true(varint_unzigzag32(varint_zigzag32(s32)) == s32);
        /* Small magnitudes stay small. */
        if (s > -64 && s < 64) assert_int_equal(varint_len_u64(varint_zigzag64(s)), 1);
    }
}

/* ------------------------------------------------------------ delta codec */

static void test_delta_roundtrip(void **state) {
    (void)state;
    LpError err;
    for (int round = 0; round < 200; round++) {
        size_t n = round == 0 ? 0 : rnd_below(3000) + 1;
        uint32_t *a32 = malloc((n ? n : 1) * sizeof(uint32_t));
        uint64_t *a64 = malloc((n ? n : 1) * sizeof(uint64_t));
        /* Sorted with duplicates, small and huge gaps, maybe hitting the top. */
        uint64_t x = round % 3 == 0 ? 0 : rnd() >> 40;
        for (size_t i = 0; i < n; i++) {
            unsigned r = (unsigned)rnd_below(10);
            uint64_t gap = r < 2 ? 0 : r < 8 ? rnd_below(200) : rnd() >> (40 + rnd_below(24));
            x = gap > UINT32_MAX - (x & UINT32_MAX) ? UINT32_MAX : x + gap;
            a32[i] = (uint32_t)x;
            a64[i] = x * 1000003u;
        }
        if (n > 2 && round % 5 == 0) {
            a32[n - 1] = UINT32_MAX;
            a64[n - 1] = UINT64_MAX;
        }
        StrBuf sb = {0};
        strbuf_appendz(&sb, "H"); /* encoding appends after existing bytes */
        assert_int_equal(varint_delta_encode_u32(&sb, a32, n, &err), LP_OK);
        size_t n32 = sb.n;
        assert_int_equal(varint_delta_encode_u64(&sb, a64, n, &err), LP_OK);

        uint32_t *b32 = malloc((n ? n : 1) * sizeof(uint32_t));
        uint64_t *b64 = malloc((n ? n : 1) * sizeof(uint64_t));
        const uint8_t *p = (const uint8_t *)sb.z + 1;
        const uint8_t *pEnd = (const uint8_t *)sb.z + sb.n;
        assert_int_equal(varint_delta_decode_u32(&p, pEnd, b32, n, &err), LP_OK);
        assert_ptr_equal(p, (const uint8_t *)sb.z + n32);
        assert_int_equal(varint_delta_decode_u64(&p, pEnd, b64, n, &err), LP_OK);
        assert_ptr_equal(p, pEnd);
        if (n) {
            assert_memory_equal(a32, b32, n * sizeof(uint32_t));
            assert_memory_equal(a64, b64, n * sizeof(uint64_t));
        }
        strbuf_free(&sb);
        free(a32);
        free(a64);
        free(b32);
        free(b64);
    }
}

static void test_delta_errors(void **state) {
    (void)state;
    LpError err;
    StrBuf sb = {0};
    strbuf_appendz(&sb, "keep");

    /* Unsorted input: refused, nothing appended, the index named. */
    uint32_t aBad[] = {1, 5, 9, 3, 10};
    lp_err_clear(&err);
    assert_int_equal(varint_delta_encode_u32(&sb, aBad, 5, &err), LP_BADINPUT);
    assert_int_equal(err.code, LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "index 3"));
    assert_int_equal(sb.n, 4);
    uint64_t aBad64[] = {UINT64_MAX, 0};
    assert_int_equal(varint_delta_encode_u64(&sb, aBad64, 2, &err), LP_BADINPUT);
    assert_int_equal(sb.n, 4);
    strbuf_reset(&sb);

    /* Truncated: the last byte of a multi-byte delta cut off. */
    uint32_t aGood[] = {5, 1000, 100000};
    assert_int_equal(varint_delta_encode_u32(&sb, aGood, 3, &err), LP_OK);
    uint32_t out[8];
    const uint8_t *b = (const uint8_t *)sb.z;
    const uint8_t *p = b;
    assert_int_equal(varint_delta_decode_u32(&p, b + sb.n - 1, out, 3, &err), LP_CORRUPT);
    assert_ptr_equal(p, b);
    assert_non_null(strstr(err.zMsg, "value 2 of 3"));
    assert_non_null(strstr(err.zMsg, "truncated"));
    assert_int_equal(err.pos, 3); /* 1 byte for 5, 2 for 995 */
    /* Asking for more values than were written is truncation too. */
    assert_int_equal(varint_delta_decode_u32(&p, b + sb.n, out, 4, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "value 3 of 4"));

    /* Overlong delta. */
    const uint8_t aOver[] = {0x01, 0x80, 0x00};
    p = aOver;
    assert_int_equal(varint_delta_decode_u32(&p, aOver + 3, out, 2, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "overlong"));

    /* Running sums past the type's range. */
    uint8_t buf[32];
    size_t n = varint_put_u32(buf, UINT32_MAX);
    n += varint_put_u32(buf + n, 0);
    n += varint_put_u32(buf + n, 1);
    p = buf;
    assert_int_equal(varint_delta_decode_u32(&p, buf + n, out, 3, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "overflows uint32"));
    p = buf;
    assert_int_equal(varint_delta_decode_u32(&p, buf + n, out, 2, &err), LP_OK);
    assert_int_equal(out[1], UINT32_MAX);
    n = varint_put_u64(buf, UINT64_MAX);
    n += varint_put_u64(buf + n, 1);
    uint64_t out64[2];
    p = buf;
    assert_int_equal(varint_delta_decode_u64(&p, buf + n, out64, 2, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "overflows uint64"));
    strbuf_free(&sb);
}

/* -------------------------------------------------------------- bitset */

/* Compares b with the reference bits (size, every bit, count, next). */
static void bitset_check(const Bitset *b, const unsigned char *ref, size_t n) {
    assert_int_equal(b->nBit, n);
    size_t nSet = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(bitset_test(b, i), ref[i]);
        nSet += ref[i];
    }
    assert_int_equal(bitset_count(b), nSet);
    /* Iteration visits exactly the set bits, in order. */
    size_t expect = 0;
    for (size_t i = bitset_next(b, 0); i != BITSET_NONE; i = bitset_next(b, i + 1)) {
        while (expect < n && !ref[expect]) expect++;
        assert_int_equal(i, expect);
        expect++;
    }
    while (expect < n && !ref[expect]) expect++;
    assert_int_equal(expect, n);
    assert_int_equal(bitset_next(b, n), BITSET_NONE);
    assert_int_equal(bitset_next(b, SIZE_MAX - 1), BITSET_NONE);
}

static void bitset_fill_random(Bitset *b, unsigned char *ref, int density) {
    for (size_t i = 0; i < b->nBit; i++) {
        ref[i] = rnd_below(100) < (size_t)density;
        if (ref[i]) bitset_set(b, i);
        else bitset_clear(b, i);
    }
}

static void test_bitset_ops(void **state) {
    (void)state;
    static const size_t anSize[] = {0, 1, 63, 64, 65, 127, 128, 129, 1000, 4097};
    for (size_t s = 0; s < LP_ARRAY_SIZE(anSize); s++) {
        size_t n = anSize[s];
        Bitset b;
        assert_int_equal(bitset_init(&b, n), LP_OK);
        unsigned char *ref = calloc(n + 1, 1);
        bitset_check(&b, ref, n);
        /* Random single-bit operations. */
        for (size_t op = 0; n > 0 && op < 20000; op++) {
            size_t i = rnd_below(n);
            if (rnd() & 1) {
                bitset_set(&b, i);
                ref[i] = 1;
            } else {
                bitset_clear(&b, i);
                ref[i] = 0;
            }
            if (op % 4000 == 0) bitset_check(&b, ref, n);
        }
        bitset_check(&b, ref, n);
        for (int density = 0; density <= 100; density += 25) {
            bitset_fill_random(&b, ref, density);
            bitset_check(&b, ref, n);
        }
        bitset_free(&b);
        assert_null(b.aWord);
        assert_int_equal(b.nBit, 0);
        free(ref);
    }
}

/* dst op src against the reference semantics: src is zero past its end. */
static void test_bitset_binary(void **state) {
    (void)state;
    static const size_t anSize[] = {1, 64, 65, 200, 1000};
    for (size_t x = 0; x < LP_ARRAY_SIZE(anSize); x++) {
        for (size_t y = 0; y < LP_ARRAY_SIZE(anSize); y++) {
            for (int op = 0; op < 3; op++) {
                size_t nd = anSize[x], ns = anSize[y];
                Bitset d, s;
                assert_int_equal(bitset_init(&d, nd), LP_OK);
                assert_int_equal(bitset_init(&s, ns), LP_OK);
                unsigned char *rd = calloc(nd, 1), *rs = calloc(ns, 1);
                bitset_fill_random(&d, rd, 50);
                bitset_fill_random(&s, rs, 50);
                for (size_t i = 0; i < nd; i++) {
                    int sb = i < ns ? rs[i] : 0;
                    rd[i] = op == 0 ? (rd[i] & sb) : op == 1 ? (rd[i] | sb) : (rd[i] & !sb);
                }
                if (op == 0) bitset_and(&d, &s);
                else if (op == 1) bitset_or(&d, &s);
                else bitset_andnot(&d, &s);
                bitset_check(&d, rd, nd);
                bitset_free(&d);
                bitset_free(&s);
                free(rd);
                free(rs);
            }
        }
    }
}

static void test_bitset_resize(void **state) {
    (void)state;
    Bitset b = {0};
    assert_int_equal(bitset_count(&b), 0);
    assert_int_equal(bitset_next(&b, 0), BITSET_NONE);
    assert_int_equal(bitset_resize(&b, 100), LP_OK);
    for (size_t i = 0; i < 100; i += 3) bitset_set(&b, i);
    assert_int_equal(bitset_count(&b), 34);
    /* Growing keeps old bits and adds zero bits. */
    assert_int_equal(bitset_resize(&b, 5000), LP_OK);
    assert_int_equal(bitset_count(&b), 34);
    assert_true(bitset_test(&b, 99));
    assert_false(bitset_test(&b, 4999));
    bitset_set(&b, 4999);
    /* Shrinking inside a word drops the bits above, and growing again
    ** must not bring them back. */
    assert_int_equal(bitset_resize(&b, 70), LP_OK);
    assert_int_equal(bitset_count(&b), 24); /* 0,3,...,69 */
    assert_int_equal(bitset_resize(&b, 100), LP_OK);
    assert_false(bitset_test(&b, 72));
    assert_int_equal(bitset_count(&b), 24);
    assert_int_equal(bitset_next(&b, 70), BITSET_NONE);
    assert_int_equal(bitset_resize(&b, 0), LP_OK);
    assert_int_equal(bitset_count(&b), 0);
    assert_int_equal(bitset_resize(&b, SIZE_MAX), LP_NOMEM);
    assert_int_equal(bitset_resize(&b, SIZE_MAX / 2), LP_NOMEM);
    assert_int_equal(b.nBit, 0);
    assert_int_equal(bitset_resize(&b, 1), LP_OK);
    assert_false(bitset_test(&b, 0));
    bitset_free(&b);
}

/* -------------------------------------------------------------- crc32c */

typedef uint32_t (*CrcFn)(uint32_t, const void *, size_t);

static void crc_vectors(CrcFn f) {
    assert_int_equal(f(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(f(0, "", 0), 0);
    /* RFC 3720 (iSCSI) appendix B.4. */
    uint8_t buf[32];
    memset(buf, 0, 32);
    assert_int_equal(f(0, buf, 32), 0x8A9136AAu);
    memset(buf, 0xff, 32);
    assert_int_equal(f(0, buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++) buf[i] = (uint8_t)i;
    assert_int_equal(f(0, buf, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++) buf[i] = (uint8_t)(31 - i);
    assert_int_equal(f(0, buf, 32), 0x113FDB5Cu);
}

static void test_crc32c_vectors(void **state) {
    (void)state;
    crc_vectors(crc32c_update);
    crc_vectors(crc32c_sw_update);
    if (crc32c_hw_available()) crc_vectors(crc32c_hw_update);
}

static void test_crc32c_hw_sw_incremental(void **state) {
    (void)state;
    enum { NBUF = 70000 };
    uint8_t *buf = malloc(NBUF);
    for (size_t i = 0; i < NBUF; i++) buf[i] = (uint8_t)rnd();
    int bHw = crc32c_hw_available();
    /* Every length up to 300 at every alignment 0..15, then big ones. */
    for (size_t len = 0; len < 300 + 40; len++) {
        size_t n = len < 300 ? len : 1000 + rnd_below(NBUF - 1000 - 16);
        for (size_t off = 0; off < 16; off++) {
            uint32_t sw = crc32c_sw_update(0, buf + off, n);
            assert_int_equal(crc32c_update(0, buf + off, n), sw);
            if (bHw) assert_int_equal(crc32c_hw_update(0, buf + off, n), sw);
            /* Incremental over a random split equals one shot, on all
            ** paths, and a non-zero starting crc chains through. */
            size_t cut = n ? rnd_below(n + 1) : 0;
            uint32_t c = crc32c_update(0, buf + off, cut);
            assert_int_equal(crc32c_update(c, buf + off + cut, n - cut), sw);
            c = crc32c_sw_update(0, buf + off, cut);
            assert_int_equal(crc32c_sw_update(c, buf + off + cut, n - cut), sw);
            if (bHw) {
                c = crc32c_hw_update(0, buf + off, cut);
                assert_int_equal(crc32c_hw_update(c, buf + off + cut, n - cut), sw);
            }
        }
    }
    /* Many small pieces. */
    uint32_t c = 0;
    size_t pos = 0;
    while (pos < NBUF) {
        size_t k = rnd_below(20);
        if (k > NBUF - pos) k = NBUF - pos;
        c = crc32c_update(c, buf + pos, k);
        pos += k;
    }
    assert_int_equal(c, crc32c_sw_update(0, buf, NBUF));
    /* A single flipped bit changes the checksum. */
    uint32_t before = crc32c_update(0, buf, NBUF);
    buf[NBUF / 2] ^= 0x10;
    assert_int_not_equal(crc32c_update(0, buf, NBUF), before);
    free(buf);
}

/* --------------------------------------------------------------- clock */

static void test_clock(void **state) {
    (void)state;
    int64_t prev = lp_now_ns();
    assert_true(prev > 0);
    for (int i = 0; i < 100000; i++) {
        int64_t t = lp_now_ns();
        assert_true(t >= prev);
        prev = t;
    }
    int64_t t0 = lp_now_ns();
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    int64_t dt = lp_now_ns() - t0;
    assert_true(dt >= 20 * 1000 * 1000);
    assert_true(dt < 5LL * 1000 * 1000 * 1000);

    int64_t s = lp_unix_now();
    int64_t ms = lp_unix_now_ms();
    assert_true(s > 1577836800);    /* after 2020-01-01 */
    assert_true(s < 4102444800);    /* before 2100-01-01 */
    assert_true(ms / 1000 >= s && ms / 1000 <= s + 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_set_and_prefix),
        cmocka_unit_test(test_error_truncation),
        cmocka_unit_test(test_arena_alignment_and_contents),
        cmocka_unit_test(test_arena_big_allocations),
        cmocka_unit_test(test_prefault),
        cmocka_unit_test(test_map_huge),
        cmocka_unit_test(test_slab_blocks_random),
        cmocka_unit_test(test_slab_reuse_and_bump),
        cmocka_unit_test(test_slab_threads),
        cmocka_unit_test(test_arena_reset_reuse),
        cmocka_unit_test(test_arena_mark_rewind),
        cmocka_unit_test(test_vec),
        cmocka_unit_test(test_strbuf),
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_idmap_random),
        cmocka_unit_test(test_idmap_growth_and_reserve),
        cmocka_unit_test(test_hmap_random),
        cmocka_unit_test(test_hmap_keys),
        cmocka_unit_test(test_hash_short),
        cmocka_unit_test(test_varint_edges),
        cmocka_unit_test(test_varint_overlong),
        cmocka_unit_test(test_varint_stream_and_zigzag),
        cmocka_unit_test(test_delta_roundtrip),
        cmocka_unit_test(test_delta_errors),
        cmocka_unit_test(test_bitset_ops),
        cmocka_unit_test(test_bitset_binary),
        cmocka_unit_test(test_bitset_resize),
        cmocka_unit_test(test_crc32c_vectors),
        cmocka_unit_test(test_crc32c_hw_sw_incremental),
        cmocka_unit_test(test_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
