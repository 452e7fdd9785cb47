//! Start-up calibration of the instrumentation's own costs (R1): time N
//! back-to-back actions through the very code path a program takes, take
//! the median over batches, and split each cost around its clock read.
//!
//! For regions (R1, 000 §2, refined in situ as docs/rules.md says): the
//! whole cost of an enter+exit pair made of calls the program cannot see
//! into (C API, compiler hooks) is what it adds to a loop of generic work
//! ([`work`]), the median over several work sizes ([`in_situ_cost`]); an
//! inlined pair (the Rust API) is timed back to back;
//! the part inside the region's own interval is the measured inclusive
//! time of an empty region timed back to back (the enter's work after its
//! clock read plus the exit's before its own). The rest falls in the
//! parent's interval.

use heisen_core::{Calibration, Cost, Dependency};

use crate::report::PairCalibration;
use crate::runtime::{NO_REGION, Runtime};
use crate::thread;
use crate::{Kernel, SELECTED};

/// Actions per batch.
pub const ITERATIONS: usize = 2_000;

/// Batches; the median is taken.
pub const BATCHES: usize = 15;

/// A region id no program uses, for calibration loops.
pub const SCRATCH_REGION: u32 = NO_REGION - 1;

/// The median time per call of `op`, in ns, over [`BATCHES`] batches of
/// [`ITERATIONS`] calls, timed with the runtime's clock.
pub fn per_call(rt: &Runtime, mut op: impl FnMut()) -> f64 {
    let mut batches = [0.0f64; BATCHES];
    for b in &mut batches {
        let t0 = rt.now();
        for _ in 0..ITERATIONS {
            op();
        }
        let t1 = rt.now();
        *b = (t1 - t0) as f64 / ITERATIONS as f64;
    }
    median(&mut batches)
}

/// What `op` costs more than `baseline` per call, in ns (never below 0):
/// a wrapper's overhead over the plain operation. The two are measured in
/// alternating batches so that a busy machine slows both alike.
pub fn overhead(rt: &Runtime, mut op: impl FnMut(), mut baseline: impl FnMut()) -> f64 {
    let mut diffs = [0.0f64; BATCHES];
    for d in &mut diffs {
        let t0 = rt.now();
        for _ in 0..ITERATIONS {
            baseline();
        }
        let t1 = rt.now();
        for _ in 0..ITERATIONS {
            op();
        }
        let t2 = rt.now();
        *d = ((t2 - t1) as f64 - (t1 - t0) as f64) / ITERATIONS as f64;
    }
    median(&mut diffs).max(0.0)
}

/// Sizes of the work kernel ([`work`], in steps of about 1.5 ns here)
/// between two actions in the in-situ calibration ([`in_situ`]): from
/// about as long as an action to several times longer.
pub const WORK_STEPS: [u32; 4] = [32, 64, 128, 256];

/// Iterations of one in-situ batch (fewer than [`ITERATIONS`]: each also
/// runs the work kernel).
pub const IN_SITU_ITERATIONS: usize = 300;

/// A generic work kernel standing for a program's own code between two
/// instrumentation actions (R1, in situ): `steps` rounds of a dependent
/// multiply-xor chain reading a small table, in a loop the branch
/// predictor follows, each call's chain independent of the previous one's
/// (as consecutive calls of a program's small functions often are, so that
/// the core overlaps them). It is not modelled on any one program: it
/// keeps the core's out-of-order window, predictors and caches busy with
/// code other than heisen's, as a program does.
#[inline(never)]
pub fn work(table: &mut [u64; 64], steps: u32) -> u64 {
    let seed = table[63].wrapping_add(1);
    table[63] = seed;
    let mut x = seed;
    for i in 0..u64::from(steps) {
        x = (x ^ (x >> 7)).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ table[(i & 31) as usize];
    }
    x
}

