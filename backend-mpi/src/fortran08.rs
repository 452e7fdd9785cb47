//! MPICH's `use mpi_f08` binding, where it bypasses the C wrappers.
//!
//! MPICH 4.0's `mpi_f08` procedures that take a choice buffer (`MPI_Send`,
//! `MPI_Irecv`, `MPI_Bcast`, ...) call the C `MPI_*` functions, so they
//! reach heisen. The others call `PMPI_*` directly: completions, probes,
//! persistent starts, `MPI_Type_free`, communicator constructors,
//! barriers (`MPI_Barrier_init` too), `MPI_Init`, `MPI_Buffer_detach`, window synchronisation
//! (passive target too) and every window constructor but `MPI_Win_create`
//! and its large form. Unwrapped, a program using `mpi_f08` saw the
//! record's bytes in every status of a nonblocking receive or a probe
//! (`MPI_Get_count` gave 63 for 3 integers), its requests were never
//! completed through heisen (merges lost, R4/R5; the request table kept
//! their entries), and a freed datatype's cached wire types stayed in use
//! for the next type given the same handle.
//!
//! Each wrapper here is the binding's own conversion (for a default
//! `INTEGER` as wide as a C `int`, which is how MPICH is built here)
//! followed by heisen's C wrapper: a handle's `MPI_VAL` is the C handle,
//! `TYPE(MPI_Status)` is `bind(C)` with the C status's layout, the
//! Fortran `MPI_STATUS_IGNORE` and `MPI_STATUSES_IGNORE` are objects of
//! their own (`MPIR_F08_MPI_STATUS(ES)_IGNORE_OBJ`) that become the C
//! constants, a `LOGICAL` is 0 or 1, indices are 1-based, and the optional
//! `ierror` is a null pointer when absent. The symbols are those of
//! MPICH's `libmpichfort` (`mpi_wait_f08_`, ...); under another MPI they
//! are never called.

use core::ffi::c_int;
use std::sync::OnceLock;

use crate::sys::{
    self, MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Group, MPI_Info, MPI_Message, MPI_Request,
    MPI_Status, MPI_Win,
};

// A Fortran handle (`MPI_VAL`) is the C handle itself in MPICH.
const _: () = assert!(core::mem::size_of::<MPI_Comm>() == core::mem::size_of::<c_int>());
const _: () = assert!(core::mem::size_of::<MPI_Request>() == core::mem::size_of::<c_int>());
const _: () = assert!(core::mem::size_of::<MPI_Message>() == core::mem::size_of::<c_int>());
const _: () = assert!(core::mem::size_of::<MPI_Win>() == core::mem::size_of::<c_int>());

/// Addresses of the Fortran `MPI_STATUS_IGNORE` and `MPI_STATUSES_IGNORE`
/// objects (0 where the MPI has none).
fn ignore_objects() -> (usize, usize) {
    static OBJECTS: OnceLock<(usize, usize)> = OnceLock::new();
    *OBJECTS.get_or_init(|| {
        // SAFETY: dlsym with NUL-terminated names; only the addresses are kept.
        unsafe {
            (
                libc::dlsym(
                    libc::RTLD_DEFAULT,
                    c"MPIR_F08_MPI_STATUS_IGNORE_OBJ".as_ptr(),
                ) as usize,
                libc::dlsym(
                    libc::RTLD_DEFAULT,
                    c"MPIR_F08_MPI_STATUSES_IGNORE_OBJ".as_ptr(),
                ) as usize,
            )
        }
    })
}

/// A Fortran status argument as C sees it.
fn status(st: *mut MPI_Status) -> *mut MPI_Status {
    match ignore_objects().0 {
        0 => st,
        ignore if st as usize == ignore => sys::status_ignore(),
        _ => st,
    }
}

/// A Fortran array of statuses as C sees it.
fn statuses(st: *mut MPI_Status) -> *mut MPI_Status {
    match ignore_objects().1 {
        0 => st,
        ignore if st as usize == ignore => sys::statuses_ignore(),
        _ => st,
    }
}

/// Reads an `INTENT(IN)` argument (Fortran passes everything by reference).
///
/// # Safety
/// `p` is the caller's argument.
unsafe fn val<T: Copy>(p: *const T) -> T {
    // SAFETY: the caller's argument, never null for a non-optional dummy.
    unsafe { *p }
}

