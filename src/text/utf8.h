/*
** utf8.h — UTF-8 validation and decoding.
**
** Contract. Strict UTF-8 as RFC 3629 defines it: no overlong forms, no
** UTF-16 surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no bytes
** 0xC0, 0xC1, 0xF5..0xFF. Pure functions, thread-safe.
*/
#ifndef LP_TEXT_UTF8_H
#define LP_TEXT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* -1 when z[0..n) is valid UTF-8, else the byte offset of the first byte
** of the first invalid or truncated sequence. */
int64_t utf8_check(const char *z, size_t n);

/* Decodes the character at z[0..n): stores it in *pCp and returns its
** length in bytes (1..4), or 0 when the bytes there are not valid UTF-8
** (or n is 0). */
int utf8_decode(const unsigned char *z, size_t n, uint32_t *pCp);

/* Writes the character cp (at most U+10FFFF, not a surrogate) as UTF-8
** at z (room for 4 bytes); its length in bytes (1..4). */
size_t utf8_encode(uint32_t cp, char *z);

/* z[0..n) with every character's case mapped (bUpper: to upper case, else
** lower; Unicode's simple mappings, by utf8proc) into zOut, which has room
** for 4 * n bytes; bytes that are not valid UTF-8 are copied as they are.
** Returns the length written. */
size_t utf8_map_case(const char *z, size_t n, int bUpper, char *zOut);

/* Is cp a letter or a mark (Unicode's L and M categories, by utf8proc)? */
int utf8_is_letter(uint32_t cp);

/* The largest k <= n such that z[0..k) does not end inside a multi-byte
** character (for cutting text without splitting a character). */
size_t utf8_floor(const char *z, size_t n);

#endif /* LP_TEXT_UTF8_H */
