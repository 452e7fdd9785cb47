//! The deterministic discrete-event engine that runs a [`Program`] once —
//! as the truth (no instrumentation cost) or as the measured run (every
//! instrumentation action costs its calibrated time, R1) — with the heisen
//! kernel running online in both forms (R4, R5) inside it.
//!
//! Events sit in a min-heap keyed by `(time, seq)`; `seq` grows with every
//! push, so ties resolve in push order and the same program gives the same
//! run, byte for byte (STYLE: smoltcp's netsim). An event that finds its
//! location's CPU or NIC busy is pushed again at the time they free up,
//! keeping its `seq`, exactly as LogGOPSim re-inserts operations. State is
//! per location plus the messages in flight: memory grows with locations,
//! not with simulated time, unless a trace is requested.

use core::cmp::Reverse;
use core::fmt;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use heisen_core::report::{CriticalPath, LOCATION_NAME_LEN, LocationReport, LocationValues};
use heisen_core::stats::{Communicated, Profile};
use heisen_core::{
    Calibration, Config, Dependency, Exchange, Form, KernelError, Location, Merged, Piggyback,
};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use smallvec::SmallVec;

use crate::analysis::{CpuClock, CpuTimes, Edge, LocationActivity, Step, WildcardSite, Wildcards};
use crate::program::{Collective, Dest, Duration, LocationId, Op, Program, Shape, Source, Tag};
use crate::queue::EventQueue;
use crate::transfer::Network;

/// Number of selected regions whose critical-path shares and nets travel
/// in every piggyback: the first `SELECTED` regions of the program, in
/// program order (003 §2.2: the profile covers a selected set). 16 covers
/// every built-in scenario; a program with more regions gets an online
/// profile of its first 16, says so
/// ([`CpProfile::uncovered`](crate::analysis::CpProfile::uncovered)), and
/// the offline analysis of the truth still covers all of them.
pub const SELECTED: usize = 16;
/// Region-stack capacity of each kernel location (R12); deeper frames are
/// counted by the kernel, not kept. With `SELECTED = 16`, 32 frames make a
/// kernel 2.3 KiB (it was 3.4 KiB with 4 regions and 64 frames); a
/// location keeps two, one per form. Measured on a 1,024-rank sendrecv
/// and allreduce run with kernels on, 16 regions cost about a quarter of
/// the engine's speed against 4 (merges are O(K)) and no memory; on the
/// enter/exit-heavy master/worker no measurable speed.
pub const DEPTH: usize = 32;

/// Region records per location in a run's report (R12).
pub const REPORT_REGIONS: usize = 32;
/// Communication records per location in a run's report: one per
/// point-to-point call site and peer (R12).
pub const REPORT_COMMS: usize = 32;
/// Loop records per location in a run's report (R12).
pub const REPORT_LOOPS: usize = 16;
/// The bounded statistics the timestamped kernel's exits fill (R12).
pub type SimProfile = Profile<REPORT_REGIONS, REPORT_COMMS, REPORT_LOOPS>;
/// One location's report in the core's report format (`docs/report.md`).
pub type SimReport = LocationReport<SELECTED, REPORT_REGIONS, REPORT_COMMS, REPORT_LOOPS>;

/// The kernel location type the simulator drives.
pub type Kernel = Location<SELECTED, DEPTH>;

/// Why a run could not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// The program is inconsistent (unknown request, unlock of a free lock…).
    Program(String),
    /// Some locations can never go on.
    Deadlock {
        /// Simulated time when nothing was left to do.
        time: u64,
        /// Each blocked location and what it waits for.
        blocked: Vec<String>,
    },
    /// The kernel refused an event (a simulator bug; reported, not hidden).
    Kernel {
        /// Location name.
        location: String,
        /// The kernel's error.
        error: KernelError,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Program(s) => write!(f, "{s}"),
            SimError::Deadlock { time, blocked } => {
                write!(f, "deadlock at {time} ns: the program blocks forever; ")?;
                write!(f, "{}", blocked.join("; "))
            }
            SimError::Kernel { location, error } => {
                write!(f, "kernel refused an event of {location}: {error}")
            }
        }
    }
}

impl core::error::Error for SimError {}

/// How to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Charge the program's calibration for every instrumentation action.
    pub measured: bool,
    /// Run the kernel online (both forms) at every location.
    pub kernels: bool,
    /// Keep one [`TraceEvent`] per operation.
    pub trace: bool,
}

impl RunOptions {
    /// The truth: no instrumentation cost, kernels on (their path is the
    /// truth's), no trace.
    pub const TRUTH: RunOptions = RunOptions {
        measured: false,
        kernels: true,
        trace: false,
    };
    /// The measured run with kernels.
    pub const MEASURED: RunOptions = RunOptions {
        measured: true,
        kernels: true,
        trace: false,
    };
    /// Times only (GOAL schedules, benches).
    pub const TIMES: RunOptions = RunOptions {
        measured: false,
        kernels: false,
        trace: false,
    };
}

/// One operation as it happened, kept only when a trace is requested.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// The location.
    pub location: LocationId,
    /// What happened.
    pub what: TraceKind,
    /// When it began.
    pub begin: u64,
    /// When it ended (equal to `begin` for instantaneous events).
    pub end: u64,
}

/// Kinds of [`TraceEvent`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// Region entered (its id).
    Enter(u32),
    /// Region left (its id).
    Exit(u32),
    /// Compute.
    Compute,
    /// A send started (its destination).
    Send(LocationId),
    /// A merge (wait, lock, dequeue, join, collective) from begin to end.
    Merge,
    /// Instrumentation overhead.
    Overhead,
    /// A dependency of the merge that follows: released by `from` at
    /// `begin`, satisfied here at `end` (an edge of the activity graph;
    /// recorded when kernels run, since the piggyback names the source).
    Edge {
        /// The releasing location.
        from: LocationId,
    },
}

/// What the kernels say about one location at its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimates {
    /// Measured end (no compensation).
    pub measured: u64,
    /// Measured end minus the location's own overhead (TAU-style local-only).
    pub local_only: i64,
    /// Approximated end by the delay-only form (R4).
    pub delay_only: i64,
    /// Approximated end by the timestamped form (R5).
    pub timestamped: i64,
    /// The location's own instrumentation overhead.
    pub overhead: u64,
}

/// The outcome of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// End time of every location.
    pub ends: Vec<u64>,
    /// Events processed.
    pub events: u64,
    /// Kernel estimates per location (when kernels ran).
    pub estimates: Option<Vec<Estimates>>,
    /// Online critical path (timestamped form) per location at its end.
    pub paths: Option<Vec<heisen_core::Snapshot<SELECTED>>>,
    /// Per-operation trace, when requested.
    pub trace: Option<Vec<TraceEvent>>,
    /// Per location, the timestamped kernel's report (R12 statistics, final
    /// delay, critical path), when kernels ran.
    pub reports: Option<Vec<SimReport>>,
    /// The approximated begin and end (timestamped form, `a = t - x`) of
    /// every trace event, index for index, when a trace was kept with
    /// kernels. Overhead events have no meaning here.
    pub approximated: Option<Vec<(i64, i64)>>,
    /// Per location, its kernel events as the activity graph of the run
    /// ([`crate::analysis`]), when a trace was kept with kernels.
    pub activity: Option<Vec<LocationActivity>>,
    /// Per location, CPU time per region id from the timestamped kernel's
    /// times (waiting excluded), when kernels ran.
    pub cpu: Option<Vec<CpuTimes>>,
    /// Wildcard receive call sites with their matches and the reorderings
    /// the timestamped kernel's approximated arrivals reveal (R11).
    pub wildcards: Vec<WildcardSite>,
}

/// Runs `program` once.
pub fn run(program: &Program, options: RunOptions) -> Result<RunResult, SimError> {
    program.validate().map_err(SimError::Program)?;
    let mut code = Code::default();
    for (i, spec) in program.locations.iter().enumerate() {
        code.add(i, &spec.body);
    }
    let mut engine = Engine::new(program, &code, options)?;
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
    let mut engine = Engine::new(&compiled.program, &compiled.code, options)?;
    engine.run()?;
    Ok(engine.finish())
}

/// Checks `program` and compiles it for the engine, location by location,
/// dropping each location's operations once they are compiled.
pub fn compile(mut program: Program) -> Result<Compiled, SimError> {
    program.validate_header().map_err(SimError::Program)?;
    let mut code = Code::default();
    for i in 0..program.locations.len() {
        program.validate_location(i).map_err(SimError::Program)?;
        let body = core::mem::take(&mut program.locations[i].body);
        code.add(i, &body);
    }
    code.shrink();
    Ok(Compiled { program, code })
}

/// A program compiled for the engine ([`compile`]): its header — names,
/// regions, network, calibration, seed; every location's `body` is empty —
/// and the instructions of every location in one flat list of 16-byte
/// instructions, so that a large schedule costs one allocation and no
/// per-location vectors. Change `program.network` or `program.seed` freely
/// before a run: the instructions do not depend on them.
#[derive(Clone, Debug, PartialEq)]
pub struct Compiled {
    /// The program without its operations.
    pub program: Program,
    code: Code,
}

impl Compiled {
    pub(crate) fn new(program: Program, code: Code) -> Self {
        Compiled { program, code }
    }
}

/// Two compiled programs are equal when every location's code is, wherever
/// it lies in the list and whatever the order its operands were interned.
impl PartialEq for Code {
    fn eq(&self, other: &Self) -> bool {
        self.durations == other.durations
            && self.ranges.len() == other.ranges.len()
            && (0..self.ranges.len()).all(|l| {
                let (a, b) = (self.of(l), other.of(l));
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| self.operand(x) == other.operand(y))
            })
    }
}

/// Compiles locations in any order into one flat instruction list.
#[derive(Clone, Debug, Default)]
pub(crate) struct Code {
    instrs: Vec<Instr>,
    /// Location `i`'s instructions are `instrs[ranges[i].0..ranges[i].1]`.
    ranges: Vec<(usize, usize)>,
    /// The compute times drawn at random, indexed by [`Instr::Draw`].
    durations: Vec<Duration>,
    /// Message tags and sizes, indexed by [`Instr::Isend`] and
    /// [`Instr::Irecv`] (a program has few distinct ones).
    shapes: Vec<MessageShape>,
    /// Loop counts, indexed by [`Instr::LoopStart`].
    counts: Vec<u64>,
    /// Where each shape is in `shapes`, while compiling.
    interned: HashMap<MessageShape, u32>,
}

/// A message's tag (`None`: a receive's any tag) and size (0 on a
/// receive), kept beside the code so that an instruction takes 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct MessageShape {
    tag: Tag,
    bytes: u64,
}

impl Code {
    /// Compiles location `l`'s operations (a location never added runs
    /// nothing).
    pub(crate) fn add(&mut self, l: usize, body: &[Op]) {
        let start = self.instrs.len();
        self.compile(body, start);
        if self.ranges.len() <= l {
            self.ranges.resize(l + 1, (0, 0));
        }
        self.ranges[l] = (start, self.instrs.len());
    }

    /// Location `l`'s instructions.
    fn of(&self, l: usize) -> &[Instr] {
        let (start, end) = self.ranges[l];
        &self.instrs[start..end]
    }

