//! Wall-time benches of heisen-shmem's wrappers beside the std operations
//! they wrap (each group holds both, measured one after the other):
//!
//! - `lock_unlock`: an uncontended `lock` + guard drop, heisen's `Mutex`
//!   (acquire merge, release record, two clock reads) vs std's.
//! - `barrier_episode`: one episode of a 2-thread barrier, the partner
//!   thread looping on the same barrier; heisen's `Barrier` (entry record,
//!   one reduction, collective merge, R6) vs std's.
//! - `queue_round_trip`: a push and a pop on one thread; heisen's
//!   `WorkQueue` (the item carries its enqueue's record, Fig. 11) vs a
//!   std `Mutex<VecDeque>` with a `Condvar`.
//! - `region_enter_exit`: an empty region entered and exited, including
//!   both clock reads, through `in_region` (name cache) and a `Region`
//!   handle; `clock_read` alone for reference.
//!
//! `cargo bench -p heisen-benches --bench shmem -- --noplot`

use core::hint::black_box;
use core::time::Duration;
use std::sync::Arc;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};

fn lock_unlock(c: &mut Criterion) {
    // The report a bench run writes at exit goes to the temporary directory.
    let _ = heisen_shmem::runtime::init_with(heisen_shmem::Config {
        output: std::env::temp_dir(),
        ..heisen_shmem::Config::from_env()
    });
    let mut g = c.benchmark_group("lock_unlock");
    let ours = heisen_shmem::Mutex::new(0u64);
    let std = std::sync::Mutex::new(0u64);
    g.bench_function("heisen", |b| b.iter(|| *ours.lock().expect("lock") += 1));
    g.bench_function("std", |b| b.iter(|| *std.lock().expect("lock") += 1));
    g.finish();
}

/// Times `iters` episodes of a 2-thread barrier whose other participant
/// runs `iters` episodes too.
fn episodes<B: Send + Sync + 'static>(iters: u64, barrier: Arc<B>, wait: fn(&B)) -> Duration {
    let partner = {
        let barrier = barrier.clone();
        std::thread::spawn(move || {
            for _ in 0..iters {
                wait(&barrier);
            }
        })
    };
    wait(&barrier); // both started
    let start = Instant::now();
    for _ in 1..iters {
        wait(&barrier);
    }
    let elapsed = start.elapsed();
    partner.join().expect("partner");
    elapsed
}

fn barrier_episode(c: &mut Criterion) {
    let mut g = c.benchmark_group("barrier_episode");
    g.bench_function("heisen", |b| {
        b.iter_custom(|iters| {
            episodes(iters.max(2), Arc::new(heisen_shmem::Barrier::new(2)), |b| {
                black_box(b.wait());
            })
        })
    });
    g.bench_function("std", |b| {
        b.iter_custom(|iters| {
            episodes(iters.max(2), Arc::new(std::sync::Barrier::new(2)), |b| {
                black_box(b.wait());
            })
        })
    });
    g.finish();
}

fn queue_round_trip(c: &mut Criterion) {
    let mut g = c.benchmark_group("queue_round_trip");
    let ours = heisen_shmem::WorkQueue::new();
    g.bench_function("heisen", |b| {
        b.iter(|| {
            ours.push(1u64);
            black_box(ours.pop())
        })
    });
    let std = (
        std::sync::Mutex::new(std::collections::VecDeque::new()),
        std::sync::Condvar::new(),
    );
    g.bench_function("std", |b| {
        b.iter(|| {
            std.0.lock().expect("queue").push_back(1u64);
            std.1.notify_one();
            black_box(std.0.lock().expect("queue").pop_front())
        })
    });
    g.finish();
}

fn region_enter_exit(c: &mut Criterion) {
    let mut g = c.benchmark_group("region_enter_exit");
    g.bench_function("in_region", |b| {
        b.iter(|| heisen_shmem::in_region("bench", || black_box(1)))
    });
    let region = heisen_shmem::Region::new("bench handle");
    g.bench_function("handle", |b| b.iter(|| region.run(|| black_box(1))));
    let rt = heisen_shmem::runtime();
    g.bench_function("clock_read", |b| b.iter(|| black_box(rt.now())));
    g.finish();
}

criterion_group! {
    name = shmem;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = lock_unlock, barrier_episode, queue_round_trip, region_enter_exit
}
criterion_main!(shmem);
