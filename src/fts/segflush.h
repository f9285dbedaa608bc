/*
** segflush.h — writing any full-text source (typically the RAM segment's
** in-memory index) out as a sealed segment file.
**
** Contract. fts_seg_write_source() reads every key of src in order, every
** posting and its positions, and the field lengths, and writes them with
** the segment writer (segment.h). aMap, when given, renumbers documents:
** aMap[old ordinal] is the new ordinal, or FTS_NO_DOC to drop the
** document (a tombstone); new ordinals must keep the old order, and
** nDocsOut is the number of documents of the result. With aMap NULL the
** ordinals stay as they are. The file is complete and fsynced on LP_OK,
** removed on error.
*/
#ifndef LP_FTS_SEGFLUSH_H
#define LP_FTS_SEGFLUSH_H

#include "fts/source.h"
#include "util/error.h"
#include "util/threadpool.h"

int fts_seg_write_source(const char *zPath, FtsSource *src, const uint32_t *aMap,
                         uint32_t nDocsOut, LpError *err);

/* The same, a large source whose documents all stay where they are (no
** map, or one that keeps every document) encoded in parts on pool's
** threads and this one (segment.h's fts_segw_open_part): the same file.
** pool NULL: on this thread alone. */
int fts_seg_write_source_pool(const char *zPath, FtsSource *src, const uint32_t *aMap,
                              uint32_t nDocsOut, Tpool *pool, LpError *err);

/* The same, with fts_segw_open_flags' flags (FTS_SEGW_INFIX). */
int fts_seg_write_source_flags(const char *zPath, FtsSource *src, const uint32_t *aMap,
                               uint32_t nDocsOut, Tpool *pool, unsigned flags, LpError *err);

#endif /* LP_FTS_SEGFLUSH_H */
