/* Default region selection across ranks (R7; HEISEN_REGIONS unset): every
 * rank selects the first regions it interns.
 *   selection same:  rank 0 sends after some work, rank 1 receives; the
 *                    ranks intern the same names in the same order as far
 *                    as both go (the node's calibration runs on one rank
 *                    only, and must not change that).
 *   selection order: rank 0 receives first, rank 1 sends first, so slot 3
 *                    holds MPI_Recv on one rank and MPI_Barrier on the
 *                    other: the run report must not name the shares. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static volatile double sink;

static void work(int n) {
    double x = 1.0;
    for (int i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
    sink = x;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, v = 7;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int order = argc > 1 && strcmp(argv[1], "order") == 0;
    if (order) {
        if (rank == 0) {
            MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            work(2000000);
            MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            work(2000000);
            MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    printf("rank %d v %d\n", rank, v);
    MPI_Finalize();
    return 0;
}
