/*
** catalog.c — see catalog.h.
**
** On disk: `<data dir>/tables/<name>/` per table, holding `manifest`
** (manifest.c) and `wal/` (wal.c). CREATE TABLE writes the manifest into
** `tables/.creating-<name>` and renames that folder into place (then
** fsyncs tables/), so a crash never leaves a table without its manifest.
** DROP TABLE renames the folder to `tables/.dropped-<name>-<n>`, fsyncs,
** and removes it; leftovers of either kind are removed at start.
*/
#include "table/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "table/manifest.h"
#include "table/table_int.h"
#include "util/clock.h"
#include "util/hashmap.h"
#include "util/log.h"

struct Catalog {
    char *zDataDir;             /* owned; NULL: memory only */
    char *zTables;              /* <data dir>/tables, or NULL */
    WalSync sync;               /* given to every table's log */
    pthread_rwlock_t lock;      /* guards map and broken */
    HashMap map;                /* name -> Table* (key = the table's own name) */
    HashMap broken;             /* name -> malloc'd "why it cannot open" */
    Tpool *pPool;               /* given to new tables, or NULL */
    EmbedOptions embed;         /* for the tables' models */
    int nEmbedInline;
    uint64_t memLimit;          /* rt_mem_limit default */
    uint64_t walFileBytes;      /* binlog_max_log_size (0: the table's default) */
    pthread_mutex_t muManifest; /* serialises read-modify-writes of manifests, and jobs */
    struct RebuildJob *pJobs;   /* REBUILD EMBEDDINGS jobs, running or finished */
    atomic_uint nDrop;          /* for unique .dropped-* names */
};

static int rm_entry(const char *zPath, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(zPath) : unlink(zPath)) != 0 && errno != ENOENT ? -1 : 0;
}

/* rm -rf zPath. */
static int remove_tree(const char *zPath) {
    return nftw(zPath, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *table_dir(const Catalog *c, const char *zName) {
    char *z = NULL;
    return asprintf(&z, "%s/%s", c->zTables, zName) < 0 ? NULL : z;
}

/* Removes the log folders of zDir other than zKeep (left by an ALTER
** TABLE that did not finish, or finished before the old log went). */
static void remove_stale_wals(const char *zDir, const char *zKeep) {
    DIR *d = opendir(zDir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "wal", 3) != 0 || strcmp(e->d_name, zKeep) == 0) continue;
        char zPath[4096];
        snprintf(zPath, sizeof(zPath), "%s/%s", zDir, e->d_name);
        LOG_INFO("removing %s (an older version of the table's log)", zPath);
        remove_tree(zPath);
    }
    closedir(d);
}

static int start_rebuild(Catalog *c, Table *t, const char *zCol, int64_t afterId, LpError *err);
static int catalog_drop_locked(Catalog *c, const char *zName, int bIfExists, LpError *err);

/* The storage settings of table t in folder zDir, log folder zWalName. */
static TableStorage storage_of(Catalog *c, const Table *t, const char *zDir, const char *zWalName) {
    uint64_t lim = c->memLimit;
    const char *z = schema_option(table_schema(t), "rt_mem_limit");
    if (z) lim = schema_parse_size(z);
    return (TableStorage){zDir, zWalName, c->sync, &c->muManifest, lim, c->walFileBytes};
}

/* Opens the stored table in folder zDir: manifest, then its log replayed. */
static Table *open_stored(Catalog *c, const char *zName, const char *zDir, LpError *err) {
    Manifest m;
    if (manifest_read(zDir, &m, err) != LP_OK) return NULL;
    if (strcmp(m.zTable, zName) != 0) {
        lp_err_set(err, LP_CORRUPT, "%s/manifest names table '%s', not '%s'", zDir, m.zTable, zName);
        manifest_clear(&m);
        return NULL;
    }
    TableModelEnv env = {c->zDataDir, &c->embed, c->nEmbedInline};
    Table *t = table_new_ex(zName, m.pSchema, &env, 0, err);
    m.pSchema = NULL; /* the table's now, also on failure */
    if (!t) {
        manifest_clear(&m);
        return NULL;
    }
    table_set_pool(t, c->pPool);
    const char *zWalName = m.zWalDir ? m.zWalDir : "wal";
    remove_stale_wals(zDir, zWalName);
    TableStorage st = storage_of(c, t, zDir, zWalName);
    if (table_open_storage(t, &st, &m, err) != LP_OK) {
        manifest_clear(&m);
        table_unref(t);
        return NULL;
    }
    if (m.nextIdFloor) table_raise_next_id(t, m.nextIdFloor);
    if (m.zRebuildCol) {
        LpError e2;
        lp_err_clear(&e2);
        LOG_INFO("table '%s': resuming REBUILD EMBEDDINGS %s after id %lld", zName, m.zRebuildCol,
                 (long long)m.rebuildAfterId);
        if (start_rebuild(c, t, m.zRebuildCol, m.rebuildAfterId, &e2) != LP_OK) {
            LOG_ERROR("table '%s': cannot resume REBUILD EMBEDDINGS %s: %s", zName, m.zRebuildCol,
                      e2.zMsg);
        }
    }
    manifest_clear(&m);
    return t;
}

