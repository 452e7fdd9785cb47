//! Seeded random deterministic programs (no wildcards, no races on locks
//! or queues) on the contention-free network the kernel knows, with no
//! send cost: timestamped compensation (R5) reproduces every true end time
//! exactly and delay-only (R4) is never earlier (DESIGN §4). A small,
//! deterministic forerunner of the 2,000-program property test.

use heisen_core::{Calibration, Cost, TransferModel};
use heisen_sim::compare::compare;
use heisen_sim::program::{Collective, Duration, Op, Program, ProgramBuilder, Source};
use heisen_sim::transfer::Network;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

fn pick(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    rng.next_u64() % n
}

fn program(seed: u64) -> Program {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = ProgramBuilder::new(&format!("random {seed}"));
    let regions: Vec<u32> = (0..3).map(|i| b.region(&format!("f{i}"))).collect();
    b.seed(seed)
        .network(Network::ContentionFree(TransferModel {
            latency: 100 + pick(&mut rng, 900),
            per_byte_ps: pick(&mut rng, 5000),
            copy_per_byte_ps: 0,
        }))
        .calibration(Calibration {
            enter: Cost {
                whole: 50 + pick(&mut rng, 200),
                inside: pick(&mut rng, 50),
            },
            exit: Cost {
                whole: 50 + pick(&mut rng, 200),
                inside: pick(&mut rng, 50),
            },
            send: 0,
            merge: pick(&mut rng, 100),
            sample: 0,
        });
    let p = 2 + pick(&mut rng, 5) as u32;
    let ranks: Vec<u32> = (0..p).map(|i| b.rank(&format!("r{i}"))).collect();
    let phases = 3 + pick(&mut rng, 6);
    let mut body: Vec<Vec<Op>> = vec![Vec::new(); p as usize];
    for phase in 0..phases {
        match pick(&mut rng, 5) {
            0 => {
                // Compute in (possibly nested) regions, a loop around it.
                for ops in body.iter_mut() {
                    let d = match pick(&mut rng, 3) {
                        0 => Duration::Fixed(pick(&mut rng, 3000)),
                        1 => Duration::Uniform {
                            low: 100,
                            high: 2000,
                        },
                        _ => Duration::Exponential { mean: 800.0 },
                    };
                    let r = regions[pick(&mut rng, 3) as usize];
                    let inner = Op::Region {
                        region: r,
                        body: vec![Op::Compute(d)],
                    };
                    ops.push(Op::Loop {
                        id: phase as u32,
                        count: 1 + pick(&mut rng, 4),
                        body: vec![inner],
                    });
                }
            }
            1 => {
                // Blocking pairs: a random matching, receiver first.
                let mut order: Vec<u32> = ranks.clone();
                for i in (1..order.len()).rev() {
                    order.swap(i, pick(&mut rng, i as u64 + 1) as usize);
                }
                for pair in order.chunks(2) {
                    if let [a, c] = *pair {
                        let bytes = pick(&mut rng, 4096);
                        body[a as usize].push(Op::Send {
                            to: heisen_sim::program::Dest::Location(c),
                            bytes,
                            tag: phase as u32,
                        });
                        body[c as usize].push(Op::Recv {
                            from: Source::Location(a),
                            bytes,
                            tag: Some(phase as u32),
                        });
                    }
                }
            }
            2 => {
                // Nonblocking ring with compute in between.
                for (i, ops) in body.iter_mut().enumerate() {
                    let next = ranks[(i + 1) % p as usize];
                    let prev = ranks[(i + p as usize - 1) % p as usize];
                    ops.push(Op::Irecv {
                        from: Source::Location(prev),
                        bytes: 64,
                        tag: Some(1000 + phase as u32),
                        request: 1,
                    });
                    ops.push(Op::Isend {
                        to: heisen_sim::program::Dest::Location(next),
                        bytes: 64,
                        tag: 1000 + phase as u32,
                        request: 2,
                    });
                    ops.push(Op::Compute(Duration::Fixed(pick(&mut rng, 1500))));
                    ops.push(Op::WaitAll);
                }
            }
            3 => {
                // Every collective shape; gather and reduce roots merge
                // several dependencies, each measured from its own arrival.
                let kinds = [
                    Collective::Barrier,
                    Collective::Bcast,
                    Collective::Scatter,
                    Collective::Allreduce,
                    Collective::Alltoall,
                    Collective::Gather,
                    Collective::Reduce,
                ];
                let kind = kinds[pick(&mut rng, kinds.len() as u64) as usize];
                let root = ranks[pick(&mut rng, p as u64) as usize];
                let bytes = pick(&mut rng, 1024);
                for ops in body.iter_mut() {
                    ops.push(Op::Collective { kind, root, bytes });
                }
            }
            _ => {
                // Sendrecv with the neighbour (pairs of a ring of even size).
                if p.is_multiple_of(2) {
                    for (i, ops) in body.iter_mut().enumerate() {
                        let other = ranks[i ^ 1];
                        ops.push(Op::Sendrecv {
                            to: heisen_sim::program::Dest::Location(other),
                            send_bytes: 32,
                            from: Source::Location(other),
                            recv_bytes: 32,
                            tag: 2000 + phase as u32,
                        });
                    }
                }
            }
        }
    }
    for (r, ops) in ranks.iter().zip(body) {
        for op in ops {
            b.on(*r).op(op);
        }
    }
    // Threads without races: producer/consumer pairs on their own queue,
    // a barrier per pair, and a spawned helper that the producer joins.
    for pair in 0..pick(&mut rng, 3) as u32 {
        let producer = b.thread(&format!("producer {pair}"));
        let consumer = b.thread(&format!("consumer {pair}"));
        let helper = b.spawned_thread(&format!("helper {pair}"));
        let items = 1 + pick(&mut rng, 5);
        let (work, f) = (pick(&mut rng, 2000), regions[pick(&mut rng, 3) as usize]);
        b.on(producer).op(Op::Spawn { child: helper });
        for _ in 0..items {
            b.on(producer)
                .region(f, |b| {
                    b.compute(work);
                })
                .op(Op::Enqueue { queue: pair });
        }
        b.on(producer)
            .op(Op::Join { child: helper })
            .op(Op::ThreadBarrier {
                barrier: pair,
                count: 2,
            });
        for _ in 0..items {
            b.on(consumer)
                .op(Op::Dequeue { queue: pair })
                .region(regions[0], |b| {
                    b.compute_dist(Duration::Uniform { low: 0, high: 3000 });
                });
        }
        b.on(consumer).op(Op::ThreadBarrier {
            barrier: pair,
            count: 2,
        });
        b.on(helper).region(regions[1], |b| {
            b.compute_dist(Duration::Exponential { mean: 2000.0 });
        });
    }
    b.build().unwrap()
}

#[test]
fn timestamped_is_exact_on_random_deterministic_programs() {
    // The project's property-test budget (scripts/test sets 10,000).
    let cases = std::env::var("HEISEN_PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(1000u64);
    for seed in 0..cases {
        let p = program(seed);
        let c = compare(&p).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        for r in &c.rows {
            assert_eq!(
                r.timestamped,
                r.truth as i64,
                "seed {seed}: {r:?}\n{}",
                c.table()
            );
            assert!(
                r.delay_only >= r.truth as i64,
                "seed {seed}: {r:?}\n{}",
                c.table()
            );
        }
    }
}
