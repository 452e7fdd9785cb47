//! Threads that call `exit` at once: the report must not be cut short.
//!
//! The report is written by an `atexit` handler ([`Runtime::finish`]),
//! which `exit` runs on whichever thread takes it from the list. Before
//! glibc 2.41 (bug 31997), two threads that call `exit` at once both run
//! the handlers, each taking the next from the list, and the first to run
//! out of handlers calls `_exit`: the process ends while the other thread
//! is still writing the report, which is then empty or missing. GCC's
//! OpenMP test `sections-2.c` does this (every section calls `exit`), and
//! so does any program whose worker threads `exit` on an error at the same
//! moment.
//!
//! The interposers define `exit`
//! ([`interpose_exit!`](crate::interpose_exit)): the first thread to call
//! it goes on at once, as does a thread calling it again from a handler;
//! another thread calling it meanwhile waits until the report is written
//! ([`Writer::wait`]), then goes on into libc's `exit` as it would have.
//! glibc 2.41 blocks such a thread for good, and so do musl and bionic;
//! waiting only for the report, and for a bounded time, changes the
//! program's behaviour less on the glibc it runs on: a handler of the
//! first thread that waits for a lock the second holds delays the exit by
//! [`WAIT_START`] and does not hang it. [`Runtime::finish`] called by
//! another thread while the report is being written (`MPI_Finalize` on
//! one thread, `exit` on another) waits the same way. What the threads in
//! `exit` agree on lives in the process's one runtime ([`Writer`]), so
//! that two interposers preloaded together, each defining `exit`, wait
//! once in all.
//!
//! Not covered: `main` returning (libc's own call of `exit`, which no
//! library interposes) while another thread calls `exit`. The runtime's
//! handler counts as a call of `exit` ([`Writer::entered`]), but it runs
//! last, after the program's handlers and destructors: a thread that
//! calls `exit` before then still races with the main thread, as without
//! heisen.
//!
//! [`Runtime::finish`]: crate::Runtime::finish

use core::ffi::c_int;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;

/// The calling thread's key: its process id in the high half, its thread
/// id in the low half, never 0. A child of `fork` has another process id,
/// so a key its parent left behind is recognised as stale.
pub fn this_thread() -> u64 {
    // SAFETY: getpid and gettid always succeed.
    #[allow(unsafe_code)] // reason: the libc calls
    let (pid, tid) = unsafe { (libc::getpid(), libc::gettid()) };
    (u64::from(pid as u32) << 32) | u64::from(tid as u32)
}

/// Whether `key` ([`this_thread`]) is a thread of the calling process.
pub fn of_this_process(key: u64) -> bool {
    key >> 32 == this_thread() >> 32
}

/// `CLOCK_MONOTONIC` in ns, never 0.
fn monotonic_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a timespec to write.
    #[allow(unsafe_code)] // reason: the libc call
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t);
    }
    (t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64).max(1)
}

/// The report's writing as threads in `exit` see it, kept in the
/// process's one runtime ([`Runtime::finish`]), so that every heisen
/// library in the process (each with its own copy of this code, two
/// interposers preloaded together each defining `exit`) agrees on it.
///
/// [`Runtime::finish`]: crate::Runtime::finish
#[derive(Debug)]
pub struct Writer {
    /// Who writes the report: 0 before anyone does, the writing thread's
    /// key while it does ([`this_thread`]), `u64::MAX` after.
    state: AtomicU64,
    /// The first thread in `exit` ([`Writer::entered`]), 0 while none is.
    exiting: AtomicU64,
    /// When the first wait began ([`Writer::wait`]), `CLOCK_MONOTONIC` ns;
    /// 0 before. The bounds run from it for every waiter and every wait
    /// of one thread (an `exit` that calls the next library's `exit`
    /// waits once in all).
    waiting_since: AtomicU64,
}

/// [`Writer`]'s state once the report is written.
const WRITTEN: u64 = u64::MAX;

/// How long [`Writer::wait`] waits for the report's writing to begin.
pub const WAIT_START: Duration = Duration::from_secs(2);

/// How long [`Writer::wait`] waits for the report's writing to end.
pub const WAIT_WRITE: Duration = Duration::from_secs(60);

