/*
 * rma_threads.c: one-sided communication from two threads of each rank
 * (MPI_THREAD_MULTIPLE). First, on one window, one thread exposes the
 * rank's window to the rank itself (Win_post) and polls Win_test while
 * the other thread accesses it (Win_start, Win_put, Win_complete): the
 * completing thread must never wait for the polling one. Then each thread
 * makes, fences and frees 20 windows on a communicator of its own, both at
 * once (the MPI may hand a freed window's handle to the other thread's
 * next window). Only rank 0 prints; the exit status is non-zero if any
 * check failed.
 *
 *   mpicc -O1 rma_threads.c -o rma_threads -lpthread && mpiexec -n 2 ./rma_threads
 */
#include <pthread.h>

#include "coll_common.h"

#define N 4

static MPI_Win shared_win;
static int *shared_buf;
static int polls_done;

static void *expose(void *arg) {
    (void)arg;
    MPI_Group world, me;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &rank, &me);
    must(MPI_Win_post(me, 0, shared_win), "post");
    int flag = 0;
    while (!flag) must(MPI_Win_test(shared_win, &flag), "test");
    polls_done = 1;
    MPI_Group_free(&me);
    MPI_Group_free(&world);
    return NULL;
}

static void *access_self(void *arg) {
    (void)arg;
    MPI_Group world, me;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &rank, &me);
    int out[N];
    for (int i = 0; i < N; i++) out[i] = val(rank, i);
    must(MPI_Win_start(me, 0, shared_win), "start");
    must(MPI_Put(out, N, MPI_INT, rank, 0, N, MPI_INT, shared_win), "put");
    must(MPI_Win_complete(shared_win), "complete");
    MPI_Group_free(&me);
    MPI_Group_free(&world);
    return NULL;
}

/* 20 windows made, fenced around a ring of puts and freed on `comm`. */
static void *many_windows(void *arg) {
    MPI_Comm comm = *(MPI_Comm *)arg;
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int buf[N];
    for (int k = 0; k < 20; k++) {
        MPI_Win win;
        for (int i = 0; i < N; i++) buf[i] = -1;
        must(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, comm, &win), "create");
        int out = val(rank, k);
        must(MPI_Win_fence(0, win), "fence");
        must(MPI_Put(&out, 1, MPI_INT, right, 0, 1, MPI_INT, win), "put");
        must(MPI_Win_fence(0, win), "fence");
        CHECK(buf[0] == val(left, k));
        must(MPI_Win_free(&win), "free");
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) printf("rma_threads: no MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 1;
    }

    shared_buf = calloc(N, sizeof(int));
    must(MPI_Win_create(shared_buf, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                        &shared_win),
         "create");
    for (int round = 0; round < 20; round++) {
        pthread_t a, b;
        polls_done = 0;
        pthread_create(&a, NULL, expose, NULL);
        pthread_create(&b, NULL, access_self, NULL);
        pthread_join(b, NULL);
        pthread_join(a, NULL);
        CHECK(polls_done == 1);
        for (int i = 0; i < N; i++) CHECK(shared_buf[i] == val(rank, i));
        for (int i = 0; i < N; i++) shared_buf[i] = -1;
    }
    must(MPI_Win_free(&shared_win), "free");
    free(shared_buf);
    result("self epochs in two threads", 20);

    MPI_Comm comms[2];
    must(MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]), "dup");
    must(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]), "dup");
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, many_windows, &comms[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
    result("windows made in two threads", 40);
    return finish("rma_threads");
}