/// Writes the optional `ierror` and a `LOGICAL` out-argument.
///
/// # Safety
/// `ierror` and `flag` are the caller's, or null.
unsafe fn finish(ierror: *mut c_int, rc: c_int, flag: Option<(*mut c_int, c_int)>) {
    if let Some((f, c)) = flag
        && !f.is_null()
        && rc == sys::success()
    {
        // SAFETY: the caller's LOGICAL; gfortran's .TRUE. is 1.
        unsafe { *f = c_int::from(c != 0) };
    }
    if !ierror.is_null() {
        // SAFETY: the caller's optional INTEGER.
        unsafe { *ierror = rc };
    }
}

/// How a binding hands a C index (0-based, or `MPI_UNDEFINED`) to
/// Fortran. The standard says 1-based; MPICH 4.0's generated `mpi_f08`
/// bindings give the C index unchanged (fixed in 4.1, pmodels/mpich#6270),
/// and some later ones add 1 to `MPI_UNDEFINED` too (#6989). A program must
/// see what its MPI gives it, so each binding's convention is learned
/// once by calling it ([`learn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Indices {
    /// Added to a real index.
    offset: c_int,
    /// What `MPI_UNDEFINED` becomes.
    undefined: c_int,
}

impl Indices {
    /// The standard's convention.
    fn standard() -> Indices {
        Indices {
            offset: 1,
            undefined: sys::undefined(),
        }
    }

    fn index(self, i: c_int) -> c_int {
        if i == sys::undefined() {
            self.undefined
        } else {
            i + self.offset
        }
    }
}

/// The four procedures that return indices.
#[derive(Clone, Copy)]
enum Family {
    Waitany,
    Testany,
    Waitsome,
    Testsome,
}

/// The index convention of `family`'s binding (the standard's when the
/// process has none after heisen).
fn indices(family: Family) -> Indices {
    static LEARNT: [OnceLock<Indices>; 4] = [const { OnceLock::new() }; 4];
    *LEARNT[family as usize].get_or_init(|| learn(family).unwrap_or_else(Indices::standard))
}

/// Calls the MPI's own binding of `family` on a send to `MPI_PROC_NULL`
/// (complete at once, made with `PMPI_Isend` so heisen has no entry for
/// it), and for the `any` forms on a null request, and reads what it gave.
fn learn(family: Family) -> Option<Indices> {
    type Any = unsafe extern "C" fn(
        *const c_int,
        *mut MPI_Request,
        *mut c_int,
        *mut MPI_Status,
        *mut c_int,
    );
    type AnyTest = unsafe extern "C" fn(
        *const c_int,
        *mut MPI_Request,
        *mut c_int,
        *mut c_int,
        *mut MPI_Status,
        *mut c_int,
    );
    type SomeFn = unsafe extern "C" fn(
        *const c_int,
        *mut MPI_Request,
        *mut c_int,
        *mut c_int,
        *mut MPI_Status,
        *mut c_int,
    );
    let name = match family {
        Family::Waitany => c"mpi_waitany_f08_",
        Family::Testany => c"mpi_testany_f08_",
        Family::Waitsome => c"mpi_waitsome_f08_",
        Family::Testsome => c"mpi_testsome_f08_",
    };
    // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name.
    let next = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    if next.is_null() {
        return None;
    }
    // One call of the binding on `request` (null or a finished send):
    // the index it reports.
    let call = |mut request: MPI_Request| -> Option<c_int> {
        let (one, mut idx, mut flag, mut ierror) = (1, -7, 0, 0);
        let mut out = [-7; 1];
        let mut outcount = -7;
        // SAFETY: a zeroed status is a valid one to write into.
        let mut st: MPI_Status = unsafe { core::mem::zeroed() };
        // SAFETY: the binding's own symbol with its Fortran interface
        // (every argument by reference); all arguments are locals.
        unsafe {
            match family {
                Family::Waitany => core::mem::transmute::<*mut libc::c_void, Any>(next)(
                    &one,
                    &mut request,
                    &mut idx,
                    &mut st,
                    &mut ierror,
                ),
                Family::Testany => core::mem::transmute::<*mut libc::c_void, AnyTest>(next)(
                    &one,
                    &mut request,
                    &mut idx,
                    &mut flag,
                    &mut st,
                    &mut ierror,
                ),
                Family::Waitsome | Family::Testsome => {
                    core::mem::transmute::<*mut libc::c_void, SomeFn>(next)(
                        &one,
                        &mut request,
                        &mut outcount,
                        out.as_mut_ptr(),
                        &mut st,
                        &mut ierror,
                    );
                    idx = if outcount == 1 {
                        out[0]
                    } else {
                        sys::undefined()
                    };
                }
            }
        }
        (ierror == sys::success()).then_some(idx)
    };
    let mut send = sys::request_null();
    // SAFETY: an empty send to MPI_PROC_NULL, outside heisen's tables.
    let rc = unsafe {
        sys::PMPI_Isend(
            core::ptr::null(),
            0,
            sys::byte(),
            sys::proc_null(),
            0,
            sys::comm_world(),
            &mut send,
        )
    };
    if rc != sys::success() {
        return None;
    }
    let first = call(send);
    if send != sys::request_null() {
        // the binding did not finish it (a Test* that said not yet)
        // SAFETY: our own request.
        unsafe { sys::PMPI_Wait(&mut send, sys::status_ignore()) };
    }
    let offset = first?;
    let undefined = match family {
        Family::Waitany | Family::Testany => call(sys::request_null())?,
        Family::Waitsome | Family::Testsome => sys::undefined(),
    };
    Some(Indices { offset, undefined })
}

