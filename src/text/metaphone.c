/* metaphone.c — see metaphone.h.
**
** The word is read at byte offsets, as Sphinx reads it: a rule that looks
** at the letter after a two-byte Ç sees its second byte, not a letter, and
** positions (the start, the last letter) are counted in bytes. Only the
** primary code is made; where the algorithm gives a secondary one too,
** the comments name the primary's reason only.
*/
#include "text/metaphone.h"

#include <stdint.h>
#include <string.h>

#include "text/utf8.h"

#define MP_PAD 10       /* blanks after the word, as Sphinx pads it */
#define MP_MAX_WORD 128 /* longer words get no code (terms are shorter) */

typedef struct Mp {
    char w[MP_MAX_WORD + MP_PAD + 1]; /* the word, ASCII upper case, padded, NUL */
    int n;                            /* its bytes without the padding */
    int nPad;                         /* with it */
    int bSlavo;                       /* it holds W, K, CZ or WITZ: Slavic or Germanic */
    char *out;                        /* the code so far */
    int nCode, nOut;
} Mp;

/* The byte at i, 0 outside the padded word. */
static char ch(const Mp *m, int i) {
    return i >= 0 && i < m->nPad ? m->w[i] : 0;
}

static int vowel(char c) {
    return c == 'A' || c == 'E' || c == 'I' || c == 'O' || c == 'U' || c == 'Y';
}

/* Does one of the alternatives zAlt ("ACH", "BACHER|MACHER") start at i,
** whole within the padded word? */
static int at(const Mp *m, int i, const char *zAlt) {
    if (i < 0 || i >= m->nPad) return 0;
    for (const char *p = zAlt;;) {
        size_t k = strcspn(p, "|");
        if ((size_t)i + k <= (size_t)m->nPad && memcmp(m->w + i, p, k) == 0) return 1;
        if (!p[k]) return 0;
        p += k + 1;
    }
}

static void put(Mp *m, const char *z) {
    for (; *z && m->nCode < m->nOut; z++) m->out[m->nCode++] = *z;
}

/* put(z), then the advance n: for the rules that end there. */
static int put_adv(Mp *m, const char *z, int n) {
    put(m, z);
    return n;
}

/* 'C' at i. */
static int code_c(Mp *m, int i) {
    /* Germanic "ach" (but "bacher", "macher" only before E) */
    if (i > 1 && !vowel(ch(m, i - 2)) && at(m, i - 1, "ACH") && ch(m, i + 2) != 'I' &&
        (ch(m, i + 2) != 'E' || at(m, i - 2, "BACHER|MACHER"))) {
        return put_adv(m, "K", 2);
    }
    if (i == 0 && at(m, 0, "CAESAR")) return put_adv(m, "S", 2);
    if (at(m, i, "CHIA")) return put_adv(m, "K", 2); /* "chianti" */
    if (at(m, i, "CH")) {
        if (i > 0 && at(m, i, "CHAE")) return put_adv(m, "K", 2); /* "michael" */
        /* Greek roots at the start: "chemistry", "chorus", not "chore" */
        if (i == 0 && (at(m, 1, "HARAC|HARIS") || at(m, 1, "HOR|HYM|HIA|HEM")) && !at(m, 0, "CHORE")) {
            return put_adv(m, "K", 2);
        }
        int bK = at(m, 0, "VAN |VON ") || at(m, 0, "SCH") || at(m, i - 2, "ORCHES|ARCHIT|ORCHID") ||
                 at(m, i + 2, "T|S") ||
                 ((at(m, i - 1, "A|O|U|E") || i == 0) && at(m, i + 2, "L|R|N|M|B|H|F|V|W| "));
        if (bK || (i > 0 && at(m, 0, "MC"))) return put_adv(m, "K", 2);
        return put_adv(m, "X", 2);
    }
    if (at(m, i, "CZ") && !at(m, i - 2, "WICZ")) return put_adv(m, "S", 2); /* "czerny" */
    if (at(m, i + 1, "CIA")) return put_adv(m, "X", 3);                      /* "focaccia" */
    if (at(m, i, "CC") && !(i == 1 && ch(m, 0) == 'M')) {
        /* "bellocchio" but not "bacchus"; "accident", "succeed" */
        if (at(m, i + 2, "I|E|H") && !at(m, i + 2, "HU")) {
            if ((i == 1 && ch(m, 0) == 'A') || at(m, i - 1, "UCCEE|UCCES")) return put_adv(m, "KS", 2);
            return put_adv(m, "X", 2);
        }
        return put_adv(m, "K", 2);
    }
    if (at(m, i, "CK|CG|CQ")) return put_adv(m, "K", 2);
    if (at(m, i, "CI|CE|CY")) return put_adv(m, "S", 2);
    put(m, "K");
    if (at(m, i + 1, " C| Q| G")) return 3; /* "mac caffrey" */
    if (at(m, i + 1, "C|K|Q") && !at(m, i + 1, "CE|CI")) return 2;
    return 1;
}

