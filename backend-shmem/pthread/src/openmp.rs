//! OpenMP as GCC and gfortran compile it (libgomp's entry points): a
//! parallel region's fork and join, the team's barriers, critical
//! sections and `omp_*_lock` are hand-offs like the pthread objects'
//! (R6, R8; 003 §4). libgomp implements them with futexes and atomics, not
//! pthread calls, so without these wrappers a thread that waited at an
//! OpenMP barrier for a dilated one kept that wait in its compensated time.
//!
//! - **Fork** (`GOMP_parallel` and its combined-loop and sections forms):
//!   the encountering thread releases a record before the original call
//!   starts the team; every other member's first act in the region merges
//!   it (R8, as a thread's start merges its creator; R5: a pool thread's
//!   wait for work ends there), with all the time since the release as
//!   the transfer (`LET_GO_LATER`: the team is let go after it).
//! - **Barriers** (`GOMP_barrier`, and `GOMP_loop_end` and
//!   `GOMP_sections_end`, which end a worksharing construct with one):
//!   every member's exit merges every member's arrival of its episode,
//!   kept per team as a pthread barrier's are (`threads::BarrierState`,
//!   two slots by episode parity).
//! - **Join**: each member's end of the region is folded into the team;
//!   the encountering thread's return from the original call merges them
//!   all (its wait at the join is the barrier's, n-to-1).
//! - **Tasks** (`GOMP_task`, `GOMP_taskwait`, `GOMP_taskgroup_*`,
//!   `GOMP_taskloop` and `GOMP_taskloop_ull`): the task's record travels
//!   with it, its start merges its creator and its
//!   end is merged by what waits for it (`tasks`).
//! - **Critical sections and locks** (`GOMP_critical_*`, named ones keyed
//!   by their name's address, `GOMP_atomic_*`, `omp_*_lock` and
//!   gfortran's `omp_*_lock_`): the next acquire merges the previous
//!   release, through the mutexes' table (`objects`); `omp_set_lock` tries
//!   the lock first, as `pthread_mutex_lock` does. Nest locks
//!   (`omp_*_nest_lock`, gfortran's `omp_*_nest_lock_`) are recursive
//!   mutexes: only the outermost set and unset are a hand-off.
//! - **Ordered sections** (`GOMP_ordered_start`, `GOMP_ordered_end`): a
//!   section's start merges the end of the team's last one, the previous
//!   iteration's (they run one at a time, in iteration order).
//!
//! The region's body runs in a trampoline that knows its team (a
//! thread-local pointer, saved and restored, so nested regions keep their
//! own; the team's nesting level too, so that a barrier of a team heisen
//! did not start — an old `GOMP_parallel_start`'s, a `target` region run
//! on the host — never counts as the outer team's). The trampoline is
//! `extern "C"`: a body that unwinds aborts, as OpenMP requires of a
//! structured block anyway. Not wrapped, so unmerged, and run as without
//! heisen: the task forms `tasks` lists,
//! cancellation forms, `doacross` (`ordered depend`), `single
//! copyprivate`, `GOMP_parallel_reductions` (its team
//! runs without a trampoline: libgomp reads the region's data), the pre-4.9
//! `GOMP_parallel_start`, `teams`; clang's OpenMP runtime (libomp) has
//! entry points of its own (`__kmpc_*`), though its `omp_*_lock` are these.
//! The costs charged are the pthread interposer's calibrated ones: a fork
//! is a `pthread_create`'s release, a member's start and the join merges a
//! `pthread_join`'s, a barrier a `pthread_barrier_wait`'s, a lock a
//! mutex's.
#![allow(non_snake_case)] // reason: libgomp's entry points are named so
#![allow(clippy::too_many_arguments)] // reason: libgomp's combined loops take eight

use core::cell::Cell;
use core::ffi::{c_int, c_long, c_uint, c_void};
use core::ptr;
use core::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

use heisen_core::{Dependency, Exchange};
use heisen_shmem::handoff::LET_GO_LATER;
use heisen_shmem::{Record, SELECTED, with_current};
use libc::pthread_mutex_t;

