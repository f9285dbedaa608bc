/*
** segwriter.c — writes a sealed full-text segment file (see segment.h for
** the API). This comment is the format's reference; segreader.c reads it.
**
** FILE LAYOUT
**
**     header | data | dictionary | dictionary index | doc lengths | [infix] | footer
**
** The sections follow each other without gaps. Fixed-width integers are
** little-endian; "varint" is the LEB128 of util/varint.h; "codec block"
** and "tail encoding" are defined in codec.h.
**
** HEADER (32 bytes)
**     OFFSET SIZE DESCRIPTION
**      0      8   magic "LOUPEFTS"
**      8      4   format version (1)
**     12      4   nDocs: documents, ordinals 0..nDocs-1 (at most FTS_BEFORE_FIRST)
**     16      4   nFields: full-text fields (1..FTS_MAX_FIELDS)
**     20      4   flags; a reader rejects a file with unknown flags:
**                   bit 0 (EARLIER): entries carry nEarlier (always
**                   written; files from before it was kept lack it)
**                   bit 1 (INFIX): the INFIX section is present (written
**                   with FTS_SEGW_INFIX, for tables with min_infix_len)
**                   bit 2 (INFIX_EXACT, with INFIX): the filter holds the
**                   exact forms' keys only (FTS_SEGW_INFIX_EXACT: tables
**                   whose wildcards expand over exact forms)
**     24      4   reserved (0)
**     28      4   CRC32C of bytes 0..27
**
** DATA SECTION
** For each key, in key order: its postings region, then its positions
** region (unless the key occurs once: its position is then in its
** dictionary entry). After the last key, 8 zero bytes of padding, so that
** the 8-byte load of fts_codec_bits_get() stays inside the section.
**
** A postings region depends on df, the number of documents of the key:
**   df == 1      empty: the document is in the dictionary entry, tf is cf.
**   1 < df < 128 the tail encoding of the df postings (base 0).
**   df >= 128    nBlk = ceil(df/128) blocks, of which nFull = floor(df/128)
**                are packed and, when df%128 != 0, the last is a tail:
**       varint    maxTf of the whole list
**       varint    minLen of the whole list
**       5 bytes   the bit widths (0..32) of the skip fields, in this order:
**                 wLast wData wPos wTf wLen; W = their sum
**       skip      nBlk entries of W bits, entry j at bit j*W of this bit
**                 string (LSB first), padded to a whole byte:
**                   lastDoc  (wLast bits) last document of block j
**                   dataEnd  (wData) end of block j in the block data below
**                   posEnd   (wPos)  end of block j's positions in the key's
**                                    positions region
**                   maxTf    (wTf)   largest tf in block j
**                   minLen   (wLen)  smallest length of the key's field
**                                    among block j's documents
**       block data  block j is the bytes [dataEnd(j-1), dataEnd(j)) with
**                 dataEnd(-1) = 0; with base = lastDoc(j-1) + 1 (0 for j = 0):
**                   j < nFull: a codec block of the 128 values doc - base_i
**                              (base_i = previous doc + 1 inside the block),
**                              then a codec block of the 128 values tf - 1
**                   j = nFull: the tail encoding of the df%128 postings
**                 The last entry's dataEnd is the length of the block data.
**   The skip entries sit before the data so that xShallow() and xAdvance()
**   find a block (binary search on lastDoc, O(1) per probe since the
**   entries have a fixed width) and read its impact without decoding it.
**
** A positions region holds, for each posting in order, its tf positions
** as varint deltas, the first from 0. Block j's postings' positions are
** the bytes [posEnd(j-1), posEnd(j)) of it, posEnd(-1) = 0; the last
** entry's posEnd is the region's length.
**
** DICTIONARY SECTION
** The keys in order, cut into blocks of K keys (K in the footer, currently
** FTS_SEG_DICT_BLOCK): block b holds keys b*K .. min(b*K+K, nTerms)-1.
**     varint  dataOff  offset in the data section of the block's first
**                      key's postings region
** then for each key of the block:
**     byte    nShared << 4 | nSuffix, each capped at 15:
**               nShared  bytes shared with the previous key of the block
**                        (0 for its first key)
**               nSuffix  the remaining bytes (nShared + nSuffix <= FTS_MAX_KEY;
**                        nSuffix >= 1, as keys are distinct and ascending)
**     varint  nShared  only when the byte says 15
**     varint  nSuffix  only when the byte says 15
**     bytes   suffix
**     varint  (df - 1) * 2 + (cf == df)    df: documents (1..nDocs)
**     varint  cf - df - 1                  only when cf != df; cf: occurrences
**     varint  nEarlier                     only with flag EARLIER and key
**                                          byte 0 > 0: of the df documents,
**                                          those holding the key's term in a
**                                          lower field too (0..df)
**     then, when df == 1:
**       varint  the document (its tf is cf)
**       varint  cf == 1: the position itself (this varint is the key's
**               positions region); else the positions region's length
**     else:
**       varint  the postings region's length
**       varint  the positions region's length
** A key's postings region starts where the previous key's regions end (the
** block's first at dataOff). Key byte 0 is the field: < nFields. Most
** keys of a collection occur once or in one document: such an entry is
** the suffix plus 4 or 5 bytes, and nothing in the data section for cf 1.
**
** DICTIONARY INDEX SECTION
** ceil(nTerms/K) uint32: the offset of each dictionary block in the
** dictionary section, the first 0, strictly increasing. A lookup binary
** searches the blocks by their first key, then scans one block; a prefix
** scan starts the same way and reads on while keys match.
**
** DOC LENGTHS SECTION
**     nFields bytes   per field, the width of its lengths: 0 (all zero), 1, 2
**                     or 4 bytes, the smallest that holds its largest length
**     per field       nDocs lengths of that width (none for width 0)
** so a length is one load at a computed offset.
**
** INFIX SECTION (flag INFIX only; it is the bytes between the doc lengths
** section and the footer, so the footer does not list it)
** The infix filter of fts/infix.h: for every trigram (3 bytes b0 b1 b2 as
** the number b0 << 16 | b1 << 8 | b2) found in the term of some key (the
** key past its field byte; with flag INFIX_EXACT, of some exact form's
** key), the dictionary blocks holding such a key.
**     0..3 bytes  zero padding, so that what follows starts at a file
**                 offset that is a multiple of 4 (read in place from the
**                 mapping)
**     uint32      nGram: distinct trigrams
**     uint32      nEntry: block numbers in all the lists
**     uint32      nGram trigrams, strictly ascending, each < 2^24
**     uint32      nGram + 1 list starts: trigram i's blocks are entries
**                 [start i, start i+1); start 0 is 0, starts strictly
**                 increase, start nGram is nEntry
**     uint32      nEntry block numbers, strictly ascending within each list,
**                 each < the number of dictionary blocks
**     uint32      CRC32C of the section's bytes before it (padding included)
**
** FOOTER (120 bytes, at the end of the file)
**     OFFSET SIZE DESCRIPTION
**      0     16   data section: file offset (8), size (8), including the padding
**     16     16   dictionary section: offset, size
**     32     16   dictionary index section: offset, size
**     48     16   doc lengths section: offset, size
**     64     16   CRC32C of the data, dictionary, index and doc lengths sections (4 each)
**     80      8   nTerms: keys
**     88      8   nPostings: sum of df
**     96      8   nPositions: sum of cf
**    104      4   K: keys per dictionary block
**    108      4   CRC32C of footer bytes 0..107
**    112      8   magic "LPFTSEND"
**
** INVARIANTS the reader relies on (fts_segr_check verifies all of them):
**   (1) Sections tile the file: data starts at 32, each next one where the
**       previous ends, the footer ends the file.
**   (2) Key regions (cf 1: the postings region only) tile the data
**       section in key order, with nothing between them; every document
**       is < nDocs; within a list documents strictly increase; tf >= 1;
**       the sum of tf is cf.
**   (3) A skip entry's lastDoc, maxTf and minLen are those of its block;
**       the list's maxTf and minLen are those of all its blocks.
**   (4) A key's nEarlier is at most its df (checked whenever an entry is
**       decoded) and is the number of its documents that the lists of its
**       term in lower fields hold (checked by fts_segr_check only: a wrong
**       count skews scores, it endangers no read).
**   (5) The INFIX section's layout holds (checked at open) and its lists
**       are exactly those of the dictionary's keys (checked by
**       fts_segr_check only: a missing block loses wildcard matches, it
**       endangers no read).
**
** WRITER. Terms arrive in key order and their regions are written as each
** term ends (a term's postings are buffered until then, since the skip
** entries precede the blocks). The dictionary and the index are built in
** memory and written at the end with the doc lengths and the footer. The
** CRC of each section is computed on the bytes as they are written.
*/
#include "fts/segment.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fts/codec.h"
#include "fts/infix.h"
#include "fts/segment_int.h"
#include "util/crc32c.h"
#include "util/slab.h"
#include "util/strbuf.h"
#include "util/varint.h"
#include "util/vec.h"

