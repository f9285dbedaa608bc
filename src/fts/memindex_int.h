/*
** memindex_int.h — the two halves of fts_mem_add(), for callers that must
** not fail in the middle of a batch (table_apply): reserve everything a
** batch of documents needs first, then append without failing.
*/
#ifndef LP_FTS_MEMINDEX_INT_H
#define LP_FTS_MEMINDEX_INT_H

#include "fts/memindex.h"

extern const FtsSourceVt fts_mem_vt;

/* Makes room for appending the nDoc documents of apDoc (ordinals up to
** lastDoc) and links their buffers' keys to the index's entries; a
** large batch is shared out over the index's pool by term shard. LP_OK or
** LP_NOMEM; on failure nothing visible changed (new terms exist but with
** df 0, which reads as absent). */
int fts_mem_reserve(FtsMem *m, FtsDocBuf *const *apDoc, int nDoc, uint32_t lastDoc);

/* Appends one document reserved by fts_mem_reserve. Cannot fail. */
void fts_mem_append(FtsMem *m, uint32_t doc, const FtsDocBuf *d);

/* Appends the nDoc documents reserved by fts_mem_reserve, apDoc[k] as
** ordinal aOrd[k] (ascending). Cannot fail. A large batch is shared out
** over the index's pool by term shard. */
void fts_mem_append_batch(FtsMem *m, const uint32_t *aOrd, FtsDocBuf *const *apDoc, int nDoc);

#endif /* LP_FTS_MEMINDEX_INT_H */
