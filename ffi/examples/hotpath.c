/*
 * hotpath.c: back-to-back region pairs for `valgrind --tool=callgrind`,
 * counted with `--toggle-collect=pairs_id` or `--toggle-collect=pairs_hook`
 * (scripts/hotpath-callgrind runs it; docs/performance.md, "The C API"). The first
 * pair of each kind, outside the counted loop, calibrates the C actions.
 *
 *   hotpath id [n]    n pairs of heisen_region_enter/_exit by id ("hot")
 *   hotpath hook [n]  n pairs of __cyg_profile_func_enter/_exit
 *
 * Not a test: it checks nothing and prints nothing.
 */
#include <heisen.h>
#include <stdlib.h>
#include <string.h>

/* A function the hooks see (this program is not compiled with
 * -finstrument-functions; the loop calls the hooks as if it were). */
static void hooked(void) {}

__attribute__((noinline)) void pairs_id(uint32_t region, long n) {
    for (long i = 0; i < n; i++) {
        heisen_region_enter(region);
        heisen_region_exit(region);
    }
}

__attribute__((noinline)) void pairs_hook(long n) {
    for (long i = 0; i < n; i++) {
        __cyg_profile_func_enter((void *)hooked, (void *)pairs_hook);
        __cyg_profile_func_exit((void *)hooked, (void *)pairs_hook);
    }
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "id";
    long n = argc > 2 ? atol(argv[2]) : 100000;
    uint32_t region;
    if (heisen_region_register("hot", &region) != HEISEN_RESULT_OK) return 1;
    heisen_region_enter(region);
    heisen_region_exit(region);
    __cyg_profile_func_enter((void *)hooked, (void *)pairs_hook);
    __cyg_profile_func_exit((void *)hooked, (void *)pairs_hook);
    if (strcmp(what, "hook") == 0)
        pairs_hook(n);
    else
        pairs_id(region, n);
    return 0;
}
