/* MPICH's threads/pt2pt/mt_mpicancel, written here from scratch: four
 * threads of rank 0 (MPI_THREAD_MULTIPLE), each on its own duplicate of
 * MPI_COMM_WORLD, post 100 MPI_Irecv of one int that no rank ever sends,
 * cancel them all and complete them with MPI_Waitall: 400 cancelled
 * receives pending at once, more than heisen has large staging buffers.
 * Then one thread does the same with 300 receives of 16 doubles.
 * Every receive must report itself cancelled, and MPI_Finalize must print
 * nothing (MPICH 4.0.2 prints "yaksa: N leaked handle pool objects" for a
 * cancelled receive posted with a struct type of large extent). */
#include "common.h"
#include <pthread.h>

#define THREADS 4
#define PER_THREAD 100
#define WIDE 300

static MPI_Comm comms[THREADS];
static int cancelled[THREADS];

static void *canceller(void *arg) {
    int id = *(int *)arg;
    int *buf = malloc(PER_THREAD * sizeof(int));
    MPI_Request *q = malloc(PER_THREAD * sizeof(MPI_Request));
    MPI_Status *st = malloc(PER_THREAD * sizeof(MPI_Status));
    for (int i = 0; i < PER_THREAD; i++) MPI_Irecv(&buf[i], 1, MPI_INT, 1, 1, comms[id], &q[i]);
    for (int i = 0; i < PER_THREAD; i++) MPI_Cancel(&q[i]);
    MPI_Waitall(PER_THREAD, q, st);
    for (int i = 0; i < PER_THREAD; i++) {
        int flag = 0;
        MPI_Test_cancelled(&st[i], &flag);
        cancelled[id] += flag;
    }
    free(buf);
    free(q);
    free(st);
    return NULL;
}

int main(int argc, char **argv) {
    int provided = start_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    SAY("provided multiple=%d", provided == MPI_THREAD_MULTIPLE);
    for (int i = 0; i < THREADS; i++) MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0 && provided == MPI_THREAD_MULTIPLE) {
        pthread_t t[THREADS];
        int ids[THREADS];
        for (int i = 0; i < THREADS; i++) {
            ids[i] = i;
            pthread_create(&t[i], NULL, canceller, &ids[i]);
        }
        for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
        for (int i = 0; i < THREADS; i++) SAY("thread %d cancelled %d of %d", i, cancelled[i], PER_THREAD);
    }
    if (me == 0) {
        double *buf = malloc(WIDE * 16 * sizeof(double));
        MPI_Request *q = malloc(WIDE * sizeof(MPI_Request));
        MPI_Status *st = malloc(WIDE * sizeof(MPI_Status));
        for (int i = 0; i < WIDE; i++) MPI_Irecv(&buf[16 * i], 16, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, &q[i]);
        for (int i = 0; i < WIDE; i++) MPI_Cancel(&q[i]);
        MPI_Waitall(WIDE, q, st);
        int n = 0;
        for (int i = 0; i < WIDE; i++) {
            int flag = 0;
            MPI_Test_cancelled(&st[i], &flag);
            n += flag;
        }
        SAY("doubles cancelled %d of %d", n, WIDE);
        free(buf);
        free(q);
        free(st);
    }
    /* the receives were never matched: a message sent now meets a fresh one */
    int x = 7 + me, y = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, (me + 1) % np, 1, &y, 1, MPI_INT, (me + np - 1) % np, 1, comms[0],
                 MPI_STATUS_IGNORE);
    SAY("after got %d", y);
    for (int i = 0; i < THREADS; i++) MPI_Comm_free(&comms[i]);
    MPI_Finalize();
    return 0;
}
