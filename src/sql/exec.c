/*
** exec.c — the statements that read and write tables: binding the syntax
** tree to a table's schema (names resolved, types checked, constants
** converted), then running it through the query and table layers.
**
** Binding rules (docs/sql.md has the user's view):
**  - Every name must resolve: unknown column 1054, unknown table 1146.
**  - WHERE and ORDER BY work on attributes and id. TEXT fields (full-text
**    search comes with MATCH), JSON and vectors are refused there.
**  - Comparisons need comparable sides: numbers with numbers, strings with
**    strings. A numeric column compared with a string constant converts
**    the constant once, at bind time ('2024-01-01' for a TIMESTAMP, '42'
**    for an INT); a string that is no number is an error, never a silent
**    mismatch.
**  - @@variables and functions without arguments (DATABASE(), VERSION()...)
**    are constants, evaluated once at bind time.
** Errors name the column, table or value and, for syntax-like mistakes,
** the position in the statement.
*/
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fts/rankexpr.h"
#include "query/ftsfn.h"
#include "query/jsonpath.h"
#include "query/select.h"
#include "sql/parser.h"
#include "sql/sql_int.h"
#include "text/charset.h"
#include "text/editdist.h"
#include "text/regexp.h"
#include "util/clock.h"
#include "util/hashmap.h"
#include "util/vec.h"
#include "util/strbuf.h"

#define ER_NO_SUCH_FUNC 1305
#define DEFAULT_LIMIT 20 /* as Manticore: a SELECT without LIMIT returns 20 rows */

/* Where an expression appears: decides what it may reference. */
typedef enum BindCtx {
    CTX_SELECT,     /* select list: any column */
    CTX_WHERE,      /* WHERE: attributes and id */
    CTX_ORDER,      /* ORDER BY: attributes, id and WEIGHT() */
    CTX_VALUES,     /* VALUES, SET: constants only */
} BindCtx;

typedef struct Binder {
    SqlSession *s;
    Arena *a;
    const SqlStmt *st;      /* statement text for positioned errors */
    const Schema *pSchema;  /* NULL when there is no table */
    const char *zTable;
    LpError *err;
    int rc;                 /* sticky: first error wins */
    int bMatch;             /* the statement has a MATCH(): WEIGHT() etc. make sense */
    int bKnn;               /* the statement has a knn(): KNN_DIST() makes sense */
    const FtsNode *pMatchRoot; /* its tree (NULL: MATCH('')) */
    Table *pTable;          /* the table (for its full-text fields), or NULL */
    int expand;             /* the MATCH's FTS_EXPAND_* bits (expand_keywords), for HIGHLIGHT() */
    int bExprRanker;        /* OPTION ranker=expr(...) or export(...): PACKEDFACTORS() makes sense */
    const char *zMatch;     /* the MATCH text (QUERY()), zMatch[0..nMatch) */
    size_t nMatch;
    int bFusion;            /* hybrid search: HYBRID_SCORE() makes sense */
    struct GroupHave *pHave; /* binding a HAVING: aggregates and names are a group's values */
    const SelectStmt *pAliasSel; /* binding a WHERE: its select list's aliases name
                                 ** their expressions (as Manticore lets a filter
                                 ** use `GEODIST(...) AS d`) */
    int nAliasDepth;        /* aliases being bound inside one another */
    const char *zElem;      /* binding ANY(cond FOR x IN ...)'s cond: x, the
                            ** element's name (QE_ELEM), or NULL */
} Binder;

/* A bound expression with what the binder knows statically. */
typedef struct BExpr {
    QExpr *q;
    SqlColType type;        /* result column type */
    int iCol;               /* the column when the expression is one, else SCHEMA_NO_COL */
    int bConst;             /* no column reference: value known at bind time */
    int bNull;              /* the constant NULL */
} BExpr;

static int bind_fail(Binder *b, int iErrno, int code, const char *zFmt, ...)
    __attribute__((format(printf, 4, 5)));

static int bind_fail(Binder *b, int iErrno, int code, const char *zFmt, ...) {
    if (b->rc) return b->rc;
    char zMsg[LP_ERRMSG_MAX];
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(zMsg, sizeof(zMsg), zFmt, ap);
    va_end(ap);
    lp_err_set(b->err, code, "%s", zMsg);
    b->err->detail = iErrno;
    b->rc = code;
    return code;
}

static int bind_oom(Binder *b) {
    return bind_fail(b, ER_OUTOFMEMORY, LP_NOMEM, "out of memory");
}

/* An error that points at a place in the statement text. */
static int bind_fail_at(Binder *b, int pos, const char *zWhat) {
    if (b->rc) return b->rc;
    sql_syntax_error(b->err, b->st->zSql, b->st->nSql, pos, "%s", zWhat);
    b->rc = LP_BADINPUT;
    return b->rc;
}

static int is_int_type(SqlColType t) {
    return t == SQLCOL_BOOL || t == SQLCOL_INT || t == SQLCOL_BIGINT || t == SQLCOL_TIMESTAMP;
}

static int is_num_type(SqlColType t) {
    return t == SQLCOL_BOOL || t == SQLCOL_INT || t == SQLCOL_BIGINT || t == SQLCOL_FLOAT ||
           t == SQLCOL_DOUBLE || t == SQLCOL_TIMESTAMP;
}

static const char *type_word(SqlColType t) {
    switch (t) {
    case SQLCOL_BOOL: return "BOOL";
    case SQLCOL_INT: return "INT";
    case SQLCOL_BIGINT: return "BIGINT";
    case SQLCOL_FLOAT: return "FLOAT";
    case SQLCOL_DOUBLE: return "DOUBLE";
    case SQLCOL_TIMESTAMP: return "TIMESTAMP";
    case SQLCOL_JSON: return "JSON";
    case SQLCOL_VECTOR: return "FLOAT_VECTOR";
    case SQLCOL_MULTI: return "MULTI";
    default: return "STRING";
    }
}

/* "column 'x'" or "the expression" for messages. */
static const char *what(Binder *b, const BExpr *x, char *buf, size_t n) {
    if (x->iCol == SCHEMA_ID_COL) {
        snprintf(buf, n, "column 'id'");
    } else if (x->iCol >= 0) {
        snprintf(buf, n, "%s column '%s'", type_word(x->type), b->pSchema->aCol[x->iCol].zName);
    } else {
        snprintf(buf, n, "a %s value", is_num_type(x->type) ? "numeric" : "string");
    }
    return buf;
}

static int const_value(Binder *b, const BExpr *x, Value *pv) {
    *pv = qexpr_eval(x->q, NULL);
    return LP_OK;
}

/* Makes constant c comparable with x (a numeric column or expression):
** converts a string constant to a number, using the column's own rules for
** TIMESTAMP ('YYYY-MM-DD'). */
static int convert_const_for(Binder *b, const BExpr *x, BExpr *c) {
    if (c->bNull || !c->bConst) return LP_OK;
    Value v;
    const_value(b, c, &v);
    if (v.kind != VAL_STR) return LP_OK;
    ColumnSchema tmp = {0};
    tmp.zName = (char *)"?";
    tmp.type = x->type == SQLCOL_TIMESTAMP ? COL_TIMESTAMP : COL_BIGINT;
    Value out;
    LpError e;
    lp_err_clear(&e);
    if (value_coerce(&tmp, v, b->a, &out, &e) != LP_OK) {
        tmp.type = COL_FLOAT;
        if (x->type == SQLCOL_TIMESTAMP || value_coerce(&tmp, v, b->a, &out, &e) != LP_OK) {
            char buf[96];
            return bind_fail(b, ER_BAD_VALUE, LP_BADINPUT, "cannot compare %s with '%.*s'%s",
                             what(b, x, buf, sizeof(buf)), (int)(v.u.s.n > 40 ? 40 : v.u.s.n),
                             v.u.s.z,
                             x->type == SQLCOL_TIMESTAMP
                                 ? ": expected unix seconds or 'YYYY-MM-DD[ HH:MM:SS]'"
                                 : ": expected a number");
        }
    }
    if (!(c->q = qexpr_const(b->a, out))) return bind_oom(b);
    c->type = out.kind == VAL_INT ? SQLCOL_BIGINT : SQLCOL_DOUBLE;
    return LP_OK;
}

/* Is x a value whose kind varies by row: a JSON property, a FOR's element,
** arithmetic on them? */
static int is_dynamic(const BExpr *x) {
    return x->type == SQLCOL_JSON && x->iCol == SCHEMA_NO_COL;
}

/* Checks that x and y can be compared, converting constants as needed. */
static int check_comparable(Binder *b, BExpr *x, BExpr *y) {
    if (x->bNull || y->bNull) return LP_OK;
    /* a JSON property's kind is the row's (a JSON column itself is refused in WHERE) */
    if (is_dynamic(x) || is_dynamic(y)) return LP_OK;
    int nx = is_num_type(x->type), ny = is_num_type(y->type);
    int sx = x->type == SQLCOL_STRING, sy = y->type == SQLCOL_STRING;
    if ((nx && ny) || (sx && sy)) return LP_OK;
    if (nx && sy && y->bConst) return convert_const_for(b, x, y);
    if (ny && sx && x->bConst) return convert_const_for(b, y, x);
    char bx[96], by[96];
    if ((sx && ny) || (sy && nx)) {
        return bind_fail(b, ER_BAD_VALUE, LP_BADINPUT, "cannot compare %s with %s%s",
                         what(b, x, bx, sizeof(bx)), what(b, y, by, sizeof(by)),
                         (sx && x->iCol >= 0) || (sy && y->iCol >= 0) ? ": quote the value" : "");
    }
    return bind_fail(b, ER_BAD_VALUE, LP_BADINPUT, "cannot compare %s with %s",
                     what(b, x, bx, sizeof(bx)), what(b, y, by, sizeof(by)));
}

/* A multi-value orders nothing: ORDER BY, WITHIN GROUP ORDER BY. */
static int no_mva_order(Binder *b, SqlColType t, int pos) {
    if (t != SQLCOL_MULTI) return LP_OK;
    return bind_fail_at(b, pos, "a multi-value cannot be sorted on: sort by LEAST(x), GREATEST(x) or LENGTH(x)");
}

/* A multi-value is not a condition (WHERE tags, NOT tags, tags AND ...). */
static int no_mva_truth(Binder *b, const BExpr *x, int pos) {
    if (x->type != SQLCOL_MULTI) return LP_OK;
    return bind_fail_at(b, pos, "a multi-value is not a condition: compare it, e.g. ANY(tags) = 3, "
                                "ALL(tags) IN (1, 2) or LENGTH(tags) > 0");
}

/* Is e ANY(x) or ALL(x)? 1 ANY, 2 ALL, else 0. */
static int mva_quantifier(const Expr *e) {
    if (e->kind != EXPR_FUNC || e->u.func.nArg != 1 || e->u.func.bDistinct) return 0;
    return !strcmp(e->u.func.zName, "any") ? 1 : !strcmp(e->u.func.zName, "all") ? 2 : 0;
}

static int bind_expr(Binder *b, const Expr *e, BindCtx ctx, BExpr *out);

/* One side of a comparison: ANY(mva) or ALL(mva) (*pQuant 1 or 2; out is
** the multi-value), or any expression (*pQuant 0). */
static int bind_side(Binder *b, const Expr *e, BindCtx ctx, BExpr *out, int *pQuant) {
    *pQuant = mva_quantifier(e);
    if (bind_expr(b, *pQuant ? e->u.func.aArg[0] : e, ctx, out)) return b->rc;
    if (*pQuant && out->type != SQLCOL_MULTI) {
        char bx[96], zMsg[200];
        snprintf(zMsg, sizeof(zMsg), "%s() takes a multi-value column (multi or multi64), not %s",
                 *pQuant == 1 ? "ANY" : "ALL", what(b, out, bx, sizeof(bx)));
        return bind_fail_at(b, e->u.func.aArg[0]->pos, zMsg);
    }
    return LP_OK;
}

/* y, compared with a multi-value's items, must be a number (a numeric
** string constant becomes one). */
static int mva_operand(Binder *b, BExpr *y) {
    BExpr num = {NULL, SQLCOL_BIGINT, SCHEMA_NO_COL, 0, 0};
    if (y->type == SQLCOL_MULTI) {
        return bind_fail(b, ER_BAD_VALUE, LP_BADINPUT, "cannot compare two multi-values: test one's items "
                         "against values, e.g. ANY(a) IN (1, 2)");
    }
    return check_comparable(b, &num, y);
}

/* What a column of a grouped result (or an ORDER BY key of one) is. */
typedef enum AggKind {
    AGG_NONE,               /* an expression, taken from the group's first row */
    AGG_COUNT,              /* COUNT(*) */
    AGG_DISTINCT,           /* COUNT(DISTINCT x): distinct values, NULL not counted */
    AGG_SUM, AGG_AVG, AGG_MIN, AGG_MAX, /* over the rows, NULLs skipped */
    AGG_GROUPBY,            /* GROUPBY(): the group's (first) key */
    AGG_CONCAT,             /* GROUP_CONCAT(x): the values, comma-separated */
} AggKind;

/* Is e an aggregate call (COUNT, SUM, AVG, MIN, MAX, GROUP_CONCAT of one
** argument, or GROUPBY())? Its kind, else AGG_NONE. MIN and MAX of two
** arguments are the scalar functions. */
static AggKind agg_kind(const Expr *e) {
    if (e->kind != EXPR_FUNC) return AGG_NONE;
    const char *z = e->u.func.zName;
    int n = e->u.func.nArg;
    if (!strcmp(z, "count")) return e->u.func.bDistinct ? AGG_DISTINCT : AGG_COUNT;
    if (!strcmp(z, "groupby")) return AGG_GROUPBY;
    if (n != 1) return AGG_NONE;
    return !strcmp(z, "sum") ? AGG_SUM : !strcmp(z, "avg") ? AGG_AVG : !strcmp(z, "min") ? AGG_MIN
           : !strcmp(z, "max") ? AGG_MAX : !strcmp(z, "group_concat") ? AGG_CONCAT : AGG_NONE;
}

static int bind_expr(Binder *b, const Expr *e, BindCtx ctx, BExpr *out);

/* out: q, a computed value of type t (no column), constant when bConst. */
static int bexpr_computed(BExpr *out, QExpr *q, SqlColType t, int bConst) {
    out->q = q;
    out->type = t;
    out->iCol = SCHEMA_NO_COL;
    out->bConst = bConst;
    out->bNull = 0;
    return LP_OK;
}

static void bexpr_const(BExpr *out, QExpr *q, SqlColType type) {
    out->q = q;
    out->type = type;
    out->iCol = SCHEMA_NO_COL;
    out->bConst = 1;
    out->bNull = 0;
}

static int have_name(Binder *b, const Expr *e, BindCtx ctx, BExpr *out);
static int have_agg(Binder *b, const Expr *e, BExpr *out);

static int bind_row_value(Binder *b, BExpr *out, QExpr *q, SqlColType t);

/* A property of JSON column iCol (type t): e's path, Manticore's j.a.b,
** j.a[0], j['a b']. Its values' kinds vary by row (a string, a number,
** an object as JSON text, NULL where the path leads nowhere), so it
** compares with numbers and strings alike, and is shown as JSON. */
static int bind_json_path(Binder *b, const Expr *e, int iCol, ColType t, BExpr *out) {
    if (t != COL_JSON) {
        return bind_fail_at(b, e->pos, t == COL_TEXT || t == COL_VECTOR || t == COL_STRING
                                           ? "a path ('.key' or '[...]') follows only a JSON column's name"
                                           : "a path ('.key' or '[...]') follows only a JSON column's name; "
                                             "this column is a number");
    }
    JsonStep *a = arena_alloc(b->a, sizeof(JsonStep) * (size_t)e->nPath);
    if (!a) return bind_oom(b);
    for (int i = 0; i < e->nPath; i++) {
        const ExprPathStep *st = &e->aPath[i];
        if (st->zKey && st->nKey > UINT32_MAX) return bind_fail_at(b, e->pos, "a JSON key is too long");
        a[i] = (JsonStep){st->zKey, (uint32_t)st->nKey, st->iIndex};
    }
    return bind_row_value(b, out, qexpr_json(b->a, iCol, a, e->nPath), SQLCOL_JSON);
}

/* A WHERE's name that is no column but an alias of the select list: its
** expression, bound here (an alias inside it too, 8 deep at most). */
static int bind_where_alias(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    const SelectStmt *sel = b->pAliasSel;
    for (int j = 0; j < sel->nItem; j++) {
        const SelectItem *it = &sel->aItem[j];
        if (!it->zAlias || !it->pExpr || strcasecmp(it->zAlias, e->u.zName) != 0) continue;
        char zMsg[200];
        if (agg_kind(it->pExpr) != AGG_NONE) {
            snprintf(zMsg, sizeof(zMsg), "'%s' is an aggregate of the groups: filter it with HAVING, not WHERE",
                     e->u.zName);
            return bind_fail_at(b, e->pos, zMsg);
        }
        if (b->nAliasDepth >= 8) {
            snprintf(zMsg, sizeof(zMsg), "alias '%s': aliases name one another too deep (or in a circle)",
                     e->u.zName);
            return bind_fail_at(b, e->pos, zMsg);
        }
        b->nAliasDepth++;
        int rc = bind_expr(b, it->pExpr, ctx, out);
        b->nAliasDepth--;
        return rc;
    }
    return bind_fail(b, ER_BAD_FIELD, LP_NOTFOUND, "unknown column '%s' in table '%s'", e->u.zName, b->zTable);
}

static int bind_column(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    const char *zName = e->u.zName;
    if (b->zElem && !strcmp(zName, b->zElem)) { /* the FOR's element: a JSON value of any kind */
        if (e->nPath) return bind_fail_at(b, e->pos, "a path into the element of FOR x IN ... is not supported");
        QExpr *q = qexpr_elem(b->a);
        return q ? bexpr_computed(out, q, SQLCOL_JSON, 0) : bind_oom(b);
    }
    if (b->pHave) return have_name(b, e, ctx, out); /* a HAVING's name: a group's value */
    if (ctx == CTX_VALUES) {
        return bind_fail(b, ER_BAD_FIELD, LP_BADINPUT,
                         "column '%s' cannot be used here: expected a constant value", zName);
    }
    if (!b->pSchema) {
        return bind_fail(b, ER_BAD_FIELD, LP_NOTFOUND,
                         "unknown column '%s': the statement has no FROM table", zName);
    }
    int i = schema_find(b->pSchema, zName);
    if (i == SCHEMA_NO_COL && b->pAliasSel && !e->nPath) return bind_where_alias(b, e, ctx, out);
    if (i == SCHEMA_NO_COL) {
        return bind_fail(b, ER_BAD_FIELD, LP_NOTFOUND, "unknown column '%s' in table '%s'", zName,
                         b->zTable);
    }
    ColType t = schema_coltype(b->pSchema, i);
    if (e->nPath) return bind_json_path(b, e, i, t, out);
    if ((ctx == CTX_WHERE || ctx == CTX_ORDER) && (t == COL_TEXT || t == COL_JSON || t == COL_VECTOR)) {
        return bind_fail(b, ER_NOT_SUPPORTED, LP_UNSUPPORTED,
                         t == COL_TEXT
                             ? "column '%s' is a full-text field: it cannot be filtered or "
                               "sorted on; search it with MATCH('@%s ...'), or declare it 'string "
                               "attribute indexed' to be both a field and a string attribute"
                             : "column '%s' cannot be filtered or sorted on: %s values have no "
                               "order",
                         zName, t == COL_TEXT ? zName : t == COL_JSON ? "JSON" : "vector");
    }
    if (!(out->q = qexpr_column(b->a, i))) return bind_oom(b);
    out->type = sqlx_coltype(t);
    out->iCol = i;
    out->bConst = 0;
    out->bNull = 0;
    return LP_OK;
}

/* One highlighting option, by its Manticore name (query/ftsfn.h). */
static int hl_option(Binder *b, QHighlight *h, const char *zName, Value v, int pos) {
    char zWhy[256];
    int rc = qhl_option(h, b->a, zName, v, zWhy, sizeof(zWhy));
    if (rc == LP_NOMEM) return bind_oom(b);
    return rc ? bind_fail_at(b, pos, zWhy) : LP_OK;
}

/* out: the per-row value q (NULL: out of memory), of type t. */
static int bind_row_value(Binder *b, BExpr *out, QExpr *q, SqlColType t) {
    if (!q) return bind_oom(b);
    out->q = q;
    out->type = t;
    out->iCol = SCHEMA_NO_COL;
    out->bConst = 0;
    out->bNull = 0;
    return LP_OK;
}

/* HIGHLIGHT([{options}] [, 'field,list'] [, 'query']) and
** SNIPPET(text, 'query' [, 'option=value' ...]), as Manticore spells them. */
static int bind_highlight(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    const char *zFn = e->u.func.zName;
    int bSnippet = zFn[0] == 's';
    if (ctx != CTX_SELECT) {
        return bind_fail(b, ER_PARSE, LP_BADINPUT, "%s() can only be used in the select list", zFn);
    }
    if (!b->pTable) return bind_fail(b, ER_PARSE, LP_BADINPUT, "%s() needs a FROM table", zFn);
    QHighlight *h = arena_zalloc(b->a, sizeof(QHighlight));
    if (!h) return bind_oom(b);
    qhl_init(h);
    h->an = table_analyzer(b->pTable);
    const char *const *azFts;
    const int *aFtsCol;
    int nFts = table_fts_fields(b->pTable, &azFts, &aFtsCol);
    const FtsNode *root = NULL;
    const Expr *const *aArg = (const Expr *const *)e->u.func.aArg;
    int nArg = e->u.func.nArg;
    if (bSnippet) {
        if (nArg < 2) return bind_fail(b, ER_PARSE, LP_BADINPUT, "SNIPPET() needs a text and a query");
        BExpr t, qx;
        if (bind_expr(b, aArg[0], CTX_SELECT, &t) || bind_expr(b, aArg[1], CTX_VALUES, &qx)) {
            return b->rc;
        }
        Value qv = qexpr_eval(qx.q, NULL);
        if (qv.kind != VAL_STR) return bind_fail_at(b, aArg[1]->pos, "SNIPPET() expects the query as a string");
        if (sqlx_match_parse(b->a, b->pTable, qv.u.s.z, qv.u.s.n, 0, (FtsNode **)&root, b->err)) {
            return b->rc = b->err->code;
        }
        for (int i = 2; i < nArg; i++) {
            BExpr ox;
            if (bind_expr(b, aArg[i], CTX_VALUES, &ox)) return b->rc;
            Value ov = qexpr_eval(ox.q, NULL);
            const char *eq = ov.kind == VAL_STR ? memchr(ov.u.s.z, '=', ov.u.s.n) : NULL;
            if (!eq) return bind_fail_at(b, aArg[i]->pos, "expected an option as 'name=value'");
            char zName[64];
            snprintf(zName, sizeof(zName), "%.*s", (int)(eq - ov.u.s.z), ov.u.s.z);
            Value val = value_str(eq + 1, (uint32_t)(ov.u.s.n - (size_t)(eq + 1 - ov.u.s.z)));
            if (hl_option(b, h, zName, val, aArg[i]->pos)) return b->rc;
        }
        h->pText = t.q;
        FtsHlQuery *pHl;
        if (fts_hl_query_build(b->a, h->an, root, -1, b->expand, h->opt.bExactPhrase, &pHl, b->err)) {
            return b->rc = b->err->code;
        }
        if (fts_hl_options_check(&h->opt, h->an, pHl, b->err)) {
            return bind_fail(b, ER_PARSE, LP_BADINPUT, "%s", b->err->zMsg);
        }
        h->pHlText = pHl;
        out->q = qexpr_call(b->a, qfn_snippet, h, NULL, 0);
    } else {
        const char *zFields = NULL;
        int bQuery = 0;
        for (int i = 0; i < nArg; i++) {
            const Expr *a = aArg[i];
            if (a->kind == EXPR_MAP && i == 0) {
                for (int j = 0; j < a->u.map.nItem; j++) {
                    const SqlMapItem *it = &a->u.map.aItem[j];
                    BExpr ox;
                    if (bind_expr(b, it->pValue, CTX_VALUES, &ox)) return b->rc;
                    if (hl_option(b, h, it->zName, qexpr_eval(ox.q, NULL), it->pos)) return b->rc;
                }
                continue;
            }
            BExpr sx;
            if (bind_expr(b, a, CTX_VALUES, &sx)) return b->rc;
            Value sv = qexpr_eval(sx.q, NULL);
            if (sv.kind != VAL_STR) return bind_fail_at(b, a->pos, "expected a string");
            if (!zFields && !bQuery) {
                zFields = sv.u.s.z;
            } else if (!bQuery) {
                if (sqlx_match_parse(b->a, b->pTable, sv.u.s.z, sv.u.s.n, 0, (FtsNode **)&root, b->err)) {
                    return b->rc = b->err->code;
                }
                bQuery = 1;
            } else {
                return bind_fail_at(b, a->pos, "HIGHLIGHT() takes options, a field list and a query");
            }
        }
        if (!bQuery) {
            if (!b->bMatch) {
                return bind_fail(b, ER_PARSE, LP_BADINPUT,
                                 "HIGHLIGHT() needs a MATCH() in WHERE, or a query argument");
            }
            root = b->pMatchRoot;
        }
        int *aCol = arena_alloc(b->a, sizeof(int) * (size_t)(nFts ? nFts : 1));
        const FtsHlQuery **apHl = arena_alloc(b->a, sizeof(FtsHlQuery *) * (size_t)(nFts ? nFts : 1));
        if (!aCol || !apHl) return bind_oom(b);
        const Schema *sc = b->pSchema;
        for (int f = 0; f < nFts; f++) {
            int c = aFtsCol[f];
            if (zFields) {
                /* 'title,body': keep the fields named */
                int bIn = 0;
                const char *p = zFields;
                size_t nName = strlen(azFts[f]);
                while (*p && !bIn) {
                    while (*p == ' ' || *p == ',') p++;
                    size_t n = strcspn(p, ", ");
                    bIn = n == nName && strncasecmp(p, azFts[f], n) == 0;
                    p += n;
                }
                if (!bIn) continue;
            } else if (!schema_col_has_value(&sc->aCol[c])) {
                continue; /* no text to show (a string attribute has its value) */
            }
            FtsHlQuery *pHl;
            if (fts_hl_query_build(b->a, h->an, root, f, b->expand, h->opt.bExactPhrase, &pHl, b->err)) {
                return b->rc = b->err->code;
            }
            if (fts_hl_options_check(&h->opt, h->an, pHl, b->err)) {
                return bind_fail(b, ER_PARSE, LP_BADINPUT, "%s", b->err->zMsg);
            }
            aCol[h->nField] = c;
            apHl[h->nField++] = pHl;
        }
        if (zFields && h->nField == 0) {
            return bind_fail(b, ER_PARSE, LP_BADINPUT,
                             "HIGHLIGHT(): '%s' names no full-text field of table '%s'", zFields,
                             b->zTable);
        }
        h->aCol = aCol;
        h->apHl = apHl;
        out->q = qexpr_call(b->a, qfn_highlight, h, NULL, 0);
    }
    return bind_row_value(b, out, out->q, SQLCOL_STRING);
}

/* Manticore's scalar functions (expr.h's QFunc), and its IN() and
** IDIV() as the operators they are; -1 when zName is none of them. Each
** argument may be any expression of the context (WEIGHT() too, where the
** context allows it). */
/* "f() takes N arguments, got M" for call e, which takes lo to hi. */
static int arity_fail(Binder *b, const Expr *e, int lo, int hi) {
    char zMsg[160];
    const char *z = e->u.func.zName;
    if (lo == hi) {
        snprintf(zMsg, sizeof(zMsg), "%s() takes %d argument%s, got %d", z, lo, lo == 1 ? "" : "s", e->u.func.nArg);
    } else {
        snprintf(zMsg, sizeof(zMsg), "%s() takes %d to %d arguments, got %d", z, lo, hi, e->u.func.nArg);
    }
    return bind_fail_at(b, e->pos, zMsg);
}

/* The string functions, Manticore's: CONCAT(s, ...), UPPER(s), LOWER(s),
** SUBSTRING_INDEX(s, delim, n), TO_STRING(x), LEVENSHTEIN(a, b [,
** {normalize=0|1, length_delta=N}]), CRC32(s); -1 when e is none of them. A call of
** constants is computed here, once. */
static int bind_string_func(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    static const struct {
        const char *zName;
        QFunc fn;
        signed char lo, hi;
        const char *zArgs;      /* per argument: 's' a string, 'i' an integer,
                                ** 'a' any value; the last repeats */
    } aFn[] = {
        {"concat", QF_CONCAT, 1, 64, "s"},         {"upper", QF_UPPER, 1, 1, "s"},
        {"lower", QF_LOWER, 1, 1, "s"},            {"substring_index", QF_SUBSTRING_INDEX, 3, 3, "ssi"},
        {"to_string", QF_TO_STRING, 1, 1, "a"},    {"levenshtein", QF_LEVENSHTEIN, 2, 3, "ss"},
        {"crc32", QF_CRC32, 1, 1, "s"},
    };
    const char *z = e->u.func.zName;
    int nArg = e->u.func.nArg;
    Expr **aArg = e->u.func.aArg;
    size_t k = 0;
    while (k < LP_ARRAY_SIZE(aFn) && strcmp(z, aFn[k].zName) != 0) k++;
    if (k == LP_ARRAY_SIZE(aFn)) return -1;
    QFunc fn = aFn[k].fn;
    if (nArg < aFn[k].lo || nArg > aFn[k].hi) {
        if (fn != QF_LEVENSHTEIN) return arity_fail(b, e, aFn[k].lo, aFn[k].hi);
        return bind_fail_at(b, e->pos, "levenshtein() takes two strings and options: LEVENSHTEIN(a, b "
                                       "[, {normalize=1, length_delta=N}])");
    }
    int nVal = fn == QF_LEVENSHTEIN ? 2 : nArg, bNormalize = 0;
    uint64_t lengthDelta = 0;
    if (fn == QF_LEVENSHTEIN && nArg == 3) {
        const Expr *m = aArg[2];
        if (m->kind != EXPR_MAP) return bind_fail_at(b, m->pos, "levenshtein(): expected {normalize=0|1, length_delta=N}");
        for (int i = 0; i < m->u.map.nItem; i++) {
            const SqlMapItem *it = &m->u.map.aItem[i];
            const Expr *v = it->pValue;
            int bNorm = !strcmp(it->zName, "normalize");
            if (!bNorm && strcmp(it->zName, "length_delta") != 0) {
                return bind_fail_at(b, it->pos, "levenshtein(): unknown option: expected normalize or length_delta");
            }
            if (!v || v->kind != EXPR_INT || v->u.i < 0 || (bNorm && v->u.i > 1) || v->u.i > 1000000) {
                return bind_fail_at(b, v ? v->pos : it->pos, bNorm ? "levenshtein(): normalize is 0 or 1"
                                                                   : "levenshtein(): length_delta is 0 to 1000000");
            }
            if (bNorm) bNormalize = (int)v->u.i;
            else lengthDelta = (uint64_t)v->u.i;
        }
    }
    QExpr **aq = arena_alloc(b->a, sizeof(QExpr *) * (size_t)nVal);
    if (!aq) return bind_oom(b);
    int bConst = 1;
    for (int i = 0; i < nVal; i++) {
        BExpr x;
        if (bind_expr(b, aArg[i], ctx, &x)) return b->rc;
        aq[i] = x.q;
        bConst &= x.bConst;
        if (fn == QF_TO_STRING) bNormalize = x.type == SQLCOL_FLOAT; /* (a FLOAT: float32's digits) */
        size_t nSpec = strlen(aFn[k].zArgs);
        char want = aFn[k].zArgs[(size_t)i < nSpec ? (size_t)i : nSpec - 1];
        int bOk = x.bNull || want == 'a' ? x.type != SQLCOL_VECTOR || fn == QF_TO_STRING
                  : want == 's'          ? x.type == SQLCOL_STRING || x.type == SQLCOL_JSON
                                         : x.type == SQLCOL_BIGINT || x.type == SQLCOL_INT || x.type == SQLCOL_BOOL;
        if (!bOk) {
            char bx[96], zMsg[240];
            snprintf(zMsg, sizeof(zMsg), "%s() takes %s as argument %d, not %s%s", z, want == 's' ? "a string" : "an integer",
                     i + 1, what(b, &x, bx, sizeof(bx)),
                     want == 's' && is_num_type(x.type) ? ": convert it with TO_STRING()" : "");
            return bind_fail_at(b, aArg[i]->pos, zMsg);
        }
    }
    QExpr *q = qexpr_func(b->a, fn, (const QExpr *const *)aq, nVal, lengthDelta, bNormalize);
    if (!q) return bind_oom(b);
    out->type = fn == QF_CRC32 ? SQLCOL_BIGINT : fn != QF_LEVENSHTEIN ? SQLCOL_STRING : bNormalize ? SQLCOL_DOUBLE : SQLCOL_BIGINT;
    out->iCol = SCHEMA_NO_COL;
    out->bNull = 0;
    out->bConst = bConst;
    if (bConst) { /* computed now, into the statement's arena */
        QRow row;
        memset(&row, 0, sizeof(row));
        row.pScratch = b->a;
        Value v = qexpr_eval(q, &row);
        out->bNull = v.kind == VAL_NULL;
        if (!(q = qexpr_const(b->a, v))) return bind_oom(b);
    }
    out->q = q;
    return LP_OK;
}

