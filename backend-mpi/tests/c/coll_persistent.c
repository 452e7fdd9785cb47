/*
 * coll_persistent.c: the persistent collectives of MPI 4.0 (§6.13, §8.8),
 * every one in its int and its large-count (_c) binding: barrier, bcast,
 * gather(v), scatter(v), allgather(v), alltoall(v,w), reduce, allreduce,
 * reduce_scatter(_block), scan, exscan, and the neighbourhood ones on a
 * periodic ring. The requests are made once and run for three rounds on
 * 2 ranks (the first only on more, see below) with new data each round,
 * their results checked:
 *
 *   round 0: MPI_Start and MPI_Wait one by one;
 *   round 1: one MPI_Startall, one MPI_Waitall;
 *   round 2: MPI_Startall in two halves, MPI_Test of each in reverse order
 *            until done, then MPI_Request_get_status of the first (still
 *            complete).
 *
 * MPICH 4.0.2 gets some of this wrong without heisen (later MPICH fixed
 * it: its issues 6423 and 7078): a persistent gather and allgather send
 * the data their buffers held at MPI_*_init, a persistent scatter fails
 * its second start on 3 ranks or more, a persistent scatterv alive beside
 * the others spoils their results on 4 ranks, and MPI_Testall, MPI_Waitany
 * and MPI_Waitsome over persistent collectives report requests done that
 * are not (or fail an assertion), and an MPI_Wait of a persistent
 * collective never started does not return. Those four operations (ONCE) are made
 * separately with their data in place and started once; the rounds
 * complete with MPI_Wait, MPI_Waitall and MPI_Test. And with many
 * persistent collectives active at once on 4 ranks, even on communicators
 * of their own, MPICH 4.0.2 now and then delivers one rank's block of a
 * gatherv from another collective's data (1 run in 30 for rounds 1 and 2
 * with heisen, which doubles the persistent collectives active; a plain
 * program making the same extra ones fails alike): on 3 ranks and more
 * only round 0, one collective active at a time, runs.
 *
 * Then every request is freed. Last, rank 0 alone fills heisen's request
 * table with pending receives from itself (its 4096 slots)
 * before a persistent barrier is made on every rank: the barrier must
 * still merge on every rank (a rank that tracked it and one that did not
 * would leave heisen's exchange waiting), and heisen reports it as kept
 * beyond the table. Then a persistent gather whose initialisation fails
 * on the root alone (a negative count, under MPI_ERRORS_RETURN: MPICH
 * checks it there only) is freed on the others, and an allreduce on its
 * communicator must still give every rank the sum (heisen's agreement at
 * the initialisation must count the failed rank in). And a persistent
 * allreduce is left for MPI_Finalize,
 * run and never freed (a program may finalize with inactive persistent
 * requests: heisen's own exchange for it must go too, or MPICH reports
 * heisen's datatype leaked on stderr). Only rank 0 prints; the exit status
 * is non-zero if a check failed.
 *
 *   mpicc -O1 coll_persistent.c -o coll_persistent && mpiexec -n 3 ./coll_persistent
 */
#include "coll_common.h"

#define MAXR 8
#define OPS 22 /* persistent collectives per binding */
#define ROUNDS 3
#define PENDING 4096 /* receives rank 0 leaves pending at the end: heisen's slots */
#define GATHER 2
#define SCATTER 4
#define ALLGATHER 6
#define SCATTERV 5
#define ONCE (1u << GATHER | 1u << SCATTER | 1u << SCATTERV | 1u << ALLGATHER)

/* One binding's buffers (all ranks' inputs are functions of the round). */
struct bufs {
    int x, one[MAXR], got[MAXR][MAXR], mine[MAXR], two[MAXR][2], in2[MAXR][2], sum[4];
    int counts[MAXR], displs[MAXR], bytes[MAXR];
    MPI_Count ccounts[MAXR], c2[2];
    MPI_Aint cdispls[MAXR], cbytes[MAXR], d2[2], b2[2];
    int i2[2], id2[2], ib2[2];
    MPI_Datatype ints[MAXR], t2[2];
};

static MPI_Comm ring;
static int left, right;

/* The operations of a set `ops` (bit i: operation i) that are made. */
static unsigned ops;
#define ON(i) (ops >> (i) & 1u)

/* Make operation i (r[i]) by `call` (an int-binding init) or `ccall` (its
 * _c twin) if it is in the set; else r[i] is MPI_REQUEST_NULL. */
