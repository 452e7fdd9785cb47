/* Exercises every call heisen-pthread interposes and prints what a
 * program can observe: return values, counters, orders that the program
 * itself fixes. Run with and without LD_PRELOAD=libheisen_pthread.so,
 * the output must be identical (tests/interposer.rs). Nothing printed
 * depends on timing. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "live_threads.h"

#define WORKERS 4
#define ROUNDS 200

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER; /* static initialiser */
static long counter;
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static long table[16];
static pthread_barrier_t barrier;
static pthread_mutex_t cv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go;
static int woken;
static sem_t items;
static sem_t done;

static void deadline_in(struct timespec *t, long ns) {
    clock_gettime(CLOCK_REALTIME, t);
    t->tv_nsec += ns;
    while (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec += 1;
    }
}

static void *worker(void *arg) {
    long id = (long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&counter_lock);
        counter += 1;
        pthread_mutex_unlock(&counter_lock);
        if (r % 10 == 0) {
            pthread_rwlock_wrlock(&table_lock);
            table[id] += 1;
            pthread_rwlock_unlock(&table_lock);
        } else {
            pthread_rwlock_rdlock(&table_lock);
            long sum = 0;
            for (int i = 0; i < 16; i++) sum += table[i];
            (void)sum;
            pthread_rwlock_unlock(&table_lock);
        }
        pthread_barrier_wait(&barrier); /* reused every round */
    }
    /* condition variable broadcast to every worker */
    pthread_mutex_lock(&cv_lock);
    while (!go) pthread_cond_wait(&cv, &cv_lock);
    woken += 1;
    pthread_mutex_unlock(&cv_lock);
    /* semaphore consumer */
    for (int i = 0; i < 25; i++) sem_wait(&items);
    sem_post(&done);
    return (void *)(id * 10);
}

static void *detached(void *arg) {
    sem_t *s = arg;
    sem_post(s);
    return NULL;
}

static void *exits_early(void *arg) {
    (void)arg;
    pthread_exit((void *)42);
    return NULL;
}

