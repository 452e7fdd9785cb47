//! The interposed functions' originals, found once with
//! `dlsym(RTLD_NEXT, name)`: the next definition after this library in
//! the process's lookup order (libc's, libgomp's). A libgomp that a
//! plugin loaded with `RTLD_LOCAL` (a Python extension's own copy) is not
//! in that order: its program's calls still come here, and the original
//! is then looked up in every loaded object but this one.

#![allow(non_snake_case)] // reason: libgomp's entry points are named so
#![allow(clippy::too_many_arguments)] // reason: libgomp's combined loops take eight

use core::ffi::{c_int, c_long, c_uint, c_ulong, c_void};
use core::sync::atomic::{AtomicPtr, Ordering};

use libc::{
    clockid_t, pthread_attr_t, pthread_barrier_t, pthread_cond_t, pthread_mutex_t,
    pthread_rwlock_t, pthread_t, sem_t, timespec,
};

/// The next definition of `name`, or the one in any other loaded object;
/// aborts with a message if there is none (a program that calls a
/// function no object defines cannot go on anyway).
#[cold]
fn next(name: &core::ffi::CStr, cache: &AtomicPtr<c_void>) -> *mut c_void {
    // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name.
    let mut p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    if p.is_null() {
        p = anywhere_else(name);
    }
    if p.is_null() {
        let msg = b"heisen-pthread: the original of an interposed function is missing\n";
        // SAFETY: writing a static buffer to stderr, then aborting.
        unsafe {
            libc::write(2, msg.as_ptr().cast(), msg.len());
            libc::abort();
        }
    }
    cache.store(p, Ordering::Release);
    p
}

/// `name` as defined by a loaded object other than this library (a
/// libgomp loaded with `RTLD_LOCAL`); null if none does.
fn anywhere_else(name: &core::ffi::CStr) -> *mut c_void {
    struct Search<'a> {
        name: &'a core::ffi::CStr,
        ours: *mut c_void,
        found: *mut c_void,
    }
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `data` is the `Search` below; `info` is the loader's.
        let (search, info) = unsafe { (&mut *data.cast::<Search<'_>>(), &*info) };
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: the loader's NUL-terminated object name; RTLD_NOLOAD
        // opens nothing new, only takes a handle on a loaded object.
        let handle = unsafe { libc::dlopen(info.dlpi_name, libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if handle.is_null() {
            return 0;
        }
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(handle, search.name.as_ptr()) };
        // SAFETY: the handle just taken.
        unsafe { libc::dlclose(handle) };
        if !p.is_null() && object_of(p) != search.ours {
            search.found = p;
            return 1;
        }
        0
    }
    let mut search = Search {
        name,
        ours: object_of(anywhere_else as *mut c_void),
        found: core::ptr::null_mut(),
    };
    // SAFETY: `each` reads only what the loader passes and `search`.
    unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut search).cast()) };
    search.found
}

/// The base address of the object that holds `p` (null: none).
fn object_of(p: *mut c_void) -> *mut c_void {
    let mut info: libc::Dl_info = unsafe {
        // SAFETY: `Dl_info` is plain C data; all zeros is a valid value.
        core::mem::zeroed()
    };
    // SAFETY: dladdr reads the loader's tables and writes `info`.
    if unsafe { libc::dladdr(p, &mut info) } == 0 {
        return core::ptr::null_mut();
    }
    info.dli_fbase
}

macro_rules! originals {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {$(
        /// Calls the original.
        ///
        /// # Safety
        /// The arguments obey the function's C contract.
        #[inline]
        pub(crate) unsafe fn $name($($arg: $ty),*) -> $ret {
            static CACHE: AtomicPtr<c_void> = AtomicPtr::new(core::ptr::null_mut());
            let mut p = CACHE.load(Ordering::Acquire);
            if p.is_null() {
                let name = concat!(stringify!($name), "\0");
                let name = core::ffi::CStr::from_bytes_with_nul(name.as_bytes())
                    .expect("a literal with one NUL at its end");
                p = next(name, &CACHE);
            }
            // SAFETY: `p` is the libc function of this name, whose C
            // signature is the one declared here.
            let f = unsafe {
                core::mem::transmute::<*mut c_void, unsafe extern "C-unwind" fn($($ty),*) -> $ret>(p)
            };
            // SAFETY: the caller's contract.
            unsafe { f($($arg),*) }
        }
    )*};
}

