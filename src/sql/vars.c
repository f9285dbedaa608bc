/*
** vars.c — system variables (@@name) and user variables (@name).
**
** loupe keeps the variables MySQL clients and drivers read or set on
** connect, so they work unchanged: most are settings loupe stores and
** reports (sql_mode, time_zone, net timeouts...), a few are live
** (autocommit, version, max_allowed_packet). A value is looked up in the
** session's overrides, then the server's SET GLOBAL overrides, then the
** default. Setting an unknown system variable is an error (1193), as in
** MySQL; read-only ones give 1238.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/sql_int.h"

#define V_RO   0x01     /* read-only */
#define V_INT  0x02     /* integer value */
#define V_BOOL 0x04     /* 0/1, accepts ON/OFF/TRUE/FALSE */
#define V_LIVE 0x08     /* computed from server/session state */

typedef struct VarDef {
    const char *zName;
    const char *zDefault;
    int flags;
} VarDef;

/* Sorted by name: SHOW VARIABLES lists them in this order. */
static const VarDef aVarDef[] = {
    {"auto_increment_increment", "1", V_INT},
    {"auto_increment_offset", "1", V_INT},
    {"autocommit", NULL, V_BOOL | V_LIVE},
    {"character_set_client", "utf8mb4", 0},
    {"character_set_connection", "utf8mb4", 0},
    {"character_set_database", "utf8mb4", V_RO},
    {"character_set_results", "utf8mb4", 0},
    {"character_set_server", "utf8mb4", V_RO},
    {"character_set_system", "utf8mb4", V_RO},
    {"collation_connection", "utf8mb4_general_ci", 0},
    {"collation_database", "utf8mb4_general_ci", V_RO},
    {"collation_server", "utf8mb4_general_ci", V_RO},
    {"init_connect", "", 0},
    {"interactive_timeout", "28800", V_INT},
    {"last_insert_id", NULL, V_INT | V_LIVE},
    {"lower_case_table_names", "1", V_INT | V_RO},
    {"max_allowed_packet", NULL, V_INT | V_RO | V_LIVE},
    {"net_buffer_length", "16384", V_INT},
    {"net_read_timeout", "30", V_INT},
    {"net_write_timeout", "60", V_INT},
    {"performance_schema", "0", V_BOOL | V_RO},
    {"profiling", NULL, V_BOOL | V_LIVE},
    {"protocol_version", "10", V_INT | V_RO},
    {"query_cache_size", "0", V_INT | V_RO},
    {"query_cache_type", "OFF", V_RO},
    {"sql_auto_is_null", "0", V_BOOL},
    {"sql_mode", "", 0},
    {"sql_select_limit", "18446744073709551615", 0},
    {"system_time_zone", "UTC", V_RO},
    {"time_zone", "+00:00", 0},
    {"transaction_isolation", "READ-COMMITTED", 0},
    {"transaction_read_only", "0", V_BOOL},
    {"tx_isolation", "READ-COMMITTED", 0},
    {"tx_read_only", "0", V_BOOL},
    {"version", NULL, V_RO | V_LIVE},
    {"version_comment", NULL, V_RO | V_LIVE},
    {"wait_timeout", "28800", V_INT},
};

static const VarDef *var_find(const char *zName) {
    int lo = 0, hi = (int)LP_ARRAY_SIZE(aVarDef) - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(zName, aVarDef[mid].zName);
        if (c == 0) return &aVarDef[mid];
        if (c < 0) hi = mid - 1; else lo = mid + 1;
    }
    return NULL;
}

void sqlx_varlist_free(SqlVarList *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->a[i].zName);
        free(l->a[i].zValue);
    }
    VEC_FREE(l);
}

static SqlVar *varlist_find(SqlVarList *l, const char *zName) {
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->a[i].zName, zName) == 0) return &l->a[i];
    }
    return NULL;
}

/* Stores zValue (NULL = SQL NULL) under zName. LP_OK or LP_NOMEM. */
static int varlist_set(SqlVarList *l, const char *zName, const char *zValue, int bInt) {
    char *zv = zValue ? strdup(zValue) : NULL;
    if (zValue && !zv) return LP_NOMEM;
    SqlVar *v = varlist_find(l, zName);
    if (v) {
        free(v->zValue);
        v->zValue = zv;
        v->bInt = bInt;
        return LP_OK;
    }
    SqlVar nv = {strdup(zName), zv, bInt};
    if (!nv.zName || VEC_PUSH(l, nv)) {
        free(nv.zName);
        free(zv);
        return LP_NOMEM;
    }
    return LP_OK;
}

