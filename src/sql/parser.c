/*
** parser.c — see parser.h.
**
** A recursive-descent parser over a pull lexer with one token of look-ahead
** (tok, plus ahead on demand). Every function that can fail records the
** first error in p->rc / p->err and returns NULL (expressions) or the rc
** (statements); callers just propagate. Nothing is freed on error: it all
** lives in the arena.
**
** Grammar (keywords case-insensitive; [x] optional, {x} repeated):
**
**   stmt     := select | insert | delete | update | create | drop | truncate
**             | show | describe | set | BEGIN [WORK] | START TRANSACTION
**             | COMMIT [WORK] | ROLLBACK [WORK] | USE name      {';'}
**   select   := SELECT item {',' item} [FROM table] [WHERE expr]
**               [GROUP BY expr {',' expr}] [ORDER BY expr [ASC|DESC] {, …}]
**               [LIMIT n | LIMIT off ',' n | LIMIT n OFFSET off]
**               [OPTION option {',' option}]
**   item     := '*' | expr [[AS] alias]
**   option   := word '=' ( '(' [word '=' expr {',' …}] ')' | unary )
**   insert   := (INSERT|REPLACE) [INTO] table ['(' name {',' name} ')']
**               VALUES row {',' row}       row := '(' [value {',' value}] ')'
**   delete   := DELETE FROM table [WHERE expr]
**   update   := UPDATE table SET name '=' expr {',' …} [WHERE expr] [OPTION …]
**   create   := CREATE TABLE [IF NOT EXISTS] table '(' coldef {',' coldef} ')'
**               {[','] word '=' unary}
**   coldef   := name type {flag | word '=' unary}
**   drop     := DROP TABLE [IF EXISTS] table
**   truncate := TRUNCATE [TABLE] table [WITH RECONFIGURE]
**   flush    := FLUSH (TABLE | RAMCHUNK) table
**   optimize := OPTIMIZE TABLE table [OPTION name = value {',' …}]
**   alter    := ALTER TABLE table ( ADD [COLUMN] coldef | DROP [COLUMN] name
**             | MODIFY [COLUMN] coldef | REBUILD EMBEDDINGS name
**             | name = 'value' {[','] name = 'value'} )
**   show     := SHOW ( [FULL] TABLES [(FROM|IN) name] [like]
**             | CREATE TABLE table | [FULL] (COLUMNS|FIELDS) (FROM|IN) table [like]
**             | [GLOBAL|SESSION|LOCAL] VARIABLES [like | WHERE Variable_name
**               (= | LIKE) 'x'] | [GLOBAL|SESSION|LOCAL] STATUS [like]
**             | DATABASES [like] | META [like] | PLAN | PROFILE | WARNINGS | COLLATION [like]
**             | CHARACTER SET [like] | CHARSET [like] | ENGINES
**             | TABLE table STATUS [like] | TABLE table SETTINGS )
**                                                   like := LIKE 'pattern'
**   describe := (DESCRIBE|DESC) table [like]
**   set      := SET setitem {',' setitem}
**   setitem  := [GLOBAL|SESSION|LOCAL] ( name | @@var | @var ) ('='|':=') expr
**             | NAMES charset [COLLATE charset] | CHARACTER SET charset
**             | CHARSET charset | TRANSACTION <rest of the statement>
**   table    := name ['.' name]   (a database qualifier is accepted, dropped)
**
**   expr     := or ; or := and {(OR | '||') and} ; and := not {(AND | '&&') not}
**   not      := NOT not | cmp
**   cmp      := add { cmpop add | IS [NOT] NULL | [NOT] IN '(' expr {, expr} ')'
**                   | [NOT] BETWEEN add AND add }
**   add      := mul {('+'|'-') mul} ; mul := unary {('*'|'/'|'%'|DIV|MOD) unary}
**   unary    := ('-'|'+') number | ('-'|'+'|'!') unary | primary
**   primary  := number | string | NULL | TRUE | FALSE | @@var | @var
**             | name '(' [ '*' | [DISTINCT] arg {',' arg} ] ')'
**             | name {'.' name} | '(' expr ')' | '(' expr ',' expr {…} ')'
**             | '{' [word '=' expr {',' …}] '}'
**
** A name is an identifier that is not a reserved keyword (lexer.h) or a
** `backquoted` one; a word (option keys, column types and flags) is any
** identifier, reserved or not. In a VALUES row and in a function argument a
** parenthesised single value `(0.5)` is a one-element list (a vector).
*/
#include "sql/parser.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sql/lexer.h"

typedef struct Parser {
    Arena *a;               /* where the tree goes */
    const char *z;          /* statement text (not owned) */
    int n;                  /* its length */
    SqlLexer lex;           /* positioned after tok (or after ahead) */
    SqlToken tok;           /* the current token */
    SqlToken ahead;         /* the token after tok, valid when bAhead */
    int bAhead;
    int prevEnd;            /* offset just past the last consumed token */
    int nest;               /* grammar recursion depth (SQL_MAX_NESTING) */
    int h;                  /* height of the expression last returned */
    Expr *pParen;           /* the last expression that ')' closed alone */
    int rc;                 /* first error, LP_OK while none */
    LpError *err;           /* where the first error is reported (may be NULL) */
} Parser;

/* ------------------------------------------------------------------ */
/* Errors                                                              */

void sql_pos_linecol(const char *z, size_t n, int pos, int *pLine, int *pCol) {
    size_t end = pos < 0 ? 0 : ((size_t)pos > n ? n : (size_t)pos);
    int line = 1, col = 1;
    for (size_t i = 0; i < end; i++) {
        unsigned char c = (unsigned char)z[i];
        if (c == '\n') {
            line++;
            col = 1;
        } else if ((c & 0xC0) != 0x80) {
            col++;
        }
    }
    *pLine = line;
    *pCol = col;
}

#define NEAR_MAX 32 /* bytes of statement quoted in a syntax error */

static int syntax_errorv(LpError *err, const char *z, size_t n, int pos, const char *zFmt,
                         va_list ap) {
    if (!err) return LP_BADINPUT;
    if (pos < 0) pos = 0;
    if ((size_t)pos > n) pos = (int)n;
    int line, col;
    sql_pos_linecol(z, n, pos, &line, &col);
    char zWhat[LP_ERRMSG_MAX];
    vsnprintf(zWhat, sizeof(zWhat), zFmt, ap);

    /* Only ';', whitespace and comments left: the statement ended early. */
    SqlLexer lx;
    SqlToken t;
    sql_lexer_init(&lx, z, (int)n, pos);
    while (sql_lex_next(&lx, &t) == TK_SEMI) {
    }
    if (t.type == TK_EOF) {
        lp_err_setpos(err, LP_BADINPUT, pos, "unexpected end of statement at line %d col %d: %s",
                      line, col, zWhat);
    } else {
        const char *zNear = z + pos;
        size_t nLeft = n - (size_t)pos;
        size_t m = nLeft < NEAR_MAX ? nLeft : NEAR_MAX;
        const char *pNul = memchr(zNear, 0, m);
        if (pNul) m = (size_t)(pNul - zNear); /* a NUL would end the message */
        int bCut = m < nLeft;
        /* Do not split a UTF-8 character: back up to its lead byte. */
        for (int k = 0; bCut && k < 3 && m > 0 && ((unsigned char)zNear[m] & 0xC0) == 0x80; k++) m--;
        while (m > 0 && (zNear[m - 1] == ' ' || zNear[m - 1] == '\t' || zNear[m - 1] == '\n' ||
                         zNear[m - 1] == '\r')) {
            m--;
        }
        lp_err_setpos(err, LP_BADINPUT, pos, "near '%.*s%s' at line %d col %d: %s", (int)m, zNear,
                      bCut ? "..." : "", line, col, zWhat);
    }
    err->detail = SQL_ER_PARSE_ERROR;
    return LP_BADINPUT;
}

int sql_syntax_error(LpError *err, const char *z, size_t n, int pos, const char *zFmt, ...) {
    va_list ap;
    va_start(ap, zFmt);
    int rc = syntax_errorv(err, z, n, pos, zFmt, ap);
    va_end(ap);
    return rc;
}

/* Records a syntax error at pos (unless one is recorded already). Returns
** NULL so that expression parsers can `return fail_at(...)`. */
__attribute__((format(printf, 3, 4))) static void *fail_at(Parser *p, int pos, const char *zFmt,
                                                           ...) {
    if (p->rc) return NULL;
    va_list ap;
    va_start(ap, zFmt);
    p->rc = syntax_errorv(p->err, p->z, (size_t)p->n, pos, zFmt, ap);
    va_end(ap);
    return NULL;
}

/* "expected <zWhat>" at the current token; a lexical error there wins, as
** it is the real cause. At the end of the input the error points just
** past the last token, not past trailing whitespace and comments. */
static void *expected(Parser *p, const char *zWhat) {
    if (p->tok.type == TK_ERROR) return fail_at(p, p->tok.pos, "%s", sql_lex_errmsg(p->tok.sub));
    return fail_at(p, p->tok.type == TK_EOF ? p->prevEnd : p->tok.pos, "expected %s", zWhat);
}

