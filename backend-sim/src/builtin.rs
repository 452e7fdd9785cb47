//! The built-in scenarios, each reproducing the shape of a published
//! result; `heisen scenarios` lists them and `heisen simulate NAME` runs one.

use heisen_core::{Calibration, Cost, TransferModel};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

use crate::engine::{Edge, Graph, GraphOp, OpKind};
use crate::program::{Collective, Duration, LocationId, Op, Ops, Program, ProgramBuilder, Source};
use crate::transfer::Network;

/// A built-in scenario.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    /// The name `heisen simulate` takes.
    pub name: &'static str,
    /// One line saying what it shows.
    pub summary: &'static str,
    /// Builds the program.
    pub build: fn() -> Program,
}

/// Every built-in scenario, in the order `heisen scenarios` lists them.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "master-worker",
        summary: "Monte-Carlo master/worker with heavy worker instrumentation (seed 000 §5, Table 1): \
                  uncompensated and local-only master far above the truth, parallel compensation on it",
        build: master_worker_default,
    },
    Builtin {
        name: "one-send",
        summary: "two processes, one message (seed 000 §3.1.1, Fig. 2): the receiver inherits the \
                  sender's overhead; parallel compensation exact, local-only not",
        build: one_send,
    },
    Builtin {
        name: "two-sends",
        summary: "two processes, two messages (seed 000 §3.1.2, Fig. 3-4): the delay carries over \
                  from the first message to the second",
        build: two_sends,
    },
    Builtin {
        name: "handshake",
        summary: "two processes, a message each way (seed 000 §3.1.3, Fig. 5-6): the delay comes \
                  back to its origin",
        build: handshake,
    },
    Builtin {
        name: "pipeline3",
        summary: "three processes in a chain (seed 000 §3.2.1, Fig. 8): the delay propagates \
                  through the middle process",
        build: pipeline3,
    },
    Builtin {
        name: "two-receive",
        summary: "one process receives from two (seed 000 §3.2.2, Fig. 9-12): the sends swap order \
                  between measured and approximated run, receives keep theirs",
        build: two_receive,
    },
    Builtin {
        name: "pipeline",
        summary: "six-stage pipeline of 20 blocks: local-only error grows stage by stage, \
                  timestamped compensation exact at every stage",
        build: pipeline_default,
    },
    Builtin {
        name: "nas-is",
        summary: "NAS IS-like, 8 ranks (seed 003 Fig. 7): the sequential create_seq ranks third by \
                  CPU time and first by critical path",
        build: nas_is,
    },
    Builtin {
        name: "tsp",
        summary: "TSP manager and 8 workers (seed 003 Fig. 8): the manager's BeManager holds a large \
                  critical-path share for a small CPU share",
        build: tsp,
    },
    Builtin {
        name: "raytrace",
        summary: "threaded Raytrace-like run (seed 003 Fig. 12): the sequential ReadGeoFile weighs \
                  several times more on the critical path than in the CPU profile",
        build: raytrace,
    },
    Builtin {
        name: "cholesky",
        summary: "threaded Cholesky-like run (seed 003 Fig. 13): sequential FillInNZ gains, parallel \
                  GetBlock and ModifyTwoBy lose weight on the critical path",
        build: cholesky,
    },
    Builtin {
        name: "random",
        summary: "a random deterministic program (`random --seed N` or `random-N`): \
                  timestamped compensation exact",
        build: random_default,
    },
];

/// The built-in called `name`.
pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// The program of built-in `name`, where `random-N` (and `random` with
/// `seed`) name the random program of seed `N`. `None` for an unknown name.
pub fn program(name: &str, seed: Option<u64>) -> Option<Program> {
    if name == "random" {
        return Some(random(seed.unwrap_or(1)));
    }
    if let Some(n) = name.strip_prefix("random-") {
        return n.parse().ok().map(random);
    }
    find(name).map(|b| (b.build)())
}

