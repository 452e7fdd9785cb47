//! The record exchanged among the participants of an n-to-n collective
//! (barrier, allreduce, allgather, alltoall) and its merge operator (R6).
//!
//! Every participant contributes one [`Exchange`] built from the piggyback
//! it took at its entry and the wait it measured; [`Exchange::combine`] is
//! associative and commutative, so the records can be folded with one
//! reduction (O(log P)) instead of gathered (O(P)).

use crate::path::Snapshot;
use crate::piggyback::{Flags, NO_LOCATION, Piggyback};

/// The reduced view of all participants of an n-to-n collective (R6).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Exchange<const K: usize> {
    /// [`Flags::DELAY`] if any participant carried a delay;
    /// [`Flags::TIMESTAMP`] if every one that did also carried a
    /// timestamp; [`Flags::PATH`] if any carried critical-path data.
    pub flags: Flags,
    /// Number of records folded in.
    pub participants: u32,
    /// `min_j (x_j + w_j)`: entry delay plus measured wait (R6 delay-only).
    pub min_delay_plus_wait: u64,
    /// `min_j w_j`: the wait of the last arrival, the synchronisation cost.
    pub min_wait: u64,
    /// Latest approximated entry `max_j (b_j - x_j)` (001 eq. 12: `enter_a^k`).
    pub max_approximated: i64,
    /// Latest measured entry `max_j b_j` (001 eq. 12: `enter_m^j`).
    pub max_measured: i64,
    /// The winning critical path among the participants' entries (R7).
    pub path: Snapshot<K>,
}

impl<const K: usize> Exchange<K> {
    /// The identity of [`Exchange::combine`]: no participant.
    pub const EMPTY: Self = Exchange {
        flags: Flags::NONE,
        participants: 0,
        min_delay_plus_wait: u64::MAX,
        min_wait: u64::MAX,
        max_approximated: i64::MIN,
        max_measured: i64::MIN,
        path: Snapshot::ZERO,
    };

    /// One participant's contribution: the piggyback it took at its entry
    /// and the wait it measured in the collective (0 when the timestamped
    /// form is used, which does not need it).
    pub fn entry(piggyback: &Piggyback<K>, wait: u64) -> Self {
        let mut out = Self::EMPTY;
        out.participants = 1;
        if piggyback.flags.contains(Flags::DELAY) {
            out.flags = Flags::DELAY;
            if piggyback.flags.contains(Flags::TIMESTAMP) {
                out.flags = out.flags.with(Flags::TIMESTAMP);
                out.max_approximated = piggyback.approximated;
                out.max_measured = piggyback.measured();
            }
            out.min_delay_plus_wait = piggyback.delay.saturating_add(wait);
            out.min_wait = wait;
        }
        if let Some(path) = Snapshot::of_piggyback(piggyback) {
            out.flags = out.flags.with(Flags::PATH);
            out.path = path;
        }
        out
    }

    /// Folds two partial reductions into one. Associative and commutative.
    #[must_use]
    pub fn combine(&self, other: &Self) -> Self {
        let both_delay = self.flags.contains(Flags::DELAY) && other.flags.contains(Flags::DELAY);
        let timestamp = if both_delay {
            self.flags.contains(Flags::TIMESTAMP) && other.flags.contains(Flags::TIMESTAMP)
        } else {
            // Only one side (or none) carries delays: it alone decides.
            (self.flags.contains(Flags::DELAY) && self.flags.contains(Flags::TIMESTAMP))
                || (other.flags.contains(Flags::DELAY) && other.flags.contains(Flags::TIMESTAMP))
        };
        let mut flags = Flags((self.flags.0 | other.flags.0) & (Flags::DELAY.0 | Flags::PATH.0));
        if timestamp {
            flags = flags.with(Flags::TIMESTAMP);
        }
        Exchange {
            flags,
            participants: self.participants + other.participants,
            min_delay_plus_wait: self.min_delay_plus_wait.min(other.min_delay_plus_wait),
            min_wait: self.min_wait.min(other.min_wait),
            max_approximated: self.max_approximated.max(other.max_approximated),
            max_measured: self.max_measured.max(other.max_measured),
            path: self.path.combine(&other.path),
        }
    }

    /// Folds a sequence of contributions.
    pub fn fold<'a, I>(entries: I) -> Self
    where
        I: IntoIterator<Item = &'a Exchange<K>>,
    {
        entries
            .into_iter()
            .fold(Self::EMPTY, |acc, e| acc.combine(e))
    }

    /// The location whose entry carries the winning path, if any.
    pub fn winner(&self) -> Option<u32> {
        (self.flags.contains(Flags::PATH) && self.path.location != NO_LOCATION)
            .then_some(self.path.location)
    }
}

impl<const K: usize> Default for Exchange<K> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<const K: usize> core::fmt::Debug for Exchange<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Exchange")
            .field("flags", &self.flags)
            .field("participants", &self.participants)
            .field("min_delay_plus_wait", &self.min_delay_plus_wait)
            .field("min_wait", &self.min_wait)
            .field("max_approximated", &self.max_approximated)
            .field("max_measured", &self.max_measured)
            .field("path", &self.path)
            .finish()
    }
}
