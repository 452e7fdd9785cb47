//! The result of a run, assembled from the locations' final state when
//! the event loop is done: end times, the kernels' estimates and critical
//! paths, their reports (R12), CPU times, wildcard reorderings (R11), and
//! what the [`Recorder`](super::record::Recorder) kept.

use heisen_core::Form;
use heisen_core::Snapshot;
use heisen_core::report::{CriticalPath, LOCATION_NAME_LEN, LocationReport, LocationValues};

use crate::activity::{CpuTimes, LocationActivity, WildcardSite};
use crate::program::LocationId;

use super::probe::{Probe, SELECTED, SimProfile, SimReport};
use super::record::TraceEvent;
use super::world::{Loc, World};

/// What the kernels say about one location at its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimates {
    /// Measured end (no compensation).
    pub measured: u64,
    /// Measured end minus the location's own overhead (TAU-style local-only).
    pub local_only: i64,
    /// Approximated end by the delay-only form (R4).
    pub delay_only: i64,
    /// Approximated end by the timestamped form (R5).
    pub timestamped: i64,
    /// The location's own instrumentation overhead.
    pub overhead: u64,
}

/// The outcome of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// End time of every location.
    pub ends: Vec<u64>,
    /// Events processed.
    pub events: u64,
    /// Kernel estimates per location (when kernels ran).
    pub estimates: Option<Vec<Estimates>>,
    /// Online critical path (timestamped form) per location at its end.
    pub paths: Option<Vec<Snapshot<SELECTED>>>,
    /// Per-operation trace, when requested.
    pub trace: Option<Vec<TraceEvent>>,
    /// Per location, the timestamped kernel's report (R12 statistics, final
    /// delay, critical path), when kernels ran.
    pub reports: Option<Vec<SimReport>>,
    /// The approximated begin and end (timestamped form, `a = t - x`) of
    /// every trace event, index for index, when a trace was kept with
    /// kernels. Overhead events have no meaning here.
    pub approximated: Option<Vec<(i64, i64)>>,
    /// Per location, its kernel events as the activity graph of the run
    /// ([`crate::activity`]), when a trace was kept with kernels.
    pub activity: Option<Vec<LocationActivity>>,
    /// Per location, CPU time per region id from the timestamped kernel's
    /// times (waiting excluded), when kernels ran.
    pub cpu: Option<Vec<CpuTimes>>,
    /// Wildcard receive call sites with their matches and the reorderings
    /// the timestamped kernel's approximated arrivals reveal (R11).
    pub wildcards: Vec<WildcardSite>,
    /// Messages that arrived but no receive ever took, at most
    /// [`UNRECEIVED_LISTED`] of them listed: `(sender, receiver, tag,
    /// bytes)`, and how many in all (MPI leaves them at finalize; a
    /// program's bug the CLI warns about).
    pub unreceived: (u64, Vec<(LocationId, LocationId, u32, u64)>),
}

/// How many unreceived messages a [`RunResult`] lists.
pub const UNRECEIVED_LISTED: usize = 8;

/// The result of the run `w` ended.
pub(super) fn assemble(w: World<'_>) -> RunResult {
    let kernels = w.options.kernels;
    let locs = &w.locs;
    let activity = w.recorder.activity.map(|mut log| {
        for (a, l) in log.iter_mut().zip(locs) {
            a.end = l.end.unwrap_or(0);
        }
        log
    });
    let selected = w.program.regions.len().min(SELECTED);
    RunResult {
        ends: locs.iter().map(|l| l.end.unwrap_or(0)).collect(),
        events: w.events,
        estimates: kernels.then(|| locs.iter().map(|l| estimates(&Ended::of(l))).collect()),
        paths: kernels.then(|| locs.iter().map(|l| path(&Ended::of(l))).collect()),
        trace: w.recorder.trace,
        reports: kernels.then(|| {
            locs.iter()
                .enumerate()
                .map(|(i, l)| {
                    report_of(
                        i as u32,
                        &w.program.locations[i].name,
                        &Ended::of(l),
                        selected,
                    )
                })
                .collect()
        }),
        approximated: w.recorder.approximated,
        activity,
        cpu: kernels.then(|| locs.iter().map(|l| cpu(&Ended::of(l))).collect()),
        wildcards: locs
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                let wildcards = l.probe.as_ref()?.wildcards.as_ref()?;
                Some(wildcards.sites(i as LocationId))
            })
            .flatten()
            .collect(),
        unreceived: unreceived(locs),
    }
}

