//! Barriers, semaphores and threads (R6, R8; 003 §4): the exports and
//! the per-object state they keep.

use core::ffi::{c_int, c_uint, c_void};
use core::panic::AssertUnwindSafe;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::panic::catch_unwind;
use std::sync::Mutex;

use heisen_core::{Dependency, Exchange};
use heisen_shmem::handoff::LET_GO_LATER;
use heisen_shmem::{Record, SELECTED, thread, with_current};
use libc::{clockid_t, pthread_attr_t, pthread_barrier_t, pthread_t, sem_t, timespec};

use crate::{State, destroyed, hook, real};

// ----- barriers (R6) -------------------------------------------------------

/// A barrier's participants and its episodes: arrivals fold their entry
/// records; the last one stores the episode's result in slot `g % 2`,
/// which nobody overwrites before every participant of episode `g` has
/// left (R8: per-episode state).
#[derive(Debug, Default)]
pub struct BarrierState {
    count: AtomicUsize,
    episode: Mutex<Episode>,
}

impl BarrierState {
    /// A barrier for `count` threads, no episode under way (`init`; 0 at
    /// `destroy`).
    pub(crate) fn reset(&self, count: usize) {
        self.count.store(count, Ordering::Relaxed);
        *self.episode.lock().unwrap_or_else(|p| p.into_inner()) = Episode::default();
    }

    /// Sets the participant count alone (an OpenMP team's members each
    /// set the same count before their first arrival).
    pub(crate) fn set_count(&self, count: usize) {
        self.count.store(count, Ordering::Relaxed);
    }

    /// The episode under way for a thread that has not arrived at its end.
    pub(crate) fn generation(&self) -> u64 {
        self.episode
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .generation
    }

    /// Folds the end of an OpenMP task created in episode `g`: the barrier
    /// ending that episode returns only after the task ended, so its exit
    /// merges it with the arrivals (R6, R8).
    pub(crate) fn task_ended(&self, g: u64, end: &Record) {
        let mut ep = self.episode.lock().unwrap_or_else(|p| p.into_inner());
        let slot = &mut ep.tasks[(g % 2) as usize];
        if slot.0 != g {
            // Every thread left episode `g - 2`'s barrier before any of
            // them arrived at `g - 1`'s, and so before a task of `g` was
            // created.
            *slot = (g, Exchange::EMPTY);
        }
        slot.1 = slot.1.combine(&Exchange::entry(end, 0));
    }

    /// The ends of the tasks created in the episode under way (an OpenMP
    /// region's last, at its join).
    pub(crate) fn current_tasks(&self) -> Exchange<SELECTED> {
        let ep = self.episode.lock().unwrap_or_else(|p| p.into_inner());
        ep.tasks_of(ep.generation)
    }
}

#[derive(Debug)]
struct Episode {
    arrived: usize,
    generation: u64,
    entries: Exchange<SELECTED>,
    results: [Exchange<SELECTED>; 2],
    /// OpenMP tasks' ends by the episode they were created in, slot
    /// `g % 2` tagged with its `g`.
    tasks: [(u64, Exchange<SELECTED>); 2],
}

impl Episode {
    fn tasks_of(&self, g: u64) -> Exchange<SELECTED> {
        let (tag, ends) = self.tasks[(g % 2) as usize];
        if tag == g { ends } else { Exchange::EMPTY }
    }
}

impl Default for Episode {
    fn default() -> Self {
        Episode {
            arrived: 0,
            generation: 0,
            entries: Exchange::EMPTY,
            results: [Exchange::EMPTY; 2],
            tasks: [(0, Exchange::EMPTY), (1, Exchange::EMPTY)],
        }
    }
}

/// `pthread_barrier_init`: the entry learns the participant count.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_barrier_init(
    b: *mut pthread_barrier_t,
    attr: *const libc::pthread_barrierattr_t,
    count: c_uint,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    let rc = unsafe { real::pthread_barrier_init(b, attr, count) };
    if rc == 0 {
        hook(|st| st.barriers.get(b as usize).map(|e| e.reset(count as usize)));
    }
    rc
}

/// `pthread_barrier_destroy`: the entry is freed for the next object
/// (`init` sets it up again).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_barrier_destroy(b: *mut pthread_barrier_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::pthread_barrier_destroy(b) };
    destroyed(rc, b as usize, |st| &st.barriers, |e| e.reset(0))
}

