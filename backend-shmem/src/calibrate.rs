//! Start-up calibration of the instrumentation's own costs (R1): time N
//! back-to-back actions through the very code path a program takes, take
//! the median over batches, and split each cost around its clock read.
//!
//! For regions (R1, 000 §2, refined in situ as docs/rules.md says): the
//! whole cost of an enter+exit pair (the Rust API's, the C API's, the
//! compiler hooks') is what it adds to a loop of generic work ([`work`]),
//! the median over several work sizes ([`in_situ_cost`]); the part inside the region's own interval is the measured inclusive
//! time of an empty region timed back to back (the enter's work after its
//! clock read plus the exit's before its own). The rest falls in the
//! parent's interval.

use heisen_core::{Cost, Dependency};

use crate::probe::Path;
use crate::report::PairCalibration;
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
/// The whole cost of the pair is its in-situ cost ([`in_situ_cost`]: what
/// it adds to generic work, not what a loop of empty regions takes); the
/// part inside the region's own interval is the measured inclusive
/// time of the empty region timed back to back (the enter's work after
/// its clock read plus the exit's before its own). Each is split evenly
/// between the enter and the exit; rounding keeps the pair's sum to the
/// nearest ns. `path` names the pair in the report's
/// `runtime.calibration`. With online costing the same pair's light form
/// is timed too (in situ as well: `light`).
pub fn region_pair(rt: &'static Runtime, path: Path, mut pair: impl FnMut()) -> RegionPair {
    let what = path.name();
    let (back_to_back, (in_situ, by_size), inside) = thread::calibrating(rt, || {
        let per_pair = per_call(rt, &mut pair);
        let inside = thread::with_current(|s| {
            s.stats
                .region(SCRATCH_REGION, 0)
                .map_or(0.0, |r| r.measured_inclusive as f64 / r.count.max(1) as f64)
        })
        .unwrap_or(0.0);
        let in_situ = in_situ_cost(rt, what, per_pair, &mut pair, || {});
        (per_pair, in_situ, inside)
    });
    // R1: an enter's part after its clock read and an exit's part before
    // its own are inside the region. The in-situ surplus is the program's
    // own code slowed down around the actions, outside the region.
    let whole = ns(in_situ);
    let inside_ns = ns(inside).min(whole);
    let enter = Cost {
        whole: whole / 2,
        inside: inside_ns / 2,
    };
    let exit = Cost {
        whole: whole - enter.whole,
        inside: inside_ns - enter.inside,
    };
    // R1, online costing (`probe`): the same pair as the calls of a
    // light window make it, no clock read and nothing kept. The forced
    // window ends (its calls dropped) when `calibrating` drops the scratch
    // state.
    let light = if rt.config().online {
        thread::calibrating(rt, || {
            thread::with_current(|s| s.force_light(SCRATCH_REGION, path));
            let back_to_back = per_call(rt, &mut pair);
            let light_what = format!("{what} light");
            in_situ_cost(rt, &light_what, back_to_back, &mut pair, || {}).0
        })
    } else {
        0.0
    };
    note_in_situ(
        rt,
        what,
        back_to_back,
        &by_size,
        whole,
        inside_ns,
        ns(light),
    );
    RegionPair { enter, exit }
}

/// A cost of `whole` ns whose part `before` (ns) falls before its clock
/// read (R1: charged before the read, the rest after it).
pub fn split(whole: f64, before: f64) -> Cost {
    let whole = ns(whole);
    Cost {
        whole,
        inside: whole.saturating_sub(ns(before)),
    }
}

/// The costs of a lock+unlock pair costed in situ (R1 as docs/rules.md
/// refines it), kept for the report as `what`: the unlock its own
/// back-to-back cost `unlock`, the lock the rest of the pair's in-situ
/// cost `in_situ` (measured against the plain pair, `by_size` per work
/// size). The in-situ surplus (the program's code slowed down around the
/// call) is charged before the lock's clock read, outside the interval a
/// wait may absorb; the part after it stays the back-to-back figure's.
/// `before`: what of each action falls before its read. Returns (lock,
/// unlock).
pub fn lock_pair(
    rt: &Runtime,
    what: &str,
    back_to_back: f64,
    (in_situ, by_size): (f64, [f64; WORK_STEPS.len()]),
    unlock: f64,
    before: f64,
) -> (Cost, Cost) {
    let unlock_cost = split(unlock, before);
    let lock_cost = {
        let whole = ns(in_situ - unlock);
        let after_read = split(back_to_back - unlock, before).inside;
        Cost {
            whole,
            inside: after_read.min(whole),
        }
    };
    note_in_situ(
        rt,
        what,
        back_to_back,
        &by_size,
        lock_cost.whole + unlock_cost.whole,
        lock_cost.inside + unlock_cost.inside,
        0,
    );
    (lock_cost, unlock_cost)
}

/// Keeps for the report how the pair `what` was costed (R1): its
/// back-to-back time, its cost at each work size (only where it was
/// measured in situ) and the `whole` and `inside` costs charged.
pub fn note_in_situ(
    rt: &Runtime,
    what: &str,
    back_to_back: f64,
    by_size: &[f64; WORK_STEPS.len()],
    whole: u64,
    inside: u64,
    light: u64,
) {
    let measured = rt.config().in_situ;
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
        inside,
        light,
    });
}

/// What [`region_pair`] measured.
#[derive(Clone, Copy, Debug)]
pub struct RegionPair {
    /// The enter's cost (R1, in situ).
    pub enter: Cost,
    /// The exit's cost (R1, in situ).
    pub exit: Cost,
}

/// Calibrates the runtime's own actions: enter and exit (with their parts
/// inside the region), the generic release and merge, a thread's start and
/// end, and the clock read.
pub(crate) fn runtime(rt: &'static Runtime) {
    let clock = per_call(rt, || {
        core::hint::black_box(rt.now());
    });
    let pair = region_pair(rt, Path::Rust, || {
        thread::with_current_region(|s| s.enter_rust(SCRATCH_REGION, 0));
        let _ = thread::with_current_region(|s| s.exit_rust(SCRATCH_REGION));
    });
    rt.set_region_costs(pair.enter, pair.exit);
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
