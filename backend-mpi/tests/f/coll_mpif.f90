! coll_mpif.f90: the Fortran 77 binding (include 'mpif.h'); the program
! is coll_body.inc.
!
!   mpif90 coll_mpif.f90 -o coll_mpif && mpiexec -n 3 ./coll_mpif
program coll_mpif
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: binding = 'mpif.h'
  include 'coll_body.inc'
end program coll_mpif
