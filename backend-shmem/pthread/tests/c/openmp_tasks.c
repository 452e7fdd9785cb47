/* OpenMP tasks under the interposer (src/openmp/tasks.rs: a task's record
 * travels with it, R8). One scenario per run, so that main's state at
 * exit is what the scenario left:
 *
 *   openmp_tasks run          every kind of task runs; prints results
 *   openmp_tasks barrier IDS  main makes plain-work tasks, then takes a
 *                             lock again and again (each pair charged)
 *                             until thread 1 has run them at the barrier
 *   openmp_tasks taskwait IDS main waits in `taskwait` for a child that
 *                             thread 1 runs, dilated by lock pairs
 *   openmp_tasks taskgroup IDS  the same for a grandchild, created by a
 *                             child, waited for at the taskgroup's end
 *   openmp_tasks depend IDS   main makes a task `out: x` that thread 1
 *                             runs dilated, then an undeferred one `in: x`,
 *                             which waits for it; that one ends the program
 *   openmp_tasks taskloop IDS main's taskloop of two tasks: thread 1 runs
 *                             one dilated, main waits for it at the loop's end
 *   openmp_tasks taskloop_nogroup IDS  the same with `nogroup`, waited for
 *                             at the end of a taskgroup around the loop
 *
 * The scenarios with IDS write to that file the location ids of thread 0
 * (main) and thread 1 of the team, then, for `barrier`, the nanoseconds
 * of task work each of them ran (by omp_get_wtime around each task's
 * work), for `depend` the nanoseconds the first task took. Their stdout is the same with and without heisen. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The interposer's, when it is preloaded. */
extern long heisen_pthread_location(void) __attribute__((weak));

static long location(void) { return heisen_pthread_location ? heisen_pthread_location() : -1; }

static volatile double sink;
static void work(int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += i * 0.5;
    sink = s;
}

