/*
** rowfile.c — rows file and tombstone file of a sealed table segment (see
** rowfile.h for the contract).
**
** Rows file (seg-N.rows), little-endian, every section 8-byte aligned:
**
**   OFFSET  SIZE   DESCRIPTION
**   0       8      magic "LPROWS\0\0"
**   8       4      format version (4; version 3 files, without COLS, are
**                  still read)
**   12      4      nCol: columns of the schema the rows follow
**   16      4      nOrd: ordinals
**   20      4      nRow: ordinals that have a row block
**   24      4      nMap: node maps
**   28      4      CRC32C of bytes 0..28
**   32      ...    ROWS: the row blocks, each padded with zeros to 8 bytes
**   ..      8*nOrd OFFS: per ordinal, the file offset of its block (0: none)
**   ..      16*nRow IDS: (i64 id, u32 ordinal, u32 0), ascending by id
**   ..      ...    MAPS: per map: u32 iCol, u32 nNode, nNode x u32 ordinal
**                  (UINT32_MAX: none), padded to 8
**   ..      ...    COLS (version 4): the fixed-width attribute columns, so a
**                  scan reads one column's values without touching rows:
**                  u32 nFix, u32 0, then per column, iCol ascending:
**                    u32 iCol, u32 0,
**                    nOrd x u64 value: ordinal i's slot as its row block
**                      keeps it (an integer, or a FLOAT's double bits);
**                      0 where the value is NULL or the ordinal has no row
**                    ceil(nOrd/64) x u64 NULL bitmap (bit i: ordinal i's
**                      value is NULL)
**                  The row blocks keep their slots too: a row is read in
**                  place as before; the columns serve scans.
**   end-56  56     footer:
**                    0  u64 offset of OFFS   8 of IDS   16 of MAPS
**                    24 u32 nBlock: blocks in the segment's text file
**                    28 u32 CRC32C of ROWS   32 of OFFS  36 of IDS  40 of MAPS
**                    44 u32 CRC32C of COLS (version 3: 0, and no COLS)
**                    48 u32 CRC32C of footer bytes 0..48
**                    52 "LPRE"
**
** Text file (seg-N.text), the stored blocks the rows refer to; a file of
** its own so that a change of the rows (ALTER) keeps it by a hard link:
**
**   0       8      magic "LPTEXT\0\0"
**   8       4      format version (1)
**   12      4      CRC32C of bytes 0..12
**   16      ...    the blocks, each one zstd frame (with its content size)
**                  padded with zeros to 8 bytes
**   ..      16*nBlock SIDX: per block: u64 offset, u32 compressed size,
**                  u32 size decompressed; ascending offsets
**   end-32  32     footer: 0 u64 offset of SIDX, 8 u32 nBlock, 12 u32 CRC32C
**                  of the blocks, 16 of SIDX, 20 u32 0, 24 u32 CRC32C of
**                  footer bytes 0..24, 28 "LPTE"
**
** Each row block starts with its int64 id and its uint32 size (the table's
** row format, table.c); the table checks the rest. Files of other versions
** are refused with a message naming the version.
**
** Patch file (seg-N.patch-G): rows changed in place since the segment was
** written (attribute UPDATE), as their heads (the table's id, size and
** slots part):
**   0 8 magic "LPPATCH\0", 8 u32 version (1), 12 u32 nOrd, 16 u32 nHead,
**   20 u32 nEntry, 24 u32 CRC32C of the entries, 28 u32 CRC32C of bytes
**   0..28, 32 nEntry x (u32 ordinal, u32 0, nHead bytes), ordinals
**   ascending.
**
** Tombstone file (seg-N.del-G):
**   0 8 magic "LPDEAD\0\0", 8 u32 version (1), 12 u32 nOrd, 16 u32 nDead,
**   20 u32 CRC32C of the words, 24 u32 CRC32C of bytes 0..24, 28 u32 0,
**   32 ceil(nOrd/64) u64 words (bit i set: ordinal i deleted).
*/
#include "table/rowfile.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "util/bytes.h"
#include "util/crc32c.h"

#define RF_VERSION 4
#define RF_VERSION_NOCOLS 3 /* read, not written */
#define RF_HDR 32
#define RF_FTR 56
#define TF_VERSION 1
#define TF_HDR 16
#define TF_FTR 32
#define DEAD_VERSION 1
#define DEAD_HDR 32
#define RF_ZSTD_LEVEL 3
#define PATCH_VERSION 1
#define PATCH_HDR 32
/* The writer keeps this many values of each fixed-width column in memory;
** earlier ones wait in a spill file, so a large merge does not hold
** every column of every row. */
#define FIX_CHUNK 8192u

struct RowFile {
    const uint8_t *a;       /* the mapping (or the caller's memory) */
    size_t n;
    int bMapped;
    uint32_t nCol, nOrd, nRow, nMap;
    const uint8_t *pOffs;   /* nOrd x u64 */
    const uint8_t *pIds;    /* nRow x 16 */
    const uint8_t **apMap;  /* nMap: start of each map */
    int bSorted;            /* ordinals ascend with ids */
    uint64_t offOffs;       /* where ROWS ends */
    const uint8_t *t;       /* the text file's mapping (or memory), or NULL */
    size_t nT;
    uint32_t nBlock;
    const uint8_t *pSidx;   /* nBlock x 16, in the text file */
    char *zName;            /* for messages */
    uint64_t *aBloom;       /* a Bloom filter of the ids (NULL: none) */
    uint64_t bloomMask;     /* its bit count - 1 (a power of two) */
    const uint8_t **apFix;  /* nFix: start of each column's values in COLS */
    uint32_t *aiFix;        /* nFix: their column numbers, ascending */
    uint32_t nFix;
    uint64_t *aNoRow;       /* bit i: ordinal i has no row (NULL: all have one) */
};

/* The id filter: about 10 bits per id and 4 probes (under 2% false
** positives), so a lookup of an id the file does not hold (another
** segment's, when their id ranges overlap) rarely pays for the binary
** search. Built at open from the id index; not stored. */
#define BLOOM_BITS_PER_ID 10
#define BLOOM_PROBES 4

static void bloom_probes(int64_t id, uint64_t *pH1, uint64_t *pH2) {
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    *pH1 = h;
    *pH2 = (h >> 17) | 1;
}

static void bloom_build(RowFile *f) {
    if (f->nRow < 64) return; /* the binary search is as cheap */
    uint64_t nBit = 64;
    while (nBit < (uint64_t)f->nRow * BLOOM_BITS_PER_ID) nBit <<= 1;
    if (!(f->aBloom = calloc(nBit / 64, 8))) return; /* lookups just search */
    f->bloomMask = nBit - 1;
    for (uint32_t i = 0; i < f->nRow; i++) {
        uint64_t h1, h2;
        bloom_probes((int64_t)get_u64le(f->pIds + 16 * (size_t)i), &h1, &h2);
        for (int k = 0; k < BLOOM_PROBES; k++) {
            uint64_t b = (h1 + (uint64_t)k * h2) & f->bloomMask;
            f->aBloom[b / 64] |= 1ull << (b % 64);
        }
    }
}

