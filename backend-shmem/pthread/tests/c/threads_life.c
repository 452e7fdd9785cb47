/* Thread lifecycles: threads created from threads (a tree), detached
 * threads (by attribute and by pthread_detach), threads never joined,
 * pthread_exit from threads (also from a nested call), and more threads
 * over the run (777) than heisen's thread table holds at once (512): its
 * slots are reused once a thread is gone, so every one is measured.
 * Output must be identical with and without
 * LD_PRELOAD=libheisen_pthread.so. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "live_threads.h"

#define TOTAL 700
#define WAVE 16

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counted, detached_done, forever_started, destructed;
static pthread_key_t key;

/* A thread-specific value's destructor runs after the thread's routine
 * (after heisen ended the thread's location) and still locks a mutex. */
static void destruct(void *v) {
    (void)v;
    pthread_mutex_lock(&lk);
    destructed++;
    pthread_mutex_unlock(&lk);
}

__attribute__((noinline)) static void exit_inner(long v) { pthread_exit((void *)v); }
__attribute__((noinline)) static void deep_exit(long v) {
    exit_inner(v);
}

static void *leaf(void *arg) {
    long v = (long)arg;
    pthread_setspecific(key, &key);
    pthread_mutex_lock(&lk);
    counted++;
    pthread_mutex_unlock(&lk);
    if (v % 3 == 0)
        deep_exit(v * 2);
    return (void *)(v * 2);
}

/* a node creates two children and joins them: a binary tree of threads */
static void *node(void *arg) {
    long depth = (long)arg;
    if (depth == 0)
        return leaf((void *)1);
    pthread_t a, b;
    void *ra, *rb;
    pthread_create(&a, NULL, node, (void *)(depth - 1));
    pthread_create(&b, NULL, node, (void *)(depth - 1));
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    return (void *)((long)ra + (long)rb);
}

static void *detached(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lk);
    detached_done++;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&lk);
    return NULL;
}

static void *forever(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lk);
    forever_started = 1;
    pthread_cond_broadcast(&cv);
    for (;;)
        pthread_cond_wait(&cv, &lk); /* never joined, still waiting at exit */
    return NULL;
}

int main(void) {
    pthread_t t[WAVE];
    void *r;
    long sum = 0;
    pthread_key_create(&key, destruct);
    for (int done = 0; done < TOTAL; done += WAVE) {
        for (long i = 0; i < WAVE; i++)
            pthread_create(&t[i], NULL, leaf, (void *)(done + i));
        for (int i = 0; i < WAVE; i++) {
            pthread_join(t[i], &r);
            sum += (long)r;
        }
    }
    printf("leaves: %ld counted, sum %ld\n", counted, sum);

    pthread_create(&t[0], NULL, node, (void *)5);
    pthread_join(t[0], &r);
    printf("tree: %ld\n", (long)r);
    printf("destructors: %ld\n", destructed);

    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < 8; i++) {
        pthread_t d;
        pthread_create(&d, i % 2 ? &a : NULL, detached, NULL);
        if (i % 2 == 0)
            pthread_detach(d);
    }
    pthread_attr_destroy(&a);
    pthread_mutex_lock(&lk);
    while (detached_done < 8)
        pthread_cond_wait(&cv, &lk);
    pthread_mutex_unlock(&lk);
    printf("detached: %ld\n", detached_done);
    /* No join can wait for a detached (or never joined) thread to be
     * gone; the report counts it ended only once it is. */
    while (live_threads() > 1)
        sched_yield();

    pthread_t f;
    pthread_create(&f, NULL, forever, NULL);
    pthread_mutex_lock(&lk);
    while (!forever_started)
        pthread_cond_wait(&cv, &lk);
    pthread_mutex_unlock(&lk);
    printf("leaving one thread waiting\n");
    return 11;
}