/// What `op` adds per call to code that runs [`work`] of `steps` steps
/// between calls, in ns: alternating batches of [`IN_SITU_ITERATIONS`]
/// iterations of `[work; op]` and of `[work; baseline]`, the median of the
/// differences over [`BATCHES`] (`baseline` is nothing for a region pair,
/// the plain operation for a wrapper). Unlike a back-to-back loop
/// ([`per_call`]) this sees what the action costs the code around it: the
/// overlap of independent work it prevents, the predictor and cache state
/// it disturbs (the effects DESIGN §5 leaves unmodelled).
pub fn in_situ(rt: &Runtime, steps: u32, mut op: impl FnMut(), mut baseline: impl FnMut()) -> f64 {
    let mut table = [0u64; 64];
    for (i, t) in (1u64..).zip(table.iter_mut()) {
        *t = i.wrapping_mul(0x2545_f491_4f6c_dd1d);
    }
    let mut diffs = [0.0f64; BATCHES];
    let mut sink = 0u64;
    for d in &mut diffs {
        let t0 = rt.now();
        for _ in 0..IN_SITU_ITERATIONS {
            sink ^= work(&mut table, core::hint::black_box(steps));
            baseline();
        }
        let t1 = rt.now();
        for _ in 0..IN_SITU_ITERATIONS {
            sink ^= work(&mut table, core::hint::black_box(steps));
            op();
        }
        let t2 = rt.now();
        *d = ((t2 - t1) as f64 - (t1 - t0) as f64) / IN_SITU_ITERATIONS as f64;
    }
    core::hint::black_box(sink);
    median(&mut diffs)
}

/// The in-situ cost of `op` over `baseline` (R1 as docs/rules.md refines
/// it): the median of [`in_situ`] over [`WORK_STEPS`], and each size's
/// figure. Once the work between two actions is about as long as the
/// action, the added cost reaches a plateau (it does not grow with longer
/// work); the median of the plateau's sizes is robust against one size
/// measured while the machine changed speed. Writes each size's cost to
/// stderr when `HEISEN_CALIBRATION_TRACE` is set. With
/// `HEISEN_CALIBRATION=back-to-back` it returns `back_to_back` unmeasured.
pub fn in_situ_cost(
    rt: &Runtime,
    what: &str,
    back_to_back: f64,
    mut op: impl FnMut(),
    mut baseline: impl FnMut(),
) -> (f64, [f64; WORK_STEPS.len()]) {
    if !rt.config().in_situ {
        // HEISEN_CALIBRATION=back-to-back: R1 as first written.
        return (back_to_back, [back_to_back; WORK_STEPS.len()]);
    }
    let costs = WORK_STEPS.map(|steps| in_situ(rt, steps, &mut op, &mut baseline));
    if std::env::var_os("HEISEN_CALIBRATION_TRACE").is_some() {
        let sizes: Vec<String> = WORK_STEPS
            .iter()
            .zip(costs)
            .map(|(w, c)| format!("{w}: {c:.1}"))
            .collect();
        eprintln!(
            "heisen: calibration {what}: back to back {back_to_back:.1} ns, in situ by work steps {}",
            sizes.join(", ")
        );
    }
    (median(&mut costs.clone()), costs)
}

/// The median (the mean of the middle two for an even count).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n.is_multiple_of(2) {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    } else {
        values[n / 2]
    }
}

/// Rounds a cost to whole ns.
pub fn ns(cost: f64) -> u64 {
    cost.round().max(0.0) as u64
}

