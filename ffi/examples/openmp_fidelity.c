/*
 * openmp_fidelity.c: fidelity.c's tiny functions (seed 004's dilation
 * case) as an OpenMP program: a team of two that meets at
 * `#pragma omp barrier` after every step, thread 0 (main) doing two
 * thirds of thread 1's work, so main waits at every barrier. Built plain
 * (`cc -fopenmp`) and instrumented (`-finstrument-functions -lheisen`);
 * the instrumented build is run alone (the hooks see the functions, not
 * libgomp's barriers) and with `LD_PRELOAD=libheisen_pthread.so` (whose
 * libgomp wrappers merge the barriers, the fork and the join). It prints
 * the region's elapsed time; the report's `run` region on main's
 * location is its compensated time (examples/ffi_fidelity.rs, `openmp`).
 * With -DTASKS the same work is done by tasks (`openmp-tasks`).
 *
 *   ./openmp_fidelity [steps]
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifndef LEAF_WORK
#define LEAF_WORK 70
#endif
static uint64_t now_ns(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec; }
__attribute__((noinline)) static uint32_t mix(uint32_t x) { x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; return x; }
__attribute__((noinline)) static uint32_t leaf(uint32_t x) { uint32_t s = x; for (uint32_t i = 0; i < LEAF_WORK; i++) s = (s ^ (s >> 7)) * 0x9e3779b1U + i; return mix(s); }
__attribute__((noinline)) static uint32_t twig(uint32_t x) { return leaf(x) ^ leaf(x + 1); }
static const long calls[2] = {2000, 3000};
#ifdef TASKS
/* The same work as tasks: each step, one thread makes five tasks of 1,000
 * calls and waits for them in `taskwait`, the other runs tasks at the
 * barrier ending `single` meanwhile (-DTASKS). */
__attribute__((noinline)) static uint32_t run(long steps) {
    uint32_t total = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    for (long step = 0; step < steps; step++) {
        uint32_t part[5] = {0};
        for (int t = 0; t < 5; t++) {
#pragma omp task shared(part) firstprivate(t, step)
            {
                uint32_t sum = 0;
                for (long i = 0; i < 1000; i++) sum += twig((uint32_t)(t * 1000 + i + step));
                part[t] = sum;
            }
        }
#pragma omp taskwait
        total ^= part[0] ^ part[1] ^ part[2] ^ part[3] ^ part[4];
    }
    return total;
}
#else
__attribute__((noinline)) static uint32_t run(long steps) {
    uint32_t total = 0;
#pragma omp parallel num_threads(2) reduction(^ : total)
    {
        int me = omp_get_thread_num();
        uint32_t sum = 0;
        for (long step = 0; step < steps; step++) {
            for (long i = 0; i < calls[me]; i++) sum += twig((uint32_t)(i + step));
#pragma omp barrier
        }
        total ^= sum;
    }
    return total;
}
#endif
int main(int argc, char **argv) {
    /* Nothing before `run`: the team's threads start inside it, both ways. */
    long steps = argc > 1 ? atol(argv[1]) : 60;

    uint64_t t0 = now_ns();
    uint32_t r = run(steps);
    uint64_t t1 = now_ns();
    printf("run %.3f ms checksum %u\n", (t1 - t0) / 1e6, r);
    return 0;
}
