/* OpenMP's synchronisation as hand-offs (R6, R8). Every construct the
 * wrappers see runs once with results printed, so that output and exit
 * code can be compared with a run without heisen. Then thread 1 of a team
 * of two takes an omp lock many times (each pair charged: its delay
 * grows) between pieces of plain work, and thread 0 waits for it at a
 * barrier: with heisen's libgomp wrappers the barrier's merge gives
 * thread 0 thread 1's delay, which main keeps to its end:
 *
 *   openmp_merges IDS      prints results, and writes to the file IDS
 *                          the location ids (-1 without the interposer)
 *                          of the team's two threads and of main after
 *                          the region, for the test to find in the report */
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
#pragma omp parallel for schedule(dynamic, 3) reduction(+ : sum) num_threads(3)
    for (long i = 0; i < 1000; i++) sum += i;
#pragma omp parallel for schedule(guided) reduction(+ : sum) num_threads(3)
    for (long i = 0; i < 1000; i++) sum += i;
#pragma omp parallel for schedule(runtime) reduction(+ : sum) num_threads(3)
    for (long i = 0; i < 1000; i++) sum += i;
#pragma omp parallel for schedule(static, 5) reduction(+ : sum) num_threads(3)
    for (long i = 0; i < 1000; i++) sum += i;
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
        sum += 0;
#pragma omp section
        sum += 0;
    }
    /* Last, so that no later merge changes what it shows. */
    long taken = 0, ids[2] = {-1, -1};
#pragma omp parallel num_threads(2)
    {
        int me = omp_get_thread_num();
        if (me == 1)
            for (int i = 0; i < 20000; i++) {
                omp_set_lock(&lock);
                taken++;
                omp_unset_lock(&lock);
                /* plain work, so that thread 1 reaches the barrier well
                 * after thread 0 without heisen too */
                for (volatile int k = 0; k < 300; k++)
                    ;
            }
#pragma omp barrier
        ids[me] = location();
    }
    long main_id = location();

    omp_destroy_lock(&lock);
    printf("taken %ld sum %ld critical %ld named %ld atomic %ld wide %.0Lf sections %ld single %ld tested>0 %d\n",
           taken, sum, crit, named, atomic_sum, wide, sections, single, tested > 0);
    FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;
    if (f) {
        fprintf(f, "%ld %ld %ld\n", ids[0], ids[1], main_id);
        fclose(f);
    }
    return 0;
}
