/*
** http_doc.c — Manticore's JSON document requests, as SQL statements.
**
** Requests (each a JSON object; "index" is a synonym of "table"):
**   /insert   {"table": "t", "id": 1, "doc": {"title": "...", "price": 2.5}}
**             INSERT INTO t (id, title, price) VALUES (1, '...', 2.5); no
**             "id" (or 0): the table's next id, as INSERT without one
**   /replace  the same as REPLACE INTO
**   /update   {"table": "t", "id": 1, "doc": {"price": 3}} or with
**             "query": {...} (a /search query) instead of "id":
**             UPDATE t SET price = 3 WHERE id = 1 (or the query's condition)
**   /delete   {"table": "t", "id": 1} or with "query": DELETE FROM t WHERE ...
** A doc value becomes the literal its column takes, by the table's DESCRIBE:
** a JSON column's value (any JSON) its compact JSON text, a FLOAT_VECTOR's
** array of numbers a vector (x, y, ...), a multi-value's array of integers
** its list (1, 2, ...), every other column's string,
** number, true/false (1/0) or null as itself. Names are checked (letters,
** digits, '_'); the SQL layer checks the rest (unknown columns, types,
** duplicate ids), so errors read as they do over SQL.
**
** Answers, as Manticore's:
**   insert   {"table":"t","_id":1,"created":true,"result":"created","status":201}
**   replace  {"table":"t","_id":1,"created":false,"result":"updated","status":200}
**   update   {"table":"t","_id":1,"result":"updated"|"noop"}, by query {"table":"t","updated":N}
**   delete   {"table":"t","_id":1,"found":true,"result":"deleted"} (or false,
**            "not found"), by query {"table":"t","deleted":N}
**   errors   {"error":{"type":..,"reason":..,"table":..},"status":400}; a
**            duplicate id 409
**
** /bulk takes NDJSON: one {"insert"|"create"|"replace"|"index"|"update"|
** "delete": request} per line. Consecutive insert, replace and delete
** lines on one table are one transaction (a batch), committed when the
** table changes, at an empty line, before an update and at the end: a
** batch's rows are all in or, after an error, none. The first error stops
** the run. The answer, as Manticore's: {"items":[{"bulk":{"table","_id"
** (the batch's last), "created","deleted","updated" (counts), "result",
** "status"}}, ...],"current_line":N (the last line read, from 1),
** "skipped_lines":M (the lines of the batch an error rolled back),
** "errors":bool,"error":".."}.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "server/http/http_int.h"
#include "sql/session.h"

static const char *const azOp[] = {"insert", "replace", "update", "delete"};

const char *http_doc_table(const void *pReq, LpError *err) {
    const json_t *req = pReq;
    const json_t *t = json_is_object(req) ? json_object_get(req, "table") : NULL;
    if (!t && json_is_object(req)) t = json_object_get(req, "index");
    if (!json_is_object(req)) {
        lp_err_set(err, LP_BADINPUT, "the request is not a JSON object");
        return NULL;
    }
    if (!json_is_string(t)) {
        lp_err_set(err, LP_BADINPUT, "the request needs \"table\": the name of the table");
        return NULL;
    }
    return json_string_value(t);
}

/* The type DESCRIBE gives column zName ("" when it has none). */
static const char *col_type(const SqlResult *d, const char *zName) {
    for (size_t i = 0; d && d->kind == SQLRES_ROWS && d->nCol >= 2 && i < d->nRow; i++) {
        const SqlCell *a = d->aCell + i * (size_t)d->nCol;
        if (a[0].z && a[1].z && strcasecmp(a[0].z, zName) == 0) return a[1].z;
    }
    return "";
}

