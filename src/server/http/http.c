/*
** http.c — the HTTP listener: libmicrohttpd glue around http_req.c (routing)
** and http_json.c (answers). See http.h for the contract.
**
** Threads. MHD runs HttpConfig.nThreads internal threads, each with its
** own epoll set, all accepting on the one listening socket. A request is
** handled start to finish on the thread that reads it, SQL included:
** statements are short and a pool worker blocked on one only delays the
** connections it polls, never the others.
**
** One request, as MHD calls us:
**   on_uri        request line read: allocate the HttpCtx, keep the raw
**                 request target (MHD gives the handler a decoded path
**                 without the query string; routing wants the original);
**   on_request    called once for the headers (*pnData == 0), once per
**                 body chunk, then once more with *pnData == 0: the
**                 HttpReq steps begin / body / finish, then the answer;
**   on_completed  always, also for aborted requests: free the HttpCtx.
** A refusal of a request that carries a body (404, 405, 413 on its
** Content-Length) is queued at once: MHD then sends it without reading the
** body and closes the connection. Without a body, it waits for the final
** call so that the connection stays open for the next request.
*/
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "server/http/http.h"
#include "server/http/http_int.h"
#include "util/clock.h"
#include "util/log.h"

struct HttpServer {
    struct MHD_Daemon *pDaemon; /* the running daemon */
    SqlEngine *pEngine;         /* borrowed: outlives the server */
    SqlStats *pStats;           /* the engine's counters */
    size_t nMaxBody;            /* body limit for every request */
    int port;                   /* port actually bound */
    int64_t tStart;             /* when the server started, unix seconds */
    atomic_uint nextConnId;     /* session ids handed to sql_session_new */
    atomic_int bStarting;       /* MHD_start_daemon has not returned yet */
    pthread_t startThread;      /* the thread calling MHD_start_daemon */
    char zStartErr[256];        /* its last MHD message (written by it only) */
};

/* The state of one request, owned by MHD's connection between on_uri and
** on_completed. */
typedef struct HttpCtx {
    HttpReq q;    /* routing state */
    StrBuf uri;   /* request target as received */
    int bBegun;   /* http_req_begin has run */
    int bReplied; /* a reply is queued; ignore what follows */
} HttpCtx;

static const char zOomBody[] = "{\"error\":\"out of memory\"}";

static void count(atomic_uint_fast64_t *p, uint64_t n) {
    atomic_fetch_add_explicit(p, n, memory_order_relaxed);
}

/* Queues status with the malloc'd JSON body z[0..n) (taken over), or with
** zOomBody (status 500) when z is NULL. */
static enum MHD_Result send_json(HttpServer *h, struct MHD_Connection *c, int status, char *z,
                                 size_t n, const char *zAllow) {
    struct MHD_Response *r;
    if (z) {
        r = MHD_create_response_from_buffer_with_free_callback(n, z, free);
        if (r == NULL) free(z);
    } else {
        status = 500;
        n = sizeof(zOomBody) - 1;
        r = MHD_create_response_from_buffer(n, (void *)zOomBody, MHD_RESPMEM_PERSISTENT);
    }
    /* Without a response object MHD_NO makes MHD close the connection. */
    if (r == NULL) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json; charset=UTF-8");
    if (zAllow) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, zAllow);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    count(&h->pStats->nBytesOut, n);
    return ret;
}

/* Queues the JSON in *sb (freed here) with status. */
static enum MHD_Result send_buf(HttpServer *h, struct MHD_Connection *c, int status, StrBuf *sb,
                                const char *zAllow) {
    if (sb->oom || sb->z == NULL) {
        strbuf_free(sb);
        return send_json(h, c, 500, NULL, 0, NULL);
    }
    size_t n;
    char *z = strbuf_detach(sb, &n);
    return send_json(h, c, status, z, n, zAllow);
}

