/* MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.0 §3.10) on rank 0,
 * against plain MPI_Recv/MPI_Send (or another Isendrecv) on rank 1, with
 * every way of completing the one request they return: Wait, Test,
 * Waitany, Testall, Waitsome, Request_get_status, Request_free, and
 * MPI_STATUS_IGNORE. The status is the receive's (source, tag, count).
 * Section "plain" holds what MPICH 4.0.2's own Isendrecv does right, so
 * it runs with and without an interposer; section "edges" (a derived type
 * with _replace, MPI_PROC_NULL peers) is checked against the values the
 * standard gives, since MPICH 4.0.2 itself fails there. */
#include "common.h"

enum { SMALL = 10, BIG = 5000 };

static void fill(int *v, int n, int base) {
    for (int i = 0; i < n; i++) v[i] = base + i;
}

static int sum(const int *v, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += v[i] * (i + 1);
    return s;
}

static void plain_section(MPI_Comm comm) {
    int *a = calloc(BIG, sizeof *a), *b = calloc(BIG, sizeof *b), *c = calloc(BIG, sizeof *c);
    MPI_Status st, sts[3];
    MPI_Request rq[3];
    int rc, flag;
    if (me == 0) {
        /* Wait: a small send out, a large receive in */
        fill(a, SMALL, 100);
        rc = MPI_Isendrecv(a, SMALL, MPI_INT, 1, 1, b, BIG, MPI_INT, 1, 2, comm, &rq[0]);
        SAY("isendrecv post rc=%d", error_class(rc));
        rc = MPI_Wait(&rq[0], &st);
        show_status("wait", rc, &st, MPI_INT);
        SAY("wait sum=%d null=%d", sum(b, BIG), rq[0] == MPI_REQUEST_NULL);
        /* Test until done: a large send out, a small one in */
        fill(a, BIG, 3);
        MPI_Isendrecv(a, BIG, MPI_INT, 1, 3, b, BIG, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm,
                      &rq[0]);
        do {
            rc = MPI_Test(&rq[0], &flag, &st);
        } while (!flag);
        show_status("test", rc, &st, MPI_INT);
        SAY("test sum=%d", sum(b, SMALL));
        /* _replace, contiguous, status ignored */
        fill(a, BIG, 50);
        MPI_Isendrecv_replace(a, BIG, MPI_INT, 1, 5, 1, 6, comm, &rq[0]);
        rc = MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        SAY("replace ignore rc=%d sum=%d", error_class(rc), sum(a, BIG));
        /* Waitany over an Irecv and an Isendrecv, until both are done */
        MPI_Irecv(c, BIG, MPI_INT, 1, 7, comm, &rq[0]);
        fill(a, SMALL, 70);
        MPI_Isendrecv(a, SMALL, MPI_INT, 1, 8, b, BIG, MPI_INT, 1, 9, comm, &rq[1]);
        MPI_Status got[2];
        for (int k = 0; k < 2; k++) {
            int index = -1;
            rc = MPI_Waitany(2, rq, &index, &st);
            if (index >= 0 && index < 2) got[index] = st;
        }
        show_status("waitany irecv", 0, &got[0], MPI_INT);
        show_status("waitany isendrecv", 0, &got[1], MPI_INT);
        SAY("waitany sums=%d %d", sum(c, SMALL), sum(b, BIG));
        /* Testall over an Isendrecv and an Isend */
        fill(a, SMALL, 90);
        fill(c, SMALL, 95);
        MPI_Isendrecv(a, SMALL, MPI_INT, 1, 10, b, BIG, MPI_INT, 1, 11, comm, &rq[0]);
        MPI_Isend(c, SMALL, MPI_INT, 1, 12, comm, &rq[1]);
        do {
            rc = MPI_Testall(2, rq, &flag, sts);
        } while (!flag);
        show_status("testall", rc, &sts[0], MPI_INT);
        SAY("testall sum=%d", sum(b, SMALL));
        /* Waitsome over two Isendrecvs */
        fill(a, SMALL, 110);
        fill(c, SMALL, 120);
        int *d = calloc(BIG, sizeof *d);
        MPI_Isendrecv(a, SMALL, MPI_INT, 1, 13, b, BIG, MPI_INT, 1, 14, comm, &rq[0]);
        MPI_Isendrecv(c, SMALL, MPI_INT, 1, 15, d, BIG, MPI_INT, 1, 16, comm, &rq[1]);
        int left = 2;
        while (left > 0) {
            int n = 0, idx[2];
            MPI_Waitsome(2, rq, &n, idx, sts);
            for (int k = 0; k < n; k++) got[idx[k]] = sts[k];
            left -= n;
        }
        show_status("waitsome 0", 0, &got[0], MPI_INT);
        show_status("waitsome 1", 0, &got[1], MPI_INT);
        SAY("waitsome sums=%d %d", sum(b, SMALL), sum(d, SMALL));
        free(d);
        /* Request_get_status until done, then Wait */
        fill(a, SMALL, 130);
        MPI_Isendrecv(a, SMALL, MPI_INT, 1, 17, b, BIG, MPI_INT, 1, 18, comm, &rq[0]);
        do {
            rc = MPI_Request_get_status(rq[0], &flag, &st);
        } while (!flag);
        show_status("get_status", rc, &st, MPI_INT);
        rc = MPI_Wait(&rq[0], &st);
        show_status("get_status wait", rc, &st, MPI_INT);
        SAY("get_status sum=%d", sum(b, SMALL));
        /* the large-count form */
        fill(a, SMALL, 140);
        MPI_Isendrecv_c(a, SMALL, MPI_INT, 1, 19, b, BIG, MPI_INT, 1, 20, comm, &rq[0]);
        rc = MPI_Wait(&rq[0], &st);
        show_status("isendrecv_c", rc, &st, MPI_INT);
        SAY("isendrecv_c sum=%d", sum(b, SMALL));
        /* both sides Isendrecv, Waitall */
        fill(a, SMALL, 150);
        MPI_Isendrecv(a, SMALL, MPI_INT, 1, 21, b, BIG, MPI_INT, 1, 22, comm, &rq[0]);
        rc = MPI_Waitall(1, rq, sts);
        show_status("symmetric", rc, &sts[0], MPI_INT);
        SAY("symmetric sum=%d", sum(b, SMALL));
        /* freed while active: the peer still gets the data and sends back */
        fill(a, SMALL, 160);
        MPI_Isendrecv(a, SMALL, MPI_INT, 1, 23, c, BIG, MPI_INT, 1, 24, comm, &rq[0]);
        rc = MPI_Request_free(&rq[0]);
        SAY("free rc=%d null=%d", error_class(rc), rq[0] == MPI_REQUEST_NULL);
        MPI_Recv(b, BIG, MPI_INT, 1, 25, comm, &st);
        show_status("after free", 0, &st, MPI_INT);
    } else if (me == 1) {
        rc = MPI_Recv(b, BIG, MPI_INT, 0, 1, comm, &st);
        show_status("peer 1", rc, &st, MPI_INT);
        SAY("peer 1 sum=%d", sum(b, SMALL));
        fill(a, BIG, 7);
        MPI_Send(a, BIG, MPI_INT, 0, 2, comm);
        fill(a, SMALL, 11);
        MPI_Send(a, SMALL, MPI_INT, 0, 4, comm);
        rc = MPI_Recv(b, BIG, MPI_INT, 0, 3, comm, &st);
        show_status("peer 3", rc, &st, MPI_INT);
        SAY("peer 3 sum=%d", sum(b, BIG));
        fill(a, BIG, 60);
        MPI_Sendrecv(a, BIG, MPI_INT, 0, 6, b, BIG, MPI_INT, 0, 5, comm, &st);
        show_status("peer 5", 0, &st, MPI_INT);
        SAY("peer 5 sum=%d", sum(b, BIG));
        fill(a, SMALL, 80);
        rc = MPI_Recv(b, BIG, MPI_INT, 0, 8, comm, &st);
        show_status("peer 8", rc, &st, MPI_INT);
        MPI_Send(a, BIG, MPI_INT, 0, 9, comm);
        MPI_Send(a, SMALL, MPI_INT, 0, 7, comm);
        rc = MPI_Recv(b, BIG, MPI_INT, 0, 12, comm, &st);
        show_status("peer 12", rc, &st, MPI_INT);
        rc = MPI_Recv(c, BIG, MPI_INT, 0, 10, comm, &st);
        show_status("peer 10", rc, &st, MPI_INT);
        SAY("peer 10-12 sums=%d %d", sum(c, SMALL), sum(b, SMALL));
        fill(a, SMALL, 85);
        MPI_Send(a, SMALL, MPI_INT, 0, 11, comm);
        fill(a, SMALL, 200);
        MPI_Send(a, SMALL, MPI_INT, 0, 16, comm);
        MPI_Recv(b, BIG, MPI_INT, 0, 15, comm, &st);
        MPI_Recv(c, BIG, MPI_INT, 0, 13, comm, &st);
        SAY("peer 13-15 sums=%d %d", sum(c, SMALL), sum(b, SMALL));
        fill(a, SMALL, 210);
        MPI_Send(a, SMALL, MPI_INT, 0, 14, comm);
        MPI_Recv(b, BIG, MPI_INT, 0, 17, comm, &st);
        MPI_Send(a, SMALL, MPI_INT, 0, 18, comm);
        MPI_Recv_c(b, BIG, MPI_INT, 0, 19, comm, &st);
        show_status("peer 19", 0, &st, MPI_INT);
        MPI_Send_c(a, SMALL, MPI_INT, 0, 20, comm);
        fill(a, SMALL, 220);
        MPI_Isendrecv(a, SMALL, MPI_INT, 0, 22, b, BIG, MPI_INT, 0, 21, comm, &rq[0]);
        rc = MPI_Wait(&rq[0], &st);
        show_status("peer symmetric", rc, &st, MPI_INT);
        SAY("peer symmetric sum=%d", sum(b, SMALL));
        rc = MPI_Recv(b, BIG, MPI_INT, 0, 23, comm, &st);
        show_status("peer 23", rc, &st, MPI_INT);
        SAY("peer 23 sum=%d", sum(b, SMALL));
        MPI_Send(a, SMALL, MPI_INT, 0, 24, comm);
        MPI_Send(a, 3, MPI_INT, 0, 25, comm);
    }
    MPI_Barrier(comm);
    free(a);
    free(b);
    free(c);
}

