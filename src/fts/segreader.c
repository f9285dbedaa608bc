/*
** segreader.c — reads a sealed full-text segment (format: segwriter.c) and
** serves it as an FtsSource (source.h); API and contract in segment.h.
**
** Open. The whole structure outside the key regions is verified once:
** header, footer, the tiling of the sections, their checksums, the
** dictionary index (increasing offsets inside the dictionary) and the
** doc lengths (valid widths, exact size). The per-field length sums that
** FtsSource.aSumLen exposes are computed then.
**
** Reads. The dictionary and postings are decoded lazily, each value
** checked as it is read: a dictionary entry's lengths must keep its
** regions inside the data section, df must be 1..nDocs, a block's bytes
** must lie inside its key's region and decode to exactly its length, its
** documents must end at its skip entry's lastDoc (which must be below
** nDocs and above the previous block's), and so on. Every loop is bounded
** by a count or a byte range from the file that the checks keep finite.
**
** Cursors. A cursor decodes one block at a time into aDoc/aTf; xNext and
** xAdvance within the block index those arrays, and moving to another
** block finds it by its lastDoc in the fixed-width skip entries (galloping
** from the current block, then binary search). A list of fewer than 128
** postings has no skip entries: it is decoded whole when the cursor opens
** (its impact is needed then anyway). Positions are read lazily: the
** cursor remembers where the positions of a posting of the current block
** start and skips forward from there (tf varints per posting).
**
** Infix filter. A wildcard that does not start with its literal part
** (`*cat*`, `?at`) cannot be a range of the sorted dictionary: xScanHas
** reads only the dictionary blocks that may hold its keys, by the infix
** filter (infix.h): for every 3-byte string (trigram) found in some key's
** term, the ascending list of the blocks whose keys hold it; a scan
** intersects the lists of its strings' trigrams and decodes only the
** blocks left. A file written with it (flag INFIX: tables with
** min_infix_len) holds it in its INFIX section, checked at open and read
** in place. Without it, the first such scan builds it in memory from the
** dictionary (about 17 scans' time: 25 ms and 0.7 MB for unstemmed
** SciFact's 46,000 keys) and keeps it for the segment's life. Either way
** it is 4 bytes per distinct trigram of each block (FtsSegInfo.szInfix).
** With flag INFIX_EXACT the filter holds the exact forms' keys only: a
** scan of a range of other keys reads it whole.
** A key is never left out unless it lacks one of the strings, so the
** callers' own check stays exact.
*/
#include "fts/segment.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "fts/codec.h"
#include "fts/infix.h"
#include "fts/lower.h"
#include "fts/segment_int.h"
#include "util/crc32c.h"
#include "util/varint.h"
#include "util/vec.h"

struct FtsSegment {
    FtsSource src;                   /* the interface handed out; first member */
    char *zName;                     /* file name for messages (owned) */
    const uint8_t *a;                /* the file's bytes */
    size_t n;                        /* their count */
    int bMapped;                     /* a is this segment's mmap, unmapped on close */
    uint32_t nDocs;                  /* documents */
    int nFields;                     /* full-text fields */
    const uint8_t *pData;            /* data section ... */
    uint64_t nData;                  /* ... its size without the padding */
    const uint8_t *pDict;            /* dictionary section ... */
    uint64_t nDict;                  /* ... its size */
    const uint8_t *pIdx;             /* dictionary index: nBlk uint32 */
    uint64_t nBlk;                   /* dictionary blocks */
    uint32_t K;                      /* keys per dictionary block */
    uint64_t nTerms;                 /* keys, from the footer */
    uint64_t nPostings;              /* sum of df, from the footer */
    uint64_t nPositions;             /* sum of cf, from the footer */
    uint64_t aSecSize[SEG_NSECTION]; /* section sizes, for fts_segr_info */
    const uint8_t **apLen;           /* per field: its lengths */
    uint8_t *aLenW;                  /* per field: their width, 0 1 2 or 4 */
    uint64_t *aSumLen;               /* per field: sum of its lengths (src.aSumLen) */
    int bEarlier;                    /* flag EARLIER: entries hold nEarlier */
    uint64_t *aFirst8;               /* per dictionary block: its first key's first 8
                                     ** bytes, big-endian, zero-padded (seg_first8),
                                     ** so dict_seek's binary search compares integers
                                     ** in memory; NULL when a block start is
                                     ** malformed (dict_seek then decodes, and says
                                     ** how) or memory ran out */
    pthread_mutex_t muInfix;         /* guards infix's building */
    FtsInfix infix;                  /* the infix filter (see the top) ... */
    int bInfix;                      /* ... once read from the file or built */
    int bInfixExact;                 /* the file's filter holds the exact forms'
                                     ** keys only (SEG_FLAG_INFIX_EXACT) */
    uint64_t szInfixSec;             /* the INFIX section's size, or 0 */
};

/* One dictionary entry, decoded. */
typedef struct SegKey {
    uint8_t aKey[FTS_MAX_KEY]; /* the key */
    int nKey;                  /* its length */
    uint32_t df;               /* documents */
    uint64_t cf;               /* occurrences */
    uint32_t nEarlier;         /* FtsTermInfo.nEarlier */
    uint32_t doc1;             /* df == 1: the document */
    const uint8_t *pPost;      /* postings region (in the data section) ... */
    uint64_t nPost;            /* ... its length */
    const uint8_t *pPos;       /* positions region (data, or dictionary: inline) ... */
    uint64_t nPos;             /* ... its length */
    int bInline;               /* the positions are in the dictionary entry */
    uint64_t entryOff;         /* where its entry starts in the dictionary ... */
    uint64_t entryData;        /* ... the data offset of its regions ... */
    uint64_t entryBlk;         /* ... its block ... */
    uint32_t entryKey;         /* ... and index in the block (xOpenFound) */
} SegKey;

/* A forward walk over the dictionary. */
typedef struct DictIter {
    FtsSegment *seg;         /* segment walked (not owned) */
    uint64_t iBlk;           /* current block */
    const uint8_t *p, *pEnd; /* unread bytes of the block */
    uint32_t iKey, nKeyBlk;  /* keys read from the block, keys in it */
    uint64_t dataOff;        /* data offset of the next key's regions */
    int bStrict;             /* fts_segr_check: also verify tiling */
    SegKey k;                /* the key last read */
} DictIter;

typedef struct SegCursor {
    FtsPostings base;             /* the interface; first member */
    FtsSegment *seg;              /* segment read (not owned) */
    int iField;                   /* the key's field */
    uint32_t nBlk;                /* blocks: 0 (empty cursor), 1, or ceil(df/128) */
    uint32_t nFull;               /* of which packed */
    uint32_t lastDoc;             /* last document of the list (lists < 128) */
    const uint8_t *pSkip;         /* skip entries; NULL for lists of < 128 */
    uint64_t nW;                  /* bits per skip entry */
    uint8_t aOff[SEG_NSKIP];      /* bit offset of each field in an entry */
    uint8_t aW[SEG_NSKIP];        /* and its width */
    const uint8_t *pBlk;          /* block data ... */
    uint64_t nBlkByte;            /* ... its length */
    const uint8_t *pPos;          /* positions region ... */
    uint64_t nPos;                /* ... its length */
    uint32_t iBlk;                /* block in aDoc/aTf; UINT32_MAX before the first */
    int i;                        /* current posting in it; -1 before its first */
    int n;                        /* postings in it; 0 once the list has ended */
    uint32_t jShallow;            /* block of the last xShallow answer */
    const uint8_t *pPosCur;       /* positions of posting iPosCur of the block */
    const uint8_t *pPosNext;      /* end of the last positions decoded */
    const uint8_t *pPosLast;      /* positions of posting iPosLast, the last decoded */
    const uint8_t *pPosEnd;       /* end of the block's positions */
    int iPosCur;                  /* see pPosCur */
    int iPosLast;                 /* see pPosLast; -1: none in this block */
    int rc;                       /* LP_OK, or the error that ended the list */
    LpError err;                  /* its message */
    uint32_t aDoc[FTS_BLOCK + 4]; /* documents of block iBlk; UINT32_MAX after the
                                  ** last (4 of them), for cur_find */
    uint32_t aTf[FTS_BLOCK];      /* their tf */
} SegCursor;

static const FtsPostingsVt seg_postings_vt;
static const FtsSourceVt seg_source_vt;

/* -------------------------------------------------------------- errors */

/* LP_CORRUPT naming the file and the file offset of the damage. */
static int seg_corrupt(const FtsSegment *seg, LpError *err, uint64_t off, const char *zFmt, ...)
    __attribute__((format(printf, 4, 5)));
static int seg_corrupt(const FtsSegment *seg, LpError *err, uint64_t off, const char *zFmt, ...) {
    char zMsg[LP_ERRMSG_MAX];
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(zMsg, sizeof(zMsg), zFmt, ap);
    va_end(ap);
    return lp_err_setpos(err, LP_CORRUPT, (int64_t)off,
                         "fts segment %s: corrupt: %s at offset %" PRIu64, seg->zName, zMsg, off);
}

/* File offset of a pointer into the file. */
static uint64_t seg_off(const FtsSegment *seg, const uint8_t *p) {
    return (uint64_t)(p - seg->a);
}

/* ------------------------------------------------------------------ open */

static const uint8_t *block_first_key(const FtsSegment *seg, uint64_t b, int *pnKey);

/* A key's first 8 bytes as a big-endian integer, zero-padded. Padding
** with the smallest byte keeps key order: seg_first8(a) < seg_first8(b)
** implies a < b, so only equal values need the keys' bytes compared. */
static inline uint64_t seg_first8(const uint8_t *key, int nKey) {
    uint64_t v = 0;
    if (nKey >= 8) {
        memcpy(&v, key, 8);
        return __builtin_bswap64(v);
    }
    for (int i = 0; i < 8; i++)
        v = v << 8 | (i < nKey ? key[i] : 0);
    return v;
}

/* Fills seg->aFirst8 (8 bytes a dictionary block, read once at open, when
** the checksums have just read every byte anyway). Left NULL when memory
** runs out or a block's start is malformed: dict_seek then reads the
** blocks' first keys from the file, and reports the damage. */
static void seg_first8_build(FtsSegment *seg) {
    if (seg->nBlk == 0) return;
    uint64_t *a = malloc(sizeof(uint64_t) * seg->nBlk);
    if (!a) return;
    for (uint64_t b = 0; b < seg->nBlk; b++) {
        int n;
        const uint8_t *p = block_first_key(seg, b, &n);
        if (!p) {
            free(a);
            return;
        }
        a[b] = seg_first8(p, n);
    }
    seg->aFirst8 = a;
}

