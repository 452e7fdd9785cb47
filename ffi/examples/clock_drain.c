/*
 * clock_drain.c: what a clock read costs the code around it.
 *
 * montecarlo's `inside` (a dependent chain of floating-point Newton steps;
 * backend-mpi/examples/montecarlo.c), called for 10^6 points in a loop,
 * four ways in turn, five rounds; ns per point:
 *   0  plain
 *   1  a hook before and after the chain that stores a counter (no clock)
 *   2  the same hook storing `rdtsc` (two clock reads a point)
 *   3  heisen_region_enter/_exit (the C API pair)
 * On the Intel Xeon VM of docs/fidelity.md ("What a clock read costs the
 * program"), medians of the five rounds: plain 46 ns, mode 1 +11, mode 2
 * +85, mode 3 +136: the core overlaps consecutive chains in the plain
 * loop, and a clock read waits for the chain in flight. No calibration on generic work can know that
 * of a program; heisen's online costing measures it in the program.
 *
 *   cc -O2 ffi/examples/clock_drain.c -I ffi/include -L target/release \
 *       -lheisen -Wl,-rpath,$PWD/target/release -o clock_drain
 *   ./clock_drain
 * x86-64 only (rdtsc).
 */
#include <heisen.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct event { uint64_t t; uint32_t region, kind; };
static struct event events[256];
static unsigned next;
static int mode;
static uint32_t region;

__attribute__((noinline)) static void hook(uint32_t r, uint32_t kind) {
    struct event *e = &events[next++ & 255];
    e->t = mode == 2 ? __rdtsc() : next;
    e->region = r;
    e->kind = kind;
}

__attribute__((noinline)) static int inside(double x, double y) {
    if (mode == 1 || mode == 2) hook(region, 0);
    else if (mode == 3) heisen_region_enter(region);
    double d = 1.0 + x * x, r = 0.5;
    for (int i = 0; i < 24; i++) r = r * (2.0 - d * r);
    int hit = y <= r;
    if (mode == 1 || mode == 2) hook(region, 1);
    else if (mode == 3) heisen_region_exit(region);
    return hit;
}

#define POINTS 200000
static double xy[2 * POINTS];

int main(void) {
    if (heisen_region_register("inside", &region) != HEISEN_RESULT_OK) return 1;
    uint64_t s = 1;
    for (int i = 0; i < 2 * POINTS; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        xy[i] = (double)(s >> 11) * (1.0 / 9007199254740992.0);
    }
    const char *names[] = {"plain", "hook, no clock", "hook, rdtsc", "heisen pair"};
    for (int round = 0; round < 5; round++) {
        for (mode = 0; mode < 4; mode++) {
            long hits = 0;
            uint64_t t0 = now_ns();
            for (int rep = 0; rep < 5; rep++)
                for (int i = 0; i < POINTS; i++) hits += inside(xy[2 * i], xy[2 * i + 1]);
            uint64_t t1 = now_ns();
            printf("round %d %-15s %6.1f ns a point (%ld)\n", round, names[mode],
                   (double)(t1 - t0) / (5.0 * POINTS), hits);
        }
    }
    return 0;
}