/// TAU's timer on the paper's Itanium cost 480 ns (seed 000 §5); heisen's
/// calibration splits it between enter and exit, part of each inside the
/// region (R1).
pub const TAU_TIMER: Calibration = Calibration {
    enter: Cost {
        whole: 240,
        inside: 100,
    },
    exit: Cost {
        whole: 240,
        inside: 100,
    },
    send: 0,
    merge: 0,
    sample: 0,
};

/// [`master_worker`] with 4 workers, 20 work packets each, 200 instrumented
/// calls per packet.
pub fn master_worker_default() -> Program {
    master_worker(4, 20, 200)
}

/// Seed 000 §5: a master hands out work packets of random numbers to
/// whichever worker asks (wildcard receive); each worker tests its pairs
/// with many small instrumented calls and asks again; a final answer to
/// each request past the last packet tells the worker to stop.
///
/// The master's own instrumentation is light (one region, one loop), so
/// local compensation cannot remove from its end the workers' overhead
/// that it waited for (000 Fig. 1).
pub fn master_worker(workers: u32, packets: u64, calls: u64) -> Program {
    const REQUEST: u32 = 1;
    const WORK: u32 = 2;
    let mut b = ProgramBuilder::new("master-worker");
    let master_region = b.region("master");
    let worker_region = b.region("worker");
    let packet_region = b.region("packet");
    let test_region = b.region("in_circle");
    b.seed(2007).calibration(TAU_TIMER);
    let master = b.rank("master");
    let ids: Vec<u32> = (1..=workers)
        .map(|w| b.rank(&format!("worker {w}")))
        .collect();
    let answers = u64::from(workers) * (packets + 1);
    b.on(master).region(master_region, |m| {
        m.compute(20_000).repeat(0, answers, |m| {
            // Wait for a request from any worker, answer that worker
            // with a packet of 32 random pairs (512 B).
            m.recv(Source::Any, 8, Some(REQUEST))
                .compute_dist(Duration::Uniform {
                    low: 1_000,
                    high: 3_000,
                })
                .reply(512, WORK);
        });
    });
    for &w in &ids {
        b.on(w).region(worker_region, |r| {
            r.repeat(1, packets, |r| {
                r.send(master, 8, REQUEST)
                    .recv(Source::Location(master), 512, Some(WORK))
                    .region(packet_region, |r| {
                        r.repeat(2, calls, |r| {
                            r.region(test_region, |r| {
                                r.compute_dist(Duration::Normal {
                                    mean: 650.0,
                                    sd: 120.0,
                                });
                            });
                        });
                    });
            })
            // The answer past the last packet: stop.
            .send(master, 8, REQUEST)
            .recv(Source::Location(master), 512, Some(WORK));
        });
    }
    // The builder only fails on inconsistent references, which this
    // program has none of; an empty program reports itself when run.
    b.build()
        .unwrap_or_else(|_| ProgramBuilder::new("master-worker").build_unchecked())
}

// ----- seed 000 §3: two- and three-process scenarios --------------------------

/// The network of the seed 000 §3 scenarios: a latency the kernel knows
/// and no contention, so that the timestamped form can be exact (DESIGN §4).
const PAPER_NETWORK: Network = Network::ContentionFree(TransferModel {
    latency: 500,
    per_byte_ps: 0,
    copy_per_byte_ps: 0,
});

/// A process of the seed 000 §3 figures: `calls` instrumented calls of
/// 200 ns each (the overhead `o` of the figures) in region `work`.
fn work(ops: &mut Ops<'_>, work: u32, loop_id: u32, calls: u64) {
    ops.repeat(loop_id, calls, |o| {
        o.region(work, |o| {
            o.compute(200);
        });
    });
}

