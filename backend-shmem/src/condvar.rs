//! A condition variable with std's API whose waits are merges (R8; 003
//! §4): a wait that was woken merges the record of the notification that
//! woke it and the release of the mutex it re-acquires; a wait that timed
//! out (or woke spuriously, with no notification since it began) merges
//! only the mutex.
//!
//! ```
//! # let _ = heisen_shmem::runtime::init_with(heisen_shmem::Config { output: std::env::temp_dir(), ..heisen_shmem::Config::from_env() });
//! use std::sync::Arc;
//! let pair = Arc::new((heisen_shmem::Mutex::new(false), heisen_shmem::Condvar::new()));
//! let other = pair.clone();
//! let t = heisen_shmem::spawn(move || {
//!     *other.0.lock().unwrap() = true;
//!     other.1.notify_one(); // a release the woken wait merges
//! });
//! let mut ready = pair.0.lock().unwrap();
//! while !*ready {
//!     ready = pair.1.wait(ready).unwrap();
//! }
//! drop(ready);
//! t.join().unwrap();
//! ```

use core::fmt;

use heisen_core::Dependency;

use crate::Record;
use crate::actions::{actions, released};
use crate::handoff::Slot;
use crate::mutex::MutexGuard;
use crate::sync::{self, LockResult, PoisonError};
use crate::thread::with_current;

/// Whether a timed wait ran out of time (std's `WaitTimeoutResult`, which
/// cannot be built outside std: [`Condvar::wait_timeout_while`] must say
/// "timed out" without having waited).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// True when the wait ended because its time ran out.
    pub fn timed_out(&self) -> bool {
        self.0
    }
}

/// `std::sync::Condvar` with compensated waits (see the module docs).
pub struct Condvar {
    inner: sync::Condvar,
    notices: Notices,
}

/// The latest notification's record and how many were made: a waiter
/// notes the count before it waits and merges the record only if the
/// count moved (R8: a wait merges its notifier, and nothing when no
/// notifier notified).
#[derive(Debug)]
pub struct Notices {
    latest: sync::Mutex<(u64, Record)>,
}

impl Notices {
    sync::const_unless_loom! {
        /// No notification yet.
        pub fn new() -> Notices {
            Notices {
                latest: sync::Mutex::new((0, Record::EMPTY)),
            }
        }
    }

    /// Publishes a notification's record (before the notify itself).
    pub fn post(&self, record: Record) {
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        latest.0 += 1;
        latest.1 = record;
    }

    /// The number of notifications so far (read before waiting).
    pub fn count(&self) -> u64 {
        self.latest.lock().unwrap_or_else(|p| p.into_inner()).0
    }

    /// The latest notification's record if any came after `count`.
    pub fn since(&self, count: u64) -> Option<Record> {
        let latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        (latest.0 != count).then_some(latest.1)
    }
}

impl Default for Notices {
    fn default() -> Self {
        Notices::new()
    }
}

/// What a wait did before it blocked.
pub(crate) struct Waiting {
    /// Measured time of its begin (the mutex release's clock read).
    begin: Option<u64>,
    /// Notifications seen before blocking.
    seen: u64,
}

impl Condvar {
    sync::const_unless_loom! {
        /// A new condition variable (`const`, as std's: it can be a `static`).
        pub fn new() -> Condvar {
            Condvar {
                inner: sync::Condvar::new(),
                notices: Notices::new(),
            }
        }
    }

