//! The engine's event queue: the order of a min-heap keyed by
//! `(time, seq)` — ties in push order, re-inserted events keeping their
//! old `seq` — made faster for simulations where many events share a time
//! (lockstep schedules such as LogGOPSim's collectives):
//!
//! - fresh pushes (each `seq` larger than any before) at a time that had
//!   one of the last few before go to a FIFO for that time, already
//!   sorted, so those events cost O(1) to queue and to take;
//! - everything else sits in a 4-ary heap (half the depth of a binary
//!   heap, siblings side by side in memory).
//!
//! A pop takes the smaller of the heap's top and the earliest FIFO front,
//! so any split between the two gives the order of one heap.
//!
//! Live FIFOs are ordered by `(time, first seq)`, a key that never changes
//! while they live: fresh pushes only go to the newest FIFO of their time,
//! so of two FIFOs of one time, every `seq` of the older is smaller than
//! every `seq` of the newer. The earliest FIFO is thus the one whose front
//! is the smallest, and a pop from it re-orders nothing until it empties:
//! it compares the FIFO's time with the heap's top and takes the next
//! event. That common case, like a push to a recent FIFO, is a few
//! instructions inlined into the engine; the rest is out of line.

use core::cmp::Reverse;

/// How many recent FIFO times a push looks up before falling back to the
/// heap.
const RECENT: usize = 4;

/// An item of a [`QuadHeap`]: its order key.
trait Keyed: Copy {
    /// `(time, seq)` as one number, `time` in the high half: a 128-bit
    /// compare is two instructions and no branch, where a tuple's is two
    /// branches.
    fn key(&self) -> u128;
}

/// `(time, seq)` as one number that orders like the pair.
fn key(time: u64, seq: u64) -> u128 {
    (u128::from(time) << 64) | u128::from(seq)
}

/// An event in the heap: `(time, seq, payload)`.
impl<K: Copy> Keyed for (u64, u64, K) {
    fn key(&self) -> u128 {
        key(self.0, self.1)
    }
}

/// A live FIFO in [`EventQueue::order`], with the key it keeps while it
/// lives.
#[derive(Clone, Copy, Debug)]
struct Live {
    time: u64,
    /// The `seq` of its first event.
    first_seq: u64,
    slot: usize,
}

impl Keyed for Live {
    fn key(&self) -> u128 {
        key(self.time, self.first_seq)
    }
}

/// A 4-ary min-heap of items ordered by their key.
#[derive(Clone, Debug)]
struct QuadHeap<T> {
    items: Vec<T>,
}

impl<T: Keyed> QuadHeap<T> {
    /// An empty heap.
    fn new() -> Self {
        QuadHeap { items: Vec::new() }
    }

    /// The item with the smallest key.
    fn first(&self) -> Option<&T> {
        self.items.first()
    }

    /// Adds `item`, sifting it up.
    #[inline]
    fn push(&mut self, item: T) {
        let mut i = self.items.len();
        self.items.push(item);
        let k = item.key();
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.items[parent].key() <= k {
                break;
            }
            self.items[i] = self.items[parent];
            i = parent;
        }
        self.items[i] = item;
    }

    /// Takes the item with the smallest key.
    fn pop(&mut self) -> Option<T> {
        let last = self.items.pop()?;
        let Some(root) = self.items.first_mut() else {
            return Some(last);
        };
        let top = core::mem::replace(root, last);
        self.sift_down_root();
        Some(top)
    }

    /// Restores the order after the root was replaced.
    fn sift_down_root(&mut self) {
        let items = &mut self.items[..];
        let n = items.len();
        let mut i = 0;
        let item = items[0];
        let k = item.key();
        loop {
            let first = 4 * i + 1;
            let smaller = |a: usize, b: usize| {
                if items[b].key() < items[a].key() {
                    b
                } else {
                    a
                }
            };
            let best = if first + 4 <= n {
                // All four children: a tournament, whose first two
                // compares do not depend on each other.
                smaller(smaller(first, first + 1), smaller(first + 2, first + 3))
            } else if first < n {
                (first + 1..n).fold(first, smaller)
            } else {
                break;
            };
            if k <= items[best].key() {
                break;
            }
            items[i] = items[best];
            i = best;
        }
        items[i] = item;
    }
}

