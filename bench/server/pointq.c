/*
** pointq.c — point-query load client for the server benchmark.
**
** Opens --threads connections over the MySQL protocol (libmariadb), one per
** thread, and has each send
**     SELECT * FROM <table> WHERE id = <uniform random id in 1..max-id>
** back to back: first for --warmup seconds, whose statements are not
** counted, then for --seconds measured seconds. Every result is read in full
** (mysql_store_result) and checked: exactly one row whose `id` column holds
** the id asked for. A statement that fails or returns anything else is an
** error; errors are never counted as throughput, and pointq exits 1 when
** there was any, so a server that answers fast but wrong fails the run.
**
** Output, one JSON object on stdout:
**   {"threads":8,"seconds":10.0,"queries":123456,"qps":12345.6,"errors":0,
**    "latency_us":{"mean":..,"p50":..,"p95":..,"p99":..,"p999":..,"max":..},
**    "client_cpu_s":..}
** Latencies are per statement, send to last row freed, in microseconds.
** On stderr, "pointq: measuring" and "pointq: done" mark the measured window
** (so a driver can sample the server's CPU time over it), between error
** messages; a thread prints at most a few of those.
**
** Histogram. Each thread keeps a log-linear histogram of nanosecond
** latencies in the style of HdrHistogram: values below 128 ns get a bucket
** each; above, every power-of-two range [2^m, 2^(m+1)) is split into 64
** equal buckets, so a bucket is at most 1/64 (1.6%) wide relative to its
** value. Percentiles report a bucket's midpoint; max is exact. Threads merge
** their histograms after the run, so the hot loop takes no lock.
**
** Ids come from a per-thread xorshift64* generator seeded from --seed and
** the thread number, so a run with the same seed sends the same ids.
**
** Build: gcc -O2 -pthread pointq.c $(pkg-config --cflags --libs libmariadb)
*/
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <mysql.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define PQ_SUB_BITS 7                            /* 2^7 linear buckets at the bottom */
#define PQ_SUB (1u << PQ_SUB_BITS)               /* 128 */
#define PQ_HALF (PQ_SUB / 2)                     /* 64 buckets per power of two */
#define PQ_NBUCKET (PQ_SUB + 64 * PQ_HALF)       /* covers every uint64 value */
#define PQ_MAX_ERR_PRINT 5                       /* error messages printed per thread */

typedef struct PqConfig {
    const char *zHost;      /* server address */
    unsigned port;          /* server MySQL port */
    const char *zUser;      /* user name sent in the handshake */
    const char *zPassword;  /* password, NULL for none */
    const char *zTable;     /* table queried */
    int nThread;            /* connections, one thread each */
    double warmup;          /* seconds not measured */
    double seconds;         /* seconds measured */
    uint64_t maxId;         /* ids drawn from 1..maxId */
    uint64_t seed;          /* base seed of the id generators */
} PqConfig;

typedef struct PqThread {
    const PqConfig *pCfg;   /* shared, read-only */
    int iThread;            /* 0-based thread number */
    uint64_t rng;           /* xorshift64* state, never 0 */
    uint64_t nOk;           /* measured statements with the right answer */
    uint64_t nErr;          /* measured or warm-up statements that failed */
    uint64_t maxNs;         /* exact largest measured latency */
    long double sumNs;      /* sum of measured latencies, for the mean */
    int bConnFailed;        /* connect failed: the thread sent nothing */
    uint64_t aHist[PQ_NBUCKET]; /* measured latency histogram */
} PqThread;

static pthread_barrier_t gConnected;  /* every thread has connected (or failed) */
static pthread_barrier_t gGo;         /* main has set the window; start sending */
static uint64_t gStartNs;             /* measured window [gStartNs, gEndNs) */
static uint64_t gEndNs;
static atomic_int gStop;              /* set when a connection is lost for good */

static uint64_t pq_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* splitmix64: spreads (seed, thread) into a well-mixed non-zero state. */
static uint64_t pq_splitmix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x ? x : 1;
}

