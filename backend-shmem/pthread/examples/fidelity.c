/* The fidelity program of heisen-shmem's examples/fidelity, in C with
 * pthreads: imbalanced workers under a shared lock, a barrier and a work
 * queue (mutex + condition variable). Its instrumentation load under
 * LD_PRELOAD=libheisen_pthread.so is its many lock/unlock pairs: every
 * ~40 ns of work takes the thread's own mutex. Prints, per thread, its
 * wall time from its creation to its end, its CPU time, and its heisen
 * location (-1 without the interposer: heisen_pthread_location is a weak
 * symbol).
 *
 * usage: fidelity [workers] [phases] [cells] [tasks] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern int64_t heisen_pthread_location(void) __attribute__((weak));

static int workers = 2, phases = 40, cells = 4000, tasks = 200;
static const int shared_every = 64;

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t shared_sum;
static pthread_barrier_t barrier;

struct queue {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    int head, tail, closed;
    int items[4096];
};
static struct queue *queues;

struct worker {
    int id;
    struct timespec created;
    pthread_t thread;
    int64_t location;
    uint64_t wall;
    uint64_t cpu;
    uint64_t acc;
};

static uint64_t ns_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)(t.tv_sec - t0->tv_sec) * 1000000000ull + (uint64_t)(t.tv_nsec - t0->tv_nsec);
}

/* The calling thread's CPU time, ns. */
static uint64_t thread_cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t __attribute__((noinline)) cell(uint64_t x) {
    for (int i = 0; i < 20; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        x ^= x >> 29;
    }
    __asm__ volatile("" : "+r"(x));
    return x;
}

static void push(struct queue *q, int item) {
    pthread_mutex_lock(&q->lock);
    q->items[q->tail++] = item;
    pthread_cond_signal(&q->ready);
    pthread_mutex_unlock(&q->lock);
}

static void close_queue(struct queue *q) {
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->ready);
    pthread_mutex_unlock(&q->lock);
}

static int pop(struct queue *q, int *item) {
    pthread_mutex_lock(&q->lock);
    while (q->head == q->tail && !q->closed) pthread_cond_wait(&q->ready, &q->lock);
    int got = q->head < q->tail;
    if (got) *item = q->items[q->head++];
    pthread_mutex_unlock(&q->lock);
    return got;
}

static void *work(void *arg) {
    struct worker *w = arg;
    pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
    uint64_t acc = (uint64_t)w->id + 1;
    for (int p = 0; p < phases; p++) {
        int n = cells * (1 + (w->id + p) % workers);
        for (int c = 0; c < n; c++) {
            pthread_mutex_lock(&own); /* uncontended: the instrumentation load */
            acc = cell(acc);
            pthread_mutex_unlock(&own);
            if (c % shared_every == 0) {
                pthread_mutex_lock(&shared_lock);
                shared_sum += acc & 1;
                pthread_mutex_unlock(&shared_lock);
            }
        }
        pthread_barrier_wait(&barrier);
        struct queue *q = &queues[p];
        if (w->id == 0) {
            for (int t = 0; t < tasks; t++) push(q, t);
            close_queue(q);
        }
        int t;
        while (pop(q, &t)) {
            int m = 8 + (t * 7919) % 24;
            for (int i = 0; i < m; i++) {
                pthread_mutex_lock(&own);
                acc = cell(acc);
                pthread_mutex_unlock(&own);
            }
        }
        pthread_barrier_wait(&barrier);
    }
    w->acc = acc;
    w->location = heisen_pthread_location ? heisen_pthread_location() : -1;
    w->wall = ns_since(&w->created);
    w->cpu = thread_cpu();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) workers = atoi(argv[1]);
    if (argc > 2) phases = atoi(argv[2]);
    if (argc > 3) cells = atoi(argv[3]);
    if (argc > 4) tasks = atoi(argv[4]);
    if (workers < 1 || phases < 1 || cells < 1 || tasks < 0 || tasks > 4096) {
        fprintf(stderr, "usage: fidelity [workers] [phases] [cells] [tasks <= 4096]\n");
        return 2;
    }
    queues = calloc((size_t)phases, sizeof *queues);
    for (int p = 0; p < phases; p++) {
        pthread_mutex_init(&queues[p].lock, NULL);
        pthread_cond_init(&queues[p].ready, NULL);
    }
    pthread_barrier_init(&barrier, NULL, (unsigned)workers);
    struct worker *ws = calloc((size_t)workers, sizeof *ws);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < workers; i++) {
        ws[i].id = i;
        clock_gettime(CLOCK_MONOTONIC, &ws[i].created);
        pthread_create(&ws[i].thread, NULL, work, &ws[i]);
    }
    uint64_t acc = 0;
    for (int i = 0; i < workers; i++) {
        pthread_join(ws[i].thread, NULL);
        acc ^= ws[i].acc;
    }
    uint64_t wall = ns_since(&start);
    /* main's CPU time keeps every line's format; it only waits (and,
     * preloaded, runs the start-up calibration), so the runners leave it
     * out. */
    printf("thread main location %lld wall %llu cpu %llu\n",
           (long long)(heisen_pthread_location ? heisen_pthread_location() : -1), (unsigned long long)wall,
           (unsigned long long)thread_cpu());
    for (int i = 0; i < workers; i++)
        printf("thread worker%d location %lld wall %llu cpu %llu\n", i, (long long)ws[i].location,
               (unsigned long long)ws[i].wall, (unsigned long long)ws[i].cpu);
    printf("checksum %llu %llu\n", (unsigned long long)acc, (unsigned long long)shared_sum);
    return 0;
}