int main(void) {
    pthread_t threads[WORKERS];
    pthread_barrier_init(&barrier, NULL, WORKERS);
    sem_init(&items, 0, 0);
    sem_init(&done, 0, 0);
    for (long i = 0; i < WORKERS; i++) pthread_create(&threads[i], NULL, worker, (void *)i);

    /* dynamic initialisers, recursive and error-checking mutexes */
    pthread_mutexattr_t attr;
    pthread_mutex_t recursive, errorcheck;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&recursive, &attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&errorcheck, &attr);
    pthread_mutexattr_destroy(&attr);
    /* One call per statement: C leaves the order of arguments open. */
    int a = pthread_mutex_lock(&recursive);
    int b = pthread_mutex_lock(&recursive);
    int c = pthread_mutex_trylock(&recursive);
    printf("recursive lock: %d %d %d\n", a, b, c);
    a = pthread_mutex_unlock(&recursive);
    b = pthread_mutex_unlock(&recursive);
    c = pthread_mutex_unlock(&recursive);
    int d = pthread_mutex_unlock(&recursive);
    printf("recursive unlock: %d %d %d, once more EPERM %d\n", a, b, c, d == EPERM);
    a = pthread_mutex_lock(&errorcheck);
    b = pthread_mutex_lock(&errorcheck);
    c = pthread_mutex_unlock(&errorcheck);
    d = pthread_mutex_unlock(&errorcheck);
    printf("errorcheck: %d relock EDEADLK %d unlock %d unlock-again EPERM %d\n", a, b == EDEADLK, c,
           d == EPERM);

    /* trylock failure and timed waits that time out, on objects another
     * thread holds */
    pthread_mutex_t held;
    pthread_mutex_init(&held, NULL);
    pthread_mutex_lock(&held);
    struct timespec t;
    deadline_in(&t, 2000000);
    a = pthread_mutex_trylock(&held);
    printf("trylock on a held mutex EBUSY %d\n", a == EBUSY);
    a = pthread_mutex_timedlock(&held, &t);
    printf("timedlock on a held mutex fails %d\n", a != 0);
    pthread_mutex_unlock(&held);
    pthread_mutex_destroy(&held);
    pthread_cond_t never = PTHREAD_COND_INITIALIZER;
    pthread_mutex_lock(&cv_lock);
    deadline_in(&t, 1000000);
    printf("cond timedwait timed out %d\n", pthread_cond_timedwait(&never, &cv_lock, &t) == ETIMEDOUT);
    pthread_mutex_unlock(&cv_lock);
    deadline_in(&t, 1000000);
    a = sem_timedwait(&done, &t);
    printf("sem timedwait timed out %d errno ETIMEDOUT %d\n", a == -1, errno == ETIMEDOUT);
    printf("sem trywait empty %d\n", sem_trywait(&done) == -1 && errno == EAGAIN);
    pthread_rwlock_t rw;
    pthread_rwlock_init(&rw, NULL);
    pthread_rwlock_wrlock(&rw);
    a = pthread_rwlock_tryrdlock(&rw);
    b = pthread_rwlock_trywrlock(&rw);
    printf("rwlock tryrdlock on written fails %d trywrlock fails %d\n", a != 0, b != 0);
    deadline_in(&t, 1000000);
    a = pthread_rwlock_timedrdlock(&rw, &t);
    b = pthread_rwlock_timedwrlock(&rw, &t);
    printf("rwlock timedrdlock fails %d timedwrlock fails %d\n", a != 0, b != 0);
    pthread_rwlock_unlock(&rw);
    a = pthread_rwlock_rdlock(&rw);
    b = pthread_rwlock_tryrdlock(&rw);
    printf("rwlock rdlock twice %d %d\n", a, b);
    pthread_rwlock_unlock(&rw);
    pthread_rwlock_unlock(&rw);

    /* broadcast to every waiting worker */
    pthread_mutex_lock(&cv_lock);
    go = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&cv_lock);
    pthread_mutex_lock(&cv_lock);
    pthread_cond_signal(&cv); /* nobody left to wake: harmless */
    pthread_mutex_unlock(&cv_lock);
    for (int i = 0; i < 25 * WORKERS; i++) sem_post(&items);
    for (int i = 0; i < WORKERS; i++) sem_wait(&done);

    /* pthread_exit from a thread, its value seen by the join */
    pthread_t e;
    void *value = NULL;
    pthread_create(&e, NULL, exits_early, NULL);
    pthread_join(e, &value);
    printf("pthread_exit value %ld\n", (long)value);

    for (int i = 0; i < WORKERS; i++) {
        pthread_join(threads[i], &value);
        printf("worker %d returned %ld\n", i, (long)value);
    }
    printf("counter %ld (expected %d) woken %d\n", counter, WORKERS * ROUNDS, woken);
    long writes = 0;
    for (int i = 0; i < 16; i++) writes += table[i];
    printf("table writes %ld\n", writes);
    pthread_barrier_destroy(&barrier);
    pthread_mutex_destroy(&recursive);
    pthread_mutex_destroy(&errorcheck);

    /* detached threads: by attribute and by pthread_detach; last, so
     * that main can wait until they are gone (no join can) and the
     * report counts them ended whatever the scheduler does */
    sem_t started;
    sem_init(&started, 0, 0);
    pthread_attr_t detach;
    pthread_attr_init(&detach);
    pthread_attr_setdetachstate(&detach, PTHREAD_CREATE_DETACHED);
    pthread_t d1, d2;
    pthread_create(&d1, &detach, detached, &started);
    pthread_attr_destroy(&detach);
    pthread_create(&d2, NULL, detached, &started);
    printf("detach %d\n", pthread_detach(d2));
    sem_wait(&started);
    sem_wait(&started);
    while (live_threads() > 1)
        sched_yield();
    return 3; /* a non-zero exit code that must come through unchanged */
}
