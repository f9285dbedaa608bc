/* result.c — see result.h. */
#include "sql/result.h"
#include "table/table.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sql_result_init(SqlResult *r) {
    memset(r, 0, sizeof(*r));
    arena_init(&r->arena, 16384);
    r->kind = SQLRES_OK;
}

void sql_result_commit(SqlResult *r) {
    if (!r->pCommitTable) return;
    LpError err;
    lp_err_clear(&err);
    int rc = table_commit(r->pCommitTable, r->commitLsn, &err);
    table_unref(r->pCommitTable);
    r->pCommitTable = NULL;
    r->commitLsn = 0;
    if (rc != LP_OK) sql_result_error(r, 1105, "HY000", err.zMsg); /* ER_UNKNOWN_ERROR */
}

/* Frees the result sets after r. */
static void free_more(SqlResult *r) {
    SqlResult *p = r->pNext;
    r->pNext = NULL;
    while (p) {
        SqlResult *pNext = p->pNext;
        p->pNext = NULL;
        sql_result_free(p);
        free(p);
        p = pNext;
    }
}

SqlResult *sql_result_more(SqlResult *r) {
    SqlResult *p = malloc(sizeof(SqlResult));
    if (!p) return NULL;
    sql_result_init(p);
    while (r->pNext) r = r->pNext;
    r->pNext = p;
    return p;
}

void sql_result_reset(SqlResult *r) {
    free_more(r);
    if (r->pCommitTable) table_unref(r->pCommitTable); /* never waited for: see the caller */
    Arena a = r->arena;
    arena_reset(&a);
    memset(r, 0, sizeof(*r));
    r->arena = a;
    r->kind = SQLRES_OK;
}

void sql_result_free(SqlResult *r) {
    free_more(r);
    if (r->pCommitTable) table_unref(r->pCommitTable);
    arena_free(&r->arena);
    memset(r, 0, sizeof(*r));
}

void sql_result_error(SqlResult *r, int iErrno, const char *zSqlState, const char *zMsg) {
    free_more(r);
    r->kind = SQLRES_ERROR;
    r->iErrno = iErrno;
    snprintf(r->zSqlState, sizeof(r->zSqlState), "%s", zSqlState ? zSqlState : "HY000");
    snprintf(r->zErr, sizeof(r->zErr), "%s", zMsg);
    /* A result set half-built before the error is dropped. */
    r->nCol = 0;
    r->nRow = 0;
}

/* The SQLSTATE MySQL uses with each error number loupe reports. */
static const char *sqlstate_for_errno(int iErrno) {
    switch (iErrno) {
    case 1040: return "08004";
    case 1043: return "08S01";
    case 1045: return "28000";
    case 1047: return "08S01";
    case 1050: return "42S01";
    case 1051: return "42S02";
    case 1054: return "42S22";
    case 1060: return "42S21";
    case 1062: return "23000";
    case 1037: return "HY001";
    case 1064: return "42000";
    case 1065: return "42000";
    case 1136: return "21S01";
    case 1140: return "42000";
    case 1146: return "42S02";
    case 1153: return "08S01";
    case 1156: return "08S01";
    case 1193: return "HY000";
    case 1231: return "42000";
    case 1235: return "42000";
    case 1264: return "22003";
    case 1366: return "HY000";
    case 3140: return "22032";
    default: return "HY000";
    }
}

int sql_errno_for_code(int code, const char **pzSqlState) {
    int e;
    switch (code) {
    case LP_BADINPUT: e = 1064; break;
    case LP_NOTFOUND: e = 1146; break;
    case LP_EXISTS: e = 1050; break;
    case LP_RANGE: e = 1264; break;
    case LP_UNSUPPORTED: e = 1235; break;
    case LP_NOMEM: e = 1037; break;  /* ER_OUTOFMEMORY */
    default: e = 1105; break;
    }
    if (pzSqlState) *pzSqlState = sqlstate_for_errno(e);
    return e;
}

void sql_result_from_error(SqlResult *r, const LpError *err) {
    int e = err->detail;
    const char *zState;
    if (e) {
        zState = sqlstate_for_errno(e);
    } else {
        e = sql_errno_for_code(err->code, &zState);
    }
    sql_result_error(r, e, zState, err->zMsg[0] ? err->zMsg : lp_code_name(err->code));
}

int sql_result_columns(SqlResult *r, int nCol) {
    r->kind = SQLRES_ROWS;
    r->aCol = arena_zalloc(&r->arena, sizeof(SqlColumn) * (size_t)(nCol > 0 ? nCol : 1));
    if (!r->aCol) return LP_NOMEM;
    r->nCol = nCol;
    r->aCell = NULL;
    r->nRow = r->nRowAlloc = 0;
    return LP_OK;
}

int sql_result_column(SqlResult *r, int i, const char *zName, SqlColType type, int flags) {
    SqlColumn *c = &r->aCol[i];
    c->zName = arena_strndup(&r->arena, zName, strlen(zName));
    if (!c->zName) return LP_NOMEM;
    c->type = type;
    c->flags = flags;
    c->zTable = "";
    return LP_OK;
}

SqlCell *sql_result_row(SqlResult *r) {
    if (r->nRow == r->nRowAlloc) {
        /* Cells live in the arena: growing copies them into a bigger block
        ** (the old one is abandoned until reset; total waste is bounded by
        ** the final size, as the blocks double). */
        size_t nNew = r->nRowAlloc ? r->nRowAlloc * 2 : 16;
        size_t nCol = (size_t)(r->nCol > 0 ? r->nCol : 1);
        if (nNew > SIZE_MAX / sizeof(SqlCell) / nCol) return NULL;
        SqlCell *a = arena_alloc(&r->arena, nNew * nCol * sizeof(SqlCell));
        if (!a) return NULL;
        if (r->nRow) memcpy(a, r->aCell, r->nRow * nCol * sizeof(SqlCell));
        r->aCell = a;
        r->nRowAlloc = nNew;
    }
    SqlCell *row = &r->aCell[r->nRow * (size_t)r->nCol];
    memset(row, 0, sizeof(SqlCell) * (size_t)r->nCol);
    r->nRow++;
    return row;
}

int sql_result_cell(SqlResult *r, SqlCell *c, const char *z, size_t n) {
    char *p = arena_strndup(&r->arena, z, n);
    if (!p) return LP_NOMEM;
    c->z = p;
    c->n = (uint32_t)n;
    return LP_OK;
}

int sql_result_cell_int(SqlResult *r, SqlCell *c, int64_t v) {
    char buf[24];
    int n = snprintf(buf, sizeof(buf), "%" PRId64, v);
    return sql_result_cell(r, c, buf, (size_t)n);
}

int sql_result_cell_str(SqlResult *r, SqlCell *c, const char *z) {
    if (!z) {
        c->z = NULL;
        c->n = 0;
        return LP_OK;
    }
    return sql_result_cell(r, c, z, strlen(z));
}

int sql_result_add_strs(SqlResult *r, const char *const *az) {
    SqlCell *row = sql_result_row(r);
    if (!row) return LP_NOMEM;
    for (int i = 0; i < r->nCol; i++) {
        if (sql_result_cell_str(r, &row[i], az[i])) return LP_NOMEM;
    }
    return LP_OK;
}
