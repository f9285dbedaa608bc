/*
** fuzz_analyzer.c — libFuzzer target for the text analyzer.
**
** Each input is analysed as a whole by three analyzers (plain; English
** stemming with English stop words; Russian then English stemming with the Russian,
** German and Nepali stop words) through
** analyzer_run(), and by the second through analyzer_run_unstemmed().
** Beyond the sanitizers' "no crash, no leak, no out-of-bounds read" it
** checks the analyzer's promises:
**   - invalid UTF-8 fails with LP_BADINPUT at utf8_check()'s offset and
**     emits nothing; valid input succeeds;
**   - every term is 1..ANALYZER_MAX_TERM bytes of valid UTF-8;
**   - byte offsets lie inside the input, are non-empty and increase
**     without overlapping; positions increase from the base and stay below
**     the end position reported;
**   - the unstemmed run numbers words 0, 1, 2... and yields exactly the
**     plain analyzer's terms and offsets, and the position count of the run
**     with stop words equals the number of words;
**   - a fourth analyzer, the second with exact forms (index_exact_words),
**     gives each of the second's terms preceded by an exact form: the mark
**     and the unstemmed word, cut, at the same position and offsets; no
**     other term starts with the mark;
**   - its query side (analyzer_run_query) gives, word for word, the
**     second's term or, where an '=' marks the word, the exact form; with
**     every word exact (="..."), the exact forms alone;
**   - a fifth, the plain one with index_sp, gives the plain run's terms and
**     offsets with boundaries ('.' or '..') between some of them: never
**     first, last or two in a row, each on a terminator ('.', '?', '!',
**     '\n' or a non-ASCII one) and taking a position, so each word's
**     position is the plain one plus the boundaries before it;
**   - a sixth, the plain one with remove_diacritics, gives the plain
**     run's words at the same positions and offsets, ASCII terms
**     unchanged (where the text has no joiner, which joins words: then
**     no more words than the plain run), each term its own folding
**     (check_strip);
**   - phrase_boundary (check_phrase_boundary): the plain run's words, each
**     the step further on per boundary before it, the length without them;
**   - soundex and metaphone (check_soundex, check_metaphone): the plain
**     run's words at their places, each its code or itself;
**   - html_strip() never lengthens the text and keeps valid UTF-8 valid;
**     html_strip_map() gives the same text and maps each byte in order
**     back to the input bytes it came from;
**   - with html_strip and index_zones, analyzer_run_doc() gives the words
**     analyzer_doc_text() + analyzer_run() give, then zones' terms: per
**     zone, as many '<z' as '</z', each list increasing, the k-th span
**     [open, close] ending before the next one starts, each end on a
**     word's position (below the end position).
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/analyzer.h"
#include "text/html.h"
#include "text/metaphone.h"
#include "text/regexp.h"
#include "text/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct Tok {
    char z[ANALYZER_MAX_TERM];
    int n;
    uint32_t iPos, iStart, iEnd;
} Tok;

typedef struct Run {
    int bExact;         /* an exact form and its word's term share a place */
    size_t nInput;      /* input length, for the offset checks */
    uint32_t iPosBase;  /* first position allowed */
    Tok *a;             /* tokens so far */
    size_t n, nAlloc;
} Run;

/* Keeps every token, unchecked (on_token after its checks; the zones'
** run, whose terms break on_token's order, directly). */
static int on_any(void *ctx, const Token *t) {
    Run *r = ctx;
    if (r->n == r->nAlloc) {
        size_t nNew = r->nAlloc ? 2 * r->nAlloc : 64;
        Tok *aNew = realloc(r->a, nNew * sizeof(Tok));
        if (!aNew) return 1;
        r->a = aNew;
        r->nAlloc = nNew;
    }
    if (t->n < 1 || t->n > ANALYZER_MAX_TERM) abort();
    Tok *k = &r->a[r->n++];
    memcpy(k->z, t->z, (size_t)t->n);
    k->n = t->n;
    k->iPos = t->iPos;
    k->iStart = t->iStart;
    k->iEnd = t->iEnd;
    return 0;
}

