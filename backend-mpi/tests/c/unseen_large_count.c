/* The large-count point-to-point calls (MPI 4.0, `_c`, MPI_Count counts)
 * mixed with their `int` twins on the other side of each message: a
 * message sent with MPI_Send_c is received with MPI_Recv and the other way
 * round, nonblocking, persistent, buffered, synchronous, ready, matched
 * and exchanged. With an interposer that joins a record to every message,
 * both forms must carry it the same way, or the receiver sees the record
 * in its data (or misses it). Ranks 0 and 1 talk; others only finalize.
 * Statuses are shown with both MPI_Get_count and MPI_Get_count_c. */
#include "common.h"

static void show_c(const char *what, int rc, MPI_Status *st, MPI_Datatype type) {
    MPI_Count count = -7, elements = -7;
    MPI_Get_count_c(st, type, &count);
    MPI_Get_elements_c(st, type, &elements);
    show_status(what, rc, st, type);
    SAY("%s count_c=%lld elements_c=%lld", what, (long long)count, (long long)elements);
}

static void fill(int *v, int n, int base) {
    for (int i = 0; i < n; i++) v[i] = base + i;
}

static int sum(const int *v, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += v[i] * (i + 1);
    return s;
}

enum { SMALL = 10, BIG = 5000 }; /* BIG ints: more than 4 KiB */

