/*
** test_fts_multi.c — unit tests for the multi-segment source
** (src/fts/multi.c).
**
** Random documents over a small vocabulary (three fields, positions) are
** split at random points into 1..5 parts, each an in-memory index or a
** sealed segment file written from one, with gaps between parts, holes
** inside them and empty or NULL parts. The multi over the parts is
** compared with ONE in-memory index holding every document under the same
** ordinals: nDocs, aSumLen, xDocLen, every key's xLookup, prefix scans
** (keys, infos, the stop value), full cursor walks with positions, random
** xNext/xAdvance sequences, xShallow's blocks (their last document and
** impact bound the list's documents in the block), and, through the real
** query engine (search.h), the matches and scores of term, AND, OR/top-k,
** phrase, proximity, prefix, NOT and field-scoped queries. A sealed segment
** written from the multi (a merge) must answer the same. Then the
** contract's edges: the single-part forward mode returns the part's own
** cursors, bad part lists are refused, errors of a part come through.
**
** Set LOUPE_MULTI_BENCH=1 to also time queries over one part against the
** same documents split into four (printed, not checked).
**
** The PRNG is seeded with constants, so failures reproduce.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fts/match.h"
#include "fts/memindex.h"
#include "fts/multi.h"
#include "fts/search.h"
#include "fts/segflush.h"
#include "fts/segment.h"
#include "text/analyzer.h"
#include "util/arena.h"

#define NF 3
#define NWORD 30
#define MAXLEN 40
#define MAXPART 90 /* test_many_parts; the random splits use 1..5 */

/* ------------------------------------------------------------- helpers */

static uint64_t g_rng = 42;

static uint64_t rnd(void) {
    uint64_t x = (g_rng += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint32_t rnd_below(uint64_t n) {
    return (uint32_t)(rnd() % n);
}

/* Zipf-ish over nWord words: small numbers are frequent. */
static int rnd_word_of(int nWord) {
    double u = (double)(rnd() >> 11) / 9007199254740992.0;
    int w = (int)(nWord * u * u * u);
    return w < nWord ? w : nWord - 1;
}

static void word_text(int w, char *buf) {
    /* distinct words; many share prefixes (ab1, ab12, abc2...) */
    snprintf(buf, 16, "%s%d", w % 3 == 0 ? "ab" : w % 3 == 1 ? "abc" : "xy", w);
}

static Analyzer *g_an;
static const char *const g_azField[NF] = {"title", "body", "tags"};
static char g_zDir[64];
static int g_nFile;

typedef struct Doc {
    int bPresent; /* a document at this ordinal */
    int aLen[NF];
    uint16_t aaWord[NF][MAXLEN];
} Doc;

static void random_doc(Doc *d) {
    static const int aMax[NF] = {6, MAXLEN, 4};
    d->bPresent = 1;
    for (int f = 0; f < NF; f++) {
        d->aLen[f] = (int)rnd_below((uint64_t)aMax[f] + 1);
        for (int k = 0; k < d->aLen[f]; k++)
            d->aaWord[f][k] = (uint16_t)rnd_word_of(NWORD);
    }
}

/* Adds d under ordinal ord. */
static void add_doc(FtsMem *m, uint32_t ord, const Doc *d, FtsDocBuf *buf) {
    LpError err;
    fts_docbuf_reset(buf);
    for (int f = 0; f < NF; f++) {
        char text[MAXLEN * 16] = "";
        size_t n = 0;
        for (int k = 0; k < d->aLen[f]; k++) {
            char w[16];
            word_text(d->aaWord[f][k], w);
            n += (size_t)snprintf(text + n, sizeof(text) - n, k % 7 == 6 ? "%s. " : "%s ", w);
        }
        assert_int_equal(fts_docbuf_field(buf, g_an, f, text, n, &err), LP_OK);
    }
    assert_int_equal(fts_mem_add(m, ord, buf), LP_OK);
}

static const char *tmp_path(void) {
    static char z[128];
    snprintf(z, sizeof(z), "%s/seg%d", g_zDir, g_nFile++);
    return z;
}

/* Writes src as a sealed segment and opens it (the file is unlinked at
** once: the mapping keeps it). */
static FtsSegment *seal(FtsSource *src) {
    LpError err;
    const char *zPath = tmp_path();
    if (fts_seg_write_source(zPath, src, NULL, 0, &err) != LP_OK)
        fail_msg("write %s: %s", zPath, err.zMsg);
    FtsSegment *seg;
    if (fts_segr_open(zPath, &seg, &err) != LP_OK) fail_msg("open %s: %s", zPath, err.zMsg);
    unlink(zPath);
    return seg;
}

/* ------------------------------------------------------------ scenario */

/* A collection split into parts, and the reference index of all of it. */
typedef struct Scenario {
    int nPart;
    uint32_t aBase[MAXPART];
    uint32_t aN[MAXPART];      /* documents (ordinals) of each part */
    FtsSource *apSrc[MAXPART]; /* NULL for a NULL part */
    FtsMem *apMem[MAXPART];
    FtsSegment *apSeg[MAXPART];
    Doc *aDoc;     /* per ordinal of the multi */
    uint32_t nOrd; /* the multi's nDocs */
    FtsMem *ref;
    FtsMulti *multi;
    char zDesc[2048]; /* for failure messages */
} Scenario;

/* maxSize: the largest part; nPart 0: 1..5 parts. */
static void scenario_build(Scenario *s, int maxSize, int nPart) {
    memset(s, 0, sizeof(*s));
    s->nPart = nPart ? nPart : 1 + (int)rnd_below(5);
    uint32_t at = rnd_below(4) == 0 ? rnd_below(30) : 0;
    for (int i = 0; i < s->nPart; i++) {
        if (i > 0 && rnd_below(3) == 0) at += rnd_below(50); /* a gap */
        s->aBase[i] = at;
        s->aN[i] = rnd_below(6) == 0 ? 0 : 1 + rnd_below((uint64_t)maxSize);
        at += s->aN[i];
    }
    s->nOrd = at;
    s->aDoc = calloc(s->nOrd ? s->nOrd : 1, sizeof(Doc));
    FtsDocBuf buf = {0};
    size_t nz = 0;
    nz += (size_t)snprintf(s->zDesc + nz, sizeof(s->zDesc) - nz, "%d parts:", s->nPart);
    for (int i = 0; i < s->nPart; i++) {
        uint32_t n = s->aN[i];
        int kind = n == 0 ? (int)rnd_below(3) : 1 + (int)rnd_below(2); /* 0 NULL, 1 mem, 2 seg */
        FtsMem *m = kind ? fts_mem_new(NF) : NULL;
        for (uint32_t d = 0; d < n; d++) {
            Doc *doc = &s->aDoc[s->aBase[i] + d];
            if (d + 1 < n && rnd_below(12) == 0) continue; /* a hole; the last is always there */
            random_doc(doc);
            add_doc(m, d, doc, &buf);
        }
        if (kind == 2) {
            s->apSeg[i] = seal(fts_mem_source(m));
            s->apSrc[i] = fts_segr_source(s->apSeg[i]);
            fts_mem_free(m);
        } else if (kind == 1) {
            s->apMem[i] = m;
            s->apSrc[i] = fts_mem_source(m);
        }
        if (s->apSrc[i]) assert_int_equal(s->apSrc[i]->nDocs, n);
        nz += (size_t)snprintf(s->zDesc + nz, sizeof(s->zDesc) - nz, " %s@%u+%u",
                               kind == 0   ? "null"
                               : kind == 1 ? "mem"
                                           : "seg",
                               s->aBase[i], n);
        if (nz >= sizeof(s->zDesc)) nz = sizeof(s->zDesc) - 1; /* truncated */
    }
    /* The reference: every document under its ordinal; an empty document
    ** at the last ordinal makes its nDocs the multi's when the last part
    ** ends in a gap or is empty. */
    s->ref = fts_mem_new(NF);
    for (uint32_t o = 0; o < s->nOrd; o++) {
        if (s->aDoc[o].bPresent) add_doc(s->ref, o, &s->aDoc[o], &buf);
    }
    if (s->nOrd && !s->aDoc[s->nOrd - 1].bPresent) {
        Doc empty = {0};
        add_doc(s->ref, s->nOrd - 1, &empty, &buf);
    }
    fts_docbuf_free(&buf);
    LpError err;
    s->multi = fts_multi_new(s->apSrc, s->aBase, s->nPart, &err);
    if (!s->multi) fail_msg("%s: fts_multi_new: %s", s->zDesc, err.zMsg);
}

static void scenario_free(Scenario *s) {
    fts_multi_free(s->multi);
    for (int i = 0; i < s->nPart; i++) {
        fts_mem_free(s->apMem[i]);
        fts_segr_close(s->apSeg[i]);
    }
    fts_mem_free(s->ref);
    free(s->aDoc);
}

/* ------------------------------------------------------- source checks */

typedef struct KeyRec {
    uint8_t key[FTS_MAX_KEY];
    int nKey;
    FtsTermInfo info;
} KeyRec;

typedef struct KeyVec {
    KeyRec *a;
    int n, cap;
    int nStop; /* return 77 after this many keys (0: never) */
} KeyVec;

static int collect_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    KeyVec *v = ctx;
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 64;
        v->a = realloc(v->a, sizeof(KeyRec) * (size_t)v->cap);
        assert_non_null(v->a);
    }
    assert_true(nKey >= 1 && nKey <= FTS_MAX_KEY);
    KeyRec *r = &v->a[v->n++];
    memcpy(r->key, key, (size_t)nKey);
    r->nKey = nKey;
    r->info = *info;
    return v->nStop && v->n == v->nStop ? 77 : 0;
}

static int key_cmp(const uint8_t *a, int na, const uint8_t *b, int nb) {
    int c = memcmp(a, b, (size_t)(na < nb ? na : nb));
    return c ? c : na - nb;
}

