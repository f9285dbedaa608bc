/*
** charset.h — characters written as Manticore writes them in
** charset_table and ignore_chars: "U+AD, -, a..z, U+2000..U+200F", and
** charset_table's maps: "non_cjk, A..Z->a..z, +, U+100..U+12F/2".
**
** Contract.
**  - A list is items separated by commas (spaces around them ignored).
**    An item is a character: written as itself (one UTF-8 character,
**    '\' before a ',' or a space or a '\' to mean the character itself) or
**    as U+ and 1 to 6 hex digits; or a range, two characters joined by
**    "..", the first not after the second. Code points above U+10FFFF and
**    the surrogates U+D800..U+DFFF are refused, and so is U+0.
**  - charset_parse() fills a set (sorted, merged ranges) or fails with
**    LP_BADINPUT naming the option (zOption), the item and what was
**    expected; LP_NOMEM. A set takes no mappings ("a->b").
**  - charset_has() answers in O(1) for ASCII, O(log ranges) otherwise.
**  - charmap_parse() reads charset_table: besides characters and ranges
**    (each character its own target), an item may map: "A->a", or a range
**    onto a range of as many characters, "A..Z->a..z"; "lo..hi/2" maps
**    each pair of the range (an even count of characters) onto its second
**    ("U+100..U+101/2": U+100 and U+101 both become U+101); or name an
**    alias: non_cjk (or non_cont) and cjk (or cont, chinese, japanese,
**    korean) set flags that the analyzer reads (text/analyzer.h), english
**    is "A..Z->a..z, a..z" and russian "U+410..U+42F->U+430..U+44F,
**    U+430..U+44F, U+401->U+451, U+451". Where items name the same
**    character, the later one wins. '*' and '=' are refused on either
**    side of a mapping: they are the query language's prefix and
**    exact-form marks; so are the space, the ASCII control characters
**    and DEL (a word form keeps its words separated by spaces). At most CHARMAP_MAX_ITEMS items. zOption names the
**    option in errors; without bAliases (blend_chars: characters and
**    mappings only, as Manticore's) an alias is refused.
**  - charmap_get() answers in O(1) for ASCII, O(log entries) otherwise.
**
** Thread safety: a set or a map is immutable once parsed.
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

/* charset_table's aliases of the analyzer's own classes */
#define CHARMAP_NON_CJK 1u /* non_cjk, non_cont: letters, digits and marks outside CJK */
#define CHARMAP_CJK 2u     /* cjk, cont, chinese, japanese, korean: CJK letters */
#define CHARMAP_MAX_ITEMS 4096

/* Characters [lo, hi] that an item names: c becomes c + delta; or, for a
** "/2" range (base not UINT32_MAX), base + ((c - base) | 1); or, for a
** range mapped onto one character (one not UINT32_MAX), one. */
typedef struct CharMapEntry {
    uint32_t lo, hi;
    int32_t delta;
    uint32_t base;
    uint32_t one;
} CharMapEntry;

typedef struct CharMap {
    CharMapEntry *a;     /* n entries, ascending, disjoint */
    int n;
    unsigned aliases;    /* CHARMAP_* */
    int nItems;          /* items read (aliases' included) */
    int32_t aAscii[128]; /* the target of an ASCII character, or -1: no item names it */
} CharMap;

int charmap_parse(const char *z, const char *zOption, int bAliases, CharMap *m, LpError *err);
void charmap_free(CharMap *m);

int charmap_get_slow(const CharMap *m, uint32_t cp, uint32_t *pTo);

/* Does an item name cp? Then 1 and its target in *pTo; else 0. */
static inline int charmap_get(const CharMap *m, uint32_t cp, uint32_t *pTo) {
    if (cp < 128) {
        if (m->aAscii[cp] < 0) return 0;
        *pTo = (uint32_t)m->aAscii[cp];
        return 1;
    }
    return charmap_get_slow(m, cp, pTo);
}

#endif /* LP_TEXT_CHARSET_H */
