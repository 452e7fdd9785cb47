//! Statuses as the program would see them without heisen (issue item 1):
//! after a receive or a probe the MPI's status counts the record too, so
//! its element count is set back to the payload's
//! (`PMPI_Status_set_elements`); `MPI_Get_count` and `MPI_Get_elements`
//! then give the program's own counts, derived datatypes included.
//! `MPI_SOURCE`, `MPI_TAG` and `MPI_ERROR` are the MPI's, untouched: a
//! wrapper passes the program's own status to the MPI where it has one,
//! and its own where the program passed `MPI_STATUS_IGNORE`.

use core::ffi::c_int;

use crate::piggyback::LEN;
use crate::sys::{self, MPI_Status};

/// The status the MPI should write: the program's, or `scratch` when the
/// program ignores it.
#[inline]
pub fn or_scratch(user: *mut MPI_Status, scratch: &mut MPI_Status) -> *mut MPI_Status {
    if user.is_null() || user == sys::status_ignore() {
        scratch
    } else {
        user
    }
}

/// Bytes of the whole message a status describes, record included;
/// `None` when the MPI cannot say (`MPI_UNDEFINED`).
#[inline]
pub fn wire_bytes(status: *const MPI_Status) -> Option<usize> {
    let mut bytes: c_int = 0;
    // SAFETY: `status` is a status the MPI wrote; writes `bytes` only.
    let rc = unsafe { sys::PMPI_Get_count(status, sys::byte(), &mut bytes) };
    (rc == sys::success() && bytes >= 0 && bytes != sys::undefined()).then_some(bytes as usize)
}

/// Sets the status's count to the payload's (the record excluded) and
/// returns the payload's bytes; `None` (status unchanged) when the message
/// was shorter than a record, i.e. it carried none.
#[inline]
pub fn fix(status: *mut MPI_Status) -> Option<usize> {
    let bytes = wire_bytes(status)?;
    let payload = bytes.checked_sub(LEN)?;
    // SAFETY: `status` is a status the MPI wrote; the count fits an int
    // (it came from one).
    unsafe {
        sys::PMPI_Status_set_elements(status, sys::byte(), payload as c_int);
    }
    Some(payload)
}

/// Sets the status's count to `payload` bytes (the record excluded), for a
/// caller that already knows the message's length ([`fix`] without the
/// count query).
#[inline]
pub fn set_payload(status: *mut MPI_Status, payload: usize) {
    // SAFETY: `status` is a status the MPI wrote; the count fits an int
    // (it came from one).
    unsafe {
        sys::PMPI_Status_set_elements(status, sys::byte(), payload as c_int);
    }
}

/// Whether the request a status completed was cancelled.
#[inline]
pub fn cancelled(status: *const MPI_Status) -> bool {
    let mut flag = 0;
    // SAFETY: writes `flag` only.
    unsafe { sys::PMPI_Test_cancelled(status, &mut flag) };
    flag != 0
}
