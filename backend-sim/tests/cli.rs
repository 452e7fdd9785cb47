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
    // The first table, up to the critical-path profile.
    let table = out.split("\n\n").next().unwrap_or_default();
    assert_eq!(
        table.lines().filter(|l| l.starts_with("worker ")).count(),
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
fn goal_graph_with_several_cpus_runs_as_loggopsim() {
    // docs/goal.md, "Several CPUs: a message is handled on the CPU
    // numbered like the send's": the fixed LogGOPSim prints 4500 and 6552.
    let o = heisen(&[
        "simulate",
        "tests/data/examples/several-cpus-message-cpu.goal",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Host 0: 4500\nHost 1: 6552\n"), "{out}");
    // An operation head-of-line behind a wait no longer deadlocks.
    let o = heisen(&["simulate", "tests/data/examples/no-head-of-line.goal"]);
    assert!(
        stdout(&o).contains("Host 0: 16000\nHost 1: 7000\n"),
        "{}",
        stdout(&o)
    );
    // Simulated time beyond 2^64 ns is an error, not a wrapped end time.
    let o = heisen(&[
        "simulate",
        "scenarios/dissemination_16.goal",
        "-L",
        "18446744073709551615",
    ]);
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("simulated time passes"),
        "{}",
        stderr(&o)
    );
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

/// A fresh directory for one test's files.
fn scratch(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("heisen-cli-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn scenarios_lists_every_builtin() {
    let out = stdout(&heisen(&["scenarios"]));
    for name in [
        "master-worker",
        "one-send",
        "two-sends",
        "handshake",
        "pipeline3",
        "two-receive",
        "pipeline",
        "nas-is",
        "tsp",
        "raytrace",
        "cholesky",
        "random",
    ] {
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "{name}\n{out}"
        );
    }
}

#[test]
fn simulate_prints_the_critical_path_profile() {
    let o = heisen(&["simulate", "nas-is"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("critical-path profile"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("create_seq")), "{out}");
}

#[test]
fn random_by_name_and_by_seed_are_the_same_program() {
    let a = heisen(&["simulate", "random-7"]);
    let b = heisen(&["simulate", "random", "--seed", "7"]);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&b));
    assert_ne!(stdout(&a), stdout(&heisen(&["simulate", "random-8"])));
}

#[test]
fn simulate_writes_report_trace_and_svg() {
    let dir = scratch("outputs");
    let (json, trace, svg) = (
        dir.join("run.json"),
        dir.join("run.trace.json"),
        dir.join("run.svg"),
    );
    let o = heisen(&[
        "simulate",
        "one-send",
        "--json",
        json.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));

    // The report: the core's format, one location per process.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["header"]["tool"], "heisen");
    assert_eq!(report["header"]["backend"], "sim");
    let locations = report["locations"].as_array().unwrap();
    assert_eq!(locations.len(), 2);
    // P2: measured 14.88 µs, approximated 4.8 µs (the truth).
    assert_eq!(locations[1]["measured_end"], 14880);
    assert_eq!(locations[1]["approximated_end"], 4800);
    assert!(!locations[0]["regions"].as_array().unwrap().is_empty());
    // R12: one comm record per call site and peer; P2's receive waited
    // 11.38 µs measured, 3.7 µs compensated (the truth's wait).
    let comm = &locations[1]["comms"][0];
    assert_eq!(
        (&comm["peer"], &comm["count"], &comm["bytes"]),
        (
            &serde_json::json!(0),
            &serde_json::json!(1),
            &serde_json::json!(8)
        )
    );
    assert_eq!(comm["measured_wait"], 11380);
    assert_eq!(comm["compensated_wait"], 3700);
    assert_eq!(locations[0]["comms"][0]["peer"], 1);

    // The trace: two processes, a thread per location, complete events
    // and message flows in both.
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = t["traceEvents"].as_array().unwrap();
    let named = |name: &str| {
        events
            .iter()
            .any(|e| e["name"] == "process_name" && e["args"]["name"] == name)
    };
    assert!(named("measured") && named("approximated"));
    for pid in [1, 2] {
        assert!(
            events
                .iter()
                .any(|e| e["ph"] == "X" && e["pid"] == pid && e["name"] == "work")
        );
        assert!(events.iter().any(|e| e["ph"] == "s" && e["pid"] == pid));
        assert!(events.iter().any(|e| e["ph"] == "f" && e["pid"] == pid));
    }
    // The approximated P2 ends at the truth, 4.8 µs.
    let end = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 2 && e["tid"] == 1)
        .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!((end - 4.8).abs() < 1e-9, "{end}");

    // The picture: both timelines, lanes, region boxes, arrows.
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    assert!(s.contains("measured") && s.contains("approximated"));
    assert!(s.contains("<rect") && s.contains("marker-end"));
    assert_eq!(s.matches("<svg").count(), 1);

    // And `heisen report` renders the report.
    let o = heisen(&["report", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The path runs to P2's end, its trailing work included: the truth, 4.8 µs.
    assert!(out.contains("critical path: 4.800 µs"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("work")), "{out}");
    assert!(
        out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == ["1", "5", "0", "1", "8", "11.380", "3.700", "0.500", "0"]),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn goal_schedule_writes_outputs_too() {
    let dir = scratch("goal");
    let json = dir.join("d.json");
    let trace = dir.join("d.trace.json");
    let o = heisen(&[
        "simulate",
        "scenarios/dissemination_16.goal",
        "--json",
        json.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Host 15: 22000"));
    let o = heisen(&["report", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("16 locations"), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_errors_name_file_line_column_and_expectation() {
    let dir = scratch("bad-reports");
    let cases = [
        (
            "syntax.json",
            "{\n  \"header\": {\n    \"version\": 1,,\n",
            ":3: column",
        ),
        (
            "type.json",
            "{\"header\": 3}",
            ":1: column 12: invalid type",
        ),
        (
            "foreign.json",
            "{\"header\":{\"version\":1,\"tool\":\"other\",\"backend\":\"x\",\"form\":\"timestamped\",\"selected\":[]},\"regions\":[],\"locations\":[]}",
            "not written by heisen",
        ),
        (
            "version.json",
            "{\"header\":{\"version\":9,\"tool\":\"heisen\",\"backend\":\"x\",\"form\":\"timestamped\",\"selected\":[]},\"regions\":[],\"locations\":[]}",
            "version",
        ),
        ("array.json", "[1, 2]", "invalid type"),
    ];
    for (name, text, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let o = heisen(&["report", path.to_str().unwrap()]);
        assert!(!o.status.success(), "{name}");
        let e = stderr(&o);
        assert!(e.contains(name), "{name}: {e}");
        assert!(e.contains(expected), "{name}: {e}");
        assert!(e.contains("expected a heisen report"), "{name}: {e}");
    }
    let o = heisen(&["report", "no-such-report.json"]);
    assert!(stderr(&o).contains("no-such-report.json: cannot read"));
    let _ = std::fs::remove_dir_all(&dir);
}

// ----- reports of real runs (backend-shmem) -----------------------------------

/// A report the process runtime wrote (`backend-shmem/examples/report_sample.rs`).
const RANK0: &str = "tests/data/shmem-rank0.json";
const RANK1: &str = "tests/data/shmem-rank1.json";

fn json(path: &str) -> serde_json::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn us(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1000.0)
}

/// The row `heisen report` prints for location `l` (without the file
/// column): measured, compensated and local-only elapsed, delay, L.
fn location_row(l: &serde_json::Value) -> Vec<String> {
    let n = |k: &str| l[k].as_i64().unwrap();
    let measured = n("measured_end") - n("start");
    let mut row = vec![l["location"].to_string()];
    row.extend(l["name"].as_str().unwrap().split(' ').map(String::from));
    row.extend([
        us(measured),
        us(n("approximated_end") - n("approximated_start")),
        us(measured - n("overhead")),
        us(n("delay")),
        us(l["critical_path"]["longest"].as_i64().unwrap()),
    ]);
    row
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

#[test]
fn report_of_a_real_run_shows_elapsed_times_costs_and_the_path() {
    let o = heisen(&["report", RANK0]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let r = json(RANK0);
    assert!(out.starts_with("heisen report from backend shmem"), "{out}");
    assert!(out.contains("clock: tsc\n"), "{out}");
    let c = &r["header"]["calibration"];
    let enter = format!("enter {} ({})", c["enter"]["whole"], c["enter"]["inside"]);
    assert!(out.contains(&enter), "{enter}\n{out}");
    for a in r["header"]["actions"].as_array().unwrap() {
        let cost = format!("{} {}", a["action"].as_str().unwrap(), a["whole"]);
        assert!(out.contains(&cost), "{cost}\n{out}");
    }
    assert!(out.contains("runtime: 3 threads measured"), "{out}");
    assert!(!out.contains("runtime problems"), "{out}");
    let rows: Vec<Vec<String>> = out.lines().map(words).collect();
    let locations = r["locations"].as_array().unwrap();
    for l in locations {
        let row = location_row(l);
        assert!(rows.contains(&row), "{row:?}\n{out}");
    }
    // R10: the run's path is the longest over locations; each region's
    // zeroed length the largest net.
    let (at, best) = locations
        .iter()
        .map(|l| (l, l["critical_path"]["longest"].as_i64().unwrap()))
        .max_by_key(|&(l, longest)| (longest, -l["location"].as_i64().unwrap()))
        .unwrap();
    let line = format!(
        "critical path: {} µs, ending at location {};",
        us(best),
        at["location"]
    );
    assert!(out.contains(&line), "{line}\n{out}");
    for (k, s) in r["header"]["selected"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let share = at["critical_path"]["inclusive"][k].as_i64().unwrap();
        let zeroed = locations
            .iter()
            .map(|l| l["critical_path"]["net"][k].as_i64().unwrap())
            .max()
            .unwrap();
        let row = rows
            .iter()
            .find(|w| w.len() == 7 && w[0] == s["name"].as_str().unwrap())
            .unwrap_or_else(|| panic!("a row for {s}\n{out}"));
        assert_eq!((&row[1], &row[5]), (&us(share), &us(zeroed)), "{out}");
    }
}

#[test]
fn report_lists_what_the_runtime_dropped() {
    let dir = scratch("runtime-problems");
    let mut r = json(RANK0);
    r["runtime"]["threads_dropped"] = 2.into();
    r["runtime"]["names_dropped"] = 1.into();
    r["runtime"]["exit_mismatches"] = 3.into();
    r["runtime"]["running_at_exit"] = 1.into();
    r["runtime"]["future_field"] = "ignored".into();
    let path = dir.join("problems.json");
    std::fs::write(&path, r.to_string()).unwrap();
    let o = heisen(&["report", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| l.starts_with("runtime problems: "))
        .unwrap_or_else(|| panic!("{out}"));
    for phrase in [
        "2 threads beyond the runtime's table ran unmeasured",
        "1 region names did not fit",
        "3 region exits did not match",
        "1 threads were still running at exit",
    ] {
        assert!(line.contains(phrase), "{phrase}: {line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn several_reports_merge_into_one_view_with_regions_matched_by_name() {
    let o = heisen(&["report", RANK0, RANK1]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("heisen report of 2 files merged, backend shmem"),
        "{out}"
    );
    assert!(
        out.contains(&format!("file 1: {RANK0} (3 locations)")),
        "{out}"
    );
    assert!(
        out.contains(&format!("file 2: {RANK1} (3 locations)")),
        "{out}"
    );
    let rows: Vec<Vec<String>> = out.lines().map(words).collect();
    let mut all = Vec::new();
    for (file, path) in [(1, RANK0), (2, RANK1)] {
        for l in json(path)["locations"].as_array().unwrap() {
            let mut row = location_row(l);
            row.insert(1, file.to_string());
            assert!(rows.contains(&row), "{row:?}\n{out}");
            all.push((file, l.clone()));
        }
    }
    // Each rank's own region keeps its name, though both had id 3; the
    // shared ones are summed over both files.
    for name in ["rank0_setup", "rank1_setup"] {
        assert!(
            rows.iter()
                .any(|w| w.len() == 5 && w[0] == name && w[1] == "1"),
            "{name}\n{out}"
        );
    }
    assert!(
        rows.iter()
            .any(|w| w.len() == 5 && w[0] == "solve" && w[1] == "2"),
        "{out}"
    );
    // R10 over both files.
    let (file, at) = all
        .iter()
        .max_by_key(|(_, l)| {
            (
                l["critical_path"]["longest"].as_i64().unwrap(),
                -l["location"].as_i64().unwrap(),
            )
        })
        .unwrap();
    let line = format!(
        "critical path: {} µs, ending at location {} (file {file});",
        us(at["critical_path"]["longest"].as_i64().unwrap()),
        at["location"]
    );
    assert!(out.contains(&line), "{line}\n{out}");
}

#[test]
fn reports_that_select_other_regions_are_rendered_one_by_one() {
    let dir = scratch("mixed-reports");
    let sim = dir.join("sim.json");
    let o = heisen(&["simulate", "one-send", "--json", sim.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = heisen(&["report", RANK0, sim.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("2 report files, rendered one by one: ")
            && out.contains("selects regions [work]"),
        "{out}"
    );
    assert!(out.contains(&format!("\n=== {RANK0}\n")), "{out}");
    assert_eq!(
        out.matches("heisen report from backend").count(),
        2,
        "{out}"
    );
    assert_eq!(out.matches("critical path: ").count(), 2, "{out}");
    // An unreadable file among several is named.
    let o = heisen(&["report", RANK0, "no-such.json"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no-such.json: cannot read"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
