//! Transparency (issue 10, "What it must show"): C programs in `tests/c/`
//! built with `mpicc` and run under `mpiexec -n N` with and without
//! `LD_PRELOAD=libheisen_mpi.so` print the same payloads, statuses, counts
//! and error classes, line for line per rank; with the interposer nothing
//! is printed besides the program's own output, and every rank's report
//! and the merged run report are written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// One mpiexec at a time: the machine has two cores and MPICH's ranks
/// busy-poll.
static RUNS: Mutex<()> = Mutex::new(());

fn require(tool: &str) {
    let found = Command::new(tool).arg("--version").output().is_ok()
        || Command::new(tool).arg("-show").output().is_ok();
    assert!(
        found,
        "`{tool}` not found: the MPI tests need MPICH (Debian: apt-get install mpich libmpich-dev); \
         `scripts/test` installs it"
    );
}

/// The interposer cargo built for this test (`<target>/<profile>/deps`).
fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps directory");
    let lib = deps.join("libheisen_mpi.so");
    assert!(lib.exists(), "{} not built", lib.display());
    lib
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("heisen-mpi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Builds `tests/c/<name>.c` into `dir`.
fn build(name: &str, dir: &Path) -> PathBuf {
    require("mpicc");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c"));
    let exe = dir.join(name);
    let out = Command::new("mpicc")
        .args(["-O1", "-Wall", "-pthread", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("mpicc runs");
    assert!(
        out.status.success(),
        "mpicc {}: {}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Runs `exe` on `ranks` ranks, preloading the interposer or not.
fn run(exe: &Path, ranks: u32, preload: Option<&Path>, output: &Path) -> Output {
    require("mpiexec");
    let _one = RUNS.lock().unwrap_or_else(|p| p.into_inner());
    let mut cmd = Command::new("mpiexec");
    cmd.arg("-n").arg(ranks.to_string());
    if let Some(lib) = preload {
        cmd.arg("-genv").arg("LD_PRELOAD").arg(lib);
    }
    // cargo's LD_LIBRARY_PATH would put stale copies of libraries first.
    cmd.arg(exe)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("HEISEN_SUMMARY")
        .env("HEISEN_OUTPUT", output)
        .output()
        .expect("mpiexec runs")
}

/// The output grouped by rank (each line starts `r<rank> `), each rank's
/// lines in their order.
fn by_rank(out: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(out);
    let mut lines: Vec<(String, usize, String)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            (
                l.split(' ').next().unwrap_or("").to_owned(),
                i,
                l.to_owned(),
            )
        })
        .collect();
    lines.sort();
    lines.into_iter().map(|(_, _, l)| l).collect()
}

/// Runs `name` both ways on `ranks` ranks and compares.
fn transparent(name: &str, ranks: u32) {
    let dir = scratch(&format!("{name}-{ranks}"));
    let exe = build(name, &dir);
    let plain = run(&exe, ranks, None, &dir);
    assert!(
        plain.status.success(),
        "{name} without heisen failed: {}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let reports = dir.join("reports");
    std::fs::create_dir_all(&reports).expect("report directory");
    let measured = run(&exe, ranks, Some(&library()), &reports);
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
    let (a, b) = (by_rank(&plain.stdout), by_rank(&measured.stdout));
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
}

#[test]
fn basic_blocking_on_2_ranks() {
    transparent("basic", 2);
}
