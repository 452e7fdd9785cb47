//! RwLock (library/std/tests/sync/rwlock.rs).

use super::*;

#[test]
fn rwlock_smoke() {
    setup();
    let l = RwLock::new(());
    drop(l.read().unwrap());
    drop(l.write().unwrap());
    drop((l.read().unwrap(), l.read().unwrap()));
    drop(l.write().unwrap());
}

/// A seeded generator (std's test uses `test_rng`, seeded too).
struct XorShift(u64);

impl XorShift {
    fn one_in(&mut self, n: u64) -> bool {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0.is_multiple_of(n)
    }
}

#[test]
fn rwlock_frob() {
    setup();
    const N: u32 = 10;
    const M: usize = 1000;

    let r = Arc::new(RwLock::new(()));

    let (tx, rx) = channel::<()>();
    for i in 0..N {
        let tx = tx.clone();
        let r = r.clone();
        spawn(move || {
            let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ u64::from(i + 1));
            for _ in 0..M {
                if rng.one_in(u64::from(N)) {
                    drop(r.write().unwrap());
                } else {
                    drop(r.read().unwrap());
                }
            }
            drop(tx);
        });
    }
    drop(tx);
    let _ = rx.recv();
}

#[test]
fn rwlock_test_rw_arc() {
    setup();
    let arc = Arc::new(RwLock::new(0));
    let arc2 = arc.clone();
    let (tx, rx) = channel();

    spawn(move || {
        let mut lock = arc2.write().unwrap();
        for _ in 0..10 {
            let tmp = *lock;
            *lock = -1;
            thread::yield_now();
            *lock = tmp + 1;
        }
        tx.send(()).unwrap();
    });

    // Readers try to catch the writer in the act
    let mut children = Vec::new();
    for _ in 0..5 {
        let arc3 = arc.clone();
        children.push(spawn(move || {
            let lock = arc3.read().unwrap();
            assert!(*lock >= 0);
        }));
    }

    // Wait for children to pass their asserts
    for r in children {
        assert!(r.join().is_ok());
    }

    // Wait for writer to finish
    rx.recv().unwrap();
    let lock = arc.read().unwrap();
    assert_eq!(*lock, 10);
}

#[test]
fn rwlock_test_rw_arc_access_in_unwind() {
    setup();
    let arc = Arc::new(RwLock::new(1));
    let arc2 = arc.clone();
    let _ = spawn(move || {
        struct Unwinder {
            i: Arc<RwLock<isize>>,
        }
        impl Drop for Unwinder {
            fn drop(&mut self) {
                let mut lock = self.i.write().unwrap();
                *lock += 1;
            }
        }
        let _u = Unwinder { i: arc2 };
        panic!();
    })
    .join();
    let lock = arc.read().unwrap();
    assert_eq!(*lock, 2);
}

#[test]
fn rwlock_test_rwlock_unsized() {
    setup();
    let rw: &RwLock<[i32]> = &RwLock::new([1, 2, 3]);
    {
        let b = &mut *rw.write().unwrap();
        b[0] = 4;
        b[2] = 5;
    }
    let comp: &[i32] = &[4, 2, 5];
    assert_eq!(&*rw.read().unwrap(), comp);
}

#[test]
fn rwlock_test_into_inner() {
    setup();
    let m = RwLock::new(NonCopy(10));
    assert_eq!(m.into_inner().unwrap(), NonCopy(10));
}

#[test]
fn rwlock_test_into_inner_drop() {
    setup();
    struct Foo(Arc<AtomicUsize>);
    impl Drop for Foo {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let num_drops = Arc::new(AtomicUsize::new(0));
    let m = RwLock::new(Foo(num_drops.clone()));
    assert_eq!(num_drops.load(Ordering::SeqCst), 0);
    {
        let _inner = m.into_inner().unwrap();
        assert_eq!(num_drops.load(Ordering::SeqCst), 0);
    }
    assert_eq!(num_drops.load(Ordering::SeqCst), 1);
}

#[test]
fn rwlock_test_get_mut() {
    setup();
    let mut m = RwLock::new(NonCopy(10));
    *m.get_mut().unwrap() = NonCopy(20);
    assert_eq!(m.into_inner().unwrap(), NonCopy(20));
}

#[test]
fn rwlock_test_read_guard_covariance() {
    setup();
    fn do_stuff<'a>(_: RwLockReadGuard<'_, &'a i32>, _: &'a i32) {}
    let j: i32 = 5;
    let lock = RwLock::new(&j);
    {
        let i = 6;
        do_stuff(lock.read().unwrap(), &i);
    }
    drop(lock);
}

#[test]
fn rwlock_test_downgrade_basic() {
    setup();
    let r = RwLock::new(());

    let write_guard = r.write().unwrap();
    let _read_guard = RwLockWriteGuard::downgrade(write_guard);
}

#[test]
fn rwlock_test_downgrade_observe() {
    setup();
    // Inspired by the test `test_rwlock_downgrade` from:
    // https://github.com/Amanieu/parking_lot/blob/master/src/rwlock.rs

    const W: usize = 20;
    const N: usize = 100;

    // This test spawns `W` writer threads, where each will increment a
    // counter `N` times, ensuring that the value they wrote has not changed
    // after downgrading.

    let rw = Arc::new(RwLock::new(0));

    // Spawn the writers that will do `W * N` operations and checks.
    let handles: Vec<_> = (0..W)
        .map(|_| {
            let rw = rw.clone();
            spawn(move || {
                for _ in 0..N {
                    // Increment the counter.
                    let mut write_guard = rw.write().unwrap();
                    *write_guard += 1;
                    let cur_val = *write_guard;

                    // Downgrade the lock to read mode, where the value
                    // protected cannot be modified.
                    let read_guard = RwLockWriteGuard::downgrade(write_guard);
                    assert_eq!(cur_val, *read_guard);
                }
            })
        })
        .collect();

    for handle in handles {
        handle.join().unwrap();
    }

    assert_eq!(*rw.read().unwrap(), W * N);
}

