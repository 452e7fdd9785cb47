//! Rough engine throughput: simulated events per second for a 1,024-location
//! master/worker (truth and measured run, kernels online) and a 65,536-rank
//! dissemination schedule (times only). Run with
//! `cargo run --release -p heisen-sim --example throughput`; the criterion
//! benches in `benches/` are the reference figures.

use std::time::Instant;

use heisen_sim::builtin::master_worker;
use heisen_sim::engine::{RunOptions, run};
use heisen_sim::program::{Dest, Kind, LocationSpec, Op, Program, Source};
use heisen_sim::transfer::Network;

fn dissemination(p: u32) -> Program {
    let mut locations = Vec::with_capacity(p as usize);
    for r in 0..p {
        let mut body = Vec::new();
        let mut dist = 1;
        let mut round = 0;
        while dist < p {
            if round > 0 {
                body.push(Op::Wait { request: round - 1 });
            }
            body.push(Op::Isend {
                to: Dest::Location((r + dist) % p),
                bytes: 1,
                tag: 0,
                request: 1000 + round,
            });
            body.push(Op::Irecv {
                from: Source::Location((r + p - dist) % p),
                bytes: 1,
                tag: Some(0),
                request: round,
            });
            dist *= 2;
            round += 1;
        }
        body.push(Op::WaitAll);
        locations.push(LocationSpec {
            name: format!("rank {r}"),
            kind: Kind::Rank,
            spawned: false,
            body,
        });
    }
    Program {
        name: "dissemination".into(),
        regions: Vec::new(),
        locations,
        seed: 0,
        network: Network::default(),
        calibration: heisen_core::Calibration::ZERO,
    }
}

fn measure(name: &str, program: &Program, options: RunOptions) {
    let start = Instant::now();
    match run(program, options) {
        Ok(r) => {
            let s = start.elapsed().as_secs_f64();
            let end = r.ends.iter().max().copied().unwrap_or(0);
            println!(
                "{name}: {} events in {s:.3} s = {:.2} M events/s (end {end} ns)",
                r.events,
                r.events as f64 / s / 1e6
            );
        }
        Err(e) => println!("{name}: {e}"),
    }
}

fn main() {
    let mw = master_worker(1023, 4, 50);
    measure("master-worker 1024, truth, kernels", &mw, RunOptions::TRUTH);
    measure(
        "master-worker 1024, measured, kernels",
        &mw,
        RunOptions::MEASURED,
    );
    measure("master-worker 1024, times only", &mw, RunOptions::TIMES);
    let d = dissemination(65536);
    measure("dissemination 65536, times only", &d, RunOptions::TIMES);
}