/* doc value v of column zName (DESCRIBE type zType) as an SQL literal. */
static int put_doc_value(StrBuf *sb, const json_t *v, const char *zName, const char *zType, LpError *err) {
    if (!strcmp(zType, "json")) {
        char *z = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!z) return lp_err_set(err, LP_NOMEM, "out of memory");
        http_sql_str(sb, z, strlen(z));
        free(z);
        return LP_OK;
    }
    if (http_sql_scalar(sb, v)) return LP_OK;
    switch (json_typeof(v)) {
    case JSON_NULL: strbuf_appendz(sb, "NULL"); return LP_OK;
    case JSON_ARRAY:
        if (!strcmp(zType, "float_vector")) {
            strbuf_appendc(sb, '(');
            for (size_t i = 0; i < json_array_size(v); i++) {
                const json_t *x = json_array_get(v, i);
                if (!json_is_number(x)) {
                    return lp_err_set(err, LP_BADINPUT, "doc: '%s' is a vector: its array holds numbers only", zName);
                }
                strbuf_appendf(sb, i ? ", %.9g" : "%.9g", json_number_value(x));
            }
            strbuf_appendc(sb, ')');
            return LP_OK;
        }
        if (!strcmp(zType, "mva") || !strcmp(zType, "mva64")) {
            strbuf_appendc(sb, '(');
            for (size_t i = 0; i < json_array_size(v); i++) {
                const json_t *x = json_array_get(v, i);
                if (!json_is_integer(x)) {
                    return lp_err_set(err, LP_BADINPUT, "doc: '%s' is a multi-value: its array holds integers only",
                                      zName);
                }
                strbuf_appendf(sb, i ? ", %" JSON_INTEGER_FORMAT : "%" JSON_INTEGER_FORMAT, json_integer_value(x));
            }
            strbuf_appendc(sb, ')');
            return LP_OK;
        }
        /* fall through */
    default:
        return lp_err_set(err, LP_BADINPUT, "doc: '%s' takes a %s, not a JSON %s", zName,
                          *zType ? zType : "value", json_is_array(v) ? "array" : "object");
    }
}

/* "id": a whole number >= 0 into *pId (0 when absent). */
static int get_id(const json_t *req, int64_t *pId, LpError *err) {
    const json_t *id = json_object_get(req, "id");
    *pId = 0;
    if (!id || json_is_null(id)) return LP_OK;
    if (json_is_string(id)) { /* Elasticsearch clients send ids as strings */
        char *end;
        long long v = strtoll(json_string_value(id), &end, 10);
        if (*end || v < 0 || end == json_string_value(id)) {
            return lp_err_set(err, LP_BADINPUT, "\"id\" must be a whole number, got '%.40s'", json_string_value(id));
        }
        *pId = v;
        return LP_OK;
    }
    if (!json_is_integer(id) || json_integer_value(id) < 0) {
        return lp_err_set(err, LP_BADINPUT, "\"id\" must be a whole number from 0 (0: a new id)");
    }
    *pId = json_integer_value(id);
    return LP_OK;
}

