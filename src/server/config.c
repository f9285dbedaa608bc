/* config.c — see config.h. */
#include "server/config.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "server/mysql/packet.h"
#include "table/wal.h"
#include "util/log.h"

/* The default for threads: one worker per online CPU. */
static int cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

/* Replaces *pz by a copy of zVal; *pz is unchanged when out of memory. */
static int set_str(char **pz, const char *zVal, LpError *err) {
    char *z = strdup(zVal);
    if (!z) return lp_err_set(err, LP_NOMEM, "out of memory");
    free(*pz);
    *pz = z;
    return LP_OK;
}

int config_init(LoupeConfig *c, LpError *err) {
    memset(c, 0, sizeof(*c));
    c->mysqlPort = 9306;
    c->httpPort = 9308;
    c->nThreads = cpu_count();
    c->nMaxConn = 1024;
    c->nMaxPacket = 16u << 20;
    c->connectTimeout = 10;
    c->logLevel = LOG_LEVEL_INFO;
    c->nHttpThreads = 4;
    c->nHttpMaxBody = 32u << 20;
    c->nOnnxIntra = 1;
    c->nEmbedBatch = 4;
    if (set_str(&c->zDataDir, "./data", err) || set_str(&c->zMysqlHost, "127.0.0.1", err) ||
        set_str(&c->zHttpHost, "127.0.0.1", err)) {
        config_free(c);
        return LP_NOMEM;
    }
    return LP_OK;
}

void config_free(LoupeConfig *c) {
    free(c->zDataDir);
    free(c->zOrtLib);
    free(c->zMysqlHost);
    free(c->zHttpHost);
    free(c->zUser);
    OPENSSL_cleanse(c->aPwHash, sizeof(c->aPwHash));
    memset(c, 0, sizeof(*c));
}

/* A decimal integer in [lo, hi], nothing else. */
static int parse_int(const char *z, long lo, long hi, long *pv) {
    char *zEnd;
    errno = 0;
    long v = strtol(z, &zEnd, 10);
    if (errno || zEnd == z || *zEnd || v < lo || v > hi) return LP_BADINPUT;
    *pv = v;
    return LP_OK;
}

int config_parse_size(const char *z, size_t *pn, LpError *err) {
    /* strtoull would accept "-1" (as a huge number) and leading spaces:
    ** demand a digit first. */
    char *zEnd;
    errno = 0;
    if (!isdigit((unsigned char)z[0])) goto bad;
    unsigned long long v = strtoull(z, &zEnd, 10);
    if (errno) goto bad;
    int shift = 0;
    switch (toupper((unsigned char)*zEnd)) {
    case 0: break;
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    default: goto bad;
    }
    if (shift) {
        zEnd++;
        if (toupper((unsigned char)*zEnd) == 'B') zEnd++;   /* "16MB" reads as "16M" */
    }
    if (*zEnd || v > (SIZE_MAX >> shift)) goto bad;
    *pn = (size_t)(v << shift);
    return LP_OK;
bad:
    return lp_err_set(err, LP_BADINPUT, "'%s' is not a size (a number with an optional K, M "
                      "or G suffix)", z);
}

int config_parse_addr(const char *z, const char *zDefaultHost, char **pzHost, int *pPort,
                      LpError *err) {
    const char *zHost = zDefaultHost;
    size_t nHost = strlen(zDefaultHost);
    const char *zPort;
    /* The port is after the last ':'; an IPv6 host has colons of its own
    ** and must be bracketed, or "::1:5" would be ambiguous. */
    if (z[0] == '[') {
        /* [IPv6]:PORT */
        const char *zClose = strchr(z, ']');
        if (!zClose || zClose[1] != ':') goto bad;
        zHost = z + 1;
        nHost = (size_t)(zClose - zHost);
        zPort = zClose + 2;
    } else {
        const char *zColon = strrchr(z, ':');
        if (zColon && memchr(z, ':', (size_t)(zColon - z))) goto bad;  /* bare IPv6 */
        if (zColon) {
            if (zColon > z) {
                zHost = z;
                nHost = (size_t)(zColon - z);
            }
            zPort = zColon + 1;
        } else {
            zPort = z;
        }
    }
    long port;
    if (nHost == 0 || parse_int(zPort, 0, 65535, &port) != LP_OK) goto bad;
    char *zCopy = strndup(zHost, nHost);
    if (!zCopy) return lp_err_set(err, LP_NOMEM, "out of memory");
    free(*pzHost);
    *pzHost = zCopy;
    *pPort = (int)port;
    return LP_OK;
bad:
    return lp_err_set(err, LP_BADINPUT, "'%s' is not an address (HOST:PORT, [IPV6]:PORT or "
                      "PORT, with a port from 0 to 65535)", z);
}

