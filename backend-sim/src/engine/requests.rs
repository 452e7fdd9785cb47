//! One location's outstanding point-to-point requests (MPI's
//! `MPI_Request`s): started by a nonblocking send or receive, satisfied
//! when their message is matched (a receive, or a rendezvous send), and
//! completed by the wait that names them. A satisfied request keeps its
//! dependencies (the records the merge will take, R3) until then.
//! Matching itself is [`super::matching`]'s; the wait's merge is
//! [`super::p2p`]'s.

use smallvec::SmallVec;

use crate::program::LocationId;

use super::code::Req;
use super::probe::{Dep, Pbs};

/// A list whose first few elements live inline in the location: most
/// locations have at most a couple of requests at a time, and keeping
/// them in the location spares a heap allocation per location (a
/// 65,536-rank schedule's run state) and a cache miss per arrival.
type Inline<T, const N: usize> = SmallVec<[T; N]>;

/// An outstanding request: 56 bytes; its dependencies (kernels only) are
/// kept apart, in [`Requests`].
#[derive(Clone, Debug)]
pub(super) struct Request {
    pub(super) id: u64,
    pub(super) name: Req,
    /// A rendezvous send (otherwise a receive).
    pub(super) send: bool,
    /// A receive from any source (R11).
    pub(super) wildcard: bool,
    /// When the dependency was satisfied (message handled, send matched).
    pub(super) satisfied: Option<u64>,
    /// Call site of the send or receive (R11, R12).
    pub(super) site: u32,
    /// A send's destination; a receive's source, once matched.
    pub(super) peer: Option<LocationId>,
    /// Bytes of the message (a receive's once matched).
    pub(super) bytes: u64,
}

const _: () = assert!(size_of::<Request>() == 56);

/// Which requests a wait waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WaitSet {
    /// Up to two requests by id.
    Ids([u64; 2], usize),
    /// Every outstanding request.
    All,
}

impl WaitSet {
    pub(super) fn contains(self, id: u64) -> bool {
        match self {
            WaitSet::All => true,
            WaitSet::Ids(ids, n) => ids[..n.min(2)].contains(&id),
        }
    }
}

/// The requests a wait completed, for the statistics: each with the range
/// of its dependencies in the list the wait merges (kernels only).
pub(super) type Completed = SmallVec<[(Request, usize, usize); 2]>;

/// One location's requests.
#[derive(Debug)]
pub(super) struct Requests {
    outstanding: Inline<Request, 2>,
    /// Dependencies of satisfied requests, by request id, until the wait
    /// merges them (kernels only).
    deps: Vec<(u64, Dep)>,
    /// A rendezvous send's own record and wire time, by request id, until
    /// it is matched (kernels only).
    own_sends: Vec<(u64, Pbs, u64)>,
    /// Names of eager sends not waited for yet (complete already).
    done_sends: Inline<Req, 4>,
    /// The source of the last receive completed (a reply's destination).
    last_source: Option<LocationId>,
}

impl Requests {
    pub(super) fn new() -> Self {
        Requests {
            outstanding: Inline::new(),
            deps: Vec::new(),
            own_sends: Vec::new(),
            done_sends: Inline::new(),
            last_source: None,
        }
    }

    /// The source of the last completed receive.
    #[inline]
    pub(super) fn last_source(&self) -> Option<LocationId> {
        self.last_source
    }

    /// A request starts: a receive is posted, or a rendezvous send leaves.
    #[inline]
    pub(super) fn on_start(&mut self, request: Request) {
        self.outstanding.push(request);
    }

    /// A rendezvous send's own record and its message's wire time: a
    /// dependency of the send once it is matched (kernels only).
    #[inline]
    pub(super) fn on_own_send(&mut self, id: u64, own: Pbs, wire: u64) {
        self.own_sends.push((id, own, wire));
    }

    /// An eager send left: complete once the CPU is done with it, so only
    /// its name is kept, for the wait.
    #[inline]
    pub(super) fn on_eager_send(&mut self, name: Req) {
        self.done_sends.push(name);
    }

    /// Receive `id` matched a message of `bytes` from `from` at `at`; `dep`
    /// is the message's dependency (kernels only).
    #[inline]
    pub(super) fn on_receive_matched(
        &mut self,
        id: u64,
        at: u64,
        from: LocationId,
        bytes: u64,
        dep: Option<Dep>,
    ) {
        if let Some(r) = self.outstanding.iter_mut().find(|r| r.id == id) {
            r.satisfied = Some(at);
            r.peer = Some(from);
            r.bytes = bytes;
            if let Some(dep) = dep {
                self.deps.push((id, dep));
            }
        }
    }