static int bloom_maybe(const RowFile *f, int64_t id) {
    if (!f->aBloom) return 1;
    uint64_t h1, h2;
    bloom_probes(id, &h1, &h2);
    for (int k = 0; k < BLOOM_PROBES; k++) {
        uint64_t b = (h1 + (uint64_t)k * h2) & f->bloomMask;
        if (!(f->aBloom[b / 64] & (1ull << (b % 64)))) return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------- writing */

typedef struct Out {
    int fd;
    uint64_t off;
    uint32_t crc;
    size_t nBuf;
    int bErr;
    uint8_t buf[65536];     /* last: out_new zeroes the fields above */
} Out;

static void out_flush(Out *o) {
    size_t d = 0;
    while (!o->bErr && d < o->nBuf) {
        ssize_t r = write(o->fd, o->buf + d, o->nBuf - d);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) o->bErr = 1;
        else d += (size_t)r;
    }
    o->nBuf = 0;
}

static void out_put(Out *o, const void *p, size_t n) {
    o->crc = crc32c_update(o->crc, p, n);
    o->off += n;
    while (n) {
        if (o->nBuf == sizeof(o->buf)) out_flush(o);
        size_t k = sizeof(o->buf) - o->nBuf < n ? sizeof(o->buf) - o->nBuf : n;
        memcpy(o->buf + o->nBuf, p, k);
        o->nBuf += k;
        p = (const uint8_t *)p + k;
        n -= k;
    }
}

static void out_u32(Out *o, uint32_t v) {
    uint8_t b[4];
    put_u32le(b, v);
    out_put(o, b, 4);
}

static void out_u64(Out *o, uint64_t v) {
    uint8_t b[8];
    put_u64le(b, v);
    out_put(o, b, 8);
}

static void out_pad8(Out *o) {
    static const uint8_t z[8];
    if (o->off % 8) out_put(o, z, 8 - o->off % 8);
}

typedef struct IdOrd {
    int64_t id;
    uint32_t ord;
} IdOrd;

static int cmp_idord(const void *a, const void *b) {
    int64_t x = ((const IdOrd *)a)->id, y = ((const IdOrd *)b)->id;
    return x < y ? -1 : x > y;
}

/* Finishes a written file: flush, fsync, close; on failure removes it. */
static int out_close(Out *o, const char *zPath, LpError *err) {
    out_flush(o);
    int bad = o->bErr || fsync(o->fd) != 0;
    int e = errno;
    if (close(o->fd) != 0) bad = 1;
    if (bad) {
        unlink(zPath);
        return lp_err_set(err, LP_IOERR, "cannot write %s: %s", zPath,
                          o->bErr ? strerror(e ? e : EIO) : strerror(e));
    }
    return LP_OK;
}

/* Writes the header h (its counts known only now) over the zeros the
** file starts with, then out_close. */
static int out_close_with_header(Out *o, const uint8_t *h, size_t nHdr, const char *zPath, LpError *err) {
    out_flush(o);
    if (!o->bErr && pwrite(o->fd, h, nHdr, 0) != (ssize_t)nHdr) o->bErr = 1;
    return out_close(o, zPath, err);
}

typedef struct BlockRef {
    uint64_t off;
    uint32_t nZ, nRaw;
} BlockRef;

struct RowFileWriter {
    char *zPath, *zText;    /* zText NULL: the text file is kept as it is */
    Out *o, *ot;            /* rows file, text file */
    uint32_t nCol, nOrd, nRow;
    uint64_t *aOff;         /* nOrd: offset of each ordinal's block (0: none) */
    IdOrd *aId;             /* nRow so far */
    BlockRef *aBlk;
    uint32_t nBlk, nBlkAlloc;
    int64_t lastOrd;        /* -1 before the first row */
    void *pZ;               /* compression buffer */
    size_t nZAlloc;
    ZSTD_CCtx *cctx;
    uint32_t *aiFix;        /* nFix fixed-width columns, ascending */
    int nFix;
    uint64_t *aFixVal;      /* nFix x FIX_CHUNK: each column's current chunk */
    uint32_t iFixChunk;     /* the chunk aFixVal holds (ordinals / FIX_CHUNK) */
    int fdFix;              /* finished chunks (spill file, already unlinked), or -1 */
    int fixErrno;           /* a spill write failed: finish fails */
    uint64_t *aFixNull;     /* nFix x nNullWord NULL bitmap words */
};

static void writer_free(RowFileWriter *w) {
    ZSTD_freeCCtx(w->cctx);
    free(w->zPath);
    free(w->zText);
    free(w->o);
    free(w->ot);
    free(w->aOff);
    free(w->aId);
    free(w->aBlk);
    free(w->pZ);
    free(w->aiFix);
    free(w->aFixVal);
    free(w->aFixNull);
    if (w->fdFix >= 0) close(w->fdFix);
    free(w);
}

static int writer_fail(RowFileWriter *w, const char *zFile, LpError *err, int code, const char *zWhat) {
    int rc = lp_err_set(err, code, "cannot write %s: %s", zFile, zWhat);
    rowfile_writer_abort(w);
    return rc;
}

/* A new Out on zPath (created or truncated) starting with nHdr zero bytes
** (the header, written at the end), or NULL with err set. */
static Out *out_new(const char *zPath, size_t nHdr, LpError *err) {
    Out *o = malloc(sizeof(Out));
    if (!o) {
        lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
        return NULL;
    }
    memset(o, 0, offsetof(Out, buf));
    o->fd = open(zPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0) {
        lp_err_set(err, LP_IOERR, "cannot create %s: %s", zPath, strerror(errno));
        free(o);
        return NULL;
    }
    static const uint8_t zero[RF_HDR];
    out_put(o, zero, nHdr);
    o->crc = 0;
    return o;
}

int rowfile_writer_new(const char *zPath, const char *zTextPath, uint32_t nCol, uint32_t nOrd,
                       RowFileWriter **pp, LpError *err) {
    *pp = NULL;
    RowFileWriter *w = calloc(1, sizeof(*w));
    if (w) {
        w->zPath = strdup(zPath);
        w->zText = zTextPath ? strdup(zTextPath) : NULL;
        w->aOff = calloc(nOrd ? nOrd : 1, sizeof(uint64_t));
        w->aId = malloc(sizeof(IdOrd) * (nOrd ? nOrd : 1));
        w->cctx = ZSTD_createCCtx();
    }
    if (w) w->fdFix = -1;
    if (!w || !w->zPath || (zTextPath && !w->zText) || !w->aOff || !w->aId || !w->cctx) {
        if (w) writer_free(w);
        return lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
    }
    w->nCol = nCol;
    w->nOrd = nOrd;
    w->lastOrd = -1;
    w->fdFix = -1;
    if (!(w->o = out_new(zPath, RF_HDR, err)) || (zTextPath && !(w->ot = out_new(zTextPath, TF_HDR, err)))) {
        if (w->o) {
            close(w->o->fd);
            unlink(zPath);
        }
        writer_free(w);
        return err ? err->code : LP_IOERR;
    }
    *pp = w;
    return LP_OK;
}

uint32_t rowfile_writer_nblock(const RowFileWriter *w) {
    return w->nBlk;
}

void rowfile_writer_keep_text(RowFileWriter *w, uint32_t nBlock) {
    if (!w->ot) w->nBlk = nBlock;
}

int rowfile_writer_block(RowFileWriter *w, const void *p, size_t n, LpError *err) {
    if (!w->ot || w->nRow || n >= UINT32_MAX || w->nBlk == UINT32_MAX) {
        return writer_fail(w, w->zText ? w->zText : w->zPath, err, LP_INTERNAL, "stored block out of order, too large, or no text file");
    }
    size_t nBound = ZSTD_compressBound(n);
    if (nBound > w->nZAlloc) {
        void *pNew = realloc(w->pZ, nBound);
        if (!pNew) return writer_fail(w, w->zText ? w->zText : w->zPath, err, LP_NOMEM, "out of memory");
        w->pZ = pNew;
        w->nZAlloc = nBound;
    }
    if (w->nBlk == w->nBlkAlloc) {
        uint32_t nNew = w->nBlkAlloc ? 2 * w->nBlkAlloc : 64;
        BlockRef *aNew = realloc(w->aBlk, sizeof(BlockRef) * nNew);
        if (!aNew) return writer_fail(w, w->zText ? w->zText : w->zPath, err, LP_NOMEM, "out of memory");
        w->aBlk = aNew;
        w->nBlkAlloc = nNew;
    }
    size_t nZ = ZSTD_compressCCtx(w->cctx, w->pZ, nBound, p, n, RF_ZSTD_LEVEL);
    if (ZSTD_isError(nZ)) return writer_fail(w, w->zText ? w->zText : w->zPath, err, LP_INTERNAL, ZSTD_getErrorName(nZ));
    w->aBlk[w->nBlk++] = (BlockRef){w->ot->off, (uint32_t)nZ, (uint32_t)n};
    out_put(w->ot, w->pZ, nZ);
    out_pad8(w->ot);
    return w->ot->bErr ? writer_fail(w, w->zText ? w->zText : w->zPath, err, LP_IOERR, strerror(errno ? errno : EIO)) : LP_OK;
}

static size_t null_words(uint32_t nOrd) {
    return ((size_t)nOrd + 63) / 64;
}

int rowfile_writer_columns(RowFileWriter *w, const uint32_t *aiCol, int nFix, LpError *err) {
    if (w->nFix || w->nRow || nFix < 0 || (uint32_t)nFix > w->nCol) {
        return writer_fail(w, w->zPath, err, LP_INTERNAL, "columns declared twice, late, or too many");
    }
    for (int j = 0; j < nFix; j++) {
        if (aiCol[j] >= w->nCol || (j && aiCol[j] <= aiCol[j - 1])) {
            return writer_fail(w, w->zPath, err, LP_INTERNAL, "column numbers not ascending");
        }
    }
    if (!nFix) return LP_OK;
    w->aiFix = malloc(sizeof(uint32_t) * (size_t)nFix);
    w->aFixVal = calloc((size_t)nFix * FIX_CHUNK, 8);
    w->aFixNull = calloc((size_t)nFix * null_words(w->nOrd) + 1, 8);
    if (!w->aiFix || !w->aFixVal || !w->aFixNull) {
        return writer_fail(w, w->zPath, err, LP_NOMEM, "out of memory");
    }
    memcpy(w->aiFix, aiCol, sizeof(uint32_t) * (size_t)nFix);
    w->nFix = nFix;
    return LP_OK;
}

/* Where chunk k of column j goes in the spill file. */
static off_t fix_spill_off(const RowFileWriter *w, uint32_t k, int j) {
    return (off_t)(((uint64_t)k * (uint64_t)w->nFix + (uint64_t)j) * FIX_CHUNK * 8);
}

/* Moves the columns on to chunk k, writing the chunks before it (the
** current one, then zeros for any skipped) to the spill file. */
static void fix_advance(RowFileWriter *w, uint32_t k) {
    while (w->iFixChunk < k && !w->fixErrno) {
        if (w->fdFix < 0) {
            char z[4200];
            snprintf(z, sizeof(z), "%s.cols-tmp", w->zPath);
            w->fdFix = open(z, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (w->fdFix < 0) {
                w->fixErrno = errno ? errno : EIO;
                break;
            }
            unlink(z); /* lives as long as the descriptor */
        }
        for (int j = 0; j < w->nFix && !w->fixErrno; j++) {
            const uint8_t *p = (const uint8_t *)(w->aFixVal + (size_t)j * FIX_CHUNK);
            size_t n = FIX_CHUNK * 8, d = 0;
            while (d < n) {
                ssize_t r = pwrite(w->fdFix, p + d, n - d, fix_spill_off(w, w->iFixChunk, j) + (off_t)d);
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) {
                    w->fixErrno = r < 0 && errno ? errno : EIO;
                    break;
                }
                d += (size_t)r;
            }
        }
        memset(w->aFixVal, 0, (size_t)w->nFix * FIX_CHUNK * 8);
        w->iFixChunk++;
    }
}

void rowfile_writer_value(RowFileWriter *w, int j, uint32_t ord, uint64_t v, int bNull) {
    if (j < 0 || j >= w->nFix || ord >= w->nOrd) return;
    if (ord / FIX_CHUNK < w->iFixChunk) { /* out of order: refused at finish */
        w->fixErrno = EINVAL;
        return;
    }
    fix_advance(w, ord / FIX_CHUNK);
    if (bNull) {
        w->aFixNull[(size_t)j * null_words(w->nOrd) + ord / 64] |= 1ull << (ord % 64);
    } else {
        w->aFixVal[(size_t)j * FIX_CHUNK + ord % FIX_CHUNK] = v;
    }
}

int rowfile_writer_row(RowFileWriter *w, uint32_t ord, const void *pBlock, uint32_t n, LpError *err) {
    if ((int64_t)ord <= w->lastOrd || ord >= w->nOrd || n < 16) {
        return writer_fail(w, w->zPath, err, LP_INTERNAL, "row out of order");
    }
    w->lastOrd = ord;
    w->aOff[ord] = w->o->off;
    int64_t id;
    memcpy(&id, pBlock, 8);
    w->aId[w->nRow++] = (IdOrd){id, ord};
    out_put(w->o, pBlock, n);
    out_pad8(w->o);
    return w->o->bErr ? writer_fail(w, w->zPath, err, LP_IOERR, strerror(errno ? errno : EIO)) : LP_OK;
}

void rowfile_writer_abort(RowFileWriter *w) {
    if (!w) return;
    close(w->o->fd);
    unlink(w->zPath);
    if (w->ot) {
        close(w->ot->fd);
        unlink(w->zText);
    }
    writer_free(w);
}

/* Ends the text file: index, footer, header; fsynced and closed. */
static int text_finish(RowFileWriter *w, LpError *err) {
    Out *o = w->ot;
    uint32_t crcBlocks = o->crc;
    uint64_t offSidx = o->off;
    o->crc = 0;
    for (uint32_t b = 0; b < w->nBlk; b++) {
        out_u64(o, w->aBlk[b].off);
        out_u32(o, w->aBlk[b].nZ);
        out_u32(o, w->aBlk[b].nRaw);
    }
    uint32_t crcSidx = o->crc;
    uint8_t f[TF_FTR] = {0};
    put_u64le(f, offSidx);
    put_u32le(f + 8, w->nBlk);
    put_u32le(f + 12, crcBlocks);
    put_u32le(f + 16, crcSidx);
    put_u32le(f + 24, crc32c_update(0, f, 24));
    memcpy(f + 28, "LPTE", 4);
    out_put(o, f, TF_FTR);
    uint8_t h[TF_HDR] = "LPTEXT\0";
    put_u32le(h + 8, TF_VERSION);
    put_u32le(h + 12, crc32c_update(0, h, 12));
    int rc = out_close_with_header(o, h, TF_HDR, w->zText, err);
    free(w->ot);
    w->ot = NULL;
    return rc;
}

int rowfile_writer_finish(RowFileWriter *w, const RowFileMap *aMap, int nMap, LpError *err) {
    Out *o = w->o;
    if (w->ot && text_finish(w, err) != LP_OK) {
        rowfile_writer_abort(w);
        return err ? err->code : LP_IOERR;
    }
    uint32_t crcRows = o->crc;

    uint64_t offOffs = o->off;
    o->crc = 0;
    for (uint32_t i = 0; i < w->nOrd; i++) out_u64(o, w->aOff[i]);
    uint32_t crcOffs = o->crc;

    qsort(w->aId, w->nRow, sizeof(IdOrd), cmp_idord);
    uint64_t offIds = o->off;
    o->crc = 0;
    for (uint32_t i = 0; i < w->nRow; i++) {
        out_u64(o, (uint64_t)w->aId[i].id);
        out_u32(o, w->aId[i].ord);
        out_u32(o, 0);
    }
    uint32_t crcIds = o->crc;

    uint64_t offMaps = o->off;
    o->crc = 0;
    for (int m = 0; m < nMap; m++) {
        out_u32(o, aMap[m].iCol);
        out_u32(o, aMap[m].nNode);
        for (uint32_t i = 0; i < aMap[m].nNode; i++) out_u32(o, aMap[m].aNode[i]);
        out_pad8(o);
    }
    uint32_t crcMaps = o->crc;

    o->crc = 0;
    out_u32(o, (uint32_t)w->nFix);
    out_u32(o, 0);
    uint8_t *pChunk = w->nFix && w->iFixChunk ? malloc(FIX_CHUNK * 8) : NULL;
    if (w->nFix && w->iFixChunk && !pChunk) w->fixErrno = ENOMEM;
    for (int j = 0; j < w->nFix && !w->fixErrno; j++) {
        out_u32(o, w->aiFix[j]);
        out_u32(o, 0);
        /* The spilled chunks, then the one in memory (values are written
        ** as the machine keeps them: little-endian, as the row blocks). */
        for (uint32_t k = 0; k < w->iFixChunk && !w->fixErrno; k++) {
            size_t n = FIX_CHUNK * 8, d = 0;
            while (d < n) {
                ssize_t r = pread(w->fdFix, pChunk + d, n - d, fix_spill_off(w, k, j) + (off_t)d);
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) {
                    w->fixErrno = r < 0 && errno ? errno : EIO;
                    break;
                }
                d += (size_t)r;
            }
            out_put(o, pChunk, n);
        }
        uint32_t nLast = w->nOrd - w->iFixChunk * FIX_CHUNK;
        out_put(o, w->aFixVal + (size_t)j * FIX_CHUNK, 8 * (size_t)nLast);
        const uint64_t *aN = w->aFixNull + (size_t)j * null_words(w->nOrd);
        for (size_t k = 0; k < null_words(w->nOrd); k++) out_u64(o, aN[k]);
    }
    free(pChunk);
    if (w->fixErrno) {
        int e = w->fixErrno;
        int rc = lp_err_set(err, e == ENOMEM ? LP_NOMEM : LP_IOERR, "cannot write %s: its columns: %s",
                            w->zPath, strerror(e));
        if (w->zText) unlink(w->zText); /* finished above, so abort leaves it */
        rowfile_writer_abort(w);
        return rc;
    }
    uint32_t crcCols = o->crc;

    uint8_t f[RF_FTR] = {0};
    put_u64le(f, offOffs);
    put_u64le(f + 8, offIds);
    put_u64le(f + 16, offMaps);
    put_u32le(f + 24, w->nBlk);
    put_u32le(f + 28, crcRows);
    put_u32le(f + 32, crcOffs);
    put_u32le(f + 36, crcIds);
    put_u32le(f + 40, crcMaps);
    put_u32le(f + 44, crcCols);
    put_u32le(f + 48, crc32c_update(0, f, 48));
    memcpy(f + 52, "LPRE", 4);
    out_put(o, f, RF_FTR);

    uint8_t h[RF_HDR] = "LPROWS\0";
    put_u32le(h + 8, RF_VERSION);
    put_u32le(h + 12, w->nCol);
    put_u32le(h + 16, w->nOrd);
    put_u32le(h + 20, w->nRow);
    put_u32le(h + 24, (uint32_t)nMap);
    put_u32le(h + 28, crc32c_update(0, h, 28));
    int rc = out_close_with_header(o, h, RF_HDR, w->zPath, err);
    if (rc != LP_OK && w->zText) unlink(w->zText);
    writer_free(w);
    return rc;
}