/// One wrapper per row: the optional `ierror` last, every argument by
/// reference; `in` arguments are read, `out` ones passed on, `status` and
/// `statuses` converted from the Fortran ignore objects; then the C
/// wrapper `crate::$module::$c`.
macro_rules! f08 {
    ($(
        $(#[$doc:meta])*
        $name:ident => $module:ident :: $c:ident ( $($arg:ident : $kind:ident $ty:ty),* $(,)? );
    )*) => {$(
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: f08!(@ty $kind $ty),)* ierror: *mut c_int) {
            // SAFETY: the caller's arguments, converted as the binding does.
            unsafe { finish(ierror, crate::$module::$c($(f08!(@arg $kind $arg)),*), None) }
        }
    )*};
    (@ty in $ty:ty) => { *const $ty };
    (@ty $other:ident $ty:ty) => { *mut $ty };
    (@arg in $a:ident) => { val($a) };
    (@arg out $a:ident) => { $a };
    (@arg status $a:ident) => { status($a) };
    (@arg statuses $a:ident) => { statuses($a) };
}

type Void = core::ffi::c_void;
type Count = sys::MPI_Count;

f08! {
    /// `MPI_Buffer_detach(buffer_addr, size)`: MPICH's binding passes the
    /// `TYPE(C_PTR)` on as C's `void **`. Unwrapped, a program got
    /// heisen's larger buffer back.
    mpi_buffer_detach_f08_ => bsend::MPI_Buffer_detach(addr: out Void, size: out c_int);
    /// `MPI_Buffer_detach` with an `INTEGER(KIND=MPI_COUNT_KIND)` size.
    mpi_buffer_detach_f08_large_ => bsend::MPI_Buffer_detach_c(addr: out Void, size: out Count);
    /// `MPI_Wait(request, status)`.
    mpi_wait_f08_ => completion::MPI_Wait(request: out MPI_Request, st: status MPI_Status);
    /// `MPI_Waitall(count, array_of_requests, array_of_statuses)`.
    mpi_waitall_f08_ => completion::MPI_Waitall(
        count: in c_int,
        requests: out MPI_Request,
        sts: statuses MPI_Status,
    );
    /// `MPI_Request_free(request)`.
    mpi_request_free_f08_ => persistent::MPI_Request_free(request: out MPI_Request);
    /// `MPI_Start(request)`.
    mpi_start_f08_ => persistent::MPI_Start(request: out MPI_Request);
    /// `MPI_Startall(count, array_of_requests)`.
    mpi_startall_f08_ => persistent::MPI_Startall(count: in c_int, requests: out MPI_Request);
    /// `MPI_Probe(source, tag, comm, status)`.
    mpi_probe_f08_ => probe::MPI_Probe(
        source: in c_int,
        tag: in c_int,
        comm: in MPI_Comm,
        st: status MPI_Status,
    );
    /// `MPI_Mprobe(source, tag, comm, message, status)`.
    mpi_mprobe_f08_ => probe::MPI_Mprobe(
        source: in c_int,
        tag: in c_int,
        comm: in MPI_Comm,
        message: out MPI_Message,
        st: status MPI_Status,
    );
    /// `MPI_Type_free(datatype)`.
    mpi_type_free_f08_ => datatype::MPI_Type_free(datatype: out MPI_Datatype);
    /// `MPI_Barrier(comm)`.
    mpi_barrier_f08_ => collective::MPI_Barrier(comm: in MPI_Comm);
    /// `MPI_Ibarrier(comm, request)`.
    mpi_ibarrier_f08_ => collective::MPI_Ibarrier(comm: in MPI_Comm, request: out MPI_Request);
    /// `MPI_Barrier_init(comm, info, request)`.
    mpi_barrier_init_f08_ => collective::MPI_Barrier_init(
        comm: in MPI_Comm,
        info: in MPI_Info,
        request: out MPI_Request,
    );
    /// `MPI_Comm_dup(comm, newcomm)`.
    mpi_comm_dup_f08_ => comm::MPI_Comm_dup(comm: in MPI_Comm, newcomm: out MPI_Comm);
    /// `MPI_Comm_dup_with_info(comm, info, newcomm)`.
    mpi_comm_dup_with_info_f08_ => comm::MPI_Comm_dup_with_info(
        comm: in MPI_Comm,
        info: in MPI_Info,
        newcomm: out MPI_Comm,
    );
    /// `MPI_Comm_idup(comm, newcomm, request)`.
    mpi_comm_idup_f08_ => comm::MPI_Comm_idup(
        comm: in MPI_Comm,
        newcomm: out MPI_Comm,
        request: out MPI_Request,
    );
    /// `MPI_Comm_split(comm, color, key, newcomm)`.
    mpi_comm_split_f08_ => comm::MPI_Comm_split(
        comm: in MPI_Comm,
        color: in c_int,
        key: in c_int,
        newcomm: out MPI_Comm,
    );
    /// `MPI_Comm_split_type(comm, split_type, key, info, newcomm)`.
    mpi_comm_split_type_f08_ => comm::MPI_Comm_split_type(
        comm: in MPI_Comm,
        split_type: in c_int,
        key: in c_int,
        info: in MPI_Info,
        newcomm: out MPI_Comm,
    );
    /// `MPI_Comm_create(comm, group, newcomm)`.
    mpi_comm_create_f08_ => comm::MPI_Comm_create(
        comm: in MPI_Comm,
        group: in MPI_Group,
        newcomm: out MPI_Comm,
    );
    /// `MPI_Comm_create_group(comm, group, tag, newcomm)`.
    mpi_comm_create_group_f08_ => comm::MPI_Comm_create_group(
        comm: in MPI_Comm,
        group: in MPI_Group,
        tag: in c_int,
        newcomm: out MPI_Comm,
    );
    /// `MPI_Comm_free(comm)`.
    mpi_comm_free_f08_ => comm::MPI_Comm_free(comm: out MPI_Comm);
    /// `MPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm)`.
    mpi_intercomm_create_f08_ => comm::MPI_Intercomm_create(
        local_comm: in MPI_Comm,
        local_leader: in c_int,
        peer_comm: in MPI_Comm,
        remote_leader: in c_int,
        tag: in c_int,
        newintercomm: out MPI_Comm,
    );
    /// `MPI_Win_allocate(size, disp_unit, info, comm, baseptr, win)`:
    /// `baseptr` is the caller's `TYPE(C_PTR)`, C's `void **`.
    mpi_win_allocate_f08_ => window::MPI_Win_allocate(
        size: in MPI_Aint,
        disp_unit: in c_int,
        info: in MPI_Info,
        comm: in MPI_Comm,
        baseptr: out Void,
        win: out MPI_Win,
    );
    /// `MPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win)`.
    mpi_win_allocate_shared_f08_ => window::MPI_Win_allocate_shared(
        size: in MPI_Aint,
        disp_unit: in c_int,
        info: in MPI_Info,
        comm: in MPI_Comm,
        baseptr: out Void,
        win: out MPI_Win,
    );
    /// `MPI_Win_create_dynamic(info, comm, win)`.
    mpi_win_create_dynamic_f08_ => window::MPI_Win_create_dynamic(
        info: in MPI_Info,
        comm: in MPI_Comm,
        win: out MPI_Win,
    );
    /// `MPI_Win_free(win)`.
    mpi_win_free_f08_ => window::MPI_Win_free(win: out MPI_Win);
    /// `MPI_Win_fence(assert, win)`.
    mpi_win_fence_f08_ => window::MPI_Win_fence(assert: in c_int, win: in MPI_Win);
    /// `MPI_Win_post(group, assert, win)`.
    mpi_win_post_f08_ => window::MPI_Win_post(
        group: in MPI_Group,
        assert: in c_int,
        win: in MPI_Win,
    );
    /// `MPI_Win_start(group, assert, win)`.
    mpi_win_start_f08_ => window::MPI_Win_start(
        group: in MPI_Group,
        assert: in c_int,
        win: in MPI_Win,
    );
    /// `MPI_Win_complete(win)`.
    mpi_win_complete_f08_ => window::MPI_Win_complete(win: in MPI_Win);
    /// `MPI_Win_wait(win)`.
    mpi_win_wait_f08_ => window::MPI_Win_wait(win: in MPI_Win);
    /// `MPI_Win_allocate` with `INTEGER(KIND=MPI_ADDRESS_KIND)` size and
    /// displacement unit (MPICH calls `PMPI_Win_allocate_c`).
    mpi_win_allocate_f08_large_ => window::MPI_Win_allocate_c(
        size: in MPI_Aint,
        disp_unit: in MPI_Aint,
        info: in MPI_Info,
        comm: in MPI_Comm,
        baseptr: out Void,
        win: out MPI_Win,
    );
    /// `MPI_Win_allocate_shared`, large form.
    mpi_win_allocate_shared_f08_large_ => window::MPI_Win_allocate_shared_c(
        size: in MPI_Aint,
        disp_unit: in MPI_Aint,
        info: in MPI_Info,
        comm: in MPI_Comm,
        baseptr: out Void,
        win: out MPI_Win,
    );
    /// `MPI_Win_lock(lock_type, rank, assert, win)`.
    mpi_win_lock_f08_ => window::MPI_Win_lock(
        lock_type: in c_int,
        rank: in c_int,
        assert: in c_int,
        win: in MPI_Win,
    );
    /// `MPI_Win_unlock(rank, win)`.
    mpi_win_unlock_f08_ => window::MPI_Win_unlock(rank: in c_int, win: in MPI_Win);
    /// `MPI_Win_lock_all(assert, win)`.
    mpi_win_lock_all_f08_ => window::MPI_Win_lock_all(assert: in c_int, win: in MPI_Win);
    /// `MPI_Win_unlock_all(win)`.
    mpi_win_unlock_all_f08_ => window::MPI_Win_unlock_all(win: in MPI_Win);
    /// `MPI_Win_flush(rank, win)`.
    mpi_win_flush_f08_ => window::MPI_Win_flush(rank: in c_int, win: in MPI_Win);
    /// `MPI_Win_flush_all(win)`.
    mpi_win_flush_all_f08_ => window::MPI_Win_flush_all(win: in MPI_Win);
    /// `MPI_Win_flush_local(rank, win)`.
    mpi_win_flush_local_f08_ => window::MPI_Win_flush_local(rank: in c_int, win: in MPI_Win);
    /// `MPI_Win_flush_local_all(win)`.
    mpi_win_flush_local_all_f08_ => window::MPI_Win_flush_local_all(win: in MPI_Win);
    /// `MPI_Win_sync(win)`.
    mpi_win_sync_f08_ => window::MPI_Win_sync(win: in MPI_Win);
}

