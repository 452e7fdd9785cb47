//! Instruction counts of the live monitor's hot path (R10) under
//! callgrind, exact and repeatable on a busy machine:
//!
//! ```text
//! cargo build --release -p heisen-benches --example monitor_cost
//! for m in 0 1; do HEISEN_MONITOR=$m valgrind --tool=callgrind \
//!     --toggle-collect='monitor_cost::pairs' --callgrind-out-file=/tmp/cg.$m \
//!     target/release/examples/monitor_cost; done
//! ```
//!
//! `pairs` runs [`N`] enter + exit pairs of a selected region, `releases`
//! [`N`] releases and `merges` [`N`] merges (toggle on those for them);
//! divide the collected instructions by `N`.

use core::hint::black_box;

use heisen_core::Dependency;
use heisen_shmem::{Config, Region, with_current};

/// Iterations of each loop.
const N: u64 = 100_000;

#[inline(never)]
fn pairs(region: Region) {
    for _ in 0..N {
        let guard = region.enter();
        black_box(&guard);
    }
}

#[inline(never)]
fn releases(action: heisen_shmem::ActionId) {
    for _ in 0..N {
        with_current(|s| black_box(s.release(action)));
    }
}

#[inline(never)]
fn merges(action: heisen_shmem::ActionId, record: &heisen_shmem::Record) {
    for _ in 0..N {
        with_current(|s| {
            let begin = s.now();
            black_box(s.merge(begin, &[Dependency::immediate(record)], action))
        });
    }
}

fn main() {
    let config = Config {
        output: std::env::temp_dir(),
        ..Config::from_env()
    };
    let rt = heisen_shmem::runtime::init_with(config).unwrap_or_else(|e| e.0);
    let region = Region::new("bench");
    pairs(region);
    releases(rt.builtin().release);
    let record = with_current(|s| s.peek()).unwrap_or(heisen_shmem::Record::EMPTY);
    merges(rt.builtin().merge, &record);
    println!(
        "{N} pairs, releases and merges, monitor {}",
        if rt.monitor().is_some() { "on" } else { "off" }
    );
}