/// The enter and exit costs of one way of entering regions (R1): `pair`
/// enters and exits [`SCRATCH_REGION`] once, through the path being
/// calibrated (the Rust API, a C call, a compiler hook). Runs in a scratch
/// state ([`thread::calibrating`]), so it leaves no location behind.
///
/// The whole cost of an [`Placement::OutOfLine`] pair is its in-situ cost
/// ([`in_situ_cost`]: what it adds to generic work, not what a loop of
/// empty regions takes); that of an [`Placement::Inline`] pair is the time
/// a loop of empty regions takes per iteration;
/// the part inside the region's own interval is the measured inclusive
/// time of the empty region timed back to back (the enter's work after
/// its clock read plus the exit's before its own). Each is split evenly
/// between the enter and the exit; rounding keeps the pair's sum to the
/// nearest ns. `what` names the path in the report's
/// `runtime.calibration`.
pub fn region_pair(
    rt: &'static Runtime,
    what: &str,
    placement: Placement,
    mut pair: impl FnMut(),
) -> RegionPair {
    // R1 tracked: a path calibrated after the runtime's own (the C API,
    // the hooks) is stored at the runtime's reference speed (1 for the
    // runtime's own pair, which sets the reference).
    let f = to_reference(rt);
    let (back_to_back, (in_situ, by_size), inside) = thread::calibrating(rt, || {
        let per_pair = per_call(rt, &mut pair);
        let inside = thread::with_current(|s| {
            s.stats
                .region(SCRATCH_REGION, 0)
                .map_or(0.0, |r| r.measured_inclusive as f64 / r.count.max(1) as f64)
        })
        .unwrap_or(0.0);
        let in_situ = match placement {
            Placement::OutOfLine => in_situ_cost(rt, what, per_pair, &mut pair, || {}),
            Placement::Inline => (per_pair, [per_pair; WORK_STEPS.len()]),
        };
        (per_pair, in_situ, inside)
    });
    // R1: an enter's part after its clock read and an exit's part before
    // its own are inside the region. The in-situ surplus is the program's
    // own code slowed down around the actions, outside the region.
    let whole = ns(in_situ * f);
    let inside_ns = ns(inside * f).min(whole);
    let enter = Cost {
        whole: whole / 2,
        inside: inside_ns / 2,
    };
    let exit = Cost {
        whole: whole - enter.whole,
        inside: inside_ns - enter.inside,
    };
    // Sizes only where the pair was measured in situ.
    let measured = placement == Placement::OutOfLine && rt.config().in_situ;
    rt.note_pair(PairCalibration {
        path: what.to_owned(),
        back_to_back: ns(back_to_back),
        work_steps: if measured {
            WORK_STEPS.to_vec()
        } else {
            Vec::new()
        },
        in_situ: if measured {
            by_size.iter().map(|&c| ns(c)).collect()
        } else {
            Vec::new()
        },
        whole,
        inside: inside_ns,
    });
    RegionPair { enter, exit }
}

/// How a region path sits in a program's code, which decides how its pair
/// is costed (R1 as docs/rules.md refines it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Compiled into the program's own code (the Rust API's guards and
    /// closures): the compiler schedules the program around it, and the
    /// pair is timed back to back.
    Inline,
    /// A call the program cannot see into (a C API call, a compiler
    /// hook): the program spills its live registers around it and its
    /// independent work no longer overlaps across it, so the pair is
    /// costed in situ ([`in_situ_cost`]).
    OutOfLine,
}

/// What [`region_pair`] measured.
#[derive(Clone, Copy, Debug)]
pub struct RegionPair {
    /// The enter's cost (R1, in situ).
    pub enter: Cost,
    /// The exit's cost (R1, in situ).
    pub exit: Cost,
}

// ----- tracking what the instrumentation costs the program (R1) -----------
//
// A cost calibrated once at start-up, back to back, is what an action
// costs the program only if the program runs it the way the loop did. On
// this project's VM it does not, in two ways (docs/fidelity.md,
// "Threads"): a region pair between latency-bound cells of work costs the
// program 60-75 % of its back-to-back time (the core runs it in the
// slack of the program's dependent chain), and the instrumentation's own
// speed changes 1.5-2.5 times with the state of the core's sibling
// hardware thread, for seconds at a time, on one core and not the other,
// while the program's latency-bound code keeps its speed. With
// `HEISEN_CALIBRATION_TRACK=1` each thread measures in its own code what
// its region pairs cost it (a [`Sampler`] window every
// [`PROBE_INTERVAL`]) and scales every cost it charges by that against
// the pair's calibrated cost (R1: 000 §2, 002 §5.3.1 — the overhead is
// what an action costs where and when it runs). It is off by default:
// it measures the pair right, but the same factor does not fit the
// actions that move records between cores (a shared lock's hand-off, a
// queue item's record), which the back-to-back calibration under-charges;
// the over-charged pairs had hidden that, and tracking alone made the
// fidelity example's compensated time further off, not nearer.

