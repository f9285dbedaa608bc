/*
** wordforms.h — a table's word forms: rules that replace a word, or a run
** of words, by other words (Manticore's wordforms and wordforms_list).
**
** Contract.
**  - Rules text: rules separated by line breaks or by ';'. A rule is
**    "source > destination" (or "=>"); a '#' starts a comment that runs to
**    the end of the rule; a rule that starts with '~' applies after
**    morphology (its source is matched against the stemmed word); blank
**    rules are skipped. A backslash makes the next character plain
**    ("a\> > b", "\~x > y", "x\; > y"). wordforms_split() cuts the text
**    into rules and hands each one's two sides over unescaped; it refuses
**    a rule without a separator, or with two, naming the rule (1-based)
**    and where it starts in the text (line and byte).
**  - The map: the caller (the analyzer) turns each side into normalised
**    words and adds the rule with wordforms_add(): its source key is the
**    words joined by single spaces (no term holds a space), its
**    destination the same. A later rule with the same source replaces
**    the earlier one. Sources of several words also make every shorter
**    start of them known as a prefix, so a reader knows when to wait for
**    the next word.
**  - Limits: WF_MAX_WORDS words a side.
**
** Thread safety: a map is built by one thread, then only read (any
** number of threads).
*/
#ifndef LP_TEXT_WORDFORMS_H
#define LP_TEXT_WORDFORMS_H

#include <stddef.h>

#include "util/error.h"

#define WF_MAX_WORDS 16
#define WF_MAX_WORDS_TEXT "16" /* the same, for messages */

/* A rule's two sides, unescaped; its number, and where it starts in the
** text (line, 1-based, and byte). */
typedef int (*WfRuleFn)(void *ctx, int iRule, int iLine, size_t iOff, int bPost, const char *zSrc, size_t nSrc,
                        const char *zDst, size_t nDst);

/* wordforms_split's flags: which of the syntax above applies (word forms
** take both; exceptions neither, as "C# => csharp" must keep its '#'). */
#define WF_SPLIT_COMMENTS 1 /* '#' starts a comment */
#define WF_SPLIT_TILDE 2    /* a leading '~' marks a rule matched after morphology */

/* Cuts z[0..n) into rules (above) and calls xRule for each, in order; a
** non-zero return stops and is returned. LP_BADINPUT (err->pos: the rule's
** first byte) for a rule without a separator or with more than one,
** LP_NOMEM. */
int wordforms_split(const char *z, size_t n, unsigned flags, WfRuleFn xRule, void *ctx, LpError *err);

typedef struct WfEntry {
    const char *zDst;   /* destination words joined by ' '; NULL: a prefix only */
    int nDst;           /* its bytes */
    int nDstWords;
    int bPrefix;        /* a longer source starts with this key */
} WfEntry;

typedef struct Wordforms Wordforms; /* opaque */

Wordforms *wordforms_new(void);
void wordforms_free(Wordforms *w);

/* Adds the rule key (source words joined by ' ', nWords of them) ->
** zDst (nDstWords words joined by ' '); bPost: matched after morphology
** (one word each side). LP_OK or LP_NOMEM. */
int wordforms_add(Wordforms *w, int bPost, const char *zKey, size_t nKey, int nWords, const char *zDst,
                  size_t nDst, int nDstWords);

/* The entry for key, or NULL. */
const WfEntry *wordforms_find(const Wordforms *w, int bPost, const char *zKey, size_t nKey);

/* Whether any rule applies after morphology. */
int wordforms_has_post(const Wordforms *w);

/* Number of rules (sources) held. */
size_t wordforms_count(const Wordforms *w);

#endif /* LP_TEXT_WORDFORMS_H */