impl Writer {
    /// No report written yet, no thread in `exit`.
    pub const fn new() -> Writer {
        Writer {
            state: AtomicU64::new(0),
            exiting: AtomicU64::new(0),
            waiting_since: AtomicU64::new(0),
        }
    }

    /// Makes the calling thread the writer, unless the report is written
    /// or another thread of this process writes it (`None`). A writer its
    /// parent left behind in a forked child does not count. The report
    /// counts as written when the returned guard drops, whatever happened.
    /// A thread that writes it already gets `None` too: its writing is
    /// not done.
    pub fn claim(&self) -> Option<Claim<'_>> {
        take(&self.state, this_thread()).ok().map(|()| Claim(self))
    }

    /// Notes that the calling thread is in `exit`. True when it is the
    /// first of its process (or was already), false when another thread
    /// was first.
    pub fn entered(&self) -> bool {
        let me = this_thread();
        take(&self.exiting, me).map_or_else(|held| held == me, |()| true)
    }

    /// Waits until the report is written by another thread of this
    /// process. Returns at once when it is written, when this thread is
    /// the one writing it, or when none will be (`off` before any writer:
    /// a disabled runtime, a forked child's). Bounded, from the first wait
    /// of any thread: at most [`WAIT_START`] for the writing to begin
    /// (another thread in `exit` runs the program's own handlers first)
    /// and [`WAIT_WRITE`] for it to end, after which the caller goes on as
    /// without heisen.
    pub fn wait(&self, off: impl Fn() -> bool) {
        let me = this_thread();
        let now = monotonic_ns();
        let since =
            match self
                .waiting_since
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => now,
                Err(earlier) => earlier,
            };
        loop {
            let waited = Duration::from_nanos(monotonic_ns().saturating_sub(since));
            // `off` before the state: `finish` claims before it sets `off`,
            // so `off` seen with no writer is a runtime that will write
            // none, not one whose writer has just begun.
            let off = off();
            let done = match self.state.load(Ordering::Acquire) {
                WRITTEN => true,
                0 => off || waited > WAIT_START,
                w => w == me || !of_this_process(w) || waited > WAIT_WRITE,
            };
            if done {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Puts `me` ([`this_thread`]) into `cell` unless it holds [`WRITTEN`] or
/// a key of this process (`me`'s own included); a key a forked child's
/// parent left does not count. `Err` gives what it holds.
fn take(cell: &AtomicU64, me: u64) -> Result<(), u64> {
    let mut seen = cell.load(Ordering::Acquire);
    loop {
        if seen == WRITTEN || (seen != 0 && of_this_process(seen)) {
            return Err(seen);
        }
        match cell.compare_exchange(seen, me, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Ok(()),
            Err(now) => seen = now,
        }
    }
}

impl Default for Writer {
    fn default() -> Writer {
        Writer::new()
    }
}

/// The writer's claim ([`Writer::claim`]): the report is written when it
/// drops.
#[derive(Debug)]
pub struct Claim<'a>(&'a Writer);

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.0.state.store(WRITTEN, Ordering::Release);
    }
}

/// glibc's `PTHREAD_CANCEL_DISABLE`.
const PTHREAD_CANCEL_DISABLE: c_int = 1;

#[allow(unsafe_code)] // reason: a libc function the libc crate does not declare for Linux
unsafe extern "C" {
    fn pthread_setcancelstate(state: c_int, old: *mut c_int) -> c_int;
}

/// What an interposed `exit` does before libc's: a thread that is not the
/// first in `exit` waits for the report ([`Runtime::wait_for_report`]),
/// with cancellation off (the wait sleeps, a cancellation point; `exit`
/// is none).
///
/// [`Runtime::wait_for_report`]: crate::Runtime::wait_for_report
pub fn before_exit() {
    let Some(rt) = crate::runtime::existing() else {
        return;
    };
    if rt.enter_exit() {
        return;
    }
    let mut old: c_int = 0;
    // SAFETY: a valid state and a place for the old one.
    #[allow(unsafe_code)] // reason: the libc call
    unsafe {
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &mut old);
    }
    rt.wait_for_report();
    // SAFETY: as above, restoring the state the thread had.
    #[allow(unsafe_code)] // reason: the libc call
    unsafe {
        pthread_setcancelstate(old, &mut old);
    }
}

