/*
** lexer.h — splits SQL text into tokens (SphinxQL / MySQL dialect).
**
** Contract. An SqlLexer walks a byte range (not necessarily NUL-terminated,
** may contain NUL bytes) and hands out one SqlToken per call to
** sql_lex_next(). A token is only a type plus the byte offset and length of
** its source text; nothing is copied or allocated, so lexing cannot fail
** for lack of memory. Values are decoded on demand by the helpers below
** (sql_lex_unquote, sql_lex_uint, sql_lex_double), which the parser calls
** only for the tokens it keeps.
**
** Whitespace and comments are skipped: `-- ` to the end of the line (the
** two dashes must be followed by whitespace, a control character or the end
** of input, as in MySQL, so `5--3` is 5 - -3), `#` to the end of the line,
** and `/ * … * /` (MySQL's executable comments `/ *! … * /` are treated as
** plain comments).
**
** Tokens:
**   TK_ID       identifier: letters, digits, '_', '$'; may start with a
**               digit when it is not all digits (`1st`). When its text is a
**               keyword (case-insensitive), `sub` holds the SqlKeyword.
**   TK_QID      `backquoted` identifier (`` inside stands for `)
**   TK_INT      digits only (the sign is a separate TK_MINUS)
**   TK_FLOAT    1.5  .5  1.  1e10  1.5E-3
**   TK_STRING   '…' or "…" with MySQL's backslash escapes and doubled quotes
**   TK_SYSVAR   @@name, @@session.name, @@global.name, @@local.name;
**               `sub` holds the scope: 0 none, 1 session/local, 2 global
**   TK_USERVAR  @name
**   operators   see SqlTokType; `==` is TK_EQ, `<>` is TK_NE
**   TK_EOF      end of input (pos = length of the input, len 0)
**   TK_ERROR    an unterminated string, backquoted name or comment, or a
**               character that starts no token; `sub` holds the
**               SqlLexError, pos its start, and sql_lex_errmsg() the text.
**               After an error the lexer returns TK_EOF.
**
** Thread safety: an SqlLexer belongs to one thread; the helpers are pure.
*/
#ifndef LP_SQL_LEXER_H
#define LP_SQL_LEXER_H

#include <stddef.h>
#include <stdint.h>

typedef enum SqlTokType {
    TK_EOF = 0,
    TK_ERROR,
    TK_ID,
    TK_QID,
    TK_INT,
    TK_FLOAT,
    TK_STRING,
    TK_SYSVAR,
    TK_USERVAR,
    TK_LP,          /* ( */
    TK_RP,          /* ) */
    TK_COMMA,       /* , */
    TK_SEMI,        /* ; */
    TK_DOT,         /* . */
    TK_STAR,        /* * */
    TK_PLUS,        /* + */
    TK_MINUS,       /* - */
    TK_SLASH,       /* / */
    TK_PERCENT,     /* % */
    TK_EQ,          /* = or == */
    TK_NE,          /* != or <> */
    TK_LT,          /* < */
    TK_LE,          /* <= */
    TK_GT,          /* > */
    TK_GE,          /* >= */
    TK_BANG,        /* ! */
    TK_LBRACE,      /* { */
    TK_RBRACE,      /* } */
    TK_PIPE,        /* | */
    TK_OROR,        /* || */
    TK_AMP,         /* & */
    TK_ANDAND,      /* && */
    TK_TILDE,       /* ~ */
    TK_CARET,       /* ^ */
    TK_COLON,       /* : */
    TK_LBRACKET,    /* [ */
    TK_RBRACKET,    /* ] */
} SqlTokType;

