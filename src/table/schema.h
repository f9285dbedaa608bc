/*
** schema.h — a table's columns and options.
**
** Contract. A Schema lists the columns of a table in declaration order,
** not counting the implicit `id` column (which is always column -1 in
** lookups and shown first). Names are lower-case and unique. A Schema is
** immutable once a table is created with it: schema_free is called by the
** table that owns it. Everything a Schema points to is owned by it.
**
** schema_to_sql() writes a CREATE TABLE statement that, run again,
** recreates an identical schema (SHOW CREATE TABLE; later the manifest).
*/
#ifndef LP_TABLE_SCHEMA_H
#define LP_TABLE_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "table/value.h"
#include "util/error.h"
#include "util/strbuf.h"

/* Column flags. */
#define COLF_INDEXED 0x01   /* TEXT, or STRING (Manticore's `string attribute
                            ** indexed`): indexed for full-text search */
#define COLF_STORED  0x02   /* TEXT: stored, returned by SELECT */

typedef enum VecSimilarity { VSIM_L2 = 0, VSIM_IP, VSIM_COSINE } VecSimilarity;

typedef struct VectorOpts {
    int bHnsw;              /* knn_type='hnsw' given */
    int nDims;              /* knn_dims; 0 when not declared */
    VecSimilarity sim;      /* hnsw_similarity */
    int bSim;               /* hnsw_similarity given */
    int hnswM;              /* hnsw_m; 0 = default (16) */
    int efConstruction;     /* hnsw_ef_construction; 0 = default (200) */
    char *zModel;           /* model_name, or NULL */
    char *zFrom;            /* from='title,body', or NULL (only with a model) */
} VectorOpts;

typedef struct ColumnSchema {
    char *zName;            /* lower-case */
    ColType type;
    int flags;              /* COLF_* */
    VectorOpts vec;         /* COL_VECTOR only */
} ColumnSchema;

typedef struct TableOpt {
    char *zName;            /* lower-case option name */
    char *zValue;           /* value as text */
} TableOpt;

typedef struct Schema {
    ColumnSchema *aCol;     /* declared columns, id excluded */
    int nCol;
    TableOpt *aOpt;         /* table options, in the order given */
    int nOpt;
} Schema;

#define SCHEMA_ID_COL (-1)      /* column index of the implicit id */
#define SCHEMA_NO_COL (-2)      /* "not found" */

/* Index of column zName (lower-case) in s, SCHEMA_ID_COL for "id", or
** SCHEMA_NO_COL. */
int schema_find(const Schema *s, const char *zName);

/* Type of column i (SCHEMA_ID_COL gives COL_ID). */
static inline ColType schema_coltype(const Schema *s, int i) {
    return i == SCHEMA_ID_COL ? COL_ID : s->aCol[i].type;
}

/* Is c a full-text field: indexed TEXT, or a STRING attribute indexed too
** (its value kept in the row like any string, and searched with MATCH)? */
static inline int schema_col_is_field(const ColumnSchema *c) {
    return (c->type == COL_TEXT || c->type == COL_STRING) && (c->flags & COLF_INDEXED);
}

/* Does a row keep c's value, for SELECT * and HIGHLIGHT() to show? Every
** column but TEXT that is indexed and not stored. */
static inline int schema_col_has_value(const ColumnSchema *c) {
    return c->type != COL_TEXT || (c->flags & COLF_STORED);
}

/* A deep copy, or NULL when out of memory. */
Schema *schema_dup(const Schema *s);
void schema_free(Schema *s);

/* A size such as "128M", "1g", "65536" or "64k" in bytes; 0 when z is not
** one (rt_mem_limit). */
uint64_t schema_parse_size(const char *z);

/* The value of table option zName, or NULL. */
const char *schema_option(const Schema *s, const char *zName);

/* Appends "CREATE TABLE <zTable> (...) options" to sb. */
void schema_to_sql(const Schema *s, const char *zTable, StrBuf *sb);

/* Appends a column's properties as DESCRIBE shows them ("indexed stored"
** for text, "attribute indexed" for a string that is a field too, the knn
** options for vectors, "" otherwise). */
void schema_col_properties(const ColumnSchema *c, StrBuf *sb);

/* Quotes an identifier with backticks when it is not a plain lower-case
** word (or is a reserved word), as SHOW CREATE TABLE must. */
void schema_append_ident(StrBuf *sb, const char *zName);

/* The schema as a JSON object (the table manifest stores it), or NULL when
** out of memory. schema_from_json reads it back: NULL and err filled
** (LP_CORRUPT saying what is wrong, LP_NOMEM) when it is not a schema. */
json_t *schema_to_json(const Schema *s);
Schema *schema_from_json(const json_t *j, LpError *err);

/* The source columns of model column iCol (from='a,b'; '' or absent:
** every TEXT column), in order, into aOut (room for s->nCol): returns
** their count, or -1 with the offending name in zBad when one is not a
** TEXT or STRING column. */
int schema_embed_sources(const Schema *s, int iCol, int *aOut, char *zBad, size_t nBad);

/* Parses a similarity name ("l2", "ip", "cosine", any case). -1 if unknown. */
int vecsim_parse(const char *z);
const char *vecsim_name(VecSimilarity s);

#endif /* LP_TABLE_SCHEMA_H */
