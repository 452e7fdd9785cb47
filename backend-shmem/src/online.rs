//! The thread's side of online costing (R1 measured directly; `probe`):
//! the probed region paths, which keep a light window going or end it,
//! and the end of a light window, which puts its calls into the kernel.
//! Every other action ends a light window first (`ThreadState::settle`,
//! called by `with_current` and `with_current_inline`).

use heisen_core::{Cost, Exited, KernelError};

use crate::probe::{self, Path, Probe};
use crate::thread::ThreadState;

impl ThreadState {
    /// Ends a light window, if one is under way: every action but the
    /// probed region's own enter and exit does this first, so that it sees
    /// the kernel as if every call had been measured (`probe`); and ends a
    /// timed segment with a clock read before anything else.
    #[inline(always)]
    pub fn settle(&mut self) {
        if self.probe.due() {
            self.end_window(None);
        }
    }

    /// Ends the light or timed window under way, for an action that is
    /// not one of its calls: the enter of (`region`, `site`), or another
    /// (`None`).
    #[cold]
    #[inline(never)]
    fn end_window(&mut self, next: Option<(u32, u32)>) {
        if self.probe.is_light() {
            self.end_light(next);
        } else {
            // A timed segment's end: read first, as a light one's is.
            let t = self.now();
            let whole = self.kernel.last_measured() == self.probe.exit_t();
            self.probe.end_timed(t, whole);
            // R1: the bookkeeping's own time, measured directly.
            let done = self.rt.now().max(t);
            self.kernel.on_overhead(done - t);
        }
    }

    /// Puts the calls of the light window that ends now into the kernel:
    /// spread evenly over the window, each as long as the region's mean
    /// compensated inclusive time, charged the light pair (R1, R2); the
    /// time this takes is measured and charged (R1: a cost measured
    /// directly adds its length).
    #[inline(always)]
    pub(crate) fn end_light(&mut self, next: Option<(u32, u32)>) {
        let t = self.now();
        let next = next.map(|(region, site)| probe::key(region, site));
        let Some(e) = self.probe.end_light(t, next) else {
            return; // a forced window (calibration): nothing to keep
        };
        let enter = Cost {
            whole: e.light / 2,
            inside: 0,
        };
        let exit = Cost {
            whole: e.light - enter.whole,
            inside: 0,
        };
        let calls = u64::from(e.calls);
        let mut last = e.start;
        for j in 0..calls {
            let at = e.start + j * e.spacing;
            if let Err(err) = self.kernel.on_enter_costing(e.region, e.site, at, enter) {
                self.errors.count(err);
            }
            if e.open && j + 1 == calls {
                break; // its exit is still to come, measured
            }
            last = at + e.inclusive;
            match self.kernel.on_exit_costing(e.region, last, exit) {
                Ok(Some(x)) => self.stats.record_exit(&x),
                Ok(None) => {}
                Err(err) => self.errors.count(err),
            }
        }
        // An open call's exit is still to come: the next enter is no
        // continuation of the streak.
        self.probe.replayed(if e.open { u64::MAX } else { last });
        // R1: the replay's own time, measured directly.
        let done = self.rt.now().max(e.end);
        self.kernel.on_overhead(done - e.end);
    }

    /// Enters region `region` from `site` by the code path `path`, charging
    /// `cost` (R1, R2) — or, for a region the thread calls hottest, what
    /// the pair costs in this program once measured (`probe`).
    #[inline(always)]
    pub fn enter_probed(&mut self, region: u32, site: u32, cost: Cost, path: Path) {
        if self.probe.due() && !self.probe.timed_goes_on(region, site, true) {
            if self.probe.light_enter(region, site) {
                return;
            }
            self.end_window(Some((region, site)));
        }
        if !self.online {
            let t = self.now();
            self.enter_costing_at(region, site, t, cost);
            return;
        }
        let rt = self.rt;
        // The calibration's own region runs the bookkeeping (so that its
        // cost is calibrated) but never a window.
        let light = || {
            (region != crate::calibrate::SCRATCH_REGION)
                .then(|| rt.light_pair(path))
                .flatten()
        };
        let last = self.kernel.last_measured();
        // The enter's clock read (`ThreadState::now`), taken by the probe
        // unless the call is a light segment's first light call.
        let now = || rt.now().max(last);
        let call = probe::Call { region, site, path };
        match self.probe.on_enter(call, last, cost, light, now) {
            (probe::Enter::Light, _) => {}
            (probe::Enter::Full(c), t) => self.enter_costing_at(region, site, t, c),
        }
    }

    /// Exits region `region` charging `cost` (R1, R2; `probe` as
    /// [`Self::enter_probed`]); a refused exit is counted and returned.
    #[inline(always)]
    pub fn exit_probed(&mut self, region: u32, cost: Cost) -> Result<(), KernelError> {
        if self.exits_lightly(region) {
            return Ok(());
        }
        let t = self.now();
        let exited = self.kernel.on_exit_costing(region, t, cost);
        self.exited_probed(region, t, exited, cost.whole)
    }

    /// An exit of `region` by a probed path, first: `true` when it is a
    /// light window's call (nothing else to do); otherwise a window under
    /// way has ended, unless it is a timed segment and this is the probed
    /// region's own exit.
    #[inline(always)]
    pub(crate) fn exits_lightly(&mut self, region: u32) -> bool {
        if self.probe.due() && !self.probe.timed_goes_on(region, 0, false) {
            if self.probe.light_exit(region) {
                return true;
            }
            self.probe.spoil_if_own(region);
            self.end_window(None);
        }
        false
    }

    /// What an exit by a probed path at `t` gave, charged the start-up
    /// `whole`: noted by the probe (a leaf's exit continues its streak),
    /// then recorded as every exit is ([`ThreadState::exited`]).
    #[inline(always)]
    pub(crate) fn exited_probed(
        &mut self,
        region: u32,
        t: u64,
        exited: Result<Option<Exited>, KernelError>,
        whole: u64,
    ) -> Result<(), KernelError> {
        if self.online {
            self.probe.on_exit(region, t, &exited, whole);
        }
        self.exited(t, exited)
    }

    /// [`Self::enter_probed`] by the Rust API, charging the runtime's
    /// calibrated enter.
    #[inline]
    pub fn enter_rust(&mut self, region: u32, site: u32) {
        let cost = self.kernel.calibration().enter;
        self.enter_probed(region, site, cost, Path::Rust);
    }

    /// [`Self::exit_probed`] by the Rust API, charging the runtime's
    /// calibrated exit.
    #[inline]
    pub fn exit_rust(&mut self, region: u32) -> Result<(), KernelError> {
        let cost = self.kernel.calibration().exit;
        self.exit_probed(region, cost)
    }

    /// Forces a light window on `region` by `path` until the next
    /// settling action, its calls dropped: the start-up calibration of the
    /// light pair (`calibrate::region_pair`).
    pub fn force_light(&mut self, region: u32, path: Path) {
        self.settle();
        self.probe.force_light(region, 0, path);
    }

    /// The online costing's figures for the report.
    pub fn probe(&self) -> &Probe {
        &self.probe
    }
}
