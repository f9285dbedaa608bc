/*
** test_fts_segment.c — unit tests for the sealed full-text segment
** (src/fts/segwriter.c, segreader.c).
**
** A random reference collection (keys of several fields, df from 1 to
** 10k, tf and positions, doc lengths of every stored width) is written
** with the writer and read back through the FtsSource interface; every
** answer is compared with the reference: lookups of present and absent
** keys, full scans with positions, xAdvance to random targets (inside a
** block, across blocks, past the end), xShallow's block bounds and
** impacts, prefix scans, doc lengths. Then the damage tests: writer order
** violations, truncation at every section boundary, every single-bit flip
** (caught by the checksums), and random damage with the checksums off,
** which must end in LP_CORRUPT naming the file or in plain answers, never
** in a crash (the suite runs under ASan+UBSan) or an endless loop.
**
** The PRNG is seeded with constants, so failures reproduce.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fts/segment.h"
#include "fts/source.h"
#include "text/analyzer.h"
#include "util/crc32c.h"
#include "util/error.h"

/* ------------------------------------------------------------- helpers */

static uint64_t g_rng;

static uint64_t rnd(void) {
    uint64_t x = (g_rng += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint32_t rnd_below(uint64_t n) {
    return (uint32_t)(rnd() % n);
}

static char g_zDir[64];

/* A path in the test's temporary folder. */
static const char *tmp_path(const char *zName) {
    static char z[2][128];
    static int i;
    i ^= 1;
    snprintf(z[i], sizeof(z[i]), "%s/%s", g_zDir, zName);
    return z[i];
}

static int key_cmp(const uint8_t *a, int na, const uint8_t *b, int nb) {
    int c = memcmp(a, b, (size_t)(na < nb ? na : nb));
    return c ? c : na - nb;
}

/* ----------------------------------------------------------- reference */

typedef struct RefTerm {
    uint8_t key[FTS_MAX_KEY];
    int nKey;
    uint32_t df;
    uint64_t cf;
    uint32_t *aDoc;    /* df documents */
    uint32_t *aTf;     /* their tf */
    uint64_t *aPosOff; /* df+1 offsets into aPos */
    uint32_t *aPos;    /* all positions */
} RefTerm;

typedef struct Ref {
    uint32_t nDocs;
    int nFields;
    uint32_t **aaLen; /* per field, nDocs lengths */
    RefTerm *aTerm;
    size_t nTerm;
} Ref;

static int refterm_cmp(const void *x, const void *y) {
    const RefTerm *a = x, *b = y;
    return key_cmp(a->key, a->nKey, b->key, b->nKey);
}

static const RefTerm *ref_find(const Ref *r, const uint8_t *key, int nKey) {
    RefTerm t;
    memcpy(t.key, key, (size_t)nKey);
    t.nKey = nKey;
    return bsearch(&t, r->aTerm, r->nTerm, sizeof(RefTerm), refterm_cmp);
}

static void ref_free(Ref *r) {
    for (size_t i = 0; i < r->nTerm; i++) {
        free(r->aTerm[i].aDoc);
        free(r->aTerm[i].aTf);
        free(r->aTerm[i].aPosOff);
        free(r->aTerm[i].aPos);
    }
    free(r->aTerm);
    for (int f = 0; f < r->nFields; f++)
        free(r->aaLen[f]);
    free(r->aaLen);
    memset(r, 0, sizeof(*r));
}

static int g_bWords; /* random_key makes words of 3-12 letters a-z */

static void random_key(Ref *r, RefTerm *t) {
    t->key[0] = (uint8_t)rnd_below((uint64_t)r->nFields);
    int n;
    switch (g_bWords ? 10 : rnd_below(10)) {
    case 10:
        n = 3 + (int)rnd_below(10);
        for (int i = 0; i < n; i++)
            t->key[1 + i] = (uint8_t)('a' + rnd_below(26));
        break;
    case 0: /* arbitrary bytes */
        n = (int)rnd_below(12);
        for (int i = 0; i < n; i++)
            t->key[1 + i] = (uint8_t)rnd();
        break;
    case 1: /* the longest term */
        n = FTS_MAX_KEY - 1;
        for (int i = 0; i < n; i++)
            t->key[1 + i] = (uint8_t)('a' + rnd_below(2));
        break;
    default: /* short words over a small alphabet: many shared prefixes */
        n = 1 + (int)rnd_below(9);
        for (int i = 0; i < n; i++)
            t->key[1 + i] = (uint8_t)('a' + rnd_below(4));
        break;
    }
    t->nKey = 1 + n;
}

static uint32_t random_df(uint32_t nDocs, uint32_t maxDf) {
    static const uint32_t aEdge[] = {127, 128, 129, 255, 256, 257, 383, 384, 385};
    uint32_t df;
    uint32_t k = rnd_below(100);
    if (k < 45)
        df = 1;
    else if (k < 70)
        df = 2 + rnd_below(20);
    else if (k < 82)
        df = 100 + rnd_below(200);
    else if (k < 94)
        df = aEdge[rnd_below(LP_ARRAY_SIZE(aEdge))];
    else
        df = 1 + rnd_below(maxDf);
    return df > nDocs ? nDocs : df;
}

/* Fills t's postings: df distinct documents, tf and positions. */
static void random_postings(const Ref *r, RefTerm *t, uint32_t df) {
    t->df = df;
    t->aDoc = malloc(df * sizeof(uint32_t));
    t->aTf = malloc(df * sizeof(uint32_t));
    t->aPosOff = malloc((df + 1) * sizeof(uint64_t));
    assert_non_null(t->aDoc);
    assert_non_null(t->aTf);
    assert_non_null(t->aPosOff);
    if (rnd_below(6) == 0) {
        /* A dense run: gaps of 0, packed with width 0. */
        uint32_t start = rnd_below(r->nDocs - df + 1);
        for (uint32_t i = 0; i < df; i++)
            t->aDoc[i] = start + i;
    } else {
        /* Selection sampling: df of nDocs, ascending. */
        uint32_t need = df, k = 0;
        for (uint32_t d = 0; d < r->nDocs && need > 0; d++) {
            if (rnd_below(r->nDocs - d) < need) {
                t->aDoc[k++] = d;
                need--;
            }
        }
    }
    uint64_t nPos = 0;
    for (uint32_t i = 0; i < df; i++) {
        uint32_t k = rnd_below(1000);
        t->aTf[i] = k < 700   ? 1
                    : k < 900 ? 2 + rnd_below(4)
                    : k < 998 ? 1 + rnd_below(100)
                              : 200 + rnd_below(300);
        nPos += t->aTf[i];
    }
    t->aPos = malloc((nPos ? nPos : 1) * sizeof(uint32_t));
    assert_non_null(t->aPos);
    t->cf = nPos;
    uint64_t o = 0;
    for (uint32_t i = 0; i < df; i++) {
        t->aPosOff[i] = o;
        uint64_t p = rnd_below(3) == 0 ? rnd_below(20) : rnd();
        p %= (uint64_t)UINT32_MAX + 1;
        for (uint32_t j = 0; j < t->aTf[i]; j++) {
            t->aPos[o++] = (uint32_t)p;
            /* Non-decreasing, with repeats, up to UINT32_MAX. */
            uint64_t step = rnd_below(4) == 0 ? 0 : rnd_below(50);
            if (rnd_below(50) == 0) step = rnd() >> 34;
            p = p + step > UINT32_MAX ? UINT32_MAX : p + step;
        }
    }
    t->aPosOff[df] = o;
}

static void ref_make(Ref *r, uint64_t seed, uint32_t nDocs, int nFields, size_t nKeys,
                     uint32_t maxDf) {
    g_rng = seed;
    memset(r, 0, sizeof(*r));
    r->nDocs = nDocs;
    r->nFields = nFields;
    r->aaLen = calloc((size_t)nFields, sizeof(uint32_t *));
    assert_non_null(r->aaLen);
    for (int f = 0; f < nFields; f++) {
        r->aaLen[f] = malloc((nDocs ? nDocs : 1) * sizeof(uint32_t));
        assert_non_null(r->aaLen[f]);
        int mode = f % 4; /* widths 0, 1, 2, 4 */
        for (uint32_t d = 0; d < nDocs; d++) {
            r->aaLen[f][d] = mode == 0   ? 0
                             : mode == 1 ? rnd_below(256)
                             : mode == 2 ? rnd_below(65536)
                                         : (uint32_t)rnd();
        }
    }
    r->aTerm = calloc(nKeys ? nKeys : 1, sizeof(RefTerm));
    assert_non_null(r->aTerm);
    for (size_t i = 0; i < nKeys; i++)
        random_key(r, &r->aTerm[i]);
    qsort(r->aTerm, nKeys, sizeof(RefTerm), refterm_cmp);
    size_t n = 0;
    for (size_t i = 0; i < nKeys; i++) {
        if (n > 0 && refterm_cmp(&r->aTerm[n - 1], &r->aTerm[i]) == 0) continue;
        r->aTerm[n++] = r->aTerm[i];
    }
    r->nTerm = n;
    for (size_t i = 0; i < n && nDocs > 0; i++) {
        random_postings(r, &r->aTerm[i], random_df(nDocs, maxDf));
    }
    if (nDocs == 0) r->nTerm = 0;
}

/* Term t's nEarlier in r: its documents that r's keys of the same term in
** lower fields hold. */
static uint32_t ref_earlier(const Ref *r, const RefTerm *t) {
    uint32_t n = 0;
    for (uint32_t k = 0; k < t->df; k++) {
        int bLow = 0;
        for (size_t i = 0; i < r->nTerm && !bLow; i++) {
            const RefTerm *l = &r->aTerm[i];
            if (l->key[0] >= t->key[0] || l->nKey != t->nKey ||
                memcmp(l->key + 1, t->key + 1, (size_t)t->nKey - 1) != 0) {
                continue;
            }
            for (uint32_t j = 0; j < l->df && !bLow; j++) bLow = l->aDoc[j] == t->aDoc[k];
        }
        n += (uint32_t)bLow;
    }
    return n;
}

/* Writes t's postings k..k+n as one fts_segw_postings call, positions
** encoded as the file stores them. */
static int write_batch(FtsSegWriter *w, const RefTerm *t, uint32_t k, uint32_t n) {
    size_t nPos = 0;
    uint8_t *aEnc = malloc((size_t)(t->aPosOff[k + n] - t->aPosOff[k]) * 5 + 1);
    assert_non_null(aEnc);
    for (uint32_t i = k; i < k + n; i++) {
        uint32_t prev = 0;
        for (uint64_t j = t->aPosOff[i]; j < t->aPosOff[i + 1]; j++) {
            uint32_t v = t->aPos[j] - prev;
            prev = t->aPos[j];
            for (; v >= 0x80; v >>= 7) aEnc[nPos++] = (uint8_t)(v | 0x80);
            aEnc[nPos++] = (uint8_t)v;
        }
    }
    int rc = fts_segw_postings(w, t->aDoc + k, t->aTf + k, n, aEnc, nPos);
    free(aEnc);
    return rc;
}

/* Writes r to zPath. Each field's lengths are given just before its
** first key (or at the start, when bLensFirst), to exercise both. With
** seed non-zero, postings go in batches of random sizes (0 to 300, across
** blocks or not) through fts_segw_postings; the file must be the same. */
static unsigned g_writeFlags; /* fts_segw_open_flags' flags for ref_write */

static void ref_write_batched(const Ref *r, const char *zPath, int bLensFirst, uint64_t seed) {
    LpError err;
    FtsSegWriter *w = fts_segw_open_flags(zPath, r->nDocs, r->nFields, g_writeFlags, &err);
    assert_non_null(w);
    int nGiven = 0;
    if (bLensFirst) {
        for (; nGiven < r->nFields; nGiven++) {
            assert_int_equal(fts_segw_doclens(w, nGiven, r->aaLen[nGiven]), LP_OK);
        }
    }
    for (size_t i = 0; i < r->nTerm; i++) {
        const RefTerm *t = &r->aTerm[i];
        for (; nGiven <= t->key[0]; nGiven++) {
            assert_int_equal(fts_segw_doclens(w, nGiven, r->aaLen[nGiven]), LP_OK);
        }
        assert_int_equal(fts_segw_term(w, t->key, t->nKey), LP_OK);
        for (uint32_t k = 0; k < t->df && !seed; k++) {
            assert_int_equal(fts_segw_posting(w, t->aDoc[k], t->aPos + t->aPosOff[k], t->aTf[k]),
                             LP_OK);
        }
        for (uint32_t k = 0, n; k < t->df && seed; k += n) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            n = (uint32_t)(seed >> 33) % 301;
            if (n > t->df - k) n = t->df - k;
            assert_int_equal(write_batch(w, t, k, n), LP_OK);
        }
        if (t->key[0] > 0) assert_int_equal(fts_segw_earlier(w, ref_earlier(r, t)), LP_OK);
    }
    for (; nGiven < r->nFields; nGiven++) {
        assert_int_equal(fts_segw_doclens(w, nGiven, r->aaLen[nGiven]), LP_OK);
    }
    int rc = fts_segw_finish(w, &err);
    if (rc != LP_OK) fail_msg("finish: %s", err.zMsg);
}

static void ref_write(const Ref *r, const char *zPath, int bLensFirst) {
    ref_write_batched(r, zPath, bLensFirst, 0);
}

static FtsSegment *seg_open_ok(const char *zPath) {
    FtsSegment *seg = NULL;
    LpError err;
    int rc = fts_segr_open(zPath, &seg, &err);
    if (rc != LP_OK) fail_msg("open: %s", err.zMsg);
    return seg;
}

/* --------------------------------------------------------- comparisons */

/* First index of t's list with doc >= target (df when none). */
static uint32_t ref_lower(const RefTerm *t, uint32_t target) {
    uint32_t lo = 0, hi = t->df;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->aDoc[mid] < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* What xShallow(target) must answer: the block holding the first doc >=
** target (lists < 128 are one block). */
static uint32_t ref_shallow(const Ref *r, const RefTerm *t, uint32_t target, uint32_t *pMaxTf,
                            uint32_t *pMinLen) {
    uint32_t i = ref_lower(t, target);
    *pMaxTf = 0;
    *pMinLen = UINT32_MAX;
    if (i == t->df) return FTS_NO_DOC;
    uint32_t b0 = t->df < FTS_BLOCK ? 0 : i / FTS_BLOCK * FTS_BLOCK;
    uint32_t b1 = t->df < FTS_BLOCK ? t->df : b0 + FTS_BLOCK;
    if (b1 > t->df) b1 = t->df;
    for (uint32_t k = b0; k < b1; k++) {
        uint32_t len = r->aaLen[t->key[0]][t->aDoc[k]];
        if (t->aTf[k] > *pMaxTf) *pMaxTf = t->aTf[k];
        if (len < *pMinLen) *pMinLen = len;
    }
    return t->aDoc[b1 - 1];
}

static uint32_t *g_aPos; /* scratch for xPositions, big enough for any tf */

static void check_positions(FtsPostings *p, const RefTerm *t, uint32_t i) {
    LpError err;
    assert_int_equal(p->tf, t->aTf[i]);
    int rc = p->vt->xPositions(p, g_aPos, &err);
    if (rc != LP_OK) fail_msg("positions: %s", err.zMsg);
    assert_memory_equal(g_aPos, t->aPos + t->aPosOff[i], (size_t)t->aTf[i] * 4);
}

static void check_list_impact(const Ref *r, const RefTerm *t, const FtsPostings *p) {
    uint32_t maxTf = 0, minLen = UINT32_MAX;
    for (uint32_t k = 0; k < t->df; k++) {
        uint32_t len = r->aaLen[t->key[0]][t->aDoc[k]];
        if (t->aTf[k] > maxTf) maxTf = t->aTf[k];
        if (len < minLen) minLen = len;
    }
    assert_int_equal(p->df, t->df);
    assert_int_equal(p->maxTf, maxTf);
    assert_int_equal(p->minLen, minLen);
}

/* Opens t's list one of three ways, which must not differ: xOpen;
** xLookup then xOpenFound at the entry it found; xOpenFound given a
** location that is wrong (it must notice and search). */
static FtsPostings *open_some_way(FtsSource *src, const RefTerm *t, LpError *err) {
    uint32_t how = rnd_below(3);
    if (how == 0) return src->vt->xOpen(src, t->key, t->nKey, 1, err);
    FtsTermInfo info;
    assert_int_equal(src->vt->xLookup(src, t->key, t->nKey, &info, err), 1);
    assert_int_equal(info.df, t->df);
    if (how == 2) {
        info.aLoc[0] = rnd_below(1u << 20);
        info.aLoc[1] = rnd_below(1u << 20);
        info.aLoc[2] = (uint64_t)rnd_below(8) << 32 | rnd_below(64);
    }
    return src->vt->xOpenFound(src, t->key, t->nKey, &info, 1, err);
}

/* Full scan with xNext, positions of a random subset (so the cursor must
** skip the others'). */
static void check_scan(FtsSource *src, const Ref *r, const RefTerm *t) {
    LpError err;
    FtsPostings *p = open_some_way(src, t, &err);
    if (!p) fail_msg("open: %s", err.zMsg);
    assert_int_equal(p->doc, FTS_BEFORE_FIRST);
    check_list_impact(r, t, p);
    uint32_t every = 1 + rnd_below(4);
    for (uint32_t i = 0; i < t->df; i++) {
        assert_int_equal(p->vt->xNext(p), t->aDoc[i]);
        assert_int_equal(p->doc, t->aDoc[i]);
        assert_int_equal(p->tf, t->aTf[i]);
        if (i % every == 0) check_positions(p, t, i);
    }
    assert_int_equal(p->vt->xNext(p), FTS_NO_DOC);
    assert_int_equal(p->doc, FTS_NO_DOC);
    assert_int_equal(p->vt->xNext(p), FTS_NO_DOC);
    assert_int_equal(p->vt->xAdvance(p, 0), FTS_NO_DOC);
    assert_int_equal(fts_segr_postings_status(p, &err), LP_OK);
    p->vt->xClose(p);
}

/* Random xNext / xAdvance / xShallow / xPositions against the reference. */
static void check_moves(FtsSource *src, const Ref *r, const RefTerm *t) {
    LpError err;
    FtsPostings *p = src->vt->xOpen(src, t->key, t->nKey, 1, &err);
    if (!p) fail_msg("open: %s", err.zMsg);
    uint32_t i = UINT32_MAX; /* reference index of the current doc */
    for (int step = 0; step < 100000; step++) {
        uint32_t cur = i == UINT32_MAX ? 0 : t->aDoc[i] + 1; /* smallest legal target */
        uint32_t k = rnd_below(10);
        if (k < 2) {
            uint32_t got = p->vt->xNext(p);
            i = i == UINT32_MAX ? 0 : i + 1;
            if (i >= t->df) {
                assert_int_equal(got, FTS_NO_DOC);
                break;
            }
            assert_int_equal(got, t->aDoc[i]);
        } else if (k < 7) {
            uint64_t target = cur;
            switch (rnd_below(6)) {
            case 0:
                break;
            case 1:
                target += rnd_below(4);
                break;
            case 2:
                target += rnd_below(200);
                break;
            case 3:
                target += rnd_below(r->nDocs / 8 + 1);
                break;
            case 4:
                target += rnd_below(r->nDocs + 1);
                break;
            default:
                target = rnd_below(2) ? r->nDocs : FTS_BEFORE_FIRST - 1;
                break;
            }
            if (target > FTS_BEFORE_FIRST - 1) target = FTS_BEFORE_FIRST - 1;
            uint32_t got = p->vt->xAdvance(p, (uint32_t)target);
            i = ref_lower(t, (uint32_t)target);
            if (i >= t->df) {
                assert_int_equal(got, FTS_NO_DOC);
                assert_int_equal(p->doc, FTS_NO_DOC);
                break;
            }
            assert_int_equal(got, t->aDoc[i]);
            assert_int_equal(p->tf, t->aTf[i]);
        } else if (k < 9) {
            /* Any target, even behind the current document. */
            uint32_t target = rnd_below(2) ? cur + rnd_below(3 * FTS_BLOCK * 8)
                                           : rnd_below((uint64_t)r->nDocs + 2);
            uint32_t wantTf, wantLen, gotTf = 7, gotLen = 7;
            uint32_t want = ref_shallow(r, t, target, &wantTf, &wantLen);
            uint32_t docBefore = p->doc;
            assert_int_equal(p->vt->xShallow(p, target, &gotTf, &gotLen), want);
            assert_int_equal(gotTf, wantTf);
            assert_int_equal(gotLen, wantLen);
            assert_int_equal(p->doc, docBefore);
        } else if (i != UINT32_MAX) {
            check_positions(p, t, i);
        }
    }
    assert_int_equal(fts_segr_postings_status(p, &err), LP_OK);
    p->vt->xClose(p);
}

typedef struct ScanCtx {
    uint8_t aKey[4096][FTS_MAX_KEY]; /* copies: the scan's key buffer is its own */
    int anKey[4096];
    FtsTermInfo aInfo[4096];
    int n;
    int nStop; /* return 7 after this many keys; 0: never */
} ScanCtx;

static int scan_cb(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    ScanCtx *s = ctx;
    if (s->n < 4096) {
        memcpy(s->aKey[s->n], key, (size_t)nKey);
        s->anKey[s->n] = nKey;
        s->aInfo[s->n] = *info;
    }
    s->n++;
    return s->nStop && s->n == s->nStop ? 7 : 0;
}

static void check_prefix(FtsSource *src, const Ref *r, const uint8_t *pre, int nPre) {
    static ScanCtx s;
    memset(&s, 0, sizeof(s));
    LpError err;
    size_t i0 = 0; /* first reference key >= pre */
    while (i0 < r->nTerm) {
        const RefTerm *t = &r->aTerm[i0];
        int c = memcmp(t->key, pre, (size_t)(t->nKey < nPre ? t->nKey : nPre));
        if (c > 0 || (c == 0 && t->nKey >= nPre)) break;
        i0++;
    }
    int nWant = 0;
    for (size_t i = i0; i < r->nTerm; i++) {
        const RefTerm *t = &r->aTerm[i];
        if (t->nKey < nPre || memcmp(t->key, pre, (size_t)nPre) != 0) break;
        nWant++;
    }
    assert_int_equal(src->vt->xScan(src, pre, nPre, scan_cb, &s, &err), LP_OK);
    assert_int_equal(s.n, nWant);
    for (int k = 0; k < nWant && k < 4096; k++) {
        const RefTerm *t = &r->aTerm[i0 + (size_t)k];
        assert_int_equal(s.aInfo[k].df, t->df);
        assert_int_equal(s.aInfo[k].cf, t->cf);
        assert_int_equal(s.anKey[k], t->nKey);
        assert_memory_equal(s.aKey[k], t->key, (size_t)t->nKey);
    }
    /* The stop value comes back, after exactly that many keys. */
    if (nWant >= 2) {
        memset(&s, 0, sizeof(s));
        s.nStop = 1 + (int)rnd_below((uint64_t)nWant - 1);
        assert_int_equal(src->vt->xScan(src, pre, nPre, scan_cb, &s, &err), 7);
        assert_int_equal(s.n, s.nStop);
    }
}

/* Does t's term (its bytes after the field byte) hold every part? */
static int term_has(const uint8_t *key, int nKey, const uint8_t *const *aPart, const int *anPart,
                    int nPart) {
    for (int i = 0; i < nPart; i++) {
        if (nKey < 1 || !memmem(key + 1, (size_t)nKey - 1, aPart[i], (size_t)anPart[i])) return 0;
    }
    return 1;
}

/* xScanHas(pre, parts): every key with the prefix holding the parts, in
** order, with its counts (other keys may come too, but only keys with the
** prefix); the stop value comes back. Returns how many keys it reported. */
typedef struct HasCheck {
    const Ref *r;
    const uint8_t *pre;
    int nPre;
    const uint8_t *const *aPart;
    const int *anPart;
    int nPart;
    size_t i;   /* reference keys passed */
    int n;      /* keys reported */
    int nStop;  /* return 7 after this many keys; 0: never */
    int bWrong; /* a key out of order, not in r, without the prefix, with
                ** wrong counts, or a key holding the parts left out */
} HasCheck;

static int has_pre(const HasCheck *h, const RefTerm *t) {
    return t->nKey >= h->nPre && memcmp(t->key, h->pre, (size_t)h->nPre) == 0;
}

static int has_cb(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    HasCheck *h = ctx;
    h->n++;
    for (;; h->i++) {
        if (h->i >= h->r->nTerm) {
            h->bWrong = 1;
            return 1;
        }
        const RefTerm *t = &h->r->aTerm[h->i];
        if (t->nKey == nKey && memcmp(t->key, key, (size_t)nKey) == 0) {
            h->i++;
            if (!has_pre(h, t) || info->df != t->df || info->cf != t->cf) h->bWrong = 1;
            break;
        }
        if (has_pre(h, t) && term_has(t->key, t->nKey, h->aPart, h->anPart, h->nPart)) {
            h->bWrong = 1; /* left out */
            return 1;
        }
    }
    return h->nStop && h->n == h->nStop ? 7 : 0;
}

static int check_has(FtsSource *src, const Ref *r, const uint8_t *pre, int nPre,
                     const uint8_t *const *aPart, const int *anPart, int nPart) {
    static const uint8_t aNone[1];
    HasCheck h = {r, pre ? pre : aNone, nPre, aPart, anPart, nPart, 0, 0, 0, 0};
    LpError err;
    FtsScanHas has = {aPart, anPart, nPart};
    assert_int_equal(src->vt->xScanHas(src, pre, nPre, &has, has_cb, &h, &err), LP_OK);
    assert_false(h.bWrong);
    for (; h.i < r->nTerm; h.i++) { /* none left out after the last */
        const RefTerm *t = &r->aTerm[h.i];
        assert_false(has_pre(&h, t) && term_has(t->key, t->nKey, aPart, anPart, nPart));
    }
    int nGot = h.n;
    if (nGot >= 2) {
        HasCheck h2 = {r, h.pre, nPre, aPart, anPart, nPart, 0, 0, 1, 0};
        assert_int_equal(src->vt->xScanHas(src, pre, nPre, &has, has_cb, &h2, &err), 7);
        assert_int_equal(h2.n, 1);
        assert_false(h2.bWrong);
    }
    return nGot;
}

/* xScanHas with parts cut from random keys (so that keys hold them),
** random bytes, a part missing from every key, and parts too short to
** narrow anything; returns the keys reported over all of them. Also
** checks that the infix filter's size is reported once built. */
static uint64_t check_has_all(FtsSegment *seg, const Ref *r) {
    FtsSource *src = fts_segr_source(seg);
    uint64_t nGot = 0;
    for (int q = 0; q < 120 && r->nTerm > 0; q++) {
        const uint8_t *aPart[3];
        int anPart[3], nPart = 1 + (int)rnd_below(3);
        uint8_t aBuf[3][8];
        for (int i = 0; i < nPart; i++) {
            const RefTerm *t = &r->aTerm[rnd_below(r->nTerm)];
            int nTerm = t->nKey - 1, n = 1 + (int)rnd_below(6);
            if (rnd_below(8) == 0 || nTerm < 1) {
                for (int j = 0; j < n; j++) aBuf[i][j] = (uint8_t)rnd();
                aPart[i] = aBuf[i];
            } else {
                if (n > nTerm) n = nTerm;
                aPart[i] = t->key + 1 + rnd_below((uint64_t)(nTerm - n + 1));
            }
            anPart[i] = n;
        }
        uint8_t pre[2] = {(uint8_t)rnd_below((uint64_t)r->nFields), 'a'};
        int nPre = (int)rnd_below(3);
        nGot += (uint64_t)check_has(src, r, pre, nPre, aPart, anPart, nPart);
    }
    FtsSegInfo info;
    LpError err;
    assert_int_equal(fts_segr_info(seg, &info, &err), LP_OK);
    assert_true(r->nTerm == 0 || info.szInfix > 0);
    return nGot;
}

/* A key-checking scan callback: compares each key with the reference. */
typedef struct KeyCheck {
    const Ref *r;
    size_t i;
} KeyCheck;

static int keycheck_cb(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    KeyCheck *k = ctx;
    if (k->i >= k->r->nTerm) return 1;
    const RefTerm *t = &k->r->aTerm[k->i++];
    if (nKey != t->nKey || memcmp(key, t->key, (size_t)nKey) != 0 || info->df != t->df ||
        info->cf != t->cf) {
        return 2;
    }
    return 0;
}

/* Everything the source can be asked, compared with r. */
static void check_all(FtsSegment *seg, const Ref *r, int bFull) {
    FtsSource *src = fts_segr_source(seg);
    LpError err;
    assert_int_equal(src->nDocs, r->nDocs);
    assert_int_equal(src->nFields, r->nFields);
    for (int f = 0; f < r->nFields; f++) {
        uint64_t sum = 0;
        for (uint32_t d = 0; d < r->nDocs; d++) {
            assert_int_equal(src->vt->xDocLen(src, f, d), r->aaLen[f][d]);
            sum += r->aaLen[f][d];
        }
        assert_int_equal(src->aSumLen[f], sum);
        assert_int_equal(src->vt->xDocLen(src, f, r->nDocs), 0);
    }
    assert_int_equal(src->vt->xDocLen(src, r->nFields, 0), 0);
    assert_int_equal(src->vt->xDocLen(src, -1, 0), 0);

    int rc = fts_segr_check(seg, &err);
    if (rc != LP_OK) fail_msg("check: %s", err.zMsg);
    FtsSegInfo info;
    assert_int_equal(fts_segr_info(seg, &info, &err), LP_OK);
    uint64_t nPost = 0, nPos = 0;
    for (size_t i = 0; i < r->nTerm; i++) {
        nPost += r->aTerm[i].df;
        nPos += r->aTerm[i].cf;
    }
    assert_int_equal(info.nTerms, r->nTerm);
    assert_int_equal(info.nPostings, nPost);
    assert_int_equal(info.nPositions, nPos);
    assert_true(info.szPositions <= info.szData);
    /* (a filter built in memory takes no file bytes; a stored one does) */
    assert_int_equal(info.szFile, 32 + info.szData + info.szDict + info.szDictIndex + info.szDocLens + 120 +
                                      (g_writeFlags & FTS_SEGW_INFIX ? info.szInfix : 0));

    /* Every key, in order, through a scan of everything. */
    KeyCheck kc = {r, 0};
    assert_int_equal(src->vt->xScan(src, NULL, 0, keycheck_cb, &kc, &err), LP_OK);
    assert_int_equal(kc.i, r->nTerm);

    for (size_t i = 0; i < r->nTerm; i++) {
        const RefTerm *t = &r->aTerm[i];
        FtsTermInfo ti;
        assert_int_equal(src->vt->xLookup(src, t->key, t->nKey, &ti, &err), 1);
        assert_int_equal(ti.df, t->df);
        assert_int_equal(ti.cf, t->cf);
        /* Neighbours that may or may not exist. */
        uint8_t k2[FTS_MAX_KEY + 1];
        int aN[3] = {t->nKey - 1, t->nKey, t->nKey + 1};
        for (int v = 0; v < 3; v++) {
            int n = aN[v];
            if (n < 1 || n > FTS_MAX_KEY) continue;
            memcpy(k2, t->key, (size_t)t->nKey);
            if (v == 1) k2[n - 1] ^= (uint8_t)(1 + rnd_below(255));
            if (v == 2) k2[n - 1] = (uint8_t)rnd();
            const RefTerm *want = ref_find(r, k2, n);
            int got = src->vt->xLookup(src, k2, n, &ti, &err);
            assert_int_equal(got, want != NULL);
            if (want) assert_int_equal(ti.df, want->df);
        }
        if (bFull || rnd_below(4) == 0) {
            check_scan(src, r, t);
            check_moves(src, r, t);
        }
    }

    /* Absent keys give empty cursors. */
    static const uint8_t aMissing[] = {0xff, 0xff, 0xff, 0xff};
    FtsTermInfo ti;
    assert_int_equal(src->vt->xLookup(src, aMissing, 4, &ti, &err),
                     ref_find(r, aMissing, 4) != NULL);
    assert_int_equal(src->vt->xLookup(src, aMissing, 0, &ti, &err), 0);
    assert_int_equal(src->vt->xLookup(src, aMissing, FTS_MAX_KEY + 1, &ti, &err), 0);
    if (!ref_find(r, aMissing, 4)) {
        FtsPostings *p = src->vt->xOpen(src, aMissing, 4, 0, &err);
        assert_non_null(p);
        assert_int_equal(p->doc, FTS_BEFORE_FIRST);
        assert_int_equal(p->df, 0);
        assert_int_equal(p->maxTf, 0);
        uint32_t a, b;
        assert_int_equal(p->vt->xShallow(p, 0, &a, &b), FTS_NO_DOC);
        assert_int_equal(p->vt->xAdvance(p, 5), FTS_NO_DOC);
        assert_int_equal(p->vt->xNext(p), FTS_NO_DOC);
        p->vt->xClose(p);
    }

    /* Prefix scans: none, each field, prefixes of keys, random bytes. */
    static const uint8_t aNone[1];
    check_prefix(src, r, aNone, 0);
    for (int f = 0; f < r->nFields; f++) {
        uint8_t b = (uint8_t)f;
        check_prefix(src, r, &b, 1);
    }
    for (int k = 0; k < 200 && r->nTerm > 0; k++) {
        const RefTerm *t = &r->aTerm[rnd_below(r->nTerm)];
        uint8_t pre[FTS_MAX_KEY + 1];
        int n = 1 + (int)rnd_below((uint64_t)t->nKey + 1);
        memcpy(pre, t->key, (size_t)t->nKey);
        if (n > t->nKey) pre[n - 1] = (uint8_t)('a' + rnd_below(4));
        check_prefix(src, r, pre, n);
    }
    (void)check_has_all(seg, r);
}

/* ----------------------------------------------------------- the tests */

static int setup(void **state) {
    (void)state;
    snprintf(g_zDir, sizeof(g_zDir), "/tmp/lp_test_fts_seg_XXXXXX");
    if (!mkdtemp(g_zDir)) return -1;
    g_aPos = malloc(1000 * sizeof(uint32_t));
    return g_aPos ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    static const char *const az[] = {"big", "small", "empty", "one", "trunc", "w", "tiny", "blk"};
    for (size_t i = 0; i < LP_ARRAY_SIZE(az); i++)
        unlink(tmp_path(az[i]));
    rmdir(g_zDir);
    free(g_aPos);
    return 0;
}

static uint8_t *read_file(const char *zPath, size_t *pn);

/* Postings given in batches (fts_segw_postings) make the file that
** postings given one by one make. */
/* The two files hold the same bytes. */
static void expect_same_files(const char *zPath1, const char *zPath2) {
    size_t n1, n2;
    uint8_t *a1 = read_file(zPath1, &n1), *a2 = read_file(zPath2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a1, a2, n1);
    free(a1);
    free(a2);
}

static void expect_batched_same(const Ref *r, const char *zPath, uint64_t seed) {
    const char *zPath2 = tmp_path("w2");
    ref_write_batched(r, zPath2, 0, seed);
    expect_same_files(zPath, zPath2);
    unlink(zPath2);
}

static void test_roundtrip_large(void **state) {
    (void)state;
    Ref r;
    ref_make(&r, 42, 20000, 6, 1500, 10000);
    ref_write(&r, tmp_path("big"), 0);
    expect_batched_same(&r, tmp_path("big"), 7);
    FtsSegment *seg = seg_open_ok(tmp_path("big"));
    check_all(seg, &r, 0);
    fts_segr_close(seg);
    ref_free(&r);
}

static void test_roundtrip_many_seeds(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        Ref r;
        uint32_t nDocs = 1 + (uint32_t)(seed * 97 % 3000);
        ref_make(&r, seed, nDocs, 1 + (int)(seed % 5), 50 + seed * 20, 2000);
        ref_write(&r, tmp_path("small"), (int)(seed & 1));
        expect_batched_same(&r, tmp_path("small"), seed);
        FtsSegment *seg = seg_open_ok(tmp_path("small"));
        check_all(seg, &r, 1);
        fts_segr_close(seg);
        ref_free(&r);
    }
}

/* On words over 26 letters, a part cut from one key is in few of them:
** xScanHas must report every key holding it (check_has) and, reading only
** the blocks whose trigrams allow it, far fewer keys than a scan. */
static void test_scan_has_narrows(void **state) {
    (void)state;
    Ref r;
    g_bWords = 1;
    ref_make(&r, 99, 500, 2, 20000, 20);
    g_bWords = 0;
    ref_write(&r, tmp_path("words"), 0);
    FtsSegment *seg = seg_open_ok(tmp_path("words"));
    FtsSource *src = fts_segr_source(seg);
    uint64_t nGot = 0;
    int nQuery = 0;
    for (size_t i = 0; i < r.nTerm; i += 97, nQuery++) {
        const RefTerm *t = &r.aTerm[i];
        const uint8_t *aPart[2] = {t->key + 1, t->key + t->nKey - 3};
        int anPart[2] = {3, 3};
        nGot += (uint64_t)check_has(src, &r, NULL, 0, aPart, anPart, 2);
        uint8_t f = t->key[0];
        nGot += (uint64_t)check_has(src, &r, &f, 1, aPart + 1, anPart + 1, 1);
    }
    /* Each part is held by about 20,000 * 10 / 26^3 = 11 keys, in as many
    ** blocks of 8. */
    assert_true(nGot < (uint64_t)nQuery * 2 * 200);
    /* A part of 2 bytes (`*ab*`) is held by about 20,000 * 10 / 26^2 = 300
    ** keys: the blocks of the trigrams that begin or end with it are read,
    ** about a third of the field's (a scan of every key without them). */
    uint64_t nPair = 0, nField = 0;
    for (size_t i = 0; i < r.nTerm; i += 997) {
        const RefTerm *t = &r.aTerm[i];
        const uint8_t *aPart[1] = {t->key + 1 + (t->nKey - 3) / 2};
        int anPart[1] = {2};
        uint8_t f = t->key[0];
        nPair += (uint64_t)check_has(src, &r, &f, 1, aPart, anPart, 1);
        for (size_t j = 0; j < r.nTerm; j++) nField += r.aTerm[j].key[0] == f;
    }
    assert_true(nPair * 2 < nField);
    nGot += check_has_all(seg, &r);
    fts_segr_close(seg);
    ref_free(&r);
}

static void test_empty_and_single(void **state) {
    (void)state;
    LpError err;
    /* No documents at all. */
    Ref r;
    ref_make(&r, 7, 0, 1, 0, 1);
    ref_write(&r, tmp_path("empty"), 1);
    FtsSegment *seg = seg_open_ok(tmp_path("empty"));
    check_all(seg, &r, 1);
    FtsSegInfo info;
    assert_int_equal(fts_segr_info(seg, &info, &err), LP_OK);
    assert_int_equal(info.nTerms, 0);
    fts_segr_close(seg);
    ref_free(&r);
    /* Documents but no keys. */
    ref_make(&r, 8, 10, 3, 0, 1);
    ref_write(&r, tmp_path("empty"), 1);
    seg = seg_open_ok(tmp_path("empty"));
    check_all(seg, &r, 1);
    fts_segr_close(seg);
    ref_free(&r);
    /* One document, one key, one position. */
    FtsSegWriter *w = fts_segw_open(tmp_path("one"), 1, 1, &err);
    assert_non_null(w);
    uint32_t len = 3, pos = 2;
    const uint8_t key[] = {0, 'x'};
    assert_int_equal(fts_segw_doclens(w, 0, &len), LP_OK);
    assert_int_equal(fts_segw_term(w, key, 2), LP_OK);
    assert_int_equal(fts_segw_posting(w, 0, &pos, 1), LP_OK);
    /* A key without postings is not written. */
    const uint8_t key2[] = {0, 'y'};
    assert_int_equal(fts_segw_term(w, key2, 2), LP_OK);
    assert_int_equal(fts_segw_finish(w, &err), LP_OK);
    seg = seg_open_ok(tmp_path("one"));
    FtsSource *src = fts_segr_source(seg);
    FtsTermInfo ti;
    assert_int_equal(src->vt->xLookup(src, key, 2, &ti, &err), 1);
    assert_int_equal(ti.df, 1);
    assert_int_equal(ti.cf, 1);
    assert_int_equal(src->vt->xLookup(src, key2, 2, &ti, &err), 0);
    FtsPostings *p = src->vt->xOpen(src, key, 2, 1, &err);
    assert_non_null(p);
    assert_int_equal(p->maxTf, 1);
    assert_int_equal(p->minLen, 3);
    uint32_t mt, ml;
    assert_int_equal(p->vt->xShallow(p, 0, &mt, &ml), 0);
    assert_int_equal(p->vt->xNext(p), 0);
    uint32_t got;
    assert_int_equal(p->vt->xPositions(p, &got, &err), LP_OK);
    assert_int_equal(got, 2);
    assert_int_equal(p->vt->xNext(p), FTS_NO_DOC);
    assert_int_equal(p->vt->xPositions(p, &got, &err), LP_INTERNAL);
    p->vt->xClose(p);
    assert_int_equal(fts_segr_check(seg, &err), LP_OK);
    fts_segr_close(seg);
}

/* Writes a segment of three documents and two fields where "a" is in the
** title of documents 0 and 1 and the body of 1 and 2 (true nEarlier of the
** body key: 1), storing nEarlier as given. */
static const uint8_t kTitle[] = {0, 'a'}, kBody[] = {1, 'a'};

static void write_title_body_a(const char *zPath, uint32_t nEarlier) {
    LpError err;
    uint32_t aLen[3] = {2, 2, 2}, pos = 0;
    FtsSegWriter *w = fts_segw_open(zPath, 3, 2, &err);
    assert_non_null(w);
    assert_int_equal(fts_segw_doclens(w, 0, aLen), LP_OK);
    assert_int_equal(fts_segw_doclens(w, 1, aLen), LP_OK);
    assert_int_equal(fts_segw_term(w, kTitle, 2), LP_OK);
    assert_int_equal(fts_segw_posting(w, 0, &pos, 1), LP_OK);
    assert_int_equal(fts_segw_posting(w, 1, &pos, 1), LP_OK);
    assert_int_equal(fts_segw_term(w, kBody, 2), LP_OK);
    assert_int_equal(fts_segw_posting(w, 1, &pos, 1), LP_OK);
    assert_int_equal(fts_segw_posting(w, 2, &pos, 1), LP_OK);
    assert_int_equal(fts_segw_earlier(w, nEarlier), LP_OK);
    assert_int_equal(fts_segw_finish(w, &err), LP_OK);
}

/* nEarlier as stored, and fts_segr_check recounting it: "a" is in the
** title of documents 0 and 1 and the body of 1 and 2, so its body key's
** count is 1. A file saying 0 opens and answers (the count only skews
** scores), and the check names the key's entry. */
static void test_earlier_checked(void **state) {
    (void)state;
    LpError err;
    for (uint32_t nGiven = 0; nGiven <= 1; nGiven++) {
        const char *zPath = tmp_path(nGiven ? "earlier-ok" : "earlier-bad");
        write_title_body_a(zPath, nGiven);
        FtsSegment *seg = seg_open_ok(zPath);
        FtsSource *src = fts_segr_source(seg);
        FtsTermInfo ti;
        assert_int_equal(src->vt->xLookup(src, kTitle, 2, &ti, &err), 1);
        assert_int_equal(ti.nEarlier, 0);
        assert_int_equal(src->vt->xLookup(src, kBody, 2, &ti, &err), 1);
        assert_int_equal(ti.nEarlier, nGiven);
        if (nGiven == 1) {
            assert_int_equal(fts_segr_check(seg, &err), LP_OK);
        } else {
            assert_int_equal(fts_segr_check(seg, &err), LP_CORRUPT);
            if (!strstr(err.zMsg, "nEarlier 0, but lower fields hold 1 of its documents"))
                fail_msg("%s", err.zMsg);
        }
        fts_segr_close(seg);
    }
}

/* Each misuse: the failing call's code, sticky afterwards, reported by
** finish with the file name, and no file left behind. */
static void expect_writer_error(FtsSegWriter *w, int rc, int want, const char *zPath,
                                const char *zNeedle) {
    LpError err;
    assert_int_equal(rc, want);
    const uint8_t k[] = {0, 'z', 'z', 'z'};
    assert_int_equal(fts_segw_term(w, k, 4), want); /* sticky */
    assert_int_equal(fts_segw_finish(w, &err), want);
    assert_int_equal(err.code, want);
    assert_non_null(strstr(err.zMsg, zPath));
    if (!strstr(err.zMsg, zNeedle)) fail_msg("'%s' lacks '%s'", err.zMsg, zNeedle);
    struct stat st;
    assert_int_not_equal(stat(zPath, &st), 0);
}

static uint8_t *read_file(const char *zPath, size_t *pn);

static void test_writer_errors(void **state) {
    (void)state;
    LpError err;
    const char *zPath = tmp_path("w");
    uint32_t aLen[4] = {1, 2, 3, 4}, aPos[3] = {1, 2, 3}, aBad[2] = {5, 4};
    const uint8_t ka[] = {0, 'a'}, kb[] = {0, 'b'}, kab[] = {0, 'a', 'b'}, kf1[] = {1, 'a'};
    const uint8_t kf9[] = {9, 'a'};

    assert_null(fts_segw_open(zPath, 4, 0, &err));
    assert_int_equal(err.code, LP_BADINPUT);
    assert_null(fts_segw_open(zPath, 4, FTS_MAX_FIELDS + 1, &err));
    assert_null(fts_segw_open(zPath, FTS_NO_DOC, 1, &err));
    assert_null(fts_segw_open("/nonexistent-dir/x", 4, 1, &err));
    assert_int_equal(err.code, LP_IOERR);

#define NEWW(nf)                                                                                   \
    FtsSegWriter *w = fts_segw_open(zPath, 4, nf, &err);                                           \
    assert_non_null(w);                                                                            \
    for (int f_ = 0; f_ < nf; f_++)                                                                \
        assert_int_equal(fts_segw_doclens(w, f_, aLen), LP_OK);

    { /* keys out of order, or repeated */
        NEWW(1);
        assert_int_equal(fts_segw_term(w, kb, 2), LP_OK);
        expect_writer_error(w, fts_segw_term(w, ka, 2), LP_BADINPUT, zPath, "does not come after");
    }
    {
        NEWW(1);
        assert_int_equal(fts_segw_term(w, kab, 3), LP_OK);
        expect_writer_error(w, fts_segw_term(w, kab, 3), LP_BADINPUT, zPath, "does not come after");
    }
    { /* a prefix comes first: "ab" then "a" is out of order */
        NEWW(1);
        assert_int_equal(fts_segw_term(w, kab, 3), LP_OK);
        expect_writer_error(w, fts_segw_term(w, ka, 2), LP_BADINPUT, zPath, "does not come after");
    }
    { /* key length and field */
        NEWW(1);
        expect_writer_error(w, fts_segw_term(w, ka, 0), LP_BADINPUT, zPath, "key of 0 bytes");
    }
    {
        NEWW(1);
        uint8_t big[FTS_MAX_KEY + 1] = {0};
        expect_writer_error(w, fts_segw_term(w, big, FTS_MAX_KEY + 1), LP_BADINPUT, zPath, "bytes");
    }
    {
        NEWW(2);
        expect_writer_error(w, fts_segw_term(w, kf9, 2), LP_BADINPUT, zPath, "field out of range");
    }
    { /* nEarlier: after a key, 0 in field 0, at most the key's df */
        NEWW(2);
        expect_writer_error(w, fts_segw_earlier(w, 0), LP_BADINPUT, zPath, "before the first key");
    }
    {
        NEWW(2);
        assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
        assert_int_equal(fts_segw_earlier(w, 0), LP_OK);
        expect_writer_error(w, fts_segw_earlier(w, 1), LP_BADINPUT, zPath, "nEarlier 1 in field 0");
    }
    {
        NEWW(2);
        const uint8_t kf1b[] = {1, 'b'};
        assert_int_equal(fts_segw_term(w, kf1, 2), LP_OK);
        assert_int_equal(fts_segw_posting(w, 0, aPos, 1), LP_OK);
        assert_int_equal(fts_segw_earlier(w, 2), LP_OK);
        expect_writer_error(w, fts_segw_term(w, kf1b, 2), LP_BADINPUT, zPath,
                            "nEarlier 2 over its 1 documents");
    }
    { /* the field's lengths must come before its first key */
        FtsSegWriter *w = fts_segw_open(zPath, 4, 2, &err);
        assert_int_equal(fts_segw_doclens(w, 0, aLen), LP_OK);
        assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
        expect_writer_error(w, fts_segw_term(w, kf1, 2), LP_BADINPUT, zPath, "doc lengths");
    }
    {
        NEWW(1);
        expect_writer_error(w, fts_segw_doclens(w, 0, aLen), LP_BADINPUT, zPath, "given twice");
    }
    {
        NEWW(1);
        expect_writer_error(w, fts_segw_doclens(w, 3, aLen), LP_BADINPUT, zPath, "field 3");
    }
    { /* missing lengths at the end */
        FtsSegWriter *w = fts_segw_open(zPath, 4, 2, &err);
        assert_int_equal(fts_segw_doclens(w, 0, aLen), LP_OK);
        assert_int_equal(fts_segw_finish(w, &err), LP_BADINPUT);
        assert_non_null(strstr(err.zMsg, "field 1 not given"));
    }
    { /* postings */
        NEWW(1);
        expect_writer_error(w, fts_segw_posting(w, 0, aPos, 1), LP_BADINPUT, zPath,
                            "before the first key");
    }
    {
        NEWW(1);
        assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
        assert_int_equal(fts_segw_posting(w, 2, aPos, 1), LP_OK);
        expect_writer_error(w, fts_segw_posting(w, 2, aPos, 1), LP_BADINPUT, zPath,
                            "does not come after");
    }
    {
        NEWW(1);
        assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
        expect_writer_error(w, fts_segw_posting(w, 4, aPos, 1), LP_BADINPUT, zPath, "out of range");
    }
    {
        NEWW(1);
        assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
        expect_writer_error(w, fts_segw_posting(w, 1, aPos, 0), LP_BADINPUT, zPath, "tf 0");
    }
    {
        NEWW(1);
        assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
        expect_writer_error(w, fts_segw_posting(w, 1, NULL, 1), LP_BADINPUT, zPath,
                            "without positions");
    }
    {
        NEWW(1);
        assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
        expect_writer_error(w, fts_segw_posting(w, 1, aBad, 2), LP_BADINPUT, zPath, "positions");
    }
    { /* encoded positions: too few, too many, overlong, unfinished, none */
        static const struct {
            const char *z;
            size_t n;
            uint32_t tf;
        } aEnc[] = {{"\x01", 1, 2},
                    {"\x01\x02", 2, 1},
                    {"\x81\x81\x81\x81\x81\x01", 6, 1},
                    {"\x01\x81", 2, 1},
                    {"\x81\x81\x81\x81\x01\x01", 6, 2}};
        for (size_t i = 0; i < LP_ARRAY_SIZE(aEnc); i++) {
            NEWW(1);
            assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
            const uint8_t *p = (const uint8_t *)aEnc[i].z;
            int rc = fts_segw_posting_enc(w, 1, aEnc[i].tf, p, aEnc[i].n);
            if (i == LP_ARRAY_SIZE(aEnc) - 1) { /* a 5-byte varint is a uint32's longest */
                assert_int_equal(rc, LP_OK);
                fts_segw_abort(w);
                continue;
            }
            expect_writer_error(w, rc, LP_BADINPUT, zPath, "varints");
        }
        NEWW(1);
        assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
        expect_writer_error(w, fts_segw_posting_enc(w, 1, 1, NULL, 0), LP_BADINPUT, zPath,
                            "without positions");
        /* the same through fts_segw_postings, alone and after a good posting */
        for (size_t i = 0; i < 2 * LP_ARRAY_SIZE(aEnc); i++) {
            size_t e = i % LP_ARRAY_SIZE(aEnc);
            int bAfter = i >= LP_ARRAY_SIZE(aEnc);
            uint8_t aBuf[8] = {7};
            memcpy(aBuf + bAfter, aEnc[e].z, aEnc[e].n);
            uint32_t aD[2] = {0, 1}, aT[2] = {1, aEnc[e].tf};
            NEWW(1);
            assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
            int rc = fts_segw_postings(w, aD + !bAfter, aT + !bAfter, 1 + (uint32_t)bAfter, aBuf,
                                       aEnc[e].n + (size_t)bAfter);
            if (e == LP_ARRAY_SIZE(aEnc) - 1) {
                assert_int_equal(rc, LP_OK);
                fts_segw_abort(w);
                continue;
            }
            expect_writer_error(w, rc, LP_BADINPUT, zPath, "varints");
        }
    }
    { /* fts_segw_postings: each posting checked as fts_segw_posting checks it */
        const uint8_t enc[3] = {1, 1, 1};
        uint32_t aD[3] = {0, 2, 2}, aT[3] = {1, 1, 1}, aD4[2] = {1, 4}, aT0[2] = {1, 0};
        {
            NEWW(1);
            expect_writer_error(w, fts_segw_postings(w, aD, aT, 1, enc, 1), LP_BADINPUT, zPath,
                                "before the first key");
        }
        {
            NEWW(1);
            assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
            assert_int_equal(fts_segw_postings(w, aD, aT, 0, NULL, 0), LP_OK);
            expect_writer_error(w, fts_segw_postings(w, aD, aT, 3, enc, 3), LP_BADINPUT, zPath,
                                "document 2 does not come after 2");
        }
        {
            NEWW(1);
            assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
            assert_int_equal(fts_segw_postings(w, aD + 1, aT, 1, enc, 1), LP_OK);
            expect_writer_error(w, fts_segw_postings(w, aD + 2, aT, 1, enc, 1), LP_BADINPUT, zPath,
                                "does not come after");
        }
        {
            NEWW(1);
            assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
            expect_writer_error(w, fts_segw_postings(w, aD4, aT, 2, enc, 2), LP_BADINPUT, zPath,
                                "document 4 out of range");
        }
        {
            NEWW(1);
            assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
            expect_writer_error(w, fts_segw_postings(w, aD, aT0, 2, enc, 1), LP_BADINPUT, zPath,
                                "document 2 with tf 0");
        }
        {
            NEWW(1);
            assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
            expect_writer_error(w, fts_segw_postings(w, aD, aT, 1, NULL, 0), LP_BADINPUT, zPath,
                                "without positions");
        }
    }
    { /* the same positions, encoded or not, make the same file */
        const char *zPath2 = tmp_path("w2");
        for (int k = 0; k < 2; k++) {
            FtsSegWriter *w = fts_segw_open(k ? zPath2 : zPath, 4, 1, &err);
            assert_non_null(w);
            assert_int_equal(fts_segw_doclens(w, 0, aLen), LP_OK);
            assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
            for (uint32_t d = 0; d < 4; d++) {
                const uint8_t enc[3] = {1, 1, 1}; /* 1, 2, 3 */
                assert_int_equal(k ? fts_segw_posting_enc(w, d, 3, enc, 3) : fts_segw_posting(w, d, aPos, 3),
                                 LP_OK);
            }
            assert_int_equal(fts_segw_finish(w, &err), LP_OK);
        }
        expect_same_files(zPath, zPath2);
        unlink(zPath);
        unlink(zPath2);
    }
    { /* abort removes the partial file */
        NEWW(1);
        assert_int_equal(fts_segw_term(w, ka, 2), LP_OK);
        assert_int_equal(fts_segw_posting(w, 1, aPos, 3), LP_OK);
        fts_segw_abort(w);
        struct stat st;
        assert_int_not_equal(stat(zPath, &st), 0);
        fts_segw_abort(NULL);
    }
#undef NEWW
}

static uint8_t *read_file(const char *zPath, size_t *pn) {
    FILE *f = fopen(zPath, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *a = malloc((size_t)n);
    assert_non_null(a);
    assert_int_equal(fread(a, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *pn = (size_t)n;
    return a;
}

static void write_file(const char *zPath, const uint8_t *a, size_t n) {
    FILE *f = fopen(zPath, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(a, 1, n, f), n);
    fclose(f);
}

static void expect_corrupt(int rc, const LpError *err, const char *zName) {
    assert_int_equal(rc, LP_CORRUPT);
    assert_int_equal(err->code, LP_CORRUPT);
    if (!strstr(err->zMsg, zName)) fail_msg("'%s' does not name %s", err->zMsg, zName);
}

/* Truncation at every section boundary (and nearby), through real files. */
static void test_truncated(void **state) {
    (void)state;
    Ref r;
    ref_make(&r, 99, 3000, 3, 300, 3000);
    ref_write(&r, tmp_path("big"), 0);
    size_t n;
    uint8_t *a = read_file(tmp_path("big"), &n);
    /* Section offsets from the footer. */
    size_t aCut[64], nCut = 0;
    const uint8_t *f = a + n - 120;
    for (int s = 0; s < 4; s++) {
        uint64_t off, size;
        memcpy(&off, f + 16 * s, 8);
        memcpy(&size, f + 16 * s + 8, 8);
        aCut[nCut++] = (size_t)off;
        aCut[nCut++] = (size_t)(off + size);
    }
    aCut[nCut++] = 0;
    aCut[nCut++] = 32;
    aCut[nCut++] = n - 120;
    aCut[nCut++] = n - 8;
    size_t nBase = nCut;
    for (size_t i = 0; i < nBase; i++) {
        if (aCut[i] > 0) aCut[nCut++] = aCut[i] - 1;
        aCut[nCut++] = aCut[i] + 1;
    }
    aCut[nCut++] = n - 1;
    LpError err;
    for (size_t i = 0; i < nCut; i++) {
        if (aCut[i] >= n) continue;
        write_file(tmp_path("trunc"), a, aCut[i]);
        FtsSegment *seg = (FtsSegment *)&err; /* must come back NULL */
        int rc = fts_segr_open(tmp_path("trunc"), &seg, &err);
        expect_corrupt(rc, &err, tmp_path("trunc"));
        assert_null(seg);
    }
    /* A missing file is an I/O error, not corruption. */
    FtsSegment *seg;
    assert_int_equal(fts_segr_open(tmp_path("nope"), &seg, &err), LP_IOERR);
    free(a);
    ref_free(&r);
}

/* With checksums on, every single-bit flip and every truncation of a small
** file is refused at open. */
/* With FTS_SEGW_INFIX the file holds the infix filter: read at open (its
** size reported before any scan), the same lists a scan would build from
** the dictionary (fts_segr_check), so xScanHas finds what the reference
** says; the rest of the file is what it is without it. */
static void test_infix_stored(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        Ref r;
        g_bWords = seed % 2;
        ref_make(&r, 300 + seed, 1 + (uint32_t)(seed * 131 % 2000), 1 + (int)(seed % 3),
                 seed == 8 ? 0 : 200 + seed * 300, 300);
        g_bWords = 0;
        g_writeFlags = FTS_SEGW_INFIX;
        ref_write(&r, tmp_path("ix"), (int)(seed & 1));
        expect_batched_same(&r, tmp_path("ix"), seed);
        g_writeFlags = 0;
        ref_write(&r, tmp_path("plain"), (int)(seed & 1));
        FtsSegment *seg = seg_open_ok(tmp_path("ix"));
        FtsSegInfo info, plain;
        LpError err;
        assert_int_equal(fts_segr_info(seg, &info, &err), LP_OK);
        FtsSegment *segPlain = seg_open_ok(tmp_path("plain"));
        assert_int_equal(fts_segr_info(segPlain, &plain, &err), LP_OK);
        fts_segr_close(segPlain);
        assert_int_equal(plain.szInfix, 0); /* not built before a scan */
        assert_true(info.szInfix >= 12);
        assert_int_equal(info.szFile, plain.szFile + info.szInfix);
        g_writeFlags = FTS_SEGW_INFIX;
        check_all(seg, &r, 1);
        g_writeFlags = 0;
        fts_segr_close(seg);
        ref_free(&r);
    }
}

/* With FTS_SEGW_INFIX_EXACT the stored filter holds the exact forms' keys
** only ('=' after the field byte, as a table with exact forms writes
** them): the check accepts it, it is smaller than the filter of every key,
** and xScanHas still reports every key holding the parts, within the exact
** forms' ranges (narrowed by the filter) and outside them (read whole).
** The flag without INFIX is refused. */
static void test_infix_exact(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        Ref r;
        g_bWords = 1;
        ref_make(&r, 900 + seed, 400 + (uint32_t)seed * 50, 1 + (int)(seed % 2), 700, 150);
        g_bWords = 0;
        /* every other key becomes an exact form: no word holds '=', so
        ** none collides with a key left as it was */
        for (size_t i = 1; i < r.nTerm; i += 2) {
            RefTerm *t = &r.aTerm[i];
            memmove(t->key + 2, t->key + 1, (size_t)t->nKey - 1);
            t->key[1] = ANALYZER_EXACT_MARK;
            t->nKey++;
        }
        qsort(r.aTerm, r.nTerm, sizeof(RefTerm), refterm_cmp);
        g_writeFlags = FTS_SEGW_INFIX;
        ref_write(&r, tmp_path("ixa"), 1);
        g_writeFlags = FTS_SEGW_INFIX | FTS_SEGW_INFIX_EXACT;
        ref_write(&r, tmp_path("ixe"), 1);
        FtsSegment *segAll = seg_open_ok(tmp_path("ixa"));
        FtsSegment *seg = seg_open_ok(tmp_path("ixe"));
        FtsSegInfo all, exact;
        LpError err;
        assert_int_equal(fts_segr_info(segAll, &all, &err), LP_OK);
        assert_int_equal(fts_segr_info(seg, &exact, &err), LP_OK);
        fts_segr_close(segAll);
        assert_true(exact.szInfix >= 12 && exact.szInfix < all.szInfix);
        check_all(seg, &r, 1); /* fts_segr_check, and scans outside the exact forms */
        FtsSource *src = fts_segr_source(seg);
        int nGot = 0;
        for (int q = 0; q < 80; q++) {
            const RefTerm *t = &r.aTerm[rnd_below(r.nTerm)];
            if (t->nKey < 3 || t->key[1] != ANALYZER_EXACT_MARK) continue;
            int nTerm = t->nKey - 2, n = 1 + (int)rnd_below(4);
            if (n > nTerm) n = nTerm;
            const uint8_t *aPart[1] = {t->key + 2 + rnd_below((uint64_t)(nTerm - n + 1))};
            int anPart[1] = {n};
            uint8_t pre[2] = {t->key[0], ANALYZER_EXACT_MARK};
            nGot += check_has(src, &r, pre, 2, aPart, anPart, 1);
        }
        assert_true(nGot > 0);
        g_writeFlags = 0;
        fts_segr_close(seg);
        ref_free(&r);
    }
    /* INFIX_EXACT (bit 2) without INFIX (bit 1) */
    Ref r;
    ref_make(&r, 77, 50, 1, 30, 20);
    ref_write(&r, tmp_path("ixn"), 1);
    size_t n;
    uint8_t *a = read_file(tmp_path("ixn"), &n);
    a[20] |= 4;
    uint32_t crc = crc32c_update(0, a, 28);
    for (int i = 0; i < 4; i++) a[28 + i] = (uint8_t)(crc >> (8 * i)); /* little-endian */
    FtsSegment *seg;
    LpError err;
    expect_corrupt(fts_segr_open_mem(a, n, "ixn.seg", 0, &seg, &err), &err, "ixn.seg");
    assert_non_null(strstr(err.zMsg, "INFIX_EXACT without INFIX"));
    free(a);
    ref_free(&r);
}

/* Damage to a stored infix filter: any bit flipped is refused at open
** (its checksum); with checksums skipped, at open (its layout) or by
** fts_segr_check (lists that are not the dictionary's), except in the
** checksum itself. */
static void test_infix_damaged(void **state) {
    (void)state;
    Ref r;
    g_bWords = 1;
    ref_make(&r, 77, 300, 2, 60, 100);
    g_bWords = 0;
    g_writeFlags = FTS_SEGW_INFIX;
    ref_write(&r, tmp_path("ixd"), 1);
    g_writeFlags = 0;
    size_t n;
    uint8_t *a = read_file(tmp_path("ixd"), &n);
    uint8_t *b = malloc(n);
    assert_non_null(b);
    FtsSegment *seg = seg_open_ok(tmp_path("ixd"));
    FtsSegInfo info;
    LpError err;
    assert_int_equal(fts_segr_info(seg, &info, &err), LP_OK);
    fts_segr_close(seg);
    size_t end = n - 120, start = end - (size_t)info.szInfix;
    int nOpen = 0, nCheck = 0;
    for (size_t i = start; i < end; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(b, a, n);
            b[i] ^= (uint8_t)(1 << bit);
            expect_corrupt(fts_segr_open_mem(b, n, "ixd.seg", 0, &seg, &err), &err, "ixd.seg");
            int rc = fts_segr_open_mem(b, n, "ixd.seg", FTS_SEGR_NOCHECKSUM, &seg, &err);
            if (rc != LP_OK) {
                expect_corrupt(rc, &err, "ixd.seg");
                nOpen++;
                continue;
            }
            rc = fts_segr_check(seg, &err);
            fts_segr_close(seg);
            if (i >= end - 4) {
                assert_int_equal(rc, LP_OK); /* the checksum, unread */
                continue;
            }
            expect_corrupt(rc, &err, "ixd.seg");
            assert_non_null(strstr(err.zMsg, "infix"));
            nCheck++;
        }
    }
    print_message("infix damage: %d refused at open, %d by check\n", nOpen, nCheck);
    assert_true(nOpen > 0 && nCheck > 0);
    free(b);
    free(a);
    ref_free(&r);
}

static void test_every_bitflip_detected(void **state) {
    (void)state;
    Ref r;
    ref_make(&r, 5, 150, 2, 25, 150);
    ref_write(&r, tmp_path("tiny"), 1);
    size_t n;
    uint8_t *a = read_file(tmp_path("tiny"), &n);
    uint8_t *b = malloc(n);
    assert_non_null(b);
    LpError err;
    FtsSegment *seg;
    for (size_t i = 0; i < n; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(b, a, n);
            b[i] ^= (uint8_t)(1 << bit);
            expect_corrupt(fts_segr_open_mem(b, n, "tiny.seg", 0, &seg, &err), &err, "tiny.seg");
        }
    }
    for (size_t k = 0; k < n; k++) {
        expect_corrupt(fts_segr_open_mem(a, k, "tiny.seg", 0, &seg, &err), &err, "tiny.seg");
    }
    assert_int_equal(fts_segr_open_mem(a, n, "tiny.seg", 0, &seg, &err), LP_OK);
    fts_segr_close(seg);
    free(b);
    free(a);
    ref_free(&r);
}

