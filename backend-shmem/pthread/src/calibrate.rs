//! Calibration of the interposer's actions (R1): each is timed through
//! the interposer's own exported function against the original pthread
//! call, on a scratch thread state, at load time. The part before a
//! wrapper's clock read (the lookup of the thread's state) is split off
//! as in the Rust wrappers (see `heisen_shmem`'s `actions` module).

use core::hint::black_box;
use core::ptr;

use heisen_core::Dependency;
use heisen_shmem::calibrate::{in_situ_cost, lock_pair, ns, overhead, per_call, split};
use heisen_shmem::runtime::{ActionId, Runtime};
use heisen_shmem::thread::calibrating;
use heisen_shmem::{Record, with_current};

use crate::{Actions, objects, real, threads};

/// Calibrates every action; the objects live on the heap for the length
/// of the calibration.
pub(crate) fn all(rt: &'static Runtime, a: &Actions) {
    let before = calibrating(rt, || {
        overhead(
            rt,
            || {
                black_box(with_current(|s| s.now()));
            },
            || {
                black_box(rt.now());
            },
        )
    });
    let release = |id: ActionId| {
        calibrating(rt, || {
            per_call(rt, || {
                black_box(with_current(|s| s.release_split(id)));
            })
        })
    };
    // The unlock keeps its record in the mutex's slot, lazily.
    let unlock = calibrating(rt, || {
        let slot = heisen_shmem::handoff::Slot::new();
        per_call(rt, || {
            // SAFETY: the slot is this loop's own; no other thread sees it.
            unsafe { slot.release_into(a.mutex_unlock) };
        })
    });
    let mut m = Box::new(libc::PTHREAD_MUTEX_INITIALIZER);
    let m: *mut libc::pthread_mutex_t = &mut *m;
    // SAFETY (all calls below): `m`, `l`, `c`, `b`, `s` are valid,
    // initialised objects owned here; each lock is released before the
    // next, as the calls' contracts require.
    // R1 as docs/rules.md refines it: the pair is costed in situ, between
    // pieces of generic work, against libc's own pair there (what a C
    // program's lock/unlock pairs between its work cost it: on the Intel
    // VM 73 ns against 51 back to back, and the C fidelity example −11 %
    // on average over fourteen rounds against +31 % back to back). As for
    // a region pair, the in-situ surplus is charged before the lock's
    // clock read (`lock_pair`).
    let what = "pthread_mutex_lock+unlock";
    let (back_to_back, pair) = calibrating(rt, || unsafe {
        let interposed = || {
            objects::pthread_mutex_lock(m);
            objects::pthread_mutex_unlock(m);
        };
        let plain = || {
            real::pthread_mutex_lock(m);
            real::pthread_mutex_unlock(m);
        };
        let back_to_back = overhead(rt, interposed, plain);
        (
            back_to_back,
            in_situ_cost(rt, what, back_to_back, interposed, plain),
        )
    });
    let (lock_cost, unlock_cost) = lock_pair(rt, what, back_to_back, pair, unlock, before);
    rt.set_cost(a.mutex_unlock, unlock_cost);
    rt.set_cost(a.mutex_lock, lock_cost);
    // R5: libc's own acquire, half of its lock+unlock pair, is work inside
    // the acquire's begin and end reads, not a wait (`ThreadState::end`).
    // SAFETY: as above.
    let libc_pair = per_call(rt, || unsafe {
        real::pthread_mutex_lock(m);
        real::pthread_mutex_unlock(m);
    });
    rt.set_own_time(a.mutex_lock, ns(libc_pair / 2.0));
    let mut l = Box::new(libc::PTHREAD_RWLOCK_INITIALIZER);
    let l: *mut libc::pthread_rwlock_t = &mut *l;
    let rw_unlock = release(a.rwlock_unlock);
    let (read, write) = calibrating(rt, || unsafe {
        let read = overhead(
            rt,
            || {
                objects::pthread_rwlock_rdlock(l);
                objects::pthread_rwlock_unlock(l);
            },
            || {
                real::pthread_rwlock_rdlock(l);
                real::pthread_rwlock_unlock(l);
            },
        );
        let write = overhead(
            rt,
            || {
                objects::pthread_rwlock_wrlock(l);
                objects::pthread_rwlock_unlock(l);
            },
            || {
                real::pthread_rwlock_wrlock(l);
                real::pthread_rwlock_unlock(l);
            },
        );
        (read, write)
    });
    rt.set_cost(a.rwlock_unlock, split(rw_unlock, before));
    rt.set_cost(a.rwlock_rdlock, split(read - rw_unlock, before));
    rt.set_cost(a.rwlock_wrlock, split(write - rw_unlock, before));
    waits(rt, a, before, unlock, m);
}