/// Two or three processes named P1, P2, P3 with region `work`.
fn paper(name: &str, processes: u32) -> (ProgramBuilder, u32, Vec<LocationId>) {
    let mut b = ProgramBuilder::new(name);
    let w = b.region("work");
    b.network(PAPER_NETWORK).calibration(TAU_TIMER).seed(1);
    let p = (1..=processes).map(|i| b.rank(&format!("P{i}"))).collect();
    (b, w, p)
}

fn finish(b: ProgramBuilder, name: &str) -> Program {
    // The builder only fails on inconsistent references, which the
    // built-ins have none of; an empty program reports itself when run.
    b.build()
        .unwrap_or_else(|_| ProgramBuilder::new(name).build_unchecked())
}

/// Seed 000 §3.1.1, Fig. 2: P1 (20 calls) sends to P2 (4 calls), which
/// waits: the receive's end carries P1's overhead.
pub fn one_send() -> Program {
    let (mut b, w, p) = paper("one-send", 2);
    work(&mut b.on(p[0]), w, 0, 20);
    b.on(p[0]).send(p[1], 8, 0);
    work(&mut b.on(p[1]), w, 1, 4);
    b.on(p[1])
        .recv(Source::Location(p[0]), 8, Some(0))
        .compute(300);
    finish(b, "one-send")
}

/// Seed 000 §3.1.2, Fig. 3-4: two messages from P1 to P2 with overhead
/// on both sides between them (`o1a`, `o2a`); P2 waits for both.
pub fn two_sends() -> Program {
    let (mut b, w, p) = paper("two-sends", 2);
    work(&mut b.on(p[0]), w, 0, 20);
    b.on(p[0]).send(p[1], 8, 0);
    work(&mut b.on(p[0]), w, 1, 15);
    b.on(p[0]).send(p[1], 8, 1);
    work(&mut b.on(p[1]), w, 2, 4);
    b.on(p[1]).recv(Source::Location(p[0]), 8, Some(0));
    work(&mut b.on(p[1]), w, 3, 3);
    b.on(p[1])
        .recv(Source::Location(p[0]), 8, Some(1))
        .compute(300);
    finish(b, "two-sends")
}

/// Seed 000 §3.1.3, Fig. 5-6: P1 sends to P2, P2 works and answers; P1's
/// second receive sees its own delay come back through P2.
pub fn handshake() -> Program {
    let (mut b, w, p) = paper("handshake", 2);
    work(&mut b.on(p[0]), w, 0, 20);
    b.on(p[0])
        .send(p[1], 8, 0)
        .recv(Source::Location(p[1]), 8, Some(1))
        .compute(300);
    work(&mut b.on(p[1]), w, 1, 4);
    b.on(p[1]).recv(Source::Location(p[0]), 8, Some(0));
    work(&mut b.on(p[1]), w, 2, 10);
    b.on(p[1]).send(p[0], 8, 1);
    finish(b, "handshake")
}

/// Seed 000 §3.2.1, Fig. 8: P1 → P2 → P3; P2 forwards the delay it
/// inherited plus its own overhead.
pub fn pipeline3() -> Program {
    let (mut b, w, p) = paper("pipeline3", 3);
    work(&mut b.on(p[0]), w, 0, 20);
    b.on(p[0]).send(p[1], 8, 0);
    work(&mut b.on(p[1]), w, 1, 4);
    b.on(p[1]).recv(Source::Location(p[0]), 8, Some(0));
    work(&mut b.on(p[1]), w, 2, 10);
    b.on(p[1]).send(p[2], 8, 0);
    work(&mut b.on(p[2]), w, 3, 4);
    b.on(p[2])
        .recv(Source::Location(p[1]), 8, Some(0))
        .compute(300);
    finish(b, "pipeline3")
}

