/* Derived datatypes sent again and again from the same buffers (heisen
 * caches the struct type it joins them with), then freed and replaced by
 * other types that may get the same handle: every message must still
 * carry what its own type says. Also large contiguous messages in both
 * directions and a type with a lower bound (MPI_Type_create_resized). */
#include "common.h"

#define BIG 20000

int main(int argc, char **argv) {
    start(&argc, &argv);
    if (me > 1) { MPI_Finalize(); return 0; }
    int peer = 1 - me;
    static int v[BIG], w[BIG];
    MPI_Status st;
    for (int round = 0; round < 4; round++) {
        MPI_Datatype t;
        /* a different layout each round: stride 2, 3, 4, 5 */
        MPI_Type_vector(50, 1, round + 2, MPI_INT, &t);
        MPI_Type_commit(&t);
        for (int rep = 0; rep < 3; rep++) {
            for (int i = 0; i < BIG; i++) v[i] = me * 1000000 + round * 10000 + rep * 1000 + i;
            memset(w, 0, sizeof w);
            if (me == 0) {
                MPI_Send(v, 2, t, peer, rep, MPI_COMM_WORLD);
                MPI_Recv(w, 100, MPI_INT, peer, rep, MPI_COMM_WORLD, &st);
            } else {
                MPI_Recv(w, 100, MPI_INT, peer, rep, MPI_COMM_WORLD, &st);
                MPI_Send(v, 2, t, peer, rep, MPI_COMM_WORLD);
            }
            show_status("vector", 0, &st, MPI_INT);
            long sum = 0;
            for (int i = 0; i < 100; i++) sum += (long)w[i] * (i + 1);
            SAY("round %d rep %d weighted sum %ld", round, rep, sum);
        }
        MPI_Type_free(&t);
    }
    /* large contiguous, both ways, same buffers three times */
    for (int rep = 0; rep < 3; rep++) {
        for (int i = 0; i < BIG; i++) v[i] = me + rep + i;
        if (me == 0) {
            MPI_Send(v, BIG, MPI_INT, peer, 50, MPI_COMM_WORLD);
            MPI_Recv(w, BIG, MPI_INT, peer, 50, MPI_COMM_WORLD, &st);
        } else {
            MPI_Recv(w, BIG, MPI_INT, peer, 50, MPI_COMM_WORLD, &st);
            MPI_Send(v, BIG, MPI_INT, peer, 50, MPI_COMM_WORLD);
        }
        long sum = 0;
        for (int i = 0; i < BIG; i++) sum += w[i];
        show_status("large", 0, &st, MPI_INT);
        SAY("large sum %ld", sum);
    }
    /* a resized type: extent 3 ints, one int of data each */
    MPI_Datatype one, spaced;
    MPI_Type_contiguous(1, MPI_INT, &one);
    MPI_Type_create_resized(one, 0, 3 * sizeof(int), &spaced);
    MPI_Type_commit(&spaced);
    memset(w, 0, sizeof w);
    for (int i = 0; i < 30; i++) v[i] = 7 * i + me;
    MPI_Sendrecv(v, 10, spaced, peer, 60, w, 10, spaced, peer, 60, MPI_COMM_WORLD, &st);
    show_status("resized", 0, &st, spaced);
    show_ints("resized data", w, 30);
    MPI_Type_free(&spaced);
    MPI_Type_free(&one);
    MPI_Finalize();
    return 0;
}
