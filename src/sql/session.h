/*
** session.h — the SQL engine and client sessions: the one entry point the
** front ends (server/mysql, server/http) call.
**
** Contract.
**  - An SqlEngine is the server's state behind SQL: the catalog of tables,
**    the server-wide counters (SHOW STATUS), the configured limits. One per
**    process, created at start-up, freed at shutdown after every session.
**  - An SqlSession is one client connection's state: autocommit, the open
**    transaction, session variables, the last insert id, the warnings and
**    the meta of its last query (SHOW WARNINGS, SHOW META). HTTP requests
**    use a fresh session each.
**  - sql_execute() runs one statement and always fills *pRes: rows, OK, or
**    an error with its MySQL errno, SQLSTATE and message. It never aborts
**    on bad input. More than one statement in one call is refused
**    (multi-statement mode is off); a trailing ';' is accepted.
**
** Thread safety. The engine may be used from any number of threads; each
** session by one thread at a time (a connection's statements run in order).
** sql_execute() on different sessions runs concurrently: readers of a
** table run in parallel, writers to one table are serialised.
*/
#ifndef LP_SQL_SESSION_H
#define LP_SQL_SESSION_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "embed/embed.h"
#include "sql/result.h"
#include "util/error.h"

typedef struct SqlEngine SqlEngine;     /* opaque */
typedef struct SqlSession SqlSession;   /* opaque */

typedef struct SqlEngineConfig {
    const char *zDataDir;       /* data folder (tables live here); NULL: memory only */
    int walSync;                /* WalSync: binlog_flush (0 = commit) */
    EmbedOptions embed;         /* ONNX Runtime options (ort_lib, onnx_*) */
    int nEmbedInline;           /* embed_batch */
    uint64_t memLimit;          /* rt_mem_limit default (0: 128M) */
    uint64_t walFileBytes;      /* binlog_max_log_size (CatalogConfig; 0: default) */
    const char *zVersion;       /* server version string reported to clients */
    uint32_t nMaxPacket;        /* max_allowed_packet, reported in SHOW VARIABLES */
    int nWorkThreads;           /* pool that shares out large writes' text analysis:
                                ** 0 = one thread per CPU, negative = no pool */
} SqlEngineConfig;

/* Server-wide counters, bumped by the front ends and the executor, shown by
** SHOW STATUS. All fields are updated atomically (relaxed ordering). */
typedef struct SqlStats {
    int64_t tStart;                     /* start time, unix seconds */
    atomic_uint_fast64_t nConnections;  /* connections accepted since start */
    atomic_int_fast64_t nConnected;     /* connections open now */
    atomic_uint_fast64_t nMaxedOut;     /* connections refused: too many */
    atomic_uint_fast64_t nQueries;      /* statements executed */
    atomic_uint_fast64_t nErrors;       /* statements that failed */
    atomic_uint_fast64_t nSelect, nInsert, nReplace, nUpdate, nDelete;
    atomic_uint_fast64_t nBytesIn, nBytesOut; /* wire bytes, both front ends */
    atomic_uint_fast64_t nHttpRequests;
    atomic_uint_fast64_t nQueryEmbeds;  /* knn() query texts run through a model */
} SqlStats;

/* Creates the engine. Returns NULL and fills err on failure. */
SqlEngine *sql_engine_new(const SqlEngineConfig *cfg, LpError *err);
void sql_engine_free(SqlEngine *e);
SqlStats *sql_engine_stats(SqlEngine *e);

/* A new session for connection id connId (shown by CONNECTION_ID()) and
** the authenticated user name (copied; may be NULL). NULL when out of
** memory. */
SqlSession *sql_session_new(SqlEngine *e, uint32_t connId, const char *zUser);

/* With bOn, an autocommit INSERT/REPLACE/UPDATE/DELETE returns as soon as
** it is applied and logged, leaving the wait for its log record to become
** durable to the caller (SqlResult.pCommitTable, sql_result_commit), which
** must do it before it acknowledges the write. The MySQL server parks the
** connection meanwhile instead of holding a worker thread in fdatasync.
** Off by default (the wait happens inside sql_execute). */
void sql_session_defer_commits(SqlSession *s, int bOn);
void sql_session_free(SqlSession *s);

/* Runs one statement; see the contract above. pRes must have been
** initialised with sql_result_init; it is reset first. */
void sql_execute(SqlSession *s, const char *zSql, size_t nSql, SqlResult *pRes);

/* COM_INIT_DB / USE: selects the current database. loupe has one database
** ("loupe"); any name is accepted and reported by DATABASE(), as Manticore
** does. Returns LP_OK or LP_NOMEM. */
int sql_session_use(SqlSession *s, const char *zDb, size_t nDb, LpError *err);

/* COM_FIELD_LIST: fills pRes with the columns of table zTable and no rows,
** or an error (unknown table). */
void sql_field_list(SqlSession *s, const char *zTable, size_t nTable, SqlResult *pRes);

/* MySQL server status bits for this session, for OK/EOF packets. */
#define SQL_STATUS_IN_TRANS   0x0001
#define SQL_STATUS_AUTOCOMMIT 0x0002
#define SQL_STATUS_MORE_RESULTS 0x0008 /* another result set follows (a FACET's) */
int sql_session_status(const SqlSession *s);

#endif /* LP_SQL_SESSION_H */