static const char *opt_word(Binder *b, const SqlMapItem *o);

/* Binds the n numeric arguments aArg[0..n) of function zFn into aq (the
** first is its argument iFirst, from 1, for messages); *pbConst: all are
** constants. */
static int bind_num_args(Binder *b, BindCtx ctx, const char *zFn, Expr *const *aArg, int n, int iFirst, QExpr **aq,
                         int *pbConst) {
    *pbConst = 1;
    for (int i = 0; i < n; i++) {
        BExpr x;
        if (bind_expr(b, aArg[i], ctx, &x)) return b->rc;
        if (!x.bNull && !is_num_type(x.type)) {
            char bx[96], zMsg[200];
            snprintf(zMsg, sizeof(zMsg), "%s() takes numbers: argument %d is %s", zFn, i + iFirst,
                     what(b, &x, bx, sizeof(bx)));
            return bind_fail_at(b, aArg[i]->pos, zMsg);
        }
        aq[i] = x.q;
        *pbConst &= x.bConst;
    }
    return LP_OK;
}

/* GEODIST(lat1, lon1, lat2, lon2 [, {in=deg|rad, out=unit, method=adaptive|
** haversine}]), Manticore's: the distance between two points, radians and
** metres unless the options say otherwise. */
static int bind_geodist(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    static const struct {
        const char *z;
        double k;   /* the unit's count in a metre */
    } aUnit[] = {
        {"m", 1},           {"meters", 1},       {"km", 1e-3},       {"kilometers", 1e-3},
        {"ft", 1 / 0.3048}, {"feet", 1 / 0.3048}, {"mi", 1 / 1609.344}, {"miles", 1 / 1609.344},
        {"yd", 1 / 0.9144}, {"yards", 1 / 0.9144}, {"in", 1 / 0.0254}, {"inch", 1 / 0.0254},
        {"cm", 100},        {"centimeters", 100}, {"mm", 1000},       {"millimeters", 1000},
        {"nm", 1 / 1852.0}, {"nmi", 1 / 1852.0},  {"nauticalmiles", 1 / 1852.0},
    };
    int nArg = e->u.func.nArg;
    Expr **aArg = e->u.func.aArg;
    if (nArg != 4 && nArg != 5) {
        return bind_fail_at(b, e->pos, "GEODIST() takes two points and options: GEODIST(lat1, lon1, lat2, lon2 "
                                       "[, {in=degrees, out=km, method=adaptive}])");
    }
    uint64_t flags = 0; /* bit 0 degrees, bit 1 haversine */
    double k = 1;
    if (nArg == 5) {
        const Expr *m = aArg[4];
        if (m->kind != EXPR_MAP) return bind_fail_at(b, m->pos, "GEODIST(): expected {in=..., out=..., method=...}");
        for (int i = 0; i < m->u.map.nItem; i++) {
            const SqlMapItem *it = &m->u.map.aItem[i];
            const char *zv = opt_word(b, it), *zo = it->zName;
            if (!zv) return b->rc;
            int pos = it->pValue->pos;
            if (!strcmp(zo, "in")) {
                if (zv && (!strcasecmp(zv, "deg") || !strcasecmp(zv, "degrees"))) flags |= 1;
                else if (strcasecmp(zv, "rad") && strcasecmp(zv, "radians")) {
                    return bind_fail_at(b, pos, "GEODIST(): in is deg, degrees, rad or radians");
                }
            } else if (!strcmp(zo, "out")) {
                size_t u = 0;
                while (u < LP_ARRAY_SIZE(aUnit) && strcasecmp(zv, aUnit[u].z) != 0) u++;
                if (u == LP_ARRAY_SIZE(aUnit)) {
                    return bind_fail_at(b, pos, "GEODIST(): out is m, km, ft, mi, yd, in, cm, mm or nmi (or "
                                                "their long names: meters, kilometers, feet, miles, ...)");
                }
                k = aUnit[u].k;
            } else if (!strcmp(zo, "method")) {
                if (!strcasecmp(zv, "haversine")) flags |= 2;
                else if (strcasecmp(zv, "adaptive")) {
                    return bind_fail_at(b, pos, "GEODIST(): method is adaptive or haversine");
                }
            } else {
                return bind_fail_at(b, it->pos, "GEODIST(): unknown option: expected in, out or method");
            }
        }
    }
    QExpr **aq = arena_alloc(b->a, sizeof(QExpr *) * 5);
    int bConst;
    if (!aq) return bind_oom(b);
    if (bind_num_args(b, ctx, "GEODIST", aArg, 4, 1, aq, &bConst)) return b->rc;
    if (!(aq[4] = qexpr_const(b->a, value_float(k)))) return bind_oom(b);
    QExpr *q = qexpr_func(b->a, QF_GEODIST, (const QExpr *const *)aq, 5, flags, 1);
    return q ? bexpr_computed(out, q, SQLCOL_DOUBLE, bConst) : bind_oom(b);
}

/* ANY(cond FOR x IN arr), ALL(...), INDEXOF(...), Manticore's: cond for
** each element x of arr, a JSON array (a property, or a JSON column) or a
** multi-value. */
static int bind_for(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    const char *z = e->u.func.zName;
    Expr **aArg = e->u.func.aArg;
    QOp op = !strcmp(z, "any") ? QOP_OR : !strcmp(z, "all") ? QOP_AND : !strcmp(z, "indexof") ? QOP_NONE : QOP_NEG;
    if (op == QOP_NEG) {
        return bind_fail_at(b, e->pos, "FOR x IN ... belongs to ANY(), ALL() or INDEXOF(): ANY(x > 5 FOR x IN j.arr)");
    }
    if (b->zElem) return bind_fail_at(b, e->pos, "FOR x IN ... cannot be inside another one");
    BExpr arr, cond;
    if (bind_expr(b, aArg[2], ctx == CTX_WHERE ? CTX_SELECT : ctx, &arr)) return b->rc;
    if (!arr.bNull && arr.type != SQLCOL_JSON && arr.type != SQLCOL_MULTI) {
        char bx[96], zMsg[200];
        snprintf(zMsg, sizeof(zMsg), "FOR x IN takes a JSON array or a multi-value, not %s", what(b, &arr, bx, sizeof(bx)));
        return bind_fail_at(b, aArg[2]->pos, zMsg);
    }
    if (b->pSchema && schema_find(b->pSchema, aArg[1]->u.zName) != SCHEMA_NO_COL) {
        return bind_fail_at(b, aArg[1]->pos, "the element's name is a column's: choose another (FOR x IN ...)");
    }
    b->zElem = aArg[1]->u.zName;
    int rc = bind_expr(b, aArg[0], ctx, &cond);
    b->zElem = NULL;
    if (rc || no_mva_truth(b, &cond, aArg[0]->pos)) return b->rc;
    QExpr *q = qexpr_for(b->a, op, arr.q, cond.q);
    return q ? bexpr_computed(out, q, SQLCOL_BIGINT, 0) : bind_oom(b);
}

/* GEOPOLY2D's edges follow the great circles: each is cut into pieces of
** at most this arc (degrees), their ends the polygon's vertices. */
#define GEOPOLY_STEP 0.5
#define POLY_MAX_XY 200000 /* doubles a polygon may have once cut */

/* Appends the great-circle points strictly between (la1, lo1) and (la2, lo2)
** (degrees), GEOPOLY_STEP apart at most, to a[*pn...]; with a NULL, only
** counts their doubles into *pn. */
static int geo_edge_points(double la1, double lo1, double la2, double lo2, double *a, int *pn) {
    double r = M_PI / 180, p1[3], p2[3];
    p1[0] = cos(la1 * r) * cos(lo1 * r), p1[1] = cos(la1 * r) * sin(lo1 * r), p1[2] = sin(la1 * r);
    p2[0] = cos(la2 * r) * cos(lo2 * r), p2[1] = cos(la2 * r) * sin(lo2 * r), p2[2] = sin(la2 * r);
    double d = p1[0] * p2[0] + p1[1] * p2[1] + p1[2] * p2[2];
    double w = acos(d > 1 ? 1 : d < -1 ? -1 : d);
    int nPiece = (int)ceil(w / r / GEOPOLY_STEP);
    if (nPiece <= 1 || sin(w) < 1e-12) return LP_OK;
    if (*pn + 2 * (int64_t)(nPiece - 1) > POLY_MAX_XY) return LP_LIMIT;
    if (!a) {
        *pn += 2 * (nPiece - 1);
        return LP_OK;
    }
    for (int k = 1; k < nPiece; k++) {
        double f = (double)k / nPiece, sa = sin((1 - f) * w) / sin(w), sb = sin(f * w) / sin(w), q[3];
        for (int c = 0; c < 3; c++) q[c] = sa * p1[c] + sb * p2[c];
        a[(*pn)++] = atan2(q[2], sqrt(q[0] * q[0] + q[1] * q[1])) / r;
        double lo = atan2(q[1], q[0]) / r;
        /* keep to the side of the edge's ends (a polygon near the 180th meridian) */
        while (lo - lo1 > 180 && lo - lo2 > 180) lo -= 360;
        while (lo1 - lo > 180 && lo2 - lo > 180) lo += 360;
        a[(*pn)++] = lo;
    }
    return LP_OK;
}

/* CONTAINS(POLY2D(x1, y1, x2, y2, ...) | GEOPOLY2D(lat1, lon1, ...), x, y),
** Manticore's: the polygon's vertices are constants, read here (a
** GEOPOLY2D's edges cut to follow the Earth's great circles). */
static int bind_contains(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    Expr **aArg = e->u.func.aArg;
    const Expr *p = e->u.func.nArg == 3 ? aArg[0] : NULL;
    int bGeo = p && p->kind == EXPR_FUNC && !strcmp(p->u.func.zName, "geopoly2d");
    if (!p || p->kind != EXPR_FUNC || (!bGeo && strcmp(p->u.func.zName, "poly2d") != 0)) {
        return bind_fail_at(b, e->pos, "CONTAINS() takes a polygon and a point: CONTAINS(POLY2D(x1, y1, x2, y2, x3, y3, "
                                       "...), x, y) or CONTAINS(GEOPOLY2D(lat1, lon1, ...), lat, lon)");
    }
    int nV = p->u.func.nArg;
    if (nV < 6 || nV % 2) {
        return bind_fail_at(b, p->pos, "a polygon takes three points or more: an even number of coordinates, 6 or more");
    }
    double *aV = arena_alloc(b->a, sizeof(double) * (size_t)nV);
    if (!aV) return bind_oom(b);
    for (int i = 0; i < nV; i++) {
        BExpr x;
        if (bind_expr(b, p->u.func.aArg[i], ctx, &x)) return b->rc;
        Value v = x.bConst ? qexpr_eval(x.q, NULL) : value_null();
        if (v.kind != VAL_INT && v.kind != VAL_FLOAT) {
            return bind_fail_at(b, p->u.func.aArg[i]->pos, "a polygon's coordinates are constant numbers");
        }
        aV[i] = v.kind == VAL_INT ? (double)v.u.i : v.u.f;
        if (!isfinite(aV[i]) || (bGeo && fabs(aV[i]) > (i % 2 ? 360 : 90))) {
            return bind_fail_at(b, p->u.func.aArg[i]->pos, bGeo ? "GEOPOLY2D() takes degrees: latitudes -90 to 90, "
                                                                  "longitudes -360 to 360"
                                                                : "a polygon's coordinates are finite numbers");
        }
    }
    double *aXY = aV;
    int nXY = nV;
    for (int pass = 0; bGeo && pass < 2; pass++) { /* count, then cut */
        if (pass && !(aXY = arena_alloc(b->a, sizeof(double) * (size_t)nXY))) return bind_oom(b);
        nXY = 0;
        for (int i = 0; i < nV; i += 2) {
            int j = (i + 2) % nV;
            if (nXY + 2 > POLY_MAX_XY) return bind_fail_at(b, p->pos, "GEOPOLY2D(): the polygon is too large");
            if (pass) aXY[nXY] = aV[i], aXY[nXY + 1] = aV[i + 1];
            nXY += 2;
            if (geo_edge_points(aV[i], aV[i + 1], aV[j], aV[j + 1], pass ? aXY : NULL, &nXY) != LP_OK) {
                return bind_fail_at(b, p->pos, "GEOPOLY2D(): the polygon is too large");
            }
        }
    }
    QExpr **aq = arena_alloc(b->a, sizeof(QExpr *) * 2);
    int bConst;
    if (!aq) return bind_oom(b);
    if (bind_num_args(b, ctx, "CONTAINS", aArg + 1, 2, 2, aq, &bConst)) return b->rc;
    QExpr *q = qexpr_func(b->a, QF_CONTAINS, (const QExpr *const *)aq, 2, 0, 0);
    if (!q) return bind_oom(b);
    q->u.fn.aXY = aXY;
    q->u.fn.nXY = nXY;
    return bexpr_computed(out, q, SQLCOL_BIGINT, bConst);
}

static int opt_number(Binder *b, const SqlMapItem *o, const Expr *v, double lo, double hi, double *pOut);

/* A map option's number as a Value: an integer literal stays one. */
static int opt_value(Binder *b, const SqlMapItem *it, Value *pv) {
    double d;
    if (opt_number(b, it, it->pValue, -1e300, 1e300, &d)) return b->rc;
    *pv = it->pValue->kind == EXPR_INT ? value_int(it->pValue->u.i) : value_float(d);
    return LP_OK;
}

/* DATE_HISTOGRAM's interval: calendar ('minute', '1h', 'day', 'week',
** 'month' or '1M', 'quarter', 'year') or fixed ('90s', '15m', '3h', '2d')
** into QF_DATE_HISTOGRAM's salt; 0 when it is none of these. */
static uint64_t date_interval(const char *z, int bCalendar) {
    static const struct {
        const char *z1, *z2;
        uint64_t how; /* kind | seconds << 3 */
    } aCal[] = {
        {"minute", "1m", 60 << 3}, {"hour", "1h", 3600 << 3}, {"day", "1d", 86400 << 3}, {"week", "1w", 1},
        {"month", "1M", 2},        {"quarter", "1q", 3},      {"year", "1y", 4},
    };
    if (bCalendar) {
        for (size_t i = 0; i < LP_ARRAY_SIZE(aCal); i++) {
            if (!strcmp(z, aCal[i].z1) || !strcmp(z, aCal[i].z2)) return aCal[i].how;
        }
        return 0;
    }
    char *end;
    long long n = strtoll(z, &end, 10);
    int64_t unit = !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60 : !strcmp(end, "h") ? 3600 : !strcmp(end, "d") ? 86400 : 0;
    if (end == z || *z < '0' || *z > '9' || n <= 0 || !unit || n > 100000LL * 86400 / unit) return 0;
    return (uint64_t)(n * unit) << 3;
}

/* Manticore's bucket functions, for GROUP BY and FACET:
** HISTOGRAM(x, {hist_interval=N [, hist_offset=M]}), RANGE(x, {range_to=a},
** {range_from=a, range_to=b}, {range_from=b}), DATE_HISTOGRAM(t,
** {calendar_interval='month'} | {fixed_interval='3h'}) and DATE_RANGE(t,
** ...), RANGE's with bounds in date math (value_date_math(), `now` the
** statement's start) or unix seconds. */
static int bind_bucket(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    const char *z = e->u.func.zName;
    int nArg = e->u.func.nArg, kind = z[0] == 'h' ? 0 : z[0] == 'r' ? 1 : !strcmp(z, "date_range") ? 3 : 2;
    int bRanges = kind == 1 || kind == 3;
    Expr **aArg = e->u.func.aArg;
    static const char *const azUsage[] = {
        "HISTOGRAM() takes a value and {hist_interval=N, hist_offset=M}",
        "RANGE() takes a value and ranges: RANGE(x, {range_to=10}, {range_from=10, range_to=20}, {range_from=20})",
        "DATE_HISTOGRAM() takes a time and {calendar_interval='month'} or {fixed_interval='3h'}",
        "DATE_RANGE() takes a time and ranges: DATE_RANGE(t, {range_to='now-1M/M'}, {range_from='now-1M/M'})",
    };
    static const char *const azName[] = {"HISTOGRAM", "RANGE", "DATE_HISTOGRAM", "DATE_RANGE"};
    if (nArg < 2 || (!bRanges && nArg != 2)) return bind_fail_at(b, e->pos, azUsage[kind]);
    for (int i = 1; i < nArg; i++) {
        if (aArg[i]->kind != EXPR_MAP) return bind_fail_at(b, aArg[i]->pos, azUsage[kind]);
    }
    QExpr **aq = arena_alloc(b->a, sizeof(QExpr *) * 3);
    double *aXY = bRanges ? arena_alloc(b->a, sizeof(double) * 2 * (size_t)(nArg - 1)) : NULL;
    int bConst;
    if (!aq || (bRanges && !aXY)) return bind_oom(b);
    if (bind_num_args(b, ctx, azName[kind], aArg, 1, 1, aq, &bConst)) return b->rc;
    int64_t now = lp_unix_now();
    Value iv = value_null(), off = value_int(0);
    uint64_t how = 0;
    for (int i = 1; i < nArg; i++) {
        const Expr *m = aArg[i];
        double from = -INFINITY, to = INFINITY;
        for (int j = 0; j < m->u.map.nItem; j++) {
            const SqlMapItem *it = &m->u.map.aItem[j];
            const char *zo = it->zName;
            Value v = value_null();
            if (kind == 0 && (!strcmp(zo, "hist_interval") || !strcmp(zo, "hist_offset"))) {
                if (opt_value(b, it, zo[5] == 'i' ? &iv : &off)) return b->rc;
            } else if (bRanges && (!strcmp(zo, "range_from") || !strcmp(zo, "range_to"))) {
                if (kind == 3 && it->pValue->kind == EXPR_STRING) {
                    int64_t tv;
                    int at = 0;
                    const char *zWhy = value_date_math(it->pValue->u.s.z, now, &tv, &at);
                    if (zWhy) {
                        char zMsg[200];
                        snprintf(zMsg, sizeof(zMsg), "DATE_RANGE(): %s: %s in '%.64s' at offset %d", zo, zWhy,
                                 it->pValue->u.s.z, at);
                        return bind_fail_at(b, it->pValue->pos, zMsg);
                    }
                    v = value_int(tv);
                } else if (opt_value(b, it, &v)) {
                    return b->rc;
                }
                *(zo[6] == 'f' ? &from : &to) = v.kind == VAL_INT ? (double)v.u.i : v.u.f;
            } else if (kind == 2 && (!strcmp(zo, "calendar_interval") || !strcmp(zo, "fixed_interval"))) {
                const char *zv = opt_word(b, it);
                if (!zv) return b->rc;
                if (!(how = date_interval(zv, zo[0] == 'c'))) {
                    return bind_fail_at(b, it->pValue->pos, zo[0] == 'c'
                                            ? "DATE_HISTOGRAM(): calendar_interval is minute, hour, day, week, month, "
                                              "quarter or year (or 1m, 1h, 1d, 1w, 1M, 1q, 1y)"
                                            : "DATE_HISTOGRAM(): fixed_interval is a whole number of s, m, h or d "
                                              "('90s', '3h'), up to 100000 days");
                }
            } else {
                return bind_fail_at(b, it->pos, azUsage[kind]);
            }
        }
        if (bRanges) {
            if (!(from < to)) {
                return bind_fail_at(b, m->pos, kind == 1 ? "RANGE(): each range needs range_from below range_to"
                                                         : "DATE_RANGE(): each range needs range_from before range_to");
            }
            aXY[2 * (i - 1)] = from;
            aXY[2 * (i - 1) + 1] = to;
        }
    }
    if (kind == 0) {
        double di = iv.kind == VAL_INT ? (double)iv.u.i : iv.u.f, d0 = off.kind == VAL_INT ? (double)off.u.i : off.u.f;
        if (iv.kind == VAL_NULL || !(di > 0) || d0 < 0 || d0 >= di) {
            return bind_fail_at(b, aArg[1]->pos, "HISTOGRAM(): hist_interval must be above 0, hist_offset from 0 "
                                                 "to below hist_interval");
        }
        if (!(aq[1] = qexpr_const(b->a, iv)) || !(aq[2] = qexpr_const(b->a, off))) return bind_oom(b);
    }
    if (kind == 2 && !how) return bind_fail_at(b, aArg[1]->pos, azUsage[kind]);
    QFunc fn = kind == 0 ? QF_HISTOGRAM : bRanges ? QF_RANGE : QF_DATE_HISTOGRAM;
    QExpr *q = qexpr_func(b->a, fn, (const QExpr *const *)aq, kind == 0 ? 3 : 1, how, 0);
    if (!q) return bind_oom(b);
    q->u.fn.aXY = aXY;
    q->u.fn.nXY = bRanges ? 2 * (nArg - 1) : 0;
    int bInt = kind != 0 || (iv.kind == VAL_INT && off.kind == VAL_INT);
    return bexpr_computed(out, q, bInt ? SQLCOL_BIGINT : SQLCOL_DOUBLE, bConst);
}

/* REMAP(cond, expr, (c1, c2, ...), (v1, v2, ...)), Manticore's: v_i for
** a row where cond = c_i (the first that holds), else expr; bound as
** IF(cond = c1, v1, IF(cond = c2, v2, ... expr)). */
#define REMAP_MAX 256
static int bind_remap(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    Expr *const *aArg = e->u.func.aArg;
    int n = e->u.func.nArg == 4 && aArg[2]->kind == EXPR_LIST && aArg[3]->kind == EXPR_LIST ? aArg[2]->u.list.nItem : -1;
    if (n <= 0 || n != aArg[3]->u.list.nItem || n > REMAP_MAX) {
        return bind_fail_at(b, e->pos, "REMAP() takes a condition, a value and two lists of as many items (at "
                                       "most 256): REMAP(userid, karma, (1, 67), (999, 0))");
    }
    Expr *x = aArg[1];
    for (int i = n - 1; i >= 0; i--) {
        Expr *eq = arena_zalloc(b->a, sizeof(Expr)), *f = arena_zalloc(b->a, sizeof(Expr));
        Expr **a3 = arena_alloc(b->a, sizeof(Expr *) * 3);
        if (!eq || !f || !a3) return bind_oom(b);
        eq->kind = EXPR_BINARY;
        eq->pos = aArg[2]->u.list.aItem[i]->pos;
        eq->u.binary.op = OP_EQ;
        eq->u.binary.pLeft = aArg[0];
        eq->u.binary.pRight = aArg[2]->u.list.aItem[i];
        a3[0] = eq;
        a3[1] = aArg[3]->u.list.aItem[i];
        a3[2] = x;
        f->kind = EXPR_FUNC;
        f->pos = e->pos;
        f->u.func.zName = "if";
        f->u.func.aArg = a3;
        f->u.func.nArg = 3;
        x = f;
    }
    return bind_expr(b, x, ctx, out);
}

static int bind_scalar(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    /* kind: 'n' numbers, the result of the argument's type; 'z' numbers, an
    ** integer result; 'd' numbers, a double; 'm' all numbers (as
    ** arithmetic: a double if any is) or all strings; 'i' IF(); 'r' RAND() */
    static const struct {
        const char *zName;
        QFunc fn;
        signed char lo, hi;
        char kind;
    } aFn[] = {
        {"if", QF_IF, 3, 3, 'i'},          {"abs", QF_ABS, 1, 1, 'n'},
        {"ceil", QF_CEIL, 1, 1, 'z'},      {"ceiling", QF_CEIL, 1, 1, 'z'},
        {"floor", QF_FLOOR, 1, 1, 'z'},    {"sqrt", QF_SQRT, 1, 1, 'd'},
        {"ln", QF_LN, 1, 1, 'd'},          {"log2", QF_LOG2, 1, 1, 'd'},
        {"log10", QF_LOG10, 1, 1, 'd'},    {"exp", QF_EXP, 1, 1, 'd'},
        {"pow", QF_POW, 2, 2, 'd'},        {"power", QF_POW, 2, 2, 'd'},
        {"min", QF_MIN, 2, 2, 'm'},        {"max", QF_MAX, 2, 2, 'm'},
        {"least", QF_MIN, 2, 64, 'm'},     {"greatest", QF_MAX, 2, 64, 'm'},
        {"interval", QF_INTERVAL, 2, 64, 'z'}, {"rand", QF_RAND, 0, 1, 'r'},
        {"year", QF_YEAR, 1, 1, 'z'},      {"month", QF_MONTH, 1, 1, 'z'},
        {"day", QF_DAY, 1, 1, 'z'},        {"hour", QF_HOUR, 1, 1, 'z'},
        {"minute", QF_MINUTE, 1, 1, 'z'},  {"second", QF_SECOND, 1, 1, 'z'},
        {"yearmonth", QF_YEARMONTH, 1, 1, 'z'}, {"yearmonthday", QF_YEARMONTHDAY, 1, 1, 'z'},
        {"bigint", QF_BIGINT, 1, 1, 'z'},  {"double", QF_DOUBLE, 1, 1, 'd'},
        {"integer", QF_BIGINT, 1, 1, 'z'}, {"uint", QF_UINT, 1, 1, 'z'},
        {"sint", QF_SINT, 1, 1, 'z'},      {"fibonacci", QF_FIBONACCI, 1, 1, 'z'},
        {"sin", QF_SIN, 1, 1, 'd'},        {"cos", QF_COS, 1, 1, 'd'},
        {"atan2", QF_ATAN2, 2, 2, 'd'},    {"bitdot", QF_BITDOT, 2, 65, 'n'},
    };
    const char *z = e->u.func.zName;
    int nArg = e->u.func.nArg;
    Expr **aArg = e->u.func.aArg;
    if (!strcmp(z, "regex")) {
        /* REGEX(str, 'pattern'), Manticore's: 1 when it matches somewhere in str */
        BExpr x, p;
        if (nArg != 2) return bind_fail_at(b, e->pos, "REGEX() takes a string and a pattern: REGEX(tag, '^oil')");
        if (bind_expr(b, aArg[0], ctx, &x) || bind_expr(b, aArg[1], ctx, &p)) return b->rc;
        if (!x.bNull && x.type != SQLCOL_STRING) {
            char bx[96], zMsg[200];
            snprintf(zMsg, sizeof(zMsg), "REGEX() searches a string: argument 1 is %s", what(b, &x, bx, sizeof(bx)));
            return bind_fail_at(b, aArg[0]->pos, zMsg);
        }
        if (aArg[1]->kind != EXPR_STRING) return bind_fail_at(b, aArg[1]->pos, "REGEX(): the pattern is a quoted string");
        LpError e2;
        lp_err_clear(&e2);
        if (regexp_search_check(aArg[1]->u.s.z, aArg[1]->u.s.n, &e2) != LP_OK) {
            if (e2.code == LP_NOMEM) return bind_oom(b);
            char zMsg[LP_ERRMSG_MAX + 80];
            snprintf(zMsg, sizeof(zMsg), "REGEX(): the pattern does not compile at offset %lld: %s", (long long)e2.pos,
                     e2.zMsg);
            return bind_fail_at(b, aArg[1]->pos, zMsg);
        }
        QExpr **aq = arena_alloc(b->a, sizeof(QExpr *) * 2);
        if (!aq) return bind_oom(b);
        aq[0] = x.q;
        aq[1] = p.q;
        if (!(out->q = qexpr_func(b->a, QF_REGEX, (const QExpr *const *)aq, 2, 0, 0))) return bind_oom(b);
        out->type = SQLCOL_BIGINT;
        out->iCol = SCHEMA_NO_COL;
        out->bConst = x.bConst;
        out->bNull = 0;
        return LP_OK;
    }
    if (!strcmp(z, "in") || !strcmp(z, "idiv")) {
        /* IN(x, 1, 2) is x IN (1, 2); IDIV(a, b) is a DIV b */
        if (z[0] == 'i' && z[1] == 'n' ? nArg < 2 : nArg != 2) {
            return bind_fail_at(b, e->pos, z[1] == 'n' ? "IN() takes a value and one or more to look for: "
                                                         "IN(x, 1, 2)"
                                                       : "IDIV() takes two arguments");
        }
        Expr *x = arena_zalloc(b->a, sizeof(Expr));
        if (!x) return bind_oom(b);
        x->pos = e->pos;
        if (z[1] == 'n') {
            x->kind = EXPR_IN;
            x->u.in.pLeft = aArg[0];
            x->u.in.aList = aArg + 1;
            x->u.in.nList = nArg - 1;
        } else {
            x->kind = EXPR_BINARY;
            x->u.binary.op = OP_IDIV;
            x->u.binary.pLeft = aArg[0];
            x->u.binary.pRight = aArg[1];
        }
        return bind_expr(b, x, ctx, out);
    }
    if (!strcmp(z, "remap")) return bind_remap(b, e, ctx, out);
    if (!strcmp(z, "geodist")) return bind_geodist(b, e, ctx, out);
    if (!strcmp(z, "contains")) return bind_contains(b, e, ctx, out);
    if (!strcmp(z, "histogram") || !strcmp(z, "range") || !strcmp(z, "date_histogram") || !strcmp(z, "date_range")) {
        return bind_bucket(b, e, ctx, out);
    }
    if (!strcmp(z, "poly2d") || !strcmp(z, "geopoly2d")) {
        return bind_fail_at(b, e->pos, "POLY2D() and GEOPOLY2D() make a polygon for CONTAINS(): "
                                       "CONTAINS(POLY2D(x1, y1, x2, y2, x3, y3), x, y)");
    }
    if (e->u.func.bFor) return bind_for(b, e, ctx, out);
    if (!strcmp(z, "any") || !strcmp(z, "all")) {
        return bind_fail_at(b, e->pos, "ANY() and ALL() of a multi-value are compared with values: "
                                       "ANY(tags) = 3, ALL(tags) IN (1, 2), ANY(tags) BETWEEN 1 AND 5");
    }
    int bMvaFn = nArg == 1 && (!strcmp(z, "length") || !strcmp(z, "least") || !strcmp(z, "greatest"));
    if (bMvaFn) { /* LENGTH(mva | string), LEAST(mva), GREATEST(mva) */
        BExpr x;
        if (bind_expr(b, aArg[0], ctx, &x)) return b->rc;
        QFunc fn = z[0] == 'l' && z[1] == 'e' && z[2] == 'n' ? QF_LENGTH : z[0] == 'l' ? QF_MVA_MIN : QF_MVA_MAX;
        if (fn != QF_LENGTH && x.type != SQLCOL_MULTI) return arity_fail(b, e, 2, 64); /* LEAST(a, b, ...) */
        if (!x.bNull && x.type != SQLCOL_MULTI && x.type != SQLCOL_STRING) {
            char bx[96], zMsg[240];
            snprintf(zMsg, sizeof(zMsg), "LENGTH() takes a multi-value or a string, not %s", what(b, &x, bx, sizeof(bx)));
            return bind_fail_at(b, aArg[0]->pos, zMsg);
        }
        QExpr **aq = arena_alloc(b->a, sizeof(QExpr *));
        if (!aq) return bind_oom(b);
        aq[0] = x.q;
        if (!(out->q = qexpr_func(b->a, fn, (const QExpr *const *)aq, 1, 0, 0))) return bind_oom(b);
        out->type = SQLCOL_BIGINT;
        out->iCol = SCHEMA_NO_COL;
        out->bConst = x.bConst;
        out->bNull = x.bNull;
        return LP_OK;
    }
    int rcStr = bind_string_func(b, e, ctx, out);
    if (rcStr >= 0) return rcStr;
    size_t k = 0;
    while (k < LP_ARRAY_SIZE(aFn) && strcmp(z, aFn[k].zName) != 0) k++;
    if (k == LP_ARRAY_SIZE(aFn)) return -1;
    char kind = aFn[k].kind;
    if (nArg < aFn[k].lo || nArg > aFn[k].hi) return arity_fail(b, e, aFn[k].lo, aFn[k].hi);
    QExpr **aq = arena_alloc(b->a, sizeof(QExpr *) * (size_t)(nArg ? nArg : 1));
    BExpr *ax = arena_alloc(b->a, sizeof(BExpr) * (size_t)(nArg ? nArg : 1));
    if (!aq || !ax) return bind_oom(b);
    int bConst = kind != 'r', bDouble = 0, nStr = 0, nNum = 0;
    for (int i = 0; i < nArg; i++) {
        if (bind_expr(b, aArg[i], ctx, &ax[i])) return b->rc;
        aq[i] = ax[i].q;
        bConst &= ax[i].bConst;
        if (ax[i].bNull || (kind == 'i' && i == 0)) continue; /* IF()'s condition: any value */
        if (ax[i].type == SQLCOL_MULTI) {
            char bx[96], zMsg[240];
            snprintf(zMsg, sizeof(zMsg), "%s() does not take %s: use LENGTH(), LEAST() or GREATEST() of it", z,
                     what(b, &ax[i], bx, sizeof(bx)));
            return bind_fail_at(b, aArg[i]->pos, zMsg);
        }
        int bNum = is_num_type(ax[i].type);
        nNum += bNum;
        nStr += !bNum;
        bDouble |= ax[i].type == SQLCOL_FLOAT || ax[i].type == SQLCOL_DOUBLE;
        if (!bNum && kind != 'm' && kind != 'i' && !(ax[i].type == SQLCOL_STRING && (aFn[k].fn == QF_BIGINT || aFn[k].fn == QF_DOUBLE))) {
            char bx[96], zMsg[200];
            snprintf(zMsg, sizeof(zMsg), "%s() takes numbers: argument %d is %s", z, i + 1,
                     what(b, &ax[i], bx, sizeof(bx)));
            return bind_fail_at(b, aArg[i]->pos, zMsg);
        }
    }
    if (nStr && nNum) {
        char zMsg[200];
        snprintf(zMsg, sizeof(zMsg), "%s() takes %s, not a mix", z,
                 kind == 'i' ? "branches that are both numbers or both strings"
                             : "arguments that are all numbers or all strings");
        return bind_fail_at(b, e->pos, zMsg);
    }
    uint64_t salt = 0;
    if (kind == 'r') {
        /* RAND(seed) gives each row the same number every time; RAND() a
        ** new one per statement */
        if (nArg == 1 && (!ax[0].bConst || ax[0].type != SQLCOL_BIGINT || ax[0].bNull)) {
            return bind_fail_at(b, aArg[0]->pos, "rand() takes an integer seed, or nothing");
        }
        Value v;
        if (nArg == 1) const_value(b, &ax[0], &v);
        salt = nArg == 1 ? (uint64_t)v.u.i * 0x9E3779B97F4A7C15ull : (uint64_t)lp_now_ns() ^ (uint64_t)(uintptr_t)b;
    }
    SqlColType t = kind == 'd' || kind == 'r' ? SQLCOL_DOUBLE
                   : kind == 'z'             ? SQLCOL_BIGINT
                   : nStr                    ? SQLCOL_STRING
                   : bDouble                 ? SQLCOL_DOUBLE
                                             : SQLCOL_BIGINT;
    QExpr *q = qexpr_func(b->a, aFn[k].fn, (const QExpr *const *)aq, nArg, salt, t == SQLCOL_DOUBLE);
    return q ? bexpr_computed(out, q, t, bConst) : bind_oom(b);
}

