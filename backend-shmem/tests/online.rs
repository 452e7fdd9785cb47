//! Online costing of a hot region pair (R1 measured directly,
//! `heisen_shmem::probe`) end to end: the windows a thread makes light
//! lose no call, never disturb the kernel's order, and show in the report.
//! Only counts and orders are asserted: what the pair costs is the
//! machine's.

mod common;

use common::*;
use heisen_shmem::probe::FIRST_LIGHT;
use serde_json::Value;

/// Leaf calls the scenarios make. The window schedule depends on call
/// counts only (`heisen_shmem::probe`'s constants); with these the last
/// call falls outside a light window (offset 382 of a 544-call cycle once
/// the 31 learning pairs are done), so the loop's end aborts none and
/// `aborted` counts only what a scenario does. Changing a constant may
/// move that.
const CALLS: u64 = 20_000;

/// A little work the optimiser cannot remove.
fn spin(n: u64) -> u64 {
    (0..n).fold(0u64, |a, i| core::hint::black_box(a.wrapping_add(i * i)))
}

/// The record of region `name` on the location that has one.
fn record<'a>(report: &'a Value, name: &str) -> (&'a Value, &'a Value) {
    let id = region_id(report, name);
    report["locations"]
        .as_array()
        .expect("locations")
        .iter()
        .find_map(|l| {
            l["regions"]
                .as_array()
                .and_then(|rs| rs.iter().find(|r| r["region"] == id))
                .map(|r| (l, r))
        })
        .unwrap_or_else(|| panic!("no record of {name}"))
}

/// The report's `runtime.online` entry of region `name`.
fn online_entry<'a>(report: &'a Value, name: &str) -> &'a Value {
    let id = region_id(report, name);
    let online = &report["runtime"]["online"];
    online
        .as_array()
        .expect("online")
        .iter()
        .find(|o| o["region"] == id)
        .unwrap_or_else(|| panic!("{name} was costed online: {online}"))
}

fn n(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// The scenario: `CALLS` leaf calls inside `outer`; the call numbered
/// `lock_in` takes a lock inside the leaf (another action in the middle of
/// a light call).
fn leaf_loop(lock_in: Option<u64>) {
    let outer = heisen_shmem::Region::new("outer");
    let leaf = heisen_shmem::Region::new("leaf");
    let m = heisen_shmem::Mutex::new(0u64);
    outer.run(|| {
        for i in 0..CALLS {
            leaf.run(|| {
                if lock_in == Some(i) {
                    *m.lock().expect("lock") += 1;
                }
                spin(20)
            });
        }
    });
}

/// `CALLS` leaf calls inside `outer` with a lock taken between every
/// fourth and fifth: segments of four calls, never a window's streak.
fn segments_loop() -> u64 {
    let outer = heisen_shmem::Region::new("outer");
    let leaf = heisen_shmem::Region::new("leaf");
    let m = heisen_shmem::Mutex::new(0u64);
    outer.run(|| {
        for i in 0..CALLS {
            leaf.run(|| spin(20));
            if i % 4 == 3 {
                *m.lock().expect("lock") += 1;
            }
        }
    });
    *m.lock().expect("lock")
}

fn run(name: &str, calibration: Option<&str>) -> Value {
    let dir = out_dir(name);
    let mut env = vec![("HEISEN_OUTPUT", dir.to_str().expect("utf-8 path"))];
    if let Some(c) = calibration {
        env.push(("HEISEN_CALIBRATION", c));
    }
    let out = child(name, &env);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("heisen:"), "nothing went wrong: {stderr}");
    report_in(&dir)
}

/// What every scenario's report must hold: every call counted, no call
/// refused, the replayed calls inside their parent.
fn check_counts(report: &Value) {
    let (location, leaf) = record(report, "leaf");
    let (_, outer) = record(report, "outer");
    check_location(location);
    assert_eq!(n(leaf, "count"), CALLS, "{leaf}");
    assert_eq!(n(outer, "count"), 1);
    assert!(n(leaf, "measured_inclusive") <= n(outer, "measured_inclusive"));
    let rt = &report["runtime"];
    assert_eq!(n(rt, "exit_mismatches"), 0, "{rt}");
    assert_eq!(n(rt, "exits_without_enter"), 0, "{rt}");
}

