! regions.f90: heisen from Fortran, through the module in heisen.f90.
! Configures and starts the runtime, enters regions by id and by name with
! plain Fortran strings, packs and merges a piggyback, reads the thread's
! critical path and the name of a region, shows a result code's message,
! and writes the report.
!
!   gfortran -c heisen.f90
!   gfortran regions.f90 $(pkg-config --libs heisen) -o regions
!   ./regions [output directory]
program regions
  use heisen
  implicit none
  type(c_ptr) :: config
  type(heisen_snapshot) :: snapshot
  type(heisen_merge_result) :: merged
  type(heisen_calibration) :: calibration
  integer(c_int32_t) :: solve, code
  integer(c_int8_t) :: record(HEISEN_PIGGYBACK_BYTES)
  integer(c_size_t) :: written
  integer(c_int64_t) :: begin
  character(len=4096) :: dir, path
  character(len=64) :: name
  integer :: step
  real(c_double) :: x

  call check(heisen_config_new(config), 'config')
  if (command_argument_count() > 0) then
    call get_command_argument(1, dir)
    call check(heisen_config_set_output(config, dir), 'output')
  end if
  call check(heisen_config_select(config, 'solve'), 'select')
  call check(heisen_init(config), 'init')
  call heisen_config_free(config)
  call check(heisen_report_set_name('regions_f90.json'), 'report name')

  ! Trailing blanks are not part of the name.
  call check(heisen_region_register('solve      ', solve), 'register')
  x = 0
  do step = 1, 50
    call check(heisen_region_enter(solve), 'enter')
    x = x + work(20000)
    call check(heisen_region_exit(solve), 'exit')
  end do
  call check(heisen_region_enter_name('io'), 'enter io')
  x = x + work(5000)
  call check(heisen_region_exit_name('io'), 'exit io')

  ! A piggyback through the program's own buffer (here to itself).
  call check(heisen_piggyback_pack(record, HEISEN_PIGGYBACK_BYTES, written), 'pack')
  begin = heisen_merge_begin()
  call check(heisen_piggyback_merge(begin, record, written, 0_c_int64_t, 0_c_int64_t, &
                                    0_c_int32_t, merged), 'merge')

  call check(heisen_snapshot_thread(snapshot), 'snapshot')
  call check(heisen_region_name(solve, name), 'region name')
  call check(heisen_calibration_get(calibration), 'calibration')
  print '(a, i0, a, a, a)', 'region ', solve, ' is called "', trim(name), '"'
  print '(a, l1)', 'solve on the critical path: ', &
    snapshot%inclusive(1) > 0 .and. snapshot%longest >= snapshot%inclusive(1)
  ! Packed before the merge began: the merge did not wait (R5, w = 0).
  print '(a, l1)', 'merge did not wait: ', merged%wait == 0
  print '(a, l1)', 'calibrated: ', calibration%enter%whole > 0

  code = heisen_region_exit(12345_c_int32_t)
  print '(a, i0, a, a)', 'exit of region 12345: ', code, ' ', heisen_message(code)

  call check(heisen_report_path(path), 'report path')
  call check(heisen_finalize(), 'finalize')
  print '(a, a)', 'report: ', trim(path)
  if (x < 0) print *, x

contains

  subroutine check(code, what)
    integer(c_int32_t), intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= HEISEN_RESULT_OK) then
      print '(a, a, a)', what, ': ', heisen_message(code)
      error stop 1
    end if
  end subroutine check

  function work(n) result(s)
    integer, intent(in) :: n
    real(c_double) :: s
    integer :: i
    s = 0
    do i = 1, n
      s = s + sqrt(real(i, c_double))
    end do
  end function work
end program regions
