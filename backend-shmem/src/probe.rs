//! Online costing of a region pair inside the program that runs it (R1,
//! measured directly; docs/rules.md, R1, "a hot leaf's pair is costed in
//! the running program").
//!
//! A start-up calibration times an enter+exit pair back to back or
//! between pieces of generic work ([`crate::calibrate::in_situ`]). What a
//! pair costs the *program* also depends on the program's own code around
//! it: a clock read (`rdtsc`) waits for the instructions in flight, so a
//! pair around a latency-bound chain of floating-point work costs that
//! program far more than it costs the generic work (the "cache effects"
//! DESIGN §5 leaves unmodelled; docs/fidelity.md measures +85 ns a call
//! for a hook with two bare `rdtsc` around such a chain against +11 ns for
//! the same hook without them, `ffi/examples/clock_drain.c`).
//!
//! So the thread measures it where it happens. When a region is entered
//! and left as a leaf many times in a row, with nothing else measured in
//! between (a tiny function called in a loop: seed 004's dilation case),
//! the thread times windows of [`WINDOW`] consecutive calls: a *full*
//! window, every call measured as usual, and right after it a *light*
//! window, where the calls only count themselves (no clock read, no
//! kernel state). The program's work is the same in both, so
//!
//! ```text
//!     full pair, in this program = (T_full − T_light) / WINDOW + light pair
//! ```
//!
//! with the light pair's own small cost timed at start-up (in situ, as
//! the full pair is; it reads no clock, so it disturbs little around it).
//! A light window is compared only when the region's next call ends it.
//! The mean over window pairs (a pair far from the recent median left
//! out: a preemption or a long interrupt, [`OUTLIER`]; from the
//! [`MIN_SAMPLES`]th pair on) is charged for every later full call of
//! that region (its surplus over the start-up figure goes to the enter's
//! part outside the region, as the in-situ surplus does). A light window's calls are put
//! into the kernel when it ends, one enter and exit each at times spread
//! evenly over the window, each as long as the region's mean compensated
//! inclusive time so far, charged the light pair (R1, R2); the time this
//! replay takes is measured and charged (R1: a cost measured directly adds
//! its length). Anything else the thread does ends a light window first
//! (`ThreadState::settle`), so every other event sees the kernel as if
//! every call had been measured.
//!
//! During the first [`SAMPLES`] window pairs every full window is followed
//! by a light one; after them one light window follows every
//! [`LIGHT_EVERY`] full ones. So in the long run about 6 % of a hot
//! region's calls are light; a loop of 20,000 calls has about 10 %, one
//! of 2,000 about 40 %. This type is the state machine alone: it reads
//! no clock.

use heisen_core::{Cost, Exited, KernelError};

/// Calls in a window.
pub const WINDOW: u32 = 32;

/// Consecutive leaf calls of one region before its first window: a
/// region called a few times in a row is not worth a light window.
pub const WARMUP: u32 = 256;

/// Window pairs whose median decides what is an outlier.
pub const SAMPLES: usize = 31;

/// How far a window pair's difference may lie from the recent median
/// beyond twice the median itself, ns: more is a preemption or a long
/// interrupt in one of the windows, left out of the mean (ordinary
/// interrupts of a few µs stay in: the program pays them too).
pub const OUTLIER: i64 = 10_000;

/// Window pairs needed before the figure is charged.
pub const MIN_SAMPLES: u32 = 5;

/// Full windows between two light ones once [`SAMPLES`] pairs were taken.
pub const LIGHT_EVERY: u32 = 16;

/// Regions whose learned figure a thread keeps when it probes another.
pub const LEARNED: usize = 8;

/// The code path a probed region pair takes: each has its own light-pair
/// cost (`Runtime::light_pair`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Path {
    /// The Rust API (`Region`, `region`, `in_region`).
    Rust = 0,
    /// `heisen_region_enter`/`_exit` by id.
    C = 1,
    /// `__cyg_profile_func_enter`/`_exit`.
    Hook = 2,
}

impl Path {
    /// Every path, by number.
    pub const ALL: [Path; PATHS] = [Path::Rust, Path::C, Path::Hook];

