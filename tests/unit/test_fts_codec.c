/*
** test_fts_codec.c — unit tests for src/fts/codec.c: packed blocks of every
** width against the bit-at-a-time reference, the vector gaps-to-documents
** prefix sum against the scalar loop, self-describing blocks and
** their truncation errors, the varint tail of a postings list, the varint
** skipper and bit-field records.
**
** Random data comes from a constant-seeded PRNG, so failures reproduce.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fts/codec.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/varint.h"

static uint64_t g_rng = 0x5eed0f00dULL;

static uint64_t rnd(void) {
    uint64_t x = (g_rng += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint32_t mask_of(int b) {
    return b == 32 ? UINT32_MAX : (UINT32_C(1) << b) - 1;
}

/* Fills a[0..128) with values of exactly width b, in one of several
** shapes: random, all at the maximum, alternating 0 / max, one maximum. */
static void fill(uint32_t *a, int b, int shape) {
    uint32_t m = mask_of(b);
    for (int i = 0; i < FTS_CODEC_N; i++) {
        switch (shape) {
        case 0:
            a[i] = (uint32_t)rnd() & m;
            break;
        case 1:
            a[i] = m;
            break;
        case 2:
            a[i] = (i & 1) ? m : 0;
            break;
        default:
            a[i] = i == FTS_CODEC_N - 1 ? m : (uint32_t)rnd() & (m >> 1);
            break;
        }
    }
    if (b > 0) a[rnd() % FTS_CODEC_N] = m; /* so the width is exactly b */
}

/* Every width and shape: the vector packer writes the reference's bytes,
** both unpackers give back the input, and the width is minimal. */
static void test_pack_all_widths(void **state) {
    (void)state;
    uint32_t a[FTS_CODEC_N], b1[FTS_CODEC_N], b2[FTS_CODEC_N];
    uint8_t p1[16 * 32 + 16], p2[16 * 32 + 16];
    for (int b = 0; b <= 32; b++) {
        for (int shape = 0; shape < 4; shape++) {
            for (int rep = 0; rep < (shape == 0 ? 20 : 1); rep++) {
                fill(a, b, shape);
                assert_int_equal(fts_codec_width(a), b);
                memset(p1, 0xAA, sizeof(p1));
                assert_int_equal(fts_codec_pack(a, b, p1), 16 * b);
                assert_int_equal(p1[16 * b], 0xAA); /* nothing written past the end */
                assert_int_equal(fts_codec_pack_ref(a, b, p2), 16 * b);
                assert_memory_equal(p1, p2, 16 * (size_t)b + 0);
                memset(b1, 0x55, sizeof(b1));
                fts_codec_unpack(p1, b, b1);
                fts_codec_unpack_ref(p1, b, b2);
                assert_memory_equal(a, b1, sizeof(a));
                assert_memory_equal(a, b2, sizeof(a));
            }
        }
    }
}

/* The documented layout on a hand-checkable case: width 1, value i =
** i % 3 == 0: lane l holds values 4s+l; word 0 of lane 0 has bit s set
** when (4s) % 3 == 0. */
static void test_pack_layout(void **state) {
    (void)state;
    uint32_t a[FTS_CODEC_N];
    uint8_t p[16];
    for (int i = 0; i < FTS_CODEC_N; i++)
        a[i] = (i % 3) == 0;
    fts_codec_pack(a, 1, p);
    uint32_t lane0;
    memcpy(&lane0, p, 4);
    uint32_t want = 0;
    for (int s = 0; s < 32; s++) {
        if ((4 * s) % 3 == 0) want |= UINT32_C(1) << s;
    }
    assert_int_equal(lane0, want);
}

