//! The wrappers' merges, checked through the critical path (R7, R8): a
//! thread that never enters region `held` can only have a share of it by
//! merging a record released after another thread's `held` work. That
//! holds whatever the scheduling (a merge takes over the longer path
//! whether the thread waited or came late, R7), so these tests are
//! deterministic on a busy machine.

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

#[test]
fn mutex_acquire_merges_the_previous_release() {
    setup();
    let lock = Arc::new(Mutex::new(0u64));
    let (locked, wait_locked) = channel();
    let a = {
        let lock = lock.clone();
        std::thread::spawn(move || {
            let mut g = lock.lock().unwrap();
            locked.send(()).unwrap();
            *g += in_region("held", work);
        })
    };
    wait_locked.recv().unwrap();
    assert_eq!(held(0), 0);
    let _g = lock.lock().unwrap(); // hand-off from a's release
    assert!(held(0) > 0, "the acquire took over the holder's path");
    a.join().unwrap();
}

#[test]
fn mutex_try_lock_that_fails_merges_nothing() {
    setup();
    let lock = Arc::new(Mutex::new(()));
    let (locked, wait_locked) = channel();
    let (tried, wait_tried) = channel();
    let a = {
        let lock = lock.clone();
        std::thread::spawn(move || {
            let _g = lock.lock().unwrap();
            in_region("held", work);
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
    assert!(held(0) > 0);
    drop(g);
}

#[test]
fn rwlock_reader_merges_the_writer_and_writer_merges_the_readers() {
    setup();
    let lock = Arc::new(RwLock::new(0u64));
    let writer = {
        let lock = lock.clone();
        std::thread::spawn(move || *lock.write().unwrap() += in_region("held", work))
    };
    writer.join().unwrap();
    let reader = {
        let lock = lock.clone();
        std::thread::spawn(move || {
            let g = lock.read().unwrap();
            let from_writer = held(0);
            in_region("read", || core::hint::black_box(*g + work()));
            from_writer
        })
    };
    assert!(reader.join().unwrap() > 0, "the reader merged the writer");
    assert_eq!(held(1), 0);
    let mut g = lock.write().unwrap(); // merges the reader's release
    *g += 1;
    assert!(held(1) > 0, "the writer merged the reader's release");
}

#[test]
fn condvar_wait_merges_its_notifier_or_the_mutex() {
    setup();
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let notifier = {
        let pair = pair.clone();
        std::thread::spawn(move || {
            let mut ready = pair.0.lock().unwrap();
            in_region("held", work);
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
    assert!(held(0) > 0);
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

#[test]
fn barrier_exit_merges_every_arrival_episode_after_episode() {
    setup();
    let barrier = Arc::new(Barrier::new(2));
    let other = {
        let barrier = barrier.clone();
        std::thread::spawn(move || {
            let mut leaders = 0;
            for episode in 0..40 {
                if episode % 2 == 0 {
                    in_region("held", || work() / 8);
                }
                leaders += usize::from(barrier.wait().is_leader());
            }
            (leaders, shares())
        })
    };
    let mut leaders = 0;
    for episode in 0..40 {
        if episode % 2 == 1 {
            in_region("read", || work() / 8);
        }
        leaders += usize::from(barrier.wait().is_leader());
    }
    let (other_leaders, other_shares) = other.join().unwrap();
    assert_eq!(leaders + other_leaders, 40, "one leader per episode");
    // Each side has a share of the region only the other one ran.
    assert!(held(0) > 0, "{:?}", shares());
    assert!(other_shares.1 > 0, "{other_shares:?}");
}

#[test]
fn queue_pop_merges_its_own_items_enqueue_not_the_lock_order() {
    setup();
    let queue = Arc::new(WorkQueue::new());
    let (pushed, wait_pushed) = channel();
    let producer = {
        let queue = queue.clone();
        std::thread::spawn(move || {
            queue.push("x"); // before the `held` work
            in_region("held", work);
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
    assert!(held(0) > 0, "y was enqueued after it");
    queue.close();
    assert_eq!(queue.pop(), None);
    assert!(queue.is_empty());
}

#[test]
fn a_blocked_pop_is_woken_by_a_push_and_merges_it() {
    setup();
    let queue = Arc::new(WorkQueue::new());
    let consumer = {
        let queue = queue.clone();
        std::thread::spawn(move || {
            let item = queue.pop();
            (item, held(0))
        })
    };
    in_region("held", work);
    queue.push(5);
    let (item, share) = consumer.join().unwrap();
    assert_eq!(item, Some(5));
    assert!(share > 0);
}

#[test]
fn spawn_start_merges_the_spawner_and_join_merges_the_end() {
    setup();
    let main_before = shares();
    assert_eq!(main_before, (0, 0));
    // The spawner's `held` path reaches the child at its start.
    let child = spawn(|| {
        let at_start = held(0);
        in_region("read", work);
        at_start
    });
    // (the spawn above happened before any `held` work here)
    let at_start = child.join().unwrap();
    assert_eq!(at_start, 0);
    assert!(held(1) > 0, "the join merged the child's end");
    in_region("held", work);
    let child = spawn(|| held(0));
    assert!(
        child.join().unwrap() > 0,
        "the child's start merged the spawner"
    );
}

#[test]
fn scope_end_merges_the_threads_not_joined() {
    setup();
    std::thread::spawn(|| {
        let mut total = 0;
        scope(|s| {
            s.spawn(|| in_region("held", work));
            let joined = s.spawn(|| 1);
            total += joined.join().unwrap();
        });
        assert_eq!(total, 1);
        assert!(held(0) > 0, "the implicit join merged the child's end");
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
    assert!(cost("mutex_acquire")["whole"].as_u64().unwrap() > 0);
    let main = location(&report, "thread 0");
    check_location(main);
    assert!(main["overhead"].as_u64().unwrap() > 0);
}
