/* Unseen-suite style derived datatypes on point-to-point: vector,
 * indexed, a struct with holes, resized types, a negative lower bound,
 * MPI_Type_dup, a type freed while its request is pending (allowed,
 * MPI 4.0 §5.1.11), and MPI_Get_elements on a partial derived type.
 * 2 ranks or more; ranks above 1 only take part in MPI_Finalize. */
#include <stddef.h>
#include "common.h"

struct item { char c; double d; int i; };

int main(int argc, char **argv) {
    start(&argc, &argv);
    MPI_Status st;
    if (me > 1) { MPI_Finalize(); return 0; }
    int peer = 1 - me;
    int a[200], b[200];
    for (int i = 0; i < 200; i++) a[i] = me * 1000 + i;

    /* vector: every third int, 7 blocks of 2 */
    MPI_Datatype vec;
    MPI_Type_vector(7, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    /* indexed */
    MPI_Datatype idx;
    int lens[3] = {1, 3, 2}, disp[3] = {10, 2, 20};
    MPI_Type_indexed(3, lens, disp, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    /* struct with holes */
    MPI_Datatype str;
    int sl[3] = {1, 1, 1};
    MPI_Aint sd[3] = {offsetof(struct item, c), offsetof(struct item, d), offsetof(struct item, i)};
    MPI_Datatype stt[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MPI_Type_create_struct(3, sl, sd, stt, &str);
    MPI_Datatype item;
    MPI_Type_create_resized(str, 0, sizeof(struct item), &item);
    MPI_Type_commit(&item);
    MPI_Type_free(&str);
    /* negative lower bound: an int at -4 bytes and one at +4 */
    MPI_Datatype neg;
    int nl[2] = {1, 1};
    MPI_Aint nd[2] = {-(MPI_Aint)sizeof(int), sizeof(int)};
    MPI_Datatype nt[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, nl, nd, nt, &neg);
    MPI_Type_commit(&neg);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(neg, &lb, &ext);
    SAY("neg lb=%ld extent=%ld", (long)lb, (long)ext);
    /* resized to a larger extent */
    MPI_Datatype wide;
    MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &wide);
    MPI_Type_commit(&wide);

    for (int round = 0; round < 2; round++) {
        int sender = round;          /* both directions */
        if (me == sender) {
            MPI_Send(a, 2, vec, peer, 1, MPI_COMM_WORLD);
            MPI_Send(a, 2, idx, peer, 2, MPI_COMM_WORLD);
            struct item it[5];
            for (int k = 0; k < 5; k++) { it[k].c = 'a' + k + me; it[k].d = k * 1.5 + me; it[k].i = -k - me; }
            MPI_Send(it, 5, item, peer, 3, MPI_COMM_WORLD);
            MPI_Send(a + 10, 3, neg, peer, 4, MPI_COMM_WORLD);
            MPI_Send(a, 9, wide, peer, 5, MPI_COMM_WORLD);
            /* non-contiguous, large: 30000 vectors */
            MPI_Datatype big;
            MPI_Type_vector(30000, 1, 2, MPI_INT, &big);
            MPI_Type_commit(&big);
            int *src = malloc(sizeof(int) * 60000);
            for (int i = 0; i < 60000; i++) src[i] = i ^ me;
            MPI_Send(src, 1, big, peer, 6, MPI_COMM_WORLD);
            MPI_Type_free(&big);
            free(src);
            /* partial: 5 ints received as 2-int vectors */
            MPI_Send(a, 5, MPI_INT, peer, 7, MPI_COMM_WORLD);
        } else {
            memset(b, 0, sizeof b);
            MPI_Recv(b, 2, vec, peer, 1, MPI_COMM_WORLD, &st);
            show_status("vec", 0, &st, vec);
            show_status("vec ints", 0, &st, MPI_INT);
            show_ints("vec data", b, 42);
            memset(b, 0, sizeof b);
            MPI_Recv(b, 12, MPI_INT, peer, 2, MPI_COMM_WORLD, &st);
            show_status("idx as ints", 0, &st, MPI_INT);
            show_status("idx as idx", 0, &st, idx);
            show_ints("idx data", b, 12);
            struct item it[6];
            memset(it, 0, sizeof it);
            MPI_Recv(it, 6, item, peer, 3, MPI_COMM_WORLD, &st);
            show_status("item", 0, &st, item);
            show_status("item bytes", 0, &st, MPI_BYTE);
            for (int k = 0; k < 6; k++) SAY("item %d %c %.1f %d", k, it[k].c ? it[k].c : '-', it[k].d, it[k].i);
            memset(b, 0, sizeof b);
            MPI_Recv(b + 10, 3, neg, peer, 4, MPI_COMM_WORLD, &st);
            show_status("neg", 0, &st, neg);
            show_ints("neg data", b, 20);
            memset(b, 0, sizeof b);
            MPI_Recv(b, 9, wide, peer, 5, MPI_COMM_WORLD, &st);
            show_status("wide", 0, &st, wide);
            show_ints("wide data", b, 27);
            int *dst = calloc(30000, sizeof(int));
            MPI_Recv(dst, 30000, MPI_INT, peer, 6, MPI_COMM_WORLD, &st);
            show_status("bigvec", 0, &st, MPI_INT);
            long s = 0;
            for (int i = 0; i < 30000; i++) s += dst[i] * (long)(i % 7 + 1);
            SAY("bigvec sum=%ld", s);
            free(dst);
            MPI_Datatype pair;
            MPI_Type_contiguous(2, MPI_INT, &pair);
            MPI_Type_commit(&pair);
            memset(b, 0, sizeof b);
            MPI_Recv(b, 4, pair, peer, 7, MPI_COMM_WORLD, &st);
            show_status("partial pair", 0, &st, pair);
            show_status("partial int", 0, &st, MPI_INT);
            MPI_Type_free(&pair);
        }
    }

    /* Type_dup, and a type freed while its nonblocking operations are pending */
    {
        MPI_Datatype dup;
        MPI_Type_dup(vec, &dup);
        MPI_Datatype tmp;
        MPI_Type_vector(14, 1, 2, MPI_INT, &tmp);
        MPI_Type_commit(&tmp);
        MPI_Request q[2];
        memset(b, 0, sizeof b);
        MPI_Irecv(b, 1, tmp, peer, 8, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(a, 1, dup, peer, 8, MPI_COMM_WORLD, &q[1]);
        MPI_Type_free(&tmp);
        MPI_Type_free(&dup);
        SAY("freed null=%d %d", tmp == MPI_DATATYPE_NULL, dup == MPI_DATATYPE_NULL);
        MPI_Status sts[2];
        int rc = MPI_Waitall(2, q, sts);
        SAY("pending-free rc=%d", error_class(rc));
        show_status("pending-free", 0, &sts[0], MPI_INT);
        show_ints("pending-free data", b, 28);
        /* a new type right after, perhaps reusing the freed handles */
        MPI_Datatype again;
        MPI_Type_contiguous(3, MPI_INT, &again);
        MPI_Type_commit(&again);
        memset(b, 0, sizeof b);
        MPI_Sendrecv(a, 2, again, peer, 9, b, 2, again, peer, 9, MPI_COMM_WORLD, &st);
        show_status("again", 0, &st, again);
        show_ints("again data", b, 6);
        MPI_Type_free(&again);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    MPI_Type_free(&item);
    MPI_Type_free(&neg);
    MPI_Type_free(&wide);
    MPI_Finalize();
    return 0;
}
