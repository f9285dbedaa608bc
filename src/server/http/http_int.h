/*
** http_int.h — the parts of server/http that need no socket: form decoding,
** request routing and the JSON encoding of SQL results. http.c glues them
** to libmicrohttpd; the unit test (tests/unit/test_http.c) and the fuzz
** target (tests/fuzz/fuzz_http_request.c) call them directly.
**
** Contract.
**  - Form decoding (application/x-www-form-urlencoded, as in URL query
**    strings): fields separated by '&', name and value by the first '=';
**    '+' is a space, %XX a byte. Values are decoded strictly: a '%' not
**    followed by two hex digits is an error naming its byte offset. Decoded
**    bytes are not checked for UTF-8 (the SQL layer judges the statement).
**  - Routing: an HttpReq follows one request through three steps, in the
**    order MHD delivers it: http_req_begin (request line and headers),
**    http_req_body (each chunk of the body, never buffering past the
**    limit), http_req_finish (what to do: answer /health, run a statement,
**    or send the error reply already prepared). Every refusal is an HTTP
**    status plus a JSON body in q->reply.
**  - JSON: writers append to a StrBuf; an allocation failure sets its
**    sticky oom flag (strbuf.h), which the caller checks once at the end.
**    Output is always valid UTF-8 JSON: invalid UTF-8 in a string becomes
**    U+FFFD, a cell that is not valid for its numeric or JSON type is sent
**    as a string.
**
** Thread safety: none of these functions share state; an HttpReq belongs to
** one thread at a time.
*/
#ifndef LP_SERVER_HTTP_INT_H
#define LP_SERVER_HTTP_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sql/result.h"
#include "util/error.h"
#include "util/strbuf.h"

/* ------------------------------------------------------------------ forms */

/* Appends the %-decoding of z[0..n) to *pOut; bPlus makes '+' a space (form
** values) rather than a literal '+' (URL paths). Returns LP_OK, LP_BADINPUT
** for a malformed %-escape (err->pos is its offset in z), or LP_NOMEM. */
int http_url_decode(const char *z, size_t n, int bPlus, StrBuf *pOut, LpError *err);

/* Finds the first field whose decoded name is zName in the form z[0..n) and
** appends its decoded value to *pOut (a field without '=' has an empty
** value). Returns LP_OK, LP_NOTFOUND when no field has that name (pOut
** untouched), LP_BADINPUT when that field's value holds a malformed
** %-escape (err->pos is the offset in z), or LP_NOMEM. Names that do not
** decode cleanly simply do not match. */
int http_form_get(const char *z, size_t n, const char *zName, StrBuf *pOut, LpError *err);

/* ------------------------------------------------------------------- JSON */

/* Appends z[0..n) as a quoted JSON string (invalid UTF-8 -> U+FFFD). */
void http_json_str(StrBuf *sb, const char *z, size_t n);

/* True when z[0..n) is exactly a JSON number (RFC 8259 grammar: no '+',
** no leading zeros, no "inf"/"nan", no surrounding space). */
int http_json_is_number(const char *z, size_t n);

/* One cell of a result set as a JSON value (the rules of
** http_json_result below). */
void http_json_cell(StrBuf *sb, SqlColType t, const SqlCell *c);

/* The type name of a column in a result set, as Manticore's /sql?mode=raw
** spells it: "long long", "string", "float_vector"... */
const char *http_json_type_name(SqlColType t);

/* Appends Manticore's raw-mode answer for r:
**   SQLRES_ROWS  [{"columns":[{"id":{"type":"long long"}},...],
**                  "data":[{"id":1,...},...],"total":N,"error":"","warning":""}]
**   SQLRES_OK    [{"total":<affected>,"error":"","warning":"","last_insert_id":<id>}]
**   SQLRES_ERROR {"error":"<message>","code":<errno>,"sqlstate":"<state>"}
** Cells: BOOL/INT/BIGINT/TIMESTAMP/FLOAT/DOUBLE as JSON numbers with the
** cell's own digits, STRING as a string, JSON embedded as a value when it
** parses, VECTOR as an array of numbers, NULL as null; a cell that does not
** fit its type is sent as a string. */
void http_json_result(StrBuf *sb, const SqlResult *r);

/* The HTTP status for r: 200 unless it is an error; 500 for the errors that
** are the server's fault (1105 "unknown error", which the SQL layer gives
** out-of-memory, internal, I/O and corruption failures; out of memory or
** resources 1037, 1038, 1041; internal error 1815; client-library codes
** 2000 and up), 400 for the rest (the request is at fault). */
int http_status_for_result(const SqlResult *r);

/* {"error":"<zMsg[0..nMsg)>"}: the body of a refusal that is not an SQL
** error (the message may quote the client's bytes, NULs included). */
void http_json_error(StrBuf *sb, const char *zMsg, size_t nMsg);

/* {"error":"<zMsg>","code":iErrno,"sqlstate":"<zState>"}. */
void http_json_sql_error(StrBuf *sb, const char *zMsg, int iErrno, const char *zState);

