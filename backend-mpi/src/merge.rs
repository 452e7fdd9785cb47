//! The two ends of a message in the kernel: a send's release (R3) and a
//! receive's merge at its completion (R4 or R5 by the run's form, R7),
//! with the communication records of R12 and wildcard reorderings of R11.

use core::ffi::c_int;

use heisen_core::Dependency;
use heisen_core::stats::Communicated;
use heisen_core::wildcard::Match;
use heisen_shmem::{Record, with_current};
use smallvec::SmallVec;

use crate::piggyback::{self, Wire};
use crate::setup::{Mpi, guarded};

/// Takes a send's record now (R3, charging `mpi_send`, R1) into `wire`;
/// the empty record where the thread is not measured.
#[inline]
/// Returns the release's clock read (where a blocking send's wait
/// begins), `None` where the thread is not measured.
pub fn release(m: &Mpi, wire: &mut Wire) -> Option<u64> {
    // packed where it was made: the 240-byte record is not moved out
    let packed = guarded(|| {
        with_current(|s| {
            let record = s.release_split(m.actions.send);
            piggyback::pack(&record, wire);
            s.kernel().last_measured()
        })
    })
    .flatten();
    if packed.is_none() {
        *wire = *piggyback::empty();
    }
    packed
}

/// Records a send's call (R12): bytes and the time it blocked.
pub fn sent(site: u32, dest: c_int, bytes: usize, begin: Option<u64>) {
    guarded(|| {
        with_current(|s| {
            let blocked = begin.map_or(0, |b| s.now().saturating_sub(b));
            s.record_comm(&Communicated {
                site,
                peer: dest as u32,
                bytes: bytes as u64,
                measured_wait: blocked,
                compensated_wait: blocked as i64,
                transfer: 0,
                reordered: false,
            });
        })
    });
}

/// The begin of a merge: charges the part of `mpi_recv` before its clock
/// read (R1) and returns the read; `None` where the thread is not measured.
#[inline]
pub fn begin(m: &Mpi) -> Option<u64> {
    guarded(|| with_current(|s| s.begin(m.actions.recv))).flatten()
}

/// A clock read (the start of a blocking send).
#[inline]
pub fn now() -> Option<u64> {
    guarded(|| with_current(|s| s.now())).flatten()
}

/// Charges heisen's own work since `before` (a [`now`]) to the calling
/// thread as overhead (R1: a cost measured directly; without heisen it
/// would not run).
pub fn charge_since(before: Option<u64>) {
    if let (Some(b), Some(a)) = (before, now()) {
        let _ = guarded(|| with_current(|s| s.overhead(a.saturating_sub(b))));
    }
}

/// The messages one completion call received (no allocation up to four).
pub type ReceivedList = SmallVec<[Received; 4]>;

/// One message a completion received.
#[derive(Clone, Copy, Debug)]
pub struct Received {
    /// The record it carried; `None`: it carried none or a foreign one,
    /// which leaves the state unchanged (R3).
    pub record: Option<Record>,
    /// Call site of the receive.
    pub site: u32,
    /// Posted with `MPI_ANY_SOURCE` (R11).
    pub wildcard: bool,
    /// Payload bytes.
    pub bytes: usize,
    /// Source rank in the receive's communicator (the peer when the
    /// record names no location).
    pub source: c_int,
}

/// Merges the messages a completion call received, which blocked from
/// `begin` until now (R4/R5 over all of them, R6's n-to-1 shape for
/// several), and records each (R12): the wait goes to the message that
/// decided the end, as the simulator does.
pub fn received(m: &Mpi, begin: u64, messages: &[Received]) {
    if messages.is_empty() {
        return;
    }
    guarded(|| with_current(|s| merge_on(s, m, begin, messages)));
}

/// The dependency on one received message (its record, the empty one
/// where it carried none).
fn dependency(r: &Received) -> Dependency<'_, { heisen_shmem::SELECTED }> {
    Dependency::message(r.record.as_ref().unwrap_or(&Record::EMPTY), 0, 0)
}

fn merge_on(s: &mut heisen_shmem::ThreadState, m: &Mpi, begin: u64, messages: &[Received]) {
    // No allocation for the usual one to four messages of a completion,
    // and no copy of their records (a record is 240 bytes with K = 8);
    // the usual one message without a list at all.
    let one;
    let many: SmallVec<[Dependency<'_, { heisen_shmem::SELECTED }>; 4]>;
    let deps: &[Dependency<'_, { heisen_shmem::SELECTED }>] = if let [message] = messages {
        one = [dependency(message)];
        &one
    } else {
        many = messages.iter().map(dependency).collect();
        &many
    };
    let merged = s.end(begin, deps, m.actions.recv);
    // the merge's end clock read (no second read)
    let end = s.kernel().last_measured();
    for (j, (msg, dep)) in messages.iter().zip(deps).enumerate() {
        let decided = merged.determined_by == Some(j) || (messages.len() == 1);
        let transfer = dep.transfer(begin, end);
        let peer = match msg.record {
            Some(r) if r.location != heisen_core::piggyback::NO_LOCATION => r.location,
            _ => msg.source as u32,
        };
        let reordered = msg.wildcard
            && msg.record.is_some()
            && s.observe_wildcard(Match {
                site: msg.site,
                source: peer,
                arrival: dep.piggyback.approximated + transfer.estimate,
                end: merged.approximated_end,
            });
        s.record_comm(&Communicated {
            site: msg.site,
            peer,
            bytes: msg.bytes as u64,
            measured_wait: if decided { merged.wait } else { 0 },
            compensated_wait: if decided { merged.compensated_wait } else { 0 },
            transfer: transfer.estimate,
            reordered,
        });
    }
}
