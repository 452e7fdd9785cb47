//! The `heisen` binary: every command prints what it should and errors
//! leave with a message that names the problem and a failure status.

mod errors;
mod goal;

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

/// `heisen args`, which must succeed (its stderr shown if not).
fn ok(args: &[&str]) -> Output {
    let o = heisen(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    o
}

/// `heisen args`, which must fail (its stdout shown if not).
fn failed(args: &[&str]) -> Output {
    let o = heisen(args);
    assert!(!o.status.success(), "{args:?} succeeded: {}", stdout(&o));
    o
}

#[test]
fn scenarios_lists_master_worker_on_one_line() {
    let o = ok(&["scenarios"]);
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("master-worker"))
        .map(str::to_string);
    assert!(line.is_some_and(|l| l.contains("seed 000")));
}

#[test]
fn simulate_master_worker_prints_the_table() {
    let o = ok(&["simulate", "master-worker"]);
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
    let b = ok(&["simulate", "scenarios/master-worker.toml"]);
    // The same tables; only the call sites' names differ (the file's
    // lines against the built-in's operation numbers).
    let before = |o: &Output| {
        let out = stdout(o);
        out.split("\ncommunication of the measured run")
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(before(&a), before(&b));
}

#[test]
fn errors_fail_with_a_message() {
    let o = failed(&["simulate", "no-such-scenario"]);
    assert!(
        stderr(&o).contains("not a built-in scenario"),
        "{}",
        stderr(&o)
    );
    let o = failed(&["simulate", "missing.toml"]);
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

/// A bad input's error: a failure status, no panic, one line on stderr
/// that starts with "heisen: error:" and contains every part of `expect`.
fn refused(args: &[&str], expect: &[&str]) {
    let o = failed(args);
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(101), "{args:?} panicked: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("heisen: error: "), "{args:?}: {err}");
    for e in expect {
        assert!(err.contains(e), "{args:?}: no {e:?} in {err}");
    }
}

/// Writes `text` as `name` in a scratch directory; returns its path.
fn scenario_file(test: &str, name: &str, text: &str) -> String {
    let path = scratch(test).join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
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
    let o = ok(&["simulate", "nas-is"]);
    let out = stdout(&o);
    assert!(out.contains("critical-path profile"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("create_seq")),
        "{out}"
    );
}

#[test]
fn random_by_name_and_by_seed_are_the_same_program() {
    let a = ok(&["simulate", "random-7"]);
    let b = heisen(&["simulate", "random", "--seed", "7"]);
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
    ok(&[
        "simulate",
        "one-send",
        "--json",
        json.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);

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
    // Class "pictures": a legend names every mark.
    for mark in [
        "legend",
        "region work",
        "instrumentation overhead",
        "waiting",
        "message",
    ] {
        assert!(s.contains(mark), "no {mark:?} in the picture");
    }

    // And `heisen report` renders the report.
    let o = ok(&["report", json.to_str().unwrap()]);
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
    let o = ok(&[
        "simulate",
        "scenarios/dissemination_16.goal",
        "--json",
        json.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(stdout(&o).contains("Host 15: 22000"));
    let o = ok(&["report", json.to_str().unwrap()]);
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
    let o = ok(&["report", RANK0]);
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
    r["runtime"]["calls_abandoned"] = 4.into();
    r["runtime"]["calls_nested"] = 5.into();
    r["runtime"]["future_field"] = "ignored".into();
    let path = dir.join("problems.json");
    std::fs::write(&path, r.to_string()).unwrap();
    let o = ok(&["report", path.to_str().unwrap()]);
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
        "4 heisen calls were left by a jump out of a signal handler",
        "5 calls of instrumented functions interrupted a heisen call",
    ] {
        assert!(line.contains(phrase), "{phrase}: {line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn several_reports_merge_into_one_view_with_regions_matched_by_name() {
    let o = ok(&["report", RANK0, RANK1]);
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

/// A process that entered fewer regions leaves its later share slots
/// unused (R7): its report selects a prefix of the others' regions, and
/// the files still merge, named by the longest selection; a selection
/// that differs in a slot both use does not merge.
#[test]
fn a_report_selecting_fewer_regions_merges_with_the_others() {
    let dir = scratch("prefix-reports");
    let mut short = json(RANK1);
    short["header"]["selected"]
        .as_array_mut()
        .unwrap()
        .truncate(2);
    for l in short["locations"].as_array_mut().unwrap() {
        for key in ["inclusive", "exclusive", "net"] {
            l["critical_path"][key].as_array_mut().unwrap().truncate(2);
        }
    }
    let file = dir.join("short.json");
    std::fs::write(&file, short.to_string()).unwrap();
    let o = ok(&["report", file.to_str().unwrap(), RANK0]);
    let out = stdout(&o);
    assert!(out.starts_with("heisen report of 2 files merged"), "{out}");
    let table = out.split("\nselected ").nth(1).expect("the share table");
    for name in ["solve", "exchange", "io"] {
        assert!(table.contains(&format!("\n{name} ")), "{name}:\n{out}");
    }
    // `io` in slot 1: no longer the same shares
    short["header"]["selected"][1]["name"] = "io".into();
    std::fs::write(&file, short.to_string()).unwrap();
    let o = ok(&["report", file.to_str().unwrap(), RANK0]);
    assert!(
        stdout(&o).starts_with("2 report files, rendered one by one: "),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reports_that_select_other_regions_are_rendered_one_by_one() {
    let dir = scratch("mixed-reports");
    let sim = dir.join("sim.json");
    ok(&["simulate", "one-send", "--json", sim.to_str().unwrap()]);
    let o = ok(&["report", RANK0, sim.to_str().unwrap()]);
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
    let o = failed(&["report", RANK0, "no-such.json"]);
    assert!(
        stderr(&o).contains("no-such.json: cannot read"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_trace_above_its_limit_is_not_written_but_the_tables_are() {
    // master-worker's trace takes 11 MB: above 6, not far enough above
    // to be refused before the run.
    let dir = scratch("trace-limit");
    let trace = dir.join("big.trace.json");
    let o = heisen(&[
        "simulate",
        "master-worker",
        "--trace",
        trace.to_str().unwrap(),
        "--trace-limit",
        "6",
    ]);
    let err = stderr(&o);
    assert!(!o.status.success() && o.status.code() != Some(101), "{err}");
    assert!(
        err.contains("big.trace.json: not written: the trace would take")
            && err.contains("above --trace-limit 6 (MB)"),
        "{err}"
    );
    assert!(!trace.exists());
    assert!(stdout(&o).contains("timestamped (R5)"), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_analysis_keeps_the_online_profile_only() {
    let o = ok(&["simulate", "master-worker", "--no-analysis"]);
    let out = stdout(&o);
    assert!(out.contains("critical-path profile, online"), "{out}");
    assert!(!out.contains("critical-path profile, offline"), "{out}");
    assert!(
        !out.lines()
            .any(|l| l.starts_with("region") && l.contains("what-if")),
        "{out}"
    );
}

// ----- class "output that scales and explains" --------------------------------

/// A scenario of one master and `workers` workers, each sending it one
/// message it receives from any source.
fn many(workers: u32) -> String {
    format!(
        "[[location]]\nname = \"master\"\nops = [ {{ loop = {workers}, ops = [ {{ recv = \"any\", bytes = 8 }} ] }} ]\n\
         [[location]]\nname = \"w\"\ncount = {workers}\n\
         ops = [ {{ region = \"work\", ops = [ {{ compute = {{ uniform = [1000, 90000] }} }} ] }}, {{ send = \"master\", bytes = 8 }} ]\n"
    )
}

#[test]
fn many_locations_print_a_summary_and_every_row_on_request() {
    let file = scenario_file("summary", "many.toml", &many(40));
    let o = ok(&["simulate", &file]);
    let out = stdout(&o);
    let table = out.split("\n\n").next().unwrap_or_default();
    assert!(table.contains("41 locations: min, median and max"), "{out}");
    for row in ["min ", "median ", "max "] {
        assert_eq!(
            table.lines().filter(|l| l.starts_with(row)).count(),
            1,
            "{out}"
        );
    }
    assert!(
        table.contains("the 5 locations that end last in the truth"),
        "{out}"
    );
    assert!(table.lines().count() <= 14, "{out}");
    let all = stdout(&heisen(&["simulate", &file, "--all-locations"]));
    let table = all.split("\n\n").next().unwrap_or_default();
    assert_eq!(
        table.lines().filter(|l| l.starts_with("w ")).count(),
        40,
        "{all}"
    );
    // The R11 replay table too.
    let out = stdout(&heisen(&["simulate", &file, "--match", "approximated"]));
    assert!(
        out.contains(
            "(the 10 of 41 locations whose R5 end moved most; --all-locations: every one)"
        ),
        "{out}"
    );
}

#[test]
fn regions_are_a_tree_by_critical_path_share_that_adds_up() {
    let o = heisen(&["simulate", "master-worker"]);
    let out = stdout(&o);
    assert!(
        out.contains("regions by nesting, siblings by CP share"),
        "{out}"
    );
    // worker > packet > in_circle, indented by depth.
    let names: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("critical-path profile, online"))
        .skip(2)
        .take(4)
        .map(|l| l.split("  ").find(|w| !w.is_empty()).map_or("", |_| l))
        .collect();
    assert!(names[0].starts_with("worker "), "{out}");
    assert!(names[1].starts_with("  packet "), "{out}");
    assert!(names[2].starts_with("    in_circle "), "{out}");
    assert!(names[3].starts_with("master "), "{out}");
    // Top-level shares, (transfer) and (outside regions) add up to 100 %.
    let online: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("critical-path profile, online"))
        .take_while(|l| !l.is_empty())
        .collect();
    let pct = |prefix: &str| {
        online
            .iter()
            .find(|l| l.starts_with(prefix))
            .map(|l| {
                l.split_whitespace()
                    .nth(2)
                    .unwrap_or("0")
                    .parse::<f64>()
                    .unwrap_or(0.0)
            })
            .unwrap_or(f64::NAN)
    };
    let sum = pct("worker ") + pct("master ") + pct("(transfer)") + pct("(outside regions)");
    assert!((sum - 100.0).abs() < 0.25, "{sum}\n{out}");
    // A legend defines every column; nothing reads "-0.0".
    for term in [
        "legend:",
        "zero-gain =",
        "what-if =",
        "CP excl =",
        "(outside regions)",
    ] {
        assert!(out.contains(term), "no {term:?}\n{out}");
    }
    assert!(!out.contains("CP-zero") && !out.contains("-0.0"), "{out}");
}

#[test]
fn times_scale_to_their_unit() {
    // 2.99 ms of master-worker read in ms in the profile, µs in Table 1.
    let out = stdout(&heisen(&["simulate", "master-worker"]));
    assert!(out.contains("CP 2.990 ms, ends at worker 3"), "{out}");
    assert!(out.contains("end of every location in µs"), "{out}");
    let file = scenario_file(
        "units",
        "long.toml",
        "[[location]]\nname = \"a\"\nops = [ { compute = 12000000000 } ]\n",
    );
    let out = stdout(&heisen(&["simulate", &file]));
    assert!(out.contains("end of every location in s"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("a ") && l.contains("12.000")),
        "{out}"
    );
}

#[test]
fn report_shows_loops_every_comm_on_request_and_one_meaning_per_word() {
    let dir = scratch("report-all");
    let json = dir.join("mw.json");
    ok(&[
        "simulate",
        "master-worker",
        "--json",
        json.to_str().unwrap(),
    ]);
    let o = heisen(&["report", json.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(out.contains("loops, summed over locations"), "{out}");
    assert!(
        out.contains("more records: heisen report --all-comms lists them"),
        "{out}"
    );
    assert!(
        out.contains("CP if zero") && out.contains("zero-gain"),
        "{out}"
    );
    assert!(!out.contains("zeroed") && out.contains("legend:"), "{out}");
    let all = stdout(&heisen(&["report", "--all-comms", json.to_str().unwrap()]));
    assert!(!all.contains("more records"), "{all}");
    let rows = |text: &str| {
        text.lines()
            .skip_while(|l| !l.starts_with("communication,"))
            .skip(2)
            .take_while(|l| !l.is_empty())
            .count()
    };
    assert!(rows(&all) > rows(&out), "{all}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ----- R11's replay: --match approximated --------------------------------------

#[test]
fn matching_by_approximated_send_time_moves_ends_and_profile_where_reordered() {
    // master-worker-uneven: the measured run counts reorderings at the
    // master's wildcard receive; the replay moves ends and shares.
    let file = "scenarios/master-worker-uneven.toml";
    let o = ok(&["simulate", file, "--match", "approximated"]);
    let out = stdout(&o);
    let replay: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("R11 replay"))
        .collect();
    assert!(!replay.is_empty(), "{out}");
    let reorders: u64 = replay[1]
        .split("counted ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(reorders > 0, "{out}");
    // location, truth, measured observed, measured approx, R5 observed ...
    let moved = replay
        .iter()
        .filter(|l| l.starts_with("fine ") || l.starts_with("coarse ") || l.starts_with("master "))
        .filter(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() > 5 && w[w.len() - 6] != w[w.len() - 5]
        })
        .count();
    assert!(moved > 0, "{out}");
    assert!(
        replay
            .iter()
            .any(|l| l.starts_with("critical path (online kernels): truth")),
        "{out}"
    );
    // A GOAL schedule has no measured run to replay.
    refused(
        &[
            "simulate",
            "scenarios/dissemination_16.goal",
            "--match",
            "approximated",
        ],
        &["dissemination_16.goal: --match approximated replays a measured run"],
    );
    // The built-in master-worker never reorders: nothing moves.
    let out = stdout(&heisen(&[
        "simulate",
        "master-worker",
        "--match",
        "approximated",
    ]));
    assert!(
        out.contains("counted 0 reorderings in 84 wildcard matches"),
        "{out}"
    );
    let rows: Vec<Vec<String>> = out
        .lines()
        .skip_while(|l| !l.starts_with("end of every location in"))
        .skip(2)
        .take_while(|l| !l.starts_with("R5:"))
        .map(words)
        .collect();
    assert_eq!(rows.len(), 5, "{out}");
    for w in &rows {
        // measured observed == measured approx; R5 observed == R5 approx.
        let n = w.len();
        assert_eq!((&w[n - 6], &w[n - 4]), (&w[n - 5], &w[n - 2]), "{out}");
    }
}

#[test]
fn call_sites_are_named_by_operation_and_file_line() {
    let o = heisen(&["simulate", "scenarios/master-worker.toml"]);
    let out = stdout(&o);
    let comms: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("communication of the measured run"))
        .collect();
    // The master's wildcard receive is line 41 of the file, the workers'
    // receive line 58.
    assert!(
        comms.iter().any(|l| l.starts_with("master ")
            && l.contains("recv from any tag 1 (scenarios/master-worker.toml:41)")),
        "{out}"
    );
    assert!(
        comms.iter().any(|l| l.starts_with("worker 3 ")
            && l.contains("recv from master tag 2 (scenarios/master-worker.toml:58)")),
        "{out}"
    );
    assert!(
        comms
            .iter()
            .any(|l| l.contains("more records: --all-comms")),
        "{out}"
    );
    // A built-in names its operations by position.
    let out = stdout(&heisen(&["simulate", "master-worker", "--all-comms"]));
    assert!(out.contains("recv from any tag 1 (op 1.2.1)"), "{out}");
    assert!(out.contains("send to last tag 2 (op 1.2.3)"), "{out}");
    assert!(!out.contains("more records"), "{out}");
}

#[test]
fn report_of_many_locations_is_a_summary_in_a_unit_that_fits() {
    let dir = scratch("report-many");
    let file = dir.join("many.toml");
    std::fs::write(&file, many(40)).unwrap();
    let json = dir.join("many.json");
    ok(&[
        "simulate",
        file.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = stdout(&heisen(&["report", json.to_str().unwrap()]));
    assert!(out.contains("41 locations: min, median and max"), "{out}");
    assert!(
        out.contains("the 5 locations with the longest measured time"),
        "{out}"
    );
    let all = stdout(&heisen(&[
        "report",
        "--all-locations",
        json.to_str().unwrap(),
    ]));
    let rows = |text: &str| {
        text.lines()
            .skip_while(|l| !l.starts_with("per location"))
            .filter(|l| l.split_whitespace().nth(1).is_some_and(|w| w == "w"))
            .count()
    };
    assert_eq!(rows(&all), 40, "{all}");
    assert!(rows(&out) <= 5, "{out}");
    // 12 s of work reads in s.
    let long = dir.join("long.toml");
    std::fs::write(&long, "[[location]]\nname = \"a\"\nops = [ { region = \"r\", ops = [ { compute = 12000000000 } ] } ]\n").unwrap();
    let json = dir.join("long.json");
    ok(&[
        "simulate",
        long.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = stdout(&heisen(&["report", json.to_str().unwrap()]));
    assert!(out.contains("per location (times in s)"), "{out}");
    assert!(out.contains("critical path: 12.000 s"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_collective_too_long_for_the_clock_stops_with_an_error() {
    // 17 ranks, alltoall of 2^40 bytes at G = 2^20 ns per byte: 16 rounds
    // of 2^60 ns, 2^64 ns in all.
    let file = scenario_file(
        "collective",
        "a.toml",
        "[network]\nG = 1048576\n[[location]]\nname = \"r\"\ncount = 17\n\
         ops = [ { alltoall = true, bytes = 1099511627776 } ]\n",
    );
    refused(
        &["simulate", &file],
        &["simulated time passed", "too large"],
    );
}

#[test]
fn progress_names_every_phase_of_a_long_run() {
    // Progress starts after a second; HEISEN_PROGRESS_AFTER=0 shows it
    // from the start, so that the phases can be checked without a long run.
    let o = Command::new(env!("CARGO_BIN_EXE_heisen"))
        .args(["simulate", "master-worker", "--match", "approximated"])
        .env("HEISEN_PROGRESS_AFTER", "0")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    for phase in [
        "master-worker: 5 locations, about ",
        "operations: truth run",
        "] measured run",
        "offline analysis: activity graph and 4 what-if runs",
        "wildcards matched by approximated send time",
        "writing files",
    ] {
        assert!(err.contains(phase), "no {phase:?} in\n{err}");
    }
    assert!(err.lines().all(|l| l.starts_with("heisen: [")), "{err}");
    // Not before its time: nothing on stderr.
    let o = Command::new(env!("CARGO_BIN_EXE_heisen"))
        .args(["simulate", "master-worker"])
        .env("HEISEN_PROGRESS_AFTER", "1e9")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn a_trace_far_above_its_limit_is_refused_before_the_run() {
    // 4 workers x 2000 packets x 200 calls: about 5 M operations, a trace
    // of about 900 MB; refused at once, without running.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/master-worker.toml"
    ))
    .unwrap()
    .replace("loop = 84", "loop = 8004")
    .replace("loop = 20,", "loop = 2000,");
    let file = scenario_file("trace-early", "big.toml", &text);
    refused(
        &["simulate", &file, "--trace", "never.json"],
        &[
            "never.json: not written: the trace would take about",
            "above --trace-limit 100 (MB)",
        ],
    );
    assert!(!std::path::Path::new("never.json").exists());
}
