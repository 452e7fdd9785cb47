/*
 * rma.c: one-sided communication, each step checked locally — windows made
 * every way (Win_create and its _c form, Win_allocate, Win_allocate_shared
 * on a node's communicator, Win_create_dynamic with Win_attach), fences
 * with and without assertions (NOPRECEDE, NOSUCCEED, NOSTORE),
 * general active target (Win_post/Win_start/Win_complete/Win_wait and
 * Win_test, a ring and one target with every other rank as origin, and
 * MPI_MODE_NOCHECK), passive target (Win_lock/Win_unlock, Win_lock_all
 * with Win_flush and Fetch_and_op), a window freed while the program's
 * communicator is already freed (its attribute's callbacks called as
 * often as without heisen), 200 windows made and freed one after the
 * other (handles reused), and 300 windows alive at once (more than heisen
 * tracks; these two on 2 ranks only). Only rank 0 prints; the exit status is non-zero if any check
 * failed.
 *
 *   mpicc -O1 rma.c -o rma && mpiexec -n 4 ./rma
 *
 * MPI 4.0 standard chapter 12 (one-sided communications).
 */
#include "coll_common.h"

#define N 8

/* Calls of the program's attribute callbacks: the MPI's own window
 * creation may copy the communicator's attributes, heisen must not add
 * any copy or delete of its own. */
static int copies, deletes;

