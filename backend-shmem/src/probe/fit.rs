//! The statistics of online costing's pairs (`super`): each kind's
//! recent differences, which tell its outliers, and the least-squares
//! line through every pair kept, whose slope is what a full call costs
//! the program more than a light one (DESIGN R1; docs/rules.md, R1,
//! "The read after light calls").

use super::{MIN_SAMPLES, OUTLIER, SAMPLES};

/// A kind of pair's recent differences, which tell its outliers.
///
/// Every pair is kept but one far from the recent median ([`OUTLIER`]):
/// a window the thread was preempted in, or one a long interrupt took,
/// which are no cost of the pair; and none before the [`MIN_SAMPLES`]th,
/// when the median cannot tell. The kept ones go into a [`Fit`], which
/// takes their mean, not their median: what the pairs add to the run is
/// their mean cost, and window lengths are skewed (a full window's mean
/// is several ns a call above its median here).
#[derive(Clone, Copy, Debug)]
pub(super) struct Recent {
    recent: [i64; SAMPLES],
    pub(super) samples: u64,
    pub(super) kept: u64,
}

impl Recent {
    pub(super) const fn new() -> Recent {
        Recent {
            recent: [0; SAMPLES],
            samples: 0,
            kept: 0,
        }
    }

    /// Adds a difference; `true` when it is kept.
    pub(super) fn add(&mut self, diff: i64) -> bool {
        self.recent[(self.samples % SAMPLES as u64) as usize] = diff;
        self.samples += 1;
        if self.samples < u64::from(MIN_SAMPLES) {
            // Too few for a median that tells an outlier: a window
            // preempted among the first would stay in the mean for good.
            return false;
        }
        let n = (self.samples as usize).min(SAMPLES);
        let mut recent = self.recent;
        let recent = &mut recent[..n];
        recent.sort_unstable();
        let median = recent[n / 2];
        // R1: only the pairs' own cost is charged.
        let kept = (diff - median).abs() <= 2 * median.abs() + OUTLIER;
        self.kept += u64::from(kept);
        kept
    }
}

/// The least-squares line `difference = l × (full − light) − tail`
/// through the kept pairs, `l` the calls a pair's light side made light
/// (the probe's `Kind`): sums of `l`, the difference, and their squares and
/// product.
#[derive(Clone, Copy, Debug)]
pub(super) struct Fit {
    n: f64,
    l: f64,
    d: f64,
    ll: f64,
    ld: f64,
}

impl Fit {
    pub(super) const fn new() -> Fit {
        Fit {
            n: 0.0,
            l: 0.0,
            d: 0.0,
            ll: 0.0,
            ld: 0.0,
        }
    }

    pub(super) fn add(&mut self, l: u32, diff: i64) {
        let (l, d) = (f64::from(l), diff as f64);
        self.n += 1.0;
        self.l += l;
        self.d += d;
        self.ll += l * l;
        self.ld += l * d;
    }

    /// The slope, `full − light` per call with the tail taken out (`None`
    /// while the pairs' light lengths hardly differ: their variance, the
    /// spread over `n²`, below 0.01 call²; two-call segments, `l` 1 or 2,
    /// have 0.25).
    pub(super) fn slope(&self) -> Option<f64> {
        let spread = self.n * self.ll - self.l * self.l;
        (spread > 0.01 * self.n * self.n).then(|| (self.n * self.ld - self.l * self.d) / spread)
    }

    /// The mean difference per light call (the tail left in).
    pub(super) fn per_light_call(&self) -> Option<f64> {
        (self.l > 0.0).then(|| self.d / self.l)
    }
}
