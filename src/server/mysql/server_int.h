/*
** server_int.h — internals shared by server.c (sockets, epoll, worker
** threads) and conn.c (the protocol state machine of one connection).
**
** A connection moves through these states (the function doing each move
** in conn.c is named on the arrow):
**
**   HANDSHAKE --on_handshake--> AUTH_SWITCH --on_auth_switch--+
**       |                                                     |
**       +-------------------authenticate----------------------+--> READY
**   any state --conn_fail (an ERR that ends the connection)--> FAILING
**
** FAILING sends what is queued, half-closes the socket and discards input
** until the client closes or its deadline passes (server.c), so the client
** reads the error instead of a connection reset.
**
** Ownership and concurrency.
**  (1) A MysqlConn is touched by one worker at a time: the one that got
**      its one-shot epoll event. Re-arming the fd is the last thing that
**      worker does with it.
**  (2) The server's connection list (pConnHead, nConn) is guarded by
**      MysqlServer.mu. The timer sweep walks it under mu and only reads
**      tDeadline and calls shutdown() on fd; a connection leaves the list
**      under mu before its fd is closed, so the sweep never sees a
**      closed or reused fd.
**  (3) Between a step and the next read the output buffer is empty: a
**      connection reads or processes more input only when everything
**      queued has been written (backpressure on clients that do not read).
*/
#ifndef LP_SERVER_MYSQL_SERVER_INT_H
#define LP_SERVER_MYSQL_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "server/mysql/packet.h"
#include "server/mysql/server.h"
#include "sql/session.h"
#include "util/strbuf.h"

/* What an epoll event's data.ptr points at: the first member of each
** registered object. */
typedef enum PollKind { POLL_LISTEN, POLL_WAKE, POLL_TIMER, POLL_CONN } PollKind;
typedef struct PollItem {
    PollKind kind;
} PollItem;

typedef struct MysqlConn MysqlConn;

#define MYSQL_COMMITTERS 2

struct MysqlServer {
    PollItem itListen;          /* epoll tag of fdListen */
    PollItem itWake;            /* epoll tag of fdWake */
    PollItem itTimer;           /* epoll tag of fdTimer */
    SqlEngine *pEngine;         /* borrowed */
    SqlStats *pStats;           /* the engine's counters */
    MysqlServerConfig cfg;      /* copy; its strings point at the z* below */
    char *zAddr;                /* owned copy of cfg.zAddr */
    char *zVersion;             /* owned copy of cfg.zVersion */
    char *zUser;                /* owned copy of cfg.zUser, or NULL */
    uint8_t aPwHash[20];        /* copy of cfg.aPwHash when set */
    int fdListen;               /* listening socket */
    int fdEpoll;                /* the one epoll instance all workers wait on */
    int fdWake;                 /* eventfd, level-triggered: stop signal */
    int fdTimer;                /* timerfd, 1 s: deadline sweep */
    int fdReserve;              /* spare fd freed to refuse a client at EMFILE */
    int port;                   /* bound port */
    pthread_t *aThread;         /* nThread workers */
    int nThread;
    pthread_mutex_t mu;         /* guards pConnHead, nConn (invariant 2) */
    MysqlConn *pConnHead;       /* every open connection */
    int nConn;                  /* length of that list */
    atomic_uint nextConnId;     /* connection ids, from 1 */
    atomic_int bStop;           /* set by mysql_server_stop */
    /* Committers: connections whose write waits for its log record to be
    ** durable (CONN_STEP_DEFER) wait here instead of holding a worker in
    ** fdatasync, so the workers go on applying other writes, which then
    ** share the next sync (group commit). */
    pthread_mutex_t muCommit;   /* guards the queue and bCommitStop */
    pthread_cond_t cvCommit;
    MysqlConn *pCommitHead, *pCommitTail;
    int bCommitStop;
    pthread_t aCommitter[MYSQL_COMMITTERS];
    int nCommitter;
};

typedef enum ConnState {
    CONN_HANDSHAKE,     /* greeting sent; waiting for HandshakeResponse41 */
    CONN_AUTH_SWITCH,   /* AuthSwitchRequest sent; waiting for the token */
    CONN_READY,         /* authenticated; waiting for commands */
    CONN_FAILING,       /* final ERR queued; flush, half-close, drain */
} ConnState;

struct MysqlConn {
    PollItem it;                /* epoll tag; must stay first */
    MysqlServer *pSrv;          /* owning server */
    int fd;                     /* non-blocking socket */
    uint32_t id;                /* connection id (CONNECTION_ID()) */
    char zPeer[64];             /* "addr:port" of the client, for logs */
    ConnState state;
    atomic_int bOwned;          /* 1 while a worker handles it (invariant 1):
                                ** its release before re-arming and acquire
                                ** after the wake-up carry, in C11 terms, the
                                ** hand-off that epoll_ctl/epoll_wait make
                                ** in the kernel (TSan sees it too) */
    _Atomic int64_t tDeadline;  /* lp_now_ns() after which the sweep
                                ** disconnects it; 0 = none */
    int bShutWr;                /* FAILING: write side already shut down */
    uint32_t caps;              /* negotiated capabilities */
    uint8_t seq;                /* sequence id of the next packet either way */
    uint8_t seqDefer;           /* CONN_STEP_DEFER: the reply's sequence id */
    MysqlConn *pCommitNext;     /* in the server's commit queue */
    uint8_t aScramble[MYSQL_SCRAMBLE_LEN]; /* this connection's challenge */
    char *zUser;                /* user name from the handshake (owned) */
    char *zDb;                  /* database from the handshake, until READY */
    SqlSession *pSession;       /* from READY on */
    SqlResult res;              /* reused by every statement */
    uint8_t *aIn;               /* input buffer: bytes [iIn, nIn) unread */
    size_t iIn, nIn, nInAlloc;
    StrBuf out;                 /* output: bytes [iOut, out.n) unsent */
    size_t iOut;
    MysqlConn *pNext, *pPrev;   /* server's list, under MysqlServer.mu */
};

/* What mysql_conn_step did. */
enum {
    CONN_STEP_NEED_INPUT,   /* no complete packet buffered */
    CONN_STEP_DONE,         /* one packet consumed; a reply may be queued */
    CONN_STEP_CLOSE,        /* close now, nothing to send (COM_QUIT, OOM) */
    CONN_STEP_DEFER,        /* a write waits for its log record to be durable: the
                            ** connection goes to a committer thread, which then
                            ** queues the reply (mysql_conn_finish_commit) */
};

/* Waits for the deferred write's durability and queues its reply (OK, or
** the sync's error). Called by a committer thread, which owns c. */
void mysql_conn_finish_commit(MysqlConn *c);

/* Queues the initial handshake (sequence id 0). LP_OK, or LP_NOMEM /
** LP_INTERNAL (no random scramble). */
int mysql_conn_greet(MysqlConn *c, LpError *err);

/* Consumes at most one complete packet from c's input buffer and queues
** its reply; see the CONN_STEP_* codes. Called only when c's output is
** empty (invariant 3). */
int mysql_conn_step(MysqlConn *c);

#endif /* LP_SERVER_MYSQL_SERVER_INT_H */
