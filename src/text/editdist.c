/*
** editdist.c — see editdist.h.
*/
#include "text/editdist.h"

#include <assert.h>
#include <string.h>

#include "text/utf8.h"

int edit_distance(const uint32_t *a, int na, const uint32_t *b, int nb, int max) {
    assert(na <= EDIT_WORD_MAX && nb <= EDIT_WORD_MAX);
    if (na - nb > max || nb - na > max) return max + 1;
    int aBuf[2][EDIT_WORD_MAX + 1];
    int *aPrev = aBuf[0], *aRow = aBuf[1];
    for (int j = 0; j <= nb; j++) aPrev[j] = j;
    for (int i = 1; i <= na; i++) {
        aRow[0] = i;
        int best = i;
        for (int j = 1; j <= nb; j++) {
            int d = aPrev[j - 1] + (a[i - 1] != b[j - 1]);
            if (aPrev[j] + 1 < d) d = aPrev[j] + 1;
            if (aRow[j - 1] + 1 < d) d = aRow[j - 1] + 1;
            aRow[j] = d;
            if (d < best) best = d;
        }
        /* every path to the last cell crosses this row */
        if (best > max) return max + 1;
        int *t = aPrev;
        aPrev = aRow;
        aRow = t;
    }
    return aPrev[nb] > max ? max + 1 : aPrev[nb];
}

void edit_pattern_init(EditPattern *p, const uint32_t *a, int n) {
    assert(n >= 1 && n <= EDIT_WORD_MAX);
    memset(p, 0, sizeof(*p));
    p->n = n;
    for (int i = 0; i < n; i++) {
        uint64_t bit = (uint64_t)1 << i;
        if (a[i] < 128) {
            p->aAscii[a[i]] |= bit;
            continue;
        }
        int k = 0;
        while (k < p->nOther && p->aOtherCp[k] != a[i]) k++;
        if (k == p->nOther) p->aOtherCp[p->nOther++] = a[i];
        p->aOtherEq[k] |= bit;
    }
}

/* The pattern's positions of the character cp (a bit each). */
static uint64_t pattern_eq(const EditPattern *p, uint32_t cp) {
    for (int k = 0; k < p->nOther; k++) {
        if (p->aOtherCp[k] == cp) return p->aOtherEq[k];
    }
    return 0;
}

/* The next character of u[0..n) from *pi (advanced past it); U+FFFD for
** a byte that does not start a valid UTF-8 character. */
static uint32_t next_char(const unsigned char *u, int n, int *pi) {
    if (u[*pi] < 128) return u[(*pi)++];
    uint32_t cp;
    int len = utf8_decode(u + *pi, (size_t)(n - *pi), &cp);
    if (len <= 0) len = 1, cp = 0xFFFD;
    *pi += len;
    return cp;
}

/* The table's column for the text's j-th character is kept as two bit
** vectors of its vertical differences (cell i minus cell i-1 is +1 where
** Pv has bit i-1, -1 where Mv has it, else 0); each character of the text
** updates them in a few word operations, and the last cell, the distance
** so far, moves by the horizontal difference of the pattern's last row.
** The first row is the text's length so far (D[0][j] = j), so a +1 enters
** each horizontal vector at the bottom: Ph's shift brings in a 1. */
/* One column on: the vertical differences *pv, *mv move past a character
** found at the word's positions eq; returns how the last cell moves (-1, 0
** or +1). carry is 1 when the top row grows with the text, 0 searching. */
static inline int myers_step(const EditPattern *p, uint64_t eq, uint64_t *pv, uint64_t *mv, uint64_t carry) {
    uint64_t hb = (uint64_t)1 << (p->n - 1);
    uint64_t xv = eq | *mv;
    uint64_t xh = (((eq & *pv) + *pv) ^ *pv) | eq;
    uint64_t ph = *mv | ~(xh | *pv);
    uint64_t mh = *pv & xh;
    int d = ((ph & hb) != 0) - ((mh & hb) != 0);
    ph = (ph << 1) | carry;
    mh <<= 1;
    *pv = mh | ~(xv | ph);
    *mv = ph & xv;
    return d;
}

/* The distance from p's word to z[0..nz) or to a part of it (mode,
** EDIT_*). The score after each character of z is the distance to the text
** read so far, so the least of them is a prefix's (or, searching, a
** part's: the top row of the table is then 0, any character may start the
** match: Myers' search, no carry into the shifted horizontal deltas). */
int edit_pattern_distance_to(const EditPattern *p, const char *z, int nz, int max, int mode) {
    const unsigned char *u = (const unsigned char *)z;
    uint64_t pv = ~(uint64_t)0, mv = 0;
    uint64_t carry = mode & EDIT_SUFFIX ? 0 : 1;
    int score = p->n, best = p->n;
    for (int i = 0; i < nz;) {
        uint64_t eq;
        if (u[i] < 128) {
            eq = p->aAscii[u[i]];
            i++;
        } else {
            uint32_t cp = next_char(u, nz, &i);
            eq = pattern_eq(p, cp);
        }
        score += myers_step(p, eq, &pv, &mv, carry);
        if (score < best) best = score;
    }
    if (mode & EDIT_PREFIX) score = best;
    return score > max ? max + 1 : score;
}