use crate::hook;
use crate::objects::{after_lock, before_lock, before_unlock};
use crate::real::{self, Body};
use crate::threads::{self, BarrierState};

pub mod tasks;

use self::tasks::Waiting;

/// A parallel region under way: the body and its data, the fork's record,
/// the team's barrier episodes (with its tasks' ends) and the members'
/// ends. Lives in the frame of the wrapper that started the region, which
/// the original call leaves only after every member's body returned (and
/// every task of the team ended).
struct Team {
    body: Body,
    data: *mut c_void,
    fork: Option<Record>,
    /// The region's nesting level (`omp_get_level` inside it; 0 until a
    /// member set it).
    level: AtomicI32,
    barrier: BarrierState,
    /// The members' ends folded, and the encountering thread's end (the
    /// begin of its wait at the join).
    join: Mutex<(Exchange<SELECTED>, Option<u64>)>,
    /// The end of the last `ordered` section run in the team.
    ordered: Mutex<Option<Record>>,
}

std::thread_local! {
    /// The team of the region this thread runs a body of (null: none).
    static MEMBER: Cell<*const Team> = const { Cell::new(ptr::null()) };
}

/// This thread's team, if it runs a body of a wrapped region.
fn team() -> Option<&'static Team> {
    let p = MEMBER.try_with(Cell::get).unwrap_or(ptr::null());
    // SAFETY: a team outlives every body of its region (`Team`), and the
    // pointer is reset when this thread's body returns.
    unsafe { p.as_ref() }
}

/// Restores the thread's outer team when a body returns.
struct Outer(*const Team);

impl Drop for Outer {
    fn drop(&mut self) {
        let _ = MEMBER.try_with(|m| m.set(self.0));
    }
}

/// What every member runs in place of the body: the fork's merge, the
/// body, its end folded into the team.
unsafe extern "C" fn trampoline(data: *mut c_void) {
    // SAFETY: `data` is the `Team` its region's wrapper passed.
    let team = unsafe { &*data.cast::<Team>() };
    let outer = Outer(MEMBER.try_with(|m| m.replace(team)).unwrap_or(ptr::null()));
    // SAFETY: libgomp's queries, inside its parallel region.
    let (size, me, level) = unsafe {
        (
            real::omp_get_num_threads(),
            real::omp_get_thread_num(),
            real::omp_get_level(),
        )
    };
    team.barrier.set_count(usize::try_from(size).unwrap_or(1));
    team.level.store(level, Ordering::Relaxed);
    if me != 0 {
        hook(|st| {
            if let Some(fork) = &team.fork {
                with_current(|s| {
                    // The member waited for work since its last event (R5),
                    // until the encountering thread let the team go, which
                    // is later than the fork's release (it makes the new
                    // members' threads in between): the transfer is all
                    // the time since the release (`LET_GO_LATER`). With none (an
                    // immediate hand-off), a thread made for this region,
                    // whose last event (its start) came after the release,
                    // had its whole wait for the team's launch compensated
                    // away (13 ms of delay against 0.8 ms of overhead).
                    let begin = s.kernel().last_measured();
                    s.end(
                        begin,
                        &[Dependency::message(fork, LET_GO_LATER, 0)],
                        st.actions.join,
                    )
                });
            }
        });
    }
    tasks::set_waiting(Waiting::No);
    // SAFETY: the program's body with its data, as libgomp would call it.
    tasks::implicit(|| unsafe { (team.body)(team.data) });
    hook(|st| {
        if let Some((begin, record)) = with_current(|s| s.arrive(st.actions.join)) {
            let mut join = team.join.lock().unwrap_or_else(|p| p.into_inner());
            join.0 = join.0.combine(&Exchange::entry(&record, 0));
            if me == 0 {
                join.1 = Some(begin);
            }
        }
    });
    // libgomp's final barrier follows, where the member runs the team's
    // tasks left: a wait since its end (the join's arrival).
    tasks::set_waiting(Waiting::Final(team));
    drop(outer);
}

