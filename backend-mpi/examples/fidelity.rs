//! The real-run fidelity measurement of the README (seed 000 §5, Table
//! 1): builds `examples/montecarlo.c` uninstrumented and instrumented
//! (heisen's C region API around the tiny function), and runs, in turn
//! and in a rotating order:
//!
//! - the uninstrumented program (its own elapsed time per rank);
//! - the instrumented one under the interposer, timestamped form (R5):
//!   its own elapsed time is the uncompensated one; from its reports,
//!   the compensated time of the region `run` (parallel compensation)
//!   and the local-only one (the measured time minus the location's own
//!   charged overhead, R1 only);
//! - the instrumented one with `HEISEN_FORM=delay-only` (R4).
//!
//! It prints the medians per role (master, workers) with their error
//! against the uninstrumented run, and the load average seen.
//!
//! ```text
//! cargo build --release -p heisen-ffi -p heisen-mpi
//! cargo run --release -p heisen-mpi --example fidelity -- [runs] [ranks] [packets] [points]
//! ```
//!
//! A measurement, not a test: `tests/collectives.rs` checks what the
//! interposer reports, never its times.

#[path = "runner/mod.rs"]
mod runner;

use std::path::Path;

use serde_json::Value;

use runner::{library, load, load_range, median, mpicc, mpiexec, work_dir};

/// Each rank's own figure `what` (`time`: elapsed, `cpu`: process CPU
/// time), from the program's `<what> <rank> <role> <ns>` lines.
fn own_times(stdout: &str, what: &str, ranks: usize) -> Vec<f64> {
    let mut t = vec![f64::NAN; ranks];
    for line in stdout.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [w, r, _, ns] = f[..]
            && w == what
            && let (Ok(r), Ok(ns)) = (r.parse::<usize>(), ns.parse::<f64>())
            && r < ranks
        {
            t[r] = ns;
        }
    }
    t
}