typedef struct Tally {
    int nOpen;   /* refused at open */
    int nCheck;  /* opened, refused by fts_segr_check */
    int nCursor; /* a cursor ended with an error */
    int nLookup; /* a lookup, scan or xOpen failed */
} Tally;

static int count_cb(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    (void)key;
    (void)nKey;
    (void)info;
    (*(int *)ctx)++;
    return 0;
}

/* Uses a segment that may be damaged in every way the API allows; every
** error must be LP_CORRUPT naming the file. Loops are bounded by nDocs. */
static void exercise(FtsSegment *seg, const Ref *r, const char *zName, Tally *t) {
    FtsSource *src = fts_segr_source(seg);
    LpError err;
    int rc = fts_segr_check(seg, &err);
    if (rc != LP_OK) {
        expect_corrupt(rc, &err, zName);
        t->nCheck++;
    }
    FtsSegInfo info;
    rc = fts_segr_info(seg, &info, &err);
    if (rc != LP_OK) expect_corrupt(rc, &err, zName);
    int nKeys = 0;
    rc = src->vt->xScan(src, NULL, 0, count_cb, &nKeys, &err);
    if (rc != LP_OK) expect_corrupt(rc, &err, zName);
    for (int f = 0; f < src->nFields; f++) {
        for (uint32_t d = 0; d < src->nDocs && d < 50; d++)
            (void)src->vt->xDocLen(src, f, d);
    }
    for (size_t i = 0; i < r->nTerm; i++) {
        const RefTerm *rt = &r->aTerm[i];
        FtsTermInfo ti;
        int found = src->vt->xLookup(src, rt->key, rt->nKey, &ti, &err);
        if (found < 0) {
            expect_corrupt(-found, &err, zName);
            t->nLookup++;
        }
        if (i % 8 == 0) {
            uint8_t pre = rt->key[0];
            rc = src->vt->xScan(src, &pre, 1, count_cb, &nKeys, &err);
            if (rc != LP_OK) expect_corrupt(rc, &err, zName);
        }
        for (int pass = 0; pass < 2; pass++) {
            FtsPostings *p = src->vt->xOpen(src, rt->key, rt->nKey, 1, &err);
            if (!p) {
                expect_corrupt(err.code, &err, zName);
                t->nLookup++;
                break;
            }
            uint32_t steps = 0, prev = 0;
            int bFirst = 1;
            for (;;) {
                uint32_t d;
                if (pass == 0) {
                    d = p->vt->xNext(p);
                } else {
                    uint32_t mt, ml;
                    uint32_t tgt = bFirst ? rnd_below(50) : prev + 1 + rnd_below(300);
                    (void)p->vt->xShallow(p, tgt, &mt, &ml);
                    d = p->vt->xAdvance(p, tgt);
                }
                if (d == FTS_NO_DOC) break;
                assert_true(d < src->nDocs);
                assert_true(bFirst || d > prev);
                prev = d;
                bFirst = 0;
                assert_true(++steps <= src->nDocs);
                if (p->tf <= 1000) {
                    rc = p->vt->xPositions(p, g_aPos, &err);
                    if (rc != LP_OK) expect_corrupt(rc, &err, zName);
                }
            }
            rc = fts_segr_postings_status(p, &err);
            if (rc != LP_OK) {
                expect_corrupt(rc, &err, zName);
                t->nCursor++;
            }
            p->vt->xClose(p);
        }
    }
}

