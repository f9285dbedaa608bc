/* codec.c — see codec.h. */
#include "fts/codec.h"

#include <assert.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "util/error.h"
#include "util/varint.h"

/* Four 32-bit lanes. GCC and Clang lower the operators on this type to
** SSE2 (x86-64) or NEON (AArch64); loads and stores go through memcpy, so
** any byte alignment is fine (the compilers emit unaligned moves). */
typedef uint32_t v4u __attribute__((vector_size(16)));

static inline v4u v4_load(const void *p) {
    v4u v;
    memcpy(&v, p, 16);
    return v;
}

static inline void v4_store(void *p, v4u v) {
    memcpy(p, &v, 16);
}

/* ------------------------------------------------------------- packing */

/* The unpacker for one width. Called with a constant b from the dispatch
** switch below, so that after full unrolling every shift count and word
** index is a constant and each value costs a shift, an or and an and. */
static inline __attribute__((always_inline)) void unpack_w(const uint8_t *in, uint32_t *out,
                                                           const int b) {
    const v4u mask = (v4u){0, 0, 0, 0} + (b == 32 ? UINT32_MAX : (UINT32_C(1) << b) - 1);
#pragma GCC unroll 32
    for (int s = 0; s < 32; s++) {
        const int bit = s * b;
        const int w = bit >> 5, sh = bit & 31;
        v4u v = v4_load(in + 16 * w) >> sh;
        /* The value straddles two words: its high bits start the next one
        ** (sh >= 1 here, so the shift count stays below 32). */
        if (sh + b > 32) v |= v4_load(in + 16 * (w + 1)) << (32 - sh);
        v4_store(out + 4 * s, v & mask);
    }
}

static inline __attribute__((always_inline)) void pack_w(const uint32_t *in, uint8_t *out,
                                                         const int b) {
    const v4u mask = (v4u){0, 0, 0, 0} + (b == 32 ? UINT32_MAX : (UINT32_C(1) << b) - 1);
    v4u acc = {0, 0, 0, 0};
#pragma GCC unroll 32
    for (int s = 0; s < 32; s++) {
        const int bit = s * b;
        const int w = bit >> 5, sh = bit & 31;
        v4u v = v4_load(in + 4 * s) & mask;
        acc |= v << sh;
        if (sh + b >= 32) {
            /* Word w is full: store it and start the next one with the
            ** bits of v that did not fit. 32*b bits in all, so the last
            ** value always completes the last word. */
            v4_store(out + 16 * w, acc);
            acc = (sh + b > 32) ? v >> (32 - sh) : (v4u){0, 0, 0, 0};
        }
    }
}

#define FTS_WIDTHS(X)                                                                              \
    X(1)                                                                                           \
    X(2)                                                                                           \
    X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19) \
        X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)

/* The dispatch: one specialised, fully unrolled packer per width, so the
** generic loop above never runs with a variable width. */
size_t fts_codec_pack(const uint32_t *a, int b, uint8_t *out) {
    assert(b >= 0 && b <= 32);
    switch (b) {
    case 0:
        break;
#define X(n)                                                                                       \
    case n:                                                                                        \
        pack_w(a, out, n);                                                                         \
        break;
        FTS_WIDTHS(X)
#undef X
    default:
        memcpy(out, a, 16 * 32); /* width 32: the lanes are the values */
        break;
    }
    return (size_t)16 * (size_t)b;
}

void fts_codec_unpack(const uint8_t *in, int b, uint32_t *a) {
    assert(b >= 0 && b <= 32);
    switch (b) {
    case 0:
        memset(a, 0, FTS_CODEC_N * sizeof(uint32_t));
        break;
#define X(n)                                                                                       \
    case n:                                                                                        \
        unpack_w(in, a, n);                                                                        \
        break;
        FTS_WIDTHS(X)
#undef X
    default:
        memcpy(a, in, 16 * 32);
        break;
    }
}

/* Byte and bit of bit k of value i's field in the vertical layout. */
static size_t ref_bit(int i, int b, int k, int *pShift) {
    int lane = i & 3, slot = i >> 2;
    int bit = slot * b + k;
    int word = bit >> 5, inWord = bit & 31;
    *pShift = inWord & 7;
    return (size_t)(16 * word + 4 * lane + (inWord >> 3));
}

/* The references follow the layout's definition bit by bit, sharing
** nothing with the vector code but ref_bit(). */
size_t fts_codec_pack_ref(const uint32_t *a, int b, uint8_t *out) {
    memset(out, 0, (size_t)16 * (size_t)b);
    for (int i = 0; i < FTS_CODEC_N; i++) {
        for (int k = 0; k < b; k++) {
            int sh;
            size_t at = ref_bit(i, b, k, &sh);
            out[at] |= (uint8_t)(((a[i] >> k) & 1) << sh);
        }
    }
    return (size_t)16 * (size_t)b;
}

