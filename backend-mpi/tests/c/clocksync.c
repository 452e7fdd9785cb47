/* One clock across a node's ranks (R5): every message carries the time
 * heisen's clock read just before it was sent, and the receiver compares
 * it with its own clock read just after the receive. With one conversion
 * of the TSC shared by every process of the node, no message can arrive
 * before it left: the receive time minus the send time is never negative.
 * The runtime is started before MPI_Init (heisen_now), so the clock it
 * reads then is switched at MPI_Init: it must not go back.
 * Prints, per rank, how many of ROUNDS messages it received arrived
 * "before" they were sent, the least such difference, and whether the
 * clock went back across MPI_Init. Built against libheisen.so. */
#include "common.h"
#include <heisen.h>
#include <stdint.h>

#define ROUNDS 4000

int main(int argc, char **argv) {
    uint64_t before_init = heisen_now();
    start(&argc, &argv);
    uint64_t after_init = heisen_now();
    long negative = 0;
    int64_t least = INT64_MAX;
    if (me < 2) {
        int peer = 1 - me;
        for (int i = 0; i < ROUNDS; i++) {
            uint64_t t;
            if ((i + me) % 2 == 0) {
                t = heisen_now();
                MPI_Send(&t, 1, MPI_UINT64_T, peer, 9, MPI_COMM_WORLD);
            } else {
                MPI_Recv(&t, 1, MPI_UINT64_T, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                int64_t d = (int64_t)(heisen_now() - t);
                if (d < 0) negative++;
                if (d < least) least = d;
            }
        }
    }
    SAY("went_back %d negative %ld least_ns %lld", after_init < before_init, negative,
        (long long)least);
    MPI_Finalize();
    return 0;
}
