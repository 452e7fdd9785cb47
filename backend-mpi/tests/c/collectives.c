/*
 * collectives.c: every collective MPICH 4.0 has, blocking, nonblocking,
 * persistent and neighbourhood, with MPI_IN_PLACE, v-variants, derived
 * datatypes and user-defined operators (commutative and not), each
 * checked against values computed locally. Only rank 0 prints, so the
 * output is identical with and without the interposer; the exit status
 * is non-zero if any check failed on any rank.
 *
 *   mpicc -O1 collectives.c -o collectives && mpiexec -n 3 ./collectives
 *
 * MPI 4.0 standard chapter 6 (collective communication) and 7.6
 * (neighbourhood collectives).
 */
#include "coll_common.h"

/* ---- a non-commutative operator: 2x2 matrix product modulo a prime ---- */

#define MOD 65521u
typedef struct { unsigned m[4]; } mat;
static MPI_Datatype mat_type;

static mat mat_mul(mat a, mat b) {
    mat c;
    c.m[0] = (a.m[0] * b.m[0] + a.m[1] * b.m[2]) % MOD;
    c.m[1] = (a.m[0] * b.m[1] + a.m[1] * b.m[3]) % MOD;
    c.m[2] = (a.m[2] * b.m[0] + a.m[3] * b.m[2]) % MOD;
    c.m[3] = (a.m[2] * b.m[1] + a.m[3] * b.m[3]) % MOD;
    return c;
}

/* The matrix of rank r, element e: products of these do not commute. */
static mat mat_of(int r, int e) {
    mat a = {{(unsigned)(r + 2 + e), 1u, 1u, (unsigned)e}};
    return a;
}

/* MPI applies op(in, inout) as inout = in ∘ inout, `in` from lower ranks. */
static void mat_op(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    mat *a = in, *b = inout;
    for (int i = 0; i < *len; i++) b[i] = mat_mul(a[i], b[i]);
}

static long long mat_sum(const mat *v, int n) {
    long long s = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) s += (long long)v[i].m[k] * (k + 1 + 4 * i);
    return s;
}

/* The product mat_of(lo, e) … mat_of(hi, e), ranks in order. */
static mat mat_range(int lo, int hi, int e) {
    mat p = mat_of(lo, e);
    for (int r = lo + 1; r <= hi; r++) p = mat_mul(p, mat_of(r, e));
    return p;
}

static int mat_eq(mat a, mat b) { return memcmp(&a, &b, sizeof a) == 0; }

/* ---- a commutative user operator on ints: sum of squares-ish, a*b mod p ---- */

static void mulmod_op(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) b[i] = (int)(((long long)a[i] * b[i]) % 10007);
}

static MPI_Op op_mat, op_mulmod;

/* ---- blocking ---- */

static void t_barrier(void) {
    must(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    result("barrier", 0);
}

static void t_bcast(void) {
    int root = size - 1, buf[10];
    for (int i = 0; i < 10; i++) buf[i] = rank == root ? val(root, i) : -1;
    must(MPI_Bcast(buf, 10, MPI_INT, root, MPI_COMM_WORLD), "bcast");
    for (int i = 0; i < 10; i++) CHECK(buf[i] == val(root, i));
    /* zero count and a derived type */
    must(MPI_Bcast(buf, 0, MPI_INT, 0, MPI_COMM_WORLD), "bcast 0");
    mat m = rank == 0 ? mat_of(7, 1) : mat_of(0, 0);
    must(MPI_Bcast(&m, 1, mat_type, 0, MPI_COMM_WORLD), "bcast mat");
    CHECK(mat_eq(m, mat_of(7, 1)));
    result("bcast", sum_ints(buf, 10) + mat_sum(&m, 1));
}

static void t_gather(void) {
    int root = 0, send[3], *recv = malloc(sizeof(int) * 3 * (size_t)size);
    for (int i = 0; i < 3; i++) send[i] = val(rank, i);
    must(MPI_Gather(send, 3, MPI_INT, recv, 3, MPI_INT, root, MPI_COMM_WORLD), "gather");
    long long s = 0;
    if (rank == root) {
        for (int r = 0; r < size; r++)
            for (int i = 0; i < 3; i++) CHECK(recv[3 * r + i] == val(r, i));
        s = sum_ints(recv, 3 * size);
    }
    /* MPI_IN_PLACE at the root: its own part already sits in recv */
    root = size / 2;
    if (rank == root) {
        for (int i = 0; i < 3 * size; i++) recv[i] = -1;
        for (int i = 0; i < 3; i++) recv[3 * root + i] = val(root, i);
        must(MPI_Gather(MPI_IN_PLACE, 3, MPI_INT, recv, 3, MPI_INT, root, MPI_COMM_WORLD),
             "gather in place");
        for (int r = 0; r < size; r++)
            for (int i = 0; i < 3; i++) CHECK(recv[3 * r + i] == val(r, i));
        s += sum_ints(recv, 3 * size);
    } else {
        must(MPI_Gather(send, 3, MPI_INT, NULL, 0, MPI_INT, root, MPI_COMM_WORLD),
             "gather in place (leaf)");
    }
    free(recv);
    result("gather", s);
}

static void t_gatherv(void) {
    int root = size - 1, n = rank + 1, send[8];
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r + 1;
        displs[r] = total + 2 * r; /* gaps of two between the blocks */
        total += r + 1;
    }
    int span = total + 2 * size;
    int *recv = malloc(sizeof(int) * (size_t)span);
    for (int i = 0; i < span; i++) recv[i] = -7;
    for (int i = 0; i < n; i++) send[i] = val(rank, i);
    must(MPI_Gatherv(send, n, MPI_INT, recv, counts, displs, MPI_INT, root, MPI_COMM_WORLD),
         "gatherv");
    long long s = 0;
    if (rank == root) {
        for (int r = 0; r < size; r++) {
            for (int i = 0; i < counts[r]; i++) CHECK(recv[displs[r] + i] == val(r, i));
            CHECK(recv[displs[r] + counts[r]] == -7); /* the gap is untouched */
        }
        s = sum_ints(recv, span);
    }
    free(recv);
    free(counts);
    free(displs);
    result("gatherv", s);
}

