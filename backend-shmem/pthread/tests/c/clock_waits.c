/* The clock variants of the blocking calls (glibc 2.30/2.31; C++'s
 * condition_variable::wait_for, timed_mutex::try_lock_for and
 * shared_timed_mutex use the first three):
 *   clock_waits cond | mutex | rdlock | wrlock | sem | timedjoin | clockjoin
 * main blocks in the named call on an object a second thread holds (or a
 * thread it joins). Only once main is asleep (Linux: state S in
 * /proc/self/task/<tid>/stat) does the other thread do its heavily
 * instrumented work (lock/unlock pairs of a mutex of its own) and hand
 * over. Under the interposer the hand-off is a merge (R8), so main's delay
 * takes over the other thread's: the test reads both from the report.
 * Also: each call timing out, and pthread_tryjoin_np busy then joining.
 * Output must be identical with and without the interposer. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "asleep.h"

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t sem;
static atomic_int holding, armed;
static int ready;
static pid_t main_tid;
static atomic_int other_tid;
static const char *mode;

/* CLOCK_MONOTONIC now plus `ms` milliseconds. */
static struct timespec in(long ms) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return plus_ms(t, ms);
}

/* Waits until main has armed and sleeps, then does the instrumented work. */
static void work_while_main_waits(void) {
    while (!atomic_load(&armed))
        sched_yield();
    until_asleep(main_tid);
    for (int i = 0; i < 20000; i++) {
        pthread_mutex_lock(&own);
        pthread_mutex_unlock(&own);
    }
}

static void *other(void *arg) {
    (void)arg;
    atomic_store(&other_tid, (int)gettid());
    if (!strcmp(mode, "cond")) {
        work_while_main_waits();
        pthread_mutex_lock(&lk);
        ready = 1;
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&lk);
    } else if (!strcmp(mode, "mutex")) {
        pthread_mutex_lock(&lk);
        atomic_store(&holding, 1);
        work_while_main_waits();
        pthread_mutex_unlock(&lk);
    } else if (!strcmp(mode, "rdlock") || !strcmp(mode, "wrlock")) {
        pthread_rwlock_wrlock(&rw);
        atomic_store(&holding, 1);
        work_while_main_waits();
        pthread_rwlock_unlock(&rw);
    } else if (!strcmp(mode, "sem")) {
        work_while_main_waits();
        sem_post(&sem);
    } else {
        work_while_main_waits();
    }
    return NULL;
}

int main(int argc, char **argv) {
    mode = argc > 1 ? argv[1] : "cond";
    main_tid = gettid();
    sem_init(&sem, 0, 0);
    struct timespec t;
    int rc = -1;

    /* Timeouts first: nothing handed over, nothing merged. */
    pthread_mutex_lock(&lk);
    t = in(1);
    printf("cond_clockwait timeout: %s\n", strerror(pthread_cond_clockwait(&cv, &lk, CLOCK_MONOTONIC, &t)));
    t = in(1);
    printf("cond_clockwait bad clock: %s\n",
           strerror(pthread_cond_clockwait(&cv, &lk, CLOCK_PROCESS_CPUTIME_ID, &t)));
    pthread_mutex_unlock(&lk);
    t = in(1);
    rc = sem_clockwait(&sem, CLOCK_MONOTONIC, &t);
    printf("sem_clockwait timeout: %d %s\n", rc, strerror(errno));

    pthread_t th;
    if (!strcmp(mode, "cond"))
        pthread_mutex_lock(&lk);
    pthread_create(&th, NULL, other, NULL);
    if (strcmp(mode, "cond") && strcmp(mode, "sem") && strcmp(mode, "timedjoin") &&
        strcmp(mode, "clockjoin"))
        while (!atomic_load(&holding))
            sched_yield();
    if (!strcmp(mode, "mutex")) {
        t = in(1);
        printf("clocklock while held: %s\n", strerror(pthread_mutex_clocklock(&lk, CLOCK_MONOTONIC, &t)));
    } else if (!strcmp(mode, "rdlock")) {
        t = in(1);
        printf("clockrdlock while written: %s\n",
               strerror(pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &t)));
    } else if (!strcmp(mode, "wrlock")) {
        t = in(1);
        printf("clockwrlock while written: %s\n",
               strerror(pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &t)));
    } else if (!strcmp(mode, "timedjoin")) {
        printf("tryjoin while running: %s\n", strerror(pthread_tryjoin_np(th, NULL)));
        clock_gettime(CLOCK_REALTIME, &t); /* timedjoin's clock */
        t.tv_nsec = t.tv_nsec < 999000000L ? t.tv_nsec + 1000000L : 999999999L;
        printf("timedjoin while running: %s\n", strerror(pthread_timedjoin_np(th, NULL, &t)));
    } else if (!strcmp(mode, "clockjoin")) {
        t = in(1);
        printf("clockjoin while running: %s\n", strerror(pthread_clockjoin_np(th, NULL, CLOCK_MONOTONIC, &t)));
    }

    /* The hand-off: main sleeps in the call until the other thread's
     * work is done. */
    atomic_store(&armed, 1);
    t = in(60000);
    if (!strcmp(mode, "cond")) {
        while (!ready && rc != ETIMEDOUT)
            rc = pthread_cond_clockwait(&cv, &lk, CLOCK_MONOTONIC, &t);
        rc = ready ? 0 : rc;
        pthread_mutex_unlock(&lk);
    } else if (!strcmp(mode, "mutex")) {
        rc = pthread_mutex_clocklock(&lk, CLOCK_MONOTONIC, &t);
        pthread_mutex_unlock(&lk);
    } else if (!strcmp(mode, "rdlock")) {
        rc = pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &t);
        pthread_rwlock_unlock(&rw);
    } else if (!strcmp(mode, "wrlock")) {
        rc = pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &t);
        pthread_rwlock_unlock(&rw);
    } else if (!strcmp(mode, "sem")) {
        rc = sem_clockwait(&sem, CLOCK_MONOTONIC, &t) ? errno : 0;
    } else if (!strcmp(mode, "timedjoin")) {
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_sec += 60;
        rc = pthread_timedjoin_np(th, NULL, &t);
    } else if (!strcmp(mode, "clockjoin")) {
        rc = pthread_clockjoin_np(th, NULL, CLOCK_MONOTONIC, &t);
    }
    printf("%s hand-off: %s\n", mode, strerror(rc));
    if (strcmp(mode, "timedjoin") && strcmp(mode, "clockjoin")) {
        /* Wait without a wrapped call until the other thread has exited
         * (its task is gone: the kernel cleared its tid before), then
         * tryjoin: main's own overhead stays a few calls, not a spin. */
        char task[64];
        snprintf(task, sizeof task, "/proc/self/task/%d", atomic_load(&other_tid));
        while (atomic_load(&other_tid) == 0 || access(task, F_OK) == 0) {
            sched_yield();
            snprintf(task, sizeof task, "/proc/self/task/%d", atomic_load(&other_tid));
        }
        while ((rc = pthread_tryjoin_np(th, NULL)) == EBUSY)
            sched_yield();
        printf("tryjoin: %s\n", strerror(rc));
    }
    sem_destroy(&sem);
    return 0;
}