int edit_pattern_distance(const EditPattern *p, const char *z, int nz, int max) {
    return edit_pattern_distance_to(p, z, nz, max, EDIT_WHOLE);
}

/* For four rows of a column, indexed by their Pv bits | Mv bits << 4: the
** sum of their vertical differences and the least sum of their first 1 to
** 4 (the cells below the one above them, relative to it). */
static const struct {
    int8_t sum, least;
} aNibble[256] = {
    {0, 0}, {1, 1}, {1, 0}, {2, 1}, {1, 0}, {2, 1}, {2, 0}, {3, 1},
    {1, 0}, {2, 1}, {2, 0}, {3, 1}, {2, 0}, {3, 1}, {3, 0}, {4, 1},
    {-1, -1}, {0, 0}, {0, -1}, {1, 0}, {0, -1}, {1, 0}, {1, -1}, {2, 0},
    {0, -1}, {1, 0}, {1, -1}, {2, 0}, {1, -1}, {2, 0}, {2, -1}, {3, 0},
    {-1, -1}, {0, 0}, {0, 0}, {1, 1}, {0, -1}, {1, 0}, {1, 0}, {2, 1},
    {0, -1}, {1, 0}, {1, 0}, {2, 1}, {1, -1}, {2, 0}, {2, 0}, {3, 1},
    {-2, -2}, {-1, -1}, {-1, -1}, {0, 0}, {-1, -2}, {0, -1}, {0, -1}, {1, 0},
    {-1, -2}, {0, -1}, {0, -1}, {1, 0}, {0, -2}, {1, -1}, {1, -1}, {2, 0},
    {-1, -1}, {0, 0}, {0, 0}, {1, 1}, {0, 0}, {1, 1}, {1, 0}, {2, 1},
    {0, -1}, {1, 0}, {1, 0}, {2, 1}, {1, 0}, {2, 1}, {2, 0}, {3, 1},
    {-2, -2}, {-1, -1}, {-1, -1}, {0, 0}, {-1, -1}, {0, 0}, {0, -1}, {1, 0},
    {-1, -2}, {0, -1}, {0, -1}, {1, 0}, {0, -1}, {1, 0}, {1, -1}, {2, 0},
    {-2, -2}, {-1, -1}, {-1, -1}, {0, 0}, {-1, -1}, {0, 0}, {0, 0}, {1, 1},
    {-1, -2}, {0, -1}, {0, -1}, {1, 0}, {0, -1}, {1, 0}, {1, 0}, {2, 1},
    {-3, -3}, {-2, -2}, {-2, -2}, {-1, -1}, {-2, -2}, {-1, -1}, {-1, -1}, {0, 0},
    {-2, -3}, {-1, -2}, {-1, -2}, {0, -1}, {-1, -2}, {0, -1}, {0, -1}, {1, 0},
    {-1, -1}, {0, 0}, {0, 0}, {1, 1}, {0, 0}, {1, 1}, {1, 0}, {2, 1},
    {0, 0}, {1, 1}, {1, 0}, {2, 1}, {1, 0}, {2, 1}, {2, 0}, {3, 1},
    {-2, -2}, {-1, -1}, {-1, -1}, {0, 0}, {-1, -1}, {0, 0}, {0, -1}, {1, 0},
    {-1, -1}, {0, 0}, {0, -1}, {1, 0}, {0, -1}, {1, 0}, {1, -1}, {2, 0},
    {-2, -2}, {-1, -1}, {-1, -1}, {0, 0}, {-1, -1}, {0, 0}, {0, 0}, {1, 1},
    {-1, -1}, {0, 0}, {0, 0}, {1, 1}, {0, -1}, {1, 0}, {1, 0}, {2, 1},
    {-3, -3}, {-2, -2}, {-2, -2}, {-1, -1}, {-2, -2}, {-1, -1}, {-1, -1}, {0, 0},
    {-2, -2}, {-1, -1}, {-1, -1}, {0, 0}, {-1, -2}, {0, -1}, {0, -1}, {1, 0},
    {-2, -2}, {-1, -1}, {-1, -1}, {0, 0}, {-1, -1}, {0, 0}, {0, 0}, {1, 1},
    {-1, -1}, {0, 0}, {0, 0}, {1, 1}, {0, 0}, {1, 1}, {1, 0}, {2, 1},
    {-3, -3}, {-2, -2}, {-2, -2}, {-1, -1}, {-2, -2}, {-1, -1}, {-1, -1}, {0, 0},
    {-2, -2}, {-1, -1}, {-1, -1}, {0, 0}, {-1, -1}, {0, 0}, {0, -1}, {1, 0},
    {-3, -3}, {-2, -2}, {-2, -2}, {-1, -1}, {-2, -2}, {-1, -1}, {-1, -1}, {0, 0},
    {-2, -2}, {-1, -1}, {-1, -1}, {0, 0}, {-1, -1}, {0, 0}, {0, 0}, {1, 1},
    {-4, -4}, {-3, -3}, {-3, -3}, {-2, -2}, {-3, -3}, {-2, -2}, {-2, -2}, {-1, -1},
    {-3, -3}, {-2, -2}, {-2, -2}, {-1, -1}, {-2, -2}, {-1, -1}, {-1, -1}, {0, 0},
};

