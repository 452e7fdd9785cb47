//! The engine's compiled form of a program: every location's operations
//! as one flat list of 16-byte instructions ([`Instr`]), with the wider
//! operands (message shapes, loop counts, random durations) interned
//! beside it. Blocking calls become their nonblocking parts and a wait
//! (MPI's definition of `MPI_Send` as `MPI_Isend` + `MPI_Wait`).

use std::collections::HashMap;

use crate::program::{Collective, Dest, Duration, LocationId, Op, Program, Source, Tag};

use super::options::SimError;

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

    /// The instructions.
    pub(super) fn code(&self) -> &Code {
        &self.code
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

/// A message's tag (`None`: a receive's any tag) and size (on a receive,
/// the most it takes), kept beside the code so that an instruction takes
/// 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct MessageShape {
    pub(super) tag: Tag,
    pub(super) bytes: u64,
    /// A receive's shape (its size is a capacity, not a message).
    pub(super) recv: bool,
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

    /// Every location's instructions, one after the other.
    #[inline]
    pub(super) fn instrs(&self) -> &[Instr] {
        &self.instrs
    }

    /// Where location `l`'s instructions start and end in [`Self::instrs`]
    /// (`(0, 0)`: it was never added and runs nothing).
    pub(super) fn range(&self, l: usize) -> (usize, usize) {
        self.ranges.get(l).copied().unwrap_or((0, 0))
    }

    /// The random duration an [`Instr::Draw`] names.
    pub(super) fn duration(&self, i: u32) -> Duration {
        self.durations[i as usize]
    }

    /// The message shape an [`Instr::Isend`] or [`Instr::Irecv`] names.
    #[inline]
    pub(super) fn shape(&self, i: u32) -> MessageShape {
        self.shapes[i as usize]
    }

    /// Every message shape of the program.
    pub(super) fn shapes(&self) -> &[MessageShape] {
        &self.shapes
    }

    /// The iteration count an [`Instr::LoopStart`] names.
    pub(super) fn count(&self, i: u32) -> u64 {
        self.counts[i as usize]
    }

    /// Releases spare capacity once every location is in.
    pub(crate) fn shrink(&mut self) {
        self.instrs.shrink_to_fit();
        self.ranges.shrink_to_fit();
        self.interned = HashMap::new();
    }

    fn intern(&mut self, tag: Tag, bytes: u64, recv: bool) -> u32 {
        let shape = MessageShape { tag, bytes, recv };
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
            shape: self.intern(Some(tag), bytes, false),
        }
    }

    fn irecv(&mut self, from: Source, tag: Tag, bytes: u64, request: Req) -> Instr {
        Instr::Irecv {
            from: match from {
                Source::Location(f) => f,
                Source::Any => ANY_SOURCE,
            },
            request,
            shape: self.intern(tag, bytes, true),
        }
    }

    /// Appends `ops` to the code of a location that starts at `base` (loop
    /// targets are relative to it, so that a location's code reads the
    /// same wherever it lies).
    fn compile(&mut self, ops: &[Op], base: usize) {
        for op in ops {
            let instr = self.compile_op(op, base);
            self.instrs.push(instr);
        }
    }

    /// `op`'s last instruction, its others (a region's enter and body, a
    /// blocking call's nonblocking parts) appended already.
    fn compile_op(&mut self, op: &Op, base: usize) -> Instr {
        match op {
            Op::Region { region, body } => {
                self.instrs.push(Instr::Enter(*region));
                self.compile(body, base);
                Instr::Exit(*region)
            }
            Op::Loop { id, count, body } => self.compile_loop(*id, *count, body, base),
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
            Op::Recv { from, tag, bytes } => {
                let recv = self.irecv(*from, *tag, *bytes, Req::internal(0));
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
                from,
                tag,
                request,
                bytes,
            } => self.irecv(*from, *tag, *bytes, Req::user(*request)),
            Op::Wait { request } => Instr::Wait(Req::user(*request), None),
            Op::WaitAll => Instr::WaitAll,
            Op::Sendrecv {
                to,
                send_bytes,
                from,
                tag,
                recv_bytes,
            } => {
                let recv = self.irecv(*from, Some(*tag), *recv_bytes, Req::internal(1));
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
        }
    }

    /// A loop: its start (whose `end` is patched once the body is in), its
    /// body, and its end, returned.
    fn compile_loop(&mut self, id: u32, count: u64, body: &[Op], base: usize) -> Instr {
        let start = self.instrs.len();
        self.counts.push(count);
        let count = (self.counts.len() - 1) as u32;
        self.instrs.push(Instr::LoopStart { id, count, end: 0 });
        self.compile(body, base);
        let end = (self.instrs.len() - base) as u32;
        self.instrs[start] = Instr::LoopStart { id, count, end };
        Instr::LoopEnd {
            id,
            start: (start - base) as u32,
        }
    }
}

