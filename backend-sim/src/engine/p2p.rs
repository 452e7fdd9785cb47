//! Point-to-point messages (MPI's `MPI_Isend`, `MPI_Irecv`, `MPI_Wait`,
//! `MPI_Waitall`; blocking calls are compiled into these): a send takes
//! the sender's CPU and NIC and puts its message on the wire, an arrival
//! takes the receiver's ([`super::machine`]); matching pairs a posted
//! receive with a handled message ([`super::matching`]) and satisfies
//! their requests ([`super::requests`]); a wait completes when its
//! requests are satisfied, as a merge on their dependencies (R4, R5) with
//! one statistics record per call site and peer (R12) and wildcard
//! reorderings detected (R11).

use heisen_core::Dependency;
use heisen_core::stats::Communicated;

use crate::program::{LocationId, Program, Source};

use super::code::{Code, LAST_SOURCE, MessageShape, Req, req_name};
use super::matching::{InFlight, Message, Posted};
use super::options::{Matching, SimError, kerr};
use super::probe::{Dep, Probe};
use super::record::TraceKind;
use super::requests::{Completed, Request};
use super::world::{Block, EventKind, Flow, State, World};

/// The messages in flight and the request ids of a run.
#[derive(Debug)]
pub(super) struct P2p {
    in_flight: InFlight,
    next_request: u64,
    /// Some message of the program is sent by rendezvous on its network:
    /// posted receives then keep the receiver's record (R3).
    rendezvous: bool,
}

impl P2p {
    pub(super) fn new(program: &Program, code: &Code) -> Self {
        P2p {
            in_flight: InFlight::default(),
            next_request: 0,
            rendezvous: code
                .shapes()
                .iter()
                .any(|s| !s.recv && program.network.message(s.bytes).rendezvous),
        }
    }

    fn next_id(&mut self) -> u64 {
        let id = self.next_request;
        self.next_request += 1;
        id
    }

    /// `l` sends a message of `shape` to `to` under request `request`:
    /// first the release and its cost (R3: the clock read comes first, its
    /// cost after), then, when the NIC's send gap is over, the send itself.
    pub(super) fn isend(
        &mut self,
        w: &mut World<'_>,
        l: LocationId,
        to: u32,
        request: Req,
        shape: u32,
        seq: u64,
    ) -> Result<Flow, SimError> {
        let li = l as usize;
        let now = w.now;
        let shape = w.code.shape(shape);
        let to = match to {
            LAST_SOURCE => w.locs[li].requests.last_source().ok_or_else(|| {
                SimError::Program(format!(
                    "{}: a reply to the last source before any receive completed",
                    w.name(l)
                ))
            })?,
            t => t,
        };
        if to == l {
            return Err(SimError::Program(format!(
                "{}: a send to itself",
                w.name(l)
            )));
        }
        if w.release_for_send(l)? {
            w.next_step(l);
            return Ok(Flow::Stop);
        }
        let loc = &w.locs[li];
        if loc.host.send_free() > now {
            // LogGOPSim: the NIC's send gap is not over; re-insert.
            let (t, pc) = (loc.host.send_free(), loc.pc as u32);
            w.reinsert(t, seq, EventKind::Step(l, pc));
            return Ok(Flow::Stop);
        }
        self.send(w, l, to, request, shape)
    }

