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
//! one thread, `exit` on another) waits the same way. The runtime's own
//! handler counts as a call of `exit` ([`entered`]), for a program whose
//! main thread returns (libc's internal call, which no library can
//! interpose) while another thread calls `exit`; when that thread called
//! it first, its handlers and the main thread's still race, as without
//! heisen.
//!
//! [`Runtime::finish`]: crate::Runtime::finish

use core::sync::atomic::{AtomicU64, Ordering};

/// The thread in `exit` first ([`this_thread`]), 0 while none is.
static EXITING: AtomicU64 = AtomicU64::new(0);

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

/// Notes that the calling thread is in `exit`. True when it is the first
/// of its process (or was already), false when another thread was first.
pub fn entered() -> bool {
    let me = this_thread();
    let mut seen = EXITING.load(Ordering::Acquire);
    loop {
        if seen == me {
            return true;
        }
        if seen != 0 && of_this_process(seen) {
            return false;
        }
        // None yet, or one left by the parent of a fork.
        match EXITING.compare_exchange(seen, me, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(now) => seen = now,
        }
    }
}

/// Who writes the report ([`Runtime::finish`]): 0 before anyone does,
/// the writing thread's key while it does ([`this_thread`]), `u64::MAX`
/// after.
///
/// [`Runtime::finish`]: crate::Runtime::finish
#[derive(Debug)]
pub struct Writer(AtomicU64);

/// [`Writer`]'s value once the report is written.
const WRITTEN: u64 = u64::MAX;

/// How long [`Writer::wait`] waits for the report's writing to begin.
pub const WAIT_START: core::time::Duration = core::time::Duration::from_secs(2);

/// How long [`Writer::wait`] waits for the report's writing to end, from
/// its call.
pub const WAIT_WRITE: core::time::Duration = core::time::Duration::from_secs(60);

impl Writer {
    /// No report written yet.
    pub const fn new() -> Writer {
        Writer(AtomicU64::new(0))
    }

    /// Makes the calling thread the writer, unless the report is written
    /// or another thread of this process writes it (`None`). A writer its
    /// parent left behind in a forked child does not count. The report
    /// counts as written when the returned guard drops, whatever happened.
    pub fn claim(&self) -> Option<Claim<'_>> {
        let me = this_thread();
        let mut seen = self.0.load(Ordering::Acquire);
        loop {
            if seen == WRITTEN || (seen != 0 && of_this_process(seen)) {
                return None;
            }
            match self
                .0
                .compare_exchange(seen, me, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(Claim(self)),
                Err(now) => seen = now,
            }
        }
    }

    /// Waits until the report is written by another thread of this
    /// process. Returns at once when it is written, when this thread is
    /// the one writing it, or when none will be (`off` before any writer:
    /// a disabled runtime, a forked child's). Bounded: at most
    /// [`WAIT_START`] for the writing to begin (another thread in `exit`
    /// runs the program's own handlers first) and [`WAIT_WRITE`] for it to
    /// end, after which the caller goes on as without heisen.
    pub fn wait(&self, off: impl Fn() -> bool) {
        let me = this_thread();
        let start = std::time::Instant::now();
        loop {
            let waited = start.elapsed();
            let done = match self.0.load(Ordering::Acquire) {
                WRITTEN => true,
                0 => off() || waited > WAIT_START,
                w => w == me || !of_this_process(w) || waited > WAIT_WRITE,
            };
            if done {
                return;
            }
            std::thread::sleep(core::time::Duration::from_millis(1));
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
        self.0.0.store(WRITTEN, Ordering::Release);
    }
}

/// What an interposed `exit` does before libc's: a thread that is not the
/// first in `exit` waits for the report ([`Runtime::wait_for_report`]).
///
/// [`Runtime::wait_for_report`]: crate::Runtime::wait_for_report
pub fn before_exit() {
    if !entered()
        && let Some(rt) = crate::runtime::existing()
    {
        rt.wait_for_report();
    }
}

/// Defines `exit` in the calling library (an interposer, loaded before
/// libc): [`before_exit`], then the next `exit` in the lookup order
/// (libc's, or another heisen interposer's). Only for libraries that are
/// not also built as a static archive: a program linked fully statically
/// would get two definitions of `exit`.
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
