/*
** driver.h — what the vector benchmark's C and C++ drivers share: fvecs
** loading, the clock, /proc memory figures, and the command loop.
**
** The protocol (bench/vector/run.py is the other end). A driver is
** started as
**     <driver> --base B.fvecs --queries Q.fvecs --metric l2|cosine
**              --M 16 --ef-construction 200 --seed S
** loads both files and prints one JSON line {"ready": ...}. Then it reads
** commands from stdin, one a line, and answers each with one JSON line on
** stdout (an error is {"error": "..."} and the driver carries on):
**     build T
**         drops the index it holds, builds a new one over every base row
**         from T threads and reports build_s (wall), build_cpu_s (the
**         process's CPU time, all threads), index_bytes (the library's
**         own accounting, or computed from its layout) and the resident
**         memory before and after (rss_before_mib, rss_after_mib);
**     query K EF SECONDS OUT
**         one thread, one query at a time: an untimed warm-up over the
**         first 100 queries, then whole passes over every query until
**         SECONDS have passed (at least one pass); the first timed pass's
**         result rows go to OUT as int32 nq x K (-1 where fewer came
**         back); reports queries, seconds, qps (and what the engine's
**         xQueryNote adds);
**     stats
**         peak_rss_mib (VmHWM), rss_mib;
**     quit
** The engine supplies the DriverOps below; everything else is here, so
** the engines are timed by the same loop. Header-only (static functions),
** included by one C file and one C++ file.
*/
#ifndef BENCH_VECTOR_DRIVER_H
#define BENCH_VECTOR_DRIVER_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct DriverData {
    float *aBase;               /* n x dims, row-major, as read */
    float *aQuery;              /* nq x dims */
    uint32_t n, nq, dims;
    int cosine;                 /* metric cosine (else l2) */
    int M, efConstruction;
    uint64_t seed;
} DriverData;

typedef struct DriverOps {
    /* Frees the index held, if any. */
    void (*xDrop)(void *pEng);
    /* Builds over every base row from nThread threads (no index is held);
    ** sets *pnByte. Returns 0, or -1 with a message in zErr. */
    int (*xBuild)(void *pEng, const DriverData *d, int nThread, size_t *pnByte, char *zErr, size_t nErr);
    /* The k nearest rows (base row numbers) to q at beam width ef into
    ** aRow (room for k); returns how many, or -1 with zErr set. */
    int (*xSearch)(void *pEng, const float *q, int k, int ef, int32_t *aRow, char *zErr, size_t nErr);
    /* Optional (NULL: none): extra JSON members for a `query` reply, about
    ** the searches since the last call (e.g. `, "exact_path": 3`), into z. */
    void (*xQueryNote)(void *pEng, char *z, size_t n);
} DriverOps;

static double drv_clock(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double drv_now(void) {
    return drv_clock(CLOCK_MONOTONIC);
}

/* A "VmRSS:"/"VmHWM:" figure of this process in MiB, from /proc. */
static double drv_proc_mib(const char *zKey) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double v = 0;
    size_t nKey = strlen(zKey);
    if (!f) return 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, zKey, nKey) == 0) {
            v = strtod(line + nKey, NULL) / 1024.0;
            break;
        }
    }
    fclose(f);
    return v;
}

