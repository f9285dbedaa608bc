/*
** fuzz_http_request.c — libFuzzer target for the socket-free half of the
** HTTP listener (src/server/http/http_int.h).
**
** Each input is used three ways:
**  1. whole, as a form and a URL: http_url_decode and http_form_get must
**     either decode (never longer than the input) or point at a '%';
**  2. split into a request: "METHOD\nURI\nCONTENT-TYPE\nCONTENT-LENGTH\n"
**     then the body; the first byte of the body picks the body limit and
**     the chunk size. The three routing steps must end in a refusal with a
**     valid JSON body and a known status, the health check, or a non-empty
**     NUL-terminated statement within the limit;
**  3. as cells of a result set ('|' separates cells, cycling through every
**     column type): the encoded answer must be valid JSON, and a string
**     that is valid UTF-8 must come back from jansson byte for byte;
**  4. as a /search request: its translation must be refused with a
**     message, or be one SELECT that the SQL parser accepts, and one
**     grouped SELECT per aggregation (whatever the request's strings hold,
**     they stay inside their quotes); likewise as an /autocomplete
**     request, one CALL AUTOCOMPLETE; and as each document request.
** Crashes, leaks and sanitizer reports are what libFuzzer looks for; the
** checks above abort() on a wrong answer.
*/
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/http/http_int.h"
#include "sql/parser.h"
#include "sql/result.h"
#include "util/arena.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) abort();                                                                         \
    } while (0)

