/* An MPI program with pthread synchronisation of its own, for the pthread
 * interposer (not the MPI one): MPICH over UCX hooks sbrk and mmap and
 * takes a pthread lock inside its hook, so the interposer's wrappers are
 * called from inside glibc's malloc (tests/pthread_interposer.rs). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t barrier;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *worker(void *arg) {
    for (int i = 0; i < 20; i++) {
        pthread_barrier_wait(&barrier);
        pthread_mutex_lock(&mutex);
        counter++;
        pthread_mutex_unlock(&mutex);
    }
    return arg;
}

int main(int argc, char **argv) {
    int provided, rank;
    /* Grow the heap before MPI_Init, so that its first allocations move
     * the heap's top through UCX's sbrk hook. */
    static void *small[10000];
    for (int i = 0; i < 10000; i++) small[i] = malloc(64);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    for (int i = 0; i < 10000; i++) free(small[i]);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pthread_barrier_init(&barrier, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    worker(NULL);
    pthread_join(t, NULL);
    long total = 0;
    MPI_Allreduce(&counter, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d counter %ld total %ld\n", rank, counter, total);
    MPI_Finalize();
    return 0;
}