static void *nomem(Parser *p) {
    if (!p->rc) p->rc = lp_err_set(p->err, LP_NOMEM, "out of memory while parsing the statement");
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Tokens                                                              */

/* Moves to the next token. Lexical errors are not reported here: the
** TK_ERROR token becomes the current one, matches nothing, and the first
** "expected ..." at it reports the lexer's message instead. */
static void advance(Parser *p) {
    p->prevEnd = p->tok.pos + p->tok.len;
    if (p->bAhead) {
        p->tok = p->ahead;
        p->bAhead = 0;
    } else {
        sql_lex_next(&p->lex, &p->tok);
    }
}

/* The token after the current one, lexed once and kept for advance(). */
static const SqlToken *peek(Parser *p) {
    if (!p->bAhead) {
        sql_lex_next(&p->lex, &p->ahead);
        p->bAhead = 1;
    }
    return &p->ahead;
}

static int tok_is_kw(const SqlToken *t, int kw) { return t->type == TK_ID && t->sub == kw; }
static int is_kw(Parser *p, int kw) { return tok_is_kw(&p->tok, kw); }

static int accept_kw(Parser *p, int kw) {
    if (!is_kw(p, kw)) return 0;
    advance(p);
    return 1;
}

static int accept(Parser *p, int type) {
    if (p->tok.type != type) return 0;
    advance(p);
    return 1;
}

/* Consumes keyword kw or fails with "expected KW". Returns p->rc. */
static int expect_kw(Parser *p, int kw) {
    if (!accept_kw(p, kw)) expected(p, sql_keyword_name(kw));
    return p->rc;
}

/* Consumes a token of the given type or fails with "expected <zWhat>". */
static int expect(Parser *p, int type, const char *zWhat) {
    if (!accept(p, type)) expected(p, zWhat);
    return p->rc;
}

/* A token usable as a table, column, function or alias name. */
static int is_name(const SqlToken *t) {
    return t->type == TK_QID || (t->type == TK_ID && !sql_keyword_reserved(t->sub));
}

/* A token usable as an option key, a column type or a flag: any word. */
static int is_word(const SqlToken *t) { return t->type == TK_ID || t->type == TK_QID; }

/* The text of a name token (ID or QID) copied into the arena, unquoted,
** lower-cased when bLower (ASCII only: identifiers are ASCII unless
** backquoted, and a backquoted UTF-8 name keeps its bytes). */
static char *tok_name(Parser *p, const SqlToken *t, int bLower) {
    char *zOut;
    size_t n;
    if (t->type == TK_QID) {
        zOut = arena_alloc(p->a, (size_t)t->len);
        if (!zOut) return nomem(p);
        n = sql_lex_unquote(p->z + t->pos, t->len, zOut);
        /* Names are C strings: a NUL would silently cut one short. */
        if (n == 0) return fail_at(p, t->pos, "a name cannot be empty");
        if (memchr(zOut, 0, n)) return fail_at(p, t->pos, "a name cannot contain a NUL byte");
    } else {
        n = (size_t)t->len;
        zOut = arena_strndup(p->a, p->z + t->pos, n);
        if (!zOut) return nomem(p);
    }
    if (bLower) {
        for (size_t i = 0; i < n; i++) {
            if (zOut[i] >= 'A' && zOut[i] <= 'Z') zOut[i] += 'a' - 'A';
        }
    }
    return zOut;
}

/* Decodes a TK_STRING token into the arena. */
static char *tok_string(Parser *p, const SqlToken *t, size_t *pn) {
    char *zOut = arena_alloc(p->a, (size_t)t->len); /* value + NUL <= text */
    if (!zOut) return nomem(p);
    if (t->sub) {
        *pn = sql_lex_unquote(p->z + t->pos, t->len, zOut);
    } else {
        *pn = (size_t)t->len - 2;
        memcpy(zOut, p->z + t->pos + 1, *pn);
        zOut[*pn] = 0;
    }
    return zOut;
}

/* Returns array a (elements of sz bytes, n used, capacity *pCap) with room
** for one more element: a itself, or a copy twice as large in the arena
** (the old copy is simply abandoned). NULL when out of memory. */
static void *grow(Parser *p, void *a, int n, int *pCap, size_t sz) {
    if (n < *pCap) return a;
    if (*pCap > INT_MAX / 2) return nomem(p);
    int nCap = *pCap ? *pCap * 2 : 4;
    void *aNew = arena_alloc(p->a, (size_t)nCap * sz);
    if (!aNew) return nomem(p);
    if (n) memcpy(aNew, a, (size_t)n * sz);
    *pCap = nCap;
    return aNew;
}

/* Appends x to the arena array arr (n used, capacity cap); evaluates to
** LP_OK or p->rc. */
#define PUSH(p, arr, n, cap, x)                                                     \
    (((arr) = grow((p), (arr), (n), &(cap), sizeof(*(arr)))) == NULL ? (p)->rc    \
                                                                    : ((arr)[(n)++] = (x), LP_OK))

/* ------------------------------------------------------------------ */
/* Expressions                                                         */

static Expr *parse_expr(Parser *p);
static Expr *parse_unary(Parser *p);

/* A zeroed node covering the source text [pos, end). */
static Expr *new_expr(Parser *p, ExprKind kind, int pos, int end) {
    Expr *e = arena_zalloc(p->a, sizeof(Expr));
    if (!e) return nomem(p);
    e->kind = kind;
    e->pos = pos;
    e->len = end - pos;
    return e;
}

/* Sets p->h to h, or fails when the tree would grow too tall. */
static int set_height(Parser *p, int h, int pos) {
    if (h > SQL_MAX_EXPR_HEIGHT) {
        fail_at(p, pos, "expression too complex (more than %d nested operators)", SQL_MAX_EXPR_HEIGHT);
        return p->rc;
    }
    p->h = h;
    return LP_OK;
}

/* Counts one more level of grammar recursion; fails past the limit. */
static int nest_in(Parser *p) {
    if (++p->nest > SQL_MAX_NESTING) {
        fail_at(p, p->tok.pos, "expression nested too deeply (more than %d levels)", SQL_MAX_NESTING);
        return p->rc;
    }
    return LP_OK;
}

/* l op r; hl is the height of l (p->h holds r's). */
static Expr *binary(Parser *p, ExprOp op, Expr *l, Expr *r, int hl) {
    if (set_height(p, (hl > p->h ? hl : p->h) + 1, l->pos)) return NULL;
    Expr *e = new_expr(p, EXPR_BINARY, l->pos, r->pos + r->len);
    if (!e) return NULL;
    e->u.binary.op = op;
    e->u.binary.pLeft = l;
    e->u.binary.pRight = r;
    return e;
}

/* op pArg, the operator at pos; p->h holds pArg's height. */
static Expr *unary(Parser *p, ExprOp op, int pos, Expr *pArg) {
    if (set_height(p, p->h + 1, pos)) return NULL;
    Expr *e = new_expr(p, EXPR_UNARY, pos, pArg->pos + pArg->len);
    if (!e) return NULL;
    e->u.unary.op = op;
    e->u.unary.pArg = pArg;
    return e;
}

/* The numeric literal at tok; bNeg when a '-' at pos precedes it. */
static Expr *parse_number(Parser *p, int pos, int bNeg) {
    const SqlToken t = p->tok;
    const char *zText = p->z + t.pos;
    int nShow = t.len > 64 ? 64 : t.len; /* how much of a huge literal an error shows */
    Expr *e;
    if (t.type == TK_INT) {
        uint64_t u;
        uint64_t uMax = bNeg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        if (!sql_lex_uint(zText, t.len, &u) || u > uMax) {
            /* Beyond int64: a float, as MySQL reads such a literal as a
            ** DECIMAL. Comparisons then work (no id equals it) and storing
            ** it in an integer column is a range error, not a syntax error. */
            double f;
            int ok = sql_lex_double(zText, t.len, &f);
            if (ok < 0) return nomem(p);
            if (!ok) {
                return fail_at(p, pos, "integer %s%.*s%s out of range", bNeg ? "-" : "", nShow,
                               zText, nShow < t.len ? "..." : "");
            }
            e = new_expr(p, EXPR_FLOAT, pos, t.pos + t.len);
            if (!e) return NULL;
            e->u.f = bNeg ? -f : f;
            advance(p);
            p->h = 1;
            return e;
        }
        e = new_expr(p, EXPR_INT, pos, t.pos + t.len);
        if (!e) return NULL;
        /* -(2^63) has no positive counterpart: build it without overflow. */
        e->u.i = !bNeg ? (int64_t)u : u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    } else {
        double f;
        int ok = sql_lex_double(zText, t.len, &f);
        if (ok < 0) return nomem(p);
        if (!ok) {
            return fail_at(p, pos, "number %s%.*s%s out of range", bNeg ? "-" : "", nShow, zText,
                           nShow < t.len ? "..." : "");
        }
        e = new_expr(p, EXPR_FLOAT, pos, t.pos + t.len);
        if (!e) return NULL;
        e->u.f = bNeg ? -f : f;
    }
    advance(p);
    p->h = 1;
    return e;
}

/* '(' expr ')' or '(' expr ',' expr {',' expr} ')' — tok is '('. */
static Expr *parse_paren(Parser *p) {
    int pos = p->tok.pos;
    advance(p);
    Expr *e = parse_expr(p);
    if (!e) return NULL;
    if (p->tok.type != TK_COMMA) {
        if (expect(p, TK_RP, "')'")) return NULL;
        /* The parentheses become part of the expression's source text, as
        ** MySQL names a column after "(a+b)". */
        e->len = p->prevEnd - pos;
        e->pos = pos;
        p->pParen = e;
        return e;
    }
    Expr **aItem = NULL;
    int nItem = 0, nCap = 0, h = p->h;
    if (PUSH(p, aItem, nItem, nCap, e)) return NULL;
    while (accept(p, TK_COMMA)) {
        e = parse_expr(p);
        if (!e || PUSH(p, aItem, nItem, nCap, e)) return NULL;
        if (p->h > h) h = p->h;
    }
    if (expect(p, TK_RP, "',' or ')'")) return NULL;
    if (set_height(p, h + 1, pos)) return NULL;
    e = new_expr(p, EXPR_LIST, pos, p->prevEnd);
    if (!e) return NULL;
    e->u.list.aItem = aItem;
    e->u.list.nItem = nItem;
    return e;
}

/* An expression where a parenthesised single value is a one-element list
** and () an empty one (a VALUES row value, a SET value, a function
** argument). */
static Expr *parse_listable(Parser *p) {
    int bParen = p->tok.type == TK_LP;
    if (bParen && peek(p)->type == TK_RP) { /* () : an empty multi-value */
        int pos = p->tok.pos;
        advance(p);
        advance(p);
        Expr *pList = new_expr(p, EXPR_LIST, pos, p->prevEnd);
        if (!pList) return NULL;
        pList->u.list.aItem = NULL;
        pList->u.list.nItem = 0;
        return pList;
    }
    Expr *e = parse_expr(p);
    if (!e || !bParen || e != p->pParen) return e;
    /* e is exactly "( x )": wrap x in a list over the same text. */
    if (set_height(p, p->h + 1, e->pos)) return NULL;
    Expr *pList = new_expr(p, EXPR_LIST, e->pos, e->pos + e->len);
    Expr **aItem = arena_alloc(p->a, sizeof(Expr *));
    if (!pList || !aItem) return nomem(p);
    aItem[0] = e;
    pList->u.list.aItem = aItem;
    pList->u.list.nItem = 1;
    return pList;
}

/* key '=' value {',' key '=' value} up to the closing token (tok is the
** opening one). The value is parse_expr in {…} and in OPTION (…). */
static int parse_map_items(Parser *p, int closeType, const char *zClose, SqlMapItem **paItem,
                           int *pnItem, int *pH) {
    SqlMapItem *aItem = NULL;
    int nItem = 0, nCap = 0, h = 0;
    advance(p);
    if (p->tok.type != closeType) {
        do {
            if (!is_word(&p->tok)) return expected(p, "an option name"), p->rc;
            SqlMapItem it = {.pos = p->tok.pos};
            it.zName = tok_name(p, &p->tok, 1);
            if (!it.zName) return p->rc;
            advance(p);
            if (expect(p, TK_EQ, "'='")) return p->rc;
            it.pValue = parse_expr(p);
            if (!it.pValue || PUSH(p, aItem, nItem, nCap, it)) return p->rc;
            if (p->h > h) h = p->h;
        } while (accept(p, TK_COMMA));
    }
    if (expect(p, closeType, zClose)) return p->rc;
    *paItem = aItem;
    *pnItem = nItem;
    *pH = h;
    return LP_OK;
}

/* '{' [name '=' expr {',' …}] '}' — tok is '{'. */
static Expr *parse_brace_map(Parser *p) {
    int pos = p->tok.pos;
    SqlMapItem *aItem;
    int nItem, h;
    if (nest_in(p)) return NULL;
    if (parse_map_items(p, TK_RBRACE, "',' or '}'", &aItem, &nItem, &h)) return NULL;
    p->nest--;
    if (set_height(p, h + 1, pos)) return NULL;
    Expr *e = new_expr(p, EXPR_MAP, pos, p->prevEnd);
    if (!e) return NULL;
    e->u.map.aItem = aItem;
    e->u.map.nItem = nItem;
    return e;
}

/* name '(' [ '*' | [DISTINCT] arg {',' arg} ] ')' — tok is the name. */
static Expr *parse_call(Parser *p) {
    int pos = p->tok.pos;
    const char *zName = tok_name(p, &p->tok, 1);
    if (!zName) return NULL;
    advance(p); /* name */
    advance(p); /* '(' */
    if (nest_in(p)) return NULL;
    Expr **aArg = NULL;
    int nArg = 0, nCap = 0, h = 0, bDistinct = 0, bFor = 0;
    if (p->tok.type == TK_STAR) {
        Expr *e = new_expr(p, EXPR_STAR, p->tok.pos, p->tok.pos + 1);
        if (!e || PUSH(p, aArg, nArg, nCap, e)) return NULL;
        advance(p);
    } else {
        bDistinct = accept_kw(p, KW_DISTINCT);
        if (bDistinct || p->tok.type != TK_RP) {
            do {
                Expr *e = parse_listable(p);
                if (!e || PUSH(p, aArg, nArg, nCap, e)) return NULL;
                if (p->h > h) h = p->h;
            } while (accept(p, TK_COMMA));
        }
        /* Manticore's ANY(cond FOR x IN j.arr): the name and the array
        ** follow the condition as two more arguments */
        if (nArg == 1 && !bDistinct && is_kw(p, KW_FOR)) {
            advance(p);
            if (!is_name(&p->tok)) return expected(p, "a name for the array's element (FOR x IN ...)");
            Expr *v = new_expr(p, EXPR_COLUMN, p->tok.pos, p->tok.pos + p->tok.len);
            if (!v || !(v->u.zName = tok_name(p, &p->tok, 1)) || PUSH(p, aArg, nArg, nCap, v)) return NULL;
            advance(p);
            if (!accept_kw(p, KW_IN)) return expected(p, "IN and the array (FOR x IN j.arr)");
            Expr *arr = parse_expr(p);
            if (!arr || PUSH(p, aArg, nArg, nCap, arr)) return NULL;
            if (p->h > h) h = p->h;
            bFor = 1;
        }
    }
    if (expect(p, TK_RP, nArg ? "',' or ')'" : "')'")) return NULL;
    p->nest--;
    if (set_height(p, h + 1, pos)) return NULL;
    Expr *e = new_expr(p, EXPR_FUNC, pos, p->prevEnd);
    if (!e) return NULL;
    e->u.func.zName = zName;
    e->u.func.aArg = aArg;
    e->u.func.nArg = nArg;
    e->u.func.bDistinct = bDistinct;
    e->u.func.bFor = bFor;
    /* MATCH('...') AS text, knn(...) AS dense: names for fusion_weights */
    if ((!strcmp(zName, "match") || !strcmp(zName, "knn")) && accept_kw(p, KW_AS)) {
        if (!is_name(&p->tok)) return expected(p, "a name for the search (fusion_weights refers to it)");
        e->u.func.aliasPos = p->tok.pos;
        if (!(e->u.func.zAlias = tok_name(p, &p->tok, 1))) return NULL;
        advance(p);
    }
    return e;
}

static int parse_count(Parser *p, int64_t *pn);

/* A column reference: name, then a JSON path of steps '.' word, '['
** integer ']' or '[' 'string' ']' (Manticore's j.a.b, j.tags[0],
** j['a b']). The name is lower-cased; the keys keep their case (JSON's
** are case-sensitive). What a path means is the executor's to say. */
static Expr *parse_column(Parser *p) {
    int pos = p->tok.pos;
    char *zName = tok_name(p, &p->tok, 1);
    if (!zName) return NULL;
    advance(p);
    ExprPathStep *aPath = NULL;
    int nPath = 0, capPath = 0;
    for (;;) {
        ExprPathStep st = {NULL, 0, -1};
        if (p->tok.type == TK_DOT && is_word(peek(p))) {
            advance(p);
            if (!(st.zKey = tok_name(p, &p->tok, 0))) return NULL;
            st.nKey = strlen(st.zKey);
            advance(p);
        } else if (p->tok.type == TK_LBRACKET) {
            advance(p);
            if (p->tok.type == TK_STRING) {
                if (!(st.zKey = tok_string(p, &p->tok, &st.nKey))) return NULL;
                advance(p);
            } else if (p->tok.type == TK_INT) {
                if (parse_count(p, &st.iIndex)) return NULL;
            } else {
                return expected(p, "an array index or a quoted key inside [ ]");
            }
            if (expect(p, TK_RBRACKET, "']'")) return NULL;
        } else {
            break;
        }
        if (PUSH(p, aPath, nPath, capPath, st)) return NULL;
    }
    Expr *e = new_expr(p, EXPR_COLUMN, pos, p->prevEnd);
    if (!e) return NULL;
    e->u.zName = zName;
    e->aPath = aPath;
    e->nPath = nPath;
    p->h = 1;
    return e;
}

/* A literal, variable, name, call, parenthesised expression, list or map. */
static Expr *parse_primary(Parser *p) {
    const SqlToken t = p->tok;
    Expr *e;
    switch (t.type) {
    case TK_INT:
    case TK_FLOAT:
        return parse_number(p, t.pos, 0);
    case TK_STRING:
        e = new_expr(p, EXPR_STRING, t.pos, t.pos + t.len);
        if (!e) return NULL;
        e->u.s.z = tok_string(p, &t, &e->u.s.n);
        if (!e->u.s.z) return NULL;
        break;
    case TK_SYSVAR: {
        /* @@name or @@scope.name: the name follows the '.', if any. */
        const char *zTok = p->z + t.pos;
        const char *pDot = memchr(zTok, '.', (size_t)t.len);
        int iName = pDot ? (int)(pDot - zTok) + 1 : 2;
        SqlToken nameTok = {TK_ID, 0, t.pos + iName, t.len - iName};
        e = new_expr(p, EXPR_SYSVAR, t.pos, t.pos + t.len);
        if (!e || !(e->u.var.zName = tok_name(p, &nameTok, 1))) return NULL;
        e->u.var.scope = t.sub;
        break;
    }
    case TK_USERVAR: {
        SqlToken nameTok = {TK_ID, 0, t.pos + 1, t.len - 1};
        e = new_expr(p, EXPR_USERVAR, t.pos, t.pos + t.len);
        if (!e || !(e->u.var.zName = tok_name(p, &nameTok, 1))) return NULL;
        break;
    }
    case TK_LP:
        return parse_paren(p);
    case TK_LBRACE:
        return parse_brace_map(p);
    case TK_ID:
        if (t.sub == KW_NULL || t.sub == KW_TRUE || t.sub == KW_FALSE) {
            e = new_expr(p, t.sub == KW_NULL ? EXPR_NULL : EXPR_INT, t.pos, t.pos + t.len);
            if (!e) return NULL;
            e->u.i = t.sub == KW_TRUE;
            break;
        }
        /* IN(x, 1, 2): Manticore's function form of x IN (1, 2) */
        if (sql_keyword_reserved(t.sub) && !(t.sub == KW_IN && peek(p)->type == TK_LP)) {
            return expected(p, "an expression");
        }
        /* fall through */
    case TK_QID:
        if (peek(p)->type == TK_LP) return parse_call(p);
        return parse_column(p);
    default:
        return expected(p, "an expression");
    }
    advance(p);
    p->h = 1;
    return e;
}

/* unary := ('-'|'+') number | ('-'|'+'|'!') unary | primary. '!' binds
** this tightly (as in MySQL); NOT binds looser than comparisons. */
static Expr *parse_unary(Parser *p) {
    int type = p->tok.type;
    if (type != TK_MINUS && type != TK_PLUS && type != TK_BANG) return parse_primary(p);
    int pos = p->tok.pos;
    if (type != TK_BANG) {
        int tNext = peek(p)->type;
        if (tNext == TK_INT || tNext == TK_FLOAT) {
            /* Folded into the literal, so -9223372036854775808 fits. */
            advance(p);
            return parse_number(p, pos, type == TK_MINUS);
        }
    }
    if (nest_in(p)) return NULL;
    advance(p);
    Expr *pArg = parse_unary(p);
    if (!pArg) return NULL;
    p->nest--;
    return unary(p, type == TK_MINUS ? OP_NEG : type == TK_PLUS ? OP_PLUS : OP_NOT, pos, pArg);
}

/* The binary levels below are loops, not recursion, so a long chain such
** as a+b+c+... costs no stack; it builds a left-deep tree (left-associative
** operators) whose height set_height() caps. */
static Expr *parse_mul(Parser *p) {
    Expr *l = parse_unary(p);
    while (l) {
        ExprOp op;
        switch (p->tok.type) {
        case TK_STAR: op = OP_MUL; break;
        case TK_SLASH: op = OP_DIV; break;
        case TK_PERCENT: op = OP_MOD; break;
        case TK_ID:
            op = p->tok.sub == KW_DIV ? OP_IDIV : p->tok.sub == KW_MOD ? OP_MOD : OP_NONE;
            break;
        default: op = OP_NONE; break;
        }
        if (op == OP_NONE) break;
        int hl = p->h;
        advance(p);
        Expr *r = parse_unary(p);
        if (!r) return NULL;
        l = binary(p, op, l, r, hl);
    }
    return l;
}

static Expr *parse_add(Parser *p) {
    Expr *l = parse_mul(p);
    while (l && (p->tok.type == TK_PLUS || p->tok.type == TK_MINUS)) {
        ExprOp op = p->tok.type == TK_PLUS ? OP_ADD : OP_SUB;
        int hl = p->h;
        advance(p);
        Expr *r = parse_mul(p);
        if (!r) return NULL;
        l = binary(p, op, l, r, hl);
    }
    return l;
}

/* l := sub { tok sub }, left-deep, each step op. */
static Expr *parse_chain(Parser *p, Expr *(*sub)(Parser *), int tok, ExprOp op) {
    Expr *l = sub(p);
    while (l && p->tok.type == tok) {
        int hl = p->h;
        advance(p);
        Expr *r = sub(p);
        if (!r) return NULL;
        l = binary(p, op, l, r, hl);
    }
    return l;
}

/* bits := add { '&' add }; bitor := bits { '|' bits }: MySQL's levels,
** between the arithmetic and the comparisons (Manticore's & and |). */
static Expr *parse_bitand(Parser *p) {
    return parse_chain(p, parse_add, TK_AMP, OP_BITAND);
}

static Expr *parse_bitor(Parser *p) {
    return parse_chain(p, parse_bitand, TK_PIPE, OP_BITOR);
}

static ExprOp cmp_op(int type) {
    switch (type) {
    case TK_EQ: return OP_EQ;
    case TK_NE: return OP_NE;
    case TK_LT: return OP_LT;
    case TK_LE: return OP_LE;
    case TK_GT: return OP_GT;
    case TK_GE: return OP_GE;
    default: return OP_NONE;
    }
}

/* x [NOT] IN '(' expr {',' expr} ')' — tok is IN. */
static Expr *parse_in(Parser *p, Expr *l, int bNot) {
    int h = p->h;
    advance(p);
    if (expect(p, TK_LP, "'('")) return NULL;
    Expr **aList = NULL;
    int nList = 0, nCap = 0;
    do {
        Expr *e = parse_expr(p);
        if (!e || PUSH(p, aList, nList, nCap, e)) return NULL;
        if (p->h > h) h = p->h;
    } while (accept(p, TK_COMMA));
    if (expect(p, TK_RP, "',' or ')'")) return NULL;
    if (set_height(p, h + 1, l->pos)) return NULL;
    Expr *e = new_expr(p, EXPR_IN, l->pos, p->prevEnd);
    if (!e) return NULL;
    e->u.in.pLeft = l;
    e->u.in.aList = aList;
    e->u.in.nList = nList;
    e->u.in.bNot = bNot;
    return e;
}

/* cmp := bitor { cmpop bitor | IS [NOT] NULL | [NOT] IN (...) | [NOT]
** BETWEEN bitor AND bitor }. The bounds of BETWEEN are parsed below the
** logical level, so in "a BETWEEN 1 AND 2 AND b" the second AND is the
** logical one. */
static Expr *parse_cmp(Parser *p) {
    Expr *l = parse_bitor(p);
    while (l) {
        int hl = p->h;
        ExprOp op = cmp_op(p->tok.type);
        if (op != OP_NONE) {
            advance(p);
            Expr *r = parse_bitor(p);
            if (!r) return NULL;
            l = binary(p, op, l, r, hl);
            continue;
        }
        if (is_kw(p, KW_IS)) {
            advance(p);
            int bNot = accept_kw(p, KW_NOT);
            if (!is_kw(p, KW_NULL)) return expected(p, bNot ? "NULL" : "NULL or NOT NULL");
            advance(p);
            if (set_height(p, hl + 1, l->pos)) return NULL;
            Expr *e = new_expr(p, EXPR_ISNULL, l->pos, p->prevEnd);
            if (!e) return NULL;
            e->u.isnull.pArg = l;
            e->u.isnull.bNot = bNot;
            l = e;
            continue;
        }
        int bNot = 0;
        if (is_kw(p, KW_NOT)) {
            const SqlToken *pNext = peek(p);
            if (!tok_is_kw(pNext, KW_IN) && !tok_is_kw(pNext, KW_BETWEEN)) break;
            bNot = 1;
            advance(p);
        }
        if (is_kw(p, KW_IN)) {
            l = parse_in(p, l, bNot);
        } else if (is_kw(p, KW_BETWEEN)) {
            advance(p);
            Expr *pLow = parse_bitor(p);
            if (!pLow) return NULL;
            int hLow = p->h;
            if (expect_kw(p, KW_AND)) return NULL;
            Expr *pHigh = parse_bitor(p);
            if (!pHigh) return NULL;
            int h = hl > hLow ? hl : hLow;
            if (p->h > h) h = p->h;
            if (set_height(p, h + 1, l->pos)) return NULL;
            Expr *e = new_expr(p, EXPR_BETWEEN, l->pos, p->prevEnd);
            if (!e) return NULL;
            e->u.between.pLeft = l;
            e->u.between.pLow = pLow;
            e->u.between.pHigh = pHigh;
            e->u.between.bNot = bNot;
            l = e;
        } else {
            break;
        }
    }
    return l;
}

/* not := NOT not | cmp. Recursive (NOT NOT x), hence counted by nest_in. */
static Expr *parse_not(Parser *p) {
    if (!is_kw(p, KW_NOT)) return parse_cmp(p);
    int pos = p->tok.pos;
    if (nest_in(p)) return NULL;
    advance(p);
    Expr *pArg = parse_not(p);
    if (!pArg) return NULL;
    p->nest--;
    return unary(p, OP_NOT, pos, pArg);
}

static Expr *parse_and(Parser *p) {
    Expr *l = parse_not(p);
    while (l && (is_kw(p, KW_AND) || p->tok.type == TK_ANDAND)) {
        int hl = p->h;
        advance(p);
        Expr *r = parse_not(p);
        if (!r) return NULL;
        l = binary(p, OP_AND, l, r, hl);
    }
    return l;
}

static Expr *parse_or(Parser *p) {
    Expr *l = parse_and(p);
    while (l && (is_kw(p, KW_OR) || p->tok.type == TK_OROR)) {
        int hl = p->h;
        advance(p);
        Expr *r = parse_and(p);
        if (!r) return NULL;
        l = binary(p, OP_OR, l, r, hl);
    }
    return l;
}

/* expr: the entry of every sub-expression, so the nesting of parentheses,
** lists and call arguments is counted here. */
static Expr *parse_expr(Parser *p) {
    if (nest_in(p)) return NULL;
    Expr *e = parse_or(p);
    p->nest--;
    return e;
}

/* ------------------------------------------------------------------ */
/* Pieces shared by statements                                         */

/* table := name ['.' name]; the database part is dropped. */
static int parse_table(Parser *p, const char **pzTable, int *pPos) {
    if (!is_name(&p->tok)) return expected(p, "a table name"), p->rc;
    if (peek(p)->type == TK_DOT) {
        advance(p);
        advance(p);
        if (!is_word(&p->tok)) return expected(p, "a table name"), p->rc;
    }
    *pPos = p->tok.pos;
    *pzTable = tok_name(p, &p->tok, 1);
    if (!*pzTable) return p->rc;
    advance(p);
    return LP_OK;
}

/* A column or database name. */
static int parse_name(Parser *p, const char *zWhat, const char **pz, int *pPos) {
    if (!is_name(&p->tok)) return expected(p, zWhat), p->rc;
    if (pPos) *pPos = p->tok.pos;
    *pz = tok_name(p, &p->tok, 1);
    if (!*pz) return p->rc;
    advance(p);
    return LP_OK;
}

/* OPTION name = value {, …} — tok is OPTION. A parenthesised value is a
** map: OPTION field_weights=(title=10, body=3). */
static int parse_options(Parser *p, SqlMapItem **paOpt, int *pnOpt) {
    SqlMapItem *aOpt = NULL;
    int nOpt = 0, nCap = 0;
    advance(p);
    do {
        if (!is_word(&p->tok)) return expected(p, "an option name"), p->rc;
        SqlMapItem it = {.pos = p->tok.pos};
        it.zName = tok_name(p, &p->tok, 1);
        if (!it.zName) return p->rc;
        advance(p);
        if (expect(p, TK_EQ, "'='")) return p->rc;
        if (p->tok.type == TK_LP) {
            int pos = p->tok.pos, h;
            SqlMapItem *aItem;
            int nItem;
            if (parse_map_items(p, TK_RP, "',' or ')'", &aItem, &nItem, &h)) return p->rc;
            if (set_height(p, h + 1, pos)) return p->rc;
            it.pValue = new_expr(p, EXPR_MAP, pos, p->prevEnd);
            if (!it.pValue) return p->rc;
            it.pValue->u.map.aItem = aItem;
            it.pValue->u.map.nItem = nItem;
        } else {
            it.pValue = parse_unary(p);
            if (!it.pValue) return p->rc;
        }
        if (PUSH(p, aOpt, nOpt, nCap, it)) return p->rc;
    } while (accept(p, TK_COMMA));
    *paOpt = aOpt;
    *pnOpt = nOpt;
    return LP_OK;
}

/* A non-negative integer literal (LIMIT, OFFSET). */
static int parse_count(Parser *p, int64_t *pn) {
    if (p->tok.type != TK_INT) return expected(p, "a number"), p->rc;
    SqlToken t = p->tok;
    Expr *e = parse_number(p, p->tok.pos, 0);
    if (!e) return p->rc;
    if (e->kind != EXPR_INT) { /* beyond int64: parse_number made it a float */
        int nShow = t.len > 64 ? 64 : t.len;
        return fail_at(p, t.pos, "integer %.*s%s out of range", nShow, p->z + t.pos,
                       nShow < t.len ? "..." : ""),
               p->rc;
    }
    *pn = e->u.i;
    return LP_OK;
}

/* After the statement: optional ';'s, then the end. */
static int finish(Parser *p, const char *zWhat) {
    if (p->rc) return p->rc;
    if (p->tok.type == TK_SEMI) {
        while (accept(p, TK_SEMI)) {
        }
        if (p->tok.type != TK_EOF) {
            fail_at(p, p->tok.pos, "multiple statements are not supported (multi-statement mode is off)");
        }
    } else if (p->tok.type != TK_EOF) {
        expected(p, zWhat);
    }
    return p->rc;
}

/* ------------------------------------------------------------------ */
/* SELECT                                                              */

/* BY expr [ASC|DESC] {, ...} after ORDER (a SELECT's, a FACET's). */
static int parse_order_by(Parser *p, OrderItem **paOrder, int *pnOrder) {
    if (expect_kw(p, KW_BY)) return p->rc;
    int n = 0, cap = 0;
    do {
        OrderItem it = {0};
        if (!(it.pExpr = parse_expr(p))) return p->rc;
        if (!accept_kw(p, KW_ASC)) it.bDesc = accept_kw(p, KW_DESC);
        if (PUSH(p, *paOrder, n, cap, it)) return p->rc;
    } while (accept(p, TK_COMMA));
    *pnOrder = n;
    return LP_OK;
}

/* n, off, n or n OFFSET off after LIMIT. */
static int parse_limit(Parser *p, int64_t *piOffset, int64_t *piLimit) {
    int64_t a = 0;
    if (parse_count(p, &a)) return p->rc;
    if (accept(p, TK_COMMA)) {
        *piOffset = a;
        return parse_count(p, piLimit);
    }
    *piLimit = a;
    return accept_kw(p, KW_OFFSET) ? parse_count(p, piOffset) : LP_OK;
}

/* SELECT item {, item} [FROM table] [WHERE] [GROUP [N] BY [WITHIN GROUP ORDER
** BY] [HAVING]] [ORDER BY]
** [LIMIT] [OPTION] {FACET ...}, clauses in that order. FROM is optional: clients send
** "SELECT @@version_comment LIMIT 1" and "SELECT DATABASE()". */
static int parse_select(Parser *p, SelectStmt *s) {
    int nItem = 0, nCap = 0;
    advance(p); /* SELECT */
    s->iLimit = -1;
    do {
        SelectItem it = {0};
        if (!accept(p, TK_STAR)) {
            it.pExpr = parse_expr(p);
            if (!it.pExpr) return p->rc;
            /* The alias keeps its case: it names the result column. */
            if (accept_kw(p, KW_AS)) {
                if (p->tok.type == TK_STRING) {
                    size_t nAlias;
                    it.zAlias = tok_string(p, &p->tok, &nAlias);
                } else if (is_name(&p->tok)) {
                    it.zAlias = tok_name(p, &p->tok, 0);
                } else {
                    return expected(p, "an alias"), p->rc;
                }
                if (!it.zAlias) return p->rc;
                advance(p);
            } else if (is_name(&p->tok)) {
                it.zAlias = tok_name(p, &p->tok, 0);
                if (!it.zAlias) return p->rc;
                advance(p);
            }
        }
        if (PUSH(p, s->aItem, nItem, nCap, it)) return p->rc;
    } while (accept(p, TK_COMMA));
    s->nItem = nItem;

    /* What may follow each clause, for "expected …" when nothing fits. */
    const char *zNext = "FROM";
    if (accept_kw(p, KW_FROM)) {
        if (parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
        zNext = "WHERE, GROUP BY, ORDER BY, LIMIT, OPTION or end of statement";
    }
    if (accept_kw(p, KW_WHERE)) {
        s->pWhere = parse_expr(p);
        if (!s->pWhere) return p->rc;
        zNext = "GROUP BY, ORDER BY, LIMIT, OPTION or end of statement";
    }
    s->nGroupRows = 1;
    if (accept_kw(p, KW_GROUP)) {
        /* GROUP [N] BY keys [WITHIN GROUP ORDER BY ...] [HAVING ...], the
        ** last two in either order */
        if (p->tok.type == TK_INT) {
            int pos = p->tok.pos;
            if (parse_count(p, &s->nGroupRows)) return p->rc;
            if (s->nGroupRows < 1 || s->nGroupRows > 1000) {
                return fail_at(p, pos, "GROUP N BY takes N from 1 to 1000"), p->rc;
            }
        }
        if (expect_kw(p, KW_BY)) return p->rc;
        int n = 0, cap = 0;
        do {
            Expr *e = parse_expr(p);
            if (!e || PUSH(p, s->aGroupBy, n, cap, e)) return p->rc;
        } while (accept(p, TK_COMMA));
        s->nGroupBy = n;
        for (;;) {
            if (!s->aWithin && accept_kw(p, KW_WITHIN)) {
                if (expect_kw(p, KW_GROUP) || expect_kw(p, KW_ORDER)) return p->rc;
                if (parse_order_by(p, &s->aWithin, &s->nWithin)) return p->rc;
            } else if (!s->pHaving && accept_kw(p, KW_HAVING)) {
                if (!(s->pHaving = parse_expr(p))) return p->rc;
            } else {
                break;
            }
        }
        zNext = s->aWithin && s->pHaving ? "ORDER BY, LIMIT, OPTION or end of statement"
                : s->aWithin ? "HAVING, ORDER BY, LIMIT, OPTION or end of statement"
                : s->pHaving ? "WITHIN GROUP ORDER BY, ORDER BY, LIMIT, OPTION or end of statement"
                             : "WITHIN GROUP ORDER BY, HAVING, ORDER BY, LIMIT, OPTION or end of statement";
    }
    if (accept_kw(p, KW_ORDER)) {
        if (parse_order_by(p, &s->aOrder, &s->nOrder)) return p->rc;
        zNext = "ASC, DESC, LIMIT, OPTION or end of statement";
    }
    if (accept_kw(p, KW_LIMIT)) {
        if (parse_limit(p, &s->iOffset, &s->iLimit)) return p->rc;
        zNext = "OPTION, FACET or end of statement";
    }
    if (is_kw(p, KW_OPTION)) {
        if (parse_options(p, &s->aOption, &s->nOption)) return p->rc;
        zNext = "',', FACET or end of statement";
    }
    /* FACET expr [AS alias] {, ...} [BY expr {, expr}] [DISTINCT column]
    ** [ORDER BY ...] [LIMIT [off,] n], at the end */
    int nFacet = 0, capFacet = 0;
    while (accept_kw(p, KW_FACET)) {
        FacetClause f = {0};
        f.iLimit = -1;
        int capItem = 0, capBy = 0;
        do {
            SelectItem it = {0};
            if (!(it.pExpr = parse_expr(p))) return p->rc;
            if (accept_kw(p, KW_AS)) {
                if (!is_name(&p->tok)) return expected(p, "an alias"), p->rc;
                if (!(it.zAlias = tok_name(p, &p->tok, 0))) return p->rc;
                advance(p);
            }
            if (PUSH(p, f.aItem, f.nItem, capItem, it)) return p->rc;
        } while (accept(p, TK_COMMA));
        if (accept_kw(p, KW_BY)) {
            do {
                Expr *e = parse_expr(p);
                if (!e || PUSH(p, f.aBy, f.nBy, capBy, e)) return p->rc;
            } while (accept(p, TK_COMMA));
        }
        if (accept_kw(p, KW_DISTINCT)) {
            if (!is_name(&p->tok)) return expected(p, "a column name after DISTINCT"), p->rc;
            if (!(f.pDistinct = parse_expr(p))) return p->rc;
        }
        if (accept_kw(p, KW_ORDER) && parse_order_by(p, &f.aOrder, &f.nOrder)) return p->rc;
        if (accept_kw(p, KW_LIMIT) && parse_limit(p, &f.iOffset, &f.iLimit)) return p->rc;
        if (PUSH(p, s->aFacet, nFacet, capFacet, f)) return p->rc;
        s->nFacet = nFacet;
        zNext = "FACET or end of statement";
    }
    return finish(p, zNext);
}

/* ------------------------------------------------------------------ */
/* INSERT, REPLACE, DELETE, UPDATE                                     */

/* (INSERT|REPLACE) [INTO] table [(col, ...)] VALUES (v, ...) {, (...)}.
** Row values are full expressions; a parenthesised value is a vector. */
static int parse_insert(Parser *p, InsertStmt *s) {
    s->bReplace = is_kw(p, KW_REPLACE);
    advance(p);
    accept_kw(p, KW_INTO);
    if (parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
    if (accept(p, TK_LP)) {
        int n = 0, cap = 0, capPos = 0;
        do {
            const char *zCol;
            int pos = 0;
            if (parse_name(p, "a column name", &zCol, &pos)) return p->rc;
            int nPos = n;
            if (PUSH(p, s->azCol, n, cap, zCol) || PUSH(p, s->aColPos, nPos, capPos, pos)) return p->rc;
        } while (accept(p, TK_COMMA));
        s->nCol = n;
        if (expect(p, TK_RP, "',' or ')'")) return p->rc;
        if (expect_kw(p, KW_VALUES)) return p->rc;
    } else if (!accept_kw(p, KW_VALUES)) {
        return expected(p, "VALUES or a column list"), p->rc;
    }
    int nRow = 0, capRow = 0, capN = 0, capPos = 0;
    do {
        Expr **aVal = NULL;
        int nVal = 0, capVal = 0;
        int rowPos = p->tok.pos;
        if (expect(p, TK_LP, "'('")) return p->rc;
        if (p->tok.type != TK_RP) {
            do {
                Expr *e = parse_listable(p);
                if (!e || PUSH(p, aVal, nVal, capVal, e)) return p->rc;
            } while (accept(p, TK_COMMA));
        }
        if (expect(p, TK_RP, "',' or ')'")) return p->rc;
        int n1 = nRow, n2 = nRow;
        if (PUSH(p, s->aaRow, nRow, capRow, aVal) || PUSH(p, s->anRowVal, n1, capN, nVal) ||
            PUSH(p, s->aRowPos, n2, capPos, rowPos)) {
            return p->rc;
        }
    } while (accept(p, TK_COMMA));
    s->nRow = nRow;
    return finish(p, "',' or end of statement");
}

/* DELETE FROM table [WHERE expr]. Whether a WHERE is required is the
** executor's decision. */
static int parse_delete(Parser *p, DeleteStmt *s) {
    advance(p);
    if (expect_kw(p, KW_FROM)) return p->rc;
    if (parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
    if (accept_kw(p, KW_WHERE)) {
        s->pWhere = parse_expr(p);
        if (!s->pWhere) return p->rc;
        return finish(p, "end of statement");
    }
    return finish(p, "WHERE or end of statement");
}

/* UPDATE table SET col = expr {, ...} [WHERE expr] [OPTION ...]. */
static int parse_update(Parser *p, UpdateStmt *s) {
    advance(p);
    if (parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
    if (expect_kw(p, KW_SET)) return p->rc;
    int n = 0, cap = 0;
    do {
        SqlMapItem it = {0};
        if (!is_name(&p->tok)) return expected(p, "a column name"), p->rc;
        it.pos = p->tok.pos;
        Expr *c = parse_column(p); /* a name, or a JSON column's path: j.a[0] */
        if (!c) return p->rc;
        it.zName = c->u.zName;
        it.aPath = c->aPath;
        it.nPath = c->nPath;
        if (expect(p, TK_EQ, "'='")) return p->rc;
        it.pValue = parse_listable(p);
        if (!it.pValue || PUSH(p, s->aSet, n, cap, it)) return p->rc;
    } while (accept(p, TK_COMMA));
    s->nSet = n;
    const char *zNext = "',', WHERE, OPTION or end of statement";
    if (accept_kw(p, KW_WHERE)) {
        s->pWhere = parse_expr(p);
        if (!s->pWhere) return p->rc;
        zNext = "OPTION or end of statement";
    }
    if (is_kw(p, KW_OPTION)) {
        if (parse_options(p, &s->aOption, &s->nOption)) return p->rc;
        zNext = "',' or end of statement";
    }
    return finish(p, zNext);
}

/* ------------------------------------------------------------------ */
/* CREATE, DROP, TRUNCATE                                              */

/* word '=' value, for column and table options — tok is the word. */
static int parse_kv(Parser *p, SqlMapItem *pItem) {
    pItem->pos = p->tok.pos;
    pItem->zName = tok_name(p, &p->tok, 1);
    if (!pItem->zName) return p->rc;
    advance(p);
    if (expect(p, TK_EQ, "'='")) return p->rc;
    pItem->pValue = parse_unary(p);
    return p->rc;
}

/* name type {flag | key = value}. The type and flags are any words (the
** executor validates them), so new types need no parser change. */
static int parse_coldef(Parser *p, ColumnDef *c) {
    if (parse_name(p, "a column name", &c->zName, &c->pos)) return p->rc;
    if (p->tok.type != TK_ID) return expected(p, "a column type"), p->rc;
    c->typePos = p->tok.pos;
    c->zType = tok_name(p, &p->tok, 1);
    if (!c->zType) return p->rc;
    advance(p);
    int nFlag = 0, capFlag = 0, capFlagPos = 0, nOpt = 0, capOpt = 0;
    /* Bare words are flags (indexed, stored); word = value is an option. */
    while (p->tok.type == TK_ID) {
        if (peek(p)->type == TK_EQ) {
            SqlMapItem it;
            if (parse_kv(p, &it) || PUSH(p, c->aOpt, nOpt, capOpt, it)) return p->rc;
        } else {
            int pos = p->tok.pos, nPos = nFlag;
            const char *zFlag = tok_name(p, &p->tok, 1);
            if (!zFlag || PUSH(p, c->azFlag, nFlag, capFlag, zFlag) ||
                PUSH(p, c->aFlagPos, nPos, capFlagPos, pos)) {
                return p->rc;
            }
            advance(p);
        }
    }
    c->nFlag = nFlag;
    c->nOpt = nOpt;
    return LP_OK;
}


/* Table options (name = 'value'), separated by spaces or commas, as long
** as a name follows: CREATE TABLE's, ALTER TABLE's. */
static int parse_table_options(Parser *p, SqlMapItem **paOpt, int *pnOpt) {
    int nOpt = 0, capOpt = 0;
    while (p->tok.type == TK_ID || (nOpt && p->tok.type == TK_COMMA)) {
        if (accept(p, TK_COMMA) && p->tok.type != TK_ID) return expected(p, "a table option"), p->rc;
        SqlMapItem it;
        if (parse_kv(p, &it) || PUSH(p, *paOpt, nOpt, capOpt, it)) return p->rc;
    }
    *pnOpt = nOpt;
    return LP_OK;
}
/* CREATE TABLE [IF NOT EXISTS] table (coldef {, coldef}) {[,] key = value}.
** "IF" is not reserved (IF() is a function), so it means IF NOT EXISTS
** only when NOT follows; "CREATE TABLE if (...)" makes a table "if". */
static int parse_create(Parser *p, CreateTableStmt *s) {
    advance(p);
    if (expect_kw(p, KW_TABLE)) return p->rc;
    if (is_kw(p, KW_IF) && tok_is_kw(peek(p), KW_NOT)) {
        advance(p);
        advance(p);
        if (expect_kw(p, KW_EXISTS)) return p->rc;
        s->bIfNotExists = 1;
    }
    if (parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
    if (expect(p, TK_LP, "'('")) return p->rc;
    int n = 0, cap = 0;
    do {
        ColumnDef c = {0};
        if (parse_coldef(p, &c) || PUSH(p, s->aCol, n, cap, c)) return p->rc;
    } while (accept(p, TK_COMMA));
    s->nCol = n;
    if (expect(p, TK_RP, "',' or ')'")) return p->rc;
    if (parse_table_options(p, &s->aOpt, &s->nOpt)) return p->rc;
    return finish(p, s->nOpt ? "a table option or end of statement"
                             : "a table option (name = 'value') or end of statement");
}

/* DROP TABLE [IF EXISTS] table. */
static int parse_drop(Parser *p, DropTableStmt *s) {
    advance(p);
    if (expect_kw(p, KW_TABLE)) return p->rc;
    if (is_kw(p, KW_IF) && tok_is_kw(peek(p), KW_EXISTS)) {
        advance(p);
        advance(p);
        s->bIfExists = 1;
    }
    if (parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
    return finish(p, "end of statement");
}

/* ALTER TABLE table ( ADD [COLUMN] coldef | DROP [COLUMN] name
** | MODIFY [COLUMN] coldef | REBUILD EMBEDDINGS name | options ). */
static int parse_alter(Parser *p, AlterTableStmt *s) {
    advance(p);
    if (expect_kw(p, KW_TABLE)) return p->rc;
    if (parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
    if (accept_kw(p, KW_ADD)) {
        s->kind = ALTER_ADD_COLUMN;
        accept_kw(p, KW_COLUMN);
        if (parse_coldef(p, &s->col)) return p->rc;
    } else if (accept_kw(p, KW_MODIFY)) {
        s->kind = ALTER_MODIFY_COLUMN;
        accept_kw(p, KW_COLUMN);
        if (parse_coldef(p, &s->col)) return p->rc;
    } else if (accept_kw(p, KW_DROP)) {
        s->kind = ALTER_DROP_COLUMN;
        accept_kw(p, KW_COLUMN);
        if (parse_name(p, "a column name", &s->zColumn, &s->colPos)) return p->rc;
    } else if (accept_kw(p, KW_REBUILD)) {
        s->kind = ALTER_REBUILD_EMBEDDINGS;
        if (expect_kw(p, KW_EMBEDDINGS)) return p->rc;
        if (parse_name(p, "a vector column name", &s->zColumn, &s->colPos)) return p->rc;
    } else if (p->tok.type == TK_ID && peek(p)->type == TK_EQ) {
        s->kind = ALTER_SET_OPTIONS;
        if (parse_table_options(p, &s->aOpt, &s->nOpt)) return p->rc;
        return finish(p, "a table option or end of statement");
    } else {
        return expected(p, "ADD COLUMN, DROP COLUMN, MODIFY COLUMN, REBUILD EMBEDDINGS or a table option "
                           "(name = 'value')"), p->rc;
    }
    return finish(p, "end of statement");
}

/* TRUNCATE [TABLE] table [WITH RECONFIGURE]. */
static int parse_truncate(Parser *p, DropTableStmt *s) {
    advance(p);
    accept_kw(p, KW_TABLE);
    if (parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
    if (accept_kw(p, KW_WITH)) {
        /* Manticore's WITH RECONFIGURE: nothing to reconfigure here. */
        if (expect_kw(p, KW_RECONFIGURE)) return p->rc;
        return finish(p, "end of statement");
    }
    return finish(p, "WITH RECONFIGURE or end of statement");
}

/* FLUSH (TABLE | RAMCHUNK) table. */
static int parse_flush(Parser *p, DropTableStmt *s) {
    advance(p);
    if (!accept_kw(p, KW_TABLE) && !accept_kw(p, KW_RAMCHUNK)) {
        return expected(p, "TABLE or RAMCHUNK"), p->rc;
    }
    if (parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
    return finish(p, "end of statement");
}

/* OPTIMIZE TABLE table [OPTION …]. */
static int parse_optimize(Parser *p, OptimizeStmt *s) {
    advance(p);
    if (expect_kw(p, KW_TABLE)) return p->rc;
    if (parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
    if (is_kw(p, KW_OPTION) && parse_options(p, &s->aOption, &s->nOption)) return p->rc;
    return finish(p, "OPTION or end of statement");
}

/* ------------------------------------------------------------------ */
/* SHOW, DESCRIBE                                                      */

/* [LIKE 'pattern'] */
static int parse_like(Parser *p, ShowStmt *s) {
    if (!accept_kw(p, KW_LIKE)) return LP_OK;
    if (p->tok.type != TK_STRING) return expected(p, "a string"), p->rc;
    size_t nLike;
    s->zLike = tok_string(p, &p->tok, &nLike);
    if (!s->zLike) return p->rc;
    advance(p);
    return LP_OK;
}

/* SHOW VARIABLES WHERE Variable_name = 'x' | LIKE 'p' — tok is WHERE.
** '=' becomes a LIKE pattern that matches x alone (its %, _ and \ are
** escaped). */
static int parse_show_where(Parser *p, ShowStmt *s) {
    advance(p);
    const char *zName = NULL;
    if (is_name(&p->tok) && !(zName = tok_name(p, &p->tok, 1))) return p->rc;
    if (!zName || strcmp(zName, "variable_name") != 0) {
        return expected(p, "Variable_name = 'name' or Variable_name LIKE 'pattern'"), p->rc;
    }
    advance(p);
    if (is_kw(p, KW_LIKE)) return parse_like(p, s);
    if (expect(p, TK_EQ, "'=' or LIKE")) return p->rc;
    if (p->tok.type != TK_STRING) return expected(p, "a string"), p->rc;
    size_t n;
    const char *zVal = tok_string(p, &p->tok, &n);
    char *zLike = zVal ? arena_alloc(p->a, 2 * n + 1) : NULL;
    if (!zLike) return nomem(p), p->rc;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (zVal[i] == '%' || zVal[i] == '_') zLike[o++] = '\\';
        zLike[o++] = zVal[i];
    }
    zLike[o] = 0;
    s->zLike = zLike;
    advance(p);
    return LP_OK;
}

/* SHOW ...: an optional scope (VARIABLES and STATUS only) or FULL (TABLES
** and COLUMNS only), then the kind word. */
static int parse_show(Parser *p, ShowStmt *s) {
    advance(p);
    if (is_kw(p, KW_GLOBAL)) {
        s->scope = 2;
    } else if (is_kw(p, KW_SESSION) || is_kw(p, KW_LOCAL)) {
        s->scope = 1;
    }
    if (s->scope) {
        advance(p);
        if (!is_kw(p, KW_VARIABLES) && !is_kw(p, KW_STATUS)) {
            return expected(p, "VARIABLES or STATUS"), p->rc;
        }
    }
    if (accept_kw(p, KW_FULL)) {
        s->bFull = 1;
        if (!is_kw(p, KW_TABLES) && !is_kw(p, KW_COLUMNS) && !is_kw(p, KW_FIELDS)) {
            return expected(p, "TABLES or COLUMNS"), p->rc;
        }
    }
    int kw = p->tok.type == TK_ID ? p->tok.sub : KW_NONE;
    switch (kw) {
    case KW_TABLES:
        s->kind = SHOW_TABLES;
        advance(p);
        if (accept_kw(p, KW_FROM) || accept_kw(p, KW_IN)) {
            const char *zDb; /* loupe has one database: any name shows it */
            if (parse_name(p, "a database name", &zDb, NULL)) return p->rc;
        }
        if (parse_like(p, s)) return p->rc;
        return finish(p, "LIKE or end of statement");
    case KW_CREATE:
        s->kind = SHOW_CREATE_TABLE;
        advance(p);
        if (expect_kw(p, KW_TABLE) || parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
        return finish(p, "end of statement");
    case KW_COLUMNS:
    case KW_FIELDS:
        s->kind = SHOW_DESCRIBE;
        advance(p);
        if (!accept_kw(p, KW_FROM) && !accept_kw(p, KW_IN)) return expected(p, "FROM"), p->rc;
        if (parse_table(p, &s->zTable, &s->tablePos) || parse_like(p, s)) return p->rc;
        return finish(p, "LIKE or end of statement");
    case KW_VARIABLES:
        s->kind = SHOW_VARIABLES;
        advance(p);
        if (is_kw(p, KW_WHERE)) {
            if (parse_show_where(p, s)) return p->rc;
            return finish(p, "end of statement");
        }
        if (parse_like(p, s)) return p->rc;
        return finish(p, "LIKE, WHERE or end of statement");
    case KW_STATUS:
    case KW_DATABASES:
    case KW_META:
    case KW_COLLATION:
    case KW_CHARSET:
        s->kind = kw == KW_STATUS      ? SHOW_STATUS
                  : kw == KW_DATABASES ? SHOW_DATABASES
                  : kw == KW_META      ? SHOW_META
                  : kw == KW_COLLATION ? SHOW_COLLATION
                                       : SHOW_CHARSET;
        advance(p);
        if (parse_like(p, s)) return p->rc;
        return finish(p, "LIKE or end of statement");
    case KW_CHARACTER:
        s->kind = SHOW_CHARSET;
        advance(p);
        if (expect_kw(p, KW_SET) || parse_like(p, s)) return p->rc;
        return finish(p, "LIKE or end of statement");
    case KW_WARNINGS:
    case KW_ENGINES:
    case KW_PLAN:
    case KW_PROFILE:
        s->kind = kw == KW_WARNINGS ? SHOW_WARNINGS
                  : kw == KW_ENGINES ? SHOW_ENGINES
                  : kw == KW_PLAN    ? SHOW_PLAN
                                     : SHOW_PROFILE;
        advance(p);
        return finish(p, "end of statement");
    case KW_TABLE:
        advance(p);
        if (parse_table(p, &s->zTable, &s->tablePos)) return p->rc;
        if (accept_kw(p, KW_SETTINGS)) {
            s->kind = SHOW_TABLE_SETTINGS;
            return finish(p, "end of statement");
        }
        s->kind = SHOW_TABLE_STATUS;
        if (!is_kw(p, KW_STATUS)) return expected(p, "STATUS or SETTINGS"), p->rc;
        advance(p);
        if (parse_like(p, s)) return p->rc;
        return finish(p, "LIKE or end of statement");
    default:
        return expected(p, "TABLES, CREATE TABLE, COLUMNS, VARIABLES, STATUS, DATABASES, META, "
                           "PLAN, PROFILE, WARNINGS, COLLATION, CHARACTER SET, ENGINES or TABLE"),
               p->rc;
    }
}

/* DESCRIBE table / DESC table [LIKE 'pattern']: SHOW COLUMNS by another
** name. DESC is reserved (ORDER BY x DESC) but starts a statement here. */
static int parse_describe(Parser *p, ShowStmt *s) {
    advance(p);
    s->kind = SHOW_DESCRIBE;
    if (parse_table(p, &s->zTable, &s->tablePos) || parse_like(p, s)) return p->rc;
    return finish(p, "LIKE or end of statement");
}

/* ------------------------------------------------------------------ */
/* SET                                                                 */

/* The charset of SET NAMES / CHARACTER SET: 'x', x or DEFAULT. A name
** becomes a string (as written); DEFAULT stays the word default. */
static Expr *parse_charset(Parser *p) {
    const SqlToken t = p->tok;
    if (t.type == TK_STRING) return parse_primary(p);
    if (tok_is_kw(&t, KW_DEFAULT)) return parse_column(p);
    if (!is_name(&t)) return expected(p, "a character set name");
    Expr *e = new_expr(p, EXPR_STRING, t.pos, t.pos + t.len);
    if (!e || !(e->u.s.z = tok_name(p, &t, 0))) return NULL;
    e->u.s.n = strlen(e->u.s.z);
    advance(p);
    return e;
}

/* A word that might be a SET modifier (GLOBAL, NAMES...) is one unless an
** assignment follows it (SET names = 1 sets a variable called names). */
static int is_set_word(Parser *p, int kw) {
    if (!is_kw(p, kw)) return 0;
    int t = peek(p)->type;
    return t != TK_EQ && t != TK_COLON;
}

/* SET item {, item}. The special forms (NAMES, CHARACTER SET, CHARSET,
** TRANSACTION) become ordinary items with fixed names, so the executor
** sees a flat list of assignments. */
static int parse_set(Parser *p, SetStmt *s) {
    advance(p);
    int n = 0, cap = 0;
    int scope = 0; /* a scope word applies to the assignments after it */
    do {
        if (is_set_word(p, KW_GLOBAL)) {
            scope = 2;
            advance(p);
        } else if (is_set_word(p, KW_SESSION) || is_set_word(p, KW_LOCAL)) {
            scope = 1;
            advance(p);
        }
        SetItem it = {.pos = p->tok.pos, .scope = scope};
        if (is_set_word(p, KW_TRANSACTION)) {
            /* The isolation level or access mode, kept as text. */
            advance(p);
            int start = p->tok.pos;
            if (p->tok.type == TK_EOF || p->tok.type == TK_SEMI) {
                return expected(p, "ISOLATION LEVEL, READ WRITE or READ ONLY"), p->rc;
            }
            while (p->tok.type != TK_EOF && p->tok.type != TK_SEMI) {
                if (p->tok.type == TK_ERROR) return expected(p, ""), p->rc;
                advance(p);
            }
            it.zName = "transaction";
            it.pValue = new_expr(p, EXPR_STRING, start, p->prevEnd);
            if (!it.pValue) return p->rc;
            it.pValue->u.s.n = (size_t)(p->prevEnd - start);
            it.pValue->u.s.z = arena_strndup(p->a, p->z + start, it.pValue->u.s.n);
            if (!it.pValue->u.s.z) return nomem(p), p->rc;
        } else if (is_set_word(p, KW_NAMES)) {
            advance(p);
            it.zName = "names";
            if (!(it.pValue = parse_charset(p))) return p->rc;
            if (accept_kw(p, KW_COLLATE)) {
                if (PUSH(p, s->aItem, n, cap, it)) return p->rc;
                it = (SetItem){.zName = "collation_connection", .pos = p->tok.pos, .scope = scope};
                if (!(it.pValue = parse_charset(p))) return p->rc;
            }
        } else if ((is_kw(p, KW_CHARACTER) && tok_is_kw(peek(p), KW_SET)) || is_set_word(p, KW_CHARSET)) {
            if (is_kw(p, KW_CHARACTER)) advance(p);
            advance(p);
            it.zName = "character_set";
            if (!(it.pValue = parse_charset(p))) return p->rc;
        } else {
            const SqlToken t = p->tok;
            if (t.type == TK_SYSVAR || t.type == TK_USERVAR) {
                Expr *pVar = parse_primary(p);
                if (!pVar) return p->rc;
                it.zName = pVar->u.var.zName;
                it.scope = t.type == TK_USERVAR ? 3 : pVar->u.var.scope;
            } else if (parse_name(p, "a variable name", &it.zName, NULL)) {
                return p->rc;
            }
            /* '=' or MySQL's ':=' */
            if (p->tok.type == TK_COLON && peek(p)->type == TK_EQ) advance(p);
            if (expect(p, TK_EQ, "'='")) return p->rc;
            it.pValue = parse_expr(p);
            if (!it.pValue) return p->rc;
        }
        if (PUSH(p, s->aItem, n, cap, it)) return p->rc;
    } while (accept(p, TK_COMMA));
    s->nItem = n;
    return finish(p, "',' or end of statement");
}

/* ------------------------------------------------------------------ */
/* Entry point                                                         */

/* CALL name '(' arg [AS name] {',' arg [AS name]} ')' — tok is CALL. An
** argument is an expression or a parenthesised list (CALL SNIPPETS'
** documents); what the arguments mean is the executor's business. */
static int parse_call_stmt(Parser *p, CallStmt *c) {
    advance(p);
    if (parse_name(p, "a procedure name (KEYWORDS or SNIPPETS)", &c->zName, &c->namePos)) return p->rc;
    if (expect(p, TK_LP, "'('")) return p->rc;
    int n = 0, capArg = 0, capAs = 0, capPos = 0;
    if (p->tok.type != TK_RP) {
        do {
            Expr *e = parse_listable(p);
            if (!e) return p->rc;
            const char *zAs = NULL;
            int asPos = -1;
            if (accept_kw(p, KW_AS)) {
                if (!is_word(&p->tok)) return expected(p, "an option name after AS"), p->rc;
                asPos = p->tok.pos;
                if (!(zAs = tok_name(p, &p->tok, 1))) return p->rc;
                advance(p);
            }
            int nA = n, nP = n;
            if (PUSH(p, c->aArg, n, capArg, e) || PUSH(p, c->azAs, nA, capAs, zAs) ||
                PUSH(p, c->aAsPos, nP, capPos, asPos)) {
                return p->rc;
            }
        } while (accept(p, TK_COMMA));
    }
    c->nArg = n;
    if (expect(p, TK_RP, n ? "',' or ')'" : "')'")) return p->rc;
    return finish(p, "end of statement");
}

/* BEGIN [WORK], COMMIT [WORK], ROLLBACK [WORK]: tok is the verb. */
static int parse_txn(Parser *p) {
    advance(p);
    if (accept_kw(p, KW_WORK)) return finish(p, "end of statement");
    return finish(p, "WORK or end of statement");
}

int sql_parse(Arena *a, const char *z, size_t n, SqlStmt **ppStmt, LpError *err) {
    *ppStmt = NULL;
    if (n >= INT_MAX) {
        lp_err_set(err, LP_BADINPUT, "statement too long (%zu bytes)", n);
        if (err) err->detail = SQL_ER_PARSE_ERROR;
        return LP_BADINPUT;
    }
    Parser p = {.a = a, .z = z, .n = (int)n, .err = err};
    sql_lexer_init(&p.lex, z, (int)n, 0);
    sql_lex_next(&p.lex, &p.tok);
    while (p.tok.type == TK_SEMI) advance(&p);
    if (p.tok.type == TK_EOF) {
        lp_err_set(err, LP_BADINPUT, "query was empty");
        if (err) err->detail = SQL_ER_EMPTY_QUERY;
        return LP_BADINPUT;
    }
    SqlStmt *s = arena_zalloc(a, sizeof(SqlStmt));
    if (!s) return nomem(&p), p.rc;
    s->zSql = z;
    s->nSql = n;
    int kw = p.tok.type == TK_ID ? p.tok.sub : KW_NONE;
    switch (kw) {
    case KW_SELECT:
        s->kind = STMT_SELECT;
        parse_select(&p, &s->u.select);
        break;
    case KW_EXPLAIN:
        /* EXPLAIN SELECT …: the plan without running it */
        advance(&p);
        if (p.tok.type != TK_ID || p.tok.sub != KW_SELECT) {
            expected(&p, "SELECT after EXPLAIN");
            break;
        }
        s->kind = STMT_EXPLAIN;
        parse_select(&p, &s->u.select);
        break;
    case KW_INSERT:
    case KW_REPLACE:
        s->kind = STMT_INSERT;
        parse_insert(&p, &s->u.insert);
        break;
    case KW_DELETE:
        s->kind = STMT_DELETE;
        parse_delete(&p, &s->u.del);
        break;
    case KW_UPDATE:
        s->kind = STMT_UPDATE;
        parse_update(&p, &s->u.update);
        break;
    case KW_CREATE:
        s->kind = STMT_CREATE_TABLE;
        parse_create(&p, &s->u.create);
        break;
    case KW_DROP:
        s->kind = STMT_DROP_TABLE;
        parse_drop(&p, &s->u.drop);
        break;
    case KW_ALTER:
        s->kind = STMT_ALTER_TABLE;
        parse_alter(&p, &s->u.alter);
        break;
    case KW_TRUNCATE:
        s->kind = STMT_TRUNCATE;
        parse_truncate(&p, &s->u.truncate);
        break;
    case KW_FLUSH:
        s->kind = STMT_FLUSH;
        parse_flush(&p, &s->u.flush);
        break;
    case KW_OPTIMIZE:
        s->kind = STMT_OPTIMIZE;
        parse_optimize(&p, &s->u.optimize);
        break;
    case KW_SHOW:
        s->kind = STMT_SHOW;
        parse_show(&p, &s->u.show);
        break;
    case KW_DESCRIBE:
    case KW_DESC:
        s->kind = STMT_SHOW;
        parse_describe(&p, &s->u.show);
        break;
    case KW_SET:
        s->kind = STMT_SET;
        parse_set(&p, &s->u.set);
        break;
    case KW_BEGIN:
        s->kind = STMT_BEGIN;
        parse_txn(&p);
        break;
    case KW_START:
        s->kind = STMT_BEGIN;
        advance(&p);
        if (!expect_kw(&p, KW_TRANSACTION)) finish(&p, "end of statement");
        break;
    case KW_COMMIT:
        s->kind = STMT_COMMIT;
        parse_txn(&p);
        break;
    case KW_ROLLBACK:
        s->kind = STMT_ROLLBACK;
        parse_txn(&p);
        break;
    case KW_CALL:
        s->kind = STMT_CALL;
        parse_call_stmt(&p, &s->u.call);
        break;
    case KW_USE:
        s->kind = STMT_USE;
        advance(&p);
        if (!parse_name(&p, "a database name", &s->u.use.zName, NULL)) finish(&p, "end of statement");
        break;
    default:
        expected(&p, "a statement (SELECT, INSERT, SHOW...)");
        break;
    }
    if (p.rc) return p.rc;
    *ppStmt = s;
    return LP_OK;
}
