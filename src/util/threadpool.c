/*
** threadpool.c — see threadpool.h.
**
** One mutex guards everything: the queue, the stop flag and every group's
** fields. Queued tasks sit on two doubly linked lists at once: the pool's
** FIFO queue (pPrev/pNext), which workers pop from the head, and their
** group's list of not-yet-started tasks (pGPrev/pGNext), from which a
** waiting caller takes work. Whoever takes a task unlinks it from both, so
** a task runs exactly once.
**
** Invariants (under the mutex):
**   (1) A group's nPending counts its tasks that are queued or running; it
**       is decremented only after the task's function has returned.
**   (2) cvDone is broadcast whenever some group's nPending reaches 0, and
**       the finishing thread touches the group no more after unlocking, so
**       the waiter may free the group as soon as it sees 0.
**   (3) A worker exits only when bStop is set and the queue is empty; a
**       task still running on another worker may queue more work, which
**       that worker then runs itself before it can exit.
*/
#include "util/threadpool.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct TpoolTask {
    TpoolFn fn;             /* function to run */
    void *arg;              /* its argument, owned by the submitter */
    TpoolGroup *pGroup;     /* group counting it, or NULL */
    TpoolTask *pPrev;       /* pool queue neighbours */
    TpoolTask *pNext;
    TpoolTask *pGPrev;      /* group list neighbours (group tasks only) */
    TpoolTask *pGNext;
};

struct Tpool {
    pthread_mutex_t mu;     /* guards every field below and all groups */
    pthread_cond_t cvWork;  /* queue became non-empty, or bStop was set */
    pthread_cond_t cvDone;  /* some group's nPending reached 0 */
    TpoolTask *pHead;       /* oldest queued task, next to run */
    TpoolTask *pTail;       /* newest queued task */
    int bStop;              /* tpool_free was called: drain, then exit */
    int nThread;            /* workers started (all of aThread) */
    pthread_t aThread[];    /* the workers */
};

/* Removes t from the queue and from its group's list. Mutex held. */
static void task_unlink(Tpool *pool, TpoolTask *t) {
    if (t->pPrev) t->pPrev->pNext = t->pNext;
    else pool->pHead = t->pNext;
    if (t->pNext) t->pNext->pPrev = t->pPrev;
    else pool->pTail = t->pPrev;
    TpoolGroup *g = t->pGroup;
    if (g) {
        if (t->pGPrev) t->pGPrev->pGNext = t->pGNext;
        else g->pQueued = t->pGNext;
        if (t->pGNext) t->pGNext->pGPrev = t->pGPrev;
    }
}

/* Runs an unlinked task: drops the mutex around the call, retakes it, and
** settles the group's count (invariants 1 and 2). Mutex held on entry and
** on return. */
static void task_run_locked(Tpool *pool, TpoolTask *t) {
    TpoolFn fn = t->fn;
    void *arg = t->arg;
    TpoolGroup *g = t->pGroup;
    pthread_mutex_unlock(&pool->mu);
    free(t);
    fn(arg);
    pthread_mutex_lock(&pool->mu);
    if (g && --g->nPending == 0) pthread_cond_broadcast(&pool->cvDone);
}

static void *tpool_worker(void *p) {
    Tpool *pool = p;
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        while (!pool->pHead && !pool->bStop) pthread_cond_wait(&pool->cvWork, &pool->mu);
        TpoolTask *t = pool->pHead;
        if (!t) break; /* stopping and drained (invariant 3) */
        task_unlink(pool, t);
        task_run_locked(pool, t);
    }
    pthread_mutex_unlock(&pool->mu);
    return NULL;
}

/* Stops and joins the first nThread workers, then frees the pool. */
static void tpool_stop(Tpool *pool) {
    pthread_mutex_lock(&pool->mu);
    pool->bStop = 1;
    pthread_cond_broadcast(&pool->cvWork);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 0; i < pool->nThread; i++) pthread_join(pool->aThread[i], NULL);
    pthread_cond_destroy(&pool->cvDone);
    pthread_cond_destroy(&pool->cvWork);
    pthread_mutex_destroy(&pool->mu);
    free(pool);
}

