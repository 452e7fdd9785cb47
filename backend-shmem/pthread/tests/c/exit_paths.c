/* The ways a threaded program ends, one per argument:
 *   locked       exit() while other threads hold mutexes, wait on a
 *                condvar, a barrier and a semaphore, and spin on locks
 *   atexit       exit() called again from an atexit handler
 *   main-exit    pthread_exit() from main; the last thread ends the process
 *   fork         fork() while threads use locks; the child creates its own
 *                threads and exits with its own code
 *   together     five threads call exit() at the same moment (before glibc
 *                2.41 each runs exit handlers, and the first done ends the
 *                process, in the middle of the others')
 * Output and exit code must be identical with and without
 * LD_PRELOAD=libheisen_pthread.so. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t bar;
static sem_t sem;
/* The spinner posts and takes back its own semaphore: a post on `sem`
 * could wake the semaphore waiter, which would then end before the exit
 * (and the report's count of threads running at exit would vary). */
static sem_t spun;
static volatile long spins;
static pthread_barrier_t started;

static void *holder(void *arg) {
    (void)arg;
    pthread_mutex_lock(&held);
    pthread_barrier_wait(&started);
    for (;;)
        pause();
    return NULL;
}
static void *waiter(void *arg) {
    (void)arg;
    pthread_mutex_lock(&busy);
    pthread_barrier_wait(&started);
    for (;;)
        pthread_cond_wait(&never, &busy);
    return NULL;
}
static void *bar_waiter(void *arg) {
    (void)arg;
    pthread_barrier_wait(&started);
    pthread_barrier_wait(&bar); /* never completes */
    return NULL;
}
static void *sem_waiter(void *arg) {
    (void)arg;
    pthread_barrier_wait(&started);
    sem_wait(&sem);
    return NULL;
}
static void *spinner(void *arg) {
    (void)arg;
    pthread_barrier_wait(&started);
    for (;;) {
        pthread_mutex_lock(&busy);
        spins++;
        pthread_mutex_unlock(&busy);
        sem_post(&spun);
        sem_trywait(&spun);
    }
    return NULL;
}

static void second_exit(void) {
    printf("atexit handler exits with 4\n");
    fflush(stdout);
    exit(4);
}
static void last_words(void) { printf("last handler\n"); }

static void *worker(void *arg) {
    long n = (long)arg, s = 0;
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&busy);
        s += i;
        pthread_mutex_unlock(&busy);
    }
    return (void *)s;
}

/* The child's threads use a mutex no parent thread touches: one the
 * parent's workers hold at the fork stays locked in the child (POSIX). */
static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;
static void *child_worker(void *arg) {
    long n = (long)arg, s = 0;
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&child_lock);
        s += i;
        pthread_mutex_unlock(&child_lock);
    }
    return (void *)s;
}

static void *exit_too(void *arg) {
    worker(arg);
    pthread_barrier_wait(&started);
    exit(5);
}

static void *late(void *arg) {
    pthread_barrier_wait(&started);
    void *r = worker(arg);
    printf("late thread done: %ld\n", (long)r);
    return r;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    pthread_t t;
    if (!strcmp(mode, "locked")) {
        pthread_barrier_init(&bar, NULL, 2);
        pthread_barrier_init(&started, NULL, 6);
        sem_init(&sem, 0, 0);
        sem_init(&spun, 0, 0);
        pthread_create(&t, NULL, holder, NULL);
        pthread_create(&t, NULL, waiter, NULL);
        pthread_create(&t, NULL, bar_waiter, NULL);
        pthread_create(&t, NULL, sem_waiter, NULL);
        pthread_create(&t, NULL, spinner, NULL);
        pthread_barrier_wait(&started);
        printf("exiting with threads blocked\n");
        exit(9);
    }
    if (!strcmp(mode, "atexit")) {
        atexit(last_words);
        atexit(second_exit);
        pthread_create(&t, NULL, worker, (void *)1000);
        pthread_join(t, NULL);
        printf("main returns 2\n");
        return 2;
    }
    if (!strcmp(mode, "main-exit")) {
        pthread_barrier_init(&started, NULL, 2);
        pthread_create(&t, NULL, late, (void *)100000);
        pthread_detach(t);
        printf("main calls pthread_exit\n");
        fflush(stdout);
        pthread_barrier_wait(&started);
        pthread_exit(NULL);
    }
    if (!strcmp(mode, "fork")) {
        pthread_t w[3];
        for (long i = 0; i < 3; i++)
            pthread_create(&w[i], NULL, worker, (void *)200000);
        int status = 0;
        for (int k = 0; k < 4; k++) { /* fork while the workers lock and unlock */
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                pthread_t c[2];
                void *r0, *r1;
                pthread_create(&c[0], NULL, child_worker, (void *)1000);
                pthread_create(&c[1], NULL, child_worker, (void *)1000);
                pthread_join(c[0], &r0);
                pthread_join(c[1], &r1);
                pthread_mutex_lock(&child_lock);
                printf("child %d: %ld\n", k, (long)r0 + (long)r1);
                pthread_mutex_unlock(&child_lock);
                exit(20 + k);
            }
            waitpid(pid, &status, 0);
            printf("child %d exited %d\n", k, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        }
        long s = 0;
        for (int i = 0; i < 3; i++) {
            void *r;
            pthread_join(w[i], &r);
            s += (long)r;
        }
        printf("parent: %ld\n", s);
        return 6;
    }
    if (!strcmp(mode, "together")) {
        pthread_barrier_init(&started, NULL, 5);
        for (int i = 0; i < 4; i++)
            pthread_create(&t, NULL, exit_too, (void *)1000);
        worker((void *)1000);
        printf("five threads exit at once\n");
        fflush(stdout);
        pthread_barrier_wait(&started);
        exit(5);
    }
    fprintf(stderr, "usage: exit_paths locked|atexit|main-exit|fork|together\n");
    return 64;
}