/* "function f() takes no arguments", at the call. */
static int no_args_fail(Binder *b, const Expr *e) {
    char zMsg[160];
    snprintf(zMsg, sizeof(zMsg), "function %s() takes no arguments", e->u.func.zName);
    return bind_fail_at(b, e->pos, zMsg);
}

/* Functions that are constants for the statement. */
static int bind_func(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    const char *z = e->u.func.zName;
    if (b->pHave && agg_kind(e) != AGG_NONE) return have_agg(b, e, out);
    if (b->pHave && (!strcmp(z, "weight") || !strcmp(z, "knn_dist") || !strcmp(z, "hybrid_score"))) {
        return have_name(b, e, ctx, out); /* the group's first row's */
    }
    SqlSession *s = b->s;
    Value v = value_null();
    SqlColType t = SQLCOL_STRING;
    if (strcmp(z, "count") == 0) {
        return bind_fail(b, ER_MIX_AGGREGATE, LP_BADINPUT,
                         "COUNT() is only allowed alone in the select list");
    }
    static const char *const azNoArg[] = {"database", "schema", "user", "current_user",
                                          "session_user", "system_user", "version",
                                          "connection_id", "last_insert_id", "now",
                                          "unix_timestamp"};
    int k = -1;
    for (int i = 0; i < (int)LP_ARRAY_SIZE(azNoArg); i++) {
        if (strcmp(z, azNoArg[i]) == 0) k = i;
    }
    if (k < 0 && (!strcmp(z, "weight") || !strcmp(z, "explain_score"))) {
        if (e->u.func.nArg != 0) {
            return no_args_fail(b, e);
        }
        if (ctx != CTX_SELECT && ctx != CTX_ORDER) {
            return bind_fail(b, ER_PARSE, LP_BADINPUT,
                             "%s() can only be used in the select list and ORDER BY", z);
        }
        if (z[0] == 'e' && !b->bMatch) {
            return bind_fail(b, ER_PARSE, LP_BADINPUT,
                             "EXPLAIN_SCORE() needs a MATCH() in the WHERE clause");
        }
        return z[0] == 'w' ? bind_row_value(b, out, qexpr_weight(b->a), SQLCOL_FLOAT)
                           : bind_row_value(b, out, qexpr_call(b->a, qfn_explain_score, NULL, NULL, 0), SQLCOL_JSON);
    }
    if (k < 0 && !strcmp(z, "packedfactors")) {
        /* PACKEDFACTORS() or PACKEDFACTORS({no_atc=1}), as Manticore: under
        ** the expression ranker only */
        const void *pNoAtc = NULL;
        if (e->u.func.nArg > 1 || (e->u.func.nArg == 1 && e->u.func.aArg[0]->kind != EXPR_MAP)) {
            return bind_fail_at(b, e->pos, "PACKEDFACTORS() takes no argument, or {no_atc=1}");
        }
        for (int i = 0; e->u.func.nArg == 1 && i < e->u.func.aArg[0]->u.map.nItem; i++) {
            const SqlMapItem *it = &e->u.func.aArg[0]->u.map.aItem[i];
            if (strcmp(it->zName, "no_atc") != 0) {
                return bind_fail_at(b, it->pos, "PACKEDFACTORS(): unknown option: expected no_atc");
            }
            if (it->pValue->kind != EXPR_INT || (it->pValue->u.i != 0 && it->pValue->u.i != 1)) {
                return bind_fail_at(b, it->pValue->pos, "PACKEDFACTORS(): no_atc must be 0 or 1");
            }
            pNoAtc = it->pValue->u.i ? b : NULL;
        }
        if (ctx != CTX_SELECT) {
            return bind_fail_at(b, e->pos, "PACKEDFACTORS() can only be used in the select list");
        }
        if (!b->bMatch) return bind_fail_at(b, e->pos, "PACKEDFACTORS() needs a MATCH() in the WHERE clause");
        if (!b->bExprRanker) {
            return bind_fail_at(b, e->pos, "PACKEDFACTORS() needs OPTION ranker=expr('...') or ranker=export('...')");
        }
        return bind_row_value(b, out, qexpr_call(b->a, qfn_packed_factors, pNoAtc, NULL, 0), SQLCOL_STRING);
    }
    if (k < 0 && !strcmp(z, "query")) {
        /* Manticore's QUERY(): the statement's MATCH text, as written
        ** ('' without one), for SNIPPET(body, QUERY()) */
        if (e->u.func.nArg != 0) return no_args_fail(b, e);
        QExpr *q = qexpr_const(b->a, value_str(b->zMatch ? b->zMatch : "", (uint32_t)b->nMatch));
        if (!q) return bind_oom(b);
        bexpr_const(out, q, SQLCOL_STRING);
        out->bNull = 0;
        return LP_OK;
    }
    if (k < 0 && (!strcmp(z, "match") || !strcmp(z, "knn"))) {
        return bind_fail(b, ER_PARSE, LP_BADINPUT,
                         "%s must be a condition of its own in WHERE, joined to the rest with "
                         "AND (not under OR or NOT), and there can be only one",
                         z[0] == 'm' ? "MATCH()" : "knn() (in a SELECT)");
    }
    if (k < 0 && !strcmp(z, "hybrid_score")) {
        /* the fused rank score of a hybrid search, as Manticore's */
        if (e->u.func.nArg != 0) return no_args_fail(b, e);
        if (!b->bFusion) {
            return bind_fail(b, ER_PARSE, LP_BADINPUT, "hybrid_score() needs a hybrid search: MATCH() and knn() "
                             "with OPTION fusion_method='rrf', or hybrid_match()");
        }
        if (ctx != CTX_SELECT && ctx != CTX_ORDER) {
            return bind_fail(b, ER_PARSE, LP_BADINPUT, "hybrid_score() can only be used in the select list and "
                             "ORDER BY");
        }
        return bind_row_value(b, out, qexpr_hybrid(b->a), SQLCOL_DOUBLE);
    }
    if (k < 0 && !strcmp(z, "knn_dist")) {
        if (e->u.func.nArg != 0) return no_args_fail(b, e);
        if (!b->bKnn) {
            return bind_fail(b, ER_PARSE, LP_BADINPUT, "knn_dist() needs a knn() in the WHERE clause");
        }
        if (b->bFusion && ctx == CTX_WHERE) {
            return bind_fail(b, ER_PARSE, LP_BADINPUT, "knn_dist() cannot filter a hybrid search: the rows are "
                             "fused after both searches ran (use it in the select list or ORDER BY)");
        }
        if (!(out->q = qexpr_knn_dist(b->a))) return bind_oom(b);
        out->type = SQLCOL_FLOAT;
        out->iCol = SCHEMA_NO_COL;
        out->bConst = 0;
        out->bNull = 0;
        return LP_OK;
    }
    if (k < 0) {
        if (!strcmp(z, "highlight") || !strcmp(z, "snippet")) return bind_highlight(b, e, ctx, out);
        if (agg_kind(e) != AGG_NONE) { /* SUM(x), MIN(x): not MIN(a, b), a scalar function */
            return bind_fail(b, ER_MIX_AGGREGATE, LP_BADINPUT, "%s() is an aggregate: it needs GROUP BY "
                             "(COUNT(*) alone counts the matches)", z);
        }
        int rc = bind_scalar(b, e, ctx, out);
        if (rc != -1) return rc;
        return bind_fail(b, ER_NO_SUCH_FUNC, LP_NOTFOUND, "unknown function '%s'", z);
    }
    if (e->u.func.nArg != 0) return no_args_fail(b, e);
    const char *zText = NULL;
    char buf[64];
    switch (k) {
    case 0: case 1: zText = s->zDb; break;
    case 2: case 3: case 4: case 5:
        snprintf(buf, sizeof(buf), "%s@localhost", s->zUser ? s->zUser : "");
        zText = buf;
        break;
    case 6: zText = s->e->zVersion; break;
    case 7: v = value_int(s->connId), t = SQLCOL_BIGINT; break;
    case 8: v = value_int(s->iLastInsertId), t = SQLCOL_BIGINT; break;
    default: v = value_int(lp_unix_now()), t = SQLCOL_TIMESTAMP; break;
    }
    if (zText) {
        char *zc = arena_strndup(b->a, zText, strlen(zText));
        if (!zc) return bind_oom(b);
        v = value_str(zc, (uint32_t)strlen(zc));
    }
    QExpr *q = qexpr_const(b->a, v);
    if (!q) return bind_oom(b);
    bexpr_const(out, q, t);
    out->bNull = v.kind == VAL_NULL;
    return LP_OK;
}

/* x op y where one side is a multi-value (qx, qy: its ANY()/ALL(), or 0):
** Manticore's filters. tags = 3 is ANY(tags) = 3 and its != none equal
** to 3; ANY()/ALL() test each item with the operator as written. */
static int bind_mva_compare(Binder *b, const Expr *e, BExpr *x, int qx, BExpr *y, int qy, BExpr *out) {
    static const QOp aMap[] = {
        [OP_EQ] = QOP_EQ, [OP_NE] = QOP_NE, [OP_LT] = QOP_LT, [OP_LE] = QOP_LE, [OP_GT] = QOP_GT, [OP_GE] = QOP_GE,
    };
    ExprOp op = e->u.binary.op;
    if (op < OP_EQ || op > OP_GE) {
        if (op == OP_AND || op == OP_OR) {
            return no_mva_truth(b, x, e->u.binary.pLeft->pos) ? b->rc : no_mva_truth(b, y, e->u.binary.pRight->pos);
        }
        char bx[96];
        const BExpr *bad = x->type == SQLCOL_MULTI ? x : y;
        return bind_fail(b, ER_BAD_VALUE, LP_BADINPUT, "arithmetic needs numbers, got %s: use LENGTH(), "
                         "LEAST() or GREATEST() of it", what(b, bad, bx, sizeof(bx)));
    }
    QOp qop = aMap[op];
    if (x->type != SQLCOL_MULTI) { /* 3 < ANY(tags) is ANY(tags) > 3 */
        BExpr t = *x;
        *x = *y;
        *y = t;
        qx = qy;
        qop = qop == QOP_LT ? QOP_GT : qop == QOP_GT ? QOP_LT : qop == QOP_LE ? QOP_GE : qop == QOP_GE ? QOP_LE : qop;
    }
    if (mva_operand(b, y)) return b->rc;
    int bNot = 0;
    if (!qx && qop == QOP_NE) { /* tags != 3: no item equals 3 */
        qop = QOP_EQ;
        bNot = 1;
    }
    QExpr *q = qexpr_mva(b->a, x->q, qop, y->q, NULL, NULL, 0, qx == 2, 0, bNot);
    return q ? bexpr_computed(out, q, SQLCOL_BIGINT, 0) : bind_oom(b);
}

static int bind_expr(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    if (b->rc) return b->rc;
    QExpr *q = NULL;
    BExpr x, y, z;
    switch (e->kind) {
    case EXPR_NULL:
        if (!(q = qexpr_const(b->a, value_null()))) return bind_oom(b);
        bexpr_const(out, q, SQLCOL_STRING);
        out->bNull = 1;
        return LP_OK;
    case EXPR_INT:
        if (!(q = qexpr_const(b->a, value_int(e->u.i)))) return bind_oom(b);
        bexpr_const(out, q, SQLCOL_BIGINT);
        return LP_OK;
    case EXPR_FLOAT:
        if (!(q = qexpr_const(b->a, value_float(e->u.f)))) return bind_oom(b);
        bexpr_const(out, q, SQLCOL_DOUBLE);
        return LP_OK;
    case EXPR_STRING:
        if (!(q = qexpr_const(b->a, value_str(e->u.s.z, (uint32_t)e->u.s.n)))) return bind_oom(b);
        bexpr_const(out, q, SQLCOL_STRING);
        return LP_OK;
    case EXPR_COLUMN:
        return bind_column(b, e, ctx, out);
    case EXPR_SYSVAR:
    case EXPR_USERVAR: {
        Value v;
        int rc = sqlx_var_get(b->s, e->u.var.zName, e->kind == EXPR_USERVAR ? 3 : e->u.var.scope,
                              b->a, &v);
        if (rc == LP_NOTFOUND) {
            return bind_fail(b, ER_UNKNOWN_SYSVAR, LP_NOTFOUND, "unknown system variable '%s'",
                             e->u.var.zName);
        }
        if (rc) return bind_oom(b);
        if (!(q = qexpr_const(b->a, v))) return bind_oom(b);
        bexpr_const(out, q, v.kind == VAL_INT ? SQLCOL_BIGINT : SQLCOL_STRING);
        out->bNull = v.kind == VAL_NULL;
        return LP_OK;
    }
    case EXPR_UNARY:
        if (bind_expr(b, e->u.unary.pArg, ctx, &x)) return b->rc;
        if (e->u.unary.op == OP_NOT) {
            if (no_mva_truth(b, &x, e->u.unary.pArg->pos)) return b->rc;
            if (!(q = qexpr_unary(b->a, QOP_NOT, x.q))) return bind_oom(b);
            *out = x;
            out->q = q;
            out->type = SQLCOL_BIGINT;
            out->iCol = SCHEMA_NO_COL;
            return LP_OK;
        }
        if (!x.bNull && !is_num_type(x.type)) {
            return bind_fail_at(b, e->pos, "expected a number after the sign");
        }
        *out = x;
        out->iCol = SCHEMA_NO_COL;
        if (e->u.unary.op == OP_NEG) {
            if (!(out->q = qexpr_unary(b->a, QOP_NEG, x.q))) return bind_oom(b);
            if (x.type == SQLCOL_FLOAT) out->type = SQLCOL_DOUBLE;
            if (x.type != SQLCOL_DOUBLE && x.type != SQLCOL_FLOAT) out->type = SQLCOL_BIGINT;
        }
        return LP_OK;
    case EXPR_BINARY: {
        ExprOp op = e->u.binary.op;
        int qx, qy;
        if (bind_side(b, e->u.binary.pLeft, ctx, &x, &qx) || bind_side(b, e->u.binary.pRight, ctx, &y, &qy)) {
            return b->rc;
        }
        if (x.type == SQLCOL_MULTI || y.type == SQLCOL_MULTI) return bind_mva_compare(b, e, &x, qx, &y, qy, out);
        static const QOp aMap[] = {
            [OP_ADD] = QOP_ADD, [OP_SUB] = QOP_SUB, [OP_MUL] = QOP_MUL, [OP_DIV] = QOP_DIV,
            [OP_MOD] = QOP_MOD, [OP_IDIV] = QOP_IDIV, [OP_EQ] = QOP_EQ, [OP_NE] = QOP_NE,
            [OP_LT] = QOP_LT,   [OP_LE] = QOP_LE,     [OP_GT] = QOP_GT, [OP_GE] = QOP_GE,
            [OP_AND] = QOP_AND, [OP_OR] = QOP_OR, [OP_BITAND] = QOP_BITAND, [OP_BITOR] = QOP_BITOR,
        };
        if ((size_t)op >= LP_ARRAY_SIZE(aMap) || aMap[op] == QOP_NONE) {
            return bind_fail_at(b, e->pos, "unsupported operator");
        }
        SqlColType t = SQLCOL_BIGINT;
        if (op >= OP_EQ && op <= OP_GE) {
            if (check_comparable(b, &x, &y)) return b->rc;
        } else if (op >= OP_ADD && op <= OP_IDIV) {
            /* a JSON property (or a FOR's element) is a number in some rows:
            ** arithmetic on it gives NULL in the others, its type theirs */
            int bDyn = is_dynamic(&x) || is_dynamic(&y);
            if ((!x.bNull && !is_num_type(x.type) && !is_dynamic(&x)) ||
                (!y.bNull && !is_num_type(y.type) && !is_dynamic(&y))) {
                char bx[96];
                const BExpr *bad = (!x.bNull && !is_num_type(x.type) && !is_dynamic(&x)) ? &x : &y;
                return bind_fail(b, ER_BAD_VALUE, LP_BADINPUT,
                                 "arithmetic needs numbers, got %s", what(b, bad, bx, sizeof(bx)));
            }
            int bDouble = x.type == SQLCOL_FLOAT || x.type == SQLCOL_DOUBLE ||
                          y.type == SQLCOL_FLOAT || y.type == SQLCOL_DOUBLE;
            t = bDyn ? SQLCOL_JSON : (op == OP_DIV || bDouble) && op != OP_IDIV ? SQLCOL_DOUBLE : SQLCOL_BIGINT;
        } else if (op == OP_BITAND || op == OP_BITOR) {
            /* integers (a JSON property: where it is one; NULL elsewhere) */
            const BExpr *bad = !x.bNull && !is_int_type(x.type) && !is_dynamic(&x)   ? &x
                               : !y.bNull && !is_int_type(y.type) && !is_dynamic(&y) ? &y
                                                                                     : NULL;
            if (bad) {
                char bx[96], zMsg[160];
                snprintf(zMsg, sizeof(zMsg), "bitwise %s needs integers, got %s", op == OP_BITAND ? "&" : "|",
                         what(b, bad, bx, sizeof(bx)));
                return bind_fail_at(b, (bad == &x ? e->u.binary.pLeft : e->u.binary.pRight)->pos, zMsg);
            }
            t = is_dynamic(&x) || is_dynamic(&y) ? SQLCOL_JSON : SQLCOL_BIGINT;
        }
        if ((op == OP_AND || op == OP_OR) &&
            (no_mva_truth(b, &x, e->u.binary.pLeft->pos) || no_mva_truth(b, &y, e->u.binary.pRight->pos))) {
            return b->rc;
        }
        if (!(q = qexpr_binary(b->a, aMap[op], x.q, y.q))) return bind_oom(b);
        out->q = q;
        out->type = t;
        out->iCol = SCHEMA_NO_COL;
        out->bConst = x.bConst && y.bConst;
        out->bNull = 0;
        return LP_OK;
    }
    case EXPR_IN: {
        int qx;
        if (bind_side(b, e->u.in.pLeft, ctx, &x, &qx)) return b->rc;
        int n = e->u.in.nList;
        Value *aVal = arena_alloc(b->a, sizeof(Value) * (size_t)(n ? n : 1));
        if (!aVal) return bind_oom(b);
        for (int i = 0; i < n; i++) {
            if (bind_expr(b, e->u.in.aList[i], ctx, &y)) return b->rc;
            if (!y.bConst) {
                return bind_fail_at(b, e->u.in.aList[i]->pos,
                                    "expected a constant value in the IN list");
            }
            if (x.type == SQLCOL_MULTI ? mva_operand(b, &y) : check_comparable(b, &x, &y)) return b->rc;
            const_value(b, &y, &aVal[i]);
        }
        if (x.type == SQLCOL_MULTI) {
            /* tags IN (…) is ANY(tags) IN (…), its NOT IN none in the list;
            ** ANY(tags) NOT IN (…): an item not in it; ALL(…) NOT IN: none in it */
            int bNot = e->u.in.bNot;
            q = qexpr_mva(b->a, x.q, QOP_NONE, NULL, NULL, aVal, n, qx == 2, qx && bNot, !qx && bNot);
        } else {
            q = qexpr_in(b->a, x.q, aVal, n, e->u.in.bNot);
        }
        if (!q) return bind_oom(b);
        out->q = q;
        out->type = SQLCOL_BIGINT;
        out->iCol = SCHEMA_NO_COL;
        out->bConst = x.bConst;
        out->bNull = 0;
        return LP_OK;
    }
    case EXPR_BETWEEN: {
        int qx;
        if (bind_side(b, e->u.between.pLeft, ctx, &x, &qx) ||
            bind_expr(b, e->u.between.pLow, ctx, &y) ||
            bind_expr(b, e->u.between.pHigh, ctx, &z)) {
            return b->rc;
        }
        if (x.type == SQLCOL_MULTI) {
            if (mva_operand(b, &y) || mva_operand(b, &z)) return b->rc;
            int bNot = e->u.between.bNot;
            q = qexpr_mva(b->a, x.q, QOP_AND, y.q, z.q, NULL, 0, qx == 2, qx && bNot, !qx && bNot);
        } else {
            if (check_comparable(b, &x, &y) || check_comparable(b, &x, &z)) return b->rc;
            q = qexpr_between(b->a, x.q, y.q, z.q, e->u.between.bNot);
        }
        if (!q) return bind_oom(b);
        out->q = q;
        out->type = SQLCOL_BIGINT;
        out->iCol = SCHEMA_NO_COL;
        out->bConst = x.bConst && y.bConst && z.bConst;
        out->bNull = 0;
        return LP_OK;
    }
    case EXPR_ISNULL:
        if (bind_expr(b, e->u.isnull.pArg, ctx == CTX_WHERE ? CTX_SELECT : ctx, &x)) {
            return b->rc; /* IS NULL may look at any column, TEXT and JSON included */
        }
        if (!(q = qexpr_isnull(b->a, x.q, e->u.isnull.bNot))) return bind_oom(b);
        out->q = q;
        out->type = SQLCOL_BIGINT;
        out->iCol = SCHEMA_NO_COL;
        out->bConst = x.bConst;
        out->bNull = 0;
        return LP_OK;
    case EXPR_FUNC:
        return bind_func(b, e, ctx, out);
    case EXPR_STAR:
        return bind_fail_at(b, e->pos, "'*' is only allowed as COUNT(*) or SELECT *");
    case EXPR_LIST:
        return bind_fail_at(b, e->pos,
                            "a parenthesised list is only allowed after IN or as a vector in "
                            "VALUES");
    case EXPR_MAP:
        return bind_fail_at(b, e->pos, "an option map {…} is not allowed here");
    }
    return bind_fail_at(b, e->pos, "unsupported expression");
}

/* Opens the statement's table: a new reference, with the binder pointed
** at its schema; NULL and error 1146 when there is none. */
static Table *bind_table(Binder *b, const char *zTable) {
    Table *t = catalog_get(b->s->e->pCatalog, zTable);
    if (!t) {
        LpError e2;
        lp_err_clear(&e2);
        if (catalog_open_error(b->s->e->pCatalog, zTable, &e2) != LP_OK) {
            bind_fail(b, ER_UNKNOWN_ERROR, e2.code, "%s", e2.zMsg);
        } else {
            bind_fail(b, ER_NO_SUCH_TABLE, LP_NOTFOUND, "table '%s' does not exist", zTable);
        }
        return NULL;
    }
    b->pSchema = table_schema(t);
    return t;
}

/* ------------------------------------------------------------------ */
/* Formatting result cells                                             */

static int put_cell(SqlResult *r, SqlCell *c, const Value *v, SqlColType t, StrBuf *sb) {
    if (v->kind == VAL_NULL) return LP_OK;
    if (v->kind == VAL_STR) return sql_result_cell(r, c, v->u.s.z, v->u.s.n);
    strbuf_reset(sb);
    value_format(v, t == SQLCOL_FLOAT || t == SQLCOL_VECTOR, sb);
    if (sb->oom) return LP_NOMEM;
    return sql_result_cell(r, c, sb->z ? sb->z : "", sb->n);
}

typedef struct RowSink {
    SqlResult *r;
    StrBuf sb;
} RowSink;

static int sink_row(void *ctx, const Value *aVal, int nVal) {
    RowSink *k = ctx;
    SqlCell *row = sql_result_row(k->r);
    if (!row) return LP_NOMEM;
    for (int i = 0; i < nVal; i++) {
        if (put_cell(k->r, &row[i], &aVal[i], k->r->aCol[i].type, &k->sb)) return LP_NOMEM;
    }
    return LP_OK;
}

/* ------------------------------------------------------------------ */
/* SELECT                                                              */

/* Candidate ids from a top-level `id = c` / `id IN (…)` conjunct of the
** WHERE; the whole filter is still checked on each candidate. Returns 1
** when a candidate list was found. */
static int find_id_candidates(const QExpr *q, const int64_t **paId, int *pnId, Arena *a) {
    if (!q) return 0;
    if (q->kind == QE_BINARY && q->op == QOP_AND) {
        return find_id_candidates(q->a, paId, pnId, a) || find_id_candidates(q->b, paId, pnId, a);
    }
    const QExpr *col = NULL, *val = NULL;
    if (q->kind == QE_BINARY && q->op == QOP_EQ) {
        if (q->a->kind == QE_COLUMN && q->b->kind == QE_CONST) col = q->a, val = q->b;
        if (q->b->kind == QE_COLUMN && q->a->kind == QE_CONST) col = q->b, val = q->a;
        if (!col || col->u.col.iCol != SCHEMA_ID_COL) return 0;
        int64_t *aId = arena_alloc(a, sizeof(int64_t));
        if (!aId) return 0;
        /* A non-integer or NULL constant matches no id: an empty list. */
        int n = 0;
        if (val->u.v.kind == VAL_INT) aId[n++] = val->u.v.u.i;
        if (val->u.v.kind == VAL_FLOAT && val->u.v.u.f == (double)(int64_t)val->u.v.u.f) {
            aId[n++] = (int64_t)val->u.v.u.f;
        }
        *paId = aId;
        *pnId = n;
        return 1;
    }
    if (q->kind == QE_IN && !q->bNot && q->a->kind == QE_COLUMN &&
        q->a->u.col.iCol == SCHEMA_ID_COL) {
        int64_t *aId = arena_alloc(a, sizeof(int64_t) * (size_t)(q->u.list.nVal + 1));
        if (!aId) return 0;
        int n = 0;
        for (int i = 0; i < q->u.list.nVal; i++) {
            const Value *v = &q->u.list.aVal[i];
            if (v->kind == VAL_INT) aId[n++] = v->u.i;
            if (v->kind == VAL_FLOAT && v->u.f == (double)(int64_t)v->u.f) aId[n++] = (int64_t)v->u.f;
        }
        *paId = aId;
        *pnId = n;
        return 1;
    }
    return 0;
}

/* The name a select item's column gets: its alias, else its text. */
static const char *item_name(const SqlStmt *st, const SelectItem *it, Arena *a) {
    if (it->zAlias) return it->zAlias;
    const Expr *e = it->pExpr;
    size_t n = (size_t)e->len;
    if ((size_t)e->pos + n > st->nSql) n = st->nSql - (size_t)e->pos;
    return arena_strndup(a, st->zSql + e->pos, n);
}

/* A number from an option value; 0 and an error when it is none. */
static int opt_number(Binder *b, const SqlMapItem *o, const Expr *v, double lo, double hi,
                      double *pOut) {
    double d;
    if (v && v->kind == EXPR_INT) {
        d = (double)v->u.i;
    } else if (v && v->kind == EXPR_FLOAT) {
        d = v->u.f;
    } else {
        char zMsg[160];
        snprintf(zMsg, sizeof(zMsg), "option '%s' expects a number", o->zName);
        return bind_fail_at(b, v ? v->pos : o->pos, zMsg);
    }
    if (!(d >= lo && d <= hi)) {
        char zMsg[200];
        snprintf(zMsg, sizeof(zMsg), "option '%s' expects a number from %g to %g", o->zName, lo, hi);
        return bind_fail_at(b, v->pos, zMsg);
    }
    *pOut = d;
    return LP_OK;
}

/* The text of a word or string option value, or NULL (error set). */
static const char *opt_word(Binder *b, const SqlMapItem *o) {
    const Expr *v = o->pValue;
    if (v && v->kind == EXPR_STRING) return v->u.s.z;
    if (v && v->kind == EXPR_COLUMN) return v->u.zName;
    char zMsg[160];
    snprintf(zMsg, sizeof(zMsg), "option '%s' expects a name", o->zName);
    bind_fail_at(b, v ? v->pos : o->pos, zMsg);
    return NULL;
}

static int apply_profile(Binder *b, const char *zProfiles, const char *zWant, int nFts,
                         const char *const *azFts, FtsRankParams *rank);

/* The value of an option that takes 0 or 1, in *pOn; the error set (and
** its code returned) for any other. */
static int opt_bool(Binder *b, const SqlMapItem *o, int *pOn) {
    const Expr *v = o->pValue;
    if (!v || v->kind != EXPR_INT || (v->u.i != 0 && v->u.i != 1)) {
        char zMsg[96];
        snprintf(zMsg, sizeof(zMsg), "%s expects 0 or 1", o->zName);
        return bind_fail_at(b, v ? v->pos : o->pos, zMsg);
    }
    *pOn = v->u.i == 1;
    return LP_OK;
}

/* The text of an option value: a string, a number or a bare word. NULL
** (and an error) for anything else. */
static const char *opt_text(Binder *b, const SqlMapItem *o) {
    const Expr *v = o->pValue;
    if (v && v->kind == EXPR_STRING) return v->u.s.z;
    if (v && v->kind == EXPR_COLUMN) return v->u.zName;
    if (v && (v->kind == EXPR_INT || v->kind == EXPR_FLOAT)) {
        return arena_strndup(b->a, b->st->zSql + v->pos, (size_t)v->len);
    }
    char zMsg[160];
    snprintf(zMsg, sizeof(zMsg), "expected a quoted value for option '%s'", o->zName);
    bind_fail_at(b, v ? v->pos : o->pos, zMsg);
    return NULL;
}

/* Is z one of hybrid search's options (read by bind_fusion)? */
static int is_fusion_option(const char *z) {
    return !strcmp(z, "fusion_method") || !strcmp(z, "rank_constant") || !strcmp(z, "window_size") ||
           !strcmp(z, "fusion_weights");
}

