/*
** exceptions.h — tokenizing exceptions (Manticore's exceptions and
** exceptions_list): exact, case-sensitive runs of the raw text that are
** read as one keyword ("C++ => cplusplus", "AT & T => at&t").
**
** Contract.
**  - Rules: the syntax of text/wordforms.h without comments or '~'
**    ("C# => csharp" keeps its '#'): "source => destination" (or '>'),
**    separated by line breaks or ';', '\' making the next character plain.
**  - A source is matched in the text byte for byte (case matters), except
**    that where it has white space the text must have some, of any amount
**    ("AT & T" matches "AT  &\tT"). It matches only as whole tokens: where
**    the text starts or the character before is not a letter, digit or
**    mark, and where the text ends or the character after is not one
**    either. At a place, the longest source that matches wins.
**  - The destination is one keyword, taken as written (white space inside
**    it included, its bytes not folded): at most EXC_MAX_DST bytes; it
**    must not start with a character the index gives its own terms ('=',
**    '<', '.').
**  - exceptions_add() refuses an empty source or destination, a
**    destination too long or reserved, invalid UTF-8 (LP_BADINPUT, with a
**    message to prefix with the rule); LP_NOMEM.
**
** Thread safety: built by one thread, then only read.
*/
#ifndef LP_TEXT_EXCEPTIONS_H
#define LP_TEXT_EXCEPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define EXC_MAX_DST 64

typedef struct Exceptions Exceptions; /* opaque */

typedef struct ExcMatch {
    const char *zDst;    /* the destination keyword */
    int nDst;
    size_t iEnd;         /* the text's byte just past the match */
} ExcMatch;

/* Tells whether the character cp is a letter, digit or mark (a word's). */
typedef int (*ExcWordCharFn)(const void *ctx, uint32_t cp);

Exceptions *exceptions_new(ExcWordCharFn xWordChar, const void *ctx);
void exceptions_free(Exceptions *e);

/* Adds a rule, its sides as wordforms_split hands them over. */
int exceptions_add(Exceptions *e, const char *zSrc, size_t nSrc, const char *zDst, size_t nDst, LpError *err);

/* Sorts the rules for matching; after the last add. */
void exceptions_seal(Exceptions *e);

size_t exceptions_count(const Exceptions *e);

/* The bytes a source may start with: a[c] is non-zero for each. Never a
** UTF-8 continuation byte (sources are valid UTF-8), so a scan may skip
** byte by byte to the next non-zero one and stand on a character. */
const uint8_t *exceptions_first_bytes(const Exceptions *e);

/* The longest rule whose source matches the valid UTF-8 text z[0..n) at
** byte i (a token boundary is checked here): 1 and *pm, or 0. */
int exceptions_match(const Exceptions *e, const char *z, size_t n, size_t i, ExcMatch *pm);

#endif /* LP_TEXT_EXCEPTIONS_H */