/* Output buffer: sections are written through it in large writes. */
#define SEGW_BUF (64 * 1024)

struct FtsSegWriter {
    char *zPath;      /* file being written (owned) */
    int fd;           /* its descriptor, -1 once closed */
    uint32_t nDocs;   /* documents of the segment */
    int nFields;      /* full-text fields */
    uint32_t **aaLen; /* per field: nDocs lengths, NULL until given */
    int rc;           /* sticky error: LP_OK until a call fails */
    LpError err;      /* the message of rc */

    uint8_t *aBuf;                   /* output buffer of SEGW_BUF bytes */
    size_t nBuf;                     /* bytes pending in it */
    uint64_t off;                    /* file offset of the next byte written */
    uint32_t crc;                    /* CRC32C of the current section so far */
    uint64_t aSecOff[SEG_NSECTION];  /* per section: file offset ... */
    uint64_t aSecSize[SEG_NSECTION]; /* ... size ... */
    uint32_t aSecCrc[SEG_NSECTION];  /* ... and checksum */

    uint8_t aKey[FTS_MAX_KEY]; /* current key (the last one given) */
    int nKey;                  /* its length; 0 before the first key */
    VEC(uint32_t) aDoc;        /* current key's documents */
    VEC(uint32_t) aTf;         /* and their tf */
    VEC(uint64_t) aPosMark;    /* pos.n before postings 128, 256, ... */
    StrBuf pos;                /* current key's encoded positions */
    uint64_t cf;               /* current key's sum of tf */
    uint32_t nEarlier;         /* current key's nEarlier (fts_segw_earlier) */

    StrBuf head;         /* scratch: region header and skip entries */
    StrBuf blocks;       /* scratch: region block data */
    VEC(uint32_t) aSkip; /* scratch: SEG_NSKIP fields per block */

    StrBuf dict;                /* dictionary section being built */
    VEC(uint32_t) aIdx;         /* dictionary index being built */
    uint8_t aPrev[FTS_MAX_KEY]; /* previous key written to the dictionary */
    int nPrev;                  /* its length */
    uint64_t nTerms;            /* keys written */
    uint64_t dataOff;           /* data section offset of the next region */
    uint64_t nPostings;         /* sum of df written */
    uint64_t nPositions;        /* sum of cf written */

    int bPart;                  /* a part (fts_segw_open_part): its data section
                                ** goes to memory, its doc lengths are its main's */
    SlabPages *pPages;          /* a part's memory (util/slab.h: fresh pages,
                                ** huge where the kernel grants them) ... */
    Slab slab;
    uint8_t *pMem;              /* ... holding its data section in one block */
    size_t nMem;                /* of nMem bytes used */
    int lgMem;                  /* of 2^lgMem; 0 before the first byte */

    int bInfix;                 /* FTS_SEGW_INFIX: the INFIX section is written ... */
    int bInfixExact;            /* (FTS_SEGW_INFIX_EXACT: of the exact forms' keys only) */
    FtsInfixBuild infix;        /* ... from the keys' trigrams, gathered as they come */
};

/* ------------------------------------------------------------- errors */

/* Records the sticky error (the first one wins) and returns it. */
static int segw_fail(FtsSegWriter *w, int code, const char *zFmt, ...)
    __attribute__((format(printf, 3, 4)));
