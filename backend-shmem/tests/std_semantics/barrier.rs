//! Barrier (library/std/tests/sync/barrier.rs).

use super::*;

#[test]
fn barrier_test_barrier() {
    setup();
    const N: usize = 10;

    let barrier = Arc::new(Barrier::new(N));
    let (tx, rx) = channel();

    for _ in 0..N - 1 {
        let c = barrier.clone();
        let tx = tx.clone();
        spawn(move || {
            tx.send(c.wait().is_leader()).unwrap();
        });
    }

    // At this point, all spawned threads should be blocked,
    // so we shouldn't get anything from the port
    assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));

    let mut leader_found = barrier.wait().is_leader();

    // Now, the barrier is cleared and we should get data.
    for _ in 0..N - 1 {
        if rx.recv().unwrap() {
            assert!(!leader_found);
            leader_found = true;
        }
    }
    assert!(leader_found);
}

#[test]
fn barrier_check_barrier_is_ref_unwind_safe() {
    setup();
    let barrier = Arc::new(Barrier::new(10));
    fn check<T: panic::RefUnwindSafe>(_: T) {}
    check(barrier);
}
