//! Mutexes, reader-writer locks and condition variables (R8; 003 §4,
//! Fig. 10a): the exports and the per-object state they keep.
//!
//! Only the outermost acquire and release of a recursive mutex is a
//! hand-off; the owner and depth are tracked here, so error-checking and
//! recursive mutexes behave as the original says (its return value is
//! what the caller gets). A failed `trylock`/`timedlock`/`clocklock`
//! merges nothing.

use core::convert::identity;
use core::ffi::c_int;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use heisen_core::Dependency;
use heisen_shmem::condvar::Notices;
use heisen_shmem::handoff::{Readers, Slot};
use heisen_shmem::mutex::taken_at_once;
use heisen_shmem::{Record, with_current};
use libc::{clockid_t, pthread_cond_t, pthread_mutex_t, pthread_rwlock_t, timespec};

use crate::{State, destroyed, hook, me, real};

/// A mutex's owner, recursion depth and last release.
#[derive(Debug, Default)]
pub struct MutexState {
    owner: AtomicUsize,
    depth: AtomicU32,
    slot: Slot,
}

impl MutexState {
    fn reset(&self) {
        self.owner.store(0, Ordering::Relaxed);
        self.depth.store(0, Ordering::Relaxed);
        // SAFETY: at init and destroy no thread holds the mutex (POSIX).
        unsafe { self.slot.write(Record::EMPTY) };
    }
}

/// A reader-writer lock's writer, its release and the readers' since.
#[derive(Debug, Default)]
pub struct RwState {
    writer: AtomicUsize,
    slot: Slot,
    readers: Readers,
}

impl RwState {
    fn reset(&self) {
        self.writer.store(0, Ordering::Relaxed);
        let _ = self.readers.take();
        // SAFETY: nobody holds a lock being initialised or destroyed (POSIX).
        unsafe { self.slot.write(Record::EMPTY) };
    }
}

/// A condition variable's notifications.
#[derive(Debug, Default)]
pub struct CondState {
    notices: Notices,
}

/// What an acquire did before the original call.
#[derive(Clone, Copy)]
pub(crate) struct Acquiring {
    entry: &'static MutexState,
    begin: Option<u64>,
    me: usize,
}

/// Before a blocking acquire: the entry and the begin (R1: the work
/// before the begin read falls before the wait).
pub(crate) fn before_lock(st: &'static State, m: *mut pthread_mutex_t) -> Option<Acquiring> {
    let entry = st.mutexes.get(m as usize)?;
    let me = me();
    let begin = if entry.owner.load(Ordering::Relaxed) == me {
        None // a recursive re-lock (or an error-checking mutex's EDEADLK)
    } else {
        with_current(|s| s.begin(st.actions.mutex_lock))
    };
    Some(Acquiring { entry, begin, me })
}

/// A lock-like object at `key` just taken without a wait by a try that
/// succeeded (an `omp_test_lock`): the previous release merged as a
/// successful `trylock`'s is (R8).
pub(crate) fn taken_by_try(st: &'static State, key: usize) {
    if let Some(entry) = st.mutexes.get(key) {
        let a = Acquiring {
            entry,
            begin: None,
            me: me(),
        };
        after_lock(st, a, 0, false);
    }
}

/// A mutex-like object made at `key` (`pthread_mutex_init`, an OpenMP
/// lock): a fresh entry, no release to merge from an object that was there
/// before.
pub(crate) fn mutex_made(key: usize) {
    hook(|st| st.mutexes.get(key).map(MutexState::reset));
}

/// A mutex-like object at `key` whose destroy returned `rc`: on success
/// its entry is reset and freed for the next object (R12: the table never
/// fills with destroyed objects); `rc` is returned.
pub(crate) fn mutex_destroyed(rc: c_int, key: usize) -> c_int {
    destroyed(rc, key, |st| &st.mutexes, MutexState::reset)
}

/// After an acquire that returned `rc`: the hand-off merge (R8).
pub(crate) fn after_lock(st: &'static State, a: Acquiring, rc: c_int, waited: bool) {
    if rc != 0 && rc != libc::EOWNERDEAD {
        return; // busy, timed out or refused: no hand-off, nothing merged
    }
    let e = a.entry;
    if e.owner.load(Ordering::Relaxed) == a.me {
        e.depth.fetch_add(1, Ordering::Relaxed); // recursive: not a hand-off
        return;
    }
    e.owner.store(a.me, Ordering::Relaxed);
    e.depth.store(1, Ordering::Relaxed);
    let lock = st.actions.mutex_lock;
    // SAFETY: the mutex is held by this thread.
    unsafe {
        e.slot.with_pending(|previous| {
            if !waited {
                // A successful trylock: the path of a lock found free
                // (`lock_at_once`), charged as the lock (no calibration
                // of its own).
                with_current(|s| taken_at_once(s, previous, lock, lock));
            } else if let Some(begin) = a.begin {
                let previous = previous.piggyback();
                with_current(|s| s.end(begin, &[Dependency::immediate(&previous)], lock));
            }
        });
    }
}

