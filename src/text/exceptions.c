/*
** exceptions.c — see exceptions.h.
**
** The rules are kept sorted by their source's first byte, the longest
** source first within a byte, with an index of where each byte's rules
** start: a place in the text tries only the rules that start with its
** byte, longest first, and the first that matches is the longest.
** Sources are stored with each run of white space as one ' ', trimmed.
*/
#include "text/exceptions.h"

#include <stdlib.h>
#include <string.h>

#include "text/utf8.h"

typedef struct ExcRule {
    char *zSrc;
    size_t nSrc;
    char *zDst;
    int nDst;
    size_t iOrder;       /* rules added before it */
} ExcRule;

struct Exceptions {
    ExcRule *a;
    size_t n, nAlloc;
    uint32_t aStart[257];     /* rules starting with byte c: a[aStart[c]..aStart[c+1]) */
    uint8_t aFirst[256];      /* aFirst[c]: some rule starts with byte c */
    ExcWordCharFn xWordChar;
    const void *ctx;            /* xWordChar's */
};

static int is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

Exceptions *exceptions_new(ExcWordCharFn xWordChar, const void *ctx) {
    Exceptions *e = calloc(1, sizeof(*e));
    if (e) {
        e->xWordChar = xWordChar;
        e->ctx = ctx;
    }
    return e;
}

void exceptions_free(Exceptions *e) {
    if (!e) return;
    for (size_t i = 0; i < e->n; i++) {
        free(e->a[i].zSrc);
        free(e->a[i].zDst);
    }
    free(e->a);
    free(e);
}

int exceptions_add(Exceptions *e, const char *zSrc, size_t nSrc, const char *zDst, size_t nDst, LpError *err) {
    while (nSrc > 0 && is_space(zSrc[0])) zSrc++, nSrc--;
    while (nSrc > 0 && is_space(zSrc[nSrc - 1])) nSrc--;
    while (nDst > 0 && is_space(zDst[0])) zDst++, nDst--;
    while (nDst > 0 && is_space(zDst[nDst - 1])) nDst--;
    if (nSrc == 0) return lp_err_set(err, LP_BADINPUT, "its source is empty");
    if (nDst == 0) return lp_err_set(err, LP_BADINPUT, "its destination is empty");
    if (utf8_check(zSrc, nSrc) >= 0 || utf8_check(zDst, nDst) >= 0) {
        return lp_err_set(err, LP_BADINPUT, "it is not valid UTF-8");
    }
    if (nDst > EXC_MAX_DST) {
        return lp_err_set(err, LP_BADINPUT, "its destination is longer than %d bytes", EXC_MAX_DST);
    }
    if (zDst[0] == '=' || zDst[0] == '<' || zDst[0] == '.') {
        return lp_err_set(err, LP_BADINPUT, "its destination starts with '%c', which the index keeps for terms "
                                            "of its own", zDst[0]);
    }
    if (e->n == e->nAlloc) {
        size_t nNew = e->nAlloc ? 2 * e->nAlloc : 16;
        ExcRule *a = realloc(e->a, sizeof(ExcRule) * nNew);
        if (!a) return lp_err_set(err, LP_NOMEM, "out of memory reading exceptions");
        e->a = a;
        e->nAlloc = nNew;
    }
    ExcRule *r = &e->a[e->n];
    r->zSrc = malloc(nSrc + 1);
    r->zDst = malloc(nDst + 1);
    if (!r->zSrc || !r->zDst) {
        free(r->zSrc);
        free(r->zDst);
        return lp_err_set(err, LP_NOMEM, "out of memory reading exceptions");
    }
    size_t m = 0;
    for (size_t i = 0; i < nSrc; i++) {
        if (is_space(zSrc[i])) {
            if (r->zSrc[m - 1] != ' ') r->zSrc[m++] = ' '; /* m > 0: the source does not start with one */
        } else {
            r->zSrc[m++] = zSrc[i];
        }
    }
    r->zSrc[m] = 0;
    r->nSrc = m;
    memcpy(r->zDst, zDst, nDst);
    r->zDst[nDst] = 0;
    r->nDst = (int)nDst;
    r->iOrder = e->n;
    e->n++;
    return LP_OK;
}