static void edges_section(MPI_Comm comm) {
    int a[24], b[24];
    MPI_Status st;
    MPI_Request rq;
    int rc;
    MPI_Datatype vec;
    MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    if (me == 0) {
        /* _replace with a vector type (two of them: 16 ints of 24) */
        fill(a, 24, 300);
        rc = MPI_Isendrecv_replace(a, 2, vec, 1, 31, 1, 32, comm, &rq);
        SAY("vector replace post rc=%d", error_class(rc));
        rc = MPI_Wait(&rq, &st);
        show_status("vector replace", rc, &st, vec);
        show_status("vector replace ints", rc, &st, MPI_INT);
        show_ints("vector replace", a, 24);
        /* _replace with a vector type from MPI_BOTTOM */
        MPI_Aint at;
        MPI_Get_address(a, &at);
        MPI_Datatype placed;
        MPI_Type_create_hindexed_block(1, 1, &at, vec, &placed);
        MPI_Type_commit(&placed);
        fill(a, 24, 400);
        MPI_Isendrecv_replace(MPI_BOTTOM, 1, placed, 1, 33, 1, 34, comm, &rq);
        rc = MPI_Wait(&rq, &st);
        show_status("bottom replace", rc, &st, MPI_INT);
        show_ints("bottom replace", a, 24);
        MPI_Type_free(&placed);
        /* MPI_PROC_NULL on either side and both */
        fill(a, 24, 500);
        rc = MPI_Isendrecv(a, 4, MPI_INT, MPI_PROC_NULL, 1, b, 4, MPI_INT, MPI_PROC_NULL, 2,
                           comm, &rq);
        SAY("proc_null post rc=%d", error_class(rc));
        rc = MPI_Wait(&rq, &st);
        show_status("proc_null both", rc, &st, MPI_INT);
        rc = MPI_Isendrecv(a, 4, MPI_INT, 1, 35, b, 4, MPI_INT, MPI_PROC_NULL, 2, comm, &rq);
        rc = MPI_Wait(&rq, &st);
        show_status("proc_null source", rc, &st, MPI_INT);
        rc = MPI_Isendrecv(a, 4, MPI_INT, MPI_PROC_NULL, 1, b, 4, MPI_INT, 1, 36, comm, &rq);
        rc = MPI_Wait(&rq, &st);
        show_status("proc_null dest", rc, &st, MPI_INT);
        show_ints("proc_null dest", b, 4);
        rc = MPI_Isendrecv_replace(a, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 2, comm, &rq);
        rc = MPI_Wait(&rq, &st);
        show_status("proc_null replace", rc, &st, MPI_INT);
        show_ints("proc_null replace", a, 4);
        /* cancelled: the send was received, the receive is never matched */
        MPI_Isendrecv(a, 4, MPI_INT, 1, 37, b, 4, MPI_INT, 1, 38, comm, &rq);
        MPI_Barrier(comm);
        rc = MPI_Cancel(&rq);
        SAY("cancel rc=%d", error_class(rc));
        rc = MPI_Wait(&rq, &st);
        int cancelled = -1;
        MPI_Test_cancelled(&st, &cancelled);
        SAY("cancel wait rc=%d cancelled=%d null=%d", error_class(rc), cancelled,
            rq == MPI_REQUEST_NULL);
    } else if (me == 1) {
        rc = MPI_Recv(b, 24, MPI_INT, 0, 31, comm, &st);
        show_status("peer 31", rc, &st, MPI_INT);
        show_ints("peer 31", b, 16);
        fill(a, 16, 900);
        MPI_Send(a, 16, MPI_INT, 0, 32, comm);
        rc = MPI_Recv(b, 24, MPI_INT, 0, 33, comm, &st);
        show_status("peer 33", rc, &st, MPI_INT);
        show_ints("peer 33", b, 8);
        fill(a, 24, 950);
        MPI_Send(a, 1, vec, 0, 34, comm);
        rc = MPI_Recv(b, 24, MPI_INT, 0, 35, comm, &st);
        show_status("peer 35", rc, &st, MPI_INT);
        fill(a, 4, 970);
        MPI_Send(a, 4, MPI_INT, 0, 36, comm);
        rc = MPI_Recv(b, 24, MPI_INT, 0, 37, comm, &st);
        show_status("peer 37", rc, &st, MPI_INT);
        MPI_Barrier(comm);
    }
    MPI_Type_free(&vec);
    MPI_Barrier(comm);
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    if (np != 2) { SAY("needs 2 ranks"); MPI_Finalize(); return 1; }
    const char *which = argc > 1 ? argv[1] : "plain";
    if (!strcmp(which, "plain")) plain_section(MPI_COMM_WORLD);
    else edges_section(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
