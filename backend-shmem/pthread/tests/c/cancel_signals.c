/* Cancellation and signals around interposed waits: threads cancelled
 * while blocked in pthread_cond_wait (with a cleanup handler that unlocks
 * the mutex), sem_wait and pthread_join, and asynchronously in a loop of
 * lock/unlock; a signal handler that posts a semaphore (async-signal-safe)
 * the main thread waits on; SIGALRM interrupting a condvar wait. Output
 * must be identical with and without LD_PRELOAD=libheisen_pthread.so. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t sem, from_handler, started;
static volatile long loops;

static void unlock_it(void *m) { pthread_mutex_unlock(m); }

static void *cond_waiter(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lk);
    pthread_cleanup_push(unlock_it, &lk);
    sem_post(&started);
    for (;;)
        pthread_cond_wait(&cv, &lk);
    pthread_cleanup_pop(1);
    return NULL;
}
static void *sem_waiter(void *arg) {
    (void)arg;
    sem_post(&started);
    for (;;)
        sem_wait(&sem);
    return NULL;
}
static void *joiner(void *arg) {
    sem_post(&started);
    pthread_join(*(pthread_t *)arg, NULL);
    return NULL;
}
static void *spinner(void *arg) {
    (void)arg;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    sem_post(&started);
    for (;;) {
        pthread_testcancel();
        loops++;
    }
    return NULL;
}
static void *locker(void *arg) {
    (void)arg;
    sem_post(&started);
    for (;;) {
        pthread_mutex_lock(&lk);
        loops++;
        pthread_mutex_unlock(&lk);
        pthread_testcancel();
    }
    return NULL;
}

static void post_from_handler(int s) {
    (void)s;
    int saved = errno;
    sem_post(&from_handler);
    errno = saved;
}

int main(void) {
    sem_init(&sem, 0, 0);
    sem_init(&from_handler, 0, 0);
    sem_init(&started, 0, 0);
    pthread_t c, s, j, sp, lo;
    void *r;
    pthread_create(&c, NULL, cond_waiter, NULL);
    pthread_create(&s, NULL, sem_waiter, NULL);
    pthread_create(&j, NULL, joiner, &s);
    pthread_create(&sp, NULL, spinner, NULL);
    pthread_create(&lo, NULL, locker, NULL);
    for (int i = 0; i < 5; i++)
        sem_wait(&started);
    pthread_cancel(c);
    pthread_join(c, &r);
    printf("cond waiter cancelled: %d\n", r == PTHREAD_CANCELED);
    pthread_cancel(j);
    pthread_join(j, &r);
    printf("joiner cancelled: %d\n", r == PTHREAD_CANCELED);
    pthread_cancel(s);
    pthread_join(s, &r);
    printf("sem waiter cancelled: %d\n", r == PTHREAD_CANCELED);
    pthread_cancel(sp);
    pthread_join(sp, &r);
    printf("spinner cancelled: %d\n", r == PTHREAD_CANCELED);
    pthread_cancel(lo);
    pthread_join(lo, &r);
    printf("locker cancelled: %d\n", r == PTHREAD_CANCELED);
    /* the mutex the cancelled threads used still works */
    printf("trylock after cancellations: %d\n", pthread_mutex_trylock(&lk));
    pthread_mutex_unlock(&lk);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = post_from_handler;
    sigaction(SIGALRM, &sa, NULL);
    for (int i = 0; i < 3; i++) {
        ualarm(2000, 0);
        int rc;
        while ((rc = sem_wait(&from_handler)) == -1 && errno == EINTR)
            ;
        printf("woken by the handler's post: %d\n", rc);
    }
    /* a condvar wait a signal interrupts: the predicate loop goes on */
    int flag = 0;
    pthread_mutex_lock(&lk);
    ualarm(2000, 0);
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += 20000000;
    if (t.tv_nsec >= 1000000000L) { t.tv_nsec -= 1000000000L; t.tv_sec++; }
    int rc = 0;
    while (!flag && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&cv, &lk, &t);
    pthread_mutex_unlock(&lk);
    sem_trywait(&from_handler);
    printf("timedwait across a signal: %s\n", strerror(rc));
    return 8;
}
