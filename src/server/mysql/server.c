/* server.c — see server.h. Sockets, the shared epoll instance and the
** worker threads; the protocol itself is in conn.c.
**
** Event loop. Every worker blocks in epoll_wait(maxevents = 1) on the one
** epoll instance, which holds:
**   - the listening socket, one-shot: the worker that gets it accepts
**     until EAGAIN, then re-arms it (so workers never stampede);
**   - every connection, one-shot (invariant 1 of server_int.h): the worker
**     reads what is there, runs each complete command, writes the reply
**     and re-arms the fd for EPOLLIN, or for EPOLLOUT when the socket
**     buffer is full. A query costs one wake-up: read, execute, write,
**     re-arm; no hand-off between threads.
**   - a timerfd firing every second, one-shot: the worker that gets it
**     sweeps the connection list for expired deadlines (handshake not
**     done within connect_timeout, a failing connection still draining)
**     and shuts those sockets down; the worker that next handles the
**     connection sees EOF and closes it.
**   - an eventfd, level-triggered: written once by mysql_server_stop, it
**     then wakes every worker, and each one exits.
** A connection that has handled CONN_BUDGET packets in one wake-up yields:
** it is re-armed for EPOLLOUT (immediately ready), so a client that
** pipelines many statements cannot starve the others.
*/
#include "server/mysql/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "server/mysql/server_int.h"
#include "util/clock.h"
#include "util/log.h"

#define CONN_BUDGET 32              /* packets per wake-up before yielding */
#define IN_MIN_FREE 4096            /* read only with at least this much room */
#define IN_FIRST_ALLOC 16384
#define IN_KEEP_MAX (64 * 1024)     /* larger idle input buffers are freed */
#define OUT_KEEP_MAX (256 * 1024)   /* larger idle output buffers are freed */
#define DRAIN_PER_WAKE (1 << 20)    /* bytes a FAILING conn discards per wake */

#define ER_CON_COUNT_ERROR 1040

/* --------------------------------------------------------- small helpers */

/* "a.b.c.d:port" or "[v6]:port". */
static void format_addr(const struct sockaddr *sa, char *z, size_t n) {
    char zHost[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, zHost, sizeof(zHost));
        port = ntohs(in->sin_port);
        snprintf(z, n, "%s:%d", zHost, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, zHost, sizeof(zHost));
        port = ntohs(in6->sin6_port);
        snprintf(z, n, "[%s]:%d", zHost, port);
    } else {
        snprintf(z, n, "?");
    }
}

/* 127.0.0.0/8, ::1, or ::ffff:127.x.y.z: only local processes can reach
** the server, which is what makes "no credentials" acceptable. */
static int is_loopback(const struct sockaddr *sa) {
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return 0;
}

/* epoll_ctl with the tag ptr (what the worker that wakes up switches on). */
static int arm(MysqlServer *s, int fd, void *ptr, uint32_t events, int op) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = events;
    ev.data.ptr = ptr;
    return epoll_ctl(s->fdEpoll, op, fd, &ev);
}

/* Sends ERR 1040 on a socket just accepted and closes it. */
static void refuse(MysqlServer *s, int fd) {
    /* One best-effort send: the socket is new, so its buffer has room for
    ** a packet this small; a client that is already gone just misses it.
    ** The client has sent nothing yet, so close() sends FIN, not RST. */
    StrBuf sb = {0};
    uint8_t seq = 0;
    mysql_put_err(&sb, &seq, ER_CON_COUNT_ERROR, "08004", "Too many connections");
    if (!sb.oom) {
        ssize_t w = send(fd, sb.z, sb.n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) atomic_fetch_add_explicit(&s->pStats->nBytesOut, (uint64_t)w, memory_order_relaxed);
    }
    strbuf_free(&sb);
    close(fd);
    atomic_fetch_add_explicit(&s->pStats->nMaxedOut, 1, memory_order_relaxed);
}

/* ------------------------------------------------------------ connection */

