//! Compensated synchronisation objects for C: a mutex, a barrier, a
//! condition variable and a work queue, each heisen-shmem's wrapper behind
//! an opaque handle, so that every hand-off is a merge (R8; 003 §4): an
//! acquire merges the previous release, a barrier's leave merges every
//! arrival of its episode, a dequeue merges its own item's enqueue, a
//! wait merges the notifier. Every operation's cost is calibrated by
//! heisen-shmem (R1) and listed in the report.
//!
//! A mutex is locked and unlocked by separate calls, as in C: the lock's
//! guard is kept in the handle while a thread holds it, with the holder's
//! identity, so an unlock (or a condition wait) by a thread that does not
//! hold it is refused (`HEISEN_RESULT_NOT_OWNER`) instead of breaking the
//! lock.

use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::PoisonError;

use heisen_shmem::{Barrier, Condvar, MutexGuard, WorkQueue, thread};

use crate::result::{
    Outcome, boundary, free_handle, heisen_result, new_handle, out_arg, write_out,
};

/// Calibrates heisen-shmem's wrapper actions now, if they are not yet.
/// heisen-shmem calibrates them on the first use of any wrapper, on the
/// thread that uses it, and charges the pause to it (R1): in the middle of
/// a parallel phase that pause stretches the run and every thread that
/// waits for the one calibrating. A C program makes its handles before
/// its parallel phase, so making one does it; a barrier of one thread is
/// the cheapest first use. (`heisen_init` does not: a program that uses no
/// handle would pay for nothing.)
///
/// The barrier waits in a scratch state ([`thread::calibrating`]), so that
/// it leaves no location behind and its charges land nowhere; the pause
/// is charged here instead, to a thread that had a location before it
/// (R1), as [`crate::actions::calibrate`] does.
pub(crate) fn calibrate_wrappers() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let rt = heisen_shmem::runtime();
        if rt.is_off() {
            return;
        }
        let registered = thread::registered();
        let t0 = rt.now();
        thread::calibrating(rt, || {
            let _ = Barrier::new(1).wait();
        });
        if registered {
            let pause = rt.now().saturating_sub(t0);
            // R1: a calibration pause adds its measured length.
            heisen_shmem::with_current(|s| s.overhead(pause));
        }
    });
}

/// An identity of the calling thread, cheap to read (not an OS id).
fn me() -> usize {
    std::thread_local! {
        static KEY: u8 = const { 0 };
    }
    KEY.with(|k| core::ptr::from_ref(k) as usize)
}

/// A compensated mutex (opaque).
#[allow(non_camel_case_types)] // reason: the C name
pub struct heisen_mutex {
    /// The guard while a thread holds the lock. Declared before `inner`,
    /// which it borrows, so that it drops first.
    held: UnsafeCell<Option<MutexGuard<'static, ()>>>,
    /// The holder (see [`me`]), 0 when free.
    owner: AtomicUsize,
    inner: heisen_shmem::Mutex<()>,
}

// SAFETY: `held` is written only by the thread that holds `inner` (after
// lock, before unlock), which `owner` records; other threads never touch
// it. The guard it keeps is dropped by the thread that made it (unlock
// checks the owner), so it never moves between threads in use.
unsafe impl Sync for heisen_mutex {}
// SAFETY: as above; the handle itself may be created and freed anywhere.
unsafe impl Send for heisen_mutex {}

impl core::fmt::Debug for heisen_mutex {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("heisen_mutex")
            .field("owner", &self.owner.load(Ordering::Relaxed))
            .finish()
    }
}

impl heisen_mutex {
    /// Keeps the guard of a lock just taken by the calling thread.
    fn hold(&self, guard: MutexGuard<'_, ()>) {
        // SAFETY: the guard borrows `self.inner`, which lives as long as
        // the handle; the guard is dropped before the handle is freed
        // (field order, and `heisen_mutex_free` drops it first).
        let guard: MutexGuard<'static, ()> = unsafe { core::mem::transmute(guard) };
        // SAFETY: the calling thread holds the lock: no other thread
        // touches `held` until it is released.
        unsafe { *self.held.get() = Some(guard) };
        self.owner.store(me(), Ordering::Relaxed);
    }

    /// The guard of a lock the calling thread holds, taken out of the
    /// handle; `NotOwner` if it does not hold it.
    fn take(&self) -> Outcome<MutexGuard<'static, ()>> {
        if self.owner.load(Ordering::Relaxed) != me() {
            return Err(heisen_result::NotOwner);
        }
        self.owner.store(0, Ordering::Relaxed);
        // SAFETY: the calling thread holds the lock (checked above).
        unsafe { (*self.held.get()).take() }.ok_or(heisen_result::NotOwner)
    }
}

