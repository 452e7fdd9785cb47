//! The live monitor's cost on the process runtime's hot path (R10): a
//! region enter + exit and a release through `heisen-shmem`, clock reads
//! and all. The runtime is one per process and reads `HEISEN_MONITOR` once,
//! so run the bench twice and compare:
//!
//! ```text
//! cargo bench -p heisen-benches --bench monitor -- --noplot
//! HEISEN_MONITOR=1 cargo bench -p heisen-benches --bench monitor -- --noplot
//! ```
//!
//! - `enter_exit`: one pair of a selected region (with the monitor on, a
//!   pair publishes once a millisecond of its measured time has passed;
//!   otherwise it compares one clock value).
//! - `release`: one generic release (with the monitor on, every release
//!   publishes).

use core::hint::black_box;
use core::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use heisen_shmem::{Config, Region, runtime, with_current};

fn monitor(c: &mut Criterion) {
    // The report at exit goes to the temporary directory, not the sources.
    let config = Config {
        output: std::env::temp_dir(),
        ..Config::from_env()
    };
    let rt = heisen_shmem::runtime::init_with(config).unwrap_or_else(|e| e.0);
    let on = runtime().monitor().is_some();
    let mut group = c.benchmark_group(if on { "monitor on" } else { "monitor off" });
    let region = Region::new("bench");
    group.bench_function("enter_exit", |b| {
        b.iter(|| {
            let guard = region.enter();
            black_box(&guard);
        });
    });
    let release = rt.builtin().release;
    group.bench_function("release", |b| {
        b.iter(|| with_current(|s| black_box(s.release(release))));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = monitor
}
criterion_main!(benches);