    /// An instruction with what its operand indices name.
    fn operand(&self, i: &Instr) -> (Instr, Option<MessageShape>, Option<u64>) {
        let shape = |s: u32| Some(self.shapes[s as usize]);
        match *i {
            Instr::Isend {
                to,
                request,
                shape: s,
            } => (
                Instr::Isend {
                    to,
                    request,
                    shape: 0,
                },
                shape(s),
                None,
            ),
            Instr::Irecv {
                from,
                request,
                shape: s,
            } => (
                Instr::Irecv {
                    from,
                    request,
                    shape: 0,
                },
                shape(s),
                None,
            ),
            Instr::LoopStart { id, count, end } => (
                Instr::LoopStart { id, count: 0, end },
                None,
                Some(self.counts[count as usize]),
            ),
            other => (other, None, None),
        }
    }

    /// Releases spare capacity once every location is in.
    pub(crate) fn shrink(&mut self) {
        self.instrs.shrink_to_fit();
        self.ranges.shrink_to_fit();
        self.interned = HashMap::new();
    }

    fn shape(&mut self, tag: Tag, bytes: u64) -> u32 {
        let shape = MessageShape { tag, bytes };
        *self.interned.entry(shape).or_insert_with(|| {
            self.shapes.push(shape);
            (self.shapes.len() - 1) as u32
        })
    }

    fn isend(&mut self, to: Dest, bytes: u64, tag: u32, request: Req) -> Instr {
        Instr::Isend {
            to: match to {
                Dest::Location(t) => t,
                Dest::LastSource => LAST_SOURCE,
            },
            request,
            shape: self.shape(Some(tag), bytes),
        }
    }

    fn irecv(&mut self, from: Source, tag: Tag, request: Req) -> Instr {
        Instr::Irecv {
            from: match from {
                Source::Location(f) => f,
                Source::Any => ANY_SOURCE,
            },
            request,
            shape: self.shape(tag, 0),
        }
    }

    /// Appends `ops` to the code of a location that starts at `base` (loop
    /// targets are relative to it, so that a location's code reads the
    /// same wherever it lies).
    fn compile(&mut self, ops: &[Op], base: usize) {
        for op in ops {
            let instr = match op {
                Op::Region { region, body } => {
                    self.instrs.push(Instr::Enter(*region));
                    self.compile(body, base);
                    Instr::Exit(*region)
                }
                Op::Loop { id, count, body } => {
                    let start = self.instrs.len();
                    self.counts.push(*count);
                    let count = (self.counts.len() - 1) as u32;
                    self.instrs.push(Instr::LoopStart {
                        id: *id,
                        count,
                        end: 0,
                    });
                    self.compile(body, base);
                    let end = (self.instrs.len() - base) as u32;
                    self.instrs[start] = Instr::LoopStart {
                        id: *id,
                        count,
                        end,
                    };
                    Instr::LoopEnd {
                        id: *id,
                        start: (start - base) as u32,
                    }
                }
                Op::Compute(Duration::Fixed(ns)) => Instr::Compute(*ns),
                Op::Compute(d) => {
                    self.durations.push(*d);
                    Instr::Draw((self.durations.len() - 1) as u32)
                }
                Op::Send { to, bytes, tag } => {
                    let send = self.isend(*to, *bytes, *tag, Req::internal(0));
                    self.instrs.push(send);
                    Instr::Wait(Req::internal(0), None)
                }
                Op::Recv { from, tag, .. } => {
                    let recv = self.irecv(*from, *tag, Req::internal(0));
                    self.instrs.push(recv);
                    Instr::Wait(Req::internal(0), None)
                }
                Op::Isend {
                    to,
                    bytes,
                    tag,
                    request,
                } => self.isend(*to, *bytes, *tag, Req::user(*request)),
                Op::Irecv {
                    from, tag, request, ..
                } => self.irecv(*from, *tag, Req::user(*request)),
                Op::Wait { request } => Instr::Wait(Req::user(*request), None),
                Op::WaitAll => Instr::WaitAll,
                Op::Sendrecv {
                    to,
                    send_bytes,
                    from,
                    tag,
                    ..
                } => {
                    let recv = self.irecv(*from, Some(*tag), Req::internal(1));
                    self.instrs.push(recv);
                    let send = self.isend(*to, *send_bytes, *tag, Req::internal(0));
                    self.instrs.push(send);
                    Instr::Wait(Req::internal(0), Some(Req::internal(1)))
                }
                Op::Collective { kind, root, bytes } => Instr::Collective {
                    kind: *kind,
                    root: *root,
                    bytes: *bytes,
                },
                Op::Lock { lock } => Instr::Lock(*lock),
                Op::Unlock { lock } => Instr::Unlock(*lock),
                Op::ThreadBarrier { barrier, count } => Instr::ThreadBarrier {
                    barrier: *barrier,
                    count: *count,
                },
                Op::Enqueue { queue } => Instr::Enqueue(*queue),
                Op::Dequeue { queue } => Instr::Dequeue(*queue),
                Op::Spawn { child } => Instr::Spawn(*child),
                Op::Join { child } => Instr::Join(*child),
            };
            self.instrs.push(instr);
        }
    }
}

// ----- compiled form ---------------------------------------------------------

/// A request name in 4 bytes: the user's (up to
/// [`MAX_REQUEST`](crate::program::MAX_REQUEST)), or one of the two a
/// blocking call uses (the top bit set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Req(u32);

impl Req {
    const INTERNAL: u32 = 1 << 31;

    /// The user's request `n`.
    const fn user(n: u32) -> Self {
        Req(n & !Self::INTERNAL)
    }

    /// A blocking call's own request `n` (0 or 1).
    const fn internal(n: u32) -> Self {
        Req(n | Self::INTERNAL)
    }
}

/// One instruction of the engine, 16 bytes: operands wider than that sit
/// beside the code ([`Code`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Instr {
    Enter(u32),
    Exit(u32),
    /// `count` indexes [`Code::counts`]; `end` is the matching
    /// [`Instr::LoopEnd`], relative to the location's first instruction.
    LoopStart {
        id: u32,
        count: u32,
        end: u32,
    },
    /// `start` is the matching [`Instr::LoopStart`], relative.
    LoopEnd {
        id: u32,
        start: u32,
    },
    /// CPU work of a fixed time (ns).
    Compute(u64),
    /// CPU work drawn from [`Code::durations`]`[i]`.
    Draw(u32),
    /// `to` is [`LAST_SOURCE`] for [`Dest::LastSource`]; `shape` indexes
    /// [`Code::shapes`] (tag and bytes).
    Isend {
        to: u32,
        request: Req,
        shape: u32,
    },
    /// `from` is [`ANY_SOURCE`] for [`Source::Any`]; `shape` indexes
    /// [`Code::shapes`] (the tag).
    Irecv {
        from: u32,
        request: Req,
        shape: u32,
    },
    /// Waits for one request, or two (a sendrecv's).
    Wait(Req, Option<Req>),
    WaitAll,
    Collective {
        kind: Collective,
        root: LocationId,
        bytes: u64,
    },
    Lock(u32),
    Unlock(u32),
    ThreadBarrier {
        barrier: u32,
        count: u32,
    },
    Enqueue(u32),
    Dequeue(u32),
    Spawn(LocationId),
    Join(LocationId),
}

const _: () = assert!(size_of::<Instr>() == 16);
const _: () = assert!(size_of::<Request>() == 56);

/// An [`Instr::Irecv`]'s `from` as a source.
fn source(from: u32) -> Source {
    if from == ANY_SOURCE {
        Source::Any
    } else {
        Source::Location(from)
    }
}

/// [`Instr::Isend`]'s `to` for [`Dest::LastSource`] (locations are fewer).
const LAST_SOURCE: u32 = u32::MAX;
/// [`Instr::Irecv`]'s `from` for [`Source::Any`].
const ANY_SOURCE: u32 = u32::MAX;

// ----- kernels ---------------------------------------------------------------

/// The piggybacks of both forms that one dependency carries (R3), shared
/// (not copied) between the places that keep it, so that a message or a
/// posted receive costs a pointer, not two records, when kernels are off.
type Pbs = Rc<Records>;

/// The piggybacks of both forms that one dependency carries (R3).
#[derive(Clone, Copy, Debug)]
struct Records {
    /// Names the release in the activity graph ([`Step::Release`]).
    id: u64,
    timestamped: Piggyback<SELECTED>,
    delay_only: Piggyback<SELECTED>,
}

/// A dependency as the engine stores it until the merge.
#[derive(Clone, Debug)]
struct Dep {
    pbs: Pbs,
    model: u64,
    copy: u64,
    /// When the dependency was satisfied at the merging location: the
    /// kernel measures each transfer from it (R5 with several dependencies)
    /// and the trace draws its edge there.
    arrived: u64,
}

/// The kernels of one location: both merge forms side by side.
#[derive(Clone, Debug)]
struct Probe {
    timestamped: Kernel,
    delay_only: Kernel,
    /// The timestamped kernel's exits, for the report (R12).
    profile: SimProfile,
    /// CPU time per region from the timestamped kernel's times.
    cpu: CpuClock,
    /// Wildcard matches and reorderings (R11), once there is one.
    wildcards: Option<Box<Wildcards>>,
    /// Next release id of this location.
    next_release: u64,
}

impl Probe {
    fn new(id: u32, selected: [u32; SELECTED], calibration: Calibration, start: u64) -> Self {
        let config = Config::new(id, selected).calibration(calibration);
        Probe {
            timestamped: Location::new(config.form(Form::Timestamped), start),
            delay_only: Location::new(config.form(Form::DelayOnly), start),
            profile: SimProfile::new(),
            cpu: CpuClock::new(start as i64),
            wildcards: None,
            next_release: u64::from(id) << 32,
        }
    }

    fn next_id(&mut self) -> u64 {
        self.next_release += 1;
        self.next_release
    }

    fn both<T>(
        &mut self,
        mut f: impl FnMut(&mut Kernel) -> Result<T, KernelError>,
    ) -> Result<(T, T), KernelError> {
        let a = f(&mut self.timestamped)?;
        let b = f(&mut self.delay_only)?;
        Ok((a, b))
    }

    fn release(&mut self, t: u64) -> Result<Pbs, KernelError> {
        let (timestamped, delay_only) = self.both(|k| k.on_release(t))?;
        Ok(Rc::new(Records {
            id: self.next_id(),
            timestamped,
            delay_only,
        }))
    }

    fn peek(&mut self, t: u64) -> Pbs {
        Rc::new(Records {
            id: self.next_id(),
            timestamped: self.timestamped.peek(t),
            delay_only: self.delay_only.peek(t),
        })
    }

    /// Both forms merge; returns the timestamped form's outcome.
    fn merge(&mut self, begin: u64, end: u64, deps: &[Dep]) -> Result<Merged, KernelError> {
        let ts: Vec<Dependency<'_, SELECTED>> = deps
            .iter()
            .map(|d| Dependency::message(&d.pbs.timestamped, d.model, d.copy).arrived(d.arrived))
            .collect();
        let merged = self.timestamped.on_merge(begin, end, &ts)?;
        let dly: Vec<Dependency<'_, SELECTED>> = deps
            .iter()
            .map(|d| Dependency::message(&d.pbs.delay_only, d.model, d.copy).arrived(d.arrived))
            .collect();
        self.delay_only.on_merge(begin, end, &dly)?;
        Ok(merged)
    }

    /// Completes an n-to-n collective given the reduction of every
    /// participant's entry record, one per form (R6).
    fn collective(
        &mut self,
        begin: u64,
        end: u64,
        folded: &(Exchange<SELECTED>, Exchange<SELECTED>),
    ) -> Result<Merged, KernelError> {
        let merged = self.timestamped.on_collective(begin, end, &folded.0)?;
        self.delay_only.on_collective(begin, end, &folded.1)?;
        Ok(merged)
    }
}

