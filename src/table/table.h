/*
** table.h — a table: schema, rows, id index; reads through snapshots,
** writes through atomic batches.
**
** Contract. This is the interface the storage engine fills in. Rows live
** in memory; with a write-ahead log attached (table_open_wal) every write
** is logged and durable before it returns, and the log is replayed when
** the table is opened again. Sealed segments (issue 5) will sit behind the
** same calls, so callers do not change.
**
** Reading. table_snapshot() returns a read view. Rows and every Value read
** from it (strings, vectors) are owned by the table and stay valid and
** unchanged until table_snapshot_release(). A snapshot shows the table as
** of one committed batch: never half of a batch. In this in-memory version
** a snapshot holds the table's read lock, so hold it only as long as a
** statement runs (never across a network wait): writers wait for it. Never
** take a second snapshot of a table while holding one (query_select()
** takes its own): the lock prefers writers and is not recursive, so the
** second would wait behind a waiting writer, and that writer for the first.
**
** Writing. table_apply() applies a batch of operations atomically: either
** every operation takes effect or, on any error, none does (the table is
** unchanged). Operations see the effects of the earlier operations of the
** same batch (an UPDATE after an INSERT of the same id updates the new
** row). Values must already be coerced to their column types
** (value_coerce). Possible errors: LP_EXISTS (INSERT of an id that exists:
** "duplicate id 'N'"), LP_RANGE (auto ids exhausted), LP_NOMEM.
**
** Full-text. INSERT and REPLACE analyse the row's indexed TEXT columns
** before taking the write lock (LP_BADINPUT cannot happen there: values
** were validated by value_coerce) and index them within the same atomic
** batch: a reader sees a row and its terms together or neither.
**
** Ids. Every row has a unique id in 1..2^63-1. An INSERT or REPLACE with id
** 0 gets the next automatic id: one more than the largest id the table has
** ever held, so automatic ids are never reused.
**
** Lifetime. Tables are reference-counted (table_ref/table_unref); the
** catalog holds one reference, every running statement another, so a table
** dropped while a query runs is freed when that query ends.
**
** Thread safety: all functions may be called from any thread. Snapshots
** (readers) run concurrently; batches (writers) of one table are
** serialised and exclude readers while they apply.
*/
#ifndef LP_TABLE_TABLE_H
#define LP_TABLE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "embed/embed.h"
#include "fts/source.h"
#include <pthread.h>

#include "table/manifest.h"
#include "table/schema.h"
#include "table/value.h"
#include "text/analyzer.h"
#include "util/error.h"
#include "util/threadpool.h"
#include "table/wal.h"
#include "vec/hnsw.h"

typedef struct Table Table;         /* opaque */
typedef struct TableSnap TableSnap; /* opaque read view */
typedef struct MemRow MemRow;       /* opaque immutable row */

/* Creates an empty table named zName (copied) that takes ownership of
** pSchema (freed with the table, also on failure). The new table has one
** reference. NULL and err filled when out of memory or when the schema's
** text options are invalid (morphology, stopwords: LP_BADINPUT). */
Table *table_new(const char *zName, Schema *pSchema, LpError *err);

/* Where a table's embedding models come from: the data folder that
** 'org/name' model names resolve in, the runtime's options, and how many
** rows a write embeds on the caller's thread alone (embed_batch; more are
** shared out over the table's pool). */
typedef struct TableModelEnv {
    const char *zDataDir;
    const EmbedOptions *pOpts;
    int nInline;            /* <= 0: EMBED_DEFAULT_INLINE */
} TableModelEnv;

/* table_new, loading the models of the schema's model_name columns from
** env (NULL: none available). bStrict (CREATE TABLE): a model that cannot
** be loaded, whose dimension differs from knn_dims, or a from= naming a
** column that is not TEXT/STRING fails the call (the error is the
** model's, "model '<name>': ..."), and a model column without knn_dims
** takes the model's dimension (in pSchema, before the graphs are made).
** Otherwise (a stored table opened at start) the table opens, and only
** writes that must compute a vector with that model, and knn() with a
** text, fail, saying why the model is missing.
**
** Model columns. INSERT and REPLACE compute such a column's vector when
** the row leaves it NULL: the from= fields (each cut to 64 KiB), joined by
** spaces, go through the model (one document per run; a write of more
** than nInline rows is spread over the pool). A row that gives the vector
** keeps it (that is how the log replays rows without the model). UPDATE
** of the vector or of one of its sources is refused (LP_UNSUPPORTED). */
Table *table_new_ex(const char *zName, Schema *pSchema, const TableModelEnv *env, int bStrict,
                    LpError *err);