/// Events of one time, in `seq` order: those from `head` on are queued.
/// Empty while its slot is free.
///
/// A vector and a cursor rather than a `VecDeque`: taking an event is a
/// read and an increment, without the ring's wrap-around.
#[derive(Clone, Debug)]
struct Fifo<K> {
    events: Vec<(u64, K)>,
    head: usize,
}

impl<K: Copy> Fifo<K> {
    /// Queues a fresh event at the back.
    fn push(&mut self, seq: u64, payload: K) {
        if self.events.len() == self.events.capacity() {
            self.make_room();
        }
        self.events.push((seq, payload));
    }

    /// Drops the taken events before the vector grows, when they are at
    /// least half of it: a FIFO pushed while it is taken from (events at
    /// the current time) keeps its memory a small multiple of its queued
    /// events instead of growing with every event it ever held.
    #[cold]
    fn make_room(&mut self) {
        if self.head > 0 && self.head >= self.events.len() / 2 {
            self.events.drain(..self.head);
            self.head = 0;
        }
    }

    /// The `seq` of the first queued event.
    fn front_seq(&self) -> u64 {
        self.events.get(self.head).map_or(u64::MAX, |e| e.0)
    }

    /// Takes the first queued event.
    fn pop(&mut self) -> Option<(u64, K)> {
        let event = *self.events.get(self.head)?;
        self.head += 1;
        Some(event)
    }

    /// Whether no event is queued.
    fn is_empty(&self) -> bool {
        self.head == self.events.len()
    }

    /// Empties it, keeping its capacity for the next time.
    fn clear(&mut self) {
        self.events.clear();
        self.head = 0;
    }
}

/// A min-queue of `(time, seq, payload)` with the interface of
/// `BinaryHeap<Reverse<(u64, u64, K)>>` (`push`, `pop`), ordered by
/// `(time, seq)`.
#[derive(Clone, Debug)]
pub struct EventQueue<K> {
    heap: QuadHeap<(u64, u64, K)>,
    /// FIFO storage; slots of empty FIFOs are in `free`.
    fifos: Vec<Fifo<K>>,
    free: Vec<usize>,
    /// Live FIFOs by `(time, first seq)`; the first holds the earliest
    /// front.
    order: QuadHeap<Live>,
    /// The newest live FIFO of each of a few recent times, newest first:
    /// `(time, slot)`, then [`NO_FIFO`]s. Fresh pushes at these times go
    /// to the back of that FIFO.
    recent: [(u64, usize); RECENT],
    /// Times of the latest fresh pushes that went to the heap, one per
    /// time: a second fresh push at one of them starts a FIFO, even when
    /// pushes at a few times alternate (a send's arrival and its sender's
    /// next step, in lockstep schedules). Only a hint: a wrong entry costs
    /// speed, never order.
    singles: [u64; RECENT],
    next_single: usize,
    /// Smallest `seq` that is fresh: one more than the largest pushed.
    fresh_from: u64,
    len: usize,
}

/// An entry of [`EventQueue::recent`] that names no FIFO. No FIFO is
/// started at its time (events at `u64::MAX` stay in the heap), so a
/// look-up by time that finds it finds nothing.
const NO_FIFO: (u64, usize) = (u64::MAX, usize::MAX);