static int segw_fail(FtsSegWriter *w, int code, const char *zFmt, ...) {
    if (w->rc != LP_OK) return w->rc;
    char zMsg[LP_ERRMSG_MAX];
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(zMsg, sizeof(zMsg), zFmt, ap);
    va_end(ap);
    w->rc = code;
    lp_err_set(&w->err, code, "fts segment writer %s: %s", w->zPath, zMsg);
    return code;
}

/* ------------------------------------------------------------- output */

static int segw_flush(FtsSegWriter *w) {
    size_t done = 0;
    while (done < w->nBuf) {
        ssize_t k = write(w->fd, w->aBuf + done, w->nBuf - done);
        if (k < 0) {
            if (errno == EINTR) continue;
            return segw_fail(w, LP_IOERR, "write at offset %" PRIu64 ": %s",
                             w->off - w->nBuf + done, strerror(errno));
        }
        done += (size_t)k;
    }
    w->nBuf = 0;
    return LP_OK;
}

/* Appends n bytes to the file and to the current section's checksum (a
** part's to its memory). */
static int segw_write(FtsSegWriter *w, const void *p, size_t n) {
    if (w->rc != LP_OK) return w->rc;
    if (n == 0) return LP_OK;
    if (w->bPart) {
        uint8_t *a = slab_append(&w->slab, w->pMem, &w->lgMem, &w->nMem, p, n, 16);
        if (!a) return segw_fail(w, LP_NOMEM, "out of memory");
        w->pMem = a;
        w->off += n;
        return LP_OK;
    }
    w->crc = crc32c_update(w->crc, p, n);
    const uint8_t *s = (const uint8_t *)p;
    while (n > 0) {
        size_t k = SEGW_BUF - w->nBuf;
        if (k > n) k = n;
        memcpy(w->aBuf + w->nBuf, s, k);
        w->nBuf += k;
        w->off += k;
        s += k;
        n -= k;
        if (w->nBuf == SEGW_BUF && segw_flush(w) != LP_OK) return w->rc;
    }
    return LP_OK;
}

static void segw_section_begin(FtsSegWriter *w, int iSec) {
    w->aSecOff[iSec] = w->off;
    w->crc = 0;
}

static void segw_section_end(FtsSegWriter *w, int iSec) {
    w->aSecSize[iSec] = w->off - w->aSecOff[iSec];
    w->aSecCrc[iSec] = w->crc;
}

/* ---------------------------------------------------------------- open */

FtsSegWriter *fts_segw_open(const char *zPath, uint32_t nDocs, int nFields, LpError *err) {
    return fts_segw_open_flags(zPath, nDocs, nFields, 0, err);
}

FtsSegWriter *fts_segw_open_flags(const char *zPath, uint32_t nDocs, int nFields, unsigned flags,
                                  LpError *err) {
    if (nFields < 1 || nFields > FTS_MAX_FIELDS) {
        lp_err_set(err, LP_BADINPUT, "fts segment writer %s: %d fields (1..%d allowed)", zPath,
                   nFields, FTS_MAX_FIELDS);
        return NULL;
    }
    if (nDocs > FTS_BEFORE_FIRST) {
        lp_err_set(err, LP_BADINPUT, "fts segment writer %s: %" PRIu32 " documents (at most %u)",
                   zPath, nDocs, (unsigned)FTS_BEFORE_FIRST);
        return NULL;
    }
    FtsSegWriter *w = calloc(1, sizeof(*w));
    if (w) {
        w->zPath = strdup(zPath);
        w->aBuf = malloc(SEGW_BUF);
        w->aaLen = calloc((size_t)nFields, sizeof(uint32_t *));
    }
    if (!w || !w->zPath || !w->aBuf || !w->aaLen) {
        if (w) {
            free(w->zPath);
            free(w->aBuf);
            free(w->aaLen);
            free(w);
        }
        lp_err_set(err, LP_NOMEM, "fts segment writer %s: out of memory", zPath);
        return NULL;
    }
    w->nDocs = nDocs;
    w->nFields = nFields;
    w->bInfix = (flags & FTS_SEGW_INFIX) != 0;
    w->bInfixExact = w->bInfix && (flags & FTS_SEGW_INFIX_EXACT) != 0;
    lp_err_clear(&w->err);
    w->fd = open(zPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        lp_err_set(err, LP_IOERR, "fts segment writer %s: cannot create: %s", zPath,
                   strerror(errno));
        free(w->zPath);
        free(w->aBuf);
        free(w->aaLen);
        free(w);
        return NULL;
    }
    uint8_t aHdr[SEG_HEADER_SIZE] = {0};
    memcpy(aHdr, SEG_MAGIC, 8);
    seg_put32(aHdr + 8, SEG_VERSION);
    seg_put32(aHdr + 12, nDocs);
    seg_put32(aHdr + 16, (uint32_t)nFields);
    seg_put32(aHdr + 20, SEG_FLAG_EARLIER | (w->bInfix ? SEG_FLAG_INFIX : 0) |
                             (w->bInfixExact ? SEG_FLAG_INFIX_EXACT : 0));
    seg_put32(aHdr + 28, crc32c_update(0, aHdr, 28));
    segw_write(w, aHdr, sizeof(aHdr));
    segw_section_begin(w, SEG_SEC_DATA);
    return w;
}

/* -------------------------------------------------------------- terms */

/* Writes key[0..nKey) in a readable form for messages: field number, then
** the term with bytes outside printable ASCII as \xNN. */
static const char *key_repr(const uint8_t *key, int nKey, char *zOut, size_t nOut) {
    size_t n = (size_t)snprintf(zOut, nOut, "field %d '", nKey > 0 ? key[0] : -1);
    for (int i = 1; i < nKey && n + 6 < nOut; i++) {
        if (key[i] >= 0x20 && key[i] < 0x7f && key[i] != '\'') {
            zOut[n++] = (char)key[i];
        } else {
            n += (size_t)snprintf(zOut + n, nOut - n, "\\x%02x", key[i]);
        }
    }
    snprintf(zOut + n, nOut - n, "'");
    return zOut;
}

/* memcmp order with a shorter key first. */
static int key_cmp(const uint8_t *a, int na, const uint8_t *b, int nb) {
    int c = memcmp(a, b, (size_t)(na < nb ? na : nb));
    return c ? c : na - nb;
}