/* Closes and frees c. Called by the worker that owns c, or by stop once
** no worker is left. */
static void conn_close(MysqlConn *c) {
    MysqlServer *s = c->pSrv;
    pthread_mutex_lock(&s->mu);
    if (c->pPrev) c->pPrev->pNext = c->pNext;
    else s->pConnHead = c->pNext;
    if (c->pNext) c->pNext->pPrev = c->pPrev;
    s->nConn--;
    pthread_mutex_unlock(&s->mu);
    /* Out of the list first (invariant 2): the sweep may no longer use fd. */
    close(c->fd);
    atomic_fetch_sub_explicit(&s->pStats->nConnected, 1, memory_order_relaxed);
    LOG_DEBUG("mysql: connection %u from %s closed", c->id, c->zPeer);
    sql_session_free(c->pSession);
    sql_result_free(&c->res);
    free(c->aIn);
    strbuf_free(&c->out);
    free(c->zUser);
    free(c->zDb);
    free(c);
}

/* Writes queued output. LP_OK (all sent, or the socket is full: check
** iOut) or LP_IOERR (the peer is gone). */
static int conn_flush(MysqlConn *c) {
    while (c->iOut < c->out.n) {
        ssize_t w = send(c->fd, c->out.z + c->iOut, c->out.n - c->iOut, MSG_NOSIGNAL);
        if (w > 0) {
            c->iOut += (size_t)w;
            atomic_fetch_add_explicit(&c->pSrv->pStats->nBytesOut, (uint64_t)w,
                                      memory_order_relaxed);
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return LP_OK;
        } else {
            return LP_IOERR;
        }
    }
    /* Everything sent: start the next reply at offset 0, and give back a
    ** buffer that one large result grew. */
    if (c->out.cap > OUT_KEEP_MAX) strbuf_free(&c->out);
    else strbuf_reset(&c->out);
    c->iOut = 0;
    return LP_OK;
}

