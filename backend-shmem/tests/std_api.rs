//! heisen's wrappers are drop-in replacements for std's (issue: "drop-in
//! wrappers with the std API"): one program, written against
//! `std::sync` and `std::thread`, is compiled twice — once with std's
//! types, once with heisen's — and must give the same results. Every
//! outcome it checks is fixed by the program's own synchronisation, not by
//! scheduling, so the comparison is deterministic.
#![cfg(not(loom))] // loom's primitives have no `const` constructors, no timed waits

use core::time::Duration;

/// The program, generic over where `Mutex`, `RwLock`, `Condvar`,
/// `Barrier` and the thread functions come from. Returns a transcript of
/// what it observed.
macro_rules! program {
    ($name:ident, $sync:path, $thread:path) => {
        fn $name() -> Vec<String> {
            use std::sync::Arc;
            use $sync as sync;
            use $thread as thread;

            // `const` constructors: statics as std allows them.
            static COUNTER: sync::Mutex<u64> = sync::Mutex::new(0);
            static TABLE: sync::RwLock<Vec<u32>> = sync::RwLock::new(Vec::new());
            static READY: sync::Condvar = sync::Condvar::new();
            static START: sync::Barrier = sync::Barrier::new(1);

            let mut log = Vec::new();
            START.wait();
            *COUNTER.lock().unwrap() = 0;
            TABLE.write().unwrap().clear();

            // Mutex: lock, try_lock while held, Display of the guard,
            // get_mut, into_inner, From, Default.
            {
                let guard = COUNTER.lock().unwrap();
                log.push(format!("guard shows {guard}"));
                log.push(format!(
                    "try_lock while held would block: {}",
                    matches!(COUNTER.try_lock(), Err(std::sync::TryLockError::WouldBlock))
                ));
            }
            let mut owned = sync::Mutex::from(5u32);
            *owned.get_mut().unwrap() += 1;
            log.push(format!("into_inner {}", owned.into_inner().unwrap()));
            log.push(format!(
                "default {}",
                *sync::Mutex::<u8>::default().lock().unwrap()
            ));

            // Poisoning: a thread panics holding the lock; the next lock
            // sees it, clear_poison clears it.
            let shared = Arc::new(sync::Mutex::new(1u32));
            let s2 = Arc::clone(&shared);
            let panicked = thread::spawn(move || {
                let _g = s2.lock().unwrap();
                panic!("poison the lock (expected in this test)");
            })
            .join()
            .is_err();
            log.push(format!("join of a panicking thread is Err: {panicked}"));
            log.push(format!("poisoned: {}", shared.is_poisoned()));
            let value = match shared.lock() {
                Ok(g) => *g,
                Err(p) => *p.into_inner(),
            };
            log.push(format!("value behind the poison {value}"));
            shared.clear_poison();
            log.push(format!(
                "poisoned after clear_poison: {}",
                shared.is_poisoned()
            ));

            // RwLock: many readers, then a writer; try_* while held.
            TABLE.write().unwrap().extend([1, 2, 3]);
            {
                let r1 = TABLE.read().unwrap();
                let r2 = TABLE.try_read().unwrap();
                log.push(format!("two readers see {} and {}", r1.len(), r2.len()));
                log.push(format!(
                    "try_write under readers would block: {}",
                    matches!(TABLE.try_write(), Err(std::sync::TryLockError::WouldBlock))
                ));
            }
            let mut rw = sync::RwLock::from(vec![7u8]);
            rw.get_mut().unwrap().push(8);
            rw.clear_poison();
            log.push(format!("rwlock into_inner {:?}", rw.into_inner().unwrap()));

            // Condvar: wait_while with a notifier, a timed wait that times
            // out, wait_timeout_while that times out on its condition.
            let notifier = thread::spawn(|| {
                *COUNTER.lock().unwrap() = 10;
                READY.notify_all();
            });
            let g = READY
                .wait_while(COUNTER.lock().unwrap(), |c| *c < 10)
                .unwrap();
            log.push(format!("woken at {}", *g));
            let (g, timeout) = READY.wait_timeout(g, Duration::from_millis(1)).unwrap();
            log.push(format!("plain wait timed out: {}", timeout.timed_out()));
            let (g, timeout) = READY
                .wait_timeout_while(g, Duration::from_millis(1), |c| *c < 100)
                .unwrap();
            log.push(format!(
                "wait_timeout_while timed out: {} at {}",
                timeout.timed_out(),
                *g
            ));
            drop(g);
            notifier.join().unwrap();

            // Barrier: exactly one leader per episode.
            let barrier = Arc::new(sync::Barrier::new(3));
            let leaders: usize = (0..3)
                .map(|_| {
                    let b = Arc::clone(&barrier);
                    thread::spawn(move || (0..4).filter(|_| b.wait().is_leader()).count())
                })
                .collect::<Vec<_>>()
                .into_iter()
                .map(|h| h.join().unwrap())
                .sum();
            log.push(format!("leaders over 4 episodes: {leaders}"));

            // Builder: name and stack size; the handle names the thread.
            let named = thread::Builder::new()
                .name("worker-7".into())
                .stack_size(4 << 20)
                .spawn(|| std::thread::current().name().map(str::to_owned))
                .unwrap();
            log.push(format!("handle names {:?}", named.thread().name()));
            log.push(format!("thread saw {:?}", named.join().unwrap()));

            // scope: borrow locals, spawn from inside a scoped thread,
            // Builder::spawn_scoped, implicit joins at the end.
            let mut totals = [0u64; 3];
            let data = [1u64, 2, 3, 4, 5, 6];
            thread::scope(|s| {
                let (a, rest) = totals.split_at_mut(1);
                let (b, c) = rest.split_at_mut(1);
                s.spawn(|| a[0] = data[..2].iter().sum());
                let outer = s.spawn(|| {
                    // a scoped thread spawns into the same scope
                    s.spawn(|| c[0] = data[4..].iter().sum());
                    b[0] = data[2..4].iter().sum();
                });
                let named = thread::Builder::new()
                    .name("scoped".into())
                    .spawn_scoped(s, || std::thread::current().name().map(str::to_owned))
                    .unwrap();
                log.push(format!("scoped handle names {:?}", named.thread().name()));
                log.push(format!("scoped thread saw {:?}", named.join().unwrap()));
                outer.join().unwrap();
            });
            log.push(format!("scope totals {totals:?}"));
            log
        }
    };
}

program!(with_std, std::sync, std::thread);
program!(with_heisen, heisen_shmem, heisen_shmem);

#[test]
fn the_same_program_gives_the_same_results_with_std_and_with_heisen() {
    let _ = heisen_shmem::runtime::init_with(heisen_shmem::Config {
        output: env!("CARGO_TARGET_TMPDIR").into(),
        ..heisen_shmem::Config::from_env()
    });
    let std_log = with_std();
    let heisen_log = with_heisen();
    assert_eq!(std_log.len(), 20, "the program's transcript: {std_log:#?}");
    assert_eq!(heisen_log, std_log);
}