int main(int argc, char **argv) {
    start(&argc, &argv);
    if (np < 2) { SAY("needs 2 ranks"); MPI_Finalize(); return 1; }
    int *a = calloc(BIG, sizeof *a), *b = calloc(BIG, sizeof *b);
    MPI_Status st;
    MPI_Request rq[2];
    int rc;
    MPI_Comm comm = MPI_COMM_WORLD;
    if (me == 0) {
        /* 1: Send_c -> Recv, small and large */
        fill(a, SMALL, 100);
        MPI_Send_c(a, SMALL, MPI_INT, 1, 1, comm);
        fill(a, BIG, 7);
        MPI_Send_c(a, BIG, MPI_INT, 1, 2, comm);
        /* 2: Send -> Recv_c */
        fill(a, SMALL, 200);
        MPI_Send(a, SMALL, MPI_INT, 1, 3, comm);
        fill(a, BIG, 9);
        MPI_Send(a, BIG, MPI_INT, 1, 4, comm);
        /* 3: Isend_c -> Irecv + Wait, Isend -> Irecv_c */
        fill(a, SMALL, 300);
        MPI_Isend_c(a, SMALL, MPI_INT, 1, 5, comm, &rq[0]);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        fill(a, BIG, 11);
        MPI_Isend(a, BIG, MPI_INT, 1, 6, comm, &rq[0]);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        /* 4: a vector type sent with Send_c, received as ints */
        MPI_Datatype vec;
        MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        fill(a, 24, 40);
        MPI_Send_c(a, 2, vec, 1, 7, comm);
        MPI_Type_free(&vec);
        /* 5: persistent Send_init_c against Recv_init, three starts */
        MPI_Send_init_c(a, SMALL, MPI_INT, 1, 8, comm, &rq[0]);
        for (int k = 0; k < 3; k++) {
            fill(a, SMALL, 1000 * (k + 1));
            MPI_Start(&rq[0]);
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&rq[0]);
        /* 6: Ssend_c, Rsend_c (receive posted first), Issend_c, Irsend_c */
        fill(a, SMALL, 500);
        MPI_Ssend_c(a, SMALL, MPI_INT, 1, 9, comm);
        MPI_Barrier(comm);
        MPI_Rsend_c(a, SMALL, MPI_INT, 1, 10, comm);
        MPI_Issend_c(a, BIG, MPI_INT, 1, 11, comm, &rq[0]);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        MPI_Barrier(comm);
        MPI_Irsend_c(a, SMALL, MPI_INT, 1, 12, comm, &rq[0]);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        /* 7: buffered, the buffer attached with Buffer_attach_c exactly */
        int size = 0;
        MPI_Pack_size(SMALL, MPI_INT, comm, &size);
        MPI_Count room = 2 * ((MPI_Count)size + MPI_BSEND_OVERHEAD);
        char *space = malloc((size_t)room);
        rc = MPI_Buffer_attach_c(space, room);
        SAY("attach_c rc=%d", error_class(rc));
        fill(a, SMALL, 600);
        rc = MPI_Bsend_c(a, SMALL, MPI_INT, 1, 13, comm);
        SAY("bsend_c rc=%d", error_class(rc));
        rc = MPI_Ibsend_c(a, SMALL, MPI_INT, 1, 14, comm, &rq[0]);
        SAY("ibsend_c rc=%d", error_class(rc));
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        void *back = NULL;
        MPI_Count back_size = -1;
        rc = MPI_Buffer_detach_c(&back, &back_size);
        SAY("detach_c rc=%d same=%d size=%lld", error_class(rc), back == space,
            (long long)back_size);
        free(space);
        /* 8: Sendrecv_c against Sendrecv, Sendrecv_replace_c */
        fill(a, SMALL, 700);
        rc = MPI_Sendrecv_c(a, SMALL, MPI_INT, 1, 15, b, BIG, MPI_INT, 1, 16, comm, &st);
        show_c("sendrecv_c", rc, &st, MPI_INT);
        SAY("sendrecv_c sum=%d", sum(b, SMALL));
        fill(a, BIG, 800);
        rc = MPI_Sendrecv_replace_c(a, BIG, MPI_INT, 1, 17, 1, 18, comm, &st);
        show_c("replace_c", rc, &st, MPI_INT);
        SAY("replace_c sum=%d", sum(a, BIG));
        /* 9: for Mrecv_c and Imrecv_c */
        fill(a, SMALL, 900);
        MPI_Send(a, SMALL, MPI_INT, 1, 19, comm);
        MPI_Send(a, BIG, MPI_INT, 1, 20, comm);
        /* 10: Send_init and Send to Recv_init_c */
        fill(a, SMALL, 1100);
        MPI_Send(a, SMALL, MPI_INT, 1, 21, comm);
        MPI_Send(a, BIG, MPI_INT, 1, 21, comm);
        /* 11: more elements than an int counts, of a type of size zero */
        MPI_Datatype none;
        MPI_Type_contiguous(0, MPI_INT, &none);
        MPI_Type_commit(&none);
        rc = MPI_Send_c(a, (MPI_Count)3 << 30, none, 1, 22, comm);
        SAY("zero-size huge send rc=%d", error_class(rc));
        MPI_Type_free(&none);
        /* 12: MPI_PROC_NULL both ways */
        rc = MPI_Send_c(a, SMALL, MPI_INT, MPI_PROC_NULL, 1, comm);
        SAY("proc_null send_c rc=%d", error_class(rc));
        rc = MPI_Recv_c(b, SMALL, MPI_INT, MPI_PROC_NULL, 1, comm, &st);
        show_c("proc_null recv_c", rc, &st, MPI_INT);
    } else if (me == 1) {
        rc = MPI_Recv(b, BIG, MPI_INT, 0, 1, comm, &st);
        show_c("send_c>recv", rc, &st, MPI_INT);
        SAY("send_c>recv sum=%d", sum(b, SMALL));
        rc = MPI_Recv(b, BIG, MPI_INT, 0, 2, comm, &st);
        show_c("send_c>recv big", rc, &st, MPI_INT);
        SAY("send_c>recv big sum=%d", sum(b, BIG));
        rc = MPI_Recv_c(b, BIG, MPI_INT, 0, 3, comm, &st);
        show_c("send>recv_c", rc, &st, MPI_INT);
        SAY("send>recv_c sum=%d", sum(b, SMALL));
        rc = MPI_Recv_c(b, BIG, MPI_INT, 0, 4, comm, MPI_STATUS_IGNORE);
        SAY("send>recv_c big ignore rc=%d sum=%d", error_class(rc), sum(b, BIG));
        MPI_Irecv(b, BIG, MPI_INT, 0, 5, comm, &rq[0]);
        rc = MPI_Wait(&rq[0], &st);
        show_c("isend_c>irecv", rc, &st, MPI_INT);
        SAY("isend_c>irecv sum=%d", sum(b, SMALL));
        MPI_Irecv_c(b, BIG, MPI_INT, 0, 6, comm, &rq[0]);
        rc = MPI_Wait(&rq[0], &st);
        show_c("isend>irecv_c", rc, &st, MPI_INT);
        SAY("isend>irecv_c sum=%d", sum(b, BIG));
        memset(b, 0, BIG * sizeof *b);
        rc = MPI_Recv(b, 16, MPI_INT, 0, 7, comm, &st);
        show_c("vector send_c", rc, &st, MPI_INT);
        show_ints("vector send_c", b, 16);
        MPI_Recv_init(b, SMALL, MPI_INT, 0, 8, comm, &rq[0]);
        for (int k = 0; k < 3; k++) {
            MPI_Start(&rq[0]);
            rc = MPI_Wait(&rq[0], &st);
            show_c("persistent", rc, &st, MPI_INT);
            SAY("persistent %d sum=%d", k, sum(b, SMALL));
        }
        MPI_Request_free(&rq[0]);
        rc = MPI_Recv(b, SMALL, MPI_INT, 0, 9, comm, &st);
        show_c("ssend_c", rc, &st, MPI_INT);
        MPI_Irecv(b, SMALL, MPI_INT, 0, 10, comm, &rq[0]);
        MPI_Barrier(comm);
        rc = MPI_Wait(&rq[0], &st);
        show_c("rsend_c", rc, &st, MPI_INT);
        SAY("rsend_c sum=%d", sum(b, SMALL));
        rc = MPI_Recv_c(b, BIG, MPI_INT, 0, 11, comm, &st);
        show_c("issend_c", rc, &st, MPI_INT);
        MPI_Irecv_c(b, SMALL, MPI_INT, 0, 12, comm, &rq[0]);
        MPI_Barrier(comm);
        rc = MPI_Wait(&rq[0], &st);
        show_c("irsend_c", rc, &st, MPI_INT);
        SAY("irsend_c sum=%d", sum(b, SMALL));
        rc = MPI_Recv(b, SMALL, MPI_INT, 0, 13, comm, &st);
        show_c("bsend_c", rc, &st, MPI_INT);
        SAY("bsend_c sum=%d", sum(b, SMALL));
        rc = MPI_Recv_c(b, SMALL, MPI_INT, 0, 14, comm, &st);
        show_c("ibsend_c", rc, &st, MPI_INT);
        fill(a, BIG, 77);
        rc = MPI_Sendrecv(a, BIG, MPI_INT, 0, 16, b, SMALL, MPI_INT, 0, 15, comm, &st);
        show_c("sendrecv", rc, &st, MPI_INT);
        SAY("sendrecv sum=%d", sum(b, SMALL));
        fill(a, BIG, 33);
        rc = MPI_Recv(b, BIG, MPI_INT, 0, 17, comm, &st);
        show_c("replace_c peer", rc, &st, MPI_INT);
        SAY("replace_c peer sum=%d", sum(b, BIG));
        MPI_Send(a, BIG, MPI_INT, 0, 18, comm);
        MPI_Message msg;
        rc = MPI_Mprobe(0, 19, comm, &msg, &st);
        show_c("mprobe", rc, &st, MPI_INT);
        rc = MPI_Mrecv_c(b, BIG, MPI_INT, &msg, &st);
        show_c("mrecv_c", rc, &st, MPI_INT);
        SAY("mrecv_c sum=%d", sum(b, SMALL));
        int flag = 0;
        do {
            rc = MPI_Improbe(0, 20, comm, &flag, &msg, &st);
        } while (!flag);
        MPI_Imrecv_c(b, BIG, MPI_INT, &msg, &rq[0]);
        rc = MPI_Wait(&rq[0], &st);
        show_c("imrecv_c", rc, &st, MPI_INT);
        SAY("imrecv_c sum=%d", sum(b, BIG));
        MPI_Recv_init_c(b, BIG, MPI_INT, 0, 21, comm, &rq[0]);
        for (int k = 0; k < 2; k++) {
            MPI_Start(&rq[0]);
            rc = MPI_Wait(&rq[0], &st);
            show_c("recv_init_c", rc, &st, MPI_INT);
            SAY("recv_init_c %d sum=%d", k, sum(b, k ? BIG : SMALL));
        }
        MPI_Request_free(&rq[0]);
        rc = MPI_Recv(b, SMALL, MPI_INT, 0, 22, comm, &st);
        show_c("zero-size huge", rc, &st, MPI_INT);
    } else {
        /* the two barriers of ranks 0 and 1 */
        MPI_Barrier(comm);
        MPI_Barrier(comm);
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
