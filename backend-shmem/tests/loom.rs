//! Loom models of the synchronisation under every wrapper (STYLE: "loom
//! models live in tests/loom.rs"): the lock hand-off slot, barrier
//! episodes with a thread racing into the next one, the work queue's
//! item records, a condition variable's notification record, and the
//! snapshot seqlock. Each model drives real kernels (`Location`s) with a
//! logical clock, so the records checked are the ones a run would merge.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target-loom
//! cargo test -p heisen-shmem --release --test loom` (README "Threads").
#![cfg(loom)]

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

use heisen_core::{Config, Dependency, Exchange, Flags, Piggyback};
use heisen_shmem::barrier::Episodes;
use heisen_shmem::condvar::Notices;
use heisen_shmem::handoff::Slot;
use heisen_shmem::queue::Fifo;
use heisen_shmem::seqlock::SeqLock;
use heisen_shmem::{Kernel, Record, SELECTED};

/// A kernel for location `id`, starting at time 0.
fn kernel(id: u32) -> Kernel {
    Kernel::new(Config::new(id, [u32::MAX; SELECTED]), 0)
}

/// A logical clock shared by the model's threads: every read is later
/// than every earlier read, as one real clock would be.
fn tick(clock: &AtomicU64) -> u64 {
    clock.fetch_add(1, Ordering::Relaxed) + 1
}

/// A record from location `id` with a recognisable approximated time.
fn record(id: u32, approximated: i64) -> Record {
    Piggyback {
        flags: Flags::DELAY.with(Flags::TIMESTAMP),
        location: id,
        approximated,
        ..Record::EMPTY
    }
}

#[test]
fn lock_hand_off_merges_the_previous_release_in_lock_order() {
    loom::model(|| {
        // (acquires so far, the last holder's id)
        let lock = Arc::new((Mutex::new((0u32, u32::MAX)), Slot::new()));
        let clock = Arc::new(AtomicU64::new(0));
        let holder = |id: u32, lock: Arc<(Mutex<(u32, u32)>, Slot)>, clock: Arc<AtomicU64>| {
            let mut k = kernel(id);
            let begin = tick(&clock);
            let mut g = lock.0.lock().unwrap();
            // SAFETY: the lock is held.
            #[allow(unsafe_code)] // reason: the slot's contract, as in the wrapper
            let previous = unsafe { lock.1.read() };
            if g.0 == 0 {
                assert_eq!(
                    previous.flags,
                    Flags::NONE,
                    "the first acquire merges nothing"
                );
            } else {
                assert_eq!(previous.location, g.1, "the previous holder's release");
            }
            k.on_merge(begin, tick(&clock), &[Dependency::immediate(&previous)])
                .unwrap();
            *g = (g.0 + 1, id);
            let released = k.on_release(tick(&clock)).unwrap();
            // SAFETY: the lock is held exclusively.
            #[allow(unsafe_code)] // reason: the slot's contract, as in the wrapper
            unsafe {
                lock.1.write(released)
            };
        };
        let threads: Vec<_> = (1..=2)
            .map(|id| {
                let (lock, clock) = (lock.clone(), clock.clone());
                thread::spawn(move || holder(id, lock, clock))
            })
            .collect();
        holder(0, lock.clone(), clock.clone());
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(lock.0.lock().unwrap().0, 3);
    });
}

#[test]
fn barrier_episodes_are_not_overwritten_by_a_thread_racing_ahead() {
    loom::model(|| {
        let episodes = Arc::new(Episodes::new(2));
        let run = |id: u32, episodes: Arc<Episodes>| {
            let mut leaders = 0;
            for e in 0..3i64 {
                let entry = Exchange::entry(&record(id, 10 * e + i64::from(id)), 0);
                let (all, leader) = episodes.arrive(entry);
                // Both arrivals of episode e, not one of e + 1.
                assert_eq!(all.participants, 2);
                assert_eq!(all.max_approximated, 10 * e + 1);
                leaders += u32::from(leader);
            }
            leaders
        };
        let other = {
            let episodes = episodes.clone();
            thread::spawn(move || run(1, episodes))
        };
        let here = run(0, episodes);
        assert_eq!(here + other.join().unwrap(), 3, "one leader per episode");
    });
}

#[test]
fn work_queue_pop_gets_its_own_items_record() {
    loom::model(|| {
        let fifo = Arc::new(Fifo::<u32>::new());
        let consumer = |fifo: Arc<Fifo<u32>>| {
            let mut got = Vec::new();
            loop {
                match fifo.pop() {
                    (Some(item), r) => {
                        // 003 Fig. 11: the item's own enqueue, whoever
                        // held the queue's lock before.
                        assert_eq!(r.location, item);
                        got.push(item);
                    }
                    (None, r) => {
                        assert_eq!(r.location, 99, "the close's record");
                        return got;
                    }
                }
            }
        };
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                let fifo = fifo.clone();
                thread::spawn(move || consumer(fifo))
            })
            .collect();
        fifo.push(1, record(1, 1));
        fifo.push(2, record(2, 2));
        fifo.close(record(99, 3));
        let mut all: Vec<u32> = consumers
            .into_iter()
            .flat_map(|c| c.join().unwrap())
            .collect();
        all.sort_unstable();
        assert_eq!(all, [1, 2]);
    });
}

#[test]
fn condvar_wait_that_waited_finds_its_notification() {
    loom::model(|| {
        let shared = Arc::new((Mutex::new(false), Condvar::new(), Notices::new()));
        let notifier = {
            let shared = shared.clone();
            thread::spawn(move || {
                *shared.0.lock().unwrap() = true;
                // Posted outside the mutex, as a notify may be.
                shared.2.post(record(7, 1));
                shared.1.notify_one();
            })
        };
        let mut ready = shared.0.lock().unwrap();
        let seen = shared.2.count();
        let mut waited = false;
        while !*ready {
            waited = true;
            ready = shared.1.wait(ready).unwrap();
        }
        drop(ready);
        let notice = shared.2.since(seen);
        if waited {
            // R8: a woken wait merges its notifier.
            assert_eq!(notice.map(|n| n.location), Some(7));
        }
        notifier.join().unwrap();
    });
}

#[test]
fn seqlock_reader_never_sees_a_torn_record() {
    loom::model(|| {
        let lock = Arc::new(SeqLock::new([0u64; 3]));
        let writer = {
            let lock = lock.clone();
            thread::spawn(move || {
                for i in 1..=2 {
                    lock.write([i; 3]);
                }
            })
        };
        let mut last = 0;
        for _ in 0..2 {
            let r = lock.read();
            assert!(r.iter().all(|&w| w == r[0]), "torn: {r:?}");
            assert!(r[0] >= last, "went back");
            last = r[0];
        }
        writer.join().unwrap();
    });
}