/* Embeds a text with the model of vector column iCol into
** aOut[knn_dims] (knn() with a text). LP_BADINPUT when the column has no
** model, LP_UNSUPPORTED when it could not be loaded, else embed_text's. */
int table_embed_text(const Table *t, int iCol, const char *z, size_t n, float *aOut, LpError *err);
/* 1 when vector column iCol is computed by a model. */
int table_column_model(const Table *t, int iCol);
void table_ref(Table *t);
void table_unref(Table *t);

/* Lets large writes to t analyse their rows' text on pool's threads as
** well as the caller's (see table_apply). The pool must outlive the table;
** NULL (the default) keeps all of a write on the caller's thread. Call
** before the table is shared. */
void table_set_pool(Table *t, Tpool *pool);

/* The pool given by table_set_pool, or NULL (queries use it to search a
** table's segments side by side). */
Tpool *table_pool(const Table *t);

const char *table_name(const Table *t);
const Schema *table_schema(const Table *t);

/* The table's text analyzer (from its morphology / stopwords /
** min_prefix_len options): shared by indexing and queries. */
const Analyzer *table_analyzer(const Table *t);

/* The analyzer configuration the full-text options of s ask for (the one
** place that maps an option to its field); its strings point into s. */
void table_analyzer_config(const Schema *s, AnalyzerConfig *cfg);

/* The indexed TEXT fields: their count, names (*pazName, for the MATCH
** parser) and schema columns (*paCol). Field i of the full-text index is
** the i-th indexed TEXT column. Either out-pointer may be NULL. */
int table_fts_fields(const Table *t, const char *const **pazName, const int **paCol);

/* Attaches a write-ahead log in folder zDir (created when absent): first
** replays the records already there into t (which must be empty), then
** logs every later write (table_apply, table_truncate), which returns only
** once its record is durable as sync says (see wal.h). Errors: those of
** wal_open (LP_CORRUPT naming the file and offset for damage in the middle
** of the log: the table must then not be used), LP_NOMEM, LP_IOERR. Call
** before the table is shared. */
int table_open_wal(Table *t, const char *zDir, WalSync sync, LpError *err);
/* Where a stored table keeps its files. */
typedef struct TableStorage {
    const char *zDir;               /* the table's folder */
    const char *zWalName;           /* its log's folder inside zDir */
    WalSync sync;
    pthread_mutex_t *pManifestMu;   /* held around manifest read-modify-writes */
    uint64_t memLimit;              /* rt_mem_limit: RAM segment bytes that start a flush */
    uint64_t walFileBytes;          /* binlog_max_log_size: a flush starts a new log
                                    ** file once the current one holds this much
                                    ** (0: TABLE_WAL_FILE_BYTES; 1: at every flush) */
} TableStorage;

/* Opens a stored table's sealed segments (those manifest m lists, every
** file verified: LP_CORRUPT naming the file when damaged), removes files
** m does not name (left by an unfinished flush), then replays the log from
** the first record the segments do not cover (table_open_wal). From then
** on the table flushes (table_flush) into the folder. t must be empty. */
int table_open_storage(Table *t, const TableStorage *st, const Manifest *m, LpError *err);
/* Removes the seg-* files in zDir that aSeg does not list (ALTER TABLE,
** after switching to a copy: the old version's; a merge: its inputs'), and
** tombstone files of listed segments that are not their current ones.
** Mapped files stay readable until unmapped. */
void table_remove_unlisted(const char *zDir, const ManifestSeg *aSeg, int nSeg);

/* Gives a table opened with table_open_wal (a new one, or an ALTER TABLE
** copy) its folder, so it can flush; segment files it writes are numbered
** from nextSegId on (the manifest's next_seg). */
void table_set_storage(Table *t, const TableStorage *st, uint64_t nextSegId);
/* The same for a table not shared yet (CREATE TABLE): takes no lock, so it
** may be called under any of the catalog's. */
void table_init_storage(Table *t, const TableStorage *st);

