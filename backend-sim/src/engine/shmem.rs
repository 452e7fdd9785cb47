//! Threads and their shared-memory objects (R8, 003 §4): locks handed on
//! in the observed order, thread barriers with per-episode state, work
//! queues whose items carry their enqueue's record, and spawn and join
//! (a thread's start merges its spawn, a join merges the thread's end).
//! Each release charges the calibrated `send` cost after its clock read
//! (R1, R3), each merge goes through [`super::merge`].

use std::collections::{HashMap, VecDeque};

use crate::activity::Step;
use crate::program::LocationId;

use super::merge::Entry;
use super::options::{SimError, kerr};
use super::probe::{Pbs, Probe, dep_of};
use super::record::edges_of;
use super::world::{Block, EventKind, Flow, State, World};

#[derive(Debug, Default)]
struct Lock {
    holder: Option<LocationId>,
    last_release: Option<(u64, Option<Pbs>)>,
    waiters: VecDeque<LocationId>,
}

#[derive(Debug, Default)]
struct Queue {
    items: VecDeque<(u64, Option<Pbs>)>,
    waiters: VecDeque<LocationId>,
}

/// The locks, barriers and queues of a run, by id, made at first use.
#[derive(Debug, Default)]
pub(super) struct Objects {
    locks: HashMap<u32, Lock>,
    /// The arrivals of each barrier's current episode.
    barriers: HashMap<u32, Vec<Entry>>,
    queues: HashMap<u32, Queue>,
}

impl Objects {
    /// `l` acquires `lock`, now if it is free, else in its turn.
    pub(super) fn lock(
        &mut self,
        w: &mut World<'_>,
        l: LocationId,
        lock: u32,
    ) -> Result<Flow, SimError> {
        let now = w.now;
        w.locs[l as usize].block(Block::Lock { lock, begin: now });
        let state = self.locks.entry(lock).or_default();
        if state.holder.is_none() {
            state.holder = Some(l);
            // R8: the n-th acquire merges the (n-1)-th release.
            let (t, pbs) = state.last_release.clone().unwrap_or((now, None));
            w.complete_merge(l, now, t.max(now), &dep_of(pbs, 0, t))?;
        } else {
            state.waiters.push_back(l);
        }
        Ok(Flow::Stop)
    }

    /// `l` releases `lock`; the first waiter, if any, acquires it.
    pub(super) fn unlock(
        &mut self,
        w: &mut World<'_>,
        l: LocationId,
        lock: u32,
    ) -> Result<Flow, SimError> {
        let now = w.now;
        let held = self.locks.get(&lock).and_then(|s| s.holder) == Some(l);
        if !held {
            return Err(SimError::Program(format!(
                "{}: unlock of lock {lock} that it does not hold",
                w.name(l)
            )));
        }
        let pbs = w.release(l, now)?;
        let depart = now + w.calibration.send;
        w.charge(l, w.calibration.send);
        w.locs[l as usize].advance();
        let state = self.locks.entry(lock).or_default();
        state.holder = None;
        state.last_release = Some((depart, pbs.clone()));
        // R8: the next acquire merges this release, in observed order.
        if let Some(next) = state.waiters.pop_front() {
            state.holder = Some(next);
            let begin = match &w.locs[next as usize].state {
                State::Blocked(Block::Lock { begin, .. }) => *begin,
                _ => now,
            };
            w.complete_merge(next, begin, depart, &dep_of(pbs, 0, depart))?;
        }
        w.next_step(l);
        Ok(Flow::Stop)
    }

    /// `l` arrives at `barrier` of `count` threads. R8: every leave merges
    /// all arrivals of the same episode; the episode is taken out when it
    /// is full, so the next one starts empty.
    pub(super) fn barrier(
        &mut self,
        w: &mut World<'_>,
        l: LocationId,
        barrier: u32,
        count: u32,
    ) -> Result<Flow, SimError> {
        let now = w.now;
        let pbs = w.peek(l, now);
        w.locs[l as usize].block(Block::Barrier { barrier });
        let episode = self.barriers.entry(barrier).or_default();
        episode.push((l, now, pbs));
        if episode.len() >= count as usize {
            let arrived = core::mem::take(episode);
            let end = arrived.iter().map(|a| a.1).max().unwrap_or(now);
            w.complete_n_to_n(&arrived, end)?;
        }
        Ok(Flow::Stop)
    }

    /// `l` puts an item on `queue`; R8: the piggyback travels inside the
    /// item, and a waiting dequeuer takes it at once.
    pub(super) fn enqueue(
        &mut self,
        w: &mut World<'_>,
        l: LocationId,
        queue: u32,
    ) -> Result<Flow, SimError> {
        let now = w.now;
        let pbs = w.release(l, now)?;
        let depart = now + w.calibration.send;
        w.charge(l, w.calibration.send);
        w.locs[l as usize].advance();
        let q = self.queues.entry(queue).or_default();
        if let Some(taker) = q.waiters.pop_front() {
            let begin = match &w.locs[taker as usize].state {
                State::Blocked(Block::Dequeue { begin, .. }) => *begin,
                _ => now,
            };
            w.complete_merge(taker, begin, depart, &dep_of(pbs, 0, depart))?;
        } else {
            q.items.push_back((depart, pbs));
        }
        w.next_step(l);
        Ok(Flow::Stop)
    }

