//! The differential suite against LogGOPSim (docs/goal.md, "How heisen
//! matches LogGOPSim"): every reference schedule is run by heisen's graph
//! executor (`goal::load_graph`, `engine::run_graph`) with the reference's
//! parameters, and every rank's end time must equal, to the nanosecond,
//! the one printed by LogGOPSim (spcl/LogGOPSim 76451de with the fixes of
//! docs/goal.md, A1–A5). The reference data is in `tests/data/`:
//! `loggopsim_generated.txt` and `loggopsim_sweep.txt` (schedules of
//! `heisen_sim::goalgen`, made again here from their seeds and checked by
//! fingerprint; the second under random parameter sets),
//! `schedgen/` (schedules written by LogGOPSim's schedgen) and
//! `examples/` (the worked examples of docs/goal.md).
//! `loggopsim_released.txt` holds LogGOPSim's times as released (without
//! the fixes) for the schedgen, edge, example and fuzz schedules, which
//! `--loggopsim released` must give.
//!
//! On a mismatch the failure message counts the matching runs by feature
//! (or pattern) and by parameter set and shows the first mismatches;
//! `cargo test -p heisen-sim --test loggopsim -- --nocapture` prints the
//! same summary when everything matches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use heisen_sim::engine::{LogGopSim, RunOptions, run_graph_with};
use heisen_sim::goal;
use heisen_sim::goalgen::{self, VERSION};
use heisen_sim::transfer::{LogGops, Network};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

/// One reference run: what to run, with which parameters, what LogGOPSim
/// printed, and the groups it is counted in.
#[derive(Clone)]
struct Run {
    name: String,
    text: String,
    /// The file it was read from: read again by the streaming reader.
    path: Option<PathBuf>,
    params: String,
    /// `None`: LogGOPSim printed no times (a receive or a message left in
    /// its queues, G12), and heisen must refuse the run.
    expected: Option<Vec<u64>>,
    groups: Vec<String>,
}

/// Matches and runs per group.
#[derive(Default)]
struct Tally {
    by_group: BTreeMap<String, (usize, usize)>,
    by_params: BTreeMap<String, (usize, usize)>,
    by_kind: BTreeMap<&'static str, usize>,
    shown: Vec<String>,
    runs: usize,
    matched: usize,
}

impl Tally {
    fn add(&mut self, run: &Run, outcome: Result<(), (&'static str, String)>) {
        let ok = outcome.is_ok();
        self.runs += 1;
        self.matched += usize::from(ok);
        for g in &run.groups {
            let e = self.by_group.entry(g.clone()).or_default();
            *e = (e.0 + usize::from(ok), e.1 + 1);
        }
        let e = self.by_params.entry(run.params.clone()).or_default();
        *e = (e.0 + usize::from(ok), e.1 + 1);
        if let Err((kind, detail)) = outcome {
            let n = self.by_kind.entry(kind).or_default();
            *n += 1;
            if *n <= 3 {
                self.shown
                    .push(format!("{} {} [{kind}]: {detail}", run.name, run.params));
            }
        }
    }

    fn summary(&self, what: &str) -> String {
        let mut s = format!(
            "{what}: heisen gives LogGOPSim's end times on {} of {} runs\n",
            self.matched, self.runs
        );
        for (title, map) in [
            ("by group", &self.by_group),
            ("by parameters", &self.by_params),
        ] {
            s += &format!("{title}:\n");
            for (name, (ok, n)) in map {
                s += &format!("  {name:<28} {ok:>5} / {n}\n");
            }
        }
        for (kind, n) in &self.by_kind {
            s += &format!("mismatch {kind}: {n}\n");
        }
        for line in &self.shown {
            s += &format!("  {line}\n");
        }
        s
    }

    fn check(&self, what: &str, at_least: usize) {
        let summary = self.summary(what);
        println!("{summary}");
        assert!(
            self.runs >= at_least,
            "{what}: only {} runs\n{summary}",
            self.runs
        );
        assert_eq!(self.matched, self.runs, "{summary}");
    }
}

/// The `params NAME L o g G O S` lines of a data file.
fn params(text: &str) -> BTreeMap<String, LogGops> {
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("params ")) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let v: Vec<u64> = f[2..8]
            .iter()
            .map(|x| x.parse().expect("a number"))
            .collect();
        let p = LogGops {
            latency: v[0],
            overhead: v[1],
            gap: v[2],
            gap_per_byte: v[3],
            overhead_per_byte: v[4],
            eager_limit: v[5],
        };
        out.insert(f[1].to_string(), p);
    }
    out
}

