/*
 * coll_large.c: the large-count (MPI_Count, MPI 4.0) binding of every
 * collective, blocking and nonblocking, each once with small counts and
 * its result checked: bcast, gather(v), scatter(v), allgather(v),
 * alltoall(v,w), reduce, allreduce, reduce_scatter(_block), scan, exscan,
 * and the neighbourhood ones on a periodic ring (on 2 ranks both
 * neighbours are the other rank, and which of its two elements lands
 * where is MPICH's choice: not checked). Only rank 0 prints; the
 * exit status is non-zero if any check failed.
 *
 *   mpicc -O1 coll_large.c -o coll_large && mpiexec -n 3 ./coll_large
 */
#include "coll_common.h"

#define MAXR 8

/* Runs the blocking call, or its nonblocking twin completed by MPI_Wait. */
#define BOTH(nb, blocking, nonblocking)                                       \
    do {                                                                       \
        if (nb) {                                                              \
            MPI_Request req_;                                                  \
            must(nonblocking, #nonblocking);                                   \
            must(MPI_Wait(&req_, MPI_STATUS_IGNORE), "wait " #nonblocking);   \
        } else {                                                               \
            must(blocking, #blocking);                                         \
        }                                                                      \
    } while (0)

static long long round_of(int nb) {
    long long s = 0;
    int one[MAXR], all[MAXR * MAXR], got[MAXR * MAXR];
    MPI_Count counts[MAXR], ones[MAXR];
    MPI_Aint displs[MAXR], bytes[MAXR];
    MPI_Datatype ints[MAXR];
    for (int r = 0; r < size; r++) {
        counts[r] = 1;
        ones[r] = 1;
        displs[r] = r;
        bytes[r] = (MPI_Aint)(r * (int)sizeof(int));
        ints[r] = MPI_INT;
        one[r] = val(rank, r);
    }
    int x = rank == 1 ? 77 + nb : -1;
    BOTH(nb, MPI_Bcast_c(&x, 1, MPI_INT, 1, MPI_COMM_WORLD),
         MPI_Ibcast_c(&x, 1, MPI_INT, 1, MPI_COMM_WORLD, &req_));
    CHECK(x == 77 + nb);
    s += x;
    int mine = val(rank, 5);
    BOTH(nb, MPI_Gather_c(&mine, 1, MPI_INT, got, 1, MPI_INT, 0, MPI_COMM_WORLD),
         MPI_Igather_c(&mine, 1, MPI_INT, got, 1, MPI_INT, 0, MPI_COMM_WORLD, &req_));
    if (rank == 0)
        for (int r = 0; r < size; r++) CHECK(got[r] == val(r, 5));
    BOTH(nb, MPI_Gatherv_c(&mine, 1, MPI_INT, got, counts, displs, MPI_INT, 0, MPI_COMM_WORLD),
         MPI_Igatherv_c(&mine, 1, MPI_INT, got, counts, displs, MPI_INT, 0, MPI_COMM_WORLD,
                        &req_));
    if (rank == 0)
        for (int r = 0; r < size; r++) CHECK(got[r] == val(r, 5));
    for (int r = 0; r < size; r++) all[r] = val(0, 20 + r);
    x = -1;
    BOTH(nb, MPI_Scatter_c(all, 1, MPI_INT, &x, 1, MPI_INT, 0, MPI_COMM_WORLD),
         MPI_Iscatter_c(all, 1, MPI_INT, &x, 1, MPI_INT, 0, MPI_COMM_WORLD, &req_));
    CHECK(x == val(0, 20 + rank));
    x = -1;
    BOTH(nb, MPI_Scatterv_c(all, counts, displs, MPI_INT, &x, 1, MPI_INT, 0, MPI_COMM_WORLD),
         MPI_Iscatterv_c(all, counts, displs, MPI_INT, &x, 1, MPI_INT, 0, MPI_COMM_WORLD,
                         &req_));
    CHECK(x == val(0, 20 + rank));
    s += x;
    BOTH(nb, MPI_Allgather_c(&mine, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD),
         MPI_Iallgather_c(&mine, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD, &req_));
    for (int r = 0; r < size; r++) CHECK(got[r] == val(r, 5));
    BOTH(nb, MPI_Allgatherv_c(&mine, 1, MPI_INT, got, counts, displs, MPI_INT, MPI_COMM_WORLD),
         MPI_Iallgatherv_c(&mine, 1, MPI_INT, got, counts, displs, MPI_INT, MPI_COMM_WORLD,
                           &req_));
    for (int r = 0; r < size; r++) CHECK(got[r] == val(r, 5));
    BOTH(nb, MPI_Alltoall_c(one, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD),
         MPI_Ialltoall_c(one, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD, &req_));
    for (int r = 0; r < size; r++) CHECK(got[r] == val(r, rank));
    BOTH(nb,
         MPI_Alltoallv_c(one, ones, displs, MPI_INT, got, ones, displs, MPI_INT, MPI_COMM_WORLD),
         MPI_Ialltoallv_c(one, ones, displs, MPI_INT, got, ones, displs, MPI_INT, MPI_COMM_WORLD,
                          &req_));
    for (int r = 0; r < size; r++) CHECK(got[r] == val(r, rank));
    BOTH(nb,
         MPI_Alltoallw_c(one, ones, bytes, ints, got, ones, bytes, ints, MPI_COMM_WORLD),
         MPI_Ialltoallw_c(one, ones, bytes, ints, got, ones, bytes, ints, MPI_COMM_WORLD,
                          &req_));
    for (int r = 0; r < size; r++) CHECK(got[r] == val(r, rank));
    s += sum_ints(got, size);
    int sum = -1, want = 0;
    for (int r = 0; r < size; r++) want += val(r, 5);
    BOTH(nb, MPI_Reduce_c(&mine, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD),
         MPI_Ireduce_c(&mine, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &req_));
    if (rank == 0) CHECK(sum == want);
    sum = -1;
    BOTH(nb, MPI_Allreduce_c(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Iallreduce_c(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_));
    CHECK(sum == want);
    s += sum;
    for (int r = 0; r < size; r++) one[r] = r + rank;
    x = -1;
    BOTH(nb, MPI_Reduce_scatter_c(one, &x, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Ireduce_scatter_c(one, &x, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_));
    CHECK(x == size * rank + size * (size - 1) / 2);
    x = -1;
    BOTH(nb, MPI_Reduce_scatter_block_c(one, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Ireduce_scatter_block_c(one, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_));
    CHECK(x == size * rank + size * (size - 1) / 2);
    s += x;
    BOTH(nb, MPI_Scan_c(&rank, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Iscan_c(&rank, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_));
    CHECK(x == rank * (rank + 1) / 2);
    x = -1;
    BOTH(nb, MPI_Exscan_c(&rank, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Iexscan_c(&rank, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_));
    if (rank > 0) CHECK(x == rank * (rank - 1) / 2);
    s += x;

    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    must(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring), "cart_create");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int two[2] = {val(rank, 1), val(rank, 2)}, in2[2];
    MPI_Count c2[2] = {1, 1};
    MPI_Aint d2[2] = {0, 1}, b2[2] = {0, sizeof(int)};
    MPI_Datatype t2[2] = {MPI_INT, MPI_INT};
    BOTH(nb, MPI_Neighbor_allgather_c(&mine, 1, MPI_INT, in2, 1, MPI_INT, ring),
         MPI_Ineighbor_allgather_c(&mine, 1, MPI_INT, in2, 1, MPI_INT, ring, &req_));
    CHECK(in2[0] == val(left, 5) && in2[1] == val(right, 5));
    BOTH(nb, MPI_Neighbor_allgatherv_c(&mine, 1, MPI_INT, in2, c2, d2, MPI_INT, ring),
         MPI_Ineighbor_allgatherv_c(&mine, 1, MPI_INT, in2, c2, d2, MPI_INT, ring, &req_));
    CHECK(in2[0] == val(left, 5) && in2[1] == val(right, 5));
    BOTH(nb, MPI_Neighbor_alltoall_c(two, 1, MPI_INT, in2, 1, MPI_INT, ring),
         MPI_Ineighbor_alltoall_c(two, 1, MPI_INT, in2, 1, MPI_INT, ring, &req_));
    CHECK(size == 2 || (in2[0] == val(left, 2) && in2[1] == val(right, 1)));
    BOTH(nb, MPI_Neighbor_alltoallv_c(two, c2, d2, MPI_INT, in2, c2, d2, MPI_INT, ring),
         MPI_Ineighbor_alltoallv_c(two, c2, d2, MPI_INT, in2, c2, d2, MPI_INT, ring, &req_));
    CHECK(size == 2 || (in2[0] == val(left, 2) && in2[1] == val(right, 1)));
    BOTH(nb, MPI_Neighbor_alltoallw_c(two, c2, b2, t2, in2, c2, b2, t2, ring),
         MPI_Ineighbor_alltoallw_c(two, c2, b2, t2, in2, c2, b2, t2, ring, &req_));
    CHECK(size == 2 || (in2[0] == val(left, 2) && in2[1] == val(right, 1)));
    if (size > 2) s += in2[0] + 3LL * in2[1];
    MPI_Comm_free(&ring);
    return s;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > MAXR) MPI_Abort(MPI_COMM_WORLD, 2);
    result("blocking", round_of(0));
    result("nonblocking", round_of(1));
    return finish("coll_large");
}