/// `mpi_f08` `MPI_Win_test(win, flag, ierror)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_win_test_f08_(
    win: *const MPI_Win,
    flag: *mut c_int,
    ierror: *mut c_int,
) {
    let mut f = 0;
    // SAFETY: the caller's arguments, converted as the binding does.
    unsafe {
        let rc = crate::window::MPI_Win_test(val(win), &mut f);
        finish(ierror, rc, Some((flag, f)));
    }
}

/// `mpi_f08` `MPI_Init(ierror)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_init_f08_(ierror: *mut c_int) {
    // SAFETY: no command line, as the binding passes none.
    let rc = unsafe { crate::setup::MPI_Init(core::ptr::null_mut(), core::ptr::null_mut()) };
    // SAFETY: the caller's optional argument.
    unsafe { finish(ierror, rc, None) }
}

/// `mpi_f08` `MPI_Init_thread(required, provided, ierror)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_init_thread_f08_(
    required: *const c_int,
    provided: *mut c_int,
    ierror: *mut c_int,
) {
    // SAFETY: the caller's arguments; no command line.
    let rc = unsafe {
        crate::setup::MPI_Init_thread(
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            val(required),
            provided,
        )
    };
    // SAFETY: as above.
    unsafe { finish(ierror, rc, None) }
}

