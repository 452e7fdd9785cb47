//! Weights for timer samples taken outside communication calls, so that
//! sampled computation time and directly measured communication time add up
//! to the measured total (R13, 004 §II.B Fig. 2).
//!
//! Hybrid profiling measures communication calls directly and samples the
//! rest. A sample that lands inside a communication call is ignored (its
//! time is already measured); a sample outside is weighted by its
//! *effective sample interval*: the time since the previous sample outside
//! communication minus the communication time measured in between. Because
//! every nanosecond since the start is either communication (measured) or
//! part of exactly one effective interval, the weights plus the
//! communication durations equal the elapsed time exactly.
//!
//! # When communication exceeds the interval
//!
//! With consistent input this cannot happen: a communication call that
//! ends after the previous sample outside communication also began after it
//! (otherwise that sample would have been inside it). It can happen when a
//! backend reports a call's duration after taking a sample that already
//! counted as outside, or reads two different clocks. The weight is then
//! negative. It is returned as it is, never clamped to zero, so that the
//! sum stays exact, and it is counted in
//! [`negative_intervals`](EffectiveInterval::negative_intervals) so that the
//! report can show it (the same convention as over-compensation, R2).
//!
//! The weights are measured time. Removing the cost of the sample handler
//! itself is R1's job: the backend adds it to the location's delay like any
//! other instrumentation action.

/// The effective-interval state of one location (R13, 004 §II.B). Times are
/// measured nanoseconds from the location's clock.
///
/// Arithmetic is modulo 2^64, so no input panics; for times and durations
/// below 2^63 ns (292 years) every result is exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EffectiveInterval {
    /// When sampling started.
    start: u64,
    /// The latest sample outside communication (or `start`).
    previous: u64,
    /// Communication measured since `previous`, not yet subtracted.
    pending: u64,
    /// Communication measured since `start`.
    communication: u64,
    /// Sum of the weights handed out, including `finish` remainders.
    computation: i64,
    /// Weighted samples.
    samples: u64,
    /// Samples ignored because they landed inside communication.
    ignored: u64,
    /// Weights (and `finish` remainders) below zero.
    negative_intervals: u64,
}

impl EffectiveInterval {
    /// Starts sampling at measured time `start`.
    pub const fn new(start: u64) -> Self {
        EffectiveInterval {
            start,
            previous: start,
            pending: 0,
            communication: 0,
            computation: 0,
            samples: 0,
            ignored: 0,
            negative_intervals: 0,
        }
    }

    /// Adds the directly measured duration of a communication call that
    /// just ended (R13: measured, not sampled).
    pub fn on_communication(&mut self, duration: u64) {
        self.pending = self.pending.wrapping_add(duration);
        self.communication = self.communication.wrapping_add(duration);
    }

    /// A timer sample at measured time `t`. Returns `None` when it landed
    /// inside a communication call (ignored), otherwise its weight: the
    /// effective sample interval, which may be negative (see the module
    /// documentation).
    pub fn on_sample(&mut self, t: u64, inside_communication: bool) -> Option<i64> {
        if inside_communication {
            self.ignored = self.ignored.wrapping_add(1); // R13, 004 §II.B.1: interrupts inside MPI are ignored
            return None;
        }
        self.samples = self.samples.wrapping_add(1);
        Some(self.close_interval(t))
    }

    /// Ends sampling at measured time `end`. Returns the computation time
    /// since the last sample outside communication, so that all weights,
    /// this remainder and all communication durations add up to
    /// `end - start`. Calling it again, or sampling afterwards, continues
    /// from `end`.
    pub fn finish(&mut self, end: u64) -> i64 {
        self.close_interval(end)
    }

    /// Closes the effective interval `(previous, t]` and returns its length.
    fn close_interval(&mut self, t: u64) -> i64 {
        let elapsed = t.wrapping_sub(self.previous) as i64;
        // R13, 004 §II.B.2 Fig. 2: distance to the previous sample outside MPI minus MPI time in between
        let weight = elapsed.wrapping_sub(self.pending as i64);
        if weight < 0 {
            self.negative_intervals = self.negative_intervals.wrapping_add(1); // reported, never clamped
        }
        self.previous = t;
        self.pending = 0;
        self.computation = self.computation.wrapping_add(weight);
        weight
    }

    /// When sampling started.
    pub const fn start(&self) -> u64 {
        self.start
    }

