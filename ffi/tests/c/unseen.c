/* libheisen used the ways a program nobody wrote for heisen might:
 *   no-init   the API without heisen_init: 8 threads at once register the
 *             same and their own region names, enter and exit them, share
 *             a heisen mutex, a barrier and a queue; the report at exit
 *   finalize  heisen_finalize from a non-main thread while 6 others keep
 *             calling the API: every call returns OK or FINALIZED, the
 *             mutex still excludes, the barrier still meets
 * Prints only what is deterministic; exit code 0. */
#include <heisen.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define THREADS 8
#define ROUNDS 2000

static struct heisen_mutex *mx;
static struct heisen_barrier *bar;
static struct heisen_queue *q;
static long counter;
static atomic_long bad, finalized_seen;
static atomic_int finalize_now;

static void check(heisen_result rc) {
    if (rc == HEISEN_RESULT_FINALIZED)
        atomic_fetch_add(&finalized_seen, 1);
    else if (rc != HEISEN_RESULT_OK) {
        fprintf(stderr, "unexpected %u: %s\n", rc, heisen_result_message(rc));
        atomic_fetch_add(&bad, 1);
    }
}

static void *worker(void *arg) {
    long id = (long)arg;
    char own[32];
    uint32_t shared_id, own_id;
    snprintf(own, sizeof own, "own-%ld", id);
    check(heisen_region_register("shared", &shared_id));
    check(heisen_region_register(own, &own_id));
    for (int r = 0; r < ROUNDS; r++) {
        check(heisen_region_enter(shared_id));
        check(heisen_region_enter(own_id));
        check(heisen_mutex_lock(mx));
        counter++;
        check(heisen_mutex_unlock(mx));
        check(heisen_region_exit(own_id));
        check(heisen_region_exit(shared_id));
        check(heisen_region_enter_name("by-name"));
        check(heisen_region_exit_name("by-name"));
        if (r % 100 == 0) {
            bool leader;
            check(heisen_barrier_wait(bar, &leader));
            int armed = 0;
            if (id == 1 && r == ROUNDS / 2)
                atomic_compare_exchange_strong(&finalize_now, &armed, 1);
        }
        if (id == 0 && atomic_load(&finalize_now) == 1) {
            atomic_store(&finalize_now, 2);
            printf("finalize from a thread: %u\n", (unsigned)heisen_finalize());
        }
    }
    check(heisen_queue_push(q, (void *)(id + 1)));
    return NULL;
}

int main(int argc, char **argv) {
    int finalize = argc > 1 && !strcmp(argv[1], "finalize");
    if (!finalize)
        atomic_store(&finalize_now, 2); /* never */
    check(heisen_mutex_new(&mx));
    check(heisen_barrier_new(THREADS, &bar));
    check(heisen_queue_new(&q));
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    long sum = 0;
    for (int i = 0; i < THREADS; i++) {
        void *item;
        check(heisen_queue_pop(q, &item));
        sum += (long)item;
    }
    printf("counter %ld, queue sum %ld, unexpected results %ld\n", counter, sum, (long)bad);
    if (finalize) {
        printf("some calls saw FINALIZED: %d\n", finalized_seen > 0);
        printf("finalize again from main: %u\n", (unsigned)heisen_finalize());
    }
    heisen_queue_free(q);
    heisen_barrier_free(bar);
    heisen_mutex_free(mx);
    return 0;
}
