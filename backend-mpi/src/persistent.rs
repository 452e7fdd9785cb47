//! The life of a request besides its completion (MPI-4.0 §3.7.3, §3.9):
//! `MPI_Start` and `MPI_Startall` take a persistent send's record (R3)
//! and start a persistent collective's own exchange;
//! `MPI_Request_free` keeps an active request heisen still has to see
//! complete (its record memory must outlive the transfer); and
//! `MPI_Request_get_status` fixes the status it shows without completing.

use core::ffi::c_int;

use crate::nonblocking::restart_send;
use crate::requests::{Kind, table};
use crate::setup::ensure;
use crate::status;
use crate::sys::{self, MPI_Request, MPI_Status};

/// Takes the records of the persistent sends among `requests`; whether
/// one of them has a completion of its own (a persistent collective),
/// which [`after_start`] tells of the start.
fn before_start(requests: &[MPI_Request]) -> bool {
    let Some(m) = ensure() else { return false };
    let mut hooks = false;
    for &r in requests {
        if let Some(t) = table().take(r) {
            match t.entry.kind {
                Kind::Send if t.entry.persistent => restart_send(m, t.index),
                Kind::Hook(_) => hooks = true,
                _ => {}
            }
            table().put_back(r, t);
        }
    }
    hooks
}

/// Tells the persistent collectives among `requests` that the program
/// started them: each starts its own exchange after the program's
/// operation, in the program's order (R6; `collective_init`).
fn after_start(requests: &[MPI_Request]) {
    for &r in requests {
        if let Some(mut t) = table().take(r) {
            if let Kind::Hook(hook) = &mut t.entry.kind {
                hook.started();
            }
            table().put_back(r, t);
        }
    }
}

/// `MPI_Start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Start(request: *mut MPI_Request) -> c_int {
    if request.is_null() {
        // SAFETY: the program's argument, unchanged (the MPI reports it).
        return unsafe { sys::PMPI_Start(request) };
    }
    // SAFETY: the program's request.
    let handle = [unsafe { *request }];
    let hooks = before_start(&handle);
    // SAFETY: the program's argument, unchanged.
    let rc = unsafe { sys::PMPI_Start(request) };
    if hooks && rc == sys::success() {
        after_start(&handle);
    }
    rc
}

/// `MPI_Startall`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Startall(count: c_int, array: *mut MPI_Request) -> c_int {
    if array.is_null() || count <= 0 {
        // SAFETY: the program's arguments, unchanged.
        return unsafe { sys::PMPI_Startall(count, array) };
    }
    // SAFETY (both slices): the MPI call's contract, `count` valid
    // handles; each slice lives only while the MPI does not run.
    let hooks = before_start(unsafe { core::slice::from_raw_parts(array, count as usize) });
    // SAFETY: the program's arguments, unchanged.
    let rc = unsafe { sys::PMPI_Startall(count, array) };
    if hooks && rc == sys::success() {
        after_start(unsafe { core::slice::from_raw_parts(array, count as usize) });
    }
    rc
}

/// `MPI_Request_free`: a request heisen tracks and that has not completed
/// is kept (and completed later, `requests`); the program's handle becomes
/// `MPI_REQUEST_NULL` as the standard says.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Request_free(request: *mut MPI_Request) -> c_int {
    if !request.is_null()
        && let Some(rc) = crate::isendrecv::free_pending(request)
    {
        return rc;
    }
    let taken = if request.is_null() || ensure().is_none() {
        None
    } else {
        // SAFETY: the program's request.
        table().take(unsafe { *request })
    };
    // A request without record memory (posted beyond the table) needs
    // nothing kept.
    let Some(taken) = taken.filter(|t| t.index != crate::requests::NO_SLOT) else {
        // SAFETY: the program's argument, unchanged.
        return unsafe { sys::PMPI_Request_free(request) };
    };
    // SAFETY: the program's request, valid (it is in the table).
    let handle = unsafe { *request };
    let mut flag: c_int = 0;
    // SAFETY: a valid request; the status is ignored.
    unsafe { sys::PMPI_Request_get_status(handle, &mut flag, sys::status_ignore()) };
    if flag != 0 {
        // Complete (or an inactive persistent request): free it now, with
        // its struct type or staging buffer.
        table().release_entry(taken.index, taken.entry);
        // SAFETY: the program's argument.
        return unsafe { sys::PMPI_Request_free(request) };
    }
    if !table().orphan(handle, taken) {
        // Too many kept: free it; its slot stays reserved (counted).
        // SAFETY: the program's argument.
        return unsafe { sys::PMPI_Request_free(request) };
    }
    // SAFETY: the program's handle variable.
    unsafe { *request = sys::request_null() };
    sys::success()
}

/// `MPI_Request_get_status`: a receive's status shows its own counts.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Request_get_status(
    request: MPI_Request,
    flag: *mut c_int,
    st: *mut MPI_Status,
) -> c_int {
    // a pending MPI_Isendrecv completes only through heisen
    crate::isendrecv::advance(&[request], false);
    // SAFETY: the program's arguments, unchanged.
    let rc = unsafe { sys::PMPI_Request_get_status(request, flag, st) };
    let shown = !flag.is_null() && unsafe { *flag } != 0;
    if shown
        && ensure().is_some()
        && !st.is_null()
        && st != sys::status_ignore()
        && let Some(t) = table().take(request)
    {
        if matches!(t.entry.kind, Kind::Recv { .. }) && !status::cancelled(st) {
            status::fix(st);
        }
        table().put_back(request, t);
    }
    rc
}
