//! Tests of the engine through its public entry points, by room (as
//! smoltcp tests its interface layer by layer): every operation kind at
//! once, the compiled and direct paths, errors here; messages and
//! collectives in their own files. The rooms' state machines have unit
//! tests at the bottom of their own files. The fixtures here are shared
//! with the analysis' tests.

mod collective;
mod p2p;

use heisen_core::{Calibration, TransferModel};

use super::{RunOptions, SimError, TraceKind, run, run_owned};
use crate::compare::compare;
use crate::program::{Collective, Duration, Op, Program, ProgramBuilder, Source};
use crate::transfer::Network;

/// The contention-free network of the unit tests: 500 ns, no per-byte cost.
pub(crate) const FREE: Network = Network::ContentionFree(TransferModel {
    latency: 500,
    per_byte_ps: 0,
    copy_per_byte_ps: 0,
});

/// The built-ins' light timer with a send cost.
pub(crate) fn timer(send: u64) -> Calibration {
    Calibration {
        send,
        ..crate::builtin::LIGHT_TIMER
    }
}

/// r0: region f { compute 1000 }, send to r1; r1: receive, compute 200.
pub(crate) fn two_ranks(send: u64) -> Program {
    let mut b = ProgramBuilder::new("two");
    let f = b.region("f");
    b.network(FREE).calibration(timer(send));
    let (r0, r1) = (b.rank("r0"), b.rank("r1"));
    b.on(r0).region(f, |b| {
        b.compute(1000);
    });
    b.on(r0).send(r1, 100, 7);
    b.on(r1)
        .recv(Source::Location(r0), 100, Some(7))
        .compute(200);
    b.build().unwrap()
}

#[test]
fn run_owned_is_run() {
    let mut programs: Vec<Program> = crate::builtin::BUILTINS
        .iter()
        .filter_map(|b| crate::builtin::program(b.name, Some(3)))
        .collect();
    programs.push(crate::builtin::program("random", Some(5)).unwrap());
    programs.push(two_ranks(30));
    let traced = RunOptions {
        trace: true,
        ..RunOptions::MEASURED
    };
    for p in programs {
        for options in [RunOptions::TIMES, RunOptions::MEASURED, traced] {
            assert_eq!(
                run(&p, options),
                run_owned(p.clone(), options),
                "{}",
                p.name
            );
        }
    }
}

mod exactness {
    use super::*;

    /// Every operation kind, deterministic (no wildcards, no races),
    /// contention-free network, no send cost.
    fn every_kind() -> Program {
        let mut b = ProgramBuilder::new("every kind");
        let f = b.region("f");
        let g = b.region("g");
        // A merge cost too: every merge kind (and the spawned child's
        // start, which the kernel treats as one) must charge it.
        b.network(FREE)
            .calibration(Calibration {
                merge: 30,
                ..timer(0)
            })
            .seed(5);
        let ranks: Vec<u32> = (0..3).map(|i| b.rank(&format!("r{i}"))).collect();
        let t0 = b.thread("t0");
        let t1 = b.thread("t1");
        let child = b.spawned_thread("child");
        collectives(&mut b, &ranks, f, g);
        ring(&mut b, &ranks, f);
        threads(&mut b, [t0, t1, child], f, g);
        b.build().unwrap()
    }

    /// Every collective kind on every rank, between regions whose work
    /// differs per rank.
    fn collectives(b: &mut ProgramBuilder, ranks: &[u32], f: u32, g: u32) {
        for (i, &r) in ranks.iter().enumerate() {
            let i = i as u64;
            b.on(r)
                .repeat(0, 3, |b| {
                    b.region(f, |b| {
                        b.compute_dist(Duration::Uniform {
                            low: 100,
                            high: 900,
                        });
                    });
                })
                .collective(Collective::Barrier, 0, 0)
                .region(g, |b| {
                    b.compute(200 * i);
                })
                .collective(Collective::Bcast, 1, 64)
                .region(f, |b| {
                    b.compute_dist(Duration::Exponential { mean: 300.0 });
                })
                .collective(Collective::Gather, 2, 64)
                .region(f, |b| {
                    b.compute_dist(Duration::Normal {
                        mean: 500.0,
                        sd: 100.0,
                    });
                })
                .collective(Collective::Allreduce, 0, 8)
                .collective(Collective::Reduce, 0, 8)
                .region(g, |b| {
                    b.compute(100 * (3 - i));
                })
                .collective(Collective::Alltoall, 0, 8)
                .collective(Collective::Scatter, 0, 8);
        }
    }

