/*
** match.c — see match.h.
**
** A hand-written recursive-descent parser straight over the bytes (no
** token stream). The grammar, as Sphinx's sphinxquery.y has it:
**
**   query   := [ '@@relaxed' ] group-body END
**   group   := '(' group-body ')'
**   body    := { field-op | chain }             implicit AND of the chains
**   chain   := or-list { chain-op or-list }
**   chain-op:= '<<' | 'NEAR/' N | 'NOTNEAR/' N | 'SENTENCE' | 'PARAGRAPH'
**              (one per chain, left-associative: `a NEAR/3 b << c` is
**              `(a NEAR/3 b) << c`, and NOTNEAR/N joins two operands, so
**              `a NOTNEAR/3 b NOTNEAR/2 c` is `(a NOTNEAR/3 b) NOTNEAR/2 c`;
**              but a SENTENCE or PARAGRAPH chain is one operand of the
**              others: `a << b SENTENCE c` is `a << (b SENTENCE c)`, and
**              `a SENTENCE b NEAR/3 c` is `(a SENTENCE b) NEAR/3 c`)
**   or-list := [ '-' | '!' ] operand { ( '|' | 'MAYBE' ) operand }
**   operand := { field-op } [ '+' ] primary
**   primary := [ '^' ] word [ '*' | '$' ] | phrase [ '~' N | '/' N ] | group
**            | field ':' primary
**   phrase  := '"' [ '^' ] text [ '$' ] '"'
**   field-op:= '@' [ '!' ] ( name | '(' name { ',' name } ')' ) [ '[' N ']' ]
**            | '@*'
**
** Decisions, where the header leaves room (each follows Sphinx/Manticore):
**  1. `|` binds tighter than the implicit AND, and a leading `-`/`!` negates
**     the or-list that follows it: `-a | b` is NOT(a OR b), `-a b` is
**     (NOT a) AND b (sphinxquery.y: `orlistf: '-' orlist`). An operand of
**     `|` cannot itself be negated (`a | -b` is an error), nor can a group
**     of only negated terms be negated or OR-ed: NOT stays a child of AND.
**  2. A field operator changes the scope of the rest of its group, or-list
**     operands included (`a | @title b c`: b and c in title); a group starts
**     with its parent's scope and its changes end with it. A nested scope
**     replaces the outer one (it does not intersect). `title:x` scopes x
**     only (x may be a word, prefix, phrase or group) and only when `title`
**     is a full-text field; otherwise ':' separates words like a space.
**  3. `-`, `!`, `+` and `@` are operators only where a word could start;
**     inside a word they are part of it (`e-mail`, `c++`, `yahoo!`,
**     `me@host`), so the analyzer splits such a word into a phrase later.
**     `( ) | " ~ * :`, whitespace (ASCII and Unicode Zs) always end a word;
**     `\` takes the next character literally.
**  4. `*` ends a prefix; repeated stars are one (`ab**` = `ab*`); a star
**     anywhere else (alone, leading, mid-word) is an error, as is `~`
**     anywhere but right after a phrase.
**  5. Phrase text is kept raw (only `\` escapes are undone), even when it
**     is empty: the planner analyses it and drops what yields no term, as
**     it does for a word made only of punctuation.
**  6. `|` and MAYBE are one level, left to right: `a | b MAYBE c` is
**     (a | b) MAYBE c. A chain (`<<` or NEAR/N) takes words, exact
**     phrases and OR lists of them (Sphinx's `red|green << car`), and
**     prefixes and wildcards too (under `<<` they make an FTSN_ORDER), all
**     joined by the same operator; its field scope is what its operands
**     share. A chain with OR lists becomes the OR of its choices
**     (chain_expand), so the planner sees plain chains only. A keyword operator (MAYBE, NEAR/N) is
**     upper case and stands alone; where an operand is expected it is an
**     error that says how to search the word instead.
**  7. Inside a phrase the text stays raw, with four exceptions Sphinx and
**     Manticore have: a '*' standing alone is a word position (checked here,
**     counted by the analyzer's query side); a '*' that ends a word makes it
**     a prefix ("hello wor*": checked here, expanded by the planner);
**     '(a | b)' groups make the phrase an OR
**     of one phrase per alternative (phrase_alternatives); and '^' first,
**     '$' last anchor it.
**
** Errors carry err->detail FTS_MATCH_ER_PARSE (1064) and err->pos. The
** query is checked for valid UTF-8 first, so error excerpts and word
** boundaries never split a character.
*/
#include "fts/match.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "text/analyzer.h"
#include "text/regexp.h"
#include "text/utf8.h"
#include "util/strbuf.h"

#define NEAR_MAX 32       /* bytes of query quoted in a syntax error */
#define FIELD_NAME_MAX 64 /* bytes of a field name quoted in an error */
#define MAX_FIELDSET 256  /* fields an FtsFieldSet can hold */

#define EXPECT_PRIMARY "expected a word, phrase or '('"

typedef struct MatchParser {
    Arena *a;                   /* where the tree goes */
    const char *z;              /* the query, z[0..n) (not NUL-terminated) */
    int n;                      /* its length */
    int i;                      /* cursor: next byte to read */
    const char *const *azField; /* the table's full-text fields, in order */
    int nField;                 /* how many */
    FtsFieldSet all;            /* every field: the initial scope */
    int depth;                  /* groups open at the cursor */
    int bRelaxed;               /* @@relaxed: unknown field names are skipped */
    int bInlineWild;            /* FTS_MATCH_INLINE_WILDCARDS */
    int nWordWild;              /* the last word read_word read: its '?' and '%' ... */
    int nWordLit;               /* ... and its other characters (with bInlineWild) */
    LpError *err;               /* filled on failure */
} MatchParser;

/* What a field operator sets for the rest of its group: the fields, and
** how many leading positions of each count (@title[50]; 0: all). */
typedef struct Scope {
    FtsFieldSet fields;
    uint32_t nPosLimit;
    const FtsZones *pZones;     /* ZONE:(…), or NULL */
    int bMissed;                /* @@relaxed: the field operator named only fields
                                ** the table lacks (FtsNode.bMissed) */
} Scope;

/* A growable array of children in the arena (old arrays are abandoned
** there: at most twice the final size is wasted). */
typedef struct NodeList {
    FtsNode **a; /* children */
    int n;       /* used */
    int cap;     /* allocated */
} NodeList;

/* ------------------------------------------------------------------ */
/* Errors                                                              */

static int parse_errorv(MatchParser *p, int pos, const char *zFmt, va_list ap) {
    char zWhat[LP_ERRMSG_MAX];
    vsnprintf(zWhat, sizeof(zWhat), zFmt, ap);
    if (pos >= p->n) {
        lp_err_setpos(p->err, LP_BADINPUT, p->n, "MATCH: unexpected end of query at offset %d: %s",
                      p->n, zWhat);
    } else {
        const char *zNear = p->z + pos;
        size_t nLeft = (size_t)(p->n - pos);
        size_t m = nLeft < NEAR_MAX ? nLeft : NEAR_MAX;
        const char *pNul = memchr(zNear, 0, m);
        if (pNul) m = (size_t)(pNul - zNear); /* a NUL would end the message */
        int bCut = m < nLeft;
        m = utf8_floor(zNear, m);
        while (m > 1 && (zNear[m - 1] == ' ' || zNear[m - 1] == '\t' || zNear[m - 1] == '\n' ||
                         zNear[m - 1] == '\r')) {
            m--;
        }
        lp_err_setpos(p->err, LP_BADINPUT, pos, "MATCH: near '%.*s%s' at offset %d: %s", (int)m,
                      zNear, bCut ? "..." : "", pos, zWhat);
    }
    if (p->err) p->err->detail = FTS_MATCH_ER_PARSE;
    return LP_BADINPUT;
}

/* "MATCH: near '<rest of query>' at offset N: <what>", or "unexpected end
** of query" when pos is at the end. */
static int syntax_error(MatchParser *p, int pos, const char *zFmt, ...)
    __attribute__((format(printf, 3, 4)));
static int syntax_error(MatchParser *p, int pos, const char *zFmt, ...) {
    va_list ap;
    va_start(ap, zFmt);
    int rc = parse_errorv(p, pos, zFmt, ap);
    va_end(ap);
    return rc;
}

static int nomem(MatchParser *p) {
    return lp_err_set(p->err, LP_NOMEM, "MATCH: out of memory");
}

/* ------------------------------------------------------------------ */
/* Characters                                                          */

/* Bytes of the whitespace character at z[i], or 0. ':' counts as
** whitespace here: it only means something right after a field name,
** which the word reader checks before anyone skips it. */
static int space_len(const MatchParser *p, int i) {
    unsigned char c = (unsigned char)p->z[i];
    if (c < 0x80) {
        return (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
                c == 0 || c == ':')
                   ? 1
                   : 0;
    }
    uint32_t cp;
    int len = utf8_decode((const unsigned char *)p->z + i, (size_t)(p->n - i), &cp);
    if (len == 0) return 0;
    /* Unicode Zs plus the line and paragraph separators. */
    if (cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
        cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000) {
        return len;
    }
    return 0;
}

static void skip_space(MatchParser *p) {
    int k;
    while (p->i < p->n && (k = space_len(p, p->i)) > 0)
        p->i += k;
}

/* Bytes that always end a word (besides whitespace). */
static int ends_word(char c) {
    return c == '(' || c == ')' || c == '|' || c == '"' || c == '~' || c == '*' || c == ':';
}

/* Bytes of a field name: ASCII letters, digits, '_', and any non-ASCII
** byte (UTF-8 names). */
static int is_name_byte(char c) {
    unsigned char u = (unsigned char)c;
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_' ||
           u >= 0x80;
}

/* Length of the (valid) UTF-8 character at z[i]. */
static int char_len(const MatchParser *p, int i) {
    uint32_t cp;
    int len = utf8_decode((const unsigned char *)p->z + i, (size_t)(p->n - i), &cp);
    return len > 0 ? len : 1;
}

/* Does z[i] start a keyword IDF boost, '^' and a number ('^2', '^1.5',
** '^.5')? */
static int boost_at(const MatchParser *p, int i) {
    if (i + 1 >= p->n || p->z[i] != '^') return 0;
    char c = p->z[i + 1];
    if (c >= '0' && c <= '9') return 1;
    return c == '.' && i + 2 < p->n && p->z[i + 2] >= '0' && p->z[i + 2] <= '9';
}

/* Does z[i] start the upper-case keyword zKw standing alone (followed by
** the end, whitespace or a byte that ends a word)? With bSlash, zKw must
** be followed by '/' and a digit instead (NEAR/3): *pnArg gets the number
** (capped just past FTS_MATCH_MAX_SLOP). Returns the bytes taken, or 0. */
static int keyword_at(const MatchParser *p, int i, const char *zKw, int bSlash, int *pnArg) {
    /* Every keyword is upper case: most words are ruled out by their first
    ** byte, before the length and comparison. */
    if (i >= p->n || p->z[i] != zKw[0]) return 0;
    int n = (int)strlen(zKw);
    if (p->n - i < n || memcmp(p->z + i, zKw, (size_t)n) != 0) return 0;
    if (i > 0 && !(space_len(p, i - 1) > 0 || ends_word(p->z[i - 1]))) return 0;
    int j = i + n;
    if (bSlash) {
        if (j + 1 >= p->n || p->z[j] != '/' || p->z[j + 1] < '0' || p->z[j + 1] > '9') return 0;
        long v = 0;
        for (j++; j < p->n && p->z[j] >= '0' && p->z[j] <= '9'; j++) {
            if (v <= FTS_MATCH_MAX_SLOP) v = v * 10 + (p->z[j] - '0');
        }
        if (pnArg) *pnArg = (int)v;
    }
    if (j < p->n && !(space_len(p, j) > 0 || ends_word(p->z[j]))) return 0;
    return j - i;
}

/* Is z[i] a binary operator keyword: MAYBE, NEAR/N, NOTNEAR/N, SENTENCE or
** PARAGRAPH? */
static int operator_keyword_at(const MatchParser *p, int i) {
    return keyword_at(p, i, "MAYBE", 0, NULL) || keyword_at(p, i, "NEAR", 1, NULL) ||
           keyword_at(p, i, "NOTNEAR", 1, NULL) || keyword_at(p, i, "SENTENCE", 0, NULL) ||
           keyword_at(p, i, "PARAGRAPH", 0, NULL);
}

/* Index of the field named z[0..n) (ASCII case-insensitive), or -1. */
static int field_lookup(const MatchParser *p, const char *z, int n) {
    if (!p->azField) return -1;
    for (int i = 0; i < p->nField; i++) {
        const char *zF = p->azField[i];
        if (zF && (int)strlen(zF) == n && strncasecmp(zF, z, (size_t)n) == 0) return i;
    }
    return -1;
}

static void fieldset_add(FtsFieldSet *s, int i) {
    s->a[i >> 6] |= (uint64_t)1 << (i & 63);
}

/* ------------------------------------------------------------------ */
/* Tree building                                                       */

static FtsNode *node_new(MatchParser *p, FtsNodeKind kind, int pos, int end) {
    FtsNode *x = arena_zalloc(p->a, sizeof(FtsNode));
    if (!x) return NULL;
    x->kind = kind;
    x->pos = pos;
    x->len = end - pos;
    return x;
}

static int list_push(MatchParser *p, NodeList *l, FtsNode *x) {
    FtsNode **a = arena_grow(p->a, l->a, l->n, &l->cap, sizeof(FtsNode *), 4);
    if (!a) return nomem(p);
    l->a = a;
    l->a[l->n++] = x;
    return LP_OK;
}

/* Appends x to a list of `kind` (AND or OR), taking in the children of an
** x of the same kind, so nested ANDs and ORs come out flat. */
static int list_add(MatchParser *p, NodeList *l, FtsNodeKind kind, FtsNode *x) {
    /* a chain's choices stay one OR: planning it leaves out the choices
    ** whose listed alternative is only stop words (bChoices) */
    if (x->kind != kind || x->pSpan || x->bChoices) return list_push(p, l, x);
    for (int k = 0; k < x->nChild; k++) {
        int rc = list_push(p, l, x->aChild[k]);
        if (rc) return rc;
    }
    return LP_OK;
}

/* The node for a non-empty list: its only element, or an AND/OR over all. */
static int list_finish(MatchParser *p, NodeList *l, FtsNodeKind kind, int pos, int end,
                       FtsNode **pp) {
    if (l->n == 1) {
        *pp = l->a[0];
        return LP_OK;
    }
    FtsNode *x = node_new(p, kind, pos, end);
    if (!x) return nomem(p);
    x->aChild = l->a;
    x->nChild = l->n;
    *pp = x;
    return LP_OK;
}

/* True for a node that only excludes: NOT, or an AND of nothing but NOTs
** (ANDs are flat, so one level suffices). Such a node is only valid
** directly inside an AND with something positive. */
static int is_negative(const FtsNode *x) {
    if (x->kind == FTSN_NOT) return 1;
    if (x->kind != FTSN_AND) return 0;
    for (int k = 0; k < x->nChild; k++) {
        if (x->aChild[k]->kind != FTSN_NOT) return 0;
    }
    return 1;
}

int fts_match_is_negative(const FtsNode *root) {
    return root && is_negative(root);
}

/* ------------------------------------------------------------------ */
/* Parsing                                                             */

static int parse_body(MatchParser *p, Scope scope, int bGroup, FtsNode **pp);

/* After an item of a "(a, b)" list of zWhat names, spaces skipped: 1 at a
** ',' (read: another item follows), 0 at a ')' (read: the list ends), -1
** with a syntax error otherwise. */
static int list_sep(MatchParser *p, const char *zWhat) {
    while (p->i < p->n && (p->z[p->i] == ' ' || p->z[p->i] == '\t')) p->i++;
    if (p->i < p->n && (p->z[p->i] == ',' || p->z[p->i] == ')')) return p->z[p->i++] == ',';
    syntax_error(p, p->i, "expected ',' or ')' in the %s list", zWhat);
    return -1;
}

