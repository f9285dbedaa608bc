/*
** http_form.c — application/x-www-form-urlencoded decoding (http_int.h).
**
** Manticore's /sql takes its statement as `query=<url-encoded SQL>`, in a
** form body or in the URL's query string. Decoding is strict about
** %-escapes in the value we use: a statement silently altered by a
** tolerant decoder ("%zz" kept as is, or dropped) would run something the
** client did not send, so a malformed escape is an error instead.
*/
#include <string.h>

#include "server/http/http_int.h"

/* The value 0..15 of hex digit c, or -1. */
static int hexval(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes z[0..n) into *pOut. Returns LP_OK, LP_NOMEM, or LP_BADINPUT with
** *piBad set to the offset of the malformed '%'. */
static int decode(const char *z, size_t n, int bPlus, StrBuf *pOut, size_t *piBad) {
    /* Make room once: the decoded text is never longer than its source. */
    char *w0 = strbuf_reserve(pOut, n);
    if (w0 == NULL) return LP_NOMEM;
    char *w = w0;
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)z[i];
        if (c == '%') {
            int hi = i + 1 < n ? hexval((unsigned char)z[i + 1]) : -1;
            int lo = i + 2 < n ? hexval((unsigned char)z[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                *piBad = i;
                return LP_BADINPUT;
            }
            *w++ = (char)(hi * 16 + lo);
            i += 3;
        } else {
            *w++ = (bPlus && c == '+') ? ' ' : (char)c;
            i++;
        }
    }
    strbuf_commit(pOut, (size_t)(w - w0));
    return LP_OK;
}

int http_url_decode(const char *z, size_t n, int bPlus, StrBuf *pOut, LpError *err) {
    size_t iBad = 0;
    int rc = decode(z, n, bPlus, pOut, &iBad);
    if (rc == LP_NOMEM) return lp_err_set(err, LP_NOMEM, "out of memory decoding %zu bytes", n);
    if (rc == LP_BADINPUT)
        return lp_err_setpos(
            err, LP_BADINPUT, (int64_t)iBad,
            "malformed %%-escape at byte %zu: '%%' must be followed by two hex digits", iBad);
    return LP_OK;
}

/* Whether the form-encoded name z[0..n) decodes to exactly zName. A name
** with a malformed escape decodes to nothing and matches nothing. */
static int name_matches(const char *z, size_t n, const char *zName) {
    size_t i = 0, k = 0, nName = strlen(zName);
    while (i < n) {
        int c = (unsigned char)z[i];
        if (c == '%') {
            int hi = i + 1 < n ? hexval((unsigned char)z[i + 1]) : -1;
            int lo = i + 2 < n ? hexval((unsigned char)z[i + 2]) : -1;
            if (hi < 0 || lo < 0) return 0;
            c = hi * 16 + lo;
            i += 3;
        } else {
            if (c == '+') c = ' ';
            i++;
        }
        if (k >= nName || (unsigned char)zName[k] != c) return 0;
        k++;
    }
    return k == nName;
}

int http_form_get(const char *z, size_t n, const char *zName, StrBuf *pOut, LpError *err) {
    size_t i = 0;
    while (i < n) {
        /* One field: z[i..iEnd), name up to the first '=' inside it. */
        const char *pAmp = memchr(z + i, '&', n - i);
        size_t iEnd = pAmp ? (size_t)(pAmp - z) : n;
        const char *pEq = memchr(z + i, '=', iEnd - i);
        size_t iName = pEq ? (size_t)(pEq - z) : iEnd;
        if (iEnd > i && name_matches(z + i, iName - i, zName)) {
            size_t iVal = pEq ? iName + 1 : iEnd;
            size_t iBad = 0;
            int rc = decode(z + iVal, iEnd - iVal, 1, pOut, &iBad);
            if (rc == LP_NOMEM)
                return lp_err_set(err, LP_NOMEM, "out of memory decoding field '%s'", zName);
            if (rc == LP_BADINPUT)
                return lp_err_setpos(
                    err, LP_BADINPUT, (int64_t)(iVal + iBad),
                    "malformed %%-escape in field '%s' at byte %zu: '%%' must be followed by "
                    "two hex digits",
                    zName, iVal + iBad);
            return rc;
        }
        i = iEnd + 1;
    }
    return LP_NOTFOUND;
}