static int on_token(void *ctx, const Token *t) {
    Run *r = ctx;
    if (t->n < 1 || t->n > ANALYZER_MAX_TERM) abort();
    if (utf8_check(t->z, (size_t)t->n) != -1) abort();
    if (t->iStart >= t->iEnd || t->iEnd > r->nInput) abort();
    if (t->iPos < r->iPosBase) abort();
    if (r->n > 0) {
        const Tok *p = &r->a[r->n - 1];
        if (r->bExact && p->z[0] == ANALYZER_EXACT_MARK && t->z[0] != ANALYZER_EXACT_MARK) {
            if (t->iStart != p->iStart || t->iEnd != p->iEnd || t->iPos != p->iPos) abort();
        } else if (t->iStart < p->iEnd || t->iPos <= p->iPos) {
            abort();
        }
    }
    return on_any(ctx, t);
}

/* The zones' promises (see the top), for the input z[0..n). */
static void check_zones(const Analyzer *a, const char *z, size_t n, int64_t iBad) {
    Run doc = {0, 0, 0, NULL, 0, 0}, plain = {0, 0, 0, NULL, 0, 0};
    uint32_t nEndDoc = 0, nEndPlain = 0;
    LpError err;
    int rc = analyzer_run_doc(a, z, n, 0, on_any, &doc, &nEndDoc, &err);
    if (iBad >= 0) {
        if (rc != LP_BADINPUT || err.pos != iBad) abort();
        free(doc.a);
        return;
    }
    StrBuf buf = {0};
    const char *zt;
    size_t nt;
    int rc2 = analyzer_doc_text(a, z, n, &buf, &zt, &nt, &err);
    if (rc2 == LP_OK) rc2 = analyzer_run(a, zt, nt, 0, on_any, &plain, &nEndPlain, &err);
    if (rc == LP_OK && rc2 == LP_OK) {
        size_t nWord = 0;
        while (nWord < doc.n && doc.a[nWord].z[0] != ANALYZER_ZONE_MARK) nWord++;
        if (nWord != plain.n || nEndDoc != nEndPlain) abort();
        for (size_t i = 0; i < nWord; i++) {
            const Tok *x = &doc.a[i], *y = &plain.a[i];
            if (x->n != y->n || memcmp(x->z, y->z, (size_t)x->n) || x->iPos != y->iPos ||
                x->iStart != y->iStart || x->iEnd != y->iEnd) {
                abort();
            }
        }
        /* per zone: its opening terms, then its closing ones */
        for (size_t i = nWord; i < doc.n;) {
            const Tok *o = &doc.a[i];
            if (o->z[0] != ANALYZER_ZONE_MARK || o->n < 2 || o->z[1] == '/') abort();
            size_t nOpen = 0;
            while (i + nOpen < doc.n && doc.a[i + nOpen].n == o->n && !memcmp(doc.a[i + nOpen].z, o->z, (size_t)o->n)) nOpen++;
            if (i + 2 * nOpen > doc.n) abort();
            for (size_t k = 0; k < nOpen; k++) {
                const Tok *b = &doc.a[i + k], *e = &doc.a[i + nOpen + k];
                if (e->n != o->n + 1 || e->z[0] != ANALYZER_ZONE_MARK || e->z[1] != '/' ||
                    memcmp(e->z + 2, o->z + 1, (size_t)o->n - 1)) {
                    abort();
                }
                if (b->iPos > e->iPos || e->iPos >= nEndDoc) abort();
                if (k + 1 < nOpen && e->iPos >= doc.a[i + k + 1].iPos) abort();
                int bAtB = 0, bAtE = 0;
                for (size_t w = 0; w < nWord; w++) {
                    bAtB |= doc.a[w].iPos == b->iPos;
                    bAtE |= doc.a[w].iPos == e->iPos;
                }
                if (!bAtB || !bAtE) abort();
            }
            i += 2 * nOpen;
        }
    }
    strbuf_free(&buf);
    free(doc.a);
    free(plain.a);
}

/* Does z[0..n) hold a joiner (soft hyphen, U+200D, U+2060, U+FEFF), which
** remove_diacritics takes into words? */
static int has_joiner(const char *z, size_t n) {
    static const char *const azJoin[] = {"\xc2\xad", "\xe2\x80\x8d", "\xe2\x81\xa0", "\xef\xbb\xbf"};
    for (size_t k = 0; k < sizeof(azJoin) / sizeof(azJoin[0]); k++) {
        if (memmem(z, n, azJoin[k], strlen(azJoin[k]))) return 1;
    }
    return 0;
}

