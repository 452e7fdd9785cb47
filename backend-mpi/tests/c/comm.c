/*
 * comm.c: communicator creation and use, each checked locally — Comm_dup,
 * Comm_dup_with_info, Comm_idup, Comm_split (with keys that reverse the
 * order), Comm_split_type (shared memory), Comm_create, Comm_create_group,
 * Comm_compare, Comm_free, attributes copied by dup, messages and
 * collectives on each new communicator (which must not be confused with
 * the same tag on another one), and an intercommunicator (Intercomm_create,
 * point-to-point across it, rooted and all-to-all collectives across it,
 * Intercomm_merge). Only rank 0 prints; the exit status is non-zero if any
 * check failed. Needs at least 2 ranks for the intercommunicator part (it
 * is skipped, and says so, with 1).
 *
 *   mpicc -O1 comm.c -o comm && mpiexec -n 4 ./comm
 *
 * MPI 4.0 standard chapter 7 (groups, contexts, communicators).
 */
#include "coll_common.h"

/* A ring exchange and an allreduce on comm: proves messages and
 * collectives work there, returns a checksum. */
static long long exercise(MPI_Comm comm, int salt) {
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int to = (me + 1) % n, from = (me - 1 + n) % n;
    int out = val(me, salt), in = -1;
    MPI_Status st;
    must(MPI_Sendrecv(&out, 1, MPI_INT, to, salt, &in, 1, MPI_INT, from, salt, comm, &st),
         "sendrecv");
    CHECK(in == val(from, salt));
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == salt);
    int cnt = -1;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 1);
    int sum = 0;
    must(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, comm), "allreduce");
    CHECK(sum == n * (n - 1) / 2);
    must(MPI_Barrier(comm), "barrier");
    return in + 3LL * sum + 7LL * n;
}

static int copies; /* how many times the attribute copy callback ran */
static int copy_fn(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)keyval;
    (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void t_dup(void) {
    long long s = 0;
    int key, payload = 42, result_cmp;
    MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, &payload);

    MPI_Comm d;
    must(MPI_Comm_dup(MPI_COMM_WORLD, &d), "comm_dup");
    MPI_Comm_compare(MPI_COMM_WORLD, d, &result_cmp);
    CHECK(result_cmp == MPI_CONGRUENT);
    void *got;
    int flag = 0;
    MPI_Comm_get_attr(d, key, &got, &flag);
    CHECK(flag && got == &payload && copies == 1);

    /* a message on the dup does not match a receive on world with the same tag */
    int a = -1, b = -1;
    MPI_Request r[2];
    int peer = (rank + 1) % size, from = (rank - 1 + size) % size;
    must(MPI_Irecv(&a, 1, MPI_INT, from, 5, MPI_COMM_WORLD, &r[0]), "irecv world");
    must(MPI_Irecv(&b, 1, MPI_INT, from, 5, d, &r[1]), "irecv dup");
    int on_dup = val(rank, 1), on_world = val(rank, 2);
    must(MPI_Send(&on_dup, 1, MPI_INT, peer, 5, d), "send dup");
    must(MPI_Send(&on_world, 1, MPI_INT, peer, 5, MPI_COMM_WORLD), "send world");
    must(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), "waitall");
    CHECK(a == val(from, 2) && b == val(from, 1));
    s += a + b + exercise(d, 1);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "false");
    MPI_Comm di;
    must(MPI_Comm_dup_with_info(d, info, &di), "comm_dup_with_info");
    MPI_Info_free(&info);
    s += exercise(di, 2);

    MPI_Comm nd;
    MPI_Request req;
    must(MPI_Comm_idup(di, &nd, &req), "comm_idup");
    must(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait idup");
    s += exercise(nd, 3);

    must(MPI_Comm_free(&nd), "comm_free");
    must(MPI_Comm_free(&di), "comm_free");
    must(MPI_Comm_free(&d), "comm_free");
    CHECK(d == MPI_COMM_NULL);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    MPI_Comm_free_keyval(&key);
    result("dup dup_with_info idup", s);
}

static void t_split(void) {
    long long s = 0;
    MPI_Comm half;
    int color = rank % 2, key = size - rank; /* keys reverse the order */
    must(MPI_Comm_split(MPI_COMM_WORLD, color, key, &half), "comm_split");
    int me, n;
    MPI_Comm_rank(half, &me);
    MPI_Comm_size(half, &n);
    int expect_n = color == 0 ? (size + 1) / 2 : size / 2;
    CHECK(n == expect_n);
    CHECK(me == n - 1 - rank / 2);
    s += me * 10 + n + exercise(half, 4);

    /* the order a rooted collective sees is the new one: root 0 of `half` is the highest world rank */
    int top = rank;
    must(MPI_Bcast(&top, 1, MPI_INT, 0, half), "bcast half");
    int highest = color == 0 ? ((size - 1) % 2 == 0 ? size - 1 : size - 2)
                             : ((size - 1) % 2 == 1 ? size - 1 : size - 2);
    CHECK(top == highest);
    s += top;

    /* MPI_UNDEFINED: rank 0 takes no part */
    MPI_Comm some;
    must(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, rank, &some), "split undefined");
    if (rank == 0) CHECK(some == MPI_COMM_NULL);
    else {
        s += exercise(some, 5);
        must(MPI_Comm_free(&some), "comm_free");
    }

    /* shared memory: every rank here is on one node */
    MPI_Comm node;
    must(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
         "split_type");
    int node_size;
    MPI_Comm_size(node, &node_size);
    CHECK(node_size == size);
    s += exercise(node, 6);
    must(MPI_Comm_free(&node), "comm_free");
    must(MPI_Comm_free(&half), "comm_free");
    result("split split_type", s);
}