/// Enter+exit pairs per probe batch.
pub const PROBE_PAIRS: u32 = 24;

/// Probe batches; the fastest is taken (an interrupt or preemption only
/// ever lengthens a batch).
pub const PROBE_BATCHES: usize = 4;

/// Measured time between two sampling windows of one thread, ns (a
/// window is 1,024 enters, a few per cent of a hot region's).
pub const PROBE_INTERVAL: u64 = 500_000;

/// One in fixed point: a thread's cost scale is `scale / SCALE_ONE`.
pub const SCALE_ONE: u64 = 1 << 10;

/// The bounds of a thread's cost scale (a quarter to four times the
/// calibrated cost): an estimate outside them is not the machine's state
/// but an accident, and the last scale stays.
pub const SCALE_BOUNDS: (u64, u64) = (SCALE_ONE / 4, SCALE_ONE * 4);

/// Region enters per block of an in-situ sampling window ([`Sampler`]).
pub const BLOCK: u32 = 32;

/// Blocks per window (half of them without instrumentation).
pub const BLOCKS: u32 = 32;

/// Most a pair can add per enter, ns: a block pair whose difference says
/// more held a wait or a preemption and is left out.
pub const MAX_ADDED: u64 = 400;

/// What the instrumentation of a region pair costs the program where it
/// runs, measured in the program itself (R1 in situ, tracked; 000 §2). A
/// window is [`BLOCKS`] blocks of [`BLOCK`] region enters; every other
/// block runs its enters and exits without instrumentation (no clock
/// read, no kernel, no statistics: those pairs are missing from the
/// profile, a few per cent of a hot region's calls), and the difference
/// between the two kinds of block, per enter, is what the pairs cost this
/// program's own code now — including how much of them overlaps with the
/// program's work, and the core's state. Adding extra pairs instead does
/// not measure that: the first pair fills the slack the program's
/// latency-bound code leaves, and an extra one pays its full
/// back-to-back time. The order within a block pair alternates, so that
/// a program slowly changing speed favours neither kind; a block pair
/// whose difference is beyond [`MAX_ADDED`] per enter (a wait, a
/// preemption) is left out. Windows are combined by an exponential
/// average (weight 1/4), so one window's noise moves the estimate little.
#[derive(Clone, Copy, Debug)]
pub struct Sampler {
    blocks_left: u32,
    block_left: u32,
    inject: bool,
    block_start: u64,
    /// The first block of the pair under way: (whether it was
    /// instrumented, its length).
    first: Option<(bool, u64)>,
    sums: [u64; 2],
    pairs: u32,
    estimate: Option<f64>,
}

impl Sampler {
    /// No window open, no estimate.
    pub const fn new() -> Sampler {
        Sampler {
            blocks_left: 0,
            block_left: 0,
            inject: false,
            block_start: 0,
            first: None,
            sums: [0; 2],
            pairs: 0,
            estimate: None,
        }
    }

    /// Opens a window at clock read `t` (its first block skips the
    /// instrumentation).
    pub fn start(&mut self, t: u64) {
        self.blocks_left = BLOCKS;
        self.block_left = BLOCK;
        self.inject = false;
        self.block_start = t;
        self.first = None;
        self.sums = [0; 2];
        self.pairs = 0;
    }

    /// Whether a window is open.
    #[inline]
    pub fn active(&self) -> bool {
        self.blocks_left > 0
    }

