//! One runtime per process (DESIGN §2): a C program linked with
//! `-lheisen` and run with `LD_PRELOAD=libheisen_pthread.so` holds two
//! copies of the runtime's code; the copy loaded first (the interposer's)
//! makes the runtime and `libheisen.so` finds and uses it. One report,
//! one location per thread, with both libraries' events in it.

mod common;

use common::*;

/// `libheisen_pthread.so`, built beside this test (heisen-pthread is a
/// dev-dependency, so cargo builds its cdylib into the same `deps`).
fn interposer() -> std::path::PathBuf {
    let lib = library_dir().join("libheisen_pthread.so");
    assert!(lib.exists(), "{} not built", lib.display());
    lib
}

#[test]
fn the_c_api_and_the_pthread_interposer_share_one_runtime() {
    let dir = work_dir("one_runtime");
    let exe = build(
        Language::C,
        &dir,
        "shared",
        &[source("tests/c/shared_runtime.c")],
        &["-O1"],
    );
    let preload = interposer();
    let out = run(
        &exe,
        &dir,
        &[],
        &[
            ("HEISEN_OUTPUT", dir.to_str().expect("utf-8")),
            ("LD_PRELOAD", preload.to_str().expect("utf-8")),
        ],
    );
    assert!(stdout(&out).contains("counter 300"), "{}", describe(&out));
    assert!(
        out.stderr.is_empty(),
        "nothing went wrong: {}",
        describe(&out)
    );
    let report = report(&dir); // exactly one report file
    assert_eq!(report["runtime"]["shared"], true, "{}", report["runtime"]);
    let locations = report["locations"].as_array().expect("locations");
    assert_eq!(locations.len(), 3, "main and two threads, once each");
    let mut ids: Vec<u64> = locations
        .iter()
        .filter_map(|l| l["location"].as_u64())
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), 3);
    let region = region_id(&report, "locked increment").expect("the C API's region");
    for l in locations {
        assert_eq!(region_totals(l, region).0, 100, "{l}");
    }
    let actions = action_names(&report);
    for a in ["c_enter", "pthread_mutex_lock", "pthread_mutex_unlock"] {
        assert!(actions.contains(&a), "{a} in {actions:?}");
    }
}
