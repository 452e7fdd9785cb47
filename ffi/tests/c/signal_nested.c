/*
 * signal_nested.c: compiled with -finstrument-functions and linked with
 * -lheisen. A profiling timer interrupts a loop of small instrumented
 * functions until its instrumented handler has run 300 times (the timer ticks at
 * the kernel's clock tick, 4 ms here); the
 * handler makes 4 calls (handler, hmid, hleaf twice) and returns
 * normally. The hooks take most of such a program's time, so most
 * signals land inside one of heisen's calls, and the handler's calls are
 * then not measured: the report must count them (runtime.calls_nested,
 * 4 per such signal), so that the handler's measured calls and the
 * counted ones add up to the calls made. Before, they were dropped
 * silently (a report of 1,498 handler calls for 11,317 made).
 * Prints the handler's calls.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t handled;
static volatile long hsink;
static volatile long s_warm;

static long hleaf(long x) { return x * 7; }
static long hmid(long x) { return hleaf(x) + hleaf(x + 1); }
static void handler(int s) {
    (void)s;
    hsink += hmid(handled);
    handled++;
}

static long leaf(long i) { return i ^ (i >> 3); }
static long mid(long i) { return leaf(i) + leaf(i + 1); }
static long top(long n) {
    long s = 0;
    for (long i = 0; i < n; i++) s += mid(i);
    return s;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    /* Every name resolved before the first signal: a signal that lands in
     * a first call's resolution would otherwise leave part of the
     * handler's calls measured and part counted. */
    hsink += hmid(0);
    hsink -= hmid(0);
    s_warm = top(1);
    struct itimerval every = {{0, 200}, {0, 200}};
    setitimer(ITIMER_PROF, &every, NULL);
    long s = 0;
    while (handled < 300) s += top(1000);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    signal(SIGPROF, SIG_IGN);
    printf("handler %d (%ld)\n", (int)handled, s > 0);
    return 0;
}
