/*
** test_threadpool.c — unit tests for util/threadpool.h.
**
** A deadlock in the pool would hang a test rather than fail it, so main()
** arms alarm(): past the watchdog the default SIGALRM action kills the
** process, and the test run reports the failure.
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/error.h"
#include "util/threadpool.h"
#include "util/threadlocal.h"

#define WATCHDOG_S 120

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void task_incr(void *arg) {
    atomic_fetch_add((atomic_long *)arg, 1);
}

static void test_create_and_limits(void **state) {
    (void)state;
    LpError err;
    Tpool *pool = tpool_new(0, &err);
    assert_non_null(pool);
    long nCpu = sysconf(_SC_NPROCESSORS_ONLN);
    assert_int_equal(tpool_size(pool), nCpu < 1 ? 1 : nCpu > TPOOL_MAX_THREADS ? TPOOL_MAX_THREADS : nCpu);
    tpool_free(pool);

    lp_err_clear(&err);
    assert_null(tpool_new(TPOOL_MAX_THREADS + 1, &err));
    assert_int_equal(err.code, LP_BADINPUT);

    tpool_free(NULL);

    /* Waiting on an empty group returns at once. */
    pool = tpool_new(2, &err);
    TpoolGroup g;
    tpool_group_init(&g, pool);
    tpool_group_wait(&g);
    tpool_free(pool);
}

static void test_many_tasks(void **state) {
    (void)state;
    LpError err;
    Tpool *pool = tpool_new(4, &err);
    assert_non_null(pool);
    assert_int_equal(tpool_size(pool), 4);
    atomic_long n = 0;
    TpoolGroup g;
    tpool_group_init(&g, pool);
    for (int i = 0; i < 20000; i++) assert_int_equal(tpool_group_submit(&g, task_incr, &n), LP_OK);
    tpool_group_wait(&g);
    assert_int_equal(atomic_load(&n), 20000);
    /* The group is reusable after its wait. */
    for (int i = 0; i < 100; i++) assert_int_equal(tpool_group_submit(&g, task_incr, &n), LP_OK);
    tpool_group_wait(&g);
    assert_int_equal(atomic_load(&n), 20100);
    /* Plain tasks, collected by tpool_free. */
    for (int i = 0; i < 5000; i++) assert_int_equal(tpool_submit(pool, task_incr, &n), LP_OK);
    tpool_free(pool);
    assert_int_equal(atomic_load(&n), 25100);
}

/* ------------------------------------------------------------- groups */

typedef struct SlowJob {
    atomic_long *pDone;     /* incremented when the job ends */
    int ms;                 /* how long it sleeps first */
} SlowJob;

static void task_slow(void *arg) {
    SlowJob *j = arg;
    sleep_ms(j->ms);
    atomic_fetch_add(j->pDone, 1);
}

static void test_groups_independent(void **state) {
    (void)state;
    LpError err;
    Tpool *pool = tpool_new(3, &err);
    atomic_long nFast = 0, nSlow = 0;
    SlowJob fast = {&nFast, 0}, slow = {&nSlow, 50};
    TpoolGroup gFast, gSlow;
    tpool_group_init(&gFast, pool);
    tpool_group_init(&gSlow, pool);
    /* Interleaved submissions; each wait covers exactly its own group. */
    for (int i = 0; i < 40; i++) {
        assert_int_equal(tpool_group_submit(&gSlow, task_slow, &slow), LP_OK);
        assert_int_equal(tpool_group_submit(&gFast, task_slow, &fast), LP_OK);
    }
    tpool_group_wait(&gFast);
    assert_int_equal(atomic_load(&nFast), 40);
    /* 40 x 50 ms on at most 4 threads (3 workers + this one helping)
    ** cannot be done yet: the first wait did not wait for them. */
    assert_true(atomic_load(&nSlow) < 40);
    tpool_group_wait(&gSlow);
    assert_int_equal(atomic_load(&nSlow), 40);
    tpool_free(pool);
}

