//! Transparency (issue 10, "What it must show"): C programs in `tests/c/`
//! built with `mpicc` and run under `mpiexec -n N` with and without
//! `LD_PRELOAD=libheisen_mpi.so` print the same payloads, statuses, counts
//! and error classes, line for line per rank; with the interposer nothing
//! is printed besides the program's own output, and every rank's report
//! and the merged run report are written.

mod common;

use std::path::Path;

use common::{build, library, run, scratch};

/// Every rank's lines, rank after rank.
fn by_rank(lines: &Path, ranks: u32) -> Vec<String> {
    (0..ranks)
        .flat_map(|r| {
            let path = lines.join(format!("r{r}.txt"));
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            text.lines().map(str::to_owned).collect::<Vec<_>>()
        })
        .collect()
}

/// Runs `name` both ways on `ranks` ranks and compares.
fn transparent(name: &str, ranks: u32) {
    let dir = scratch(&format!("{name}-{ranks}"));
    let exe = build(name, &dir);
    let (plain_lines, measured_lines) = (dir.join("plain"), dir.join("measured"));
    for d in [&plain_lines, &measured_lines] {
        std::fs::create_dir_all(d).expect("lines directory");
    }
    let plain = run(&exe, ranks, None, &plain_lines, &dir);
    assert!(
        plain.status.success(),
        "{name} without heisen failed: {}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let reports = dir.join("reports");
    std::fs::create_dir_all(&reports).expect("report directory");
    let measured = run(&exe, ranks, Some(&library()), &measured_lines, &reports);
    assert!(
        measured.status.success(),
        "{name} with heisen failed: {}\n{}",
        String::from_utf8_lossy(&measured.stderr),
        String::from_utf8_lossy(&measured.stdout)
    );
    assert_eq!(
        String::from_utf8_lossy(&measured.stderr),
        "",
        "heisen printed on stderr"
    );
    assert_eq!(
        String::from_utf8_lossy(&measured.stdout),
        String::from_utf8_lossy(&plain.stdout),
        "{name}: standard output differs"
    );
    let (a, b) = (
        by_rank(&plain_lines, ranks),
        by_rank(&measured_lines, ranks),
    );
    assert!(!a.is_empty(), "{name} printed nothing");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "{name} on {ranks} ranks: first difference");
    }
    assert_eq!(a.len(), b.len(), "{name}: line counts differ");
    check_reports(&reports, ranks);
}

/// Every rank's report and the merged run report, one location per rank
/// at least, every location in the run report.
fn check_reports(dir: &Path, ranks: u32) {
    let read = |f: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{f}: {e}"))
    };
    let mut total = 0;
    for r in 0..ranks {
        let report = read(&format!("heisen.rank{r}.json"));
        assert_eq!(report["header"]["backend"], "mpi");
        let n = report["locations"].as_array().map_or(0, Vec::len);
        assert!(n >= 1, "rank {r} reported no location");
        total += n;
    }
    let run = read("heisen.mpi.json");
    assert_eq!(run["mpi"]["ranks"], ranks);
    assert_eq!(run["locations"].as_array().map_or(0, Vec::len), total);
    common::delays_within_overhead(&run);
}

#[test]
fn basic_blocking_on_2_ranks() {
    transparent("basic", 2);
}

#[test]
fn blocking_every_mode_and_edge_case_on_2_ranks() {
    transparent("blocking", 2);
}

#[test]
fn nonblocking_every_completion_call_on_2_ranks() {
    transparent("nonblocking", 2);
}

#[test]
fn wildcard_master_worker_on_4_ranks() {
    transparent("master_worker", 4);
}

#[test]
fn wildcard_master_worker_on_3_ranks() {
    transparent("master_worker", 3);
}

#[test]
fn thread_multiple_on_2_ranks() {
    transparent("threads", 2);
}

#[test]
fn derived_types_reused_freed_and_replaced_on_2_ranks() {
    transparent("datatypes", 2);
}
