//! The buffer of buffered sends (MPI-4.0 §3.6): every message is a record
//! longer with heisen, so a program that attached exactly what its
//! `MPI_Bsend`s need would run out of space. `MPI_Buffer_attach` attaches
//! a larger buffer of heisen's instead — room for one more record per
//! message the program's buffer can hold (each message takes at least
//! `MPI_BSEND_OVERHEAD` bytes) — and `MPI_Buffer_detach` gives the
//! program back its own pointer and size.

use core::ffi::{c_int, c_void};
use std::sync::Mutex;

use crate::piggyback::LEN;
use crate::setup::ensure;
use crate::sys;

/// The attached buffer: the program's, and heisen's larger one.
struct Attached {
    user: usize,
    user_size: c_int,
    ours: Vec<u8>,
}

static ATTACHED: Mutex<Option<Attached>> = Mutex::new(None);

/// `MPI_Buffer_attach`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
    let extra = (size.max(0) as usize / sys::bsend_overhead().max(1) as usize + 1) * LEN;
    let total = size.max(0) as usize + extra;
    if ensure().is_none() || size < 0 || total > c_int::MAX as usize {
        // SAFETY: the program's arguments, unchanged.
        return unsafe { sys::PMPI_Buffer_attach(buffer, size) };
    }
    let mut attached = ATTACHED.lock().unwrap_or_else(|p| p.into_inner());
    let mut ours = vec![0u8; total];
    // SAFETY: heisen's buffer lives in ATTACHED until it is detached.
    let rc = unsafe { sys::PMPI_Buffer_attach(ours.as_mut_ptr().cast(), total as c_int) };
    if rc == sys::success() {
        *attached = Some(Attached {
            user: buffer as usize,
            user_size: size,
            ours,
        });
    }
    rc
}

/// `MPI_Buffer_detach` (`buffer_addr` is a `void **`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    let mut attached = ATTACHED.lock().unwrap_or_else(|p| p.into_inner());
    let mut address: *mut c_void = core::ptr::null_mut();
    let mut got: c_int = 0;
    // SAFETY: writes the detached buffer's address and size.
    let rc = unsafe { sys::PMPI_Buffer_detach((&raw mut address).cast(), &mut got) };
    let ours = attached
        .as_ref()
        .is_some_and(|a| core::ptr::eq(a.ours.as_ptr().cast::<c_void>(), address));
    let (user, user_size) = match attached.take() {
        Some(a) if ours && rc == sys::success() => (a.user as *mut c_void, a.user_size),
        other => {
            *attached = other;
            (address, got)
        }
    };
    // SAFETY: the program's out-parameters.
    unsafe {
        if !buffer_addr.is_null() {
            *buffer_addr.cast::<*mut c_void>() = user;
        }
        if !size.is_null() {
            *size = user_size;
        }
    }
    rc
}
