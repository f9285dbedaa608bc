/*
** charset.h — sets of characters written as Manticore writes them in
** charset_table, ignore_chars and blend_chars: "U+AD, -, a..z,
** U+2000..U+200F".
**
** Contract.
**  - A list is items separated by commas (spaces around them ignored).
**    An item is a character: written as itself (one UTF-8 character,
**    '\' before a ',' or a space or a '\' to mean the character itself) or
**    as U+ and 1 to 6 hex digits; or a range, two characters joined by
**    "..", the first not after the second. Code points above U+10FFFF and
**    the surrogates U+D800..U+DFFF are refused, as are mappings ("a->b").
**  - charset_parse() fills a set (sorted, merged ranges) or fails with
**    LP_BADINPUT naming the option (zOption), the item and what was
**    expected; LP_NOMEM.
**  - charset_has() answers in O(1) for ASCII, O(log ranges) otherwise.
**
** Thread safety: a set is immutable once parsed.
*/
#ifndef LP_TEXT_CHARSET_H
#define LP_TEXT_CHARSET_H

#include <stdint.h>

#include "util/error.h"

typedef struct Charset {
    uint32_t *aRange;      /* nRange pairs [lo, hi], ascending, disjoint, not adjacent */
    int nRange;
    uint8_t aAscii[128];   /* aAscii[c]: c is in the set */
} Charset;

int charset_parse(const char *z, const char *zOption, Charset *s, LpError *err);
void charset_free(Charset *s);

static inline int charset_empty(const Charset *s) {
    return s->nRange == 0;
}

int charset_has_slow(const Charset *s, uint32_t cp);

static inline int charset_has(const Charset *s, uint32_t cp) {
    return cp < 128 ? s->aAscii[cp] : charset_has_slow(s, cp);
}

#endif /* LP_TEXT_CHARSET_H */
