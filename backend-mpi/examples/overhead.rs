//! The interposer's overhead table of the README: `examples/pingpong.c`
//! (8 B to 1 MiB round trips between two ranks, then an 8-byte
//! `MPI_Allreduce`) run alternately without and with the interposer;
//! medians over runs of each run's median, the ratio with/without, and
//! the added cost of one 8-byte `MPI_Allreduce` at 2 and 4 ranks (4 ranks
//! oversubscribe a 2-core machine: read that figure with its load).
//!
//! ```text
//! cargo build --release -p heisen-mpi
//! cargo run --release -p heisen-mpi --example overhead -- [runs] [rounds]
//! ```

#[path = "runner/mod.rs"]
mod runner;

use std::collections::BTreeMap;

use runner::{library, load, load_range, median, mpicc, mpiexec, work_dir};

/// Per `(what, argument)`, each run's `(median, minimum)` ns.
type Runs = BTreeMap<(String, u64), Vec<(f64, f64)>>;

/// `(what, argument) -> (median, minimum) ns` from the program's lines.
fn parse(stdout: &str) -> BTreeMap<(String, u64), (f64, f64)> {
    let mut out = BTreeMap::new();
    for line in stdout.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [what, arg, med, min] = f[..]
            && let (Ok(arg), Ok(med), Ok(min)) =
                (arg.parse::<u64>(), med.parse::<f64>(), min.parse::<f64>())
        {
            out.insert((what.to_owned(), arg), (med, min));
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(7);
    let rounds = args.get(2).cloned().unwrap_or_else(|| "21".into());
    let interposer = library("heisen_mpi", "heisen-mpi");
    let dir = work_dir("mpi-overhead");
    let exe = dir.join("pingpong");
    mpicc("pingpong.c", &exe, &[]);
    let reports = dir.join("reports");
    std::fs::create_dir_all(&reports).expect("report directory");
    let env = [("HEISEN_OUTPUT", reports.display().to_string())];

    for ranks in [2u32, 4] {
        // [with interposer] -> key -> per-run medians
        let mut samples: [Runs; 2] = Default::default();
        let mut loads = Vec::new();
        for run in 0..runs {
            for step in 0..2 {
                let with = (run + step) % 2 == 1;
                loads.push(load());
                // on 4 ranks (oversubscribed here: milliseconds per
                // call) the allreduce alone, 50 calls a round
                let (largest, calls) = if ranks == 2 {
                    ("1048576", "0")
                } else {
                    ("0", "50")
                };
                let mut program_args = vec![rounds.clone(), largest.to_owned()];
                if calls != "0" {
                    program_args.push(calls.to_owned());
                }
                let out = mpiexec(
                    &exe,
                    &program_args,
                    ranks,
                    with.then_some(interposer.as_path()),
                    &env,
                );
                for (k, v) in parse(&out) {
                    samples[usize::from(with)].entry(k).or_default().push(v);
                }
            }
        }
        loads.push(load());
        println!(
            "pingpong.c on {ranks} ranks, medians of {runs} alternating runs of {rounds} rounds; load {}",
            load_range(&loads)
        );
        println!(
            "{:<10} {:>10} {:>14} {:>14} {:>8} {:>12}",
            "", "size", "plain ns", "heisen ns", "ratio", "min ratio"
        );
        // medians over runs of each run's median, and the least minimum
        let med = |v: &[(f64, f64)]| median(&v.iter().map(|x| x.0).collect::<Vec<_>>());
        let least = |v: &[(f64, f64)]| v.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
        for (key, plain_runs) in &samples[0] {
            let plain = med(plain_runs);
            let with_runs = samples[1].get(key).cloned().unwrap_or_default();
            let with = med(&with_runs);
            println!(
                "{:<10} {:>10} {:>14.1} {:>14.1} {:>8.3} {:>12.3}",
                key.0,
                if key.0 == "allreduce" {
                    format!("{} ranks", key.1)
                } else {
                    format!("{} B", key.1)
                },
                plain,
                with,
                with / plain,
                least(&with_runs) / least(plain_runs)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
