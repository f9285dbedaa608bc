/* bitset.c — see bitset.h. */
#include "util/bitset.h"

#include <stdlib.h>
#include <string.h>

int bitset_init(Bitset *b, size_t nBit) {
    b->aWord = NULL;
    b->nBit = 0;
    return bitset_resize(b, nBit);
}

void bitset_free(Bitset *b) {
    free(b->aWord);
    b->aWord = NULL;
    b->nBit = 0;
}

/* Mask of the bits of the last word that lie below nBit (all ones when
** nBit fills the word). */
static uint64_t tail_mask(size_t nBit) {
    unsigned r = (unsigned)(nBit % 64);
    return r ? ((uint64_t)1 << r) - 1 : ~(uint64_t)0;
}

int bitset_resize(Bitset *b, size_t nBit) {
    size_t nOld = BITSET_NWORD(b->nBit);
    /* BITSET_NWORD would wrap for nBit near SIZE_MAX; no such set fits. */
    if (nBit > SIZE_MAX - 63) return LP_NOMEM;
    size_t nNew = BITSET_NWORD(nBit);
    if (nNew != nOld) {
        if (nNew > SIZE_MAX / sizeof(uint64_t)) return LP_NOMEM;
        if (nNew == 0) {
            free(b->aWord);
            b->aWord = NULL;
        } else {
            uint64_t *a = realloc(b->aWord, nNew * sizeof(uint64_t));
            if (!a) return LP_NOMEM;
            if (nNew > nOld) memset(a + nOld, 0, (nNew - nOld) * sizeof(uint64_t));
            b->aWord = a;
        }
    }
    /* Shrinking within or into a word leaves dropped bits in the new last
    ** word; clear them to keep the invariant. Growing needs nothing: the
    ** old tail bits were already zero. */
    if (nBit < b->nBit && nNew > 0) b->aWord[nNew - 1] &= tail_mask(nBit);
    b->nBit = nBit;
    return LP_OK;
}

size_t bitset_count(const Bitset *b) {
    size_t n = 0;
    size_t nWord = BITSET_NWORD(b->nBit);
    for (size_t i = 0; i < nWord; i++) n += (size_t)__builtin_popcountll(b->aWord[i]);
    return n;
}

size_t bitset_next(const Bitset *b, size_t i) {
    if (i >= b->nBit) return BITSET_NONE;
    size_t w = i / 64;
    /* The first word, without the bits below i. */
    uint64_t x = b->aWord[w] & (~(uint64_t)0 << (i % 64));
    size_t nWord = BITSET_NWORD(b->nBit);
    for (;;) {
        if (x) return w * 64 + (size_t)__builtin_ctzll(x);
        if (++w == nWord) return BITSET_NONE;
        x = b->aWord[w];
    }
}

/* Words both sets have. */
static size_t common_words(const Bitset *dst, const Bitset *src) {
    size_t nd = BITSET_NWORD(dst->nBit), ns = BITSET_NWORD(src->nBit);
    return nd < ns ? nd : ns;
}

/* src's word i may hold bits past dst->nBit when src is longer; masking the
** last common word keeps dst's invariant in bitset_or. */
void bitset_or(Bitset *dst, const Bitset *src) {
    size_t n = common_words(dst, src);
    for (size_t i = 0; i < n; i++) dst->aWord[i] |= src->aWord[i];
    if (n > 0 && n == BITSET_NWORD(dst->nBit)) dst->aWord[n - 1] &= tail_mask(dst->nBit);
}

void bitset_and(Bitset *dst, const Bitset *src) {
    size_t n = common_words(dst, src);
    size_t nd = BITSET_NWORD(dst->nBit);
    for (size_t i = 0; i < n; i++) dst->aWord[i] &= src->aWord[i];
    /* Past src's end src counts as zero. Its last word's own tail bits are
    ** zero by the invariant, so the loop above already cleared those. */
    if (nd > n) memset(dst->aWord + n, 0, (nd - n) * sizeof(uint64_t));
}

void bitset_andnot(Bitset *dst, const Bitset *src) {
    size_t n = common_words(dst, src);
    for (size_t i = 0; i < n; i++) dst->aWord[i] &= ~src->aWord[i];
}
