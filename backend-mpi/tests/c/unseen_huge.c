/* A message of more than 2 GiB (MPICH's pt2pt/large_message does the
 * same): 270,000,000 doubles, 2.16 GB, from rank 0 to rank 1. The status
 * must count the program's elements only: a count query in `int` bytes
 * says MPI_UNDEFINED above 2^31, so heisen counts the message with the
 * 64-bit calls when it takes its record out of the status. */
#include "common.h"

enum { N = 270000000 };

int main(int argc, char **argv) {
    start(&argc, &argv);
    if (np < 2) { SAY("needs 2 ranks"); MPI_Finalize(); return 1; }
    if (me < 2) {
        double *v = malloc((size_t)N * sizeof *v);
        if (!v) { SAY("no memory"); MPI_Abort(MPI_COMM_WORLD, 3); }
        if (me == 0) {
            for (size_t i = 0; i < N; i += 1000000) v[i] = (double)i;
            v[N - 1] = -1.0;
            MPI_Send(v, N, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
        } else {
            MPI_Status st;
            memset(v, 0, (size_t)N * sizeof *v);
            int rc = MPI_Recv(v, N, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, &st);
            show_status("huge", rc, &st, MPI_DOUBLE);
            MPI_Count bytes = -7;
            MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
            SAY("huge bytes=%lld", (long long)bytes);
            int ok = v[N - 1] == -1.0;
            for (size_t i = 0; i < N; i += 1000000) ok &= v[i] == (double)i;
            SAY("huge data %s", ok ? "whole" : "wrong");
        }
        free(v);
    }
    MPI_Finalize();
    return 0;
}
