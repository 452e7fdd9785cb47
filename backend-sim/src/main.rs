//! The `heisen` command line: simulate a program with and without
//! measurement cost and show how close each compensation comes to the
//! truth, write the run as a report, a trace or a picture, and render any
//! report a heisen backend wrote.

mod mapped;

use core::sync::atomic::{AtomicBool, Ordering::Relaxed};
use core::time::Duration;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::{Parser, Subcommand};

use heisen_sim::analysis;
use heisen_sim::builtin::{self, BUILTINS};
use heisen_sim::compare::Comparison;
use heisen_sim::engine::{
    Graph, LogGopSim, Matching, PROGRESS, RunOptions, RunResult, call_sites, run, run_graph_with,
};
use heisen_sim::output::{json, monitor, report, svg, trace};
use heisen_sim::program::{MAX_PER_BYTE, MAX_TIME, Op, Program};
use heisen_sim::transfer::{LogGops, Network};
use heisen_sim::{goal, scenario};

const EXAMPLES: &str = "\
Examples:
  heisen simulate master-worker
      Run the built-in master/worker of seed 000 §5: every location's end in
      the truth, the measured run and the four estimates (the shape of seed
      000 Table 1), then the critical-path profile (seed 003 Fig. 7).
  heisen scenarios
      List the built-in scenarios, one line each.
  heisen simulate nas-is --json is.json --trace is.trace.json --svg is.svg
      Also write the measured run as a report (docs/report.md), as a Chrome
      trace (open it at https://ui.perfetto.dev: one process for the measured
      and one for the approximated timeline) and as an SVG picture of both.
  heisen report is.json
      Render a report file that any heisen backend wrote.
  heisen report heisen.*.json
      Render the reports of several processes (an MPI run's ranks) as one.
  HEISEN_MONITOR=1 ./my_program &  heisen monitor $!
      Watch the critical path of a running program, refreshed every second.
  heisen simulate random --seed 42      (or: heisen simulate random-42)
      A random deterministic program; timestamped compensation is exact.
  heisen simulate backend-sim/scenarios/master-worker.toml
      Run a TOML scenario (commented example in backend-sim/scenarios/).
  heisen simulate backend-sim/scenarios/dissemination_16.goal -L 5000
      Run a LogGOPSim GOAL schedule (e.g. from schedgen) and print every
      rank's end time; LogGOPS parameters default to LogGOPSim's.
  heisen simulate schedule.goal --loggopsim fixed
      The end times of LogGOPSim with the fixes of docs/goal.md A1-A4
      (the default, `released`, gives what LogGOPSim as released prints).
  heisen simulate backend-sim/scenarios/master-worker-uneven.toml --match approximated
      Replay the measured run with wildcard receives matched by approximated
      send time (R11) and show how the ends and the critical path move.
  heisen simulate big.toml --max-events 100000000 --no-analysis
      A long run: stop it after 10^8 events, keep memory flat.
Outputs and options explained: docs/cli.md.";

/// heisen: measure parallel programs as if the measurement were not there.
///
/// The simulator runs a program twice, without instrumentation cost (the
/// truth) and with it (the measured run, with heisen's kernel online), and
/// shows, per location, how far no compensation, local-only compensation
/// and heisen's two parallel forms (delay-only R4, timestamped R5) are from
/// the truth, and which regions the critical path runs through.
#[derive(Debug, Parser)]
#[command(name = "heisen", version, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate a built-in scenario, a TOML scenario or a GOAL schedule.
    #[command(after_help = EXAMPLES)]
    Simulate(Box<SimulateArgs>),
    /// List the built-in scenarios, one line each.
    Scenarios,
    /// Render report files (JSON) that heisen backends wrote.
    ///
    /// Shows where the times come from (clock, calibrated costs, the
    /// runtime's problems), each location's measured, compensated and
    /// local-only elapsed time and delay, the regions and the critical
    /// path. Several files (one per process, e.g. an MPI run's ranks) are
    /// merged into one view when they select the same regions; otherwise
    /// each is rendered on its own.
    Report {
        /// The report files.
        #[arg(required = true)]
        files: Vec<String>,
        /// List every communication record (default: the longest waits).
        #[arg(long)]
        all_comms: bool,
        /// Print every location's row (default: a summary above 16).
        #[arg(long)]
        all_locations: bool,
    },
    /// Watch the critical path of a program running with HEISEN_MONITOR=1.
    ///
    /// Reads the program's live table (docs/monitor.md) without stopping
    /// it and shows the longest path over the latest sample of every
    /// thread, with each selected region's share, the path's length with the
    /// region at zero (CP if zero) and the reduction (zero-gain, R10),
    /// refreshed until the program ends (or Ctrl-C).
    Monitor {
        /// The program's pid, or its table `/dev/shm/heisen.<pid>.monitor`.
        target: String,
        /// Seconds between readings.
        #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
        interval: f64,
        /// Print one reading and exit.
        #[arg(long)]
        once: bool,
    },
}