/// Runs `run` through heisen and compares every rank's end.
fn compare(run: &Run, p: LogGops) -> Result<(), (&'static str, String)> {
    compare_as(run, p, LogGopSim::Fixed)
}

/// [`compare`] reproducing the LogGOPSim build `build`.
fn compare_as(run: &Run, p: LogGops, build: LogGopSim) -> Result<(), (&'static str, String)> {
    let graph = goal::load_graph(&run.name, &run.text).map_err(|e| ("refused", e.to_string()))?;
    if let Some(path) = &run.path {
        let streamed = goal::load_file_graph(&run.name, path).map_err(|e| ("refused", e))?;
        if streamed != graph {
            return Err(("read differently", "streamed".into()));
        }
    }
    let options = RunOptions {
        loggopsim: build,
        ..RunOptions::TIMES
    };
    let got = run_graph_with(&graph, Network::LogGops(p), options);
    let Some(expected) = &run.expected else {
        return match got {
            Err(_) => Ok(()),
            Ok(r) => Err(("times where LogGOPSim prints none", format!("{:?}", r.ends))),
        };
    };
    let got = got.map_err(|e| ("failed", e.to_string()))?;
    if got.ends == *expected {
        return Ok(());
    }
    let first = got.ends.iter().zip(expected).position(|(a, b)| a != b);
    Err((
        "ends differ",
        format!(
            "first at rank {first:?}\n    expected {expected:?}\n    got      {:?}",
            got.ends
        ),
    ))
}

/// The end times of a data line, or `None` for `incomplete`.
fn numbers(fields: &[&str]) -> Option<Vec<u64>> {
    if fields == ["incomplete"] {
        return None;
    }
    Some(
        fields
            .iter()
            .map(|x| x.parse().expect("an end time"))
            .collect(),
    )
}

/// The runs of `file` (`loggopsim_generated.txt`, `loggopsim_sweep.txt`),
/// schedules made again from their seeds and checked against the
/// recorded fingerprints.
fn generated_runs(file: &str) -> (Vec<Run>, BTreeMap<String, LogGops>) {
    let text = std::fs::read_to_string(format!("{DATA}/{file}")).unwrap();
    let version = text.lines().find_map(|l| l.strip_prefix("generator "));
    assert_eq!(
        version,
        Some(VERSION.to_string().as_str()),
        "regenerate the data"
    );
    let mut runs = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Ok(seed) = f[0].parse::<u64>() else {
            continue;
        };
        let g = goalgen::generate(seed);
        assert_eq!(
            format!("{:016x}", goalgen::fingerprint(&g.text)),
            f[2],
            "seed {seed}"
        );
        let mut groups: Vec<String> = g
            .features
            .list()
            .iter()
            .filter(|(_, on)| *on)
            .map(|(n, _)| n.to_string())
            .collect();
        if groups.is_empty() {
            groups.push("(no feature)".into());
        }
        groups.push("(all)".into());
        runs.push(Run {
            name: format!("seed-{seed}.goal"),
            text: g.text,
            path: None,
            params: f[1].to_string(),
            expected: numbers(&f[3..]),
            groups,
        });
    }
    (runs, params(&text))
}