/* 'G' at i. */
static int code_g(Mp *m, int i) {
    char next = ch(m, i + 1);
    if (next == 'H') {
        if (i > 0 && !vowel(ch(m, i - 1))) return put_adv(m, "K", 2);
        if (i == 0) return put_adv(m, ch(m, 2) == 'I' ? "J" : "K", 2); /* "ghislane" */
        /* Parker's rule: "hugh", "bough", "broughton" are silent */
        if ((i > 1 && at(m, i - 2, "B|H|D")) || (i > 2 && at(m, i - 3, "B|H|D")) || (i > 3 && at(m, i - 4, "B|H"))) {
            return 2;
        }
        /* "laugh", "cough", "rough", "tough" */
        if (i > 2 && ch(m, i - 1) == 'U' && at(m, i - 3, "C|G|L|R|T")) return put_adv(m, "F", 2);
        if (ch(m, i - 1) != 'I') put(m, "K");
        return 2;
    }
    if (next == 'N') {
        int bKn = (i == 1 && vowel(ch(m, 0)) && !m->bSlavo) || at(m, i + 2, "EY") || m->bSlavo;
        return put_adv(m, bKn ? "KN" : "N", 2);
    }
    if (at(m, i + 1, "LI") && !m->bSlavo) return put_adv(m, "KL", 2); /* "tagliaro" */
    if (i == 0 && (next == 'Y' || at(m, 1, "ES|EP|EB|EL|EY|IB|IL|IN|IE|EI|ER"))) return put_adv(m, "K", 2);
    if ((at(m, i + 1, "ER") || next == 'Y') && !at(m, 0, "DANGER|RANGER|MANGER") && !at(m, i - 1, "E|I") &&
        !at(m, i - 1, "RGY|OGY")) {
        return put_adv(m, "K", 2);
    }
    if (at(m, i + 1, "E|I|Y") || at(m, i - 1, "AGGI|OGGI")) {
        /* Germanic stays hard; else soft, as in "biaggi" */
        int bHard = at(m, 0, "VAN |VON ") || at(m, 0, "SCH") || at(m, i + 1, "ET");
        return put_adv(m, bHard ? "K" : "J", 2);
    }
    return put_adv(m, "K", next == 'G' ? 2 : 1);
}

/* 'J' at i. */
static int code_j(Mp *m, int i, int last) {
    if (at(m, i, "JOSE") || at(m, 0, "SAN ")) { /* Spanish "jose", "san jacinto" */
        int bH = (i == 0 && ch(m, i + 4) == ' ') || at(m, 0, "SAN ");
        return put_adv(m, bH ? "H" : "J", 1);
    }
    if (i == 0) {
        put(m, "J");
    } else if (vowel(ch(m, i - 1)) && !m->bSlavo && (ch(m, i + 1) == 'A' || ch(m, i + 1) == 'O')) {
        put(m, "J"); /* "bajador" */
    } else if (i == last) {
        put(m, "J");
    } else if (!at(m, i + 1, "L|T|K|S|N|M|B|Z") && !at(m, i - 1, "S|K|L")) {
        put(m, "J");
    }
    return ch(m, i + 1) == 'J' ? 2 : 1;
}

