/*
** multi.h — several full-text sources (the RAM segment's in-memory index,
** sealed segment files) read as one FtsSource with one ordinal space, so
** the query engine (search.h) searches a table of many segments unchanged.
**
** Model. Part i's document d is document aBase[i] + d of the multi. The
** parts' ranges [aBase[i], aBase[i] + nDocs) are ascending and do not
** overlap; gaps between them are ordinals without a document (length 0 in
** every field, in no postings list). What the multi reports:
**   - nDocs: the end of the last part's range, aBase[nPart-1] + its nDocs
**     (a NULL part counts 0 documents), so a gap before an empty last part
**     counts;
**   - aSumLen[f]: the sum over the parts;
**   - xLookup: df, nEarlier and cf summed over the parts (nEarlier
**     FTS_EARLIER_UNKNOWN when a part's is); 1 when any part holds the
**     key. The info's aLoc says which parts hold it, for xOpenFound;
**   - xOpen / xOpenFound: a cursor that concatenates the parts' cursors in
**     ordinal order, documents translated by the bases; df, maxTf and
**     minLen are the whole list's (sum, largest, smallest). xAdvance passes
**     over parts whose range ends before the target without touching them;
**     xShallow reports the block of the part holding the target, translated
**     (the next part's first block when the current part has nothing left
**     at or after the target); xPositions asks the current part; xStatus
**     reports the first error of any part's cursor (a damaged sealed
**     segment ends only that part's list early);
**   - xScan: every key with the prefix in any part, ascending, each once
**     with summed df, nEarlier and cf; a non-zero value from the callback stops it
**     and is returned; xScanHas the same, each part asked with the
**     strings: a key holding them all comes with every part's counts; one
**     that lacks one may come with only some parts' (or not at all);
**   - xDocLen: the part's answer, 0 in a gap.
** Each answer equals that of one index holding all the documents under the
** same ordinals, so BM25 scores are identical too (tested).
**
** Cost. With one non-empty part at base 0, every call goes straight to the
** part and its own cursors are returned: a query pays nothing extra. With
** several parts, a key that only a part at base 0 holds gets that part's
** cursor as is; otherwise each posting costs one more indirect call and an
** add. Opening a key looks it up once in each part that xLookup / xScan
** found it in (every part when the info is not the multi's own). Every
** part holding the key is opened at once: the list's maxTf and minLen,
** which the engine reads as plain fields, need each part's. xScan collects
** the keys of every part but the largest, whose scan it merges them into:
** memory of about 24 bytes plus the key per collected key.
**
** Ownership and lifetime. The multi borrows the parts: they must outlive
** it and every cursor opened through it, and must not change while it is
** used (it reads each part's nDocs and aSumLen once, in fts_multi_new; a
** table makes a new multi per snapshot: creating one costs O(parts *
** fields)). fts_multi_source() returns a source owned by the multi, valid
** until fts_multi_free(), which must come after every cursor is closed.
**
** Thread safety. A multi is read-only once made: its source may be used
** from many threads at once, as far as the parts allow (both backends do);
** a cursor belongs to one thread.
*/
#ifndef LP_FTS_MULTI_H
#define LP_FTS_MULTI_H

#include <stdint.h>

#include "fts/source.h"
#include "util/error.h"

typedef struct FtsMulti FtsMulti; /* opaque */

/* Makes a multi of aPart[0..nPart) at ordinals aBase[0..nPart) (both
** arrays are copied; the parts are borrowed). NULL parts and parts of 0
** documents are allowed and skipped. NULL + err on error: LP_BADINPUT
** (nPart < 0, NULL arrays with nPart > 0, a part whose range starts before
** the previous one ends or reaches past the largest ordinal, parts with
** different nFields), LP_NOMEM. */
FtsMulti *fts_multi_new(FtsSource *const *aPart, const uint32_t *aBase, int nPart, LpError *err);

/* The multi's FtsSource (source.h), owned by the multi. */
FtsSource *fts_multi_source(FtsMulti *m);

/* Frees m (not the parts). m may be NULL. */
void fts_multi_free(FtsMulti *m);

/* Every key of s beginning with prefix[0..nPrefix), where xKey may answer
** FTS_SCAN_SKIP(n) (source.h) to pass over the keys that begin as the one
** it was given for n bytes (some of which may still come, as source.h
** says), as a fuzzy search walks a dictionary: the parts
** of a multi one after another, each ascending (a key two parts hold comes
** twice, each time with that part's counts: the caller sums them, and
** leaves the info's aLoc alone), a source with xScanSkip through it, any
** other by xScan, reading every key. LP_OK, xKey's positive value, or an
** error (err). */
int fts_scan_skipping(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                      LpError *err);

#endif /* LP_FTS_MULTI_H */
