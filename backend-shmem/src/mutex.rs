//! A mutual-exclusion lock with std's API whose hand-offs are merges
//! (R8; 003 §4, Fig. 10a): the n-th acquire merges the record the
//! (n-1)-th release left in the lock, in the order the locks were really
//! taken. A `try_lock` that fails merges nothing.
//!
//! ```
//! # let _ = heisen_shmem::runtime::init_with(heisen_shmem::Config { output: std::env::temp_dir(), ..heisen_shmem::Config::from_env() });
//! let counter = heisen_shmem::Mutex::new(0u64);
//! *counter.lock().unwrap() += 1; // the guard's drop is the release
//! assert_eq!(*counter.lock().unwrap(), 1);
//! ```

use core::fmt;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};

use heisen_core::Dependency;

use crate::actions::actions;
use crate::handoff::Slot;
use crate::runtime::ActionId;
use crate::sync::{self, LockResult, PoisonError, TryLockError, TryLockResult};
use crate::thread::with_current;

/// `std::sync::Mutex` with compensated hand-offs (see the module docs).
pub struct Mutex<T: ?Sized> {
    slot: Slot,
    inner: sync::Mutex<T>,
}

/// The lock held; dropping it is the release (R3: it stores the record
/// the next acquire merges, then unlocks).
///
/// It keeps the lock's hand-off slot, not the lock: a `&Mutex<T>` would
/// make the guard `Sync` only for `T: Send + Sync`, where std's is `Sync`
/// for every `T: Sync`.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, T: ?Sized + 'a> {
    slot: &'a Slot,
    inner: ManuallyDrop<sync::MutexGuard<'a, T>>,
}

impl<T> Mutex<T> {
    sync::const_unless_loom! {
        /// A new unlocked mutex (`const`, as std's: it can be a `static`).
        pub fn new(value: T) -> Mutex<T> {
            Mutex {
                slot: Slot::new(),
                inner: sync::Mutex::new(value),
            }
        }
    }

    /// The value, consuming the mutex.
    pub fn into_inner(self) -> LockResult<T> {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Acquires the lock, blocking until it is free; the acquire merges
    /// the previous release (R8, R5).
    ///
    /// A lock that is free is taken at once, without a wait to measure:
    /// no begin and end reads around std's acquire, one read or none
    /// (`Mutex::took`). Only a lock found held is timed around the
    /// blocking acquire.
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        let a = actions();
        match self.inner.try_lock() {
            Ok(guard) => {
                self.took(a.mutex_acquire, a.mutex_acquire_crossed);
                return Ok(self.guard(guard));
            }
            Err(TryLockError::Poisoned(p)) => {
                self.took(a.mutex_acquire, a.mutex_acquire_crossed);
                return Err(PoisonError::new(self.guard(p.into_inner())));
            }
            Err(TryLockError::WouldBlock) => {}
        }
        let begin = with_current(|s| s.begin(a.mutex_acquire));
        let result = self.inner.lock();
        if let Some(begin) = begin {
            // SAFETY: the lock is held (whether poisoned or not).
            #[allow(unsafe_code)] // reason: the slot's contract
            unsafe {
                self.slot.with(|record| {
                    with_current(|s| {
                        // R1: a release of another thread is read from the
                        // other core's cache: the crossed hand-off's cost.
                        let action = if crossed(s, record) {
                            a.mutex_acquire_crossed
                        } else {
                            a.mutex_acquire
                        };
                        s.end(begin, &[acquire_dependency(s, record)], action)
                    })
                });
            }
        }
        self.wrap(result)
    }

    /// Acquires the lock if it is free. A failed attempt merges nothing
    /// (R8: no hand-off happened).
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        match self.inner.try_lock() {
            Ok(guard) => {
                self.taken();
                Ok(self.guard(guard))
            }
            Err(TryLockError::Poisoned(p)) => {
                self.taken();
                Err(TryLockError::Poisoned(PoisonError::new(
                    self.guard(p.into_inner()),
                )))
            }
            Err(TryLockError::WouldBlock) => Err(TryLockError::WouldBlock),
        }
    }

    /// Whether a thread panicked while holding the lock.
    #[cfg(not(loom))]
    pub fn is_poisoned(&self) -> bool {
        self.inner.is_poisoned()
    }

    /// Clears the poison a panicking holder left (std's `clear_poison`;
    /// nothing is merged: no hand-off happens).
    #[cfg(not(loom))]
    pub fn clear_poison(&self) {
        self.inner.clear_poison();
    }

    /// The value, through a unique borrow (no locking, nothing merged).
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.inner.get_mut()
    }

    /// A successful `try_lock`: a merge that did not wait.
    fn taken(&self) {
        let a = actions();
        self.took(a.mutex_try_acquire, a.mutex_try_acquire);
    }

    /// The merge of an acquire that took the lock at once
    /// ([`taken_at_once`]), charging `own` or `other` (R1).
    #[inline]
    fn took(&self, own: ActionId, other: ActionId) {
        // SAFETY: the lock is held.
        #[allow(unsafe_code)] // reason: the slot's contract
        unsafe {
            self.slot
                .with_pending(|record| with_current(|s| taken_at_once(s, record, own, other)));
        }
    }

    fn guard<'a>(&'a self, inner: sync::MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        MutexGuard::from_parts(&self.slot, inner)
    }

    fn wrap<'a>(
        &'a self,
        result: LockResult<sync::MutexGuard<'a, T>>,
    ) -> LockResult<MutexGuard<'a, T>> {
        match result {
            Ok(g) => Ok(self.guard(g)),
            Err(p) => Err(PoisonError::new(self.guard(p.into_inner()))),
        }
    }
}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// Takes the guard apart without releasing: a condition variable's
    /// wait releases through its own path (into the lock's slot).
    pub(crate) fn into_parts(guard: Self) -> (&'a Slot, sync::MutexGuard<'a, T>) {
        let mut guard = ManuallyDrop::new(guard);
        let slot = guard.slot;
        // SAFETY: `guard` is never used or dropped again, so the inner
        // guard is moved out exactly once.
        #[allow(unsafe_code)] // reason: moving out of a type with Drop
        let inner = unsafe { ManuallyDrop::take(&mut guard.inner) };
        (slot, inner)
    }

    /// Puts a guard back together after a condition-variable wait.
    pub(crate) fn from_parts(slot: &'a Slot, inner: sync::MutexGuard<'a, T>) -> Self {
        MutexGuard {
            slot,
            inner: ManuallyDrop::new(inner),
        }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        let a = actions();
        // SAFETY: the lock is still held exclusively by this guard.
        #[allow(unsafe_code)] // reason: the slot's contract
        unsafe {
            self.slot.release_into(a.mutex_release);
        }
        // SAFETY: dropped once, here; the guard is not used afterwards.
        #[allow(unsafe_code)] // reason: releasing the inner guard after the record is stored
        unsafe {
            ManuallyDrop::drop(&mut self.inner);
        }
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// std's: `Mutex { data: .., poisoned: .., .. }`, the data read through a
/// `try_lock` of the inner lock (no hand-off, nothing merged).
impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner, f)
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T> From<T> for Mutex<T> {
    fn from(value: T) -> Self {
        Mutex::new(value)
    }
}

