//! Point-to-point message matching as LogGOPSim does it, one state
//! machine per location: a posted-receive queue and an unexpected-message
//! queue (LogGOPSim's RQ and UQ), both in arrival order. A posted receive
//! takes the first unexpected message it matches; a handled message takes
//! the first posted receive it matches; otherwise each waits in its queue
//! (MPI's non-overtaking rule; wildcards match in observed order, R11).
//! Also the store of messages between their send and their handling.
//!
//! Nothing here knows about time or CPUs: the caller says when a receive
//! is posted and when a message is handled ([`super::machine`] decides
//! that), and acts on the pair that matched.

use std::collections::VecDeque;

use crate::program::{LocationId, Source, Tag};

use super::graph::ANY;
use super::probe::Pbs;

/// A posted receive, waiting for its message.
#[derive(Clone, Debug)]
pub(super) struct Posted {
    /// Its request's id.
    pub(super) request: u64,
    pub(super) from: Source,
    /// `None`: any tag.
    pub(super) tag: Tag,
    /// The most bytes it takes (MPI's count times the type's size).
    pub(super) bytes: u64,
    /// The receiver's record at the post, for a rendezvous send that
    /// depends on it (R3; kernels only).
    pub(super) pbs: Option<Pbs>,
}

/// A message from its send to its match.
#[derive(Clone, Debug)]
pub(super) struct Message {
    pub(super) from: LocationId,
    pub(super) to: LocationId,
    pub(super) tag: u32,
    pub(super) bytes: u64,
    /// The send completes only when the message is matched.
    pub(super) rendezvous: bool,
    /// The sender's request id.
    pub(super) send_request: u64,
    /// The sender's records (R3; kernels only).
    pub(super) pbs: Option<Pbs>,
    /// When the receiver handled the arrival (set once handled).
    pub(super) handled: u64,
}

/// Whether `m` is a message that `p` receives: its source (or any) and
/// its tag (or any).
fn matches(p: &Posted, m: &Message) -> bool {
    let source = match p.from {
        Source::Any => true,
        Source::Location(s) => s == m.from,
    };
    source && p.tag.is_none_or(|t| t == m.tag)
}

/// A list in arrival order whose first element lives inline: most
/// locations have at most one posted receive or unexpected message at a
/// time, and keeping it in the location spares a heap allocation per
/// location and a cache miss per arrival. O(1) at the front (a
/// `SmallVec` there shifted a master's thousand unexpected messages on
/// every receive). Invariant: `rest` is empty when `head` is `None`.
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

/// One location's matching queues.
#[derive(Debug)]
pub(super) struct Matching {
    posted: Small<Posted>,
    unexpected: Small<Message>,
}

impl Matching {
    pub(super) const fn new() -> Self {
        Matching {
            posted: Small::new(),
            unexpected: Small::new(),
        }
    }

    /// A receive is posted: it takes the first unexpected message that it
    /// matches, or waits in the posted queue (`None`).
    /// With `by_approximated`, a wildcard (any-source) receive takes the
    /// matching message with the earliest approximated send time instead
    /// (R11's replay; messages without kernel records keep arrival order).
    #[inline]
    pub(super) fn on_post(
        &mut self,
        posted: Posted,
        by_approximated: bool,
    ) -> Option<(Posted, Message)> {
        let found = if by_approximated && posted.from == Source::Any {
            // R11: the earliest approximated send (R5 `a = t - x`); the
            // first in arrival order among equals.
            self.unexpected
                .iter()
                .enumerate()
                .filter(|(_, m)| matches(&posted, m))
                .min_by_key(|(i, m)| {
                    let sent = m
                        .pbs
                        .as_ref()
                        .map_or(i64::MIN, |p| p.timestamped.approximated);
                    (sent, *i)
                })
                .map(|(i, _)| i)
        } else {
            self.unexpected.iter().position(|m| matches(&posted, m))
        };
        match found.and_then(|i| self.unexpected.remove(i)) {
            Some(m) => Some((posted, m)),
            None => {
                self.posted.push(posted);
                None
            }
        }
    }

    /// A message is handled: it takes the first posted receive that
    /// matches it, or waits in the unexpected queue (`None`).
    #[inline]
    pub(super) fn on_arrival(&mut self, m: Message) -> Option<(Posted, Message)> {
        let found = self.posted.iter().position(|p| matches(p, &m));
        match found.and_then(|i| self.posted.remove(i)) {
            Some(p) => Some((p, m)),
            None => {
                self.unexpected.push(m);
                None
            }
        }
    }

    /// The messages no receive has taken yet, in arrival order.
    pub(super) fn unexpected(&self) -> impl Iterator<Item = &Message> {
        self.unexpected.iter()
    }

