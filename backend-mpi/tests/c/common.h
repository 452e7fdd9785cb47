/* Shared by the transparency programs: each rank writes its lines to
 * $TRANSPARENCY_OUT/r<rank>.txt (stdout when unset), so the test compares
 * rank by rank whatever order mpiexec forwards output in.
 * Programs print what they received and every status field (source, tag,
 * error class, Get_count, Get_elements), never times or addresses. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np;
static FILE *out;

#define SAY(...) do { fprintf(out, "r%d ", me); fprintf(out, __VA_ARGS__); fprintf(out, "\n"); fflush(out); } while (0)

static int error_class(int rc) {
    int c = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
    return c;
}

/* One status as the program sees it, counted in `type`. */
static void show_status(const char *what, int rc, MPI_Status *st, MPI_Datatype type) {
    int count = -7, elements = -7;
    MPI_Get_count(st, type, &count);
    MPI_Get_elements(st, type, &elements);
    SAY("%s rc=%d source=%d tag=%d count=%d elements=%d", what, error_class(rc),
        st->MPI_SOURCE, st->MPI_TAG, count, elements);
}

static void show_ints(const char *what, const int *v, int n) {
    char line[4096];
    int at = 0;
    for (int i = 0; i < n && at < (int)sizeof line - 16; i++) at += sprintf(line + at, " %d", v[i]);
    line[at] = 0;
    SAY("%s [%s ]", what, line);
}

/* This rank's number and the size, and its output: stdout, or
 * $TRANSPARENCY_OUT/r<rank>.txt when the test runner sets it. */
static void open_output(void) {
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    out = stdout;
    const char *dir = getenv("TRANSPARENCY_OUT");
    if (dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/r%d.txt", dir, me);
        out = fopen(path, "w");
        if (!out) { perror(path); MPI_Abort(MPI_COMM_WORLD, 2); }
    }
}

static void start(int *argc, char ***argv) {
    MPI_Init(argc, argv);
    open_output();
}

/* start() with MPI_Init_thread; returns the level provided. */
static int start_thread(int *argc, char ***argv, int level) {
    int provided;
    MPI_Init_thread(argc, argv, level, &provided);
    open_output();
    return provided;
}
