/*
** html.c — see html.h. One pass over the bytes: text is copied in runs,
** markup is recognised at '<' and '&' only.
*/
#include "text/html.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/html_entities.h"
#include "text/utf8.h"

static int is_alpha(unsigned char c) {
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static int is_alnum(unsigned char c) {
    return is_alpha(c) || (c >= '0' && c <= '9');
}

/* Is the element name z[0..n) (any case) one of the NULL-terminated list? */
static int name_in(const char *z, size_t n, const char *const *az) {
    for (int i = 0; az[i]; i++) {
        if (strlen(az[i]) == n && strncasecmp(az[i], z, n) == 0) return 1;
    }
    return 0;
}

static const char *const azInline[] = {"a",     "b",      "i",     "s",      "u",   "basefont",
                                       "big",   "em",     "font",  "img",    "label", "small",
                                       "span",  "strike", "strong", "sub",   "sup", "tt",
                                       NULL};
static const char *const azBlock[] = {"address", "blockquote", "caption", "center", "dd",  "div",
                                      "dl",      "dt",         "h1",      "h2",     "h3",  "h4",
                                      "h5",      "h6",         "li",      "menu",   "ol",  "p",
                                      "pre",     "table",      "tbody",   "td",     "tfoot", "th",
                                      "thead",   "tr",         "ul",      NULL};

/* The end of the tag whose '<' is at z[i] (just past its '>'), or 0 when
** it has none. Quoted attribute values may hold '>'. */
static size_t tag_end(const char *z, size_t n, size_t i) {
    char q = 0;
    for (size_t j = i + 1; j < n; j++) {
        if (q) {
            if (z[j] == q) q = 0;
        } else if (z[j] == '"' || z[j] == '\'') {
            q = z[j];
        } else if (z[j] == '>') {
            return j + 1;
        }
    }
    return 0;
}

/* Where "</name" (any case) followed by '>', white space or '/' first
** occurs in z[i..n), or n. */
static size_t closing_tag(const char *z, size_t n, size_t i, const char *zName, size_t nName) {
    for (; i + 2 + nName <= n; i++) {
        if (z[i] != '<' || z[i + 1] != '/' || strncasecmp(z + i + 2, zName, nName) != 0) continue;
        size_t k = i + 2 + nName;
        if (k == n || z[k] == '>' || z[k] == '/' || z[k] == ' ' || (z[k] >= '\t' && z[k] <= '\r')) {
            return i;
        }
    }
    return n;
}

static int entity_cmp(const void *pKey, const void *pEnt) {
    const char *zKey = pKey;
    const HtmlEntity *e = pEnt;
    return strcmp(zKey, e->zName);
}

/* The character reference at z[i] ('&'): its code point, with *pEnd just
** past its ';'; or -1 when it is none. */
static int64_t reference_at(const char *z, size_t n, size_t i, size_t *pEnd) {
    size_t j = i + 1;
    if (j < n && z[j] == '#') {
        int bHex = j + 1 < n && (z[j + 1] | 0x20) == 'x';
        j += 1 + (size_t)bHex;
        size_t j0 = j;
        uint32_t v = 0;
        for (; j < n && j - j0 < 8; j++) {
            unsigned char c = (unsigned char)z[j];
            int d = c >= '0' && c <= '9'                   ? c - '0'
                    : bHex && (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                               : -1;
            if (d < 0) break;
            v = v * (bHex ? 16 : 10) + (uint32_t)d;
        }
        if (j == j0 || j >= n || z[j] != ';') return -1;
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return -1;
        *pEnd = j + 1;
        return v == 0 ? 0xFFFD : v;
    }
    char zName[16];
    size_t k = 0;
    while (j < n && k < sizeof(zName) - 1 && is_alnum((unsigned char)z[j])) zName[k++] = z[j++];
    if (k == 0 || j >= n || z[j] != ';') return -1;
    zName[k] = 0;
    const HtmlEntity *e = bsearch(zName, aHtmlEntity, sizeof(aHtmlEntity) / sizeof(aHtmlEntity[0]),
                                  sizeof(aHtmlEntity[0]), entity_cmp);
    if (!e) return -1;
    *pEnd = j + 1;
    return e->cp;
}

/* Appends the decoded value z[i..e) to o at *pm, after a space. */
static void put_value(const char *z, size_t i, size_t e, char *o, size_t *pm) {
    size_t m = *pm;
    o[m++] = ' ';
    while (i < e) {
        size_t end = 0;
        int64_t cp = z[i] == '&' ? reference_at(z, e, i, &end) : -1;
        if (cp >= 0) {
            m += utf8_encode((uint32_t)cp, o + m);
            i = end;
        } else {
            o[m++] = z[i++];
        }
    }
    *pm = m;
}

/* The attributes of the tag z[k..end) (k just past its name) that
** azAttr's pairs name for element zTag[0..nTag): each value appended to o
** at *pm after a space. Returns how many were. */
static int put_attrs(const char *z, size_t k, size_t end, const char *zTag, size_t nTag,
                     const char *const *azAttr, char *o, size_t *pm) {
    int nPut = 0;
    end--; /* the '>' */
    while (k < end) {
        unsigned char c = (unsigned char)z[k];
        if (c == ' ' || c == '/' || (c >= '\t' && c <= '\r')) {
            k++;
            continue;
        }
        size_t a0 = k;
        while (k < end && z[k] != '=' && z[k] != ' ' && z[k] != '/' && !(z[k] >= '\t' && z[k] <= '\r')) {
            k++;
        }
        size_t nName = k - a0;
        while (k < end && (z[k] == ' ' || (z[k] >= '\t' && z[k] <= '\r'))) k++;
        if (k >= end || z[k] != '=') continue; /* an attribute without a value */
        k++;
        while (k < end && (z[k] == ' ' || (z[k] >= '\t' && z[k] <= '\r'))) k++;
        size_t v0 = k, v1;
        if (k < end && (z[k] == '"' || z[k] == '\'')) {
            char q = z[k];
            v0 = ++k;
            while (k < end && z[k] != q) k++;
            v1 = k;
            if (k < end) k++;
        } else {
            while (k < end && z[k] != ' ' && !(z[k] >= '\t' && z[k] <= '\r')) k++;
            v1 = k;
        }
        for (int i = 0; azAttr[i]; i += 2) {
            if (strlen(azAttr[i]) == nTag && strncasecmp(azAttr[i], zTag, nTag) == 0 &&
                strlen(azAttr[i + 1]) == nName && strncasecmp(azAttr[i + 1], z + a0, nName) == 0) {
                put_value(z, v0, v1, o, pm);
                nPut++;
                break;
            }
        }
    }
    return nPut;
}

/* Is the element name z[0..n) (any case) one of the zones az lists (a name,
** or a prefix ending in '*')? */
static int zone_listed(const char *z, size_t n, const char *const *az) {
    for (int i = 0; az[i]; i++) {
        size_t m = strlen(az[i]);
        if (m && az[i][m - 1] == '*') {
            if (n >= m - 1 && strncasecmp(az[i], z, m - 1) == 0) return 1;
        } else if (m == n && strncasecmp(az[i], z, n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Output bytes o[m0..m) came from input bytes [i0, i1) (aMap: see
** html_strip_map; NULL: nothing to record). */
static void map_span(uint32_t *aMap, size_t m0, size_t m, size_t i0, size_t i1) {
    if (!aMap) return;
    for (size_t k = m0; k < m; k++) {
        aMap[2 * k] = (uint32_t)i0;
        aMap[2 * k + 1] = (uint32_t)i1;
    }
}

static void strip(const char *z, size_t n, const char *const *azRemove, const char *const *azAttr,
                  const HtmlZones *pZones, uint32_t *aMap, StrBuf *out) {
    char *o = strbuf_reserve(out, n);
    if (!o) return;
    size_t m = 0, i = 0;
    while (i < n) {
        /* text up to the next markup */
        size_t j = i;
        while (j < n && z[j] != '<' && z[j] != '&') j++;
        memcpy(o + m, z + i, j - i);
        for (size_t k = 0; aMap && k < j - i; k++) map_span(aMap, m + k, m + k + 1, i + k, i + k + 1);
        m += j - i;
        i = j;
        if (i == n) break;
        size_t end = 0, i0 = i, m0 = m;
        if (z[i] == '&') {
            int64_t cp = reference_at(z, n, i, &end);
            if (cp < 0) {
                o[m++] = '&';
                i++;
            } else {
                m += utf8_encode((uint32_t)cp, o + m);
                i = end;
            }
            map_span(aMap, m0, m, i0, i);
            continue;
        }
        /* '<': a comment, a declaration, a tag, or text */
        if (i + 3 < n && memcmp(z + i, "<!--", 4) == 0) {
            const char *zEnd = NULL;
            for (size_t k = i + 4; k + 3 <= n; k++) {
                if (memcmp(z + k, "-->", 3) == 0) {
                    zEnd = z + k + 3;
                    break;
                }
            }
            if (zEnd) {
                o[m++] = ' ';
                i = (size_t)(zEnd - z);
                map_span(aMap, m0, m, i0, i);
                continue;
            }
        } else if (i + 1 < n && (z[i + 1] == '!' || z[i + 1] == '?')) {
            if ((end = tag_end(z, n, i)) != 0) {
                o[m++] = ' ';
                i = end;
                map_span(aMap, m0, m, i0, i);
                continue;
            }
        } else {
            size_t k = i + 1 + (i + 1 < n && z[i + 1] == '/');
            size_t k0 = k;
            while (k < n && is_alnum((unsigned char)z[k])) k++;
            if (k > k0 && is_alpha((unsigned char)z[k0]) && (end = tag_end(z, n, i)) != 0) {
                size_t nName = k - k0;
                int bClose = k0 > i + 1;
                if (!bClose && azRemove && name_in(z + k0, nName, azRemove)) {
                    /* the element and its content, up to its closing tag */
                    size_t c = closing_tag(z, n, end, z + k0, nName);
                    size_t e2 = c < n ? tag_end(z, n, c) : 0;
                    o[m++] = ' ';
                    i = e2 ? e2 : n;
                    map_span(aMap, m0, m, i0, i);
                    continue;
                }
                if (pZones && zone_listed(z + k0, nName, pZones->azZone) && z[end - 2] != '/') {
                    /* before what the tag leaves: an opening tag's kept
                    ** attribute values are inside its zone */
                    pZones->xZone(pZones->ctx, z + k0, nName, m, bClose);
                }
                int bInline = name_in(z + k0, nName, azInline);
                if (bInline) {
                    /* nothing in its place */
                } else if (name_in(z + k0, nName, azBlock)) {
                    o[m++] = '\n'; /* a blank line: a paragraph's end */
                    o[m++] = '\n';
                } else {
                    o[m++] = ' ';
                }
                if (!bClose && azAttr && put_attrs(z, k, end, z + k0, nName, azAttr, o, &m)) {
                    o[m++] = ' '; /* the values are words of their own */
                }
                i = end;
                map_span(aMap, m0, m, i0, i);
                continue;
            }
        }
        o[m++] = '<';
        i++;
        map_span(aMap, m0, m, i0, i);
    }
    strbuf_commit(out, m);
}

void html_strip(const char *z, size_t n, const char *const *azRemove, const char *const *azAttr,
                StrBuf *out) {
    strip(z, n, azRemove, azAttr, NULL, NULL, out);
}

void html_strip_zones(const char *z, size_t n, const char *const *azRemove,
                      const char *const *azAttr, const HtmlZones *pZones, StrBuf *out) {
    strip(z, n, azRemove, azAttr, pZones, NULL, out);
}

void html_strip_map(const char *z, size_t n, const char *const *azRemove, const char *const *azAttr,
                    uint32_t *aMap, StrBuf *out) {
    strip(z, n, azRemove, azAttr, NULL, aMap, out);
}
