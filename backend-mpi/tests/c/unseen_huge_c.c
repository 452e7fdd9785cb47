/* More elements than an int counts, through the large-count calls:
 * 2^31 + 24 bytes from rank 0 to rank 1 with MPI_Send_c, received with
 * MPI_Recv of one contiguous type of that many bytes (the int form), and
 * back with MPI_Isend of that type, received with MPI_Irecv_c. Counts are
 * shown with MPI_Get_count_c (and MPI_Get_count, MPI_UNDEFINED there). */
#include "common.h"

static const MPI_Count N = ((MPI_Count)1 << 31) + 24;

static void show_big(const char *what, int rc, MPI_Status *st) {
    MPI_Count count = -7;
    int small = -7;
    MPI_Get_count_c(st, MPI_BYTE, &count);
    MPI_Get_count(st, MPI_BYTE, &small);
    SAY("%s rc=%d source=%d tag=%d count_c=%lld count=%d undefined=%d", what, error_class(rc),
        st->MPI_SOURCE, st->MPI_TAG, (long long)count, small, small == MPI_UNDEFINED);
}

static int whole(const unsigned char *v, int salt) {
    int ok = 1;
    for (MPI_Count i = 0; i < N; i += 1000003) ok &= v[i] == (unsigned char)(i * 7 + salt);
    return ok && v[N - 1] == (unsigned char)(salt + 1);
}

static void mark(unsigned char *v, int salt) {
    for (MPI_Count i = 0; i < N; i += 1000003) v[i] = (unsigned char)(i * 7 + salt);
    v[N - 1] = (unsigned char)(salt + 1);
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    if (np != 2) { SAY("needs 2 ranks"); MPI_Finalize(); return 1; }
    unsigned char *v = calloc((size_t)N, 1);
    if (!v) { SAY("no memory"); MPI_Abort(MPI_COMM_WORLD, 3); }
    MPI_Datatype all;
    MPI_Type_contiguous_c(N, MPI_BYTE, &all);
    MPI_Type_commit(&all);
    MPI_Status st;
    MPI_Request rq;
    int rc;
    if (me == 0) {
        mark(v, 3);
        rc = MPI_Send_c(v, N, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        SAY("send_c rc=%d", error_class(rc));
        memset(v, 0, (size_t)N);
        MPI_Irecv_c(v, N, MPI_BYTE, 1, 8, MPI_COMM_WORLD, &rq);
        rc = MPI_Wait(&rq, &st);
        show_big("irecv_c", rc, &st);
        SAY("irecv_c data %s", whole(v, 5) ? "whole" : "wrong");
    } else {
        rc = MPI_Recv(v, 1, all, 0, 7, MPI_COMM_WORLD, &st);
        show_big("recv", rc, &st);
        SAY("recv data %s", whole(v, 3) ? "whole" : "wrong");
        mark(v, 5);
        MPI_Isend(v, 1, all, 0, 8, MPI_COMM_WORLD, &rq);
        rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        SAY("isend rc=%d", error_class(rc));
    }
    MPI_Type_free(&all);
    free(v);
    MPI_Finalize();
    return 0;
}
