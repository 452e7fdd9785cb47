/* Unseen-suite style error handling: MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD, then calls that must fail with the same error class as
 * without heisen (invalid rank, invalid tag, invalid count, truncation in
 * blocking and nonblocking receives, a null communicator), and the program
 * carries on afterwards. 2 ranks or more. */
#include "common.h"

int main(int argc, char **argv) {
    start(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Status st;
    int v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[8];
    int rc = MPI_Send(v, 1, MPI_INT, np + 5, 0, MPI_COMM_WORLD);
    SAY("send bad rank class=%d", error_class(rc));
    rc = MPI_Send(v, 1, MPI_INT, 0, -3, MPI_COMM_WORLD);
    SAY("send bad tag class=%d", error_class(rc));
    rc = MPI_Send(v, -1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    SAY("send bad count class=%d", error_class(rc));
    rc = MPI_Recv(w, 1, MPI_INT, np + 5, 0, MPI_COMM_WORLD, &st);
    SAY("recv bad rank class=%d", error_class(rc));
    MPI_Request q = MPI_REQUEST_NULL;
    rc = MPI_Isend(v, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &q);
    SAY("isend bad rank class=%d null=%d", error_class(rc), q == MPI_REQUEST_NULL);
    rc = MPI_Irecv(w, 1, MPI_INT, 0, -9, MPI_COMM_WORLD, &q);
    SAY("irecv bad tag class=%d", error_class(rc));
    rc = MPI_Send(v, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    SAY("send null comm class=%d", error_class(rc));
    rc = MPI_Probe(np + 1, 0, MPI_COMM_WORLD, &st);
    SAY("probe bad rank class=%d", error_class(rc));
    int flag;
    rc = MPI_Iprobe(0, -2, MPI_COMM_WORLD, &flag, &st);
    SAY("iprobe bad tag class=%d", error_class(rc));

    if (me < 2) {
        int peer = 1 - me;
        /* truncation, blocking: 6 ints into room for 3 */
        if (me == 0) {
            MPI_Send(v, 6, MPI_INT, 1, 5, MPI_COMM_WORLD);
            MPI_Send(v, 6, MPI_INT, 1, 6, MPI_COMM_WORLD);
            MPI_Send(v, 2, MPI_INT, 1, 7, MPI_COMM_WORLD);
            MPI_Send(v, 8, MPI_INT, 1, 8, MPI_COMM_WORLD);
        } else {
            /* MPI_ERROR is set only by multiple-completion calls (MPI 4.0
             * §3.2.5): a single receive's error is its return code */
            rc = MPI_Recv(w, 3, MPI_INT, 0, 5, MPI_COMM_WORLD, &st);
            SAY("trunc class=%d source=%d tag=%d", error_class(rc), st.MPI_SOURCE, st.MPI_TAG);
            MPI_Request r[2];
            MPI_Irecv(w, 3, MPI_INT, 0, 6, MPI_COMM_WORLD, &r[0]);
            MPI_Irecv(w + 4, 2, MPI_INT, 0, 7, MPI_COMM_WORLD, &r[1]);
            MPI_Status sts[2];
            rc = MPI_Waitall(2, r, sts);
            int e1 = error_class(sts[1].MPI_ERROR);
            SAY("trunc waitall class=%d e0=%d e1=%s", error_class(rc), error_class(sts[0].MPI_ERROR),
                e1 == MPI_ERR_PENDING ? "pending" : e1 == MPI_SUCCESS ? "success" : "other");
            /* a request left pending by MPI_ERR_PENDING is still active */
            if (e1 == MPI_ERR_PENDING) rc = MPI_Wait(&r[1], &sts[1]);
            else rc = MPI_SUCCESS;
            MPI_Get_count(&sts[1], MPI_INT, &flag);
            SAY("trunc waitall second rc=%d count=%d data=%d %d source=%d tag=%d", error_class(rc), flag,
                w[4], w[5], sts[1].MPI_SOURCE, sts[1].MPI_TAG);
            MPI_Request r1;
            MPI_Irecv(w, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, &r1);
            rc = MPI_Wait(&r1, &st);
            SAY("trunc wait class=%d null=%d", error_class(rc), r1 == MPI_REQUEST_NULL);
        }
        /* still works afterwards */
        rc = MPI_Sendrecv(v, 2, MPI_INT, peer, 9, w, 2, MPI_INT, peer, 9, MPI_COMM_WORLD, &st);
        show_status("after errors", rc, &st, MPI_INT);
    }
    MPI_Finalize();
    return 0;
}
