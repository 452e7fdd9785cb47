/* Constants and handles that MPICH defines as macros and mpi-sys 0.2.4
 * does not export. Read-only; compiled by build.rs with mpicc. */
#include <mpi.h>

const MPI_Datatype HEISEN_MPI_BYTE = MPI_BYTE;
const MPI_Datatype HEISEN_MPI_PACKED = MPI_PACKED;
void *const HEISEN_MPI_BOTTOM = MPI_BOTTOM;
void *const HEISEN_MPI_IN_PLACE = MPI_IN_PLACE;
const int HEISEN_MPI_SUCCESS = MPI_SUCCESS;
const int HEISEN_MPI_ERR_TRUNCATE = MPI_ERR_TRUNCATE;
const int HEISEN_MPI_ERR_INTERN = MPI_ERR_INTERN;
const int HEISEN_MPI_ERR_OTHER = MPI_ERR_OTHER;
const int HEISEN_MPI_ERR_COMM = MPI_ERR_COMM;
const int HEISEN_MPI_COMBINER_NAMED = MPI_COMBINER_NAMED;
const int HEISEN_MPI_BSEND_OVERHEAD = MPI_BSEND_OVERHEAD;
const int HEISEN_MPI_UNDEFINED = MPI_UNDEFINED;
const int HEISEN_MPI_ERR_IN_STATUS = MPI_ERR_IN_STATUS;
const int HEISEN_MPI_ERR_PENDING = MPI_ERR_PENDING;
