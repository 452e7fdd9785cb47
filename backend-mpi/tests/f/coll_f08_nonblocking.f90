! coll_f08_nonblocking.f90: nonblocking point-to-point through the
! Fortran 2008 binding. MPICH 4.0's mpi_f08 MPI_Isend/MPI_Irecv call the C
! MPI_Isend/MPI_Irecv (the interposer's), but its MPI_Wait/MPI_Waitall call
! PMPI_Wait/PMPI_Waitall: the interposer never sees the completion. Only
! rank 0 prints; the exit status is 1 if a check failed on any rank.
!
!   mpif90 coll_f08_nonblocking.f90 -o f08nb && mpiexec -n 2 ./f08nb
program coll_f08_nonblocking
  use mpi_f08
  implicit none
  integer :: rank, nprocs, to, from, i, bad, allbad, round
  integer :: out(3), b(3), big_out(3000), big_in(3000)
  type(MPI_Request) :: req(2)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  bad = 0
  to = mod(rank + 1, nprocs)
  from = mod(rank - 1 + nprocs, nprocs)
  do round = 1, 3
    do i = 1, 3
      out(i) = rank * 1000 + 10 * round + i
    end do
    call MPI_Irecv(b, 3, MPI_INTEGER, to, 8, MPI_COMM_WORLD, req(1))
    call MPI_Isend(out, 3, MPI_INTEGER, from, 8, MPI_COMM_WORLD, req(2))
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
    do i = 1, 3
      if (b(i) /= to * 1000 + 10 * round + i) bad = bad + 1
    end do
  end do
  do i = 1, 3000
    big_out(i) = rank * 100000 + i
  end do
  call MPI_Irecv(big_in, 3000, MPI_INTEGER, from, 9, MPI_COMM_WORLD, req(1))
  call MPI_Isend(big_out, 3000, MPI_INTEGER, to, 9, MPI_COMM_WORLD, req(2))
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  call MPI_Wait(req(2), MPI_STATUS_IGNORE)
  do i = 1, 3000
    if (big_in(i) /= from * 100000 + i) bad = bad + 1
  end do
  call MPI_Reduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0) write (*, '(a,i0,a,i0)') 'mpi_f08 nonblocking: ranks ', nprocs, ' failed ', allbad
  call MPI_Bcast(allbad, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Finalize()
  if (allbad /= 0) stop 1
end program coll_f08_nonblocking
