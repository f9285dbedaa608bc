/* schema.c — see schema.h. */
#include "table/schema.h"

#include <stdio.h>
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
    if (c->type == COL_STRING) {
        if (c->flags & COLF_INDEXED) strbuf_appendz(sb, "attribute indexed");
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

/* ------------------------------------------------------------------ */
/* JSON form (the manifest)                                            */

json_t *schema_to_json(const Schema *s) {
    json_t *o = json_object(), *aCol = json_array(), *aOpt = json_array();
    if (!o || !aCol || !aOpt) {
        json_decref(o);
        json_decref(aCol);
        json_decref(aOpt);
        return NULL;
    }
    json_object_set_new(o, "columns", aCol);
    json_object_set_new(o, "options", aOpt);
    for (int i = 0; i < s->nCol; i++) {
        const ColumnSchema *c = &s->aCol[i];
        json_t *jc = json_pack("{s:s, s:s, s:i}", "name", c->zName, "type", coltype_name(c->type),
                               "flags", c->flags);
        if (jc && c->type == COL_VECTOR) {
            const VectorOpts *v = &c->vec;
            json_object_set_new(jc, "hnsw", json_boolean(v->bHnsw));
            json_object_set_new(jc, "dims", json_integer(v->nDims));
            json_object_set_new(jc, "similarity", json_string(vecsim_name(v->sim)));
            json_object_set_new(jc, "similarity_given", json_boolean(v->bSim));
            json_object_set_new(jc, "hnsw_m", json_integer(v->hnswM));
            json_object_set_new(jc, "hnsw_ef_construction", json_integer(v->efConstruction));
            if (v->zModel) json_object_set_new(jc, "model_name", json_string(v->zModel));
            if (v->zFrom) json_object_set_new(jc, "from", json_string(v->zFrom));
        }
        if (!jc || json_array_append_new(aCol, jc)) {
            json_decref(o);
            return NULL;
        }
    }
    for (int i = 0; i < s->nOpt; i++) {
        json_t *jo = json_pack("{s:s, s:s}", "name", s->aOpt[i].zName, "value", s->aOpt[i].zValue);
        if (!jo || json_array_append_new(aOpt, jo)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static int coltype_parse(const char *z) {
    for (int t = COL_TEXT; t < COL_NTYPES; t++) {
        if (strcasecmp(coltype_name((ColType)t), z) == 0) return t;
    }
    return -1;
}

/* A string member of o, or NULL when absent or not a string. */
static const char *jstr(const json_t *o, const char *zKey) {
    return json_string_value(json_object_get(o, zKey));
}

Schema *schema_from_json(const json_t *j, LpError *err) {
    const json_t *aCol = json_object_get(j, "columns"), *aOpt = json_object_get(j, "options");
    if (!json_is_array(aCol) || !json_is_array(aOpt)) {
        lp_err_set(err, LP_CORRUPT, "schema: 'columns' and 'options' must be arrays");
        return NULL;
    }
    Schema *s = calloc(1, sizeof(*s));
    size_t nCol = json_array_size(aCol), nOpt = json_array_size(aOpt);
    if (!s || !(s->aCol = calloc(nCol ? nCol : 1, sizeof(ColumnSchema))) ||
        !(s->aOpt = calloc(nOpt ? nOpt : 1, sizeof(TableOpt)))) {
        schema_free(s);
        lp_err_set(err, LP_NOMEM, "out of memory reading a schema");
        return NULL;
    }
    int oom = 0;
    for (size_t i = 0; i < nCol; i++) {
        const json_t *jc = json_array_get(aCol, i);
        const char *zName = jstr(jc, "name"), *zType = jstr(jc, "type");
        int type = zType ? coltype_parse(zType) : -1;
        if (!zName || !*zName || type < 0 || !json_is_integer(json_object_get(jc, "flags"))) {
            lp_err_set(err, LP_CORRUPT, "schema: column %zu has no valid name, type or flags", i + 1);
            schema_free(s);
            return NULL;
        }
        ColumnSchema *c = &s->aCol[s->nCol++];
        c->zName = dupz(zName, &oom);
        c->type = (ColType)type;
        c->flags = (int)json_integer_value(json_object_get(jc, "flags"));
        if (type == COL_VECTOR) {
            VectorOpts *v = &c->vec;
            const char *zSim = jstr(jc, "similarity");
            int sim = zSim ? vecsim_parse(zSim) : -1;
            json_int_t nDims = json_integer_value(json_object_get(jc, "dims"));
            if (sim < 0 || nDims < 0 || nDims > 65536) {
                lp_err_set(err, LP_CORRUPT, "schema: vector column '%s' has bad options", zName);
                schema_free(s);
                return NULL;
            }
            v->bHnsw = json_is_true(json_object_get(jc, "hnsw"));
            v->nDims = (int)nDims;
            v->sim = (VecSimilarity)sim;
            v->bSim = json_is_true(json_object_get(jc, "similarity_given"));
            v->hnswM = (int)json_integer_value(json_object_get(jc, "hnsw_m"));
            v->efConstruction = (int)json_integer_value(json_object_get(jc, "hnsw_ef_construction"));
            v->zModel = dupz(jstr(jc, "model_name"), &oom);
            v->zFrom = dupz(jstr(jc, "from"), &oom);
        }
    }
    for (size_t i = 0; i < nOpt; i++) {
        const json_t *jo = json_array_get(aOpt, i);
        const char *zName = jstr(jo, "name"), *zValue = jstr(jo, "value");
        if (!zName || !zValue) {
            lp_err_set(err, LP_CORRUPT, "schema: table option %zu has no name or value", i + 1);
            schema_free(s);
            return NULL;
        }
        s->aOpt[s->nOpt].zName = dupz(zName, &oom);
        s->aOpt[s->nOpt++].zValue = dupz(zValue, &oom);
    }
    if (oom) {
        schema_free(s);
        lp_err_set(err, LP_NOMEM, "out of memory reading a schema");
        return NULL;
    }
    return s;
}

int schema_embed_sources(const Schema *s, int iCol, int *aOut, char *zBad, size_t nBad) {
    const char *z = s->aCol[iCol].vec.zFrom ? s->aCol[iCol].vec.zFrom : "";
    int n = 0;
    while (*z) {
        while (*z == ' ' || *z == ',') z++;
        size_t m = strcspn(z, ", ");
        if (!m) break;
        char zName[128];
        snprintf(zName, sizeof(zName), "%.*s", (int)(m < 127 ? m : 127), z);
        for (char *p = zName; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        int i = schema_find(s, zName);
        if (i < 0 || (s->aCol[i].type != COL_TEXT && s->aCol[i].type != COL_STRING)) {
            snprintf(zBad, nBad, "%s", zName);
            return -1;
        }
        if (n < s->nCol) aOut[n++] = i;
        z += m;
    }
    if (n == 0) {
        for (int i = 0; i < s->nCol; i++) {
            if (s->aCol[i].type == COL_TEXT) aOut[n++] = i;
        }
    }
    return n;
}

uint64_t schema_parse_size(const char *z) {
    char *end;
    long long v = strtoll(z, &end, 10);
    if (v <= 0 || end == z) return 0;
    uint64_t m = 1;
    switch (*end) {
    case 0: break;
    case 'k': case 'K': m = 1ull << 10; break;
    case 'm': case 'M': m = 1ull << 20; break;
    case 'g': case 'G': m = 1ull << 30; break;
    default: return 0;
    }
    if (*end && end[1]) return 0;
    if ((uint64_t)v > UINT64_MAX / m) return 0;
    return (uint64_t)v * m;
}
