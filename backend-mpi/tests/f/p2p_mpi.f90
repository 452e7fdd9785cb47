! Point-to-point through `use mpi`: the binding calls the C MPI_* symbols,
! so the interposer sees it as a C program (count, tag and data as without heisen).
program p2p_mpi
  use mpi
  implicit none
  integer :: ierr, me, st(MPI_STATUS_SIZE), n, v(5), w(5)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  v = (/ 1, 2, 3, 4, 5 /) * (me + 1)
  w = 0
  if (me == 0) then
    call MPI_Send(v, 3, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
  else if (me == 1) then
    call MPI_Recv(w, 5, MPI_INTEGER, 0, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
    call MPI_Get_count(st, MPI_INTEGER, n, ierr)
    print *, 'count', n, 'tag', st(MPI_TAG), 'data', w
  end if
  call MPI_Finalize(ierr)
end program p2p_mpi
