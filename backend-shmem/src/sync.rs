//! The one door to atomics, locks and cells for every synchronisation
//! object heisen-shmem builds: std's under a normal build, loom's under
//! `--cfg loom`, so that `tests/loom.rs` checks the very code the wrappers
//! run (the pattern of crossbeam-utils' `primitive` module and tokio's
//! `loom` module).
//!
//! The process runtime's own tables (`runtime.rs`, `thread.rs`) are not
//! here: they are `static` (loom atomics cannot be) and are not part of any
//! hand-off protocol.
#![allow(unreachable_pub)] // reason: a shim re-exports what its users need, crate-visible through `pub(crate) mod`

#[cfg(not(loom))]
pub use core::sync::atomic::{AtomicU64, Ordering, fence};
#[cfg(not(loom))]
pub use std::sync::{
    Condvar, LockResult, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
    TryLockError, TryLockResult,
};

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicU64, Ordering, fence};
#[cfg(loom)]
pub use loom::sync::{
    Condvar, LockResult, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    TryLockResult,
};
#[cfg(loom)]
pub use std::sync::{PoisonError, TryLockError};

/// A constructor that is `const` where std's primitives are (so that a
/// heisen lock, condition variable or barrier can be a `static`, as std's
/// can) and plain under loom, whose primitives have no `const`
/// constructors.
macro_rules! const_unless_loom {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        $(#[$meta])*
        #[cfg(not(loom))]
        $vis const fn $name($($arg: $ty),*) -> $ret $body

        $(#[$meta])*
        #[cfg(loom)]
        $vis fn $name($($arg: $ty),*) -> $ret $body
    };
}
pub(crate) use const_unless_loom;

/// A spin-wait step: loom must see every spin so that it can schedule
/// the thread that ends it.
#[inline]
pub fn spin() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    core::hint::spin_loop();
}

/// `UnsafeCell` with loom's closure API (`with`, `with_mut`), so that loom
/// can check every access to a hand-off slot for races.
#[cfg(not(loom))]
#[derive(Debug, Default)]
pub struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    /// A cell holding `value`.
    #[inline]
    pub const fn new(value: T) -> UnsafeCell<T> {
        UnsafeCell(core::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a shared pointer to the value.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a unique pointer to the value.
    #[inline]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

#[cfg(loom)]
pub use loom::cell::UnsafeCell;