static void t_create(void) {
    long long s = 0;
    MPI_Group world, evens;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int n_even = (size + 1) / 2, *ranks = malloc(sizeof(int) * (size_t)n_even);
    for (int i = 0; i < n_even; i++) ranks[i] = 2 * i;
    MPI_Group_incl(world, n_even, ranks, &evens);

    /* Comm_create: collective over all of world, odd ranks get COMM_NULL */
    MPI_Comm ce;
    must(MPI_Comm_create(MPI_COMM_WORLD, evens, &ce), "comm_create");
    if (rank % 2 == 0) {
        int me;
        MPI_Comm_rank(ce, &me);
        CHECK(me == rank / 2);
        s += exercise(ce, 7);
        must(MPI_Comm_free(&ce), "comm_free");
    } else {
        CHECK(ce == MPI_COMM_NULL);
    }

    /* Comm_create_group: collective over the group only */
    if (rank % 2 == 0) {
        MPI_Comm cg;
        must(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 9, &cg), "comm_create_group");
        s += exercise(cg, 8);
        int cmp;
        MPI_Comm_compare(cg, MPI_COMM_WORLD, &cmp);
        CHECK(size == 1 ? cmp == MPI_CONGRUENT : cmp == MPI_UNEQUAL);
        must(MPI_Comm_free(&cg), "comm_free");
    }
    MPI_Group_free(&evens);
    MPI_Group_free(&world);
    free(ranks);

    /* COMM_SELF works too */
    s += exercise(MPI_COMM_SELF, 9);
    result("create create_group self", s);
}

static void t_intercomm(void) {
    if (size < 2) {
        if (rank == 0) printf("%-28s skipped: needs 2 ranks\n", "intercomm");
        return;
    }
    long long s = 0;
    /* two groups: low half and high half; leaders are their local rank 0 */
    int low = rank < size / 2 || size / 2 == 0;
    MPI_Comm local;
    must(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local), "split for intercomm");
    int remote_leader = low ? size / 2 : 0;
    MPI_Comm inter;
    must(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 77, &inter),
         "intercomm_create");
    int flag, lsize, rsize, me;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &me);
    CHECK(flag);
    CHECK(lsize + rsize == size);

    /* point to point across: local rank i talks to remote rank i % rsize */
    int partner = me % rsize;
    int out = val(rank, 11), in = -1;
    MPI_Request rq[2];
    MPI_Status st[2];
    int senders_to_me = 0;
    for (int i = 0; i < rsize; i++) if (i % lsize == me) senders_to_me++;
    must(MPI_Isend(&out, 1, MPI_INT, partner, 3, inter, &rq[0]), "isend inter");
    long long got_sum = 0;
    for (int k = 0; k < senders_to_me; k++) {
        must(MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 3, inter, &st[1]), "recv inter");
        CHECK(st[1].MPI_SOURCE % lsize == me);
        got_sum += in;
    }
    must(MPI_Wait(&rq[0], &st[0]), "wait inter");
    s += got_sum;

    /* rooted collective across: the low group's rank 0 broadcasts to the high group */
    int b = low && me == 0 ? val(0, 12) : -1;
    int root = low ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    must(MPI_Bcast(&b, 1, MPI_INT, root, inter), "bcast inter");
    if (!low) CHECK(b == val(0, 12));
    if (!low) s += b;

    /* all-to-all shape across: allreduce gives each group the other's sum */
    int v = val(rank, 13), r = 0, want = 0;
    must(MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, inter), "allreduce inter");
    for (int k = 0; k < size; k++) {
        int k_low = k < size / 2;
        if (k_low != low) want += val(k, 13);
    }
    CHECK(r == want);
    s += r;
    must(MPI_Barrier(inter), "barrier inter");

    /* merge back into one intracommunicator, high group first */
    MPI_Comm merged;
    must(MPI_Intercomm_merge(inter, low, &merged), "intercomm_merge");
    int mrank;
    MPI_Comm_rank(merged, &mrank);
    CHECK(mrank == (low ? rank + size - size / 2 : rank - size / 2));
    s += mrank + exercise(merged, 14);
    must(MPI_Comm_free(&merged), "comm_free");
    must(MPI_Comm_free(&inter), "comm_free");
    must(MPI_Comm_free(&local), "comm_free");
    result("intercomm", s);
}

/* Many communicators created and freed: nothing may grow without bound. */
static void t_churn(void) {
    long long s = 0;
    for (int i = 0; i < 200; i++) {
        MPI_Comm c;
        must(MPI_Comm_split(MPI_COMM_WORLD, i % 2 ? rank % 2 : 0, rank, &c), "split churn");
        int one = 1, n = 0;
        must(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, c), "allreduce churn");
        int csize;
        MPI_Comm_size(c, &csize);
        CHECK(n == csize);
        s += n;
        must(MPI_Comm_free(&c), "comm_free churn");
    }
    result("churn", s);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    t_dup();
    t_split();
    t_create();
    t_intercomm();
    t_churn();
    return finish("comm");
}
