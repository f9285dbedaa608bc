/*
** infix.c — building, storing and reading a segment's infix filter (see
** infix.h; the INFIX section's layout is at the top of segwriter.c).
*/
#include "fts/infix.h"

#include <stdlib.h>
#include <string.h>

#include "fts/segment_int.h"
#include "util/crc32c.h"
#include "util/error.h"

/* Moves the current block's distinct trigrams into the pairs. */
static void flush_block(FtsInfixBuild *b) {
    uint32_t *a = b->cur.a;
    size_t n = b->cur.n;
    for (size_t i = 1; i < n; i++) { /* a block's few dozen: insertion sort */
        uint32_t v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
        a[j] = v;
    }
    for (size_t i = 0; i < n && !b->bNoMem; i++) {
        if (i > 0 && a[i] == a[i - 1]) continue;
        if (VEC_PUSH(&b->pairs, (uint64_t)a[i] << 32 | b->blk)) b->bNoMem = 1;
    }
    b->cur.n = 0;
}

void fts_infix_key(FtsInfixBuild *b, const uint8_t *key, int nKey, uint64_t blk) {
    if (b->bNoMem) return;
    if (blk != b->blk) {
        flush_block(b);
        b->blk = blk;
    }
    if (nKey < 4) return;
    if (VEC_RESERVE(&b->cur, b->cur.n + (size_t)nKey)) {
        b->bNoMem = 1;
        return;
    }
    for (int j = 1; j + 3 <= nKey; j++) b->cur.a[b->cur.n++] = fts_infix_gram(key + j);
}

int fts_infix_append(FtsInfixBuild *b, FtsInfixBuild *part, uint64_t blkOff) {
    if (!b->bNoMem) flush_block(b);
    if (!part->bNoMem) flush_block(part);
    if (part->bNoMem || b->bNoMem || VEC_RESERVE(&b->pairs, b->pairs.n + part->pairs.n)) {
        b->bNoMem = 1;
    } else {
        for (size_t i = 0; i < part->pairs.n; i++) b->pairs.a[b->pairs.n++] = part->pairs.a[i] + blkOff;
        if (part->pairs.n) b->blk = (uint32_t)part->pairs.a[part->pairs.n - 1] + blkOff;
    }
    fts_infix_build_free(part);
    return b->bNoMem ? LP_NOMEM : LP_OK;
}

void fts_infix_build_free(FtsInfixBuild *b) {
    VEC_FREE(&b->pairs);
    VEC_FREE(&b->cur);
    memset(b, 0, sizeof(*b));
}

int fts_infix_finish(FtsInfixBuild *b, FtsInfix *x) {
    memset(x, 0, sizeof(*x));
    if (!b->bNoMem) flush_block(b);
    uint64_t *aTmp = NULL;
    size_t n = b->pairs.n;
    int rc = b->bNoMem ? LP_NOMEM : LP_OK;
    /* Sorted by trigram, stable (LSD radix, 8 bits a pass), so that each
    ** trigram's blocks stay ascending. */
    if (rc == LP_OK && n > 0 && !(aTmp = malloc(n * sizeof(uint64_t)))) rc = LP_NOMEM;
    for (int shift = 32; rc == LP_OK && shift < 56; shift += 8) {
        size_t aCount[257] = {0};
        for (size_t i = 0; i < n; i++) aCount[((b->pairs.a[i] >> shift) & 0xFF) + 1]++;
        for (int d = 0; d < 256; d++) aCount[d + 1] += aCount[d];
        for (size_t i = 0; i < n; i++) aTmp[aCount[(b->pairs.a[i] >> shift) & 0xFF]++] = b->pairs.a[i];
        uint64_t *t = b->pairs.a;
        b->pairs.a = aTmp;
        aTmp = t;
    }
    free(aTmp);
    /* A block met twice (keys given after a part, in its last block) has
    ** its pairs twice: each is kept once. */
    size_t m = 0;
    for (size_t i = 0; rc == LP_OK && i < n; i++) {
        if (m == 0 || b->pairs.a[i] != b->pairs.a[m - 1]) b->pairs.a[m++] = b->pairs.a[i];
    }
    n = m;
    uint32_t nGram = 0;
    for (size_t i = 0; rc == LP_OK && i < n; i++) {
        nGram += i == 0 || (b->pairs.a[i] >> 32) != (b->pairs.a[i - 1] >> 32);
    }
    /* one allocation: aGram, aStart, aBlk */
    uint32_t *pOwn = NULL;
    if (rc == LP_OK && !(pOwn = malloc((2 * (size_t)nGram + 1 + n) * sizeof(uint32_t)))) rc = LP_NOMEM;
    if (rc == LP_OK) {
        uint32_t *aGram = pOwn, *aStart = pOwn + nGram, *aBlk = aStart + nGram + 1;
        uint32_t g = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t gram = (uint32_t)(b->pairs.a[i] >> 32);
            if (i == 0 || gram != aGram[g - 1]) {
                aGram[g] = gram;
                aStart[g++] = (uint32_t)i;
            }
            aBlk[i] = (uint32_t)b->pairs.a[i]; /* nBlk < 2^32: the dictionary is < 4 GiB */
        }
        aStart[g] = (uint32_t)n;
        x->nGram = nGram;
        x->nEntry = (uint32_t)n;
        x->aGram = aGram;
        x->aStart = aStart;
        x->aBlk = aBlk;
        x->pOwn = pOwn;
    }
    fts_infix_build_free(b);
    return rc;
}

