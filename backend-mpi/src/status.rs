//! Statuses as the program would see them without heisen (issue item 1):
//! after a receive or a probe the MPI's status counts the record too, so
//! its element count is set back to the payload's
//! (`PMPI_Status_set_elements`); `MPI_Get_count` and `MPI_Get_elements`
//! then give the program's own counts, derived datatypes included.
//! `MPI_SOURCE`, `MPI_TAG` and `MPI_ERROR` are the MPI's, untouched: a
//! wrapper passes the program's own status to the MPI where it has one,
//! and its own where the program passed `MPI_STATUS_IGNORE`.

use crate::piggyback::LEN;
use crate::sys::{self, MPI_Status};

/// The status the MPI should write: the program's, or `scratch` when the
/// program ignores it.
#[inline]
pub fn or_scratch(user: *mut MPI_Status, scratch: &mut MPI_Status) -> *mut MPI_Status {
    if seen(user) { user } else { scratch }
}

/// Whether the program sees the status it passed (not
/// `MPI_STATUS_IGNORE`).
#[inline]
pub fn seen(user: *mut MPI_Status) -> bool {
    !user.is_null() && user != sys::status_ignore()
}

/// Bytes of the whole message a status describes, record included;
/// `None` when the MPI cannot say (`MPI_UNDEFINED`). Counted with the
/// 64-bit call (`MPI_Get_elements_x` in bytes: one element a byte), so a
/// message of 2 GiB or more is counted too (`MPI_Get_count` in `int`
/// gives `MPI_UNDEFINED` there, and its status would keep the record in
/// its count; MPICH's pt2pt/large_message showed it).
#[inline]
pub fn wire_bytes(status: *const MPI_Status) -> Option<usize> {
    let mut bytes: sys::MPI_Count = 0;
    // SAFETY: `status` is a status the MPI wrote; writes `bytes` only.
    let rc = unsafe { sys::PMPI_Get_elements_x(status, sys::byte(), &mut bytes) };
    let bytes = (rc == sys::success() && bytes != sys::MPI_Count::from(sys::undefined()))
        .then_some(bytes)?;
    usize::try_from(bytes).ok()
}

/// Sets the status's count to the payload's (the record excluded) and
/// returns the payload's bytes; `None` (status unchanged) when the message
/// was shorter than a record, i.e. it carried none.
#[inline]
pub fn fix(status: *mut MPI_Status) -> Option<usize> {
    let bytes = wire_bytes(status)?;
    let payload = bytes.checked_sub(LEN)?;
    set_payload(status, payload);
    Some(payload)
}

/// [`fix`] where the program sees the status (`seen`); where it does not
/// (it passed `MPI_STATUS_IGNORE` and the status is heisen's scratch),
/// only the payload's bytes, the status left as the MPI wrote it: one MPI
/// call fewer on the hot path.
#[inline]
pub fn fix_if(status: *mut MPI_Status, seen: bool) -> Option<usize> {
    if seen {
        fix(status)
    } else {
        wire_bytes(status)?.checked_sub(LEN)
    }
}

/// Sets the status's count to `payload` bytes (the record excluded), for a
/// caller that already knows the message's length ([`fix`] without the
/// count query). 64-bit, as [`wire_bytes`].
#[inline]
pub fn set_payload(status: *mut MPI_Status, payload: usize) {
    let count = sys::MPI_Count::try_from(payload).unwrap_or(sys::MPI_Count::MAX);
    // SAFETY: `status` is a status the MPI wrote.
    unsafe {
        sys::PMPI_Status_set_elements_x(status, sys::byte(), count);
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