/// Seed 000 §3.2.2, Fig. 9-12: P2 receives from P1, then from P3. In
/// the truth P3 sends first (3.0 µs, P1 at 4.0 µs); P3's 20 instrumented
/// calls delay its send past P1's in the measured run, so measured and
/// approximated sends are in opposite orders (Fig. 12, case 4) while the
/// receives keep theirs. With specific sources the compensation is still
/// exact; with a wildcard receive the order itself would change (R11).
pub fn two_receive() -> Program {
    let (mut b, w, p) = paper("two-receive", 3);
    b.on(p[0]).compute(3_000);
    work(&mut b.on(p[0]), w, 0, 5);
    b.on(p[0]).send(p[1], 8, 0);
    work(&mut b.on(p[1]), w, 1, 2);
    b.on(p[1])
        .recv(Source::Location(p[0]), 8, Some(0))
        .recv(Source::Location(p[2]), 8, Some(0))
        .compute(300);
    b.on(p[2]).compute(1_000);
    work(&mut b.on(p[2]), w, 2, 10);
    b.on(p[2]).send(p[1], 8, 0);
    finish(b, "two-receive")
}

/// [`pipeline`] with 6 stages and 20 blocks.
pub fn pipeline_default() -> Program {
    pipeline(6, 20)
}

/// A pipeline: stage 0 produces `blocks` blocks, each stage receives a
/// block from the previous one, processes it with instrumented calls and
/// passes it on. Every stage adds its overhead to what it forwards.
pub fn pipeline(stages: u32, blocks: u64) -> Program {
    let mut b = ProgramBuilder::new("pipeline");
    let produce = b.region("produce");
    let stage = b.region("stage");
    let step = b.region("step");
    b.network(PAPER_NETWORK).calibration(TAU_TIMER).seed(3);
    let ranks: Vec<LocationId> = (0..stages).map(|i| b.rank(&format!("stage {i}"))).collect();
    for (i, &r) in ranks.iter().enumerate() {
        b.on(r).repeat(0, blocks, |o| {
            if i > 0 {
                o.recv(Source::Location(ranks[i - 1]), 4096, Some(0));
            }
            let region = if i == 0 { produce } else { stage };
            o.region(region, |o| {
                o.repeat(1, 8, |o| {
                    o.region(step, |o| {
                        o.compute_dist(Duration::Uniform {
                            low: 300,
                            high: 500,
                        });
                    });
                });
            });
            if let Some(&next) = ranks.get(i + 1) {
                o.send(next, 4096, 0);
            }
        });
    }
    finish(b, "pipeline")
}

// ----- seed 003: critical-path profiles ----------------------------------------

/// A cheap timer (100 ns per enter and exit) for the seed 003 runs.
pub(crate) const LIGHT_TIMER: Calibration = Calibration {
    enter: Cost {
        whole: 100,
        inside: 40,
    },
    exit: Cost {
        whole: 100,
        inside: 40,
    },
    send: 0,
    merge: 0,
    sample: 0,
};

/// Seed 003 Fig. 7, NAS IS-like on 8 ranks. Rank 0 generates the keys
/// alone (`create_seq`, entirely sequential) while the others do their
/// share of the main routine's own work; the key ranking (`do_rank`) runs
/// on every rank between all-to-all exchanges. By CPU time `nas_is_ben`
/// (the main routine's own work) is first, `do_rank` second and
/// `create_seq` third; on the critical path `create_seq` is first.
pub fn nas_is() -> Program {
    let mut b = ProgramBuilder::new("nas-is");
    let main = b.region("nas_is_ben");
    let rank_keys = b.region("do_rank");
    let create = b.region("create_seq");
    b.network(Network::ContentionFree(TransferModel {
        latency: 500,
        per_byte_ps: 10,
        copy_per_byte_ps: 0,
    }))
    .calibration(LIGHT_TIMER)
    .seed(7);
    let ranks: Vec<LocationId> = (0..8).map(|i| b.rank(&format!("rank {i}"))).collect();
    for (i, &r) in ranks.iter().enumerate() {
        b.on(r).region(main, |o| {
            if i == 0 {
                o.region(create, |o| {
                    o.compute(185_000);
                });
            } else {
                o.compute_dist(Duration::Uniform {
                    low: 140_000,
                    high: 150_000,
                });
            }
            o.collective(Collective::Bcast, ranks[0], 64)
                .repeat(0, 10, |o| {
                    o.region(rank_keys, |o| {
                        o.compute_dist(Duration::Uniform {
                            low: 3_500,
                            high: 3_900,
                        });
                    })
                    .collective(Collective::Alltoall, 0, 64);
                });
            if i == 0 {
                o.compute(50_000);
            }
            o.collective(Collective::Reduce, ranks[0], 64);
        });
    }
    finish(b, "nas-is")
}