/* {"status":"ok","version":"...","uptime":nUptime}. */
void http_json_health(StrBuf *sb, int64_t nUptime);

/* ----------------------------------------------------------------- search */

/* What http_search_sql learnt of a /search request that its answer needs
** (http_search.c describes the request). */
typedef struct HttpSearch {
    char zTable[72];        /* the table, for error answers */
    int bSource;            /* send _source */
    void *pExclude;         /* json_t: _source excludes (a name or a list), or NULL */
    void *pHl;              /* json_t: the highlighted fields' names ("" for all) */
    int nHl;                /* how many: the last nHl columns of the result */
    int bKnn;               /* a vector search: KNN_DIST() follows WEIGHT() */
    int bHybrid;            /* a hybrid search: then HYBRID_SCORE() */
    void *pAggs;            /* json_t: per "aggs" entry, in the order of their
                            ** FACETs in the SELECT, {"name", "kind" (absent:
                            ** terms), "keyed", "ranges"}; or NULL */
} HttpSearch;

/* Translates the JSON request z[0..n) into one SELECT (appended to pSql):
** id, WEIGHT(), KNN_DIST() and HYBRID_SCORE() (bKnn, bHybrid), the _source
** columns, one HIGHLIGHT() per highlighted field. LP_OK (s filled; http_search_free it), LP_BADINPUT with a message
** naming what is wrong, or LP_NOMEM. */
int http_search_sql(const char *z, size_t n, StrBuf *pSql, HttpSearch *s, LpError *err);
void http_search_free(HttpSearch *s);

/* Appends Manticore's answer to a search: {"took":..,"timed_out":false,
** "hits":{"total":..,"total_relation":..,"hits":[{"_id":..,"_score":..,
** ["_knn_dist":..,]["_hybrid_score":..,]"_source":{..},
** "highlight":{"field":["..."]}}]},"aggregations":{"name":{"buckets":
** [{"key":..,"doc_count":..}]}}}, from the SELECT's rows r, SHOW META's
** total and total_relation, and each aggregation's rows: the result sets
** of its FACETs, which follow r (r->pNext). */
void http_search_answer(StrBuf *sb, const HttpSearch *s, const SqlResult *r, const char *zTotal,
                        const char *zRelation, int64_t tookMs);

/* How many aggregations the request has (FACETs of its SELECT). */
int http_search_naggs(const HttpSearch *s);

/* A /search "query" object (json_t) as an SQL condition appended to
** pWhere: MATCH('...') and the filters ANDed; nothing for match_all.
** LP_OK, LP_BADINPUT (err says why) or LP_NOMEM. */
int http_search_where(const void *q, StrBuf *pWhere, LpError *err);

/* z[0..n) as an SQL string literal; as a backquoted name (LP_BADINPUT
** when it is not a plain name: letters, digits, '_'; zWhat names it). */
void http_sql_str(StrBuf *sb, const char *z, size_t n);
/* A JSON number, string or boolean (json_t) as an SQL literal (true 1,
** false 0); 0, nothing written, for any other value. */
int http_sql_scalar(StrBuf *sb, const void *v);
int http_sql_ident(StrBuf *sb, const char *z, size_t n, const char *zWhat, LpError *err);

/* POST /autocomplete's JSON request z[0..n) (Manticore's: {"table": ..,
** "query": "text being typed", "options": {"fuzziness": 1, "append":
** true, ...}}) as one CALL AUTOCOMPLETE statement, appended to pSql; the
** SQL layer checks the options' values. LP_OK, LP_BADINPUT (err says what
** is wrong) or LP_NOMEM. */
int http_autocomplete_sql(const char *z, size_t n, StrBuf *pSql, LpError *err);

/* {"error":{"type":zType,"reason":zReason[,"table":zTable]},"status":400}. */
void http_search_error(StrBuf *sb, const char *zType, const char *zReason, const char *zTable);

/* ---------------------------------------------------------------- routing */

typedef enum HttpEndpoint {
    HTTP_EP_NONE = 0, /* not routed yet, or refused */
    HTTP_EP_HEALTH,   /* GET|HEAD /health */
    HTTP_EP_SQL,      /* GET|POST /sql: raw body, query= form, ?query= */
    HTTP_EP_CLI_JSON, /* POST /cli_json: the body is always raw SQL */
    HTTP_EP_SEARCH,   /* POST /search: a JSON search request (http_search.c) */
    HTTP_EP_AUTOCOMPLETE, /* POST /autocomplete: run as CALL AUTOCOMPLETE */
    HTTP_EP_INSERT,   /* POST /insert, /replace, /update, /delete: one document */
    HTTP_EP_REPLACE,  /* request (http_doc.c) */
    HTTP_EP_UPDATE,
    HTTP_EP_DELETE,
    HTTP_EP_BULK      /* POST /bulk: NDJSON lines of those */
} HttpEndpoint;