// ----- runtime state ---------------------------------------------------------

/// An outstanding request: 56 bytes, its dependencies (kernels only) are
/// kept apart in [`Loc::deps`].
#[derive(Clone, Debug)]
struct Request {
    id: u64,
    name: Req,
    /// A rendezvous send (otherwise a receive).
    send: bool,
    /// A receive from any source (R11).
    wildcard: bool,
    /// When the dependency was satisfied (message handled, send matched).
    satisfied: Option<u64>,
    /// Call site of the send or receive (R11, R12).
    site: u32,
    /// A send's destination; a receive's source, once matched.
    peer: Option<LocationId>,
    /// Bytes of the message (a receive's once matched).
    bytes: u64,
}

#[derive(Clone, Debug)]
struct Posted {
    request: u64,
    from: Source,
    tag: Tag,
    pbs: Option<Pbs>,
}

#[derive(Clone, Debug)]
struct Message {
    from: LocationId,
    to: LocationId,
    tag: u32,
    bytes: u64,
    rendezvous: bool,
    send_request: u64,
    pbs: Option<Pbs>,
    /// When the receiver handled the arrival (set once handled).
    handled: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Block {
    Wait { begin: u64, set: WaitSet },
    Collective { seq: u64 },
    Lock { lock: u32, begin: u64 },
    Barrier { barrier: u32 },
    Dequeue { queue: u32, begin: u64 },
    Join { child: LocationId, begin: u64 },
}

/// Which requests a wait waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WaitSet {
    /// Up to two requests by id.
    Ids([u64; 2], usize),
    /// Every outstanding request.
    All,
}

