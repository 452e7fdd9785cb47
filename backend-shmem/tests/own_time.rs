//! A merge action's wait excludes the plain operation's own time (R5 with
//! R1's calibrated parts; `Runtime::own_time`): an acquire that found its
//! release long done adds to the delay only what heisen's code cost, not
//! std's acquire, which the uninstrumented program spends as well.
//! And a merge whose dependencies were all released before it began did
//! not wait at all (R5 with `w = 0`), however long it took.
//! Through the thread state's `begin`/`end` as the wrappers call them, on
//! an action of the test's own with costs it sets, so that the figures
//! are exact.

use heisen_core::Cost;
use heisen_core::merge::Dependency;
use heisen_shmem::with_current;

fn runtime() -> &'static heisen_shmem::Runtime {
    let config = heisen_shmem::Config {
        output: env!("CARGO_TARGET_TMPDIR").into(),
        ..heisen_shmem::Config::from_env()
    };
    heisen_shmem::runtime::init_with(config).unwrap_or_else(|e| e.0)
}

/// One merge of `action` on a release of another thread, with a delay far
/// larger than this thread's: a record taken at a clock read before the
/// merge's begin when `released_before`, after it otherwise. The merge
/// lasts at least `lasting` ns. Returns the delay's growth over the merge
/// and the wait the kernel was given.
fn merge_on(
    action: heisen_shmem::ActionId,
    released_before: bool,
    model: u64,
    lasting: u64,
) -> (u64, u64) {
    with_current(|s| {
        // Another location's release, `2^40` ns more delayed than this
        // one, at the same measured time as a `peek` now.
        let other = |s: &heisen_shmem::ThreadState| {
            let mut record = s.peek();
            record.location = s.kernel().id() + 1;
            record.delay += 1 << 40;
            record.approximated -= 1 << 40;
            record
        };
        let early = other(s);
        while s.now() <= u64::try_from(early.measured()).expect("a time") {
            core::hint::spin_loop(); // a release strictly before the begin
        }
        let before = s.kernel().delay();
        let begin = s.begin(action);
        while !released_before && s.now() <= begin {
            core::hint::spin_loop(); // a release strictly after the begin
        }
        let record = if released_before { early } else { other(s) };
        while s.now() < begin + lasting {
            core::hint::spin_loop();
        }
        let dependency = Dependency::message(&record, model, 0);
        let merged = s.end(begin, &[dependency], action);
        (s.kernel().delay() - before, merged.wait)
    })
    .expect("the thread is measured")
}

/// A merge action of the test's own, costing 7 ns, 5 of them after its
/// end clock read (R1).
fn costed(rt: &heisen_shmem::Runtime, name: &str) -> heisen_shmem::ActionId {
    let action = rt.action(name);
    rt.set_cost(
        action,
        Cost {
            whole: 7,
            inside: 5,
        },
    );
    action
}

#[test]
fn the_plain_operation_inside_a_merge_is_not_a_wait() {
    let rt = runtime();
    let action = costed(rt, "test_acquire");
    rt.set_own_time(action, u64::MAX / 4);
    for _ in 0..100 {
        assert_eq!(
            merge_on(action, false, 0, 0),
            (7, 0),
            "no wait, only heisen's own cost"
        );
    }
    // Without it the merge's interval counts as a wait, which the
    // dependency, released in it and far more delayed, absorbs (R5, case
    // m.1: `x' = min(x + w, x_j)`), on top.
    rt.set_own_time(action, 0);
    let (grown, wait) = merge_on(action, false, 0, 1_000);
    assert!(wait >= 1_000, "{wait}");
    assert_eq!(grown, 7 + wait);
}

/// A merge that began after the release it depends on did not wait for
/// it: however long it took (a preemption, 12.7 ms once in an OpenMP
/// ordered section's start), none of it is compensated, only heisen's
/// own cost is (R5 with `w = 0`, as for a lock taken at once). Counted
/// as a wait, `a(e) = max(b - x, a_j)` took all of it away.
#[test]
fn a_merge_that_began_after_its_release_did_not_wait() {
    let rt = runtime();
    let action = costed(rt, "test_late_acquire");
    rt.set_own_time(action, 0);
    for lasting in [0, 1_000, 2_000_000] {
        assert_eq!(merge_on(action, true, 0, lasting), (7, 0), "{lasting} ns");
    }
    // A dependency let go later than its record was taken (a join's,
    // `LET_GO_LATER`) may have made the merge wait still: R5 bounds it by
    // the transfer model, here the largest, `x' = min(x + w, x_j)`.
    let later = heisen_shmem::handoff::LET_GO_LATER;
    let (grown, wait) = merge_on(action, true, later, 1_000);
    assert!(wait >= 1_000, "{wait}");
    assert_eq!(grown, 7 + wait);
}

