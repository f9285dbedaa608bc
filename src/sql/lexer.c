/*
** lexer.c — see lexer.h.
**
** One hand-written scanner over the bytes; a 256-entry class table decides
** what a byte can start. Keywords are found through a small hash table,
** comparing case-folded bytes in place, so no lower-cased copy of a token
** is ever made.
*/
#include "sql/lexer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Byte classes; bytes not listed (controls, 0x80-0xFF, ? [ ] \ ...) start
** no token. */
enum {
    CC_OTHER = 0,   /* starts no token */
    CC_SPACE,       /* whitespace */
    CC_ALPHA,       /* letter, '_' or '$': starts an identifier */
    CC_DIGIT,       /* 0-9 */
    CC_PUNCT,       /* anything else that starts a token: handled by a switch */
};

static const unsigned char aClass[256] = {
    [' '] = CC_SPACE, ['\t'] = CC_SPACE, ['\n'] = CC_SPACE,
    ['\r'] = CC_SPACE, ['\f'] = CC_SPACE, ['\v'] = CC_SPACE,
    ['a' ... 'z'] = CC_ALPHA, ['A' ... 'Z'] = CC_ALPHA, ['_'] = CC_ALPHA, ['$'] = CC_ALPHA,
    ['0' ... '9'] = CC_DIGIT,
    ['\''] = CC_PUNCT, ['"'] = CC_PUNCT, ['`'] = CC_PUNCT, ['@'] = CC_PUNCT,
    ['#'] = CC_PUNCT, ['('] = CC_PUNCT, [')'] = CC_PUNCT, [','] = CC_PUNCT,
    [';'] = CC_PUNCT, ['.'] = CC_PUNCT, ['*'] = CC_PUNCT, ['+'] = CC_PUNCT,
    ['-'] = CC_PUNCT, ['/'] = CC_PUNCT, ['%'] = CC_PUNCT, ['='] = CC_PUNCT,
    ['!'] = CC_PUNCT, ['<'] = CC_PUNCT, ['>'] = CC_PUNCT, ['{'] = CC_PUNCT,
    ['}'] = CC_PUNCT, ['|'] = CC_PUNCT, ['&'] = CC_PUNCT, ['~'] = CC_PUNCT,
    ['^'] = CC_PUNCT, [':'] = CC_PUNCT, ['['] = CC_PUNCT, [']'] = CC_PUNCT,
};

/* Bytes allowed inside an identifier: letters, digits, '_', '$'. */
#define IS_IDENT(c) (aClass[(unsigned char)(c)] == CC_ALPHA || aClass[(unsigned char)(c)] == CC_DIGIT)
#define IS_DIGIT(c) ((unsigned)(unsigned char)(c) - '0' < 10u)

/* ------------------------------------------------------------------ */
/* Keywords                                                            */

static const struct {
    const char *z;          /* upper-case spelling */
    unsigned char n;        /* its length */
    unsigned char bReserved;
} aKeyword[] = {
#define SQL_KW_ENTRY_(name, reserved) {#name, sizeof(#name) - 1, reserved},
    SQL_KEYWORDS(SQL_KW_ENTRY_)
#undef SQL_KW_ENTRY_
};

#define KW_MINLEN 2     /* AS, BY, IF, IN, IS, OR */
#define KW_MAXLEN 11    /* RECONFIGURE, TRANSACTION */
#define KW_NHASH 256    /* slots in aKwHash: a power of two, ~3x the keywords */

/* Open-addressing hash of the keywords (linear probing): slot -> keyword
** number (KW_*), 0 when empty. Filled once before main() by a constructor
** and only read afterwards, so any thread may use it. */
static unsigned char aKwHash[KW_NHASH];
_Static_assert(KW_COUNT_ <= KW_NHASH / 2, "keyword hash too full");

/* Hash of a word from its length and three bytes; `| 0x20` folds ASCII
** letters to lower case (it garbles other bytes, but consistently, and
** the final comparison is exact). */
static unsigned kw_hash(const char *z, int n) {
    unsigned c0 = (unsigned char)z[0] | 0x20u;
    unsigned c1 = (unsigned char)z[1] | 0x20u;
    unsigned cn = (unsigned char)z[n - 1] | 0x20u;
    return (c0 * 7u + c1 * 3u + cn * 31u + (unsigned)n * 17u) & (KW_NHASH - 1);
}