originals! {
    pthread_mutex_init(m: *mut pthread_mutex_t, a: *const libc::pthread_mutexattr_t) -> c_int;
    pthread_mutex_destroy(m: *mut pthread_mutex_t) -> c_int;
    pthread_mutex_lock(m: *mut pthread_mutex_t) -> c_int;
    pthread_mutex_trylock(m: *mut pthread_mutex_t) -> c_int;
    pthread_mutex_timedlock(m: *mut pthread_mutex_t, t: *const timespec) -> c_int;
    pthread_mutex_clocklock(m: *mut pthread_mutex_t, clock: clockid_t, t: *const timespec) -> c_int;
    pthread_mutex_unlock(m: *mut pthread_mutex_t) -> c_int;
    pthread_rwlock_init(l: *mut pthread_rwlock_t, a: *const libc::pthread_rwlockattr_t) -> c_int;
    pthread_rwlock_rdlock(l: *mut pthread_rwlock_t) -> c_int;
    pthread_rwlock_tryrdlock(l: *mut pthread_rwlock_t) -> c_int;
    pthread_rwlock_timedrdlock(l: *mut pthread_rwlock_t, t: *const timespec) -> c_int;
    pthread_rwlock_clockrdlock(l: *mut pthread_rwlock_t, clock: clockid_t, t: *const timespec) -> c_int;
    pthread_rwlock_wrlock(l: *mut pthread_rwlock_t) -> c_int;
    pthread_rwlock_trywrlock(l: *mut pthread_rwlock_t) -> c_int;
    pthread_rwlock_timedwrlock(l: *mut pthread_rwlock_t, t: *const timespec) -> c_int;
    pthread_rwlock_clockwrlock(l: *mut pthread_rwlock_t, clock: clockid_t, t: *const timespec) -> c_int;
    pthread_rwlock_unlock(l: *mut pthread_rwlock_t) -> c_int;
    pthread_rwlock_destroy(l: *mut pthread_rwlock_t) -> c_int;
    pthread_barrier_init(b: *mut pthread_barrier_t, a: *const libc::pthread_barrierattr_t, n: libc::c_uint) -> c_int;
    pthread_barrier_wait(b: *mut pthread_barrier_t) -> c_int;
    pthread_barrier_destroy(b: *mut pthread_barrier_t) -> c_int;
    pthread_cond_wait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t) -> c_int;
    pthread_cond_timedwait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, t: *const timespec) -> c_int;
    pthread_cond_clockwait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, clock: clockid_t, t: *const timespec) -> c_int;
    pthread_cond_signal(c: *mut pthread_cond_t) -> c_int;
    pthread_cond_broadcast(c: *mut pthread_cond_t) -> c_int;
    pthread_cond_destroy(c: *mut pthread_cond_t) -> c_int;
    pthread_create(t: *mut pthread_t, a: *const pthread_attr_t, f: extern "C-unwind" fn(*mut c_void) -> *mut c_void, arg: *mut c_void) -> c_int;
    pthread_join(t: pthread_t, r: *mut *mut c_void) -> c_int;
    pthread_tryjoin_np(t: pthread_t, r: *mut *mut c_void) -> c_int;
    pthread_timedjoin_np(t: pthread_t, r: *mut *mut c_void, abstime: *const timespec) -> c_int;
    pthread_clockjoin_np(t: pthread_t, r: *mut *mut c_void, clock: clockid_t, abstime: *const timespec) -> c_int;
    pthread_detach(t: pthread_t) -> c_int;
    sem_init(s: *mut sem_t, shared: c_int, value: libc::c_uint) -> c_int;
    sem_wait(s: *mut sem_t) -> c_int;
    sem_trywait(s: *mut sem_t) -> c_int;
    sem_timedwait(s: *mut sem_t, t: *const timespec) -> c_int;
    sem_clockwait(s: *mut sem_t, clock: clockid_t, t: *const timespec) -> c_int;
    sem_post(s: *mut sem_t) -> c_int;
    sem_destroy(s: *mut sem_t) -> c_int;
}

/// An OpenMP parallel region's or task's outlined body (libgomp's ABI).
pub(crate) type Body = unsafe extern "C" fn(*mut c_void);

/// A task's copy function (`cpyfn`: the task's data from the creator's).
pub(crate) type TaskCopy = unsafe extern "C" fn(*mut c_void, *mut c_void);

