/* Condition waits that fail without re-taking the mutex: a waiter that
 * does not hold its error-checking mutex (EPERM: glibc refuses before it
 * waits), and a timed wait with an invalid time (EINVAL: refused before
 * the mutex is released, so the caller still holds it). Neither may
 * change whom heisen takes for the mutex's owner: the real owner's later
 * unlock must still be the release that the next acquire merges, and the
 * waiter's trylock/unlock must answer as glibc answers. Output must be
 * identical with and without LD_PRELOAD=libheisen_pthread.so; the test
 * (tests/interposer.rs) also reads the report: the thread that acquires
 * after the owner's long work must carry that work on its path.
 *
 * Threads, in the order they register: main (0), waiter (1), acquirer
 * (2), late waiter (3). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sem_t started;

static const char *name(int rc) {
    switch (rc) {
    case 0: return "0";
    case EBUSY: return "EBUSY";
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    default: return strerror(rc);
    }
}
#define SHOW(what, call) printf("%-44s %s\n", what, name(call))

/* Does not hold `m` (main does): every call is refused by glibc. */
static void *waiter(void *arg) {
    (void)arg;
    SHOW("waiter: cond_wait, mutex held by main", pthread_cond_wait(&c, &m));
    SHOW("waiter: unlock, not the owner", pthread_mutex_unlock(&m));
    SHOW("waiter: trylock, held by main", pthread_mutex_trylock(&m));
    return NULL;
}

/* Blocks in lock until main's long work is done and main unlocks. */
static void *acquirer(void *arg) {
    (void)arg;
    sem_post(&started);
    SHOW("acquirer: lock after main's work", pthread_mutex_lock(&m));
    SHOW("acquirer: unlock", pthread_mutex_unlock(&m));
    return NULL;
}

/* After main unlocked: the mutex is free. */
static void *late_waiter(void *arg) {
    (void)arg;
    SHOW("late waiter: cond_wait, mutex free", pthread_cond_wait(&c, &m));
    SHOW("late waiter: trylock, free", pthread_mutex_trylock(&m));
    SHOW("late waiter: unlock", pthread_mutex_unlock(&m));
    SHOW("late waiter: unlock again", pthread_mutex_unlock(&m));
    return NULL;
}

/* The owner's work while it holds the mutex: some 10 ms of CPU. */
static unsigned long work(void) {
    volatile unsigned long x = 1;
    for (unsigned long i = 0; i < 10000000UL; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x & 1;
}

int main(void) {
    pthread_t t;
    sem_init(&started, 0, 0);
    SHOW("main: lock", pthread_mutex_lock(&m));

    struct timespec bad;
    clock_gettime(CLOCK_REALTIME, &bad);
    bad.tv_nsec = 2000000000L; /* invalid: refused before any unlock */
    SHOW("main: cond_timedwait, invalid time", pthread_cond_timedwait(&c, &m, &bad));
    SHOW("main: trylock, own errorcheck mutex", pthread_mutex_trylock(&m));

    pthread_create(&t, NULL, waiter, NULL);
    pthread_join(t, NULL);

    pthread_create(&t, NULL, acquirer, NULL);
    sem_wait(&started);
    unsigned long bit = work();
    int rc = pthread_mutex_unlock(&m);
    pthread_join(t, NULL); /* the acquirer printed meanwhile */
    SHOW("main: unlock after the work", rc);

    pthread_create(&t, NULL, late_waiter, NULL);
    pthread_join(t, NULL);
    printf("work bit %lu\n", bit);
    return 14;
}