/* The vector prefix sum against the scalar loop, wrap-around included. */
static void test_gaps_to_docs(void **state) {
    (void)state;
    uint32_t a[FTS_CODEC_N], b[FTS_CODEC_N];
    static const uint32_t aBase[] = {0, 1, 1000, UINT32_MAX - 200, UINT32_MAX};
    for (int rep = 0; rep < 200; rep++) {
        int w = (int)(rnd() % 33);
        for (int i = 0; i < FTS_CODEC_N; i++)
            a[i] = (uint32_t)rnd() & mask_of(w);
        memcpy(b, a, sizeof(a));
        uint32_t base = rep < 5 ? aBase[rep] : (uint32_t)rnd();
        uint32_t last = fts_codec_gaps_to_docs(a, base);
        assert_int_equal(fts_codec_gaps_to_docs_ref(b, base), last);
        assert_memory_equal(a, b, sizeof(a));
        assert_int_equal(a[FTS_CODEC_N - 1], last);
    }
    /* Hand-checked: gaps 0 from base 10 give 10, 11, 12, ... */
    memset(a, 0, sizeof(a));
    assert_int_equal(fts_codec_gaps_to_docs(a, 10), 10 + FTS_CODEC_N - 1);
    assert_int_equal(a[0], 10);
    assert_int_equal(a[5], 15);
}

static void test_block_roundtrip_and_truncation(void **state) {
    (void)state;
    uint32_t a[FTS_CODEC_N], out[FTS_CODEC_N];
    uint8_t buf[FTS_CODEC_MAX_BLOCK];
    for (int b = 0; b <= 32; b++) {
        fill(a, b, 0);
        size_t n = fts_codec_put_block(a, buf);
        assert_int_equal(n, 1 + 16 * (size_t)b);
        assert_int_equal(buf[0], b);
        const uint8_t *p = buf;
        assert_int_equal(fts_codec_get_block(&p, buf + n, out), LP_OK);
        assert_ptr_equal(p, buf + n);
        assert_memory_equal(a, out, sizeof(a));
        /* Every shorter input is an error that leaves the pointer. */
        for (size_t k = 0; k < n; k++) {
            p = buf;
            assert_int_equal(fts_codec_get_block(&p, buf + k, out), LP_CORRUPT);
            assert_ptr_equal(p, buf);
        }
    }
    /* Widths above 32 are rejected whatever follows. */
    memset(buf, 0, sizeof(buf));
    for (int b = 33; b < 256; b++) {
        buf[0] = (uint8_t)b;
        const uint8_t *p = buf;
        assert_int_equal(fts_codec_get_block(&p, buf + sizeof(buf), out), LP_CORRUPT);
    }
}

/* Random postings lists of 0..127 entries, with tiny and huge gaps and tf. */
static int make_tail(uint32_t base, uint32_t *aDoc, uint32_t *aTf, int n) {
    uint64_t d = base;
    for (int i = 0; i < n; i++) {
        uint64_t gap;
        switch (rnd() % 4) {
        case 0:
            gap = 0;
            break;
        case 1:
            gap = rnd() % 100;
            break;
        case 2:
            gap = rnd() % 100000;
            break;
        default:
            gap = rnd() % 0x40000000u;
            break;
        }
        if (d + gap > UINT32_MAX - 2) return i;
        aDoc[i] = (uint32_t)(d + gap);
        d = (uint64_t)aDoc[i] + 1;
        switch (rnd() % 4) {
        case 0:
        case 1:
            aTf[i] = 1;
            break;
        case 2:
            aTf[i] = 2 + (uint32_t)(rnd() % 50);
            break;
        default:
            aTf[i] = (uint32_t)(rnd() | 1);
            break;
        }
    }
    return n;
}