/* '@name', '@(a,b)' or '@*' at the cursor: sets *pScope. */
static int parse_field_op(MatchParser *p, Scope *pScope) {
    int iAt = p->i++;
    if (p->i >= p->n) return syntax_error(p, p->n, "expected a field name, '(' or '*' after '@'");
    char c = p->z[p->i];
    if (c == '*') {
        p->i++;
        pScope->fields = p->all;
        pScope->nPosLimit = 0;
        pScope->pZones = NULL;
        pScope->bMissed = 0;
        return LP_OK;
    }
    if (c == '@') {
        return syntax_error(p, iAt, "'@@relaxed' is the only query option, and it must come "
                                    "first in the query");
    }
    int bExcept = c == '!';
    if (bExcept) {
        if (++p->i >= p->n) return syntax_error(p, p->n, "expected a field name or '(' after '@!'");
        c = p->z[p->i];
    }
    FtsFieldSet s;
    memset(&s, 0, sizeof(s));
    int bList = c == '(';
    if (!bList && !is_name_byte(c))
        return syntax_error(p, iAt, "expected a field name, '(' or '*' after '@'");
    if (bList) p->i++;
    for (;;) {
        if (bList) {
            while (p->i < p->n && (p->z[p->i] == ' ' || p->z[p->i] == '\t'))
                p->i++;
        }
        int iName = p->i;
        while (p->i < p->n && is_name_byte(p->z[p->i]))
            p->i++;
        int nName = p->i - iName;
        if (nName == 0) return syntax_error(p, iName, "expected a field name");
        int iField = field_lookup(p, p->z + iName, nName);
        if (iField < 0 && p->bRelaxed) {
            /* skipped: the field is not in this table */
        } else if (iField < 0) {
            lp_err_setpos(p->err, LP_BADINPUT, iName, "MATCH: unknown field '%.*s%s' at offset %d",
                          (int)utf8_floor(p->z + iName,
                                          nName < FIELD_NAME_MAX ? (size_t)nName : FIELD_NAME_MAX),
                          p->z + iName, nName > FIELD_NAME_MAX ? "..." : "", iName);
            if (p->err) p->err->detail = FTS_MATCH_ER_PARSE;
            return LP_BADINPUT;
        } else {
            fieldset_add(&s, iField);
        }
        if (!bList) break;
        int r = list_sep(p, "field");
        if (r < 0) return LP_BADINPUT;
        if (r == 0) break;
    }
    /* '[N]', after optional spaces: only the first N positions of each
    ** field count (Sphinx's field position limit). */
    uint32_t nLimit = 0;
    int iLimit = p->i;
    while (iLimit < p->n && (p->z[iLimit] == ' ' || p->z[iLimit] == '\t'))
        iLimit++;
    if (iLimit < p->n && p->z[iLimit] == '[') {
        p->i = iLimit + 1;
        skip_space(p);
        int iNum = p->i;
        uint64_t v = 0;
        while (p->i < p->n && p->z[p->i] >= '0' && p->z[p->i] <= '9') {
            if (v <= FTS_MATCH_MAX_POS_LIMIT) v = v * 10 + (uint64_t)(p->z[p->i] - '0');
            p->i++;
        }
        if (p->i == iNum || v == 0 || v > FTS_MATCH_MAX_POS_LIMIT) {
            return syntax_error(p, iNum, "a field position limit is a number of positions from 1 "
                                         "to %d ('@title[50]')", FTS_MATCH_MAX_POS_LIMIT);
        }
        skip_space(p);
        if (p->i >= p->n || p->z[p->i] != ']') {
            return syntax_error(p, p->i, "expected ']' after the field position limit");
        }
        p->i++;
        nLimit = (uint32_t)v;
    }
    if (bExcept) {
        FtsFieldSet t = p->all;
        for (int k = 0; k < 4; k++) t.a[k] &= ~s.a[k];
        s = t;
    }
    /* Under @@relaxed, a list of only unknown names leaves the scope's
    ** words out of the query (Sphinx's and Manticore's parsers delete the
    ** nodes without fields); '@!missing' is every field. */
    int bMissed = p->bRelaxed && !bExcept;
    for (int k = 0; k < 4; k++) bMissed &= s.a[k] == 0;
    pScope->fields = s;
    pScope->nPosLimit = nLimit;
    pScope->pZones = NULL;
    pScope->bMissed = bMissed;
    return LP_OK;
}

/* Is "ZONE:" (1) or "ZONESPAN:" (2) at byte i, and not a Lucene field
** scope (a field named so)? 0: neither. */
static int zone_op_at(const MatchParser *p, int i) {
    for (int k = 2; k >= 1; k--) {
        const char *zKw = k == 2 ? "ZONESPAN" : "ZONE";
        int n = (int)strlen(zKw);
        if (p->n - i > n && memcmp(p->z + i, zKw, (size_t)n) == 0 && p->z[i + n] == ':' &&
            field_lookup(p, zKw, n) < 0) {
            return k;
        }
    }
    return 0;
}

/* 'ZONE:' then a zone name or '(' names ')' at the cursor: sets *pScope's
** zones (its fields stay). */
static int parse_zone_op(MatchParser *p, Scope *pScope) {
    int iOp = p->i, bSpan = zone_op_at(p, p->i) == 2;
    p->i += bSpan ? 9 : 5;
    skip_space(p);
    int bList = p->i < p->n && p->z[p->i] == '(';
    if (bList) p->i++;
    NodeList l = {0}; /* the names, as nodes' text (a growable list) */
    for (;;) {
        if (bList) skip_space(p);
        int iName = p->i;
        while (p->i < p->n && is_name_byte(p->z[p->i])) p->i++;
        int nName = p->i - iName;
        if (nName == 0) return syntax_error(p, iName, "expected a zone name (an HTML element such as h3)");
        if (nName > FTS_MATCH_MAX_ZONE_NAME) {
            return syntax_error(p, iName, "a zone name is at most %d bytes", FTS_MATCH_MAX_ZONE_NAME);
        }
        FtsNode *x = node_new(p, FTSN_TERM, iName, p->i);
        char *z = arena_alloc(p->a, (size_t)nName + 1);
        if (!x || !z) return nomem(p);
        for (int k = 0; k < nName; k++) {
            char c = p->z[iName + k];
            z[k] = (char)(c >= 'A' && c <= 'Z' ? c | 0x20 : c);
        }
        z[nName] = 0;
        x->z = z;
        x->n = nName;
        int rc = list_add(p, &l, FTSN_OR, x);
        if (rc) return rc;
        if (!bList) break;
        int r = list_sep(p, "zone");
        if (r < 0) return LP_BADINPUT;
        if (r == 0) break;
    }
    FtsZones *zs = arena_zalloc(p->a, sizeof(*zs));
    const char **az = arena_alloc(p->a, sizeof(char *) * (size_t)l.n);
    if (!zs || !az) return nomem(p);
    for (int k = 0; k < l.n; k++) az[k] = l.a[k]->z;
    zs->pos = iOp;
    zs->len = p->i - iOp;
    zs->bSpan = bSpan;
    zs->nName = l.n;
    zs->azName = az;
    pScope->pZones = zs;
    return LP_OK;
}

/* Reads a run of word bytes at the cursor into an unescaped, NUL-terminated
** arena copy. The cursor ends on the byte that ended the word. */
static int read_word(MatchParser *p, char **pz, int *pn) {
    int iStart = p->i, nOut = 0;
    /* First pass: find the end and the unescaped length. */
    int i = p->i;
    while (i < p->n) {
        char c = p->z[i];
        /* ASCII letters and digits never end a word nor start an operator
        ** inside one: most of a query's bytes are taken here. */
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            i++;
            nOut++;
            continue;
        }
        if (c == '\\') {
            if (i + 1 >= p->n) return syntax_error(p, p->n, "expected a character after '\\'");
            int k = char_len(p, i + 1);
            i += 1 + k;
            nOut += k;
            continue;
        }
        if (ends_word(c) || space_len(p, i) > 0) break;
        if (c == '<' && i + 1 < p->n && p->z[i + 1] == '<') break; /* strict order */
        if (c == '$' && i > iStart &&
            (i + 1 == p->n || ends_word(p->z[i + 1]) || space_len(p, i + 1) > 0 ||
             boost_at(p, i + 1))) {
            break; /* field end */
        }
        if (i > iStart && boost_at(p, i)) break; /* word^1.5 */
        i++;
        nOut++;
    }
    char *z = arena_alloc(p->a, (size_t)nOut + 1);
    if (!z) return nomem(p);
    int o = 0;
    p->nWordWild = p->nWordLit = 0;
    for (int j = iStart; j < i; j++) {
        int bEsc = p->z[j] == '\\';
        j += bEsc; /* the escaped character's bytes follow */
        char c = p->z[j];
        int bWild = p->bInlineWild && (c == '?' || c == '%');
        /* '\\=' separates words as '=' does, without making the next
        ** one an exact form; with inline wildcards, '\\?' and '\\%' are
        ** separators too */
        z[o++] = bEsc && (c == '=' || bWild) ? ' ' : c;
        p->nWordWild += bWild && !bEsc;
        p->nWordLit += !bWild && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                  (c >= '0' && c <= '9') || (unsigned char)c >= 0x80);
    }
    z[o] = 0;
    p->i = i;
    *pz = z;
    *pn = nOut;
    return LP_OK;
}

/* A number at the cursor: digits, then optionally '.' and digits (the
** integer part stops growing once past cap, so it cannot overflow).
** *pbDot: a '.' was read. Returns 0, or -1 for a '.' with no digit after
** it. */
static int read_number(MatchParser *p, double cap, double *pv, int *pbDot) {
    double v = 0, scale = 0.1;
    *pbDot = 0;
    while (p->i < p->n && p->z[p->i] >= '0' && p->z[p->i] <= '9') {
        if (v <= cap) v = v * 10 + (p->z[p->i] - '0');
        p->i++;
    }
    if (p->i < p->n && p->z[p->i] == '.') {
        *pbDot = 1;
        p->i++;
        if (p->i >= p->n || p->z[p->i] < '0' || p->z[p->i] > '9') return -1;
        while (p->i < p->n && p->z[p->i] >= '0' && p->z[p->i] <= '9') {
            v += (p->z[p->i++] - '0') * scale;
            scale /= 10;
        }
    }
    *pv = v;
    return 0;
}

/* The '^N' of a keyword IDF boost at the cursor (boost_at holds): digits,
** optionally '.' and digits, above 0 and at most FTS_MATCH_MAX_BOOST,
** followed by the end, whitespace or a byte that ends a word. */
static int parse_boost(MatchParser *p, double *pf) {
    int iCaret = p->i++, bDot;
    double v;
    if (read_number(p, FTS_MATCH_MAX_BOOST, &v, &bDot)) {
        return syntax_error(p, iCaret, "expected digits after the '.' of a boost (word^1.5)");
    }
    if (p->i < p->n && !(space_len(p, p->i) > 0 || ends_word(p->z[p->i]) ||
                         (p->z[p->i] == '<' && p->i + 1 < p->n && p->z[p->i + 1] == '<'))) {
        return syntax_error(p, p->i, "expected a space or an operator after the boost '%.*s'",
                            p->i - iCaret, p->z + iCaret);
    }
    if (!(v > 0) || v > FTS_MATCH_MAX_BOOST) {
        return syntax_error(p, iCaret + 1, "a boost must be above 0 and at most %d",
                            FTS_MATCH_MAX_BOOST);
    }
    *pf = v;
    return LP_OK;
}

/* '^N' right after a phrase, group or prefix: an error that says what a
** boost applies to. LP_OK when there is none. */
static int refuse_boost(MatchParser *p, const char *zWhat) {
    if (!boost_at(p, p->i)) return LP_OK;
    return syntax_error(p, p->i, "a boost (^N) applies to a word (word^1.5), not %s", zWhat);
}

/* Can byte c be part of a word (an ASCII letter or digit, or a byte of a
** multi-byte character)? */
static int is_word_byte(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (unsigned char)c >= 0x80;
}

/* The '*'s of a phrase's raw text z[i0..i1): each must end a word (a
** prefix: "hello wor*", in any phrase) or stand alone (a word position
** that any word fills: "a * b", only in an exact phrase: bPositional).
** LP_OK or a syntax error at the star. */
static int check_phrase_stars(MatchParser *p, int i0, int i1, int bPositional) {
    for (int j = i0; j < i1; j++) {
        if (p->z[j] == '\\') {
            j += char_len(p, j + 1); /* an escaped '*' is a literal: a separator */
            continue;
        }
        if (p->z[j] != '*') continue;
        /* after whitespace or a star (escaped or not: both separate), or
        ** first (after the '^' that anchors the phrase) */
        char c0 = j > i0 ? p->z[j - 1] : ' ';
        int bAlone = (c0 == ' ' || c0 == '\t' || c0 == '\n' || c0 == '\r' || c0 == '*' ||
                      (c0 == '^' && j - 1 == i0)) &&
                     (j + 1 >= i1 || space_len(p, j + 1) > 0 || p->z[j + 1] == '*' ||
                      (p->z[j + 1] == '$' && j + 2 >= i1));
        /* right after a word, before anything that is not a word: a prefix */
        if (j > i0 && is_word_byte(c0) && (j + 1 >= i1 || !is_word_byte(p->z[j + 1]))) {
            if (j + 1 < i1 && p->z[j + 1] == '*') {
                return syntax_error(p, j, "a prefix inside a phrase ends in one '*' (\"hello wor*\")");
            }
            continue;
        }
        if (!bAlone) continue; /* in a wildcard word ("*ak", "ka*ak"): the planner reads it */
        if (!bPositional) {
            return syntax_error(p, j, "'*' stands for one word of an exact phrase; a proximity "
                                      "(~N) or quorum (/N) has no word order for it to keep");
        }
    }
    return LP_OK;
}

/* The '/N' or '/0.5' of a quorum at the cursor (on the '/'). */
static int parse_quorum(MatchParser *p, FtsNode *x) {
    int iSlash = p->i++;
    int iNum = p->i, bDot;
    double v;
    if (read_number(p, FTS_MATCH_MAX_QUORUM, &v, &bDot)) {
        return syntax_error(p, iSlash, "expected digits after the '.' of a quorum fraction");
    }
    if (bDot) {
        /* a fraction of the words: digits '.' digits, at most 1 */
        if (v <= 0 || v > 1) {
            return syntax_error(p, iNum, "a quorum fraction must be above 0 and at most 1.0");
        }
        x->fQuorum = v;
        return LP_OK;
    }
    if (v < 1) return syntax_error(p, iNum, "a quorum threshold must be at least 1");
    if (v > FTS_MATCH_MAX_QUORUM) {
        return syntax_error(p, iNum, "a quorum threshold must be at most %d", FTS_MATCH_MAX_QUORUM);
    }
    x->nQuorum = (int)v;
    return LP_OK;
}

/* The unescaped copy of phrase text zRaw[0..nRaw) (nOut bytes once
** unescaped), in the arena; NULL when out of memory. As in read_word;
** '\\*' is a literal star, which separates words (a star standing alone
** is a word position). */
/* Is the '^' or '$' at zRaw[j] an anchor on a word of a phrase: a '^'
** right before something that is not a blank, a '$' right after it? */
static int phrase_anchor_at(const char *zRaw, int nRaw, int j) {
    int k = zRaw[j] == '^' ? j + 1 : j - 1;
    if (k < 0 || k >= nRaw) return 0;
    char c = zRaw[k];
    return !(c == ' ' || (c >= '\t' && c <= '\r') || c == '^' || c == '$');
}

/* zRaw[0..nRaw) with its escapes undone, nOut bytes, in the arena. The
** anchors on its words (phrase_anchor_at) become blanks, and *paMark
** (NULL when there is none) tells where: FtsNode.aMark. */
static char *phrase_unescape(MatchParser *p, const char *zRaw, int nRaw, int nOut, uint8_t **paMark) {
    char *z = arena_alloc(p->a, (size_t)nOut + 1);
    *paMark = NULL;
    if (!z) return NULL;
    int o = 0;
    for (int j = 0; j < nRaw && o < nOut; j++) {
        int bEsc = zRaw[j] == '\\';
        j += bEsc;
        char c = zRaw[j];
        if (!bEsc && (c == '^' || c == '$') && phrase_anchor_at(zRaw, nRaw, j)) {
            if (!*paMark && !(*paMark = arena_zalloc(p->a, (size_t)nOut + 1))) return NULL;
            (*paMark)[o] = (uint8_t)c;
            c = ' ';
        }
        z[o++] = bEsc && (c == '=' || c == '*') ? ' ' : c;
    }
    z[o] = 0;
    return z;
}

/* ---- a phrase's alternatives: "(a | b) c" ----
** As in Manticore, a group in a phrase whose parts '|' separates stands
** for each part in turn: "(a | b) c" is the phrases "a c" and "b c", and a
** part may be several words or hold groups of its own ("((a b) | c) d").
** A group without '|' only groups; a '(' or ')' that pairs with nothing,
** and a '|' outside a group, stay plain text (separators). The phrases are
** built as raw text (escapes kept) and unescaped at the end. */

