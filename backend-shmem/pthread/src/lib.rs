//! heisen-pthread: `LD_PRELOAD=libheisen_pthread.so ./app` gives an
//! unmodified C or C++ program compensated profiles of its pthread
//! synchronisation (R8; 003 §4): a mutex acquire merges the previous
//! release, a reader-writer lock's readers merge the last writer and its
//! writers the readers since, a barrier exit merges every arrival of its
//! episode (R6), a condition-variable wait merges its notifier and the
//! mutex it re-acquires, `sem_wait` merges the `sem_post` whose permit it
//! took, a thread's start merges its creator and `pthread_join` merges the
//! thread's end.
//!
//! Each interposed function calls its original (found with
//! `dlsym(RTLD_NEXT)`) and keeps the program's behaviour: its return
//! value, its errors, its output. heisen's work happens before and after
//! the original call, inside `catch_unwind` (nothing panics across the C
//! boundary), never while the original runs, so a forced unwind
//! (`pthread_exit`, cancellation) passes through frames that hold nothing.
//! Nested calls (from inside heisen itself, or a library it runs) go
//! straight to the original. Per-object state lives in fixed-capacity
//! tables keyed by address (module `table`), so statically initialised objects
//! work; objects beyond the tables run unmeasured and are counted.
//!
//! The runtime (one per process, shared with any other heisen library in
//! it) is created and its actions calibrated by a constructor when the
//! library is loaded; the report is written at exit to `HEISEN_OUTPUT`.
#![allow(unsafe_code)]
// reason: an interposer is C ABI exports and raw pthread objects throughout; every block says why it holds
#![allow(clippy::missing_safety_doc)] // reason: the exports' contracts are POSIX's, documented there

pub mod c11;
mod calibrate;
pub mod objects;
pub mod openmp;
mod real;
mod table;
pub mod threads;

use core::panic::AssertUnwindSafe;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::panic::catch_unwind;
use std::sync::OnceLock;

use heisen_shmem::reentry;
use heisen_shmem::runtime::ActionId;

use crate::table::Table;

use crate::objects::{CondState, MutexState, RwState};
use crate::threads::{BarrierState, EndState, SemState};

// Two threads in `exit` at once must not cut the report short
// (`heisen_shmem::exit`).
heisen_shmem::interpose_exit!();

/// The interposer's actions (R1), registered with the runtime.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Actions {
    pub(crate) mutex_lock: ActionId,
    pub(crate) mutex_unlock: ActionId,
    pub(crate) rwlock_rdlock: ActionId,
    pub(crate) rwlock_wrlock: ActionId,
    pub(crate) rwlock_unlock: ActionId,
    pub(crate) barrier_wait: ActionId,
    pub(crate) cond_wait: ActionId,
    pub(crate) cond_signal: ActionId,
    pub(crate) sem_post: ActionId,
    pub(crate) sem_wait: ActionId,
    pub(crate) create: ActionId,
    pub(crate) join: ActionId,
}

/// Everything the wrappers need, made once by the constructor.
pub(crate) struct State {
    pub(crate) actions: Actions,
    pub(crate) mutexes: Table<MutexState>,
    pub(crate) rwlocks: Table<RwState>,
    pub(crate) conds: Table<CondState>,
    pub(crate) barriers: Table<BarrierState>,
    pub(crate) sems: Table<SemState>,
    pub(crate) threads: Table<EndState>,
}

pub(crate) static STATE: OnceLock<State> = OnceLock::new();

/// Set in the child of a `fork`: the child runs unmeasured. A lock of
/// heisen's (a barrier's episode, a semaphore's permits) that another
/// thread of the parent held at the fork stays held in the child, so the
/// child must not take it; the runtime writes no report there either
/// (`Runtime::stop_in_forked_child`).
static FORKED: AtomicBool = AtomicBool::new(false);