static int rule_cmp(const void *x, const void *y) {
    const ExcRule *a = x, *b = y;
    unsigned char ca = (unsigned char)a->zSrc[0], cb = (unsigned char)b->zSrc[0];
    if (ca != cb) return ca < cb ? -1 : 1;
    if (a->nSrc != b->nSrc) return a->nSrc > b->nSrc ? -1 : 1;
    int k = strcmp(a->zSrc, b->zSrc);
    if (k) return k;
    return a->iOrder < b->iOrder ? -1 : 1;
}

void exceptions_seal(Exceptions *e) {
    if (e->n > 1) qsort(e->a, e->n, sizeof(ExcRule), rule_cmp);
    /* a later rule for the same source wins: of equal sources (next to
    ** each other now, in the order added) the last is kept */
    size_t n = 0;
    for (size_t i = 0; i < e->n; i++) {
        if (i + 1 < e->n && strcmp(e->a[i].zSrc, e->a[i + 1].zSrc) == 0) {
            free(e->a[i].zSrc);
            free(e->a[i].zDst);
        } else {
            e->a[n++] = e->a[i];
        }
    }
    e->n = n;
    size_t k = 0;
    for (int c = 0; c < 256; c++) {
        e->aStart[c] = (uint32_t)k;
        while (k < n && (unsigned char)e->a[k].zSrc[0] == c) k++;
    }
    e->aStart[256] = (uint32_t)n;
    for (int c = 0; c < 256; c++) e->aFirst[c] = e->aStart[c] != e->aStart[c + 1];
}

size_t exceptions_count(const Exceptions *e) {
    return e->n;
}

const uint8_t *exceptions_first_bytes(const Exceptions *e) {
    return e->aFirst;
}

/* Is the character that ends at z[i] (i > 0), or starts at z[i], a word's? */
static int word_char_before(const Exceptions *e, const char *z, size_t i) {
    size_t j = i - 1;
    while (j > 0 && ((unsigned char)z[j] & 0xC0) == 0x80) j--;
    uint32_t cp;
    return utf8_decode((const unsigned char *)z + j, i - j, &cp) > 0 && e->xWordChar(e->ctx, cp);
}

static int word_char_at(const Exceptions *e, const char *z, size_t n, size_t i) {
    uint32_t cp;
    return utf8_decode((const unsigned char *)z + i, n - i, &cp) > 0 && e->xWordChar(e->ctx, cp);
}

int exceptions_match(const Exceptions *e, const char *z, size_t n, size_t i, ExcMatch *pm) {
    unsigned char c = (unsigned char)z[i];
    if (e->aStart[c] == e->aStart[c + 1]) return 0;
    if (i > 0 && word_char_before(e, z, i)) return 0;
    for (uint32_t k = e->aStart[c]; k < e->aStart[c + 1]; k++) {
        const ExcRule *r = &e->a[k];
        size_t j = i, m = 0;
        while (m < r->nSrc && j < n) {
            if (r->zSrc[m] == ' ') {
                if (!is_space(z[j])) break;
                while (j < n && is_space(z[j])) j++;
                m++;
            } else if (r->zSrc[m] == z[j]) {
                m++;
                j++;
            } else {
                break;
            }
        }
        if (m < r->nSrc) continue;
        if (j < n && word_char_at(e, z, n, j)) continue;
        /* a match must not end inside a character (a source ending in a
        ** lead byte cannot match valid text, but stay safe) */
        if (j < n && ((unsigned char)z[j] & 0xC0) == 0x80) continue;
        pm->zDst = r->zDst;
        pm->nDst = r->nDst;
        pm->iEnd = j;
        return 1;
    }
    return 0;
}