/* The keywords, in alphabetical order (for the reader: the lookup is a
** hash and does not depend on the order). The second column says whether the word is
** reserved: a reserved word cannot be used as a bare table, column,
** function or alias name (it can inside backquotes); the others can, so a
** column may be called `status`, `type`, `value` or `count`. */
#define SQL_KEYWORDS(X)                                                                    \
    X(ADD, 0) X(ALTER, 0) X(AND, 1) X(AS, 1) X(ASC, 1) X(BEGIN, 0) X(BETWEEN, 1) X(BY, 1) X(CALL, 0) X(CHARACTER, 0)       \
    X(CHARSET, 0) X(COLLATE, 0) X(COLLATION, 0) X(COLUMN, 0) X(COLUMNS, 0) X(COMMIT, 0) X(CREATE, 0)   \
    X(DATABASES, 0) X(DEFAULT, 0) X(DELETE, 0) X(DESC, 1) X(DESCRIBE, 0) X(DISTINCT, 1)   \
    X(DIV, 1) X(DROP, 0) X(EMBEDDINGS, 0) X(ENGINES, 0) X(EXISTS, 0) X(EXPLAIN, 0) X(FACET, 0) X(FALSE, 1) X(FIELDS, 0) X(FLUSH, 0) X(FOR, 0) X(FROM, 1)   \
    X(FULL, 0) X(GLOBAL, 0) X(GROUP, 1) X(HAVING, 1) X(IF, 0) X(IN, 1) X(INSERT, 0) X(INTO, 1)         \
    X(IS, 1) X(LIKE, 1) X(LIMIT, 1) X(LOCAL, 0) X(META, 0) X(MOD, 1) X(MODIFY, 0) X(NAMES, 0)          \
    X(NOT, 1) X(NULL, 1) X(OFFSET, 0) X(OPTIMIZE, 0) X(OPTION, 1) X(OR, 1) X(ORDER, 1) X(PLAN, 0) X(PROFILE, 0)                   \
    X(RAMCHUNK, 0) X(REBUILD, 0) X(RECONFIGURE, 0) X(REPLACE, 0) X(ROLLBACK, 0) X(SELECT, 1) X(SESSION, 0) X(SET, 1) X(SETTINGS, 0)   \
    X(SHOW, 0) X(START, 0) X(STATUS, 0) X(TABLE, 1) X(TABLES, 0) X(TRANSACTION, 0)        \
    X(TRUE, 1) X(TRUNCATE, 0) X(UPDATE, 0) X(USE, 0) X(VALUES, 1) X(VARIABLES, 0)         \
    X(WARNINGS, 0) X(WHERE, 1) X(WITH, 0) X(WITHIN, 0) X(WORK, 0)

typedef enum SqlKeyword {
    KW_NONE = 0,
#define SQL_KW_ENUM_(name, reserved) KW_##name,
    SQL_KEYWORDS(SQL_KW_ENUM_)
#undef SQL_KW_ENUM_
    KW_COUNT_
} SqlKeyword;

typedef enum SqlLexError {
    SQL_LEXERR_NONE = 0,
    SQL_LEXERR_STRING,      /* unterminated string */
    SQL_LEXERR_QID,         /* unterminated backquoted identifier */
    SQL_LEXERR_COMMENT,     /* unterminated comment */
    SQL_LEXERR_CHAR,        /* a character that starts no token */
} SqlLexError;

typedef struct SqlToken {
    int type;       /* SqlTokType */
    int sub;        /* TK_ID: SqlKeyword or KW_NONE; TK_SYSVAR: scope;
                    ** TK_STRING/TK_QID: 1 when it holds escapes or doubled
                    ** quotes (else its value is its text minus the quotes);
                    ** TK_ERROR: SqlLexError */
    int pos;        /* byte offset of the first character */
    int len;        /* length in bytes of the source text */
} SqlToken;

typedef struct SqlLexer {
    const char *z;  /* input (not owned) */
    int n;          /* input length */
    int i;          /* offset of the next unread byte */
} SqlLexer;

/* Starts lexing z[0..n) at byte offset iStart. n must fit an int (the
** parser refuses longer statements). */
void sql_lexer_init(SqlLexer *pLex, const char *z, int n, int iStart);

/* Fills *pTok with the next token and returns its type. */
int sql_lex_next(SqlLexer *pLex, SqlToken *pTok);

/* The keyword spelled by z[0..n) (any case), or KW_NONE. */
int sql_keyword(const char *z, int n);
/* The upper-case spelling of a keyword ("SELECT"), "" for KW_NONE. */
const char *sql_keyword_name(int kw);
/* 1 when kw is reserved (see SQL_KEYWORDS), else 0. */
int sql_keyword_reserved(int kw);

/* The message for a TK_ERROR token's sub code: "unterminated string"... */
const char *sql_lex_errmsg(int lexErr);

/* Decodes the value of a TK_STRING or TK_QID token whose source text is
** z[0..n) (quotes included) into zOut, which must have room for n bytes;
** appends a NUL (not counted) and returns the value's length. Strings get
** MySQL's escapes: \0 \' \" \b \n \r \t \Z \\ are decoded, \% and \_ are
** kept as two characters (they are LIKE escapes), any other \x is x, and a
** doubled quote stands for one. In a backquoted name only `` is special. */
size_t sql_lex_unquote(const char *z, int n, char *zOut);

/* Parses the decimal digits z[0..n) into *pu. Returns 1, or 0 when the
** value does not fit 64 unsigned bits. */
int sql_lex_uint(const char *z, int n, uint64_t *pu);

/* Parses the TK_FLOAT text z[0..n) into *pf (with strtod, so the process
** must keep the "C" LC_NUMERIC locale). Returns 1; 0 when the value
** overflows a double (1e999); -1 when out of memory (only a literal of 128
** bytes or more needs a temporary copy). Underflow gives 0 or a denormal. */
int sql_lex_double(const char *z, int n, double *pf);

#endif /* LP_SQL_LEXER_H */