#define INIT(i, large, call, ccall)                                            \
    do {                                                                       \
        r[i] = MPI_REQUEST_NULL;                                               \
        if (!ON(i))                                                            \
            break;                                                             \
        if (large)                                                             \
            must(ccall, #ccall);                                               \
        else                                                                   \
            must(call, #call);                                                 \
    } while (0)

static void make(int large, struct bufs *b, MPI_Request *r) {
    MPI_Info in = MPI_INFO_NULL;
    MPI_Comm w = MPI_COMM_WORLD;
    for (int i = 0; i < MAXR; i++) {
        b->counts[i] = 1;
        b->displs[i] = i;
        b->bytes[i] = i * (int)sizeof(int);
        b->ccounts[i] = 1;
        b->cdispls[i] = i;
        b->cbytes[i] = i * (MPI_Aint)sizeof(int);
        b->ints[i] = MPI_INT;
    }
    for (int i = 0; i < 2; i++) {
        b->c2[i] = 1;
        b->d2[i] = i;
        b->b2[i] = i * (MPI_Aint)sizeof(int);
        b->i2[i] = 1;
        b->id2[i] = i;
        b->ib2[i] = i * (int)sizeof(int);
        b->t2[i] = MPI_INT;
    }
    int root = 1 % size;
    r[0] = MPI_REQUEST_NULL; /* MPI_Barrier_init has no _c form */
    if (!large && ON(0)) must(MPI_Barrier_init(w, in, &r[0]), "barrier_init");
    INIT(1, large, MPI_Bcast_init(&b->x, 1, MPI_INT, root, w, in, &r[1]),
         MPI_Bcast_init_c(&b->x, 1, MPI_INT, root, w, in, &r[1]));
    INIT(2, large, MPI_Gather_init(&b->mine[0], 1, MPI_INT, b->got[0], 1, MPI_INT, 0, w, in, &r[2]),
         MPI_Gather_init_c(&b->mine[0], 1, MPI_INT, b->got[0], 1, MPI_INT, 0, w, in, &r[2]));
    INIT(3, large,
         MPI_Gatherv_init(&b->mine[1], 1, MPI_INT, b->got[1], b->counts, b->displs, MPI_INT, 0, w,
                          in, &r[3]),
         MPI_Gatherv_init_c(&b->mine[1], 1, MPI_INT, b->got[1], b->ccounts, b->cdispls, MPI_INT,
                            0, w, in, &r[3]));
    INIT(4, large,
         MPI_Scatter_init(b->got[2], 1, MPI_INT, &b->mine[2], 1, MPI_INT, 0, w, in, &r[4]),
         MPI_Scatter_init_c(b->got[2], 1, MPI_INT, &b->mine[2], 1, MPI_INT, 0, w, in, &r[4]));
    INIT(5, large,
         MPI_Scatterv_init(b->got[3], b->counts, b->displs, MPI_INT, &b->mine[3], 1, MPI_INT, 0,
                           w, in, &r[5]),
         MPI_Scatterv_init_c(b->got[3], b->ccounts, b->cdispls, MPI_INT, &b->mine[3], 1, MPI_INT,
                             0, w, in, &r[5]));
    INIT(6, large,
         MPI_Allgather_init(&b->mine[4], 1, MPI_INT, b->got[4], 1, MPI_INT, w, in, &r[6]),
         MPI_Allgather_init_c(&b->mine[4], 1, MPI_INT, b->got[4], 1, MPI_INT, w, in, &r[6]));
    INIT(7, large,
         MPI_Allgatherv_init(&b->mine[4], 1, MPI_INT, b->got[5], b->counts, b->displs, MPI_INT, w,
                             in, &r[7]),
         MPI_Allgatherv_init_c(&b->mine[4], 1, MPI_INT, b->got[5], b->ccounts, b->cdispls,
                               MPI_INT, w, in, &r[7]));
    INIT(8, large, MPI_Alltoall_init(b->one, 1, MPI_INT, b->got[6], 1, MPI_INT, w, in, &r[8]),
         MPI_Alltoall_init_c(b->one, 1, MPI_INT, b->got[6], 1, MPI_INT, w, in, &r[8]));
    INIT(9, large,
         MPI_Alltoallv_init(b->one, b->counts, b->displs, MPI_INT, b->got[7], b->counts,
                            b->displs, MPI_INT, w, in, &r[9]),
         MPI_Alltoallv_init_c(b->one, b->ccounts, b->cdispls, MPI_INT, b->got[7], b->ccounts,
                              b->cdispls, MPI_INT, w, in, &r[9]));
    INIT(10, large,
         MPI_Alltoallw_init(b->one, b->counts, b->bytes, b->ints, b->got[8], b->counts, b->bytes,
                            b->ints, w, in, &r[10]),
         MPI_Alltoallw_init_c(b->one, b->ccounts, b->cbytes, b->ints, b->got[8], b->ccounts,
                              b->cbytes, b->ints, w, in, &r[10]));
    INIT(11, large, MPI_Reduce_init(&b->mine[4], &b->sum[0], 1, MPI_INT, MPI_SUM, 0, w, in, &r[11]),
         MPI_Reduce_init_c(&b->mine[4], &b->sum[0], 1, MPI_INT, MPI_SUM, 0, w, in, &r[11]));
    INIT(12, large, MPI_Allreduce_init(&b->mine[4], &b->sum[1], 1, MPI_INT, MPI_SUM, w, in, &r[12]),
         MPI_Allreduce_init_c(&b->mine[4], &b->sum[1], 1, MPI_INT, MPI_SUM, w, in, &r[12]));
    INIT(13, large,
         MPI_Reduce_scatter_init(b->one, &b->mine[5], b->counts, MPI_INT, MPI_SUM, w, in, &r[13]),
         MPI_Reduce_scatter_init_c(b->one, &b->mine[5], b->ccounts, MPI_INT, MPI_SUM, w, in,
                                   &r[13]));
    INIT(14, large,
         MPI_Reduce_scatter_block_init(b->one, &b->mine[6], 1, MPI_INT, MPI_SUM, w, in, &r[14]),
         MPI_Reduce_scatter_block_init_c(b->one, &b->mine[6], 1, MPI_INT, MPI_SUM, w, in,
                                         &r[14]));
    INIT(15, large, MPI_Scan_init(&b->mine[4], &b->sum[2], 1, MPI_INT, MPI_SUM, w, in, &r[15]),
         MPI_Scan_init_c(&b->mine[4], &b->sum[2], 1, MPI_INT, MPI_SUM, w, in, &r[15]));
    INIT(16, large, MPI_Exscan_init(&b->mine[4], &b->sum[3], 1, MPI_INT, MPI_SUM, w, in, &r[16]),
         MPI_Exscan_init_c(&b->mine[4], &b->sum[3], 1, MPI_INT, MPI_SUM, w, in, &r[16]));
    INIT(17, large,
         MPI_Neighbor_allgather_init(&b->mine[4], 1, MPI_INT, b->in2[0], 1, MPI_INT, ring, in,
                                     &r[17]),
         MPI_Neighbor_allgather_init_c(&b->mine[4], 1, MPI_INT, b->in2[0], 1, MPI_INT, ring, in,
                                       &r[17]));
    INIT(18, large,
         MPI_Neighbor_allgatherv_init(&b->mine[4], 1, MPI_INT, b->in2[1], b->i2, b->id2, MPI_INT,
                                      ring, in, &r[18]),
         MPI_Neighbor_allgatherv_init_c(&b->mine[4], 1, MPI_INT, b->in2[1], b->c2, b->d2, MPI_INT,
                                        ring, in, &r[18]));
    INIT(19, large,
         MPI_Neighbor_alltoall_init(b->two[0], 1, MPI_INT, b->in2[2], 1, MPI_INT, ring, in,
                                    &r[19]),
         MPI_Neighbor_alltoall_init_c(b->two[0], 1, MPI_INT, b->in2[2], 1, MPI_INT, ring, in,
                                      &r[19]));
    INIT(20, large,
         MPI_Neighbor_alltoallv_init(b->two[0], b->i2, b->id2, MPI_INT, b->in2[3], b->i2, b->id2,
                                     MPI_INT, ring, in, &r[20]),
         MPI_Neighbor_alltoallv_init_c(b->two[0], b->c2, b->d2, MPI_INT, b->in2[3], b->c2, b->d2,
                                       MPI_INT, ring, in, &r[20]));
    INIT(21, large,
         MPI_Neighbor_alltoallw_init(b->two[0], b->i2, b->b2, b->t2, b->in2[4], b->i2, b->b2,
                                     b->t2, ring, in, &r[21]),
         MPI_Neighbor_alltoallw_init_c(b->two[0], b->c2, b->b2, b->t2, b->in2[4], b->c2, b->b2,
                                       b->t2, ring, in, &r[21]));
}

/* This round's inputs, written into the bound buffers before the starts. */
static void fill(struct bufs *b, int k) {
    b->x = rank == 1 % size ? 77 + k : -1;
    for (int i = 0; i < MAXR; i++) {
        b->mine[i] = val(rank, 5) + 100 * k;
        b->one[i] = i + rank + k;
        for (int j = 0; j < MAXR; j++) b->got[i][j] = -1;
    }
    for (int r = 0; r < size; r++) {
        b->got[2][r] = val(0, 20 + r) + k;
        b->got[3][r] = val(0, 20 + r) + k;
    }
    b->two[0][0] = val(rank, 1) + k;
    b->two[0][1] = val(rank, 2) + k;
    memset(b->in2, -1, sizeof b->in2);
    for (int i = 0; i < 4; i++) b->sum[i] = -1;
}

/* This round's results: the round's checksum. */
static long long check(struct bufs *b, int k) {
    long long s = 0;
    int five = val(rank, 5) + 100 * k;
    if (ON(1)) CHECK(b->x == 77 + k);
    int want = 0;
    for (int r = 0; r < size; r++) want += val(r, 5) + 100 * k;
    for (int r = 0; rank == 0 && r < size; r++) {
        if (ON(2)) CHECK(b->got[0][r] == val(r, 5) + 100 * k);
        if (ON(3)) CHECK(b->got[1][r] == val(r, 5) + 100 * k);
    }
    if (ON(4)) CHECK(b->mine[2] == val(0, 20 + rank) + k);
    if (ON(5)) CHECK(b->mine[3] == val(0, 20 + rank) + k);
    for (int r = 0; r < size; r++) {
        if (ON(6)) CHECK(b->got[4][r] == val(r, 5) + 100 * k);
        if (ON(7)) CHECK(b->got[5][r] == val(r, 5) + 100 * k);
        int sent = rank + r + k; /* what rank r put at index `rank` */
        if (ON(8)) CHECK(b->got[6][r] == sent);
        if (ON(9)) CHECK(b->got[7][r] == sent);
        if (ON(10)) CHECK(b->got[8][r] == sent);
        s += b->got[8][r] * (r + 1) + b->got[4][r];
    }
    if (ON(11) && rank == 0) CHECK(b->sum[0] == want);
    if (ON(12)) CHECK(b->sum[1] == want);
    /* reduce_scatter: element `rank` summed over ranks */
    int column = 0;
    for (int r = 0; r < size; r++) column += rank + r + k;
    if (ON(13)) CHECK(b->mine[5] == column);
    if (ON(14)) CHECK(b->mine[6] == column);
    int prefix = 0;
    for (int r = 0; r <= rank; r++) prefix += val(r, 5) + 100 * k;
    if (ON(15)) CHECK(b->sum[2] == prefix);
    if (ON(16) && rank > 0) CHECK(b->sum[3] == prefix - five);
    for (int i = 0; i < 2; i++)
        if (ON(17 + i))
            CHECK(b->in2[i][0] == val(left, 5) + 100 * k &&
                  b->in2[i][1] == val(right, 5) + 100 * k);
    for (int i = 2; i < 5; i++)
        if (ON(17 + i))
            CHECK(size == 2 ||
                  (b->in2[i][0] == val(left, 2) + k && b->in2[i][1] == val(right, 1) + k));
    return s + b->sum[1] + b->mine[5] + b->sum[2] + b->mine[2];
}

/* The made requests among r, in order: how many. */
static int active(const MPI_Request *r, MPI_Request *act) {
    int n = 0;
    for (int i = 0; i < OPS; i++)
        if (r[i] != MPI_REQUEST_NULL) act[n++] = r[i];
    return n;
}

static void free_all(MPI_Request *r) {
    for (int i = 0; i < OPS; i++)
        if (r[i] != MPI_REQUEST_NULL) must(MPI_Request_free(&r[i]), "request_free");
    for (int i = 0; i < OPS; i++) CHECK(r[i] == MPI_REQUEST_NULL);
}

static void rounds(int large) {
    static struct bufs b;
    MPI_Request r[OPS], act[OPS];
    char name[40];
    ops = ~0u & ~ONCE;
    make(large, &b, r);
    int n = active(r, act);
    for (int k = 0; k < (size > 2 ? 1 : ROUNDS); k++) {
        fill(&b, k);
        if (k == 0) {
            for (int i = 0; i < n; i++) {
                must(MPI_Start(&act[i]), "start");
                must(MPI_Wait(&act[i], MPI_STATUS_IGNORE), "wait");
            }
        } else if (k == 1) {
            must(MPI_Startall(n, act), "startall");
            must(MPI_Waitall(n, act, MPI_STATUSES_IGNORE), "waitall");
        } else {
            must(MPI_Startall(n / 2, act), "startall 1");
            must(MPI_Startall(n - n / 2, act + n / 2), "startall 2");
            for (int i = n - 1; i >= 0; i--) {
                int done = 0;
                while (!done) must(MPI_Test(&act[i], &done, MPI_STATUS_IGNORE), "test");
            }
            int flag = 0;
            must(MPI_Request_get_status(act[0], &flag, MPI_STATUS_IGNORE), "get_status");
            CHECK(flag);
        }
        snprintf(name, sizeof name, "%s round %d", large ? "large" : "int", k);
        result(name, check(&b, k));
    }
    free_all(r);

    /* gather, scatter(v), allgather: their data in place before the init */
    ops = ONCE;
    fill(&b, 0);
    make(large, &b, r);
    n = active(r, act);
    must(MPI_Startall(n, act), "startall once");
    must(MPI_Waitall(n, act, MPI_STATUSES_IGNORE), "waitall once");
    snprintf(name, sizeof name, "%s once", large ? "large" : "int");
    result(name, check(&b, 0));
    free_all(r);
}

/* Rank 0 leaves more receives pending than heisen has slots, then every
 * rank makes a persistent barrier and runs it three times. */
static void beyond_the_table(void) {
    static MPI_Request pending[PENDING];
    static int in[PENDING];
    if (rank == 0)
        for (int i = 0; i < PENDING; i++)
            must(MPI_Irecv(&in[i], 1, MPI_INT, 0, 7, MPI_COMM_SELF, &pending[i]), "irecv");
    MPI_Request barrier;
    must(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &barrier), "barrier_init");
    for (int k = 0; k < 3; k++) {
        must(MPI_Start(&barrier), "start barrier");
        must(MPI_Wait(&barrier, MPI_STATUS_IGNORE), "wait barrier");
    }
    must(MPI_Request_free(&barrier), "free barrier");
    long long s = 0;
    if (rank == 0) {
        for (int i = 0; i < PENDING; i++)
            must(MPI_Send(&i, 1, MPI_INT, 0, 7, MPI_COMM_SELF), "send to self");
        must(MPI_Waitall(PENDING, pending, MPI_STATUSES_IGNORE), "waitall pending");
        for (int i = 0; i < PENDING; i++) {
            CHECK(in[i] == i);
            s += in[i];
        }
    }
    result("beyond the table", s);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > MAXR) MPI_Abort(MPI_COMM_WORLD, 2);
    int dims[1] = {size}, periods[1] = {1};
    must(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring), "cart_create");
    left = (rank - 1 + size) % size;
    right = (rank + 1) % size;
    rounds(0);
    rounds(1);
    MPI_Comm_free(&ring);
    beyond_the_table();
    MPI_Comm failing;
    must(MPI_Comm_dup(MPI_COMM_WORLD, &failing), "dup");
    must(MPI_Comm_set_errhandler(failing, MPI_ERRORS_RETURN), "errhandler");
    int in = rank + 1, got[MAXR], sum = 0;
    MPI_Request half = MPI_REQUEST_NULL;
    int rc = MPI_Gather_init(&in, 1, MPI_INT, got, rank == 0 ? -1 : 1, MPI_INT, 0, failing,
                             MPI_INFO_NULL, &half);
    CHECK((rank == 0) == (rc != MPI_SUCCESS));
    if (rc == MPI_SUCCESS) must(MPI_Request_free(&half), "free half");
    must(MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, failing), "allreduce after");
    CHECK(sum == size * (size + 1) / 2);
    result("failed on the root", sum);
    MPI_Comm_free(&failing);
    int one = 1, all = 0;
    MPI_Request unfreed;
    must(MPI_Allreduce_init(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &unfreed),
         "allreduce_init");
    must(MPI_Start(&unfreed), "start unfreed");
    must(MPI_Wait(&unfreed, MPI_STATUS_IGNORE), "wait unfreed");
    CHECK(all == size);
    result("left for finalize", all);
    return finish("coll_persistent");
}
