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

/* A 32-bit hash of a short byte string (a term, a key) for in-memory hash
** tables: XXH3 (libxxhash), compiled inline as in hashmap.c; on 1 to 16
** bytes it is a couple of multiplications, no per-byte loop. The low and
** the high bits are both usable. Hash tables only: never store it. */
static inline uint32_t lp_hash_short(const void *p, size_t n) {
    return (uint32_t)XXH3_64bits(p, n);
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