/* ---------------------------------------------------------------- reading */

static int corrupt(LpError *err, const char *zName, uint64_t off, const char *zWhat) {
    return lp_err_set(err, LP_CORRUPT, "%s is damaged at offset %llu: %s", zName,
                      (unsigned long long)off, zWhat);
}

/* The text file (f->t, f->nT), when there is one: stored blocks in
** order, each a zstd frame that says its size. */
static int parse_text(RowFile *f, const char *zName, int bCrc, LpError *err) {
    const uint8_t *a = f->t;
    size_t n = f->nT;
    if (n < TF_HDR + TF_FTR) return corrupt(err, zName, n, "file too short");
    if (memcmp(a, "LPTEXT\0\0", 8) != 0) return corrupt(err, zName, 0, "not a text file (bad magic)");
    if (get_u32le(a + 8) != TF_VERSION) {
        return lp_err_set(err, LP_CORRUPT, "%s has format version %u; this build reads %d", zName,
                          get_u32le(a + 8), TF_VERSION);
    }
    if (bCrc && get_u32le(a + 12) != crc32c_update(0, a, 12)) return corrupt(err, zName, 12, "header checksum mismatch");
    const uint8_t *ft = a + n - TF_FTR;
    if (memcmp(ft + 28, "LPTE", 4) != 0) return corrupt(err, zName, n - 4, "bad footer magic");
    if (bCrc && get_u32le(ft + 24) != crc32c_update(0, ft, 24)) {
        return corrupt(err, zName, n - TF_FTR + 24, "footer checksum mismatch");
    }
    uint64_t offSidx = get_u64le(ft), end = n - TF_FTR;
    f->nBlock = get_u32le(ft + 8);
    if (offSidx < TF_HDR || offSidx % 8 || offSidx > end || end - offSidx != 16 * (uint64_t)f->nBlock) {
        return corrupt(err, zName, n - TF_FTR, "section offsets do not fit the file");
    }
    if (bCrc && crc32c_update(0, a + TF_HDR, offSidx - TF_HDR) != get_u32le(ft + 12)) {
        return corrupt(err, zName, TF_HDR, "stored blocks checksum mismatch");
    }
    if (bCrc && crc32c_update(0, a + offSidx, end - offSidx) != get_u32le(ft + 16)) {
        return corrupt(err, zName, offSidx, "block index checksum mismatch");
    }
    f->pSidx = a + offSidx;
    uint64_t prevBlk = TF_HDR;
    for (uint32_t b = 0; b < f->nBlock; b++) {
        const uint8_t *e = f->pSidx + 16 * (size_t)b;
        uint64_t off = get_u64le(e);
        uint32_t nZ = get_u32le(e + 8), nRaw = get_u32le(e + 12);
        if (off < prevBlk || off % 8 || off > offSidx || nZ > offSidx - off ||
            ZSTD_getFrameContentSize(a + off, nZ) != (unsigned long long)nRaw) {
            return corrupt(err, zName, offSidx + 16 * (uint64_t)b, "stored block out of place");
        }
        prevBlk = off + nZ;
    }
    return LP_OK;
}

