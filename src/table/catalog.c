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
    manifest_clear(&m);
    if (!t) return NULL;
    table_set_pool(t, c->pPool);
    char zWal[4096];
    snprintf(zWal, sizeof(zWal), "%s/wal", zDir);
    if (table_open_wal(t, zWal, c->sync, err) != LP_OK) {
        table_unref(t);
        return NULL;
    }
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
                if (hmap_put(&c->map, table_name(t), strlen(zName), t, NULL)) {
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
    hmap_init(&c->map);
    hmap_init(&c->broken);
    c->sync = cfg->sync;
    c->pPool = cfg->pool;
    c->embed = cfg->embed;
    c->nEmbedInline = cfg->nEmbedInline;
    if (zDataDir) {
        if (!(c->zDataDir = strdup(zDataDir)) || asprintf(&c->zTables, "%s/tables", zDataDir) < 0) {
            c->zTables = NULL;
            catalog_free(c);
            lp_err_set(err, LP_NOMEM, "out of memory creating the catalog");
            return NULL;
        }
        if (mkdir(c->zTables, 0755) != 0 && errno != EEXIST) {
            lp_err_set(err, LP_IOERR, "cannot create folder %s: %s", c->zTables, strerror(errno));
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

void catalog_free(Catalog *c) {
    if (!c) return;
    HMapIter it = {0};
    void *pKey, *pVal;
    while (hmap_next(&c->map, &it, NULL, NULL, &pVal)) table_unref(pVal);
    hmap_free(&c->map);
    memset(&it, 0, sizeof(it));
    while (hmap_next(&c->broken, &it, (const void **)&pKey, NULL, &pVal)) {
        free(pKey);
        free(pVal);
    }
    hmap_free(&c->broken);
    pthread_rwlock_destroy(&c->lock);
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
        Manifest m = {(char *)zName, 1, (Schema *)pSchema, 0};
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
    if (t) table_unref(t);
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
