/*
** http_req.c — routing one HTTP request (http_int.h), without sockets.
**
** The steps follow what libmicrohttpd delivers:
**
**   http_req_begin   request line + headers: pick the endpoint (404), check
**                    the method (405) and a declared Content-Length (413),
**                    decode the URL's query= field (400 when malformed);
**   http_req_body    once per body chunk: count every byte, keep them only
**                    for the SQL endpoints; once the count passes the limit
**                    (chunked uploads declare no length) drop the body and
**                    drain the rest unkept, up to HTTP_DRAIN_MAX bytes, so the
**                    413 reaches a client that is still sending; an
**                    oversized upload is never held in memory;
**   http_req_finish  pick the statement (see below) or the health check.
**
** Where the statement comes from, as Manticore's /sql does it:
**   (1) a body starting with "query=", or any body sent with Content-Type
**       application/x-www-form-urlencoded that has a query field: the
**       decoded value of that field;
**   (2) otherwise a non-empty body is the statement as is (so `curl -d
**       'SHOW TABLES'`, which labels its body as a form, still works);
**   (3) otherwise the query= field of the URL (GET /sql?query=...).
** /cli_json takes the body as is, always. Statements are passed to the SQL
** layer byte for byte: invalid UTF-8 is the SQL layer's to refuse.
**
** Refusals fill q->status and q->reply; q->reply may be left incomplete
** by an allocation failure (reply.oom), which the caller answers with a
** fixed "out of memory" body.
*/
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server/http/http_int.h"

/* The endpoints and the methods each accepts. */
static const struct {
    const char *zPath;
    HttpEndpoint ep;
    const char *zAllow; /* Allow header value, also the accepted list */
} aRoute[] = {
    {"/health", HTTP_EP_HEALTH, "GET, HEAD"},
    {"/sql", HTTP_EP_SQL, "GET, POST"},
    {"/cli_json", HTTP_EP_CLI_JSON, "POST"},
    {"/search", HTTP_EP_SEARCH, "POST"},
    {"/autocomplete", HTTP_EP_AUTOCOMPLETE, "POST"},
    {"/insert", HTTP_EP_INSERT, "POST"},
    {"/replace", HTTP_EP_REPLACE, "POST"},
    {"/update", HTTP_EP_UPDATE, "POST"},
    {"/delete", HTTP_EP_DELETE, "POST"},
    {"/bulk", HTTP_EP_BULK, "POST"},
};

void http_req_init(HttpReq *q, size_t nMaxBody) {
    memset(q, 0, sizeof(*q));
    q->nMaxBody = nMaxBody;
}

void http_req_free(HttpReq *q) {
    strbuf_free(&q->urlQuery);
    strbuf_free(&q->body);
    strbuf_free(&q->form);
    strbuf_free(&q->reply);
}

/* Records a refusal with the body {"error":"<zMsg[0..nMsg)>"}; returns
** the status. */
static int refuse_n(HttpReq *q, int status, const char *zMsg, size_t nMsg) {
    q->ep = HTTP_EP_NONE;
    q->status = status;
    strbuf_reset(&q->reply);
    http_json_error(&q->reply, zMsg, nMsg);
    return status;
}

static int refuse(HttpReq *q, int status, const char *zMsg) {
    return refuse_n(q, status, zMsg, strlen(zMsg));
}

