/*
 * montecarlo.c: the real-run fidelity case of "Overhead Compensation in
 * Performance Profiling" (seed 000 §5, Table 1): π by Monte Carlo
 * integration with a master and workers. The master hands out packets of
 * pseudo-random points to whichever worker asks first (a wildcard
 * receive); a worker tests every point with a tiny function, `inside`,
 * called once per point, and returns its count with its next request.
 * One source, built twice:
 *
 *   uninstrumented:  mpicc -O2 montecarlo.c -o plain
 *   instrumented:    mpicc -O2 -DHEISEN montecarlo.c \
 *                       $(pkg-config --cflags --libs heisen) -o instrumented
 *
 * The instrumented build makes `inside` a region through heisen's C
 * region API (one enter and one exit per point: the program's run is
 * dilated by well over 50 %), and the whole timed part a region `run`.
 * Run it under the MPI interposer (`-genv LD_PRELOAD libheisen_mpi.so`):
 * the interposer and libheisen.so share one runtime per process, so the
 * workers' delay reaches the master with every request (R3–R5).
 *
 *   mpiexec -n 2 ./plain [packets] [points]
 *
 * Rank 0 prints the estimate of π (the same whichever worker got which
 * packet, and with or without heisen) and then two lines per rank with
 * its role, its own elapsed time of the timed part, and the CPU time its
 * process used meanwhile (which other processes on a busy machine do not
 * stretch; MPICH polls while it waits, so a waiting rank uses CPU too):
 *
 *   time <rank> <master|worker> <elapsed ns>
 *   cpu <rank> <master|worker> <cpu ns>
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef HEISEN
#include <heisen.h>
static uint32_t region_inside, region_run;
#define REGION_ENTER(id) heisen_region_enter(id)
#define REGION_EXIT(id) heisen_region_exit(id)
#else
#define REGION_ENTER(id) ((void)0)
#define REGION_EXIT(id) ((void)0)
#endif

enum { TAG_REQUEST = 1, TAG_WORK = 2, TAG_STOP = 3 };

/* Steps of the dependent chain in `inside`: with 24 a call costs about
 * what heisen's enter and exit around it cost, so the instrumented
 * workers take about twice as long. */
#ifndef INSIDE_WORK
#define INSIDE_WORK 24
#endif

static uint64_t read_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static uint64_t now_ns(void) { return read_ns(CLOCK_MONOTONIC); }
static uint64_t cpu_ns(void) { return read_ns(CLOCK_PROCESS_CPUTIME_ID); }

/* The packet of index k: the same points whoever computes it. */
static void fill_packet(double *xy, int points, int k) {
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1);
    for (int i = 0; i < 2 * points; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        xy[i] = (double)(s >> 11) * (1.0 / 9007199254740992.0);
    }
}

/* Is (x, y) under the curve y = 1 / (1 + x²) on [0,1]²? (The area under
 * it is π/4.) 1 / (1 + x²) by Newton's iteration for a reciprocal, a
 * dependent chain the compiler cannot fold. noinline keeps it a function
 * in both builds. */
__attribute__((noinline)) static int inside(double x, double y) {
    REGION_ENTER(region_inside);
    double d = 1.0 + x * x, r = 0.5;
    for (int i = 0; i < INSIDE_WORK; i++) r = r * (2.0 - d * r);
    int hit = y <= r;
    REGION_EXIT(region_inside);
    return hit;
}

static long long master(int workers, int packets, int points) {
    double *xy = malloc(sizeof(double) * 2 * (size_t)points);
    long long hits = 0;
    int next = 0, stopped = 0;
    fill_packet(xy, points, next);
    while (stopped < workers) {
        long long done;
        MPI_Status st;
        /* the first worker to ask gets the next packet (seed 000 §5) */
        MPI_Recv(&done, 1, MPI_LONG_LONG, MPI_ANY_SOURCE, TAG_REQUEST, MPI_COMM_WORLD, &st);
        if (done >= 0) hits += done;
        if (next < packets) {
            MPI_Send(xy, 2 * points, MPI_DOUBLE, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
            if (++next < packets) fill_packet(xy, points, next);
        } else {
            MPI_Send(NULL, 0, MPI_DOUBLE, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD);
            stopped++;
        }
    }
    free(xy);
    return hits;
}

static void worker(int points) {
    double *xy = malloc(sizeof(double) * 2 * (size_t)points);
    long long done = -1;
    for (;;) {
        MPI_Status st;
        MPI_Send(&done, 1, MPI_LONG_LONG, 0, TAG_REQUEST, MPI_COMM_WORLD);
        MPI_Recv(xy, 2 * points, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == TAG_STOP) break;
        done = 0;
        for (int i = 0; i < points; i++) done += inside(xy[2 * i], xy[2 * i + 1]);
    }
    free(xy);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int packets = argc > 1 ? atoi(argv[1]) : 2000;
    int points = argc > 2 ? atoi(argv[2]) : 1000;
    if (size < 2 || packets <= 0 || points <= 0) {
        if (rank == 0) fprintf(stderr, "usage: mpiexec -n <2 or more> montecarlo [packets] [points]\n");
        MPI_Finalize();
        return 2;
    }
#ifdef HEISEN
    if (heisen_region_register("inside", &region_inside) != HEISEN_RESULT_OK ||
        heisen_region_register("run", &region_run) != HEISEN_RESULT_OK) {
        fprintf(stderr, "heisen_region_register failed\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
#endif
    MPI_Barrier(MPI_COMM_WORLD);
    REGION_ENTER(region_run);
    uint64_t t0 = now_ns(), c0 = cpu_ns();
    long long hits = 0;
    if (rank == 0) hits = master(size - 1, packets, points);
    else worker(points);
    uint64_t elapsed = now_ns() - t0, cpu = cpu_ns() - c0;
    REGION_EXIT(region_run);

    unsigned long long mine[2] = {elapsed, cpu};
    unsigned long long *all = rank == 0 ? malloc(sizeof mine * (size_t)size) : NULL;
    MPI_Gather(mine, 2, MPI_UNSIGNED_LONG_LONG, all, 2, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        long long total = (long long)packets * points;
        printf("montecarlo: %d packets of %d points, %lld inside, pi ~ %.6f\n", packets, points, hits,
               4.0 * (double)hits / (double)total);
        for (int r = 0; r < size; r++)
            printf("time %d %s %llu\n", r, r == 0 ? "master" : "worker", all[2 * r]);
        for (int r = 0; r < size; r++)
            printf("cpu %d %s %llu\n", r, r == 0 ? "master" : "worker", all[2 * r + 1]);
        free(all);
    }
    MPI_Finalize();
    return 0;
}
