! modules.f90: a Fortran program compiled with -finstrument-functions:
! its module procedures become regions named module::procedure, a
! recursive one folding into its outermost call (002 Fig. 11).
module work
contains
  recursive function fib(n) result(r)
    integer, intent(in) :: n
    integer :: r
    if (n < 2) then
      r = n
    else
      r = fib(n - 1) + fib(n - 2)
    end if
  end function fib

  subroutine fill(a)
    real, intent(out) :: a(:)
    integer :: i
    do i = 1, size(a)
      a(i) = real(i)
    end do
  end subroutine fill
end module work

program main
  use work
  real :: a(100)
  integer :: k, s
  s = 0
  do k = 1, 20
    call fill(a)
    s = s + fib(15)
  end do
  print '(a, i0, a, i0)', 'fib ', s, ' sum ', int(sum(a))
end program main