/* Appends the skip entries, header included, of the current key (df >=
** 128) to w->head and its block data to w->blocks. */
static int segw_encode_blocks(FtsSegWriter *w) {
    const uint32_t *aDoc = w->aDoc.a, *aTf = w->aTf.a;
    const uint32_t *aLen = w->aaLen[w->aKey[0]];
    size_t df = w->aDoc.n, nFull = df / FTS_BLOCK, nBlk = (df + FTS_BLOCK - 1) / FTS_BLOCK;
    uint32_t aVal[FTS_BLOCK], listMaxTf = 0, listMinLen = UINT32_MAX;
    if (VEC_RESERVE(&w->aSkip, nBlk * SEG_NSKIP)) return segw_fail(w, LP_NOMEM, "out of memory");
    uint32_t base = 0;
    for (size_t j = 0; j < nBlk; j++) {
        size_t i0 = j * FTS_BLOCK, n = j < nFull ? FTS_BLOCK : df - i0;
        uint32_t maxTf = 0, minLen = UINT32_MAX;
        for (size_t i = i0; i < i0 + n; i++) {
            if (aTf[i] > maxTf) maxTf = aTf[i];
            if (aLen[aDoc[i]] < minLen) minLen = aLen[aDoc[i]];
        }
        if (j < nFull) {
            uint8_t *p = (uint8_t *)strbuf_reserve(&w->blocks, 2 * FTS_CODEC_MAX_BLOCK);
            if (!p) return segw_fail(w, LP_NOMEM, "out of memory");
            uint32_t b = base;
            for (size_t i = 0; i < FTS_BLOCK; i++) {
                aVal[i] = aDoc[i0 + i] - b;
                b = aDoc[i0 + i] + 1;
            }
            size_t nByte = fts_codec_put_block(aVal, p);
            for (size_t i = 0; i < FTS_BLOCK; i++)
                aVal[i] = aTf[i0 + i] - 1;
            nByte += fts_codec_put_block(aVal, p + nByte);
            strbuf_commit(&w->blocks, nByte);
        } else if (fts_codec_tail_put(&w->blocks, base, aDoc + i0, aTf + i0, (int)n) != LP_OK) {
            return segw_fail(w, LP_NOMEM, "out of memory");
        }
        if (w->blocks.oom) return segw_fail(w, LP_NOMEM, "out of memory");
        uint64_t posEnd = j + 1 < nBlk ? w->aPosMark.a[j] : w->pos.n;
        if (w->blocks.n > UINT32_MAX || posEnd > UINT32_MAX) {
            char z[200];
            return segw_fail(w, LP_LIMIT, "key %s: over 4 GiB of postings or positions",
                             key_repr(w->aKey, w->nKey, z, sizeof(z)));
        }
        uint32_t *e = w->aSkip.a + j * SEG_NSKIP;
        e[SEG_SKIP_LAST] = aDoc[i0 + n - 1];
        e[SEG_SKIP_DATA] = (uint32_t)w->blocks.n;
        e[SEG_SKIP_POS] = (uint32_t)posEnd;
        e[SEG_SKIP_TF] = maxTf;
        e[SEG_SKIP_LEN] = minLen;
        if (maxTf > listMaxTf) listMaxTf = maxTf;
        if (minLen < listMinLen) listMinLen = minLen;
        base = aDoc[i0 + n - 1] + 1;
    }
    /* Each field's width is that of its largest value over the blocks. */
    int aW[SEG_NSKIP], nW = 0;
    for (int f = 0; f < SEG_NSKIP; f++) {
        uint32_t m = 0;
        for (size_t j = 0; j < nBlk; j++)
            m |= w->aSkip.a[j * SEG_NSKIP + f];
        aW[f] = fts_codec_bits_of(m);
        nW += aW[f];
    }
    uint8_t aHead[2 * VARINT_MAX32 + SEG_NSKIP], *p = aHead;
    p += varint_put_u32(p, listMaxTf);
    p += varint_put_u32(p, listMinLen);
    for (int f = 0; f < SEG_NSKIP; f++)
        *p++ = (uint8_t)aW[f];
    strbuf_append(&w->head, aHead, (size_t)(p - aHead));
    /* +8: fts_codec_bits_put works on 8 bytes at a time. */
    size_t nSkipByte = (nBlk * (size_t)nW + 7) / 8;
    uint8_t *pSkip = (uint8_t *)strbuf_reserve(&w->head, nSkipByte + 8);
    if (!pSkip) return segw_fail(w, LP_NOMEM, "out of memory");
    memset(pSkip, 0, nSkipByte + 8);
    uint64_t bit = 0;
    for (size_t j = 0; j < nBlk; j++) {
        for (int f = 0; f < SEG_NSKIP; f++) {
            fts_codec_bits_put(pSkip, bit, aW[f], w->aSkip.a[j * SEG_NSKIP + f]);
            bit += (uint64_t)aW[f];
        }
    }
    strbuf_commit(&w->head, nSkipByte);
    return w->head.oom ? segw_fail(w, LP_NOMEM, "out of memory") : LP_OK;
}