static int copy_attr(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag) {
    (void)comm, (void)key, (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_attr(MPI_Comm comm, int key, void *value, void *extra) {
    (void)comm, (void)key, (void)value, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

/* Each rank puts val(rank, i) into its right neighbour's window between
 * two fences and checks what its left neighbour put. */
static long long fenced_ring(MPI_Win win, int *buf, int assert_open, int assert_close) {
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int out[N];
    for (int i = 0; i < N; i++) out[i] = val(rank, i);
    must(MPI_Win_fence(assert_open, win), "fence open");
    must(MPI_Put(out, N, MPI_INT, right, 0, N, MPI_INT, win), "put");
    must(MPI_Win_fence(assert_close, win), "fence close");
    for (int i = 0; i < N; i++) CHECK(buf[i] == val(left, i));
    return sum_ints(buf, N);
}

static MPI_Group group_of(const int *ranks, int n) {
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    must(MPI_Group_incl(world, n, ranks, &g), "group_incl");
    MPI_Group_free(&world);
    return g;
}

/* General active target on a ring: each rank exposes its window to its
 * left neighbour and accesses its right neighbour's. `test` waits with
 * Win_test instead of Win_wait. */
static long long pscw_ring(MPI_Win win, int *buf, int salt, int test) {
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    MPI_Group origins = group_of(&left, 1), targets = group_of(&right, 1);
    int out[N];
    for (int i = 0; i < N; i++) out[i] = val(rank, i + salt);
    must(MPI_Win_post(origins, 0, win), "post");
    must(MPI_Win_start(targets, 0, win), "start");
    must(MPI_Put(out, N, MPI_INT, right, 0, N, MPI_INT, win), "put");
    must(MPI_Win_complete(win), "complete");
    if (test) {
        int flag = 0, polls = 0;
        while (!flag) {
            must(MPI_Win_test(win, &flag), "test");
            polls++;
        }
        CHECK(polls >= 1);
    } else {
        must(MPI_Win_wait(win), "wait");
    }
    for (int i = 0; i < N; i++) CHECK(buf[i] == val(left, i + salt));
    MPI_Group_free(&origins);
    MPI_Group_free(&targets);
    return sum_ints(buf, N);
}

/* Rank 0 exposes its window to every other rank, each of which adds its
 * rank into slot 0 (an accumulate) and puts into its own slot. */
static long long pscw_gather(MPI_Win win, int *buf) {
    long long sum = 0;
    if (rank == 0) {
        int *others = malloc(sizeof(int) * (size_t)size);
        for (int r = 1; r < size; r++) others[r - 1] = r;
        MPI_Group g = group_of(others, size - 1);
        for (int i = 0; i < N; i++) buf[i] = 0;
        must(MPI_Win_post(g, 0, win), "post");
        must(MPI_Win_wait(win), "wait");
        int want = 0;
        for (int r = 1; r < size; r++) want += r;
        CHECK(buf[0] == want);
        for (int r = 1; r < size && r < N; r++) CHECK(buf[r] == val(r, 7));
        sum = sum_ints(buf, N);
        MPI_Group_free(&g);
        free(others);
    } else {
        int zero = 0;
        MPI_Group g = group_of(&zero, 1);
        int mine = rank, v = val(rank, 7);
        must(MPI_Win_start(g, 0, win), "start");
        must(MPI_Accumulate(&mine, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win), "accumulate");
        if (rank < N) must(MPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, win), "put");
        must(MPI_Win_complete(win), "complete");
        MPI_Group_free(&g);
    }
    return sum;
}

/* MPI_MODE_NOCHECK: the posts are known to be done (a barrier) before
 * the starts. */
static long long pscw_nocheck(MPI_Win win, int *buf) {
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    MPI_Group origins = group_of(&left, 1), targets = group_of(&right, 1);
    int out = val(rank, 11);
    must(MPI_Win_post(origins, MPI_MODE_NOCHECK, win), "post");
    must(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    must(MPI_Win_start(targets, MPI_MODE_NOCHECK, win), "start");
    must(MPI_Put(&out, 1, MPI_INT, right, 1, 1, MPI_INT, win), "put");
    must(MPI_Win_complete(win), "complete");
    must(MPI_Win_wait(win), "wait");
    CHECK(buf[1] == val(left, 11));
    MPI_Group_free(&origins);
    MPI_Group_free(&targets);
    return buf[1];
}

/* Passive target: every rank adds into rank 0's slot 2 under an exclusive
 * lock, then fetches-and-adds slot 3 under lock_all with a flush. */
static long long passive(MPI_Win win, int *buf) {
    if (rank == 0) {
        must(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win), "lock");
        buf[2] = 0;
        buf[3] = 0;
        must(MPI_Win_unlock(0, win), "unlock");
    }
    must(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    int one = rank + 1;
    must(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win), "lock");
    must(MPI_Accumulate(&one, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_SUM, win), "accumulate");
    must(MPI_Win_unlock(0, win), "unlock");
    int before = -1;
    must(MPI_Win_lock_all(0, win), "lock_all");
    must(MPI_Fetch_and_op(&one, &before, MPI_INT, 0, 3, MPI_SUM, win), "fetch_and_op");
    must(MPI_Win_flush(0, win), "flush");
    must(MPI_Win_flush_local_all(win), "flush_local_all");
    must(MPI_Win_unlock_all(win), "unlock_all");
    CHECK(before >= 0 && before <= size * (size + 1) / 2 - one);
    must(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    long long sum = 0;
    if (rank == 0) {
        must(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), "lock");
        must(MPI_Win_sync(win), "sync");
        CHECK(buf[2] == size * (size + 1) / 2);
        CHECK(buf[3] == size * (size + 1) / 2);
        sum = buf[2] + buf[3];
        must(MPI_Win_unlock(0, win), "unlock");
    }
    return sum;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Win_create on a duplicate the program frees before the window; the
     * duplicate has an attribute with callbacks */
    {
        MPI_Comm dup;
        must(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "dup");
        int key;
        static int value = 42;
        must(MPI_Comm_create_keyval(copy_attr, delete_attr, &key, NULL), "keyval");
        must(MPI_Comm_set_attr(dup, key, &value), "set_attr");
        int *buf = calloc(N, sizeof(int));
        MPI_Win win;
        must(MPI_Win_create(buf, N * sizeof(int), sizeof(int), MPI_INFO_NULL, dup, &win), "create");
        must(MPI_Comm_free(&dup), "free dup");
        long long c = fenced_ring(win, buf, 0, 0);
        c += fenced_ring(win, buf, MPI_MODE_NOPRECEDE, MPI_MODE_NOSUCCEED);
        c += fenced_ring(win, buf, MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE, MPI_MODE_NOSUCCEED);
        result("create/fence", c);
        c = pscw_ring(win, buf, 1, 0) + pscw_ring(win, buf, 2, 1) + pscw_ring(win, buf, 3, 0);
        result("create/pscw ring", c);
        c = pscw_gather(win, buf);
        result("create/pscw gather", c);
        c = pscw_nocheck(win, buf);
        result("create/pscw nocheck", c);
        c = passive(win, buf);
        result("create/passive", c);
        must(MPI_Win_free(&win), "win free");
        CHECK(win == MPI_WIN_NULL);
        free(buf);
        MPI_Comm_free_keyval(&key);
        result("create/free", 1);
        /* what the MPI did with the attribute, the same with heisen */
        result("create/attribute callbacks", 100 * copies + deletes);
    }

    /* Win_create_c and Win_allocate, fences and PSCW */
    {
        int *buf = calloc(N, sizeof(int));
        MPI_Win win;
        must(MPI_Win_create_c(buf, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                              &win),
             "create_c");
        long long c = fenced_ring(win, buf, 0, MPI_MODE_NOSUCCEED);
        must(MPI_Win_free(&win), "win free");
        free(buf);
        int *mem = NULL;
        must(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                              &win),
             "allocate");
        for (int i = 0; i < N; i++) mem[i] = -1;
        c += fenced_ring(win, mem, 0, 0) + pscw_ring(win, mem, 5, 1);
        must(MPI_Win_free(&win), "win free");
        result("allocate", c);
    }

    /* Win_allocate_shared on the node's ranks: stores, a fence, loads */
    {
        MPI_Comm node;
        must(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
             "split_type");
        int nrank, nsize;
        MPI_Comm_rank(node, &nrank);
        MPI_Comm_size(node, &nsize);
        int *mine = NULL;
        MPI_Win win;
        must(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win),
             "allocate_shared");
        must(MPI_Win_fence(0, win), "fence");
        *mine = val(nrank, 3);
        must(MPI_Win_fence(0, win), "fence");
        long long c = 0;
        for (int r = 0; r < nsize; r++) {
            MPI_Aint sz;
            int du;
            int *theirs = NULL;
            must(MPI_Win_shared_query(win, r, &sz, &du, &theirs), "shared_query");
            CHECK(*theirs == val(r, 3));
            c += *theirs;
        }
        must(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), "fence");
        must(MPI_Win_free(&win), "win free");
        MPI_Comm_free(&node);
        result("allocate_shared", c > 0);
    }

    /* Win_create_dynamic with memory attached after creation */
    {
        MPI_Win win;
        must(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win), "create_dynamic");
        int *buf = calloc(N, sizeof(int));
        must(MPI_Win_attach(win, buf, N * sizeof(int)), "attach");
        MPI_Aint mine, theirs;
        MPI_Get_address(buf, &mine);
        int right = (rank + 1) % size, left = (rank - 1 + size) % size;
        must(MPI_Sendrecv(&mine, 1, MPI_AINT, left, 9, &theirs, 1, MPI_AINT, right, 9,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE),
             "sendrecv");
        int out = val(rank, 4);
        must(MPI_Win_fence(0, win), "fence");
        must(MPI_Put(&out, 1, MPI_INT, right, theirs, 1, MPI_INT, win), "put");
        must(MPI_Win_fence(0, win), "fence");
        CHECK(buf[0] == val(left, 4));
        long long c = buf[0];
        must(MPI_Win_detach(win, buf), "detach");
        must(MPI_Win_free(&win), "win free");
        free(buf);
        result("create_dynamic", c);
    }

    /* The two parts below make 500 windows, some ten collectives each:
     * on more ranks than this machine's two cores, with MPICH's ranks
     * busy-polling, they take half a minute without heisen. */
    if (size > 2) return finish("rma");

    /* 200 windows one after the other: the MPI reuses their handles */
    {
        int *buf = calloc(N, sizeof(int));
        long long c = 0;
        for (int k = 0; k < 200; k++) {
            MPI_Win win;
            must(MPI_Win_create(buf, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &win),
                 "create");
            if (k % 50 == 0) c += fenced_ring(win, buf, 0, 0);
            must(MPI_Win_free(&win), "win free");
        }
        free(buf);
        result("200 windows in turn", c);
    }

    /* 300 windows alive at once, more than heisen tracks: each still
     * synchronises, in creation order and in reverse */
    {
        enum { MANY = 300 };
        MPI_Win *wins = malloc(sizeof(MPI_Win) * MANY);
        int *bufs = calloc((size_t)MANY * N, sizeof(int));
        for (int k = 0; k < MANY; k++)
            must(MPI_Win_create(bufs + (size_t)k * N, N * sizeof(int), sizeof(int),
                                MPI_INFO_NULL, MPI_COMM_WORLD, &wins[k]),
                 "create");
        long long c = 0;
        for (int k = 0; k < MANY; k += 37) c += fenced_ring(wins[k], bufs + (size_t)k * N, 0, 0);
        c += pscw_ring(wins[MANY - 1], bufs + (size_t)(MANY - 1) * N, 6, 0);
        c += pscw_ring(wins[0], bufs, 8, 0);
        for (int k = MANY - 1; k >= 0; k--) must(MPI_Win_free(&wins[k]), "win free");
        free(bufs);
        free(wins);
        result("300 windows at once", c);
    }

    return finish("rma");
}
