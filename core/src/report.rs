//! The report data model every backend writes and the `heisen` CLI reads:
//! a run header, the region names, and one record per location with its
//! compensated times (R2, R4, R5), critical path (R7), bounded statistics
//! (R12) and reorderings (R11).
//!
//! The types here are the elements of the report file; with the `serde`
//! feature they serialise without allocating (`heapless::Vec` and
//! `heapless::String` with heapless's serde support). A report file is one
//! JSON object
//!
//! ```text
//! { "header": RunHeader, "regions": [RegionName, ...], "locations": [LocationReport, ...] }
//! ```
//!
//! which [`ReportFile`] writes from borrowed slices; backends with a heap
//! read it back into their own struct with `Vec` fields of these element
//! types. `docs/report.md` documents every field with its unit and sign.
//! All times are integer nanoseconds.

use core::fmt::Write as _;

use heapless::{String, Vec};

use crate::calibration::Calibration;
use crate::merge::Form;
use crate::path::Snapshot;
use crate::stats::{CommKey, CommRecord, LoopRecord, Profile, RegionKey, RegionRecord};

/// Version of the report format written in [`RunHeader::version`].
pub const VERSION: u32 = 1;

/// Tool name written in [`RunHeader::tool`].
pub const TOOL: &str = "heisen";

/// Longest region name, in bytes: room for most demangled C++ member
/// function signatures (a container's `push_back` with its template
/// arguments spelled out is about 60). Longer names are cut by
/// [`region_name`] so that they stay apart.
pub const REGION_NAME_LEN: usize = 256;

/// The name a merged report gives share slot `k` when the processes it
/// merges selected different regions in that slot (R7: a share is region
/// `k` of whichever location computed it, and shares travel between
/// locations, so such a slot mixes regions). Not a region's name: region
/// names come from programs, and this one is in parentheses like the
/// report's other pseudo-regions.
pub const MIXED_SLOT: &str = "(differs by rank)";

/// Longest location name, in bytes.
pub const LOCATION_NAME_LEN: usize = 32;

/// Longest backend or tool name, in bytes.
pub const BACKEND_LEN: usize = 16;

/// Longest clock or action name, in bytes.
pub const ACTION_LEN: usize = 32;

/// Most calibrated actions a header lists.
pub const MAX_ACTIONS: usize = 64;

/// Why a report value could not be built or was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReportError {
    /// A name is longer than its fixed capacity.
    NameTooLong,
    /// More selected regions than the report has room for (`K`).
    TooManySelected,
    /// More calibrated actions than [`MAX_ACTIONS`].
    TooManyActions,
    /// The header names another tool than [`TOOL`].
    ForeignTool,
    /// The header has a format version this code does not read.
    UnsupportedVersion(u32),
}

impl core::fmt::Display for ReportError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ReportError::NameTooLong => f.write_str("name longer than its fixed capacity"),
            ReportError::TooManySelected => {
                f.write_str("more selected regions than the report holds")
            }
            ReportError::TooManyActions => {
                write!(f, "more than {MAX_ACTIONS} calibrated actions")
            }
            ReportError::ForeignTool => f.write_str("report was not written by heisen"),
            ReportError::UnsupportedVersion(v) => {
                write!(f, "unsupported report version {v} (expected {VERSION})")
            }
        }
    }
}

impl core::error::Error for ReportError {}

/// A fixed-capacity copy of `s`, or [`ReportError::NameTooLong`].
fn bounded<const N: usize>(s: &str) -> Result<String<N>, ReportError> {
    String::try_from(s).map_err(|_| ReportError::NameTooLong)
}

/// The longest prefix of `s` that fits in `N` bytes, cut at a character
/// boundary, for backends that prefer a shortened name to an error.
pub fn truncated<const N: usize>(s: &str) -> String<N> {
    let mut out = String::new();
    // Cannot fail: the prefix is at most `N` bytes.
    let _ = out.push_str(&s[..floor_boundary(s, N)]);
    out
}

/// `s` as a region name: whole if it fits in [`REGION_NAME_LEN`] bytes,
/// else its longest prefix that leaves room for `…#` and 16 hex digits of
/// a hash of the whole name (FNV-1a, 64 bits). Names are how reports of
/// several processes are merged, so two functions whose long names share
/// a prefix (template instances) must not come out the same.
pub fn region_name(s: &str) -> String<REGION_NAME_LEN> {
    cut_name::<REGION_NAME_LEN>(s)
}

