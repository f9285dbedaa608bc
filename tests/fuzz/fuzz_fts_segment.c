/*
** fuzz_fts_segment.c — libFuzzer target for the sealed full-text segment
** reader (src/fts/segreader.c).
**
** Each input is taken as a whole segment file and opened from memory with
** the checksums off (FTS_SEGR_NOCHECKSUM), so that mutations reach the
** structure checks and the decoders instead of stopping at a CRC. When it
** opens, everything the reader offers is used: the deep check, the info
** walk, a scan of all keys and per-field scans, and for each key (up to a
** cap) a lookup and two cursors, one moved by xNext with positions, one
** by xShallow + xAdvance to targets taken from the input. Beyond "no
** crash, no leak, no out-of-bounds read" (the sanitizers) it checks the
** reader's promises: every error is LP_CORRUPT with a message naming the
** file, documents come out strictly increasing and below nDocs, and a
** list never yields more documents than the segment has.
**
** Seeds: tests/fuzz/corpus/fts_segment/, made by gen_fts_segment.c.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fts/segment.h"
#include "fts/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.seg"
#define MAX_KEYS 64
#define MAX_TF 4096

static void expect_corrupt(int rc, const LpError *err) {
    if (rc != LP_CORRUPT || err->code != LP_CORRUPT || !strstr(err->zMsg, NAME)) abort();
}

typedef struct Keys {
    uint8_t a[MAX_KEYS][FTS_MAX_KEY];
    int an[MAX_KEYS];
    uint32_t adf[MAX_KEYS];
    uint64_t acf[MAX_KEYS];
    int n;
    int nAll; /* keys the scan met, collected or not */
    uint32_t nDocs;
} Keys;

static int collect(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    Keys *k = ctx;
    if (nKey < 1 || nKey > FTS_MAX_KEY || info->df == 0 || info->df > k->nDocs) abort();
    if (k->n < MAX_KEYS) {
        memcpy(k->a[k->n], key, (size_t)nKey);
        k->adf[k->n] = info->df;
        k->acf[k->n] = info->cf;
        k->an[k->n++] = nKey;
    }
    k->nAll++;
    return 0;
}

/* Is key among the keys collected? */
static int has_key(const Keys *k, const uint8_t *key, int nKey) {
    for (int i = 0; i < k->n; i++) {
        if (k->an[i] == nKey && memcmp(k->a[i], key, (size_t)nKey) == 0) return 1;
    }
    return 0;
}

/* On a segment the deep check passed, holding keys (all of them
** collected): a lookup of a key next to each one (its last byte moved up
** or down, one byte dropped or added) finds it exactly when the scan met
** it. The dictionary search takes shortcuts from the keys' shared
** prefixes and an in-memory table of the blocks' first bytes: this is
** what must not change under them. */
static void probe_neighbours(FtsSource *src, const Keys *k) {
    static const int aDelta[] = {-1, 1, 0x40};
    for (int i = 0; i < k->n; i++) {
        uint8_t b[FTS_MAX_KEY + 1];
        int n = k->an[i];
        memcpy(b, k->a[i], (size_t)n);
        for (int j = 0; j < 5; j++) {
            int m = n;
            memcpy(b, k->a[i], (size_t)n);
            if (j < 3) {
                b[n - 1] = (uint8_t)(b[n - 1] + aDelta[j]);
            } else if (j == 3) {
                m = n - 1;
            } else {
                if (n == FTS_MAX_KEY) continue;
                b[m++] = 'a';
            }
            if (m < 1) continue;
            FtsTermInfo ti;
            LpError err;
            int found = src->vt->xLookup(src, b, m, &ti, &err);
            if (found != has_key(k, b, m)) abort();
        }
    }
}

static int count(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    (void)key;
    (void)nKey;
    (void)info;
    (*(int *)ctx)++;
    return 0;
}

/* A skipping scan (xScanSkip) that passes over a prefix of about one key
** in three, checked against the keys a plain scan collected: the keys it
** records are those, less the ones that begin as the last key recorded
** did for the length its answer skipped (a key that does, which the scan
** may still report, is answered the same and not recorded). */
typedef struct Skipping {
    const Keys *all; /* every key, in order (NULL: nothing to check) */
    int iNext;       /* the next of them not yet accounted for */
    uint8_t aSkip[FTS_MAX_KEY]; /* the prefix passed over, and its length */
    int nSkip;
} Skipping;