/// `mpi_f08` `MPI_Pcontrol(level)` (no `ierror`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_pcontrol_f08_(level: *const c_int) {
    // SAFETY: the caller's argument.
    unsafe { crate::pcontrol::MPI_Pcontrol(val(level)) };
}

/// `mpi_f08` `MPI_Test(request, flag, status, ierror)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_test_f08_(
    request: *mut MPI_Request,
    flag: *mut c_int,
    st: *mut MPI_Status,
    ierror: *mut c_int,
) {
    let mut f = 0;
    // SAFETY: as above.
    unsafe {
        let rc = crate::completion::MPI_Test(request, &mut f, status(st));
        finish(ierror, rc, Some((flag, f)));
    }
}

/// `mpi_f08` `MPI_Testall(count, array_of_requests, flag, array_of_statuses, ierror)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_testall_f08_(
    count: *const c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    sts: *mut MPI_Status,
    ierror: *mut c_int,
) {
    let mut f = 0;
    // SAFETY: as above.
    unsafe {
        let rc = crate::completion::MPI_Testall(val(count), requests, &mut f, statuses(sts));
        finish(ierror, rc, Some((flag, f)));
    }
}

/// `mpi_f08` `MPI_Waitany(count, array_of_requests, index, status, ierror)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_waitany_f08_(
    count: *const c_int,
    requests: *mut MPI_Request,
    idx: *mut c_int,
    st: *mut MPI_Status,
    ierror: *mut c_int,
) {
    let mut i = sys::undefined();
    // SAFETY: as above.
    unsafe {
        let rc = crate::completion::MPI_Waitany(val(count), requests, &mut i, status(st));
        if rc == sys::success() {
            *idx = indices(Family::Waitany).index(i);
        }
        finish(ierror, rc, None);
    }
}

