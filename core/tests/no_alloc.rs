//! The kernel never allocates (DESIGN §2): a counting global allocator
//! watches 1,000,000 kernel events on four locations — regions and loops
//! with recursion and stack overflow, releases with the wire encoding,
//! merges with several dependencies, n-to-n collectives, spawns,
//! snapshots, start/stop of the path, bounded statistics (R12), wildcard
//! reorder detection (R11) and sample weighting (R13) — and finds no
//! allocation after set-up.
#![allow(unsafe_code)] // reason: a counting #[global_allocator] needs `unsafe impl GlobalAlloc`; heisen-core itself forbids unsafe

use core::alloc::{GlobalAlloc, Layout};
use core::cell::Cell;
use core::sync::atomic::{AtomicU64, Ordering};
use std::alloc::System;

use heisen_core::sampling::EffectiveInterval;
use heisen_core::stats::{Communicated, Profile};
use heisen_core::wildcard::{Match, ReorderDetector};
use heisen_core::{
    Calibration, Config, Cost, Dependency, Exchange, Form, Location, PathState, Piggyback, Snapshot,
};

/// Allocations (alloc, alloc_zeroed, realloc) made by a thread while its
/// `COUNTING` flag is set.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    // Only the test's own thread is watched: the test harness's threads may
    // allocate (output capture, result channels) while the kernel runs.
    // A const-initialised `Cell<bool>` needs no destructor and no lazy
    // allocation, so reading it from inside the allocator is sound.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

struct CountingAllocator;

fn count() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees (alignment, size, ownership) carry
// over; the counter touches neither memory nor layout.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's layout (see the impl).
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's layout (see the impl).
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: `ptr` was allocated by `System` through this allocator
        // with `layout`, as the caller guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` through this allocator
        // with `layout`, as the caller guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

const EVENTS: u64 = 1_000_000;
const K: usize = 4;
/// Region stack capacity: small, so deep recursion overflows it.
const D: usize = 8;
const LOCATIONS: usize = 4;
/// Deepest nesting the driver opens: beyond `D`, frames are lost (R12).
const MAX_DEPTH: usize = 12;
/// Pending messages per destination.
const MAILBOX: usize = 8;
const PB_LEN: usize = Piggyback::<K>::ENCODED_LEN;

type Stats = Profile<8, 8, 4>;

/// xorshift64*: deterministic, no dependencies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A message in flight: the encoded record and who sent it.
#[derive(Clone, Copy)]
struct Message {
    bytes: [u8; PB_LEN],
    source: u32,
}

/// Fixed-capacity FIFO of messages for one destination.
#[derive(Clone, Copy)]
struct Mailbox {
    slots: [Option<Message>; MAILBOX],
    head: usize,
    len: usize,
}

impl Mailbox {
    const EMPTY: Mailbox = Mailbox {
        slots: [None; MAILBOX],
        head: 0,
        len: 0,
    };

    fn push(&mut self, m: Message) -> bool {
        if self.len == MAILBOX {
            return false;
        }
        self.slots[(self.head + self.len) % MAILBOX] = Some(m);
        self.len += 1;
        true
    }

    fn pop(&mut self) -> Option<Message> {
        if self.len == 0 {
            return None;
        }
        let m = self.slots[self.head].take();
        self.head = (self.head + 1) % MAILBOX;
        self.len -= 1;
        m
    }
}

/// The driver's own copy of a location's open frames: `(id, is_loop)`.
#[derive(Clone, Copy)]
struct Open {
    frames: [(u32, bool); MAX_DEPTH],
    depth: usize,
}

/// What the run saw, to show that every path was taken.
#[derive(Debug, Default)]
struct Seen {
    events: u64,
    folded: u64,
    releases: u64,
    merges: u64,
    multi_merges: u64,
    empty_merges: u64,
    collectives: u64,
    spawns: u64,
    stops: u64,
    reorders: u64,
    samples: u64,
}

struct World {
    rng: Rng,
    now: u64,
    locations: [Location<K, D>; LOCATIONS],
    open: [Open; LOCATIONS],
    mailboxes: [Mailbox; LOCATIONS],
    stats: [Stats; LOCATIONS],
    wildcard: [ReorderDetector<8>; LOCATIONS],
    sampling: [EffectiveInterval; LOCATIONS],
    global: Snapshot<K>,
    seen: Seen,
}

const CALIBRATION: Calibration = Calibration {
    enter: Cost {
        whole: 30,
        inside: 12,
    },
    exit: Cost {
        whole: 32,
        inside: 14,
    },
    send: 40,
    merge: 45,
    sample: 200,
};

const SELECTED: [u32; K] = [1, 3, 5, 7];