Tpool *tpool_new(int nThread, LpError *err) {
    if (nThread <= 0) {
        long nCpu = sysconf(_SC_NPROCESSORS_ONLN);
        nThread = nCpu < 1 ? 1 : nCpu > TPOOL_MAX_THREADS ? TPOOL_MAX_THREADS : (int)nCpu;
    }
    if (nThread > TPOOL_MAX_THREADS) {
        lp_err_set(err, LP_BADINPUT, "thread pool: %d threads requested, at most %d allowed",
                   nThread, TPOOL_MAX_THREADS);
        return NULL;
    }
    Tpool *pool = calloc(1, sizeof(Tpool) + (size_t)nThread * sizeof(pthread_t));
    if (!pool) {
        lp_err_set(err, LP_NOMEM, "thread pool: out of memory");
        return NULL;
    }
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->cvWork, NULL);
    pthread_cond_init(&pool->cvDone, NULL);

    /* Workers inherit the creating thread's signal mask: block everything
    ** while creating them, then restore ours. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = 0;
    while (pool->nThread < nThread) {
        rc = pthread_create(&pool->aThread[pool->nThread], NULL, tpool_worker, pool);
        if (rc != 0) break;
        pool->nThread++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        lp_err_set(err, LP_LIMIT, "thread pool: cannot start thread %d of %d: %s",
                   pool->nThread + 1, nThread, strerror(rc));
        tpool_stop(pool);
        return NULL;
    }
    return pool;
}

void tpool_free(Tpool *pool) {
    if (pool) tpool_stop(pool);
}

int tpool_size(const Tpool *pool) {
    return pool->nThread;
}

/* Queues a task, counting it in g when g is non-NULL. */
static int tpool_enqueue(Tpool *pool, TpoolGroup *g, TpoolFn fn, void *arg) {
    TpoolTask *t = malloc(sizeof(TpoolTask));
    if (!t) return LP_NOMEM;
    t->fn = fn;
    t->arg = arg;
    t->pGroup = g;
    t->pNext = NULL;
    t->pGPrev = NULL;
    pthread_mutex_lock(&pool->mu);
    t->pPrev = pool->pTail;
    if (pool->pTail) pool->pTail->pNext = t;
    else pool->pHead = t;
    pool->pTail = t;
    if (g) {
        t->pGNext = g->pQueued;
        if (g->pQueued) g->pQueued->pGPrev = t;
        g->pQueued = t;
        g->nPending++;
    } else {
        t->pGNext = NULL;
    }
    pthread_cond_signal(&pool->cvWork);
    pthread_mutex_unlock(&pool->mu);
    return LP_OK;
}

int tpool_submit(Tpool *pool, TpoolFn fn, void *arg) {
    return tpool_enqueue(pool, NULL, fn, arg);
}

void tpool_group_init(TpoolGroup *g, Tpool *pool) {
    g->pPool = pool;
    g->nPending = 0;
    g->pQueued = NULL;
}

int tpool_group_submit(TpoolGroup *g, TpoolFn fn, void *arg) {
    return tpool_enqueue(g->pPool, g, fn, arg);
}

void tpool_group_wait(TpoolGroup *g) {
    Tpool *pool = g->pPool;
    pthread_mutex_lock(&pool->mu);
    while (g->nPending > 0) {
        TpoolTask *t = g->pQueued;
        if (t) {
            /* Help rather than sleep: this is what keeps a task that waits
            ** on its own fan-out from deadlocking a busy pool. */
            task_unlink(pool, t);
            task_run_locked(pool, t);
        } else {
            pthread_cond_wait(&pool->cvDone, &pool->mu);
        }
    }
    pthread_mutex_unlock(&pool->mu);
}
