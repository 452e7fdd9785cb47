/* Blocking Send, Ssend and Recv: statuses, wildcards, PROC_NULL, zero
 * counts, STATUS_IGNORE, a strided datatype, MPI_BOTTOM and a message
 * large enough for the struct path. */
#include "common.h"

#define BIG 40000

int main(int argc, char **argv) {
    start(&argc, &argv);
    int v[64], w[64];
    MPI_Status st;
    for (int i = 0; i < 64; i++) v[i] = 100 * me + i;
    if (me > 1) { MPI_Finalize(); return 0; }
    if (me == 0) {
        MPI_Send(v, 8, MPI_INT, 1, 10, MPI_COMM_WORLD);
        MPI_Ssend(v, 5, MPI_INT, 1, 11, MPI_COMM_WORLD);
        MPI_Send(NULL, 0, MPI_INT, 1, 12, MPI_COMM_WORLD);
        MPI_Send(v, 3, MPI_INT, 1, 13, MPI_COMM_WORLD);
    } else {
        int rc = MPI_Recv(w, 8, MPI_INT, 0, 10, MPI_COMM_WORLD, &st);
        show_status("send", rc, &st, MPI_INT);
        show_ints("send data", w, 8);
        memset(w, 0, sizeof w);
        rc = MPI_Recv(w, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        show_status("wild", rc, &st, MPI_INT);
        show_status("wild bytes", rc, &st, MPI_BYTE);
        show_ints("wild data", w, 8);
        rc = MPI_Recv(w, 4, MPI_INT, 0, 12, MPI_COMM_WORLD, &st);
        show_status("zero", rc, &st, MPI_INT);
        memset(w, 0, sizeof w);
        rc = MPI_Recv(w, 4, MPI_INT, 0, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        SAY("ignore rc=%d", error_class(rc));
        show_ints("ignore data", w, 4);
    }
    int rc = MPI_Send(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    SAY("procnull send rc=%d", error_class(rc));
    rc = MPI_Recv(w, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    show_status("procnull recv", rc, &st, MPI_INT);

    MPI_Datatype vec;
    MPI_Type_vector(4, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    if (me == 0) {
        MPI_Send(v, 2, vec, 1, 6, MPI_COMM_WORLD);
        memset(w, 0, sizeof w);
        MPI_Recv(w, 2, vec, 1, 6, MPI_COMM_WORLD, &st);
        show_status("vector back", 0, &st, vec);
        show_status("vector back ints", 0, &st, MPI_INT);
        show_ints("vector back data", w, 24);
    } else {
        memset(w, 0, sizeof w);
        MPI_Recv(w, 8, MPI_INT, 0, 6, MPI_COMM_WORLD, &st);
        show_status("vector as ints", 0, &st, MPI_INT);
        show_ints("vector data", w, 8);
        MPI_Send(w, 7, MPI_INT, 0, 6, MPI_COMM_WORLD); /* 7 of 8: a partial vector */
    }
    MPI_Type_free(&vec);

    MPI_Aint at;
    memset(w, 0, sizeof w);
    MPI_Get_address((me == 0 ? v : w) + 2, &at);
    int len = 5;
    MPI_Datatype abs;
    MPI_Type_create_hindexed(1, &len, &at, MPI_INT, &abs);
    MPI_Type_commit(&abs);
    if (me == 0) MPI_Send(MPI_BOTTOM, 1, abs, 1, 8, MPI_COMM_WORLD);
    else {
        MPI_Recv(MPI_BOTTOM, 1, abs, 0, 8, MPI_COMM_WORLD, &st);
        show_status("bottom", 0, &st, MPI_INT);
        show_ints("bottom data", w, 8);
    }
    MPI_Type_free(&abs);

    int *big = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++) big[i] = me == 0 ? i * 7 : 0;
    if (me == 0) MPI_Ssend(big, BIG, MPI_INT, 1, 9, MPI_COMM_WORLD);
    else {
        MPI_Recv(big, BIG, MPI_INT, 0, 9, MPI_COMM_WORLD, &st);
        long sum = 0;
        for (int i = 0; i < BIG; i++) sum += big[i];
        show_status("big", 0, &st, MPI_INT);
        SAY("big sum %ld", sum);
    }
    free(big);
    MPI_Finalize();
    return 0;
}