/// An acquire that finds the mutex free: the original `trylock` takes it
/// at once and the hand-off is merged without a wait (R8; R5 with
/// `w = 0`): the thread's own release taken back with no clock read, any
/// other at one (`heisen_shmem::mutex::taken_at_once`). `None` when the
/// mutex is busy (or the thread holds it, or the original refused): the
/// caller then takes the blocking path, which times the wait. `trylock`
/// never blocks and is no cancellation point, so nothing unwinds here.
pub(crate) fn lock_at_once(st: &'static State, m: *mut pthread_mutex_t) -> Option<c_int> {
    let e = st.mutexes.get(m as usize)?;
    let me = me();
    if e.owner.load(Ordering::Relaxed) == me {
        return None; // a recursive re-lock (or EDEADLK): the original's way
    }
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::pthread_mutex_trylock(m) };
    if rc == libc::ENOTRECOVERABLE {
        // What the lock gives a robust mutex left inconsistent (POSIX);
        // glibc's lock after a trylock that said so waits forever, so
        // the answer is the trylock's, and nothing was acquired.
        return Some(rc);
    }
    if rc != 0 && rc != libc::EOWNERDEAD {
        return None;
    }
    e.owner.store(me, Ordering::Relaxed);
    e.depth.store(1, Ordering::Relaxed);
    let lock = st.actions.mutex_lock;
    // SAFETY: the mutex is held by this thread.
    unsafe {
        e.slot
            .with_pending(|previous| with_current(|s| taken_at_once(s, previous, lock, lock)));
    }
    Some(rc)
}

/// Before an unlock: the release, stored for the next acquire (R3, R8).
pub(crate) fn before_unlock(st: &'static State, m: *mut pthread_mutex_t) {
    let Some(e) = st.mutexes.get(m as usize) else {
        return;
    };
    if e.owner.load(Ordering::Relaxed) != me() {
        return; // not ours to release: the original decides (EPERM, …)
    }
    if e.depth.load(Ordering::Relaxed) > 1 {
        e.depth.fetch_sub(1, Ordering::Relaxed); // an inner recursive unlock
        return;
    }
    release_mutex(st, e);
}

/// The outermost release of a mutex this thread holds.
fn release_mutex(st: &'static State, e: &MutexState) {
    // SAFETY: the mutex is still held by this thread.
    unsafe {
        e.slot.release_into(st.actions.mutex_unlock);
    }
    e.depth.store(0, Ordering::Relaxed);
    e.owner.store(0, Ordering::Relaxed);
}

/// `pthread_mutex_init`: a fresh entry for the address.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_mutex_init(
    m: *mut pthread_mutex_t,
    attr: *const libc::pthread_mutexattr_t,
) -> c_int {
    mutex_made(m as usize);
    // SAFETY: the caller's arguments, passed on.
    unsafe { real::pthread_mutex_init(m, attr) }
}

/// `pthread_mutex_destroy`: the entry is reset and freed for the next
/// object (R12: the table never fills with destroyed objects).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_mutex_destroy(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::pthread_mutex_destroy(m) };
    mutex_destroyed(rc, m as usize)
}

/// `pthread_cond_destroy`: the entry is freed for the next object (its
/// notices need no reset: a wait merges only a notice posted after it
/// began).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_cond_destroy(c: *mut pthread_cond_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::pthread_cond_destroy(c) };
    destroyed(rc, c as usize, |st| &st.conds, |_| {})
}

/// `pthread_mutex_lock`: merges the previous release (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_mutex_lock(m: *mut pthread_mutex_t) -> c_int {
    if let Some(Some(rc)) = hook(|st| lock_at_once(st, m)) {
        return rc;
    }
    // SAFETY: the caller's argument, passed on.
    locking(m, || unsafe { real::pthread_mutex_lock(m) })
}

/// A blocking acquire of `m` by `call` (lock, timedlock, clocklock): the
/// acquire merges the previous release; a failure merges nothing (R8).
#[inline(always)]
pub(crate) fn locking(m: *mut pthread_mutex_t, call: impl FnOnce() -> c_int) -> c_int {
    let a = hook(|st| before_lock(st, m)).flatten();
    let rc = call();
    if let Some(a) = a {
        hook(|st| after_lock(st, a, rc, true));
    }
    rc
}