/// Per rank `(measured, compensated)` of the region `run` and the
/// location's own charged overhead (R1).
fn report_times(dir: &Path, ranks: usize) -> Vec<(f64, f64, f64)> {
    (0..ranks)
        .map(|r| {
            let path = dir.join(format!("heisen.rank{r}.json"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let report: Value = serde_json::from_str(&text).expect("a report");
            let run_id = report["regions"]
                .as_array()
                .and_then(|rs| rs.iter().find(|x| x["name"] == "run"))
                .and_then(|x| x["id"].as_u64())
                .expect("a region `run`");
            let location = &report["locations"][0];
            let run = location["regions"]
                .as_array()
                .and_then(|rs| rs.iter().find(|x| x["region"].as_u64() == Some(run_id)))
                .expect("the record of `run`");
            let n = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
            // R1 alone, what this location charged itself, is seed 000's
            // "local compensation"; the actions outside `run` (one
            // barrier, one gather) cost microseconds.
            (
                n(&run["measured_inclusive"]),
                n(&run["inclusive"]),
                n(&location["overhead"]),
            )
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let runs: usize = arg(1, "5").parse().expect("runs");
    let ranks: u32 = arg(2, "2").parse().expect("ranks");
    let program_args = vec![arg(3, "200"), arg(4, "20000")];
    let interposer = library("heisen_mpi", "heisen-mpi");
    let heisen = library("heisen", "heisen-ffi");
    let dir = work_dir("mpi-fidelity");
    let plain = dir.join("plain");
    let instrumented = dir.join("instrumented");
    mpicc("montecarlo.c", &plain, &[]);
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ffi/include");
    let libdir = heisen.parent().expect("a directory").display().to_string();
    mpicc(
        "montecarlo.c",
        &instrumented,
        &[
            "-DHEISEN".into(),
            format!("-I{}", include.display()),
            format!("-L{libdir}"),
            "-lheisen".into(),
            format!("-Wl,-rpath,{libdir}"),
        ],
    );

    let n = ranks as usize;
    // [quantity][rank] samples, see `Q`
    let mut samples = vec![vec![Vec::new(); n]; Q::COUNT];
    let mut loads = Vec::new();
    for run in 0..runs {
        for step in 0..3 {
            loads.push(load());
            let form = (run + step) % 3;
            if form == 0 {
                let out = mpiexec(&plain, &program_args, ranks, None, &[]);
                let (own, cpu) = (own_times(&out, "time", n), own_times(&out, "cpu", n));
                for (r, (t, c)) in own.into_iter().zip(cpu).enumerate() {
                    samples[Q::Plain as usize][r].push(t);
                    samples[Q::PlainCpu as usize][r].push(c);
                }
                continue;
            }
            let reports = dir.join(format!("run{run}-{form}"));
            std::fs::create_dir_all(&reports).expect("report directory");
            let mut env = vec![("HEISEN_OUTPUT", reports.display().to_string())];
            if form == 2 {
                env.push(("HEISEN_FORM", "delay-only".into()));
            }
            let out = mpiexec(&instrumented, &program_args, ranks, Some(&interposer), &env);
            let (own, cpu) = (own_times(&out, "time", n), own_times(&out, "cpu", n));
            for (r, (measured, compensated, overhead)) in
                report_times(&reports, n).into_iter().enumerate()
            {
                // what compensation removed from `run`, taken off the CPU time too
                let removed = measured - compensated;
                let mut push = |q: Q, v: f64| samples[q as usize][r].push(v);
                if form == 1 {
                    push(Q::Instrumented, own[r]);
                    push(Q::Timestamped, compensated);
                    push(Q::LocalOnly, measured - overhead);
                    push(Q::InstrumentedCpu, cpu[r]);
                    push(Q::TimestampedCpu, cpu[r] - removed);
                    push(Q::LocalOnlyCpu, cpu[r] - overhead);
                } else {
                    push(Q::DelayOnly, compensated);
                    push(Q::DelayOnlyCpu, cpu[r] - removed);
                }
            }
        }
    }
    loads.push(load());
    println!(
        "montecarlo.c on {ranks} ranks, {} packets of {} points, medians of {runs} rotating runs, ms \
         (error against uninstrumented); load {}",
        program_args[0],
        program_args[1],
        load_range(&loads)
    );
    let roles: [(&str, Vec<usize>); 2] = [("master", vec![0]), ("workers", (1..n).collect())];
    for (title, columns) in [
        (
            "elapsed time",
            [
                Q::Plain,
                Q::Instrumented,
                Q::LocalOnly,
                Q::Timestamped,
                Q::DelayOnly,
            ],
        ),
        (
            "process CPU time (what compensation removed from `run`, removed from it too)",
            [
                Q::PlainCpu,
                Q::InstrumentedCpu,
                Q::LocalOnlyCpu,
                Q::TimestampedCpu,
                Q::DelayOnlyCpu,
            ],
        ),
    ] {
        println!("{title}:");
        println!(
            "{:<8} {:>14} {:>20} {:>20} {:>20} {:>20}",
            "role",
            "uninstrumented",
            "no compensation",
            "local-only",
            "parallel (R5)",
            "delay-only (R4)"
        );
        for (role, members) in &roles {
            let m = |q: Q| -> f64 {
                let all: Vec<f64> = members
                    .iter()
                    .flat_map(|&r| samples[q as usize][r].clone())
                    .collect();
                median(&all) / 1e6
            };
            let base = m(columns[0]);
            let err = |v: f64| format!("{v:.1} ({:+.1} %)", 100.0 * (v - base) / base);
            println!(
                "{:<8} {:>14.1} {:>20} {:>20} {:>20} {:>20}",
                role,
                base,
                err(m(columns[1])),
                err(m(columns[2])),
                err(m(columns[3])),
                err(m(columns[4]))
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The quantities sampled per rank and run.
#[derive(Clone, Copy)]
enum Q {
    Plain,
    PlainCpu,
    Instrumented,
    Timestamped,
    LocalOnly,
    InstrumentedCpu,
    TimestampedCpu,
    LocalOnlyCpu,
    DelayOnly,
    DelayOnlyCpu,
}

impl Q {
    const COUNT: usize = 10;
}