static long fib(int n) {
    if (n < 2) return n;
    long a, b;
    /* undeferred below 12 (`if`), a final task below 6 */
#pragma omp task shared(a) if (n > 12) final(n < 6) mergeable
    a = fib(n - 1);
#pragma omp task shared(b) untied priority(n % 3)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

/* taskloop in every form heisen wraps (GOMP_taskloop, GOMP_taskloop_ull):
 * each sum must be what a sequential loop gives. */
static int taskloops(long *vla_in, int n) {
    long vla[n];
    for (int i = 0; i < n; i++) vla[i] = vla_in[i];
    long plain = 0, many = 0, ull = 0, down = 0, last = -1, undeferred = 0, copied = 0, nested = 0,
         children = 0, nogroup = 0, strided = 0;
#pragma omp parallel num_threads(3)
#pragma omp single
    {
#pragma omp taskloop num_tasks(5) reduction(+ : plain)
        for (int i = 0; i < 1000; i++) plain += i;
#pragma omp taskloop grainsize(3) reduction(+ : ull)
        for (unsigned long long u = 10; u < 200; u += 3) ull += u;
#pragma omp taskloop reduction(+ : down)
        for (long i = 500; i > -500; i -= 7) down += i;
#pragma omp taskloop lastprivate(last) num_tasks(4)
        for (int i = 0; i < 99; i++) last = i;
#pragma omp taskloop if (0) reduction(+ : undeferred)
        for (int i = 0; i < 50; i++) undeferred += 2 * i;
        /* a firstprivate VLA: GCC copies it with a copy function */
#pragma omp taskloop firstprivate(vla) grainsize(2) reduction(+ : copied)
        for (int i = 0; i < 40; i++) copied += vla[i % n] + i;
        /* the loop waits for its tasks' children too */
#pragma omp taskloop num_tasks(4) shared(children)
        for (int i = 0; i < 8; i++) {
#pragma omp task shared(children)
            {
#pragma omp atomic
                children += i;
            }
        }
#pragma omp taskloop num_tasks(3) reduction(+ : nested)
        for (int i = 0; i < 6; i++) {
            long inner = 0;
#pragma omp taskloop grainsize(5) reduction(+ : inner)
            for (int k = 0; k < 20; k++) inner += k;
            nested += inner + i;
        }
#pragma omp taskloop nogroup num_tasks(6) shared(nogroup)
        for (int i = 0; i < 60; i++) {
#pragma omp atomic
            nogroup += i;
        }
#pragma omp taskwait
#pragma omp taskloop collapse(2) grainsize(4) reduction(+ : strided)
        for (int i = 0; i < 12; i++)
            for (int k = 0; k < 7; k += 2) strided += i * k;
    }
    /* outside any parallel region: every task undeferred, run in place
     * on the data block libgomp was given (under heisen, its heap copy
     * of the program's). After the last region, not before: a taskloop
     * with a reduction outside any region leaves the thread in an
     * "artificial" team of one for good, and GCC 12's libgomp then frees
     * every later region's team while its pool threads still read it
     * (docs/development.md, "A crash at exit that was libgomp's"). */
#pragma omp taskloop grainsize(1) reduction(+ : many)
    for (int i = 0; i < 100000; i++) many += i & 7;
    /* the same (in that artificial team of one) with a copy function:
     * libgomp copies every task's data onto the stack at once (16,000
     * blocks), heisen's address of its header in each */
    long copied_at_once = 0;
#pragma omp taskloop firstprivate(vla) grainsize(1) reduction(+ : copied_at_once)
    for (int i = 0; i < 16000; i++) copied_at_once += vla[i % n];
    printf("taskloop plain %ld many %ld ull %ld down %ld last %ld undeferred %ld copied %ld nested %ld "
           "children %ld nogroup %ld strided %ld at once %ld\n",
           plain, many, ull, down, last, undeferred, copied, nested, children, nogroup, strided,
           copied_at_once);
    return 0;
}

static int run(void) {
    long fibs = 0, vla_sum = 0, grouped = 0, deps = 0, loop = 0, detached = 0, top = 0;
    int n = 17;
    long vla[n]; /* firstprivate VLA: GCC copies it with a copy function */
    for (int i = 0; i < n; i++) vla[i] = i * i;
    omp_lock_t lock;
    omp_init_lock(&lock);
    /* a task outside any parallel region runs at once */
#pragma omp task shared(top)
    top = 7;
#pragma omp parallel num_threads(3)
    {
#pragma omp single
        fibs = fib(20);
        /* every thread creates tasks, run at the barrier */
        for (int i = 0; i < 30; i++) {
#pragma omp task firstprivate(vla, i) shared(vla_sum, lock)
            {
                long s = 0;
                for (int k = 0; k < n; k++) s += vla[k] + i;
                omp_set_lock(&lock);
                vla_sum += s;
                omp_unset_lock(&lock);
            }
        }
#pragma omp barrier
#pragma omp single
        {
#pragma omp taskgroup
            for (int i = 0; i < 10; i++) {
#pragma omp task shared(grouped)
                {
                    /* grandchildren: the taskgroup waits for them too */
#pragma omp task shared(grouped)
                    {
#pragma omp atomic
                        grouped += 100;
                    }
#pragma omp atomic
                    grouped += 1;
                }
            }
            /* depend chains: each reads what the one before wrote */
            long x = 0;
            for (int i = 0; i < 20; i++) {
#pragma omp task depend(inout : x) shared(x)
                x = x * 2 + 1;
            }
#pragma omp task depend(in : x) shared(x, deps)
            deps = x;
#pragma omp taskwait
#pragma omp taskloop grainsize(7) reduction(+ : loop)
            for (int i = 0; i < 100; i++) loop += i;
            omp_event_handle_t ev;
            memset(&ev, 0, sizeof ev);
#pragma omp task detach(ev) shared(detached)
            {
                detached = 5;
                omp_fulfill_event(ev);
            }
        }
        /* a nested region inside a task */
#pragma omp single nowait
        {
#pragma omp task shared(top)
            {
#pragma omp parallel num_threads(2)
                {
#pragma omp atomic
                    top += 1;
                }
            }
        }
    }
    omp_destroy_lock(&lock);
    printf("fib %ld vla %ld grouped %ld deps %ld loop %ld detached %ld top>=8 %d\n", fibs, vla_sum,
           grouped, deps, loop, detached, top >= 8);
    return taskloops(vla, n);
}

/* Main spins until `*flag` is set (by a task on thread 1); 0 if it was
 * not within a minute (a guard against a hang, not a timing). */
static int started(volatile int *flag) {
    double t0 = omp_get_wtime();
    while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
        if (omp_get_wtime() - t0 > 60) return 0;
    return 1;
}

/* 20,000 lock pairs: each charged by heisen, the task's work dilated. */
static void dilated(omp_lock_t *lock, volatile int *flag) {
    __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 20000; i++) {
        omp_set_lock(lock);
        omp_unset_lock(lock);
        work(300);
    }
}

/* One of a taskloop's two tasks: thread 1's runs dilated; main's waits
 * until thread 1's began (main's spin is plain work), so that main then
 * waits for it at the loop's end. */
