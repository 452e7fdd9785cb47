! gfortran's OpenMP under the interposer: the same libgomp entry points
! as C (GOMP_parallel, GOMP_loop_end, GOMP_barrier, GOMP_critical_*), and
! gfortran's own omp_*_lock_ wrappers; results as without heisen.
program openmp_locks
  use omp_lib
  implicit none
  integer :: i, n, tested
  integer(kind=omp_lock_kind) :: l
  real(8) :: s
  s = 0
  n = 0
  tested = 0
  call omp_init_lock(l)
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
  if (omp_test_lock(l)) then
    !$omp atomic
    tested = tested + 1
    call omp_unset_lock(l)
  end if
  !$omp end parallel
  call omp_destroy_lock(l)
  print '(f12.1, 1x, i0, 1x, l1)', s, n, tested > 0
end program
