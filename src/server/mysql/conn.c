/* conn.c — one connection's protocol: the handshake, authentication and
** the command phase, as a state machine over buffered input (see the
** diagram in server_int.h). Nothing here touches a socket: server.c reads
** into c->aIn, calls mysql_conn_step and writes c->out.
**
** Sequence ids: c->seq is the id of the next packet in either direction.
** Reading a packet sets it to the packet's last id + 1, each packet
** queued advances it, and the command phase resets it to 0 after every
** reply, since each command starts a new exchange.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/mysql/server_int.h"
#include "util/clock.h"
#include "util/log.h"

/* MySQL error numbers used here. */
#define ER_OUT_OF_RESOURCES 1041
#define ER_HANDSHAKE_ERROR 1043
#define ER_ACCESS_DENIED 1045
#define ER_UNKNOWN_COM 1047
#define ER_NET_PACKET_TOO_LARGE 1153
#define ER_NET_PACKETS_OUT_OF_ORDER 1156
#define ER_NOT_SUPPORTED_YET 1235
#define ER_MALFORMED_PACKET 1835

/* Queues an ERR that ends the connection and moves it to FAILING, with a
** deadline, so a client that neither reads nor closes is cut off by the
** sweep. */
static int conn_fail(MysqlConn *c, uint16_t iErrno, const char *zState, const char *zMsg) {
    mysql_put_err(&c->out, &c->seq, iErrno, zState, zMsg);
    c->state = CONN_FAILING;
    int64_t tLimit = (int64_t)c->pSrv->cfg.connectTimeout * 1000000000;
    atomic_store(&c->tDeadline, lp_now_ns() + tLimit);
    return CONN_STEP_DONE;
}

static uint16_t session_status(MysqlConn *c) {
    return (uint16_t)sql_session_status(c->pSession);
}

/* Warning counts and errnos are 16-bit on the wire. */
static uint16_t clamp16(int64_t v) {
    return v < 0 ? 0 : v > 0xFFFF ? 0xFFFF : (uint16_t)v;
}

int mysql_conn_greet(MysqlConn *c, LpError *err) {
    int rc = mysql_scramble_new(c->aScramble, err);
    if (rc) return rc;
    MysqlHandshake h = {
        .zVersion = c->pSrv->cfg.zVersion,
        .connId = c->id,
        .aScramble = c->aScramble,
        .caps = MYSQL_SERVER_CAPS,
        .charset = MYSQL_CHARSET_UTF8MB4,
        .status = SQL_STATUS_AUTOCOMMIT,
        .zPlugin = MYSQL_NATIVE_PLUGIN,
    };
    c->seq = 0;
    mysql_put_handshake(&c->out, &c->seq, &h);
    return c->out.oom ? lp_err_set(err, LP_NOMEM, "out of memory") : LP_OK;
}

/* ------------------------------------------------------ authentication */

/* Checks the token, opens the session and queues OK (-> READY), or
** queues ERR 1045 (-> FAILING). */
static int authenticate(MysqlConn *c, const uint8_t *aTok, size_t nTok) {
    MysqlServer *s = c->pSrv;
    /* No configured user: anyone, any password (the server then only
    ** listens on loopback, see server.h). */
    int bOk = 1;
    if (s->zUser) {
        bOk = strcmp(c->zUser, s->zUser) == 0;
        if (bOk && s->cfg.aPwHash) {
            bOk = mysql_native_verify(c->aScramble, s->aPwHash, aTok, nTok);
        } else if (bOk) {
            bOk = nTok == 0;    /* a user without a password */
        }
    }
    if (!bOk) {
        char zMsg[160];
        LOG_WARN("mysql: access denied for user '%.64s' from %s", c->zUser, c->zPeer);
        snprintf(zMsg, sizeof(zMsg), "Access denied for user '%.64s' (using password: %s)",
                 c->zUser, nTok ? "YES" : "NO");
        return conn_fail(c, ER_ACCESS_DENIED, "28000", zMsg);
    }
    c->pSession = sql_session_new(s->pEngine, c->id, c->zUser);
    if (!c->pSession) return conn_fail(c, ER_OUT_OF_RESOURCES, "HY000", "Out of memory");
    sql_session_defer_commits(c->pSession, 1);
    if (c->zDb) {
        LpError err;
        lp_err_clear(&err);
        if (sql_session_use(c->pSession, c->zDb, strlen(c->zDb), &err) != LP_OK) {
            sql_result_from_error(&c->res, &err);
            return conn_fail(c, (uint16_t)c->res.iErrno, c->res.zSqlState, c->res.zErr);
        }
        free(c->zDb);
        c->zDb = NULL;
    }
    mysql_put_ok(&c->out, &c->seq, 0, 0, session_status(c), 0, NULL);
    c->state = CONN_READY;
    c->seq = 0;
    atomic_store(&c->tDeadline, 0);
    LOG_DEBUG("mysql: connection %u from %s: user '%s' authenticated", c->id, c->zPeer,
              c->zUser);
    return CONN_STEP_DONE;
}