/* Writes the current key's regions and dictionary entry, then forgets the
** key's postings. A key without postings is skipped. */
static int segw_end_term(FtsSegWriter *w) {
    if (w->rc != LP_OK) return w->rc;
    size_t df = w->aDoc.n;
    if (df == 0) return LP_OK;
    strbuf_reset(&w->head);
    strbuf_reset(&w->blocks);
    int rc = LP_OK;
    if (df >= FTS_BLOCK) {
        rc = segw_encode_blocks(w);
    } else if (df > 1) {
        if (fts_codec_tail_put(&w->blocks, 0, w->aDoc.a, w->aTf.a, (int)df) != LP_OK) {
            rc = segw_fail(w, LP_NOMEM, "out of memory");
        }
    }
    if (rc != LP_OK) return rc;
    if (w->nEarlier > df) {
        char z[200];
        return segw_fail(w, LP_BADINPUT, "key %s: nEarlier %" PRIu32 " over its %zu documents",
                         key_repr(w->aKey, w->nKey, z, sizeof(z)), w->nEarlier, df);
    }
    uint64_t nPost = w->head.n + w->blocks.n;
    /* A key with one occurrence keeps its position in its dictionary
    ** entry (about 40% of the keys of a collection). */
    int bInline = w->cf == 1;
    segw_write(w, w->head.z, w->head.n);
    segw_write(w, w->blocks.z, w->blocks.n);
    if (!bInline) segw_write(w, w->pos.z, w->pos.n);
    if (w->rc != LP_OK) return w->rc;

    /* The dictionary entry; a new block every K keys. */
    if (w->nTerms % FTS_SEG_DICT_BLOCK == 0) {
        if (w->dict.n > UINT32_MAX) {
            return segw_fail(w, LP_LIMIT, "dictionary over 4 GiB");
        }
        if (VEC_PUSH(&w->aIdx, (uint32_t)w->dict.n)) return segw_fail(w, LP_NOMEM, "out of memory");
        uint8_t aOff[VARINT_MAX64];
        strbuf_append(&w->dict, aOff, varint_put_u64(aOff, w->dataOff));
        w->nPrev = 0;
    }
    int nShared = 0;
    while (nShared < w->nPrev && nShared < w->nKey && w->aPrev[nShared] == w->aKey[nShared]) {
        nShared++;
    }
    int nSuffix = w->nKey - nShared;
    uint8_t aEnt[1 + 7 * VARINT_MAX64 + FTS_MAX_KEY], *p = aEnt;
    *p++ = (uint8_t)((nShared < 15 ? nShared : 15) << 4 | (nSuffix < 15 ? nSuffix : 15));
    if (nShared >= 15) p += varint_put_u32(p, (uint32_t)nShared);
    if (nSuffix >= 15) p += varint_put_u32(p, (uint32_t)nSuffix);
    memcpy(p, w->aKey + nShared, (size_t)nSuffix);
    p += nSuffix;
    p += varint_put_u64(p, (uint64_t)(df - 1) * 2 + (w->cf == df));
    if (w->cf != df) p += varint_put_u64(p, w->cf - df - 1);
    if (w->aKey[0] > 0) p += varint_put_u32(p, w->nEarlier);
    if (df == 1) {
        p += varint_put_u32(p, w->aDoc.a[0]);
    } else {
        p += varint_put_u64(p, nPost);
    }
    if (bInline) {
        memcpy(p, w->pos.z, w->pos.n); /* one varint */
        p += w->pos.n;
    } else {
        p += varint_put_u64(p, w->pos.n);
    }
    strbuf_append(&w->dict, aEnt, (size_t)(p - aEnt));
    if (w->dict.oom) return segw_fail(w, LP_NOMEM, "out of memory");
    if (w->bInfix && (!w->bInfixExact || fts_infix_key_is_exact(w->aKey, w->nKey))) {
        fts_infix_key(&w->infix, w->aKey, w->nKey, w->aIdx.n - 1);
    }
    memcpy(w->aPrev, w->aKey, (size_t)w->nKey);
    w->nPrev = w->nKey;
    w->nTerms++;
    w->dataOff += nPost + (bInline ? 0 : w->pos.n);
    w->nPostings += df;
    w->nPositions += w->cf;

    w->aDoc.n = w->aTf.n = w->aPosMark.n = 0;
    strbuf_reset(&w->pos);
    w->cf = 0;
    w->nEarlier = 0;
    return LP_OK;
}

int fts_segw_term(FtsSegWriter *w, const uint8_t *key, int nKey) {
    if (w->rc != LP_OK) return w->rc;
    char z1[200], z2[200];
    if (nKey < 1 || nKey > FTS_MAX_KEY) {
        return segw_fail(w, LP_BADINPUT, "key of %d bytes (1..%d allowed)", nKey, FTS_MAX_KEY);
    }
    if (key[0] >= w->nFields) {
        return segw_fail(w, LP_BADINPUT, "key %s: field out of range (%d fields)",
                         key_repr(key, nKey, z1, sizeof(z1)), w->nFields);
    }
    if (!w->aaLen[key[0]]) {
        return segw_fail(w, LP_BADINPUT, "key %s: the field's doc lengths were not given",
                         key_repr(key, nKey, z1, sizeof(z1)));
    }
    if (w->nKey > 0 && key_cmp(w->aKey, w->nKey, key, nKey) >= 0) {
        return segw_fail(w, LP_BADINPUT, "key %s does not come after %s",
                         key_repr(key, nKey, z1, sizeof(z1)),
                         key_repr(w->aKey, w->nKey, z2, sizeof(z2)));
    }
    if (segw_end_term(w) != LP_OK) return w->rc;
    memcpy(w->aKey, key, (size_t)nKey);
    w->nKey = nKey;
    return LP_OK;
}

int fts_segw_earlier(FtsSegWriter *w, uint32_t nEarlier) {
    if (w->rc != LP_OK) return w->rc;
    char z[200];
    if (w->nKey == 0) return segw_fail(w, LP_BADINPUT, "nEarlier before the first key");
    if (w->aKey[0] == 0 && nEarlier != 0) {
        return segw_fail(w, LP_BADINPUT, "key %s: nEarlier %" PRIu32 " in field 0",
                         key_repr(w->aKey, w->nKey, z, sizeof(z)), nEarlier);
    }
    w->nEarlier = nEarlier;
    return LP_OK;
}

/* The key for messages, formatted only on the error paths. */
#define zKey key_repr(w->aKey, w->nKey, z, sizeof(z))

/* The checks every posting passes before its positions are taken, and the
** mark of a new block's positions. LP_OK or the (sticky) error. */
static int posting_begin(FtsSegWriter *w, uint32_t doc, uint32_t tf, int bPos) {
    if (w->rc != LP_OK) return w->rc;
    char z[200];
    if (w->nKey == 0) return segw_fail(w, LP_BADINPUT, "posting before the first key");
    if (doc >= w->nDocs) {
        return segw_fail(w, LP_BADINPUT,
                         "key %s: document %" PRIu32 " out of range (%" PRIu32 " documents)", zKey,
                         doc, w->nDocs);
    }
    if (w->aDoc.n > 0 && doc <= w->aDoc.a[w->aDoc.n - 1]) {
        return segw_fail(w, LP_BADINPUT,
                         "key %s: document %" PRIu32 " does not come after %" PRIu32, zKey, doc,
                         w->aDoc.a[w->aDoc.n - 1]);
    }
    if (tf == 0)
        return segw_fail(w, LP_BADINPUT, "key %s: document %" PRIu32 " with tf 0", zKey, doc);
    if (!bPos) {
        return segw_fail(w, LP_BADINPUT, "key %s: document %" PRIu32 " without positions", zKey,
                         doc);
    }
    if (w->aDoc.n > 0 && w->aDoc.n % FTS_BLOCK == 0 && VEC_PUSH(&w->aPosMark, (uint64_t)w->pos.n)) {
        return segw_fail(w, LP_NOMEM, "out of memory");
    }
    return LP_OK;
}

