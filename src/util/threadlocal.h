/*
** threadlocal.h — objects owned by a thread and freed when it ends.
**
** Contract. A ThreadLocal names one kind of per-thread object (a thread's
** stemmers, its analysis scratch) and the function that frees one. The
** owner keeps each thread's object in its own `static __thread` pointer,
** for a lookup without a call, and registers the object once with
** thread_local_set(); it is then freed by xFree when the thread exits,
** or, for the thread that calls exit() (for which pthread key destructors
** do not run), by an atexit handler. xFree must clear the owner's
** __thread pointer when it frees the calling thread's object.
**
** At most THREAD_LOCAL_MAX kinds exist in a process; a ThreadLocal is a
** static with THREAD_LOCAL_INIT, shared by all threads.
*/
#ifndef LP_UTIL_THREADLOCAL_H
#define LP_UTIL_THREADLOCAL_H

#include <pthread.h>

#define THREAD_LOCAL_MAX 8

typedef struct ThreadLocal {
    void (*xFree)(void *);  /* frees one thread's object */
    pthread_key_t key;      /* valid once bKey */
    int bKey;               /* the key exists */
} ThreadLocal;

#define THREAD_LOCAL_INIT(xFree) {(xFree), 0, 0}

/* Registers p as the calling thread's object of tl. LP_OK, or LP_LIMIT
** (no thread key could be created: p is not registered, the caller
** frees it). */
int thread_local_set(ThreadLocal *tl, void *p);

#endif /* LP_UTIL_THREADLOCAL_H */