/* Scans prefix in both sources: the same keys, in the same (ascending)
** order, with the same df and cf; then a stop at a random key. */
static void check_scan(const Scenario *s, FtsSource *ref, FtsSource *mul, const uint8_t *prefix,
                       int nPrefix) {
    LpError err;
    KeyVec a = {0}, b = {0};
    assert_int_equal(ref->vt->xScan(ref, prefix, nPrefix, collect_key, &a, &err), LP_OK);
    assert_int_equal(mul->vt->xScan(mul, prefix, nPrefix, collect_key, &b, &err), LP_OK);
    if (a.n != b.n)
        fail_msg("%s: scan of a %d-byte prefix: %d keys, reference %d", s->zDesc, nPrefix, b.n,
                 a.n);
    for (int i = 0; i < a.n; i++) {
        assert_int_equal(a.a[i].nKey, b.a[i].nKey);
        assert_memory_equal(a.a[i].key, b.a[i].key, (size_t)a.a[i].nKey);
        assert_int_equal(a.a[i].info.df, b.a[i].info.df);
        assert_int_equal(a.a[i].info.cf, b.a[i].info.cf);
        assert_int_equal(a.a[i].info.nEarlier, b.a[i].info.nEarlier);
        assert_true(b.a[i].nKey >= nPrefix && memcmp(b.a[i].key, prefix, (size_t)nPrefix) == 0);
        if (i) assert_true(key_cmp(b.a[i - 1].key, b.a[i - 1].nKey, b.a[i].key, b.a[i].nKey) < 0);
    }
    if (a.n >= 1) {
        KeyVec c = {0};
        c.nStop = 1 + (int)rnd_below((uint64_t)a.n);
        assert_int_equal(mul->vt->xScan(mul, prefix, nPrefix, collect_key, &c, &err), 77);
        assert_int_equal(c.n, c.nStop);
        for (int i = 0; i < c.n; i++) {
            assert_memory_equal(a.a[i].key, c.a[i].key, (size_t)a.a[i].nKey);
            assert_int_equal(a.a[i].info.df, c.a[i].info.df);
        }
        free(c.a);
    }
    free(a.a);
    free(b.a);
}

/* Does the key's term (after the field byte) hold part[0..nPart)? */
static int key_has(const KeyRec *k, const uint8_t *part, int nPart) {
    return k->nKey > 1 && memmem(k->key + 1, (size_t)k->nKey - 1, part, (size_t)nPart) != NULL;
}

/* xScanHas of the multi (through fts_source_scan_has, as the engine asks):
** of the keys it reports, those holding the part are exactly the
** reference's, with the reference's counts; every key reported has the
** prefix. */
static void check_scan_has(const Scenario *s, FtsSource *ref, FtsSource *mul, const uint8_t *prefix,
                           int nPrefix, const uint8_t *part, int nPart) {
    LpError err;
    KeyVec a = {0}, b = {0};
    const uint8_t *aPart[1] = {part};
    int anPart[1] = {nPart};
    FtsScanHas has = {aPart, anPart, 1};
    assert_int_equal(ref->vt->xScan(ref, prefix, nPrefix, collect_key, &a, &err), LP_OK);
    assert_int_equal(fts_source_scan_has(mul, prefix, nPrefix, &has, collect_key, &b, &err), LP_OK);
    int j = 0;
    for (int i = 0; i < a.n; i++) {
        if (!key_has(&a.a[i], part, nPart)) continue;
        while (j < b.n && !key_has(&b.a[j], part, nPart)) j++;
        if (j == b.n) fail_msg("%s: xScanHas left out a key", s->zDesc);
        assert_int_equal(a.a[i].nKey, b.a[j].nKey);
        assert_memory_equal(a.a[i].key, b.a[j].key, (size_t)a.a[i].nKey);
        assert_int_equal(a.a[i].info.df, b.a[j].info.df);
        assert_int_equal(a.a[i].info.cf, b.a[j].info.cf);
        assert_int_equal(a.a[i].info.nEarlier, b.a[j].info.nEarlier);
        j++;
    }
    for (; j < b.n; j++) assert_false(key_has(&b.a[j], part, nPart));
    for (int i = 0; i < b.n; i++) {
        assert_true(b.a[i].nKey >= nPrefix && memcmp(b.a[i].key, prefix, (size_t)nPrefix) == 0);
        if (i) assert_true(key_cmp(b.a[i - 1].key, b.a[i - 1].nKey, b.a[i].key, b.a[i].nKey) < 0);
    }
    free(a.a);
    free(b.a);
}

/* A list read whole from the reference. */
typedef struct List {
    uint32_t *aDoc, *aTf, *aLen;
    uint32_t n;
} List;

static void list_read(FtsSource *ref, const uint8_t *key, int nKey, List *l) {
    LpError err;
    FtsPostings *c = ref->vt->xOpen(ref, key, nKey, 0, &err);
    assert_non_null(c);
    l->n = 0;
    l->aDoc = malloc(sizeof(uint32_t) * (c->df + 1));
    l->aTf = malloc(sizeof(uint32_t) * (c->df + 1));
    l->aLen = malloc(sizeof(uint32_t) * (c->df + 1));
    for (uint32_t d = c->vt->xNext(c); d != FTS_NO_DOC; d = c->vt->xNext(c)) {
        assert_true(l->n < c->df);
        l->aDoc[l->n] = d;
        l->aTf[l->n] = c->tf;
        l->aLen[l->n] = ref->vt->xDocLen(ref, key[0], d);
        l->n++;
    }
    assert_int_equal(l->n, c->df);
    c->vt->xClose(c);
}

static void list_free(List *l) {
    free(l->aDoc);
    free(l->aTf);
    free(l->aLen);
}

/* Index of the first document >= target (n when none). */
static uint32_t list_lower(const List *l, uint32_t target) {
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (l->aDoc[mid] < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* xShallow(target) of c, against the list: the block holding the first
** document >= target ends at a document of the list at or after it, and
** its impact bounds every document of the list from target to there. */
static void check_shallow(FtsPostings *c, const List *l, uint32_t target) {
    uint32_t mtf = 12345, mlen = 12345, before = c->doc;
    uint32_t last = c->vt->xShallow(c, target, &mtf, &mlen);
    assert_int_equal(c->doc, before);
    uint32_t j = list_lower(l, target);
    if (j == l->n) {
        assert_int_equal(last, FTS_NO_DOC);
        assert_int_equal(mtf, 0);
        assert_int_equal(mlen, UINT32_MAX);
        return;
    }
    assert_true(last != FTS_NO_DOC && last >= l->aDoc[j]);
    uint32_t k = list_lower(l, last);
    assert_true(k < l->n && l->aDoc[k] == last);
    for (uint32_t i = j; i <= k; i++) {
        assert_true(l->aTf[i] <= mtf);
        assert_true(l->aLen[i] >= mlen);
    }
}

static void check_positions(FtsPostings *a, FtsPostings *b) {
    uint32_t aPos[MAXLEN * 2], bPos[MAXLEN * 2];
    LpError err;
    assert_true(a->tf <= MAXLEN * 2);
    assert_int_equal(a->vt->xPositions(a, aPos, &err), LP_OK);
    assert_int_equal(b->vt->xPositions(b, bPos, &err), LP_OK);
    assert_memory_equal(aPos, bPos, sizeof(uint32_t) * a->tf);
}

/* Opens key in the multi as the engine does: through xOpenFound with the
** multi's info, or (now and then) xOpen. */
static FtsPostings *open_multi(FtsSource *mul, const KeyRec *k, int bPos) {
    LpError err;
    FtsPostings *c = rnd_below(4) == 0
                         ? mul->vt->xOpen(mul, k->key, k->nKey, bPos, &err)
                         : mul->vt->xOpenFound(mul, k->key, k->nKey, &k->info, bPos, &err);
    if (!c) fail_msg("open: %s", err.zMsg);
    return c;
}

/* The documents of aDoc[0..n) holding key's word in key's field and in a
** lower field too: what FtsTermInfo.nEarlier counts. */
static uint32_t earlier_count(const Doc *aDoc, uint32_t n, const uint8_t *key, int nKey) {
    int w = -1;
    for (int i = 0; i < NWORD && w < 0; i++) {
        char buf[16];
        word_text(i, buf);
        if ((int)strlen(buf) == nKey - 1 && memcmp(buf, key + 1, (size_t)nKey - 1) == 0) w = i;
    }
    assert_true(w >= 0);
    uint32_t c = 0;
    for (uint32_t o = 0; o < n; o++) {
        int aHas[NF] = {0};
        for (int f = 0; f <= key[0]; f++) {
            for (int k = 0; k < aDoc[o].aLen[f]; k++) aHas[f] |= aDoc[o].aaWord[f][k] == w;
        }
        int bLow = 0;
        for (int f = 0; f < key[0]; f++) bLow |= aHas[f];
        c += (uint32_t)(aDoc[o].bPresent && aHas[key[0]] && bLow);
    }
    return c;
}

/* Everything of one key: info, whole list, a random walk of xNext,
** xAdvance and xShallow. */
static void check_key(const Scenario *s, FtsSource *ref, FtsSource *mul, const KeyRec *k) {
    LpError err;
    FtsTermInfo ri, mi;
    assert_int_equal(ref->vt->xLookup(ref, k->key, k->nKey, &ri, &err), 1);
    assert_int_equal(mul->vt->xLookup(mul, k->key, k->nKey, &mi, &err), 1);
    assert_int_equal(ri.df, mi.df);
    assert_int_equal(ri.cf, mi.cf);
    assert_int_equal(ri.nEarlier, earlier_count(s->aDoc, s->nOrd, k->key, k->nKey));
    assert_int_equal(mi.nEarlier, ri.nEarlier);
    List l;
    list_read(ref, k->key, k->nKey, &l);

    /* the whole list, with positions */
    FtsPostings *a = ref->vt->xOpen(ref, k->key, k->nKey, 1, &err);
    FtsPostings *b = open_multi(mul, k, 1);
    assert_int_equal(b->doc, FTS_BEFORE_FIRST);
    assert_int_equal(a->df, b->df);
    assert_int_equal(a->maxTf, b->maxTf);
    assert_int_equal(a->minLen, b->minLen);
    uint32_t n = 0;
    for (;;) {
        uint32_t da = a->vt->xNext(a), db = b->vt->xNext(b);
        if (da != db)
            fail_msg("%s: key %.*s: doc %u, reference %u", s->zDesc, k->nKey - 1, k->key + 1, db,
                     da);
        assert_int_equal(b->doc, db);
        if (da == FTS_NO_DOC) break;
        assert_int_equal(a->tf, b->tf);
        check_positions(a, b);
        n++;
    }
    assert_int_equal(n, l.n);
    assert_int_equal(b->vt->xNext(b), FTS_NO_DOC); /* stays at the end */
    assert_int_equal(b->vt->xStatus(b, &err), LP_OK);
    a->vt->xClose(a);
    b->vt->xClose(b);

    /* random moves; xShallow before some of them */
    for (int rep = 0; rep < 3; rep++) {
        a = ref->vt->xOpen(ref, k->key, k->nKey, 1, &err);
        b = open_multi(mul, k, rep != 1);
        uint32_t span = s->nOrd / (1 + rnd_below(40)) + 1;
        if (rnd_below(2)) check_shallow(b, &l, rnd_below(s->nOrd + 2));
        for (int step = 0; step < 400; step++) {
            uint32_t cur = a->doc, da, db;
            if (cur == FTS_NO_DOC) break;
            uint32_t from = cur == FTS_BEFORE_FIRST ? 0 : cur + 1;
            if (rnd_below(3) == 0) {
                da = a->vt->xNext(a);
                db = b->vt->xNext(b);
            } else {
                uint32_t target = from + rnd_below(span);
                if (rnd_below(20) == 0) target = s->nOrd + rnd_below(3); /* past the end */
                check_shallow(b, &l, target);
                da = cur == FTS_BEFORE_FIRST ? a->vt->xNext(a) : a->doc;
                if (da < target) da = a->vt->xAdvance(a, target);
                /* the multi accepts xAdvance before its first document too */
                if (b->doc == FTS_BEFORE_FIRST && rnd_below(2)) {
                    db = b->vt->xNext(b);
                    if (db < target) db = b->vt->xAdvance(b, target);
                } else {
                    db = b->vt->xAdvance(b, target);
                }
            }
            if (da != db) {
                fail_msg("%s: key %.*s: moved to %u, reference %u", s->zDesc, k->nKey - 1,
                         k->key + 1, db, da);
            }
            if (da == FTS_NO_DOC) break;
            assert_int_equal(a->tf, b->tf);
            if (rep != 1 && rnd_below(4) == 0) check_positions(a, b);
        }
        assert_int_equal(b->vt->xStatus(b, &err), LP_OK);
        a->vt->xClose(a);
        b->vt->xClose(b);
    }
    list_free(&l);
}

/* A scan's answer that skips some keys, as a function of the key: about
** one key in three passes over a prefix of itself. */
static int skip_rule(const uint8_t *key, int nKey) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < nKey; i++) h = (h ^ key[i]) * 16777619u;
    return h % 3 == 0 ? FTS_SCAN_SKIP(1 + (int)((h >> 8) % (uint32_t)nKey)) : 0;
}

