//! Hot paths for `valgrind --tool=callgrind` and for checking calibration
//! in situ (docs/development.md, "Threads"):
//!
//! - `hotpath lock|region [n]`: n uncontended lock/unlock pairs or n empty
//!   regions after start-up (count them with `--toggle-collect='hotpath::run*'`);
//! - `hotpath compare [n]`: the lock/unlock pair's added time in a loop
//!   of a measured thread beside the calibrated costs of the mutex actions.

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "region".into());
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let lock = heisen_shmem::Mutex::new(0u64);
    *lock.lock().expect("lock") += 1; // calibrates the wrappers
    let region = heisen_shmem::Region::new("hot");
    if what == "compare" {
        compare(n, &lock);
    } else if what == "cells" {
        cells(n);
    } else {
        run(&what, n, &lock, region);
    }
}

fn compare(n: u64, lock: &heisen_shmem::Mutex<u64>) {
    let rt = heisen_shmem::runtime();
    let std = std::sync::Mutex::new(0u64);
    for _ in 0..3 {
        let t0 = rt.now();
        for _ in 0..n {
            *lock.lock().expect("lock") += 1;
        }
        let t1 = rt.now();
        for _ in 0..n {
            *std.lock().expect("lock") += 1;
        }
        let t2 = rt.now();
        let per = |a: u64, b: u64| (b - a) as f64 / n as f64;
        println!(
            "loop: heisen {:.1} ns, std {:.1} ns, added {:.1} ns",
            per(t0, t1),
            per(t1, t2),
            per(t0, t1) - per(t1, t2)
        );
    }
    for (action, cost) in rt.actions() {
        if action.starts_with("mutex") {
            println!("calibrated {action}: {cost:?}");
        }
    }
}

#[inline(never)]
fn run(what: &str, n: u64, lock: &heisen_shmem::Mutex<u64>, region: heisen_shmem::Region) {
    match what {
        "lock" => {
            for _ in 0..n {
                *lock.lock().expect("lock") += 1;
            }
        }
        _ => {
            for _ in 0..n {
                region.run(|| core::hint::black_box(1));
            }
        }
    }
}

/// About 40 ns of dependent integer work (the fidelity example's cell).
#[inline(never)]
fn cell(mut x: u64) -> u64 {
    for _ in 0..20 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        x ^= x >> 29;
    }
    core::hint::black_box(x)
}

/// `hotpath cells [rounds]`: per round, what a region pair adds to a
/// loop of latency-bound cells (the program's real cost of the pair),
/// beside the pair timed back to back, on this thread at this moment.
fn cells(rounds: u64) {
    const N: u64 = 4_000;
    let rt = heisen_shmem::runtime();
    let mut acc = 1u64;
    for _ in 0..rounds {
        let t0 = rt.now();
        for _ in 0..N {
            acc = cell(acc);
        }
        let t1 = rt.now();
        for _ in 0..N {
            acc = heisen_shmem::in_region("cell", || cell(acc));
        }
        let t2 = rt.now();
        for _ in 0..N {
            heisen_shmem::in_region("empty", || core::hint::black_box(1));
        }
        let t3 = rt.now();
        let own = heisen_shmem::Mutex::new(0u64);
        for c in 0..N {
            acc = cell(acc);
            if c % 4 == 0 {
                *own.lock().expect("lock") += acc & 1;
            }
        }
        let t4 = rt.now();
        let plain = std::sync::Mutex::new(0u64);
        for c in 0..N {
            acc = cell(acc);
            if c % 4 == 0 {
                *plain.lock().expect("lock") += acc & 1;
            }
        }
        let t5 = rt.now();
        for _ in 0..N / 4 {
            *own.lock().expect("lock") += 1;
        }
        let t6 = rt.now();
        for _ in 0..N / 4 {
            *plain.lock().expect("lock") += 1;
        }
        let t7 = rt.now();
        let per = |a: u64, b: u64| (b - a) as f64 / N as f64;
        let lock_in_cells = 4.0 * (per(t3, t4) - per(t4, t5));
        let lock_loop = 4.0 * (per(t5, t6) - per(t6, t7));
        // SAFETY: no arguments, no memory.
        #[allow(unsafe_code)] // reason: sched_getcpu has no safe binding
        let cpu = unsafe { libc::sched_getcpu() };
        println!(
            "cpu {cpu}: cell {:.1} ns, pair added to cells {:.1} ns, pair back to back {:.1} ns, lock pair added to cells {lock_in_cells:.1} ns, in a loop {lock_loop:.1} ns",
            per(t0, t1),
            per(t1, t2) - per(t0, t1),
            per(t2, t3)
        );
    }
    let c = rt.calibration();
    println!("calibrated enter+exit: {} ns", c.enter.whole + c.exit.whole);
    for (action, cost) in rt.actions() {
        if action.starts_with("mutex") {
            println!("calibrated {action}: {cost:?}");
        }
    }
    core::hint::black_box(acc);
}
