/*
 * joined.c: what the interposer's joined transfer of a large message
 * costs against the plain one, without the interposer (issue 10,
 * docs/fidelity.md, "MPI (seed 000 Table 1)"). Rank 0 sends `count` doubles to
 * rank 1, which answers with 8 bytes, as montecarlo.c's master and
 * worker do; three ways, in turn within each round:
 *
 *   plain     the payload alone;
 *   joined    a struct type {64-byte record @&record, count doubles @buf}
 *             from MPI_BOTTOM, as heisen-mpi's send_joined/recv_joined
 *             (built per message here; heisen caches it);
 *   separate  the record as its own 64-byte message, then the payload.
 *
 *   mpicc -O2 joined.c -o joined && mpiexec -n 2 ./joined [count] [rounds] [messages]
 *
 * Prints per way the median per exchange over the rounds (each round
 * `messages` exchanges), its minimum and maximum, and the receiving
 * rank's median CPU time per exchange (MPICH polls while it waits).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RECORD = 64, WAYS = 3, MAX_ROUNDS = 200 };

static double cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The struct type of the joined way: the record first, then the payload,
 * both addressed from MPI_BOTTOM (docs/piggyback.md). */
static MPI_Datatype joined(char *record, double *buf, int count) {
    MPI_Aint at[2];
    MPI_Get_address(record, &at[0]);
    MPI_Get_address(buf, &at[1]);
    int lengths[2] = {RECORD, count};
    MPI_Datatype types[2] = {MPI_BYTE, MPI_DOUBLE}, t;
    MPI_Type_create_struct(2, lengths, at, types, &t);
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int count = argc > 1 ? atoi(argv[1]) : 400000;
    int rounds = argc > 2 ? atoi(argv[2]) : 15;
    int n = argc > 3 ? atoi(argv[3]) : 20;
    if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
    double *buf = malloc(sizeof(double) * (size_t)count);
    for (int i = 0; i < count; i++) buf[i] = i;
    char record[RECORD];
    memset(record, rank, sizeof record);
    long long ack = 0;
    static double wall[WAYS][MAX_ROUNDS], cpu[WAYS][MAX_ROUNDS];
    for (int r = -1; r < rounds; r++) { /* round -1 warms up */
        for (int way = 0; way < WAYS; way++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime(), c0 = cpu_ns();
            for (int i = 0; i < n; i++) {
                if (rank == 0) {
                    if (way == 0) {
                        MPI_Send(buf, count, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
                    } else if (way == 1) {
                        MPI_Datatype t = joined(record, buf, count);
                        MPI_Send(MPI_BOTTOM, 1, t, 1, 2, MPI_COMM_WORLD);
                        MPI_Type_free(&t);
                    } else {
                        MPI_Send(record, RECORD, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
                        MPI_Send(buf, count, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
                    }
                    MPI_Recv(&ack, 1, MPI_LONG_LONG, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    if (way == 0) {
                        MPI_Recv(buf, count, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    } else if (way == 1) {
                        MPI_Datatype t = joined(record, buf, count);
                        MPI_Recv(MPI_BOTTOM, 1, t, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        MPI_Type_free(&t);
                    } else {
                        MPI_Recv(record, RECORD, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        MPI_Recv(buf, count, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    }
                    MPI_Send(&ack, 1, MPI_LONG_LONG, 0, 1, MPI_COMM_WORLD);
                }
            }
            double w = (MPI_Wtime() - t0) * 1e9 / n, c = (cpu_ns() - c0) / n, cs[2] = {0, 0};
            MPI_Gather(&c, 1, MPI_DOUBLE, cs, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (r >= 0 && rank == 0) {
                wall[way][r] = w;
                cpu[way][r] = cs[1];
            }
        }
    }
    if (rank == 0) {
        const char *name[WAYS] = {"plain", "joined", "separate"};
        for (int way = 0; way < WAYS; way++) {
            qsort(wall[way], (size_t)rounds, sizeof(double), cmp_double);
            qsort(cpu[way], (size_t)rounds, sizeof(double), cmp_double);
            printf("%-8s %d B: median %.1f us (min %.1f, max %.1f), receiver cpu %.1f us\n",
                   name[way], count * 8, wall[way][rounds / 2] / 1e3, wall[way][0] / 1e3,
                   wall[way][rounds - 1] / 1e3, cpu[way][rounds / 2] / 1e3);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
