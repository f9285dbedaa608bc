/*
** fuzz_datemath.c — libFuzzer target for value_date_math(), the date math
** of DATE_RANGE()'s bounds (table/value.h).
**
** Each input is one NUL-terminated expression, read against a "now" taken
** from its first bytes. Beyond the sanitizers, it checks the contract: a
** result within 10^13 seconds of 1970 and no message, or a message with an
** offset inside the expression; and, for an expression that starts with
** "now" and reads, that moving now by a whole number of weeks moves the
** result by as much when the expression uses no unit but s, m, h, d and w
** (no calendar months or years).
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "table/value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 256) return 0;
    int64_t now = 1700000000;
    if (size >= 4) {
        uint32_t x;
        memcpy(&x, data, 4);
        now = (int64_t)x * 7 - 5000000000; /* before and after 1970 */
    }
    /* A heap copy of exactly size + 1 bytes, so ASan catches any read past
    ** the end. */
    char *z = malloc(size + 1);
    if (!z) return 0;
    if (size) memcpy(z, data, size);
    z[size] = 0;
    size_t n = strlen(z);
    int64_t t = 0;
    int at = -1;
    const char *zWhy = value_date_math(z, now, &t, &at);
    if (zWhy) {
        if (!zWhy[0] || at < 0 || (size_t)at > n) abort();
    } else {
        if (t < -(int64_t)1e13 || t > (int64_t)1e13) abort();
        if (!strncmp(z, "now", 3) && !strpbrk(z, "My")) {
            int64_t t2 = 0;
            int at2 = -1;
            const char *zWhy2 = value_date_math(z, now + 7 * 86400, &t2, &at2);
            if (!zWhy2 && t2 != t + 7 * 86400) abort();
        }
    }
    free(z);
    return 0;
}