/// A handle argument.
///
/// # Safety
/// `p` is NULL or a live handle of type `T`.
unsafe fn handle<'a, T>(p: *mut T) -> Outcome<&'a T> {
    // SAFETY: the caller's contract.
    unsafe { p.as_ref() }.ok_or(heisen_result::NullArgument)
}

/// Makes an unlocked mutex in `*out`; free it with `heisen_mutex_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_mutex_new(out: *mut *mut heisen_mutex) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        unsafe {
            new_handle(out, || {
                calibrate_wrappers();
                Ok(heisen_mutex {
                    held: UnsafeCell::new(None),
                    owner: AtomicUsize::new(0),
                    inner: heisen_shmem::Mutex::new(()),
                })
            })
        }
    })
}

/// Frees a mutex (unlocking it if it is still held); NULL is ignored.
///
/// # Safety
/// `mutex` is NULL or a live handle no other thread uses any more.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_mutex_free(mutex: *mut heisen_mutex) {
    let _ = boundary(|| {
        if !mutex.is_null() {
            // SAFETY: the caller's contract: from Box::into_raw, freed once.
            let mutex = unsafe { Box::from_raw(mutex) };
            // SAFETY: no other thread uses the handle.
            drop(unsafe { (*mutex.held.get()).take() });
            drop(mutex);
        }
        Ok(())
    });
}

/// Locks the mutex, blocking until it is free; the acquire merges the
/// previous unlock's record (R8, R5).
///
/// # Safety
/// `mutex` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_mutex_lock(mutex: *mut heisen_mutex) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        let mutex = unsafe { handle(mutex) }?;
        let guard = mutex.inner.lock().unwrap_or_else(PoisonError::into_inner);
        mutex.hold(guard);
        Ok(())
    })
}

/// Locks the mutex if it is free (and merges as a lock does);
/// `HEISEN_RESULT_WOULD_BLOCK` (nothing merged) if it is held.
///
/// # Safety
/// `mutex` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_mutex_trylock(mutex: *mut heisen_mutex) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        let mutex = unsafe { handle(mutex) }?;
        let guard = match mutex.inner.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Err(heisen_result::WouldBlock),
        };
        mutex.hold(guard);
        Ok(())
    })
}

/// Unlocks the mutex: a release whose record the next lock merges (R3).
/// `HEISEN_RESULT_NOT_OWNER` (nothing changed) if the calling thread does
/// not hold it.
///
/// # Safety
/// `mutex` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_mutex_unlock(mutex: *mut heisen_mutex) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        let mutex = unsafe { handle(mutex) }?;
        drop(mutex.take()?);
        Ok(())
    })
}

/// A compensated barrier (opaque).
#[allow(non_camel_case_types)] // reason: the C name
#[derive(Debug)]
pub struct heisen_barrier {
    inner: Barrier,
}

/// Makes a barrier for `count` threads in `*out`;
/// `HEISEN_RESULT_INVALID_ARGUMENT` for 0. Free it with
/// `heisen_barrier_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_barrier_new(
    count: usize,
    out: *mut *mut heisen_barrier,
) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        unsafe {
            new_handle(out, || {
                if count == 0 {
                    return Err(heisen_result::InvalidArgument);
                }
                calibrate_wrappers();
                Ok(heisen_barrier {
                    inner: Barrier::new(count),
                })
            })
        }
    })
}

/// Frees a barrier; NULL is ignored.
///
/// # Safety
/// `barrier` is NULL or a live handle no thread waits at any more.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_barrier_free(barrier: *mut heisen_barrier) {
    // SAFETY: the caller's contract.
    unsafe { free_handle(barrier) }
}

/// Waits until `count` threads arrived; the leave merges every arrival
/// of the episode (R6 n-to-n, R8). Writes into `*out_leader` (unless NULL)
/// whether this thread is the one the barrier names leader.
///
/// # Safety
/// `barrier` is NULL or a live handle; `out_leader` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_barrier_wait(
    barrier: *mut heisen_barrier,
    out_leader: *mut bool,
) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        let barrier = unsafe { handle(barrier) }?;
        let leader = barrier.inner.wait().is_leader();
        if !out_leader.is_null() {
            // SAFETY: the caller's contract.
            unsafe { write_out(out_leader, leader) };
        }
        Ok(())
    })
}

/// A compensated condition variable (opaque).
#[allow(non_camel_case_types)] // reason: the C name
#[derive(Debug)]
pub struct heisen_condvar {
    inner: Condvar,
}

/// Makes a condition variable in `*out`; free it with
/// `heisen_condvar_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_condvar_new(out: *mut *mut heisen_condvar) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        unsafe {
            new_handle(out, || {
                calibrate_wrappers();
                Ok(heisen_condvar {
                    inner: Condvar::new(),
                })
            })
        }
    })
}

/// Frees a condition variable; NULL is ignored.
///
/// # Safety
/// `condvar` is NULL or a live handle no thread waits on any more.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_condvar_free(condvar: *mut heisen_condvar) {
    // SAFETY: the caller's contract.
    unsafe { free_handle(condvar) }
}