/* An fvecs file into a malloc'd n x d array; 0 or -1 (message on stderr). */
static int drv_read_fvecs(const char *zPath, float **paOut, uint32_t *pn, uint32_t *pd) {
    FILE *f = fopen(zPath, "rb");
    int32_t d = 0;
    long size;
    size_t row, n, i;
    float *a;
    if (!f || fread(&d, 4, 1, f) != 1 || d <= 0) {
        fprintf(stderr, "driver: cannot read %s: %s\n", zPath, f ? "bad header" : strerror(errno));
        if (f) fclose(f);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    row = 4 + 4 * (size_t)d;
    if (size <= 0 || (size_t)size % row != 0) {
        fprintf(stderr, "driver: %s: size %ld is not a whole number of %d-d rows\n", zPath, size, d);
        fclose(f);
        return -1;
    }
    n = (size_t)size / row;
    a = (float *)malloc(n * (size_t)d * sizeof(float));
    if (!a) {
        fprintf(stderr, "driver: out of memory reading %s\n", zPath);
        fclose(f);
        return -1;
    }
    for (i = 0; i < n; i++) {
        int32_t di;
        if (fread(&di, 4, 1, f) != 1 || di != d || fread(a + i * (size_t)d, 4, (size_t)d, f) != (size_t)d) {
            fprintf(stderr, "driver: %s: row %zu is short or of another length\n", zPath, i);
            free(a);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    *paOut = a;
    *pn = (uint32_t)n;
    *pd = (uint32_t)d;
    return 0;
}

/* Parses the command line and loads the data; 0 or -1 (usage on stderr). */
static int drv_load(int argc, char **argv, DriverData *d) {
    const char *zBase = NULL, *zQuery = NULL, *zMetric = "l2";
    uint32_t qd = 0;
    int i;
    memset(d, 0, sizeof *d);
    d->M = 16;
    d->efConstruction = 200;
    d->seed = 42;
    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--base") == 0) zBase = argv[i + 1];
        else if (strcmp(argv[i], "--queries") == 0) zQuery = argv[i + 1];
        else if (strcmp(argv[i], "--metric") == 0) zMetric = argv[i + 1];
        else if (strcmp(argv[i], "--M") == 0) d->M = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--ef-construction") == 0) d->efConstruction = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0) d->seed = strtoull(argv[i + 1], NULL, 10);
        else break;
    }
    if (i != argc || !zBase || !zQuery || (strcmp(zMetric, "l2") && strcmp(zMetric, "cosine")) || d->M < 2 ||
        d->efConstruction < 1) {
        fprintf(stderr, "usage: %s --base B.fvecs --queries Q.fvecs [--metric l2|cosine] [--M 16] "
                        "[--ef-construction 200] [--seed 42]\n", argv[0]);
        return -1;
    }
    d->cosine = strcmp(zMetric, "cosine") == 0;
    if (drv_read_fvecs(zBase, &d->aBase, &d->n, &d->dims) != 0) return -1;
    if (drv_read_fvecs(zQuery, &d->aQuery, &d->nq, &qd) != 0) return -1;
    if (qd != d->dims) {
        fprintf(stderr, "driver: queries are %u-d, base %u-d\n", qd, d->dims);
        return -1;
    }
    return 0;
}

static void drv_error(const char *zMsg) {
    printf("{\"error\": \"");
    for (; *zMsg; zMsg++) {
        if (*zMsg == '"' || *zMsg == '\\') putchar('\\');
        putchar(*zMsg >= ' ' ? *zMsg : ' ');
    }
    printf("\"}\n");
    fflush(stdout);
}

/* One `query` command; see the header. */
static void drv_query(void *pEng, const DriverOps *ops, const DriverData *d, int k, int ef, double seconds,
                      const char *zOut) {
    /* aRow keeps the first timed pass's rows; later passes write to aScratch. */
    int32_t *aRow = (int32_t *)malloc(((size_t)d->nq + 1) * (size_t)k * sizeof(int32_t)), *aScratch;
    char zErr[256], zNote[256];
    uint32_t i, nWarm = d->nq < 100 ? d->nq : 100;
    uint64_t nDone = 0;
    int pass;
    double t0, elapsed;
    FILE *f;
    if (!aRow) {
        drv_error("out of memory");
        return;
    }
    aScratch = aRow + (size_t)d->nq * k;
    for (i = 0; i < nWarm; i++) {
        if (ops->xSearch(pEng, d->aQuery + (size_t)i * d->dims, k, ef, aRow, zErr, sizeof zErr) < 0) {
            drv_error(zErr);
            free(aRow);
            return;
        }
    }
    t0 = drv_now();
    for (pass = 0;; pass++) {
        for (i = 0; i < d->nq; i++) {
            int32_t *out = pass == 0 ? aRow + (size_t)i * k : aScratch;
            int nHit = ops->xSearch(pEng, d->aQuery + (size_t)i * d->dims, k, ef, out, zErr, sizeof zErr);
            if (nHit < 0) {
                drv_error(zErr);
                free(aRow);
                return;
            }
            if (pass == 0) {
                int j;
                for (j = nHit; j < k; j++) out[j] = -1;
            }
        }
        nDone += d->nq;
        elapsed = drv_now() - t0;
        if (elapsed >= seconds) break;
    }
    f = fopen(zOut, "wb");
    if (f) {
        int bad = fwrite(aRow, sizeof(int32_t), (size_t)d->nq * k, f) != (size_t)d->nq * k;
        if (fclose(f) != 0 || bad) f = NULL;
    }
    if (!f) {
        drv_error("cannot write the result file");
        free(aRow);
        return;
    }
    free(aRow);
    zNote[0] = 0;
    if (ops->xQueryNote) ops->xQueryNote(pEng, zNote, sizeof zNote);
    printf("{\"queries\": %llu, \"seconds\": %.6f, \"qps\": %.1f%s}\n", (unsigned long long)nDone, elapsed,
           (double)nDone / elapsed, zNote);
    fflush(stdout);
}

/* The command loop; returns main's exit status. */
static int drv_main(void *pEng, const DriverOps *ops, const DriverData *d, const char *zVersion) {
    char line[4096];
    int built = 0;
    printf("{\"ready\": true, \"n\": %u, \"dims\": %u, \"queries\": %u, \"version\": \"%s\", "
           "\"rss_mib\": %.1f}\n", d->n, d->dims, d->nq, zVersion, drv_proc_mib("VmRSS:"));
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        char zOut[4000];
        int t, k, ef;
        double seconds;
        if (sscanf(line, "build %d", &t) == 1) {
            size_t nByte = 0;
            char zErr[256];
            double rss0, t0, cpu0, dt;
            /* The baseline is taken with no index held. */
            ops->xDrop(pEng);
            built = 0;
            rss0 = drv_proc_mib("VmRSS:");
            cpu0 = drv_clock(CLOCK_PROCESS_CPUTIME_ID);
            t0 = drv_now();
            if (ops->xBuild(pEng, d, t, &nByte, zErr, sizeof zErr) != 0) {
                drv_error(zErr);
                continue;
            }
            dt = drv_now() - t0;
            built = 1;
            printf("{\"threads\": %d, \"build_s\": %.3f, \"build_cpu_s\": %.3f, \"index_bytes\": %zu, "
                   "\"rss_before_mib\": %.1f, \"rss_after_mib\": %.1f}\n", t, dt,
                   drv_clock(CLOCK_PROCESS_CPUTIME_ID) - cpu0, nByte, rss0, drv_proc_mib("VmRSS:"));
            fflush(stdout);
        } else if (sscanf(line, "query %d %d %lf %3999s", &k, &ef, &seconds, zOut) == 4) {
            if (!built || k < 1) drv_error(built ? "k must be >= 1" : "no index: build first");
            else drv_query(pEng, ops, d, k, ef, seconds, zOut);
        } else if (strncmp(line, "stats", 5) == 0) {
            printf("{\"peak_rss_mib\": %.1f, \"rss_mib\": %.1f}\n", drv_proc_mib("VmHWM:"), drv_proc_mib("VmRSS:"));
            fflush(stdout);
        } else if (strncmp(line, "quit", 4) == 0) {
            return 0;
        } else {
            drv_error("unknown command");
        }
    }
    return 0;
}

#endif /* BENCH_VECTOR_DRIVER_H */