    /// Releases the mutex, waits for a notification, re-acquires the
    /// mutex; merges the notification and the mutex's last release (R8).
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        let (slot, inner) = MutexGuard::into_parts(guard);
        let waiting = self.before_wait(slot);
        let (inner, poisoned) = match self.inner.wait(inner) {
            Ok(g) => (g, false),
            Err(p) => (p.into_inner(), true),
        };
        self.after_wait(slot, &waiting, true);
        let guard = MutexGuard::from_parts(slot, inner);
        if poisoned {
            Err(PoisonError::new(guard))
        } else {
            Ok(guard)
        }
    }

    /// Waits while `condition` holds (std's `wait_while`).
    pub fn wait_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: F,
    ) -> LockResult<MutexGuard<'a, T>>
    where
        F: FnMut(&mut T) -> bool,
    {
        while condition(&mut *guard) {
            guard = self.wait(guard)?;
        }
        Ok(guard)
    }

    /// [`Condvar::wait`] with a time limit. A wait that timed out merges
    /// only the mutex it re-acquired, not a notifier that did not notify.
    #[cfg(not(loom))]
    pub fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: core::time::Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let (slot, inner) = MutexGuard::into_parts(guard);
        let waiting = self.before_wait(slot);
        let (inner, result, poisoned) = match self.inner.wait_timeout(inner, timeout) {
            Ok((g, r)) => (g, r, false),
            Err(p) => {
                let (g, r) = p.into_inner();
                (g, r, true)
            }
        };
        self.after_wait(slot, &waiting, !result.timed_out());
        let guard = MutexGuard::from_parts(slot, inner);
        let result = WaitTimeoutResult(result.timed_out());
        if poisoned {
            Err(PoisonError::new((guard, result)))
        } else {
            Ok((guard, result))
        }
    }

    /// Waits while `condition` holds, for at most `timeout` in all (std's
    /// `wait_timeout_while`, which checks the condition before each wait):
    /// each wakeup merges what [`Condvar::wait_timeout`] merges; the result
    /// says whether the time ran out with the condition still true.
    #[cfg(not(loom))]
    pub fn wait_timeout_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        timeout: core::time::Duration,
        mut condition: F,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)>
    where
        F: FnMut(&mut T) -> bool,
    {
        let start = std::time::Instant::now();
        loop {
            if !condition(&mut *guard) {
                return Ok((guard, WaitTimeoutResult(false)));
            }
            let Some(left) = timeout.checked_sub(start.elapsed()) else {
                return Ok((guard, WaitTimeoutResult(true)));
            };
            guard = self.wait_timeout(guard, left)?.0;
        }
    }

    /// Wakes one waiter; the notification is a release it merges (R8).
    pub fn notify_one(&self) {
        self.post();
        self.inner.notify_one();
    }

    /// Wakes every waiter; each merges this notification (R8).
    pub fn notify_all(&self) {
        self.post();
        self.inner.notify_all();
    }

    /// A notification's own work without the wake-up (calibration).
    pub(crate) fn post_for_calibration(&self) {
        self.post();
    }

    fn post(&self) {
        // R3: an unmeasured notifier's notification carries no record.
        let record = released(|a| a.condvar_notify);
        self.notices.post(record);
    }

    /// The wait's release of the mutex (its record stored in the mutex's
    /// hand-off `slot` for the next acquire) and its begin.
    pub(crate) fn before_wait(&self, slot: &Slot) -> Waiting {
        let a = actions();
        let begun = with_current(|s| {
            let record = s.release_split(a.mutex_release);
            (record, s.begin(a.condvar_wait))
        });
        // SAFETY: the mutex is still held by this thread.
        #[allow(unsafe_code)] // reason: the slot's contract
        unsafe {
            slot.write(begun.map_or(Record::EMPTY, |b| b.0));
        }
        Waiting {
            begin: begun.map(|b| b.1),
            seen: self.notices.count(),
        }
    }

    /// The merge after the wait: the notification (read before the end's
    /// clock read, so that it was posted before the end) and the mutex.
    pub(crate) fn after_wait(&self, slot: &Slot, waiting: &Waiting, woken: bool) {
        let Some(begin) = waiting.begin else { return };
        let notice = if woken {
            self.notices.since(waiting.seen)
        } else {
            None
        };
        // SAFETY: the mutex is held again.
        #[allow(unsafe_code)] // reason: the slot's contract
        let released = unsafe { slot.read() };
        let a = actions();
        with_current(|s| match &notice {
            Some(n) => s.end(
                begin,
                &[Dependency::immediate(n), Dependency::immediate(&released)],
                a.condvar_wait,
            ),
            // A wait that ran out of time waited as long without heisen.
            None if !woken => s.end_timed_out(&[Dependency::immediate(&released)], a.condvar_wait),
            None => s.end(begin, &[Dependency::immediate(&released)], a.condvar_wait),
        });
    }
}

impl Default for Condvar {
    fn default() -> Self {
        Condvar::new()
    }
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Condvar").finish_non_exhaustive()
    }
}
