/* main.c — the `loupe` binary.
**
**   loupe serve [--data DIR] [--mysql ADDR:PORT] [--http ADDR:PORT]
**               [--config FILE] [--threads N] [--log-level L] [--KEY VALUE]
**   loupe --version | --help
**
** `serve` reads the configuration (defaults, then --config FILE, then the
** other flags in order), takes an exclusive lock on DATA/loupe.lock so two
** servers never share a data folder, creates the SQL engine, starts the
** MySQL and HTTP listeners and waits for SIGINT/SIGTERM. Those signals are
** blocked in every thread (the mask is set before any thread starts) and
** taken with sigwait() here, so shutdown runs in ordinary code: stop HTTP,
** stop MySQL, free the engine, release the lock, exit 0.
**
** Exit status: 0 after a clean shutdown, 1 when the server cannot start
** (the reason is logged), 2 for bad command-line arguments (usage on
** stderr).
*/
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/config.h"
#include "server/http/http.h"
#include "server/mysql/server.h"
#include "sql/session.h"
#include "table/manifest.h"
#include "util/log.h"
#include "util/memtune.h"

/* The version clients see in the handshake and in @@version. */
#define LOUPE_MYSQL_VERSION "8.0.0-loupe-" LOUPE_VERSION

static void usage(FILE *f) {
    fprintf(f,
            "usage: loupe serve [options]   run the server\n"
            "       loupe --version         print the version\n"
            "       loupe --help            this text\n"
            "\n"
            "serve options (each overrides the config file):\n"
            "  --config FILE        read settings from FILE (lines 'key = value')\n"
            "  --data DIR           data folder (default ./data)\n"
            "  --mysql ADDR:PORT    MySQL protocol listener (default 127.0.0.1:9306; port 0: any)\n"
            "  --http ADDR:PORT     HTTP listener (default 127.0.0.1:9308; port 0: any)\n"
            "  --threads N          MySQL worker threads (default: CPU count)\n"
            "  --log-level L        debug, info, warn, error or off (default info)\n"
            "  --KEY VALUE          any config key, '-' for '_': --max-connections 256,\n"
            "                       --user U, --password P, --password-sha1 HEX,\n"
            "                       --max-packet-size 16M, --connect-timeout 10,\n"
            "                       --http-threads 4, --http-max-body 32M,\n"
            "                       --binlog-flush commit|1s|none, --ort-lib PATH,\n"
            "                       --onnx-intra-threads 1, --onnx-gelu-approx 0,\n"
            "                       --embed-batch 4\n");
}

/* In sanitizer builds: ONNX Runtime (dlopen'd for embedding models) leaks a
** few bytes in its own threads at exit, with no loupe frame on the stack,
** and is built without frame pointers, so only the module can be named.
** loupe's allocations are leak-checked as always. */
#if defined(__SANITIZE_ADDRESS__)
#define LP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LP_ASAN 1
#endif
#endif
#ifdef LP_ASAN
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
    return "leak:libonnxruntime.so\n";
}
#endif

/* Maps a flag name (without "--") to its config key in zKey. */
static void flag_to_key(const char *zFlag, char *zKey, size_t nKey) {
    static const char *const azAlias[][2] = {
        {"data", "data_dir"}, {"mysql", "listen_mysql"}, {"http", "listen_http"}};
    for (size_t i = 0; i < LP_ARRAY_SIZE(azAlias); i++) {
        if (strcmp(zFlag, azAlias[i][0]) == 0) {
            snprintf(zKey, nKey, "%s", azAlias[i][1]);
            return;
        }
    }
    snprintf(zKey, nKey, "%s", zFlag);
    for (char *p = zKey; *p; p++) {
        if (*p == '-') *p = '_';
    }
}

/* Splits argv[*pi] ("--name value" or "--name=value") into name and value,
** advancing *pi past what it used. Returns 0, or -1 when the value is
** missing. zName gets the name without "--". */
static int next_flag(int argc, char **argv, int *pi, char *zName, size_t nName,
                     const char **pzVal) {
    const char *zArg = argv[*pi] + 2;
    const char *zEq = strchr(zArg, '=');
    if (zEq) {
        snprintf(zName, nName, "%.*s", (int)(zEq - zArg), zArg);
        *pzVal = zEq + 1;
        (*pi)++;
        return 0;
    }
    snprintf(zName, nName, "%s", zArg);
    if (*pi + 1 >= argc) return -1;
    *pzVal = argv[*pi + 1];
    *pi += 2;
    return 0;
}