    /// The name its pair calibration has in the report
    /// (`runtime.calibration`).
    pub fn name(self) -> &'static str {
        match self {
            Path::Rust => "enter+exit",
            Path::C => "c_enter+c_exit",
            Path::Hook => "cyg_profile_func_enter+exit",
        }
    }

    /// The path whose pair calibration is named `name`.
    pub fn named(name: &str) -> Option<Path> {
        Path::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// Number of [`Path`]s.
pub const PATHS: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Counting the streak, or between windows.
    Idle,
    /// A full window under way since `window_t`.
    Full,
    /// A light window under way since `window_t`.
    Light,
}

/// An enter: the region, its call site and the code path it came by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// The region.
    pub region: u32,
    /// Its call site.
    pub site: u32,
    /// The path.
    pub path: Path,
}

/// What an enter of the probed region is to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enter {
    /// Measured as usual, charging this cost.
    Full(Cost),
    /// The first call of a light window: nothing more to do.
    Light,
}

/// A light window that ended: what the thread puts into its kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ended {
    /// The probed region and call site.
    pub region: u32,
    /// Its call site.
    pub site: u32,
    /// The clock read at the window's first call.
    pub start: u64,
    /// The clock read that ended it (never before `start`).
    pub end: u64,
    /// The time between two of its calls: its length over its calls.
    pub spacing: u64,
    /// Light calls made.
    pub calls: u32,
    /// Whether the last of them is still open (its exit comes later).
    pub open: bool,
    /// The light pair's cost to charge each call, ns.
    pub light: u64,
    /// Each call's measured inclusive time to replay: the region's mean
    /// compensated inclusive time (the light calls charge nothing inside),
    /// at most the window's length per call.
    pub inclusive: u64,
}

/// The online costing state of one thread.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    /// The probed region and call site, one word (`key`).
    key: u64,
    path: Path,
    /// Consecutive leaf calls of the region with nothing else measured
    /// between them, up to [`WARMUP`].
    streak: u32,
    /// The clock read of its last leaf exit (`u64::MAX`: none since
    /// something else happened).
    exit_t: u64,
    /// The start-up whole costs of the enter and the exit (no surplus).
    enter_whole: u64,
    exit_whole: u64,
    /// Compensated inclusive times of its full leaf calls: sum and count.
    inclusive_sum: i64,
    inclusive_n: u64,
    phase: Phase,
    window_t: u64,
    calls: u32,
    open: bool,
    /// A forced window (calibration): no limit, no replay.
    forced: bool,
    light: u64,
    /// The last full window's length, ns.
    full_window: u64,
    fulls_since_light: u32,
    /// `T_full − T_light` of every window pair.
    full_minus_light: Mean,
    /// Charged above the start-up cost per pair (0 until learned).
    surplus: i64,
    learned: [(u64, Path, i64); LEARNED],
    learned_next: usize,
    /// Whether the probed region's statistics are another region's still.
    fresh: bool,
    /// Whether the last window ended inside a light call, whose enter was
    /// replayed (its exit is then no measurement).
    replayed_open: bool,
    /// Calls made light.
    pub light_calls: u64,
    /// Window pairs compared.
    pub windows: u64,
    /// Light windows ended early by another action (replayed, not
    /// compared).
    pub aborted: u64,
}

/// No probed region.
const NONE: u32 = u32::MAX;

/// A region and call site as one word.
#[inline(always)]
pub(crate) const fn key(region: u32, site: u32) -> u64 {
    ((site as u64) << 32) | region as u64
}

/// The index, in a streak of leaf calls of one region, of the call that
/// begins the first light window: the streak reaches [`WARMUP`], the
/// next call begins a full window, and [`WINDOW`] calls later the light
/// one begins.
pub const FIRST_LIGHT: u32 = WARMUP + 1 + WINDOW;

impl Default for Probe {
    fn default() -> Self {
        Probe::new()
    }
}