    /// Whether an enter now is instrumented (the other kind of block
    /// skips the instrumentation).
    #[inline]
    pub fn instrumenting(&self) -> bool {
        self.inject
    }

    /// Counts an enter of the open window. True when its block is full: [`Sampler::block_end`] is then
    /// due with the clock read of the next enter.
    #[inline]
    pub fn count(&mut self) -> bool {
        self.block_left = self.block_left.saturating_sub(1);
        self.block_left == 0
    }

    /// Ends a block at clock read `t` (the first enter after it) and
    /// starts the next; closing the window updates the estimate. True
    /// when the window closed.
    pub fn block_end(&mut self, t: u64) -> bool {
        let length = t.saturating_sub(self.block_start);
        match self.first.take() {
            None => self.first = Some((self.inject, length)),
            Some((with_first, first)) => {
                let (plain, with) = if with_first {
                    (length, first)
                } else {
                    (first, length)
                };
                if with.abs_diff(plain) <= MAX_ADDED * u64::from(BLOCK) {
                    self.sums[0] += plain;
                    self.sums[1] += with;
                    self.pairs += 1;
                }
            }
        }
        self.blocks_left = self.blocks_left.saturating_sub(1);
        if self.blocks_left == 0 {
            self.inject = false;
            self.finish();
            return true;
        }
        // The kind flips within a pair and stays between pairs, so the
        // order alternates: plain first, then extra first, and so on.
        if self.first.is_some() {
            self.inject = !self.inject;
        }
        self.block_left = BLOCK;
        self.block_start = t;
        false
    }

    fn finish(&mut self) {
        if self.pairs < BLOCKS / 4 {
            return; // mostly waits: no estimate from this window
        }
        let enters = f64::from(self.pairs) * f64::from(BLOCK);
        let added = (self.sums[1] as f64 - self.sums[0] as f64) / enters;
        self.estimate = Some(match self.estimate {
            None => added,
            Some(e) => e + (added - e) / 4.0,
        });
    }

    /// What a region pair's instrumentation costs the program now, ns
    /// (None before a window gave one).
    pub fn estimate(&self) -> Option<f64> {
        self.estimate
    }
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler::new()
    }
}

/// A kernel of its own for the probe: enter+exit of [`SCRATCH_REGION`] on
/// it leave the thread's own state untouched.
pub fn probe_kernel(rt: &Runtime) -> Box<Kernel> {
    let config = heisen_core::Config::new(u32::MAX, [NO_REGION; SELECTED])
        .form(rt.config().form)
        .calibration(rt.calibration());
    Box::new(Kernel::new(config, rt.now()))
}

/// The speed probe: the kernel's region enter and exit with their clock
/// reads (the bulk of every action's code), [`PROBE_PAIRS`] back to back,
/// the fastest of [`PROBE_BATCHES`] batches; ns per batch.
pub fn probe(rt: &Runtime, kernel: &mut Kernel) -> u64 {
    let mut best = u64::MAX;
    for _ in 0..PROBE_BATCHES {
        let t0 = rt.now().max(kernel.last_measured());
        let mut t = t0;
        for _ in 0..PROBE_PAIRS {
            let _ = kernel.on_enter(SCRATCH_REGION, 0, t);
            t = rt.now().max(t);
            let _ = kernel.on_exit(SCRATCH_REGION, t);
            t = rt.now().max(t);
        }
        best = best.min(t - t0);
    }
    best
}

/// The cost scale a probe of `probe` ns gives against the runtime's
/// reference, in [`SCALE_ONE`] units; `None` without a reference or when
/// outside [`SCALE_BOUNDS`].
pub fn scale_of(rt: &Runtime, probe: u64) -> Option<u64> {
    scale_between(rt.probe_reference(), probe)
}