/* Verifies header, footer and sections and fills seg. */
static int seg_verify(FtsSegment *seg, int flags, LpError *err) {
    const uint8_t *a = seg->a;
    size_t n = seg->n;
    /* Header first: magic, then its checksum before trusting any field. */
    if (n < SEG_HEADER_SIZE + SEG_FOOTER_SIZE) {
        return seg_corrupt(seg, err, 0, "file too small (%zu bytes)", n);
    }
    if (memcmp(a, SEG_MAGIC, 8) != 0) return seg_corrupt(seg, err, 0, "bad magic");
    int bCrc = !(flags & FTS_SEGR_NOCHECKSUM);
    if (bCrc && seg_get32(a + 28) != crc32c_update(0, a, 28)) {
        return seg_corrupt(seg, err, 28, "header checksum mismatch");
    }
    if (seg_get32(a + 8) != SEG_VERSION) {
        return seg_corrupt(seg, err, 8, "unknown format version %" PRIu32, seg_get32(a + 8));
    }
    if ((seg_get32(a + 20) & ~SEG_FLAGS_KNOWN) != 0 || seg_get32(a + 24) != 0) {
        return seg_corrupt(seg, err, 20, "unknown flags");
    }
    seg->bEarlier = (seg_get32(a + 20) & SEG_FLAG_EARLIER) != 0;
    seg->nDocs = seg_get32(a + 12);
    uint32_t nFields = seg_get32(a + 16);
    if (seg->nDocs > FTS_BEFORE_FIRST) {
        return seg_corrupt(seg, err, 12, "%" PRIu32 " documents", seg->nDocs);
    }
    if (nFields < 1 || nFields > FTS_MAX_FIELDS) {
        return seg_corrupt(seg, err, 16, "%" PRIu32 " fields", nFields);
    }
    seg->nFields = (int)nFields;

    /* The footer ends the file; a truncated file loses its end magic, so
    ** truncation is reported as such rather than as a checksum error. */
    uint64_t offFoot = n - SEG_FOOTER_SIZE;
    const uint8_t *f = a + offFoot;
    if (memcmp(f + 112, SEG_END_MAGIC, 8) != 0) {
        return seg_corrupt(seg, err, offFoot + 112, "bad footer magic (truncated file?)");
    }
    if (bCrc && seg_get32(f + 108) != crc32c_update(0, f, 108)) {
        return seg_corrupt(seg, err, offFoot + 108, "footer checksum mismatch");
    }
    /* (1): the sections tile [header, footer). */
    static const char *const azSec[SEG_NSECTION] = {"data", "dictionary", "dictionary index",
                                                    "doc lengths"};
    const uint8_t *ap[SEG_NSECTION];
    uint64_t next = SEG_HEADER_SIZE;
    for (int s = 0; s < SEG_NSECTION; s++) {
        uint64_t off = seg_get64(f + 16 * s), size = seg_get64(f + 16 * s + 8);
        if (off != next || size > offFoot - off) {
            return seg_corrupt(seg, err, offFoot + 16 * s,
                               "%s section at %" PRIu64 " size %" PRIu64 " outside its place",
                               azSec[s], off, size);
        }
        uint32_t crc = seg_get32(f + 64 + 4 * s);
        if (bCrc && crc32c_update(0, a + off, size) != crc) {
            return seg_corrupt(seg, err, off, "%s section checksum mismatch", azSec[s]);
        }
        ap[s] = a + off;
        seg->aSecSize[s] = size;
        next = off + size;
    }
    int bInfix = (seg_get32(a + 20) & SEG_FLAG_INFIX) != 0;
    if ((seg_get32(a + 20) & SEG_FLAG_INFIX_EXACT) && !bInfix) {
        return seg_corrupt(seg, err, 20, "flag INFIX_EXACT without INFIX");
    }
    seg->bInfixExact = (seg_get32(a + 20) & SEG_FLAG_INFIX_EXACT) != 0;
    if (next != offFoot && !bInfix) {
        return seg_corrupt(seg, err, next, "%" PRIu64 " unaccounted bytes before the footer",
                           offFoot - next);
    }
    uint64_t offInfix = next; /* with INFIX: [offInfix, offFoot) */
    seg->nTerms = seg_get64(f + 80);
    seg->nPostings = seg_get64(f + 88);
    seg->nPositions = seg_get64(f + 96);
    seg->K = seg_get32(f + 104);
    if (seg->K < 1 || seg->K > SEG_MAX_DICT_BLOCK) {
        return seg_corrupt(seg, err, offFoot + 104, "%" PRIu32 " keys per dictionary block",
                           seg->K);
    }

    if (seg->aSecSize[SEG_SEC_DATA] < SEG_DATA_PAD) {
        return seg_corrupt(seg, err, SEG_HEADER_SIZE, "data section without its padding");
    }
    seg->pData = ap[SEG_SEC_DATA];
    seg->nData = seg->aSecSize[SEG_SEC_DATA] - SEG_DATA_PAD;

    /* The dictionary index: one offset per block, strictly increasing
    ** inside the dictionary, the first 0. */
    seg->pDict = ap[SEG_SEC_DICT];
    seg->nDict = seg->aSecSize[SEG_SEC_DICT];
    seg->pIdx = ap[SEG_SEC_INDEX];
    seg->nBlk = seg->nTerms / seg->K + (seg->nTerms % seg->K != 0);
    if (seg->aSecSize[SEG_SEC_INDEX] / 4 != seg->nBlk || seg->aSecSize[SEG_SEC_INDEX] % 4) {
        return seg_corrupt(seg, err, seg_off(seg, seg->pIdx),
                           "dictionary index of %" PRIu64 " bytes for %" PRIu64 " keys",
                           seg->aSecSize[SEG_SEC_INDEX], seg->nTerms);
    }
    if ((seg->nBlk == 0) != (seg->nDict == 0)) {
        return seg_corrupt(seg, err, seg_off(seg, seg->pDict),
                           "dictionary size %" PRIu64 " for %" PRIu64 " keys", seg->nDict,
                           seg->nTerms);
    }
    for (uint64_t b = 0; b < seg->nBlk; b++) {
        uint32_t o = seg_get32(seg->pIdx + 4 * b);
        if (b == 0 ? o != 0 : o <= seg_get32(seg->pIdx + 4 * (b - 1)) || o >= seg->nDict) {
            return seg_corrupt(seg, err, seg_off(seg, seg->pIdx + 4 * b),
                               "dictionary block %" PRIu64 " at bad offset %" PRIu32, b, o);
        }
    }

    if (bInfix) {
        const char *zWhy;
        uint64_t at;
        if (fts_infix_decode(a + offInfix, offFoot - offInfix, offInfix, seg->nBlk, bCrc, &seg->infix, &zWhy,
                             &at) != 0) {
            return seg_corrupt(seg, err, offInfix + at, "%s", zWhy);
        }
        seg->bInfix = 1;
        seg->szInfixSec = offFoot - offInfix;
    }

    seg_first8_build(seg);

    /* Doc lengths: widths, then exactly nDocs lengths of each. */
    const uint8_t *pLen = ap[SEG_SEC_DOCLENS];
    uint64_t szLen = seg->aSecSize[SEG_SEC_DOCLENS];
    seg->apLen = calloc(nFields, sizeof(*seg->apLen));
    seg->aLenW = calloc(nFields, 1);
    seg->aSumLen = calloc(nFields, sizeof(uint64_t));
    if (!seg->apLen || !seg->aLenW || !seg->aSumLen) {
        return lp_err_set(err, LP_NOMEM, "fts segment %s: out of memory", seg->zName);
    }
    if (szLen < nFields) return seg_corrupt(seg, err, seg_off(seg, pLen), "doc lengths truncated");
    uint64_t need = nFields;
    for (uint32_t i = 0; i < nFields; i++) {
        uint8_t wd = pLen[i];
        if (wd != 0 && wd != 1 && wd != 2 && wd != 4) {
            return seg_corrupt(seg, err, seg_off(seg, pLen + i), "doc length width %u", wd);
        }
        seg->aLenW[i] = wd;
        seg->apLen[i] = pLen + need;
        need += (uint64_t)seg->nDocs * wd;
    }
    if (need != szLen) {
        return seg_corrupt(seg, err, seg_off(seg, pLen),
                           "doc lengths section of %" PRIu64 " bytes, %" PRIu64 " expected", szLen,
                           need);
    }
    /* FtsSource.aSumLen: BM25's average field length needs the totals,
    ** and computing them here costs one pass over a section the checksum
    ** pass has just read anyway. */
    for (int i = 0; i < seg->nFields; i++) {
        const uint8_t *p = seg->apLen[i];
        uint64_t sum = 0;
        switch (seg->aLenW[i]) {
        case 1:
            for (uint32_t d = 0; d < seg->nDocs; d++)
                sum += p[d];
            break;
        case 2:
            for (uint32_t d = 0; d < seg->nDocs; d++)
                sum += (uint32_t)p[2 * d] | (uint32_t)p[2 * d + 1] << 8;
            break;
        case 4:
            for (uint32_t d = 0; d < seg->nDocs; d++)
                sum += seg_get32(p + 4 * (size_t)d);
            break;
        }
        seg->aSumLen[i] = sum;
    }
    return LP_OK;
}

int fts_segr_open_mem(const uint8_t *a, size_t n, const char *zName, int flags, FtsSegment **ppSeg,
                      LpError *err) {
    *ppSeg = NULL;
    FtsSegment *seg = calloc(1, sizeof(*seg));
    if (!seg || !(seg->zName = strdup(zName))) {
        free(seg);
        return lp_err_set(err, LP_NOMEM, "fts segment %s: out of memory", zName);
    }
    pthread_mutex_init(&seg->muInfix, NULL);
    seg->a = a;
    seg->n = n;
    int rc = seg_verify(seg, flags, err);
    if (rc != LP_OK) {
        fts_segr_close(seg);
        return rc;
    }
    seg->src.vt = &seg_source_vt;
    seg->src.nDocs = seg->nDocs;
    seg->src.nFields = seg->nFields;
    seg->src.aSumLen = seg->aSumLen;
    *ppSeg = seg;
    return LP_OK;
}

