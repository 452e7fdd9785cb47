//! The built-in scenarios, each reproducing the shape of a published
//! result; `heisen scenarios` lists them and `heisen simulate NAME` runs one.

use heisen_core::{Calibration, Cost};

use crate::program::{Duration, Program, ProgramBuilder, Source};

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

/// Every built-in scenario.
pub const BUILTINS: &[Builtin] = &[Builtin {
    name: "master-worker",
    summary: "Monte-Carlo master/worker with heavy worker instrumentation (seed 000 §5, Table 1): \
              uncompensated and local-only master far above the truth, parallel compensation on it",
    build: master_worker_default,
}];

/// The built-in called `name`.
pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
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
