//! What std documents and its tests leave out.

use super::*;

/// Whether `$t` implements `$trait`, decided at compile time for a
/// concrete type (an inherent constant, found only when the bound holds,
/// shadows the trait's `false`).
macro_rules! implements {
    ($t:ty: $($bound:tt)+) => {{
        struct Probe<T: ?Sized>(core::marker::PhantomData<T>);
        #[allow(dead_code)] // reason: found only when the bound fails
        trait No {
            const YES: bool = false;
        }
        impl<T: ?Sized> No for T {}
        #[allow(dead_code)] // reason: the constant is the probe
        impl<T: ?Sized + $($bound)+> Probe<T> {
            const YES: bool = true;
        }
        <Probe<$t>>::YES
    }};
}

/// `Send`, `Sync`, `UnwindSafe`, `RefUnwindSafe`, `Unpin` of a type.
macro_rules! auto_traits {
    ($t:ty) => {
        [
            implements!($t: Send),
            implements!($t: Sync),
            implements!($t: panic::UnwindSafe),
            implements!($t: panic::RefUnwindSafe),
            implements!($t: Unpin),
        ]
    };
}

/// A type that is `Sync` but not `Send` (as std's own guards are).
struct SyncNotSend(core::marker::PhantomData<std::sync::MutexGuard<'static, ()>>);

#[test]
fn auto_traits_are_std_s() {
    use core::cell::{Cell, RefCell};
    use std::rc::Rc;
    use std::sync as s;
    // The probe itself tells both answers.
    assert!(implements!(i32: Send) && !implements!(Rc<i32>: Send));
    assert!(implements!(SyncNotSend: Sync) && !implements!(SyncNotSend: Send));
    macro_rules! same {
        ($($heisen:ty, $std:ty;)*) => {$(
            assert_eq!(
                auto_traits!($heisen),
                auto_traits!($std),
                "[Send, Sync, UnwindSafe, RefUnwindSafe, Unpin] of {}",
                stringify!($heisen)
            );
        )*};
    }
    same! {
        Mutex<i32>, s::Mutex<i32>;
        Mutex<Cell<i32>>, s::Mutex<Cell<i32>>;
        Mutex<Rc<i32>>, s::Mutex<Rc<i32>>;
        Mutex<SyncNotSend>, s::Mutex<SyncNotSend>;
        Mutex<RefCell<i32>>, s::Mutex<RefCell<i32>>;
        Mutex<[u8]>, s::Mutex<[u8]>;
        heisen_shmem::MutexGuard<'static, i32>, s::MutexGuard<'static, i32>;
        heisen_shmem::MutexGuard<'static, Cell<i32>>, s::MutexGuard<'static, Cell<i32>>;
        heisen_shmem::MutexGuard<'static, SyncNotSend>, s::MutexGuard<'static, SyncNotSend>;
        heisen_shmem::MutexGuard<'static, RefCell<i32>>, s::MutexGuard<'static, RefCell<i32>>;
        RwLock<i32>, s::RwLock<i32>;
        RwLock<Cell<i32>>, s::RwLock<Cell<i32>>;
        RwLock<SyncNotSend>, s::RwLock<SyncNotSend>;
        RwLock<RefCell<i32>>, s::RwLock<RefCell<i32>>;
        RwLockReadGuard<'static, i32>, s::RwLockReadGuard<'static, i32>;
        RwLockReadGuard<'static, Cell<i32>>, s::RwLockReadGuard<'static, Cell<i32>>;
        RwLockReadGuard<'static, SyncNotSend>, s::RwLockReadGuard<'static, SyncNotSend>;
        RwLockReadGuard<'static, RefCell<i32>>, s::RwLockReadGuard<'static, RefCell<i32>>;
        RwLockWriteGuard<'static, i32>, s::RwLockWriteGuard<'static, i32>;
        RwLockWriteGuard<'static, Cell<i32>>, s::RwLockWriteGuard<'static, Cell<i32>>;
        RwLockWriteGuard<'static, SyncNotSend>, s::RwLockWriteGuard<'static, SyncNotSend>;
        RwLockWriteGuard<'static, RefCell<i32>>, s::RwLockWriteGuard<'static, RefCell<i32>>;
        Condvar, s::Condvar;
        Barrier, s::Barrier;
        heisen_shmem::BarrierWaitResult, s::BarrierWaitResult;
        heisen_shmem::WaitTimeoutResult, s::WaitTimeoutResult;
        Builder, thread::Builder;
        heisen_shmem::JoinHandle<i32>, thread::JoinHandle<i32>;
        heisen_shmem::JoinHandle<Rc<i32>>, thread::JoinHandle<Rc<i32>>;
        Scope<'static, 'static>, thread::Scope<'static, 'static>;
        heisen_shmem::ScopedJoinHandle<'static, i32>, thread::ScopedJoinHandle<'static, i32>;
        heisen_shmem::ScopedJoinHandle<'static, Rc<i32>>, thread::ScopedJoinHandle<'static, Rc<i32>>;
    }
}

#[test]
fn a_closure_over_a_lock_is_unwind_safe_as_with_std() {
    setup();
    // std's locks are `RefUnwindSafe` (poisoning reports a broken
    // invariant), so `catch_unwind` takes such a closure without
    // `AssertUnwindSafe`.
    let m = Mutex::new(1);
    let r = RwLock::new(1);
    let caught = panic::catch_unwind(|| {
        let _g = m.lock().unwrap();
        let _w = r.write().unwrap();
        panic!("poison both");
    });
    assert!(caught.is_err());
    assert!(m.is_poisoned() && r.is_poisoned());
}

#[test]
fn debug_display_default_and_from_are_std_s() {
    setup();
    use std::sync as s;
    assert_eq!(
        format!("{:?}", Mutex::new(5)),
        format!("{:?}", s::Mutex::new(5))
    );
    let (h, st) = (Mutex::new(vec![1]), s::Mutex::new(vec![1]));
    {
        let (hg, sg) = (h.lock().unwrap(), st.lock().unwrap());
        assert_eq!(format!("{h:?}"), format!("{st:?}"), "while locked");
        assert_eq!(format!("{hg:?}"), format!("{sg:?}"));
    }
    let (h, st) = (new_poisoned_mutex(7), s::Mutex::new(7));
    let _ = panic::catch_unwind(|| {
        let _g = st.lock();
        panic!("poison std's");
    });
    assert_eq!(format!("{h:?}"), format!("{st:?}"), "poisoned");
    assert_eq!(
        format!("{}", h.lock().unwrap_err().into_inner()),
        format!("{}", st.lock().unwrap_err().into_inner()),
    );

    let (h, st) = (RwLock::new("x"), s::RwLock::new("x"));
    assert_eq!(format!("{h:?}"), format!("{st:?}"));
    {
        let (hr, sr) = (h.read().unwrap(), st.read().unwrap());
        assert_eq!(format!("{h:?}"), format!("{st:?}"), "while read");
        assert_eq!(format!("{hr:?} {hr}"), format!("{sr:?} {sr}"));
    }
    {
        let (hw, sw) = (h.write().unwrap(), st.write().unwrap());
        assert_eq!(format!("{h:?}"), format!("{st:?}"), "while written");
        assert_eq!(format!("{hw:?} {hw}"), format!("{sw:?} {sw}"));
    }

    assert_eq!(
        format!("{:?}", Condvar::new()),
        format!("{:?}", s::Condvar::new())
    );
    assert_eq!(
        format!("{:?}", Barrier::new(1)),
        format!("{:?}", s::Barrier::new(1))
    );
    assert_eq!(
        format!("{:?}", Barrier::new(1).wait()),
        format!("{:?}", s::Barrier::new(1).wait())
    );
    let (hm, sm) = (Mutex::new(()), s::Mutex::new(()));
    let hw = Condvar::new()
        .wait_timeout(hm.lock().unwrap(), Duration::ZERO)
        .unwrap()
        .1;
    let sw = s::Condvar::new()
        .wait_timeout(sm.lock().unwrap(), Duration::ZERO)
        .unwrap()
        .1;
    assert_eq!(format!("{hw:?}"), format!("{sw:?}"));
    assert_eq!(
        format!("{:?}", Builder::new().name("b".into()).stack_size(1 << 20)),
        format!(
            "{:?}",
            thread::Builder::new().name("b".into()).stack_size(1 << 20)
        )
    );
    scope(|hs| {
        thread::scope(|ss| assert_eq!(format!("{hs:?}"), format!("{ss:?}")));
    });
    let (hj, sj) = (spawn(|| 1), thread::spawn(|| 1));
    assert_eq!(format!("{hj:?}"), format!("{sj:?}"));
    assert_eq!(hj.join().unwrap(), sj.join().unwrap());

    assert_eq!(*Mutex::<i32>::default().lock().unwrap(), 0);
    assert_eq!(*Mutex::from(3).lock().unwrap(), 3);
    assert_eq!(*RwLock::<String>::default().read().unwrap(), "");
    assert_eq!(*RwLock::from(4).read().unwrap(), 4);
    let _ = Condvar::default();
    let _ = Builder::default();
}

#[test]
fn poison_is_cleared_and_try_lock_tells_would_block_from_poisoned() {
    setup();
    let m = Arc::new(new_poisoned_mutex(1));
    assert!(matches!(m.try_lock(), Err(TryLockError::Poisoned(_))));
    {
        // PoisonError::into_inner gives the guard, and the lock is held.
        let g = m.lock().unwrap_err().into_inner();
        assert_eq!(*g, 1);
        let other = m.clone();
        let held = spawn(move || matches!(other.try_lock(), Err(TryLockError::WouldBlock)));
        assert!(held.join().unwrap(), "WouldBlock wins over Poisoned");
    }
    m.clear_poison();
    assert!(!m.is_poisoned());
    assert_eq!(*m.try_lock().unwrap(), 1);

    let r = Arc::new(new_poisoned_rwlock(2));
    assert!(matches!(r.try_read(), Err(TryLockError::Poisoned(_))));
    assert!(matches!(r.try_write(), Err(TryLockError::Poisoned(_))));
    {
        let _w = r.write().unwrap_err().into_inner();
        let other = r.clone();
        let held = spawn(move || {
            matches!(other.try_read(), Err(TryLockError::WouldBlock))
                && matches!(other.try_write(), Err(TryLockError::WouldBlock))
        });
        assert!(held.join().unwrap());
    }
    r.clear_poison();
    assert!(!r.is_poisoned());
    assert_eq!(*r.try_read().unwrap(), 2);
    // A reader that panics does not poison.
    let _ = panic::catch_unwind(|| {
        let _g = r.read().unwrap();
        panic!("a reader");
    });
    assert!(!r.is_poisoned());

    // A condition variable's wait returns the poison of its mutex, with
    // the guard, as std's.
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let other = pair.clone();
    let g = pair.0.lock().unwrap();
    let t = spawn(move || {
        let _g = other.0.lock().unwrap();
        other.1.notify_all();
        panic!("poison while the waiter sleeps");
    });
    let waited = pair.1.wait_while(g, |done| !*done);
    let g = waited.unwrap_err().into_inner();
    assert!(!*g);
    drop(g);
    assert!(t.join().is_err());
}

trait Shape: Send {
    fn area(&self) -> u32;
    fn grow(&mut self);
}

struct Square(u32);

impl Shape for Square {
    fn area(&self) -> u32 {
        self.0 * self.0
    }
    fn grow(&mut self) {
        self.0 += 1;
    }
}

#[test]
fn unsized_locks_hold_trait_objects_as_std_s() {
    setup();
    let m: Arc<Mutex<dyn Shape>> = Arc::new(Mutex::new(Square(2)));
    let other = m.clone();
    spawn(move || other.lock().unwrap().grow()).join().unwrap();
    assert_eq!(m.lock().unwrap().area(), 9);
    let r: Box<RwLock<dyn Shape + Sync>> = Box::new(RwLock::new(Square(3)));
    r.write().unwrap().grow();
    assert_eq!(r.read().unwrap().area(), 16);
    let d: &Mutex<dyn Debug> = &Mutex::new(5);
    assert_eq!(format!("{:?}", d.lock().unwrap()), "5");
}

#[test]
fn a_barrier_has_one_leader_per_episode_and_is_reused() {
    setup();
    const N: usize = 4;
    const EPISODES: usize = 200;
    let barrier = Arc::new(Barrier::new(N));
    let leaders: Arc<Vec<AtomicUsize>> =
        Arc::new((0..EPISODES).map(|_| AtomicUsize::new(0)).collect());
    let threads: Vec<_> = (0..N)
        .map(|t| {
            let (barrier, leaders) = (barrier.clone(), leaders.clone());
            let body = move || {
                for leader in leaders.iter().take(EPISODES) {
                    if barrier.wait().is_leader() {
                        leader.fetch_add(1, Ordering::Relaxed);
                    }
                }
            };
            // Half of them started by std, not by heisen.
            if t % 2 == 0 {
                Ok(spawn(body))
            } else {
                Err(thread::spawn(body))
            }
        })
        .collect();
    for t in threads {
        match t {
            Ok(h) => h.join().unwrap(),
            Err(h) => h.join().unwrap(),
        }
    }
    for (e, l) in leaders.iter().enumerate() {
        assert_eq!(l.load(Ordering::Relaxed), 1, "episode {e}");
    }
    for n in [0, 1] {
        let b = Barrier::new(n);
        assert!(
            b.wait().is_leader() && b.wait().is_leader(),
            "Barrier::new({n})"
        );
    }
}

#[test]
fn scope_propagates_the_panic_of_a_thread_not_joined() {
    setup();
    let payload = |r: thread::Result<()>| {
        let e = r.expect_err("the scope panics");
        e.downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| e.downcast_ref::<String>().cloned())
    };
    let heisen = panic::catch_unwind(|| {
        scope(|s| {
            s.spawn(|| panic!("a child"));
        });
    });
    let std_s = panic::catch_unwind(|| {
        thread::scope(|s| {
            s.spawn(|| panic!("a child"));
        });
    });
    assert_eq!(payload(heisen), payload(std_s));
    // A panic the scope's body saw through `join` is not propagated.
    let total = scope(|s| {
        let h = s.spawn(|| panic!("joined"));
        assert!(h.join().is_err());
        let named = Builder::new()
            .name("scoped".into())
            .stack_size(1 << 20)
            .spawn_scoped(s, || thread::current().name().map(str::to_owned))
            .unwrap();
        assert_eq!(named.thread().name(), Some("scoped"));
        named.join().unwrap()
    });
    assert_eq!(total.as_deref(), Some("scoped"));
}

