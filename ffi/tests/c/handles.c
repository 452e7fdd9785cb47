/*
 * handles.c: heisen's compensated mutex, barrier, condition variable and
 * work queue from C, on real threads (tests/handles.rs runs it, also
 * under valgrind). Prints "ok <case>" per case; the report then shows the
 * merges (the waiting threads' compensated waits).
 */
#include <heisen.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define EXPECT(call, code)                                                                 \
    do {                                                                                   \
        heisen_result got_ = (call);                                                       \
        if (got_ != (code)) {                                                              \
            fprintf(stderr, "%s:%d: %s returned %u (%s), expected %s\n", __FILE__,         \
                    __LINE__, #call, (unsigned)got_, heisen_result_message(got_), #code);   \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

#define TRUE(cond)                                                                         \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: %s is false\n", __FILE__, __LINE__, #cond);            \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

static void ok(const char *name, int before) {
    if (failures == before) printf("ok %s\n", name);
}

#define THREADS 3
#define ROUNDS 200

/* ----- mutex ------------------------------------------------------------ */

static heisen_mutex *mutex;
static long counter;

static void *add(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        EXPECT(heisen_mutex_lock(mutex), HEISEN_RESULT_OK);
        counter++;
        EXPECT(heisen_mutex_unlock(mutex), HEISEN_RESULT_OK);
    }
    return NULL;
}

static void *unlock_foreign(void *arg) {
    (void)arg;
    /* The main thread holds it: this thread may not unlock it. */
    EXPECT(heisen_mutex_unlock(mutex), HEISEN_RESULT_NOT_OWNER);
    EXPECT(heisen_mutex_trylock(mutex), HEISEN_RESULT_WOULD_BLOCK);
    return NULL;
}

static void mutexes(void) {
    int before = failures;
    EXPECT(heisen_mutex_new(&mutex), HEISEN_RESULT_OK);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, add, NULL);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    TRUE(counter == THREADS * ROUNDS);
    EXPECT(heisen_mutex_unlock(mutex), HEISEN_RESULT_NOT_OWNER); /* not held */
    EXPECT(heisen_mutex_trylock(mutex), HEISEN_RESULT_OK);
    pthread_t other;
    pthread_create(&other, NULL, unlock_foreign, NULL);
    pthread_join(other, NULL);
    EXPECT(heisen_mutex_unlock(mutex), HEISEN_RESULT_OK);
    heisen_mutex_free(mutex);
    ok("mutex", before);
}

/* ----- barrier ---------------------------------------------------------- */

static heisen_barrier *barrier;
static int leaders;
static pthread_mutex_t leaders_lock = PTHREAD_MUTEX_INITIALIZER;

static void *meet(void *arg) {
    long id = (long)arg;
    for (int episode = 0; episode < 20; episode++) {
        volatile double x = 0;
        for (long i = 0; i < 2000 * (id + 1); i++) x += (double)i; /* uneven work */
        bool leader = false;
        EXPECT(heisen_barrier_wait(barrier, &leader), HEISEN_RESULT_OK);
        if (leader) {
            pthread_mutex_lock(&leaders_lock);
            leaders++;
            pthread_mutex_unlock(&leaders_lock);
        }
    }
    return NULL;
}

static void barriers(void) {
    int before = failures;
    heisen_barrier *none = NULL;
    EXPECT(heisen_barrier_new(0, &none), HEISEN_RESULT_INVALID_ARGUMENT);
    TRUE(none == NULL);
    EXPECT(heisen_barrier_new(THREADS, &barrier), HEISEN_RESULT_OK);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, meet, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    TRUE(leaders == 20); /* one leader per episode */
    heisen_barrier_free(barrier);
    ok("barrier", before);
}

/* ----- condition variable ----------------------------------------------- */

static heisen_mutex *cv_mutex;
static heisen_condvar *condvar;
static int ready;

static void *waiter(void *arg) {
    (void)arg;
    EXPECT(heisen_mutex_lock(cv_mutex), HEISEN_RESULT_OK);
    while (!ready) EXPECT(heisen_condvar_wait(condvar, cv_mutex), HEISEN_RESULT_OK);
    EXPECT(heisen_mutex_unlock(cv_mutex), HEISEN_RESULT_OK);
    return NULL;
}

static void condvars(void) {
    int before = failures;
    EXPECT(heisen_mutex_new(&cv_mutex), HEISEN_RESULT_OK);
    EXPECT(heisen_condvar_new(&condvar), HEISEN_RESULT_OK);
    /* Waiting without holding the mutex is refused. */
    EXPECT(heisen_condvar_wait(condvar, cv_mutex), HEISEN_RESULT_NOT_OWNER);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, waiter, NULL);
    volatile double x = 0;
    for (long i = 0; i < 200000; i++) x += (double)i;
    EXPECT(heisen_mutex_lock(cv_mutex), HEISEN_RESULT_OK);
    ready = 1;
    EXPECT(heisen_condvar_notify_all(condvar), HEISEN_RESULT_OK);
    EXPECT(heisen_mutex_unlock(cv_mutex), HEISEN_RESULT_OK);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    EXPECT(heisen_condvar_notify_one(condvar), HEISEN_RESULT_OK); /* nobody waits: fine */
    heisen_condvar_free(condvar);
    heisen_mutex_free(cv_mutex);
    ok("condvar", before);
}