/* The plain analyzer with remove_diacritics (a) against the plain run
** pPlain of the valid text z[0..n): the same words at the same places (a
** word is folded, never split or merged; unless the text has a joiner,
** which joins words there), an ASCII word's term unchanged, and folding is
** idempotent: a term analysed again, where it is one word from end to
** end, gives itself. */
static void check_strip(const Analyzer *a, const Run *pPlain, const char *z, size_t n, uint32_t iBase) {
    Run r = {0, n, iBase, NULL, 0, 0};
    uint32_t iEnd;
    int rc = analyzer_run(a, z, n, iBase, on_token, &r, &iEnd, NULL);
    if (rc == 1) goto done; /* our realloc failed */
    if (rc != LP_OK) abort();
    int bSame = !has_joiner(z, n);
    if (bSame ? r.n != pPlain->n : r.n > pPlain->n) abort(); /* joined words are fewer */
    for (size_t k = 0; k < r.n; k++) {
        const Tok *t = &r.a[k];
        if (bSame) {
            const Tok *p = &pPlain->a[k];
            if (t->iPos != p->iPos || t->iStart != p->iStart || t->iEnd != p->iEnd) abort();
            int bAscii = 1; /* the word as written (its term may be cut short of a non-ASCII letter) */
            for (uint32_t i = p->iStart; i < p->iEnd; i++) bAscii &= (unsigned char)z[i] < 0x80;
            if (bAscii && (t->n != p->n || memcmp(t->z, p->z, (size_t)t->n))) abort();
        }
        Run again = {0, (size_t)t->n, 0, NULL, 0, 0};
        rc = analyzer_run_unstemmed(a, t->z, (size_t)t->n, on_any, &again, NULL);
        /* (NFKC may leave separators in a term: "⑿" is "(12)") */
        int bWhole = rc == LP_OK && again.n == 1 && again.a[0].iStart == 0 && again.a[0].iEnd == (uint32_t)t->n;
        if (bWhole && (again.a[0].n != t->n || memcmp(again.a[0].z, t->z, (size_t)t->n))) abort();
        if (rc != LP_OK && rc != 1) abort();
        free(again.a);
    }
done:
    free(r.a);
}

/* phrase_boundary (',', ';', U+2026, step 7): the plain run's words at the
** same bytes, each 7 positions further on for every gap before it that
** holds a boundary character with more of the gap after it; the length
** leaves the steps out. */
static void check_phrase_boundary(const Analyzer *a, const Run *pPlain, const char *z, size_t size,
                                  uint32_t iBase) {
    Run r = {0, size, iBase, NULL, 0, 0};
    uint32_t iEnd = 0;
    int rc = analyzer_run(a, z, size, iBase, on_token, &r, &iEnd, NULL);
    if (rc == 1) goto done; /* our realloc failed */
    if (rc != LP_OK || r.n != pPlain->n) abort();
    uint32_t nGap = 0;
    for (size_t k = 0; k < r.n; k++) {
        const Tok *t = &r.a[k], *p = &pPlain->a[k];
        if (t->n != p->n || memcmp(t->z, p->z, (size_t)t->n) || t->iStart != p->iStart) abort();
        if (k > 0) {
            const unsigned char *g = (const unsigned char *)z;
            size_t from = pPlain->a[k - 1].iEnd, to = t->iStart;
            int bGap = 0;
            for (size_t i = from; i < to && !bGap; i++) {
                size_t len = g[i] == ',' || g[i] == ';' ? 1
                             : i + 2 < to && g[i] == 0xE2 && g[i + 1] == 0x80 && g[i + 2] == 0xA6 ? 3 : 0;
                bGap = len && i + len < to;
            }
            nGap += bGap;
        }
        if (t->iPos != p->iPos + 7 * nGap) abort();
    }
    if (r.n && iEnd != r.a[r.n - 1].iPos + 1 - 7 * nGap) abort();
done:
    free(r.a);
}