/* Random damage with the checksums off: bytes overwritten anywhere, with
** a bias to the data and dictionary sections, where the decoders work. */
static void test_random_damage(void **state) {
    (void)state;
    Ref r;
    ref_make(&r, 1234, 1000, 2, 120, 1000);
    ref_write(&r, tmp_path("small"), 1);
    size_t n;
    uint8_t *a = read_file(tmp_path("small"), &n);
    uint8_t *b = malloc(n);
    assert_non_null(b);
    Tally t = {0};
    for (int rep = 0; rep < 400; rep++) {
        memcpy(b, a, n);
        int nHit = 1 + (int)rnd_below(3);
        for (int k = 0; k < nHit; k++) {
            /* Mostly data and dictionary; sometimes the header, footer,
            ** index or doc lengths (the last ~1/8 before the footer). */
            size_t at = rnd_below(8) == 0
                            ? (rnd_below(2) ? rnd_below(32) : n - 120 + rnd_below(120))
                        : rnd_below(8) == 0 ? n - 120 - 1 - rnd_below((n - 152) / 8)
                                            : 32 + rnd_below(n - 32 - 120);
            b[at] = rnd_below(2) ? (uint8_t)(b[at] ^ (1u << rnd_below(8))) : (uint8_t)rnd();
        }
        FtsSegment *seg;
        LpError err;
        int rc = fts_segr_open_mem(b, n, "dmg.seg", FTS_SEGR_NOCHECKSUM, &seg, &err);
        if (rc != LP_OK) {
            expect_corrupt(rc, &err, "dmg.seg");
            t.nOpen++;
            continue;
        }
        exercise(seg, &r, "dmg.seg", &t);
        fts_segr_close(seg);
    }
    print_message("damage: %d refused at open, %d by check, %d cursor errors, %d lookup errors\n",
                  t.nOpen, t.nCheck, t.nCursor, t.nLookup);
    /* Each channel was reached. */
    assert_true(t.nOpen > 0);
    assert_true(t.nCheck > 0);
    assert_true(t.nCursor > 0);
    assert_true(t.nLookup > 0);
    free(b);
    free(a);
    ref_free(&r);
}