static int skip_answer(const uint8_t *key, int nKey) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < nKey; i++) h = (h ^ key[i]) * 16777619u;
    return h % 3 == 0 ? FTS_SCAN_SKIP(1 + (int)((h >> 8) % (uint32_t)nKey)) : 0;
}

/* Does key[0..nKey) begin with x's prefix passed over? */
static int skipped(const Skipping *x, const uint8_t *key, int nKey) {
    return x->nSkip && nKey >= x->nSkip && memcmp(key, x->aSkip, (size_t)x->nSkip) == 0;
}

static int skipping_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    Skipping *x = ctx;
    (void)info;
    if (nKey < 1 || nKey > FTS_MAX_KEY) abort();
    if (skipped(x, key, nKey)) return FTS_SCAN_SKIP(x->nSkip);
    if (x->all) {
        const Keys *k = x->all;
        while (x->iNext < k->n && skipped(x, k->a[x->iNext], k->an[x->iNext])) x->iNext++;
        if (x->iNext >= k->n || k->an[x->iNext] != nKey || memcmp(k->a[x->iNext], key, (size_t)nKey) != 0) abort();
        x->iNext++;
    }
    int r = skip_answer(key, nKey);
    x->nSkip = -r;
    memcpy(x->aSkip, key, (size_t)x->nSkip);
    return r;
}

/* Moves one cursor over its list; bAdvance picks xShallow + xAdvance with
** targets from the input bytes. */
static void walk(FtsSource *src, const uint8_t *key, int nKey, int bAdvance, const uint8_t *data,
                 size_t size, uint32_t *aPos) {
    LpError err;
    FtsTermInfo info;
    FtsPostings *p;
    /* Half the walks open where the lookup found the key (xOpenFound). */
    if (bAdvance && src->vt->xLookup(src, key, nKey, &info, &err) == 1) {
        p = src->vt->xOpenFound(src, key, nKey, &info, 1, &err);
    } else {
        p = src->vt->xOpen(src, key, nKey, 1, &err);
    }
    if (!p) {
        expect_corrupt(err.code, &err);
        return;
    }
    uint32_t prev = 0, steps = 0;
    size_t iByte = 0;
    for (;;) {
        uint32_t d;
        if (bAdvance) {
            uint64_t gap = size ? data[iByte++ % size] : 1;
            uint64_t t = steps == 0 ? gap : (uint64_t)prev + 1 + gap * gap;
            if (t >= FTS_BEFORE_FIRST) break; /* no legal target is left */
            uint32_t target = (uint32_t)t;
            uint32_t maxTf, minLen;
            uint32_t last = p->vt->xShallow(p, target, &maxTf, &minLen);
            if (last != FTS_NO_DOC && last >= src->nDocs) abort();
            d = p->vt->xAdvance(p, target);
            if (d != FTS_NO_DOC && d < target) abort();
        } else {
            d = p->vt->xNext(p);
        }
        if (d == FTS_NO_DOC) break;
        if (d >= src->nDocs || (steps > 0 && d <= prev) || ++steps > src->nDocs) abort();
        prev = d;
        if (p->tf <= MAX_TF) {
            int rc = p->vt->xPositions(p, aPos, &err);
            if (rc != LP_OK) expect_corrupt(rc, &err);
        }
    }
    int rc = fts_segr_postings_status(p, &err);
    if (rc != LP_OK) expect_corrupt(rc, &err);
    p->vt->xClose(p);
}

/* Looks for one key among those a scan reports. */
typedef struct Want {
    const uint8_t *key;
    int nKey;
    int bSeen;
} Want;

