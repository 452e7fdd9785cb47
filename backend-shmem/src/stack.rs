//! The stack heisen's code needs on a program's thread, and where it
//! finds it: a C program may give its threads 16 or 64 KiB (R12: it must
//! not crash for that). Registration is refused below
//! [`REGISTER_STACK`] (the thread runs unmeasured); calibrations and
//! report work run on a helper thread ([`with_stack`]) when the thread
//! has too little left.

use core::ptr;

/// A reference handed to [`with_stack`]'s helper thread while its owner
/// waits for it (the owner does nothing meanwhile, so no two threads use
/// the referent at once).
pub(crate) struct Handed<'a, T>(pub(crate) &'a T);

// SAFETY: the referent is used by one thread at a time: the helper while
// the thread that handed it over waits in `with_stack`.
#[allow(unsafe_code)] // reason: a hand-over the type system cannot see
unsafe impl<T> Send for Handed<'_, T> {}

/// Stack a registration needs. The thread's state (146 KiB: the kernel's
/// and the statistics' fixed tables) is built in place on the heap
/// (`ThreadState::init_in_place`); what remains on the stack is the
/// kernel's 4 KiB value (built in place too in a release build), the
/// registration's frames and the wrapped call's. Measured on x86-64 Linux
/// with glibc 2.36 by painting a thread's stack (`pthread_attr_setstack`)
/// and counting the bytes touched by a thread that locks one mutex:
/// 7.4 KiB plain (glibc's thread descriptor and TLS sit in the same
/// block), 8.2 KiB under the release interposer (its start wrapper, the
/// registration and the lock: 0.8 KiB), 17.5 KiB under a debug one. A
/// thread of `PTHREAD_STACK_MIN` (16 KiB) has about 8.8 KiB left when it
/// starts. Measured with a 4 KiB threshold, two programs of the Open POSIX
/// Test Suite (`pthread_join_6-3`, `pthread_cond_broadcast_1-2`) crashed
/// in their wrapped waits, so the release threshold is 12 KiB: 16 KiB
/// threads run unmeasured (one line at exit), 64 KiB ones are measured.
/// A thread with less left than this runs unmeasured instead of crashing.
pub(crate) const REGISTER_STACK: usize = if cfg!(debug_assertions) {
    16 * 1024
} else {
    12 * 1024
};

/// Stack a calibration needs (`calibrate::runtime`, the backends'
/// calibrations: their loops, samples and two-thread rounds). Measured
/// when the scratch states were still built on the stack: a debug build
/// crashed with 256 KiB, a release build with 104 KiB; kept at what
/// those needed, since a calibration runs once per process and the
/// fallback (a thread of its own, [`with_stack_room`]) costs nothing
/// that matters.
const CALIBRATE_STACK: usize = if cfg!(debug_assertions) {
    512 * 1024
} else {
    192 * 1024
};

/// Runs `f` (a calibration) here, or on a helper thread when the calling
/// thread has less than `CALIBRATE_STACK` left (`with_stack`).
pub fn with_stack_room<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    with_stack(CALIBRATE_STACK, f)
}

/// Stack the report work needs: an ended thread's report built as one
/// value (`report::ended_text`: the fixed tables' 111 KiB, and their
/// encoding) or the whole report written (`report::write`). Measured with
/// the tables of 40 KiB they had then: a thread of 64 KiB crashed keeping
/// the report of the slot it took over, one of 128 KiB did not; the
/// tables are now almost three times larger, and the threshold is eight
/// times 128 KiB.
pub(crate) const REPORT_STACK: usize = if cfg!(debug_assertions) {
    2 * 1024 * 1024
} else {
    1024 * 1024
};

/// Stack of the helper thread [`with_stack`] makes.
const HELPER_STACK: usize = 8 * 1024 * 1024;

/// Runs `f` here when the calling thread has `need` bytes of stack left,
/// else on a helper thread with [`HELPER_STACK`] bytes, waiting for it (a
/// program's thread of 64 KiB that ends the process or takes over an
/// ended thread's slot would otherwise overflow its stack in heisen's
/// report code). The helper is made with libc's own `pthread_create`
/// (looked up in libc, not an interposer's), so it is never registered,
/// measured or wrapped, and takes no lock the caller may hold. Where no
/// thread can be made, `f` runs here. A panic in `f` is resumed here.
/// `f` and its result cross to the helper and back, hence `Send`; a
/// caller that hands over a reference to a thread's state it alone uses
/// wraps it in [`Handed`].
pub(crate) fn with_stack<R: Send>(need: usize, f: impl FnOnce() -> R + Send) -> R {
    if stack_left(current_tid()).is_none_or(|left| left >= need) {
        return f();
    }
    helper::run(f)
}

/// The helper thread of [`with_stack`].
mod helper {
    use core::ffi::c_void;
    use core::panic::AssertUnwindSafe;
    use core::ptr;
    use std::panic::{catch_unwind, resume_unwind};

    type Create = unsafe extern "C" fn(
        *mut libc::pthread_t,
        *const libc::pthread_attr_t,
        extern "C" fn(*mut c_void) -> *mut c_void,
        *mut c_void,
    ) -> libc::c_int;
    type Join = unsafe extern "C" fn(libc::pthread_t, *mut *mut c_void) -> libc::c_int;

