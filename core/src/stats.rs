//! Bounded statistics tables: one record per region and call site, per
//! communication call site and peer, and per loop, whose memory does not
//! grow with run length (R12, 002 §6.3).
//!
//! A [`Profile`] holds three fixed-capacity hash tables. Their capacities
//! are const generics (each a power of two greater than one, checked at
//! compile time by `heapless`). When a table is full and a record with a
//! new key arrives, the record is dropped and counted in [`Overflow`]
//! (R12: "overflow is counted and reported, never a panic, never an
//! allocation"). Records that already have an entry are always added.
//!
//! Sums saturate at the integer limits instead of wrapping or panicking;
//! `u64` nanoseconds reach that limit after 584 years, so saturation is a
//! guard against corrupt input, not a rounding rule. Compensated times are
//! signed and negative sums are kept as they are (R2: over-compensation is
//! reported, never clamped).

use core::hash::Hash;

use heapless::index_map::FnvIndexMap;

use crate::location::{Exited, FrameKind};

/// The key of a region record: which region, entered from which call site
/// (R12, 002 §6.3: one PROC record per calling statement).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegionKey {
    /// Region id.
    pub region: u32,
    /// Call site id of the statement that entered the region.
    pub site: u32,
}

/// Accumulated times of one region entered from one call site (R12,
/// 002 Fig. 10 PROC record: `proc_time`, `proc_num`), in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionRecord {
    /// Number of (non-folded) instances that ended.
    pub count: u64,
    /// Sum of measured inclusive times.
    pub measured_inclusive: u64,
    /// Sum of measured exclusive times.
    pub measured_exclusive: u64,
    /// Sum of compensated inclusive times (R2); negative means
    /// over-compensation.
    pub inclusive: i64,
    /// Sum of compensated exclusive times (R2); negative means
    /// over-compensation.
    pub exclusive: i64,
}

impl RegionRecord {
    /// A record with nothing accumulated.
    pub const ZERO: Self = RegionRecord {
        count: 0,
        measured_inclusive: 0,
        measured_exclusive: 0,
        inclusive: 0,
        exclusive: 0,
    };

    /// Adds one ended instance.
    #[inline]
    fn add(&mut self, e: &Exited) {
        self.count = self.count.saturating_add(1);
        self.measured_inclusive = self.measured_inclusive.saturating_add(e.measured_inclusive);
        self.measured_exclusive = self.measured_exclusive.saturating_add(e.measured_exclusive);
        self.inclusive = self.inclusive.saturating_add(e.inclusive); // R2: signed, never clamped at 0
        self.exclusive = self.exclusive.saturating_add(e.exclusive); // R2: signed, never clamped at 0
    }
}

/// The key of a communication record: which call site, with which peer
/// (R12, 002 §6.3: a list of COM records per statement, one per `dest_node`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommKey {
    /// Call site id of the communication call.
    pub site: u32,
    /// The other location: destination of a send, source of a receive.
    pub peer: u32,
}

/// Accumulated statistics of one communication call site with one peer
/// (R12, 002 Fig. 10 COM record: `trans_time`, `trans_num`, `sync_delay`).
/// Times in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommRecord {
    /// Number of calls.
    pub count: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Sum of measured waits `w = e - b`.
    pub measured_wait: u64,
    /// Sum of compensated waits `w' = w + x - x'` (R4); negative means
    /// over-compensation.
    pub compensated_wait: i64,
    /// Sum of transfer estimates `l_j` (R5; 0 in delay-only form, R7).
    pub transfer: i64,
    /// Wildcard receives at this site whose match the approximated times
    /// say was reordered by measurement (R11).
    pub reorders: u64,
}

impl CommRecord {
    /// A record with nothing accumulated.
    pub const ZERO: Self = CommRecord {
        count: 0,
        bytes: 0,
        measured_wait: 0,
        compensated_wait: 0,
        transfer: 0,
        reorders: 0,
    };

    /// Adds one communication call.
    #[inline]
    fn add(&mut self, c: &Communicated) {
        self.count = self.count.saturating_add(1);
        self.bytes = self.bytes.saturating_add(c.bytes);
        self.measured_wait = self.measured_wait.saturating_add(c.measured_wait);
        self.compensated_wait = self.compensated_wait.saturating_add(c.compensated_wait); // R4: w' may be negative, kept
        self.transfer = self.transfer.saturating_add(c.transfer);
        self.reorders = self.reorders.saturating_add(u64::from(c.reordered)); // R11: counted per call site
    }
}

