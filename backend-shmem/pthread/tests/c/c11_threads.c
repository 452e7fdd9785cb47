/* C11 threads (<threads.h>), which glibc implements without the pthread
 * symbols the interposer wraps:
 *   c11_threads all | mtx | timedlock | cnd | join
 * `all` makes every C11 call with its answers printed: each mutex kind
 * (and an invalid one), recursive locking, trylock busy, a timed lock and
 * a timed wait timing out, a broadcast to four waiters, call_once, a
 * thread ending through thrd_exit deep in its calls, a detached thread,
 * join results. The other modes are hand-offs: main blocks in the named
 * call on an object a second thread holds (or a thread it joins); only
 * once main is asleep (Linux: state S in /proc/self/task/<tid>/stat) does
 * the other thread do its heavily instrumented work (lock/unlock pairs of
 * a C11 mutex of its own) and hand over. Under the interposer the
 * hand-off is a merge (R8), so main's delay takes over the other
 * thread's: the test reads both from the report. Output must be
 * identical with and without the interposer. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "asleep.h"

static mtx_t lk, own;
static cnd_t cv;
static atomic_int holding, armed, ready_waiters;
static int ready, woken;
static pid_t main_tid;
static const char *mode;

static const char *name(int rc) {
    switch (rc) {
    case thrd_success: return "success";
    case thrd_busy: return "busy";
    case thrd_error: return "error";
    case thrd_nomem: return "nomem";
    case thrd_timedout: return "timedout";
    default: return "?";
    }
}

/* TIME_UTC now plus `ms` milliseconds (C11's timed calls' clock). */
static struct timespec in(long ms) {
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return plus_ms(t, ms);
}

/* Waits until main has armed and sleeps, then does the instrumented work. */
static void work_while_main_waits(void) {
    while (!atomic_load(&armed))
        thrd_yield();
    until_asleep(main_tid);
    for (int i = 0; i < 20000; i++) {
        mtx_lock(&own);
        mtx_unlock(&own);
    }
}

static int other(void *arg) {
    (void)arg;
    if (!strcmp(mode, "cnd")) {
        work_while_main_waits();
        mtx_lock(&lk);
        ready = 1;
        cnd_signal(&cv);
        mtx_unlock(&lk);
    } else if (!strcmp(mode, "mtx") || !strcmp(mode, "timedlock")) {
        mtx_lock(&lk);
        atomic_store(&holding, 1);
        work_while_main_waits();
        mtx_unlock(&lk);
    } else {
        work_while_main_waits();
    }
    return 7;
}

static int hand_off(void) {
    thrd_t th;
    if (!strcmp(mode, "cnd"))
        mtx_lock(&lk);
    thrd_create(&th, other, NULL);
    if (strcmp(mode, "cnd") && strcmp(mode, "join"))
        while (!atomic_load(&holding))
            thrd_yield();
    if (strcmp(mode, "cnd") && strcmp(mode, "join"))
        printf("trylock while held: %s\n", name(mtx_trylock(&lk)));
    atomic_store(&armed, 1);
    int rc = thrd_success, result = 0;
    struct timespec t = in(60000);
    if (!strcmp(mode, "cnd")) {
        while (!ready && rc == thrd_success)
            rc = cnd_timedwait(&cv, &lk, &t);
        mtx_unlock(&lk);
    } else if (!strcmp(mode, "mtx")) {
        rc = mtx_lock(&lk);
        mtx_unlock(&lk);
    } else if (!strcmp(mode, "timedlock")) {
        rc = mtx_timedlock(&lk, &t);
        mtx_unlock(&lk);
    }
    printf("%s hand-off: %s\n", mode, name(rc));
    rc = thrd_join(th, &result);
    printf("join: %s %d\n", name(rc), result);
    return 0;
}

/* ----- every call, answers printed ----------------------------------- */

static once_flag once = ONCE_FLAG_INIT;
static int onces;
static void count_once(void) { onces++; }

static int waiter(void *arg) {
    (void)arg;
    call_once(&once, count_once);
    mtx_lock(&lk);
    atomic_fetch_add(&ready_waiters, 1);
    while (!ready)
        cnd_wait(&cv, &lk);
    woken++;
    mtx_unlock(&lk);
    return 1;
}