/// The cost scale of a probe of `probe` ns against a reference probe of
/// `reference` ns ([`scale_of`]).
pub fn scale_between(reference: u64, probe: u64) -> Option<u64> {
    if reference == 0 {
        return None;
    }
    let scale = probe
        .saturating_mul(SCALE_ONE)
        .saturating_add(reference / 2)
        / reference;
    (SCALE_BOUNDS.0..=SCALE_BOUNDS.1)
        .contains(&scale)
        .then_some(scale)
}

/// `ns` scaled by `scale` ([`SCALE_ONE`] units), to the nearest ns.
#[inline]
pub fn scaled(ns: u64, scale: u64) -> u64 {
    (ns * scale + SCALE_ONE / 2) / SCALE_ONE
}

/// A cost scaled by `scale`; its inside part never exceeds its whole.
#[inline]
pub fn scaled_cost(cost: Cost, scale: u64) -> Cost {
    if scale == SCALE_ONE {
        // The same value without two multiplications on every region event
        // (R1: a thread not tracking its speed is never scaled).
        return cost;
    }
    Cost {
        whole: scaled(cost.whole, scale),
        inside: scaled(cost.inside, scale),
    }
}

/// The kernel's calibration scaled by `scale`.
pub fn scaled_calibration(c: Calibration, scale: u64) -> Calibration {
    Calibration {
        enter: scaled_cost(c.enter, scale),
        exit: scaled_cost(c.exit, scale),
        send: scaled(c.send, scale),
        merge: scaled(c.merge, scale),
        sample: scaled(c.sample, scale),
    }
}

/// What to multiply a cost timed now, on the calling thread, by so that
/// it is a cost at the runtime's reference speed (R1 tracked): a backend
/// that calibrates its own actions later than the runtime (the wrappers
/// on first use, the interposer at load) may run at another speed than
/// the runtime's calibration did. 1 without a reference or tracking.
pub fn to_reference(rt: &'static Runtime) -> f64 {
    if !rt.config().tracked {
        return 1.0;
    }
    let mut kernel = probe_kernel(rt);
    let reference = rt.probe_reference();
    let now = probe(rt, &mut kernel);
    if reference == 0 || now == 0 {
        1.0
    } else {
        reference as f64 / now as f64
    }
}

