//! The wrappers' merges, checked through the critical path (R7, R8).
//! Two facts hold whatever the scheduling, so these tests are
//! deterministic on a busy machine: after a merge, a thread's `L` is at
//! least the `L` the releasing thread had when it released (R7:
//! `L' = max(L_local, L_j + l_j)`, `l_j >= 0`), and a thread that never
//! enters region `held` has no share of it until it merges a record
//! released after another thread's `held` work. Whether a merge *takes
//! over* the other path (and its shares) depends on how long each thread
//! ran, which a preempted thread changes, so that is never asserted.

use core::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::sync::mpsc::channel;

use heisen_shmem::{
    Barrier, Condvar, Mutex, RwLock, WorkQueue, in_region, scope, spawn, with_current,
};

mod common;

/// Selects `held` (slot 0) and `read` (slot 1) before any test touches the
/// runtime (the tests of this binary share one process), and sends the
/// report written at exit to the target directory.
fn setup() {
    let config = heisen_shmem::Config {
        regions: Some(vec!["held".into(), "read".into()]),
        output: env!("CARGO_TARGET_TMPDIR").into(),
        ..heisen_shmem::Config::from_env()
    };
    let _ = heisen_shmem::runtime::init_with(config);
}

/// Deterministic work the optimiser cannot remove (a few ms).
fn work() -> u64 {
    (0..3_000_000u64).fold(0, |a, i| core::hint::black_box(a.wrapping_add(i * i)))
}

/// This thread's inclusive share of `held` (slot 0) and `read` (slot 1).
fn shares() -> (i64, i64) {
    with_current(|s| {
        let p = s.snapshot();
        (p.inclusive[0], p.inclusive[1])
    })
    .expect("the thread is measured")
}

fn held(slot: usize) -> i64 {
    let (h, r) = shares();
    [h, r][slot]
}

/// This thread's critical-path length `L` (R7).
fn longest() -> i64 {
    with_current(|s| s.snapshot().longest).expect("the thread is measured")
}

/// The `L` a thread had just before it released a record.
#[derive(Clone, Default)]
struct Mark(Arc<AtomicI64>);

impl Mark {
    /// Marks a release that follows work: that work is on the path.
    fn set(&self) {
        let now = longest();
        assert!(now > 0, "the releaser's work adds to L");
        self.0.store(now, Ordering::SeqCst);
    }

    /// Marks any release (a thread may have no work on its path yet).
    fn set_any(&self) {
        self.0.store(longest(), Ordering::SeqCst);
    }

    /// Whether this thread merged the marked release (R7).
    fn check(&self, what: &str) -> Result<(), String> {
        let (released, now) = (self.0.load(Ordering::SeqCst), longest());
        match now >= released {
            true => Ok(()),
            false => Err(format!("{what}: L {now} < the release's {released}")),
        }
    }

    /// Asserts that this thread merged the marked release (R7).
    fn merged(&self, what: &str) {
        self.check(what).unwrap();
    }
}

#[test]
fn mutex_acquire_merges_the_previous_release() {
    setup();
    let lock = Arc::new(Mutex::new(0u64));
    let (locked, wait_locked) = channel();
    let mark = Mark::default();
    let a = {
        let (lock, mark) = (lock.clone(), mark.clone());
        std::thread::spawn(move || {
            let mut g = lock.lock().unwrap();
            locked.send(()).unwrap();
            *g += in_region("held", work);
            mark.set(); // then `g` is released
        })
    };
    wait_locked.recv().unwrap();
    assert_eq!(held(0), 0);
    let _g = lock.lock().unwrap(); // hand-off from a's release
    mark.merged("the acquire merged the holder's release");
    a.join().unwrap();
}

#[test]
fn mutex_try_lock_that_fails_merges_nothing() {
    setup();
    let lock = Arc::new(Mutex::new(()));
    let (locked, wait_locked) = channel();
    let (tried, wait_tried) = channel();
    let mark = Mark::default();
    let a = {
        let (lock, mark) = (lock.clone(), mark.clone());
        std::thread::spawn(move || {
            let _g = lock.lock().unwrap();
            in_region("held", work);
            mark.set();
            locked.send(()).unwrap();
            wait_tried.recv().unwrap(); // still held while the other tries
        })
    };
    wait_locked.recv().unwrap();
    assert!(lock.try_lock().is_err());
    assert_eq!(held(0), 0, "a failed try_lock merged nothing");
    tried.send(()).unwrap();
    a.join().unwrap();
    // A successful try_lock after the release does merge it.
    let g = lock.try_lock().expect("free now");
    mark.merged("a successful try_lock merged the release");
    drop(g);
}

