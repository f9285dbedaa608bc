/*
** config.h — the server's configuration: defaults, a config file, then
** command-line flags, each overriding the one before.
**
** Contract.
**  - config_init() fills every setting with its default. config_set()
**    applies one `key = value` setting (the file and the flags go through
**    it, so both accept the same keys and values). config_load_file()
**    reads a file of such lines; `#` starts a comment (at the start of a
**    line, or after whitespace), blank lines are skipped, a value may be
**    put in double quotes to keep '#' or surrounding spaces. An unknown
**    key or a bad value is LP_BADINPUT naming the file, line and key.
**    config_check() validates the whole (e.g. a password needs a user).
**  - Keys (default):
**      data_dir (./data)              listen_mysql (127.0.0.1:9306)
**      listen_http (127.0.0.1:9308)   user, password, password_sha1 (none)
**      threads (CPU count)            max_connections (1024)
**      max_packet_size (16M)          connect_timeout (10, seconds)
**      log_level (info)               http_threads (4)
**      http_max_body (32M)            binlog_flush (commit)
**      ort_lib (LOUPE_ORT_LIB, else vendor/onnxruntime/libonnxruntime.so.1)
**      onnx_intra_threads (1)         onnx_gelu_approx (0)
**      embed_batch (4)                binlog_max_log_size (16M)
**    Addresses are HOST:PORT, [IPV6]:PORT, or :PORT / PORT for the default
**    host; port 0 means any free port. Sizes take K, M, G suffixes (powers
**    of 1024). `password` is hashed at once and not kept:
**    only SHA1(SHA1(password)) is stored, which is also what
**    `password_sha1` gives directly, as 40 hex digits.
**  - config_free() releases the strings; the struct may then be reused
**    after config_init().
**
** Thread safety: none; configuration is read once at start-up.
*/
#ifndef LP_SERVER_CONFIG_H
#define LP_SERVER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct LoupeConfig {
    char *zDataDir;         /* data folder */
    char *zMysqlHost;       /* MySQL listener host (no brackets for IPv6) */
    int mysqlPort;          /* its port; 0 = any free port */
    char *zHttpHost;        /* HTTP listener host */
    int httpPort;           /* its port; 0 = any free port */
    char *zUser;            /* required user name, or NULL: no authentication */
    int bPassword;          /* aPwHash holds a password hash */
    uint8_t aPwHash[20];    /* SHA1(SHA1(password)) */
    int nThreads;           /* MySQL worker threads */
    int nMaxConn;           /* max simultaneous MySQL connections */
    size_t nMaxPacket;      /* max MySQL packet payload, bytes */
    int connectTimeout;     /* seconds to complete the MySQL handshake */
    int logLevel;           /* LOG_LEVEL_* */
    int nHttpThreads;       /* HTTP worker threads */
    size_t nHttpMaxBody;    /* max HTTP request body, bytes */
    int walSync;            /* binlog_flush: WalSync (commit, 1s, none) */
    char *zOrtLib;          /* ort_lib: ONNX Runtime library, or NULL (default) */
    int nOnnxIntra;         /* onnx_intra_threads per model session (0 = all CPUs) */
    int bGeluApprox;        /* onnx_gelu_approx */
    int nEmbedBatch;        /* embed_batch: rows a write embeds inline */
    size_t rtMemLimit;      /* rt_mem_limit: default RAM segment size before a flush (0: 128M) */
    uint64_t walFileBytes;  /* binlog_max_log_size: CatalogConfig.walFileBytes (0: 16M;
                            ** the key's 0, a new file at every flush, is stored as 1) */
} LoupeConfig;

/* Defaults. LP_NOMEM when the default strings cannot be allocated. */
int config_init(LoupeConfig *c, LpError *err);
/* Applies one setting. LP_BADINPUT ("unknown key 'x'" or "bad value for
** 'x': ..."), LP_NOMEM. */
int config_set(LoupeConfig *c, const char *zKey, const char *zVal, LpError *err);
/* Applies every setting in the file. LP_IOERR when it cannot be read,
** LP_BADINPUT ("FILE:LINE: ...") on the first bad line. */
int config_load_file(LoupeConfig *c, const char *zPath, LpError *err);
/* Checks settings that depend on each other. LP_BADINPUT. */
int config_check(const LoupeConfig *c, LpError *err);
void config_free(LoupeConfig *c);

/* Splits "HOST:PORT" (see above) into a malloc'd host and a port; a
** missing host gives zDefaultHost. LP_BADINPUT or LP_NOMEM. */
int config_parse_addr(const char *z, const char *zDefaultHost, char **pzHost, int *pPort,
                      LpError *err);
/* Parses a size with an optional K/M/G suffix. LP_BADINPUT. */
int config_parse_size(const char *z, size_t *pn, LpError *err);

#endif /* LP_SERVER_CONFIG_H */
