//! Seeded random deterministic programs for the property tests: 2-16
//! locations, every operation kind, deadlock-free by construction, and
//! deterministic (no wildcard receives, no races on locks or queues), so
//! that the truth has one schedule (DESIGN §4).

#![allow(dead_code)] // reason: each test file uses a part of this module

use heisen_core::{Calibration, Cost, TransferModel};
use heisen_sim::program::{Collective, Dest, Duration, Op, Program, ProgramBuilder, Source};
use heisen_sim::transfer::{LogGops, Network};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

/// The number of cases a property test runs: `HEISEN_PROPTEST_CASES`, or
/// `default`.
pub(crate) fn cases(default: u64) -> u64 {
    std::env::var("HEISEN_PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default)
}

/// Which network the program runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Net {
    /// Latency plus per-byte cost: the kernel's model is exact (DESIGN §4).
    ContentionFree,
    /// Full LogGOPS with CPU overheads and gaps `g > 0`.
    LogGops,
}

fn pick(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    rng.next_u64() % n
}

fn duration(rng: &mut ChaCha8Rng) -> Duration {
    match pick(rng, 4) {
        0 => Duration::Fixed(pick(rng, 3000)),
        1 => Duration::Uniform {
            low: 100,
            high: 2000,
        },
        2 => Duration::Normal {
            mean: 900.0,
            sd: 200.0,
        },
        _ => Duration::Exponential { mean: 800.0 },
    }
}

/// Compute inside one to three nested regions, sometimes recursive.
fn nested(rng: &mut ChaCha8Rng, regions: &[u32]) -> Op {
    let mut op = Op::Compute(duration(rng));
    for _ in 0..1 + pick(rng, 3) {
        let r = regions[pick(rng, regions.len() as u64) as usize];
        let mut body = vec![op];
        if pick(rng, 3) == 0 {
            body.push(Op::Compute(duration(rng)));
        }
        op = Op::Region { region: r, body };
    }
    op
}

