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
*/
#ifndef LP_UTIL_BYTES_H
#define LP_UTIL_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

#endif /* LP_UTIL_BYTES_H */
