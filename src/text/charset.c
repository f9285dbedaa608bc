/*
** charset.c — see charset.h.
*/
#include "text/charset.h"

#include <stdlib.h>
#include <string.h>

#include "text/utf8.h"
#include "util/error.h"

/* One character of an item at z: U+hex, an escaped character or the
** character itself. Its code point in *pCp; the bytes read, or 0 when there
** is none there (or it is not valid). */
static int read_char(const char *z, uint32_t *pCp) {
    if ((z[0] == 'U' || z[0] == 'u') && z[1] == '+') {
        uint32_t v = 0;
        int k = 2;
        for (; k < 8; k++) {
            char c = z[k];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) break;
            v = v * 16 + (uint32_t)d;
        }
        if (k == 2) return 0;
        *pCp = v;
        return k;
    }
    int bEsc = z[0] == '\\' && z[1] != 0;
    const unsigned char *p = (const unsigned char *)z + bEsc;
    if (*p == 0) return 0;
    size_t n = 1;
    while (n < 4 && p[n] && (p[n] & 0xC0) == 0x80) n++;
    int len = utf8_decode(p, n, pCp);
    return len > 0 ? len + bEsc : 0;
}

static int range_cmp(const void *x, const void *y) {
    uint32_t a = ((const uint32_t *)x)[0], b = ((const uint32_t *)y)[0];
    return a < b ? -1 : a > b;
}

static int item_error(const char *zOption, const char *zItem, size_t nItem, const char *zWhy, LpError *err) {
    return lp_err_set(err, LP_BADINPUT, "%s: '%.*s': %s", zOption, (int)(nItem > 40 ? 40 : nItem), zItem, zWhy);
}

/* The next item of the list at *pp: its bytes in zBuf (NUL-ended; nBuf
** bytes of room), *pp moved past its comma. 1 when there is one, 0 at the
** end of the list, -1 (err set) for an empty or an over-long item (the
** message says zExpected). */
static int next_item(const char **pp, const char *zOption, const char *zExpected, char *zBuf, size_t nBuf,
                     LpError *err) {
    const char *p = *pp;
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) return 0;
    /* the item: up to an unescaped ',' */
    const char *zItem = p;
    while (*p && *p != ',') p += (*p == '\\' && p[1]) ? 2 : 1;
    size_t nItem = (size_t)(p - zItem);
    while (nItem > 0 && (zItem[nItem - 1] == ' ' || zItem[nItem - 1] == '\t') &&
           !(nItem >= 2 && zItem[nItem - 2] == '\\')) {
        nItem--;
    }
    if (*p == ',') p++;
    *pp = p;
    if (nItem == 0) {
        lp_err_set(err, LP_BADINPUT, "%s: an empty item (two commas in a row)", zOption);
        return -1;
    }
    if (nItem >= nBuf) {
        item_error(zOption, zItem, nItem, zExpected, err);
        return -1;
    }
    memcpy(zBuf, zItem, nItem);
    zBuf[nItem] = 0;
    return 1;
}

#define CHARSET_EXPECTED "expected a character, U+hex or a range such as a..z"
#define CHARMAP_EXPECTED \
    "expected a character, U+hex, a range such as a..z, a mapping such as A..Z->a..z, a range of " \
    "pairs such as U+100..U+17F/2, or an alias: non_cjk, non_cont, cjk, cont, chinese, japanese, "   \
    "korean, english, russian"

#define BLEND_EXPECTED \
    "expected a character, U+hex, a range such as a..z, a mapping such as @->_ or a range of pairs such as " \
    "U+100..U+17F/2"

/* Is cp a character an item may name? */
static int char_ok(uint32_t cp) {
    return cp > 0 && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
}

/* A character or a range at z: [*pLo, *pHi] (a character is a range of
** one); the bytes read, 0 when there is none. */
static int read_range(const char *z, uint32_t *pLo, uint32_t *pHi) {
    int k = read_char(z, pLo);
    *pHi = *pLo;
    if (k > 0 && strncmp(z + k, "..", 2) == 0) {
        int k2 = read_char(z + k + 2, pHi);
        k = k2 > 0 ? k + 2 + k2 : 0;
    }
    return k;
}

/* Why the range [lo, hi] is refused, or NULL. */
static const char *range_why(uint32_t lo, uint32_t hi) {
    if (!char_ok(lo) || !char_ok(hi) || (lo <= 0xDFFF && hi >= 0xD800)) {
        return "not a Unicode character (U+0, above U+10FFFF, or a surrogate)";
    }
    return lo > hi ? "a range must not end before it starts" : NULL;
}

