/* vec.c — see vec.h. */
#include "util/vec.h"

#include <stdint.h>

int vec_grow_(void **pa, size_t *pcap, size_t need, size_t elsz) {
    size_t cap = *pcap ? *pcap : 8;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) return LP_NOMEM;
        cap *= 2;
    }
    if (cap > SIZE_MAX / elsz) return LP_NOMEM;
    void *p = realloc(*pa, cap * elsz);
    if (!p) return LP_NOMEM;
    *pa = p;
    *pcap = cap;
    return LP_OK;
}
