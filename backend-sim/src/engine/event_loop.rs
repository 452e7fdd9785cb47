//! The event loop: pops events in `(time, seq)` order and hands each to
//! its room — a location's step runs its instructions, each by the room
//! of its kind, until one blocks, spends CPU time or ends; a message's
//! arrival goes to the point-to-point room. When the queue is empty,
//! every location must have ended, or the run is a deadlock.

use core::cmp::Reverse;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::program::{Duration, LocationId, Program};

use super::code::{Code, Instr, source};
use super::collective::Collectives;
use super::options::{MAX_CLOCK, RunOptions, SimError};
use super::p2p::{self, P2p};
use super::result::{self, RunResult};
use super::shmem::{self, Objects};
use super::world::{EventKind, Flow, State, World};
use super::{instrument, work};

/// Events processed by the run going on in this process, updated every
/// `PROGRESS_EVERY`` + 1` events: what a progress display reads from
/// another thread (the run itself never reads it).
pub static PROGRESS: AtomicU64 = AtomicU64::new(0);
/// Mask of the event count at which [`PROGRESS`] is updated (2^16 - 1).
const PROGRESS_EVERY: u64 = (1 << 16) - 1;

/// The world and the rooms that keep state of their own.
#[derive(Debug)]
pub(super) struct Engine<'p> {
    world: World<'p>,
    p2p: P2p,
    collectives: Collectives,
    objects: Objects,
}

impl<'p> Engine<'p> {
    pub(super) fn new(program: &'p Program, code: &'p Code, options: RunOptions) -> Self {
        Engine {
            world: World::new(program, code, options),
            p2p: P2p::new(program, code),
            collectives: Collectives::new(program.ranks().len() as u32),
            objects: Objects::default(),
        }
    }

    /// Runs until no event is left.
    pub(super) fn run(&mut self) -> Result<(), SimError> {
        let max_events = self.world.options.max_events;
        while let Some(Reverse((time, seq, kind))) = self.world.queue.pop() {
            self.world.now = time;
            self.world.events += 1;
            if time > MAX_CLOCK || self.world.events > max_events {
                return Err(self.limit(time, max_events));
            }
            if self.world.events & PROGRESS_EVERY == 0 {
                PROGRESS.store(self.world.events, Ordering::Relaxed);
            }
            match kind {
                EventKind::Step(l, hint) => self.step(l, hint, seq)?,
                EventKind::Arrive(m) => self.p2p.arrive(&mut self.world, m, seq)?,
            }
        }
        let w = &self.world;
        let blocked: Vec<String> = w
            .locs
            .iter()
            .enumerate()
            .filter(|(_, l)| l.state != State::Done)
            .map(|(i, l)| format!("{} {}", w.name(i as LocationId), l.describe(|x| w.name(x))))
            .collect();
        if blocked.is_empty() {
            Ok(())
        } else {
            Err(SimError::Deadlock {
                time: w.now,
                blocked,
            })
        }
    }

    /// Why the run stopped early at `time`: too many events or a clock
    /// past [`MAX_CLOCK`].
    #[cold]
    fn limit(&self, time: u64, max_events: u64) -> SimError {
        if time > MAX_CLOCK {
            SimError::Limit(format!(
                "simulated time passed {MAX_CLOCK} ns (146 years) after {} events: a time, size or count in the input is too large",
                self.world.events - 1
            ))
        } else {
            SimError::Limit(format!(
                "stopped after {max_events} events (--max-events) at simulated time {time} ns"
            ))
        }
    }

    /// The run's result.
    pub(super) fn finish(self) -> RunResult {
        result::assemble(self.world)
    }

    /// Runs location `l` from its program counter until it blocks, ends,
    /// or spends CPU time (then its next step is pushed).
    /// `hint` is where the location's program counter was when the event
    /// was pushed: its instruction is read before the location's state,
    /// so that the two (cold, in a large lockstep schedule) reads overlap.
    fn step(&mut self, l: LocationId, hint: u32, seq: u64) -> Result<(), SimError> {
        let li = l as usize;
        let w = &mut self.world;
        let mut early = core::hint::black_box(w.code.instrs().get(hint as usize).copied());
        if w.locs[li].state != State::Ready {
            return Ok(());
        }
        if w.locs[li].host.cpu_free() > w.now {
            // LogGOPSim: posting a receive needs no CPU, so receives are
            // posted now; anything else waits for the CPU (re-insert).
            while let Some(Instr::Irecv {
                from,
                request,
                shape,
            }) = self.world.instr(li)
            {
                let shape = self.world.code.shape(shape);
                self.p2p
                    .post(&mut self.world, l, source(from), shape, request)?;
            }
            let loc = &self.world.locs[li];
            let (t, hint) = (loc.host.cpu_free(), loc.pc as u32);
            self.world.reinsert(t, seq, EventKind::Step(l, hint));
            return Ok(());
        }
        loop {
            let loc = &self.world.locs[li];
            let instr = match early.take() {
                // Not past the location's end: the next location's code.
                Some(i) if loc.pc == hint as usize && loc.pc < loc.code_end => Some(i),
                _ => self.world.instr(li),
            };
            let Some(instr) = instr else {
                return shmem::end(&mut self.world, l);
            };
            if self.execute(l, instr, seq)? == Flow::Stop {
                return Ok(());
            }
        }
    }

    /// Hands `instr` of `l` to the room of its kind.
    #[inline]
    fn execute(&mut self, l: LocationId, instr: Instr, seq: u64) -> Result<Flow, SimError> {
        let w = &mut self.world;
        match instr {
            Instr::Enter(region) => instrument::region(w, l, region, true),
            Instr::Exit(region) => instrument::region(w, l, region, false),
            Instr::LoopStart { id, count, end } => instrument::loop_start(w, l, id, count, end),
            Instr::LoopEnd { id, start } => instrument::loop_end(w, l, id, start),
            Instr::Compute(ns) => Ok(work::compute(w, l, Duration::Fixed(ns))),
            Instr::Draw(i) => {
                let d = w.code.duration(i);
                Ok(work::compute(w, l, d))
            }
            Instr::Isend { to, request, shape } => self.p2p.isend(w, l, to, request, shape, seq),
            Instr::Irecv {
                from,
                request,
                shape,
            } => {
                let shape = w.code.shape(shape);
                self.p2p.post(w, l, source(from), shape, request)?;
                Ok(Flow::Next)
            }
            Instr::Wait(first, second) => p2p::wait(w, l, first, second),
            Instr::WaitAll => p2p::wait_all(w, l),
            Instr::Collective { kind, root, bytes } => {
                self.collectives.enter(w, l, kind, root, bytes)
            }
            Instr::Lock(lock) => self.objects.lock(w, l, lock),
            Instr::Unlock(lock) => self.objects.unlock(w, l, lock),
            Instr::ThreadBarrier { barrier, count } => self.objects.barrier(w, l, barrier, count),
            Instr::Enqueue(queue) => self.objects.enqueue(w, l, queue),
            Instr::Dequeue(queue) => self.objects.dequeue(w, l, queue),
            Instr::Spawn(child) => shmem::spawn(w, l, child),
            Instr::Join(child) => shmem::join(w, l, child),
        }
    }
}