/* Is z one of Manticore's options that change no result, which loupe
** accepts (their values checked) with MATCH or without? */
static int is_hint_option(const char *z) {
    static const char *const az[] = {"max_matches", "boolean_simplify", "low_priority", "sort_method", "threads",
                                     "comment"};
    for (size_t i = 0; i < LP_ARRAY_SIZE(az); i++) {
        if (strcmp(z, az[i]) == 0) return 1;
    }
    return 0;
}

int sqlx_match_parse(Arena *a, const Table *t, const char *z, size_t n, unsigned flags, FtsNode **ppRoot,
                     LpError *err) {
    /* regexp_filter rewrites the whole text first, as Manticore does; the
    ** tree points into the text, so the rewritten one lives in a */
    *ppRoot = NULL;
    int rc = sqlx_query_text(a, table_analyzer(t), &z, &n, err);
    if (rc != LP_OK) {
        if (rc != LP_NOMEM && !err->detail) err->detail = FTS_MATCH_ER_PARSE;
        return rc;
    }
    return sqlx_match_parse_raw(a, t, z, n, flags, ppRoot, err);
}

int sqlx_query_text(Arena *a, const Analyzer *an, const char **pz, size_t *pn, LpError *err) {
    if (!analyzer_has_regexp(an)) return LP_OK;
    StrBuf fb = {0};
    const char *zq;
    size_t nq;
    int rc = analyzer_query_text(an, *pz, *pn, &fb, &zq, &nq, err);
    if (rc == LP_OK && zq != *pz) {
        char *zc = arena_strndup(a, zq, nq);
        if (!zc) rc = lp_err_set(err, LP_NOMEM, "out of memory");
        *pz = zc;
        *pn = nq;
    }
    strbuf_free(&fb);
    return rc;
}

int sqlx_match_parse_raw(Arena *a, const Table *t, const char *z, size_t n, unsigned flags, FtsNode **ppRoot,
                         LpError *err) {
    const char *const *azFts;
    int nFts = table_fts_fields(t, &azFts, NULL);
    const Analyzer *an = table_analyzer(t);
    if (analyzer_min_infix_len(an) > 0) flags |= FTS_MATCH_INLINE_WILDCARDS;
    int rc = fts_match_parse_opts(a, z, n, azFts, nFts, flags, ppRoot, err);
    if (rc == LP_OK) rc = fts_match_split_words(a, *ppRoot, an, err);
    if (rc == LP_OK) rc = fts_match_join_words(a, z, *ppRoot, an, err);
    return rc;
}

int sqlx_table_expand(const Schema *sc) {
    const char *z = schema_option(sc, "expand_keywords");
    int bits = z ? fts_expand_from_name(z) : 0;
    return bits > 0 ? bits : 0;
}

#define EXPAND_KEYWORDS_EXPECTS "expand_keywords expects 0, 1, 'exact', 'star' or 'exact,star'"

/* Applies the ranking options of a SELECT (or of a stored profile) to
** rank. bProfile: the options come from a stored profile, which may not
** name another profile. */
static int apply_rank_options(Binder *b, const SqlMapItem *aOpt, int nOpt, int nFts,
                              const char *const *azFts, const char *zProfiles, int bProfile,
                              FtsRankParams *rank) {
    /* A named profile first, so the query's own options override it. */
    for (int i = 0; i < nOpt && !bProfile; i++) {
        if (strcmp(aOpt[i].zName, "rank_profile") != 0) continue;
        const char *z = opt_word(b, &aOpt[i]);
        if (!z) return b->rc;
        if (!zProfiles) {
            return bind_fail(b, ER_PARSE, LP_BADINPUT,
                             "rank_profile '%s': table '%s' has no stored rank profiles", z,
                             b->zTable);
        }
        if (apply_profile(b, zProfiles, z, nFts, azFts, rank)) return b->rc;
    }
    for (int i = 0; i < nOpt; i++) {
        const SqlMapItem *o = &aOpt[i];
        const char *z = o->zName;
        double d;
        if (strcmp(z, "rank_profile") == 0) {
            if (bProfile) return bind_fail_at(b, o->pos, "a rank profile cannot name another");
        } else if ((strcmp(z, "max_query_time") == 0 || strcmp(z, "cutoff") == 0) && !bProfile) {
            /* read by bind_select (not ranking parameters) */
        } else if ((strcmp(z, "not_terms_only_allowed") == 0 || strcmp(z, "morphology") == 0 ||
                    strcmp(z, "fuzzy") == 0 || strcmp(z, "distance") == 0 || strcmp(z, "preserve") == 0 ||
                    strcmp(z, "layouts") == 0 || is_fusion_option(z)) &&
                   !bProfile) {
            /* read (and checked) by bind_select before MATCH is parsed */
        } else if (strcmp(z, "boolean_simplify") == 0 || strcmp(z, "low_priority") == 0) {
            /* Accepted for Manticore compatibility: hints that change no
            ** result; loupe's planner simplifies as it always does, and
            ** every query runs at one priority */
            int bOn;
            if (opt_bool(b, o, &bOn)) return b->rc;
        } else if (strcmp(z, "sort_method") == 0) {
            /* Manticore's choice of a sorting buffer: the same rows either
            ** way, and loupe keeps exactly the rows asked for */
            const char *zv = opt_word(b, o);
            if (!zv) return b->rc;
            if (strcasecmp(zv, "pq") != 0 && strcasecmp(zv, "kbuffer") != 0) {
                return bind_fail_at(b, o->pValue->pos, "sort_method expects pq or kbuffer");
            }
        } else if (strcmp(z, "threads") == 0) {
            /* Manticore's cap on a query's threads: a MATCH query runs on
            ** one, so any cap of 1 or more is met */
            if (!o->pValue || o->pValue->kind != EXPR_INT || o->pValue->u.i < 1) {
                return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos, "threads expects a positive integer");
            }
        } else if (strcmp(z, "comment") == 0) {
            /* Manticore writes it to the query log; loupe keeps no query log */
            if (!o->pValue || o->pValue->kind != EXPR_STRING) {
                return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos, "comment expects a string");
            }
        } else if (strcmp(z, "max_matches") == 0 && !bProfile) {
            /* Accepted for Manticore compatibility: loupe keeps exactly
            ** offset+limit rows, so there is no buffer to size. */
            if (!o->pValue || o->pValue->kind != EXPR_INT || o->pValue->u.i <= 0) {
                return bind_fail_at(b, o->pos, "max_matches expects a positive integer");
            }
        } else if (strcmp(z, "ranker") == 0) {
            const Expr *v = o->pValue;
            /* Manticore's ranking expression, compiled once, here; export()
            ** ranks the same way (PACKEDFACTORS() reads the factors under
            ** either) */
            if (v && v->kind == EXPR_FUNC &&
                (strcmp(v->u.func.zName, "expr") == 0 || strcmp(v->u.func.zName, "export") == 0)) {
                const Expr *arg = v->u.func.nArg == 1 ? v->u.func.aArg[0] : NULL;
                if (!arg || arg->kind != EXPR_STRING) {
                    char zMsg[200];
                    snprintf(zMsg, sizeof(zMsg), "ranker=%s() takes one string: the expression, "
                             "e.g. %s('sum(lcs*user_weight)*1000+bm25')", v->u.func.zName, v->u.func.zName);
                    return bind_fail_at(b, v->pos, zMsg);
                }
                LpError e;
                lp_err_clear(&e);
                FtsRankExpr *pExpr;
                if (fts_rankexpr_compile_fields(b->a, arg->u.s.z, arg->u.s.n, azFts, nFts, &pExpr, &e) !=
                    LP_OK) {
                    if (e.code == LP_NOMEM) return bind_fail(b, ER_UNKNOWN_ERROR, LP_NOMEM, "%s", e.zMsg);
                    return bProfile ? bind_fail(b, ER_PARSE, LP_BADINPUT, "%s", e.zMsg)
                                    : bind_fail_at(b, arg->pos, e.zMsg);
                }
                rank->ranker = FTS_RANK_EXPR;
                rank->pExpr = pExpr;
                continue;
            }
            const char *zr = opt_word(b, o);
            if (!zr) return b->rc;
            int r = fts_ranker_from_name(zr);
            if (r < 0) {
                char zMsg[300];
                snprintf(zMsg, sizeof(zMsg),
                         "ranker '%.64s' is not supported: use " FTS_RANKER_NAMES, zr);
                return bind_fail_at(b, o->pValue->pos, zMsg);
            }
            rank->ranker = (FtsRanker)r;
        } else if (strcmp(z, "k1") == 0) {
            if (opt_number(b, o, o->pValue, 0, 100, &rank->k1)) return b->rc;
        } else if (strcmp(z, "b") == 0) {
            if (opt_number(b, o, o->pValue, 0, 1, &rank->b)) return b->rc;
        } else if (strcmp(z, "expansion_limit") == 0) {
            if (opt_number(b, o, o->pValue, 1, 1000000, &d)) return b->rc;
            rank->nExpansionLimit = (int)d;
        } else if (strcmp(z, "expand_keywords") == 0) {
            const Expr *v = o->pValue;
            char zNum[24];
            const char *zv = NULL;
            if (v && v->kind == EXPR_INT) {
                snprintf(zNum, sizeof(zNum), "%lld", (long long)v->u.i);
                zv = zNum;
            } else if (v && (v->kind == EXPR_STRING || v->kind == EXPR_COLUMN)) {
                zv = opt_word(b, o);
            }
            int bits = zv ? fts_expand_from_name(zv) : -1;
            if (bits < 0) return bind_fail_at(b, v ? v->pos : o->pos, EXPAND_KEYWORDS_EXPECTS);
            rank->expand = bits;
        } else if (strcmp(z, "field_weights") == 0 || strcmp(z, "query_type_weights") == 0) {
            const Expr *m = o->pValue;
            int bField = z[0] == 'f';
            if (!m || m->kind != EXPR_MAP) {
                return bind_fail_at(b, m ? m->pos : o->pos,
                                    bField ? "field_weights expects (field=weight, ...)"
                                           : "query_type_weights expects (term=w, phrase=w, prefix=w)");
            }
            for (int j = 0; j < m->u.map.nItem; j++) {
                const SqlMapItem *it = &m->u.map.aItem[j];
                if (opt_number(b, it, it->pValue, 0, 1e6, &d)) return b->rc;
                if (!bField) {
                    double *pw = !strcmp(it->zName, "term")     ? &rank->wTerm
                                 : !strcmp(it->zName, "phrase") ? &rank->wPhrase
                                 : !strcmp(it->zName, "prefix") ? &rank->wPrefix
                                                                : NULL;
                    if (!pw) {
                        return bind_fail_at(b, it->pos,
                                            "unknown query type: expected term, phrase or prefix");
                    }
                    *pw = d;
                    continue;
                }
                int f = 0;
                while (f < nFts && strcmp(azFts[f], it->zName) != 0) f++;
                if (f == nFts) {
                    char zMsg[200];
                    snprintf(zMsg, sizeof(zMsg), "field_weights: '%s' is not a full-text field of "
                                                 "table '%s'", it->zName, b->zTable);
                    return bind_fail_at(b, it->pos, zMsg);
                }
                rank->aFieldWeight[f] = d;
            }
        } else {
            char zMsg[160];
            snprintf(zMsg, sizeof(zMsg), "unknown option '%s'", z);
            return bind_fail_at(b, o->pos, zMsg);
        }
    }
    return LP_OK;
}

/* Stored profiles: `name: option=value, ...; name2: ...` (table option
** rank_profile). Applies profile zWant, or with zWant NULL checks them all.
** Each body is parsed by the SQL parser's OPTION grammar, so profiles
** accept exactly what OPTION does. */
static int apply_profile(Binder *b, const char *zProfiles, const char *zWant, int nFts,
                         const char *const *azFts, FtsRankParams *rank) {
    const char *p = zProfiles;
    while (*p) {
        const char *zEnd = strchr(p, ';');
        size_t n = zEnd ? (size_t)(zEnd - p) : strlen(p);
        const char *zColon = memchr(p, ':', n);
        while (n && (*p == ' ' || *p == '\n')) p++, n--;
        if (n == 0) {
            p += zEnd ? 1 : 0;
            continue;
        }
        if (!zColon) {
            return bind_fail(b, ER_PARSE, LP_BADINPUT,
                             "rank_profile: expected 'name: option=value, ...' in '%.*s'",
                             (int)(n > 60 ? 60 : n), p);
        }
        size_t nName = (size_t)(zColon - p);
        while (nName && p[nName - 1] == ' ') nName--;
        char zName[64];
        snprintf(zName, sizeof(zName), "%.*s", (int)(nName < 63 ? nName : 63), p);
        if (!zWant || strcmp(zName, zWant) == 0) {
            char *zSql = arena_printf(b->a, "SELECT 1 OPTION %.*s", (int)(n - (size_t)(zColon + 1 - p)),
                                      zColon + 1);
            SqlStmt *st = NULL;
            if (!zSql) return bind_oom(b);
            if (sql_parse(b->a, zSql, strlen(zSql), &st, b->err) != LP_OK) {
                b->rc = b->err->code;
                lp_err_prefix(b->err, "rank_profile '%s'", zName);
                return b->rc;
            }
            const SqlStmt *saved = b->st;
            b->st = st; /* positions in errors refer to the profile's text */
            FtsRankParams tmp;
            fts_rank_defaults(&tmp);
            int rc = apply_rank_options(b, st->u.select.aOption, st->u.select.nOption, nFts, azFts,
                                        NULL, 1, rank ? rank : &tmp);
            b->st = saved;
            if (rc) {
                lp_err_prefix(b->err, "rank_profile '%s'", zName);
                return rc;
            }
            if (zWant) return LP_OK;
        }
        p += n + (zEnd ? 1 : 0);
    }
    if (zWant) {
        return bind_fail(b, ER_PARSE, LP_BADINPUT, "rank_profile '%s' is not defined for table '%s'",
                         zWant, b->zTable);
    }
    return LP_OK;
}

/* SELECT without FROM: one row of constants. */
static void select_no_table(Binder *b, const SelectStmt *sel, SqlResult *r) {
    BExpr *ab = arena_alloc(b->a, sizeof(BExpr) * (size_t)(sel->nItem ? sel->nItem : 1));
    if (!ab) {
        bind_oom(b);
        return;
    }
    for (int i = 0; i < sel->nItem; i++) {
        if (!sel->aItem[i].pExpr) {
            bind_fail(b, ER_PARSE, LP_BADINPUT, "SELECT * needs a FROM table");
            return;
        }
        if (bind_expr(b, sel->aItem[i].pExpr, CTX_SELECT, &ab[i])) return;
    }
    int bRow = 1;
    if (sel->pWhere) {
        BExpr w;
        if (bind_expr(b, sel->pWhere, CTX_SELECT, &w)) return;
        bRow = qexpr_true(w.q, NULL);
    }
    if (sel->iOffset > 0 || sel->iLimit == 0) bRow = 0;
    if (sql_result_columns(r, sel->nItem)) {
        bind_oom(b);
        return;
    }
    for (int i = 0; i < sel->nItem; i++) {
        const char *zName = item_name(b->st, &sel->aItem[i], &r->arena);
        if (!zName || sql_result_column(r, i, zName, ab[i].type, 0)) {
            bind_oom(b);
            return;
        }
    }
    if (!bRow) return;
    RowSink k = {r, {0}};
    Value *aVal = arena_alloc(b->a, sizeof(Value) * (size_t)(sel->nItem ? sel->nItem : 1));
    if (!aVal) {
        bind_oom(b);
        return;
    }
    for (int i = 0; i < sel->nItem; i++) aVal[i] = qexpr_eval(ab[i].q, NULL);
    if (sink_row(&k, aVal, sel->nItem)) bind_oom(b);
    strbuf_free(&k.sb);
}

/* Splits WHERE into its zFunc() conjunct (MATCH() or knn(): *ppCall) and
** the rest, which is returned (NULL when the call was all of it). A call
** anywhere else is left in place, for bind_func to refuse. */
static const Expr *split_call(Binder *b, const Expr *w, const char *zFunc, const Expr **ppCall) {
    if (!w) return NULL;
    if (w->kind == EXPR_FUNC && strcmp(w->u.func.zName, zFunc) == 0 && !*ppCall) {
        *ppCall = w;
        return NULL;
    }
    if (w->kind != EXPR_BINARY || w->u.binary.op != OP_AND) return w;
    const Expr *l = split_call(b, w->u.binary.pLeft, zFunc, ppCall);
    const Expr *r = split_call(b, w->u.binary.pRight, zFunc, ppCall);
    if (!l) return r;
    if (!r) return l;
    if (l == w->u.binary.pLeft && r == w->u.binary.pRight) return w;
    Expr *e = arena_alloc(b->a, sizeof(Expr));
    if (!e) return w; /* out of memory: keep the tree; bind_func will refuse the MATCH */
    *e = *w;
    e->u.binary.pLeft = (Expr *)l;
    e->u.binary.pRight = (Expr *)r;
    return e;
}

/* A SELECT bound to its table, ready for query_select / query_explain. */
typedef struct BoundSelect {
    Table *t;               /* a reference, released by the caller */
    QSelect q;
    int nOut;
    const char **azName;    /* result column names */
    BExpr *aB;              /* result columns */
    int nCount;             /* COUNT(*) items */
    struct GroupPlan *pGroup; /* GROUP BY: how the rows of q become groups, or NULL */
} BoundSelect;

/* ------------------------------------------------------------------ */
/* GROUP BY                                                            */

typedef struct GroupItem {
    AggKind kind;
    int iRow;               /* the row query's output it reads (-1: none) */
    int iAgg;               /* its state in Group.aAgg (every kind but NONE,
                            ** COUNT and GROUPBY) */
    SqlColType type;        /* its result type */
    int bFloat32;           /* GROUP_CONCAT: its argument is a FLOAT */
} GroupItem;

/* A grouped SELECT: the row query (BoundSelect.q) outputs the nKey key
** expressions first, then whatever the items read; each row joins the
** group of its key (strings compared as STRING columns are, ignoring
** ASCII case; NULL is a key of its own). A group's first row is its best
** in the query's order (best matches first under MATCH, else by id), and
** the groups come in the order of their first rows unless ORDER BY says
** otherwise; then OFFSET and LIMIT.
**
** A scan or MATCH streams its rows in no set order (QSelect.bStream: no
** row is kept), so the row query then also outputs WEIGHT() (iRankW, under
** MATCH) and the id (iRankId), and each group keeps the best row it has
** seen. A kNN or hybrid search hands over its bounded window in order. */
typedef struct GroupPlan {
    int nKey;
    GroupItem *aOut;        /* the result columns */
    int nOut;
    GroupItem *aOrder;      /* ORDER BY keys */
    int *aDesc;
    int nOrder;
    int nAgg;               /* aggregate states per group ... */
    GroupItem *aAgg;        /* ... each fed by one of these (an aggregate
                            ** named twice, by alias or position, is one) */
    int nAggCap;
    int nRows;              /* GROUP N BY: a group's best N rows are shown */
    int *aWithin;           /* WITHIN GROUP ORDER BY: the row outputs that
                            ** order a group's rows (before the query's order) */
    int *aWithinDesc;
    int nWithin;
    const QExpr *pHaving;   /* HAVING over the group's values aHave (QE_SLOT), or NULL */
    GroupItem *aHave;
    int nHave;
    int64_t iOffset, iLimit;
    int bBest;              /* rows come unordered: each group keeps its best
                            ** (else, without WITHIN GROUP, its first) */
    int iRankW, iRankId;    /* the row outputs WEIGHT() (-1: none) and id */
    int bSetKeys;           /* a key is a multi-value: a row joins the group
                            ** of each of its items (group_row) */
} GroupPlan;

/* OPTION fuzzy=1 and its companions: fuzzy search's edits (distance, 2
** by default), or -1 when it is off. */
typedef struct Fuzzy {
    int nEdits;
    int bPreserve;
} Fuzzy;

static int bind_match(Binder *b, QSelect *q, const Expr *pMatch, const Fuzzy *fz) {
    const char *const *azFts;
    int nFts = table_fts_fields(q->pTable, &azFts, NULL);
    if (nFts == 0) {
        return bind_fail(b, ER_PARSE, LP_BADINPUT,
                         "MATCH(): table '%s' has no indexed full-text (TEXT) field", b->zTable);
    }
    if (pMatch->u.func.nArg != 1) {
        return bind_fail(b, ER_PARSE, LP_BADINPUT, "MATCH() takes one argument, the query text");
    }
    BExpr x;
    if (bind_expr(b, pMatch->u.func.aArg[0], CTX_VALUES, &x)) return b->rc;
    Value v = qexpr_eval(x.q, NULL);
    if (v.kind != VAL_STR) {
        return bind_fail_at(b, pMatch->u.func.aArg[0]->pos, "MATCH() expects a string");
    }
    if (fz->nEdits >= 0) {
        /* Manticore's fuzzy search: each word the OR of its likely spellings */
        const char *z;
        size_t n;
        if (sqlx_fuzzy_text(b->a, q->pTable, v.u.s.z, v.u.s.n, fz->nEdits, fz->bPreserve, &z, &n, b->err)) {
            b->rc = b->err->code;
            if (!b->err->detail) b->err->detail = b->rc == LP_NOMEM ? ER_OUTOFMEMORY : ER_PARSE;
            return b->rc;
        }
        v.u.s.z = z;
        v.u.s.n = n;
    }
    const FtsNode *root = NULL;
    if (sqlx_match_parse(b->a, q->pTable, v.u.s.z, v.u.s.n, q->matchFlags, (FtsNode **)&root, b->err)) {
        b->rc = b->err->code;
        if (!b->err->detail) b->err->detail = b->rc == LP_NOMEM ? ER_OUTOFMEMORY : ER_PARSE;
        return b->rc;
    }
    q->bMatch = 1;
    q->pMatch = root;
    q->zMatch = v.u.s.z;
    q->nMatch = v.u.s.n;
    b->zMatch = v.u.s.z;
    b->nMatch = v.u.s.n;
    b->bMatch = 1;
    b->pMatchRoot = root;
    return LP_OK;
}

static int eval_value(Binder *b, const Expr *e, char want, Value *pv);

/* A knn() text this statement embedded: FACETs bind the SELECT again, and
** hybrid_match() and knn() may name the same text; the vector is computed
** once. The memo lives in the statement's arena, emptied with it. */
typedef struct EmbedMemo {
    struct EmbedMemo *pNext;
    const Table *t;
    int iCol;
    const char *z;
    size_t n;
    const float *aVec;
} EmbedMemo;

static const float *embed_memo_find(const SqlSession *s, const Table *t, int iCol, const char *z, size_t n) {
    for (const EmbedMemo *m = s->pEmbedMemo; m; m = m->pNext) {
        if (m->t == t && m->iCol == iCol && m->n == n && !memcmp(m->z, z, n)) return m->aVec;
    }
    return NULL;
}

static int embed_memo_add(SqlSession *s, const Table *t, int iCol, const char *z, size_t n, const float *aVec) {
    EmbedMemo *m = arena_alloc(&s->stmt, sizeof(EmbedMemo));
    char *zCopy = arena_strndup(&s->stmt, z, n);
    if (!m || !zCopy) return LP_NOMEM;
    *m = (EmbedMemo){s->pEmbedMemo, t, iCol, zCopy, n, aVec};
    s->pEmbedMemo = m;
    return LP_OK;
}

/* knn(column, k, query [, {ef=N}]): the query is a vector literal
** (dimensions checked against the column) or the id of a row whose vector
** is used. Manticore's syntax. */
static int bind_knn(Binder *b, QSelect *q, const Expr *pKnn) {
    const Schema *sc = b->pSchema;
    int nArg = pKnn->u.func.nArg;
    Expr **a = pKnn->u.func.aArg;
    if (nArg < 3 || nArg > 4) {
        return bind_fail_at(b, pKnn->pos,
                            "knn() takes a vector column, k, the query vector (or a row id) and "
                            "optionally {ef=N}");
    }
    if (a[0]->kind != EXPR_COLUMN) {
        return bind_fail_at(b, a[0]->pos, "knn(): expected a vector column name as first argument");
    }
    int iCol = schema_find(sc, a[0]->u.zName);
    if (iCol < 0 || iCol == SCHEMA_ID_COL) {
        return bind_fail(b, ER_BAD_FIELD, LP_NOTFOUND, "knn(): unknown column '%s' in table '%s'",
                         a[0]->u.zName, b->zTable);
    }
    const ColumnSchema *c = &sc->aCol[iCol];
    if (c->type != COL_VECTOR || !c->vec.bHnsw || c->vec.nDims <= 0) {
        return bind_fail_at(b, a[0]->pos,
                            c->type != COL_VECTOR
                                ? "knn(): the column is not a float_vector"
                                : "knn(): the column needs knn_type='hnsw' and knn_dims");
    }
    if (a[1]->kind != EXPR_INT || a[1]->u.i < 1 || a[1]->u.i > 100000) {
        return bind_fail_at(b, a[1]->pos, "knn(): k must be an integer from 1 to 100000");
    }
    q->iKnnCol = iCol;
    q->knnK = (int)a[1]->u.i;
    if (a[2]->kind == EXPR_LIST) {
        Value v;
        if (eval_value(b, a[2], 'v', &v)) return b->rc;
        if ((int)v.u.v.n != c->vec.nDims) {
            char zMsg[160];
            snprintf(zMsg, sizeof(zMsg), "knn(): the query vector has %u components, column '%s' has %d",
                     v.u.v.n, c->zName, c->vec.nDims);
            return bind_fail_at(b, a[2]->pos, zMsg);
        }
        for (uint32_t i = 0; i < v.u.v.n; i++) {
            if (!isfinite(v.u.v.a[i])) {
                return bind_fail_at(b, a[2]->u.list.aItem[i]->pos,
                                    "knn(): a query vector component is not a finite float");
            }
        }
        q->aKnnVec = v.u.v.a;
    } else if (a[2]->kind == EXPR_INT) {
        q->iKnnRefId = a[2]->u.i;
    } else if (a[2]->kind == EXPR_STRING) {
        /* A text: embedded with the column's model, as its rows were. */
        if (!table_column_model(b->pTable, iCol)) {
            return bind_fail_at(b, a[2]->pos, "knn(): a text query needs a vector column with "
                                              "model_name; this one takes (x, y, ...) or a row id");
        }
        const float *aVec = embed_memo_find(b->s, b->pTable, iCol, a[2]->u.s.z, a[2]->u.s.n);
        q->nsKnnEmbed = 0;
        if (!aVec) {
            float *aNew = arena_alloc(b->a, sizeof(float) * (size_t)c->vec.nDims);
            if (!aNew) return bind_oom(b);
            LpError e2;
            lp_err_clear(&e2);
            int64_t t0 = lp_now_ns();
            if (table_embed_text(b->pTable, iCol, a[2]->u.s.z, a[2]->u.s.n, aNew, &e2) != LP_OK) {
                return bind_fail(b, e2.code == LP_NOMEM ? ER_OUTOFMEMORY : ER_UNKNOWN_ERROR, e2.code,
                                 "knn(): %s", e2.zMsg);
            }
            q->nsKnnEmbed = lp_now_ns() - t0;
            atomic_fetch_add_explicit(&b->s->e->stats.nQueryEmbeds, 1, memory_order_relaxed);
            if (embed_memo_add(b->s, b->pTable, iCol, a[2]->u.s.z, a[2]->u.s.n, aNew) != LP_OK) return bind_oom(b);
            aVec = aNew;
        }
        q->aKnnVec = aVec;
    } else {
        return bind_fail_at(b, a[2]->pos,
                            "knn(): expected the query vector as (x, y, ...), a row id or a text");
    }
    if (nArg == 4) {
        if (a[3]->kind != EXPR_MAP) return bind_fail_at(b, a[3]->pos, "knn(): expected {ef=N}");
        for (int i = 0; i < a[3]->u.map.nItem; i++) {
            const SqlMapItem *it = &a[3]->u.map.aItem[i];
            if (strcmp(it->zName, "ef") != 0) {
                return bind_fail_at(b, it->pos, "knn(): unknown option: expected ef");
            }
            if (it->pValue->kind != EXPR_INT || it->pValue->u.i < 1 || it->pValue->u.i > 100000) {
                return bind_fail_at(b, it->pValue->pos, "knn(): ef must be an integer from 1 to 100000");
            }
            q->knnEf = (int)it->pValue->u.i;
        }
    }
    q->bKnn = 1;
    b->bKnn = 1;
    return LP_OK;
}

/* hybrid_match('text' [, column] [, {k=N}]): Manticore's hybrid search
** in one call, for a vector column that embeds its text (model_name and
** from): MATCH('text') and knn(column, k, 'text'), fused. Without a
** column, the table's one such column. Makes the two calls it stands for
** in *ppMatch and *ppKnn. */
static int bind_hybrid_match(Binder *b, const SelectStmt *sel, const Expr *e, const Expr **ppMatch,
                             const Expr **ppKnn) {
    const Schema *sc = b->pSchema;
    int nArg = e->u.func.nArg;
    Expr **a = e->u.func.aArg;
    if (nArg < 1 || nArg > 3 || a[0]->kind != EXPR_STRING) {
        return bind_fail_at(b, e->pos, "hybrid_match() takes the query text, then optionally a vector column "
                                       "and {k=N}");
    }
    const Expr *pCol = nArg >= 2 && a[1]->kind == EXPR_COLUMN ? a[1] : NULL;
    const Expr *pOpt = a[nArg - 1]->kind == EXPR_MAP && nArg >= 2 ? a[nArg - 1] : NULL;
    if (nArg - 1 != (pCol != NULL) + (pOpt != NULL)) {
        return bind_fail_at(b, a[nArg - 1]->pos, "hybrid_match(): expected a vector column, then {k=N}");
    }
    int64_t k = sel->iOffset + (sel->iLimit >= 0 ? sel->iLimit : DEFAULT_LIMIT);
    for (int i = 0; pOpt && i < pOpt->u.map.nItem; i++) {
        const SqlMapItem *it = &pOpt->u.map.aItem[i];
        if (strcmp(it->zName, "k") != 0) return bind_fail_at(b, it->pos, "hybrid_match(): unknown option: expected k");
        if (it->pValue->kind != EXPR_INT || it->pValue->u.i < 1 || it->pValue->u.i > 100000) {
            return bind_fail_at(b, it->pValue->pos, "hybrid_match(): k must be an integer from 1 to 100000");
        }
        k = it->pValue->u.i;
    }
    if (k < 1) k = 1;
    if (k > 100000) k = 100000;
    const char *zCol = pCol ? pCol->u.zName : NULL;
    if (!zCol) {
        /* the one vector column that embeds its rows' text */
        for (int i = 0; i < sc->nCol; i++) {
            if (sc->aCol[i].type != COL_VECTOR || !sc->aCol[i].vec.zModel) continue;
            if (zCol) {
                return bind_fail_at(b, e->pos, "hybrid_match(): the table has several vector columns with "
                                               "model_name: name one, hybrid_match('text', column)");
            }
            zCol = sc->aCol[i].zName;
        }
        if (!zCol) {
            return bind_fail_at(b, e->pos, "hybrid_match() needs a vector column with model_name and from, "
                                           "which embeds the query text as it embeds the rows");
        }
    }
    Expr *m = arena_zalloc(b->a, sizeof(Expr)), *kn = arena_zalloc(b->a, sizeof(Expr));
    Expr *col = arena_zalloc(b->a, sizeof(Expr)), *kk = arena_zalloc(b->a, sizeof(Expr));
    Expr **am = arena_alloc(b->a, sizeof(Expr *)), **ak = arena_alloc(b->a, sizeof(Expr *) * 3);
    if (!m || !kn || !col || !kk || !am || !ak) return bind_oom(b);
    *m = *e;
    m->u.func.zName = "match";
    m->u.func.aArg = am;
    m->u.func.nArg = 1;
    am[0] = a[0];
    *col = pCol ? *pCol : *e;
    col->kind = EXPR_COLUMN;
    col->u.zName = zCol;
    kk->kind = EXPR_INT;
    kk->pos = e->pos;
    kk->u.i = k;
    *kn = *e;
    kn->u.func.zName = "knn";
    kn->u.func.aArg = ak;
    kn->u.func.nArg = 3;
    ak[0] = col;
    ak[1] = kk;
    ak[2] = a[0];
    *ppMatch = m;
    *ppKnn = kn;
    return LP_OK;
}