/// Seed 003 Fig. 8, a TSP manager and 8 workers. Every worker asks the
/// manager for a subproblem (`MinCircuit` computes it, ~8 µs); the manager
/// (`BeManager`, ~1.4 µs per request) answers whoever asks. Eight workers
/// keep the manager almost always busy, so requests queue and the critical
/// path runs through the manager far more than its CPU share says.
pub fn tsp() -> Program {
    const REQUEST: u32 = 1;
    const WORK: u32 = 2;
    let workers = 8u32;
    let rounds = 30u64;
    let mut b = ProgramBuilder::new("tsp");
    let manager_region = b.region("BeManager");
    let worker_region = b.region("MinCircuit");
    b.network(Network::ContentionFree(TransferModel {
        latency: 500,
        per_byte_ps: 0,
        copy_per_byte_ps: 0,
    }))
    .calibration(LIGHT_TIMER)
    .seed(11);
    let manager = b.rank("manager");
    let ids: Vec<LocationId> = (1..=workers)
        .map(|w| b.rank(&format!("worker {w}")))
        .collect();
    let answers = u64::from(workers) * rounds;
    b.on(manager).region(manager_region, |m| {
        m.repeat(0, answers, |m| {
            m.recv(Source::Any, 64, Some(REQUEST))
                .compute_dist(Duration::Uniform {
                    low: 1_300,
                    high: 1_500,
                })
                .reply(256, WORK);
        });
    });
    for &w in &ids {
        b.on(w).region(worker_region, |r| {
            r.repeat(1, rounds, |r| {
                r.send(manager, 64, REQUEST)
                    .recv(Source::Location(manager), 256, Some(WORK))
                    .compute_dist(Duration::Uniform {
                        low: 7_000,
                        high: 9_000,
                    });
            });
        });
    }
    finish(b, "tsp")
}

/// Seed 003 Fig. 12, a threaded Raytrace-like run: the main thread reads
/// the scene alone (`ReadGeoFile`), then spawns 4 workers and hands out 32
/// tiles on a work queue; each tile is intersected and shaded.
pub fn raytrace() -> Program {
    let workers = 4u32;
    let tiles = 32u64;
    let mut b = ProgramBuilder::new("raytrace");
    let read = b.region("ReadGeoFile");
    let intersect = b.region("IntersectHuniformPrimlist");
    let shade = b.region("Shade");
    b.network(Network::ContentionFree(TransferModel::default()))
        .calibration(LIGHT_TIMER)
        .seed(12);
    let main = b.thread("main");
    let ids: Vec<LocationId> = (1..=workers)
        .map(|w| b.spawned_thread(&format!("worker {w}")))
        .collect();
    b.on(main).region(read, |o| {
        o.compute(4_500);
    });
    for &w in &ids {
        b.on(main).op(Op::Spawn { child: w });
    }
    b.on(main).repeat(0, tiles, |o| {
        o.op(Op::Enqueue { queue: 0 });
    });
    for &w in &ids {
        b.on(main).op(Op::Join { child: w });
    }
    for &w in &ids {
        b.on(w).repeat(1, tiles / u64::from(workers), |o| {
            o.op(Op::Dequeue { queue: 0 })
                .region(intersect, |o| {
                    o.compute_dist(Duration::Uniform {
                        low: 1_200,
                        high: 1_600,
                    });
                })
                .region(shade, |o| {
                    o.compute_dist(Duration::Uniform {
                        low: 800,
                        high: 1_000,
                    });
                });
        });
    }
    finish(b, "raytrace")
}

