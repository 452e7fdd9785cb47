//! Exits after a non-local jump (`Location::on_exit_unwinding_costing`):
//! closing the abandoned frames must give exactly what their exits would
//! have given had they run at the same time at no cost (R1, R2), and must
//! close nothing when the exited region is not open.

use heisen_core::{Calibration, Config, Cost, Exited, FrameKind, KernelError, Location};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, TestRng, TestRunner};

type Loc = Location<2, 8>;

fn location() -> Loc {
    let mut config = Config::new(0, [1, 3]);
    config.calibration = Calibration {
        enter: Cost {
            whole: 7,
            inside: 3,
        },
        exit: Cost {
            whole: 5,
            inside: 2,
        },
        send: 11,
        merge: 13,
        sample: 0,
    };
    Location::new(config, 0)
}

const ZERO: Cost = Cost {
    whole: 0,
    inside: 0,
};
const EXIT: Cost = Cost {
    whole: 5,
    inside: 2,
};

#[test]
fn a_jump_out_of_two_functions_closes_them_as_exits_at_no_cost() {
    let (mut jumped, mut returned) = (location(), location());
    for loc in [&mut jumped, &mut returned] {
        loc.on_enter(1, 0, 10).unwrap();
        loc.on_enter(2, 0, 20).unwrap();
        loc.on_loop_enter(9, 0, 25).unwrap();
        loc.on_enter(3, 0, 30).unwrap();
    }
    let mut closed: Vec<Exited> = Vec::new();
    let last = jumped
        .on_exit_unwinding_costing(1, 100, EXIT, |e| closed.push(e))
        .unwrap();
    let expected = [
        returned.on_exit_costing(3, 100, ZERO).unwrap().unwrap(),
        returned.on_loop_exit_costing_for_test(9, 100),
        returned.on_exit_costing(2, 100, ZERO).unwrap().unwrap(),
    ];
    assert_eq!(closed, expected);
    assert_eq!(last, returned.on_exit_costing(1, 100, EXIT).unwrap());
    assert_eq!(closed[1].kind, FrameKind::Loop);
    assert_eq!(jumped.depth(), 0);
    assert_eq!(jumped.snapshot(), returned.snapshot());
    assert_eq!(jumped.delay(), returned.delay());
    assert_eq!(jumped.overhead(), returned.overhead());
}

/// The loop frame's exit at no cost, the way the unwinding closes it.
trait LoopExit {
    fn on_loop_exit_costing_for_test(&mut self, id: u32, t: u64) -> Exited;
}

impl LoopExit for Loc {
    fn on_loop_exit_costing_for_test(&mut self, id: u32, t: u64) -> Exited {
        // on_loop_exit charges the calibrated exit; with a zero exit cost
        // calibration it is the no-cost exit the unwinding performs.
        let saved = *self.calibration();
        let mut zero = saved;
        zero.exit = ZERO;
        self.set_calibration(zero);
        let e = self.on_loop_exit(id, t).unwrap().unwrap();
        self.set_calibration(saved);
        e
    }
}

#[test]
fn an_exit_of_a_region_not_open_closes_nothing_and_is_refused() {
    let mut loc = location();
    loc.on_enter(1, 0, 10).unwrap();
    loc.on_enter(2, 0, 20).unwrap();
    let mut closed = 0;
    let r = loc.on_exit_unwinding_costing(7, 30, EXIT, |_| closed += 1);
    assert_eq!(r, Err(KernelError::ExitMismatch { open: 2, exited: 7 }));
    assert_eq!((closed, loc.depth()), (0, 2));
    // The innermost matching exit is an ordinary exit.
    assert!(
        loc.on_exit_unwinding_costing(2, 40, EXIT, |_| closed += 1)
            .unwrap()
            .is_some()
    );
    assert_eq!((closed, loc.depth()), (0, 1));
}

#[test]
fn recursion_unwinds_to_the_innermost_frame_of_the_region() {
    let mut loc = location();
    for (i, r) in [1, 2, 1, 2, 3].into_iter().enumerate() {
        loc.on_enter(r, 0, 10 * (i as u64 + 1)).unwrap();
    }
    let mut closed = Vec::new();
    loc.on_exit_unwinding_costing(2, 100, EXIT, |e| closed.push(e.region))
        .unwrap();
    assert_eq!((closed, loc.depth()), (vec![3], 3));
}

/// Frames beyond the capacity are counted per bucket of `region % 64`, not
/// kept: an exit of a region that may be one of theirs is one of theirs,
/// as without unwinding.
#[test]
fn frames_beyond_the_capacity_are_not_guessed() {
    let mut loc = location();
    for i in 0..9u32 {
        loc.on_enter(i + 1, 0, u64::from(i) * 10).unwrap();
    }
    // Region 65 is lost, in the bucket of region 1, which is kept.
    loc.on_enter(65, 0, 90).unwrap();
    assert_eq!((loc.depth(), loc.lost_frames()), (10, 2));
    let mut closed = 0;
    assert_eq!(
        loc.on_exit_unwinding_costing(1, 200, EXIT, |_| closed += 1),
        Ok(None)
    );
    assert_eq!((closed, loc.depth()), (0, 9));
}

