! gfortran's OpenMP under the interposer: the same libgomp entry points
! as C (GOMP_parallel, GOMP_loop_end, GOMP_barrier, GOMP_critical_*), and
! gfortran's own omp_*_lock_ and omp_*_nest_lock_ wrappers; results as
! without heisen.
program openmp_locks
  use omp_lib
  implicit none
  integer :: i, n, tested
  integer(kind=omp_lock_kind) :: l
  integer(kind=omp_nest_lock_kind) :: nl
  integer :: depth
  real(8) :: s
  s = 0
  n = 0
  tested = 0
  call omp_init_lock(l)
  call omp_init_nest_lock(nl)
  depth = 0
  !$omp parallel num_threads(3) reduction(+:s)
  !$omp do schedule(dynamic,7)
  do i = 1, 10000
    s = s + i
  end do
  !$omp end do
  !$omp barrier
  !$omp critical
  n = n + 1
  !$omp end critical
  call omp_set_lock(l)
  call omp_unset_lock(l)
  call omp_set_nest_lock(nl)
  call omp_set_nest_lock(nl)
  !$omp atomic
  depth = depth + omp_test_nest_lock(nl)
  call omp_unset_nest_lock(nl)
  call omp_unset_nest_lock(nl)
  call omp_unset_nest_lock(nl)
  if (omp_test_lock(l)) then
    !$omp atomic
    tested = tested + 1
    call omp_unset_lock(l)
  end if
  !$omp end parallel
  call omp_destroy_lock(l)
  call omp_destroy_nest_lock(nl)
  print '(f12.1, 1x, i0, 1x, l1, 1x, i0)', s, n, tested > 0, depth
end program