/// Defines `exit` in the calling library (an interposer, loaded before
/// libc): [`before_exit`], then the next `exit` in the lookup order
/// (libc's, or another heisen interposer's). Only for libraries that are
/// not also built as a static archive: a program linked fully statically
/// would get two definitions of `exit`. Left out of builds that link the
/// C library statically (`crt-static`), where there is no next `exit` to
/// find.
#[macro_export]
macro_rules! interpose_exit {
    () => {
        /// `exit`, interposed: a thread that calls it while another is
        /// already in it waits until heisen's report is written
        /// (`heisen_shmem::exit`), then goes on into libc's.
        ///
        /// # Safety
        ///
        /// As libc's `exit`.
        #[allow(unsafe_code)] // reason: the interposed libc entry point
        #[cfg(not(target_feature = "crt-static"))]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn exit(status: ::core::ffi::c_int) -> ! {
            // A panic must not unwind into the program.
            let _ = ::std::panic::catch_unwind($crate::exit::before_exit);
            // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name.
            let next = unsafe {
                $crate::exit::libc::dlsym($crate::exit::libc::RTLD_NEXT, c"exit".as_ptr())
            };
            if next.is_null() {
                // SAFETY: ends the process without the handlers, as no
                // libc `exit` was found to run them.
                unsafe { $crate::exit::libc::_exit(status) }
            }
            // SAFETY: the next definition of `exit`, of that type.
            let next: unsafe extern "C" fn(::core::ffi::c_int) -> ! =
                unsafe { ::core::mem::transmute(next) };
            // SAFETY: as the caller's.
            unsafe { next(status) }
        }
    };
}

#[doc(hidden)]
pub use libc;

#[cfg(test)]
mod tests {
    use super::*;

    /// A key of the calling thread as its parent would have left it before
    /// a `fork` (another process id).
    fn parents() -> u64 {
        this_thread() ^ (1 << 32)
    }

    #[test]
    fn one_writer_claims_and_a_second_claim_even_its_own_gets_none() {
        let w = Writer::new();
        let claim = w.claim().expect("the first claim");
        assert!(
            w.claim().is_none(),
            "the writer again: its writing is not done"
        );
        let other = std::thread::scope(|s| s.spawn(|| w.claim().is_none()).join());
        assert!(other.expect("thread"));
        drop(claim);
        assert_eq!(w.state.load(Ordering::Acquire), WRITTEN);
        assert!(w.claim().is_none(), "written");
        // Written: waiting returns at once, off or not.
        w.wait(|| false);
    }

    #[test]
    fn a_writer_or_an_exiting_thread_left_by_the_parent_of_a_fork_does_not_count() {
        let w = Writer::new();
        w.state.store(parents(), Ordering::Release);
        w.exiting.store(parents(), Ordering::Release);
        // A stale writer: no wait, and the child may claim.
        w.wait(|| false);
        assert!(w.entered(), "the child's first thread in exit");
        assert!(w.claim().is_some());
    }

    #[test]
    fn the_first_thread_in_exit_goes_on_again_and_others_do_not() {
        let w = Writer::new();
        assert!(w.entered());
        assert!(w.entered(), "exit again from one of its handlers");
        let other = std::thread::scope(|s| s.spawn(|| w.entered()).join());
        assert!(!other.expect("thread"));
    }

    #[test]
    fn with_no_writer_a_runtime_that_is_off_writes_none_and_nobody_waits() {
        let w = Writer::new();
        // Disabled, or a forked child: `off` and no writer.
        w.wait(|| true);
        // The writer itself does not wait for its own writing.
        let _claim = w.claim().expect("claim");
        w.wait(|| true);
        w.wait(|| false);
    }

    #[test]
    fn a_waiter_returns_once_another_thread_has_written() {
        let w = Writer::new();
        let claim = w.claim().expect("claim");
        let claimed = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                claimed.wait();
                w.wait(|| true);
                w.state.load(Ordering::Acquire)
            });
            claimed.wait();
            drop(claim);
            assert_eq!(waiter.join().expect("thread"), WRITTEN);
        });
    }
}