    /// The posted receive of request `request`, while it waits.
    pub(super) fn posted(&self, request: u64) -> Option<&Posted> {
        self.posted.iter().find(|p| p.request == request)
    }
}

/// Messages between their send and their handling at the receiver, in
/// slots that are reused: memory grows with the messages in flight at
/// once, not with the messages of the run.
#[derive(Debug, Default)]
pub(super) struct InFlight {
    messages: Vec<Option<Message>>,
    free: Vec<usize>,
}

impl InFlight {
    /// Keeps `m` until it is handled; returns its slot.
    #[inline]
    pub(super) fn insert(&mut self, m: Message) -> usize {
        match self.free.pop() {
            Some(s) => {
                self.messages[s] = Some(m);
                s
            }
            None => {
                self.messages.push(Some(m));
                self.messages.len() - 1
            }
        }
    }

    /// The receiver of the message in `slot`.
    #[inline]
    pub(super) fn receiver(&self, slot: usize) -> Option<LocationId> {
        self.messages
            .get(slot)
            .and_then(Option::as_ref)
            .map(|m| m.to)
    }

    /// Takes the message in `slot` out; the slot is free again.
    #[inline]
    pub(super) fn take(&mut self, slot: usize) -> Option<Message> {
        let m = self.messages.get_mut(slot)?.take()?;
        self.free.push(slot);
        Some(m)
    }
}

/// A posted receive or an unexpected message of a GOAL graph, in
/// LogGOPSim's list matching (`match()` with `LIST_MATCH`, docs/goal.md
/// G10): its peer (a receive's source or [`ANY`], a message's sender),
/// its tag ([`ANY`] on either side matches every tag) and what it is (a
/// receive's operation, a message's slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct GoalEntry {
    pub(super) peer: u32,
    pub(super) tag: u32,
    pub(super) id: u32,
}

impl GoalEntry {
    fn matches(&self, other: &GoalEntry) -> bool {
        (self.peer == ANY || other.peer == ANY || self.peer == other.peer)
            && (self.tag == ANY || other.tag == ANY || self.tag == other.tag)
    }
}

/// The posted and unexpected lists of every rank of a GOAL graph, each
/// searched from its oldest entry (LogGOPSim's `rq` and `uq`). Sizes take
/// no part in matching.
///
/// Every list is a singly linked list through one pool of entries, with
/// 8 bytes of head and tail per rank and list: a rank's lists cost no
/// allocation of their own (two `VecDeque`s per rank were 64 bytes per
/// rank plus an allocation for each rank that posted anything: 0.5 GB of
/// a 4-million-rank broadcast).
#[derive(Debug)]
pub(super) struct GoalQueues {
    /// Per rank: `[posted head, posted tail, unexpected head, unexpected
    /// tail]`, pool indices or [`NIL`].
    ends: Vec<[u32; 4]>,
    /// Entries and the index of the next one in their list.
    pool: Vec<(GoalEntry, u32)>,
    /// First free pool slot (linked through the same `next`).
    free: u32,
}

/// No entry.
const NIL: u32 = u32::MAX;

/// The list of `ends` a rank's posted receives (0) or unexpected
/// messages (2) start at.
const POSTED: usize = 0;
const UNEXPECTED: usize = 2;

impl GoalQueues {
    pub(super) fn new(ranks: usize) -> Self {
        GoalQueues {
            ends: vec![[NIL; 4]; ranks],
            pool: Vec::new(),
            free: NIL,
        }
    }

    /// Takes the oldest entry of `rank`'s list `which` that matches `e`.
    #[inline]
    fn take(&mut self, rank: usize, which: usize, e: &GoalEntry) -> Option<GoalEntry> {
        let head = self.ends[rank][which];
        if head == NIL {
            return None;
        }
        self.take_from(rank, which, head, e)
    }

    /// [`Self::take`] from a list whose first entry is `head`.
    #[inline(never)]
    fn take_from(
        &mut self,
        rank: usize,
        which: usize,
        head: u32,
        e: &GoalEntry,
    ) -> Option<GoalEntry> {
        let (mut prev, mut at) = (NIL, head);
        while at != NIL {
            let (entry, next) = self.pool[at as usize];
            if entry.matches(e) {
                if prev == NIL {
                    self.ends[rank][which] = next;
                } else {
                    self.pool[prev as usize].1 = next;
                }
                if self.ends[rank][which + 1] == at {
                    self.ends[rank][which + 1] = prev;
                }
                self.pool[at as usize].1 = self.free;
                self.free = at;
                return Some(entry);
            }
            (prev, at) = (at, next);
        }
        None
    }