/// `pthread_mutex_trylock`: a success merges the previous release; a
/// failure merges nothing (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_mutex_trylock(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::pthread_mutex_trylock(m) };
    // EOWNERDEAD: acquired, a robust mutex whose owner died.
    if rc == 0 || rc == libc::EOWNERDEAD {
        hook(|st| taken_by_try(st, m as usize));
    }
    rc
}

/// `pthread_mutex_timedlock`: as lock; a timeout merges nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_mutex_timedlock(
    m: *mut pthread_mutex_t,
    t: *const timespec,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    locking(m, || unsafe { real::pthread_mutex_timedlock(m, t) })
}

/// `pthread_mutex_clocklock` (glibc 2.30; C++'s `timed_mutex::try_lock_for`
/// and `try_lock_until`): as timedlock; a timeout merges nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_mutex_clocklock(
    m: *mut pthread_mutex_t,
    clock: clockid_t,
    t: *const timespec,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    locking(m, || unsafe { real::pthread_mutex_clocklock(m, clock, t) })
}

/// `pthread_mutex_unlock`: the outermost unlock is a release (R3, R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_mutex_unlock(m: *mut pthread_mutex_t) -> c_int {
    hook(|st| before_unlock(st, m));
    // SAFETY: the caller's argument, passed on.
    unsafe { real::pthread_mutex_unlock(m) }
}

// ----- reader-writer locks ---------------------------------------------

/// The two kinds of acquire of a reader-writer lock.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Read,
    Write,
}

fn before_rw(
    st: &'static State,
    l: *mut pthread_rwlock_t,
    mode: Mode,
) -> Option<(&'static RwState, Option<u64>)> {
    let e = st.rwlocks.get(l as usize)?;
    let action = match mode {
        Mode::Read => st.actions.rwlock_rdlock,
        Mode::Write => st.actions.rwlock_wrlock,
    };
    Some((e, with_current(|s| s.begin(action))))
}

/// After an acquire: a reader merges the last writer; a writer the last
/// writer and the readers since (R8). `begin` is `None` for a try.
fn after_rw(st: &'static State, e: &'static RwState, begin: Option<u64>, mode: Mode, rc: c_int) {
    if rc != 0 {
        return;
    }
    // SAFETY: the lock is held (in `mode`), so no writer stores meanwhile.
    let writer = unsafe { e.slot.read() };
    let mut records = [Record::EMPTY; 1 + Readers::CAPACITY];
    records[0] = writer;
    let mut n = 1;
    let action = match mode {
        Mode::Read => st.actions.rwlock_rdlock,
        Mode::Write => {
            e.writer.store(me(), Ordering::Relaxed);
            let (readers, _folded) = e.readers.take();
            for r in &readers {
                records[n] = *r;
                n += 1;
            }
            st.actions.rwlock_wrlock
        }
    };
    let deps: [Dependency<'_, { heisen_shmem::SELECTED }>; 1 + Readers::CAPACITY] =
        core::array::from_fn(|i| Dependency::immediate(&records[i]));
    match begin {
        Some(begin) => with_current(|s| s.end(begin, &deps[..n], action)),
        None => with_current(|s| s.merge_now(&deps[..n], action)),
    };
}

macro_rules! rw_acquire {
    ($(#[$doc:meta])* $name:ident, $mode:expr, try) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $name(l: *mut pthread_rwlock_t) -> c_int {
            // SAFETY: the caller's argument, passed on.
            let rc = unsafe { real::$name(l) };
            if rc == 0 {
                hook(|st| {
                    if let Some(e) = st.rwlocks.get(l as usize) {
                        after_rw(st, e, None, $mode, rc);
                    }
                });
            }
            rc
        }
    };
    ($(#[$doc:meta])* $name:ident, $mode:expr, blocking($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $name(l: *mut pthread_rwlock_t $(, $arg: $ty)*) -> c_int {
            let pre = hook(|st| before_rw(st, l, $mode)).flatten();
            // SAFETY: the caller's arguments, passed on.
            let rc = unsafe { real::$name(l $(, $arg)*) };
            if let Some((e, Some(begin))) = pre {
                hook(|st| after_rw(st, e, Some(begin), $mode, rc));
            }
            rc
        }
    };
}

rw_acquire!(
    /// `pthread_rwlock_rdlock`: merges the last writer (R8).
    pthread_rwlock_rdlock, Mode::Read, blocking()
);
rw_acquire!(
    /// `pthread_rwlock_tryrdlock`: a failure merges nothing.
    pthread_rwlock_tryrdlock, Mode::Read, try
);
rw_acquire!(
    /// `pthread_rwlock_timedrdlock`: a timeout merges nothing.
    pthread_rwlock_timedrdlock, Mode::Read, blocking(t: *const timespec)
);
rw_acquire!(
    /// `pthread_rwlock_clockrdlock` (glibc 2.30; C++'s
    /// `shared_timed_mutex::try_lock_shared_for`): a timeout merges nothing.
    pthread_rwlock_clockrdlock, Mode::Read, blocking(clock: clockid_t, t: *const timespec)
);
rw_acquire!(
    /// `pthread_rwlock_wrlock`: merges the last writer and the readers since (R8).
    pthread_rwlock_wrlock, Mode::Write, blocking()
);
rw_acquire!(
    /// `pthread_rwlock_trywrlock`: a failure merges nothing.
    pthread_rwlock_trywrlock, Mode::Write, try
);
rw_acquire!(
    /// `pthread_rwlock_timedwrlock`: a timeout merges nothing.
    pthread_rwlock_timedwrlock, Mode::Write, blocking(t: *const timespec)
);
rw_acquire!(
    /// `pthread_rwlock_clockwrlock` (glibc 2.30; C++'s
    /// `shared_timed_mutex::try_lock_for`): a timeout merges nothing.
    pthread_rwlock_clockwrlock, Mode::Write, blocking(clock: clockid_t, t: *const timespec)
);

/// `pthread_rwlock_init`: a fresh entry for the address.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_rwlock_init(
    l: *mut pthread_rwlock_t,
    attr: *const libc::pthread_rwlockattr_t,
) -> c_int {
    hook(|st| st.rwlocks.get(l as usize).map(RwState::reset));
    // SAFETY: the caller's arguments, passed on.
    unsafe { real::pthread_rwlock_init(l, attr) }
}

