//! The `heisen` command line: simulate a program with and without
//! measurement cost and show how close each compensation comes to the truth.

use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use heisen_sim::builtin::{BUILTINS, find};
use heisen_sim::compare::compare;
use heisen_sim::engine::{RunOptions, run};
use heisen_sim::program::Program;
use heisen_sim::transfer::{LogGops, Network};
use heisen_sim::{goal, scenario};

const EXAMPLES: &str = "\
Examples:
  heisen simulate master-worker
      Run the built-in master/worker of seed 000 §5: the truth, the
      measured run, and the four estimates of every location's end.
  heisen scenarios
      List the built-in scenarios.
  heisen simulate backend-sim/scenarios/master-worker.toml
      Run a TOML scenario (format: docs/scenario.md).
  heisen simulate dissemination_16.goal
      Run a LogGOPSim GOAL schedule (e.g. from schedgen) with LogGOPSim's
      default parameters and print every rank's end time.
  heisen simulate dissemination_16.goal -L 5000 -o 1000
      The same with other LogGOPS parameters (ns; -G and -O per byte).";

/// heisen: measure parallel programs as if the measurement were not there.
///
/// The simulator runs a program twice, without instrumentation cost (the
/// truth) and with it (the measured run, with heisen's kernel online), and
/// shows, per location, how far no compensation, local-only compensation
/// and heisen's two parallel forms (delay-only R4, timestamped R5) are from
/// the truth.
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
        /// Seed of the compute-time distributions (overrides the scenario's).
        #[arg(long)]
        seed: Option<u64>,
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli.command) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("heisen: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn execute(command: Command) -> Result<String, String> {
    match command {
        Command::Scenarios => {
            let width = BUILTINS.iter().map(|b| b.name.len()).max().unwrap_or(0);
            Ok(BUILTINS
                .iter()
                .map(|b| format!("{:<width$}  {}\n", b.name, b.summary))
                .collect())
        }
        Command::Simulate {
            scenario,
            seed,
            latency,
            overhead,
            gap,
            gap_per_byte,
            overhead_per_byte,
            eager_limit,
        } => {
            let is_goal = scenario.ends_with(".goal");
            let mut program = load(&scenario)?;
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
            if is_goal {
                // A GOAL schedule has no instrumentation: print its times
                // the way LogGOPSim does.
                let r = run(&program, RunOptions::TIMES).map_err(|e| format!("{scenario}: {e}"))?;
                let mut out = format!("{} ranks, {} events\n", r.ends.len(), r.events);
                for (i, t) in r.ends.iter().enumerate() {
                    out += &format!("Host {i}: {t}\n");
                }
                return Ok(out);
            }
            let c = compare(&program).map_err(|e| format!("{scenario}: {e}"))?;
            Ok(c.table())
        }
    }
}

fn load(name: &str) -> Result<Program, String> {
    if let Some(b) = find(name) {
        return Ok((b.build)());
    }
    let path = Path::new(name);
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !matches!(extension, "toml" | "goal") {
        let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
        return Err(format!(
            "{name}: not a built-in scenario ({}) nor a .toml or .goal file",
            names.join(", ")
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    match extension {
        "toml" => scenario::parse(name, &text).map_err(|e| e.to_string()),
        _ => goal::parse(name, &text)
            .and_then(|s| s.to_program(name, Network::LogGops(LogGops::default())))
            .map_err(|e| e.to_string()),
    }
}