static uint64_t pq_rand(uint64_t *pState) {
    uint64_t x = *pState;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *pState = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Bucket of a latency: see "Histogram" at the top. */
static unsigned pq_bucket(uint64_t v) {
    if (v < PQ_SUB) return (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);   /* >= PQ_SUB_BITS */
    unsigned shift = msb - (PQ_SUB_BITS - 1);            /* v >> shift in [64,128) */
    return PQ_SUB + (shift - 1) * PQ_HALF + (unsigned)((v >> shift) - PQ_HALF);
}

/* Midpoint of bucket i, the inverse of pq_bucket up to the bucket width. */
static double pq_bucket_value(unsigned i) {
    if (i < PQ_SUB) return (double)i;
    unsigned shift = (i - PQ_SUB) / PQ_HALF + 1;
    uint64_t lo = (uint64_t)(PQ_HALF + (i - PQ_SUB) % PQ_HALF) << shift;
    return (double)lo + (double)(1ull << shift) / 2.0;
}

/* Value at quantile q (0 < q <= 1) of a histogram holding n values. */
static double pq_quantile(const uint64_t *aHist, uint64_t n, double q) {
    uint64_t rank = (uint64_t)(q * (double)n + 0.999999);  /* ceil, >= 1 */
    if (rank < 1) rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < PQ_NBUCKET; i++) {
        seen += aHist[i];
        if (seen >= rank) return pq_bucket_value(i);
    }
    return 0.0;
}

static void pq_report_error(PqThread *p, const char *zWhat, MYSQL *db, uint64_t id) {
    if (p->nErr <= PQ_MAX_ERR_PRINT) {
        fprintf(stderr, "pointq: thread %d, id %" PRIu64 ": %s%s%s\n", p->iThread, id, zWhat,
                db ? ": " : "", db ? mysql_error(db) : "");
    }
}

/* Runs one statement; returns 1 when the answer is exactly the row for id.
** A lost connection also sets gStop: the run cannot be measured further. */
static int pq_one(PqThread *p, MYSQL *db, uint64_t id) {
    char zSql[256];
    int n = snprintf(zSql, sizeof zSql, "SELECT * FROM %s WHERE id = %" PRIu64, p->pCfg->zTable, id);
    if (mysql_real_query(db, zSql, (unsigned long)n) != 0) {
        p->nErr++;
        pq_report_error(p, "query failed", db, id);
        unsigned e = mysql_errno(db);
        if (e == 2006 || e == 2013) atomic_store(&gStop, 1);  /* server gone / lost connection */
        return 0;
    }
    MYSQL_RES *res = mysql_store_result(db);
    if (!res) {
        p->nErr++;
        pq_report_error(p, "no result set", db, id);
        return 0;
    }
    int bOk = 0;
    const char *zWhy = "expected exactly one row";
    if (mysql_num_rows(res) == 1) {
        /* Servers order SELECT * columns differently (Sphinx puts integer
        ** attributes before strings), so find id by name. */
        unsigned nField = mysql_num_fields(res);
        MYSQL_FIELD *aField = mysql_fetch_fields(res);
        MYSQL_ROW row = mysql_fetch_row(res);
        unsigned long *aLen = mysql_fetch_lengths(res);
        zWhy = "no id column";
        for (unsigned i = 0; i < nField; i++) {
            if (strcmp(aField[i].name, "id") != 0) continue;
            zWhy = "wrong id in the row";
            if (row && row[i] && aLen[i] > 0) {
                char *zEnd;
                errno = 0;
                unsigned long long got = strtoull(row[i], &zEnd, 10);
                if (errno == 0 && zEnd == row[i] + aLen[i] && got == id) bOk = 1;
            }
            break;
        }
    }
    mysql_free_result(res);
    if (!bOk) {
        p->nErr++;
        pq_report_error(p, zWhy, NULL, id);
    }
    return bOk;
}