/* 'S' at i. */
static int code_s(Mp *m, int i, int last) {
    if (at(m, i - 1, "ISL|YSL")) return 1; /* "island", "carlisle" */
    if (i == 0 && at(m, 0, "SUGAR")) return put_adv(m, "X", 1);
    if (at(m, i, "SH")) return put_adv(m, at(m, i + 1, "HEIM|HOEK|HOLM|HOLZ") ? "S" : "X", 2);
    if (at(m, i, "SIO|SIA") || at(m, i, "SIAN")) return put_adv(m, "S", 3);
    /* "smith" as "schmidt", "snider" as "schneider"; Slavic "sz" */
    if ((i == 0 && at(m, 1, "M|N|L|W")) || at(m, i + 1, "Z")) return put_adv(m, "S", at(m, i + 1, "Z") ? 2 : 1);
    if (at(m, i, "SC")) {
        if (ch(m, i + 2) == 'H') {
            /* Dutch "school", "schooner"; "schermerhorn", "schenker" */
            if (at(m, i + 3, "OO|ER|EN|UY|ED|EM")) return put_adv(m, at(m, i + 3, "ER|EN") ? "X" : "SK", 3);
            return put_adv(m, "X", 3);
        }
        return put_adv(m, at(m, i + 2, "I|E|Y") ? "S" : "SK", 3);
    }
    if (!(i == last && at(m, i - 2, "AI|OI"))) put(m, "S"); /* French "resnais", "artois" */
    return at(m, i + 1, "S|Z") ? 2 : 1;
}

/* 'T' at i. */
static int code_t(Mp *m, int i) {
    if (at(m, i, "TION") || at(m, i, "TIA|TCH")) return put_adv(m, "X", 3);
    if (at(m, i, "TH") || at(m, i, "TTH")) {
        /* "thomas", "thames" and Germanic names keep a T */
        int bT = at(m, i + 2, "OM|AM") || at(m, 0, "VAN |VON ") || at(m, 0, "SCH");
        return put_adv(m, bT ? "T" : "0", 2);
    }
    return put_adv(m, "T", at(m, i + 1, "T|D") ? 2 : 1);
}

/* 'W' at i. */
static int code_w(Mp *m, int i, int last) {
    if (at(m, i, "WR")) return put_adv(m, "R", 2);
    if (i == 0 && (vowel(ch(m, 1)) || at(m, 0, "WH"))) put(m, "A");
    /* "arnow" as "arnoff": nothing in the primary code */
    if ((i == last && i > 0 && vowel(ch(m, i - 1))) || at(m, i - 1, "EWSKI|EWSKY|OWSKI|OWSKY") || at(m, 0, "SCH")) {
        return 1;
    }
    if (at(m, i, "WICZ|WITZ")) return put_adv(m, "TS", 4); /* Polish "filipowicz" */
    return 1;
}

