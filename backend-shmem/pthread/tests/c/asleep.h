/* Whether thread `tid` of this process is asleep (Linux: state S in
 * /proc/self/task/<tid>/stat), blocked in a wait: a test's other thread
 * starts its dilated work only then, so that the wait covers it however
 * the two threads are scheduled. */
#ifndef ASLEEP_H
#define ASLEEP_H
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

static int asleep(pid_t tid) {
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
#endif