int http_doc_sql(HttpEndpoint op, const void *pReq, const SqlResult *pDescribe, StrBuf *pSql, HttpDoc *d,
                 LpError *err) {
    const json_t *req = pReq;
    memset(d, 0, sizeof(*d));
    d->op = op;
    const char *zTable = http_doc_table(req, err);
    if (!zTable) return LP_BADINPUT;
    snprintf(d->zTable, sizeof(d->zTable), "%s", zTable);
    const char *zOp = azOp[op - HTTP_EP_INSERT];
    int bWrite = op == HTTP_EP_INSERT || op == HTTP_EP_REPLACE;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)req, k, v) {
        if (strcmp(k, "table") && strcmp(k, "index") && strcmp(k, "id") && (op == HTTP_EP_DELETE || strcmp(k, "doc")) &&
            (bWrite || strcmp(k, "query"))) {
            return lp_err_set(err, LP_BADINPUT, "%s: unknown key '%.64s': expected table, id%s%s", zOp, k,
                              op == HTTP_EP_DELETE ? "" : ", doc", bWrite ? "" : " or query");
        }
    }
    if (get_id(req, &d->id, err) != LP_OK) return LP_BADINPUT;
    const json_t *doc = json_object_get(req, "doc"), *q = json_object_get(req, "query");
    if (op != HTTP_EP_DELETE && !json_is_object(doc)) {
        return lp_err_set(err, LP_BADINPUT, "%s needs \"doc\": an object of column values", zOp);
    }
    if (!bWrite) {
        if ((d->id != 0) == (q != NULL)) {
            return lp_err_set(err, LP_BADINPUT, "%s needs the document's \"id\" or a \"query\", one of them", zOp);
        }
        d->bQuery = q != NULL;
    }
    if (op == HTTP_EP_UPDATE && json_object_size(doc) == 0) {
        return lp_err_set(err, LP_BADINPUT, "update: \"doc\" names no column to set");
    }
    int rc = LP_OK;
    if (bWrite) {
        strbuf_appendz(pSql, op == HTTP_EP_INSERT ? "INSERT INTO " : "REPLACE INTO ");
        if ((rc = http_sql_ident(pSql, zTable, strlen(zTable), "table", err)) != LP_OK) return rc;
        strbuf_appendz(pSql, " (id");
        json_object_foreach((json_t *)doc, k, v) {
            if (!strcmp(k, "id")) return lp_err_set(err, LP_BADINPUT, "%s: the id goes in \"id\", beside \"doc\"", zOp);
            strbuf_appendz(pSql, ", ");
            if ((rc = http_sql_ident(pSql, k, strlen(k), "doc: column", err)) != LP_OK) return rc;
        }
        strbuf_appendf(pSql, ") VALUES (%lld", (long long)d->id);
        json_object_foreach((json_t *)doc, k, v) {
            strbuf_appendz(pSql, ", ");
            if ((rc = put_doc_value(pSql, v, k, col_type(pDescribe, k), err)) != LP_OK) return rc;
        }
        strbuf_appendc(pSql, ')');
    } else {
        strbuf_appendz(pSql, op == HTTP_EP_UPDATE ? "UPDATE " : "DELETE FROM ");
        if ((rc = http_sql_ident(pSql, zTable, strlen(zTable), "table", err)) != LP_OK) return rc;
        int n = 0;
        json_object_foreach((json_t *)doc, k, v) {
            strbuf_appendz(pSql, n++ ? ", " : " SET ");
            if ((rc = http_sql_ident(pSql, k, strlen(k), "doc: column", err)) != LP_OK) return rc;
            strbuf_appendz(pSql, " = ");
            if ((rc = put_doc_value(pSql, v, k, col_type(pDescribe, k), err)) != LP_OK) return rc;
        }
        if (d->bQuery) {
            StrBuf w = {0};
            rc = http_search_where(q, &w, err);
            if (rc == LP_OK) {
                strbuf_appendz(pSql, w.n ? " WHERE " : "");
                strbuf_append(pSql, w.z ? w.z : "", w.n);
            }
            strbuf_free(&w);
            if (rc != LP_OK) return rc;
        } else {
            strbuf_appendf(pSql, " WHERE id = %lld", (long long)d->id);
        }
    }
    return pSql->oom ? lp_err_set(err, LP_NOMEM, "out of memory") : LP_OK;
}

void http_doc_answer(StrBuf *sb, const HttpDoc *d, const SqlResult *r, int *pStatus) {
    int64_t id = d->id ? d->id : (int64_t)r->iLastInsertId;
    *pStatus = 200;
    strbuf_appendz(sb, "{\"table\":");
    http_json_str(sb, d->zTable, strlen(d->zTable));
    switch (d->op) {
    case HTTP_EP_INSERT:
        strbuf_appendf(sb, ",\"_id\":%lld,\"created\":true,\"result\":\"created\",\"status\":201}", (long long)id);
        *pStatus = 201;
        return;
    case HTTP_EP_REPLACE:
        /* REPLACE counts 1 for a new row, 2 for one it replaced (as MySQL) */
        strbuf_appendf(sb, ",\"_id\":%lld,\"created\":%s,\"result\":\"%s\",\"status\":%d}", (long long)id,
                       r->nAffected > 1 ? "false" : "true", r->nAffected > 1 ? "updated" : "created",
                       r->nAffected > 1 ? 200 : 201);
        if (r->nAffected <= 1) *pStatus = 201;
        return;
    case HTTP_EP_UPDATE:
        if (d->bQuery) strbuf_appendf(sb, ",\"updated\":%llu}", (unsigned long long)r->nAffected);
        else strbuf_appendf(sb, ",\"_id\":%lld,\"result\":\"%s\"}", (long long)id, r->nAffected ? "updated" : "noop");
        return;
    default:
        if (d->bQuery) {
            strbuf_appendf(sb, ",\"deleted\":%llu}", (unsigned long long)r->nAffected);
        } else {
            strbuf_appendf(sb, ",\"_id\":%lld,\"found\":%s,\"result\":\"%s\"}", (long long)id,
                           r->nAffected ? "true" : "false", r->nAffected ? "deleted" : "not found");
        }
        return;
    }
}