/* A damaged count (above df) is refused when its entry is read, naming
** the entry, and an unknown header flag at open; with checksums skipped,
** so only these checks stand in the way. */
static void test_earlier_damaged(void **state) {
    (void)state;
    LpError err;
    const char *zPath = tmp_path("earlier-dmg");
    write_title_body_a(zPath, 1);
    size_t n;
    uint8_t *a = read_file(zPath, &n);
    /* The body key's entry: nShared 0 | nSuffix 2, field 1, 'a', (df-1)*2 +
    ** (cf == df) = 3, then nEarlier 1. */
    static const uint8_t ent[] = {0x02, 0x01, 'a', 0x03, 0x01};
    uint8_t *at = memmem(a, n, ent, sizeof(ent));
    assert_non_null(at);
    at[4] = 3; /* more than df 2 */
    FtsSegment *seg;
    assert_int_equal(fts_segr_open_mem(a, n, "earlier.seg", FTS_SEGR_NOCHECKSUM, &seg, &err), LP_OK);
    FtsSource *src = fts_segr_source(seg);
    FtsTermInfo ti;
    assert_int_equal(src->vt->xLookup(src, kTitle, 2, &ti, &err), 1);
    assert_int_equal(src->vt->xLookup(src, kBody, 2, &ti, &err), -LP_CORRUPT);
    if (!strstr(err.zMsg, "bad nEarlier") || !strstr(err.zMsg, "earlier.seg")) fail_msg("%s", err.zMsg);
    fts_segr_close(seg);
    at[4] = 1;
    a[20] |= 8; /* a flag this reader does not know */
    expect_corrupt(fts_segr_open_mem(a, n, "earlier.seg", FTS_SEGR_NOCHECKSUM, &seg, &err), &err,
                   "unknown flags");
    free(a);
}