/// Runs the region `start` begins with a trampoline in place of `body`:
/// the fork released before, the join merged after.
fn parallel<R>(body: Body, data: *mut c_void, start: impl FnOnce(Body, *mut c_void) -> R) -> R {
    let fork = hook(|st| with_current(|s| s.release(st.actions.create))).flatten();
    let team = Team {
        body,
        data,
        fork,
        level: AtomicI32::new(0),
        barrier: BarrierState::default(),
        join: Mutex::new((Exchange::EMPTY, None)),
        ordered: Mutex::new(None),
    };
    let waiting = tasks::set_waiting(Waiting::No);
    let r = start(trampoline, ptr::from_ref(&team).cast_mut().cast());
    tasks::set_waiting(waiting);
    hook(|st| {
        let (ends, begin) = *team.join.lock().unwrap_or_else(|p| p.into_inner());
        // The tasks of the region's last episode ended at its final barrier.
        let all = ends.combine(&team.barrier.current_tasks());
        if let Some(begin) = begin {
            with_current(|s| s.leave(begin, &all, st.actions.join));
        }
    });
    r
}

/// `GOMP_parallel`: a parallel region (fork, body, join).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_parallel(f: Body, d: *mut c_void, n: c_uint, flags: c_uint) {
    // SAFETY: the caller's arguments, with the trampoline and its team.
    parallel(f, d, |f, d| unsafe { real::GOMP_parallel(f, d, n, flags) });
}

/// The combined parallel loops with a chunk size.
macro_rules! parallel_loops {
    ($($name:ident),*) => {$(
        /// A combined parallel loop: a parallel region (fork, body, join).
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $name(
            f: Body,
            d: *mut c_void,
            n: c_uint,
            start: c_long,
            end: c_long,
            incr: c_long,
            chunk: c_long,
            flags: c_uint,
        ) {
            // SAFETY: the caller's arguments, with the trampoline and its team.
            parallel(f, d, |f, d| unsafe { real::$name(f, d, n, start, end, incr, chunk, flags) });
        }
    )*};
}

parallel_loops!(
    GOMP_parallel_loop_static,
    GOMP_parallel_loop_dynamic,
    GOMP_parallel_loop_guided,
    GOMP_parallel_loop_nonmonotonic_dynamic,
    GOMP_parallel_loop_nonmonotonic_guided
);

/// The combined parallel loops whose schedule is the run's.
macro_rules! parallel_runtime_loops {
    ($($name:ident),*) => {$(
        /// A combined parallel loop: a parallel region (fork, body, join).
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $name(
            f: Body,
            d: *mut c_void,
            n: c_uint,
            start: c_long,
            end: c_long,
            incr: c_long,
            flags: c_uint,
        ) {
            // SAFETY: the caller's arguments, with the trampoline and its team.
            parallel(f, d, |f, d| unsafe { real::$name(f, d, n, start, end, incr, flags) });
        }
    )*};
}

parallel_runtime_loops!(
    GOMP_parallel_loop_runtime,
    GOMP_parallel_loop_nonmonotonic_runtime,
    GOMP_parallel_loop_maybe_nonmonotonic_runtime
);

/// `GOMP_parallel_sections`: a parallel region (fork, body, join).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_parallel_sections(
    f: Body,
    d: *mut c_void,
    n: c_uint,
    count: c_uint,
    flags: c_uint,
) {
    // SAFETY: the caller's arguments, with the trampoline and its team.
    parallel(f, d, |f, d| unsafe {
        real::GOMP_parallel_sections(f, d, n, count, flags)
    });
}

