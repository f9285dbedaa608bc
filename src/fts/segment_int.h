/*
** segment_int.h — constants and helpers shared by the segment writer and
** reader (segwriter.c, segreader.c). Not a public interface: the format is
** documented at the top of segwriter.c.
*/
#ifndef LP_FTS_SEGMENT_INT_H
#define LP_FTS_SEGMENT_INT_H

#include <stdint.h>
#include <string.h>

#define SEG_MAGIC "LOUPEFTS"     /* header bytes 0..7 */
#define SEG_END_MAGIC "LPFTSEND" /* last 8 bytes of the file */
#define SEG_VERSION 1
#define SEG_HEADER_SIZE 32
#define SEG_FOOTER_SIZE 120
#define SEG_DATA_PAD 8 /* zero bytes ending the data section */
/* Header flags. EARLIER: dictionary entries of keys of field > 0 hold
** nEarlier (files without it are still read: their nEarlier is unknown). */
#define SEG_FLAG_EARLIER 1u
/* INFIX: the INFIX section (the infix filter, fts/infix.h) lies between
** the doc lengths section and the footer. */
#define SEG_FLAG_INFIX 2u
/* INFIX_EXACT (with INFIX): the filter holds the exact forms' keys only
** (fts_infix_key_is_exact): a table whose prefixes and wildcards expand
** over exact forms (analyzer_has_exact_forms) scans no other key. */
#define SEG_FLAG_INFIX_EXACT 4u
#define SEG_FLAGS_KNOWN (SEG_FLAG_EARLIER | SEG_FLAG_INFIX | SEG_FLAG_INFIX_EXACT)

/* Sections, in file order. */
enum { SEG_SEC_DATA, SEG_SEC_DICT, SEG_SEC_INDEX, SEG_SEC_DOCLENS, SEG_NSECTION };

/* Fields of a skip entry, in bit order. */
enum { SEG_SKIP_LAST, SEG_SKIP_DATA, SEG_SKIP_POS, SEG_SKIP_TF, SEG_SKIP_LEN, SEG_NSKIP };

/* Largest accepted keys-per-block in a footer (the writer uses
** FTS_SEG_DICT_BLOCK); bounds the work of one dictionary block scan. */
#define SEG_MAX_DICT_BLOCK 1024

static inline void seg_put32(uint8_t *p, uint32_t v) {
    memcpy(p, &v, 4); /* little-endian host (codec.h checks) */
}
static inline void seg_put64(uint8_t *p, uint64_t v) {
    memcpy(p, &v, 8);
}
static inline uint32_t seg_get32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t seg_get64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

#endif /* LP_FTS_SEGMENT_INT_H */
