/*
** result.h — what executing one SQL statement produces.
**
** Contract. sql_execute() (session.h) fills an SqlResult with exactly one of
**   SQLRES_OK     a statement without rows: affected rows, last insert id,
**                 warnings count, an optional info string;
**   SQLRES_ROWS   a result set: columns (name, type, flags) and rows of
**                 text cells, or NULL cells;
**   SQLRES_ERROR  an error: MySQL error number, SQLSTATE and message.
** Both front ends (server/mysql and server/http) turn it into their wire
** format, so a client sees the same columns, values and messages on both.
**
** Cells are text, already formatted the way the MySQL text protocol sends
** them ("42", "-1.5", "2,0.5,1" for a vector); the column type tells a
** front end how to type them (a JSON number or a string). A NULL cell has
** z == NULL. Everything (names, cells) lives in the result's own arena and
** stays valid until sql_result_reset() or sql_result_free().
**
** Thread safety: an SqlResult belongs to one thread at a time.
*/
#ifndef LP_SQL_RESULT_H
#define LP_SQL_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/error.h"

typedef enum SqlResKind { SQLRES_OK = 0, SQLRES_ROWS, SQLRES_ERROR } SqlResKind;

/* The SQL type of a result column. Front ends map it to a wire type. */
typedef enum SqlColType {
    SQLCOL_BOOL,        /* 0 / 1 */
    SQLCOL_INT,         /* signed 32-bit */
    SQLCOL_BIGINT,      /* signed 64-bit (ids, counts) */
    SQLCOL_FLOAT,       /* 32-bit float */
    SQLCOL_DOUBLE,      /* 64-bit float (computed expressions) */
    SQLCOL_TIMESTAMP,   /* unix seconds, sent as an integer, as Manticore does */
    SQLCOL_STRING,      /* text: STRING and TEXT columns, names, messages */
    SQLCOL_JSON,        /* JSON document as text */
    SQLCOL_VECTOR,      /* float vector as comma-separated text */
    SQLCOL_MULTI,       /* multi-value (MVA) as comma-separated integers */
} SqlColType;

/* Column flags. */
#define SQLCOL_F_NOTNULL  0x01  /* never NULL */
#define SQLCOL_F_PRIKEY   0x02  /* the id column */

typedef struct SqlColumn {
    const char *zName;  /* name shown to the client */
    SqlColType type;
    int flags;          /* SQLCOL_F_* */
    const char *zTable; /* table the column comes from, or "" */
} SqlColumn;

typedef struct SqlCell {
    const char *z;      /* formatted value, NUL-terminated; NULL for SQL NULL */
    uint32_t n;         /* length in bytes */
} SqlCell;

typedef struct SqlResult {
    SqlResKind kind;
    Arena arena;            /* owns every string and array below */

    /* SQLRES_OK */
    uint64_t nAffected;     /* rows inserted / replaced / updated / deleted */
    uint64_t iLastInsertId; /* id assigned by the last auto-id INSERT, or 0 */
    const char *zInfo;      /* optional human-readable info, or NULL */

    /* SQLRES_OK and SQLRES_ROWS */
    int nWarning;           /* warnings (SHOW WARNINGS lists them) */

    /* SQLRES_ROWS */
    SqlColumn *aCol;
    int nCol;
    SqlCell *aCell;         /* row-major: row r, column c is aCell[r*nCol+c] */
    size_t nRow;
    size_t nRowAlloc;       /* rows allocated in aCell */

    /* A write whose log record is not durable yet (sessions with deferred
    ** commits, sql_session_defer_commits): the caller must wait with
    ** table_commit(pCommitTable, commitLsn) before it acknowledges the
    ** write, and then drop the reference (sql_result_commit does both).
    ** NULL when there is nothing to wait for. */
    struct Table *pCommitTable;
    uint64_t commitLsn;

    /* SQLRES_ERROR */
    int iErrno;             /* MySQL error number, e.g. 1064 */
    char zSqlState[6];      /* five characters, e.g. "42000" */
    char zErr[LP_ERRMSG_MAX]; /* message */

    /* More result sets of the same statement (a SELECT's FACETs), in
    ** order; owned (freed with r, dropped by an error). */
    struct SqlResult *pNext;
} SqlResult;

void sql_result_init(SqlResult *r);
/* A new, empty result set after the last of r's chain (pNext), or NULL
** when out of memory. */
SqlResult *sql_result_more(SqlResult *r);
/* Back to an empty SQLRES_OK result; keeps the arena's first block. */
void sql_result_reset(SqlResult *r);
void sql_result_free(SqlResult *r);

/* Waits for r's pending write to be durable (see pCommitTable) and drops
** the reference; a failed sync turns r into the error. No-op without one. */
void sql_result_commit(SqlResult *r);

/* Makes r an error. Message copied; sqlstate may be NULL for "HY000". */
void sql_result_error(SqlResult *r, int iErrno, const char *zSqlState, const char *zMsg);
/* Makes r an error from an LpError: iErrno from err->detail when set,
** otherwise derived from err->code (see sql_errno_for_code). */
void sql_result_from_error(SqlResult *r, const LpError *err);
/* The MySQL errno and SQLSTATE for an LP_* code when no detail was given. */
int sql_errno_for_code(int code, const char **pzSqlState);

/* Starts a result set with nCol columns; returns LP_OK or LP_NOMEM. */
int sql_result_columns(SqlResult *r, int nCol);
/* Sets column i; the name is copied. */
int sql_result_column(SqlResult *r, int i, const char *zName, SqlColType type, int flags);
/* Appends a row of NULL cells and returns a pointer to its nCol cells, or
** NULL when out of memory. */
SqlCell *sql_result_row(SqlResult *r);
/* Stores a copy of n bytes at z in *c. Returns LP_OK or LP_NOMEM. */
int sql_result_cell(SqlResult *r, SqlCell *c, const char *z, size_t n);
int sql_result_cell_int(SqlResult *r, SqlCell *c, int64_t v);
int sql_result_cell_str(SqlResult *r, SqlCell *c, const char *z); /* z may be NULL */

/* A one-column or two-column helper for SHOW-style results:
** appends a row of NUL-terminated strings (NULL for SQL NULL). */
int sql_result_add_strs(SqlResult *r, const char *const *az);

#endif /* LP_SQL_RESULT_H */
