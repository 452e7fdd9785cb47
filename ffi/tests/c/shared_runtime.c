/*
 * shared_runtime.c: a program that uses heisen's C API (linked with
 * -lheisen) and plain pthread locks, run under the pthread interposer
 * (LD_PRELOAD=libheisen_pthread.so): the two libraries share one runtime,
 * so the report has one location per thread with both the C API's
 * regions and the interposer's merges (tests/one_runtime.rs).
 */
#include <heisen.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static uint32_t region;

static void *work(void *arg) {
    (void)arg;
    for (int i = 0; i < 100; i++) {
        heisen_region_enter(region);
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
        heisen_region_exit(region);
    }
    return NULL;
}

int main(void) {
    if (heisen_region_register("locked increment", &region) != HEISEN_RESULT_OK) return 1;
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, work, NULL);
    work(NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("counter %ld\n", counter);
    return counter == 300 ? 0 : 1;
}
