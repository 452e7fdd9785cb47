/* Unseen-suite style requests and completions: Waitany/Testany with
 * MPI_REQUEST_NULL entries and all-null arrays (MPI_UNDEFINED),
 * Waitsome/Testsome with MPI_STATUSES_IGNORE, MPI_Request_get_status,
 * MPI_Cancel of a receive and of a send with MPI_Test_cancelled,
 * persistent requests started many times and freed while inactive,
 * MPI_Startall with sends and receives mixed, MPI_Request_free of an
 * active send. 2 ranks or more; ranks above 1 only finalize. */
#include "common.h"

int main(int argc, char **argv) {
    start(&argc, &argv);
    MPI_Status st, sts[8];
    if (me > 1) { MPI_Finalize(); return 0; }
    int peer = 1 - me;
    int v[64], w[64];
    for (int i = 0; i < 64; i++) v[i] = me * 100 + i;

    /* all-null arrays */
    {
        MPI_Request q[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        int idx = -5, flag = -5, outc = -5, ids[3];
        int rc = MPI_Waitany(3, q, &idx, &st);
        SAY("waitany null rc=%d idx=%d undefined=%d source=%d tag=%d", error_class(rc), idx,
            idx == MPI_UNDEFINED, st.MPI_SOURCE, st.MPI_TAG);
        rc = MPI_Testany(3, q, &idx, &flag, &st);
        SAY("testany null rc=%d idx=%d flag=%d", error_class(rc), idx == MPI_UNDEFINED, flag);
        rc = MPI_Waitsome(3, q, &outc, ids, MPI_STATUSES_IGNORE);
        SAY("waitsome null rc=%d outcount=%d", error_class(rc), outc == MPI_UNDEFINED);
        rc = MPI_Testsome(3, q, &outc, ids, MPI_STATUSES_IGNORE);
        SAY("testsome null rc=%d outcount=%d", error_class(rc), outc == MPI_UNDEFINED);
        rc = MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
        SAY("waitall null rc=%d", error_class(rc));
        flag = -5;
        rc = MPI_Testall(3, q, &flag, sts);
        SAY("testall null rc=%d flag=%d", error_class(rc), flag);
        rc = MPI_Waitany(0, NULL, &idx, &st);
        SAY("waitany empty rc=%d undefined=%d", error_class(rc), idx == MPI_UNDEFINED);
        rc = MPI_Wait(&q[0], &st);
        SAY("wait null rc=%d source=%d tag=%d", error_class(rc), st.MPI_SOURCE, st.MPI_TAG);
        flag = -5;
        rc = MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
        SAY("get_status null rc=%d flag=%d", error_class(rc), flag);
    }

    /* Waitany among nulls and real requests, in order of arrival */
    {
        MPI_Request q[6];
        for (int k = 0; k < 6; k++) q[k] = MPI_REQUEST_NULL;
        if (me == 1) {
            MPI_Irecv(w, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, &q[1]);
            MPI_Irecv(w + 4, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, &q[4]);
            MPI_Send(NULL, 0, MPI_INT, 0, 9, MPI_COMM_WORLD);
            /* one message at a time, so the order is the program's */
            int order[2];
            for (int k = 0; k < 2; k++) {
                int idx;
                MPI_Waitany(6, q, &idx, &st);
                order[k] = idx;
                show_status("waitany", 0, &st, MPI_INT);
                if (k == 0) MPI_Send(NULL, 0, MPI_INT, 0, 9, MPI_COMM_WORLD);
            }
            SAY("waitany order %d %d null=%d %d", order[0], order[1], q[1] == MPI_REQUEST_NULL,
                q[4] == MPI_REQUEST_NULL);
            show_ints("waitany data", w, 8);
        } else {
            MPI_Recv(NULL, 0, MPI_INT, 1, 9, MPI_COMM_WORLD, &st);
            MPI_Send(v, 4, MPI_INT, 1, 2, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_INT, 1, 9, MPI_COMM_WORLD, &st);
            MPI_Send(v + 4, 4, MPI_INT, 1, 1, MPI_COMM_WORLD);
        }
    }

    /* Testany polling, Waitsome with STATUSES_IGNORE, Request_get_status */
    {
        MPI_Request q[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        if (me == 0) {
            for (int k = 0; k < 4; k++) MPI_Isend(v + 8 * k, 8, MPI_INT, 1, 20 + k, MPI_COMM_WORLD, &q[k]);
            int done = 0, outc, ids[4];
            while (done < 4) {
                MPI_Waitsome(4, q, &outc, ids, MPI_STATUSES_IGNORE);
                if (outc == MPI_UNDEFINED) break;
                done += outc;
            }
            SAY("waitsome sends done=%d", done);
        } else {
            memset(w, 0, sizeof w);
            for (int k = 3; k >= 0; k--) MPI_Irecv(w + 8 * k, 8, MPI_INT, 0, 20 + k, MPI_COMM_WORLD, &q[k]);
            int flag = 0;
            while (!flag) MPI_Request_get_status(q[2], &flag, &st);
            show_status("get_status", 0, &st, MPI_INT);
            SAY("get_status keeps request=%d", q[2] != MPI_REQUEST_NULL);
            int done = 0, sum = 0;
            while (done < 4) {
                int idx = -1;
                flag = 0;
                MPI_Testany(4, q, &idx, &flag, &st);
                if (flag && idx != MPI_UNDEFINED) {
                    done++;
                    int c;
                    MPI_Get_count(&st, MPI_INT, &c);
                    sum += idx * 100 + c + st.MPI_TAG;
                }
            }
            SAY("testany sum=%d", sum);
            show_ints("testany data", w, 32);
        }
    }

    /* cancel a receive nobody sends to, and a send nobody receives */
    {
        MPI_Request q;
        MPI_Irecv(w, 4, MPI_INT, peer, 999, MPI_COMM_WORLD, &q);
        MPI_Cancel(&q);
        MPI_Wait(&q, &st);
        int c;
        MPI_Test_cancelled(&st, &c);
        SAY("cancel recv cancelled=%d", c);
        MPI_Isend(v, 4, MPI_INT, peer, 998, MPI_COMM_WORLD, &q);
        MPI_Cancel(&q);
        MPI_Wait(&q, &st);
        MPI_Test_cancelled(&st, &c);
        /* whether a send cancel succeeds is the MPI's choice: if it did
         * not, the peer must receive it */
        int both[2] = {c, 0};
        int other[2];
        MPI_Sendrecv(both, 1, MPI_INT, peer, 997, other, 1, MPI_INT, peer, 997, MPI_COMM_WORLD, &st);
        if (!other[0]) MPI_Recv(w, 4, MPI_INT, peer, 998, MPI_COMM_WORLD, &st);
        SAY("cancel send done");
        /* a send cancelled after it was received stays uncancelled */
        if (me == 0) {
            MPI_Isend(v, 2, MPI_INT, 1, 996, MPI_COMM_WORLD, &q);
            MPI_Recv(NULL, 0, MPI_INT, 1, 995, MPI_COMM_WORLD, &st);
            MPI_Cancel(&q);
            MPI_Wait(&q, &st);
            MPI_Test_cancelled(&st, &c);
            SAY("late cancel cancelled=%d", c);
        } else {
            MPI_Recv(w, 2, MPI_INT, 0, 996, MPI_COMM_WORLD, &st);
            show_status("late cancel recv", 0, &st, MPI_INT);
            MPI_Send(NULL, 0, MPI_INT, 0, 995, MPI_COMM_WORLD);
        }
    }

    /* persistent requests started many times, freed while inactive */
    {
        MPI_Request q[4];
        int sbuf[4], rbuf[4];
        MPI_Send_init(sbuf, 4, MPI_INT, peer, 30, MPI_COMM_WORLD, &q[0]);
        MPI_Recv_init(rbuf, 4, MPI_INT, peer, 30, MPI_COMM_WORLD, &q[1]);
        long total = 0;
        for (int it = 0; it < 200; it++) {
            for (int i = 0; i < 4; i++) sbuf[i] = it * 10 + i + me;
            if (it % 2) {
                MPI_Start(&q[1]);
                MPI_Start(&q[0]);
            } else {
                MPI_Startall(2, q);
            }
            if (it % 3 == 0) {
                MPI_Waitall(2, q, sts);
            } else {
                int idx, outc, ids[2], n = 0;
                if (it % 3 == 1) { while (n < 2) { MPI_Waitany(2, q, &idx, &st); n++; } }
                else { while (n < 2) { MPI_Waitsome(2, q, &outc, ids, sts); n += outc; } }
            }
            total += rbuf[0] + rbuf[3];
        }
        SAY("persistent total=%ld active-after=%d", total, q[0] != MPI_REQUEST_NULL);
        /* an inactive persistent request in Waitany counts as null */
        int idx = -1;
        MPI_Waitany(2, q, &idx, &st);
        SAY("waitany inactive undefined=%d", idx == MPI_UNDEFINED);
        MPI_Request_free(&q[0]);
        MPI_Request_free(&q[1]);
        SAY("persistent freed=%d", q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL);
        /* Startall with mixed sends and receives of several peers and types */
        double ds[3] = {1.5 + me, 2.5, 3.5}, dr[3] = {0};
        char cs[5] = "abcd", cr[5] = {0};
        MPI_Send_init(ds, 3, MPI_DOUBLE, peer, 31, MPI_COMM_WORLD, &q[0]);
        MPI_Recv_init(cr, 5, MPI_CHAR, peer, 32, MPI_COMM_WORLD, &q[1]);
        MPI_Recv_init(dr, 3, MPI_DOUBLE, peer, 31, MPI_COMM_WORLD, &q[2]);
        MPI_Ssend_init(cs, 5, MPI_CHAR, peer, 32, MPI_COMM_WORLD, &q[3]);
        for (int it = 0; it < 3; it++) {
            MPI_Startall(4, q);
            MPI_Waitall(4, q, sts);
            SAY("startall %d dr=%.1f %.1f cr=%s count=%d", it, dr[0], dr[2], cr, (MPI_Get_count(&sts[2], MPI_DOUBLE, &idx), idx));
        }
        for (int k = 0; k < 4; k++) MPI_Request_free(&q[k]);
    }

    /* Request_free of an active send; the receiver still gets it */
    {
        if (me == 0) {
            MPI_Request q;
            MPI_Isend(v, 6, MPI_INT, 1, 40, MPI_COMM_WORLD, &q);
            MPI_Request_free(&q);
            SAY("freed active null=%d", q == MPI_REQUEST_NULL);
        } else {
            MPI_Recv(w, 6, MPI_INT, 0, 40, MPI_COMM_WORLD, &st);
            show_status("freed active recv", 0, &st, MPI_INT);
            show_ints("freed active data", w, 6);
        }
        MPI_Sendrecv(NULL, 0, MPI_INT, peer, 41, NULL, 0, MPI_INT, peer, 41, MPI_COMM_WORLD, &st);
    }

    /* Testall on a mix until complete; statuses per entry */
    {
        MPI_Request q[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        MPI_Irecv(w, 3, MPI_INT, peer, 50, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(v, 3, MPI_INT, peer, 50, MPI_COMM_WORLD, &q[2]);
        int flag = 0;
        while (!flag) MPI_Testall(3, q, &flag, sts);
        show_status("testall 0", 0, &sts[0], MPI_INT);
        SAY("testall null entry source=%d tag=%d", sts[1].MPI_SOURCE, sts[1].MPI_TAG);
    }
    MPI_Finalize();
    return 0;
}
