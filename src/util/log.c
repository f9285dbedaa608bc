/* log.c — see log.h. */
#include "util/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static atomic_int g_level = LOG_LEVEL_INFO;
static atomic_int g_fd = 2;

void log_set_level(int level) {
    atomic_store(&g_level, level);
}

int log_get_level(void) {
    return atomic_load_explicit(&g_level, memory_order_relaxed);
}

void log_set_fd(int fd) {
    atomic_store(&g_fd, fd);
}

int log_level_parse(const char *z) {
    static const char *const az[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i < (int)(sizeof(az) / sizeof(az[0])); i++) {
        if (strcasecmp(z, az[i]) == 0) return i;
    }
    if (strcasecmp(z, "warning") == 0) return LOG_LEVEL_WARN;
    return -1;
}

void log_write(int level, const char *zFmt, ...) {
    static const char *const azName[] = {"debug", "info", "warn", "error"};
    if (level < log_get_level() || level < 0 || level >= LOG_LEVEL_OFF) return;
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ [%s] ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, azName[level]);
    va_list ap;
    va_start(ap, zFmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, zFmt, ap);
    va_end(ap);
    if (m < 0) m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof(line) - 2) len = sizeof(line) - 2;
    line[len++] = '\n';
    ssize_t w = write(atomic_load(&g_fd), line, len);
    (void)w;
}