static int on_handshake(MysqlConn *c, const uint8_t *p, size_t n) {
    MysqlHandshakeResponse r;
    LpError err;
    lp_err_clear(&err);
    if (mysql_parse_handshake_response(p, n, &r, &err) != LP_OK) {
        LOG_INFO("mysql: connection %u from %s: %s", c->id, c->zPeer, err.zMsg);
        return conn_fail(c, ER_HANDSHAKE_ERROR, "08S01", "Bad handshake");
    }
    c->caps = r.caps & MYSQL_SERVER_CAPS;
    /* Copies: the payload is overwritten by the next read, and an
    ** AuthSwitch exchange needs them one packet later. */
    c->zUser = strndup(r.zUser, r.nUser);
    if (r.zDb && r.nDb) c->zDb = strndup(r.zDb, r.nDb);
    if (!c->zUser || (r.zDb && r.nDb && !c->zDb)) {
        return conn_fail(c, ER_OUT_OF_RESOURCES, "HY000", "Out of memory");
    }
    /* A client that starts with another method (MySQL 8's
    ** caching_sha2_password) is asked to switch, with the same scramble. */
    if ((r.caps & MYSQL_CLIENT_PLUGIN_AUTH) && r.zPlugin &&
        strcmp(r.zPlugin, MYSQL_NATIVE_PLUGIN) != 0) {
        mysql_put_auth_switch(&c->out, &c->seq, MYSQL_NATIVE_PLUGIN, c->aScramble,
                              MYSQL_SCRAMBLE_LEN);
        c->state = CONN_AUTH_SWITCH;
        return CONN_STEP_DONE;
    }
    return authenticate(c, r.aAuth, r.nAuth);
}

/* ------------------------------------------------------------ commands */

/* Queues the reply to a statement: OK, ERR, or a text result set. */
static void put_result(MysqlConn *c, uint8_t *pSeq, const SqlResult *res, uint16_t status) {
    StrBuf *out = &c->out;
    if (res->kind == SQLRES_ERROR) {
        mysql_put_err(out, pSeq, clamp16(res->iErrno), res->zSqlState, res->zErr);
        return;
    }
    /* A result set without columns cannot be sent: it is an OK. */
    if (res->kind != SQLRES_ROWS || res->nCol <= 0) {
        mysql_put_ok(out, pSeq, res->nAffected, res->iLastInsertId, status,
                     clamp16(res->nWarning), res->zInfo);
        return;
    }
    /* Text result set: column count, column definitions, EOF, rows, EOF
    ** (DEPRECATE_EOF is not advertised, so both EOFs are always sent). */
    size_t off = mysql_packet_begin(out);
    mysql_put_lenenc(out, (uint64_t)res->nCol);
    mysql_packet_end(out, off, pSeq);
    for (int i = 0; i < res->nCol; i++) {
        MysqlColumnDef d;
        mysql_column_from_sql(&res->aCol[i], &d);
        mysql_put_column_def(out, pSeq, &d, 0);
    }
    mysql_put_eof(out, pSeq, clamp16(res->nWarning), status);
    for (size_t r = 0; r < res->nRow && !out->oom; r++) {
        mysql_put_row(out, pSeq, &res->aCell[r * (size_t)res->nCol], res->nCol);
    }
    mysql_put_eof(out, pSeq, clamp16(res->nWarning), status);
}

