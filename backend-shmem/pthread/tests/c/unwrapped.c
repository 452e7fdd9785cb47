/* Calls the interposer does not wrap (spinlocks), mixed with ones it does
 * on the same objects, among them the clock variants
 * (pthread_mutex_clocklock, pthread_cond_clockwait,
 * pthread_rwlock_clock*lock, sem_clockwait) and C11 threads (unwrapped
 * when this test was written, wrapped since; clock_waits.c and
 * c11_threads.c check their hand-offs). The unwrapped ones run
 * unmeasured; the program must behave exactly as without
 * LD_PRELOAD=libheisen_pthread.so. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <time.h>

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static mtx_t cm;
static cnd_t cc;
static sem_t sem;
static long counter, ready;

static void in(struct timespec *t, long ms) {
    clock_gettime(CLOCK_MONOTONIC, t);
    t->tv_nsec += ms * 1000000L;
    while (t->tv_nsec >= 1000000000L) { t->tv_nsec -= 1000000000L; t->tv_sec++; }
}

static void *mixed(void *arg) {
    (void)arg;
    struct timespec t;
    for (int i = 0; i < 20000; i++) {
        if (i % 2) {
            in(&t, 1000);
            pthread_mutex_clocklock(&lk, CLOCK_MONOTONIC, &t);
        } else {
            pthread_mutex_lock(&lk);
        }
        counter++;
        pthread_mutex_unlock(&lk);
        pthread_mutex_lock(&rec);
        in(&t, 1000);
        pthread_mutex_clocklock(&rec, CLOCK_MONOTONIC, &t);
        pthread_mutex_unlock(&rec);
        pthread_mutex_unlock(&rec);
        pthread_spin_lock(&spin);
        pthread_spin_unlock(&spin);
        if (i % 3 == 0) {
            in(&t, 1000);
            pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &t);
            pthread_rwlock_unlock(&rw);
        } else {
            pthread_rwlock_wrlock(&rw);
            pthread_rwlock_unlock(&rw);
        }
        mtx_lock(&cm);
        mtx_unlock(&cm);
    }
    return NULL;
}

static int c11_waiter(void *arg) {
    (void)arg;
    mtx_lock(&cm);
    ready++;
    cnd_broadcast(&cc);
    while (ready < 3)
        cnd_wait(&cc, &cm);
    mtx_unlock(&cm);
    return 5;
}

int main(void) {
    struct timespec t;
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    mtx_init(&cm, mtx_plain);
    cnd_init(&cc);
    sem_init(&sem, 0, 0);
    pthread_t a, b;
    pthread_create(&a, NULL, mixed, NULL);
    pthread_create(&b, NULL, mixed, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("counter %ld\n", counter);

    pthread_mutex_lock(&lk);
    in(&t, 3);
    int rc = pthread_cond_clockwait(&cv, &lk, CLOCK_MONOTONIC, &t);
    printf("cond_clockwait: %s\n", strerror(rc));
    printf("unlock after clockwait: %d\n", pthread_mutex_unlock(&lk));
    in(&t, 3);
    rc = sem_clockwait(&sem, CLOCK_MONOTONIC, &t);
    printf("sem_clockwait: %d %s\n", rc, strerror(errno));
    pthread_rwlock_wrlock(&rw);
    in(&t, 3);
    printf("clockrdlock own write lock: %s\n",
           strerror(pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &t)));
    pthread_rwlock_unlock(&rw);

    thrd_t c[2];
    thrd_create(&c[0], c11_waiter, NULL);
    thrd_create(&c[1], c11_waiter, NULL);
    c11_waiter(NULL); /* main is the third of the three */
    int r0, r1;
    thrd_join(c[0], &r0);
    thrd_join(c[1], &r1);
    printf("c11 threads returned %d %d\n", r0, r1);
    return 12;
}