#[test]
fn a_hot_leaf_is_costed_in_the_running_program_and_every_call_counted() {
    let name = "a_hot_leaf_is_costed_in_the_running_program_and_every_call_counted";
    if is_child(name) {
        leaf_loop(None);
        return;
    }
    let report = run(name, None);
    check_counts(&report);
    let entry = online_entry(&report, "leaf");
    let online = report["runtime"]["online"].as_array().expect("online");
    assert!(entry["surplus"].is_i64(), "{entry}");
    assert!(n(entry, "windows") > 0, "{entry}");
    let light = n(entry, "light_calls");
    assert!(light > 0 && light < CALLS / 4, "{entry}");
    assert_eq!(n(entry, "aborted"), 0, "{entry}");
    // `outer` is entered once: never a hot leaf.
    let outer = region_id(&report, "outer");
    assert!(online.iter().all(|o| o["region"] != outer), "{online:?}");
    let rust = report["runtime"]["calibration"]
        .as_array()
        .expect("calibration")
        .iter()
        .find(|c| c["path"] == "enter+exit")
        .expect("the Rust pair");
    assert!(rust["light"].is_u64(), "{rust}");
}

#[test]
fn another_action_in_a_light_call_puts_the_windows_calls_in_first() {
    let name = "another_action_in_a_light_call_puts_the_windows_calls_in_first";
    // The lock comes in the fourth call of the first light window.
    let lock_in = u64::from(FIRST_LIGHT + 3);
    if is_child(name) {
        leaf_loop(Some(lock_in));
        return;
    }
    let report = run(name, None);
    check_counts(&report);
    let entry = online_entry(&report, "leaf");
    assert_eq!(n(entry, "aborted"), 1, "{entry}");
}

#[test]
fn a_hot_leaf_between_other_actions_is_costed_by_segments_and_every_call_counted() {
    let name = "a_hot_leaf_between_other_actions_is_costed_by_segments_and_every_call_counted";
    if is_child(name) {
        assert_eq!(segments_loop(), CALLS / 4);
        return;
    }
    let report = run(name, None);
    check_counts(&report);
    let entry = online_entry(&report, "leaf");
    // Pairs of four-call segments, one of them light (every other one
    // only for its last two calls): no light window of a streak could
    // have formed.
    assert!(n(entry, "windows") > 0, "{entry}");
    let light = n(entry, "light_calls");
    assert_eq!(light % 2, 0, "whole segments or halves: {entry}");
    assert!(light > 0 && light < CALLS / 4, "{entry}");
    assert_eq!(n(entry, "aborted"), 0, "{entry}");
}

#[test]
fn without_online_costing_no_call_is_light() {
    let name = "without_online_costing_no_call_is_light";
    if is_child(name) {
        leaf_loop(None);
        return;
    }
    for how in ["in-situ", "back-to-back"] {
        let report = run(name, Some(how));
        check_counts(&report);
        let online = report["runtime"]["online"].as_array().expect("online");
        assert!(online.is_empty(), "{how}: {online:?}");
    }
}

