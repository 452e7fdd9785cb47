//! What the MPI tests share: building the C programs with mpicc and
//! running them under mpiexec, with or without the interposer.
#![allow(dead_code)] // reason: each test file uses a part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// One mpiexec at a time: the machine has two cores and MPICH's ranks
/// busy-poll.
static RUNS: Mutex<()> = Mutex::new(());

pub(crate) fn require(tool: &str) {
    let found = Command::new(tool).arg("--version").output().is_ok()
        || Command::new(tool).arg("-show").output().is_ok();
    assert!(
        found,
        "`{tool}` not found: the MPI tests need MPICH (Debian: apt-get install mpich libmpich-dev); \
         `scripts/test` installs it"
    );
}

/// The interposer cargo built for this test (`<target>/<profile>/deps`).
pub(crate) fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps directory");
    let lib = deps.join("libheisen_mpi.so");
    assert!(lib.exists(), "{} not built", lib.display());
    lib
}

/// The path of scratch directory `name` of this test process, as it is:
/// where a finished [`compare`] left its reports.
pub(crate) fn scratch_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("heisen-mpi-{}-{name}", std::process::id()))
}

/// Scratch directory `name` of this test process, emptied.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = scratch_path(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Builds `tests/c/<name>.c` into `dir`.
pub(crate) fn build(name: &str, dir: &Path) -> PathBuf {
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

/// Runs `exe` on `ranks` ranks, preloading the interposer or not; the
/// program's lines go to `lines/r<rank>.txt`, heisen's reports to `output`.
pub(crate) fn run(
    exe: &Path,
    ranks: u32,
    preload: Option<&Path>,
    lines: &Path,
    output: &Path,
) -> Output {
    run_with(exe, ranks, preload, lines, output, &[], &[])
}

/// [`run`] with program arguments and environment variables for every rank.
pub(crate) fn run_with(
    exe: &Path,
    ranks: u32,
    preload: Option<&Path>,
    lines: &Path,
    output: &Path,
    args: &[&str],
    vars: &[(&str, &str)],
) -> Output {
    let mut cmd = mpiexec(preload, lines, output, vars);
    cmd.arg("-n").arg(ranks.to_string()).arg(exe).args(args);
    let _one = RUNS.lock().unwrap_or_else(|p| p.into_inner());
    cmd.output().expect("mpiexec runs")
}

/// As [`run_with`], one rank per entry of `nodes`, each with that
/// `HEISEN_NODE` (MPMD: `-n 1 -env HEISEN_NODE a exe : -n 1 …`), so
/// that one machine runs the set-up of several nodes.
pub(crate) fn run_on_nodes(
    exe: &Path,
    nodes: &[&str],
    preload: Option<&Path>,
    lines: &Path,
    output: &Path,
) -> Output {
    let mut cmd = mpiexec(preload, lines, output, &[]);
    for (i, node) in nodes.iter().enumerate() {
        if i > 0 {
            cmd.arg(":");
        }
        cmd.args(["-n", "1", "-env", "HEISEN_NODE", node]).arg(exe);
    }
    let _one = RUNS.lock().unwrap_or_else(|p| p.into_inner());
    cmd.output().expect("mpiexec runs")
}

/// `mpiexec` with the interposer (or not), `vars` for every rank, and
/// the tests' environment; the ranks come after.
fn mpiexec(preload: Option<&Path>, lines: &Path, output: &Path, vars: &[(&str, &str)]) -> Command {
    require("mpiexec");
    let mut cmd = Command::new("mpiexec");
    if let Some(lib) = preload {
        cmd.arg("-genv").arg("LD_PRELOAD").arg(lib);
    }
    for (name, value) in vars {
        cmd.arg("-genv").arg(name).arg(value);
    }
    // cargo's LD_LIBRARY_PATH would put stale copies of libraries first.
    cmd.env_remove("LD_LIBRARY_PATH")
        .env_remove("HEISEN_SUMMARY")
        .env_remove("HEISEN_NODE")
        .env("HEISEN_OUTPUT", output)
        .env("TRANSPARENCY_OUT", lines);
    cmd
}

/// Whether this machine's processes can share one TSC conversion: the CPU's
/// TSC is invariant (Linux's `constant_tsc` and `nonstop_tsc`) and the
/// kernel keeps its own clock on it (clock source `tsc`).
pub(crate) fn tsc_shareable() -> bool {
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    cfg!(target_arch = "x86_64")
        && flags.split_whitespace().any(|f| f == "constant_tsc")
        && flags.split_whitespace().any(|f| f == "nonstop_tsc")
        && source.trim() == "tsc"
}

/// Every rank's lines, rank after rank.
pub(crate) fn by_rank(lines: &Path, ranks: u32) -> Vec<String> {
    (0..ranks)
        .flat_map(|r| {
            let text = std::fs::read_to_string(lines.join(format!("r{r}.txt"))).unwrap_or_default();
            text.lines().map(str::to_owned).collect::<Vec<_>>()
        })
        .collect()
}

/// Runs `tests/c/<name>.c` on `ranks` ranks without and with the
/// interposer (scratch directory `<prefix>-<name>-<ranks>`) and compares
/// what the program shows: per-rank lines, standard output, exit code, and
/// no stderr line of heisen's own (MPICH's `Abort(` line aside: it races
/// with mpiexec). Returns the plain run's lines and both runs' outputs.
pub(crate) fn compare(prefix: &str, name: &str, ranks: u32) -> (Vec<String>, Output, Output) {
    compare_with(prefix, name, ranks, &[])
}

/// [`compare`] with environment variables for every rank, in both runs.
pub(crate) fn compare_with(
    prefix: &str,
    name: &str,
    ranks: u32,
    vars: &[(&str, &str)],
) -> (Vec<String>, Output, Output) {
    let dir = scratch(&format!("{prefix}-{name}-{ranks}"));
    let exe = build(name, &dir);
    let (plain_lines, measured_lines, reports) =
        (dir.join("plain"), dir.join("measured"), dir.join("reports"));
    for d in [&plain_lines, &measured_lines, &reports] {
        std::fs::create_dir_all(d).expect("scratch directory");
    }
    let plain = run_with(&exe, ranks, None, &plain_lines, &dir, &[], vars);
    let measured = run_with(
        &exe,
        ranks,
        Some(&library()),
        &measured_lines,
        &reports,
        &[],
        vars,
    );
    assert_eq!(
        measured.status.code(),
        plain.status.code(),
        "{name} on {ranks} ranks: exit codes differ; with heisen: {}",
        String::from_utf8_lossy(&measured.stderr)
    );
    // Nothing on stderr but what MPICH itself prints; its MPI_Abort line
    // races with mpiexec killing the ranks, so it may be in one run only.
    let theirs = String::from_utf8_lossy(&plain.stderr).into_owned();
    for line in String::from_utf8_lossy(&measured.stderr).lines() {
        assert!(
            theirs.contains(line) || line.starts_with("Abort("),
            "{name} on {ranks} ranks: heisen printed on stderr: {line}"
        );
    }
    assert_eq!(
        String::from_utf8_lossy(&measured.stdout),
        String::from_utf8_lossy(&plain.stdout),
        "{name} on {ranks} ranks: standard output differs"
    );
    let (a, b) = (
        by_rank(&plain_lines, ranks),
        by_rank(&measured_lines, ranks),
    );
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "{name} on {ranks} ranks: first difference");
    }
    assert_eq!(
        a.len(),
        b.len(),
        "{name} on {ranks} ranks: line counts differ"
    );
    if let Ok(text) = std::fs::read_to_string(reports.join("heisen.mpi.json")) {
        let run = serde_json::from_str(&text).expect("the run report is JSON");
        delays_within_overhead(&run);
    }
    (a, plain, measured)
}

/// Every location's delay in run report `run` is at most all the
/// overhead charged on every rank: a delay is overhead removed,
/// the location's own or taken over (R4, R5). Before a merge whose
/// message was sent before the receive began was merged as one that did
/// not wait, a receive's whole time was taken for overhead: one merged
/// report in four failed this (`unseen_huge`: 877 ms of delay against
/// 460 ns charged).
pub(crate) fn delays_within_overhead(run: &serde_json::Value) {
    let locations = run["locations"].as_array().expect("locations");
    let n = |l: &serde_json::Value, k: &str| l[k].as_i64().unwrap_or_else(|| panic!("{k} in {l}"));
    let charged: i64 = locations.iter().map(|l| n(l, "overhead")).sum();
    for l in locations {
        assert!(
            n(l, "delay") <= charged,
            "a delay beyond all {charged} ns of overhead charged: {l}"
        );
    }
}