impl Probe {
    /// Probing nothing yet.
    pub const fn new() -> Probe {
        Probe {
            key: key(NONE, 0),
            path: Path::Rust,
            streak: 0,
            exit_t: u64::MAX,
            enter_whole: 0,
            exit_whole: 0,
            inclusive_sum: 0,
            inclusive_n: 0,
            phase: Phase::Idle,
            window_t: 0,
            calls: 0,
            open: false,
            forced: false,
            light: 0,
            full_window: 0,
            fulls_since_light: 0,
            full_minus_light: Mean::new(),
            surplus: 0,
            learned: [(key(NONE, 0), Path::Rust, 0); LEARNED],
            learned_next: 0,
            fresh: true,
            replayed_open: false,
            light_calls: 0,
            windows: 0,
            aborted: 0,
        }
    }

    /// Whether a light window is under way (every action but the probed
    /// region's own enter and exit ends it first).
    #[inline(always)]
    pub fn is_light(&self) -> bool {
        self.phase == Phase::Light
    }

    /// An enter of (`region`, `site`) during a light window: `true` when
    /// it is one of the window's light calls (nothing else to do).
    #[inline(always)]
    pub fn light_enter(&mut self, region: u32, site: u32) -> bool {
        // The phase again: a signal handler may have ended the window
        // since the caller looked (`thread::light`).
        if self.phase == Phase::Light
            && key(region, site) == self.key
            && !self.open
            && (self.calls < WINDOW || self.forced)
        {
            self.open = true;
            self.calls += 1;
            return true;
        }
        false
    }

    /// An exit of `region` during a light window: `true` when it closes
    /// the window's open light call.
    #[inline(always)]
    pub fn light_exit(&mut self, region: u32) -> bool {
        if self.phase == Phase::Light && region == self.key as u32 && self.open {
            self.open = false;
            return true;
        }
        false
    }

    /// A full enter of `call` at clock read `t`, the kernel's last
    /// measured time being `last` (before this enter), charging `cost` by
    /// the start-up calibration; `light` gives the path's light pair
    /// (`None`: not yet calibrated, or a calibration's own region, so no
    /// windows), asked only past the warm-up.
    #[inline(always)]
    pub fn on_enter(
        &mut self,
        call: Call,
        t: u64,
        last: u64,
        cost: Cost,
        light: impl FnOnce() -> Option<u64>,
    ) -> Enter {
        let k = key(call.region, call.site);
        if k != self.key || call.path != self.path {
            self.switch(k, call.path);
        } else if last != self.exit_t {
            // Something else measured since the region's last leaf exit:
            // the streak begins again.
            self.restart();
        } else if self.streak < WARMUP {
            self.streak += 1;
        } else if let Some(light) = light()
            && self.window(t, cost, light)
        {
            return Enter::Light;
        }
        Enter::Full(self.charge(cost))
    }

    /// A call of the streak past its warm-up at `t`: counts it into the
    /// window under way; `true` when it begins a light window.
    #[inline(always)]
    fn window(&mut self, t: u64, cost: Cost, light: u64) -> bool {
        match self.phase {
            Phase::Full => {
                self.calls += 1;
                if self.calls == WINDOW {
                    return self.full_window_done(t, cost, light);
                }
            }
            Phase::Idle => {
                if self.fresh {
                    self.begin_windows();
                }
                self.phase = Phase::Full;
                self.window_t = t;
                self.calls = 0;
            }
            Phase::Light => {}
        }
        false
    }

    /// A full window ended at `t`: the next begins, light when one is due.
    #[inline(never)]
    fn full_window_done(&mut self, t: u64, cost: Cost, light: u64) -> bool {
        self.full_window = t - self.window_t;
        self.enter_whole = cost.whole;
        self.fulls_since_light += 1;
        let due =
            self.full_minus_light.samples < SAMPLES as u64 || self.fulls_since_light >= LIGHT_EVERY;
        if due && self.inclusive_n > 0 {
            self.fulls_since_light = 0;
            self.start_light(t, light);
            return true;
        }
        self.window_t = t;
        self.calls = 0;
        false
    }

    /// A light window from this enter at `t`, whose calls are charged
    /// `light` a pair.
    fn start_light(&mut self, t: u64, light: u64) {
        self.phase = Phase::Light;
        self.window_t = t;
        self.calls = 1;
        self.open = true;
        self.light = light;
    }

