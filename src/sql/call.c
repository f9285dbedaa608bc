/*
** call.c — CALL KEYWORDS and CALL SNIPPETS, Manticore's procedures for
** looking at a table's text analysis and highlighting a text outside the
** table.
**
**   CALL KEYWORDS(text, table [, 1 | 1 AS stats])
**     One row per word of text, in order (stop words left out):
**     qpos (1-based word position), tokenized (the word normalised and
**     case folded), normalized (the term the index keeps: stemmed); with
**     stats, docs (documents holding the term in some full-text field)
**     and hits (its occurrences), counted over the table's index
**     (deleted documents count until a merge drops them).
**   CALL SNIPPETS(data, table, query [, value AS option ...])
**     data is a string or a parenthesised list of strings: one row per
**     string, column `snippet`, the text highlighted for the query as
**     SNIPPET() does (every field's words, field scopes ignored), with the
**     options HIGHLIGHT() takes (before_match, limit, around, ...).
** The arguments are literals. Every error names the argument.
*/
#include <stdio.h>
#include <string.h>

#include "fts/highlight.h"
#include "fts/match.h"
#include "fts/search.h"
#include "query/ftsfn.h"
#include "sql/parser.h"
#include "sql/sql_int.h"
#include "util/strbuf.h"

/* A positioned error about the statement (1064, as a parse error). */
static void call_error(SqlResult *r, const SqlStmt *st, int pos, const char *zWhat) {
    LpError err;
    lp_err_clear(&err);
    sql_syntax_error(&err, st->zSql, st->nSql, pos, "%s", zWhat);
    sqlx_report(r, &err, ER_PARSE);
}

/* Argument i as a string literal into *pz and *pn; 0 with r set if it is not. */
static int arg_str(const SqlStmt *st, int i, const char *zWhat, const char **pz, size_t *pn,
                   SqlResult *r) {
    const Expr *e = st->u.call.aArg[i];
    if (e->kind != EXPR_STRING) {
        char zMsg[128];
        snprintf(zMsg, sizeof(zMsg), "expected %s as a string", zWhat);
        call_error(r, st, e->pos, zMsg);
        return 0;
    }
    *pz = e->u.s.z;
    *pn = e->u.s.n;
    return 1;
}

/* The table named by argument i, or NULL with r set. */
static Table *arg_table(SqlSession *s, const SqlStmt *st, int i, SqlResult *r) {
    const char *z;
    size_t n;
    if (!arg_str(st, i, "the table name", &z, &n, r)) return NULL;
    char zName[128];
    if (n >= sizeof(zName) || memchr(z, 0, n)) {
        call_error(r, st, st->u.call.aArg[i]->pos, "expected a table name");
        return NULL;
    }
    for (size_t k = 0; k < n; k++) zName[k] = (char)(z[k] >= 'A' && z[k] <= 'Z' ? z[k] + 32 : z[k]);
    zName[n] = 0;
    return sqlx_table(s, zName, r);
}

/* ------------------------------------------------------------------ */
/* CALL KEYWORDS                                                       */