/// What `heisen simulate` takes.
#[derive(Debug, clap::Args)]
struct SimulateArgs {
    /// A built-in name (see `heisen scenarios`), a `.toml` scenario or
    /// a `.goal` schedule.
    scenario: String,
    /// Seed of the compute-time distributions (overrides the
    /// scenario's); for `random`, the program's seed.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = count("--seed"))]
    seed: Option<u64>,
    /// Write the measured run's report (core report format, JSON).
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Write the measured and approximated timelines as a Chrome
    /// trace-event JSON file (Perfetto, chrome://tracing).
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
    /// Largest trace file written, in MB; a larger trace is not written
    /// (an error after the tables).
    #[arg(long, value_name = "MB", default_value_t = 100, allow_negative_numbers = true, value_parser = count("--trace-limit"))]
    trace_limit: u64,
    /// Draw the measured and approximated timelines as an SVG picture.
    #[arg(long, value_name = "FILE")]
    svg: Option<String>,
    /// Print every location's row (default: a summary above 16 locations).
    #[arg(long)]
    all_locations: bool,
    /// List every communication call site and peer (default: the longest
    /// waits).
    #[arg(long)]
    all_comms: bool,
    /// Stop every run after N events with an error (a runaway program's
    /// brake).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = count("--max-events"))]
    max_events: Option<u64>,
    /// Skip the offline critical-path analysis and the what-if
    /// re-simulations (the online profile stays): memory stays flat in
    /// run length.
    #[arg(long, conflicts_with = "full_analysis")]
    no_analysis: bool,
    /// Run the offline analysis even when the program is long (it keeps
    /// the truth's whole activity graph in memory; skipped by default
    /// above 1 million operations).
    #[arg(long)]
    full_analysis: bool,
    /// How wildcard receives match in the measured run: `observed` (the
    /// order messages arrive, as MPI) or `approximated` (the pending
    /// message with the earliest approximated send time, R11's replay;
    /// then both runs are shown side by side).
    #[arg(long = "match", value_name = "ORDER", default_value = "observed", value_parser = ["observed", "approximated"])]
    matching: String,
    /// Which LogGOPSim a GOAL schedule reproduces: `released` (76451de as
    /// released: unstable sort of ready operations, 0-byte messages
    /// charged -1 byte, no causality guard on several CPUs, the receive's
    /// size deciding rendezvous on the unexpected path) or `fixed`
    /// (76451de with the fixes of docs/goal.md A1-A4). `released` gives
    /// end times only, as LogGOPSim does. Default: `released`, and
    /// `fixed` when --json, --svg or --trace ask for the kernels' analysis,
    /// which needs times that never run backwards.
    #[arg(long = "loggopsim", value_name = "BUILD", value_parser = ["fixed", "released"])]
    loggopsim: Option<String>,
    /// LogGOPS latency L (ns, 0 to 2^40).
    #[arg(short = 'L', value_name = "NS", allow_negative_numbers = true, value_parser = bounded("-L", MAX_TIME))]
    latency: Option<u64>,
    /// LogGOPS CPU overhead o per message (ns, 0 to 2^40).
    #[arg(short = 'o', value_name = "NS", allow_negative_numbers = true, value_parser = bounded("-o", MAX_TIME))]
    overhead: Option<u64>,
    /// LogGOPS gap g between messages (ns, 0 to 2^40).
    #[arg(short = 'g', value_name = "NS", allow_negative_numbers = true, value_parser = bounded("-g", MAX_TIME))]
    gap: Option<u64>,
    /// LogGOPS gap G per byte (ns, 0 to 2^20).
    #[arg(short = 'G', value_name = "NS", allow_negative_numbers = true, value_parser = bounded("-G", MAX_PER_BYTE))]
    gap_per_byte: Option<u64>,
    /// LogGOPS CPU overhead O per byte (ns, 0 to 2^20).
    #[arg(short = 'O', value_name = "NS", allow_negative_numbers = true, value_parser = bounded("-O", MAX_PER_BYTE))]
    overhead_per_byte: Option<u64>,
    /// LogGOPS eager limit S (bytes; larger messages use rendezvous).
    #[arg(short = 'S', value_name = "BYTES", allow_negative_numbers = true, value_parser = count("-S"))]
    eager_limit: Option<u64>,
}

/// A parser of a whole number from 0 to `max` for option `name`, whose
/// error says what was written and what is allowed.
fn bounded(name: &'static str, max: u64) -> impl Fn(&str) -> Result<u64, String> + Clone {
    move |s: &str| match s.trim().parse::<u64>() {
        Ok(v) if v <= max => Ok(v),
        _ => Err(format!(
            "{name} {s}: expected a whole number of ns from 0 to {max}"
        )),
    }
}

/// A parser of a whole number, 0 or more, for option `name`.
fn count(name: &'static str) -> impl Fn(&str) -> Result<u64, String> + Clone {
    move |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("{name} {s}: expected a whole number from 0 to {}", u64::MAX))
    }
}

