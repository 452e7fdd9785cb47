//! libheisen in programs written without heisen in mind
//! (`tests/c/unseen.c`): the API without `heisen_init`, from many threads
//! at once, and `heisen_finalize` from a thread that is not main while the
//! others go on calling.

mod common;

use common::*;

fn build_unseen(dir: &std::path::Path) -> std::path::PathBuf {
    build(
        Language::C,
        dir,
        "unseen",
        &[source("tests/c/unseen.c")],
        &["-std=c11", "-Werror"],
    )
}

#[test]
fn the_api_without_init_from_many_threads_at_once() {
    let dir = work_dir("unseen_no_init");
    let exe = build_unseen(&dir);
    let out = run(
        &exe,
        &dir,
        &["no-init"],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "counter 16000, queue sum 36, unexpected results 0\n",
        "{}",
        describe(&out)
    );
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    let r = report(&dir);
    let locations = r["locations"].as_array().expect("locations");
    assert_eq!(locations.len(), 9, "main and 8 threads: {}", r["runtime"]);
    let names: Vec<&str> = r["regions"]
        .as_array()
        .expect("regions")
        .iter()
        .filter_map(|x| x["name"].as_str())
        .collect();
    for n in ["shared", "by-name", "own-0", "own-7"] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    assert_eq!(r["runtime"]["exit_mismatches"], 0);
}

#[test]
fn finalize_from_a_thread_while_others_call_the_api() {
    let dir = work_dir("unseen_finalize");
    let exe = build_unseen(&dir);
    for _ in 0..3 {
        let out = run(
            &exe,
            &dir,
            &["finalize"],
            &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout,
            "finalize from a thread: 0\ncounter 16000, queue sum 36, unexpected results 0\n\
             some calls saw FINALIZED: 1\nfinalize again from main: 101\n",
            "{}",
            describe(&out)
        );
        assert!(out.stderr.is_empty(), "{}", describe(&out));
    }
}

#[test]
fn a_first_call_from_a_thread_with_a_small_stack_does_not_crash() {
    // The calibration's scratch state once overflowed a 64 KiB stack; the
    // calibration still runs on a thread of its own.
    let dir = work_dir("small_stack");
    let exe = build(
        Language::C,
        &dir,
        "small_stack",
        &[source("tests/c/small_stack.c")],
        &["-std=c11", "-Werror"],
    );
    let out = run(
        &exe,
        &dir,
        &[],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "register 1 enter 1 exit 1\ndone\n",
        "{}",
        describe(&out)
    );
    assert!(out.status.success(), "{}", describe(&out));
    // A registration needs a few KiB of stack now (the thread's state is
    // built in place on the heap): the 64 KiB thread is measured.
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    let r = report(&dir);
    assert_eq!(r["runtime"]["threads"], 1, "{}", r["runtime"]);
    assert_eq!(r["locations"].as_array().map(Vec::len), Some(1), "{r}");
}