    /// Rendezvous send `id` was matched at `now`: it depends on the
    /// receive's post (`post`, its record) and on its own message's
    /// arrival (LogGOPSim: it completes when matched).
    #[inline]
    pub(super) fn on_send_matched(&mut self, id: u64, now: u64, post: Option<Pbs>) {
        if let Some(r) = self.outstanding.iter_mut().find(|r| r.id == id) {
            r.satisfied = Some(now);
            let own = self
                .own_sends
                .iter()
                .position(|o| o.0 == id)
                .map(|i| self.own_sends.swap_remove(i));
            if let (Some(post), Some((id, own, wire))) = (post, own) {
                let dep = |pbs, model| Dep {
                    pbs,
                    model,
                    copy: 0,
                    arrived: now,
                };
                self.deps.push((id, dep(post, 0)));
                self.deps.push((id, dep(own, wire)));
            }
        }
    }

    /// The requests a wait on `first` (and `second`) waits for; eager
    /// sends among them are complete and forgotten. `Err` names a request
    /// that is not outstanding.
    #[inline]
    pub(super) fn wait_set(&mut self, first: Req, second: Option<Req>) -> Result<WaitSet, Req> {
        let mut ids = [0; 2];
        let mut n = 0;
        for name in [Some(first), second].into_iter().flatten() {
            if let Some(r) = self.outstanding.iter().find(|r| r.name == name) {
                ids[n] = r.id;
                n += 1;
            } else if let Some(i) = self.done_sends.iter().position(|d| *d == name) {
                // An eager send, complete since it started.
                self.done_sends.swap_remove(i);
            } else {
                return Err(name);
            }
        }
        Ok(WaitSet::Ids(ids, n))
    }

    /// A wait on every request: eager sends are complete and forgotten.
    #[inline]
    pub(super) fn wait_all(&mut self) -> WaitSet {
        self.done_sends.clear();
        WaitSet::All
    }

    /// When a wait that began at `begin` on `set` ends: the last of its
    /// requests' satisfaction, or `None` while one is not satisfied.
    #[inline]
    pub(super) fn satisfied(&self, set: WaitSet, begin: u64) -> Option<u64> {
        let mut end = begin;
        for r in self.outstanding.iter().filter(|r| set.contains(r.id)) {
            end = end.max(r.satisfied?);
        }
        Some(end)
    }

    /// Completes the requests of `set`: appends their dependencies to
    /// `deps`, in request order and each request's in the order they came,
    /// and (when `kernels`) the completed requests to `completed`, for the
    /// statistics. A completed receive's source becomes the last source.
    /// (Out-parameters: returning the inline list moved it through a
    /// `memcpy` on every wait.)
    #[inline]
    pub(super) fn complete(
        &mut self,
        set: WaitSet,
        kernels: bool,
        deps: &mut Vec<Dep>,
        completed: &mut Completed,
    ) {
        let Requests {
            outstanding,
            deps: pending,
            last_source,
            ..
        } = self;
        outstanding.retain(|r| {
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
    }

    /// The requests of `set` not satisfied yet (a deadlock's report).
    pub(super) fn unsatisfied(&self, set: WaitSet) -> impl Iterator<Item = &Request> {
        self.outstanding
            .iter()
            .filter(move |r| set.contains(r.id) && r.satisfied.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receive(id: u64, name: Req) -> Request {
        Request {
            id,
            name,
            send: false,
            wildcard: false,
            satisfied: None,
            site: 0,
            peer: None,
            bytes: 0,
        }
    }

    #[test]
    fn wait_ends_at_the_last_satisfaction_and_sets_the_last_source() {
        let mut r = Requests::new();
        r.on_start(receive(1, Req::user(10)));
        r.on_start(receive(2, Req::user(11)));
        r.on_eager_send(Req::user(12));
        let set = r.wait_set(Req::user(10), Some(Req::user(12))).unwrap();
        assert_eq!(set, WaitSet::Ids([1, 0], 1), "the eager send is complete");
        assert_eq!(r.satisfied(set, 50), None);
        r.on_receive_matched(1, 300, 7, 8, None);
        assert_eq!(r.satisfied(set, 50), Some(300));
        assert_eq!(r.satisfied(set, 400), Some(400), "began after: no wait");
        let (mut deps, mut completed) = (Vec::new(), Completed::new());
        r.complete(set, true, &mut deps, &mut completed);
        assert!(deps.is_empty());
        assert_eq!(completed.len(), 1);
        assert_eq!(r.last_source(), Some(7));
        assert_eq!(
            r.unsatisfied(WaitSet::All)
                .map(|q| q.id)
                .collect::<Vec<_>>(),
            vec![2]
        );
    }

    #[test]
    fn unknown_or_waited_names_are_refused() {
        let mut r = Requests::new();
        r.on_eager_send(Req::user(3));
        assert!(r.wait_set(Req::user(3), None).is_ok());
        assert_eq!(r.wait_set(Req::user(3), None), Err(Req::user(3)));
        assert_eq!(r.wait_all(), WaitSet::All);
    }
}