static void t_scatter(void) {
    int root = 1 % size, recv[4], *send = NULL;
    if (rank == root) {
        send = malloc(sizeof(int) * 4 * (size_t)size);
        for (int i = 0; i < 4 * size; i++) send[i] = val(root, i);
    }
    must(MPI_Scatter(send, 4, MPI_INT, recv, 4, MPI_INT, root, MPI_COMM_WORLD), "scatter");
    for (int i = 0; i < 4; i++) CHECK(recv[i] == val(root, 4 * rank + i));
    long long s = sum_ints(recv, 4);
    /* in place at the root: it keeps its own block where it is */
    if (rank == root) {
        must(MPI_Scatter(send, 4, MPI_INT, MPI_IN_PLACE, 4, MPI_INT, root, MPI_COMM_WORLD),
             "scatter in place");
        for (int i = 0; i < 4 * size; i++) CHECK(send[i] == val(root, i));
    } else {
        for (int i = 0; i < 4; i++) recv[i] = -1;
        must(MPI_Scatter(NULL, 0, MPI_INT, recv, 4, MPI_INT, root, MPI_COMM_WORLD),
             "scatter in place (leaf)");
        for (int i = 0; i < 4; i++) CHECK(recv[i] == val(root, 4 * rank + i));
        s += sum_ints(recv, 4);
    }
    free(send);
    result("scatter", s);
}

static void t_scatterv(void) {
    int root = 0, recv[8];
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = size - r; /* rank 0 gets most */
        displs[r] = total;
        total += counts[r] + 1;
    }
    int *send = malloc(sizeof(int) * (size_t)total);
    for (int i = 0; i < total; i++) send[i] = val(root, i);
    for (int i = 0; i < 8; i++) recv[i] = -1;
    must(MPI_Scatterv(send, counts, displs, MPI_INT, recv, counts[rank], MPI_INT, root,
                      MPI_COMM_WORLD),
         "scatterv");
    for (int i = 0; i < counts[rank]; i++) CHECK(recv[i] == val(root, displs[rank] + i));
    CHECK(recv[counts[rank]] == -1);
    long long s = sum_ints(recv, 8);
    free(send);
    free(counts);
    free(displs);
    result("scatterv", s);
}

static void t_allgather(void) {
    int send[2] = {val(rank, 0), val(rank, 1)};
    int *recv = malloc(sizeof(int) * 2 * (size_t)size);
    must(MPI_Allgather(send, 2, MPI_INT, recv, 2, MPI_INT, MPI_COMM_WORLD), "allgather");
    for (int r = 0; r < size; r++) CHECK(recv[2 * r] == val(r, 0) && recv[2 * r + 1] == val(r, 1));
    long long s = sum_ints(recv, 2 * size);
    for (int i = 0; i < 2 * size; i++) recv[i] = -1;
    recv[2 * rank] = val(rank, 0);
    recv[2 * rank + 1] = val(rank, 1);
    must(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, 2, MPI_INT, MPI_COMM_WORLD),
         "allgather in place");
    for (int r = 0; r < size; r++) CHECK(recv[2 * r] == val(r, 0) && recv[2 * r + 1] == val(r, 1));
    s += sum_ints(recv, 2 * size);
    free(recv);
    result("allgather", s);
}