__attribute__((constructor)) static void kw_hash_init(void) {
    for (int kw = 1; kw < KW_COUNT_; kw++) {
        unsigned h = kw_hash(aKeyword[kw - 1].z, aKeyword[kw - 1].n);
        while (aKwHash[h]) h = (h + 1) & (KW_NHASH - 1);
        aKwHash[h] = (unsigned char)kw;
    }
}

int sql_keyword(const char *z, int n) {
    if (n < KW_MINLEN || n > KW_MAXLEN) return KW_NONE;
    for (unsigned h = kw_hash(z, n); aKwHash[h]; h = (h + 1) & (KW_NHASH - 1)) {
        int kw = aKwHash[h];
        const char *k = aKeyword[kw - 1].z;
        if (aKeyword[kw - 1].n != n) continue;
        int i = 0;
        while (i < n) {
            unsigned char c = (unsigned char)z[i];
            if (c >= 'a' && c <= 'z') c -= 'a' - 'A';
            if (c != (unsigned char)k[i]) break;
            i++;
        }
        if (i == n) return kw;
    }
    return KW_NONE;
}

const char *sql_keyword_name(int kw) {
    if (kw <= KW_NONE || kw >= KW_COUNT_) return "";
    return aKeyword[kw - 1].z;
}

int sql_keyword_reserved(int kw) {
    if (kw <= KW_NONE || kw >= KW_COUNT_) return 0;
    return aKeyword[kw - 1].bReserved;
}

const char *sql_lex_errmsg(int lexErr) {
    switch (lexErr) {
    case SQL_LEXERR_STRING: return "unterminated string";
    case SQL_LEXERR_QID: return "unterminated quoted identifier";
    case SQL_LEXERR_COMMENT: return "unterminated comment";
    case SQL_LEXERR_CHAR: return "invalid character";
    default: return "syntax error";
    }
}

/* ------------------------------------------------------------------ */
/* Scanner                                                             */

void sql_lexer_init(SqlLexer *pLex, const char *z, int n, int iStart) {
    pLex->z = z;
    pLex->n = n;
    pLex->i = iStart < 0 ? 0 : (iStart > n ? n : iStart);
}

/* Skips whitespace and comments from pLex->i. Returns SQL_LEXERR_NONE, or
** SQL_LEXERR_COMMENT with *pErrPos at the unterminated comment's start. */
static int skip_space(SqlLexer *pLex, int *pErrPos) {
    const char *z = pLex->z;
    int n = pLex->n;
    int i = pLex->i;
    for (;;) {
        if (i >= n) break;
        unsigned char c = (unsigned char)z[i];
        if (aClass[c] == CC_SPACE) {
            i++;
        } else if (c == '#' ||
                   (c == '-' && i + 1 < n && z[i + 1] == '-' &&
                    (i + 2 >= n || (unsigned char)z[i + 2] <= ' '))) {
            /* MySQL's "-- " needs whitespace or a control character after
            ** the dashes; '#' needs nothing. Both run to the end of line. */
            const char *e = memchr(z + i, '\n', (size_t)(n - i));
            i = e ? (int)(e - z) + 1 : n;
        } else if (c == '/' && i + 1 < n && z[i + 1] == '*') {
            int j = i + 2;
            for (;;) {
                const char *e = j < n ? memchr(z + j, '*', (size_t)(n - j)) : NULL;
                if (!e || e + 1 >= z + n) {
                    pLex->i = n;
                    *pErrPos = i;
                    return SQL_LEXERR_COMMENT;
                }
                j = (int)(e - z) + 1;
                if (z[j] == '/') break;
            }
            i = j + 1;
        } else {
            break;
        }
    }
    pLex->i = i;
    return SQL_LEXERR_NONE;
}

/* Scans a quoted string or name starting at z[i] (the quote). Returns the
** offset just past the closing quote, or -1 when unterminated. *pbEsc is
** set when the value differs from the text between the quotes. */
static int scan_quoted(const char *z, int n, int i, int *pbEsc) {
    char q = z[i];
    int bBackslash = (q != '`'); /* backquoted names have no \ escapes */
    int bEsc = 0;
    i++;
    while (i < n) {
        const char *e = z + i;
        /* Jump to the next byte that matters. */
        while (e < z + n && *e != q && !(bBackslash && *e == '\\')) e++;
        if (e >= z + n) return -1;
        i = (int)(e - z);
        if (*e == '\\') {
            if (i + 1 >= n) return -1;
            bEsc = 1;
            i += 2;
        } else if (i + 1 < n && z[i + 1] == q) {
            bEsc = 1; /* doubled quote */
            i += 2;
        } else {
            *pbEsc = bEsc;
            return i + 1;
        }
    }
    return -1;
}

