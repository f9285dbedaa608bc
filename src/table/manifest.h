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

/* A sealed segment: files seg-<id>.rows, seg-<id>.fts (when the table
** has full-text fields), seg-<id>.vec<column> (per graph column), and its
** tombstones seg-<id>.del-<deadGen> (deadGen 0: none). */
typedef struct ManifestSeg {
    uint64_t id;
    uint32_t nOrd;          /* ordinals */
    uint64_t deadGen;       /* tombstone file seg-<id>.del-<deadGen>, 0: none */
    uint64_t patchGen;      /* patch file seg-<id>.patch-<patchGen>, 0: none */
} ManifestSeg;

typedef struct Manifest {
    char *zTable;           /* table name */
    uint64_t schemaVersion; /* bumped by every schema change */
    Schema *pSchema;        /* owned */
    uint64_t walFirstLsn;   /* first WAL record not covered by segments (0: all) */
    char *zWalDir;          /* the log's folder inside the table's (NULL: "wal") */
    int64_t nextIdFloor;    /* automatic ids start at least here (0: none) */
    char *zRebuildCol;      /* REBUILD EMBEDDINGS in progress on this column, or NULL */
    int64_t rebuildAfterId; /* ... done for the rows with ids up to this one */
    ManifestSeg *aSeg;      /* live segments, in row order (owned) */
    int nSeg;
    uint64_t nextSegId;     /* ids of files written later are at least this */
} Manifest;

/* Copies the segment list of src into dst (replacing dst's). */
int manifest_set_segs(Manifest *dst, const ManifestSeg *aSeg, int nSeg, uint64_t nextSegId);

int manifest_write(const char *zDir, const Manifest *m, LpError *err);
/* Fills *m (owned by the caller: manifest_clear). */
int manifest_read(const char *zDir, Manifest *m, LpError *err);
void manifest_clear(Manifest *m);

/* fsync of a folder, so that names created or removed in it are durable. */
int lp_fsync_dir(const char *zDir, LpError *err);
/* Creates folder zDir unless it exists, and fsyncs the folder above it
** either way (it may have been created by a run that crashed before
** making it durable), so the name survives a power cut. */
int lp_mkdir_durable(const char *zDir, LpError *err);

#endif /* LP_TABLE_MANIFEST_H */