/* The keys a skipping scan reports, and the prefix passed over last: a
** key beginning with it (a source may still report some) is answered the
** same and not recorded, as a fuzzy search remembers what it passed over. */
typedef struct SkipVec {
    KeyVec v;
    uint8_t aSkip[FTS_MAX_KEY];
    int nSkip;
} SkipVec;

static int collect_skipping(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    SkipVec *x = ctx;
    if (x->nSkip && nKey >= x->nSkip && memcmp(key, x->aSkip, (size_t)x->nSkip) == 0) {
        return FTS_SCAN_SKIP(x->nSkip);
    }
    int r = collect_key(&x->v, key, nKey, info);
    if (r) return r;
    r = skip_rule(key, nKey);
    x->nSkip = -r;
    memcpy(x->aSkip, key, (size_t)x->nSkip);
    return r;
}

/* fts_scan_skipping of the multi: each non-empty part in turn, its keys
** with the prefix ascending with its own counts, less those that begin
** as the last key recorded did for the length its answer skipped. */
static void check_scan_skipping(const Scenario *s, FtsSource *mul, const uint8_t *prefix, int nPrefix) {
    LpError err;
    SkipVec want = {0}, got = {0};
    for (int i = 0; i < s->nPart; i++) {
        FtsSource *p = s->apSrc[i];
        if (!p || p->nDocs == 0) continue;
        KeyVec all = {0};
        assert_int_equal(p->vt->xScan(p, prefix, nPrefix, collect_key, &all, &err), LP_OK);
        for (int k = 0; k < all.n; k++) collect_skipping(&want, all.a[k].key, all.a[k].nKey, &all.a[k].info);
        free(all.a);
    }
    assert_int_equal(fts_scan_skipping(mul, prefix, nPrefix, collect_skipping, &got, &err), LP_OK);
    if (want.v.n != got.v.n) {
        fail_msg("%s: skipping scan of a %d-byte prefix: %d keys, want %d", s->zDesc, nPrefix, got.v.n, want.v.n);
    }
    for (int i = 0; i < want.v.n; i++) {
        const KeyRec *a = &want.v.a[i], *b = &got.v.a[i];
        assert_int_equal(a->nKey, b->nKey);
        assert_memory_equal(a->key, b->key, (size_t)a->nKey);
        assert_int_equal(a->info.df, b->info.df);
        assert_int_equal(a->info.cf, b->info.cf);
        assert_int_equal(a->info.nEarlier, b->info.nEarlier);
    }
    /* a positive answer stops it and is returned */
    if (got.v.n > 0) {
        KeyVec c = {0};
        c.nStop = 1 + (int)rnd_below((uint64_t)got.v.n);
        assert_int_equal(fts_scan_skipping(mul, prefix, nPrefix, collect_key, &c, &err), 77);
        assert_int_equal(c.n, c.nStop);
        free(c.a);
    }
    free(want.v.a);
    free(got.v.a);
}

/* The source-level comparison of mul against the reference. */
static void check_source(const Scenario *s, FtsSource *mul) {
    FtsSource *ref = fts_mem_source(s->ref);
    LpError err;
    assert_int_equal(mul->nDocs, ref->nDocs);
    assert_int_equal(mul->nDocs, s->nOrd);
    int bAllNull = 1;
    for (int i = 0; i < s->nPart; i++)
        bAllNull &= s->apSrc[i] == NULL;
    assert_int_equal(mul->nFields, bAllNull ? 0 : NF); /* no part to take nFields from */
    for (int f = 0; f < NF; f++) {
        assert_int_equal(mul->aSumLen[f], ref->aSumLen[f]);
        for (uint32_t d = 0; d < s->nOrd + 3; d++) {
            assert_int_equal(mul->vt->xDocLen(mul, f, d), ref->vt->xDocLen(ref, f, d));
        }
    }
    /* every key */
    KeyVec all = {0}, allm = {0};
    assert_int_equal(ref->vt->xScan(ref, (const uint8_t *)"", 0, collect_key, &all, &err), LP_OK);
    assert_int_equal(mul->vt->xScan(mul, (const uint8_t *)"", 0, collect_key, &allm, &err), LP_OK);
    assert_int_equal(all.n, allm.n);
    for (int i = 0; i < allm.n; i++)
        check_key(s, ref, mul, &allm.a[i]);
    check_scan(s, ref, mul, (const uint8_t *)"", 0);
    /* infix scans: the last 3 bytes of some keys, everywhere and in the key's field */
    for (int i = 0; i < allm.n; i += 1 + allm.n / 8) {
        const KeyRec *k = &allm.a[i];
        if (k->nKey < 4) continue;
        check_scan_has(s, ref, mul, (const uint8_t *)"", 0, k->key + k->nKey - 3, 3);
        check_scan_has(s, ref, mul, k->key, 1, k->key + k->nKey - 3, 3);
        /* and 2 bytes (`*ab*`: the trigrams beginning or ending with them) */
        check_scan_has(s, ref, mul, k->key, 1, k->key + k->nKey - 2, 2);
        check_scan_has(s, ref, mul, k->key, 1, k->key + 1, 2);
    }
    /* prefixes: each field, and the first bytes of words */
    for (int f = 0; f < NF; f++) {
        uint8_t p[8] = {(uint8_t)f};
        check_scan(s, ref, mul, p, 1);
        static const char *const az[] = {"a", "ab", "abc", "abc1", "x", "xy2", "ab12", "zz", "ab0"};
        for (size_t i = 0; i < sizeof(az) / sizeof(az[0]); i++) {
            size_t n = strlen(az[i]);
            memcpy(p + 1, az[i], n);
            check_scan(s, ref, mul, p, (int)n + 1);
        }
    }
    /* absent keys */
    static const char *const azNo[] = {"ab", "abc", "nothere", "xy999"};
    for (int f = 0; f <= NF; f++) {
        for (size_t i = 0; i < sizeof(azNo) / sizeof(azNo[0]); i++) {
            uint8_t key[16] = {(uint8_t)f};
            size_t n = strlen(azNo[i]);
            memcpy(key + 1, azNo[i], n);
            FtsTermInfo info;
            assert_int_equal(mul->vt->xLookup(mul, key, (int)n + 1, &info, &err), 0);
            FtsPostings *c = mul->vt->xOpen(mul, key, (int)n + 1, 1, &err);
            assert_non_null(c);
            assert_int_equal(c->df, 0);
            assert_int_equal(c->maxTf, 0);
            assert_int_equal(c->minLen, UINT32_MAX);
            uint32_t mtf, mlen;
            assert_int_equal(c->vt->xShallow(c, 0, &mtf, &mlen), FTS_NO_DOC);
            assert_int_equal(mtf, 0);
            assert_int_equal(mlen, UINT32_MAX);
            assert_int_equal(c->vt->xNext(c), FTS_NO_DOC);
            assert_int_equal(c->vt->xStatus(c, &err), LP_OK);
            c->vt->xClose(c);
        }
    }
    free(all.a);
    free(allm.a);
}

/* --------------------------------------------------------- query checks */

typedef struct Hits {
    uint32_t *aDoc;
    double *aScore;
    int n, cap;
} Hits;

static int collect_hit(void *ctx, uint32_t doc, double score) {
    Hits *h = ctx;
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->aDoc = realloc(h->aDoc, sizeof(uint32_t) * (size_t)h->cap);
        h->aScore = realloc(h->aScore, sizeof(double) * (size_t)h->cap);
    }
    h->aDoc[h->n] = doc;
    h->aScore[h->n++] = score;
    return 0;
}

static int accept_filter(void *ctx, uint32_t doc) {
    (void)ctx;
    return doc % 5 != 2;
}

