! f08_pmpi_paths.f90: the mpi_f08 procedures that MPICH 4.0 implements by
! calling PMPI_* directly (completions, probes, persistent starts,
! Request_free/get_status, Type_free, communicator constructors, barriers
! (the persistent one too),
! Init_thread, Pcontrol), each checked for what the program sees: data,
! MPI_Get_count of every status, sources, tags, indices and flags. Before
! heisen wrapped them, statuses and probes showed the record's bytes
! (63 integers for 3). Indices are printed, not judged: MPICH 4.0's
! mpi_f08 gives them 0-based (pmodels/mpich#6270), and heisen must give
! what the MPI gives. Exactly 2 ranks; every rank prints its failures and
! rank 0 the total; the exit status is 1 if a check failed.
!
!   mpif90 f08_pmpi_paths.f90 -o f08p && mpiexec -n 2 ./f08p
program f08_pmpi_paths
  use mpi_f08
  implicit none
  integer :: rank, nprocs, peer, i, n, bad, allbad, r, provided, outcount, idx, off
  integer :: sbuf(8), rbuf(8), big(3000), vec(12), got(12)
  integer :: indices(3)
  integer, asynchronous :: pin(1), pout(1)
  logical :: flag
  type(MPI_Request) :: req, reqs(3), preq(2)
  type(MPI_Status) :: st, sts(3)
  type(MPI_Message) :: msg
  type(MPI_Datatype) :: vtype, ctype
  type(MPI_Comm) :: dup, split, inter, merged, half

  call MPI_Init_thread(MPI_THREAD_SINGLE, provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  if (nprocs /= 2) then
    print *, 'needs exactly 2 ranks'
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end if
  peer = 1 - rank
  bad = 0
  sbuf = [(10 * rank + i, i = 1, 8)]
  call MPI_Pcontrol(1)

  ! Irecv + Wait with a status
  call MPI_Irecv(rbuf, 8, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, req)
  call MPI_Send(sbuf, 3, MPI_INTEGER, peer, 1, MPI_COMM_WORLD)
  call MPI_Wait(req, st)
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check('wait', n == 3 .and. st%MPI_SOURCE == peer .and. st%MPI_TAG == 1 &
             .and. all(rbuf(1:3) == [(10 * peer + i, i = 1, 3)]) &
             .and. req == MPI_REQUEST_NULL)

  ! Irecv + Test until done
  call MPI_Irecv(big, 3000, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, req)
  call MPI_Send([(rank * 100000 + i, i = 1, 2500)], 2500, MPI_INTEGER, peer, 2, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, st)
  end do
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check('test', n == 2500 .and. big(2500) == peer * 100000 + 2500 .and. st%MPI_TAG == 2)

  ! Waitany and Waitsome: indices are 1-based
  do i = 1, 3
    call MPI_Irecv(rbuf(i), 1, MPI_INTEGER, peer, 10 + i, MPI_COMM_WORLD, reqs(i))
  end do
  call MPI_Send(sbuf(2), 1, MPI_INTEGER, peer, 12, MPI_COMM_WORLD)
  call MPI_Waitany(3, reqs, idx, st)
  call MPI_Get_count(st, MPI_INTEGER, n)
  ! the second request: index 2 by the standard, 1 from MPICH 4.0's mpi_f08
  off = idx - 1
  if (rank == 0) write (*, '(a,i0)') 'waitany: offset of indices ', off
  call check('waitany', (off == 0 .or. off == 1) .and. n == 1 .and. st%MPI_TAG == 12 .and. rbuf(2) == 10 * peer + 2)
  call MPI_Send(sbuf(3), 1, MPI_INTEGER, peer, 13, MPI_COMM_WORLD)
  call MPI_Send(sbuf(1), 1, MPI_INTEGER, peer, 11, MPI_COMM_WORLD)
  n = 0
  do while (n < 2)
    call MPI_Waitsome(3, reqs, outcount, indices, sts)
    do i = 1, outcount
      if (indices(i) /= off .and. indices(i) /= 2 + off) call check('waitsome index', .false.)
      call MPI_Get_count(sts(i), MPI_INTEGER, r)
      if (r /= 1 .or. sts(i)%MPI_TAG /= 11 + indices(i) - off) call check('waitsome status', .false.)
      n = n + 1
    end do
  end do
  call check('waitsome', rbuf(1) == 10 * peer + 1 .and. rbuf(3) == 10 * peer + 3)
  call MPI_Waitsome(3, reqs, outcount, indices, sts)
  call check('waitsome all null', outcount == MPI_UNDEFINED)

  ! Testany, Testall and Testsome
  call MPI_Irecv(rbuf, 8, MPI_INTEGER, peer, 20, MPI_COMM_WORLD, reqs(1))
  call MPI_Send(sbuf, 5, MPI_INTEGER, peer, 20, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_Testany(1, reqs, idx, flag, st)
  end do
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check('testany', idx == off .and. n == 5)
  call MPI_Irecv(rbuf(1), 2, MPI_INTEGER, peer, 21, MPI_COMM_WORLD, reqs(1))
  call MPI_Irecv(rbuf(3), 4, MPI_INTEGER, peer, 22, MPI_COMM_WORLD, reqs(2))
  call MPI_Send(sbuf, 2, MPI_INTEGER, peer, 21, MPI_COMM_WORLD)
  call MPI_Send(sbuf, 4, MPI_INTEGER, peer, 22, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(2, reqs, flag, sts)
  end do
  call MPI_Get_count(sts(1), MPI_INTEGER, n)
  call MPI_Get_count(sts(2), MPI_INTEGER, r)
  call check('testall', n == 2 .and. r == 4 .and. sts(2)%MPI_TAG == 22)
  call MPI_Irecv(rbuf, 8, MPI_INTEGER, peer, 23, MPI_COMM_WORLD, reqs(1))
  call MPI_Send(sbuf, 6, MPI_INTEGER, peer, 23, MPI_COMM_WORLD)
  outcount = 0
  do while (outcount == 0)
    call MPI_Testsome(1, reqs, outcount, indices, sts)
  end do
  call MPI_Get_count(sts(1), MPI_INTEGER, n)
  call check('testsome', outcount == 1 .and. indices(1) == off .and. n == 6)

  ! probes: Iprobe, Probe, Mprobe, Improbe
  call MPI_Send(sbuf, 4, MPI_INTEGER, peer, 30, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_Iprobe(peer, 30, MPI_COMM_WORLD, flag, st)
  end do
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check('iprobe', n == 4 .and. st%MPI_SOURCE == peer)
  call MPI_Probe(MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, st)
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check('probe', n == 4)
  call MPI_Recv(rbuf, 8, MPI_INTEGER, peer, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call MPI_Send(sbuf, 7, MPI_INTEGER, peer, 31, MPI_COMM_WORLD)
  call MPI_Mprobe(peer, 31, MPI_COMM_WORLD, msg, st)
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check('mprobe', n == 7)
  call MPI_Mrecv(rbuf, 8, MPI_INTEGER, msg, st)
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check('mrecv', n == 7 .and. rbuf(7) == 10 * peer + 7)
  call MPI_Send(sbuf, 2, MPI_INTEGER, peer, 32, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_Improbe(peer, 32, MPI_COMM_WORLD, flag, msg, st)
  end do
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check('improbe', n == 2)
  call MPI_Mrecv(rbuf, 8, MPI_INTEGER, msg, MPI_STATUS_IGNORE)

  ! persistent requests: Start, Startall, changing data, Request_free
  call MPI_Send_init(sbuf, 8, MPI_INTEGER, peer, 40, MPI_COMM_WORLD, preq(1))
  call MPI_Recv_init(rbuf, 8, MPI_INTEGER, peer, 40, MPI_COMM_WORLD, preq(2))
  do r = 1, 4
    sbuf = [(1000 * r + 10 * rank + i, i = 1, 8)]
    if (mod(r, 2) == 0) then
      call MPI_Startall(2, preq)
    else
      call MPI_Start(preq(2))
      call MPI_Start(preq(1))
    end if
    call MPI_Waitall(2, preq, sts)
    call MPI_Get_count(sts(2), MPI_INTEGER, n)
    call check('persistent', n == 8 .and. all(rbuf == [(1000 * r + 10 * peer + i, i = 1, 8)]))
  end do
  call MPI_Request_free(preq(1))
  call MPI_Request_free(preq(2))
  call check('request_free', preq(1) == MPI_REQUEST_NULL .and. preq(2) == MPI_REQUEST_NULL)

  ! Request_get_status leaves the request to its Wait
  call MPI_Irecv(rbuf, 8, MPI_INTEGER, peer, 50, MPI_COMM_WORLD, req)
  call MPI_Send(sbuf, 3, MPI_INTEGER, peer, 50, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_Request_get_status(req, flag, st)
  end do
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check('get_status', n == 3 .and. req /= MPI_REQUEST_NULL)
  call MPI_Wait(req, st)
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check('get_status wait', n == 3)

  ! a freed type's handle given to the next type
  do r = 1, 3
    call MPI_Type_vector(3, 1, 4, MPI_INTEGER, vtype)
    call MPI_Type_commit(vtype)
    vec = [(100 * r + 10 * rank + i, i = 1, 12)]
    got = -1
    call MPI_Sendrecv(vec, 1, vtype, peer, 60, got, 3, MPI_INTEGER, peer, 60, &
                      MPI_COMM_WORLD, st)
    call check('vector', got(1) == 100 * r + 10 * peer + 1 .and. got(2) == 100 * r + 10 * peer + 5 &
               .and. got(3) == 100 * r + 10 * peer + 9 .and. got(4) == -1)
    call MPI_Type_free(vtype)
    call MPI_Type_contiguous(3, MPI_INTEGER, ctype)
    call MPI_Type_commit(ctype)
    got = -1
    call MPI_Sendrecv(vec, 1, ctype, peer, 61, got, 1, ctype, peer, 61, MPI_COMM_WORLD, st)
    call MPI_Get_count(st, ctype, n)
    call check('contiguous', n == 1 .and. all(got(1:3) == [(100 * r + 10 * peer + i, i = 1, 3)]) &
               .and. got(4) == -1)
    call MPI_Type_free(ctype)
  end do

  ! communicators made and freed through mpi_f08, used for messages
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, split)
  call MPI_Comm_rank(split, n)
  call check('split', n == 1 - rank)
  call MPI_Sendrecv(sbuf, 2, MPI_INTEGER, peer, 70, rbuf, 8, MPI_INTEGER, peer, 70, dup, st)
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check('dup', n == 2 .and. rbuf(2) == sbuf(2) - 10 * rank + 10 * peer)
  call MPI_Barrier(dup)
  call MPI_Ibarrier(split, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  ! a persistent barrier (MPI 4.0) and a persistent allreduce, each
  ! started three times (the allreduce's buffers asynchronous arrays: a
  ! scalar reaches MPICH 4.0.2's binding as a temporary copy)
  call MPI_Barrier_init(split, MPI_INFO_NULL, preq(1))
  call MPI_Allreduce_init(pin, pout, 1, MPI_INTEGER, MPI_SUM, dup, MPI_INFO_NULL, preq(2))
  do i = 1, 3
    pin(1) = 100 * i + rank
    call MPI_Startall(2, preq)
    call MPI_Waitall(2, preq, MPI_STATUSES_IGNORE)
    call check('persistent allreduce', pout(1) == 200 * i + 1)
  end do
  call MPI_Request_free(preq(1))
  call MPI_Request_free(preq(2))
  call MPI_Comm_split(MPI_COMM_WORLD, rank, 0, half)
  call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, peer, 80, inter)
  call MPI_Intercomm_merge(inter, rank == 1, merged)
  call MPI_Comm_rank(merged, n)
  call check('merge', n == rank)
  call MPI_Comm_free(merged)
  call MPI_Comm_free(inter)
  call MPI_Comm_free(half)
  call MPI_Comm_free(split)
  call MPI_Comm_free(dup)

  call MPI_Reduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0) write (*, '(a,i0)') 'mpi_f08 PMPI paths: failed ', allbad
  call MPI_Bcast(allbad, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Finalize()
  if (allbad /= 0) stop 1

contains

  subroutine check(what, ok)
    character(*), intent(in) :: what
    logical, intent(in) :: ok
    if (.not. ok) then
      write (*, '(a,i0,a,a)') 'rank ', rank, ' failed: ', what
      bad = bad + 1
    end if
  end subroutine check

end program f08_pmpi_paths