/// A jump out of an indirect recursion deeper than the capacity: the exit
/// of a kept frame whose bucket holds no lost frame cannot be a lost
/// frame's, so the lost frames were abandoned by the jump and are
/// forgotten, the kept frames above it closed, and later frames are kept
/// again (before, every later frame was lost).
#[test]
fn a_jump_out_of_a_deep_indirect_recursion_closes_it() {
    let mut loc = location();
    loc.on_enter(1, 0, 10).unwrap();
    loc.on_enter(2, 0, 20).unwrap();
    for i in 0..40u64 {
        loc.on_enter(3 + (i % 2) as u32, 0, 30 + i).unwrap();
    }
    assert_eq!(loc.depth(), 42);
    assert_eq!(loc.lost_frames(), 34);
    let mut closed = 0;
    let e = loc
        .on_exit_unwinding_costing(2, 100, EXIT, |_| closed += 1)
        .unwrap()
        .expect("region 2's own exit");
    assert_eq!((e.region, closed, loc.depth()), (2, 6, 1));
    // Frames are kept again.
    loc.on_enter(5, 0, 110).unwrap();
    assert!(loc.on_exit(5, 120).unwrap().is_some());
    assert!(loc.on_exit(1, 130).unwrap().is_some());
    assert_eq!((loc.depth(), loc.lost_frames()), (0, 34));
}

/// Any stack of regions, any open region jumped back to: the same state as
/// the explicit exits at no cost, then the region's own exit.
#[test]
fn unwinding_equals_the_skipped_exits() {
    let mut runner = TestRunner::new_with_rng(
        ProptestConfig::with_cases(2_000),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = (vec(1u32..6, 1..8), any::<prop::sample::Index>(), 1u64..50);
    runner
        .run(&strategy, |(regions, target, gap)| {
            let (mut a, mut b) = (location(), location());
            let mut t = 0;
            for &r in &regions {
                t += gap;
                a.on_enter(r, 0, t).unwrap();
                b.on_enter(r, 0, t).unwrap();
            }
            t += gap;
            let k = target.index(regions.len());
            let region = regions[k];
            // The innermost frame of `region` at or above k.
            let innermost = (k..regions.len())
                .rev()
                .find(|&i| regions[i] == region)
                .unwrap();
            let mut closed = Vec::new();
            let got = a
                .on_exit_unwinding_costing(region, t, EXIT, |e| closed.push(e))
                .unwrap();
            let mut expected = Vec::new();
            for i in (innermost + 1..regions.len()).rev() {
                expected.push(b.on_exit_costing(regions[i], t, ZERO).unwrap().unwrap());
            }
            prop_assert_eq!(closed, expected);
            prop_assert_eq!(got, b.on_exit_costing(region, t, EXIT).unwrap());
            prop_assert_eq!(a.snapshot(), b.snapshot());
            prop_assert_eq!(a.depth(), innermost);
            Ok(())
        })
        .unwrap();
}

/// Direct recursion beyond the stack's capacity loses nothing: the same
/// times, shares and records as a location deep enough to keep every frame
/// (the recursive frames fold, 002 Fig. 11); only other frames are lost.
#[test]
fn direct_recursion_beyond_the_capacity_is_not_lost() {
    let mut small = location();
    let mut config = Config::new(0, [1, 3]);
    config.calibration = *small.calibration();
    let mut deep: Location<2, 64> = Location::new(config, 0);
    let mut t = 0;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for region in [2, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3] {
        t += 10;
        small.on_enter(region, 0, t).unwrap();
        deep.on_enter(region, 0, t).unwrap();
    }
    assert_eq!(
        (small.lost_frames(), small.recursion_beyond_capacity()),
        (0, 5)
    );
    for region in [3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1] {
        t += 10;
        a.push(small.on_exit(region, t).unwrap());
        b.push(deep.on_exit(region, t).unwrap());
    }
    // The deep location's folded exits are records the statistics skip;
    // the small one has none for the calls beyond its capacity.
    let kept = |v: &[Option<Exited>]| -> Vec<Exited> {
        v.iter().flatten().filter(|e| !e.folded).copied().collect()
    };
    assert_eq!(kept(&a), kept(&b));
    assert_eq!(small.snapshot(), deep.snapshot());
    // A new region beyond the capacity is lost, and so is a recursive call
    // made inside it.
    for region in [1, 3, 3, 3, 3, 3, 3, 3, 4, 3] {
        t += 10;
        small.on_enter(region, 0, t).unwrap();
    }
    assert_eq!(
        (small.lost_frames(), small.recursion_beyond_capacity()),
        (2, 6)
    );
}

/// A jump out of a recursion deeper than the capacity still closes
/// everything above the jump point.
#[test]
fn a_jump_out_of_a_deep_recursion_closes_it() {
    let mut loc = location();
    loc.on_enter(1, 0, 10).unwrap();
    for i in 0..20 {
        loc.on_enter(2, 0, 20 + i).unwrap();
    }
    assert_eq!((loc.depth(), loc.lost_frames()), (21, 0));
    let mut closed = 0;
    assert!(
        loc.on_exit_unwinding_costing(1, 100, EXIT, |_| closed += 1)
            .unwrap()
            .is_some()
    );
    assert_eq!((closed, loc.depth()), (7, 0));
}