static int want_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    Want *w = ctx;
    (void)info;
    if (nKey == w->nKey && memcmp(key, w->key, (size_t)nKey) == 0) w->bSeen = 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* A heap copy of exactly size bytes, so ASan catches any read past the
    ** end (the fuzzer's own buffer may have slack). */
    uint8_t *a = malloc(size ? size : 1);
    if (!a) return 0;
    if (size) memcpy(a, data, size);
    FtsSegment *seg = NULL;
    LpError err;
    int rc = fts_segr_open_mem(a, size, NAME, FTS_SEGR_NOCHECKSUM, &seg, &err);
    if (rc != LP_OK) {
        if (seg) abort();
        if (rc != LP_NOMEM) expect_corrupt(rc, &err);
        free(a);
        return 0;
    }
    FtsSource *src = fts_segr_source(seg);
    int rcCheck = rc = fts_segr_check(seg, &err);
    if (rc != LP_OK && rc != LP_NOMEM) expect_corrupt(rc, &err);
    FtsSegInfo info;
    rc = fts_segr_info(seg, &info, &err);
    if (rc != LP_OK) expect_corrupt(rc, &err);
    for (int f = 0; f < src->nFields; f++) {
        for (uint32_t d = 0; d < src->nDocs && d < 64; d++)
            (void)src->vt->xDocLen(src, f, d);
        (void)src->vt->xDocLen(src, f, src->nDocs);
    }

    static Keys keys;
    keys.n = keys.nAll = 0;
    keys.nDocs = src->nDocs;
    int rcScan = rc = src->vt->xScan(src, NULL, 0, collect, &keys, &err);
    if (rc != LP_OK) expect_corrupt(rc, &err);
    static uint32_t aPos[MAX_TF];
    for (int i = 0; i < keys.n; i++) {
        FtsTermInfo ti;
        int found = src->vt->xLookup(src, keys.a[i], keys.an[i], &ti, &err);
        if (found < 0) expect_corrupt(-found, &err);
        /* A sound segment: every key the scan met is found, as the scan
        ** saw it. */
        if (rcCheck == LP_OK && (found != 1 || ti.df != keys.adf[i] || ti.cf != keys.acf[i])) abort();
        /* A prefix scan from each key's first two bytes. */
        int n = 0;
        rc = src->vt->xScan(src, keys.a[i], keys.an[i] < 2 ? keys.an[i] : 2, count, &n, &err);
        if (rc != LP_OK) expect_corrupt(rc, &err);
        /* Infix scans for the key's last 3 bytes (the infix filter is
        ** built from the whole dictionary on the first) and its last 2
        ** (the blocks of the trigrams beginning or ending with them, and of
        ** the 2-byte term): a sound segment reports the key. */
        for (int nPart = 3; nPart >= 2; nPart--) {
            if (keys.an[i] < nPart + 1) continue;
            const uint8_t *aPart[1] = {keys.a[i] + keys.an[i] - nPart};
            int anPart[1] = {nPart};
            FtsScanHas has = {aPart, anPart, 1};
            Want w = {keys.a[i], keys.an[i], 0};
            rc = src->vt->xScanHas(src, keys.a[i], 1, &has, want_key, &w, &err);
            if (rc != LP_OK && rc != LP_NOMEM) expect_corrupt(rc, &err);
            if (rcCheck == LP_OK && rc == LP_OK && !w.bSeen) abort();
        }
        walk(src, keys.a[i], keys.an[i], 0, data, size, aPos);
        walk(src, keys.a[i], keys.an[i], 1, data, size, aPos);
    }
    if (rcCheck == LP_OK && rcScan == LP_OK && keys.nAll == keys.n) probe_neighbours(src, &keys);
    /* every key, passing over some: what a fuzzy search does */
    static Skipping x;
    memset(&x, 0, sizeof(x));
    x.all = rcCheck == LP_OK && rcScan == LP_OK && keys.nAll == keys.n ? &keys : NULL;
    rc = src->vt->xScanSkip(src, NULL, 0, skipping_key, &x, &err);
    if (rc != LP_OK) expect_corrupt(rc, &err);
    if (x.all && rc == LP_OK) {
        while (x.iNext < keys.n && skipped(&x, keys.a[x.iNext], keys.an[x.iNext])) x.iNext++;
        if (x.iNext != keys.n) abort(); /* a key left out */
    }
    fts_segr_close(seg);
    free(a);
    return 0;
}
