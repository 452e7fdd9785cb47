! coll_usempi.f90: the Fortran 90 module binding (use mpi); the program
! is coll_body.inc.
!
!   mpif90 coll_usempi.f90 -o coll_usempi && mpiexec -n 3 ./coll_usempi
program coll_usempi
  use mpi
  implicit none
  character(len=*), parameter :: binding = 'use mpi'
  include 'coll_body.inc'
end program coll_usempi