/// `mpi_f08` `MPI_Testany(count, array_of_requests, index, flag, status, ierror)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_testany_f08_(
    count: *const c_int,
    requests: *mut MPI_Request,
    idx: *mut c_int,
    flag: *mut c_int,
    st: *mut MPI_Status,
    ierror: *mut c_int,
) {
    let (mut i, mut f) = (sys::undefined(), 0);
    // SAFETY: as above.
    unsafe {
        let rc = crate::completion::MPI_Testany(val(count), requests, &mut i, &mut f, status(st));
        if rc == sys::success() {
            *idx = indices(Family::Testany).index(i);
        }
        finish(ierror, rc, Some((flag, f)));
    }
}

/// The body of `MPI_Waitsome` and `MPI_Testsome`: indices made 1-based.
///
/// # Safety
/// The caller's arguments.
unsafe fn some(
    family: Family,
    call: unsafe extern "C" fn(
        c_int,
        *mut MPI_Request,
        *mut c_int,
        *mut c_int,
        *mut MPI_Status,
    ) -> c_int,
    count: *const c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    out: *mut c_int,
    sts: *mut MPI_Status,
    ierror: *mut c_int,
) {
    // SAFETY: the caller's arguments; `out` holds `count` entries.
    unsafe {
        let rc = call(val(count), requests, outcount, out, statuses(sts));
        if rc == sys::success() && *outcount != sys::undefined() {
            let convention = indices(family);
            for k in 0..usize::try_from(*outcount).unwrap_or(0) {
                *out.add(k) = convention.index(*out.add(k));
            }
        }
        finish(ierror, rc, None);
    }
}