/// The messages left in the locations' unexpected queues.
fn unreceived(locs: &[Loc]) -> (u64, Vec<(LocationId, LocationId, u32, u64)>) {
    let mut count = 0;
    let mut listed = Vec::new();
    for (to, l) in locs.iter().enumerate() {
        for m in l.matching.unexpected() {
            count += 1;
            if listed.len() < UNRECEIVED_LISTED {
                listed.push((m.from, to as LocationId, m.tag, m.bytes));
            }
        }
    }
    (count, listed)
}

/// What the result reads of a location that ended: its end, its kernels
/// and its own instrumentation time (a program's location or a GOAL rank).
#[derive(Clone, Copy, Debug)]
pub(super) struct Ended<'a> {
    pub(super) end: Option<u64>,
    pub(super) probe: Option<&'a Probe>,
    pub(super) overhead: u64,
}

impl<'a> Ended<'a> {
    fn of(l: &'a Loc) -> Self {
        Ended {
            end: l.end,
            probe: l.probe.as_deref(),
            overhead: l.overhead,
        }
    }
}

/// What the kernels of `l` say about its end.
pub(super) fn estimates(l: &Ended<'_>) -> Estimates {
    let end = l.end.unwrap_or(0);
    let (ts, dly) = l
        .probe
        .map_or((0, 0), |p| (p.timestamped.delay(), p.delay_only.delay()));
    Estimates {
        measured: end,
        local_only: end as i64 - l.overhead as i64,
        delay_only: end as i64 - dly as i64,
        timestamped: end as i64 - ts as i64,
        overhead: l.overhead,
    }
}

/// R7: the path at the location's end, trailing work included.
pub(super) fn path(l: &Ended<'_>) -> Snapshot<SELECTED> {
    l.probe.map_or(Snapshot::ZERO, |p| {
        let end = l.end.unwrap_or(0).max(p.timestamped.last_measured());
        Snapshot::of_piggyback(&p.timestamped.peek(end)).unwrap_or_else(|| p.timestamped.snapshot())
    })
}

/// CPU time per region, up to the location's end.
pub(super) fn cpu(l: &Ended<'_>) -> CpuTimes {
    l.probe.map_or_else(CpuTimes::default, |p| {
        let mut clock = p.cpu.clone();
        let end = l.end.unwrap_or(0).max(p.timestamped.last_measured());
        clock.on_end(end as i64 - p.timestamped.delay() as i64);
        clock.times().clone()
    })
}
/// The report of one location: its timestamped kernel's values at the
/// location's end, with the critical-path arrays cut to the `selected`
/// regions that the header lists.
pub(super) fn report_of(id: u32, name: &str, loc: &Ended<'_>, selected: usize) -> SimReport {
    let end = loc.end.unwrap_or(0);
    let name = heisen_core::report::truncated::<LOCATION_NAME_LEN>(name);
    let empty = SimProfile::new();
    let (delay, overhead, path, frames, overcompensation, profile) = match loc.probe {
        Some(p) => {
            let k = &p.timestamped;
            (
                k.delay(),
                k.overhead(),
                // The path up to the location's end, not its last kernel
                // event: trailing work is on it too (as in RunResult::paths).
                Snapshot::of_piggyback(&k.peek(end))
                    .and_then(|s| CriticalPath::of_snapshot(&s))
                    .map(|mut path| {
                        path.inclusive.truncate(selected);
                        path.exclusive.truncate(selected);
                        path.net.truncate(selected);
                        path
                    }),
                k.lost_frames(),
                {
                    let o = k.overcompensation();
                    heisen_core::report::Overcompensation {
                        count: o.count,
                        total: o.total,
                    }
                },
                &p.profile,
            )
        }
        None => (0, 0, None, 0, Default::default(), &empty),
    };
    let values = LocationValues {
        location: id,
        name: Some(name.as_str()),
        form: Form::Timestamped,
        // Every simulated location begins at time 0.
        start: 0,
        approximated_start: 0,
        measured_end: end,
        approximated_end: end as i64 - delay as i64,
        delay,
        overhead,
        critical_path: path,
        frames_dropped: frames,
        sites_dropped: 0,
        overcompensation,
    };
    // The name was truncated to fit, the only reason from_profile fails.
    LocationReport::from_profile(values, profile).unwrap_or_else(|_| LocationReport {
        location: id,
        name: None,
        form: Form::Timestamped,
        start: 0,
        approximated_start: 0,
        measured_end: end,
        approximated_end: end as i64 - delay as i64,
        delay,
        overhead,
        critical_path: None,
        regions: Default::default(),
        comms: Default::default(),
        loops: Default::default(),
        overflow: Default::default(),
        overcompensation,
    })
}
