/* show.c — SHOW statements and DESCRIBE (SHOW VARIABLES is in vars.c). */
#include <stdio.h>
#include <string.h>

#include "fts/match.h"
#include "fts/search.h"
#include "sql/sql_int.h"
#include <stdlib.h>
#include "util/clock.h"
#include "util/strbuf.h"

/* Starts a result of string columns named by az (NULL-terminated). */
static int str_columns(SqlResult *r, const char *const *az) {
    int n = 0;
    while (az[n]) n++;
    if (sql_result_columns(r, n)) return LP_NOMEM;
    for (int i = 0; i < n; i++) {
        if (sql_result_column(r, i, az[i], SQLCOL_STRING, 0)) return LP_NOMEM;
    }
    return LP_OK;
}

static int add2(SqlResult *r, const char *zA, const char *zB) {
    const char *az[2] = {zA, zB};
    return sql_result_add_strs(r, az);
}

static int add2i(SqlResult *r, const char *zA, unsigned long long v) {
    char buf[24];
    snprintf(buf, sizeof(buf), "%llu", v);
    return add2(r, zA, buf);
}

/* add2 / add2i of a row whose name the statement's LIKE (if any) matches. */
static int add2_like(SqlResult *r, const ShowStmt *sh, const char *zA, const char *zB) {
    return sh->zLike && !sqlx_like(sh->zLike, zA) ? LP_OK : add2(r, zA, zB);
}

static int add2i_like(SqlResult *r, const ShowStmt *sh, const char *zA, unsigned long long v) {
    return sh->zLike && !sqlx_like(sh->zLike, zA) ? LP_OK : add2i(r, zA, v);
}

static Table *need_table(SqlSession *s, const ShowStmt *sh, SqlResult *r) {
    return sqlx_table(s, sh->zTable, r);
}

static int show_tables(SqlSession *s, const ShowStmt *sh, SqlResult *r) {
    static const char *const azCol[] = {"Table", "Type", NULL};
    char **azName;
    int n;
    if (str_columns(r, azCol) || catalog_names(s->e->pCatalog, &azName, &n)) return LP_NOMEM;
    int rc = LP_OK;
    for (int i = 0; i < n && rc == LP_OK; i++) {
        if (sh->zLike && !sqlx_like(sh->zLike, azName[i])) continue;
        rc = add2(r, azName[i], "rt");
    }
    catalog_names_free(azName, n);
    return rc;
}

static int show_create(SqlSession *s, const ShowStmt *sh, SqlResult *r) {
    static const char *const azCol[] = {"Table", "Create Table", NULL};
    Table *t = need_table(s, sh, r);
    if (!t) return LP_OK;
    StrBuf sb = {0};
    schema_to_sql(table_schema(t), table_name(t), &sb);
    int rc = sb.oom || str_columns(r, azCol) || add2(r, table_name(t), sb.z) ? LP_NOMEM : LP_OK;
    strbuf_free(&sb);
    table_unref(t);
    return rc;
}

static int show_describe(SqlSession *s, const ShowStmt *sh, SqlResult *r) {
    static const char *const azCol[] = {"Field", "Type", "Properties", NULL};
    Table *t = need_table(s, sh, r);
    if (!t) return LP_OK;
    const Schema *sc = table_schema(t);
    int rc = str_columns(r, azCol);
    const char *azId[3] = {"id", "bigint", ""};
    if (!rc && (!sh->zLike || sqlx_like(sh->zLike, "id"))) rc = sql_result_add_strs(r, azId);
    StrBuf sb = {0};
    for (int i = 0; i < sc->nCol && rc == LP_OK; i++) {
        const ColumnSchema *c = &sc->aCol[i];
        if (sh->zLike && !sqlx_like(sh->zLike, c->zName)) continue;
        strbuf_reset(&sb);
        strbuf_appendz(&sb, ""); /* "" rather than NULL when there are none */
        schema_col_properties(c, &sb);
        if (sb.oom) rc = LP_NOMEM;
        /* multi-values as Manticore's DESCRIBE names them */
        const char *zType = c->type == COL_MULTI ? "mva" : c->type == COL_MULTI64 ? "mva64" : coltype_name(c->type);
        const char *az[3] = {c->zName, zType, sb.z};
        if (!rc) rc = sql_result_add_strs(r, az);
    }
    strbuf_free(&sb);
    table_unref(t);
    return rc;
}