int charset_parse(const char *z, const char *zOption, Charset *s, LpError *err) {
    memset(s, 0, sizeof(*s));
    int nAlloc = 0;
    const char *p = z;
    char zBuf[64];
    int got;
    while ((got = next_item(&p, zOption, CHARSET_EXPECTED, zBuf, sizeof(zBuf), err)) > 0) {
        size_t nItem = strlen(zBuf);
        uint32_t lo, hi;
        int k = read_range(zBuf, &lo, &hi);
        const char *zWhy = NULL;
        if (k <= 0 || (size_t)k != nItem) {
            zWhy = strstr(zBuf, "->") ? "maps a character: only characters and ranges are allowed here"
                                      : CHARSET_EXPECTED;
        } else {
            zWhy = range_why(lo, hi);
        }
        if (zWhy) {
            charset_free(s);
            return item_error(zOption, zBuf, nItem, zWhy, err);
        }
        if (s->nRange == nAlloc) {
            nAlloc = nAlloc ? 2 * nAlloc : 8;
            uint32_t *a = realloc(s->aRange, sizeof(uint32_t) * 2 * (size_t)nAlloc);
            if (!a) {
                charset_free(s);
                return lp_err_set(err, LP_NOMEM, "out of memory reading %s", zOption);
            }
            s->aRange = a;
        }
        s->aRange[2 * s->nRange] = lo;
        s->aRange[2 * s->nRange + 1] = hi;
        s->nRange++;
    }
    if (got < 0) {
        charset_free(s);
        return LP_BADINPUT;
    }
    /* sorted, then overlapping and adjacent ranges merged */
    if (s->nRange > 1) qsort(s->aRange, (size_t)s->nRange, 2 * sizeof(uint32_t), range_cmp);
    int n = 0;
    for (int i = 0; i < s->nRange; i++) {
        uint32_t lo = s->aRange[2 * i], hi = s->aRange[2 * i + 1];
        if (n > 0 && lo <= s->aRange[2 * n - 1] + 1) {
            if (hi > s->aRange[2 * n - 1]) s->aRange[2 * n - 1] = hi;
        } else {
            s->aRange[2 * n] = lo;
            s->aRange[2 * n + 1] = hi;
            n++;
        }
    }
    s->nRange = n;
    for (int i = 0; i < n; i++) {
        for (uint32_t c = s->aRange[2 * i]; c <= s->aRange[2 * i + 1] && c < 128; c++) s->aAscii[c] = 1;
    }
    return LP_OK;
}

void charset_free(Charset *s) {
    free(s->aRange);
    memset(s, 0, sizeof(*s));
}

int charset_has_slow(const Charset *s, uint32_t cp) {
    int lo = 0, hi = s->nRange;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->aRange[2 * mid + 1] < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->nRange && s->aRange[2 * lo] <= cp;
}

/* ------------------------------------------------------------ charmap */

/* Aliases that are lists of items. */
static const struct {
    const char *zName;
    const char *zItems;
} aListAlias[] = {
    {"english", "A..Z->a..z, a..z"},
    {"russian", "U+410..U+42F->U+430..U+44F, U+430..U+44F, U+401->U+451, U+451"},
};

/* Aliases of the analyzer's classes. */
static const struct {
    const char *zName;
    unsigned flag;
} aFlagAlias[] = {
    {"non_cjk", CHARMAP_NON_CJK}, {"non_cont", CHARMAP_NON_CJK}, {"cjk", CHARMAP_CJK},
    {"cont", CHARMAP_CJK},        {"chinese", CHARMAP_CJK},      {"japanese", CHARMAP_CJK},
    {"korean", CHARMAP_CJK},
};


/* Names e in m, over what earlier items said of its characters. LP_OK or
** LP_NOMEM. */
static int charmap_put(CharMap *m, CharMapEntry e) {
    /* the entries before e, after it, and those it overlaps: an overlapped
    ** entry keeps what sticks out on either side */
    int i = 0;
    while (i < m->n && m->a[i].hi < e.lo) i++;
    int j = i;
    while (j < m->n && m->a[j].lo <= e.hi) j++;
    CharMapEntry left = {0}, right = {0};
    int bLeft = i < j && m->a[i].lo < e.lo, bRight = i < j && m->a[j - 1].hi > e.hi;
    if (bLeft) {
        left = m->a[i];
        left.hi = e.lo - 1;
    }
    if (bRight) {
        right = m->a[j - 1];
        right.lo = e.hi + 1;
    }
    int nNew = m->n - (j - i) + 1 + bLeft + bRight;
    CharMapEntry *a = realloc(m->a, sizeof(CharMapEntry) * (size_t)(nNew > m->n ? nNew : m->n));
    if (!a) return LP_NOMEM;
    m->a = a;
    int nIns = 1 + bLeft + bRight;
    memmove(a + i + nIns, a + j, sizeof(CharMapEntry) * (size_t)(m->n - j));
    if (bLeft) a[i++] = left;
    a[i++] = e;
    if (bRight) a[i] = right;
    m->n = nNew;
    return LP_OK;
}

/* Is c on either side of a mapping a character charset_table refuses? */
static const char *map_char_why(uint32_t c) {
    if (c <= 0x20 || c == 0x7F) return "a space or a control character cannot be a word character";
    if (c == '*') return "'*' cannot be a word character: it is the query language's prefix and wildcard operator";
    if (c == '=') return "'=' cannot be a word character: it marks an exact form in a query (=word)";
    return NULL;
}