    /// The send leaves now: the sender's CPU and NIC are busy, the message
    /// arrives after its wire time. An eager send is complete locally; a
    /// rendezvous send waits for its match.
    fn send(
        &mut self,
        w: &mut World<'_>,
        l: LocationId,
        to: LocationId,
        request: Req,
        shape: MessageShape,
    ) -> Result<Flow, SimError> {
        let now = w.now;
        let MessageShape { tag, bytes, .. } = shape;
        let pbs = w.take_released(l);
        let loc = &mut w.locs[l as usize];
        let cost = w.network.message(bytes);
        loc.host.on_send(now, &cost);
        let id = self.next_id();
        let site = loc.site();
        if cost.rendezvous {
            loc.requests.on_start(Request {
                id,
                name: request,
                send: true,
                wildcard: false,
                satisfied: None,
                site,
                peer: Some(to),
                bytes,
            });
            if let Some(own) = &pbs {
                // Its own message's arrival, a dependency once matched.
                loc.requests.on_own_send(id, own.clone(), cost.wire);
            }
        } else {
            loc.requests.on_eager_send(request);
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
        loc.advance();
        let slot = self.in_flight.insert(Message {
            from: l,
            to,
            tag: tag.unwrap_or(0),
            bytes,
            rendezvous: cost.rendezvous,
            send_request: id,
            pbs,
            handled: 0,
        });
        w.push(now + cost.wire, EventKind::Arrive(slot));
        w.record(l, TraceKind::Send(to), now, now + cost.send_cpu);
        if cost.send_cpu > 0 {
            w.next_step(l);
            return Ok(Flow::Stop);
        }
        Ok(Flow::Next)
    }

    /// `l` posts a receive at `now`: it matches the first handled
    /// unexpected message or waits in the posted queue. Posting needs no
    /// CPU (LogGOPSim).
    pub(super) fn post(
        &mut self,
        w: &mut World<'_>,
        l: LocationId,
        from: Source,
        shape: MessageShape,
        request: Req,
    ) -> Result<(), SimError> {
        let now = w.now;
        let tag = shape.tag;
        let id = self.next_id();
        // Kept for a rendezvous send, whose completion depends on this post
        // (R3); a program whose every message is eager never needs it.
        let pbs = if self.rendezvous {
            w.peek(l, now)
        } else {
            None
        };
        let loc = &mut w.locs[l as usize];
        let site = loc.site();
        loc.requests.on_start(Request {
            id,
            name: request,
            send: false,
            wildcard: from == Source::Any,
            satisfied: None,
            site,
            peer: None,
            bytes: 0,
        });
        loc.advance();
        let posted = Posted {
            request: id,
            from,
            tag,
            bytes: shape.bytes,
            pbs,
        };
        let by_approximated = w.options.matching == Matching::Approximated;
        match loc.matching.on_post(posted, by_approximated) {
            Some((posted, m)) => matched(w, l, posted, m, now),
            None => Ok(()),
        }
    }

    /// The message in `slot` reaches its receiver's NIC (LogGOPSim's
    /// OP_MSG): handled when the receiver's CPU and NIC are free, then
    /// matched or kept as unexpected.
    #[inline]
    pub(super) fn arrive(
        &mut self,
        w: &mut World<'_>,
        slot: usize,
        seq: u64,
    ) -> Result<(), SimError> {
        let Some(to) = self.in_flight.receiver(slot) else {
            return Ok(());
        };
        let now = w.now;
        let busy = w.locs[to as usize].host.receive_free();
        if busy > now {
            // LogGOPSim: the receiver's CPU or NIC is busy; re-insert.
            w.reinsert(busy, seq, EventKind::Arrive(slot));
            return Ok(());
        }
        let Some(mut m) = self.in_flight.take(slot) else {
            return Ok(());
        };
        let cost = w.network.message(m.bytes);
        let loc = &mut w.locs[to as usize];
        loc.host.on_receive(now, &cost);
        m.handled = now;
        match loc.matching.on_arrival(m) {
            Some((posted, m)) => matched(w, to, posted, m, now),
            None => Ok(()),
        }
    }
}

/// A posted receive of `receiver` and a handled message meet at `now`.
fn matched(
    w: &mut World<'_>,
    receiver: LocationId,
    posted: Posted,
    m: Message,
    now: u64,
) -> Result<(), SimError> {
    let Message {
        from,
        bytes,
        rendezvous,
        send_request,
        pbs,
        handled,
        tag,
        ..
    } = m;
    if bytes > posted.bytes && w.options.truncation {
        // MPI_ERR_TRUNCATE: MPI refuses a message larger than its receive.
        return Err(SimError::Program(format!(
            "message truncated: {} sent {bytes} B (tag {tag}) to {}, whose matching receive takes at most {} B (MPI_ERR_TRUNCATE)",
            w.name(from),
            w.name(receiver),
            posted.bytes
        )));
    }
    // Satisfied now: when the arrival is handled, or when the receive is
    // posted after an unexpected message was handled. The merge ends here;
    // the receive overhead o that follows is ordinary CPU time, because R5
    // reads a(e) = max(b - x, a_j + l_j) at this point.
    let dep = pbs.map(|pbs| Dep {
        pbs,
        model: w.network.model(bytes),
        copy: w.network.copy(bytes),
        // When the message reached this receiver, which is before `now` if
        // it waited in the unexpected queue: the kernel measures the
        // transfer up to here (R5).
        arrived: handled,
    });
    w.locs[receiver as usize]
        .requests
        .on_receive_matched(posted.request, now, from, bytes, dep);
    if rendezvous {
        // LogGOPSim: a rendezvous send completes when it is matched. It
        // depends on the receive's post and on its own message's arrival.
        let sender = &mut w.locs[from as usize];
        sender.host.on_rendezvous_match(now);
        sender
            .requests
            .on_send_matched(send_request, now, posted.pbs);
        try_complete_wait(w, from)?;
    }
    try_complete_wait(w, receiver)
}

/// `l` waits for `first` (and `second`, a sendrecv's other half).
pub(super) fn wait(
    w: &mut World<'_>,
    l: LocationId,
    first: Req,
    second: Option<Req>,
) -> Result<Flow, SimError> {
    let now = w.now;
    let set = w.locs[l as usize]
        .requests
        .wait_set(first, second)
        .map_err(|name| {
            SimError::Program(format!(
                "{}: wait on request {} that is not outstanding",
                w.name(l),
                req_name(name)
            ))
        })?;
    w.locs[l as usize].block(Block::Wait { begin: now, set });
    try_complete_wait(w, l)?;
    Ok(Flow::Stop)
}

/// `l` waits for every outstanding request.
pub(super) fn wait_all(w: &mut World<'_>, l: LocationId) -> Result<Flow, SimError> {
    let now = w.now;
    let loc = &mut w.locs[l as usize];
    let set = loc.requests.wait_all();
    loc.block(Block::Wait { begin: now, set });
    try_complete_wait(w, l)?;
    Ok(Flow::Stop)
}

/// Completes `l`'s wait if every request it waits for is satisfied: R4
/// (000 Fig. 7) and R5 (001 case m.1 when the wait began before the
/// release, m.2 otherwise); R6 n-to-1 shape for a wait on several
/// receives. A wait whose requests carry no dependency (eager sends,
/// kernels off) merges nothing and costs nothing.
fn try_complete_wait(w: &mut World<'_>, l: LocationId) -> Result<(), SimError> {
    let li = l as usize;
    let State::Blocked(Block::Wait { begin, set }) = &w.locs[li].state else {
        return Ok(());
    };
    let (begin, set) = (*begin, *set);
    let Some(end) = w.locs[li].requests.satisfied(set, begin) else {
        return Ok(());
    };
    let kernels = w.locs[li].probe.is_some();
    let mut deps = Vec::new();
    let mut completed = Completed::new();
    w.locs[li]
        .requests
        .complete(set, kernels, &mut deps, &mut completed);
    let had_deps = !deps.is_empty();
    if had_deps {
        let mut merged = None;
        if let Some(p) = &mut w.locs[li].probe {
            let m = p.merge(begin, end, &deps).map_err(kerr(l))?;
            record_comms(p, begin, end, &deps, &completed, m);
            merged = Some(m);
        }
        w.on_merged(l, begin, end, &deps, merged);
        w.record_edges(l, &deps);
        w.record_merged(l, TraceKind::Merge, begin, end, merged);
    }
    w.locs[li].resume();
    let cost = if had_deps { w.calibration.merge } else { 0 };
    w.charge_from(l, end, cost);
    w.next_step(l);
    Ok(())
}

/// R12: one statistics record per completed request of a wait that began
/// at `begin`, ended at `end` and merged `deps` with outcome `m`. The
/// wait is the call's that was satisfied last (it decided the end; the
/// first of equals); the others waited for nothing of their own.
fn record_comms(
    p: &mut Probe,
    begin: u64,
    end: u64,
    deps: &[Dep],
    completed: &Completed,
    m: heisen_core::Merged,
) {
    let decider = completed
        .iter()
        .enumerate()
        .min_by_key(|(_, (r, ..))| core::cmp::Reverse(r.satisfied))
        .map(|(i, _)| i);
    for (i, (r, first, last)) in completed.iter().enumerate() {
        // R5: each dependency's transfer l_j and the message's
        // approximated arrival a_j + l_j, as the timestamped kernel
        // computed them.
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
