//! What the engine records about a run and the analysis reads: the
//! activity graph (kernel events and dependency arcs), CPU time per
//! region, and wildcard-receive matches (R11). Records live here, apart
//! from both, so that the engine (which writes them) and the analysis
//! (which reads them) never import each other.
//!
//! # The activity graph
//!
//! Nodes are the kernel's events at one location, in the order the engine
//! called the kernel: region enters and exits, releases (a send, an unlock,
//! an enqueue, a spawn, a thread's end, and the entry record of an n-to-n
//! collective or a posted receive, R3), and merges. Local arcs weigh the
//! time between consecutive events outside merges: waiting never adds
//! (R7). Dependency arcs run from a release to the merge that consumed it
//! and weigh its transfer time `l_j` in the timestamped form (R5: measured
//! `arrival - t_j` when the merge began before the release, 001 case m.1,
//! otherwise the network's model clipped to `[copy, arrival - t_j]`, case
//! m.2), attributed to the pseudo-region `(transfer)`. An n-to-n collective
//! has an arc from every entry to every exit weighing the synchronisation
//! time `e - max_j b_j` (R6, 001 eq. 13), as `Location::on_collective`
//! does. Releases are named by id, not by time: two releases of one
//! location at the same instant can carry different paths.
//!
//! # CPU time
//!
//! A region's CPU time is the time outside merges while it is open
//! (inclusive) or innermost (exclusive; loops are transparent, R2), summed
//! over locations: on the truth from measured times, online from the
//! timestamped kernel's approximated times (`a = t - x` between events,
//! minus each merge's compensated wait). On the contention-free network it
//! is the compute time; under LogGOPS it includes the CPU overheads `o`.

use std::sync::Arc;

use heisen_core::wildcard::{Match, ReorderDetector};

use crate::program::LocationId;

/// A dependency arc of the activity graph: from a release to a merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The releasing location.
    pub from: LocationId,
    /// Id of the [`Step::Release`] the dependency carries.
    pub release: u64,
    /// Measured release time `t_j` (the record's `a_j + x_j`, R3).
    pub released: u64,
    /// When the dependency was satisfied at the merging location.
    pub arrival: u64,
    /// The network's transfer model for it (R5 case m.2).
    pub model: u64,
    /// Its copy-cost lower bound (001 eq. 6).
    pub copy: u64,
}

impl Edge {
    /// Transfer time `l_j` into a merge that blocked from `begin` to `end`
    /// (R5): measured when the merge began before the release (001 m.1),
    /// else the model clipped to `[copy, arrival - t_j]` (001 m.2, eq. 9-10).
    pub fn transfer(&self, begin: u64, end: u64) -> i64 {
        let upper = self.arrival.min(end) as i64 - self.released as i64;
        if begin <= self.released {
            return upper;
        }
        let lower = (self.copy as i64).min(upper);
        (self.model as i64).max(lower).min(upper)
    }
}

/// One kernel event of a location, in the order the engine called it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A region was entered at measured time `at`.
    Enter {
        /// Region id.
        region: u32,
        /// Clock read.
        at: u64,
    },
    /// A region was left at measured time `at`.
    Exit {
        /// Region id.
        region: u32,
        /// Clock read.
        at: u64,
    },
    /// A record was taken (a release, or the entry record of an n-to-n
    /// collective or a posted receive, R3).
    Release {
        /// Unique id within the run, referred to by [`Edge::release`].
        id: u64,
        /// Clock read.
        at: u64,
    },
    /// A merge blocked from `begin` to `end` on `edges` (R4-R8). A spawned
    /// location's start is a merge with `begin == end` on its creator.
    Merge {
        /// Merge begin.
        begin: u64,
        /// Merge end.
        end: u64,
        /// Its dependencies (shared by the exits of one collective).
        edges: Arc<[Edge]>,
        /// An n-to-n collective or thread barrier (R6): every arc weighs the
        /// synchronisation time `end - max_j released_j`.
        collective: bool,
        /// The timestamped kernel's compensated wait `w'` (R4).
        compensated_wait: i64,
        /// The timestamped kernel's approximated end `a(e)` (R5).
        approximated_end: i64,
    },
}

/// The activity of one location: its kernel events between start and end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocationActivity {
    /// Measured start (0, or a spawned thread's start).
    pub start: u64,
    /// Measured end.
    pub end: u64,
    /// Kernel events in call order.
    pub steps: Vec<Step>,
}

