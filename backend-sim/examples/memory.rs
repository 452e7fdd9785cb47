//! Peak memory and speed of one engine workload, for the bench notes:
//! `cargo run --release -p heisen-sim --example memory -- WORKLOAD` with
//! WORKLOAD one of `dissemination` (65,536 ranks, times only),
//! `dissemination-graph` (the same schedule read as a graph and run by
//! the graph executor, as `heisen simulate` runs GOAL files),
//! `master-worker` (1,024 locations, measured run with kernels),
//! `master-worker-times` (the same, times only), `master-worker-long`
//! (four times the packets: memory must stay the same), and for
//! `dissemination` an optional rank count. Prints the events, the events per
//! second of the run and the peak resident set (VmHWM) of the process. The
//! dissemination schedule is written to a temporary file and compiled from
//! it line by line ([`goal::load_file_compiled`]); the others are compiled
//! ([`compile`]) before the run. With `HEISEN_RUN_PEAK` set, the peak is
//! reset after loading, so that it is the run's alone.

use std::time::Instant;

use heisen_sim::builtin::{master_worker, write_dissemination_goal};
use heisen_sim::engine::{Compiled, RunOptions, compile, run_compiled, run_graph};
use heisen_sim::goal;
use heisen_sim::transfer::{LogGops, Network};

fn compiled(program: heisen_sim::program::Program) -> Compiled {
    compile(program).expect("a valid program")
}

fn peak_kib() -> u64 {
    status_kib("VmHWM:")
}

fn rss_mib() -> u64 {
    status_kib("VmRSS:") / 1024
}

fn status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// CPU seconds this thread used (user + system), from /proc: unlike the
/// wall clock, it does not count time spent preempted on a busy machine.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // Fields after the command name's closing parenthesis; utime and stime
    // are fields 14 and 15 of the whole line, in clock ticks (100 per s).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (ticks(11) + ticks(12)) as f64 / 100.0
}

fn main() {
    let workload = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "dissemination".into());
    // Optional second argument: the dissemination's ranks (65,536).
    let ranks = std::env::args()
        .nth(2)
        .and_then(|r| r.parse().ok())
        .unwrap_or(65_536);
    let before = peak_kib();
    if workload == "dissemination-graph" {
        graph(ranks, before);
        return;
    }
    if let Some(pattern) = workload.strip_suffix("-direct") {
        direct(pattern, ranks);
        return;
    }
    let (program, options) = match workload.as_str() {
        "dissemination" => {
            // Written to a file and read back line by line, as LogGOPSim
            // reads its schedule: the text is never whole in memory.
            let path = dissemination_file(ranks);
            let compiled = goal::load_file_compiled(
                "dissemination.goal",
                &path,
                Network::LogGops(LogGops::default()),
            );
            let _ = std::fs::remove_file(&path);
            let compiled = compiled.expect("the schedule loads");
            eprintln!("program compiled: RSS {} MiB", rss_mib());
            (compiled, RunOptions::TIMES)
        }
        "master-worker" => (compiled(master_worker(1023, 4, 50)), RunOptions::MEASURED),
        "master-worker-times" => (compiled(master_worker(1023, 4, 50)), RunOptions::TIMES),
        // Four times the simulated time: memory must not grow.
        "master-worker-long" => (compiled(master_worker(1023, 16, 50)), RunOptions::MEASURED),
        other => {
            eprintln!("unknown workload {other}");
            std::process::exit(2);
        }
    };
    let loaded = peak_kib();
    if std::env::var_os("HEISEN_RUN_PEAK").is_some() {
        // Diagnostics: the peak of the run alone (resets VmHWM).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
    }
    let start = Instant::now();
    let cpu = cpu_seconds();
    let r = run_compiled(&program, options).expect("the run finishes");
    let s = start.elapsed().as_secs_f64();
    let c = cpu_seconds() - cpu;
    println!(
        "{workload}: {} events in {s:.3} s wall = {:.2} M events/s, {c:.2} s CPU = {:.2} M events/s; end {} ns; peak RSS {} MiB (before loading {} MiB, program loaded {} MiB)",
        r.events,
        r.events as f64 / s / 1e6,
        r.events as f64 / c / 1e6,
        r.ends.iter().max().copied().unwrap_or(0),
        peak_kib() / 1024,
        before / 1024,
        loaded / 1024
    );
}

/// The `ranks`-rank dissemination schedule, written to a temporary file.
fn dissemination_file(ranks: u32) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("heisen-{}.goal", std::process::id()));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("a temporary file"));
    write_dissemination_goal(ranks, &mut file).expect("the schedule is written");
    drop(file);
    path
}

/// The `dissemination-direct` and `binomial-direct` workloads: the graph
/// built directly by heisen (no GOAL text), then run as LogGOPSim runs it.
fn direct(pattern: &str, ranks: u32) {
    let start = Instant::now();
    let graph = match pattern {
        "dissemination" => heisen_sim::builtin::dissemination_graph(ranks),
        "binomial" => heisen_sim::builtin::binomial_bcast_graph(ranks, 8),
        other => {
            eprintln!("unknown workload {other}-direct");
            std::process::exit(2);
        }
    }
    .expect("the graph builds");
    let built = start.elapsed().as_secs_f64();
    let loaded = peak_kib();
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let r = run_graph(&graph, Network::LogGops(LogGops::default())).expect("the run finishes");
    let (s, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    println!(
        "{pattern}-direct {ranks}: built in {built:.3} s ({} operations, {} MiB); {} events in {s:.3} s wall, {cpu:.2} s CPU = {:.2} M events/s by CPU time; end {} ns; peak RSS {} MiB",
        graph.operations(),
        loaded / 1024,
        r.events,
        r.events as f64 / cpu.max(0.01) / 1e6,
        r.ends.iter().max().copied().unwrap_or(0),
        peak_kib() / 1024,
    );
}

/// The `dissemination-graph` workload: read as a graph, run as LogGOPSim.
fn graph(ranks: u32, before: u64) {
    let path = dissemination_file(ranks);
    let start = Instant::now();
    let graph = goal::load_file_graph("dissemination.goal", &path);
    let _ = std::fs::remove_file(&path);
    let graph = graph.expect("the schedule loads");
    let read = start.elapsed().as_secs_f64();
    let loaded = peak_kib();
    let start = Instant::now();
    let r = run_graph(&graph, Network::LogGops(LogGops::default())).expect("the run finishes");
    let s = start.elapsed().as_secs_f64();
    println!(
        "dissemination-graph: read in {read:.3} s; {} events in {s:.3} s = {:.2} M events/s; end {} ns; peak RSS {} MiB (before loading {} MiB, graph loaded {} MiB)",
        r.events,
        r.events as f64 / s / 1e6,
        r.ends.iter().max().copied().unwrap_or(0),
        peak_kib() / 1024,
        before / 1024,
        loaded / 1024
    );
}