/* ------------------------------------------------------------------ */
/* Running them                                                        */

/* Runs the statement z in s; LP_OK, or the error in *r. */
static void exec_sql(SqlSession *s, const char *z, size_t n, SqlResult *r) {
    sql_result_free(r);
    sql_result_init(r);
    sql_execute(s, z, n, r);
}

/* One request object req of kind op in session s: its table's DESCRIBE,
** its statement, run. LP_OK with the statement's result in *r (an SQL
** error there too, kind SQLRES_ERROR), or a translation error in err. */
static int doc_exec(SqlSession *s, HttpEndpoint op, const json_t *req, HttpDoc *d, SqlResult *r, int *pbExisted,
                    LpError *err) {
    const char *zTable = http_doc_table(req, err);
    if (!zTable) return LP_BADINPUT;
    StrBuf q = {0};
    strbuf_appendz(&q, "DESCRIBE ");
    int rc = http_sql_ident(&q, zTable, strlen(zTable), "table", err);
    if (rc != LP_OK) {
        strbuf_free(&q);
        return rc;
    }
    exec_sql(s, q.z, q.n, r);
    strbuf_reset(&q);
    if (r->kind == SQLRES_ERROR) {
        strbuf_free(&q);
        return LP_OK;
    }
    rc = http_doc_sql(op, req, r, &q, d, err);
    if (rc == LP_OK && op == HTTP_EP_REPLACE && d->id) {
        /* did the row exist? ("created" says) */
        char zSel[160];
        StrBuf t = {0};
        http_sql_ident(&t, zTable, strlen(zTable), "table", err);
        snprintf(zSel, sizeof(zSel), "SELECT id FROM %.*s WHERE id = %lld", (int)t.n, t.z ? t.z : "", (long long)d->id);
        strbuf_free(&t);
        exec_sql(s, zSel, strlen(zSel), r);
        *pbExisted = r->kind == SQLRES_ROWS && r->nRow > 0;
    }
    if (rc == LP_OK) exec_sql(s, q.z, q.n, r);
    strbuf_free(&q);
    return rc;
}

/* The error answer for a translation error (err) or an SQL one (r). */
static int error_answer(StrBuf *sb, int rc, const LpError *err, const SqlResult *r, const char *zTable) {
    if (rc == LP_NOMEM || (rc == LP_OK && http_status_for_result(r) >= 500)) {
        http_search_error(sb, "internal_error", rc != LP_OK ? err->zMsg : r->zErr, zTable);
        return 500;
    }
    if (rc != LP_OK) {
        http_search_error(sb, "parse_exception", err->zMsg, zTable);
        return 400;
    }
    int bDup = r->iErrno == 1062;
    http_search_error(sb, bDup ? "version_conflict_engine_exception" : "query_exception", r->zErr, zTable);
    if (bDup) { /* the status in the body says 409 too */
        if (sb->n >= 4 && !memcmp(sb->z + sb->n - 4, "400}", 4)) memcpy(sb->z + sb->n - 4, "409}", 4);
        return 409;
    }
    return 400;
}