/* Raw texts under construction, in the arena; each grows by doubling, so
** appending to them costs what it copies. */
typedef struct RawText {
    char *z;
    int n, cap;
} RawText;

typedef struct RawList {
    RawText *a;
    int n;
} RawList;

typedef struct AltCtx {
    MatchParser *p;
    const int *aClose; /* per raw offset from r0: the ')' pairing a '(' there, else -1 */
    int r0;
    int iErr;          /* where an error points */
} AltCtx;

static int rawlist_one(MatchParser *p, RawList *l) {
    if (!(l->a = arena_zalloc(p->a, sizeof(RawText)))) return nomem(p);
    l->n = 1;
    return LP_OK;
}

/* Appends z[0..n) to t. */
static int rawtext_append(MatchParser *p, RawText *t, const char *z, int n) {
    if (t->n + n + 1 > t->cap) {
        int cap = (t->n + n + 1) * 2;
        char *a = arena_alloc(p->a, (size_t)cap);
        if (!a) return nomem(p);
        if (t->n) memcpy(a, t->z, (size_t)t->n);
        t->z = a;
        t->cap = cap;
    }
    memcpy(t->z + t->n, z, (size_t)n);
    t->n += n;
    t->z[t->n] = 0;
    return LP_OK;
}

/* Appends raw bytes z[0..n) to every text of l. */
static int rawlist_append(MatchParser *p, RawList *l, const char *z, int n) {
    for (int i = 0; i < l->n; i++) {
        int rc = rawtext_append(p, &l->a[i], z, n);
        if (rc) return rc;
    }
    return LP_OK;
}

/* l, each text followed by each of b's, with a space either side (the
** group's parentheses separate words). */
static int rawlist_product(AltCtx *c, RawList *l, const RawList *b) {
    MatchParser *p = c->p;
    int64_t n = (int64_t)l->n * b->n;
    if (n > FTS_MATCH_MAX_PHRASES) {
        return syntax_error(p, c->iErr, "a phrase's alternatives make more than %d phrases",
                            FTS_MATCH_MAX_PHRASES);
    }
    RawText *a = l->a;
    if (b->n > 1) { /* at most log2(FTS_MATCH_MAX_PHRASES) times a phrase */
        if (!(a = arena_zalloc(p->a, sizeof(RawText) * (size_t)n))) return nomem(p);
        for (int i = 0, k = 0; i < l->n; i++) {
            for (int j = 0; j < b->n; j++, k++) {
                int rc = rawtext_append(p, &a[k], l->a[i].z, l->a[i].n);
                if (rc) return rc;
            }
        }
    }
    for (int k = 0; k < n; k++) {
        const RawText *t = &b->a[k % b->n];
        int rc;
        if ((rc = rawtext_append(p, &a[k], " ", 1)) || (rc = rawtext_append(p, &a[k], t->z, t->n)) ||
            (rc = rawtext_append(p, &a[k], " ", 1))) {
            return rc;
        }
    }
    l->a = a;
    l->n = (int)n;
    return LP_OK;
}

static int alt_seq(AltCtx *c, int i, int end, int depth, RawList *out);

/* The texts a group (its content raw[i..end)) stands for: each part
** between top-level '|'s in turn. */
static int alt_group(AltCtx *c, int i, int end, int depth, RawList *out) {
    MatchParser *p = c->p;
    RawList all = {0};
    int iPart = i;
    for (int j = i; j <= end; j++) {
        if (j < end && p->z[j] == '\\') {
            j += char_len(p, j + 1);
            continue;
        }
        if (j < end && p->z[j] == '(' && c->aClose[j - c->r0] >= 0) {
            j = c->aClose[j - c->r0];
            continue;
        }
        if (j < end && p->z[j] != '|') continue;
        RawList part = {0};
        int rc = alt_seq(c, iPart, j, depth, &part);
        if (rc) return rc;
        if (all.n + part.n > FTS_MATCH_MAX_PHRASES) {
            return syntax_error(p, c->iErr, "a phrase's alternatives make more than %d phrases",
                                FTS_MATCH_MAX_PHRASES);
        }
        RawText *a = part.a;
        if (all.n) {
            if (!(a = arena_alloc(p->a, sizeof(RawText) * (size_t)(all.n + part.n)))) return nomem(p);
            memcpy(a, all.a, sizeof(RawText) * (size_t)all.n);
            memcpy(a + all.n, part.a, sizeof(RawText) * (size_t)part.n);
        }
        all.a = a;
        all.n += part.n;
        iPart = j + 1;
    }
    *out = all;
    return LP_OK;
}

/* The texts raw[i..end) stands for. */
static int alt_seq(AltCtx *c, int i, int end, int depth, RawList *out) {
    MatchParser *p = c->p;
    int rc = rawlist_one(p, out);
    int iRun = i; /* plain bytes since here are yet to be appended */
    for (int j = i; j < end && rc == LP_OK; j++) {
        if (p->z[j] == '\\') {
            j += char_len(p, j + 1);
            continue;
        }
        int k = p->z[j] == '(' ? c->aClose[j - c->r0] : -1;
        if (k < 0) continue;
        if (depth >= FTS_MATCH_MAX_DEPTH) {
            return syntax_error(p, j, "groups nested deeper than %d levels", FTS_MATCH_MAX_DEPTH);
        }
        RawList g = {0};
        if ((rc = rawlist_append(p, out, p->z + iRun, j - iRun)) != LP_OK ||
            (rc = alt_group(c, j + 1, k, depth + 1, &g)) != LP_OK) {
            return rc;
        }
        rc = rawlist_product(c, out, &g);
        j = k;
        iRun = k + 1;
    }
    return rc ? rc : rawlist_append(p, out, p->z + iRun, end - iRun);
}

/* Quorum x's OR groups, as Manticore has them ("happy (sad | angry)
** man"/2: one word of a group counts, once): the raw text raw[r0..r1), its
** parentheses paired in aClose (-1: paired with nothing). Each group with
** a '|' is marked in x->aMark at its '(', its '|'s and its ')' (the
** planner makes it one word of the count, an OR of its parts); a group
** without one only groups, as in a phrase. A '|' outside a group, or a
** group with a '|' inside another, is an error. */
static int quorum_groups(MatchParser *p, FtsNode *x, int r0, int r1, const int *aClose) {
    int iOpen = -1, iClose = -1; /* the group with a '|' the cursor is in */
    uint8_t *aMark = (uint8_t *)x->aMark; /* the parser's own, in its arena */
    for (int j = r0, o = 0; j < r1; j++, o++) {
        if (p->z[j] == '\\') {
            int k = char_len(p, j + 1);
            j += k;
            o += k - 1;
            continue;
        }
        char c = p->z[j];
        int mark = 0;
        if (c == '(' && aClose[j - r0] >= 0) {
            int bBar = 0, k = aClose[j - r0];
            for (int m = j + 1; m < k && !bBar; m++) {
                if (p->z[m] == '\\') m += char_len(p, m + 1);
                else if (p->z[m] == '(' && aClose[m - r0] >= 0) m = aClose[m - r0]; /* its own */
                else bBar = p->z[m] == '|';
            }
            if (!bBar) continue;
            if (iOpen >= 0) {
                return syntax_error(p, j, "a quorum's OR group ('(a | b)') cannot hold another one");
            }
            iOpen = j;
            iClose = k;
            mark = '(';
        } else if (c == ')' && j == iClose) {
            iOpen = iClose = -1;
            mark = ')';
        } else if (c == '|') {
            if (iOpen < 0) {
                return syntax_error(p, j, "'|' in a quorum separates the words of a group in parentheses: "
                                          "\"happy (sad | angry) man\"/2");
            }
            mark = '|';
        }
        if (!mark) continue;
        if (!aMark && !(aMark = arena_zalloc(p->a, (size_t)x->n + 1))) return nomem(p);
        aMark[o] = (uint8_t)mark;
    }
    x->aMark = aMark;
    return LP_OK;
}

/* x, the phrase whose words are raw[r0..r1) (anchors left out), as the
** OR of the phrases its alternatives make, into *pp; x itself when it has
** none. */
static int phrase_alternatives(MatchParser *p, FtsNode *x, int r0, int r1, FtsNode **pp) {
    *pp = x;
    if (!memchr(p->z + r0, '|', (size_t)(r1 - r0))) return LP_OK;
    /* Pair the parentheses (escapes skipped), in one pass. */
    int *aClose = arena_alloc(p->a, sizeof(int) * (size_t)(r1 - r0 + 1));
    int *aStack = arena_alloc(p->a, sizeof(int) * (size_t)(r1 - r0 + 1));
    if (!aClose || !aStack) return nomem(p);
    int nStack = 0;
    for (int j = r0; j < r1; j++) {
        aClose[j - r0] = -1;
        if (p->z[j] == '\\') {
            for (int k = 1; k <= char_len(p, j + 1) && j + k < r1; k++) aClose[j + k - r0] = -1;
            j += char_len(p, j + 1);
        } else if (p->z[j] == '(') {
            aStack[nStack++] = j;
        } else if (p->z[j] == ')' && nStack > 0) {
            aClose[aStack[--nStack] - r0] = j;
        }
    }
    if (x->kind == FTSN_QUORUM) return quorum_groups(p, x, r0, r1, aClose);
    AltCtx c = {p, aClose, r0, x->pos};
    RawList l;
    int rc = alt_seq(&c, r0, r1, 0, &l);
    if (rc || l.n < 2) return rc;
    FtsNode **a = arena_alloc(p->a, sizeof(FtsNode *) * (size_t)l.n);
    if (!a) return nomem(p);
    int n = 0;
    for (int i = 0; i < l.n; i++) {
        uint8_t *aMark;
        char *z = phrase_unescape(p, l.a[i].z ? l.a[i].z : "", l.a[i].n, l.a[i].n, &aMark);
        if (!z) return nomem(p);
        /* runs of ASCII whitespace as one space, none at either end (the
        ** groups' parentheses left spaces); an anchor's blank stays */
        int m = 0, bDup = 0;
        for (int j = 0; z[j]; j++) {
            int bSpace = z[j] == ' ' || (z[j] >= '\t' && z[j] <= '\r');
            int bMark = aMark && aMark[j];
            if (!bSpace || bMark || (m > 0 && (z[m - 1] != ' ' || (aMark && aMark[m - 1])))) {
                if (aMark) aMark[m] = aMark[j];
                z[m++] = z[j];
            }
        }
        while (m > 0 && z[m - 1] == ' ' && !(aMark && aMark[m - 1])) m--;
        z[m] = 0;
        for (int k = 0; k < n && !bDup; k++) {
            bDup = a[k]->n == m && memcmp(a[k]->z, z, (size_t)m) == 0 &&
                   (a[k]->aMark ? aMark && !memcmp(a[k]->aMark, aMark, (size_t)m) : !aMark);
        }
        if (bDup) continue; /* "(a | a) b" is one phrase */
        FtsNode *y = node_new(p, FTSN_PHRASE, x->pos, x->pos + x->len);
        if (!y) return nomem(p);
        *y = *x;
        y->z = z;
        y->n = m;
        y->aMark = aMark;
        a[n++] = y;
    }
    if (n == 1) {
        *pp = a[0];
        return LP_OK;
    }
    FtsNode *o = node_new(p, FTSN_OR, x->pos, x->pos + x->len);
    if (!o) return nomem(p);
    o->aChild = a;
    o->nChild = n;
    *pp = o;
    return LP_OK;
}

/* Leaf x's scope (pScope's fields, position and zone limits), text
** z[0..n), anchor and '+'. */
static void leaf_set(FtsNode *x, const Scope *pScope, int bReq, int anchor, char *z, int n) {
    x->fields = pScope->fields;
    x->bMissed = pScope->bMissed;
    x->nPosLimit = pScope->nPosLimit;
    x->pZones = pScope->pZones;
    x->z = z;
    x->n = n;
    x->anchor = anchor;
    x->bRequired = bReq;
}

/* '"…"' with an optional '~N' or '/N' at the cursor. */
static int parse_phrase(MatchParser *p, const Scope *pScope, int bReq, FtsNode **pp) {
    int iStart = p->i++;
    int i = p->i, nOut = 0;
    while (i < p->n && p->z[i] != '"') {
        if (p->z[i] == '\\' && i + 1 < p->n) {
            int k = char_len(p, i + 1);
            i += 1 + k;
            nOut += k;
        } else {
            i++;
            nOut++;
        }
    }
    if (i >= p->n) return syntax_error(p, p->n, "expected closing '\"'");
    uint8_t *aMark;
    char *z = phrase_unescape(p, p->z + p->i, i - p->i, nOut, &aMark);
    if (!z) return nomem(p);
    p->i = i + 1;
    /* An exact phrase's '^' first and '$' last (unescaped) anchor it, not
    ** its first and last word (the same but for the stars and stop words
    ** the query puts before or after them); a proximity's or quorum's
    ** anchor their words (aMark). */
    int anchor = 0;
    int r0 = iStart + 1, r1 = i; /* the raw text of the words */
    if (!(p->i < p->n && (p->z[p->i] == '~' || p->z[p->i] == '/'))) {
        int a0 = iStart + 1, a1 = i; /* the raw text */
        while (a0 < a1 && space_len(p, a0) > 0) a0 += space_len(p, a0);
        if (a0 < a1 && p->z[a0] == '^') anchor |= FTS_ANCHOR_START;
        while (a1 > a0 && (p->z[a1 - 1] == ' ' || p->z[a1 - 1] == '\t')) a1--;
        if (a1 > a0 && p->z[a1 - 1] == '$' && !(a1 - 2 >= a0 && p->z[a1 - 2] == '\\')) {
            anchor |= FTS_ANCHOR_END;
        }
        if (anchor & FTS_ANCHOR_START) r0 = a0 + 1;
        if (anchor & FTS_ANCHOR_END) r1 = a1 - 1;
        if (r1 < r0) r1 = r0; /* "^$" */
        /* The same characters in the unescaped copy, where only blanks are
        ** before the '^' and after the '$' too: blanked, no word's marks. */
        int aOff[2] = {anchor & FTS_ANCHOR_START ? a0 - (iStart + 1) : -1,
                       anchor & FTS_ANCHOR_END ? nOut - (i - (a1 - 1)) : -1};
        for (int k = 0; k < 2; k++) {
            if (aOff[k] < 0) continue;
            z[aOff[k]] = ' ';
            if (aMark) aMark[aOff[k]] = 0;
        }
        int bMarks = 0;
        for (int k = 0; aMark && k < nOut && !bMarks; k++) bMarks = aMark[k] != 0;
        if (!bMarks) aMark = NULL;
    }
    int nSlop = 0;
    if (p->i < p->n && p->z[p->i] == '~') {
        int iTilde = p->i++;
        if (p->i >= p->n || p->z[p->i] < '0' || p->z[p->i] > '9') {
            return syntax_error(p, iTilde, "expected a number after '~'");
        }
        long v = 0;
        while (p->i < p->n && p->z[p->i] >= '0' && p->z[p->i] <= '9') {
            v = v * 10 + (p->z[p->i++] - '0');
            if (v > FTS_MATCH_MAX_SLOP) {
                return syntax_error(p, iTilde + 1, "proximity distance larger than %d",
                                    FTS_MATCH_MAX_SLOP);
            }
        }
        nSlop = (int)v;
    }
    FtsNode *x = node_new(p, FTSN_PHRASE, iStart, p->i);
    if (!x) return nomem(p);
    if (nSlop == 0 && p->i < p->n && p->z[p->i] == '/') {
        if (p->i + 1 >= p->n || p->z[p->i + 1] < '0' || p->z[p->i + 1] > '9') {
            return syntax_error(p, p->i, "expected a number after '/' (quorum: \"a b c\"/2)");
        }
        x->kind = FTSN_QUORUM;
        int rc = parse_quorum(p, x);
        if (rc) return rc;
        x->len = p->i - iStart;
    }
    int rc = check_phrase_stars(p, iStart + 1, i, x->kind == FTSN_PHRASE && nSlop == 0);
    if (rc) return rc;
    if ((rc = refuse_boost(p, "a phrase"))) return rc;
    leaf_set(x, pScope, bReq, anchor, z, nOut);
    x->nSlop = nSlop;
    x->aMark = aMark;
    return phrase_alternatives(p, x, r0, r1, pp);
}

/* ="…": every word of the phrase or quorum x (or of each phrase its
** alternatives make) is exact. */
static void set_exact(FtsNode *x, int iEq) {
    x->bExact = 1;
    x->pos = iEq;
    x->len++;
    for (int k = 0; k < x->nChild; k++) set_exact(x->aChild[k], iEq);
}

