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

/* The table's column for the text's j-th character is kept as two bit
** vectors of its vertical differences (cell i minus cell i-1 is +1 where
** Pv has bit i-1, -1 where Mv has it, else 0); each character of the text
** updates them in a few word operations, and the last cell, the distance
** so far, moves by the horizontal difference of the pattern's last row.
** The first row is the text's length so far (D[0][j] = j), so a +1 enters
** each horizontal vector at the bottom: Ph's shift brings in a 1. */
/* The distance from p's word to z[0..nz) or to a part of it (mode,
** EDIT_*). The score after each character of z is the distance to the text
** read so far, so the least of them is a prefix's (or, searching, a
** part's: the top row of the table is then 0, any character may start the
** match: Myers' search, no carry into the shifted horizontal deltas). */
int edit_pattern_distance_to(const EditPattern *p, const char *z, int nz, int max, int mode) {
    const unsigned char *u = (const unsigned char *)z;
    uint64_t hb = (uint64_t)1 << (p->n - 1);
    uint64_t pv = ~(uint64_t)0, mv = 0;
    uint64_t carry = mode & EDIT_SUFFIX ? 0 : 1;
    int score = p->n, best = p->n;
    for (int i = 0; i < nz;) {
        uint64_t eq;
        if (u[i] < 128) {
            eq = p->aAscii[u[i]];
            i++;
        } else {
            uint32_t cp;
            int len = utf8_decode(u + i, (size_t)(nz - i), &cp);
            if (len <= 0) len = 1, cp = 0xFFFD;
            eq = pattern_eq(p, cp);
            i += len;
        }
        uint64_t xv = eq | mv;
        uint64_t xh = (((eq & pv) + pv) ^ pv) | eq;
        uint64_t ph = mv | ~(xh | pv);
        uint64_t mh = pv & xh;
        score += (ph & hb) != 0;
        score -= (mh & hb) != 0;
        ph = (ph << 1) | carry;
        mh <<= 1;
        pv = mh | ~(xv | ph);
        mv = ph & xv;
        if (score < best) best = score;
    }
    if (mode & EDIT_PREFIX) score = best;
    return score > max ? max + 1 : score;
}

int edit_pattern_distance(const EditPattern *p, const char *z, int nz, int max) {
    return edit_pattern_distance_to(p, z, nz, max, EDIT_WHOLE);
}
