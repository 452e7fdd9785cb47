//! What every room of the engine acts on: the locations (program counter,
//! machine, requests, matching queues, kernels), the event queue and the
//! simulated clock, and the run's records; and the few moves every room
//! makes — schedule a location's next step, block and resume it, record
//! what it did. Two rooms add moves of their own concern as `World`
//! methods in their files: charging costs and releasing (`instrument`),
//! completing merges (`merge`).
//!
//! Events sit in a min-heap keyed by `(time, seq)`; `seq` grows with every
//! push, so ties resolve in push order and the same program gives the same
//! run, byte for byte (STYLE: smoltcp's netsim). An event that finds its
//! location's CPU or NIC busy is pushed again at the time they free up,
//! keeping its `seq`, exactly as LogGOPSim re-inserts operations.

use core::cmp::Reverse;

use heisen_core::{Calibration, Merged};
use rand_chacha::ChaCha8Rng;

use crate::activity::Step;
use crate::program::{LocationId, Program, Source};
use crate::queue::EventQueue;
use crate::transfer::Network;

use super::code::{Code, Instr};
use super::machine::Host;
use super::matching::Matching;
use super::options::RunOptions;
use super::probe::{Dep, Pbs, Probe, SELECTED};
use super::record::{Recorder, TraceKind};
use super::requests::{Requests, WaitSet};

/// What a handler leaves the location's step to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flow {
    /// Go on with the next instruction now, in the same step.
    Next,
    /// The step is over: the location blocked, or its next step (or this
    /// one again) is scheduled.
    Stop,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum EventKind {
    /// A location runs; the second field is a hint of its program counter
    /// (the event loop reads the instruction before the location).
    Step(LocationId, u32),
    /// A message (its [`InFlight`](super::matching::InFlight) slot)
    /// reaches its receiver's NIC.
    Arrive(usize),
}

