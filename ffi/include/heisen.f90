! heisen.f90: the Fortran 2003 module of heisen's C API (include/heisen.h).
!
! Every C function has an ISO_C_BINDING interface here. Functions that
! take or give strings have a Fortran-friendly wrapper under the C name
! (heisen_region_register, heisen_config_select, ...): it takes a plain
! Fortran string, trims its trailing blanks and adds the NUL itself, or
! fills a Fortran string (blank-padded) from a C one; the raw binding is
! then called <name>_c. Result codes are integer(c_int32_t) values of the
! HEISEN_RESULT_* parameters; heisen_message(code) says what one means.
! Unsigned C values (region ids, times in ns, sizes) are held in signed
! integers of the same width: every value heisen gives fits.
!
!   gfortran -c heisen.f90            (or: -I$(pkg-config --variable=fmoddir heisen))
!   gfortran prog.f90 $(pkg-config --libs heisen)
!
! tests/examples.rs checks that every function of heisen.h has its
! interface here.
module heisen
  use, intrinsic :: iso_c_binding
  implicit none

  ! ----- constants (heisen.h) -----------------------------------------------
  integer, parameter :: HEISEN_VERSION_MAJOR = 0
  integer, parameter :: HEISEN_VERSION_MINOR = 1
  integer, parameter :: HEISEN_VERSION_PATCH = 0
  integer, parameter :: HEISEN_SELECTED = 8
  ! HEISEN_PIGGYBACK_SIZE in C: Fortran names ignore case, and
  ! heisen_piggyback_size() is the function.
  integer(c_size_t), parameter :: HEISEN_PIGGYBACK_BYTES = 240
  ! 0xFFFFFFFF as a signed 32-bit value.
  integer(c_int32_t), parameter :: HEISEN_NO_REGION = -1
  integer, parameter :: HEISEN_MAX_NAME_LEN = 4096
  integer(c_int32_t), parameter :: HEISEN_MERGE_DELAY_ONLY = 1

  integer(c_int32_t), parameter :: HEISEN_RESULT_OK = 0
  integer(c_int32_t), parameter :: HEISEN_RESULT_NULL_ARGUMENT = 1
  integer(c_int32_t), parameter :: HEISEN_RESULT_INVALID_ARGUMENT = 2
  integer(c_int32_t), parameter :: HEISEN_RESULT_NOT_UTF8 = 3
  integer(c_int32_t), parameter :: HEISEN_RESULT_BUFFER_TOO_SHORT = 4
  integer(c_int32_t), parameter :: HEISEN_RESULT_IO = 5
  integer(c_int32_t), parameter :: HEISEN_RESULT_PANIC = 6
  integer(c_int32_t), parameter :: HEISEN_RESULT_ALREADY_RUNNING = 100
  integer(c_int32_t), parameter :: HEISEN_RESULT_FINALIZED = 101
  integer(c_int32_t), parameter :: HEISEN_RESULT_DISABLED = 102
  integer(c_int32_t), parameter :: HEISEN_RESULT_NOT_MEASURED = 103
  integer(c_int32_t), parameter :: HEISEN_RESULT_THREAD_STARTED = 104
  integer(c_int32_t), parameter :: HEISEN_RESULT_NAME_EMPTY = 200
  integer(c_int32_t), parameter :: HEISEN_RESULT_NAME_TOO_LONG = 201
  integer(c_int32_t), parameter :: HEISEN_RESULT_NAME_TABLE_FULL = 202
  integer(c_int32_t), parameter :: HEISEN_RESULT_UNKNOWN_REGION = 203
  integer(c_int32_t), parameter :: HEISEN_RESULT_EXIT_WITHOUT_ENTER = 204
  integer(c_int32_t), parameter :: HEISEN_RESULT_EXIT_MISMATCH = 205
  integer(c_int32_t), parameter :: HEISEN_RESULT_TOO_MANY_SELECTED = 206
  integer(c_int32_t), parameter :: HEISEN_RESULT_UNKNOWN_ACTION = 207
  integer(c_int32_t), parameter :: HEISEN_RESULT_PIGGYBACK_SHORT = 300
  integer(c_int32_t), parameter :: HEISEN_RESULT_PIGGYBACK_FOREIGN = 301
  integer(c_int32_t), parameter :: HEISEN_RESULT_PIGGYBACK_VERSION = 302
  integer(c_int32_t), parameter :: HEISEN_RESULT_PIGGYBACK_WRONG_K = 303
  integer(c_int32_t), parameter :: HEISEN_RESULT_WOULD_BLOCK = 400
  integer(c_int32_t), parameter :: HEISEN_RESULT_QUEUE_CLOSED = 401
  integer(c_int32_t), parameter :: HEISEN_RESULT_NOT_OWNER = 402

  integer(c_int32_t), parameter :: HEISEN_FORM_DELAY_ONLY = 0
  integer(c_int32_t), parameter :: HEISEN_FORM_TIMESTAMPED = 1

  integer(c_int32_t), parameter :: HEISEN_CLOCK_AUTO = 0
  integer(c_int32_t), parameter :: HEISEN_CLOCK_TSC = 1
  integer(c_int32_t), parameter :: HEISEN_CLOCK_MONOTONIC = 2

  ! ----- types (heisen.h) ---------------------------------------------------
  type, bind(c) :: heisen_merge_result
    integer(c_int64_t) :: wait
    integer(c_int64_t) :: compensated_wait
    integer(c_int64_t) :: approximated_end
    integer(c_int64_t) :: lower
    integer(c_int64_t) :: upper
    integer(c_int64_t) :: transfer
    integer(c_int64_t) :: determined_by
  end type heisen_merge_result

  type, bind(c) :: heisen_dependency
    type(c_ptr) :: piggyback = c_null_ptr
    integer(c_size_t) :: len = 0
    integer(c_int64_t) :: model = 0
    integer(c_int64_t) :: copy = 0
    integer(c_int64_t) :: arrival = 0
  end type heisen_dependency

  type, bind(c) :: heisen_snapshot
    integer(c_int32_t) :: location
    logical(c_bool) :: active
    integer(c_int64_t) :: longest
    integer(c_int64_t) :: transfer
    integer(c_int32_t) :: selected(HEISEN_SELECTED)
    integer(c_int64_t) :: inclusive(HEISEN_SELECTED)
    integer(c_int64_t) :: exclusive(HEISEN_SELECTED)
    integer(c_int64_t) :: net(HEISEN_SELECTED)
  end type heisen_snapshot

  type, bind(c) :: heisen_cost
    integer(c_int64_t) :: whole
    integer(c_int64_t) :: inside
  end type heisen_cost

  type, bind(c) :: heisen_calibration
    type(heisen_cost) :: enter
    type(heisen_cost) :: exit
    type(heisen_cost) :: hook_enter
    type(heisen_cost) :: hook_exit
    integer(c_int64_t) :: pack
    integer(c_int64_t) :: merge_begin
    integer(c_int64_t) :: merge
    integer(c_int64_t) :: clock_read
  end type heisen_calibration

  ! ----- the C functions ----------------------------------------------------
  interface
    function heisen_version_c() bind(c, name='heisen_version')
      import :: c_ptr
      type(c_ptr) :: heisen_version_c
    end function heisen_version_c

    function heisen_now() bind(c, name='heisen_now')
      import :: c_int64_t
      integer(c_int64_t) :: heisen_now
    end function heisen_now

    function heisen_result_message_c(code) bind(c, name='heisen_result_message')
      import :: c_ptr, c_int32_t
      integer(c_int32_t), value :: code
      type(c_ptr) :: heisen_result_message_c
    end function heisen_result_message_c

    function heisen_config_new(config) bind(c, name='heisen_config_new')
      import :: c_ptr, c_int32_t
      type(c_ptr), intent(out) :: config
      integer(c_int32_t) :: heisen_config_new
    end function heisen_config_new

    subroutine heisen_config_free(config) bind(c, name='heisen_config_free')
      import :: c_ptr
      type(c_ptr), value :: config
    end subroutine heisen_config_free

    function heisen_config_set_output_c(config, dir) bind(c, name='heisen_config_set_output')
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: config
      character(kind=c_char), dimension(*), intent(in) :: dir
      integer(c_int32_t) :: heisen_config_set_output_c
    end function heisen_config_set_output_c

    function heisen_config_set_form(config, form) bind(c, name='heisen_config_set_form')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: config
      integer(c_int32_t), value :: form
      integer(c_int32_t) :: heisen_config_set_form
    end function heisen_config_set_form

    function heisen_config_set_clock(config, clock) bind(c, name='heisen_config_set_clock')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: config
      integer(c_int32_t), value :: clock
      integer(c_int32_t) :: heisen_config_set_clock
    end function heisen_config_set_clock

    function heisen_config_select_c(config, name) bind(c, name='heisen_config_select')
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: config
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int32_t) :: heisen_config_select_c
    end function heisen_config_select_c

    function heisen_config_set_summary(config, on) bind(c, name='heisen_config_set_summary')
      import :: c_ptr, c_bool, c_int32_t
      type(c_ptr), value :: config
      logical(c_bool), value :: on
      integer(c_int32_t) :: heisen_config_set_summary
    end function heisen_config_set_summary

    function heisen_config_set_disabled(config, off) bind(c, name='heisen_config_set_disabled')
      import :: c_ptr, c_bool, c_int32_t
      type(c_ptr), value :: config
      logical(c_bool), value :: off
      integer(c_int32_t) :: heisen_config_set_disabled
    end function heisen_config_set_disabled

    ! config: a handle from heisen_config_new, or c_null_ptr for the
    ! environment's settings.
    function heisen_init(config) bind(c, name='heisen_init')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: config
      integer(c_int32_t) :: heisen_init
    end function heisen_init

    function heisen_finalize() bind(c, name='heisen_finalize')
      import :: c_int32_t
      integer(c_int32_t) :: heisen_finalize
    end function heisen_finalize

    function heisen_report_set_name_c(name) bind(c, name='heisen_report_set_name')
      import :: c_char, c_int32_t
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int32_t) :: heisen_report_set_name_c
    end function heisen_report_set_name_c

    function heisen_report_path_c(buffer, len, out_len) bind(c, name='heisen_report_path')
      import :: c_char, c_size_t, c_int32_t
      character(kind=c_char), dimension(*), intent(inout) :: buffer
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out) :: out_len
      integer(c_int32_t) :: heisen_report_path_c
    end function heisen_report_path_c

    function heisen_piggyback_size() bind(c, name='heisen_piggyback_size')
      import :: c_size_t
      integer(c_size_t) :: heisen_piggyback_size
    end function heisen_piggyback_size

    function heisen_piggyback_pack(buffer, len, out_written) bind(c, name='heisen_piggyback_pack')
      import :: c_int8_t, c_size_t, c_int32_t
      integer(c_int8_t), dimension(*), intent(inout) :: buffer
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out) :: out_written
      integer(c_int32_t) :: heisen_piggyback_pack
    end function heisen_piggyback_pack

    function heisen_piggyback_pack_empty(buffer, len, out_written) &
        bind(c, name='heisen_piggyback_pack_empty')
      import :: c_int8_t, c_size_t, c_int32_t
      integer(c_int8_t), dimension(*), intent(inout) :: buffer
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out) :: out_written
      integer(c_int32_t) :: heisen_piggyback_pack_empty
    end function heisen_piggyback_pack_empty

    function heisen_piggyback_check(piggyback, len) bind(c, name='heisen_piggyback_check')
      import :: c_int8_t, c_size_t, c_int32_t
      integer(c_int8_t), dimension(*), intent(in) :: piggyback
      integer(c_size_t), value :: len
      integer(c_int32_t) :: heisen_piggyback_check
    end function heisen_piggyback_check

    function heisen_merge_begin() bind(c, name='heisen_merge_begin')
      import :: c_int64_t
      integer(c_int64_t) :: heisen_merge_begin
    end function heisen_merge_begin

    function heisen_piggyback_merge(begin, piggyback, len, model, copy, flags, out) &
        bind(c, name='heisen_piggyback_merge')
      import :: c_int8_t, c_int64_t, c_size_t, c_int32_t, heisen_merge_result
      integer(c_int64_t), value :: begin
      integer(c_int8_t), dimension(*), intent(in) :: piggyback
      integer(c_size_t), value :: len
      integer(c_int64_t), value :: model
      integer(c_int64_t), value :: copy
      integer(c_int32_t), value :: flags
      type(heisen_merge_result), intent(out) :: out
      integer(c_int32_t) :: heisen_piggyback_merge
    end function heisen_piggyback_merge

    function heisen_piggyback_merge_many(begin, deps, count, flags, out) &
        bind(c, name='heisen_piggyback_merge_many')
      import :: c_int64_t, c_size_t, c_int32_t, heisen_dependency, heisen_merge_result
      integer(c_int64_t), value :: begin
      type(heisen_dependency), dimension(*), intent(in) :: deps
      integer(c_size_t), value :: count
      integer(c_int32_t), value :: flags
      type(heisen_merge_result), intent(out) :: out
      integer(c_int32_t) :: heisen_piggyback_merge_many
    end function heisen_piggyback_merge_many

    ! parent: c_loc of the spawner's record, or c_null_ptr.
    function heisen_thread_start(parent, len) bind(c, name='heisen_thread_start')
      import :: c_ptr, c_size_t, c_int32_t
      type(c_ptr), value :: parent
      integer(c_size_t), value :: len
      integer(c_int32_t) :: heisen_thread_start
    end function heisen_thread_start

    ! buffer: c_loc of HEISEN_PIGGYBACK_SIZE bytes for the end record, or
    ! c_null_ptr.
    function heisen_thread_finish(buffer, len, out_written) bind(c, name='heisen_thread_finish')
      import :: c_ptr, c_size_t, c_int32_t
      type(c_ptr), value :: buffer
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out) :: out_written
      integer(c_int32_t) :: heisen_thread_finish
    end function heisen_thread_finish

    function heisen_snapshot_thread(out) bind(c, name='heisen_snapshot_thread')
      import :: c_int32_t, heisen_snapshot
      type(heisen_snapshot), intent(out) :: out
      integer(c_int32_t) :: heisen_snapshot_thread
    end function heisen_snapshot_thread

    function heisen_calibration_get(out) bind(c, name='heisen_calibration_get')
      import :: c_int32_t, heisen_calibration
      type(heisen_calibration), intent(out) :: out
      integer(c_int32_t) :: heisen_calibration_get
    end function heisen_calibration_get

    function heisen_action_cost_c(name, out) bind(c, name='heisen_action_cost')
      import :: c_char, c_int32_t, heisen_cost
      character(kind=c_char), dimension(*), intent(in) :: name
      type(heisen_cost), intent(out) :: out
      integer(c_int32_t) :: heisen_action_cost_c
    end function heisen_action_cost_c

    function heisen_region_register_c(name, out_id) bind(c, name='heisen_region_register')
      import :: c_char, c_int32_t
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int32_t), intent(out) :: out_id
      integer(c_int32_t) :: heisen_region_register_c
    end function heisen_region_register_c

    function heisen_region_enter(id) bind(c, name='heisen_region_enter')
      import :: c_int32_t
      integer(c_int32_t), value :: id
      integer(c_int32_t) :: heisen_region_enter
    end function heisen_region_enter

    function heisen_region_exit(id) bind(c, name='heisen_region_exit')
      import :: c_int32_t
      integer(c_int32_t), value :: id
      integer(c_int32_t) :: heisen_region_exit
    end function heisen_region_exit

    function heisen_region_enter_name_c(name) bind(c, name='heisen_region_enter_name')
      import :: c_char, c_int32_t
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int32_t) :: heisen_region_enter_name_c
    end function heisen_region_enter_name_c

    function heisen_region_exit_name_c(name) bind(c, name='heisen_region_exit_name')
      import :: c_char, c_int32_t
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int32_t) :: heisen_region_exit_name_c
    end function heisen_region_exit_name_c

    function heisen_region_name_c(id, buffer, len, out_len) bind(c, name='heisen_region_name')
      import :: c_char, c_size_t, c_int32_t
      integer(c_int32_t), value :: id
      character(kind=c_char), dimension(*), intent(inout) :: buffer
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out) :: out_len
      integer(c_int32_t) :: heisen_region_name_c
    end function heisen_region_name_c

    function heisen_path_start() bind(c, name='heisen_path_start')
      import :: c_int32_t
      integer(c_int32_t) :: heisen_path_start
    end function heisen_path_start

    function heisen_path_stop() bind(c, name='heisen_path_stop')
      import :: c_int32_t
      integer(c_int32_t) :: heisen_path_stop
    end function heisen_path_stop

    ! ----- synchronisation objects (handles are type(c_ptr)) -----
    function heisen_mutex_new(out) bind(c, name='heisen_mutex_new')
      import :: c_ptr, c_int32_t
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: heisen_mutex_new
    end function heisen_mutex_new

    subroutine heisen_mutex_free(mutex) bind(c, name='heisen_mutex_free')
      import :: c_ptr
      type(c_ptr), value :: mutex
    end subroutine heisen_mutex_free

    function heisen_mutex_lock(mutex) bind(c, name='heisen_mutex_lock')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: mutex
      integer(c_int32_t) :: heisen_mutex_lock
    end function heisen_mutex_lock

    function heisen_mutex_trylock(mutex) bind(c, name='heisen_mutex_trylock')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: mutex
      integer(c_int32_t) :: heisen_mutex_trylock
    end function heisen_mutex_trylock

    function heisen_mutex_unlock(mutex) bind(c, name='heisen_mutex_unlock')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: mutex
      integer(c_int32_t) :: heisen_mutex_unlock
    end function heisen_mutex_unlock

    function heisen_barrier_new(count, out) bind(c, name='heisen_barrier_new')
      import :: c_ptr, c_size_t, c_int32_t
      integer(c_size_t), value :: count
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: heisen_barrier_new
    end function heisen_barrier_new

    subroutine heisen_barrier_free(barrier) bind(c, name='heisen_barrier_free')
      import :: c_ptr
      type(c_ptr), value :: barrier
    end subroutine heisen_barrier_free

    ! out_leader: c_loc of a logical(c_bool), or c_null_ptr.
    function heisen_barrier_wait(barrier, out_leader) bind(c, name='heisen_barrier_wait')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: barrier
      type(c_ptr), value :: out_leader
      integer(c_int32_t) :: heisen_barrier_wait
    end function heisen_barrier_wait

    function heisen_condvar_new(out) bind(c, name='heisen_condvar_new')
      import :: c_ptr, c_int32_t
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: heisen_condvar_new
    end function heisen_condvar_new

    subroutine heisen_condvar_free(condvar) bind(c, name='heisen_condvar_free')
      import :: c_ptr
      type(c_ptr), value :: condvar
    end subroutine heisen_condvar_free

    function heisen_condvar_wait(condvar, mutex) bind(c, name='heisen_condvar_wait')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: condvar
      type(c_ptr), value :: mutex
      integer(c_int32_t) :: heisen_condvar_wait
    end function heisen_condvar_wait

    function heisen_condvar_notify_one(condvar) bind(c, name='heisen_condvar_notify_one')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: condvar
      integer(c_int32_t) :: heisen_condvar_notify_one
    end function heisen_condvar_notify_one

    function heisen_condvar_notify_all(condvar) bind(c, name='heisen_condvar_notify_all')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: condvar
      integer(c_int32_t) :: heisen_condvar_notify_all
    end function heisen_condvar_notify_all

    function heisen_queue_new(out) bind(c, name='heisen_queue_new')
      import :: c_ptr, c_int32_t
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: heisen_queue_new
    end function heisen_queue_new

    subroutine heisen_queue_free(queue) bind(c, name='heisen_queue_free')
      import :: c_ptr
      type(c_ptr), value :: queue
    end subroutine heisen_queue_free

    ! item: any pointer (c_loc of the program's data), carried, never read.
    function heisen_queue_push(queue, item) bind(c, name='heisen_queue_push')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: queue
      type(c_ptr), value :: item
      integer(c_int32_t) :: heisen_queue_push
    end function heisen_queue_push

    function heisen_queue_pop(queue, out_item) bind(c, name='heisen_queue_pop')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: queue
      type(c_ptr), intent(out) :: out_item
      integer(c_int32_t) :: heisen_queue_pop
    end function heisen_queue_pop

    function heisen_queue_try_pop(queue, out_item) bind(c, name='heisen_queue_try_pop')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: queue
      type(c_ptr), intent(out) :: out_item
      integer(c_int32_t) :: heisen_queue_try_pop
    end function heisen_queue_try_pop

    function heisen_queue_close(queue) bind(c, name='heisen_queue_close')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: queue
      integer(c_int32_t) :: heisen_queue_close
    end function heisen_queue_close
  end interface

  private :: from_c, to_c, copy_out

contains

  ! ----- string helpers -----------------------------------------------------

  ! A Fortran string as a C string: trailing blanks trimmed, NUL added.
  pure function to_c(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function to_c

  ! A NUL-terminated C string (a static one of heisen) as a Fortran string.
  function from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: n, i
    interface
      function c_strlen(s) bind(c, name='strlen')
        import :: c_ptr, c_size_t
        type(c_ptr), value :: s
        integer(c_size_t) :: c_strlen
      end function c_strlen
    end interface
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = c_strlen(p)
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function from_c

  ! ----- wrappers with Fortran strings ----------------------------------------

  ! The library's version, "MAJOR.MINOR.PATCH".
  function heisen_version() result(v)
    character(len=:), allocatable :: v
    v = from_c(heisen_version_c())
  end function heisen_version

  ! What result code `code` means.
  function heisen_message(code) result(m)
    integer(c_int32_t), intent(in) :: code
    character(len=:), allocatable :: m
    m = from_c(heisen_result_message_c(code))
  end function heisen_message

  function heisen_config_set_output(config, dir) result(code)
    type(c_ptr), intent(in) :: config
    character(len=*), intent(in) :: dir
    integer(c_int32_t) :: code
    code = heisen_config_set_output_c(config, to_c(dir))
  end function heisen_config_set_output

  function heisen_config_select(config, name) result(code)
    type(c_ptr), intent(in) :: config
    character(len=*), intent(in) :: name
    integer(c_int32_t) :: code
    code = heisen_config_select_c(config, to_c(name))
  end function heisen_config_select

  function heisen_report_set_name(name) result(code)
    character(len=*), intent(in) :: name
    integer(c_int32_t) :: code
    code = heisen_report_set_name_c(to_c(name))
  end function heisen_report_set_name

  ! The report's path, blank-padded into `path`; HEISEN_RESULT_BUFFER_TOO_SHORT
  ! (path unchanged) if it does not fit.
  function heisen_report_path(path) result(code)
    character(len=*), intent(inout) :: path
    integer(c_int32_t) :: code
    character(kind=c_char) :: buffer(4097)
    integer(c_size_t) :: n
    code = heisen_report_path_c(buffer, size(buffer, kind=c_size_t), n)
    if (code == HEISEN_RESULT_OK) code = copy_out(buffer, n, path)
  end function heisen_report_path

  function heisen_region_register(name, id) result(code)
    character(len=*), intent(in) :: name
    integer(c_int32_t), intent(out) :: id
    integer(c_int32_t) :: code
    code = heisen_region_register_c(to_c(name), id)
  end function heisen_region_register

  function heisen_region_enter_name(name) result(code)
    character(len=*), intent(in) :: name
    integer(c_int32_t) :: code
    code = heisen_region_enter_name_c(to_c(name))
  end function heisen_region_enter_name

  function heisen_region_exit_name(name) result(code)
    character(len=*), intent(in) :: name
    integer(c_int32_t) :: code
    code = heisen_region_exit_name_c(to_c(name))
  end function heisen_region_exit_name

  ! The name of region `id`, blank-padded into `name`;
  ! HEISEN_RESULT_BUFFER_TOO_SHORT (name unchanged) if it does not fit.
  function heisen_region_name(id, name) result(code)
    integer(c_int32_t), intent(in) :: id
    character(len=*), intent(inout) :: name
    integer(c_int32_t) :: code
    character(kind=c_char) :: buffer(HEISEN_MAX_NAME_LEN + 1)
    integer(c_size_t) :: n
    code = heisen_region_name_c(id, buffer, size(buffer, kind=c_size_t), n)
    if (code == HEISEN_RESULT_OK) code = copy_out(buffer, n, name)
  end function heisen_region_name

  function heisen_action_cost(name, cost) result(code)
    character(len=*), intent(in) :: name
    type(heisen_cost), intent(out) :: cost
    integer(c_int32_t) :: code
    code = heisen_action_cost_c(to_c(name), cost)
  end function heisen_action_cost

  ! Copies n characters of a C buffer into a blank-padded Fortran string.
  function copy_out(buffer, n, s) result(code)
    character(kind=c_char), intent(in) :: buffer(:)
    integer(c_size_t), intent(in) :: n
    character(len=*), intent(inout) :: s
    integer(c_int32_t) :: code
    integer(c_size_t) :: i
    if (n > len(s, kind=c_size_t)) then
      code = HEISEN_RESULT_BUFFER_TOO_SHORT
      return
    end if
    s = ''
    do i = 1, n
      s(i:i) = buffer(i)
    end do
    code = HEISEN_RESULT_OK
  end function copy_out
end module heisen
