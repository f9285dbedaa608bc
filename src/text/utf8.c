/* utf8.c — see utf8.h. */
#include "text/utf8.h"

#include <utf8proc.h>

int utf8_decode(const unsigned char *z, size_t n, uint32_t *pCp) {
    if (n == 0) return 0;
    unsigned c = z[0];
    if (c < 0x80) {
        *pCp = c;
        return 1;
    }
    int len;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, cp = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, cp = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if ((size_t)len > n) return 0;
    for (int i = 1; i < len; i++) {
        if ((z[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (z[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    *pCp = cp;
    return len;
}

int64_t utf8_check(const char *z, size_t n) {
    const unsigned char *p = (const unsigned char *)z;
    size_t i = 0;
    while (i < n) {
        /* ASCII fast path, 8 bytes at a time. */
        while (i + 8 <= n) {
            uint64_t w;
            __builtin_memcpy(&w, p + i, 8);
            if (w & 0x8080808080808080ull) break;
            i += 8;
        }
        if (i >= n) break;
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        int len = utf8_decode(p + i, n - i, &cp);
        if (len == 0) return (int64_t)i;
        i += (size_t)len;
    }
    return -1;
}

size_t utf8_floor(const char *z, size_t n) {
    const unsigned char *p = (const unsigned char *)z;
    size_t k = n;
    /* Step back over at most 3 continuation bytes to the lead byte. */
    size_t back = 0;
    while (k > 0 && back < 4 && (p[k - 1] & 0xC0) == 0x80) {
        k--;
        back++;
    }
    if (k == 0) return n - back == 0 ? 0 : n;
    unsigned lead = p[k - 1];
    int want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (want == 1) return n;               /* ASCII last: nothing cut */
    if ((size_t)want == back + 1) return n; /* complete character */
    return k - 1;                          /* drop the incomplete one */
}

size_t utf8_encode(uint32_t cp, char *z) {
    if (cp < 0x80) {
        z[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        z[0] = (char)(0xC0 | cp >> 6);
        z[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        z[0] = (char)(0xE0 | cp >> 12);
        z[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        z[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    z[0] = (char)(0xF0 | cp >> 18);
    z[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    z[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    z[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t utf8_map_case(const char *z, size_t n, int bUpper, char *zOut) {
    size_t i = 0, o = 0;
    while (i < n) {
        uint32_t cp;
        int k = utf8_decode((const unsigned char *)z + i, n - i, &cp);
        if (k == 0) {
            zOut[o++] = z[i++];
            continue;
        }
        utf8proc_int32_t m = bUpper ? utf8proc_toupper((utf8proc_int32_t)cp) : utf8proc_tolower((utf8proc_int32_t)cp);
        o += utf8_encode((uint32_t)m, zOut + o);
        i += (size_t)k;
    }
    return o;
}

int utf8_is_letter(uint32_t cp) {
    if (cp < 128) return (unsigned)((cp | 0x20) - 'a') <= 'z' - 'a';
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)cp);
    return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_ME;
}
