/*
** log.h — leveled logging to stderr.
**
** Contract. LOG_ERROR/LOG_WARN/LOG_INFO/LOG_DEBUG format a message and, when
** its level is at or above the current level, write one line
**   2026-11-30T23:59:01.123Z [warn] message
** to stderr (or the descriptor given to log_set_fd) with a single write(), so
** lines from different threads never interleave. The level is process-wide
** (default LOG_LEVEL_INFO) and may be changed at any time.
**
** Thread safety: all functions may be called from any thread.
*/
#ifndef LP_UTIL_LOG_H
#define LP_UTIL_LOG_H

enum { LOG_LEVEL_DEBUG = 0, LOG_LEVEL_INFO, LOG_LEVEL_WARN, LOG_LEVEL_ERROR, LOG_LEVEL_OFF };

void log_set_level(int level);
int log_get_level(void);
/* "debug", "info", "warn", "error", "off" -> level; -1 when unknown. */
int log_level_parse(const char *z);
/* Sends log lines to fd instead of stderr (2). */
void log_set_fd(int fd);

void log_write(int level, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));

#define LOG_DEBUG(...) do { if (log_get_level() <= LOG_LEVEL_DEBUG) log_write(LOG_LEVEL_DEBUG, __VA_ARGS__); } while (0)
#define LOG_INFO(...)  log_write(LOG_LEVEL_INFO, __VA_ARGS__)
#define LOG_WARN(...)  log_write(LOG_LEVEL_WARN, __VA_ARGS__)
#define LOG_ERROR(...) log_write(LOG_LEVEL_ERROR, __VA_ARGS__)

#endif /* LP_UTIL_LOG_H */
