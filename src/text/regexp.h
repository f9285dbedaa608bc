/*
** regexp.h — regexp_filter: regular-expression replacements applied to a
** text before it is split into words (Manticore's table option of that
** name), to documents and to queries alike.
**
** Rules. One rule per line: "pattern => replacement", the pattern a
** regular expression (PCRE2 syntax, UTF-8, case-sensitive: the RE2 that
** Manticore uses reads the common forms the same: \d, \w, \s, [...],
** (...), |, ?, *, +, {m,n}, (?i)), the replacement text in which \1 to \9
** stand for the pattern's groups (\0: the whole match; "\\" is one
** backslash). Space around "=>" is not part of either side. Blank lines
** are skipped. A rule whose pattern does not compile, whose replacement
** names a group the pattern does not have, or that has no "=>", is an
** error naming the rule (its number from 1) and what is wrong.
**
** Applying. The rules run in order over the whole text, each replacing
** every match of its pattern (left to right, matches not overlapping) in
** what the rules before it left: `(BLUE|RED) => COLOR` makes "RED TUBE"
** "COLOR TUBE". A pattern that can match the empty string matches only
** where it matches something longer too (an empty match replaces
** nothing). Each rule's matching is bounded (PCRE2's match and depth
** limits): a text on which a pattern would backtrack without end is an
** error, not a stalled server.
**
** Thread safety: a RegexpFilter is immutable after regexp_filter_new();
** regexp_filter_apply() may run on any number of threads at once.
*/
#ifndef LP_TEXT_REGEXP_H
#define LP_TEXT_REGEXP_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/strbuf.h"

#define REGEXP_MAX_RULES 256     /* rules one table may have */

typedef struct RegexpFilter RegexpFilter;

/* Compiles the rules of zRules (see above) into *pp; NULL when it holds
** none (NULL, "" or only blank lines). LP_OK, LP_NOMEM, or LP_BADINPUT
** with err naming the rule. */
int regexp_filter_new(const char *zRules, RegexpFilter **pp, LpError *err);
void regexp_filter_free(RegexpFilter *f);

/* The number of rules. */
int regexp_filter_count(const RegexpFilter *f);

/* Runs the rules over z[0..n). *pz and *pn are the result: z itself when no
** rule matched, else buf's contents (buf is reset first). LP_OK, LP_NOMEM,
** or LP_LIMIT when a rule's pattern passes its matching limit on this
** text (err names the rule). */
int regexp_filter_apply(const RegexpFilter *f, const char *z, size_t n, StrBuf *buf, const char **pz,
                        size_t *pn, LpError *err);

/* As regexp_filter_apply, and where each byte of the result came from:
** *paMap, when a rule matched, is a malloc'd array (the caller frees it)
** of 2 * *pn entries, result byte i from z's bytes [m[2i], m[2i + 1]): a
** byte a rule copied from the one it came from; a byte a replacement
** wrote (its text or a group's) from the whole match it replaced, as the
** rules before it had mapped that. So the pairs never decrease, and
** a replacement's bytes share one source. NULL when no rule matched (the
** result is z). Texts of 4 GiB and more are refused (LP_LIMIT). */
int regexp_filter_apply_map(const RegexpFilter *f, const char *z, size_t n, StrBuf *buf, const char **pz,
                            size_t *pn, uint32_t **paMap, LpError *err);

/* Terms a pattern matches (MATCH's REGEX(/pattern/) operator, as in
** Manticore): the pattern, PCRE2 syntax as above, must match a whole term
** (as if anchored at both ends: `t.?e` matches "the" and "tie", not
** "there"). regexp_term_check compiles z[0..n) to say whether it can be
** used: LP_OK, LP_NOMEM, or LP_BADINPUT with err's message saying what is
** wrong and err->pos the byte of z where the compiler stopped.
** regexp_term_match: does t[0..nt) match z[0..n)? 0 too when the pattern
** does not compile or passes the matching limits on this term. Each
** thread keeps the last REGEXP_TERM_CACHE patterns it compiled (freed when
** it ends), so a scan over a dictionary compiles its pattern once;
** regexp_term_match may run on any number of threads at once. */
#define REGEXP_TERM_CACHE 8
int regexp_term_check(const char *z, size_t n, LpError *err);
int regexp_term_match(const char *z, size_t n, const unsigned char *t, size_t nt);

/* The same for a pattern that may match anywhere in a string (Manticore's
** REGEX(attr, pattern) function): does it match somewhere in s[0..ns)?
** The same syntax, limits and per-thread cache (a pattern is cached for
** one use or the other). */
int regexp_search_check(const char *z, size_t n, LpError *err);
int regexp_search_match(const char *z, size_t n, const char *s, size_t ns);

#endif /* LP_TEXT_REGEXP_H */
