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
**     dictionary; an EditWalk (below) keeps those columns from term to
**     term of a sorted dictionary and tells which prefixes no word near
**     enough can begin with, so the walk passes over them.
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

/* A walk of many texts in sorted order (a dictionary) against one word:
** each text goes on from the table of the longest prefix, in whole
** characters, that it shares with the text before it, so a text costs
** about its characters not shared; and the walk tells which prefix of a
** text no wanted text can begin with, for the caller to pass over every
** text beginning with it. A text is wanted when it is within max of the
** word as mode measures it (edit_pattern_distance_to), has at most
** maxChars characters and, when asked, letters only. A prefix is past hope
** when it has more than maxChars characters or ends in a character not
** wanted, or (EDIT_WHOLE, EDIT_PREFIX) when every cell of its
** column of the table is above max and, for EDIT_PREFIX, no shorter
** prefix was within max: a column's least cell never falls as the text
** grows. A text whose near part may lie anywhere (EDIT_SUFFIX, EDIT_INFIX)
** is cut short by its length and characters only. */
#define EDIT_WALK_MAX 128 /* characters of a text a walk follows (maxChars' cap) */

typedef struct EditWalkCol {
    uint64_t pv, mv;  /* the column's vertical differences (Myers) */
    int score;        /* its last cell: the distance of the prefix */
    int best;         /* the least last cell so far (a prefix's, a part's) */
    int lo, hi;       /* bounds of its least cell */
    int end;          /* bytes of the text up to here */
    int bDead;        /* past hope (above) */
} EditWalkCol;

typedef struct EditWalk {
    const EditPattern *p;
    int max, mode, maxChars, bLetters;
    int nCol;         /* columns after the first that hold the last text's prefix */
    EditWalkCol aCol[EDIT_WALK_MAX + 2]; /* up to the one past maxChars */
    char z[4 * (EDIT_WALK_MAX + 1)];     /* the last text's bytes, aCol[nCol].end of them */
} EditWalk;

/* Starts a walk against p's word (p must outlive it), 0 <= maxChars; with
** bLetters, a text holding a character that is not a letter or a mark
** (Unicode's L and M categories) is not wanted either: a prefix ending in
** one is past hope. */
void edit_walk_init(EditWalk *w, const EditPattern *p, int max, int mode, int maxChars, int bLetters);

/* The next text z[0..nz): its distance as edit_pattern_distance_to(p, z,
** nz, max, mode) gives it, or max + 1 when it has more than maxChars
** characters. *pnDead: 0, or the length in bytes of the shortest prefix of
** z past hope (whole characters; the distance is then max + 1 and *pnChars
** is not set); *pnChars: z's characters. Texts may come in any order; in
** sorted order each costs about its characters that differ from the one
** before. */
int edit_walk_next(EditWalk *w, const char *z, int nz, int *pnDead, int *pnChars);

#endif /* LP_TEXT_EDITDIST_H */