/* COM_STATISTICS: one raw text packet, no header byte. */
static void put_statistics(MysqlConn *c, uint8_t *pSeq) {
    SqlStats *st = c->pSrv->pStats;
    int64_t nUp = lp_unix_now() - st->tStart;
    uint64_t nQ = atomic_load(&st->nQueries);
    size_t off = mysql_packet_begin(&c->out);
    strbuf_appendf(&c->out,
                   "Uptime: %" PRId64 "  Threads: %" PRId64 "  Questions: %" PRIu64
                   "  Slow queries: 0  Opens: 0  Open tables: 0  Queries per second avg: %.3f",
                   nUp, (int64_t)atomic_load(&st->nConnected), nQ,
                   nUp > 0 ? (double)nQ / (double)nUp : 0.0);
    mysql_packet_end(&c->out, off, pSeq);
}

static int on_command(MysqlConn *c, const uint8_t *p, size_t n) {
    MysqlCommand cmd;
    LpError err;
    uint8_t seq = c->seq;
    lp_err_clear(&err);
    if (mysql_parse_command(p, n, &cmd, &err) != LP_OK) {
        char zMsg[LP_ERRMSG_MAX + 40];
        snprintf(zMsg, sizeof(zMsg), "Malformed communication packet: %s", err.zMsg);
        mysql_put_err(&c->out, &seq, ER_MALFORMED_PACKET, "08S01", zMsg);
        c->seq = 0;
        return CONN_STEP_DONE;
    }
    switch (cmd.cmd) {
    case MYSQL_COM_QUIT:
        return CONN_STEP_CLOSE;     /* no reply, by the protocol */
    case MYSQL_COM_PING:
        mysql_put_ok(&c->out, &seq, 0, 0, session_status(c), 0, NULL);
        break;
    case MYSQL_COM_QUERY:
        sql_execute(c->pSession, (const char *)cmd.pArg, cmd.nArg, &c->res);
        if (c->res.pCommitTable) { /* a committer thread replies */
            c->seqDefer = seq;
            c->seq = 0;
            return CONN_STEP_DEFER;
        }
        /* a SELECT with FACETs answers several result sets, each but the
        ** last saying another follows */
        for (const SqlResult *p = &c->res; p; p = p->pNext) {
            put_result(c, &seq, p, (uint16_t)(session_status(c) | (p->pNext ? SQL_STATUS_MORE_RESULTS : 0)));
        }
        break;
    case MYSQL_COM_INIT_DB:
        if (sql_session_use(c->pSession, (const char *)cmd.pArg, cmd.nArg, &err) == LP_OK) {
            mysql_put_ok(&c->out, &seq, 0, 0, session_status(c), 0, NULL);
        } else {
            sql_result_from_error(&c->res, &err);
            put_result(c, &seq, &c->res, 0);
        }
        break;
    case MYSQL_COM_FIELD_LIST:
        /* Column definitions (with the extra default-value field) and an
        ** EOF; no column count first, unlike a result set. The wildcard
        ** is ignored, as MySQL 8 does. */
        sql_field_list(c->pSession, cmd.zTable, cmd.nTable, &c->res);
        if (c->res.kind == SQLRES_ERROR) {
            put_result(c, &seq, &c->res, 0);
            break;
        }
        for (int i = 0; i < c->res.nCol; i++) {
            MysqlColumnDef d;
            mysql_column_from_sql(&c->res.aCol[i], &d);
            mysql_put_column_def(&c->out, &seq, &d, 1);
        }
        mysql_put_eof(&c->out, &seq, 0, session_status(c));
        break;
    case MYSQL_COM_STATISTICS:
        put_statistics(c, &seq);
        break;
    case MYSQL_COM_RESET_CONNECTION: {
        /* A fresh session: variables, warnings and last insert id reset. */
        SqlSession *pNew = sql_session_new(c->pSrv->pEngine, c->id, c->zUser);
        if (!pNew) {
            mysql_put_err(&c->out, &seq, ER_OUT_OF_RESOURCES, "HY000", "Out of memory");
            break;
        }
        sql_session_free(c->pSession);
        c->pSession = pNew;
        sql_session_defer_commits(c->pSession, 1);
        mysql_put_ok(&c->out, &seq, 0, 0, session_status(c), 0, NULL);
        break;
    }
    case MYSQL_COM_SET_OPTION:
        /* Turning multi-statements off is answered with an EOF packet, the
        ** historical reply clients expect; on is refused. */
        if (cmd.option == MYSQL_OPTION_MULTI_STATEMENTS_OFF) {
            mysql_put_eof(&c->out, &seq, 0, session_status(c));
        } else {
            mysql_put_err(&c->out, &seq, ER_NOT_SUPPORTED_YET, "42000",
                          "loupe does not support multiple statements per query");
        }
        break;
    default:
        /* Includes prepared statements (COM_STMT_*): not yet. The
        ** connection stays usable. */
        mysql_put_err(&c->out, &seq, ER_UNKNOWN_COM, "08S01", "Unknown command");
        break;
    }
    c->seq = 0;
    return CONN_STEP_DONE;
}