impl<K: Copy> Default for EventQueue<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Copy> EventQueue<K> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            heap: QuadHeap::new(),
            fifos: Vec::new(),
            free: Vec::new(),
            order: QuadHeap::new(),
            recent: [NO_FIFO; RECENT],
            singles: [u64::MAX; RECENT],
            next_single: 0,
            fresh_from: 0,
            len: 0,
        }
    }

    /// Events queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues `(time, seq, payload)`.
    #[inline]
    pub fn push(&mut self, Reverse((time, seq, payload)): Reverse<(u64, u64, K)>) {
        // The common case, kept small and free of calls: a fresh seq,
        // larger than any queued, at the time of a recent FIFO goes to its
        // back, which stays sorted.
        if self.is_fresh(seq)
            && let Some(slot) = self.recent_fifo(time)
            && let Some(fifo) = self.fifos.get_mut(slot)
            && fifo.events.len() < fifo.events.capacity()
        {
            fifo.events.push((seq, payload));
            self.fresh_from = seq + 1;
            self.len += 1;
            return;
        }
        self.push_elsewhere(time, seq, payload);
    }

    /// Whether `seq` is larger than any pushed. The largest `seq` never
    /// is, so that `fresh_from` cannot wrap; it goes to the heap.
    fn is_fresh(&self, seq: u64) -> bool {
        seq >= self.fresh_from && seq != u64::MAX
    }

    /// The slot of the newest live FIFO at `time`, if it is recent.
    fn recent_fifo(&self, time: u64) -> Option<usize> {
        let &(_, slot) = self.recent.iter().find(|r| r.0 == time)?;
        (slot != NO_FIFO.1).then_some(slot)
    }

    /// [`Self::push`] of an event that is not fresh, or has no recent
    /// FIFO, or whose FIFO is full.
    #[inline(never)]
    fn push_elsewhere(&mut self, time: u64, seq: u64, payload: K) {
        self.len += 1;
        if !self.is_fresh(seq) {
            // A re-insert: its old seq may be smaller than a FIFO's.
            self.heap.push((time, seq, payload));
            return;
        }
        self.fresh_from = seq + 1;
        // Without live FIFOs (times all distinct), skip the look-up.
        if !self.order.items.is_empty()
            && let Some(slot) = self.recent_fifo(time)
        {
            self.fifos[slot].push(seq, payload);
            return;
        }
        match self.singles.iter_mut().find(|s| **s == time) {
            // The second fresh push in a row at this time.
            Some(single) if time != NO_FIFO.0 => {
                *single = u64::MAX;
                self.start_fifo(time, seq, payload);
            }
            _ => {
                self.singles[self.next_single] = time;
                self.next_single = (self.next_single + 1) % RECENT;
                self.heap.push((time, seq, payload));
            }
        }
    }

    /// Starts a FIFO at `time` with a fresh event. Any older FIFO of this
    /// time has left `recent`, so gets no more pushes.
    #[cold]
    #[inline(never)]
    fn start_fifo(&mut self, time: u64, seq: u64, payload: K) {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.fifos.push(Fifo {
                    events: Vec::new(),
                    head: 0,
                });
                self.fifos.len() - 1
            }
        };
        self.fifos[slot].push(seq, payload);
        self.order.push(Live {
            time,
            first_seq: seq,
            slot,
        });
        self.recent.rotate_right(1);
        self.recent[0] = (time, slot);
    }

    /// Takes the event with the smallest `(time, seq)`.
    #[inline]
    pub fn pop(&mut self) -> Option<Reverse<(u64, u64, K)>> {
        // The common case, kept small to be inlined: the earliest FIFO is
        // earlier than the heap's top and keeps events after this one.
        let Some(&Live { time, slot, .. }) = self.order.first() else {
            return self.pop_heap();
        };
        if self.heap.first().is_none_or(|top| time < top.0)
            && let Some(fifo) = self.fifos.get_mut(slot)
            && fifo.head + 1 < fifo.events.len()
            && let Some((seq, payload)) = fifo.pop()
        {
            self.len -= 1;
            return Some(Reverse((time, seq, payload)));
        }
        self.pop_elsewhere()
    }

    /// [`Self::pop`] from the heap, or of a FIFO's last event, or at a
    /// time shared by the heap's top and the earliest FIFO.
    #[inline(never)]
    fn pop_elsewhere(&mut self) -> Option<Reverse<(u64, u64, K)>> {
        let Some(&Live { time, slot, .. }) = self.order.first() else {
            return self.pop_heap();
        };
        let fifo = &mut self.fifos[slot];
        if let Some(top) = self.heap.first()
            && top.key() < key(time, fifo.front_seq())
        {
            return self.pop_heap();
        }
        let (seq, payload) = fifo.pop()?;
        self.len -= 1;
        if fifo.is_empty() {
            fifo.clear();
            // Retire the FIFO, the earliest: out of the order, out of the
            // recent list.
            self.order.pop();
            self.free.push(slot);
            if let Some(i) = self.recent.iter().position(|r| r.1 == slot) {
                self.recent[i..].rotate_left(1);
                self.recent[RECENT - 1] = NO_FIFO;
            }
        }
        Some(Reverse((time, seq, payload)))
    }

    /// [`Self::pop`] from the heap.
    #[inline(never)]
    fn pop_heap(&mut self) -> Option<Reverse<(u64, u64, K)>> {
        let event = self.heap.pop()?;
        self.len -= 1;
        Some(Reverse(event))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BinaryHeap;

    use rand_chacha::ChaCha8Rng;
    use rand_core::{Rng, SeedableRng};

    use super::*;

    /// Drives the queue like the engine does — fresh pushes at or after
    /// the current time, re-inserts of a popped event later with its old
    /// `seq` — and compares every pop with a binary heap.
    #[test]
    fn pops_in_the_order_of_a_binary_heap() {
        for seed in 0..50 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut q = EventQueue::new();
            let mut h = BinaryHeap::new();
            let mut seq = 0u64;
            let mut now = 0u64;
            let push = |q: &mut EventQueue<u32>, h: &mut BinaryHeap<_>, e| {
                q.push(Reverse(e));
                h.push(Reverse(e));
            };
            for i in 0..20 {
                push(&mut q, &mut h, (rng.next_u64() % 3, seq, i));
                seq += 1;
            }
            let mut pops = 0;
            while let Some(Reverse(e)) = h.pop() {
                assert_eq!(q.pop(), Some(Reverse(e)), "seed {seed} pop {pops}");
                assert!(e.0 >= now);
                now = e.0;
                pops += 1;
                if pops > 5_000 {
                    continue;
                }
                for _ in 0..rng.next_u64() % 3 {
                    let t = now + [0, 0, 1, 5, 17][(rng.next_u64() % 5) as usize];
                    push(&mut q, &mut h, (t, seq, e.2));
                    seq += 1;
                }
                if rng.next_u64() % 4 == 0 {
                    // Re-insert with the old seq, strictly later.
                    push(&mut q, &mut h, (now + 1 + rng.next_u64() % 4, e.1, e.2));
                }
            }
            assert!(q.pop().is_none() && q.is_empty());
        }
    }

    /// LogGOPSim's dissemination in lockstep: every rank pops its step and
    /// pushes its message's arrival and its next step, fresh, at two times
    /// that alternate; arrivals are re-inserted later with their old `seq`
    /// now and then (a busy receiver). Every pop is compared with a binary
    /// heap.
    #[test]
    fn lockstep_pops_in_the_order_of_a_binary_heap() {
        const RANKS: u32 = 1000;
        const ROUNDS: u32 = 6;
        let mut q = EventQueue::new();
        let mut h = BinaryHeap::new();
        let mut seq = 0u64;
        let push = |q: &mut EventQueue<(bool, u32)>, h: &mut BinaryHeap<_>, e| {
            q.push(Reverse(e));
            h.push(Reverse(e));
        };
        for rank in 0..RANKS {
            push(&mut q, &mut h, (0, seq, (true, rank)));
            seq += 1;
        }
        let mut steps = vec![0; RANKS as usize];
        let mut pops = 0;
        while let Some(Reverse(e)) = h.pop() {
            assert_eq!(q.pop(), Some(Reverse(e)), "pop {pops}");
            assert_eq!(q.len(), h.len());
            pops += 1;
            let (time, old_seq, (step, rank)) = e;
            if !step {
                // Times are even until one is re-inserted: at most once.
                if rank % 7 == 0 && time % 2 == 0 {
                    push(&mut q, &mut h, (time + 1, old_seq, (false, rank)));
                }
                continue;
            }
            let done = &mut steps[rank as usize];
            if *done == ROUNDS {
                continue;
            }
            *done += 1;
            push(&mut q, &mut h, (time + 4000, seq, (false, rank)));
            push(&mut q, &mut h, (time + 1500, seq + 1, (true, rank)));
            seq += 2;
        }
        assert!(q.pop().is_none() && q.is_empty());
    }
}