/* A keyword operator or an operator Sphinx has and loupe refuses, where an
** operand should start: an error naming it. LP_OK when there is none. */
static int refuse_keyword(MatchParser *p) {
    int i = p->i;
    if (operator_keyword_at(p, i)) {
        return syntax_error(p, i, "%s is an operator: expected a word, phrase or '(' before it "
                                  "(write it in lower case to search the word)",
                            keyword_at(p, i, "MAYBE", 0, NULL)       ? "MAYBE"
                            : keyword_at(p, i, "NEAR", 1, NULL)     ? "NEAR/N"
                            : keyword_at(p, i, "NOTNEAR", 1, NULL)  ? "NOTNEAR/N"
                            : keyword_at(p, i, "SENTENCE", 0, NULL) ? "SENTENCE"
                                                                    : "PARAGRAPH");
    }
    return LP_OK;
}

/* Does a word start at byte i (after a wildcard's '*': "*abc", "ab*c")? */
static int word_starts_at(const MatchParser *p, int i) {
    return i < p->n && !ends_word(p->z[i]) && space_len(p, i) == 0 && p->z[i] != '$' &&
           !boost_at(p, i) && !(p->z[i] == '<' && i + 1 < p->n && p->z[i + 1] == '<');
}

/* The rest of a wildcard word (infix search, "*abc*", "ab*cd") from the
** cursor, which is at a '*' or at a word right after one: its pattern
** appended to z[0..*pn) in place of the text read so far. Each run of '*'s
** becomes one '*'; an escaped '*' is a literal, that is a separator (the
** planner then finds two words where it wants one). z has room for the
** rest of the query. */
static int read_wildcard(MatchParser *p, char *z, int *pn) {
    int o = *pn;
    for (;;) {
        if (p->i < p->n && p->z[p->i] == '*') {
            while (p->i < p->n && p->z[p->i] == '*') p->i++;
            z[o++] = '*';
            continue;
        }
        if (!word_starts_at(p, p->i)) break;
        char *w;
        int n, rc = read_word(p, &w, &n);
        if (rc) return rc;
        if (n == 0) break;
        for (int k = 0; k < n; k++) z[o++] = w[k] == '*' ? ' ' : w[k];
    }
    z[o] = 0;
    *pn = o;
    return LP_OK;
}

/* A leaf of kind (a word, a prefix, a wildcard, an anchored one's phrase)
** whose text is z[0..n), read from iStart to the cursor, in scope pScope. */
static int pattern_leaf(MatchParser *p, const Scope *pScope, int bReq, FtsNodeKind kind, int anchor, int iStart,
                        char *z, int n, FtsNode **pp) {
    FtsNode *x = node_new(p, kind, iStart, p->i);
    if (!x) return nomem(p);
    leaf_set(x, pScope, bReq, anchor, z, n);
    *pp = x;
    return LP_OK;
}

/* An anchored prefix or wildcard ("^yo*", "*rk$"), z[0..n) its text with
** its stars: the phrase of that one word, anchored, as Sphinx reads it
** (the planner expands the word where it stands). */
static int anchored_pattern(MatchParser *p, const Scope *pScope, int bReq, int anchor, int iStart, char *z, int n,
                            FtsNode **pp) {
    if (memchr(z, '?', (size_t)n) || memchr(z, '%', (size_t)n)) {
        return syntax_error(p, iStart, "'^' and '$' anchor a word, a prefix, a '*' wildcard or an exact "
                                       "phrase, not a wildcard with '?' or '%%'");
    }
    int rc = refuse_boost(p, "an anchored prefix or wildcard");
    return rc ? rc : pattern_leaf(p, pScope, bReq, FTSN_PHRASE, anchor, iStart, z, n, pp);
}

/* A wildcard word's node (FTSN_WILDCARD): z[0..n) its pattern, read from
** iStart to the cursor. */
static int wildcard_node(MatchParser *p, const Scope *pScope, int bReq, int anchor, int iStart,
                         char *z, int n, FtsNode **pp) {
    if (p->i < p->n && p->z[p->i] == '$') {
        anchor |= FTS_ANCHOR_END; /* "*rk$" */
        p->i++;
    }
    if (anchor && z[0] != '=' && strspn(z, "*?% ") != (size_t)n) {
        return anchored_pattern(p, pScope, bReq, anchor, iStart, z, n, pp);
    }
    if (z[0] == '=') {
        return syntax_error(p, iStart, "the exact form operator '=' does not apply to a "
                                       "wildcard ('=ab*c')");
    }
    if (strspn(z, "*?% ") == (size_t)n) {
        return syntax_error(p, iStart, "a wildcard needs a word beside its '*', '?' or '%%' ('*ab*', 't?st')");
    }
    int rc = refuse_boost(p, "a wildcard");
    return rc ? rc : pattern_leaf(p, pScope, bReq, FTSN_WILDCARD, 0, iStart, z, n, pp);
}

/* A word, prefix, phrase, group or `field:primary` at the cursor. */
int fts_match_is_regex(const char *z, int n) {
    return n >= 9 && memcmp(z, "REGEX(", 6) == 0 && z[n - 1] == ')' && z[n - 2] == z[6];
}

/* REGEX(/pattern/) at the cursor (anchor: a '^' before it): a wildcard
** leaf whose text is all of it (fts_match_is_regex), its pattern checked
** here so that an error points into it. */
static int parse_regex(MatchParser *p, const Scope *pScope, int bReq, int anchor, FtsNode **pp) {
    int iStart = p->i, iDelim = p->i + 6;
    if (anchor) return syntax_error(p, iStart - 1, "'^' and '$' do not apply to REGEX()");
    if (iDelim >= p->n || space_len(p, iDelim) > 0 || p->z[iDelim] == ')') {
        return syntax_error(p, iDelim, "expected a delimiter and a pattern after 'REGEX(' (REGEX(/t.?e/))");
    }
    char d = p->z[iDelim];
    int b = iDelim + 1, e = b;
    while (e + 1 < p->n && !(p->z[e] == d && p->z[e + 1] == ')')) e++;
    if (e + 1 >= p->n) return syntax_error(p, iDelim, "expected '%c)' to end REGEX(%c...", d, d);
    if (e == b) return syntax_error(p, b, "REGEX() needs a pattern between its delimiters");
    LpError re;
    lp_err_clear(&re);
    int rc = regexp_term_check(p->z + b, (size_t)(e - b), &re);
    if (rc == LP_NOMEM) return nomem(p);
    if (rc) return syntax_error(p, b + (int)re.pos, "REGEX() pattern: %s", re.zMsg);
    p->i = e + 2;
    if (p->i < p->n && p->z[p->i] == '$') return syntax_error(p, p->i, "'^' and '$' do not apply to REGEX()");
    if ((rc = refuse_boost(p, "REGEX()"))) return rc;
    char *z = arena_strndup(p->a, p->z + iStart, (size_t)(p->i - iStart));
    if (!z) return nomem(p);
    return pattern_leaf(p, pScope, bReq, FTSN_WILDCARD, 0, iStart, z, p->i - iStart, pp);
}

static int parse_primary(MatchParser *p, const Scope *pScope, int bReq, FtsNode **pp) {
    Scope lucene; /* the scope of a `field:` prefix */
    int anchor = 0;     /* a '^' read */
    for (;;) {
        if (!anchor) skip_space(p);
        if (anchor && (p->i >= p->n || space_len(p, p->i) > 0 || p->z[p->i] == '"' ||
                       p->z[p->i] == '(' || p->z[p->i] == '^')) {
            return syntax_error(p, p->i - 1, "expected a word right after '^' (inside quotes, "
                                             "\"^a b\" anchors a phrase)");
        }
        if (p->i >= p->n) return syntax_error(p, p->n, EXPECT_PRIMARY);
        char c = p->z[p->i];
        switch (c) {
        case '"':
            return parse_phrase(p, pScope, bReq, pp);
        case '^':
            anchor = FTS_ANCHOR_START;
            p->i++;
            continue;
        case '=':
            /* '=word' is the word's exact form: the '=' stays in the
            ** word's text, where the analyzer's query side reads it.
            ** ="a b" makes every word of the phrase (or quorum) exact. */
            if (p->i + 1 < p->n && p->z[p->i + 1] == '"') {
                int iEq = p->i++;
                int rc = parse_phrase(p, pScope, bReq, pp);
                if (rc) return rc;
                set_exact(*pp, iEq);
                return LP_OK;
            }
            break;
        case '<':
            if (p->i + 1 < p->n && p->z[p->i + 1] == '<') {
                return syntax_error(p, p->i, "expected a word or phrase before '<<'");
            }
            break;
        case '$':
            return syntax_error(p, p->i, "expected a word before '$' (the field end is written "
                                         "'word$')");
        case '(': {
            int iOpen = p->i;
            if (p->depth >= FTS_MATCH_MAX_DEPTH) {
                return syntax_error(p, iOpen, "groups nested deeper than %d levels",
                                    FTS_MATCH_MAX_DEPTH);
            }
            p->i++;
            p->depth++;
            int rc = parse_body(p, *pScope, 1, pp);
            if (rc) return rc;
            p->depth--;
            p->i++; /* ')' (parse_body stopped on it) */
            if ((rc = refuse_boost(p, "a group"))) return rc;
            FtsNode *x = *pp;
            if (x->kind == FTSN_AND || x->kind == FTSN_OR || x->kind == FTSN_MAYBE) {
                /* The group's own node: its text includes the parentheses
                ** (so '<<' tells "(a MAYBE b) << c" from "a MAYBE b << c"). */
                x->pos = iOpen;
                x->len = p->i - iOpen;
            }
            return LP_OK;
        }
        case '*': {
            int j = p->i;
            while (j < p->n && p->z[j] == '*') j++;
            if (!word_starts_at(p, j)) {
                return syntax_error(p, p->i, "expected a word before '*' (a prefix is written 'abc*')");
            }
            int iStart = anchor ? p->i - 1 : p->i, n = 0;
            char *z = arena_alloc(p->a, (size_t)(p->n - p->i) + 1);
            if (!z) return nomem(p);
            int rc = read_wildcard(p, z, &n);
            if (rc) return rc;
            return wildcard_node(p, pScope, bReq, anchor, iStart, z, n, pp);
        }
        case '~':
            return syntax_error(p, p->i, "'~N' must follow a phrase (\"a b\"~N)");
        case ')':
        case '|':
        case '-':
        case '!':
        case '+':
        case '@':
            return syntax_error(p, p->i, EXPECT_PRIMARY);
        default:
            break;
        }

        if (p->n - p->i > 6 && memcmp(p->z + p->i, "REGEX(", 6) == 0) return parse_regex(p, pScope, bReq, anchor, pp);
        int rc = refuse_keyword(p);
        if (rc) return rc;
        int iStart = anchor ? p->i - 1 : p->i;
        char *z = NULL;
        int n = 0;
        rc = read_word(p, &z, &n);
        if (rc) return rc;
        if (n == 0) return syntax_error(p, p->i, EXPECT_PRIMARY);
        int nWild = p->nWordWild, nLit = p->nWordLit; /* inline wildcards and the rest */
        if (p->i < p->n && p->z[p->i] == '$') {
            anchor |= FTS_ANCHOR_END;
            p->i++;
        }
        if (p->i < p->n && p->z[p->i] == ':' && !anchor) {
            int iField = field_lookup(p, z, n);
            if (iField >= 0) {
                /* Lucene's `title:x`: x (whatever it is) in title only. */
                p->i++;
                memset(&lucene, 0, sizeof(lucene));
                fieldset_add(&lucene.fields, iField);
                pScope = &lucene;
                continue;
            }
        }
        FtsNodeKind kind = FTSN_TERM;
        if (p->i < p->n && p->z[p->i] == '*') {
            int j = p->i;
            while (j < p->n && p->z[j] == '*') j++;
            if (word_starts_at(p, j)) {
                /* "ab*cd": a wildcard, not a prefix */
                char *zw = arena_alloc(p->a, (size_t)(n + p->n - p->i) + 1);
                if (!zw) return nomem(p);
                /* an escaped '*' read so far is a literal: a separator */
                for (int k = 0; k < n; k++) zw[k] = z[k] == '*' ? ' ' : z[k];
                if ((rc = read_wildcard(p, zw, &n))) return rc;
                return wildcard_node(p, pScope, bReq, anchor, iStart, zw, n, pp);
            }
            kind = FTSN_PREFIX;
            int iStar = p->i;
            while (p->i < p->n && p->z[p->i] == '*')
                p->i++;
            if (p->i < p->n && p->z[p->i] == '$' && !nWild) {
                anchor |= FTS_ANCHOR_END; /* "yor*$" */
                p->i++;
            }
            if (p->i < p->n) {
                char d = p->z[p->i];
                if ((rc = refuse_boost(p, "a prefix"))) return rc;
                if (!(space_len(p, p->i) > 0 || d == ')' || d == '(' || d == '|' || d == '"')) {
                    return syntax_error(
                        p, iStar, "'*' is only supported at the end of a word (prefix search)");
                }
            }
        }
        if (nWild && nLit) {
            /* "t?st", "c?t*": a wildcard (its pattern as written, a
            ** prefix's star after it) */
            char *zw = arena_alloc(p->a, (size_t)n + 2);
            if (!zw) return nomem(p);
            /* a '*' read so far was escaped: a literal, that is a separator */
            for (int k = 0; k < n; k++) zw[k] = z[k] == '*' ? ' ' : z[k];
            if (kind == FTSN_PREFIX) zw[n++] = '*';
            zw[n] = 0;
            return wildcard_node(p, pScope, bReq, anchor, iStart, zw, n, pp);
        }
        if (kind == FTSN_PREFIX && z[0] == '=') {
            return syntax_error(p, iStart, "the exact form operator '=' does not apply to a "
                                           "prefix ('=word*')");
        }
        if (kind == FTSN_PREFIX && anchor) {
            char *zp = arena_alloc(p->a, (size_t)n + 2);
            if (!zp) return nomem(p);
            memcpy(zp, z, (size_t)n);
            zp[n] = '*';
            zp[n + 1] = 0;
            return anchored_pattern(p, pScope, bReq, anchor, iStart, zp, n + 1, pp);
        }
        double fBoost = 0;
        if (kind == FTSN_TERM && boost_at(p, p->i) && (rc = parse_boost(p, &fBoost))) return rc;
        if ((rc = pattern_leaf(p, pScope, bReq, kind, anchor, iStart, z, n, pp))) return rc;
        (*pp)->fBoost = fBoost;
        return LP_OK;
    }
}

/* Field operators, then an optional '+', then a primary. bAfterBar: the
** operand follows '|' (where a negation is refused with a clear message). */
static int parse_operand(MatchParser *p, Scope *pScope, int bAfterBar, FtsNode **pp) {
    for (;;) {
        skip_space(p);
        int rc, kZone = zone_op_at(p, p->i);
        if (p->i < p->n && p->z[p->i] == '@') {
            rc = parse_field_op(p, pScope);
        } else if (kZone == 2) {
            return syntax_error(p, p->i, "ZONESPAN: starts an item of its group: not after '|', "
                                         "MAYBE or a chain operator (write (ZONESPAN:… a b) there)");
        } else if (kZone) {
            rc = parse_zone_op(p, pScope);
        } else {
            break;
        }
        if (rc) return rc;
    }
    int bReq = 0;
    if (p->i < p->n) {
        char c = p->z[p->i];
        if (c == '+') {
            bReq = 1;
            p->i++;
        } else if (bAfterBar && (c == '-' || c == '!')) {
            return syntax_error(
                p, p->i, "'|' cannot take a negated operand (write -(a | b) to exclude both)");
        }
    }
    return parse_primary(p, pScope, bReq, pp);
}

/* MAYBE(x, y) over the arena. */
static FtsNode *maybe_new(MatchParser *p, FtsNode *x, FtsNode *y, int pos, int end) {
    FtsNode *m = node_new(p, FTSN_MAYBE, pos, end);
    FtsNode **a = arena_alloc(p->a, sizeof(FtsNode *) * 2);
    if (!m || !a) return NULL;
    a[0] = x;
    a[1] = y;
    m->aChild = a;
    m->nChild = 2;
    return m;
}

