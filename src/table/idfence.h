/*
** idfence.h — which of a table's segments may hold a given id.
**
** Contract. An id lookup must find the live version of a row among the
** table's segments without asking each of them. Each segment summarises
** the ids it holds as at most IDFENCE_MAX_RUNS runs [lo, hi]
** (idfence_runs: its sorted ids cut at their widest gaps, so a run holds
** ids that are close together and the gaps between runs hold none). The
** fence cuts the id line at the ends of every segment's runs into cells;
** each cell lists the segments with a run covering it, newest first.
**
** A lookup binary-searches the cells, O(log cells) with cells at most
** twice the runs, and the caller then asks only the segments its cell
** lists, newest first. Where segments hold disjoint id ranges (ids given
** in ascending order, automatic ids) a cell lists one segment. Where they
** overlap, a cell lists the segments holding ids close to that id: a
** REPLACE of an old id puts one short run of the newer segment over it,
** which adds that segment to that id's cell and to no other.
**
** Sources are numbered 0..nSrc-1, oldest first (a larger number is
** newer); at most IDFENCE_MAX_SOURCES. A fence is immutable once built:
** the table builds a new one whenever its list of segments changes, and
** reads it under the table's lock. Ids are int64; a run may end at
** INT64_MAX.
*/
#ifndef LP_TABLE_IDFENCE_H
#define LP_TABLE_IDFENCE_H

#include <stddef.h>
#include <stdint.h>

#define IDFENCE_MAX_RUNS 256
#define IDFENCE_MAX_SOURCES 65535

typedef struct IdRun {
    int64_t lo, hi;         /* inclusive, lo <= hi */
} IdRun;

typedef struct IdFence IdFence; /* opaque */

/* Summarises nId ascending ids as at most nMax (>= 1) runs written to
** aRun, ascending and disjoint, covering every id: the nMax-1 widest gaps
** between consecutive ids are left out. The ids are little-endian int64s,
** stride bytes apart from pIds. Returns the number of runs (0 when nId is
** 0). O(nId log nMax), and O(nId) when ids are mostly consecutive. */
uint32_t idfence_runs(const uint8_t *pIds, size_t stride, uint32_t nId, IdRun *aRun, uint32_t nMax);

/* The fence over nSrc sources, source i holding anRun[i] runs apRun[i]
** (ascending and disjoint within a source). NULL when out of memory or
** nSrc > IDFENCE_MAX_SOURCES: the caller then asks every source. */
IdFence *idfence_build(const IdRun *const *apRun, const uint32_t *anRun, int nSrc);
void idfence_free(IdFence *f);

/* The sources that may hold id, newest first: *pn of them (0: none). */
const uint16_t *idfence_lookup(const IdFence *f, int64_t id, uint32_t *pn);

/* Cells, and the most sources one cell lists. */
void idfence_stats(const IdFence *f, uint32_t *pnCell, uint32_t *pnMaxDepth);

#endif
