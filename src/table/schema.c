/* schema.c — see schema.h. */
#include "table/schema.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int schema_find(const Schema *s, const char *zName) {
    if (strcmp(zName, "id") == 0) return SCHEMA_ID_COL;
    for (int i = 0; i < s->nCol; i++) {
        if (strcmp(s->aCol[i].zName, zName) == 0) return i;
    }
    return SCHEMA_NO_COL;
}

const char *schema_option(const Schema *s, const char *zName) {
    for (int i = 0; i < s->nOpt; i++) {
        if (strcmp(s->aOpt[i].zName, zName) == 0) return s->aOpt[i].zValue;
    }
    return NULL;
}

static char *dupz(const char *z, int *pOom) {
    if (!z) return NULL;
    char *p = strdup(z);
    if (!p) *pOom = 1;
    return p;
}

Schema *schema_dup(const Schema *s) {
    int oom = 0;
    Schema *d = calloc(1, sizeof(*d));
    if (!d) return NULL;
    d->aCol = calloc((size_t)(s->nCol ? s->nCol : 1), sizeof(ColumnSchema));
    d->aOpt = calloc((size_t)(s->nOpt ? s->nOpt : 1), sizeof(TableOpt));
    if (!d->aCol || !d->aOpt) {
        schema_free(d);
        return NULL;
    }
    d->nCol = s->nCol;
    d->nOpt = s->nOpt;
    for (int i = 0; i < s->nCol; i++) {
        d->aCol[i] = s->aCol[i];
        d->aCol[i].zName = dupz(s->aCol[i].zName, &oom);
        d->aCol[i].vec.zModel = dupz(s->aCol[i].vec.zModel, &oom);
        d->aCol[i].vec.zFrom = dupz(s->aCol[i].vec.zFrom, &oom);
    }
    for (int i = 0; i < s->nOpt; i++) {
        d->aOpt[i].zName = dupz(s->aOpt[i].zName, &oom);
        d->aOpt[i].zValue = dupz(s->aOpt[i].zValue, &oom);
    }
    if (oom) {
        schema_free(d);
        return NULL;
    }
    return d;
}

void schema_free(Schema *s) {
    if (!s) return;
    for (int i = 0; i < s->nCol && s->aCol; i++) {
        free(s->aCol[i].zName);
        free(s->aCol[i].vec.zModel);
        free(s->aCol[i].vec.zFrom);
    }
    for (int i = 0; i < s->nOpt && s->aOpt; i++) {
        free(s->aOpt[i].zName);
        free(s->aOpt[i].zValue);
    }
    free(s->aCol);
    free(s->aOpt);
    free(s);
}

int vecsim_parse(const char *z) {
    if (strcasecmp(z, "l2") == 0) return VSIM_L2;
    if (strcasecmp(z, "ip") == 0) return VSIM_IP;
    if (strcasecmp(z, "cosine") == 0) return VSIM_COSINE;
    return -1;
}

const char *vecsim_name(VecSimilarity s) {
    return s == VSIM_IP ? "IP" : s == VSIM_COSINE ? "COSINE" : "L2";
}

/* Words the SQL parser treats as structural: a column named like this must
** be quoted in SHOW CREATE TABLE output to read back. */
static int is_reserved(const char *z) {
    static const char *const az[] = {
        "add", "all", "alter", "and", "as", "asc", "between", "by", "create", "delete",
        "desc", "describe", "distinct", "div", "drop", "exists", "false", "from", "group",
        "if", "in", "insert", "into", "is", "like", "limit", "mod", "not", "null", "offset",
        "option", "or", "order", "replace", "select", "set", "show", "table", "true",
        "truncate", "update", "values", "where",
    };
    for (size_t i = 0; i < sizeof(az) / sizeof(az[0]); i++) {
        if (strcmp(z, az[i]) == 0) return 1;
    }
    return 0;
}

void schema_append_ident(StrBuf *sb, const char *zName) {
    int plain = zName[0] != 0 && !(zName[0] >= '0' && zName[0] <= '9');
    for (const char *p = zName; *p && plain; p++) {
        plain = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
    }
    if (plain && !is_reserved(zName)) {
        strbuf_appendz(sb, zName);
        return;
    }
    strbuf_appendc(sb, '`');
    for (const char *p = zName; *p; p++) {
        if (*p == '`') strbuf_appendc(sb, '`');
        strbuf_appendc(sb, *p);
    }
    strbuf_appendc(sb, '`');
}

/* 'value' with quotes and backslashes escaped. */
static void append_quoted(StrBuf *sb, const char *z) {
    strbuf_appendc(sb, '\'');
    for (const char *p = z; *p; p++) {
        if (*p == '\'' || *p == '\\') strbuf_appendc(sb, '\\');
        strbuf_appendc(sb, *p);
    }
    strbuf_appendc(sb, '\'');
}

void schema_col_properties(const ColumnSchema *c, StrBuf *sb) {
    if (c->type == COL_TEXT) {
        int f = c->flags & (COLF_INDEXED | COLF_STORED);
        if (f & COLF_INDEXED) strbuf_appendz(sb, "indexed");
        if (f & COLF_STORED) strbuf_appendz(sb, f & COLF_INDEXED ? " stored" : "stored");
        return;
    }
    if (c->type != COL_VECTOR) return;
    const VectorOpts *v = &c->vec;
    const char *zSep = "";
    if (v->bHnsw) {
        strbuf_appendz(sb, "knn_type='hnsw'");
        zSep = " ";
    }
    if (v->nDims) {
        strbuf_appendf(sb, "%sknn_dims='%d'", zSep, v->nDims);
        zSep = " ";
    }
    if (v->bSim) {
        strbuf_appendf(sb, "%shnsw_similarity='%s'", zSep, vecsim_name(v->sim));
        zSep = " ";
    }
    if (v->hnswM) {
        strbuf_appendf(sb, "%shnsw_m='%d'", zSep, v->hnswM);
        zSep = " ";
    }
    if (v->efConstruction) {
        strbuf_appendf(sb, "%shnsw_ef_construction='%d'", zSep, v->efConstruction);
        zSep = " ";
    }
    if (v->zModel) {
        strbuf_appendf(sb, "%smodel_name=", zSep);
        append_quoted(sb, v->zModel);
        zSep = " ";
    }
    if (v->zFrom) {
        strbuf_appendf(sb, "%sfrom=", zSep);
        append_quoted(sb, v->zFrom);
    }
}

void schema_to_sql(const Schema *s, const char *zTable, StrBuf *sb) {
    strbuf_appendz(sb, "CREATE TABLE ");
    schema_append_ident(sb, zTable);
    strbuf_appendz(sb, " (\nid bigint");
    for (int i = 0; i < s->nCol; i++) {
        const ColumnSchema *c = &s->aCol[i];
        strbuf_appendz(sb, ",\n");
        schema_append_ident(sb, c->zName);
        strbuf_appendc(sb, ' ');
        strbuf_appendz(sb, coltype_name(c->type));
        size_t mark = sb->n;
        strbuf_appendc(sb, ' ');
        schema_col_properties(c, sb);
        if (sb->n == mark + 1 && !sb->oom) {
            sb->n = mark; /* no properties: drop the space */
            sb->z[mark] = 0;
        }
    }
    strbuf_appendz(sb, "\n)");
    for (int i = 0; i < s->nOpt; i++) {
        strbuf_appendc(sb, ' ');
        strbuf_appendz(sb, s->aOpt[i].zName);
        strbuf_appendc(sb, '=');
        append_quoted(sb, s->aOpt[i].zValue);
    }
}
