/*
** codec.h — integer codecs of the sealed full-text segment format: blocks
** of 128 bit-packed uint32 values, the varint tail of a postings list,
** bit-field records, and a varint skipper for position lists.
**
** Packed blocks. FTS_CODEC_N (128, = FTS_BLOCK) values, each below 2^b for
** a width b in 0..32, take 16*b bytes. The layout is the "vertical" one of
** Lemire & Boytsov's SIMD-BP128: value i goes to lane i%4 of four 32-bit
** lanes, and each lane packs its 32 values LSB-first into b consecutive
** 32-bit little-endian words, the four lanes' words interleaved:
**     byte 16*w + 4*l .. +3   word w of lane l
**     value 4*s + l           bits [s*b, s*b+b) of lane l's word stream
** so one 128-bit vector shift+mask yields four values at once. Width 0
** takes no bytes (all values 0). fts_codec_pack/unpack use GCC/Clang
** vector extensions (SSE2 on x86-64, NEON on ARM, with one code path);
** fts_codec_pack_ref/unpack_ref are bit-at-a-time references for the tests.
** A "block" (fts_codec_put_block / get_block) is one width byte followed by
** the 16*b packed bytes.
**
** Tails. A postings list's last n < 128 postings are varints (util/varint.h
** LEB128): for each posting, with base = 0 for the list's first document
** and previous document + 1 afterwards,
**     varint (doc - base) * 2 + (tf == 1)
**     varint tf - 2                          only when tf != 1
** so the common posting with tf 1 and a small gap takes one byte.
**
** Bit-field records. fts_codec_bits_get reads a w-bit (0..32) field at any
** bit position of an LSB-first bit string with one unaligned 8-byte load:
** the caller guarantees that 8 bytes are readable from the field's first
** byte (the segment format pads the section that holds such records).
**
** Errors. Decoders never read at or past the pEnd they are given and
** return LP_CORRUPT (with *pp unchanged) on truncation, an overlong
** varint, a width above 32, or a value that overflows; they fill no
** LpError: the caller knows the file and offset and writes the message.
** Encoders trust their input (the segment writer checks it) and assert.
**
** Thread safety: all functions are pure.
*/
#ifndef LP_FTS_CODEC_H
#define LP_FTS_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/strbuf.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the segment codecs assume a little-endian host"
#endif

#define FTS_CODEC_N 128
/* Largest encoded block: width byte + 32 bits * 128 values. */
#define FTS_CODEC_MAX_BLOCK (1 + 16 * 32)
/* Largest encoded tail posting: two 5-byte varints. */
#define FTS_CODEC_MAX_TAIL_POSTING 10

/* Bits needed by the largest of a[0..128): 0 when all are 0, else 1..32. */
int fts_codec_width(const uint32_t *a);

/* Packs a[0..128) (each < 2^b) into the 16*b bytes at out; returns 16*b. */
size_t fts_codec_pack(const uint32_t *a, int b, uint8_t *out);
/* Unpacks the 16*b bytes at in into a[0..128). b must be 0..32. */
void fts_codec_unpack(const uint8_t *in, int b, uint32_t *a);

/* Bit-at-a-time versions with identical results, for the tests. */
size_t fts_codec_pack_ref(const uint32_t *a, int b, uint8_t *out);
void fts_codec_unpack_ref(const uint8_t *in, int b, uint32_t *a);

/* Turns 128 document gaps into documents in place: a[i] = a[i-1] + 1 +
** gap_i, with a[-1] = base - 1 (so a[0] = base + gap_0); arithmetic is
** modulo 2^32 (the caller detects wrap-around, see segreader.c). Returns
** a[127]. Vectorised (a 4-lane prefix sum per step); the _ref version is
** the scalar loop, for the tests. */
uint32_t fts_codec_gaps_to_docs(uint32_t *a, uint32_t base);
uint32_t fts_codec_gaps_to_docs_ref(uint32_t *a, uint32_t base);

/* Writes the width byte and the packed a[0..128) at out (room for
** FTS_CODEC_MAX_BLOCK bytes) with the smallest width; returns the bytes
** written. */
size_t fts_codec_put_block(const uint32_t *a, uint8_t *out);
/* Reads one block from [*pp, pEnd) into a[0..128) and advances *pp.
** LP_OK, or LP_CORRUPT (width > 32 or fewer bytes than it needs). */
int fts_codec_get_block(const uint8_t **pp, const uint8_t *pEnd, uint32_t *a);

/* Appends the tail encoding of n postings (aDoc ascending, every doc >=
** base, every aTf >= 1) to sb. LP_OK, or LP_NOMEM (sb's oom flag set). */
int fts_codec_tail_put(StrBuf *sb, uint32_t base, const uint32_t *aDoc, const uint32_t *aTf, int n);
/* Decodes n tail postings from [*pp, pEnd) into aDoc/aTf and advances *pp.
** LP_OK, or LP_CORRUPT: truncated or overlong varint, a document at or
** above docLimit, or a tf that does not fit a uint32. */
int fts_codec_tail_get(const uint8_t **pp, const uint8_t *pEnd, uint32_t base, uint32_t docLimit,
                       uint32_t *aDoc, uint32_t *aTf, int n);

/* Advances *pp past n varints in [*pp, pEnd) without decoding them.
** LP_OK, or LP_CORRUPT when fewer than n varints end before pEnd. Does not
** check for overlong encodings (the decoder of the values does). */
int fts_codec_skip_varints(const uint8_t **pp, const uint8_t *pEnd, uint64_t n);

/* 1 when p[0..n) is exactly count varints, none longer than VARINT_MAX32
** bytes (a uint32's): what a segment's positions must be. Else 0. */
int fts_codec_varints_exact(const uint8_t *p, size_t n, uint64_t count);

/* The w-bit field (w 0..32) at bit position bit of the LSB-first bit
** string at p. Reads the 8 bytes at p + bit/8. */
static inline uint32_t fts_codec_bits_get(const uint8_t *p, uint64_t bit, int w) {
    uint64_t x;
    memcpy(&x, p + (bit >> 3), 8);
    x >>= (bit & 7);
    return (uint32_t)(x & ((UINT64_C(1) << w) - 1));
}

/* ORs v (< 2^w) into the w-bit field at bit position bit of the zeroed bit
** string at p, which must have 8 bytes from p + bit/8. */
static inline void fts_codec_bits_put(uint8_t *p, uint64_t bit, int w, uint32_t v) {
    uint64_t x;
    memcpy(&x, p + (bit >> 3), 8);
    x |= ((uint64_t)v & ((UINT64_C(1) << w) - 1)) << (bit & 7);
    memcpy(p + (bit >> 3), &x, 8);
}

/* Bits needed for v: 0 for 0, else 1..32. */
static inline int fts_codec_bits_of(uint32_t v) {
    return v ? 32 - __builtin_clz(v) : 0;
}

#endif /* LP_FTS_CODEC_H */