/// The arrival: fold this thread's entry record into the episode.
pub(crate) fn arrive(st: &'static State, b: *mut pthread_barrier_t) -> Option<Arrival<'static>> {
    arrive_at(st, st.barriers.get(b as usize)?)
}

/// The arrival at the episodes `e` keeps (a pthread barrier's, an OpenMP
/// team's).
pub(crate) fn arrive_at<'a>(st: &'static State, e: &'a BarrierState) -> Option<Arrival<'a>> {
    let count = e.count.load(Ordering::Relaxed);
    if count == 0 {
        return None; // initialised before the interposer saw it
    }
    // An unmeasured participant (a thread beyond the thread table, R12)
    // still counts its arrival: the episodes are counted here, apart from
    // libc's, and one arrival missing would shift every later episode onto
    // the other's slot, so measured threads would merge a stale episode.
    let measured = with_current(|s| s.arrive(st.actions.barrier_wait));
    let mut ep = e.episode.lock().unwrap_or_else(|p| p.into_inner());
    let generation = ep.generation;
    if let Some((_, record)) = &measured {
        ep.entries = ep.entries.combine(&Exchange::entry(record, 0));
    }
    ep.arrived += 1;
    if ep.arrived >= count {
        let slot = (generation % 2) as usize;
        ep.results[slot] = core::mem::replace(&mut ep.entries, Exchange::EMPTY);
        ep.arrived = 0;
        ep.generation += 1;
    }
    drop(ep);
    let (begin, _) = measured?;
    Some((e, begin, generation))
}

/// `pthread_barrier_wait`: every participant's exit merges all arrivals
/// of its episode (R6; 001 eq. 12-13).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_barrier_wait(b: *mut pthread_barrier_t) -> c_int {
    let arrived = hook(|st| arrive(st, b)).flatten();
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::pthread_barrier_wait(b) };
    if let Some(arrival) = arrived {
        hook(|st| leave(st, arrival));
    }
    rc
}

/// What an arrival leaves for its exit: the barrier, the begin, the episode.
pub(crate) type Arrival<'a> = (&'a BarrierState, u64, u64);

/// The exit: merges every arrival of this thread's episode (R6), and the
/// ends of the OpenMP tasks created in it. Every arrival of the episode
/// folded in before it entered the original wait, which returned only
/// after all of them (and after all of those tasks).
pub(crate) fn leave(st: &'static State, (e, begin, generation): Arrival<'_>) {
    let ep = e.episode.lock().unwrap_or_else(|p| p.into_inner());
    let all = ep.results[(generation % 2) as usize].combine(&ep.tasks_of(generation));
    drop(ep);
    with_current(|s| s.leave(begin, &all, st.actions.barrier_wait));
}

// ----- semaphores --------------------------------------------------------

/// Post records kept per semaphore.
const PERMITS: usize = 16;

/// A semaphore as a queue of permits: the posts' records in order, after
/// `unrecorded` permits that carry none (the initial value, and posts
/// whose records did not fit, R12).
#[derive(Debug, Default)]
pub struct SemState {
    permits: Mutex<Permits>,
}

impl SemState {
    /// `value` permits without records (`sem_init`; 0 at `sem_destroy`).
    fn reset(&self, value: u64) {
        *self.permits.lock().unwrap_or_else(|p| p.into_inner()) = Permits {
            unrecorded: value,
            records: heapless::Deque::new(),
        };
    }
}

#[derive(Debug, Default)]
struct Permits {
    unrecorded: u64,
    records: heapless::Deque<Record, PERMITS>,
}

impl Permits {
    fn take(&mut self) -> Option<Record> {
        if self.unrecorded > 0 {
            self.unrecorded -= 1;
            return None;
        }
        self.records.pop_front()
    }
}

/// `sem_destroy`: the entry is emptied and freed for the next object.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn sem_destroy(s: *mut sem_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::sem_destroy(s) };
    destroyed(rc, s as usize, |st| &st.sems, |e| e.reset(0))
}

/// `sem_init`: `value` permits without records.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn sem_init(s: *mut sem_t, shared: c_int, value: c_uint) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    let rc = unsafe { real::sem_init(s, shared, value) };
    if rc == 0 {
        hook(|st| st.sems.get(s as usize).map(|e| e.reset(u64::from(value))));
    }
    rc
}

/// `sem_post`: a release whose record joins the queue of permits (R3).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn sem_post(s: *mut sem_t) -> c_int {
    hook(|st| {
        let Some(e) = st.sems.get(s as usize) else {
            return;
        };
        let record =
            with_current(|x| x.release_split(st.actions.sem_post)).unwrap_or(Record::EMPTY);
        let mut p = e.permits.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(record) = p.records.push_back(record) {
            // R12: the oldest record gives way; its permit stays, unrecorded.
            let _ = p.records.pop_front();
            p.unrecorded += 1;
            let _ = p.records.push_back(record);
        }
    });
    // SAFETY: the caller's argument, passed on.
    unsafe { real::sem_post(s) }
}

