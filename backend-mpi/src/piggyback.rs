//! The record every message carries (R3), in the wire encoding of
//! `docs/piggyback.md` (`heisen_core::Piggyback::encode`): fixed size for a
//! run, little-endian, versioned, first in the message.

use std::sync::OnceLock;

use heisen_shmem::Record;

/// Bytes of one record on the wire: `48 + 24·K`.
pub const LEN: usize = Record::ENCODED_LEN;

/// One record's bytes, where MPI reads or writes it.
pub type Wire = [u8; LEN];

/// A record's bytes, zeroed (a receive writes them).
pub const fn blank() -> Wire {
    [0; LEN]
}

/// Encodes `record` into `out`.
#[inline]
pub fn pack(record: &Record, out: &mut Wire) {
    // across nodes, records travel in rank 0's time base (R5, `align`);
    // a copy only then
    let shifted;
    let record = if crate::align::applied_offset() == 0 {
        record
    } else {
        let mut r = *record;
        crate::align::to_common(&mut r);
        shifted = r;
        &shifted
    };
    // The buffer is exactly a record long and K fits the encoding, so
    // encoding cannot fail; an error would leave the empty-record bytes.
    if record.encode(out).is_err() {
        *out = *empty();
    }
}

/// The record in `bytes`, or `None` when they are not a record of this run
/// (short, foreign, another version or K): such a dependency leaves the
/// receiver's state unchanged (R3, 003 §2.3 case 4).
#[inline]
pub fn unpack(bytes: &[u8]) -> Option<Record> {
    Record::decode(bytes).ok().map(|mut r| {
        crate::align::to_local(&mut r);
        r
    })
}

/// [`unpack`] into `out`, in place: `None` where the bytes are not a
/// record of this run. A receive keeps the record where it is merged, so
/// its 240 bytes are written once, not moved from call to call.
#[inline]
pub fn unpack_into(bytes: &[u8], out: &mut Option<Record>) {
    let record = out.insert(Record::EMPTY);
    if record.decode_into(bytes).is_err() {
        *out = None;
        return;
    }
    crate::align::to_local(record);
}

/// The encoded empty record: what a send carries when its thread is not
/// measured or the request table is full. Read-only, so any number of
/// sends in flight may point MPI at it.
pub fn empty() -> &'static Wire {
    static EMPTY: OnceLock<Wire> = OnceLock::new();
    EMPTY.get_or_init(|| {
        let mut out = blank();
        let _ = Record::EMPTY.encode(&mut out);
        out
    })
}
