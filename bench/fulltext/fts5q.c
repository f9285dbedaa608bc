/*
** fts5q.c — SQLite FTS5 queried in process, for the full-text benchmark's
** "speed in process" table: no Python, no client, no protocol in the loop.
**
**   fts5q DB QUERYFILE [--k 10] [--seconds S] [--warmup N] [--hard-stop S]
**
** DB is the database run.py's Fts5Engine built (a contentless FTS5 table c,
** Porter stemmer, optimized). QUERYFILE holds one FTS5 MATCH expression a
** line, exactly what Fts5Engine.compile() binds (`"w1" OR "w2"`, `"w1" AND
** "w2"`, `"w1 w2"`, `"pre"*`). The statement
**     SELECT rowid FROM c WHERE c MATCH ? ORDER BY rank LIMIT k
** is prepared once; per query the MATCH text is bound, every row stepped
** through and the statement reset: the work Python's sqlite3 module asks
** of SQLite for the same query, minus Python. The database is opened
** read-only with SQLite's defaults (page cache, no mmap), as the Python
** path opens it.
**
** Passes, markers and output: passes.h. Errors (cannot open, prepare or
** step) are printed and exit 1; bad arguments exit 2.
**
** Build (run.py does): gcc -O2 fts5q.c -lsqlite3
*/
#include <sqlite3.h>

#include "passes.h"

typedef struct Fts5Ctx {
    sqlite3 *db;
    sqlite3_stmt *pStmt;
    const BenchLines *pQuery;
} Fts5Ctx;

/* Runs MATCH expression i to the end; its rows, or -1 (printed). */
static long fts5q_one(void *ctx, int i) {
    Fts5Ctx *x = ctx;
    long nRow = 0;
    int rc = sqlite3_bind_text(x->pStmt, 1, x->pQuery->az[i], (int)x->pQuery->an[i], SQLITE_STATIC);
    while (rc == SQLITE_OK && (rc = sqlite3_step(x->pStmt)) == SQLITE_ROW) {
        (void)sqlite3_column_int64(x->pStmt, 0); /* the rowid, as a client reads it */
        nRow++;
        rc = SQLITE_OK;
    }
    sqlite3_reset(x->pStmt);
    if (rc != SQLITE_DONE) {
        fprintf(stderr, "fts5q: query %d failed: %s\n  %.300s\n", i + 1, sqlite3_errmsg(x->db),
                x->pQuery->az[i]);
        return -1;
    }
    return nRow;
}

static int usage(void) {
    fprintf(stderr, "usage: fts5q DB QUERYFILE [--k 10] [--seconds S] [--warmup N] [--hard-stop S]\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 3) return usage();
    BenchPassCfg cfg = {1.0, 0, 0};
    int k = 10;
    for (int i = 3; i < argc;) {
        if (!bench_common_opt(argc, argv, &i, &cfg, &k)) return usage();
    }
    if (!bench_cfg_ok(&cfg, k)) return usage();
    BenchLines list;
    if (bench_read_lines("fts5q", argv[2], &list) != 0) return 1;
    sqlite3 *db = NULL;
    sqlite3_stmt *pStmt = NULL;
    int rc = 1;
    char zSql[100];
    snprintf(zSql, sizeof zSql, "SELECT rowid FROM c WHERE c MATCH ? ORDER BY rank LIMIT %d", k);
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "fts5q: cannot open %s: %s\n", argv[1], db ? sqlite3_errmsg(db) : "out of memory");
    } else if (sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) != SQLITE_OK) {
        fprintf(stderr, "fts5q: %s: %s\n", argv[1], sqlite3_errmsg(db));
    } else {
        Fts5Ctx x = {db, pStmt, &list};
        rc = bench_passes("fts5q", &cfg, list.n, fts5q_one, &x);
    }
    sqlite3_finalize(pStmt);
    sqlite3_close(db);
    bench_free_lines(&list);
    return rc;
}