    /// Sum of the weights and `finish` remainders handed out so far: the
    /// computation time up to the latest sample outside communication.
    pub const fn computation(&self) -> i64 {
        self.computation
    }

    /// Sum of all communication durations so far.
    pub const fn communication(&self) -> u64 {
        self.communication
    }

    /// Communication measured since the latest sample outside
    /// communication, not yet subtracted from any weight.
    pub const fn pending_communication(&self) -> u64 {
        self.pending
    }

    /// Samples that received a weight.
    pub const fn samples(&self) -> u64 {
        self.samples
    }

    /// Samples ignored because they landed inside communication.
    pub const fn ignored(&self) -> u64 {
        self.ignored
    }

    /// Weights (and `finish` remainders) that came out negative because the
    /// communication measured in an interval exceeded it.
    pub const fn negative_intervals(&self) -> u64 {
        self.negative_intervals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nominal timer interval of the Fig. 2 examples, ns.
    const INTERVAL: u64 = 10_000;

    // --- 004 Fig. 2 -------------------------------------------------------

    #[test]
    fn fig2a_ignored_sample_inside_mpi_lengthens_the_interval() {
        // Samples every 10 µs. Sample i-2 at 10 µs; MPI from 15 to 22 µs
        // swallows sample i-1 at 20 µs; sample i at 30 µs.
        let mut s = EffectiveInterval::new(0);
        assert_eq!(s.on_sample(INTERVAL, false), Some(10_000));
        assert_eq!(s.on_sample(2 * INTERVAL, true), None);
        s.on_communication(7_000);
        // (30 - 10) - 7 = 13 µs > 10 µs
        assert_eq!(s.on_sample(3 * INTERVAL, false), Some(13_000));
        assert_eq!((s.samples(), s.ignored()), (2, 1));
        assert_eq!(s.finish(3 * INTERVAL), 0);
        assert_eq!(s.computation() + s.communication() as i64, 30_000);
    }

    #[test]
    fn fig2b_mpi_inside_the_interval_shortens_it() {
        // Sample i-1 at 10 µs, MPI from 12 to 16 µs, sample i at 20 µs.
        let mut s = EffectiveInterval::new(0);
        assert_eq!(s.on_sample(INTERVAL, false), Some(10_000));
        s.on_communication(4_000);
        // (20 - 10) - 4 = 6 µs < 10 µs
        assert_eq!(s.on_sample(2 * INTERVAL, false), Some(6_000));
        assert_eq!(s.ignored(), 0);
    }

    // --- start and finish -------------------------------------------------

    #[test]
    fn first_interval_starts_at_start() {
        let mut s = EffectiveInterval::new(1_000);
        s.on_communication(300);
        assert_eq!(s.on_sample(11_000, false), Some(9_700));
        assert_eq!(s.start(), 1_000);
    }

    #[test]
    fn finish_returns_the_tail_after_the_last_sample() {
        let mut s = EffectiveInterval::new(0);
        s.on_sample(10_000, false);
        s.on_communication(2_000);
        s.on_sample(14_000, true);
        assert_eq!(s.pending_communication(), 2_000);
        assert_eq!(s.finish(15_000), 3_000);
        assert_eq!(s.pending_communication(), 0);
        assert_eq!(s.computation() + s.communication() as i64, 15_000);
    }

    #[test]
    fn finish_without_samples_is_all_computation_minus_communication() {
        let mut s = EffectiveInterval::new(5);
        s.on_communication(10);
        assert_eq!(s.finish(105), 90);
        assert_eq!(s.samples(), 0);
    }

    // --- inconsistent input -------------------------------------------------

    #[test]
    fn communication_longer_than_interval_gives_a_negative_counted_weight() {
        // A backend reported a 6 µs call that mostly lies before the sample
        // at 10 µs, after that sample had been taken as "outside".
        let mut s = EffectiveInterval::new(0);
        assert_eq!(s.on_sample(10_000, false), Some(10_000));
        s.on_communication(6_000);
        assert_eq!(s.on_sample(12_000, false), Some(-4_000));
        assert_eq!(s.negative_intervals(), 1);
        // The sum stays exact: 10 - 4 + 6 = 12 µs.
        assert_eq!(s.computation() + s.communication() as i64, 12_000);
    }

    #[test]
    fn sample_before_previous_gives_a_negative_counted_weight() {
        let mut s = EffectiveInterval::new(100);
        assert_eq!(s.on_sample(90, false), Some(-10));
        assert_eq!(s.negative_intervals(), 1);
    }
}
