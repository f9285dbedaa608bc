/* threadlocal.c — see threadlocal.h. */
#include "util/threadlocal.h"

#include <stdlib.h>

#include "util/error.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static ThreadLocal *g_aKind[THREAD_LOCAL_MAX]; /* the kinds with a key */
static int g_nKind;

/* Frees the exiting thread's objects: key destructors do not run for the
** thread that calls exit(). */
static void thread_local_atexit(void) {
    pthread_mutex_lock(&g_mu);
    int n = g_nKind;
    pthread_mutex_unlock(&g_mu);
    for (int i = 0; i < n; i++) {
        ThreadLocal *tl = g_aKind[i];
        void *p = pthread_getspecific(tl->key);
        if (!p) continue;
        pthread_setspecific(tl->key, NULL);
        tl->xFree(p);
    }
}

int thread_local_set(ThreadLocal *tl, void *p) {
    pthread_mutex_lock(&g_mu);
    int rc = LP_OK;
    if (!tl->bKey) {
        if (g_nKind == THREAD_LOCAL_MAX || pthread_key_create(&tl->key, tl->xFree) != 0) {
            rc = LP_LIMIT;
        } else {
            if (g_nKind == 0) atexit(thread_local_atexit);
            g_aKind[g_nKind++] = tl;
            tl->bKey = 1;
        }
    }
    pthread_mutex_unlock(&g_mu);
    if (rc == LP_OK && pthread_setspecific(tl->key, p) != 0) rc = LP_LIMIT;
    return rc;
}