/// `s` in `N` bytes the way [`region_name`] cuts it to
/// [`REGION_NAME_LEN`]: whole if it fits, else a prefix, `…#` and the
/// whole name's hash (the monitor's shorter names, `N` = 64). `N` must
/// leave room for the hash and some prefix (checked when compiled).
pub fn cut_name<const N: usize>(s: &str) -> String<N> {
    const SUFFIX: usize = "…#".len() + 16;
    const { assert!(N > SUFFIX + 8, "a cut name needs room for its hash") };
    if s.len() <= N {
        return truncated::<N>(s);
    }
    let mut out = truncated::<N>(&s[..floor_boundary(s, N - SUFFIX)]);
    // Cannot fail: the prefix leaves SUFFIX bytes.
    let _ = write!(out, "…#{:016x}", crate::hash::fnv1a(s.as_bytes()));
    out
}

/// The largest character boundary of `s` at or below `at`.
pub(crate) fn floor_boundary(s: &str, at: usize) -> usize {
    let mut end = at.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1; // terminates: 0 is always a boundary
    }
    end
}

/// A region id and its name, as listed in the file's `regions` array and
/// the header's `selected` array.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RegionName {
    /// Region id, as in [`RegionEntry::region`].
    pub id: u32,
    /// Region name, at most [`REGION_NAME_LEN`] bytes.
    pub name: String<REGION_NAME_LEN>,
}

impl RegionName {
    /// Region `id` called `name`; fails when `name` is too long.
    pub fn new(id: u32, name: &str) -> Result<Self, ReportError> {
        Ok(RegionName {
            id,
            name: bounded(name)?,
        })
    }
}

/// What the whole run shares: format version, tool, backend, merge form
/// and the `K` regions selected for critical-path shares (R7).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RunHeader<const K: usize> {
    /// Report format version, [`VERSION`].
    pub version: u32,
    /// Tool name, [`TOOL`].
    pub tool: String<BACKEND_LEN>,
    /// Backend that wrote the report: `sim`, `shmem`, `mpi`, ...
    pub backend: String<BACKEND_LEN>,
    /// Merge form of the run (R4 or R5).
    pub form: Form,
    /// The selected regions, in share index order: entry `k` is the region
    /// whose share is `inclusive[k]`, `exclusive[k]`, `net[k]` (R7).
    pub selected: Vec<RegionName, K>,
    /// The clock every time in the file was read from (`tsc`, `tsc_node`,
    /// `clock_monotonic`, `simulated`); absent in files of older writers.
    #[cfg_attr(feature = "serde", serde(default))]
    pub clock: Option<String<ACTION_LEN>>,
    /// The calibrated costs the kernel charged (R1); absent where the
    /// writer did not calibrate.
    #[cfg_attr(feature = "serde", serde(default))]
    pub calibration: Option<Calibration>,
    /// Every calibrated instrumentation action of the backend by name
    /// (R1: `enter`, `exit`, `mutex_acquire`, …), with the part inside the
    /// region or after the clock read.
    #[cfg_attr(feature = "serde", serde(default))]
    pub actions: Vec<ActionCost, MAX_ACTIONS>,
}

/// The calibrated cost of one named instrumentation action (R1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ActionCost {
    /// The action, e.g. `enter`, `mutex_acquire`.
    pub action: String<ACTION_LEN>,
    /// Its whole cost, ns.
    pub whole: u64,
    /// The part of `whole` after the action's clock read (for an exit:
    /// before it), ns: inside the region's own interval, or after the
    /// merge's end.
    pub inside: u64,
}

impl<const K: usize> RunHeader<K> {
    /// A header of the current version for `backend` and `form`, with no
    /// region selected yet.
    pub fn new(backend: &str, form: Form) -> Result<Self, ReportError> {
        Ok(RunHeader {
            version: VERSION,
            tool: bounded(TOOL)?,
            backend: bounded(backend)?,
            form,
            selected: Vec::new(),
            clock: None,
            calibration: None,
            actions: Vec::new(),
        })
    }