/* The end of every posting: its document and tf kept for the blocks. */
static int posting_end(FtsSegWriter *w, uint32_t doc, uint32_t tf) {
    if (VEC_PUSH(&w->aDoc, doc) || VEC_PUSH(&w->aTf, tf)) return segw_fail(w, LP_NOMEM, "out of memory");
    w->cf += tf;
    return LP_OK;
}

int fts_segw_posting(FtsSegWriter *w, uint32_t doc, const uint32_t *aPos, uint32_t tf) {
    int rc = posting_begin(w, doc, tf, aPos != NULL);
    if (rc != LP_OK) return rc;
    char z[200];
    /* The positions as varint_delta_encode_u32 writes them, inline: this
    ** runs once per posting of every flush and merge. Nothing is kept of
    ** a list that is not ascending. */
    uint8_t *p = (uint8_t *)strbuf_reserve_fast(&w->pos, (size_t)tf * VARINT_MAX32);
    if (!p) return segw_fail(w, LP_NOMEM, "out of memory");
    size_t n = 0;
    uint32_t prev = 0;
    for (uint32_t i = 0; i < tf; i++) {
        uint32_t v = aPos[i];
        if (v < prev) {
            return segw_fail(w, LP_BADINPUT,
                             "key %s: document %" PRIu32 ": positions not ascending at index %" PRIu32
                             " (%" PRIu32 " after %" PRIu32 ")",
                             zKey, doc, i, v, prev);
        }
        n += varint_put_u32(p + n, v - prev);
        prev = v;
    }
    strbuf_commit_fast(&w->pos, n);
    return posting_end(w, doc, tf);
}

int fts_segw_posting_enc(FtsSegWriter *w, uint32_t doc, uint32_t tf, const uint8_t *pPos, size_t nPos) {
    int rc = posting_begin(w, doc, tf, pPos != NULL);
    if (rc != LP_OK) return rc;
    /* Exactly tf varints, none longer than a uint32's: what the reader
    ** will decode (it checks the values' sum when it does). */
    if (!fts_codec_varints_exact(pPos, nPos, tf)) {
        char z[200];
        return segw_fail(w, LP_BADINPUT, "key %s: document %" PRIu32 ": positions are not %" PRIu32 " varints",
                         zKey, doc, tf);
    }
    char *p = strbuf_reserve_fast(&w->pos, nPos);
    if (!p) return segw_fail(w, LP_NOMEM, "out of memory");
    memcpy(p, pPos, nPos);
    strbuf_commit_fast(&w->pos, nPos);
    return posting_end(w, doc, tf);
}
/* Is a call of fts_segw_postings one whole block (what a flush's xBlock
** gives) that passes every check? Its positions start at the block's, so
** they need no walk: the documents and tfs are checked in one loop, the
** positions' bytes at once. Sets *pcf to the tfs' sum when it does. */
static int block_checks_out(const FtsSegWriter *w, const uint32_t *aDoc, const uint32_t *aTf, uint32_t n,
                            size_t nHad, uint32_t prev, const uint8_t *pPos, size_t nPos, uint64_t *pcf) {
    if (nHad % FTS_BLOCK != 0 || n > FTS_BLOCK) return 0;
    uint64_t cf = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (aDoc[i] >= w->nDocs || ((nHad > 0 || i > 0) && aDoc[i] <= prev) || aTf[i] == 0) return 0;
        prev = aDoc[i];
        cf += aTf[i];
    }
    *pcf = cf;
    return fts_codec_varints_exact(pPos, nPos, cf);
}

/* Checks the postings one by one as fts_segw_posting_enc does, walking
** each one's tf varints, which finds where each block's positions start
** (pushed to aPosMark) and names the posting that fails. Sets *pcf to the
** tfs' sum. LP_OK or the (sticky) error. */
static int postings_walk(FtsSegWriter *w, const uint32_t *aDoc, const uint32_t *aTf, uint32_t n, size_t nHad,
                         uint32_t prev, const uint8_t *pPos, size_t nPos, uint64_t *pcf) {
    char z[200];
    const uint8_t *p = pPos, *pEnd = pPos + nPos;
    uint64_t cf = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t doc = aDoc[i], tf = aTf[i];
        if (doc >= w->nDocs) {
            return segw_fail(w, LP_BADINPUT,
                             "key %s: document %" PRIu32 " out of range (%" PRIu32 " documents)", zKey,
                             doc, w->nDocs);
        }
        if ((nHad > 0 || i > 0) && doc <= prev) {
            return segw_fail(w, LP_BADINPUT,
                             "key %s: document %" PRIu32 " does not come after %" PRIu32, zKey, doc, prev);
        }
        if (tf == 0)
            return segw_fail(w, LP_BADINPUT, "key %s: document %" PRIu32 " with tf 0", zKey, doc);
        if ((nHad + i) % FTS_BLOCK == 0 && nHad + i > 0 &&
            VEC_PUSH(&w->aPosMark, (uint64_t)(w->pos.n + (size_t)(p - pPos)))) {
            return segw_fail(w, LP_NOMEM, "out of memory");
        }
        for (uint32_t k = 0; k < tf; k++) {
            /* At most VARINT_MAX32 - 1 continuation bytes, then the last. */
            size_t nLeft = (size_t)(pEnd - p), len = 0;
            while (len < nLeft && len < VARINT_MAX32 - 1 && (p[len] & 0x80)) len++;
            if (len >= nLeft || (p[len] & 0x80)) {
                return segw_fail(w, LP_BADINPUT, "key %s: document %" PRIu32 ": positions are not %" PRIu32
                                 " varints", zKey, doc, tf);
            }
            p += len + 1;
        }
        cf += tf;
        prev = doc;
    }
    if (p != pEnd) {
        return segw_fail(w, LP_BADINPUT, "key %s: document %" PRIu32 ": positions are not %" PRIu32 " varints",
                         zKey, aDoc[n - 1], aTf[n - 1]);
    }
    *pcf = cf;
    return LP_OK;
}

