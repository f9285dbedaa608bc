/*
** crc32c.h — CRC-32C (Castagnoli), the checksum of WAL records, segment
** files and the manifest.
**
** Contract. crc32c_update(crc, p, n) extends the checksum crc of some
** earlier bytes by the n bytes at p; start with 0:
**     crc32c_update(0, "123456789", 9) == 0xE3069283
**     crc32c_update(crc32c_update(0, a, na), b, nb) == checksum of a then b
** (the usual reflected CRC with polynomial 0x82F63B78, initial value and
** final xor 0xFFFFFFFF, as in iSCSI, ext4 and LevelDB).
**
** Two implementations give identical results: the SSE4.2 crc32
** instruction (8 bytes per step) and a slicing-by-8 table fallback. The
** first call picks the instruction when the CPU has it
** (__builtin_cpu_supports), so one binary runs everywhere. Both are
** exported for the tests that compare them.
**
** Thread safety: all functions may be called from any thread.
*/
#ifndef LP_UTIL_CRC32C_H
#define LP_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c_update(uint32_t crc, const void *p, size_t n);

/* The table-driven implementation; always available. */
uint32_t crc32c_sw_update(uint32_t crc, const void *p, size_t n);

/* 1 when this CPU has SSE4.2, so crc32c_hw_update may be called. */
int crc32c_hw_available(void);

/* The SSE4.2 implementation. Only call it when crc32c_hw_available(). */
uint32_t crc32c_hw_update(uint32_t crc, const void *p, size_t n);

#endif /* LP_UTIL_CRC32C_H */