/* Runs the statement of x in a fresh session and queues its answer. */
static enum MHD_Result run_sql(HttpServer *h, struct MHD_Connection *c, HttpCtx *x) {
    uint32_t id = atomic_fetch_add_explicit(&h->nextConnId, 1, memory_order_relaxed);
    SqlSession *s = sql_session_new(h->pEngine, id, NULL);
    if (s == NULL) return send_json(h, c, 500, NULL, 0, NULL);
    SqlResult res;
    sql_result_init(&res);
    sql_execute(s, x->q.zSql, x->q.nSql, &res);
    StrBuf out = {0};
    http_json_result(&out, &res);
    int status = http_status_for_result(&res);
    sql_result_free(&res);
    sql_session_free(s);
    return send_buf(h, c, status, &out, NULL);
}

/* POST /insert, /replace, /update, /delete, /bulk (http_doc.c), in a
** fresh session. */
static enum MHD_Result run_doc(HttpServer *h, struct MHD_Connection *c, HttpCtx *x) {
    uint32_t id = atomic_fetch_add_explicit(&h->nextConnId, 1, memory_order_relaxed);
    SqlSession *s = sql_session_new(h->pEngine, id, NULL);
    if (s == NULL) return send_json(h, c, 500, NULL, 0, NULL);
    StrBuf out = {0};
    int status = http_doc_run(s, x->q.ep, x->q.zSql, x->q.nSql, &out);
    sql_session_free(s);
    return send_buf(h, c, status, &out, NULL);
}

/* The value SHOW META gives zName, copied into z[0..n); "" when none. */
static void meta_value(const SqlResult *m, const char *zName, char *z, size_t n) {
    z[0] = 0;
    if (m->kind != SQLRES_ROWS || m->nCol < 2) return;
    for (size_t i = 0; i < m->nRow; i++) {
        const SqlCell *a = m->aCell + i * (size_t)m->nCol;
        if (a[0].z && a[0].n == strlen(zName) && memcmp(a[0].z, zName, a[0].n) == 0 && a[1].z) {
            snprintf(z, n, "%.*s", (int)a[1].n, a[1].z);
        }
    }
}

