/*
** wal.h — a table's write-ahead log: append, group commit, replay.
**
** Contract. A Wal owns one folder (a table's `wal/`) holding numbered log
** files. Callers append opaque records; each gets the next log sequence
** number (LSN, 1, 2, 3, ... per table, never reused). wal_append() only
** writes the record into the current file (page cache); wal_commit(lsn)
** then makes every record up to lsn durable under the sync policy:
**
**   WAL_SYNC_COMMIT  fdatasync before wal_commit returns. Writers that
**                    commit at the same time share one fdatasync (group
**                    commit): the first to arrive syncs everything written
**                    so far, the others wait for it.
**   WAL_SYNC_1S      a background thread syncs once a second; wal_commit
**                    returns at once (a crash may lose the last second).
**   WAL_SYNC_NONE    never synced by loupe (the kernel writes back when it
**                    likes); wal_close still syncs.
**
** The on-disk format is described at the top of wal.c.
**
** Replay. wal_open() reads every file in order and hands each intact
** record to xRecord, oldest first. A torn last record (a crash during an
** append: the record runs past the end of the file, or everything from it
** to the end is zeros or fails its checksum with nothing valid after it) is
** cut off with a logged warning, and appends continue from there. A record
** that fails its checksum with an intact record after it is corruption in
** the middle of the log: wal_open fails with LP_CORRUPT naming the file and
** offset, and nothing is truncated (the table must not open).
**
** Records covered elsewhere (by a sealed segment) are skipped by giving
** wal_open the first LSN still needed; wal_rotate() syncs and, once the
** current file is large enough, starts a new one, and wal_drop_before()
** removes files whose records all lie before an LSN. A file may so keep
** covered records ahead of the needed ones: replay reads past them.
**
** Failures. An append that cannot be written (disk full, I/O error) is
** undone (the file is cut back to where it was) and reported as LP_IOERR;
** the log stays usable. A failed fdatasync is different: the kernel may
** have dropped the dirty pages, so the log is marked failed and every
** later append and commit fails with LP_IOERR until the server restarts
** and replays what really reached the disk.
**
** Thread safety: wal_append, wal_rotate and wal_drop_before calls must be
** serialised by the caller (the table appends under its write lock, so log
** order is apply order).
** wal_commit may be called from any number of threads at once, concurrently
** with appends.
*/
#ifndef LP_TABLE_WAL_H
#define LP_TABLE_WAL_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef enum WalSync { WAL_SYNC_COMMIT = 0, WAL_SYNC_1S, WAL_SYNC_NONE } WalSync;

/* Parses a binlog_flush value: "commit" (or Manticore's 1), "1s" (0 or 2),
** "none". -1 when unknown. */
int wal_sync_parse(const char *z);
const char *wal_sync_name(WalSync s);

typedef struct Wal Wal;

/* Called for each intact record with lsn >= the first LSN wanted. A
** non-LP_OK return stops the replay and wal_open fails with it. */
typedef int (*WalRecordFn)(void *ctx, uint64_t lsn, const uint8_t *p, size_t n, LpError *err);

/* Opens (creating when absent) the log in folder zDir, replays records
** with lsn >= firstLsn through xRecord (may be NULL), and returns the log
** ready for appends in *ppWal. */
int wal_open(const char *zDir, WalSync sync, uint64_t firstLsn, WalRecordFn xRecord, void *ctx,
             Wal **ppWal, LpError *err);

/* Syncs what was appended and frees the log (NULL allowed). */
void wal_close(Wal *w);

/* Appends one record of n bytes (n > 0, at most WAL_MAX_RECORD); *pLsn
** gets its LSN. */
#define WAL_MAX_RECORD (1u << 30)
int wal_append(Wal *w, const void *p, size_t n, uint64_t *pLsn, LpError *err);

/* Makes records up to lsn durable as the sync policy says. */
int wal_commit(Wal *w, uint64_t lsn, LpError *err);

/* 1 when wal_commit(w, lsn) would wait (binlog_flush = commit and lsn is
** not durable yet). */
int wal_commit_would_wait(Wal *w, uint64_t lsn);

/* The LSN the next append will get. */
uint64_t wal_next_lsn(Wal *w);

/* Syncs what was appended (under every policy), then, when the current
** file holds at least minBytes (header included; 0: any record), starts a
** new file, where the records appended from now on go. A caller about to
** record "every LSN before wal_next_lsn() is covered" calls this first:
** whether or not a file was started, no record before that LSN can then
** be lost in a crash while a later one survives (a gap that would make
** the log unreadable). Costs nothing more when the file is not replaced
** and the log was already durable (binlog_flush = commit). */
int wal_rotate(Wal *w, uint64_t minBytes, LpError *err);

/* Removes every file whose records all have lsn < lsn (never the current
** file). */
int wal_drop_before(Wal *w, uint64_t lsn, LpError *err);

/* Bytes in the log's files (SHOW TABLE STATUS). */
uint64_t wal_bytes(Wal *w);

/* For tests: the number of fdatasync calls made so far. */
uint64_t wal_sync_count(Wal *w);

#endif /* LP_TABLE_WAL_H */