/* Runs zQuery over both sources: the same matches and scores, the same
** top-k with the same strategy. */
static void check_query(const Scenario *s, FtsSource *ref, FtsSource *mul, const char *zQuery) {
    Arena a;
    arena_init(&a, 0);
    FtsNode *root;
    LpError err;
    if (fts_match_parse(&a, zQuery, strlen(zQuery), g_azField, NF, &root, &err) != LP_OK) {
        arena_free(&a);
        return; /* a random query the parser refuses (only NOTs) */
    }
    FtsRankParams rank;
    fts_rank_defaults(&rank);
    if (rnd_below(4) == 0) rank.ranker = FTS_RANK_BM25;
    if (rnd_below(3) == 0) rank.aFieldWeight[0] = 3;
    FtsSource *aSrc[2] = {ref, mul};
    Hits aAll[2] = {{0}};
    const char *azStrat[2];
    for (int i = 0; i < 2; i++) {
        FtsQuery *q;
        if (fts_query_new(&a, root, zQuery, g_an, aSrc[i], &rank, &q, &err) != LP_OK) {
            fail_msg("%s: query %s: %s", s->zDesc, zQuery, err.zMsg);
        }
        FtsStats st;
        assert_int_equal(fts_query_all(q, collect_hit, &aAll[i], &st, &err), LP_OK);
        fts_query_free(q);
    }
    if (aAll[0].n != aAll[1].n)
        fail_msg("%s: query %s: %d matches, reference %d", s->zDesc, zQuery, aAll[1].n, aAll[0].n);
    for (int j = 0; j < aAll[0].n; j++) {
        if (aAll[0].aDoc[j] != aAll[1].aDoc[j] || aAll[0].aScore[j] != aAll[1].aScore[j]) {
            fail_msg("%s: query %s: match %d is %u (%.17g), reference %u (%.17g)", s->zDesc, zQuery,
                     j, aAll[1].aDoc[j], aAll[1].aScore[j], aAll[0].aDoc[j], aAll[0].aScore[j]);
        }
    }
    static const int aK[] = {1, 10, 40};
    for (size_t ik = 0; ik < sizeof(aK) / sizeof(aK[0]); ik++) {
        FtsHit aHit[2][40];
        int nHit[2];
        for (int i = 0; i < 2; i++) {
            FtsQuery *q;
            assert_int_equal(fts_query_new(&a, root, zQuery, g_an, aSrc[i], &rank, &q, &err),
                             LP_OK);
            const char *zWhy;
            azStrat[i] = fts_query_strategy(q, &zWhy);
            FtsStats st;
            assert_int_equal(
                fts_query_topk(q, aK[ik], accept_filter, NULL, aHit[i], &nHit[i], &st, &err),
                LP_OK);
            fts_query_free(q);
        }
        assert_string_equal(azStrat[0], azStrat[1]);
        if (nHit[0] != nHit[1])
            fail_msg("%s: query %s top %d: %d hits, reference %d", s->zDesc, zQuery, aK[ik],
                     nHit[1], nHit[0]);
        for (int j = 0; j < nHit[0]; j++) {
            if (aHit[0][j].doc != aHit[1][j].doc || aHit[0][j].score != aHit[1][j].score) {
                fail_msg("%s: query %s top %d (%s): hit %d is %u (%.17g), reference %u (%.17g)",
                         s->zDesc, zQuery, aK[ik], azStrat[0], j, aHit[1][j].doc, aHit[1][j].score,
                         aHit[0][j].doc, aHit[0][j].score);
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        free(aAll[i].aDoc);
        free(aAll[i].aScore);
    }
    arena_free(&a);
}

static void rand_query(char *buf) {
    static const char *const aOp[] = {" ", " | ", " -"};
    buf[0] = 0;
    int n = 1 + (int)rnd_below(4);
    for (int i = 0; i < n; i++) {
        if (i) strcat(buf, aOp[rnd_below(3)]);
        char w[16], w2[16];
        word_text(rnd_word_of(NWORD), w);
        word_text(rnd_word_of(NWORD), w2);
        switch (rnd_below(9)) {
        case 0:
            sprintf(buf + strlen(buf), "\"%s %s\"", w, w2);
            break;
        case 1:
            sprintf(buf + strlen(buf), "\"%s %s\"~%u", w, w2, rnd_below(4));
            break;
        case 2:
            sprintf(buf + strlen(buf), "%.*s*", 2 + (int)rnd_below(2), w);
            break;
        case 3:
            sprintf(buf + strlen(buf), "@%s %s", g_azField[rnd_below(NF)], w);
            break;
        case 4:
            sprintf(buf + strlen(buf), "(%s | %s)", w, w2);
            break;
        case 5:
            sprintf(buf + strlen(buf), "@(title,tags) %s", w);
            break;
        default:
            strcat(buf, w);
        }
    }
}

static void check_queries(const Scenario *s, FtsSource *mul, int nRandom) {
    FtsSource *ref = fts_mem_source(s->ref);
    static const char *const azFixed[] = {
        "ab0",
        "xy2 | ab3",
        "ab0 xy2",
        "ab0 abc1 xy2",
        "ab0 | abc1 | xy2 | ab3 | abc4 | xy5",
        "ab0 -xy2",
        "\"ab0 abc1\"",
        "\"ab0 abc1\"~3",
        "ab*",
        "abc1*",
        "@title ab0",
        "@tags xy2 | @body ab3",
        "(ab0 | abc1) xy2",
        "ab0 !abc1",
        "nothere",
        "ab0 nothere",
        "ab0 | nothere",
        "",
        "xy29 | ab27",
    };
    for (size_t i = 0; i < sizeof(azFixed) / sizeof(azFixed[0]); i++)
        check_query(s, ref, mul, azFixed[i]);
    char buf[512];
    for (int i = 0; i < nRandom; i++) {
        rand_query(buf);
        check_query(s, ref, mul, buf);
    }
}

/* ----------------------------------------------------------------- tests */

static void test_random_splits(void **state) {
    (void)state;
    g_rng = 1;
    for (int iter = 0; iter < 40; iter++) {
        Scenario s;
        scenario_build(&s, iter % 4 == 0 ? 700 : 150, 0);
        check_source(&s, fts_multi_source(s.multi));
        check_queries(&s, fts_multi_source(s.multi), 25);
        for (int k = 0; k < 6; k++) {
            /* every key, a field's, a field's words of one first letter */
            uint8_t prefix[2] = {(uint8_t)rnd_below(NF), (uint8_t)(rnd_below(2) ? 'a' : 'x')};
            check_scan_skipping(&s, fts_multi_source(s.multi), prefix, k % 3);
        }
        scenario_free(&s);
    }
}

/* More parts than aLoc[0] has bits: parts from 63 on share the last bit
** (they are all searched when it is set). */
static void test_many_parts(void **state) {
    (void)state;
    g_rng = 6;
    Scenario s;
    scenario_build(&s, 12, MAXPART);
    check_source(&s, fts_multi_source(s.multi));
    check_queries(&s, fts_multi_source(s.multi), 10);
    scenario_free(&s);
}

/* A sealed segment written from the multi (a merge of the parts) holds
** what the reference holds. */
static void test_merge_through_multi(void **state) {
    (void)state;
    g_rng = 2;
    for (int iter = 0; iter < 6; iter++) {
        Scenario s;
        scenario_build(&s, 400, 0);
        if (fts_multi_source(s.multi)->nFields == 0) { /* only NULL parts: no segment of 0 fields */
            scenario_free(&s);
            continue;
        }
        FtsSegment *seg = seal(fts_multi_source(s.multi));
        LpError err;
        assert_int_equal(fts_segr_check(seg, &err), LP_OK);
        check_source(&s, fts_segr_source(seg));
        check_queries(&s, fts_segr_source(seg), 10);
        fts_segr_close(seg);
        scenario_free(&s);
    }
}

/* nEarlier in a segment written with documents dropped and renumbered
** (as a merge drops deleted rows) counts the documents kept, not the
** source's. */
static void test_earlier_after_drops(void **state) {
    (void)state;
    g_rng = 5;
    enum { N = 300 };
    Doc *aDoc = calloc(N, sizeof(Doc)), *aKept = calloc(N, sizeof(Doc));
    uint32_t aMap[N], nKept = 0;
    FtsMem *m = fts_mem_new(NF);
    FtsDocBuf buf = {0};
    for (uint32_t d = 0; d < N; d++) {
        random_doc(&aDoc[d]);
        add_doc(m, d, &aDoc[d], &buf);
        aMap[d] = rnd_below(3) == 0 ? FTS_NO_DOC : nKept;
        if (aMap[d] != FTS_NO_DOC) aKept[nKept++] = aDoc[d];
    }
    fts_docbuf_free(&buf);
    LpError err;
    const char *zPath = tmp_path();
    assert_int_equal(fts_seg_write_source(zPath, fts_mem_source(m), aMap, nKept, &err), LP_OK);
    FtsSegment *seg;
    assert_int_equal(fts_segr_open(zPath, &seg, &err), LP_OK);
    unlink(zPath);
    assert_int_equal(fts_segr_check(seg, &err), LP_OK);
    FtsSource *src = fts_segr_source(seg), *msrc = fts_mem_source(m);
    KeyVec v = {0};
    assert_int_equal(src->vt->xScan(src, (const uint8_t *)"", 0, collect_key, &v, &err), LP_OK);
    int nSome = 0;
    for (int i = 0; i < v.n; i++) {
        const KeyRec *k = &v.a[i];
        FtsTermInfo mi;
        assert_int_equal(k->info.nEarlier, earlier_count(aKept, nKept, k->key, k->nKey));
        assert_int_equal(msrc->vt->xLookup(msrc, k->key, k->nKey, &mi, &err), 1);
        assert_int_equal(mi.nEarlier, earlier_count(aDoc, N, k->key, k->nKey));
        nSome += k->info.nEarlier > 0 && k->info.nEarlier < mi.nEarlier;
    }
    assert_true(nSome > 0); /* drops did lower some counts */
    free(v.a);
    fts_segr_close(seg);
    fts_mem_free(m);
    free(aDoc);
    free(aKept);
}

/* The in-memory index with its cursors' xBlock hidden: a flush of it
** copies posting by posting, as before xBlock existed. */
typedef struct NoBlockSrc {
    FtsSource base;
    FtsSource *inner;
} NoBlockSrc;

static FtsPostingsVt g_noBlockVt;

static FtsPostings *nb_strip(FtsPostings *c) {
    if (c) {
        g_noBlockVt = *c->vt;
        g_noBlockVt.xBlock = NULL;
        c->vt = &g_noBlockVt;
    }
    return c;
}

static int nb_lookup(FtsSource *s, const uint8_t *key, int nKey, FtsTermInfo *pInfo, LpError *err) {
    FtsSource *in = ((NoBlockSrc *)s)->inner;
    return in->vt->xLookup(in, key, nKey, pInfo, err);
}

static FtsPostings *nb_open(FtsSource *s, const uint8_t *key, int nKey, int bPos, LpError *err) {
    FtsSource *in = ((NoBlockSrc *)s)->inner;
    return nb_strip(in->vt->xOpen(in, key, nKey, bPos, err));
}

static int nb_scan(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx, LpError *err) {
    FtsSource *in = ((NoBlockSrc *)s)->inner;
    return in->vt->xScan(in, prefix, nPrefix, xKey, ctx, err);
}

static uint32_t nb_doclen(FtsSource *s, int iField, uint32_t doc) {
    FtsSource *in = ((NoBlockSrc *)s)->inner;
    return in->vt->xDocLen(in, iField, doc);
}

static FtsPostings *nb_open_found(FtsSource *s, const uint8_t *key, int nKey, const FtsTermInfo *info,
                                  int bPos, LpError *err) {
    FtsSource *in = ((NoBlockSrc *)s)->inner;
    return nb_strip(in->vt->xOpenFound(in, key, nKey, info, bPos, err));
}

static const FtsSourceVt no_block_vt = {nb_lookup, nb_open, nb_scan, nb_doclen, nb_open_found, NULL, NULL};

static uint8_t *slurp(const char *zPath, size_t *pn) {
    FILE *f = fopen(zPath, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *pn = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *a = malloc(*pn ? *pn : 1);
    assert_non_null(a);
    assert_int_equal(fread(a, 1, *pn, f), *pn);
    fclose(f);
    unlink(zPath);
    return a;
}

/* The two files hold the same bytes (both are removed). */
static void expect_same_bytes(const char *z1, const char *z2) {
    size_t n1, n2;
    uint8_t *a1 = slurp(z1, &n1), *a2 = slurp(z2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a1, a2, n1);
    free(a1);
    free(a2);
}

/* A flush copies the in-memory index's lists a block at a time (xBlock),
** with no map or with a map that keeps every document where it is; the
** file is the one posting-by-posting copying writes. Lists of several
** blocks. */
static void test_flush_blocks(void **state) {
    (void)state;
    g_rng = 11;
    enum { N = 1000 };
    FtsMem *m = fts_mem_new(NF);
    FtsDocBuf buf = {0};
    Doc d;
    uint32_t aMap[N + 5];
    for (uint32_t i = 0; i < N; i++) {
        random_doc(&d);
        add_doc(m, i, &d, &buf);
        aMap[i] = i;
    }
    fts_docbuf_free(&buf);
    NoBlockSrc nb = {*fts_mem_source(m), fts_mem_source(m)};
    nb.base.vt = &no_block_vt;
    LpError err;
    char azPath[4][128];
    size_t an[4];
    uint8_t *aa[4];
    for (int k = 0; k < 4; k++) {
        snprintf(azPath[k], sizeof(azPath[k]), "%s", tmp_path());
        FtsSource *src = k == 0 ? &nb.base : fts_mem_source(m);
        const uint32_t *map = k == 2 ? aMap : NULL;
        /* k == 3: the map keeps every document and adds 5 without text */
        uint32_t nOut = k == 3 ? N + 5 : N;
        if (k == 3) map = aMap;
        for (uint32_t i = N; i < N + 5; i++) aMap[i] = FTS_NO_DOC;
        assert_int_equal(fts_seg_write_source(azPath[k], src, map, nOut, &err), LP_OK);
        if (k == 3) {
            FtsSegment *seg;
            assert_int_equal(fts_segr_open(azPath[k], &seg, &err), LP_OK);
            assert_int_equal(fts_segr_check(seg, &err), LP_OK);
            assert_int_equal(fts_segr_source(seg)->nDocs, N + 5);
            fts_segr_close(seg);
        }
        aa[k] = slurp(azPath[k], &an[k]);
    }
    for (int k = 1; k < 3; k++) {
        assert_int_equal(an[k], an[0]);
        assert_memory_equal(aa[k], aa[0], an[0]);
    }
    /* Some list has more than one block, and one ends in a full block. */
    FtsSource *msrc = fts_mem_source(m);
    int nMulti = 0;
    for (int w = 0; w < NWORD; w++) {
        uint8_t key[20];
        char z[16];
        word_text(w, z);
        key[0] = 1;
        memcpy(key + 1, z, strlen(z));
        FtsTermInfo info;
        if (msrc->vt->xLookup(msrc, key, 1 + (int)strlen(z), &info, &err) == 1) nMulti += info.df > FTS_BLOCK;
    }
    assert_true(nMulti > 3);
    /* xBlock refuses a cursor xNext has moved, or one without positions */
    const uint8_t key0[] = {1, 'a', 'b', '0'};
    uint32_t aD[FTS_BLOCK], aT[FTS_BLOCK];
    const uint8_t *pPos;
    size_t nPos;
    for (int bPos = 0; bPos < 2; bPos++) {
        FtsPostings *c = msrc->vt->xOpen(msrc, key0, 4, bPos, &err);
        assert_true(c->df > FTS_BLOCK);
        if (bPos) c->vt->xNext(c);
        assert_int_equal(c->vt->xBlock(c, aD, aT, &pPos, &nPos, &err), -LP_INTERNAL);
        assert_non_null(strstr(err.zMsg, "moved otherwise"));
        c->vt->xClose(c);
    }
    for (int k = 0; k < 4; k++) free(aa[k]);
    fts_mem_free(m);
}

/* A segment file written before nEarlier was kept (header flags 0, a fuzz
** seed) still opens; its keys of fields > 0 report FTS_EARLIER_UNKNOWN,
** and so does a multi holding it, which the query engine reads as "use
** the largest field's df". */
static void test_earlier_unknown(void **state) {
    (void)state;
    LpError err;
    FtsSegment *seg;
    const char *zPath = LP_SOURCE_DIR "/tests/fuzz/corpus/fts_segment/flag0-small";
    if (fts_segr_open(zPath, &seg, &err) != LP_OK) fail_msg("%s", err.zMsg);
    assert_int_equal(fts_segr_check(seg, &err), LP_OK);
    FtsSource *src = fts_segr_source(seg);
    FtsTermInfo info;
    assert_int_equal(src->vt->xLookup(src, (const uint8_t *)"\x00" "ab", 3, &info, &err), 1);
    assert_int_equal(info.nEarlier, 0);
    assert_int_equal(src->vt->xLookup(src, (const uint8_t *)"\x01" "ab", 3, &info, &err), 1);
    assert_int_equal(info.nEarlier, FTS_EARLIER_UNKNOWN);
    /* with an in-memory part after it: the sum is unknown too */
    FtsMem *m = fts_mem_new(3);
    FtsDocBuf buf = {0};
    assert_int_equal(fts_docbuf_field(&buf, g_an, 0, "ab", 2, &err), LP_OK);
    assert_int_equal(fts_docbuf_field(&buf, g_an, 1, "ab", 2, &err), LP_OK);
    assert_int_equal(fts_mem_add(m, 0, &buf), LP_OK);
    fts_docbuf_free(&buf);
    FtsSource *ms = fts_mem_source(m);
    assert_int_equal(ms->vt->xLookup(ms, (const uint8_t *)"\x01" "ab", 3, &info, &err), 1);
    assert_int_equal(info.nEarlier, 1);
    FtsSource *aSrc[2] = {src, ms};
    uint32_t aBase[2] = {0, src->nDocs};
    FtsMulti *mu = fts_multi_new(aSrc, aBase, 2, &err);
    assert_non_null(mu);
    FtsSource *mus = fts_multi_source(mu);
    assert_int_equal(mus->vt->xLookup(mus, (const uint8_t *)"\x01" "ab", 3, &info, &err), 1);
    assert_int_equal(info.nEarlier, FTS_EARLIER_UNKNOWN);
    /* Rewritten (as a merge does), the count is made from the postings:
    ** the old file's documents with "ab" in fields 0 and 1, plus the new
    ** one. */
    uint32_t nBoth = 1;
    FtsPostings *c0 = src->vt->xOpen(src, (const uint8_t *)"\x00" "ab", 3, 0, &err);
    FtsPostings *c1 = src->vt->xOpen(src, (const uint8_t *)"\x01" "ab", 3, 0, &err);
    c0->vt->xNext(c0);
    for (uint32_t d = c1->vt->xNext(c1); d != FTS_NO_DOC; d = c1->vt->xNext(c1)) {
        if (c0->doc < d) c0->vt->xAdvance(c0, d);
        nBoth += c0->doc == d;
    }
    c0->vt->xClose(c0);
    c1->vt->xClose(c1);
    FtsSegment *seg2 = seal(mus);
    FtsSource *s2 = fts_segr_source(seg2);
    assert_int_equal(s2->vt->xLookup(s2, (const uint8_t *)"\x01" "ab", 3, &info, &err), 1);
    assert_int_equal(info.nEarlier, nBoth);
    assert_true(nBoth > 1); /* the seed has such documents */
    fts_segr_close(seg2);
    fts_multi_free(mu);
    fts_mem_free(m);
    fts_segr_close(seg);
}

/* Hand-made layouts: one part at base 0 (forward mode: the part's own
** cursors), one part at a base, an empty part last after a gap (counted in
** nDocs), only empty parts, no part at all. */
static void test_layouts(void **state) {
    (void)state;
    g_rng = 3;
    FtsDocBuf buf = {0};
    FtsMem *a = fts_mem_new(NF), *b = fts_mem_new(NF), *e = fts_mem_new(NF);
    Doc d;
    for (uint32_t i = 0; i < 300; i++) {
        random_doc(&d);
        add_doc(a, i, &d, &buf);
        random_doc(&d);
        add_doc(b, i, &d, &buf);
    }
    fts_docbuf_free(&buf);
    FtsSegment *seg = seal(fts_mem_source(a));
    FtsSource *sa = fts_segr_source(seg), *sb = fts_mem_source(b), *se = fts_mem_source(e);
    LpError err;
    uint8_t key[8] = {1, 'a', 'b', '0'};
    FtsTermInfo ri, mi;
    assert_int_equal(sa->vt->xLookup(sa, key, 4, &ri, &err), 1);

    /* forward: a segment at 0, then an empty part after a gap */
    FtsSource *ap[3] = {NULL, sa, se};
    uint32_t aBase[3] = {0, 0, 350};
    FtsMulti *m = fts_multi_new(ap, aBase, 3, &err);
    assert_non_null(m);
    FtsSource *ms = fts_multi_source(m);
    assert_int_equal(ms->nDocs, 350);
    assert_int_equal(ms->vt->xLookup(ms, key, 4, &mi, &err), 1);
    assert_int_equal(ri.df, mi.df); /* the part's own info */
    assert_int_equal(ri.cf, mi.cf);
    assert_memory_equal(ri.aLoc, mi.aLoc, sizeof(ri.aLoc));
    FtsPostings *c = ms->vt->xOpenFound(ms, key, 4, &mi, 0, &err),
                *c0 = sa->vt->xOpen(sa, key, 4, 0, &err);
    const FtsPostingsVt *segVt = c0->vt;
    assert_ptr_equal(c->vt, segVt); /* the part's own cursor */
    c->vt->xClose(c);
    c0->vt->xClose(c0);
    assert_int_equal(ms->vt->xDocLen(ms, 1, 299), sa->vt->xDocLen(sa, 1, 299));
    assert_int_equal(ms->vt->xDocLen(ms, 1, 300), 0);
    assert_int_equal(ms->vt->xDocLen(ms, 1, 349), 0);
    fts_multi_free(m);

    /* one part at a base: translated */
    aBase[1] = 1000;
    aBase[2] = 2000;
    m = fts_multi_new(ap, aBase, 3, &err);
    ms = fts_multi_source(m);
    assert_int_equal(ms->nDocs, 2000);
    c = ms->vt->xOpen(ms, key, 4, 0, &err);
    c0 = sa->vt->xOpen(sa, key, 4, 0, &err);
    assert_ptr_not_equal(c->vt, c0->vt);
    assert_int_equal(c->df, c0->df);
    while (c0->vt->xNext(c0) != FTS_NO_DOC) {
        assert_int_equal(c->vt->xNext(c), c0->doc + 1000);
        assert_int_equal(c->tf, c0->tf);
    }
    assert_int_equal(c->vt->xNext(c), FTS_NO_DOC);
    c->vt->xClose(c);
    c0->vt->xClose(c0);
    assert_int_equal(ms->vt->xDocLen(ms, 2, 999), 0);
    assert_int_equal(ms->vt->xDocLen(ms, 2, 1000), sa->vt->xDocLen(sa, 2, 0));
    fts_multi_free(m);

    /* a key that only the part at base 0 holds: that part's cursor as is */
    uint8_t key2[8] = {1, 'z', 'z', 'z'};
    assert_int_equal(sa->vt->xLookup(sa, key2, 4, &ri, &err), 0);
    FtsSource *ap2[2] = {sa, sb};
    uint32_t aBase2[2] = {0, 300};
    m = fts_multi_new(ap2, aBase2, 2, &err);
    ms = fts_multi_source(m);
    assert_int_equal(ms->vt->xLookup(ms, key, 4, &mi, &err), 1);
    c = ms->vt->xOpenFound(ms, key, 4, &mi, 0, &err);
    assert_ptr_not_equal(c->vt, segVt); /* both hold ab0: merged */
    c->vt->xClose(c);
    /* a key only the segment at 0 holds: its own cursor */
    uint8_t key3[8] = {2, 'x', 'y'};
    int nKey3 = 3;
    for (int w = 2; w < NWORD; w += 3) { /* a tags word in a but not in b */
        nKey3 = 1 + snprintf((char *)key3 + 1, 7, "xy%d", w);
        if (sa->vt->xLookup(sa, key3, nKey3, &ri, &err) == 1 &&
            sb->vt->xLookup(sb, key3, nKey3, &mi, &err) == 0)
            break;
        nKey3 = 0;
    }
    if (nKey3) {
        assert_int_equal(ms->vt->xLookup(ms, key3, nKey3, &mi, &err), 1);
        c = ms->vt->xOpenFound(ms, key3, nKey3, &mi, 0, &err);
        assert_ptr_equal(c->vt, segVt);
        c->vt->xClose(c);
    }
    /* an info from somewhere else is not trusted: every part is searched */
    FtsTermInfo bogus = {.df = 1, .cf = 1};
    c = ms->vt->xOpenFound(ms, key, 4, &bogus, 0, &err);
    assert_int_equal(ms->vt->xLookup(ms, key, 4, &mi, &err), 1);
    assert_int_equal(c->df, mi.df);
    c->vt->xClose(c);
    fts_multi_free(m);

    /* only empty or NULL parts; no parts */
    FtsSource *ap3[2] = {se, NULL};
    uint32_t aBase3[2] = {5, 9};
    m = fts_multi_new(ap3, aBase3, 2, &err);
    ms = fts_multi_source(m);
    assert_int_equal(ms->nDocs, 9);
    assert_int_equal(ms->nFields, NF);
    assert_int_equal(ms->vt->xLookup(ms, key, 4, &mi, &err), 0);
    KeyVec v = {0};
    assert_int_equal(ms->vt->xScan(ms, (const uint8_t *)"", 0, collect_key, &v, &err), LP_OK);
    assert_int_equal(v.n, 0);
    c = ms->vt->xOpen(ms, key, 4, 1, &err);
    assert_int_equal(c->vt->xAdvance(c, 3), FTS_NO_DOC);
    uint32_t aPos[4];
    assert_int_equal(c->vt->xPositions(c, aPos, &err), LP_INTERNAL);
    c->vt->xClose(c);
    fts_multi_free(m);
    m = fts_multi_new(NULL, NULL, 0, &err);
    assert_non_null(m);
    assert_int_equal(fts_multi_source(m)->nDocs, 0);
    fts_multi_free(m);
    fts_multi_free(NULL);

    fts_segr_close(seg);
    fts_mem_free(a);
    fts_mem_free(b);
    fts_mem_free(e);
}

static void test_bad_parts(void **state) {
    (void)state;
    FtsMem *a = fts_mem_new(2), *b = fts_mem_new(3);
    FtsDocBuf buf = {0};
    LpError err;
    for (uint32_t i = 0; i < 10; i++) {
        fts_docbuf_reset(&buf);
        assert_int_equal(fts_docbuf_field(&buf, g_an, 0, "ab cd", 5, &err), LP_OK);
        assert_int_equal(fts_mem_add(a, i, &buf), LP_OK);
        assert_int_equal(fts_mem_add(b, i, &buf), LP_OK);
    }
    fts_docbuf_free(&buf);
    FtsSource *ap[2] = {fts_mem_source(a), fts_mem_source(a)};
    uint32_t aBase[2] = {0, 9};
    assert_null(fts_multi_new(ap, aBase, 2, &err)); /* overlap */
    assert_int_equal(err.code, LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "part 1 starts at ordinal 9"));
    aBase[1] = 10;
    FtsMulti *m = fts_multi_new(ap, aBase, 2, &err); /* adjacent: fine */
    assert_non_null(m);
    assert_int_equal(fts_multi_source(m)->nDocs, 20);
    fts_multi_free(m);
    aBase[0] = 20; /* descending */
    assert_null(fts_multi_new(ap, aBase, 2, &err));
    assert_int_equal(err.code, LP_BADINPUT);
    aBase[0] = 0;
    aBase[1] = FTS_BEFORE_FIRST - 5; /* past the largest ordinal */
    assert_null(fts_multi_new(ap, aBase, 2, &err));
    assert_int_equal(err.code, LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "largest ordinal"));
    aBase[1] = FTS_BEFORE_FIRST - 10; /* ends exactly at it */
    m = fts_multi_new(ap, aBase, 2, &err);
    assert_non_null(m);
    fts_multi_free(m);
    ap[1] = fts_mem_source(b);
    aBase[1] = 10;
    assert_null(fts_multi_new(ap, aBase, 2, &err)); /* different fields */
    assert_int_equal(err.code, LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "fields"));
    assert_null(fts_multi_new(ap, aBase, -1, &err));
    assert_int_equal(err.code, LP_BADINPUT);
    assert_null(fts_multi_new(NULL, aBase, 2, &err));
    assert_int_equal(err.code, LP_BADINPUT);
    fts_mem_free(a);
    fts_mem_free(b);
}

