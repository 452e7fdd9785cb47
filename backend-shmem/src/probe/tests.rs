//! The online costing state machine's unit tests (`super`).

use super::*;
use heisen_core::{Exited, FrameKind};

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
    while let Enter::Full(_) = p.on_enter(C7, last, COST, || Some(5), || t).0 {
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
    drive_with_tail(calls, full, light, inside, 0)
}

/// [`drive`], where the clock read that ends a light window (the next
/// call's enter) waits `tail` ns for the work its light calls left in
/// flight.
fn drive_with_tail(
    calls: u32,
    full: u64,
    light: u64,
    inside: u64,
    tail: u64,
) -> (Probe, u64, Vec<(u64, u64)>) {
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
            t += tail;
            let e = p.end_light(t, Some(key(7, 0))).expect("not forced");
            assert_eq!((e.end, e.spacing), (t, (t - e.start) / u64::from(e.calls)));
            for j in 0..u64::from(e.calls) {
                let enter = e.start + j * e.spacing;
                replayed.push((enter, enter + e.inclusive));
                last = enter + e.inclusive;
            }
            p.replayed(last);
        }
        match p.on_enter(C7, last, COST, || Some(5), || t).0 {
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

#[test]
fn what_a_light_windows_end_waits_for_is_not_taken_off_the_pair() {
    // The read that ends each light window waits 300 ns for the work
    // its light calls left in flight (a floating-point chain): without
    // the short windows the pair would be learned 300/32 ns low.
    let (p, _, _) = drive_with_tail(20_000, 160, 50, 60, 300);
    assert_eq!(p.surplus, 115 - 80);
    assert_eq!(p.aborted, 0);
}

/// The cost a probe charges the next full enter after learning from
/// `drive(20_000, full, light, 60)`.
fn charged_after(full: u64, light: u64) -> Cost {
    let (mut p, _, _) = drive(20_000, full, light, 60);
    p.restart();
    let Enter::Full(c) = p.on_enter(C7, 0, COST, || Some(5), || 1 << 40).0 else {
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
    // Every call has a child measured inside it: no window.
    let mut p = Probe::new();
    let child = Exited {
        region: 7,
        site: 0,
        kind: FrameKind::Region,
        folded: false,
        measured_inclusive: 50,
        measured_exclusive: 20,
        inclusive: 30,
        exclusive: 10,
    };
    for i in 0..10_000u64 {
        let t = 1_000 + i * 200;
        assert!(matches!(
            p.on_enter(C7, t - 5, COST, || Some(5), || t).0,
            Enter::Full(_)
        ));
        assert!(!p.due());
        p.on_exit(7, t + 50, &Ok(Some(child)), COST.whole);
    }
    assert_eq!((p.light_calls, p.windows), (0, 0));
}

/// One leaf call of region 7 at `*t`, light (`light` ns from enter to
/// enter) or full (`full` ns, its exit 60 ns after its enter, which
/// becomes the kernel's last measured time `*last`); a full call right
/// after light ones reads the clock `tail` ns late (it waits for the
/// work they left in flight).
fn leaf_call(p: &mut Probe, t: &mut u64, last: &mut u64, (full, light, tail): (u64, u64, u64)) {
    if p.is_light() {
        if p.light_enter(7, 0) {
            *t += light;
            assert!(p.light_exit(7));
            return;
        }
        // A light window that ran its length ends at this call, as
        // `ThreadState::enter_probed` ends it: replayed, then measured.
        *t += tail;
        let e = p.end_light(*t, Some(key(7, 0))).expect("not forced");
        assert!(!e.open);
        *last = e.start + u64::from(e.calls - 1) * e.spacing + e.inclusive;
        p.replayed(*last);
        // Putting them into the kernel takes time: no program time.
        *t += 500;
    }
    let now = *t;
    match p.on_enter(C7, *last, COST, || Some(5), || now).0 {
        Enter::Light => {
            *t += light;
            assert!(p.light_exit(7));
        }
        Enter::Full(_) => {
            p.leaf_exit(7, now + 60, 40, COST.whole);
            *last = now + 60;
            *t += full;
        }
    }
}

/// Another action of the thread at `t`, the kernel's last measured time
/// being `last`: it ends a light window (replayed; its clock read waits
/// `tail` ns) or a timed segment first, as `ThreadState::settle` does.
/// Every call has exited by then. Returns when the read was taken.
fn settle(p: &mut Probe, t: u64, last: u64, tail: u64) -> u64 {
    if p.is_light() {
        let t = t + tail;
        let e = p.end_light(t, None).expect("not forced");
        assert!(!e.open);
        // As `ThreadState::end_light`: the streak goes on from the last
        // replayed exit.
        p.replayed(e.start + u64::from(e.calls - 1) * e.spacing + e.inclusive);
        return t;
    }
    if p.due() {
        p.end_timed(t, last == p.exit_t());
    }
    t
}

/// Segments of leaf calls of region 7, `calls` each, separated by
/// another action `gap` ns long: a full call takes `full` ns from
/// enter to enter plus `extra(segment)` (the program's own work,
/// which may differ from segment to segment), a light one `light`
/// plus the same. The other action ends a window as the thread does
/// (`ThreadState::settle`). Returns the probe and its light calls.
fn drive_segments(
    segments: u64,
    calls: u32,
    times: (u64, u64, u64),
    extra: impl Fn(u64) -> u64,
) -> Probe {
    drive_segments_with_tail(segments, calls, times, 0, extra)
}

/// [`drive_segments`], where a clock read right after light calls (the
/// other action's) waits `tail` ns for the work they left in flight.
fn drive_segments_with_tail(
    segments: u64,
    calls: u32,
    times: (u64, u64, u64),
    tail: u64,
    extra: impl Fn(u64) -> u64,
) -> Probe {
    drive_varied_segments(segments, |_| calls, times, tail, extra)
}

/// [`drive_segments_with_tail`] with segment `k` made of `calls(k)` calls.
fn drive_varied_segments(
    segments: u64,
    calls: impl Fn(u64) -> u32,
    (full, light, gap): (u64, u64, u64),
    tail: u64,
    extra: impl Fn(u64) -> u64,
) -> Probe {
    let mut p = Probe::new();
    let (mut t, mut last) = (1_000u64, 0u64);
    for k in 0..segments {
        for _ in 0..calls(k) {
            let times = (full + extra(k), light + extra(k), tail);
            leaf_call(&mut p, &mut t, &mut last, times);
        }
        // The other action: a clock read first, then its own time.
        t = settle(&mut p, t, last, tail);
        p.interrupt();
        t += gap;
        last = t;
    }
    p
}

#[test]
fn short_segments_between_other_actions_learn_the_pair() {
    // Four calls between two lock pairs: no streak of a window ever.
    let p = drive_segments(20_000, 4, (160, 50, 300), |_| 0);
    // Pair 115 (110 more than the light one, which costs 5) against
    // 80 charged by the start-up figure, as for a streak.
    assert_eq!(p.surplus, 115 - 80);
    assert!(p.windows > SAMPLES as u64, "{} pairs", p.windows);
    // About one light segment in LIGHT_EVERY once learned.
    assert!(p.light_calls < 20_000 * 4 / 8, "{}", p.light_calls);
    assert_eq!(p.aborted, 0);
    // One call between actions: the same.
    let p = drive_segments(20_000, 1, (160, 50, 300), |_| 0);
    assert_eq!(p.surplus, 115 - 80);
}

#[test]
fn what_the_read_after_light_calls_waits_for_is_not_taken_off_the_pair() {
    // After light calls the next clock read waits 200 ns for the work
    // they left in flight: every other light segment is light for its
    // second half only, and the slope through both kinds takes the pair
    // without it (it would read 50 ns low a call over four calls).
    let p = drive_segments_with_tail(20_000, 4, (160, 50, 300), 200, |_| 0);
    assert_eq!(p.surplus, 115 - 80);
    assert_eq!(p.aborted, 0);
    // Two calls: the light lengths 1 and 2 are still told apart.
    let p = drive_segments_with_tail(20_000, 2, (160, 50, 300), 200, |_| 0);
    assert_eq!(p.surplus, 115 - 80);
    // One call between actions cannot be split: the tail stays in.
    let p = drive_segments_with_tail(20_000, 1, (160, 50, 300), 200, |_| 0);
    assert_eq!(p.surplus, 115 - 80 - 200);
}

#[test]
fn segments_of_irregular_lengths_still_cancel_the_tail() {
    // Three to six calls between actions, drawn at random (splitmix64 of
    // the segment's index): a partial segment's light half is taken from
    // the last segment's length, which is often not its own; every pair
    // still has `l` light calls of `n`, and the line through them keeps
    // the tail out.
    let calls = |k: u64| {
        let mut z = k.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        3 + ((z ^ (z >> 31)) >> 62) as u32
    };
    let p = drive_varied_segments(60_000, calls, (160, 50, 300), 200, |_| 0);
    assert!(p.windows > 100, "{} pairs", p.windows);
    assert_eq!(p.surplus, 115 - 80);
}

#[test]
fn segments_that_alternate_in_cost_bias_neither_kind() {
    // Every other segment's calls do 100 ns more work: a pair always
    // spans one of each, and which is light is chosen at random.
    let p = drive_segments(40_000, 3, (160, 50, 300), |k| (k % 2) * 100);
    assert!((p.surplus - 35).abs() <= 3, "surplus {}", p.surplus);
}

#[test]
fn a_recursive_call_in_a_timed_segment_drops_it() {
    let mut p = drive_segments(4 * WARMUP as u64, 2, (160, 50, 300), |_| 0);
    let before = p.windows;
    let mut t = 1 << 30;
    // Enters of region 7, each nested in the last (a recursion), until
    // one begins a timed segment; the next nested enter drops it.
    let mut timed_at = None;
    for _ in 0..10_000 {
        match p.on_enter(C7, t - 1, COST, || Some(5), || t).0 {
            Enter::Light => {
                // A light call's nested enter ends its window.
                assert!(!p.light_enter(7, 0));
                let e = p.end_light(t + 10, Some(key(7, 0))).expect("not forced");
                assert!(e.open);
                p.replayed(e.end);
            }
            Enter::Full(_) if p.phase == Phase::Timed => {
                timed_at = Some(t);
                break;
            }
            Enter::Full(_) => {}
        }
        t += 100;
    }
    let timed_at = timed_at.expect("a timed segment began");
    let _ = p
        .on_enter(C7, timed_at, COST, || Some(5), || timed_at + 100)
        .0;
    assert!(
        p.phase != Phase::Timed || p.window_t == timed_at + 100,
        "the first is dropped"
    );
    assert_eq!(p.windows, before);
}

#[test]
fn segments_of_different_lengths_are_not_compared() {
    // Lengths 2, 3, 2, 3, ...: consecutive segments never match.
    let mut p = Probe::new();
    let (mut t, mut last) = (1_000u64, 0u64);
    for k in 0..10_000u64 {
        for _ in 0..(2 + k % 2) {
            leaf_call(&mut p, &mut t, &mut last, (160, 50, 0));
        }
        settle(&mut p, t, last, 0);
        p.interrupt();
        t += 300;
        last = t;
    }
    assert_eq!((p.windows, p.surplus), (0, 0));
}

#[test]
fn a_timed_segment_ended_inside_a_call_is_not_learned() {
    let mut p = drive_segments(WARMUP as u64, 4, (160, 50, 300), |_| 0);
    let before = p.windows;
    let (mut t, mut last) = (1 << 30, 0u64);
    // Segments whose action comes inside the region's last call.
    for _ in 0..200 {
        for i in 0..4 {
            if p.is_light() && p.light_enter(7, 0) {
                t += 50;
                if i < 3 {
                    assert!(p.light_exit(7));
                }
                continue;
            }
            if let Enter::Full(_) = p.on_enter(C7, last, COST, || Some(5), || t).0 {
                last = t;
                if i < 3 {
                    p.leaf_exit(7, t + 60, 40, COST.whole);
                    last = t + 60;
                }
                t += 160;
            } else {
                t += 50;
                if i < 3 {
                    assert!(p.light_exit(7));
                }
            }
        }
        if p.is_light() {
            let e = p.end_light(t, None).expect("not forced");
            assert!(e.open);
            p.replayed(e.end);
        } else if p.due() {
            p.end_timed(t, last == p.exit_t());
        }
        p.interrupt();
        t += 300;
        last = t;
    }
    assert_eq!(p.windows, before);
    assert!(p.light_calls > 0, "light segments were tried");
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

/// The mean of the differences `Recent` keeps, as the probe's `Fit`
/// takes them.
fn kept_mean(diffs: impl IntoIterator<Item = i64>) -> Option<i64> {
    let (mut m, mut fit) = (Recent::new(), Fit::new());
    for d in diffs {
        if m.add(d) {
            fit.add(1, d);
        }
    }
    fit.per_light_call().map(|x| x.round() as i64)
}

#[test]
fn a_preempted_window_is_left_out_of_the_mean_even_among_the_first() {
    // The second pair: a window preempted for 1 ms; and one much later.
    let diffs = [3_520, 1_003_520]
        .into_iter()
        .chain([3_520; 30])
        .chain([-2_000_000, 3_520]);
    assert_eq!(kept_mean(diffs), Some(3_520));
    // Ordinary spread stays in: the mean, not the median.
    let mean = kept_mean((0..40).map(|i| if i % 4 == 0 { 4_000 } else { 3_400 })).expect("kept");
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

#[test]
fn a_parent_entered_between_segments_keeps_the_pairs() {
    // task{cell cell cell} task{cell cell cell} …: region 8 entered and
    // left around every segment of region 7.
    const C8: Call = Call {
        region: 8,
        site: 0,
        path: Path::C,
    };
    let parent = Exited {
        region: 8,
        site: 0,
        kind: FrameKind::Region,
        folded: false,
        measured_inclusive: 500,
        measured_exclusive: 20,
        inclusive: 100,
        exclusive: 10,
    };
    let mut p = Probe::new();
    let (mut t, mut last) = (1_000u64, 0u64);
    for _ in 0..20_000 {
        settle(&mut p, t, last, 0);
        assert!(matches!(
            p.on_enter(C8, last, COST, || Some(5), || t).0,
            Enter::Full(_)
        ));
        last = t;
        t += 30;
        for _ in 0..3 {
            leaf_call(&mut p, &mut t, &mut last, (160, 50, 0));
        }
        settle(&mut p, t, last, 0);
        p.on_exit(8, t, &Ok(Some(parent)), COST.whole);
        last = t;
        t += 100;
    }
    assert!(p.windows > SAMPLES as u64, "{} pairs", p.windows);
    assert_eq!(p.surplus, 115 - 80);
    // Pairs past the learning ones come at their rate: not every segment.
    assert!(p.light_calls < 20_000 * 3 / 4, "{}", p.light_calls);
}
