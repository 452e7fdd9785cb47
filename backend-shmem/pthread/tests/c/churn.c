/* Objects made and destroyed all run long, many more over the run than
 * heisen-pthread's tables hold, never many alive at once (as CPython makes
 * a semaphore per lock, or a C++ program a condition variable per task):
 * each destroy frees its object's slot, so every object is measured and
 * nothing is printed at exit. Two threads share every object, so the
 * hand-offs are real. Exit code 3 on success. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 12000 /* beyond every table: 8192 mutexes, 1024 semaphores, ... */
#define ALIVE 16

struct objects {
    pthread_mutex_t m;
    pthread_cond_t c;
    pthread_rwlock_t l;
    pthread_barrier_t b;
    sem_t s;
    int ready;
    long value;
};

static void *partner(void *arg) {
    struct objects *o = arg;
    sem_wait(&o->s);
    pthread_mutex_lock(&o->m);
    o->ready = 1;
    pthread_cond_signal(&o->c);
    pthread_mutex_unlock(&o->m);
    pthread_rwlock_wrlock(&o->l);
    o->value += 2;
    pthread_rwlock_unlock(&o->l);
    pthread_barrier_wait(&o->b);
    return NULL;
}

static void destroy(struct objects *o) {
    if (pthread_mutex_destroy(&o->m) || pthread_cond_destroy(&o->c) ||
        pthread_rwlock_destroy(&o->l) || pthread_barrier_destroy(&o->b) ||
        sem_destroy(&o->s))
        exit(1);
}

int main(void) {
    struct objects *alive[ALIVE] = {0};
    /* Every object at an address of its own: no entry is found again by
     * a new object at its old address; only freed slots make room. */
    struct objects *arena = calloc(ROUNDS, sizeof *arena);
    long total = 0;
    if (!arena)
        return 1;
    for (int i = 0; i < ROUNDS; i++) {
        struct objects *o = &arena[i];
        pthread_mutex_init(&o->m, NULL);
        pthread_cond_init(&o->c, NULL);
        pthread_rwlock_init(&o->l, NULL);
        pthread_barrier_init(&o->b, NULL, 2);
        sem_init(&o->s, 0, 0);
        pthread_t t;
        if (pthread_create(&t, NULL, partner, o))
            return 1;
        sem_post(&o->s);
        pthread_mutex_lock(&o->m);
        while (!o->ready)
            pthread_cond_wait(&o->c, &o->m);
        pthread_mutex_unlock(&o->m);
        pthread_barrier_wait(&o->b);
        pthread_join(t, NULL);
        pthread_rwlock_rdlock(&o->l);
        total += o->value;
        pthread_rwlock_unlock(&o->l);
        int k = i % ALIVE;
        if (alive[k])
            destroy(alive[k]);
        alive[k] = o;
    }
    for (int k = 0; k < ALIVE; k++)
        destroy(alive[k]);
    free(arena);
    printf("total %ld\n", total);
    return total == 2L * ROUNDS ? 3 : 2;
}