/* The value of one hex digit, or -1. */
static int hex_nibble(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* Integer-valued keys and their ranges. */
typedef struct IntKey {
    const char *zKey;
    size_t off;         /* offsetof the int in LoupeConfig */
    long lo, hi;
} IntKey;

static const IntKey aIntKey[] = {
    {"threads", offsetof(LoupeConfig, nThreads), 1, 1024},
    {"max_connections", offsetof(LoupeConfig, nMaxConn), 1, 1000000},
    {"connect_timeout", offsetof(LoupeConfig, connectTimeout), 1, 3600},
    {"http_threads", offsetof(LoupeConfig, nHttpThreads), 1, 1024},
    {"onnx_intra_threads", offsetof(LoupeConfig, nOnnxIntra), 0, 1024},
    {"embed_batch", offsetof(LoupeConfig, nEmbedBatch), 1, 100000},
};

/* The one message shape for a rejected value (the file loader prefixes
** "FILE:LINE: "). */
static int bad_value(LpError *err, const char *zKey, const char *zVal, const char *zWhy) {
    return lp_err_set(err, LP_BADINPUT, "bad value for '%s': '%s' (%s)", zKey, zVal, zWhy);
}

int config_set(LoupeConfig *c, const char *zKey, const char *zVal, LpError *err) {
    LpError e2;
    lp_err_clear(&e2);
    for (size_t i = 0; i < LP_ARRAY_SIZE(aIntKey); i++) {
        if (strcmp(zKey, aIntKey[i].zKey) != 0) continue;
        long v;
        if (parse_int(zVal, aIntKey[i].lo, aIntKey[i].hi, &v) != LP_OK) {
            char zWhy[80];
            snprintf(zWhy, sizeof(zWhy), "expected an integer from %ld to %ld", aIntKey[i].lo,
                     aIntKey[i].hi);
            return bad_value(err, zKey, zVal, zWhy);
        }
        *(int *)((char *)c + aIntKey[i].off) = (int)v;
        return LP_OK;
    }
    if (strcmp(zKey, "onnx_gelu_approx") == 0) {
        if (!strcmp(zVal, "1") || !strcasecmp(zVal, "on") || !strcasecmp(zVal, "true")) {
            c->bGeluApprox = 1;
        } else if (!strcmp(zVal, "0") || !strcasecmp(zVal, "off") || !strcasecmp(zVal, "false")) {
            c->bGeluApprox = 0;
        } else {
            return bad_value(err, zKey, zVal, "expected 0 or 1");
        }
        return LP_OK;
    }
    if (strcmp(zKey, "ort_lib") == 0) {
        if (!zVal[0]) return bad_value(err, zKey, zVal, "empty");
        return set_str(&c->zOrtLib, zVal, err);
    }
    if (strcmp(zKey, "binlog_flush") == 0) {
        int v = wal_sync_parse(zVal);
        if (v < 0) return bad_value(err, zKey, zVal, "expected commit, 1s or none");
        c->walSync = v;
        return LP_OK;
    }
    if (strcmp(zKey, "data_dir") == 0) {
        if (!zVal[0]) return bad_value(err, zKey, zVal, "empty");
        return set_str(&c->zDataDir, zVal, err);
    }
    /* A bare port (":9306" or "9306") keeps the host already configured. */
    if (strcmp(zKey, "listen_mysql") == 0 || strcmp(zKey, "listen_http") == 0) {
        int bMysql = zKey[7] == 'm';
        int rc = config_parse_addr(zVal, bMysql ? c->zMysqlHost : c->zHttpHost,
                                   bMysql ? &c->zMysqlHost : &c->zHttpHost,
                                   bMysql ? &c->mysqlPort : &c->httpPort, &e2);
        if (rc == LP_BADINPUT) return bad_value(err, zKey, zVal, "expected HOST:PORT");
        if (rc) return lp_err_set(err, rc, "%s", e2.zMsg);
        return LP_OK;
    }
    if (strcmp(zKey, "rt_mem_limit") == 0) {
        size_t n;
        if (config_parse_size(zVal, &n, &e2) != LP_OK || n < 65536) {
            return bad_value(err, zKey, zVal, "expected a size of at least 64K, such as 128M");
        }
        c->rtMemLimit = n;
        return LP_OK;
    }
    if (strcmp(zKey, "binlog_max_log_size") == 0) {
        size_t n;
        if (config_parse_size(zVal, &n, &e2) != LP_OK) {
            return bad_value(err, zKey, zVal, "expected a size such as 16M (0: a new log file at every flush)");
        }
        c->walFileBytes = n ? n : 1;
        return LP_OK;
    }
    if (strcmp(zKey, "max_packet_size") == 0 || strcmp(zKey, "http_max_body") == 0) {
        size_t n;
        if (config_parse_size(zVal, &n, &e2) != LP_OK || n < 1024 || n > ((size_t)1 << 30)) {
            return bad_value(err, zKey, zVal, "expected a size from 1K to 1G");
        }
        if (zKey[0] == 'm') c->nMaxPacket = n;
        else c->nHttpMaxBody = n;
        return LP_OK;
    }
    if (strcmp(zKey, "log_level") == 0) {
        int level = log_level_parse(zVal);
        if (level < 0) return bad_value(err, zKey, zVal, "expected debug, info, warn, error or off");
        c->logLevel = level;
        return LP_OK;
    }
    if (strcmp(zKey, "user") == 0) {
        if (!zVal[0]) return bad_value(err, zKey, zVal, "empty");
        return set_str(&c->zUser, zVal, err);
    }
    if (strcmp(zKey, "password") == 0) {
        /* An empty password means "none": the client sends no token. */
        c->bPassword = zVal[0] != 0;
        memset(c->aPwHash, 0, sizeof(c->aPwHash));
        if (c->bPassword && mysql_native_hash(zVal, strlen(zVal), c->aPwHash) != LP_OK) {
            return lp_err_set(err, LP_NOMEM, "out of memory hashing the password");
        }
        return LP_OK;
    }
    if (strcmp(zKey, "password_sha1") == 0) {
        /* MySQL's PASSWORD() form "*HEX" is accepted too. */
        const char *z = zVal[0] == '*' ? zVal + 1 : zVal;
        uint8_t a[20];
        /* The value is not echoed in errors: it is as good as a password
        ** against this server. */
        if (strlen(z) != 40) return bad_value(err, zKey, "...", "expected 40 hex digits");
        for (int i = 0; i < 20; i++) {
            int hi = hex_nibble(z[2 * i]), lo = hex_nibble(z[2 * i + 1]);
            if (hi < 0 || lo < 0) return bad_value(err, zKey, "...", "expected 40 hex digits");
            a[i] = (uint8_t)(hi << 4 | lo);
        }
        memcpy(c->aPwHash, a, sizeof(a));
        c->bPassword = 1;
        return LP_OK;
    }
    return lp_err_set(err, LP_BADINPUT, "unknown key '%s'", zKey);
}

int config_check(const LoupeConfig *c, LpError *err) {
    if (c->bPassword && !c->zUser) {
        return lp_err_set(err, LP_BADINPUT, "a password is configured but no user: set user too");
    }
    return LP_OK;
}

/* Strips leading and trailing whitespace in place. */
static char *trim(char *z) {
    while (isspace((unsigned char)*z)) z++;
    size_t n = strlen(z);
    while (n > 0 && isspace((unsigned char)z[n - 1])) z[--n] = 0;
    return z;
}

/* Parses one line in place; *pzKey is NULL for a blank or comment line. */
static int parse_line(char *zLine, char **pzKey, char **pzVal, LpError *err) {
    *pzKey = NULL;
    char *z = trim(zLine);
    if (!z[0] || z[0] == '#') return LP_OK;
    char *zEq = strchr(z, '=');
    if (!zEq) return lp_err_set(err, LP_BADINPUT, "expected 'key = value'");
    *zEq = 0;
    char *zKey = trim(z);
    char *zVal = trim(zEq + 1);
    if (!zKey[0]) return lp_err_set(err, LP_BADINPUT, "expected 'key = value'");
    if (zVal[0] == '"') {
        char *zClose = strchr(zVal + 1, '"');
        if (!zClose) return lp_err_set(err, LP_BADINPUT, "unterminated quote in '%s'", zKey);
        char *zRest = zClose + 1;
        while (isspace((unsigned char)*zRest)) zRest++;
        if (*zRest && *zRest != '#') {
            return lp_err_set(err, LP_BADINPUT, "text after the quoted value of '%s'", zKey);
        }
        *zClose = 0;
        zVal++;
    } else {
        /* A '#' after whitespace starts a trailing comment. */
        for (char *p = zVal; *p; p++) {
            if (*p == '#' && (p == zVal || isspace((unsigned char)p[-1]))) {
                *p = 0;
                break;
            }
        }
        zVal = trim(zVal);
    }
    *pzKey = zKey;
    *pzVal = zVal;
    return LP_OK;
}

int config_load_file(LoupeConfig *c, const char *zPath, LpError *err) {
    FILE *f = fopen(zPath, "r");
    if (!f) return lp_err_set(err, LP_IOERR, "cannot read config file %s: %s", zPath, strerror(errno));
    char *zLine = NULL;
    size_t nAlloc = 0;
    int iLine = 0;
    int rc = LP_OK;
    LpError e2;
    lp_err_clear(&e2);
    while (getline(&zLine, &nAlloc, f) >= 0) {
        char *zKey, *zVal;
        iLine++;
        rc = parse_line(zLine, &zKey, &zVal, &e2);
        if (rc == LP_OK && zKey) rc = config_set(c, zKey, zVal, &e2);
        if (rc) {
            lp_err_set(err, rc, "%s:%d: %s", zPath, iLine, e2.zMsg);
            break;
        }
    }
    if (rc == LP_OK && ferror(f)) {
        rc = lp_err_set(err, LP_IOERR, "error reading config file %s", zPath);
    }
    /* The line may have held a cleartext password. */
    if (zLine) OPENSSL_cleanse(zLine, nAlloc);
    free(zLine);
    fclose(f);
    return rc;
}