/* Opens every table under zTables; those that cannot open are remembered
** with the reason. */
static int load_tables(Catalog *c, LpError *err) {
    DIR *d = opendir(c->zTables);
    if (!d) return lp_err_set(err, LP_IOERR, "cannot read folder %s: %s", c->zTables, strerror(errno));
    struct dirent *e;
    int rc = LP_OK;
    while (rc == LP_OK && (e = readdir(d)) != NULL) {
        const char *zName = e->d_name;
        if (!strcmp(zName, ".") || !strcmp(zName, "..")) continue;
        char *zDir = table_dir(c, zName);
        if (!zDir) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory opening tables");
            break;
        }
        if (!strncmp(zName, ".creating-", 10) || !strncmp(zName, ".dropped-", 9)) {
            LOG_INFO("removing %s (left by an interrupted CREATE or DROP TABLE)", zDir);
            if (remove_tree(zDir) != 0) LOG_WARN("cannot remove %s: %s", zDir, strerror(errno));
        } else if (catalog_check_name(zName, NULL) == LP_OK) {
            LpError e2;
            lp_err_clear(&e2);
            int64_t t0 = lp_now_ns();
            Table *t = open_stored(c, zName, zDir, &e2);
            if (t) {
                TableSnap *snap = table_snapshot(t);
                LOG_INFO("table '%s' opened: %zu rows, %.1f ms", zName,
                         snap ? table_snap_count(snap) : 0, (double)(lp_now_ns() - t0) / 1e6);
                table_snapshot_release(snap);
                pthread_rwlock_wrlock(&c->lock); /* a resumed rebuild may look */
                int bOom = hmap_put(&c->map, table_name(t), strlen(zName), t, NULL) != 0;
                pthread_rwlock_unlock(&c->lock);
                if (bOom) {
                    table_unref(t);
                    rc = lp_err_set(err, LP_NOMEM, "out of memory opening tables");
                }
            } else {
                LOG_ERROR("table '%s' cannot be opened: %s", zName, e2.zMsg);
                char *zKey = strdup(zName), *zWhy = strdup(e2.zMsg);
                if (!zKey || !zWhy || hmap_put(&c->broken, zKey, strlen(zKey), zWhy, NULL)) {
                    free(zKey);
                    free(zWhy);
                    rc = lp_err_set(err, LP_NOMEM, "out of memory opening tables");
                }
            }
        }
        free(zDir);
    }
    closedir(d);
    return rc;
}

Catalog *catalog_new(const CatalogConfig *cfg, LpError *err) {
    Catalog *c = calloc(1, sizeof(*c));
    if (!c) {
        lp_err_set(err, LP_NOMEM, "out of memory creating the catalog");
        return NULL;
    }
    const char *zDataDir = cfg->zDataDir;
    pthread_rwlock_init(&c->lock, NULL);
    pthread_mutex_init(&c->muManifest, NULL);
    hmap_init(&c->map);
    hmap_init(&c->broken);
    c->sync = cfg->sync;
    c->pPool = cfg->pool;
    c->embed = cfg->embed;
    c->nEmbedInline = cfg->nEmbedInline;
    c->memLimit = cfg->memLimit ? cfg->memLimit : CATALOG_DEFAULT_MEM_LIMIT;
    c->walFileBytes = cfg->walFileBytes;
    if (zDataDir) {
        if (!(c->zDataDir = strdup(zDataDir)) || asprintf(&c->zTables, "%s/tables", zDataDir) < 0) {
            c->zTables = NULL;
            catalog_free(c);
            lp_err_set(err, LP_NOMEM, "out of memory creating the catalog");
            return NULL;
        }
        if (lp_mkdir_durable(c->zTables, err) != LP_OK) {
            catalog_free(c);
            return NULL;
        }
        if (load_tables(c, err) != LP_OK) {
            catalog_free(c);
            return NULL;
        }
    }
    return c;
}

static void stop_jobs(Catalog *c, const Table *t);

void catalog_free(Catalog *c) {
    if (!c) return;
    stop_jobs(c, NULL);
    HMapIter it = {0};
    void *pKey, *pVal;
    while (hmap_next(&c->map, &it, NULL, NULL, &pVal)) {
        table_stop_flushes(pVal);
        table_unref(pVal);
    }
    hmap_free(&c->map);
    memset(&it, 0, sizeof(it));
    while (hmap_next(&c->broken, &it, (const void **)&pKey, NULL, &pVal)) {
        free(pKey);
        free(pVal);
    }
    hmap_free(&c->broken);
    pthread_rwlock_destroy(&c->lock);
    pthread_mutex_destroy(&c->muManifest);
    free(c->zDataDir);
    free(c->zTables);
    free(c);
}