/// `GOMP_parallel_reductions`: run as without heisen (libgomp reads the
/// region's data, so no trampoline can stand in for it); the encountering
/// thread leaves its own team meanwhile, so that the region's barriers do
/// not count as that team's episodes.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_parallel_reductions(
    f: Body,
    d: *mut c_void,
    n: c_uint,
    flags: c_uint,
) -> c_uint {
    let _outer = Outer(
        MEMBER
            .try_with(|m| m.replace(ptr::null()))
            .unwrap_or(ptr::null()),
    );
    // Its tasks are not the outer task's children or siblings, and it is
    // no wait of the outer task's.
    let waiting = tasks::set_waiting(Waiting::No);
    // SAFETY: the caller's arguments, passed on.
    let r = tasks::implicit(|| unsafe { real::GOMP_parallel_reductions(f, d, n, flags) });
    tasks::set_waiting(waiting);
    r
}

/// This thread's team if its innermost region is that team's: not in a
/// team nested in it that heisen did not start (another nesting level).
fn own_team() -> Option<&'static Team> {
    // SAFETY: libgomp's query, inside its region.
    team().filter(|t| t.level.load(Ordering::Relaxed) == unsafe { real::omp_get_level() })
}

/// A team barrier by `call`: every member's exit merges every arrival of
/// its episode and the ends of the tasks created in it (R6). Outside a
/// wrapped region (`own_team`), the original alone.
fn barrier(call: impl FnOnce()) {
    let arrived = own_team().and_then(|t| hook(|st| threads::arrive_at(st, &t.barrier)).flatten());
    tasks::waiting(arrived.is_some(), call);
    if let Some(arrival) = arrived {
        hook(|st| threads::leave(st, arrival));
        tasks::barrier_passed();
    }
}

/// `GOMP_barrier`: `#pragma omp barrier`, and the end of `single`.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_barrier() {
    // SAFETY: no arguments; libgomp's contract.
    barrier(|| unsafe { real::GOMP_barrier() });
}

/// `GOMP_loop_end`: a worksharing loop's end, with its barrier.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_loop_end() {
    // SAFETY: no arguments; libgomp's contract.
    barrier(|| unsafe { real::GOMP_loop_end() });
}

/// `GOMP_sections_end`: a `sections` construct's end, with its barrier.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_sections_end() {
    // SAFETY: no arguments; libgomp's contract.
    barrier(|| unsafe { real::GOMP_sections_end() });
}

/// An acquire of the lock keyed `key` by `call`: merges the previous
/// release (R8), through the mutexes' table.
fn acquire(key: usize, call: impl FnOnce()) {
    let m = key as *mut pthread_mutex_t;
    let a = hook(|st| before_lock(st, m)).flatten();
    call();
    if let Some(a) = a {
        hook(|st| after_lock(st, a, 0, true));
    }
}

/// A release of the lock keyed `key` by `call` (R3, R8).
fn release(key: usize, call: impl FnOnce()) {
    hook(|st| before_unlock(st, key as *mut pthread_mutex_t));
    call();
}

/// The unnamed critical section's key: an address of this library's.
static UNNAMED: u8 = 0;
/// The key of `GOMP_atomic_start`'s lock.
static ATOMIC: u8 = 0;

/// `GOMP_critical_start`: the unnamed critical section's entry.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_critical_start() {
    // SAFETY: no arguments; libgomp's contract.
    acquire(ptr::from_ref(&UNNAMED) as usize, || unsafe {
        real::GOMP_critical_start()
    });
}

/// `GOMP_critical_end`.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_critical_end() {
    // SAFETY: no arguments; libgomp's contract.
    release(ptr::from_ref(&UNNAMED) as usize, || unsafe {
        real::GOMP_critical_end()
    });
}

/// `GOMP_critical_name_start`: a named critical section, keyed by the
/// address of its name's variable.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_critical_name_start(p: *mut *mut c_void) {
    // SAFETY: the caller's argument, passed on.
    acquire(p as usize, || unsafe { real::GOMP_critical_name_start(p) });
}

/// `GOMP_critical_name_end`.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_critical_name_end(p: *mut *mut c_void) {
    // SAFETY: the caller's argument, passed on.
    release(p as usize, || unsafe { real::GOMP_critical_name_end(p) });
}