static int show_status(SqlSession *s, const ShowStmt *sh, SqlResult *r) {
    static const char *const azCol[] = {"Counter", "Value", NULL};
    SqlStats *st = &s->e->stats;
    char **azName;
    int nTable;
    if (str_columns(r, azCol) || catalog_names(s->e->pCatalog, &azName, &nTable)) return LP_NOMEM;
    catalog_names_free(azName, nTable);
    struct {
        const char *zName;
        unsigned long long v;
    } aRow[] = {
        {"uptime", (unsigned long long)(lp_unix_now() - st->tStart)},
        {"connections", atomic_load(&st->nConnections)},
        {"connected", (unsigned long long)atomic_load(&st->nConnected)},
        {"maxed_out", atomic_load(&st->nMaxedOut)},
        {"queries", atomic_load(&st->nQueries)},
        {"query_errors", atomic_load(&st->nErrors)},
        {"command_select", atomic_load(&st->nSelect)},
        {"command_insert", atomic_load(&st->nInsert)},
        {"command_replace", atomic_load(&st->nReplace)},
        {"command_update", atomic_load(&st->nUpdate)},
        {"command_delete", atomic_load(&st->nDelete)},
        {"http_requests", atomic_load(&st->nHttpRequests)},
        {"query_embeddings", atomic_load(&st->nQueryEmbeds)},
        {"bytes_received", atomic_load(&st->nBytesIn)},
        {"bytes_sent", atomic_load(&st->nBytesOut)},
        {"tables", (unsigned long long)nTable},
    };
    if ((!sh->zLike || sqlx_like(sh->zLike, "version")) && add2(r, "version", LOUPE_VERSION)) {
        return LP_NOMEM;
    }
    if ((!sh->zLike || sqlx_like(sh->zLike, "mysql_version")) &&
        add2(r, "mysql_version", s->e->zVersion)) {
        return LP_NOMEM;
    }
    for (size_t i = 0; i < LP_ARRAY_SIZE(aRow); i++) {
        if (sh->zLike && !sqlx_like(sh->zLike, aRow[i].zName)) continue;
        if (add2i(r, aRow[i].zName, aRow[i].v)) return LP_NOMEM;
    }
    return LP_OK;
}

void sqlx_meta_match(SqlSession *s, const char *zTable, const char *zMatch, size_t nMatch,
                     int nExpansionLimit, unsigned matchFlags) {
    SqlMeta *m = &s->meta;
    m->bMatch = 0;
    if (!zTable) return; /* the buffers stay for the next MATCH query */
    /* Every MATCH query passes here: the buffers are reused. */
    if (!m->zMatchTable || strcmp(m->zMatchTable, zTable) != 0) {
        free(m->zMatchTable);
        m->zMatchTable = strdup(zTable);
    }
    if (nMatch > m->nMatchCap || !m->zMatch) {
        free(m->zMatch);
        m->nMatchCap = nMatch > 64 ? nMatch : 64;
        m->zMatch = malloc(m->nMatchCap);
    }
    m->bMatch = m->zMatchTable && m->zMatch; /* else SHOW META leaves the keywords out */
    if (!m->bMatch) return;
    memcpy(m->zMatch, zMatch, nMatch);
    m->nMatch = nMatch;
    m->nExpansionLimit = nExpansionLimit;
    m->matchFlags = matchFlags;
}

void sqlx_meta_plan(SqlSession *s, const char *z, size_t n) {
    SqlMeta *m = &s->meta;
    free(m->zProfilePlan);
    m->zProfilePlan = z ? strndup(z, n) : NULL;
    m->bProfiled = m->zProfilePlan != NULL;
}

void sqlx_meta_free(SqlSession *s) {
    free(s->meta.zMatchTable);
    free(s->meta.zMatch);
    sqlx_meta_plan(s, NULL, 0);
    s->meta.zMatchTable = s->meta.zMatch = NULL;
    s->meta.nMatchCap = 0;
    s->meta.bMatch = 0;
}

#define META_MAX_KEYWORDS 1000 /* keyword[i] rows SHOW META lists at most */