#[test]
fn statics_are_allowed_as_with_std() {
    setup();
    static M: Mutex<Vec<u8>> = Mutex::new(Vec::new());
    static R: RwLock<u8> = RwLock::new(0);
    static C: Condvar = Condvar::new();
    static B: Barrier = Barrier::new(1);
    M.lock().unwrap().push(1);
    *R.write().unwrap() += 1;
    C.notify_all();
    assert!(B.wait().is_leader());
    assert_eq!((M.lock().unwrap().len(), *R.read().unwrap()), (1, 1));
}

#[test]
fn the_wrappers_work_in_a_thread_local_destructor() {
    setup();
    // A thread's own thread-locals may be gone when another one's
    // destructor runs; std's locks still work there, so heisen's must.
    struct Late(Arc<(Mutex<u32>, RwLock<u32>, Condvar, Barrier)>);
    impl Drop for Late {
        fn drop(&mut self) {
            let (m, r, c, b) = &*self.0;
            *m.lock().unwrap() += 1;
            *r.write().unwrap() += 1;
            c.notify_all();
            assert!(b.wait().is_leader());
        }
    }
    thread_local! {
        static LATE: core::cell::RefCell<Option<Late>> = const { core::cell::RefCell::new(None) };
    }
    let shared = Arc::new((
        Mutex::new(0),
        RwLock::new(0),
        Condvar::new(),
        Barrier::new(1),
    ));
    for heisen in [true, false] {
        let mine = shared.clone();
        let body = move || {
            *mine.0.lock().unwrap() += 1; // the runtime knows this thread
            LATE.with(|l| *l.borrow_mut() = Some(Late(mine)));
        };
        if heisen {
            spawn(body).join().unwrap();
        } else {
            thread::spawn(body).join().unwrap();
        }
    }
    assert_eq!(*shared.0.lock().unwrap(), 4);
    assert_eq!(*shared.1.read().unwrap(), 2);
}

