/* OpenMP's synchronisation as hand-offs (R6, R8). Every construct the
 * wrappers see runs once with results printed, so that output and exit
 * code can be compared with a run without heisen. Then thread 0 (main)
 * of a team of two takes an omp lock many times (each pair charged: its
 * delay grows) between pieces of plain work, and thread 1, a pool
 * thread, waits for it at a barrier: with heisen's libgomp wrappers the
 * barrier's merge gives thread 1 main's delay. Nothing merges into
 * thread 1 after it (no later region), so its state at exit shows it:
 *
 *   openmp_merges IDS      prints results, and writes to the file IDS
 *                          the location ids (-1 without the interposer)
 *                          of the last team's two threads and of main
 *                          after it, for the test to find in the report */
#include <omp.h>
#include <stdio.h>

/* The interposer's, when it is preloaded. */
extern long heisen_pthread_location(void) __attribute__((weak));

static long location(void) { return heisen_pthread_location ? heisen_pthread_location() : -1; }

int main(int argc, char **argv) {
    omp_set_max_active_levels(2);
    omp_lock_t lock;
    omp_init_lock(&lock);
    /* Every wrapped construct once, results printed. */
    long sum = 0, crit = 0, named = 0, atomic_sum = 0, sections = 0, single = 0, tested = 0;
    long double wide = 0;
    /* Each schedule is its own combined entry point (GCC 12: the
     * monotonic and nonmonotonic dynamic, guided and runtime forms);
     * a static one is GOMP_parallel with the loop inline. */
    static long a[7][1000];
#pragma omp parallel for schedule(monotonic : dynamic, 3) num_threads(3)
    for (long i = 0; i < 1000; i++) a[0][i] = i;
#pragma omp parallel for schedule(monotonic : guided) num_threads(3)
    for (long i = 0; i < 1000; i++) a[1][i] = i;
#pragma omp parallel for schedule(monotonic : runtime) num_threads(3)
    for (long i = 0; i < 1000; i++) a[2][i] = i;
#pragma omp parallel for schedule(nonmonotonic : runtime) num_threads(3)
    for (long i = 0; i < 1000; i++) a[3][i] = i;
#pragma omp parallel for schedule(dynamic) num_threads(3)
    for (long i = 0; i < 1000; i++) a[4][i] = i;
#pragma omp parallel for schedule(guided) num_threads(3)
    for (long i = 0; i < 1000; i++) a[5][i] = i;
#pragma omp parallel for schedule(runtime) num_threads(3)
    for (long i = 0; i < 1000; i++) a[6][i] = i;
#pragma omp parallel for schedule(static, 5) reduction(+ : sum) num_threads(3)
    for (long i = 0; i < 7000; i++) sum += a[i / 1000][i % 1000];
#pragma omp parallel num_threads(3)
    {
#pragma omp for schedule(dynamic)
        for (int i = 0; i < 30; i++) {
#pragma omp critical
            crit++;
#pragma omp critical(other)
            named++;
#pragma omp atomic
            atomic_sum += i;
#pragma omp atomic
            wide += 1.0L;
        }
#pragma omp sections
        {
#pragma omp section
            {
#pragma omp atomic
                sections += 1;
            }
#pragma omp section
            {
#pragma omp atomic
                sections += 10;
            }
        }
#pragma omp single
        single++;
        if (omp_test_lock(&lock)) {
#pragma omp atomic
            tested++;
            omp_unset_lock(&lock);
        }
#pragma omp barrier
        /* A nested region: its own team and barriers. */
#pragma omp parallel num_threads(2)
        {
#pragma omp barrier
#pragma omp atomic
            sum += 1;
        }
    }
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
        {
#pragma omp atomic
            sections += 100;
        }
#pragma omp section
        {
#pragma omp atomic
            sections += 1000;
        }
    }
    /* A try that fails: thread 0 holds the lock across a barrier. */
    long refused = 0;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) omp_set_lock(&lock);
#pragma omp barrier
        if (omp_get_thread_num() == 1 && !omp_test_lock(&lock)) refused++;
#pragma omp barrier
        if (omp_get_thread_num() == 0) omp_unset_lock(&lock);
    }
    /* Last, so that no later merge changes what it shows. */
    long taken = 0, ids[2] = {-1, -1};
#pragma omp parallel num_threads(2)
    {
        int me = omp_get_thread_num();
        if (me == 0)
            for (int i = 0; i < 20000; i++) {
                omp_set_lock(&lock);
                taken++;
                omp_unset_lock(&lock);
                /* plain work, so that thread 0 reaches the barrier well
                 * after thread 1 without heisen too */
                for (volatile int k = 0; k < 3000; k++)
                    ;
            }
#pragma omp barrier
        ids[me] = location();
    }
    long main_id = location();

    omp_destroy_lock(&lock);
    printf("taken %ld sum %ld critical %ld named %ld atomic %ld wide %.0Lf sections %ld single %ld tested>0 %d refused %ld\n",
           taken, sum, crit, named, atomic_sum, wide, sections, single, tested > 0, refused);
    FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;
    if (f) {
        fprintf(f, "%ld %ld %ld\n", ids[0], ids[1], main_id);
        fclose(f);
    }
    return 0;
}
