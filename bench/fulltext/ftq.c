/*
** ftq.c — single-connection query loop for the full-text benchmark.
**
** Reads statements from --file, one per line (the driver writes them with
** newlines escaped, so a line is a whole statement), connects once over the
** MySQL protocol (libmariadb) and sends them back to back, in file order:
** first the first --warmup statements, not counted, then whole passes over
** the file until at least --seconds have passed. Every result is read in
** full (mysql_store_result) and its rows counted. A pass that runs longer
** than --hard-stop seconds is cut short (a very slow server must not stall
** the benchmark); the output says so.
**
** Any failed statement ends the run: the error goes to stderr and ftq exits
** 1, so an engine that errors is never measured as fast.
**
** Output, one JSON object on stdout (passes.h, the loop it shares with the
** in-process drivers fts5q.c and xapq.cc):
**   {"queries":1234,"seconds":1.0012,"rows":12000,"cut_short":false,
**    "cpu_seconds":0.01}
** cpu_seconds is ftq's own CPU (the client side). On stderr, "ftq:
** measuring" and "ftq: done" mark the measured window, so a driver can
** sample the server's CPU time over it (bench/fulltext/run.py).
**
** Build: gcc -O2 ftq.c $(pkg-config --cflags --libs libmariadb)
*/
#include <getopt.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>

#include "passes.h"

typedef struct FtqConfig {
    const char *zHost;      /* server address */
    unsigned port;          /* server MySQL port */
    const char *zUser;      /* user name sent in the handshake */
    const char *zFile;      /* statements, one per line */
    double seconds;         /* minimum measured seconds (whole passes) */
    double hardStop;        /* a pass is cut after this many seconds */
    int nWarmup;            /* statements sent before measuring */
} FtqConfig;

/* What ftq_one needs: the connection and the statements. */
typedef struct FtqCtx {
    MYSQL *db;
    const BenchLines *pSql;
} FtqCtx;

/* Sends statement i and reads its rows; -1 on error (printed). */
static long ftq_one(void *ctx, int i) {
    const FtqCtx *x = ctx;
    const char *zSql = x->pSql->az[i];
    if (mysql_real_query(x->db, zSql, (unsigned long)x->pSql->an[i]) != 0) {
        fprintf(stderr, "ftq: statement %d failed: %s\n  %.300s\n", i + 1, mysql_error(x->db), zSql);
        return -1;
    }
    MYSQL_RES *res = mysql_store_result(x->db);
    if (!res) {
        fprintf(stderr, "ftq: statement %d returned no result set: %s\n  %.300s\n", i + 1,
                mysql_error(x->db), zSql);
        return -1;
    }
    long nRow = (long)mysql_num_rows(res);
    mysql_free_result(res);
    return nRow;
}

static void ftq_usage(FILE *f) {
    fprintf(f,
            "usage: ftq --port N --file F [--host H] [--user U] [--seconds S]\n"
            "           [--warmup N] [--hard-stop S]\n"
            "Sends the statements of F (one per line) over one connection in whole\n"
            "passes for at least S seconds; prints queries, seconds and rows as JSON.\n");
}

static int ftq_parse_args(int argc, char **argv, FtqConfig *c) {
    static const struct option aOpt[] = {
        {"host", required_argument, 0, 'h'},    {"port", required_argument, 0, 'P'},
        {"user", required_argument, 0, 'u'},    {"file", required_argument, 0, 'f'},
        {"seconds", required_argument, 0, 'd'}, {"warmup", required_argument, 0, 'w'},
        {"hard-stop", required_argument, 0, 'x'}, {"help", no_argument, 0, '?'},
        {0, 0, 0, 0},
    };
    *c = (FtqConfig){.zHost = "127.0.0.1", .zUser = "bench", .seconds = 1.0, .hardStop = 10.0};
    int opt;
    while ((opt = getopt_long(argc, argv, "", aOpt, NULL)) != -1) {
        switch (opt) {
        case 'h': c->zHost = optarg; break;
        case 'P': c->port = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'u': c->zUser = optarg; break;
        case 'f': c->zFile = optarg; break;
        case 'd': c->seconds = strtod(optarg, NULL); break;
        case 'w': c->nWarmup = atoi(optarg); break;
        case 'x': c->hardStop = strtod(optarg, NULL); break;
        default: ftq_usage(opt == '?' ? stdout : stderr); return 0;
        }
    }
    if (optind != argc || c->port == 0 || c->port > 65535 || !c->zFile || c->seconds <= 0 ||
        c->hardStop < c->seconds || c->nWarmup < 0) {
        ftq_usage(stderr);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    FtqConfig cfg;
    if (!ftq_parse_args(argc, argv, &cfg)) return 2;
    BenchLines list;
    if (bench_read_lines("ftq", cfg.zFile, &list) != 0) return 2;
    if (mysql_library_init(0, NULL, NULL) != 0) {
        fprintf(stderr, "ftq: mysql_library_init failed\n");
        return 2;
    }
    MYSQL *db = mysql_init(NULL);
    if (!db) {
        fprintf(stderr, "ftq: mysql_init: out of memory\n");
        return 2;
    }
    int rc = 1;
    if (!mysql_real_connect(db, cfg.zHost, cfg.zUser, NULL, NULL, cfg.port, NULL, 0)) {
        fprintf(stderr, "ftq: connect to %s:%u: %s\n", cfg.zHost, cfg.port, mysql_error(db));
    } else {
        FtqCtx x = {db, &list};
        BenchPassCfg pc = {cfg.seconds, cfg.hardStop, cfg.nWarmup};
        rc = bench_passes("ftq", &pc, list.n, ftq_one, &x);
    }
    mysql_close(db);
    mysql_library_end();
    bench_free_lines(&list);
    return rc;
}