/* The number or digit-led identifier at z[i] (a digit, or '.' followed by
** a digit). Fills type and returns the end offset. */
static int scan_number(const char *z, int n, int i, int *pType) {
    int j = i;
    if (IS_DIGIT(z[i])) {
        /* Take the whole run of identifier bytes and classify it: all
        ** digits is a number, 1e10 is a float, 1st is an identifier. */
        while (j < n && IS_IDENT(z[j])) j++;
        int k = i;
        while (k < j && IS_DIGIT(z[k])) k++;
        if (k < j) {
            if (z[k] == 'e' || z[k] == 'E') {
                int m = k + 1;
                if (m == j && m + 1 < n && (z[m] == '+' || z[m] == '-') && IS_DIGIT(z[m + 1])) {
                    /* 1e+5: the sign ended the run */
                    m += 2;
                    while (m < n && IS_DIGIT(z[m])) m++;
                    *pType = TK_FLOAT;
                    return m;
                }
                int d = m;
                while (d < j && IS_DIGIT(z[d])) d++;
                if (d == j && d > m) {
                    *pType = TK_FLOAT;
                    return j;
                }
            }
            *pType = TK_ID;
            return j;
        }
        *pType = TK_INT;
        if (j >= n || z[j] != '.') return j;
    }
    /* z[j] is '.': a fraction, then an optional exponent. */
    j++;
    while (j < n && IS_DIGIT(z[j])) j++;
    if (j < n && (z[j] == 'e' || z[j] == 'E')) {
        int m = j + 1;
        if (m < n && (z[m] == '+' || z[m] == '-')) m++;
        if (m < n && IS_DIGIT(z[m])) {
            while (m < n && IS_DIGIT(z[m])) m++;
            j = m;
        }
    }
    *pType = TK_FLOAT;
    return j;
}

/* @@name, @@session.name, @@global.name, @@local.name at z[i]. Returns the
** end offset (i when nothing valid follows "@@") and the scope. */
static int scan_sysvar(const char *z, int n, int i, int *pScope) {
    int j = i + 2;
    while (j < n && IS_IDENT(z[j])) j++;
    *pScope = 0;
    if (j + 1 < n && z[j] == '.' && IS_IDENT(z[j + 1])) {
        int kw = sql_keyword(z + i + 2, j - i - 2);
        int scope = (kw == KW_SESSION || kw == KW_LOCAL) ? 1 : kw == KW_GLOBAL ? 2 : 0;
        if (scope) {
            *pScope = scope;
            j++;
            while (j < n && IS_IDENT(z[j])) j++;
        }
    }
    return j;
}

static int lex_error(SqlLexer *pLex, SqlToken *pTok, int err, int pos) {
    pTok->type = TK_ERROR;
    pTok->sub = err;
    pTok->pos = pos;
    pTok->len = pLex->n - pos;
    pLex->i = pLex->n; /* what follows an error is not lexed */
    return TK_ERROR;
}