/* Hybrid search's options: fusion_method='rrf' (MATCH() with knn() is
** a kNN search among the MATCH's rows without it; hybrid_match() implies
** it; several knn() need it), rank_constant, window_size, fusion_weights
** (by the names MATCH(...) AS name and knn(...) AS name give the searches:
** the text's into q, apKnn[0]'s into q, the others' into aMore[i - 1]). */
static int bind_fusion(Binder *b, const SelectStmt *sel, QSelect *q, const Expr *pMatch, const Expr *const *apKnn,
                       int nKnn, QKnn *aMore, int bHybridMatch) {
    const SqlMapItem *pMethod = NULL, *pOther = NULL;
    q->rankConstant = 60;
    q->wFusionText = q->wFusionKnn = 1;
    for (int i = 1; i < nKnn; i++) aMore[i - 1].wFusion = 1;
    /* the searches' names: the text's first, each once */
    const char *azName[1 + QSELECT_MAX_KNN] = {pMatch ? pMatch->u.func.zAlias : NULL};
    for (int i = 0; i < nKnn; i++) {
        azName[1 + i] = apKnn[i]->u.func.zAlias;
        for (int j = 0; azName[1 + i] && j <= i; j++) {
            if (azName[j] && !strcmp(azName[j], azName[1 + i])) {
                return bind_fail_at(b, apKnn[i]->u.func.aliasPos, "two searches have one name: each needs its own");
            }
        }
    }
    for (int i = 0; i < sel->nOption; i++) {
        const SqlMapItem *o = &sel->aOption[i];
        double d;
        if (strcmp(o->zName, "fusion_method") == 0) {
            const char *z = opt_text(b, o);
            if (!z) return b->rc;
            if (strcasecmp(z, "rrf") != 0) {
                return bind_fail_at(b, o->pValue->pos, "fusion_method takes 'rrf' (reciprocal rank fusion)");
            }
            pMethod = o;
        } else if (strcmp(o->zName, "rank_constant") == 0) {
            if (opt_number(b, o, o->pValue, 1, 1000000, &d)) return b->rc;
            q->rankConstant = (int)d;
            pOther = o;
        } else if (strcmp(o->zName, "window_size") == 0) {
            if (opt_number(b, o, o->pValue, 0, 100000, &d)) return b->rc;
            q->windowSize = (int)d;
            pOther = o;
        } else if (strcmp(o->zName, "fusion_weights") == 0) {
            /* (text=0.7, dense=0.3); a search not named weighs 1 */
            const Expr *m = o->pValue;
            if (!m || m->kind != EXPR_MAP) {
                return bind_fail_at(b, m ? m->pos : o->pos, "fusion_weights expects (name=weight, ...) with the "
                                                            "names of MATCH(...) AS name and knn(...) AS name");
            }
            for (int j = 0; j < m->u.map.nItem; j++) {
                const SqlMapItem *it = &m->u.map.aItem[j];
                if (opt_number(b, it, it->pValue, 0, 1e6, &d)) return b->rc;
                int k = 0;
                while (k < 1 + nKnn && !(azName[k] && !strcmp(it->zName, azName[k]))) k++;
                if (k == 1 + nKnn) {
                    char zMsg[200];
                    snprintf(zMsg, sizeof(zMsg), "fusion_weights: no search is named '%s' (name them: "
                                                 "MATCH('...') AS text, knn(...) AS dense)", it->zName);
                    return bind_fail_at(b, it->pos, zMsg);
                }
                *(k == 0 ? &q->wFusionText : k == 1 ? &q->wFusionKnn : &aMore[k - 2].wFusion) = d;
            }
            pOther = o;
        }
    }
    int bBoth = (pMatch && nKnn) || nKnn > 1 || bHybridMatch;
    if ((pMethod || pOther) && !bBoth) {
        return bind_fail_at(b, (pMethod ? pMethod : pOther)->pos,
                            "hybrid search options need MATCH() and knn() in the WHERE clause (or several "
                            "knn()), or hybrid_match()");
    }
    if (pOther && !pMethod && !bHybridMatch) {
        return bind_fail_at(b, pOther->pos, "rank_constant, window_size and fusion_weights need OPTION "
                                            "fusion_method='rrf'");
    }
    if (nKnn > 1 && !pMethod) {
        return bind_fail_at(b, apKnn[1]->pos, "several knn() are a hybrid search: they need OPTION "
                                              "fusion_method='rrf'");
    }
    /* MATCH() with knn() and no fusion_method: a kNN search among the
    ** rows the MATCH finds, as Manticore's */
    q->bFusion = bHybridMatch || (bBoth && pMethod);
    b->bFusion = q->bFusion;
    return LP_OK;
}

/* A row output of the grouped query being bound. */
typedef struct GroupBind {
    const QExpr **aRow;
    SqlColType *aType;
    int nRow, nCapRow, nCapType;
    GroupPlan *g;
} GroupBind;

/* x as the row query's next output; its number, or -1 (b->rc). */
static int group_row_out(Binder *b, GroupBind *gb, const BExpr *x) {
    const QExpr **aRow = arena_grow(b->a, (void *)gb->aRow, gb->nRow, &gb->nCapRow, sizeof(*aRow), 16);
    SqlColType *aType = aRow ? arena_grow(b->a, gb->aType, gb->nRow, &gb->nCapType, sizeof(*aType), 16) : NULL;
    if (!aRow || !aType) return bind_oom(b), -1;
    gb->aRow = aRow;
    gb->aType = aType;
    gb->aRow[gb->nRow] = x->q;
    gb->aType[gb->nRow] = x->type;
    return gb->nRow++;
}

/* One item of a grouped SELECT (or of its ORDER BY) into *gi. */
static int bind_group_item(Binder *b, GroupBind *gb, const Expr *e, BindCtx ctx, GroupItem *gi) {
    AggKind k = agg_kind(e);
    BExpr x;
    *gi = (GroupItem){k, -1, -1, SQLCOL_BIGINT, 0};
    if (k == AGG_COUNT || k == AGG_DISTINCT) {
        if (e->u.func.nArg != 1 || (k == AGG_COUNT) != (e->u.func.aArg[0]->kind == EXPR_STAR)) {
            return bind_fail_at(b, e->pos, "COUNT takes * or DISTINCT and one expression: COUNT(*), "
                                           "COUNT(DISTINCT x)");
        }
        if (k == AGG_COUNT) return LP_OK;
    }
    if (k == AGG_GROUPBY) {
        if (e->u.func.nArg != 0) return bind_fail_at(b, e->pos, "GROUPBY() takes no arguments");
        gi->iRow = 0;
        gi->type = gb->aType[0];
        return LP_OK;
    }
    if (bind_expr(b, k == AGG_NONE ? e : e->u.func.aArg[0], ctx, &x)) return b->rc;
    if ((k == AGG_SUM || k == AGG_AVG) && !x.bNull && !is_num_type(x.type)) {
        char bx[96], zMsg[200];
        snprintf(zMsg, sizeof(zMsg), "%s() adds numbers: its argument is %s", e->u.func.zName,
                 what(b, &x, bx, sizeof(bx)));
        return bind_fail_at(b, e->u.func.aArg[0]->pos, zMsg);
    }
    if ((k == AGG_MIN || k == AGG_MAX || k == AGG_DISTINCT) && x.type == SQLCOL_MULTI) {
        return bind_fail_at(b, e->u.func.aArg[0]->pos, k == AGG_DISTINCT
                                ? "COUNT(DISTINCT x) of a multi-value: group by it instead (GROUP BY x counts each item)"
                                : "MIN() and MAX() of a multi-value: use LEAST(x) or GREATEST(x) inside them");
    }
    if (k == AGG_CONCAT && x.type == SQLCOL_VECTOR) {
        return bind_fail_at(b, e->u.func.aArg[0]->pos, "group_concat() takes a number or a string, not a vector");
    }
    if ((gi->iRow = group_row_out(b, gb, &x)) < 0) return b->rc;
    int bDouble = x.type == SQLCOL_FLOAT || x.type == SQLCOL_DOUBLE;
    gi->bFloat32 = x.type == SQLCOL_FLOAT;
    /* a SUM or AVG of FLOAT columns is shown with a float's digits, as the column is */
    gi->type = k == AGG_DISTINCT                                       ? SQLCOL_BIGINT
               : k == AGG_CONCAT                                    ? SQLCOL_STRING
               : (k == AGG_AVG || k == AGG_SUM) && x.type == SQLCOL_FLOAT ? SQLCOL_FLOAT
               : k == AGG_AVG || (k == AGG_SUM && bDouble)          ? SQLCOL_DOUBLE
               : k == AGG_SUM                                       ? SQLCOL_BIGINT
                                                                    : x.type;
    if (k != AGG_NONE) {
        GroupPlan *g = gb->g;
        GroupItem *a = arena_grow(b->a, g->aAgg, g->nAgg, &g->nAggCap, sizeof(*a), 8);
        if (!a) return bind_oom(b);
        g->aAgg = a;
        gi->iAgg = g->nAgg;
        g->aAgg[g->nAgg++] = *gi;
    }
    return LP_OK;
}

/* A HAVING being bound: each aggregate, select alias or column it names
** becomes a value of the group (aHave, read by QE_SLOT). */
typedef struct GroupHave {
    GroupBind *gb;
    const SelectStmt *sel;
    const int *aItemOut;    /* select item -> its result column */
    int nCap;
} GroupHave;

/* gi as the next value of the group HAVING reads; its QE_SLOT into out. */
static int have_slot(Binder *b, const GroupItem *gi, BExpr *out) {
    GroupHave *h = b->pHave;
    GroupPlan *g = h->gb->g;
    GroupItem *a = arena_grow(b->a, g->aHave, g->nHave, &h->nCap, sizeof(*a), 8);
    if (!a) return bind_oom(b);
    g->aHave = a;
    g->aHave[g->nHave] = *gi;
    if (!(out->q = qexpr_slot(b->a, g->nHave++))) return bind_oom(b);
    out->type = gi->type;
    out->iCol = SCHEMA_NO_COL;
    out->bConst = 0;
    out->bNull = 0;
    return LP_OK;
}

/* An aggregate in a HAVING. */
static int have_agg(Binder *b, const Expr *e, BExpr *out) {
    GroupHave *h = b->pHave;
    GroupItem gi;
    b->pHave = NULL; /* its argument is a row's expression */
    int rc = bind_group_item(b, h->gb, e, CTX_SELECT, &gi);
    b->pHave = h;
    return rc ? rc : have_slot(b, &gi, out);
}

/* A name in a HAVING: a select alias (its result column), else a column of
** the group's first row; or one of a row's scores (WEIGHT(), ...), the
** first row's too. */
static int have_name(Binder *b, const Expr *e, BindCtx ctx, BExpr *out) {
    GroupHave *h = b->pHave;
    const SelectStmt *sel = h->sel;
    for (int j = 0; e->kind == EXPR_COLUMN && j < sel->nItem; j++) {
        if (sel->aItem[j].zAlias && sel->aItem[j].pExpr && !strcasecmp(sel->aItem[j].zAlias, e->u.zName)) {
            return have_slot(b, &h->gb->g->aOut[h->aItemOut[j]], out);
        }
    }
    BExpr x;
    b->pHave = NULL;
    int rc = bind_expr(b, e, ctx == CTX_WHERE ? CTX_SELECT : ctx, &x);
    b->pHave = h;
    if (rc) return rc;
    GroupItem gi = {AGG_NONE, -1, -1, x.type, 0};
    if ((gi.iRow = group_row_out(b, h->gb, &x)) < 0) return b->rc;
    return have_slot(b, &gi, out);
}

/* When e names a multi-value column the query groups by, the key's index:
** the item shown (and sorted on) is the group's, as FACET tags shows each
** tag; else -1. */
static int mva_key(const Binder *b, const SelectStmt *sel, const Expr *e) {
    if (e->kind != EXPR_COLUMN || e->nPath) return -1;
    int iCol = schema_find(b->pSchema, e->u.zName);
    if (iCol < 0 || !coltype_is_mva(b->pSchema->aCol[iCol].type)) return -1;
    for (int i = 0; i < sel->nGroupBy; i++) {
        const Expr *k = sel->aGroupBy[i];
        for (int j = 0; k->kind == EXPR_COLUMN && j < sel->nItem; j++) { /* GROUP BY an item's alias */
            const SelectItem *it = &sel->aItem[j];
            if (it->zAlias && it->pExpr && !strcasecmp(it->zAlias, k->u.zName)) k = it->pExpr;
        }
        if (k->kind == EXPR_COLUMN && !k->nPath && !strcasecmp(k->u.zName, e->u.zName)) return i;
    }
    return -1;
}

/* The rest of a SELECT with GROUP BY, once its table, MATCH, knn() and
** options are bound: keys, items, ORDER BY and WHERE (GroupPlan). */
static int bind_grouped(Binder *b, const SelectStmt *sel, BoundSelect *bs, const Expr *pWhere) {
    QSelect *q = &bs->q;
    const Schema *sc = b->pSchema;
    GroupBind gb = {0};
    GroupPlan *g = gb.g = arena_zalloc(b->a, sizeof(GroupPlan));
    if (!g) return bind_oom(b);
    int nOutCap = sel->nItem + sc->nCol + 1;
    g->aOut = arena_alloc(b->a, sizeof(GroupItem) * (size_t)nOutCap);
    g->aOrder = arena_alloc(b->a, sizeof(GroupItem) * (size_t)(sel->nOrder + 1));
    g->aDesc = arena_alloc(b->a, sizeof(int) * (size_t)(sel->nOrder + 1));
    bs->azName = arena_alloc(b->a, sizeof(char *) * (size_t)nOutCap);
    bs->aB = arena_zalloc(b->a, sizeof(BExpr) * (size_t)nOutCap);
    int *aItemOut = arena_alloc(b->a, sizeof(int) * (size_t)(sel->nItem ? sel->nItem : 1));
    if (!g->aOut || !g->aOrder || !g->aDesc || !bs->azName || !bs->aB || !aItemOut) {
        return bind_oom(b);
    }
    /* the keys: a column or expression, or the alias of an item */
    for (int i = 0; i < sel->nGroupBy; i++) {
        const Expr *e = sel->aGroupBy[i];
        for (int j = 0; e->kind == EXPR_COLUMN && j < sel->nItem; j++) {
            const SelectItem *it = &sel->aItem[j];
            if (it->zAlias && it->pExpr && !strcasecmp(it->zAlias, e->u.zName)) e = it->pExpr;
        }
        if (agg_kind(e) != AGG_NONE) return bind_fail_at(b, sel->aGroupBy[i]->pos, "GROUP BY takes no aggregate");
        BExpr x;
        if (bind_expr(b, e, CTX_ORDER, &x)) return b->rc;
        if (x.type == SQLCOL_MULTI) x.type = SQLCOL_BIGINT, g->bSetKeys = 1; /* one group per item */
        if (group_row_out(b, &gb, &x) < 0) return b->rc;
    }
    g->nKey = sel->nGroupBy;
    /* the items; '*' is id and every stored column, each from the first row */
    for (int i = 0; i < sel->nItem; i++) {
        const SelectItem *it = &sel->aItem[i];
        aItemOut[i] = g->nOut;
        if (!it->pExpr) {
            for (int c = SCHEMA_ID_COL; c < sc->nCol; c++) {
                if (c >= 0 && !schema_col_has_value(&sc->aCol[c])) continue;
                BExpr x = {qexpr_column(b->a, c), sqlx_coltype(schema_coltype(sc, c)), c, 0, 0};
                if (!x.q) return bind_oom(b);
                GroupItem *gi = &g->aOut[g->nOut];
                if ((gi->iRow = group_row_out(b, &gb, &x)) < 0) return b->rc;
                gi->kind = AGG_NONE;
                gi->iAgg = -1;
                gi->type = x.type;
                bs->aB[g->nOut] = x;
                bs->azName[g->nOut++] = c == SCHEMA_ID_COL ? "id" : sc->aCol[c].zName;
            }
            continue;
        }
        GroupItem *gi = &g->aOut[g->nOut];
        int iKey = mva_key(b, sel, it->pExpr);
        if (iKey >= 0) {
            *gi = (GroupItem){AGG_NONE, iKey, -1, SQLCOL_BIGINT, 0};
        } else if (bind_group_item(b, &gb, it->pExpr, CTX_SELECT, gi)) {
            return b->rc;
        }
        bs->aB[g->nOut].type = gi->type;
        bs->aB[g->nOut].iCol = gi->kind == AGG_NONE && it->pExpr->kind == EXPR_COLUMN
                                   ? schema_find(sc, it->pExpr->u.zName) : SCHEMA_NO_COL;
        if (!(bs->azName[g->nOut] = item_name(b->st, it, b->a))) return bind_oom(b);
        g->nOut++;
    }
    /* ORDER BY: an item by alias or position, an aggregate, or an expression of the first row */
    for (int i = 0; i < sel->nOrder; i++) {
        const Expr *e = sel->aOrder[i].pExpr;
        int iItem = -1;
        for (int j = 0; e->kind == EXPR_COLUMN && j < sel->nItem && iItem < 0; j++) {
            if (sel->aItem[j].zAlias && !strcasecmp(sel->aItem[j].zAlias, e->u.zName) && sel->aItem[j].pExpr) iItem = j;
        }
        if (e->kind == EXPR_INT) {
            if (e->u.i < 1 || e->u.i > g->nOut) return bind_fail_at(b, e->pos, "ORDER BY position out of range of the select list");
            g->aOrder[i] = g->aOut[e->u.i - 1];
        } else if (iItem >= 0) {
            g->aOrder[i] = g->aOut[aItemOut[iItem]];
        } else if (mva_key(b, sel, e) >= 0) {
            g->aOrder[i] = (GroupItem){AGG_NONE, mva_key(b, sel, e), -1, SQLCOL_BIGINT, 0};
        } else if (bind_group_item(b, &gb, e, CTX_ORDER, &g->aOrder[i])) {
            return b->rc;
        }
        if (no_mva_order(b, g->aOrder[i].type, e->pos)) return b->rc;
        g->aDesc[i] = sel->aOrder[i].bDesc;
    }
    g->nOrder = sel->nOrder;
    /* WITHIN GROUP ORDER BY: expressions of a row (or a select alias of one) */
    g->nRows = (int)sel->nGroupRows;
    if (sel->nWithin) {
        g->aWithin = arena_alloc(b->a, sizeof(int) * (size_t)sel->nWithin);
        g->aWithinDesc = arena_alloc(b->a, sizeof(int) * (size_t)sel->nWithin);
        if (!g->aWithin || !g->aWithinDesc) return bind_oom(b);
    }
    for (int i = 0; i < sel->nWithin; i++) {
        const Expr *e = sel->aWithin[i].pExpr;
        for (int j = 0; e->kind == EXPR_COLUMN && j < sel->nItem; j++) {
            const SelectItem *it = &sel->aItem[j];
            if (it->zAlias && it->pExpr && !strcasecmp(it->zAlias, e->u.zName)) e = it->pExpr;
        }
        if (agg_kind(e) != AGG_NONE) {
            return bind_fail_at(b, sel->aWithin[i].pExpr->pos, "WITHIN GROUP ORDER BY orders a group's rows: "
                                                               "it takes no aggregate");
        }
        BExpr x;
        if (bind_expr(b, e, CTX_ORDER, &x) || no_mva_order(b, x.type, e->pos)) return b->rc;
        if ((g->aWithin[i] = group_row_out(b, &gb, &x)) < 0) return b->rc;
        g->aWithinDesc[i] = sel->aWithin[i].bDesc;
    }
    g->nWithin = sel->nWithin;
    if (sel->pHaving) {
        /* HAVING: a condition over each group's aggregates, aliases and
        ** (first-row) columns */
        GroupHave h = {&gb, sel, aItemOut, 0};
        BExpr w;
        b->pHave = &h;
        int rc = bind_expr(b, sel->pHaving, CTX_SELECT, &w);
        b->pHave = NULL;
        if (rc) return rc;
        g->pHaving = w.q;
    }
    if (pWhere) {
        BExpr w;
        b->pAliasSel = sel;
        int rc = bind_expr(b, pWhere, CTX_WHERE, &w);
        b->pAliasSel = NULL;
        if (rc || no_mva_truth(b, &w, pWhere->pos)) return b->rc;
        q->pWhere = w.q;
        if (!q->bMatch) find_id_candidates(w.q, &q->aId, &q->nId, b->a);
    }
    /* the row query: every matching row, streamed unless a kNN search
    ** hands over its window in order */
    g->bBest = q->bStream = !q->bKnn && !q->bFusion;
    g->iRankW = -1;
    if (g->bBest) {
        BExpr w = {qexpr_weight(b->a), SQLCOL_DOUBLE, SCHEMA_NO_COL, 0, 0};
        BExpr id = {qexpr_column(b->a, SCHEMA_ID_COL), SQLCOL_BIGINT, SCHEMA_ID_COL, 0, 0};
        if (!w.q || !id.q) return bind_oom(b);
        if (q->bMatch && (g->iRankW = group_row_out(b, &gb, &w)) < 0) return b->rc;
        if ((g->iRankId = group_row_out(b, &gb, &id)) < 0) return b->rc;
    }
    q->aOut = gb.aRow;
    q->nOut = gb.nRow;
    q->nOrder = 0;
    QOrder *aOrder = arena_alloc(b->a, sizeof(QOrder));
    if (!aOrder) return bind_oom(b);
    if (q->bFusion || q->bKnn) {
        aOrder[0].pExpr = q->bFusion ? qexpr_hybrid(b->a) : qexpr_knn_dist(b->a);
        if (!aOrder[0].pExpr) return bind_oom(b);
        aOrder[0].bDesc = q->bFusion;
        q->aOrder = aOrder;
        q->nOrder = 1;
    }
    q->iOffset = 0;
    q->iLimit = INT64_MAX / 2;
    g->iOffset = sel->iOffset;
    g->iLimit = sel->iLimit >= 0 ? sel->iLimit : DEFAULT_LIMIT;
    bs->nOut = g->nOut;
    bs->pGroup = g;
    return LP_OK;
}

/* Binds a SELECT with a FROM table. */
/* Is e COUNT(*)? */
static int is_count_star(const Expr *e) {
    return e->kind == EXPR_FUNC && !strcmp(e->u.func.zName, "count") && e->u.func.nArg == 1 &&
           e->u.func.aArg[0]->kind == EXPR_STAR && !e->u.func.bDistinct;
}

static int bind_select(Binder *b, const SelectStmt *sel, BoundSelect *bs) {
    memset(bs, 0, sizeof(*bs));
    if (!(bs->t = bind_table(b, sel->zTable))) return b->rc;
    b->pTable = bs->t;
    const Schema *sc = b->pSchema;
    QSelect *q = &bs->q;
    q->pTable = bs->t;
    fts_rank_defaults(&q->rank);

    /* MATCH first: WEIGHT() and friends in the select list depend on it. */
    const Expr *pMatch = NULL, *pKnn = NULL, *pHybrid = NULL;
    const Expr *pWhere = split_call(b, sel->pWhere, "match", &pMatch);
    pWhere = split_call(b, pWhere, "knn", &pKnn);
    pWhere = split_call(b, pWhere, "hybrid_match", &pHybrid);
    if (pHybrid && (pMatch || pKnn)) {
        return bind_fail_at(b, pHybrid->pos, "hybrid_match() is MATCH() and knn() in one: it goes without them");
    }
    if (pHybrid && bind_hybrid_match(b, sel, pHybrid, &pMatch, &pKnn)) return b->rc;
    /* several knn(): a hybrid search of them all */
    const Expr *apKnn[QSELECT_MAX_KNN + 1] = {pKnn};
    int nKnn = pKnn != NULL;
    for (const Expr *pMore = NULL; pKnn; pMore = NULL) {
        pWhere = split_call(b, pWhere, "knn", &pMore);
        if (!pMore) break;
        if (nKnn == QSELECT_MAX_KNN) {
            char zMsg[64];
            snprintf(zMsg, sizeof(zMsg), "at most %d knn() in one query", QSELECT_MAX_KNN);
            return bind_fail_at(b, pMore->pos, zMsg);
        }
        apKnn[nKnn++] = pMore;
    }
    QKnn *aMore = nKnn > 1 ? arena_zalloc(b->a, sizeof(QKnn) * (size_t)(nKnn - 1)) : NULL;
    if (nKnn > 1 && !aMore) return bind_oom(b);
    if (bind_fusion(b, sel, q, pMatch, apKnn, nKnn, aMore, pHybrid != NULL)) return b->rc;
    Fuzzy fz = {-1, 0};
    int bFuzzy = 0, nDistance = 2;
    const SqlMapItem *pFuzzyOpt = NULL; /* distance, preserve or layouts: fuzzy's */
    for (int i = 0; i < sel->nOption; i++) {
        /* read before MATCH is parsed, which it changes */
        const SqlMapItem *o = &sel->aOption[i];
        int bOn;
        if (strcmp(o->zName, "fuzzy") == 0) {
            /* Manticore's fuzzy search (its Buddy's): typos tolerated */
            if (opt_bool(b, o, &bOn)) return b->rc;
            bFuzzy = bOn;
            continue;
        }
        if (strcmp(o->zName, "distance") == 0) {
            /* Levenshtein edits, as CALL SUGGEST's max_edits */
            if (!o->pValue || o->pValue->kind != EXPR_INT || o->pValue->u.i < 0 || o->pValue->u.i > 32) {
                return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos,
                                    "option 'distance' expects an integer from 0 to 32");
            }
            nDistance = (int)o->pValue->u.i;
            pFuzzyOpt = o;
            continue;
        }
        if (strcmp(o->zName, "preserve") == 0) {
            if (opt_bool(b, o, &fz.bPreserve)) return b->rc;
            pFuzzyOpt = o;
            continue;
        }
        if (strcmp(o->zName, "layouts") == 0) {
            /* keyboard layouts: none is all loupe has */
            const char *z = opt_text(b, o);
            if (!z) return b->rc;
            if (*z) {
                return bind_fail_at(b, o->pValue->pos, "layouts: loupe has no keyboard layouts; only '' (none, "
                                                       "Manticore's default) is accepted");
            }
            pFuzzyOpt = o;
            continue;
        }
        if (strcmp(o->zName, "morphology") == 0) {
            /* Manticore's morphology=none: the words as written (their
            ** exact forms), not their stems */
            const char *z = opt_text(b, o);
            if (!z) return b->rc;
            if (strcasecmp(z, "none") != 0) {
                return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos,
                                    "OPTION morphology takes 'none' (search the words as written)");
            }
            const Analyzer *an = table_analyzer(bs->t);
            if (analyzer_is_stemmed(an) && !analyzer_exact_words(an)) {
                return bind_fail_at(b, o->pos,
                                    "OPTION morphology=none searches the words as written: it needs the "
                                    "table option index_exact_words='1' (this table indexes stems only)");
            }
            q->matchFlags |= FTS_MATCH_EXACT_FORMS;
            continue;
        }
        if (strcmp(o->zName, "not_terms_only_allowed") != 0) continue;
        if (opt_bool(b, o, &bOn)) return b->rc;
        if (bOn) q->matchFlags |= FTS_MATCH_NOT_ONLY;
    }
    if (pFuzzyOpt && !bFuzzy) {
        char zMsg[96];
        snprintf(zMsg, sizeof(zMsg), "option '%s' is fuzzy search's: it needs fuzzy=1", pFuzzyOpt->zName);
        return bind_fail_at(b, pFuzzyOpt->pos, zMsg);
    }
    if (bFuzzy) fz.nEdits = nDistance;
    if (fz.nEdits >= 0 && !pMatch) return bind_fail(b, ER_PARSE, LP_BADINPUT, "fuzzy=1 needs a MATCH() query");
    if (fz.nEdits >= 0 && analyzer_min_infix_len(table_analyzer(bs->t)) <= 0) {
        return bind_fail(b, ER_PARSE, LP_BADINPUT, "fuzzy search requires the table option min_infix_len");
    }
    if (pMatch && bind_match(b, q, pMatch, &fz)) return b->rc;
    if (pKnn && bind_knn(b, q, pKnn)) return b->rc;
    for (int i = 1; i < nKnn; i++) {
        /* each more knn() bound as the first was, then kept aside */
        QSelect one = *q;
        if (bind_knn(b, &one, apKnn[i])) return b->rc;
        aMore[i - 1] = (QKnn){one.iKnnCol, one.knnK, one.knnEf, one.aKnnVec, one.iKnnRefId,
                              aMore[i - 1].wFusion};
        q->nsKnnEmbed += one.nsKnnEmbed;
    }
    q->aKnnMore = aMore;
    q->nKnnMore = nKnn > 1 ? nKnn - 1 : 0;
    const char *const *azFts;
    int nFts = table_fts_fields(bs->t, &azFts, NULL);
    /* Without MATCH: a scan stops at cutoff and max_query_time as a
    ** search does; the other options are about ranking. */
    for (int i = 0; i < sel->nOption && !pMatch; i++) {
        const char *z = sel->aOption[i].zName;
        int bLimit = strcmp(z, "cutoff") == 0 || strcmp(z, "max_query_time") == 0;
        /* hints that change no result (apply_rank_options checks their values) */
        if (!is_hint_option(z) && !is_fusion_option(z) && (!bLimit || pKnn)) {
            char zMsg[160];
            snprintf(zMsg, sizeof(zMsg), pKnn && bLimit ? "option '%s' is not supported with knn()"
                                                        : "option '%s' needs a MATCH() query", z);
            return bind_fail_at(b, sel->aOption[i].pos, zMsg);
        }
    }
    q->rank.expand = sqlx_table_expand(sc);
    if (apply_rank_options(b, sel->aOption, sel->nOption, nFts, azFts,
                           schema_option(sc, "rank_profile"), 0, &q->rank)) {
        return b->rc;
    }
    b->expand = q->rank.expand;
    b->bExprRanker = q->rank.ranker == FTS_RANK_EXPR;
    for (int i = 0; i < sel->nOption; i++) {
        const SqlMapItem *o = &sel->aOption[i];
        double ms;
        if (strcmp(o->zName, "cutoff") == 0) {
            /* matches found before the search stops; 0: no limit */
            if (!o->pValue || o->pValue->kind != EXPR_INT || o->pValue->u.i < 0) {
                return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos,
                                    "cutoff expects an integer from 0 (no limit) up");
            }
            if (opt_number(b, o, o->pValue, 0, 1e15, &ms)) return b->rc;
            if (q->bKnn && ms > 0) {
                /* each search keeps its window: there is no one stream of matches to cut */
                return bind_fail_at(b, o->pos, "option 'cutoff' is not supported with knn()");
            }
            q->nCutoff = (uint64_t)ms;
            continue;
        }
        if (strcmp(o->zName, "max_query_time") != 0) continue;
        /* milliseconds, as Manticore; 0: no limit */
        if (opt_number(b, o, o->pValue, 0, 86400000, &ms)) return b->rc;
        q->nsMaxTime = (int64_t)ms * 1000000;
    }

    /* Aggregates without GROUP BY: one group of every matching row, as
    ** MySQL's and Manticore's (COUNT(*) alone keeps its own path) */
    int bAgg = 0, bCountOnly = 1;
    for (int i = 0; i < sel->nItem; i++) {
        const Expr *e = sel->aItem[i].pExpr;
        bCountOnly &= e && is_count_star(e);
        bAgg |= e && agg_kind(e) != AGG_NONE;
    }
    if (sel->nGroupBy || (bAgg && !bCountOnly)) return bind_grouped(b, sel, bs, pWhere);
    /* Select list: '*' expands to id and every stored column. */
    int nCap = 0;
    for (int i = 0; i < sel->nItem; i++) nCap += sel->aItem[i].pExpr ? 1 : sc->nCol + 1;
    bs->azName = arena_alloc(b->a, sizeof(char *) * (size_t)(nCap ? nCap : 1));
    bs->aB = arena_alloc(b->a, sizeof(BExpr) * (size_t)(nCap ? nCap : 1));
    int *aItemOut = arena_alloc(b->a, sizeof(int) * (size_t)(sel->nItem ? sel->nItem : 1));
    const QExpr **aOut = arena_alloc(b->a, sizeof(QExpr *) * (size_t)(nCap ? nCap : 1));
    if (!bs->azName || !bs->aB || !aItemOut || !aOut) return bind_oom(b);
    BExpr *aB = bs->aB;
    int nOut = 0;
    for (int i = 0; i < sel->nItem; i++) {
        const SelectItem *it = &sel->aItem[i];
        aItemOut[i] = it->pExpr ? nOut : -1;
        if (!it->pExpr) {
            for (int c = SCHEMA_ID_COL; c < sc->nCol; c++) {
                if (c >= 0 && !schema_col_has_value(&sc->aCol[c])) {
                    continue; /* not stored: nothing to show */
                }
                if (!(aB[nOut].q = qexpr_column(b->a, c))) return bind_oom(b);
                aB[nOut].type = sqlx_coltype(schema_coltype(sc, c));
                aB[nOut].iCol = c;
                bs->azName[nOut] = c == SCHEMA_ID_COL ? "id" : sc->aCol[c].zName;
                nOut++;
            }
            continue;
        }
        const Expr *e = it->pExpr;
        if (e->kind == EXPR_FUNC && strcmp(e->u.func.zName, "count") == 0) {
            if (!is_count_star(e)) {
                return bind_fail(b, ER_NOT_SUPPORTED, LP_UNSUPPORTED,
                                 "only COUNT(*) is supported (not COUNT(column) or COUNT(DISTINCT …))");
            }
            aB[nOut].q = NULL; /* filled with the count */
            aB[nOut].type = SQLCOL_BIGINT;
            aB[nOut].iCol = SCHEMA_NO_COL;
            bs->nCount++;
        } else if (bind_expr(b, e, CTX_SELECT, &aB[nOut])) {
            return b->rc;
        }
        if (!(bs->azName[nOut] = item_name(b->st, it, b->a))) return bind_oom(b);
        nOut++;
    }
    if (bs->nCount && bs->nCount != nOut) {
        return bind_fail(b, ER_MIX_AGGREGATE, LP_BADINPUT,
                         "COUNT(*) cannot be mixed with other columns without GROUP BY");
    }
    bs->nOut = nOut;

    if (pWhere) {
        BExpr w;
        b->pAliasSel = sel;
        int rc = bind_expr(b, pWhere, CTX_WHERE, &w);
        b->pAliasSel = NULL;
        if (rc || no_mva_truth(b, &w, pWhere->pos)) return b->rc;
        q->pWhere = w.q;
        if (!q->bMatch) find_id_candidates(w.q, &q->aId, &q->nId, b->a);
    }
    QOrder *aOrder = arena_alloc(b->a, sizeof(QOrder) * (size_t)(sel->nOrder ? sel->nOrder : 1));
    if (!aOrder) return bind_oom(b);
    for (int i = 0; i < sel->nOrder; i++) {
        const Expr *e = sel->aOrder[i].pExpr;
        const QExpr *k = NULL;
        SqlColType kt = SQLCOL_BIGINT;
        /* ORDER BY alias, or ORDER BY <position> as MySQL allows */
        if (e->kind == EXPR_COLUMN) {
            for (int j = 0; j < sel->nItem && !k; j++) {
                if (sel->aItem[j].zAlias && strcasecmp(sel->aItem[j].zAlias, e->u.zName) == 0 &&
                    aItemOut[j] >= 0 && aB[aItemOut[j]].q) {
                    k = aB[aItemOut[j]].q;
                    kt = aB[aItemOut[j]].type;
                }
            }
        } else if (e->kind == EXPR_INT) {
            if (e->u.i < 1 || e->u.i > nOut || !aB[e->u.i - 1].q) {
                return bind_fail_at(b, e->pos, "ORDER BY position out of range of the select list");
            }
            k = aB[e->u.i - 1].q;
            kt = aB[e->u.i - 1].type;
        }
        if (!k) {
            BExpr o;
            if (bind_expr(b, e, CTX_ORDER, &o)) return b->rc;
            k = o.q;
            kt = o.type;
        }
        if (no_mva_order(b, kt, e->pos)) return b->rc;
        aOrder[i].pExpr = k;
        aOrder[i].bDesc = sel->aOrder[i].bDesc;
    }
    for (int i = 0; i < nOut; i++) aOut[i] = aB[i].q;
    q->aOut = aOut;
    q->nOut = nOut;
    q->aOrder = aOrder;
    q->nOrder = sel->nOrder;
    if (q->bFusion && q->nOrder == 0) {
        /* A hybrid search returns the best fused rows first. */
        if (!(aOrder[0].pExpr = qexpr_hybrid(b->a))) return bind_oom(b);
        aOrder[0].bDesc = 1;
        q->nOrder = 1;
    } else if (q->bKnn && q->nOrder == 0) {
        /* Without ORDER BY a kNN query returns the nearest rows first. */
        if (!(aOrder[0].pExpr = qexpr_knn_dist(b->a))) return bind_oom(b);
        aOrder[0].bDesc = 0;
        q->nOrder = 1;
    }
    q->bOrderByWeight = sel->nOrder == 1 && aOrder[0].bDesc && aOrder[0].pExpr->kind == QE_WEIGHT;
    q->iOffset = sel->iOffset;
    q->iLimit = sel->iLimit >= 0 ? sel->iLimit : DEFAULT_LIMIT;
    q->bCountOnly = bs->nCount > 0;
    return LP_OK;
}