static void t_allgatherv(void) {
    int send[8];
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = (r % 3) + 1;
        displs[r] = total;
        total += counts[r];
    }
    int *recv = malloc(sizeof(int) * (size_t)total);
    for (int i = 0; i < counts[rank]; i++) send[i] = val(rank, i);
    must(MPI_Allgatherv(send, counts[rank], MPI_INT, recv, counts, displs, MPI_INT, MPI_COMM_WORLD),
         "allgatherv");
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++) CHECK(recv[displs[r] + i] == val(r, i));
    long long s = sum_ints(recv, total);
    for (int i = 0; i < total; i++) recv[i] = i >= displs[rank] && i < displs[rank] + counts[rank]
                                                  ? val(rank, i - displs[rank])
                                                  : -1;
    must(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts, displs, MPI_INT,
                        MPI_COMM_WORLD),
         "allgatherv in place");
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++) CHECK(recv[displs[r] + i] == val(r, i));
    s += sum_ints(recv, total);
    free(recv);
    free(counts);
    free(displs);
    result("allgatherv", s);
}

static void t_alltoall(void) {
    int *send = malloc(sizeof(int) * 2 * (size_t)size), *recv = malloc(sizeof(int) * 2 * (size_t)size);
    for (int j = 0; j < size; j++) {
        send[2 * j] = val(rank, 10 * j);
        send[2 * j + 1] = val(rank, 10 * j + 1);
    }
    must(MPI_Alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, MPI_COMM_WORLD), "alltoall");
    for (int j = 0; j < size; j++)
        CHECK(recv[2 * j] == val(j, 10 * rank) && recv[2 * j + 1] == val(j, 10 * rank + 1));
    long long s = sum_ints(recv, 2 * size);
    must(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, send, 2, MPI_INT, MPI_COMM_WORLD),
         "alltoall in place");
    for (int i = 0; i < 2 * size; i++) CHECK(send[i] == recv[i]);
    s += sum_ints(send, 2 * size);
    free(send);
    free(recv);
    result("alltoall", s);
}

/* rank i sends (i + j) % 3 + 1 ints to rank j */
static int a2a_count(int i, int j) { return (i + j) % 3 + 1; }

static void t_alltoallv(void) {
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    int st = 0, rt = 0;
    for (int j = 0; j < size; j++) {
        sc[j] = a2a_count(rank, j);
        sd[j] = st;
        st += sc[j];
        rc[j] = a2a_count(j, rank);
        rd[j] = rt;
        rt += rc[j];
    }
    int *send = malloc(sizeof(int) * (size_t)st), *recv = malloc(sizeof(int) * (size_t)rt);
    for (int j = 0; j < size; j++)
        for (int i = 0; i < sc[j]; i++) send[sd[j] + i] = val(rank, 100 * j + i);
    must(MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, MPI_COMM_WORLD), "alltoallv");
    for (int j = 0; j < size; j++)
        for (int i = 0; i < rc[j]; i++) CHECK(recv[rd[j] + i] == val(j, 100 * rank + i));
    long long s = sum_ints(recv, rt);

    /* alltoallw: the same exchange with byte displacements and per-peer types */
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)size);
    int *sdb = malloc(sizeof(int) * (size_t)size), *rdb = malloc(sizeof(int) * (size_t)size);
    for (int j = 0; j < size; j++) {
        types[j] = MPI_INT;
        sdb[j] = sd[j] * (int)sizeof(int);
        rdb[j] = rd[j] * (int)sizeof(int);
    }
    int *recv2 = malloc(sizeof(int) * (size_t)rt);
    must(MPI_Alltoallw(send, sc, sdb, types, recv2, rc, rdb, types, MPI_COMM_WORLD), "alltoallw");
    for (int i = 0; i < rt; i++) CHECK(recv2[i] == recv[i]);
    s += sum_ints(recv2, rt);
    free(types);
    free(sdb);
    free(rdb);
    free(recv2);
    free(send);
    free(recv);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    result("alltoallv alltoallw", s);
}

static void t_reduce(void) {
    int send[5], recv[5] = {0};
    for (int i = 0; i < 5; i++) send[i] = val(rank, i);
    int root = size - 1;
    must(MPI_Reduce(send, recv, 5, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD), "reduce sum");
    long long s = 0;
    if (rank == root) {
        for (int i = 0; i < 5; i++) {
            int want = 0;
            for (int r = 0; r < size; r++) want += val(r, i);
            CHECK(recv[i] == want);
        }
        s += sum_ints(recv, 5);
    }
    /* in place at the root, MPI_MAX */
    root = 0;
    int buf[5];
    for (int i = 0; i < 5; i++) buf[i] = val(rank, i) * (i % 2 ? -1 : 1);
    must(MPI_Reduce(rank == root ? MPI_IN_PLACE : buf, rank == root ? buf : NULL, 5, MPI_INT, MPI_MAX,
                    root, MPI_COMM_WORLD),
         "reduce in place");
    if (rank == root) {
        for (int i = 0; i < 5; i++) CHECK(buf[i] == (i % 2 ? val(0, i) * -1 : val(size - 1, i)));
        s += sum_ints(buf, 5);
    }
    /* a non-commutative user operator on a derived datatype: order matters */
    mat m[2] = {mat_of(rank, 0), mat_of(rank, 1)}, out[2];
    must(MPI_Reduce(m, out, 2, mat_type, op_mat, 1 % size, MPI_COMM_WORLD), "reduce mat");
    if (rank == 1 % size) {
        CHECK(mat_eq(out[0], mat_range(0, size - 1, 0)));
        CHECK(mat_eq(out[1], mat_range(0, size - 1, 1)));
        s += mat_sum(out, 2);
    }
    /* MPI_Reduce_local: no communicator, but a user operator */
    mat a[1] = {mat_of(1, 0)}, b[1] = {mat_of(2, 0)};
    must(MPI_Reduce_local(a, b, 1, mat_type, op_mat), "reduce_local");
    CHECK(mat_eq(b[0], mat_mul(mat_of(1, 0), mat_of(2, 0))));
    s += mat_sum(b, 1);
    result("reduce", s);
}

