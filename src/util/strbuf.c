/* strbuf.c — see strbuf.h. */
#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *strbuf_reserve(StrBuf *sb, size_t n) {
    if (sb->oom) return NULL;
    if (n >= SIZE_MAX - sb->n - 1) goto oom;
    size_t need = sb->n + n + 1;
    if (need > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 64;
        while (cap < need) {
            if (cap > SIZE_MAX / 2) goto oom;
            cap *= 2;
        }
        char *z = realloc(sb->z, cap);
        if (!z) goto oom;
        sb->z = z;
        sb->cap = cap;
    }
    return sb->z + sb->n;
oom:
    sb->oom = 1;
    return NULL;
}

void strbuf_commit(StrBuf *sb, size_t n) {
    if (sb->oom) return;
    sb->n += n;
    sb->z[sb->n] = 0;
}

void strbuf_append(StrBuf *sb, const void *p, size_t n) {
    char *dst = strbuf_reserve(sb, n);
    if (!dst) return;
    if (n) memcpy(dst, p, n);
    strbuf_commit(sb, n);
}

void strbuf_appendz(StrBuf *sb, const char *z) {
    strbuf_append(sb, z, strlen(z));
}

void strbuf_appendc(StrBuf *sb, char c) {
    if (!sb->oom && sb->n + 1 < sb->cap) {
        sb->z[sb->n++] = c;
        sb->z[sb->n] = 0;
        return;
    }
    strbuf_append(sb, &c, 1);
}

void strbuf_appendf(StrBuf *sb, const char *zFmt, ...) {
    if (sb->oom) return;
    char tmp[256];
    va_list ap;
    va_start(ap, zFmt);
    int n = vsnprintf(tmp, sizeof(tmp), zFmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof(tmp)) {
        strbuf_append(sb, tmp, (size_t)n);
        return;
    }
    char *dst = strbuf_reserve(sb, (size_t)n);
    if (!dst) return;
    va_start(ap, zFmt);
    vsnprintf(dst, (size_t)n + 1, zFmt, ap);
    va_end(ap);
    strbuf_commit(sb, (size_t)n);
}

void strbuf_reset(StrBuf *sb) {
    sb->n = 0;
    sb->oom = 0;
    if (sb->z) sb->z[0] = 0;
}

void strbuf_free(StrBuf *sb) {
    free(sb->z);
    sb->z = NULL;
    sb->n = sb->cap = 0;
    sb->oom = 0;
}

char *strbuf_detach(StrBuf *sb, size_t *pn) {
    char *z = sb->z;
    if (pn) *pn = sb->n;
    sb->z = NULL;
    sb->n = sb->cap = 0;
    sb->oom = 0;
    return z;
}