/* The COLS section, [off, end): each column in place, ascending. */
static int parse_cols(RowFile *f, const char *zName, uint64_t off, uint64_t end, uint32_t crc, int bCrc,
                      LpError *err) {
    const uint8_t *a = f->a;
    if (off > end) return corrupt(err, zName, end, "node maps run past their section");
    if (bCrc && crc32c_update(0, a + off, end - off) != crc) {
        return corrupt(err, zName, off, "columns section checksum mismatch");
    }
    if (end - off < 8) return corrupt(err, zName, off, "columns section too short");
    uint32_t nFix = get_u32le(a + off);
    if (nFix > f->nCol) return corrupt(err, zName, off, "more fixed-width columns than columns");
    uint64_t nPer = 8 + 8 * (uint64_t)f->nOrd + 8 * (uint64_t)null_words(f->nOrd);
    off += 8;
    if ((end - off) / nPer < nFix) return corrupt(err, zName, off, "columns run past their section");
    f->apFix = calloc(nFix ? nFix : 1, sizeof(uint8_t *));
    f->aiFix = calloc(nFix ? nFix : 1, sizeof(uint32_t));
    if (!f->apFix || !f->aiFix) return lp_err_set(err, LP_NOMEM, "out of memory opening %s", zName);
    int64_t prev = -1;
    for (uint32_t j = 0; j < nFix; j++) {
        if (end - off < nPer) return corrupt(err, zName, off, "column runs past its section");
        uint32_t iCol = get_u32le(a + off);
        if (iCol >= f->nCol || (int64_t)iCol <= prev) {
            return corrupt(err, zName, off, "column number out of order or out of range");
        }
        prev = iCol;
        f->aiFix[j] = iCol;
        f->apFix[j] = a + off + 8;
        f->nFix = j + 1;
        off += nPer;
    }
    if (off != end) return corrupt(err, zName, off, "columns do not fill their section");
    return LP_OK;
}