typedef struct MetaKw {
    SqlResult *r;
    const ShowStmt *sh;
    int i;                      /* the next keyword's number */
    int rc;
} MetaKw;

static int meta_keyword(void *ctx, const char *z, int n, uint64_t docs, uint64_t hits) {
    MetaKw *m = ctx;
    char zName[32], zWord[ANALYZER_MAX_TERM + 2];
    snprintf(zWord, sizeof(zWord), "%.*s", n, z);
    snprintf(zName, sizeof(zName), "keyword[%d]", m->i);
    if (add2_like(m->r, m->sh, zName, zWord)) return m->rc = LP_NOMEM;
    snprintf(zName, sizeof(zName), "docs[%d]", m->i);
    if (add2i_like(m->r, m->sh, zName, docs)) return m->rc = LP_NOMEM;
    snprintf(zName, sizeof(zName), "hits[%d]", m->i);
    if (add2i_like(m->r, m->sh, zName, hits)) return m->rc = LP_NOMEM;
    m->i++;
    return 0;
}

/* keyword[i], docs[i], hits[i] of the last MATCH query, from the table as
** it is now; nothing when the table is gone. */
static int meta_keywords(SqlSession *s, const ShowStmt *sh, SqlResult *r) {
    const SqlMeta *m = &s->meta;
    if (!m->bMatch) return LP_OK;
    Table *t = catalog_get(s->e->pCatalog, m->zMatchTable);
    if (!t) return LP_OK;
    Arena a;
    arena_init(&a, 0);
    LpError err;
    lp_err_clear(&err);
    FtsNode *root = NULL;
    TableSnap *snap = NULL;
    MetaKw kw = {r, sh, 0, LP_OK};
    int rc = LP_OK;
    /* The text parsed when the query ran; a schema change since may refuse it. */
    if (sqlx_match_parse(&a, t, m->zMatch, m->nMatch, m->matchFlags, &root, &err) == LP_OK && root) {
        snap = table_snapshot(t);
        FtsSource *src = snap ? table_snap_fts(snap) : NULL;
        if (src) {
            rc = fts_keywords(root, table_analyzer(t), src, m->nExpansionLimit, META_MAX_KEYWORDS,
                              meta_keyword, &kw, &err);
            if (kw.rc) rc = kw.rc;
        }
    }
    if (snap) table_snapshot_release(snap);
    arena_free(&a);
    table_unref(t);
    return rc == LP_NOMEM ? LP_NOMEM : LP_OK;
}

static int show_meta(SqlSession *s, const ShowStmt *sh, SqlResult *r) {
    static const char *const azCol[] = {"Variable_name", "Value", NULL};
    if (str_columns(r, azCol)) return LP_NOMEM;
    const SqlMeta *m = &s->meta;
    if (!m->bValid) return LP_OK;
    const QMeta *q = &m->q;
    char buf[64];
    /* name, value: NULL values are skipped (not applicable to this query) */
    struct {
        const char *zName;
        const char *zValue;
        int bNum;
        unsigned long long v;
    } aRow[] = {
        {"total", NULL, 1, m->nTotal},
        {"total_found", NULL, 1, m->nTotalFound},
        {"total_relation", q->bTotalExact ? "eq" : "gte", 0, 0},
        {"time", NULL, 0, 0},
        {"plan", m->zPlan, 0, 0},
        {"strategy", q->fts.zStrategy, 0, 0},
        {"fast_path_skipped", q->fts.zWhyNotFast, 0, 0},
        {"rows_examined", NULL, 1, m->nExamined},
        {"rows_tested_by_columns", NULL, q->nColumnTested > 0, q->nColumnTested},
        {"postings_read", NULL, q->fts.zStrategy != NULL, q->fts.nPostings},
        {"candidates", NULL, q->fts.zStrategy != NULL, q->fts.nCandidates},
        {"knn_distances", NULL, q->nKnnDist > 0, q->nKnnDist},
        {"returned", NULL, 1, q->nReturned},
        {"prefix_expansions", NULL, q->fts.nExpanded > 0, (unsigned long long)q->fts.nExpanded},
        {"prefix_expansion_capped", q->fts.bExpansionCapped ? "yes (raise OPTION expansion_limit)" : NULL, 0, 0},
        {"time_parse_us", NULL, 1, (unsigned long long)(m->nsParse / 1000)},
        {"time_embed_us", NULL, q->nsEmbed > 0, (unsigned long long)(q->nsEmbed / 1000)},
        {"time_plan_us", NULL, 1, (unsigned long long)(q->nsPlan / 1000)},
        {"time_match_us", NULL, 1, (unsigned long long)(q->nsMatch / 1000)},
        {"time_rank_us", NULL, 1, (unsigned long long)(q->nsRank / 1000)},
        {"time_materialize_us", NULL, 1, (unsigned long long)(q->nsOutput / 1000)},
    };
    for (size_t i = 0; i < LP_ARRAY_SIZE(aRow); i++) {
        if (sh->zLike && !sqlx_like(sh->zLike, aRow[i].zName)) continue;
        if (strcmp(aRow[i].zName, "time") == 0) {
            snprintf(buf, sizeof(buf), "%.3f", (double)m->nsTotal / 1e9);
            if (add2(r, "time", buf)) return LP_NOMEM;
            continue;
        }
        if (aRow[i].bNum) {
            if (add2i(r, aRow[i].zName, aRow[i].v)) return LP_NOMEM;
        } else if (aRow[i].zValue && add2(r, aRow[i].zName, aRow[i].zValue)) {
            return LP_NOMEM;
        }
    }
    /* Manticore lists the keywords after time; here after the plan's rows */
    return meta_keywords(s, sh, r);
}

