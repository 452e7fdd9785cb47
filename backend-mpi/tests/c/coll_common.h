/*
 * coll_common.h: what the collective, communicator and Pcontrol test programs
 * share. Every check is local; `result` gathers one (checksum, failures)
 * pair per rank to rank 0, which alone prints, so the output is the same
 * from run to run and identical with and without the interposer (the
 * transparency tests compare it byte for byte).
 */
#ifndef HEISEN_MPI_COLL_COMMON_H
#define HEISEN_MPI_COLL_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static int local_failures; /* failed checks on this rank since the last result */
static int total_failures; /* on rank 0: failed checks of all ranks */
static int results;

/* A check that failed prints nothing here (only rank 0 prints): it is
 * counted and shows up as FAIL in the result line that follows. */
#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            if (getenv("HEISEN_TEST_VERBOSE"))                                              \
                fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__,        \
                        __LINE__, #cond);                                                   \
            local_failures++;                                                               \
        }                                                                                   \
    } while (0)

/* The value rank r puts at index i of its buffers. */
static int val(int r, int i) { return r * 1000 + i; }

static void must(int rc, const char *what) {
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "rank %d: %s: %s\n", rank, what, msg);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* Gather every rank's checksum and failure count to rank 0 and print one
 * line: the name, each rank's checksum, ok or FAIL. */
static void result(const char *name, long long checksum) {
    long long mine[2] = {checksum, local_failures};
    long long *all = NULL;
    if (rank == 0) all = malloc(sizeof(long long) * 2 * (size_t)size);
    must(MPI_Gather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD), name);
    if (rank == 0) {
        long long bad = 0;
        printf("%-28s", name);
        for (int r = 0; r < size; r++) {
            printf(" %lld", all[2 * r]);
            bad += all[2 * r + 1];
        }
        printf(" %s\n", bad ? "FAIL" : "ok");
        total_failures += (int)bad;
        free(all);
    }
    local_failures = 0;
    results++;
}

static inline long long sum_ints(const int *v, int n) {
    long long s = 0;
    for (int i = 0; i < n; i++) s += (long long)v[i] * (i + 1);
    return s;
}

/* Some work, a ring message and an allreduce, checked: a phase's checksum
 * (pcontrol.c, pcontrol_phase.c). */
static inline long long ring_phase(int salt) {
    volatile unsigned x = (unsigned)(rank + salt);
    for (int i = 0; i < 20000; i++) x = x * 1103515245u + 12345u;
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int out = val(rank, salt), in = -1;
    must(MPI_Sendrecv(&out, 1, MPI_INT, to, salt, &in, 1, MPI_INT, from, salt, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE),
         "sendrecv");
    CHECK(in == val(from, salt));
    int sum = 0;
    must(MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "allreduce");
    int want = 0;
    for (int r = 0; r < size; r++) want += val(r, salt);
    CHECK(sum == want);
    return in + (long long)sum;
}

static int finish(const char *program) {
    if (rank == 0) {
        printf("%s: %d results on %d ranks, %d failed checks\n", program, results, size,
               total_failures);
        fflush(stdout);
    }
    int failed = total_failures;
    must(MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD), "final bcast");
    MPI_Finalize();
    return failed ? 1 : 0;
}

#endif