static int parse(RowFile *f, const char *zName, const char *zTextName, int flags, RowCheckFn xCheck,
                 void *ctx, LpError *err) {
    const uint8_t *a = f->a;
    size_t n = f->n;
    int bCrc = !(flags & ROWFILE_NOCHECKSUM);
    if (f->t) {
        int rc = parse_text(f, zTextName, bCrc, err);
        if (rc != LP_OK) return rc;
    }
    if (n < RF_HDR + RF_FTR) return corrupt(err, zName, n, "file too short");
    if (memcmp(a, "LPROWS\0\0", 8) != 0) return corrupt(err, zName, 0, "not a rows file (bad magic)");
    uint32_t version = get_u32le(a + 8);
    if (version != RF_VERSION && version != RF_VERSION_NOCOLS) {
        return lp_err_set(err, LP_CORRUPT, "%s has format version %u; this build reads %d and %d", zName,
                          version, RF_VERSION_NOCOLS, RF_VERSION);
    }
    if (bCrc && get_u32le(a + 28) != crc32c_update(0, a, 28)) {
        return corrupt(err, zName, 28, "header checksum mismatch");
    }
    const uint8_t *ft = a + n - RF_FTR;
    if (memcmp(ft + 52, "LPRE", 4) != 0) return corrupt(err, zName, n - 4, "bad footer magic");
    if (bCrc && get_u32le(ft + 48) != crc32c_update(0, ft, 48)) {
        return corrupt(err, zName, n - RF_FTR + 48, "footer checksum mismatch");
    }
    f->nCol = get_u32le(a + 12);
    f->nOrd = get_u32le(a + 16);
    f->nRow = get_u32le(a + 20);
    f->nMap = get_u32le(a + 24);
    if (get_u32le(ft + 24) != f->nBlock) {
        return f->t ? corrupt(err, zName, n - RF_FTR + 24, "its text file has another number of blocks")
                    : corrupt(err, zName, n - RF_FTR + 24, "its text file is missing");
    }
    uint64_t offOffs = get_u64le(ft), offIds = get_u64le(ft + 8), offMaps = get_u64le(ft + 16);
    uint64_t end = n - RF_FTR;
    if (f->nRow > f->nOrd || offOffs < RF_HDR || offOffs % 8 ||
        offIds != offOffs + 8 * (uint64_t)f->nOrd || offMaps != offIds + 16 * (uint64_t)f->nRow ||
        offMaps > end) {
        return corrupt(err, zName, n - RF_FTR, "section offsets do not fit the file");
    }
    if (bCrc) {
        /* MAPS's end is known once it is parsed (below). */
        static const char *const az[3] = {"rows", "offsets", "id index"};
        const uint64_t aStart[4] = {RF_HDR, offOffs, offIds, offMaps};
        for (int s = 0; s < 3; s++) {
            if (crc32c_update(0, a + aStart[s], aStart[s + 1] - aStart[s]) !=
                get_u32le(ft + 28 + 4 * s)) {
                char z[64];
                snprintf(z, sizeof(z), "%s section checksum mismatch", az[s]);
                return corrupt(err, zName, aStart[s], z);
            }
        }
    }
    f->offOffs = offOffs;
    f->pOffs = a + offOffs;
    f->pIds = a + offIds;
    /* Every block: inside ROWS, aligned, valid; counted. */
    uint32_t nSeen = 0;
    uint64_t prevEnd = RF_HDR;
    for (uint32_t i = 0; i < f->nOrd; i++) {
        uint64_t off = get_u64le(f->pOffs + 8 * (size_t)i);
        if (!off) continue;
        if (off < prevEnd || off % 8 || off > offOffs || offOffs - off < 16) {
            return corrupt(err, zName, offOffs + 8 * (uint64_t)i, "row offset out of place");
        }
        uint32_t nByte = get_u32le(a + off + 8);
        int64_t id;
        if (nByte < 16 || off + nByte > offOffs || !xCheck(ctx, f, a + off, nByte, &id)) {
            return corrupt(err, zName, off, "row block does not fit the table's schema");
        }
        prevEnd = off + nByte;
        nSeen++;
    }
    if (nSeen != f->nRow) return corrupt(err, zName, offOffs, "row count does not match the header");
    if (f->nRow < f->nOrd) {
        if (!(f->aNoRow = calloc(((size_t)f->nOrd + 63) / 64, 8))) {
            return lp_err_set(err, LP_NOMEM, "out of memory opening %s", zName);
        }
        for (uint32_t i = 0; i < f->nOrd; i++) {
            if (!get_u64le(f->pOffs + 8 * (size_t)i)) f->aNoRow[i / 64] |= 1ull << (i % 64);
        }
    }
    int64_t prevId = 0;
    uint32_t prevOrd = 0;
    f->bSorted = 1;
    for (uint32_t i = 0; i < f->nRow; i++) {
        const uint8_t *e = f->pIds + 16 * (size_t)i;
        int64_t id = (int64_t)get_u64le(e);
        uint32_t ord = get_u32le(e + 8);
        uint64_t off = ord < f->nOrd ? get_u64le(f->pOffs + 8 * (size_t)ord) : 0;
        if (id <= prevId || !off || (int64_t)get_u64le(a + off) != id) {
            return corrupt(err, zName, offIds + 16 * (uint64_t)i, "id index entry does not match its row");
        }
        if (i && ord < prevOrd) f->bSorted = 0;
        prevId = id;
        prevOrd = ord;
    }
    if (f->nMap > 1024) return corrupt(err, zName, 24, "too many node maps");
    f->apMap = calloc(f->nMap ? f->nMap : 1, sizeof(uint8_t *));
    if (!f->apMap) return lp_err_set(err, LP_NOMEM, "out of memory opening %s", zName);
    uint64_t off = offMaps;
    for (uint32_t m = 0; m < f->nMap; m++) {
        if (end - off < 8) return corrupt(err, zName, off, "node map runs past its section");
        uint32_t nNode = get_u32le(a + off + 4);
        if ((end - off - 8) / 4 < nNode) return corrupt(err, zName, off, "node map runs past its section");
        f->apMap[m] = a + off;
        for (uint32_t i = 0; i < nNode; i++) {
            uint32_t ord = get_u32le(a + off + 8 + 4 * (uint64_t)i);
            if (ord != UINT32_MAX && ord >= f->nOrd) {
                return corrupt(err, zName, off + 8 + 4 * (uint64_t)i, "node map names no ordinal");
            }
        }
        off += 8 + 4 * (uint64_t)nNode;
        off = (off + 7) & ~(uint64_t)7;
    }
    if (bCrc && crc32c_update(0, a + offMaps, off - offMaps) != get_u32le(ft + 40)) {
        return corrupt(err, zName, offMaps, "node maps section checksum mismatch");
    }
    if (version == RF_VERSION_NOCOLS) {
        if (off != end) return corrupt(err, zName, off, "node maps do not fill their section");
    } else {
        int rc = parse_cols(f, zName, off, end, bCrc ? get_u32le(ft + 44) : 0, bCrc, err);
        if (rc != LP_OK) return rc;
    }
    bloom_build(f);
    return LP_OK;
}

