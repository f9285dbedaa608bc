/*
** bytes.h — equality of short byte strings, inline.
**
** Contract. lp_bytes_eq(a, b, n) is memcmp(a, b, n) == 0 for n bytes that
** both pointers can read (n may be 0, then neither is read). It exists
** because the hot paths of indexing compare keys of a few bytes (terms,
** stemmer memo entries) millions of times, where a call into the C
** library's general memcmp costs more than the comparison: eight bytes at
** a time through memcpy (which compilers turn into one unaligned load),
** then the tail byte by byte.
**
** lp_hash_short hashes such strings for in-memory tables.
**
** get_u32le/put_u32le/get_u64le/put_u64le read and write little-endian
** integers at any alignment: the byte order of every on-disk format.
*/
#ifndef LP_UTIL_BYTES_H
#define LP_UTIL_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

static inline int lp_bytes_eq(const void *pa, const void *pb, size_t n) {
    const unsigned char *a = pa, *b = pb;
    while (n >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return 0;
        a += 8;
        b += 8;
        n -= 8;
    }
    while (n) {
        if (*a++ != *b++) return 0;
        n--;
    }
    return 1;
}

/* 64 x 64 -> 128-bit multiplication folded to 64 bits (wyhash's mix). */
static inline uint64_t lp_mum(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* A 32-bit hash of a short byte string (a term, a key) for in-memory hash
** tables; indexing computes two per word. Up to 16 bytes: two loads that
** cover the string (overlapping, never past its end) and two folded
** multiplications, as wyhash does, all inline; longer strings: XXH3
** (libxxhash), compiled inline as in hashmap.c. The low and the high bits
** are both usable. Hash tables only: never store it (it may change). */
static inline uint32_t lp_hash_short(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t lo, hi;
    if (n > 16) return (uint32_t)XXH3_64bits(p, n);
    if (n >= 8) {
        memcpy(&lo, b, 8);
        memcpy(&hi, b + n - 8, 8);
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, b, 4);
        memcpy(&y, b + n - 4, 4);
        lo = x;
        hi = y;
    } else {
        lo = n ? (uint64_t)b[0] << 16 | (uint64_t)b[n >> 1] << 8 | b[n - 1] : 0;
        hi = 0;
    }
    uint64_t h = lp_mum(lo ^ 0xa0761d6478bd642full, hi ^ 0xe7037ed1a0b428dbull);
    h = lp_mum(h ^ 0x8ebc6af09c88c6e3ull, (uint64_t)n ^ 0x589965cc75374cc3ull);
    return (uint32_t)(h ^ (h >> 32));
}

static inline uint32_t get_u32le(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get_u64le(const uint8_t *p) {
    return (uint64_t)get_u32le(p) | (uint64_t)get_u32le(p + 4) << 32;
}

static inline void put_u32le(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void put_u64le(uint8_t *p, uint64_t v) {
    put_u32le(p, (uint32_t)v);
    put_u32le(p + 4, (uint32_t)(v >> 32));
}

#endif /* LP_UTIL_BYTES_H */