void fts_infix_free(FtsInfix *x) {
    free(x->pOwn);
    memset(x, 0, sizeof(*x));
}

uint64_t fts_infix_bytes(const FtsInfix *x) {
    return x->pOwn ? (2 * (uint64_t)x->nGram + 1 + x->nEntry) * sizeof(uint32_t) : 0;
}

/* The first index of x->aGram holding a trigram >= g. */
static uint32_t gram_lower(const FtsInfix *x, uint32_t g) {
    uint32_t lo = 0, hi = x->nGram;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (x->aGram[mid] < g) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int fts_infix_list(const FtsInfix *x, uint32_t g, const uint32_t **pa, uint32_t *pn) {
    uint32_t lo = gram_lower(x, g);
    if (lo == x->nGram || x->aGram[lo] != g) return 0;
    *pa = x->aBlk + x->aStart[lo];
    *pn = x->aStart[lo + 1] - x->aStart[lo];
    return 1;
}

/* Sets the bits of trigram index i's blocks. */
static void gram_blocks(const FtsInfix *x, uint32_t i, uint8_t *aBit, uint64_t nBlk) {
    for (uint32_t k = x->aStart[i]; k < x->aStart[i + 1]; k++) {
        uint32_t b = x->aBlk[k];
        if (b < nBlk) aBit[b >> 3] |= (uint8_t)(1u << (b & 7));
    }
}

void fts_infix_pair_blocks(const FtsInfix *x, const uint8_t *p, uint8_t *aBit, uint64_t nBlk) {
    for (uint32_t k = 0; k < FTS_INFIX_PAIR_GRAMS; k++) {
        uint32_t g = fts_infix_pair_gram(p, k), i = gram_lower(x, g);
        if (i < x->nGram && x->aGram[i] == g) gram_blocks(x, i, aBit, nBlk);
    }
}

int fts_infix_usable(const FtsScanHas *pHas) {
    for (int i = 0; pHas && i < pHas->nPart; i++) {
        if (pHas->anPart[i] >= 3) return 1;
    }
    return 0;
}

int fts_infix_pair_usable(const FtsScanHas *pHas) {
    int bPair = 0;
    for (int i = 0; pHas && i < pHas->nPart; i++) {
        if (pHas->anPart[i] >= 3) return 0;
        bPair |= pHas->anPart[i] == 2;
    }
    return bPair;
}

int fts_infix_iter_init(FtsInfixIter *it, const FtsScanHas *pHas, FtsInfixListFn xList, void *ctx) {
    it->nL = 0;
    for (int i = 0; i < pHas->nPart; i++) {
        for (int j = 0; j + 3 <= pHas->anPart[i]; j++) {
            const uint32_t *a;
            uint32_t n;
            if (!xList(ctx, fts_infix_gram(pHas->aPart[i] + j), &a, &n)) return 0; /* no key holds it */
            int at;
            if (it->nL < FTS_INFIX_MAX_LISTS) {
                at = it->nL++;
            } else if (n < it->aL[it->nL - 1].n) {
                at = it->nL - 1; /* replaces the longest */
            } else {
                continue;
            }
            while (at > 0 && it->aL[at - 1].n > n) {
                it->aL[at] = it->aL[at - 1];
                at--;
            }
            it->aL[at].a = a;
            it->aL[at].n = n;
            it->aL[at].i = 0;
        }
    }
    return 1;
}

uint64_t fts_infix_iter_next(FtsInfixIter *it, uint64_t bMin) {
    if (it->nL == 0) return UINT64_MAX;
    for (; it->aL[0].i < it->aL[0].n; it->aL[0].i++) {
        uint32_t b = it->aL[0].a[it->aL[0].i];
        if (b < bMin) continue;
        int bAll = 1;
        for (int l = 1; l < it->nL && bAll; l++) {
            while (it->aL[l].i < it->aL[l].n && it->aL[l].a[it->aL[l].i] < b) it->aL[l].i++;
            bAll = it->aL[l].i < it->aL[l].n && it->aL[l].a[it->aL[l].i] == b;
        }
        if (bAll) {
            it->aL[0].i++;
            return b;
        }
    }
    return UINT64_MAX;
}

/* Zero bytes before the counts, so that the arrays start at a multiple of
** 4 in the file (the mapping starts on a page). */
static uint64_t pad_at(uint64_t off) {
    return (4 - off % 4) % 4;
}

uint64_t fts_infix_size(const FtsInfix *x, uint64_t off) {
    return pad_at(off) + 8 + 4 * (2 * (uint64_t)x->nGram + 1 + x->nEntry) + 4;
}

void fts_infix_encode(const FtsInfix *x, uint64_t off, uint8_t *out) {
    uint64_t pad = pad_at(off);
    uint8_t *p = out;
    memset(p, 0, pad);
    p += pad;
    seg_put32(p, x->nGram);
    seg_put32(p + 4, x->nEntry);
    p += 8;
    memcpy(p, x->aGram, 4 * (size_t)x->nGram);
    p += 4 * (size_t)x->nGram;
    memcpy(p, x->aStart, 4 * ((size_t)x->nGram + 1));
    p += 4 * ((size_t)x->nGram + 1);
    memcpy(p, x->aBlk, 4 * (size_t)x->nEntry);
    p += 4 * (size_t)x->nEntry;
    seg_put32(p, crc32c_update(0, out, (size_t)(p - out)));
}

static int bad(const char **pzWhy, uint64_t *pBad, const char *zWhy, uint64_t at) {
    *pzWhy = zWhy;
    *pBad = at;
    return -1;
}

int fts_infix_decode(const uint8_t *p, uint64_t n, uint64_t off, uint64_t nBlk, int bCrc, FtsInfix *x,
                     const char **pzWhy, uint64_t *pBad) {
    memset(x, 0, sizeof(*x));
    uint64_t pad = pad_at(off);
    if (n < pad + 12) return bad(pzWhy, pBad, "infix section too small", 0);
    for (uint64_t i = 0; i < pad; i++) {
        if (p[i]) return bad(pzWhy, pBad, "infix section padding not zero", i);
    }
    uint32_t nGram = seg_get32(p + pad), nEntry = seg_get32(p + pad + 4);
    if (fts_infix_size(&(FtsInfix){.nGram = nGram, .nEntry = nEntry}, off) != n) {
        return bad(pzWhy, pBad, "infix section size does not match its counts", pad);
    }
    if (bCrc && seg_get32(p + n - 4) != crc32c_update(0, p, (size_t)(n - 4))) {
        return bad(pzWhy, pBad, "infix section checksum mismatch", n - 4);
    }
    const uint8_t *a = p + pad + 8;
    uint32_t *pOwn = NULL;
    if ((uintptr_t)a % 4 != 0) {
        /* not where the file's layout puts it (a copy in memory): copied */
        if (!(pOwn = malloc(n - pad - 12 + 4))) return bad(pzWhy, pBad, "out of memory", 0);
        memcpy(pOwn, a, (size_t)(n - pad - 12));
        a = (const uint8_t *)pOwn;
    }
    const uint32_t *aGram = (const uint32_t *)a, *aStart = aGram + nGram, *aBlk = aStart + nGram + 1;
    const char *zWhy = NULL;
    uint64_t at = 0;
    if (aStart[0] != 0 || aStart[nGram] != nEntry) {
        zWhy = "infix lists do not cover the block numbers", at = 0;
    }
    for (uint32_t i = 0; !zWhy && i < nGram; i++) {
        if (aGram[i] >> 24 || (i > 0 && aGram[i] <= aGram[i - 1])) {
            zWhy = "infix trigrams not ascending", at = 4 * (uint64_t)i;
        } else if (aStart[i + 1] <= aStart[i] || aStart[i + 1] > nEntry) {
            zWhy = "infix list bounds not ascending", at = 4 * ((uint64_t)nGram + i + 1);
        }
        for (uint32_t k = aStart[i]; !zWhy && k < aStart[i + 1]; k++) {
            if (aBlk[k] >= nBlk || (k > aStart[i] && aBlk[k] <= aBlk[k - 1])) {
                zWhy = "infix block numbers not ascending inside the dictionary",
                at = 4 * (2 * (uint64_t)nGram + 1 + k);
            }
        }
    }
    if (zWhy) {
        free(pOwn);
        return bad(pzWhy, pBad, zWhy, pad + 8 + at);
    }
    x->nGram = nGram;
    x->nEntry = nEntry;
    x->aGram = aGram;
    x->aStart = aStart;
    x->aBlk = aBlk;
    x->pOwn = pOwn;
    return 0;
}