/// The runs of a directory of `.goal` files and their `expected.txt`,
/// grouped by pattern (the name up to its first `-`) or by file.
fn directory_runs(dir: &str, by_pattern: bool) -> (Vec<Run>, BTreeMap<String, LogGops>) {
    let dir = Path::new(DATA).join(dir);
    let text = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
    let mut runs = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("params "))
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let pattern = match f[0].split_once('-') {
            Some((p, _)) if by_pattern => p.to_string(),
            _ => f[0].to_string(),
        };
        runs.push(Run {
            name: f[0].to_string(),
            text: std::fs::read_to_string(dir.join(f[0])).unwrap(),
            path: Some(dir.join(f[0])),
            params: f[1].to_string(),
            expected: numbers(&f[3..]),
            groups: vec![pattern, format!("upstream {}", f[2])],
        });
    }
    (runs, params(&text))
}

/// The runs of `loggopsim_fuzz.txt`: each schedule stored whole
/// (`schedule NAME`, its text, `end`), then its runs, grouped by what the
/// schedule has (see [`features`]).
fn fuzz_runs() -> (Vec<Run>, BTreeMap<String, LogGops>) {
    let text = std::fs::read_to_string(format!("{DATA}/loggopsim_fuzz.txt")).unwrap();
    let mut schedules = BTreeMap::new();
    let mut runs = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.starts_with('#') || line.starts_with("params ") || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix("schedule ") {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "end").collect();
            schedules.insert(name.to_string(), body.join("\n") + "\n");
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let text = schedules[f[0]].clone();
        let mut groups = features(&text);
        groups.push("(all)".into());
        runs.push(Run {
            name: f[0].to_string(),
            text,
            path: None,
            params: f[1].to_string(),
            expected: numbers(&f[2..]),
            groups,
        });
    }
    (runs, params(&text))
}

/// What a schedule has that goalgen avoids, read from its text: a rank
/// sending to itself, `tag -1` on a send, any-source receives, CPU or NIC
/// numbers above 0, a single rank.
fn features(text: &str) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut rank = "";
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.first() == Some(&"rank") {
            rank = w[1];
        }
        if w.as_slice() == ["num_ranks", "1"] {
            out.insert("one rank");
        }
        let op = if w.first().is_some_and(|x| x.ends_with(':')) {
            &w[1..]
        } else {
            &w[..]
        };
        let after = |key: &str| op.iter().position(|x| *x == key).map(|i| op[i + 1]);
        match op.first() {
            Some(&"send") => {
                if after("to") == Some(rank) {
                    out.insert("self-send");
                }
                if after("tag") == Some("-1") {
                    out.insert("send tag -1");
                }
            }
            Some(&"recv") if after("from") == Some("-1") => {
                out.insert("any source");
            }
            _ => {}
        }
        if [after("cpu"), after("nic")]
            .iter()
            .any(|x| x.is_some_and(|n| n != "0"))
        {
            out.insert("several CPUs or NICs");
        }
    }
    if out.is_empty() {
        out.insert("(no feature)");
    }
    out.into_iter().map(String::from).collect()
}

fn check_all(what: &str, (runs, params): (Vec<Run>, BTreeMap<String, LogGops>), at_least: usize) {
    let mut tally = Tally::default();
    for run in &runs {
        tally.add(run, compare(run, params[&run.params]));
    }
    tally.check(what, at_least);
}

#[test]
fn generated_schedules_end_as_in_loggopsim() {
    check_all("generated", generated_runs("loggopsim_generated.txt"), 1900);
}

/// Seeds 1000-1499, each under its own random L, o, g, G, O and S.
#[test]
fn random_parameter_sweep_ends_as_in_loggopsim() {
    let (runs, params) = generated_runs("loggopsim_sweep.txt");
    let mut tally = Tally::default();
    for run in &runs {
        let mut by_value = run.groups.clone();
        let p = params[&run.params];
        by_value.push(format!("S={}", p.eager_limit));
        by_value.push(format!(
            "g {} G",
            if p.gap < p.gap_per_byte { "<" } else { ">=" }
        ));
        let run = Run {
            groups: by_value,
            params: "(random)".into(),
            ..run.clone()
        };
        tally.add(&run, compare(&run, p));
    }
    tally.check("random sweep", 500);
}