/* FLUSH TABLE: writes the RAM segment out as a sealed segment (see
** flush.c): the RAM segment is frozen (a few pointer moves under the
** write lock, so writes stall for milliseconds at most) and a new one takes
** writes while the frozen one is written, fsynced and published through
** the manifest; then the log files it covers are removed. Tombstones
** changed since the last flush are written too. Memory-only tables: LP_OK,
** nothing done. Errors: LP_IOERR (disk full...: the data stays in memory
** and in the log; a later flush retries), LP_NOMEM, LP_BUSY (altered). A
** write that leaves the RAM segment over memLimit starts one in the
** background. */
int table_flush(Table *t, LpError *err);
/* Waits for a running flush and lets no more start (ALTER, DROP,
** shutdown): table_flush then fails with LP_BUSY. table_resume_flushes
** undoes it. */
void table_stop_flushes(Table *t);
void table_resume_flushes(Table *t);
/* Bytes in the table's segment files; *pnSeg sealed segments, *pnFlush
** flushes and *pnMerge merges done since open. */
uint64_t table_disk_bytes(Table *t, int *pnSeg, uint64_t *pnFlush, uint64_t *pnMerge);
/* UPDATEs since open that changed numeric attributes of a sealed row in
** place (its slots in the mapped rows, made durable by the next flush as
** a patch file) instead of moving the row to the RAM segment. */
uint64_t table_updates_in_place(Table *t);
/* How id lookups find a sealed row (idfence.h): the cells of the id line
** and the most segments one cell lists, which is the most segments a
** lookup asks (0 and 0 without sealed rows). Takes the read lock: not
** while holding a snapshot. */
void table_id_fence_stats(Table *t, uint32_t *pnCell, uint32_t *pnMaxParts);

/* OPTIMIZE TABLE: flushes, then merges the sealed segments until at most
** nCutoff (< 1: 1) are left, dropping deleted rows (a single segment with
** deletes is rewritten). Merging keeps the rows' order; its graph starts
** from the largest input's and inserts the other inputs' vectors. Runs in
** the caller's thread; writes and searches go on meanwhile. After each
** flush a tiered policy (merge.c) merges in the background so the number
** of segments stays logarithmic in the table's size. Errors: table_flush's,
** LP_IOERR/LP_NOMEM (the table unchanged), LP_BUSY (altered or dropped). */
int table_optimize(Table *t, int nCutoff, LpError *err);
/* table_optimize in a background thread (errors go to the log). */
int table_optimize_async(Table *t, int nCutoff, LpError *err);
/* rt_mem_limit in bytes (0: never flushed on its own). */
uint64_t table_mem_limit(const Table *t);

/* fdatasync calls made on the table's log since it was opened. */
uint64_t table_wal_syncs(const Table *t);

/* Bytes in the table's log files (0 without a log). */
uint64_t table_wal_bytes(const Table *t);

/* ------------------------------------------------------------------ */
/* Reading                                                             */

TableSnap *table_snapshot(Table *t);
void table_snapshot_release(TableSnap *s);

/* Live rows in the snapshot. */
size_t table_snap_count(const TableSnap *s);
/* Row slots to iterate: table_snap_slot(s, i) for i in [0, nSlot) returns
** a row or NULL (a deleted slot). When table_snap_sorted() is true the
** non-NULL rows come in ascending id order. A slot number is also the
** row's ordinal in the full-text index (table_snap_fts). */
size_t table_snap_nslot(const TableSnap *s);
const MemRow *table_snap_slot(const TableSnap *s, size_t i);
int table_snap_sorted(const TableSnap *s);
/* The row with this id, or NULL. */
const MemRow *table_snap_get(const TableSnap *s, int64_t id);
/* For scans that test numeric attributes: the slots [*pLo, *pHi) around
** slot i (< table_snap_nslot) that one segment holds, and that segment's
** array of numeric column iCol, value j being slot lo+j's as its row
** keeps it (an int64, or a FLOAT's double bits; 0 where NULL or where
** the slot has no row), with its NULL bitmap (bit j) in *paNull. The
** array is NULL (the range still set) where the segment keeps no such
** array: the RAM segment, a segment being written, files of an older
** format. Slots whose row is deleted keep their values: a scan still
** asks table_snap_slot for the row of a slot it keeps. */
const uint64_t *table_snap_column(const TableSnap *s, size_t i, int iCol, size_t *pLo, size_t *pHi,
                                  const uint64_t **paNull);
