//! The graph executor: runs a GOAL [`Graph`] as LogGOPSim's simulator
//! loop does (`main` in `LogGOPSim.cpp`, with the fixes of docs/goal.md
//! A1–A4), so that every rank ends at the nanosecond LogGOPSim prints.
//! Each rule cites its paragraph of docs/goal.md ("How heisen matches
//! LogGOPSim"):
//!
//! - events are operations waiting to be tried and messages arriving,
//!   popped by `(time, stamp)`; a stamp is given once, to an operation
//!   when it becomes executable and to a message when its send starts,
//!   and kept when an event is put back (G4);
//! - the operations an event makes executable are stamped by rank, then
//!   sends, receives, calcs, in the order they became executable, at
//!   their CPU's (a send: and NIC's) free time, raised to their earliest
//!   time (G5, A3);
//! - a calc or send that finds its CPU or NIC busy is put back at the
//!   time they free up; a receive never waits and costs nothing; an
//!   arrival is handled on the receiver's CPU and NIC numbered like the
//!   send's, whether or not a receive is posted (G6, G9);
//! - a rendezvous send completes when its message meets its receive,
//!   which raises the sender's CPU and NIC free times to that time (G8);
//! - a rank ends at its latest CPU free time (G11).
//!
//! With [`LogGopSim::Released`] (`--loggopsim released`) it runs as
//! LogGOPSim as released instead: libstdc++'s unstable sort, 0-byte
//! charges wrapped and the clock modulo 2^64, no causality raise, the
//! receive's size on the unexpected path, and only the queues checked at
//! the end (docs/goal.md, "LogGOPSim as released").
//!
//! Machine state is [`Hosts`] ([`super::machine`]), matching
//! [`GoalQueues`] ([`super::matching`]), dependencies [`Deps`]
//! ([`super::goal_rank`]). The queue is the engine's [`EventQueue`].

use core::cmp::Reverse;

use crate::queue::EventQueue;
use crate::transfer::{MessageCost, Network};

use super::goal_probe::{GoalKernels, Sent};
use super::goal_rank::Deps;
use super::graph::{ANY, Graph, OpKind};
use super::machine::Hosts;
use super::matching::{GoalEntry, GoalQueues};
use super::options::SimError;
use super::options::{LogGopSim, MAX_CLOCK, RunOptions};
use super::result::RunResult;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// An operation (global number) to be tried.
    Op(u32),
    /// A message (its slot) reaching its receiver.
    Message(u32),
}

/// A message from its send to its match, carrying its send's CPU and NIC
/// numbers (G6).
#[derive(Clone, Copy, Debug)]
struct Message {
    send: u32,
    from: u32,
    to: u32,
    size: u64,
    cpu: u8,
    nic: u8,
    /// When its receiver handled it (once handled).
    handled: u64,
}

/// The executor's state.
#[derive(Debug)]
struct GoalRun<'g> {
    g: &'g Graph,
    network: Network,
    hosts: Hosts,
    queues: GoalQueues,
    deps: Deps,
    queue: EventQueue<Event>,
    /// The next stamp (LogGOPSim's `aqtime`).
    stamp: u64,
    messages: Vec<Message>,
    free: Vec<u32>,
    /// The kernels, when asked for.
    kernels: Option<GoalKernels>,
    /// Some message of the graph is rendezvous on `network`.
    rendezvous: bool,
    /// LogGOPSim as released (docs/goal.md, "LogGOPSim as released").
    released: bool,
}

/// Runs `graph` on `network` and returns every rank's end time. Fails on
/// a schedule that does not complete: an operation whose dependencies
/// never complete, or a message or receive left unmatched (G12).
pub fn run_graph(graph: &Graph, network: Network) -> Result<RunResult, SimError> {
    run_graph_with(graph, network, RunOptions::TIMES)
}