impl World {
    fn new(seed: u64) -> Self {
        let config = |id: u32| {
            let form = if id == 3 {
                Form::DelayOnly
            } else {
                Form::Timestamped
            };
            // Location 2 starts idle: its path starts on the first path data (R9).
            let path = if id == 2 {
                PathState::Idle
            } else {
                PathState::Active
            };
            Config::new(id, SELECTED)
                .calibration(CALIBRATION)
                .form(form)
                .path(path)
        };
        World {
            rng: Rng(seed),
            now: 0,
            locations: core::array::from_fn(|i| Location::new(config(i as u32), 0)),
            open: [Open {
                frames: [(0, false); MAX_DEPTH],
                depth: 0,
            }; LOCATIONS],
            mailboxes: [Mailbox::EMPTY; LOCATIONS],
            stats: core::array::from_fn(|_| Stats::new()),
            wildcard: core::array::from_fn(|_| ReorderDetector::new()),
            sampling: [EffectiveInterval::new(0); LOCATIONS],
            global: Snapshot::ZERO,
            seen: Seen::default(),
        }
    }

    fn tick(&mut self) -> u64 {
        self.now += 1 + self.rng.below(80);
        self.now
    }

    fn step(&mut self) {
        let i = self.rng.below(LOCATIONS as u64) as usize;
        match self.rng.below(100) {
            0..=29 => self.enter(i),
            30..=59 => self.exit(i),
            60..=71 => self.release(i),
            72..=87 => self.merge(i),
            88..=89 => self.spawn(i),
            90..=93 => {
                let t = self.tick();
                let weight = self.sampling[i].on_sample(t, self.rng.below(4) == 0);
                self.locations[i].on_overhead(CALIBRATION.sample);
                self.seen.samples += u64::from(weight.is_some());
                self.seen.events += 1;
            }
            94..=96 => {
                self.global = self.global.combine(&self.locations[i].snapshot());
                self.seen.events += 1;
            }
            97 => self.start_stop(i),
            _ => self.collective(),
        }
    }

    fn enter(&mut self, i: usize) {
        let open = &mut self.open[i];
        if open.depth == MAX_DEPTH {
            return;
        }
        // Few region ids, so that re-entries (recursion, 002 Fig. 11) are common.
        let id = self.rng.below(9) as u32;
        let is_loop = self.rng.below(5) == 0;
        let site = self.rng.below(3) as u32;
        let t = self.now + 1 + self.rng.below(80);
        self.now = t;
        let location = &mut self.locations[i];
        if is_loop {
            location.on_loop_enter(id, site, t).expect("loop enter");
        } else {
            location.on_enter(id, site, t).expect("enter");
        }
        open.frames[open.depth] = (id, is_loop);
        open.depth += 1;
        self.seen.events += 1;
    }

    fn exit(&mut self, i: usize) {
        let open = &mut self.open[i];
        if open.depth == 0 {
            return;
        }
        open.depth -= 1;
        let (id, is_loop) = open.frames[open.depth];
        let t = self.now + 1 + self.rng.below(80);
        self.now = t;
        let location = &mut self.locations[i];
        let exited = if is_loop {
            location.on_loop_exit(id, t).expect("loop exit")
        } else {
            location.on_exit(id, t).expect("exit")
        };
        if let Some(e) = exited {
            self.seen.folded += u64::from(e.folded);
            self.stats[i].record_exit(&e);
        }
        self.seen.events += 1;
    }

    fn release(&mut self, i: usize) {
        let t = self.tick();
        let record = self.locations[i].on_release(t).expect("release");
        let mut bytes = [0u8; PB_LEN];
        assert_eq!(record.encode(&mut bytes), Ok(PB_LEN));
        let to = (i + 1 + self.rng.below(LOCATIONS as u64 - 1) as usize) % LOCATIONS;
        let message = Message {
            bytes,
            source: i as u32,
        };
        self.mailboxes[to].push(message);
        self.seen.releases += 1;
        self.seen.events += 1;
    }

