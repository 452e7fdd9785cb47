/*
 * interleaved_hooks.c: fidelity.c's workload (seed 004's many tiny
 * functions on two threads that meet at a barrier after every step, one
 * with 50 % more work) with each step run plain and instrumented in turn
 * in one process, so that the machine's state changes alike for both
 * (docs/fidelity.md, "Interleaved in one process"). The file is compiled
 * with -finstrument-functions; the plain copy of the workload is marked
 * no_instrument_function, the instrumented copy is not:
 *
 *   cc -O2 -finstrument-functions ffi/examples/interleaved_hooks.c \
 *       -I ffi/include -L target/release -lheisen -pthread \
 *       -Wl,-rpath,$PWD/target/release -o interleaved_hooks
 *   mkdir -p out && HEISEN_OUTPUT=out ./interleaved_hooks 60
 *   python3 -c 'import json,glob; r=json.load(open(glob.glob("out/heisen.*")[0])); \
 *     n={x["id"]:x["name"] for x in r["regions"]}; \
 *     print({n[x["region"]]:x["inclusive"]/1e6 for l in r["locations"] \
 *            for x in l["regions"] if n[x["region"]].startswith("phase")})'
 *
 * Each worker prints its plain and instrumented steps' times (ns) and
 * the two copies' checksums (equal); region
 * `phaseN` of the report, entered around worker N's instrumented steps
 * (the barrier included), gives their compensated time (`inclusive`, ns).
 * A plain step ends at a pthread barrier, an instrumented one at heisen's
 * (R8). Before each step, outside any timing, the two workers meet once
 * more: at heisen's barrier before an instrumented step (the plain steps
 * merge nothing, so without it the workers would enter an instrumented
 * step with compensated clocks as far apart as their delays, where the
 * real run starts them together), at a pthread barrier before a plain
 * one (so that both kinds of step start with the workers together, and
 * neither holds a wake-up the other does not).
 */
#include <heisen.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PLAIN __attribute__((noinline, no_instrument_function))
#define HOOKED __attribute__((noinline))
#define NOHOOK __attribute__((no_instrument_function))

#ifndef LEAF_WORK
#define LEAF_WORK 70
#endif

/* fidelity.c's three tiny functions, once per copy. */
#define WORKLOAD(P, ATTR)                                                        \
    ATTR static uint32_t P##mix(uint32_t x) {                                    \
        x ^= x >> 16;                                                            \
        x *= 0x7feb352dU;                                                        \
        x ^= x >> 15;                                                            \
        return x;                                                                \
    }                                                                            \
    ATTR static uint32_t P##leaf(uint32_t x) {                                   \
        uint32_t s = x;                                                          \
        for (uint32_t i = 0; i < LEAF_WORK; i++) s = (s ^ (s >> 7)) * 0x9e3779b1U + i; \
        return P##mix(s);                                                        \
    }                                                                            \
    ATTR static uint32_t P##twig(uint32_t x) { return P##leaf(x) ^ P##leaf(x + 1); }

WORKLOAD(plain_, PLAIN)
WORKLOAD(hooked_, HOOKED)

static const long calls[2] = {3000, 2000};
static long steps = 60;
static pthread_barrier_t plain_barrier;
static heisen_barrier *barrier;
static uint32_t start;

NOHOOK static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct worker {
    int id;
    uint32_t plain_sum, hooked_sum;
    uint64_t plain, hooked;
};

NOHOOK static void *work(void *arg) {
    struct worker *w = arg;
    char name[16];
    uint32_t phase;
    snprintf(name, sizeof name, "phase%d", w->id);
    if (heisen_region_register(name, &phase) != HEISEN_RESULT_OK) exit(1);
    /* The thread's first measured call sets up its state: before any step
     * is timed. */
    heisen_region_enter(start);
    heisen_region_exit(start);
    uint32_t plain_sum = 0, hooked_sum = 0;
    for (long step = 0; step < steps; step++) {
        for (int turn = 0; turn < 2; turn++) {
            if ((turn + step) % 2) {
                heisen_barrier_wait(barrier, NULL);
                uint64_t t0 = now_ns();
                heisen_region_enter(phase);
                for (long i = 0; i < calls[w->id]; i++) hooked_sum += hooked_twig((uint32_t)(i + step));
                heisen_barrier_wait(barrier, NULL);
                heisen_region_exit(phase);
                w->hooked += now_ns() - t0;
            } else {
                pthread_barrier_wait(&plain_barrier);
                uint64_t t0 = now_ns();
                for (long i = 0; i < calls[w->id]; i++) plain_sum += plain_twig((uint32_t)(i + step));
                pthread_barrier_wait(&plain_barrier);
                w->plain += now_ns() - t0;
            }
        }
    }
    w->plain_sum = plain_sum;
    w->hooked_sum = hooked_sum;
    return NULL;
}

NOHOOK int main(int argc, char **argv) {
    if (argc > 1) steps = atol(argv[1]);
    if (steps <= 0) {
        fprintf(stderr, "usage: interleaved_hooks [steps]\n");
        return 2;
    }
    /* The first enter calibrates (R1): before any step is timed. */
    if (heisen_region_register("start", &start) != HEISEN_RESULT_OK ||
        heisen_barrier_new(2, &barrier) != HEISEN_RESULT_OK)
        return 1;
    heisen_region_enter(start);
    heisen_region_exit(start);
    pthread_barrier_init(&plain_barrier, NULL, 2);
    struct worker workers[2] = {{0, 0, 0, 0, 0}, {1, 0, 0, 0, 0}};
    pthread_t threads[2];
    for (int t = 0; t < 2; t++) pthread_create(&threads[t], NULL, work, &workers[t]);
    for (int t = 0; t < 2; t++) pthread_join(threads[t], NULL);
    pthread_barrier_destroy(&plain_barrier);
    heisen_barrier_free(barrier);
    for (int t = 0; t < 2; t++)
        printf("worker %d: plain %llu ns instrumented %llu ns checksums %u %u\n", t,
               (unsigned long long)workers[t].plain, (unsigned long long)workers[t].hooked,
               workers[t].plain_sum, workers[t].hooked_sum);
    return 0;
}
