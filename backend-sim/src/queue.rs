//! The engine's event queue: the order of a min-heap keyed by
//! `(time, seq)` — ties in push order, re-inserted events keeping their
//! old `seq` — made faster for simulations where many events share a time
//! (lockstep schedules such as LogGOPSim's collectives):
//!
//! - fresh pushes (each `seq` larger than any before) at a time that had
//!   one before go to a FIFO for that time, already sorted, so those events
//!   cost O(1) to queue and to take;
//! - everything else sits in a 4-ary heap (half the depth of a binary
//!   heap, siblings side by side in memory).
//!
//! A pop takes the smaller of the heap's top and the earliest FIFO front,
//! so any split between the two gives the order of one heap.

use core::cmp::Reverse;
use std::collections::VecDeque;

/// How many recent FIFO times a push looks up before falling back to the
/// heap.
const RECENT: usize = 4;

/// A 4-ary min-heap of items ordered by a key.
#[derive(Clone, Debug)]
struct QuadHeap<T> {
    items: Vec<T>,
}

impl<T: Copy> QuadHeap<T> {
    fn new() -> Self {
        QuadHeap { items: Vec::new() }
    }

    fn first(&self) -> Option<&T> {
        self.items.first()
    }

    fn push<O: Ord>(&mut self, item: T, key: impl Fn(&T) -> O) {
        self.items.push(item);
        let mut i = self.items.len() - 1;
        let k = key(&item);
        while i > 0 {
            let parent = (i - 1) / 4;
            if key(&self.items[parent]) <= k {
                break;
            }
            self.items[i] = self.items[parent];
            i = parent;
        }
        self.items[i] = item;
    }

    fn pop<O: Ord>(&mut self, key: impl Fn(&T) -> O) -> Option<T> {
        let last = self.items.pop()?;
        if self.items.is_empty() {
            return Some(last);
        }
        let top = core::mem::replace(&mut self.items[0], last);
        self.sift_down(0, key);
        Some(top)
    }

    /// Restores the order after the root's key grew.
    fn sift_down<O: Ord>(&mut self, mut i: usize, key: impl Fn(&T) -> O) {
        let n = self.items.len();
        let item = self.items[i];
        let k = key(&item);
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let mut best = first;
            let mut best_key = key(&self.items[first]);
            for c in first + 1..(first + 4).min(n) {
                let ck = key(&self.items[c]);
                if ck < best_key {
                    best = c;
                    best_key = ck;
                }
            }
            if k <= best_key {
                break;
            }
            self.items[i] = self.items[best];
            i = best;
        }
        self.items[i] = item;
    }
}

/// Events of one time, in `seq` order.
#[derive(Clone, Debug)]
struct Fifo<K> {
    time: u64,
    events: VecDeque<(u64, K)>,
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
    /// Live FIFO slots, ordered by `(time, front seq)`.
    order: QuadHeap<usize>,
    /// Recently used live FIFOs: `(time, slot)`.
    recent: [Option<(u64, usize)>; RECENT],
    next_recent: usize,
    /// Times of the latest fresh pushes that went to the heap, one per
    /// time: a second fresh push at one of them starts a FIFO, even when
    /// pushes at a few times alternate (a send's arrival and its sender's
    /// next step, in lockstep schedules).
    singles: [Option<u64>; RECENT],
    next_single: usize,
    /// Largest `seq` pushed so far.
    max_seq: Option<u64>,
    len: usize,
}

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
            recent: [None; RECENT],
            next_recent: 0,
            singles: [None; RECENT],
            next_single: 0,
            max_seq: None,
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

    fn fifo_key(fifos: &[Fifo<K>]) -> impl Fn(&usize) -> (u64, u64) + '_ {
        |&slot| {
            let f = &fifos[slot];
            (f.time, f.events.front().map_or(u64::MAX, |e| e.0))
        }
    }

    /// Queues `(time, seq, payload)`.
    pub fn push(&mut self, Reverse((time, seq, payload)): Reverse<(u64, u64, K)>) {
        self.len += 1;
        let fresh = self.max_seq.is_none_or(|m| seq > m);
        if !fresh {
            self.heap.push((time, seq, payload), |e| (e.0, e.1));
            return;
        }
        self.max_seq = Some(seq);
        // A fresh seq is larger than any queued: it goes to the back of a
        // FIFO of its time, which stays sorted.
        if let Some(slot) = self
            .recent
            .iter()
            .flatten()
            .find(|r| r.0 == time)
            .map(|r| r.1)
        {
            self.fifos[slot].events.push_back((seq, payload));
            return;
        }
        if let Some(single) = self.singles.iter_mut().find(|s| **s == Some(time)) {
            *single = None;
        } else {
            self.singles[self.next_single] = Some(time);
            self.next_single = (self.next_single + 1) % RECENT;
            self.heap.push((time, seq, payload), |e| (e.0, e.1));
            return;
        }
        // The second fresh push in a row at this time: start a FIFO.
        let slot = match self.free.pop() {
            Some(slot) => {
                self.fifos[slot].time = time;
                slot
            }
            None => {
                self.fifos.push(Fifo {
                    time,
                    events: VecDeque::new(),
                });
                self.fifos.len() - 1
            }
        };
        self.fifos[slot].events.push_back((seq, payload));
        let key = Self::fifo_key(&self.fifos);
        self.order.push(slot, key);
        self.recent[self.next_recent] = Some((time, slot));
        self.next_recent = (self.next_recent + 1) % RECENT;
    }

    /// Takes the event with the smallest `(time, seq)`.
    pub fn pop(&mut self) -> Option<Reverse<(u64, u64, K)>> {
        let heap_key = self.heap.first().map(|e| (e.0, e.1));
        let fifo = self.order.first().copied();
        let fifo_key = fifo.map(|slot| Self::fifo_key(&self.fifos)(&slot));
        let take_fifo = match (heap_key, fifo_key) {
            (None, None) => return None,
            (Some(h), Some(f)) => f < h,
            (None, Some(_)) => true,
            (Some(_), None) => false,
        };
        self.len -= 1;
        if !take_fifo {
            return self.heap.pop(|e| (e.0, e.1)).map(Reverse);
        }
        let slot = fifo?;
        let f = &mut self.fifos[slot];
        let time = f.time;
        let (seq, payload) = f.events.pop_front()?;
        if f.events.is_empty() {
            // Retire the FIFO: out of the order, out of the recent list.
            let key = Self::fifo_key(&self.fifos);
            self.order.pop(key);
            self.free.push(slot);
            for r in &mut self.recent {
                if r.is_some_and(|r| r.1 == slot) {
                    *r = None;
                }
            }
        } else {
            let key = Self::fifo_key(&self.fifos);
            self.order.sift_down(0, key);
        }
        Some(Reverse((time, seq, payload)))
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
}
