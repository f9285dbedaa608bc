/*
** table_int.h — what table.c and flush.c share: the table's structures.
** Not for use outside src/table/.
**
** Parts. A table is a list of older parts plus its RAM segment (the
** fields of Table that predate parts: slots, idx, pFts, aVec). A flush
** freezes the RAM segment into a part (its rows, index and graphs move
** there unchanged and a new empty RAM segment starts), writes the part out
** as a sealed segment, and then swaps the frozen part for the sealed one,
** whose rows are read from the mmap'd files. Every part's rows are
** immutable: deleting or replacing one sets its bit in the part's dead set
** (under the write lock; readers hold the read lock, so no copy is needed).
**
** Ordinals. The snapshot numbers every row slot of the table globally:
** part i's ordinal d is aPart[i]->base + d, and the RAM segment's slot s
** is ramBase + s, ramBase being the sum of the parts' nOrd. These global
** ordinals are what table_snap_slot() takes and what the full-text source
** of a snapshot (one FtsMulti over the parts and the RAM index) uses.
*/
#ifndef LP_TABLE_TABLE_INT_H
#define LP_TABLE_TABLE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "fts/memindex.h"
#include "fts/multi.h"
#include "fts/segment.h"
#include "table/idfence.h"
#include "table/rowfile.h"
#include "table/table.h"
#include "util/bitset.h"
#include "util/hashmap.h"
#include "util/threadpool.h"
#include "util/vec.h"

struct MemRow {
    int64_t id;
    uint32_t nByte;         /* size of this block */
    uint32_t iStored;       /* 0: TEXT values in the tail; else (sealed rows
                            ** only) in stored block iStored-1 of the rows
                            ** file, a TEXT slot being offset<<32 | length
                            ** in the decompressed block */
    uint64_t aSlot[];       /* nCol slots, then the NULL bitmap, then the tail */
};

/* The HNSW graph of one vector column. Graph rows ("nodes") are numbered
** in insert order, as slots are, but not every slot has a vector and a
** batch adds its nodes before it takes the write lock, so nodeSlot maps
** node -> slot (UINT32_MAX: not a live row's, or not applied yet). */
typedef struct TableVec {
    int iCol;               /* schema column */
    VecHnsw *h;
    VEC(uint32_t) nodeSlot; /* read under the read lock, changed under the write lock */
} TableVec;

/* A vector column computed by a model from text columns. */
typedef struct TableEmbed {
    int iCol;               /* the vector column */
    int *aFrom;             /* its source columns, in order */
    int nFrom;
    EmbedModel *pModel;     /* NULL when the model could not be loaded */
    char *zWhy;             /* then why (the message of embed_model_get) */
} TableEmbed;

/* One graph column of a part: its graph and node -> part ordinal map. */
typedef struct PartVec {
    VecHnsw *h;             /* owned */
    uint32_t *aOwnNode;     /* frozen part: the map (owned); sealed: NULL */
    const uint32_t *aNode;  /* the map (aOwnNode, or inside the rows file) */
    uint32_t nNode;
} PartVec;

typedef struct Part {
    uint32_t nOrd;          /* ordinals */
    uint64_t base;          /* first global ordinal */
    size_t nLive;           /* rows not deleted */
    Bitset dead;            /* nOrd bits: deleted since the part was frozen */
    uint64_t deadVer;       /* bumped by each delete */
    uint64_t deadSavedVer;  /* deadVer when the tombstone file deadGen was written */
    int64_t minId, maxId;   /* of the rows it holds (0, 0 when none) */
    IdRun *aRun;            /* sealed: its ids as nRun runs (idfence.h), owned;
                            ** NULL: the one run [minId, maxId] */
    uint32_t nRun;
    int bSorted;            /* its rows come in ascending id order */
    PartVec *aVec;          /* nVec, in the table's aVec order */
    int nVec;
    /* frozen (pRows NULL): */
    MemRow **apRow;         /* nOrd rows (NULL: deleted before the freeze), owned */
    IdMap idx;              /* id -> ordinal of the rows in apRow */
    FtsMem *pFtsMem;        /* owned, or NULL */
    size_t nBytes;          /* row bytes */
    /* sealed: */
    uint64_t segId;         /* files seg-<segId>.* */
    uint64_t deadGen;       /* current tombstone file, 0: none */
    RowFile *pRows;         /* owned */
    FtsSegment *pFtsSeg;    /* owned, or NULL */
    /* Rows changed in place (an UPDATE of numeric attributes only writes
    ** their slots in the privately mapped rows; table.c), made durable by
    ** the next flush as a patch file, as tombstones are: */
    Bitset patched;         /* ordinals changed in place (nBit 0 until the first) */
    uint64_t patchVer;      /* bumped by each change in place */
    uint64_t patchSavedVer; /* patchVer when the patch file patchGen was written */
    uint64_t patchGen;      /* current patch file, 0: none */
    int bMerging;           /* a merge reads its rows unlocked: no change in place */
} Part;

