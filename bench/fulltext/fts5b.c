/*
** fts5b.c — SQLite FTS5 indexing in process, timed as loupe's
** `loupe-inspect fts-build` is, for the full-text benchmark's "indexing in
** process" table.
**
**   fts5b DOCS.jsonl DB
**
** Untimed: reading and parsing DOCS.jsonl (one JSON object a line; its
** "title" and "text" strings, a missing or non-string one taken as ""),
** creating DB afresh and in it the table run.py's Fts5Engine creates
**     CREATE VIRTUAL TABLE c USING fts5(title, body,
**                                       tokenize='porter unicode61', content='')
** and preparing the INSERT. Timed: what Fts5Engine.load() asks of SQLite
**     BEGIN; INSERT (rowid 1.., title, body) per document;
**     INSERT INTO c(c) VALUES('optimize'); COMMIT
** with SQLite's defaults (rollback journal, synchronous=FULL): the index
** built, merged into one b-tree segment and durable.
**
** Why a C driver when Fts5Engine already times the same statements from
** Python: loupe-inspect runs in a fresh process, where every page the
** index touches is new to the process (on some VMs a first touch costs
** about 11 us), while Python's sqlite3 module runs in the benchmark's
** long-lived process, after other work. This driver puts FTS5 in the
** same conditions as loupe: C, a fresh process, the same timed window.
** run.py reports both FTS5 numbers; in the runs so far the Python one was
** above the C one on some collections and below on others.
**
** Output, one JSON object on stdout:
**   {"documents":82,"build_s":0.0031,"page_faults":52}
** page_faults: minor faults inside the timed window. Errors (unreadable
** file, bad JSON, an SQLite error) are printed and exit 1; bad arguments
** exit 2.
**
** Build (run.py does): gcc -O2 fts5b.c -lsqlite3 -ljansson
*/
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef struct Doc {
    char *zTitle, *zBody;
} Doc;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long minor_faults(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

/* The string member zKey of j, copied; "" when absent or not a string. */
static char *member(json_t *j, const char *zKey) {
    const char *z = json_string_value(json_object_get(j, zKey));
    return strdup(z ? z : "");
}

/* Reads every document of zPath into *paDoc; their count, or -1 (printed). */
static long read_docs(const char *zPath, Doc **paDoc) {
    FILE *in = fopen(zPath, "r");
    if (!in) {
        perror(zPath);
        return -1;
    }
    Doc *a = NULL;
    long n = 0, cap = 0;
    char *zLine = NULL;
    size_t nLine = 0;
    ssize_t len;
    while ((len = getline(&zLine, &nLine, in)) > 0) {
        json_error_t e;
        json_t *j = json_loadb(zLine, (size_t)len, 0, &e);
        if (!j) {
            fprintf(stderr, "fts5b: %s line %ld: %s\n", zPath, n + 1, e.text);
            n = -1;
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            Doc *aNew = realloc(a, sizeof(Doc) * (size_t)cap);
            if (!aNew) {
                json_decref(j);
                fprintf(stderr, "fts5b: out of memory\n");
                n = -1;
                break;
            }
            a = aNew;
        }
        a[n].zTitle = member(j, "title");
        a[n].zBody = member(j, "text");
        json_decref(j);
        if (!a[n].zTitle || !a[n].zBody) {
            free(a[n].zTitle);
            free(a[n].zBody);
            fprintf(stderr, "fts5b: out of memory\n");
            n = -1;
            break;
        }
        n++;
    }
    free(zLine);
    fclose(in);
    *paDoc = a;
    return n;
}

static int exec_sql(sqlite3 *db, const char *zSql) {
    char *zErr = NULL;
    if (sqlite3_exec(db, zSql, NULL, NULL, &zErr) == SQLITE_OK) return 0;
    fprintf(stderr, "fts5b: %s: %s\n", zSql, zErr ? zErr : sqlite3_errmsg(db));
    sqlite3_free(zErr);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: fts5b DOCS.jsonl DB\n");
        return 2;
    }
    Doc *aDoc = NULL;
    long nDoc = read_docs(argv[1], &aDoc);
    if (nDoc < 0) return 1;
    if (unlink(argv[2]) != 0 && access(argv[2], F_OK) == 0) {
        perror(argv[2]);
        return 1;
    }
    sqlite3 *db = NULL;
    sqlite3_stmt *pIns = NULL;
    int rc = 1;
    if (sqlite3_open(argv[2], &db) != SQLITE_OK) {
        fprintf(stderr, "fts5b: cannot open %s: %s\n", argv[2], db ? sqlite3_errmsg(db) : "out of memory");
        goto done;
    }
    if (exec_sql(db, "CREATE VIRTUAL TABLE c USING fts5(title, body, "
                     "tokenize='porter unicode61', content='')")) {
        goto done;
    }
    if (sqlite3_prepare_v2(db, "INSERT INTO c(rowid, title, body) VALUES (?, ?, ?)", -1, &pIns, NULL) !=
        SQLITE_OK) {
        fprintf(stderr, "fts5b: %s\n", sqlite3_errmsg(db));
        goto done;
    }
    long f0 = minor_faults();
    double t0 = now_s();
    if (exec_sql(db, "BEGIN")) goto done;
    for (long i = 0; i < nDoc; i++) {
        sqlite3_bind_int64(pIns, 1, i + 1);
        sqlite3_bind_text(pIns, 2, aDoc[i].zTitle, -1, SQLITE_STATIC);
        sqlite3_bind_text(pIns, 3, aDoc[i].zBody, -1, SQLITE_STATIC);
        if (sqlite3_step(pIns) != SQLITE_DONE) {
            fprintf(stderr, "fts5b: document %ld: %s\n", i + 1, sqlite3_errmsg(db));
            goto done;
        }
        sqlite3_reset(pIns);
    }
    if (exec_sql(db, "INSERT INTO c(c) VALUES('optimize')") || exec_sql(db, "COMMIT")) goto done;
    double t1 = now_s();
    long f1 = minor_faults();
    printf("{\"documents\":%ld,\"build_s\":%.6f,\"page_faults\":%ld}\n", nDoc, t1 - t0, f1 - f0);
    rc = 0;
done:
    sqlite3_finalize(pIns);
    sqlite3_close(db);
    for (long i = 0; i < nDoc; i++) {
        free(aDoc[i].zTitle);
        free(aDoc[i].zBody);
    }
    free(aDoc);
    return rc;
}