int catalog_open_error(Catalog *c, const char *zName, LpError *err) {
    pthread_rwlock_rdlock(&c->lock);
    const char *zWhy = hmap_get(&c->broken, zName, strlen(zName));
    int rc = zWhy ? lp_err_set(err, LP_CORRUPT, "table '%s' cannot be opened: %s", zName, zWhy)
                  : LP_OK;
    pthread_rwlock_unlock(&c->lock);
    return rc;
}

int catalog_check_name(const char *zName, LpError *err) {
    size_t n = strlen(zName);
    int ok = n > 0 && n <= 64 && !(zName[0] >= '0' && zName[0] <= '9');
    for (size_t i = 0; ok && i < n; i++) {
        char ch = zName[i];
        ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
    }
    if (!ok) {
        return lp_err_set(err, LP_BADINPUT,
                          "invalid table name '%.80s': use 1 to 64 letters, digits and '_', "
                          "not starting with a digit",
                          zName);
    }
    return LP_OK;
}

/* Writes table t's folder (manifest, empty log) and attaches the log. */
static int create_stored(Catalog *c, Table *t, const Schema *pSchema, LpError *err) {
    const char *zName = table_name(t);
    char *zTmp = NULL, *zDir = table_dir(c, zName);
    if (!zDir || asprintf(&zTmp, "%s/.creating-%s", c->zTables, zName) < 0) {
        free(zDir);
        return lp_err_set(err, LP_NOMEM, "out of memory creating table '%s'", zName);
    }
    int rc = LP_OK;
    remove_tree(zTmp);
    struct stat st;
    if (stat(zDir, &st) == 0) {
        rc = lp_err_set(err, LP_EXISTS, "cannot create table '%s': folder %s already exists", zName, zDir);
    } else if (mkdir(zTmp, 0755) != 0) {
        rc = lp_err_set(err, LP_IOERR, "cannot create folder %s: %s", zTmp, strerror(errno));
    } else {
        Manifest m = {(char *)zName, 1, (Schema *)pSchema, 0, NULL, 0, NULL, 0, NULL, 0, 0};
        rc = manifest_write(zTmp, &m, err);
        if (rc == LP_OK && rename(zTmp, zDir) != 0) {
            rc = lp_err_set(err, LP_IOERR, "cannot rename %s to %s: %s", zTmp, zDir, strerror(errno));
        }
        if (rc == LP_OK) rc = lp_fsync_dir(c->zTables, err);
        if (rc != LP_OK) remove_tree(zTmp);
    }
    if (rc == LP_OK) {
        char zWal[4096];
        snprintf(zWal, sizeof(zWal), "%s/wal", zDir);
        rc = table_open_wal(t, zWal, c->sync, err);
        if (rc != LP_OK) remove_tree(zDir);
        TableStorage ts = storage_of(c, t, zDir, "wal");
        if (rc == LP_OK) table_init_storage(t, &ts);
    }
    free(zTmp);
    free(zDir);
    return rc;
}

/* Moves table zName's folder out of the way and removes it. */
static int drop_stored(Catalog *c, const char *zName, LpError *err) {
    char *zDir = table_dir(c, zName), *zGone = NULL;
    if (!zDir || asprintf(&zGone, "%s/.dropped-%s-%u", c->zTables, zName,
                          atomic_fetch_add(&c->nDrop, 1)) < 0) {
        free(zDir);
        return lp_err_set(err, LP_NOMEM, "out of memory dropping table '%s'", zName);
    }
    int rc = LP_OK;
    if (rename(zDir, zGone) != 0 && errno != ENOENT) {
        rc = lp_err_set(err, LP_IOERR, "cannot remove %s: %s", zDir, strerror(errno));
    } else {
        lp_fsync_dir(c->zTables, NULL);
        if (remove_tree(zGone) != 0 && errno != ENOENT) {
            LOG_WARN("cannot remove %s: %s (it is removed at the next start)", zGone, strerror(errno));
        }
    }
    free(zDir);
    free(zGone);
    return rc;
}