/* -- a part that fails: errors of xLookup, xScan and cursors come through -- */

typedef struct FailSrc {
    FtsSource src;    /* first */
    FtsSource *inner; /* a real source it answers from */
    int bFailLookup, bFailScan;
} FailSrc;

typedef struct FailCur {
    FtsPostings base;
    FtsPostings *inner;
    int nSeen;
} FailCur;

static uint32_t fc_next(FtsPostings *p) {
    FailCur *c = (FailCur *)p;
    /* a damaged list: it ends after its third document */
    if (++c->nSeen > 3) return p->doc = FTS_NO_DOC;
    p->doc = c->inner->vt->xNext(c->inner);
    p->tf = c->inner->tf;
    return p->doc;
}

static uint32_t fc_advance(FtsPostings *p, uint32_t target) {
    FailCur *c = (FailCur *)p;
    p->doc = c->inner->vt->xAdvance(c->inner, target);
    p->tf = c->inner->tf;
    return p->doc;
}

static int fc_positions(FtsPostings *p, uint32_t *aPos, LpError *err) {
    FailCur *c = (FailCur *)p;
    return c->inner->vt->xPositions(c->inner, aPos, err);
}

static uint32_t fc_shallow(FtsPostings *p, uint32_t target, uint32_t *pMaxTf, uint32_t *pMinLen) {
    FailCur *c = (FailCur *)p;
    return c->inner->vt->xShallow(c->inner, target, pMaxTf, pMinLen);
}