    /// Appends `e` to `rank`'s list `which`.
    #[inline]
    fn push_back(&mut self, rank: usize, which: usize, e: GoalEntry) {
        let slot = if self.free == NIL {
            self.pool.push((e, NIL));
            (self.pool.len() - 1) as u32
        } else {
            let slot = self.free;
            self.free = self.pool[slot as usize].1;
            self.pool[slot as usize] = (e, NIL);
            slot
        };
        let tail = self.ends[rank][which + 1];
        if tail == NIL {
            self.ends[rank][which] = slot;
        } else {
            self.pool[tail as usize].1 = slot;
        }
        self.ends[rank][which + 1] = slot;
    }

    /// A receive of `rank` is posted: it takes the oldest unexpected
    /// message it matches, or joins the posted list (`None`).
    #[inline]
    pub(super) fn on_post(&mut self, rank: u32, receive: GoalEntry) -> Option<GoalEntry> {
        let r = rank as usize;
        let found = self.take(r, UNEXPECTED, &receive);
        if found.is_none() {
            self.push_back(r, POSTED, receive);
        }
        found
    }

    /// A message to `rank` is handled: it takes the oldest posted receive
    /// it matches, or joins the unexpected list (`None`).
    #[inline]
    pub(super) fn on_arrival(&mut self, rank: u32, message: GoalEntry) -> Option<GoalEntry> {
        let r = rank as usize;
        let found = self.take(r, POSTED, &message);
        if found.is_none() {
            self.push_back(r, UNEXPECTED, message);
        }
        found
    }

    /// Entries in the list starting at `at`.
    fn len(&self, mut at: u32) -> usize {
        let mut n = 0;
        while at != NIL {
            n += 1;
            at = self.pool[at as usize].1;
        }
        n
    }

