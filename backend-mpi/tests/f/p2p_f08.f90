! Point-to-point through `use mpi_f08`: MPICH binds MPI_Init and MPI_Finalize
! to PMPI_* directly; heisen sets up lazily and wraps mpi_finalize_f08_.
program p2p_f08
  use mpi_f08
  implicit none
  integer :: me, n, v(5), w(5)
  type(MPI_Status) :: st
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  v = (/ 1, 2, 3, 4, 5 /) * (me + 1)
  w = 0
  if (me == 0) then
    call MPI_Send(v, 3, MPI_INTEGER, 1, 7, MPI_COMM_WORLD)
  else if (me == 1) then
    call MPI_Recv(w, 5, MPI_INTEGER, 0, MPI_ANY_TAG, MPI_COMM_WORLD, st)
    call MPI_Get_count(st, MPI_INTEGER, n)
    print *, 'count', n, 'tag', st%MPI_TAG, 'data', w
  end if
  call MPI_Finalize()
end program p2p_f08
