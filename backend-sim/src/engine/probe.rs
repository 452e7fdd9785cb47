//! The instrumentation's kernels: the heisen kernel a location runs in
//! both merge forms (R4 delay-only, R5 timestamped) side by side, the
//! records a dependency carries from its release to its merge (R3), and
//! the sizes of the kernel and of the statistics it fills (R12). How the
//! engine calls them, and what each action costs, is
//! [`instrument`](super::instrument)'s.

use std::rc::Rc;

use heisen_core::report::LocationReport;
use heisen_core::stats::Profile;
use heisen_core::{
    Calibration, Config, Dependency, Exchange, Form, KernelError, Location, Merged, Piggyback,
};

use crate::activity::{CpuClock, Wildcards};

/// Number of selected regions whose critical-path shares and nets travel
/// in every piggyback: the first `SELECTED` regions of the program, in
/// program order (003 §2.2: the profile covers a selected set). 16 covers
/// every built-in scenario; a program with more regions gets an online
/// profile of its first 16 and says so (the analysis'
/// `CpProfile::uncovered`); the offline analysis of the truth still
/// covers all of them.
pub const SELECTED: usize = 16;
/// Region-stack capacity of each kernel location (R12); deeper frames are
/// counted by the kernel, not kept. With `SELECTED = 16`, 32 frames make a
/// kernel 2.3 KiB (it was 3.4 KiB with 4 regions and 64 frames); a
/// location keeps two, one per form. Measured on a 1,024-rank sendrecv
/// and allreduce run with kernels on, 16 regions cost about a quarter of
/// the engine's speed against 4 (merges are O(K)) and no memory; on the
/// enter/exit-heavy master/worker no measurable speed.
pub const DEPTH: usize = 32;

/// Region records per location in a run's report (R12).
pub const REPORT_REGIONS: usize = 32;
/// Communication records per location in a run's report: one per
/// point-to-point call site and peer (R12).
pub const REPORT_COMMS: usize = 32;
/// Loop records per location in a run's report (R12).
pub const REPORT_LOOPS: usize = 16;
/// The bounded statistics the timestamped kernel's exits fill (R12).
pub type SimProfile = Profile<REPORT_REGIONS, REPORT_COMMS, REPORT_LOOPS>;
/// One location's report in the core's report format (`docs/report.md`).
pub type SimReport = LocationReport<SELECTED, REPORT_REGIONS, REPORT_COMMS, REPORT_LOOPS>;

/// The kernel location type the simulator drives.
pub type Kernel = Location<SELECTED, DEPTH>;

/// The piggybacks of both forms that one dependency carries (R3), shared
/// (not copied) between the places that keep it, so that a message or a
/// posted receive costs a pointer, not two records, when kernels are off.
pub(super) type Pbs = Rc<Records>;

/// The piggybacks of both forms that one dependency carries (R3).
#[derive(Clone, Copy, Debug)]
pub(super) struct Records {
    /// Names the release in the activity graph
    /// ([`Step::Release`](crate::activity::Step::Release)).
    pub(super) id: u64,
    pub(super) timestamped: Piggyback<SELECTED>,
    pub(super) delay_only: Piggyback<SELECTED>,
}

/// A dependency as the engine stores it until the merge.
#[derive(Clone, Debug)]
pub(super) struct Dep {
    pub(super) pbs: Pbs,
    /// The transfer model (R5 case m.2).
    pub(super) model: u64,
    /// The copy-cost lower bound of the transfer (001 eq. 6).
    pub(super) copy: u64,
    /// When the dependency was satisfied at the merging location: the
    /// kernel measures each transfer from it (R5 with several dependencies)
    /// and the trace draws its edge there.
    pub(super) arrived: u64,
}

/// The kernels of one location: both merge forms side by side.
#[derive(Clone, Debug)]
pub(super) struct Probe {
    pub(super) timestamped: Kernel,
    pub(super) delay_only: Kernel,
    /// The timestamped kernel's exits, for the report (R12).
    pub(super) profile: SimProfile,
    /// CPU time per region from the timestamped kernel's times.
    pub(super) cpu: CpuClock,
    /// Wildcard matches and reorderings (R11), once there is one.
    pub(super) wildcards: Option<Box<Wildcards>>,
    /// Next release id of this location.
    next_release: u64,
}

impl Probe {
    pub(super) fn new(
        id: u32,
        selected: [u32; SELECTED],
        calibration: Calibration,
        start: u64,
    ) -> Self {
        let config = Config::new(id, selected).calibration(calibration);
        Probe {
            timestamped: Location::new(config.form(Form::Timestamped), start),
            delay_only: Location::new(config.form(Form::DelayOnly), start),
            profile: SimProfile::new(),
            cpu: CpuClock::new(start as i64),
            wildcards: None,
            next_release: u64::from(id) << 32,
        }
    }

