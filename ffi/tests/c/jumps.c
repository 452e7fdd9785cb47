/*
 * jumps.c: compiled with -finstrument-functions and linked with -lheisen.
 * `recover` sets a jump point and calls `dive`, which recurses 20 deep and
 * longjmps back: the exit hooks of the 21 `dive` calls never run, and
 * `recover` then returns normally. Also a sigsetjmp/siglongjmp out of a
 * signal handler, and an ordinary function between them. Without closing
 * the abandoned frames at `recover`'s exit, every exit of `recover` was
 * refused and the region stack filled up with dead `dive` frames.
 * Then recursion deeper than the region stack (64 frames): `deep`, 5000
 * calls deep, returns normally; `recover_deep` jumps out of 300 `dive`s;
 * `recover_zigzag` out of 300 calls of `zig` and `zag` calling each
 * other (the frames beyond the stack are not kept: before they were
 * forgotten at `recover_zigzag`'s exit, every later frame was lost).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

static jmp_buf jump;
static sigjmp_buf from_signal;
static volatile long sink;

static void dive(int n) {
    if (n == 0) longjmp(jump, 1);
    dive(n - 1);
    sink++; /* never reached */
}

static int recover(void) {
    if (setjmp(jump) == 0) {
        dive(20);
        return 0;
    }
    return 1;
}

static void on_signal(int s) {
    (void)s;
    siglongjmp(from_signal, 1);
}

static int interrupted(void) {
    if (sigsetjmp(from_signal, 1) == 0) {
        raise(SIGUSR1);
        return 0;
    }
    return 1;
}

static long work(int i) { return sink + i; }

static long deep(long n) { return n == 0 ? 0 : 1 + deep(n - 1); }

static int recover_deep(void) {
    if (setjmp(jump) == 0) {
        dive(300);
        return 0;
    }
    return 1;
}

static void zag(int n);
static void zig(int n) {
    if (n == 0) longjmp(jump, 1);
    zag(n - 1);
    sink++; /* never reached */
}
static void zag(int n) {
    zig(n);
    sink++; /* never reached */
}

static int recover_zigzag(void) {
    if (setjmp(jump) == 0) {
        zig(150);
        return 0;
    }
    return 1;
}

int main(void) {
    signal(SIGUSR1, on_signal);
    long recovered = 0, total = 0;
    for (int i = 0; i < 1000; i++) {
        recovered += recover();
        recovered += interrupted();
        total += work(i);
    }
    for (int i = 0; i < 10; i++) {
        recovered += recover_deep();
        total += deep(5000);
    }
    for (int i = 0; i < 10; i++) {
        recovered += recover_zigzag();
        total += work(i);
    }
    printf("recovered %ld total %ld\n", recovered, total);
    return 0;
}
