/*
 * interleaved.c: montecarlo's worker loop (backend-mpi/examples/
 * montecarlo.c, the tiny function `inside` made a region through the C
 * API), each packet of points run plain and instrumented in turn in one
 * process, so that the machine's state changes alike for both: the plain
 * packets' time against the compensated time of the region `packet`
 * around the instrumented ones (docs/fidelity.md, "Online costing").
 *
 *   cc -O2 ffi/examples/interleaved.c -I ffi/include -L target/release \
 *       -lheisen -Wl,-rpath,$PWD/target/release -o interleaved
 *   mkdir -p out && HEISEN_OUTPUT=out ./interleaved 20 [lock_every]
 *   python3 -c 'import json,glob; r=json.load(open(glob.glob("out/heisen.*")[0])); \
 *     p=[x["id"] for x in r["regions"] if x["name"]=="packet"][0]; \
 *     print([x["inclusive"]/1e6 for x in r["locations"][0]["regions"] if x["region"]==p])'
 *
 * prints the plain and the instrumented packets' times (ms); the report's
 * `packet` record gives the compensated one (`inclusive`, ns).
 * HEISEN_CALIBRATION=in-situ compares without online costing.
 *
 * With `lock_every` N > 0 every N-th point takes a lock (heisen's mutex
 * in the instrumented copy, a pthread mutex in the plain one): the calls
 * of `inside` then come in segments of N between two other actions
 * (docs/fidelity.md, "Segments").
 */
#include <heisen.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t region_inside, region_packet;
static int instrumented;
static pthread_mutex_t plain_lock = PTHREAD_MUTEX_INITIALIZER;
static heisen_mutex *lock;
static long locked;

/* The other action between segments: a lock taken and released. */
static void take_lock(void) {
    if (instrumented) {
        heisen_mutex_lock(lock);
        locked++;
        heisen_mutex_unlock(lock);
    } else {
        pthread_mutex_lock(&plain_lock);
        locked++;
        pthread_mutex_unlock(&plain_lock);
    }
}

__attribute__((noinline)) static int inside(double x, double y) {
    if (instrumented) heisen_region_enter(region_inside);
    double d = 1.0 + x * x, r = 0.5;
    for (int i = 0; i < 24; i++) r = r * (2.0 - d * r);
    int hit = y <= r;
    if (instrumented) heisen_region_exit(region_inside);
    return hit;
}

int main(int argc, char **argv) {
    if (heisen_region_register("inside", &region_inside) != HEISEN_RESULT_OK ||
        heisen_region_register("packet", &region_packet) != HEISEN_RESULT_OK)
        return 1;
    /* The first enter calibrates: before any packet is timed. */
    heisen_region_enter(region_packet);
    heisen_region_exit(region_packet);
    int points = 200000, packets = argc > 1 ? atoi(argv[1]) : 20;
    int lock_every = argc > 2 ? atoi(argv[2]) : 0;
    if (heisen_mutex_new(&lock) != HEISEN_RESULT_OK) return 1;
    double *xy = malloc(sizeof(double) * 2 * (size_t)points);
    if (!xy) return 1;
    long long hits = 0;
    uint64_t plain = 0, with = 0;
    for (int k = 0; k < packets; k++) {
        uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1);
        for (int i = 0; i < 2 * points; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            xy[i] = (double)(s >> 11) * (1.0 / 9007199254740992.0);
        }
        for (int turn = 0; turn < 2; turn++) {
            instrumented = (turn + k) % 2;
            uint64_t t0 = now_ns();
            if (instrumented) heisen_region_enter(region_packet);
            for (int i = 0; i < points; i++) {
                hits += inside(xy[2 * i], xy[2 * i + 1]);
                if (lock_every > 0 && i % lock_every == lock_every - 1) take_lock();
            }
            if (instrumented) heisen_region_exit(region_packet);
            uint64_t t1 = now_ns();
            if (instrumented) with += t1 - t0; else plain += t1 - t0;
        }
    }
    printf("plain %.1f ms instrumented %.1f ms (%lld, %ld locks)\n", plain / 1e6, with / 1e6, hits,
           locked);
    heisen_mutex_free(lock);
    free(xy);
    return 0;
}