int rowfile_open_mem(const uint8_t *a, size_t n, const uint8_t *aText, size_t nText, const char *zName,
                     int flags, RowCheckFn xCheck, void *ctx, RowFile **pp, LpError *err) {
    *pp = NULL;
    RowFile *f = calloc(1, sizeof(*f));
    if (!f) return lp_err_set(err, LP_NOMEM, "out of memory opening %s", zName);
    f->a = a;
    f->n = n;
    f->t = aText;
    f->nT = nText;
    char *zText = NULL;
    int rc = (f->zName = strdup(zName)) && asprintf(&zText, "%s (text)", zName) >= 0
                 ? parse(f, zName, zText, flags, xCheck, ctx, err)
                 : lp_err_set(err, LP_NOMEM, "out of memory opening %s", zName);
    free(zText);
    if (rc != LP_OK) {
        free(f->apMap);
        free(f->apFix);
        free(f->aiFix);
        free(f->aNoRow);
        free(f->aBloom);
        free(f->zName);
        free(f);
        return rc;
    }
    *pp = f;
    return LP_OK;
}

/* Maps zPath into *pp, *pn: read-only, or (bWritable) private and
** writable: changes stay in this process's memory (copy on write). */
static int map_file(const char *zPath, int bWritable, const uint8_t **pp, size_t *pn, LpError *err) {
    int fd = open(zPath, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int rc = lp_err_set(err, LP_IOERR, "cannot open %s: %s", zPath, strerror(errno));
        if (fd >= 0) close(fd);
        return rc;
    }
    size_t n = (size_t)st.st_size;
    void *p = n ? mmap(NULL, n, bWritable ? PROT_READ | PROT_WRITE : PROT_READ,
                       bWritable ? MAP_PRIVATE : MAP_SHARED, fd, 0)
                : MAP_FAILED;
    int e = errno;
    close(fd);
    if (!n) return corrupt(err, zPath, 0, "file is empty");
    if (p == MAP_FAILED) return lp_err_set(err, LP_IOERR, "cannot map %s: %s", zPath, strerror(e));
    *pp = p;
    *pn = n;
    return LP_OK;
}

int rowfile_open(const char *zPath, const char *zTextPath, RowCheckFn xCheck, void *ctx, RowFile **pp,
                 LpError *err) {
    *pp = NULL;
    const uint8_t *a = NULL, *t = NULL;
    size_t n = 0, nT = 0;
    int rc = map_file(zPath, 1, &a, &n, err); /* rows may be changed in place */
    if (rc == LP_OK && zTextPath) rc = map_file(zTextPath, 0, &t, &nT, err);
    if (rc == LP_OK) {
        RowFile *f = calloc(1, sizeof(*f));
        if (!f) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory opening %s", zPath);
        } else {
            *f = (RowFile){.a = a, .n = n, .t = t, .nT = nT};
            if (!(f->zName = strdup(zPath))) {
                rc = lp_err_set(err, LP_NOMEM, "out of memory opening %s", zPath);
            } else {
                rc = parse(f, zPath, zTextPath, 0, xCheck, ctx, err);
            }
            if (rc == LP_OK) {
                f->bMapped = 1;
                *pp = f;
                return LP_OK;
            }
            free(f->apMap);
            free(f->apFix);
            free(f->aiFix);
            free(f->aNoRow);
            free(f->aBloom);
            free(f->zName);
            free(f);
        }
    }
    if (a) munmap((void *)a, n);
    if (t) munmap((void *)t, nT);
    return rc;
}

/* ---------------------------------------------------------------- block cache */

/* Decompressed stored blocks, shared by every reader in the process: a
** hash on (file, block) and an LRU list, under one mutex; decompression
** happens outside it. A reader pins the block it uses; unpinned blocks
** are dropped oldest first past CACHE_BUDGET bytes. rowfile_close drops
** the file's blocks (none may be pinned then: its readers are gone), so a
** file's address is never looked up after it is freed. */
#define CACHE_BUDGET (16u << 20)
#define CACHE_NHASH 4096

typedef struct CacheEnt CacheEnt;
struct CacheEnt {
    const RowFile *f;
    uint32_t b;
    uint32_t nPin;
    size_t n;
    CacheEnt *pHashNext;
    CacheEnt *pPrev, *pNext; /* LRU: head = most recent */
    uint8_t a[];
};

static struct {
    pthread_mutex_t mu;
    CacheEnt *apHash[CACHE_NHASH];
    CacheEnt *pHead, *pTail;
    size_t nByte;
    uint64_t nHit, nMiss;
} g_cache = {PTHREAD_MUTEX_INITIALIZER, {0}, NULL, NULL, 0, 0, 0};

static size_t cache_slot(const RowFile *f, uint32_t b) {
    uint64_t h = (uint64_t)(uintptr_t)f * 0x9E3779B97F4A7C15ull ^ (uint64_t)b * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h >> 40) % CACHE_NHASH;
}

static void lru_unlink(CacheEnt *e) {
    if (e->pPrev) e->pPrev->pNext = e->pNext;
    else g_cache.pHead = e->pNext;
    if (e->pNext) e->pNext->pPrev = e->pPrev;
    else g_cache.pTail = e->pPrev;
    e->pPrev = e->pNext = NULL;
}

static void lru_push(CacheEnt *e) {
    e->pNext = g_cache.pHead;
    e->pPrev = NULL;
    if (g_cache.pHead) g_cache.pHead->pPrev = e;
    g_cache.pHead = e;
    if (!g_cache.pTail) g_cache.pTail = e;
}

static void cache_remove(CacheEnt *e) {
    CacheEnt **pp = &g_cache.apHash[cache_slot(e->f, e->b)];
    while (*pp != e) pp = &(*pp)->pHashNext;
    *pp = e->pHashNext;
    lru_unlink(e);
    g_cache.nByte -= e->n;
    free(e);
}

static CacheEnt *cache_find(const RowFile *f, uint32_t b) {
    for (CacheEnt *e = g_cache.apHash[cache_slot(f, b)]; e; e = e->pHashNext) {
        if (e->f == f && e->b == b) return e;
    }
    return NULL;
}