/// Seed 003 Fig. 13, a threaded Cholesky-like run: the main thread reads
/// the matrix and computes its structure alone (`ReadSparse`, `FillInNZ`,
/// `CreateBlockedMatrix2`), then 4 workers factor it in 4 phases separated
/// by barriers. Worker 1 owns the largest blocks (the critical path goes
/// through it); the others also fetch blocks (`GetBlock`) and divide
/// (`OneDiv`) but finish each phase earlier.
pub fn cholesky() -> Program {
    let workers = 4u32;
    let mut b = ProgramBuilder::new("cholesky");
    // The first SELECTED regions are the ones whose critical-path shares
    // the kernel keeps.
    let modify = b.region("ModifyTwoBy");
    let matmat = b.region("OneMatmat");
    let get = b.region("GetBlock");
    let fill = b.region("FillInNZ");
    let read = b.region("ReadSparse");
    let create = b.region("CreateBlockedMatrix2");
    let div = b.region("OneDiv");
    b.network(Network::ContentionFree(TransferModel::default()))
        .calibration(LIGHT_TIMER)
        .seed(13);
    let main = b.thread("main");
    let ids: Vec<LocationId> = (1..=workers)
        .map(|w| b.spawned_thread(&format!("worker {w}")))
        .collect();
    for (region, ns) in [(read, 1_000), (fill, 1_200), (create, 1_100)] {
        b.on(main).region(region, |o| {
            o.compute(ns);
        });
    }
    for &w in &ids {
        b.on(main).op(Op::Spawn { child: w });
    }
    for &w in &ids {
        b.on(main).op(Op::Join { child: w });
    }
    for (i, &w) in ids.iter().enumerate() {
        b.on(w).repeat(0, 4, |o| {
            if i == 0 {
                o.region(modify, |o| {
                    o.compute(900);
                })
                .region(matmat, |o| {
                    o.compute(560);
                });
            } else {
                o.region(get, |o| {
                    o.compute(130);
                })
                .region(modify, |o| {
                    o.compute(700);
                })
                .region(matmat, |o| {
                    o.compute(470);
                })
                .region(div, |o| {
                    o.compute(100);
                });
            }
            o.op(Op::ThreadBarrier {
                barrier: 0,
                count: workers,
            });
        });
    }
    finish(b, "cholesky")
}

// ----- random programs -----------------------------------------------------------

/// [`random`] with seed 1.
pub fn random_default() -> Program {
    random(1)
}

