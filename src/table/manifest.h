/*
** manifest.h — a table's manifest: the one file that says what the table
** is made of.
**
** Contract. manifest_write() replaces `<zDir>/manifest` atomically: the
** new content goes to `manifest.tmp`, is fsynced, renamed over the old
** file, and the folder is fsynced; a crash at any point leaves either the
** old manifest or the new one, never a mix. manifest_read() checks the
** file's checksum and format version and parses it. The format is
** described at the top of manifest.c.
**
** Errors: LP_NOTFOUND (no manifest in the folder), LP_CORRUPT (checksum
** mismatch, bad JSON, unknown format version, a schema that does not
** parse: the message names the file and what is wrong), LP_IOERR (a system
** call failed: the message names the file), LP_NOMEM.
**
** Thread safety: none inside; the catalog serialises writes to one table's
** manifest.
*/
#ifndef LP_TABLE_MANIFEST_H
#define LP_TABLE_MANIFEST_H

#include <stdint.h>

#include "table/schema.h"
#include "util/error.h"

#define MANIFEST_FORMAT 1

typedef struct Manifest {
    char *zTable;           /* table name */
    uint64_t schemaVersion; /* bumped by every schema change */
    Schema *pSchema;        /* owned */
    uint64_t walFirstLsn;   /* first WAL record not covered by segments (0: all) */
    char *zWalDir;          /* the log's folder inside the table's (NULL: "wal") */
    int64_t nextIdFloor;    /* automatic ids start at least here (0: none) */
    char *zRebuildCol;      /* REBUILD EMBEDDINGS in progress on this column, or NULL */
    int64_t rebuildAfterId; /* ... done for the rows with ids up to this one */
} Manifest;

int manifest_write(const char *zDir, const Manifest *m, LpError *err);
/* Fills *m (owned by the caller: manifest_clear). */
int manifest_read(const char *zDir, Manifest *m, LpError *err);
void manifest_clear(Manifest *m);

/* fsync of a folder, so that names created or removed in it are durable. */
int lp_fsync_dir(const char *zDir, LpError *err);

#endif /* LP_TABLE_MANIFEST_H */