static int run_one(SqlSession *s, HttpEndpoint ep, const char *z, size_t n, StrBuf *out) {
    json_error_t je;
    json_t *req = json_loadb(z, n, JSON_REJECT_DUPLICATES, &je);
    if (!req) {
        char zMsg[300];
        snprintf(zMsg, sizeof(zMsg), "the request is not JSON: %s at byte %d", je.text, je.position);
        http_search_error(out, "parse_exception", zMsg, NULL);
        return 400;
    }
    SqlResult r;
    sql_result_init(&r);
    HttpDoc d;
    memset(&d, 0, sizeof(d));
    LpError err;
    lp_err_clear(&err);
    int bExisted = 0;
    int rc = doc_exec(s, ep, req, &d, &r, &bExisted, &err);
    int status;
    if (rc != LP_OK || r.kind == SQLRES_ERROR) {
        const char *zTable = http_doc_table(req, &err);
        status = error_answer(out, rc, &err, &r, zTable);
    } else {
        if (ep == HTTP_EP_REPLACE) r.nAffected = bExisted ? 2 : 1;
        http_doc_answer(out, &d, &r, &status);
    }
    sql_result_free(&r);
    json_decref(req);
    return status;
}

/* A /bulk batch's tally. */
typedef struct Batch {
    int bOpen;              /* a transaction is open */
    char zTable[72];
    int64_t lastId;
    uint64_t nCreated, nUpdated, nDeleted;
    int nLines;             /* lines in it */
    int nItems;             /* items written to the answer */
} Batch;

/* Closes the batch: COMMIT when one is open, then its item. */
static int batch_close(SqlSession *s, Batch *b, StrBuf *items, SqlResult *r) {
    if (b->bOpen) {
        exec_sql(s, "COMMIT", 6, r);
        b->bOpen = 0;
        if (r->kind == SQLRES_ERROR) return 0;
    }
    if (b->nLines) {
        strbuf_appendz(items, b->nItems++ ? ",{\"bulk\":{\"table\":" : "{\"bulk\":{\"table\":");
        http_json_str(items, b->zTable, strlen(b->zTable));
        int bCreated = b->nCreated > 0 && !b->nUpdated && !b->nDeleted;
        strbuf_appendf(items, ",\"_id\":%lld,\"created\":%llu,\"deleted\":%llu,\"updated\":%llu,\"result\":\"%s\","
                       "\"status\":%d}}",
                       (long long)b->lastId, (unsigned long long)b->nCreated, (unsigned long long)b->nDeleted,
                       (unsigned long long)b->nUpdated,
                       bCreated ? "created" : b->nDeleted && !b->nCreated && !b->nUpdated ? "deleted" : "updated",
                       bCreated ? 201 : 200);
    }
    b->nLines = 0;
    b->nCreated = b->nUpdated = b->nDeleted = 0;
    return 1;
}