/// Accumulated times of one loop (R12, 002 Fig. 10 LOOP record:
/// `loop_time`, `loop_num`), in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopRecord {
    /// Number of (non-folded) loop instances that ended.
    pub count: u64,
    /// Sum of measured (inclusive) times.
    pub measured: u64,
    /// Sum of compensated (inclusive) times (R2); negative means
    /// over-compensation.
    pub compensated: i64,
}

impl LoopRecord {
    /// A record with nothing accumulated.
    pub const ZERO: Self = LoopRecord {
        count: 0,
        measured: 0,
        compensated: 0,
    };

    /// Adds one ended loop instance.
    fn add(&mut self, e: &Exited) {
        self.count = self.count.saturating_add(1);
        self.measured = self.measured.saturating_add(e.measured_inclusive);
        self.compensated = self.compensated.saturating_add(e.inclusive); // R2: signed, never clamped at 0
    }
}

/// One communication call as the statistics see it: the plain values of
/// [`Profile::record_comm`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Communicated {
    /// Call site id of the communication call.
    pub site: u32,
    /// The other location: destination of a send, source of a receive.
    pub peer: u32,
    /// Bytes transferred.
    pub bytes: u64,
    /// Measured wait `w = e - b`, nanoseconds.
    pub measured_wait: u64,
    /// Compensated wait `w'` (R4), nanoseconds; may be negative.
    pub compensated_wait: i64,
    /// Transfer estimate `l_j` (R5), nanoseconds.
    pub transfer: i64,
    /// Whether a wildcard match was reordered by measurement (R11).
    pub reordered: bool,
}

/// How many records each table dropped because it was full (R12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Overflow {
    /// Dropped region records (region exits with a new key).
    pub regions: u64,
    /// Dropped communication records (calls with a new site and peer).
    pub comms: u64,
    /// Dropped loop records (loop exits with a new loop id).
    pub loops: u64,
}

impl Overflow {
    /// Whether nothing was dropped.
    pub const fn is_empty(&self) -> bool {
        self.regions == 0 && self.comms == 0 && self.loops == 0
    }
}

/// The bounded statistics of one location (R12, 002 §6.3): at most `R`
/// region records, `C` communication records and `L` loop records. Each
/// capacity must be a power of two greater than one.
#[derive(Clone, Debug)]
pub struct Profile<const R: usize, const C: usize, const L: usize> {
    regions: FnvIndexMap<RegionKey, RegionRecord, R>,
    /// Where recently exited keys sit in `regions` (index + 1, 0: none),
    /// by a hash of the key: an exit of a hot region skips the table's
    /// hashing and probing. Records are never removed, so an index stays
    /// valid; a hint is checked against the key before it is used.
    hints: [u16; HINTS],
    comms: FnvIndexMap<CommKey, CommRecord, C>,
    /// Where recently recorded communication keys sit in `comms`, as
    /// `hints` for `regions`: a message of a hot site and peer skips the
    /// table's FNV hashing and probing.
    comm_hints: [u16; HINTS],
    loops: FnvIndexMap<u32, LoopRecord, L>,
    overflow: Overflow,
}

/// Hints kept by [`Profile`] for hot region records.
const HINTS: usize = 16;

/// The hint slot of a region key.
#[inline]
fn hint_of(key: &RegionKey) -> usize {
    (key.region ^ key.site.rotate_left(7)) as usize % HINTS
}

/// The hint slot of a communication key.
#[inline]
fn comm_hint_of(key: &CommKey) -> usize {
    (key.site ^ key.peer.rotate_left(7)) as usize % HINTS
}

/// A hint for record index `i` (0 when it does not fit the hint's width).
#[inline]
fn hint_index(i: usize) -> u16 {
    u16::try_from(i + 1).unwrap_or(0)
}

/// The record of `key` in `table` if `hint` names it: the hot path of a
/// hinted table (small enough to inline into a caller's exit or message).
#[inline(always)]
fn hinted<'a, K: Eq + Hash, V, const N: usize>(
    table: &'a mut FnvIndexMap<K, V, N>,
    hint: u16,
    key: &K,
) -> Option<&'a mut V> {
    let i = usize::from(hint).checked_sub(1)?;
    match table.get_index_mut(i) {
        Some((k, record)) if k == key => Some(record),
        _ => None,
    }
}

