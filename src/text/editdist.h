/*
** editdist.h — Levenshtein distance between words, bounded.
**
** Contract. The distance counts insertions, deletions and substitutions of
** characters (Unicode code points), each 1. Every function takes a bound
** max and returns the distance when it is at most max, else max + 1: a
** caller that only wants the words within max edits lets the work stop
** early.
**
** Two ways to compute it:
**   - edit_distance() over two arrays of code points, by the textbook
**     dynamic programme (rows of the table, stopped once a whole row is
**     past max);
**   - an EditPattern, built once from a word, then compared with many UTF-8 texts by
**     edit_pattern_distance(): Myers' bit-parallel algorithm (Myers 1999,
**     in Hyyrö's formulation for the distance between whole strings), one
**     64-bit column of the table per character of the text, about 15
**     instructions each. This is what CALL SUGGEST runs over a table's
**     whole dictionary.
** Both give the same numbers (the unit tests compare them on random
** words). Pure functions, thread-safe; nothing is allocated.
*/
#ifndef LP_TEXT_EDITDIST_H
#define LP_TEXT_EDITDIST_H

#include <stdint.h>

#define EDIT_WORD_MAX 64 /* characters in a word (an EditPattern's: one bit each in 64) */

/* The distance between a[0..na) and b[0..nb), or max + 1 when it is
** larger than max (max >= 0). Each word has at most EDIT_WORD_MAX
** characters. */
int edit_distance(const uint32_t *a, int na, const uint32_t *b, int nb, int max);

typedef struct EditPattern {
    int n;                          /* characters, 1..EDIT_WORD_MAX */
    uint64_t aAscii[128];           /* bit i: character i is this ASCII one */
    int nOther;                     /* distinct characters above ASCII */
    uint32_t aOtherCp[EDIT_WORD_MAX];
    uint64_t aOtherEq[EDIT_WORD_MAX];
} EditPattern;

/* Builds p from the word a[0..n), 1 <= n <= EDIT_WORD_MAX. */
void edit_pattern_init(EditPattern *p, const uint32_t *a, int n);

/* The distance between p's word and the UTF-8 text z[0..nz), or max + 1
** when it is larger than max. A byte that does not start a valid UTF-8
** character counts as one character, U+FFFD. */
int edit_pattern_distance(const EditPattern *p, const char *z, int nz, int max);

/* The distance between p's word and the nearest part of z[0..nz) that
** mode names (the empty part included): EDIT_WHOLE, all of it (as
** edit_pattern_distance); EDIT_PREFIX, a prefix (how far a word being
** typed is from completing to z); EDIT_SUFFIX, a suffix; EDIT_INFIX, any
** run of its characters. Bounded as above. */
#define EDIT_WHOLE 0
#define EDIT_PREFIX 1
#define EDIT_SUFFIX 2
#define EDIT_INFIX (EDIT_PREFIX | EDIT_SUFFIX)
int edit_pattern_distance_to(const EditPattern *p, const char *z, int nz, int max, int mode);

#endif /* LP_TEXT_EDITDIST_H */