/* A flush leaves the log's current file in place until it holds this much:
** a new file costs a create, an fdatasync and two folder fsyncs (with the
** removal of the old one), which would be most of a small table's FLUSH.
** The covered records it keeps are skipped by replay (read, not applied). */
#define TABLE_WAL_FILE_BYTES ((uint64_t)16 << 20)

struct Table {
    char *zName;            /* owned */
    Schema *pSchema;        /* owned, immutable */
    atomic_int nRef;        /* references: catalog + running statements */
    pthread_rwlock_t lock;  /* guards everything below */
    VEC(MemRow *) slots;    /* rows in insertion order; NULL = deleted */
    IdMap idx;              /* id -> slot number */
    size_t nLive;           /* non-NULL slots */
    int64_t nextId;         /* next automatic id: max id ever held + 1 */
    int64_t lastId;         /* id of the last appended row (for bSorted) */
    int bSorted;            /* non-NULL slots are in ascending id order */
    size_t nBytes;          /* bytes in row blocks */
    Analyzer *pAnalyzer;    /* the table's text analysis (owned), or NULL */
    FtsMem *pFts;           /* full-text index of the slots, or NULL (no indexed TEXT) */
    int nFts;               /* indexed TEXT fields */
    int *aFtsCol;           /* field i -> schema column */
    const char **azFtsField;/* field names, for the MATCH parser */
    Tpool *pPool;           /* helps analyse large writes, or NULL */
    TableVec *aVec;         /* one HNSW graph per knn_type='hnsw' vector column */
    int nVec;
    pthread_rwlock_t graphLock; /* writes hold it shared from their graph inserts
                                ** (before the table lock) to the end; TRUNCATE,
                                ** which swaps the graphs, exclusive */
    Wal *pWal;              /* the write-ahead log, or NULL (memory only) */
    uint64_t walFileBytes;  /* a flush starts a new log file only once the
                            ** current one holds this much (binlog_max_log_size;
                            ** TABLE_WAL_FILE_BYTES when not set) */
    TableEmbed *aEmb;       /* one per vector column with a model_name */
    int nEmb;
    int nEmbedInline;       /* writes of at most this many rows embed inline */
    int bRetired;           /* replaced by an ALTER TABLE: writes refused (under lock) */
    /* Parts (table_int.h), under lock: */
    Part **apPart;          /* oldest first */
    int nPart;
    uint64_t ramBase;       /* sum of the parts' nOrd */
    size_t nLiveParts;      /* live rows in parts */
    IdFence *pFence;        /* which parts may hold an id (idfence.h), or
                            ** NULL (out of memory: lookups ask every part) */
    /* Storage (flush.c): set by table_set_storage, else a memory-only table. */
    char *zDir;             /* the table's folder */
    pthread_mutex_t *pManifestMu; /* the catalog's: serialises manifest updates */
    uint64_t memLimit;      /* rt_mem_limit: flush in the background past it (0: never) */
    pthread_mutex_t flushMu;/* one flush (or truncate of segments) at a time */
    atomic_int bFlushQueued;/* a background flush was started and has not finished */
    atomic_int bNoFlush;    /* table_stop_flushes: no more flushes or merges */
    pthread_mutex_t mergeMu;/* one merge (or truncate) at a time; taken before flushMu */
    atomic_int bMergeQueued;/* a background merge thread runs */
    uint64_t nMerges;       /* merges done since open (under lock) */
    uint64_t nInPlace;      /* UPDATEs done in place in sealed rows (atomic) */
    uint64_t mergeOutId;    /* the segment a running merge writes (under flushMu), 0: none */
    uint64_t nextSegId;     /* next segment file number (under flushMu) */
    uint64_t nFlushes;      /* segments written (SHOW TABLE STATUS) */
};