/// `pthread_rwlock_destroy`: the entry is reset and freed for the next
/// object.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_rwlock_destroy(l: *mut pthread_rwlock_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::pthread_rwlock_destroy(l) };
    destroyed(rc, l as usize, |st| &st.rwlocks, RwState::reset)
}

/// `pthread_rwlock_unlock`: a writer's release is stored for everyone; a
/// reader's is kept for the next writer (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_rwlock_unlock(l: *mut pthread_rwlock_t) -> c_int {
    hook(|st| {
        let Some(e) = st.rwlocks.get(l as usize) else {
            return;
        };
        let record = with_current(|s| s.release_split(st.actions.rwlock_unlock));
        if e.writer.load(Ordering::Relaxed) == me() {
            e.writer.store(0, Ordering::Relaxed);
            // SAFETY: this thread holds the lock for writing.
            unsafe { e.slot.write(record.unwrap_or(Record::EMPTY)) };
        } else if let Some(record) = record {
            e.readers.push(record);
        }
    });
    // SAFETY: the caller's argument, passed on.
    unsafe { real::pthread_rwlock_unlock(l) }
}

// ----- condition variables ----------------------------------------------

/// What a wait did before the original call.
#[derive(Clone, Copy)]
pub(crate) struct Waiting {
    cond: &'static CondState,
    mutex: Option<&'static MutexState>,
    depth: u32,
    seen: u64,
    begin: Option<u64>,
}

/// Before a wait: the mutex's release (R3) and the notifications so far.
pub(crate) fn before_wait(
    st: &'static State,
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
) -> Option<Waiting> {
    let cond = st.conds.get(c as usize)?;
    let mutex = st.mutexes.get(m as usize);
    let mut depth = 0;
    if let Some(e) = mutex
        && e.owner.load(Ordering::Relaxed) == me()
    {
        depth = e.depth.load(Ordering::Relaxed);
        release_mutex(st, e);
    }
    let seen = cond.notices.count();
    let begin = with_current(|s| s.begin(st.actions.cond_wait));
    Some(Waiting {
        cond,
        mutex,
        depth,
        seen,
        begin,
    })
}

/// Whether a wait that returned `rc` holds its mutex again (glibc 2.36
/// `__pthread_cond_wait_common`): it re-acquires the mutex after a
/// wake-up or a timeout and returns that lock's error if it failed;
/// `EOWNERDEAD` (a robust mutex's owner died) is an acquire.
fn holds_again(rc: c_int) -> bool {
    rc == 0 || rc == libc::ETIMEDOUT || rc == libc::EOWNERDEAD
}