/* Drops unpinned blocks, oldest first, while over budget. */
static void cache_trim(void) {
    CacheEnt *e = g_cache.pTail;
    while (g_cache.nByte > CACHE_BUDGET && e) {
        CacheEnt *pPrev = e->pPrev;
        if (!e->nPin) cache_remove(e);
        e = pPrev;
    }
}

const uint8_t *rowfile_block_pin(const RowFile *f, uint32_t b, void **ppDctx, LpError *err) {
    pthread_mutex_lock(&g_cache.mu);
    CacheEnt *e = cache_find(f, b);
    if (e) {
        e->nPin++;
        lru_unlink(e);
        lru_push(e);
        g_cache.nHit++;
        pthread_mutex_unlock(&g_cache.mu);
        return e->a;
    }
    g_cache.nMiss++;
    pthread_mutex_unlock(&g_cache.mu);
    size_t n = rowfile_block_raw(f, b);
    CacheEnt *pNew = malloc(sizeof(CacheEnt) + (n ? n : 1));
    if (!pNew) {
        lp_err_set(err, LP_NOMEM, "out of memory reading %s", f->zName);
        return NULL;
    }
    if (!*ppDctx) *ppDctx = rowfile_dctx_new(); /* NULL: one made for the call */
    if (rowfile_block_read(f, b, pNew->a, *ppDctx, err) != LP_OK) {
        free(pNew);
        return NULL;
    }
    pthread_mutex_lock(&g_cache.mu);
    if ((e = cache_find(f, b)) != NULL) { /* another reader was quicker */
        free(pNew);
    } else {
        e = pNew;
        *e = (CacheEnt){f, b, 0, n, NULL, NULL, NULL};
        size_t h = cache_slot(f, b);
        e->pHashNext = g_cache.apHash[h];
        g_cache.apHash[h] = e;
        lru_push(e);
        g_cache.nByte += n;
    }
    e->nPin++;
    cache_trim();
    pthread_mutex_unlock(&g_cache.mu);
    return e->a;
}

void rowfile_block_unpin(const RowFile *f, uint32_t b) {
    pthread_mutex_lock(&g_cache.mu);
    CacheEnt *e = cache_find(f, b);
    if (e && e->nPin) e->nPin--;
    cache_trim();
    pthread_mutex_unlock(&g_cache.mu);
}

void rowfile_cache_stats(uint64_t *pnHit, uint64_t *pnMiss, size_t *pnByte) {
    pthread_mutex_lock(&g_cache.mu);
    *pnHit = g_cache.nHit;
    *pnMiss = g_cache.nMiss;
    *pnByte = g_cache.nByte;
    pthread_mutex_unlock(&g_cache.mu);
}

static void cache_drop_file(const RowFile *f) {
    pthread_mutex_lock(&g_cache.mu);
    for (uint32_t b = 0; b < f->nBlock && g_cache.nByte; b++) {
        CacheEnt *e = cache_find(f, b);
        if (e) cache_remove(e);
    }
    pthread_mutex_unlock(&g_cache.mu);
}

void rowfile_close(RowFile *f) {
    if (!f) return;
    cache_drop_file(f);
    if (f->bMapped) {
        munmap((void *)f->a, f->n);
        if (f->t) munmap((void *)f->t, f->nT);
    }
    free(f->apMap);
    free(f->apFix);
    free(f->aiFix);
    free(f->aNoRow);
    free(f->aBloom);
    free(f->zName);
    free(f);
}

uint32_t rowfile_nord(const RowFile *f) {
    return f->nOrd;
}

uint32_t rowfile_nrow(const RowFile *f) {
    return f->nRow;
}

uint32_t rowfile_ncol(const RowFile *f) {
    return f->nCol;
}

uint64_t rowfile_size(const RowFile *f) {
    return f->n;
}

int rowfile_owns(const RowFile *f, const void *p) {
    const uint8_t *q = p;
    return q >= f->a + RF_HDR && q < f->a + f->offOffs;
}

uint32_t rowfile_nblock(const RowFile *f) {
    return f->nBlock;
}

uint32_t rowfile_block_raw(const RowFile *f, uint32_t b) {
    return b < f->nBlock ? get_u32le(f->pSidx + 16 * (size_t)b + 12) : 0;
}

void *rowfile_dctx_new(void) {
    return ZSTD_createDCtx();
}

void rowfile_dctx_free(void *pDctx) {
    ZSTD_freeDCtx(pDctx);
}

