/*
 * pcontrol.c: MPI_Pcontrol in the places a program may call it — before
 * any communication, around a phase, nested levels, a level heisen does
 * not know (it must be accepted and ignored), on some ranks only —
 * with messages and collectives in every phase, checked locally. Under
 * heisen, level 0 stops critical-path collection and level 1 starts it
 * (DESIGN R9); without heisen MPI_Pcontrol does nothing. Either way the
 * results and the output are the same. Only rank 0 prints.
 *
 *   mpicc -O1 pcontrol.c -o pcontrol && mpiexec -n 3 ./pcontrol
 *
 * MPI 4.0 standard §15.2.4 (MPI_Pcontrol).
 */
#include "coll_common.h"

int main(int argc, char **argv) {
    /* MPICH refuses MPI_Pcontrol before MPI_Init, so the first stop comes
     * right after it, before any communication */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Pcontrol(0) == MPI_SUCCESS);

    long long s = ring_phase(1);
    result("stopped from the start", s);

    CHECK(MPI_Pcontrol(1) == MPI_SUCCESS);
    s = ring_phase(2);
    result("started", s);

    CHECK(MPI_Pcontrol(0) == MPI_SUCCESS);
    s = ring_phase(3);
    CHECK(MPI_Pcontrol(0) == MPI_SUCCESS); /* stopping twice is fine */
    result("stopped again", s);

    /* only rank 0 starts: the others start when they merge its data (R9) */
    if (rank == 0) CHECK(MPI_Pcontrol(1) == MPI_SUCCESS);
    s = ring_phase(4);
    result("started on rank 0 only", s);

    /* levels the interposer does not define, and extra arguments */
    CHECK(MPI_Pcontrol(2) == MPI_SUCCESS);
    CHECK(MPI_Pcontrol(-1) == MPI_SUCCESS);
    CHECK(MPI_Pcontrol(7, "ignored", 3) == MPI_SUCCESS);
    CHECK(MPI_Pcontrol(1) == MPI_SUCCESS);
    s = ring_phase(5);
    result("other levels", s);

    return finish("pcontrol");
}