    fn merge(&mut self, i: usize) {
        // A wait-all over up to three pending messages, or a receive from an
        // uninstrumented peer (no piggyback) when nothing is pending.
        let wanted = 1 + self.rng.below(3) as usize;
        let mut records = [Piggyback::<K>::EMPTY; 3];
        let mut sources = [u32::MAX; 3];
        let mut n = 0;
        while n < wanted {
            let Some(m) = self.mailboxes[i].pop() else {
                break;
            };
            records[n] = Piggyback::decode(&m.bytes).expect("own encoding decodes");
            sources[n] = m.source;
            n += 1;
        }
        if n == 0 {
            n = 1;
            self.seen.empty_merges += 1;
        }
        let deps: [Dependency<'_, K>; 3] =
            core::array::from_fn(|j| Dependency::message(&records[j], 20 + j as u64, 5));
        let begin = self.tick();
        let end = begin + self.rng.below(200);
        self.now = end;
        let merged = self.locations[i]
            .on_merge(begin, end, &deps[..n])
            .expect("merge");
        self.sampling[i].on_communication(merged.wait);
        let site = 10 + self.rng.below(2) as u32;
        let mut reordered = false;
        // Site 10 is a wildcard receive of one message (R11).
        if site == 10
            && n == 1
            && sources[0] != u32::MAX
            && let Some(arrival) = merged.arrival
        {
            reordered = self.wildcard[i].observe(Match {
                site,
                source: sources[0],
                arrival,
                end: merged.approximated_end,
            });
            self.seen.reorders += u64::from(reordered);
        }
        self.stats[i].record_comm(&Communicated {
            site,
            peer: sources[0],
            bytes: 64,
            measured_wait: merged.wait,
            compensated_wait: merged.compensated_wait,
            transfer: merged.transfer,
            reordered,
        });
        self.seen.multi_merges += u64::from(n > 1);
        self.seen.merges += 1;
        self.seen.events += 1;
    }

    fn spawn(&mut self, i: usize) {
        // A thread spawn: a release the child's start merges (R8); the
        // child lives on the stack and ends at once.
        let t = self.tick();
        let record = self.locations[i].on_release(t).expect("spawn release");
        let t = self.tick();
        let mut child = Location::<K, D>::new(Config::new(100 + i as u32, SELECTED), t);
        child
            .on_start(t, &Dependency::immediate(&record))
            .expect("child start");
        child.on_enter(SELECTED[0], 0, t + 5).expect("child enter");
        child.on_exit(SELECTED[0], t + 9).expect("child exit");
        self.global = self.global.combine(&child.snapshot());
        self.seen.spawns += 1;
        self.seen.events += 4;
    }

    fn start_stop(&mut self, i: usize) {
        let t = self.tick();
        let location = &mut self.locations[i];
        if location.path_state() == PathState::Active {
            location.stop_path(t).expect("stop");
            self.seen.stops += 1;
        } else {
            location.start_path(t).expect("start");
        }
        self.seen.events += 1;
    }

    fn collective(&mut self) {
        // A barrier over all locations: entry records folded as one
        // reduction would (R6), then every participant's exit.
        let mut begins = [0u64; LOCATIONS];
        for begin in &mut begins {
            *begin = self.tick();
        }
        let end = self.tick() + 10;
        self.now = end;
        let mut entries = [Exchange::<K>::EMPTY; LOCATIONS];
        for (i, entry) in entries.iter_mut().enumerate() {
            // The entry record; delay-only needs each wait too (R6).
            let record = self.locations[i].peek(begins[i]);
            *entry = Exchange::entry(&record, end - begins[i]);
        }
        let exchange = Exchange::fold(entries.iter());
        assert_eq!(exchange.participants, LOCATIONS as u32);
        for (i, &begin) in begins.iter().enumerate() {
            self.locations[i]
                .on_collective(begin, end, &exchange)
                .expect("collective");
        }
        self.seen.collectives += 1;
        self.seen.events += 2 * LOCATIONS as u64;
    }

    fn finish(&mut self) {
        let end = self.tick();
        for s in &mut self.sampling {
            s.finish(end);
        }
    }
}

/// Allocations counted on this thread while `f` runs.
fn allocations_during<R>(f: impl FnOnce() -> R) -> (R, u64) {
    COUNTING.with(|c| c.set(true));
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let result = f();
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(false));
    (result, after - before)
}

// One test function only: the counter is global, so a second test running
// on another thread at the same time could add its allocations to ours.
#[test]
fn a_million_kernel_events_allocate_nothing() {
    // The allocator really counts: one Box on this thread is seen.
    let (boxed, counted) = allocations_during(|| core::hint::black_box(Box::new([0u8; 64])));
    drop(boxed);
    assert_eq!(counted, 1, "the counting allocator must see a Box");

    let mut world = World::new(0x9e37_79b9_7f4a_7c15);
    let ((), allocations) = allocations_during(|| {
        while world.seen.events < EVENTS {
            world.step();
        }
        world.finish();
    });
    assert_eq!(
        allocations, 0,
        "the kernel allocated during {} events",
        world.seen.events
    );

    // Every path the test means to drive was driven.
    let seen = &world.seen;
    assert!(seen.folded > 0, "recursion folded: {seen:?}");
    assert!(seen.multi_merges > 0 && seen.empty_merges > 0, "{seen:?}");
    assert!(
        seen.releases > 0 && seen.merges > 0 && seen.spawns > 0,
        "{seen:?}"
    );
    assert!(
        seen.collectives > 0 && seen.stops > 0 && seen.samples > 0,
        "{seen:?}"
    );
    assert!(
        world.locations.iter().any(|l| l.lost_frames() > 0),
        "the stack overflowed its capacity"
    );
    assert!(
        world.stats.iter().any(|s| !s.overflow().is_empty()),
        "a statistics table overflowed"
    );
    assert!(
        seen.reorders > 0,
        "a wildcard reordering was detected: {seen:?}"
    );
    assert!(world.global.active);
    println!("{seen:?}");
}