int catalog_create(Catalog *c, const char *zName, Schema *pSchema, int bIfNotExists,
                   int *pbExisted, LpError *err) {
    if (pbExisted) *pbExisted = 0;
    int rc = catalog_check_name(zName, err);
    if (rc) {
        schema_free(pSchema);
        return rc;
    }
    pthread_rwlock_wrlock(&c->lock);
    if (hmap_get(&c->map, zName, strlen(zName)) || hmap_get(&c->broken, zName, strlen(zName))) {
        int bBroken = !hmap_get(&c->map, zName, strlen(zName));
        pthread_rwlock_unlock(&c->lock);
        schema_free(pSchema);
        if (bIfNotExists) {
            if (pbExisted) *pbExisted = 1;
            return LP_OK;
        }
        return lp_err_set(err, LP_EXISTS, bBroken ? "table '%s' already exists (it cannot be opened: "
                          "see SHOW TABLES / the server log; DROP TABLE removes it)"
                          : "table '%s' already exists", zName);
    }
    /* Models load with the lock held: CREATE TABLE is rare, and a second
    ** CREATE of the same name must wait for this one. */
    TableModelEnv env = {c->zDataDir, &c->embed, c->nEmbedInline};
    Table *t = table_new_ex(zName, pSchema, &env, 1, err);
    if (!t) {
        pthread_rwlock_unlock(&c->lock);
        return err ? err->code : LP_NOMEM;
    }
    table_set_pool(t, c->pPool);
    if (c->zTables) {
        /* The schema as the table completed it (knn_dims from a model). */
        int rc = create_stored(c, t, table_schema(t), err);
        if (rc != LP_OK) {
            pthread_rwlock_unlock(&c->lock);
            table_unref(t);
            return rc;
        }
    }
    if (hmap_put(&c->map, table_name(t), strlen(zName), t, NULL)) {
        pthread_rwlock_unlock(&c->lock);
        table_unref(t);
        return lp_err_set(err, LP_NOMEM, "out of memory creating table '%s'", zName);
    }
    pthread_rwlock_unlock(&c->lock);
    return LP_OK;
}

int catalog_drop(Catalog *c, const char *zName, int bIfExists, LpError *err) {
    /* No flush may write into the folder as it goes (waited for before the
    ** catalog lock: a flush may wait for the manifest mutex, which an ALTER
    ** holds while it takes the catalog lock). */
    Table *t0 = catalog_get(c, zName);
    if (t0) table_stop_flushes(t0);
    int rc = catalog_drop_locked(c, zName, bIfExists, err);
    if (t0 && rc != LP_OK) table_resume_flushes(t0);
    if (t0) table_unref(t0);
    return rc;
}

static int catalog_drop_locked(Catalog *c, const char *zName, int bIfExists, LpError *err) {
    pthread_rwlock_wrlock(&c->lock);
    Table *t = hmap_get(&c->map, zName, strlen(zName));
    void *pKey = NULL;
    char *zWhy = t ? NULL : hmap_get(&c->broken, zName, strlen(zName));
    if (!t && !zWhy) {
        pthread_rwlock_unlock(&c->lock);
        if (bIfExists) return LP_OK;
        return lp_err_set(err, LP_NOTFOUND, "table '%s' does not exist", zName);
    }
    /* The files first: a table whose folder cannot go stays listed. */
    int rc = c->zTables ? drop_stored(c, zName, err) : LP_OK;
    if (rc == LP_OK) {
        if (t) {
            hmap_del(&c->map, zName, strlen(zName));
        } else {
            HMapIter it = {0};
            const void *k;
            void *v;
            while (hmap_next(&c->broken, &it, &k, NULL, &v)) {
                if (v == zWhy) pKey = (void *)k;
            }
            hmap_del(&c->broken, zName, strlen(zName));
        }
    }
    pthread_rwlock_unlock(&c->lock);
    if (rc != LP_OK) return rc;
    if (t) {
        stop_jobs(c, t);
        table_unref(t);
    }
    free(pKey);
    free(zWhy);
    return LP_OK;
}

