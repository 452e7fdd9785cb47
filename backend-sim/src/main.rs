//! The `heisen` command line: simulate a program with and without
//! measurement cost and show how close each compensation comes to the
//! truth, write the run as a report, a trace or a picture, and render any
//! report a heisen backend wrote.

mod mapped;

use core::time::Duration;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};

use heisen_sim::analysis;
use heisen_sim::builtin::{self, BUILTINS};
use heisen_sim::compare::{Comparison, compare_with};
use heisen_sim::engine::{Graph, RunOptions, RunResult, run_graph_with};
use heisen_sim::output::{json, monitor, report, svg, trace};
use heisen_sim::program::Program;
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
      rank's end time; LogGOPS parameters default to LogGOPSim's.";

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
    Simulate {
        /// A built-in name (see `heisen scenarios`), a `.toml` scenario or
        /// a `.goal` schedule.
        scenario: String,
        /// Seed of the compute-time distributions (overrides the
        /// scenario's); for `random`, the program's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Write the measured run's report (core report format, JSON).
        #[arg(long, value_name = "FILE")]
        json: Option<String>,
        /// Write the measured and approximated timelines as a Chrome
        /// trace-event JSON file (Perfetto, chrome://tracing).
        #[arg(long, value_name = "FILE")]
        trace: Option<String>,
        /// Draw the measured and approximated timelines as an SVG picture.
        #[arg(long, value_name = "FILE")]
        svg: Option<String>,
        /// LogGOPS latency L (ns).
        #[arg(short = 'L')]
        latency: Option<u64>,
        /// LogGOPS CPU overhead o per message (ns).
        #[arg(short = 'o')]
        overhead: Option<u64>,
        /// LogGOPS gap g between messages (ns).
        #[arg(short = 'g')]
        gap: Option<u64>,
        /// LogGOPS gap G per byte (ns).
        #[arg(short = 'G')]
        gap_per_byte: Option<u64>,
        /// LogGOPS CPU overhead O per byte (ns).
        #[arg(short = 'O')]
        overhead_per_byte: Option<u64>,
        /// LogGOPS eager limit S (bytes; larger messages use rendezvous).
        #[arg(short = 'S')]
        eager_limit: Option<u64>,
    },
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
    },
    /// Watch the critical path of a program running with HEISEN_MONITOR=1.
    ///
    /// Reads the program's live table (docs/monitor.md) without stopping
    /// it and shows the longest path over the latest sample of every
    /// thread, with each selected region's share and zeroed length (R10),
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

/// A run is "large" from this many locations on: progress goes to stderr.
const LARGE: usize = 256;

fn main() -> ExitCode {
    let cli = Cli::parse();
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
}

impl Outputs {
    fn timelines(&self) -> bool {
        self.trace.is_some() || self.svg.is_some()
    }

    fn write(&self, program: &Program, run: &RunResult, progress: &Progress) -> Result<(), String> {
        let files: [(&Option<String>, Writer); 3] = [
            (&self.json, json::report_json),
            (&self.trace, trace::chrome_trace),
            (&self.svg, svg::timelines_svg),
        ];
        for (file, make) in files {
            if let Some(file) = file {
                progress.say(&format!("writing {file}"));
                let text = make(program, run)?;
                std::fs::write(file, text).map_err(|e| format!("{file}: cannot write: {e}"))?;
            }
        }
        Ok(())
    }
}

/// Progress on stderr for large runs.
struct Progress {
    on: bool,
    start: Instant,
}

impl Progress {
    fn new(program: &Program) -> Self {
        Progress {
            on: program.locations.len() >= LARGE,
            start: Instant::now(),
        }
    }

