/*
** infix.h — a sealed segment's infix filter: for every 3-byte string
** found in some term, the ascending list of the dictionary blocks that
** hold such a term. A wildcard's scan (FtsSourceVt.xScanHas) intersects
** the lists of its literal parts' trigrams and reads only the blocks left.
** Internal to fts/: the segment writer stores the filter in the file
** (segwriter.c describes the INFIX section), and the reader uses the
** stored one or builds it from the dictionary on first use (a file written
** without it).
**
** A trigram is its 3 bytes as one number, b0 << 16 | b1 << 8 | b2. The
** trigrams of a key are those of its term (the key past its field byte).
**
** Building: fts_infix_key() for each key in key order with its block
** number (ascending), fts_infix_append() to add a part built the same way
** over later blocks, then fts_infix_finish(). A builder is zero-initialised.
*/
#ifndef LP_FTS_INFIX_H
#define LP_FTS_INFIX_H

#include <stddef.h>
#include <stdint.h>

#include "fts/source.h"
#include "text/analyzer.h"
#include "util/vec.h"

typedef struct FtsInfix {
    uint32_t nGram;         /* distinct trigrams */
    uint32_t nEntry;        /* block numbers over all of them */
    const uint32_t *aGram;  /* nGram, ascending */
    const uint32_t *aStart; /* nGram + 1: trigram i's blocks are aBlk[aStart[i] ..
                            ** aStart[i + 1]) */
    const uint32_t *aBlk;   /* nEntry: ascending per trigram */
    uint32_t *pOwn;         /* the arrays when built in memory (freed by
                            ** fts_infix_free); NULL when they lie in a file */
} FtsInfix;

typedef struct FtsInfixBuild {
    VEC(uint64_t) pairs;    /* trigram << 32 | block, per block each once */
    VEC(uint32_t) cur;      /* the current block's trigrams */
    uint64_t blk;           /* the current block */
    int bNoMem;
} FtsInfixBuild;

/* Is key[0..nKey) (field byte first) an exact form's ('=running')? A
** segment written with FTS_SEGW_INFIX_EXACT puts only these in its
** filter. */
static inline int fts_infix_key_is_exact(const uint8_t *key, int nKey) {
    return nKey >= 2 && key[1] == ANALYZER_EXACT_MARK;
}

/* Adds key[0..nKey) (field byte first) of dictionary block blk. */
void fts_infix_key(FtsInfixBuild *b, const uint8_t *key, int nKey, uint64_t blk);

/* Adds part's keys, whose block numbers are moved on by blkOff (part's
** blocks follow b's), and empties part. LP_OK or LP_NOMEM. */
int fts_infix_append(FtsInfixBuild *b, FtsInfixBuild *part, uint64_t blkOff);

/* The filter of the keys given (b is emptied): LP_OK, or LP_NOMEM (also
** when an earlier call ran out of memory). */
int fts_infix_finish(FtsInfixBuild *b, FtsInfix *x);
void fts_infix_build_free(FtsInfixBuild *b);
void fts_infix_free(FtsInfix *x);

/* Bytes of memory x holds (0 for a filter in a file). */
uint64_t fts_infix_bytes(const FtsInfix *x);

/* Trigram g's blocks: *pa and *pn, 1; or 0 when no key holds it. */
int fts_infix_list(const FtsInfix *x, uint32_t g, const uint32_t **pa, uint32_t *pn);

/* Does some string of pHas have 3 bytes or more (so the filter can
** narrow a scan for it)? */
int fts_infix_usable(const FtsScanHas *pHas);

/* Has pHas a string of 2 bytes, and none of 3 or more (fts_infix_usable
** then says no)? Then a term holding it either is those 2 bytes or holds
** a trigram that begins or ends with them. */
int fts_infix_pair_usable(const FtsScanHas *pHas);

/* Trigram k (< FTS_INFIX_PAIR_GRAMS) of those that begin ("ab?", k <
** 256) or end ("?ab") with the 2 bytes p[0..2): a term of 3 bytes or more
** holding them holds one of these. */
#define FTS_INFIX_PAIR_GRAMS 512
static inline uint32_t fts_infix_pair_gram(const uint8_t *p, uint32_t k) {
    uint32_t pair = (uint32_t)p[0] << 8 | p[1];
    return k < 256 ? pair << 8 | k : (k - 256) << 16 | pair;
}

/* Sets, in the bitmap aBit of nBlk blocks, the blocks of every trigram
** fts_infix_pair_gram names for p: with the block where a term of just
** those 2 bytes would be, all the blocks a wildcard with that part
** (`*ab*`) must read. */
void fts_infix_pair_blocks(const FtsInfix *x, const uint8_t *p, uint8_t *aBit, uint64_t nBlk);

/* Trigram p[0..3) as a number. */
static inline uint32_t fts_infix_gram(const uint8_t *p) {
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* The numbers in all the lists of pHas's strings' trigrams (of the
** shortest FTS_INFIX_MAX_LISTS, which bound them most tightly): the blocks
** that may hold a key with every string, for a segment's filter; the
** terms, for the RAM segment's index (memindex.c). xList gives trigram
** g's ascending list (1), or 0 when it has none. fts_infix_iter_init
** returns 0 when some trigram has none (no number then), else 1;
** fts_infix_iter_next gives the numbers >= bMin in ascending order (bMin
** never decreasing from call to call), then UINT64_MAX. */
#define FTS_INFIX_MAX_LISTS 16
typedef struct FtsInfixIter {
    struct {
        const uint32_t *a;
        uint32_t n, i;      /* count, and the next one not yet passed */
    } aL[FTS_INFIX_MAX_LISTS];
    int nL;
} FtsInfixIter;
typedef int (*FtsInfixListFn)(void *ctx, uint32_t g, const uint32_t **pa, uint32_t *pn);
int fts_infix_iter_init(FtsInfixIter *it, const FtsScanHas *pHas, FtsInfixListFn xList, void *ctx);
uint64_t fts_infix_iter_next(FtsInfixIter *it, uint64_t bMin);

/* The INFIX section of x for a file where it starts at offset off: its
** size, and its bytes written to out (fts_infix_size bytes). */
uint64_t fts_infix_size(const FtsInfix *x, uint64_t off);
void fts_infix_encode(const FtsInfix *x, uint64_t off, uint8_t *out);

/* Reads the INFIX section p[0..n) found at file offset off of a file of
** nBlk dictionary blocks into *x (pointing into p, which must stay mapped;
** the host is little-endian, as codec.h checks), its checksum verified
** when bCrc. 0, or -1 with *pzWhy (a static string) and *pBad (the offset
** in p of the damage): every invariant is checked, so a scan never reads
** outside the dictionary. */
int fts_infix_decode(const uint8_t *p, uint64_t n, uint64_t off, uint64_t nBlk, int bCrc, FtsInfix *x,
                     const char **pzWhy, uint64_t *pBad);

#endif /* LP_FTS_INFIX_H */