/// Calibrates the runtime's own actions: enter and exit (with their parts
/// inside the region), the generic release and merge, a thread's start and
/// end, and the clock read.
pub(crate) fn runtime(rt: &'static Runtime) {
    let clock = per_call(rt, || {
        core::hint::black_box(rt.now());
    });
    let pair = region_pair(rt, "enter+exit", Placement::Inline, || {
        thread::with_current(|s| s.enter(SCRATCH_REGION, 0));
        let _ = thread::with_current(|s| s.exit(SCRATCH_REGION));
    });
    rt.set_region_costs(pair.enter, pair.exit);
    // The speed the costs were calibrated at, right after the pair (R1
    // tracked: threads scale their costs by their own probe against it).
    let mut kernel = probe_kernel(rt);
    rt.set_probe_reference(probe(rt, &mut kernel));
    let b = rt.builtin();
    let release = thread::calibrating(rt, || {
        per_call(rt, || {
            thread::with_current(|s| core::hint::black_box(s.release(b.release)));
        })
    });
    let merge = thread::calibrating(rt, || {
        let record = thread::with_current(|s| s.peek()).unwrap_or(crate::Record::EMPTY);
        per_call(rt, || {
            thread::with_current(|s| {
                let begin = s.now();
                core::hint::black_box(s.merge(begin, &[Dependency::immediate(&record)], b.merge));
            });
        }) - clock // the begin's clock read happens before the blocking call
    });
    rt.set_cost(b.release, Cost::whole(ns(release)));
    rt.set_cost(b.merge, Cost::whole(ns(merge)));
    rt.set_cost(b.thread_start, Cost::whole(ns(merge)));
    rt.set_cost(b.thread_end, Cost::whole(ns(release)));
    let read = rt.action("clock_read");
    rt.set_cost(read, Cost::whole(ns(clock)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_is_the_probe_against_the_reference() {
        assert_eq!(scale_between(1_000, 1_000), Some(SCALE_ONE));
        assert_eq!(scale_between(1_000, 1_500), Some(SCALE_ONE * 3 / 2));
        assert_eq!(scale_between(1_000, 600), Some(614)); // 0.6, rounded
        // No reference yet, or a probe no machine state explains.
        assert_eq!(scale_between(0, 1_000), None);
        assert_eq!(scale_between(1_000, 4_001), None);
        assert_eq!(scale_between(1_000, 249), None);
        assert_eq!(scale_between(1_000, u64::MAX), None);
    }

    #[test]
    fn scaled_costs_round_to_the_nearest_ns_and_keep_their_split() {
        let c = Cost {
            whole: 15,
            inside: 6,
        };
        let s = scaled_cost(c, SCALE_ONE * 3 / 2);
        assert_eq!((s.whole, s.inside), (23, 9)); // 22.5 -> 23, 9
        assert_eq!(scaled_cost(c, SCALE_ONE), c);
        let cal = Calibration {
            enter: c,
            exit: c,
            send: 30,
            merge: 31,
            sample: 0,
        };
        let half = scaled_calibration(cal, SCALE_ONE / 2);
        assert_eq!(half.enter.whole, 8); // 7.5 -> 8
        assert_eq!(half.exit.inside, 3);
        assert_eq!((half.send, half.merge, half.sample), (15, 16, 0));
    }

    /// Feeds a sampler one window: each enter's interval is `work(i)`,
    /// plus `pair` when the enter was instrumented, plus `wait(i)`.
    fn window(s: &mut Sampler, pair: u64, work: impl Fn(u32) -> u64, wait: impl Fn(u32) -> u64) {
        let mut t = 1_000u64;
        s.start(t);
        let mut i = 0;
        while s.active() {
            let extra = if s.instrumenting() { pair } else { 0 };
            let full = s.count();
            t += work(i) + extra + wait(i);
            i += 1;
            if full {
                s.block_end(t);
            }
        }
    }

    #[test]
    fn the_sampler_measures_what_the_instrumentation_adds() {
        let mut s = Sampler::new();
        window(&mut s, 20, |_| 50, |_| 0);
        assert_eq!(s.estimate(), Some(20.0));
        // The next window moves the estimate by a quarter of the difference.
        window(&mut s, 40, |_| 50, |_| 0);
        assert_eq!(s.estimate(), Some(25.0));
        assert!(
            !s.instrumenting(),
            "a closed window ends in the state a new one starts in"
        );
    }

    #[test]
    fn a_program_period_and_a_slow_drift_do_not_bias_it() {
        // A lock every fourth cell, and the program slowing down by 1 ns
        // per 64 cells over the window.
        let mut s = Sampler::new();
        let work = |i: u32| if i.is_multiple_of(4) { 150 } else { 50 } + u64::from(i) / 64;
        window(&mut s, 20, work, |_| 0);
        let e = s.estimate().expect("an estimate");
        assert!((e - 20.0).abs() < 0.5, "{e}");
    }

    #[test]
    fn block_pairs_with_a_wait_are_left_out() {
        let mut s = Sampler::new();
        window(
            &mut s,
            20,
            |_| 50,
            |i| if i % 200 == 7 { 30_000 } else { 0 },
        );
        assert_eq!(s.estimate(), Some(20.0));
    }

    #[test]
    fn a_window_of_waits_gives_no_estimate() {
        let mut s = Sampler::new();
        // One block of every pair holds a wait: no pair is usable.
        let wait = |i: u32| {
            if (i / BLOCK).is_multiple_of(2) && i % BLOCK == 3 {
                30_000
            } else {
                0
            }
        };
        window(&mut s, 20, |_| 50, wait);
        assert_eq!(s.estimate(), None);
    }
}
