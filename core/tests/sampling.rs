//! R13 (004 §II.B, Fig. 2): over random timelines, the weights of the
//! samples outside communication plus the directly measured communication
//! add up to the elapsed time, and each weight is the computation since
//! the previous weighted sample. A property test with `std` collections,
//! so it lives outside the no_std source.

use heisen_core::sampling::EffectiveInterval;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

// --- invariant: weights + communication == end - start -----------------

/// One stretch of a location's timeline.
#[derive(Clone, Debug)]
struct Stretch {
    /// Inside a communication call, or computing.
    communication: bool,
    duration: u64,
    /// Sample offsets into the stretch, as fractions of 1000.
    samples: Vec<u16>,
}

fn stretch() -> impl Strategy<Value = Stretch> {
    (
        any::<bool>(),
        0u64..5_000,
        proptest::collection::vec(0u16..1000, 0..4),
    )
        .prop_map(|(communication, duration, samples)| Stretch {
            communication,
            duration,
            samples,
        })
}

/// Computation time in `(from, to]`, from the timeline written out.
fn computation_between(computing: &[(u64, u64)], from: u64, to: u64) -> i64 {
    computing
        .iter()
        .map(|&(b, e)| e.min(to).saturating_sub(b.max(from)) as i64)
        .sum()
}

proptest! {
    // Deterministic: a fixed seed, so every run checks the same cases.
    #![proptest_config(ProptestConfig { rng_seed: RngSeed::Fixed(0x4ee1_5e4d), ..ProptestConfig::with_cases(2000) })]

    #[test]
    fn weights_plus_communication_equal_elapsed(
        start in 0u64..1_000_000_000_000,
        stretches in proptest::collection::vec(stretch(), 0..40),
        tail in 0u64..5_000,
    ) {
        let mut s = EffectiveInterval::new(start);
        let mut computing = Vec::new();
        let mut t = start;
        let mut previous = start;
        let mut weights = 0i64;
        for st in &stretches {
            let end = t + st.duration;
            let mut offsets: Vec<u64> = st.samples.iter().map(|&f| st.duration * u64::from(f) / 1000).collect();
            offsets.sort_unstable();
            if st.communication {
                // Samples strictly inside the call are ignored.
                for &o in offsets.iter().filter(|&&o| o > 0 && o < st.duration) {
                    prop_assert_eq!(s.on_sample(t + o, true), None);
                }
                s.on_communication(st.duration);
            } else {
                computing.push((t, end));
                for &o in &offsets {
                    let weight = s.on_sample(t + o, false);
                    // Oracle: the computation time since the previous weighted sample.
                    prop_assert_eq!(weight, Some(computation_between(&computing, previous, t + o)));
                    weights += weight.unwrap_or(0);
                    previous = t + o;
                }
            }
            t = end;
        }
        let end = t + tail;
        computing.push((t, end));
        let remainder = s.finish(end);
        prop_assert_eq!(remainder, computation_between(&computing, previous, end));
        let communication: u64 = stretches.iter().filter(|st| st.communication).map(|st| st.duration).sum();
        prop_assert_eq!(s.communication(), communication);
        prop_assert_eq!(weights + remainder + communication as i64, (end - start) as i64);
        prop_assert_eq!(s.computation(), weights + remainder);
        prop_assert_eq!(s.negative_intervals(), 0);
    }
}
