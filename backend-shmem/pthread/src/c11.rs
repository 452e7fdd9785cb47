//! C11 threads (`<threads.h>`): the same hand-offs as their pthread
//! counterparts (R8; 003 §4, Fig. 10a). glibc implements `thrd_create`,
//! `mtx_*` and `cnd_*` on its internal pthread functions, never through
//! the interposed symbols, so without these wrappers a C11 program's
//! threads started unmerged and its mutexes and condition variables were
//! no hand-offs at all.
//!
//! glibc's `mtx_t` and `cnd_t` hold a `pthread_mutex_t` and a
//! `pthread_cond_t` at their start and `thrd_t` is a `pthread_t`, so
//! each object shares its table entry with the pthread calls at the same
//! address (a program may mix them). Each wrapper calls the C11 original
//! and returns its result; the hooks of `cnd_*wait` read it through
//! `posix`, the inverse of glibc's `thrd_err_map`, and the others only
//! compare it with `thrd_success`, which is 0 in both codings.

use core::ffi::{c_int, c_void};
use core::panic::AssertUnwindSafe;
use std::panic::catch_unwind;

use libc::{pthread_cond_t, pthread_mutex_t, pthread_t, timespec};

use crate::objects::{
    before_unlock, lock_at_once, locking, mutex_destroyed, mutex_made, notify, taken_by_try,
    waiting,
};
use crate::{destroyed, hook, real, threads};

// glibc's `<threads.h>` (2.28 and later): its result codes.
const THRD_SUCCESS: c_int = 0;
const THRD_BUSY: c_int = 1;
const THRD_ERROR: c_int = 2;
const THRD_NOMEM: c_int = 3;
const THRD_TIMEDOUT: c_int = 4;

/// A C11 result as the POSIX error code glibc mapped it from
/// (`thrd_err_map`); `thrd_error` stands for every other error, read as
/// `EINVAL` (the call changed nothing).
fn posix(rc: c_int) -> c_int {
    match rc {
        THRD_SUCCESS => 0,
        THRD_BUSY => libc::EBUSY,
        THRD_NOMEM => libc::ENOMEM,
        THRD_TIMEDOUT => libc::ETIMEDOUT,
        _ => libc::EINVAL,
    }
}

/// `thrd_create`: a release the thread's start merges; its end waits for
/// `thrd_join` (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn thrd_create(
    t: *mut pthread_t,
    routine: extern "C-unwind" fn(*mut c_void) -> c_int,
    arg: *mut c_void,
) -> c_int {
    threads::create(routine, arg, |trampoline, start| {
        // SAFETY: the caller's arguments, with our trampoline and its box.
        unsafe { real::thrd_create(t, trampoline, start) }
    })
}

/// `thrd_join`: merges the thread's end (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn thrd_join(t: pthread_t, result: *mut c_int) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    threads::joining(t, || unsafe { real::thrd_join(t, result) })
}

/// `thrd_detach`: the thread's end will not be joined.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn thrd_detach(t: pthread_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::thrd_detach(t) };
    if rc == THRD_SUCCESS {
        threads::mark_detached(t);
    }
    rc
}

/// `thrd_exit`: the thread's end (R8), then the original, which unwinds
/// the thread's frames and never returns.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn thrd_exit(result: c_int) -> ! {
    let _ = catch_unwind(AssertUnwindSafe(threads::ended));
    // SAFETY: the caller's argument; the original ends the thread.
    unsafe { real::thrd_exit(result) }
}

/// `mtx_init`: a fresh entry for the address.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn mtx_init(m: *mut pthread_mutex_t, kind: c_int) -> c_int {
    mutex_made(m as usize);
    // SAFETY: the caller's arguments, passed on.
    unsafe { real::mtx_init(m, kind) }
}

/// `mtx_destroy`: the entry is reset and freed for the next object.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn mtx_destroy(m: *mut pthread_mutex_t) {
    // SAFETY: the caller's argument, passed on.
    unsafe { real::mtx_destroy(m) };
    mutex_destroyed(0, m as usize);
}

/// `mtx_lock`: merges the previous release (R8), by the same two paths as
/// `pthread_mutex_lock` (a free mutex taken at once, else a timed wait).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn mtx_lock(m: *mut pthread_mutex_t) -> c_int {
    if let Some(Some(rc)) = hook(|st| lock_at_once(st, m)) {
        // The pthread trylock's answer: 0, or a robust mutex's state,
        // which a C11 mutex never is.
        return if rc == 0 { THRD_SUCCESS } else { THRD_ERROR };
    }
    // SAFETY: the caller's argument, passed on. Only success is 0 in both
    // codings, which is all the hook reads.
    locking(m, || unsafe { real::mtx_lock(m) })
}

/// `mtx_timedlock`: as `mtx_lock`; a timeout merges nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn mtx_timedlock(
    m: *mut pthread_mutex_t,
    t: *const timespec,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    locking(m, || unsafe { real::mtx_timedlock(m, t) })
}

/// `mtx_trylock`: a success merges the previous release; `thrd_busy`
/// merges nothing (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn mtx_trylock(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::mtx_trylock(m) };
    if rc == THRD_SUCCESS {
        hook(|st| taken_by_try(st, m as usize));
    }
    rc
}

/// `mtx_unlock`: the outermost unlock is a release (R3, R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn mtx_unlock(m: *mut pthread_mutex_t) -> c_int {
    hook(|st| before_unlock(st, m));
    // SAFETY: the caller's argument, passed on.
    unsafe { real::mtx_unlock(m) }
}

/// `cnd_wait`: merges the notifier and the mutex (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn cnd_wait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    waiting(c, m, || unsafe { real::cnd_wait(c, m) }, posix)
}

/// `cnd_timedwait`: a timeout merges only the mutex (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn cnd_timedwait(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    t: *const timespec,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    waiting(c, m, || unsafe { real::cnd_timedwait(c, m, t) }, posix)
}

/// `cnd_signal`: a release the woken wait merges (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn cnd_signal(c: *mut pthread_cond_t) -> c_int {
    hook(|st| notify(st, c));
    // SAFETY: the caller's argument, passed on.
    unsafe { real::cnd_signal(c) }
}

/// `cnd_broadcast`: a release every woken wait merges (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn cnd_broadcast(c: *mut pthread_cond_t) -> c_int {
    hook(|st| notify(st, c));
    // SAFETY: the caller's argument, passed on.
    unsafe { real::cnd_broadcast(c) }
}

/// `cnd_destroy`: the entry is freed for the next object.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn cnd_destroy(c: *mut pthread_cond_t) {
    // SAFETY: the caller's argument, passed on.
    unsafe { real::cnd_destroy(c) };
    destroyed(0, c as usize, |st| &st.conds, |_| {});
}
