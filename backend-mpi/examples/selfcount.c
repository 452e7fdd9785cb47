/* Instructions the interposer adds per small point-to-point message
 * (issue 10, overhead), for scripts/mpi-instructions: one rank exchanges
 * 8 bytes with itself on MPI_COMM_SELF, in one of these shapes:
 *
 *   irecv_send_wait      MPI_Irecv + MPI_Send + MPI_Wait
 *   isend_irecv_waitall  MPI_Irecv + MPI_Isend + MPI_Waitall of both
 *   sendrecv             MPI_Sendrecv
 *   sendrecv_replace     MPI_Sendrecv_replace
 *
 * Usage: selfcount SHAPE N. Runs N exchanges to warm up (regions
 * interned, caches filled), then N more inside measure(), the function
 * callgrind collects (--toggle-collect=measure): no peer to wait for, so
 * the count is deterministic and is what the wrappers add to MPICH's own
 * work. Exits non-zero when a payload arrives wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char in8[8], out8[8];

static void exchange(int shape) {
    MPI_Request r[2];
    switch (shape) {
    case 0:
        MPI_Irecv(in8, 8, MPI_BYTE, 0, 3, MPI_COMM_SELF, &r[0]);
        MPI_Send(out8, 8, MPI_BYTE, 0, 3, MPI_COMM_SELF);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        break;
    case 1:
        MPI_Irecv(in8, 8, MPI_BYTE, 0, 5, MPI_COMM_SELF, &r[0]);
        MPI_Isend(out8, 8, MPI_BYTE, 0, 5, MPI_COMM_SELF, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        break;
    case 2:
        MPI_Sendrecv(out8, 8, MPI_BYTE, 0, 4, in8, 8, MPI_BYTE, 0, 4, MPI_COMM_SELF,
                     MPI_STATUS_IGNORE);
        break;
    default:
        memcpy(in8, out8, 8);
        MPI_Sendrecv_replace(in8, 8, MPI_BYTE, 0, 6, 0, 6, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        break;
    }
}

/* What callgrind counts. */
__attribute__((noinline)) void measure(int shape, int n) {
    for (int i = 0; i < n; i++) exchange(shape);
}

int main(int argc, char **argv) {
    static const char *shapes[] = {"irecv_send_wait", "isend_irecv_waitall", "sendrecv",
                                   "sendrecv_replace"};
    MPI_Init(&argc, &argv);
    int shape = -1, n = argc > 2 ? atoi(argv[2]) : 1000;
    for (int s = 0; s < 4; s++)
        if (argc > 1 && strcmp(argv[1], shapes[s]) == 0) shape = s;
    if (shape < 0 || n <= 0) {
        fprintf(stderr, "usage: selfcount irecv_send_wait|isend_irecv_waitall|sendrecv|"
                        "sendrecv_replace N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < 8; i++) out8[i] = (char)(i + 1);
    for (int i = 0; i < n; i++) exchange(shape);
    memset(in8, 0, sizeof in8);
    measure(shape, n);
    if (memcmp(in8, out8, 8) != 0) {
        fprintf(stderr, "selfcount: wrong bytes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return 0;
}