#[test]
fn rwlock_reader_merges_the_writer_and_writer_merges_the_readers() {
    setup();
    let lock = Arc::new(RwLock::new(0u64));
    let (wrote, read) = (Mark::default(), Mark::default());
    let writer = {
        let (lock, wrote) = (lock.clone(), wrote.clone());
        std::thread::spawn(move || {
            let mut g = lock.write().unwrap();
            *g += in_region("held", work);
            wrote.set();
        })
    };
    writer.join().unwrap();
    let reader = {
        let (lock, wrote, read) = (lock.clone(), wrote.clone(), read.clone());
        std::thread::spawn(move || {
            let g = lock.read().unwrap();
            wrote.merged("the reader merged the writer");
            in_region("read", || core::hint::black_box(*g + work()));
            read.set();
        })
    };
    reader.join().unwrap();
    assert_eq!(held(1), 0);
    let mut g = lock.write().unwrap(); // merges the reader's release
    *g += 1;
    read.merged("the writer merged the reader's release");
}

#[test]
fn rwlock_downgrade_is_the_writer_s_release_readers_merge() {
    setup();
    let lock = Arc::new(RwLock::new(0u64));
    let (downgraded, wait_downgraded) = channel();
    let (read, wait_read) = channel();
    let wrote = Mark::default();
    let writer = {
        let (lock, wrote) = (lock.clone(), wrote.clone());
        std::thread::spawn(move || {
            let mut g = lock.write().unwrap();
            *g += in_region("held", work);
            wrote.set();
            // R8: the downgrade releases the write; the read stays held.
            let g = heisen_shmem::RwLockWriteGuard::downgrade(g);
            downgraded.send(()).unwrap();
            wait_read.recv().unwrap(); // a reader came in beside this one
            drop(g);
        })
    };
    wait_downgraded.recv().unwrap();
    let g = lock.read().unwrap(); // shares the lock with the downgraded writer
    wrote.merged("a reader after the downgrade merged the writer's release");
    assert!(*g > 0);
    read.send(()).unwrap();
    drop(g);
    writer.join().unwrap();
}

#[test]
fn condvar_wait_merges_its_notifier_or_the_mutex() {
    setup();
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let mark = Mark::default();
    let notifier = {
        let (pair, mark) = (pair.clone(), mark.clone());
        std::thread::spawn(move || {
            let mut ready = pair.0.lock().unwrap();
            in_region("held", work);
            mark.set();
            *ready = true;
            pair.1.notify_all();
        })
    };
    let mut ready = pair.0.lock().unwrap();
    while !*ready {
        ready = pair.1.wait(ready).unwrap();
    }
    drop(ready);
    // Woken: the notification; or never waited: the mutex hand-off. Both
    // were released after the notifier's `held` work.
    mark.merged("the wait merged the notifier or its unlock");
    notifier.join().unwrap();
}

#[test]
fn condvar_wait_that_times_out_merges_only_the_mutex() {
    setup();
    let pair = (Mutex::new(()), Condvar::new());
    let guard = pair.0.lock().unwrap();
    let (guard, result) = pair
        .1
        .wait_timeout(guard, core::time::Duration::from_micros(10))
        .unwrap();
    assert!(result.timed_out());
    drop(guard);
    assert_eq!(held(0), 0);
}

/// A wait that ran out of time waited as long as the program does without
/// heisen (its timeout ended it, not a notice): it is the program's time,
/// so the thread's delay grows by what heisen charged and nothing more.
/// Ended as a wait for the mutex's record (R5: `a(e) = b - x`), the whole
/// timeout was compensated away. Exact: one thread, its own records only.
#[test]
fn a_condvar_wait_that_times_out_is_the_programs_time() {
    setup();
    let pair = (Mutex::new(()), Condvar::new());
    let counts =
        || with_current(|s| (s.kernel().delay(), s.kernel().overhead())).expect("measured");
    let before = counts();
    let guard = pair.0.lock().unwrap();
    let (guard, result) = pair
        .1
        .wait_timeout(guard, core::time::Duration::from_micros(300))
        .unwrap();
    drop(guard);
    let after = counts();
    assert!(result.timed_out());
    assert_eq!(
        after.0 - before.0,
        after.1 - before.1,
        "the delay grew by the overhead charged (delay, overhead before {before:?}, after {after:?})"
    );
}

