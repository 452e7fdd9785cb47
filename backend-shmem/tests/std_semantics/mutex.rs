//! Mutex (library/std/tests/sync/mutex.rs).

use super::*;

#[derive(Eq, PartialEq, Debug)]
pub(crate) struct NonCopy(pub(crate) i32);

#[test]
fn mutex_smoke() {
    setup();
    let m = Mutex::new(());
    drop(m.lock().unwrap());
    drop(m.lock().unwrap());
}

#[test]
fn mutex_lots_and_lots() {
    setup();
    const J: u32 = 1000;
    const K: u32 = 3;

    let m = Arc::new(Mutex::new(0));

    fn inc(m: &Mutex<u32>) {
        for _ in 0..J {
            *m.lock().unwrap() += 1;
        }
    }

    let (tx, rx) = channel();
    for _ in 0..K {
        let tx2 = tx.clone();
        let m2 = m.clone();
        spawn(move || {
            inc(&m2);
            tx2.send(()).unwrap();
        });
        // A thread heisen did not start, on purpose.
        let tx2 = tx.clone();
        let m2 = m.clone();
        thread::spawn(move || {
            inc(&m2);
            tx2.send(()).unwrap();
        });
    }

    drop(tx);
    for _ in 0..2 * K {
        rx.recv().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), J * K * 2);
}

#[test]
fn mutex_try_lock() {
    setup();
    let m = Mutex::new(());
    *m.try_lock().unwrap() = ();
}

#[test]
fn mutex_test_into_inner() {
    setup();
    let m = Mutex::new(NonCopy(10));
    assert_eq!(m.into_inner().unwrap(), NonCopy(10));
}

#[test]
fn mutex_test_into_inner_drop() {
    setup();
    struct Foo(Arc<AtomicUsize>);
    impl Drop for Foo {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let num_drops = Arc::new(AtomicUsize::new(0));
    let m = Mutex::new(Foo(num_drops.clone()));
    assert_eq!(num_drops.load(Ordering::SeqCst), 0);
    {
        let _inner = m.into_inner().unwrap();
        assert_eq!(num_drops.load(Ordering::SeqCst), 0);
    }
    assert_eq!(num_drops.load(Ordering::SeqCst), 1);
}

#[test]
fn mutex_test_get_mut() {
    setup();
    let mut m = Mutex::new(NonCopy(10));
    *m.get_mut().unwrap() = NonCopy(20);
    assert_eq!(m.into_inner().unwrap(), NonCopy(20));
}

#[test]
fn mutex_test_mutex_arc_nested() {
    setup();
    // Tests nested mutexes and access to underlying data.
    let arc = Arc::new(Mutex::new(1));
    let arc2 = Arc::new(Mutex::new(arc));
    let (tx, rx) = channel();
    let _t = spawn(move || {
        let lock = arc2.lock().unwrap();
        let lock2 = lock.lock().unwrap();
        assert_eq!(*lock2, 1);
        tx.send(()).unwrap();
    });
    rx.recv().unwrap();
}

#[test]
fn mutex_test_mutex_unsized() {
    setup();
    let mutex: &Mutex<[i32]> = &Mutex::new([1, 2, 3]);
    {
        let b = &mut *mutex.lock().unwrap();
        b[0] = 4;
        b[2] = 5;
    }
    let comp: &[i32] = &[4, 2, 5];
    assert_eq!(&*mutex.lock().unwrap(), comp);
}

#[test]
fn mutex_test_panics() {
    setup();
    let mutex = Mutex::new(42);

    let catch_unwind_result1 = panic::catch_unwind(AssertUnwindSafe(|| {
        let _guard1 = mutex.lock().unwrap();
        panic!("test panic with mutex once");
    }));
    assert!(catch_unwind_result1.is_err());

    let catch_unwind_result2 = panic::catch_unwind(AssertUnwindSafe(|| {
        let _guard2 = mutex.lock().unwrap();
        panic!("test panic with mutex twice");
    }));
    assert!(catch_unwind_result2.is_err());

    let catch_unwind_result3 = panic::catch_unwind(AssertUnwindSafe(|| {
        let _guard3 = mutex.lock().unwrap();
        panic!("test panic with mutex thrice");
    }));
    assert!(catch_unwind_result3.is_err());
}

#[test]
fn mutex_test_mutex_arc_access_in_unwind() {
    setup();
    let arc = Arc::new(Mutex::new(1));
    let arc2 = arc.clone();
    let _ = spawn(move || {
        struct Unwinder {
            i: Arc<Mutex<i32>>,
        }
        impl Drop for Unwinder {
            fn drop(&mut self) {
                *self.i.lock().unwrap() += 1;
            }
        }
        let _u = Unwinder { i: arc2 };
        panic!();
    })
    .join();
    let lock = arc.lock().unwrap();
    assert_eq!(*lock, 2);
}

/// Creates a mutex that is immediately poisoned.
pub(crate) fn new_poisoned_mutex<T>(value: T) -> Mutex<T> {
    let mutex = Mutex::new(value);

    let catch_unwind_result = panic::catch_unwind(AssertUnwindSafe(|| {
        let _guard = mutex.lock().unwrap();
        panic!("test panic to poison mutex");
    }));

    assert!(catch_unwind_result.is_err());
    assert!(mutex.is_poisoned());

    mutex
}

#[test]
fn mutex_test_into_inner_poison() {
    setup();
    let m = new_poisoned_mutex(NonCopy(10));

    match m.into_inner() {
        Err(e) => assert_eq!(e.into_inner(), NonCopy(10)),
        Ok(x) => panic!("into_inner of poisoned Mutex is Ok: {x:?}"),
    }
}

#[test]
fn mutex_test_get_mut_poison() {
    setup();
    let mut m = new_poisoned_mutex(NonCopy(10));

    match m.get_mut() {
        Err(e) => assert_eq!(*e.into_inner(), NonCopy(10)),
        Ok(x) => panic!("get_mut of poisoned Mutex is Ok: {x:?}"),
    }
}

#[test]
fn mutex_test_mutex_arc_poison() {
    setup();
    let arc = Arc::new(Mutex::new(1));
    assert!(!arc.is_poisoned());
    let arc2 = arc.clone();
    let _ = spawn(move || {
        let lock = arc2.lock().unwrap();
        assert_eq!(*lock, 2); // deliberate assertion failure to poison the mutex
    })
    .join();
    assert!(arc.lock().is_err());
    assert!(arc.is_poisoned());
}

/// From the older `library/std/src/sync/mutex/tests.rs`.
#[test]
fn mutex_test_arc_condvar_poison() {
    setup();
    struct Packet<T>(Arc<(Mutex<T>, Condvar)>);

    let packet = Packet(Arc::new((Mutex::new(1), Condvar::new())));
    let packet2 = Packet(packet.0.clone());
    let (tx, rx) = channel();

    let _t = spawn(move || {
        rx.recv().unwrap();
        let (lock, cvar) = &*packet2.0;
        let _g = lock.lock().unwrap();
        cvar.notify_one();
        // Parent should fail when it wakes up.
        panic!();
    });

    let (lock, cvar) = &*packet.0;
    let mut lock = lock.lock().unwrap();
    tx.send(()).unwrap();
    while *lock == 1 {
        match cvar.wait(lock) {
            Ok(l) => {
                lock = l;
                assert_eq!(*lock, 1);
            }
            Err(..) => break,
        }
    }
}
