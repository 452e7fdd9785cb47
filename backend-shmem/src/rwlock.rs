//! A reader-writer lock with std's API whose hand-offs are merges (R8;
//! 003 §4, Fig. 10a): a reader's acquire merges the last writer's
//! release; a writer's acquire merges the last writer's release and the
//! releases of every reader that held the lock since (bounded and folded,
//! see [`Readers`]). A failed `try_read`/`try_write` merges nothing.
//!
//! ```
//! # let _ = heisen_shmem::runtime::init_with(heisen_shmem::Config { output: std::env::temp_dir(), ..heisen_shmem::Config::from_env() });
//! let table = heisen_shmem::RwLock::new(vec![1, 2]);
//! table.write().unwrap().push(3);
//! assert_eq!(table.read().unwrap().len(), 3);
//! ```

use core::fmt;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};

use heisen_core::Dependency;

use crate::actions::{actions, released};
use crate::handoff::{Readers, Slot};
use crate::sync::{self, LockResult, PoisonError, TryLockError, TryLockResult};
use crate::thread::with_current;
use crate::{Record, SELECTED};

/// `std::sync::RwLock` with compensated hand-offs (see the module docs).
pub struct RwLock<T: ?Sized> {
    writer: Slot,
    readers: Readers,
    inner: sync::RwLock<T>,
}

/// Shared access; dropping it is a reader's release.
///
/// It keeps where readers' releases go, not the lock: a `&RwLock<T>`
/// would make the guard invariant in `T` (std's is covariant) and `Sync`
/// only for `T: Send + Sync` (std's: for `T: Sync`).
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T: ?Sized + 'a> {
    readers: &'a Readers,
    inner: ManuallyDrop<sync::RwLockReadGuard<'a, T>>,
}

/// Exclusive access; dropping it is a writer's release. It keeps the
/// lock's hand-off records, not the lock (as [`RwLockReadGuard`]).
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized + 'a> {
    writer: &'a Slot,
    // Read by `downgrade` only, which loom's locks do not have.
    #[cfg_attr(loom, allow(dead_code))]
    readers: &'a Readers,
    inner: ManuallyDrop<sync::RwLockWriteGuard<'a, T>>,
}

impl<T> RwLock<T> {
    sync::const_unless_loom! {
        /// A new unlocked lock (`const`, as std's: it can be a `static`).
        pub fn new(value: T) -> RwLock<T> {
            RwLock {
                writer: Slot::new(),
                readers: Readers::new(),
                inner: sync::RwLock::new(value),
            }
        }
    }

    /// The value, consuming the lock.
    pub fn into_inner(self) -> LockResult<T> {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Shared access, blocking while a writer holds the lock; merges the
    /// last writer's release (R8).
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        let a = actions();
        let begin = with_current(|s| s.begin(a.rwlock_read));
        let result = self.inner.read();
        if let Some(begin) = begin {
            let record = self.writer_record();
            with_current(|s| s.end(begin, &[Dependency::immediate(&record)], a.rwlock_read));
        }
        match result {
            Ok(g) => Ok(self.read_guard(g)),
            Err(p) => Err(PoisonError::new(self.read_guard(p.into_inner()))),
        }
    }