#[test]
fn barrier_exit_merges_every_arrival_episode_after_episode() {
    setup();
    let barrier = Arc::new(Barrier::new(2));
    // One mark per episode and side: a fast thread's next arrival must not
    // overwrite the mark the other thread still compares with.
    let marks = || (0..40).map(|_| Mark::default()).collect::<Vec<_>>();
    let (mine, theirs) = (marks(), marks());
    let other = {
        let (barrier, mine, theirs) = (barrier.clone(), mine.clone(), theirs.clone());
        std::thread::spawn(move || {
            let (mut leaders, mut first_error) = (0, None);
            for episode in 0..40 {
                if episode % 2 == 0 {
                    in_region("held", || work() / 8);
                }
                theirs[episode].set_any();
                leaders += usize::from(barrier.wait().is_leader());
                // Checked after the loop: a panic here would leave the
                // other thread at the barrier for ever.
                let merged = mine[episode].check("the other thread's exit merged this arrival");
                first_error = first_error.or(merged.err());
            }
            (leaders, first_error)
        })
    };
    let (mut leaders, mut first_error) = (0, None);
    for episode in 0..40 {
        if episode % 2 == 1 {
            in_region("read", || work() / 8);
        }
        mine[episode].set_any();
        leaders += usize::from(barrier.wait().is_leader());
        let merged = theirs[episode].check("this exit merged the other thread's arrival");
        first_error = first_error.or(merged.err());
    }
    let (other_leaders, other_error) = other.join().unwrap();
    assert_eq!(first_error.or(other_error), None);
    assert!(longest() > 0, "the episodes' work is on the path");
    assert_eq!(leaders + other_leaders, 40, "one leader per episode");
}

#[test]
fn queue_pop_merges_its_own_items_enqueue_not_the_lock_order() {
    setup();
    let queue = Arc::new(WorkQueue::new());
    let (pushed, wait_pushed) = channel();
    let mark = Mark::default();
    let producer = {
        let (queue, mark) = (queue.clone(), mark.clone());
        std::thread::spawn(move || {
            queue.push("x"); // before the `held` work
            in_region("held", work);
            mark.set();
            queue.push("y"); // after it
            pushed.send(()).unwrap();
        })
    };
    wait_pushed.recv().unwrap();
    producer.join().unwrap();
    // 003 Fig. 11: the dequeue of x follows x's enqueue only, although the
    // queue's lock was last released by y's enqueue.
    assert_eq!(queue.pop(), Some("x"));
    assert_eq!(held(0), 0, "x was enqueued before the held work");
    assert_eq!(queue.pop(), Some("y"));
    mark.merged("y was enqueued after the held work");
    queue.close();
    assert_eq!(queue.pop(), None);
    assert!(queue.is_empty());
}

#[test]
fn a_blocked_pop_is_woken_by_a_push_and_merges_it() {
    setup();
    let queue = Arc::new(WorkQueue::new());
    let mark = Mark::default();
    let consumer = {
        let (queue, mark) = (queue.clone(), mark.clone());
        std::thread::spawn(move || {
            let item = queue.pop();
            mark.merged("the pop merged its push");
            item
        })
    };
    in_region("held", work);
    mark.set();
    queue.push(5);
    assert_eq!(consumer.join().unwrap(), Some(5));
}

// A spawn and a join are checked through `L`, not through shares: a
// merge takes over the longer path (R7), and whether the child's path is
// the longer one depends on how long the spawner ran between the spawn
// and the join (a thread creation preempted on a busy machine can take
// longer than the child's work). `L` after a merge is at least the
// merged record's, whatever the scheduling.

#[test]
fn spawn_start_merges_the_spawner_and_join_merges_the_end() {
    setup();
    in_region("held", work);
    let spawner_before = longest();
    let child = spawn(|| {
        let at_start = longest();
        in_region("read", work);
        (at_start, longest())
    });
    let (child_at_start, child_at_end) = child.join().unwrap();
    assert!(
        child_at_start >= spawner_before,
        "the child's start merged the spawner: {child_at_start} < {spawner_before}"
    );
    assert!(child_at_end > child_at_start, "the child's work adds to L");
    let after_join = longest();
    assert!(
        after_join >= child_at_end,
        "the join merged the child's end: {after_join} < {child_at_end}"
    );
}

