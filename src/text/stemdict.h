/*
** stemdict.h — precomputed stems of common words, a read-only table built
** into the binary.
**
** Contract. A StemDict maps a word of lowercase ASCII letters to the stem
** its language's libstemmer algorithm gives it. It is generated at build
** time by tools/gen-stemdict.c, which runs that same stemmer over a word
** list (Debian's wamerican for English), so a stem found here is the
** stemmer's, byte for byte; a word not found is stemmed as before. It
** exists because Snowball's English stemmer costs ~2,500 instructions a
** word, ten times a lookup here, and a collection's first pass meets most
** of its vocabulary once: the per-thread memo (analyzer.c) cannot help
** there. A dictionary built without a word list is empty (nBits 0).
**
** The layout is described at the top of tools/gen-stemdict.c. The table
** is const data in the binary, shared by every thread, nothing to
** initialise or free; analyzer.c reads a copy of it in huge pages where
** the system has them (see dict_en_map there).
*/
#ifndef LP_TEXT_STEMDICT_H
#define LP_TEXT_STEMDICT_H

#include <stddef.h>
#include <stdint.h>

#include "util/bytes.h"

#define STEMDICT_MAX_WORD 32   /* longer words are not in a dictionary */
#define STEMDICT_MAX_SUFFIX 15 /* stems that replace more of the word are not either */

#define STEMDICT_BUCKET_WORDS 2 /* words per bucket, on average at most */

typedef struct StemDict {
    const unsigned char *aPool; /* entries: nWord, nKeep, nSuffix, word, suffix */
    const uint32_t *aBucket;    /* 2^nBits + 1: bucket b is aPool[aBucket[b] .. aBucket[b+1]) */
    int nBits;                  /* 0: empty */
    uint32_t nWord;             /* entries */
} StemDict;

/* The English dictionary (Snowball "english", stem_en). */
extern const StemDict lp_stemdict_en;

/* The word's hash (util/bytes.h); its bucket is the top nBits after a
** multiplicative mix. The generator and the lookup run the same code in
** the same build. */
static inline uint32_t stemdict_hash(const char *z, int n) {
    return lp_hash_short(z, (size_t)n);
}

static inline uint32_t stemdict_bucket(uint32_t h, int nBits) {
    return (h * 0x9E3779B1u) >> (32 - nBits);
}

/* The bytes of the entry at p. */
static inline size_t stemdict_entry_size(const unsigned char *p) {
    return 3 + (size_t)p[0] + p[2];
}

/* When z[0..n) (hash h, from stemdict_hash) is in the dictionary, turns it
** into its stem in place and returns the stem's length; else returns -1
** and leaves z alone. z has room for n + STEMDICT_MAX_SUFFIX bytes. Most
** stems keep a prefix of the word and add nothing: then nothing is
** copied. */
static inline int stemdict_find(const StemDict *d, char *z, int n, uint32_t h) {
    if (d->nBits == 0 || n > STEMDICT_MAX_WORD) return -1;
    uint32_t b = stemdict_bucket(h, d->nBits);
    const unsigned char *p = d->aPool + d->aBucket[b], *pEnd = d->aPool + d->aBucket[b + 1];
    for (; p < pEnd; p += stemdict_entry_size(p)) {
        if (p[0] == n && lp_bytes_eq(p + 3, z, (size_t)n)) {
            int nKeep = p[1], nSuf = p[2];
            for (int i = 0; i < nSuf; i++) z[nKeep + i] = (char)p[3 + n + i];
            return nKeep + nSuf;
        }
    }
    return -1;
}

#endif /* LP_TEXT_STEMDICT_H */
