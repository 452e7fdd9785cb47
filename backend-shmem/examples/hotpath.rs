//! Hot paths for `valgrind --tool=callgrind` and for checking calibration
//! in situ (README "Threads", development notes):
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