Table *catalog_get(Catalog *c, const char *zName) {
    pthread_rwlock_rdlock(&c->lock);
    Table *t = hmap_get(&c->map, zName, strlen(zName));
    if (t) table_ref(t);
    pthread_rwlock_unlock(&c->lock);
    return t;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int catalog_names(Catalog *c, char ***pazName, int *pn) {
    pthread_rwlock_rdlock(&c->lock);
    size_t n = hmap_count(&c->map) + hmap_count(&c->broken);
    char **az = calloc(n ? n : 1, sizeof(char *));
    int i = 0, oom = !az;
    HMapIter it = {0};
    void *pVal;
    const void *pKey;
    while (!oom && hmap_next(&c->map, &it, NULL, NULL, &pVal)) {
        if (!(az[i++] = strdup(table_name(pVal)))) oom = 1;
    }
    memset(&it, 0, sizeof(it));
    while (!oom && hmap_next(&c->broken, &it, &pKey, NULL, &pVal)) {
        if (!(az[i++] = strdup(pKey))) oom = 1;
    }
    pthread_rwlock_unlock(&c->lock);
    if (oom) {
        catalog_names_free(az, i);
        return LP_NOMEM;
    }
    qsort(az, (size_t)i, sizeof(char *), cmp_str);
    *pazName = az;
    *pn = i;
    return LP_OK;
}

void catalog_names_free(char **azName, int n) {
    if (!azName) return;
    for (int i = 0; i < n; i++) free(azName[i]);
    free(azName);
}

/* ------------------------------------------------------------------ */
/* ALTER TABLE                                                         */

/* Is a REBUILD EMBEDDINGS running on t? (muManifest held) */
static int job_running(Catalog *c, const Table *t);

int catalog_alter(Catalog *c, const char *zName, Schema *pNew, const int *aMap, LpError *err) {
    Table *old = catalog_get(c, zName);
    if (!old) {
        schema_free(pNew);
        return lp_err_set(err, LP_NOTFOUND, "table '%s' does not exist", zName);
    }
    pthread_mutex_lock(&c->muManifest);
    if (job_running(c, old)) {
        pthread_mutex_unlock(&c->muManifest);
        table_unref(old);
        schema_free(pNew);
        return lp_err_set(err, LP_BUSY, "table '%s' is rebuilding embeddings: ALTER it when that is "
                          "done (SHOW TABLE %s STATUS)", zName, zName);
    }
    /* No flush of the old version may write files meanwhile (the new one
    ** numbers its segments from the manifest's count on). */
    pthread_mutex_unlock(&c->muManifest);
    table_stop_flushes(old);
    pthread_mutex_lock(&c->muManifest);
    /* From here on writes to the old version fail ("altered: run it
    ** again"); readers go on reading it. */
    table_retire(old, 1);
    int rc = LP_OK, bManifest = 0;
    Manifest m = {0};
    char *zDir = c->zTables ? table_dir(c, zName) : NULL;
    char zWalName[64] = "", zWal[4096] = "";
    uint64_t nextSegId = 0;
    TableModelEnv env = {c->zDataDir, &c->embed, c->nEmbedInline};
    Table *t = table_new_ex(zName, pNew, &env, 1, err);
    pNew = NULL;
    if (!t) {
        rc = err && err->code ? err->code : LP_NOMEM;
        goto fail;
    }
    table_set_pool(t, c->pPool);
    /* Where the change leaves the text and the graphs as they are (columns
    ** added or dropped), the sealed segments are converted: rows files
    ** rewritten, everything else linked. Otherwise every row is copied
    ** (and indexed again). */
    int bKeep = 0;
    ManifestSeg *aKeptSeg = NULL;
    int nKeptSeg = 0;
    if (c->zTables) {
        if (!zDir) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory altering table '%s'", zName);
            goto fail;
        }
        if ((rc = manifest_read(zDir, &m, err)) != LP_OK) goto fail;
        bManifest = 1;
        snprintf(zWalName, sizeof(zWalName), "wal-%llu", (unsigned long long)m.schemaVersion + 1);
        snprintf(zWal, sizeof(zWal), "%s/%s", zDir, zWalName);
        remove_tree(zWal);
        if ((rc = table_open_wal(t, zWal, c->sync, err)) != LP_OK) goto fail;
        nextSegId = m.nextSegId ? m.nextSegId : 1; /* above every id and generation (manifest_read) */
        if (m.nSeg && table_alter_keeps(old, table_schema(t), aMap)) {
            TableStorage ts = storage_of(c, t, zDir, zWalName);
            ts.memLimit = 0; /* no flush before the switch; set below */
            table_init_storage(t, &ts);
            rc = table_alter_segments(old, t, aMap, &nextSegId, &aKeptSeg, &nKeptSeg, err);
            if (rc != LP_OK) goto fail;
            bKeep = 1;
        }
    }
    /* Copy the rows (those of the RAM segment only when the segments were
    ** kept), column by column through aMap, in batches. */
    int64_t *aId = NULL;
    size_t nId = 0;
    rc = bKeep ? table_ram_ids(old, &aId, &nId, err) : table_ids(old, &aId, &nId, err);
    if (rc != LP_OK) {
        free(aKeptSeg);
        goto fail;
    }
    const Schema *so = table_schema(old), *sn = table_schema(t);
    /* A copied row is indexed again from its stored text: a field indexed
    ** but not stored would come out empty. Where the change itself keeps
    ** the segments, only the rows not yet flushed are copied. */
    for (int j = 0; j < sn->nCol && rc == LP_OK && nId > 0; j++) {
        const ColumnSchema *co = aMap[j] >= 0 ? &so->aCol[aMap[j]] : NULL;
        if (!co || co->type != COL_TEXT || !(co->flags & COLF_INDEXED) || (co->flags & COLF_STORED)) continue;
        if (bKeep || table_alter_keeps(old, sn, aMap)) {
            rc = lp_err_set(err, LP_UNSUPPORTED,
                            "table '%s' has rows not yet flushed, which ALTER indexes again from their "
                            "stored text, and field '%s' is indexed but not stored: FLUSH TABLE %s, "
                            "then ALTER it", zName, co->zName, zName);
        } else {
            rc = lp_err_set(err, LP_UNSUPPORTED,
                            "table '%s' cannot be altered so: the change indexes every row again from "
                            "its stored text, and field '%s' is indexed but not stored", zName, co->zName);
        }
    }
    if (rc != LP_OK) {
        free(aId);
        free(aKeptSeg);
        goto fail;
    }
    enum { BATCH = 256 };
    Value *aVal = malloc(sizeof(Value) * BATCH * (size_t)(sn->nCol ? sn->nCol : 1));
    TableOp *aOp = malloc(sizeof(TableOp) * BATCH);
    MemRow **apCopy = calloc(BATCH, sizeof(MemRow *));
    if (!aVal || !aOp || !apCopy) rc = lp_err_set(err, LP_NOMEM, "out of memory altering table '%s'", zName);
    for (size_t i = 0; rc == LP_OK && i < nId; i += BATCH) {
        size_t n = nId - i < BATCH ? nId - i : BATCH, nOp = 0;
        TableSnap *snap = table_snapshot(old);
        if (!snap) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory altering table '%s'", zName);
            break;
        }
        RowReader rd;
        row_reader_init(&rd, snap);
        for (size_t k = 0; k < n && rc == LP_OK; k++) {
            const MemRow *r = table_snap_get(snap, aId[i + k]);
            if (!r) continue;
            /* A copy holding its text (sealed rows keep it compressed). */
            MemRow *c = apCopy[nOp] = row_read_copy(&rd, so, r);
            if (!c) {
                rc = lp_err_set(err, LP_NOMEM, "cannot read row %lld of table '%s'", (long long)aId[i + k], zName);
                break;
            }
            Value *a = aVal + nOp * (size_t)sn->nCol;
            for (int j = 0; j < sn->nCol; j++) a[j] = aMap[j] >= 0 ? row_get(so, c, aMap[j]) : value_null();
            aOp[nOp++] = (TableOp){TOP_REPLACE, aId[i + k], a, NULL, NULL, NULL};
        }
        row_reader_free(&rd);
        /* The values point into the copies and the old rows: apply before
        ** releasing. */
        if (rc == LP_OK) rc = table_apply_ex(t, aOp, nOp, TABLE_APPLY_NO_EMBED, NULL, err);
        table_snapshot_release(snap);
        for (size_t k = 0; k < nOp; k++) {
            free(apCopy[k]);
            apCopy[k] = NULL;
        }
    }
    free(aId);
    free(aVal);
    free(aOp);
    free(apCopy);
    if (rc != LP_OK) {
        free(aKeptSeg);
        goto fail;
    }
    table_raise_next_id(t, table_next_id(old));
    if (c->zTables) {
        /* The switch: the manifest names the new schema and log. */
        Manifest m2 = m;
        m2.schemaVersion = m.schemaVersion + 1;
        m2.pSchema = (Schema *)table_schema(t);
        m2.zWalDir = zWalName;
        m2.nextIdFloor = table_next_id(t);
        m2.zRebuildCol = NULL;
        m2.aSeg = aKeptSeg;  /* NULL: the copy holds every row in its log */
        m2.nSeg = nKeptSeg;
        m2.nextSegId = nextSegId;
        m2.walFirstLsn = 0;
        rc = manifest_write(zDir, &m2, err);
        if (rc != LP_OK) {
            free(aKeptSeg);
            goto fail;
        }
        char zOld[4096];
        snprintf(zOld, sizeof(zOld), "%s/%s", zDir, m.zWalDir ? m.zWalDir : "wal");
        remove_tree(zOld);
        table_remove_unlisted(zDir, m2.aSeg, m2.nSeg);
        free(aKeptSeg);
    }
    table_ref(t); /* ours, until its storage is set below */
    pthread_rwlock_wrlock(&c->lock);
    void *pOld = NULL;
    hmap_put(&c->map, table_name(t), strlen(zName), t, &pOld); /* replaces: cannot fail */
    pthread_rwlock_unlock(&c->lock);
    pthread_mutex_unlock(&c->muManifest);
    /* After the manifest mutex (a flush takes the table's flush mutex
    ** first, then that one); a write meanwhile just does not flush yet. */
    if (c->zTables) {
        TableStorage ts = storage_of(c, t, zDir, zWalName);
        table_set_storage(t, &ts, nextSegId);
    }
    table_unref(t);
    if (pOld) table_unref(pOld);  /* the catalog's reference to the old version */
    table_unref(old);             /* ours */
    manifest_clear(&m);
    free(zDir);
    return LP_OK;

