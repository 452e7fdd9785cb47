/* More unseen-suite edges: point-to-point and nonblocking-collective
 * requests mixed in one Waitany/Testsome, generalized requests in a
 * Waitall with receives, 1000 outstanding Isends, a struct type of
 * absolute addresses received at MPI_BOTTOM, subarray types, a zero-byte
 * Issend to self, matched probes of large messages received into derived
 * types, an exactly sized Bsend buffer used by Ibsend, Sendrecv_replace
 * with a vector type, and a cancelled persistent receive. 2 ranks or
 * more; ranks above 1 only join the collectives. */
#include "common.h"

static int query_fn(void *extra, MPI_Status *st) {
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    (void)extra;
    return MPI_SUCCESS;
}
static int free_fn(void *extra) { (void)extra; return MPI_SUCCESS; }
static int cancel_fn(void *extra, int complete) { (void)extra; (void)complete; return MPI_SUCCESS; }

int main(int argc, char **argv) {
    start(&argc, &argv);
    MPI_Status st, sts[4];
    int peer = me == 0 ? 1 : 0;
    int active = me < 2;
    int v[64], w[64];
    for (int i = 0; i < 64; i++) v[i] = me * 100 + i;

    /* a nonblocking barrier and a receive in one Waitany, then Testsome */
    {
        MPI_Request q[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        MPI_Ibarrier(MPI_COMM_WORLD, &q[0]);
        if (active) MPI_Irecv(w, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &q[2]);
        if (active) MPI_Send(v, 4, MPI_INT, peer, 1, MPI_COMM_WORLD);
        int n = 0, idx, seen = 0;
        while (n < (active ? 2 : 1)) {
            MPI_Waitany(3, q, &idx, &st);
            if (idx == 2) show_status("mixed waitany recv", 0, &st, MPI_INT);
            seen |= 1 << idx;
            n++;
        }
        SAY("mixed waitany seen=%d", seen);
        int x = me, y = 0, outc, ids[3];
        MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]);
        if (active) MPI_Irecv(w, 4, MPI_INT, peer, 2, MPI_COMM_WORLD, &q[0]);
        if (active) MPI_Send(v, 4, MPI_INT, peer, 2, MPI_COMM_WORLD);
        n = 0;
        while (n < (active ? 2 : 1)) {
            MPI_Testsome(3, q, &outc, ids, sts);
            if (outc == MPI_UNDEFINED) break;
            n += outc;
        }
        SAY("mixed testsome sum=%d", y);
    }

    /* a generalized request beside receives */
    if (active) {
        MPI_Request q[3];
        MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &q[1]);
        MPI_Irecv(w, 3, MPI_INT, peer, 3, MPI_COMM_WORLD, &q[0]);
        MPI_Irecv(w + 3, 3, MPI_INT, peer, 4, MPI_COMM_WORLD, &q[2]);
        MPI_Send(v, 3, MPI_INT, peer, 4, MPI_COMM_WORLD);
        MPI_Send(v + 10, 3, MPI_INT, peer, 3, MPI_COMM_WORLD);
        MPI_Grequest_complete(q[1]);
        MPI_Status s3[3];
        int rc = MPI_Waitall(3, q, s3);
        show_status("grequest recv0", rc, &s3[0], MPI_INT);
        show_status("grequest recv2", rc, &s3[2], MPI_INT);
        SAY("grequest source=%d tag=%d", s3[1].MPI_SOURCE, s3[1].MPI_TAG);
        show_ints("grequest data", w, 6);
    }

    /* 1000 outstanding sends of one int each, received with ANY_TAG */
    if (active) {
        enum { N = 1000 };
        MPI_Request *q = malloc(sizeof(MPI_Request) * N);
        int *s = malloc(sizeof(int) * N), *r = malloc(sizeof(int) * N);
        for (int i = 0; i < N; i++) { s[i] = i * 3 + me; MPI_Isend(&s[i], 1, MPI_INT, peer, i % 7, MPI_COMM_WORLD, &q[i]); }
        long sum = 0, tags = 0;
        for (int i = 0; i < N; i++) {
            MPI_Recv(&r[i], 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            sum += r[i] * (long)(i + 1);
            tags += st.MPI_TAG;
        }
        MPI_Waitall(N, q, MPI_STATUSES_IGNORE);
        SAY("many sum=%ld tags=%ld", sum, tags);
        free(q); free(s); free(r);
    }

    /* absolute addresses at MPI_BOTTOM, both sides */
    if (active) {
        int a = 7 + me; double d = 2.5 * (me + 1); char c[3] = {'x', 'y', (char)('0' + me)};
        int ra = 0; double rd = 0; char rc3[3] = {0};
        MPI_Aint disp[3];
        MPI_Get_address(&a, &disp[0]); MPI_Get_address(&d, &disp[1]); MPI_Get_address(c, &disp[2]);
        int bl[3] = {1, 1, 3};
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, sendt, recvt;
        MPI_Type_create_struct(3, bl, disp, ty, &sendt);
        MPI_Type_commit(&sendt);
        MPI_Get_address(&ra, &disp[0]); MPI_Get_address(&rd, &disp[1]); MPI_Get_address(rc3, &disp[2]);
        MPI_Type_create_struct(3, bl, disp, ty, &recvt);
        MPI_Type_commit(&recvt);
        MPI_Sendrecv(MPI_BOTTOM, 1, sendt, peer, 5, MPI_BOTTOM, 1, recvt, peer, 5, MPI_COMM_WORLD, &st);
        show_status("bottom", 0, &st, recvt);
        SAY("bottom got %d %.2f %c%c%c", ra, rd, rc3[0], rc3[1], rc3[2]);
        MPI_Type_free(&sendt); MPI_Type_free(&recvt);
    }

    /* a subarray: the 3x4 middle of a 6x8 grid, received contiguous */
    if (active) {
        int grid[48], inner[12] = {0};
        for (int i = 0; i < 48; i++) grid[i] = i + 1000 * me;
        int sizes[2] = {6, 8}, sub[2] = {3, 4}, starts[2] = {2, 3};
        MPI_Datatype sa;
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &sa);
        MPI_Type_commit(&sa);
        MPI_Request q;
        MPI_Irecv(inner, 12, MPI_INT, peer, 6, MPI_COMM_WORLD, &q);
        MPI_Send(grid, 1, sa, peer, 6, MPI_COMM_WORLD);
        MPI_Wait(&q, &st);
        show_status("subarray", 0, &st, sa);
        show_ints("subarray data", inner, 12);
        MPI_Type_free(&sa);
    }

    /* zero-byte Issend to self */
    {
        MPI_Request q[2];
        MPI_Irecv(NULL, 0, MPI_INT, 0, 7, MPI_COMM_SELF, &q[0]);
        MPI_Issend(NULL, 0, MPI_INT, 0, 7, MPI_COMM_SELF, &q[1]);
        MPI_Waitall(2, q, sts);
        show_status("self issend", 0, &sts[0], MPI_INT);
    }

    /* matched probe of a large message, received into a vector type */
    if (active) {
        enum { L = 50000 };
        int *big = malloc(sizeof(int) * 2 * L);
        for (int i = 0; i < 2 * L; i++) big[i] = i ^ (me << 4);
        MPI_Request q;
        MPI_Isend(big, L, MPI_INT, peer, 8, MPI_COMM_WORLD, &q);
        MPI_Message m;
        MPI_Mprobe(peer, 8, MPI_COMM_WORLD, &m, &st);
        int n;
        MPI_Get_count(&st, MPI_INT, &n);
        MPI_Datatype every2;
        MPI_Type_vector(n, 1, 2, MPI_INT, &every2);
        MPI_Type_commit(&every2);
        int *dst = calloc(2 * L, sizeof(int));
        MPI_Mrecv(dst, 1, every2, &m, &st);
        show_status("mrecv big", 0, &st, MPI_INT);
        long s = 0;
        for (int i = 0; i < 2 * L; i++) s += (long)dst[i] * (i % 5 + 1);
        SAY("mrecv big n=%d sum=%ld", n, s);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Type_free(&every2);
        free(big); free(dst);
    }

    /* Ibsend with a buffer sized exactly for its two messages */
    if (active) {
        int s1, s2;
        MPI_Pack_size(5, MPI_INT, MPI_COMM_WORLD, &s1);
        MPI_Pack_size(3000, MPI_DOUBLE, MPI_COMM_WORLD, &s2);
        int bsize = s1 + s2 + 2 * MPI_BSEND_OVERHEAD;
        char *b = malloc(bsize);
        MPI_Buffer_attach(b, bsize);
        double *dv = malloc(sizeof(double) * 3000), *dr = malloc(sizeof(double) * 3000);
        for (int i = 0; i < 3000; i++) dv[i] = i * 0.5 + me;
        MPI_Request q[2];
        int rc1 = MPI_Ibsend(v, 5, MPI_INT, peer, 9, MPI_COMM_WORLD, &q[0]);
        int rc2 = MPI_Ibsend(dv, 3000, MPI_DOUBLE, peer, 10, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        MPI_Recv(w, 5, MPI_INT, peer, 9, MPI_COMM_WORLD, &st);
        MPI_Recv(dr, 3000, MPI_DOUBLE, peer, 10, MPI_COMM_WORLD, &st);
        SAY("ibsend exact rc=%d %d got %d %.1f", error_class(rc1), error_class(rc2), w[4], dr[2999]);
        void *d; int ds;
        MPI_Buffer_detach(&d, &ds);
        SAY("ibsend detach size=%d", ds == bsize);
        free(b); free(dv); free(dr);
    }

    /* Sendrecv_replace through a vector type */
    if (active) {
        int buf[20];
        for (int i = 0; i < 20; i++) buf[i] = me * 100 + i;
        MPI_Datatype vt;
        MPI_Type_vector(5, 2, 4, MPI_INT, &vt);
        MPI_Type_commit(&vt);
        MPI_Sendrecv_replace(buf, 1, vt, peer, 11, peer, 11, MPI_COMM_WORLD, &st);
        show_status("replace vector", 0, &st, MPI_INT);
        show_ints("replace vector data", buf, 20);
        MPI_Type_free(&vt);
    }

    /* a persistent receive cancelled while active, then freed */
    if (active) {
        MPI_Request q;
        MPI_Recv_init(w, 4, MPI_INT, peer, 12345, MPI_COMM_WORLD, &q);
        MPI_Start(&q);
        MPI_Cancel(&q);
        MPI_Wait(&q, &st);
        int c;
        MPI_Test_cancelled(&st, &c);
        SAY("persistent cancel cancelled=%d inactive-kept=%d", c, q != MPI_REQUEST_NULL);
        MPI_Request_free(&q);
    }
    MPI_Finalize();
    return 0;
}