typedef enum HttpAction {
    HTTP_ACT_REPLY = 0, /* send q->status with the JSON body q->reply */
    HTTP_ACT_HEALTH,    /* answer the health check */
    HTTP_ACT_SQL,       /* execute q->zSql[0..q->nSql) and answer its result */
    HTTP_ACT_SEARCH,    /* translate the JSON request q->zSql[0..q->nSql), run it,
                        ** answer in the hits shape */
    HTTP_ACT_DOC        /* a document request (q->ep says which), body in q->zSql */
} HttpAction;

/* ------------------------------------------------- /insert … /bulk */

/* One document request, translated (http_doc.c): what its answer needs. */
typedef struct HttpDoc {
    HttpEndpoint op;        /* HTTP_EP_INSERT, _REPLACE, _UPDATE or _DELETE */
    char zTable[72];
    int64_t id;             /* the document's id; 0: none given (auto, or by query) */
    int bQuery;             /* update or delete by "query" */
} HttpDoc;

/* The table a request object (json_t) names ("table", or "index"), or
** NULL with an error. */
const char *http_doc_table(const void *req, LpError *err);

/* The request object req (json_t) of kind op as one SQL statement
** (appended to pSql): INSERT, REPLACE, UPDATE or DELETE. pDescribe is the
** result of DESCRIBE of its table: each doc value becomes the literal its
** column takes (a JSON column's value its JSON text, a vector column's
** array a vector). LP_OK (d filled), LP_BADINPUT naming what is wrong, or
** LP_NOMEM. */
int http_doc_sql(HttpEndpoint op, const void *req, const SqlResult *pDescribe, StrBuf *pSql, HttpDoc *d,
                 LpError *err);

/* Manticore's answer to a document request d whose statement gave r
** (SQLRES_OK): {"table":..,"_id":..,"created":..,"result":..,"status":..}
** and its kin; the HTTP status into *pStatus. */
void http_doc_answer(StrBuf *sb, const HttpDoc *d, const SqlResult *r, int *pStatus);

/* Runs the body z[0..n) of a document request to endpoint ep (one JSON
** object, or /bulk's NDJSON) in session s; its answer into out. Returns
** the HTTP status. */
struct SqlSession;
int http_doc_run(struct SqlSession *s, HttpEndpoint ep, const char *z, size_t n, StrBuf *out);


/* Bytes of an oversized body read and dropped before answering 413. */
#define HTTP_DRAIN_MAX ((size_t)16 << 20)

typedef struct HttpReq {
    HttpEndpoint ep;    /* where the request goes */
    size_t nMaxBody;    /* largest body accepted, bytes */
    size_t nBody;       /* body bytes received so far (kept or not) */
    size_t nDrained;    /* bytes read and dropped after a 413 */
    int bFormType;      /* Content-Type is application/x-www-form-urlencoded */
    int bUrlQuery;      /* the URL carried a query= field, decoded in urlQuery */
    StrBuf urlQuery;    /* decoded query= of the URL */
    StrBuf body;        /* the body, for the SQL endpoints only */
    StrBuf form;        /* decoded query= of a form body */
    int status;         /* HTTP status of the reply, when refused */
    const char *zAllow; /* methods for the Allow header of a 405, or NULL */
    StrBuf reply;       /* JSON body of the reply, when refused */
    const char *zSql;   /* HTTP_ACT_SQL: the statement (in body, form or
                        ** urlQuery; NUL-terminated), not owned */
    size_t nSql;        /* its length in bytes */
} HttpReq;

/* Prepares q for one request with a body limit of nMaxBody bytes. */
void http_req_init(HttpReq *q, size_t nMaxBody);

/* Routes the request line and headers. zUri is the request target as
** received (path and optional "?query", not yet %-decoded); zContentType
** and zContentLength are the header values or NULL. Returns 0 to go on
** reading the body, or the HTTP status of a refusal (404 unknown path, 405
** wrong method with q->zAllow, 413 Content-Length over the limit, 400
** malformed URL, 500 out of memory) with q->reply filled. */
int http_req_begin(HttpReq *q, const char *zMethod, const char *zUri, size_t nUri,
                   const char *zContentType, const char *zContentLength);

/* Takes the next n bytes of the body. Returns 0 to go on, or the status of
** a refusal to send now, with q->reply filled: 500 when out of memory; 413
** when the body passes the limit by more than HTTP_DRAIN_MAX bytes. A body
** that passes the limit by less is dropped and its rest drained (0 is
** returned, nothing kept) and http_req_finish answers 413. */
int http_req_body(HttpReq *q, const char *p, size_t n);

/* Once the body is complete: decides what to do (see HttpAction). The
** statement is the decoded query= field of a form body (a body starting
** with "query=", or a form Content-Type with a query field), else the raw
** body, else the query= field of the URL. No statement at all is an SQL
** error 1065 "Query was empty" (400). */
HttpAction http_req_finish(HttpReq *q);

/* Releases what q holds; q may be re-initialised afterwards. */
void http_req_free(HttpReq *q);

#endif /* LP_SERVER_HTTP_INT_H */
