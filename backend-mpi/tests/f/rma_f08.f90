! rma_f08.f90: one-sided communication through mpi_f08, whose window
! calls MPICH 4.0 implements by calling PMPI_* directly (every constructor
! but MPI_Win_create, fences, post/start/complete/wait/test, free): a
! window of each constructor, a fenced ring of puts, a general active
! target ring waited for by MPI_Win_wait and by MPI_Win_test, passive
! target locks and flushes on a window of MPI_Win_allocate's large form,
! each checked.
! Rank 0 prints the total of failed checks; the exit status is 1 if a
! check failed.
!
!   mpif90 rma_f08.f90 -o rma && mpiexec -n 3 ./rma
program rma_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer, parameter :: n = 4
  integer :: rank, nprocs, right, left, bad, allbad, i, polls
  integer, target :: buf(n)
  integer :: out(n)
  integer, pointer :: mem(:)
  integer(kind=MPI_ADDRESS_KIND) :: bytes, mine, theirs, unit8
  type(c_ptr) :: base
  type(MPI_Win) :: win
  type(MPI_Group) :: world, origins, targets
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  bad = 0
  bytes = n * 4
  call MPI_Comm_group(MPI_COMM_WORLD, world)
  call MPI_Group_incl(world, 1, [left], origins)
  call MPI_Group_incl(world, 1, [right], targets)

  ! MPI_Win_create (through the C MPI_Win_create), a fenced ring
  buf = -1
  call MPI_Win_create(buf, bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  out = [(100 * rank + i, i = 1, n)]
  call MPI_Win_fence(0, win)
  call MPI_Put(out, n, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, n, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check('create fence', all(buf == [(100 * left + i, i = 1, n)]))

  ! general active target on the ring, waited for by MPI_Win_wait
  out = out + 1000
  call MPI_Win_post(origins, 0, win)
  call MPI_Win_start(targets, 0, win)
  call MPI_Put(out, n, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, n, MPI_INTEGER, win)
  call MPI_Win_complete(win)
  call MPI_Win_wait(win)
  call check('create pscw wait', all(buf == [(1000 + 100 * left + i, i = 1, n)]))

  ! and by MPI_Win_test
  out = out + 1000
  call MPI_Win_post(origins, 0, win)
  call MPI_Win_start(targets, 0, win)
  call MPI_Put(out, n, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, n, MPI_INTEGER, win)
  call MPI_Win_complete(win)
  flag = .false.
  polls = 0
  do while (.not. flag)
    call MPI_Win_test(win, flag)
    polls = polls + 1
  end do
  call check('create pscw test', flag .and. polls >= 1 &
             .and. all(buf == [(2000 + 100 * left + i, i = 1, n)]))
  call MPI_Win_free(win)
  call check('create free', win == MPI_WIN_NULL)

  ! MPI_Win_allocate: memory the MPI gives, a fenced ring
  call MPI_Win_allocate(bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
  call c_f_pointer(base, mem, [n])
  mem = -1
  call MPI_Win_fence(0, win)
  call MPI_Put(out, n, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, n, MPI_INTEGER, win)
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, win)
  call check('allocate fence', all(mem == [(2000 + 100 * left + i, i = 1, n)]))
  call MPI_Win_free(win)

  ! MPI_Win_allocate's large form (an address-sized displacement unit),
  ! and passive target: each rank puts into its right neighbour under a
  ! lock, then reads its own under lock_all with flushes and a sync
  unit8 = 4
  call MPI_Win_allocate(bytes, unit8, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
  call c_f_pointer(base, mem, [n])
  mem = -1
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win)
  call MPI_Put(out, n, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, n, MPI_INTEGER, win)
  call MPI_Win_flush(right, win)
  call MPI_Win_flush_local(right, win)
  call MPI_Win_unlock(right, win)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_lock_all(0, win)
  call MPI_Win_flush_all(win)
  call MPI_Win_flush_local_all(win)
  call MPI_Win_sync(win)
  call check('allocate large, passive', all(mem == [(2000 + 100 * left + i, i = 1, n)]))
  call MPI_Win_unlock_all(win)
  call MPI_Win_free(win)

  ! MPI_Win_allocate_shared on one rank's communicator
  call MPI_Win_allocate_shared(bytes, 4, MPI_INFO_NULL, MPI_COMM_SELF, base, win)
  call c_f_pointer(base, mem, [n])
  call MPI_Win_fence(0, win)
  mem = rank
  call MPI_Win_fence(0, win)
  call check('allocate_shared', all(mem == rank))
  call MPI_Win_free(win)

  ! MPI_Win_create_dynamic with memory attached after
  call MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win)
  buf = -1
  call MPI_Win_attach(win, buf, bytes)
  call MPI_Get_address(buf, mine)
  call MPI_Sendrecv(mine, 1, MPI_AINT, left, 9, theirs, 1, MPI_AINT, right, 9, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call MPI_Win_fence(0, win)
  call MPI_Put(out, n, MPI_INTEGER, right, theirs, n, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check('create_dynamic', all(buf == [(2000 + 100 * left + i, i = 1, n)]))
  call MPI_Win_detach(win, buf)
  call MPI_Win_free(win)

  call MPI_Group_free(origins)
  call MPI_Group_free(targets)
  call MPI_Group_free(world)
  call MPI_Reduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0)', 'rma_f08 failed ', allbad
  call MPI_Finalize()
  if (rank == 0 .and. allbad /= 0) stop 1

contains

  subroutine check(what, ok)
    character(*), intent(in) :: what
    logical, intent(in) :: ok
    if (.not. ok) then
      bad = bad + 1
      print '(a,i0,2a)', 'rank ', rank, ': failed ', what
    end if
  end subroutine check
end program rma_f08