    /// `l` takes the first item of `queue`, merging its enqueue (R8), or
    /// waits for one.
    pub(super) fn dequeue(
        &mut self,
        w: &mut World<'_>,
        l: LocationId,
        queue: u32,
    ) -> Result<Flow, SimError> {
        let now = w.now;
        let q = self.queues.entry(queue).or_default();
        let item = q.items.pop_front();
        if item.is_none() {
            q.waiters.push_back(l);
        }
        w.locs[l as usize].block(Block::Dequeue { queue, begin: now });
        if let Some((t, pbs)) = item {
            w.complete_merge(l, now, t.max(now), &dep_of(pbs, 0, t))?;
        }
        Ok(Flow::Stop)
    }
}

/// `l` starts `child`: a release (R8) whose cost falls before the start;
/// the child's kernels start by merging it, and the kernel's start costs
/// a merge on the child (R1).
pub(super) fn spawn(w: &mut World<'_>, l: LocationId, child: LocationId) -> Result<Flow, SimError> {
    let now = w.now;
    let ci = child as usize;
    if w.locs[ci].state != State::NotStarted {
        return Err(SimError::Program(format!(
            "{}: spawn of {} that was already started",
            w.name(l),
            w.name(child)
        )));
    }
    let pbs = w.release(l, now)?;
    let start = now + w.calibration.send;
    w.charge(l, w.calibration.send);
    w.locs[l as usize].advance();
    let merge = if w.options.kernels {
        start_kernels(w, child, start, pbs)?;
        w.calibration.merge
    } else {
        0
    };
    w.locs[ci].start();
    w.charge_start(child, start, merge);
    let pc = w.locs[ci].pc as u32;
    w.push(start + merge, EventKind::Step(child, pc));
    w.next_step(l);
    Ok(Flow::Stop)
}

/// The kernels of `child`, spawned at `start` by a release that carried
/// `pbs`: R8, spawn is a release that the child's start merges.
fn start_kernels(
    w: &mut World<'_>,
    child: LocationId,
    start: u64,
    pbs: Option<Pbs>,
) -> Result<(), SimError> {
    let mut probe = Probe::new(child, w.selected, w.calibration, start);
    if let Some(p) = pbs {
        probe.on_spawned(start, &p).map_err(kerr(child))?;
        if w.recorder.keeps_graph() {
            let edges = edges_of(&dep_of(Some(p), 0, start));
            let approximated_end = probe.timestamped.last_approximated();
            w.log(
                child,
                Step::Merge {
                    begin: start,
                    end: start,
                    edges,
                    collective: false,
                    compensated_wait: 0,
                    approximated_end,
                },
            );
        }
    }
    w.recorder.on_start(child, start);
    w.locs[child as usize].probe = Some(Box::new(probe));
    Ok(())
}

/// `l` joins `child`, merging its end (R8) now if it ended, else when it
/// does ([`end`]).
pub(super) fn join(w: &mut World<'_>, l: LocationId, child: LocationId) -> Result<Flow, SimError> {
    let now = w.now;
    w.locs[l as usize].block(Block::Join { child, begin: now });
    if let Some(end) = w.locs[child as usize].end {
        let pbs = w.locs[child as usize].end_pbs.clone();
        w.complete_merge(l, now, end.max(now), &dep_of(pbs, 0, end))?;
    }
    Ok(Flow::Stop)
}

/// `l` ran off the end of its code: it is done. R8: a spawned thread's end
/// is a release that its join merges, now if the joiner waits already.
pub(super) fn end(w: &mut World<'_>, l: LocationId) -> Result<(), SimError> {
    let li = l as usize;
    let now = w.now;
    let spawned = w.program.locations[li].spawned;
    let mut end = now;
    if spawned {
        let pbs = w.release(l, now)?;
        w.locs[li].end_pbs = pbs;
        end = now + w.calibration.send;
        w.charge(l, w.calibration.send);
    }
    w.locs[li].finish(end);
    if spawned {
        let joiner = w.locs.iter().position(
            |o| matches!(&o.state, State::Blocked(Block::Join { child, .. }) if *child == l),
        );
        if let Some(j) = joiner {
            let begin = match &w.locs[j].state {
                State::Blocked(Block::Join { begin, .. }) => *begin,
                _ => now,
            };
            let pbs = w.locs[li].end_pbs.clone();
            w.complete_merge(j as LocationId, begin, end, &dep_of(pbs, 0, end))?;
        }
    }
    Ok(())
}