impl WaitSet {
    fn contains(self, id: u64) -> bool {
        match self {
            WaitSet::All => true,
            WaitSet::Ids(ids, n) => ids[..n.min(2)].contains(&id),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    NotStarted,
    Ready,
    Blocked(Block),
    Done,
}

/// A list whose first few elements live inline in [`Loc`]: most locations
/// have at most a couple of requests at a time, and keeping them in the
/// location spares a heap allocation per location (a 65,536-rank
/// schedule's run state) and a cache miss per arrival.
type Inline<T, const N: usize> = SmallVec<[T; N]>;

/// A list in arrival order whose first element lives inline: most
/// locations have at most one request, posted receive or unexpected
/// message at a time, and keeping it in [`Loc`] spares a heap allocation
/// per location and a cache miss per arrival. Invariant: `rest` is empty
/// when `head` is `None`.
#[derive(Debug)]
struct Small<T> {
    head: Option<T>,
    rest: VecDeque<T>,
}

impl<T> Small<T> {
    const fn new() -> Self {
        Small {
            head: None,
            rest: VecDeque::new(),
        }
    }

    fn push(&mut self, x: T) {
        if self.head.is_none() {
            self.head = Some(x);
        } else {
            self.rest.push_back(x);
        }
    }

    fn iter(&self) -> impl Iterator<Item = &T> {
        self.head.iter().chain(self.rest.iter())
    }

    /// Removes and returns the `i`-th element, keeping the order.
    fn remove(&mut self, i: usize) -> Option<T> {
        if i == 0 {
            let head = self.head.take();
            self.head = self.rest.pop_front();
            head
        } else {
            self.rest.remove(i - 1)
        }
    }
}

#[derive(Debug)]
struct Loc {
    /// Next instruction (an index into [`Code::instrs`]).
    pc: usize,
    /// The location's first instruction.
    code_start: usize,
    /// One past the location's last instruction.
    code_end: usize,
    loops: Vec<u64>,
    state: State,
    cpu_free: u64,
    send_nic_free: u64,
    recv_nic_free: u64,
    requests: Inline<Request, 2>,
    /// Dependencies of satisfied requests, by request id, until the wait
    /// merges them (kernels only).
    deps: Vec<(u64, Dep)>,
    /// A rendezvous send's own record and wire time, by request id, until
    /// it is matched (kernels only).
    own_sends: Vec<(u64, Pbs, u64)>,
    posted: Small<Posted>,
    /// Names of eager sends not waited for yet (complete already).
    done_sends: Inline<Req, 4>,
    unexpected: Small<Message>,
    last_source: Option<LocationId>,
    /// Piggybacks of a release whose instrumentation cost is being paid
    /// before the operation itself goes on.
    released: Option<(u64, Option<Pbs>)>,
    /// The enter/exit clock read already happened for the current instruction.
    read_done: bool,
    /// The location's own ChaCha stream, made at its first random draw
    /// (304 bytes that GOAL schedules and fixed computes never need).
    rng: Option<Box<ChaCha8Rng>>,
    collectives: u64,
    end: Option<u64>,
    end_pbs: Option<Pbs>,
    probe: Option<Box<Probe>>,
    overhead: u64,
}

impl Loc {
    /// The call site of the current instruction: its index in the
    /// location's code.
    fn site(&self) -> u32 {
        (self.pc - self.code_start) as u32
    }
}

#[derive(Debug)]
struct CollectiveState {
    kind: Collective,
    root: LocationId,
    arrived: Vec<(LocationId, u64, Option<Pbs>)>,
    /// 1-to-n: the root's departure and record, once it arrived.
    root_release: Option<(u64, Option<Pbs>)>,
    /// n-to-1: the non-roots' departures.
    releases: Vec<(u64, Option<Pbs>)>,
    /// n-to-1: the root, once it waits: (begin).
    root_waiting: Option<u64>,
}

#[derive(Debug, Default)]
struct LockState {
    holder: Option<LocationId>,
    last_release: Option<(u64, Option<Pbs>)>,
    waiters: VecDeque<LocationId>,
}

#[derive(Debug, Default)]
struct QueueState {
    items: VecDeque<(u64, Option<Pbs>)>,
    waiters: VecDeque<LocationId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum EventKind {
    /// A location runs; the second field is a hint of its program counter
    /// ([`Engine::step`]).
    Step(LocationId, u32),
    Arrive(usize),
}

#[derive(Debug)]
struct Engine<'p> {
    program: &'p Program,
    /// Every location's instructions and their operands.
    code: &'p Code,
    /// Some message of the program is sent by rendezvous on its network.
    rendezvous: bool,
    options: RunOptions,
    calibration: Calibration,
    network: Network,
    world: Vec<LocationId>,
    locs: Vec<Loc>,
    heap: EventQueue<EventKind>,
    seq: u64,
    now: u64,
    events: u64,
    messages: Vec<Option<Message>>,
    free_messages: Vec<usize>,
    next_request: u64,
    collectives: HashMap<u64, CollectiveState>,
    locks: HashMap<u32, LockState>,
    barriers: HashMap<u32, Vec<(LocationId, u64, Option<Pbs>)>>,
    queues: HashMap<u32, QueueState>,
    trace: Option<Vec<TraceEvent>>,
    approximated: Option<Vec<(i64, i64)>>,
    /// The activity graph, kept with a trace when kernels run.
    activity: Option<Vec<LocationActivity>>,
    selected: [u32; SELECTED],
}

impl<'p> Engine<'p> {
    fn new(program: &'p Program, code: &'p Code, options: RunOptions) -> Result<Self, SimError> {
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
        let mut engine = Engine {
            program,
            code,
            rendezvous: code
                .shapes
                .iter()
                .any(|s| program.network.message(s.bytes).rendezvous),
            options,
            calibration,
            network: program.network,
            world: program.ranks(),
            locs: Vec::with_capacity(program.locations.len()),
            heap: EventQueue::new(),
            seq: 0,
            now: 0,
            events: 0,
            messages: Vec::new(),
            free_messages: Vec::new(),
            next_request: 0,
            collectives: HashMap::new(),
            locks: HashMap::new(),
            barriers: HashMap::new(),
            queues: HashMap::new(),
            trace: options.trace.then(Vec::new),
            approximated: (options.trace && options.kernels).then(Vec::new),
            activity: (options.trace && options.kernels)
                .then(|| vec![LocationActivity::default(); program.locations.len()]),
            selected,
        };
        for (i, spec) in program.locations.iter().enumerate() {
            let (pc, code_end) = code.ranges.get(i).copied().unwrap_or((0, 0));
            let started = !spec.spawned;
            engine.locs.push(Loc {
                pc,
                code_start: pc,
                code_end,
                loops: Vec::new(),
                state: if started {
                    State::Ready
                } else {
                    State::NotStarted
                },
                cpu_free: 0,
                send_nic_free: 0,
                recv_nic_free: 0,
                requests: Inline::new(),
                deps: Vec::new(),
                own_sends: Vec::new(),
                posted: Small::new(),
                done_sends: Inline::new(),
                unexpected: Small::new(),
                last_source: None,
                released: None,
                read_done: false,
                rng: None,
                collectives: 0,
                end: None,
                end_pbs: None,
                probe: (options.kernels && started)
                    .then(|| Box::new(Probe::new(i as u32, selected, calibration, 0))),
                overhead: 0,
            });
            if started {
                engine.push(0, EventKind::Step(i as LocationId, pc as u32));
            }
        }
        Ok(engine)
    }

    /// Location `li`'s next instruction, `None` at its end.
    fn instr(&self, li: usize) -> Option<Instr> {
        let loc = &self.locs[li];
        (loc.pc < loc.code_end).then(|| self.code.instrs[loc.pc])
    }

    fn push(&mut self, time: u64, kind: EventKind) {
        self.heap.push(Reverse((time, self.seq, kind)));
        self.seq += 1;
    }

    fn name(&self, l: LocationId) -> String {
        self.program
            .locations
            .get(l as usize)
            .map_or_else(|| format!("location {l}"), |s| s.name.clone())
    }

    /// Records the dependencies of a merge as edges of the activity graph:
    /// from the release at their source to their arrival here.
    fn record_edges(&mut self, location: LocationId, deps: &[Dep]) {
        if let Some(t) = &mut self.trace {
            // Called after the merge: the edge ends at the merge's a(e).
            let end_a = self.locs[location as usize]
                .probe
                .as_ref()
                .map(|p| p.timestamped.last_approximated());
            for d in deps {
                let p = &d.pbs.timestamped;
                t.push(TraceEvent {
                    location,
                    what: TraceKind::Edge { from: p.location },
                    begin: p.measured().max(0) as u64,
                    end: d.arrived,
                });
                if let Some(a) = &mut self.approximated {
                    a.push((p.approximated, end_a.unwrap_or(d.arrived as i64)));
                }
            }
        }
    }

    fn record(&mut self, location: LocationId, what: TraceKind, begin: u64, end: u64) {
        self.record_merged(location, what, begin, end, None);
    }

    /// [`Self::record`], with the timestamped kernel's outcome when the
    /// event is a merge: its approximated wait is `[a(e) - w', a(e)]`.
    fn record_merged(
        &mut self,
        location: LocationId,
        what: TraceKind,
        begin: u64,
        end: u64,
        merged: Option<Merged>,
    ) {
        if let Some(t) = &mut self.trace {
            t.push(TraceEvent {
                location,
                what,
                begin,
                end,
            });
            if let Some(a) = &mut self.approximated {
                let kernel = self.locs[location as usize]
                    .probe
                    .as_ref()
                    .map(|p| &p.timestamped);
                a.push(approximate(kernel, what, begin, end, merged));
            }
        }
    }

    fn run(&mut self) -> Result<(), SimError> {
        while let Some(Reverse((time, seq, kind))) = self.heap.pop() {
            self.now = time;
            self.events += 1;
            match kind {
                EventKind::Step(l, hint) => self.step(l, hint, seq)?,
                EventKind::Arrive(m) => self.arrive(m, seq)?,
            }
        }
        let blocked: Vec<String> = self
            .locs
            .iter()
            .enumerate()
            .filter(|(_, l)| l.state != State::Done)
            .map(|(i, l)| {
                format!(
                    "{} {}",
                    self.name(i as LocationId),
                    describe(l, |x| self.name(x))
                )
            })
            .collect();
        if blocked.is_empty() {
            Ok(())
        } else {
            Err(SimError::Deadlock {
                time: self.now,
                blocked,
            })
        }
    }

    fn finish(self) -> RunResult {
        let ends: Vec<u64> = self.locs.iter().map(|l| l.end.unwrap_or(0)).collect();
        let estimates = self.options.kernels.then(|| {
            self.locs
                .iter()
                .map(|l| {
                    let end = l.end.unwrap_or(0);
                    let (ts, dly) = l
                        .probe
                        .as_ref()
                        .map_or((0, 0), |p| (p.timestamped.delay(), p.delay_only.delay()));
                    Estimates {
                        measured: end,
                        local_only: end as i64 - l.overhead as i64,
                        delay_only: end as i64 - dly as i64,
                        timestamped: end as i64 - ts as i64,
                        overhead: l.overhead,
                    }
                })
                .collect()
        });
        let paths = self.options.kernels.then(|| {
            self.locs
                .iter()
                .map(|l| {
                    // R7: the path at the location's end, trailing work included.
                    l.probe.as_ref().map_or(heisen_core::Snapshot::ZERO, |p| {
                        let end = l.end.unwrap_or(0).max(p.timestamped.last_measured());
                        heisen_core::Snapshot::of_piggyback(&p.timestamped.peek(end))
                            .unwrap_or_else(|| p.timestamped.snapshot())
                    })
                })
                .collect()
        });
        let cpu = self.options.kernels.then(|| {
            self.locs
                .iter()
                .map(|l| {
                    l.probe.as_ref().map_or_else(CpuTimes::default, |p| {
                        let mut clock = p.cpu.clone();
                        let end = l.end.unwrap_or(0).max(p.timestamped.last_measured());
                        clock.on_end(end as i64 - p.timestamped.delay() as i64);
                        clock.times().clone()
                    })
                })
                .collect()
        });
        let wildcards = self
            .locs
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                let w = l.probe.as_ref()?.wildcards.as_ref()?;
                Some(w.sites(i as LocationId))
            })
            .flatten()
            .collect();
        let activity = self.activity.map(|mut log| {
            for (a, l) in log.iter_mut().zip(&self.locs) {
                a.end = l.end.unwrap_or(0);
            }
            log
        });
        let reports = self.options.kernels.then(|| {
            self.locs
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    let selected = self.program.regions.len().min(SELECTED);
                    report_of(i as u32, &self.program.locations[i].name, l, selected)
                })
                .collect()
        });
        RunResult {
            ends,
            events: self.events,
            estimates,
            paths,
            trace: self.trace,
            reports,
            approximated: self.approximated,
            activity,
            cpu,
            wildcards,
        }
    }

    /// Spends `cost` ns of instrumentation on location `l` from `now` on:
    /// the CPU is busy and the local-only estimate learns of it (R1, 000 §2:
    /// TAU's local compensation subtracts exactly this).
    fn charge(&mut self, l: LocationId, cost: u64) {
        if cost == 0 {
            return;
        }
        let now = self.now;
        let loc = &mut self.locs[l as usize];
        let start = loc.cpu_free.max(now);
        loc.cpu_free = start + cost;
        loc.overhead += cost;
        self.record(l, TraceKind::Overhead, start, start + cost);
    }

    /// Runs location `l` from its program counter until it blocks, ends,
    /// or spends CPU time (then its next step is pushed).
    /// `hint` is where the location's program counter was when the event
    /// was pushed: its instruction is read before the location's state,
    /// so that the two (cold, in a large lockstep schedule) reads overlap.
    fn step(&mut self, l: LocationId, hint: u32, seq: u64) -> Result<(), SimError> {
        let li = l as usize;
        let mut early = core::hint::black_box(self.code.instrs.get(hint as usize).copied());
        if self.locs[li].state != State::Ready {
            return Ok(());
        }
        let now = self.now;
        if self.locs[li].cpu_free > now {
            // LogGOPSim: posting a receive needs no CPU, so receives are
            // posted now; anything else waits for the CPU (re-insert).
            while let Some(Instr::Irecv {
                from,
                request,
                shape,
            }) = self.instr(li)
            {
                self.post(
                    l,
                    source(from),
                    self.code.shapes[shape as usize].tag,
                    request,
                )?;
            }
            let t = self.locs[li].cpu_free;
            let hint = self.locs[li].pc as u32;
            self.heap.push(Reverse((t, seq, EventKind::Step(l, hint))));
            return Ok(());
        }
        loop {
            let loc = &self.locs[li];
            let instr = match early.take() {
                // Not past the location's end: the next location's code.
                Some(i) if loc.pc == hint as usize && loc.pc < loc.code_end => Some(i),
                _ => self.instr(li),
            };
            let Some(instr) = instr else {
                return self.end_location(l);
            };
            match instr {
                Instr::Enter(region) | Instr::Exit(region) => {
                    let enter = matches!(instr, Instr::Enter(_));
                    let cost = if enter {
                        self.calibration.enter
                    } else {
                        self.calibration.exit
                    };
                    // R1: an enter's clock read follows its outside part, an
                    // exit's follows its inside part (they are the region's).
                    let before = if enter { cost.outside() } else { cost.inside };
                    let loc = &mut self.locs[li];
                    if !loc.read_done && before > 0 {
                        loc.read_done = true;
                        self.charge(l, before);
                        return self.next_step(l);
                    }
                    let pc = self.locs[li].site();
                    if let Some(p) = &mut self.locs[li].probe {
                        if enter {
                            p.both(|k| k.on_enter(region, pc, now)).map_err(kerr(l))?;
                            p.cpu.on_enter(region, p.timestamped.last_approximated());
                        } else {
                            let (exited, _) =
                                p.both(|k| k.on_exit(region, now)).map_err(kerr(l))?;
                            if let Some(e) = exited {
                                p.profile.record_exit(&e);
                            }
                            p.cpu.on_exit(region, p.timestamped.last_approximated());
                        }
                        let step = if enter {
                            Step::Enter { region, at: now }
                        } else {
                            Step::Exit { region, at: now }
                        };
                        self.log(l, step);
                    }
                    self.record(
                        l,
                        if enter {
                            TraceKind::Enter(region)
                        } else {
                            TraceKind::Exit(region)
                        },
                        now,
                        now,
                    );
                    let loc = &mut self.locs[li];
                    loc.read_done = false;
                    loc.pc += 1;
                    let after = cost.whole - before.min(cost.whole);
                    if after > 0 {
                        self.charge(l, after);
                        return self.next_step(l);
                    }
                }
                Instr::LoopStart { id, count, end } => {
                    let count = self.code.counts[count as usize];
                    let loc = &mut self.locs[li];
                    if count == 0 {
                        loc.pc = loc.code_start + end as usize + 1;
                        continue;
                    }
                    // R1, R12: a loop is one frame, charged like a region's
                    // enter on entry and exit on leaving (not per iteration).
                    if !loc.read_done && self.calibration.enter.outside() > 0 {
                        loc.read_done = true;
                        self.charge(l, self.calibration.enter.outside());
                        return self.next_step(l);
                    }
                    let pc = loc.site();
                    if let Some(p) = &mut loc.probe {
                        p.both(|k| k.on_loop_enter(id, pc, now)).map_err(kerr(l))?;
                    }
                    let loc = &mut self.locs[li];
                    loc.read_done = false;
                    loc.loops.push(count);
                    loc.pc += 1;
                    let inside = self
                        .calibration
                        .enter
                        .inside
                        .min(self.calibration.enter.whole);
                    if inside > 0 {
                        self.charge(l, inside);
                        return self.next_step(l);
                    }
                }
                Instr::LoopEnd { id, start } => {
                    let loc = &mut self.locs[li];
                    let remaining = loc.loops.last().copied().unwrap_or(1);
                    if remaining > 1 {
                        if let Some(r) = loc.loops.last_mut() {
                            *r -= 1;
                        }
                        loc.pc = loc.code_start + start as usize + 1;
                        continue;
                    }
                    let cost = self.calibration.exit;
                    if !loc.read_done && cost.inside > 0 {
                        loc.read_done = true;
                        self.charge(l, cost.inside);
                        return self.next_step(l);
                    }
                    if let Some(p) = &mut loc.probe {
                        let (exited, _) = p.both(|k| k.on_loop_exit(id, now)).map_err(kerr(l))?;
                        if let Some(e) = exited {
                            p.profile.record_exit(&e);
                        }
                    }
                    let loc = &mut self.locs[li];
                    loc.read_done = false;
                    loc.loops.pop();
                    loc.pc += 1;
                    if cost.outside() > 0 {
                        self.charge(l, cost.outside());
                        return self.next_step(l);
                    }
                }
                instr @ (Instr::Compute(_) | Instr::Draw(_)) => {
                    let seed = self.program.seed;
                    let d = match instr {
                        Instr::Draw(i) => self.code.durations[i as usize],
                        Instr::Compute(ns) => Duration::Fixed(ns),
                        _ => unreachable!("a compute instruction"),
                    };
                    let loc = &mut self.locs[li];
                    let ns = match d {
                        Duration::Fixed(ns) => ns,
                        _ => draw(
                            loc.rng.get_or_insert_with(|| {
                                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                                rng.set_stream(u64::from(l));
                                Box::new(rng)
                            }),
                            d,
                        ),
                    };
                    loc.pc += 1;
                    if ns > 0 {
                        loc.cpu_free = now + ns;
                        self.record(l, TraceKind::Compute, now, now + ns);
                        return self.next_step(l);
                    }
                }
                Instr::Isend { to, request, shape } => {
                    let MessageShape { tag, bytes } = self.code.shapes[shape as usize];
                    let tag = tag.unwrap_or(0);
                    let to = match to {
                        LAST_SOURCE => self.locs[li].last_source.ok_or_else(|| {
                            SimError::Program(format!(
                                "{}: a reply to the last source before any receive completed",
                                self.name(l)
                            ))
                        })?,
                        t => t,
                    };
                    if to == l {
                        return Err(SimError::Program(format!(
                            "{}: a send to itself",
                            self.name(l)
                        )));
                    }
                    // R3: the release's clock read comes first, its cost after.
                    if self.locs[li].released.is_none() {
                        let pbs = self.release(l, now)?;
                        self.locs[li].released = Some((now, pbs));
                        if self.calibration.send > 0 {
                            self.charge(l, self.calibration.send);
                            return self.next_step(l);
                        }
                    }
                    let loc = &mut self.locs[li];
                    if loc.send_nic_free > now {
                        // LogGOPSim: the NIC's send gap is not over; re-insert.
                        let t = loc.send_nic_free;
                        let pc = loc.pc as u32;
                        self.heap.push(Reverse((t, seq, EventKind::Step(l, pc))));
                        return Ok(());
                    }
                    let (_, pbs) = loc.released.take().unwrap_or((now, None));
                    let cost = self.network.message(bytes);
                    loc.cpu_free = now + cost.send_cpu;
                    loc.send_nic_free = now + cost.send_gap;
                    let id = self.next_request;
                    self.next_request += 1;
                    let loc = &mut self.locs[li];
                    if cost.rendezvous {
                        loc.requests.push(Request {
                            id,
                            name: request,
                            send: true,
                            wildcard: false,
                            satisfied: None,
                            site: loc.site(),
                            peer: Some(to),
                            bytes,
                        });
                        if let Some(own) = &pbs {
                            // Its own message's arrival, a dependency once
                            // matched (see `matched`).
                            loc.own_sends.push((id, own.clone(), cost.wire));
                        }
                    } else {
                        // Eager: complete once the CPU is done with it; only
                        // its name is kept, for the wait.
                        loc.done_sends.push(request);
                        let site = loc.site();
                        if let Some(p) = &mut loc.probe {
                            // R12: a call that never waits.
                            p.profile.record_comm(&Communicated {
                                site,
                                peer: to,
                                bytes,
                                ..Communicated::default()
                            });
                        }
                    }
                    loc.pc += 1;
                    let message = Message {
                        from: l,
                        to,
                        tag,
                        bytes,
                        rendezvous: cost.rendezvous,
                        send_request: id,
                        pbs,
                        handled: 0,
                    };
                    let slot = match self.free_messages.pop() {
                        Some(s) => {
                            self.messages[s] = Some(message);
                            s
                        }
                        None => {
                            self.messages.push(Some(message));
                            self.messages.len() - 1
                        }
                    };
                    self.push(now + cost.wire, EventKind::Arrive(slot));
                    self.record(l, TraceKind::Send(to), now, now + cost.send_cpu);
                    if cost.send_cpu > 0 {
                        return self.next_step(l);
                    }
                }
                Instr::Irecv {
                    from,
                    request,
                    shape,
                } => {
                    self.post(
                        l,
                        source(from),
                        self.code.shapes[shape as usize].tag,
                        request,
                    )?;
                }
                Instr::Wait(first, second) => {
                    let loc = &mut self.locs[li];
                    let mut ids = [0; 2];
                    let mut n = 0;
                    for name in [Some(first), second].into_iter().flatten() {
                        if let Some(r) = loc.requests.iter().find(|r| r.name == name) {
                            ids[n] = r.id;
                            n += 1;
                        } else if let Some(i) = loc.done_sends.iter().position(|d| *d == name) {
                            // An eager send, complete since it started.
                            loc.done_sends.swap_remove(i);
                        } else {
                            return Err(SimError::Program(format!(
                                "{}: wait on request {} that is not outstanding",
                                self.name(l),
                                req_name(name)
                            )));
                        }
                    }
                    loc.state = State::Blocked(Block::Wait {
                        begin: now,
                        set: WaitSet::Ids(ids, n),
                    });
                    return self.try_complete_wait(l);
                }
                Instr::WaitAll => {
                    let loc = &mut self.locs[li];
                    loc.done_sends.clear();
                    loc.state = State::Blocked(Block::Wait {
                        begin: now,
                        set: WaitSet::All,
                    });
                    return self.try_complete_wait(l);
                }
                Instr::Collective { kind, root, bytes } => {
                    return self.collective(l, kind, root, bytes);
                }
                Instr::Lock(lock) => return self.lock(l, lock),
                Instr::Unlock(lock) => {
                    let held = self.locks.get(&lock).and_then(|s| s.holder) == Some(l);
                    if !held {
                        return Err(SimError::Program(format!(
                            "{}: unlock of lock {lock} that it does not hold",
                            self.name(l)
                        )));
                    }
                    let pbs = self.release(l, now)?;
                    let depart = now + self.calibration.send;
                    self.charge(l, self.calibration.send);
                    self.locs[li].pc += 1;
                    let state = self.locks.entry(lock).or_default();
                    state.holder = None;
                    state.last_release = Some((depart, pbs.clone()));
                    // R8: the next acquire merges this release, in observed order.
                    if let Some(w) = state.waiters.pop_front() {
                        state.holder = Some(w);
                        let dep = dep_of(pbs, 0, depart);
                        let begin = match &self.locs[w as usize].state {
                            State::Blocked(Block::Lock { begin, .. }) => *begin,
                            _ => now,
                        };
                        self.complete_merge(w, begin, depart, &dep)?;
                    }
                    return self.next_step(l);
                }
                Instr::ThreadBarrier { barrier, count } => {
                    return self.thread_barrier(l, barrier, count);
                }
                Instr::Enqueue(queue) => {
                    let pbs = self.release(l, now)?;
                    let depart = now + self.calibration.send;
                    self.charge(l, self.calibration.send);
                    self.locs[li].pc += 1;
                    let q = self.queues.entry(queue).or_default();
                    // R8: the piggyback travels inside the item.
                    if let Some(w) = q.waiters.pop_front() {
                        let begin = match &self.locs[w as usize].state {
                            State::Blocked(Block::Dequeue { begin, .. }) => *begin,
                            _ => now,
                        };
                        self.complete_merge(w, begin, depart, &dep_of(pbs, 0, depart))?;
                    } else {
                        q.items.push_back((depart, pbs));
                    }
                    return self.next_step(l);
                }
                Instr::Dequeue(queue) => {
                    let q = self.queues.entry(queue).or_default();
                    match q.items.pop_front() {
                        Some((t, pbs)) => {
                            self.locs[li].state =
                                State::Blocked(Block::Dequeue { queue, begin: now });
                            return self.complete_merge(l, now, t.max(now), &dep_of(pbs, 0, t));
                        }
                        None => {
                            q.waiters.push_back(l);
                            self.locs[li].state =
                                State::Blocked(Block::Dequeue { queue, begin: now });
                            return Ok(());
                        }
                    }
                }
                Instr::Spawn(child) => {
                    let ci = child as usize;
                    if self.locs[ci].state != State::NotStarted {
                        return Err(SimError::Program(format!(
                            "{}: spawn of {} that was already started",
                            self.name(l),
                            self.name(child)
                        )));
                    }
                    let pbs = self.release(l, now)?;
                    let start = now + self.calibration.send;
                    self.charge(l, self.calibration.send);
                    self.locs[li].pc += 1;
                    if self.options.kernels {
                        let mut probe = Probe::new(child, self.selected, self.calibration, start);
                        if let Some(p) = pbs {
                            // R8: spawn is a release that the child's start merges.
                            let err = kerr(child);
                            probe
                                .both(|k| {
                                    let pb = if k.form() == Form::Timestamped {
                                        &p.timestamped
                                    } else {
                                        &p.delay_only
                                    };
                                    k.on_start(start, &Dependency::immediate(pb))
                                })
                                .map_err(err)?;
                            probe.cpu = CpuClock::new(probe.timestamped.last_approximated());
                            let a = probe.timestamped.last_approximated();
                            if self.activity.is_some() {
                                let edges = edges_of(&dep_of(Some(p), 0, start));
                                self.log(
                                    child,
                                    Step::Merge {
                                        begin: start,
                                        end: start,
                                        edges,
                                        collective: false,
                                        compensated_wait: 0,
                                        approximated_end: a,
                                    },
                                );
                            }
                        }
                        if let Some(log) = &mut self.activity {
                            log[ci].start = start;
                        }
                        self.locs[ci].probe = Some(Box::new(probe));
                    }
                    // The kernel's start is a merge: its cost follows the
                    // start's clock read on the child (R1).
                    let merge = if self.options.kernels {
                        self.calibration.merge
                    } else {
                        0
                    };
                    let c = &mut self.locs[ci];
                    c.state = State::Ready;
                    c.cpu_free = start + merge;
                    c.overhead += merge;
                    let pc = self.locs[child as usize].pc as u32;
                    self.push(start + merge, EventKind::Step(child, pc));
                    return self.next_step(l);
                }
                Instr::Join(child) => {
                    let ci = child as usize;
                    self.locs[li].state = State::Blocked(Block::Join { child, begin: now });
                    if let Some(end) = self.locs[ci].end {
                        let pbs = self.locs[ci].end_pbs.clone();
                        return self.complete_merge(l, now, end.max(now), &dep_of(pbs, 0, end));
                    }
                    return Ok(());
                }
            }
        }
    }

    /// Posts a receive at `now`: it matches the first handled unexpected
    /// message or waits in the posted list (LogGOPSim's RQ and UQ).
    fn post(
        &mut self,
        l: LocationId,
        from: Source,
        tag: Tag,
        request: Req,
    ) -> Result<(), SimError> {
        let li = l as usize;
        let now = self.now;
        let id = self.next_request;
        self.next_request += 1;
        // Kept for a rendezvous send, whose completion depends on this post
        // (R3); a program whose every message is eager never needs it.
        let pbs = if self.rendezvous {
            self.peek(l, now)
        } else {
            None
        };
        let loc = &mut self.locs[li];
        let site = loc.site();
        loc.requests.push(Request {
            id,
            name: request,
            send: false,
            wildcard: from == Source::Any,
            satisfied: None,
            site,
            peer: None,
            bytes: 0,
        });
        loc.pc += 1;
        let posted = Posted {
            request: id,
            from,
            tag,
            pbs,
        };
        let found = loc.unexpected.iter().position(|m| matches(&posted, m));
        match found.and_then(|i| loc.unexpected.remove(i)) {
            Some(m) => self.matched(l, posted, m, now),
            None => {
                self.locs[li].posted.push(posted);
                Ok(())
            }
        }
    }

    fn next_step(&mut self, l: LocationId) -> Result<(), SimError> {
        let t = self.locs[l as usize].cpu_free.max(self.now);
        let hint = self.locs[l as usize].pc as u32;
        self.push(t, EventKind::Step(l, hint));
        Ok(())
    }

    fn release(&mut self, l: LocationId, t: u64) -> Result<Option<Pbs>, SimError> {
        let err = kerr(l);
        let pbs = match &mut self.locs[l as usize].probe {
            Some(p) => p.release(t).map(Some).map_err(err)?,
            None => None,
        };
        if let Some(p) = &pbs {
            self.log(l, Step::Release { id: p.id, at: t });
        }
        Ok(pbs)
    }

    /// The record a release of `l` at `t` would carry, without changing
    /// its kernels: an n-to-n entry or a posted receive (R3, R6).
    fn peek(&mut self, l: LocationId, t: u64) -> Option<Pbs> {
        let pbs = self.locs[l as usize].probe.as_mut().map(|p| p.peek(t));
        if let Some(p) = &pbs {
            self.log(l, Step::Release { id: p.id, at: t });
        }
        pbs
    }

    /// Appends a kernel event to `l`'s activity (when a graph is kept).
    fn log(&mut self, l: LocationId, step: Step) {
        if let Some(log) = &mut self.activity {
            log[l as usize].steps.push(step);
        }
    }

    /// A merge of `l` completed: its CPU clock skips the wait, and the
    /// activity graph gets the merge with its dependency arcs.
    fn on_merged(
        &mut self,
        l: LocationId,
        begin: u64,
        end: u64,
        deps: &[Dep],
        merged: Option<Merged>,
    ) {
        let edges = self.activity.is_some().then(|| edges_of(deps));
        self.on_merged_edges(l, begin, end, edges, false, merged);
    }

    /// [`Self::on_merged`] with the arcs built already (shared by every
    /// exit of an n-to-n collective).
    fn on_merged_edges(
        &mut self,
        l: LocationId,
        begin: u64,
        end: u64,
        edges: Option<Arc<[Edge]>>,
        collective: bool,
        merged: Option<Merged>,
    ) {
        let Some(m) = merged else {
            return;
        };
        if let Some(p) = &mut self.locs[l as usize].probe {
            p.cpu
                .on_merge(m.approximated_end - m.compensated_wait, m.approximated_end);
        }
        if let Some(edges) = edges {
            self.log(
                l,
                Step::Merge {
                    begin,
                    end,
                    edges,
                    collective,
                    compensated_wait: m.compensated_wait,
                    approximated_end: m.approximated_end,
                },
            );
        }
    }

    fn end_location(&mut self, l: LocationId) -> Result<(), SimError> {
        let li = l as usize;
        let now = self.now;
        let spawned = self.program.locations[li].spawned;
        let mut end = now;
        if spawned {
            // R8: a thread's end is a release that its join merges.
            let pbs = self.release(l, now)?;
            self.locs[li].end_pbs = pbs;
            end = now + self.calibration.send;
            self.charge(l, self.calibration.send);
        }
        let loc = &mut self.locs[li];
        loc.state = State::Done;
        loc.end = Some(end);
        loc.cpu_free = loc.cpu_free.max(end);
        if spawned {
            // A joiner waiting for this child merges its end now.
            let joiner = self.locs.iter().position(
                |o| matches!(&o.state, State::Blocked(Block::Join { child, .. }) if *child == l),
            );
            if let Some(j) = joiner {
                let begin = match &self.locs[j].state {
                    State::Blocked(Block::Join { begin, .. }) => *begin,
                    _ => now,
                };
                let pbs = self.locs[li].end_pbs.clone();
                self.complete_merge(j as LocationId, begin, end, &dep_of(pbs, 0, end))?;
            }
        }
        Ok(())
    }

    /// A blocked location's single-dependency merge completes at `end`
    /// (R8: lock hand-off, dequeue, join).
    fn complete_merge(
        &mut self,
        l: LocationId,
        begin: u64,
        end: u64,
        deps: &[Dep],
    ) -> Result<(), SimError> {
        let li = l as usize;
        let err = kerr(l);
        let mut merged = None;
        if let Some(p) = &mut self.locs[li].probe {
            merged = Some(p.merge(begin, end, deps).map_err(err)?);
        }
        self.on_merged(l, begin, end, deps, merged);
        self.record_edges(l, deps);
        self.record_merged(l, TraceKind::Merge, begin, end, merged);
        let loc = &mut self.locs[li];
        loc.state = State::Ready;
        loc.pc += 1;
        loc.cpu_free = loc.cpu_free.max(end);
        self.now_charge_at(l, end, self.calibration.merge);
        self.next_step(l)
    }

    /// Charges `cost` on `l` starting no earlier than `from`.
    fn now_charge_at(&mut self, l: LocationId, from: u64, cost: u64) {
        let loc = &mut self.locs[l as usize];
        loc.cpu_free = loc.cpu_free.max(from);
        if cost > 0 {
            let start = loc.cpu_free;
            loc.cpu_free += cost;
            loc.overhead += cost;
            self.record(l, TraceKind::Overhead, start, start + cost);
        }
    }

    /// Completes `l`'s wait if every request it waits for is satisfied.
    fn try_complete_wait(&mut self, l: LocationId) -> Result<(), SimError> {
        let li = l as usize;
        let State::Blocked(Block::Wait { begin, set }) = &self.locs[li].state else {
            return Ok(());
        };
        let (begin, set) = (*begin, *set);
        let mut end = begin;
        for r in self.locs[li].requests.iter().filter(|r| set.contains(r.id)) {
            match r.satisfied {
                Some(t) => end = end.max(t),
                None => return Ok(()),
            }
        }
        let Loc {
            requests,
            last_source,
            deps: pending,
            probe,
            ..
        } = &mut self.locs[li];
        let kernels = probe.is_some();
        let mut deps = Vec::new();
        // For the statistics: each request with the range of its deps.
        let mut completed: SmallVec<[(Request, usize, usize); 2]> = SmallVec::new();
        requests.retain(|r| {
            if !set.contains(r.id) {
                return true;
            }
            if !r.send
                && let Some(s) = r.peer
            {
                *last_source = Some(s);
            }
            let first = deps.len();
            if !pending.is_empty() {
                // In request order, each request's in the order they came.
                pending.retain(|(id, d)| {
                    if *id == r.id {
                        deps.push(d.clone());
                    }
                    *id != r.id
                });
            }
            if kernels {
                completed.push((r.clone(), first, deps.len()));
            }
            false
        });
        let had_deps = !deps.is_empty();
        if had_deps {
            // R4 (000 Fig. 7) and R5 (001 case m.1 when the wait began
            // before the release, m.2 otherwise); R6 n-to-1 shape for a
            // wait on several receives.
            let err = kerr(l);
            let mut merged = None;
            if let Some(p) = &mut self.locs[li].probe {
                merged = Some(p.merge(begin, end, &deps).map_err(err)?);
            }
            if let (Some(m), Some(p)) = (merged, &mut self.locs[li].probe) {
                // R12: the wait is the call's that was satisfied last (it
                // decided the end; the first of equals), the others waited
                // for nothing of their own.
                let decider = completed
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, (r, ..))| core::cmp::Reverse(r.satisfied))
                    .map(|(i, _)| i);
                for (i, (r, first, last)) in completed.iter().enumerate() {
                    // R5: each dependency's transfer l_j and the message's
                    // approximated arrival a_j + l_j, as the timestamped
                    // kernel computed them.
                    let transfers = deps[*first..*last].iter().map(|d| {
                        let pb = &d.pbs.timestamped;
                        let dep = Dependency::message(pb, d.model, d.copy).arrived(d.arrived);
                        (pb.approximated, dep.transfer(begin, end).estimate)
                    });
                    let transfer = transfers.clone().map(|t| t.1).max().unwrap_or(0);
                    let arrival = transfers.map(|(a, l)| a + l).max();
                    let mut reordered = false;
                    if let (true, Some(source), Some(arrival)) = (r.wildcard, r.peer, arrival) {
                        // R11: would another sender have matched first?
                        reordered = p.wildcards.get_or_insert_default().observe(
                            r.site,
                            source,
                            arrival,
                            m.approximated_end,
                        );
                    }
                    let decided = Some(i) == decider;
                    p.profile.record_comm(&Communicated {
                        site: r.site,
                        peer: r.peer.unwrap_or(u32::MAX),
                        bytes: r.bytes,
                        measured_wait: if decided { m.wait } else { 0 },
                        compensated_wait: if decided { m.compensated_wait } else { 0 },
                        transfer,
                        reordered,
                    });
                }
            }
            self.on_merged(l, begin, end, &deps, merged);
            self.record_edges(l, &deps);
            self.record_merged(l, TraceKind::Merge, begin, end, merged);
        }
        let loc = &mut self.locs[li];
        loc.state = State::Ready;
        loc.pc += 1;
        let cost = if had_deps { self.calibration.merge } else { 0 };
        self.now_charge_at(l, end, cost);
        self.next_step(l)
    }

    /// A message reaches its receiver's NIC (LogGOPSim's OP_MSG).
    fn arrive(&mut self, slot: usize, seq: u64) -> Result<(), SimError> {
        let Some(to) = self
            .messages
            .get(slot)
            .and_then(Option::as_ref)
            .map(|m| m.to)
        else {
            return Ok(());
        };
        let now = self.now;
        let ri = to as usize;
        let busy = self.locs[ri].cpu_free.max(self.locs[ri].recv_nic_free);
        if busy > now {
            // LogGOPSim: the receiver's CPU or NIC is busy; re-insert.
            self.heap
                .push(Reverse((busy, seq, EventKind::Arrive(slot))));
            return Ok(());
        }
        let Some(mut m) = self.messages[slot].take() else {
            return Ok(());
        };
        self.free_messages.push(slot);
        let cost = self.network.message(m.bytes);
        let loc = &mut self.locs[ri];
        loc.cpu_free = now + cost.recv_cpu;
        loc.recv_nic_free = now + cost.recv_gap;
        m.handled = now;
        let found = loc.posted.iter().position(|p| matches(p, &m));
        match found.and_then(|i| loc.posted.remove(i)) {
            Some(p) => self.matched(m.to, p, m, now),
            None => {
                self.locs[ri].unexpected.push(m);
                Ok(())
            }
        }
    }

    /// A posted receive and a handled message meet at `now`.
    fn matched(
        &mut self,
        receiver: LocationId,
        posted: Posted,
        m: Message,
        now: u64,
    ) -> Result<(), SimError> {
        let model = self.network.model(m.bytes);
        let copy = self.network.copy(m.bytes);
        // Satisfied now: when the arrival is handled, or when the receive
        // is posted after an unexpected message was handled. The merge ends
        // here; the receive overhead o that follows is ordinary CPU time,
        // because R5 reads a(e) = max(b - x, a_j + l_j) at this point.
        let at = now;
        let loc = &mut self.locs[receiver as usize];
        if let Some(r) = loc.requests.iter_mut().find(|r| r.id == posted.request) {
            r.satisfied = Some(at);
            r.peer = Some(m.from);
            r.bytes = m.bytes;
            if let Some(pbs) = m.pbs {
                loc.deps.push((
                    posted.request,
                    Dep {
                        pbs,
                        model,
                        copy,
                        // When the message reached this receiver, which is
                        // before `at` if it waited in the unexpected queue: the
                        // kernel measures the transfer up to here (R5).
                        arrived: m.handled,
                    },
                ));
            }
        }
        if m.rendezvous {
            // LogGOPSim: a rendezvous send completes when it is matched. It
            // depends on the receive's post and on its own message's arrival.
            let sender = &mut self.locs[m.from as usize];
            sender.cpu_free = sender.cpu_free.max(now);
            sender.send_nic_free = sender.send_nic_free.max(now);
            if let Some(r) = sender.requests.iter_mut().find(|r| r.id == m.send_request) {
                r.satisfied = Some(now);
                let own = sender
                    .own_sends
                    .iter()
                    .position(|o| o.0 == m.send_request)
                    .map(|i| sender.own_sends.swap_remove(i));
                if let (Some(post), Some((id, own, wire))) = (posted.pbs, own) {
                    let dep = |pbs, model| Dep {
                        pbs,
                        model,
                        copy: 0,
                        arrived: now,
                    };
                    sender.deps.push((id, dep(post, 0)));
                    sender.deps.push((id, dep(own, wire)));
                }
            }
            self.try_complete_wait(m.from)?;
        }
        self.try_complete_wait(receiver)
    }

    // ----- collectives (R6) ----------------------------------------------------

    fn collective(
        &mut self,
        l: LocationId,
        kind: Collective,
        root: LocationId,
        bytes: u64,
    ) -> Result<(), SimError> {
        let li = l as usize;
        let now = self.now;
        let seq = self.locs[li].collectives;
        self.locs[li].collectives += 1;
        let participants = self.world.len() as u32;
        let state = self
            .collectives
            .entry(seq)
            .or_insert_with(|| CollectiveState {
                kind,
                root,
                arrived: Vec::new(),
                root_release: None,
                releases: Vec::new(),
                root_waiting: None,
            });
        let (seen_kind, seen_root) = (state.kind, state.root);
        if seen_kind != kind || (kind.shape() != Shape::NToN && seen_root != root) {
            return Err(SimError::Program(format!(
                "{}: collective #{seq} is {} with root {root}, but another rank called {} with root {seen_root}",
                self.name(l),
                kind.name(),
                seen_kind.name(),
            )));
        }
        let cost = self
            .network
            .collective(kind == Collective::Alltoall, participants, bytes);
        let msg = self.network.message(bytes);
        self.locs[li].state = State::Blocked(Block::Collective { seq });
        match kind.shape() {
            Shape::NToN => {
                // R6: the entry record, combined before the exit.
                let pbs = self.peek(l, now);
                let state = self.collectives.get_mut(&seq).ok_or_else(|| lost(seq))?;
                state.arrived.push((l, now, pbs));
                if state.arrived.len() < participants as usize {
                    return Ok(());
                }
                let Some(state) = self.collectives.remove(&seq) else {
                    return Err(lost(seq));
                };
                let last = state.arrived.iter().map(|a| a.1).max().unwrap_or(now);
                let end = last + cost;
                self.finish_n_to_n(&state.arrived, end)
            }
            // R6 1-to-n (000 §4.3.3): each receiver merges the root's release.
            Shape::OneToN if l == root => {
                let pbs = self.release(l, now)?;
                let depart = now + self.calibration.send;
                self.charge(l, self.calibration.send);
                let state = self.collectives.get_mut(&seq).ok_or_else(|| lost(seq))?;
                state.root_release = Some((depart, pbs.clone()));
                state.arrived.push((l, now, None));
                let waiting: Vec<(LocationId, u64)> = state
                    .arrived
                    .iter()
                    .filter(|a| a.0 != root)
                    .map(|a| (a.0, a.1))
                    .collect();
                let done = state.arrived.len() == participants as usize;
                if done {
                    self.collectives.remove(&seq);
                }
                for (w, b) in waiting {
                    self.complete_merge(
                        w,
                        b,
                        (depart + cost).max(b),
                        &dep_of(pbs.clone(), cost, depart + cost),
                    )?;
                }
                let loc = &mut self.locs[li];
                loc.state = State::Ready;
                loc.pc += 1;
                loc.cpu_free = loc.cpu_free.max(depart + msg.send_cpu);
                self.next_step(l)
            }
            Shape::OneToN => {
                let state = self.collectives.get_mut(&seq).ok_or_else(|| lost(seq))?;
                state.arrived.push((l, now, None));
                let release = state.root_release.clone();
                if state.arrived.len() == participants as usize {
                    self.collectives.remove(&seq);
                }
                match release {
                    Some((depart, pbs)) => self.complete_merge(
                        l,
                        now,
                        (depart + cost).max(now),
                        &dep_of(pbs, cost, depart + cost),
                    ),
                    None => Ok(()),
                }
            }
            Shape::NToOne if l == root => {
                let state = self.collectives.get_mut(&seq).ok_or_else(|| lost(seq))?;
                state.arrived.push((l, now, None));
                state.root_waiting = Some(now);
                if state.arrived.len() == participants as usize {
                    let Some(state) = self.collectives.remove(&seq) else {
                        return Err(lost(seq));
                    };
                    self.finish_n_to_one(l, now, &state.releases, cost)
                } else {
                    Ok(())
                }
            }
            Shape::NToOne => {
                let pbs = self.release(l, now)?;
                let depart = now + self.calibration.send;
                self.charge(l, self.calibration.send);
                let state = self.collectives.get_mut(&seq).ok_or_else(|| lost(seq))?;
                state.arrived.push((l, now, None));
                state.releases.push((depart, pbs));
                let all = state.arrived.len() == participants as usize;
                let root_begin = state.root_waiting;
                if all {
                    let Some(state) = self.collectives.remove(&seq) else {
                        return Err(lost(seq));
                    };
                    if let Some(b) = root_begin {
                        self.finish_n_to_one(root, b, &state.releases, cost)?;
                    }
                }
                let loc = &mut self.locs[li];
                loc.state = State::Ready;
                loc.pc += 1;
                loc.cpu_free = loc.cpu_free.max(depart + msg.send_cpu);
                self.next_step(l)
            }
        }
    }

    fn finish_n_to_one(
        &mut self,
        root: LocationId,
        begin: u64,
        releases: &[(u64, Option<Pbs>)],
        cost: u64,
    ) -> Result<(), SimError> {
        // R6 n-to-1: the root merges every contribution.
        let end = releases
            .iter()
            .map(|r| r.0 + cost)
            .max()
            .unwrap_or(begin)
            .max(begin);
        let deps: Vec<Dep> = releases
            .iter()
            .filter_map(|r| {
                r.1.clone().map(|pbs| Dep {
                    pbs,
                    model: cost,
                    copy: 0,
                    arrived: r.0 + cost,
                })
            })
            .collect();
        self.complete_merge(root, begin, end, &deps)
    }

    fn finish_n_to_n(
        &mut self,
        arrived: &[(LocationId, u64, Option<Pbs>)],
        end: u64,
    ) -> Result<(), SimError> {
        // R6 n-to-n: every participant merges all entries (001 eq. 12-13).
        let entries: Vec<(Pbs, u64)> = arrived
            .iter()
            .filter_map(|a| a.2.clone().map(|p| (p, end - a.1)))
            .collect();
        // R6, 001 eq. 12-13: every participant merges the reduction of all
        // entry records; it is the same for all, so it is folded once
        // (O(P) per collective, not O(P^2)).
        let folded =
            entries
                .iter()
                .fold((Exchange::EMPTY, Exchange::EMPTY), |(ts, dly), (p, w)| {
                    (
                        ts.combine(&Exchange::entry(&p.timestamped, *w)),
                        dly.combine(&Exchange::entry(&p.delay_only, *w)),
                    )
                });
        // R6: every entry (each exit's own too) is an arc into every exit.
        let all = self.activity.is_some().then(|| {
            let deps: Vec<Dep> = entries
                .iter()
                .map(|(pbs, _)| Dep {
                    pbs: pbs.clone(),
                    model: 0,
                    copy: 0,
                    arrived: end,
                })
                .collect();
            edges_of(&deps)
        });
        for &(w, begin, _) in arrived {
            let err = kerr(w);
            let mut merged = None;
            if let Some(p) = &mut self.locs[w as usize].probe {
                merged = Some(p.collective(begin, end, &folded).map_err(err)?);
            }
            self.on_merged_edges(w, begin, end, all.clone(), true, merged);
            if self.trace.is_some() {
                // Every entry is an edge into every exit (R6 n-to-n).
                let edges: Vec<Dep> = arrived
                    .iter()
                    .filter(|a| a.0 != w)
                    .filter_map(|a| {
                        a.2.clone().map(|pbs| Dep {
                            pbs,
                            model: 0,
                            copy: 0,
                            arrived: end,
                        })
                    })
                    .collect();
                self.record_edges(w, &edges);
            }
            self.record_merged(w, TraceKind::Merge, begin, end, merged);
            let loc = &mut self.locs[w as usize];
            loc.state = State::Ready;
            loc.pc += 1;
            let merge = if entries.is_empty() {
                0
            } else {
                self.calibration.merge
            };
            self.now_charge_at(w, end, merge);
            self.next_step(w)?;
        }
        Ok(())
    }

    // ----- threads (R8) ----------------------------------------------------------

    fn lock(&mut self, l: LocationId, lock: u32) -> Result<(), SimError> {
        let now = self.now;
        self.locs[l as usize].state = State::Blocked(Block::Lock { lock, begin: now });
        let state = self.locks.entry(lock).or_default();
        if state.holder.is_none() {
            state.holder = Some(l);
            // R8: the n-th acquire merges the (n-1)-th release.
            let (t, pbs) = state.last_release.clone().unwrap_or((now, None));
            self.complete_merge(l, now, t.max(now), &dep_of(pbs, 0, t))
        } else {
            state.waiters.push_back(l);
            Ok(())
        }
    }

    fn thread_barrier(&mut self, l: LocationId, barrier: u32, count: u32) -> Result<(), SimError> {
        let now = self.now;
        let pbs = self.peek(l, now);
        self.locs[l as usize].state = State::Blocked(Block::Barrier { barrier });
        let episode = self.barriers.entry(barrier).or_default();
        episode.push((l, now, pbs));
        if episode.len() < count as usize {
            return Ok(());
        }
        // R8: every leave merges all arrivals of the same episode; the
        // episode is taken out so the next one starts empty.
        let arrived = core::mem::take(episode);
        let end = arrived.iter().map(|a| a.1).max().unwrap_or(now);
        self.finish_n_to_n(&arrived, end)
    }
}