    /// `cost` with the learned surplus, if any, on its outside part (R1:
    /// the program's code slowed down around the pair lies in the parent's
    /// interval, as the in-situ surplus does).
    #[inline(always)]
    fn charge(&self, cost: Cost) -> Cost {
        Cost {
            whole: (cost.whole as i64 + self.surplus).max(cost.inside as i64) as u64,
            inside: cost.inside,
        }
    }

    /// A full exit of `region` at clock read `t`, with what the kernel made
    /// of it, charging the start-up whole cost `whole`.
    #[inline(always)]
    pub fn on_exit(
        &mut self,
        region: u32,
        t: u64,
        exited: &Result<Option<Exited>, KernelError>,
        whole: u64,
    ) {
        match exited {
            // A leaf: no child measured inside it (R2: its exclusive time
            // is its inclusive time).
            Ok(Some(e)) if !e.folded && e.measured_inclusive == e.measured_exclusive => {
                self.leaf_exit(region, t, e.inclusive, whole);
            }
            _ => self.exit_t = u64::MAX,
        }
    }

    /// [`Self::on_exit`] of a leaf frame that gave compensated inclusive
    /// time `inclusive`.
    #[inline(always)]
    fn leaf_exit(&mut self, region: u32, t: u64, inclusive: i64, whole: u64) {
        if self.replayed_open {
            // Its enter was a light call's, replayed at an estimated time:
            // not a measurement of the region.
            self.replayed_open = false;
            self.exit_t = u64::MAX;
        } else if region == self.key as u32 {
            self.exit_t = t;
            self.exit_whole = whole;
            self.inclusive_sum = self.inclusive_sum.wrapping_add(inclusive);
            self.inclusive_n += 1;
        } else {
            self.exit_t = u64::MAX;
        }
    }

    /// Ends the light window at clock read `t`, read by the action that
    /// ends it: the enter of region and site `next` (`key`), or another
    /// action (`None`). Learns from it only when it ran its whole length
    /// and the probed region's next call ended it (else its length holds
    /// code after the loop); returns what to put into the kernel (`None`
    /// for a forced window, whose calls are dropped).
    pub fn end_light(&mut self, t: u64, next: Option<u64>) -> Option<Ended> {
        debug_assert!(self.is_light());
        // The window began at a clock read the kernel never saw, so the
        // thread's clamped clock (`ThreadState::now`) may read earlier on
        // a core whose TSC lags a few cycles: never before it.
        let t = t.max(self.window_t);
        self.phase = Phase::Idle;
        let (calls, open) = (self.calls, self.open);
        self.open = false;
        self.calls = 0;
        if self.forced {
            self.forced = false;
            return None;
        }
        self.light_calls += u64::from(calls);
        if calls == WINDOW && !open && next == Some(self.key) {
            self.learn(t - self.window_t);
        } else {
            self.aborted += 1;
            self.streak = 0;
        }
        self.replayed_open = open;
        let mean = self.inclusive_sum / self.inclusive_n.max(1) as i64;
        let spacing = (t - self.window_t) / u64::from(calls.max(1));
        Some(Ended {
            region: self.key as u32,
            site: (self.key >> 32) as u32,
            start: self.window_t,
            end: t,
            spacing,
            calls,
            open,
            light: self.light,
            inclusive: (mean.max(0) as u64).min(spacing),
        })
    }

    /// After the replay of an ended window whose last call exited at `t`:
    /// the next enter of the region continues the streak.
    pub fn replayed(&mut self, t: u64) {
        self.exit_t = t;
    }

    /// Another action of the thread (one that may charge overhead without
    /// reading the clock, R1): the streak does not go on over it.
    #[inline(always)]
    pub fn interrupt(&mut self) {
        self.exit_t = u64::MAX;
    }

    /// Forces a light window on (`region`, `site`, `path`) with no limit
    /// and no replay: the start-up calibration of the light pair itself.
    pub fn force_light(&mut self, region: u32, site: u32, path: Path) {
        self.switch(key(region, site), path);
        self.phase = Phase::Light;
        self.forced = true;
        self.calls = 0;
        self.open = false;
    }

