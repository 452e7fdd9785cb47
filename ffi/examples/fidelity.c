/*
 * fidelity.c: the dilation case of seed 004 — many tiny functions — on two
 * threads that meet at a barrier after every step, with uneven work so
 * that one of them waits. Built twice from this one source:
 *
 *   uninstrumented:  cc -O2 fidelity.c -pthread -o plain
 *   instrumented:    cc -O2 -DHEISEN -finstrument-functions fidelity.c \
 *                       $(pkg-config --cflags --libs heisen) -o instrumented
 *
 * The instrumented build enters a region for every function call (the
 * -finstrument-functions hooks) and meets at heisen's barrier, which
 * merges the other thread's record (R8); the plain build uses a pthread
 * barrier. Each worker prints its own elapsed time; the instrumented run
 * also writes a report whose compensated times are compared with the
 * plain run's (examples/fidelity.rs, the README's fidelity table).
 *
 *   ./plain [steps]    ./instrumented [steps]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef HEISEN
#include <heisen.h>
static heisen_barrier *barrier;
static void barrier_init(void) {
    heisen_result r = heisen_barrier_new(2, &barrier);
    if (r != HEISEN_RESULT_OK) {
        fprintf(stderr, "heisen_barrier_new: %s\n", heisen_result_message(r));
        exit(1);
    }
}
static void barrier_wait(void) { heisen_barrier_wait(barrier, NULL); }
static void barrier_free(void) { heisen_barrier_free(barrier); }
#else
static pthread_barrier_t barrier;
static void barrier_init(void) { pthread_barrier_init(&barrier, NULL, 2); }
static void barrier_wait(void) { pthread_barrier_wait(&barrier); }
static void barrier_free(void) { pthread_barrier_destroy(&barrier); }
#endif

/* Calls per step of each worker: worker 0 has more to do, so worker 1
 * waits at every barrier. */
static const long calls[2] = {3000, 2000};

/* Iterations of a leaf's loop: with 70, each call of twig (five function
 * calls) does a little less work than heisen's five enters and exits
 * around it cost, and the instrumented run takes well over twice as long
 * (+100 % dilation or more, measured on this machine; with 100 it was
 * +90 to +97 % once the hooks got cheaper). */
#ifndef LEAF_WORK
#define LEAF_WORK 70
#endif
static long steps = 60;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The tiny functions: a few ns of work each, called in the millions.
 * noinline keeps them functions in both builds, as in real code that
 * the compiler cannot inline across files. */
__attribute__((noinline)) static uint32_t mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    return x;
}

__attribute__((noinline)) static uint32_t leaf(uint32_t x) {
    uint32_t s = x;
    /* A dependent chain the compiler cannot fold into a formula. */
    for (uint32_t i = 0; i < LEAF_WORK; i++) s = (s ^ (s >> 7)) * 0x9e3779b1U + i;
    return mix(s);
}

__attribute__((noinline)) static uint32_t twig(uint32_t x) { return leaf(x) ^ leaf(x + 1); }

struct worker {
    int id;
    uint32_t checksum;
    uint64_t elapsed;
    uint64_t cpu;
};

/* The calling thread's CPU time: unlike the elapsed time, it does not
 * grow while other processes hold the cores, so it tells instrumentation
 * cost from preemption on a busy machine. */
static uint64_t cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *work(void *arg) {
    struct worker *w = arg;
    uint64_t t0 = now_ns();
    uint64_t c0 = cpu_ns();
    uint32_t sum = 0;
    for (long step = 0; step < steps; step++) {
        for (long i = 0; i < calls[w->id]; i++) sum += twig((uint32_t)(i + step));
        barrier_wait();
    }
    w->cpu = cpu_ns() - c0;
    w->elapsed = now_ns() - t0;
    w->checksum = sum;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) steps = atol(argv[1]);
    if (steps <= 0) {
        fprintf(stderr, "usage: fidelity [steps]\n");
        return 2;
    }
    barrier_init();
    struct worker workers[2] = {{0, 0, 0, 0}, {1, 0, 0, 0}};
    pthread_t threads[2];
    for (int t = 0; t < 2; t++) pthread_create(&threads[t], NULL, work, &workers[t]);
    for (int t = 0; t < 2; t++) pthread_join(threads[t], NULL);
    barrier_free();
    for (int t = 0; t < 2; t++)
        printf("worker %d: elapsed %llu ns, cpu %llu ns, checksum %u\n", t,
               (unsigned long long)workers[t].elapsed, (unsigned long long)workers[t].cpu,
               workers[t].checksum);
    return 0;
}