static void inner(int v) { thrd_exit(v); }
static void outer(int v) {
    inner(v + 2);
    printf("never printed\n");
}

static int exits(void *arg) {
    (void)arg;
    outer(40);
    return 0; /* never reached */
}

static atomic_int detached_done;
static int detached(void *arg) {
    (void)arg;
    mtx_lock(&lk);
    mtx_unlock(&lk);
    atomic_store(&detached_done, 1);
    return 0;
}

static int holder(void *arg) {
    (void)arg;
    mtx_lock(&lk);
    atomic_store(&holding, 1);
    while (atomic_load(&armed) == 0)
        thrd_yield();
    mtx_unlock(&lk);
    return 3;
}

static int all(void) {
    mtx_t m;
    int kinds[] = {mtx_plain, mtx_timed, mtx_plain | mtx_recursive, mtx_timed | mtx_recursive};
    for (int i = 0; i < 4; i++) {
        printf("mtx_init kind %d: %s\n", kinds[i], name(mtx_init(&m, kinds[i])));
        printf("  lock %s", name(mtx_lock(&m)));
        if (kinds[i] & mtx_recursive) {
            printf(", again %s", name(mtx_lock(&m)));
            printf(", try %s", name(mtx_trylock(&m)));
            printf(", unlock %s %s", name(mtx_unlock(&m)), name(mtx_unlock(&m)));
        }
        printf(", unlock %s\n", name(mtx_unlock(&m)));
        mtx_destroy(&m);
    }
    int rc = mtx_init(&m, 99);
    printf("mtx_init kind 99: %s\n", name(rc));
    if (rc == thrd_success)
        mtx_destroy(&m);

    /* Another thread holds lk: trylock busy, timedlock times out, then
     * the holder lets go and the lock is taken. */
    thrd_t h;
    thrd_create(&h, holder, NULL);
    while (!atomic_load(&holding))
        thrd_yield();
    printf("trylock held: %s\n", name(mtx_trylock(&lk)));
    struct timespec t = in(2);
    printf("timedlock held: %s\n", name(mtx_timedlock(&lk, &t)));
    atomic_store(&armed, 1);
    int r = 0;
    rc = thrd_join(h, &r);
    printf("join holder: %s %d\n", name(rc), r);
    printf("lock after: %s\n", name(mtx_lock(&lk)));
    t = in(2);
    printf("cnd_timedwait nobody: %s\n", name(cnd_timedwait(&cv, &lk, &t)));
    printf("unlock: %s\n", name(mtx_unlock(&lk)));

    /* A broadcast to four waiters. */
    thrd_t w[4];
    for (int i = 0; i < 4; i++)
        thrd_create(&w[i], waiter, NULL);
    while (atomic_load(&ready_waiters) < 4)
        thrd_yield();
    mtx_lock(&lk);
    ready = 1;
    printf("broadcast: %s\n", name(cnd_broadcast(&cv)));
    mtx_unlock(&lk);
    int sum = 0;
    for (int i = 0; i < 4; i++) {
        thrd_join(w[i], &r);
        sum += r;
    }
    printf("woken %d, results %d, call_once %d\n", woken, sum, onces);
    printf("signal nobody: %s\n", name(cnd_signal(&cv)));

    thrd_t e;
    thrd_create(&e, exits, NULL);
    rc = thrd_join(e, &r);
    printf("join thrd_exit: %s %d\n", name(rc), r);

    thrd_t d;
    thrd_create(&d, detached, NULL);
    printf("detach: %s\n", name(thrd_detach(d)));
    while (!atomic_load(&detached_done))
        thrd_yield();

    printf("current is main: %d\n", thrd_equal(thrd_current(), thrd_current()));
    struct timespec nap = {0, 1000};
    printf("sleep: %d\n", thrd_sleep(&nap, NULL));
    return 0;
}

int main(int argc, char **argv) {
    mode = argc > 1 ? argv[1] : "all";
    main_tid = gettid();
    mtx_init(&lk, mtx_timed);
    mtx_init(&own, mtx_plain);
    cnd_init(&cv);
    int rc = strcmp(mode, "all") ? hand_off() : all();
    cnd_destroy(&cv);
    mtx_destroy(&own);
    mtx_destroy(&lk);
    return rc;
}