/* The text of a live variable, in buf. */
static const char *live_value(SqlSession *s, const VarDef *d, char *buf, size_t nBuf) {
    if (strcmp(d->zName, "autocommit") == 0) return s->bAutocommit ? "1" : "0";
    if (strcmp(d->zName, "profiling") == 0) return s->bProfiling ? "1" : "0";
    if (strcmp(d->zName, "last_insert_id") == 0) {
        snprintf(buf, nBuf, "%lld", (long long)s->iLastInsertId);
        return buf;
    }
    if (strcmp(d->zName, "max_allowed_packet") == 0) {
        snprintf(buf, nBuf, "%u", s->e->nMaxPacket);
        return buf;
    }
    if (strcmp(d->zName, "version") == 0) return s->e->zVersion;
    snprintf(buf, nBuf, "loupe %s", LOUPE_VERSION);
    return buf; /* version_comment */
}

/* The effective text of system variable d in the given scope, or NULL
** for SQL NULL; copied into arena a. *pOom set on allocation failure. */
static const char *sysvar_text(SqlSession *s, const VarDef *d, int scope, Arena *a, int *pOom) {
    char buf[64];
    const char *z = d->zDefault;
    int bFound = 0;
    if (d->flags & V_LIVE) {
        z = live_value(s, d, buf, sizeof(buf));
        bFound = 1;
    }
    if (!bFound && scope != 2) {
        SqlVar *v = varlist_find(&s->vars, d->zName);
        if (v) z = v->zValue, bFound = 1;
    }
    char *zCopy = NULL;
    if (!bFound) {
        pthread_mutex_lock(&s->e->mu);
        SqlVar *v = varlist_find(&s->e->globals, d->zName);
        if (v) z = v->zValue;
        if (z && !(zCopy = arena_strndup(a, z, strlen(z)))) *pOom = 1;
        pthread_mutex_unlock(&s->e->mu);
        return zCopy;
    }
    if (z && !(zCopy = arena_strndup(a, z, strlen(z)))) *pOom = 1;
    return zCopy;
}

static Value text_value(const char *z, int bInt) {
    if (!z) return value_null();
    if (bInt) {
        char *end;
        long long v = strtoll(z, &end, 10);
        if (*z && !*end) return value_int(v);
    }
    return value_str(z, (uint32_t)strlen(z));
}

int sqlx_var_get(SqlSession *s, const char *zName, int scope, Arena *a, Value *pv) {
    int oom = 0;
    if (scope == 3) {
        SqlVar *v = varlist_find(&s->vars, zName);
        if (!v || !v->zValue) {
            *pv = value_null();
            return LP_OK;
        }
        const char *z = arena_strndup(a, v->zValue, strlen(v->zValue));
        if (!z) return LP_NOMEM;
        *pv = text_value(z, v->bInt);
        return LP_OK;
    }
    /* @@identity is MySQL's other name for last_insert_id */
    const VarDef *d = var_find(strcmp(zName, "identity") == 0 ? "last_insert_id" : zName);
    if (!d) return LP_NOTFOUND;
    const char *z = sysvar_text(s, d, scope, a, &oom);
    if (oom) return LP_NOMEM;
    *pv = text_value(z, (d->flags & (V_INT | V_BOOL)) != 0);
    return LP_OK;
}

/* 1 / 0 for a boolean setting, -1 when v is not one. */
static int parse_bool(Value v) {
    if (v.kind == VAL_INT) return v.u.i == 0 || v.u.i == 1 ? (int)v.u.i : -1;
    if (v.kind != VAL_STR) return -1;
    static const char *const azOn[] = {"1", "on", "true", "yes"};
    static const char *const azOff[] = {"0", "off", "false", "no"};
    for (int i = 0; i < 4; i++) {
        if (strlen(azOn[i]) == v.u.s.n && strncasecmp(v.u.s.z, azOn[i], v.u.s.n) == 0) return 1;
        if (strlen(azOff[i]) == v.u.s.n && strncasecmp(v.u.s.z, azOff[i], v.u.s.n) == 0) return 0;
    }
    return -1;
}

/* loupe speaks UTF-8 only: SET NAMES accepts its names for UTF-8. */
static int check_charset(Value v, LpError *err) {
    static const char *const az[] = {"utf8mb4", "utf8", "utf8mb3", "default"};
    if (v.kind == VAL_STR) {
        for (size_t i = 0; i < LP_ARRAY_SIZE(az); i++) {
            if (strlen(az[i]) == v.u.s.n && strncasecmp(v.u.s.z, az[i], v.u.s.n) == 0) {
                return LP_OK;
            }
        }
    }
    lp_err_set(err, LP_BADINPUT, "character set '%.*s' is not supported: loupe speaks UTF-8 (utf8mb4) only",
               v.kind == VAL_STR ? (int)v.u.s.n : 4, v.kind == VAL_STR ? v.u.s.z : "NULL");
    err->detail = 1115; /* ER_UNKNOWN_CHARACTER_SET */
    return LP_BADINPUT;
}