static void *pq_thread_main(void *pArg) {
    PqThread *p = pArg;
    const PqConfig *c = p->pCfg;
    MYSQL *db = mysql_init(NULL);
    if (db && !mysql_real_connect(db, c->zHost, c->zUser, c->zPassword, NULL, c->port, NULL, 0)) {
        fprintf(stderr, "pointq: thread %d: connect to %s:%u: %s\n", p->iThread, c->zHost, c->port,
                mysql_error(db));
        p->bConnFailed = 1;
    } else if (!db) {
        fprintf(stderr, "pointq: thread %d: mysql_init: out of memory\n", p->iThread);
        p->bConnFailed = 1;
    }
    pthread_barrier_wait(&gConnected);
    pthread_barrier_wait(&gGo);
    if (!p->bConnFailed) {
        uint64_t t = pq_now_ns();
        while (t < gEndNs && !atomic_load_explicit(&gStop, memory_order_relaxed)) {
            uint64_t id = pq_rand(&p->rng) % c->maxId + 1;
            int bOk = pq_one(p, db, id);
            uint64_t t2 = pq_now_ns();
            /* Counted when it started inside the window: the last statement
            ** may end a little after gEndNs, which the qps divisor accounts
            ** for by using each thread's actual last finish time. */
            if (t >= gStartNs && bOk) {
                uint64_t ns = t2 - t;
                p->aHist[pq_bucket(ns)]++;
                p->nOk++;
                p->sumNs += ns;
                if (ns > p->maxNs) p->maxNs = ns;
            }
            t = t2;
        }
    }
    if (db) mysql_close(db);
    return NULL;
}

static void pq_usage(FILE *f) {
    fprintf(f,
            "usage: pointq --port N --max-id N [--host H] [--user U] [--password P]\n"
            "              [--table T] [--threads N] [--warmup S] [--seconds S] [--seed N]\n"
            "Sends SELECT * FROM T WHERE id = <random 1..max-id> from N connections;\n"
            "prints throughput and latency as JSON; exits 1 on any wrong answer.\n");
}

