/* OpenMP beside the program's own pthread calls: libgomp makes its
 * threads with pthread_create, and its barriers, locks and critical
 * sections are futexes, which the interposer sees through its wrappers of
 * libgomp's entry points (src/openmp.rs). The results and the exit code
 * must be the same with and without LD_PRELOAD=libheisen_pthread.so. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;

int main(void) {
    long sum = 0, locked = 0, crit = 0;
    omp_lock_t ol;
    omp_set_num_threads(3);
    omp_init_lock(&ol);
    for (int rep = 0; rep < 20; rep++) {
#pragma omp parallel for reduction(+ : sum) schedule(dynamic, 7)
        for (long i = 0; i < 100000; i++)
            sum += i % 13;
#pragma omp parallel
        {
            for (int i = 0; i < 100; i++) {
                pthread_mutex_lock(&lk);
                locked++;
                pthread_mutex_unlock(&lk);
#pragma omp critical
                crit++;
                omp_set_lock(&ol);
                omp_unset_lock(&ol);
            }
#pragma omp barrier
#pragma omp single
            sum += 1;
        }
    }
    omp_destroy_lock(&ol);
    printf("sum %ld, locked/threads %ld, critical/threads %ld\n", sum,
           locked / omp_get_max_threads(), crit / omp_get_max_threads());
    return 2;
}