static void test_tail_roundtrip(void **state) {
    (void)state;
    uint32_t aDoc[FTS_CODEC_N], aTf[FTS_CODEC_N], bDoc[FTS_CODEC_N], bTf[FTS_CODEC_N];
    for (int rep = 0; rep < 300; rep++) {
        uint32_t base = rep % 3 == 0 ? 0 : (uint32_t)(rnd() % 1000000);
        int n = make_tail(base, aDoc, aTf, (int)(rnd() % FTS_CODEC_N));
        StrBuf sb = {0};
        assert_int_equal(fts_codec_tail_put(&sb, base, aDoc, aTf, n), LP_OK);
        const uint8_t *p = (const uint8_t *)sb.z, *pEnd = p + sb.n;
        assert_int_equal(fts_codec_tail_get(&p, pEnd, base, UINT32_MAX - 1, bDoc, bTf, n), LP_OK);
        assert_ptr_equal(p, pEnd);
        assert_memory_equal(aDoc, bDoc, (size_t)n * 4);
        assert_memory_equal(aTf, bTf, (size_t)n * 4);
        /* Truncated anywhere: an error, pointer unchanged. */
        for (size_t k = 0; n > 0 && k < sb.n; k += 1 + sb.n / 40) {
            const uint8_t *q = (const uint8_t *)sb.z;
            assert_int_equal(fts_codec_tail_get(&q, q + k, base, UINT32_MAX - 1, bDoc, bTf, n),
                             LP_CORRUPT);
            assert_ptr_equal(q, (const uint8_t *)sb.z);
        }
        /* A limit at the last document rejects it. */
        if (n > 0) {
            const uint8_t *q = (const uint8_t *)sb.z;
            assert_int_equal(fts_codec_tail_get(&q, pEnd, base, aDoc[n - 1], bDoc, bTf, n),
                             LP_CORRUPT);
            q = (const uint8_t *)sb.z;
            assert_int_equal(fts_codec_tail_get(&q, pEnd, base, aDoc[n - 1] + 1, bDoc, bTf, n),
                             LP_OK);
        }
        strbuf_free(&sb);
    }
}

/* The documented bytes, and the values a decoder must refuse. */
static void test_tail_format_and_errors(void **state) {
    (void)state;
    uint32_t aDoc[3] = {5, 6, 300}, aTf[3] = {1, 2, 7}, bDoc[3], bTf[3];
    StrBuf sb = {0};
    assert_int_equal(fts_codec_tail_put(&sb, 0, aDoc, aTf, 3), LP_OK);
    /* 5*2+1 = 0b; gap 0, tf 2: 00 00; gap 293: 293*2 = 586 = ca 04, tf-2 = 5 */
    static const uint8_t want[] = {0x0b, 0x00, 0x00, 0xca, 0x04, 0x05};
    assert_int_equal(sb.n, sizeof(want));
    assert_memory_equal(sb.z, want, sizeof(want));
    strbuf_free(&sb);

    /* tf - 2 = UINT32_MAX - 1 would make tf overflow. */
    uint8_t bad[16], *q = bad;
    q += varint_put_u64(q, 0); /* gap 0, tf != 1 */
    q += varint_put_u32(q, UINT32_MAX - 1);
    const uint8_t *p = bad;
    assert_int_equal(fts_codec_tail_get(&p, q, 0, 10, bDoc, bTf, 1), LP_CORRUPT);
    /* The largest legal tf. */
    q = bad;
    q += varint_put_u64(q, 0);
    q += varint_put_u32(q, UINT32_MAX - 2);
    p = bad;
    assert_int_equal(fts_codec_tail_get(&p, q, 0, 10, bDoc, bTf, 1), LP_OK);
    assert_int_equal(bTf[0], UINT32_MAX);
    /* A gap that leaves the document range, even without wrap-around. */
    q = bad;
    q += varint_put_u64(q, (uint64_t)UINT32_MAX * 2 + 1);
    p = bad;
    assert_int_equal(fts_codec_tail_get(&p, q, 5, UINT32_MAX - 1, bDoc, bTf, 1), LP_CORRUPT);
    /* An overlong varint. */
    static const uint8_t over[] = {0x81, 0x00};
    p = over;
    assert_int_equal(fts_codec_tail_get(&p, over + 2, 0, 10, bDoc, bTf, 1), LP_CORRUPT);
    /* A base already at the limit. */
    static const uint8_t one[] = {0x01};
    p = one;
    assert_int_equal(fts_codec_tail_get(&p, one + 1, 10, 10, bDoc, bTf, 1), LP_CORRUPT);
}

/* fts_codec_varints_exact's answer, a byte at a time. */
static int varints_exact_ref(const uint8_t *p, size_t n, uint64_t count) {
    uint64_t nEnd = 0;
    int nRun = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] >= 0x80) {
            if (++nRun >= 5) return 0;
        } else {
            nEnd++;
            nRun = 0;
        }
    }
    return nRun == 0 && nEnd == count;
}