    /// Learns from a window pair whose light window was `light_window`
    /// ns long.
    fn learn(&mut self, light_window: u64) {
        // R1: a cost measured directly (here, in the running program).
        self.full_minus_light
            .add(self.full_window as i64 - light_window as i64);
        self.windows += 1;
        if self.full_minus_light.samples >= u64::from(MIN_SAMPLES)
            && let Some(mean) = self.full_minus_light.mean()
        {
            // The full pair in this program, less what the start-up
            // calibration charges for it.
            let pair = mean / i64::from(WINDOW) + self.light as i64;
            let surplus = pair - (self.enter_whole + self.exit_whole) as i64;
            self.surplus = surplus;
            self.remember(surplus);
        }
    }

    fn remember(&mut self, surplus: i64) {
        let (key, path) = (self.key, self.path);
        if let Some(e) = self.learned.iter_mut().find(|e| e.0 == key && e.1 == path) {
            e.2 = surplus;
            return;
        }
        self.learned[self.learned_next] = (key, path, surplus);
        self.learned_next = (self.learned_next + 1) % LEARNED;
    }

    /// Starts probing (`region`, `site`): on every enter of another
    /// region than the last, so it only notes the region and what was
    /// learned of it before; the statistics are emptied when its first
    /// window begins ([`Self::begin_windows`]).
    #[inline(always)]
    fn switch(&mut self, k: u64, path: Path) {
        self.key = k;
        self.path = path;
        // Entries fill from the first: nothing learned, nothing to look up.
        self.surplus = if self.learned[0].0 as u32 != NONE {
            self.learned
                .iter()
                .find(|e| e.0 == k && e.1 == path)
                .map_or(0, |e| e.2)
        } else {
            0
        };
        self.fresh = true;
        self.restart();
    }

    /// The first window of a newly probed region: its statistics begin.
    #[cold]
    fn begin_windows(&mut self) {
        self.fresh = false;
        self.full_minus_light = Mean::new();
        self.fulls_since_light = 0;
        self.inclusive_sum = 0;
        self.inclusive_n = 0;
    }

    fn restart(&mut self) {
        self.streak = 0;
        self.phase = Phase::Idle;
        self.calls = 0;
        self.exit_t = u64::MAX;
    }

    /// The surplus charged per pair of `region` (what was learned), ns.
    pub fn learned(&self) -> impl Iterator<Item = (u32, u32, i64)> + '_ {
        self.learned
            .iter()
            .filter(|e| e.0 as u32 != NONE)
            .map(|&(k, _, surplus)| (k as u32, (k >> 32) as u32, surplus))
    }
}

/// The mean of window differences, leaving out those far from the recent
/// median.
///
/// The mean, not the median: what the pairs add to the run is their mean
/// cost, and window lengths are skewed (a full window's mean is several ns
/// a call above its median here). Only a difference far from the recent
/// median is left out ([`OUTLIER`]): a window the thread was preempted in,
/// or one a long interrupt took, which are no cost of the pair; and none
/// is kept before the [`MIN_SAMPLES`]th, when the median cannot tell.
#[derive(Clone, Copy, Debug)]
struct Mean {
    recent: [i64; SAMPLES],
    samples: u64,
    sum: i64,
    kept: u64,
}

impl Mean {
    const fn new() -> Mean {
        Mean {
            recent: [0; SAMPLES],
            samples: 0,
            sum: 0,
            kept: 0,
        }
    }

    fn add(&mut self, diff: i64) {
        self.recent[(self.samples % SAMPLES as u64) as usize] = diff;
        self.samples += 1;
        if self.samples < u64::from(MIN_SAMPLES) {
            // Too few for a median that tells an outlier: a window
            // preempted among the first would stay in the mean for good.
            return;
        }
        let n = (self.samples as usize).min(SAMPLES);
        let mut recent = self.recent;
        let recent = &mut recent[..n];
        recent.sort_unstable();
        let median = recent[n / 2];
        // R1: only the pairs' own cost is charged.
        if (diff - median).abs() <= 2 * median.abs() + OUTLIER {
            self.sum = self.sum.saturating_add(diff);
            self.kept += 1;
        }
    }

