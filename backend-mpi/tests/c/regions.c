/* The C region API and MPI in one program (one runtime per process):
 * rank 0 runs many tiny instrumented regions, then sends to rank 1, which
 * waited for it all along. With the interposer, rank 1's delay must come
 * from rank 0's (R4/R5: the receive merges the sender's record). Built
 * against libheisen.so; the output is the same with and without the
 * interposer. */
#include "common.h"
#include <heisen.h>

#define REGIONS 200000

int main(int argc, char **argv) {
    start(&argc, &argv);
    uint32_t work;
    if (heisen_region_register("work", &work) != HEISEN_RESULT_OK) MPI_Abort(MPI_COMM_WORLD, 3);
    int x = 0;
    /* both ranks start the timed part together: rank 1 then waits for
     * the whole of rank 0's regions */
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        volatile int acc = 0;
        for (int i = 0; i < REGIONS; i++) {
            heisen_region_enter(work);
            acc += i & 7;
            heisen_region_exit(work);
        }
        x = acc;
        MPI_Send(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
    } else if (me == 1) {
        MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    SAY("x %d", x);
    MPI_Finalize();
    return 0;
}