/// Random program number `seed` on the given network.
pub(crate) fn program(seed: u64, net: Net) -> Program {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = ProgramBuilder::new(&format!("random {seed}"));
    let regions: Vec<u32> = (0..1 + pick(&mut rng, 6))
        .map(|i| b.region(&format!("f{i}")))
        .collect();
    let network = match net {
        Net::ContentionFree => Network::ContentionFree(TransferModel {
            latency: 100 + pick(&mut rng, 900),
            per_byte_ps: pick(&mut rng, 5000),
            copy_per_byte_ps: 0,
        }),
        Net::LogGops => Network::LogGops(LogGops {
            latency: 500 + pick(&mut rng, 3000),
            overhead: 100 + pick(&mut rng, 1500),
            gap: 100 + pick(&mut rng, 1500),
            gap_per_byte: pick(&mut rng, 8),
            overhead_per_byte: 0,
            eager_limit: 65535,
        }),
    };
    b.seed(seed).network(network).calibration(Calibration {
        enter: Cost {
            whole: 50 + pick(&mut rng, 200),
            inside: pick(&mut rng, 50),
        },
        exit: Cost {
            whole: 50 + pick(&mut rng, 200),
            inside: pick(&mut rng, 50),
        },
        send: pick(&mut rng, 3) * pick(&mut rng, 60),
        merge: pick(&mut rng, 100),
        sample: 0,
    });
    let pairs = pick(&mut rng, 3) as u32;
    let p = 2 + pick(&mut rng, 15 - 3 * u64::from(pairs)) as u32;
    let ranks: Vec<u32> = (0..p).map(|i| b.rank(&format!("r{i}"))).collect();
    let phases = 3 + pick(&mut rng, 6);
    let mut body: Vec<Vec<Op>> = vec![Vec::new(); p as usize];
    for phase in 0..phases as u32 {
        match pick(&mut rng, 6) {
            0 => {
                // Compute in nested regions, a loop around it.
                for ops in body.iter_mut() {
                    let inner = nested(&mut rng, &regions);
                    ops.push(Op::Loop {
                        id: phase,
                        count: 1 + pick(&mut rng, 3),
                        body: vec![inner],
                    });
                }
            }
            1 => {
                // Blocking pairs of a random matching; the receiver
                // sometimes answers whoever it received from.
                let mut order: Vec<u32> = ranks.clone();
                for i in (1..order.len()).rev() {
                    order.swap(i, pick(&mut rng, i as u64 + 1) as usize);
                }
                let reply = pick(&mut rng, 2) == 0;
                for pair in order.chunks(2) {
                    if let [a, c] = *pair {
                        let bytes = pick(&mut rng, 4096);
                        body[a as usize].push(nested(&mut rng, &regions));
                        body[a as usize].push(Op::Send {
                            to: Dest::Location(c),
                            bytes,
                            tag: phase,
                        });
                        body[c as usize].push(Op::Recv {
                            from: Source::Location(a),
                            bytes,
                            tag: Some(phase),
                        });
                        if reply {
                            body[c as usize].push(nested(&mut rng, &regions));
                            body[c as usize].push(Op::Send {
                                to: Dest::LastSource,
                                bytes: 16,
                                tag: 500 + phase,
                            });
                            body[a as usize].push(Op::Recv {
                                from: Source::Location(c),
                                bytes: 16,
                                tag: Some(500 + phase),
                            });
                        }
                    }
                }
            }
            2 => {
                // Nonblocking ring with compute in between; completed by
                // one wait per request or by a wait-all.
                let single = pick(&mut rng, 2) == 0;
                for (i, ops) in body.iter_mut().enumerate() {
                    let next = ranks[(i + 1) % p as usize];
                    let prev = ranks[(i + p as usize - 1) % p as usize];
                    ops.push(Op::Irecv {
                        from: Source::Location(prev),
                        bytes: 64,
                        tag: Some(1000 + phase),
                        request: 1,
                    });
                    ops.push(Op::Isend {
                        to: Dest::Location(next),
                        bytes: 64,
                        tag: 1000 + phase,
                        request: 2,
                    });
                    ops.push(Op::Compute(Duration::Fixed(pick(&mut rng, 1500))));
                    if single {
                        ops.push(Op::Wait { request: 2 });
                        ops.push(Op::Wait { request: 1 });
                    } else {
                        ops.push(Op::WaitAll);
                    }
                }
            }
            3 | 4 => {
                // Every collective shape, after some work in regions.
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
                let root = ranks[pick(&mut rng, u64::from(p)) as usize];
                let bytes = pick(&mut rng, 1024);
                for ops in body.iter_mut() {
                    if pick(&mut rng, 2) == 0 {
                        ops.push(nested(&mut rng, &regions));
                    }
                    ops.push(Op::Collective { kind, root, bytes });
                }
            }
            _ => {
                // Sendrecv with the neighbour (pairs of a ring of even size).
                if p.is_multiple_of(2) {
                    for (i, ops) in body.iter_mut().enumerate() {
                        let other = ranks[i ^ 1];
                        ops.push(Op::Sendrecv {
                            to: Dest::Location(other),
                            send_bytes: 32,
                            from: Source::Location(other),
                            recv_bytes: 32,
                            tag: 2000 + phase,
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
    // Threads without races: a producer/consumer pair on its own queue, a
    // barrier per pair, a lock the producer takes before the barrier and
    // the consumer after it, and a spawned helper that the producer joins.
    for pair in 0..pairs {
        let producer = b.thread(&format!("producer {pair}"));
        let consumer = b.thread(&format!("consumer {pair}"));
        let helper = b.spawned_thread(&format!("helper {pair}"));
        let items = 1 + pick(&mut rng, 5);
        let (work, f) = (
            pick(&mut rng, 2000),
            regions[pick(&mut rng, regions.len() as u64) as usize],
        );
        b.on(producer).op(Op::Spawn { child: helper });
        for _ in 0..items {
            b.on(producer)
                .region(f, |b| {
                    b.compute(work);
                })
                .op(Op::Enqueue { queue: pair });
        }
        b.on(producer)
            .op(Op::Lock { lock: pair })
            .compute(pick(&mut rng, 500))
            .op(Op::Unlock { lock: pair })
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
        b.on(consumer)
            .op(Op::ThreadBarrier {
                barrier: pair,
                count: 2,
            })
            .op(Op::Lock { lock: pair })
            .compute(pick(&mut rng, 500))
            .op(Op::Unlock { lock: pair });
        let nested_op = nested(&mut rng, &regions);
        b.on(helper).op(nested_op);
    }
    match b.build() {
        Ok(p) => p,
        Err(e) => panic!("seed {seed}: the generator built an invalid program: {e}"),
    }
}
