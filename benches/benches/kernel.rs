//! Kernel-time benches of `heisen-core`: the cost of the state machine
//! itself on the hot events, without clock reads (times come from a
//! counter), for K = 0, 4 and 32 selected regions.
//!
//! - `enter_exit/K=…`: one `on_enter` + `on_exit` pair of a region that is
//!   selected (the last of the K, so the slot lookup scans all of them); for
//!   K = 0 nothing is selected. Two unselected parent frames are open, so
//!   the recursion check of 002 Fig. 11 looks at a realistic stack.
//! - `send/K=…`: `on_release` + `Piggyback::encode` into a stack buffer.
//! - `merge/K=…`: `on_merge` with one message dependency whose piggyback
//!   carries path data and wins both the approximated end (R5, case m.1)
//!   and the critical path (R7), the most expensive outcome.
//! - `encode/K=32`, `decode/K=32`: the wire encoding alone, both ways.
//!
//! Every bench keeps the location's state bounded: the stack returns to
//! the same depth, times grow by a few tens of ns per event, and the
//! calibrated costs stay below the time step so no interval is negative.

use core::hint::black_box;
use core::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use heisen_core::{Calibration, Config, Cost, Dependency, Flags, Location, Piggyback};

/// Region stack capacity of the benched locations.
const D: usize = 64;

/// Measured time between two consecutive events, ns.
const STEP: u64 = 50;

/// Large enough for the encoding of any benched K (48 + 24 * 32 bytes).
const BUFFER: usize = 1024;

/// Costs of the order a real backend calibrates (a clock read plus the
/// kernel call), all below [`STEP`].
const CALIBRATION: Calibration = Calibration {
    enter: Cost {
        whole: 30,
        inside: 12,
    },
    exit: Cost {
        whole: 32,
        inside: 14,
    },
    send: 40,
    merge: 45,
    sample: 200,
};

/// Regions 0..K are selected; the benched region is the last of them.
fn location<const K: usize>() -> Location<K, D> {
    let selected: [u32; K] = core::array::from_fn(|k| k as u32);
    let mut location = Location::new(Config::new(1, selected).calibration(CALIBRATION), 0);
    // Two unselected parents (main, a phase), as in a real call stack.
    location.on_enter(1_000, 0, STEP).expect("enter main");
    location.on_enter(1_001, 1, 2 * STEP).expect("enter phase");
    location
}

/// The benched region: selected (the last slot) unless K = 0.
const fn region<const K: usize>() -> u32 {
    if K == 0 { 7 } else { K as u32 - 1 }
}

fn enter_exit<const K: usize>(c: &mut Criterion) {
    let mut location = location::<K>();
    let region = region::<K>();
    let mut t = location.last_measured();
    c.bench_function(&format!("enter_exit/K={K}"), |b| {
        b.iter(|| {
            t += STEP;
            let entered = location.on_enter(black_box(region), 3, black_box(t));
            t += STEP;
            let exited = location.on_exit(black_box(region), black_box(t));
            black_box((entered, exited))
        });
    });
    assert_eq!(location.depth(), 2, "the benched stack must not grow");
    assert_eq!(location.overcompensation().count, 0);
}

fn send<const K: usize>(c: &mut Criterion) {
    let mut location = location::<K>();
    let start = location.last_measured();
    let mut t = start;
    let mut buffer = [0u8; BUFFER];
    c.bench_function(&format!("send/K={K}"), |b| {
        b.iter(|| {
            t += STEP;
            let written = match location.on_release(black_box(t)) {
                Ok(record) => record.encode(&mut buffer),
                Err(_) => Ok(0),
            };
            black_box(&buffer);
            written
        });
    });
    if t > start {
        // Skipped when a filter left this bench out.
        assert_eq!(
            Piggyback::<K>::decode(&buffer).map(|p| p.flags),
            Ok(Flags::ALL)
        );
    }
}

/// A record from location 0 with path data, released at measured time
/// `release` with delay 30 and a critical path of `longest`.
fn incoming<const K: usize>(release: u64, longest: i64) -> Piggyback<K> {
    Piggyback {
        flags: Flags::ALL,
        location: 0,
        delay: 30,
        approximated: release as i64 - 30,
        longest,
        transfer: 0,
        inclusive: core::array::from_fn(|k| k as i64 * 10),
        exclusive: core::array::from_fn(|k| k as i64 * 5),
        net: core::array::from_fn(|k| longest - k as i64),
    }
}

fn merge<const K: usize>(c: &mut Criterion) {
    let mut location = location::<K>();
    let start = location.last_measured();
    let mut t = start;
    let mut piggyback = incoming::<K>(start, 1_000_000);
    c.bench_function(&format!("merge/K={K}"), |b| {
        b.iter(|| {
            // The sender released during the wait (R5 case m.1) and its
            // path is longer than the local one (R7: the dependency wins).
            // Only the two scalars that move are rewritten, so the bench
            // measures the merge, not the building of a record.
            let begin = t + STEP;
            let end = begin + STEP;
            t = end;
            piggyback.approximated = (begin + STEP / 2) as i64 - piggyback.delay as i64;
            piggyback.longest += 10 * STEP as i64;
            let deps = [Dependency::message(&piggyback, 20, 5)];
            black_box(location.on_merge(black_box(begin), black_box(end), black_box(&deps)))
        });
    });
    if t > start {
        // Skipped when a filter left this bench out.
        let snapshot = location.snapshot();
        assert_eq!(snapshot.location, 1);
        assert!(
            snapshot.longest >= piggyback.longest,
            "the dependency's path must win"
        );
    }
}

fn encode_decode(c: &mut Criterion) {
    let record = incoming::<32>(1_000, 5_000);
    let mut buffer = [0u8; BUFFER];
    c.bench_function("encode/K=32", |b| {
        b.iter(|| {
            let written = black_box(&record).encode(&mut buffer);
            black_box(&buffer);
            written
        });
    });
    let written = record.encode(&mut buffer).expect("buffer fits K = 32");
    let bytes = &buffer[..written];
    c.bench_function("decode/K=32", |b| {
        b.iter(|| Piggyback::<32>::decode(black_box(bytes)));
    });
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = kernel;
    config = config();
    targets =
        enter_exit::<0>, enter_exit::<4>, enter_exit::<32>,
        send::<0>, send::<4>, send::<32>,
        merge::<0>, merge::<4>, merge::<32>,
        encode_decode
}
criterion_main!(kernel);