/* SHOW PLAN and SHOW PROFILE describe the last SELECT when it ran with
** profiling on (SET profiling=1), as in Manticore; otherwise they are
** empty, with a warning that says why. */
static int profiled(SqlSession *s) {
    if (s->meta.bValid && s->meta.bProfiled) return 1;
    sqlx_warn(s, ER_UNKNOWN_ERROR, s->bProfiling ? "no SELECT has run since SET profiling=1"
                                                 : "profiling is off: SET profiling=1, then run the SELECT");
    return 0;
}

/* SHOW PLAN: one row, transformed_tree (Manticore's name), whose value is
** the plan as EXPLAIN prints it, one line per node. */
static int show_plan(SqlSession *s, SqlResult *r) {
    static const char *const azCol[] = {"Variable", "Value", NULL};
    if (str_columns(r, azCol)) return LP_NOMEM;
    if (!profiled(s)) return LP_OK;
    return add2(r, "transformed_tree", s->meta.zProfilePlan);
}

/* SHOW PROFILE: the stages of the last SELECT, as Manticore's columns
** have them: seconds, how many times the stage was entered (once each
** here) and its share of the statement's time. "unknown" is the time no
** stage accounts for (the result set's making, locks, the arena). */
static int show_profile(SqlSession *s, SqlResult *r) {
    static const char *const azCol[] = {"Status", "Duration", "Switches", "Percent", NULL};
    if (str_columns(r, azCol)) return LP_NOMEM;
    if (!profiled(s)) return LP_OK;
    const SqlMeta *m = &s->meta;
    const QMeta *q = &m->q;
    struct {
        const char *zName;
        int64_t ns;
    } aStage[] = {
        {"parse", m->nsParse}, {"embed", q->nsEmbed},  {"plan", q->nsPlan},       {"match", q->nsMatch},
        {"rank", q->nsRank},   {"materialize", q->nsOutput}, {"unknown", 0},
    };
    int nStage = (int)LP_ARRAY_SIZE(aStage);
    int64_t nsTotal = m->nsTotal > 0 ? m->nsTotal : 1, nsSum = 0;
    for (int i = 0; i < nStage - 1; i++) nsSum += aStage[i].ns;
    aStage[nStage - 1].ns = nsTotal > nsSum ? nsTotal - nsSum : 0;
    int nShown = 0;
    for (int i = 0; i < nStage; i++) {
        /* embed only for a knn() text, as SHOW META */
        if (strcmp(aStage[i].zName, "embed") == 0 && aStage[i].ns == 0) continue;
        char zDur[32], zPct[32];
        snprintf(zDur, sizeof(zDur), "%.6f", (double)aStage[i].ns / 1e9);
        snprintf(zPct, sizeof(zPct), "%.2f", 100.0 * (double)aStage[i].ns / (double)nsTotal);
        const char *az[4] = {aStage[i].zName, zDur, "1", zPct};
        if (sql_result_add_strs(r, az)) return LP_NOMEM;
        nShown++;
    }
    char zDur[32], zSw[16];
    snprintf(zDur, sizeof(zDur), "%.6f", (double)m->nsTotal / 1e9);
    snprintf(zSw, sizeof(zSw), "%d", nShown);
    const char *az[4] = {"total", zDur, zSw, "100.00"};
    return sql_result_add_strs(r, az);
}

