/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE: two threads use
 * point-to-point taking turns (SERIALIZED use), then a thread that is not
 * the main one runs a collective and MPI_Finalize, which MPI allows at
 * MPI_THREAD_MULTIPLE (MPI 4.0 §11.2.1: only below MULTIPLE must the
 * initialising thread finalize); the main thread then asks MPI_Finalized. */
#include "common.h"
#include <pthread.h>

static pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;
static int provided;
static int got[2][2];

/* Two threads take turns in MPI (a lock around every call, as
 * MPI_THREAD_SERIALIZED asks); each thread's receive is only tested under
 * the lock so neither blocks inside MPI while holding it. */
static void *worker(void *arg) {
    int id = *(int *)arg, peer = 1 - me;
    for (int k = 0; k < 20; k++) {
        int x = me * 100 + id * 10 + k % 10, y = -1, done = 0;
        MPI_Request q[2];
        MPI_Status st[2];
        pthread_mutex_lock(&turn);
        MPI_Irecv(&y, 1, MPI_INT, peer, id, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(&x, 1, MPI_INT, peer, id, MPI_COMM_WORLD, &q[1]);
        pthread_mutex_unlock(&turn);
        while (!done) {
            pthread_mutex_lock(&turn);
            MPI_Testall(2, q, &done, st);
            pthread_mutex_unlock(&turn);
        }
        if (k == 19) { got[id][0] = y; got[id][1] = st[0].MPI_TAG; }
    }
    return NULL;
}

static void *finalizer(void *arg) {
    (void)arg;
    int x = me, y = -1;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    SAY("finalizer sum %d", y);
    MPI_Finalize();
    return NULL;
}

int main(int argc, char **argv) {
    provided = start_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    SAY("provided multiple=%d", provided == MPI_THREAD_MULTIPLE);
    if (me < 2) {
        /* two threads at a time would need MULTIPLE; take turns (SERIALIZED use) */
        pthread_t t[2];
        int ids[2] = {0, 1};
        for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, &ids[i]);
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
        for (int i = 0; i < 2; i++) SAY("thread %d got %d tag=%d", i, got[i][0], got[i][1]);
    }
    if (provided == MPI_THREAD_MULTIPLE) {
        pthread_t f;
        pthread_create(&f, NULL, finalizer, NULL);
        pthread_join(f, NULL);
    } else {
        finalizer(NULL);
    }
    int done;
    MPI_Finalized(&done);
    SAY("finalized %d", done);
    return 0;
}
