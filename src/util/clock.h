/*
** clock.h — time sources.
**
** Contract. lp_now_ns() reads CLOCK_MONOTONIC: nanoseconds since an
** arbitrary start, never going backwards, unaffected by changes to the
** wall clock; use it for durations, timeouts and latency. lp_unix_now()
** and lp_unix_now_ms() read CLOCK_REALTIME: seconds / milliseconds since
** 1970-01-01 UTC, for timestamps that are stored or shown (TIMESTAMP
** columns, log lines); they may jump when the system clock is set.
** None of them fails on Linux.
**
** Thread safety: all functions may be called from any thread.
*/
#ifndef LP_UTIL_CLOCK_H
#define LP_UTIL_CLOCK_H

#include <stdint.h>

int64_t lp_now_ns(void);
int64_t lp_unix_now(void);
int64_t lp_unix_now_ms(void);

#endif /* LP_UTIL_CLOCK_H */
