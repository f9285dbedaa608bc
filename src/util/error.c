/* error.c — see error.h. */
#include "util/error.h"

#include <stdio.h>
#include <string.h>

void lp_err_clear(LpError *err) {
    if (!err) return;
    err->code = LP_OK;
    err->detail = 0;
    err->pos = -1;
    err->zMsg[0] = 0;
}

static void err_vset(LpError *err, int code, int64_t pos, const char *zFmt, va_list ap) {
    /* Formatted aside first: an argument may be err->zMsg itself (a
    ** message rewritten with more context). */
    char z[LP_ERRMSG_MAX];
    vsnprintf(z, sizeof(z), zFmt, ap);
    memcpy(err->zMsg, z, sizeof(err->zMsg));
    err->code = code;
    err->detail = 0;
    err->pos = pos;
}

int lp_err_set(LpError *err, int code, const char *zFmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, zFmt);
        err_vset(err, code, -1, zFmt, ap);
        va_end(ap);
    }
    return code;
}

int lp_err_setpos(LpError *err, int code, int64_t pos, const char *zFmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, zFmt);
        err_vset(err, code, pos, zFmt, ap);
        va_end(ap);
    }
    return code;
}

int lp_err_prefix(LpError *err, const char *zFmt, ...) {
    if (!err) return LP_INTERNAL;
    char zPre[LP_ERRMSG_MAX];
    char zOld[LP_ERRMSG_MAX];
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(zPre, sizeof(zPre), zFmt, ap);
    va_end(ap);
    memcpy(zOld, err->zMsg, sizeof(zOld));
    /* Build "<prefix>: <old>" by hand: truncation is intended. */
    size_t n = strlen(zPre);
    if (n > sizeof(err->zMsg) - 3) n = sizeof(err->zMsg) - 3;
    memcpy(err->zMsg, zPre, n);
    err->zMsg[n++] = ':';
    err->zMsg[n++] = ' ';
    size_t m = strlen(zOld);
    if (m > sizeof(err->zMsg) - 1 - n) m = sizeof(err->zMsg) - 1 - n;
    memcpy(err->zMsg + n, zOld, m);
    err->zMsg[n + m] = 0;
    return err->code;
}

const char *lp_code_name(int code) {
    static const char *const azName[LP_NCODES] = {
        "OK", "NOMEM", "BADINPUT", "NOTFOUND", "EXISTS", "RANGE",
        "CORRUPT", "IOERR", "UNSUPPORTED", "LIMIT", "BUSY", "INTERNAL",
    };
    if (code < 0 || code >= LP_NCODES) return "UNKNOWN";
    return azName[code];
}
