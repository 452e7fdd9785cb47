/*
 * pcontrol_phase.c: MPI_Pcontrol as miniFE uses it (with
 * -DUSE_MPI_PCONTROL): level 0 right after MPI_Init, level 1 when the
 * solver starts, level 0 when it ends, then more communication before
 * MPI_Finalize. Under heisen the report holds the path collected during
 * the phase, frozen at the stop (DESIGN R9); heisen used to report no
 * critical path at all for a location stopped at the end. Only rank 0
 * prints; the output is the same without heisen.
 *
 *   mpicc -O1 pcontrol_phase.c -o pcontrol_phase && mpiexec -n 2 ./pcontrol_phase
 */
#include "coll_common.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(MPI_Pcontrol(0) == MPI_SUCCESS);

    long long s = ring_phase(1); /* set-up, not collected */
    result("set-up", s);

    CHECK(MPI_Pcontrol(1) == MPI_SUCCESS); /* the solver */
    s = 0;
    for (int i = 0; i < 20; i++) s += ring_phase(10 + i);
    CHECK(MPI_Pcontrol(0) == MPI_SUCCESS);
    result("solver", s);

    s = ring_phase(2); /* the summary, not collected */
    result("summary", s);
    return finish("pcontrol_phase");
}
