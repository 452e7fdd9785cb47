! coll_usempi.f90: the Fortran 90 module binding (use mpi) through
! send/recv, bcast, allreduce and barrier, each checked locally. Only
! rank 0 prints; the exit status is 1 if a check failed on any rank.
!
!   mpif90 coll_usempi.f90 -o coll_usempi && mpiexec -n 3 ./coll_usempi
program coll_usempi
  use mpi
  implicit none

  integer :: ierr, rank, nprocs, to, from, i, bad, allbad
  integer :: out(4), in(4), b(3), s, total
  integer :: status(MPI_STATUS_SIZE), cnt
  double precision :: d, dsum

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  bad = 0
  to = mod(rank + 1, nprocs)
  from = mod(rank - 1 + nprocs, nprocs)

  ! ring: even ranks send first, odd ranks receive first (no deadlock, and
  ! a blocking send to self is avoided with one rank)
  do i = 1, 4
    out(i) = rank * 1000 + i
  end do
  if (nprocs == 1) then
    in = out
  else if (mod(rank, 2) == 0) then
    call MPI_Send(out, 4, MPI_INTEGER, to, 7, MPI_COMM_WORLD, ierr)
    call MPI_Recv(in, 4, MPI_INTEGER, from, 7, MPI_COMM_WORLD, status, ierr)
  else
    call MPI_Recv(in, 4, MPI_INTEGER, from, 7, MPI_COMM_WORLD, status, ierr)
    call MPI_Send(out, 4, MPI_INTEGER, to, 7, MPI_COMM_WORLD, ierr)
  end if
  if (nprocs > 1) then
    call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
    if (cnt /= 4 .or. status(MPI_SOURCE) /= from .or. status(MPI_TAG) /= 7) bad = bad + 1
  end if
  do i = 1, 4
    if (in(i) /= from * 1000 + i) bad = bad + 1
  end do

  ! bcast from the last rank
  b = -1
  if (rank == nprocs - 1) b = (/ 11, 22, 33 /)
  call MPI_Bcast(b, 3, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD, ierr)
  if (any(b /= (/ 11, 22, 33 /))) bad = bad + 1

  ! allreduce, integer and double, and in place
  call MPI_Allreduce(rank + 1, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (s /= nprocs * (nprocs + 1) / 2) bad = bad + 1
  d = rank + 0.5d0
  call MPI_Allreduce(d, dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (dsum /= nprocs * (nprocs - 1) / 2.0d0 + 0.5d0 * nprocs) bad = bad + 1
  total = rank
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (total /= nprocs - 1) bad = bad + 1

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Reduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write (*, '(a,i0,a,i0,a,i0,a,i0)') 'use mpi: ranks ', nprocs, ' ring ', sum(in), &
      ' allreduce ', s, ' failed ', allbad
  end if
  call MPI_Bcast(allbad, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (allbad /= 0) stop 1
end program coll_usempi