#[test]
fn rwlock_test_downgrade_atomic() {
    setup();
    const NEW_VALUE: i32 = -1;

    // This test checks that `downgrade` is atomic, meaning as soon as a
    // write lock has been downgraded, the lock must be in read mode and no
    // other threads can take the write lock to modify the protected value.

    // `W` is the number of evil writer threads.
    const W: usize = 20;
    let rwlock = Arc::new(RwLock::new(0));

    // Put the lock in write mode, causing all future threads trying to
    // access this go to sleep.
    let mut main_write_guard = rwlock.write().unwrap();

    // Spawn all of the evil writer threads. They will each increment the
    // protected value by 1.
    let handles: Vec<_> = (0..W)
        .map(|_| {
            let rwlock = rwlock.clone();
            spawn(move || {
                // Will go to sleep since the main thread initially has the
                // write lock.
                let mut evil_guard = rwlock.write().unwrap();
                *evil_guard += 1;
            })
        })
        .collect();

    // (std sleeps here so that the evil threads go to sleep; "not strictly
    // necessary", and left out.)

    // Once everyone is asleep, set the value to `NEW_VALUE`.
    *main_write_guard = NEW_VALUE;

    // Atomically downgrade the write guard into a read guard.
    let main_read_guard = RwLockWriteGuard::downgrade(main_write_guard);

    // If the above is not atomic, then it would be possible for an evil
    // thread to get in front of this read and change the value to be
    // non-negative.
    assert_eq!(*main_read_guard, NEW_VALUE, "`downgrade` was not atomic");

    // Drop the main read guard and allow the evil writer threads to start
    // incrementing.
    drop(main_read_guard);

    for handle in handles {
        handle.join().unwrap();
    }

    let final_check = rwlock.read().unwrap();
    assert_eq!(*final_check, W as i32 + NEW_VALUE);
}

#[test]
fn rwlock_test_rwlock_try_write() {
    setup();
    let lock = RwLock::new(0isize);
    let read_guard = lock.read().unwrap();

    let write_result = lock.try_write();
    match write_result {
        Err(TryLockError::WouldBlock) => (),
        Ok(_) => panic!("try_write should not succeed while read_guard is in scope"),
        Err(_) => panic!("unexpected error"),
    }

    drop(read_guard);
}

/// Creates a rwlock that is immediately poisoned.
pub(crate) fn new_poisoned_rwlock<T>(value: T) -> RwLock<T> {
    let lock = RwLock::new(value);

    let catch_unwind_result = panic::catch_unwind(AssertUnwindSafe(|| {
        let _guard = lock.write().unwrap();
        panic!("test panic to poison RwLock");
    }));

    assert!(catch_unwind_result.is_err());
    assert!(lock.is_poisoned());

    lock
}

#[test]
fn rwlock_test_into_inner_poison() {
    setup();
    let m = new_poisoned_rwlock(NonCopy(10));

    match m.into_inner() {
        Err(e) => assert_eq!(e.into_inner(), NonCopy(10)),
        Ok(x) => panic!("into_inner of poisoned RwLock is Ok: {x:?}"),
    }
}

#[test]
fn rwlock_test_get_mut_poison() {
    setup();
    let mut m = new_poisoned_rwlock(NonCopy(10));

    match m.get_mut() {
        Err(e) => assert_eq!(*e.into_inner(), NonCopy(10)),
        Ok(x) => panic!("get_mut of poisoned RwLock is Ok: {x:?}"),
    }
}

#[test]
fn rwlock_test_rw_arc_poison_wr() {
    setup();
    let arc = Arc::new(RwLock::new(1));
    let arc2 = arc.clone();
    let _: Result<(), _> = spawn(move || {
        let _lock = arc2.write().unwrap();
        panic!();
    })
    .join();
    assert!(arc.read().is_err());
}

#[test]
fn rwlock_test_rw_arc_poison_ww() {
    setup();
    let arc = Arc::new(RwLock::new(1));
    assert!(!arc.is_poisoned());
    let arc2 = arc.clone();
    let _: Result<(), _> = spawn(move || {
        let _lock = arc2.write().unwrap();
        panic!();
    })
    .join();
    assert!(arc.write().is_err());
    assert!(arc.is_poisoned());
}

#[test]
fn rwlock_test_rw_arc_no_poison_rr() {
    setup();
    let arc = Arc::new(RwLock::new(1));
    let arc2 = arc.clone();
    let _: Result<(), _> = spawn(move || {
        let _lock = arc2.read().unwrap();
        panic!();
    })
    .join();
    let lock = arc.read().unwrap();
    assert_eq!(*lock, 1);
}

#[test]
fn rwlock_test_rw_arc_no_poison_rw() {
    setup();
    let arc = Arc::new(RwLock::new(1));
    let arc2 = arc.clone();
    let _: Result<(), _> = spawn(move || {
        let _lock = arc2.read().unwrap();
        panic!()
    })
    .join();
    let lock = arc.write().unwrap();
    assert_eq!(*lock, 1);
}
