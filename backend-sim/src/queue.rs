//! The engine's event queue: the order of a min-heap keyed by
//! `(time, seq)` — ties in push order, re-inserted events keeping their
//! old `seq` — made faster for simulations where many events share a time
//! (LogGOPSim's collectives: a 262,144-rank binomial broadcast has 325
//! distinct times over 786,429 events):
//!
//! - events at a time that had an event before go to that time's
//!   *bucket*, appended in O(1); a bucket is sorted by `seq` once, when
//!   its time comes (the first pop that needs its smallest `seq`), and is
//!   already sorted unless a re-insert (an old `seq`) came after a fresh
//!   push. Its time's events are then taken from the front in O(1);
//! - everything else (the first event at a time, and events whose time
//!   collides with another time's bucket in the table) sits in a 4-ary
//!   heap (half the depth of a binary heap, siblings side by side).
//!
//! A time has at most one bucket, found in a direct-mapped table of
//! `TABLE` entries indexed by a hash of the time; a time whose entry
//! holds another time's bucket keeps its events in the heap. Live buckets
//! are ordered by time in a small heap. A pop takes the smaller of the
//! heap's top and the earliest bucket's front, so any split of the events
//! between the two gives the order of one heap.
//!
//! The common cases — a push to a bucket with room, a pop from the
//! earliest bucket that keeps events after this one and is earlier than
//! the heap's top — are a few instructions inlined into the engine; the
//! rest is out of line.

use core::cmp::Reverse;

/// Entries of the direct-mapped table of bucket times
/// ([`EventQueue::table`]): a power of two.
const TABLE: usize = 1024;

/// The table entry of `time`: Fibonacci hashing, whose high bits mix every
/// bit of the time (simulated times are often multiples of one period).
#[inline]
fn slot_of(time: u64) -> usize {
    (time.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - TABLE.trailing_zeros())) as usize
}

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

/// Events of one time: those from `head` on are queued. Empty while its
/// slot is free.
///
/// A vector and a cursor rather than a `VecDeque`: taking an event is a
/// read and an increment, without the ring's wrap-around.
#[derive(Clone, Debug)]
struct Bucket<K> {
    events: Vec<(u64, K)>,
    head: usize,
    /// The queued events are in `seq` order.
    sorted: bool,
}

impl<K: Copy> Bucket<K> {
    /// Queues an event at the back.
    #[inline]
    fn push(&mut self, seq: u64, payload: K) {
        if self.events.len() == self.events.capacity() {
            self.make_room();
        }
        self.append(seq, payload);
    }

    /// Appends an event to a bucket with room.
    #[inline]
    fn append(&mut self, seq: u64, payload: K) {
        if let Some(&(last, _)) = self.events.last()
            && seq < last
        {
            self.sorted = false;
        }
        self.events.push((seq, payload));
    }

    /// Drops the taken events before the vector grows, when they are at
    /// least half of it: a bucket pushed while it is taken from (events
    /// at the current time) keeps its memory a small multiple of its
    /// queued events instead of growing with every event it ever held.
    #[cold]
    fn make_room(&mut self) {
        if self.head > 0 && self.head >= self.events.len() / 2 {
            self.events.drain(..self.head);
            self.head = 0;
        }
    }

    /// Sorts the queued events by `seq`, if they are not in order.
    #[cold]
    fn sort(&mut self) {
        self.events[self.head..].sort_by_key(|e| e.0);
        self.sorted = true;
    }

    /// The `seq` of the first queued event, once sorted.
    fn front_seq(&self) -> u64 {
        self.events.get(self.head).map_or(u64::MAX, |e| e.0)
    }

    /// Takes the first queued event, once sorted.
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
        self.sorted = true;
    }
}

/// A live bucket in [`EventQueue::order`]: its time (a time has at most
/// one bucket) and storage slot.
#[derive(Clone, Copy, Debug)]
struct Live {
    time: u64,
    slot: u32,
}

impl Keyed for Live {
    fn key(&self) -> u128 {
        key(self.time, 0)
    }
}

/// An entry of [`EventQueue::table`]: a time and its live bucket's slot,
/// or [`SINGLE`] when the time's last event went to the heap.
type Entry = (u64, u32);

/// An entry that names nothing. No bucket is started at its time (events
/// at `u64::MAX` stay in the heap), so a look-up by time never finds it.
const EMPTY: Entry = (u64::MAX, SINGLE);

/// The slot of an entry whose time has no bucket, its last event having
/// gone to the heap: the next event at that time starts a bucket.
const SINGLE: u32 = u32::MAX;

