/* Blocking point-to-point and its edge cases, 2 ranks or more: every
 * send mode, statuses, wildcards, PROC_NULL, zero counts, STATUS_IGNORE,
 * truncation, derived types, MPI_BOTTOM, large messages, Sendrecv(_replace),
 * probes and matched probes. */
#include "common.h"

#define BIG 40000

int main(int argc, char **argv) {
    start(&argc, &argv);
    int peer = me == 0 ? 1 : 0;
    int v[64], w[64];
    MPI_Status st;
    for (int i = 0; i < 64; i++) v[i] = 100 * me + i;
    if (me > 1) { MPI_Finalize(); return 0; }

    /* every send mode, a small contiguous message */
    int size;
    MPI_Pack_size(8, MPI_INT, MPI_COMM_WORLD, &size);
    int bsize = size + MPI_BSEND_OVERHEAD;
    char *bbuf = malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);
    for (int mode = 0; mode < 4; mode++) {
        if (me == 0) {
            int rc = mode == 0 ? MPI_Send(v, 8, MPI_INT, 1, 10 + mode, MPI_COMM_WORLD)
                   : mode == 1 ? MPI_Bsend(v, 8, MPI_INT, 1, 10 + mode, MPI_COMM_WORLD)
                   : mode == 2 ? MPI_Ssend(v, 8, MPI_INT, 1, 10 + mode, MPI_COMM_WORLD)
                   : (MPI_Recv(NULL, 0, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                      MPI_Rsend(v, 8, MPI_INT, 1, 10 + mode, MPI_COMM_WORLD));
            SAY("mode %d send rc=%d", mode, error_class(rc));
        } else {
            MPI_Request r;
            memset(w, 0, sizeof w);
            if (mode == 3) {
                MPI_Irecv(w, 8, MPI_INT, 0, 13, MPI_COMM_WORLD, &r);
                MPI_Send(NULL, 0, MPI_INT, 0, 99, MPI_COMM_WORLD);
                MPI_Wait(&r, &st);
                show_status("mode 3 recv", 0, &st, MPI_INT);
            } else {
                int rc = MPI_Recv(w, 8, MPI_INT, 0, 10 + mode, MPI_COMM_WORLD, &st);
                show_status("mode recv", rc, &st, MPI_INT);
            }
            show_ints("mode data", w, 8);
        }
    }
    void *detached; int dsize;
    MPI_Buffer_detach(&detached, &dsize);
    SAY("detach same=%d size=%d", detached == bbuf, dsize);
    free(bbuf);

    /* wildcards, a receive posted larger than the message, Get_count in bytes */
    if (me == 0) {
        MPI_Send(v, 5, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else {
        memset(w, 0, sizeof w);
        int rc = MPI_Recv(w, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        show_status("wild", rc, &st, MPI_INT);
        show_status("wild bytes", rc, &st, MPI_BYTE);
        show_ints("wild data", w, 8);
    }

    /* PROC_NULL, zero counts, STATUS_IGNORE */
    {
        int rc = MPI_Send(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
        SAY("procnull send rc=%d", error_class(rc));
        rc = MPI_Recv(w, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
        show_status("procnull recv", rc, &st, MPI_INT);
        if (me == 0) {
            MPI_Send(NULL, 0, MPI_INT, 1, 2, MPI_COMM_WORLD);
            MPI_Send(v, 3, MPI_INT, 1, 3, MPI_COMM_WORLD);
        } else {
            rc = MPI_Recv(w, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, &st);
            show_status("zero", rc, &st, MPI_INT);
            memset(w, 0, sizeof w);
            rc = MPI_Recv(w, 4, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            SAY("ignore rc=%d", error_class(rc));
            show_ints("ignore data", w, 4);
        }
    }

    /* truncation, with errors returned: the error class and the data that fitted */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (me == 0) {
        MPI_Send(v, 10, MPI_INT, 1, 4, MPI_COMM_WORLD);
        MPI_Send(v, BIG / 4 > 64 ? 64 : 10, MPI_INT, 1, 5, MPI_COMM_WORLD);
    } else {
        memset(w, 0, sizeof w);
        int rc = MPI_Recv(w, 6, MPI_INT, 0, 4, MPI_COMM_WORLD, &st);
        show_status("truncated", rc, &st, MPI_INT);
        show_ints("truncated data", w, 10);
        MPI_Datatype pair;
        MPI_Type_contiguous(2, MPI_INT, &pair);
        MPI_Type_commit(&pair);
        memset(w, 0, sizeof w);
        rc = MPI_Recv(w, 3, pair, 0, 5, MPI_COMM_WORLD, &st);
        show_status("truncated derived", rc, &st, pair);
        show_ints("truncated derived data", w, 10);
        MPI_Type_free(&pair);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* derived datatypes: a strided vector, received as contiguous ints */
    {
        MPI_Datatype vec;
        MPI_Type_vector(4, 1, 3, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        if (me == 0) {
            MPI_Send(v, 2, vec, 1, 6, MPI_COMM_WORLD);
            MPI_Recv(w, 2, vec, 1, 6, MPI_COMM_WORLD, &st);
            show_status("vector back", 0, &st, vec);
            show_status("vector back ints", 0, &st, MPI_INT);
        } else {
            memset(w, 0, sizeof w);
            MPI_Recv(w, 8, MPI_INT, 0, 6, MPI_COMM_WORLD, &st);
            show_status("vector as ints", 0, &st, MPI_INT);
            show_ints("vector data", w, 8);
            MPI_Send(w, 7, MPI_INT, 0, 6, MPI_COMM_WORLD); /* 7 of 8: a partial vector */
        }
        MPI_Type_free(&vec);
    }

    /* MPI_BOTTOM with an absolute-address type */
    {
        MPI_Aint at;
        int *target = me == 0 ? v : w;
        memset(w, 0, sizeof w);
        MPI_Get_address(target + 2, &at);
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
    }

    /* a large message (the struct path), checked by a sum */
    {
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
    }

    /* Sendrecv and Sendrecv_replace, the exchange both ways */
    {
        memset(w, 0, sizeof w);
        int rc = MPI_Sendrecv(v, 6, MPI_INT, peer, 20, w, 8, MPI_INT, peer, 20, MPI_COMM_WORLD, &st);
        show_status("sendrecv", rc, &st, MPI_INT);
        show_ints("sendrecv data", w, 8);
        int x[4] = {me, me + 1, me + 2, me + 3};
        rc = MPI_Sendrecv_replace(x, 4, MPI_INT, peer, 21, peer, 21, MPI_COMM_WORLD, &st);
        show_status("replace", rc, &st, MPI_INT);
        show_ints("replace data", x, 4);
        rc = MPI_Sendrecv_replace(x, 4, MPI_INT, peer, 22, MPI_PROC_NULL, 22, MPI_COMM_WORLD, &st);
        show_status("replace procnull", rc, &st, MPI_INT);
        show_ints("replace procnull data", x, 4);
        MPI_Recv(x, 4, MPI_INT, peer, 22, MPI_COMM_WORLD, &st);
        show_status("replace procnull recv", 0, &st, MPI_INT);
        show_ints("replace procnull recv data", x, 4);
    }

    /* probes: Probe, Iprobe, Mprobe + Mrecv, Improbe + Imrecv */
    if (me == 0) {
        MPI_Send(v, 11, MPI_INT, 1, 30, MPI_COMM_WORLD);
        MPI_Send(v, 12, MPI_INT, 1, 31, MPI_COMM_WORLD);
        MPI_Send(v, 13, MPI_INT, 1, 32, MPI_COMM_WORLD);
    } else {
        MPI_Probe(0, 30, MPI_COMM_WORLD, &st);
        show_status("probe", 0, &st, MPI_INT);
        int flag = 0;
        while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &flag, &st);
        show_status("iprobe", 0, &st, MPI_INT);
        MPI_Recv(w, 64, MPI_INT, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Message msg;
        MPI_Mprobe(0, 31, MPI_COMM_WORLD, &msg, &st);
        show_status("mprobe", 0, &st, MPI_INT);
        memset(w, 0, sizeof w);
        MPI_Mrecv(w, 64, MPI_INT, &msg, &st);
        show_status("mrecv", 0, &st, MPI_INT);
        show_ints("mrecv data", w, 13);
        flag = 0;
        while (!flag) MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
        show_status("improbe", 0, &st, MPI_INT);
        MPI_Request r;
        memset(w, 0, sizeof w);
        MPI_Imrecv(w, 64, MPI_INT, &msg, &r);
        MPI_Wait(&r, &st);
        show_status("imrecv", 0, &st, MPI_INT);
        show_ints("imrecv data", w, 13);
        MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
        SAY("mprobe procnull nullmsg=%d", msg == MPI_MESSAGE_NO_PROC);
        MPI_Mrecv(w, 4, MPI_INT, &msg, &st);
        show_status("mrecv procnull", 0, &st, MPI_INT);
    }
    MPI_Finalize();
    return 0;
}