/// A seeded random program over regions, locks and recursion: bursts
/// of leaf calls of a few lengths (streaks and short segments), parents
/// around bursts, locks between calls and inside them, nested leaves,
/// recursion. Returns the calls it made per region name.
fn random_program(seed: u64, lock: &heisen_shmem::Mutex<u64>) -> Vec<(&'static str, u64)> {
    const LEAVES: [&str; 3] = ["leaf_a", "leaf_b", "leaf_c"];
    let mut s = seed | 1;
    let mut next = move |n: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % n
    };
    let mut calls: std::collections::BTreeMap<&'static str, u64> = Default::default();
    fn rec(depth: u64, calls: &mut u64) -> u64 {
        *calls += 1;
        heisen_shmem::in_region("rec", || {
            if depth == 0 {
                spin(3)
            } else {
                rec(depth - 1, calls)
            }
        })
    }
    for _ in 0..3_000 {
        // Mostly one leaf, so that it is probed long enough to learn.
        let leaf = LEAVES[next(10).saturating_sub(7) as usize];
        // Streaks, windows' length and short segments alike.
        let burst = [1, 2, 3, 4, 7, 31, 32, 33, 200][next(9) as usize];
        let parent = next(4) == 0;
        let inner_lock = next(50) == 0;
        let nested = next(40) == 0;
        let run = |calls: &mut std::collections::BTreeMap<&'static str, u64>| {
            for i in 0..burst {
                heisen_shmem::in_region(leaf, || {
                    if inner_lock && i == burst / 2 {
                        *lock.lock().expect("lock") += 1;
                    }
                    if nested && i == burst - 1 {
                        heisen_shmem::in_region("inner", || spin(2));
                    }
                    spin(5)
                });
                *calls.entry(leaf).or_insert(0) += 1;
                if nested && i == burst - 1 {
                    *calls.entry("inner").or_insert(0) += 1;
                }
            }
        };
        if parent {
            heisen_shmem::in_region("parent", || run(&mut calls));
            *calls.entry("parent").or_insert(0) += 1;
        } else {
            run(&mut calls);
        }
        match next(6) {
            0 | 1 => *lock.lock().expect("lock") += 1,
            2 => {
                let mut n = 0;
                rec(next(5), &mut n);
                // A recursive re-entry is folded into the outermost frame
                // (R2): one call counted however deep.
                *calls.entry("rec").or_insert(0) += 1;
            }
            _ => {}
        }
    }
    calls.into_iter().collect()
}

#[test]
fn random_programs_lose_no_call_and_refuse_no_exit() {
    let name = "random_programs_lose_no_call_and_refuse_no_exit";
    if is_child(name) {
        // Two threads with programs of their own and a lock they share;
        // what each made goes to stdout for the parent to check.
        let lock = std::sync::Arc::new(heisen_shmem::Mutex::new(0u64));
        let mut total: std::collections::BTreeMap<&str, u64> = Default::default();
        for round in 0..4u64 {
            let other = {
                let lock = lock.clone();
                heisen_shmem::spawn(move || random_program(0x5eed_0002 + 2 * round, &lock))
            };
            let mine = random_program(0x5eed_0001 + 2 * round, &lock);
            let theirs = other.join().expect("the other thread");
            for (name, n) in mine.into_iter().chain(theirs) {
                *total.entry(name).or_insert(0) += n;
            }
        }
        for (name, n) in total {
            println!("calls {name} {n}");
        }
        return;
    }
    let (out, report) = child_report(name);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("heisen:"), "nothing went wrong: {stderr}");
    let expected: Vec<(String, u64)> = stdout
        .lines()
        // (the harness's own "test … ..." may begin the first line)
        .filter_map(|l| l.split_once("calls ").map(|(_, rest)| rest))
        .map(|l| {
            let (name, n) = l.split_once(' ').expect("name and count");
            (name.to_owned(), n.parse().expect("a count"))
        })
        .collect();
    assert!(expected.len() >= 6, "{stdout}");
    for (name, n) in &expected {
        let id = region_id(&report, name);
        let counted: u64 = report["locations"]
            .as_array()
            .expect("locations")
            .iter()
            .flat_map(|l| l["regions"].as_array().expect("regions").iter())
            .filter(|r| r["region"] == id)
            .map(|r| r["count"].as_u64().expect("count"))
            .sum();
        assert_eq!(counted, *n, "{name}");
    }
    let rt = &report["runtime"];
    for k in ["exit_mismatches", "exits_without_enter", "calls_abandoned"] {
        assert_eq!(n(rt, k), 0, "{k}: {rt}");
    }
    for l in report["locations"].as_array().expect("locations") {
        check_location(l);
    }
    // The leaves were costed online, in streaks and in segments.
    let online = rt["online"].as_array().expect("online");
    assert!(
        online
            .iter()
            .any(|o| n(o, "windows") > 0 && n(o, "light_calls") > 0),
        "{online:?}"
    );
}