/// The dependency of an acquire on the release in `record`: satisfied
/// when the lock was freed (the record's departure, R3), so the hand-off
/// takes no transfer time (R5 with `l_j = 0`, as `Dependency::immediate`
/// intends for locks). Without the arrival, a waiter that went to sleep
/// would count its own wake-up latency as transfer time: a cost that
/// exists only because instrumentation lengthened the critical section
/// enough to make it wait (docs/development.md, "Threads").
pub(crate) fn handoff(record: &crate::Record) -> Dependency<'_, { crate::SELECTED }> {
    let departure = u64::try_from(record.measured()).unwrap_or(0);
    Dependency::immediate(record).arrived(departure)
}

/// A release that decides nothing: timestamped, with an approximated time
/// earlier than any thread's and no path data.
static PATHLESS: crate::Record = crate::Record {
    flags: heisen_core::Flags::DELAY.with(heisen_core::Flags::TIMESTAMP),
    approximated: i64::MIN / 4,
    ..crate::Record::EMPTY
};

/// Whether `record` is another measured thread's release (R1: the
/// acquire that merges it is charged the crossed hand-off's cost).
#[inline]
pub(crate) fn crossed(s: &crate::ThreadState, record: &crate::Record) -> bool {
    record.flags.contains(heisen_core::Flags::DELAY) && record.location != s.kernel().id()
}

/// Whether `record` is the calling thread's own release, taken back, in
/// the timestamped form: a merge of it can change nothing (see
/// `acquire_dependency`).
#[inline]
pub fn takes_back(s: &crate::ThreadState, record: &crate::Record) -> bool {
    takes_back_from(s, record.location)
}

/// [`takes_back`] for a release by `location`.
#[inline]
fn takes_back_from(s: &crate::ThreadState, location: u32) -> bool {
    let k = s.kernel();
    location == k.id() && k.form() == heisen_core::Form::Timestamped
}

/// The merge of a lock's acquire that took the lock at once, without a
/// wait (R8; R5 with `w = 0`), of the release in `record`: the thread's
/// own release taken back is the charge of `own` alone, with no clock
/// read ([`crate::ThreadState::merge_own`]) and without materialising the
/// record; another thread's is merged at one clock read, charging
/// `crossed` (R1: its record comes from the other core's cache), an
/// unmeasured one's charging `own`.
///
/// The record in the lock is its last release's, so an own record means
/// that no other thread held the lock since: every release stores one
/// (an unmeasured thread's the empty record).
#[inline]
pub fn taken_at_once(
    s: &mut crate::ThreadState,
    pending: &crate::PendingRecord,
    own: ActionId,
    crossed_action: ActionId,
) {
    if takes_back_from(s, pending.location()) {
        s.merge_own(own);
    } else {
        let record = &pending.piggyback();
        let action = if crossed(s, record) {
            crossed_action
        } else {
            own
        };
        s.merge_now_split(&[handoff(record)], action);
    }
}

/// What an acquire merges for the release in `record`. When the thread
/// takes back a lock it released itself (the uncontended case), its own
/// earlier record can change nothing — its approximated release and its
/// path are no later than the thread's present ones — so a record without
/// path data stands for it: the merge has the same outcome (released
/// before the acquire began, it did not make it wait: R5 with `w = 0`)
/// without the K-wide path merge (R7). Only in the timestamped form,
/// where that holds as stated.
pub(crate) fn acquire_dependency<'a>(
    s: &crate::ThreadState,
    record: &'a crate::Record,
) -> Dependency<'a, { crate::SELECTED }> {
    if takes_back(s, record) {
        Dependency::immediate(&PATHLESS)
    } else {
        handoff(record)
    }
}
