//! A small threaded program measured by the process runtime, used to make
//! the report files the CLI's tests read (`backend-sim/tests/data/`):
//!
//! ```text
//! export HEISEN_OUTPUT=backend-sim/tests/data HEISEN_REGIONS=solve,exchange,io
//! cargo run --release -p heisen-shmem --example report_sample -- 0
//! cargo run --release -p heisen-shmem --example report_sample -- 1
//! ```
//!
//! writes `shmem-rank0.json` and `shmem-rank1.json`: each process stands
//! for one rank of a run (its location ids start at `rank << 12`, as the
//! MPI backend numbers them). The main thread works in `solve`, spawns two
//! threads that work in `exchange` (one also in `io`) and joins them; the
//! spawn and join carry the critical path across threads (R8). Each rank
//! also has a region of its own, `rank<r>_setup`, so the two files give
//! one region id two names.

use heisen_core::Dependency;

/// Work the optimiser cannot remove.
fn spin(n: u64) -> u64 {
    (0..n).fold(0u64, |a, i| core::hint::black_box(a.wrapping_add(i * i)))
}

fn main() {
    let rank: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0);
    let rt = heisen_shmem::runtime();
    rt.set_location_ids(heisen_shmem::ids::LocationIds::rank(rank, rank + 1));
    rt.set_report_name(&format!("shmem-rank{rank}.json"));
    let setup = heisen_shmem::Region::new(&format!("rank{rank}_setup"));
    setup.run(|| spin(10_000));
    let _solve = heisen_shmem::region("solve");
    spin(200_000);
    let workers: Vec<_> = (0..2u64)
        .map(|i| {
            let parent = heisen_shmem::with_current(|s| s.release(rt.builtin().release))
                .expect("the main thread is measured");
            std::thread::spawn(move || {
                heisen_shmem::thread::start_current(&parent);
                for _ in 0..20 {
                    heisen_shmem::in_region("exchange", || spin(20_000 * (i + 1)));
                    if i == 1 {
                        heisen_shmem::in_region("io", || spin(5_000));
                    }
                }
                heisen_shmem::thread::finish_current()
            })
        })
        .collect();
    spin(100_000);
    for worker in workers {
        let begin = heisen_shmem::with_current(|s| s.now()).expect("measured");
        let end = worker.join().expect("worker");
        if let Some(end) = end {
            heisen_shmem::with_current(|s| {
                s.merge(begin, &[Dependency::immediate(&end)], rt.builtin().merge)
            });
        }
    }
    spin(50_000);
}
