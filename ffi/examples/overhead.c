/*
 * overhead.c: what heisen's C API costs per call, measured from C through
 * the shared library (the PLT call included), with the process clock.
 * Prints the median over 101 short rounds of each operation, in ns per call
 * (short rounds, so that the median is a round no other process
 * preempted, as in heisen's own calibration):
 *
 *   cc -O2 overhead.c -I ffi/include -L target/release -lheisen \
 *      -Wl,-rpath,target/release -o overhead && ./overhead [calls]
 *
 * The README's overhead table comes from this program (a timing loop, not
 * a test: the test command runs it with few calls and checks only that
 * it prints every row).
 */
#include <heisen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 101

static long calls = 20000;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef void (*operation)(void);

static uint32_t region;
static uint8_t record[HEISEN_PIGGYBACK_SIZE];

static void empty(void) {}

static void by_id(void) {
    heisen_region_enter(region);
    heisen_region_exit(region);
}

static void by_name(void) {
    heisen_region_enter_name("overhead");
    heisen_region_exit_name("overhead");
}

/* A function the hooks see, called the way -finstrument-functions calls
 * them (the program itself is not compiled with the flag). */
static void hooked(void) {}

static void hooks(void) {
    __cyg_profile_func_enter((void *)hooked, (void *)hooks);
    __cyg_profile_func_exit((void *)hooked, (void *)hooks);
}

static void pack(void) {
    size_t n;
    heisen_piggyback_pack(record, sizeof record, &n);
}

static void merge(void) {
    uint64_t begin = heisen_merge_begin();
    heisen_piggyback_merge(begin, record, sizeof record, 0, 0, 0, NULL);
}

static void clock_read(void) { (void)heisen_now(); }

/* Median ns per call of `op` over ROUNDS rounds, minus the empty loop's. */
static double per_call(operation op, double baseline) {
    double rounds[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < calls; i++) op();
        uint64_t t1 = now_ns();
        rounds[r] = (double)(t1 - t0) / (double)calls;
    }
    qsort(rounds, ROUNDS, sizeof rounds[0], compare);
    return rounds[ROUNDS / 2] - baseline;
}

int main(int argc, char **argv) {
    if (argc > 1) calls = atol(argv[1]);
    if (calls <= 0) {
        fprintf(stderr, "usage: overhead [calls per round]\n");
        return 2;
    }
    heisen_result r = heisen_region_register("overhead", &region);
    if (r != HEISEN_RESULT_OK) {
        fprintf(stderr, "register: %s\n", heisen_result_message(r));
        return 1;
    }
    size_t n;
    heisen_piggyback_pack(record, sizeof record, &n);
    /* Warm up: the first call starts the runtime and calibrates. */
    by_id();
    hooks();
    double baseline = per_call(empty, 0.0);
    printf("calls per round: %ld, rounds: %d, loop baseline %.1f ns (subtracted)\n", calls,
           ROUNDS, baseline);
    printf("%-36s %8.1f ns\n", "enter+exit by id", per_call(by_id, baseline));
    printf("%-36s %8.1f ns\n", "enter+exit by name", per_call(by_name, baseline));
    printf("%-36s %8.1f ns\n", "__cyg_profile_func_enter+exit", per_call(hooks, baseline));
    printf("%-36s %8.1f ns\n", "heisen_piggyback_pack", per_call(pack, baseline));
    printf("%-36s %8.1f ns\n", "heisen_merge_begin+piggyback_merge", per_call(merge, baseline));
    printf("%-36s %8.1f ns\n", "heisen_now", per_call(clock_read, baseline));
    heisen_calibration c;
    if (heisen_calibration_get(&c) == HEISEN_RESULT_OK) {
        printf("calibrated: enter+exit %llu ns, hooks %llu ns, pack %llu ns, merge %llu+%llu ns, "
               "clock %llu ns\n",
               (unsigned long long)(c.enter.whole + c.exit.whole),
               (unsigned long long)(c.hook_enter.whole + c.hook_exit.whole),
               (unsigned long long)c.pack, (unsigned long long)c.merge_begin,
               (unsigned long long)c.merge, (unsigned long long)c.clock_read);
    }
    return heisen_finalize() == HEISEN_RESULT_OK ? 0 : 1;
}