    /// Each rank with entries left: `(rank, posted, unexpected)`.
    pub(super) fn left(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        self.ends
            .iter()
            .enumerate()
            .filter(|(_, e)| e[POSTED] != NIL || e[UNEXPECTED] != NIL)
            .map(|(r, e)| (r, self.len(e[POSTED]), self.len(e[UNEXPECTED])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(from: LocationId, tag: u32, send_request: u64) -> Message {
        Message {
            from,
            to: 9,
            tag,
            bytes: 8,
            rendezvous: false,
            send_request,
            pbs: None,
            handled: 0,
        }
    }

    fn posted(request: u64, from: Source, tag: Tag) -> Posted {
        Posted {
            request,
            from,
            tag,
            bytes: u64::MAX,
            pbs: None,
        }
    }

    mod receive_posted_first {
        use super::*;

        #[test]
        fn arrival_takes_the_first_matching_post() {
            let mut m = Matching::new();
            assert!(
                m.on_post(posted(1, Source::Location(2), Some(5)), false)
                    .is_none()
            );
            assert!(m.on_post(posted(2, Source::Any, None), false).is_none());
            assert!(m.on_post(posted(3, Source::Any, None), false).is_none());
            // From 3: the first post wants 2, so the wildcard (request 2) takes it.
            let (p, _) = m.on_arrival(message(3, 5, 10)).expect("matches");
            assert_eq!(p.request, 2);
            let (p, _) = m.on_arrival(message(2, 5, 11)).expect("matches");
            assert_eq!(p.request, 1);
            assert!(m.posted(3).is_some() && m.posted(1).is_none());
        }

        #[test]
        fn other_tag_waits_as_unexpected() {
            let mut m = Matching::new();
            assert!(
                m.on_post(posted(1, Source::Location(2), Some(5)), false)
                    .is_none()
            );
            assert!(m.on_arrival(message(2, 6, 10)).is_none());
            let (p, msg) = m
                .on_post(posted(2, Source::Location(2), Some(6)), false)
                .expect("the unexpected message");
            assert_eq!((p.request, msg.send_request), (2, 10));
        }
    }

    mod message_arrived_first {
        use super::*;

        /// A message whose sender released it at approximated time `a`.
        fn sent_at(from: LocationId, id: u64, a: i64) -> Message {
            let timestamped = heisen_core::Piggyback {
                approximated: a,
                ..heisen_core::Piggyback::default()
            };
            Message {
                pbs: Some(std::rc::Rc::new(crate::engine::probe::Records {
                    id,
                    timestamped,
                    delay_only: heisen_core::Piggyback::default(),
                })),
                ..message(from, 0, id)
            }
        }

        #[test]
        fn by_approximated_a_wildcard_takes_the_earliest_send() {
            // R11's replay: arrived 10, 11, 12; approximated sends 500,
            // 100, 300. Observed order takes 10; approximated takes 11,
            // then 12, then 10. A post from one source keeps arrival order.
            let queue = || {
                let mut m = Matching::new();
                for (from, id, a) in [(4, 10, 500), (5, 11, 100), (6, 12, 300)] {
                    assert!(m.on_arrival(sent_at(from, id, a)).is_none());
                }
                m
            };
            let take = |m: &mut Matching, from, by: bool| {
                m.on_post(posted(0, from, None), by)
                    .map(|(_, msg)| msg.send_request)
            };
            let mut m = queue();
            assert_eq!(take(&mut m, Source::Any, false), Some(10));
            let mut m = queue();
            let order: Vec<_> = (0..3).map(|_| take(&mut m, Source::Any, true)).collect();
            assert_eq!(order, [Some(11), Some(12), Some(10)]);
            let mut m = queue();
            assert_eq!(take(&mut m, Source::Location(6), true), Some(12));
        }

        #[test]
        fn post_takes_the_first_unexpected_in_arrival_order() {
            // Non-overtaking: three messages wait; a wildcard post takes
            // the oldest, a post from 4 the oldest from 4.
            let mut m = Matching::new();
            for (from, id) in [(4, 10), (5, 11), (4, 12)] {
                assert!(m.on_arrival(message(from, 0, id)).is_none());
            }
            let take = |m: &mut Matching, from| {
                m.on_post(posted(0, from, None), false)
                    .map(|(_, msg)| msg.send_request)
            };
            assert_eq!(take(&mut m, Source::Location(4)), Some(10));
            assert_eq!(take(&mut m, Source::Any), Some(11));
            assert_eq!(take(&mut m, Source::Location(5)), None);
            assert_eq!(take(&mut m, Source::Location(4)), Some(12));
        }
    }

    #[test]
    fn in_flight_slots_are_reused() {
        let mut f = InFlight::default();
        let a = f.insert(message(1, 0, 1));
        let b = f.insert(message(1, 0, 2));
        assert_eq!(f.receiver(a), Some(9));
        assert_eq!(f.take(a).map(|m| m.send_request), Some(1));
        assert!(f.take(a).is_none() && f.receiver(a).is_none());
        assert_eq!(f.insert(message(1, 0, 3)), a);
        assert_eq!(f.take(b).map(|m| m.send_request), Some(2));
    }

    #[test]
    fn goal_lists_match_wildcards_on_either_side_oldest_first() {
        let e = |peer, tag, id| GoalEntry { peer, tag, id };
        let mut q = GoalQueues::new(2);
        assert_eq!(q.on_post(1, e(ANY, 7, 1)), None);
        assert_eq!(q.on_post(1, e(0, ANY, 2)), None);
        // A message with tag ANY takes the oldest receive from its source.
        assert_eq!(q.on_arrival(1, e(0, ANY, 10)), Some(e(ANY, 7, 1)));
        assert_eq!(q.on_arrival(1, e(0, 3, 11)), Some(e(0, ANY, 2)));
        assert_eq!(q.on_arrival(1, e(0, 3, 12)), None);
        assert_eq!(q.left().collect::<Vec<_>>(), vec![(1, 0, 1)]);
        assert_eq!(q.on_post(1, e(1, 3, 3)), None, "another source");
        assert_eq!(q.on_post(1, e(0, 3, 4)), Some(e(0, 3, 12)));
    }

    #[test]
    fn goal_lists_are_oldest_first_lists_taken_anywhere() {
        // The pooled lists against two `VecDeque`s per rank, on a seeded
        // stream of posts and arrivals that take from any position.
        let mut q = GoalQueues::new(3);
        let mut model = vec![(VecDeque::new(), VecDeque::new()); 3];
        let mut x: u64 = 7;
        for id in 0..5_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (rank, peer, tag) = ((x >> 33) % 3, (x >> 40) % 4, (x >> 50) % 3);
            let any = |v: u64| if v == 3 { ANY } else { v as u32 };
            let entry = GoalEntry {
                peer: any(peer),
                tag: tag as u32,
                id,
            };
            let (posted, unexpected) = &mut model[rank as usize];
            let post = (x >> 20).is_multiple_of(2);
            let (from, to) = if post {
                (unexpected, posted)
            } else {
                (posted, unexpected)
            };
            let expected = from.iter().position(|m: &GoalEntry| m.matches(&entry));
            let expected = expected.and_then(|i| from.remove(i));
            if expected.is_none() {
                to.push_back(entry);
            }
            let got = if post {
                q.on_post(rank as u32, entry)
            } else {
                q.on_arrival(rank as u32, entry)
            };
            assert_eq!(got, expected, "step {id}");
        }
        let left: Vec<_> = model
            .iter()
            .enumerate()
            .filter(|(_, (p, u))| !p.is_empty() || !u.is_empty())
            .map(|(r, (p, u))| (r, p.len(), u.len()))
            .collect();
        assert_eq!(q.left().collect::<Vec<_>>(), left);
    }
}
