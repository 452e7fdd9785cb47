//! Critical-path values as plain records: the snapshot a monitor reads
//! (R10), and the deterministic choice of a winner among paths (R7).

use core::cmp::Ordering;

use crate::piggyback::{Flags, Piggyback};

/// One location's critical-path state `(L, s, n)` at a point in time, the
/// plain record a monitor reads without stopping the program (R10,
/// 003 §2.3 Fig. 3).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Snapshot<const K: usize> {
    /// The location the values belong to.
    pub location: u32,
    /// Whether the location collects critical-path data (R9).
    pub active: bool,
    /// Critical-path length `L` (R7).
    pub longest: i64,
    /// The part of `L` spent in transfers, the `(transfer)` pseudo-region.
    pub transfer: i64,
    /// Inclusive share per selected region.
    pub inclusive: [i64; K],
    /// Exclusive share per selected region.
    pub exclusive: [i64; K],
    /// Net length per selected region (critical-path zeroing).
    pub net: [i64; K],
}

impl<const K: usize> Snapshot<K> {
    /// The values of nobody: length zero, no shares (the start node).
    pub const ZERO: Self = Snapshot {
        location: crate::piggyback::NO_LOCATION,
        active: false,
        longest: 0,
        transfer: 0,
        inclusive: [0; K],
        exclusive: [0; K],
        net: [0; K],
    };

    /// The path part of a piggyback, or `None` when it carries none (R9).
    pub fn of_piggyback(p: &Piggyback<K>) -> Option<Self> {
        p.flags.contains(Flags::PATH).then_some(Snapshot {
            location: p.location,
            active: true,
            longest: p.longest,
            transfer: p.transfer,
            inclusive: p.inclusive,
            exclusive: p.exclusive,
            net: p.net,
        })
    }

    /// Whether `self` wins over `other` as the longest path (R7): the longer
    /// one; on a tie the lower location id; on a tie of both, the larger
    /// shares compared in order, so that the choice never depends on the
    /// order in which paths are presented.
    pub fn beats(&self, other: &Self) -> bool {
        rank(self).cmp(&rank(other)).then_with(|| tail(self, other)) == Ordering::Greater
    }

    /// The global value a monitor reports from the latest sample of every
    /// location (R10, 003 Fig. 3): the longest path with its shares, and
    /// per region the largest net, since zeroing asks for the longest chain
    /// anywhere once the region costs nothing.
    pub fn combine(&self, other: &Self) -> Self {
        if !other.active {
            return *self;
        }
        if !self.active {
            return *other;
        }
        let mut out = if other.beats(self) { *other } else { *self };
        for k in 0..K {
            out.net[k] = self.net[k].max(other.net[k]);
        }
        out
    }
}

impl<const K: usize> Default for Snapshot<K> {
    fn default() -> Self {
        Self::ZERO
    }
}

impl<const K: usize> core::fmt::Debug for Snapshot<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Snapshot")
            .field("location", &self.location)
            .field("active", &self.active)
            .field("longest", &self.longest)
            .field("transfer", &self.transfer)
            .field("inclusive", &&self.inclusive[..])
            .field("exclusive", &&self.exclusive[..])
            .field("net", &&self.net[..])
            .finish()
    }
}

/// Primary ordering key: longer wins, then lower location id.
#[inline]
fn rank<const K: usize>(s: &Snapshot<K>) -> (i64, core::cmp::Reverse<u32>) {
    (s.longest, core::cmp::Reverse(s.location))
}

/// Last-resort ordering of equal-length paths from one location.
fn tail<const K: usize>(a: &Snapshot<K>, b: &Snapshot<K>) -> Ordering {
    a.transfer
        .cmp(&b.transfer)
        .then_with(|| a.inclusive.cmp(&b.inclusive))
        .then_with(|| a.exclusive.cmp(&b.exclusive))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(location: u32, longest: i64, share: i64, net: i64) -> Snapshot<1> {
        Snapshot {
            location,
            active: true,
            longest,
            transfer: 0,
            inclusive: [share],
            exclusive: [share],
            net: [net],
        }
    }

    #[test]
    fn longer_path_wins_and_ties_go_to_lower_location() {
        assert!(snap(3, 10, 1, 0).beats(&snap(1, 9, 5, 0)));
        assert!(snap(1, 10, 1, 0).beats(&snap(3, 10, 5, 0)));
        assert!(!snap(3, 10, 5, 0).beats(&snap(1, 10, 1, 0)));
    }

    #[test]
    fn monitor_takes_longest_shares_and_largest_nets() {
        // 003 Fig. 3: the global value is the maximum over the samples.
        let g = snap(0, 10, 4, 6).combine(&snap(1, 12, 2, 5));
        assert_eq!(
            (g.location, g.longest, g.inclusive[0], g.net[0]),
            (1, 12, 2, 6)
        );
        assert_eq!(
            Snapshot::<1>::ZERO.combine(&snap(2, 1, 1, 1)),
            snap(2, 1, 1, 1)
        );
    }
}
