/* Nonblocking and persistent point-to-point on 2 ranks, completed by every
 * completion call: Wait, Waitall (statuses and STATUSES_IGNORE), Waitany,
 * Waitsome, Test, Testall, Testany, Testsome, Request_get_status; every
 * immediate send mode; persistent sends and receives with Start and
 * Startall; Cancel of a receive nobody matches; Request_free of an active
 * send; PROC_NULL requests. */
#include "common.h"

#define N 6

static void fill(int *w, int n) { for (int i = 0; i < n; i++) w[i] = -1; }

int main(int argc, char **argv) {
    start(&argc, &argv);
    if (me > 1) { MPI_Finalize(); return 0; }
    int peer = 1 - me;
    int v[64], w[N][16];
    MPI_Request r[N];
    MPI_Status st[N];
    for (int i = 0; i < 64; i++) v[i] = 1000 * me + i;
    char *bbuf = malloc(4096);
    MPI_Buffer_attach(bbuf, 4096);

    /* 1: Isend of every mode, Irecv, Waitall with statuses */
    for (int i = 0; i < N; i++) fill(w[i], 16);
    for (int i = 0; i < 4; i++) MPI_Irecv(w[i], 16, MPI_INT, peer, i, MPI_COMM_WORLD, &r[i]);
    MPI_Barrier(MPI_COMM_WORLD); /* the receives are posted: Irsend is legal */
    MPI_Request s[4];
    MPI_Isend(v, 3, MPI_INT, peer, 0, MPI_COMM_WORLD, &s[0]);
    MPI_Ibsend(v, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &s[1]);
    MPI_Issend(v, 5, MPI_INT, peer, 2, MPI_COMM_WORLD, &s[2]);
    MPI_Irsend(v, 6, MPI_INT, peer, 3, MPI_COMM_WORLD, &s[3]);
    MPI_Waitall(4, r, st);
    for (int i = 0; i < 4; i++) {
        show_status("waitall", 0, &st[i], MPI_INT);
        show_ints("waitall data", w[i], 7);
        SAY("waitall null=%d", r[i] == MPI_REQUEST_NULL);
    }
    MPI_Waitall(4, s, MPI_STATUSES_IGNORE);

    /* 2: Waitany and Waitsome, with a PROC_NULL request among them */
    for (int i = 0; i < N; i++) fill(w[i], 16);
    for (int i = 0; i < 3; i++) MPI_Irecv(w[i], 16, MPI_INT, MPI_ANY_SOURCE, 10 + i, MPI_COMM_WORLD, &r[i]);
    MPI_Irecv(w[3], 16, MPI_INT, MPI_PROC_NULL, 13, MPI_COMM_WORLD, &r[3]);
    for (int i = 0; i < 3; i++) MPI_Send(v + i, 2 + i, MPI_INT, peer, 10 + i, MPI_COMM_WORLD);
    /* completion order depends on arrival: keep each request's status by
     * its index and print them in index order */
    MPI_Status by_index[4];
    int left = 4, calls = 0;
    while (left > 0) {
        int idx;
        MPI_Waitany(4, r, &idx, &st[0]);
        if (idx != MPI_UNDEFINED) { by_index[idx] = st[0]; left--; }
        if (left > 1) {
            int nout, idxs[N];
            MPI_Waitsome(4, r, &nout, idxs, st);
            if (nout != MPI_UNDEFINED) {
                for (int j = 0; j < nout; j++) by_index[idxs[j]] = st[j];
                left -= nout;
            }
        }
        calls++;
    }
    for (int i = 0; i < 4; i++) show_status("any/some", 0, &by_index[i], MPI_INT);
    for (int i = 0; i < 4; i++) show_ints("any/some data", w[i], 5);

    /* 3: Test, Testall, Testany, Testsome, Request_get_status */
    for (int i = 0; i < N; i++) fill(w[i], 16);
    MPI_Irecv(w[0], 16, MPI_INT, peer, 20, MPI_COMM_WORLD, &r[0]);
    MPI_Send(v, 9, MPI_INT, peer, 20, MPI_COMM_WORLD);
    int flag = 0;
    while (!flag) MPI_Request_get_status(r[0], &flag, &st[0]);
    show_status("get_status", 0, &st[0], MPI_INT);
    flag = 0;
    while (!flag) MPI_Test(&r[0], &flag, &st[0]);
    show_status("test", 0, &st[0], MPI_INT);
    show_ints("test data", w[0], 10);
    for (int i = 0; i < 3; i++) MPI_Irecv(w[i], 16, MPI_INT, peer, 21 + i, MPI_COMM_WORLD, &r[i]);
    for (int i = 0; i < 3; i++) MPI_Send(v, 1 + i, MPI_INT, peer, 21 + i, MPI_COMM_WORLD);
    flag = 0;
    while (!flag) MPI_Testall(3, r, &flag, st);
    for (int i = 0; i < 3; i++) show_status("testall", 0, &st[i], MPI_INT);
    for (int i = 0; i < 2; i++) MPI_Irecv(w[i], 16, MPI_INT, peer, 24 + i, MPI_COMM_WORLD, &r[i]);
    for (int i = 0; i < 2; i++) MPI_Send(v, 4 + i, MPI_INT, peer, 24 + i, MPI_COMM_WORLD);
    int done = 0;
    while (done < 2) {
        int idx;
        flag = 0;
        MPI_Testany(2, r, &idx, &flag, &st[0]);
        if (flag && idx != MPI_UNDEFINED) { show_status("testany", 0, &st[0], MPI_INT); done++; }
    }
    for (int i = 0; i < 2; i++) MPI_Irecv(w[i], 16, MPI_INT, peer, 26 + i, MPI_COMM_WORLD, &r[i]);
    for (int i = 0; i < 2; i++) MPI_Send(v, 6 + i, MPI_INT, peer, 26 + i, MPI_COMM_WORLD);
    done = 0;
    while (done < 2) {
        int nout, idxs[2];
        MPI_Testsome(2, r, &nout, idxs, MPI_STATUSES_IGNORE);
        if (nout != MPI_UNDEFINED) done += nout;
    }
    show_ints("testsome data", w[1], 8);

    /* 4: persistent requests, started three times */
    MPI_Request p[2];
    MPI_Send_init(v, 5, MPI_INT, peer, 30, MPI_COMM_WORLD, &p[0]);
    MPI_Recv_init(w[0], 16, MPI_INT, peer, 30, MPI_COMM_WORLD, &p[1]);
    for (int round = 0; round < 3; round++) {
        fill(w[0], 16);
        v[0] = 1000 * me + round;
        MPI_Startall(2, p);
        MPI_Waitall(2, p, st);
        show_status("persistent", 0, &st[1], MPI_INT);
        show_ints("persistent data", w[0], 6);
    }
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    MPI_Request q[2];
    MPI_Ssend_init(v, 2, MPI_INT, peer, 31, MPI_COMM_WORLD, &q[0]);
    MPI_Recv_init(w[1], 16, MPI_INT, peer, 31, MPI_COMM_WORLD, &q[1]);
    MPI_Start(&q[1]);
    MPI_Start(&q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Wait(&q[1], &st[0]);
    show_status("persistent ssend", 0, &st[0], MPI_INT);
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    MPI_Request b;
    MPI_Bsend_init(v, 3, MPI_INT, peer, 32, MPI_COMM_WORLD, &b);
    MPI_Start(&b);
    MPI_Recv(w[2], 16, MPI_INT, peer, 32, MPI_COMM_WORLD, &st[0]);
    MPI_Wait(&b, MPI_STATUS_IGNORE);
    MPI_Request_free(&b);
    show_status("persistent bsend", 0, &st[0], MPI_INT);

    /* 5: cancel a receive nobody sends to, and a matched one */
    MPI_Irecv(w[0], 16, MPI_INT, peer, 999, MPI_COMM_WORLD, &r[0]);
    MPI_Cancel(&r[0]);
    MPI_Wait(&r[0], &st[0]);
    int cancelled;
    MPI_Test_cancelled(&st[0], &cancelled);
    SAY("cancelled=%d", cancelled);

    /* 6: Request_free of an active send; the receiver completes it */
    MPI_Request f;
    MPI_Isend(v, 7, MPI_INT, peer, 40, MPI_COMM_WORLD, &f);
    MPI_Request_free(&f);
    SAY("freed null=%d", f == MPI_REQUEST_NULL);
    MPI_Recv(w[0], 16, MPI_INT, peer, 40, MPI_COMM_WORLD, &st[0]);
    show_status("after free", 0, &st[0], MPI_INT);

    /* 7: PROC_NULL requests and an empty Waitall */
    MPI_Isend(v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(w[0], 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, st);
    show_status("procnull irecv", 0, &st[1], MPI_INT);
    MPI_Waitall(0, r, st);

    MPI_Barrier(MPI_COMM_WORLD);
    void *d; int ds;
    MPI_Buffer_detach(&d, &ds);
    SAY("detached %d %d", d == bbuf, ds);
    free(bbuf);
    MPI_Finalize();
    return 0;
}