static int pq_parse_args(int argc, char **argv, PqConfig *c) {
    static const struct option aOpt[] = {
        {"host", required_argument, 0, 'h'},     {"port", required_argument, 0, 'P'},
        {"user", required_argument, 0, 'u'},     {"password", required_argument, 0, 'p'},
        {"table", required_argument, 0, 't'},    {"threads", required_argument, 0, 'n'},
        {"warmup", required_argument, 0, 'w'},   {"seconds", required_argument, 0, 'd'},
        {"max-id", required_argument, 0, 'm'},   {"seed", required_argument, 0, 's'},
        {"help", no_argument, 0, '?'},           {0, 0, 0, 0},
    };
    *c = (PqConfig){.zHost = "127.0.0.1", .zUser = "bench", .zTable = "t", .nThread = 1,
                    .warmup = 1.0, .seconds = 5.0, .seed = 1};
    int opt;
    while ((opt = getopt_long(argc, argv, "", aOpt, NULL)) != -1) {
        switch (opt) {
        case 'h': c->zHost = optarg; break;
        case 'P': c->port = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'u': c->zUser = optarg; break;
        case 'p': c->zPassword = optarg; break;
        case 't': c->zTable = optarg; break;
        case 'n': c->nThread = atoi(optarg); break;
        case 'w': c->warmup = strtod(optarg, NULL); break;
        case 'd': c->seconds = strtod(optarg, NULL); break;
        case 'm': c->maxId = strtoull(optarg, NULL, 10); break;
        case 's': c->seed = strtoull(optarg, NULL, 10); break;
        default: pq_usage(opt == '?' ? stdout : stderr); return 0;
        }
    }
    if (optind != argc || c->port == 0 || c->port > 65535 || c->maxId == 0 || c->nThread < 1 ||
        c->nThread > 4096 || c->seconds <= 0 || c->warmup < 0) {
        pq_usage(stderr);
        return 0;
    }
    /* The table name goes into the statement verbatim: allow identifiers only. */
    for (const char *z = c->zTable; *z; z++) {
        if (!(*z == '_' || (*z >= '0' && *z <= '9') || ((*z | 0x20) >= 'a' && (*z | 0x20) <= 'z'))) {
            fprintf(stderr, "pointq: --table must be a plain identifier\n");
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv) {
    PqConfig cfg;
    if (!pq_parse_args(argc, argv, &cfg)) return 2;
    if (mysql_library_init(0, NULL, NULL) != 0) {
        fprintf(stderr, "pointq: mysql_library_init failed\n");
        return 2;
    }
    PqThread *aT = calloc((size_t)cfg.nThread, sizeof *aT);
    pthread_t *aTid = calloc((size_t)cfg.nThread, sizeof *aTid);
    if (!aT || !aTid) {
        fprintf(stderr, "pointq: out of memory\n");
        return 2;
    }
    pthread_barrier_init(&gConnected, NULL, (unsigned)cfg.nThread + 1);
    pthread_barrier_init(&gGo, NULL, (unsigned)cfg.nThread + 1);
    for (int i = 0; i < cfg.nThread; i++) {
        aT[i].pCfg = &cfg;
        aT[i].iThread = i;
        aT[i].rng = pq_splitmix(cfg.seed * 1000003u + (uint64_t)i);
        int rc = pthread_create(&aTid[i], NULL, pq_thread_main, &aT[i]);
        if (rc != 0) {
            /* The barriers count on every thread: a missing one would hang. */
            fprintf(stderr, "pointq: pthread_create: %s\n", strerror(rc));
            return 2;
        }
    }
    pthread_barrier_wait(&gConnected);
    uint64_t now = pq_now_ns();
    gStartNs = now + (uint64_t)(cfg.warmup * 1e9);
    gEndNs = gStartNs + (uint64_t)(cfg.seconds * 1e9);
    pthread_barrier_wait(&gGo);
    /* Client CPU is sampled over the measured window only. */
    struct timespec tsStart = {.tv_sec = (time_t)(gStartNs / 1000000000u),
                               .tv_nsec = (long)(gStartNs % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &tsStart, NULL) == EINTR) {}
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    /* Markers for a driver that samples the server's CPU time over the
    ** measured window (bench/server/run.py). */
    fprintf(stderr, "pointq: measuring\n");
    for (int i = 0; i < cfg.nThread; i++) pthread_join(aTid[i], NULL);
    uint64_t tDone = pq_now_ns();
    getrusage(RUSAGE_SELF, &ru1);
    fprintf(stderr, "pointq: done\n");

    /* Merge the per-thread results. */
    static uint64_t aHist[PQ_NBUCKET];
    uint64_t nOk = 0, nErr = 0, maxNs = 0;
    long double sumNs = 0;
    int nConnFailed = 0;
    for (int i = 0; i < cfg.nThread; i++) {
        for (unsigned b = 0; b < PQ_NBUCKET; b++) aHist[b] += aT[i].aHist[b];
        nOk += aT[i].nOk;
        nErr += aT[i].nErr;
        sumNs += aT[i].sumNs;
        if (aT[i].maxNs > maxNs) maxNs = aT[i].maxNs;
        nConnFailed += aT[i].bConnFailed;
    }
    /* The window closes at gEndNs but the statements in flight then are
    ** counted, so divide by the time until the last of them finished. */
    double elapsed = (tDone > gStartNs ? (double)(tDone - gStartNs) : 0.0) / 1e9;
    double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
                 (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
    printf("{\"threads\":%d,\"seconds\":%.3f,\"queries\":%" PRIu64 ",\"qps\":%.1f,\"errors\":%" PRIu64
           ",\"connect_failures\":%d,\"latency_us\":{\"mean\":%.2f,\"p50\":%.2f,\"p95\":%.2f,"
           "\"p99\":%.2f,\"p999\":%.2f,\"max\":%.2f},\"client_cpu_s\":%.3f}\n",
           cfg.nThread, elapsed, nOk, elapsed > 0 ? (double)nOk / elapsed : 0.0, nErr, nConnFailed,
           nOk ? (double)(sumNs / nOk) / 1e3 : 0.0, pq_quantile(aHist, nOk, 0.50) / 1e3,
           pq_quantile(aHist, nOk, 0.95) / 1e3, pq_quantile(aHist, nOk, 0.99) / 1e3,
           pq_quantile(aHist, nOk, 0.999) / 1e3, (double)maxNs / 1e3, cpu);
    free(aT);
    free(aTid);
    mysql_library_end();
    int bFailed = nErr > 0 || nConnFailed > 0 || nOk == 0 || atomic_load(&gStop);
    return bFailed ? 1 : 0;
}
