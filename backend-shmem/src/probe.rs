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
//! the full pair is; it reads no clock, so it disturbs little around it)
//! — but for one thing the light window holds that the full one does
//! not: the clock read that ends it (the region's next call) waits for
//! the work its light calls left in flight, which a full window's reads
//! waited for call by call (`Kind`: in montecarlo's loop a floating-
//! point chain, about 3 ns a call over a window of 32, 8 to 13 points of
//! compensated error). So every other light window is [`SHORT`] calls
//! long, compared with half the full window before it: a pair whose light
//! side made `l` calls light differs by `l × (full − light) − tail`, and
//! the slope of the least-squares line through all pairs (`Fit`) is the
//! full pair less the light one with the tail taken out.
//! A light window of a streak is compared only when the region's next
//! call ends it (a light segment, below, when another action does).
//! The line through the window pairs (a pair far from its kind's recent
//! median left out: a preemption or a long interrupt, [`OUTLIER`]; from
//! the [`MIN_SAMPLES`]th pair on) is charged for every later full call of
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
//! of 2,000 about 40 %.
//!
//! **Segments.** Most programs do something else between their tiny
//! calls every few calls — take a lock, pop a queue item, enter a parent
//! region — so a streak of [`WINDOW`] calls never forms. The calls between
//! two other actions are a *segment*; once the region has made [`WARMUP`]
//! leaf calls and its segments are shorter than a window, a segment is
//! timed whole, from the last event's clock read before its first call
//! to a clock read taken first thing by the action that ends it
//! (`ThreadState::settle`), in
//! pairs: two consecutive segments of the same number of calls `n`, one
//! full and one light, which first chosen at random (a program that
//! alternates two kinds of segment biases neither). The action that ends
//! a light segment waits at its clock read for what the light calls left
//! in flight, as a streak's next call does; so every other light segment
//! is full for the first half of the last segment's calls (rounded up),
//! then light to its end. Neither kind's first light call reads the
//! clock (the segment is timed from the last event's read before it, and
//! a partial one's full half ended at its last exit's), so the two kinds
//! differ in their light calls only (a read there would stay in the
//! figure of one-call segments, which cannot be split). Each pair gives
//! `(l, T_full − T_light)`,
//! `l` the calls its light segment made light, to the same line as the
//! windows'. A pair is taken at the same rate as light windows are (every
//! segment during the first [`SAMPLES`], then one in [`LIGHT_EVERY`]); a
//! segment that is not part of a pair reads no extra clock. A region
//! whose segments are one call long cannot be split: its tail stays in
//! (the line then has one length, and the mean difference a light call
//! is charged).
//!
//! This type is the state machine alone: it reads no clock.

use heisen_core::{Cost, Exited, KernelError};

mod fit;
use fit::{Fit, Recent};

/// Calls in a window.
pub const WINDOW: u32 = 32;

/// Calls in a short light window: every other light window of a streak
/// is this long, so that what a light window's end costs cancels
/// (`Kind`).
pub const SHORT: u32 = WINDOW / 2;

/// Leaf calls of one region before its first window (counted across its
/// segments; again after each interruption of a long streak): a region
/// called a few times is not worth a light window.
pub const WARMUP: u32 = 256;

/// Recent pairs of one kind whose median decides what is an outlier;
/// also the pairs taken at every chance before one in [`LIGHT_EVERY`].
pub const SAMPLES: usize = 31;

/// How far a pair's difference may lie from its kind's recent median
/// beyond twice the median itself, ns: more is a preemption or a long
/// interrupt in one of its windows, left out of the line (ordinary
/// interrupts of a few µs stay in: the program pays them too).
pub const OUTLIER: i64 = 10_000;

/// Pairs before the figure is charged; and pairs kept of each of two
/// light lengths before the line's slope is (until then, the mean
/// difference a light call).
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

