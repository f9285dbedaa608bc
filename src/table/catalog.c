/* catalog.c — see catalog.h. */
#include "table/catalog.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

struct Catalog {
    char *zDataDir;             /* owned */
    pthread_rwlock_t lock;      /* guards map */
    HashMap map;                /* name -> Table* (key = the table's own name) */
    Tpool *pPool;               /* given to new tables, or NULL */
};

Catalog *catalog_new(const char *zDataDir, LpError *err) {
    Catalog *c = calloc(1, sizeof(*c));
    if (!c || !(c->zDataDir = strdup(zDataDir ? zDataDir : "."))) {
        free(c);
        lp_err_set(err, LP_NOMEM, "out of memory creating the catalog");
        return NULL;
    }
    pthread_rwlock_init(&c->lock, NULL);
    hmap_init(&c->map);
    return c;
}

void catalog_set_pool(Catalog *c, Tpool *pool) {
    c->pPool = pool;
}

void catalog_free(Catalog *c) {
    if (!c) return;
    HMapIter it = {0};
    void *pVal;
    while (hmap_next(&c->map, &it, NULL, NULL, &pVal)) table_unref(pVal);
    hmap_free(&c->map);
    pthread_rwlock_destroy(&c->lock);
    free(c->zDataDir);
    free(c);
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

int catalog_create(Catalog *c, const char *zName, Schema *pSchema, int bIfNotExists,
                   int *pbExisted, LpError *err) {
    if (pbExisted) *pbExisted = 0;
    int rc = catalog_check_name(zName, err);
    if (rc) {
        schema_free(pSchema);
        return rc;
    }
    pthread_rwlock_wrlock(&c->lock);
    if (hmap_get(&c->map, zName, strlen(zName))) {
        pthread_rwlock_unlock(&c->lock);
        schema_free(pSchema);
        if (bIfNotExists) {
            if (pbExisted) *pbExisted = 1;
            return LP_OK;
        }
        return lp_err_set(err, LP_EXISTS, "table '%s' already exists", zName);
    }
    Table *t = table_new(zName, pSchema, err);
    if (!t) {
        pthread_rwlock_unlock(&c->lock);
        return err ? err->code : LP_NOMEM;
    }
    table_set_pool(t, c->pPool);
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
    Table *t = hmap_del(&c->map, zName, strlen(zName));
    pthread_rwlock_unlock(&c->lock);
    if (!t) {
        if (bIfExists) return LP_OK;
        return lp_err_set(err, LP_NOTFOUND, "table '%s' does not exist", zName);
    }
    table_unref(t);
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
    size_t n = hmap_count(&c->map);
    char **az = calloc(n ? n : 1, sizeof(char *));
    int i = 0, oom = !az;
    HMapIter it = {0};
    void *pVal;
    while (!oom && hmap_next(&c->map, &it, NULL, NULL, &pVal)) {
        if (!(az[i++] = strdup(table_name(pVal)))) oom = 1;
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
