/*
 * regions.c: heisen from C. Configures and starts the runtime, selects two
 * regions for the critical path, enters regions by id (the cheap path)
 * and by name, reads the thread's live critical path and the calibrated
 * costs, and writes the report.
 *
 *   cc regions.c $(pkg-config --cflags --libs heisen) -o regions
 *   ./regions [output directory]
 */
#include <heisen.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        heisen_result r_ = (call);                                                     \
        if (r_ != HEISEN_RESULT_OK) {                                                  \
            fprintf(stderr, "%s failed: %s\n", #call, heisen_result_message(r_));     \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* Some work the compiler cannot remove. */
static double work(long n) {
    volatile double x = 0;
    for (long i = 0; i < n; i++) x += (double)i * 0.5;
    return x;
}

int main(int argc, char **argv) {
    if (heisen_version() == NULL || HEISEN_PIGGYBACK_SIZE != heisen_piggyback_size()) return 1;
    printf("heisen %s (header %s)\n", heisen_version(), HEISEN_VERSION);

    heisen_config *config = NULL;
    CHECK(heisen_config_new(&config));
    if (argc > 1) CHECK(heisen_config_set_output(config, argv[1]));
    /* The selected regions get ids 0 and 1 and travel with every record. */
    CHECK(heisen_config_select(config, "solve"));
    CHECK(heisen_config_select(config, "exchange"));
    CHECK(heisen_init(config));
    heisen_config_free(config);
    CHECK(heisen_report_set_name("regions.json"));

    uint32_t solve, exchange;
    CHECK(heisen_region_register("solve", &solve));
    CHECK(heisen_region_register("exchange", &exchange));
    printf("solve has id %u, exchange has id %u\n", solve, exchange);

    for (int step = 0; step < 100; step++) {
        CHECK(heisen_region_enter(solve));
        work(20000);
        CHECK(heisen_region_enter(exchange));
        work(2000);
        CHECK(heisen_region_exit(exchange));
        CHECK(heisen_region_exit(solve));
    }
    /* By name: convenient, a lookup per call. */
    CHECK(heisen_region_enter_name("io"));
    work(5000);
    CHECK(heisen_region_exit_name("io"));

    heisen_snapshot s;
    CHECK(heisen_snapshot_thread(&s));
    printf("critical path: %lld ns; solve %lld ns inclusive, exchange %lld ns inclusive\n",
           (long long)s.longest, (long long)s.inclusive[0], (long long)s.inclusive[1]);
    printf("without solve the path would be %lld ns shorter\n",
           (long long)(s.longest - s.net[0]));
    printf("check: shares %s, selected %u %u\n",
           s.longest >= s.inclusive[0] && s.inclusive[0] > s.inclusive[1] && s.inclusive[1] > 0
               ? "consistent"
               : "WRONG",
           s.selected[0], s.selected[1]);

    heisen_calibration c;
    CHECK(heisen_calibration_get(&c));
    printf("calibrated: enter %llu ns (%llu inside), exit %llu ns (%llu inside)\n",
           (unsigned long long)c.enter.whole, (unsigned long long)c.enter.inside,
           (unsigned long long)c.exit.whole, (unsigned long long)c.exit.inside);

    char path[4096];
    size_t len;
    CHECK(heisen_report_path(path, sizeof path, &len));
    CHECK(heisen_finalize());
    printf("report: %s\n", path);
    return 0;
}
