/* f08_detach.c: MPI_Buffer_detach as a Fortran 2008 program calls it
 * (MPICH's mpi_buffer_detach_f08_ and its _large twin, which call
 * PMPI_Buffer_detach directly). heisen attaches a larger buffer of its own
 * in the program's place; unwrapped, the f08 detach handed that buffer
 * back instead of the program's. The gfortran here cannot compile a call
 * of the f08 MPI_Buffer_detach (an internal compiler error on the
 * module's C_PTR), so this C program calls the symbols the way the
 * Fortran compiler would: every argument by reference, `ierror` last.
 * Exactly 2 ranks; prints "f08 detach: failed N" on rank 0. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

typedef void (*detach_fn)(void *addr, MPI_Fint *size, MPI_Fint *ierror);
typedef void (*detach_large_fn)(void *addr, MPI_Count *size, MPI_Fint *ierror);

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, bad = 0, all = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!dlopen("libmpichfort.so.12", RTLD_NOW | RTLD_GLOBAL)) {
        printf("no libmpichfort: %s\n", dlerror());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    detach_fn detach = (detach_fn)dlsym(RTLD_DEFAULT, "mpi_buffer_detach_f08_");
    detach_large_fn large = (detach_large_fn)dlsym(RTLD_DEFAULT, "mpi_buffer_detach_f08_large_");
    if (!detach || !large) {
        printf("no mpi_buffer_detach_f08_\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    static char buffer[4000];
    int data[8] = {1, 2, 3, 4, 5, 6, 7, 8}, got[8];
    for (int round = 0; round < 2; round++) {
        MPI_Buffer_attach(buffer, sizeof buffer);
        MPI_Bsend(data, 8, MPI_INT, 1 - rank, 5, MPI_COMM_WORLD);
        MPI_Status st;
        int n = 0;
        MPI_Recv(got, 8, MPI_INT, 1 - rank, 5, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &n);
        if (n != 8 || got[7] != 8) bad++;
        void *address = NULL;
        MPI_Fint ierror = -1;
        if (round == 0) {
            MPI_Fint size = -1;
            detach(&address, &size, &ierror);
            if (size != (MPI_Fint)sizeof buffer) bad++;
        } else {
            MPI_Count size = -1;
            large(&address, &size, NULL); /* an absent ierror */
            ierror = 0;
            if (size != (MPI_Count)sizeof buffer) bad++;
        }
        if (address != (void *)buffer || ierror != 0) bad++;
    }
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("f08 detach: failed %d\n", all);
    MPI_Finalize();
    return all != 0;
}