/// A random deterministic program of seed `seed`: 2 to 6 ranks, on the
/// contention-free network the kernel knows, in phases of instrumented
/// compute, a ring exchange of nonblocking messages, a chain of blocking
/// messages, or a collective. No wildcard receives and no races, so the
/// timestamped form reproduces every true time (DESIGN §4); deadlock-free
/// by construction (every phase is matched on every rank).
// Long: one arm per random phase kind, each a short loop over the ranks; the generator reads as one recipe.
pub fn random(seed: u64) -> Program {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pick = |n: u64| rng.next_u64() % n;
    let name = format!("random-{seed}");
    let mut b = ProgramBuilder::new(&name);
    let regions: Vec<u32> = (0..3).map(|i| b.region(&format!("f{i}"))).collect();
    b.seed(seed)
        .network(Network::ContentionFree(TransferModel {
            latency: 100 + pick(900),
            per_byte_ps: pick(5_000),
            copy_per_byte_ps: 0,
        }))
        .calibration(Calibration {
            enter: Cost {
                whole: 50 + pick(200),
                inside: pick(50),
            },
            exit: Cost {
                whole: 50 + pick(200),
                inside: pick(50),
            },
            send: 0,
            merge: pick(100),
            sample: 0,
        });
    let p = 2 + pick(5) as u32;
    let ranks: Vec<LocationId> = (0..p).map(|i| b.rank(&format!("r{i}"))).collect();
    let phases = 3 + pick(6);
    let mut loops = 0;
    for phase in 0..phases {
        let tag = phase as u32;
        match pick(4) {
            0 => {
                for &r in &ranks {
                    let region = regions[pick(3) as usize];
                    let calls = 1 + pick(6);
                    let low = 100 + pick(1_000);
                    b.on(r).repeat(loops, calls, |o| {
                        o.region(region, |o| {
                            o.compute_dist(Duration::Uniform {
                                low,
                                high: low + 1_000,
                            });
                        });
                    });
                    loops += 1;
                }
            }
            1 => {
                // Ring: everybody posts, sends, works, waits.
                let bytes = 8 + pick(4_000);
                for (i, &r) in ranks.iter().enumerate() {
                    let next = ranks[(i + 1) % ranks.len()];
                    let prev = ranks[(i + ranks.len() - 1) % ranks.len()];
                    let work = pick(2_000);
                    let region = regions[pick(3) as usize];
                    b.on(r)
                        .irecv(Source::Location(prev), bytes, Some(tag), 1)
                        .isend(next, bytes, tag, 2)
                        .region(region, |o| {
                            o.compute(work);
                        })
                        .waitall();
                }
            }
            2 => {
                // Chain: r0 → r1 → … with work in between.
                for (i, &r) in ranks.iter().enumerate() {
                    let work = pick(1_500);
                    let region = regions[pick(3) as usize];
                    if i > 0 {
                        b.on(r).recv(Source::Location(ranks[i - 1]), 64, Some(tag));
                    }
                    b.on(r).region(region, |o| {
                        o.compute(work);
                    });
                    if let Some(&next) = ranks.get(i + 1) {
                        b.on(r).send(next, 64, tag);
                    }
                }
            }
            _ => {
                let kind = [
                    Collective::Barrier,
                    Collective::Bcast,
                    Collective::Gather,
                    Collective::Allreduce,
                    Collective::Reduce,
                ][pick(5) as usize];
                let root = ranks[pick(u64::from(p)) as usize];
                for &r in &ranks {
                    b.on(r).collective(kind, root, 64);
                }
            }
        }
    }
    finish(b, &name)
}

// ----- bench schedules -------------------------------------------------------------

/// LogGOPSim's dissemination schedule of `ranks` ranks as GOAL text, as
/// `schedgen` writes it (`backend-sim/scenarios/dissemination_16.goal` is
/// the 16-rank one): in round k every rank sends to rank + 2^k and
/// receives from rank - 2^k; a round's send requires the previous round's
/// receive. 65,536 ranks give the 3.1-million-event bench.
pub fn dissemination_goal(ranks: u32) -> String {
    let mut s = Vec::new();
    let _ = write_dissemination_goal(ranks, &mut s);
    String::from_utf8(s).unwrap_or_default()
}

/// [`dissemination_goal`] written to `out` as it is made (the 65,536-rank
/// text is 75 MiB).
pub fn write_dissemination_goal(ranks: u32, out: &mut impl std::io::Write) -> std::io::Result<()> {
    writeln!(out, "num_ranks {ranks}")?;
    for r in 0..ranks {
        writeln!(out, "\nrank {r} {{")?;
        let mut distance = 1;
        let mut label = 1;
        while distance < ranks {
            let to = (r + distance) % ranks;
            let from = (r + ranks - distance) % ranks;
            writeln!(out, "l{label}: send 1b to {to} tag 0")?;
            if label > 1 {
                writeln!(out, "l{label} requires l{}", label - 1)?;
            }
            writeln!(out, "l{}: recv 1b from {from} tag 0", label + 1)?;
            distance *= 2;
            label += 2;
        }
        writeln!(out, "}}")?;
    }
    Ok(())
}

