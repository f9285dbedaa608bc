/*
** memtune.c — see memtune.h.
*/
#include "util/memtune.h"

#include <stdlib.h> /* defines __GLIBC__ on glibc */
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void lp_memtune(void) {
#if defined(__GLIBC__)
    mallopt(M_TRIM_THRESHOLD, 32 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
#endif
}