static void t_allreduce(void) {
    int send[4], recv[4];
    for (int i = 0; i < 4; i++) send[i] = val(rank, i);
    must(MPI_Allreduce(send, recv, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "allreduce");
    for (int i = 0; i < 4; i++) {
        int want = 0;
        for (int r = 0; r < size; r++) want += val(r, i);
        CHECK(recv[i] == want);
    }
    long long s = sum_ints(recv, 4);
    /* in place, a commutative user operator */
    int v[3] = {rank + 2, rank + 3, 5};
    must(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, op_mulmod, MPI_COMM_WORLD), "allreduce user op");
    for (int i = 0; i < 3; i++) {
        long long want = 1;
        for (int r = 0; r < size; r++) want = want * (i == 2 ? 5 : r + 2 + i) % 10007;
        CHECK(v[i] == (int)want);
    }
    s += sum_ints(v, 3);
    /* MINLOC on a pair type */
    struct { int value, index; } mine = {(rank * 7 + 3) % size, rank}, low;
    must(MPI_Allreduce(&mine, &low, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD), "allreduce minloc");
    CHECK(low.value == 0);
    s += low.value * 100 + low.index;
    /* doubles: exact because the values are small integers */
    double d = rank + 0.5, dsum;
    must(MPI_Allreduce(&d, &dsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "allreduce double");
    CHECK(dsum == size * (size - 1) / 2.0 + 0.5 * size);
    s += (long long)(dsum * 2);
    /* the large-count binding of MPI 4.0 */
    MPI_Count n = 2;
    long long big[2] = {rank, 1}, bigsum[2];
    must(MPI_Allreduce_c(big, bigsum, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "allreduce_c");
    CHECK(bigsum[0] == size * (size - 1) / 2 && bigsum[1] == size);
    s += bigsum[0] + bigsum[1];
    result("allreduce", s);
}

static void t_reduce_scatter(void) {
    int *counts = malloc(sizeof(int) * (size_t)size), total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r + 1;
        total += r + 1;
    }
    int *send = malloc(sizeof(int) * (size_t)total), recv[8];
    for (int i = 0; i < total; i++) send[i] = val(rank, i);
    must(MPI_Reduce_scatter(send, recv, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "reduce_scatter");
    int first = rank * (rank + 1) / 2;
    for (int i = 0; i < counts[rank]; i++) {
        int want = 0;
        for (int r = 0; r < size; r++) want += val(r, first + i);
        CHECK(recv[i] == want);
    }
    long long s = sum_ints(recv, counts[rank]);
    /* in place: the result lands at the start of the send buffer */
    must(MPI_Reduce_scatter(MPI_IN_PLACE, send, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         "reduce_scatter in place");
    for (int i = 0; i < counts[rank]; i++) CHECK(send[i] == recv[i]);
    s += sum_ints(send, counts[rank]);
    free(send);
    free(counts);
    result("reduce_scatter", s);
}

static void t_reduce_scatter_block(void) {
    int *send = malloc(sizeof(int) * 3 * (size_t)size), recv[3];
    for (int i = 0; i < 3 * size; i++) send[i] = val(rank, i);
    must(MPI_Reduce_scatter_block(send, recv, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         "reduce_scatter_block");
    for (int i = 0; i < 3; i++) {
        int want = 0;
        for (int r = 0; r < size; r++) want += val(r, 3 * rank + i);
        CHECK(recv[i] == want);
    }
    long long s = sum_ints(recv, 3);
    must(MPI_Reduce_scatter_block(MPI_IN_PLACE, send, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         "reduce_scatter_block in place");
    for (int i = 0; i < 3; i++) CHECK(send[i] == recv[i]);
    s += sum_ints(send, 3);
    free(send);
    result("reduce_scatter_block", s);
}

static void t_scan(void) {
    int v[2] = {val(rank, 0), val(rank, 1)}, out[2];
    must(MPI_Scan(v, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "scan");
    for (int i = 0; i < 2; i++) {
        int want = 0;
        for (int r = 0; r <= rank; r++) want += val(r, i);
        CHECK(out[i] == want);
    }
    long long s = sum_ints(out, 2);
    must(MPI_Scan(MPI_IN_PLACE, v, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "scan in place");
    CHECK(v[0] == out[0] && v[1] == out[1]);
    mat m = mat_of(rank, 2), p;
    must(MPI_Scan(&m, &p, 1, mat_type, op_mat, MPI_COMM_WORLD), "scan mat");
    CHECK(mat_eq(p, mat_range(0, rank, 2)));
    s += mat_sum(&p, 1);
    /* exscan: rank 0's result is undefined, so it is not looked at */
    int e = val(rank, 3), ex = -1;
    must(MPI_Exscan(&e, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "exscan");
    if (rank > 0) {
        int want = 0;
        for (int r = 0; r < rank; r++) want += val(r, 3);
        CHECK(ex == want);
        s += ex;
    }
    mat q = mat_of(rank, 3);
    must(MPI_Exscan(MPI_IN_PLACE, &q, 1, mat_type, op_mat, MPI_COMM_WORLD), "exscan in place");
    if (rank > 0) {
        CHECK(mat_eq(q, mat_range(0, rank - 1, 3)));
        s += mat_sum(&q, 1);
    }
    result("scan exscan", s);
}

/* ---- nonblocking, completed by each completion call in turn ---- */

static void t_nonblocking(void) {
    long long s = 0;
    MPI_Request req[6];
    int root = size - 1;

    /* Ibarrier, Ibcast and Iallreduce outstanding together, Waitall */
    int b[3], a_in[2] = {val(rank, 0), val(rank, 1)}, a_out[2];
    for (int i = 0; i < 3; i++) b[i] = rank == root ? val(root, i) : 0;
    must(MPI_Ibarrier(MPI_COMM_WORLD, &req[0]), "ibarrier");
    must(MPI_Ibcast(b, 3, MPI_INT, root, MPI_COMM_WORLD, &req[1]), "ibcast");
    must(MPI_Iallreduce(a_in, a_out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[2]), "iallreduce");
    MPI_Status st[3];
    must(MPI_Waitall(3, req, st), "waitall");
    for (int i = 0; i < 3; i++) CHECK(b[i] == val(root, i) && req[i] == MPI_REQUEST_NULL);
    for (int i = 0; i < 2; i++) {
        int want = 0;
        for (int r = 0; r < size; r++) want += val(r, i);
        CHECK(a_out[i] == want);
    }
    s += sum_ints(b, 3) + sum_ints(a_out, 2);

    /* Ireduce by Test in a loop */
    int r_in = val(rank, 5), r_out = 0, done = 0;
    must(MPI_Ireduce(&r_in, &r_out, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &req[0]), "ireduce");
    while (!done) must(MPI_Test(&req[0], &done, MPI_STATUS_IGNORE), "test");
    if (rank == 0) {
        int want = 0;
        for (int r = 0; r < size; r++) want += val(r, 5);
        CHECK(r_out == want);
        s += r_out;
    }

    /* Igather, Iscatter, Iallgather: Waitany until all are done */
    int g_in = val(rank, 6), *g_out = malloc(sizeof(int) * (size_t)size);
    int *sc_in = malloc(sizeof(int) * (size_t)size), sc_out = -1;
    int *ag = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) sc_in[i] = val(root, 50 + i);
    must(MPI_Igather(&g_in, 1, MPI_INT, g_out, 1, MPI_INT, 0, MPI_COMM_WORLD, &req[0]), "igather");
    must(MPI_Iscatter(sc_in, 1, MPI_INT, &sc_out, 1, MPI_INT, root, MPI_COMM_WORLD, &req[1]),
         "iscatter");
    must(MPI_Iallgather(&g_in, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD, &req[2]), "iallgather");
    int seen = 0;
    for (int k = 0; k < 3; k++) {
        int idx;
        must(MPI_Waitany(3, req, &idx, MPI_STATUS_IGNORE), "waitany");
        CHECK(idx >= 0 && idx < 3 && !(seen & (1 << idx)));
        seen |= 1 << idx;
    }
    int idx;
    must(MPI_Waitany(3, req, &idx, MPI_STATUS_IGNORE), "waitany (all null)");
    CHECK(idx == MPI_UNDEFINED);
    if (rank == 0)
        for (int r = 0; r < size; r++) CHECK(g_out[r] == val(r, 6));
    CHECK(sc_out == val(root, 50 + rank));
    for (int r = 0; r < size; r++) CHECK(ag[r] == val(r, 6));
    s += sc_out + sum_ints(ag, size);

    /* the v-variants and alltoalls, Waitsome until all are done */
    int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) {
        cnt[r] = 1;
        dsp[r] = r;
    }
    int *gv = malloc(sizeof(int) * (size_t)size), *agv = malloc(sizeof(int) * (size_t)size);
    int *a2a_in = malloc(sizeof(int) * (size_t)size), *a2a_out = malloc(sizeof(int) * (size_t)size);
    int *a2av = malloc(sizeof(int) * (size_t)size), svo = -1;
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)size);
    int *bd = malloc(sizeof(int) * (size_t)size), *a2aw = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) {
        a2a_in[r] = val(rank, 70 + r);
        ty[r] = MPI_INT;
        bd[r] = r * (int)sizeof(int);
    }
    must(MPI_Igatherv(&g_in, 1, MPI_INT, gv, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD, &req[0]),
         "igatherv");
    must(MPI_Iscatterv(sc_in, cnt, dsp, MPI_INT, &svo, 1, MPI_INT, root, MPI_COMM_WORLD, &req[1]),
         "iscatterv");
    must(MPI_Iallgatherv(&g_in, 1, MPI_INT, agv, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &req[2]),
         "iallgatherv");
    must(MPI_Ialltoall(a2a_in, 1, MPI_INT, a2a_out, 1, MPI_INT, MPI_COMM_WORLD, &req[3]), "ialltoall");
    must(MPI_Ialltoallv(a2a_in, cnt, dsp, MPI_INT, a2av, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &req[4]),
         "ialltoallv");
    must(MPI_Ialltoallw(a2a_in, cnt, bd, ty, a2aw, cnt, bd, ty, MPI_COMM_WORLD, &req[5]),
         "ialltoallw");
    int left = 6;
    while (left > 0) {
        int outcount, indices[6];
        must(MPI_Waitsome(6, req, &outcount, indices, MPI_STATUSES_IGNORE), "waitsome");
        CHECK(outcount >= 1);
        left -= outcount;
    }
    if (rank == root)
        for (int r = 0; r < size; r++) CHECK(gv[r] == val(r, 6));
    CHECK(svo == val(root, 50 + rank));
    for (int r = 0; r < size; r++) {
        CHECK(agv[r] == val(r, 6));
        CHECK(a2a_out[r] == val(r, 70 + rank));
        CHECK(a2av[r] == val(r, 70 + rank));
        CHECK(a2aw[r] == val(r, 70 + rank));
    }
    s += svo + sum_ints(agv, size) + sum_ints(a2a_out, size) + sum_ints(a2av, size) +
         sum_ints(a2aw, size);

    /* reductions: Ireduce_scatter(_block), Iscan, Iexscan, Testall in a loop */
    int *rs_in = malloc(sizeof(int) * (size_t)size), rs_out = 0, rsb_out = 0;
    for (int r = 0; r < size; r++) rs_in[r] = val(rank, 90 + r);
    int sc_v = val(rank, 1), scan_out = 0, ex_out = -1;
    must(MPI_Ireduce_scatter(rs_in, &rs_out, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[0]),
         "ireduce_scatter");
    must(MPI_Ireduce_scatter_block(rs_in, &rsb_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]),
         "ireduce_scatter_block");
    must(MPI_Iscan(&sc_v, &scan_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[2]), "iscan");
    must(MPI_Iexscan(&sc_v, &ex_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[3]), "iexscan");
    mat m = mat_of(rank, 4), mp;
    must(MPI_Iscan(&m, &mp, 1, mat_type, op_mat, MPI_COMM_WORLD, &req[4]), "iscan mat");
    int all = 0;
    while (!all) must(MPI_Testall(5, req, &all, MPI_STATUSES_IGNORE), "testall");
    int want_rs = 0, want_scan = 0, want_ex = 0;
    for (int r = 0; r < size; r++) want_rs += val(r, 90 + rank);
    for (int r = 0; r <= rank; r++) want_scan += val(r, 1);
    want_ex = want_scan - sc_v;
    CHECK(rs_out == want_rs && rsb_out == want_rs);
    CHECK(scan_out == want_scan);
    if (rank > 0) CHECK(ex_out == want_ex);
    CHECK(mat_eq(mp, mat_range(0, rank, 4)));
    s += rs_out + rsb_out + scan_out + (rank > 0 ? ex_out : 0) + mat_sum(&mp, 1);

    /* Testany and Testsome on a single outstanding Ibarrier each */
    int flag = 0;
    must(MPI_Ibarrier(MPI_COMM_WORLD, &req[0]), "ibarrier 2");
    while (!flag) must(MPI_Testany(1, req, &idx, &flag, MPI_STATUS_IGNORE), "testany");
    CHECK(idx == 0);
    must(MPI_Ibarrier(MPI_COMM_WORLD, &req[0]), "ibarrier 3");
    int outcount = 0, indices[1];
    while (outcount == 0) {
        must(MPI_Testsome(1, req, &outcount, indices, MPI_STATUSES_IGNORE), "testsome");
        CHECK(outcount != MPI_UNDEFINED);
        if (outcount == MPI_UNDEFINED) break;
    }

    free(g_out);
    free(sc_in);
    free(ag);
    free(cnt);
    free(dsp);
    free(gv);
    free(agv);
    free(a2a_in);
    free(a2a_out);
    free(a2av);
    free(ty);
    free(bd);
    free(a2aw);
    free(rs_in);
    result("nonblocking", s);
}

/* ---- persistent collectives (MPI 4.0 §6.13) ---- */

static void t_persistent(void) {
    long long s = 0;
    int in = 0, out = 0, bc[2];
    MPI_Request req[2];
    must(MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]),
         "allreduce_init");
    must(MPI_Bcast_init(bc, 2, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]), "bcast_init");
    for (int round = 0; round < 3; round++) {
        in = val(rank, round);
        bc[0] = rank == 0 ? round : -1;
        bc[1] = rank == 0 ? 10 * round : -1;
        must(MPI_Start(&req[0]), "start");
        must(MPI_Wait(&req[0], MPI_STATUS_IGNORE), "wait persistent");
        CHECK(req[0] != MPI_REQUEST_NULL); /* persistent: inactive, not freed */
        int want = 0;
        for (int r = 0; r < size; r++) want += val(r, round);
        CHECK(out == want);
        must(MPI_Startall(1, &req[1]), "startall");
        must(MPI_Waitall(1, &req[1], MPI_STATUSES_IGNORE), "waitall persistent");
        CHECK(bc[0] == round && bc[1] == 10 * round);
        s += out + bc[0] + bc[1];
    }
    must(MPI_Request_free(&req[0]), "request_free");
    must(MPI_Request_free(&req[1]), "request_free");
    CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL);
    /* a barrier_init started twice, completed by Test */
    MPI_Request bar;
    must(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &bar), "barrier_init");
    for (int k = 0; k < 2; k++) {
        int flag = 0;
        must(MPI_Start(&bar), "start barrier");
        while (!flag) must(MPI_Test(&bar, &flag, MPI_STATUS_IGNORE), "test barrier");
    }
    must(MPI_Request_free(&bar), "request_free barrier");
    result("persistent", s);
}