/* [ '-' ] operand { ( '|' | 'MAYBE' ) operand }, left to right. */
static int parse_or(MatchParser *p, Scope *pScope, FtsNode **pp) {
    int iStart = p->i; /* the caller skipped whitespace */
    int bNot = 0;
    if (p->z[p->i] == '-' || p->z[p->i] == '!') {
        bNot = 1;
        p->i++;
    }
    NodeList l = {0};
    int iFirst = -1, iEnd = p->i;
    int bMaybe = 0;         /* the operand read next follows MAYBE */
    int nOperand = 0;
    for (;;) {
        skip_space(p);
        int iOp = p->i;
        if (iFirst < 0) iFirst = iOp;
        FtsNode *x = NULL;
        int rc = parse_operand(p, pScope, nOperand > 0, &x);
        if (rc) return rc;
        nOperand++;
        iEnd = p->i;
        skip_space(p);
        int bBar = p->i < p->n && p->z[p->i] == '|';
        int nMaybe = keyword_at(p, p->i, "MAYBE", 0, NULL);
        if (is_negative(x)) {
            /* Fine alone (the enclosing AND takes its children in), not as
            ** an alternative or under another negation. */
            if (nOperand > 1 || bBar || nMaybe) {
                if (bMaybe || (nMaybe && !bBar)) {
                    return syntax_error(p, iOp, "MAYBE cannot take a negated operand (write the "
                                                "exclusion on its own: a MAYBE b -c)");
                }
                return syntax_error(
                    p, iOp, "'|' cannot take a negated operand (write -(a | b) to exclude both)");
            }
            if (bNot) return syntax_error(p, iOp, "cannot negate a group of only negated terms");
        }
        if (bMaybe) {
            /* everything so far is the required side */
            FtsNode *req = NULL;
            rc = list_finish(p, &l, FTSN_OR, iFirst, iOp, &req);
            if (rc) return rc;
            FtsNode *m = maybe_new(p, req, x, iFirst, iEnd);
            if (!m) return nomem(p);
            memset(&l, 0, sizeof(l)); /* req may own the old array */
            rc = list_push(p, &l, m);
        } else {
            rc = list_add(p, &l, FTSN_OR, x);
        }
        if (rc) return rc;
        bMaybe = nMaybe > 0;
        if (bBar || nMaybe) {
            p->i += bBar ? 1 : nMaybe;
            continue;
        }
        break;
    }
    int rc = list_finish(p, &l, FTSN_OR, iFirst, iEnd, pp);
    if (rc || !bNot) return rc;
    FtsNode *x = node_new(p, FTSN_NOT, iStart, iEnd);
    if (!x) return nomem(p);
    x->aChild = arena_alloc(p->a, sizeof(FtsNode *));
    if (!x->aChild) return nomem(p);
    x->aChild[0] = *pp;
    x->nChild = 1;
    *pp = x;
    return LP_OK;
}

/* Can x be an operand of a chain (zOp names its operator)? 0, with the
** error set, if not. A word, a prefix, a wildcard or an exact phrase can
** (a word or an exact phrase anchored too: its occurrences are those at
** the field's start or end, as in Sphinx);
** so can an OR list of them (bOr; 2: x is in one), which parse_chain
** expands into one chain per choice (chain_expand). NEAR/N takes groups
** of them too, which near_take splices in before asking. */
static int check_chain_operand(MatchParser *p, const FtsNode *x, const char *zOp, int bOr) {
    if (x->fBoost) {
        syntax_error(p, x->pos, "%s joins words and exact phrases; a boost (^N) cannot apply to "
                                "them", zOp);
        return 0;
    }
    if (x->kind == FTSN_TERM || (x->kind == FTSN_PHRASE && x->nSlop == 0) || x->kind == FTSN_PREFIX ||
        x->kind == FTSN_WILDCARD) {
        return 1;
    }
    if (x->kind == FTSN_OR && bOr) {
        for (int k = 0; k < x->nChild; k++) {
            if (!check_chain_operand(p, x->aChild[k], zOp, 2)) return 0;
        }
        return 1;
    }
    int bNear = strcmp(zOp, "NEAR/N") == 0;
    char zMaybe[160];
    if (bNear) {
        snprintf(zMaybe, sizeof(zMaybe), "a MAYBE (it binds tighter: write (a NEAR/3 b) MAYBE c, or (a MAYBE "
                                         "b) NEAR/3 c)");
    } else {
        snprintf(zMaybe, sizeof(zMaybe), "a MAYBE (it binds tighter: write (a %s b) MAYBE c)", zOp);
    }
    const char *zWhat = x->kind == FTSN_OR       ? "an OR list"
                        : x->kind == FTSN_PHRASE ? "a proximity phrase"
                        : x->kind == FTSN_QUORUM ? "a quorum"
                        : x->kind == FTSN_NOT || is_negative(x) ? "a negation"
                        : p->z[x->pos] != '(' && x->kind == FTSN_MAYBE ? zMaybe
                        : x->kind == FTSN_MAYBE && bNear ? "a MAYBE with more than words in it (NEAR/N takes a "
                                                           "MAYBE's words, prefixes and wildcards)"
                        : x->kind == FTSN_MAYBE ? "a MAYBE"
                        : x->kind == FTSN_BEFORE || x->kind == FTSN_ORDER ? "a '<<' chain"
                        : x->kind == FTSN_NEAR && x->bNotNear ? "a NOTNEAR/N"
                        : x->kind == FTSN_NEAR && bNear ? "a NEAR/N chain (one in parentheses comes first: "
                                                          "(a NEAR/1 b) NEAR/3 c)"
                        : x->kind == FTSN_NEAR ? "a NEAR/N chain"
                        : x->kind == FTSN_SENTENCE ? "a SENTENCE chain"
                        : x->kind == FTSN_PARAGRAPH ? "a PARAGRAPH chain"
                        : bNear && bOr == 2 ? "a group in an OR list"
                                                : "a group";
    if (bOr) {
        syntax_error(p, x->pos, "%s joins words, prefixes, wildcards, exact phrases%s; this operand is %s", zOp,
                     bNear ? ", OR lists of them and groups of these" : " and OR lists of them", zWhat);
    } else {
        syntax_error(p, x->pos, "%s's second operand is a word, prefix, wildcard or exact phrase; this "
                                "operand is %s", zOp, zWhat);
    }
    return 0;
}

/* Is x an operand a chain plans as words (a word, an exact phrase, either
** anchored, an OR list of them), without a boost? No error is set. */
static int is_chain_operand(const FtsNode *x) {
    if (x->fBoost) return 0;
    if (x->kind == FTSN_TERM || (x->kind == FTSN_PHRASE && x->nSlop == 0)) return 1;
    if (x->kind != FTSN_OR) return 0;
    for (int k = 0; k < x->nChild; k++) {
        if (!is_chain_operand(x->aChild[k])) return 0;
    }
    return 1;
}

/* Can x be an operand of '<<'? A chain's operands can (is_chain_operand);
** so can a group (anchors, boosts and negations inside it too), a
** prefix, a wildcard, a quorum or a proximity phrase, which make the chain
** an FTSN_ORDER (*pbOrder set). An operand that is itself boosted or a
** negation cannot, nor an unbracketed MAYBE: 0, with the error set. */
static int check_order_operand(MatchParser *p, const FtsNode *x, int *pbOrder) {
    if (is_chain_operand(x)) return 1;
    const char *zWhy = x->fBoost ? "a boost (^N) cannot apply to an operand itself (it can to a word in a group)"
                       : x->kind == FTSN_NOT || is_negative(x) ? "this operand is a negation"
                       : p->z[x->pos] != '(' && x->kind == FTSN_MAYBE
                           ? "this operand is a MAYBE (it binds tighter: write (a << b) MAYBE c, or (a MAYBE b) << c)"
                           : NULL;
    if (zWhy) {
        syntax_error(p, x->pos, "'<<' orders words, phrases, prefixes, wildcards, quorums and groups; %s", zWhy);
        return 0;
    }
    *pbOrder = 1;
    return 1;
}

/* Can x be an operand of NOTNEAR/N (bFirst: its first)? 0, with the error
** set, if not. A chain's operands can (check_chain_operand; an OR list
** only as the first, which parse_chain expands into one chain per choice);
** so can a group (negations inside it too), an OR list of anything, a
** proximity phrase, a quorum, a MAYBE in parentheses and another chain,
** whose occurrences are where they match (*pbAny set: the chain becomes an
** FTSN_NEAR_ANY with bNotNear, as Manticore's NOTNEAR takes "terms,
** phrases, or groups of operators"). An operand that is itself boosted
** or a negation cannot. */
static int check_notnear_operand(MatchParser *p, const FtsNode *x, int bFirst, int *pbAny) {
    int bSimple = !x->fBoost && (x->kind == FTSN_TERM || (x->kind == FTSN_PHRASE && x->nSlop == 0) ||
                                 x->kind == FTSN_PREFIX || x->kind == FTSN_WILDCARD);
    for (int k = 0; bFirst && x->kind == FTSN_OR && k < x->nChild; k++) {
        const FtsNode *y = x->aChild[k];
        bSimple = !y->fBoost && (y->kind == FTSN_TERM || (y->kind == FTSN_PHRASE && y->nSlop == 0) ||
                                 y->kind == FTSN_PREFIX || y->kind == FTSN_WILDCARD);
        if (!bSimple) break;
    }
    if (bSimple) return 1;
    const char *zWhy = x->fBoost ? "a boost (^N) cannot apply to an operand itself (it can to a word in a group)"
                       : x->kind == FTSN_NOT || is_negative(x) ? "this operand is a negation"
                       : p->z[x->pos] != '(' && x->kind == FTSN_MAYBE
                           ? "this operand is a MAYBE (it binds tighter: write (a NOTNEAR/3 b) MAYBE c, or (a "
                             "MAYBE b) NOTNEAR/3 c)"
                           : NULL;
    if (zWhy) {
        syntax_error(p, x->pos, "NOTNEAR/N joins words, phrases, prefixes, wildcards, quorums, chains and "
                                "groups; %s", zWhy);
        return 0;
    }
    *pbAny = 1;
    return 1;
}

/* Appends the words and exact phrases x stands for as a chain operand to
** l: x itself, or the leaves of its OR list in order. */
static int chain_choices(MatchParser *p, FtsNode *x, NodeList *l) {
    if (x->kind != FTSN_OR) return list_push(p, l, x);
    for (int k = 0; k < x->nChild; k++) {
        int rc = chain_choices(p, x->aChild[k], l);
        if (rc) return rc;
    }
    return LP_OK;
}

/* Is x left out of the query under @@relaxed: a leaf in a scope of only
** unknown fields, or a group or OR list of such leaves? */
static int all_missed(const FtsNode *x) {
    if (x->nChild == 0) return x->bMissed;
    for (int k = 0; k < x->nChild; k++) {
        if (!all_missed(x->aChild[k])) return 0;
    }
    return 1;
}

/* Sets chain x's fields: those every operand aOp[0..n) may match in (the
** operands left out under @@relaxed have none and take no part). */
static void chain_fields(FtsNode *x, FtsNode *const *aOp, int n) {
    int bFirst = 1;
    memset(&x->fields, 0, sizeof(x->fields));
    for (int i = 0; i < n; i++) {
        if (all_missed(aOp[i])) continue;
        for (int w = 0; w < 4; w++) x->fields.a[w] = bFirst ? aOp[i]->fields.a[w] : x->fields.a[w] & aOp[i]->fields.a[w];
        bFirst = 0;
    }
}

/* A chain with OR lists among its operands, (a | b) << c, as the OR of one
** chain per choice of an alternative from each list: a << c | b << c. A
** document holds the first exactly when it holds one of the others, and
** each chain it holds is a clause of its own, as each phrase of a phrase's
** alternatives is. *pp is x itself when it has no OR list. */
static int chain_expand(MatchParser *p, FtsNode *x, FtsNode **pp) {
    *pp = x;
    NodeList *aAlt = arena_zalloc(p->a, sizeof(NodeList) * (size_t)x->nChild);
    if (!aAlt) return nomem(p);
    int64_t nChain = 1;
    for (int c = 0; c < x->nChild; c++) {
        int rc = chain_choices(p, x->aChild[c], &aAlt[c]);
        if (rc) return rc;
        nChain *= aAlt[c].n;
        if (nChain > FTS_MATCH_MAX_PHRASES) {
            return syntax_error(p, x->pos, "the OR lists of this chain make more than %d chains",
                                FTS_MATCH_MAX_PHRASES);
        }
    }
    if (nChain == 1) return LP_OK;
    FtsNode *y = node_new(p, FTSN_OR, x->pos, x->pos + x->len);
    FtsNode **aChain = arena_alloc(p->a, sizeof(FtsNode *) * (size_t)nChain);
    int *aPick = arena_zalloc(p->a, sizeof(int) * (size_t)x->nChild);
    if (!y || !aChain || !aPick) return nomem(p);
    for (int i = 0; i < nChain; i++) {
        FtsNode *z = arena_alloc(p->a, sizeof(FtsNode));
        FtsNode **aOp = arena_alloc(p->a, sizeof(FtsNode *) * (size_t)x->nChild);
        if (!z || !aOp) return nomem(p);
        *z = *x;
        z->aChild = aOp;
        for (int c = 0; c < x->nChild; c++) {
            aOp[c] = aAlt[c].a[aPick[c]];
            if (c < 64 && aAlt[c].n > 1) z->orOps |= (uint64_t)1 << c;
        }
        chain_fields(z, aOp, x->nChild);
        aChain[i] = z;
        /* the next choice: the last operand's alternative first */
        for (int c = x->nChild - 1; c >= 0 && ++aPick[c] == aAlt[c].n; c--) aPick[c] = 0;
    }
    y->aChild = aChain;
    y->nChild = (int)nChain;
    y->bChoices = 1;
    *pp = y;
    return LP_OK;
}

/* A NEAR/N chain's operands as parse_chain gathers them: the operands,
** the distance of each link between two of them, and the negations of
** groups spliced in (near_take). */
typedef struct NearList {
    NodeList l;
    int *aDist;             /* aDist[k] links l.a[k] and l.a[k + 1] */
    int nDist, capDist;
    NodeList neg;
    NodeList req;           /* the operands that stand for their words (near_words):
                            ** the chain holds where they match too */
    int bAny;               /* an operand is more than words: FTSN_NEAR_ANY */
} NearList;

/* Appends x to c, linked to the operand before it (if any) by distance
** nDist. */
static int near_push(MatchParser *p, NearList *c, FtsNode *x, int nDist) {
    if (c->l.n > 0) {
        int *a = arena_grow(p->a, c->aDist, c->nDist, &c->capDist, sizeof(int), 4);
        if (!a) return nomem(p);
        c->aDist = a;
        c->aDist[c->nDist++] = nDist;
    }
    return list_push(p, &c->l, x);
}

/* Is x a group NEAR/N splices into its chain: an AND of operands that is
** not all negations and not a ZONESPAN? */
static int is_near_group(const FtsNode *x) {
    return x->kind == FTSN_AND && !x->pSpan && !x->anchor && !x->fBoost && !is_negative(x);
}

/* Is group x (is_near_group) one Sphinx does not splice into a NEAR/N
** chain: one with a negation and more than one operand, or a group, beside
** it? */
static int is_negated_group(const FtsNode *x) {
    int nPos = 0, nNeg = 0, bGroup = 0;
    for (int k = 0; k < x->nChild; k++) {
        const FtsNode *y = x->aChild[k];
        nNeg += y->kind == FTSN_NOT;
        nPos += y->kind != FTSN_NOT;
        bGroup |= y->kind == FTSN_AND || y->kind == FTSN_NEAR;
    }
    return nNeg && (nPos > 1 || bGroup);
}

/* Is x a NEAR/N operand that Sphinx reads as its words' occurrences: a
** MAYBE (in parentheses, or in a group spliced into the chain: bInGroup),
** a quorum, or a group with a negation and more? (A group of words, or of
** one with negations, is spliced into the chain instead, a MAYBE or a
** quorum in it an operand of its own.) */
static int is_words_operand(const MatchParser *p, const FtsNode *x, int bInGroup) {
    if (x->kind == FTSN_MAYBE) return bInGroup || p->z[x->pos] == '(';
    if (x->kind == FTSN_QUORUM) return 1;
    return is_near_group(x) && is_negated_group(x);
}

/* Appends to l a copy of x (a word, prefix, wildcard, phrase or chain) as
** a chain operand (unboosted; as written otherwise). */
static int near_word(MatchParser *p, const FtsNode *x, NodeList *l) {
    FtsNode *y = arena_alloc(p->a, sizeof(FtsNode));
    if (!y) return nomem(p);
    *y = *x;
    y->fBoost = 0;
    return list_push(p, l, y);
}

static int is_any_operand(const MatchParser *p, const FtsNode *x);