/// A spawned thread's creation (from the spawner's release to the
/// child's first clock read) happens without heisen too: it is the start
/// merge's transfer (R5, R8), so the child starts with the spawner's delay
/// and its own registration's overhead, nothing more. Before, the child's
/// approximated start was the spawner's release itself, and the creation
/// latency (30 µs to 3.7 ms on the development VM) was compensated away.
/// Exact whatever the scheduling: the spawner's delay only grows between
/// its release and the spawn's return (no merge in between).
#[test]
fn a_spawned_threads_creation_is_not_compensated_away() {
    setup();
    in_region("held", work);
    let (tx, rx) = channel();
    let spawner_before = with_current(|s| s.kernel().delay()).expect("the spawner is measured");
    let child = spawn(move || {
        let start = with_current(|s| (s.kernel().delay(), s.kernel().overhead()));
        tx.send(start).expect("the spawner waits");
    });
    let spawner = with_current(|s| s.kernel().delay()).expect("the spawner is measured");
    let (delay, overhead) = rx
        .recv()
        .expect("the child ran")
        .expect("the child is measured");
    child.join().unwrap();
    // The spawner's delay at its release, between its delay before the
    // spawn and after it, and the child's own overhead: no more, no less.
    assert!(
        delay >= spawner_before + overhead && delay <= spawner + overhead,
        "the child's delay at its start, {delay} ns, is the spawner's at its \
         release (between {spawner_before} and {spawner} ns) and its own \
         overhead, {overhead} ns"
    );
}

#[test]
fn spawn_unchecked_merges_as_spawn() {
    setup();
    in_region("held", work);
    let spawner_before = longest();
    let mut at = (0, 0);
    let slot = &mut at;
    // SAFETY: the thread is joined before `at` is read or goes.
    #[allow(unsafe_code)] // reason: std's unsafe API, wrapped
    let child = unsafe {
        heisen_shmem::Builder::new().spawn_unchecked(move || {
            slot.0 = longest();
            in_region("read", work);
            slot.1 = longest();
        })
    }
    .unwrap();
    child.join().unwrap();
    assert!(at.0 >= spawner_before, "the start merged the spawner");
    assert!(longest() >= at.1, "the join merged the end");
}

#[test]
fn scope_end_merges_the_threads_not_joined() {
    setup();
    std::thread::spawn(|| {
        let not_joined = AtomicI64::new(0);
        let mut total = 0;
        scope(|s| {
            s.spawn(|| {
                in_region("held", work);
                not_joined.store(longest(), Ordering::Relaxed);
            });
            let joined = s.spawn(|| 1);
            total += joined.join().unwrap();
        });
        assert_eq!(total, 1);
        let child_at_end = not_joined.load(Ordering::Relaxed);
        assert!(child_at_end > 0, "the child's work adds to L");
        let after_scope = longest();
        assert!(
            after_scope >= child_at_end,
            "the implicit join merged the child's end: {after_scope} < {child_at_end}"
        );
    })
    .join()
    .unwrap();
}

#[test]
fn wrapper_actions_are_calibrated_and_listed_in_the_report() {
    use common::*;
    let name = "wrapper_actions_are_calibrated_and_listed_in_the_report";
    if is_child(name) {
        let lock = Mutex::new(0);
        *lock.lock().unwrap() += 1;
        return;
    }
    let dir = out_dir(name);
    let out = child(name, &[("HEISEN_OUTPUT", dir.to_str().unwrap())]);
    assert!(out.status.success(), "{out:?}");
    let report = report_in(&dir);
    let actions = report["header"]["actions"].as_array().expect("actions");
    let cost = |name: &str| {
        actions
            .iter()
            .find(|a| a["action"] == name)
            .unwrap_or_else(|| panic!("{name} in {actions:?}"))
            .clone()
    };
    for name in [
        "mutex_acquire",
        "mutex_release",
        "mutex_try_acquire",
        "rwlock_read",
        "rwlock_write",
        "condvar_wait",
        "condvar_notify",
        "barrier_wait",
        "queue_push",
        "queue_pop",
        "thread_spawn",
        "thread_join",
    ] {
        let c = cost(name);
        assert!(c["inside"].as_u64() <= c["whole"].as_u64(), "{c}");
    }
    // The lock+unlock pair costs something (R1). Its split between the
    // acquire (the pair's calibration less the release's) and the release
    // is two measurements' difference: on a busy moment the acquire's
    // share may round to 0 (CI once), the pair's sum may not.
    let whole = |name: &str| cost(name)["whole"].as_u64().expect("whole");
    assert!(
        whole("mutex_acquire") + whole("mutex_release") > 0,
        "{} {}",
        cost("mutex_acquire"),
        cost("mutex_release")
    );
    let main = location(&report, "thread 0");
    check_location(main);
    assert!(main["overhead"].as_u64().unwrap() > 0);
}