/* The code of the character c at byte i; returns how many characters it
** took (the rules skip letters they have read). */
static int code_at(Mp *m, uint32_t c, int i) {
    int last = m->n - 1;
    char next = ch(m, i + 1);
    switch (c) {
    case 'A':
    case 'E':
    case 'I':
    case 'O':
    case 'U':
    case 'Y':
        if (i == 0) put(m, "A");
        return 1;
    case 'B':
        return put_adv(m, "P", next == 'B' ? 2 : 1);
    case 0xC7: /* Ç */
    case 0xE7: /* ç */
        return put_adv(m, "S", 1);
    case 'C':
        return code_c(m, i);
    case 'D':
        if (at(m, i, "DG")) return at(m, i + 2, "I|E|Y") ? put_adv(m, "J", 3) : put_adv(m, "TK", 2);
        return put_adv(m, "T", at(m, i, "DT|DD") ? 2 : 1);
    case 'F':
        return put_adv(m, "F", next == 'F' ? 2 : 1);
    case 'G':
        return code_g(m, i);
    case 'H':
        /* kept first or between vowels, before a vowel */
        if ((i == 0 || vowel(ch(m, i - 1))) && vowel(next)) return put_adv(m, "H", 2);
        return 1;
    case 'J':
        return code_j(m, i, last);
    case 'K':
        return put_adv(m, "K", next == 'K' ? 2 : 1);
    case 'L': {
        int adv = 1;
        if (next == 'L') {
            /* Spanish "cabrillo", "gallegos": the same L */
            if ((i == last - 2 && at(m, i - 1, "ILLO|ILLA|ALLE")) ||
                ((at(m, last - 1, "AS|OS") || at(m, last, "A|O")) && at(m, i - 1, "ALLE"))) {
                return put_adv(m, "L", 2);
            }
            adv = 2;
        }
        return put_adv(m, "L", adv);
    }
    case 'M':
        put(m, "M");
        /* "dumb", "thumb" */
        if ((at(m, i - 1, "UMB") && (i + 1 == last || at(m, i + 2, "ER"))) || next == 'M') return 2;
        return 1;
    case 'N':
        return put_adv(m, "N", next == 'N' ? 2 : 1);
    case 0xD1: /* Ñ */
    case 0xF1: /* ñ */
        return put_adv(m, "N", 1);
    case 'P':
        if (next == 'H') return put_adv(m, "F", 2);
        return put_adv(m, "P", at(m, i + 1, "P|B") ? 2 : 1); /* "campbell", "raspberry" */
    case 'Q':
        return put_adv(m, "K", next == 'Q' ? 2 : 1);
    case 'R':
        /* French "rogier", not "hochmeier": nothing in the primary code */
        if (!(i == last && !m->bSlavo && at(m, i - 2, "IE") && !at(m, i - 4, "ME|MA"))) put(m, "R");
        return next == 'R' ? 2 : 1;
    case 'S':
        return code_s(m, i, last);
    case 'T':
        return code_t(m, i);
    case 'V':
        return put_adv(m, "F", next == 'V' ? 2 : 1);
    case 'W':
        return code_w(m, i, last);
    case 'X':
        /* French "breaux" is silent */
        if (!(i == last && (at(m, i - 3, "IAU|EAU") || at(m, i - 2, "AU|OU")))) put(m, "KS");
        return next == 'C' || next == 'X' ? 2 : 1;
    case 'Z':
        if (next == 'H') return put_adv(m, "J", 2); /* Pinyin "zhao" */
        put(m, "S");
        return next == 'Z' ? 2 : 1;
    default:
        return 1; /* digits and the rest add nothing */
    }
}

/* The byte offset of the character after the one at byte i. */
static int next_char(const Mp *m, int i) {
    unsigned char b = (unsigned char)m->w[i];
    int len = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    return i + len;
}

int metaphone_code(const char *z, int n, char *out, int nOut) {
    if (n <= 0 || n > MP_MAX_WORD || nOut <= 0) return 0;
    Mp m;
    for (int i = 0; i < n; i++) m.w[i] = z[i] >= 'a' && z[i] <= 'z' ? (char)(z[i] - 'a' + 'A') : z[i];
    memset(m.w + n, ' ', MP_PAD);
    m.w[n + MP_PAD] = 0;
    m.n = n;
    m.nPad = n + MP_PAD;
    m.out = out;
    m.nOut = nOut;
    m.nCode = 0;
    m.w[n] = 0; /* for strstr: the word alone */
    m.bSlavo = strchr(m.w, 'W') || strchr(m.w, 'K') || strstr(m.w, "CZ") || strstr(m.w, "WITZ");
    m.w[n] = ' ';
    int nSkip = at(&m, 0, "GN|KN|PN|WR|PS"); /* silent at the start */
    if (m.w[0] == 'X') {                      /* "xavier" */
        put(&m, "S");
        nSkip = 1;
    }
    int i = 0;
    for (int k = 0; k < nSkip && i < n; k++) i = next_char(&m, i);
    while (i < n) {
        uint32_t c = (unsigned char)m.w[i];
        if (c >= 0x80) utf8_decode((const unsigned char *)m.w + i, (size_t)(n - i), &c);
        if (c > 0x80 && c != 0xC7 && c != 0xE7 && c != 0xD1 && c != 0xF1) return 0; /* not a word it reads */
        int adv = code_at(&m, c, i);
        for (int k = 0; k < adv && i < n; k++) i = next_char(&m, i);
    }
    return m.nCode;
}