int fts_segw_postings(FtsSegWriter *w, const uint32_t *aDoc, const uint32_t *aTf, uint32_t n,
                      const uint8_t *pPos, size_t nPos) {
    if (w->rc != LP_OK) return w->rc;
    char z[200];
    if (w->nKey == 0) return segw_fail(w, LP_BADINPUT, "posting before the first key");
    if (n == 0) return LP_OK;
    if (!pPos) return segw_fail(w, LP_BADINPUT, "key %s: document %" PRIu32 " without positions", zKey, aDoc[0]);
    size_t nHad = w->aDoc.n;
    if (VEC_RESERVE(&w->aDoc, nHad + n) || VEC_RESERVE(&w->aTf, nHad + n)) {
        return segw_fail(w, LP_NOMEM, "out of memory");
    }
    uint32_t prev = nHad ? w->aDoc.a[nHad - 1] : 0;
    uint64_t cf = 0;
    if (block_checks_out(w, aDoc, aTf, n, nHad, prev, pPos, nPos, &cf)) {
        if (nHad > 0 && VEC_PUSH(&w->aPosMark, (uint64_t)w->pos.n)) return segw_fail(w, LP_NOMEM, "out of memory");
    } else if (postings_walk(w, aDoc, aTf, n, nHad, prev, pPos, nPos, &cf) != LP_OK) {
        return w->rc;
    }
    char *o = strbuf_reserve_fast(&w->pos, nPos);
    if (!o) return segw_fail(w, LP_NOMEM, "out of memory");
    memcpy(o, pPos, nPos);
    strbuf_commit_fast(&w->pos, nPos);
    memcpy(w->aDoc.a + nHad, aDoc, sizeof(uint32_t) * n);
    memcpy(w->aTf.a + nHad, aTf, sizeof(uint32_t) * n);
    w->aDoc.n = w->aTf.n = nHad + n;
    w->cf += cf;
    return LP_OK;
}
#undef zKey

int fts_segw_doclens(FtsSegWriter *w, int iField, const uint32_t *aLen) {
    if (w->rc != LP_OK) return w->rc;
    if (iField < 0 || iField >= w->nFields) {
        return segw_fail(w, LP_BADINPUT, "doc lengths of field %d (%d fields)", iField, w->nFields);
    }
    if (w->aaLen[iField]) {
        return segw_fail(w, LP_BADINPUT, "doc lengths of field %d given twice", iField);
    }
    size_t sz = (size_t)w->nDocs * sizeof(uint32_t);
    w->aaLen[iField] = malloc(sz ? sz : 1);
    if (!w->aaLen[iField]) return segw_fail(w, LP_NOMEM, "out of memory");
    if (sz) memcpy(w->aaLen[iField], aLen, sz);
    return LP_OK;
}

/* -------------------------------------------------------------- finish */

static void segw_free(FtsSegWriter *w) {
    if (w->fd >= 0) close(w->fd);
    for (int f = 0; f < w->nFields && !w->bPart; f++)
        free(w->aaLen[f]);
    if (!w->bPart) free(w->aaLen);
    if (w->pPages) {
        slab_free(&w->slab, w->pMem, w->lgMem);
        slab_pages_free(w->pPages);
    }
    free(w->aBuf);
    VEC_FREE(&w->aDoc);
    VEC_FREE(&w->aTf);
    VEC_FREE(&w->aPosMark);
    VEC_FREE(&w->aSkip);
    VEC_FREE(&w->aIdx);
    fts_infix_build_free(&w->infix);
    strbuf_free(&w->pos);
    strbuf_free(&w->head);
    strbuf_free(&w->blocks);
    strbuf_free(&w->dict);
    free(w->zPath);
    free(w);
}

void fts_segw_abort(FtsSegWriter *w) {
    if (!w) return;
    if (!w->bPart) unlink(w->zPath);
    segw_free(w);
}

FtsSegWriter *fts_segw_open_part(const FtsSegWriter *pMain, LpError *err) {
    FtsSegWriter *w = calloc(1, sizeof(*w));
    if (w && (!(w->zPath = strdup(pMain->zPath)) || !(w->pPages = slab_pages_new()))) {
        free(w->zPath);
        free(w);
        w = NULL;
    }
    if (!w) {
        lp_err_set(err, LP_NOMEM, "fts segment writer %s: out of memory", pMain->zPath);
        return NULL;
    }
    w->fd = -1;
    w->bPart = 1;
    slab_init(&w->slab, w->pPages);
    w->nDocs = pMain->nDocs;
    w->nFields = pMain->nFields;
    w->aaLen = pMain->aaLen; /* borrowed: given before the parts start */
    w->bInfix = pMain->bInfix;
    w->bInfixExact = pMain->bInfixExact;
    lp_err_clear(&w->err);
    return w;
}

