/* MPI_THREAD_MULTIPLE: on each of 2 ranks four threads exchange messages
 * with the same thread of the other rank at once (tag = thread), blocking
 * and nonblocking; the main thread prints what each thread received after
 * joining them. */
#include "common.h"
#include <pthread.h>

#define THREADS 4
#define ROUNDS 50

static long got[THREADS][4];

static void *exchange(void *arg) {
    int t = (int)(long)arg, peer = 1 - me;
    long sum = 0, count = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int out[8], in[8];
        for (int i = 0; i < 8; i++) out[i] = 1000 * me + 100 * t + round + i;
        MPI_Status st;
        if (me == 0) {
            MPI_Send(out, 8, MPI_INT, peer, t, MPI_COMM_WORLD);
            MPI_Recv(in, 8, MPI_INT, peer, t, MPI_COMM_WORLD, &st);
        } else {
            MPI_Recv(in, 8, MPI_INT, peer, t, MPI_COMM_WORLD, &st);
            MPI_Send(out, 8, MPI_INT, peer, t, MPI_COMM_WORLD);
        }
        int n;
        MPI_Get_count(&st, MPI_INT, &n);
        count += n;
        for (int i = 0; i < 8; i++) sum += in[i];
        MPI_Request r[2];
        MPI_Irecv(in, 8, MPI_INT, peer, 100 + t, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(out, 8, MPI_INT, peer, 100 + t, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 8; i++) sum += in[i];
    }
    got[t][0] = sum;
    got[t][1] = count;
    return NULL;
}

int main(int argc, char **argv) {
    int provided = start_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    SAY("provided multiple=%d", provided == MPI_THREAD_MULTIPLE);
    if (np == 2 && provided == MPI_THREAD_MULTIPLE) {
        pthread_t th[THREADS];
        for (long t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, exchange, (void *)t);
        for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
        for (int t = 0; t < THREADS; t++) SAY("thread %d sum %ld count %ld", t, got[t][0], got[t][1]);
    }
    MPI_Finalize();
    return 0;
}