void fts_codec_unpack_ref(const uint8_t *in, int b, uint32_t *a) {
    for (int i = 0; i < FTS_CODEC_N; i++) {
        uint32_t v = 0;
        for (int k = 0; k < b; k++) {
            int sh;
            size_t at = ref_bit(i, b, k, &sh);
            v |= (uint32_t)((in[at] >> sh) & 1) << k;
        }
        a[i] = v;
    }
}

/* The scalar version is a chain of 128 dependent adds; here the chain is
** 32 steps (one carry broadcast per four values), and the lane shifts are
** single byte-shift instructions (pslldq on x86-64). */
uint32_t fts_codec_gaps_to_docs(uint32_t *a, uint32_t base) {
    const v4u zero = {0, 0, 0, 0}, one = zero + 1;
    v4u carry = zero + (base - 1);
    for (int s = 0; s < FTS_CODEC_N / 4; s++) {
        /* Inclusive prefix sum of four increments: shift by one lane and
        ** add, then by two lanes and add; then add the previous total. */
        v4u x = v4_load(a + 4 * s) + one;
        x += __builtin_shufflevector(x, zero, 4, 0, 1, 2);
        x += __builtin_shufflevector(x, zero, 4, 4, 0, 1);
        x += carry;
        v4_store(a + 4 * s, x);
        carry = __builtin_shufflevector(x, x, 3, 3, 3, 3);
    }
    return a[FTS_CODEC_N - 1];
}

uint32_t fts_codec_gaps_to_docs_ref(uint32_t *a, uint32_t base) {
    uint32_t d = base - 1;
    for (int i = 0; i < FTS_CODEC_N; i++)
        a[i] = d = d + 1 + a[i];
    return d;
}

/* OR of all values: its highest bit is the width (vectorises). */
int fts_codec_width(const uint32_t *a) {
    uint32_t m = 0;
    for (int i = 0; i < FTS_CODEC_N; i++)
        m |= a[i];
    return fts_codec_bits_of(m);
}

size_t fts_codec_put_block(const uint32_t *a, uint8_t *out) {
    int b = fts_codec_width(a);
    out[0] = (uint8_t)b;
    return 1 + fts_codec_pack(a, b, out + 1);
}

/* Checks the width and the length before unpacking, which reads exactly
** 16*b bytes. */
int fts_codec_get_block(const uint8_t **pp, const uint8_t *pEnd, uint32_t *a) {
    const uint8_t *p = *pp;
    if (p >= pEnd || *p > 32) return LP_CORRUPT;
    int b = *p++;
    if ((size_t)(pEnd - p) < (size_t)16 * (size_t)b) return LP_CORRUPT;
    fts_codec_unpack(p, b, a);
    *pp = p + 16 * b;
    return LP_OK;
}

/* --------------------------------------------------------------- tails */

/* One reservation for the worst case of the n postings, then plain
** stores: no per-posting capacity check. */
int fts_codec_tail_put(StrBuf *sb, uint32_t base, const uint32_t *aDoc, const uint32_t *aTf,
                       int n) {
    uint8_t *p = (uint8_t *)strbuf_reserve(sb, (size_t)n * FTS_CODEC_MAX_TAIL_POSTING);
    if (!p) return LP_NOMEM;
    size_t nByte = 0;
    for (int i = 0; i < n; i++) {
        assert(aDoc[i] >= base && aTf[i] >= 1);
        /* The gap can use all 32 bits, so gap*2+flag needs a uint64. */
        uint64_t v = (uint64_t)(aDoc[i] - base) * 2 + (aTf[i] == 1);
        nByte += varint_put_u64(p + nByte, v);
        if (aTf[i] != 1) nByte += varint_put_u32(p + nByte, aTf[i] - 2);
        base = aDoc[i] + 1;
    }
    strbuf_commit(sb, nByte);
    return LP_OK;
}