/* ------------------------------------------------------------------ */
/* Running a grouped SELECT                                            */

typedef struct AggState {
    int64_t n;              /* values added (NULLs skipped) */
    int64_t sumI;           /* SUM of integers, while it fits */
    double sumD;            /* the same as a double (AVG, and SUM past int64) */
    int bDouble;            /* some value was a double, or the integer sum overflowed */
    Value v;                /* MIN, MAX: the best so far (copied) */
    HashMap *pSet;          /* COUNT(DISTINCT x): the values seen, as key bytes */
    StrBuf *pCat;           /* GROUP_CONCAT(x): the values so far */
} AggState;

/* One row a group shows: the row query's outputs, copied. */
typedef struct GroupRow {
    Value *a;
    void **apRoom;          /* where each value's string, vector or set is kept */
    uint32_t *aRoom;        /* ... and how many bytes that room holds */
} GroupRow;

typedef struct Group {
    GroupRow *aRow;         /* its first rows, best first (GROUP N BY: up to
                            ** N; one otherwise) */
    int nRow;
    int64_t nCount;
    uint64_t iSeq;          /* when its first row came */
    AggState *aAgg;
    Value *aKey;            /* ORDER BY keys, once every row is in */
} Group;

typedef struct GroupRun {
    const GroupPlan *g;
    Arena a;                /* groups, their keys and copied values */
    HashMap map;            /* key bytes -> Group */
    VEC(Group *) all;       /* in order of first appearance */
    StrBuf key;
    StrBuf set;             /* a COUNT(DISTINCT x) value's key bytes */
    Value *aItem;           /* a row with its multi-value keys' items in
                            ** their place, one combination at a time */
    int nItemCap;
    int rc;
} GroupRun;

/* v, its string or vector copied into a: it outlives the row. */
static int value_keep(Arena *a, Value *v) {
    if (v->kind == VAL_STR) {
        char *z = arena_alloc(a, (size_t)v->u.s.n + 1);
        if (!z) return LP_NOMEM;
        memcpy(z, v->u.s.z, v->u.s.n);
        z[v->u.s.n] = 0;
        v->u.s.z = z;
    } else if (v->kind == VAL_VEC) {
        float *f = arena_alloc(a, sizeof(float) * (size_t)(v->u.v.n ? v->u.v.n : 1));
        if (!f) return LP_NOMEM;
        memcpy(f, v->u.v.a, sizeof(float) * v->u.v.n);
        v->u.v.a = f;
    }
    return LP_OK;
}

/* The key bytes of a row's nKey key values: each its kind, then its value
** (strings ASCII-lower-cased: they group as they compare). */
static void group_key(StrBuf *sb, const Value *a, int n) {
    strbuf_reset(sb);
    if (n == 0) strbuf_appendc(sb, 0); /* no key (aggregates alone): one group, its key one byte */
    for (int i = 0; i < n; i++) {
        const Value *v = &a[i];
        double d;
        strbuf_appendc(sb, (char)(v->kind == VAL_FLOAT ? VAL_INT : v->kind));
        switch (v->kind) {
        case VAL_INT:
            d = (double)v->u.i;
            if ((int64_t)d == v->u.i) strbuf_append(sb, &d, sizeof(d)); /* 2 and 2.0 alike */
            else strbuf_append(sb, &v->u.i, sizeof(v->u.i));
            break;
        case VAL_FLOAT:
            d = v->u.f == 0 ? 0 : v->u.f;
            strbuf_append(sb, &d, sizeof(d));
            break;
        case VAL_STR:
            strbuf_append(sb, &v->u.s.n, sizeof(v->u.s.n));
            for (uint32_t k = 0; k < v->u.s.n; k++) {
                char c = v->u.s.z[k];
                strbuf_appendc(sb, c >= 'A' && c <= 'Z' ? (char)(c + 32) : c);
            }
            break;
        case VAL_VEC:
            strbuf_append(sb, &v->u.v.n, sizeof(v->u.v.n));
            strbuf_append(sb, v->u.v.a, sizeof(float) * v->u.v.n);
            break;
        case VAL_MVA:
            strbuf_append(sb, &v->u.m.n, sizeof(v->u.m.n));
            strbuf_append(sb, v->u.m.a, sizeof(int64_t) * v->u.m.n);
            break;
        default:
            break;
        }
    }
}

static void agg_add(AggState *s, const GroupItem *gi, const Value *v, Arena *a, StrBuf *key, int *pRc) {
    if (v->kind == VAL_NULL) return;
    if (gi->kind == AGG_CONCAT) {
        if (!s->pCat && (s->pCat = arena_zalloc(a, sizeof(StrBuf))) == NULL) {
            *pRc = LP_NOMEM;
            return;
        }
        if (s->n++) strbuf_appendc(s->pCat, ',');
        value_format(v, gi->bFloat32, s->pCat);
        if (s->pCat->oom) *pRc = LP_NOMEM;
        return;
    }
    if (gi->kind == AGG_DISTINCT) { /* n counts the values not seen before */
        group_key(key, v, 1);
        if (!s->pSet && (s->pSet = arena_zalloc(a, sizeof(HashMap))) != NULL) hmap_init(s->pSet);
        char *z = s->pSet && !key->oom ? arena_alloc(a, key->n ? key->n : 1) : NULL;
        if (!z) {
            *pRc = LP_NOMEM;
            return;
        }
        if (hmap_get(s->pSet, key->z, key->n)) return;
        memcpy(z, key->z, key->n);
        if (hmap_put(s->pSet, z, key->n, z, NULL) != LP_OK) *pRc = LP_NOMEM;
        s->n++;
        return;
    }
    if (gi->kind == AGG_MIN || gi->kind == AGG_MAX) {
        int c = s->n ? value_cmp(v, &s->v) : 0;
        if (!s->n || (gi->kind == AGG_MIN ? c < 0 : c > 0)) {
            s->v = *v;
            if (value_keep(a, &s->v) != LP_OK) *pRc = LP_NOMEM;
        }
        s->n++;
        return;
    }
    if (v->kind != VAL_INT && v->kind != VAL_FLOAT) return;
    double d = v->kind == VAL_INT ? (double)v->u.i : v->u.f;
    s->sumD += d;
    if (v->kind == VAL_FLOAT) s->bDouble = 1;
    else if (!s->bDouble && __builtin_add_overflow(s->sumI, v->u.i, &s->sumI)) s->bDouble = 1;
    s->n++;
}

/* The bytes v's string, vector or multi-value takes. */
static size_t value_bytes(const Value *v) {
    return v->kind == VAL_STR   ? (size_t)v->u.s.n + 1
           : v->kind == VAL_VEC ? sizeof(float) * v->u.v.n
           : v->kind == VAL_MVA ? sizeof(int64_t) * v->u.m.n
                                : 0;
}

/* The row aVal copied into r: each string, vector or set into the room r
** keeps for that column, grown when it does not fit (a group that sees
** better rows often stays the size of its largest). */
static int row_set(GroupRun *gr, GroupRow *r, const Value *aVal, int nVal) {
    for (int i = 0; i < nVal; i++) {
        Value *d = &r->a[i];
        size_t n = value_bytes(&aVal[i]);
        *d = aVal[i];
        if (!n) continue; /* a number, NULL, or an empty set: nothing to keep */
        if (r->aRoom[i] < n) {
            if (!(r->apRoom[i] = arena_alloc(&gr->a, n))) return LP_NOMEM;
            r->aRoom[i] = (uint32_t)n;
        }
        void *pRoom = r->apRoom[i];
        if (d->kind == VAL_STR) {
            memcpy(pRoom, d->u.s.z, n - 1);
            ((char *)pRoom)[n - 1] = 0;
            d->u.s.z = pRoom;
        } else if (d->kind == VAL_VEC) {
            memcpy(pRoom, d->u.v.a, n);
            d->u.v.a = pRoom;
        } else {
            memcpy(pRoom, d->u.m.a, n);
            d->u.m.a = pRoom;
        }
    }
    return LP_OK;
}

/* Does row x come before row y in a group: by WITHIN GROUP ORDER BY, then
** in the query's order (WEIGHT() descending, then id ascending) when rows
** come unordered (bBest; otherwise the one that came first stays first)? */
static int row_beats(const GroupPlan *g, const Value *x, const Value *y) {
    for (int i = 0; i < g->nWithin; i++) {
        int c = value_cmp(&x[g->aWithin[i]], &y[g->aWithin[i]]);
        if (c) return g->aWithinDesc[i] ? c > 0 : c < 0;
    }
    if (!g->bBest) return 0;
    if (g->iRankW >= 0) {
        double wx = x[g->iRankW].u.f, wy = y[g->iRankW].u.f;
        if (wx != wy) return wx > wy;
    }
    return x[g->iRankId].u.i < y[g->iRankId].u.i;
}

/* Room for one more of group p's rows, in the arena. */
static int group_row_new(GroupRun *gr, GroupRow *r, int nVal) {
    r->a = arena_zalloc(&gr->a, sizeof(Value) * (size_t)(nVal ? nVal : 1));
    r->apRoom = arena_zalloc(&gr->a, sizeof(void *) * (size_t)(nVal ? nVal : 1));
    r->aRoom = arena_zalloc(&gr->a, sizeof(uint32_t) * (size_t)(nVal ? nVal : 1));
    return r->a && r->apRoom && r->aRoom ? LP_OK : LP_NOMEM;
}

/* The row aVal among group p's best rows, when it is one: in its place,
** the worst dropped past g->nRows (its room reused). */
static int group_keep_row(GroupRun *gr, Group *p, const Value *aVal, int nVal) {
    const GroupPlan *g = gr->g;
    int pos = p->nRow;
    while (pos > 0 && row_beats(g, aVal, p->aRow[pos - 1].a)) pos--;
    if (pos >= g->nRows) return LP_OK;
    GroupRow r;
    if (p->nRow < g->nRows) {
        if (group_row_new(gr, &r, nVal) != LP_OK) return LP_NOMEM;
        p->nRow++;
    } else {
        r = p->aRow[p->nRow - 1];
    }
    memmove(&p->aRow[pos + 1], &p->aRow[pos], sizeof(GroupRow) * (size_t)(p->nRow - 1 - pos));
    p->aRow[pos] = r;
    return row_set(gr, &p->aRow[pos], aVal, nVal);
}

static int group_row_one(GroupRun *gr, const Value *aVal, int nVal);

/* Row aVal into the group of each item of its multi-value keys from key
** iKey on (each combination, when several are): Manticore's GROUP BY of
** an MVA, where a row joins as many groups as it has items (none when
** empty). aVal is gr->aItem. */
static int group_row_items(GroupRun *gr, Value *aVal, int nVal, int iKey) {
    while (iKey < gr->g->nKey && aVal[iKey].kind != VAL_MVA) iKey++;
    if (iKey == gr->g->nKey) return group_row_one(gr, aVal, nVal);
    Value m = aVal[iKey];
    for (uint32_t k = 0; k < m.u.m.n; k++) {
        aVal[iKey] = value_int(m.u.m.a[k]);
        int rc = group_row_items(gr, aVal, nVal, iKey + 1);
        if (rc != LP_OK) return rc;
    }
    aVal[iKey] = m;
    return LP_OK;
}

static int group_row(void *ctx, const Value *aVal, int nVal) {
    GroupRun *gr = ctx;
    if (!gr->g->bSetKeys) return group_row_one(gr, aVal, nVal);
    if (gr->nItemCap < nVal) {
        free(gr->aItem);
        if (!(gr->aItem = malloc(sizeof(Value) * (size_t)nVal))) return gr->nItemCap = 0, LP_NOMEM;
        gr->nItemCap = nVal;
    }
    memcpy(gr->aItem, aVal, sizeof(Value) * (size_t)nVal);
    return group_row_items(gr, gr->aItem, nVal, 0);
}

static int group_row_one(GroupRun *gr, const Value *aVal, int nVal) {
    const GroupPlan *g = gr->g;
    group_key(&gr->key, aVal, g->nKey);
    if (gr->key.oom) return LP_NOMEM;
    Group *p = hmap_get(&gr->map, gr->key.z, gr->key.n);
    if (!p) {
        char *zKey = arena_alloc(&gr->a, gr->key.n ? gr->key.n : 1);
        p = arena_zalloc(&gr->a, sizeof(Group));
        GroupRow *aRow = arena_alloc(&gr->a, sizeof(GroupRow) * (size_t)g->nRows);
        AggState *aAgg = arena_zalloc(&gr->a, sizeof(AggState) * (size_t)(g->nAgg ? g->nAgg : 1));
        if (!zKey || !p || !aRow || !aAgg || group_row_new(gr, &aRow[0], nVal) != LP_OK) return LP_NOMEM;
        memcpy(zKey, gr->key.z, gr->key.n);
        p->aRow = aRow;
        p->nRow = 1;
        if (row_set(gr, &aRow[0], aVal, nVal) != LP_OK) return LP_NOMEM;
        p->aAgg = aAgg;
        p->iSeq = gr->all.n;
        if (hmap_put(&gr->map, zKey, gr->key.n, p, NULL) != LP_OK || VEC_PUSH(&gr->all, p)) return LP_NOMEM;
    } else if ((p->nRow < g->nRows || row_beats(g, aVal, p->aRow[p->nRow - 1].a)) &&
               group_keep_row(gr, p, aVal, nVal) != LP_OK) {
        return LP_NOMEM;
    }
    p->nCount++;
    int rc = LP_OK;
    for (int i = 0; i < g->nAgg; i++) {
        agg_add(&p->aAgg[i], &g->aAgg[i], &aVal[g->aAgg[i].iRow], &gr->a, &gr->set, &rc);
    }
    return rc;
}

/* What item gi is for group p, in its row iRow (GROUP N BY). */
static Value group_value(const Group *p, int iRow, const GroupItem *gi) {
    const AggState *s = gi->iAgg >= 0 ? &p->aAgg[gi->iAgg] : NULL;
    switch (gi->kind) {
    case AGG_COUNT: return value_int(p->nCount);
    case AGG_DISTINCT: return value_int(s->n);
    case AGG_SUM:
        if (!s->n) return value_null();
        return gi->type != SQLCOL_BIGINT || s->bDouble ? value_float(s->sumD) : value_int(s->sumI);
    case AGG_AVG: return s->n ? value_float(s->sumD / (double)s->n) : value_null();
    case AGG_MIN:
    case AGG_MAX: return s->n ? s->v : value_null();
    case AGG_CONCAT: return s->n ? value_str(s->pCat->z, (uint32_t)s->pCat->n) : value_null();
    default: return p->aRow[iRow].a[gi->iRow];
    }
}

static _Thread_local const GroupPlan *t_pSortPlan;

static int group_cmp(const void *x, const void *y) {
    const Group *a = *(Group *const *)x, *b = *(Group *const *)y;
    const GroupPlan *g = t_pSortPlan;
    for (int i = 0; i < g->nOrder; i++) {
        int c = value_cmp(&a->aKey[i], &b->aKey[i]);
        if (c) return g->aDesc[i] ? -c : c;
    }
    if (g->bBest) { /* in the order of their first rows */
        if (row_beats(g, a->aRow[0].a, b->aRow[0].a)) return -1;
        return row_beats(g, b->aRow[0].a, a->aRow[0].a);
    }
    return (a->iSeq > b->iSeq) - (a->iSeq < b->iSeq);
}

static void group_run_init(GroupRun *gr, const GroupPlan *g) {
    memset(gr, 0, sizeof(*gr));
    gr->g = g;
    arena_init(&gr->a, 16384);
    hmap_init(&gr->map);
}

/* The groups gr gathered (rc: how gathering went) into r (columns already
** set): those HAVING holds for, ordered, the window OFFSET and LIMIT say;
** SHOW META's counts into *pMeta. Frees gr-> LP_OK or an error (err). */
static int group_run_finish(GroupRun *gr, int rc, SqlResult *r, QMeta *pMeta, LpError *err) {
    const GroupPlan *g = gr->g;
    if (rc == LP_NOMEM) lp_err_set(err, LP_NOMEM, "out of memory grouping the rows");
    /* Aggregates without GROUP BY (no key): one row even when no row
    ** matched, as SQL's (COUNT 0, the others NULL) */
    if (rc == LP_OK && g->nKey == 0 && gr->all.n == 0) {
        int nVal = 1;
        for (int i = 0; i < g->nOut; i++) nVal = g->aOut[i].iRow >= nVal ? g->aOut[i].iRow + 1 : nVal;
        for (int i = 0; i < g->nOrder; i++) nVal = g->aOrder[i].iRow >= nVal ? g->aOrder[i].iRow + 1 : nVal;
        for (int i = 0; i < g->nHave; i++) nVal = g->aHave[i].iRow >= nVal ? g->aHave[i].iRow + 1 : nVal;
        Group *p = arena_zalloc(&gr->a, sizeof(Group));
        GroupRow *aRow = arena_zalloc(&gr->a, sizeof(GroupRow));
        Value *a = arena_alloc(&gr->a, sizeof(Value) * (size_t)nVal);
        AggState *aAgg = arena_zalloc(&gr->a, sizeof(AggState) * (size_t)(g->nAgg ? g->nAgg : 1));
        if (!p || !aRow || !a || !aAgg) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory");
        } else {
            for (int i = 0; i < nVal; i++) a[i] = value_null();
            aRow->a = a;
            *p = (Group){.aRow = aRow, .nRow = 1, .aAgg = aAgg};
            if (VEC_PUSH(&gr->all, p)) rc = lp_err_set(err, LP_NOMEM, "out of memory");
        }
    }
    /* the groups shown: those HAVING holds for, in their order */
    Group **aKeep = arena_alloc(&gr->a, sizeof(Group *) * (gr->all.n ? gr->all.n : 1));
    size_t nKeep = 0;
    Value *aSlot = arena_alloc(&gr->a, sizeof(Value) * (size_t)(g->nHave ? g->nHave : 1));
    if (rc == LP_OK && (!aKeep || !aSlot)) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    for (size_t i = 0; rc == LP_OK && i < gr->all.n; i++) {
        QRow row;
        memset(&row, 0, sizeof(row));
        row.aSlot = aSlot;
        for (int k = 0; k < g->nHave; k++) aSlot[k] = group_value(gr->all.a[i], 0, &g->aHave[k]);
        if (!g->pHaving || qexpr_true(g->pHaving, &row)) aKeep[nKeep++] = gr->all.a[i];
    }
    if (rc == LP_OK && (g->nOrder || g->bBest)) {
        for (size_t i = 0; i < nKeep && rc == LP_OK && g->nOrder; i++) {
            Group *p = aKeep[i];
            if (!(p->aKey = arena_alloc(&gr->a, sizeof(Value) * (size_t)g->nOrder))) {
                rc = lp_err_set(err, LP_NOMEM, "out of memory");
                break;
            }
            for (int k = 0; k < g->nOrder; k++) p->aKey[k] = group_value(p, 0, &g->aOrder[k]);
        }
        t_pSortPlan = g;
        if (rc == LP_OK && nKeep > 1) qsort(aKeep, nKeep, sizeof(Group *), group_cmp);
    }
    RowSink k = {r, {0}};
    Value aStack[32];
    Value *aOut = g->nOut <= 32 ? aStack : malloc(sizeof(Value) * (size_t)g->nOut);
    if (!aOut && rc == LP_OK) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    /* each group's rows (one, or GROUP N BY's up to N): OFFSET and LIMIT
    ** count them, as SHOW META's total_found does */
    uint64_t nReturned = 0, nRows = 0;
    for (size_t i = 0; i < nKeep; i++) {
        for (int j = 0; j < aKeep[i]->nRow; j++, nRows++) {
            if (rc != LP_OK || nRows < (uint64_t)g->iOffset || nReturned >= (uint64_t)g->iLimit) continue;
            for (int c = 0; c < g->nOut; c++) aOut[c] = group_value(aKeep[i], j, &g->aOut[c]);
            if (sink_row(&k, aOut, g->nOut) != LP_OK) rc = lp_err_set(err, LP_NOMEM, "out of memory");
            nReturned++;
        }
    }
    if (aOut != aStack) free(aOut);
    strbuf_free(&k.sb);
    pMeta->nTotalFound = nRows;
    pMeta->nReturned = nReturned;
    for (size_t i = 0; i < gr->all.n; i++) { /* the COUNT(DISTINCT x) sets' slots, GROUP_CONCAT's text */
        for (int j = 0; j < g->nAgg; j++) {
            if (gr->all.a[i]->aAgg[j].pSet) hmap_free(gr->all.a[i]->aAgg[j].pSet);
            if (gr->all.a[i]->aAgg[j].pCat) strbuf_free(gr->all.a[i]->aAgg[j].pCat);
        }
    }
    VEC_FREE(&gr->all);
    hmap_free(&gr->map);
    strbuf_free(&gr->key);
    strbuf_free(&gr->set);
    free(gr->aItem);
    arena_free(&gr->a);
    return rc;
}

/* Runs bs's row query into groups, and hands the window of groups to the
** result (columns already set). LP_OK or an error (err). */
static int run_grouped(const BoundSelect *bs, SqlResult *r, QMeta *pMeta, LpError *err) {
    GroupRun gr;
    group_run_init(&gr, bs->pGroup);
    int rc = query_select(&bs->q, group_row, &gr, pMeta, err);
    return group_run_finish(&gr, rc, r, pMeta, err);
}

/* Error, with the statement's context for full-text errors that carry an
** offset inside the MATCH text. */
static void report(SqlResult *r, LpError *err) {
    sqlx_report(r, err, err->code == LP_NOMEM ? ER_OUTOFMEMORY : ER_PARSE);
}

static void keep_meta(SqlSession *s, const BoundSelect *bs, const QMeta *m) {
    s->meta.bValid = 1;
    s->meta.q = *m;
    s->meta.nTotal = bs->nCount ? 1 : m->nReturned;
    s->meta.nTotalFound = m->nTotalFound;
    s->meta.nExamined = m->nExamined;
    s->meta.zPlan = m->zPlan;
    /* SHOW META's keyword statistics are looked up when it asks: the
    ** query keeps its text and table, not the counts. */
    sqlx_meta_match(s, bs->q.bMatch && bs->q.pMatch ? table_name(bs->q.pTable) : NULL,
                    bs->q.zMatch, bs->q.nMatch, bs->q.rank.nExpansionLimit, bs->q.matchFlags);
}

/* One FACET of a SELECT bound into *bs: the SELECT's rows grouped by the
** facet's expressions (or its BY list), with COUNT(DISTINCT column) when
** it has DISTINCT, and COUNT(*) (Manticore's: the same table, MATCH, WHERE
** and options; FACET() in its ORDER BY is the facet's first expression;
** LIMIT 20 by default). LP_OK, or an error in err (bs->t, when set, is the
** caller's to release either way). */
static int bind_facet(SqlSession *s, const SqlStmt *st, const SelectStmt *sel, const FacetClause *fc,
                      BoundSelect *bs, LpError *err) {
    Arena *a = &s->stmt;
    SelectStmt f = *sel;
    int nItem = fc->nItem + 1 + (fc->pDistinct != NULL);
    Expr *pFirst = fc->aItem[0].pExpr;
    SelectItem *aItem = arena_alloc(a, sizeof(SelectItem) * (size_t)nItem);
    Expr *star = arena_zalloc(a, sizeof(Expr)), *cnt = arena_zalloc(a, sizeof(Expr));
    Expr *dist = arena_zalloc(a, sizeof(Expr));
    Expr **aArg = arena_alloc(a, sizeof(Expr *)), **aDistArg = arena_alloc(a, sizeof(Expr *));
    OrderItem *aOrder = arena_alloc(a, sizeof(OrderItem) * (size_t)(fc->nOrder ? fc->nOrder : 1));
    Expr **aKey = fc->aBy ? fc->aBy : arena_alloc(a, sizeof(Expr *) * (size_t)fc->nItem);
    if (!aItem || !star || !cnt || !dist || !aArg || !aDistArg || !aKey || !aOrder) {
        return lp_err_set(err, LP_NOMEM, "out of memory");
    }
    star->kind = EXPR_STAR;
    star->pos = pFirst->pos;
    cnt->kind = EXPR_FUNC;
    cnt->pos = pFirst->pos;
    cnt->u.func.zName = "count";
    cnt->u.func.aArg = aArg;
    cnt->u.func.nArg = 1;
    aArg[0] = star;
    for (int i = 0; i < fc->nItem; i++) {
        aItem[i] = fc->aItem[i];
        if (!fc->aBy) aKey[i] = fc->aItem[i].pExpr;
    }
    if (fc->pDistinct) { /* COUNT(DISTINCT column), named as Manticore names it */
        *dist = *cnt;
        dist->pos = fc->pDistinct->pos;
        dist->u.func.bDistinct = 1;
        dist->u.func.aArg = aDistArg;
        aDistArg[0] = fc->pDistinct;
        SelectItem it = {fc->pDistinct, NULL};
        const char *zCol = item_name(st, &it, a), *zName = zCol ? arena_printf(a, "count(distinct %s)", zCol) : NULL;
        if (!zName) return lp_err_set(err, LP_NOMEM, "out of memory");
        aItem[fc->nItem] = (SelectItem){dist, zName};
    }
    aItem[nItem - 1] = (SelectItem){cnt, "count(*)"};
    for (int i = 0; i < fc->nOrder; i++) {
        aOrder[i] = fc->aOrder[i];
        const Expr *e = aOrder[i].pExpr;
        if (e->kind == EXPR_FUNC && !strcmp(e->u.func.zName, "facet") && e->u.func.nArg == 0) {
            aOrder[i].pExpr = pFirst; /* FACET(): the facet's (first) value */
        }
    }
    f.aItem = aItem;
    f.nItem = nItem;
    f.aGroupBy = aKey;
    f.nGroupBy = fc->aBy ? fc->nBy : fc->nItem;
    f.nGroupRows = 1;
    f.aWithin = NULL;
    f.nWithin = 0;
    f.pHaving = NULL;
    f.aOrder = aOrder;
    f.nOrder = fc->nOrder;
    f.iLimit = fc->iLimit;
    f.iOffset = fc->iOffset;
    f.aFacet = NULL;
    f.nFacet = 0;
    Binder b = {s, &s->stmt, st, NULL, sel->zTable, err, LP_OK, 0, 0, NULL, NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL};
    return bind_select(&b, &f, bs);
}

/* Feeds one row of the facets' shared row query to each facet's groups:
** facet i's outputs are aVal[aOff[i] .. aOff[i+1]). */
typedef struct FacetRun {
    int n;
    GroupRun *aGr;
    const int *aOff;
} FacetRun;

static int facet_row(void *ctx, const Value *aVal, int nVal) {
    const FacetRun *f = ctx;
    (void)nVal;
    for (int i = 0; i < f->n; i++) {
        int rc = group_row(&f->aGr[i], aVal + f->aOff[i], f->aOff[i + 1] - f->aOff[i]);
        if (rc != LP_OK) return rc;
    }
    return LP_OK;
}