static void fc_close(FtsPostings *p) {
    FailCur *c = (FailCur *)p;
    c->inner->vt->xClose(c->inner);
    free(c);
}

static int fc_status(FtsPostings *p, LpError *err) {
    (void)p;
    return lp_err_set(err, LP_CORRUPT, "fake part: damaged list");
}

static const FtsPostingsVt fail_cur_vt = {fc_next,  fc_advance, fc_positions, fc_shallow,
                                          fc_close, fc_status,  NULL, NULL};

static int fs_lookup(FtsSource *s, const uint8_t *key, int nKey, FtsTermInfo *pInfo, LpError *err) {
    FailSrc *f = (FailSrc *)s;
    if (f->bFailLookup) return -lp_err_set(err, LP_CORRUPT, "fake part: damaged dictionary");
    return f->inner->vt->xLookup(f->inner, key, nKey, pInfo, err);
}

static FtsPostings *fs_wrap(FtsPostings *in) {
    if (!in) return NULL;
    FailCur *c = calloc(1, sizeof(*c));
    c->base = *in;
    c->base.vt = &fail_cur_vt;
    c->inner = in;
    return &c->base;
}

static FtsPostings *fs_open(FtsSource *s, const uint8_t *key, int nKey, int bPos, LpError *err) {
    FailSrc *f = (FailSrc *)s;
    if (f->bFailLookup) {
        lp_err_set(err, LP_CORRUPT, "fake part: damaged dictionary");
        return NULL;
    }
    return fs_wrap(f->inner->vt->xOpen(f->inner, key, nKey, bPos, err));
}

static int fs_scan(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                   LpError *err) {
    FailSrc *f = (FailSrc *)s;
    if (f->bFailScan) return lp_err_set(err, LP_CORRUPT, "fake part: damaged dictionary block");
    return f->inner->vt->xScan(f->inner, prefix, nPrefix, xKey, ctx, err);
}

static uint32_t fs_doclen(FtsSource *s, int iField, uint32_t doc) {
    FailSrc *f = (FailSrc *)s;
    return f->inner->vt->xDocLen(f->inner, iField, doc);
}

static FtsPostings *fs_open_found(FtsSource *s, const uint8_t *key, int nKey,
                                  const FtsTermInfo *info, int bPos, LpError *err) {
    FailSrc *f = (FailSrc *)s;
    return fs_wrap(f->inner->vt->xOpenFound(f->inner, key, nKey, info, bPos, err));
}

static const FtsSourceVt fail_src_vt = {fs_lookup, fs_open, fs_scan, fs_doclen, fs_open_found, NULL, NULL};

