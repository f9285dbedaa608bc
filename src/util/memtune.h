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
*/
#ifndef LP_UTIL_MEMTUNE_H
#define LP_UTIL_MEMTUNE_H

void lp_memtune(void);

#endif /* LP_UTIL_MEMTUNE_H */
