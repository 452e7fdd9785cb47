//! The MPI as heisen sees it: mpi-sys's bindings (bindgen over the
//! installed `mpi.h`) and the handles and constants that MPICH defines as
//! macros, from `src/shim.c`.

use core::ffi::{c_int, c_void};

pub use mpi_sys::*;

unsafe extern "C" {
    static HEISEN_MPI_BYTE: MPI_Datatype;
    static HEISEN_MPI_PACKED: MPI_Datatype;
    static HEISEN_MPI_BOTTOM: *mut c_void;
    static HEISEN_MPI_IN_PLACE: *mut c_void;
    static HEISEN_MPI_SUCCESS: c_int;
    static HEISEN_MPI_ERR_TRUNCATE: c_int;
    static HEISEN_MPI_ERR_INTERN: c_int;
    static HEISEN_MPI_ERR_OTHER: c_int;
    static HEISEN_MPI_ERR_COMM: c_int;
    static HEISEN_MPI_COMBINER_NAMED: c_int;
    static HEISEN_MPI_BSEND_OVERHEAD: c_int;
    static HEISEN_MPI_UNDEFINED: c_int;
    static HEISEN_MPI_ERR_IN_STATUS: c_int;
    static HEISEN_MPI_ERR_PENDING: c_int;
}

/// `MPI_ERR_IN_STATUS`: a multiple completion's errors are in its statuses.
#[inline]
pub fn err_in_status() -> c_int {
    unsafe { HEISEN_MPI_ERR_IN_STATUS }
}

/// `MPI_ERR_COMM`: an invalid communicator.
#[inline]
pub fn err_comm() -> c_int {
    unsafe { HEISEN_MPI_ERR_COMM }
}

/// `MPI_ERR_PENDING`: that request did not complete.
#[inline]
pub fn err_pending() -> c_int {
    unsafe { HEISEN_MPI_ERR_PENDING }
}

// SAFETY (every accessor below): the shim's constants are initialised
// read-only data that never change.

/// `MPI_BYTE`.
#[inline]
pub fn byte() -> MPI_Datatype {
    unsafe { HEISEN_MPI_BYTE }
}

/// `MPI_PACKED`.
#[inline]
pub fn packed() -> MPI_Datatype {
    unsafe { HEISEN_MPI_PACKED }
}

/// `MPI_BOTTOM`.
#[inline]
pub fn bottom() -> *mut c_void {
    unsafe { HEISEN_MPI_BOTTOM }
}

/// `MPI_IN_PLACE`.
#[inline]
pub fn in_place() -> *mut c_void {
    unsafe { HEISEN_MPI_IN_PLACE }
}

/// `MPI_SUCCESS`.
#[inline]
pub fn success() -> c_int {
    unsafe { HEISEN_MPI_SUCCESS }
}

/// `MPI_ERR_TRUNCATE`.
#[inline]
pub fn err_truncate() -> c_int {
    unsafe { HEISEN_MPI_ERR_TRUNCATE }
}

/// `MPI_ERR_INTERN`: what a wrapper returns when heisen's own part failed
/// in a way that leaves the call undone.
#[inline]
pub fn err_intern() -> c_int {
    unsafe { HEISEN_MPI_ERR_INTERN }
}

/// `MPI_ERR_OTHER`.
#[inline]
pub fn err_other() -> c_int {
    unsafe { HEISEN_MPI_ERR_OTHER }
}

/// `MPI_COMBINER_NAMED`: a predefined datatype.
#[inline]
pub fn combiner_named() -> c_int {
    unsafe { HEISEN_MPI_COMBINER_NAMED }
}

/// `MPI_BSEND_OVERHEAD`.
#[inline]
pub fn bsend_overhead() -> c_int {
    unsafe { HEISEN_MPI_BSEND_OVERHEAD }
}

/// `MPI_UNDEFINED`.
#[inline]
pub fn undefined() -> c_int {
    unsafe { HEISEN_MPI_UNDEFINED }
}

/// `MPI_PROC_NULL`.
#[inline]
pub fn proc_null() -> c_int {
    unsafe { RSMPI_PROC_NULL }
}

/// `MPI_ANY_SOURCE`.
#[inline]
pub fn any_source() -> c_int {
    unsafe { RSMPI_ANY_SOURCE }
}

/// `MPI_ANY_TAG`.
#[inline]
pub fn any_tag() -> c_int {
    unsafe { RSMPI_ANY_TAG }
}

/// `MPI_COMM_WORLD`.
#[inline]
pub fn comm_world() -> MPI_Comm {
    unsafe { RSMPI_COMM_WORLD }
}

/// `MPI_REQUEST_NULL`.
#[inline]
pub fn request_null() -> MPI_Request {
    unsafe { RSMPI_REQUEST_NULL }
}

/// `MPI_INFO_NULL`.
#[inline]
pub fn info_null() -> MPI_Info {
    unsafe { RSMPI_INFO_NULL }
}

/// `MPI_MESSAGE_NULL`.
#[inline]
pub fn message_null() -> MPI_Message {
    unsafe { RSMPI_MESSAGE_NULL }
}

/// `MPI_MESSAGE_NO_PROC`.
#[inline]
pub fn message_no_proc() -> MPI_Message {
    unsafe { RSMPI_MESSAGE_NO_PROC }
}

/// `MPI_STATUS_IGNORE`.
#[inline]
pub fn status_ignore() -> *mut MPI_Status {
    unsafe { RSMPI_STATUS_IGNORE }
}

/// `MPI_STATUSES_IGNORE`.
#[inline]
pub fn statuses_ignore() -> *mut MPI_Status {
    unsafe { RSMPI_STATUSES_IGNORE }
}

/// `MPI_THREAD_MULTIPLE`.
#[inline]
pub fn thread_multiple() -> c_int {
    unsafe { RSMPI_THREAD_MULTIPLE }
}

/// A handle's bits as a table key. Handles are `int`s on MPICH and
/// pointers on Open MPI; pointer handles are not `Send`, so tables key
/// them by their bits (notes on mpi-sys).
#[inline]
pub fn key<T: Copy>(handle: T) -> u64 {
    const { assert!(core::mem::size_of::<T>() <= 8) };
    let mut bits = [0u8; 8];
    // SAFETY: `T` is plain handle data of at most 8 bytes (checked above),
    // copied byte for byte.
    unsafe {
        core::ptr::copy_nonoverlapping(
            (&raw const handle).cast::<u8>(),
            bits.as_mut_ptr(),
            core::mem::size_of::<T>(),
        );
    }
    u64::from_ne_bytes(bits)
}

/// A zeroed status for heisen's own calls.
#[inline]
pub fn empty_status() -> MPI_Status {
    // SAFETY: MPI_Status is plain C data; all zeroes is a valid value.
    unsafe { core::mem::zeroed() }
}
