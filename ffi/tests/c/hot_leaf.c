/*
 * hot_leaf.c: leaf regions called many times in a row, by a compiler hook
 * and by the C API, so that heisen costs their pairs in the running program
 * through light windows (online costing; tests/instrument.rs). Compiled
 * with -finstrument-functions: `hot` is a region by its hooks, `c_hot` and
 * `c_third` are regions by id. In the 293rd call of `c_third`, the fourth
 * of its first light window (heisen_shmem::probe::FIRST_LIGHT + 3), the
 * program exits a region that is not open: the call must be refused with
 * its code as without a light window.
 */
#include <heisen.h>
#include <stdio.h>

#define CALLS 20000

__attribute__((noinline)) static int hot(int x) { return x * 3 + 1; }

int main(void) {
    uint32_t c_hot, c_third, other;
    if (heisen_region_register("c_hot", &c_hot) != HEISEN_RESULT_OK ||
        heisen_region_register("c_third", &c_third) != HEISEN_RESULT_OK ||
        heisen_region_register("other", &other) != HEISEN_RESULT_OK) {
        return 1;
    }
    long s = 0;
    for (int i = 0; i < CALLS; i++) s += hot(i);
    for (int i = 0; i < CALLS; i++) {
        if (heisen_region_enter(c_hot) != HEISEN_RESULT_OK) return 2;
        s += i;
        if (heisen_region_exit(c_hot) != HEISEN_RESULT_OK) return 3;
    }
    heisen_result refused = HEISEN_RESULT_OK;
    for (int i = 0; i < 1000; i++) {
        if (heisen_region_enter(c_third) != HEISEN_RESULT_OK) return 4;
        if (i == 292) refused = heisen_region_exit(other);
        s += i;
        if (heisen_region_exit(c_third) != HEISEN_RESULT_OK) return 5;
    }
    printf("sum %ld refused %d\n", s, (int)refused);
    return 0;
}
