/*
** passes.h — the timed loop shared by the full-text benchmark's C and C++
** drivers: ftq.c (a server over libmariadb), fts5q.c (SQLite FTS5 in
** process) and xapq.cc (Xapian in process). tools/loupe-inspect.c
** (`fts-bench`, loupe in process) keeps a copy of the same loop, since a
** tool of the server cannot include the benchmark's files.
**
** Contract. bench_read_lines() reads the non-empty lines of a file (CR/LF
** stripped; a line is one query). bench_passes() runs the caller's query
** function: first the first nWarmup lines, not counted, then whole passes
** over all lines, in file order, until at least `seconds` have passed; a
** pass that runs past `hardStop` seconds is cut short (a very slow engine
** must not stall the benchmark) and the output says so. Every engine thus
** answers the same multiset of queries, whatever its speed. Around the
** measured window it writes "<tool>: measuring" and "<tool>: done" on
** stderr (run.py samples a server's CPU time at these markers), and at the
** end one JSON object on stdout:
**   {"queries":1234,"seconds":1.0012,"rows":12000,"cut_short":false,
**    "cpu_seconds":0.9981}
** cpu_seconds is this process's CPU time (all threads, user + system) over
** the measured window: for an in-process engine, the engine's cost plus
** the loop's.
**
** Errors. A query function returns the rows it produced, or -1 after
** printing why; the first -1 ends the run (an engine that errors is never
** measured as fast) and bench_passes() returns 1 without printing JSON.
** bench_read_lines() prints the reason and returns 1 on an unreadable or
** empty file or out of memory.
**
** Everything is static inline: each driver is one translation unit and uses
** what it needs. The header
** compiles as C11 and as C++ (xapq.cc).
*/
#ifndef BENCH_FULLTEXT_PASSES_H
#define BENCH_FULLTEXT_PASSES_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

typedef struct BenchLines {
    char **az;          /* lines, NUL-terminated, owned */
    size_t *an;         /* their lengths */
    int n;
} BenchLines;

typedef struct BenchPassCfg {
    double seconds;     /* minimum measured seconds (whole passes) */
    double hardStop;    /* a pass is cut after this many seconds */
    int nWarmup;        /* lines run before measuring */
} BenchPassCfg;

/* Runs line i; returns its rows, or -1 after printing the error. */
typedef long (*BenchQueryFn)(void *ctx, int i);

static inline uint64_t bench_clock_ns(clockid_t clk) {
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void bench_free_lines(BenchLines *p) {
    for (int i = 0; i < p->n; i++) free(p->az[i]);
    free(p->az);
    free(p->an);
    memset(p, 0, sizeof *p);
}

static inline int bench_read_lines(const char *zTool, const char *zFile, BenchLines *p) {
    memset(p, 0, sizeof *p);
    FILE *f = fopen(zFile, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot open %s\n", zTool, zFile);
        return 1;
    }
    char *zLine = NULL;
    size_t nCap = 0;
    ssize_t n;
    int nAlloc = 0;
    while ((n = getline(&zLine, &nCap, f)) >= 0) {
        while (n > 0 && (zLine[n - 1] == '\n' || zLine[n - 1] == '\r')) zLine[--n] = 0;
        if (n == 0) continue;
        if (p->n == nAlloc) {
            nAlloc = nAlloc ? 2 * nAlloc : 64;
            char **az = (char **)realloc(p->az, (size_t)nAlloc * sizeof *az);
            if (az) p->az = az;
            size_t *an = (size_t *)realloc(p->an, (size_t)nAlloc * sizeof *an);
            if (an) p->an = an;
            if (!az || !an) break;
        }
        p->az[p->n] = strdup(zLine);
        if (!p->az[p->n]) break;
        p->an[p->n++] = (size_t)n;
    }
    int bErr = ferror(f) || n >= 0; /* n >= 0: left the loop on out of memory */
    free(zLine);
    fclose(f);
    if (bErr || p->n == 0) {
        fprintf(stderr, "%s: %s: %s\n", zTool, zFile,
                bErr ? "read failed (I/O error or out of memory)" : "holds no query");
        bench_free_lines(p);
        return 1;
    }
    return 0;
}

static inline int bench_passes(const char *zTool, const BenchPassCfg *c, int nLine, BenchQueryFn xQuery,
                        void *ctx) {
    for (int i = 0; i < c->nWarmup && i < nLine; i++) {
        if (xQuery(ctx, i) < 0) return 1;
    }
    uint64_t nQuery = 0, nRow = 0;
    int bCut = 0;
    fprintf(stderr, "%s: measuring\n", zTool);
    uint64_t cpu0 = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t t0 = bench_clock_ns(CLOCK_MONOTONIC);
    uint64_t tMin = t0 + (uint64_t)(c->seconds * 1e9);
    uint64_t tCut = t0 + (uint64_t)(c->hardStop * 1e9);
    uint64_t t = t0;
    while (t < tMin && !bCut) {
        for (int i = 0; i < nLine; i++) {
            long n = xQuery(ctx, i);
            if (n < 0) return 1;
            nQuery++;
            nRow += (uint64_t)n;
            t = bench_clock_ns(CLOCK_MONOTONIC);
            if (t >= tCut) {
                bCut = 1;
                break;
            }
        }
    }
    uint64_t cpu1 = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    fprintf(stderr, "%s: done\n", zTool);
    printf("{\"queries\":%" PRIu64 ",\"seconds\":%.6f,\"rows\":%" PRIu64
           ",\"cut_short\":%s,\"cpu_seconds\":%.6f}\n",
           nQuery, (double)(t - t0) / 1e9, nRow, bCut ? "true" : "false", (double)(cpu1 - cpu0) / 1e9);
    return 0;
}

/* Parses one shared option (--seconds, --warmup, --hard-stop, --k) at
** argv[*pi] with its value at argv[*pi + 1]; 1 if it was one (and *pi
** moved past the value), 0 if not. */
static inline int bench_common_opt(int argc, char **argv, int *pi, BenchPassCfg *c, int *pK) {
    const char *zOpt = argv[*pi];
    if (*pi + 1 >= argc) return 0;
    const char *zVal = argv[*pi + 1];
    if (strcmp(zOpt, "--seconds") == 0) c->seconds = strtod(zVal, NULL);
    else if (strcmp(zOpt, "--hard-stop") == 0) c->hardStop = strtod(zVal, NULL);
    else if (strcmp(zOpt, "--warmup") == 0) c->nWarmup = atoi(zVal);
    else if (strcmp(zOpt, "--k") == 0 && pK) *pK = atoi(zVal);
    else return 0;
    *pi += 2;
    return 1;
}

/* Fills in the hard stop when none was given (10 x seconds) and checks the
** settings; 0 when they are out of range. */
static inline int bench_cfg_ok(BenchPassCfg *c, int k) {
    if (c->hardStop == 0) c->hardStop = 10 * c->seconds;
    return c->seconds > 0 && c->hardStop >= c->seconds && c->nWarmup >= 0 && k >= 1 && k <= 100000;
}

#endif /* BENCH_FULLTEXT_PASSES_H */
