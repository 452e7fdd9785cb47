//! Collectives over every rank (R6, 000 §4.3.3, 001 §3.3), matched by
//! their order of call: the n-th collective of each rank is the same one.
//! 1-to-n (bcast, scatter): each receiver merges the root's release.
//! n-to-1 (gather, reduce): the root merges every contribution. n-to-n
//! (barrier, allreduce, allgather, alltoall): every participant merges
//! every entry record, at the common exit. The time from the last entry
//! to the completion is the network's model of the collective
//! ([`Network::collective`](crate::transfer::Network::collective)): the
//! simulator's, not LogGOPSim's, which has no collectives of its own.

use std::collections::HashMap;

use crate::program::{Collective, LocationId, Shape};

use super::merge::Entry;
use super::options::SimError;
use super::probe::{Dep, Pbs, dep_of};
use super::world::{Block, Flow, World};

/// One collective while ranks enter it.
#[derive(Debug)]
struct Open {
    kind: Collective,
    root: LocationId,
    arrived: Vec<Entry>,
    /// 1-to-n: the root's departure and record, once it arrived.
    root_release: Option<(u64, Option<Pbs>)>,
    /// n-to-1: the non-roots' departures.
    releases: Vec<(u64, Option<Pbs>)>,
    /// n-to-1: the root, once it waits: (begin).
    root_waiting: Option<u64>,
}

/// The collectives of a run that some rank entered and not all left.
#[derive(Debug)]
pub(super) struct Collectives {
    open: HashMap<u64, Open>,
    /// How many ranks take part in every collective.
    ranks: u32,
}

/// What a rank entering a collective does, once it is checked.
struct Entering {
    l: LocationId,
    seq: u64,
    root: LocationId,
    /// From the last entry to the completion (the network's model).
    cost: u64,
    /// The CPU time of sending the collective's data (a root or a
    /// contributor goes on after it).
    send_cpu: u64,
}

impl Collectives {
    pub(super) fn new(ranks: u32) -> Self {
        Collectives {
            open: HashMap::new(),
            ranks,
        }
    }

