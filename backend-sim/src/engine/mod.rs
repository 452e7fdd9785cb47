//! The deterministic discrete-event engine that runs a [`Program`] once —
//! as the truth (no instrumentation cost) or as the measured run (every
//! instrumentation action costs its calibrated time, R1) — with the heisen
//! kernel running online in both forms (R4, R5) inside it. State is per
//! location plus the messages in flight: memory grows with locations, not
//! with simulated time, unless a trace is requested.
//!
//! # Rooms
//!
//! Each concern has one module; calls and imports go down this list,
//! never up (a module uses only modules below it). The rooms that keep
//! state of their own (`p2p`, `collective`, `shmem`) hold it in their own
//! types and act on the shared `World`; `merge` and `instrument` add the
//! moves every room makes as methods of `World`.
//!
//! | module | what it holds |
//! |---|---|
//! | `event_loop` | pops events in `(time, seq)` order; a location's step hands each instruction to the room of its kind |
//! | `goal_loop` | the GOAL graph executor: LogGOPSim's simulator loop over a [`Graph`] (docs/goal.md) |
//! | `goal_probe` | the kernels of a GOAL graph's ranks, fed in time order: releases at sends, merges at matches (R3-R5, R11, R12) |
//! | `p2p` | sends, receives, waits: LogGOPS costs applied, messages matched, waits merged (R4, R5, R11, R12) |
//! | `collective` | collectives by call order: 1-to-n, n-to-1, n-to-n (R6) |
//! | `shmem` | locks, thread barriers, work queues, spawn, join, a location's end (R8) |
//! | `work` | compute: fixed or drawn times |
//! | `merge` | how any merge completes: kernels, CPU clock, activity graph, trace, merge cost |
//! | `instrument` | the calibrated cost of each instrumentation action (R1) and the kernels' enter/exit/loop/release calls |
//! | `result` | the [`RunResult`] assembled from the locations' final state |
//! | `world` | the locations' run state, the event queue and clock, and the moves every room makes (schedule, block, resume, record) |
//! | `machine` | the LogGOPS machine of a location (`Host`) and of a GOAL graph's ranks, several CPUs and NICs each (`Hosts`): when CPUs and NICs are free, one `on_<event>` method per event |
//! | `matching` | MPI matching: posted and unexpected queues (LogGOPSim's RQ and UQ), messages in flight; LogGOPSim's list matching for GOAL graphs (`GoalQueues`) |
//! | `requests` | a location's outstanding requests and the dependencies they collect |
//! | `record` | the trace, approximated times and activity graph kept during the run |
//! | `probe` | the kernels of a location in both forms and the records a dependency carries (R3) |
//! | `goal_rank` | a GOAL graph's dependency state: unmet dependencies, ready order, earliest times |
//! | `graph` | the compiled GOAL schedule: operations and their dependents, flat |
//! | `code` | the compiled program: 16-byte instructions |
//! | `options` | [`RunOptions`] and [`SimError`] |
//!
//! Transfer times are pure functions of the network and the message size
//! ([`crate::transfer`]); the records the analysis reads are
//! [`crate::activity`]'s.

mod code;
mod collective;
mod event_loop;
mod goal_loop;
mod goal_probe;
mod goal_rank;
mod graph;
mod instrument;
mod machine;
mod matching;
mod merge;
mod options;
mod p2p;
mod probe;
mod record;
mod requests;
mod result;
mod shmem;
mod std_sort;
#[cfg(test)]
pub(crate) mod tests;
mod work;
mod world;

pub(crate) use code::Code;
pub use code::{Compiled, call_sites, compile};
pub use goal_loop::{run_graph, run_graph_with};
pub use graph::{ANY, Edge, Graph, GraphOp, OpKind};
pub use options::{LogGopSim, MAX_CLOCK, Matching, RunOptions, SHOWN_BLOCKED, SimError};
pub use probe::{
    DEPTH, Kernel, REPORT_COMMS, REPORT_LOOPS, REPORT_REGIONS, SELECTED, SimProfile, SimReport,
};
pub use record::{TraceEvent, TraceKind};
pub use result::{Estimates, RunResult, UNRECEIVED_LISTED};

use crate::program::Program;
use event_loop::Engine;
pub use event_loop::PROGRESS;

/// Runs `program` once.
pub fn run(program: &Program, options: RunOptions) -> Result<RunResult, SimError> {
    program.validate().map_err(SimError::Program)?;
    let mut code = Code::default();
    for (i, spec) in program.locations.iter().enumerate() {
        code.add(i, &spec.body);
    }
    let mut engine = Engine::new(program, &code, options);
    engine.run()?;
    Ok(engine.finish())
}

/// [`run`], consuming the program: each location's operations are dropped
/// as soon as they are compiled ([`compile`]), so that the program and the
/// engine's compiled form of it are never both whole in memory (large
/// schedules).
pub fn run_owned(program: Program, options: RunOptions) -> Result<RunResult, SimError> {
    run_compiled(&compile(program)?, options)
}

/// Runs a compiled program once.
pub fn run_compiled(compiled: &Compiled, options: RunOptions) -> Result<RunResult, SimError> {
    let mut engine = Engine::new(&compiled.program, compiled.code(), options);
    engine.run()?;
    Ok(engine.finish())
}