struct TableSnap {
    Table *t;               /* holds a reference and the read lock */
    FtsMulti *pMulti;       /* the full-text source over parts + RAM, made on demand */
};


/* table.c */
uint32_t row_nbyte(const MemRow *r);
/* table_open_wal replaying from record firstLsn on. */
int table_open_wal_from(Table *t, const char *zDir, WalSync sync, uint64_t firstLsn, LpError *err);
/* Checks a row block of n bytes read back from the log (f NULL) or from
** rows file f (whose stored blocks a packed row may refer to). */
int table_row_valid(const Schema *s, const MemRow *r, size_t n, const RowFile *f);
/* Packing rows for a rows file (table.c): the bytes r's TEXT values take
** in a stored block (0: none, r is written as it is), and copying them
** there (read through rd when r is packed); row_convert then packs r. */
size_t row_text_bytes(const Schema *s, const MemRow *r);
int row_text_copy(RowReader *rd, const Schema *s, const MemRow *r, uint8_t *dst);
/* Where a packed row's TEXT values start: block iBlock, offset off. */
typedef struct RowTextAt {
    uint32_t iBlock, off;
} RowTextAt;
/* ALTER that keeps the segments (table.c, flush.c). table_alter_keeps: can
** old's rows go to schema sn (column j from old's aMap[j], -1: new)
** without touching their text or graphs: no TEXT column added, dropped or
** moved relative to the others, kept columns unchanged in type, flags and
** graph options, and the text analysed alike (the same table options, but
** for rt_mem_limit, rank_profile, expand_keywords and type).
** table_alter_segments: for each sealed part of old (retired, flushes
** stopped) a segment of t (its storage set, not shared yet), numbered from
** *pNextSeg on: rows file converted (stored text copied as it is),
** full-text file and kept graphs linked, tombstones written; all fsynced
** and attached to t; the list for t's manifest in *paSeg (free()). */
int table_alter_keeps(Table *old, const Schema *sn, const int *aMap);
/* Row r of schema so rebuilt in schema sn into dst (NULL: just the size);
** returns the size. Column j is so's aMap[j] (-1: NULL; aMap NULL: the
** same schema) with the same type. With pAt its TEXT values are packed
** (their slots point at pAt, in column order, none in the tail);
** without, a packed row stays packed (same block: the TEXT columns keep
** their order, table_alter_keeps) and an unpacked one keeps its text. */
uint32_t row_convert(const Schema *so, const Schema *sn, const int *aMap, const MemRow *r,
                     const RowTextAt *pAt, MemRow *dst);
int table_alter_segments(Table *old, Table *t, const int *aMap, uint64_t *pNextSeg, ManifestSeg **paSeg,
                         int *pnSeg, LpError *err);
