/*
** rowfile.h — the rows of a sealed table segment, and its tombstones.
**
** Contract. A segment numbers its rows with ordinals 0..nOrd-1 (the
** ordinals of its full-text segment and of its graphs' node maps). The rows
** file keeps, read through mmap:
**   - the row blocks (opaque to this module: the table's in-memory row
**     format, so a row is read in place without decoding), each 8-byte
**     aligned; an ordinal may have no row (deleted before the segment was
**     written);
**   - an id index: (id, ordinal) sorted by id, for lookups in O(log n),
**     with a Bloom filter built at open (about 10 bits per id, not stored)
**     so that looking up an id the file does not hold rarely searches;
**   - for each vector column with a graph, the map node -> ordinal
**     (UINT32_MAX: the node's row is not in the segment);
**   - the fixed-width columns the writer declared (the table's numeric
**     attributes), each as an array of nOrd 8-byte values with a NULL
**     bitmap, so a filtered scan reads the columns it tests and not the
**     rows (the row blocks keep the same values: rows are read in place);
**   - stored blocks, in a second file (the text file, seg-N.text): byte
**     strings the rows refer to by number (the table keeps its TEXT values
**     there), each compressed with zstd on its own, read back whole with
**     rowfile_block_read(). A new rows file may refer to an existing text
**     file (ALTER rewrites the rows, links the text).
** The byte layout is at the top of rowfile.c.
**
** Writer. rowfile_writer_new() starts the rows file and the text file (or
** none: rowfile_writer_keep_text() then says how many blocks the existing
** one has); the caller adds the stored blocks first (rowfile_writer_block,
** numbered 0, 1, ... in that order), then the row blocks in ascending
** ordinal order (rowfile_writer_row; ordinals not given have no row),
** then rowfile_writer_finish() writes the indexes, node maps and footers,
** fsyncs and closes both files. On any error, and on
** rowfile_writer_abort(), the files written are removed. The caller
** fsyncs the folder when it publishes them (manifest.h).
**
** Reader. rowfile_open() maps the file read-only and, before serving
** anything, verifies the header and footer (magic, version, sizes), the
** CRC32C of every section, and the structure: every offset inside the
** rows section and aligned, every block passing the caller's check
** xCheck (sizes, offsets, terminators, ids), the id index strictly
** ascending and matching the blocks, every map entry an ordinal or
** UINT32_MAX. A damaged file is LP_CORRUPT with a message naming the file
** and the offset; never a crash. rowfile_open_mem() does the same over the
** caller's memory; ROWFILE_NOCHECKSUM skips the CRCs (fuzz target only).
** Stored blocks are checked at open for place, size and zstd frame header;
** their content is covered by the section's CRC and decompressed only when
** read (a failure then is LP_CORRUPT naming the file and the block).
**
** Tombstone files (seg-N.del-G): the set of ordinals deleted after the
** segment was written, as a bitset with a header and a CRC32C;
** rowfile_write_dead / rowfile_read_dead, same error rules.
**
** Thread safety: an open file is read-only; any number of threads may read
** it at once.
*/
#ifndef LP_TABLE_ROWFILE_H
#define LP_TABLE_ROWFILE_H

#include <stddef.h>
#include <stdint.h>

#include "util/bitset.h"
#include "util/error.h"

#define ROWFILE_NOCHECKSUM 0x1

typedef struct RowFile RowFile;

/* One node map to write: aNode[0..nNode) for vector column iCol. */
typedef struct RowFileMap {
    uint32_t iCol;
    uint32_t nNode;
    const uint32_t *aNode;
} RowFileMap;

/* Checks one row block of n bytes read back from file f (the table's
** row_check; f's stored blocks may be asked about): nonzero when valid.
** *pId gets its id. */
typedef int (*RowCheckFn)(void *ctx, const RowFile *f, const void *pBlock, size_t n, int64_t *pId);

typedef struct RowFileWriter RowFileWriter;

/* Starts zPath and text file zTextPath (both created or truncated; NULL:
** no text file written) for nOrd ordinals of rows that follow a schema of
** nCol columns. */
int rowfile_writer_new(const char *zPath, const char *zTextPath, uint32_t nCol, uint32_t nOrd,
                       RowFileWriter **pp, LpError *err);
/* Without a text file of its own: the rows refer to the nBlock blocks of
** an existing one. */
void rowfile_writer_keep_text(RowFileWriter *w, uint32_t nBlock);
/* Appends stored block number rowfile_writer_nblock(w): n bytes (copied,
** compressed; n < 4 GiB). Only before the first row. */
int rowfile_writer_block(RowFileWriter *w, const void *p, size_t n, LpError *err);
uint32_t rowfile_writer_nblock(const RowFileWriter *w);
/* Declares the fixed-width columns the file keeps as arrays (COLS: numeric
** attributes, for scans): nFix column numbers, ascending, each < nCol.
** Only before the first row; every value starts 0 and not NULL. */
int rowfile_writer_columns(RowFileWriter *w, const uint32_t *aiCol, int nFix, LpError *err);
/* Sets value ord of the j-th declared column (or marks it NULL). */
void rowfile_writer_value(RowFileWriter *w, int j, uint32_t ord, uint64_t v, int bNull);
/* Appends the block of ordinal ord (> every ordinal added before, < nOrd):
** n bytes, starting with its int64 id and its uint32 size. */
int rowfile_writer_row(RowFileWriter *w, uint32_t ord, const void *pBlock, uint32_t n, LpError *err);
/* Writes the nMap node maps, the indexes and the footer; fsyncs; closes.
** Frees w, also on error (the file is then removed). */
int rowfile_writer_finish(RowFileWriter *w, const RowFileMap *aMap, int nMap, LpError *err);
/* Gives up: closes and removes the file, frees w. NULL is a no-op. */
void rowfile_writer_abort(RowFileWriter *w);