/* A large write in parts on a pool (fts_seg_write_source_pool) is the
** file the write on one thread makes: from the in-memory index (blocks
** copied), from a multi of two indexes with a map keeping every document
** (a merge with nothing deleted: postings one by one), and a source too
** small to share out (written from the keys gathered), and a part that
** fails fails the write and leaves no file. */
static void test_flush_in_parts(void **state) {
    (void)state;
    g_rng = 13;
    enum { N = 3000 };
    FtsMem *m = fts_mem_new(NF), *a = fts_mem_new(NF), *b = fts_mem_new(NF);
    FtsDocBuf buf = {0};
    Doc d;
    static uint32_t aMap[N];
    for (uint32_t i = 0; i < N; i++) {
        random_doc(&d);
        add_doc(m, i, &d, &buf);
        add_doc(i < N / 2 ? a : b, i < N / 2 ? i : i - N / 2, &d, &buf);
        aMap[i] = i;
    }
    fts_docbuf_free(&buf);
    LpError err;
    Tpool *pool = tpool_new(2, &err);
    assert_non_null(pool);
    FtsSource *aSrc[2] = {fts_mem_source(a), fts_mem_source(b)};
    uint32_t aBase[2] = {0, N / 2};
    FtsMulti *mu = fts_multi_new(aSrc, aBase, 2, &err);
    assert_non_null(mu);
    /* k 2: half the documents, under the postings worth sharing out:
    ** written here from the keys gathered */
    for (int k = 0; k < 3; k++) {
        FtsSource *src = k == 1 ? fts_multi_source(mu) : k == 2 ? fts_mem_source(a) : fts_mem_source(m);
        const uint32_t *map = k == 1 ? aMap : NULL;
        char z1[128], z2[128];
        snprintf(z1, sizeof(z1), "%s", tmp_path());
        snprintf(z2, sizeof(z2), "%s", tmp_path());
        uint32_t nOut = k == 2 ? N / 2 : N;
        assert_int_equal(fts_seg_write_source(z1, src, map, nOut, &err), LP_OK);
        assert_int_equal(fts_seg_write_source_pool(z2, src, map, nOut, pool, &err), LP_OK);
        expect_same_bytes(z1, z2);
        /* with the infix filter stored, the parts' trigram lists are
        ** joined as their blocks are: the same file again, and its
        ** filter the dictionary's (fts_segr_check) */
        assert_int_equal(fts_seg_write_source_flags(z1, src, map, nOut, NULL, FTS_SEGW_INFIX, &err), LP_OK);
        assert_int_equal(fts_seg_write_source_flags(z2, src, map, nOut, pool, FTS_SEGW_INFIX, &err), LP_OK);
        FtsSegment *seg;
        if (fts_segr_open(z2, &seg, &err) != LP_OK) fail_msg("open: %s", err.zMsg);
        expect_same_bytes(z1, z2); /* (removes them: the mapping stays) */
        if (fts_segr_check(seg, &err) != LP_OK) fail_msg("check: %s", err.zMsg);
        FtsSegInfo info;
        assert_int_equal(fts_segr_info(seg, &info, &err), LP_OK);
        assert_true(info.szInfix > 100); /* lists, not only the counts */
        fts_segr_close(seg);
    }
    /* every list's status fails: so does the write, and the file is gone */
    FailSrc f = {*fts_mem_source(m), fts_mem_source(m), 0, 0};
    f.src.vt = &fail_src_vt;
    const char *zPath = tmp_path();
    lp_err_clear(&err);
    assert_int_equal(fts_seg_write_source_pool(zPath, &f.src, NULL, 0, pool, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "damaged list"));
    assert_int_not_equal(access(zPath, F_OK), 0);
    f.bFailScan = 1;
    assert_int_equal(fts_seg_write_source_pool(zPath, &f.src, NULL, 0, pool, &err), LP_CORRUPT);
    assert_int_not_equal(access(zPath, F_OK), 0);
    fts_multi_free(mu);
    tpool_free(pool);
    fts_mem_free(m);
    fts_mem_free(a);
    fts_mem_free(b);
}

static void test_part_errors(void **state) {
    (void)state;
    g_rng = 4;
    FtsMem *a = fts_mem_new(NF), *b = fts_mem_new(NF);
    FtsDocBuf buf = {0};
    Doc d;
    for (uint32_t i = 0; i < 200; i++) {
        random_doc(&d);
        add_doc(a, i, &d, &buf);
        random_doc(&d);
        add_doc(b, i, &d, &buf);
    }
    fts_docbuf_free(&buf);
    FailSrc f = {*fts_mem_source(b), fts_mem_source(b), 0, 0};
    f.src.vt = &fail_src_vt;
    FtsSource *ap[2] = {fts_mem_source(a), &f.src};
    uint32_t aBase[2] = {0, 500};
    LpError err;
    FtsMulti *m = fts_multi_new(ap, aBase, 2, &err);
    FtsSource *ms = fts_multi_source(m);
    uint8_t key[8] = {1, 'a', 'b', '0'};
    FtsTermInfo info;

    /* a list that a part ends early: the multi goes on, xStatus tells */
    assert_int_equal(ms->vt->xLookup(ms, key, 4, &info, &err), 1);
    FtsPostings *c = ms->vt->xOpenFound(ms, key, 4, &info, 0, &err);
    assert_non_null(c);
    while (c->vt->xNext(c) != FTS_NO_DOC) {
    }
    lp_err_clear(&err);
    assert_int_equal(c->vt->xStatus(c, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "damaged list"));
    c->vt->xClose(c);

    /* the engine reports it */
    Arena ar;
    arena_init(&ar, 0);
    FtsNode *root;
    assert_int_equal(fts_match_parse(&ar, "ab0", 3, g_azField, NF, &root, &err), LP_OK);
    FtsRankParams rank;
    fts_rank_defaults(&rank);
    FtsQuery *q;
    assert_int_equal(fts_query_new(&ar, root, "ab0", g_an, ms, &rank, &q, &err), LP_OK);
    FtsHit aHit[10];
    int nHit;
    FtsStats st;
    assert_int_equal(fts_query_topk(q, 10, NULL, NULL, aHit, &nHit, &st, &err), LP_CORRUPT);
    fts_query_free(q);

    /* a dictionary that fails: lookups, opens, scans and queries say so */
    f.bFailLookup = 1;
    assert_true(ms->vt->xLookup(ms, key, 4, &info, &err) < 0);
    assert_int_equal(err.code, LP_CORRUPT);
    assert_null(ms->vt->xOpen(ms, key, 4, 0, &err));
    assert_int_equal(err.code, LP_CORRUPT);
    assert_int_not_equal(fts_query_new(&ar, root, "ab0", g_an, ms, &rank, &q, &err), LP_OK);
    assert_int_equal(err.code, LP_CORRUPT);
    f.bFailLookup = 0;
    f.bFailScan = 1;
    KeyVec v = {0};
    assert_int_equal(ms->vt->xScan(ms,
                                   (const uint8_t *)"\x01"
                                                    "a",
                                   2, collect_key, &v, &err),
                     LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "dictionary block"));
    /* the failing part streamed or collected: both ways */
    aBase[0] = 0;
    FtsSource *ap2[2] = {&f.src, fts_mem_source(a)};
    uint32_t aBase2[2] = {0, 1000};
    FtsMulti *m2 = fts_multi_new(ap2, aBase2, 2, &err);
    FtsSource *ms2 = fts_multi_source(m2);
    assert_int_equal(ms2->vt->xScan(ms2, (const uint8_t *)"\x01", 1, collect_key, &v, &err),
                     LP_CORRUPT);
    fts_multi_free(m2);
    free(v.a);
    arena_free(&ar);
    fts_multi_free(m);
    fts_mem_free(a);
    fts_mem_free(b);
}

/* ----------------------------------------------------------- benchmark */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds for one top-10 run of root over src; the hits' ordinals are
** added to *pSum. */
static double time_query(FtsSource *src, Arena *a, const FtsNode *root, const char *zQuery,
                         uint64_t *pSum) {
    LpError err;
    FtsRankParams rank;
    fts_rank_defaults(&rank);
    double t0 = now_s();
    FtsQuery *q;
    assert_int_equal(fts_query_new(a, root, zQuery, g_an, src, &rank, &q, &err), LP_OK);
    FtsHit aHit[10];
    int n;
    FtsStats st;
    assert_int_equal(fts_query_topk(q, 10, NULL, NULL, aHit, &n, &st, &err), LP_OK);
    fts_query_free(q);
    double t = now_s() - t0;
    for (int i = 0; i < n; i++)
        *pSum += aHit[i].doc;
    return t;
}

static void test_bench(void **state) {
    (void)state;
    if (!getenv("LOUPE_MULTI_BENCH")) {
        skip();
        return;
    }
    enum { N = 50000, NPART = 4, VOCAB = 5000 };
    g_rng = 5;
    FtsMem *all = fts_mem_new(2);
    FtsDocBuf buf = {0};
    LpError err;
    char text[4096];
    for (uint32_t i = 0; i < N; i++) {
        fts_docbuf_reset(&buf);
        for (int f = 0; f < 2; f++) {
            int len = f == 0 ? 3 + (int)rnd_below(6) : 20 + (int)rnd_below(60);
            size_t n = 0;
            for (int k = 0; k < len; k++)
                n += (size_t)snprintf(text + n, sizeof(text) - n, "w%d ", rnd_word_of(VOCAB));
            assert_int_equal(fts_docbuf_field(&buf, g_an, f, text, n, &err), LP_OK);
        }
        assert_int_equal(fts_mem_add(all, i, &buf), LP_OK);
    }
    fts_docbuf_free(&buf);
    FtsSegment *one = seal(fts_mem_source(all));
    FtsSegment *aSeg[NPART];
    FtsSource *aSrc[NPART];
    uint32_t aBase[NPART];
    uint32_t *aMap = malloc(sizeof(uint32_t) * N);
    for (int p = 0; p < NPART; p++) {
        uint32_t lo = (uint32_t)((uint64_t)N * p / NPART),
                 hi = (uint32_t)((uint64_t)N * (p + 1) / NPART);
        for (uint32_t d = 0; d < N; d++)
            aMap[d] = d >= lo && d < hi ? d - lo : FTS_NO_DOC;
        const char *zPath = tmp_path();
        assert_int_equal(fts_seg_write_source(zPath, fts_mem_source(all), aMap, hi - lo, &err),
                         LP_OK);
        assert_int_equal(fts_segr_open(zPath, &aSeg[p], &err), LP_OK);
        unlink(zPath);
        aSrc[p] = fts_segr_source(aSeg[p]);
        aBase[p] = lo;
    }
    free(aMap);
    FtsSource *pOne = fts_segr_source(one);
    uint32_t zero = 0;
    FtsMulti *m1 = fts_multi_new(&pOne, &zero, 1, &err);
    FtsMulti *m4 = fts_multi_new(aSrc, aBase, NPART, &err);
    static const char *const azQ[] = {
        "w1 | w5 | w40 | w300", /* OR top-10 (maxscore) */
        "w0 | w1 | w2",         /* OR of frequent words */
        "w3 w10",               /* AND of two frequent words */
        "w2 w50 w400",          /* AND with a rare word */
        "w100 | w2000",         /* OR of rare words */
        "\"w0 w1\"",            /* phrase */
        "w1*",                  /* prefix */
    };
    /* The three sources take turns, and the fastest run of each counts:
    ** on a shared machine the minimum is what the code costs. */
    printf("  %-24s %12s %12s %12s %8s\n", "top 10 of 50k docs", "segment us", "multi(1) us",
           "multi(4) us", "4 / 1");
    for (size_t i = 0; i < sizeof(azQ) / sizeof(azQ[0]); i++) {
        FtsSource *aSrc3[3] = {pOne, fts_multi_source(m1), fts_multi_source(m4)};
        double aBest[3] = {1e9, 1e9, 1e9};
        uint64_t aSum[3] = {0, 0, 0};
        Arena a;
        arena_init(&a, 0);
        FtsNode *root;
        assert_int_equal(fts_match_parse(&a, azQ[i], strlen(azQ[i]), g_azField, 2, &root, &err),
                         LP_OK);
        int nRound = strchr(azQ[i], '*') ? 11 : 201;
        for (int r = 0; r < nRound; r++) {
            for (int j = 0; j < 3; j++) {
                double t = time_query(aSrc3[j], &a, root, azQ[i], &aSum[j]);
                if (t < aBest[j]) aBest[j] = t;
            }
        }
        arena_free(&a);
        assert_int_equal(aSum[0], aSum[1]);
        assert_int_equal(aSum[0], aSum[2]); /* the same hits */
        printf("  %-24s %12.1f %12.1f %12.1f %8.2f\n", azQ[i], aBest[0] * 1e6, aBest[1] * 1e6,
               aBest[2] * 1e6, aBest[2] / aBest[0]);
    }
    fts_multi_free(m1);
    fts_multi_free(m4);
    for (int p = 0; p < NPART; p++)
        fts_segr_close(aSeg[p]);
    fts_segr_close(one);
    fts_mem_free(all);
}

