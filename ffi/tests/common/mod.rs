//! Builds C, C++ and Fortran programs against the `libheisen.so` cargo
//! built for these tests, runs them (also under valgrind) and reads their
//! reports.
#![allow(dead_code)] // reason: each test binary uses a part of these helpers

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The directory of `libheisen.so`: cargo builds it for the tests into
/// the directory the test binary sits in (`<target>/<profile>/deps`; it
/// copies it up to `<target>/<profile>` only for `cargo build`), so
/// `CARGO_TARGET_DIR` and the profile are respected.
pub(crate) fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let deps = exe.parent().expect("<target>/<profile>/deps/<test>");
    assert!(
        deps.join("libheisen.so").exists(),
        "no libheisen.so beside {}: cargo builds it with the tests",
        exe.display()
    );
    deps.to_path_buf()
}

/// `ffi/` of the source tree.
pub(crate) fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A source file under `ffi/`.
pub(crate) fn source(relative: &str) -> PathBuf {
    crate_dir().join(relative)
}

/// A fresh, empty directory for one test's files.
pub(crate) fn work_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("ffi")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the test's directory");
    dir
}

/// Which compiler builds a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Language {
    C,
    Cxx,
    Fortran,
}

impl Language {
    fn compiler(self) -> &'static str {
        match self {
            Language::C => "cc",
            Language::Cxx => "c++",
            Language::Fortran => "gfortran",
        }
    }
}

/// Compiles and links `sources` into `dir/name` against libheisen, with
/// `flags` (libraries, `-l...`, go after the sources, the others before);
/// panics with the compiler's output if it fails.
pub(crate) fn build(
    language: Language,
    dir: &Path,
    name: &str,
    sources: &[PathBuf],
    flags: &[&str],
) -> PathBuf {
    let lib = library_dir();
    let exe = dir.join(name);
    let mut cmd = Command::new(language.compiler());
    cmd.current_dir(dir)
        .arg("-g")
        .arg("-Wall")
        .arg(format!("-I{}", crate_dir().join("include").display()))
        .args(flags.iter().filter(|f| !f.starts_with("-l")))
        .args(sources)
        .args(flags.iter().filter(|f| f.starts_with("-l")))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .arg("-lheisen")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lpthread");
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", language.compiler()));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// The environment variables heisen reads, removed from a child's
/// environment so that the developer's settings do not leak into a test.
const HEISEN_VARS: [&str; 7] = [
    "HEISEN_REGIONS",
    "HEISEN_OUTPUT",
    "HEISEN_FORM",
    "HEISEN_CLOCK",
    "HEISEN_MONITOR",
    "HEISEN_SUMMARY",
    "HEISEN_DISABLE",
];

/// A command for `exe` in `dir` with a clean heisen environment plus `env`.
pub(crate) fn command(exe: &Path, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(exe);
    cmd.current_dir(dir).args(args);
    clean_environment(&mut cmd);
    cmd.envs(env.iter().copied());
    cmd
}

/// Removes the heisen variables, and `LD_LIBRARY_PATH`: cargo test sets it
/// to include `<target>/<profile>`, where an older `libheisen.so` from a
/// `cargo build` may sit, and it would win over the program's run path.
fn clean_environment(cmd: &mut Command) {
    for var in HEISEN_VARS {
        cmd.env_remove(var);
    }
    cmd.env_remove("LD_LIBRARY_PATH");
}

/// Runs `exe` and checks that it succeeded.
pub(crate) fn run(exe: &Path, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = command(exe, dir, args, env)
        .output()
        .expect("run the program");
    assert!(
        out.status.success(),
        "{} {args:?} failed: {}",
        exe.display(),
        describe(&out)
    );
    out
}

/// Runs `exe` under valgrind's memcheck: no errors, no definite or
/// indirect leaks. heisen keeps every thread's state until the process
/// ends on purpose (the report at exit reads them): that memory is "still
/// reachable", which is not a leak and not checked.
pub(crate) fn valgrind(exe: &Path, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("valgrind");
    cmd.current_dir(dir)
        .args([
            "--error-exitcode=99",
            "--leak-check=full",
            "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite,indirect",
            "-q",
        ])
        .arg(exe)
        .args(args);
    clean_environment(&mut cmd);
    cmd.envs(env.iter().copied());
    let out = cmd
        .output()
        .expect("run valgrind (apt-get install valgrind)");
    assert!(
        out.status.success(),
        "valgrind {} {args:?}: memcheck found errors or leaks (exit {:?}):\n{}",
        exe.display(),
        out.status.code(),
        describe(&out)
    );
    out
}

/// A program's output for an assertion message.
pub(crate) fn describe(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The program's standard output.
pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The report files in `dir`, parsed.
pub(crate) fn reports(dir: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read the output directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("read the report");
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()))
        })
        .collect()
}

