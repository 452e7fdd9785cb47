/* More pending requests than heisen's request table holds (R12): rank 0
 * posts 5000 receives at once, rank 1 sends 5000 messages; every payload
 * and status must still be right (the ones beyond the table run
 * unmeasured). */
#include "common.h"

#define MANY 5000

int main(int argc, char **argv) {
    start(&argc, &argv);
    if (me > 1) { MPI_Finalize(); return 0; }
    static int in[MANY][2];
    static MPI_Request r[MANY];
    static MPI_Status st[MANY];
    if (me == 0) {
        for (int i = 0; i < MANY; i++) MPI_Irecv(in[i], 2, MPI_INT, 1, i, MPI_COMM_WORLD, &r[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(MANY, r, st);
        long sum = 0, bad = 0;
        for (int i = 0; i < MANY; i++) {
            int n;
            MPI_Get_count(&st[i], MPI_INT, &n);
            if (n != 2 || st[i].MPI_TAG != i || st[i].MPI_SOURCE != 1) bad++;
            sum += in[i][0] + in[i][1];
        }
        SAY("received %d sum %ld bad statuses %ld", MANY, sum, bad);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < MANY; i++) {
            int out[2] = {i, 3 * i};
            MPI_Send(out, 2, MPI_INT, 0, i, MPI_COMM_WORLD);
        }
        SAY("sent %d", MANY);
    }
    MPI_Finalize();
    return 0;
}
