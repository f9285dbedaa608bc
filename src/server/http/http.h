/*
** http.h — the HTTP/JSON listener (libmicrohttpd): GET /health, and SQL
** over HTTP as Manticore's /sql?mode=raw and /cli_json answer it. The
** endpoints, request and response shapes are in docs/http.md.
**
** Contract.
**  - http_server_start() binds cfg->zAddr:cfg->port (port 0: any free
**    port), starts cfg->nThreads worker threads that poll with epoll, and
**    logs "http listening on ADDR:PORT" with the port actually bound. It
**    returns NULL and fills err (LP_IOERR: cannot bind or start, with MHD's
**    reason; LP_BADINPUT: address does not resolve; LP_NOMEM) on failure.
**  - Every SQL request runs one statement in a fresh SqlSession of e, on
**    the worker thread that read it. The engine is borrowed: it must
**    outlive the server (stop the server before sql_engine_free).
**  - The server bumps e's SqlStats: nHttpRequests once per request,
**    nBytesIn by the request target and body bytes, nBytesOut by the
**    response body bytes.
**  - http_server_stop() stops accepting, waits for requests in progress,
**    closes every connection, joins the threads and frees everything;
**    NULL is a no-op.
**
** Limits: a body over cfg->nMaxBody bytes is refused with 413 as soon as
** it is declared or received, never buffered whole; at most
** HTTP_MAX_CONNECTIONS connections (more are closed at accept); a
** connection idle for HTTP_IDLE_TIMEOUT_S seconds is closed.
**
** Thread safety: start and stop from one thread (the server's main);
** http_server_port() from any thread.
*/
#ifndef LP_SERVER_HTTP_H
#define LP_SERVER_HTTP_H

#include <stddef.h>

#include "sql/session.h"
#include "util/error.h"

#define HTTP_MAX_CONNECTIONS 1024
#define HTTP_IDLE_TIMEOUT_S 30
#define HTTP_DEFAULT_THREADS 4
#define HTTP_DEFAULT_MAX_BODY (16u << 20)

typedef struct HttpConfig {
    const char *zAddr; /* address to bind: "127.0.0.1", "::1", "0.0.0.0"; NULL: 127.0.0.1 */
    int port;          /* TCP port; 0: any free port (see http_server_port) */
    int nThreads;      /* worker threads; <= 0: HTTP_DEFAULT_THREADS */
    size_t nMaxBody;   /* largest request body in bytes; 0: HTTP_DEFAULT_MAX_BODY */
} HttpConfig;

typedef struct HttpServer HttpServer; /* opaque */

/* Starts the listener; see the contract above. */
HttpServer *http_server_start(SqlEngine *e, const HttpConfig *cfg, LpError *err);

/* The TCP port actually bound. */
int http_server_port(const HttpServer *h);

/* Stops and frees the listener; NULL is a no-op. */
void http_server_stop(HttpServer *h);

#endif /* LP_SERVER_HTTP_H */
