/*
** test_http.c — unit tests for the socket-free parts of src/server/http
** (http_int.h): form decoding, the JSON encoding of SQL results, and the
** request routing steps. The MHD listener itself is tested end to end by
** the integration suite (curl against the real server).
**
** Every JSON document produced here is also parsed back with jansson, so
** a test fails on invalid JSON even where it does not compare the text
** (numbers jansson finds too big to hold are accepted: JSON has no limit).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "server/http/http_int.h"
#include "sql/result.h"
#include "util/strbuf.h"

/* ------------------------------------------------------------- helpers */

/* Asserts that sb holds exactly zWant and that it parses as JSON. */
static void assert_json(const StrBuf *sb, const char *zWant) {
    assert_false(sb->oom);
    assert_non_null(sb->z);
    if (zWant) assert_string_equal(sb->z, zWant);
    json_error_t jerr;
    json_t *j = json_loadb(sb->z, sb->n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    /* jansson refuses numbers beyond int64 / double range ("too big
    ** integer"); they are still valid JSON, which is all we check. */
    if (j == NULL && json_error_code(&jerr) == json_error_numeric_overflow) return;
    if (j == NULL) fail_msg("invalid JSON (%s at %d): %s", jerr.text, jerr.position, sb->z);
    json_decref(j);
}

/* Decodes z with http_url_decode; returns rc, the output in *pOut. */
static int url_decode(const char *z, int bPlus, StrBuf *pOut, LpError *err) {
    strbuf_reset(pOut);
    return http_url_decode(z, strlen(z), bPlus, pOut, err);
}

static int form_get(const char *z, const char *zName, StrBuf *pOut, LpError *err) {
    strbuf_reset(pOut);
    return http_form_get(z, strlen(z), zName, pOut, err);
}

/* ---------------------------------------------------------- url decode */

static void test_url_decode(void **state) {
    StrBuf sb = {0};
    LpError err;
    assert_int_equal(url_decode("a+b%20c%41%7e%7E", 1, &sb, &err), LP_OK);
    assert_string_equal(sb.z, "a b cA~~");
    assert_int_equal(url_decode("a+b%2B", 0, &sb, &err), LP_OK);
    assert_string_equal(sb.z, "a+b+");
    assert_int_equal(url_decode("", 1, &sb, &err), LP_OK);
    assert_int_equal(sb.n, 0);
    /* A %00 is a byte like any other: the length says where the text ends. */
    assert_int_equal(url_decode("x%00y%FF", 1, &sb, &err), LP_OK);
    assert_int_equal(sb.n, 4);
    assert_memory_equal(sb.z, "x\0y\xff", 4);
    strbuf_free(&sb);
}

static void test_url_decode_malformed(void **state) {
    static const struct {
        const char *z;
        int64_t pos;
    } aBad[] = {
        {"%", 0},      {"%4", 0},     {"%4g", 0},  {"%g4", 0},
        {"abc%zz", 3}, {"ok%41%", 5}, {"%%41", 0}, {"a% 20", 1},
    };
    StrBuf sb = {0};
    for (size_t i = 0; i < LP_ARRAY_SIZE(aBad); i++) {
        LpError err;
        lp_err_clear(&err);
        assert_int_equal(url_decode(aBad[i].z, 1, &sb, &err), LP_BADINPUT);
        assert_int_equal(err.code, LP_BADINPUT);
        assert_int_equal(err.pos, aBad[i].pos);
        assert_non_null(strstr(err.zMsg, "malformed %-escape"));
        /* Nothing of a failed decode is committed. */
        assert_int_equal(sb.n, 0);
    }
    strbuf_free(&sb);
}

/* ------------------------------------------------------------ form_get */

static void test_form_get(void **state) {
    StrBuf sb = {0};
    LpError err;
    assert_int_equal(form_get("mode=raw&query=SELECT+*+FROM+t+WHERE+a%3D1", "query", &sb, &err),
                     LP_OK);
    assert_string_equal(sb.z, "SELECT * FROM t WHERE a=1");
    assert_int_equal(form_get("mode=raw&query=x", "mode", &sb, &err), LP_OK);
    assert_string_equal(sb.z, "raw");
    /* An escaped '&' or '=' belongs to the value. */
    assert_int_equal(form_get("query=a%26b%3Dc=d&x=1", "query", &sb, &err), LP_OK);
    assert_string_equal(sb.z, "a&b=c=d");
    /* The first of two fields wins; empty fields are skipped. */
    assert_int_equal(form_get("&&query=first&query=second&", "query", &sb, &err), LP_OK);
    assert_string_equal(sb.z, "first");
    /* Names are decoded too. */
    assert_int_equal(form_get("qu%65ry=1", "query", &sb, &err), LP_OK);
    assert_string_equal(sb.z, "1");
    assert_int_equal(form_get("my+name=v", "my name", &sb, &err), LP_OK);
    assert_string_equal(sb.z, "v");
    /* Empty value, and a field without '='. */
    assert_int_equal(form_get("query=", "query", &sb, &err), LP_OK);
    assert_int_equal(sb.n, 0);
    assert_non_null(sb.z);
    assert_int_equal(form_get("a=1&query", "query", &sb, &err), LP_OK);
    assert_int_equal(sb.n, 0);
    strbuf_free(&sb);
}

static void test_form_get_absent_or_bad(void **state) {
    StrBuf sb = {0};
    LpError err;
    assert_int_equal(form_get("", "query", &sb, &err), LP_NOTFOUND);
    assert_int_equal(form_get("a=1&b=2", "query", &sb, &err), LP_NOTFOUND);
    assert_int_equal(form_get("xquery=1&queryx=2&quer=3", "query", &sb, &err), LP_NOTFOUND);
    assert_int_equal(form_get("SELECT * FROM t WHERE a=1", "query", &sb, &err), LP_NOTFOUND);
    /* A name that does not decode matches nothing, and is not an error. */
    assert_int_equal(form_get("qu%zzry=1", "query", &sb, &err), LP_NOTFOUND);
    /* Another field's malformed value does not matter... */
    assert_int_equal(form_get("a=%zz&query=ok", "query", &sb, &err), LP_OK);
    assert_string_equal(sb.z, "ok");
    /* ...but the wanted one's does, with its offset in the whole form. */
    lp_err_clear(&err);
    assert_int_equal(form_get("a=1&query=SELECT+%2", "query", &sb, &err), LP_BADINPUT);
    assert_int_equal(err.pos, 17);
    assert_non_null(strstr(err.zMsg, "'query'"));
    assert_non_null(strstr(err.zMsg, "byte 17"));
    strbuf_free(&sb);
}

/* ----------------------------------------------------------------- JSON */

static void test_json_str(void **state) {
    static const struct {
        const char *z;
        size_t n;
        const char *zWant;
    } aCase[] = {
        {"plain", 5, "\"plain\""},
        {"", 0, "\"\""},
        {"q\"b\\s/", 6, "\"q\\\"b\\\\s/\""},
        {"\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\""},
        {"\x01\x1f\x7f", 3, "\"\\u0001\\u001f\x7f\""},
        {"a\0b", 3, "\"a\\u0000b\""},
        /* Valid UTF-8 passes through: 2, 3 and 4-byte sequences. */
        {"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80", 9, "\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\""},
        {"\xef\xbf\xbf\xf4\x8f\xbf\xbf", 7, "\"\xef\xbf\xbf\xf4\x8f\xbf\xbf\""},
        /* Invalid UTF-8 becomes U+FFFD, one per bad byte. */
        {"a\xff"
         "b",
         3,
         "\"a\xef\xbf\xbd"
         "b\""},
        {"\xc0\x80", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\""},                 /* overlong NUL */
        {"\xe0\x80\xaf", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* overlong '/' */
        {"\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* surrogate */
        {"\xf4\x90\x80\x80", 4,
         "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* > U+10FFFF */
        {"\xe2\x82", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\""},          /* truncated */
        {"\xe2\x82x", 3, "\"\xef\xbf\xbd\xef\xbf\xbdx\""},
        {"\x80", 1, "\"\xef\xbf\xbd\""}, /* lone continuation */
    };
    for (size_t i = 0; i < LP_ARRAY_SIZE(aCase); i++) {
        StrBuf sb = {0};
        http_json_str(&sb, aCase[i].z, aCase[i].n);
        assert_json(&sb, aCase[i].zWant);
        strbuf_free(&sb);
    }
}

static void test_json_is_number(void **state) {
    static const char *const aYes[] = {
        "0",
        "-0",
        "1",
        "-1",
        "42",
        "0.5",
        "-0.5",
        "1e5",
        "1E+5",
        "1e-5",
        "2.50",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551615",
        "3.4028235e+38",
        "0.000001",
        "1.0E-45",
    };
    static const char *const aNo[] = {
        "",    "-",    "+1",  "01",  "-01", ".5", "5.",  "1e",  "1e+",   "1.e5", "0x10",
        "inf", "-inf", "nan", "NaN", " 1",  "1 ", "1,2", "--1", "1e5.5", "١",
    };
    for (size_t i = 0; i < LP_ARRAY_SIZE(aYes); i++)
        if (!http_json_is_number(aYes[i], strlen(aYes[i])))
            fail_msg("'%s' is a JSON number", aYes[i]);
    for (size_t i = 0; i < LP_ARRAY_SIZE(aNo); i++)
        if (http_json_is_number(aNo[i], strlen(aNo[i])))
            fail_msg("'%s' is not a JSON number", aNo[i]);
}

/* One column per SqlColType and rows of cells for it. */
static void test_json_result_rows(void **state) {
    static const struct {
        const char *zName;
        SqlColType type;
    } aCol[] = {
        {"id", SQLCOL_BIGINT}, {"n", SQLCOL_INT},    {"b", SQLCOL_BOOL},
        {"f", SQLCOL_FLOAT},   {"d", SQLCOL_DOUBLE}, {"ts", SQLCOL_TIMESTAMP},
        {"s", SQLCOL_STRING},  {"j", SQLCOL_JSON},   {"v", SQLCOL_VECTOR},
    };
    /* NULL entries are SQL NULL. */
    static const char *const aaRow[][9] = {
        {"1", "-7", "1", "0.1", "0.30000000000000004", "1700000000", "x", "{\"a\":[1,2.50]}",
         "1,0.5,-2"},
        {"-9223372036854775808", "2147483647", "0", "-1.5e-07", "1e300", "0", "say \"hi\"\n", "[]",
         ""},
        {"2", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
        {"3", "7", "1", "inf", "nan", "0", "\xe4\xb8\xad\xff", "{bad", "1,,2"},
        {"4", "8", "1", "2", "3", "5", "", "\"str\"", " 1 , 2 "},
    };
    SqlResult r;
    sql_result_init(&r);
    assert_int_equal(sql_result_columns(&r, 9), LP_OK);
    for (int c = 0; c < 9; c++)
        assert_int_equal(sql_result_column(&r, c, aCol[c].zName, aCol[c].type, 0), LP_OK);
    for (size_t i = 0; i < LP_ARRAY_SIZE(aaRow); i++) {
        SqlCell *row = sql_result_row(&r);
        assert_non_null(row);
        for (int c = 0; c < 9; c++)
            assert_int_equal(sql_result_cell_str(&r, &row[c], aaRow[i][c]), LP_OK);
    }
    StrBuf sb = {0};
    http_json_result(&sb, &r);
    assert_json(
        &sb,
        "[{\"columns\":[{\"id\":{\"type\":\"long long\"}},{\"n\":{\"type\":\"long\"}},"
        "{\"b\":{\"type\":\"bool\"}},{\"f\":{\"type\":\"float\"}},{\"d\":{\"type\":\"double\"}},"
        "{\"ts\":{\"type\":\"timestamp\"}},{\"s\":{\"type\":\"string\"}},{\"j\":{\"type\":\"json\"}"
        "},"
        "{\"v\":{\"type\":\"float_vector\"}}],\"data\":["
        "{\"id\":1,\"n\":-7,\"b\":1,\"f\":0.1,\"d\":0.30000000000000004,\"ts\":1700000000,\"s\":"
        "\"x\","
        "\"j\":{\"a\":[1,2.50]},\"v\":[1,0.5,-2]},"
        "{\"id\":-9223372036854775808,\"n\":2147483647,\"b\":0,\"f\":-1.5e-07,\"d\":1e300,\"ts\":0,"
        "\"s\":\"say \\\"hi\\\"\\n\",\"j\":[],\"v\":[]},"
        "{\"id\":2,\"n\":null,\"b\":null,\"f\":null,\"d\":null,\"ts\":null,\"s\":null,\"j\":null,"
        "\"v\":null},"
        "{\"id\":3,\"n\":7,\"b\":1,\"f\":\"inf\",\"d\":\"nan\",\"ts\":0,\"s\":"
        "\"\xe4\xb8\xad\xef\xbf\xbd\","
        "\"j\":\"{bad\",\"v\":\"1,,2\"},"
        "{\"id\":4,\"n\":8,\"b\":1,\"f\":2,\"d\":3,\"ts\":5,\"s\":\"\",\"j\":\"str\",\"v\":[1,2]}"
        "],\"total\":5,\"error\":\"\",\"warning\":\"\"}]");
    assert_int_equal(http_status_for_result(&r), 200);
    strbuf_free(&sb);

    /* No rows, and odd column names. */
    sql_result_reset(&r);
    assert_int_equal(sql_result_columns(&r, 1), LP_OK);
    assert_int_equal(sql_result_column(&r, 0, "count(*) \"x\"", SQLCOL_BIGINT, 0), LP_OK);
    http_json_result(&sb, &r);
    assert_json(&sb,
                "[{\"columns\":[{\"count(*) \\\"x\\\"\":{\"type\":\"long long\"}}],\"data\":[],"
                "\"total\":0,\"error\":\"\",\"warning\":\"\"}]");
    strbuf_free(&sb);
    sql_result_free(&r);
}

static void test_json_result_ok_error(void **state) {
    SqlResult r;
    sql_result_init(&r);
    r.nAffected = 3;
    r.iLastInsertId = 18446744073709551615ull;
    StrBuf sb = {0};
    http_json_result(&sb, &r);
    assert_json(
        &sb,
        "[{\"total\":3,\"error\":\"\",\"warning\":\"\",\"last_insert_id\":18446744073709551615}]");
    assert_int_equal(http_status_for_result(&r), 200);
    strbuf_free(&sb);

    sql_result_error(&r, 1064, "42000", "near 'FORM t' at line 1 col 10: expected \"FROM\"\t\xff");
    http_json_result(&sb, &r);
    assert_json(
        &sb, "{\"error\":\"near 'FORM t' at line 1 col 10: expected \\\"FROM\\\"\\t\xef\xbf\xbd\","
             "\"code\":1064,\"sqlstate\":\"42000\"}");
    assert_int_equal(http_status_for_result(&r), 400);
    strbuf_free(&sb);

    static const struct {
        int iErrno;
        int status;
    } aStatus[] = {{1146, 400}, {1062, 400}, {1366, 400}, {1153, 400}, {1105, 500},
                   {1037, 500}, {1041, 500}, {1815, 500}, {2013, 500}};
    for (size_t i = 0; i < LP_ARRAY_SIZE(aStatus); i++) {
        sql_result_error(&r, aStatus[i].iErrno, NULL, "m");
        assert_int_equal(http_status_for_result(&r), aStatus[i].status);
    }
    sql_result_free(&r);
}

static void test_json_misc(void **state) {
    StrBuf sb = {0};
    http_json_error(&sb, "no \"such\" endpoint", 18);
    assert_json(&sb, "{\"error\":\"no \\\"such\\\" endpoint\"}");
    strbuf_reset(&sb);
    http_json_health(&sb, 42);
    assert_json(&sb, "{\"status\":\"ok\",\"version\":\"" LOUPE_VERSION "\",\"uptime\":42}");
    strbuf_free(&sb);
}

/* -------------------------------------------------------------- routing */

typedef struct Route {
    int begin;      /* status from http_req_begin */
    int body;       /* first non-zero status from http_req_body, or 0 */
    HttpAction act; /* from http_req_finish, when begin and body passed */
} Route;

/* Runs a request through the three steps, the body in chunks of nChunk. */
static Route route(HttpReq *q, size_t nMax, const char *zMethod, const char *zUri,
                   const char *zType, const char *zLen, const char *zBody, size_t nChunk) {
    Route r = {0};
    http_req_free(q);
    http_req_init(q, nMax);
    r.begin = http_req_begin(q, zMethod, zUri, strlen(zUri), zType, zLen);
    if (r.begin) return r;
    size_t n = zBody ? strlen(zBody) : 0;
    for (size_t i = 0; i < n && r.body == 0; i += nChunk)
        r.body = http_req_body(q, zBody + i, n - i < nChunk ? n - i : nChunk);
    if (r.body) return r;
    r.act = http_req_finish(q);
    return r;
}

/* Asserts that the request ends running zSql. */
static void assert_sql(const HttpReq *q, Route r, const char *zSql) {
    assert_int_equal(r.begin, 0);
    assert_int_equal(r.body, 0);
    assert_int_equal(r.act, HTTP_ACT_SQL);
    assert_int_equal(q->nSql, strlen(zSql));
    assert_memory_equal(q->zSql, zSql, q->nSql);
    assert_int_equal(q->zSql[q->nSql], 0);
}

static void test_route_sql(void **state) {
    static const char zForm[] = "application/x-www-form-urlencoded";
    HttpReq q;
    http_req_init(&q, 1000);
    /* Raw body, whatever the type (curl -d labels it a form). */
    assert_sql(&q, route(&q, 1000, "POST", "/sql?mode=raw", zForm, NULL, "SHOW TABLES", 3),
               "SHOW TABLES");
    assert_sql(&q, route(&q, 1000, "POST", "/sql", "text/plain", NULL, "SELECT a=1 FROM t", 100),
               "SELECT a=1 FROM t");
    /* Form body: by its prefix, or by its type with a query field. */
    assert_sql(&q, route(&q, 1000, "POST", "/sql", NULL, NULL, "query=SELECT+%2A+FROM+t", 2),
               "SELECT * FROM t");
    assert_sql(&q,
               route(&q, 1000, "POST", "/sql", "Application/X-WWW-Form-Urlencoded; charset=UTF-8",
                     NULL, "mode=raw&query=SHOW+TABLES", 5),
               "SHOW TABLES");
    /* The URL's query= when there is no body; the body wins otherwise. */
    assert_sql(&q,
               route(&q, 1000, "GET", "/sql?query=SELECT%201%2B1&mode=raw", NULL, NULL, NULL, 1),
               "SELECT 1+1");
    assert_sql(&q, route(&q, 1000, "POST", "/sql?query=SELECT+1", NULL, NULL, "SELECT 2", 1),
               "SELECT 2");
    assert_sql(&q, route(&q, 1000, "GET", "http://localhost:9308/sql?query=x", NULL, NULL, NULL, 1),
               "x");
    /* /cli_json never decodes; bytes (even invalid UTF-8) go through. */
    assert_sql(&q, route(&q, 1000, "POST", "/cli_json", zForm, NULL, "query=SELECT+1", 4),
               "query=SELECT+1");
    assert_sql(&q, route(&q, 1000, "POST", "/sql", NULL, NULL, "SELECT '\xff\xfe'", 4),
               "SELECT '\xff\xfe'");
    /* An escaped path still routes. */
    assert_sql(&q, route(&q, 1000, "POST", "/%73ql", NULL, NULL, "x", 4), "x");
    http_req_free(&q);
}

static void test_route_refusals(void **state) {
    HttpReq q;
    http_req_init(&q, 10);
    Route r;

    r = route(&q, 10, "GET", "/nope", NULL, NULL, NULL, 1);
    assert_int_equal(r.begin, 404);
    assert_json(&q.reply,
                "{\"error\":\"unknown endpoint '/nope': try /sql, /cli_json, /search, /autocomplete, /insert, /replace, /update, /delete, /bulk or /health\"}");
    assert_int_equal(route(&q, 10, "GET", "/sql/", NULL, NULL, NULL, 1).begin, 404);
    assert_int_equal(route(&q, 10, "GET", "/sql%00x", NULL, NULL, NULL, 1).begin, 404);
    assert_json(&q.reply,
                "{\"error\":\"unknown endpoint '/sql\\u0000x': try /sql, /cli_json, /search, /autocomplete, /insert, /replace, /update, /delete, /bulk or /health\"}");
    assert_int_equal(route(&q, 10, "GET", "/SQL", NULL, NULL, NULL, 1).begin, 404);
    assert_int_equal(route(&q, 10, "GET", "", NULL, NULL, NULL, 1).begin, 404);

    r = route(&q, 10, "DELETE", "/sql", NULL, NULL, NULL, 1);
    assert_int_equal(r.begin, 405);
    assert_string_equal(q.zAllow, "GET, POST");
    assert_json(&q.reply, NULL);
    assert_int_equal(route(&q, 10, "GET", "/cli_json", NULL, NULL, NULL, 1).begin, 405);
    assert_int_equal(route(&q, 10, "POST", "/health", NULL, NULL, NULL, 1).begin, 405);
    assert_int_equal(route(&q, 10, "HEAD", "/sql", NULL, NULL, NULL, 1).begin, 405);

    /* Too large: declared, or counted as it arrives (body limit 10). */
    r = route(&q, 10, "POST", "/sql", NULL, "11", "x", 1);
    assert_int_equal(r.begin, 413);
    assert_json(&q.reply, "{\"error\":\"request body too large: the limit is 10 bytes\"}");
    assert_int_equal(route(&q, 10, "POST", "/sql", NULL, "99999999999999999999999", NULL, 1).begin,
                     413);
    r = route(&q, 10, "POST", "/sql", NULL, NULL, "SELECT 1234567", 4);
    assert_int_equal(r.body, 0);
    assert_int_equal(r.act, HTTP_ACT_REPLY);
    assert_int_equal(q.status, 413);
    assert_null(q.body.z);
    /* The rest of an oversized body is drained, up to HTTP_DRAIN_MAX... */
    char *aBig = calloc(1, HTTP_DRAIN_MAX);
    assert_non_null(aBig);
    assert_int_equal(q.nDrained, 6);
    assert_int_equal(http_req_body(&q, aBig, HTTP_DRAIN_MAX - 6), 0);
    /* ...then the refusal is answered at once, and sticks. */
    assert_int_equal(http_req_body(&q, "x", 1), 413);
    assert_int_equal(http_req_body(&q, "x", 1), 413);
    assert_int_equal(q.nBody, 8);
    /* A first chunk that is too big already. */
    http_req_free(&q);
    http_req_init(&q, 10);
    assert_int_equal(http_req_begin(&q, "POST", "/sql", 4, NULL, NULL), 0);
    assert_int_equal(http_req_body(&q, aBig, HTTP_DRAIN_MAX), 0);
    http_req_free(&q);
    http_req_init(&q, 10);
    assert_int_equal(http_req_begin(&q, "POST", "/sql", 4, NULL, NULL), 0);
    assert_int_equal(http_req_body(&q, aBig, HTTP_DRAIN_MAX + 1), 413);
    assert_non_null(strstr(q.reply.z, "too large"));
    free(aBig);
    assert_sql(&q, route(&q, 10, "POST", "/sql", NULL, "10", "SELECT 123", 3), "SELECT 123");
    /* The health check counts a body but does not keep it. */
    assert_int_equal(route(&q, 10, "GET", "/health", NULL, NULL, "0123456789", 3).act,
                     HTTP_ACT_HEALTH);
    assert_null(q.body.z);
    r = route(&q, 10, "GET", "/health", NULL, NULL, "0123456789A", 3);
    assert_int_equal(r.act, HTTP_ACT_REPLY);
    assert_int_equal(q.status, 413);

    /* Malformed escapes: in the path, the URL's query, a form body. */
    r = route(&q, 10, "GET", "/sq%l", NULL, NULL, NULL, 1);
    assert_int_equal(r.begin, 400);
    assert_non_null(strstr(q.reply.z, "request path: malformed %-escape at byte 3"));
    r = route(&q, 10, "GET", "/sql?query=%G1", NULL, NULL, NULL, 1);
    assert_int_equal(r.begin, 400);
    assert_non_null(
        strstr(q.reply.z, "URL query string: malformed %-escape in field 'query' at byte 6"));
    r = route(&q, 10, "POST", "/sql", NULL, NULL, "query=%", 1);
    assert_int_equal(r.act, HTTP_ACT_REPLY);
    assert_int_equal(q.status, 400);
    assert_non_null(strstr(q.reply.z, "form body: malformed"));
    http_req_free(&q);
}

static void test_route_empty(void **state) {
    static const char zEmpty[] =
        "{\"error\":\"Query was empty\",\"code\":1065,\"sqlstate\":\"42000\"}";
    HttpReq q;
    http_req_init(&q, 100);
    const char *aUri[] = {"/sql", "/sql?query=", "/sql?mode=raw", "/sql?query"};
    for (size_t i = 0; i < LP_ARRAY_SIZE(aUri); i++) {
        Route r = route(&q, 100, "GET", aUri[i], NULL, NULL, NULL, 1);
        assert_int_equal(r.act, HTTP_ACT_REPLY);
        assert_int_equal(q.status, 400);
        assert_json(&q.reply, zEmpty);
    }
    Route r = route(&q, 100, "POST", "/sql", NULL, NULL, "query=", 1);
    assert_int_equal(r.act, HTTP_ACT_REPLY);
    assert_json(&q.reply, zEmpty);
    r = route(&q, 100, "POST", "/cli_json", NULL, NULL, NULL, 1);
    assert_int_equal(r.act, HTTP_ACT_REPLY);
    assert_json(&q.reply, zEmpty);
    http_req_free(&q);
}

/* The SELECT a /search request becomes, or "ERR <message>". */
static const char *search_sql(const char *zReq) {
    static char zOut[1024];
    StrBuf sql = {0};
    HttpSearch hs;
    LpError err;
    lp_err_clear(&err);
    if (http_search_sql(zReq, strlen(zReq), &sql, &hs, &err) == LP_OK) {
        snprintf(zOut, sizeof(zOut), "%.*s", (int)sql.n, sql.z);
        http_search_free(&hs);
    } else {
        snprintf(zOut, sizeof(zOut), "ERR %s", err.zMsg);
    }
    strbuf_free(&sql);
    return zOut;
}

/* The CALL an /autocomplete request becomes, or "ERR <message>"; and
** through the router, which answers a bad one itself. */
static const char *autocomplete_sql(const char *zReq) {
    static char zOut[1024];
    StrBuf sql = {0};
    LpError err;
    lp_err_clear(&err);
    if (http_autocomplete_sql(zReq, strlen(zReq), &sql, &err) == LP_OK) {
        snprintf(zOut, sizeof(zOut), "%.*s", (int)sql.n, sql.z);
    } else {
        snprintf(zOut, sizeof(zOut), "ERR %.1000s", err.zMsg);
    }
    strbuf_free(&sql);
    return zOut;
}

static void test_autocomplete_sql(void **state) {
    (void)state;
    assert_string_equal(autocomplete_sql("{\"table\":\"t\",\"query\":\"hel\"}"), "CALL AUTOCOMPLETE('hel', 't')");
    assert_string_equal(autocomplete_sql("{\"index\":\"t\",\"query\":\"it's\",\"options\":{\"fuzziness\":1,"
                                         "\"preserve\":true,\"append\":false,\"layouts\":\"\"}}"),
                        "CALL AUTOCOMPLETE('it\\'s', 't', 1 AS fuzziness, 1 AS preserve, 0 AS append, '' AS layouts)");
    /* an injection attempt stays inside its string */
    assert_string_equal(autocomplete_sql("{\"table\":\"t') DROP\",\"query\":\"x\"}"),
                        "CALL AUTOCOMPLETE('x', 't\\') DROP')");
    assert_string_equal(autocomplete_sql("{\"table\":\"t\"}"),
                        "ERR the request needs \"query\": the text being typed, a string");
    assert_string_equal(autocomplete_sql("{\"query\":\"x\"}"), "ERR the request needs \"table\": the name of the table");
    assert_string_equal(autocomplete_sql("{\"table\":\"t\",\"query\":\"x\",\"limit\":3}"),
                        "ERR unknown key 'limit': expected table, query or options");
    assert_string_equal(autocomplete_sql("{\"table\":\"t\",\"query\":\"x\",\"options\":{\"distance\":1}}"),
                        "ERR unknown option 'distance': expected fuzziness, preserve, append, prepend, expansion_len, "
                        "force_bigrams or layouts");
    assert_string_equal(autocomplete_sql("{\"table\":\"t\",\"query\":\"x\",\"options\":{\"fuzziness\":\"1\"}}"),
                        "ERR option 'fuzziness' must be an integer or a boolean");
    assert_string_equal(autocomplete_sql("{\"table\":\"t\",\"query\":\"x\",\"options\":[]}"),
                        "ERR \"options\" must be an object, such as {\"fuzziness\": 1}");
    assert_string_equal(autocomplete_sql("[1]"), "ERR the request is not a JSON object");
    HttpReq q;
    http_req_init(&q, 1 << 20);
    assert_int_equal(http_req_begin(&q, "POST", "/autocomplete", 13, "application/json", NULL), 0);
    static const char zBody[] = "{\"table\":\"t\",\"query\":\"he\"}";
    assert_int_equal(http_req_body(&q, zBody, sizeof(zBody) - 1), 0);
    assert_int_equal(http_req_finish(&q), HTTP_ACT_SQL);
    assert_string_equal(q.zSql, "CALL AUTOCOMPLETE('he', 't')");
    http_req_free(&q);
    http_req_init(&q, 1 << 20);
    assert_int_equal(http_req_begin(&q, "POST", "/autocomplete", 13, "application/json", NULL), 0);
    assert_int_equal(http_req_finish(&q), HTTP_ACT_REPLY);
    assert_int_equal(q.status, 400);
    http_req_free(&q);
    http_req_init(&q, 1 << 20);
    assert_int_equal(http_req_begin(&q, "GET", "/autocomplete", 13, NULL, NULL), 405);
    http_req_free(&q);
}

static void test_search_sql(void **state) {
    (void)state;
    assert_string_equal(search_sql("{\"table\":\"t\"}"), "SELECT id, WEIGHT(), * FROM `t` LIMIT 0, 20");
    assert_string_equal(search_sql("{\"table\":\"t\",\"query\":{\"match\":{\"title\":\"it's a (big) -deal\"}}}"),
                        "SELECT id, WEIGHT(), * FROM `t` WHERE MATCH('(@title it | s | a | big | deal)') LIMIT 0, 20");
    assert_string_equal(search_sql("{\"table\":\"t\",\"query\":{\"match\":{\"a, b\":{\"query\":\"x NEAR y\","
                                   "\"operator\":\"and\",\"boost\":2}}},\"_source\":false}"),
                        "SELECT id, WEIGHT() FROM `t` WHERE MATCH('(@(a,b) x^2 near^2 y^2)') LIMIT 0, 20");
    assert_string_equal(search_sql("{\"table\":\"t\",\"query\":{\"bool\":{\"must\":[{\"query_string\":\"a \\\\ b\"},"
                                   "{\"range\":{\"p\":{\"gt\":1,\"lte\":2.5}}}],\"must_not\":[{\"match_phrase\":{\"!c\":\"x y\"}},"
                                   "{\"in\":{\"s\":[\"o'k\",true]}}]}},\"sort\":[\"_score\",{\"p\":\"desc\"}],"
                                   "\"_source\":[\"p\",\"id\"],\"limit\":3,\"offset\":1}"),
                        "SELECT id, WEIGHT(), `p` FROM `t` WHERE MATCH('((a \\\\ b)) -((@!c \"x y\"))') AND ((`p` > 1 AND "
                        "`p` <= 2.5) AND NOT (`s` IN ('o\\'k', 1))) ORDER BY WEIGHT() DESC, `p` DESC LIMIT 1, 3");
    assert_string_equal(search_sql("{\"table\":\"t\",\"query\":{\"bool\":{\"should\":[{\"equals\":{\"a\":1}},"
                                   "{\"equals\":{\"b\":\"x\"}}]}},\"highlight\":{\"fields\":[\"f\"],\"pre_tags\":[\"<i>\"]},"
                                   "\"options\":{\"ranker\":\"expr('sum(lcs)')\",\"field_weights\":{\"f\":2}}}"),
                        "SELECT id, WEIGHT(), *, HIGHLIGHT({before_match='<i>'}, 'f') FROM `t` WHERE (((`a` = 1) OR "
                        "(`b` = 'x'))) LIMIT 0, 20 OPTION ranker=expr('sum(lcs)'), field_weights=(f=2)");
    /* aggregations are FACETs of the one SELECT, after its options */
    assert_string_equal(search_sql("{\"table\":\"t\",\"limit\":5,\"options\":{\"cutoff\":9},\"aggs\":{\"b\":{\"terms\":"
                                   "{\"field\":\"brand\"}},\"p\":{\"terms\":{\"field\":\"price\",\"size\":3},"
                                   "\"sort\":[{\"price\":\"desc\"}]},\"c\":{\"terms\":{\"field\":\"cat\",\"order\":"
                                   "{\"_count\":\"asc\"}}}}}"),
                        "SELECT id, WEIGHT(), * FROM `t` LIMIT 0, 5 OPTION cutoff=9 FACET `brand` LIMIT 5 FACET `price` "
                        "ORDER BY FACET() DESC LIMIT 3 FACET `cat` ORDER BY COUNT(*) ASC LIMIT 5");
    /* expressions: named columns, usable by sort and aggs */
    assert_string_equal(search_sql("{\"table\":\"t\",\"_source\":false,\"expressions\":{\"d\":\"y DIV 10\"},"
                                   "\"sort\":[{\"d\":\"asc\"}],\"aggs\":{\"a\":{\"terms\":{\"field\":\"d\"}}}}"),
                        "SELECT id, WEIGHT(), (y DIV 10) AS `d` FROM `t` ORDER BY `d` ASC LIMIT 0, 20 FACET (y DIV 10) AS `d` LIMIT 20");
    /* script_fields: the same, in Manticore's older spelling, beside expressions */
    assert_string_equal(search_sql("{\"table\":\"t\",\"_source\":false,\"expressions\":{\"e\":\"1\"},"
                                   "\"script_fields\":{\"d\":{\"script\":{\"inline\":\"y DIV 10\"}}},"
                                   "\"query\":{\"equals\":{\"d\":200}},\"aggs\":{\"a\":{\"terms\":{\"field\":\"d\"}}}}"),
                        "SELECT id, WEIGHT(), (1) AS `e`, (y DIV 10) AS `d` FROM `t` WHERE (`d` = 200) LIMIT 0, 20 "
                        "FACET (y DIV 10) AS `d` LIMIT 20");
    assert_string_equal(search_sql("{\"table\":\"t\",\"script_fields\":{\"d\":{\"script\":{\"source\":\"1\"}}}}"),
                        "ERR script_fields: 'd' takes {\"script\": {\"inline\": \"expression\"}} (only inline scripts, "
                        "as in Manticore)");
    assert_string_equal(search_sql("{\"table\":\"t\",\"expressions\":{\"d\":\"1\"},\"script_fields\":{\"d\":"
                                   "{\"script\":{\"inline\":\"2\"}}}}"),
                        "ERR script_fields: 'd' is also in expressions");
    assert_string_equal(search_sql("{\"table\":\"t\",\"script_fields\":[]}"),
                        "ERR script_fields takes an object: {\"name\": {\"script\": {\"inline\": \"expression\"}}}");
    assert_string_equal(search_sql("{\"table\":\"t\",\"script_fields\":{\"x\":{\"script\":{\"inline\":\"1) AS y, (2\"}}}}"),
                        "ERR script_fields: 'x' is not one expression");
    /* multi-values: any()/all() filters, sorting by the least item */
    assert_string_equal(search_sql("{\"table\":\"t\",\"_source\":false,\"query\":{\"bool\":{\"must\":[{\"equals\":"
                                   "{\"any(tags)\":3}},{\"in\":{\"ALL(tags)\":[1,2]}},{\"range\":{\"tags\":{\"gt\":0}}}]}},"
                                   "\"sort\":[{\"tags\":{\"order\":\"desc\",\"mode\":\"min\"}}]}"),
                        "SELECT id, WEIGHT() FROM `t` WHERE ((ANY(`tags`) = 3) AND (ALL(`tags`) IN (1, 2)) AND "
                        "(`tags` > 0)) ORDER BY LEAST(`tags`) DESC LIMIT 0, 20");
    assert_string_equal(search_sql("{\"table\":\"t\",\"query\":{\"equals\":{\"any(a b)\":3}}}"),
                        "ERR equals: attribute 'a b' is not a name (letters, digits and '_'), or a JSON path of them "
                        "joined by '.'");
    /* geo_distance: a GEODIST() filter in degrees and metres; _geo_distance sorts by it */
    assert_string_equal(search_sql("{\"table\":\"t\",\"_source\":false,\"query\":{\"geo_distance\":{"
                                   "\"location_anchor\":{\"lat\":49,\"lon\":15.5},\"location_source\":\" la , lo \","
                                   "\"distance\":\"2.5 km\"}},\"sort\":[{\"_geo_distance\":{\"location_anchor\":\"49, 15.5\","
                                   "\"location_source\":[\"lo\",\"la\"],\"distance_type\":\"haversine\",\"order\":\"desc\"}}]}"),
                        "SELECT id, WEIGHT() FROM `t` WHERE (GEODIST(`la`, `lo`, 49, 15.5, {in=degrees, out=m, "
                        "method=adaptive}) <= 2500) ORDER BY GEODIST(`la`, `lo`, 49, 15.5, {in=degrees, out=m, "
                        "method=haversine}) DESC LIMIT 0, 20");
    assert_string_equal(search_sql("{\"table\":\"t\",\"query\":{\"geo_distance\":{\"location_anchor\":"
                                   "{\"lat\":\"1); DROP TABLE t; --\",\"lon\":1},\"location_source\":\"a,b\",\"distance\":1}}}"),
                        "ERR geo_distance: location_anchor takes {\"lat\": number, \"lon\": number}, \"lat, lon\" or "
                        "[lon, lat] (degrees)");
    /* bucket aggregations: FACETs of HISTOGRAM(), RANGE(), DATE_HISTOGRAM(), DATE_RANGE() */
    assert_string_equal(search_sql("{\"table\":\"t\",\"_source\":false,\"aggs\":{\"h\":{\"histogram\":{\"field\":\"p\","
                                   "\"interval\":0.5,\"offset\":0.1}},\"r\":{\"range\":{\"field\":\"p\",\"ranges\":[{\"to\":3},"
                                   "{\"from\":3,\"to\":1e3}],\"keyed\":true}},\"d\":{\"date_histogram\":{\"field\":\"ts\","
                                   "\"calendar_interval\":\"1M\"}}}}"),
                        "SELECT id, WEIGHT() FROM `t` LIMIT 0, 20 FACET HISTOGRAM(`p`, {hist_interval=0.5, hist_offset=0.1}) "
                        "ORDER BY FACET() ASC LIMIT 10000 FACET RANGE(`p`, {range_to=3}, {range_from=3, range_to=1000}) "
                        "ORDER BY FACET() ASC LIMIT 10000 FACET DATE_HISTOGRAM(`ts`, {calendar_interval='1M'}) ORDER BY "
                        "FACET() ASC LIMIT 10000");
    /* DATE_RANGE(): date math resolved here, the bounds in seconds (no string reaches the SQL) */
    assert_string_equal(search_sql("{\"table\":\"t\",\"_source\":false,\"aggs\":{\"d\":{\"date_range\":{\"field\":"
                                   "\"ts\",\"ranges\":[{\"to\":\"2017||+2M/M\"},{\"from\":\"2017||+2M/M\",\"to\":1496275200}]}}}}"),
                        "SELECT id, WEIGHT() FROM `t` LIMIT 0, 20 FACET DATE_RANGE(`ts`, {range_to=1488326400}, "
                        "{range_from=1488326400, range_to=1496275200}) ORDER BY FACET() ASC LIMIT 10000");
    assert_string_equal(search_sql("{\"table\":\"t\",\"aggs\":{\"d\":{\"date_range\":{\"field\":\"ts\",\"ranges\":"
                                   "[{\"to\":\"2017||') FACET x --\"}]}}}}"),
                        "ERR aggs: 'd': date_range 1: to: expected +N, -N or / and a unit in '2017||') FACET x --'");
    assert_string_equal(search_sql("{\"table\":\"t\",\"aggs\":{\"d\":{\"date_histogram\":{\"field\":\"ts\","
                                   "\"fixed_interval\":\"1h') FACET x --\"}}}}"),
                        "ERR aggs: 'd': date_histogram needs calendar_interval (\"month\") or fixed_interval (\"3h\")");
    /* a ranker expression is checked as the fragment it becomes */
    assert_string_equal(search_sql("{\"table\":\"t\",\"options\":{\"ranker\":\"expr(\"}}"),
                        "ERR options: ranker takes a name or expr('...'): unexpected end of statement at line 1 col 36: "
                        "expected an expression");
    assert_string_equal(search_sql("{\"table\":\"t\",\"options\":{\"ranker\":\"expr('1') FACET x\"}}"),
                        "ERR options: ranker takes a name or expr('...'): more follows it");
    /* should counts only alone */
    assert_string_equal(search_sql("{\"table\":\"t\",\"query\":{\"bool\":{\"must\":{\"match\":{\"*\":\"a\"}},"
                                   "\"should\":{\"equals\":{\"b\":1}}}}}"),
                        "SELECT id, WEIGHT(), * FROM `t` WHERE MATCH('((a))') LIMIT 0, 20");
    assert_string_equal(search_sql("{\"table\":\"t\",\"query\":{\"match\":{\"t-1\":\"a\"}}}"),
                        "ERR field list 't-1': expected field names separated by ','");
    assert_string_equal(search_sql("{\"table\":\"t`x\"}"), "ERR table 't`x' is not a name (letters, digits and '_')");
    assert_string_equal(search_sql("{\"table\":\"t\",\"table\":\"u\"}"),
                        "ERR the request is not JSON: duplicate object key near '\"table\"' at byte 20");
    assert_string_equal(search_sql("[1]"), "ERR the request is not a JSON object");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_decode),       cmocka_unit_test(test_url_decode_malformed),
        cmocka_unit_test(test_form_get),         cmocka_unit_test(test_form_get_absent_or_bad),
        cmocka_unit_test(test_json_str),         cmocka_unit_test(test_json_is_number),
        cmocka_unit_test(test_json_result_rows), cmocka_unit_test(test_json_result_ok_error),
        cmocka_unit_test(test_json_misc),        cmocka_unit_test(test_route_sql),
        cmocka_unit_test(test_route_refusals),   cmocka_unit_test(test_route_empty),
        cmocka_unit_test(test_search_sql),
        cmocka_unit_test(test_autocomplete_sql),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