/// The timestamped kernel's report of one location at its end (R12; the
/// core's report format, `docs/report.md`).
/// The report of one location: its timestamped kernel's values at the
/// location's end, with the critical-path arrays cut to the `selected`
/// regions that the header lists.
fn report_of(id: u32, name: &str, loc: &Loc, selected: usize) -> SimReport {
    let end = loc.end.unwrap_or(0);
    let name = heisen_core::report::truncated::<LOCATION_NAME_LEN>(name);
    let empty = SimProfile::new();
    let (delay, path, frames, overcompensation, profile) = match &loc.probe {
        Some(p) => {
            let k = &p.timestamped;
            (
                k.delay(),
                // The path up to the location's end, not its last kernel
                // event: trailing work is on it too (as in RunResult::paths).
                heisen_core::Snapshot::of_piggyback(&k.peek(end))
                    .and_then(|s| CriticalPath::of_snapshot(&s))
                    .map(|mut path| {
                        path.inclusive.truncate(selected);
                        path.exclusive.truncate(selected);
                        path.net.truncate(selected);
                        path
                    }),
                k.lost_frames(),
                {
                    let o = k.overcompensation();
                    heisen_core::report::Overcompensation {
                        count: o.count,
                        total: o.total,
                    }
                },
                &p.profile,
            )
        }
        None => (0, None, 0, Default::default(), &empty),
    };
    let values = LocationValues {
        location: id,
        name: Some(name.as_str()),
        form: Form::Timestamped,
        measured_end: end,
        approximated_end: end as i64 - delay as i64,
        delay,
        critical_path: path,
        frames_dropped: frames,
        sites_dropped: 0,
        overcompensation,
    };
    // The name was truncated to fit, the only reason from_profile fails.
    LocationReport::from_profile(values, profile).unwrap_or_else(|_| LocationReport {
        location: id,
        name: None,
        form: Form::Timestamped,
        measured_end: end,
        approximated_end: end as i64 - delay as i64,
        delay,
        critical_path: None,
        regions: Default::default(),
        comms: Default::default(),
        loops: Default::default(),
        overflow: Default::default(),
        overcompensation,
    })
}

