/* Unseen-suite style (MPICH's ft tests, and comm/dup run with
 * MPIR_CVAR_ENABLE_FT=1): with fault tolerance on, MPICH 4.0.2 aborts in
 * MPI_Test or MPI_Wait of any request not yet complete, so a program of
 * blocking calls only is what works there. heisen's MPI_Init polled a
 * nonblocking MPI_Comm_idup and every rank aborted in it ("Assertion
 * failed in ... ch4_request.h"). Blocking point-to-point (small, large,
 * any source, probe), Sendrecv, collectives and communicator creation,
 * each checked; the test runs it with the variable set, both ways.
 * alarm() turns a hang into a failed run. 3 ranks. */
#include <unistd.h>

#include "common.h"

enum { BIG = 1 << 17 };
static int big[BIG];

int main(int argc, char **argv) {
    alarm(120);
    start(&argc, &argv);
    int next = (me + 1) % np, prev = (me + np - 1) % np;

    /* a ring of small messages, then of large ones (rendezvous) */
    int token = me * 10, got = -1;
    MPI_Status st;
    MPI_Sendrecv(&token, 1, MPI_INT, next, 1, &got, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, &st);
    show_status("sendrecv", MPI_SUCCESS, &st, MPI_INT);
    SAY("sendrecv got %d", got);
    if (me == 0) {
        for (int i = 0; i < BIG; i++) big[i] = i;
        MPI_Send(big, BIG, MPI_INT, 1, 2, MPI_COMM_WORLD);
    } else if (me == 1) {
        int rc = MPI_Recv(big, BIG, MPI_INT, 0, 2, MPI_COMM_WORLD, &st);
        show_status("large recv", rc, &st, MPI_INT);
        SAY("large last %d", big[BIG - 1]);
    }
    /* workers report to rank 0 in any order, probed first */
    if (me == 0) {
        int sum = 0;
        for (int i = 1; i < np; i++) {
            int count = -1, v = -1;
            MPI_Probe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            sum += v;
        }
        SAY("any source sum %d", sum);
    } else {
        int v = me * me;
        MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
    }

    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &half);
    int word = me == 0 ? 42 : -1, total = -1, hsum = -1;
    MPI_Bcast(&word, 1, MPI_INT, 0, dup);
    MPI_Allreduce(&me, &total, 1, MPI_INT, MPI_SUM, dup);
    MPI_Allreduce(&me, &hsum, 1, MPI_INT, MPI_SUM, half);
    int all[16] = {0};
    MPI_Gather(&me, 1, MPI_INT, all, 1, MPI_INT, np - 1, dup);
    if (me == np - 1) show_ints("gathered", all, np);
    MPI_Barrier(dup);
    SAY("bcast %d allreduce %d half %d", word, total, hsum);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