static int show_warnings(SqlSession *s, SqlResult *r) {
    static const char *const azCol[] = {"Level", "Code", "Message", NULL};
    if (str_columns(r, azCol)) return LP_NOMEM;
    for (size_t i = 0; i < s->warnings.n; i++) {
        char zCode[16];
        snprintf(zCode, sizeof(zCode), "%d", s->warnings.a[i].code);
        const char *az[3] = {"Warning", zCode, s->warnings.a[i].zMsg};
        if (sql_result_add_strs(r, az)) return LP_NOMEM;
    }
    return LP_OK;
}

static int show_table_status(SqlSession *s, const ShowStmt *sh, SqlResult *r) {
    static const char *const azCol[] = {"Variable_name", "Value", NULL};
    Table *t = need_table(s, sh, r);
    if (!t) return LP_OK;
    int nSeg = 0;
    uint64_t nFlush = 0, nMerge = 0;
    /* Both before the snapshot's lock: the rebuild status takes the
    ** catalog's manifest mutex, which a flush holds while it takes the
    ** table's lock (lock order: manifest mutex, then table). */
    uint64_t nSegBytes = table_disk_bytes(t, &nSeg, &nFlush, &nMerge);
    uint32_t nFenceCell, nFenceDepth;
    table_id_fence_stats(t, &nFenceCell, &nFenceDepth);
    char zRebuild[LP_ERRMSG_MAX + 128];
    int bRebuild = catalog_rebuild_status(s->e->pCatalog, table_name(t), zRebuild, sizeof(zRebuild));
    TableSnap *snap = table_snapshot(t);
    int rc = LP_NOMEM;
    size_t nTerms = 0, nFts = snap ? table_snap_fts_bytes(snap, &nTerms) : 0;
    uint64_t nWal = table_wal_bytes(t);
    if (snap && !str_columns(r, azCol) && !add2_like(r, sh, "table_type", "rt") &&
        !add2i_like(r, sh, "indexed_documents", table_snap_count(snap)) &&
        !add2i_like(r, sh, "ram_bytes", table_snap_bytes(snap) + nFts) &&
        !add2i_like(r, sh, "fulltext_ram_bytes", nFts) && !add2i_like(r, sh, "fulltext_terms", nTerms) &&
        !add2i_like(r, sh, "disk_bytes", nWal + nSegBytes) && !add2i_like(r, sh, "wal_bytes", nWal) &&
        !add2i_like(r, sh, "wal_syncs", table_wal_syncs(t)) &&
        !add2i_like(r, sh, "disk_chunks", (uint64_t)nSeg) && !add2i_like(r, sh, "segment_bytes", nSegBytes) &&
        !add2i_like(r, sh, "flushes", nFlush) && !add2i_like(r, sh, "merges", nMerge) &&
        !add2i_like(r, sh, "updates_in_place", table_updates_in_place(t)) &&
        !add2i_like(r, sh, "id_lookup_cells", nFenceCell) && !add2i_like(r, sh, "id_lookup_max_segments", nFenceDepth) &&
        !add2i_like(r, sh, "mem_limit", table_mem_limit(t))) {
        rc = LP_OK;
        if (bRebuild && add2_like(r, sh, "rebuild_embeddings", zRebuild)) rc = LP_NOMEM;
    }
    table_snapshot_release(snap);
    table_unref(t);
    return rc;
}