/// The approximated begin and end of a trace event (timestamped form):
/// a clock read (enter, exit) is at the kernel's `a = t - x`; a merge's
/// wait is `[a(e) - w', a(e)]` (R4: `w' = w + x - x'`); any other
/// interval keeps the delay that holds after it was recorded.
fn approximate(
    kernel: Option<&Kernel>,
    what: TraceKind,
    begin: u64,
    end: u64,
    merged: Option<Merged>,
) -> (i64, i64) {
    let Some(k) = kernel else {
        return (begin as i64, end as i64);
    };
    match (what, merged) {
        (TraceKind::Merge, Some(m)) => {
            (m.approximated_end - m.compensated_wait, m.approximated_end)
        }
        (TraceKind::Enter(_) | TraceKind::Exit(_), _) => {
            (k.last_approximated(), k.last_approximated())
        }
        _ => {
            let x = k.delay() as i64;
            (begin as i64 - x, end as i64 - x)
        }
    }
}

/// The arcs of the activity graph into a merge on `deps`.
fn edges_of(deps: &[Dep]) -> Arc<[Edge]> {
    deps.iter()
        .map(|d| Edge {
            from: d.pbs.timestamped.location,
            release: d.pbs.id,
            released: d.pbs.timestamped.measured().max(0) as u64,
            arrival: d.arrived,
            model: d.model,
            copy: d.copy,
        })
        .collect()
}

