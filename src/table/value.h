/*
** value.h — typed values and the column types of a table.
**
** Contract. A Value is a small tagged union passed by value: NULL, a 64-bit
** integer, a double, a byte string or a float vector. String and vector
** payloads are BORROWED: a Value never owns memory. Who keeps the bytes
** alive is said where the Value comes from (a row read from a snapshot is
** valid until the snapshot is released; a coerced value lives in the
** caller's arena).
**
** value_coerce() is the one place that decides whether a value fits a
** column type, so every way of writing (SQL INSERT/REPLACE/UPDATE, later
** the JSON API and the WAL replay) applies the same rules:
**   INT        integers in [-2^31, 2^31-1]; a float with no fraction; a
**              string holding such an integer.           (else LP_RANGE/BADINPUT)
**   BIGINT     the same over the int64 range.
**   FLOAT      any finite number, or a numeric string; must fit a float32.
**   BOOL       0 or 1 (TRUE/FALSE arrive as 1/0), or '0'/'1'/'true'/'false'.
**   TIMESTAMP  an integer >= 0 (unix seconds), or 'YYYY-MM-DD' or
**              'YYYY-MM-DD HH:MM:SS' read as UTC.
**   STRING, TEXT  valid UTF-8 strings; numbers become their text.
**   JSON       a string holding one valid JSON value; stored compact.
**   VECTOR     a float vector (finite components) whose length matches the
**              column's dims when dims are declared.
**   MULTI, MULTI64  a set of integers (Manticore's MVA): a list of integers
**              (VAL_MVA, as SQL's (1, 2, 3)), one integer, or a string of
**              integers separated by commas ('' or '()' is the empty set);
**              MULTI's each in [0, 2^32-1], MULTI64's any int64. Stored
**              sorted ascending without repeats.
**   NULL fits every column.
** Errors name the column and, for UTF-8 and JSON, the byte offset.
*/
#ifndef LP_TABLE_VALUE_H
#define LP_TABLE_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/error.h"
#include "util/strbuf.h"

typedef enum ValKind {
    VAL_NULL = 0,
    VAL_INT,        /* u.i */
    VAL_FLOAT,      /* u.f (double) */
    VAL_STR,        /* u.s: bytes, not necessarily NUL-terminated */
    VAL_VEC,        /* u.v: float32 components */
    VAL_MVA,        /* u.m: int64 items (a column's: sorted, no repeats) */
} ValKind;

typedef struct Value {
    ValKind kind;
    union {
        int64_t i;
        double f;
        struct {
            const char *z;
            uint32_t n;
        } s;
        struct {
            const float *a;
            uint32_t n;
        } v;
        struct {
            const int64_t *a;
            uint32_t n;
        } m;
    } u;
} Value;

static inline Value value_null(void) {
    Value v;
    v.kind = VAL_NULL;
    v.u.i = 0;
    return v;
}
static inline Value value_int(int64_t i) {
    Value v;
    v.kind = VAL_INT;
    v.u.i = i;
    return v;
}
static inline Value value_float(double f) {
    Value v;
    v.kind = VAL_FLOAT;
    v.u.f = f;
    return v;
}
static inline Value value_str(const char *z, uint32_t n) {
    Value v;
    v.kind = VAL_STR;
    v.u.s.z = z;
    v.u.s.n = n;
    return v;
}

/* Column types. The implicit id column is COL_ID. */
typedef enum ColType {
    COL_ID = 0,     /* BIGINT document id, 1..2^63-1, never NULL */
    COL_TEXT,       /* full-text field (stored text) */
    COL_STRING,     /* string attribute */
    COL_INT,        /* signed 32-bit */
    COL_BIGINT,     /* signed 64-bit */
    COL_FLOAT,      /* float32 */
    COL_BOOL,       /* 0/1 */
    COL_TIMESTAMP,  /* unix seconds (int64, >= 0) */
    COL_JSON,       /* JSON text, compact */
    COL_VECTOR,     /* float32 array */
    COL_MULTI,      /* set of unsigned 32-bit integers (MVA) */
    COL_MULTI64,    /* set of signed 64-bit integers (MVA) */
    COL_NTYPES
} ColType;

/* "text", "string", "int", ... as DESCRIBE and SHOW CREATE TABLE print them. */
const char *coltype_name(ColType t);

/* Is the type stored inline as a number (INT, BIGINT, FLOAT, BOOL,
** TIMESTAMP, ID)? */
static inline int coltype_is_numeric(ColType t) {
    return t == COL_ID || t == COL_INT || t == COL_BIGINT || t == COL_FLOAT || t == COL_BOOL ||
           t == COL_TIMESTAMP;
}

/* Is the type a multi-value (MULTI, MULTI64)? */
static inline int coltype_is_mva(ColType t) {
    return t == COL_MULTI || t == COL_MULTI64;
}

struct ColumnSchema;

/* Converts v to the representation column c stores (see the contract):
** integers for INT/BIGINT/BOOL/TIMESTAMP, a double holding a float32 for
** FLOAT, a string for STRING/TEXT/JSON, a vector for VECTOR, a sorted set
** for MULTI/MULTI64. New payloads
** (JSON normalised text, a number's text, a vector parsed from a string) are
** allocated in arena a. Returns LP_OK, LP_BADINPUT (wrong type, invalid
** UTF-8 or JSON), LP_RANGE (out of range) or LP_NOMEM, with err naming the
** column. */
int value_coerce(const struct ColumnSchema *c, Value v, Arena *a, Value *pOut, LpError *err);

/* Appends v as the MySQL text protocol shows it: integers in decimal,
** floats in the shortest form that reads back to the same float32 (FLOAT
** columns) or double, strings as is, vectors as comma-separated floats,
** multi-values as comma-separated integers (Manticore's "1,2,3").
** NULL appends nothing (callers send NULL separately). bFloat32 says
** whether a VAL_FLOAT is a float32 column value. */
void value_format(const Value *v, int bFloat32, StrBuf *sb);

/* Shortest decimal text for a float32 / a double that reads back exactly.
** buf must hold 32 bytes; returns the length. */
int value_fmt_float(float f, char *buf);
int value_fmt_double(double d, char *buf);

/* Compares two strings as STRING columns do: ASCII letters case-insensitive,
** other bytes by value. <0, 0, >0. */
int value_strcmp_ci(const char *a, size_t na, const char *b, size_t nb);

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; m 1..12, d 1..31),
** Howard Hinnant's days_from_civil. */
int64_t value_days_from_civil(int64_t y, unsigned m, unsigned d);

/* Manticore's date math (DATE_RANGE()'s bounds, as Elasticsearch's): an
** anchor, `now` (the given unix time) or a date ending in `||` ('2017',
** '2017-03', '2017-03-05', '2017-03-05 10:20' or with 'T', and ':30'
** seconds), then any of `+N<u>`, `-N<u>` (N up to 1000000) and `/<u>`
** (back to the start of the unit), u one of s, m, h or H, d, w, M
** (months), y; weeks start on Monday (1970-01-05), as DATE_HISTOGRAM's;
** all in UTC. A month or year added to a day the target month lacks lands
** on its last day. Results beyond 10^13 seconds either way are refused.
** z is NUL-terminated. Into *pOut the unix seconds and NULL, or what is
** wrong (a static message) with *pAt its offset in z. */
const char *value_date_math(const char *z, int64_t now, int64_t *pOut, int *pAt);

#endif /* LP_TABLE_VALUE_H */