/* ---- neighbourhood collectives on a periodic ring (MPI 4.0 §7.6) ---- */

static void t_neighbor(void) {
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    must(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring), "cart_create");
    int me;
    MPI_Comm_rank(ring, &me);
    int left = (me - 1 + size) % size, right = (me + 1) % size;
    int mine = val(me, 0), got[2] = {-1, -1};
    must(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, ring), "neighbor_allgather");
    /* neighbours of a 1-d cartesian topology: the one below, then the one above */
    CHECK(got[0] == val(left, 0) && got[1] == val(right, 0));
    long long s = got[0] + 2LL * got[1];
    int out2[2] = {val(me, 1), val(me, 2)}, in2[2] = {-1, -1};
    MPI_Request req;
    must(MPI_Ineighbor_alltoall(out2, 1, MPI_INT, in2, 1, MPI_INT, ring, &req), "ineighbor_alltoall");
    must(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait ineighbor");
    /* the one below sent me its "up" element and the one above its "down" one */
    CHECK(in2[0] == val(left, 2) && in2[1] == val(right, 1));
    s += in2[0] + 2LL * in2[1];
    must(MPI_Comm_free(&ring), "comm_free ring");
    result("neighbor", s);
}

/* Neighbourhood collectives on the other topologies: a non-periodic 2-d
 * grid (MPI_PROC_NULL neighbours leave their slots alone), a star graph,
 * and a distributed graph with in- and out-degrees that differ (rank 0
 * sends to every other rank and receives from none), blocking and not.
 * (MPICH 4.0.2's Neighbor_alltoallw delivers nothing on that graph,
 * without heisen too: it runs on the grid.) */
