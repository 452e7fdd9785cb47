/* A wildcard master/worker on any number of ranks: the master hands out
 * tasks and takes results with MPI_ANY_SOURCE and MPI_ANY_TAG, in
 * whatever order they come; it prints only what does not depend on that
 * order (the sum of results, the number of tasks). */
#include "common.h"

#define TASKS_DEFAULT 200
#define STOP 0

int main(int argc, char **argv) {
    start(&argc, &argv);
    int TASKS = argc > 1 ? atoi(argv[1]) : TASKS_DEFAULT;
    if (np < 2) { MPI_Finalize(); return 0; }
    if (me == 0) {
        long sum = 0;
        int next = 1, busy = 0, got = 0;
        for (int w = 1; w < np && next <= TASKS; w++, busy++) {
            MPI_Send(&next, 1, MPI_INT, w, 1, MPI_COMM_WORLD);
            next++;
        }
        while (busy > 0) {
            long result[2];
            MPI_Status st;
            MPI_Recv(result, 2, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int count;
            MPI_Get_count(&st, MPI_LONG, &count);
            if (count != 2 || st.MPI_TAG != 2 || st.MPI_SOURCE < 1) SAY("bad status %d %d %d", count, st.MPI_TAG, st.MPI_SOURCE);
            sum += result[1];
            got++;
            busy--;
            if (next <= TASKS) {
                MPI_Send(&next, 1, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD);
                next++;
                busy++;
            }
        }
        int stop = STOP;
        for (int w = 1; w < np; w++) MPI_Send(&stop, 1, MPI_INT, w, 1, MPI_COMM_WORLD);
        SAY("results %d sum %ld", got, sum);
    } else {
        for (;;) {
            int task;
            MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (task == STOP) break;
            long acc = 0;
            for (int i = 0; i < 2000 * (task % 7 + 1); i++) acc += (i ^ task) % 13;
            long result[2] = {task, (long)task * task + acc % 3};
            MPI_Send(result, 2, MPI_LONG, 0, 2, MPI_COMM_WORLD);
        }
        SAY("worker done");
    }
    MPI_Finalize();
    return 0;
}