static Analyzer *make(const char *zMorph, const char *zStop, int bExact, int bSp, int bStrip) {
    AnalyzerConfig cfg = {zMorph, zStop, 0, bExact, bSp, 0, NULL, 0, NULL, 0, NULL, bStrip, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *a = NULL;
    if (analyzer_new(&cfg, &a, NULL) != LP_OK) abort();
    return a;
}

/* regexp_filter_apply_map gives what regexp_filter_apply gave (zOut),
** and sources in z that never go back: a character's first byte from a
** character's start, its last byte up to a character's end. */
static void check_regexp_map(const RegexpFilter *f, const char *z, size_t size, const char *zOut, size_t nOut) {
    StrBuf out = {0};
    const char *zm;
    size_t nm;
    uint32_t *aMap = NULL;
    LpError err;
    int rc = regexp_filter_apply_map(f, z, size, &out, &zm, &nm, &aMap, &err);
    if (rc == LP_NOMEM) goto done;
    if (rc != LP_OK || nm != nOut || memcmp(zm, zOut, nOut) != 0) abort();
    if (!aMap != (zm == z)) abort();
    for (size_t i = 0; aMap && i < nm; i++) {
        uint32_t lo = aMap[2 * i], hi = aMap[2 * i + 1];
        if (lo >= hi || hi > size) abort();
        if (i > 0 && (lo < aMap[2 * i - 2] || hi < aMap[2 * i - 1])) abort();
        int bFirst = ((unsigned char)zm[i] & 0xC0) != 0x80;
        int bLast = i + 1 == nm || ((unsigned char)zm[i + 1] & 0xC0) != 0x80;
        if (bFirst && ((unsigned char)z[lo] & 0xC0) == 0x80) abort();
        if (bLast && hi < size && ((unsigned char)z[hi] & 0xC0) == 0x80) abort();
    }
done:
    free(aMap);
    strbuf_free(&out);
}

/* regexp_filter: the input as rules (compiled, or refused with a message,
** then run over a fixed text), and fixed rules over the input (valid
** UTF-8 out of valid in, the same through analyzer_doc_text). */
static void check_regexp(const char *z, size_t size, int64_t iBad) {
    static RegexpFilter *pFixed;
    static Analyzer *pAn;
    if (!pFixed) {
        static const char zRules[] = "(BLUE|RED) => COLOR\n(\\d+)\" => \\1 inch\n(?i)colou?r => col\xc3\xb6r\n"
                                     "x* => [\\0]\n(a)(b)? => \\2\\1\\\\";
        if (regexp_filter_new(zRules, &pFixed, NULL) != LP_OK || regexp_filter_count(pFixed) != 5) abort();
        AnalyzerConfig cfg = {"stem_en", NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, zRules, NULL, 0};
        if (analyzer_new(&cfg, &pAn, NULL) != LP_OK) abort();
    }
    StrBuf out = {0}, doc = {0};
    const char *zOut, *zDoc;
    size_t nOut, nDoc;
    LpError err;
    lp_err_clear(&err);
    int rc = regexp_filter_apply(pFixed, z, size, &out, &zOut, &nOut, &err);
    if (iBad >= 0) {
        if (rc != LP_BADINPUT || err.pos != iBad) abort();
    } else if (rc == LP_OK) {
        if (utf8_check(zOut, nOut) != -1) abort();
        if (analyzer_doc_text(pAn, z, size, &doc, &zDoc, &nDoc, &err) != LP_OK) abort();
        if (nDoc != nOut || memcmp(zDoc, zOut, nOut) != 0) abort();
        check_regexp_map(pFixed, z, size, zOut, nOut);
    } else if (rc != LP_LIMIT && rc != LP_NOMEM) {
        abort();
    }
    strbuf_free(&out);
    strbuf_free(&doc);
    /* the input as rules */
    char *zRules = malloc(size + 1);
    if (!zRules) return;
    memcpy(zRules, z, size);
    zRules[size] = 0;
    RegexpFilter *f = NULL;
    lp_err_clear(&err);
    rc = regexp_filter_new(zRules, &f, &err);
    if (rc == LP_BADINPUT) {
        if (f || !err.zMsg[0]) abort();
    } else if (rc == LP_OK) {
        static const char zText[] = "RED TUBE 5\" LONG, caf\xc3\xa9 colour aab xx 12";
        out = (StrBuf){0};
        rc = regexp_filter_apply(f, zText, sizeof(zText) - 1, &out, &zOut, &nOut, &err);
        if (rc == LP_OK && utf8_check(zOut, nOut) != -1) abort();
        if (rc == LP_OK) check_regexp_map(f, zText, sizeof(zText) - 1, zOut, nOut);
        if (rc != LP_OK && rc != LP_LIMIT && rc != LP_NOMEM) abort();
        strbuf_free(&out);
    } else if (rc != LP_NOMEM) {
        abort();
    }
    regexp_filter_free(f);
    free(zRules);
}

/* Runs a (a processor that replaces words) over z into *r: one term for
** each of the plain run's words, at its bytes' start and its position.
** 0 when our realloc failed (r is freed then). */
static int run_one_for_one(const Analyzer *a, const Run *pPlain, const char *z, size_t size, uint32_t iBase,
                           Run *r) {
    *r = (Run){0, size, iBase, NULL, 0, 0};
    LpError err;
    if (analyzer_run(a, z, size, iBase, on_token, r, NULL, &err) != LP_OK) {
        free(r->a);
        return 0; /* on_token's 1 */
    }
    if (r->n != pPlain->n) abort();
    for (size_t k = 0; k < r->n; k++) {
        if (r->a[k].iStart != pPlain->a[k].iStart || r->a[k].iPos != pPlain->a[k].iPos) abort();
    }
    return 1;
}

/* morphology 'soundex, stem_en': the plain analyzer's words one for one,
** each term a soundex code (letter, digits, no longer than the word) where
** the word is of the letters a..z and longer than one, else the word or
** its English stem. */
static void check_soundex(const Run *pPlain, const char *z, size_t size, uint32_t iBase) {
    static Analyzer *a;
    if (!a) a = make("soundex, stem_en", NULL, 0, 0, 0);
    Run r;
    if (!run_one_for_one(a, pPlain, z, size, iBase, &r)) return;
    for (size_t k = 0; k < r.n; k++) {
        const Tok *t = &r.a[k], *w = &pPlain->a[k];
        int bLetters = w->n > 1;
        for (int i = 0; i < w->n; i++) bLetters &= w->z[i] >= 'a' && w->z[i] <= 'z';
        if (!bLetters) continue;
        if (t->n > w->n || t->z[0] != w->z[0]) abort();
        for (int i = 1; i < t->n; i++) {
            if (t->z[i] < '0' || t->z[i] > '6' || t->z[i] == t->z[i - 1]) {
                if (!(t->z[i] == '0' && t->z[i - 1] == '0')) abort(); /* 0s pad, in a row */
            }
        }
    }
    free(r.a);
}

/* morphology='metaphone': each word of the plain run at its place, as it
** is or as a code of the algorithm's letters (A only first); the code is
** the one metaphone_code gives the word. */
static void check_metaphone(const Run *pPlain, const char *z, size_t size, uint32_t iBase) {
    static Analyzer *a;
    if (!a) a = make("metaphone", NULL, 0, 0, 0);
    Run r;
    if (!run_one_for_one(a, pPlain, z, size, iBase, &r)) return;
    for (size_t k = 0; k < r.n; k++) {
        const Tok *t = &r.a[k], *w = &pPlain->a[k];
        char zCode[ANALYZER_MAX_TERM];
        int n = metaphone_code(w->z, w->n, zCode, (int)sizeof(zCode));
        if (n == 0 || (n == w->n && memcmp(zCode, w->z, (size_t)n) == 0)) {
            if (t->n != w->n || memcmp(t->z, w->z, (size_t)w->n) != 0) abort();
            continue;
        }
        if (t->n != n || memcmp(t->z, zCode, (size_t)n) != 0) abort();
        for (int i = 0; i < n; i++) {
            if (!strchr("0FHJKLMNPRSTX", zCode[i]) && !(zCode[i] == 'A' && i == 0)) abort();
        }
    }
    free(r.a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* Created once, kept for the process: they are immutable and reachable,
    ** so neither a leak nor state carried between inputs. */
    static Analyzer *aAn[7], *pZones;
    if (!pZones) {
        AnalyzerConfig cfg = {"stem_en", NULL, 0, 1, 1, 1, "script", 0, "img=alt", 0, "h*, th, b", 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
        if (analyzer_new(&cfg, &pZones, NULL) != LP_OK) abort();
    }
    if (!aAn[0]) {
        aAn[0] = make(NULL, NULL, 0, 0, 0);
        aAn[1] = make("stem_en", "en", 0, 0, 0);
        aAn[2] = make("stem_ru, stem_en", "ru, de, ne", 0, 0, 0);
        aAn[3] = make("stem_en", "en", 1, 0, 0);
        aAn[4] = make(NULL, NULL, 0, 1, 0);
        aAn[5] = make(NULL, NULL, 0, 0, 1);
        AnalyzerConfig pb = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, "U+2C, ;, U+2026", 7};
        if (analyzer_new(&pb, &aAn[6], NULL) != LP_OK) abort();
    }
    /* A heap copy of exactly size bytes, so ASan catches any read past the
    ** end (the fuzzer's own buffer may have slack). */
    char *z = malloc(size ? size : 1);
    if (!z) return 0;
    if (size) memcpy(z, data, size);
    int64_t iBad = utf8_check(z, size);
    const uint32_t iBase = 3;

    /* Runs 0-2: analyzers 0-2; 3: unstemmed; 4: exact forms; 5: its query
    ** side; 6: the same, every word exact; 7: boundaries. */
    Run aRun[8];
    uint32_t aPosEnd[8];
    int aRc[8];
    for (int i = 0; i < 8; i++) {
        int bDoc = i < 3 || i == 4 || i == 7;
        aRun[i] = (Run){i == 4, size, bDoc ? iBase : 0, NULL, 0, 0};
        LpError err;
        lp_err_clear(&err);
        if (bDoc) {
            aRc[i] = analyzer_run(aAn[i < 3 ? i : i == 4 ? 3 : 4], z, size, iBase, on_token, &aRun[i],
                                  &aPosEnd[i], &err);
        } else {
            aRc[i] = i == 3 ? analyzer_run_unstemmed(aAn[1], z, size, on_token, &aRun[i], &err)
                            : analyzer_run_query(aAn[3], z, size, i == 6, on_token, &aRun[i], &err);
        }
        if (iBad >= 0) {
            if (aRc[i] != LP_BADINPUT || err.code != LP_BADINPUT || err.pos != iBad || aRun[i].n != 0) abort();
        } else if (aRc[i] == 1) {
            continue; /* our realloc failed */
        } else if (aRc[i] != LP_OK) {
            abort();
        } else if (bDoc && aRun[i].n > 0 && aPosEnd[i] <= aRun[i].a[aRun[i].n - 1].iPos) {
            abort();
        }
    }
    if (iBad < 0 && aRc[1] == LP_OK && aRc[3] == LP_OK && aRc[4] == LP_OK && aRc[5] == LP_OK &&
        aRc[6] == LP_OK) {
        const Run *pStem = &aRun[1], *pUnstem = &aRun[3], *pEx = &aRun[4], *pQuery = &aRun[5];
        if (pEx->n != 2 * pStem->n || pQuery->n != pStem->n || aPosEnd[4] != aPosEnd[1]) abort();
        if (aRun[6].n != pStem->n) abort();
        size_t u = 0; /* the unstemmed word at the same offset */
        for (size_t k = 0; k < pStem->n; k++) {
            const Tok *s = &pStem->a[k], *e = &pEx->a[2 * k], *t = &pEx->a[2 * k + 1], *q = &pQuery->a[k];
            if (s->z[0] == ANALYZER_EXACT_MARK) abort();
            if (t->n != s->n || memcmp(t->z, s->z, (size_t)s->n) || t->iPos != s->iPos) abort();
            while (u < pUnstem->n && pUnstem->a[u].iStart < s->iStart) u++;
            if (u == pUnstem->n || pUnstem->a[u].iStart != s->iStart) abort();
            const Tok *w = &pUnstem->a[u];
            size_t nCut = w->n < ANALYZER_MAX_TERM ? (size_t)w->n : utf8_floor(w->z, ANALYZER_MAX_TERM - 1);
            if (e->z[0] != ANALYZER_EXACT_MARK || (size_t)e->n != nCut + 1 || memcmp(e->z + 1, w->z, nCut)) {
                abort();
            }
            int bMarked = s->iStart > 0 && z[s->iStart - 1] == '=';
            const Tok *pWant = q->z[0] == ANALYZER_EXACT_MARK ? e : s;
            if (!bMarked && pWant == e) abort();
            if (q->n != pWant->n || memcmp(q->z, pWant->z, (size_t)q->n) || q->iStart != s->iStart) abort();
            const Tok *a = &aRun[6].a[k];
            if (a->n != e->n || memcmp(a->z, e->z, (size_t)e->n) || a->iStart != s->iStart) abort();
        }
    }
    if (iBad < 0 && aRc[0] == LP_OK && aRc[1] == LP_OK && aRc[3] == LP_OK) {
        const Run *pPlain = &aRun[0], *pUnstem = &aRun[3];
        if (pPlain->n != pUnstem->n) abort();
        for (size_t k = 0; k < pUnstem->n; k++) {
            const Tok *p = &pPlain->a[k], *u = &pUnstem->a[k];
            if (u->iPos != k || p->iPos != iBase + k) abort();
            if (p->n != u->n || memcmp(p->z, u->z, (size_t)u->n) != 0) abort();
            if (p->iStart != u->iStart || p->iEnd != u->iEnd) abort();
        }
        if (aPosEnd[0] != iBase + pUnstem->n || aPosEnd[1] != aPosEnd[0]) abort();
    }
    if (iBad < 0 && aRc[0] == LP_OK && aRc[7] == LP_OK) {
        const Run *pPlain = &aRun[0], *pSp = &aRun[7];
        size_t k = 0;     /* the plain run's next word */
        uint32_t nB = 0;  /* boundaries so far */
        int bPrevB = 1;   /* the last token was a boundary (or none yet) */
        for (size_t j = 0; j < pSp->n; j++) {
            const Tok *t = &pSp->a[j];
            int bB = (t->n == 1 && t->z[0] == '.') || (t->n == 2 && t->z[0] == '.' && t->z[1] == '.');
            if (bB) {
                unsigned char c = (unsigned char)z[t->iStart];
                if (bPrevB || j + 1 == pSp->n) abort();
                if (!(c == '.' || c == '?' || c == '!' || c == '\n' || c >= 0x80)) abort();
                nB++;
            } else {
                if (k == pPlain->n) abort();
                const Tok *p = &pPlain->a[k++];
                if (p->n != t->n || memcmp(p->z, t->z, (size_t)t->n) || p->iStart != t->iStart ||
                    p->iEnd != t->iEnd || t->iPos != p->iPos + nB) {
                    abort();
                }
            }
            bPrevB = bB;
        }
        if (k != pPlain->n || aPosEnd[7] != aPosEnd[0] + nB) abort();
    }
    if (iBad < 0 && aRc[0] == LP_OK) check_phrase_boundary(aAn[6], &aRun[0], z, size, iBase);
    static const char *const azRemove[] = {"script", "style", NULL};
    static const char *const azAttr[] = {"img", "alt", "a", "title", "p", "title", NULL};
    StrBuf sb = {0};
    html_strip(z, size, azRemove, azAttr, &sb);
    if (!sb.oom) {
        if (sb.n > size) abort();
        if (iBad < 0 && sb.n && utf8_check(sb.z, sb.n) != -1) abort();
    }
    /* html_strip_map: the same text, each byte mapped to the input bytes
    ** that produced it, in order; a byte of text is itself */
    uint32_t *aMap = malloc(sizeof(uint32_t) * 2 * (size ? size : 1));
    StrBuf mapped = {0};
    if (aMap) html_strip_map(z, size, azRemove, azAttr, aMap, &mapped);
    if (aMap && !sb.oom && !mapped.oom) {
        if (mapped.n != sb.n || (sb.n && memcmp(mapped.z, sb.z, sb.n) != 0)) abort();
        for (size_t i = 0; i < mapped.n; i++) {
            if (aMap[2 * i] >= aMap[2 * i + 1] || aMap[2 * i + 1] > size) abort();
            if (i > 0 && aMap[2 * i] < aMap[2 * i - 2]) abort();
            if (aMap[2 * i + 1] - aMap[2 * i] == 1 && z[aMap[2 * i]] != mapped.z[i]) abort();
        }
    }
    free(aMap);
    strbuf_free(&mapped);
    strbuf_free(&sb);
    check_zones(pZones, z, size, iBad);
    check_regexp(z, size, iBad);
    if (iBad < 0 && aRc[0] == LP_OK) check_strip(aAn[5], &aRun[0], z, size, iBase);
    if (iBad < 0 && aRc[0] == LP_OK) check_soundex(&aRun[0], z, size, iBase);
    if (iBad < 0 && aRc[0] == LP_OK) check_metaphone(&aRun[0], z, size, iBase);
    for (int i = 0; i < 8; i++) free(aRun[i].a);
    free(z);
    return 0;
}
