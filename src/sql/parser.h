/*
** parser.h — SQL text to syntax tree (ast.h), by recursive descent.
**
** Contract. sql_parse() parses exactly one statement of loupe's dialect
** (SphinxQL, MySQL-like; the grammar is spelled out at the top of
** parser.c). A trailing ';' and trailing whitespace or comments are
** accepted; any other text after the statement is an error (multi-statement
** mode is off). Everything the tree holds lives in the caller's arena; the
** tree also points into nothing else except SqlStmt.zSql, which is the
** caller's text (the caller keeps it alive as long as it uses zSql or the
** pos/len offsets).
**
** Errors (err filled, *ppStmt set to NULL):
**   LP_BADINPUT, detail 1064 (MySQL ER_PARSE_ERROR): a syntax error, with
**     err->pos the byte offset of the offending token and a message shaped
**       near 'FORM t' at line 1 col 10: expected FROM
**       unexpected end of statement at line 1 col 15: expected a table name
**     (see sql_syntax_error). This covers lexical errors (unterminated
**     string...), integer literals out of the int64 range, floats out of
**     the double range, and expressions nested more than SQL_MAX_NESTING
**     levels or SQL_MAX_EXPR_HEIGHT operators deep.
**   LP_BADINPUT, detail 1065 (MySQL ER_EMPTY_QUERY): only whitespace,
**     comments or ';' — message "query was empty".
**   LP_NOMEM: the arena could not grow.
** Parsing never reads outside z[0..n) and never recurses deeper than
** SQL_MAX_NESTING levels of the grammar, whatever the input.
**
** Speed: no allocation beyond the arena, no copies of tokens except the
** names and literals the tree keeps.
**
** Thread safety: none needed; everything is in the caller's arena and
** locals. Different threads may parse at once with different arenas.
*/
#ifndef LP_SQL_PARSER_H
#define LP_SQL_PARSER_H

#include <stddef.h>

#include "sql/ast.h"
#include "util/arena.h"
#include "util/error.h"

#define SQL_ER_PARSE_ERROR 1064 /* MySQL's errno for a syntax error */
#define SQL_ER_EMPTY_QUERY 1065 /* MySQL's errno for an empty statement */

/* Parentheses, function calls and unary operators may nest this deep. */
#define SQL_MAX_NESTING 200
/* No expression tree is taller than this: a tree walker that recurses
** (the executor) needs at most this many frames. A chain such as
** a=1 OR a=2 OR ... counts one level per operator. */
#define SQL_MAX_EXPR_HEIGHT 1000

/* Parses the statement z[0..n) (need not be NUL-terminated, may hold NUL
** bytes) into *ppStmt, allocated in a. Returns LP_OK, LP_BADINPUT or
** LP_NOMEM (see above). */
int sql_parse(Arena *a, const char *z, size_t n, SqlStmt **ppStmt, LpError *err);

/* The 1-based line and column of byte offset pos in z[0..n). Lines end at
** '\n'; columns count UTF-8 characters (a continuation byte does not start
** a column). pos is clamped to [0, n]. */
void sql_pos_linecol(const char *z, size_t n, int pos, int *pLine, int *pCol);

/* Fills err with a syntax error at byte offset pos of the statement
** z[0..n): code LP_BADINPUT, detail 1064, err->pos = pos, and the message
**   near '<text>' at line L col C: <what>
** where <text> is the statement from pos on, cut to at most 32 bytes
** (never inside a UTF-8 character, and at a NUL byte) and followed by
** "..." when cut; or, when nothing but whitespace, comments and ';' is left
** from pos on,
**   unexpected end of statement at line L col C: <what>
** <what> is printf-formatted from zFmt. Returns LP_BADINPUT. The executor
** may use it too, for errors that point into the statement text. */
int sql_syntax_error(LpError *err, const char *z, size_t n, int pos, const char *zFmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif /* LP_SQL_PARSER_H */
