/*
** lower.h — the lists of a key's term in the fields below the key's own:
** what FtsTermInfo.nEarlier counts (source.h). The segment writer counts
** it this way when it cannot take the source's count (segflush.c), and
** fts_segr_check() recounts a stored one (segreader.c).
**
** Contract. fts_lower_open() opens, without positions, the lists of
** key[1..nKey) in fields 0..key[0]-1 of src and keeps the non-empty ones,
** each on its first document. fts_lower_has(doc) tells whether any of them
** holds doc; doc must not decrease from one call to the next.
** fts_lower_close() closes them all. Not thread-safe: an FtsLower belongs
** to one thread, as its cursors do.
*/
#ifndef LP_FTS_LOWER_H
#define LP_FTS_LOWER_H

#include <stdint.h>

#include "fts/source.h"
#include "util/error.h"

typedef struct FtsLower {
    FtsPostings *a[FTS_MAX_FIELDS];
    int n;
} FtsLower;

/* LP_OK, or the error of an open (err set) with nothing left open. */
int fts_lower_open(FtsLower *lw, FtsSource *src, const uint8_t *key, int nKey, LpError *err);

/* 1 when a lower field's list holds doc, else 0. */
int fts_lower_has(FtsLower *lw, uint32_t doc);

/* Closes the lists. Returns rc when it is not LP_OK, else the first
** error that ended a list early (xStatus, err set), else LP_OK. */
int fts_lower_close(FtsLower *lw, int rc, LpError *err);

#endif /* LP_FTS_LOWER_H */