    /// Names the clock the times were read from.
    pub fn set_clock(&mut self, clock: &str) -> Result<(), ReportError> {
        self.clock = Some(bounded(clock)?);
        Ok(())
    }

    /// Appends a calibrated action; fails when a name is too long or
    /// [`MAX_ACTIONS`] are listed already.
    pub fn add_action(&mut self, action: &str, whole: u64, inside: u64) -> Result<(), ReportError> {
        let cost = ActionCost {
            action: bounded(action)?,
            whole,
            inside,
        };
        self.actions
            .push(cost)
            .map_err(|_| ReportError::TooManyActions)
    }

    /// Appends the next selected region (share index `selected.len()`).
    pub fn select(&mut self, id: u32, name: &str) -> Result<(), ReportError> {
        let region = RegionName::new(id, name)?;
        self.selected
            .push(region)
            .map_err(|_| ReportError::TooManySelected)
    }

    /// Whether a header read from a file is one this code understands.
    pub fn check(&self) -> Result<(), ReportError> {
        if self.tool.as_str() != TOOL {
            return Err(ReportError::ForeignTool);
        }
        if self.version != VERSION {
            return Err(ReportError::UnsupportedVersion(self.version));
        }
        Ok(())
    }
}

/// One region record with its key (R12, 002 §6.3 PROC record). Times in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RegionEntry {
    /// Region id.
    pub region: u32,
    /// Call site id that entered the region.
    pub site: u32,
    /// Instances that ended (recursive re-entries folded, 002 Fig. 11).
    pub count: u64,
    /// Sum of measured inclusive times.
    pub measured_inclusive: u64,
    /// Sum of measured exclusive times.
    pub measured_exclusive: u64,
    /// Sum of compensated inclusive times (R2); negative is over-compensation.
    pub inclusive: i64,
    /// Sum of compensated exclusive times (R2); negative is over-compensation.
    pub exclusive: i64,
}

impl From<(RegionKey, &RegionRecord)> for RegionEntry {
    fn from((key, r): (RegionKey, &RegionRecord)) -> Self {
        RegionEntry {
            region: key.region,
            site: key.site,
            count: r.count,
            measured_inclusive: r.measured_inclusive,
            measured_exclusive: r.measured_exclusive,
            inclusive: r.inclusive,
            exclusive: r.exclusive,
        }
    }
}

/// One communication record with its key (R12, 002 §6.3 COM record).
/// Times in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CommEntry {
    /// Call site id of the communication call.
    pub site: u32,
    /// The other location: destination of a send, source of a receive.
    pub peer: u32,
    /// Calls.
    pub count: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Sum of measured waits.
    pub measured_wait: u64,
    /// Sum of compensated waits (R4); negative is over-compensation.
    pub compensated_wait: i64,
    /// Sum of transfer estimates (R5).
    pub transfer: i64,
    /// Reordered wildcard matches (R11).
    pub reorders: u64,
}

impl From<(CommKey, &CommRecord)> for CommEntry {
    fn from((key, r): (CommKey, &CommRecord)) -> Self {
        CommEntry {
            site: key.site,
            peer: key.peer,
            count: r.count,
            bytes: r.bytes,
            measured_wait: r.measured_wait,
            compensated_wait: r.compensated_wait,
            transfer: r.transfer,
            reorders: r.reorders,
        }
    }
}

/// One loop record with its id (R12, 002 §6.3 LOOP record). Times in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LoopEntry {
    /// Loop id.
    pub id: u32,
    /// Loop instances that ended.
    pub count: u64,
    /// Sum of measured times.
    pub measured: u64,
    /// Sum of compensated times (R2); negative is over-compensation.
    pub compensated: i64,
}

impl From<(u32, &LoopRecord)> for LoopEntry {
    fn from((id, r): (u32, &LoopRecord)) -> Self {
        LoopEntry {
            id,
            count: r.count,
            measured: r.measured,
            compensated: r.compensated,
        }
    }
}