/* The id index of the sealed segment whose range starts at slot lo:
** *pn entries of 16 bytes (int64 id, uint32 slot - lo, uint32 0, little-
** endian), ascending by id, deleted rows included; NULL when no sealed
** segment starts there. */
const uint8_t *table_snap_id_index(const TableSnap *s, size_t lo, size_t *pn);
/* Clears bit j of aBits, for j in [0, n), where slot lo+j holds no live
** row. [lo, lo+n) must lie in one sealed segment's range
** (table_snap_column) and start a multiple of 64 slots into it. */
void table_snap_keep_live(const TableSnap *s, size_t lo, size_t n, uint64_t *aBits);
/* Bytes the rows use (SHOW TABLE STATUS). */
size_t table_snap_bytes(const TableSnap *s);

/* The full-text index over the slots (global ordinals: one source over
** every segment), or NULL when the table has no indexed TEXT field (or,
** with several segments, memory ran out). Valid while the snapshot is
** held. */
FtsSource *table_snap_fts(TableSnap *s);

/* One segment's HNSW graph of a vector column, for kNN: aNodeSlot maps a
** node to the segment's ordinal (UINT32_MAX: not a live row's), global
** ordinal = base + that. The graph may hold more nodes than the map (rows
** being inserted): those are not rows of this snapshot. nLive: the
** segment's live rows. */
typedef struct TableKnnPart {
    VecHnsw *h;
    const uint32_t *aNodeSlot;
    uint32_t nNode;
    uint64_t base;
    size_t nLive;
} TableKnnPart;

/* The graphs of vector column iCol, one per segment holding live rows,
** into a[0..nMax); returns how many (0: the column has no graph).
** table_snap_nparts() bounds the count. */
int table_snap_knn_parts(const TableSnap *s, int iCol, TableKnnPart *a, int nMax);
int table_snap_nparts(const TableSnap *s);
/* Bytes and distinct terms of the full-text index. */
size_t table_snap_fts_bytes(const TableSnap *s, size_t *pnTerms);

int64_t row_id(const MemRow *r);
/* Column iCol of row r (SCHEMA_ID_COL for the id) as stored: VAL_NULL,
** VAL_INT, VAL_FLOAT, VAL_STR or VAL_VEC. Borrowed from the snapshot.
** Not for TEXT columns: a sealed segment keeps those compressed, and
** row_get gives VAL_NULL for them there (use row_read). */
Value row_get(const Schema *s, const MemRow *r, int iCol);

/* Reading TEXT values. A sealed segment keeps its rows' TEXT values in
** zstd-compressed stored blocks of about 16 KiB (rows file), so a row in
** the mmap'd file is small and attribute scans do not page text in. A
** RowReader reads any column of the rows of one snapshot, decompressing
** the block a row's text is in when it needs it (through a cache of
** decompressed blocks shared by all readers, rowfile.h) and keeping that
** block until it needs another one. So a string it returns stays valid until
** the next row_read on the same reader for a row of another block (all of
** one row's values share a block), at most until the snapshot is
** released. One thread at a time; readers cost nothing until used. A
** block that cannot be read (only possible after the file changed under
** the server: every section is checksummed at open) gives VAL_NULL and an
** error in the log. */
typedef struct RowReader {
    void *const *apPart;    /* private: the segments rows may come from */
    int nPart;
    const void *pPart;      /* the segment of the block pinned, or NULL */
    uint32_t iBlock;
    const uint8_t *pBlk;    /* that block, decompressed (shared cache) */
    size_t nBlk;
    void *pDctx;            /* zstd's decompression context, made when first needed */
} RowReader;
void row_reader_init(RowReader *rd, const TableSnap *s);
void row_reader_free(RowReader *rd);
Value row_read(RowReader *rd, const Schema *s, const MemRow *r, int iCol);
/* A copy of r holding all its values itself (free() it), for values
** that must outlive the reader's block; NULL when out of memory or a
** block cannot be read. */
MemRow *row_read_copy(RowReader *rd, const Schema *s, const MemRow *r);

