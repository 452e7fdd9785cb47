/* Threads with the smallest stacks a program may ask for
 * (PTHREAD_STACK_MIN, and 64 KiB) that lock, wait and create threads;
 * 600 more threads of 64 KiB one after the other (more than the 512
 * slots heisen's registry has, so later ones take over the slots of
 * ended ones and keep their reports); and a worker thread of 64 KiB that
 * calls exit() while main waits in pthread_join. Output and exit code must be identical with and without
 * LD_PRELOAD=libheisen_pthread.so; under it every thread is measured (a
 * release build; a debug one cannot register on 16 KiB stacks). */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
static long counter;

static void *leaf(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&lk);
        counter++;
        pthread_mutex_unlock(&lk);
    }
    pthread_barrier_wait(&bar);
    return NULL;
}

static void *once(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lk);
    counter++;
    pthread_mutex_unlock(&lk);
    return NULL;
}

static void *exits(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lk);
    printf("counter %ld, a worker calls exit(13)\n", counter);
    fflush(stdout);
    exit(13);
}

int main(void) {
    size_t sizes[2] = {PTHREAD_STACK_MIN, 65536};
    pthread_t t[8];
    for (int s = 0; s < 2; s++) {
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, sizes[s]);
        pthread_barrier_init(&bar, NULL, 8);
        for (int i = 0; i < 8; i++)
            if (pthread_create(&t[i], &a, leaf, NULL) != 0)
                return 99;
        for (int i = 0; i < 8; i++)
            pthread_join(t[i], NULL);
        pthread_barrier_destroy(&bar);
        pthread_attr_destroy(&a);
    }
    pthread_attr_t small;
    pthread_attr_init(&small);
    pthread_attr_setstacksize(&small, 65536);
    for (int i = 0; i < 600; i++) {
        pthread_t c;
        if (pthread_create(&c, &small, once, NULL) != 0)
            return 98;
        pthread_join(c, NULL);
    }
    pthread_t e;
    pthread_create(&e, &small, exits, NULL);
    pthread_join(e, NULL);
    return 0;
}
