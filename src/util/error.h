/*
** error.h — status codes and the error record every fallible call fills.
**
** Contract. A fallible function returns `int rc`: LP_OK (0) on success or
** one of the LP_* codes below. When it fails and its caller passed a
** non-NULL `LpError *err`, it also fills err with the same code, a
** human-readable message that says what went wrong and where (statement
** position, file and offset, column name...), and optionally a position.
** On success err is left untouched. Messages are plain text, no trailing
** newline, truncated to LP_ERRMSG_MAX-1 bytes.
**
** `detail` is free for the layer that reports the error to a client: the
** SQL layer stores the MySQL error number there (1064 for a syntax error,
** 1146 for an unknown table...). Lower layers leave it 0.
**
** Thread safety: an LpError belongs to one caller; nothing here is shared.
*/
#ifndef LP_UTIL_ERROR_H
#define LP_UTIL_ERROR_H

#include <stdarg.h>
#include <stdint.h>

enum {
    LP_OK = 0,          /* success */
    LP_NOMEM,           /* an allocation failed; the operation had no effect */
    LP_BADINPUT,        /* the caller's input is invalid (syntax, type, range) */
    LP_NOTFOUND,        /* the named object does not exist */
    LP_EXISTS,          /* the object already exists (table, duplicate id) */
    LP_RANGE,           /* a value is out of the range its type allows */
    LP_CORRUPT,         /* a file or packet is damaged; message names where */
    LP_IOERR,           /* a system call on a file or socket failed */
    LP_UNSUPPORTED,     /* valid but not implemented (yet) */
    LP_LIMIT,           /* a configured limit was hit (size, count, time) */
    LP_BUSY,            /* a resource is in use; retrying later may work */
    LP_INTERNAL,        /* an invariant broke: a bug, reported not crashed */
    LP_NCODES
};

#define LP_ERRMSG_MAX 512

typedef struct LpError {
    int code;                   /* LP_* code, LP_OK when clear */
    int detail;                 /* layer-specific sub-code (MySQL errno), or 0 */
    int64_t pos;                /* byte offset the error refers to, or -1 */
    char zMsg[LP_ERRMSG_MAX];   /* NUL-terminated message */
} LpError;

/* Resets err to "no error". err may be NULL. */
void lp_err_clear(LpError *err);

/* Fills err (when non-NULL) with code and a printf-style message and
** returns code, so that `return lp_err_set(err, LP_BADINPUT, "...")` works.
** pos is set to -1; use lp_err_setpos for a positioned error. */
int lp_err_set(LpError *err, int code, const char *zFmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As lp_err_set, with a byte position. */
int lp_err_setpos(LpError *err, int code, int64_t pos, const char *zFmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prepends "<context>: " to err's message (keeps code and pos). Used on the
** way up to add the file name, table name or statement. Returns err->code. */
int lp_err_prefix(LpError *err, const char *zFmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A short constant name for a code: "NOMEM", "BADINPUT"... */
const char *lp_code_name(int code);

/* "Impossible but survivable" checks, as SQLite's ALWAYS()/NEVER(): in
** debug builds they assert, in release builds they evaluate to the
** condition so the caller can return LP_INTERNAL instead of crashing. */
#ifdef NDEBUG
#define ALWAYS(x) (x)
#define NEVER(x) (x)
#else
#include <assert.h>
#define ALWAYS(x) ((x) ? 1 : (assert(0), 0))
#define NEVER(x) ((x) ? (assert(0), 1) : 0)
#endif

#define LP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* LP_UTIL_ERROR_H */