/* Whether zMethod is one of the comma-separated list zAllow. */
static int method_allowed(const char *zMethod, const char *zAllow) {
    size_t n = strlen(zMethod);
    const char *p = zAllow;
    while (*p) {
        size_t k = strcspn(p, ",");
        if (k == n && memcmp(p, zMethod, n) == 0) return 1;
        p += k;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return 0;
}

/* Whether the Content-Type value names the form media type (parameters
** such as "; charset=utf-8" and surrounding spaces ignored, any case). */
static int is_form_type(const char *z) {
    static const char zForm[] = "application/x-www-form-urlencoded";
    if (z == NULL) return 0;
    while (*z == ' ' || *z == '\t')
        z++;
    size_t n = strcspn(z, ";");
    while (n > 0 && (z[n - 1] == ' ' || z[n - 1] == '\t'))
        n--;
    return n == sizeof(zForm) - 1 && strncasecmp(z, zForm, n) == 0;
}

/* The value of a Content-Length header; SIZE_MAX when it does not fit.
** MHD has already refused a malformed one, so non-digits just end it. */
static size_t parse_length(const char *z) {
    size_t v = 0;
    for (; *z >= '0' && *z <= '9'; z++) {
        if (v > (SIZE_MAX - 9) / 10) return SIZE_MAX;
        v = v * 10 + (size_t)(*z - '0');
    }
    return v;
}

int http_req_begin(HttpReq *q, const char *zMethod, const char *zUri, size_t nUri,
                   const char *zContentType, const char *zContentLength) {
    LpError err;
    size_t iPath = 0;

    /* An absolute-form target (http://host/path) names its path after the
    ** authority; the origin form (/path) is what clients normally send. */
    const char *pScheme =
        nUri > 0 && zUri[0] != '/' ? memchr(zUri, ':', nUri < 8 ? nUri : 8) : NULL;
    if (pScheme && (size_t)(pScheme - zUri) + 3 <= nUri && memcmp(pScheme, "://", 3) == 0) {
        size_t iHost = (size_t)(pScheme - zUri) + 3;
        const char *pSlash = memchr(zUri + iHost, '/', nUri - iHost);
        iPath = pSlash ? (size_t)(pSlash - zUri) : nUri;
    }
    const char *pQ = memchr(zUri + iPath, '?', nUri - iPath);
    size_t nPath = (pQ ? (size_t)(pQ - zUri) : nUri) - iPath;

    StrBuf path = {0};
    int rc = http_url_decode(zUri + iPath, nPath, 0, &path, &err);
    if (rc != LP_OK) {
        strbuf_free(&path);
        if (rc == LP_NOMEM) return refuse(q, 500, "out of memory");
        lp_err_prefix(&err, "request path");
        return refuse(q, 400, err.zMsg);
    }
    size_t iRoute = LP_ARRAY_SIZE(aRoute);
    for (size_t i = 0; i < LP_ARRAY_SIZE(aRoute); i++) {
        if (path.n == strlen(aRoute[i].zPath) && memcmp(path.z, aRoute[i].zPath, path.n) == 0)
            iRoute = i;
    }
    if (iRoute == LP_ARRAY_SIZE(aRoute)) {
        StrBuf msg = {0};
        strbuf_appendz(&msg, "unknown endpoint '");
        strbuf_append(&msg, path.z ? path.z : "", path.n);
        strbuf_appendz(&msg, "': try /sql, /cli_json, /search, /autocomplete, /insert, /replace, /update, /delete, /bulk or "
                             "/health");
        if (msg.oom)
            refuse(q, 404, "unknown endpoint");
        else
            refuse_n(q, 404, msg.z, msg.n);
        strbuf_free(&msg);
        strbuf_free(&path);
        return 404;
    }
    strbuf_free(&path);

    if (!method_allowed(zMethod, aRoute[iRoute].zAllow)) {
        char zMsg[128];
        snprintf(zMsg, sizeof(zMsg), "method not allowed on %s: use %s", aRoute[iRoute].zPath,
                 aRoute[iRoute].zAllow);
        q->zAllow = aRoute[iRoute].zAllow;
        return refuse(q, 405, zMsg);
    }
    if (zContentLength && parse_length(zContentLength) > q->nMaxBody) {
        char zMsg[128];
        snprintf(zMsg, sizeof(zMsg), "request body too large: the limit is %zu bytes", q->nMaxBody);
        return refuse(q, 413, zMsg);
    }
    q->ep = aRoute[iRoute].ep;
    q->bFormType = is_form_type(zContentType);

    if (q->ep == HTTP_EP_SQL && pQ) {
        size_t iQuery = (size_t)(pQ - zUri) + 1;
        rc = http_form_get(zUri + iQuery, nUri - iQuery, "query", &q->urlQuery, &err);
        if (rc == LP_NOMEM) return refuse(q, 500, "out of memory");
        if (rc == LP_BADINPUT) {
            lp_err_prefix(&err, "URL query string");
            return refuse(q, 400, err.zMsg);
        }
        q->bUrlQuery = rc == LP_OK;
    }
    return 0;
}

int http_req_body(HttpReq *q, const char *p, size_t n) {
    if (q->ep == HTTP_EP_NONE) {
        /* Refused for its size: read and drop what is still coming, so the
        ** client reads the 413 rather than a reset of the connection it is
        ** still writing to; past HTTP_DRAIN_MAX, answer at once. */
        if (q->status == 413 && n <= HTTP_DRAIN_MAX - q->nDrained) {
            q->nDrained += n;
            return 0;
        }
        return q->status;
    }
    if (n > q->nMaxBody - q->nBody) {
        char zMsg[128];
        snprintf(zMsg, sizeof(zMsg), "request body too large: the limit is %zu bytes", q->nMaxBody);
        strbuf_free(&q->body);
        refuse(q, 413, zMsg);
        q->nDrained = n;
        return n <= HTTP_DRAIN_MAX ? 0 : 413;
    }
    q->nBody += n;
    /* The health check ignores a body; only the SQL endpoints keep it. */
    if (q->ep != HTTP_EP_HEALTH) {
        strbuf_append(&q->body, p, n);
        if (q->body.oom) return refuse(q, 500, "out of memory");
    }
    return 0;
}

/* The SQL error MySQL gives for an empty statement. */
static HttpAction empty_query(HttpReq *q) {
    q->ep = HTTP_EP_NONE;
    q->status = 400;
    strbuf_reset(&q->reply);
    http_json_sql_error(&q->reply, "Query was empty", 1065, "42000");
    return HTTP_ACT_REPLY;
}

HttpAction http_req_finish(HttpReq *q) {
    static const char zPrefix[] = "query=";
    if (q->ep == HTTP_EP_NONE) return HTTP_ACT_REPLY;
    if (q->ep == HTTP_EP_HEALTH) return HTTP_ACT_HEALTH;

    const char *zBody = q->body.z ? q->body.z : "";
    size_t nBody = q->body.n;
    if (q->ep == HTTP_EP_SEARCH) {
        if (nBody == 0) {
            refuse(q, 400, "/search takes a JSON request in the body: {\"table\": ..., \"query\": ...}");
            return HTTP_ACT_REPLY;
        }
        q->zSql = zBody;
        q->nSql = nBody;
        return HTTP_ACT_SEARCH;
    }
    if (q->ep == HTTP_EP_AUTOCOMPLETE) {
        /* as the statement it stands for, answered as /sql answers */
        LpError err;
        lp_err_clear(&err);
        int rc = nBody ? http_autocomplete_sql(zBody, nBody, &q->form, &err) : LP_BADINPUT;
        if (rc == LP_NOMEM) {
            refuse(q, 500, "out of memory");
            return HTTP_ACT_REPLY;
        }
        if (rc != LP_OK) {
            refuse(q, 400, nBody ? err.zMsg : "/autocomplete takes a JSON request in the body: {\"table\": ..., "
                                              "\"query\": ...}");
            return HTTP_ACT_REPLY;
        }
        q->zSql = q->form.z;
        q->nSql = q->form.n;
        return HTTP_ACT_SQL;
    }
    if (q->ep >= HTTP_EP_INSERT) {
        if (nBody == 0) {
            refuse(q, 400, q->ep == HTTP_EP_BULK ? "/bulk takes NDJSON in the body: one {\"insert\": {...}} "
                                                   "(or replace, update, delete) per line"
                                                 : "the request needs a JSON body: {\"table\": ..., \"id\": ..., "
                                                   "\"doc\": {...}}");
            return HTTP_ACT_REPLY;
        }
        q->zSql = zBody;
        q->nSql = nBody;
        return HTTP_ACT_DOC;
    }
    if (q->ep == HTTP_EP_SQL && nBody > 0 &&
        (q->bFormType ||
         (nBody >= sizeof(zPrefix) - 1 && memcmp(zBody, zPrefix, sizeof(zPrefix) - 1) == 0))) {
        LpError err;
        int rc = http_form_get(zBody, nBody, "query", &q->form, &err);
        if (rc == LP_NOMEM) {
            refuse(q, 500, "out of memory");
            return HTTP_ACT_REPLY;
        }
        if (rc == LP_BADINPUT) {
            lp_err_prefix(&err, "form body");
            refuse(q, 400, err.zMsg);
            return HTTP_ACT_REPLY;
        }
        if (rc == LP_OK) {
            q->zSql = q->form.z;
            q->nSql = q->form.n;
            return q->nSql ? HTTP_ACT_SQL : empty_query(q);
        }
        /* A form Content-Type without a query field: curl -d 'SELECT 1'. */
    }
    if (nBody > 0) {
        q->zSql = zBody;
        q->nSql = nBody;
        return HTTP_ACT_SQL;
    }
    if (q->bUrlQuery && q->urlQuery.n > 0) {
        q->zSql = q->urlQuery.z;
        q->nSql = q->urlQuery.n;
        return HTTP_ACT_SQL;
    }
    return empty_query(q);
}
