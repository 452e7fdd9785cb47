//! The simulator and a real threaded run agree on the critical path
//! (seed 003 §4): the same program shape — two threads with imbalanced
//! regions, a lock and a barrier per phase — is built as a heisen-sim
//! program and run for real with heisen-shmem's wrappers, and the regions
//! come out in the same order by inclusive share of the critical path.
//!
//! The real run spins for the shape's durations, so its shares are those
//! of the simulation up to scheduling noise. The regions' shares are 4:1
//! and 2.5:1 apart, the thread that is not on the path has 20 ms of slack
//! per phase, and the real path's length (which transfer and preemption
//! stretch on a busy machine) is not used, only the order of the shares,
//! so a thread preempted for a time slice does not change the answer.

use core::time::Duration;
use std::time::Instant;

use heisen_core::{Calibration, Cost};
use heisen_sim::analysis::online_profile;
use heisen_sim::engine::{RunOptions, run};
use heisen_sim::program::{Op, ProgramBuilder};

/// Regions and their per-phase durations on the two threads (µs): long
/// enough that a preempted thread (several ms on a loaded machine) does
/// not reorder them.
const SOLVE: [u64; 2] = [20_000, 4_000];
const ASSEMBLE: u64 = 5_000; // thread 0 only
const IO: u64 = 1_000; // thread 1 only
const UPDATE: u64 = 2_000; // both, under the lock
const PHASES: u64 = 3;

/// The regions ordered by decreasing inclusive share of the critical path.
fn ranking(shares: &[(String, i64)]) -> Vec<String> {
    let mut ranked: Vec<&(String, i64)> = shares.iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.into_iter().map(|(n, _)| n.clone()).collect()
}

fn simulated() -> Vec<(String, i64)> {
    let us = |v: u64| v * 1_000;
    let mut b = ProgramBuilder::new("sim vs shmem");
    let solve = b.region("solve");
    let assemble = b.region("assemble");
    let update = b.region("update");
    let io = b.region("io");
    b.calibration(Calibration {
        enter: Cost {
            whole: 40,
            inside: 15,
        },
        exit: Cost {
            whole: 40,
            inside: 15,
        },
        send: 30,
        merge: 40,
        sample: 0,
    });
    let threads = [b.thread("thread 0"), b.thread("thread 1")];
    for (i, t) in threads.into_iter().enumerate() {
        b.on(t).repeat(i as u32, PHASES, |o| {
            o.region(solve, |o| {
                o.compute(us(SOLVE[i]));
            });
            if i == 0 {
                o.region(assemble, |o| {
                    o.compute(us(ASSEMBLE));
                });
            } else {
                o.region(io, |o| {
                    o.compute(us(IO));
                });
            }
            o.op(Op::Lock { lock: 0 });
            o.region(update, |o| {
                o.compute(us(UPDATE));
            });
            o.op(Op::Unlock { lock: 0 });
            o.op(Op::ThreadBarrier {
                barrier: 0,
                count: 2,
            });
        });
    }
    let program = b.build().expect("a valid program");
    let measured = run(&program, RunOptions::MEASURED).expect("runs");
    let profile = online_profile(&program, &measured);
    let shares: Vec<(String, i64)> = profile
        .rows
        .iter()
        .map(|r| (r.region.clone(), r.cp_inclusive.unwrap_or(0)))
        .collect();
    eprintln!("simulated shares {shares:?} of {}", profile.length);
    shares
}

/// Busy work for `us` microseconds (the shape's durations; nothing is
/// asserted about time). Arithmetic, not `spin_loop`: a virtual CPU that
/// executes PAUSE in a loop may be descheduled by its hypervisor.
fn spin(us: u64) {
    let until = Instant::now() + Duration::from_micros(us);
    let mut x = 1u64;
    while Instant::now() < until {
        for _ in 0..64 {
            x = core::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
    }
}

fn real() -> Vec<(String, i64)> {
    let config = heisen_shmem::Config {
        regions: Some(
            ["solve", "assemble", "update", "io"]
                .map(String::from)
                .to_vec(),
        ),
        output: env!("CARGO_TARGET_TMPDIR").into(),
        ..heisen_shmem::Config::from_env()
    };
    let _ = heisen_shmem::runtime::init_with(config);
    let lock = std::sync::Arc::new(heisen_shmem::Mutex::new(0u64));
    let barrier = std::sync::Arc::new(heisen_shmem::Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|i| {
            let (lock, barrier) = (lock.clone(), barrier.clone());
            heisen_shmem::spawn(move || {
                for _ in 0..PHASES {
                    heisen_shmem::in_region("solve", || spin(SOLVE[i]));
                    if i == 0 {
                        heisen_shmem::in_region("assemble", || spin(ASSEMBLE));
                    } else {
                        heisen_shmem::in_region("io", || spin(IO));
                    }
                    let mut g = lock.lock().expect("lock");
                    heisen_shmem::in_region("update", || spin(UPDATE));
                    *g += 1;
                    drop(g);
                    barrier.wait();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    // R10: the run's path is the longest over the locations' paths; the
    // main thread merged both ends at its joins.
    let report = heisen_shmem::report::build(heisen_shmem::runtime());
    let path = report
        .locations
        .iter()
        .filter_map(|l| l.critical_path.as_ref())
        .max_by_key(|p| p.longest)
        .expect("a finished thread with a path")
        .clone();
    let shares: Vec<(String, i64)> = report
        .header
        .selected
        .iter()
        .zip(path.inclusive.iter())
        .map(|(r, s)| (r.name.as_str().to_owned(), *s))
        .collect();
    eprintln!("real shares {shares:?} of {}", path.longest);
    shares
}

#[test]
fn simulator_and_real_threads_rank_the_critical_path_alike() {
    let sim = simulated();
    let order = ranking(&sim);
    assert_eq!(
        order,
        ["solve", "assemble", "update", "io"],
        "the shape's own path"
    );
    assert_eq!(
        sim[3],
        ("io".to_owned(), 0),
        "thread 1's region is off the path"
    );
    let real = real();
    // The regions on the simulated path keep their order; the one off it
    // stays below all of them (it may pick up a little when thread 1 is
    // preempted on a busy machine, never as much as a region on the path).
    assert_eq!(
        ranking(&real)[..3],
        order[..3],
        "real run against the simulation: {real:?}"
    );
    let share = |name: &str| real.iter().find(|(n, _)| n == name).map_or(0, |(_, s)| *s);
    assert!(share("io") < share("update"), "{real:?}");
}
