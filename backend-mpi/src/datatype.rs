//! How a message and its record travel as one MPI message (R3; seed 000
//! §4.2): the record first, then the user's `count × datatype`.
//!
//! Two ways, chosen per message (measured on MPICH, see the README):
//! - **staging**: a predefined (contiguous) datatype of at most
//!   [`STAGE`] bytes is copied behind the record into a per-thread buffer
//!   and sent as bytes (1.3× a plain 8-byte round trip);
//! - **struct**: otherwise a struct type `{record @&record, count ×
//!   datatype @buf}` from `MPI_BOTTOM` sends both without a copy. The
//!   record must come first: with it last, a receive posted larger than the
//!   message would put the record inside the user's buffer. A type costs
//!   about 0.4 µs to create, commit and free, small against a message that
//!   large or that scattered.
//!
//! Both sides decide independently and both layouts are the same bytes on
//! the wire (record, then the data in the datatype's type-map order), so a
//! staged send may meet a struct receive and the other way round.

use core::cell::RefCell;
use core::ffi::{c_int, c_void};

use crate::piggyback::LEN;
use crate::sys::{self, MPI_Aint, MPI_Datatype};

/// Largest payload copied into the staging buffer, in bytes.
pub const STAGE: usize = 4096;

std::thread_local! {
    /// The calling thread's staging buffers: one for a send, one for a
    /// receive (a `Sendrecv` uses both).
    static STAGING: RefCell<[Box<[u8]>; 2]> =
        RefCell::new([vec![0; LEN + STAGE].into_boxed_slice(), vec![0; LEN + STAGE].into_boxed_slice()]);
}

/// Which staging buffer a side uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The outgoing message.
    Send = 0,
    /// The incoming message.
    Receive = 1,
}

/// The payload of `count × datatype` at `buf` when it may be staged: its
/// byte length. `None`: send it with a struct type.
pub fn stageable(buf: *const c_void, count: c_int, datatype: MPI_Datatype) -> Option<usize> {
    if count < 0 {
        return None;
    }
    let (mut ints, mut addrs, mut types, mut combiner) = (0, 0, 0, 0);
    // SAFETY: envelope queries write only the four out-parameters; an
    // invalid datatype returns an error (the struct path then reports it
    // through the user's own call).
    let named = unsafe {
        sys::PMPI_Type_get_envelope(datatype, &mut ints, &mut addrs, &mut types, &mut combiner)
    } == sys::success()
        && combiner == sys::combiner_named();
    if !named {
        return None;
    }
    let mut size = 0;
    // SAFETY: writes `size` only.
    if unsafe { sys::PMPI_Type_size(datatype, &mut size) } != sys::success() || size < 0 {
        return None;
    }
    let bytes = (count as usize).checked_mul(size as usize)?;
    (bytes <= STAGE && (bytes == 0 || !buf.is_null())).then_some(bytes)
}

/// Runs `f` with the calling thread's staging buffer of `side`, `None`
/// when it is in use (a nested call): the caller takes the struct path.
pub fn with_stage<R>(side: Side, f: impl FnOnce(&mut [u8]) -> R) -> Option<R> {
    STAGING
        .try_with(|s| {
            let mut s = s.try_borrow_mut().ok()?;
            Some(f(&mut s[side as usize]))
        })
        .ok()
        .flatten()
}

/// A committed struct type `{LEN bytes @record, count × datatype @buf}`,
/// absolute addresses, to be used with `MPI_BOTTOM` and count 1. The
/// caller frees it ([`free`]) once the operation was started (MPI keeps a
/// type alive while operations use it).
pub fn joined(
    record: *const u8,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> Result<MPI_Datatype, c_int> {
    let mut at: [MPI_Aint; 2] = [0; 2];
    // SAFETY: Get_address only computes the address; it writes `at`.
    let ok = unsafe {
        sys::PMPI_Get_address(record.cast(), &mut at[0]) == sys::success()
            && sys::PMPI_Get_address(buf, &mut at[1]) == sys::success()
    };
    if !ok {
        return Err(sys::err_intern());
    }
    let lengths: [c_int; 2] = [LEN as c_int, count];
    let types = [sys::byte(), datatype];
    let mut joined = sys::byte();
    // SAFETY: three arrays of two valid entries; writes `joined` only.
    let rc = unsafe {
        sys::PMPI_Type_create_struct(
            2,
            lengths.as_ptr(),
            at.as_ptr(),
            types.as_ptr(),
            &mut joined,
        )
    };
    if rc != sys::success() {
        return Err(rc);
    }
    // SAFETY: `joined` was just created.
    let rc = unsafe { sys::PMPI_Type_commit(&mut joined) };
    if rc != sys::success() {
        free(joined);
        return Err(rc);
    }
    Ok(joined)
}

/// Frees a type made by [`joined`].
pub fn free(mut datatype: MPI_Datatype) {
    // SAFETY: a type this module created and nobody else holds.
    unsafe {
        sys::PMPI_Type_free(&mut datatype);
    }
}