/* Reads defaults, --config FILE, then the other flags. Returns 0, 1 (bad
** config file: logged) or 2 (bad arguments: printed). */
/* Two passes so that flags win over the file wherever --config appears on
** the command line. */
static int load_config(int argc, char **argv, LoupeConfig *cfg) {
    LpError err;
    lp_err_clear(&err);
    if (config_init(cfg, &err) != LP_OK) {
        fprintf(stderr, "loupe: %s\n", err.zMsg);
        return 1;
    }
    /* Pass 1: the config file, wherever --config appears. */
    for (int i = 0; i < argc;) {
        char zName[64];
        const char *zVal;
        if (strncmp(argv[i], "--", 2) != 0) {
            fprintf(stderr, "loupe: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
        if (next_flag(argc, argv, &i, zName, sizeof(zName), &zVal) != 0) {
            fprintf(stderr, "loupe: option --%s needs a value\n", zName);
            usage(stderr);
            return 2;
        }
        if (strcmp(zName, "config") == 0 && config_load_file(cfg, zVal, &err) != LP_OK) {
            fprintf(stderr, "loupe: %s\n", err.zMsg);
            return 1;
        }
    }
    /* Pass 2: every other flag, in order. */
    for (int i = 0; i < argc;) {
        char zName[64], zKey[64];
        const char *zVal = NULL; /* pass 1 checked that every flag has one */
        next_flag(argc, argv, &i, zName, sizeof(zName), &zVal);
        if (strcmp(zName, "config") == 0) continue;
        flag_to_key(zName, zKey, sizeof(zKey));
        if (config_set(cfg, zKey, zVal, &err) != LP_OK) {
            if (strncmp(err.zMsg, "unknown key", 11) == 0) {
                fprintf(stderr, "loupe: unknown option --%s\n", zName);
            } else {
                fprintf(stderr, "loupe: --%s: %s\n", zName, err.zMsg);
            }
            usage(stderr);
            return 2;
        }
    }
    if (config_check(cfg, &err) != LP_OK) {
        fprintf(stderr, "loupe: %s\n", err.zMsg);
        return 2;
    }
    return 0;
}

/* mkdir -p. */
static int make_dirs(const char *zPath, LpError *err) {
    /* Each prefix ending at a '/' is created in turn; EEXIST is fine,
    ** whether the prefix was there or another process raced us to it. */
    char *z = strdup(zPath);
    if (!z) return lp_err_set(err, LP_NOMEM, "out of memory");
    int rc = LP_OK;
    for (char *p = z + 1;; p++) {
        if (*p != '/' && *p != 0) continue;
        char ch = *p;
        *p = 0;
        if (mkdir(z, 0755) != 0 && errno != EEXIST) {
            rc = lp_err_set(err, LP_IOERR, "cannot create data folder %s: %s", z, strerror(errno));
            break;
        }
        if (!ch && (rc = lp_mkdir_durable(z, err)) != LP_OK) break; /* its name survives a power cut */
        *p = ch;
        if (!ch) break;
    }
    free(z);
    if (rc == LP_OK) {
        struct stat st;
        if (stat(zPath, &st) != 0 || !S_ISDIR(st.st_mode)) {
            rc = lp_err_set(err, LP_IOERR, "data folder %s is not a folder", zPath);
        }
    }
    return rc;
}

/* Takes the data folder's lock; returns its fd (kept open while serving). */
/* flock, not a pid file: the kernel drops the lock when the process dies,
** however it dies, so a crash never leaves a stale lock behind. */
static int lock_data_dir(const char *zDir, LpError *err) {
    char zPath[4096];
    snprintf(zPath, sizeof(zPath), "%s/loupe.lock", zDir);
    int fd = open(zPath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        lp_err_set(err, LP_IOERR, "cannot open %s: %s", zPath, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) {
            lp_err_set(err, LP_BUSY, "data folder %s is in use by another loupe server "
                       "(%s is locked)", zDir, zPath);
        } else {
            lp_err_set(err, LP_IOERR, "cannot lock %s: %s", zPath, strerror(errno));
        }
        close(fd);
        return -1;
    }
    /* The pid of the holder, for people; the lock is what counts. */
    char zPid[32];
    int n = snprintf(zPid, sizeof(zPid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, zPid, (size_t)n, 0) != n) {
        LOG_WARN("cannot write the pid into %s: %s", zPath, strerror(errno));
    }
    return fd;
}

/* Lifts the open-file limit to its hard maximum: every connection is a
** descriptor. */
static void raise_fd_limit(int nWant) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)nWant) {
        LOG_WARN("open file limit is %llu: fewer than the %d that max_connections needs",
                 (unsigned long long)rl.rlim_cur, nWant);
    }
}