/// What kind of comparison a pair's difference comes from (each kind
/// has its own recent median, which tells its outliers, [`Recent`]).
///
/// The clock read that ends light calls (the region's next call, a full
/// one, or the action after a light segment) waits for the work they
/// left in flight: a floating-point chain they let the core overlap,
/// which a full call's reads had waited for call by call. So light calls
/// hold one such wait more than full ones: with `l` calls light,
/// `T_full − T_light` is `l × (full − light) − tail`, `tail` the
/// program's, not the pair's. Every other light window of a streak is
/// [`SHORT`] calls long (compared with half the full window before it),
/// and every other light segment is full for the first half of the last
/// segment's calls (rounded up), then light; neither kind's first light
/// call reads the clock (`turn_light`), so that they differ in their
/// light calls only. A
/// least-squares line through the pairs' `(l, difference)` then has
/// `full − light` for its slope and the tail cancels ([`Fit`]; DESIGN
/// R1, seed 000 §2 and 001 eq. 1: a cost measured directly, here with
/// the end effect of the light calls taken out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    /// A window pair of a streak, light window [`WINDOW`] calls.
    Long = 0,
    /// A window pair of a streak, light window [`SHORT`] calls.
    Short = 1,
    /// A pair of segments, every call of the light one light.
    Segment = 2,
    /// A pair of segments, the light one light for its last calls only.
    Partial = 3,
}

/// Number of [`Kind`]s.
const KINDS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Phase {
    /// Counting the warm-up, between windows, or in a short segment
    /// not timed.
    Idle = 0,
    /// A full window under way since `window_t`.
    Full = 1,
    /// A light window under way since `window_t`.
    Light = 2,
    /// A full window under way since `window_t` that began at a
    /// segment's first call and ends, timed, at the action that ends the
    /// segment ([`Probe::end_timed`]), or turns light after
    /// `light_at + 1` calls (a partial segment, [`Kind`]).
    Timed = 3,
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

/// A timed segment that ended: its calls, the last `light` of them
/// light (0: a full one), and its length, ns.
#[derive(Clone, Copy, Debug)]
struct Timed {
    light: u32,
    calls: u32,
    length: u64,
}

/// What the first call of a segment begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    /// Nothing timed.
    None,
    /// A light segment.
    Light,
    /// A timed segment, full from its first call (partial: full for its
    /// first `light_at + 1` calls).
    Timed,
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
    /// Calls of the region since it became probed (kept across its
    /// segments; from 0 again after a long streak's interruption), up to
    /// [`WARMUP`].
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
    /// Per slot (the probed region's and the kept one's, [`Saved`]) and
    /// [`Kind`]: `T_full − T_light` of every pair, for its outliers.
    means: [[Recent; KINDS]; 2],
    /// Per slot: the line through every pair kept.
    fits: [Fit; 2],
    /// The value of `calls` at which the timed segment under way turns
    /// light with its next call (a partial segment, [`Kind`]; [`NEVER`]:
    /// never), so that a streak's call checks it with one compare.
    light_at: u32,
    /// Full calls the light segment under way made before its light part.
    full_part: u32,
    /// Whether the next light segment is a partial one.
    partial_next: bool,
    /// The light window under way: its calls at most ([`WINDOW`], or
    /// [`SHORT`] for every other one of a streak).
    light_len: u32,
    /// Whether the next light window of a streak is a short one.
    short_next: bool,
    /// The probed region's slot of `means`.
    slot: usize,
    /// Charged above the start-up cost per pair (0 until learned).
    surplus: i64,
    learned: [(u64, Path, i64); LEARNED],
    learned_next: usize,
    /// Whether the probed region's statistics are another region's still.
    fresh: bool,
    /// Whether the last window ended inside a light call, whose enter was
    /// replayed (its exit is then no measurement).
    replayed_open: bool,
    /// The statistics of the region probed before this one, back when
    /// the thread returns to it (a leaf called between enters of its
    /// parent: `task`, `cell`, `cell`, `task`, …).
    saved: Saved,
    /// Calls made light.
    pub light_calls: u64,
    /// Whether the window under way (light or timed) began at a
    /// segment's first call.
    at_start: bool,
    /// Leaf calls of the segment under way.
    segment_calls: u32,
    /// Calls of the last segment that ended.
    last_segment: u32,
    /// Where the timed segment under way began: the last event's clock
    /// read before its first call.
    segment_t: u64,
    /// Whether the probed region's last call was a leaf (no child
    /// measured inside it): only a leaf's segments are timed.
    leaf: bool,
    /// Segments since the last pair of timed ones.
    segments_since_pair: u32,
    /// Chooses which of a pair of segments is light: pseudo-random
    /// (xorshift), so that no period of the program's lines up with it.
    order: u32,
    /// The first segment of a pair, until the second ends.
    first: Option<Timed>,
    /// Window pairs compared (segment pairs among them).
    pub windows: u64,
    /// Light windows ended early by another action, or light segments
    /// that ran a window's length or ended inside a call (replayed, not
    /// compared).
    pub aborted: u64,
}