/// A location's critical-path values `(L, s, n)` (R7, 003 §2). Share
/// index `k` is the header's `selected[k]`. Times in ns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CriticalPath<const K: usize> {
    /// Critical-path length `L`.
    pub longest: i64,
    /// Part of `L` spent in transfers, the `(transfer)` pseudo-region (R7).
    pub transfer: i64,
    /// Inclusive share `s[k]`: part of `L` while region `k` was active anywhere on the stack.
    pub inclusive: Vec<i64, K>,
    /// Exclusive share: part of `L` while region `k` was on top of the stack.
    pub exclusive: Vec<i64, K>,
    /// Net length `n[k]`: `L` with region `k` counted as zero (003 §2.4, zeroing).
    pub net: Vec<i64, K>,
}

impl<const K: usize> CriticalPath<K> {
    /// The values as plain arrays.
    pub fn new(
        longest: i64,
        transfer: i64,
        inclusive: [i64; K],
        exclusive: [i64; K],
        net: [i64; K],
    ) -> Self {
        CriticalPath {
            longest,
            transfer,
            inclusive: Vec::from_array(inclusive),
            exclusive: Vec::from_array(exclusive),
            net: Vec::from_array(net),
        }
    }

    /// The values of a snapshot, or `None` when the location never
    /// collected critical-path data (R9).
    pub fn of_snapshot(s: &Snapshot<K>) -> Option<Self> {
        s.active
            .then(|| CriticalPath::new(s.longest, s.transfer, s.inclusive, s.exclusive, s.net))
    }
}

/// Records dropped because a fixed-capacity table was full (R12: overflow
/// is counted and reported).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OverflowCounts {
    /// Region records dropped.
    pub regions: u64,
    /// Communication records dropped.
    pub comms: u64,
    /// Loop records dropped.
    pub loops: u64,
    /// Region-stack frames that did not fit on the location's stack.
    pub frames: u64,
    /// Wildcard matches at call sites the reorder detector had no room for
    /// (R11 checks skipped).
    pub sites: u64,
}

/// Intervals whose compensated time came out negative (R2: reported, never
/// clamped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Overcompensation {
    /// How many intervals were negative.
    pub count: u64,
    /// Sum of those negative lengths, ns (`<= 0`).
    pub total: i64,
}

/// The plain per-location values [`LocationReport::from_profile`] takes
/// besides the statistics tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocationValues<'a, const K: usize> {
    /// Location id (rank, thread index).
    pub location: u32,
    /// Human-readable name, at most [`LOCATION_NAME_LEN`] bytes.
    pub name: Option<&'a str>,
    /// Merge form used at this location.
    pub form: Form,
    /// Measured time the location began (same clock as `measured_end`).
    pub start: u64,
    /// Approximated time the location began: `start` minus the delay it
    /// inherited (a spawned thread starts with its creator's), R8.
    pub approximated_start: i64,
    /// Measured end time `t`.
    pub measured_end: u64,
    /// Approximated end time `a = t - x`.
    pub approximated_end: i64,
    /// Final delay `x`.
    pub delay: u64,
    /// The location's own instrumentation cost (R1), the sum local-only
    /// compensation subtracts.
    pub overhead: u64,
    /// Critical-path values, `None` if never collected (R9).
    pub critical_path: Option<CriticalPath<K>>,
    /// Region-stack frames dropped because the stack was full.
    pub frames_dropped: u64,
    /// Wildcard matches whose site the reorder detector could not track.
    pub sites_dropped: u64,
    /// Negative compensated intervals.
    pub overcompensation: Overcompensation,
}