int sqlx_var_set(SqlSession *s, const char *zName, int scope, Value v, LpError *err) {
    char buf[64];
    const char *z = NULL;
    int bInt = 0;
    switch (v.kind) {
    case VAL_INT:
        snprintf(buf, sizeof(buf), "%lld", (long long)v.u.i);
        z = buf;
        bInt = 1;
        break;
    case VAL_FLOAT:
        snprintf(buf, sizeof(buf), "%.17g", v.u.f);
        z = buf;
        break;
    case VAL_STR:
        break;
    default:
        break;
    }
    char *zStr = NULL;
    if (v.kind == VAL_STR && !(zStr = strndup(v.u.s.z, v.u.s.n))) goto oom;
    if (zStr) z = zStr;

    int rc = LP_OK;
    if (scope == 3) {
        if (varlist_set(&s->vars, zName, z, bInt)) goto oom;
        goto done;
    }
    if (strcmp(zName, "names") == 0 || strcmp(zName, "character_set") == 0) {
        if ((rc = check_charset(v, err)) != LP_OK) goto done;
        static const char *const azSet[] = {"character_set_client", "character_set_connection",
                                            "character_set_results"};
        for (int i = 0; i < 3; i++) {
            if (varlist_set(&s->vars, azSet[i], "utf8mb4", 0)) goto oom;
        }
        goto done;
    }
    if (strcmp(zName, "transaction") == 0) {
        /* SET TRANSACTION …: loupe's isolation is READ COMMITTED whatever is asked. */
        sqlx_warn(s, 1105, "loupe transactions are always READ COMMITTED; SET TRANSACTION ignored");
        goto done;
    }
    const VarDef *d = var_find(zName);
    if (!d) {
        rc = lp_err_set(err, LP_NOTFOUND, "unknown system variable '%s'", zName);
        err->detail = ER_UNKNOWN_SYSVAR;
        goto done;
    }
    if (d->flags & V_RO) {
        rc = lp_err_set(err, LP_BADINPUT, "variable '%s' is read-only", zName);
        err->detail = ER_READONLY_VAR;
        goto done;
    }
    if (d->flags & V_BOOL) {
        int b = parse_bool(v);
        if (b < 0) goto badvalue;
        z = b ? "1" : "0";
        bInt = 1;
        if (strcmp(zName, "autocommit") == 0 && scope != 2) {
            /* Turning autocommit on commits the open transaction (MySQL). */
            if (b && !s->bAutocommit && !s->bExplicitTxn && (rc = sqlx_commit(s, err)) != LP_OK) {
                goto done;
            }
            s->bAutocommit = b;
            goto done;
        }
        if (strcmp(zName, "profiling") == 0) {
            /* Per session, as in MySQL and Manticore (SHOW PLAN, SHOW PROFILE). */
            if (scope == 2) {
                rc = lp_err_set(err, LP_BADINPUT, "variable 'profiling' is a SESSION variable and can't be "
                                "used with SET GLOBAL");
                err->detail = ER_LOCAL_VARIABLE;
                goto done;
            }
            s->bProfiling = b;
            goto done;
        }
    } else if (d->flags & V_INT) {
        if (v.kind != VAL_INT || v.u.i < 0) goto badvalue;
    } else if (v.kind == VAL_NULL) {
        goto badvalue;
    }
    if (strncmp(zName, "character_set_", 14) == 0 && (rc = check_charset(v, err)) != LP_OK) {
        goto done;
    }
    if (scope == 2) {
        pthread_mutex_lock(&s->e->mu);
        int r2 = varlist_set(&s->e->globals, zName, z, bInt);
        pthread_mutex_unlock(&s->e->mu);
        if (r2) goto oom;
    } else if (varlist_set(&s->vars, zName, z, bInt)) {
        goto oom;
    }
done:
    free(zStr);
    return rc;
badvalue:
    lp_err_set(err, LP_BADINPUT, "variable '%s' can't be set to the value of '%.64s'", zName,
               v.kind == VAL_STR ? zStr : v.kind == VAL_NULL ? "NULL" : buf);
    err->detail = ER_WRONG_VALUE_VAR;
    free(zStr);
    return LP_BADINPUT;
oom:
    free(zStr);
    return lp_err_set(err, LP_NOMEM, "out of memory");
}

void sqlx_show_variables(SqlSession *s, const ShowStmt *sh, SqlResult *r) {
    if (sql_result_columns(r, 2) ||
        sql_result_column(r, 0, "Variable_name", SQLCOL_STRING, SQLCOL_F_NOTNULL) ||
        sql_result_column(r, 1, "Value", SQLCOL_STRING, 0)) {
        goto oom;
    }
    for (size_t i = 0; i < LP_ARRAY_SIZE(aVarDef); i++) {
        const VarDef *d = &aVarDef[i];
        if (sh->zLike && !sqlx_like(sh->zLike, d->zName)) continue;
        int oom = 0;
        const char *z = sysvar_text(s, d, sh->scope, &r->arena, &oom);
        if (oom) goto oom;
        const char *az[2] = {d->zName, z};
        if (sql_result_add_strs(r, az)) goto oom;
    }
    return;
oom:
    sqlx_error(r, ER_OUTOFMEMORY, "out of memory");
}