static void t_neighbor_topologies(void) {
    long long s = 0;
    MPI_Comm grid;
    int dims[2] = {0, 0}, periods[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    must(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid), "cart_create 2d");
    int me, got[4] = {-1, -1, -1, -1}, mine;
    MPI_Comm_rank(grid, &me);
    mine = val(me, 3);
    must(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, grid), "grid allgather");
    for (int d = 0; d < 2; d++) {
        int below, above;
        MPI_Cart_shift(grid, d, 1, &below, &above);
        CHECK(got[2 * d] == (below == MPI_PROC_NULL ? -1 : val(below, 3)));
        CHECK(got[2 * d + 1] == (above == MPI_PROC_NULL ? -1 : val(above, 3)));
        s += got[2 * d] + 3LL * got[2 * d + 1];
    }
    /* alltoallw: element k goes to neighbour k, at byte displacements */
    int up[4], down[4] = {-1, -1, -1, -1}, four[4] = {1, 1, 1, 1};
    MPI_Aint at[4];
    MPI_Datatype ints[4];
    for (int k = 0; k < 4; k++) {
        up[k] = val(me, 20 + k);
        at[k] = (MPI_Aint)(k * (int)sizeof(int));
        ints[k] = MPI_INT;
    }
    must(MPI_Neighbor_alltoallw(up, four, at, ints, down, four, at, ints, grid), "grid alltoallw");
    for (int d = 0; d < 2; d++) {
        int below, above;
        MPI_Cart_shift(grid, d, 1, &below, &above);
        /* the one below sent its "above" element, the one above its "below" one */
        CHECK(down[2 * d] == (below == MPI_PROC_NULL ? -1 : val(below, 20 + 2 * d + 1)));
        CHECK(down[2 * d + 1] == (above == MPI_PROC_NULL ? -1 : val(above, 20 + 2 * d)));
        s += down[2 * d] + 5LL * down[2 * d + 1];
    }
    MPI_Comm_free(&grid);

    /* a star: rank 0 is every other rank's only neighbour */
    MPI_Comm star;
    int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 2 * (size_t)size);
    int e = 0;
    for (int r = 1; r < size; r++) edges[e++] = r;
    index[0] = e;
    for (int r = 1; r < size; r++) {
        edges[e++] = 0;
        index[r] = e;
    }
    must(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &star), "graph_create");
    int n = rank == 0 ? size - 1 : 1;
    int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    int *all = malloc(sizeof(int) * 2 * (size_t)n);
    for (int i = 0; i < n; i++) {
        counts[i] = 1;
        displs[i] = 2 * i;
        all[2 * i] = all[2 * i + 1] = -1;
    }
    MPI_Request req;
    must(MPI_Ineighbor_allgatherv(&mine, 1, MPI_INT, all, counts, displs, MPI_INT, star, &req),
         "star iallgatherv");
    must(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait star");
    for (int i = 0; i < n; i++) {
        int from = rank == 0 ? i + 1 : 0;
        CHECK(all[2 * i] == val(from, 3) && all[2 * i + 1] == -1);
        s += (long long)all[2 * i] * (i + 1);
    }
    must(MPI_Neighbor_allgatherv(&mine, 1, MPI_INT, all, counts, displs, MPI_INT, star),
         "star allgatherv");
    MPI_Comm_free(&star);
    free(index);
    free(edges);
    free(counts);
    free(displs);
    free(all);

    /* a distributed graph: rank 0 sends to all others, receives from none */
    MPI_Comm fan;
    int *dests = malloc(sizeof(int) * (size_t)size), zero = 0;
    for (int r = 1; r < size; r++) dests[r - 1] = r;
    if (rank == 0)
        must(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, size - 1,
                                            dests, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &fan),
             "dist_graph 0");
    else
        must(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &zero, MPI_UNWEIGHTED, 0, NULL,
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &fan),
             "dist_graph");
    int *out = malloc(sizeof(int) * (size_t)size), in = -1;
    for (int r = 0; r < size; r++) out[r] = val(rank, 10 + r);
    must(MPI_Neighbor_alltoall(out, 1, MPI_INT, &in, 1, MPI_INT, fan), "fan alltoall");
    if (rank != 0) CHECK(in == val(0, 10 + rank - 1));
    s += in;
    int *ones = malloc(sizeof(int) * (size_t)size), *idx = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) {
        ones[r] = 1;
        idx[r] = r;
    }
    in = -1;
    must(MPI_Ineighbor_alltoallv(out, ones, idx, MPI_INT, &in, ones, idx, MPI_INT, fan, &req),
         "fan ialltoallv");
    must(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait fan");
    if (rank != 0) CHECK(in == val(0, 10 + rank - 1));
    MPI_Comm_free(&fan);
    free(dests);
    free(out);
    free(ones);
    free(idx);
    result("neighbor topologies", s);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 8) {
        if (rank == 0) fprintf(stderr, "collectives: at most 8 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_type);
    MPI_Type_commit(&mat_type);
    MPI_Op_create(mat_op, 0, &op_mat);
    MPI_Op_create(mulmod_op, 1, &op_mulmod);

    t_barrier();
    t_bcast();
    t_gather();
    t_gatherv();
    t_scatter();
    t_scatterv();
    t_allgather();
    t_allgatherv();
    t_alltoall();
    t_alltoallv();
    t_reduce();
    t_allreduce();
    t_reduce_scatter();
    t_reduce_scatter_block();
    t_scan();
    t_nonblocking();
    t_persistent();
    t_neighbor();
    t_neighbor_topologies();

    MPI_Op_free(&op_mat);
    MPI_Op_free(&op_mulmod);
    MPI_Type_free(&mat_type);
    return finish("collectives");
}
