//! The GOAL path end to end, in two halves (issue 9): the reader
//! ([`heisen_sim::goal::load_file_graph`], bytes of GOAL text per second,
//! the file in the page cache) and the graph executor
//! ([`heisen_sim::engine::run_graph`], simulated events per second) on
//! LogGOPSim's dissemination schedule of 16,384 ranks (18 MB of text,
//! 0.7 million events). Goals: the reader at 250 MB/s or more; the loop at
//! 5 million events per second or more.

use core::hint::black_box;
use core::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use heisen_sim::builtin::dissemination_goal;
use heisen_sim::engine::run_graph;
use heisen_sim::goal;
use heisen_sim::transfer::{LogGops, Network};

const RANKS: u32 = 16_384;

fn goal_dissemination(c: &mut Criterion) {
    let text = dissemination_goal(RANKS);
    let path = std::env::temp_dir().join(format!("heisen-bench-{}.goal", std::process::id()));
    if std::fs::write(&path, &text).is_err() {
        return;
    }
    let mut group = c.benchmark_group(format!("goal dissemination {RANKS}"));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Bytes(text.len() as u64));
    drop(text);
    group.bench_function("read", |b| {
        b.iter(|| {
            goal::load_file_graph("dissemination.goal", black_box(&path)).map(|g| g.operations())
        })
    });
    let graph = goal::load_file_graph("dissemination.goal", &path);
    let _ = std::fs::remove_file(&path);
    let Ok(graph) = graph else {
        return;
    };
    let network = Network::LogGops(LogGops::default());
    let events = run_graph(&graph, network).map_or(0, |r| r.events);
    group.throughput(Throughput::Elements(events));
    group.bench_function("run", |b| {
        b.iter(|| run_graph(black_box(&graph), network).map(|r| r.events))
    });
    group.finish();
}

criterion_group!(benches, goal_dissemination);
criterion_main!(benches);