#[test]
fn schedgen_patterns_end_as_in_loggopsim() {
    check_all("schedgen", directory_runs("schedgen", true), 136);
}

#[test]
fn worked_examples_end_as_in_loggopsim() {
    check_all("examples", directory_runs("examples", false), 22);
}

/// Hand-written schedules of what goalgen avoids (`data/edge/`): ranks
/// sending to themselves, receive sizes unlike their message's, `tag -1`
/// on sends, and schedules LogGOPSim does not complete.
#[test]
fn edge_schedules_end_as_in_loggopsim() {
    check_all("edge", directory_runs("edge", false), 84);
}

/// Random schedules of what goalgen avoids (`loggopsim_fuzz.txt`), with
/// deadlocks: 1,609 complete runs and 161 that LogGOPSim does not
/// complete (heisen refuses those).
#[test]
fn fuzz_schedules_end_as_in_loggopsim() {
    check_all("fuzz", fuzz_runs(), 1770);
}

/// The kernels run on every rank of the graph executor, in time order
/// (the kernel refuses an event that goes back in time), and change
/// nothing: the end times are the same, and a GOAL run has no
/// instrumentation, so the delay-only form (R4) subtracts nothing.
#[test]
fn kernels_follow_every_rank_in_time_order() {
    let (generated, params) = generated_runs("loggopsim_generated.txt");
    let (schedgen, schedgen_params) = directory_runs("schedgen", true);
    let mut merges = 0;
    for run in generated
        .iter()
        .filter(|r| r.params == "P0" || r.params == "P12")
    {
        merges += run_with_kernels(run, params[&run.params]);
    }
    for run in &schedgen {
        merges += run_with_kernels(run, schedgen_params[&run.params]);
    }
    // Ranks merging their own messages (self-sends).
    let (edge, edge_params) = directory_runs("edge", false);
    let (fuzz, fuzz_params) = fuzz_runs();
    for (run, p) in (edge.iter().map(|r| (r, &edge_params)))
        .chain(fuzz.iter().map(|r| (r, &fuzz_params)))
        .filter(|(r, _)| r.expected.is_some())
    {
        merges += run_with_kernels(run, p[&run.params]);
    }
    assert!(merges > 10_000, "only {merges} merges");
}

/// Runs `run` with kernels and a trace, checks what
/// [`kernels_follow_every_rank_in_time_order`] says; returns its merges.
fn run_with_kernels(run: &Run, p: LogGops) -> usize {
    let options = RunOptions {
        trace: true,
        ..RunOptions::TRUTH
    };
    let graph = goal::load_graph(&run.name, &run.text).unwrap();
    let r = run_graph_with(&graph, Network::LogGops(p), options)
        .unwrap_or_else(|e| panic!("{} {}: {e}", run.name, run.params));
    assert_eq!(
        Some(&r.ends),
        run.expected.as_ref(),
        "{} {}",
        run.name,
        run.params
    );
    let estimates = r.estimates.expect("kernels ran");
    for (rank, (e, &end)) in estimates.iter().zip(&r.ends).enumerate() {
        // R4 without instrumentation: nothing to subtract. (R5 also
        // removes waits longer than its contention-free transfer model,
        // which LogGOPS's gaps and busy CPUs make: docs/development.md, "Exact only
        // without contention".)
        assert_eq!(e.delay_only, end as i64, "{} rank {rank}", run.name);
        assert_eq!((e.measured, e.overhead), (end, 0));
    }
    assert_eq!(r.reports.map(|x| x.len()), Some(r.ends.len()));
    let trace = r.trace.expect("a trace");
    trace
        .iter()
        .filter(|t| t.what == heisen_sim::engine::TraceKind::Merge)
        .count()
}