int fts_segw_append_part(FtsSegWriter *w, FtsSegWriter *part) {
    segw_end_term(w); /* the keys w took itself, if any */
    segw_end_term(part);
    if (w->rc == LP_OK && part->rc != LP_OK) {
        w->rc = part->rc;
        w->err = part->err;
    }
    if (w->rc == LP_OK && (w->bPart || w->aDoc.n || w->nTerms % FTS_SEG_DICT_BLOCK != 0)) {
        segw_fail(w, LP_INTERNAL, "a part appended where a dictionary block is half written");
    }
    segw_write(w, part->pMem, part->nMem);
    if (w->rc == LP_OK && w->bInfix && fts_infix_append(&w->infix, &part->infix, w->aIdx.n) != LP_OK) {
        segw_fail(w, LP_NOMEM, "out of memory");
    }
    /* Its dictionary blocks, each one's data offset moved past the data
    ** before the part. */
    for (size_t b = 0; b < part->aIdx.n && w->rc == LP_OK; b++) {
        const uint8_t *p = (const uint8_t *)part->dict.z + part->aIdx.a[b];
        const uint8_t *pEnd = (const uint8_t *)part->dict.z +
                              (b + 1 < part->aIdx.n ? part->aIdx.a[b + 1] : part->dict.n);
        uint64_t off;
        if (varint_get_u64(&p, pEnd, &off) != LP_OK) {
            segw_fail(w, LP_INTERNAL, "a part's dictionary block %zu is damaged", b);
            break;
        }
        if (w->dict.n > UINT32_MAX) {
            segw_fail(w, LP_LIMIT, "dictionary over 4 GiB");
            break;
        }
        if (VEC_PUSH(&w->aIdx, (uint32_t)w->dict.n)) {
            segw_fail(w, LP_NOMEM, "out of memory");
            break;
        }
        uint8_t aOff[VARINT_MAX64];
        strbuf_append(&w->dict, aOff, varint_put_u64(aOff, w->dataOff + off));
        strbuf_append(&w->dict, p, (size_t)(pEnd - p));
    }
    if (w->rc == LP_OK && w->dict.oom) segw_fail(w, LP_NOMEM, "out of memory");
    if (w->rc == LP_OK) {
        w->nTerms += part->nTerms;
        w->nPostings += part->nPostings;
        w->nPositions += part->nPositions;
        w->dataOff += part->dataOff;
        if (part->nKey > 0) {
            memcpy(w->aKey, part->aKey, (size_t)part->nKey);
            w->nKey = part->nKey;
            memcpy(w->aPrev, part->aPrev, (size_t)part->nPrev);
            w->nPrev = part->nPrev;
        }
    }
    segw_free(part);
    return w->rc;
}

/* The doc lengths section: widths, then the arrays. */
static void segw_write_doclens(FtsSegWriter *w) {
    uint8_t aW[FTS_MAX_FIELDS];
    for (int f = 0; f < w->nFields; f++) {
        uint32_t m = 0;
        for (uint32_t d = 0; d < w->nDocs; d++)
            m |= w->aaLen[f][d];
        aW[f] = m == 0 ? 0 : m <= 0xff ? 1 : m <= 0xffff ? 2 : 4;
    }
    segw_write(w, aW, (size_t)w->nFields);
    uint8_t aChunk[4096];
    for (int f = 0; f < w->nFields; f++) {
        size_t n = 0;
        for (uint32_t d = 0; d < w->nDocs; d++) {
            uint8_t aLE[4];
            seg_put32(aLE, w->aaLen[f][d]);
            memcpy(aChunk + n, aLE, aW[f]);
            n += aW[f];
            if (n + 4 > sizeof(aChunk)) {
                segw_write(w, aChunk, n);
                n = 0;
            }
        }
        segw_write(w, aChunk, n);
    }
}

/* The INFIX section, after the doc lengths (its own checksum inside). */
static void segw_write_infix(FtsSegWriter *w) {
    FtsInfix x;
    if (fts_infix_finish(&w->infix, &x) != LP_OK) {
        segw_fail(w, LP_NOMEM, "out of memory");
        return;
    }
    uint64_t n = fts_infix_size(&x, w->off);
    uint8_t *p = n <= SIZE_MAX ? malloc((size_t)n) : NULL;
    if (!p) {
        segw_fail(w, LP_NOMEM, "out of memory");
    } else {
        fts_infix_encode(&x, w->off, p);
        segw_write(w, p, (size_t)n);
    }
    free(p);
    fts_infix_free(&x);
}

int fts_segw_finish(FtsSegWriter *w, LpError *err) {
    segw_end_term(w);
    for (int f = 0; f < w->nFields && w->rc == LP_OK; f++) {
        if (!w->aaLen[f]) segw_fail(w, LP_BADINPUT, "doc lengths of field %d not given", f);
    }
    static const uint8_t aPad[SEG_DATA_PAD] = {0};
    segw_write(w, aPad, sizeof(aPad));
    segw_section_end(w, SEG_SEC_DATA);

    segw_section_begin(w, SEG_SEC_DICT);
    segw_write(w, w->dict.z, w->dict.n);
    segw_section_end(w, SEG_SEC_DICT);

    segw_section_begin(w, SEG_SEC_INDEX);
    for (size_t b = 0; b < w->aIdx.n; b++) {
        uint8_t aLE[4];
        seg_put32(aLE, w->aIdx.a[b]);
        segw_write(w, aLE, 4);
    }
    segw_section_end(w, SEG_SEC_INDEX);

    segw_section_begin(w, SEG_SEC_DOCLENS);
    if (w->rc == LP_OK) segw_write_doclens(w);
    segw_section_end(w, SEG_SEC_DOCLENS);

    if (w->bInfix && w->rc == LP_OK) segw_write_infix(w);

    uint8_t aFoot[SEG_FOOTER_SIZE] = {0};
    for (int s = 0; s < SEG_NSECTION; s++) {
        seg_put64(aFoot + 16 * s, w->aSecOff[s]);
        seg_put64(aFoot + 16 * s + 8, w->aSecSize[s]);
        seg_put32(aFoot + 64 + 4 * s, w->aSecCrc[s]);
    }
    seg_put64(aFoot + 80, w->nTerms);
    seg_put64(aFoot + 88, w->nPostings);
    seg_put64(aFoot + 96, w->nPositions);
    seg_put32(aFoot + 104, FTS_SEG_DICT_BLOCK);
    seg_put32(aFoot + 108, crc32c_update(0, aFoot, 108));
    memcpy(aFoot + 112, SEG_END_MAGIC, 8);
    segw_write(w, aFoot, sizeof(aFoot));

    if (w->rc == LP_OK) segw_flush(w);
    if (w->rc == LP_OK && fsync(w->fd) != 0) {
        segw_fail(w, LP_IOERR, "fsync: %s", strerror(errno));
    }
    if (w->rc == LP_OK) {
        int fd = w->fd;
        w->fd = -1;
        if (close(fd) != 0) segw_fail(w, LP_IOERR, "close: %s", strerror(errno));
    }
    int rc = w->rc;
    if (rc != LP_OK) {
        if (err) *err = w->err;
        fts_segw_abort(w);
    } else {
        segw_free(w);
    }
    return rc;
}
