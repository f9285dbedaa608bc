/*
** threadpool.h — a fixed-size pool of worker threads with wait groups.
**
** Contract. tpool_new starts nThread workers that take tasks (a function
** and its argument) from one FIFO queue. tpool_submit queues a task and
** returns at once. A TpoolGroup counts the tasks submitted through it, so
** a caller can fan work out and wait for exactly that work:
**
**     TpoolGroup g;
**     tpool_group_init(&g, pool);
**     for (i = 0; i < nSeg; i++)
**         if (tpool_group_submit(&g, search_segment, &aJob[i])) { ...LP_NOMEM... }
**     tpool_group_wait(&g);       // every search_segment call has returned
**
** While it waits, tpool_group_wait runs the group's still-queued tasks on
** the calling thread instead of sleeping. So the caller's thread works too,
** and a task running on a worker may itself fan out into the same pool and
** wait without deadlocking, even in a pool of one thread. Otherwise waiting
** sleeps on a condition variable; nothing spins.
**
** tpool_free lets the workers finish every queued task (including tasks
** those tasks submit), joins them and frees the pool. The task's function
** owns its argument's fate: the pool never frees arguments.
**
** Workers are started with all signals blocked, so process signals
** (SIGINT, SIGTERM, SIGPIPE) are delivered to the server's own threads.
**
** Errors: tpool_new reports LP_BADINPUT (thread count over
** TPOOL_MAX_THREADS), LP_NOMEM, or LP_LIMIT (the system refused a thread).
** Submitting fails only with LP_NOMEM (the task is then not queued and the
** group's count is unchanged).
**
** Thread safety: tpool_submit and the group functions may be called from
** any thread, including from tasks. A TpoolGroup is waited on by one
** thread at a time, lives until its wait has returned, and may be reused
** after that. tpool_free must not race with anything else on the pool.
*/
#ifndef LP_UTIL_THREADPOOL_H
#define LP_UTIL_THREADPOOL_H

#include <stddef.h>

#include "util/error.h"

#define TPOOL_MAX_THREADS 1024

typedef struct Tpool Tpool;         /* opaque */
typedef struct TpoolTask TpoolTask; /* opaque queue entry */

typedef void (*TpoolFn)(void *arg);

/* A wait group. Its fields belong to the pool and are read and written
** only under the pool's mutex. */
typedef struct TpoolGroup {
    Tpool *pPool;           /* the pool its tasks run on */
    size_t nPending;        /* tasks submitted and not yet finished */
    TpoolTask *pQueued;     /* its tasks still in the queue (not yet started) */
} TpoolGroup;

/* Starts a pool of nThread workers (nThread <= 0: one per online CPU).
** Returns NULL and fills err on failure. */
Tpool *tpool_new(int nThread, LpError *err);

/* Runs every queued task to completion, joins the workers and frees the
** pool. NULL is a no-op. */
void tpool_free(Tpool *pool);

/* Number of worker threads. */
int tpool_size(const Tpool *pool);

/* Queues fn(arg). LP_OK or LP_NOMEM. */
int tpool_submit(Tpool *pool, TpoolFn fn, void *arg);

/* Prepares an empty group whose tasks run on pool. */
void tpool_group_init(TpoolGroup *g, Tpool *pool);

/* Queues fn(arg) as a task of group g. LP_OK or LP_NOMEM. */
int tpool_group_submit(TpoolGroup *g, TpoolFn fn, void *arg);

/* Returns when every task submitted to g (before or during the wait) has
** finished, running queued ones on the calling thread meanwhile. */
void tpool_group_wait(TpoolGroup *g);

#endif /* LP_UTIL_THREADPOOL_H */