/// What a blocked location waits in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Block {
    Wait { begin: u64, set: WaitSet },
    Collective { seq: u64 },
    Lock { lock: u32, begin: u64 },
    Barrier { barrier: u32 },
    Dequeue { queue: u32, begin: u64 },
    Join { child: LocationId, begin: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum State {
    NotStarted,
    Ready,
    Blocked(Block),
    Done,
}

/// One location's run state.
#[derive(Debug)]
pub(super) struct Loc {
    /// Next instruction (an index into [`Code::instrs`]).
    pub(super) pc: usize,
    /// The location's first instruction.
    pub(super) code_start: usize,
    /// One past the location's last instruction.
    pub(super) code_end: usize,
    /// Iterations left of each open loop.
    pub(super) loops: Vec<u64>,
    pub(super) state: State,
    /// When its CPU and NIC are free.
    pub(super) host: Host,
    pub(super) requests: Requests,
    pub(super) matching: Matching,
    /// Piggybacks of a release whose instrumentation cost is being paid
    /// before the operation itself goes on.
    pub(super) released: Option<(u64, Option<Pbs>)>,
    /// The enter/exit clock read already happened for the current instruction.
    pub(super) read_done: bool,
    /// The location's own ChaCha stream, made at its first random draw
    /// (304 bytes that GOAL schedules and fixed computes never need).
    pub(super) rng: Option<Box<ChaCha8Rng>>,
    /// Collectives entered so far: the next one's sequence number.
    pub(super) collectives: u64,
    pub(super) end: Option<u64>,
    /// A spawned thread's end record, for its join (R8).
    pub(super) end_pbs: Option<Pbs>,
    /// Its kernels, when they run and it has started.
    pub(super) probe: Option<Box<Probe>>,
    /// Its own instrumentation time (what local-only compensation subtracts).
    pub(super) overhead: u64,
}

impl Loc {
    /// A location whose code is `code[start..end]`, started or not.
    fn new(start: usize, end: usize, started: bool, probe: Option<Box<Probe>>) -> Self {
        Loc {
            pc: start,
            code_start: start,
            code_end: end,
            loops: Vec::new(),
            state: if started {
                State::Ready
            } else {
                State::NotStarted
            },
            host: Host::default(),
            requests: Requests::new(),
            matching: Matching::new(),
            released: None,
            read_done: false,
            rng: None,
            collectives: 0,
            end: None,
            end_pbs: None,
            probe,
            overhead: 0,
        }
    }

    /// The call site of the current instruction: its index in the
    /// location's code.
    pub(super) fn site(&self) -> u32 {
        (self.pc - self.code_start) as u32
    }

    /// The current instruction blocks the location in `block`.
    pub(super) fn block(&mut self, block: Block) {
        self.state = State::Blocked(block);
    }

    /// The current instruction blocked and is done now: the location
    /// goes on with the next.
    pub(super) fn resume(&mut self) {
        self.state = State::Ready;
        self.pc += 1;
    }

    /// The current instruction is done without blocking.
    #[inline]
    pub(super) fn advance(&mut self) {
        self.pc += 1;
    }

    /// Goes on after instruction `target` of the location's code (a loop's
    /// start or end, relative to its first instruction).
    #[inline]
    pub(super) fn jump_after(&mut self, target: u32) {
        self.pc = self.code_start + target as usize + 1;
    }

    /// A spawned location is started: it runs from its first instruction.
    pub(super) fn start(&mut self) {
        self.state = State::Ready;
    }

    /// The location ran off its code at `end`.
    pub(super) fn finish(&mut self, end: u64) {
        self.state = State::Done;
        self.end = Some(end);
        self.host.on_resume(end);
    }

    /// What a location that cannot go on waits for, in words (deadlock
    /// report).
    pub(super) fn describe(&self, name: impl Fn(LocationId) -> String) -> String {
        match &self.state {
            State::NotStarted => "was never spawned".into(),
            State::Ready => "is ready (simulator bug: nothing scheduled it)".into(),
            State::Done => "ended".into(),
            State::Blocked(Block::Wait { set, .. }) => {
                let mut what = Vec::new();
                for r in self.requests.unsatisfied(*set) {
                    if r.send {
                        what.push("a receive to match its rendezvous send".into());
                    } else {
                        let p = self.matching.posted(r.id);
                        let from = match p.map(|p| p.from) {
                            Some(Source::Location(s)) => name(s),
                            _ => "any location".into(),
                        };
                        let tag = match p.and_then(|p| p.tag) {
                            Some(t) => format!("tag {t}"),
                            None => "any tag".into(),
                        };
                        what.push(format!("a message from {from} with {tag}"));
                    }
                }
                format!("waits for {}", what.join(" and "))
            }
            State::Blocked(Block::Collective { seq }) => {
                format!("waits in collective #{seq} for the other ranks")
            }
            State::Blocked(Block::Lock { lock, .. }) => format!("waits for lock {lock}"),
            State::Blocked(Block::Barrier { barrier }) => {
                format!("waits at thread barrier {barrier}")
            }
            State::Blocked(Block::Dequeue { queue, .. }) => {
                format!("waits for an item of queue {queue}")
            }
            State::Blocked(Block::Join { child, .. }) => {
                format!("waits to join {}", name(*child))
            }
        }
    }
}

/// The state every room acts on.
#[derive(Debug)]
pub(super) struct World<'p> {
    pub(super) program: &'p Program,
    /// Every location's instructions and their operands.
    pub(super) code: &'p Code,
    pub(super) options: RunOptions,
    /// The program's calibration in the measured run, zero in the truth.
    pub(super) calibration: Calibration,
    pub(super) network: Network,
    /// The regions whose critical-path shares the kernels keep.
    pub(super) selected: [u32; SELECTED],
    pub(super) locs: Vec<Loc>,
    pub(super) queue: EventQueue<EventKind>,
    /// The next push's tie-breaker.
    seq: u64,
    /// Simulated time of the event being handled.
    pub(super) now: u64,
    /// Events handled so far.
    pub(super) events: u64,
    pub(super) recorder: Recorder,
}

