/*
** crc32c.c — see crc32c.h.
**
** Software path: slicing-by-8 (Intel's technique, as in LevelDB and zlib):
** table k maps a byte to the CRC contribution it makes when k more bytes
** follow it, so eight table lookups consume eight bytes at once. The
** tables are built on first use under pthread_once.
**
** Hardware path: the SSE4.2 crc32 instruction computes exactly this CRC
** (reflected, polynomial 0x82F63B78), eight bytes per instruction. It is
** compiled with a target attribute, so the rest of the program does not
** need -msse4.2 and still runs on CPUs without it. A single dependency
** chain of crc32 runs at about 8 bytes per 3 cycles; the three-stream
** variant with a combine step would be faster, and can replace this one
** behind the same interface if checksumming ever shows up in profiles.
*/
#include "util/crc32c.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define CRC32C_POLY 0x82F63B78u /* reflected Castagnoli polynomial */

static uint32_t g_aTable[8][256];           /* slicing-by-8 tables */
static pthread_once_t g_tableOnce = PTHREAD_ONCE_INIT;

static void crc32c_table_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        g_aTable[0][i] = c;
    }
    /* Table k = table k-1 followed by one zero byte. */
    for (int k = 1; k < 8; k++) {
        for (int i = 0; i < 256; i++) {
            uint32_t c = g_aTable[k - 1][i];
            g_aTable[k][i] = (c >> 8) ^ g_aTable[0][c & 0xff];
        }
    }
}

/* Eight bytes as a little-endian integer, whatever the host order (a
** single load on x86). */
static inline uint64_t load_le64(const unsigned char *q) {
    uint64_t w = 0;
    for (int i = 7; i >= 0; i--) w = (w << 8) | q[i];
    return w;
}

uint32_t crc32c_sw_update(uint32_t crc, const void *p, size_t n) {
    pthread_once(&g_tableOnce, crc32c_table_init);
    const unsigned char *q = p;
    uint32_t c = ~crc;
    while (n >= 8) {
        uint64_t w = load_le64(q) ^ c;
        c = g_aTable[7][w & 0xff] ^ g_aTable[6][(w >> 8) & 0xff] ^
            g_aTable[5][(w >> 16) & 0xff] ^ g_aTable[4][(w >> 24) & 0xff] ^
            g_aTable[3][(w >> 32) & 0xff] ^ g_aTable[2][(w >> 40) & 0xff] ^
            g_aTable[1][(w >> 48) & 0xff] ^ g_aTable[0][w >> 56];
        q += 8;
        n -= 8;
    }
    while (n--) c = g_aTable[0][(c ^ *q++) & 0xff] ^ (c >> 8);
    return ~c;
}

#if defined(__x86_64__)

int crc32c_hw_available(void) {
    /* Safe before constructors have run (the dispatcher may be reached
    ** from one). */
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

__attribute__((target("sse4.2"))) uint32_t crc32c_hw_update(uint32_t crc, const void *p,
                                                             size_t n) {
    const unsigned char *q = p;
    uint64_t c = ~crc;
    /* Byte steps up to an 8-byte boundary, so the word loads below are
    ** aligned (unaligned ones work too, but cost more across lines). */
    while (n > 0 && ((uintptr_t)q & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *q++);
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, q, 8);
        c = __builtin_ia32_crc32di(c, w);
        q += 8;
        n -= 8;
    }
    while (n--) c = __builtin_ia32_crc32qi((uint32_t)c, *q++);
    return ~(uint32_t)c;
}

#else /* no crc32 instruction on this architecture */

int crc32c_hw_available(void) {
    return 0;
}

uint32_t crc32c_hw_update(uint32_t crc, const void *p, size_t n) {
    return crc32c_sw_update(crc, p, n);
}

#endif

typedef uint32_t (*Crc32cFn)(uint32_t crc, const void *p, size_t n);

/* The implementation chosen by the first call. Threads racing on the first
** call all store the same pointer, so relaxed ordering is enough. */
static _Atomic(Crc32cFn) g_impl;

uint32_t crc32c_update(uint32_t crc, const void *p, size_t n) {
    Crc32cFn f = atomic_load_explicit(&g_impl, memory_order_relaxed);
    if (!f) {
        f = crc32c_hw_available() ? crc32c_hw_update : crc32c_sw_update;
        atomic_store_explicit(&g_impl, f, memory_order_relaxed);
    }
    return f(crc, p, n);
}