/// A min-queue of `(time, seq, payload)` with the interface of
/// `BinaryHeap<Reverse<(u64, u64, K)>>` (`push`, `pop`), ordered by
/// `(time, seq)`. Every `seq` of the queued events must differ.
#[derive(Clone, Debug)]
pub struct EventQueue<K> {
    heap: QuadHeap<(u64, u64, K)>,
    /// Bucket storage; slots of empty buckets are in `free`.
    buckets: Vec<Bucket<K>>,
    free: Vec<u32>,
    /// Live buckets by time; the first is the earliest.
    order: QuadHeap<Live>,
    /// Direct-mapped by [`slot_of`] the time: the time's live bucket, or
    /// [`SINGLE`] when its last event went to the heap, or [`EMPTY`]. A
    /// live bucket keeps its entry until it empties, so a time's events
    /// go to its bucket or, when another time's bucket holds the entry,
    /// to the heap: a collision costs speed, never order. Allocated at
    /// the first push outside a bucket.
    table: Vec<Entry>,
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
            buckets: Vec::new(),
            free: Vec::new(),
            order: QuadHeap::new(),
            table: Vec::new(),
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
        // The common case, kept small and free of calls: the time has a
        // bucket with room.
        if let Some(&(t, slot)) = self.table.get(slot_of(time))
            && t == time
            && let Some(bucket) = self.buckets.get_mut(slot as usize)
            && bucket.events.len() < bucket.events.capacity()
        {
            bucket.append(seq, payload);
            self.len += 1;
            return;
        }
        self.push_elsewhere(time, seq, payload);
    }

    /// [`Self::push`] at a time without a bucket, or whose bucket is full.
    #[inline(never)]
    fn push_elsewhere(&mut self, time: u64, seq: u64, payload: K) {
        self.len += 1;
        if self.table.is_empty() {
            self.table = vec![EMPTY; TABLE];
        }
        let i = slot_of(time);
        let (t, slot) = self.table[i];
        if t == time && slot != SINGLE {
            self.buckets[slot as usize].push(seq, payload);
        } else if t == time && time != EMPTY.0 {
            // The second event at this time.
            self.start_bucket(time, seq, payload);
        } else if slot != SINGLE {
            // Another time's bucket holds the entry.
            self.heap.push((time, seq, payload));
        } else {
            self.table[i] = (time, SINGLE);
            self.heap.push((time, seq, payload));
        }
    }

    /// Starts the bucket of `time` with an event, and takes `time`'s
    /// table entry.
    #[cold]
    #[inline(never)]
    fn start_bucket(&mut self, time: u64, seq: u64, payload: K) {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.buckets.push(Bucket {
                    events: Vec::new(),
                    head: 0,
                    sorted: true,
                });
                // Buckets are fewer than queued events, which fit in memory.
                (self.buckets.len() - 1) as u32
            }
        };
        self.buckets[slot as usize].push(seq, payload);
        self.order.push(Live { time, slot });
        self.table[slot_of(time)] = (time, slot);
    }

    /// Takes the event with the smallest `(time, seq)`.
    #[inline]
    pub fn pop(&mut self) -> Option<Reverse<(u64, u64, K)>> {
        // The common case, kept small to be inlined: the earliest bucket,
        // sorted, keeps events after its front, which is earlier than the
        // heap's top. (The heap often holds an event at the bucket's
        // time: the first event of that time, pushed before the bucket
        // started, with a `seq` larger than re-inserts in the bucket.)
        let Some(&Live { time, slot }) = self.order.first() else {
            return self.pop_heap();
        };
        if let Some(bucket) = self.buckets.get_mut(slot as usize)
            && bucket.sorted
            && bucket.head + 1 < bucket.events.len()
            && let Some(&(seq, payload)) = bucket.events.get(bucket.head)
            && self
                .heap
                .first()
                .is_none_or(|top| key(time, seq) < top.key())
        {
            bucket.head += 1;
            self.len -= 1;
            return Some(Reverse((time, seq, payload)));
        }
        self.pop_elsewhere()
    }

    /// [`Self::pop`] from the heap, or of a bucket's last event, or from
    /// a bucket still to sort, or at a time shared by the heap's top and
    /// the earliest bucket.
    #[inline(never)]
    fn pop_elsewhere(&mut self) -> Option<Reverse<(u64, u64, K)>> {
        let Some(&Live { time, slot }) = self.order.first() else {
            return self.pop_heap();
        };
        if let Some(top) = self.heap.first()
            && top.0 < time
        {
            return self.pop_heap();
        }
        // The bucket's time has come: sort it once.
        let bucket = &mut self.buckets[slot as usize];
        if !bucket.sorted {
            bucket.sort();
        }
        if let Some(top) = self.heap.first()
            && top.key() < key(time, bucket.front_seq())
        {
            return self.pop_heap();
        }
        let (seq, payload) = bucket.pop()?;
        self.len -= 1;
        if bucket.is_empty() {
            bucket.clear();
            // Retire the bucket, the earliest: out of the order, its
            // table entry free.
            self.order.pop();
            self.free.push(slot);
            self.table[slot_of(time)] = EMPTY;
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

    use proptest::prelude::*;
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

    /// One step of a property test: push at a time with a new `seq`, pop,
    /// or pop and push the event back at a later time with its old `seq`
    /// (the engine's re-insert).
    #[derive(Clone, Debug)]
    enum Step {
        Push(u64),
        Pop,
        Reinsert(u64),
    }

    /// Drives an [`EventQueue`] and a `BinaryHeap` with `steps` and
    /// checks that every pop is the same. `now` follows the last pop when
    /// `monotone` (the engine's use: pushes at or after it).
    fn same_as_a_binary_heap(steps: &[Step], monotone: bool) {
        let mut q = EventQueue::new();
        let mut h = BinaryHeap::new();
        let (mut seq, mut now) = (0u64, 0u64);
        let pop = |q: &mut EventQueue<u64>, h: &mut BinaryHeap<_>| {
            let e = h.pop();
            assert_eq!(q.pop(), e);
            assert_eq!(q.len(), h.len());
            e
        };
        for step in steps {
            match *step {
                Step::Push(t) => {
                    let t = if monotone { now + t } else { t };
                    q.push(Reverse((t, seq, seq)));
                    h.push(Reverse((t, seq, seq)));
                    seq += 1;
                }
                Step::Pop => {
                    if let Some(Reverse((t, _, _))) = pop(&mut q, &mut h) {
                        now = t;
                    }
                }
                Step::Reinsert(later) => {
                    if let Some(Reverse((t, old, payload))) = pop(&mut q, &mut h) {
                        now = t;
                        let e = Reverse((t + 1 + later, old, payload));
                        q.push(e);
                        h.push(e);
                    }
                }
            }
        }
        while pop(&mut q, &mut h).is_some() {}
        assert!(q.is_empty());
    }

    /// Steps with times drawn from `times`.
    fn steps(times: u64) -> impl Strategy<Value = Vec<Step>> {
        prop::collection::vec(
            prop_oneof![
                4 => (0..times).prop_map(Step::Push),
                3 => Just(Step::Pop),
                1 => (0..times).prop_map(Step::Reinsert),
            ],
            0..600,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Few distinct times, pushes at or after the last pop: events
        /// share buckets, re-inserts unsort them.
        #[test]
        fn lockstep_like_pops_as_a_binary_heap(steps in steps(4)) {
            same_as_a_binary_heap(&steps, true);
        }

        /// Many distinct times (more than the table has entries, so times
        /// collide), pushes anywhere: the queue is a heap for any use.
        #[test]
        fn any_pushes_pop_as_a_binary_heap(steps in steps(5000)) {
            same_as_a_binary_heap(&steps, false);
        }

        /// Times that all share one table entry but one: every time but
        /// the entry's owner stays in the heap.
        #[test]
        fn colliding_times_pop_as_a_binary_heap(
            picks in prop::collection::vec((0..3usize, 0..3u8), 0..400),
        ) {
            let times = colliding_times(3);
            let steps: Vec<Step> = picks
                .iter()
                .map(|&(i, kind)| match kind {
                    0 | 1 => Step::Push(times[i]),
                    _ => Step::Pop,
                })
                .collect();
            same_as_a_binary_heap(&steps, false);
        }
    }

    /// `n` times with one table entry.
    fn colliding_times(n: usize) -> Vec<u64> {
        let entry = slot_of(1);
        (1..).filter(|&t| slot_of(t) == entry).take(n).collect()
    }

    /// Events at the largest time, whose table entry means "empty", stay
    /// in the heap and still pop in order, after all others.
    #[test]
    fn the_largest_time_pops_last_in_push_order() {
        let mut steps = Vec::new();
        for i in 0..40 {
            steps.push(Step::Push(if i % 3 == 0 { 7 } else { u64::MAX }));
            if i % 5 == 4 {
                steps.push(Step::Pop);
            }
        }
        same_as_a_binary_heap(&steps, false);
        let mut q = EventQueue::new();
        for seq in 0..5 {
            q.push(Reverse((u64::MAX, seq, seq)));
        }
        let seqs: Vec<u64> = core::iter::from_fn(|| q.pop().map(|Reverse(e)| e.1)).collect();
        assert_eq!(seqs, [0, 1, 2, 3, 4]);
        assert!(q.buckets.is_empty(), "no bucket at the largest time");
    }

    #[test]
    fn colliding_times_share_an_entry() {
        let times = colliding_times(3);
        assert_eq!(times.len(), 3);
        assert!(times.iter().all(|&t| slot_of(t) == slot_of(times[0])));
    }
}