/* The ids of the rows in t's RAM segment, ascending. */
int table_ram_ids(Table *t, int64_t **paId, size_t *pn, LpError *err);
/* Numeric slots and their NULL bits of head a (nCol slots, then the NULL
** words, as in a row) written into row r: applying a change in place. */
void row_patch_numeric(const Schema *s, MemRow *r, const uint64_t *a);
/* Declares schema s's fixed-width columns (its numeric attributes) to a
** rows file writer; row_put_columns then gives it row r's values, for
** ordinal ord. */
int row_declare_columns(RowFileWriter *w, const Schema *s, LpError *err);
void row_put_columns(RowFileWriter *w, const Schema *s, uint32_t ord, const MemRow *r);
/* After a change in place of ordinal ord's row in sealed part p: its
** column values (rowfile_column) made equal to the row's slots again. */
void part_sync_columns(Part *p, const Schema *s, uint32_t ord);
/* A reader over the segments ap[0..n) (held by the caller). */
void row_reader_init_parts(RowReader *rd, Part *const *ap, int n);
/* A copy of r with all its values (packed rows read through a reader
** over t's parts: under t's lock). NULL when out of memory. */
MemRow *table_row_copy(const Table *t, const MemRow *r);
/* Writes the rows and text files of segment segId for nOrd ordinals:
** apRow[i] the row of ordinal i or NULL; TEXT values go to stored blocks,
** read (when the rows are packed) from the parts apSrc[0..nSrc) they are
** in. flush.c. */
int table_write_rows(const Table *t, Part *const *apSrc, int nSrc, uint64_t segId, uint32_t nOrd,
                     const MemRow *const *apRow, const RowFileMap *aMap, int nMap, LpError *err);
/* A segment's full-text file written beside its rows file: started on the
** table's pool (the rows file is then written on this thread meanwhile;
** the two read frozen data only and write different files), or, with no
** pool, run by table_fts_write_finish. zPath, src (read by the task, kept
** valid until finish returns), aMap and nOrd as fts_seg_write_source's.
** flush.c. */
typedef struct TableFtsWrite {
    char zPath[4096];
    FtsSource *src;
    const uint32_t *aMap;
    uint32_t nOrd;
    int rc;
    LpError err;
    TpoolGroup g;
    int bQueued;            /* on the pool: g to be waited for */
    Tpool *pPool;           /* the table's pool: a large write is encoded in
                            ** parts on it too (set by table_fts_write_start) */
    unsigned flags;         /* fts_segw_open_flags': the infix filter stored for a
                            ** table with min_infix_len (set there too) */
} TableFtsWrite;
void table_fts_write_start(const Table *t, TableFtsWrite *w);
/* Waits for (or runs) the write. Returns rc, the caller's own result so
** far, when that is a failure (err already says it); else the write's
** result, its error copied into err. */
int table_fts_write_finish(TableFtsWrite *w, int rc, LpError *err);
VecHnsw *table_new_graph(const ColumnSchema *c, LpError *err);
/* Before a graph is saved into segment segId (flush, merge), and after
** the log is replayed into the RAM segment (segId UINT64_MAX): links back
** the rows of vector column iCol that lost every in-link
** (vec_hnsw_repair), logging how many. No insert may run on h. */
int table_graph_repair(const Table *t, VecHnsw *h, int iCol, uint64_t segId, LpError *err);
void table_part_free(Part *p);
/* Recomputes the parts' bases, ramBase, nLiveParts and bSorted (under the
** write lock, after the part list changed). */
void table_parts_changed(Table *t);

/* flush.c */
/* 1 when t has a folder and its RAM segment holds memLimit bytes or more
** (rows, full-text index, graphs). Under the table's lock: a write asks
** while it still holds it. */
int table_ram_over_limit(const Table *t);
/* Starts a background flush unless one is queued or flushes are stopped.
** Called without the table's locks. */
void table_start_flush(Table *t);
/* Opens sealed segment ms of t (its files verified) into *pp. */
int table_open_sealed(Table *t, const ManifestSeg *ms, Part **pp, LpError *err);
/* Removes every file of segment id (seg-<id>.*). */
void table_remove_segment_files(const char *zDir, uint64_t id);
/* table_flush without the merge check after it. */
int table_flush_only(Table *t, LpError *err);

/* merge.c */
/* Runs the merge the policy wants next, if any: -1 when one ran, LP_OK
** when none was due, else the error. */
int table_merge_step(Table *t, LpError *err);
/* Starts a background merge thread when the policy wants a merge. */
void table_maybe_merge(Table *t);

/* TRUNCATE with segments: the manifest lists none and the log is needed
** from record lsnFirst; the segment files go. Called with flushMu held. */
int table_forget_segments(Table *t, uint64_t lsnFirst, LpError *err);

#endif /* LP_TABLE_TABLE_INT_H */
