/* What the hand-off tests' threads share: whether thread `tid` of this
 * process is asleep (Linux: state S in /proc/self/task/<tid>/stat),
 * blocked in a wait, so that a test's other thread starts its dilated work
 * only then and the wait covers it however the two threads are scheduled;
 * and a deadline some milliseconds after a time. */
#ifndef ASLEEP_H
#define ASLEEP_H
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

static inline int asleep(pid_t tid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the name may hold spaces */
    return p && p[1] == ' ' && p[2] == 'S';
}

/* Yields until thread `tid` is asleep. */
static inline void until_asleep(pid_t tid) {
    while (!asleep(tid))
        sched_yield();
}

/* `t` plus `ms` milliseconds. */
static inline struct timespec plus_ms(struct timespec t, long ms) {
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_nsec -= 1000000000L;
        t.tv_sec++;
    }
    return t;
}
#endif