impl<'p> World<'p> {
    /// Every location at its first instruction; those not spawned by
    /// another are scheduled at time 0, in location order.
    pub(super) fn new(program: &'p Program, code: &'p Code, options: RunOptions) -> Self {
        let calibration = if options.measured {
            program.calibration
        } else {
            Calibration::ZERO
        };
        let mut selected = [u32::MAX; SELECTED];
        for (k, s) in selected.iter_mut().enumerate() {
            if k < program.regions.len() {
                *s = k as u32;
            }
        }
        let mut world = World {
            program,
            code,
            options,
            calibration,
            network: program.network,
            selected,
            locs: Vec::with_capacity(program.locations.len()),
            queue: EventQueue::new(),
            seq: 0,
            now: 0,
            events: 0,
            recorder: Recorder::new(options, program.locations.len()),
        };
        for (i, spec) in program.locations.iter().enumerate() {
            let (start, end) = code.range(i);
            let started = !spec.spawned;
            let probe = (options.kernels && started)
                .then(|| Box::new(Probe::new(i as u32, selected, calibration, 0)));
            world.locs.push(Loc::new(start, end, started, probe));
            if started {
                world.push(0, EventKind::Step(i as LocationId, start as u32));
            }
        }
        world
    }

    /// Location `li`'s next instruction, `None` at its end.
    #[inline]
    pub(super) fn instr(&self, li: usize) -> Option<Instr> {
        let loc = &self.locs[li];
        (loc.pc < loc.code_end).then(|| self.code.instrs()[loc.pc])
    }

    /// Pushes a new event at `time`, after every event pushed before.
    #[inline]
    pub(super) fn push(&mut self, time: u64, kind: EventKind) {
        self.queue.push(Reverse((time, self.seq, kind)));
        self.seq += 1;
    }

    /// Pushes an event again at `time`, keeping its place `seq` among
    /// events of equal time (LogGOPSim's re-insert of an operation that
    /// found its CPU or NIC busy).
    #[inline]
    pub(super) fn reinsert(&mut self, time: u64, seq: u64, kind: EventKind) {
        self.queue.push(Reverse((time, seq, kind)));
    }

    /// Schedules `l`'s next step when its CPU is free (now, if it is).
    pub(super) fn next_step(&mut self, l: LocationId) {
        let loc = &self.locs[l as usize];
        let t = loc.host.cpu_free().max(self.now);
        let hint = loc.pc as u32;
        self.push(t, EventKind::Step(l, hint));
    }

    pub(super) fn name(&self, l: LocationId) -> String {
        self.program
            .locations
            .get(l as usize)
            .map_or_else(|| format!("location {l}"), |s| s.name.clone())
    }

    /// `l`'s timestamped kernel, when it runs.
    fn kernel(&self, l: LocationId) -> Option<&super::probe::Kernel> {
        self.locs[l as usize].probe.as_ref().map(|p| &p.timestamped)
    }

    /// Traces `what` of `l` from `begin` to `end` (when a trace is kept).
    #[inline]
    pub(super) fn record(&mut self, l: LocationId, what: TraceKind, begin: u64, end: u64) {
        self.record_merged(l, what, begin, end, None);
    }

    /// [`Self::record`], with the timestamped kernel's outcome when the
    /// event is a merge.
    #[inline]
    pub(super) fn record_merged(
        &mut self,
        l: LocationId,
        what: TraceKind,
        begin: u64,
        end: u64,
        merged: Option<Merged>,
    ) {
        if self.recorder.tracing() {
            let kernel = self.locs[l as usize].probe.as_ref().map(|p| &p.timestamped);
            self.recorder.on_event(kernel, l, what, begin, end, merged);
        }
    }

    /// Traces the dependencies of a merge of `l` as edges, from the
    /// release at their source to their arrival here (after the merge).
    pub(super) fn record_edges(&mut self, l: LocationId, deps: &[Dep]) {
        if self.recorder.tracing() {
            let end = self.kernel(l).map(|k| k.last_approximated());
            self.recorder.on_edges(end, l, deps);
        }
    }

    /// Appends a kernel event to `l`'s activity (when a graph is kept).
    pub(super) fn log(&mut self, l: LocationId, step: Step) {
        self.recorder.on_step(l, step);
    }
}