static int run_bulk(SqlSession *s, const char *z, size_t n, StrBuf *out) {
    static const struct {
        const char *zKey;
        HttpEndpoint op;
    } aKind[] = {{"insert", HTTP_EP_INSERT}, {"create", HTTP_EP_INSERT}, {"replace", HTTP_EP_REPLACE},
                 {"index", HTTP_EP_REPLACE}, {"update", HTTP_EP_UPDATE}, {"delete", HTTP_EP_DELETE}};
    StrBuf items = {0};
    SqlResult r;
    sql_result_init(&r);
    Batch b;
    memset(&b, 0, sizeof(b));
    char zErr[LP_ERRMSG_MAX + 64] = "";
    int line = 0, skipped = 0;
    for (size_t i = 0; i < n && !zErr[0];) {
        const char *p = z + i, *e = memchr(p, '\n', n - i);
        size_t len = e ? (size_t)(e - p) : n - i;
        i += len + (e != NULL);
        line++;
        while (len && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
        size_t k = 0;
        while (k < len && (p[k] == ' ' || p[k] == '\t')) k++;
        if (k == len) { /* an empty line ends a batch */
            if (!batch_close(s, &b, &items, &r)) {
                snprintf(zErr, sizeof(zErr), "%s", r.zErr);
                skipped = b.nLines;
            }
            continue;
        }
        json_error_t je;
        json_t *obj = json_loadb(p, len, JSON_REJECT_DUPLICATES, &je);
        const char *zKey = json_is_object(obj) && json_object_size(obj) == 1
                               ? json_object_iter_key(json_object_iter(obj)) : NULL;
        size_t kk = 0;
        while (zKey && kk < sizeof(aKind) / sizeof(aKind[0]) && strcmp(zKey, aKind[kk].zKey)) kk++;
        if (!zKey || kk == sizeof(aKind) / sizeof(aKind[0])) {
            if (!obj) snprintf(zErr, sizeof(zErr), "line %d is not JSON: %s at byte %d", line, je.text, je.position);
            else snprintf(zErr, sizeof(zErr), "line %d: expected one of insert, create, replace, index, update or delete "
                                              "holding the request", line);
            json_decref(obj);
            break;
        }
        HttpEndpoint op = aKind[kk].op;
        const json_t *req = json_object_iter_value(json_object_iter(obj));
        LpError err;
        lp_err_clear(&err);
        const char *zTable = http_doc_table(req, &err);
        /* a batch is one table's inserts, replaces and deletes */
        if (b.nLines && (op == HTTP_EP_UPDATE || !zTable || strcmp(zTable, b.zTable) != 0)) {
            if (!batch_close(s, &b, &items, &r)) {
                snprintf(zErr, sizeof(zErr), "%s", r.zErr);
                skipped = b.nLines;
                json_decref(obj);
                break;
            }
        }
        if (zTable && op != HTTP_EP_UPDATE && !b.bOpen) {
            exec_sql(s, "BEGIN", 5, &r);
            b.bOpen = r.kind != SQLRES_ERROR;
        }
        HttpDoc d;
        memset(&d, 0, sizeof(d));
        int bExisted = 0;
        int rc = zTable ? doc_exec(s, op, req, &d, &r, &bExisted, &err) : LP_BADINPUT;
        b.nLines++;
        if (rc != LP_OK || r.kind == SQLRES_ERROR) {
            snprintf(zErr, sizeof(zErr), "line %d: %s", line, rc != LP_OK ? err.zMsg : r.zErr);
            json_decref(obj);
            break;
        }
        snprintf(b.zTable, sizeof(b.zTable), "%s", d.zTable);
        b.lastId = d.id ? d.id : (int64_t)r.iLastInsertId;
        if (op == HTTP_EP_INSERT || (op == HTTP_EP_REPLACE && !bExisted)) b.nCreated += r.nAffected;
        else if (op == HTTP_EP_DELETE) b.nDeleted += r.nAffected;
        else b.nUpdated += r.nAffected;
        json_decref(obj);
        if (op == HTTP_EP_UPDATE && !batch_close(s, &b, &items, &r)) {
            snprintf(zErr, sizeof(zErr), "%s", r.zErr);
            skipped = b.nLines;
        }
    }
    if (!zErr[0] && !batch_close(s, &b, &items, &r)) {
        snprintf(zErr, sizeof(zErr), "%s", r.zErr);
        skipped = b.nLines;
    } else if (zErr[0] && b.bOpen) { /* the batch the error stopped: undone */
        exec_sql(s, "ROLLBACK", 8, &r);
        skipped = b.nLines;
    }
    strbuf_appendz(out, "{\"items\":[");
    strbuf_append(out, items.z ? items.z : "", items.n);
    strbuf_appendf(out, "],\"current_line\":%d,\"skipped_lines\":%d,\"errors\":%s,\"error\":", line, skipped,
                   zErr[0] ? "true" : "false");
    http_json_str(out, zErr, strlen(zErr));
    strbuf_appendc(out, '}');
    strbuf_free(&items);
    sql_result_free(&r);
    return zErr[0] ? 400 : 200;
}

int http_doc_run(SqlSession *s, HttpEndpoint ep, const char *z, size_t n, StrBuf *out) {
    return ep == HTTP_EP_BULK ? run_bulk(s, z, n, out) : run_one(s, ep, z, n, out);
}