/* Whether z[0..n) is valid JSON (numbers too big for jansson accepted). */
static int valid_json(const char *z, size_t n) {
    json_error_t jerr;
    json_t *j = json_loadb(z, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (j) {
        json_decref(j);
        return 1;
    }
    return json_error_code(&jerr) == json_error_numeric_overflow;
}

static void fuzz_decoders(const char *z, size_t n) {
    StrBuf sb = {0};
    LpError err;
    for (int bPlus = 0; bPlus < 2; bPlus++) {
        strbuf_reset(&sb);
        int rc = http_url_decode(z, n, bPlus, &sb, &err);
        CHECK(rc == LP_OK || rc == LP_BADINPUT);
        if (rc == LP_OK)
            CHECK(sb.n <= n);
        else
            CHECK(err.pos >= 0 && (size_t)err.pos < n && z[err.pos] == '%' && sb.n == 0);
    }
    strbuf_reset(&sb);
    int rc = http_form_get(z, n, "query", &sb, &err);
    CHECK(rc == LP_OK || rc == LP_NOTFOUND || rc == LP_BADINPUT);
    if (rc == LP_OK) CHECK(sb.n <= n && sb.z != NULL);
    if (rc == LP_BADINPUT) CHECK(err.pos >= 0 && (size_t)err.pos < n && z[err.pos] == '%');
    strbuf_free(&sb);
}

/* Cuts the next '\n'-terminated line off *pz as a malloc'd string of
** *pnLine bytes (when pnLine is not NULL). */
static char *next_line(const char **pz, size_t *pn, size_t *pnLine) {
    const char *p = memchr(*pz, '\n', *pn);
    size_t k = p ? (size_t)(p - *pz) : *pn;
    char *z = malloc(k + 1);
    if (z == NULL) abort();
    memcpy(z, *pz, k);
    z[k] = 0;
    if (pnLine) *pnLine = k;
    *pz += p ? k + 1 : k;
    *pn -= p ? k + 1 : k;
    return z;
}

static void fuzz_route(const char *z, size_t n) {
    size_t nUri;
    char *zMethod = next_line(&z, &n, NULL);
    char *zUri = next_line(&z, &n, &nUri);
    char *zType = next_line(&z, &n, NULL);
    char *zLen = next_line(&z, &n, NULL);
    size_t nMax = 64, nChunk = 7;
    if (n > 0) {
        nMax = (size_t)(unsigned char)z[0] * 4;
        nChunk = 1 + (unsigned char)z[0] % 13;
        z++;
        n--;
    }
    HttpReq q;
    http_req_init(&q, nMax);
    int status =
        http_req_begin(&q, zMethod, zUri, nUri, zType[0] ? zType : NULL, zLen[0] ? zLen : NULL);
    for (size_t i = 0; status == 0 && i < n; i += nChunk)
        status = http_req_body(&q, z + i, n - i < nChunk ? n - i : nChunk);
    HttpAction act = HTTP_ACT_REPLY;
    if (status == 0) {
        act = http_req_finish(&q);
        if (act == HTTP_ACT_REPLY) status = q.status;
    }
    CHECK(q.nBody <= nMax);
    if (act == HTTP_ACT_REPLY) {
        CHECK(status == 400 || status == 404 || status == 405 || status == 413);
        CHECK(q.reply.z != NULL && valid_json(q.reply.z, q.reply.n));
        if (status == 405) CHECK(q.zAllow != NULL);
    } else if (act == HTTP_ACT_SQL) {
        CHECK(q.nSql > 0 && q.zSql != NULL && q.zSql[q.nSql] == 0);
        CHECK(q.nSql <= nMax || q.bUrlQuery);
    }
    http_req_free(&q);
    free(zMethod);
    free(zUri);
    free(zType);
    free(zLen);
}

static void fuzz_json(const char *z, size_t n) {
    static const SqlColType aType[] = {SQLCOL_BOOL,   SQLCOL_INT,    SQLCOL_BIGINT,
                                       SQLCOL_FLOAT,  SQLCOL_DOUBLE, SQLCOL_TIMESTAMP,
                                       SQLCOL_STRING, SQLCOL_JSON,   SQLCOL_VECTOR};
    const int nCol = (int)(sizeof(aType) / sizeof(aType[0]));
    SqlResult r;
    sql_result_init(&r);
    CHECK(sql_result_columns(&r, nCol) == LP_OK);
    for (int c = 0; c < nCol; c++) {
        char zName[8] = {'c', (char)('0' + c), 0};
        CHECK(sql_result_column(&r, c, zName, aType[c], 0) == LP_OK);
    }
    SqlCell *row = NULL;
    size_t i = 0;
    for (int iCell = 0; i <= n; iCell++) {
        const char *p = memchr(z + i, '|', n - i);
        size_t k = p ? (size_t)(p - z) - i : n - i;
        if (iCell % nCol == 0) CHECK((row = sql_result_row(&r)) != NULL);
        /* A cell "\x01" stands for SQL NULL. */
        if (!(k == 1 && z[i] == 1))
            CHECK(sql_result_cell(&r, &row[iCell % nCol], z + i, k) == LP_OK);
        i += k + 1;
    }
    StrBuf sb = {0};
    http_json_result(&sb, &r);
    CHECK(!sb.oom && valid_json(sb.z, sb.n));
    sql_result_free(&r);

    /* The string escaper round-trips valid UTF-8 exactly. */
    strbuf_reset(&sb);
    http_json_str(&sb, z, n);
    json_error_t jerr;
    json_t *j = json_loadb(sb.z, sb.n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    CHECK(j != NULL && json_is_string(j));
    json_t *jIn = json_stringn(z, n);
    if (jIn) {
        /* json_stringn accepts only valid UTF-8. */
        CHECK(json_string_length(j) == n && memcmp(json_string_value(j), z, n) == 0);
        json_decref(jIn);
    }
    json_decref(j);
    strbuf_free(&sb);
}

/* The kind of statement sql[0..n) parses as; CHECKs that it parses. */
static int parsed_kind(const StrBuf *sql, int *pnFacet) {
    Arena a;
    arena_init(&a, 4096);
    SqlStmt *pStmt = NULL;
    LpError perr;
    lp_err_clear(&perr);
    CHECK(sql->z != NULL && sql_parse(&a, sql->z, sql->n, &pStmt, &perr) == LP_OK && pStmt != NULL);
    int kind = (int)pStmt->kind;
    if (pnFacet) *pnFacet = kind == STMT_SELECT ? pStmt->u.select.nFacet : -1;
    arena_free(&a);
    return kind;
}

static void fuzz_search(const char *z, size_t n) {
    StrBuf sql = {0};
    HttpSearch hs;
    LpError err;
    lp_err_clear(&err);
    int rc = http_search_sql(z, n, &sql, &hs, &err);
    CHECK(rc == LP_OK || rc == LP_BADINPUT || rc == LP_NOMEM);
    if (rc == LP_BADINPUT) CHECK(err.zMsg[0] != 0);
    if (rc == LP_OK) {
        int nFacet;
        CHECK(parsed_kind(&sql, &nFacet) == STMT_SELECT);
        CHECK(nFacet == http_search_naggs(&hs)); /* one FACET per aggregation */
        http_search_free(&hs);
    }
    strbuf_free(&sql);
}

/* The input as an /autocomplete request: refused with a message, or one
** CALL AUTOCOMPLETE the SQL parser accepts, with the text and the table
** (and no more than the seven options) as its arguments. */
static void fuzz_autocomplete(const char *z, size_t n) {
    StrBuf sql = {0};
    LpError err;
    lp_err_clear(&err);
    int rc = http_autocomplete_sql(z, n, &sql, &err);
    CHECK(rc == LP_OK || rc == LP_BADINPUT || rc == LP_NOMEM);
    if (rc == LP_BADINPUT) CHECK(err.zMsg[0] != 0);
    if (rc == LP_OK) {
        Arena a;
        arena_init(&a, 0);
        SqlStmt *pStmt = NULL;
        LpError perr;
        CHECK(sql.z != NULL && sql_parse(&a, sql.z, sql.n, &pStmt, &perr) == LP_OK && pStmt != NULL);
        CHECK(pStmt->kind == STMT_CALL && strcmp(pStmt->u.call.zName, "autocomplete") == 0);
        CHECK(pStmt->u.call.nArg >= 2 && pStmt->u.call.nArg <= 9);
        arena_free(&a);
    }
    strbuf_free(&sql);
}

/* The input as each document request (/insert, /replace, /update,
** /delete): every statement accepted parses as the kind it stands for. */
static void fuzz_doc(const char *z, size_t n) {
    json_t *req = json_loadb(z, n, JSON_REJECT_DUPLICATES, NULL);
    if (!req) return;
    static const int aKind[] = {STMT_INSERT, STMT_INSERT, STMT_UPDATE, STMT_DELETE};
    for (HttpEndpoint op = HTTP_EP_INSERT; op <= HTTP_EP_DELETE; op++) {
        StrBuf sql = {0};
        HttpDoc d;
        LpError err;
        lp_err_clear(&err);
        int rc = http_doc_sql(op, req, NULL, &sql, &d, &err);
        CHECK(rc == LP_OK || rc == LP_BADINPUT || rc == LP_NOMEM);
        if (rc == LP_BADINPUT) CHECK(err.zMsg[0] != 0);
        if (rc == LP_OK) CHECK(parsed_kind(&sql, NULL) == aKind[op - HTTP_EP_INSERT]);
        strbuf_free(&sql);
    }
    json_decref(req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *z = (const char *)data;
    fuzz_decoders(z, size);
    fuzz_route(z, size);
    fuzz_json(z, size);
    fuzz_search(z, size);
    fuzz_autocomplete(z, size);
    fuzz_doc(z, size);
    return 0;
}