    fn mean(&self) -> Option<i64> {
        (self.kept > 0).then(|| self.sum / self.kept as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C7: Call = Call {
        region: 7,
        site: 0,
        path: Path::C,
    };

    const COST: Cost = Cost {
        whole: 40,
        inside: 10,
    };

    /// Leaf calls of region 7 from `t`, one every 160 ns (inclusive 40),
    /// until an enter is light: the probe, in its first light call, and
    /// that call's clock read.
    fn to_first_light(mut t: u64) -> (Probe, u64) {
        let mut p = Probe::new();
        let mut last = 0u64;
        while let Enter::Full(_) = p.on_enter(C7, t, last, COST, || Some(5)) {
            p.leaf_exit(7, t + 60, 40, COST.whole);
            last = t + 60;
            t += 160;
        }
        (p, t)
    }

    /// Drives `calls` leaf calls of region 7: each full one `full` ns
    /// from enter to enter (inclusive `inside` of it), each light one
    /// `light` ns; returns the probe, the calls made light and the kernel
    /// calls the replays made (enter and exit times).
    fn drive(calls: u32, full: u64, light: u64, inside: u64) -> (Probe, u64, Vec<(u64, u64)>) {
        let mut p = Probe::new();
        let (mut t, mut last) = (1_000u64, 0u64);
        let mut replayed = Vec::new();
        for _ in 0..calls {
            if p.is_light() {
                if p.light_enter(7, 0) {
                    t += light;
                    assert!(p.light_exit(7));
                    continue;
                }
                let e = p.end_light(t, Some(key(7, 0))).expect("not forced");
                assert_eq!((e.end, e.spacing), (t, (t - e.start) / u64::from(e.calls)));
                for j in 0..u64::from(e.calls) {
                    let enter = e.start + j * e.spacing;
                    replayed.push((enter, enter + e.inclusive));
                    last = enter + e.inclusive;
                }
                p.replayed(last);
            }
            match p.on_enter(C7, t, last, COST, || Some(5)) {
                Enter::Light => {
                    t += light;
                    assert!(p.light_exit(7));
                }
                Enter::Full(_) => {
                    let exit = t + inside;
                    p.leaf_exit(7, exit, inside as i64 - 20, COST.whole);
                    last = exit;
                    t += full;
                }
            }
        }
        let light_calls = p.light_calls;
        (p, light_calls, replayed)
    }

    #[test]
    fn a_hot_leaf_learns_its_pair_cost_in_the_program() {
        // Full calls 160 ns apart, light ones 50: the full pair costs the
        // program 110 ns more than the light one, whose own cost is 5.
        let (p, light, _) = drive(20_000, 160, 50, 60);
        // Pair 115 against 80 charged by the start-up figure.
        assert_eq!(p.surplus, 115 - 80);
        assert!(light > 0);
        // About one light window in LIGHT_EVERY + 1 once learned.
        assert!(light < 20_000 / 8, "{light} light calls");
        assert_eq!(p.aborted, 0);
        assert_eq!(p.learned().collect::<Vec<_>>(), vec![(7, 0, 35)]);
    }

    /// The cost a probe charges the next full enter after learning from
    /// `drive(20_000, full, light, 60)`.
    fn charged_after(full: u64, light: u64) -> Cost {
        let (mut p, _, _) = drive(20_000, full, light, 60);
        p.restart();
        let Enter::Full(c) = p.on_enter(C7, 1 << 40, 0, COST, || Some(5)) else {
            panic!("a restarted probe measures");
        };
        c
    }

    #[test]
    fn the_surplus_goes_to_the_enters_outside_part() {
        let cost = |whole, inside| Cost { whole, inside };
        assert_eq!(charged_after(160, 50), cost(75, 10));
        // A program where the pair costs less than the start-up figure:
        // never below the part inside.
        assert_eq!(charged_after(100, 90), cost(10, 10));
    }

    #[test]
    fn replayed_calls_fit_their_window_in_order() {
        let (_, light, replayed) = drive(20_000, 160, 50, 60);
        assert_eq!(replayed.len() as u64, light);
        for w in replayed.windows(2) {
            assert!(w[0].0 <= w[0].1 && w[0].1 <= w[1].0, "{w:?}");
        }
        // Each as long as the region's mean compensated inclusive time.
        assert!(replayed.iter().all(|&(a, b)| b - a == 40));
    }

    #[test]
    fn nothing_is_light_before_the_warm_up_or_when_calls_are_not_leaves() {
        let (_, light, _) = drive(WARMUP + WINDOW - 1, 160, 50, 60);
        assert_eq!(light, 0);
        // Every exit followed by another measured event: no streak.
        let mut p = Probe::new();
        for i in 0..10_000u64 {
            let t = 1_000 + i * 200;
            assert!(matches!(
                p.on_enter(C7, t, t - 5, COST, || Some(5)),
                Enter::Full(_)
            ));
            p.leaf_exit(7, t + 50, 30, COST.whole);
        }
        assert_eq!(p.light_calls, 0);
    }

    #[test]
    fn an_early_end_is_replayed_and_not_learned() {
        let (mut p, t) = to_first_light(0);
        // Two more light calls, the second still open when something
        // else happens.
        assert!(p.light_exit(7));
        assert!(p.light_enter(7, 0));
        let e = p.end_light(t + 500, None).expect("not forced");
        assert_eq!((e.calls, e.open, e.start), (2, true, t));
        assert_eq!(e.inclusive, 40);
        assert_eq!((p.aborted, p.windows, p.surplus), (1, 0, 0));
        assert!(!p.is_light());
    }

    #[test]
    fn the_first_light_call_is_first_light() {
        // Calls 0 to FIRST_LIGHT − 1 measured; call FIRST_LIGHT light.
        assert!(!drive(FIRST_LIGHT, 160, 50, 60).0.is_light());
        assert!(drive(FIRST_LIGHT + 1, 160, 50, 60).0.is_light());
    }

    #[test]
    fn a_preempted_window_is_left_out_of_the_mean_even_among_the_first() {
        let mut m = Mean::new();
        m.add(3_520);
        m.add(1_003_520); // the second pair: a window preempted for 1 ms
        for _ in 0..30 {
            m.add(3_520);
        }
        m.add(-2_000_000); // and one much later
        m.add(3_520);
        assert_eq!(m.mean(), Some(3_520));
        // Ordinary spread stays in: the mean, not the median.
        let mut m = Mean::new();
        for i in 0..40 {
            m.add(if i % 4 == 0 { 4_000 } else { 3_400 });
        }
        let mean = m.mean().expect("kept");
        assert!((3_500..=3_600).contains(&mean), "{mean}");
    }

    #[test]
    fn a_whole_light_window_ended_by_another_action_is_not_learned() {
        for next in [None, Some(key(8, 0))] {
            let (mut p, t) = to_first_light(1_000);
            assert!(p.light_exit(7));
            for _ in 1..WINDOW {
                assert!(p.light_enter(7, 0) && p.light_exit(7));
            }
            // The loop is over: the next action is not the region's call.
            let e = p.end_light(t + 10_000, next).expect("not forced");
            assert_eq!((e.calls, e.open), (WINDOW, false));
            assert_eq!((p.windows, p.aborted), (0, 1), "{next:?}");
        }
    }

    #[test]
    fn a_clock_read_before_the_window_began_ends_it_at_its_start() {
        let (mut p, t) = to_first_light(1_000);
        // A core whose TSC lags: the end reads before the window's start.
        let e = p.end_light(t - 3, None).expect("not forced");
        assert_eq!((e.start, e.calls, e.open), (t, 1, true));
        assert_eq!(e.inclusive, 0, "no room in a window of no length");
    }

    #[test]
    fn a_forced_window_never_ends_by_itself_and_replays_nothing() {
        let mut p = Probe::new();
        p.force_light(9, 0, Path::Hook);
        for _ in 0..100_000 {
            assert!(p.light_enter(9, 0));
            assert!(p.light_exit(9));
        }
        assert!(!p.light_enter(8, 0));
        assert_eq!(p.end_light(5, None), None);
        assert_eq!(p.light_calls, 0);
        assert!(!p.is_light());
    }
}
