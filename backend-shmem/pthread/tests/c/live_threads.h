/* Threads of this process alive now (Linux: /proc/self/status), for a
 * test that must outlive its detached threads before it exits: no join
 * can wait for them, and the report counts a thread ended only once it
 * is gone. */
#ifndef LIVE_THREADS_H
#define LIVE_THREADS_H
#include <stdio.h>

static int live_threads(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}
#endif