/* A task that fans out into its own pool and waits: with one worker this
** only finishes because the waiter runs its group's queued tasks. */
typedef struct FanOut {
    Tpool *pool;
    atomic_long nLeaf;      /* leaf tasks run */
    atomic_long nOuter;     /* outer tasks completed */
} FanOut;

static void task_fan_out(void *arg) {
    FanOut *f = arg;
    TpoolGroup g;
    tpool_group_init(&g, f->pool);
    for (int i = 0; i < 50; i++) {
        if (tpool_group_submit(&g, task_incr, &f->nLeaf) != LP_OK) return;
    }
    tpool_group_wait(&g);
    /* All 50 leaves of this fan-out are done; others may still run. */
    atomic_fetch_add(&f->nOuter, 1);
}

static void test_nested_fan_out(void **state) {
    (void)state;
    LpError err;
    for (int nThread = 1; nThread <= 3; nThread++) {
        FanOut f = {.pool = tpool_new(nThread, &err)};
        assert_non_null(f.pool);
        TpoolGroup g;
        tpool_group_init(&g, f.pool);
        for (int i = 0; i < 8; i++) assert_int_equal(tpool_group_submit(&g, task_fan_out, &f), LP_OK);
        tpool_group_wait(&g);
        assert_int_equal(atomic_load(&f.nOuter), 8);
        assert_int_equal(atomic_load(&f.nLeaf), 8 * 50);
        tpool_free(f.pool);
    }
}

/* --------------------------------------------------- free with a queue */

typedef struct Gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int bOpen;
    atomic_long nRun;
} Gate;

static void task_gated(void *arg) {
    Gate *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->bOpen) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    atomic_fetch_add(&g->nRun, 1);
}

static void *gate_opener(void *arg) {
    Gate *g = arg;
    sleep_ms(50);
    pthread_mutex_lock(&g->mu);
    g->bOpen = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

static void test_free_runs_queued_tasks(void **state) {
    (void)state;
    LpError err;
    Tpool *pool = tpool_new(2, &err);
    Gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    /* Both workers block on the closed gate, so 998 tasks are still queued
    ** when tpool_free starts; the gate opens only 50 ms later. */
    for (int i = 0; i < 1000; i++) assert_int_equal(tpool_submit(pool, task_gated, &g), LP_OK);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, gate_opener, &g), 0);
    tpool_free(pool);
    assert_int_equal(atomic_load(&g.nRun), 1000);
    pthread_join(th, NULL);
}

/* Each link of a chain queues the next one: tpool_free must drain tasks
** that are submitted while it is already stopping. */
typedef struct Chain {
    Tpool *pool;
    atomic_long nLink;
} Chain;

static void task_chain(void *arg) {
    Chain *c = arg;
    sleep_ms(1);
    if (atomic_fetch_add(&c->nLink, 1) + 1 < 100) tpool_submit(c->pool, task_chain, c);
}

static void test_free_drains_resubmitted_tasks(void **state) {
    (void)state;
    LpError err;
    Chain c = {.pool = tpool_new(3, &err)};
    assert_int_equal(tpool_submit(c.pool, task_chain, &c), LP_OK);
    tpool_free(c.pool);
    assert_int_equal(atomic_load(&c.nLink), 100);
}

/* -------------------------------------------------------- concurrency */

/* Each task checks in and then waits (bounded) until all have checked in:
** that can only happen if they run at the same time on distinct threads. */
typedef struct Rendezvous {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int nArrived;           /* tasks that checked in */
    int nMet;               /* tasks that saw all the others */
    int nDone;              /* tasks finished */
    int nWant;              /* tasks expected */
    pthread_t aTid[16];     /* thread of each arrival */
} Rendezvous;