void mysql_conn_finish_commit(MysqlConn *c) {
    uint8_t seq = c->seqDefer;
    sql_result_commit(&c->res);
    put_result(c, &seq, &c->res, session_status(c));
    if (c->out.oom) {
        static const char zOom[] = "Out of memory while sending the reply";
        strbuf_free(&c->out);
        c->iOut = 0;
        seq = c->seqDefer;
        mysql_put_err(&c->out, &seq, ER_OUT_OF_RESOURCES, "HY000", zOom);
    }
    c->seq = 0;
}

/* ---------------------------------------------------------------- step */

int mysql_conn_step(MysqlConn *c) {
    MysqlServer *s = c->pSrv;
    MysqlFrame f;
    LpError err;
    int bDone;
    lp_err_clear(&err);
    uint8_t *a = c->aIn + c->iIn;
    int rc = mysql_frame_scan(a, c->nIn - c->iIn, c->seq, s->cfg.nMaxPacket, &f, &bDone, &err);
    /* Both errors end the connection: after a refused or out-of-step
    ** packet the byte stream can no longer be framed reliably. */
    if (rc == LP_LIMIT) {
        LOG_INFO("mysql: connection %u from %s: %s", c->id, c->zPeer, err.zMsg);
        c->seq = f.seqNext;
        return conn_fail(c, ER_NET_PACKET_TOO_LARGE, "08S01", err.zMsg);
    }
    if (rc != LP_OK) {
        LOG_INFO("mysql: connection %u from %s: %s", c->id, c->zPeer, err.zMsg);
        c->seq = f.seqNext;
        return conn_fail(c, ER_NET_PACKETS_OUT_OF_ORDER, "08S01", "Got packets out of order");
    }
    if (!bDone) return CONN_STEP_NEED_INPUT;
    const uint8_t *p = mysql_frame_join(a, &f);
    /* The payload stays valid until the next read into aIn, which only
    ** happens after this step has returned. */
    c->iIn += f.nWire;
    c->seq = f.seqNext;

    switch (c->state) {
    case CONN_HANDSHAKE:
        rc = on_handshake(c, p, f.nPayload);
        break;
    case CONN_AUTH_SWITCH:
        rc = authenticate(c, p, f.nPayload);
        break;
    case CONN_READY:
        rc = on_command(c, p, f.nPayload);
        break;
    case CONN_FAILING:
    default:
        rc = CONN_STEP_DONE;    /* server.c drains input instead */
        break;
    }
    if (c->out.oom) {
        /* The reply could not be built: drop it (the buffer was empty
        ** before this step, invariant 3) and try a short error instead. */
        static const char zOom[] = "Out of memory while sending the reply";
        strbuf_free(&c->out);
        c->iOut = 0;
        c->seq = f.seqNext;
        if (c->state == CONN_READY) {
            mysql_put_err(&c->out, &c->seq, ER_OUT_OF_RESOURCES, "HY000", zOom);
            c->seq = 0;
        } else {
            conn_fail(c, ER_OUT_OF_RESOURCES, "HY000", zOom);
        }
        return c->out.oom ? CONN_STEP_CLOSE : CONN_STEP_DONE;
    }
    return rc;
}