/// The thread running the constructor ([`me`]) while it runs, else 0.
/// The constructor allocates (the runtime, the tables, a scratch thread
/// state of 146 KiB per calibration) on a thread that has no state yet. A
/// library that hooks `sbrk`/`mmap` and takes a pthread lock in its hook
/// (UCX's ucm: `ucm_sbrk` -> `ucm_event_enter` -> `pthread_rwlock_rdlock`)
/// calls a wrapper from inside glibc's `malloc`, between its `sbrk` and
/// its update of the heap's top; the wrapper then registered the thread,
/// which allocates its state with `malloc` again: the outer `malloc` then
/// set the heap's top back over the state the inner one had just handed
/// out, and later allocations overwrote it (MPICH over UCX: garbage in
/// the main thread's region stack, `free(): invalid size`). While the
/// constructor runs, its thread's calls with no state of their own (all
/// but the calibrations' calls, which run on a scratch state) go
/// unmeasured and allocate nothing: the program's behaviour comes before
/// its measurement (an interposer changes nothing the program sees).
/// The constructor then registers its thread itself, outside `malloc`.
static CONSTRUCTING: AtomicUsize = AtomicUsize::new(0);

/// `pthread_atfork`'s child handler: one store, nothing else.
extern "C" fn in_forked_child() {
    FORKED.store(true, Ordering::Relaxed);
}

/// Clears the thread's re-entry flag (`heisen_shmem::reentry`, set while
/// heisen's own code runs on this thread: interposed calls made from it go
/// straight to the originals) when heisen's part of a call is done.
struct Inside;

impl Drop for Inside {
    fn drop(&mut self) {
        reentry::set_inside(false);
    }
}