int fts_segr_open(const char *zPath, FtsSegment **ppSeg, LpError *err) {
    *ppSeg = NULL;
    int fd = open(zPath, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return lp_err_set(err, LP_IOERR, "fts segment %s: cannot open: %s", zPath, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return lp_err_set(err, LP_IOERR, "fts segment %s: cannot stat: %s", zPath, strerror(e));
    }
    size_t n = (size_t)st.st_size;
    /* mmap refuses a length of 0: report small files before mapping. */
    if (n < SEG_HEADER_SIZE + SEG_FOOTER_SIZE) {
        close(fd);
        return lp_err_setpos(err, LP_CORRUPT, 0,
                             "fts segment %s: corrupt: file too small (%zu bytes) at offset 0",
                             zPath, n);
    }
    /* Read-only and shared: the pages are the page cache's, so every
    ** process and segment reading the file shares them; the descriptor
    ** is not needed once mapped. */
    void *a = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (a == MAP_FAILED) {
        return lp_err_set(err, LP_IOERR, "fts segment %s: cannot map: %s", zPath, strerror(e));
    }
    int rc = fts_segr_open_mem(a, n, zPath, 0, ppSeg, err);
    if (rc != LP_OK) {
        munmap(a, n);
        return rc;
    }
    (*ppSeg)->bMapped = 1;
    return LP_OK;
}

void fts_segr_close(FtsSegment *seg) {
    if (!seg) return;
    if (seg->bMapped) munmap((void *)seg->a, seg->n);
    free(seg->apLen);
    free(seg->aLenW);
    free(seg->aSumLen);
    free(seg->aFirst8);
    fts_infix_free(&seg->infix);
    pthread_mutex_destroy(&seg->muInfix);
    free(seg->zName);
    free(seg);
}

FtsSource *fts_segr_source(FtsSegment *seg) {
    return &seg->src;
}

/* ------------------------------------------------------------ doc lengths */

/* O(1): one load at a computed offset; out-of-range arguments give 0 (a
** document without the field), as source.h says. */
static uint32_t seg_doclen(const FtsSegment *seg, int iField, uint32_t doc) {
    if (iField < 0 || iField >= seg->nFields || doc >= seg->nDocs) return 0;
    const uint8_t *p = seg->apLen[iField];
    switch (seg->aLenW[iField]) {
    case 1:
        return p[doc];
    case 2:
        return (uint32_t)p[2 * (size_t)doc] | (uint32_t)p[2 * (size_t)doc + 1] << 8;
    case 4:
        return seg_get32(p + 4 * (size_t)doc);
    default:
        return 0;
    }
}

/* The smallest length in field iField (valid) of the documents a[0..n)
** (each below nDocs): one loop per width, as opening a short list takes
** the minimum over all of its documents. UINT32_MAX when n is 0. */
static uint32_t seg_minlen(const FtsSegment *seg, int iField, const uint32_t *a, int n) {
    const uint8_t *p = seg->apLen[iField];
    uint32_t m = UINT32_MAX;
    switch (seg->aLenW[iField]) {
    case 1:
        for (int i = 0; i < n; i++)
            if (p[a[i]] < m) m = p[a[i]];
        break;
    case 2:
        for (int i = 0; i < n; i++) {
            uint32_t v = (uint32_t)p[2 * (size_t)a[i]] | (uint32_t)p[2 * (size_t)a[i] + 1] << 8;
            if (v < m) m = v;
        }
        break;
    case 4:
        for (int i = 0; i < n; i++) {
            uint32_t v = seg_get32(p + 4 * (size_t)a[i]);
            if (v < m) m = v;
        }
        break;
    default:
        m = n ? 0 : UINT32_MAX;
    }
    return m;
}

static uint32_t src_doclen(FtsSource *s, int iField, uint32_t doc) {
    return seg_doclen((FtsSegment *)s, iField, doc);
}

/* ------------------------------------------------------------- dictionary */

/* Dictionary varints: most take one or two bytes, decoded here inline;
** the rest (and every malformed one) goes to util's strict decoder. */
static inline int dict_varint(const uint8_t **pp, const uint8_t *pEnd, uint64_t *pv) {
    const uint8_t *p = *pp;
    if (pEnd - p >= 2 && p[0] >= 0x80 && p[1] < 0x80 && p[1] != 0) {
        *pv = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        *pp = p + 2;
        return LP_OK;
    }
    return varint_get_u64(pp, pEnd, pv);
}

static inline int dict_varint32(const uint8_t **pp, const uint8_t *pEnd, uint32_t *pv) {
    uint64_t v;
    const uint8_t *p = *pp;
    if (dict_varint(&p, pEnd, &v) != LP_OK || v > UINT32_MAX) return LP_CORRUPT;
    *pv = (uint32_t)v;
    *pp = p;
    return LP_OK;
}

/* Positions it at the start of block b. A block ends where the next one
** starts (the last one at the end of the section): the index gives both. */
static int dict_block(DictIter *it, uint64_t b, LpError *err) {
    FtsSegment *seg = it->seg;
    uint64_t start = seg_get32(seg->pIdx + 4 * b);
    uint64_t end = b + 1 < seg->nBlk ? seg_get32(seg->pIdx + 4 * (b + 1)) : seg->nDict;
    const uint8_t *p = seg->pDict + start;
    uint64_t off;
    if (varint_get_u64(&p, seg->pDict + end, &off) != LP_OK || off > seg->nData) {
        return seg_corrupt(seg, err, seg_off(seg, seg->pDict + start),
                           "dictionary block %" PRIu64 ": bad data offset", b);
    }
    if (it->bStrict && off != it->dataOff) {
        return seg_corrupt(seg, err, seg_off(seg, seg->pDict + start),
                           "dictionary block %" PRIu64 ": data offset %" PRIu64 ", %" PRIu64
                           " expected",
                           b, off, it->dataOff);
    }
    it->iBlk = b;
    it->p = p;
    it->pEnd = seg->pDict + end;
    it->iKey = 0;
    it->nKeyBlk = b + 1 < seg->nBlk ? seg->K : (uint32_t)(seg->nTerms - b * seg->K);
    it->dataOff = off;
    it->k.nKey = 0;
    return LP_OK;
}

/* Before reading an entry: moves to the next block when the current one
** has been read. 1 when there is an entry to read, 0 at the end of the
** dictionary, or -LP_CORRUPT. */
static int dict_more(DictIter *it, LpError *err) {
    FtsSegment *seg = it->seg;
    if (it->iKey < it->nKeyBlk) return 1;
    if (it->bStrict && it->p != it->pEnd) {
        return -seg_corrupt(seg, err, seg_off(seg, it->p),
                            "dictionary block %" PRIu64 ": %td bytes after its last key", it->iBlk,
                            it->pEnd - it->p);
    }
    if (it->iBlk + 1 >= seg->nBlk) return 0;
    int rc = dict_block(it, it->iBlk + 1, err);
    return rc == LP_OK ? 1 : -rc;
}

/* An entry's key lengths, at *pp: NULL, or what is wrong. nPrev is the
** length of the block's previous key. */
static const char *entry_head(const DictIter *it, const uint8_t **pp, uint32_t nPrev,
                              uint32_t *pnShared, uint32_t *pnSuffix) {
    const uint8_t *p = *pp, *pEnd = it->pEnd;
    if (p >= pEnd) return "truncated key lengths";
    uint32_t nShared = *p >> 4, nSuffix = *p++ & 15;
    if ((nShared == 15 && dict_varint32(&p, pEnd, &nShared)) ||
        (nSuffix == 15 && dict_varint32(&p, pEnd, &nSuffix))) {
        return "truncated key lengths";
    }
    if (it->iKey == 0 ? nShared != 0 : nShared > nPrev) return "bad shared prefix length";
    if (nSuffix > FTS_MAX_KEY - nShared || nSuffix == 0 || nSuffix > (uint64_t)(pEnd - p)) {
        return "bad key length";
    }
    *pp = p;
    *pnShared = nShared;
    *pnSuffix = nSuffix;
    return NULL;
}

/* The rest of an entry, after its key's bytes, at *pp: fills k's counts
** and regions (not its key) and moves it->dataOff past them. iField is
** the key's first byte. NULL, or what is wrong. */
static const char *entry_body(DictIter *it, const uint8_t **pp, int iField, SegKey *k) {
    FtsSegment *seg = it->seg;
    const uint8_t *p = *pp, *pEnd = it->pEnd;
    uint64_t v, x = 0;
    /* (df-1)*2 + (cf == df), then cf-df-1 when cf != df. */
    if (dict_varint(&p, pEnd, &v) || (v >> 1) >= seg->nDocs) return "bad df";
    if (!(v & 1) && (dict_varint(&p, pEnd, &x) || x > UINT64_MAX - (v >> 1) - 2)) return "bad cf";
    k->df = (uint32_t)(v >> 1) + 1;
    k->cf = (v & 1) ? k->df : k->df + 1 + x;
    k->nPost = 0;
    k->nEarlier = iField == 0 ? 0 : FTS_EARLIER_UNKNOWN;
    if (iField > 0 && seg->bEarlier &&
        (dict_varint32(&p, pEnd, &k->nEarlier) || k->nEarlier > k->df)) {
        return "bad nEarlier";
    }
    int bInline = 0;
    if (k->df == 1) {
        if (dict_varint32(&p, pEnd, &k->doc1) || k->doc1 >= seg->nDocs) return "bad document";
        if (k->cf > UINT32_MAX) return "bad cf";
        if (k->cf == 1) {
            /* The single position, inline: the entry's varint is the
            ** positions region. */
            uint32_t pos;
            bInline = 1;
            k->pPos = p;
            if (dict_varint32(&p, pEnd, &pos)) return "bad inline position";
            k->nPos = (uint64_t)(p - k->pPos);
        }
    } else if (dict_varint(&p, pEnd, &k->nPost)) {
        return "bad postings length";
    }
    k->bInline = bInline;
    if (!bInline && dict_varint(&p, pEnd, &k->nPos)) return "bad positions length";
    /* The regions must stay inside the data section; every position
    ** takes at least one byte. */
    uint64_t off = it->dataOff, nPosData = bInline ? 0 : k->nPos;
    if (k->nPost > seg->nData - off || nPosData > seg->nData - off - k->nPost) {
        return "regions past the data section";
    }
    if (k->nPos < k->cf) return "positions region shorter than cf";
    k->pPost = seg->pData + off;
    if (!bInline) k->pPos = k->pPost + k->nPost;
    it->dataOff = off + k->nPost + nPosData;
    *pp = p;
    return NULL;
}

/* After entry_body: records where the entry read from p0 is and moves past
** it (its body ended at p). */
static void entry_done(DictIter *it, const uint8_t *p0, const uint8_t *p) {
    SegKey *k = &it->k;
    k->entryOff = (uint64_t)(p0 - it->seg->pDict);
    k->entryData = it->dataOff - k->nPost - (k->bInline ? 0 : k->nPos);
    k->entryBlk = it->iBlk;
    k->entryKey = it->iKey;
    it->p = p;
    it->iKey++;
}

static int entry_corrupt(const DictIter *it, const uint8_t *p0, const char *zWhat, LpError *err) {
    return -seg_corrupt(it->seg, err, seg_off(it->seg, p0),
                        "dictionary block %" PRIu64 " key %" PRIu32 ": %s", it->iBlk, it->iKey,
                        zWhat);
}

/* Reads the next key into it->k: 1, 0 at the end, or -LP_CORRUPT. */
static int dict_next(DictIter *it, LpError *err) {
    int rc = dict_more(it, err);
    if (rc != 1) return rc;
    /* The key is rebuilt in place: its first nShared bytes are still those
    ** of the previous key of the block. */
    const uint8_t *p = it->p, *p0 = p;
    SegKey *k = &it->k;
    uint32_t nShared, nSuffix;
    const char *zWhat = entry_head(it, &p, (uint32_t)k->nKey, &nShared, &nSuffix);
    if (!zWhat) {
        memcpy(k->aKey + nShared, p, nSuffix);
        k->nKey = (int)(nShared + nSuffix);
        p += nSuffix;
        zWhat = entry_body(it, &p, k->aKey[0], k);
    }
    if (zWhat) return entry_corrupt(it, p0, zWhat, err);
    entry_done(it, p0, p);
    return 1;
}

/* memcmp order, shorter first. */
static int key_cmp(const uint8_t *a, int na, const uint8_t *b, int nb) {
    int c = memcmp(a, b, (size_t)(na < nb ? na : nb));
    return c ? c : na - nb;
}

/* The first key of block b read straight from its bytes (a block's first
** key shares no prefix), without decoding the rest of its entry: the
** binary search of dict_seek compares only keys. NULL when the start of
** the block is malformed; dict_block/dict_next then say how. */
static const uint8_t *block_first_key(const FtsSegment *seg, uint64_t b, int *pnKey) {
    uint64_t start = seg_get32(seg->pIdx + 4 * b);
    uint64_t end = b + 1 < seg->nBlk ? seg_get32(seg->pIdx + 4 * (b + 1)) : seg->nDict;
    if (start >= end || end > seg->nDict) return NULL;
    const uint8_t *p = seg->pDict + start, *pEnd = seg->pDict + end;
    uint64_t off;
    uint32_t nSuffix;
    if (varint_get_u64(&p, pEnd, &off) != LP_OK || p >= pEnd || (*p >> 4) != 0) return NULL;
    nSuffix = *p++ & 15;
    if (nSuffix == 15 && dict_varint32(&p, pEnd, &nSuffix) != LP_OK) return NULL;
    if (nSuffix == 0 || nSuffix > FTS_MAX_KEY || nSuffix > (uint64_t)(pEnd - p)) return NULL;
    *pnKey = (int)nSuffix;
    return p;
}

/* Into *pc, the first key of block b compared with key (kFirst8 its
** seg_first8): LP_OK, or the error of a damaged block (it is used to
** read the block then, and left anywhere). */
static int block_cmp(FtsSegment *seg, uint64_t b, const uint8_t *key, int nKey, uint64_t kFirst8, DictIter *it,
                     int *pc, LpError *err) {
    if (seg->aFirst8 && seg->aFirst8[b] != kFirst8) {
        *pc = seg->aFirst8[b] < kFirst8 ? -1 : 1;
        return LP_OK;
    }
    int nFirst;
    const uint8_t *pFirst = block_first_key(seg, b, &nFirst);
    if (!pFirst) {
        /* Damaged: decode the entry for the error message. */
        int rc = dict_block(it, b, err);
        if (rc != LP_OK) return rc;
        rc = dict_next(it, err);
        if (rc < 0) return -rc;
        pFirst = it->k.aKey;
        nFirst = it->k.nKey;
    }
    *pc = key_cmp(pFirst, nFirst, key, nKey);
    return LP_OK;
}

/* Positions it at the last block from lo on whose first key is <= key
** (lo itself when none is), found by galloping from lo, then halving:
** a key near lo costs few comparisons. The block's keys are then read
** by dict_next. */
static int dict_seek_from(FtsSegment *seg, const uint8_t *key, int nKey, uint64_t lo, DictIter *it,
                          LpError *err) {
    it->seg = seg;
    it->bStrict = 0;
    uint64_t kFirst8 = seg_first8(key, nKey), hi = seg->nBlk - 1, step = 1;
    int c, rc;
    /* blocks lo .. lo + step / 2 start at or below key */
    while (lo + step <= hi) {
        if ((rc = block_cmp(seg, lo + step, key, nKey, kFirst8, it, &c, err)) != LP_OK) return rc;
        if (c > 0) {
            hi = lo + step - 1;
            break;
        }
        step *= 2;
    }
    lo += step / 2;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if ((rc = block_cmp(seg, mid, key, nKey, kFirst8, it, &c, err)) != LP_OK) return rc;
        if (c <= 0) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return dict_block(it, lo, err);
}

/* Positions it at the last block whose first key is <= key (block 0 when
** none is), so that the first key >= key is found by reading forward.
** The dictionary must not be empty. */
static int dict_seek(FtsSegment *seg, const uint8_t *key, int nKey, DictIter *it, LpError *err) {
    it->seg = seg;
    it->bStrict = 0;
    uint64_t lo = 0, hi = seg->nBlk - 1, kFirst8 = seg_first8(key, nKey);
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        int c, rc = block_cmp(seg, mid, key, nKey, kFirst8, it, &c, err);
        if (rc != LP_OK) return rc;
        if (c <= 0) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return dict_block(it, lo, err);
}

/* Finds key: 1 with it->k filled, 0 when absent, -LP_* on error. On 0 or
** an error, it->k's key bytes are not those of any key. */
static int dict_find(FtsSegment *seg, const uint8_t *key, int nKey, DictIter *it, LpError *err) {
    if (nKey < 1 || nKey > FTS_MAX_KEY || seg->nTerms == 0) return 0;
    int rc = dict_seek(seg, key, nKey, it, err);
    if (rc != LP_OK) return -rc;
    /* Keys are read in ascending order, each below key until one is not,
    ** and compared where they lie in the file: only the key found is
    ** copied out. m is how many bytes the last key read shares with key,
    ** exactly; at byte m it is below key's. The next key repeats its
    ** first nShared bytes: when that is more than m, it repeats the byte
    ** that is below key's, so it is below too; otherwise it agrees with
    ** key on nShared bytes and is compared from there. A block's first
    ** key shares nothing (nShared is 0 there). iField is the first byte
    ** of the last key read, which entry_body needs. */
    uint32_t m = 0, nPrev = 0;
    int iField = 0;
    SegKey *k = &it->k;
    while ((rc = dict_more(it, err)) == 1) {
        const uint8_t *p = it->p, *p0 = p;
        uint32_t nShared, nSuffix;
        if (it->iKey == 0) nPrev = 0;
        const char *zWhat = entry_head(it, &p, nPrev, &nShared, &nSuffix);
        if (zWhat) return entry_corrupt(it, p0, zWhat, err);
        const uint8_t *pSuffix = p;
        uint32_t nThis = nShared + nSuffix;
        if (nShared == 0) iField = pSuffix[0];
        int c = -1; /* this key against key */
        if (nShared <= m) {
            uint32_t nMin = nThis < (uint32_t)nKey ? nThis : (uint32_t)nKey;
            m = nShared;
            while (m < nMin && pSuffix[m - nShared] == key[m])
                m++;
            c = m < nMin ? (pSuffix[m - nShared] < key[m] ? -1 : 1)
                         : (nThis == (uint32_t)nKey ? 0 : nThis < (uint32_t)nKey ? -1 : 1);
        }
        if (c > 0) return 0;
        p += nSuffix;
        zWhat = entry_body(it, &p, iField, k);
        if (zWhat) return entry_corrupt(it, p0, zWhat, err);
        entry_done(it, p0, p);
        nPrev = nThis;
        if (c == 0) {
            memcpy(k->aKey, key, (size_t)nKey);
            k->nKey = nKey;
            return 1;
        }
    }
    return rc;
}

/* What xLookup and xScan report of a key: its counts and where its entry
** is, for src_open_found. */
static void key_info(const SegKey *k, FtsTermInfo *pInfo) {
    pInfo->df = k->df;
    pInfo->nEarlier = k->nEarlier;
    pInfo->cf = k->cf;
    pInfo->aLoc[0] = k->entryOff;
    pInfo->aLoc[1] = k->entryData;
    pInfo->aLoc[2] = k->entryBlk << 32 | k->entryKey;
}

/* FtsSourceVt.xLookup: 1, 0 or -LP_CORRUPT. */
static int src_lookup(FtsSource *s, const uint8_t *key, int nKey, FtsTermInfo *pInfo,
                      LpError *err) {
    DictIter it;
    int rc = dict_find((FtsSegment *)s, key, nKey, &it, err);
    if (rc == 1) key_info(&it.k, pInfo);
    return rc;
}

/* A scan's step: hands k to xKey when it starts with the prefix and
** returns the callback's value; sets *pbPast when k is past the keys with
** the prefix (they are contiguous), 0 otherwise. */
static int scan_key(const SegKey *k, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                    int *pbPast) {
    int c = memcmp(k->aKey, prefix, (size_t)(k->nKey < nPrefix ? k->nKey : nPrefix));
    if (c == 0 && k->nKey >= nPrefix) {
        FtsTermInfo info;
        key_info(k, &info);
        return xKey(ctx, k->aKey, k->nKey, &info);
    }
    *pbPast = c > 0;
    return 0;
}

/* FtsSourceVt.xScanSkip: a skip to a key in the block being read (a block
** holds FTS_SEG_DICT_BLOCK keys) reads on, reporting the keys between
** (the callback answers them again), one past it gallops from the next
** block. LP_OK, the callback's positive value, or LP_CORRUPT with err
** filled (as the in-memory index, errors are positive codes). The key
** handed to xKey lives in this function's iterator: it is valid only
** during the call. */
static int src_scan_skip(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                         LpError *err) {
    FtsSegment *seg = (FtsSegment *)s;
    static const uint8_t aNone[1];
    if (nPrefix <= 0) {
        prefix = aNone; /* every key; memcmp wants a pointer even for 0 bytes */
        nPrefix = 0;
    }
    if (seg->nTerms == 0 || nPrefix > FTS_MAX_KEY) return LP_OK;
    DictIter it;
    int rc = dict_seek(seg, prefix, nPrefix, &it, err);
    if (rc != LP_OK) return rc;
    int bPast = 0, bBelow = 0; /* keys below aFrom may come */
    uint8_t aFrom[FTS_MAX_KEY]; /* after a search: the least key still wanted */
    int nFrom = 0;
    while (!bPast && (rc = dict_next(&it, err)) == 1) {
        if (bBelow && key_cmp(it.k.aKey, it.k.nKey, aFrom, nFrom) < 0) continue;
        bBelow = 0;
        int r = scan_key(&it.k, prefix, nPrefix, xKey, ctx, &bPast);
        if (r >= 0) {
            if (r > 0) return r;
            continue;
        }
        if (it.iBlk + 1 >= seg->nBlk) continue;
        nFrom = fts_key_after(it.k.aKey, -r < it.k.nKey ? -r : it.k.nKey, aFrom);
        if (nFrom == 0 || memcmp(aFrom, prefix, (size_t)nPrefix) != 0) return LP_OK; /* past the prefix */
        int c;
        DictIter scratch = {.seg = seg}; /* block_cmp's, for a damaged block */
        rc = block_cmp(seg, it.iBlk + 1, aFrom, nFrom, seg_first8(aFrom, nFrom), &scratch, &c, err);
        if (rc != LP_OK) return rc;
        if (c <= 0) {
            if ((rc = dict_seek_from(seg, aFrom, nFrom, it.iBlk + 1, &it, err)) != LP_OK) return rc;
            bBelow = 1;
        }
    }
    return rc < 0 ? -rc : LP_OK;
}

/* FtsSourceVt.xScan: xScanSkip, whose callbacks never skip. */
static int src_scan(FtsSource *s, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                    LpError *err) {
    return src_scan_skip(s, prefix, nPrefix, xKey, ctx, err);
}

/* ---------------------------------------------------------- infix filter */

/* Reads the whole dictionary into a filter, *x: LP_OK, LP_NOMEM or
** LP_CORRUPT, with err. */
static int infix_build(FtsSegment *seg, FtsInfix *x, LpError *err) {
    FtsInfixBuild b = {0};
    DictIter it = {.seg = seg};
    int rc = LP_OK, r = 0;
    if (seg->nTerms > 0 && (rc = dict_block(&it, 0, err)) == LP_OK) {
        while ((r = dict_next(&it, err)) == 1) {
            if (seg->bInfixExact && !fts_infix_key_is_exact(it.k.aKey, it.k.nKey)) continue;
            fts_infix_key(&b, it.k.aKey, it.k.nKey, it.k.entryBlk);
        }
        if (r < 0) rc = -r;
    }
    if (rc != LP_OK) {
        fts_infix_build_free(&b);
        return rc;
    }
    if (fts_infix_finish(&b, x) != LP_OK) {
        return lp_err_set(err, LP_NOMEM, "fts segment %s: out of memory building its infix filter", seg->zName);
    }
    return LP_OK;
}

/* The segment's filter, built on first use: NULL with err on error. */
static const FtsInfix *seg_infix(FtsSegment *seg, LpError *err) {
    pthread_mutex_lock(&seg->muInfix);
    int rc = seg->bInfix ? LP_OK : infix_build(seg, &seg->infix, err);
    if (rc == LP_OK) seg->bInfix = 1;
    pthread_mutex_unlock(&seg->muInfix);
    return rc == LP_OK ? &seg->infix : NULL;
}

/* FtsInfixListFn over a segment's filter. */
static int infix_list(void *ctx, uint32_t g, const uint32_t **pa, uint32_t *pn) {
    return fts_infix_list(ctx, g, pa, pn);
}

/* Reads the keys of the prefix in block b and on (it positioned by
** dict_seek), handing them over; *pbPast when past the prefix. */
static int scan_block(DictIter *it, uint64_t b, const uint8_t *prefix, int nPrefix, FtsKeyFn xKey, void *ctx,
                      int *pbPast, LpError *err) {
    int rc = dict_block(it, b, err);
    if (rc != LP_OK) return rc;
    while (it->iKey < it->nKeyBlk) {
        int r = dict_next(it, err);
        if (r < 0) return -r;
        if ((r = scan_key(&it->k, prefix, nPrefix, xKey, ctx, pbPast)) != 0) return r;
        if (*pbPast) return LP_OK;
    }
    return LP_OK;
}

/* xScanHas for a wildcard whose longest literal parts have 2 bytes
** (`*ab*`, `*ab*cd`): for each such part, the blocks of the trigrams
** that begin or end with it and the block where the key of just those 2
** bytes would be (fts_infix_pair_blocks); the blocks every part allows are
** read in order, from the one the prefix's keys start in. prefix[0] is
** the field byte. */
static int scan_has_pairs(FtsSegment *seg, const FtsInfix *x, const uint8_t *prefix, int nPrefix,
                          const FtsScanHas *pHas, FtsKeyFn xKey, void *ctx, LpError *err) {
    uint64_t nBlk = seg->nBlk, nByte = (nBlk + 7) / 8;
    uint8_t *aAll = calloc(2, (size_t)nByte);
    if (!aAll) return lp_err_set(err, LP_NOMEM, "fts segment %s: out of memory reading its infix filter", seg->zName);
    uint8_t *aPart = aAll + nByte;
    int rc = LP_OK, bFirst = 1;
    DictIter it;
    for (int i = 0; i < pHas->nPart && rc == LP_OK; i++) {
        if (pHas->anPart[i] != 2) continue;
        memset(aPart, 0, (size_t)nByte);
        fts_infix_pair_blocks(x, pHas->aPart[i], aPart, nBlk);
        uint8_t key[3] = {prefix[0], pHas->aPart[i][0], pHas->aPart[i][1]};
        if ((rc = dict_seek(seg, key, 3, &it, err)) != LP_OK) break;
        aPart[it.iBlk >> 3] |= (uint8_t)(1u << (it.iBlk & 7));
        for (uint64_t k = 0; k < nByte; k++) aAll[k] = bFirst ? aPart[k] : aAll[k] & aPart[k];
        bFirst = 0;
    }
    if (rc == LP_OK) rc = dict_seek(seg, prefix, nPrefix, &it, err);
    int bPast = 0;
    for (uint64_t b = it.iBlk; rc == LP_OK && !bPast && b < nBlk; b++) {
        if (aAll[b >> 3] >> (b & 7) & 1) rc = scan_block(&it, b, prefix, nPrefix, xKey, ctx, &bPast, err);
    }
    free(aAll);
    return rc;
}

/* FtsSourceVt.xScanHas: the blocks holding every trigram of pHas's
** strings, from the one the prefix's keys start in, read in order (for
** strings of 2 bytes at most: scan_has_pairs). */
static int src_scan_has(FtsSource *s, const uint8_t *prefix, int nPrefix, const FtsScanHas *pHas,
                        FtsKeyFn xKey, void *ctx, LpError *err) {
    FtsSegment *seg = (FtsSegment *)s;
    if (seg->bInfixExact && !fts_infix_key_is_exact(prefix, nPrefix)) {
        /* keys the filter leaves out: their range, read whole */
        return src_scan(s, prefix, nPrefix, xKey, ctx, err);
    }
    if (fts_infix_pair_usable(pHas) && seg->nTerms > 0 && nPrefix >= 1 && nPrefix <= FTS_MAX_KEY) {
        const FtsInfix *x = seg_infix(seg, err);
        return x ? scan_has_pairs(seg, x, prefix, nPrefix, pHas, xKey, ctx, err) : err->code;
    }
    if (!fts_infix_usable(pHas) || seg->nTerms == 0 || nPrefix > FTS_MAX_KEY) {
        return src_scan(s, prefix, nPrefix, xKey, ctx, err);
    }
    const FtsInfix *x = seg_infix(seg, err);
    if (!x) return err->code;
    FtsInfixIter ii;
    if (!fts_infix_iter_init(&ii, pHas, infix_list, (void *)x)) return LP_OK; /* no key holds one of its trigrams */
    static const uint8_t aNone[1];
    if (nPrefix <= 0) {
        prefix = aNone;
        nPrefix = 0;
    }
    /* The prefix's keys start in block it.iBlk or later. */
    DictIter it;
    int rc = dict_seek(seg, prefix, nPrefix, &it, err);
    if (rc != LP_OK) return rc;
    int bPast = 0;
    for (uint64_t b = fts_infix_iter_next(&ii, it.iBlk); b != UINT64_MAX && !bPast; b = fts_infix_iter_next(&ii, b)) {
        if ((rc = scan_block(&it, b, prefix, nPrefix, xKey, ctx, &bPast, err)) != LP_OK) return rc;
    }
    return LP_OK;
}

/* --------------------------------------------------------------- cursors */

/* Field f of skip entry j: entries have a fixed width, so this is one
** unaligned load (the data section's padding keeps it inside). */
static inline uint32_t skip_get(const SegCursor *c, uint32_t j, int f) {
    return fts_codec_bits_get(c->pSkip, (uint64_t)j * c->nW + c->aOff[f], c->aW[f]);
}

/* Ends the list because of damage: records the first error, returns
** FTS_NO_DOC. */
static uint32_t cur_fail(SegCursor *c, uint64_t off, const char *zFmt, ...)
    __attribute__((format(printf, 3, 4)));
static uint32_t cur_fail(SegCursor *c, uint64_t off, const char *zFmt, ...) {
    if (c->rc == LP_OK) {
        char zMsg[LP_ERRMSG_MAX];
        va_list ap;
        va_start(ap, zFmt);
        vsnprintf(zMsg, sizeof(zMsg), zFmt, ap);
        va_end(ap);
        c->rc = seg_corrupt(c->seg, &c->err, off, "%s", zMsg);
    }
    c->base.doc = FTS_NO_DOC;
    c->n = 0;
    c->i = -1;
    return FTS_NO_DOC;
}

/* The list is exhausted. */
static uint32_t cur_end(SegCursor *c) {
    c->base.doc = FTS_NO_DOC;
    c->n = 0;
    c->i = -1;
    return FTS_NO_DOC;
}

/* Decodes block j (lists of >= 128) into aDoc/aTf. LP_OK or LP_CORRUPT
** (the cursor has failed). */
typedef uint32_t v4u __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

static int cur_load(SegCursor *c, uint32_t j) {
    FtsSegment *seg = c->seg;
    uint32_t last = skip_get(c, j, SEG_SKIP_LAST), base = 0;
    uint64_t start = j ? skip_get(c, j - 1, SEG_SKIP_DATA) : 0;
    uint64_t end = skip_get(c, j, SEG_SKIP_DATA);
    uint64_t offBlk = seg_off(seg, c->pBlk);
    if (j > 0) {
        uint32_t prev = skip_get(c, j - 1, SEG_SKIP_LAST);
        /* The documents of block j lie in (prev, last]; moving forward
        ** they must come after the current document. */
        if (prev >= last || (c->base.doc != FTS_BEFORE_FIRST && prev < c->base.doc)) {
            cur_fail(c, offBlk, "block %" PRIu32 ": last documents out of order", j);
            return LP_CORRUPT;
        }
        base = prev + 1;
    }
    if (last >= seg->nDocs || start > end || end > c->nBlkByte) {
        cur_fail(c, offBlk, "block %" PRIu32 ": bad skip entry", j);
        return LP_CORRUPT;
    }
    const uint8_t *p = c->pBlk + start, *pEnd = c->pBlk + end;
    int n;
    if (j < c->nFull) {
        n = FTS_BLOCK;
        int bDoc = p < pEnd ? *p : 0;
        int rc = fts_codec_get_block(&p, pEnd, c->aDoc);
        /* Width 32 is the only one where tf - 1 + 1 can overflow. */
        int bTf32 = rc == LP_OK && p < pEnd && *p == 32;
        if (rc == LP_OK) rc = fts_codec_get_block(&p, pEnd, c->aTf);
        if (rc != LP_OK || p != pEnd) {
            cur_fail(c, offBlk + start, "block %" PRIu32 ": bad packed data", j);
            return LP_CORRUPT;
        }
        /* The documents must end at the skip entry's lastDoc, and no
        ** partial sum may wrap around. With gaps below 2^25 the 128
        ** increments add up to S <= 2^32, so a wrapped last value is
        ** base - 1 + S - 2^32 < base <= last: the equality test alone
        ** catches it. Wider gaps (sparse lists in huge segments) are
        ** summed in 64 bits. */
        uint64_t sum = 0;
        if (bDoc > 25) {
            for (int i = 0; i < FTS_BLOCK; i++)
                sum += c->aDoc[i];
        }
        if (fts_codec_gaps_to_docs(c->aDoc, base) != last ||
            (bDoc > 25 && (uint64_t)base + sum + (FTS_BLOCK - 1) != last)) {
            cur_fail(c, offBlk + start, "block %" PRIu32 ": documents do not end at %" PRIu32, j,
                     last);
            return LP_CORRUPT;
        }
        if (bTf32) {
            for (int i = 0; i < FTS_BLOCK; i++) {
                if (c->aTf[i] == UINT32_MAX) {
                    cur_fail(c, offBlk + start, "block %" PRIu32 ": tf overflow", j);
                    return LP_CORRUPT;
                }
            }
        }
        for (int i = 0; i < FTS_BLOCK; i++)
            c->aTf[i] += 1;
    } else {
        n = (int)(c->base.df - c->nFull * FTS_BLOCK);
        if (fts_codec_tail_get(&p, pEnd, base, seg->nDocs, c->aDoc, c->aTf, n) != LP_OK ||
            p != pEnd || c->aDoc[n - 1] != last) {
            cur_fail(c, offBlk + start, "block %" PRIu32 ": bad tail", j);
            return LP_CORRUPT;
        }
        for (int i = n; i < n + 4; i++)
            c->aDoc[i] = UINT32_MAX;
    }
    uint64_t ps = j ? skip_get(c, j - 1, SEG_SKIP_POS) : 0, pe = skip_get(c, j, SEG_SKIP_POS);
    if (ps > pe || pe > c->nPos) {
        cur_fail(c, offBlk, "block %" PRIu32 ": bad positions range", j);
        return LP_CORRUPT;
    }
    c->pPosCur = c->pPosNext = c->pPos + ps;
    c->pPosEnd = c->pPos + pe;
    c->iPosCur = 0;
    c->iPosLast = -1;
    c->iBlk = j;
    c->n = n;
    c->i = -1;
    return LP_OK;
}

/* First block j >= lo whose lastDoc >= target, or nBlk: galloping, then
** binary search. Terminates and returns a block that satisfies the test
** (or nBlk) even over damaged entries. */
static uint32_t cur_seek(const SegCursor *c, uint32_t lo, uint32_t target) {
    uint64_t hi = lo, step = 1;
    while (hi < c->nBlk && skip_get(c, (uint32_t)hi, SEG_SKIP_LAST) < target) {
        lo = (uint32_t)hi + 1;
        hi += step;
        step <<= 1;
    }
    if (hi > c->nBlk) hi = c->nBlk;
    while (lo < hi) {
        uint32_t mid = lo + (uint32_t)(hi - lo) / 2;
        if (skip_get(c, mid, SEG_SKIP_LAST) < target) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* xNext's slow path: the block is used up; load the next one. */
static uint32_t cur_next_block(SegCursor *c) {
    if (c->base.doc == FTS_NO_DOC) return FTS_NO_DOC;
    uint32_t j = c->iBlk + 1; /* UINT32_MAX + 1 == 0: the first block */
    if (!c->pSkip || j >= c->nBlk) return cur_end(c);
    if (cur_load(c, j) != LP_OK) return FTS_NO_DOC;
    c->i = 0;
    c->base.tf = c->aTf[0];
    return c->base.doc = c->aDoc[0];
}

/* FtsPostingsVt.xNext: the hot path is two array reads. */
static uint32_t seg_next(FtsPostings *p) {
    SegCursor *c = (SegCursor *)p;
    if (c->i + 1 < c->n) {
        int i = ++c->i;
        p->tf = c->aTf[i];
        return p->doc = c->aDoc[i];
    }
    return cur_next_block(c);
}

/* The first i' >= i with aDoc[i'] >= target, four documents per step:
** the number below target among four sorted values is where the first
** one not below is. The caller knows that some aDoc[k] >= target for k
** < n, and the UINT32_MAX sentinels after aDoc[n-1] keep the four-wide
** reads inside the array and the counts right. */
static inline int cur_find(const SegCursor *c, int i, uint32_t target) {
    const v4u t = (v4u){0, 0, 0, 0} + target;
    for (;;) {
        v4u v;
        memcpy(&v, c->aDoc + i, 16);
        v4i lt = (v4i)(v < t); /* -1 where below target */
#ifdef __SSE2__
        /* The lanes below target come first (sorted): their sign bits
        ** are a run of ones from bit 0, and its length is the count. */
        unsigned m = (unsigned)_mm_movemask_ps(_mm_castsi128_ps((__m128i)lt));
        if (m != 15) return i + __builtin_ctz(~m);
#else
        int nBelow = -(lt[0] + lt[1] + lt[2] + lt[3]);
        if (nBelow < 4) return i + nBelow;
#endif
        i += 4;
    }
}

static uint32_t seg_advance(FtsPostings *p, uint32_t target) {
    SegCursor *c = (SegCursor *)p;
    /* In the current block: the search stops at the latest at n-1, since
    ** aDoc[n-1] >= target. */
    if (c->i + 1 < c->n && target <= c->aDoc[c->n - 1]) {
        int i = cur_find(c, c->i + 1, target);
        c->i = i;
        p->tf = c->aTf[i];
        return p->doc = c->aDoc[i];
    }
    /* Past the current block: find the block by its lastDoc, never
    ** decoding the blocks in between. */
    if (p->doc == FTS_NO_DOC) return FTS_NO_DOC;
    if (!c->pSkip || target >= c->seg->nDocs) return cur_end(c);
    uint32_t j = cur_seek(c, c->iBlk + 1, target);
    if (j >= c->nBlk) return cur_end(c);
    if (cur_load(c, j) != LP_OK) return FTS_NO_DOC;
    /* cur_seek chose j with lastDoc(j) >= target and cur_load checked
    ** that aDoc[n-1] is lastDoc(j). */
    int i = cur_find(c, 0, target);
    c->i = i;
    p->tf = c->aTf[i];
    return p->doc = c->aDoc[i];
}

/* FtsPostingsVt.xShallow. Block-max MaxScore calls it with increasing
** targets, so the search starts from the last answer (jShallow), and from
** block 0 only when a target goes back before it. */
static uint32_t seg_shallow(FtsPostings *p, uint32_t target, uint32_t *pMaxTf, uint32_t *pMinLen) {
    SegCursor *c = (SegCursor *)p;
    /* Past the end (as the in-memory index answers): no impact. */
    *pMaxTf = 0;
    *pMinLen = UINT32_MAX;
    if (c->rc != LP_OK || c->nBlk == 0) return FTS_NO_DOC;
    if (!c->pSkip) {
        if (target > c->lastDoc) return FTS_NO_DOC;
        *pMaxTf = p->maxTf;
        *pMinLen = p->minLen;
        return c->lastDoc;
    }
    uint32_t lo = c->jShallow;
    if (lo > 0 && lo < c->nBlk && target <= skip_get(c, lo - 1, SEG_SKIP_LAST)) lo = 0;
    uint32_t j = cur_seek(c, lo, target);
    if (j >= c->nBlk) return FTS_NO_DOC;
    c->jShallow = j;
    uint32_t last = skip_get(c, j, SEG_SKIP_LAST);
    if (last >= c->seg->nDocs) {
        return cur_fail(c, seg_off(c->seg, c->pSkip), "block %" PRIu32 ": bad last document", j);
    }
    *pMaxTf = skip_get(c, j, SEG_SKIP_TF);
    *pMinLen = skip_get(c, j, SEG_SKIP_LEN);
    return last;
}

/* FtsPostingsVt.xPositions. Position lists are varints, so reaching the
** current posting's means skipping the tf varints of each posting from
** pPosCur (posting iPosCur: the one after the last decoded) on; the last
** decoded one is remembered (pPosLast, iPosLast), so asking twice for the
** same document works. */
/* Sets c->pPosLast to the start of the current document's positions.
** LP_OK, or the cursor's error. */
/* The sum of a[k] for lo <= k < hi, four at a time (a phrase check skips
** the positions of the postings between two candidates: their tfs say how
** many varints). A block's tfs are below 2^32 and at most 128 of them are
** summed: the lanes are 64 bits wide, so no sum can wrap. */
static uint64_t tf_sum(const uint32_t *a, int lo, int hi) {
    uint64_t n = 0;
    int k = lo;
#ifdef __SSE2__
    if (k + 4 <= hi) {
        const __m128i z = _mm_setzero_si128();
        __m128i s = z;
        for (; k + 4 <= hi; k += 4) {
            __m128i v = _mm_loadu_si128((const __m128i *)(a + k));
            s = _mm_add_epi64(s, _mm_add_epi64(_mm_unpacklo_epi32(v, z), _mm_unpackhi_epi32(v, z)));
        }
        n = (uint64_t)_mm_cvtsi128_si64(s) + (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s));
    }
#endif
    for (; k < hi; k++)
        n += a[k];
    return n;
}

static int pos_find(SegCursor *c, LpError *err) {
    if (c->rc != LP_OK) {
        if (err) *err = c->err;
        return c->rc;
    }
    if (c->i < 0 || c->i >= c->n) {
        return lp_err_set(err, LP_INTERNAL, "fts segment %s: positions without a current document",
                          c->seg->zName);
    }
    if (c->i != c->iPosLast) {
        /* Skip the positions of the postings before the current one. */
        uint64_t nSkip = tf_sum(c->aTf, c->iPosCur, c->i);
        const uint8_t *q = c->pPosCur;
        if (fts_codec_skip_varints(&q, c->pPosEnd, nSkip) != LP_OK) {
            cur_fail(c, seg_off(c->seg, c->pPosCur), "positions of document %" PRIu32 " truncated",
                     c->base.doc);
            if (err) *err = c->err;
            return c->rc;
        }
        c->pPosLast = q;
        c->iPosLast = c->i;
    }
    return LP_OK;
}

/* FtsPostingsVt.xPosBytes: the tf varints, found but not decoded (the
** new segment's reader decodes them). */
static int seg_posbytes(FtsPostings *p, const uint8_t **pp, size_t *pn, LpError *err) {
    SegCursor *c = (SegCursor *)p;
    int rc = pos_find(c, err);
    if (rc != LP_OK) return rc;
    const uint8_t *q = c->pPosLast;
    if (fts_codec_skip_varints(&q, c->pPosEnd, p->tf) != LP_OK) {
        cur_fail(c, seg_off(c->seg, c->pPosLast), "positions of document %" PRIu32 " truncated",
                 p->doc);
        if (err) *err = c->err;
        return c->rc;
    }
    *pp = c->pPosLast;
    *pn = (size_t)(q - c->pPosLast);
    c->pPosCur = c->pPosNext = q;
    c->iPosCur = c->i + 1;
    return LP_OK;
}

static int seg_positions(FtsPostings *p, uint32_t *aPos, LpError *err) {
    SegCursor *c = (SegCursor *)p;
    int rc = pos_find(c, err);
    if (rc != LP_OK) return rc;
    const uint8_t *q = c->pPosLast;
    /* Positions are mostly one- or two-byte deltas: decoded inline; anything
    ** else (a longer varint, the block's end) goes to the checked decoder
    ** from the start. */
    uint64_t sum = 0;
    if (varint_delta_short_u32(&q, c->pPosEnd, aPos, 0, p->tf, &sum) == p->tf) {
        c->pPosCur = c->pPosNext = q;
        c->iPosCur = c->i + 1;
        return LP_OK;
    }
    q = c->pPosLast;
    LpError e;
    if (varint_delta_decode_u32(&q, c->pPosEnd, aPos, p->tf, &e) != LP_OK) {
        cur_fail(c, seg_off(c->seg, c->pPosLast), "positions of document %" PRIu32 ": %s", p->doc,
                 e.zMsg);
        if (err) *err = c->err;
        return c->rc;
    }
    c->pPosCur = c->pPosNext = q;
    c->iPosCur = c->i + 1;
    return LP_OK;
}

static void seg_close_cursor(FtsPostings *p) {
    free(p);
}

int fts_segr_postings_status(const FtsPostings *p, LpError *err) {
    const SegCursor *c = (const SegCursor *)p;
    if (c->rc != LP_OK && err) *err = c->err;
    return c->rc;
}

/* A cursor over key k, or an empty one when k is NULL. NULL + err on
** error (LP_NOMEM, or LP_CORRUPT for a damaged region header or a damaged
** list of < 128 postings, which is decoded here). */
static FtsPostings *cur_new(FtsSegment *seg, const SegKey *k, LpError *err) {
    SegCursor *c = malloc(sizeof(*c));
    if (!c) {
        lp_err_set(err, LP_NOMEM, "fts segment %s: out of memory", seg->zName);
        return NULL;
    }
    memset(c, 0, offsetof(SegCursor, aDoc));
    c->base.vt = &seg_postings_vt;
    c->base.doc = FTS_BEFORE_FIRST;
    c->seg = seg;
    c->base.minLen = UINT32_MAX;
    c->iBlk = UINT32_MAX;
    c->i = -1;
    for (int i = FTS_BLOCK; i < FTS_BLOCK + 4; i++)
        c->aDoc[i] = UINT32_MAX;
    lp_err_clear(&c->err);
    if (!k) return &c->base; /* an empty list: df 0, maxTf 0, minLen UINT32_MAX */

    const uint8_t *p = k->pPost, *pEnd = p + k->nPost;
    uint64_t off = seg_off(seg, p);
    const char *zWhat = NULL;
    c->iField = k->aKey[0];
    c->base.df = k->df;
    c->pPos = k->pPos;
    c->nPos = k->nPos;
    c->nBlk = 1;
    if (c->iField >= seg->nFields) {
        zWhat = "field out of range";
    } else if (k->df < FTS_BLOCK) {
        /* Decoded whole now; its impact is computed from it. */
        if (k->df == 1) {
            if (k->nPost != 0) zWhat = "postings bytes for a single document";
            c->aDoc[0] = k->doc1;
            c->aTf[0] = (uint32_t)k->cf;
        } else if (fts_codec_tail_get(&p, pEnd, 0, seg->nDocs, c->aDoc, c->aTf, (int)k->df) !=
                       LP_OK ||
                   p != pEnd) {
            zWhat = "bad postings";
        }
        if (!zWhat) {
            c->n = (int)k->df;
            for (int i = c->n; i < c->n + 4; i++)
                c->aDoc[i] = UINT32_MAX;
            c->iBlk = 0;
            c->lastDoc = c->aDoc[c->n - 1];
            c->pPosCur = c->pPosNext = c->pPos;
            c->iPosCur = 0;
            c->iPosLast = -1;
            c->pPosEnd = c->pPos + c->nPos;
            uint32_t maxTf = 0;
            for (int i = 0; i < c->n; i++)
                if (c->aTf[i] > maxTf) maxTf = c->aTf[i];
            c->base.maxTf = maxTf;
            c->base.minLen = seg_minlen(seg, c->iField, c->aDoc, c->n);
        }
    } else {
        uint32_t maxTf, minLen;
        if (varint_get_u32(&p, pEnd, &maxTf) || varint_get_u32(&p, pEnd, &minLen) ||
            pEnd - p < SEG_NSKIP) {
            zWhat = "truncated postings header";
        } else {
            c->base.maxTf = maxTf;
            c->base.minLen = minLen;
            for (int f = 0; f < SEG_NSKIP && !zWhat; f++) {
                if (p[f] > 32) zWhat = "bad skip field width";
                c->aW[f] = p[f];
                c->aOff[f] = (uint8_t)c->nW;
                c->nW += p[f];
            }
            p += SEG_NSKIP;
        }
        c->nBlk = (k->df + FTS_BLOCK - 1) / FTS_BLOCK;
        c->nFull = k->df / FTS_BLOCK;
        uint64_t nSkipByte = ((uint64_t)c->nBlk * c->nW + 7) / 8;
        if (!zWhat && nSkipByte > (uint64_t)(pEnd - p)) zWhat = "skip entries past the region";
        if (!zWhat) {
            /* The last entry closes both regions exactly; the others are
            ** checked as their blocks are loaded. */
            c->pSkip = p;
            c->pBlk = p + nSkipByte;
            c->nBlkByte = (uint64_t)(pEnd - c->pBlk);
            uint32_t jLast = c->nBlk - 1;
            if (skip_get(c, jLast, SEG_SKIP_DATA) != c->nBlkByte ||
                skip_get(c, jLast, SEG_SKIP_POS) != c->nPos ||
                skip_get(c, jLast, SEG_SKIP_LAST) >= seg->nDocs) {
                zWhat = "last skip entry does not close the list";
            }
        }
    }
    if (zWhat) {
        char z[2 * FTS_MAX_KEY + 1];
        for (int i = 1; i < k->nKey; i++) {
            z[i - 1] = (k->aKey[i] >= 0x20 && k->aKey[i] < 0x7f) ? (char)k->aKey[i] : '?';
        }
        z[k->nKey - 1] = 0;
        seg_corrupt(seg, err, off, "key '%s' of field %d: %s", z, k->aKey[0], zWhat);
        free(c);
        return NULL;
    }
    return &c->base;
}

static FtsPostings *src_open(FtsSource *s, const uint8_t *key, int nKey, int bPositions,
                             LpError *err) {
    FtsSegment *seg = (FtsSegment *)s;
    DictIter it;
    int rc = dict_find(seg, key, nKey, &it, err);
    if (rc < 0) return NULL;
    return cur_new(seg, rc == 1 ? &it.k : NULL, err);
}

/* FtsSourceVt.xOpenFound: decodes the entry where info says it starts
** (its first bytes shared with key, which is the key found there), as
** dict_next would have read it; a location that does not check out falls
** back to the search. */
static FtsPostings *src_open_found(FtsSource *s, const uint8_t *key, int nKey,
                                   const FtsTermInfo *info, int bPositions, LpError *err) {
    FtsSegment *seg = (FtsSegment *)s;
    uint64_t b = info->aLoc[2] >> 32, off = info->aLoc[0];
    uint32_t iKey = (uint32_t)info->aLoc[2];
    if (nKey < 1 || nKey > FTS_MAX_KEY || b >= seg->nBlk || iKey >= seg->K) {
        return src_open(s, key, nKey, bPositions, err);
    }
    uint64_t start = seg_get32(seg->pIdx + 4 * b);
    uint64_t end = b + 1 < seg->nBlk ? seg_get32(seg->pIdx + 4 * (b + 1)) : seg->nDict;
    if (off <= start || off >= end || end > seg->nDict || info->aLoc[1] > seg->nData) {
        return src_open(s, key, nKey, bPositions, err);
    }
    DictIter it;
    memset(&it, 0, offsetof(DictIter, k));
    it.seg = seg;
    it.iBlk = b;
    it.p = seg->pDict + off;
    it.pEnd = seg->pDict + end;
    it.iKey = iKey;
    it.nKeyBlk = b + 1 < seg->nBlk ? seg->K : (uint32_t)(seg->nTerms - b * seg->K);
    it.dataOff = info->aLoc[1];
    memcpy(it.k.aKey, key, (size_t)nKey);
    it.k.nKey = nKey;
    int rc = dict_next(&it, err);
    if (rc < 0) return NULL;
    if (rc == 0 || it.k.nKey != nKey || memcmp(it.k.aKey, key, (size_t)nKey) != 0) {
        return src_open(s, key, nKey, bPositions, err);
    }
    return cur_new(seg, &it.k, err);
}

static int seg_status(FtsPostings *p, LpError *err) {
    return fts_segr_postings_status(p, err);
}

static const FtsPostingsVt seg_postings_vt = {
    .xNext = seg_next,
    .xAdvance = seg_advance,
    .xPositions = seg_positions,
    .xShallow = seg_shallow,
    .xClose = seg_close_cursor,
    .xStatus = seg_status,
    .xPosBytes = seg_posbytes,
};

static const FtsSourceVt seg_source_vt = {
    .xLookup = src_lookup,
    .xOpen = src_open,
    .xOpenFound = src_open_found,
    .xScan = src_scan,
    .xDocLen = src_doclen,
    .xScanHas = src_scan_has,
    .xScanSkip = src_scan_skip,
};

/* ------------------------------------------------------- inspection */

/* Counts come from the footer; the positions size is summed over the
** dictionary (inline positions of cf-1 keys are counted with it). */
int fts_segr_info(FtsSegment *seg, FtsSegInfo *pInfo, LpError *err) {
    memset(pInfo, 0, sizeof(*pInfo));
    pInfo->nDocs = seg->nDocs;
    pInfo->nFields = seg->nFields;
    pInfo->nTerms = seg->nTerms;
    pInfo->nPostings = seg->nPostings;
    pInfo->nPositions = seg->nPositions;
    pInfo->szFile = seg->n;
    pInfo->szData = seg->aSecSize[SEG_SEC_DATA];
    pInfo->szDict = seg->aSecSize[SEG_SEC_DICT];
    pInfo->szDictIndex = seg->aSecSize[SEG_SEC_INDEX];
    pInfo->szDocLens = seg->aSecSize[SEG_SEC_DOCLENS];
    pthread_mutex_lock(&seg->muInfix);
    pInfo->szInfix = seg->szInfixSec ? seg->szInfixSec : fts_infix_bytes(&seg->infix);
    pthread_mutex_unlock(&seg->muInfix);
    if (seg->nTerms == 0) return LP_OK;
    DictIter it = {.seg = seg};
    int rc = dict_block(&it, 0, err);
    if (rc != LP_OK) return rc;
    while ((rc = dict_next(&it, err)) == 1)
        pInfo->szPositions += it.k.bInline ? 0 : it.k.nPos;
    return rc < 0 ? -rc : LP_OK;
}

/* Checks one block's impact (lists of >= 128) and that its postings used
** its positions exactly. */
static int check_block(SegCursor *c, uint32_t maxTf, uint32_t minLen, LpError *err) {
    FtsSegment *seg = c->seg;
    if (c->pPosNext != c->pPosEnd) {
        return seg_corrupt(seg, err, seg_off(seg, c->pPosNext),
                           "block %" PRIu32 ": %td bytes of positions unused", c->iBlk,
                           c->pPosEnd - c->pPosNext);
    }
    if (c->pSkip && (skip_get(c, c->iBlk, SEG_SKIP_TF) != maxTf ||
                     skip_get(c, c->iBlk, SEG_SKIP_LEN) != minLen)) {
        return seg_corrupt(seg, err, seg_off(seg, c->pSkip),
                           "block %" PRIu32 ": impact (%" PRIu32 ", %" PRIu32 "), actual (%" PRIu32
                           ", %" PRIu32 ")",
                           c->iBlk, skip_get(c, c->iBlk, SEG_SKIP_TF),
                           skip_get(c, c->iBlk, SEG_SKIP_LEN), maxTf, minLen);
    }
    return LP_OK;
}

/* Decodes key k's whole list with positions and checks (2), (3) and (4):
** a stored nEarlier is recounted from the lists of k's term in the lower
** fields (checked before k: they come first in key order). */
static int check_key(FtsSegment *seg, const SegKey *k, uint32_t **paPos, uint64_t *pnPos,
                     LpError *err) {
    FtsLower lw = {.n = 0};
    uint32_t nEarlier = 0;
    int bEarlier = k->aKey[0] > 0 && k->nEarlier != FTS_EARLIER_UNKNOWN;
    int rc = bEarlier ? fts_lower_open(&lw, &seg->src, k->aKey, k->nKey, err) : LP_OK;
    if (rc != LP_OK) return rc;
    FtsPostings *p = cur_new(seg, k, err);
    if (!p) return fts_lower_close(&lw, err ? err->code : LP_CORRUPT, err);
    SegCursor *c = (SegCursor *)p;
    uint64_t n = 0, cf = 0;
    uint32_t maxTf = 0, minLen = UINT32_MAX, listMaxTf = 0, listMinLen = UINT32_MAX;
    while (rc == LP_OK && p->vt->xNext(p) != FTS_NO_DOC) {
        nEarlier += (uint32_t)fts_lower_has(&lw, p->doc);
        if (c->i == 0) {
            maxTf = 0;
            minLen = UINT32_MAX;
        }
        uint32_t len = seg_doclen(seg, c->iField, p->doc);
        if (p->tf > maxTf) maxTf = p->tf;
        if (len < minLen) minLen = len;
        if (p->tf > listMaxTf) listMaxTf = p->tf;
        if (len < listMinLen) listMinLen = len;
        n++;
        cf += p->tf;
        /* Every position takes a byte: bounds the buffer below. */
        if (p->tf > (uint64_t)(c->pPosEnd - c->pPosCur)) {
            rc = seg_corrupt(seg, err, seg_off(seg, c->pPosCur),
                             "tf %" PRIu32 " of document %" PRIu32 " exceeds its positions", p->tf,
                             p->doc);
            break;
        }
        if (p->tf > *pnPos) {
            uint32_t *a = realloc(*paPos, p->tf * sizeof(uint32_t));
            if (!a) {
                rc = lp_err_set(err, LP_NOMEM, "fts segment %s: out of memory", seg->zName);
                break;
            }
            *paPos = a;
            *pnPos = p->tf;
        }
        rc = p->vt->xPositions(p, *paPos, err);
        /* The block's last posting: check the block before the cursor
        ** moves to the next one. */
        if (rc == LP_OK && c->i + 1 == c->n) rc = check_block(c, maxTf, minLen, err);
    }
    if (rc == LP_OK && c->rc != LP_OK) rc = fts_segr_postings_status(p, err);
    if (rc == LP_OK && (n != k->df || cf != k->cf)) {
        rc = seg_corrupt(seg, err, seg_off(seg, k->pPost),
                         "list of %" PRIu64 " documents and %" PRIu64
                         " occurrences, dictionary says %" PRIu32 " and %" PRIu64,
                         n, cf, k->df, k->cf);
    }
    if (rc == LP_OK && (listMaxTf != p->maxTf || listMinLen != p->minLen)) {
        rc =
            seg_corrupt(seg, err, seg_off(seg, k->pPost),
                        "list impact (%" PRIu32 ", %" PRIu32 "), actual (%" PRIu32 ", %" PRIu32 ")",
                        p->maxTf, p->minLen, listMaxTf, listMinLen);
    }
    rc = fts_lower_close(&lw, rc, err);
    if (rc == LP_OK && bEarlier && nEarlier != k->nEarlier) {
        rc = seg_corrupt(seg, err, seg_off(seg, seg->pDict + k->entryOff),
                         "nEarlier %" PRIu32 ", but lower fields hold %" PRIu32 " of its documents",
                         k->nEarlier, nEarlier);
    }
    p->vt->xClose(p);
    return rc;
}

/* Walks the dictionary strictly (blocks must end exactly after their last
** key and start where the previous key's regions ended), checks the keys'
** order and fields, decodes every list (check_key), and finally compares
** the totals with the footer and the end of the last region with the end
** of the data section. */
int fts_segr_check(FtsSegment *seg, LpError *err) {
    DictIter it = {.seg = seg, .bStrict = 1};
    uint8_t aPrev[FTS_MAX_KEY];
    int nPrev = 0, rc = LP_OK;
    uint64_t nKey = 0, sumDf = 0, sumCf = 0;
    uint32_t *aPos = NULL;
    uint64_t nPos = 0;
    if (seg->nTerms > 0) rc = dict_block(&it, 0, err);
    while (rc == LP_OK && seg->nTerms > 0) {
        int r = dict_next(&it, err);
        if (r <= 0) {
            rc = -r;
            break;
        }
        const SegKey *k = &it.k;
        if (nKey > 0 && key_cmp(aPrev, nPrev, k->aKey, k->nKey) >= 0) {
            rc = seg_corrupt(seg, err, seg_off(seg, it.p), "key %" PRIu64 " out of order", nKey);
        } else if (k->aKey[0] >= seg->nFields) {
            rc = seg_corrupt(seg, err, seg_off(seg, it.p), "key %" PRIu64 ": field %d", nKey,
                             k->aKey[0]);
        } else {
            rc = check_key(seg, k, &aPos, &nPos, err);
        }
        memcpy(aPrev, k->aKey, (size_t)k->nKey);
        nPrev = k->nKey;
        nKey++;
        sumDf += k->df;
        sumCf += k->cf;
    }
    free(aPos);
    if (rc != LP_OK) return rc;
    uint64_t offFoot = seg->n - SEG_FOOTER_SIZE;
    if (nKey != seg->nTerms || sumDf != seg->nPostings || sumCf != seg->nPositions) {
        return seg_corrupt(seg, err, offFoot + 80, "footer counts do not match the dictionary");
    }
    if (it.dataOff != seg->nData) {
        return seg_corrupt(seg, err, seg_off(seg, seg->pData + it.dataOff),
                           "%" PRIu64 " data bytes after the last key", seg->nData - it.dataOff);
    }
    for (int i = 0; i < SEG_DATA_PAD; i++) {
        if (seg->pData[seg->nData + i] != 0) {
            return seg_corrupt(seg, err, seg_off(seg, seg->pData + seg->nData + i),
                               "non-zero padding");
        }
    }
    if (seg->szInfixSec) {
        /* (5): the stored filter is the dictionary's */
        FtsInfix x;
        if ((rc = infix_build(seg, &x, err)) != LP_OK) return rc;
        const FtsInfix *y = &seg->infix;
        int bSame = x.nGram == y->nGram && x.nEntry == y->nEntry &&
                    memcmp(x.aGram, y->aGram, 4 * (size_t)x.nGram) == 0 &&
                    memcmp(x.aStart, y->aStart, 4 * ((size_t)x.nGram + 1)) == 0 &&
                    memcmp(x.aBlk, y->aBlk, 4 * (size_t)x.nEntry) == 0;
        fts_infix_free(&x);
        if (!bSame) {
            return seg_corrupt(seg, err, offFoot - seg->szInfixSec,
                               "infix section does not match the dictionary");
        }
    }
    return LP_OK;
}