/// Charges of a lock's acquire: the crossed hand-off's when it merges
/// another thread's release, the uncontended one's when it takes back its
/// own (R1, R8). Costs and plain-operation times are set by the test, so
/// the delay's growth over each acquire is exact.
#[test]
fn an_acquire_of_another_threads_release_is_charged_the_crossed_hand_off() {
    let rt = runtime();
    let lock = std::sync::Arc::new(heisen_shmem::Mutex::new(0u64));
    *lock.lock().expect("lock") += 1; // calibrates the wrappers
    let (same, crossed) = (
        rt.action("mutex_acquire"),
        rt.action("mutex_acquire_crossed"),
    );
    let cost = |whole| Cost {
        whole,
        inside: whole,
    };
    rt.set_cost(same, cost(5));
    rt.set_cost(crossed, cost(1_000));
    rt.set_own_time(same, u64::MAX / 4);
    rt.set_own_time(crossed, u64::MAX / 4);
    // Another thread's release, with a delay far larger than this thread's,
    // so that it decides nothing about this thread's time (R5).
    let other = lock.clone();
    std::thread::spawn(move || {
        with_current(|s| s.overhead(1_000_000_000)).expect("measured");
        *other.lock().expect("lock") += 1;
    })
    .join()
    .expect("the other thread");
    let grown = |lock: &heisen_shmem::Mutex<u64>| {
        let before = with_current(|s| s.kernel().delay()).expect("measured");
        let guard = lock.lock().expect("lock");
        let after = with_current(|s| s.kernel().delay()).expect("measured");
        drop(guard);
        after - before
    };
    assert_eq!(grown(&lock), 1_000, "the other thread's release");
    assert_eq!(grown(&lock), 5, "its own release, taken back");
}

/// The uncontended acquire's fast path (`mutex::taken_at_once` with the
/// thread's own release: no clock read, the action's whole cost) leaves
/// the thread where the timed merge of that same record leaves it when it
/// did not wait (R5 with `w = 0`, R7 with the record's full path data):
/// the same delay, and the same record at a later release — approximated
/// time, path length, shares and nets.
#[test]
fn taking_back_an_own_release_without_a_clock_read_is_the_timed_merge() {
    let rt = runtime();
    let action = rt.action("test_take_back");
    rt.set_cost(
        action,
        Cost {
            whole: 9,
            inside: 6,
        },
    );
    // The timed merge's whole interval is the plain operation: no wait.
    rt.set_own_time(action, u64::MAX / 4);
    with_current(|s| {
        let own = s.peek();
        assert!(heisen_shmem::mutex::takes_back(s, &own), "its own record");
        let start = s.kernel().clone();
        let overhead = start.overhead();
        // Both paths are followed by a release at one later clock read.
        let later = s.now() + 1_000_000_000;

        heisen_shmem::mutex::taken_at_once(s, &own.into(), action, action);
        assert_eq!(
            s.kernel().last_measured(),
            start.last_measured(),
            "no clock read"
        );
        assert_eq!(s.kernel().overhead() - overhead, 9, "the whole cost");
        let fast = s
            .kernel_mut()
            .on_release_costing(later, 0)
            .expect("release");

        *s.kernel_mut() = start;
        let begin = s.begin(action);
        s.end(begin, &[Dependency::immediate(&own)], action);
        assert_eq!(s.kernel().overhead() - overhead, 9, "the same cost");
        let timed = s
            .kernel_mut()
            .on_release_costing(later, 0)
            .expect("release");

        assert!(
            fast.flags.contains(heisen_core::Flags::PATH),
            "path data compared"
        );
        assert_eq!(fast, timed);
    })
    .expect("the thread is measured");
}

/// A lock this thread released last is taken back without a clock read
/// (the fast path above), charged the uncontended acquire's whole cost.
#[test]
fn an_uncontended_lock_taken_back_reads_no_clock() {
    let rt = runtime();
    let lock = heisen_shmem::Mutex::new(0u64);
    *lock.lock().expect("lock") += 1; // calibrates; stores this thread's release
    // The cost the test above sets too (tests share the runtime).
    let acquire = rt.action("mutex_acquire");
    rt.set_cost(
        acquire,
        Cost {
            whole: 5,
            inside: 5,
        },
    );
    let state =
        || with_current(|s| (s.kernel().last_measured(), s.kernel().delay())).expect("measured");
    let before = state();
    let guard = lock.lock().expect("lock");
    let after = state();
    drop(guard);
    assert_eq!(after, (before.0, before.1 + 5));
}
