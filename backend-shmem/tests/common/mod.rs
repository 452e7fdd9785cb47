//! Runs a test's scenario in a child process: the runtime is one per
//! process and writes its report at exit, so each scenario needs a fresh
//! process. A test calls [`child`] with its own name; in the child the
//! same test runs the scenario instead.
#![allow(dead_code)] // reason: each test binary uses a part of these helpers

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The variable that tells the test binary it runs as a child.
const CHILD: &str = "HEISEN_TEST_CHILD";

/// Whether this process is the child running scenario `name`.
pub(crate) fn is_child(name: &str) -> bool {
    std::env::var(CHILD).as_deref() == Ok(name)
}

/// A fresh, empty directory under the target dir for one test's output.
pub(crate) fn out_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the test's output directory");
    dir
}

/// Runs test `name` of this binary in a child process with `env` set.
pub(crate) fn child(name: &str, env: &[(&str, &str)]) -> Output {
    let exe = std::env::current_exe().expect("test binary path");
    let mut cmd = Command::new(exe);
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name);
    for var in [
        "HEISEN_REGIONS",
        "HEISEN_OUTPUT",
        "HEISEN_FORM",
        "HEISEN_MONITOR",
        "HEISEN_SUMMARY",
        "HEISEN_DISABLE",
        "HEISEN_CALIBRATION",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("run the child")
}

/// Runs test `name` in a child that writes its report into a fresh
/// directory of its own: the child's output, which must say it succeeded,
/// and the report.
pub(crate) fn child_report(name: &str) -> (Output, Value) {
    let dir = out_dir(name);
    let out = child(
        name,
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8 path"))],
    );
    assert!(out.status.success(), "{out:?}");
    (out, report_in(&dir))
}

/// The one report file in `dir`, parsed.
pub(crate) fn report_in(dir: &Path) -> Value {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read the output directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one report expected in {}: {files:?}",
        dir.display()
    );
    let text = std::fs::read_to_string(&files[0]).expect("read the report");
    serde_json::from_str(&text).expect("the report is JSON")
}

/// The location called `name` in a report.
pub(crate) fn location<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["locations"]
        .as_array()
        .expect("locations")
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or_else(|| panic!("no location {name} in {report}"))
}

/// The id of region `name` in a report.
pub(crate) fn region_id(report: &Value, name: &str) -> u64 {
    report["regions"]
        .as_array()
        .expect("regions")
        .iter()
        .find(|r| r["name"] == name)
        .and_then(|r| r["id"].as_u64())
        .unwrap_or_else(|| panic!("no region {name}"))
}

/// Checks the identities every location record must satisfy.
pub(crate) fn check_location(l: &Value) {
    let n = |k: &str| l[k].as_i64().unwrap_or_else(|| panic!("{k} in {l}"));
    assert!(n("start") > 0, "a real clock reading: {l}");
    assert!(n("measured_end") >= n("start"), "{l}");
    assert_eq!(n("approximated_end"), n("measured_end") - n("delay"), "{l}");
    assert!(n("overhead") >= 0 && n("delay") >= 0, "{l}");
}
