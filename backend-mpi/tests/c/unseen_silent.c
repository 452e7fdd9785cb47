/* A program that prints nothing at all (the MPICH test harness fails a
 * test on any unexpected output): a ring, a wildcard and a collective.
 * With heisen there must be no output either, on stdout or stderr. */
#include <mpi.h>

int main(int argc, char **argv) {
    int me, np, x, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    x = me;
    MPI_Sendrecv(&x, 1, MPI_INT, (me + 1) % np, 0, &y, 1, MPI_INT, MPI_ANY_SOURCE, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return y == np * (np - 1) / 2 ? 0 : 1;
}