static void loop_task(omp_lock_t *lock, volatile int *flag, int *ok) {
    if (omp_get_thread_num() == 1)
        dilated(lock, flag);
    else if (!started(flag))
        *ok = 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (!strcmp(argv[1], "run")) return run();
    if (argc < 3) return 2;
    FILE *f = fopen(argv[2], "w");
    if (!f) return 3;
    long ids[2] = {-1, -1};
    int ok = 1;
    if (!strcmp(argv[1], "barrier")) {
        double ran[2] = {0, 0};
        omp_lock_t lock;
        omp_init_lock(&lock);
        int done = 0;
#pragma omp parallel num_threads(2)
        {
            ids[omp_get_thread_num()] = location();
            if (omp_get_thread_num() == 0) {
                for (int i = 0; i < 80; i++) {
#pragma omp task shared(ran, done)
                    {
                        double t0 = omp_get_wtime();
                        work(200000);
                        double t = omp_get_wtime() - t0;
#pragma omp atomic
                        ran[omp_get_thread_num()] += t;
                        __atomic_add_fetch(&done, 1, __ATOMIC_RELEASE);
                    }
                }
                /* lock pairs until the tasks are done (or a minute) */
                double t0 = omp_get_wtime();
                for (long i = 0; __atomic_load_n(&done, __ATOMIC_ACQUIRE) < 80; i++) {
                    omp_set_lock(&lock);
                    omp_unset_lock(&lock);
                    if (i % 4096 == 0 && omp_get_wtime() - t0 > 60) {
                        ok = 0;
                        break;
                    }
                }
            }
            /* thread 1 runs the tasks here */
#pragma omp barrier
        }
        omp_destroy_lock(&lock);
        fprintf(f, "%ld %ld %.0f %.0f\n", ids[0], ids[1], ran[0] * 1e9, ran[1] * 1e9);
    } else if (!strcmp(argv[1], "taskwait") || !strcmp(argv[1], "taskgroup") ||
               !strcmp(argv[1], "taskloop") || !strcmp(argv[1], "taskloop_nogroup")) {
        const char *wait = argv[1];
        omp_lock_t lock;
        omp_init_lock(&lock);
        volatile int flag = 0;
#pragma omp parallel num_threads(2)
        {
            ids[omp_get_thread_num()] = location();
            if (omp_get_thread_num() == 0) {
                if (!strcmp(wait, "taskgroup")) {
#pragma omp taskgroup
                    {
#pragma omp task shared(lock, flag)
                        {
#pragma omp task shared(lock, flag)
                            dilated(&lock, &flag);
                        }
                        ok = started(&flag);
                    }
                } else if (!strcmp(wait, "taskwait")) {
#pragma omp task shared(lock, flag)
                    dilated(&lock, &flag);
                    ok = started(&flag);
#pragma omp taskwait
                } else if (!strcmp(wait, "taskloop")) {
#pragma omp taskloop num_tasks(2) shared(lock, flag, ok)
                    for (int i = 0; i < 2; i++) loop_task(&lock, &flag, &ok);
                } else {
#pragma omp taskgroup
                    {
#pragma omp taskloop num_tasks(2) nogroup shared(lock, flag, ok)
                        for (int i = 0; i < 2; i++) loop_task(&lock, &flag, &ok);
                    }
                }
            }
            /* thread 1 waits here, and runs the tasks */
#pragma omp barrier
        }
        omp_destroy_lock(&lock);
        fprintf(f, "%ld %ld\n", ids[0], ids[1]);
    } else if (!strcmp(argv[1], "depend")) {
        omp_lock_t lock;
        omp_init_lock(&lock);
        volatile int flag = 0;
        int x = 0;
        double took = 0;
#pragma omp parallel num_threads(2) shared(f, ok)
        {
            ids[omp_get_thread_num()] = location();
            if (omp_get_thread_num() == 0) {
#pragma omp task depend(out : x) shared(lock, flag, x, took)
                {
                    double t0 = omp_get_wtime();
                    dilated(&lock, &flag);
                    took = omp_get_wtime() - t0;
                    x = 1;
                }
                ok = started(&flag);
                /* undeferred: main waits for its predecessor, then runs it;
                 * the program ends there, with main's state as it was */
#pragma omp task depend(in : x) if (0) shared(x, took, ids, ok, f)
                {
                    fprintf(f, "%ld %ld %.0f\n", ids[0], ids[1], took * 1e9);
                    fclose(f);
                    printf("depend %s\n", ok && x == 1 ? "ran" : "never started on thread 1");
                    exit(0);
                }
            }
            /* thread 1 waits here, and runs the first task */
#pragma omp barrier
        }
        return 4; /* not reached */
    } else {
        return 2;
    }
    fclose(f);
    printf("%s %s\n", argv[1], ok ? "ran" : "never started on thread 1");
    return 0;
}