/* Every document is checked against docLimit as it is decoded, so a
** damaged gap cannot produce an ordinal the caller would use as an index
** (doc lengths, tombstones); *pp moves only on success. */
int fts_codec_tail_get(const uint8_t **pp, const uint8_t *pEnd, uint32_t base, uint32_t docLimit,
                       uint32_t *aDoc, uint32_t *aTf, int n) {
    const uint8_t *p = *pp;
    for (int i = 0; i < n; i++) {
        uint64_t v;
        /* Gaps of 64 documents or more take two bytes: inline, as one
        ** byte is (a zero second byte would be overlong: the general
        ** decoder refuses it). */
        if (pEnd - p >= 2 && p[0] >= 0x80 && p[1] < 0x80 && p[1] != 0) {
            v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
            p += 2;
        } else if (varint_get_u64(&p, pEnd, &v) != LP_OK) {
            return LP_CORRUPT;
        }
        /* base <= docLimit always holds here (it starts at the caller's
        ** value, checked, and is then a valid doc + 1). */
        if (base >= docLimit || (v >> 1) >= (uint64_t)(docLimit - base)) return LP_CORRUPT;
        aDoc[i] = base + (uint32_t)(v >> 1);
        if (v & 1) {
            aTf[i] = 1;
        } else {
            uint32_t t;
            if (varint_get_u32(&p, pEnd, &t) != LP_OK || t > UINT32_MAX - 2) return LP_CORRUPT;
            aTf[i] = t + 2;
        }
        base = aDoc[i] + 1;
    }
    *pp = p;
    return LP_OK;
}

/* A function built twice, for CPUs with and without POPCNT (x86-64's
** baseline lacks it), the right one picked when the program loads (GCC's
** target_clones; clang builds, the fuzzers', keep the portable one, and
** so does a ThreadSanitizer build: the resolver runs while the dynamic
** loader relocates the program, before TSan's runtime is set up, and its
** instrumented code crashes there). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define POPCNT_CLONES
#endif

/* Sixteen bytes at a time: the bytes that end a varint are counted, and
** the continuation bytes (bit 7 set) may not run five long, across chunk
** boundaries too (the last four bits of each chunk's mask are carried).
** POPCNT_CLONES, as fts_codec_skip_varints. */
POPCNT_CLONES
int fts_codec_varints_exact(const uint8_t *p, size_t n, uint64_t count) {
    _Static_assert(VARINT_MAX32 == 5, "the run test below is for five bytes");
    if (n == 0) return count == 0;
    if (p[n - 1] >= 0x80) return 0; /* the last varint unfinished */
    uint64_t nEnd = 0;
    uint32_t carry = 0; /* continuation bits of the 4 bytes before */
    size_t i = 0;
#ifdef __SSE2__
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        uint32_t m = (uint32_t)_mm_movemask_epi8(v);
        nEnd += 16 - (unsigned)__builtin_popcount(m);
        uint32_t x = m << 4 | carry;
        if (x & x >> 1 & x >> 2 & x >> 3 & x >> 4) return 0;
        carry = m >> 12;
    }
#endif
    for (int nRun = (carry & 8) ? (carry & 4) ? (carry & 2) ? (carry & 1) ? 4 : 3 : 2 : 1 : 0; i < n; i++) {
        if (p[i] >= 0x80) {
            if (++nRun >= VARINT_MAX32) return 0;
        } else {
            nEnd++;
            nRun = 0;
        }
    }
    return nEnd == count;
}

POPCNT_CLONES
int fts_codec_skip_varints(const uint8_t **pp, const uint8_t *pEnd, uint64_t n) {
    const uint8_t *p = *pp;
    if (n == 0) return LP_OK;
#ifdef __SSE2__
    /* Sixteen bytes at a time (phrase queries skip thousands of position
    ** varints per query): one bit per byte that ends a varint, counted;
    ** the chunk that holds the n-th end finishes the skip. */
    while (pEnd - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned ends = ~(unsigned)_mm_movemask_epi8(v) & 0xFFFFu;
        unsigned c = (unsigned)__builtin_popcount(ends);
        if (c >= n) {
            while (--n) ends &= ends - 1;
            *pp = p + __builtin_ctz(ends) + 1;
            return LP_OK;
        }
        n -= c;
        p += 16;
    }
#endif
    /* Eight bytes at a time while all of them belong to the n varints:
    ** each byte below 0x80 ends one. */
    while (n >= 8 && pEnd - p >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        /* Count the bytes below 0x80: their high bits, moved to the low
        ** bit of each byte, summed by one multiplication into the top
        ** byte (no popcount instruction needed on baseline x86-64). */
        uint64_t nEnd = (((~x & UINT64_C(0x8080808080808080)) >> 7) * UINT64_C(0x0101010101010101)) >> 56;
        if (nEnd >= n) break;
        n -= nEnd;
        p += 8;
    }
    while (n > 0) {
        if (p >= pEnd) return LP_CORRUPT;
        if (*p++ < 0x80) n--;
    }
    *pp = p;
    return LP_OK;
}
