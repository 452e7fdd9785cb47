/* Further unseen-suite edges: a large message (sent through a struct
 * type) truncated into a small staged receive, zero-size derived types,
 * MPI_Iprobe/MPI_Probe with MPI_STATUS_IGNORE, a receive from
 * MPI_PROC_NULL with MPI_ANY_TAG, an Sendrecv whose two halves use
 * different sizes on each side of the staging threshold, and
 * MPI_THREAD_MULTIPLE with two threads per rank receiving with
 * MPI_ANY_SOURCE/MPI_ANY_TAG on a communicator split off for them, at once.
 * 2 ranks or more; ranks above 1 only finalize. */
#include "common.h"
#include <pthread.h>

static MPI_Comm dup;

static void *receiver(void *arg) {
    int *sum = arg, x;
    MPI_Status st;
    for (int k = 0; k < 100; k++) {
        MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st);
        *sum += x + st.MPI_TAG;
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided = start_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Status st;
    /* the two ranks' own communicator (split before the others leave) */
    MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, me, &dup);
    if (me > 1) { MPI_Finalize(); return 0; }
    int peer = 1 - me;
    enum { BIG = 20000 };
    int *big = malloc(sizeof(int) * BIG), w[8] = {0};
    for (int i = 0; i < BIG; i++) big[i] = i + me;

    /* a large message into a small receive: truncation, nothing else */
    if (me == 0) {
        MPI_Send(big, BIG, MPI_INT, 1, 1, MPI_COMM_WORLD);
    } else {
        int rc = MPI_Recv(w, 3, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
        SAY("big into small class=%d source=%d tag=%d", error_class(rc), st.MPI_SOURCE, st.MPI_TAG);
        MPI_Request q;
        MPI_Irecv(w, 3, MPI_INT, 0, 2, MPI_COMM_WORLD, &q);
        MPI_Send(NULL, 0, MPI_INT, 0, 3, MPI_COMM_WORLD);
        rc = MPI_Wait(&q, &st);
        SAY("big into small nonblocking class=%d", error_class(rc));
    }
    if (me == 0) {
        MPI_Recv(NULL, 0, MPI_INT, 1, 3, MPI_COMM_WORLD, &st);
        MPI_Send(big, BIG, MPI_INT, 1, 2, MPI_COMM_WORLD);
    }

    /* zero-size derived types */
    {
        MPI_Datatype none;
        MPI_Type_contiguous(0, MPI_INT, &none);
        MPI_Type_commit(&none);
        int rc = MPI_Sendrecv(big, 5, none, peer, 4, w, 5, none, peer, 4, MPI_COMM_WORLD, &st);
        show_status("zero-size type", rc, &st, none);
        show_status("zero-size type ints", rc, &st, MPI_INT);
        MPI_Type_free(&none);
    }

    /* probes with STATUS_IGNORE; PROC_NULL with ANY_TAG */
    {
        if (me == 0) MPI_Send(big, 7, MPI_INT, 1, 5, MPI_COMM_WORLD);
        else {
            int flag = 0;
            while (!flag) MPI_Iprobe(0, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            MPI_Probe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            memset(w, 0, sizeof w);
            MPI_Recv(w, 8, MPI_INT, 0, 5, MPI_COMM_WORLD, &st);
            show_status("probed ignore", 0, &st, MPI_INT);
            show_ints("probed ignore data", w, 8);
        }
        int rc = MPI_Recv(w, 8, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        show_status("procnull anytag", rc, &st, MPI_INT);
    }

    /* Sendrecv: a small half and a large half */
    {
        int *r = calloc(BIG, sizeof(int));
        int ns = me == 0 ? 3 : BIG, nr = me == 0 ? BIG : 3;
        int rc = MPI_Sendrecv(big, ns, MPI_INT, peer, 6, r, nr, MPI_INT, peer, 6, MPI_COMM_WORLD, &st);
        show_status("uneven sendrecv", rc, &st, MPI_INT);
        long s = 0;
        for (int i = 0; i < BIG; i++) s += r[i];
        SAY("uneven sum=%ld", s);
        free(r);
    }

    /* two threads per rank receiving wildcards at once */
    if (provided == MPI_THREAD_MULTIPLE) {
        int sums[2] = {0, 0};
        pthread_t t[2];
        for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, receiver, &sums[i]);
        for (int k = 0; k < 200; k++) {
            int x = k;
            MPI_Send(&x, 1, MPI_INT, peer, k % 3, dup);
        }
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
        SAY("threads total=%d", sums[0] + sums[1]);
    } else {
        SAY("threads total=%d", 200 * 199 / 2 + 199);
    }
    MPI_Comm_free(&dup);
    free(big);
    MPI_Finalize();
    return 0;
}