/// After a wait that took a permit: merges its post's record (R8).
fn took_permit(st: &'static State, s: *mut sem_t, begin: Option<u64>) {
    let Some(e) = st.sems.get(s as usize) else {
        return;
    };
    let record = e.permits.lock().unwrap_or_else(|p| p.into_inner()).take();
    let record = record.unwrap_or(Record::EMPTY);
    let deps = [Dependency::immediate(&record)];
    match begin {
        Some(begin) => with_current(|x| x.end(begin, &deps, st.actions.sem_wait)),
        None => with_current(|x| x.merge_now(&deps, st.actions.sem_wait)),
    };
}

/// `sem_wait`: merges the post whose permit it took (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn sem_wait(s: *mut sem_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    sem_waiting(s, || unsafe { real::sem_wait(s) })
}

/// A blocking take of a permit of `s` by `call` (wait, timedwait,
/// clockwait): a success merges the post whose permit it took (R8).
#[inline(always)]
fn sem_waiting(s: *mut sem_t, call: impl FnOnce() -> c_int) -> c_int {
    let begin = hook(|st| with_current(|x| x.begin(st.actions.sem_wait))).flatten();
    let rc = call();
    if rc == 0 && begin.is_some() {
        hook(|st| took_permit(st, s, begin));
    }
    rc
}

/// `sem_trywait`: a success merges the post; a failure nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn sem_trywait(s: *mut sem_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::sem_trywait(s) };
    if rc == 0 {
        hook(|st| took_permit(st, s, None));
    }
    rc
}

/// `sem_timedwait`: as `sem_wait`; a timeout merges nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn sem_timedwait(s: *mut sem_t, t: *const timespec) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    sem_waiting(s, || unsafe { real::sem_timedwait(s, t) })
}

/// `sem_clockwait` (glibc 2.30): as `sem_wait`; a timeout merges nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn sem_clockwait(
    s: *mut sem_t,
    clock: clockid_t,
    t: *const timespec,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    sem_waiting(s, || unsafe { real::sem_clockwait(s, clock, t) })
}

// ----- threads (R8) ----------------------------------------------------------

/// A thread's end record for its join, or that it was detached (then
/// nobody joins it and its end keeps nothing).
#[derive(Debug, Default)]
pub struct EndState {
    end: Mutex<End>,
}

#[derive(Debug, Default)]
struct End {
    record: Option<Record>,
    detached: bool,
}

/// What a created thread needs to start: the program's routine, which
/// returns `R` (a pointer for `pthread_create`, an `int` for C11's
/// `thrd_create`).
struct Start<R> {
    routine: extern "C-unwind" fn(*mut c_void) -> R,
    arg: *mut c_void,
    parent: Record,
}

/// The created thread's first and last frame: registers the thread with
/// its creator's record (R8), runs the program's routine, ends the
/// location. No value with a destructor lives across the routine's call,
/// so a `pthread_exit` or a cancellation unwinds through this frame
/// cleanly (it is `C-unwind`).
extern "C-unwind" fn trampoline<R>(start: *mut c_void) -> R {
    // SAFETY: `start` is the box `create` leaked for this thread, taken
    // back exactly once, here.
    let Start {
        routine,
        arg,
        parent,
    } = *unsafe { Box::from_raw(start.cast::<Start<R>>()) };
    let _ = catch_unwind(|| thread::start_current(&parent));
    let value = routine(arg);
    let _ = catch_unwind(ended);
    value
}

/// The calling thread ends: its location's end record waits for the join
/// (R8), unless the thread was detached.
pub(crate) fn ended() {
    let Some(record) = thread::finish_current() else {
        return;
    };
    hook(|st| {
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() };
        let Some(e) = st.threads.get(me as usize) else {
            return;
        };
        let mut end = e.end.lock().unwrap_or_else(|p| p.into_inner());
        if end.detached {
            *end = End::default();
        } else {
            end.record = Some(record);
        }
    });
}

/// `pthread_create`: a release the child's start merges (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_create(
    t: *mut pthread_t,
    attr: *const pthread_attr_t,
    routine: extern "C-unwind" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
) -> c_int {
    let rc = create(routine, arg, |trampoline, start| {
        // SAFETY: the caller's arguments, with our trampoline and its box.
        unsafe { real::pthread_create(t, attr, trampoline, start) }
    });
    if rc != 0 {
        return rc;
    }
    let detached = !attr.is_null() && {
        let mut state: c_int = 0;
        // SAFETY: `attr` is the caller's valid attribute object.
        let rc = unsafe { pthread_attr_getdetachstate(attr, &mut state) };
        rc == 0 && state == libc::PTHREAD_CREATE_DETACHED
    };
    if detached {
        // SAFETY: `t` was written by a successful pthread_create.
        let id = unsafe { *t };
        mark_detached(id);
    }
    rc
}

