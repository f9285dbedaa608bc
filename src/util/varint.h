/*
** varint.h — LEB128 unsigned varints, zigzag for signed values, and delta
** codecs for sorted integer arrays.
**
** Format. A value is written 7 bits at a time, least significant group
** first; every byte but the last has its top bit (0x80) set:
**     0 -> 00      127 -> 7f      128 -> 80 01      300 -> ac 02
** A uint32 takes 1..VARINT_MAX32 (5) bytes, a uint64 1..VARINT_MAX64 (10).
** Signed values are zigzag-mapped first (0,-1,1,-2,2... -> 0,1,2,3,4...) so
** small magnitudes stay short.
**
** Decoding is strict, because it reads files and packets that may be
** damaged: a decoder is given the end of its buffer, never reads at or past
** it, and rejects with LP_CORRUPT
**   - truncation: the buffer ends before a byte without 0x80;
**   - overlong input: more bytes than the type allows, a value above the
**     type's range (a 5th byte > 0x0f for uint32, a 10th byte > 0x01 for
**     uint64), or a non-minimal encoding (a multi-byte varint whose last
**     byte is 0x00, e.g. "80 00" for 0).
** So each value has exactly one accepted encoding, the one the encoder
** writes. On error the read pointer is left where it was.
**
** Delta codec. A sorted (non-decreasing) array a[0..n) is written as the
** varints a[0], a[1]-a[0], ..., a[n-1]-a[n-2]. The count is not written:
** the caller stores n (in a block header, say) and passes it to the
** decoder, which checks that every varint is valid and that the running
** sum stays within the type.
**
** Thread safety: all functions are pure or touch only their arguments.
*/
#ifndef LP_UTIL_VARINT_H
#define LP_UTIL_VARINT_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/strbuf.h"

#define VARINT_MAX32 5
#define VARINT_MAX64 10

/* Writes v at p (room for VARINT_MAX32 / VARINT_MAX64 bytes needed) and
** returns the number of bytes written. Inline: index builders call them
** once per posting and position. */
static inline size_t varint_put_u64(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static inline size_t varint_put_u32(uint8_t *p, uint32_t v) {
    return varint_put_u64(p, v);
}

/* Bytes varint_put_u64 writes for v (1..10); also right for uint32 values. */
static inline size_t varint_len_u64(uint64_t v) {
    /* Significant bits (at least 1), seven per byte. */
    int nBit = 64 - __builtin_clzll(v | 1);
    return (size_t)(nBit + 6) / 7;
}

/* The general decoders behind varint_get_u32/u64; call those instead. */
int varint_get_u32_(const uint8_t **pp, const uint8_t *pEnd, uint32_t *pv);
int varint_get_u64_(const uint8_t **pp, const uint8_t *pEnd, uint64_t *pv);

/* Decodes one varint from [*pp, pEnd) into *pv and advances *pp past it.
** LP_OK, or LP_CORRUPT (truncated or overlong; *pp and *pv unchanged).
** The one-byte case, the most common one, is inlined. */
static inline int varint_get_u32(const uint8_t **pp, const uint8_t *pEnd, uint32_t *pv) {
    const uint8_t *p = *pp;
    if (p < pEnd && *p < 0x80) {
        *pv = *p;
        *pp = p + 1;
        return LP_OK;
    }
    return varint_get_u32_(pp, pEnd, pv);
}

static inline int varint_get_u64(const uint8_t **pp, const uint8_t *pEnd, uint64_t *pv) {
    const uint8_t *p = *pp;
    if (p < pEnd && *p < 0x80) {
        *pv = *p;
        *pp = p + 1;
        return LP_OK;
    }
    return varint_get_u64_(pp, pEnd, pv);
}

/* Zigzag: signed <-> unsigned, 0,-1,1,-2 <-> 0,1,2,3. Written with unsigned
** arithmetic only, so no shift of a negative value is involved. */
static inline uint32_t varint_zigzag32(int32_t v) {
    uint32_t u = (uint32_t)v;
    return (u << 1) ^ (0u - (u >> 31));
}
static inline int32_t varint_unzigzag32(uint32_t u) {
    return (int32_t)((u >> 1) ^ (0u - (u & 1)));
}
static inline uint64_t varint_zigzag64(int64_t v) {
    uint64_t u = (uint64_t)v;
    return (u << 1) ^ (0 - (u >> 63));
}
static inline int64_t varint_unzigzag64(uint64_t u) {
    return (int64_t)((u >> 1) ^ (0 - (u & 1)));
}

/* Appends the delta encoding of a[0..n) to sb (a may be NULL when n is 0).
** Errors: LP_BADINPUT when the array is not sorted (the message names the
** first index out of order; nothing appended), LP_NOMEM when sb ran out of
** memory (sb's oom flag is set). */
int varint_delta_encode_u32(StrBuf *sb, const uint32_t *a, size_t n, LpError *err);
int varint_delta_encode_u64(StrBuf *sb, const uint64_t *a, size_t n, LpError *err);

/* Decodes n values from [*pp, pEnd) into a[0..n) and advances *pp past them.
** Errors: LP_CORRUPT when a varint is truncated or overlong or the running
** sum overflows the type; the message names the value's index and its byte
** offset from the initial *pp. On error *pp is unchanged and a[] holds
** garbage. */
int varint_delta_decode_u32(const uint8_t **pp, const uint8_t *pEnd, uint32_t *a, size_t n,
                            LpError *err);

/* The delta decoder's fast path, inline for hot loops (positions): decodes
** values i.. of a[0..n) while their deltas take one or two valid bytes and
** the running sum *pSum (a[i-1], or 0) stays within uint32; advances *pp
** and *pSum past them and returns the index reached. A value it stops at
** (longer, malformed, truncated, overflowing) is left to the checked
** decoder. */
static inline size_t varint_delta_short_u32(const uint8_t **pp, const uint8_t *pEnd, uint32_t *a, size_t i,
                                            size_t n, uint64_t *pSum) {
    const uint8_t *p = *pp;
    uint64_t sum = *pSum;
    for (; i < n && p < pEnd; i++) {
        uint64_t d;
        if (*p < 0x80) {
            d = *p++;
        } else if (pEnd - p >= 2 && p[1] < 0x80 && p[1] != 0) {
            d = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
            p += 2;
        } else {
            break;
        }
        if (sum + d > UINT32_MAX) {
            p -= d < 0x80 ? 1 : 2;
            break;
        }
        sum += d;
        a[i] = (uint32_t)sum;
    }
    *pp = p;
    *pSum = sum;
    return i;
}
int varint_delta_decode_u64(const uint8_t **pp, const uint8_t *pEnd, uint64_t *a, size_t n,
                            LpError *err);

#endif /* LP_UTIL_VARINT_H */