/// `GOMP_atomic_start`: an `atomic` the hardware cannot do, under one lock.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_atomic_start() {
    // SAFETY: no arguments; libgomp's contract.
    acquire(ptr::from_ref(&ATOMIC) as usize, || unsafe {
        real::GOMP_atomic_start()
    });
}

/// `GOMP_atomic_end`.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_atomic_end() {
    // SAFETY: no arguments; libgomp's contract.
    release(ptr::from_ref(&ATOMIC) as usize, || unsafe {
        real::GOMP_atomic_end()
    });
}

/// A lock made at `l` by `call`: a fresh entry (a lock made where
/// another was destroyed starts with no release to merge).
fn init_lock(l: *mut c_void, call: impl FnOnce()) {
    crate::objects::mutex_made(l as usize);
    call();
}

/// A lock at `l` destroyed by `call`: its entry is freed for the next
/// object (R12: the table never fills with destroyed locks).
fn destroy_lock(l: *mut c_void, call: impl FnOnce()) {
    call();
    crate::objects::mutex_destroyed(0, l as usize);
}

/// What a try of the lock at `l` returned, `rc` (nonzero: taken): a
/// success merges the previous release with no wait; a failure merges
/// nothing and reads no clock (R8).
fn tried<R: PartialEq + Default>(l: *mut c_void, rc: R) -> R {
    if rc != R::default() {
        hook(|st| crate::objects::taken_by_try(st, l as usize));
    }
    rc
}

/// `omp_init_lock`.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn omp_init_lock(l: *mut c_void) {
    // SAFETY: the caller's argument, passed on.
    init_lock(l, || unsafe { real::omp_init_lock(l) });
}

/// `omp_destroy_lock`.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn omp_destroy_lock(l: *mut c_void) {
    // SAFETY: the caller's argument, passed on.
    destroy_lock(l, || unsafe { real::omp_destroy_lock(l) });
}

/// `omp_set_lock`: merges the previous `omp_unset_lock` (R8). A lock
/// found free is taken by the original `omp_test_lock` at once, merged
/// without a wait (as `pthread_mutex_lock`'s is).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn omp_set_lock(l: *mut c_void) {
    // SAFETY: the caller's argument, passed on.
    if hook(|_| ()).is_some() && tried(l, unsafe { real::omp_test_lock(l) }) != 0 {
        return;
    }
    // SAFETY: the caller's argument, passed on.
    acquire(l as usize, || unsafe { real::omp_set_lock(l) });
}

/// `omp_unset_lock`: a release (R3, R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn omp_unset_lock(l: *mut c_void) {
    // SAFETY: the caller's argument, passed on.
    release(l as usize, || unsafe { real::omp_unset_lock(l) });
}

/// `omp_test_lock` (`tried`).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn omp_test_lock(l: *mut c_void) -> c_int {
    // SAFETY: the caller's argument, passed on.
    tried(l, unsafe { real::omp_test_lock(l) })
}

// gfortran's `call omp_set_lock(l)` comes by these (libgomp's Fortran
// wrappers call its internal functions, not the ones above); keyed by the
// Fortran lock variable's address.

/// gfortran's `omp_init_lock`.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn omp_init_lock_(l: *mut c_void) {
    // SAFETY: the caller's argument, passed on.
    init_lock(l, || unsafe { real::omp_init_lock_(l) });
}

/// gfortran's `omp_destroy_lock`.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn omp_destroy_lock_(l: *mut c_void) {
    // SAFETY: the caller's argument, passed on.
    destroy_lock(l, || unsafe { real::omp_destroy_lock_(l) });
}

/// gfortran's `omp_set_lock`.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn omp_set_lock_(l: *mut c_void) {
    // SAFETY: the caller's argument, passed on.
    acquire(l as usize, || unsafe { real::omp_set_lock_(l) });
}

/// gfortran's `omp_unset_lock`.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn omp_unset_lock_(l: *mut c_void) {
    // SAFETY: the caller's argument, passed on.
    release(l as usize, || unsafe { real::omp_unset_lock_(l) });
}

