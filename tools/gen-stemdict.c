/*
** gen-stemdict — writes the C source of a stem dictionary (text/stemdict.h)
** at build time:
**
**   gen-stemdict ALGORITHM WORDLIST OUT.c SYMBOL
**
** Each line of WORDLIST that is a word of 1..STEMDICT_MAX_WORD lowercase
** ASCII letters is stemmed with libstemmer's ALGORITHM (the library the
** analyzer links), so the dictionary gives exactly the stems the stemmer
** would. When WORDLIST does not exist the dictionary is empty and the
** analyzer stems every word, as before there was one.
**
** The layout (read by stemdict_find in text/stemdict.h):
**   pool     entries back to back, each: nWord, nKeep, nSuffix, the
**            word's bytes, the suffix's bytes; the stem is the word's
**            first nKeep bytes followed by the suffix. The entries are
**            grouped by bucket: bucket b holds the words whose
**            stemdict_bucket(stemdict_hash(word)) is b.
**   buckets  2^nBits + 1 uint32 (nBits: the fewest that make buckets of
**            at most STEMDICT_BUCKET_WORDS words on average): bucket b's
**            entries are the pool bytes [buckets[b], buckets[b+1]).
** A lookup reads one bucket offset (for English a 128 KiB table, soon in
** cache) and one short run of entries: a word's first lookup touches one
** cold page of the pool. (A table of slots pointing into the pool, 512
** KiB at half full, cost two: fts-build on adi 8% slower, on cranfield
** 9%, the same on scifact. Fewer, longer buckets do not pay either: 8, 16
** or 32 words a bucket (a 32, 16 or 8 KiB table) left adi as it was and
** made cranfield's analysis 11%, 21% and 38% slower. What a collection's
** first pass pays for is the pool's cold lines, one per new word.)
*/
#include <libstemmer.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/stemdict.h"