static int cmd_serve(int argc, char **argv) {
    LoupeConfig cfg;
    int rc = load_config(argc, argv, &cfg);
    if (rc) {
        config_free(&cfg);
        return rc;
    }
    log_set_level(cfg.logLevel);

    /* Before any thread exists, so that every thread inherits the mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* A file-size limit (ulimit -f) makes writes fail with EFBIG, which
    ** the storage layer reports like a full disk, instead of killing us. */
    signal(SIGXFSZ, SIG_IGN);
    raise_fd_limit(cfg.nMaxConn + 64);

    LpError err;
    lp_err_clear(&err);
    SqlEngine *pEngine = NULL;
    MysqlServer *pMysql = NULL;
    HttpServer *pHttp = NULL;
    int fdLock = -1;
    rc = 1;
    LOG_INFO("loupe %s starting, data folder %s", LOUPE_VERSION, cfg.zDataDir);
    if (make_dirs(cfg.zDataDir, &err) != LP_OK) goto out;
    if ((fdLock = lock_data_dir(cfg.zDataDir, &err)) < 0) goto out;

    SqlEngineConfig ecfg = {
        .zDataDir = cfg.zDataDir,
        .walSync = cfg.walSync,
        .embed = {.zOrtLib = cfg.zOrtLib, .nIntraThreads = cfg.nOnnxIntra,
                  .bGeluApprox = cfg.bGeluApprox},
        .nEmbedInline = cfg.nEmbedBatch,
        .memLimit = cfg.rtMemLimit,
        .walFileBytes = cfg.walFileBytes,
        .zVersion = LOUPE_MYSQL_VERSION,
        .nMaxPacket = (uint32_t)cfg.nMaxPacket,
    };
    if (!(pEngine = sql_engine_new(&ecfg, &err))) goto out;

    MysqlServerConfig mcfg = {
        .zAddr = cfg.zMysqlHost,
        .port = cfg.mysqlPort,
        .nThreads = cfg.nThreads,
        .nMaxConn = cfg.nMaxConn,
        .nMaxPacket = cfg.nMaxPacket,
        .connectTimeout = cfg.connectTimeout,
        .zVersion = LOUPE_MYSQL_VERSION,
        .zUser = cfg.zUser,
        .aPwHash = cfg.bPassword ? cfg.aPwHash : NULL,
    };
    if (!(pMysql = mysql_server_start(pEngine, &mcfg, &err))) goto out;

    HttpConfig hcfg = {
        .zAddr = cfg.zHttpHost,
        .port = cfg.httpPort,
        .nThreads = cfg.nHttpThreads,
        .nMaxBody = cfg.nHttpMaxBody,
    };
    if (!(pHttp = http_server_start(pEngine, &hcfg, &err))) goto out;

    LOG_INFO("loupe ready: mysql port %d, http port %d", mysql_server_port(pMysql),
             http_server_port(pHttp));
    /* Everything else runs on the servers' threads; this one only waits. */
    int sig = 0;
    while (sigwait(&sigs, &sig) != 0) {
    }
    LOG_INFO("loupe: %s received, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
    rc = 0;

out:
    /* Reverse order of start-up; each stop takes NULL for "not started".
    ** The front ends go first: they hold sessions of the engine. */
    if (rc) LOG_ERROR("loupe: cannot start: %s", err.zMsg);
    http_server_stop(pHttp);
    mysql_server_stop(pMysql);
    if (pEngine) sql_engine_free(pEngine);
    if (fdLock >= 0) close(fdLock);
    if (rc == 0) LOG_INFO("loupe: stopped");
    config_free(&cfg);
    return rc;
}

int main(int argc, char **argv) {
    lp_memtune();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("loupe %s\n", LOUPE_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "serve") == 0) {
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                usage(stdout);
                return 0;
            }
        }
        return cmd_serve(argc - 2, argv + 2);
    }
    fprintf(stderr, "loupe: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