/* Reads what the socket has into aIn. Returns 1 (bytes read; *pbMore = 0
** when the read did not fill the buffer, so the socket is probably empty),
** 0 (EAGAIN), -1 (EOF, error or no memory: close). */
static int conn_read(MysqlConn *c, int *pbMore) {
    if (c->iIn == c->nIn) c->iIn = c->nIn = 0;
    if (c->nInAlloc - c->nIn < IN_MIN_FREE) {
        if (c->iIn > 0) {
            memmove(c->aIn, c->aIn + c->iIn, c->nIn - c->iIn);
            c->nIn -= c->iIn;
            c->iIn = 0;
        }
        if (c->nInAlloc - c->nIn < IN_MIN_FREE) {
            /* Doubling; a frame larger than nMaxPacket is refused from its
            ** header, so this stays below about twice that. */
            size_t nNew = c->nInAlloc ? c->nInAlloc * 2 : IN_FIRST_ALLOC;
            uint8_t *a = realloc(c->aIn, nNew);
            if (!a) return -1;
            c->aIn = a;
            c->nInAlloc = nNew;
        }
    }
    size_t nFree = c->nInAlloc - c->nIn;
    for (;;) {
        ssize_t r = recv(c->fd, c->aIn + c->nIn, nFree, 0);
        if (r > 0) {
            c->nIn += (size_t)r;
            atomic_fetch_add_explicit(&c->pSrv->pStats->nBytesIn, (uint64_t)r,
                                      memory_order_relaxed);
            *pbMore = (size_t)r == nFree;
            return 1;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        return -1;  /* 0 is EOF: the client closed (or the sweep shut it) */
    }
}

/* Re-arms c (the last use of c by this worker, invariant 1). */
static void conn_arm(MysqlConn *c, uint32_t events) {
    if (c->iIn == c->nIn && c->nInAlloc > IN_KEEP_MAX) {
        free(c->aIn);
        c->aIn = NULL;
        c->iIn = c->nIn = c->nInAlloc = 0;
    }
    /* Nothing of c is read after the release: from the moment the fd is
    ** armed, another worker may own c, and close and free it. */
    MysqlServer *s = c->pSrv;
    int fd = c->fd;
    atomic_store_explicit(&c->bOwned, 0, memory_order_release);
    if (arm(s, fd, &c->it, events | EPOLLONESHOT, EPOLL_CTL_MOD) != 0) {
        /* Not armed: nobody else can have it. */
        atomic_store_explicit(&c->bOwned, 1, memory_order_relaxed);
        LOG_ERROR("mysql: epoll_ctl on connection %u: %s", c->id, strerror(errno));
        conn_close(c);
    }
}

/* FAILING: the final ERR is sent; half-close, then discard input until
** the client closes (or the sweep cuts it off at its deadline). */
/* Closing at once with unread input would make the kernel send RST, and
** a client still writing (say, the rest of an oversized packet) could
** then lose the ERR before reading it. */
static void conn_drain(MysqlConn *c) {
    uint8_t aJunk[16384];
    size_t nDrained = 0;
    if (!c->bShutWr) {
        shutdown(c->fd, SHUT_WR);
        c->bShutWr = 1;
    }
    while (nDrained < DRAIN_PER_WAKE) {
        ssize_t r = recv(c->fd, aJunk, sizeof(aJunk), 0);
        if (r > 0) {
            nDrained += (size_t)r;
            atomic_fetch_add_explicit(&c->pSrv->pStats->nBytesIn, (uint64_t)r,
                                      memory_order_relaxed);
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        conn_close(c);
        return;
    }
    conn_arm(c, EPOLLIN);
}

/* Handles one wake-up of connection c. */
static void commit_enqueue(MysqlConn *c);

static void conn_run(MysqlConn *c) {
    int bMore = 1;          /* the socket may hold unread bytes */
    int nBudget = CONN_BUDGET;
    int bWasOwned = atomic_exchange_explicit(&c->bOwned, 1, memory_order_acquire);
    if (NEVER(bWasOwned)) return;   /* two workers on one connection: a bug */
    for (;;) {
        if (c->iOut < c->out.n) {
            if (conn_flush(c) != LP_OK) {
                conn_close(c);
                return;
            }
            if (c->iOut < c->out.n) {
                conn_arm(c, EPOLLOUT);
                return;
            }
        }
        /* Invariant 3 holds from here: nothing left to send. */
        if (c->state == CONN_FAILING) {
            conn_drain(c);
            return;
        }
        if (nBudget-- == 0) {
            conn_arm(c, EPOLLIN | EPOLLOUT);
            return;
        }
        int st = mysql_conn_step(c);
        if (st == CONN_STEP_CLOSE) {
            conn_close(c);
            return;
        }
        if (st == CONN_STEP_DONE) continue;
        if (st == CONN_STEP_DEFER) {
            commit_enqueue(c); /* still owned: a committer finishes it */
            return;
        }
        /* No complete packet buffered. After a short read the socket was
        ** empty a moment ago: re-arming (which re-checks readiness) saves
        ** a read that would only say EAGAIN. */
        if (!bMore) {
            conn_arm(c, EPOLLIN);
            return;
        }
        int r = conn_read(c, &bMore);
        if (r < 0) {
            conn_close(c);
            return;
        }
        if (r == 0) {
            conn_arm(c, EPOLLIN);
            return;
        }
    }
}

/* ------------------------------------------------------------ committers */

static void commit_enqueue(MysqlConn *c) {
    MysqlServer *s = c->pSrv;
    c->pCommitNext = NULL;
    pthread_mutex_lock(&s->muCommit);
    if (s->pCommitTail) s->pCommitTail->pCommitNext = c;
    else s->pCommitHead = c;
    s->pCommitTail = c;
    pthread_cond_signal(&s->cvCommit);
    pthread_mutex_unlock(&s->muCommit);
}

/* Takes connections off the queue, waits for their writes to be durable
** (the first wait of a batch syncs everything logged so far, so the ones
** after it usually find their record durable already) and hands them back
** to the workers with the reply queued: armed for EPOLLOUT, a worker sends
** it and goes on with any input already buffered. Drains the queue before
** it stops. */
static void *committer_main(void *arg) {
    MysqlServer *s = arg;
    pthread_mutex_lock(&s->muCommit);
    for (;;) {
        while (!s->pCommitHead && !s->bCommitStop) pthread_cond_wait(&s->cvCommit, &s->muCommit);
        MysqlConn *c = s->pCommitHead;
        if (!c) break;
        s->pCommitHead = c->pCommitNext;
        if (!s->pCommitHead) s->pCommitTail = NULL;
        pthread_mutex_unlock(&s->muCommit);
        mysql_conn_finish_commit(c);
        conn_arm(c, EPOLLOUT);
        pthread_mutex_lock(&s->muCommit);
    }
    pthread_mutex_unlock(&s->muCommit);
    return NULL;
}

/* Sets up a connection for a socket just accepted. */
static void conn_open(MysqlServer *s, int fd, const struct sockaddr *sa) {
    LpError err;
    lp_err_clear(&err);
    MysqlConn *c = calloc(1, sizeof(*c));
    if (!c) {
        close(fd);
        return;
    }
    c->it.kind = POLL_CONN;
    atomic_init(&c->bOwned, 1);   /* this worker sets it up */
    c->pSrv = s;
    c->fd = fd;
    c->id = atomic_fetch_add(&s->nextConnId, 1);
    c->state = CONN_HANDSHAKE;
    format_addr(sa, c->zPeer, sizeof(c->zPeer));
    sql_result_init(&c->res);
    /* Each reply is one send(); Nagle would hold it back while an earlier
    ** segment is unacknowledged, adding up to a delayed-ACK timeout to a
    ** query's latency. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int64_t tLimit = (int64_t)s->cfg.connectTimeout * 1000000000;
    atomic_store(&c->tDeadline, lp_now_ns() + tLimit);
    if (mysql_conn_greet(c, &err) != LP_OK) {
        LOG_ERROR("mysql: connection from %s: %s", c->zPeer, err.zMsg);
        strbuf_free(&c->out);
        free(c);
        close(fd);
        return;
    }

    /* The count and the list change together, under mu (invariant 2). */
    pthread_mutex_lock(&s->mu);
    if (s->nConn >= s->cfg.nMaxConn) {
        pthread_mutex_unlock(&s->mu);
        LOG_WARN("mysql: refused %s: max_connections (%d) reached", c->zPeer, s->cfg.nMaxConn);
        strbuf_free(&c->out);
        free(c);
        refuse(s, fd);
        return;
    }
    c->pNext = s->pConnHead;
    if (c->pNext) c->pNext->pPrev = c;
    s->pConnHead = c;
    s->nConn++;
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_add_explicit(&s->pStats->nConnected, 1, memory_order_relaxed);
    LOG_DEBUG("mysql: connection %u from %s", c->id, c->zPeer);

    /* The greeting goes out now; the client speaks next, so the fd is
    ** registered for input (or output, in the unlikely case the greeting
    ** did not fit). */
    if (conn_flush(c) != LP_OK) {
        conn_close(c);
        return;
    }
    uint32_t ev = (c->iOut < c->out.n ? EPOLLOUT : EPOLLIN) | EPOLLONESHOT;
    atomic_store_explicit(&c->bOwned, 0, memory_order_release);
    if (arm(s, fd, &c->it, ev, EPOLL_CTL_ADD) != 0) {
        atomic_store_explicit(&c->bOwned, 1, memory_order_relaxed);
        LOG_ERROR("mysql: epoll_ctl(ADD) for %s: %s", c->zPeer, strerror(errno));
        conn_close(c);
    }
}

/* ---------------------------------------------------------------- workers */

static void accept_all(MysqlServer *s) {
    for (;;) {
        struct sockaddr_storage sa;
        socklen_t nSa = sizeof(sa);
        int fd = accept4(s->fdListen, (struct sockaddr *)&sa, &nSa, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            atomic_fetch_add_explicit(&s->pStats->nConnections, 1, memory_order_relaxed);
            conn_open(s, fd, (struct sockaddr *)&sa);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        if ((errno == EMFILE || errno == ENFILE) && s->fdReserve >= 0) {
            /* Out of descriptors: free the spare one to take the client
            ** off the queue and tell it why, instead of leaving it to
            ** wait (and the listener to fire again at once). */
            close(s->fdReserve);
            fd = accept4(s->fdListen, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0) {
                LOG_WARN("mysql: out of file descriptors; refusing a connection");
                atomic_fetch_add_explicit(&s->pStats->nConnections, 1, memory_order_relaxed);
                refuse(s, fd);
            }
            s->fdReserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
            continue;
        }
        LOG_WARN("mysql: accept: %s", strerror(errno));
        return;
    }
}

/* Disconnects the connections whose deadline has passed (see the top). */
/* shutdown() rather than close(): the fd stays valid for the worker that
** owns the connection (possibly right now), which sees EOF and closes it
** through the ordinary path. */
static void sweep(MysqlServer *s) {
    int64_t now = lp_now_ns();
    pthread_mutex_lock(&s->mu);
    for (MysqlConn *c = s->pConnHead; c; c = c->pNext) {
        int64_t t = atomic_load(&c->tDeadline);
        if (t && now > t) {
            LOG_DEBUG("mysql: connection %u from %s: timed out", c->id, c->zPeer);
            shutdown(c->fd, SHUT_RDWR);
        }
    }
    pthread_mutex_unlock(&s->mu);
}

/* One worker: wait, handle one event, repeat. maxevents = 1, so a worker
** never holds ready connections that another idle worker could run. */
static void *worker_main(void *arg) {
    MysqlServer *s = arg;
    while (!atomic_load(&s->bStop)) {
        struct epoll_event ev;
        int n = epoll_wait(s->fdEpoll, &ev, 1, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            LOG_ERROR("mysql: epoll_wait: %s", strerror(errno));
            break;
        }
        if (n == 0) continue;
        PollItem *it = ev.data.ptr;
        switch (it->kind) {
        case POLL_WAKE:
            return NULL;
        case POLL_LISTEN:
            accept_all(s);
            if (arm(s, s->fdListen, it, EPOLLIN | EPOLLONESHOT, EPOLL_CTL_MOD) != 0) {
                LOG_ERROR("mysql: epoll_ctl on the listener: %s", strerror(errno));
            }
            break;
        case POLL_TIMER: {
            uint64_t nTick;
            ssize_t r = read(s->fdTimer, &nTick, sizeof(nTick));
            (void)r;    /* EAGAIN if another read won: the sweep is harmless */
            sweep(s);
            arm(s, s->fdTimer, it, EPOLLIN | EPOLLONESHOT, EPOLL_CTL_MOD);
            break;
        }
        case POLL_CONN:
            conn_run((MysqlConn *)it);
            break;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ start/stop */

/* Binds and listens on cfg's address; fills s->fdListen and s->port. */
static int open_listener(MysqlServer *s, LpError *err) {
    struct addrinfo hints, *pList = NULL;
    char zPort[16];
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(zPort, sizeof(zPort), "%d", s->cfg.port);
    int g = getaddrinfo(s->zAddr, zPort, &hints, &pList);
    if (g != 0) {
        return lp_err_set(err, LP_BADINPUT, "mysql listen address '%s': %s", s->zAddr,
                          gai_strerror(g));
    }
    int rc = LP_IOERR;
    lp_err_set(err, LP_IOERR, "mysql listen address '%s': no usable address", s->zAddr);
    /* The first address that binds wins ("localhost" may give ::1 and
    ** 127.0.0.1). The loopback rule is checked on the resolved address, so
    ** a host name cannot smuggle a public interface past it. */
    for (struct addrinfo *ai = pList; ai; ai = ai->ai_next) {
        if (!s->zUser && !is_loopback(ai->ai_addr)) {
            rc = lp_err_set(err, LP_BADINPUT,
                            "refusing to listen for MySQL clients on %s:%d without "
                            "authentication: configure user and password (or "
                            "password_sha1), or listen on a loopback address",
                            s->zAddr, s->cfg.port);
            break;
        }
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            rc = lp_err_set(err, LP_IOERR, "socket for %s: %s", s->zAddr, strerror(errno));
            continue;
        }
        /* Restarting must not wait for old connections in TIME_WAIT. */
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
            rc = lp_err_set(err, LP_IOERR, "mysql: cannot listen on %s:%d: %s", s->zAddr,
                            s->cfg.port, strerror(errno));
            close(fd);
            continue;
        }
        struct sockaddr_storage sa;
        socklen_t nSa = sizeof(sa);
        char zBound[96];
        getsockname(fd, (struct sockaddr *)&sa, &nSa);
        format_addr((struct sockaddr *)&sa, zBound, sizeof(zBound));
        s->port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                                 : ((struct sockaddr_in *)&sa)->sin_port);
        s->fdListen = fd;
        LOG_INFO("mysql listening on %s", zBound);
        rc = LP_OK;
        break;
    }
    freeaddrinfo(pList);
    return rc;
}

static char *dup_or_null(const char *z, int *pbOom) {
    if (!z) return NULL;
    char *p = strdup(z);
    if (!p) *pbOom = 1;
    return p;
}

MysqlServer *mysql_server_start(SqlEngine *e, const MysqlServerConfig *cfg, LpError *err) {
    if (cfg->nMaxConn < 1 || cfg->connectTimeout < 1 || cfg->nMaxPacket < 1024 ||
        cfg->port < 0 || cfg->port > 65535) {
        lp_err_set(err, LP_BADINPUT, "mysql server: invalid configuration (max_connections %d, "
                   "connect_timeout %d, max_packet_size %zu, port %d)", cfg->nMaxConn,
                   cfg->connectTimeout, cfg->nMaxPacket, cfg->port);
        return NULL;
    }
    MysqlServer *s = calloc(1, sizeof(*s));
    if (!s) {
        lp_err_set(err, LP_NOMEM, "out of memory");
        return NULL;
    }
    int bOom = 0;
    s->itListen.kind = POLL_LISTEN;
    s->itWake.kind = POLL_WAKE;
    s->itTimer.kind = POLL_TIMER;
    s->pEngine = e;
    s->pStats = sql_engine_stats(e);
    s->cfg = *cfg;
    s->zAddr = dup_or_null(cfg->zAddr ? cfg->zAddr : "127.0.0.1", &bOom);
    s->zVersion = dup_or_null(cfg->zVersion ? cfg->zVersion : "8.0.0-loupe", &bOom);
    s->zUser = dup_or_null(cfg->zUser, &bOom);
    s->cfg.zAddr = s->zAddr;
    s->cfg.zVersion = s->zVersion;
    s->cfg.zUser = s->zUser;
    if (cfg->aPwHash) {
        memcpy(s->aPwHash, cfg->aPwHash, sizeof(s->aPwHash));
        s->cfg.aPwHash = s->aPwHash;
    }
    s->fdListen = s->fdEpoll = s->fdWake = s->fdTimer = s->fdReserve = -1;
    atomic_init(&s->nextConnId, 1);
    atomic_init(&s->bStop, 0);
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->muCommit, NULL);
    pthread_cond_init(&s->cvCommit, NULL);
    if (bOom) {
        lp_err_set(err, LP_NOMEM, "out of memory");
        goto fail;
    }
    if (open_listener(s, err) != LP_OK) goto fail;

    s->fdEpoll = epoll_create1(EPOLL_CLOEXEC);
    s->fdWake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    s->fdTimer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    s->fdReserve = open("/dev/null", O_RDONLY | O_CLOEXEC);   /* optional */
    if (s->fdEpoll < 0 || s->fdWake < 0 || s->fdTimer < 0) {
        lp_err_set(err, LP_IOERR, "mysql server: epoll/eventfd/timerfd: %s", strerror(errno));
        goto fail;
    }
    /* Deadlines are whole seconds; a 1 s sweep is precise enough. */
    struct itimerspec its = {.it_interval = {1, 0}, .it_value = {1, 0}};
    if (timerfd_settime(s->fdTimer, 0, &its, NULL) != 0 ||
        arm(s, s->fdListen, &s->itListen, EPOLLIN | EPOLLONESHOT, EPOLL_CTL_ADD) != 0 ||
        arm(s, s->fdWake, &s->itWake, EPOLLIN, EPOLL_CTL_ADD) != 0 ||
        arm(s, s->fdTimer, &s->itTimer, EPOLLIN | EPOLLONESHOT, EPOLL_CTL_ADD) != 0) {
        lp_err_set(err, LP_IOERR, "mysql server: epoll setup: %s", strerror(errno));
        goto fail;
    }

    int nThread = cfg->nThreads > 0 ? cfg->nThreads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nThread < 1) nThread = 1;
    s->aThread = calloc((size_t)nThread, sizeof(pthread_t));
    if (!s->aThread) {
        lp_err_set(err, LP_NOMEM, "out of memory");
        goto fail;
    }
    for (int i = 0; i < nThread; i++) {
        int e2 = pthread_create(&s->aThread[i], NULL, worker_main, s);
        if (e2 != 0) {
            lp_err_set(err, LP_IOERR, "mysql server: cannot start worker thread %d: %s", i,
                       strerror(e2));
            mysql_server_stop(s);
            return NULL;
        }
        char zName[32];
        snprintf(zName, sizeof(zName), "mysql-%d", i);
        zName[15] = 0;  /* the kernel's limit for thread names */
        pthread_setname_np(s->aThread[i], zName);
        s->nThread++;
    }
    for (int i = 0; i < MYSQL_COMMITTERS; i++) {
        int e2 = pthread_create(&s->aCommitter[i], NULL, committer_main, s);
        if (e2 != 0) {
            lp_err_set(err, LP_IOERR, "mysql server: cannot start committer thread: %s", strerror(e2));
            mysql_server_stop(s);
            return NULL;
        }
        pthread_setname_np(s->aCommitter[i], i ? "mysql-commit-1" : "mysql-commit-0");
        s->nCommitter++;
    }
    LOG_INFO("mysql: %d worker threads, max_connections %d, max_packet_size %zu%s", nThread,
             s->cfg.nMaxConn, s->cfg.nMaxPacket, s->zUser ? "" : ", no authentication");
    return s;

fail:
    mysql_server_stop(s);
    return NULL;
}

int mysql_server_port(const MysqlServer *s) {
    return s->port;
}

/* Also the clean-up path of a failed start: every field is either set up
** or at its "none" value (-1, NULL, 0 threads). */
void mysql_server_stop(MysqlServer *s) {
    if (!s) return;
    atomic_store(&s->bStop, 1);
    if (s->fdWake >= 0) {
        uint64_t one = 1;
        ssize_t w = write(s->fdWake, &one, sizeof(one));
        (void)w;    /* cannot fail short of a counter overflow */
    }
    for (int i = 0; i < s->nThread; i++) pthread_join(s->aThread[i], NULL);
    /* The committers finish the writes queued (each is applied and logged:
    ** its client waits for the answer), then stop. */
    pthread_mutex_lock(&s->muCommit);
    s->bCommitStop = 1;
    pthread_cond_broadcast(&s->cvCommit);
    pthread_mutex_unlock(&s->muCommit);
    for (int i = 0; i < s->nCommitter; i++) pthread_join(s->aCommitter[i], NULL);
    /* No worker is left: the connections are ours alone. */
    while (s->pConnHead) conn_close(s->pConnHead);
    if (s->fdListen >= 0) {
        close(s->fdListen);
        LOG_INFO("mysql: stopped listening on port %d", s->port);
    }
    if (s->fdEpoll >= 0) close(s->fdEpoll);
    if (s->fdWake >= 0) close(s->fdWake);
    if (s->fdTimer >= 0) close(s->fdTimer);
    if (s->fdReserve >= 0) close(s->fdReserve);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->muCommit);
    pthread_cond_destroy(&s->cvCommit);
    free(s->aThread);
    free(s->zAddr);
    free(s->zVersion);
    free(s->zUser);
    free(s);
}
