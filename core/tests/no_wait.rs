//! `merge::may_have_waited`: which merges of a real run waited (R5's `w`)
//! and which found everything they depend on already there, each case of
//! its doc apart.

use heisen_core::merge::{Dependency, may_have_waited};
use heisen_core::{Flags, Piggyback};

type Record = Piggyback<2>;

/// A record released at measured time `t` with delay 10, timestamped (R5)
/// or not (R4).
fn released(t: i64, timestamped: bool) -> Record {
    let flags = if timestamped {
        Flags::DELAY.with(Flags::TIMESTAMP)
    } else {
        Flags::DELAY
    };
    Record {
        flags,
        location: 1,
        delay: 10,
        approximated: t - 10,
        ..Record::EMPTY
    }
}

#[test]
fn a_release_before_the_begin_was_not_waited_for_one_at_or_after_it_may_have_been() {
    let r = released(1_000, true);
    assert!(!may_have_waited(1_001, &[Dependency::immediate(&r)]));
    // Ties count as waits, as in the transfer's case m.1 (`b <= t_j`).
    assert!(may_have_waited(1_000, &[Dependency::immediate(&r)]));
    assert!(may_have_waited(999, &[Dependency::immediate(&r)]));
}

#[test]
fn the_transfer_model_or_the_copy_cost_delays_availability() {
    let r = released(1_000, true);
    let message = |model, copy| Dependency::message(&r, model, copy);
    assert!(may_have_waited(1_100, &[message(200, 0)]));
    assert!(may_have_waited(1_100, &[message(0, 200)]));
    assert!(!may_have_waited(1_300, &[message(200, 100)]));
    // A hand-off let go at an unknown time after its record (a join, an
    // OpenMP team's launch) never counts as there before the merge.
    assert!(may_have_waited(u64::MAX, &[message(u64::MAX, 0)]));
}

#[test]
fn an_observed_arrival_stands_for_release_plus_model() {
    let r = released(1_000, true);
    let d = Dependency::message(&r, 1_000_000, 0);
    assert!(!may_have_waited(1_500, &[d.arrived(1_200)]));
    assert!(may_have_waited(1_500, &[d.arrived(1_500)]));
}

#[test]
fn one_dependency_arriving_late_is_enough() {
    let (early, late) = (released(1_000, true), released(2_000, true));
    let deps = [Dependency::immediate(&early), Dependency::immediate(&late)];
    assert!(may_have_waited(1_500, &deps));
    assert!(!may_have_waited(2_500, &deps));
}

#[test]
fn without_a_comparable_release_or_any_record_the_wait_stands() {
    // R4: a delay-only record has no release time to compare.
    let r = released(1_000, false);
    assert!(may_have_waited(5_000, &[Dependency::immediate(&r)]));
    // R3: nothing carried a delay, so nothing decides; the merge keeps its
    // wait as measured (and R7 does not count it as work).
    assert!(may_have_waited::<2>(5_000, &[]));
    let empty = Record::EMPTY;
    assert!(may_have_waited(5_000, &[Dependency::immediate(&empty)]));
    // A record without a delay beside one released before: the latter
    // decides.
    let done = released(1_000, true);
    let deps = [Dependency::immediate(&empty), Dependency::immediate(&done)];
    assert!(!may_have_waited(5_000, &deps));
}

#[test]
fn times_beyond_i64_do_not_overflow() {
    let r = released(i64::MAX - 10, true);
    assert!(may_have_waited(
        u64::MAX,
        &[Dependency::message(&r, u64::MAX, u64::MAX)]
    ));
    let early = released(-5, true);
    assert!(!may_have_waited(u64::MAX, &[Dependency::immediate(&early)]));
}