fail:
    table_retire(old, 0);
    table_resume_flushes(old);
    if (t) table_unref(t);
    /* Converted segments the manifest never named. */
    if (bManifest) table_remove_unlisted(zDir, m.aSeg, m.nSeg);
    pthread_mutex_unlock(&c->muManifest);
    if (zWal[0]) remove_tree(zWal);
    schema_free(pNew);
    manifest_clear(&m);
    free(zDir);
    table_unref(old);
    return rc;
}

/* ------------------------------------------------------------------ */
/* REBUILD EMBEDDINGS                                                  */

typedef struct RebuildJob {
    struct RebuildJob *pNext;
    Catalog *c;
    Table *t;                   /* a reference */
    char zCol[128];
    int iCol;
    int64_t afterId;            /* resume point */
    pthread_t thread;
    atomic_int bStop;
    atomic_int bDone;
    atomic_uint_fast64_t nDone, nTotal;
    int64_t tStart, tEnd;
    char zErr[LP_ERRMSG_MAX];   /* set when it failed (read after bDone) */
} RebuildJob;

static int job_running(Catalog *c, const Table *t) {
    for (RebuildJob *j = c->pJobs; j; j = j->pNext) {
        if (j->t == t && !atomic_load(&j->bDone)) return 1;
    }
    return 0;
}

