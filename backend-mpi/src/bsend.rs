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
use crate::sys::{self, MPI_Count};

/// The attached buffer: the program's, and heisen's larger one.
struct Attached {
    user: usize,
    user_size: MPI_Count,
    ours: Vec<u8>,
}

static ATTACHED: Mutex<Option<Attached>> = Mutex::new(None);

/// Attaches heisen's larger buffer in place of the program's `size` bytes
/// at `buffer`; `pass()` attaches the program's own when heisen is not
/// set up. `int` sizes through `MPI_Buffer_attach`, larger ones through
/// `MPI_Buffer_attach_c` (MPI-4.0 §3.6.1).
fn attach(buffer: *mut c_void, size: MPI_Count, pass: impl FnOnce() -> c_int) -> c_int {
    let Ok(user) = usize::try_from(size) else {
        return pass();
    };
    let extra = (user / sys::bsend_overhead().max(1) as usize + 1) * LEN;
    let total = user + extra;
    if ensure().is_none() || MPI_Count::try_from(total).is_err() {
        return pass();
    }
    let mut attached = ATTACHED.lock().unwrap_or_else(|p| p.into_inner());
    let mut ours = vec![0u8; total];
    // SAFETY: heisen's buffer lives in ATTACHED until it is detached.
    let rc = unsafe {
        match c_int::try_from(total) {
            Ok(small) => sys::PMPI_Buffer_attach(ours.as_mut_ptr().cast(), small),
            Err(_) => sys::PMPI_Buffer_attach_c(ours.as_mut_ptr().cast(), total as MPI_Count),
        }
    };
    if rc == sys::success() {
        *attached = Some(Attached {
            user: buffer as usize,
            user_size: size,
            ours,
        });
    }
    rc
}

/// Detaches the buffer; the program gets back its own pointer and size.
fn detach(buffer_addr: *mut c_void) -> (c_int, MPI_Count) {
    let mut attached = ATTACHED.lock().unwrap_or_else(|p| p.into_inner());
    let mut address: *mut c_void = core::ptr::null_mut();
    let mut got: MPI_Count = 0;
    // SAFETY: writes the detached buffer's address and size.
    let rc = unsafe { sys::PMPI_Buffer_detach_c((&raw mut address).cast(), &mut got) };
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
    if !buffer_addr.is_null() {
        // SAFETY: the program's out-parameter (a `void **`).
        unsafe { *buffer_addr.cast::<*mut c_void>() = user };
    }
    (rc, user_size)
}

/// `MPI_Buffer_attach`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
    // SAFETY: the program's arguments, unchanged.
    attach(buffer, MPI_Count::from(size), || unsafe {
        sys::PMPI_Buffer_attach(buffer, size)
    })
}

/// `MPI_Buffer_attach_c` (MPI-4.0 §3.6.1, large count).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Buffer_attach_c(buffer: *mut c_void, size: MPI_Count) -> c_int {
    // SAFETY: the program's arguments, unchanged.
    attach(buffer, size, || unsafe {
        sys::PMPI_Buffer_attach_c(buffer, size)
    })
}

/// `MPI_Buffer_detach` (`buffer_addr` is a `void **`); a size beyond `int`
/// reads `MPI_UNDEFINED`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    let (rc, user_size) = detach(buffer_addr);
    if !size.is_null() {
        // SAFETY: the program's out-parameter.
        unsafe { *size = c_int::try_from(user_size).unwrap_or(sys::undefined()) };
    }
    rc
}

/// `MPI_Buffer_detach_c`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Buffer_detach_c(
    buffer_addr: *mut c_void,
    size: *mut MPI_Count,
) -> c_int {
    let (rc, user_size) = detach(buffer_addr);
    if !size.is_null() {
        // SAFETY: the program's out-parameter.
        unsafe { *size = user_size };
    }
    rc
}