/* Why the range [lo, hi], or the range it maps to, is refused, or NULL. */
static const char *map_range_why(uint32_t lo, uint32_t hi) {
    const char *zWhy = range_why(lo, hi);
    if (zWhy) return zWhy;
    if (lo <= 0x20) return map_char_why(lo);
    if (lo <= 0x7F && hi >= 0x7F) return map_char_why(0x7F);
    if (lo <= '*' && hi >= '*') return map_char_why('*');
    if (lo <= '=' && hi >= '=') return map_char_why('=');
    return NULL;
}

/* One item of charset_table, zItem (nItem bytes, NUL-ended), into m;
** nDepth: aliases being read. */
static int charmap_item(CharMap *m, const char *zOption, int bAliases, const char *zItem, size_t nItem, int nDepth,
                        LpError *err) {
    for (size_t k = 0; k < LP_ARRAY_SIZE(aFlagAlias) && bAliases; k++) {
        if (strcmp(zItem, aFlagAlias[k].zName) == 0) {
            m->aliases |= aFlagAlias[k].flag;
            return LP_OK;
        }
    }
    for (size_t k = 0; k < LP_ARRAY_SIZE(aListAlias) && nDepth == 0 && bAliases; k++) {
        if (strcmp(zItem, aListAlias[k].zName) != 0) continue;
        const char *p = aListAlias[k].zItems;
        char zBuf[64];
        int got;
        while ((got = next_item(&p, zOption, CHARMAP_EXPECTED, zBuf, sizeof(zBuf), err)) > 0) {
            int rc = charmap_item(m, zOption, bAliases, zBuf, strlen(zBuf), nDepth + 1, err);
            if (rc != LP_OK) return rc;
        }
        return got < 0 ? LP_BADINPUT : LP_OK;
    }
    uint32_t lo, hi, lo2 = 0, hi2 = 0;
    int k = read_range(zItem, &lo, &hi);
    int bMap = k > 0 && strncmp(zItem + k, "->", 2) == 0;
    int bPairs = k > 0 && strcmp(zItem + k, "/2") == 0;
    if (bMap) {
        int k2 = read_range(zItem + k + 2, &lo2, &hi2);
        k = k2 > 0 ? k + 2 + k2 : 0;
    } else if (bPairs) {
        k += 2;
    }
    const char *zWhy = NULL;
    if (k <= 0 || (size_t)k != nItem) {
        zWhy = bAliases ? CHARMAP_EXPECTED : BLEND_EXPECTED;
    } else if ((zWhy = map_range_why(lo, hi)) != NULL || (bMap && (zWhy = map_range_why(lo2, hi2)) != NULL)) {
        /* zWhy says why */
    } else if (bMap && hi2 != lo2 && hi2 - lo2 != hi - lo) {
        zWhy = "a range maps onto a range of as many characters (A..Z->a..z) or onto one character (a..z->x)";
    } else if (bPairs && (hi - lo) % 2 == 0) {
        zWhy = "a range of pairs (/2) holds an even count of characters";
    }
    if (zWhy) return item_error(zOption, zItem, nItem, zWhy, err);
    if (++m->nItems > CHARMAP_MAX_ITEMS) {
        return lp_err_set(err, LP_LIMIT, "%s: more than %d items", zOption, CHARMAP_MAX_ITEMS);
    }
    CharMapEntry e = {lo, hi, bMap ? (int32_t)lo2 - (int32_t)lo : 0, bPairs ? lo : UINT32_MAX,
                      bMap && lo2 == hi2 && hi != lo ? lo2 : UINT32_MAX};
    int rc = charmap_put(m, e);
    return rc == LP_OK ? LP_OK : lp_err_set(err, LP_NOMEM, "out of memory reading %s", zOption);
}

int charmap_parse(const char *z, const char *zOption, int bAliases, CharMap *m, LpError *err) {
    memset(m, 0, sizeof(*m));
    const char *p = z;
    char zBuf[64];
    int got, rc = LP_OK;
    while (rc == LP_OK &&
           (got = next_item(&p, zOption, bAliases ? CHARMAP_EXPECTED : BLEND_EXPECTED, zBuf, sizeof(zBuf), err)) > 0) {
        rc = charmap_item(m, zOption, bAliases, zBuf, strlen(zBuf), 0, err);
    }
    if (rc == LP_OK && got < 0) rc = LP_BADINPUT;
    if (rc != LP_OK) {
        charmap_free(m);
        return rc;
    }
    for (uint32_t c = 0; c < 128; c++) {
        uint32_t to;
        m->aAscii[c] = charmap_get_slow(m, c, &to) ? (int32_t)to : -1;
    }
    return LP_OK;
}

void charmap_free(CharMap *m) {
    free(m->a);
    memset(m, 0, sizeof(*m));
}

int charmap_get_slow(const CharMap *m, uint32_t cp, uint32_t *pTo) {
    int lo = 0, hi = m->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (m->a[mid].hi < cp) lo = mid + 1;
        else hi = mid;
    }
    if (lo == m->n || m->a[lo].lo > cp) return 0;
    const CharMapEntry *e = &m->a[lo];
    *pTo = e->one != UINT32_MAX    ? e->one
           : e->base != UINT32_MAX ? e->base + ((cp - e->base) | 1u)
                                   : (uint32_t)((int64_t)cp + e->delta);
    return 1;
}