    fn say(&self, what: &str) {
        if self.on {
            eprintln!(
                "heisen: [{:7.2} s] {what}",
                self.start.elapsed().as_secs_f64()
            );
        }
    }
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
        Command::Report { files } => {
            let mut reports = Vec::with_capacity(files.len());
            for file in files {
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| format!("{file}: cannot read: {e}"))?;
                let r = report::parse(&file, &text).map_err(|e| e.to_string())?;
                reports.push((file, r));
            }
            Ok(report::render_files(&reports))
        }
        Command::Simulate {
            scenario,
            seed,
            json,
            trace,
            svg,
            latency,
            overhead,
            gap,
            gap_per_byte,
            overhead_per_byte,
            eager_limit,
        } => {
            let outputs = Outputs { json, trace, svg };
            let mut loaded = load(&scenario, seed)?;
            let program = match &mut loaded {
                Loaded::Program(p) => p,
                Loaded::Goal(header, _) => header,
            };
            if let Some(seed) = seed {
                program.seed = seed;
            }
            let overrides = [
                latency,
                overhead,
                gap,
                gap_per_byte,
                overhead_per_byte,
                eager_limit,
            ];
            if overrides.iter().any(Option::is_some) {
                let Network::LogGops(mut p) = program.network else {
                    return Err(format!(
                        "{scenario} uses the contention-free model; -L -o -g -G -O -S set LogGOPS parameters"
                    ));
                };
                p.latency = latency.unwrap_or(p.latency);
                p.overhead = overhead.unwrap_or(p.overhead);
                p.gap = gap.unwrap_or(p.gap);
                p.gap_per_byte = gap_per_byte.unwrap_or(p.gap_per_byte);
                p.overhead_per_byte = overhead_per_byte.unwrap_or(p.overhead_per_byte);
                p.eager_limit = eager_limit.unwrap_or(p.eager_limit);
                program.network = Network::LogGops(p);
            }
            let progress = Progress::new(program);
            let program = match loaded {
                Loaded::Goal(header, graph) => {
                    return simulate_goal(&scenario, &header, &graph, &outputs, &progress);
                }
                Loaded::Program(p) => p,
            };
            progress.say(&format!(
                "{}: {} locations, truth and measured runs",
                program.name,
                program.locations.len()
            ));
            // Timelines need the measured run's trace; the critical-path
            // profile runs its own truth (with its activity graph), measured
            // run and one what-if re-simulation per region.
            let c: Comparison = compare_with(&program, outputs.timelines())
                .map_err(|e| format!("{scenario}: {e}"))?;
            progress.say(&format!(
                "compared: {} + {} events; critical-path profile",
                c.truth.events, c.measured.events
            ));
            let mut out = c.table();
            if !program.regions.is_empty() {
                let p = analysis::profile(&program).map_err(|e| format!("{scenario}: {e}"))?;
                out.push('\n');
                out.push_str(&p.to_string());
            }
            progress.say("done");
            outputs.write(&program, &c.measured, &progress)?;
            Ok(out)
        }
    }
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
) -> Result<String, String> {
    progress.say(&format!("{name}: {} ranks", graph.ranks()));
    // Kernels and a trace only when a file asks for them.
    let options = if outputs.json.is_some() || outputs.timelines() {
        RunOptions {
            trace: outputs.timelines(),
            ..RunOptions::TRUTH
        }
    } else {
        RunOptions::TIMES
    };
    let r = run_graph_with(graph, header.network, options).map_err(|e| format!("{name}: {e}"))?;
    progress.say(&format!("done: {} events", r.events));
    let mut out = format!("{} ranks, {} events\n", r.ends.len(), r.events);
    for (i, t) in r.ends.iter().enumerate() {
        out += &format!("Host {i}: {t}\n");
    }
    outputs.write(header, &r, progress)?;
    Ok(out)
}

/// A scenario as read: GOAL schedules become a dependency graph as they
/// are read (the least memory for large ones), with a program that only
/// names their ranks and holds the network.
enum Loaded {
    Program(Program),
    Goal(Program, Graph),
}

fn load(name: &str, seed: Option<u64>) -> Result<Loaded, String> {
    if let Some(p) = builtin::program(name, seed) {
        return Ok(Loaded::Program(p));
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
        // Read line by line: large schedules never whole in memory.
        let graph = goal::load_file_graph(name, path)?;
        let header = goal::header(name, graph.ranks(), Network::LogGops(LogGops::default()));
        return Ok(Loaded::Goal(header, graph));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    scenario::parse(name, &text)
        .map(Loaded::Program)
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