/// The record of `key` in `table` past its hint: found or inserted as
/// `zero`, and `hint` set to it; `None` when the table is full (R12: the
/// caller counts the overflow).
fn unhinted<'a, K: Eq + Hash, V, const N: usize>(
    table: &'a mut FnvIndexMap<K, V, N>,
    hint: &mut u16,
    key: K,
    zero: V,
) -> Option<&'a mut V> {
    let i = match table.get_index_of(&key) {
        Some(i) => i,
        None => {
            table.insert(key, zero).ok()?;
            table.len() - 1
        }
    };
    *hint = hint_index(i);
    table.get_index_mut(i).map(|(_, record)| record)
}

impl<const R: usize, const C: usize, const L: usize> Profile<R, C, L> {
    /// Empty tables. Fails to compile unless `R`, `C` and `L` are powers of
    /// two greater than one.
    pub const fn new() -> Self {
        Profile {
            regions: FnvIndexMap::new(),
            hints: [0; HINTS],
            comms: FnvIndexMap::new(),
            comm_hints: [0; HINTS],
            loops: FnvIndexMap::new(),
            overflow: Overflow {
                regions: 0,
                comms: 0,
                loops: 0,
            },
        }
    }

    /// Records a region or loop instance that just ended.
    ///
    /// Regions go to the region table under `(region, site)`, loops to the
    /// loop table under their loop id. A folded exit (a recursive re-entry,
    /// already part of its outermost frame) is skipped entirely.
    #[inline]
    pub fn record_exit(&mut self, e: &Exited) {
        if e.folded {
            return; // R12, 002 §6.3 Fig. 11a: no PROC record for the recursive call
        }
        if e.kind == FrameKind::Region {
            // R12, 002 §6.3: one record per region per call site; the hot
            // path is a hinted record (small enough to inline into the
            // caller's exit), the rest is out of line.
            let key = RegionKey {
                region: e.region,
                site: e.site,
            };
            if let Some(record) = hinted(&mut self.regions, self.hints[hint_of(&key)], &key) {
                record.add(e);
                return;
            }
        }
        self.record_exit_slow(*e);
    }

    /// [`Profile::record_exit`] of a loop, or of a region whose record is
    /// not hinted.
    #[cold]
    #[inline(never)]
    fn record_exit_slow(&mut self, e: Exited) {
        match e.kind {
            FrameKind::Region => {
                // R12, 002 §6.3: one record per region per call site
                let key = RegionKey {
                    region: e.region,
                    site: e.site,
                };
                let hint = &mut self.hints[hint_of(&key)];
                match unhinted(&mut self.regions, hint, key, RegionRecord::ZERO) {
                    Some(record) => record.add(&e),
                    None => self.overflow.regions = self.overflow.regions.saturating_add(1), // R12: overflow counted
                }
            }
            FrameKind::Loop => match self.loops.get_mut(&e.region) {
                // R12, 002 §6.3: one LOOP record per loop
                Some(record) => record.add(&e),
                None => {
                    let mut record = LoopRecord::ZERO;
                    record.add(&e);
                    if self.loops.insert(e.region, record).is_err() {
                        self.overflow.loops = self.overflow.loops.saturating_add(1); // R12: overflow counted
                    }
                }
            },
        }
    }

    /// Records one communication call under `(site, peer)`: the hinted
    /// record on the hot path, the table's lookup out of line.
    #[inline]
    pub fn record_comm(&mut self, c: &Communicated) {
        let key = CommKey {
            site: c.site,
            peer: c.peer,
        }; // R12, 002 §6.3: one COM record per site and dest_node
        if let Some(record) = hinted(&mut self.comms, self.comm_hints[comm_hint_of(&key)], &key) {
            record.add(c);
            return;
        }
        self.record_comm_slow(key, c);
    }

    /// [`Profile::record_comm`] of a key whose record is not hinted.
    #[cold]
    #[inline(never)]
    fn record_comm_slow(&mut self, key: CommKey, c: &Communicated) {
        let hint = &mut self.comm_hints[comm_hint_of(&key)];
        match unhinted(&mut self.comms, hint, key, CommRecord::ZERO) {
            Some(record) => record.add(c),
            None => self.overflow.comms = self.overflow.comms.saturating_add(1), // R12: overflow counted
        }
    }

