/* varint.c — see varint.h. */
#include "util/varint.h"

#include <inttypes.h>

/* Outcome of decoding one varint; the public functions fold the two
** failures into LP_CORRUPT, the delta decoder names them. */
enum { VI_OK = 0, VI_TRUNCATED, VI_OVERLONG };

/* Decodes one varint of at most nMax bytes whose last allowed byte (the
** nMax-th) may not exceed lastMax (< 0x80, so that byte always ends the
** loop). Sets *pv and *pLen on VI_OK. */
static int vi_decode(const uint8_t *p, const uint8_t *pEnd, size_t nMax, uint8_t lastMax,
                     uint64_t *pv, size_t *pLen) {
    size_t nAvail = (size_t)(pEnd - p);
    uint64_t v = 0;
    for (size_t i = 0;; i++) {
        if (i >= nAvail) return VI_TRUNCATED;
        uint8_t b = p[i];
        /* The final byte of the type's width carries its last few bits
        ** and no continuation flag. */
        if (i == nMax - 1 && b > lastMax) return VI_OVERLONG;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            /* A trailing zero group adds nothing: non-minimal. */
            if (b == 0 && i > 0) return VI_OVERLONG;
            *pv = v;
            *pLen = i + 1;
            return VI_OK;
        }
    }
}

int varint_get_u64_(const uint8_t **pp, const uint8_t *pEnd, uint64_t *pv) {
    size_t len;
    if (vi_decode(*pp, pEnd, VARINT_MAX64, 0x01, pv, &len) != VI_OK) return LP_CORRUPT;
    *pp += len;
    return LP_OK;
}

int varint_get_u32_(const uint8_t **pp, const uint8_t *pEnd, uint32_t *pv) {
    size_t len;
    uint64_t v;
    if (vi_decode(*pp, pEnd, VARINT_MAX32, 0x0f, &v, &len) != VI_OK) return LP_CORRUPT;
    *pv = (uint32_t)v;
    *pp += len;
    return LP_OK;
}

/* ---------------------------------------------------------- delta codec */

/* Element i of an array of uint32 (b64 == 0) or uint64 (b64 == 1). One
** implementation serves both widths; the branch is always predicted. */
static inline uint64_t elem_get(const void *a, int b64, size_t i) {
    return b64 ? ((const uint64_t *)a)[i] : ((const uint32_t *)a)[i];
}

/* Values encoded per strbuf_reserve call, bounding the over-reservation. */
#define DELTA_CHUNK 256

static int delta_encode(StrBuf *sb, const void *a, size_t n, int b64, LpError *err) {
    /* Check the order first so that nothing is appended on LP_BADINPUT. */
    for (size_t i = 1; i < n; i++) {
        uint64_t prev = elem_get(a, b64, i - 1), cur = elem_get(a, b64, i);
        if (cur < prev) {
            return lp_err_set(err, LP_BADINPUT,
                              "delta encode: array not sorted at index %zu (%" PRIu64
                              " after %" PRIu64 ")",
                              i, cur, prev);
        }
    }
    uint64_t prev = 0;
    for (size_t i = 0; i < n;) {
        size_t nChunk = n - i < DELTA_CHUNK ? n - i : DELTA_CHUNK;
        uint8_t *p = (uint8_t *)strbuf_reserve(sb, nChunk * VARINT_MAX64);
        if (!p) return lp_err_set(err, LP_NOMEM, "delta encode: out of memory");
        size_t nByte = 0;
        for (size_t k = 0; k < nChunk; k++, i++) {
            uint64_t cur = elem_get(a, b64, i);
            nByte += varint_put_u64(p + nByte, cur - prev);
            prev = cur;
        }
        strbuf_commit(sb, nByte);
    }
    return LP_OK;
}

int varint_delta_encode_u32(StrBuf *sb, const uint32_t *a, size_t n, LpError *err) {
    return delta_encode(sb, a, n, 0, err);
}

int varint_delta_encode_u64(StrBuf *sb, const uint64_t *a, size_t n, LpError *err) {
    return delta_encode(sb, a, n, 1, err);
}

static int delta_decode(const uint8_t **pp, const uint8_t *pEnd, void *a, size_t n, int b64,
                        LpError *err) {
    const uint8_t *p0 = *pp;
    const uint8_t *p = p0;
    uint64_t max = b64 ? UINT64_MAX : UINT32_MAX;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t d;
        size_t len;
        /* Most deltas (positions, gaps) fit a byte or two: those in a row
        ** go through the inline fast path (the same values and checks). */
        if (!b64 && (i = varint_delta_short_u32(&p, pEnd, (uint32_t *)a, i, n, &sum)) == n) break;
        int vi = b64 ? vi_decode(p, pEnd, VARINT_MAX64, 0x01, &d, &len)
                     : vi_decode(p, pEnd, VARINT_MAX32, 0x0f, &d, &len);
        if (vi != VI_OK) {
            return lp_err_setpos(err, LP_CORRUPT, p - p0,
                                 "delta decode: value %zu of %zu at byte %td is %s", i, n, p - p0,
                                 vi == VI_TRUNCATED ? "truncated" : "overlong");
        }
        if (d > max - sum) {
            return lp_err_setpos(err, LP_CORRUPT, p - p0,
                                 "delta decode: value %zu of %zu at byte %td overflows uint%d", i,
                                 n, p - p0, b64 ? 64 : 32);
        }
        sum += d;
        if (b64) {
            ((uint64_t *)a)[i] = sum;
        } else {
            ((uint32_t *)a)[i] = (uint32_t)sum;
        }
        p += len;
    }
    *pp = p;
    return LP_OK;
}

int varint_delta_decode_u32(const uint8_t **pp, const uint8_t *pEnd, uint32_t *a, size_t n,
                            LpError *err) {
    return delta_decode(pp, pEnd, a, n, 0, err);
}

int varint_delta_decode_u64(const uint8_t **pp, const uint8_t *pEnd, uint64_t *a, size_t n,
                            LpError *err) {
    return delta_decode(pp, pEnd, a, n, 1, err);
}