static void task_meet(void *arg) {
    Rendezvous *r = arg;
    pthread_mutex_lock(&r->mu);
    r->aTid[r->nArrived++] = pthread_self();
    pthread_cond_broadcast(&r->cv);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    int rc = 0;
    while (r->nArrived < r->nWant && rc == 0) rc = pthread_cond_timedwait(&r->cv, &r->mu, &deadline);
    if (r->nArrived == r->nWant) r->nMet++;
    r->nDone++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void test_tasks_run_concurrently(void **state) {
    (void)state;
    LpError err;
    Tpool *pool = tpool_new(4, &err);
    Rendezvous r = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 4, {0}};
    /* Plain submits, so this thread never runs any of them itself. */
    for (int i = 0; i < 4; i++) assert_int_equal(tpool_submit(pool, task_meet, &r), LP_OK);
    pthread_mutex_lock(&r.mu);
    while (r.nDone < 4) pthread_cond_wait(&r.cv, &r.mu);
    pthread_mutex_unlock(&r.mu);
    assert_int_equal(r.nMet, 4);
    for (int i = 0; i < 4; i++) {
        assert_false(pthread_equal(r.aTid[i], pthread_self()));
        for (int k = 0; k < i; k++) assert_false(pthread_equal(r.aTid[i], r.aTid[k]));
    }
    tpool_free(pool);
}

/* ---------------------------------------------------------- threadlocal */

static atomic_int g_nFreedA, g_nFreedB;
static __thread int *t_pA; /* the owner's fast pointer, cleared by the free */

static void free_a(void *p) {
    if (t_pA == p) t_pA = NULL;
    free(p);
    atomic_fetch_add(&g_nFreedA, 1);
}

static void free_b(void *p) {
    free(p);
    atomic_fetch_add(&g_nFreedB, 1);
}

static ThreadLocal g_tlA = THREAD_LOCAL_INIT(free_a);
static ThreadLocal g_tlB = THREAD_LOCAL_INIT(free_b);

static void *tl_thread(void *arg) {
    int i = (int)(intptr_t)arg;
    int *a = malloc(sizeof(int));
    assert_non_null(a);
    *a = i;
    assert_int_equal(thread_local_set(&g_tlA, a), LP_OK);
    t_pA = a;
    if (i % 2) { /* every other thread also has a B */
        int *b = malloc(sizeof(int));
        assert_non_null(b);
        assert_int_equal(thread_local_set(&g_tlB, b), LP_OK);
    }
    return NULL;
}

/* Each thread's objects are freed when it exits, once, by their kind's
** function; the main thread's at exit() (LeakSanitizer would report it). */
static void test_thread_local(void **state) {
    (void)state;
    enum { N = 6 };
    pthread_t a[N];
    for (int i = 0; i < N; i++) assert_int_equal(pthread_create(&a[i], NULL, tl_thread, (void *)(intptr_t)i), 0);
    for (int i = 0; i < N; i++) assert_int_equal(pthread_join(a[i], NULL), 0);
    assert_int_equal(atomic_load(&g_nFreedA), N);
    assert_int_equal(atomic_load(&g_nFreedB), N / 2);
    int *m = malloc(sizeof(int));
    assert_non_null(m);
    assert_int_equal(thread_local_set(&g_tlA, m), LP_OK);
    t_pA = m;
    /* At most THREAD_LOCAL_MAX kinds: two exist, the rest can be made, no more. */
    static ThreadLocal aMore[THREAD_LOCAL_MAX - 1];
    int x;
    for (int i = 0; i < THREAD_LOCAL_MAX - 1; i++) {
        aMore[i] = (ThreadLocal)THREAD_LOCAL_INIT(NULL);
        assert_int_equal(thread_local_set(&aMore[i], i < THREAD_LOCAL_MAX - 2 ? NULL : &x),
                         i < THREAD_LOCAL_MAX - 2 ? LP_OK : LP_LIMIT);
    }
}

int main(void) {
    alarm(WATCHDOG_S);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_and_limits),
        cmocka_unit_test(test_many_tasks),
        cmocka_unit_test(test_groups_independent),
        cmocka_unit_test(test_nested_fan_out),
        cmocka_unit_test(test_free_runs_queued_tasks),
        cmocka_unit_test(test_free_drains_resubmitted_tasks),
        cmocka_unit_test(test_tasks_run_concurrently),
        cmocka_unit_test(test_thread_local),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