/* A SELECT's FACETs, each one more result set after r's. Every facet
** groups the same rows, so one run of the row query, its outputs each
** facet's row outputs side by side, feeds them all (as Manticore runs a
** faceted query's group-bys over one search). LP_OK, or an error in err. */
static int run_facets(SqlSession *s, const SqlStmt *st, const SelectStmt *sel, SqlResult *r, LpError *err) {
    int n = sel->nFacet, rc = LP_OK, nOut = 0;
    BoundSelect *aBs = arena_zalloc(&s->stmt, sizeof(BoundSelect) * (size_t)n);
    SqlResult **aR = arena_zalloc(&s->stmt, sizeof(SqlResult *) * (size_t)n);
    GroupRun *aGr = arena_zalloc(&s->stmt, sizeof(GroupRun) * (size_t)n);
    int *aOff = arena_zalloc(&s->stmt, sizeof(int) * (size_t)(n + 1));
    if (!aBs || !aR || !aGr || !aOff) return lp_err_set(err, LP_NOMEM, "out of memory");
    for (int i = 0; i < n && rc == LP_OK; i++) {
        rc = bind_facet(s, st, sel, &sel->aFacet[i], &aBs[i], err);
        if (rc == LP_OK && (!(aR[i] = sql_result_more(r)) || sql_result_columns(aR[i], aBs[i].nOut))) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory");
        }
        for (int c = 0; rc == LP_OK && c < aBs[i].nOut; c++) {
            if (sql_result_column(aR[i], c, aBs[i].azName[c], aBs[i].aB[c].type, 0)) rc = lp_err_set(err, LP_NOMEM, "out of memory");
        }
        if (rc == LP_OK) aOff[i + 1] = nOut += aBs[i].q.nOut;
    }
    const QExpr **aOut = rc == LP_OK ? arena_alloc(&s->stmt, sizeof(QExpr *) * (size_t)(nOut ? nOut : 1)) : NULL;
    if (rc == LP_OK && !aOut) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    if (rc == LP_OK) {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < aBs[i].q.nOut; j++) aOut[aOff[i] + j] = aBs[i].q.aOut[j];
            group_run_init(&aGr[i], aBs[i].pGroup);
        }
        QSelect q = aBs[0].q; /* (every facet's is the same query but for its outputs) */
        q.aOut = aOut;
        q.nOut = nOut;
        FacetRun fr = {n, aGr, aOff};
        QMeta meta;
        rc = query_select(&q, facet_row, &fr, &meta, err);
        for (int i = 0; i < n; i++) {
            int rc2 = group_run_finish(&aGr[i], rc, aR[i], &meta, err);
            if (rc == LP_OK) rc = rc2;
        }
    }
    for (int i = 0; i < n; i++) {
        if (aBs[i].t) table_unref(aBs[i].t);
    }
    return rc;
}

void sqlx_select(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const SelectStmt *sel = &st->u.select;
    LpError err;
    lp_err_clear(&err);
    Binder b = {s, &s->stmt, st, NULL, sel->zTable, &err, LP_OK, 0, 0, NULL, NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL};
    BoundSelect bs = {0};
    s->meta.bValid = 0;
    s->meta.bProfiled = 0; /* set again below when profiling is on */
    s->meta.nsProfilePlan = 0;
    if (!sel->zTable) {
        for (int i = 0; i < sel->nOption; i++) {
            if (strcmp(sel->aOption[i].zName, "max_matches") != 0) {
                bind_fail_at(&b, sel->aOption[i].pos, "options need a FROM table");
                goto fail;
            }
        }
        select_no_table(&b, sel, r);
        if (b.rc) goto fail;
        return;
    }
    if (bind_select(&b, sel, &bs)) goto fail;
    if (sql_result_columns(r, bs.nOut)) goto oom;
    for (int i = 0; i < bs.nOut; i++) {
        int flags = bs.aB[i].iCol == SCHEMA_ID_COL ? SQLCOL_F_NOTNULL | SQLCOL_F_PRIKEY : 0;
        if (sql_result_column(r, i, bs.azName[i], bs.aB[i].type, flags)) goto oom;
    }
    RowSink k = {r, {0}};
    QMeta meta;
    int rc = bs.pGroup ? run_grouped(&bs, r, &meta, &err) : query_select(&bs.q, sink_row, &k, &meta, &err);
    strbuf_free(&k.sb);
    if (rc != LP_OK) {
        r->nCol = 0;
        r->nRow = 0;
        goto fail;
    }
    if (bs.nCount) {
        SqlCell *row = sql_result_row(r);
        if (!row) goto oom;
        for (int i = 0; i < bs.nOut; i++) {
            if (sql_result_cell_int(r, &row[i], (int64_t)meta.nTotalFound)) goto oom;
        }
    }
    const char *zTab = arena_strndup(&r->arena, table_name(bs.t), strlen(table_name(bs.t)));
    if (!zTab) goto oom;
    for (int i = 0; i < bs.nOut; i++) {
        if (bs.aB[i].iCol != SCHEMA_NO_COL) r->aCol[i].zTable = zTab;
    }
    keep_meta(s, &bs, &meta);
    if (s->bProfiling) {
        /* SHOW PLAN: the plan EXPLAIN gives, made by the same planner from
        ** the same statement right after it ran (not timed in SHOW PROFILE) */
        int64_t t0 = lp_now_ns();
        StrBuf sb = {0};
        LpError e2;
        if (query_explain(&bs.q, &sb, &e2) == LP_OK && !sb.oom) {
            size_t n = sb.n;
            while (n && sb.z[n - 1] == '\n') n--; /* lines joined, as one value */
            sqlx_meta_plan(s, n ? sb.z : "", n);
        }
        strbuf_free(&sb);
        s->meta.nsProfilePlan = lp_now_ns() - t0;
    }
    if (meta.fts.bTimedOut) {
        sqlx_warn(s, ER_UNKNOWN_ERROR, "query time exceeded max_query_time=%lld ms: the results "
                  "are the matches found by then", (long long)(bs.q.nsMaxTime / 1000000));
    }
    table_unref(bs.t);
    bs.t = NULL;
    /* FACETs: grouped queries over the same rows, each a result set of its own */
    if (sel->nFacet && run_facets(s, st, sel, r, &err) != LP_OK) goto fail;
    return;
oom:
    bind_oom(&b);
fail:
    if (bs.t) table_unref(bs.t);
    report(r, &err);
}

void sqlx_explain(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const SelectStmt *sel = &st->u.select;
    LpError err;
    lp_err_clear(&err);
    Binder b = {s, &s->stmt, st, NULL, sel->zTable, &err, LP_OK, 0, 0, NULL, NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL};
    BoundSelect bs = {0};
    StrBuf sb = {0};
    if (!sel->zTable) {
        bind_fail(&b, ER_PARSE, LP_BADINPUT, "EXPLAIN needs a SELECT with a FROM table");
        goto fail;
    }
    if (bind_select(&b, sel, &bs) || query_explain(&bs.q, &sb, &err)) goto fail;
    if (sql_result_columns(r, 1) || sql_result_column(r, 0, "plan", SQLCOL_STRING, 0)) goto oom;
    for (const char *p = sb.z ? sb.z : ""; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        SqlCell *row = sql_result_row(r);
        if (!row || sql_result_cell(r, &row[0], p, n)) goto oom;
        p += n + (e ? 1 : 0);
    }
    strbuf_free(&sb);
    table_unref(bs.t);
    return;
oom:
    bind_oom(&b);
fail:
    strbuf_free(&sb);
    if (bs.t) table_unref(bs.t);
    report(r, &err);
}

/* ------------------------------------------------------------------ */
/* Values for INSERT, REPLACE and UPDATE                               */

/* What a VALUES / SET list is for column c: 'i' a multi-value's integers
** ('j' the same for a JSON property's array),
** 'v' a vector's numbers, 's' a scalar (a list of one is its item). */
static char list_kind(const ColumnSchema *c) {
    return coltype_is_mva(c->type) ? 'i' : c->type == COL_VECTOR ? 'v' : 's';
}

/* Evaluates a VALUES / SET expression to a constant: literals, NULL,
** arithmetic on constants, and a parenthesised list of numbers as a
** vector, or (want 'i', a multi-value column's) of integers. */
static int eval_value(Binder *b, const Expr *e, char want, Value *pv) {
    if (e->kind == EXPR_LIST && want == 's' && e->u.list.nItem == 1) e = e->u.list.aItem[0];
    if (e->kind == EXPR_LIST) {
        int n = e->u.list.nItem, bInts = want == 'i' || want == 'j';
        void *p = arena_alloc(b->a, (bInts ? sizeof(int64_t) : sizeof(float)) * (size_t)(n ? n : 1));
        if (!p) return bind_oom(b);
        for (int i = 0; i < n; i++) {
            BExpr x;
            if (bind_expr(b, e->u.list.aItem[i], CTX_VALUES, &x)) return b->rc;
            Value v = qexpr_eval(x.q, NULL);
            if (v.kind != VAL_INT && (bInts || v.kind != VAL_FLOAT)) {
                return bind_fail_at(b, e->u.list.aItem[i]->pos, want == 'j' ? "expected an integer as an array element"
                                                                : bInts     ? "expected an integer as a multi-value item"
                                                                            : "expected a number as vector component");
            }
            if (bInts) ((int64_t *)p)[i] = v.u.i;
            else ((float *)p)[i] = v.kind == VAL_INT ? (float)v.u.i : (float)v.u.f;
        }
        if (bInts) {
            pv->kind = VAL_MVA;
            pv->u.m.a = p;
            pv->u.m.n = (uint32_t)n;
        } else {
            pv->kind = VAL_VEC;
            pv->u.v.a = p;
            pv->u.v.n = (uint32_t)n;
        }
        return LP_OK;
    }
    BExpr x;
    if (bind_expr(b, e, CTX_VALUES, &x)) return b->rc;
    *pv = qexpr_eval(x.q, NULL);
    return LP_OK;
}

/* Converts v for column iCol (SCHEMA_ID_COL for the id); errors say which
** row when the statement has several. */
static int coerce_for(Binder *b, const Schema *sc, int iCol, Value v, int iRow, int nRow,
                      Value *pOut) {
    static const ColumnSchema idCol = {(char *)"id", COL_ID, 0, {0}};
    const ColumnSchema *c = iCol == SCHEMA_ID_COL ? &idCol : &sc->aCol[iCol];
    int rc = value_coerce(c, v, b->a, pOut, b->err);
    if (rc == LP_OK) return LP_OK;
    b->err->detail = rc == LP_RANGE ? ER_OUT_OF_RANGE : rc == LP_NOMEM ? ER_OUTOFMEMORY
                                                                       : ER_BAD_VALUE;
    if (nRow > 1) lp_err_prefix(b->err, "row %d", iRow + 1);
    b->rc = rc;
    return rc;
}

void sqlx_insert(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const InsertStmt *ins = &st->u.insert;
    LpError err;
    lp_err_clear(&err);
    Binder b = {s, &s->stmt, st, NULL, ins->zTable, &err, LP_OK, 0, 0, NULL, NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL};
    Table *t = bind_table(&b, ins->zTable);
    if (!t) goto fail;
    const Schema *sc = b.pSchema;

    /* Which schema column each value goes to. */
    int nCol = ins->azCol ? ins->nCol : sc->nCol + 1;
    int *aTarget = arena_alloc(b.a, sizeof(int) * (size_t)(nCol ? nCol : 1));
    uint8_t *aSeen = arena_zalloc(b.a, (size_t)sc->nCol + 1);
    if (!aTarget || !aSeen) goto oom;
    for (int i = 0; i < nCol; i++) {
        if (!ins->azCol) {
            aTarget[i] = i - 1; /* id first, then declaration order */
            continue;
        }
        int c = schema_find(sc, ins->azCol[i]);
        if (c == SCHEMA_NO_COL) {
            bind_fail(&b, ER_BAD_FIELD, LP_NOTFOUND, "unknown column '%s' in table '%s'",
                      ins->azCol[i], ins->zTable);
            goto fail;
        }
        if (aSeen[c + 1]++) {
            bind_fail(&b, ER_FIELD_TWICE, LP_BADINPUT, "column '%s' specified twice",
                      ins->azCol[i]);
            goto fail;
        }
        aTarget[i] = c;
    }

    TableOp *aOp = arena_alloc(b.a, sizeof(TableOp) * (size_t)(ins->nRow ? ins->nRow : 1));
    if (!aOp) goto oom;
    for (int row = 0; row < ins->nRow; row++) {
        if (ins->anRowVal[row] != nCol) {
            bind_fail(&b, ER_COUNT_MISMATCH, LP_BADINPUT,
                      "column count doesn't match value count at row %d (%d columns, %d values)",
                      row + 1, nCol, ins->anRowVal[row]);
            goto fail;
        }
        Value *aVal = arena_alloc(b.a, sizeof(Value) * (size_t)(sc->nCol ? sc->nCol : 1));
        if (!aVal) goto oom;
        for (int c = 0; c < sc->nCol; c++) aVal[c] = value_null();
        int64_t id = 0;
        for (int i = 0; i < nCol; i++) {
            Value v, cv;
            char want = aTarget[i] == SCHEMA_ID_COL ? 's' : list_kind(&sc->aCol[aTarget[i]]);
            if (eval_value(&b, ins->aaRow[row][i], want, &v)) goto fail;
            if (aTarget[i] == SCHEMA_ID_COL) {
                /* NULL or 0: an automatic id */
                if (v.kind == VAL_NULL || (v.kind == VAL_INT && v.u.i == 0)) continue;
                if (coerce_for(&b, sc, SCHEMA_ID_COL, v, row, ins->nRow, &cv)) goto fail;
                id = cv.u.i;
                continue;
            }
            if (coerce_for(&b, sc, aTarget[i], v, row, ins->nRow, &cv)) goto fail;
            aVal[aTarget[i]] = cv;
        }
        aOp[row].kind = ins->bReplace ? TOP_REPLACE : TOP_INSERT;
        aOp[row].id = id;
        aOp[row].aVal = aVal;
        aOp[row].aSet = NULL;
    }
    sqlx_write(s, t, aOp, (size_t)ins->nRow, r, 1);
    table_unref(t);
    return;
oom:
    bind_oom(&b);
fail:
    if (t) table_unref(t);
    sqlx_report(r, &err, ER_PARSE);
}

/* Collects the ids of matching rows. */
typedef struct IdSink {
    VEC(int64_t) ids;
} IdSink;

static int sink_id(void *ctx, const Value *aVal, int nVal) {
    IdSink *k = ctx;
    (void)nVal;
    return VEC_PUSH(&k->ids, aVal[0].u.i) ? LP_NOMEM : LP_OK;
}

/* Finds the rows of t matching pWhere, then writes one op of kind per row
** (values aVal/aSet for UPDATE) through sqlx_write, which fills r. */
/* The ids of the rows of t that pWhere (MATCH and all) selects, into k. */
static int find_matching(Binder *b, Table *t, const Expr *pWhere, IdSink *k) {
    QSelect q = {0};
    q.pTable = t;
    fts_rank_defaults(&q.rank);
    q.rank.ranker = FTS_RANK_NONE; /* matching only: no scores needed */
    q.rank.expand = sqlx_table_expand(b->pSchema); /* the rows a SELECT would match */
    const Expr *pMatch = NULL;
    pWhere = split_call(b, pWhere, "match", &pMatch);
    static const Fuzzy noFuzzy = {-1, 0};
    if (pMatch && bind_match(b, &q, pMatch, &noFuzzy)) return b->rc;
    if (pWhere) {
        BExpr w;
        if (bind_expr(b, pWhere, CTX_WHERE, &w) || no_mva_truth(b, &w, pWhere->pos)) return b->rc;
        q.pWhere = w.q;
        if (!q.bMatch) find_id_candidates(w.q, &q.aId, &q.nId, b->a);
    }
    const QExpr *idCol = qexpr_column(b->a, SCHEMA_ID_COL);
    if (!idCol) return bind_oom(b);
    q.aOut = &idCol;
    q.nOut = 1;
    q.iLimit = INT64_MAX / 2;
    QMeta meta;
    if (query_select(&q, sink_id, k, &meta, b->err) != LP_OK) {
        VEC_FREE(&k->ids);
        return bind_oom(b);
    }
    return LP_OK;
}

static int write_matching(Binder *b, Table *t, const Expr *pWhere, TableOpKind kind,
                          const Value *aVal, const uint8_t *aSet, SqlResult *r) {
    IdSink k = {{0}};
    if (find_matching(b, t, pWhere, &k)) return b->rc;
    TableOp *aOp = arena_alloc(b->a, sizeof(TableOp) * (k.ids.n ? k.ids.n : 1));
    if (!aOp) {
        VEC_FREE(&k.ids);
        return bind_oom(b);
    }
    for (size_t i = 0; i < k.ids.n; i++) aOp[i] = (TableOp){kind, k.ids.a[i], aVal, aSet, NULL, NULL};
    sqlx_write(b->s, t, aOp, k.ids.n, r, 0);
    VEC_FREE(&k.ids);
    return LP_OK;
}

/* A constant of an UPDATE's SET j.path = value as JSON: NULL, a number, a
** string, a list of integers an array; NULL (error set) otherwise. */
static json_t *json_of_value(Binder *b, const Value *v, int pos) {
    json_t *j = NULL;
    switch (v->kind) {
    case VAL_NULL: j = json_null(); break;
    case VAL_INT: j = json_integer(v->u.i); break;
    case VAL_FLOAT: j = isfinite(v->u.f) ? json_real(v->u.f) : NULL; break;
    case VAL_STR: j = json_stringn(v->u.s.z, v->u.s.n); break;
    case VAL_MVA:
        j = json_array();
        for (uint32_t i = 0; j && i < v->u.m.n; i++) {
            if (json_array_append_new(j, json_integer(v->u.m.a[i]))) json_decref(j), j = NULL;
        }
        break;
    default: break;
    }
    if (!j) bind_fail_at(b, pos, "a JSON property takes a number, a string, NULL or a list of integers");
    return j;
}

/* Sets the property at path a[0..n) of JSON document root to val (stolen):
** keys missing on the way are made objects, an array index may be its
** length (appended). 0, or -1 with zWhy saying which step cannot be. */
static int json_set_path(json_t *root, const ExprPathStep *a, int n, json_t *val, char *zWhy, size_t nWhy) {
    json_t *cur = root;
    for (int i = 0; i < n; i++) {
        const ExprPathStep *st = &a[i];
        int bLast = i == n - 1;
        if (st->zKey ? !json_is_object(cur) : !json_is_array(cur)) {
            snprintf(zWhy, nWhy, "step %d of the path needs %s there", i + 1, st->zKey ? "an object" : "an array");
            break;
        }
        if (st->zKey) {
            json_t *child = json_object_getn(cur, st->zKey, st->nKey);
            if (bLast) return json_object_setn_new(cur, st->zKey, st->nKey, val) ? -1 : 0;
            if (!child) {
                if (!(child = json_object()) || json_object_setn_new(cur, st->zKey, st->nKey, child)) break;
            }
            cur = child;
        } else {
            size_t nArr = json_array_size(cur);
            if (st->iIndex < 0 || (size_t)st->iIndex > nArr || (!bLast && (size_t)st->iIndex == nArr)) {
                snprintf(zWhy, nWhy, "index %lld of step %d is past the array's end (%zu elements)",
                         (long long)st->iIndex, i + 1, nArr);
                break;
            }
            if (bLast) {
                int rc = (size_t)st->iIndex == nArr ? json_array_append_new(cur, val)
                                                    : json_array_set_new(cur, (size_t)st->iIndex, val);
                return rc ? -1 : 0;
            }
            cur = json_array_get(cur, (size_t)st->iIndex);
        }
    }
    json_decref(val);
    if (!*zWhy) snprintf(zWhy, nWhy, "out of memory");
    return -1;
}

/* UPDATE ... SET j.a.b = value: each matching row's own new document (its
** JSON with the properties set, in SET's order), then one TOP_UPDATE per
** row with the statement's other values (aVal, aSet), made only if the row
** is still as it was read (TableOp.aWas): a row another writer changed
** meanwhile is read again and its document made anew, so no writer's
** properties are lost (at most UPDATE_TRIES rounds; in a transaction the
** rows are read once, when the statement runs). */
#define UPDATE_TRIES 64
static int update_json_paths(Binder *b, Table *t, const UpdateStmt *up, const int *aCol, json_t **aJson,
                             Value *aVal, const uint8_t *aSet, SqlResult *r) {
    const Schema *sc = b->pSchema;
    IdSink k = {{0}};
    if (find_matching(b, t, up->pWhere, &k)) return b->rc;
    int bTxn = !b->s->bAutocommit || b->s->bExplicitTxn;
    TableOp *aOp = arena_alloc(b->a, sizeof(TableOp) * (k.ids.n ? k.ids.n : 1));
    uint8_t *aStale = arena_alloc(b->a, k.ids.n ? k.ids.n : 1);
    size_t nPending = k.ids.n; /* the ids still to write: k.ids.a[0..nPending) */
    uint64_t nAffected = 0;
    if (!aOp || !aStale) bind_oom(b);
    if (b->rc == LP_OK && nPending == 0) sqlx_write(b->s, t, aOp, 0, r, 0); /* no row: 0 affected */
    for (int iTry = 0; b->rc == LP_OK && nPending > 0; iTry++) {
        if (iTry == UPDATE_TRIES) {
            bind_fail(b, ER_UNKNOWN_ERROR, LP_BUSY,
                      "UPDATE gave up after %d tries: other writers kept changing %zu of its rows (%llu were "
                      "updated)", UPDATE_TRIES, nPending, (unsigned long long)nAffected);
            break;
        }
        TableSnap *snap = table_snapshot(t);
        size_t nOp = 0;
        for (size_t i = 0; snap && i < nPending && b->rc == LP_OK; i++) {
            const MemRow *row = table_snap_get(snap, k.ids.a[i]);
            if (!row) continue; /* deleted since */
            Value *aRow = arena_alloc(b->a, sizeof(Value) * (size_t)sc->nCol);
            Value *aWas = arena_alloc(b->a, sizeof(Value) * (size_t)sc->nCol);
            if (!aRow || !aWas) {
                bind_oom(b);
                break;
            }
            memcpy(aRow, aVal, sizeof(Value) * (size_t)sc->nCol);
            for (int c = 0; c < sc->nCol && b->rc == LP_OK; c++) {
                aWas[c] = value_null();
                if (!aSet[c]) continue;
                aWas[c] = row_get(sc, row, c); /* the columns the op changes, as read */
                if (sqlx_copy_value(b->a, &aWas[c])) bind_oom(b);
            }
            for (int c = 0; c < sc->nCol && b->rc == LP_OK; c++) {
                json_t *doc = NULL;
                for (int s = 0; s < up->nSet && b->rc == LP_OK; s++) {
                    const SqlMapItem *it = &up->aSet[s];
                    if (aCol[s] != c || !it->nPath) continue;
                    if (!doc) { /* the row's document (NULL: a new object) */
                        Value old = row_get(sc, row, c);
                        doc = old.kind == VAL_STR ? json_loadb(old.u.s.z, old.u.s.n, JSON_DECODE_ANY, NULL)
                                                  : json_object();
                        if (!doc) bind_oom(b);
                    }
                    char zWhy[160] = "";
                    if (doc && json_set_path(doc, it->aPath, it->nPath, json_deep_copy(aJson[s]), zWhy, sizeof(zWhy))) {
                        bind_fail(b, ER_BAD_VALUE, LP_BADINPUT, "row %lld: cannot set %s's property: %s",
                                  (long long)k.ids.a[i], it->zName, zWhy);
                    }
                }
                if (!doc) continue;
                char *z = b->rc == LP_OK ? json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
                json_decref(doc);
                if (b->rc == LP_OK && !z) bind_oom(b);
                if (z) {
                    coerce_for(b, sc, c, value_str(z, (uint32_t)strlen(z)), 0, 1, &aRow[c]);
                    free(z);
                }
            }
            aStale[nOp] = 0;
            aOp[nOp] = (TableOp){TOP_UPDATE, k.ids.a[i], aRow, aSet, bTxn ? NULL : aWas, &aStale[nOp]};
            nOp++;
        }
        if (snap) table_snapshot_release(snap);
        if (!snap && b->rc == LP_OK) bind_oom(b);
        if (b->rc != LP_OK) break;
        /* a deferred commit's wait: the last write's record covers the others */
        Table *pCommit = r->pCommitTable;
        uint64_t lsnCommit = r->commitLsn;
        r->pCommitTable = NULL;
        sqlx_write(b->s, t, aOp, nOp, r, 0);
        if (pCommit && !r->pCommitTable) {
            r->pCommitTable = pCommit;
            r->commitLsn = lsnCommit;
        } else if (pCommit) {
            table_unref(pCommit);
        }
        if (r->kind != SQLRES_OK) break;
        nAffected += r->nAffected;
        /* the rows passed over go round again */
        size_t n = 0;
        for (size_t i = 0; i < nOp; i++) {
            if (aStale[i]) k.ids.a[n++] = aOp[i].id;
        }
        nPending = n;
    }
    if (b->rc == LP_OK && r->kind == SQLRES_OK) r->nAffected = nAffected;
    VEC_FREE(&k.ids);
    return b->rc;
}

void sqlx_update(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const UpdateStmt *up = &st->u.update;
    LpError err;
    lp_err_clear(&err);
    Binder b = {s, &s->stmt, st, NULL, up->zTable, &err, LP_OK, 0, 0, NULL, NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL};
    json_t **aJson = NULL; /* SET j.path = value: each value as JSON */
    Table *t = bind_table(&b, up->zTable);
    if (!t) goto fail;
    const Schema *sc = b.pSchema;
    if (up->nOption) {
        bind_fail_at(&b, up->aOption[0].pos, "UPDATE takes no options");
        goto fail;
    }

    Value *aVal = arena_alloc(b.a, sizeof(Value) * (size_t)(sc->nCol ? sc->nCol : 1));
    uint8_t *aSet = arena_zalloc(b.a, (size_t)(sc->nCol ? sc->nCol : 1));
    uint8_t *aPathed = arena_zalloc(b.a, (size_t)(sc->nCol ? sc->nCol : 1));
    int *aCol = arena_alloc(b.a, sizeof(int) * (size_t)(up->nSet ? up->nSet : 1));
    aJson = arena_zalloc(b.a, sizeof(json_t *) * (size_t)(up->nSet ? up->nSet : 1));
    int nPathed = 0;
    if (!aVal || !aSet || !aPathed || !aCol || !aJson) goto oom;
    for (int i = 0; i < up->nSet; i++) {
        const SqlMapItem *it = &up->aSet[i];
        int c = schema_find(sc, it->zName);
        aCol[i] = c;
        if (it->nPath && c >= 0) { /* SET j.a.b = value: a property of a JSON column */
            Value v;
            if (sc->aCol[c].type != COL_JSON) {
                bind_fail_at(&b, it->pos, "a path ('.key' or '[...]') follows only a JSON column's name");
                goto fail;
            }
            if (aSet[c] && !aPathed[c]) {
                bind_fail(&b, ER_FIELD_TWICE, LP_BADINPUT, "column '%s' specified twice", it->zName);
                goto fail;
            }
            aSet[c] = aPathed[c] = 1;
            if (eval_value(&b, it->pValue, 'j', &v) || !(aJson[i] = json_of_value(&b, &v, it->pValue->pos))) goto fail;
            nPathed++;
            continue;
        }
        if (c == SCHEMA_NO_COL) {
            bind_fail(&b, ER_BAD_FIELD, LP_NOTFOUND, "unknown column '%s' in table '%s'",
                      it->zName, up->zTable);
            goto fail;
        }
        if (c == SCHEMA_ID_COL) {
            bind_fail(&b, ER_BAD_VALUE, LP_BADINPUT,
                      "the id of a row cannot be updated: REPLACE the row under its new id and "
                      "DELETE the old one");
            goto fail;
        }
        if (sc->aCol[c].type == COL_TEXT || schema_col_is_field(&sc->aCol[c])) {
            bind_fail(&b, ER_BAD_VALUE, LP_BADINPUT,
                      "full-text field '%s' cannot be updated: use REPLACE to rewrite the row",
                      it->zName);
            goto fail;
        }
        if (aSet[c]++) {
            bind_fail(&b, ER_FIELD_TWICE, LP_BADINPUT, "column '%s' specified twice", it->zName);
            goto fail;
        }
        Value v;
        if (eval_value(&b, it->pValue, list_kind(&sc->aCol[c]), &v) || coerce_for(&b, sc, c, v, 0, 1, &aVal[c])) {
            goto fail;
        }
    }
    if (nPathed ? update_json_paths(&b, t, up, aCol, aJson, aVal, aSet, r)
                : write_matching(&b, t, up->pWhere, TOP_UPDATE, aVal, aSet, r)) {
        goto fail;
    }
    for (int i = 0; i < up->nSet; i++) json_decref(aJson[i]);
    table_unref(t);
    return;
oom:
    bind_oom(&b);
fail:
    for (int i = 0; aJson && i < up->nSet; i++) json_decref(aJson[i]);
    if (t) table_unref(t);
    sqlx_report(r, &err, ER_PARSE);
}

void sqlx_delete(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const DeleteStmt *del = &st->u.del;
    LpError err;
    lp_err_clear(&err);
    Binder b = {s, &s->stmt, st, NULL, del->zTable, &err, LP_OK, 0, 0, NULL, NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL};
    Table *t = bind_table(&b, del->zTable);
    if (!t) goto fail;
    if (!del->pWhere) {
        bind_fail(&b, ER_DELETE_NO_WHERE, LP_BADINPUT,
                  "DELETE needs a WHERE clause; use TRUNCATE TABLE %s to delete every row",
                  del->zTable);
        goto fail;
    }
    if (write_matching(&b, t, del->pWhere, TOP_DELETE, NULL, NULL, r)) goto fail;
    table_unref(t);
    return;
fail:
    if (t) table_unref(t);
    sqlx_report(r, &err, ER_PARSE);
}

/* ------------------------------------------------------------------ */
/* CREATE TABLE                                                        */


/* An integer option value in [lo, hi]. */
static int opt_int(Binder *b, const SqlMapItem *o, long lo, long hi, int *pOut) {
    const char *z = opt_text(b, o);
    if (!z) return b->rc;
    char *end;
    long v = strtol(z, &end, 10);
    if (!*z || *end || v < lo || v > hi) {
        char zMsg[200];
        snprintf(zMsg, sizeof(zMsg), "option '%s' expects an integer from %ld to %ld", o->zName,
                 lo, hi);
        return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos, zMsg);
    }
    *pOut = (int)v;
    return LP_OK;
}

static int type_from_word(const char *z) {
    static const struct {
        const char *z;
        ColType t;
    } a[] = {
        {"text", COL_TEXT},       {"string", COL_STRING},   {"int", COL_INT},
        {"integer", COL_INT},     {"bigint", COL_BIGINT},   {"float", COL_FLOAT},
        {"bool", COL_BOOL},       {"timestamp", COL_TIMESTAMP}, {"json", COL_JSON},
        {"float_vector", COL_VECTOR}, {"multi", COL_MULTI},  {"multi64", COL_MULTI64},
        {"mva", COL_MULTI},       {"mva64", COL_MULTI64},
    };
    for (size_t i = 0; i < LP_ARRAY_SIZE(a); i++) {
        if (strcmp(z, a[i].z) == 0) return (int)a[i].t;
    }
    return -1;
}

static int build_vector_opts(Binder *b, const ColumnDef *d, ColumnSchema *c) {
    VectorOpts *v = &c->vec;
    for (int i = 0; i < d->nOpt; i++) {
        const SqlMapItem *o = &d->aOpt[i];
        const char *z;
        if (strcmp(o->zName, "knn_type") == 0) {
            if (!(z = opt_text(b, o))) return b->rc;
            if (strcasecmp(z, "hnsw") != 0) {
                return bind_fail_at(b, o->pValue->pos, "knn_type must be 'hnsw'");
            }
            v->bHnsw = 1;
        } else if (strcmp(o->zName, "knn_dims") == 0) {
            if (opt_int(b, o, 1, 65536, &v->nDims)) return b->rc;
        } else if (strcmp(o->zName, "hnsw_similarity") == 0) {
            if (!(z = opt_text(b, o))) return b->rc;
            int sim = vecsim_parse(z);
            if (sim < 0) {
                return bind_fail_at(b, o->pValue->pos,
                                    "hnsw_similarity must be 'L2', 'IP' or 'COSINE'");
            }
            v->sim = (VecSimilarity)sim;
            v->bSim = 1;
        } else if (strcmp(o->zName, "hnsw_m") == 0) {
            if (opt_int(b, o, 2, 1024, &v->hnswM)) return b->rc;
        } else if (strcmp(o->zName, "hnsw_ef_construction") == 0) {
            if (opt_int(b, o, 1, 100000, &v->efConstruction)) return b->rc;
        } else if (strcmp(o->zName, "model_name") == 0 || strcmp(o->zName, "from") == 0) {
            if (!(z = opt_text(b, o))) return b->rc;
            char **pz = o->zName[0] == 'm' ? &v->zModel : &v->zFrom;
            if (*pz) return bind_fail_at(b, o->pos, "option given twice");
            if (!(*pz = strdup(z))) return bind_oom(b);
            if (o->zName[0] == 'm' && !z[0]) {
                return bind_fail_at(b, o->pValue->pos, "model_name must not be empty");
            }
        } else {
            char zMsg[200];
            snprintf(zMsg, sizeof(zMsg),
                     "unknown float_vector option '%s': expected knn_type, knn_dims, "
                     "hnsw_similarity, hnsw_m, hnsw_ef_construction",
                     o->zName);
            return bind_fail_at(b, o->pos, zMsg);
        }
    }
    if (v->zFrom && !v->zModel) {
        return bind_fail(b, ER_PARSE, LP_BADINPUT, "column '%s': from needs model_name",
                         c->zName);
    }
    if (v->bHnsw && !v->nDims && !v->zModel) {
        return bind_fail(b, ER_PARSE, LP_BADINPUT,
                         "column '%s': knn_type='hnsw' needs knn_dims (or model_name)",
                         c->zName);
    }
    return LP_OK;
}

