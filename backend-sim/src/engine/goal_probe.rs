//! The heisen kernels of a GOAL graph's run: one kernel location per
//! rank (both merge forms, [`Probe`]), fed by the graph executor
//! ([`super::goal_loop`]) in the time order of the simulation, so that
//! the kernel sees each rank as one location whose events come in time
//! order, whatever CPU they ran on. A GOAL schedule has no
//! instrumentation: the run is the truth (no costs, R1), and the kernels
//! give its critical path and the reports, traces and pictures that the
//! CLI writes. The mapping, the same as the sequence form's requests
//! (`super::p2p`, `super::requests`):
//!
//! - a send is a release at its start (R3); its message carries the
//!   records;
//! - a receive's match is a merge on the message's dependency (R4, R5),
//!   ending where the dependency is satisfied (the receive's posting, or
//!   the arrival's handling; the receive overhead after it is ordinary
//!   CPU time, as in the sequence form), beginning at the receive's
//!   posting or at the rank's last kernel event if later;
//! - a rendezvous send's completion is a merge on the receive's post and
//!   its own message's arrival;
//! - one statistics record per completed send or receive (R12), and
//!   wildcard reorderings for any-source receives (R11).

use std::collections::HashMap;

use heisen_core::Dependency;
use heisen_core::stats::Communicated;

use crate::activity::Step;
use crate::transfer::Network;

use super::RunOptions;
use super::options::{SimError, kerr};
use super::probe::{Dep, Pbs, Probe, SELECTED};
use super::record::{Recorder, TraceKind, edges_of};
use super::result::{self, Ended, RunResult};

/// The kernels of every rank and what they keep between events.
#[derive(Debug)]
pub(super) struct GoalKernels {
    probes: Vec<Probe>,
    recorder: Recorder,
    network: Network,
    /// Per posted receive (global operation): its posting time and, when
    /// some message is rendezvous, its record (R3).
    posted: HashMap<u32, (u64, Option<Pbs>)>,
    /// Per rendezvous send in flight: its start, its release's records
    /// and its wire time.
    sends: HashMap<u32, (u64, Pbs, u64)>,
    /// Per message slot: the records of its send.
    messages: Vec<Option<Pbs>>,
}

/// A message as the kernels see it: who sent it, from which operation,
/// its size, its slot.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sent {
    pub(super) rank: u32,
    pub(super) op: u32,
    pub(super) site: u32,
    pub(super) peer: u32,
    pub(super) bytes: u64,
    pub(super) slot: u32,
}

impl GoalKernels {
    pub(super) fn new(ranks: usize, network: Network, options: RunOptions) -> Self {
        let selected = [u32::MAX; SELECTED];
        let calibration = heisen_core::Calibration::ZERO;
        GoalKernels {
            probes: (0..ranks as u32)
                .map(|r| Probe::new(r, selected, calibration, 0))
                .collect(),
            recorder: Recorder::new(options, ranks),
            network,
            posted: HashMap::new(),
            sends: HashMap::new(),
            messages: Vec::new(),
        }
    }

    /// A calc of `rank` from `t` to `end`.
    pub(super) fn on_calc(&mut self, rank: u32, t: u64, end: u64) {
        self.trace(rank, TraceKind::Compute, t, end, None);
    }

    /// A send starts at `t`, its CPU busy until `cpu_end`: a release (R3).
    pub(super) fn on_send(&mut self, s: Sent, t: u64, cpu_end: u64) -> Result<(), SimError> {
        let p = &mut self.probes[s.rank as usize];
        let pbs = p.release(t).map_err(kerr(s.rank))?;
        self.recorder
            .on_step(s.rank, Step::Release { id: pbs.id, at: t });
        let cost = self.network.message(s.bytes);
        if cost.rendezvous {
            self.sends.insert(s.op, (t, pbs.clone(), cost.wire));
        } else {
            // R12: a call that never waits.
            p.profile.record_comm(&Communicated {
                site: s.site,
                peer: s.peer,
                bytes: s.bytes,
                ..Communicated::default()
            });
        }
        let slot = s.slot as usize;
        if self.messages.len() <= slot {
            self.messages.resize(slot + 1, None);
        }
        self.messages[slot] = Some(pbs);
        self.trace(s.rank, TraceKind::Send(s.peer), t, cpu_end, None);
        Ok(())
    }

    /// Receive `op` of `rank` is posted at `t`; `rendezvous`: some message
    /// of the run is, so its record is kept for its send (R3).
    pub(super) fn on_post(&mut self, rank: u32, op: u32, t: u64, rendezvous: bool) {
        let pbs = rendezvous.then(|| {
            let pbs = self.probes[rank as usize].peek(t);
            self.recorder
                .on_step(rank, Step::Release { id: pbs.id, at: t });
            pbs
        });
        self.posted.insert(op, (t, pbs));
    }