    /// The region records, in the order their keys first appeared.
    pub fn regions(&self) -> impl Iterator<Item = (RegionKey, &RegionRecord)> + '_ {
        self.regions.iter().map(|(k, v)| (*k, v))
    }

    /// The communication records, in the order their keys first appeared.
    pub fn comms(&self) -> impl Iterator<Item = (CommKey, &CommRecord)> + '_ {
        self.comms.iter().map(|(k, v)| (*k, v))
    }

    /// The loop records by loop id, in the order the ids first appeared.
    pub fn loops(&self) -> impl Iterator<Item = (u32, &LoopRecord)> + '_ {
        self.loops.iter().map(|(k, v)| (*k, v))
    }

    /// The record of `region` entered from `site`, if any.
    pub fn region(&self, region: u32, site: u32) -> Option<&RegionRecord> {
        self.regions.get(&RegionKey { region, site })
    }

    /// The record of call site `site` with `peer`, if any.
    pub fn comm(&self, site: u32, peer: u32) -> Option<&CommRecord> {
        self.comms.get(&CommKey { site, peer })
    }

    /// The record of loop `id`, if any.
    pub fn loop_record(&self, id: u32) -> Option<&LoopRecord> {
        self.loops.get(&id)
    }

    /// How many records each table dropped because it was full.
    pub const fn overflow(&self) -> Overflow {
        self.overflow
    }

    /// Forgets every record and overflow count, keeping the capacity.
    pub fn clear(&mut self) {
        self.regions.clear();
        self.comms.clear();
        self.loops.clear();
        self.overflow = Overflow::default();
    }
}