/* Records the job's resume point (or its end: zCol NULL) in the manifest,
** unless the table was dropped or replaced meanwhile. */
static void checkpoint(RebuildJob *j, const char *zCol, int64_t afterId) {
    Catalog *c = j->c;
    if (!c->zTables) return;
    Table *cur = catalog_get(c, table_name(j->t));
    if (cur) table_unref(cur);
    if (cur != j->t) return;
    char *zDir = table_dir(c, table_name(j->t));
    Manifest m;
    LpError err;
    lp_err_clear(&err);
    if (zDir && manifest_read(zDir, &m, &err) == LP_OK) {
        char *zOld = m.zRebuildCol;
        m.zRebuildCol = (char *)zCol;
        m.rebuildAfterId = afterId;
        if (manifest_write(zDir, &m, &err) != LP_OK) {
            LOG_ERROR("table '%s': cannot record REBUILD EMBEDDINGS progress: %s", table_name(j->t),
                      err.zMsg);
        }
        m.zRebuildCol = zOld;
        manifest_clear(&m);
    }
    free(zDir);
}

static void *rebuild_main(void *arg) {
    RebuildJob *j = arg;
    LpError err;
    lp_err_clear(&err);
    int64_t *aId = NULL;
    size_t nId = 0, iFirst = 0;
    int rc = table_ids(j->t, &aId, &nId, &err);
    while (iFirst < nId && aId[iFirst] <= j->afterId) iFirst++;
    atomic_store(&j->nTotal, (uint64_t)(nId - iFirst));
    int64_t tCheck = lp_now_ns();
    /* Chunks small enough to stop promptly, big enough to use the pool. */
    enum { CHUNK = 32 };
    for (size_t i = iFirst; rc == LP_OK && i < nId && !atomic_load(&j->bStop); i += CHUNK) {
        size_t n = nId - i < CHUNK ? nId - i : CHUNK, nDone = 0;
        rc = table_fill_embeddings(j->t, j->iCol, aId + i, n, &nDone, &err);
        atomic_fetch_add(&j->nDone, n);
        if (rc == LP_OK && lp_now_ns() - tCheck > 2000000000LL) {
            pthread_mutex_lock(&j->c->muManifest);
            checkpoint(j, j->zCol, aId[i + n - 1]);
            pthread_mutex_unlock(&j->c->muManifest);
            tCheck = lp_now_ns();
        }
    }
    free(aId);
    pthread_mutex_lock(&j->c->muManifest);
    if (rc == LP_OK && !atomic_load(&j->bStop)) {
        checkpoint(j, NULL, 0);
        LOG_INFO("table '%s': REBUILD EMBEDDINGS %s done: %llu rows in %.1f s", table_name(j->t),
                 j->zCol, (unsigned long long)atomic_load(&j->nTotal),
                 (double)(lp_now_ns() - j->tStart) / 1e9);
    } else if (rc != LP_OK) {
        snprintf(j->zErr, sizeof(j->zErr), "%s", err.zMsg);
        LOG_ERROR("table '%s': REBUILD EMBEDDINGS %s failed: %s", table_name(j->t), j->zCol, err.zMsg);
    }
    j->tEnd = lp_now_ns();
    atomic_store(&j->bDone, 1);
    pthread_mutex_unlock(&j->c->muManifest);
    return NULL;
}