// libgomp's entry points (GCC's and gfortran's OpenMP), looked up the same
// way when a program that uses them first calls one.
originals! {
    GOMP_parallel(f: Body, d: *mut c_void, n: c_uint, flags: c_uint) -> ();
    GOMP_parallel_loop_static(f: Body, d: *mut c_void, n: c_uint, start: c_long, end: c_long, incr: c_long, chunk: c_long, flags: c_uint) -> ();
    GOMP_parallel_loop_dynamic(f: Body, d: *mut c_void, n: c_uint, start: c_long, end: c_long, incr: c_long, chunk: c_long, flags: c_uint) -> ();
    GOMP_parallel_loop_guided(f: Body, d: *mut c_void, n: c_uint, start: c_long, end: c_long, incr: c_long, chunk: c_long, flags: c_uint) -> ();
    GOMP_parallel_loop_nonmonotonic_dynamic(f: Body, d: *mut c_void, n: c_uint, start: c_long, end: c_long, incr: c_long, chunk: c_long, flags: c_uint) -> ();
    GOMP_parallel_loop_nonmonotonic_guided(f: Body, d: *mut c_void, n: c_uint, start: c_long, end: c_long, incr: c_long, chunk: c_long, flags: c_uint) -> ();
    GOMP_parallel_loop_runtime(f: Body, d: *mut c_void, n: c_uint, start: c_long, end: c_long, incr: c_long, flags: c_uint) -> ();
    GOMP_parallel_loop_nonmonotonic_runtime(f: Body, d: *mut c_void, n: c_uint, start: c_long, end: c_long, incr: c_long, flags: c_uint) -> ();
    GOMP_parallel_loop_maybe_nonmonotonic_runtime(f: Body, d: *mut c_void, n: c_uint, start: c_long, end: c_long, incr: c_long, flags: c_uint) -> ();
    GOMP_parallel_sections(f: Body, d: *mut c_void, n: c_uint, count: c_uint, flags: c_uint) -> ();
    GOMP_parallel_reductions(f: Body, d: *mut c_void, n: c_uint, flags: c_uint) -> c_uint;
    GOMP_barrier() -> ();
    GOMP_loop_end() -> ();
    GOMP_sections_end() -> ();
    GOMP_critical_start() -> ();
    GOMP_critical_end() -> ();
    GOMP_critical_name_start(p: *mut *mut c_void) -> ();
    GOMP_critical_name_end(p: *mut *mut c_void) -> ();
    GOMP_atomic_start() -> ();
    GOMP_atomic_end() -> ();
    omp_init_lock_(l: *mut c_void) -> ();
    omp_destroy_lock_(l: *mut c_void) -> ();
    omp_set_lock_(l: *mut c_void) -> ();
    omp_unset_lock_(l: *mut c_void) -> ();
    omp_test_lock_(l: *mut c_void) -> i32;
    omp_get_level() -> c_int;
    omp_init_lock(l: *mut c_void) -> ();
    omp_destroy_lock(l: *mut c_void) -> ();
    omp_set_lock(l: *mut c_void) -> ();
    omp_unset_lock(l: *mut c_void) -> ();
    omp_test_lock(l: *mut c_void) -> c_int;
    omp_init_nest_lock(l: *mut c_void) -> ();
    omp_destroy_nest_lock(l: *mut c_void) -> ();
    omp_set_nest_lock(l: *mut c_void) -> ();
    omp_unset_nest_lock(l: *mut c_void) -> ();
    omp_test_nest_lock(l: *mut c_void) -> c_int;
    omp_init_nest_lock_(l: *mut c_void) -> ();
    omp_destroy_nest_lock_(l: *mut c_void) -> ();
    omp_set_nest_lock_(l: *mut c_void) -> ();
    omp_unset_nest_lock_(l: *mut c_void) -> ();
    omp_test_nest_lock_(l: *mut c_void) -> i32;
    GOMP_ordered_start() -> ();
    GOMP_ordered_end() -> ();
    omp_get_num_threads() -> c_int;
    omp_get_thread_num() -> c_int;
    GOMP_task(f: Body, d: *mut c_void, copy: Option<TaskCopy>, size: c_long, align: c_long, if_clause: bool, flags: c_uint, depend: *mut *mut c_void, priority: c_int, detach: *mut c_void) -> ();
    GOMP_taskwait() -> ();
    GOMP_taskloop(f: Body, d: *mut c_void, copy: Option<TaskCopy>, size: c_long, align: c_long, flags: c_uint, num_tasks: c_ulong, priority: c_int, start: c_long, end: c_long, step: c_long) -> ();
    GOMP_taskloop_ull(f: Body, d: *mut c_void, copy: Option<TaskCopy>, size: c_long, align: c_long, flags: c_uint, num_tasks: c_ulong, priority: c_int, start: u64, end: u64, step: u64) -> ();
    GOMP_taskgroup_start() -> ();
    GOMP_taskgroup_end() -> ();
}

// C11 threads (glibc 2.28; in libc.so itself since 2.34). glibc's `mtx_t`
// and `cnd_t` hold a `pthread_mutex_t` and a `pthread_cond_t` at their
// start and `thrd_t` is a `pthread_t`, so the pointers are passed as those.
originals! {
    thrd_create(t: *mut pthread_t, f: extern "C-unwind" fn(*mut c_void) -> c_int, arg: *mut c_void) -> c_int;
    thrd_join(t: pthread_t, r: *mut c_int) -> c_int;
    thrd_detach(t: pthread_t) -> c_int;
    mtx_init(m: *mut pthread_mutex_t, kind: c_int) -> c_int;
    mtx_lock(m: *mut pthread_mutex_t) -> c_int;
    mtx_timedlock(m: *mut pthread_mutex_t, t: *const timespec) -> c_int;
    mtx_trylock(m: *mut pthread_mutex_t) -> c_int;
    mtx_unlock(m: *mut pthread_mutex_t) -> c_int;
    mtx_destroy(m: *mut pthread_mutex_t) -> ();
    cnd_wait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t) -> c_int;
    cnd_timedwait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, t: *const timespec) -> c_int;
    cnd_signal(c: *mut pthread_cond_t) -> c_int;
    cnd_broadcast(c: *mut pthread_cond_t) -> c_int;
    cnd_destroy(c: *mut pthread_cond_t) -> ();
}

// `pthread_exit` and `thrd_exit` unwind the thread (forced) and never
// return.
originals! {
    pthread_exit(value: *mut c_void) -> !;
    thrd_exit(value: c_int) -> !;
}
