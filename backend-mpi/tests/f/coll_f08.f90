! coll_f08.f90: the Fortran 2008 binding (use mpi_f08: typed handles,
! optional ierror) through send/recv, bcast, allreduce and barrier, each
! checked locally. Only rank 0 prints; the exit status is 1 if a check
! failed on any rank.
!
! With MPICH 4.0 the mpi_f08 wrappers call some C functions through their
! PMPI_ names (init, barrier, finalize, wait, waitall): a C-level
! interposer does not see those calls; the output must nevertheless be
! identical. Nonblocking point-to-point is in coll_f08_nonblocking.f90:
! its MPI_Waitall reaches PMPI_Waitall directly, past the interposer.
!
!   mpif90 coll_f08.f90 -o coll_f08 && mpiexec -n 3 ./coll_f08
program coll_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, to, from, i, bad, allbad
  integer :: out(4), in(4), b(3), s, total, cnt
  type(MPI_Status) :: status
  double precision :: d, dsum

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  bad = 0
  to = mod(rank + 1, nprocs)
  from = mod(rank - 1 + nprocs, nprocs)

  do i = 1, 4
    out(i) = rank * 1000 + i
  end do
  if (nprocs == 1) then
    in = out
  else if (mod(rank, 2) == 0) then
    call MPI_Send(out, 4, MPI_INTEGER, to, 7, MPI_COMM_WORLD)
    call MPI_Recv(in, 4, MPI_INTEGER, from, 7, MPI_COMM_WORLD, status)
  else
    call MPI_Recv(in, 4, MPI_INTEGER, from, 7, MPI_COMM_WORLD, status)
    call MPI_Send(out, 4, MPI_INTEGER, to, 7, MPI_COMM_WORLD)
  end if
  if (nprocs > 1) then
    call MPI_Get_count(status, MPI_INTEGER, cnt)
    if (cnt /= 4 .or. status%MPI_SOURCE /= from .or. status%MPI_TAG /= 7) bad = bad + 1
  end if
  do i = 1, 4
    if (in(i) /= from * 1000 + i) bad = bad + 1
  end do

  b = -1
  if (rank == nprocs - 1) b = (/ 11, 22, 33 /)
  call MPI_Bcast(b, 3, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD)
  if (any(b /= (/ 11, 22, 33 /))) bad = bad + 1

  call MPI_Allreduce(rank + 1, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (s /= nprocs * (nprocs + 1) / 2) bad = bad + 1
  d = rank + 0.5d0
  call MPI_Allreduce(d, dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (dsum /= nprocs * (nprocs - 1) / 2.0d0 + 0.5d0 * nprocs) bad = bad + 1
  total = rank
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
  if (total /= nprocs - 1) bad = bad + 1

  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Reduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0) then
    write (*, '(a,i0,a,i0,a,i0,a,i0)') 'mpi_f08: ranks ', nprocs, ' ring ', sum(in), &
      ' allreduce ', s, ' failed ', allbad
  end if
  call MPI_Bcast(allbad, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Finalize()
  if (allbad /= 0) stop 1
end program coll_f08