/* POST /search: the JSON request as one SELECT, run in a fresh session
** with SHOW META after it for the total. */
static enum MHD_Result run_search(HttpServer *h, struct MHD_Connection *c, HttpCtx *x) {
    int64_t t0 = lp_now_ns();
    StrBuf sql = {0}, out = {0};
    HttpSearch hs;
    LpError err;
    lp_err_clear(&err);
    int rc = http_search_sql(x->q.zSql, x->q.nSql, &sql, &hs, &err);
    if (rc != LP_OK) {
        strbuf_free(&sql);
        if (rc == LP_NOMEM) return send_json(h, c, 500, NULL, 0, NULL);
        http_search_error(&out, "parse_exception", err.zMsg, NULL);
        return send_buf(h, c, 400, &out, NULL);
    }
    uint32_t id = atomic_fetch_add_explicit(&h->nextConnId, 1, memory_order_relaxed);
    SqlSession *s = sql_session_new(h->pEngine, id, NULL);
    if (s == NULL || sql.oom) {
        sql_session_free(s);
        strbuf_free(&sql);
        http_search_free(&hs);
        return send_json(h, c, 500, NULL, 0, NULL);
    }
    SqlResult res, meta;
    sql_result_init(&res);
    sql_result_init(&meta);
    sql_execute(s, sql.z, sql.n, &res);
    int status = http_status_for_result(&res);
    const SqlResult *pErr = res.kind == SQLRES_ERROR ? &res : NULL;
    if (res.kind == SQLRES_ROWS) {
        static const char zMeta[] = "SHOW META";
        sql_execute(s, zMeta, sizeof(zMeta) - 1, &meta);
        char zTotal[32], zRel[8];
        meta_value(&meta, "total_found", zTotal, sizeof(zTotal));
        meta_value(&meta, "total_relation", zRel, sizeof(zRel));
        /* (the aggregations' buckets are the FACET result sets after res) */
        http_search_answer(&out, &hs, &res, zTotal, zRel[0] ? zRel : "eq", (lp_now_ns() - t0) / 1000000);
    }
    if (pErr) {
        /* the SQL layer's own message: it names what the request asked for */
        http_search_error(&out, status >= 500 ? "internal_error" : "query_exception", pErr->zErr, hs.zTable);
    }
    sql_result_free(&res);
    sql_result_free(&meta);
    sql_session_free(s);
    strbuf_free(&sql);
    http_search_free(&hs);
    return send_buf(h, c, status, &out, NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *zUrl,
                                  const char *zMethod, const char *zVersion, const char *pData,
                                  size_t *pnData, void **ppCtx) {
    HttpServer *h = cls;
    HttpCtx *x = *ppCtx;
    if (x == NULL) {
        /* on_uri could not allocate; *pnData is left as is, so MHD sees
        ** the body unread and closes the connection after the reply. */
        return send_json(h, c, 500, NULL, 0, NULL);
    }
    if (x->bReplied) {
        *pnData = 0;
        return MHD_YES;
    }
    if (!x->bBegun) {
        x->bBegun = 1;
        count(&h->pStats->nHttpRequests, 1);
        count(&h->pStats->nBytesIn, x->uri.n);
        const char *zType =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        const char *zLen =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (http_req_begin(&x->q, zMethod, x->uri.z, x->uri.n, zType, zLen) == 0) return MHD_YES;
        /* Refused. With no body to come, answer on the final call: a reply
        ** queued now makes MHD close a keep-alive connection. */
        const char *zTe =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
        if (zTe == NULL && (zLen == NULL || strspn(zLen, "0") == strlen(zLen))) return MHD_YES;
    } else if (*pnData) {
        count(&h->pStats->nBytesIn, *pnData);
        int status = http_req_body(&x->q, pData, *pnData);
        *pnData = 0;
        if (status == 0) return MHD_YES;
    } else {
        switch (http_req_finish(&x->q)) {
        case HTTP_ACT_REPLY:
            break;
        case HTTP_ACT_HEALTH: {
            int64_t tStart = h->pStats->tStart > 0 ? h->pStats->tStart : h->tStart;
            StrBuf sb = {0};
            http_json_health(&sb, (int64_t)time(NULL) - tStart);
            x->bReplied = 1;
            return send_buf(h, c, 200, &sb, NULL);
        }
        case HTTP_ACT_SQL:
            x->bReplied = 1;
            return run_sql(h, c, x);
        case HTTP_ACT_SEARCH:
            x->bReplied = 1;
            return run_search(h, c, x);
        case HTTP_ACT_DOC:
            x->bReplied = 1;
            return run_doc(h, c, x);
        }
    }
    /* A refusal prepared by the routing steps. */
    x->bReplied = 1;
    return send_buf(h, c, x->q.status, &x->q.reply, x->q.zAllow);
}

static void *on_uri(void *cls, const char *zUri, struct MHD_Connection *c) {
    HttpServer *h = cls;
    HttpCtx *x = calloc(1, sizeof(*x));
    if (x == NULL) return NULL;
    http_req_init(&x->q, h->nMaxBody);
    strbuf_appendz(&x->uri, zUri);
    if (x->uri.oom) {
        free(x);
        return NULL;
    }
    return x;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **ppCtx,
                         enum MHD_RequestTerminationCode why) {
    HttpCtx *x = *ppCtx;
    if (x == NULL) return;
    http_req_free(&x->q);
    strbuf_free(&x->uri);
    free(x);
    *ppCtx = NULL;
}

/* MHD's error messages: the last one kept while starting (why it failed),
** debug-logged afterwards (a client's malformed request is no news). */
static void on_mhd_log(void *cls, const char *zFmt, va_list ap) {
    HttpServer *h = cls;
    char z[256];
    vsnprintf(z, sizeof(z), zFmt, ap);
    size_t n = strlen(z);
    while (n > 0 && (z[n - 1] == '\n' || z[n - 1] == '\r'))
        z[--n] = 0;
    if (atomic_load(&h->bStarting) && pthread_equal(pthread_self(), h->startThread)) {
        memcpy(h->zStartErr, z, n + 1);
    } else {
        LOG_DEBUG("http: %s", z);
    }
}

/* Resolves zAddr (brackets around an IPv6 address allowed) and port into
** *pSs. Returns LP_OK or LP_BADINPUT. */
static int resolve(const char *zAddr, int port, struct sockaddr_storage *pSs, LpError *err) {
    char zHost[256], zPort[16];
    size_t n = strlen(zAddr);
    if (n >= 2 && zAddr[0] == '[' && zAddr[n - 1] == ']') {
        zAddr++;
        n -= 2;
    }
    if (n >= sizeof(zHost))
        return lp_err_set(err, LP_BADINPUT, "http: address too long: '%.40s...'", zAddr);
    memcpy(zHost, zAddr, n);
    zHost[n] = 0;
    snprintf(zPort, sizeof(zPort), "%d", port);
    struct addrinfo hints = {0}, *pRes = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int g = getaddrinfo(zHost, zPort, &hints, &pRes);
    if (g != 0)
        return lp_err_set(err, LP_BADINPUT, "http: cannot resolve listen address '%s': %s", zHost,
                          gai_strerror(g));
    memcpy(pSs, pRes->ai_addr, pRes->ai_addrlen);
    freeaddrinfo(pRes);
    return LP_OK;
}

HttpServer *http_server_start(SqlEngine *e, const HttpConfig *cfg, LpError *err) {
    const char *zAddr = cfg->zAddr ? cfg->zAddr : "127.0.0.1";
    if (cfg->port < 0 || cfg->port > 65535) {
        lp_err_set(err, LP_BADINPUT, "http: port %d out of range 0..65535", cfg->port);
        return NULL;
    }
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    if (resolve(zAddr, cfg->port, &ss, err) != LP_OK) return NULL;

    HttpServer *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        lp_err_set(err, LP_NOMEM, "http: out of memory starting the listener");
        return NULL;
    }
    h->pEngine = e;
    h->pStats = sql_engine_stats(e);
    h->nMaxBody = cfg->nMaxBody ? cfg->nMaxBody : HTTP_DEFAULT_MAX_BODY;
    h->tStart = (int64_t)time(NULL);
    atomic_init(&h->nextConnId, 1);
    atomic_init(&h->bStarting, 1);
    h->startThread = pthread_self();
    unsigned nThreads = cfg->nThreads > 0 ? (unsigned)cfg->nThreads : HTTP_DEFAULT_THREADS;

    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL_LINUX_ONLY | MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    /* One option and its arguments per line. */
    /* clang-format off */
    h->pDaemon = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, on_request, h,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,      /* first, as MHD asks */
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, nThreads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_TIMEOUT_S,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, h,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
        MHD_OPTION_END);
    /* clang-format on */
    if (h->pDaemon == NULL) {
        lp_err_set(err, LP_IOERR, "http: cannot listen on %s:%d: %s", zAddr, cfg->port,
                   h->zStartErr[0] ? h->zStartErr : "libmicrohttpd failed to start");
        free(h);
        return NULL;
    }
    atomic_store(&h->bStarting, 0);
    const union MHD_DaemonInfo *pInfo = MHD_get_daemon_info(h->pDaemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = pInfo ? pInfo->port : cfg->port;
    if (ss.ss_family == AF_INET6 && zAddr[0] != '[')
        LOG_INFO("http listening on [%s]:%d", zAddr, h->port);
    else
        LOG_INFO("http listening on %s:%d", zAddr, h->port);
    return h;
}

int http_server_port(const HttpServer *h) {
    return h->port;
}

void http_server_stop(HttpServer *h) {
    if (h == NULL) return;
    MHD_stop_daemon(h->pDaemon);
    free(h);
}
