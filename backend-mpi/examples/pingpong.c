/*
 * pingpong.c: what a message and an 8-byte allreduce cost, for the
 * interposer's overhead table. Ranks 0 and 1 bounce a message of each
 * size from 8 B to 1 MiB; for each size, `rounds` rounds of enough round
 * trips to take about a millisecond, and the median and minimum of the
 * rounds' per-round-trip times. Then all ranks time MPI_Allreduce of one
 * double the same way. Run it with and without the interposer, alternately
 * (the overhead runner does), and compare medians.
 *
 *   mpicc -O2 pingpong.c -o pingpong && mpiexec -n 2 ./pingpong [rounds] [max bytes] [allreduces]
 *
 * A largest size of 0 skips the ping-pong (the allreduce alone, for runs
 * on more ranks).
 *
 * Output, from rank 0 (times in ns):
 *
 *   pingpong <bytes> <median per round trip> <minimum>
 *   allreduce <ranks> <median per call> <minimum>
 *   cpu_self_irecv_send_wait 8 <median CPU ns per iteration> <minimum>
 *   cpu_self_sendrecv 8 <median CPU ns per call> <minimum>
 *
 * The last two are each rank's own CPU time (its thread's CPU clock) for
 * an 8-byte MPI_Irecv + MPI_Send + MPI_Wait, and an 8-byte MPI_Sendrecv,
 * both to itself on MPI_COMM_SELF: no peer to wait for, so the figure is
 * what the calls cost (with the interposer: what its wrappers add), which
 * other processes on a loaded machine stretch far less than wall time.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Round trips per round: about 1 ms at 0.35 µs + 0.2 ns per byte. */
static int iterations(size_t bytes) {
    double per = 400.0 + 0.3 * (double)bytes;
    int n = (int)(1e6 / per);
    return n < 4 ? 4 : n;
}

static void summary(const char *what, long arg, double *t, int rounds) {
    qsort(t, (size_t)rounds, sizeof *t, cmp_double);
    printf("%s %ld %.1f %.1f\n", what, arg, t[rounds / 2], t[0]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 21;
    if (rounds < 1) rounds = 1;
    const size_t max = (size_t)1 << 20;
    long largest = argc > 2 ? atol(argv[2]) : (long)max;
    char *buf = malloc(max);
    memset(buf, rank + 1, max);
    double *t = malloc(sizeof(double) * (size_t)rounds);

    for (size_t bytes = 8; bytes <= max && (long)bytes <= largest && size >= 2; bytes *= 2) {
        int n = iterations(bytes), count = (int)bytes;
        for (int round = -1; round < rounds; round++) { /* round -1 warms up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (rank == 0) {
                for (int i = 0; i < n; i++) {
                    MPI_Send(buf, count, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, count, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
            } else if (rank == 1) {
                for (int i = 0; i < n; i++) {
                    MPI_Recv(buf, count, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, count, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            if (round >= 0) t[round] = (MPI_Wtime() - t0) * 1e9 / n;
        }
        if (rank == 0) summary("pingpong", (long)bytes, t, rounds);
    }

    /* allreduces per round: about 1 ms each on two ranks of a quiet
     * machine, or as given (oversubscribed ranks take milliseconds each) */
    int n = argc > 3 ? atoi(argv[3]) : iterations(8);
    if (n < 1) n = 1;
    for (int round = -1; round < rounds; round++) {
        double in = rank, out = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double mine = (MPI_Wtime() - t0) * 1e9 / n, slowest;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (round >= 0) t[round] = slowest;
        if (out != size * (size - 1) / 2.0) {
            fprintf(stderr, "allreduce: wrong sum %g\n", out);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (rank == 0) summary("allreduce", size, t, rounds);

    /* each rank to itself: CPU time per 8-byte exchange */
    char in8[8], out8[8];
    memset(out8, 7, sizeof out8);
    const int self_n = 20000;
    for (int kind = 0; kind < 2; kind++) {
        for (int round = -1; round < rounds; round++) {
            double c0 = cpu_ns();
            for (int i = 0; i < self_n; i++) {
                if (kind == 0) {
                    MPI_Request r;
                    MPI_Irecv(in8, 8, MPI_BYTE, 0, 3, MPI_COMM_SELF, &r);
                    MPI_Send(out8, 8, MPI_BYTE, 0, 3, MPI_COMM_SELF);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                } else {
                    MPI_Sendrecv(out8, 8, MPI_BYTE, 0, 4, in8, 8, MPI_BYTE, 0, 4, MPI_COMM_SELF,
                                 MPI_STATUS_IGNORE);
                }
            }
            if (round >= 0) t[round] = (cpu_ns() - c0) / self_n;
        }
        if (memcmp(in8, out8, 8) != 0) {
            fprintf(stderr, "self exchange: wrong bytes\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (rank == 0) summary(kind == 0 ? "cpu_self_irecv_send_wait" : "cpu_self_sendrecv", 8, t, rounds);
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