/* ------------------------------------------------------------------ */
/* Writing                                                             */

typedef enum TableOpKind {
    TOP_INSERT,     /* new row; LP_EXISTS if the id exists */
    TOP_REPLACE,    /* new row, or replace the whole row with this id */
    TOP_DELETE,     /* remove the row with this id, if any */
    TOP_UPDATE,     /* change the columns flagged in aSet, if the row exists */
    TOP_SETVEC,     /* set the one vector column flagged in aSet, if the row exists,
                    ** has no vector there yet and its other columns equal aVal's
                    ** (REBUILD EMBEDDINGS: the row did not change meanwhile) */
} TableOpKind;

typedef struct TableOp {
    TableOpKind kind;
    int64_t id;             /* target id; 0 on INSERT/REPLACE = automatic */
    const Value *aVal;      /* INSERT/REPLACE/UPDATE: one per schema column */
    const uint8_t *aSet;    /* UPDATE: nonzero for the columns to change */
    /* UPDATE only, optional (NULL: unconditional): a compare-and-set for a
    ** read-modify-write (UPDATE of JSON properties). The row is changed only
    ** if its columns flagged in aSet still hold aWas's values (one per
    ** schema column, as they were read) and no earlier op of the batch
    ** changed it; else the op is passed over (not counted as affected)
    ** and *pbStale set to 1, for the caller to read the row again and
    ** retry. */
    const Value *aWas;
    uint8_t *pbStale;
} TableOp;

typedef struct TableApplyOut {
    uint64_t nAffected;     /* rows inserted, replaced, updated or deleted */
    int64_t iFirstAutoId;   /* first automatic id assigned, or 0 */
    uint64_t lsnWait;       /* TABLE_APPLY_DEFER_COMMIT: the log record still to make
                            ** durable with table_commit, or 0 (nothing to wait for) */
} TableApplyOut;

int table_apply(Table *t, const TableOp *aOp, size_t nOp, TableApplyOut *pOut, LpError *err);

/* table_apply with flags: TABLE_APPLY_NO_EMBED leaves model columns the
** rows do not give NULL instead of computing them (ALTER TABLE's copy). A
** write to a table retired by table_retire fails with LP_BUSY. */
#define TABLE_APPLY_NO_EMBED 1
/* TABLE_APPLY_DEFER_COMMIT: return once the batch is applied and logged,
** without waiting for the log record to be durable; when binlog_flush
** needs that wait, pOut->lsnWait names the record and the caller must call
** table_commit() before it acknowledges the write (the MySQL server parks
** the connection meanwhile, so a worker thread is not held by an fsync and
** more writers share each one). pOut must not be NULL. */
#define TABLE_APPLY_DEFER_COMMIT 2
int table_apply_ex(Table *t, const TableOp *aOp, size_t nOp, int flags, TableApplyOut *pOut,
                   LpError *err);

/* Waits until log record lsn of t is durable (group commit: one fdatasync
** for every writer waiting). LP_OK, or LP_IOERR when the sync failed. */
int table_commit(Table *t, uint64_t lsn, LpError *err);

/* Marks t replaced (bOn = 1: every later write fails with LP_BUSY "table
** was altered") or serves it again (0). Waits for writes in progress. */
void table_retire(Table *t, int bOn);

/* The next automatic id; table_raise_next_id makes it at least id (after
** an ALTER TABLE copy or a replay, so ids are never reused). */
int64_t table_next_id(Table *t);
void table_raise_next_id(Table *t, int64_t id);

/* The ids of the live rows, ascending, in a malloc'd *paId. */
int table_ids(Table *t, int64_t **paId, size_t *pn, LpError *err);

/* REBUILD EMBEDDINGS, one step: for the rows of aId whose vector column
** iCol is NULL, computes the vector with the column's model (spread over
** the pool) and stores it unless the row changed meanwhile (TOP_SETVEC).
** *pnDone: vectors stored. */
int table_fill_embeddings(Table *t, int iCol, const int64_t *aId, size_t nId, size_t *pnDone,
                          LpError *err);

/* Removes every row; automatic ids start again at 1. LP_OK or LP_NOMEM
** (the table unchanged). */
int table_truncate(Table *t, LpError *err);

#endif /* LP_TABLE_TABLE_H */