/* Starts a job (muManifest NOT held by the caller). */
static int start_rebuild(Catalog *c, Table *t, const char *zCol, int64_t afterId, LpError *err) {
    const Schema *s = table_schema(t);
    int iCol = schema_find(s, zCol);
    if (iCol < 0 || s->aCol[iCol].type != COL_VECTOR || !s->aCol[iCol].vec.zModel) {
        return lp_err_set(err, LP_BADINPUT, "REBUILD EMBEDDINGS: '%s' is not a vector column with "
                          "model_name in table '%s'", zCol, table_name(t));
    }
    RebuildJob *j = calloc(1, sizeof(*j));
    if (!j) return lp_err_set(err, LP_NOMEM, "out of memory starting REBUILD EMBEDDINGS");
    j->c = c;
    j->t = t;
    j->iCol = iCol;
    j->afterId = afterId;
    j->tStart = lp_now_ns();
    snprintf(j->zCol, sizeof(j->zCol), "%s", zCol);
    table_ref(t);
    pthread_mutex_lock(&c->muManifest);
    if (job_running(c, t)) {
        pthread_mutex_unlock(&c->muManifest);
        table_unref(t);
        free(j);
        return lp_err_set(err, LP_BUSY, "table '%s' is already rebuilding embeddings (SHOW TABLE %s "
                          "STATUS)", table_name(t), table_name(t));
    }
    /* Drop finished jobs of this table: the new one reports from now on. */
    for (RebuildJob **pp = &c->pJobs; *pp;) {
        RebuildJob *o = *pp;
        if (atomic_load(&o->bDone) && !strcmp(table_name(o->t), table_name(t))) {
            *pp = o->pNext;
            pthread_join(o->thread, NULL);
            table_unref(o->t);
            free(o);
        } else {
            pp = &o->pNext;
        }
    }
    checkpoint(j, zCol, afterId); /* resumable from the start */
    if (pthread_create(&j->thread, NULL, rebuild_main, j) != 0) {
        pthread_mutex_unlock(&c->muManifest);
        table_unref(t);
        free(j);
        return lp_err_set(err, LP_LIMIT, "cannot start a thread for REBUILD EMBEDDINGS");
    }
    j->pNext = c->pJobs;
    c->pJobs = j;
    pthread_mutex_unlock(&c->muManifest);
    return LP_OK;
}

int catalog_rebuild_embeddings(Catalog *c, const char *zName, const char *zCol, LpError *err) {
    Table *t = catalog_get(c, zName);
    if (!t) return lp_err_set(err, LP_NOTFOUND, "table '%s' does not exist", zName);
    int rc = start_rebuild(c, t, zCol, 0, err);
    table_unref(t);
    return rc;
}

/* Stops the jobs of t (all when NULL) and, for all, waits for them. */
static void stop_jobs(Catalog *c, const Table *t) {
    pthread_mutex_lock(&c->muManifest);
    for (RebuildJob *j = c->pJobs; j; j = j->pNext) {
        if (!t || j->t == t) atomic_store(&j->bStop, 1);
    }
    RebuildJob *pAll = t ? NULL : c->pJobs;
    if (!t) c->pJobs = NULL;
    pthread_mutex_unlock(&c->muManifest);
    while (pAll) {
        RebuildJob *j = pAll;
        pAll = j->pNext;
        pthread_join(j->thread, NULL);
        table_unref(j->t);
        free(j);
    }
}

int catalog_rebuild_status(Catalog *c, const char *zName, char *zOut, size_t nOut) {
    int bFound = 0;
    pthread_mutex_lock(&c->muManifest);
    for (RebuildJob *j = c->pJobs; j && !bFound; j = j->pNext) {
        if (strcmp(table_name(j->t), zName) != 0) continue;
        Table *cur = catalog_get(c, zName);
        if (cur) table_unref(cur);
        if (cur != j->t) continue;
        bFound = 1;
        unsigned long long nDone = atomic_load(&j->nDone), nTotal = atomic_load(&j->nTotal);
        if (!atomic_load(&j->bDone)) {
            snprintf(zOut, nOut, "running: column %s, %llu of %llu rows", j->zCol, nDone, nTotal);
        } else if (j->zErr[0]) {
            snprintf(zOut, nOut, "failed: column %s after %llu of %llu rows: %s", j->zCol, nDone,
                     nTotal, j->zErr);
        } else if (atomic_load(&j->bStop)) {
            snprintf(zOut, nOut, "stopped: column %s, %llu of %llu rows", j->zCol, nDone, nTotal);
        } else {
            snprintf(zOut, nOut, "done: column %s, %llu rows in %.1f s", j->zCol, nTotal,
                     (double)(j->tEnd - j->tStart) / 1e9);
        }
    }
    pthread_mutex_unlock(&c->muManifest);
    return bFound;
}