/// The one report in `dir`.
pub(crate) fn report(dir: &Path) -> Value {
    let mut all = reports(dir);
    assert_eq!(all.len(), 1, "one report expected in {}", dir.display());
    all.remove(0)
}

/// The id of region `name` in a report, if it is there.
pub(crate) fn region_id(report: &Value, name: &str) -> Option<u64> {
    report["regions"]
        .as_array()?
        .iter()
        .find(|r| r["name"] == name)
        .and_then(|r| r["id"].as_u64())
}

/// The records of region `id` in a location, summed over call sites:
/// `(count, measured inclusive, compensated inclusive)`.
pub(crate) fn region_totals(location: &Value, id: u64) -> (u64, u64, i64) {
    location["regions"]
        .as_array()
        .expect("regions")
        .iter()
        .filter(|r| r["region"].as_u64() == Some(id))
        .fold((0, 0, 0), |(c, m, i), r| {
            (
                c + r["count"].as_u64().unwrap_or(0),
                m + r["measured_inclusive"].as_u64().unwrap_or(0),
                i + r["inclusive"].as_i64().unwrap_or(0),
            )
        })
}

/// Calls of the region named `name` over every location of a report
/// (panics if there is no such region).
pub(crate) fn calls(report: &Value, name: &str) -> u64 {
    let id = region_id(report, name).unwrap_or_else(|| panic!("no region {name}"));
    report["locations"]
        .as_array()
        .expect("locations")
        .iter()
        .map(|l| region_totals(l, id).0)
        .sum()
}

/// A location's measured and compensated elapsed times, ns.
pub(crate) fn elapsed(location: &Value) -> (i64, i64) {
    let n = |k: &str| {
        location[k]
            .as_i64()
            .unwrap_or_else(|| panic!("{k} in {location}"))
    };
    (
        n("measured_end") - n("start"),
        n("approximated_end") - n("approximated_start"),
    )
}

/// The integer right after the first `marker` in `text`.
pub(crate) fn number_after(text: &str, marker: &str) -> i64 {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?} in:\n{text}"));
    let rest = text[at + marker.len()..].trim_start();
    let end = rest
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(rest.len(), |(i, _)| i);
    rest[..end]
        .parse()
        .unwrap_or_else(|_| panic!("no number after {marker:?} in {text}"))
}

/// The names of the calibrated actions a report lists.
pub(crate) fn action_names(report: &Value) -> Vec<&str> {
    report["header"]["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .filter_map(|a| a["action"].as_str())
        .collect()
}

/// Checks that a C test program printed `ok CASE` for every case and
/// `0 failures`.
pub(crate) fn expect_cases(out: &Output, cases: &[&str]) {
    let text = stdout(out);
    for case in cases {
        assert!(
            text.lines().any(|l| l == format!("ok {case}")),
            "case {case}:\n{}",
            describe(out)
        );
    }
    assert!(text.contains("0 failures"), "{}", describe(out));
}