/// Inclusive and exclusive time of one region.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionTime {
    /// While the region is anywhere on the stack (counted once under recursion).
    pub inclusive: i64,
    /// While it is the innermost region (loops are transparent, R2).
    pub exclusive: i64,
}

/// One location's CPU time: in total and per region id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// All time outside merges, in regions or not.
    pub total: i64,
    /// Per region id (shorter than the region list when the last regions
    /// never ran here).
    pub regions: Vec<RegionTime>,
}

/// Per-location CPU time per region, accumulated online from the
/// timestamped kernel's approximated times: the time between kernel
/// events outside merges (R2 intervals minus compensated waits). Regions
/// beyond the kernel's selection are covered too.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuClock {
    open: Vec<u32>,
    last: i64,
    times: CpuTimes,
}

impl CpuClock {
    /// A clock whose location starts at approximated time `start`.
    pub fn new(start: i64) -> Self {
        CpuClock {
            open: Vec::new(),
            last: start,
            times: CpuTimes::default(),
        }
    }

    /// Attributes the work from the last event to `until` to the open regions.
    fn work(&mut self, until: i64) {
        let dt = until - self.last;
        self.last = until;
        self.times.total += dt;
        if dt == 0 || self.open.is_empty() {
            return;
        }
        if let Some(&top) = self.open.last() {
            self.slot(top).exclusive += dt;
        }
        for i in 0..self.open.len() {
            let r = self.open[i];
            // Recursion: a region counts once, at its outermost frame.
            if !self.open[..i].contains(&r) {
                self.slot(r).inclusive += dt;
            }
        }
    }

    fn slot(&mut self, region: u32) -> &mut RegionTime {
        let i = region as usize;
        let regions = &mut self.times.regions;
        if regions.len() <= i {
            regions.resize(i + 1, RegionTime::default());
        }
        &mut regions[i]
    }

    /// Region `region` entered at approximated time `at`.
    pub fn on_enter(&mut self, region: u32, at: i64) {
        self.work(at);
        self.open.push(region);
    }

    /// Region `region` left at approximated time `at`.
    pub fn on_exit(&mut self, region: u32, at: i64) {
        self.work(at);
        if let Some(i) = self.open.iter().rposition(|&r| r == region) {
            self.open.remove(i);
        }
    }

    /// A merge blocked from approximated `begin` to `end`: waiting is not CPU time.
    pub fn on_merge(&mut self, begin: i64, end: i64) {
        self.work(begin);
        self.last = end;
    }

    /// The location ends at approximated time `at`.
    pub fn on_end(&mut self, at: i64) {
        self.work(at);
    }

    /// The times so far.
    pub fn times(&self) -> &CpuTimes {
        &self.times
    }
}

/// Wildcard-receive reorderings of one call site of one location (R11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WildcardSite {
    /// The receiving location.
    pub location: LocationId,
    /// Call site (the receive's instruction index in the location's code).
    pub site: u32,
    /// Matches observed at the site.
    pub matches: u64,
    /// Matches that the approximated arrival times say came out of order.
    pub reorders: u64,
}

/// Call sites a location tracks for reorder detection (R12: bounded).
pub const WILDCARD_SITES: usize = 16;

/// One location's wildcard matches, fed in observed order (R11).
#[derive(Clone, Debug, Default)]
pub struct Wildcards {
    detector: ReorderDetector<WILDCARD_SITES>,
    matches: Vec<(u32, u64)>,
}

impl Wildcards {
    /// Observes a match of the wildcard receive at `site` from `source`
    /// whose message's approximated arrival is `arrival` (R5 `a_j + l_j`)
    /// and whose receive ended at approximated `end`; returns whether the
    /// match is a reordering (R11).
    pub fn observe(&mut self, site: u32, source: LocationId, arrival: i64, end: i64) -> bool {
        match self.matches.iter_mut().find(|m| m.0 == site) {
            Some(m) => m.1 += 1,
            None => self.matches.push((site, 1)),
        }
        // R11, 000 §3.2.2 Fig. 12: would another sender have matched first?
        self.detector.observe(Match {
            site,
            source,
            arrival,
            end,
        })
    }

    /// Per call site, the matches and reorderings seen at `location`.
    pub fn sites(&self, location: LocationId) -> Vec<WildcardSite> {
        self.matches
            .iter()
            .map(|&(site, matches)| WildcardSite {
                location,
                site,
                matches,
                reorders: self.detector.reorders_at(site),
            })
            .collect()
    }
}
