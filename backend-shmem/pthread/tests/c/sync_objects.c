/* Condition variables, barriers, reader-writer locks and semaphores used
 * the ways correct programs use them: predicate loops (spurious wake-ups),
 * timed waits that time out, broadcast to many waiters, a wait on a
 * recursive mutex, barriers reused for many episodes and destroyed and
 * re-created with another count, many readers with a writer-preferring
 * lock, read recursion, try and timed acquires, semaphores with
 * trywait/timedwait and EINTR from a signal. Output must be identical
 * with and without LD_PRELOAD=libheisen_pthread.so. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAITERS 24
#define EPISODES 2000

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int generation, ready, tickets;
static pthread_barrier_t bar;
static pthread_rwlock_t rw;
static long shared_value;
static sem_t sem;

static void soon(struct timespec *t, long ms) {
    clock_gettime(CLOCK_REALTIME, t);
    t->tv_nsec += ms * 1000000L;
    while (t->tv_nsec >= 1000000000L) { t->tv_nsec -= 1000000000L; t->tv_sec++; }
}

/* broadcast: every waiter waits for generation 1, in a predicate loop */
static void *bcast_waiter(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lk);
    ready++;
    pthread_cond_broadcast(&cv);
    while (generation == 0)
        pthread_cond_wait(&cv, &lk);
    tickets++;
    pthread_mutex_unlock(&lk);
    return NULL;
}

/* signal hand-off: a consumer takes tickets one at a time */
static void *consumer(void *arg) {
    long n = (long)arg, got = 0;
    pthread_mutex_lock(&rec);
    pthread_mutex_lock(&rec); /* depth 2: cond_wait needs depth 1 */
    pthread_mutex_unlock(&rec);
    while (got < n) {
        while (tickets == 0)
            pthread_cond_wait(&cv, &rec);
        tickets--;
        got++;
        pthread_cond_signal(&cv);
    }
    pthread_mutex_unlock(&rec);
    return (void *)got;
}

static void *bar_worker(void *arg) {
    long id = (long)arg, serial = 0;
    for (int e = 0; e < EPISODES; e++) {
        if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD)
            serial++;
        (void)id;
    }
    return (void *)serial;
}

static void *reader(void *arg) {
    long sum = 0;
    (void)arg;
    for (int i = 0; i < 3000; i++) {
        pthread_rwlock_rdlock(&rw);
        if (i % 100 == 0) { /* read recursion */
            pthread_rwlock_rdlock(&rw);
            pthread_rwlock_unlock(&rw);
        }
        sum += shared_value >= 0;
        pthread_rwlock_unlock(&rw);
    }
    return (void *)sum;
}

static void *writer(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        pthread_rwlock_wrlock(&rw);
        shared_value++;
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}

static void *sem_poster(void *arg) {
    (void)arg;
    for (int i = 0; i < 5000; i++)
        sem_post(&sem);
    return NULL;
}

static void on_alarm(int s) { (void)s; }

static void *try_rw(void *arg) {
    struct timespec t;
    (void)arg;
    printf("other: tryrdlock while written   %s\n", strerror(pthread_rwlock_tryrdlock(&rw)));
    printf("other: trywrlock while written   %s\n", strerror(pthread_rwlock_trywrlock(&rw)));
    soon(&t, 2);
    printf("other: timedrdlock while written %s\n", strerror(pthread_rwlock_timedrdlock(&rw, &t)));
    soon(&t, 2);
    printf("other: timedwrlock while written %s\n", strerror(pthread_rwlock_timedwrlock(&rw, &t)));
    return NULL;
}

