/* OpenMP nest locks and ordered sections as hand-offs (R8):
 *   openmp_ordered run      each construct once, results printed
 *   openmp_ordered nest     thread 1 holds a nest lock (set twice) while it
 *                           works dilated by lock pairs; main waits for it
 *                           in omp_set_nest_lock
 *   openmp_ordered ordered  a loop's ordered sections: thread 1's of
 *                           iteration 1 is dilated, main's of iteration 2
 *                           waits for it
 * Thread 1 starts its dilated work only once main is asleep in its wait,
 * so that the wait covers it however the threads are scheduled. Under the
 * interposer main's delay takes over thread 1's (the test reads both from
 * the report). Output must be identical with and without it. */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "asleep.h"

static pid_t main_tid;

static omp_lock_t plain;

/* Waits for `*flag` without a wrapped call. */
static void await(volatile int *flag) {
    while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
        ;
}

/* 20,000 lock pairs, each charged by heisen, once main waits. */
static void dilated(void) {
    until_asleep(main_tid);
    for (int i = 0; i < 20000; i++) {
        omp_set_lock(&plain);
        omp_unset_lock(&plain);
    }
}

static int run(void) {
    omp_nest_lock_t n;
    omp_init_nest_lock(&n);
    int counts[3];
    omp_set_nest_lock(&n);
    counts[0] = omp_test_nest_lock(&n);
    counts[1] = omp_test_nest_lock(&n);
    omp_unset_nest_lock(&n);
    omp_unset_nest_lock(&n);
    omp_unset_nest_lock(&n);
    /* a nest lock is owned by a task: the region's implicit tasks are
     * others than the one that set it above, which now holds it no more */
    int refused = -1;
    volatile int held = 0, tried = 0;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            omp_set_nest_lock(&n); /* free again: level 1 */
            __atomic_store_n(&held, 1, __ATOMIC_RELEASE);
            await(&tried);
            omp_unset_nest_lock(&n);
        } else {
            await(&held);
            refused = omp_test_nest_lock(&n);
            __atomic_store_n(&tried, 1, __ATOMIC_RELEASE);
        }
    }
    counts[2] = omp_test_nest_lock(&n);
    omp_unset_nest_lock(&n);
    omp_destroy_nest_lock(&n);
    printf("nest counts %d %d %d refused %d\n", counts[0], counts[1], counts[2], refused);
    long order[40], next = 0;
#pragma omp parallel for ordered schedule(dynamic, 3) num_threads(3)
    for (int i = 0; i < 40; i++) {
#pragma omp ordered
        order[next++] = i;
    }
    int in_order = 1;
    for (int i = 0; i < 40; i++) in_order &= order[i] == i;
    printf("ordered %ld in order %d\n", next, in_order);
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "run";
    main_tid = gettid();
    omp_init_lock(&plain);
    if (!strcmp(mode, "run")) return run();
    if (!strcmp(mode, "nest")) {
        omp_nest_lock_t n;
        omp_init_nest_lock(&n);
        volatile int held = 0;
#pragma omp parallel num_threads(2)
        {
            if (omp_get_thread_num() == 1) {
                omp_set_nest_lock(&n);
                omp_set_nest_lock(&n);
                __atomic_store_n(&held, 1, __ATOMIC_RELEASE);
                dilated();
                omp_unset_nest_lock(&n);
                omp_unset_nest_lock(&n);
            } else {
                await(&held);
                omp_set_nest_lock(&n);
                omp_unset_nest_lock(&n);
            }
        }
        omp_destroy_nest_lock(&n);
    } else if (!strcmp(mode, "ordered")) {
        long ran = 0;
#pragma omp parallel for ordered schedule(static, 1) num_threads(2)
        for (int i = 0; i < 4; i++) {
#pragma omp ordered
            {
                if (i == 1) dilated();
                ran += i;
            }
        }
        printf("ordered ran %ld\n", ran);
    } else {
        return 2;
    }
    omp_destroy_lock(&plain);
    printf("%s done\n", mode);
    return 0;
}