/* Opens rows file zPath with its text file zTextPath (NULL: none; then
** the rows file must say it has no blocks). */
int rowfile_open(const char *zPath, const char *zTextPath, RowCheckFn xCheck, void *ctx, RowFile **pp,
                 LpError *err);
int rowfile_open_mem(const uint8_t *a, size_t n, const uint8_t *aText, size_t nText, const char *zName,
                     int flags, RowCheckFn xCheck, void *ctx, RowFile **pp, LpError *err);
void rowfile_close(RowFile *f);

uint32_t rowfile_nord(const RowFile *f);
/* Rows stored (ordinals with a block). */
uint32_t rowfile_nrow(const RowFile *f);
/* Columns of the schema the rows were written with. */
uint32_t rowfile_ncol(const RowFile *f);
/* The block of ordinal i (8-byte aligned), or NULL when it has none. */
const void *rowfile_row(const RowFile *f, uint32_t i);
/* The same, writable: the rows file is mapped privately (copy on write),
** so a change stays in memory (the caller makes it durable: patch files
** below). Only for rowfile_open()ed files. */
void *rowfile_row_mut(RowFile *f, uint32_t i);
/* Column iCol as the file keeps it for scans (rowfile_writer_columns):
** nOrd values, value i being ordinal i's slot (0 where NULL or no row),
** and in *paNull (when not NULL) its NULL bitmap of nOrd bits. NULL when
** the file keeps no array of that column (not declared, or a file of
** format 3). Values are 8-byte aligned in an opened (mapped) file. */
const uint64_t *rowfile_column(const RowFile *f, uint32_t iCol, const uint64_t **paNull);
/* The same, writable (as rowfile_row_mut): a change in place of a row's
** slot must change its column value too. */
uint64_t *rowfile_column_mut(RowFile *f, uint32_t iCol, uint64_t **paNull);
/* The id index: *pn entries of 16 bytes (int64 id, uint32 ordinal,
** uint32 0, little-endian), ascending by id. */
const uint8_t *rowfile_ids(const RowFile *f, uint32_t *pn);
/* nOrd bits, bit i set when ordinal i has no row block; NULL when every
** ordinal has one. */
const uint64_t *rowfile_norow(const RowFile *f);
/* The ordinal of id's block, or -1. */
int64_t rowfile_find(const RowFile *f, int64_t id);
/* The smallest and largest id stored, or 0. */
int64_t rowfile_min_id(const RowFile *f);
int64_t rowfile_max_id(const RowFile *f);
/* 1 when the rows come in ascending id order by ordinal. */
int rowfile_sorted(const RowFile *f);
/* The node map of vector column iCol (*pn entries), or NULL. */
const uint32_t *rowfile_map(const RowFile *f, uint32_t iCol, uint32_t *pn);
/* Bytes in the file. */
uint64_t rowfile_size(const RowFile *f);
/* 1 when p points into f's rows. */
int rowfile_owns(const RowFile *f, const void *p);

/* Stored blocks: how many, block b's size once decompressed (0 when b is
** out of range), and reading it whole into buf (rowfile_block_raw bytes)
** with the caller's decompression context (rowfile_dctx_new: one per
** thread, reused; NULL: one made for the call). */
uint32_t rowfile_nblock(const RowFile *f);
uint32_t rowfile_block_raw(const RowFile *f, uint32_t b);
int rowfile_block_read(const RowFile *f, uint32_t b, void *buf, void *pDctx, LpError *err);
void *rowfile_dctx_new(void);
void rowfile_dctx_free(void *pDctx);
/* Block b decompressed, from a cache shared by all files (16 MiB of
** blocks not in use, least recently used dropped first): valid until
** rowfile_block_unpin(f, b), which every successful pin must be matched
** by before f is closed. On a miss it decompresses with *ppDctx, made
** there when NULL (the caller frees it). NULL (err set) when the block
** cannot be read. */
const uint8_t *rowfile_block_pin(const RowFile *f, uint32_t b, void **ppDctx, LpError *err);
void rowfile_block_unpin(const RowFile *f, uint32_t b);
/* The cache's hits and misses since start, and bytes held. */
void rowfile_cache_stats(uint64_t *pnHit, uint64_t *pnMiss, size_t *pnByte);

/* Tombstones: writes dead (nBit = the segment's nOrd) to zPath, fsynced. */
int rowfile_write_dead(const char *zPath, const Bitset *dead, LpError *err);
/* Reads zPath into dead (initialised here), which must hold nOrd bits. */
int rowfile_read_dead(const char *zPath, uint32_t nOrd, Bitset *dead, LpError *err);

/* Patch files (seg-N.patch-G): rows of a segment changed in place, as
** nEntry entries of (u32 ordinal, u32 0, nHead bytes of the row's head),
** ordinals ascending, in the blob a. Written and fsynced; read back into
** *pa (malloc'd) after checking header, sizes, order and CRC32C against
** the segment's nOrd and nHead (LP_CORRUPT naming the file otherwise). */
int rowfile_write_patch(const char *zPath, uint32_t nOrd, uint32_t nHead, const void *a, uint32_t nEntry,
                        LpError *err);
int rowfile_read_patch(const char *zPath, uint32_t nOrd, uint32_t nHead, uint8_t **pa, uint32_t *pnEntry,
                       LpError *err);

#endif /* LP_TABLE_ROWFILE_H */