    /// Exclusive access, blocking while anyone holds the lock; merges the
    /// last writer's release and the readers' since (R8).
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        let a = actions();
        let begin = with_current(|s| s.begin(a.rwlock_write));
        let result = self.inner.write();
        let (records, count) = self.write_dependencies();
        if let Some(begin) = begin {
            let deps = dependencies(&records[..count]);
            with_current(|s| s.end(begin, &deps[..count], a.rwlock_write));
        }
        match result {
            Ok(g) => Ok(self.write_guard(g)),
            Err(p) => Err(PoisonError::new(self.write_guard(p.into_inner()))),
        }
    }

    /// Shared access if no writer holds the lock; a failure merges nothing.
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        let taken = |lock: &Self| {
            let record = lock.writer_record();
            let action = actions().rwlock_read;
            with_current(|s| s.merge_now(&[Dependency::immediate(&record)], action));
        };
        match self.inner.try_read() {
            Ok(g) => {
                taken(self);
                Ok(self.read_guard(g))
            }
            Err(TryLockError::Poisoned(p)) => {
                taken(self);
                Err(TryLockError::Poisoned(PoisonError::new(
                    self.read_guard(p.into_inner()),
                )))
            }
            Err(TryLockError::WouldBlock) => Err(TryLockError::WouldBlock),
        }
    }

    /// Exclusive access if nobody holds the lock; a failure merges nothing.
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        let taken = |lock: &Self| {
            let (records, count) = lock.write_dependencies();
            let deps = dependencies(&records[..count]);
            let action = actions().rwlock_write;
            with_current(|s| s.merge_now(&deps[..count], action));
        };
        match self.inner.try_write() {
            Ok(g) => {
                taken(self);
                Ok(self.write_guard(g))
            }
            Err(TryLockError::Poisoned(p)) => {
                taken(self);
                Err(TryLockError::Poisoned(PoisonError::new(
                    self.write_guard(p.into_inner()),
                )))
            }
            Err(TryLockError::WouldBlock) => Err(TryLockError::WouldBlock),
        }
    }

    /// Whether a thread panicked while holding the lock for writing.
    #[cfg(not(loom))]
    pub fn is_poisoned(&self) -> bool {
        self.inner.is_poisoned()
    }

    /// Clears the poison a panicking writer left (std's `clear_poison`;
    /// nothing is merged).
    #[cfg(not(loom))]
    pub fn clear_poison(&self) {
        self.inner.clear_poison();
    }

    /// The value, through a unique borrow.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.inner.get_mut()
    }

    /// The last writer's record; called with the lock held in any mode.
    fn writer_record(&self) -> Record {
        // SAFETY: the lock is held, so no writer can store meanwhile.
        #[allow(unsafe_code)] // reason: the slot's contract
        unsafe {
            self.writer.read()
        }
    }

    /// What a writer that just acquired the lock depends on: the last
    /// writer and the readers since, in a fixed array (no allocation).
    fn write_dependencies(&self) -> ([Record; 1 + Readers::CAPACITY], usize) {
        let mut records = [Record::EMPTY; 1 + Readers::CAPACITY];
        records[0] = self.writer_record();
        let (readers, _folded) = self.readers.take();
        for (slot, r) in records[1..].iter_mut().zip(&readers) {
            *slot = *r;
        }
        (records, 1 + readers.len())
    }

    fn read_guard<'a>(&'a self, inner: sync::RwLockReadGuard<'a, T>) -> RwLockReadGuard<'a, T> {
        RwLockReadGuard {
            readers: &self.readers,
            inner: ManuallyDrop::new(inner),
        }
    }

    fn write_guard<'a>(&'a self, inner: sync::RwLockWriteGuard<'a, T>) -> RwLockWriteGuard<'a, T> {
        RwLockWriteGuard {
            writer: &self.writer,
            readers: &self.readers,
            inner: ManuallyDrop::new(inner),
        }
    }
}

impl<'a, T: ?Sized> RwLockWriteGuard<'a, T> {
    /// Turns exclusive access into shared access without unlocking
    /// (std's `RwLockWriteGuard::downgrade`: no writer can come between).
    /// The downgrade is this writer's release (R8): the readers that
    /// acquire after it merge it, as they merge a writer that unlocked;
    /// the shared access that stays is released as any reader's.
    #[cfg(not(loom))] // loom's guards cannot downgrade
    pub fn downgrade(guard: Self) -> RwLockReadGuard<'a, T> {
        let mut guard = ManuallyDrop::new(guard);
        let record = released(|a| a.rwlock_write_release);
        // SAFETY: the lock is still held exclusively by this guard.
        #[allow(unsafe_code)] // reason: the slot's contract
        unsafe {
            guard.writer.write(record);
        }
        // SAFETY: `guard` is never used or dropped again, so the inner
        // guard is moved out exactly once.
        #[allow(unsafe_code)] // reason: moving out of a type with Drop
        let inner = unsafe { ManuallyDrop::take(&mut guard.inner) };
        RwLockReadGuard {
            readers: guard.readers,
            inner: ManuallyDrop::new(sync::RwLockWriteGuard::downgrade(inner)),
        }
    }
}

/// One immediate dependency per record (a lock hand-off has no transfer).
fn dependencies(records: &[Record]) -> [Dependency<'_, SELECTED>; 1 + Readers::CAPACITY] {
    let empty = &EMPTY_RECORD;
    core::array::from_fn(|i| Dependency::immediate(records.get(i).unwrap_or(empty)))
}

static EMPTY_RECORD: Record = Record::EMPTY;

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        let action = actions().rwlock_read_release;
        let record = with_current(|s| s.release_split(action));
        if let Some(record) = record {
            self.readers.push(record);
        }
        // SAFETY: dropped once, here.
        #[allow(unsafe_code)] // reason: unlocking after the record is kept
        unsafe {
            ManuallyDrop::drop(&mut self.inner);
        }
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        let record = released(|a| a.rwlock_write_release);
        // SAFETY: the lock is held exclusively by this guard.
        #[allow(unsafe_code)] // reason: the slot's contract
        unsafe {
            self.writer.write(record);
        }
        // SAFETY: dropped once, here.
        #[allow(unsafe_code)] // reason: unlocking after the record is stored
        unsafe {
            ManuallyDrop::drop(&mut self.inner);
        }
    }
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// std's: `RwLock { data: .., poisoned: .., .. }`, the data read through
/// a `try_read` of the inner lock (no hand-off, nothing merged).
impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner, f)
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        RwLock::new(T::default())
    }
}

impl<T> From<T> for RwLock<T> {
    fn from(value: T) -> Self {
        RwLock::new(value)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}