/// [`dissemination_goal`] built directly as the graph the GOAL reader
/// makes of it (the same operations, dependencies and order), without
/// the text: a schedule of a million ranks would be 1.5 GB of GOAL text.
pub fn dissemination_graph(ranks: u32) -> Result<Graph, String> {
    let mut g = Graph::new();
    let (mut ops, mut edges) = (Vec::new(), Vec::new());
    for r in 0..ranks {
        ops.clear();
        edges.clear();
        let mut distance = 1;
        while distance < ranks {
            let send = ops.len() as u32;
            ops.push(goal_op(OpKind::Send, 1, (r + distance) % ranks));
            if send > 0 {
                edges.push(Edge {
                    dependent: send,
                    dependency: send - 1,
                    start: false,
                });
            }
            ops.push(goal_op(OpKind::Recv, 1, (r + ranks - distance) % ranks));
            distance = distance.saturating_mul(2);
        }
        g.add_rank(&ops, &edges)?;
    }
    Ok(g)
}

/// schedgen's binomial-tree broadcast from rank 0 (`-p
/// binomialtreebcast`), `bytes` per message, built directly as the graph
/// the GOAL reader makes of schedgen's text: rank r > 0 receives from r
/// minus its highest bit, then every rank sends to r + 2^k for each
/// 2^k above r (below `ranks`), each send requiring the receive. For a
/// power-of-two `ranks` it is exactly schedgen's graph; for others
/// schedgen writes some dependency lines twice (which changes no time).
pub fn binomial_bcast_graph(ranks: u32, bytes: u64) -> Result<Graph, String> {
    let mut g = Graph::new();
    let (mut ops, mut edges) = (Vec::new(), Vec::new());
    for r in 0..ranks {
        ops.clear();
        edges.clear();
        if r > 0 {
            let high = 1u32 << (31 - r.leading_zeros());
            ops.push(goal_op(OpKind::Recv, bytes, r - high));
        }
        let mut step: u64 = if r == 0 {
            1
        } else {
            u64::from(r).next_power_of_two()
        };
        if r > 0 && u64::from(r) == step {
            step *= 2;
        }
        while u64::from(r) + step < u64::from(ranks) {
            let send = ops.len() as u32;
            ops.push(goal_op(OpKind::Send, bytes, r + step as u32));
            if r > 0 {
                edges.push(Edge {
                    dependent: send,
                    dependency: 0,
                    start: false,
                });
            }
            step *= 2;
        }
        g.add_rank(&ops, &edges)?;
    }
    Ok(g)
}

/// A send or receive of `size` bytes with `peer`, tag 0, CPU and NIC 0.
fn goal_op(kind: OpKind, size: u64, peer: u32) -> GraphOp {
    GraphOp {
        size,
        peer,
        tag: 0,
        kind,
        cpu: 0,
        nic: 0,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn direct_graphs_are_what_the_reader_makes_of_the_text() {
        for p in [1, 2, 3, 16, 18, 64] {
            let text = dissemination_goal(p);
            let read = crate::goal::load_graph("d.goal", &text);
            assert_eq!(
                dissemination_graph(p),
                read.map_err(|e| e.to_string()),
                "{p}"
            );
        }
        for (file, p, bytes) in [
            ("binomialtreebcast-64-1.goal", 64, 1),
            ("binomialtreebcast-64-100000.goal", 64, 100_000),
            ("binomialtreebcast-8-1.goal", 8, 1),
        ] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/schedgen")
                .join(file);
            let read = crate::goal::load_file_graph(file, &path);
            assert_eq!(binomial_bcast_graph(p, bytes), read, "{file}");
        }
    }
    use super::*;

    #[test]
    fn dissemination_goal_is_the_example_schedule() {
        let file = include_str!("../scenarios/dissemination_16.goal");
        let body = |s: &str| {
            s.lines()
                .filter(|l| !l.starts_with("//") && !l.trim().is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(body(&dissemination_goal(16)), body(file));
    }
}