static int fail(const char *zMsg, const char *zArg) {
    fprintf(stderr, "gen-stemdict: %s%s\n", zMsg, zArg ? zArg : "");
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5) return fail("usage: gen-stemdict ALGORITHM WORDLIST OUT.c SYMBOL", NULL);
    struct sb_stemmer *st = sb_stemmer_new(argv[1], NULL);
    if (!st) return fail("unknown stemmer ", argv[1]);
    unsigned char *aPool = NULL;
    size_t nPool = 0, capPool = 0, nEntry = 0;
    uint32_t *aOff = NULL;  /* entry offsets */
    size_t capOff = 0;
    FILE *in = fopen(argv[2], "r");
    char zLine[256];
    while (in && fgets(zLine, sizeof(zLine), in)) {
        size_t n = strcspn(zLine, "\r\n");
        int bOk = n >= 1 && n <= STEMDICT_MAX_WORD;
        for (size_t i = 0; i < n && bOk; i++) bOk = zLine[i] >= 'a' && zLine[i] <= 'z';
        if (!bOk) continue;
        const sb_symbol *zStem = sb_stemmer_stem(st, (const sb_symbol *)zLine, (int)n);
        if (!zStem) return fail("out of memory", NULL);
        size_t nStem = (size_t)sb_stemmer_length(st);
        size_t nKeep = 0;
        while (nKeep < n && nKeep < nStem && zStem[nKeep] == (sb_symbol)zLine[nKeep]) nKeep++;
        size_t nSuf = nStem - nKeep;
        if (nStem == 0 || nSuf > STEMDICT_MAX_SUFFIX) continue; /* left to the stemmer */
        if (nPool + 3 + n + nSuf > capPool) {
            capPool = capPool ? capPool * 2 : 1 << 20;
            aPool = realloc(aPool, capPool);
            if (!aPool) return fail("out of memory", NULL);
        }
        if (nEntry == capOff) {
            capOff = capOff ? capOff * 2 : 1 << 16;
            aOff = realloc(aOff, sizeof(uint32_t) * capOff);
            if (!aOff) return fail("out of memory", NULL);
        }
        aOff[nEntry++] = (uint32_t)nPool;
        aPool[nPool++] = (unsigned char)n;
        aPool[nPool++] = (unsigned char)nKeep;
        aPool[nPool++] = (unsigned char)nSuf;
        memcpy(aPool + nPool, zLine, n);
        nPool += n;
        memcpy(aPool + nPool, zStem + nKeep, nSuf);
        nPool += nSuf;
    }
    if (in) fclose(in);
    sb_stemmer_delete(st);
    int nBits = 1;
    while (((size_t)1 << nBits) * STEMDICT_BUCKET_WORDS < nEntry) nBits++;
    size_t nBucket = nEntry ? (size_t)1 << nBits : 0;
    /* Each bucket's entries as a list, in the order the word list gave
    ** them; a word listed twice keeps its first entry. */
    uint32_t *aHead = malloc(sizeof(uint32_t) * (nBucket ? nBucket : 1));
    uint32_t *aTail = malloc(sizeof(uint32_t) * (nBucket ? nBucket : 1));
    uint32_t *aNext = malloc(sizeof(uint32_t) * (nEntry ? nEntry : 1));
    uint32_t *aBucket = malloc(sizeof(uint32_t) * (nBucket + 1));
    unsigned char *aOut = malloc(nPool ? nPool : 1);
    if (!aHead || !aTail || !aNext || !aBucket || !aOut) return fail("out of memory", NULL);
    for (size_t b = 0; b < nBucket; b++) aHead[b] = aTail[b] = UINT32_MAX;
    size_t nDup = 0, nOut = 0;
    for (size_t e = 0; e < nEntry; e++) {
        const unsigned char *p = aPool + aOff[e];
        uint32_t b = stemdict_bucket(stemdict_hash((const char *)p + 3, p[0]), nBits);
        int bDup = 0;
        for (uint32_t f = aHead[b]; f != UINT32_MAX && !bDup; f = aNext[f]) {
            const unsigned char *q = aPool + aOff[f];
            bDup = q[0] == p[0] && memcmp(q + 3, p + 3, p[0]) == 0;
        }
        if (bDup) {
            nDup++;
            continue;
        }
        aNext[e] = UINT32_MAX;
        if (aTail[b] == UINT32_MAX) {
            aHead[b] = (uint32_t)e;
        } else {
            aNext[aTail[b]] = (uint32_t)e;
        }
        aTail[b] = (uint32_t)e;
    }
    for (size_t b = 0; b < nBucket; b++) {
        aBucket[b] = (uint32_t)nOut;
        for (uint32_t e = aHead[b]; e != UINT32_MAX; e = aNext[e]) {
            const unsigned char *p = aPool + aOff[e];
            size_t sz = stemdict_entry_size(p);
            memcpy(aOut + nOut, p, sz);
            nOut += sz;
        }
    }
    aBucket[nBucket] = (uint32_t)nOut;
    FILE *out = fopen(argv[3], "w");
    if (!out) return fail("cannot create ", argv[3]);
    fprintf(out, "/* Generated by tools/gen-stemdict.c from %s with libstemmer's %s:\n"
                 "** %zu words. Do not edit. */\n#include \"text/stemdict.h\"\n\n",
            argv[2], argv[1], nEntry - nDup);
    fprintf(out, "static const unsigned char aPool[%zu] = {", nOut ? nOut : 1);
    for (size_t i = 0; i < nOut; i++) fprintf(out, "%s%u,", i % 24 ? "" : "\n", aOut[i]);
    fprintf(out, "%s};\n\nstatic const uint32_t aBucket[%zu] = {", nOut ? "" : "0", nBucket + 1);
    for (size_t i = 0; i <= nBucket; i++) fprintf(out, "%s%u,", i % 16 ? "" : "\n", aBucket[i]);
    fprintf(out, "};\n\nconst StemDict %s = {aPool, aBucket, %d, %zu};\n", argv[4],
            nBucket ? nBits : 0, nEntry - nDup);
    int bErr = ferror(out);
    if (fclose(out) != 0 || bErr) return fail("cannot write ", argv[3]);
    free(aPool);
    free(aOff);
    free(aHead);
    free(aTail);
    free(aNext);
    free(aOut);
    free(aBucket);
    return 0;
}
