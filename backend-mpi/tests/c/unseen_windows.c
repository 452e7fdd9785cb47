/* The OSU bandwidth pattern (osu_bw, osu_bibw, osu_mbw_mr): windows of 64
 * nonblocking 1-byte sends completed by one MPI_Waitall, 200 windows,
 * acknowledged by a blocking receive; then the same with windows of
 * MPI_Issend (never complete at once) and Waitsome. MPICH gives every
 * send it finished at once the same predefined request handle: heisen
 * used to keep one table entry per such send for good, and from the
 * 4,097th on ran them unmeasured with a message at exit. Ranks pair up
 * (0 with 1, 2 with 3, ...); an odd last rank only takes part in the
 * final reduction. */
#include "common.h"

#define WINDOW 64
#define WINDOWS 200

int main(int argc, char **argv) {
    start(&argc, &argv);
    int peer = me ^ 1, bad = 0;
    char s[WINDOW], r[WINDOW];
    MPI_Request req[WINDOW];
    MPI_Status st[WINDOW];
    if (peer < np) {
        for (int w = 0; w < WINDOWS; w++) {
            for (int j = 0; j < WINDOW; j++) {
                s[j] = (char)(w + j);
                r[j] = -1;
            }
            if (me % 2 == 0) {
                for (int j = 0; j < WINDOW; j++)
                    MPI_Isend(&s[j], 1, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(WINDOW, req, st);
                MPI_Recv(r, 1, MPI_CHAR, peer, 101, MPI_COMM_WORLD, &st[0]);
                bad += r[0] != (char)w;
            } else {
                for (int j = 0; j < WINDOW; j++)
                    MPI_Irecv(&r[j], 1, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(WINDOW, req, st);
                for (int j = 0; j < WINDOW; j++) bad += r[j] != (char)(w + j);
                s[0] = (char)w;
                MPI_Send(s, 1, MPI_CHAR, peer, 101, MPI_COMM_WORLD);
            }
        }
        /* Synchronous sends, completed in whatever order Waitsome gives. */
        for (int w = 0; w < 20; w++) {
            if (me % 2 == 0) {
                for (int j = 0; j < WINDOW; j++)
                    MPI_Issend(&s[j], 1, MPI_CHAR, peer, 102, MPI_COMM_WORLD, &req[j]);
            } else {
                for (int j = 0; j < WINDOW; j++)
                    MPI_Irecv(&r[j], 1, MPI_CHAR, peer, 102, MPI_COMM_WORLD, &req[j]);
            }
            int left = WINDOW, done, idx[WINDOW];
            while (left > 0) {
                MPI_Waitsome(WINDOW, req, &done, idx, st);
                left -= done;
            }
        }
    }
    int total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    SAY("windows %d of %d one-byte sends, %d wrong bytes in all", WINDOWS, WINDOW, total);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