/// [`run_graph`] with the heisen kernels of every rank when
/// `options.kernels` or `options.trace` (`super::goal_probe`), and a
/// trace when `options.trace`. A GOAL schedule has no instrumentation:
/// `options.measured` changes nothing, the run is the truth.
pub fn run_graph_with(
    graph: &Graph,
    network: Network,
    options: RunOptions,
) -> Result<RunResult, SimError> {
    let released = options.loggopsim == LogGopSim::Released;
    if released && (options.kernels || options.trace) {
        // As released, times can go back (A2, A3): the kernels assume
        // they do not.
        return Err(SimError::Program(
            "--loggopsim released reproduces LogGOPSim's end times only: no kernels, report, timelines or trace (run without --json, --svg, --trace)".into(),
        ));
    }
    let kernels = (options.kernels || options.trace)
        .then(|| GoalKernels::new(graph.ranks(), network, options));
    let rendezvous = graph
        .ops
        .iter()
        .any(|o| o.kind == OpKind::Send && network.message(o.size).rendezvous);
    let mut run = GoalRun {
        g: graph,
        network,
        hosts: Hosts::new(graph.ranks(), graph.cpus, graph.nics, released),
        queues: GoalQueues::new(graph.ranks()),
        deps: Deps::new(graph, released),
        queue: EventQueue::new(),
        stamp: 0,
        messages: Vec::new(),
        free: Vec::new(),
        kernels,
        rendezvous,
        released,
    };
    // G5: rank after rank, the roots at time 0.
    for r in 0..graph.ranks() {
        run.deps.roots(graph, r);
        run.schedule_fresh(true);
    }
    // The CLI's limits (docs/cli.md): --max-events, a clock past
    // MAX_CLOCK; and its progress display.
    let mut processed: u64 = 0;
    while let Some(Reverse((t, stamp, event))) = run.queue.pop() {
        processed += 1;
        // As released, LogGOPSim's clock wraps at 2^64 (A2): no bound.
        let past = t > MAX_CLOCK && !released;
        if past || processed > options.max_events {
            return Err(SimError::Limit(if past {
                format!(
                    "simulated time passed {MAX_CLOCK} ns (146 years) after {} events: a time or size in the schedule is too large",
                    processed - 1
                )
            } else {
                format!(
                    "stopped after {} events (--max-events) at simulated time {t} ns",
                    options.max_events
                )
            }));
        }
        if processed & 0xFFFF == 0 {
            super::PROGRESS.store(processed, core::sync::atomic::Ordering::Relaxed);
        }
        match event {
            Event::Op(op) => run.operation(op, t, stamp)?,
            Event::Message(slot) => run.arrive(slot, t, stamp)?,
        }
        run.schedule_fresh(false);
    }
    run.check()?;
    let result = RunResult {
        ends: (0..graph.ranks() as u32)
            .map(|r| run.hosts.end(r))
            .collect(),
        events: run.stamp,
        estimates: None,
        paths: None,
        trace: None,
        reports: None,
        approximated: None,
        activity: None,
        cpu: None,
        wildcards: Vec::new(),
        unreceived: (0, Vec::new()),
    };
    Ok(match run.kernels {
        Some(k) => k.finish(result),
        None => result,
    })
}

