/* The first heisen call of the process made on a thread with a 64 KiB
 * stack: the calibration runs on a thread of its own, the small thread
 * is measured, and every call returns a result. */
#include <heisen.h>
#include <pthread.h>
#include <stdio.h>
static void *worker(void *arg) {
    (void)arg;
    uint32_t id = 0;
    heisen_result r = heisen_region_register("small", &id);
    heisen_result e = heisen_region_enter(id);
    heisen_result x = heisen_region_exit(id);
    printf("register %d enter %d exit %d\n", r == HEISEN_RESULT_OK, e == HEISEN_RESULT_OK || e == HEISEN_RESULT_NOT_MEASURED, x == HEISEN_RESULT_OK || x == HEISEN_RESULT_NOT_MEASURED);
    return NULL;
}
int main(void) {
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    pthread_t t;
    if (pthread_create(&t, &a, worker, NULL) != 0) return 2;
    pthread_join(t, NULL);
    printf("done\n");
    return 0;
}