/* Adds document ord to m: field f's text is z[f] (NF fields). */
static void add_text(FtsMem *m, uint32_t ord, const char *const *az) {
    FtsDocBuf buf = {0};
    LpError err;
    for (int f = 0; f < NF; f++) {
        assert_int_equal(fts_docbuf_field(&buf, g_an, f, az[f], strlen(az[f]), &err), LP_OK);
    }
    assert_int_equal(fts_mem_add(m, ord, &buf), LP_OK);
    fts_docbuf_free(&buf);
}

/* The in-memory index's xScanHas: after a few wildcard scans it indexes
** its terms by trigram, and then reports far fewer keys than a scan while
** still every key holding the part (checked against a scan of
** everything); a document's new terms join the index on the next scan
** and are found at once, and the sorted terms (prefix scans) take them in
** their place, a few by search, many by a merge. */
static void test_mem_scan_has(void **state) {
    (void)state;
    g_rng = 77;
    enum { NDOC = 2000, NVOC = 4000 };
    static char az[NVOC][12];
    for (int i = 0; i < NVOC; i++) {
        int n = i % 100 == 0 ? 2 : 5 + (int)rnd_below(6); /* a few 2-letter words */
        for (int j = 0; j < n; j++) az[i][j] = (char)('a' + rnd_below(26));
        az[i][n] = 0;
    }
    FtsMem *m = fts_mem_new(NF);
    for (uint32_t d = 0; d < NDOC; d++) {
        char aText[NF][200];
        const char *ap[NF];
        for (int f = 0; f < NF; f++) {
            size_t k = 0;
            for (int w = (int)rnd_below(12); w > 0; w--) {
                k += (size_t)snprintf(aText[f] + k, sizeof(aText[f]) - k, "%s ", az[rnd_below(NVOC)]);
            }
            aText[f][k] = 0;
            ap[f] = aText[f];
        }
        add_text(m, d, ap);
    }
    FtsSource *src = fts_mem_source(m);
    LpError err;
    KeyVec all = {0};
    assert_int_equal(src->vt->xScan(src, (const uint8_t *)"", 0, collect_key, &all, &err), LP_OK);
    uint64_t nLate = 0, nLateQ = 0, nLate2 = 0, nLateQ2 = 0;
    size_t nBytes0 = fts_mem_bytes(m);
    for (int q = 0; q < 60; q++) {
        /* every third a part of 2 bytes (`*ab*`), in one field, sometimes
        ** a whole 2-letter word */
        int nPart = q % 3 == 2 ? 2 : 3;
        const char *w = az[nPart == 2 && q % 2 ? 100 * rnd_below(NVOC / 100) : rnd_below(NVOC)];
        const uint8_t *part = (const uint8_t *)w + rnd_below(strlen(w) - (size_t)nPart + 1);
        const uint8_t *aPart[1] = {part};
        int anPart[1] = {nPart};
        FtsScanHas has = {aPart, anPart, 1};
        uint8_t pre[1] = {(uint8_t)rnd_below(NF)};
        int nPre = nPart == 2 ? 1 : (int)rnd_below(2);
        KeyVec b = {0};
        assert_int_equal(src->vt->xScanHas(src, pre, nPre, &has, collect_key, &b, &err), LP_OK);
        int j = 0;
        for (int i = 0; i < all.n; i++) {
            const KeyRec *k = &all.a[i];
            if ((nPre && k->key[0] != pre[0]) || !key_has(k, part, nPart)) continue;
            while (j < b.n && !key_has(&b.a[j], part, nPart)) j++;
            if (j == b.n) fail_msg("scan %d left out a key", q);
            assert_int_equal(k->nKey, b.a[j].nKey);
            assert_memory_equal(k->key, b.a[j].key, (size_t)k->nKey);
            assert_int_equal(k->info.df, b.a[j].info.df);
            j++;
        }
        for (int i = 0; i < b.n; i++) {
            assert_true(!nPre || b.a[i].key[0] == pre[0]);
            if (i) assert_true(key_cmp(b.a[i - 1].key, b.a[i - 1].nKey, b.a[i].key, b.a[i].nKey) < 0);
        }
        if (q >= 8 && nPart == 3) {
            nLate += (uint64_t)b.n;
            nLateQ++;
        } else if (q >= 8) {
            nLate2 += (uint64_t)b.n;
            nLateQ2++;
        }
        free(b.a);
    }
    /* with the filter a 3-byte part narrows the keys to a few blocks of 8 */
    print_message("mem scan_has: %.1f keys reported per scan of %d\n", (double)nLate / (double)nLateQ, all.n);
    assert_true(nLate < nLateQ * (uint64_t)all.n / 10);
    /* a 2-byte part in one field, to the terms of the trigrams that begin
    ** or end with it: a few dozen of a third of the keys */
    print_message("mem scan_has, 2 bytes: %.1f keys reported per scan of %d\n", (double)nLate2 / (double)nLateQ2,
                  all.n);
    assert_true(nLate2 < nLateQ2 * (uint64_t)all.n / 30);
    /* the index counts in the segment's memory: a few trigram ids per term */
    assert_true(fts_mem_bytes(m) >= nBytes0 + 4 * (size_t)all.n);
    /* new terms: the filter is stale and rebuilt later; each is found */
    for (uint32_t d = NDOC; d < NDOC + 30; d++) {
        char aNew[NF][32];
        const char *ap[NF];
        for (int f = 0; f < NF; f++) {
            snprintf(aNew[f], sizeof(aNew[f]), "qqj%04uzzv", (unsigned)d * NF + (unsigned)f);
            ap[f] = aNew[f];
        }
        add_text(m, d, ap);
        for (int f = 0; f < NF; f++) {
            const uint8_t *aPart[1] = {(const uint8_t *)aNew[f] + 3};
            int anPart[1] = {4};
            FtsScanHas has = {aPart, anPart, 1};
            KeyVec b = {0};
            uint8_t pre[1] = {(uint8_t)f};
            assert_int_equal(src->vt->xScanHas(src, pre, 1, &has, collect_key, &b, &err), LP_OK);
            int bSeen = 0;
            for (int i = 0; i < b.n; i++) {
                bSeen |= b.a[i].nKey == (int)strlen(aNew[f]) + 1 &&
                         memcmp(b.a[i].key + 1, aNew[f], strlen(aNew[f])) == 0;
            }
            assert_true(bSeen);
            free(b.a);
        }
        /* the sorted cache, merged with the new terms: every key once, in order */
        KeyVec now = {0};
        assert_int_equal(src->vt->xScan(src, (const uint8_t *)"", 0, collect_key, &now, &err), LP_OK);
        assert_int_equal(now.n, all.n + (int)(d - NDOC + 1) * NF);
        for (int i = 1; i < now.n; i++) {
            assert_true(key_cmp(now.a[i - 1].key, now.a[i - 1].nKey, now.a[i].key, now.a[i].nKey) < 0);
        }
        free(now.a);
    }
    /* many new terms at once (merged by a walk, not searched for one by one) */
    uint32_t d0 = NDOC + 30;
    for (uint32_t d = d0; d < d0 + 500; d++) {
        char aNew[NF][32];
        const char *ap[NF];
        for (int f = 0; f < NF; f++) {
            snprintf(aNew[f], sizeof(aNew[f]), "%c%05ux", 'a' + (int)rnd_below(26), (unsigned)d * NF + (unsigned)f);
            ap[f] = aNew[f];
        }
        add_text(m, d, ap);
    }
    KeyVec now = {0};
    assert_int_equal(src->vt->xScan(src, (const uint8_t *)"", 0, collect_key, &now, &err), LP_OK);
    assert_int_equal(now.n, all.n + (30 + 500) * NF);
    for (int i = 1; i < now.n; i++) {
        assert_true(key_cmp(now.a[i - 1].key, now.a[i - 1].nKey, now.a[i].key, now.a[i].nKey) < 0);
    }
    free(now.a);
    free(all.a);
    fts_mem_free(m);
}

static int setup(void **state) {
    (void)state;
    AnalyzerConfig cfg = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    LpError err;
    if (analyzer_new(&cfg, &g_an, &err) != LP_OK) return -1;
    snprintf(g_zDir, sizeof(g_zDir), "/tmp/loupe-test-multiXXXXXX");
    if (!mkdtemp(g_zDir)) return -1;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    analyzer_free(g_an);
    rmdir(g_zDir);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layouts),     cmocka_unit_test(test_bad_parts),
        cmocka_unit_test(test_part_errors), cmocka_unit_test(test_random_splits),
        cmocka_unit_test(test_many_parts),  cmocka_unit_test(test_merge_through_multi),
        cmocka_unit_test(test_earlier_after_drops), cmocka_unit_test(test_earlier_unknown),
        cmocka_unit_test(test_flush_blocks),     cmocka_unit_test(test_flush_in_parts),
        cmocka_unit_test(test_mem_scan_has),
        cmocka_unit_test(test_bench),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