static void call_keywords(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const CallStmt *c = &st->u.call;
    if (c->nArg < 2 || c->nArg > 3) {
        call_error(r, st, c->namePos, "CALL KEYWORDS takes (text, table [, 1 AS stats])");
        return;
    }
    const char *zText;
    size_t nText;
    if (!arg_str(st, 0, "the text", &zText, &nText, r)) return;
    int bStats = 0;
    if (c->nArg == 3) {
        const Expr *e = c->aArg[2];
        if (c->azAs[2] && strcmp(c->azAs[2], "stats") != 0) {
            call_error(r, st, c->aAsPos[2], "unknown CALL KEYWORDS option: expected stats");
            return;
        }
        if (e->kind != EXPR_INT || (e->u.i != 0 && e->u.i != 1)) {
            call_error(r, st, e->pos, "expected 0 or 1 (stats)");
            return;
        }
        bStats = (int)e->u.i;
    }
    for (int i = 0; i < 2; i++) {
        if (c->azAs[i]) {
            call_error(r, st, c->aAsPos[i], "CALL KEYWORDS takes AS only after its third argument");
            return;
        }
    }
    Table *t = arg_table(s, st, 1, r);
    if (!t) return;
    const Analyzer *an = table_analyzer(t);
    TokenList raw = {{0}, {0}}, stem = {{0}, {0}};
    LpError err;
    lp_err_clear(&err);
    TableSnap *snap = NULL;
    int rc = analyzer_collect(an, zText, nText, 0, &raw, &err);
    if (rc == LP_OK) rc = analyzer_collect(an, zText, nText, 1, &stem, &err);
    if (rc == LP_NOMEM) goto oom;
    if (rc != LP_OK) {
        sqlx_error(r, ER_PARSE, "CALL KEYWORDS: the text: %.400s", err.zMsg);
        goto done;
    }
    static const char *const azCol[] = {"qpos", "tokenized", "normalized", "docs", "hits"};
    int nCol = bStats ? 5 : 3;
    if (sql_result_columns(r, nCol)) goto oom;
    for (int i = 0; i < nCol; i++) {
        if (sql_result_column(r, i, azCol[i], SQLCOL_STRING, 0)) goto oom;
    }
    FtsSource *src = NULL;
    if (bStats) {
        snap = table_snapshot(t);
        if (!snap) goto oom;
        src = table_snap_fts(snap);
    }
    /* Pair each word with the term of the same word (none: a stop word).
    ** Both runs split the text alike, so a word starts at the same byte in
    ** both; its position is the query side's, where a '*' standing alone
    ** takes one ("a * b": 1 and 3). */
    size_t k = 0;
    for (size_t i = 0; i < raw.a.n; i++) {
        const Token *w = &raw.a.a[i];
        while (k < stem.a.n && stem.a.a[k].iStart < w->iStart) k++;
        if (k == stem.a.n || stem.a.a[k].iStart != w->iStart) continue;
        const Token *x = &stem.a.a[k];
        SqlCell *row = sql_result_row(r);
        if (!row || sql_result_cell_int(r, &row[0], (int64_t)x->iPos + 1) ||
            sql_result_cell_str(r, &row[1], w->z) ||
            sql_result_cell_str(r, &row[2], x->z)) {
            goto oom;
        }
        if (bStats) {
            uint64_t docs = 0, hits = 0;
            if (src && (rc = fts_term_stats(src, NULL, x->z, x->n, &docs, &hits, &err))) {
                sqlx_report(r, &err, ER_UNKNOWN_ERROR);
                goto done;
            }
            if (sql_result_cell_int(r, &row[3], (int64_t)docs) ||
                sql_result_cell_int(r, &row[4], (int64_t)hits)) {
                goto oom;
            }
        }
    }
    goto done;
oom:
    sqlx_error(r, ER_OUTOFMEMORY, "out of memory");
done:
    if (snap) table_snapshot_release(snap);
    token_list_free(&raw);
    token_list_free(&stem);
    table_unref(t);
}

/* ------------------------------------------------------------------ */
/* CALL SNIPPETS                                                       */

