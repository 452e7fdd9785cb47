//! Speed of the simulator's engine in simulated events per second (issue
//! 3): a 1,024-location master/worker (the measured run with the kernels
//! online in both forms, and times only) and LogGOPSim's dissemination
//! schedule on 65,536 ranks (3.2 million events, times only, as LogGOPSim
//! runs it). Programs are compiled once, outside the timing
//! ([`heisen_sim::engine::compile`]). The goal is 10 million events per
//! second on one core. Peak
//! memory is not measured here: `cargo run --release -p heisen-sim
//! --example memory -- dissemination` prints it.

use core::hint::black_box;
use core::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use heisen_sim::builtin::{dissemination_goal, master_worker};
use heisen_sim::engine::{Compiled, RunOptions, compile, run_compiled};
use heisen_sim::goal;
use heisen_sim::transfer::{LogGops, Network};

fn events(program: &Compiled, options: RunOptions) -> u64 {
    run_compiled(program, options).map_or(0, |r| r.events)
}

fn master_worker_1024(c: &mut Criterion) {
    // 1 master and 1,023 workers, 4 packets of 50 instrumented calls each.
    let Ok(program) = compile(master_worker(1023, 4, 50)) else {
        return;
    };
    let mut group = c.benchmark_group("master-worker 1024");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for (name, options) in [
        ("measured, kernels", RunOptions::MEASURED),
        ("times only", RunOptions::TIMES),
    ] {
        group.throughput(Throughput::Elements(events(&program, options)));
        group.bench_function(name, |b| {
            b.iter(|| run_compiled(black_box(&program), options).map(|r| r.events))
        });
    }
    group.finish();
}

fn dissemination_65536(c: &mut Criterion) {
    let text = dissemination_goal(65_536);
    let program = goal::load_compiled(
        "dissemination.goal",
        &text,
        Network::LogGops(LogGops::default()),
    );
    drop(text);
    let Ok(program) = program else {
        return;
    };
    let mut group = c.benchmark_group("dissemination 65536");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(15));
    group.throughput(Throughput::Elements(events(&program, RunOptions::TIMES)));
    group.bench_function("times only", |b| {
        b.iter(|| run_compiled(black_box(&program), RunOptions::TIMES).map(|r| r.events))
    });
    group.finish();
}

criterion_group!(benches, master_worker_1024, dissemination_65536);
criterion_main!(benches);