/// A thread made by `call` (the original `pthread_create` or
/// `thrd_create`, both 0 on success) to run `routine(arg)`: `call` gets
/// the trampoline and its box, which holds the creator's release that the
/// thread's start merges (R8).
pub(crate) fn create<R>(
    routine: extern "C-unwind" fn(*mut c_void) -> R,
    arg: *mut c_void,
    call: impl FnOnce(extern "C-unwind" fn(*mut c_void) -> R, *mut c_void) -> c_int,
) -> c_int {
    let parent = hook(|st| with_current(|s| s.release_split(st.actions.create)))
        .flatten()
        .unwrap_or(Record::EMPTY);
    let start = Box::into_raw(Box::new(Start {
        routine,
        arg,
        parent,
    }));
    let rc = call(trampoline::<R>, start.cast());
    if rc != 0 {
        // SAFETY: the thread was not created; the box is still ours.
        drop(unsafe { Box::from_raw(start) });
    }
    rc
}

unsafe extern "C" {
    /// POSIX; not declared by the `libc` crate for this target.
    fn pthread_attr_getdetachstate(attr: *const pthread_attr_t, state: *mut c_int) -> c_int;
}

/// Nobody will join `t`: drop its end record, now or when it ends.
pub(crate) fn mark_detached(t: pthread_t) {
    hook(|st| {
        let Some(e) = st.threads.get(t as usize) else {
            return;
        };
        let mut end = e.end.lock().unwrap_or_else(|p| p.into_inner());
        if end.record.is_some() {
            *end = End::default(); // it ended already
        } else {
            end.detached = true;
        }
    });
}

/// `pthread_detach`: the thread's end will not be joined.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_detach(t: pthread_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    let rc = unsafe { real::pthread_detach(t) };
    if rc == 0 {
        mark_detached(t);
    }
    rc
}

/// `pthread_join`: merges the thread's end (R8).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_join(t: pthread_t, value: *mut *mut c_void) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    joining(t, || unsafe { real::pthread_join(t, value) })
}

/// A blocking join of `t` by `call` (join, timedjoin, clockjoin).
#[inline(always)]
pub(crate) fn joining(t: pthread_t, call: impl FnOnce() -> c_int) -> c_int {
    let begin = hook(|st| with_current(|s| s.begin(st.actions.join))).flatten();
    let rc = call();
    joined(t, rc, begin);
    rc
}

/// After a join of `t` that returned `rc` and began at `begin` (`None`:
/// it did not wait): a success merges the thread's end (R8).
fn joined(t: pthread_t, rc: c_int, begin: Option<u64>) {
    if rc != 0 {
        return; // not joined: the thread's end stays for its join
    }
    hook(|st| {
        let record = st.threads.get(t as usize).and_then(|e| {
            let mut end = e.end.lock().unwrap_or_else(|p| p.into_inner());
            core::mem::take(&mut *end).record
        });
        let Some(record) = record else { return };
        // The thread exits after its end record, as it does without heisen.
        let deps = [Dependency::message(&record, LET_GO_LATER, 0)];
        match begin {
            Some(begin) => with_current(|s| s.end(begin, &deps, st.actions.join)),
            None => with_current(|s| s.merge_now(&deps, st.actions.join)),
        };
    });
}

/// `pthread_tryjoin_np`: a success merges the thread's end; `EBUSY`
/// (still running) nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_tryjoin_np(t: pthread_t, value: *mut *mut c_void) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    let rc = unsafe { real::pthread_tryjoin_np(t, value) };
    joined(t, rc, None);
    rc
}

/// `pthread_timedjoin_np`: as `pthread_join`; a timeout merges nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_timedjoin_np(
    t: pthread_t,
    value: *mut *mut c_void,
    abstime: *const timespec,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    joining(t, || unsafe {
        real::pthread_timedjoin_np(t, value, abstime)
    })
}

/// `pthread_clockjoin_np` (glibc 2.31): as `pthread_join`; a timeout
/// merges nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_clockjoin_np(
    t: pthread_t,
    value: *mut *mut c_void,
    clock: clockid_t,
    abstime: *const timespec,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    joining(t, || unsafe {
        real::pthread_clockjoin_np(t, value, clock, abstime)
    })
}

/// `pthread_exit`: the thread's end (R8), then the original, which
/// unwinds this thread's frames and never returns.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_exit(value: *mut c_void) -> ! {
    let _ = catch_unwind(AssertUnwindSafe(ended));
    // SAFETY: the caller's argument; the original ends the thread.
    unsafe { real::pthread_exit(value) }
}
