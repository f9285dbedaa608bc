/*
** fuzz_wordpiece.c — libFuzzer target for the WordPiece tokenizer.
**
** The tokenizer of all-MiniLM-L6-v2 is opened once, from
** $LOUPE_SHARED_DATA/tokenizers/all-MiniLM-L6-v2, else from the shared/data
** folder next to the repository (found from this file's path). The first
** two bytes of an input choose nMax (any int16, so also <2 and >512); the
** rest is the text, arbitrary bytes. Beyond "no crash, no leak, no
** out-of-bounds read" it checks wordpiece.h's promises:
**   - the count is in [2, clamp(nMax)], [CLS] first, [SEP] last, every id
**     in [0, vocab size), nothing written past the clamped nMax;
**   - truncation is a prefix: the encoding at nMax is the first nMax-1 ids
**     of the untruncated encoding, then [SEP] (or all of it when shorter);
**   - the result does not depend on nMax otherwise, nor on the call.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed/wordpiece.h"
#include "embed/wordpiece_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NFULL 4096 /* untruncated ids kept for the prefix check */

static Wordpiece *open_once(void) {
    char zDir[4096];
    const char *zEnv = getenv("LOUPE_SHARED_DATA");
    if (zEnv && *zEnv) {
        snprintf(zDir, sizeof(zDir), "%s/tokenizers/all-MiniLM-L6-v2", zEnv);
    } else {
        char zHere[2048];
        snprintf(zHere, sizeof(zHere), "%s", __FILE__);
        char *zSlash = strrchr(zHere, '/');
        if (zSlash) {
            *zSlash = 0;
        } else {
            snprintf(zHere, sizeof(zHere), ".");
        }
        snprintf(zDir, sizeof(zDir), "%s/../../../shared/data/tokenizers/all-MiniLM-L6-v2", zHere);
    }
    LpError err;
    lp_err_clear(&err);
    Wordpiece *wp = wp_open(zDir, &err);
    if (!wp) {
        fprintf(stderr, "fuzz_wordpiece: %s (set LOUPE_SHARED_DATA to the shared/data folder)\n",
                err.zMsg);
        abort();
    }
    return wp;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* Opened once and kept for the process: immutable and reachable. */
    static Wordpiece *wp;
    static int64_t aFull[NFULL], aId[WP_MAX_LEN + 8];
    if (!wp) wp = open_once();
    if (size < 2) return 0;
    int nMax = (int16_t)(data[0] | (data[1] << 8));
    /* A heap copy of exactly the text, so ASan catches any over-read. */
    size_t n = size - 2;
    char *z = malloc(n ? n : 1);
    if (!z) return 0;
    if (n) memcpy(z, data + 2, n);

    const int nVocab = wp_vocab_size(wp);
    const int64_t idCls = wp_cls_id(wp), idSep = wp_sep_id(wp);
    int nClamp = nMax < 2 ? 2 : nMax > WP_MAX_LEN ? WP_MAX_LEN : nMax;
    for (int i = 0; i < WP_MAX_LEN + 8; i++)
        aId[i] = -99;
    int nOut = wp_encode(wp, z, n, nMax, aId);
    if (nOut < 2 || nOut > nClamp) abort();
    if (aId[0] != idCls || aId[nOut - 1] != idSep) abort();
    for (int i = 0; i < nOut; i++) {
        if (aId[i] < 0 || aId[i] >= nVocab) abort();
    }
    /* The room is scratch space (a word's pieces are written before a later
    ** character can turn the word into [UNK]), but nothing lies beyond it. */
    for (int i = nClamp; i < WP_MAX_LEN + 8; i++) {
        if (aId[i] != -99) abort();
    }

    int nFull = wp_encode_nolimit(wp, z, n, NFULL, aFull);
    if (nFull < 2 || nFull > NFULL || aFull[0] != idCls || aFull[nFull - 1] != idSep) abort();
    if (nFull < NFULL) {
        /* aFull is the whole encoding: aId must be its truncation. */
        int nExp = nFull <= nClamp ? nFull : nClamp;
        if (nOut != nExp) abort();
        if (memcmp(aId, aFull, sizeof(int64_t) * (size_t)(nExp - 1)) != 0) abort();
    } else if (nOut != nClamp || memcmp(aId, aFull, sizeof(int64_t) * (size_t)(nOut - 1)) != 0) {
        abort(); /* both truncated: still a common prefix */
    }
    free(z);
    return 0;
}