static void call_snippets(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const CallStmt *c = &st->u.call;
    if (c->nArg < 3) {
        call_error(r, st, c->namePos, "CALL SNIPPETS takes (data, table, query [, value AS option ...])");
        return;
    }
    for (int i = 0; i < 3; i++) {
        if (c->azAs[i]) {
            call_error(r, st, c->aAsPos[i], "CALL SNIPPETS takes AS only after its third argument");
            return;
        }
    }
    /* the documents: a string, or a list of strings */
    const Expr *pData = c->aArg[0];
    const Expr *const *aDoc = (const Expr *const *)&c->aArg[0];
    int nDoc = 1;
    if (pData->kind == EXPR_LIST) {
        aDoc = (const Expr *const *)pData->u.list.aItem;
        nDoc = pData->u.list.nItem;
    }
    for (int i = 0; i < nDoc; i++) {
        if (aDoc[i]->kind != EXPR_STRING) {
            call_error(r, st, aDoc[i]->pos, "expected the data as a string or a list of strings");
            return;
        }
    }
    const char *zQuery;
    size_t nQuery;
    if (!arg_str(st, 2, "the query", &zQuery, &nQuery, r)) return;
    Table *t = arg_table(s, st, 1, r);
    if (!t) return;
    Arena *a = &s->stmt;
    QHighlight h;
    memset(&h, 0, sizeof(h));
    fts_hl_options_init(&h.opt);
    h.zFieldSep = " | ";
    for (int i = 3; i < c->nArg; i++) {
        const Expr *e = c->aArg[i];
        if (!c->azAs[i]) {
            call_error(r, st, e->pos, "expected an option as value AS name (e.g. '<em>' AS before_match)");
            goto done;
        }
        Value v;
        if (e->kind == EXPR_STRING) {
            v = value_str(e->u.s.z, (uint32_t)e->u.s.n);
        } else if (e->kind == EXPR_INT) {
            v = value_int(e->u.i);
        } else {
            call_error(r, st, e->pos, "expected a string or an integer");
            goto done;
        }
        char zWhy[256];
        int rc = qhl_option(&h, a, c->azAs[i], v, zWhy, sizeof(zWhy));
        if (rc == LP_NOMEM) goto oom;
        if (rc) {
            call_error(r, st, rc == LP_BADINPUT && strncmp(zWhy, "unknown", 7) == 0 ? c->aAsPos[i] : e->pos,
                       zWhy);
            goto done;
        }
    }
    const Analyzer *an = table_analyzer(t);
    LpError err;
    lp_err_clear(&err);
    FtsNode *root = NULL;
    FtsHlQuery *pHl = NULL;
    if (sqlx_match_parse(a, t, zQuery, nQuery, &root, &err) ||
        fts_hl_query_build(a, an, root, -1, sqlx_table_expand(table_schema(t)), &pHl, &err)) {
        sqlx_report(r, &err, ER_PARSE);
        goto done;
    }
    if (sql_result_columns(r, 1) || sql_result_column(r, 0, "snippet", SQLCOL_STRING, 0)) goto oom;
    StrBuf sb = {0};
    for (int i = 0; i < nDoc; i++) {
        strbuf_reset(&sb);
        int rc = fts_highlight(an, pHl, aDoc[i]->u.s.z, aDoc[i]->u.s.n, &h.opt, &sb, &err);
        if (rc == LP_OK && sb.oom) rc = LP_NOMEM;
        if (rc != LP_OK) {
            strbuf_free(&sb);
            if (rc == LP_NOMEM) goto oom;
            /* the offset is in that document: say which */
            sqlx_error(r, ER_BAD_VALUE, "document %d: %.400s", i + 1, err.zMsg);
            goto done;
        }
        SqlCell *row = sql_result_row(r);
        if (!row || sql_result_cell(r, &row[0], sb.z ? sb.z : "", sb.n)) {
            strbuf_free(&sb);
            goto oom;
        }
    }
    strbuf_free(&sb);
    goto done;
oom:
    sqlx_error(r, ER_OUTOFMEMORY, "out of memory");
done:
    table_unref(t);
}

void sqlx_call(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const CallStmt *c = &st->u.call;
    if (strcmp(c->zName, "keywords") == 0) {
        call_keywords(s, st, r);
    } else if (strcmp(c->zName, "snippets") == 0) {
        call_snippets(s, st, r);
    } else {
        char zMsg[160];
        snprintf(zMsg, sizeof(zMsg), "unknown procedure '%.64s': loupe has CALL KEYWORDS and CALL SNIPPETS",
                 c->zName);
        call_error(r, st, c->namePos, zMsg);
    }
}