    /// Receive `op` (call site `site`, `any`: from any source) of `rank`
    /// matched message `m` at `now`, the message having been handled at
    /// `arrived`: a merge on its dependency (R4, R5; R11, R12).
    pub(super) fn on_receive_matched(
        &mut self,
        rank: u32,
        (op, site, any): (u32, u32, bool),
        m: Sent,
        arrived: u64,
        now: u64,
    ) -> Result<(), SimError> {
        let posted = self.posted.get(&op).map_or(now, |p| p.0);
        let Some(pbs) = self
            .messages
            .get_mut(m.slot as usize)
            .and_then(Option::take)
        else {
            return Ok(());
        };
        let dep = Dep {
            pbs,
            model: self.network.model(m.bytes),
            copy: self.network.copy(m.bytes),
            arrived,
        };
        let (begin, merged) = self.merge(rank, posted, now, core::slice::from_ref(&dep))?;
        let pb = &dep.pbs.timestamped;
        let transfer = Dependency::message(pb, dep.model, dep.copy)
            .arrived(dep.arrived)
            .transfer(begin, now)
            .estimate;
        let p = &mut self.probes[rank as usize];
        let mut reordered = false;
        if any {
            // R11: would another sender have matched first?
            reordered = p.wildcards.get_or_insert_default().observe(
                site,
                m.rank,
                pb.approximated + transfer,
                merged.approximated_end,
            );
        }
        p.profile.record_comm(&Communicated {
            site,
            peer: m.rank,
            bytes: m.bytes,
            measured_wait: merged.wait,
            compensated_wait: merged.compensated_wait,
            transfer,
            reordered,
        });
        Ok(())
    }

    /// Rendezvous send `m` was matched at `now` by receive `receive`: a
    /// merge on the receive's post and its own message's arrival.
    pub(super) fn on_send_matched(
        &mut self,
        m: Sent,
        receive: u32,
        now: u64,
    ) -> Result<(), SimError> {
        let post = self.posted.get(&receive).and_then(|p| p.1.clone());
        let Some((start, own, wire)) = self.sends.remove(&m.op) else {
            return Ok(());
        };
        let mut deps = Vec::with_capacity(2);
        if let Some(post) = post {
            deps.push(Dep {
                pbs: post,
                model: 0,
                copy: 0,
                arrived: now,
            });
        }
        deps.push(Dep {
            pbs: own,
            model: wire,
            copy: 0,
            arrived: now,
        });
        let (_, merged) = self.merge(m.rank, start, now, &deps)?;
        self.probes[m.rank as usize]
            .profile
            .record_comm(&Communicated {
                site: m.site,
                peer: m.peer,
                bytes: m.bytes,
                measured_wait: merged.wait,
                compensated_wait: merged.compensated_wait,
                ..Communicated::default()
            });
        Ok(())
    }

    /// Receive `op` is done with: forgets its post.
    pub(super) fn on_receive_done(&mut self, op: u32) {
        self.posted.remove(&op);
    }

    /// A merge of `rank` from `from` (or its last kernel event, if later)
    /// to `end` on `deps`; returns its begin and the timestamped outcome.
    fn merge(
        &mut self,
        rank: u32,
        from: u64,
        end: u64,
        deps: &[Dep],
    ) -> Result<(u64, heisen_core::Merged), SimError> {
        let p = &mut self.probes[rank as usize];
        let last = p.timestamped.last_measured();
        let begin = from.max(last).min(end);
        let m = p.merge(begin, end, deps).map_err(kerr(rank))?;
        p.cpu
            .on_merge(m.approximated_end - m.compensated_wait, m.approximated_end);
        if self.recorder.keeps_graph() {
            let step = Step::Merge {
                begin,
                end,
                edges: edges_of(deps),
                collective: false,
                compensated_wait: m.compensated_wait,
                approximated_end: m.approximated_end,
            };
            self.recorder.on_step(rank, step);
        }
        if self.recorder.tracing() {
            let approximated = Some(p.timestamped.last_approximated());
            self.recorder.on_edges(approximated, rank, deps);
            self.trace(rank, TraceKind::Merge, begin, end, Some(m));
        }
        Ok((begin, m))
    }

    fn trace(
        &mut self,
        rank: u32,
        what: TraceKind,
        begin: u64,
        end: u64,
        m: Option<heisen_core::Merged>,
    ) {
        if self.recorder.tracing() {
            let kernel = Some(&self.probes[rank as usize].timestamped);
            self.recorder.on_event(kernel, rank, what, begin, end, m);
        }
    }

    /// The run's result with the kernels' part: estimates, paths, reports
    /// (ranks named `rank i`), CPU times, trace, wildcard sites.
    pub(super) fn finish(self, mut r: RunResult) -> RunResult {
        let ended: Vec<Ended<'_>> = self
            .probes
            .iter()
            .zip(&r.ends)
            .map(|(p, &end)| Ended {
                end: Some(end),
                probe: Some(p),
                overhead: 0,
            })
            .collect();
        r.estimates = Some(ended.iter().map(result::estimates).collect());
        r.paths = Some(ended.iter().map(result::path).collect());
        r.cpu = Some(ended.iter().map(result::cpu).collect());
        r.reports = Some(
            ended
                .iter()
                .enumerate()
                .map(|(i, e)| result::report_of(i as u32, &format!("rank {i}"), e, 0))
                .collect(),
        );
        r.wildcards = (self.probes.iter().enumerate())
            .filter_map(|(i, p)| Some(p.wildcards.as_ref()?.sites(i as u32)))
            .flatten()
            .collect();
        let Recorder {
            trace,
            approximated,
            activity,
        } = self.recorder;
        r.trace = trace;
        r.approximated = approximated;
        r.activity = activity.map(|mut log| {
            for (a, &end) in log.iter_mut().zip(&r.ends) {
                a.end = end;
            }
            log
        });
        r
    }
}