/// Runs heisen's part of an interposed call: `None` when the interposer is
/// not set up (disabled, or called before the constructor), when the call
/// is nested in heisen's own code, or when that code panicked (the panic
/// stops here; the program goes on unmeasured for this call).
#[inline]
pub(crate) fn hook<R>(f: impl FnOnce(&'static State) -> R) -> Option<R> {
    let state = STATE.get()?;
    if FORKED.load(Ordering::Relaxed) {
        return None;
    }
    if reentry::inside() {
        return None;
    }
    let constructing = CONSTRUCTING.load(Ordering::Relaxed);
    if constructing != 0 && constructing == me() && !heisen_shmem::thread::registered() {
        return None;
    }
    reentry::set_inside(true);
    let _inside = Inside;
    catch_unwind(AssertUnwindSafe(|| f(state))).ok()
}

/// After an object's `*_destroy` returned `rc`: on success its entry in
/// the table `of` gives is emptied by `clear` and its slot freed for the
/// next object (R12: destroyed objects never fill a table). `rc` is
/// returned unchanged.
pub(crate) fn destroyed<E: 'static>(
    rc: core::ffi::c_int,
    key: usize,
    of: impl FnOnce(&'static State) -> &'static Table<E>,
    clear: impl FnOnce(&E),
) -> core::ffi::c_int {
    if rc == 0 {
        hook(|st| of(st).remove(key, clear));
    }
    rc
}

/// The calling thread's identity as an owner (unique among live threads,
/// never 0; `heisen_shmem::reentry::thread_key`).
#[inline(always)]
pub(crate) fn me() -> usize {
    reentry::thread_key()
}

// ----- set-up and the message at exit -----------------------------------

/// Made when the library is loaded: the runtime, the tables, the
/// calibration (R1). Nothing here may unwind into the loader.
extern "C" fn init() {
    let _ = catch_unwind(|| {
        let rt = heisen_shmem::runtime();
        if rt.config().disabled {
            return;
        }
        rt.set_backend("pthread");
        let actions = Actions {
            mutex_lock: rt.action("pthread_mutex_lock"),
            mutex_unlock: rt.action("pthread_mutex_unlock"),
            rwlock_rdlock: rt.action("pthread_rwlock_rdlock"),
            rwlock_wrlock: rt.action("pthread_rwlock_wrlock"),
            rwlock_unlock: rt.action("pthread_rwlock_unlock"),
            barrier_wait: rt.action("pthread_barrier_wait"),
            cond_wait: rt.action("pthread_cond_wait"),
            cond_signal: rt.action("pthread_cond_signal"),
            sem_post: rt.action("sem_post"),
            sem_wait: rt.action("sem_wait"),
            create: rt.action("pthread_create"),
            join: rt.action("pthread_join"),
        };
        let state = State {
            actions,
            mutexes: Table::new(8192, "mutexes"),
            rwlocks: Table::new(1024, "reader-writer locks"),
            conds: Table::new(2048, "condition variables"),
            barriers: Table::new(256, "barriers"),
            sems: Table::new(1024, "semaphores"),
            threads: Table::new(4096, "joinable threads"),
        };
        // Cleared when the constructor ends, by a panic too.
        struct Constructed;
        impl Drop for Constructed {
            fn drop(&mut self) {
                CONSTRUCTING.store(0, Ordering::Relaxed);
            }
        }
        CONSTRUCTING.store(me(), Ordering::Relaxed);
        let _constructed = Constructed;
        if STATE.set(state).is_err() {
            return;
        }
        calibrate::all(rt, &actions);
        // The loading thread's location, now: its registration allocates,
        // and here no wrapper it triggers can register it again (above).
        // Later, a first wrapped call that came from inside `malloc` (a
        // memory hook's lock) would allocate there.
        heisen_shmem::with_current(|_| ());
        // SAFETY: registering plain extern "C" functions. The exit handler
        // runs before the runtime's own (registered earlier), so its notes
        // reach the report's stderr lines; the fork handler only stores.
        unsafe {
            libc::atexit(at_exit);
            libc::pthread_atfork(None, None, Some(in_forked_child));
        }
    });
}

#[used]
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn() = init;

/// Notes, for stderr at exit, the objects that did not fit the tables.
extern "C" fn at_exit() {
    let _ = catch_unwind(|| {
        let Some(state) = STATE.get() else { return };
        let rt = heisen_shmem::runtime();
        let tables: [(&str, usize, u64); 6] = [
            (
                state.mutexes.what,
                state.mutexes.capacity(),
                state.mutexes.missed(),
            ),
            (
                state.rwlocks.what,
                state.rwlocks.capacity(),
                state.rwlocks.missed(),
            ),
            (
                state.conds.what,
                state.conds.capacity(),
                state.conds.missed(),
            ),
            (
                state.barriers.what,
                state.barriers.capacity(),
                state.barriers.missed(),
            ),
            (state.sems.what, state.sems.capacity(), state.sems.missed()),
            (
                state.threads.what,
                state.threads.capacity(),
                state.threads.missed(),
            ),
        ];
        for (what, capacity, missed) in tables {
            if missed > 0 {
                rt.note(format!(
                    "{missed} calls on {what} beyond the table of {capacity} went unmeasured"
                ));
            }
        }
        let untracked = openmp::tasks::depend::untracked();
        if untracked > 0 {
            use openmp::tasks::depend::{ADDRESSES, READERS};
            rt.note(format!(
                "{untracked} OpenMP task dependences beyond {ADDRESSES} addresses among one \
                 task's children or {READERS} `in` tasks per address went untracked (a later \
                 task may have merged fewer of its predecessors)"
            ));
        }
    });
}

/// The calling thread's location id in the report, or -1 when it is not
/// measured: lets a program (or a test) match its threads to the report's
/// locations. Declare it weak in C (`__attribute__((weak))`) to run
/// without the interposer too.
#[unsafe(no_mangle)]
pub extern "C" fn heisen_pthread_location() -> i64 {
    catch_unwind(|| heisen_shmem::with_current(|s| i64::from(s.kernel().id())).unwrap_or(-1))
        .unwrap_or(-1)
}
