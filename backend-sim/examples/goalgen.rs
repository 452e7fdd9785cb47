//! Writes generated GOAL schedules ([`heisen_sim::goalgen`]) to files:
//! `cargo run -p heisen-sim --example goalgen -- FROM TO DIR` writes seeds
//! FROM..TO (TO excluded) as `DIR/seed-<seed>.goal` and prints one line
//! per seed: the seed, the generator version, ranks, operations, sends,
//! the text's fingerprint and the features it uses. LogGOPSim completes
//! every schedule with `Events` = operations + sends.

use std::path::PathBuf;
use std::process::ExitCode;

use heisen_sim::goalgen;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [from, to, dir] => from
            .parse::<u64>()
            .ok()
            .zip(to.parse::<u64>().ok())
            .map(|(f, t)| (f, t, PathBuf::from(dir))),
        _ => None,
    };
    let Some((from, to, dir)) = parsed else {
        eprintln!("usage: goalgen FROM TO DIR   (seeds FROM..TO, written as DIR/seed-<seed>.goal)");
        return ExitCode::FAILURE;
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("{}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    for seed in from..to {
        let g = goalgen::generate(seed);
        let path = dir.join(format!("seed-{seed}.goal"));
        if let Err(e) = std::fs::write(&path, &g.text) {
            eprintln!("{}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        let features: Vec<&str> = g
            .features
            .list()
            .iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| *name)
            .collect();
        println!(
            "{seed} v{} ranks={} ops={} sends={} fnv={:016x} {}",
            goalgen::VERSION,
            g.ranks,
            g.operations,
            g.sends,
            goalgen::fingerprint(&g.text),
            features.join(",")
        );
    }
    ExitCode::SUCCESS
}