/// `mpi_f08` `MPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, ierror)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_waitsome_f08_(
    count: *const c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut MPI_Status,
    ierror: *mut c_int,
) {
    // SAFETY: the caller's arguments.
    unsafe {
        some(
            Family::Waitsome,
            crate::completion::MPI_Waitsome,
            count,
            requests,
            outcount,
            indices,
            sts,
            ierror,
        )
    }
}

/// `mpi_f08` `MPI_Testsome` (arguments as `MPI_Waitsome`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_testsome_f08_(
    count: *const c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut MPI_Status,
    ierror: *mut c_int,
) {
    // SAFETY: the caller's arguments.
    unsafe {
        some(
            Family::Testsome,
            crate::completion::MPI_Testsome,
            count,
            requests,
            outcount,
            indices,
            sts,
            ierror,
        )
    }
}

/// `mpi_f08` `MPI_Request_get_status(request, flag, status, ierror)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_request_get_status_f08_(
    request: *const MPI_Request,
    flag: *mut c_int,
    st: *mut MPI_Status,
    ierror: *mut c_int,
) {
    let mut f = 0;
    // SAFETY: the caller's arguments.
    unsafe {
        let rc = crate::persistent::MPI_Request_get_status(val(request), &mut f, status(st));
        finish(ierror, rc, Some((flag, f)));
    }
}

/// `mpi_f08` `MPI_Iprobe(source, tag, comm, flag, status, ierror)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_iprobe_f08_(
    source: *const c_int,
    tag: *const c_int,
    comm: *const MPI_Comm,
    flag: *mut c_int,
    st: *mut MPI_Status,
    ierror: *mut c_int,
) {
    let mut f = 0;
    // SAFETY: the caller's arguments.
    unsafe {
        let rc = crate::probe::MPI_Iprobe(val(source), val(tag), val(comm), &mut f, status(st));
        finish(ierror, rc, Some((flag, f)));
    }
}

/// `mpi_f08` `MPI_Improbe(source, tag, comm, flag, message, status, ierror)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_improbe_f08_(
    source: *const c_int,
    tag: *const c_int,
    comm: *const MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    st: *mut MPI_Status,
    ierror: *mut c_int,
) {
    let mut f = 0;
    // SAFETY: the caller's arguments.
    unsafe {
        let rc = crate::probe::MPI_Improbe(
            val(source),
            val(tag),
            val(comm),
            &mut f,
            message,
            status(st),
        );
        finish(ierror, rc, Some((flag, f)));
    }
}

/// `mpi_f08` `MPI_Intercomm_merge(intercomm, high, newintracomm, ierror)`
/// (`high` a `LOGICAL`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_intercomm_merge_f08_(
    intercomm: *const MPI_Comm,
    high: *const c_int,
    newintracomm: *mut MPI_Comm,
    ierror: *mut c_int,
) {
    // SAFETY: the caller's arguments.
    unsafe {
        let high = c_int::from(val(high) != 0);
        let rc = crate::comm::MPI_Intercomm_merge(val(intercomm), high, newintracomm);
        finish(ierror, rc, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_convention_is_one_based_and_keeps_undefined() {
        let s = Indices::standard();
        assert_eq!(s.index(0), 1);
        assert_eq!(s.index(6), 7);
        assert_eq!(s.index(sys::undefined()), sys::undefined());
        // MPICH 4.0's: unchanged
        let raw = Indices {
            offset: 0,
            undefined: sys::undefined(),
        };
        assert_eq!((raw.index(0), raw.index(6)), (0, 6));
    }

    #[test]
    fn flags_and_ierror_are_written_only_where_given() {
        let (mut ierror, mut flag) = (-5, -5);
        // SAFETY: local variables.
        unsafe { finish(&mut ierror, sys::success(), Some((&mut flag, 7))) };
        assert_eq!((ierror, flag), (sys::success(), 1));
        // an absent ierror, a failed call: the flag is left alone
        let mut flag = -5;
        // SAFETY: as above.
        unsafe { finish(core::ptr::null_mut(), 3, Some((&mut flag, 1))) };
        assert_eq!(flag, -5);
    }
}
