/*
** memtune.h — process-wide settings of the C library's allocator.
**
** Contract. lp_memtune() is called once at the start of a program that
** runs many short queries (the server, the benchmark tools), before any
** thread starts. A query allocates and frees a few hundred KiB to a few
** MiB (postings cursors, its arena); with glibc's defaults, freeing it
** shrinks the heap back as soon as 128 KiB lie free at its top, and the
** next query grows it again, paying a page fault for every page it
** touches. lp_memtune keeps up to 32 MiB of freed memory per heap for
** reuse and grows heaps 16 MiB at a time. On the collections of
** make bench-fulltext this makes long OR queries 1.4x faster. Other C
** libraries: a no-op.
**
** Also the page-level helpers memory that is filled or read at random
** wants: populating pages in one call (lp_prefault, lp_prefault_read) and
** mapping memory in huge pages (lp_map_huge). All of them are safe from
** any thread.
*/
#ifndef LP_UTIL_MEMTUNE_H
#define LP_UTIL_MEMTUNE_H

#include <stddef.h>

void lp_memtune(void);

/* Faults in the whole pages of p[0..n) for writing, in one call
** (MADV_POPULATE_WRITE, Linux 5.14 and later; elsewhere, or when the
** kernel refuses, a no-op: the pages then fault one by one when first
** written, as they would have anyway). Nothing in the range changes. For
** fresh memory about to be filled: on the virtual machines measured, a
** page faulted by its first write costs ~11 us and a page populated ~5. */
void lp_prefault(void *p, size_t n);

/* Maps every page of p[0..n) for reading, in one call
** (MADV_POPULATE_READ; the same fallback): for a read-only table in the
** executable that is read at random, whose pages would otherwise be
** mapped by a fault apiece (16 at a time) on first reads. */
void lp_prefault_read(const void *p, size_t n);

/* Does the kernel give transparent huge pages (2 MiB) to memory advised
** so (MADV_HUGEPAGE)? Read once from sysfs; 0 elsewhere than Linux. */
int lp_huge_pages(void);

#define LP_HUGE_PAGE ((size_t)2 << 20)

/* n bytes of fresh zeroed memory at a multiple of LP_HUGE_PAGE (n rounded
** up to one), advised as huge pages, for lp_unmap_huge(p, n); NULL when
** out of address space. Advice only: a kernel with no huge page to give
** maps 4 KiB ones. A huge page is one fault (zeroing 2 MiB) and one TLB
** entry instead of 512 of each: on the virtual machines measured, the
** first read of a 4 KiB page costs ~6 us even when populated, and a
** table read at random over hundreds of them pays that per page. */
void *lp_map_huge(size_t n);
void lp_unmap_huge(void *p, size_t n);

#endif /* LP_UTIL_MEMTUNE_H */
