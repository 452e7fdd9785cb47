/* MPI_Abort with a specific code after some traffic: mpiexec's exit code
 * must be the same with heisen (the interposer must not swallow or change
 * it, nor print anything of its own). */
#include "common.h"

int main(int argc, char **argv) {
    start(&argc, &argv);
    int x = me, y = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, (me + 1) % np, 0, &y, 1, MPI_INT, (me + np - 1) % np, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    SAY("got %d", y);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == np - 1) MPI_Abort(MPI_COMM_WORLD, 42);
    /* the others wait in a receive that only the abort ends */
    MPI_Recv(&y, 1, MPI_INT, np - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