/// A request name in 4 bytes: the user's (up to
/// [`MAX_REQUEST`](crate::program::MAX_REQUEST)), or one of the two a
/// blocking call uses (the top bit set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Req(u32);

impl Req {
    const INTERNAL: u32 = 1 << 31;

    /// The user's request `n`.
    pub(super) const fn user(n: u32) -> Self {
        Req(n & !Self::INTERNAL)
    }

    /// A blocking call's own request `n` (0 or 1).
    pub(super) const fn internal(n: u32) -> Self {
        Req(n | Self::INTERNAL)
    }
}

/// One instruction of the engine, 16 bytes: operands wider than that sit
/// beside the code ([`Code`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Instr {
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

/// An [`Instr::Irecv`]'s `from` as a source.
pub(super) fn source(from: u32) -> Source {
    if from == ANY_SOURCE {
        Source::Any
    } else {
        Source::Location(from)
    }
}

/// [`Instr::Isend`]'s `to` for [`Dest::LastSource`] (locations are fewer).
pub(super) const LAST_SOURCE: u32 = u32::MAX;
/// [`Instr::Irecv`]'s `from` for [`Source::Any`].
const ANY_SOURCE: u32 = u32::MAX;

pub(super) fn req_name(r: Req) -> String {
    if r.0 & Req::INTERNAL == 0 {
        format!("{}", r.0)
    } else {
        format!("<internal {}>", r.0 & !Req::INTERNAL)
    }
}

/// The point-to-point call sites of a location's operations `body`: the
/// site id the engine's communication records carry (the index of the
/// send or receive instruction in the location's code, R12) and the path
/// to its operation (indices into nested bodies), in code order. What
/// lets a record be named by its operation and where it is written.
pub fn call_sites(body: &[Op]) -> Vec<(u32, Vec<usize>)> {
    fn walk(ops: &[Op], path: &mut Vec<usize>, at: &mut usize, out: &mut Vec<(u32, Vec<usize>)>) {
        for (i, op) in ops.iter().enumerate() {
            path.push(i);
            match op {
                // An enter or loop start, the body, an exit or loop end
                // ([`Code::compile_op`]).
                Op::Region { body, .. } | Op::Loop { body, .. } => {
                    *at += 1;
                    walk(body, path, at, out);
                    *at += 1;
                }
                leaf => {
                    let mut code = Code::default();
                    code.add(0, core::slice::from_ref(leaf));
                    for (k, instr) in code.instrs.iter().enumerate() {
                        if matches!(instr, Instr::Isend { .. } | Instr::Irecv { .. }) {
                            out.push(((*at + k) as u32, path.clone()));
                        }
                    }
                    *at += code.instrs.len();
                }
            }
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(body, &mut Vec::new(), &mut 0, &mut out);
    out
}

#[cfg(test)]
mod sites {
    use super::*;

    #[test]
    fn call_sites_are_the_compiled_send_and_receive_instructions() {
        let program = crate::builtin::master_worker_default();
        for spec in &program.locations {
            let mut code = Code::default();
            code.add(0, &spec.body);
            let compiled: Vec<u32> = code
                .instrs
                .iter()
                .enumerate()
                .filter(|(_, i)| matches!(i, Instr::Isend { .. } | Instr::Irecv { .. }))
                .map(|(k, _)| k as u32)
                .collect();
            let sites = call_sites(&spec.body);
            assert_eq!(sites.iter().map(|s| s.0).collect::<Vec<_>>(), compiled);
            // Every path leads to a send or a receive.
            for (_, path) in &sites {
                let mut ops = &spec.body[..];
                let mut op = None;
                for &i in path {
                    op = ops.get(i);
                    if let Some(Op::Region { body, .. } | Op::Loop { body, .. }) = op {
                        ops = body;
                    }
                }
                assert!(
                    matches!(op, Some(Op::Send { .. } | Op::Recv { .. })),
                    "{op:?}"
                );
            }
        }
    }
}
