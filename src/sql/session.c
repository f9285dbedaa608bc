/*
** session.c — the SQL engine, client sessions, statement dispatch and
** transactions (see session.h for the contract).
**
** Transactions. A session with autocommit off, or after BEGIN, buffers its
** writes (already validated and coerced TableOps, values copied into the
** session's txn arena) instead of applying them. COMMIT hands the whole
** buffer to table_apply() as one batch, so it is applied all or nothing,
** exactly like a single statement. As in Manticore, one transaction writes
** to one table. A DDL statement commits the open transaction first, as in
** MySQL.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sql/parser.h"
#include "sql/sql_int.h"
#include "util/clock.h"

#ifndef LOUPE_VERSION
#define LOUPE_VERSION "0.0.0"
#endif

/* ------------------------------------------------------------------ */
/* Engine                                                              */

SqlEngine *sql_engine_new(const SqlEngineConfig *cfg, LpError *err) {
    SqlEngine *e = calloc(1, sizeof(*e));
    if (!e) {
        lp_err_set(err, LP_NOMEM, "out of memory");
        return NULL;
    }
    e->zVersion = strdup(cfg->zVersion ? cfg->zVersion : "5.7.99-loupe-" LOUPE_VERSION);
    e->nMaxPacket = cfg->nMaxPacket ? cfg->nMaxPacket : 16u << 20;
    pthread_mutex_init(&e->mu, NULL);
    e->stats.tStart = lp_unix_now();
    if (!e->zVersion || (cfg->nWorkThreads >= 0 && !(e->pPool = tpool_new(cfg->nWorkThreads, err))) ||
        !(e->pCatalog = catalog_new(&(CatalogConfig){cfg->zDataDir, (WalSync)cfg->walSync, e->pPool,
                                                     cfg->embed, cfg->nEmbedInline,
                                                     cfg->memLimit, cfg->walFileBytes}, err))) {
        if (!e->zVersion) lp_err_set(err, LP_NOMEM, "out of memory");
        sql_engine_free(e);
        return NULL;
    }
    return e;
}

void sql_engine_free(SqlEngine *e) {
    if (!e) return;
    catalog_free(e->pCatalog); /* the tables first: they use the pool */
    tpool_free(e->pPool);
    sqlx_varlist_free(&e->globals);
    pthread_mutex_destroy(&e->mu);
    free(e->zVersion);
    free(e);
}

SqlStats *sql_engine_stats(SqlEngine *e) {
    return &e->stats;
}

/* ------------------------------------------------------------------ */
/* Sessions                                                            */

SqlSession *sql_session_new(SqlEngine *e, uint32_t connId, const char *zUser) {
    SqlSession *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->e = e;
    s->connId = connId;
    s->bAutocommit = 1;
    s->zDb = strdup("loupe");
    s->zUser = zUser ? strdup(zUser) : NULL;
    if (!s->zDb || (zUser && !s->zUser)) {
        sql_session_free(s);
        return NULL;
    }
    arena_init(&s->stmt, 16384);
    arena_init(&s->txn, 16384);
    return s;
}

static void warnings_clear(SqlSession *s) {
    for (size_t i = 0; i < s->warnings.n; i++) free(s->warnings.a[i].zMsg);
    s->warnings.n = 0;
}

void sql_session_free(SqlSession *s) {
    if (!s) return;
    sqlx_rollback(s);
    VEC_FREE(&s->txnOps);
    arena_free(&s->txn);
    arena_free(&s->stmt);
    warnings_clear(s);
    VEC_FREE(&s->warnings);
    sqlx_meta_free(s);
    sqlx_varlist_free(&s->vars);
    free(s->zUser);
    free(s->zDb);
    free(s);
}

int sql_session_use(SqlSession *s, const char *zDb, size_t nDb, LpError *err) {
    char *z = strndup(zDb, nDb);
    if (!z) return lp_err_set(err, LP_NOMEM, "out of memory");
    free(s->zDb);
    s->zDb = z;
    return LP_OK;
}