#[cfg(unix)] // JoinHandleExt
#[test]
fn spawn_unchecked_and_the_pthread_are_std_s() {
    setup();
    use std::os::unix::thread::JoinHandleExt;
    let mut borrowed = vec![1, 2, 3];
    let data = &mut borrowed;
    // SAFETY: the thread is joined before `borrowed` goes.
    #[allow(unsafe_code)] // reason: std's unsafe API under test
    let h = unsafe {
        Builder::new()
            .name("unchecked".into())
            .spawn_unchecked(|| {
                data.push(4);
                thread::current().name().map(str::to_owned)
            })
            .unwrap()
    };
    assert_ne!(h.as_pthread_t(), 0);
    assert_eq!(h.join().unwrap().as_deref(), Some("unchecked"));
    assert_eq!(borrowed, [1, 2, 3, 4]);
    let detached = spawn(|| 5);
    let pthread = detached.into_pthread_t();
    // SAFETY: `pthread` is a joinable thread nobody else joins.
    #[allow(unsafe_code)] // reason: joining the pthread std handed over
    let joined = unsafe { libc::pthread_join(pthread, core::ptr::null_mut()) };
    assert_eq!(joined, 0);
}

#[test]
fn a_spawn_the_system_refuses_is_std_s_error() {
    setup();
    let huge = 1usize << 62;
    let kind = |r: std::io::Result<()>| r.map_err(|e| e.kind());
    let std_s = kind(
        thread::Builder::new()
            .stack_size(huge)
            .spawn(|| ())
            .map(drop),
    );
    assert!(std_s.is_err(), "the system refuses a {huge}-byte stack");
    assert_eq!(
        kind(Builder::new().stack_size(huge).spawn(|| ()).map(drop)),
        std_s
    );
    let in_scope = scope(|s| {
        let refused = kind(
            Builder::new()
                .stack_size(huge)
                .spawn_scoped(s, || ())
                .map(drop),
        );
        s.spawn(|| 2).join().unwrap();
        refused
    });
    assert_eq!(in_scope, std_s);
    assert_eq!(
        spawn(|| 3).join().unwrap(),
        3,
        "spawning works after a refusal"
    );
}