/* Appends to l the words, prefixes and wildcards x stands for outside its
** negations (a quorum's words taken from its text: an anchored wildcard
** the one-word phrase it stands for), and, where bPhrase (x is not a MAYBE
** itself, which near_take reads whole), its phrases and chains, which stand where they match, as in
** Sphinx; *pbOk 0 when x holds anything else (a zone span, a quorum, a
** boost), whose occurrences Sphinx takes from where it matches, not from
** its words. */
static int near_words(MatchParser *p, const FtsNode *x, int bPhrase, NodeList *l, int *pbOk) {
    switch (x->kind) {
    case FTSN_TERM:
    case FTSN_PREFIX:
    case FTSN_WILDCARD:
        return near_word(p, x, l);
    case FTSN_PHRASE:
        if (!bPhrase) break;
        return near_word(p, x, l);
    case FTSN_NOT:
        return LP_OK;
    case FTSN_AND:
    case FTSN_OR:
    case FTSN_MAYBE:
        if (x->pSpan) break;
        for (int k = 0; k < x->nChild && *pbOk; k++) {
            int rc = near_words(p, x->aChild[k], bPhrase, l, pbOk);
            if (rc) return rc;
        }
        return LP_OK;
    case FTSN_QUORUM: {
        int nWord = 0;
        for (int i = 0, j; i < x->n; i = j) {
            while (i < x->n && (x->z[i] == ' ' || x->z[i] == '\t')) i++;
            for (j = i; j < x->n && x->z[j] != ' ' && x->z[j] != '\t';) j++;
            if (j == i) break;
            FtsNode w = *x;
            w.kind = FTSN_TERM;
            w.z = x->z + i;
            w.n = j - i;
            w.nQuorum = 0;
            w.fQuorum = 0;
            /* its anchors, blanks around it in the quorum's text */
            w.aMark = NULL;
            w.anchor = (i > 0 && x->aMark && x->aMark[i - 1] == '^' ? FTS_ANCHOR_START : 0) |
                       (j < x->n && x->aMark && x->aMark[j] == '$' ? FTS_ANCHOR_END : 0);
            /* a leaf's text ends in a NUL */
            char *z = arena_strndup(p->a, w.z, (size_t)w.n);
            if (!z) return nomem(p);
            w.z = z;
            if (strpbrk(z, "*?%")) {
                /* a prefix ("wor*") or a wildcard ("*ork", each run of
                ** '*'s one), as the quorum counts it; anchored, the
                ** quorum's place */
                int o = 0;
                for (int k = 0; k < w.n; k++) {
                    if (z[k] != '*' || o == 0 || z[o - 1] != '*') z[o++] = z[k];
                }
                z[o] = 0;
                w.n = o;
                int nStar = 0;
                for (int k = 0; k < o; k++) nStar += z[k] == '*';
                int bPrefix = nStar == 1 && z[o - 1] == '*' && !strpbrk(z, "?%");
                if ((w.anchor && !bPrefix && strpbrk(z, "?%")) || strspn(z, "*?%") == (size_t)o) {
                    *pbOk = 0;
                    return LP_OK;
                }
                /* anchored, a prefix or wildcard is the phrase of that word, as
                ** `^ab*` alone is `"^ab*"` (anchored_pattern) */
                w.kind = w.anchor ? FTSN_PHRASE : bPrefix ? FTSN_PREFIX : FTSN_WILDCARD;
                if (w.kind == FTSN_PREFIX) z[--w.n] = 0;
            }
            int rc = near_word(p, &w, l);
            if (rc) return rc;
            nWord++;
        }
        if (nWord) return LP_OK;
        break;
    }
    default:
        if (bPhrase && is_any_operand(p, x)) return near_word(p, x, l);
        break;
    }
    *pbOk = 0;
    return LP_OK;
}

/* Is x a NEAR/N operand whose occurrences are where it matches, as
** Sphinx's NEAR reads them (making the chain an FTSN_NEAR_ANY): a
** proximity phrase, a '<<' chain, a SENTENCE or PARAGRAPH chain (its
** words' occurrences in the parts that hold all its operands), a NEAR/N
** chain in parentheses (but first, where it is spliced in), a NOTNEAR/N
** (its first operand's occurrences that the second is not near), a MAYBE
** (near_take tries its words first), or an OR list of these and of chain
** operands? Not boosted,
** negated, or a ZONESPAN group. */
static int is_any_operand(const MatchParser *p, const FtsNode *x) {
    if (x->fBoost || is_negative(x)) return 0;
    switch (x->kind) {
    case FTSN_PHRASE:
        return x->nSlop > 0;
    case FTSN_BEFORE:
    case FTSN_ORDER:
    case FTSN_SENTENCE:
    case FTSN_PARAGRAPH:
        return 1;
    case FTSN_NEAR:
    case FTSN_NEAR_ANY:
        /* (a NOTNEAR/N: where its first operand is and the second is not near) */
        return 1;
    case FTSN_MAYBE:
        return p->z[x->pos] == '(';
    case FTSN_OR: {
        /* (an OR of words, prefixes and exact phrases only is a chain
        ** operand, one chain per choice) */
        int bAny = 0;
        for (int k = 0; k < x->nChild; k++) {
            const FtsNode *y = x->aChild[k];
            int bLeaf = !y->fBoost && (y->kind == FTSN_PREFIX || y->kind == FTSN_WILDCARD);
            if (bLeaf || is_chain_operand(y)) continue;
            if (!is_any_operand(p, y)) return 0;
            bAny = 1;
        }
        return bAny;
    }
    default:
        return 0;
    }
}

/* Takes operand x into NEAR/N chain c, linked by distance nDist, as Sphinx
** and Manticore do: a group's operands join the chain in its place, each
** linked to the one before by the same distance (`(a b) NEAR/3 c` is `a
** NEAR/3 b NEAR/3 c`), and the negations of a group around one operand
** exclude rows from the whole chain (`(a -x) NEAR/3 c` is `(a NEAR/3 c)
** -x`); a chain in parentheses
** first in another (bFirst) keeps its own distances (`(a NEAR/1 b) NEAR/3
** c` is `a NEAR/1 b NEAR/3 c`, as Sphinx nests them); a MAYBE, a quorum
** or a group with a negation and more stands for its words (an OR list of
** them) and must match too (is_words_operand, near_words). Anything else
** must be a chain operand. LP_OK, or an error naming the offending
** operand. */
static int near_take(MatchParser *p, NearList *c, FtsNode *x, int nDist, int bFirst, int bInGroup) {
    int bWords = is_words_operand(p, x, bInGroup);
    if (bWords) {
        /* as in Sphinx: an operand whose occurrences are its words', that
        ** must match itself too: `(a MAYBE b) NEAR/3 c` is `((a | b)
        ** NEAR/3 c) (a MAYBE b)` */
        NodeList w = {0};
        int bOk = 1, rc = near_words(p, x, x->kind != FTSN_MAYBE, &w, &bOk);
        if (rc) return rc;
        if (bOk && w.n > 0) {
            FtsNode *o = NULL;
            if ((rc = list_finish(p, &w, FTSN_OR, x->pos, x->pos + x->len, &o))) return rc;
            /* a proximity phrase among them stands where it matches */
            c->bAny |= is_any_operand(p, o);
            if ((rc = near_push(p, c, o, nDist))) return rc;
            return list_push(p, &c->req, x);
        }
    }
    if (is_near_group(x)) {
        /* Sphinx splices a group of words only: one with a negation is an
        ** operand of its own there, whose occurrences are its words' (the
        ** words operand above), here one holding more than words */
        if (is_negated_group(x)) {
            return syntax_error(p, x->pos, "NEAR/N takes a group with a negation only around one word, "
                                           "prefix, wildcard or exact phrase (`(a -x) NEAR/3 c`); this "
                                           "group has more");
        }
        for (int k = 0; k < x->nChild; k++) {
            FtsNode *y = x->aChild[k];
            int rc = y->kind == FTSN_NOT ? list_push(p, &c->neg, y)
                                         : near_take(p, c, y, nDist, bFirst && c->l.n == 0, 1);
            if (rc) return rc;
        }
        return LP_OK;
    }
    if ((x->kind == FTSN_NEAR || x->kind == FTSN_NEAR_ANY) && !x->bNotNear && bFirst && c->l.n == 0) {
        for (int k = 0; k < x->nChild; k++) {
            int rc = near_push(p, c, x->aChild[k], k ? x->aDist[k - 1] : 0);
            if (rc) return rc;
        }
        c->bAny |= x->kind == FTSN_NEAR_ANY;
        return LP_OK;
    }
    if (!is_chain_operand(x) && (is_any_operand(p, x) || (bWords && x->kind == FTSN_MAYBE))) {
        /* its occurrences are where it matches (FTSN_NEAR_ANY) */
        c->bAny = 1;
        return near_push(p, c, x, nDist);
    }
    if (!check_chain_operand(p, x, "NEAR/N", 1)) return LP_BADINPUT;
    return near_push(p, c, x, nDist);
}

/* The chain parse_chain read (operator kind; its operands in *pl, or in
** *pnl for NEAR/N and NOTNEAR/N) as one node in *pp, which is left as it
** is when there is no chain. */
static int chain_close(MatchParser *p, FtsNodeKind kind, int bOrder, int bNot, NodeList *pl,
                       const NearList *pnl, int iStart, int iEnd, FtsNode **pp) {
    NodeList l = kind == FTSN_NEAR ? pnl->l : *pl;
    if (l.n == 0) return LP_OK;
    int bAny = kind == FTSN_NEAR && pnl->bAny;
    FtsNode *x = node_new(p, bOrder ? FTSN_ORDER : bAny ? FTSN_NEAR_ANY : kind, iStart, iEnd);
    if (!x) return nomem(p);
    x->aChild = l.a;
    x->nChild = l.n;
    x->aDist = pnl->aDist;
    x->bNotNear = bNot;
    /* a NOTNEAR over any operands holds where its first operand does */
    chain_fields(x, l.a, bAny && bNot ? 1 : l.n);
    if (bOrder) {
        *pp = x;
        return LP_OK;
    }
    /* an FTSN_NEAR_ANY keeps its OR lists: their occurrences are their
    ** choices' */
    int rc = bAny ? (*pp = x, LP_OK) : chain_expand(p, x, pp);
    if (rc || (pnl->neg.n == 0 && pnl->req.n == 0)) return rc;
    /* the operands that stand for their words, and the negations of the
    ** groups spliced in: the chain AND them AND NOT these (positives
    ** first, as parse_body lists them) */
    NodeList w = {0};
    if ((rc = list_push(p, &w, *pp))) return rc;
    for (int i = 0; i < pnl->req.n; i++) {
        if ((rc = list_add(p, &w, FTSN_AND, pnl->req.a[i]))) return rc;
    }
    for (int i = 0; i < pnl->neg.n; i++) {
        if ((rc = list_push(p, &w, pnl->neg.a[i]))) return rc;
    }
    return list_finish(p, &w, FTSN_AND, iStart, iEnd, pp);
}

/* The operand after chain operator zOp, whose nTake bytes are at the
** cursor, into *py (an error when the query or group ends there). */
static int chain_operand_after(MatchParser *p, Scope *pScope, int nTake, const char *zOp, FtsNode **py) {
    p->i += nTake;
    skip_space(p);
    if (p->i >= p->n || p->z[p->i] == ')') {
        return syntax_error(p, p->i, "expected a word or phrase after %s", zOp);
    }
    return parse_or(p, pScope, py);
}

/* An operand of a '<<' or NEAR/N chain (*px, just read) that SENTENCE or
** PARAGRAPH follows: *px becomes the chain of that operator it starts,
** with the operands joined to it ("a << b SENTENCE c SENTENCE d": the
** chain b SENTENCE c SENTENCE d), as Sphinx binds SENTENCE and PARAGRAPH
** tighter than '<<' and NEAR/N. *px is left as it is when neither
** follows. */
static int sp_operand(MatchParser *p, Scope *pScope, FtsNode **px) {
    skip_space(p);
    FtsNodeKind k = keyword_at(p, p->i, "SENTENCE", 0, NULL) > 0    ? FTSN_SENTENCE
                    : keyword_at(p, p->i, "PARAGRAPH", 0, NULL) > 0 ? FTSN_PARAGRAPH
                                                                     : FTSN_AND;
    if (k == FTSN_AND) return LP_OK;
    const char *zOp = k == FTSN_SENTENCE ? "SENTENCE" : "PARAGRAPH";
    NodeList l = {0};
    NearList nl = {0};
    FtsNode *x = *px;
    if (!check_chain_operand(p, x, zOp, 1)) return LP_BADINPUT;
    int rc = list_push(p, &l, x), iEnd = p->i;
    while (rc == LP_OK) {
        skip_space(p);
        int nTake = keyword_at(p, p->i, zOp, 0, NULL);
        if (nTake <= 0) break;
        FtsNode *y = NULL;
        if ((rc = chain_operand_after(p, pScope, nTake, zOp, &y))) return rc;
        iEnd = p->i;
        if (!check_chain_operand(p, y, zOp, 1)) return LP_BADINPUT;
        rc = list_push(p, &l, y);
    }
    if (rc == LP_OK) rc = chain_close(p, k, 0, 0, &l, &nl, x->pos, iEnd, px);
    /* the other of the two next: one operator per chain */
    const char *zOther = k == FTSN_SENTENCE ? "PARAGRAPH" : "SENTENCE";
    skip_space(p);
    if (rc == LP_OK && keyword_at(p, p->i, zOther, 0, NULL) > 0 && !check_chain_operand(p, *px, zOther, 1)) {
        return LP_BADINPUT;
    }
    return rc;
}

/* or-list { chain-op or-list }: one operator throughout, but for
** SENTENCE and PARAGRAPH chains as operands of '<<' and NEAR/N
** (sp_operand), and the left-associative mixes below. */
static int parse_chain(MatchParser *p, Scope *pScope, FtsNode **pp) {
    int iStart = p->i;
    int rc = parse_or(p, pScope, pp);
    if (rc) return rc;
    NodeList l = {0};
    FtsNodeKind kind = FTSN_AND; /* none yet */
    int bNot = 0;                /* the chain's operator is NOTNEAR/N */
    int bOrder = 0;              /* a '<<' operand is more than words: FTSN_ORDER */
    NearList nl = {0};           /* NEAR/N, NOTNEAR/N: the operands (groups spliced
                                 ** in) and distances; l: the other chains' */
    int iEnd = p->i;
    for (;;) {
        skip_space(p);
        int iOp = p->i, nNear = 0, nTake = 0, bNotOp = 0;
        FtsNodeKind k;
        if (p->i + 1 < p->n && p->z[p->i] == '<' && p->z[p->i + 1] == '<') {
            k = FTSN_BEFORE;
            nTake = 2;
        } else if ((nTake = keyword_at(p, p->i, "NEAR", 1, &nNear)) > 0 ||
                   (bNotOp = (nTake = keyword_at(p, p->i, "NOTNEAR", 1, &nNear)) > 0)) {
            k = FTSN_NEAR;
            if (nNear < 1 || nNear > FTS_MATCH_MAX_SLOP) {
                return syntax_error(p, iOp + (bNotOp ? 8 : 5), "%s takes a distance from 1 to %d",
                                    bNotOp ? "NOTNEAR/N" : "NEAR/N", FTS_MATCH_MAX_SLOP);
            }
        } else if ((nTake = keyword_at(p, p->i, "SENTENCE", 0, NULL)) > 0) {
            k = FTSN_SENTENCE;
        } else if ((nTake = keyword_at(p, p->i, "PARAGRAPH", 0, NULL)) > 0) {
            k = FTSN_PARAGRAPH;
        } else {
            break;
        }
        const char *zOp = k == FTSN_BEFORE     ? "'<<'"
                          : k == FTSN_SENTENCE  ? "SENTENCE"
                          : k == FTSN_PARAGRAPH ? "PARAGRAPH"
                          : bNotOp              ? "NOTNEAR/N"
                                                : "NEAR/N";
        int bSp = kind == FTSN_SENTENCE || kind == FTSN_PARAGRAPH;
        if ((kind != FTSN_AND && kind != FTSN_BEFORE && k == FTSN_BEFORE) ||
            ((kind == FTSN_BEFORE || bSp) && k == FTSN_NEAR && !bNotOp) || (kind != FTSN_AND && bNotOp) || bNot) {
            /* Sphinx's chain operators are left-associative: `a NEAR/3 b
            ** << c` is `(a NEAR/3 b) << c`, the chain so far the first
            ** operand of an ORDER, and `a << b NEAR/3 c` is `(a << b)
            ** NEAR/3 c`, the '<<' chain an operand of NEAR/N
            ** (FTSN_NEAR_ANY); so is `a SENTENCE b NEAR/3 c`'s. A NOTNEAR/N
            ** takes two operands: before another operator it is that
            ** one's first (`a NOTNEAR/3 b NEAR/2 c` is `(a NOTNEAR/3 b)
            ** NEAR/2 c`), and after one the chain so far is its first */
            if ((rc = chain_close(p, kind, bOrder, bNot, &l, &nl, iStart, iEnd, pp))) return rc;
            memset(&l, 0, sizeof(l));
            memset(&nl, 0, sizeof(nl));
            kind = FTSN_AND;
            bNot = 0;
            bOrder = 0;
        }
        if (kind != FTSN_AND && k != kind) {
            return syntax_error(p, iOp, "SENTENCE and PARAGRAPH cannot be mixed in one chain");
        }
        bNot = bNotOp;
        if (l.n == 0 && k == FTSN_BEFORE && ((*pp)->kind == FTSN_BEFORE || (*pp)->kind == FTSN_ORDER)) {
            /* (a << b) << c is a << b << c, as in Sphinx, whose parser
            ** cannot tell them apart (an ORDER on the right stays one) */
            for (int c = 0; c < (*pp)->nChild; c++) {
                if (!check_order_operand(p, (*pp)->aChild[c], &bOrder)) return LP_BADINPUT;
                if ((rc = list_push(p, &l, (*pp)->aChild[c]))) return rc;
            }
        } else if (l.n == 0 && nl.l.n == 0) {
            if (k == FTSN_NEAR && !bNotOp) {
                rc = near_take(p, &nl, *pp, nNear, 1, 0);
            } else if (k == FTSN_BEFORE   ? !check_order_operand(p, *pp, &bOrder)
                       : bNotOp           ? !check_notnear_operand(p, *pp, 1, &nl.bAny)
                                          : !check_chain_operand(p, *pp, zOp, 1)) {
                return LP_BADINPUT;
            } else {
                rc = k == FTSN_NEAR ? near_push(p, &nl, *pp, 0) : list_push(p, &l, *pp);
            }
            if (rc) return rc;
        }
        kind = k;
        FtsNode *y = NULL;
        if ((rc = chain_operand_after(p, pScope, nTake, zOp, &y))) return rc;
        if ((k == FTSN_BEFORE || k == FTSN_NEAR) && (rc = sp_operand(p, pScope, &y))) return rc;
        iEnd = p->i;
        if (k == FTSN_NEAR && !bNotOp) {
            rc = near_take(p, &nl, y, nNear, 0, 0);
        } else if (k == FTSN_BEFORE   ? !check_order_operand(p, y, &bOrder)
                   : bNotOp           ? !check_notnear_operand(p, y, 0, &nl.bAny)
                                      : !check_chain_operand(p, y, zOp, 1)) {
            return LP_BADINPUT;
        } else {
            rc = k == FTSN_NEAR ? near_push(p, &nl, y, nNear) : list_push(p, &l, y);
        }
        if (rc) return rc;
    }
    return chain_close(p, kind, bOrder, bNot, &l, &nl, iStart, iEnd, pp);
}