/// Waits on the condition variable: unlocks `mutex` (which the calling
/// thread must hold: `HEISEN_RESULT_NOT_OWNER` otherwise), sleeps until
/// notified (or spuriously, as pthread_cond_wait may), and locks it again.
/// The wake merges the notifier's record (R8).
///
/// # Safety
/// `condvar` and `mutex` are NULL or live handles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_condvar_wait(
    condvar: *mut heisen_condvar,
    mutex: *mut heisen_mutex,
) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        let (condvar, mutex) = unsafe { (handle(condvar)?, handle(mutex)?) };
        let guard = mutex.take()?;
        let guard = condvar
            .inner
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner);
        mutex.hold(guard);
        Ok(())
    })
}

/// Wakes one waiting thread; a release its wake merges (R8).
///
/// # Safety
/// `condvar` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_condvar_notify_one(condvar: *mut heisen_condvar) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        unsafe { handle(condvar) }?.inner.notify_one();
        Ok(())
    })
}

/// Wakes every waiting thread; a release their wakes merge (R8).
///
/// # Safety
/// `condvar` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_condvar_notify_all(condvar: *mut heisen_condvar) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        unsafe { handle(condvar) }?.inner.notify_all();
        Ok(())
    })
}

/// A work item: the program's pointer, carried and never dereferenced.
struct Item(*mut c_void);

// SAFETY: heisen never dereferences the pointer; handing it between
// threads is the program's business, as with any queue of pointers.
unsafe impl Send for Item {}

/// A compensated work queue of `void *` items (opaque): a dequeue merges
/// its own item's enqueue, not the queue's lock (R8; 003 Fig. 11).
#[allow(non_camel_case_types)] // reason: the C name
pub struct heisen_queue {
    inner: WorkQueue<Item>,
}

impl core::fmt::Debug for heisen_queue {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("heisen_queue")
            .field("len", &self.inner.len())
            .finish()
    }
}

/// Makes an empty, open work queue in `*out`; free it with
/// `heisen_queue_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_queue_new(out: *mut *mut heisen_queue) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        unsafe {
            new_handle(out, || {
                calibrate_wrappers();
                Ok(heisen_queue {
                    inner: WorkQueue::new(),
                })
            })
        }
    })
}

/// Frees a queue (the items still in it are the program's; heisen only
/// forgets them); NULL is ignored.
///
/// # Safety
/// `queue` is NULL or a live handle no thread uses any more.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_queue_free(queue: *mut heisen_queue) {
    // SAFETY: the caller's contract.
    unsafe { free_handle(queue) }
}

/// Appends `item` (any pointer, NULL too); the enqueue is a release whose
/// record travels with the item (R3, R8).
///
/// # Safety
/// `queue` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_queue_push(
    queue: *mut heisen_queue,
    item: *mut c_void,
) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        unsafe { handle(queue) }?.inner.push(Item(item));
        Ok(())
    })
}

/// Takes the oldest item into `*out_item`, waiting while the queue is
/// empty and open; merges that item's enqueue (R8).
/// `HEISEN_RESULT_QUEUE_CLOSED` once the queue is closed and empty.
///
/// # Safety
/// `queue` is NULL or a live handle; `out_item` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_queue_pop(
    queue: *mut heisen_queue,
    out_item: *mut *mut c_void,
) -> heisen_result {
    boundary(|| {
        let out = out_arg(out_item)?;
        // SAFETY: the caller's contract.
        let item = unsafe { handle(queue) }?
            .inner
            .pop()
            .ok_or(heisen_result::QueueClosed)?;
        // SAFETY: checked by out_arg.
        unsafe { write_out(out, item.0) };
        Ok(())
    })
}

/// Takes the oldest item if there is one (merging its enqueue);
/// `HEISEN_RESULT_WOULD_BLOCK` (nothing merged) if the queue is empty.
///
/// # Safety
/// `queue` is NULL or a live handle; `out_item` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_queue_try_pop(
    queue: *mut heisen_queue,
    out_item: *mut *mut c_void,
) -> heisen_result {
    boundary(|| {
        let out = out_arg(out_item)?;
        // SAFETY: the caller's contract.
        let item = unsafe { handle(queue) }?
            .inner
            .try_pop()
            .ok_or(heisen_result::WouldBlock)?;
        // SAFETY: checked by out_arg.
        unsafe { write_out(out, item.0) };
        Ok(())
    })
}

/// Closes the queue: threads waiting in `heisen_queue_pop` on an empty
/// queue return `HEISEN_RESULT_QUEUE_CLOSED`. The close is a release they
/// merge (R3). Items pushed before (or after) are still handed out.
///
/// # Safety
/// `queue` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_queue_close(queue: *mut heisen_queue) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        unsafe { handle(queue) }?.inner.close();
        Ok(())
    })
}