    fn next_id(&mut self) -> u64 {
        self.next_release += 1;
        self.next_release
    }

    /// Region `region` entered at `now`, call site `site` (R1, R7).
    pub(super) fn on_enter(&mut self, region: u32, site: u32, now: u64) -> Result<(), KernelError> {
        self.both(|k| k.on_enter(region, site, now))?;
        self.cpu
            .on_enter(region, self.timestamped.last_approximated());
        Ok(())
    }

    /// Region `region` left at `now`; its exit goes to the statistics (R12).
    pub(super) fn on_exit(&mut self, region: u32, now: u64) -> Result<(), KernelError> {
        let (exited, _) = self.both(|k| k.on_exit(region, now))?;
        if let Some(e) = exited {
            self.profile.record_exit(&e);
        }
        self.cpu
            .on_exit(region, self.timestamped.last_approximated());
        Ok(())
    }

    /// Loop `id` entered at `now`, call site `site`: one frame (R12).
    pub(super) fn on_loop_enter(
        &mut self,
        id: u32,
        site: u32,
        now: u64,
    ) -> Result<(), KernelError> {
        self.both(|k| k.on_loop_enter(id, site, now))?;
        Ok(())
    }

    /// Loop `id` left at `now`.
    pub(super) fn on_loop_exit(&mut self, id: u32, now: u64) -> Result<(), KernelError> {
        let (exited, _) = self.both(|k| k.on_loop_exit(id, now))?;
        if let Some(e) = exited {
            self.profile.record_exit(&e);
        }
        Ok(())
    }

    /// The location starts at `start`, spawned by a release that carried
    /// `parent` (R8: spawn is a release that the child's start merges);
    /// its CPU clock starts at the approximated start.
    pub(super) fn on_spawned(&mut self, start: u64, parent: &Records) -> Result<(), KernelError> {
        self.timestamped
            .on_start(start, &Dependency::immediate(&parent.timestamped))?;
        self.delay_only
            .on_start(start, &Dependency::immediate(&parent.delay_only))?;
        self.cpu = CpuClock::new(self.timestamped.last_approximated());
        Ok(())
    }

    /// Applies `f` to the timestamped kernel, then to the delay-only one.
    fn both<T>(
        &mut self,
        mut f: impl FnMut(&mut Kernel) -> Result<T, KernelError>,
    ) -> Result<(T, T), KernelError> {
        let a = f(&mut self.timestamped)?;
        let b = f(&mut self.delay_only)?;
        Ok((a, b))
    }

    /// A release at `t` (R3): both kernels' records.
    pub(super) fn release(&mut self, t: u64) -> Result<Pbs, KernelError> {
        let (timestamped, delay_only) = self.both(|k| k.on_release(t))?;
        Ok(Rc::new(Records {
            id: self.next_id(),
            timestamped,
            delay_only,
        }))
    }

    /// The records a release at `t` would carry, the kernels unchanged.
    pub(super) fn peek(&mut self, t: u64) -> Pbs {
        Rc::new(Records {
            id: self.next_id(),
            timestamped: self.timestamped.peek(t),
            delay_only: self.delay_only.peek(t),
        })
    }

    /// Both forms merge; returns the timestamped form's outcome.
    pub(super) fn merge(
        &mut self,
        begin: u64,
        end: u64,
        deps: &[Dep],
    ) -> Result<Merged, KernelError> {
        let ts: Vec<Dependency<'_, SELECTED>> = deps
            .iter()
            .map(|d| Dependency::message(&d.pbs.timestamped, d.model, d.copy).arrived(d.arrived))
            .collect();
        let merged = self.timestamped.on_merge(begin, end, &ts)?;
        let dly: Vec<Dependency<'_, SELECTED>> = deps
            .iter()
            .map(|d| Dependency::message(&d.pbs.delay_only, d.model, d.copy).arrived(d.arrived))
            .collect();
        self.delay_only.on_merge(begin, end, &dly)?;
        Ok(merged)
    }

    /// Completes an n-to-n collective given the reduction of every
    /// participant's entry record, one per form (R6).
    pub(super) fn collective(
        &mut self,
        begin: u64,
        end: u64,
        folded: &(Exchange<SELECTED>, Exchange<SELECTED>),
    ) -> Result<Merged, KernelError> {
        let merged = self.timestamped.on_collective(begin, end, &folded.0)?;
        self.delay_only.on_collective(begin, end, &folded.1)?;
        Ok(merged)
    }
}

/// The dependency a merge has on one release, when it carries records
/// (kernels on): none otherwise.
pub(super) fn dep_of(pbs: Option<Pbs>, model: u64, arrived: u64) -> Vec<Dep> {
    pbs.map(|pbs| Dep {
        pbs,
        model,
        copy: 0,
        arrived,
    })
    .into_iter()
    .collect()
}
