/*
** charset.c — see charset.h.
*/
#include "text/charset.h"

#include <stdlib.h>
#include <string.h>

#include "text/utf8.h"

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

int charset_parse(const char *z, const char *zOption, Charset *s, LpError *err) {
    memset(s, 0, sizeof(*s));
    int nAlloc = 0;
    const char *p = z;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        /* the item: up to an unescaped ',' */
        const char *zItem = p;
        while (*p && *p != ',') p += (*p == '\\' && p[1]) ? 2 : 1;
        size_t nItem = (size_t)(p - zItem);
        while (nItem > 0 && (zItem[nItem - 1] == ' ' || zItem[nItem - 1] == '\t') &&
               !(nItem >= 2 && zItem[nItem - 2] == '\\')) {
            nItem--;
        }
        if (*p == ',') p++;
        if (nItem == 0) {
            charset_free(s);
            return lp_err_set(err, LP_BADINPUT, "%s: an empty item (two commas in a row)", zOption);
        }
        char zBuf[64];
        if (nItem >= sizeof(zBuf)) {
            charset_free(s);
            return item_error(zOption, zItem, nItem, "expected a character, U+hex or a range such as a..z", err);
        }
        memcpy(zBuf, zItem, nItem);
        zBuf[nItem] = 0;
        uint32_t lo, hi;
        int k = read_char(zBuf, &lo);
        hi = lo;
        if (k > 0 && strncmp(zBuf + k, "..", 2) == 0) {
            int k2 = read_char(zBuf + k + 2, &hi);
            k = k2 > 0 ? k + 2 + k2 : 0;
        }
        const char *zWhy = NULL;
        if (k <= 0 || (size_t)k != nItem) {
            zWhy = strstr(zBuf, "->") ? "maps a character: only characters and ranges are allowed here"
                                      : "expected a character, U+hex or a range such as a..z";
        } else if (lo > 0x10FFFF || hi > 0x10FFFF || (lo <= 0xDFFF && hi >= 0xD800)) {
            zWhy = "not a Unicode character (above U+10FFFF, or a surrogate)";
        } else if (lo > hi) {
            zWhy = "a range must not end before it starts";
        }
        if (zWhy) {
            charset_free(s);
            return item_error(zOption, zItem, nItem, zWhy, err);
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
