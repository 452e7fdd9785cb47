/* MPICH's part/nonblocking_pready, and more, written here from scratch:
 * a message of no data may name any datatype, MPI_DATATYPE_NULL included
 * (rank 0 sends `NULL, 0, MPI_DATATYPE_NULL` as a signal beside a
 * partitioned send). heisen asked the MPI about that type to choose how
 * to piggyback, and the query aborted the program ("Invalid datatype").
 * Every point-to-point shape sends and receives such an empty message,
 * then a real one on the same pair; the statuses must be the plain ones. */
#include "common.h"

int main(int argc, char **argv) {
    start(&argc, &argv);
    int peer = 1 - me, tag = 5, v = 0, a = 0;
    MPI_Status st;
    MPI_Request q, qs[2];
    if (me < 2) {
        /* blocking, each send mode the receiver cannot miss */
        if (me == 0) {
            MPI_Send(NULL, 0, MPI_DATATYPE_NULL, peer, tag, MPI_COMM_WORLD);
            MPI_Ssend(NULL, 0, MPI_DATATYPE_NULL, peer, tag + 1, MPI_COMM_WORLD);
            MPI_Send_c(NULL, 0, MPI_DATATYPE_NULL, peer, tag + 2, MPI_COMM_WORLD);
        } else {
            int rc = MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, peer, tag, MPI_COMM_WORLD, &st);
            show_status("recv", rc, &st, MPI_INT);
            rc = MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            show_status("recv any", rc, &st, MPI_INT);
            MPI_Probe(peer, tag + 2, MPI_COMM_WORLD, &st);
            show_status("probe", MPI_SUCCESS, &st, MPI_INT);
            rc = MPI_Recv_c(NULL, 0, MPI_DATATYPE_NULL, peer, tag + 2, MPI_COMM_WORLD, &st);
            show_status("recv_c", rc, &st, MPI_INT);
        }
        /* nonblocking both ways at once */
        MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, peer, tag + 3, MPI_COMM_WORLD, &qs[0]);
        MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, peer, tag + 3, MPI_COMM_WORLD, &qs[1]);
        MPI_Status sts[2];
        int rc = MPI_Waitall(2, qs, sts);
        show_status("irecv", rc, &sts[0], MPI_INT);
        /* exchange */
        rc = MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, peer, tag + 4, NULL, 0, MPI_DATATYPE_NULL,
                          peer, tag + 4, MPI_COMM_WORLD, &st);
        show_status("sendrecv", rc, &st, MPI_INT);
        rc = MPI_Sendrecv_replace(NULL, 0, MPI_DATATYPE_NULL, peer, tag + 6, peer, tag + 6,
                                  MPI_COMM_WORLD, &st);
        show_status("replace", rc, &st, MPI_INT);
        MPI_Isendrecv(NULL, 0, MPI_DATATYPE_NULL, peer, tag + 7, NULL, 0, MPI_DATATYPE_NULL, peer,
                      tag + 7, MPI_COMM_WORLD, &q);
        /* MPICH 4.0.2's own MPI_Isendrecv leaves the status alone: rc only */
        rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        SAY("isendrecv rc=%d", error_class(rc));
        MPI_Isendrecv_replace(NULL, 0, MPI_DATATYPE_NULL, peer, tag + 8, peer, tag + 8,
                              MPI_COMM_WORLD, &q);
        rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        SAY("isendrecv_replace rc=%d", error_class(rc));
        /* persistent */
        if (me == 0) {
            MPI_Send_init(NULL, 0, MPI_DATATYPE_NULL, peer, tag + 5, MPI_COMM_WORLD, &q);
        } else {
            MPI_Recv_init(NULL, 0, MPI_DATATYPE_NULL, peer, tag + 5, MPI_COMM_WORLD, &q);
        }
        for (int i = 0; i < 2; i++) {
            MPI_Start(&q);
            rc = MPI_Wait(&q, &st);
            if (me == 1) show_status("persistent", rc, &st, MPI_INT);
        }
        MPI_Request_free(&q);
        /* the partitioned send of part/nonblocking_pready, with the signal */
        if (me == 0) {
            a = 42;
            MPI_Psend_init(&a, 1, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
            MPI_Start(&q);
            MPI_Pready(0, q);
            MPI_Send(NULL, 0, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            MPI_Precv_init(&a, 1, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
            MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Start(&q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            SAY("partitioned got %d", a);
        }
        MPI_Request_free(&q);
        /* and data again on the same pair */
        if (me == 0) {
            v = 7;
            MPI_Send(&v, 1, MPI_INT, peer, tag, MPI_COMM_WORLD);
        } else {
            rc = MPI_Recv(&v, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &st);
            show_status("after", rc, &st, MPI_INT);
            SAY("after got %d", v);
        }
    }
    MPI_Finalize();
    return 0;
}
