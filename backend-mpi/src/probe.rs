//! Probes (MPI-4.0 §3.8): `MPI_Probe`, `MPI_Iprobe`, `MPI_Mprobe`,
//! `MPI_Improbe`. A probed message carries its record too, so the status
//! the program sees is fixed to its own count (`status::fix`). Nothing is
//! merged: the message is merged by the receive that takes it.

use core::ffi::c_int;

use crate::setup::ensure;
use crate::status;
use crate::sys::{self, MPI_Comm, MPI_Message, MPI_Status};

/// Fixes a probe's status when it found a message the program sees.
fn fixed(rc: c_int, found: bool, st: *mut MPI_Status) -> c_int {
    if rc == sys::success()
        && found
        && !st.is_null()
        && st != sys::status_ignore()
        && ensure().is_some()
    {
        status::fix(st);
    }
    rc
}

/// `MPI_Probe`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    st: *mut MPI_Status,
) -> c_int {
    // SAFETY: the program's arguments, unchanged.
    let rc = unsafe { sys::PMPI_Probe(source, tag, comm, st) };
    fixed(rc, true, st)
}

/// `MPI_Iprobe`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Iprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    st: *mut MPI_Status,
) -> c_int {
    // SAFETY: the program's arguments, unchanged.
    let rc = unsafe { sys::PMPI_Iprobe(source, tag, comm, flag, st) };
    let found = !flag.is_null() && unsafe { *flag } != 0;
    fixed(rc, found, st)
}

/// `MPI_Mprobe`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Mprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    message: *mut MPI_Message,
    st: *mut MPI_Status,
) -> c_int {
    // SAFETY: the program's arguments, unchanged.
    let rc = unsafe { sys::PMPI_Mprobe(source, tag, comm, message, st) };
    fixed(rc, true, st)
}

/// `MPI_Improbe`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Improbe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    st: *mut MPI_Status,
) -> c_int {
    // SAFETY: the program's arguments, unchanged.
    let rc = unsafe { sys::PMPI_Improbe(source, tag, comm, flag, message, st) };
    let found = !flag.is_null() && unsafe { *flag } != 0;
    fixed(rc, found, st)
}