/* SHOW TABLE t SETTINGS, as Manticore: one row, 'settings', whose value
** is the table's options, one "name = value" line each, in the order
** SHOW CREATE TABLE lists them (rules lists one line per rule). */
static int show_table_settings(SqlSession *s, const ShowStmt *sh, SqlResult *r) {
    static const char *const azCol[] = {"Variable_name", "Value", NULL};
    Table *t = need_table(s, sh, r);
    if (!t) return LP_OK;
    const Schema *sc = table_schema(t);
    StrBuf sb = {0};
    for (int i = 0; i < sc->nOpt; i++) {
        const char *z = sc->aOpt[i].zValue;
        size_t n = strlen(z);
        while (n && z[n - 1] == '\n') n--; /* a rules list's last line break */
        strbuf_appendf(&sb, "%s%s = %.*s", i ? "\n" : "", sc->aOpt[i].zName, (int)n, z);
    }
    int rc = sb.oom || str_columns(r, azCol) || add2_like(r, sh, "settings", sb.z ? sb.z : "") ? LP_NOMEM : LP_OK;
    strbuf_free(&sb);
    table_unref(t);
    return rc;
}

/* Fixed tables for the SHOWs some clients and GUIs send. */
static int show_fixed(const ShowStmt *sh, SqlResult *r) {
    static const char *const azDb[] = {"Database", NULL};
    static const char *const azColl[] = {"Collation", "Charset", "Id", "Default", "Compiled",
                                         "Sortlen", NULL};
    static const char *const azCs[] = {"Charset", "Description", "Default collation", "Maxlen",
                                       NULL};
    static const char *const azEng[] = {"Engine", "Support", "Comment", "Transactions", "XA",
                                        "Savepoints", NULL};
    switch (sh->kind) {
    case SHOW_DATABASES: {
        const char *az[1] = {"loupe"};
        if (str_columns(r, azDb)) return LP_NOMEM;
        if (!sh->zLike || sqlx_like(sh->zLike, "loupe")) return sql_result_add_strs(r, az);
        return LP_OK;
    }
    case SHOW_COLLATION: {
        static const char *const aaRow[][6] = {
            {"utf8mb4_general_ci", "utf8mb4", "45", "Yes", "Yes", "1"},
            {"utf8mb4_bin", "utf8mb4", "46", "", "Yes", "1"},
            {"utf8mb4_unicode_ci", "utf8mb4", "224", "", "Yes", "8"},
        };
        if (str_columns(r, azColl)) return LP_NOMEM;
        for (size_t i = 0; i < LP_ARRAY_SIZE(aaRow); i++) {
            if (sh->zLike && !sqlx_like(sh->zLike, aaRow[i][0])) continue;
            if (sql_result_add_strs(r, aaRow[i])) return LP_NOMEM;
        }
        return LP_OK;
    }
    case SHOW_CHARSET: {
        const char *az[4] = {"utf8mb4", "UTF-8 Unicode", "utf8mb4_general_ci", "4"};
        if (str_columns(r, azCs)) return LP_NOMEM;
        if (!sh->zLike || sqlx_like(sh->zLike, "utf8mb4")) return sql_result_add_strs(r, az);
        return LP_OK;
    }
    default: {
        const char *az[6] = {"loupe", "DEFAULT", "real-time tables: write-ahead log, mmap'd segments",
                             "YES", "NO", "NO"};
        if (str_columns(r, azEng)) return LP_NOMEM;
        return sql_result_add_strs(r, az);
    }
    }
}

void sqlx_show(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const ShowStmt *sh = &st->u.show;
    int rc;
    switch (sh->kind) {
    case SHOW_TABLES: rc = show_tables(s, sh, r); break;
    case SHOW_CREATE_TABLE: rc = show_create(s, sh, r); break;
    case SHOW_DESCRIBE: rc = show_describe(s, sh, r); break;
    case SHOW_STATUS: rc = show_status(s, sh, r); break;
    case SHOW_META: rc = show_meta(s, sh, r); break;
    case SHOW_WARNINGS: rc = show_warnings(s, r); break;
    case SHOW_PLAN: rc = show_plan(s, r); break;
    case SHOW_PROFILE: rc = show_profile(s, r); break;
    case SHOW_TABLE_STATUS: rc = show_table_status(s, sh, r); break;
    case SHOW_TABLE_SETTINGS: rc = show_table_settings(s, sh, r); break;
    default: rc = show_fixed(sh, r); break;
    }
    if (rc != LP_OK && r->kind != SQLRES_ERROR) sqlx_error(r, ER_OUTOFMEMORY, "out of memory");
}
