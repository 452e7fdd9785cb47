//! Bad calls from C (`tests/c/bad_calls.c`): NULL handles and pointers, an
//! unknown region id, the exit of a region that is not open, buffers too
//! short, foreign and truncated piggybacks, a 10,000-byte region name,
//! calls after finalize and finalize twice each return their result code
//! with its message, leave outputs untouched, and never crash — also under
//! valgrind.

mod common;

use common::*;

const CASES: [&str; 10] = [
    "null_arguments",
    "unknown_region_id",
    "exit_of_a_region_not_open",
    "buffer_too_short",
    "bad_piggybacks",
    "bad_names",
    "reused_name_buffer",
    "init_twice",
    "messages",
    "after_finalize",
];

fn build_bad_calls(dir: &std::path::Path) -> std::path::PathBuf {
    build(
        Language::C,
        dir,
        "bad_calls",
        &[source("tests/c/bad_calls.c")],
        &["-std=c11", "-Werror"],
    )
}

#[test]
fn every_bad_call_returns_its_code_and_never_crashes() {
    let dir = work_dir("bad_calls");
    let exe = build_bad_calls(&dir);
    let dir_str = dir.to_str().expect("utf-8");
    let out = run(&exe, &dir, &[], &[("HEISEN_OUTPUT", dir_str)]);
    expect_cases(&out, &CASES);
    // The refused exits are counted in the report and said on stderr.
    let report = report(&dir);
    assert!(
        report["runtime"]["exit_mismatches"].as_u64() == Some(3),
        "{}",
        report["runtime"]
    );
    assert!(
        report["runtime"]["exits_without_enter"].as_u64() == Some(2),
        "{}",
        report["runtime"]
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("region exits did not match"));
}

#[test]
fn bad_calls_under_valgrind() {
    let dir = work_dir("bad_calls_valgrind");
    let exe = build_bad_calls(&dir);
    let out = valgrind(
        &exe,
        &dir,
        &[],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    expect_cases(&out, &CASES);
}

#[test]
fn disabled_calls_succeed_as_no_ops_and_write_nothing() {
    let dir = work_dir("bad_calls_disabled");
    let exe = build_bad_calls(&dir);
    let dir_str = dir.to_str().expect("utf-8");
    let out = run(
        &exe,
        &dir,
        &["disabled"],
        &[("HEISEN_OUTPUT", dir_str), ("HEISEN_DISABLE", "1")],
    );
    expect_cases(&out, &["disabled"]);
    assert!(reports(&dir).is_empty(), "no report when disabled");
}