/* ----- work queue ------------------------------------------------------- */

static heisen_queue *queue;
static long taken[2];

static void *consumer(void *arg) {
    long id = (long)arg;
    for (;;) {
        void *item = NULL;
        heisen_result r = heisen_queue_pop(queue, &item);
        if (r == HEISEN_RESULT_QUEUE_CLOSED) break;
        EXPECT(r, HEISEN_RESULT_OK);
        taken[id] += (long)(intptr_t)item;
    }
    return NULL;
}

static void queues(void) {
    int before = failures;
    EXPECT(heisen_queue_new(&queue), HEISEN_RESULT_OK);
    void *item = (void *)1;
    EXPECT(heisen_queue_try_pop(queue, &item), HEISEN_RESULT_WOULD_BLOCK);
    TRUE(item == (void *)1); /* untouched */
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, consumer, (void *)i);
    long sum = 0;
    for (long i = 1; i <= 500; i++) {
        EXPECT(heisen_queue_push(queue, (void *)(intptr_t)i), HEISEN_RESULT_OK);
        sum += i;
    }
    EXPECT(heisen_queue_close(queue), HEISEN_RESULT_OK);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    TRUE(taken[0] + taken[1] == sum);
    EXPECT(heisen_queue_pop(queue, &item), HEISEN_RESULT_QUEUE_CLOSED);
    EXPECT(heisen_queue_push(queue, NULL), HEISEN_RESULT_OK); /* after close: still handed out */
    EXPECT(heisen_queue_try_pop(queue, &item), HEISEN_RESULT_OK);
    TRUE(item == NULL);
    heisen_queue_free(queue);
    ok("queue", before);
}

/* ----- NULL handles ----------------------------------------------------- */

static void null_handles(void) {
    int before = failures;
    void *item;
    bool leader;
    EXPECT(heisen_mutex_new(NULL), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_mutex_lock(NULL), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_mutex_trylock(NULL), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_mutex_unlock(NULL), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_barrier_new(2, NULL), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_barrier_wait(NULL, &leader), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_condvar_new(NULL), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_condvar_wait(NULL, NULL), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_condvar_notify_one(NULL), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_condvar_notify_all(NULL), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_queue_new(NULL), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_queue_push(NULL, NULL), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_queue_pop(NULL, &item), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_queue_try_pop(NULL, &item), HEISEN_RESULT_NULL_ARGUMENT);
    EXPECT(heisen_queue_close(NULL), HEISEN_RESULT_NULL_ARGUMENT);
    heisen_queue *q;
    EXPECT(heisen_queue_new(&q), HEISEN_RESULT_OK);
    EXPECT(heisen_queue_pop(q, NULL), HEISEN_RESULT_NULL_ARGUMENT);
    heisen_queue_free(q);
    heisen_mutex_free(NULL);
    heisen_barrier_free(NULL);
    heisen_condvar_free(NULL);
    heisen_queue_free(NULL);
    ok("null_handles", before);
}

int main(void) {
    mutexes();
    barriers();
    condvars();
    queues();
    null_handles();
    printf("%d failures\n", failures);
    return failures == 0 ? 0 : 1;
}