/* The items of a ZONESPAN: scope (*pScope's zones), from the cursor up to a
** field or zone operator, or the end of the group (bGroup: a ')') or of
** the query, none of which it reads: one item, or an AND of them with
** pSpan (unless none is positive). */
static int parse_span_items(MatchParser *p, Scope *pScope, int bGroup, FtsNode **pp) {
    NodeList l = {0};
    const FtsZones *pSpan = pScope->pZones; /* an operand's ZONE: may change the scope's */
    int iFirst = p->i, iEnd = p->i;
    for (;;) {
        skip_space(p);
        if (p->i >= p->n || p->z[p->i] == '@' || zone_op_at(p, p->i) || (bGroup && p->z[p->i] == ')')) {
            break;
        }
        if (p->z[p->i] == ')') return syntax_error(p, p->i, "unmatched ')'");
        FtsNode *x = NULL;
        int rc = parse_chain(p, pScope, &x);
        if (rc) return rc;
        iEnd = p->i;
        if ((rc = list_add(p, &l, FTSN_AND, x))) return rc;
    }
    if (l.n == 0) return syntax_error(p, p->i, "expected a word, phrase or '(' after ZONESPAN:");
    int rc = list_finish(p, &l, FTSN_AND, iFirst, iEnd, pp);
    if (rc == LP_OK && (*pp)->kind == FTSN_AND && !is_negative(*pp)) (*pp)->pSpan = pSpan;
    return rc;
}

/* The items of a group (bGroup: stops on ')', which it leaves unread) or
** of the whole query (stops at the end; *pp NULL when empty). */
static int parse_body(MatchParser *p, Scope scope, int bGroup, FtsNode **pp) {
    NodeList l = {0};
    const FtsZones *pSpan = scope.pZones && scope.pZones->bSpan ? scope.pZones : NULL;
    int iFirst = -1, iEnd = 0;
    int iScopeOp = -1; /* a field or ZONE: operator no item has followed yet */
    *pp = NULL;
    for (;;) {
        skip_space(p);
        if (iScopeOp >= 0 && (p->i >= p->n || p->z[p->i] == ')')) {
            /* as Sphinx: an operator that scopes nothing is an error */
            return syntax_error(p, p->i, "expected a word, phrase or '(' after the %s at offset %d",
                                p->z[iScopeOp] == '@' ? "field operator" : "ZONE: operator", iScopeOp);
        }
        if (p->i >= p->n) {
            if (bGroup) return syntax_error(p, p->n, "expected ')'");
            break;
        }
        char c = p->z[p->i];
        if (c == ')') {
            if (bGroup) break;
            return syntax_error(p, p->i, "unmatched ')'");
        }
        int rc;
        if (c == '@') {
            iScopeOp = p->i;
            rc = parse_field_op(p, &scope);
            if (rc) return rc;
            continue;
        }
        int kZone = zone_op_at(p, p->i);
        if (kZone) {
            if (kZone == 1) iScopeOp = p->i;
            if ((rc = parse_zone_op(p, &scope))) return rc;
            if (kZone == 1) continue;
            iScopeOp = -1;
            /* ZONESPAN: the items up to the next field or zone operator
            ** (or the group's end) are one AND that matches in one span */
            FtsNode *x = NULL;
            int iItem = p->i;
            if ((rc = parse_span_items(p, &scope, bGroup, &x))) return rc;
            if (iFirst < 0) iFirst = iItem;
            iEnd = p->i;
            if ((rc = list_add(p, &l, FTSN_AND, x))) return rc;
            continue;
        }
        int iItem = p->i;
        FtsNode *x = NULL;
        rc = parse_chain(p, &scope, &x);
        if (rc) return rc;
        iScopeOp = -1;
        if (iFirst < 0) iFirst = iItem;
        iEnd = p->i;
        rc = list_add(p, &l, FTSN_AND, x);
        if (rc) return rc;
    }
    if (l.n == 0) return bGroup ? syntax_error(p, p->i, EXPECT_PRIMARY) : LP_OK;
    int rc = list_finish(p, &l, FTSN_AND, iFirst, iEnd, pp);
    if (rc == LP_OK && pSpan && (*pp)->kind == FTSN_AND && !(*pp)->pSpan && !is_negative(*pp)) {
        (*pp)->pSpan = pSpan; /* a group inside a ZONESPAN: scope */
    }
    return rc;
}

int fts_match_parse(Arena *a, const char *z, size_t n, const char *const *azField, int nField,
                    FtsNode **ppRoot, LpError *err) {
    return fts_match_parse_opts(a, z, n, azField, nField, 0, ppRoot, err);
}

/* FTS_MATCH_EXACT_FORMS: each word of x's tree its exact form, as '=word'
** asks (a TERM keeps the '=' in its text), each phrase and quorum as
** '="…"' does. Prefixes and wildcards match words as written already. */
static int exact_forms(MatchParser *p, FtsNode *x) {
    if (x->kind == FTSN_TERM && x->n > 0 && x->z[0] != '=') {
        char *z = arena_alloc(p->a, (size_t)x->n + 2);
        if (!z) return nomem(p);
        z[0] = '=';
        memcpy(z + 1, x->z, (size_t)x->n + 1);
        x->z = z;
        x->n++;
    }
    if (x->kind == FTSN_PHRASE || x->kind == FTSN_QUORUM) x->bExact = 1;
    for (int k = 0; k < x->nChild; k++) {
        int rc = exact_forms(p, x->aChild[k]);
        if (rc) return rc;
    }
    return LP_OK;
}

int fts_match_parse_opts(Arena *a, const char *z, size_t n, const char *const *azField, int nField,
                         unsigned flags, FtsNode **ppRoot, LpError *err) {
    *ppRoot = NULL;
    if (n > (size_t)INT_MAX / 2)
        return lp_err_set(err, LP_LIMIT, "MATCH: query longer than %d bytes", INT_MAX / 2);
    if (nField < 0 || nField > MAX_FIELDSET) {
        return lp_err_set(err, LP_INTERNAL, "MATCH: %d full-text fields (at most %d)", nField,
                          MAX_FIELDSET);
    }
    int64_t iBad = utf8_check(z, n);
    if (iBad >= 0) {
        lp_err_setpos(err, LP_BADINPUT, iBad, "MATCH: invalid UTF-8 at offset %lld",
                      (long long)iBad);
        if (err) err->detail = FTS_MATCH_ER_PARSE;
        return LP_BADINPUT;
    }
    MatchParser p;
    memset(&p, 0, sizeof(p));
    p.a = a;
    p.z = z;
    p.n = (int)n;
    p.azField = azField;
    p.nField = nField;
    p.err = err;
    p.bInlineWild = (flags & FTS_MATCH_INLINE_WILDCARDS) != 0;
    for (int i = 0; i < nField; i++)
        fieldset_add(&p.all, i);

    skip_space(&p);
    if (p.n - p.i >= 9 && memcmp(p.z + p.i, "@@relaxed", 9) == 0 &&
        (p.i + 9 == p.n || space_len(&p, p.i + 9) > 0)) {
        p.bRelaxed = 1;
        p.i += 9;
    }
    FtsNode *root = NULL;
    Scope all = {p.all, 0, NULL, 0};
    int rc = parse_body(&p, all, 0, &root);
    if (rc) return rc;
    if (root && (flags & FTS_MATCH_EXACT_FORMS) && (rc = exact_forms(&p, root)) != LP_OK) return rc;
    if (root && is_negative(root) && !(flags & FTS_MATCH_NOT_ONLY)) {
        lp_err_setpos(err, LP_BADINPUT, root->pos,
                      "MATCH: a query of only negated terms matches nothing useful: add a term "
                      "that is not negated (or, for every row without them, OPTION "
                      "not_terms_only_allowed=1)");
        if (err) err->detail = FTS_MATCH_ER_PARSE;
        return LP_BADINPUT;
    }
    *ppRoot = root;
    return LP_OK;
}

/* ------------------------------------------------------------------ */
/* Walking                                                             */

/* A walk's callback: one of the two kinds. */
typedef struct LeafWalk {
    FtsLeafFn xLeaf;
    FtsGroupLeafFn xGroupLeaf;
    void *ctx;
} LeafWalk;

static int leaves(const FtsNode *x, int bNegated, const FtsNode *pGroup, const LeafWalk *w) {
    switch (x->kind) {
    case FTSN_TERM:
    case FTSN_PREFIX:
    case FTSN_WILDCARD:
    case FTSN_PHRASE:
    case FTSN_QUORUM:
        if (x->bMissed) return LP_OK; /* not part of the query */
        return w->xLeaf ? w->xLeaf(w->ctx, x, bNegated) : w->xGroupLeaf(w->ctx, x, bNegated, pGroup);
    case FTSN_AND:
    case FTSN_OR:
    case FTSN_NOT:
    case FTSN_MAYBE:
    case FTSN_BEFORE:
    case FTSN_NEAR:
    case FTSN_SENTENCE:
    case FTSN_PARAGRAPH:
    case FTSN_ORDER:
    case FTSN_NEAR_ANY:
        for (int k = 0; k < x->nChild; k++) {
            /* NOTNEAR's second operand is a negation */
            int rc = leaves(x->aChild[k], bNegated || x->kind == FTSN_NOT || (x->bNotNear && k == 1),
                            x->pSpan ? x : pGroup, w);
            if (rc) return rc;
        }
        return LP_OK;
    }
    return LP_OK;
}

int fts_match_leaves(const FtsNode *root, FtsLeafFn xLeaf, void *ctx) {
    LeafWalk w = {xLeaf, NULL, ctx};
    return root ? leaves(root, 0, NULL, &w) : LP_OK;
}

int fts_match_leaves_grouped(const FtsNode *root, FtsGroupLeafFn xLeaf, void *ctx) {
    LeafWalk w = {NULL, xLeaf, ctx};
    return root ? leaves(root, 0, NULL, &w) : LP_OK;
}

/* ------------------------------------------------------------------ */
/* Word forms and exceptions over bare words                           */

/* Can a bare word x join its neighbours in a word form's or an
** exception's source? A plain word, no exact mark, weight, anchor or
** limit of its own. */
static int join_candidate(const FtsNode *x) {
    return x->kind == FTSN_TERM && !x->fBoost && !x->anchor && x->z[0] != '=';
}