    /// Rank `l` enters its next collective, of `kind` with `root` and
    /// `bytes` per rank.
    pub(super) fn enter(
        &mut self,
        w: &mut World<'_>,
        l: LocationId,
        kind: Collective,
        root: LocationId,
        bytes: u64,
    ) -> Result<Flow, SimError> {
        let li = l as usize;
        let seq = w.locs[li].collectives;
        w.locs[li].collectives += 1;
        let state = self.open.entry(seq).or_insert_with(|| Open {
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
                w.name(l),
                kind.name(),
                seen_kind.name(),
            )));
        }
        let at = Entering {
            l,
            seq,
            root,
            cost: w
                .network
                .collective(kind == Collective::Alltoall, self.ranks, bytes),
            send_cpu: w.network.message(bytes).send_cpu,
        };
        w.locs[li].block(Block::Collective { seq });
        match kind.shape() {
            Shape::NToN => self.n_to_n(w, &at)?,
            Shape::OneToN if l == root => self.one_to_n_root(w, &at)?,
            Shape::OneToN => self.one_to_n(w, &at)?,
            Shape::NToOne if l == root => self.n_to_one_root(w, &at)?,
            Shape::NToOne => self.n_to_one(w, &at)?,
        }
        Ok(Flow::Stop)
    }

    /// The collective `seq`, entered already.
    fn get(&mut self, seq: u64) -> Result<&mut Open, SimError> {
        self.open.get_mut(&seq).ok_or_else(|| lost(seq))
    }

    /// R6 n-to-n: the entry record, combined at the exit, once all entered.
    fn n_to_n(&mut self, w: &mut World<'_>, at: &Entering) -> Result<(), SimError> {
        let now = w.now;
        let pbs = w.peek(at.l, now);
        let ranks = self.ranks as usize;
        let state = self.get(at.seq)?;
        state.arrived.push((at.l, now, pbs));
        if state.arrived.len() < ranks {
            return Ok(());
        }
        let state = self.open.remove(&at.seq).ok_or_else(|| lost(at.seq))?;
        let last = state.arrived.iter().map(|a| a.1).max().unwrap_or(now);
        w.complete_n_to_n(&state.arrived, last + at.cost)
    }

    /// R6 1-to-n (000 §4.3.3), the root: it releases, and every receiver
    /// that waits already merges the release.
    fn one_to_n_root(&mut self, w: &mut World<'_>, at: &Entering) -> Result<(), SimError> {
        let ranks = self.ranks as usize;
        let (l, now, cost) = (at.l, w.now, at.cost);
        let pbs = w.release(l, now)?;
        let depart = now + w.calibration.send;
        w.charge(l, w.calibration.send);
        let state = self.get(at.seq)?;
        state.root_release = Some((depart, pbs.clone()));
        state.arrived.push((l, now, None));
        let waiting: Vec<(LocationId, u64)> = state
            .arrived
            .iter()
            .filter(|a| a.0 != at.root)
            .map(|a| (a.0, a.1))
            .collect();
        if state.arrived.len() == ranks {
            self.open.remove(&at.seq);
        }
        for (r, b) in waiting {
            let deps = dep_of(pbs.clone(), cost, depart + cost);
            w.complete_merge(r, b, (depart + cost).max(b), &deps)?;
        }
        go_on_after(w, l, depart + at.send_cpu);
        Ok(())
    }

    /// R6 1-to-n, a receiver: it merges the root's release, now if the
    /// root was there first.
    fn one_to_n(&mut self, w: &mut World<'_>, at: &Entering) -> Result<(), SimError> {
        let ranks = self.ranks as usize;
        let now = w.now;
        let state = self.get(at.seq)?;
        state.arrived.push((at.l, now, None));
        let release = state.root_release.clone();
        if state.arrived.len() == ranks {
            self.open.remove(&at.seq);
        }
        match release {
            Some((depart, pbs)) => w.complete_merge(
                at.l,
                now,
                (depart + at.cost).max(now),
                &dep_of(pbs, at.cost, depart + at.cost),
            ),
            None => Ok(()),
        }
    }

    /// R6 n-to-1, the root: it waits for every contribution.
    fn n_to_one_root(&mut self, w: &mut World<'_>, at: &Entering) -> Result<(), SimError> {
        let ranks = self.ranks as usize;
        let now = w.now;
        let state = self.get(at.seq)?;
        state.arrived.push((at.l, now, None));
        state.root_waiting = Some(now);
        if state.arrived.len() < ranks {
            return Ok(());
        }
        let state = self.open.remove(&at.seq).ok_or_else(|| lost(at.seq))?;
        finish_n_to_one(w, at.l, now, &state.releases, at.cost)
    }

    /// R6 n-to-1, a contributor: it releases and goes on; the last one
    /// completes the root's merge if the root waits already.
    fn n_to_one(&mut self, w: &mut World<'_>, at: &Entering) -> Result<(), SimError> {
        let ranks = self.ranks as usize;
        let (l, now) = (at.l, w.now);
        let pbs = w.release(l, now)?;
        let depart = now + w.calibration.send;
        w.charge(l, w.calibration.send);
        let state = self.get(at.seq)?;
        state.arrived.push((l, now, None));
        state.releases.push((depart, pbs));
        let root_begin = state.root_waiting;
        if state.arrived.len() == ranks {
            let state = self.open.remove(&at.seq).ok_or_else(|| lost(at.seq))?;
            if let Some(b) = root_begin {
                finish_n_to_one(w, at.root, b, &state.releases, at.cost)?;
            }
        }
        go_on_after(w, l, depart + at.send_cpu);
        Ok(())
    }
}

/// A root or contributor that does not wait goes on once its data left.
fn go_on_after(w: &mut World<'_>, l: LocationId, at: u64) {
    let loc = &mut w.locs[l as usize];
    loc.resume();
    loc.host.on_resume(at);
    w.next_step(l);
}

/// R6 n-to-1: the root, waiting since `begin`, merges every contribution.
fn finish_n_to_one(
    w: &mut World<'_>,
    root: LocationId,
    begin: u64,
    releases: &[(u64, Option<Pbs>)],
    cost: u64,
) -> Result<(), SimError> {
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
    w.complete_merge(root, begin, end, &deps)
}

fn lost(seq: u64) -> SimError {
    SimError::Program(format!("collective #{seq} lost its state (simulator bug)"))
}
