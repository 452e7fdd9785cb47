/* Unseen-suite style point-to-point (the kind MPICH's test/mpi/pt2pt
 * holds): Sendrecv with MPI_PROC_NULL on both sides, MPI_ANY_SOURCE probe
 * then a receive sized by MPI_Get_count, every size from 0 to 1 MiB across
 * the staging threshold, Ssend/Issend, Rsend after a barrier, many Bsends
 * through an attached buffer, matched probes with MPI_PROC_NULL, split
 * communicators with wildcards and intercommunicator point-to-point.
 * 2 ranks or more. */
#include "common.h"

static unsigned sum(const unsigned char *b, int n) {
    unsigned s = 0;
    for (int i = 0; i < n; i++) s = s * 31 + b[i];
    return s;
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    MPI_Status st;
    int v[16], w[16];
    for (int i = 0; i < 16; i++) v[i] = me * 1000 + i;

    /* Sendrecv with MPI_PROC_NULL both sides: status source PROC_NULL, tag ANY_TAG, count 0 */
    {
        memset(w, 7, sizeof w);
        int rc = MPI_Sendrecv(v, 4, MPI_INT, MPI_PROC_NULL, 3, w, 4, MPI_INT, MPI_PROC_NULL, 4,
                              MPI_COMM_WORLD, &st);
        show_status("sendrecv procnull", rc, &st, MPI_INT);
        SAY("sendrecv procnull untouched=%d", w[0] == 0x07070707);
        rc = MPI_Sendrecv_replace(v, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &st);
        show_status("replace procnull", rc, &st, MPI_INT);
    }

    /* ring Sendrecv */
    {
        int right = (me + 1) % np, left = (me + np - 1) % np;
        int rc = MPI_Sendrecv(v, 5, MPI_INT, right, 5, w, 16, MPI_INT, left, 5, MPI_COMM_WORLD, &st);
        show_status("ring", rc, &st, MPI_INT);
        show_ints("ring data", w, 5);
    }

    /* every other rank sends a message of its own length; rank 0 probes
     * with ANY_SOURCE and receives into a buffer of exactly that size */
    if (me == 0) {
        int *seen = calloc(np, sizeof(int));
        for (int k = 1; k < np; k++) {
            MPI_Probe(MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &st);
            int n;
            MPI_Get_count(&st, MPI_INT, &n);
            int *buf = malloc(sizeof(int) * (n ? n : 1));
            int rc = MPI_Recv(buf, n, MPI_INT, st.MPI_SOURCE, 20, MPI_COMM_WORLD, &st);
            seen[st.MPI_SOURCE] = n * 1000 + (n ? buf[n - 1] % 1000 : 0) + 1;
            if (rc) SAY("probe-sized rc=%d", error_class(rc));
            free(buf);
        }
        show_ints("probe-sized", seen, np);
        free(seen);
    } else {
        int n = 3 * me + 1;
        int *buf = malloc(sizeof(int) * n);
        for (int i = 0; i < n; i++) buf[i] = i;
        MPI_Send(buf, n, MPI_INT, 0, 20, MPI_COMM_WORLD);
        free(buf);
    }

    /* sizes 0..1 MiB, doubling plus odd sizes, blocking and nonblocking */
    if (me < 2) {
        int peer = 1 - me;
        int maxn = 1 << 20;
        unsigned char *s = malloc(maxn + 3), *r = malloc(maxn + 3);
        for (int i = 0; i < maxn + 3; i++) s[i] = (unsigned char)(i * 7 + me);
        int sizes[64], ns = 0;
        sizes[ns++] = 0;
        for (int n = 1; n <= maxn; n *= 2) {
            sizes[ns++] = n;
            if (n > 2) sizes[ns++] = n - 1;
            if (n > 2 && n < maxn) sizes[ns++] = n + 3;
        }
        for (int k = 0; k < ns; k++) {
            int n = sizes[k];
            memset(r, 0, maxn + 3);
            if (me == 0) {
                MPI_Send(s, n, MPI_BYTE, peer, 30, MPI_COMM_WORLD);
                MPI_Recv(r, maxn + 3, MPI_BYTE, peer, 31, MPI_COMM_WORLD, &st);
            } else {
                MPI_Recv(r, maxn + 3, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &st);
                MPI_Send(s, n, MPI_BYTE, peer, 31, MPI_COMM_WORLD);
            }
            int c;
            MPI_Get_count(&st, MPI_BYTE, &c);
            MPI_Request q[2];
            unsigned char *r2 = malloc(n + 1);
            r2[n] = 0xAB;
            MPI_Irecv(r2, n, MPI_BYTE, peer, 32, MPI_COMM_WORLD, &q[0]);
            MPI_Isend(s + 1, n, MPI_BYTE, peer, 32, MPI_COMM_WORLD, &q[1]);
            MPI_Status sts[2];
            MPI_Waitall(2, q, sts);
            int c2;
            MPI_Get_count(&sts[0], MPI_BYTE, &c2);
            SAY("size %d count=%d sum=%u tail=%d icount=%d isum=%u guard=%d", n, c, sum(r, c),
                r[c], c2, sum(r2, n), r2[n]);
            free(r2);
        }
        free(s);
        free(r);
    }

    /* Ssend and Issend complete only once matched */
    if (me < 2) {
        int peer = 1 - me;
        if (me == 0) {
            int rc = MPI_Ssend(v, 3, MPI_INT, peer, 40, MPI_COMM_WORLD);
            SAY("ssend rc=%d", error_class(rc));
            MPI_Request q;
            MPI_Issend(v, 3, MPI_INT, peer, 41, MPI_COMM_WORLD, &q);
            int flag = 0;
            MPI_Test(&q, &flag, &st);
            /* the receiver waits for our go before receiving */
            MPI_Send(NULL, 0, MPI_INT, peer, 42, MPI_COMM_WORLD);
            MPI_Wait(&q, &st);
            SAY("issend done flag-before-go=%d", flag);
        } else {
            MPI_Recv(w, 3, MPI_INT, peer, 40, MPI_COMM_WORLD, &st);
            show_status("ssend recv", 0, &st, MPI_INT);
            MPI_Recv(NULL, 0, MPI_INT, peer, 42, MPI_COMM_WORLD, &st);
            MPI_Recv(w, 3, MPI_INT, peer, 41, MPI_COMM_WORLD, &st);
            show_status("issend recv", 0, &st, MPI_INT);
            show_ints("issend data", w, 3);
        }
    }

    /* Rsend after a barrier: the receive is posted before */
    {
        MPI_Request q = MPI_REQUEST_NULL;
        if (me == 1) MPI_Irecv(w, 4, MPI_INT, 0, 50, MPI_COMM_WORLD, &q);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            int rc = MPI_Rsend(v, 4, MPI_INT, 1, 50, MPI_COMM_WORLD);
            SAY("rsend rc=%d", error_class(rc));
        }
        MPI_Wait(&q, &st);
        if (me == 1) {
            show_status("rsend recv", 0, &st, MPI_INT);
            show_ints("rsend data", w, 4);
        }
    }

    /* many Bsends through an attached buffer, detached at the end */
    {
        enum { MSGS = 50 };
        int size;
        MPI_Pack_size(16, MPI_INT, MPI_COMM_WORLD, &size);
        int bsize = MSGS * (size + MPI_BSEND_OVERHEAD);
        char *b = malloc(bsize);
        MPI_Buffer_attach(b, bsize);
        if (me == 0) {
            for (int k = 0; k < MSGS; k++) {
                v[0] = k;
                int rc = MPI_Bsend(v, 1 + k % 16, MPI_INT, np - 1, 60, MPI_COMM_WORLD);
                if (rc) SAY("bsend %d rc=%d", k, error_class(rc));
            }
        }
        if (me == np - 1) {
            int total = 0;
            for (int k = 0; k < MSGS; k++) {
                int c;
                MPI_Recv(w, 16, MPI_INT, 0, 60, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_INT, &c);
                total += c * 100 + w[0];
            }
            SAY("bsends total=%d", total);
        }
        void *d;
        int ds;
        MPI_Buffer_detach(&d, &ds);
        SAY("bsend detach same=%d size=%d", d == b, ds);
        free(b);
        for (int i = 0; i < 16; i++) v[i] = me * 1000 + i;
    }

    /* matched probes: PROC_NULL gives MPI_MESSAGE_NO_PROC */
    {
        MPI_Message m;
        int rc = MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &m, &st);
        SAY("mprobe procnull rc=%d noproc=%d source=%d", error_class(rc), m == MPI_MESSAGE_NO_PROC,
            st.MPI_SOURCE);
        rc = MPI_Mrecv(w, 4, MPI_INT, &m, &st);
        show_status("mrecv noproc", rc, &st, MPI_INT);
        SAY("mrecv noproc after=%d", m == MPI_MESSAGE_NULL);
        int flag = -1;
        rc = MPI_Improbe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &flag, &m, &st);
        SAY("improbe procnull rc=%d flag=%d noproc=%d", error_class(rc), flag, m == MPI_MESSAGE_NO_PROC);
        MPI_Request q;
        rc = MPI_Imrecv(w, 4, MPI_INT, &m, &q);
        MPI_Wait(&q, &st);
        show_status("imrecv noproc", rc, &st, MPI_INT);
        /* a real one, improbe loop then imrecv */
        if (me == 0) MPI_Send(v, 6, MPI_INT, 1, 70, MPI_COMM_WORLD);
        if (me == 1) {
            flag = 0;
            while (!flag) MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
            show_status("improbe", 0, &st, MPI_INT);
            memset(w, 0, sizeof w);
            MPI_Imrecv(w, 16, MPI_INT, &m, &q);
            MPI_Wait(&q, &st);
            show_status("imrecv", 0, &st, MPI_INT);
            show_ints("imrecv data", w, 6);
        }
    }

    /* split communicators, wildcards inside each */
    {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &half);
        int hr, hn;
        MPI_Comm_rank(half, &hr);
        MPI_Comm_size(half, &hn);
        SAY("split rank=%d size=%d", hr, hn);
        if (hr == 0) {
            int got = 0;
            for (int k = 1; k < hn; k++) {
                int x;
                MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, half, &st);
                got += x * 10 + st.MPI_SOURCE + st.MPI_TAG;
            }
            SAY("split got=%d", got);
        } else {
            MPI_Send(&me, 1, MPI_INT, 0, hr, half);
        }
        /* intercommunicator between the halves when both exist */
        if (np >= 2) {
            MPI_Comm inter;
            int remote_leader = me % 2 == 0 ? 1 : 0; /* world rank of the other half's leader */
            /* leaders are the highest world rank of each colour (key -me) */
            int lead0 = (np - 1) % 2 == 0 ? np - 1 : np - 2;
            int lead1 = (np - 1) % 2 == 1 ? np - 1 : np - 2;
            remote_leader = me % 2 == 0 ? lead1 : lead0;
            MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 77, &inter);
            int rs;
            MPI_Comm_remote_size(inter, &rs);
            SAY("inter remote size=%d", rs);
            /* local rank i sends to remote rank i if it exists */
            MPI_Request q[2];
            int x = me * 3, y = -1, n = 0;
            if (hr < rs) {
                MPI_Irecv(&y, 1, MPI_INT, hr, 8, inter, &q[n++]);
                MPI_Isend(&x, 1, MPI_INT, hr, 8, inter, &q[n++]);
            }
            MPI_Status sts[2];
            MPI_Waitall(n, q, sts);
            if (n) SAY("inter got=%d from=%d tag=%d", y, sts[0].MPI_SOURCE, sts[0].MPI_TAG);
            int wild = -1;
            if (hr == 0) {
                MPI_Sendrecv(&x, 1, MPI_INT, 0, 9, &wild, 1, MPI_INT, MPI_ANY_SOURCE, 9, inter, &st);
                SAY("inter wild=%d source=%d", wild, st.MPI_SOURCE);
            }
            MPI_Comm_free(&inter);
        }
        MPI_Comm_free(&half);
    }

    MPI_Finalize();
    return 0;
}