int sql_session_status(const SqlSession *s) {
    int st = 0;
    if (s->bAutocommit) st |= SQL_STATUS_AUTOCOMMIT;
    if (sqlx_in_txn(s)) st |= SQL_STATUS_IN_TRANS;
    return st;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

void sqlx_error(SqlResult *r, int iErrno, const char *zFmt, ...) {
    char zMsg[LP_ERRMSG_MAX];
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(zMsg, sizeof(zMsg), zFmt, ap);
    va_end(ap);
    LpError err;
    lp_err_clear(&err);
    err.code = LP_BADINPUT;
    err.detail = iErrno;
    snprintf(err.zMsg, sizeof(err.zMsg), "%s", zMsg);
    sql_result_from_error(r, &err);
}

void sqlx_report(SqlResult *r, const LpError *err, int iErrnoDefault) {
    LpError e = *err;
    if (!e.detail) {
        switch (e.code) {
        case LP_NOMEM: e.detail = ER_OUTOFMEMORY; break;
        case LP_RANGE: e.detail = ER_OUT_OF_RANGE; break;
        default: e.detail = iErrnoDefault; break;
        }
    }
    if (e.code == LP_NOMEM && !e.zMsg[0]) snprintf(e.zMsg, sizeof(e.zMsg), "out of memory");
    sql_result_from_error(r, &e);
}

void sqlx_warn(SqlSession *s, int code, const char *zFmt, ...) {
    char zMsg[LP_ERRMSG_MAX];
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(zMsg, sizeof(zMsg), zFmt, ap);
    va_end(ap);
    SqlWarning w = {code, strdup(zMsg)};
    if (!w.zMsg || VEC_PUSH(&s->warnings, w)) free(w.zMsg); /* a lost warning is no error */
}

static int like_at(const char *p, const char *z) {
    for (; *p; p++) {
        if (*p == '%') {
            while (p[1] == '%') p++;
            if (!p[1]) return 1;
            for (const char *q = z; *q; q++) {
                if (like_at(p + 1, q)) return 1;
            }
            return 0;
        }
        if (!*z) return 0;
        if (*p == '\\' && (p[1] == '%' || p[1] == '_')) p++;
        else if (*p == '_') {
            z++;
            continue;
        }
        int a = (unsigned char)*p, b = (unsigned char)*z;
        if (a >= 'A' && a <= 'Z') a += 32;
        if (b >= 'A' && b <= 'Z') b += 32;
        if (a != b) return 0;
        z++;
    }
    return *z == 0;
}

int sqlx_like(const char *zPat, const char *z) {
    return like_at(zPat, z);
}

SqlColType sqlx_coltype(ColType t) {
    switch (t) {
    case COL_ID:
    case COL_BIGINT: return SQLCOL_BIGINT;
    case COL_INT: return SQLCOL_INT;
    case COL_FLOAT: return SQLCOL_FLOAT;
    case COL_BOOL: return SQLCOL_BOOL;
    case COL_TIMESTAMP: return SQLCOL_TIMESTAMP;
    case COL_JSON: return SQLCOL_JSON;
    case COL_VECTOR: return SQLCOL_VECTOR;
    case COL_MULTI:
    case COL_MULTI64: return SQLCOL_MULTI;
    default: return SQLCOL_STRING;
    }
}

/* ------------------------------------------------------------------ */
/* Transactions                                                        */

int sqlx_in_txn(const SqlSession *s) {
    return s->bExplicitTxn || s->pTxnTable != NULL;
}

void sqlx_rollback(SqlSession *s) {
    if (s->pTxnTable) table_unref(s->pTxnTable);
    s->pTxnTable = NULL;
    s->txnOps.n = 0;
    arena_reset(&s->txn);
    s->bExplicitTxn = 0;
}

void sql_session_defer_commits(SqlSession *s, int bOn) {
    s->bDeferCommit = bOn;
}

int sqlx_commit(SqlSession *s, LpError *err) {
    int rc = LP_OK;
    if (s->pTxnTable && s->txnOps.n) {
        /* The table may have been dropped (or dropped and re-created)
        ** since the transaction started: then there is nothing to write to. */
        Table *cur = catalog_get(s->e->pCatalog, table_name(s->pTxnTable));
        if (cur != s->pTxnTable) {
            rc = lp_err_set(err, LP_NOTFOUND,
                            "table '%s' was dropped during the transaction; nothing was written",
                            table_name(s->pTxnTable));
            err->detail = ER_NO_SUCH_TABLE;
        } else {
            TableApplyOut out;
            rc = table_apply(s->pTxnTable, s->txnOps.a, s->txnOps.n, &out, err);
            if (rc == LP_OK && out.iFirstAutoId) s->iLastInsertId = out.iFirstAutoId;
            if (rc == LP_EXISTS) err->detail = ER_DUP_ENTRY;
            if (rc != LP_OK) lp_err_prefix(err, "COMMIT failed, transaction rolled back");
        }
        if (cur) table_unref(cur);
    }
    sqlx_rollback(s); /* forget the buffer either way */
    return rc;
}

/* sql_int.h. */
int sqlx_copy_value(Arena *a, Value *v) {
    if (v->kind == VAL_STR) {
        char *z = arena_strndup(a, v->u.s.z, v->u.s.n);
        if (!z) return LP_NOMEM;
        v->u.s.z = z;
    } else if (v->kind == VAL_VEC) {
        float *af = arena_alloc(a, sizeof(float) * v->u.v.n);
        if (!af) return LP_NOMEM;
        memcpy(af, v->u.v.a, sizeof(float) * v->u.v.n);
        v->u.v.a = af;
    } else if (v->kind == VAL_MVA) {
        int64_t *ai = arena_alloc(a, sizeof(int64_t) * (v->u.m.n ? v->u.m.n : 1));
        if (!ai) return LP_NOMEM;
        if (v->u.m.n) memcpy(ai, v->u.m.a, sizeof(int64_t) * v->u.m.n);
        v->u.m.a = ai;
    }
    return LP_OK;
}

void sqlx_write(SqlSession *s, Table *t, const TableOp *aOp, size_t nOp, SqlResult *r,
                int bReportAutoId) {
    LpError err;
    lp_err_clear(&err);
    if (!s->bAutocommit || s->bExplicitTxn) {
        if (s->pTxnTable && s->pTxnTable != t) {
            sqlx_error(r, ER_UNKNOWN_ERROR,
                       "a transaction can write to one table only: this one writes to '%s'; "
                       "COMMIT or ROLLBACK first",
                       table_name(s->pTxnTable));
            return;
        }
        int nSchemaCol = table_schema(t)->nCol;
        size_t n0 = s->txnOps.n;
        for (size_t i = 0; i < nOp; i++) {
            TableOp op = aOp[i];
            Value *aVal = NULL;
            uint8_t *aSet = NULL;
            if (op.aVal) {
                aVal = arena_alloc(&s->txn, sizeof(Value) * (size_t)(nSchemaCol ? nSchemaCol : 1));
                if (!aVal) goto oom;
                memcpy(aVal, op.aVal, sizeof(Value) * (size_t)nSchemaCol);
                for (int c = 0; c < nSchemaCol; c++) {
                    if (sqlx_copy_value(&s->txn, &aVal[c])) goto oom;
                }
            }
            if (op.aSet) {
                aSet = arena_alloc(&s->txn, (size_t)(nSchemaCol ? nSchemaCol : 1));
                if (!aSet) goto oom;
                memcpy(aSet, op.aSet, (size_t)nSchemaCol);
            }
            op.aVal = aVal;
            op.aSet = aSet;
            /* applied at COMMIT as read then: no compare-and-set */
            op.aWas = NULL;
            op.pbStale = NULL;
            if (VEC_PUSH(&s->txnOps, op)) goto oom;
        }
        if (!s->pTxnTable) {
            table_ref(t);
            s->pTxnTable = t;
        }
        r->kind = SQLRES_OK;
        r->nAffected = nOp; /* statements report what they buffered */
        return;
    oom:
        s->txnOps.n = n0; /* the statement adds nothing; the transaction stays */
        sqlx_error(r, ER_OUTOFMEMORY, "out of memory buffering the transaction");
        return;
    }
    TableApplyOut out;
    int rc = table_apply_ex(t, aOp, nOp, s->bDeferCommit ? TABLE_APPLY_DEFER_COMMIT : 0, &out, &err);
    if (rc == LP_OK && out.lsnWait) {
        table_ref(t);
        r->pCommitTable = t;
        r->commitLsn = out.lsnWait;
    }
    if (rc != LP_OK) {
        sqlx_report(r, &err, rc == LP_EXISTS        ? ER_DUP_ENTRY
                             : rc == LP_UNSUPPORTED ? ER_NOT_SUPPORTED
                             : rc == LP_NOMEM       ? ER_OUTOFMEMORY
                                                    : ER_UNKNOWN_ERROR);
        return;
    }
    r->kind = SQLRES_OK;
    r->nAffected = out.nAffected;
    if (bReportAutoId && out.iFirstAutoId) {
        r->iLastInsertId = (uint64_t)out.iFirstAutoId;
        s->iLastInsertId = out.iFirstAutoId;
    }
}

/* ------------------------------------------------------------------ */
/* Statements handled here                                             */

static void exec_set(SqlSession *s, const SetStmt *st, SqlResult *r) {
    LpError err;
    lp_err_clear(&err);
    for (int i = 0; i < st->nItem; i++) {
        const SetItem *it = &st->aItem[i];
        Value v = value_null();
        const Expr *x = it->pValue;
        if (x) {
            switch (x->kind) {
            case EXPR_INT: v = value_int(x->u.i); break;
            case EXPR_FLOAT: v = value_float(x->u.f); break;
            case EXPR_STRING: v = value_str(x->u.s.z, (uint32_t)x->u.s.n); break;
            case EXPR_COLUMN: v = value_str(x->u.zName, (uint32_t)strlen(x->u.zName)); break;
            case EXPR_NULL: break;
            case EXPR_SYSVAR:
            case EXPR_USERVAR:
                if (sqlx_var_get(s, x->u.var.zName, x->kind == EXPR_USERVAR ? 3 : x->u.var.scope,
                                 &s->stmt, &v) != LP_OK) {
                    sqlx_error(r, ER_UNKNOWN_SYSVAR, "unknown system variable '%s'",
                               x->u.var.zName);
                    return;
                }
                break;
            default:
                sqlx_error(r, ER_WRONG_VALUE_VAR,
                           "variable '%s' can only be set to a literal value", it->zName);
                return;
            }
        }
        if (sqlx_var_set(s, it->zName, it->scope, v, &err) != LP_OK) {
            sqlx_report(r, &err, ER_WRONG_VALUE_VAR);
            return;
        }
    }
    r->kind = SQLRES_OK;
}

static void exec_drop(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    LpError err;
    lp_err_clear(&err);
    int rc = catalog_drop(s->e->pCatalog, st->u.drop.zTable, st->u.drop.bIfExists, &err);
    if (rc) {
        sqlx_report(r, &err, rc == LP_NOTFOUND ? ER_BAD_TABLE : ER_UNKNOWN_ERROR);
        return;
    }
    r->kind = SQLRES_OK;
}

Table *sqlx_table(SqlSession *s, const char *zName, SqlResult *r) {
    Table *t = catalog_get(s->e->pCatalog, zName);
    if (t) return t;
    LpError err;
    lp_err_clear(&err);
    if (catalog_open_error(s->e->pCatalog, zName, &err) != LP_OK) {
        sqlx_error(r, ER_UNKNOWN_ERROR, "%s", err.zMsg);
    } else {
        sqlx_error(r, ER_NO_SUCH_TABLE, "table '%s' does not exist", zName);
    }
    return NULL;
}

static void exec_truncate(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    Table *t = sqlx_table(s, st->u.truncate.zTable, r);
    if (!t) return;
    LpError err;
    lp_err_clear(&err);
    int rc = table_truncate(t, &err);
    table_unref(t);
    if (rc != LP_OK) {
        sqlx_report(r, &err, ER_OUTOFMEMORY);
        return;
    }
    r->kind = SQLRES_OK;
}

/* FLUSH TABLE t: the RAM segment written out as a sealed segment. */
static void exec_flush(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    Table *t = sqlx_table(s, st->u.flush.zTable, r);
    if (!t) return;
    LpError err;
    lp_err_clear(&err);
    int rc = table_flush(t, &err);
    table_unref(t);
    if (rc != LP_OK) {
        sqlx_report(r, &err, ER_UNKNOWN_ERROR);
        return;
    }
    r->kind = SQLRES_OK;
}

/* OPTIMIZE TABLE t [OPTION cutoff=N, sync=1]: merges the table's segments
** down to cutoff (default 1); in the background unless sync=1, as
** Manticore does. */
static void exec_optimize(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const OptimizeStmt *o = &st->u.optimize;
    int nCutoff = 1, bSync = 0;
    for (int i = 0; i < o->nOption; i++) {
        const SqlMapItem *it = &o->aOption[i];
        int bCutoff = strcmp(it->zName, "cutoff") == 0;
        if (!bCutoff && strcmp(it->zName, "sync") != 0) {
            sqlx_error(r, ER_PARSE, "OPTIMIZE: unknown option '%s' at offset %d: expected "
                       "cutoff or sync", it->zName, it->pos);
            return;
        }
        int64_t lo = bCutoff ? 1 : 0, hi = bCutoff ? 1000000 : 1;
        if (it->pValue->kind != EXPR_INT || it->pValue->u.i < lo || it->pValue->u.i > hi) {
            sqlx_error(r, ER_PARSE, "OPTIMIZE: option '%s' at offset %d expects an integer "
                       "from %lld to %lld", it->zName, it->pos, (long long)lo, (long long)hi);
            return;
        }
        if (bCutoff) nCutoff = (int)it->pValue->u.i;
        else bSync = (int)it->pValue->u.i;
    }
    Table *t = sqlx_table(s, o->zTable, r);
    if (!t) return;
    LpError err;
    lp_err_clear(&err);
    int rc = bSync ? table_optimize(t, nCutoff, &err) : table_optimize_async(t, nCutoff, &err);
    table_unref(t);
    if (rc != LP_OK) {
        sqlx_report(r, &err, ER_UNKNOWN_ERROR);
        return;
    }
    r->kind = SQLRES_OK;
}

/* DDL and explicit transaction control end the open transaction. */
static int implicit_commit(SqlSession *s, SqlResult *r) {
    if (!sqlx_in_txn(s)) return 0;
    LpError err;
    lp_err_clear(&err);
    if (sqlx_commit(s, &err) != LP_OK) {
        sqlx_report(r, &err, ER_UNKNOWN_ERROR);
        return 1;
    }
    return 0;
}

void sql_execute(SqlSession *s, const char *zSql, size_t nSql, SqlResult *r) {
    SqlStats *stats = &s->e->stats;
    int64_t t0 = lp_now_ns();
    sql_result_reset(r);
    arena_reset(&s->stmt);
    s->pEmbedMemo = NULL;
    atomic_fetch_add_explicit(&stats->nQueries, 1, memory_order_relaxed);

    SqlStmt *st = NULL;
    LpError err;
    lp_err_clear(&err);
    int rcParse = sql_parse(&s->stmt, zSql, nSql, &st, &err);
    int64_t nsParse = lp_now_ns() - t0;
    if (rcParse != LP_OK) {
        warnings_clear(s);
        sqlx_report(r, &err, ER_PARSE);
        goto done;
    }
    /* SHOW WARNINGS and SHOW META look at the previous statement. */
    int bKeepDiag = st->kind == STMT_SHOW &&
                    (st->u.show.kind == SHOW_WARNINGS || st->u.show.kind == SHOW_META);
    if (!bKeepDiag) warnings_clear(s);

    switch (st->kind) {
    case STMT_SELECT:
        atomic_fetch_add_explicit(&stats->nSelect, 1, memory_order_relaxed);
        sqlx_select(s, st, r);
        if (r->kind != SQLRES_ERROR && s->meta.bValid) {
            s->meta.nsTotal = lp_now_ns() - t0 - s->meta.nsProfilePlan;
            s->meta.nsParse = nsParse;
        }
        break;
    case STMT_EXPLAIN:
        sqlx_explain(s, st, r);
        break;
    case STMT_INSERT:
        atomic_fetch_add_explicit(st->u.insert.bReplace ? &stats->nReplace : &stats->nInsert, 1,
                                  memory_order_relaxed);
        sqlx_insert(s, st, r);
        break;
    case STMT_UPDATE:
        atomic_fetch_add_explicit(&stats->nUpdate, 1, memory_order_relaxed);
        sqlx_update(s, st, r);
        break;
    case STMT_DELETE:
        atomic_fetch_add_explicit(&stats->nDelete, 1, memory_order_relaxed);
        sqlx_delete(s, st, r);
        break;
    case STMT_CREATE_TABLE:
        if (implicit_commit(s, r)) break;
        sqlx_create_table(s, st, r);
        break;
    case STMT_DROP_TABLE:
        if (implicit_commit(s, r)) break;
        exec_drop(s, st, r);
        break;
    case STMT_TRUNCATE:
        if (implicit_commit(s, r)) break;
        exec_truncate(s, st, r);
        break;
    case STMT_FLUSH:
        exec_flush(s, st, r);
        break;
    case STMT_OPTIMIZE:
        exec_optimize(s, st, r);
        break;
    case STMT_ALTER_TABLE:
        if (implicit_commit(s, r)) break;
        sqlx_alter_table(s, st, r);
        break;
    case STMT_SHOW:
        if (st->u.show.kind == SHOW_VARIABLES) {
            sqlx_show_variables(s, &st->u.show, r);
        } else {
            sqlx_show(s, st, r);
        }
        break;
    case STMT_CALL:
        sqlx_call(s, st, r);
        break;
    case STMT_SET:
        exec_set(s, &st->u.set, r);
        break;
    case STMT_BEGIN:
        if (implicit_commit(s, r)) break;
        s->bExplicitTxn = 1;
        r->kind = SQLRES_OK;
        break;
    case STMT_COMMIT:
        if (sqlx_commit(s, &err) != LP_OK) {
            sqlx_report(r, &err, ER_UNKNOWN_ERROR);
        } else {
            r->kind = SQLRES_OK;
        }
        break;
    case STMT_ROLLBACK:
        sqlx_rollback(s);
        r->kind = SQLRES_OK;
        break;
    case STMT_USE:
        if (sql_session_use(s, st->u.use.zName, strlen(st->u.use.zName), &err)) {
            sqlx_report(r, &err, ER_UNKNOWN_ERROR);
        } else {
            r->kind = SQLRES_OK;
        }
        break;
    }
done:
    if (r->kind == SQLRES_ERROR) {
        atomic_fetch_add_explicit(&stats->nErrors, 1, memory_order_relaxed);
    } else {
        r->nWarning = (int)s->warnings.n;
    }
}

void sql_field_list(SqlSession *s, const char *zTable, size_t nTable, SqlResult *r) {
    sql_result_reset(r);
    char zName[128];
    size_t n = nTable < sizeof(zName) - 1 ? nTable : sizeof(zName) - 1;
    for (size_t i = 0; i < n; i++) {
        char ch = zTable[i];
        zName[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
    }
    zName[n] = 0;
    Table *t = sqlx_table(s, zName, r);
    if (!t) return;
    const Schema *sc = table_schema(t);
    if (sql_result_columns(r, sc->nCol + 1) ||
        sql_result_column(r, 0, "id", SQLCOL_BIGINT, SQLCOL_F_NOTNULL | SQLCOL_F_PRIKEY)) {
        goto oom;
    }
    for (int i = 0; i < sc->nCol; i++) {
        if (sql_result_column(r, i + 1, sc->aCol[i].zName, sqlx_coltype(sc->aCol[i].type), 0)) {
            goto oom;
        }
    }
    const char *zTab = arena_strndup(&r->arena, zName, n);
    if (!zTab) goto oom;
    for (int i = 0; i <= sc->nCol; i++) r->aCol[i].zTable = zTab;
    table_unref(t);
    return;
oom:
    table_unref(t);
    sqlx_error(r, ER_OUTOFMEMORY, "out of memory");
}