impl GoalRun<'_> {
    fn push(&mut self, t: u64, event: Event) {
        self.queue.push(Reverse((t, self.stamp, event)));
        self.stamp += 1;
    }

    /// Stamps and queues the operations made executable (G5): at time 0
    /// at the start, else at their CPU's (and a send's NIC's) free time,
    /// raised to their earliest time.
    #[inline]
    fn schedule_fresh(&mut self, at_zero: bool) {
        if !self.deps.fresh().is_empty() {
            self.schedule_some(at_zero);
        }
    }

    /// [`Self::schedule_fresh`] when some are fresh.
    #[inline(never)]
    fn schedule_some(&mut self, at_zero: bool) {
        self.deps.order_fresh(self.g);
        let GoalRun {
            g,
            hosts,
            deps,
            queue,
            stamp,
            ..
        } = self;
        for &op in deps.fresh() {
            let o = &g.ops[op as usize];
            let t = if at_zero {
                0
            } else {
                let free = match o.kind {
                    OpKind::Send => hosts.send_free(o.rank, o.cpu, o.nic),
                    OpKind::Recv | OpKind::Calc => hosts.cpu_free(o.rank, o.cpu),
                };
                // A3: raised to what it requires (never, as released).
                free.max(deps.earliest(op))
            };
            queue.push(Reverse((t, *stamp, Event::Op(op))));
            *stamp += 1;
        }
        self.deps.clear_fresh();
    }

    /// An operation's event at `t` (G6).
    fn operation(&mut self, op: u32, t: u64, stamp: u64) -> Result<(), SimError> {
        let o = self.g.ops[op as usize];
        let rank = self.g.ops[op as usize].rank;
        match o.kind {
            OpKind::Calc => {
                let free = self.hosts.cpu_free(rank, o.cpu);
                if free > t {
                    self.queue.push(Reverse((free, stamp, Event::Op(op))));
                    return Ok(());
                }
                let end = self.hosts.on_compute(rank, o.cpu, t, o.size)?;
                self.deps.on_start(self.g, op, t);
                self.deps.on_done(self.g, op, end);
                if let Some(k) = &mut self.kernels {
                    k.on_calc(rank, t, end);
                }
            }
            OpKind::Send => self.send(op, t, stamp)?,
            OpKind::Recv => self.post(op, t)?,
        }
        Ok(())
    }

    /// A send's event at `t`: starts when its CPU and NIC are free, puts
    /// its message on the wire with a new stamp; an eager send completes
    /// now (G6, G8).
    fn send(&mut self, op: u32, t: u64, stamp: u64) -> Result<(), SimError> {
        let o = self.g.ops[op as usize];
        let rank = self.g.ops[op as usize].rank;
        let free = self.hosts.send_free(rank, o.cpu, o.nic);
        if free > t {
            self.queue.push(Reverse((free, stamp, Event::Op(op))));
            return Ok(());
        }
        self.deps.on_start(self.g, op, t);
        let cost = self.cost(o.size);
        self.hosts.on_send(rank, o.cpu, o.nic, t, &cost)?;
        let m = Message {
            send: op,
            from: rank,
            to: o.peer,
            size: o.size,
            cpu: o.cpu,
            nic: o.nic,
            handled: 0,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.messages[s as usize] = m;
                s
            }
            None => {
                self.messages.push(m);
                (self.messages.len() - 1) as u32
            }
        };
        if self.kernels.is_some() {
            let (sent, cpu_end) = (self.sent(&m, slot), self.hosts.cpu_free(rank, o.cpu));
            if let Some(k) = &mut self.kernels {
                k.on_send(sent, t, cpu_end)?;
            }
        }
        let arrival = if self.released {
            t.wrapping_add(cost.wire)
        } else {
            t.checked_add(cost.wire).ok_or_else(overflow)?
        };
        self.push(arrival, Event::Message(slot));
        if !cost.rendezvous {
            self.deps
                .on_done(self.g, op, self.hosts.cpu_free(rank, o.cpu));
        }
        Ok(())
    }

    /// A receive's event at `t`: posted now, at no cost; it takes the
    /// oldest unexpected message it matches (G6, G10).
    fn post(&mut self, op: u32, t: u64) -> Result<(), SimError> {
        let o = self.g.ops[op as usize];
        let rank = self.g.ops[op as usize].rank;
        self.deps.on_start(self.g, op, t);
        if let Some(k) = &mut self.kernels {
            k.on_post(rank, op, t, self.rendezvous);
        }
        let entry = GoalEntry {
            peer: o.peer,
            tag: o.tag,
            id: op,
        };
        if let Some(found) = self.queues.on_post(rank, entry) {
            let m = self.take(found.id);
            // A4: the message's size decides rendezvous; the sender's free
            // times are raised with the receive's CPU and NIC numbers. As
            // released, the receive's size decides: an eager send whose
            // message meets a receive above S completes a second time, a
            // rendezvous send whose message meets a receive of at most S
            // never completes (its dependents never run).
            let size = if self.released { o.size } else { m.size };
            let rendezvous = self.network.message(size).rendezvous;
            if rendezvous {
                self.deps.on_done(self.g, m.send, t);
                self.hosts.on_rendezvous_match(m.from, o.cpu, o.nic, t);
            }
            self.deps.on_done(self.g, op, t);
            self.kernels_on_match(op, &m, found.id, rendezvous, t)?;
        }
        Ok(())
    }

    /// A message's event at `t`: handled when the receiver's CPU and NIC
    /// numbered like the send's are free, then matched or kept as
    /// unexpected (G6, G9, G10).
    fn arrive(&mut self, slot: u32, t: u64, stamp: u64) -> Result<(), SimError> {
        let m = self.messages[slot as usize];
        let free = self.hosts.receive_free(m.to, m.cpu, m.nic);
        if free > t {
            self.queue
                .push(Reverse((free, stamp, Event::Message(slot))));
            return Ok(());
        }
        let cost = self.cost(m.size);
        let handled = self.hosts.on_receive(m.to, m.cpu, m.nic, t, &cost)?;
        self.messages[slot as usize].handled = t;
        let m = self.messages[slot as usize];
        let tag = self.g.ops[m.send as usize].tag;
        let entry = GoalEntry {
            peer: m.from,
            tag,
            id: slot,
        };
        if let Some(receive) = self.queues.on_arrival(m.to, entry) {
            self.take(slot);
            if cost.rendezvous {
                self.deps.on_done(self.g, m.send, t);
                self.hosts.on_rendezvous_match(m.from, m.cpu, m.nic, t);
            }
            self.deps.on_done(self.g, receive.id, handled);
            self.kernels_on_match(receive.id, &m, slot, cost.rendezvous, t)?;
        }
        Ok(())
    }

    /// The costs of a message of `size` bytes (G6). As released, a 0-byte
    /// message is charged `0 - 1` bytes in 64-bit unsigned arithmetic
    /// (A2): `o + (2^64 - 1)·O` and `g + (2^64 - 1)·G` wrap to `o - O`
    /// and `g - G`, and the receiver's `max` of the two per-byte charges
    /// is taken on the wrapped values; [`Hosts`] adds them wrapping.
    fn cost(&self, size: u64) -> MessageCost {
        let mut cost = self.network.message(size);
        if let (true, 0, Network::LogGops(p)) = (self.released, size, self.network) {
            let per_o = u64::MAX.wrapping_mul(p.overhead_per_byte);
            let per_g = u64::MAX.wrapping_mul(p.gap_per_byte);
            cost.send_cpu = p.overhead.wrapping_add(per_o);
            cost.send_gap = p.gap.wrapping_add(per_g);
            cost.recv_cpu = p.overhead.wrapping_add(per_o.max(per_g));
            cost.recv_gap = p.gap.wrapping_add(per_g);
        }
        cost
    }

    /// The message `m` in `slot` as the kernels see it.
    fn sent(&self, m: &Message, slot: u32) -> Sent {
        Sent {
            rank: m.from,
            op: m.send,
            site: m.send - self.g.first[m.from as usize],
            peer: m.to,
            bytes: m.size,
            slot,
        }
    }

    /// Receive `receive` matched message `m` (in `slot`) at `now`: the
    /// kernels merge, the sender's too for a rendezvous send.
    #[inline]
    fn kernels_on_match(
        &mut self,
        receive: u32,
        m: &Message,
        slot: u32,
        rendezvous: bool,
        now: u64,
    ) -> Result<(), SimError> {
        if self.kernels.is_none() {
            return Ok(());
        }
        let sent = self.sent(m, slot);
        let Some(k) = &mut self.kernels else {
            return Ok(());
        };
        if rendezvous {
            k.on_send_matched(sent, receive, now)?;
        }
        let site = receive - self.g.first[m.to as usize];
        let any = self.g.ops[receive as usize].peer == ANY;
        k.on_receive_matched(m.to, (receive, site, any), sent, m.handled, now)?;
        k.on_receive_done(receive);
        Ok(())
    }

    /// The message in `slot`, whose slot is free again.
    fn take(&mut self, slot: u32) -> Message {
        self.free.push(slot);
        self.messages[slot as usize]
    }

    /// G12, stricter than LogGOPSim: every operation ran and every list is
    /// empty; otherwise each rank that cannot finish says why.
    fn check(&self) -> Result<(), SimError> {
        let mut left = vec![(0, 0, 0); self.g.ranks()];
        for (r, l) in left.iter_mut().enumerate() {
            l.0 = self
                .g
                .rank_ops(r)
                .filter(|&op| self.deps.waiting(op))
                .count();
        }
        for (r, posted, unexpected) in self.queues.left() {
            left[r] = (left[r].0, posted, unexpected);
        }
        let blocked: Vec<String> = (left.iter().enumerate())
            .filter(|(_, l)| **l != (0, 0, 0))
            .map(|(r, &(waiting, posted, unexpected))| {
                let mut what = Vec::new();
                for (n, one, many, wait) in [
                    (
                        waiting,
                        "operation waits",
                        "operations wait",
                        "for dependencies that never complete",
                    ),
                    (posted, "receive waits", "receives wait", "for a message"),
                    (
                        unexpected,
                        "message waits",
                        "messages wait",
                        "for a receive",
                    ),
                ] {
                    if n > 0 {
                        let verb = if n == 1 { one } else { many };
                        what.push(format!("{n} {verb} {wait}"));
                    }
                }
                format!("rank {r}: {}", what.join(", "))
            })
            .collect();
        if blocked.is_empty() && self.deps.all_started(self.g) {
            return Ok(());
        }
        // As released, LogGOPSim checks only its lists (G12): operations
        // that never became executable (a rendezvous send completed by
        // no one, A4) are left out and the times printed.
        if self.released && self.queues.left().next().is_none() {
            return Ok(());
        }
        let time = (0..self.g.ranks() as u32).map(|r| self.hosts.end(r)).max();
        Err(SimError::Deadlock {
            time: time.unwrap_or(0),
            blocked,
        })
    }
}

fn overflow() -> SimError {
    SimError::Program(format!(
        "simulated time passes {} ns (check the parameters and sizes)",
        u64::MAX
    ))
}
