/*
 * signal_jump.c: compiled with -finstrument-functions and linked with
 * -lheisen. A timer signal's handler jumps (siglongjmp) out of whatever
 * the thread was doing, over and over, until it lands inside one of
 * heisen's hook calls (heisen_snapshot_thread then says the thread is no
 * longer measured): that call never returns. The thread must still be in
 * the report, its events before the jump recorded, the abandoned call
 * counted (runtime.calls_abandoned) and said at exit on stderr; the
 * program's output is its own. Before, the thread stayed "busy" for good
 * and its location was missing from the report.
 */
#include <heisen.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static sigjmp_buf jump;
static volatile sig_atomic_t armed;
static volatile long sink;

static void leaf(void) { sink++; }

static void on_alarm(int s) {
    (void)s;
    if (!armed) return;
    armed = 0;
    siglongjmp(jump, 1);
}

static volatile int spinning;

static void spin(void) {
    while (spinning) leaf();
}

static void tick(void) {
    if (sigsetjmp(jump, 1) == 0) {
        armed = 1;
        spin();
        armed = 0;
    }
}

static long after(void) {
    long before = sink;
    for (int i = 0; i < 1000; i++) leaf();
    return sink - before;
}

int main(void) {
    /* Every function's first call (its name resolved) before the timer:
     * this test is about the hooks' calls, not about a jump out of a
     * name's resolution. */
    tick();
    after();
    spinning = 1;
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, 0);
    struct itimerval every = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &every, 0);
    int ticks = 0;
    heisen_snapshot s;
    while (ticks < 100000) {
        tick();
        ticks++;
        if (heisen_snapshot_thread(&s) == HEISEN_RESULT_NOT_MEASURED) break;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, 0);
    printf("%s\n", ticks < 100000 ? "a jump left a heisen call" : "no jump left a heisen call");
    printf("after %ld\n", after());
    return 0;
}