/// Everything one location reports. `K` selected regions, at most `R`
/// region, `C` communication and `L` loop entries. Times in ns.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LocationReport<const K: usize, const R: usize, const C: usize, const L: usize> {
    /// Location id (rank, thread index).
    pub location: u32,
    /// Human-readable name, if any.
    pub name: Option<String<LOCATION_NAME_LEN>>,
    /// Merge form used at this location (R4 delay-only or R5 timestamped).
    pub form: Form,
    /// Measured time the location began, same clock as `measured_end`;
    /// `measured_end - start` is its measured elapsed time. Files of older
    /// writers lack it: read as 0.
    #[cfg_attr(feature = "serde", serde(default))]
    pub start: u64,
    /// Approximated time the location began, `start` minus the delay it
    /// started with (a spawned thread inherits its creator's, R8);
    /// `approximated_end - approximated_start` is its compensated elapsed
    /// time. Read as 0 from files of older writers.
    #[cfg_attr(feature = "serde", serde(default))]
    pub approximated_start: i64,
    /// Measured end time `t`.
    pub measured_end: u64,
    /// Approximated end time `a = t - x` (R4, R5); `measured_end - delay`.
    pub approximated_end: i64,
    /// Final delay `x >= 0`.
    pub delay: u64,
    /// The location's own instrumentation cost, the sum of every
    /// calibrated action charged here (R1) whatever merges later did to
    /// the delay: what local-only compensation subtracts (seed 000
    /// Table 1). Read as 0 from files of older writers.
    #[cfg_attr(feature = "serde", serde(default))]
    pub overhead: u64,
    /// Critical-path values (R7), `None` when never collected (R9).
    pub critical_path: Option<CriticalPath<K>>,
    /// Region records (R12).
    pub regions: Vec<RegionEntry, R>,
    /// Communication records (R12).
    pub comms: Vec<CommEntry, C>,
    /// Loop records (R12).
    pub loops: Vec<LoopEntry, L>,
    /// Records dropped because a table was full (R12).
    pub overflow: OverflowCounts,
    /// Negative compensated intervals (R2).
    pub overcompensation: Overcompensation,
}

impl<const K: usize, const R: usize, const C: usize, const L: usize> LocationReport<K, R, C, L> {
    /// Measured elapsed time, `measured_end - start`.
    pub fn measured_elapsed(&self) -> u64 {
        self.measured_end.saturating_sub(self.start)
    }

    /// Compensated elapsed time, `approximated_end - approximated_start`
    /// (R2). Negative only if over-compensated.
    pub fn compensated_elapsed(&self) -> i64 {
        self.approximated_end - self.approximated_start
    }

    /// Local-only estimate of the elapsed time: measured minus the
    /// location's own overhead, as a profiler that compensates only
    /// locally would report it (seed 000 Table 1, "local").
    pub fn local_only_elapsed(&self) -> i64 {
        self.measured_elapsed() as i64 - self.overhead as i64
    }

    /// The report of one location from its statistics tables and final
    /// values. Fails only when the name is too long.
    pub fn from_profile(
        values: LocationValues<'_, K>,
        profile: &Profile<R, C, L>,
    ) -> Result<Self, ReportError> {
        let name = match values.name {
            Some(n) => Some(bounded(n)?),
            None => None,
        };
        let dropped = profile.overflow();
        let mut overflow = OverflowCounts {
            regions: dropped.regions,
            comms: dropped.comms,
            loops: dropped.loops,
            frames: values.frames_dropped,
            sites: values.sites_dropped,
        };
        // The tables hold at most R, C, L records, so every push fits; a
        // failed push would still be counted, never a panic (R12).
        let mut regions = Vec::new();
        for entry in profile.regions() {
            if regions.push(RegionEntry::from(entry)).is_err() {
                overflow.regions = overflow.regions.saturating_add(1);
            }
        }
        let mut comms = Vec::new();
        for entry in profile.comms() {
            if comms.push(CommEntry::from(entry)).is_err() {
                overflow.comms = overflow.comms.saturating_add(1);
            }
        }
        let mut loops = Vec::new();
        for entry in profile.loops() {
            if loops.push(LoopEntry::from(entry)).is_err() {
                overflow.loops = overflow.loops.saturating_add(1);
            }
        }
        Ok(LocationReport {
            location: values.location,
            name,
            form: values.form,
            start: values.start,
            approximated_start: values.approximated_start,
            measured_end: values.measured_end,
            approximated_end: values.approximated_end,
            delay: values.delay,
            overhead: values.overhead,
            critical_path: values.critical_path,
            regions,
            comms,
            loops,
            overflow,
            overcompensation: values.overcompensation,
        })
    }
}

/// A whole report file borrowed from its parts, for writing it in one go:
/// `{ "header": ..., "regions": [...], "locations": [...] }`. Readers with
/// a heap deserialise the same shape into `Vec`s of the element types.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ReportFile<'a, const K: usize, const R: usize, const C: usize, const L: usize> {
    /// The run header.
    pub header: &'a RunHeader<K>,
    /// Names of all regions that appear in any location's records.
    pub regions: &'a [RegionName],
    /// One report per location.
    pub locations: &'a [LocationReport<K, R, C, L>],
}
