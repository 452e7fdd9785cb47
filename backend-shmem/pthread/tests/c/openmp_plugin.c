/* A plugin that uses OpenMP, loaded by openmp_dlopen.c with RTLD_LOCAL:
 * its libgomp is then outside the process's global lookup order, as a
 * Python extension's is, while its calls of GOMP_parallel and
 * omp_set_lock still bind to the preloaded interposer's wrappers first. */
#include <omp.h>

long plugin_work(void) {
    long sum = 0;
    omp_lock_t lock;
    omp_init_lock(&lock);
#pragma omp parallel num_threads(2) reduction(+ : sum)
    {
        for (int i = 0; i < 1000; i++) sum += i;
        omp_set_lock(&lock);
        omp_unset_lock(&lock);
#pragma omp barrier
    }
    omp_destroy_lock(&lock);
    return sum;
}
