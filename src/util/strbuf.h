/*
** strbuf.h — an append-only, growable byte string.
**
** Contract. A zero-initialised StrBuf is empty and valid. Appends never
** fail loudly: on allocation failure the buffer sets its sticky `oom` flag
** and ignores further appends, so a sequence of appends needs one check at
** the end (`if (sb.oom) return LP_NOMEM;`), as SQLite's StrAccum does.
** The contents are always NUL-terminated when z is non-NULL (the NUL is not
** counted in n). strbuf_free releases the storage; strbuf_detach hands it to
** the caller (to free()) and leaves the buffer empty.
**
** Thread safety: none.
*/
#ifndef LP_UTIL_STRBUF_H
#define LP_UTIL_STRBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct StrBuf {
    char *z;        /* contents, NUL-terminated, or NULL when never grown */
    size_t n;       /* bytes used, not counting the NUL */
    size_t cap;     /* bytes allocated */
    int oom;        /* an allocation failed; contents are incomplete */
} StrBuf;

void strbuf_append(StrBuf *sb, const void *p, size_t n);
void strbuf_appendz(StrBuf *sb, const char *z);
void strbuf_appendc(StrBuf *sb, char c);
void strbuf_appendf(StrBuf *sb, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
/* Makes room for n more bytes; returns a pointer to them (or NULL on OOM).
** The caller writes up to n bytes there and then calls strbuf_commit. */
char *strbuf_reserve(StrBuf *sb, size_t n);
void strbuf_commit(StrBuf *sb, size_t n);
/* The same, inline where the room is already there (hot loops). */
static inline char *strbuf_reserve_fast(StrBuf *sb, size_t n) {
    if (!sb->oom && n < sb->cap - sb->n) return sb->z + sb->n;
    return strbuf_reserve(sb, n);
}
static inline void strbuf_commit_fast(StrBuf *sb, size_t n) {
    if (sb->oom) return;
    sb->n += n;
    sb->z[sb->n] = 0;
}
/* Forgets the contents, keeps the storage. */
void strbuf_reset(StrBuf *sb);
void strbuf_free(StrBuf *sb);
char *strbuf_detach(StrBuf *sb, size_t *pn);

#endif /* LP_UTIL_STRBUF_H */