/* The least cell of a column whose top cell is top, no less than floor
** (the column before's least: never falls), with the search stopped once
** it reaches floor. */
static int column_least(const EditPattern *p, uint64_t pv, uint64_t mv, int top, int floor) {
    uint64_t mask = p->n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << p->n) - 1;
    pv &= mask;
    mv &= mask;
    int run = top, least = top;
    for (int r = 0; r < p->n && least > floor; r += 4) {
        unsigned k = (unsigned)((pv >> r) & 15) | (unsigned)((mv >> r) & 15) << 4;
        if (run + aNibble[k].least < least) least = run + aNibble[k].least;
        run += aNibble[k].sum;
    }
    return least < floor ? floor : least;
}

void edit_walk_init(EditWalk *w, const EditPattern *p, int max, int mode, int maxChars, int bLetters) {
    w->p = p;
    w->max = max;
    w->mode = mode;
    w->maxChars = maxChars < EDIT_WALK_MAX ? maxChars : EDIT_WALK_MAX;
    w->nCol = 0;
    w->bLetters = bLetters;
    w->aCol[0] = (EditWalkCol){.pv = ~(uint64_t)0, .score = p->n, .best = p->n};
}

/* Column c + 1 from column c and the character cp (c <= maxChars, so c + 1
** <= EDIT_WALK_MAX + 1). */
static void walk_step(EditWalk *w, int c, uint32_t cp, int end) {
    const EditPattern *p = w->p;
    const EditWalkCol *a = &w->aCol[c];
    EditWalkCol *b = &w->aCol[c + 1];
    uint64_t eq = cp < 128 ? p->aAscii[cp] : pattern_eq(p, cp);
    b->pv = a->pv;
    b->mv = a->mv;
    b->score = a->score + myers_step(p, eq, &b->pv, &b->mv, w->mode & EDIT_SUFFIX ? 0 : 1);
    b->best = b->score < a->best ? b->score : a->best;
    b->end = end;
    b->bDead = c + 1 > w->maxChars;
    if (w->bLetters && !b->bDead && !utf8_is_letter(cp)) b->bDead = 1;
    /* The least cell: known to lie in [lo, hi], each bound carried over
    ** (a column's least never falls, and grows by at most 1); computed only
    ** when the column might be past hope. */
    b->lo = a->lo;
    b->hi = a->hi + 1;
    if (!(w->mode & EDIT_SUFFIX) && !((w->mode & EDIT_PREFIX) && b->best <= w->max) && b->hi > w->max) {
        b->lo = b->hi = column_least(p, b->pv, b->mv, c + 1, a->lo);
        if (b->lo > w->max) b->bDead = 1;
    }
}

int edit_walk_next(EditWalk *w, const char *z, int nz, int *pnDead, int *pnChars) {
    const unsigned char *u = (const unsigned char *)z;
    /* the columns of the characters shared whole with the last text: its
    ** bytes equal, and (for a character read as U+FFFD) not followed here by
    ** a byte that might have made it another */
    int nSame = 0, nKept = w->aCol[w->nCol].end;
    while (nSame < nz && nSame < nKept && z[nSame] == w->z[nSame]) nSame++;
    int c = 0;
    while (c < w->nCol && w->aCol[c + 1].end <= nSame &&
           (w->aCol[c + 1].end == nz || (u[w->aCol[c + 1].end] & 0xC0) != 0x80)) {
        c++;
        if (w->aCol[c].bDead) break;
    }
    int i = w->aCol[c].end;
    while (!w->aCol[c].bDead && i < nz) {
        uint32_t cp = next_char(u, nz, &i);
        walk_step(w, c, cp, i);
        c++;
    }
    w->nCol = c;
    if (w->aCol[c].end > nSame) memcpy(w->z + nSame, z + nSame, (size_t)(w->aCol[c].end - nSame));
    if (w->aCol[c].bDead) {
        *pnDead = w->aCol[c].end;
        return w->max + 1;
    }
    *pnDead = 0;
    *pnChars = c;
    int d = w->mode & EDIT_PREFIX ? w->aCol[c].best : w->aCol[c].score;
    return d > w->max ? w->max + 1 : d;
}