    /// A ring of nonblocking messages.
    fn ring(b: &mut ProgramBuilder, ranks: &[u32], f: u32) {
        for (i, &r) in ranks.iter().enumerate() {
            let next = ranks[(i + 1) % 3];
            let prev = ranks[(i + 2) % 3];
            b.on(r)
                .irecv(Source::Location(prev), 8, Some(9), 1)
                .region(f, |b| {
                    b.compute(150);
                });
            b.on(r).isend(next, 8, 9, 2).waitall();
        }
    }

    /// Threads: `t0` locks first (`t1` computes longer before), `t0`
    /// enqueues, `t1` dequeues; both meet at a thread barrier; `t0` spawns
    /// and joins `child`.
    fn threads(b: &mut ProgramBuilder, [t0, t1, child]: [u32; 3], f: u32, g: u32) {
        b.on(t0)
            .op(Op::Lock { lock: 0 })
            .region(f, |b| {
                b.compute(400);
            })
            .op(Op::Unlock { lock: 0 })
            .region(g, |b| {
                b.compute(300);
            })
            .op(Op::Enqueue { queue: 0 })
            .op(Op::ThreadBarrier {
                barrier: 0,
                count: 2,
            })
            .op(Op::Spawn { child })
            .compute(100)
            .op(Op::Join { child });
        b.on(t1)
            .compute(1000)
            .op(Op::Lock { lock: 0 })
            .compute(50)
            .op(Op::Unlock { lock: 0 })
            .op(Op::Dequeue { queue: 0 })
            .region(f, |b| {
                b.compute(250);
            })
            .op(Op::ThreadBarrier {
                barrier: 0,
                count: 2,
            });
        b.on(child).region(g, |b| {
            b.compute(700);
        });
    }

    #[test]
    fn timestamped_reproduces_every_true_end_time() {
        let c = compare(&every_kind()).unwrap();
        for r in &c.rows {
            assert!(r.measured > r.truth, "{r:?}");
            assert_eq!(r.timestamped, r.truth as i64, "{r:?}\n{}", c.table());
            // R4: never earlier than the truth.
            assert!(r.delay_only >= r.truth as i64, "{r:?}");
        }
    }

    #[test]
    fn same_seed_same_run_other_seed_other_run() {
        let p = every_kind();
        assert_eq!(compare(&p).unwrap(), compare(&p).unwrap());
        let mut q = p.clone();
        q.seed = 6;
        assert_ne!(
            run(&p, RunOptions::TIMES).unwrap().ends,
            run(&q, RunOptions::TIMES).unwrap().ends
        );
    }

    #[test]
    fn trace_keeps_every_operation_when_asked() {
        let p = every_kind();
        let r = run(
            &p,
            RunOptions {
                trace: true,
                ..RunOptions::TRUTH
            },
        )
        .unwrap();
        let trace = r.trace.unwrap();
        assert!(trace.iter().any(|e| e.what == TraceKind::Enter(0)));
        assert!(trace.iter().all(|e| e.end >= e.begin));
        // The ring's messages are edges from the previous rank.
        assert!(
            trace
                .iter()
                .any(|e| e.location == 1 && e.what == TraceKind::Edge { from: 0 })
        );
        assert!(run(&p, RunOptions::TRUTH).unwrap().trace.is_none());
    }
}

mod errors {
    use super::*;

    #[test]
    fn receive_cycle_is_a_deadlock_that_names_both() {
        let mut b = ProgramBuilder::new("dead");
        let (r0, r1) = (b.rank("r0"), b.rank("r1"));
        b.on(r0).recv(Source::Location(r1), 8, None).send(r1, 8, 0);
        b.on(r1).recv(Source::Location(r0), 8, None).send(r0, 8, 0);
        let e = run(&b.build().unwrap(), RunOptions::TRUTH).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, SimError::Deadlock { .. }));
        assert!(
            text.contains("r0 waits for a message from r1 with any tag")
                && text.contains("r1 waits for a message from r0 with any tag"),
            "{text}"
        );
    }

    #[test]
    fn unlock_without_lock_and_unknown_request_are_reported() {
        let mut b = ProgramBuilder::new("bad");
        let t = b.thread("t");
        b.on(t).op(Op::Unlock { lock: 3 });
        let e = run(&b.build().unwrap(), RunOptions::TRUTH).unwrap_err();
        assert!(e.to_string().contains("unlock of lock 3"), "{e}");
        let mut b = ProgramBuilder::new("bad");
        let t = b.rank("t");
        b.on(t).wait(4);
        let e = run(&b.build().unwrap(), RunOptions::TRUTH).unwrap_err();
        assert!(e.to_string().contains("request 4"), "{e}");
    }

    #[test]
    fn bad_references_fail_validation() {
        let mut b = ProgramBuilder::new("bad");
        let r = b.rank("r");
        b.on(r).send(5, 8, 0);
        assert!(b.build().unwrap_err().contains("location 5"));
    }
}
