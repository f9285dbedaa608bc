/*
** server.h — the MySQL protocol server: listens on one TCP address,
** authenticates clients with mysql_native_password and runs their
** commands through the SQL engine (sql/session.h).
**
** Contract.
**  - mysql_server_start() binds, listens and starts a fixed pool of worker
**    threads; it returns once the server accepts connections (the bound
**    port is mysql_server_port(), useful when cfg->port was 0). It logs
**    "mysql listening on ADDR:PORT". mysql_server_stop() stops accepting,
**    closes every connection (freeing its session), joins the workers and
**    frees the server; the engine stays the caller's and must outlive it.
**  - Credentials: when cfg->zUser is NULL any user name and password are
**    accepted, and the server refuses to start unless it listens on a
**    loopback address. When zUser is set, the user name must match and,
**    when aPwHash is set, the client must prove the password whose
**    SHA1(SHA1()) it is; without aPwHash the password must be empty.
**  - Limits: at most nMaxConn connections (more are answered ERR 1040 and
**    closed); a packet over nMaxPacket bytes is answered ERR 1153 and the
**    connection closed, without buffering its payload; a client that has
**    not authenticated within connectTimeout seconds is disconnected.
**  - Counters in sql_engine_stats() are kept up to date: nConnections,
**    nConnected, nMaxedOut, nBytesIn, nBytesOut.
**
** Concurrency. All workers wait on one epoll instance; each connection is
** registered one-shot, so exactly one worker handles a connection at a
** time, and a connection's statements run in order on its one session.
** No worker ever blocks on a socket: output that does not fit in the
** socket buffer waits in the connection until the socket is writable, and
** a half-received packet just waits in the input buffer. Start and stop
** are called from one controlling thread.
*/
#ifndef LP_SERVER_MYSQL_SERVER_H
#define LP_SERVER_MYSQL_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "sql/session.h"
#include "util/error.h"

typedef struct MysqlServerConfig {
    const char *zAddr;          /* address to bind: IPv4, IPv6 or host name */
    int port;                   /* TCP port; 0 picks a free one */
    int nThreads;               /* worker threads; <= 0: one per CPU */
    int nMaxConn;               /* simultaneous connections */
    size_t nMaxPacket;          /* largest command payload accepted, bytes */
    int connectTimeout;         /* seconds to complete the handshake */
    const char *zVersion;       /* version string sent in the handshake */
    const char *zUser;          /* required user name, or NULL: no auth */
    const uint8_t *aPwHash;     /* 20-byte SHA1(SHA1(password)), or NULL */
} MysqlServerConfig;

typedef struct MysqlServer MysqlServer;    /* opaque */

/* Starts the server for engine e (borrowed). Returns NULL and fills err:
** LP_BADINPUT (bad address, or no credentials on a non-loopback address),
** LP_IOERR (socket, bind, listen, epoll, thread creation failed; the
** message names the call and the address), LP_NOMEM. cfg is copied. */
MysqlServer *mysql_server_start(SqlEngine *e, const MysqlServerConfig *cfg, LpError *err);

/* The TCP port the server is bound to. */
int mysql_server_port(const MysqlServer *s);

/* Stops and frees the server; see the contract. s may be NULL. */
void mysql_server_stop(MysqlServer *s);

#endif /* LP_SERVER_MYSQL_SERVER_H */