int sql_lex_next(SqlLexer *pLex, SqlToken *pTok) {
    int errPos = 0;
    if (skip_space(pLex, &errPos)) return lex_error(pLex, pTok, SQL_LEXERR_COMMENT, errPos);
    const char *z = pLex->z;
    int n = pLex->n;
    int i = pLex->i;
    pTok->pos = i;
    pTok->sub = 0;
    if (i >= n) {
        pTok->type = TK_EOF;
        pTok->len = 0;
        return TK_EOF;
    }
    unsigned char c = (unsigned char)z[i];
    int type;
    int j = i + 1; /* end of the token */
    switch (aClass[c]) {
    case CC_ALPHA:
        while (j < n && IS_IDENT(z[j])) j++;
        type = TK_ID;
        pTok->sub = sql_keyword(z + i, j - i);
        break;
    case CC_DIGIT:
        j = scan_number(z, n, i, &type);
        if (type == TK_ID) pTok->sub = KW_NONE; /* no keyword starts with a digit */
        break;
    case CC_PUNCT: {
        unsigned char d = j < n ? (unsigned char)z[j] : 0;
        switch (c) {
        case '\'':
        case '"':
        case '`': {
            int bEsc = 0;
            j = scan_quoted(z, n, i, &bEsc);
            if (j < 0) {
                return lex_error(pLex, pTok, c == '`' ? SQL_LEXERR_QID : SQL_LEXERR_STRING, i);
            }
            type = c == '`' ? TK_QID : TK_STRING;
            pTok->sub = bEsc;
            break;
        }
        case '@':
            if (d == '@') {
                int scope;
                j = scan_sysvar(z, n, i, &scope);
                if (j == i + 2) return lex_error(pLex, pTok, SQL_LEXERR_CHAR, i);
                type = TK_SYSVAR;
                pTok->sub = scope;
            } else {
                while (j < n && (IS_IDENT(z[j]) || z[j] == '.')) j++;
                if (j == i + 1) return lex_error(pLex, pTok, SQL_LEXERR_CHAR, i);
                type = TK_USERVAR;
            }
            break;
        case '.':
            if (IS_DIGIT(d)) {
                j = scan_number(z, n, i, &type);
            } else {
                type = TK_DOT;
            }
            break;
        case '(': type = TK_LP; break;
        case ')': type = TK_RP; break;
        case ',': type = TK_COMMA; break;
        case ';': type = TK_SEMI; break;
        case '*': type = TK_STAR; break;
        case '+': type = TK_PLUS; break;
        case '-': type = TK_MINUS; break;
        case '/': type = TK_SLASH; break;
        case '%': type = TK_PERCENT; break;
        case '{': type = TK_LBRACE; break;
        case '[': type = TK_LBRACKET; break;
        case ']': type = TK_RBRACKET; break;
        case '}': type = TK_RBRACE; break;
        case '~': type = TK_TILDE; break;
        case '^': type = TK_CARET; break;
        case ':': type = TK_COLON; break;
        case '=':
            type = TK_EQ;
            if (d == '=') j++;
            break;
        case '!':
            type = TK_BANG;
            if (d == '=') type = TK_NE, j++;
            break;
        case '<':
            type = TK_LT;
            if (d == '=') type = TK_LE, j++;
            else if (d == '>') type = TK_NE, j++;
            break;
        case '>':
            type = TK_GT;
            if (d == '=') type = TK_GE, j++;
            break;
        case '|':
            type = TK_PIPE;
            if (d == '|') type = TK_OROR, j++;
            break;
        case '&':
            type = TK_AMP;
            if (d == '&') type = TK_ANDAND, j++;
            break;
        default: /* '#' is always a comment, so it cannot get here */
            return lex_error(pLex, pTok, SQL_LEXERR_CHAR, i);
        }
        break;
    }
    default:
        return lex_error(pLex, pTok, SQL_LEXERR_CHAR, i);
    }
    pTok->type = type;
    pTok->len = j - i;
    pLex->i = j;
    return type;
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

size_t sql_lex_unquote(const char *z, int n, char *zOut) {
    size_t o = 0;
    if (n < 2) {
        zOut[0] = 0;
        return 0;
    }
    char q = z[0];
    int bBackslash = (q != '`');
    for (int i = 1; i < n - 1; i++) {
        char c = z[i];
        if (c == '\\' && bBackslash && i + 1 < n - 1) {
            char d = z[++i];
            switch (d) {
            case '0': c = 0; break;
            case 'b': c = '\b'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'Z': c = 26; break;
            case '%':
            case '_':
                /* kept with the backslash: a LIKE pattern needs it */
                zOut[o++] = '\\';
                c = d;
                break;
            default: c = d; break; /* \\ \' \" and unknown escapes */
            }
        } else if (c == q && i + 1 < n - 1 && z[i + 1] == q) {
            i++; /* doubled quote */
        }
        zOut[o++] = c;
    }
    zOut[o] = 0;
    return o;
}

int sql_lex_uint(const char *z, int n, uint64_t *pu) {
    uint64_t u = 0;
    for (int i = 0; i < n; i++) {
        unsigned d = (unsigned char)z[i] - '0';
        if (u > (UINT64_MAX - d) / 10) return 0;
        u = u * 10 + d;
    }
    *pu = u;
    return 1;
}

int sql_lex_double(const char *z, int n, double *pf) {
    /* strtod needs a terminated string. Float literals are short, so a
    ** stack copy does; an absurdly long one (every digit can matter for
    ** correct rounding) gets a temporary heap copy. */
    char zBuf[128];
    char *zCopy = zBuf;
    if (n >= (int)sizeof(zBuf)) {
        zCopy = malloc((size_t)n + 1);
        if (!zCopy) return -1;
    }
    memcpy(zCopy, z, (size_t)n);
    zCopy[n] = 0;
    double f = strtod(zCopy, NULL);
    if (zCopy != zBuf) free(zCopy);
    if (isinf(f)) return 0;
    *pf = f;
    return 1;
}