/// Maps a kernel refusal at location `l` to a [`SimError`] (lazily: the
/// name is formatted only when there is an error).
fn kerr(l: LocationId) -> impl Fn(KernelError) -> SimError {
    move |error| SimError::Kernel {
        location: format!("location {l}"),
        error,
    }
}

fn lost(seq: u64) -> SimError {
    SimError::Program(format!("collective #{seq} lost its state (simulator bug)"))
}

fn dep_of(pbs: Option<Pbs>, model: u64, arrived: u64) -> Vec<Dep> {
    pbs.map(|pbs| Dep {
        pbs,
        model,
        copy: 0,
        arrived,
    })
    .into_iter()
    .collect()
}

fn matches(p: &Posted, m: &Message) -> bool {
    let source = match p.from {
        Source::Any => true,
        Source::Location(s) => s == m.from,
    };
    source && p.tag.is_none_or(|t| t == m.tag)
}

fn req_name(r: Req) -> String {
    if r.0 & Req::INTERNAL == 0 {
        format!("{}", r.0)
    } else {
        format!("<internal {}>", r.0 & !Req::INTERNAL)
    }
}

/// What a location that cannot go on waits for, in words (deadlock report).
fn describe(loc: &Loc, name: impl Fn(LocationId) -> String) -> String {
    match &loc.state {
        State::NotStarted => "was never spawned".into(),
        State::Ready => "is ready (simulator bug: nothing scheduled it)".into(),
        State::Done => "ended".into(),
        State::Blocked(Block::Wait { set, .. }) => {
            let mut what = Vec::new();
            for r in loc
                .requests
                .iter()
                .filter(|r| set.contains(r.id) && r.satisfied.is_none())
            {
                if r.send {
                    what.push("a receive to match its rendezvous send".into());
                } else {
                    let p = loc.posted.iter().find(|p| p.request == r.id);
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
        State::Blocked(Block::Barrier { barrier }) => format!("waits at thread barrier {barrier}"),
        State::Blocked(Block::Dequeue { queue, .. }) => {
            format!("waits for an item of queue {queue}")
        }
        State::Blocked(Block::Join { child, .. }) => format!("waits to join {}", name(*child)),
    }
}

/// Draws a compute time (ns) from `d`, deterministically from the
/// location's own ChaCha stream.
fn draw(rng: &mut ChaCha8Rng, d: Duration) -> u64 {
    let unit = |rng: &mut ChaCha8Rng| {
        // (0, 1]: 53 random bits, never 0 so that ln() is finite.
        ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    };
    match d {
        Duration::Fixed(ns) => ns,
        Duration::Uniform { low, high } => {
            let (low, high) = (low.min(high), low.max(high));
            let span = u128::from(high - low) + 1;
            low + ((u128::from(rng.next_u64()) * span) >> 64) as u64
        }
        Duration::Normal { mean, sd } => {
            // Box-Muller.
            let (u1, u2) = (unit(rng), unit(rng));
            // libm, not the platform's: the same seed gives the same draw
            // on every machine.
            let z = libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * core::f64::consts::PI * u2);
            libm::round((mean + sd * z).max(0.0)) as u64
        }
        Duration::Exponential { mean } => {
            libm::round((-mean * libm::log(unit(rng))).max(0.0)) as u64
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use heisen_core::{Cost, TransferModel};

    use super::*;
    use crate::compare::compare;
    use crate::program::{ProgramBuilder, Source};

    /// The contention-free network of the unit tests: 500 ns, no per-byte cost.
    pub(crate) const FREE: Network = Network::ContentionFree(TransferModel {
        latency: 500,
        per_byte_ps: 0,
        copy_per_byte_ps: 0,
    });

    /// The built-ins' light timer with a send cost.
    fn timer(send: u64) -> Calibration {
        Calibration {
            send,
            ..crate::builtin::LIGHT_TIMER
        }
    }

    /// r0: region f { compute 1000 }, send to r1; r1: receive, compute 200.
    fn two_ranks(send: u64) -> Program {
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
    fn every_point_to_point_call_has_a_comm_record() {
        // R12 (002 Fig. 10 COM): r0's send never waits; r1's receive waits
        // from 0 to the arrival at 1000 + 500 in the truth, and in the
        // measured run its compensated wait is that true wait (R5).
        let comms = |options| {
            let r = run(&two_ranks(30), options).unwrap();
            let reports = r.reports.unwrap();
            (reports[0].comms.clone(), reports[1].comms.clone())
        };
        let (send, recv) = comms(RunOptions::TRUTH);
        assert_eq!(send.len(), 1);
        assert_eq!(
            (
                send[0].peer,
                send[0].count,
                send[0].bytes,
                send[0].measured_wait
            ),
            (1, 1, 100, 0)
        );
        assert_eq!(send[0].site, 3, "after enter, compute and exit");
        assert_eq!(recv.len(), 1);
        let truth = recv[0];
        assert_eq!(
            (truth.site, truth.peer, truth.count, truth.bytes),
            (0, 0, 1, 100)
        );
        assert_eq!(
            (truth.measured_wait, truth.compensated_wait, truth.transfer),
            (1500, 1500, 500)
        );
        let (_, recv) = comms(RunOptions::MEASURED);
        assert!(recv[0].measured_wait > truth.measured_wait);
        assert_eq!(recv[0].compensated_wait, 1500);
        assert_eq!(recv[0].transfer, 500);
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

    mod messages {
        use super::*;

        #[test]
        fn receiver_inherits_the_senders_delay_exactly() {
            // Truth: r0 sends at 1000, the message arrives at 1500, r1 ends
            // at 1700. Measured: enter (100) + exit (100) delay the send to
            // 1200, r1 ends at 1900. R4: x' = min(0 + 1700, 200) = 200;
            // R5: a(e) = a_j + (e - t_j) = 1000 + 500.
            let c = compare(&two_ranks(0)).unwrap();
            let r1 = &c.rows[1];
            assert_eq!((r1.truth, r1.measured), (1700, 1900));
            assert_eq!(r1.local_only, 1900, "r1 has no overhead of its own");
            assert_eq!((r1.timestamped, r1.delay_only), (1700, 1700));
            let r0 = &c.rows[0];
            assert_eq!(
                (r0.truth, r0.measured, r0.local_only, r0.timestamped),
                (1000, 1200, 1000, 1000)
            );
        }

        #[test]
        fn send_cost_falls_before_the_departure_and_is_compensated() {
            // The send reads its clock, packs its piggyback for 50 ns, and
            // only then does the message leave: the record's delay includes
            // the 50 ns (R1, R3), so both forms land on the truth.
            let c = compare(&two_ranks(50)).unwrap();
            let r1 = &c.rows[1];
            assert_eq!((r1.truth, r1.measured), (1700, 1950));
            assert_eq!((r1.timestamped, r1.delay_only), (1700, 1700));
        }

        #[test]
        fn gather_root_measures_each_transfer_from_its_own_arrival() {
            // R5 with several dependencies: r1 contributes at 1000 with
            // x = 0, r2 at 2100 with x = 100 (truth 2000); the gather costs
            // 2 rounds of the 500 ns latency. Truth: e = 3000; measured
            // 3100. Each dependency's transfer is measured from its own
            // arrival (Dependency::arrived): r1's a_j + l_j = 2000, r2's
            // 3000, so the timestamped form is exact. The delay-only form
            // only knows e - x_j and stays an upper bound (R4): 3100.
            let mut b = ProgramBuilder::new("gather");
            let f = b.region("f");
            b.network(FREE).calibration(Calibration {
                enter: Cost {
                    whole: 100,
                    inside: 0,
                },
                ..Calibration::ZERO
            });
            let (r0, r1, r2) = (b.rank("r0"), b.rank("r1"), b.rank("r2"));
            b.on(r0).collective(Collective::Gather, r0, 0);
            b.on(r1).compute(1000).collective(Collective::Gather, r0, 0);
            b.on(r2)
                .region(f, |b| {
                    b.compute(2000);
                })
                .collective(Collective::Gather, r0, 0);
            let c = compare(&b.build().unwrap()).unwrap();
            let root = &c.rows[0];
            assert_eq!((root.truth, root.measured), (3000, 3100));
            assert_eq!((root.timestamped, root.delay_only), (3000, 3100));
        }

        #[test]
        fn loggops_eager_send_and_receive_costs() {
            // Default LogGOPS: send at 0 (o = 1500), first byte at 4000,
            // handled until 5500 + 9 * 6 = 5554 (o + (s-1)G, s = 10).
            let mut b = ProgramBuilder::new("p");
            let (r0, r1) = (b.rank("r0"), b.rank("r1"));
            b.on(r0).send(r1, 10, 0);
            b.on(r1).recv(Source::Any, 10, None);
            let r = run(&b.build().unwrap(), RunOptions::TIMES).unwrap();
            assert_eq!(r.ends, vec![1500, 5554]);
        }

        #[test]
        fn nonblocking_and_sendrecv_exchange() {
            let mut b = ProgramBuilder::new("x");
            b.network(FREE);
            let (r0, r1) = (b.rank("r0"), b.rank("r1"));
            b.on(r0)
                .irecv(Source::Location(r1), 8, Some(1), 10)
                .isend(r1, 8, 1, 11)
                .compute(100)
                .waitall()
                .op(Op::Sendrecv {
                    to: Dest::Location(r1),
                    send_bytes: 8,
                    from: Source::Location(r1),
                    recv_bytes: 8,
                    tag: 2,
                });
            b.on(r1)
                .compute(300)
                .isend(r0, 8, 1, 3)
                .irecv(Source::Location(r0), 8, Some(1), 4)
                .wait(4)
                .wait(3)
                .op(Op::Sendrecv {
                    to: Dest::Location(r0),
                    send_bytes: 8,
                    from: Source::Location(r0),
                    recv_bytes: 8,
                    tag: 2,
                });
            // r0's message leaves at 0 and arrives at 500, after r1 posted
            // its receive (300), so r1's wait(4) ends at 500. r1's message
            // leaves at 300 and arrives at 800: r0's waitall ends at 800.
            // Sendrecv: r0 sends at 800 (arrives 1300), r1 at 500 (arrives
            // 1000): r0 ends at 1000, r1 at 1300.
            let r = run(&b.build().unwrap(), RunOptions::TIMES).unwrap();
            assert_eq!(r.ends, vec![1000, 1300]);
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
            // Ring of nonblocking messages.
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
            // Threads: t0 locks first (t1 computes longer before), t0
            // enqueues, t1 dequeues; both meet at a thread barrier; t0
            // spawns and joins a child.
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
            b.build().unwrap()
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

    mod distributions {
        use super::*;

        #[test]
        fn draws_are_seeded_and_have_their_means() {
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let n = 20_000;
            let mean = |rng: &mut ChaCha8Rng, d| {
                (0..n).map(|_| draw(rng, d)).sum::<u64>() as f64 / n as f64
            };
            let u = mean(
                &mut rng,
                Duration::Uniform {
                    low: 100,
                    high: 300,
                },
            );
            let g = mean(
                &mut rng,
                Duration::Normal {
                    mean: 1000.0,
                    sd: 100.0,
                },
            );
            let e = mean(&mut rng, Duration::Exponential { mean: 500.0 });
            assert!((u - 200.0).abs() < 3.0, "{u}");
            assert!((g - 1000.0).abs() < 5.0, "{g}");
            assert!((e - 500.0).abs() < 15.0, "{e}");
            let mut again = ChaCha8Rng::seed_from_u64(1);
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            assert_eq!(
                draw(&mut rng, Duration::Normal { mean: 5.0, sd: 1.0 }),
                draw(&mut again, Duration::Normal { mean: 5.0, sd: 1.0 })
            );
        }
    }
}
