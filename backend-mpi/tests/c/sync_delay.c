/* One-sided synchronisation, neighbourhood and persistent collectives
 * carry delay
 * (R4/R5, R6): one rank runs many tiny instrumented regions (the C region
 * API, one runtime with the interposer) while the other waits for it in a
 * window's synchronisation call or a neighbourhood collective. argv[1]
 * names the call:
 *   fence  both ranks fence; rank 0 works first (n-to-n)
 *   wait   rank 0 is the origin: start, work, put, complete; rank 1 the
 *          target: post, wait (the origin's complete reaches the wait)
 *   start  rank 1 is the target and works before its post; rank 0 the
 *          origin waits in start (the target's post reaches the start)
 *   neighbours  rank 0 works, then both call MPI_Neighbor_alltoall on a
 *          periodic 1-d Cartesian topology
 *   ineighbours  the same with MPI_Ineighbor_allgather and MPI_Wait
 *   persistent  a persistent MPI_Allreduce_init made before, started
 *          by both ranks after rank 0's work, completed with MPI_Wait;
 *          twice (each start carries that start's delay)
 *   pneighbours  a persistent MPI_Neighbor_allgather_init on the ring,
 *          started with MPI_Startall and completed with MPI_Wait; twice
 * With the interposer, the waiting rank's delay must come from the
 * working one's. Built against libheisen.so; the output is the same with
 * and without the interposer. */
#include "common.h"
#include <heisen.h>

#define REGIONS 1000000

static uint32_t work_id;

static int work(void) {
    volatile int acc = 0;
    for (int i = 0; i < REGIONS; i++) {
        heisen_region_enter(work_id);
        acc += i & 7;
        heisen_region_exit(work_id);
    }
    return acc;
}

static MPI_Group just(int r) {
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &r, &g);
    MPI_Group_free(&world);
    return g;
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    const char *how = argc > 1 ? argv[1] : "fence";
    if (heisen_region_register("work", &work_id) != HEISEN_RESULT_OK) MPI_Abort(MPI_COMM_WORLD, 3);
    int buf[2] = {-1, -1};
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int x = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(how, "fence") == 0) {
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        if (me == 0) x = work();
        if (me == 0) MPI_Put(&x, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    } else if (strcmp(how, "wait") == 0) {
        if (me == 0) {
            MPI_Group g = just(1);
            MPI_Win_start(g, 0, win);
            x = work();
            MPI_Put(&x, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
            MPI_Win_complete(win);
            MPI_Group_free(&g);
        } else if (me == 1) {
            MPI_Group g = just(0);
            MPI_Win_post(g, 0, win);
            MPI_Win_wait(win);
            MPI_Group_free(&g);
        }
    } else if (strcmp(how, "persistent") == 0 || strcmp(how, "pneighbours") == 0) {
        MPI_Comm ring;
        int dims[1] = {np}, periods[1] = {1};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
        MPI_Request req;
        int out = 0;
        if (how[0] == 'p' && how[1] == 'e')
            MPI_Allreduce_init(&out, &buf[0], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &req);
        else
            MPI_Neighbor_allgather_init(&out, 1, MPI_INT, buf, 1, MPI_INT, ring, MPI_INFO_NULL,
                                        &req);
        for (int round = 0; round < 2; round++) {
            if (me == 0) x = work();
            out = x;
            MPI_Startall(1, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&req);
        MPI_Comm_free(&ring);
    } else if (strncmp(how, "neighbours", 10) == 0 || strcmp(how, "ineighbours") == 0) {
        MPI_Comm ring;
        int dims[1] = {np}, periods[1] = {1};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
        if (me == 0) x = work();
        int out[2] = {x, x + 1};
        if (how[0] == 'i') {
            MPI_Request req;
            MPI_Ineighbor_allgather(out, 1, MPI_INT, buf, 1, MPI_INT, ring, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Neighbor_alltoall(out, 1, MPI_INT, buf, 1, MPI_INT, ring);
        }
        MPI_Comm_free(&ring);
    } else {
        if (me == 1) {
            MPI_Group g = just(0);
            x = work();
            buf[1] = x;
            MPI_Win_post(g, 0, win);
            MPI_Win_wait(win);
            MPI_Group_free(&g);
        } else if (me == 0) {
            MPI_Group g = just(1);
            MPI_Win_start(g, 0, win);
            x = 5;
            MPI_Put(&x, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
            MPI_Win_complete(win);
            MPI_Group_free(&g);
        }
    }
    MPI_Win_free(&win);
    SAY("%s x %d buf %d %d", how, x, buf[0], buf[1]);
    MPI_Finalize();
    return 0;
}
