/* Unseen-suite style (MPICH's errors/coll/bcastlength):
 * under MPI_ERRORS_RETURN, collectives whose lengths differ between
 * ranks. Some ranks get an error (a truncated receive, or MPICH's
 * "failure during collective" passed down the tree), the others succeed,
 * and the program carries on with correct collectives on the same
 * communicator. (An MPI_Allreduce of different lengths is left out:
 * MPICH leaves data behind that the next one receives; so is a gather
 * whose root has less room, which fails at the root only, as heisen's
 * gatherlength did: UCX then warns of unmatched descriptors at
 * MPI_Finalize, with addresses and times.) heisen made its extra
 * exchange only where the call succeeded, so the ranks disagreed on it,
 * the next collective mismatched and MPI_Finalize hung; alarm() turns
 * such a hang into a failed run. 4 ranks. */
#include <unistd.h>

#include "common.h"

static const char *outcome(int rc) { return rc == MPI_SUCCESS ? "ok" : "error"; }

/* A correct collective after each erroneous one: every rank's sum. */
static void check(const char *after) {
    int one = me + 1, sum = -1;
    int rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int word = me == 0 ? 42 : -1;
    int rc2 = MPI_Bcast(&word, 1, MPI_INT, 0, MPI_COMM_WORLD);
    SAY("after %s allreduce rc=%d sum=%d bcast rc=%d word=%d", after, error_class(rc), sum,
        error_class(rc2), word);
}

int main(int argc, char **argv) {
    alarm(120);
    start(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int buf[10];
    for (int i = 0; i < 10; i++) buf[i] = me * 100 + i;

    /* the root sends 10 ints, the others have room for 1: they fail, the
     * root succeeds */
    int rc = MPI_Bcast(buf, me == 0 ? 10 : 1, MPI_INT, 0, MPI_COMM_WORLD);
    SAY("bcast long %s", outcome(rc));
    check("bcast long");
    /* the root sends 1 int, the others expect 10 */
    rc = MPI_Bcast(buf, me == 0 ? 1 : 10, MPI_INT, 0, MPI_COMM_WORLD);
    SAY("bcast short %s", outcome(rc));
    check("bcast short");
    rc = MPI_Barrier(MPI_COMM_WORLD);
    SAY("barrier rc=%d", error_class(rc));
    MPI_Finalize();
    return 0;
}