/// Operations above which the offline analysis is skipped unless asked
/// for (`--full-analysis`): it keeps the truth's activity graph, about
/// 100 bytes per operation.
const ANALYSIS_OPS: f64 = 1e6;
/// Bytes of Chrome trace per operation, about (both timelines).
const TRACE_BYTES_PER_OP: f64 = 180.0;
/// Operations above which a run is announced as possibly endless.
const ENDLESS_OPS: f64 = 1e10;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                e.exit();
            }
            // One line: clap's lines up to its usage, without its
            // "error: " and, for our parsers, its restatement of the value.
            let text = e.to_string();
            let lines: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more"))
                .filter(|l| !l.is_empty())
                .collect();
            let mut line = lines.join("; ");
            line = line.trim_start_matches("error: ").to_string();
            if e.kind() == ErrorKind::ValueValidation
                && let Some((_, ours)) = line.split_once("': ")
            {
                line = ours.to_string();
            }
            eprintln!("heisen: error: {line} (heisen --help)");
            return ExitCode::from(2);
        }
    };
    match execute(cli.command) {
        Ok(out) => {
            // A closed pipe (`heisen ... | head`) is not an error.
            let _ = std::io::stdout().write_all(out.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("heisen: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Makes one output file's text from a run.
type Writer = fn(&Program, &RunResult) -> Result<String, String>;

/// Files to write besides the tables.
struct Outputs {
    json: Option<String>,
    trace: Option<String>,
    svg: Option<String>,
    /// Largest trace file, bytes.
    trace_limit: u64,
}

impl Outputs {
    fn timelines(&self) -> bool {
        self.trace.is_some() || self.svg.is_some()
    }

    fn write(&self, program: &Program, run: &RunResult, progress: &Progress) -> Result<(), String> {
        let files: [(&Option<String>, Writer, u64); 3] = [
            (&self.json, json::report_json, u64::MAX),
            (&self.trace, trace::chrome_trace, self.trace_limit),
            (&self.svg, svg::timelines_svg, u64::MAX),
        ];
        for (file, make, limit) in files {
            if let Some(file) = file {
                progress.phase(&format!("writing {file}"));
                let text = make(program, run)?;
                if text.len() as u64 > limit {
                    return Err(format!(
                        "{file}: not written: the trace would take {} MB, above --trace-limit {} (MB); raise the limit or shorten the run",
                        (text.len() as u64).div_ceil(1 << 20),
                        limit >> 20
                    ));
                }
                std::fs::write(file, text).map_err(|e| format!("{file}: cannot write: {e}"))?;
            }
        }
        Ok(())
    }
}

/// Progress on stderr, by work done (the engine's event count), for any
/// run that lasts longer than a second: a thread looks every quarter of a
/// second and prints at most once a second.
struct Progress {
    start: Instant,
    /// Seconds after which progress is shown (1, or
    /// `HEISEN_PROGRESS_AFTER`).
    after: f64,
    shared: Arc<(Mutex<String>, AtomicBool)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    fn start() -> Self {
        let start = Instant::now();
        let after = std::env::var("HEISEN_PROGRESS_AFTER")
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .unwrap_or(1.0);
        let shared = Arc::new((Mutex::new(String::from("reading")), AtomicBool::new(false)));
        let seen = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            let mut last = 0.0;
            while !seen.1.load(Relaxed) {
                std::thread::park_timeout(Duration::from_millis(250));
                let t = start.elapsed().as_secs_f64();
                if t >= after && t - last >= 1.0 && !seen.1.load(Relaxed) {
                    last = t;
                    let events = PROGRESS.load(Relaxed);
                    let phase = seen.0.lock().map(|p| p.clone()).unwrap_or_default();
                    if events > 0 {
                        eprintln!("heisen: [{t:7.1} s] {phase}: {} events", big(events));
                    } else {
                        eprintln!("heisen: [{t:7.1} s] {phase} ...");
                    }
                }
            }
        });
        Progress {
            start,
            after,
            shared,
            thread: Some(thread),
        }
    }

    /// A new phase (its work counted from zero); said at once when the
    /// command has run for more than a second.
    fn phase(&self, what: &str) {
        PROGRESS.store(0, Relaxed);
        if let Ok(mut p) = self.shared.0.lock() {
            *p = what.to_string();
        }
        let t = self.start.elapsed().as_secs_f64();
        if t >= self.after {
            eprintln!("heisen: [{t:7.1} s] {what}");
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.shared.1.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// `n` with a unit prefix: 12.3 M.
fn big(n: u64) -> String {
    match n {
        n if n >= 1_000_000_000 => format!("{:.2} G", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.1} M", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1} k", n as f64 / 1e3),
        n => n.to_string(),
    }
}

/// Operations a location's body runs, loops multiplied out (f64: a
/// runaway program's count may pass u64).
fn operations(ops: &[Op]) -> f64 {
    ops.iter()
        .map(|op| match op {
            Op::Loop { count, body, .. } => *count as f64 * (operations(body) + 1.0),
            Op::Region { body, .. } => operations(body) + 2.0,
            _ => 1.0,
        })
        .sum()
}

fn execute(command: Command) -> Result<String, String> {
    match command {
        Command::Scenarios => {
            let width = BUILTINS.iter().map(|b| b.name.len()).max().unwrap_or(0);
            Ok(BUILTINS
                .iter()
                .map(|b| {
                    let summary = b.summary.split_whitespace().collect::<Vec<_>>().join(" ");
                    format!("{:<width$}  {summary}\n", b.name)
                })
                .collect())
        }
        Command::Monitor {
            target,
            interval,
            once,
        } => watch(&target, interval, once),
        Command::Report {
            files,
            all_comms,
            all_locations,
        } => {
            let mut reports = Vec::with_capacity(files.len());
            for file in files {
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| format!("{file}: cannot read: {e}"))?;
                let r = report::parse(&file, &text).map_err(|e| e.to_string())?;
                reports.push((file, r));
            }
            Ok(report::render_files(&reports, all_comms, all_locations))
        }
        Command::Simulate(args) => simulate(*args),
    }
}

/// `heisen simulate`: tables on stdout (returned), warnings and progress
/// on stderr, files as asked.
// Long: the `simulate` command in order (load, overrides, runs, outputs); each step is one call, splitting would only pass its dozen locals around.
fn simulate(a: SimulateArgs) -> Result<String, String> {
    let outputs = Outputs {
        json: a.json.clone(),
        trace: a.trace.clone(),
        svg: a.svg.clone(),
        trace_limit: a.trace_limit.saturating_mul(1 << 20),
    };
    let progress = Progress::start();
    let scenario = &a.scenario;
    let mut loaded = load(scenario, a.seed)?;
    let program = match &mut loaded {
        Loaded::Program(p, _) => p,
        Loaded::Goal(header, _) => header,
    };
    if let Some(seed) = a.seed {
        program.seed = seed;
    }
    let overrides = [
        a.latency,
        a.overhead,
        a.gap,
        a.gap_per_byte,
        a.overhead_per_byte,
        a.eager_limit,
    ];
    if overrides.iter().any(Option::is_some) {
        let Network::LogGops(mut p) = program.network else {
            return Err(format!(
                "{scenario} uses the contention-free model; -L -o -g -G -O -S set LogGOPS parameters"
            ));
        };
        p.latency = a.latency.unwrap_or(p.latency);
        p.overhead = a.overhead.unwrap_or(p.overhead);
        p.gap = a.gap.unwrap_or(p.gap);
        p.gap_per_byte = a.gap_per_byte.unwrap_or(p.gap_per_byte);
        p.overhead_per_byte = a.overhead_per_byte.unwrap_or(p.overhead_per_byte);
        p.eager_limit = a.eager_limit.unwrap_or(p.eager_limit);
        program.network = Network::LogGops(p);
        program
            .validate_header()
            .map_err(|e| format!("{scenario}: {e}"))?;
    }
    let max_events = a.max_events.unwrap_or(u64::MAX);
    let (program, lines) = match loaded {
        Loaded::Goal(header, graph) => {
            if a.matching == "approximated" {
                return Err(format!(
                    "{scenario}: --match approximated replays a measured run; a GOAL schedule has no instrumentation (it runs as LogGOPSim runs it), so there is nothing to replay"
                ));
            }
            return simulate_goal(
                scenario,
                &header,
                &graph,
                &outputs,
                &progress,
                (max_events, a.loggopsim.as_deref()),
                a.all_locations,
            );
        }
        Loaded::Program(p, lines) => (p, lines),
    };
    if a.loggopsim.is_some() {
        return Err(format!(
            "{scenario}: --loggopsim applies to GOAL schedules (.goal), which heisen runs as LogGOPSim does"
        ));
    }
    let ops: f64 = program.locations.iter().map(|l| operations(&l.body)).sum();
    if ops > ENDLESS_OPS {
        let stop = match a.max_events {
            Some(n) => format!("--max-events stops it after {n} events"),
            None => "stop it with Ctrl-C, or give --max-events N".into(),
        };
        eprintln!(
            "heisen: warning: {scenario} runs about {ops:.2e} operations (loops multiplied): it may not end in your lifetime; {stop}"
        );
    }
    if let Some(file) = &outputs.trace {
        // About 180 bytes per operation (master-worker: 116 MB for 0.65 M
        // operations): refuse before the run what would be refused after.
        let expected = ops * TRACE_BYTES_PER_OP;
        if expected > 2.0 * outputs.trace_limit as f64 {
            return Err(format!(
                "{file}: not written: the trace would take about {:.0} MB ({ops:.2e} operations), above --trace-limit {} (MB); raise the limit or shorten the run",
                expected / f64::from(1 << 20),
                outputs.trace_limit >> 20
            ));
        }
    }
    let analysis = !a.no_analysis && (a.full_analysis || ops <= ANALYSIS_OPS);
    let mut notes = Vec::new();
    if !analysis && !a.no_analysis && !program.regions.is_empty() {
        notes.push(format!(
            "offline analysis skipped: about {ops:.2e} operations (above {ANALYSIS_OPS:.0e}) would keep the truth's whole activity graph in memory; --full-analysis runs it"
        ));
    }
    let matching = if a.matching == "approximated" {
        Matching::Approximated
    } else {
        Matching::Observed
    };
    // One truth and one measured run serve the table, the online profile
    // (the measured run's kernels), the offline one (the truth's
    // activity graph, kept only for it and for timelines) and the files.
    let truth_options = RunOptions {
        trace: outputs.timelines() || (analysis && !program.regions.is_empty()),
        max_events,
        ..RunOptions::TRUTH
    };
    let measured_options = RunOptions {
        trace: outputs.timelines(),
        max_events,
        ..RunOptions::MEASURED
    };
    progress.phase(&format!(
        "{}: {} locations, about {} operations: truth run",
        program.name,
        program.locations.len(),
        big(ops as u64)
    ));
    let truth = run(&program, truth_options).map_err(|e| format!("{scenario}: truth run: {e}"))?;
    progress.phase("measured run");
    let measured =
        run(&program, measured_options).map_err(|e| format!("{scenario}: measured run: {e}"))?;
    warn_unreceived(&program, &truth);
    let c = Comparison::of(&program, truth, measured);
    let mut out = c.render(a.all_locations);
    if !program.regions.is_empty() {
        let online = analysis::online_profile(&program, &c.measured);
        out.push('\n');
        out.push_str(&online.render(&program));
        if analysis {
            progress.phase(&format!(
                "offline analysis: activity graph and {} what-if runs",
                program.regions.len()
            ));
            let offline = analysis::offline_profile(&program, &c.truth, true)
                .map_err(|e| format!("{scenario}: {e}"))?;
            out.push('\n');
            out.push_str(&offline.render(&program));
        }
        out.push_str(analysis::LEGEND);
    }
    out.push('\n');
    out.push_str(&comm_table(
        &program,
        scenario,
        lines.as_ref(),
        &c.measured,
        a.all_comms,
    ));
    if matching == Matching::Approximated {
        progress.phase("measured run, wildcards matched by approximated send time (R11)");
        let replay = run(
            &program,
            RunOptions {
                matching,
                ..measured_options
            },
        )
        .map_err(|e| format!("{scenario}: measured run matching by approximated time: {e}"))?;
        out.push('\n');
        out.push_str(&replay_table(&program, &c, &replay, a.all_locations));
    }
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    progress.phase("writing files");
    // The tables first: a file that cannot be written is an error after
    // them, not instead of them.
    let written = outputs.write(&program, &c.measured, &progress);
    drop(progress);
    let _ = std::io::stdout().write_all(out.as_bytes());
    written.map(|()| String::new())
}

/// Communication records listed without `--all-comms`.
const COMM_ROWS: usize = 8;

/// The measured run's communication records (R12) summed per location,
/// call site and peer, the longest waits first, each call site named by
/// its operation and where it is written (file:line, or its position in
/// a built-in's operations).
// Long: one table: collect, sort, name call sites, format; the steps share the rows and their names.
fn comm_table(
    program: &Program,
    file: &str,
    lines: Option<&scenario::OpLines>,
    measured: &RunResult,
    all: bool,
) -> String {
    use heisen_sim::output::units::Unit;
    let Some(reports) = &measured.reports else {
        return String::new();
    };
    let mut rows: Vec<(usize, &heisen_core::report::CommEntry)> = reports
        .iter()
        .enumerate()
        .flat_map(|(l, r)| r.comms.iter().map(move |c| (l, c)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    rows.sort_by(|a, b| {
        b.1.measured_wait
            .cmp(&a.1.measured_wait)
            .then((a.0, a.1.site, a.1.peer).cmp(&(b.0, b.1.site, b.1.peer)))
    });
    let unit = Unit::for_max(
        rows.iter()
            .map(|r| r.1.measured_wait as i64)
            .max()
            .unwrap_or(0),
    );
    let name = |l: usize| program.locations.get(l).map_or("?", |s| s.name.as_str());
    // Site names per location, computed once for the locations listed.
    let mut sites: std::collections::HashMap<usize, Vec<(u32, Vec<usize>)>> =
        std::collections::HashMap::new();
    let shown = if all {
        rows.len()
    } else {
        COMM_ROWS.min(rows.len())
    };
    let mut named = Vec::with_capacity(shown);
    for &(l, c) in &rows[..shown] {
        let body = &program.locations[l].body;
        let list = sites.entry(l).or_insert_with(|| call_sites(body));
        let path = list
            .iter()
            .find(|(s, _)| *s == c.site)
            .map(|(_, p)| p.clone());
        let site = match path {
            Some(path) => {
                let what = op_at(body, &path).map_or("?".to_string(), |op| describe(op, program));
                let place = match lines
                    .and_then(|ls| ls.get(l))
                    .and_then(|ls| ls.iter().find(|(p, _)| *p == path).map(|(_, line)| *line))
                {
                    Some(line) => format!("{file}:{line}"),
                    None => format!(
                        "op {}",
                        path.iter()
                            .map(|i| (i + 1).to_string())
                            .collect::<Vec<_>>()
                            .join(".")
                    ),
                };
                format!("{what} ({place})")
            }
            None => format!("site {}", c.site),
        };
        named.push(site);
    }
    let lw = rows[..shown]
        .iter()
        .map(|r| name(r.0).chars().count())
        .max()
        .unwrap_or(8)
        .max(8);
    let sw = heisen_sim::output::report::column_width(&named, 9);
    let mut out = format!(
        "communication of the measured run by location, call site and peer, longest waits first (times in {}):\n",
        unit.name()
    );
    out += &format!(
        "{:<lw$}  {:<sw$}  {:>8}  {:>8}  {:>10}  {:>10}  {:>11}  {:>10}  {:>8}\n",
        "location",
        "call site",
        "peer",
        "calls",
        "bytes",
        "wait",
        "compensated",
        "transfer",
        "reorders"
    );
    for ((l, c), site) in rows[..shown].iter().zip(&named) {
        let peer = if c.peer == u32::MAX {
            "-"
        } else {
            name(c.peer as usize)
        };
        out += &format!(
            "{:<lw$}  {:<sw$}  {:>8}  {:>8}  {:>10}  {:>10}  {:>11}  {:>10}  {:>8}\n",
            name(*l),
            site,
            peer,
            c.count,
            c.bytes,
            unit.fmt(c.measured_wait as i64),
            unit.fmt(c.compensated_wait),
            unit.fmt(c.transfer),
            c.reorders
        );
    }
    if rows.len() > shown {
        out += &format!(
            "({} more records: --all-comms lists them)\n",
            rows.len() - shown
        );
    }
    out += "wait: the measured time the calls waited; compensated: that wait after compensation (R4); transfer: the transfer estimate (R5); reorders: wildcard matches approximated times would have ordered otherwise (R11)\n";
    out
}

/// The operation at `path` (indices into nested bodies) of `body`.
fn op_at<'a>(body: &'a [Op], path: &[usize]) -> Option<&'a Op> {
    let (&first, rest) = path.split_first()?;
    let op = body.get(first)?;
    match (op, rest.is_empty()) {
        (_, true) => Some(op),
        (Op::Region { body, .. } | Op::Loop { body, .. }, false) => op_at(body, rest),
        _ => None,
    }
}

/// A point-to-point operation in the scenario's words: `recv from any
/// tag 1`, `send to last tag 2`.
fn describe(op: &Op, program: &Program) -> String {
    use heisen_sim::program::{Dest, Source};
    let loc = |l: u32| {
        program
            .locations
            .get(l as usize)
            .map_or("?".to_string(), |s| s.name.clone())
    };
    let dest = |d: &Dest| match d {
        Dest::Location(l) => loc(*l),
        Dest::LastSource => "last".into(),
    };
    let source = |s: &Source| match s {
        Source::Location(l) => loc(*l),
        Source::Any => "any".into(),
    };
    let tag = |t: &Option<u32>| t.map_or(" any tag".to_string(), |t| format!(" tag {t}"));
    match op {
        Op::Send { to, tag: t, .. } => format!("send to {}{}", dest(to), tag(&Some(*t))),
        Op::Isend { to, tag: t, .. } => format!("isend to {}{}", dest(to), tag(&Some(*t))),
        Op::Recv { from, tag: t, .. } => format!("recv from {}{}", source(from), tag(t)),
        Op::Irecv { from, tag: t, .. } => format!("irecv from {}{}", source(from), tag(t)),
        Op::Sendrecv {
            to, from, tag: t, ..
        } => {
            format!(
                "sendrecv to {} from {}{}",
                dest(to),
                source(from),
                tag(&Some(*t))
            )
        }
        _ => "operation".into(),
    }
}

/// Warns (stderr) about messages that arrived but that no receive took.
fn warn_unreceived(program: &Program, r: &RunResult) {
    let (count, listed) = &r.unreceived;
    if *count == 0 {
        return;
    }
    let name = |l: u32| {
        program
            .locations
            .get(l as usize)
            .map_or_else(|| format!("location {l}"), |s| s.name.clone())
    };
    let list: Vec<String> = listed
        .iter()
        .map(|&(from, to, tag, bytes)| {
            format!("{} to {} (tag {tag}, {bytes} B)", name(from), name(to))
        })
        .collect();
    let more = if *count as usize > listed.len() {
        ", ..."
    } else {
        ""
    };
    eprintln!(
        "heisen: warning: {count} messages were sent but never received: {}{more}",
        list.join("; ")
    );
}

/// R11's replay beside the observed run: per location the truth, and the
/// measured end and timestamped estimate with wildcards matched in
/// observed order and by approximated send time; then the critical path
/// and each region's share in both.
// Long: the two tables of R11's replay share the units, widths and estimates computed first.
fn replay_table(program: &Program, c: &Comparison, replay: &RunResult, all: bool) -> String {
    use heisen_sim::output::units::{Unit, percent};
    let observed = &c.measured;
    let reorders: u64 = observed.wildcards.iter().map(|w| w.reorders).sum();
    let matches: u64 = observed.wildcards.iter().map(|w| w.matches).sum();
    let est = |r: &RunResult| r.estimates.clone().unwrap_or_default();
    let (eo, ea) = (est(observed), est(replay));
    let max = eo
        .iter()
        .chain(&ea)
        .map(|e| e.measured as i64)
        .max()
        .unwrap_or(0);
    let unit = Unit::for_max(max);
    let mut out = format!(
        "R11 replay: wildcard receives matched by approximated send time (--match approximated)\n\
         the measured run (observed order) counted {reorders} reorderings in {matches} wildcard matches\n\
         end of every location in {}:\n",
        unit.name()
    );
    let width = c
        .rows
        .iter()
        .map(|r| r.location.chars().count())
        .max()
        .unwrap_or(8)
        .max(10);
    out += &format!(
        "{:<width$}  {:>11}  {:>18}  {:>18}  {:>21}  {:>21}\n",
        "location", "truth", "measured observed", "measured approx", "R5 observed", "R5 approx"
    );
    // Above 16 locations (unless `all`): the ten whose R5 end moved most.
    let mut shown: Vec<usize> = (0..c.rows.len()).collect();
    if !all && shown.len() > heisen_sim::compare::SUMMARY_ABOVE {
        shown.sort_by_key(|&i| {
            (
                core::cmp::Reverse((ea[i].timestamped - eo[i].timestamped).abs()),
                i,
            )
        });
        shown.truncate(10);
        shown.sort_unstable();
        out += &format!(
            "(the 10 of {} locations whose R5 end moved most; --all-locations: every one)\n",
            c.rows.len()
        );
    }
    for (i, row) in shown.into_iter().map(|i| (i, &c.rows[i])) {
        let (o, p) = (&eo[i], &ea[i]);
        let r5 = |v: i64| {
            let e = v - row.truth as i64;
            let pct = if row.truth == 0 {
                "-".to_string()
            } else {
                percent(e, row.truth as i64)
            };
            let sign = if e > 0 && !pct.starts_with('-') {
                "+"
            } else {
                ""
            };
            format!("{} ({sign}{pct}%)", unit.fmt(v))
        };
        out += &format!(
            "{:<width$}  {:>11}  {:>18}  {:>18}  {:>21}  {:>21}\n",
            row.location,
            unit.fmt(row.truth as i64),
            unit.fmt(o.measured as i64),
            unit.fmt(p.measured as i64),
            r5(o.timestamped),
            r5(p.timestamped)
        );
    }
    out += "R5: the timestamped estimate of the end, error against the truth in parentheses\n";
    let pt = analysis::online_profile(program, &c.truth);
    let po = analysis::online_profile(program, observed);
    let pa = analysis::online_profile(program, replay);
    out += &format!(
        "critical path (online kernels): truth {} {u} ending at {}; measured, observed order {} {u} ending at {}; approximated order {} {u} ending at {}\n",
        unit.fmt(pt.length),
        pt.ends_at,
        unit.fmt(po.length),
        po.ends_at,
        unit.fmt(pa.length),
        pa.ends_at,
        u = unit.name()
    );
    out += &format!(
        "{:<width$}  {:>10}  {:>14}  {:>14}\n",
        "region", "% CP truth", "% CP observed", "% CP approx"
    );
    let share = |p: &analysis::CpProfile, id: u32| {
        p.rows
            .iter()
            .find(|x| x.id == id)
            .and_then(|x| x.cp_inclusive)
            .map_or("-".to_string(), |v| percent(v, p.length))
    };
    for r in &pt.rows {
        out += &format!(
            "{:<width$}  {:>10}  {:>14}  {:>14}\n",
            r.region,
            share(&pt, r.id),
            share(&po, r.id),
            share(&pa, r.id)
        );
    }
    out
}

/// A GOAL schedule has no instrumentation: its ranks run as LogGOPSim
/// runs them (the graph executor, docs/goal.md) and their times are
/// printed the way LogGOPSim does.
fn simulate_goal(
    name: &str,
    header: &Program,
    graph: &Graph,
    outputs: &Outputs,
    progress: &Progress,
    (max_events, loggopsim): (u64, Option<&str>),
    all: bool,
) -> Result<String, String> {
    // Kernels and a trace only when a file asks for them. LogGOPSim
    // matches by source and tag only: sizes are not checked.
    let wants = outputs.json.is_some() || outputs.timelines();
    // LogGOPSim's own output by default; the analysis needs the fixed
    // build's causal times (docs/goal.md, "LogGOPSim as released").
    let loggopsim = match loggopsim {
        Some("released") => LogGopSim::Released,
        Some(_) => LogGopSim::Fixed,
        None if wants => {
            eprintln!(
                "heisen: note: {name} runs by the fixed build's rules (docs/goal.md A1-A4) for --json, --svg and --trace; its end times can differ from LogGOPSim as released (--loggopsim fixed: no note)"
            );
            LogGopSim::Fixed
        }
        None => LogGopSim::Released,
    };
    let options = if wants {
        RunOptions {
            trace: outputs.timelines(),
            truncation: false,
            ..RunOptions::TRUTH
        }
    } else {
        RunOptions::TIMES
    };
    let options = RunOptions {
        max_events,
        loggopsim,
        ..options
    };
    progress.phase(&format!("{name}: {} ranks", graph.ranks()));
    let r = run_graph_with(graph, header.network, options).map_err(|e| format!("{name}: {e}"))?;
    warn_unreceived(header, &r);
    let mut out = format!("{} ranks, {} events\n", r.ends.len(), r.events);
    if all || r.ends.len() <= heisen_sim::compare::SUMMARY_ABOVE {
        for (i, t) in r.ends.iter().enumerate() {
            out += &format!("Host {i}: {t}\n");
        }
    } else {
        // Min, median and max end with a rank that has it, then the
        // latest ranks; every rank's line (LogGOPSim's) on request.
        let mut order: Vec<(u64, usize)> =
            r.ends.iter().enumerate().map(|(i, &t)| (t, i)).collect();
        order.sort_unstable();
        let n = order.len();
        for (what, (t, i)) in [
            ("min", order[0]),
            ("median", order[n / 2]),
            ("max", order[n - 1]),
        ] {
            out += &format!("{what:<6} end: {t} ns (Host {i})\n");
        }
        let top = heisen_sim::compare::SUMMARY_TOP;
        out += &format!("the {top} ranks that end last:\n");
        let mut latest = order.clone();
        latest.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (t, i) in latest.into_iter().take(top) {
            out += &format!("Host {i}: {t}\n");
        }
        out += "(--all-locations prints every rank's line, as LogGOPSim does)\n";
    }
    outputs.write(header, &r, progress)?;
    Ok(out)
}

/// A scenario as read: GOAL schedules become a dependency graph as they
/// are read (the least memory for large ones), with a program that only
/// names their ranks and holds the network.
enum Loaded {
    /// A program, with the line of every operation when it was read from
    /// a file.
    Program(Program, Option<scenario::OpLines>),
    Goal(Program, Graph),
}

fn load(name: &str, seed: Option<u64>) -> Result<Loaded, String> {
    if let Some(p) = builtin::program(name, seed) {
        return Ok(Loaded::Program(p, None));
    }
    let path = Path::new(name);
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !matches!(extension, "toml" | "goal") {
        let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
        return Err(format!(
            "{name}: not a built-in scenario ({}, random-N) nor a .toml or .goal file",
            names.join(", ")
        ));
    }
    if extension == "goal" {
        // Read in blocks: large schedules never whole in memory.
        let graph = goal::load_file_graph(name, path)?;
        let header = goal::header(name, graph.ranks(), Network::LogGops(LogGops::default()));
        return Ok(Loaded::Goal(header, graph));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    scenario::parse_with_lines(name, &text)
        .map(|(p, lines)| Loaded::Program(p, Some(lines)))
        .map_err(|e| e.to_string())
}

/// `heisen monitor`: reads the table of `target` (a pid or a path) once,
/// or every `interval` seconds until the program ends.
fn watch(target: &str, interval: f64, once: bool) -> Result<String, String> {
    let pause = Duration::try_from_secs_f64(interval)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("--interval {interval}: expected a positive number of seconds"))?;
    let path = table_path(target)?;
    let table = mapped::Mapped::open(&path)?;
    let mut reader = monitor::Monitor::new();
    let tty = std::io::stdout().is_terminal();
    loop {
        let live = match reader.read(table.words()) {
            Ok(live) => live,
            // The program is setting its table up: look again shortly.
            Err(heisen_core::monitor::TableError::NotReady) if !once => {
                std::thread::sleep(pause);
                continue;
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let mut text = monitor::render(&live);
        let running = Path::new(&format!("/proc/{}", live.pid)).exists();
        if !running {
            text += &format!("(pid {} is not running: its last samples)\n", live.pid);
        }
        if once || !running {
            return Ok(text);
        }
        let clear = if tty { "\x1b[H\x1b[2J" } else { "\n" };
        let mut out = std::io::stdout().lock();
        if out
            .write_all(format!("{clear}{text}").as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return Ok(String::new()); // the reader went away (`| head`)
        }
        drop(out);
        std::thread::sleep(pause);
    }
}

/// The table of `target`: a pid's `/dev/shm/heisen.<pid>.monitor`, or a path.
fn table_path(target: &str) -> Result<PathBuf, String> {
    if let Ok(pid) = target.parse::<u32>() {
        use heisen_core::monitor::{DIRECTORY, FILE_PREFIX, FILE_SUFFIX};
        let path = Path::new(DIRECTORY).join(format!("{FILE_PREFIX}{pid}{FILE_SUFFIX}"));
        if !path.exists() {
            return Err(format!(
                "no monitor table for pid {pid} ({} does not exist): is the program running with HEISEN_MONITOR=1?",
                path.display()
            ));
        }
        return Ok(path);
    }
    Ok(PathBuf::from(target))
}
