/*
** bitset.h — a fixed-size set of bits over uint64 words.
**
** Contract. A Bitset holds nBit bits, numbered 0..nBit-1, in
** ceil(nBit/64) malloc'd words (bit i is bit i%64 of word i/64). The
** struct itself is the caller's (on the stack or inside another object);
** bitset_init allocates the words all zero, bitset_free releases them.
** A zero-initialised Bitset is a valid empty set of 0 bits.
** Uses: segment tombstones, filter allow-lists, visited sets.
**
** Invariant: the bits of the last word at or beyond nBit are always zero,
** so bitset_count and bitset_next never see stray bits.
**
** set/clear/test take an index below nBit (asserted in debug builds); they
** are inline because filters call them per candidate. Operations between
** two bitsets of different sizes treat the shorter operand as zero past its
** end: dst bits beyond src's size are cleared by bitset_and and kept by
** bitset_or / bitset_andnot, and src bits beyond dst's size are ignored.
**
** Errors: bitset_init and bitset_resize return LP_NOMEM (bitset unchanged)
** when memory runs out; nothing else fails.
**
** Thread safety: none. Concurrent tests are safe while nobody writes.
*/
#ifndef LP_UTIL_BITSET_H
#define LP_UTIL_BITSET_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct Bitset {
    uint64_t *aWord;        /* ceil(nBit/64) words, or NULL when nBit is 0 */
    size_t nBit;            /* number of bits */
} Bitset;

/* bitset_next's answer when no set bit is left. */
#define BITSET_NONE SIZE_MAX

/* Words needed for n bits. */
#define BITSET_NWORD(n) (((n) + 63) / 64)

/* An all-zero set of nBit bits. LP_OK or LP_NOMEM (b left empty). */
int bitset_init(Bitset *b, size_t nBit);
/* Releases the words; b becomes an empty set of 0 bits. */
void bitset_free(Bitset *b);
/* Changes the size to nBit: new bits are zero, bits past a smaller size are
** dropped. LP_OK or LP_NOMEM (b unchanged). */
int bitset_resize(Bitset *b, size_t nBit);

static inline void bitset_set(Bitset *b, size_t i) {
    assert(i < b->nBit);
    b->aWord[i / 64] |= (uint64_t)1 << (i % 64);
}
static inline void bitset_clear(Bitset *b, size_t i) {
    assert(i < b->nBit);
    b->aWord[i / 64] &= ~((uint64_t)1 << (i % 64));
}
static inline int bitset_test(const Bitset *b, size_t i) {
    assert(i < b->nBit);
    return (int)((b->aWord[i / 64] >> (i % 64)) & 1);
}

/* Number of set bits. */
size_t bitset_count(const Bitset *b);
/* The smallest set bit >= i, or BITSET_NONE. Any i is accepted, so
** `for (i = bitset_next(b, 0); i != BITSET_NONE; i = bitset_next(b, i + 1))`
** visits every set bit. */
size_t bitset_next(const Bitset *b, size_t i);

/* dst &= src, dst |= src, dst &= ~src (sizes: see the contract above). */
void bitset_and(Bitset *dst, const Bitset *src);
void bitset_or(Bitset *dst, const Bitset *src);
void bitset_andnot(Bitset *dst, const Bitset *src);

#endif /* LP_UTIL_BITSET_H */
