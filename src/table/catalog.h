/*
** catalog.h — the set of tables of one server.
**
** Contract. A Catalog maps table names to Tables. catalog_get() returns a
** new reference the caller releases with table_unref(), so a table dropped
** meanwhile stays valid for the statement using it. Table names are
** lower-case words of letters, digits and '_' (not starting with a digit),
** at most 64 bytes: they become folder names once tables are stored on disk.
**
** Storage. With a data folder, every table lives in
** `<data dir>/tables/<name>/` (manifest and write-ahead log; see
** catalog.c) and catalog_new opens them all, replaying their logs. A table
** that cannot be opened (a damaged manifest or log) is not served:
** catalog_get returns NULL for it, catalog_open_error says why, SHOW TABLES
** still lists it, CREATE TABLE of its name fails and DROP TABLE removes it
** (the way out once the damage is understood). Without a data folder
** (NULL) tables live in memory only.
**
** Thread safety: every function may be called from any thread; the map is
** guarded by a rwlock (lookups in parallel, CREATE/DROP exclusive).
*/
#ifndef LP_TABLE_CATALOG_H
#define LP_TABLE_CATALOG_H

#include "table/table.h"
#include "util/error.h"

typedef struct Catalog Catalog; /* opaque */

typedef struct CatalogConfig {
    const char *zDataDir;   /* NULL: memory only */
    WalSync sync;           /* binlog_flush for every table's log */
    Tpool *pool;            /* helps large writes and replays; may be NULL; outlives the catalog */
    EmbedOptions embed;     /* ONNX Runtime options for the tables' models */
    int nEmbedInline;       /* embed_batch: rows a write embeds inline (<= 0: default) */
    uint64_t memLimit;      /* rt_mem_limit default (a table's rt_mem_limit option wins);
                            ** 0: CATALOG_DEFAULT_MEM_LIMIT */
    uint64_t walFileBytes;  /* binlog_max_log_size (TableStorage.walFileBytes; 0: default) */
} CatalogConfig;

#define CATALOG_DEFAULT_MEM_LIMIT (128ull << 20)

/* Opens the catalog of cfg->zDataDir (copied; cfg need not outlive the
** call, but embed.zOrtLib must). Fails with LP_IOERR when the folder
** cannot be read, LP_NOMEM; a table that cannot be opened does not fail
** the catalog (see above). Models are resolved in <data dir>/models/. */
Catalog *catalog_new(const CatalogConfig *cfg, LpError *err);
/* Drops the catalog's references; tables still referenced elsewhere live on
** until their last user lets go. */
void catalog_free(Catalog *c);

/* LP_OK when zName is not a table that failed to open; else LP_CORRUPT
** with the reason in err. */
int catalog_open_error(Catalog *c, const char *zName, LpError *err);

/* LP_OK if zName is an acceptable table name, else LP_BADINPUT. */
int catalog_check_name(const char *zName, LpError *err);

/* Creates table zName with pSchema (ownership taken, freed on failure).
** When the table exists: LP_EXISTS, unless bIfNotExists, in which case
** LP_OK with *pbExisted = 1 (pbExisted may be NULL). */
int catalog_create(Catalog *c, const char *zName, Schema *pSchema, int bIfNotExists,
                   int *pbExisted, LpError *err);

/* Drops zName: LP_NOTFOUND when absent unless bIfExists. */
int catalog_drop(Catalog *c, const char *zName, int bIfExists, LpError *err);

/* ALTER TABLE: replaces table zName by a copy with schema pNew (ownership
** taken), new column j holding old column aMap[j]'s values (-1: NULL; new
** model columns stay NULL until REBUILD EMBEDDINGS). The copy is written
** to a new log, the manifest switched to it in one atomic rename, and the
** catalog entry swapped; readers of the old version finish on it, writes
** to it fail with LP_BUSY ("run it again") from the start of the copy.
** Errors: LP_NOTFOUND, LP_BUSY (a rebuild is running), the new schema's
** (models load as at CREATE), LP_IOERR, LP_NOMEM; the table is then
** unchanged. */
int catalog_alter(Catalog *c, const char *zName, Schema *pNew, const int *aMap, LpError *err);

/* REBUILD EMBEDDINGS: starts a background job that computes, with its
** model, vector column zCol of every row that lacks it (rows stored before
** the column was added, or while the model could not load), oldest id
** first, one chunk at a time (never overwriting a row changed meanwhile).
** Its progress is recorded in the manifest, so a restart resumes it.
** Errors: LP_NOTFOUND, LP_BADINPUT (not a model column), LP_BUSY (one is
** running on the table). */
int catalog_rebuild_embeddings(Catalog *c, const char *zName, const char *zCol, LpError *err);

/* The last REBUILD EMBEDDINGS of table zName as a line of text
** ("running: column v, 120 of 5000 rows", "done: ...", "failed: ..."):
** 1 with zOut filled, 0 when there is none. */
int catalog_rebuild_status(Catalog *c, const char *zName, char *zOut, size_t nOut);

/* A new reference to table zName, or NULL when there is none. */
Table *catalog_get(Catalog *c, const char *zName);

/* Table names in ascending order: *pazName is a malloc'd array of *pn
** malloc'd strings, freed with catalog_names_free. LP_OK or LP_NOMEM. */
int catalog_names(Catalog *c, char ***pazName, int *pn);
void catalog_names_free(char **azName, int n);

#endif /* LP_TABLE_CATALOG_H */