/// Condition variables, barriers, semaphores and threads.
fn waits(
    rt: &'static Runtime,
    a: &Actions,
    before: f64,
    unlock: f64,
    m: *mut libc::pthread_mutex_t,
) {
    let mut c = Box::new(libc::PTHREAD_COND_INITIALIZER);
    let c: *mut libc::pthread_cond_t = &mut *c;
    // SAFETY: as in `all`.
    let signal = calibrating(rt, || unsafe {
        overhead(
            rt,
            || {
                objects::pthread_cond_signal(c);
            },
            || {
                real::pthread_cond_signal(c);
            },
        )
    });
    // A wait's own work, without the blocking (which costs a syscall and
    // would make every preloaded program start slowly): its release of the
    // mutex and its begin, then the merge of a notification and the mutex.
    let wait = match crate::STATE.get() {
        Some(st) => calibrating(rt, || {
            // SAFETY: as in `all`; the mutex is held across the loop.
            unsafe { objects::pthread_mutex_lock(m) };
            let per = per_call(rt, || {
                if let Some(w) = objects::before_wait(st, c, m) {
                    objects::after_wait(st, w, 0);
                }
            });
            // SAFETY: as above.
            unsafe { objects::pthread_mutex_unlock(m) };
            per
        }),
        None => 0.0,
    };
    rt.set_cost(a.cond_signal, split(signal, before));
    // The wait's release of the mutex is charged as an unlock.
    rt.set_cost(a.cond_wait, split(wait - unlock, before));
    barriers_semaphores_threads(rt, a, before);
}

/// Barriers, semaphores and threads.
fn barriers_semaphores_threads(rt: &'static Runtime, a: &Actions, before: f64) {
    let mut b = Box::new(unsafe { core::mem::zeroed::<libc::pthread_barrier_t>() });
    let b: *mut libc::pthread_barrier_t = &mut *b;
    let mut s = Box::new(unsafe { core::mem::zeroed::<libc::sem_t>() });
    let s: *mut libc::sem_t = &mut *s;
    // SAFETY: as in `all`; the barrier (one participant) and the
    // semaphore are initialised first, on a scratch state as every
    // calibration call is: the constructor's own thread has none yet, and
    // its wrapped calls go unmeasured until it has (`crate::CONSTRUCTING`),
    // which would leave the barrier's count unset.
    calibrating(rt, || unsafe {
        threads::pthread_barrier_init(b, ptr::null(), 1);
        threads::sem_init(s, 0, 0);
    });
    // A barrier's own work, arrival and exit, without the original wait
    // (which both versions pay; with one participant it is a wake-up
    // system call every time).
    let barrier = match crate::STATE.get() {
        Some(st) => calibrating(rt, || {
            per_call(rt, || {
                if let Some(arrival) = threads::arrive(st, b) {
                    threads::leave(st, arrival);
                }
            })
        }),
        None => 0.0,
    };
    // SAFETY: as in `all`.
    let sem = calibrating(rt, || unsafe {
        overhead(
            rt,
            || {
                threads::sem_post(s);
                threads::sem_wait(s);
            },
            || {
                real::sem_post(s);
                real::sem_wait(s);
            },
        )
    });
    rt.set_cost(a.barrier_wait, split(barrier, before));
    let post = calibrating(rt, || {
        per_call(rt, || {
            black_box(with_current(|x| x.release_split(a.sem_post)));
        })
    });
    rt.set_cost(a.sem_post, split(post, before));
    rt.set_cost(a.sem_wait, split(sem - post, before));
    // Threads: the create's release and the join's merge, without the
    // thread's creation (which both versions pay).
    let create = calibrating(rt, || {
        per_call(rt, || {
            black_box(with_current(|x| x.release_split(a.create)));
        })
    });
    let join = calibrating(rt, || {
        let end = with_current(|x| x.peek()).unwrap_or(Record::EMPTY);
        per_call(rt, || {
            if let Some(begin) = with_current(|x| x.begin(a.join)) {
                with_current(|x| black_box(x.end(begin, &[Dependency::immediate(&end)], a.join)));
            }
        })
    });
    rt.set_cost(a.create, split(create, before));
    rt.set_cost(a.join, split(join, before));
}
