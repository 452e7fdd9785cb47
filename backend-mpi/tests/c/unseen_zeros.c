/* Unseen-suite style (MPICH's datatype/hindexed_zeros): a derived type of
 * size 0 (an hindexed type whose blocks are all empty) with a null
 * buffer, which the standard allows: MPI_Irecv + MPI_Send to oneself on
 * MPI_COMM_SELF, then blocking and nonblocking between ranks 0 and 1.
 * heisen's struct type {record, data} had a true lower bound of 0 there,
 * and MPICH refused it as a null buffer. 2 ranks or more. */
#include "common.h"

int main(int argc, char **argv) {
    start(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int blks[3] = {0, 0, 0};
    MPI_Aint disps[3] = {0, 4, 16};
    MPI_Datatype empty;
    MPI_Type_create_hindexed(3, blks, disps, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    MPI_Request r;
    MPI_Status st;
    int rc = MPI_Irecv(NULL, 2, empty, 0, 0, MPI_COMM_SELF, &r);
    SAY("self irecv rc=%d", error_class(rc));
    rc = MPI_Send(NULL, 1, empty, 0, 0, MPI_COMM_SELF);
    SAY("self send rc=%d", error_class(rc));
    rc = MPI_Wait(&r, &st);
    show_status("self wait", rc, &st, empty);
    if (me < 2) {
        int peer = 1 - me;
        if (me == 0) {
            rc = MPI_Send(NULL, 3, empty, peer, 5, MPI_COMM_WORLD);
            SAY("send rc=%d", error_class(rc));
            rc = MPI_Isend(NULL, 1, empty, peer, 6, MPI_COMM_WORLD, &r);
            SAY("isend rc=%d", error_class(rc));
            rc = MPI_Wait(&r, &st);
            SAY("isend wait rc=%d", error_class(rc));
        } else {
            rc = MPI_Recv(NULL, 1, empty, peer, 5, MPI_COMM_WORLD, &st);
            show_status("recv", rc, &st, empty);
            rc = MPI_Irecv(NULL, 4, empty, peer, 6, MPI_COMM_WORLD, &r);
            SAY("irecv rc=%d", error_class(rc));
            rc = MPI_Wait(&r, &st);
            show_status("irecv wait", rc, &st, empty);
        }
    }
    MPI_Type_free(&empty);
    MPI_Finalize();
    return 0;
}
