//! Start-up calibration of the instrumentation's own costs (R1): time N
//! back-to-back actions through the very code path a program takes, take
//! the median over batches, and split each cost around its clock read.
//!
//! For regions (R1, 000 §2): the whole cost of an enter+exit pair is the
//! time a loop of empty regions takes per iteration; the part inside the
//! region's own interval is the measured inclusive time of the empty
//! region (the enter's work after its clock read plus the exit's before
//! its own). The rest falls in the parent's interval.

use heisen_core::{Cost, Dependency};

use crate::runtime::{NO_REGION, Runtime};
use crate::thread;

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

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
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
/// The whole cost of the pair is the time a loop of empty regions takes
/// per iteration; the part inside the region's own interval is the
/// measured inclusive time of the empty region (the enter's work after its
/// clock read plus the exit's before its own). Each is split evenly
/// between the enter and the exit; rounding keeps the pair's sum to the
/// nearest ns.
pub fn region_pair(rt: &'static Runtime, mut pair: impl FnMut()) -> (Cost, Cost) {
    let (pair, inside) = thread::calibrating(rt, || {
        let per_pair = per_call(rt, &mut pair);
        let inside = thread::with_current(|s| {
            s.stats
                .region(SCRATCH_REGION, 0)
                .map_or(0.0, |r| r.measured_inclusive as f64 / r.count.max(1) as f64)
        })
        .unwrap_or(0.0);
        (per_pair, inside)
    });
    // R1: an enter's part after its clock read and an exit's part before
    // its own are inside the region.
    let whole = ns(pair);
    let inside_ns = ns(inside).min(whole);
    let enter = Cost {
        whole: whole / 2,
        inside: inside_ns / 2,
    };
    let exit = Cost {
        whole: whole - enter.whole,
        inside: inside_ns - enter.inside,
    };
    (enter, exit)
}

/// Calibrates the runtime's own actions: enter and exit (with their parts
/// inside the region), the generic release and merge, a thread's start and
/// end, and the clock read.
pub(crate) fn runtime(rt: &'static Runtime) {
    let clock = per_call(rt, || {
        core::hint::black_box(rt.now());
    });
    let (enter, exit) = region_pair(rt, || {
        thread::with_current(|s| s.enter(SCRATCH_REGION, 0));
        let _ = thread::with_current(|s| s.exit(SCRATCH_REGION));
    });
    rt.set_region_costs(enter, exit);
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