/* A damaged packed block found while iterating ends the list with an
** error that names the file and the block. Layout per segwriter.c. */
static void test_cursor_error_reported(void **state) {
    (void)state;
    LpError err;
    const char *zPath = tmp_path("blk");
    FtsSegWriter *w = fts_segw_open(zPath, 256, 1, &err);
    assert_non_null(w);
    uint32_t aLen[256], pos = 0;
    for (int d = 0; d < 256; d++)
        aLen[d] = 1;
    assert_int_equal(fts_segw_doclens(w, 0, aLen), LP_OK);
    const uint8_t key[] = {0, 't'};
    assert_int_equal(fts_segw_term(w, key, 2), LP_OK);
    for (uint32_t d = 0; d < 256; d++)
        assert_int_equal(fts_segw_posting(w, d, &pos, 1), LP_OK);
    assert_int_equal(fts_segw_finish(w, &err), LP_OK);
    size_t n;
    uint8_t *a = read_file(zPath, &n);
    /* Region at 32: maxTf 1, minLen 1, five widths: lastDoc 8 bits (255),
    ** dataEnd 3 (2, 4), posEnd 9 (128, 256), maxTf 1, minLen 1; two entries
    ** of 22 bits = 6 bytes; then block 0: width byte 0 (gaps), 0 (tf-1). */
    static const uint8_t want[] = {1, 1, 8, 3, 9, 1, 1};
    assert_memory_equal(a + 32, want, sizeof(want));
    size_t at = 32 + sizeof(want) + 6;
    assert_int_equal(a[at], 0);
    a[at] = 33;
    FtsSegment *seg;
    assert_int_equal(fts_segr_open_mem(a, n, "blk.seg", FTS_SEGR_NOCHECKSUM, &seg, &err), LP_OK);
    FtsSource *src = fts_segr_source(seg);
    FtsPostings *p = src->vt->xOpen(src, key, 2, 1, &err);
    assert_non_null(p);
    uint32_t mt, ml;
    assert_int_equal(p->vt->xShallow(p, 0, &mt, &ml), 127); /* skip entries are intact */
    assert_int_equal(p->vt->xNext(p), FTS_NO_DOC);
    assert_int_equal(p->doc, FTS_NO_DOC);
    assert_int_equal(fts_segr_postings_status(p, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "blk.seg"));
    assert_non_null(strstr(err.zMsg, "block 0"));
    assert_int_equal(err.pos, (int64_t)at);
    assert_int_equal(p->vt->xNext(p), FTS_NO_DOC);
    assert_int_equal(p->vt->xShallow(p, 0, &mt, &ml), FTS_NO_DOC);
    LpError e2;
    assert_int_equal(p->vt->xPositions(p, g_aPos, &e2), LP_CORRUPT);
    p->vt->xClose(p);
    /* The second block is intact: advancing straight to it works. */
    p = src->vt->xOpen(src, key, 2, 1, &err);
    assert_int_equal(p->vt->xAdvance(p, 200), 200);
    assert_int_equal(fts_segr_postings_status(p, &err), LP_OK);
    p->vt->xClose(p);
    assert_int_equal(fts_segr_check(seg, &err), LP_CORRUPT);
    fts_segr_close(seg);
    /* With its checksum the file is refused at open. */
    write_file(zPath, a, n);
    expect_corrupt(fts_segr_open(zPath, &seg, &err), &err, zPath);
    assert_non_null(strstr(err.zMsg, "data section checksum"));
    free(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_and_single),
        cmocka_unit_test(test_roundtrip_many_seeds),
        cmocka_unit_test(test_roundtrip_large),
        cmocka_unit_test(test_scan_has_narrows),
        cmocka_unit_test(test_infix_exact),
        cmocka_unit_test(test_infix_stored),
        cmocka_unit_test(test_infix_damaged),
        cmocka_unit_test(test_writer_errors),
        cmocka_unit_test(test_earlier_checked),
        cmocka_unit_test(test_earlier_damaged),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_every_bitflip_detected),
        cmocka_unit_test(test_cursor_error_reported),
        cmocka_unit_test(test_random_damage),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
