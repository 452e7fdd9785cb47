/* Unseen-suite style (MPICH's errors/comm/ccreate1): under
 * MPI_ERRORS_RETURN, collective calls that some or all ranks reject for
 * their arguments, each followed by correct collectives on the same
 * communicator.
 * - MPI_Comm_create with a group that is not a subset of the parent's:
 *   MPICH fails it on the ranks inside the group and returns
 *   MPI_COMM_NULL, successfully, on the others. heisen made its extra
 *   exchange on the parent where the call succeeded, so those ranks
 *   waited in it for ever (ccreate1 hung); it now exchanges on the new
 *   communicator.
 * - An MPI_Allreduce with MPI_OP_NULL on every rank (MPI_ERR_OP) and an
 *   MPI_Bcast from root 99 on every rank (MPI_ERR_ROOT), on a
 *   communicator whose error handler counts its calls: nothing of
 *   heisen's may call the program's handler. (A count of -1 is left out:
 *   MPICH 4.0.2 crashes in it.)
 * alarm() turns a hang into a failed run. 4 ranks. */
#include <unistd.h>

#include "common.h"

static int handled;

static void count_errors(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
    handled++;
}

/* A correct collective after each erroneous one: every rank's sum. */
static void check(MPI_Comm comm, const char *after) {
    int one = me + 1, sum = -1;
    int rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
    int rc2 = MPI_Barrier(comm);
    SAY("after %s allreduce rc=%d sum=%d barrier rc=%d", after, error_class(rc), sum,
        error_class(rc2));
}

/* MPI_Comm_create of `group` from `parent`, its outcome, then correct
 * collectives on the parent. */
static void create(MPI_Comm parent, MPI_Group group, const char *g, const char *p) {
    MPI_Comm created = MPI_COMM_WORLD;
    int rc = MPI_Comm_create(parent, group, &created);
    SAY("create %s from %s rc=%s null=%d", g, p, rc == MPI_SUCCESS ? "ok" : "error",
        rc == MPI_SUCCESS && created == MPI_COMM_NULL);
    if (rc == MPI_SUCCESS && created != MPI_COMM_NULL) MPI_Comm_free(&created);
    char after[64];
    snprintf(after, sizeof after, "create %s", g);
    check(parent, after);
}

int main(int argc, char **argv) {
    alarm(120);
    start(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Comm low, even;
    MPI_Comm_split(MPI_COMM_WORLD, me < np / 2, np - me, &low);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &even);
    MPI_Comm_set_errhandler(low, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(even, MPI_ERRORS_RETURN);
    MPI_Group world, high, odd;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int range[1][3] = {{np / 4, np - 1, 1}};
    MPI_Group_range_incl(world, 1, range, &high);
    int odds[1][3] = {{2 * (np / 2) - 1, 1, -2}};
    MPI_Group_range_incl(world, 1, odds, &odd);

    /* the lower half creates from the upper three quarters: ranks in
     * both fail, the others get MPI_COMM_NULL */
    if (me < np / 2) {
        create(low, high, "high", "low");
    }
    /* the even ranks create from the odd ones: none is in the group */
    if (me % 2 == 0) {
        create(even, odd, "odd", "even");
    }

    MPI_Comm counted;
    MPI_Errhandler handler;
    MPI_Comm_dup(MPI_COMM_WORLD, &counted);
    MPI_Comm_create_errhandler(count_errors, &handler);
    MPI_Comm_set_errhandler(counted, handler);
    int word = me, sum = -1;
    int rc = MPI_Allreduce(&word, &sum, 1, MPI_INT, MPI_OP_NULL, counted);
    SAY("allreduce op null rc=%d handled=%d", error_class(rc), handled);
    check(counted, "op null");
    rc = MPI_Bcast(&word, 1, MPI_INT, 99, counted);
    SAY("bcast root 99 rc=%d handled=%d word=%d", error_class(rc), handled, word);
    check(counted, "root 99");
    SAY("handled %d", handled);

    MPI_Errhandler_free(&handler);
    MPI_Comm_free(&counted);
    MPI_Group_free(&odd);
    MPI_Group_free(&high);
    MPI_Group_free(&world);
    MPI_Comm_free(&even);
    MPI_Comm_free(&low);
    MPI_Finalize();
    return 0;
}