static int build_column(Binder *b, const ColumnDef *d, ColumnSchema *c) {
    int t = type_from_word(d->zType);
    if (t < 0) {
        char zMsg[256];
        snprintf(zMsg, sizeof(zMsg),
                 "unknown column type '%s': expected text, string, int, bigint, float, bool, "
                 "timestamp, json, float_vector, multi or multi64",
                 d->zType);
        return bind_fail_at(b, d->typePos, zMsg);
    }
    c->type = (ColType)t;
    if (c->type == COL_TEXT) c->flags = COLF_INDEXED | COLF_STORED;
    /* Manticore's `string|text [stored|attribute] [indexed]`: with
    ** properties the two types are one, and only the properties named
    ** hold; without, text is indexed and stored, string an attribute. */
    int bIndexed = 0, bStored = 0, iAttr = -1, iStored = -1;
    int bChar = c->type == COL_TEXT || c->type == COL_STRING;
    for (int i = 0; i < d->nFlag; i++) {
        const char *f = d->azFlag[i];
        if (bChar && strcmp(f, "indexed") == 0) {
            bIndexed = 1;
        } else if (bChar && strcmp(f, "stored") == 0) {
            bStored = 1;
            iStored = i;
        } else if (bChar && strcmp(f, "attribute") == 0) {
            iAttr = i;
        } else {
            char zMsg[200];
            snprintf(zMsg, sizeof(zMsg), "unknown flag '%s' for a %s column%s", f, d->zType,
                     bChar ? ": expected indexed, stored or attribute" : "");
            return bind_fail_at(b, d->aFlagPos[i], zMsg);
        }
    }
    if (iAttr >= 0 && iStored >= 0) {
        return bind_fail_at(b, d->aFlagPos[iAttr > iStored ? iAttr : iStored],
                            "a column is stored (in the document store) or an attribute, not both: "
                            "an attribute's value is kept and returned already");
    }
    if (iAttr >= 0) {
        /* a string attribute, and a full-text field of the same name when
        ** indexed too */
        c->type = COL_STRING;
        c->flags = bIndexed ? COLF_INDEXED : 0;
    } else if (bIndexed || bStored) {
        c->type = COL_TEXT;
        c->flags = (bIndexed ? COLF_INDEXED : 0) | (bStored ? COLF_STORED : 0);
    }
    if (c->type == COL_VECTOR) return build_vector_opts(b, d, c);
    if (d->nOpt) {
        char zMsg[160];
        snprintf(zMsg, sizeof(zMsg), "unknown option '%s' for a %s column", d->aOpt[0].zName,
                 d->zType);
        return bind_fail_at(b, d->aOpt[0].pos, zMsg);
    }
    return LP_OK;
}

/* The edit distance between two names (bytes), capped at 3; a name longer
** than EDIT_WORD_MAX bytes counts as far. */
static int name_distance(const char *a, const char *b) {
    int na = (int)strlen(a), nb = (int)strlen(b);
    if (na > EDIT_WORD_MAX || nb > EDIT_WORD_MAX) return 3;
    uint32_t ua[EDIT_WORD_MAX], ub[EDIT_WORD_MAX];
    for (int i = 0; i < na; i++) ua[i] = (unsigned char)a[i];
    for (int i = 0; i < nb; i++) ub[i] = (unsigned char)b[i];
    return edit_distance(ua, na, ub, nb, 2);
}

static int check_table_option(Binder *b, const SqlMapItem *o, const char *z) {
    static const char *const azKnown[] = {"morphology", "stopwords", "min_prefix_len",
                                          "min_infix_len", "min_word_len", "min_stemming_len", "stopword_step", "overshort_step", "stopwords_unstemmed", "index_exact_words", "index_sp", "html_strip",
                                          "remove_diacritics", "html_remove_elements", "html_index_attrs", "index_zones", "expand_keywords",
                                          "wordforms", "wordforms_list", "exceptions", "exceptions_list", "stopwords_list", "ignore_chars", "charset_table", "blend_chars", "blend_mode", "ngram_len", "ngram_chars",
                                          "rt_mem_limit", "rank_profile", "type", "dict", "index_field_lengths", "regexp_filter",
                                          "phrase_boundary", "phrase_boundary_step"};
    size_t k = 0;
    while (k < LP_ARRAY_SIZE(azKnown) && strcmp(o->zName, azKnown[k]) != 0) k++;
    if (k == LP_ARRAY_SIZE(azKnown)) {
        /* the list no longer fits an error message: the nearest name, or
        ** where they are all listed */
        size_t iBest = 0;
        int dBest = INT_MAX;
        for (size_t i = 0; i < LP_ARRAY_SIZE(azKnown); i++) {
            int d = name_distance(o->zName, azKnown[i]);
            if (d < dBest) dBest = d, iBest = i;
        }
        char zMsg[320];
        if (dBest <= 2) {
            snprintf(zMsg, sizeof(zMsg), "unknown table option '%.64s': did you mean '%s'?", o->zName, azKnown[iBest]);
        } else {
            snprintf(zMsg, sizeof(zMsg),
                     "unknown table option '%.64s': the options are Manticore's full-text ones (morphology, "
                     "stopwords, charset_table, min_word_len, ...), rt_mem_limit, rank_profile and type; docs/sql.md "
                     "lists them",
                     o->zName);
        }
        return bind_fail_at(b, o->pos, zMsg);
    }
    int iv;
    if (strcmp(o->zName, "min_prefix_len") == 0 && opt_int(b, o, 0, 100, &iv)) return b->rc;
    if (strcmp(o->zName, "min_infix_len") == 0 && opt_int(b, o, 0, 64, &iv)) return b->rc;
    if (strcmp(o->zName, "min_word_len") == 0 && opt_int(b, o, 0, 64, &iv)) return b->rc;
    if (strcmp(o->zName, "min_stemming_len") == 0 && opt_int(b, o, 0, 64, &iv)) return b->rc;
    if (strcmp(o->zName, "stopword_step") == 0 && opt_int(b, o, 0, 1, &iv)) return b->rc;
    if (strcmp(o->zName, "overshort_step") == 0 && opt_int(b, o, 0, 1, &iv)) return b->rc;
    if (strcmp(o->zName, "stopwords_unstemmed") == 0 && opt_int(b, o, 0, 1, &iv)) return b->rc;
    if (strcmp(o->zName, "ngram_len") == 0 && opt_int(b, o, 0, 1, &iv)) return b->rc;
    if (strcmp(o->zName, "index_exact_words") == 0 && opt_int(b, o, 0, 1, &iv)) return b->rc;
    if (strcmp(o->zName, "index_sp") == 0 && opt_int(b, o, 0, 1, &iv)) return b->rc;
    if (strcmp(o->zName, "html_strip") == 0 && opt_int(b, o, 0, 1, &iv)) return b->rc;
    if (strcmp(o->zName, "remove_diacritics") == 0 && opt_int(b, o, 0, 1, &iv)) return b->rc;
    if (strcmp(o->zName, "phrase_boundary_step") == 0 && opt_int(b, o, 0, ANALYZER_MAX_PHRASE_STEP, &iv)) return b->rc;
    if (strcmp(o->zName, "ignore_chars") == 0 || strcmp(o->zName, "phrase_boundary") == 0) {
        Charset cs;
        LpError e;
        lp_err_clear(&e);
        int rc = charset_parse(z, o->zName, &cs, &e);
        charset_free(&cs);
        if (rc == LP_NOMEM) return bind_oom(b);
        if (rc != LP_OK) return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos, e.zMsg);
    }
    int bTable = strcmp(o->zName, "charset_table") == 0 || strcmp(o->zName, "ngram_chars") == 0;
    int bBlend = strcmp(o->zName, "blend_chars") == 0;
    if (bTable || bBlend) {
        CharMap m;
        LpError e;
        lp_err_clear(&e);
        int rc = charmap_parse(z, o->zName, bTable, &m, &e);
        charmap_free(&m);
        if (rc == LP_NOMEM) return bind_oom(b);
        if (rc != LP_OK) return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos, e.zMsg);
    }
    if (strcmp(o->zName, "blend_mode") == 0) {
        /* checked by the analyzer that reads it */
        AnalyzerConfig cfg = {0};
        cfg.zBlendMode = z;
        Analyzer *an = NULL;
        LpError e;
        lp_err_clear(&e);
        int rc = analyzer_new(&cfg, &an, &e);
        analyzer_free(an);
        if (rc == LP_NOMEM) return bind_oom(b);
        if (rc != LP_OK) return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos, e.zMsg);
    }
    if (strcmp(o->zName, "regexp_filter") == 0) {
        RegexpFilter *f = NULL;
        LpError e;
        lp_err_clear(&e);
        int rc = regexp_filter_new(z, &f, &e);
        regexp_filter_free(f);
        if (rc == LP_NOMEM) return bind_oom(b);
        if (rc != LP_OK) return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos, e.zMsg);
    }
    if (strcmp(o->zName, "expand_keywords") == 0 && fts_expand_from_name(z) < 0) {
        return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos, EXPAND_KEYWORDS_EXPECTS);
    }
    /* Two Manticore options that name what loupe always does */
    if (strcmp(o->zName, "dict") == 0 && strcasecmp(z, "keywords") != 0) {
        return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos,
                            "dict must be 'keywords': loupe's dictionary keeps the words themselves, so "
                            "prefixes and wildcards expand when a query runs (Manticore's dict='keywords')");
    }
    if (strcmp(o->zName, "index_field_lengths") == 0) {
        if (opt_int(b, o, 0, 1, &iv)) return b->rc;
        if (iv == 0) {
            return bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos,
                                "index_field_lengths must be 1: loupe always keeps each field's length, "
                                "which its BM25F ranking reads");
        }
    }
    if (strcmp(o->zName, "type") == 0 && strcasecmp(z, "rt") != 0) {
        return bind_fail_at(b, o->pValue->pos, "type must be 'rt'");
    }
    if (strcmp(o->zName, "rt_mem_limit") == 0) {
        char *end;
        long long v = strtoll(z, &end, 10);
        if (v <= 0 || (*end && strchr("kKmMgG", *end) == NULL) || (*end && end[1])) {
            return bind_fail_at(b, o->pValue->pos,
                                "rt_mem_limit expects a size such as '128M' or '1G'");
        }
    }
    return LP_OK;
}

/* Every name in a vector column's from='a,b' must be a TEXT or STRING
** column of the table ('' means all text fields). The model itself is
** loaded and checked when the table is created (table_new_ex). */
static int check_embedding_sources(Binder *b, const Schema *sc) {
    int *aSrc = malloc(sizeof(int) * (size_t)(sc->nCol + 1));
    if (!aSrc) return bind_oom(b);
    for (int i = 0; i < sc->nCol; i++) {
        if (sc->aCol[i].type != COL_VECTOR || !sc->aCol[i].vec.zModel) continue;
        char zBad[128];
        if (schema_embed_sources(sc, i, aSrc, zBad, sizeof(zBad)) < 0) {
            free(aSrc);
            return bind_fail(b, ER_BAD_FIELD, LP_BADINPUT,
                             "column '%s': from names '%s', which is not a text or string "
                             "column of this table",
                             sc->aCol[i].zName, zBad);
        }
    }
    free(aSrc);
    return LP_OK;
}

/* Sets option zName of sc to zValue, replacing its value or appending it
** (sc has room for it). LP_OK or LP_NOMEM. */
static int schema_set_option(Schema *sc, const char *zName, const char *zValue) {
    char *zV = strdup(zValue);
    if (!zV) return LP_NOMEM;
    for (int i = 0; i < sc->nOpt; i++) {
        if (strcmp(sc->aOpt[i].zName, zName) == 0) {
            free(sc->aOpt[i].zValue);
            sc->aOpt[i].zValue = zV;
            return LP_OK;
        }
    }
    TableOpt *to = &sc->aOpt[sc->nOpt];
    if (!(to->zName = strdup(zName))) {
        free(zV);
        return LP_NOMEM;
    }
    to->zValue = zV;
    sc->nOpt++;
    return LP_OK;
}

/* As Manticore: a stemmed table with prefixes or infixes configured
** (min_prefix_len or min_infix_len above 0) indexes exact forms too, so
** that its prefixes and wildcards can match the words as written
** ('runn*' finds "running"; no stem starts with "runn"). Sets the option
** in sc (which has room for one more) where the statement left it off or
** at '0': 1 when it did, 0 when nothing changed, -1 out of memory. */
static int force_exact_words(Schema *sc) {
    const char *zMorph = schema_option(sc, "morphology");
    const char *zPre = schema_option(sc, "min_prefix_len");
    const char *zInf = schema_option(sc, "min_infix_len");
    const char *zExact = schema_option(sc, "index_exact_words");
    if (!zMorph || !zMorph[0] || strcasecmp(zMorph, "none") == 0) return 0;
    if ((!zPre || atoi(zPre) == 0) && (!zInf || atoi(zInf) == 0)) return 0;
    if (zExact && atoi(zExact) == 1) return 0;
    return schema_set_option(sc, "index_exact_words", "1") == LP_OK ? 1 : -1;
}

/* The rules the options zOption (files: "wordforms", "exceptions" or
** "stopwords") and zOption_list name, in the statement's order (a later
** rule for the same source wins), kept in sc as one zOption_list (sc has
** room for it). stopwords also names languages: its codes ('en, de') stay
** in the option stopwords, only its paths (those starting with '/') are
** files. */
static int create_rules(Binder *b, const SqlMapItem *aOpt, int nOpt, Schema *sc, const char *zOption) {
    AnalyzerConfig full;
    table_analyzer_config(sc, &full);
    AnalyzerConfig sp = analyzer_split_config(&full);
    int bCodes = strcmp(zOption, "stopwords") == 0;
    char zList[32];
    snprintf(zList, sizeof(zList), "%s_list", zOption);
    StrBuf rules = {0}, codes = {0};
    int bAny = 0;
    for (int i = 0; i < nOpt && b->rc == LP_OK; i++) {
        const SqlMapItem *o = &aOpt[i];
        int bFiles = strcmp(o->zName, zOption) == 0;
        if (!bFiles && strcmp(o->zName, zList) != 0) continue;
        const char *z = opt_text(b, o);
        if (!z) break;
        StrBuf paths = {0};
        if (bFiles && bCodes) {
            for (const char *p = z; *p;) {
                while (*p == ',' || *p == ' ' || *p == '\t') p++;
                const char *q = p;
                while (*q && *q != ',' && *q != ' ' && *q != '\t') q++;
                if (q == p) break;
                StrBuf *to = *p == '/' ? &paths : &codes;
                if (to->n) strbuf_appendz(to, ", ");
                strbuf_append(to, p, (size_t)(q - p));
                p = q;
            }
            z = paths.z;
        }
        LpError e;
        lp_err_clear(&e);
        int rc = LP_OK;
        if (z) {
            rc = bFiles ? sqlx_rules_files(zOption, z, &sp, &rules, &e) : sqlx_rules_list(zOption, z, &sp, &rules, &e);
            bAny = 1;
        }
        int bOom = rc == LP_NOMEM || paths.oom || codes.oom;
        strbuf_free(&paths);
        if (bOom) {
            bind_oom(b);
        } else if (rc != LP_OK) {
            bind_fail_at(b, o->pValue ? o->pValue->pos : o->pos, e.zMsg);
        }
    }
    if (b->rc == LP_OK && codes.n && schema_set_option(sc, zOption, codes.z)) bind_oom(b);
    if (b->rc == LP_OK && bAny && schema_set_option(sc, zList, rules.z ? rules.z : "")) bind_oom(b);
    strbuf_free(&codes);
    strbuf_free(&rules);
    return b->rc;
}

/* Options read by create_rules, not stored as given. */
static int is_rules_option(const char *z) {
    return strcmp(z, "wordforms") == 0 || strcmp(z, "wordforms_list") == 0 || strcmp(z, "exceptions") == 0 ||
           strcmp(z, "exceptions_list") == 0 || strcmp(z, "stopwords") == 0 || strcmp(z, "stopwords_list") == 0;
}

/* The warning of a table whose index_exact_words force_exact_words set. */
static void warn_forced_exact(SqlSession *s) {
    sqlx_warn(s, ER_UNKNOWN_ERROR, "morphology and min_prefix_len or min_infix_len are set: "
              "forcing index_exact_words=1 (prefixes and wildcards match words as written)");
}

/* Checks every profile of sc's rank_profile option against its indexed
** text fields. */
static int check_profiles(Binder *b, const Schema *sc) {
    const char *zProfiles = schema_option(sc, "rank_profile");
    if (!zProfiles) return LP_OK;
    const char *azFts[FTS_MAX_FIELDS];
    int nFts = 0;
    for (int i = 0; i < sc->nCol && nFts < FTS_MAX_FIELDS; i++) {
        if (schema_col_is_field(&sc->aCol[i])) {
            azFts[nFts++] = sc->aCol[i].zName;
        }
    }
    return apply_profile(b, zProfiles, NULL, nFts, azFts, NULL);
}

void sqlx_create_table(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const CreateTableStmt *ct = &st->u.create;
    LpError err;
    lp_err_clear(&err);
    Binder b = {s, &s->stmt, st, NULL, ct->zTable, &err, LP_OK, 0, 0, NULL, NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL};
    Schema *sc = calloc(1, sizeof(Schema));
    if (!sc) goto oom;
    sc->aCol = calloc((size_t)(ct->nCol ? ct->nCol : 1), sizeof(ColumnSchema));
    /* + index_exact_words, remove_diacritics, and room for the stored
    ** lists: wordforms_list, exceptions_list and stopwords_list may each
    ** come from options that are not stored themselves, and stopwords
    ** from its paths and codes both */
    sc->aOpt = calloc((size_t)ct->nOpt + 5, sizeof(TableOpt));
    if (!sc->aCol || !sc->aOpt) goto oom;
    if (catalog_check_name(ct->zTable, &err)) {
        err.detail = ER_PARSE;
        goto fail;
    }
    for (int i = 0; i < ct->nCol; i++) {
        const ColumnDef *d = &ct->aCol[i];
        if (strcmp(d->zName, "id") == 0) {
            for (int j = 0; j < i; j++) {
                if (strcmp(ct->aCol[j].zName, "id") == 0) {
                    bind_fail(&b, ER_DUP_FIELDNAME, LP_BADINPUT, "duplicate column name 'id'");
                    goto fail;
                }
            }
            if (strcmp(d->zType, "bigint") != 0 || d->nFlag || d->nOpt) {
                bind_fail_at(&b, d->typePos, "column 'id' is the document id: it must be declared as plain 'id bigint'");
                goto fail;
            }
            continue;
        }
        for (int j = 0; j < sc->nCol; j++) {
            if (strcmp(sc->aCol[j].zName, d->zName) == 0) {
                bind_fail(&b, ER_DUP_FIELDNAME, LP_BADINPUT, "duplicate column name '%s'",
                          d->zName);
                goto fail;
            }
        }
        ColumnSchema *c = &sc->aCol[sc->nCol];
        if (!(c->zName = strdup(d->zName))) goto oom;
        sc->nCol++;
        if (build_column(&b, d, c)) goto fail;
    }
    if (check_embedding_sources(&b, sc)) goto fail;
    for (int i = 0; i < ct->nOpt; i++) {
        const SqlMapItem *o = &ct->aOpt[i];
        const char *z = opt_text(&b, o);
        if (!z || check_table_option(&b, o, z)) goto fail;
        /* word forms and exceptions: read below, once every option is known */
        if (is_rules_option(o->zName)) continue;
        for (int j = 0; j < sc->nOpt; j++) {
            if (strcmp(sc->aOpt[j].zName, o->zName) == 0) {
                bind_fail_at(&b, o->pos, "table option given twice");
                goto fail;
            }
        }
        TableOpt *to = &sc->aOpt[sc->nOpt];
        to->zName = strdup(o->zName);
        to->zValue = strdup(z);
        sc->nOpt++;
        if (!to->zName || !to->zValue) goto oom;
    }
    int bForcedExact = force_exact_words(sc);
    if (bForcedExact < 0) goto oom;
    /* A new table folds accents unless told not to, as Manticore's default
    ** charset_table and FTS5's tokenizer do. The option is stored, so a
    ** table created before it existed (no option: no folding) keeps
    ** analysing as it did. */
    if (!schema_option(sc, "remove_diacritics") && schema_set_option(sc, "remove_diacritics", "1")) goto oom;
    if (create_rules(&b, ct->aOpt, ct->nOpt, sc, "wordforms") || create_rules(&b, ct->aOpt, ct->nOpt, sc, "exceptions") ||
        create_rules(&b, ct->aOpt, ct->nOpt, sc, "stopwords")) {
        goto fail;
    }
    if (check_profiles(&b, sc)) goto fail;
    int bExisted = 0;
    int rc = catalog_create(s->e->pCatalog, ct->zTable, sc, ct->bIfNotExists, &bExisted, &err);
    sc = NULL; /* the catalog owns it now, or freed it */
    if (rc) {
        sqlx_report(r, &err, rc == LP_EXISTS     ? ER_TABLE_EXISTS
                             : rc == LP_BADINPUT ? ER_PARSE
                             : rc == LP_NOMEM    ? ER_OUTOFMEMORY
                                                 : ER_UNKNOWN_ERROR);
        return;
    }
    if (bExisted) {
        sqlx_warn(s, ER_TABLE_EXISTS, "table '%s' already exists", ct->zTable);
    } else if (bForcedExact) {
        warn_forced_exact(s);
    }
    r->kind = SQLRES_OK;
    return;
oom:
    bind_oom(&b);
fail:
    schema_free(sc);
    sqlx_report(r, &err, ER_PARSE);
}

/* ------------------------------------------------------------------ */
/* ALTER TABLE                                                         */

/* A copy of s with column iDrop left out (-1: none) and, when pAdd is not
** NULL, *pAdd appended (its strings taken over). *paMap gets, for each
** column of the copy, the column of s it comes from (-1: the new one). */
static Schema *schema_reshape(const Schema *s, int iDrop, ColumnSchema *pAdd, int **paMap) {
    Schema *d = schema_dup(s);
    int *aMap = malloc(sizeof(int) * (size_t)(s->nCol + 1));
    ColumnSchema *aCol = d ? realloc(d->aCol, sizeof(ColumnSchema) * (size_t)(s->nCol + 1)) : NULL;
    if (!d || !aMap || !aCol) {
        schema_free(d);
        free(aMap);
        return NULL;
    }
    d->aCol = aCol;
    int n = 0;
    for (int i = 0; i < s->nCol; i++) {
        if (i == iDrop) {
            free(aCol[i].zName);
            free(aCol[i].vec.zModel);
            free(aCol[i].vec.zFrom);
            continue;
        }
        aCol[n] = aCol[i];
        aMap[n++] = i;
    }
    if (pAdd) {
        aCol[n] = *pAdd;
        memset(pAdd, 0, sizeof(*pAdd));
        aMap[n++] = -1;
    }
    d->nCol = n;
    *paMap = aMap;
    return d;
}

static void column_free(ColumnSchema *c) {
    free(c->zName);
    free(c->vec.zModel);
    free(c->vec.zFrom);
    memset(c, 0, sizeof(*c));
}

/* Removes option zName from sc, if it has it. */
static void schema_unset_option(Schema *sc, const char *zName) {
    for (int i = 0; i < sc->nOpt; i++) {
        if (strcmp(sc->aOpt[i].zName, zName) != 0) continue;
        free(sc->aOpt[i].zName);
        free(sc->aOpt[i].zValue);
        memmove(&sc->aOpt[i], &sc->aOpt[i + 1], sizeof(TableOpt) * (size_t)(sc->nOpt - i - 1));
        sc->nOpt--;
        return;
    }
}

/* ALTER TABLE t name = 'value' ...: the table's options as CREATE TABLE
** takes them, each replacing the table's; rules given as files or lists
** (wordforms, exceptions, stopwords) replace all the table had of their
** kind. The table is then altered as for a column change: a new version,
** its rows indexed again where the analysis changed. */
static void alter_options(SqlSession *s, const SqlStmt *st, SqlResult *r, Table *t) {
    const AlterTableStmt *at = &st->u.alter;
    LpError err;
    lp_err_clear(&err);
    Binder b = {s, &s->stmt, st, NULL, at->zTable, &err, LP_OK, 0, 0, NULL, NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL};
    static const char *const azKind[] = {"wordforms", "exceptions", "stopwords"};
    int abKind[3] = {0, 0, 0};
    int *aMap = NULL;
    Schema *sn = schema_dup(table_schema(t));
    /* room for every option given, and for the ones they bring (as
    ** sqlx_create_table counts) */
    TableOpt *aOpt = sn ? realloc(sn->aOpt, sizeof(TableOpt) * (size_t)(sn->nOpt + at->nOpt + 5)) : NULL;
    if (!aOpt) goto oom;
    sn->aOpt = aOpt;
    if (!(aMap = malloc(sizeof(int) * (size_t)(sn->nCol + 1)))) goto oom;
    for (int j = 0; j < sn->nCol; j++) aMap[j] = j;
    for (int i = 0; i < at->nOpt; i++) {
        const SqlMapItem *o = &at->aOpt[i];
        const char *z = opt_text(&b, o);
        if (!z || check_table_option(&b, o, z)) goto fail;
        for (int k = 0; k < i; k++) {
            if (strcmp(at->aOpt[k].zName, o->zName) == 0) {
                bind_fail_at(&b, o->pos, "table option given twice");
                goto fail;
            }
        }
        if (is_rules_option(o->zName)) {
            for (int k = 0; k < 3; k++) abKind[k] |= strncmp(o->zName, azKind[k], strlen(azKind[k])) == 0;
            continue;
        }
        if (schema_set_option(sn, o->zName, z)) goto oom;
    }
    char zList[32];
    for (int k = 0; k < 3; k++) {
        if (!abKind[k]) continue;
        snprintf(zList, sizeof(zList), "%s_list", azKind[k]);
        schema_unset_option(sn, azKind[k]);
        schema_unset_option(sn, zList);
        if (create_rules(&b, at->aOpt, at->nOpt, sn, azKind[k])) goto fail;
    }
    int bForcedExact = force_exact_words(sn);
    if (bForcedExact < 0) goto oom;
    if (check_profiles(&b, sn)) goto fail;
    table_unref(t);
    int rc = catalog_alter(s->e->pCatalog, at->zTable, sn, aMap, &err);
    free(aMap);
    if (rc != LP_OK) {
        sqlx_report(r, &err, rc == LP_BADINPUT ? ER_PARSE : rc == LP_NOMEM ? ER_OUTOFMEMORY : ER_UNKNOWN_ERROR);
        return;
    }
    if (bForcedExact) warn_forced_exact(s);
    r->kind = SQLRES_OK;
    return;
oom:
    bind_oom(&b);
fail:
    table_unref(t);
    schema_free(sn);
    free(aMap);
    sqlx_report(r, &err, ER_PARSE);
}

void sqlx_alter_table(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const AlterTableStmt *at = &st->u.alter;
    Table *t = sqlx_table(s, at->zTable, r);
    if (!t) return;
    if (at->kind == ALTER_SET_OPTIONS) {
        alter_options(s, st, r, t);
        return;
    }
    LpError err;
    lp_err_clear(&err);
    Binder b = {s, &s->stmt, st, NULL, at->zTable, &err, LP_OK, 0, 0, NULL, NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL};
    const Schema *so = table_schema(t);
    ColumnSchema col = {0};
    Schema *sn = NULL;
    int *aMap = NULL;
    int rc = LP_OK, iCol = SCHEMA_NO_COL;
    const char *zCol = at->kind == ALTER_ADD_COLUMN || at->kind == ALTER_MODIFY_COLUMN ? at->col.zName
                                                                                      : at->zColumn;
    int colPos = at->kind == ALTER_ADD_COLUMN || at->kind == ALTER_MODIFY_COLUMN ? at->col.pos : at->colPos;
    iCol = schema_find(so, zCol);
    if (at->kind != ALTER_ADD_COLUMN && iCol == SCHEMA_NO_COL) {
        bind_fail(&b, ER_BAD_FIELD, LP_NOTFOUND, "unknown column '%s' in table '%s'", zCol, at->zTable);
        goto fail;
    }
    if (iCol == SCHEMA_ID_COL) {
        bind_fail_at(&b, colPos, "the id column cannot be changed");
        goto fail;
    }
    switch (at->kind) {
    case ALTER_SET_OPTIONS: /* alter_options, above: not reached */
        bind_fail(&b, ER_UNKNOWN_ERROR, LP_INTERNAL, "ALTER TABLE options reached the column path");
        goto fail;
    case ALTER_REBUILD_EMBEDDINGS:
        if (so->aCol[iCol].type != COL_VECTOR || !so->aCol[iCol].vec.zModel) {
            bind_fail_at(&b, colPos, "REBUILD EMBEDDINGS needs a float_vector column with model_name");
            goto fail;
        }
        table_unref(t);
        if ((rc = catalog_rebuild_embeddings(s->e->pCatalog, at->zTable, zCol, &err)) != LP_OK) {
            sqlx_report(r, &err, rc == LP_BUSY ? ER_UNKNOWN_ERROR : ER_PARSE);
            return;
        }
        r->kind = SQLRES_OK;
        return;
    case ALTER_ADD_COLUMN:
        if (iCol != SCHEMA_NO_COL) {
            bind_fail(&b, ER_DUP_FIELDNAME, LP_BADINPUT, "duplicate column name '%s'", zCol);
            goto fail;
        }
        if (!(col.zName = strdup(zCol))) goto oom;
        if (build_column(&b, &at->col, &col)) goto fail;
        if (!(sn = schema_reshape(so, -1, &col, &aMap))) goto oom;
        break;
    case ALTER_DROP_COLUMN:
        if (so->nCol == 1) {
            bind_fail_at(&b, colPos, "a table needs at least one column besides id");
            goto fail;
        }
        if (!(sn = schema_reshape(so, iCol, NULL, &aMap))) goto oom;
        break;
    case ALTER_MODIFY_COLUMN: {
        if (!(col.zName = strdup(zCol))) goto oom;
        if (build_column(&b, &at->col, &col)) goto fail;
        const VectorOpts *vo = &so->aCol[iCol].vec;
        int bModelChange = so->aCol[iCol].type == COL_VECTOR && col.type == COL_VECTOR &&
                           ((vo->zModel == NULL) != (col.vec.zModel == NULL) ||
                            (vo->zModel && strcmp(vo->zModel, col.vec.zModel) != 0));
        if (bModelChange) {
            bind_fail(&b, ER_NOT_SUPPORTED, LP_UNSUPPORTED,
                      "the model of column '%s' cannot be changed in place (its vectors come from "
                      "the old model): ALTER TABLE %s ADD COLUMN %s_new FLOAT_VECTOR ... MODEL_NAME="
                      "'...' FROM='...', then ALTER TABLE %s REBUILD EMBEDDINGS %s_new, and when it "
                      "is done ALTER TABLE %s DROP COLUMN %s",
                      zCol, at->zTable, zCol, at->zTable, zCol, at->zTable, zCol);
        } else {
            bind_fail(&b, ER_NOT_SUPPORTED, LP_UNSUPPORTED,
                      "ALTER TABLE ... MODIFY COLUMN is not supported: add a new column, copy or "
                      "rebuild it, then drop the old one");
        }
        goto fail;
    }
    }
    if (check_embedding_sources(&b, sn)) goto fail;
    table_unref(t);
    t = NULL;
    rc = catalog_alter(s->e->pCatalog, at->zTable, sn, aMap, &err);
    sn = NULL;
    free(aMap);
    column_free(&col);
    if (rc != LP_OK) {
        sqlx_report(r, &err, rc == LP_BADINPUT ? ER_PARSE : rc == LP_NOMEM ? ER_OUTOFMEMORY
                                                                           : ER_UNKNOWN_ERROR);
        return;
    }
    r->kind = SQLRES_OK;
    return;
oom:
    bind_oom(&b);
fail:
    if (t) table_unref(t);
    schema_free(sn);
    free(aMap);
    column_free(&col);
    sqlx_report(r, &err, ER_PARSE);
}