/// gfortran's `omp_test_lock` (a Fortran `logical`; `tried`).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn omp_test_lock_(l: *mut c_void) -> i32 {
    // SAFETY: the caller's argument, passed on.
    tried(l, unsafe { real::omp_test_lock_(l) })
}

// ----- nest locks ----------------------------------------------------------

/// A family of nest locks (C's `omp_*_nest_lock`, gfortran's
/// `omp_*_nest_lock_`): only the outermost set and unset are a hand-off
/// (R8), as for a recursive mutex (the mutexes' table keeps the owner
/// and depth); a test returns the nesting count, nonzero when taken.
macro_rules! nest_locks {
    ($($lang:literal: $init:ident, $destroy:ident, $set:ident, $unset:ident, $test:ident -> $count:ty;)*) => {$(
        #[doc = concat!($lang, "'s `", stringify!($init), "`.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $init(l: *mut c_void) {
            // SAFETY: the caller's argument, passed on.
            init_lock(l, || unsafe { real::$init(l) });
        }

        #[doc = concat!($lang, "'s `", stringify!($destroy), "`.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $destroy(l: *mut c_void) {
            // SAFETY: the caller's argument, passed on.
            destroy_lock(l, || unsafe { real::$destroy(l) });
        }

        #[doc = concat!($lang, "'s `", stringify!($set), "`: the outermost set merges the previous outermost unset (R8).")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $set(l: *mut c_void) {
            // SAFETY: the caller's argument, passed on.
            acquire(l as usize, || unsafe { real::$set(l) });
        }

        #[doc = concat!($lang, "'s `", stringify!($unset), "`: the outermost unset is a release (R3, R8).")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $unset(l: *mut c_void) {
            // SAFETY: the caller's argument, passed on.
            release(l as usize, || unsafe { real::$unset(l) });
        }

        #[doc = concat!($lang, "'s `", stringify!($test), "` (`tried`): the nesting count, 0 when the lock is another's.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $test(l: *mut c_void) -> $count {
            // SAFETY: the caller's argument, passed on.
            tried(l, unsafe { real::$test(l) })
        }
    )*};
}

nest_locks! {
    "C": omp_init_nest_lock, omp_destroy_nest_lock, omp_set_nest_lock, omp_unset_nest_lock,
        omp_test_nest_lock -> c_int;
    "gfortran": omp_init_nest_lock_, omp_destroy_nest_lock_, omp_set_nest_lock_,
        omp_unset_nest_lock_, omp_test_nest_lock_ -> i32;
}

// ----- ordered -------------------------------------------------------------

/// `GOMP_ordered_start`: an `ordered` section waits for the one of the
/// loop's previous iteration, run by the thread that ran it: it merges
/// that section's end, the team's last (R8; sections run one at a time,
/// in iteration order). Outside a wrapped region, the original alone.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_ordered_start() {
    let team = own_team();
    let begin = team
        .and_then(|_| hook(|st| with_current(|s| s.begin(st.actions.mutex_lock))))
        .flatten();
    // SAFETY: no arguments; libgomp's contract.
    unsafe { real::GOMP_ordered_start() };
    if let (Some(team), Some(begin)) = (team, begin) {
        hook(|st| {
            let previous = team
                .ordered
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or(Record::EMPTY);
            with_current(|s| {
                s.end(
                    begin,
                    &[Dependency::immediate(&previous)],
                    st.actions.mutex_lock,
                )
            });
        });
    }
}

/// `GOMP_ordered_end`: the section's end, a release the next iteration's
/// section merges (R3, R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_ordered_end() {
    if let Some(team) = own_team() {
        hook(|st| {
            let end = with_current(|s| s.release_split(st.actions.mutex_unlock));
            *team.ordered.lock().unwrap_or_else(|p| p.into_inner()) = end;
        });
    }
    // SAFETY: no arguments; libgomp's contract.
    unsafe { real::GOMP_ordered_end() };
}