/* Is c, between two bare words, a separator the parser skipped, not an
** operator or part of one? */
static int join_gap_char(char c) {
    unsigned char u = (unsigned char)c;
    if (u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z')) return 0;
    return strchr("()\"|!@~^$=*<>/\\-", c) == NULL;
}

/* Do x and y (after it) read as one run of words: the same scope, and only
** white space and plain punctuation between them in the query zQuery? */
static int join_adjacent(const char *zQuery, const FtsNode *x, const FtsNode *y) {
    if (memcmp(&x->fields, &y->fields, sizeof(x->fields)) != 0 || x->nPosLimit != y->nPosLimit ||
        x->pZones != y->pZones || x->bMissed != y->bMissed || y->pos < x->pos + x->len) {
        return 0;
    }
    for (int i = x->pos + x->len; i < y->pos; i++) {
        if (!join_gap_char(zQuery[i])) return 0;
    }
    return 1;
}

/* Merges the run aRun[0..n) of bare words (n >= 2) where one token of the
** analyzer (a word form's destination, an exception's keyword) spans
** several of them; the new children go to aOut (room for n), their count
** to *pnOut. The run is analysed as the query has it (zQuery from the
** first word to the last), or, where a word was written with escapes, as
** its words joined by spaces (exceptions then cannot span them). */
static int join_run(Arena *a, const char *zQuery, const Analyzer *an, FtsNode **aRun, int n, FtsNode **aOut,
                    int *pnOut, LpError *err) {
    int bRaw = 1;
    for (int k = 0; k < n && bRaw; k++) {
        bRaw = aRun[k]->n == aRun[k]->len && memcmp(aRun[k]->z, zQuery + aRun[k]->pos, (size_t)aRun[k]->n) == 0;
    }
    StrBuf sb = {0};
    int *aStart = arena_alloc(a, sizeof(int) * (size_t)(n + 1));
    char *bJoin = arena_zalloc(a, (size_t)n); /* bJoin[k]: word k joins word k + 1 */
    if (!aStart || !bJoin) return lp_err_set(err, LP_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        if (bRaw) {
            aStart[k] = aRun[k]->pos - aRun[0]->pos;
        } else {
            if (k) strbuf_appendc(&sb, ' ');
            aStart[k] = (int)sb.n;
            strbuf_append(&sb, aRun[k]->z, (size_t)aRun[k]->n);
        }
    }
    if (bRaw) strbuf_append(&sb, zQuery + aRun[0]->pos, (size_t)(aRun[n - 1]->pos + aRun[n - 1]->len - aRun[0]->pos));
    aStart[n] = (int)sb.n + 1;
    if (sb.oom) {
        strbuf_free(&sb);
        return lp_err_set(err, LP_NOMEM, "out of memory");
    }
    TokenList l = {{0}, {0}};
    LpError e;
    lp_err_clear(&e);
    int rc = analyzer_collect(an, sb.z, sb.n, ANALYZE_QUERY, &l, &e);
    for (size_t i = 0; rc == LP_OK && i < l.a.n; i++) {
        const Token *t = &l.a.a[i];
        int k = 0;
        while (k + 1 < n && aStart[k + 1] <= (int)t->iStart) k++;
        for (; k + 1 < n && aStart[k + 1] < (int)t->iEnd; k++) bJoin[k] = 1;
    }
    token_list_free(&l);
    if (rc == LP_NOMEM) {
        strbuf_free(&sb);
        return lp_err_set(err, LP_NOMEM, "out of memory");
    }
    /* An error (a word the analyzer refuses) is left to the planner, which
    ** reports it for the word itself: the words then stay apart. */
    int nOut = 0;
    for (int k = 0; k < n;) {
        int j = k;
        while (rc == LP_OK && j + 1 < n && bJoin[j]) j++;
        if (j == k) {
            aOut[nOut++] = aRun[k++];
            continue;
        }
        /* the joined words' text: up to the end of the last */
        int iEnd = bRaw ? aStart[j] + aRun[j]->n : aStart[j + 1] - 1;
        FtsNode *x = arena_alloc(a, sizeof(FtsNode));
        char *z = arena_strndup(a, sb.z + aStart[k], (size_t)(iEnd - aStart[k]));
        if (!x || !z) {
            strbuf_free(&sb);
            return lp_err_set(err, LP_NOMEM, "out of memory");
        }
        *x = *aRun[k];
        x->z = z;
        x->n = iEnd - aStart[k];
        x->len = aRun[j]->pos + aRun[j]->len - x->pos;
        for (int m = k; m <= j; m++) x->bRequired |= aRun[m]->bRequired;
        aOut[nOut++] = x;
        k = j + 1;
    }
    strbuf_free(&sb);
    *pnOut = nOut;
    return LP_OK;
}

static int join_walk(Arena *a, const char *zQuery, FtsNode *x, const Analyzer *an, LpError *err) {
    for (int k = 0; k < x->nChild; k++) {
        int rc = join_walk(a, zQuery, x->aChild[k], an, err);
        if (rc) return rc;
    }
    if (x->kind != FTSN_AND || x->pSpan || x->nChild < 2) return LP_OK;
    int nNew = 0;
    for (int i = 0; i < x->nChild;) {
        int j = i + 1;
        if (join_candidate(x->aChild[i])) {
            while (j < x->nChild && join_candidate(x->aChild[j]) && join_adjacent(zQuery, x->aChild[j - 1], x->aChild[j]))
                j++;
        }
        int nOut = 1;
        if (j - i >= 2) {
            int rc = join_run(a, zQuery, an, x->aChild + i, j - i, x->aChild + nNew, &nOut, err);
            if (rc) return rc;
        } else {
            x->aChild[nNew] = x->aChild[i];
        }
        nNew += nOut;
        i = j;
    }
    x->nChild = nNew;
    if (nNew == 1 && x->aChild[0]->kind == FTSN_TERM) *x = *x->aChild[0]; /* AND of one word: the word */
    return LP_OK;
}

int fts_match_join_words(Arena *a, const char *zQuery, FtsNode *root, const Analyzer *an, LpError *err) {
    if (!root || !(analyzer_has_wordforms(an) || analyzer_has_exceptions(an))) return LP_OK;
    return join_walk(a, zQuery, root, an, err);
}

/* ------------------------------------------------------------------ */
/* Prefixes and wildcards that hold several words                      */

/* Is c a wildcard character: '*', and on tables with min_infix_len (whose
** MATCH reads them so, FTS_MATCH_INLINE_WILDCARDS) '?' and '%'? */
static int is_wild(char c, int bInline) {
    return c == '*' || (bInline && (c == '?' || c == '%'));
}

/* The pieces of prefix or wildcard leaf x when the analyzer reads more
** than one word in it ("e-ma*", "what's?", "*body-bag*"): each word as a
** TERM, and the words that touch a wildcard character as a PREFIX (a
** trailing '*' only) or a WILDCARD, in an AND made of x itself. x is left
** as it is when it holds one word (or none, or a wildcard character
** standing between separators or alone between them: the planner then
** says what is wrong). */
static int split_leaf(Arena *a, FtsNode *x, const Analyzer *an, LpError *err) {
    /* ASCII letters and digits (and wildcard characters) are one word
    ** whatever the table: most leaves, and the analysis below is not free */
    int bInline = analyzer_min_infix_len(an) > 0, bPlain = 1;
    for (int i = 0; i < x->n && bPlain; i++) {
        unsigned char c = (unsigned char)x->z[i];
        bPlain = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_wild((char)c, bInline);
    }
    int bPrefix = x->kind == FTSN_PREFIX;
    if (fts_match_is_regex(x->z, x->n)) return LP_OK;
    /* a prefix holding a '*' (written escaped) is left to the planner */
    if (bPlain || (bPrefix && memchr(x->z, '*', (size_t)x->n))) return LP_OK;
    /* the text as words: a prefix's own '*' back at its end, and every
    ** wildcard character a letter, so that it stays inside its word */
    int n = x->n + bPrefix;
    char *zw = arena_alloc(a, (size_t)n + 1);
    if (!zw) return lp_err_set(err, LP_NOMEM, "out of memory");
    memcpy(zw, x->z, (size_t)x->n);
    if (bPrefix) zw[x->n] = '*';
    zw[n] = 0;
    char *zl = arena_strndup(a, zw, (size_t)n);
    if (!zl) return lp_err_set(err, LP_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        if (is_wild(zl[i], bInline)) zl[i] = 'x';
    }
    TokenList l = {{0}, {0}};
    LpError e;
    lp_err_clear(&e);
    int rc = analyzer_collect(an, zl, (size_t)n, ANALYZE_UNSTEMMED, &l, &e);
    if (rc == LP_NOMEM) {
        token_list_free(&l);
        return lp_err_set(err, LP_NOMEM, "out of memory");
    }
    int nWild = 0;
    for (int i = 0; i < n; i++) nWild += is_wild(zw[i], bInline);
    int nCovered = 0; /* wildcard characters inside the words */
    for (size_t k = 0; rc == LP_OK && k < l.a.n; k++) {
        for (uint32_t i = l.a.a[k].iStart; i < l.a.a[k].iEnd; i++) nCovered += is_wild(zw[i], bInline);
    }
    /* every piece needs a letter or digit of its own ("ab-*" stays), and
    ** none may hold a run of '*'s (a prefix's own '*' after a literal one) */
    int bBare = 0;
    for (size_t k = 0; rc == LP_OK && k < l.a.n; k++) {
        uint32_t i = l.a.a[k].iStart, e = l.a.a[k].iEnd;
        while (i < e && is_wild(zw[i], bInline)) i++;
        bBare |= i == e;
        for (i = l.a.a[k].iStart; i + 1 < e; i++) bBare |= zw[i] == '*' && zw[i + 1] == '*';
    }
    if (rc != LP_OK || l.a.n < 2 || nCovered != nWild || bBare) {
        token_list_free(&l);
        return LP_OK;
    }
    FtsNode **ap = arena_alloc(a, sizeof(FtsNode *) * l.a.n);
    if (!ap) {
        token_list_free(&l);
        return lp_err_set(err, LP_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < l.a.n; k++) {
        const Token *t = &l.a.a[k];
        const char *z = zw + t->iStart;
        int m = (int)(t->iEnd - t->iStart), nw = 0, nTrail = 0;
        for (int i = 0; i < m; i++) nw += is_wild(z[i], bInline);
        while (nTrail < m && z[m - 1 - nTrail] == '*') nTrail++;
        FtsNode *y = arena_alloc(a, sizeof(FtsNode));
        if (!y) {
            token_list_free(&l);
            return lp_err_set(err, LP_NOMEM, "out of memory");
        }
        *y = *x;
        y->kind = nw == 0 ? FTSN_TERM : nw == nTrail ? FTSN_PREFIX : FTSN_WILDCARD;
        y->n = y->kind == FTSN_PREFIX ? m - nTrail : m;
        char *zc = arena_strndup(a, z, (size_t)y->n);
        if (!zc) {
            token_list_free(&l);
            return lp_err_set(err, LP_NOMEM, "out of memory");
        }
        y->z = zc;
        ap[k] = y;
    }
    FtsNode orig = *x;
    memset(x, 0, sizeof(*x));
    x->kind = FTSN_AND;
    x->pos = orig.pos;
    x->len = orig.len;
    x->fields = orig.fields;
    x->aChild = ap;
    x->nChild = (int)l.a.n;
    token_list_free(&l);
    return LP_OK;
}

/* Walks x, whose children's kinds take any operand (AND, OR, NOT, MAYBE,
** or the root: bAny), splitting the prefixes and wildcards among them;
** an AND made inside an AND joins it. */
static int split_walk(Arena *a, FtsNode *x, int bAny, const Analyzer *an, LpError *err) {
    if (bAny && (x->kind == FTSN_PREFIX || x->kind == FTSN_WILDCARD)) return split_leaf(a, x, an, err);
    int bTake = x->kind == FTSN_AND || x->kind == FTSN_OR || x->kind == FTSN_NOT || x->kind == FTSN_MAYBE;
    char *bSplit = NULL; /* an AND's children that split (made on the first) */
    int nMore = 0;
    for (int k = 0; k < x->nChild; k++) {
        FtsNode *c = x->aChild[k];
        int bLeaf = c->kind == FTSN_PREFIX || c->kind == FTSN_WILDCARD;
        int rc = split_walk(a, c, bTake, an, err);
        if (rc) return rc;
        if (x->kind == FTSN_AND && bLeaf && c->kind == FTSN_AND) {
            if (!bSplit && !(bSplit = arena_zalloc(a, (size_t)x->nChild))) {
                return lp_err_set(err, LP_NOMEM, "out of memory");
            }
            bSplit[k] = 1;
            nMore += c->nChild - 1;
        }
    }
    if (nMore == 0) return LP_OK;
    /* the pieces of a split leaf go into this AND's own list */
    FtsNode **ap = arena_alloc(a, sizeof(FtsNode *) * (size_t)(x->nChild + nMore));
    if (!ap) return lp_err_set(err, LP_NOMEM, "out of memory");
    int n = 0;
    for (int k = 0; k < x->nChild; k++) {
        FtsNode *c = x->aChild[k];
        if (bSplit[k]) {
            for (int j = 0; j < c->nChild; j++) ap[n++] = c->aChild[j];
        } else {
            ap[n++] = c;
        }
    }
    x->aChild = ap;
    x->nChild = n;
    return LP_OK;
}

int fts_match_split_words(Arena *a, FtsNode *root, const Analyzer *an, LpError *err) {
    return root ? split_walk(a, root, 1, an, err) : LP_OK;
}

/* ------------------------------------------------------------------ */
/* Dump                                                                */

/* z[0..n) with a backslash before each byte of zSpecial (and before
** whitespace when bSpace), so words holding ',' or ')' stay readable. */
static void dump_text_marked(StrBuf *sb, const char *z, const uint8_t *aMark, int n, const char *zSpecial,
                             int bSpace) {
    for (int i = 0; i < n; i++) {
        char c = aMark && aMark[i] ? (char)aMark[i] : z[i];
        if (c && (strchr(zSpecial, c) ||
                  (bSpace && (c == ' ' || c == '\t' || c == '\n' || c == '\r')))) {
            strbuf_appendc(sb, '\\');
        }
        strbuf_appendc(sb, c);
    }
}

static void dump_text(StrBuf *sb, const char *z, int n, const char *zSpecial, int bSpace) {
    dump_text_marked(sb, z, NULL, n, zSpecial, bSpace);
}

/* "@{title,body}" unless the set is every field. */
static void dump_fieldset(StrBuf *sb, const FtsFieldSet *s, const char *const *azField, int nField) {
    int bAll = 1, bExtra = 0;
    for (int i = 0; i < MAX_FIELDSET; i++) {
        int b = fts_fieldset_has(s, i);
        if (i < nField && !b) bAll = 0;
        if (i >= nField && b) bExtra = 1;
    }
    if (bAll && !bExtra) return;
    strbuf_appendz(sb, "@{");
    int bFirst = 1;
    for (int i = 0; i < MAX_FIELDSET; i++) {
        if (!fts_fieldset_has(s, i)) continue;
        if (!bFirst) strbuf_appendc(sb, ',');
        bFirst = 0;
        if (azField && i < nField && azField[i]) {
            strbuf_appendz(sb, azField[i]);
        } else {
            strbuf_appendf(sb, "%d", i);
        }
    }
    strbuf_appendc(sb, '}');
}

/* A leaf's fields ("@{-}": left out, FtsNode.bMissed), then "[N]" for a
** position limit. */
static void dump_fields(StrBuf *sb, const FtsNode *x, const char *const *azField, int nField) {
    if (x->bMissed) strbuf_appendz(sb, "@{-}");
    else dump_fieldset(sb, &x->fields, azField, nField);
    if (x->nPosLimit) strbuf_appendf(sb, "[%u]", x->nPosLimit);
    if (x->pZones) {
        strbuf_appendz(sb, x->pZones->bSpan ? "<<" : "<");
        for (int k = 0; k < x->pZones->nName; k++) {
            if (k) strbuf_appendc(sb, ',');
            strbuf_appendz(sb, x->pZones->azName[k]);
        }
        strbuf_appendz(sb, x->pZones->bSpan ? ">>" : ">");
    }
}

static void dump_node(const FtsNode *x, const char *const *azField, int nField, StrBuf *sb) {
    if (x->anchor & FTS_ANCHOR_START) strbuf_appendc(sb, '^');
    switch (x->kind) {
    case FTSN_TERM:
        dump_text(sb, x->z, x->n, "\\(),{}\"*", 1);
        if (x->anchor & FTS_ANCHOR_END) strbuf_appendc(sb, '$');
        if (x->fBoost) strbuf_appendf(sb, "^%g", x->fBoost);
        dump_fields(sb, x, azField, nField);
        return;
    case FTSN_PREFIX:
        strbuf_appendz(sb, "PREFIX(");
        dump_text(sb, x->z, x->n, "\\(),{}\"*", 1);
        strbuf_appendz(sb, "*)");
        dump_fields(sb, x, azField, nField);
        return;
    case FTSN_WILDCARD:
        strbuf_appendz(sb, "WILDCARD(");
        dump_text(sb, x->z, x->n, "\\(),{}\"", 1);
        strbuf_appendc(sb, ')');
        dump_fields(sb, x, azField, nField);
        return;
    case FTSN_PHRASE:
        strbuf_appendz(sb, x->bExact ? "=PHRASE(\"" : "PHRASE(\"");
        dump_text_marked(sb, x->z, x->aMark, x->n, "\\\"", 0);
        strbuf_appendc(sb, '"');
        if (x->nSlop) strbuf_appendf(sb, "~%d", x->nSlop);
        strbuf_appendc(sb, ')');
        if (x->anchor & FTS_ANCHOR_END) strbuf_appendc(sb, '$');
        dump_fields(sb, x, azField, nField);
        return;
    case FTSN_QUORUM:
        strbuf_appendz(sb, x->bExact ? "=QUORUM(\"" : "QUORUM(\"");
        dump_text_marked(sb, x->z, x->aMark, x->n, "\\\"", 0);
        if (x->nQuorum) strbuf_appendf(sb, "\"/%d)", x->nQuorum);
        else strbuf_appendf(sb, "\"/%g)", x->fQuorum);
        dump_fields(sb, x, azField, nField);
        return;
    case FTSN_AND:
    case FTSN_OR:
    case FTSN_NOT:
    case FTSN_MAYBE:
    case FTSN_BEFORE:
    case FTSN_NEAR:
    case FTSN_SENTENCE:
    case FTSN_PARAGRAPH:
    case FTSN_ORDER:
    case FTSN_NEAR_ANY:
        strbuf_appendz(sb, x->kind == FTSN_AND         ? (x->pSpan ? "SPAN(" : "AND(")
                           : x->kind == FTSN_ORDER     ? "ORDER("
                           : x->kind == FTSN_NEAR_ANY  ? (x->bNotNear ? "NOTNEARANY(" : "NEARANY(")
                           : x->kind == FTSN_OR        ? "OR("
                           : x->kind == FTSN_NOT       ? "NOT("
                           : x->kind == FTSN_MAYBE     ? "MAYBE("
                           : x->kind == FTSN_BEFORE    ? "BEFORE("
                           : x->kind == FTSN_SENTENCE  ? "SENTENCE("
                           : x->kind == FTSN_PARAGRAPH ? "PARAGRAPH("
                           : x->bNotNear               ? "NOTNEAR("
                                                       : "NEAR(");
        for (int k = 0; k < x->nChild; k++) {
            if (k) strbuf_appendz(sb, ", ");
            if (k && (x->kind == FTSN_NEAR || x->kind == FTSN_NEAR_ANY)) strbuf_appendf(sb, "/%d, ", x->aDist[k - 1]);
            dump_node(x->aChild[k], azField, nField, sb);
        }
        strbuf_appendc(sb, ')');
        return;
    }
}

void fts_match_dump(const FtsNode *root, const char *const *azField, int nField, StrBuf *sb) {
    if (!root) {
        strbuf_appendz(sb, "EMPTY");
        return;
    }
    dump_node(root, azField, nField, sb);
}
