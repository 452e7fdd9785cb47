/* MPI_Isendrecv and MPI_Isendrecv_replace in numbers (MPI 4.0 §3.10.3,
 * §3.10.4), on 2 ranks, one section per argv[1]:
 * "overflow": each rank posts 300 exchanges with the other before it
 *   waits for any (more than the interposer's table of pending
 *   exchanges holds), then as many _replace ones; every payload and
 *   status is checked.
 * "freed": rank 0 posts 1000 _replace exchanges and frees each request
 *   at once (MPI_Request_free); rank 1 receives and answers each with
 *   MPI_Recv/MPI_Send and checks what it received (the data the freed
 *   exchange's send still read after the free), and says so every 100.
 * "threads": MPI_THREAD_MULTIPLE, 4 threads a rank, each exchanging with
 *   the same thread of the other rank (tag = thread), Isendrecv and
 *   Isendrecv_replace, payloads and statuses checked every round.
 * Each rank prints counts of what was right, never times or addresses. */
#include "common.h"
#include <pthread.h>

enum { MANY = 300, N = 6, FREED = 1000, BATCH = 100, THREADS = 4, ROUNDS = 200 };

static int value(int from, int k, int i) { return 100000 * from + 10 * k + i; }

/* Whether `st` is the receive of N ints from `source` with `tag`. */
static int status_right(const MPI_Status *st, int source, int tag) {
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    return st->MPI_SOURCE == source && st->MPI_TAG == tag && count == N;
}

static void overflow_section(void) {
    int peer = 1 - me;
    static int sent[MANY][N], in[MANY][N], both[MANY][N];
    static MPI_Request rq[MANY];
    static MPI_Status sts[MANY];
    for (int k = 0; k < MANY; k++)
        for (int i = 0; i < N; i++) sent[k][i] = value(me, k, i);
    int posted = 0;
    for (int k = 0; k < MANY; k++)
        posted += MPI_Isendrecv(sent[k], N, MPI_INT, peer, k, in[k], N, MPI_INT, peer, k,
                                MPI_COMM_WORLD, &rq[k]) == MPI_SUCCESS;
    int rc = MPI_Waitall(MANY, rq, sts);
    int data = 0, statuses = 0, nulls = 0;
    for (int k = 0; k < MANY; k++) {
        int whole = 1;
        for (int i = 0; i < N; i++) whole &= in[k][i] == value(peer, k, i);
        data += whole;
        statuses += status_right(&sts[k], peer, k);
        nulls += rq[k] == MPI_REQUEST_NULL;
    }
    SAY("isendrecv posted=%d waitall rc=%d data=%d statuses=%d nulls=%d", posted,
        error_class(rc), data, statuses, nulls);
    /* _replace, completed one by one with Wait, in reverse */
    for (int k = 0; k < MANY; k++)
        for (int i = 0; i < N; i++) both[k][i] = value(me, k, i) + 7;
    posted = 0;
    for (int k = 0; k < MANY; k++)
        posted += MPI_Isendrecv_replace(both[k], N, MPI_INT, peer, MANY + k, peer, MANY + k,
                                        MPI_COMM_WORLD, &rq[k]) == MPI_SUCCESS;
    data = statuses = 0;
    for (int k = MANY - 1; k >= 0; k--) {
        MPI_Status st;
        MPI_Wait(&rq[k], &st);
        statuses += status_right(&st, peer, MANY + k);
    }
    for (int k = 0; k < MANY; k++) {
        int whole = 1;
        for (int i = 0; i < N; i++) whole &= both[k][i] == value(peer, k, i) + 7;
        data += whole;
    }
    SAY("replace posted=%d data=%d statuses=%d", posted, data, statuses);
}

static void freed_section(void) {
    static int buf[FREED][N];
    int last = 0;
    if (me == 0) {
        for (int k = 0; k < FREED; k++) {
            for (int i = 0; i < N; i++) buf[k][i] = value(0, k, i);
            MPI_Request r;
            MPI_Isendrecv_replace(buf[k], N, MPI_INT, 1, k, 1, k, MPI_COMM_WORLD, &r);
            MPI_Request_free(&r);
            /* every BATCH exchanges, rank 1's word that it received them
             * all (their sends are complete), so that no more than about
             * BATCH freed exchanges are pending at once */
            if ((k + 1) % BATCH == 0)
                MPI_Recv(&last, 1, MPI_INT, 1, FREED + 1 + k / BATCH, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        }
        MPI_Recv(&last, 1, MPI_INT, 1, FREED, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        SAY("freed %d last=%d", FREED, last);
    } else {
        int right = 0, statuses = 0;
        for (int k = 0; k < FREED; k++) {
            int in[N], out[N];
            MPI_Status st;
            MPI_Recv(in, N, MPI_INT, 0, k, MPI_COMM_WORLD, &st);
            int whole = 1;
            for (int i = 0; i < N; i++) whole &= in[i] == value(0, k, i);
            right += whole;
            statuses += status_right(&st, 0, k);
            for (int i = 0; i < N; i++) out[i] = value(1, k, i);
            MPI_Send(out, N, MPI_INT, 0, k, MPI_COMM_WORLD);
            if ((k + 1) % BATCH == 0)
                MPI_Send(&right, 1, MPI_INT, 0, FREED + 1 + k / BATCH, MPI_COMM_WORLD);
        }
        MPI_Send(&right, 1, MPI_INT, 0, FREED, MPI_COMM_WORLD);
        SAY("received %d right=%d statuses=%d", FREED, right, statuses);
    }
}

static int thread_right[THREADS][4];

static void *thread_exchange(void *arg) {
    int t = (int)(long)arg, peer = 1 - me;
    for (int round = 0; round < ROUNDS; round++) {
        int out[N], in[N], both[N];
        for (int i = 0; i < N; i++) out[i] = both[i] = value(me, 1000 * t + round, i);
        MPI_Request r;
        MPI_Status st;
        MPI_Isendrecv(out, N, MPI_INT, peer, t, in, N, MPI_INT, peer, t, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, &st);
        int whole = 1;
        for (int i = 0; i < N; i++) whole &= in[i] == value(peer, 1000 * t + round, i);
        thread_right[t][0] += whole;
        thread_right[t][1] += status_right(&st, peer, t);
        MPI_Isendrecv_replace(both, N, MPI_INT, peer, THREADS + t, peer, THREADS + t,
                              MPI_COMM_WORLD, &r);
        int flag = 0;
        do {
            MPI_Test(&r, &flag, &st);
        } while (!flag);
        whole = 1;
        for (int i = 0; i < N; i++) whole &= both[i] == value(peer, 1000 * t + round, i);
        thread_right[t][2] += whole;
        thread_right[t][3] += status_right(&st, peer, THREADS + t);
    }
    return NULL;
}

static void threads_section(void) {
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, thread_exchange, (void *)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++)
        SAY("thread %d isendrecv data=%d statuses=%d replace data=%d statuses=%d", t,
            thread_right[t][0], thread_right[t][1], thread_right[t][2], thread_right[t][3]);
}

int main(int argc, char **argv) {
    const char *section = argc > 1 ? argv[1] : "overflow";
    int threads = strcmp(section, "threads") == 0;
    int provided = start_thread(&argc, &argv, threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE);
    if (np != 2) {
        SAY("needs 2 ranks");
    } else if (threads) {
        SAY("provided multiple=%d", provided == MPI_THREAD_MULTIPLE);
        if (provided == MPI_THREAD_MULTIPLE) threads_section();
    } else if (strcmp(section, "freed") == 0) {
        freed_section();
    } else {
        overflow_section();
    }
    MPI_Finalize();
    return 0;
}