impl<const R: usize, const C: usize, const L: usize> Default for Profile<R, C, L> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A non-folded region exit with equal measured and compensated times.
    fn region_exit(region: u32, site: u32, inclusive: u64, exclusive: u64) -> Exited {
        Exited {
            region,
            site,
            kind: FrameKind::Region,
            folded: false,
            measured_inclusive: inclusive,
            measured_exclusive: exclusive,
            inclusive: inclusive as i64,
            exclusive: exclusive as i64,
        }
    }

    #[test]
    fn keys_sharing_a_hint_slot_keep_their_own_records() {
        // Regions 0, 16, 32, … share hint slot 0 at site 0: exits that
        // alternate among them must each land in their own record.
        let mut p = Profile::<64, 2, 2>::new();
        for round in 0..10u64 {
            for k in 0..5u32 {
                p.record_exit(&region_exit(
                    k * HINTS as u32,
                    0,
                    10 + u64::from(k),
                    1 + round,
                ));
            }
        }
        let records: heapless::Vec<(RegionKey, RegionRecord), 8> =
            p.regions().map(|(k, r)| (k, *r)).collect();
        assert_eq!(records.len(), 5);
        for (i, (key, r)) in records.iter().enumerate() {
            assert_eq!(key.region, i as u32 * HINTS as u32);
            assert_eq!(r.count, 10);
            assert_eq!(r.measured_inclusive, 10 * (10 + i as u64));
        }
    }

    #[test]
    fn comm_keys_sharing_a_hint_slot_keep_their_own_records() {
        // Sites 0, 16, 32, … share hint slot 0 with peer 0: calls that
        // alternate among them must each land in their own record (R12),
        // before and after a clear (a hint then names another key or none).
        let mut p = Profile::<2, 64, 2>::new();
        for cleared in [false, true] {
            for round in 0..10u64 {
                for k in 0..5u32 {
                    p.record_comm(&comm(k * HINTS as u32, 0, 1 + u64::from(k), round as i64));
                }
            }
            let records: heapless::Vec<(CommKey, CommRecord), 8> =
                p.comms().map(|(k, r)| (k, *r)).collect();
            assert_eq!(records.len(), 5, "cleared before: {cleared}");
            for (i, (key, r)) in records.iter().enumerate() {
                assert_eq!(key.site, i as u32 * HINTS as u32);
                assert_eq!(r.count, 10);
                assert_eq!(r.measured_wait, 10 * (1 + i as u64));
                assert_eq!(r.compensated_wait, 45);
            }
            // the same keys in reverse order after a clear: each hint
            // points at another key's index
            p.clear();
            for k in (0..5u32).rev() {
                p.record_comm(&comm(k * HINTS as u32, 0, 0, 0));
            }
            assert_eq!(
                p.comms().next().map(|(k, r)| (k.site, r.count)),
                Some((64, 1))
            );
            p.clear();
        }
    }

    fn loop_exit(id: u32, measured: u64, compensated: i64) -> Exited {
        Exited {
            region: id,
            site: 0,
            kind: FrameKind::Loop,
            folded: false,
            measured_inclusive: measured,
            measured_exclusive: measured,
            inclusive: compensated,
            exclusive: compensated,
        }
    }

    fn comm(site: u32, peer: u32, wait: u64, compensated_wait: i64) -> Communicated {
        Communicated {
            site,
            peer,
            bytes: 100,
            measured_wait: wait,
            compensated_wait,
            transfer: 5,
            reordered: false,
        }
    }

    type Small = Profile<2, 2, 2>;
    type Roomy = Profile<16, 16, 16>;

    // --- accumulation -------------------------------------------------

    #[test]
    fn accumulation_same_region_and_site_adds_up() {
        let mut p = Roomy::new();
        p.record_exit(&region_exit(7, 1, 100, 60));
        p.record_exit(&region_exit(7, 1, 50, 20));
        let r = p.region(7, 1).copied().unwrap_or_default();
        assert_eq!(
            r,
            RegionRecord {
                count: 2,
                measured_inclusive: 150,
                measured_exclusive: 80,
                inclusive: 150,
                exclusive: 80,
            }
        );
        assert_eq!(p.regions().count(), 1);
        assert!(p.overflow().is_empty());
    }

    #[test]
    fn accumulation_other_call_site_gets_its_own_record() {
        // R12, 002 §6.3: one PROC record per calling statement
        let mut p = Roomy::new();
        p.record_exit(&region_exit(7, 1, 100, 100));
        p.record_exit(&region_exit(7, 2, 30, 30));
        assert_eq!(p.region(7, 1).map(|r| r.count), Some(1));
        assert_eq!(p.region(7, 2).map(|r| r.measured_inclusive), Some(30));
        let keys: heapless::Vec<RegionKey, 4> = p.regions().map(|(k, _)| k).collect();
        assert_eq!(
            keys.as_slice(),
            &[
                RegionKey { region: 7, site: 1 },
                RegionKey { region: 7, site: 2 }
            ]
        );
    }

    #[test]
    fn accumulation_loops_go_to_the_loop_table() {
        let mut p = Roomy::new();
        p.record_exit(&loop_exit(3, 1000, 900));
        p.record_exit(&loop_exit(3, 500, 400));
        assert_eq!(
            p.loop_record(3),
            Some(&LoopRecord {
                count: 2,
                measured: 1500,
                compensated: 1300
            })
        );
        assert_eq!(p.regions().count(), 0);
        assert_eq!(p.loops().count(), 1);
    }

    #[test]
    fn accumulation_comm_per_site_and_peer() {
        let mut p = Roomy::new();
        p.record_comm(&comm(4, 1, 10, 0));
        p.record_comm(&Communicated {
            reordered: true,
            ..comm(4, 1, 20, 15)
        });
        p.record_comm(&comm(4, 2, 7, 7));
        assert_eq!(
            p.comm(4, 1),
            Some(&CommRecord {
                count: 2,
                bytes: 200,
                measured_wait: 30,
                compensated_wait: 15,
                transfer: 10,
                reorders: 1,
            })
        );
        assert_eq!(p.comm(4, 2).map(|c| c.count), Some(1));
        assert_eq!(p.comms().count(), 2);
    }

    #[test]
    fn accumulation_clear_forgets_records_and_overflow() {
        let mut p = Small::new();
        for region in 0..3 {
            p.record_exit(&region_exit(region, 0, 1, 1));
        }
        p.clear();
        assert_eq!(p.regions().count(), 0);
        assert!(p.overflow().is_empty());
    }

    // --- overflow -----------------------------------------------------

    #[test]
    fn overflow_region_table_counts_dropped_records() {
        let mut p = Small::new();
        p.record_exit(&region_exit(1, 0, 10, 10));
        p.record_exit(&region_exit(2, 0, 10, 10));
        p.record_exit(&region_exit(3, 0, 10, 10)); // table full: dropped
        p.record_exit(&region_exit(3, 0, 10, 10)); // still no room: dropped again
        assert_eq!(
            p.overflow(),
            Overflow {
                regions: 2,
                comms: 0,
                loops: 0
            }
        );
        assert_eq!(p.regions().count(), 2);
        assert_eq!(p.region(3, 0), None);
    }

    #[test]
    fn overflow_full_table_still_accumulates_known_keys() {
        let mut p = Small::new();
        p.record_exit(&region_exit(1, 0, 10, 10));
        p.record_exit(&region_exit(2, 0, 10, 10));
        p.record_exit(&region_exit(3, 0, 10, 10));
        p.record_exit(&region_exit(1, 0, 5, 5));
        assert_eq!(
            p.region(1, 0).map(|r| (r.count, r.inclusive)),
            Some((2, 15))
        );
        assert_eq!(p.overflow().regions, 1);
    }

    #[test]
    fn overflow_comm_and_loop_tables_count_separately() {
        let mut p = Small::new();
        for peer in 0..5 {
            p.record_comm(&comm(1, peer, 1, 1));
        }
        for id in 0..4 {
            p.record_exit(&loop_exit(id, 1, 1));
        }
        assert_eq!(
            p.overflow(),
            Overflow {
                regions: 0,
                comms: 3,
                loops: 2
            }
        );
        assert_eq!(p.comms().count(), 2);
        assert_eq!(p.loops().count(), 2);
    }

    // --- folded exits -------------------------------------------------

    #[test]
    fn folded_exit_is_skipped_entirely() {
        let mut p = Small::new();
        p.record_exit(&Exited {
            folded: true,
            ..region_exit(1, 0, 10, 10)
        });
        p.record_exit(&Exited {
            folded: true,
            ..loop_exit(1, 10, 10)
        });
        assert_eq!(p.regions().count(), 0);
        assert_eq!(p.loops().count(), 0);
        assert!(p.overflow().is_empty());
    }

    #[test]
    fn folded_exit_does_not_count_as_overflow_when_full() {
        let mut p = Small::new();
        p.record_exit(&region_exit(1, 0, 10, 10));
        p.record_exit(&region_exit(2, 0, 10, 10));
        p.record_exit(&Exited {
            folded: true,
            ..region_exit(3, 0, 10, 10)
        });
        assert!(p.overflow().is_empty());
    }

    #[test]
    fn fig11_recursion_folds_into_outermost_frame() {
        // 002 §6.3 Fig. 11a: procedure X contains `call X`. main calls X at
        // site 1; X calls X at site 2, which calls X at site 2 again. Times:
        //   outer X [0, 100], middle X [20, 70], inner X [30, 50].
        // Location marks the two recursive re-entries folded (no PROC
        // record for `call X`), and the outer frame carries the whole
        // recursion: its exclusive time is all of X's own work, as if the
        // `call X` statement did not exist.
        const X: u32 = 9;
        let inner = Exited {
            folded: true,
            ..region_exit(X, 2, 20, 20)
        };
        let middle = Exited {
            folded: true,
            ..region_exit(X, 2, 50, 30)
        };
        let outer = Exited {
            region: X,
            site: 1,
            kind: FrameKind::Region,
            folded: false,
            measured_inclusive: 100,
            measured_exclusive: 100,
            inclusive: 94,
            exclusive: 94,
        };
        let mut p = Roomy::new();
        for e in [inner, middle, outer] {
            p.record_exit(&e);
        }
        assert_eq!(
            p.region(X, 1),
            Some(&RegionRecord {
                count: 1,
                measured_inclusive: 100,
                measured_exclusive: 100,
                inclusive: 94,
                exclusive: 94,
            })
        );
        assert_eq!(
            p.region(X, 2),
            None,
            "no record for the recursive call site"
        );
        assert_eq!(p.regions().count(), 1);
    }

    // --- negative compensated times ----------------------------------

    #[test]
    fn negative_compensated_times_stay_negative() {
        // R2: over-compensation is reported, never clamped.
        let mut p = Roomy::new();
        let e = Exited {
            inclusive: -5,
            exclusive: -8,
            ..region_exit(1, 1, 3, 2)
        };
        p.record_exit(&e);
        p.record_exit(&e);
        let r = p.region(1, 1).copied().unwrap_or_default();
        assert_eq!((r.inclusive, r.exclusive), (-10, -16));
        assert_eq!((r.measured_inclusive, r.measured_exclusive), (6, 4));
    }

    #[test]
    fn negative_compensated_wait_and_loop_time_stay_negative() {
        let mut p = Roomy::new();
        p.record_comm(&comm(1, 1, 0, -12));
        p.record_exit(&loop_exit(2, 4, -3));
        assert_eq!(p.comm(1, 1).map(|c| c.compensated_wait), Some(-12));
        assert_eq!(p.loop_record(2).map(|l| l.compensated), Some(-3));
    }

    #[test]
    fn negative_and_positive_instances_sum_exactly() {
        let mut p = Roomy::new();
        p.record_exit(&Exited {
            inclusive: -5,
            exclusive: -5,
            ..region_exit(1, 1, 0, 0)
        });
        p.record_exit(&region_exit(1, 1, 3, 3));
        assert_eq!(p.region(1, 1).map(|r| r.inclusive), Some(-2));
    }
}