/// The runs of `loggopsim_released.txt`: the schedules of `schedgen/`,
/// `edge/`, `examples/` and `loggopsim_fuzz.txt` with LogGOPSim's times
/// as released (docs/goal.md, "LogGOPSim as released"), grouped by data
/// set and by whether the fixed build prints the same.
fn released_runs() -> (Vec<Run>, BTreeMap<String, LogGops>) {
    let text = std::fs::read_to_string(format!("{DATA}/loggopsim_released.txt")).unwrap();
    let mut fixed = BTreeMap::new();
    let mut fuzz_texts = BTreeMap::new();
    for (set, (runs, _)) in [
        ("schedgen", directory_runs("schedgen", true)),
        ("edge", directory_runs("edge", false)),
        ("examples", directory_runs("examples", false)),
        ("fuzz", fuzz_runs()),
    ] {
        for r in runs {
            let name = format!("{set}/{}", r.name);
            if set == "fuzz" {
                fuzz_texts.insert(name.clone(), r.text.clone());
            }
            fixed.insert((name, r.params), r.expected);
        }
    }
    let mut runs = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("params ") && !l.is_empty())
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (set, file) = f[0].split_once('/').expect("SET/NAME");
        let (text, path) = match fuzz_texts.get(f[0]) {
            Some(t) => (t.clone(), None),
            None => {
                let path = Path::new(DATA).join(set).join(file);
                (std::fs::read_to_string(&path).unwrap(), Some(path))
            }
        };
        let expected = numbers(&f[2..]);
        let fixed = &fixed[&(f[0].to_string(), f[1].to_string())];
        let same = if *fixed == expected {
            "same as fixed"
        } else {
            "differs from fixed"
        };
        runs.push(Run {
            name: f[0].to_string(),
            text,
            path,
            params: f[1].to_string(),
            expected,
            groups: vec![set.to_string(), format!("{set}, {same}"), same.into()],
        });
    }
    (runs, params(&text))
}

/// `--loggopsim released` (docs/goal.md, "LogGOPSim as released"): every
/// reference schedule of the fixed suite ends as LogGOPSim 76451de as
/// released prints it (1,803 runs, 686 of them unlike the fixed build),
/// or heisen refuses where LogGOPSim prints no times (209 runs).
#[test]
fn reference_schedules_end_as_in_released_loggopsim() {
    let (runs, params) = released_runs();
    let mut tally = Tally::default();
    for run in &runs {
        tally.add(
            run,
            compare_as(run, params[&run.params], LogGopSim::Released),
        );
    }
    let incomplete = runs.iter().filter(|r| r.expected.is_none()).count();
    assert_eq!((runs.len(), incomplete), (2012, 209));
    tally.check("released", 2012);
}

/// `--loggopsim released` on the goalgen runs of `loggopsim_generated.txt`
/// and `loggopsim_sweep.txt` (2,400 runs, every one complete as released).
#[test]
fn generated_schedules_end_as_in_released_loggopsim() {
    let (runs, params) = generated_runs("loggopsim_released_generated.txt");
    let mut fixed = BTreeMap::new();
    for file in ["loggopsim_generated.txt", "loggopsim_sweep.txt"] {
        for r in generated_runs(file).0 {
            fixed.insert((r.name, r.params), r.expected);
        }
    }
    let mut tally = Tally::default();
    for run in &runs {
        let mut run = run.clone();
        let same = fixed[&(run.name.clone(), run.params.clone())] == run.expected;
        run.groups.push(
            if same {
                "same as fixed"
            } else {
                "differs from fixed"
            }
            .into(),
        );
        let p = params[&run.params];
        if run.params.starts_with('R') {
            run.params = "(random)".into();
        }
        tally.add(&run, compare_as(&run, p, LogGopSim::Released));
    }
    tally.check("released, generated", 2400);
}