int rowfile_block_read(const RowFile *f, uint32_t b, void *buf, void *pDctx, LpError *err) {
    if (b >= f->nBlock) return lp_err_set(err, LP_INTERNAL, "stored block %u of %u", b, f->nBlock);
    const uint8_t *e = f->pSidx + 16 * (size_t)b;
    uint64_t off = get_u64le(e);
    uint32_t nZ = get_u32le(e + 8), nRaw = get_u32le(e + 12);
    size_t r = pDctx ? ZSTD_decompressDCtx(pDctx, buf, nRaw, f->t + off, nZ) : ZSTD_decompress(buf, nRaw, f->t + off, nZ);
    if (ZSTD_isError(r) || r != nRaw) {
        return lp_err_set(err, LP_CORRUPT, "%s is damaged at offset %llu: stored block %u does not decompress (%s)",
                          f->zName, (unsigned long long)off, b, ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short");
    }
    return LP_OK;
}

const void *rowfile_row(const RowFile *f, uint32_t i) {
    uint64_t off = i < f->nOrd ? get_u64le(f->pOffs + 8 * (size_t)i) : 0;
    return off ? f->a + off : NULL;
}

void *rowfile_row_mut(RowFile *f, uint32_t i) {
    return (void *)rowfile_row(f, i);
}

const uint64_t *rowfile_column(const RowFile *f, uint32_t iCol, const uint64_t **paNull) {
    const uint8_t *p = NULL;
    for (uint32_t j = 0; j < f->nFix && !p; j++) {
        if (f->aiFix[j] == iCol) p = f->apFix[j];
    }
    if (!p) return NULL;
    /* 8-byte aligned in a mapping (every section is); rowfile_open_mem's
    ** callers (the fuzz target) do not read values. */
    if (paNull) *paNull = (const uint64_t *)(const void *)(p + 8 * (size_t)f->nOrd);
    return (const uint64_t *)(const void *)p;
}

const uint8_t *rowfile_ids(const RowFile *f, uint32_t *pn) {
    *pn = f->nRow;
    return f->pIds;
}

const uint64_t *rowfile_norow(const RowFile *f) {
    return f->aNoRow;
}

uint64_t *rowfile_column_mut(RowFile *f, uint32_t iCol, uint64_t **paNull) {
    const uint64_t *aNull = NULL;
    uint64_t *a = (uint64_t *)rowfile_column(f, iCol, &aNull);
    if (paNull) *paNull = (uint64_t *)aNull;
    return a;
}

int64_t rowfile_find(const RowFile *f, int64_t id) {
    if (!bloom_maybe(f, id)) return -1;
    size_t lo = 0, hi = f->nRow;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t x = (int64_t)get_u64le(f->pIds + 16 * mid);
        if (x == id) return get_u32le(f->pIds + 16 * mid + 8);
        if (x < id) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

int64_t rowfile_min_id(const RowFile *f) {
    return f->nRow ? (int64_t)get_u64le(f->pIds) : 0;
}

int rowfile_sorted(const RowFile *f) {
    return f->bSorted;
}

int64_t rowfile_max_id(const RowFile *f) {
    return f->nRow ? (int64_t)get_u64le(f->pIds + 16 * ((size_t)f->nRow - 1)) : 0;
}

const uint32_t *rowfile_map(const RowFile *f, uint32_t iCol, uint32_t *pn) {
    for (uint32_t m = 0; m < f->nMap; m++) {
        if (get_u32le(f->apMap[m]) != iCol) continue;
        *pn = get_u32le(f->apMap[m] + 4);
        return (const uint32_t *)(const void *)(f->apMap[m] + 8);
    }
    *pn = 0;
    return NULL;
}

/* ---------------------------------------------------------------- tombstones */

int rowfile_write_dead(const char *zPath, const Bitset *dead, LpError *err) {
    if (dead->nBit > UINT32_MAX) return lp_err_set(err, LP_LIMIT, "%s: too many ordinals", zPath);
    size_t nWord = BITSET_NWORD(dead->nBit);
    uint32_t nDead = 0;
    for (size_t i = 0; i < nWord; i++) nDead += (uint32_t)__builtin_popcountll(dead->aWord[i]);
    Out *o = malloc(sizeof(Out));
    if (!o) return lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
    memset(o, 0, offsetof(Out, buf));
    o->fd = open(zPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0) {
        free(o);
        return lp_err_set(err, LP_IOERR, "cannot create %s: %s", zPath, strerror(errno));
    }
    uint8_t h[DEAD_HDR] = "LPDEAD\0";
    put_u32le(h + 8, DEAD_VERSION);
    put_u32le(h + 12, (uint32_t)dead->nBit);
    put_u32le(h + 16, nDead);
    put_u32le(h + 20, nWord ? crc32c_update(0, dead->aWord, 8 * nWord) : 0);
    put_u32le(h + 24, crc32c_update(0, h, 24));
    out_put(o, h, DEAD_HDR);
    if (nWord) out_put(o, dead->aWord, 8 * nWord);
    int rc = out_close(o, zPath, err);
    free(o);
    return rc;
}

int rowfile_read_dead(const char *zPath, uint32_t nOrd, Bitset *dead, LpError *err) {
    *dead = (Bitset){0};
    int fd = open(zPath, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return lp_err_set(err, LP_IOERR, "cannot open %s: %s", zPath, strerror(errno));
    uint8_t h[DEAD_HDR];
    size_t nWord = BITSET_NWORD((size_t)nOrd);
    int rc = LP_OK;
    if (pread(fd, h, DEAD_HDR, 0) != DEAD_HDR || memcmp(h, "LPDEAD\0\0", 8) != 0 ||
        get_u32le(h + 8) != DEAD_VERSION || get_u32le(h + 24) != crc32c_update(0, h, 24) ||
        get_u32le(h + 28) != 0) {
        rc = corrupt(err, zPath, 0, "bad tombstone file header");
    } else if (get_u32le(h + 12) != nOrd) {
        rc = corrupt(err, zPath, 12, "tombstone file does not match its segment's size");
    } else if (bitset_init(dead, nOrd) != LP_OK) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory reading %s", zPath);
    } else if (nWord && pread(fd, dead->aWord, 8 * nWord, DEAD_HDR) != (ssize_t)(8 * nWord)) {
        rc = corrupt(err, zPath, DEAD_HDR, "tombstone file is truncated");
    } else if (nWord && crc32c_update(0, dead->aWord, 8 * nWord) != get_u32le(h + 20)) {
        rc = corrupt(err, zPath, DEAD_HDR, "tombstone bits checksum mismatch");
    } else if (nOrd % 64 && (dead->aWord[nWord - 1] >> (nOrd % 64))) {
        rc = corrupt(err, zPath, DEAD_HDR + 8 * (nWord - 1), "tombstone bits past the segment's end");
    }
    if (rc != LP_OK) bitset_free(dead);
    struct stat st;
    if (rc == LP_OK && (fstat(fd, &st) != 0 || (uint64_t)st.st_size != DEAD_HDR + 8 * nWord)) {
        bitset_free(dead);
        rc = corrupt(err, zPath, DEAD_HDR, "tombstone file has the wrong size");
    }
    close(fd);
    return rc;
}

/* ---------------------------------------------------------------- patches */

int rowfile_write_patch(const char *zPath, uint32_t nOrd, uint32_t nHead, const void *a, uint32_t nEntry,
                        LpError *err) {
    Out *o = malloc(sizeof(Out));
    if (!o) return lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
    memset(o, 0, offsetof(Out, buf));
    o->fd = open(zPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0) {
        free(o);
        return lp_err_set(err, LP_IOERR, "cannot create %s: %s", zPath, strerror(errno));
    }
    size_t nBody = (size_t)nEntry * (8 + nHead);
    uint8_t h[PATCH_HDR] = "LPPATCH";
    put_u32le(h + 8, PATCH_VERSION);
    put_u32le(h + 12, nOrd);
    put_u32le(h + 16, nHead);
    put_u32le(h + 20, nEntry);
    put_u32le(h + 24, nBody ? crc32c_update(0, a, nBody) : 0);
    put_u32le(h + 28, crc32c_update(0, h, 28));
    out_put(o, h, PATCH_HDR);
    if (nBody) out_put(o, a, nBody);
    int rc = out_close(o, zPath, err);
    free(o);
    return rc;
}

int rowfile_read_patch(const char *zPath, uint32_t nOrd, uint32_t nHead, uint8_t **pa, uint32_t *pnEntry,
                       LpError *err) {
    *pa = NULL;
    *pnEntry = 0;
    const uint8_t *m;
    size_t n;
    int rc = map_file(zPath, 0, &m, &n, err);
    if (rc != LP_OK) return rc;
    uint32_t nEntry = n >= PATCH_HDR ? get_u32le(m + 20) : 0;
    size_t nBody = (size_t)nEntry * (8 + (size_t)nHead);
    if (n < PATCH_HDR || memcmp(m, "LPPATCH\0", 8) != 0 || get_u32le(m + 8) != PATCH_VERSION ||
        get_u32le(m + 28) != crc32c_update(0, m, 28)) {
        rc = corrupt(err, zPath, 0, "bad patch file header");
    } else if (get_u32le(m + 12) != nOrd || get_u32le(m + 16) != nHead) {
        rc = corrupt(err, zPath, 12, "patch file does not match its segment");
    } else if (n != PATCH_HDR + nBody) {
        rc = corrupt(err, zPath, PATCH_HDR, "patch file has the wrong size");
    } else if (nBody && crc32c_update(0, m + PATCH_HDR, nBody) != get_u32le(m + 24)) {
        rc = corrupt(err, zPath, PATCH_HDR, "patch entries checksum mismatch");
    }
    for (uint32_t i = 0; rc == LP_OK && i < nEntry; i++) {
        const uint8_t *e = m + PATCH_HDR + (size_t)i * (8 + nHead);
        if (get_u32le(e) >= nOrd || (i && get_u32le(e) <= get_u32le(e - 8 - nHead)) || get_u32le(e + 4)) {
            rc = corrupt(err, zPath, (uint64_t)(e - m), "patch entry out of order");
        }
    }
    if (rc == LP_OK && nBody && !(*pa = malloc(nBody))) rc = lp_err_set(err, LP_NOMEM, "out of memory reading %s", zPath);
    if (rc == LP_OK) {
        if (nBody) memcpy(*pa, m + PATCH_HDR, nBody);
        *pnEntry = nEntry;
    }
    munmap((void *)m, n);
    return rc;
}
