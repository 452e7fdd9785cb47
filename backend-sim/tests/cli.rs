//! The `heisen` binary: every command prints what it should and errors
//! leave with a message that names the problem and a failure status.

use std::process::{Command, Output};

fn heisen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_heisen"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the heisen binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn scenarios_lists_master_worker_on_one_line() {
    let o = heisen(&["scenarios"]);
    assert!(o.status.success());
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("master-worker"))
        .map(str::to_string);
    assert!(line.is_some_and(|l| l.contains("seed 000")));
}

#[test]
fn simulate_master_worker_prints_the_table() {
    let o = heisen(&["simulate", "master-worker"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("timestamped (R5)") && out.contains("local-only"),
        "{out}"
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("worker ")).count(),
        4,
        "{out}"
    );
}

#[test]
fn toml_file_gives_the_builtins_table() {
    let a = heisen(&["simulate", "master-worker"]);
    let b = heisen(&["simulate", "scenarios/master-worker.toml"]);
    assert!(b.status.success(), "{}", stderr(&b));
    assert_eq!(stdout(&a), stdout(&b));
}

#[test]
fn goal_file_prints_loggopsim_times() {
    let o = heisen(&["simulate", "scenarios/dissemination_16.goal"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        out.lines().filter(|l| l.ends_with(": 22000")).count(),
        16,
        "{out}"
    );
    // L = 5000: 4 rounds of o + L + o = 8000.
    let o = heisen(&["simulate", "scenarios/dissemination_16.goal", "-L", "5000"]);
    assert!(stdout(&o).contains("Host 15: 32000"), "{}", stdout(&o));
}

#[test]
fn errors_fail_with_a_message() {
    let o = heisen(&["simulate", "no-such-scenario"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("not a built-in scenario"),
        "{}",
        stderr(&o)
    );
    let o = heisen(&["simulate", "missing.toml"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).starts_with("heisen: error: missing.toml:"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn help_teaches_with_examples() {
    let o = heisen(&["--help"]);
    assert!(stdout(&o).contains("heisen simulate master-worker"));
    let o = heisen(&["simulate", "--help"]);
    assert!(stdout(&o).contains("Examples:"));
}