    /// The work and its outcome, on the caller's stack while it waits.
    struct Job<F, R> {
        f: Option<F>,
        outcome: Option<std::thread::Result<R>>,
    }

    extern "C" fn body<F: FnOnce() -> R, R>(job: *mut c_void) -> *mut c_void {
        // SAFETY: `run` passes its own job and waits for this thread to
        // end before it touches the job again.
        #[allow(unsafe_code)] // reason: the job is handed over by pointer
        let job = unsafe { &mut *job.cast::<Job<F, R>>() };
        if let Some(f) = job.f.take() {
            job.outcome = Some(catch_unwind(AssertUnwindSafe(f)));
        }
        ptr::null_mut()
    }

    /// libc's own `name`, past any interposer: looked up in the C library
    /// itself (glibc 2.34 and later; `libpthread.so.0` before), not with
    /// `RTLD_NEXT`, which from a program's own code finds a preloaded
    /// interposer first. Null when not found.
    fn libc_own(name: &core::ffi::CStr) -> *mut c_void {
        for library in [c"libc.so.6", c"libpthread.so.0"] {
            // SAFETY: `dlopen` with RTLD_NOLOAD only finds a library that
            // is loaded already (and counts a reference, released below);
            // `dlsym` with a valid handle and a NUL-terminated name.
            #[allow(unsafe_code)] // reason: the libc calls
            unsafe {
                let handle = libc::dlopen(library.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
                if handle.is_null() {
                    continue;
                }
                let symbol = libc::dlsym(handle, name.as_ptr());
                libc::dlclose(handle);
                if !symbol.is_null() {
                    return symbol;
                }
            }
        }
        ptr::null_mut()
    }

    /// Runs `f` on a thread of its own and returns what it returned.
    pub(super) fn run<R>(f: impl FnOnce() -> R) -> R {
        let (create, join) = (libc_own(c"pthread_create"), libc_own(c"pthread_join"));
        if create.is_null() || join.is_null() {
            return f();
        }
        // SAFETY: both symbols are libc's functions of these signatures;
        // the job is on this stack and the helper, the only other user of
        // it, is joined before the job is read or dropped; the attribute
        // object is destroyed only after a successful init.
        #[allow(unsafe_code)] // reason: calling libc through dlsym's pointers
        unsafe {
            let create: Create = core::mem::transmute::<*mut c_void, Create>(create);
            let join: Join = core::mem::transmute::<*mut c_void, Join>(join);
            let mut job = Job {
                f: Some(f),
                outcome: None,
            };
            let mut attr: libc::pthread_attr_t = core::mem::zeroed();
            let mut thread: libc::pthread_t = 0;
            let made = libc::pthread_attr_init(&mut attr) == 0 && {
                let made = libc::pthread_attr_setstacksize(&mut attr, super::HELPER_STACK) == 0
                    && create(
                        &mut thread,
                        &attr,
                        body_of(&job),
                        ptr::addr_of_mut!(job).cast(),
                    ) == 0;
                libc::pthread_attr_destroy(&mut attr);
                made
            };
            // The job lives on this stack: it may not be touched again
            // before the helper is gone.
            if made && join(thread, ptr::null_mut()) != 0 {
                std::process::abort();
            }
            match job.outcome {
                Some(Ok(r)) => r,
                Some(Err(panic)) => resume_unwind(panic),
                // No thread: run it here.
                None => (job.f.take().expect("not run"))(),
            }
        }
    }

    /// [`body`] for the job's types.
    fn body_of<F: FnOnce() -> R, R>(_: &Job<F, R>) -> extern "C" fn(*mut c_void) -> *mut c_void {
        body::<F, R>
    }
}

/// Whether the message on small stacks was noted (once per process).
pub(crate) static SMALL_STACK_NOTED: core::sync::atomic::AtomicBool =
    core::sync::atomic::AtomicBool::new(false);

/// Whether the calling thread has [`REGISTER_STACK`] bytes of stack left.
pub(crate) fn room_to_register(tid: i32) -> bool {
    stack_left(tid).is_none_or(|left| left >= REGISTER_STACK)
}

/// Bytes of stack the calling thread has left below this frame; `None`
/// for the main thread (its stack grows up to the resource limit) and a
/// thread whose stack cannot be asked for (assumed to have enough).
fn stack_left(tid: i32) -> Option<usize> {
    // SAFETY: getpid has no preconditions.
    #[allow(unsafe_code)] // reason: the libc call
    if tid == unsafe { libc::getpid() } {
        return None;
    }
    let here = 0u8;
    let here = core::ptr::addr_of!(here) as usize;
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread, which
    // is destroyed after pthread_attr_getstack read its stack's lowest
    // address (stacks grow down on every target glibc supports but one).
    #[allow(unsafe_code)] // reason: the libc calls
    unsafe {
        let mut attr: libc::pthread_attr_t = core::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut low: *mut libc::c_void = ptr::null_mut();
        let mut size: libc::size_t = 0;
        let rc = libc::pthread_attr_getstack(&attr, &mut low, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (rc == 0).then(|| here.saturating_sub(low as usize))
    }
}

/// The kernel's id for this thread.
pub(crate) fn current_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    #[allow(unsafe_code)] // reason: the libc call
    unsafe {
        libc::gettid()
    }
}