/// No probed region.
const NONE: u32 = u32::MAX;

/// No call of the segment under way turns it light (`Probe::light_at`).
const NEVER: u32 = u32::MAX;

/// A probed region's statistics, kept while another is probed (its
/// pairs stay in their slot of `Probe::means` and `Probe::fits`).
#[derive(Clone, Copy, Debug)]
struct Saved {
    key: u64,
    path: Path,
    streak: u32,
    leaf: bool,
    fresh: bool,
    slot: usize,
    inclusive_sum: i64,
    inclusive_n: u64,
    fulls_since_light: u32,
    segments_since_pair: u32,
    first: Option<Timed>,
    segment_calls: u32,
    last_segment: u32,
    surplus: i64,
    light: u64,
    enter_whole: u64,
    exit_whole: u64,
}

impl Saved {
    const NONE: Saved = Saved {
        key: key(NONE, 0),
        path: Path::Rust,
        streak: 0,
        leaf: false,
        fresh: true,
        slot: 0,
        inclusive_sum: 0,
        inclusive_n: 0,
        fulls_since_light: 0,
        segments_since_pair: 0,
        first: None,
        segment_calls: 0,
        last_segment: 0,
        surplus: 0,
        light: 0,
        enter_whole: 0,
        exit_whole: 0,
    };
}

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
            means: [[Recent::new(); KINDS]; 2],
            fits: [Fit::new(); 2],
            light_at: NEVER,
            full_part: 0,
            partial_next: false,
            light_len: WINDOW,
            short_next: false,
            slot: 0,
            surplus: 0,
            learned: [(key(NONE, 0), Path::Rust, 0); LEARNED],
            learned_next: 0,
            fresh: true,
            replayed_open: false,
            at_start: false,
            segment_calls: 0,
            last_segment: 0,
            segment_t: 0,
            leaf: false,
            segments_since_pair: 0,
            order: 0x9e37_79b9,
            first: None,
            saved: Saved::NONE,
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

    /// Whether a light window of `region` is under way: the one check a
    /// probed path's export makes before anything else (`thread::light`).
    #[inline(always)]
    pub fn is_light_for(&self, region: u32) -> bool {
        self.phase == Phase::Light && region == self.key as u32
    }

    /// Whether a window is under way that the thread's next other action
    /// must end with a clock read: a light one, or a full one timed to a
    /// segment's end ([`Self::end_timed`]).
    #[inline(always)]
    pub fn due(&self) -> bool {
        // Light or Timed: one compare.
        self.phase as u8 >= Phase::Light as u8
    }

    /// An exit of the probed region that ends the light window under way
    /// (its light calls were all closed: this is an outer call's exit, a
    /// recursion): the window is then no segment to compare.
    #[inline(always)]
    pub fn spoil_if_own(&mut self, region: u32) {
        if region == self.key as u32 {
            self.at_start = false;
        }
    }

    /// Whether an enter (`enter`) or exit of `region` from `site` goes on
    /// with the timed full window under way: the probed region's own.
    #[inline(always)]
    pub fn timed_goes_on(&self, region: u32, site: u32, enter: bool) -> bool {
        self.phase == Phase::Timed
            && if enter {
                key(region, site) == self.key
            } else {
                region == self.key as u32
            }
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
            && (self.calls < self.light_len || self.forced)
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
        last: u64,
        cost: Cost,
        light: impl FnOnce() -> Option<u64>,
        now: impl FnOnce() -> u64,
    ) -> (Enter, u64) {
        let k = key(call.region, call.site);
        let start = if k != self.key || call.path != self.path {
            // Back to a region probed before: a segment of it begins.
            if self.switch(k, call.path) {
                self.segment(last, cost, light)
            } else {
                // A region probed afresh: this is its first call (the
                // warm-up counts from the next, `FIRST_LIGHT`).
                self.segment_calls = 1;
                Start::None
            }
        } else if last != self.exit_t {
            // Something else measured since the region's last leaf exit:
            // a segment begins.
            self.segment(last, cost, light)
        } else {
            if self.calls == self.light_at {
                // A partial segment's first light call: it reads no clock,
                // as an all-light segment's first call does not (`Kind`).
                return self.turn_light(last);
            }
            let t = now();
            self.segment_calls = self.segment_calls.wrapping_add(1);
            if self.streak < WARMUP {
                self.streak += 1;
            } else if let Some(light) = light()
                && self.window(t, cost, light)
            {
                return (Enter::Light, t);
            }
            return (Enter::Full(self.charge(cost)), t);
        };
        if start == Start::Light {
            // A light segment's first call reads no clock either: it is
            // timed from `last`, as a full one is.
            return (Enter::Light, last);
        }
        let t = now();
        if start == Start::Timed {
            self.window_t = t;
        }
        (Enter::Full(self.charge(cost)), t)
    }

    /// The first call of a segment, before its clock read: the window
    /// under way (which the other action ended, if it was timed) is
    /// dropped, the warm-up goes on, and a timed segment begins when a
    /// pair is due, timed from `last` (the last event's clock read): light
    /// from this call, or full (for its first half only, when partial:
    /// `light_at`).
    #[inline(always)]
    fn segment(&mut self, last: u64, cost: Cost, light: impl FnOnce() -> Option<u64>) -> Start {
        if self.phase == Phase::Timed {
            // No other action ended the timed segment: this call is nested
            // in its last one (a recursion), which is then no leaf.
            self.at_start = false;
            self.first = None;
        }
        self.phase = Phase::Idle;
        self.calls = 0;
        self.light_at = NEVER;
        self.last_segment = self.segment_calls;
        self.segment_calls = 1;
        if self.streak < WARMUP {
            self.streak += 1;
            return Start::None;
        }
        // Long segments are the windows' (a streak of WINDOW calls and
        // more), which warm up again after each interruption; only short
        // segments are timed whole, and only a leaf's.
        if self.last_segment >= WINDOW {
            self.streak = 0;
            self.first = None;
            return Start::None;
        }
        // The path's light pair (not there: no windows at all).
        let light = if self.leaf { light() } else { None };
        let Some(light) = light else {
            self.first = None;
            return Start::None;
        };
        self.segment_pair(last, cost, light)
    }

    /// [`Self::segment`] past the warm-up, segments shorter than a
    /// window.
    #[cold]
    #[inline(never)]
    fn segment_pair(&mut self, last: u64, cost: Cost, light: u64) -> Start {
        if self.fresh {
            self.begin_windows();
        }
        let make_light = match self.first {
            // The second of a pair: the other kind.
            Some(first) => first.light == 0,
            None => {
                self.segments_since_pair += 1;
                let due = self.sampling() || self.segments_since_pair >= LIGHT_EVERY;
                if !due {
                    return Start::None;
                }
                self.segments_since_pair = 0;
                // Which first, at random: a high bit of the xorshift (its
                // low bit alone has structure a program's period can meet).
                self.order ^= self.order << 13;
                self.order ^= self.order >> 17;
                self.order ^= self.order << 5;
                self.order.wrapping_mul(0x9e37_79b9) >> 31 == 1
            }
        };
        self.enter_whole = cost.whole;
        self.at_start = true;
        // Timed from the last event before it (the other action's last
        // clock read): the first call's enter, its clock read included, is
        // inside a full segment as every later call's is.
        self.segment_t = last;
        self.full_part = 0;
        if make_light && self.inclusive_n > 0 {
            // Every other one full for the first half of the last
            // segment's calls (rounded up), then light; the other light
            // from its first call ([`Kind`]).
            self.partial_next = !self.partial_next;
            if self.partial_next && self.last_segment >= 2 {
                self.phase = Phase::Timed;
                self.calls = 0;
                // Full for ceil(n/2) calls: light from the next.
                self.light_at = self.last_segment - self.last_segment / 2 - 1;
                self.light = light;
                return Start::Timed;
            }
            self.start_light(last, light, WINDOW);
            return Start::Light;
        }
        if make_light {
            // Nothing to replay a light call with yet.
            self.first = None;
            self.at_start = false;
            return Start::None;
        }
        self.phase = Phase::Timed;
        self.calls = 0;
        self.light_at = NEVER;
        Start::Timed
    }

    /// Ends the timed full window under way at clock read `t`, read first
    /// thing by the action that ends it; `whole`: whether the region's
    /// last call had exited with nothing measured since (the kernel's last
    /// measured time is its exit).
    pub fn end_timed(&mut self, t: u64, whole: bool) {
        debug_assert!(self.phase == Phase::Timed);
        let t = t.max(self.window_t);
        self.phase = Phase::Idle;
        let calls = self.calls + 1;
        self.calls = 0;
        self.light_at = NEVER;
        if whole && self.at_start {
            self.segment_ended(0, calls, t - self.segment_t.min(t));
        } else {
            self.first = None;
        }
        self.at_start = false;
    }

    /// A timed segment of `calls` calls, the last `light` of them light,
    /// ended `length` ns long: the first of a pair, or the second, which
    /// is learned from.
    fn segment_ended(&mut self, light: u32, calls: u32, length: u64) {
        let this = Timed {
            light,
            calls,
            length,
        };
        match self.first.take() {
            Some(first) if (first.light == 0) != (light == 0) && first.calls == calls => {
                let (full, light) = if light > 0 {
                    (first, this)
                } else {
                    (this, first)
                };
                let kind = if light.light == calls {
                    Kind::Segment
                } else {
                    Kind::Partial
                };
                self.learn_diff(kind, light.light, full.length as i64 - light.length as i64);
            }
            Some(_) => {}
            None => self.first = Some(this),
        }
    }

    /// A call of the streak past its warm-up at `t`: counts it into the
    /// window under way; `true` when it begins a light window.
    #[inline(always)]
    fn window(&mut self, t: u64, cost: Cost, light: u64) -> bool {
        match self.phase {
            Phase::Full | Phase::Timed => {
                self.calls += 1;
                if self.calls == WINDOW {
                    return self.full_window_done(t, cost, light);
                }
            }
            Phase::Idle => {
                if self.last_segment < WINDOW && self.segment_calls <= WINDOW {
                    // A later call of a short segment: no window to count
                    // (short segments are timed whole, `segment`).
                    return false;
                }
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

    /// A partial segment's first call after its full part, before any
    /// clock read, the kernel's last measured time being `last` (the full
    /// part's last exit): it and the segment's later calls are light,
    /// charged the light pair the segment began with.
    #[cold]
    #[inline(never)]
    fn turn_light(&mut self, last: u64) -> (Enter, u64) {
        self.segment_calls = self.segment_calls.wrapping_add(1);
        self.full_part = self.calls + 1;
        self.light_at = NEVER;
        self.phase = Phase::Idle;
        self.start_light(last, self.light, WINDOW);
        (Enter::Light, last)
    }

    /// A full window ended at `t`: the next begins, light when one is due.
    #[inline(never)]
    fn full_window_done(&mut self, t: u64, cost: Cost, light: u64) -> bool {
        // A timed segment as long as a window: an ordinary full window.
        self.phase = Phase::Full;
        self.at_start = false;
        self.first = None;
        self.full_window = t - self.window_t;
        self.enter_whole = cost.whole;
        self.fulls_since_light += 1;
        let due = self.sampling() || self.fulls_since_light >= LIGHT_EVERY;
        if due && self.inclusive_n > 0 {
            self.fulls_since_light = 0;
            let len = if self.short_next { SHORT } else { WINDOW };
            self.short_next = !self.short_next;
            self.start_light(t, light, len);
            return true;
        }
        self.window_t = t;
        self.calls = 0;
        false
    }

    /// A light window of at most `len` calls from this enter at `t`,
    /// whose calls are charged `light` a pair.
    fn start_light(&mut self, t: u64, light: u64, len: u32) {
        debug_assert!(self.phase != Phase::Timed);
        self.phase = Phase::Light;
        self.light_len = len;
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
            _ => {
                if region == self.key as u32 {
                    self.leaf = false;
                    // A replayed call that turned out no leaf: its exit
                    // is this one.
                    self.replayed_open = false;
                }
                self.exit_t = u64::MAX;
            }
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
            self.leaf = true;
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
    /// action (`None`). Learns from a window of a streak only when it ran
    /// its whole length and the probed region's next call ended it (else
    /// its length holds code after the loop), and from a light segment
    /// when another action ended it after its last call; returns what to
    /// put into the kernel (`None` for a forced window, whose calls are
    /// dropped).
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
        // The window's first call was counted by its enter.
        self.segment_calls = self.segment_calls.saturating_add(calls.saturating_sub(1));
        let at_start = core::mem::take(&mut self.at_start);
        let full_part = core::mem::take(&mut self.full_part);
        if at_start && !open && calls < WINDOW && next != Some(self.key) {
            // A light segment (a partial one after its full part), ended
            // by the action after it.
            self.segment_ended(calls, full_part + calls, t - self.segment_t.min(t));
        } else if calls == self.light_len && !open && next == Some(self.key) && !at_start {
            self.learn(t - self.window_t);
        } else {
            self.first = None;
            self.aborted += 1;
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

    /// The clock read of the probed region's last leaf exit (`u64::MAX`:
    /// something else happened since).
    #[inline(always)]
    pub fn exit_t(&self) -> u64 {
        self.exit_t
    }

    /// After the replay of an ended window whose last call exited at `t`:
    /// the next enter of the region continues the streak.
    pub fn replayed(&mut self, t: u64) {
        self.exit_t = t;
    }

    /// Another action of the thread (one that may charge overhead without
    /// reading the clock, R1): the segment under way ends.
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

    /// Learns from a window pair whose light window, of `light_len`
    /// calls, was `light_window` ns long.
    fn learn(&mut self, light_window: u64) {
        let l = self.light_len;
        // The full window's time for as many calls.
        let full = self.full_window * u64::from(l) / u64::from(WINDOW);
        let kind = if l == WINDOW { Kind::Long } else { Kind::Short };
        self.learn_diff(kind, l, full as i64 - light_window as i64);
    }

    /// Whether the probed region's first [`SAMPLES`] pairs are still being
    /// taken (a pair at every chance), not one in [`LIGHT_EVERY`].
    #[inline(always)]
    fn sampling(&self) -> bool {
        self.samples() < SAMPLES as u64
    }

    /// Pairs of every kind taken of the probed region.
    #[inline(always)]
    fn samples(&self) -> u64 {
        self.means[self.slot].iter().map(|m| m.samples).sum()
    }

    /// Learns from `T_full − T_light` of a pair of `kind` whose light
    /// side made `l` calls light.
    fn learn_diff(&mut self, kind: Kind, l: u32, diff: i64) {
        // R1: a cost measured directly (here, in the running program).
        if self.means[self.slot][kind as usize].add(diff) {
            self.fits[self.slot].add(l, diff);
        }
        self.windows += 1;
        if let Some(per_call) = self.full_less_light() {
            // The full pair in this program, less what the start-up
            // calibration charges for it.
            let pair = per_call + self.light as i64;
            let surplus = pair - (self.enter_whole + self.exit_whole) as i64;
            self.surplus = surplus;
            self.remember(surplus);
        }
    }

    /// What a full call costs the program more than a light one, ns,
    /// once enough pairs are in: the slope of the line through them, the
    /// end effect cancelled ([`Kind`]), once pairs of two light lengths
    /// are in; before, the mean difference per light call.
    fn full_less_light(&self) -> Option<i64> {
        let [long, short, segment, partial] = &self.means[self.slot];
        let enough = |m: &Recent| m.kept >= u64::from(MIN_SAMPLES);
        let fit = &self.fits[self.slot];
        let two_lengths = (enough(long) && enough(short)) || (enough(segment) && enough(partial));
        let per_call = if two_lengths && let Some(slope) = fit.slope() {
            Some(slope)
        } else if self.samples() >= u64::from(MIN_SAMPLES) {
            fit.per_light_call()
        } else {
            None
        };
        per_call.map(|x| x.round() as i64)
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
    /// window begins ([`Self::begin_windows`]), unless they are the ones
    /// kept of the region probed before the last ([`Self::swap_saved`]):
    /// then `true`.
    #[inline(always)]
    fn switch(&mut self, k: u64, path: Path) -> bool {
        let back = self.saved.key == k && self.saved.path == path;
        let keep = self.streak > 0;
        let previous = if keep || back {
            self.swap_saved(keep)
        } else {
            Saved::NONE
        };
        self.key = k;
        self.path = path;
        // Entries fill from the first: nothing learned, nothing to look up.
        self.surplus = if !back && self.learned[0].0 as u32 != NONE {
            self.learned
                .iter()
                .find(|e| e.0 == k && e.1 == path)
                .map_or(0, |e| e.2)
        } else {
            0
        };
        self.fresh = true;
        self.restart();
        if back {
            self.restore(&previous);
        }
        back
    }

    /// Keeps the statistics of the region probed so far (`keep`), or
    /// forgets the kept ones; returns those kept before.
    #[cold]
    #[inline(never)]
    fn swap_saved(&mut self, keep: bool) -> Saved {
        let previous = self.saved;
        self.saved = if keep {
            Saved {
                key: self.key,
                path: self.path,
                streak: self.streak,
                leaf: self.leaf,
                fresh: self.fresh,
                slot: self.slot,
                inclusive_sum: self.inclusive_sum,
                inclusive_n: self.inclusive_n,
                fulls_since_light: self.fulls_since_light,
                segments_since_pair: self.segments_since_pair,
                first: self.first,
                segment_calls: self.segment_calls,
                last_segment: self.last_segment,
                surplus: self.surplus,
                light: self.light,
                enter_whole: self.enter_whole,
                exit_whole: self.exit_whole,
            }
        } else {
            Saved::NONE
        };
        // The next region's window differences go to the other slot: the
        // kept region's stay where they are.
        if keep {
            self.slot = 1 - self.slot;
        }
        previous
    }

    /// Takes back the statistics kept for the region now probed again.
    #[cold]
    #[inline(never)]
    fn restore(&mut self, s: &Saved) {
        self.streak = s.streak;
        self.leaf = s.leaf;
        self.fresh = s.fresh;
        self.slot = s.slot;
        self.inclusive_sum = s.inclusive_sum;
        self.inclusive_n = s.inclusive_n;
        self.fulls_since_light = s.fulls_since_light;
        self.segments_since_pair = s.segments_since_pair;
        self.first = s.first;
        self.segment_calls = s.segment_calls;
        self.last_segment = s.last_segment;
        self.surplus = s.surplus;
        self.light = s.light;
        self.enter_whole = s.enter_whole;
        self.exit_whole = s.exit_whole;
    }

    /// The first window of a newly probed region: its statistics begin.
    #[cold]
    fn begin_windows(&mut self) {
        self.fresh = false;
        self.means[self.slot] = [Recent::new(); KINDS];
        self.fits[self.slot] = Fit::new();
        self.short_next = false;
        self.fulls_since_light = 0;
        self.segments_since_pair = 0;
        self.inclusive_sum = 0;
        self.inclusive_n = 0;
    }

    fn restart(&mut self) {
        self.streak = 0;
        self.light_at = NEVER;
        self.full_part = 0;
        self.phase = Phase::Idle;
        self.calls = 0;
        self.exit_t = u64::MAX;
        self.at_start = false;
        self.segment_calls = 0;
        self.last_segment = 0;
        self.leaf = false;
        self.first = None;
        // Another region now: an exit of its leaves is no replayed call's.
        self.replayed_open = false;
    }

    /// The surplus charged per pair of `region` (what was learned), ns.
    pub fn learned(&self) -> impl Iterator<Item = (u32, u32, i64)> + '_ {
        self.learned
            .iter()
            .filter(|e| e.0 as u32 != NONE)
            .map(|&(k, _, surplus)| (k as u32, (k >> 32) as u32, surplus))
    }
}

#[cfg(test)]
mod tests;