int main(void) {
    pthread_t th[WAITERS + 8];
    struct timespec t;
    void *ret;

    /* timedwait that times out, predicate never true */
    pthread_mutex_lock(&lk);
    soon(&t, 3);
    int rc;
    do rc = pthread_cond_timedwait(&cv, &lk, &t); while (rc == 0);
    printf("timedwait: %s\n", strerror(rc));
    pthread_mutex_unlock(&lk);

    /* broadcast to many waiters */
    for (long i = 0; i < WAITERS; i++)
        pthread_create(&th[i], NULL, bcast_waiter, NULL);
    pthread_mutex_lock(&lk);
    while (ready < WAITERS)
        pthread_cond_wait(&cv, &lk);
    generation = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&lk);
    for (int i = 0; i < WAITERS; i++)
        pthread_join(th[i], NULL);
    printf("broadcast woke %d\n", tickets);

    /* condvar with a recursive mutex: consumer takes 24 tickets back */
    pthread_mutex_lock(&rec);
    pthread_mutex_lock(&lk); /* tickets are counted under rec from here */
    pthread_mutex_unlock(&lk);
    pthread_mutex_unlock(&rec);
    pthread_create(&th[0], NULL, consumer, (void *)(long)WAITERS);
    pthread_join(th[0], &ret);
    printf("consumer took %ld, left %d\n", (long)ret, tickets);

    /* barriers: many episodes, destroyed and re-created with other counts */
    for (int round = 0; round < 3; round++) {
        int n = 2 + round * 3;
        pthread_barrier_init(&bar, NULL, n);
        for (long i = 0; i < n; i++)
            pthread_create(&th[i], NULL, bar_worker, (void *)i);
        long serial = 0;
        for (int i = 0; i < n; i++) {
            pthread_join(th[i], &ret);
            serial += (long)ret;
        }
        printf("barrier of %d: %ld serial returns over %d episodes\n", n, serial, EPISODES);
        pthread_barrier_destroy(&bar);
    }

    /* rwlocks: writer preference, many readers, recursion, try/timed */
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NP);
    pthread_rwlock_init(&rw, &ra);
    pthread_rwlockattr_destroy(&ra);
    long reads = 0;
    for (long i = 0; i < 12; i++)
        pthread_create(&th[i], NULL, i % 4 == 3 ? writer : reader, NULL);
    for (int i = 0; i < 12; i++) {
        pthread_join(th[i], &ret);
        reads += (long)ret;
    }
    printf("rwlock: value %ld reads %ld\n", shared_value, reads);
    printf("wrlock                           %s\n", strerror(pthread_rwlock_wrlock(&rw)));
    printf("wrlock again                     %s\n", strerror(pthread_rwlock_wrlock(&rw)));
    printf("rdlock while writing             %s\n", strerror(pthread_rwlock_rdlock(&rw)));
    pthread_create(&th[0], NULL, try_rw, NULL);
    pthread_join(th[0], NULL);
    printf("unlock                           %s\n", strerror(pthread_rwlock_unlock(&rw)));
    printf("tryrdlock                        %s\n", strerror(pthread_rwlock_tryrdlock(&rw)));
    printf("trywrlock while reading          %s\n", strerror(pthread_rwlock_trywrlock(&rw)));
    printf("unlock                           %s\n", strerror(pthread_rwlock_unlock(&rw)));
    printf("destroy                          %s\n", strerror(pthread_rwlock_destroy(&rw)));
    pthread_rwlock_init(&rw, NULL);
    printf("re-init trywrlock                %s\n", strerror(pthread_rwlock_trywrlock(&rw)));
    printf("unlock                           %s\n", strerror(pthread_rwlock_unlock(&rw)));

    /* semaphores */
    sem_init(&sem, 0, 2);
    printf("sem_trywait %d\n", sem_trywait(&sem));
    printf("sem_trywait %d\n", sem_trywait(&sem));
    rc = sem_trywait(&sem);
    printf("sem_trywait %d %s\n", rc, strerror(errno));
    soon(&t, 2);
    rc = sem_timedwait(&sem, &t);
    printf("sem_timedwait %d %s\n", rc, strerror(errno));
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, sem_poster, NULL);
    int taken = 0;
    for (int i = 0; i < 20000; i++) {
        if (i % 3 == 0) {
            soon(&t, 5000);
            taken += sem_timedwait(&sem, &t) == 0;
        } else {
            taken += sem_wait(&sem) == 0;
        }
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    int v;
    sem_getvalue(&sem, &v);
    printf("sem took %d, value %d\n", taken, v);
    /* EINTR: a signal without SA_RESTART interrupts sem_wait */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    alarm(1);
    rc = sem_wait(&sem);
    printf("sem_wait interrupted %d %s\n", rc, strerror(errno));
    sem_destroy(&sem);
    return 5;
}