/* Random streams of bytes mostly below 0x80, or mostly above (long runs
** of continuation bytes, across the sixteen-byte chunks), each length to
** 100, against the reference, with the count right and one off. */
static void test_varints_exact(void **state) {
    (void)state;
    uint8_t buf[100];
    int nYes = 0, nNo = 0;
    for (int rep = 0; rep < 20000; rep++) {
        size_t n = (size_t)(rnd() % 101);
        unsigned pct = (unsigned)(rnd() % 100);
        uint64_t nEnd = 0;
        for (size_t i = 0; i < n; i++) {
            buf[i] = (uint8_t)(rnd() % 100 < pct ? 0x80 | (rnd() & 0x7f) : rnd() & 0x7f);
            nEnd += buf[i] < 0x80;
        }
        for (uint64_t c = nEnd ? nEnd - 1 : 0; c <= nEnd + 1; c++) {
            int want = varints_exact_ref(buf, n, c);
            assert_int_equal(fts_codec_varints_exact(buf, n, c), want);
            nYes += want;
            nNo += !want;
        }
    }
    assert_true(nYes > 1000 && nNo > 1000);
    /* four continuation bytes then the last: five bytes, allowed */
    const uint8_t a5[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x81, 0x82, 0x83, 0x84, 0x05};
    assert_int_equal(fts_codec_varints_exact(a5, sizeof(a5), 13), 1);
    const uint8_t a6[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x80, 0x81, 0x82, 0x83, 0x84, 0x05};
    assert_int_equal(fts_codec_varints_exact(a6, sizeof(a6), 12), 0);
}

static void test_skip_varints(void **state) {
    (void)state;
    for (int rep = 0; rep < 200; rep++) {
        int n = (int)(rnd() % 300);
        uint8_t buf[300 * 5];
        size_t aEnd[301];
        size_t len = 0;
        aEnd[0] = 0;
        for (int i = 0; i < n; i++) {
            uint32_t v = (uint32_t)(rnd() >> (rnd() % 64));
            len += varint_put_u32(buf + len, v);
            aEnd[i + 1] = len;
        }
        for (int k = 0; k <= n; k++) {
            const uint8_t *p = buf;
            assert_int_equal(fts_codec_skip_varints(&p, buf + len, (uint64_t)k), LP_OK);
            assert_int_equal((size_t)(p - buf), aEnd[k]);
        }
        /* One more than there is, or a cut in the middle of the last. */
        const uint8_t *p = buf;
        assert_int_equal(fts_codec_skip_varints(&p, buf + len, (uint64_t)n + 1), LP_CORRUPT);
        assert_ptr_equal(p, buf);
        if (n > 0 && aEnd[n] - aEnd[n - 1] > 1) {
            p = buf;
            assert_int_equal(fts_codec_skip_varints(&p, buf + len - 1, (uint64_t)n), LP_CORRUPT);
        }
    }
}

static void test_bit_fields(void **state) {
    (void)state;
    enum { N = 500 };
    uint8_t buf[N * 4 + 16];
    int aW[N];
    uint32_t aV[N];
    memset(buf, 0, sizeof(buf));
    uint64_t bit = 0;
    for (int i = 0; i < N; i++) {
        aW[i] = (int)(rnd() % 33);
        aV[i] = (uint32_t)rnd() & mask_of(aW[i]);
        fts_codec_bits_put(buf, bit, aW[i], aV[i]);
        bit += (uint64_t)aW[i];
    }
    bit = 0;
    for (int i = 0; i < N; i++) {
        assert_int_equal(fts_codec_bits_get(buf, bit, aW[i]), aV[i]);
        bit += (uint64_t)aW[i];
    }
    assert_int_equal(fts_codec_bits_of(0), 0);
    assert_int_equal(fts_codec_bits_of(1), 1);
    assert_int_equal(fts_codec_bits_of(255), 8);
    assert_int_equal(fts_codec_bits_of(256), 9);
    assert_int_equal(fts_codec_bits_of(UINT32_MAX), 32);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_all_widths),
        cmocka_unit_test(test_pack_layout),
        cmocka_unit_test(test_gaps_to_docs),
        cmocka_unit_test(test_block_roundtrip_and_truncation),
        cmocka_unit_test(test_tail_roundtrip),
        cmocka_unit_test(test_tail_format_and_errors),
        cmocka_unit_test(test_skip_varints),
        cmocka_unit_test(test_varints_exact),
        cmocka_unit_test(test_bit_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
