/* Five threads call exit() at the same moment. Without an argument no
 * MPI call is made: under both interposers (`libheisen_mpi.so
 * libheisen_pthread.so`) each thread's exit goes through both of their
 * `exit`s before libc's. With `mpi`, MPI is initialised (a singleton,
 * MPI_THREAD_MULTIPLE) and never finalised, so the MPI interposer alone
 * writes the report at exit. Either way the report must come out whole
 * every time. Prints one line; exits 5. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t together;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void work(void) {
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&lock);
        total += i;
        pthread_mutex_unlock(&lock);
    }
}

static void *worker(void *arg) {
    (void)arg;
    work();
    pthread_barrier_wait(&together);
    exit(5);
}

int main(int argc, char **argv) {
    pthread_t t;
    if (argc > 1) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    }
    pthread_barrier_init(&together, NULL, 5);
    for (int i = 0; i < 4; i++)
        pthread_create(&t, NULL, worker, NULL);
    work();
    printf("five threads exit at once\n");
    fflush(stdout);
    pthread_barrier_wait(&together);
    exit(5);
}
