//! heisen's compensated mutex, barrier, condition variable and work queue
//! from C (`tests/c/handles.c`): they synchronise as their pthread
//! counterparts do, refuse what pthreads leave undefined (an unlock by a
//! thread that does not hold the lock) with a result code, and every
//! hand-off is merged (R8): the report lists each object's calibrated
//! actions, and the threads that waited have compensated times below
//! their measured ones. Also under valgrind.

mod common;

use common::*;

const CASES: [&str; 5] = ["mutex", "barrier", "condvar", "queue", "null_handles"];

fn build_handles(dir: &std::path::Path) -> std::path::PathBuf {
    build(
        Language::C,
        dir,
        "handles",
        &[source("tests/c/handles.c")],
        &["-std=c11", "-Werror", "-O1"],
    )
}

#[test]
fn mutex_barrier_condvar_and_queue_synchronise_and_merge() {
    let dir = work_dir("handles");
    let exe = build_handles(&dir);
    let out = run(
        &exe,
        &dir,
        &[],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    expect_cases(&out, &CASES);
    let report = report(&dir);
    let actions = action_names(&report);
    for a in [
        "mutex_acquire",
        "mutex_release",
        "barrier_wait",
        "condvar_wait",
        "queue_push",
        "queue_pop",
    ] {
        assert!(actions.contains(&a), "{a} in {actions:?}");
    }
    // Every thread that measured something is a location: 3 adders, 3 at
    // the barrier, 2 waiters, 2 consumers, main. The thread whose unlock
    // and trylock were refused measured nothing.
    let locations = report["locations"].as_array().expect("locations");
    assert_eq!(locations.len(), 11, "{}", report["runtime"]);
    for l in locations {
        let (measured, compensated) = elapsed(l);
        assert!(compensated <= measured, "{l}");
    }
}

#[test]
fn handles_under_valgrind() {
    let dir = work_dir("handles_valgrind");
    let exe = build_handles(&dir);
    let out = valgrind(
        &exe,
        &dir,
        &[],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    expect_cases(&out, &CASES);
}