/// After a wait that returned `rc`: when it holds the mutex again, takes
/// it over and merges the notification if one came and the wait did not
/// time out, and the mutex's last release (R8).
///
/// A wait refused before it released the mutex (`EPERM`: an
/// error-checking mutex the caller does not hold; `EINVAL`: an invalid
/// time or mutex) changed nothing: the mutex is where it was, so a
/// caller that held it (its release was stored in `before_wait`) still
/// holds it at the same depth, and one that did not is not made its
/// owner. Only a failed re-acquire (`ENOTRECOVERABLE`) leaves the mutex
/// unheld after the wait released it.
pub(crate) fn after_wait(st: &'static State, w: Waiting, rc: c_int) {
    if !holds_again(rc) {
        if let Some(e) = w.mutex
            && w.depth > 0
            && rc != libc::ENOTRECOVERABLE
        {
            e.owner.store(me(), Ordering::Relaxed);
            e.depth.store(w.depth, Ordering::Relaxed);
        }
        return; // no wait, no hand-off: nothing merged
    }
    let notice = if rc == 0 {
        w.cond.notices.since(w.seen)
    } else {
        None
    };
    let mut records = [Record::EMPTY; 2];
    let mut n = 0;
    if let Some(e) = w.mutex {
        e.owner.store(me(), Ordering::Relaxed);
        e.depth.store(w.depth.max(1), Ordering::Relaxed);
        // SAFETY: the mutex is held again (`holds_again`).
        records[0] = unsafe { e.slot.read() };
        n = 1;
    }
    if let Some(notice) = notice {
        records[n] = notice;
        n += 1;
    }
    let Some(begin) = w.begin else { return };
    let deps = [
        Dependency::immediate(&records[0]),
        Dependency::immediate(&records[1]),
    ];
    if rc == libc::ETIMEDOUT {
        // The timeout ended the wait, not a notice: the program waits as
        // long without heisen (the mutex's re-acquire merged at the end).
        with_current(|s| s.end_timed_out(&deps[..n], st.actions.cond_wait));
    } else {
        with_current(|s| s.end(begin, &deps[..n], st.actions.cond_wait));
    }
}

/// `pthread_cond_wait`: merges the notifier and the mutex (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_cond_wait(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    waiting(c, m, || unsafe { real::pthread_cond_wait(c, m) }, identity)
}

/// A wait on `c` with `m` by `call` (wait, timedwait, clockwait, C11's
/// `cnd_*wait`): [`before_wait`], the wait, [`after_wait`] with what
/// `call` returned as `posix` reads it (its POSIX error code). Returns
/// what `call` returned.
#[inline(always)]
pub(crate) fn waiting(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    call: impl FnOnce() -> c_int,
    posix: impl FnOnce(c_int) -> c_int,
) -> c_int {
    let w = hook(|st| before_wait(st, c, m)).flatten();
    let rc = call();
    if let Some(w) = w {
        hook(|st| after_wait(st, w, posix(rc)));
    }
    rc
}

/// `pthread_cond_timedwait`: a timeout merges only the mutex (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_cond_timedwait(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    t: *const timespec,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    waiting(
        c,
        m,
        || unsafe { real::pthread_cond_timedwait(c, m, t) },
        identity,
    )
}

/// `pthread_cond_clockwait` (glibc 2.30; C++'s
/// `condition_variable::wait_for` and `wait_until` on the steady clock): a
/// timeout merges only the mutex (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_cond_clockwait(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    clock: clockid_t,
    t: *const timespec,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    waiting(
        c,
        m,
        || unsafe { real::pthread_cond_clockwait(c, m, clock, t) },
        identity,
    )
}

/// A notification of `c` (signal or broadcast): a release that the woken
/// waits merge (R8).
pub(crate) fn notify(st: &'static State, c: *mut pthread_cond_t) {
    let Some(cond) = st.conds.get(c as usize) else {
        return;
    };
    let record = with_current(|s| s.release_split(st.actions.cond_signal)).unwrap_or(Record::EMPTY);
    cond.notices.post(record);
}

/// `pthread_cond_signal`: a release the woken wait merges (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_cond_signal(c: *mut pthread_cond_t) -> c_int {
    hook(|st| notify(st, c));
    // SAFETY: the caller's argument, passed on.
    unsafe { real::pthread_cond_signal(c) }
}

/// `pthread_cond_broadcast`: a release every woken wait merges (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_cond_broadcast(c: *mut pthread_cond_t) -> c_int {
    hook(|st| notify(st, c));
    // SAFETY: the caller's argument, passed on.
    unsafe { real::pthread_cond_broadcast(c) }
}
