//! OpenMP tasks (`GOMP_task`, `GOMP_taskwait`, `GOMP_taskgroup_*`): a
//! task is a work item handed from the thread that creates it to the one
//! that runs it, and its record travels inside the item, as a work
//! queue's does (R8; 003 §4 Fig. 11: the dequeue merges its own enqueue,
//! not the queue's order).
//!
//! - **Creation**: the creating thread releases a record, kept in a
//!   header heisen puts before the task's data; libgomp copies header and
//!   data together into the task (this module's copy function stands in
//!   for the program's, and calls it for the data).
//! - **Start**: the thread that runs the task merges that record first,
//!   with the ends of the earlier siblings the task depends on (`depend`,
//!   `depend::Siblings`). In a wait heisen saw begin (a barrier,
//!   `taskwait`, a taskgroup's end, the region's final barrier, an
//!   undeferred task's wait in `GOMP_task` for its predecessors), its
//!   time since its last event was a wait for the task (R5: it waited
//!   until the task existed and its predecessors ended); in libgomp's own
//!   waits (`single`'s copy, the cancellation forms, `taskwait depend`,
//!   a team heisen did not start) nothing says when it
//!   began to wait, and it waits for nothing. Records this thread
//!   released itself are not merged: they are in its history already.
//! - **End**: the thread that ran the task releases a record when the
//!   task's body returns, folded into what waits for the task: its
//!   creator's children (merged at the creator's `taskwait`), the
//!   innermost taskgroup it was created in (merged at that taskgroup's
//!   end; a task of a nested group ends before that group's end, which
//!   the outer group merges in turn), its team's barrier episode (the
//!   barrier ending the episode the task was created in merges it with
//!   the arrivals, and the join the region's last episode's), and its
//!   dependent siblings.
//!
//! Without this, task work run inside a wait heisen sees (a barrier, the
//! join) left no event, and was taken for the wait's time.
//!
//! A taskloop's tasks (`taskloop`) start and end the same way, with a
//! block of heisen's own that libgomp copies for each (or, undeferred
//! without the program's copy function, runs them on in place).
//!
//! An undeferred task's data is always copied, onto the creating thread's
//! stack, by libgomp, with heisen's header (a few hundred bytes): libgomp
//! runs it in place only without a copy function, and the header needs
//! one.
//!
//! Not merged, so run as without heisen: the dependences `depend` lists
//! as not followed, `taskwait depend`, a `nogroup` taskloop's tasks at
//! their creator's `taskwait` (`taskloop`); a detached task's end is its body's return, not its
//! `omp_fulfill_event`; a cancelled task, never run, keeps its header's
//! references (the records it would have merged).

use core::cell::{Cell, RefCell};
use core::ffi::{c_int, c_long, c_uint, c_void};
use core::mem::{align_of, size_of};
use core::ptr;
use std::sync::{Arc, Mutex};

use heisen_core::{Dependency, Exchange};
use heisen_shmem::{Record, SELECTED, with_current};

use self::depend::{End, Siblings};
use super::{Team, own_team};
use crate::hook;
use crate::real::{self, Body, TaskCopy};

pub(crate) mod depend;
pub mod taskloop;

/// Task ends folded (a task's children, a taskgroup's tasks).
#[derive(Default)]
struct Ends(Mutex<Exchange<SELECTED>>);

impl Ends {
    fn add(&self, end: &Record) {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *all = all.combine(&Exchange::entry(end, 0));
    }

    fn all(&self) -> Exchange<SELECTED> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A taskgroup under way: its tasks' ends, and the group it is nested in.
struct Group {
    ends: Ends,
    outer: Option<Arc<Group>>,
}

/// What the task a thread runs (explicit, or a region's implicit one)
/// keeps for its waits.
#[derive(Default)]
struct Frame {
    /// Its children's ends, made at its first child.
    children: Option<Arc<Ends>>,
    /// The innermost taskgroup it runs in.
    group: Option<Arc<Group>>,
    /// An explicit task's team and episode, its creator's (a task made
    /// by a task run at a barrier, or at the region's final one, still
    /// ends before that barrier's exit); `None` for an implicit task,
    /// whose team and episode are read when it makes a task.
    binding: Option<Binding>,
    /// Its children with `depend` clauses.
    siblings: Siblings,
}

/// The team a task is bound to (null: none heisen started) and the
/// barrier episode it was created in.
#[derive(Clone, Copy)]
struct Binding {
    team: *const Team,
    episode: u64,
}

impl Binding {
    /// No team heisen started.
    const NONE: Binding = Binding {
        team: ptr::null(),
        episode: 0,
    };
}

std::thread_local! {
    static FRAME: RefCell<Frame> = RefCell::new(Frame::default());
    /// The wait heisen saw begin that the thread is in, where libgomp
    /// runs tasks: a task started there waited since the thread's last
    /// event.
    static WAITING: Cell<Waiting> = const { Cell::new(Waiting::No) };
}

/// Where a thread is, for a task it starts (`WAITING`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Waiting {
    /// Not in a wait heisen saw begin: in a body, or in libgomp's own.
    No,
    /// In a barrier's, `taskwait`'s, a taskgroup end's or `GOMP_task`'s
    /// wait.
    Seen,
    /// In this team's final barrier, after the member's body returned:
    /// its tasks only (a pool thread stays so until its next region, which
    /// may be one heisen did not start).
    Final(*const Team),
}

/// Sets where the thread is, returning where it was.
pub(super) fn set_waiting(waiting: Waiting) -> Waiting {
    WAITING
        .try_with(|w| w.replace(waiting))
        .unwrap_or(Waiting::No)
}

/// Runs `call`, a wait heisen saw begin if `seen` (it recorded the
/// wait's begin as an event).
pub(super) fn waiting<R>(seen: bool, call: impl FnOnce() -> R) -> R {
    if !seen {
        return call();
    }
    let outer = set_waiting(Waiting::Seen);
    let r = call();
    set_waiting(outer);
    r
}

/// Runs `f` as a fresh task with `frame`, the thread's outer task's
/// restored after.
fn within<R>(frame: Frame, f: impl FnOnce() -> R) -> R {
    let outer = FRAME.try_with(|c| c.replace(frame));
    let r = f();
    if let Ok(outer) = outer {
        let _ = FRAME.try_with(|c| c.replace(outer));
    }
    r
}

/// Runs a parallel region's body as its implicit task.
pub(super) fn implicit<R>(f: impl FnOnce() -> R) -> R {
    within(Frame::default(), f)
}

/// After a team barrier: every task of the episode ended, and the
/// barrier's exit merged them, so the implicit task forgets its children
/// with dependences (`Siblings::clear`).
pub(super) fn barrier_passed() {
    let _ = FRAME.try_with(|c| {
        let mut frame = c.borrow_mut();
        if frame.binding.is_none() {
            frame.siblings.clear();
        }
    });
}

/// What travels before a task's data: the program's body, copy function
/// and data, and the task's dependencies. Raw pointers only (libgomp
/// copies it as bytes); the `Arc`s' counts are the header's until the
/// task runs.
#[repr(C)]
#[derive(Clone, Copy)]
struct Header {
    /// Where libgomp writes a detachable task's event handle: the first
    /// word of the data it is given (GCC's data blocks keep the handle
    /// there), so the header's, passed on to the program's data by
    /// `copy_task`.
    event: *mut c_void,
    detach: bool,
    body: Body,
    copy: Option<TaskCopy>,
    data: *mut c_void,
    size: usize,
    /// Where the data begins after the header (the data's alignment).
    offset: usize,
    created: Option<Record>,
    parent: *const Ends,
    group: *const Group,
    binding: Binding,
    /// The slot of the task's end, if it has dependences.
    end: *const End,
    /// The ends of the siblings it depends on (a `Box`'s).
    after: *mut Vec<Arc<End>>,
}

/// `GOMP_TASK_FLAG_DEPEND` (libgomp's `gomp-constants.h`).
const DEPEND: c_uint = 1 << 3;
/// `GOMP_TASK_FLAG_DETACH`.
const DETACH: c_uint = 1 << 13;

/// `GOMP_task`: the task with a header before its data, run by
/// `run_task`; every other argument passed on.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_task(
    f: Body,
    data: *mut c_void,
    copy: Option<TaskCopy>,
    size: c_long,
    align: c_long,
    if_clause: bool,
    flags: c_uint,
    depend: *mut *mut c_void,
    priority: c_int,
    detach: *mut c_void,
) {
    let plain = || {
        // SAFETY: the caller's arguments, passed on.
        unsafe {
            real::GOMP_task(
                f, data, copy, size, align, if_clause, flags, depend, priority, detach,
            );
        }
    };
    let (Ok(bytes), Ok(data_align)) = (usize::try_from(size), usize::try_from(align.max(1))) else {
        return plain();
    };
    if !data_align.is_power_of_two() {
        return plain();
    }
    let offset = size_of::<Header>().next_multiple_of(data_align);
    let (Some(total), Ok(whole_align)) = (
        offset
            .checked_add(bytes)
            .and_then(|t| c_long::try_from(t).ok()),
        c_long::try_from(data_align.max(align_of::<Header>())),
    ) else {
        return plain();
    };
    // The creator's release (R8); without the runtime (a call from inside
    // heisen, a forked child) the task runs as without heisen.
    let Some(created) = hook(|st| with_current(|s| s.release(st.actions.create))) else {
        return plain();
    };
    let (parent, group, binding, end, after) = FRAME
        .try_with(|c| {
            let mut frame = c.borrow_mut();
            let children = frame.children.get_or_insert_with(Arc::default).clone();
            let binding = frame.binding.unwrap_or_else(|| {
                own_team().map_or(Binding::NONE, |t| Binding {
                    team: ptr::from_ref(t),
                    episode: t.barrier.generation(),
                })
            });
            // Followed among the children of a task heisen ran (or of an
            // implicit task of a team it started): a body libgomp runs
            // in a wait without heisen's wrapper (one made without the
            // runtime) is filed under the task the thread runs, whose
            // children it does not order.
            let followed = !binding.team.is_null()
                && WAITING.try_with(Cell::get).unwrap_or(Waiting::No) == Waiting::No;
            let (end, after) = if followed && flags & DEPEND != 0 && !depend.is_null() {
                // SAFETY: GCC's array, as the flag says.
                let (end, after) = unsafe { frame.siblings.child(depend) };
                (Arc::into_raw(end), Box::into_raw(Box::new(after)))
            } else {
                (ptr::null(), ptr::null_mut())
            };
            (Some(children), frame.group.clone(), binding, end, after)
        })
        .unwrap_or((None, None, Binding::NONE, ptr::null(), ptr::null_mut()));
    // Mutable: libgomp writes a detachable task's event into it.
    let mut header = Header {
        event: ptr::null_mut(),
        detach: flags & DETACH != 0 && !data.is_null(),
        body: f,
        copy,
        data,
        size: bytes,
        offset,
        created,
        parent: parent.map_or(ptr::null(), Arc::into_raw),
        group: group.map_or(ptr::null(), Arc::into_raw),
        binding,
        end,
        after,
    };
    // An undeferred task with dependences waits in the original for its
    // predecessors, since the release above (running other tasks
    // meanwhile): a wait heisen saw begin.
    waiting(true, || {
        // SAFETY: libgomp copies `total` bytes aligned to `whole_align` by
        // `copy_task`, which reads the header and the program's data.
        unsafe {
            real::GOMP_task(
                run_task,
                ptr::from_mut(&mut header).cast(),
                Some(copy_task),
                total,
                whole_align,
                if_clause,
                flags,
                depend,
                priority,
                detach,
            );
        }
    });
}

/// The task's copy: its header, then its data by the program's copy
/// function, or as bytes as libgomp would copy them.
unsafe extern "C" fn copy_task(to: *mut c_void, from: *mut c_void) {
    // SAFETY: `from` is `GOMP_task`'s header, `to` the task's block of
    // the header's offset and size, aligned for both (`GOMP_task`).
    unsafe {
        let header = from.cast::<Header>().read();
        to.cast::<Header>().write(header);
        let data = to.cast::<u8>().add(header.offset).cast::<c_void>();
        match header.copy {
            Some(copy) => copy(data, header.data),
            None if header.size > 0 => {
                ptr::copy_nonoverlapping(header.data.cast::<u8>(), data.cast::<u8>(), header.size);
            }
            None => {}
        }
        if header.detach && header.size >= size_of::<*mut c_void>() {
            data.cast::<*mut c_void>().write(header.event);
        }
    }
}

/// The task as libgomp runs it: the creator and the siblings it depends
/// on merged, the body, its end folded into its creator's children, its
/// taskgroup and its team, and kept for its dependent siblings.
unsafe extern "C" fn run_task(block: *mut c_void) {
    // SAFETY: the block `copy_task` filled; the header's references are
    // this run's to take back (libgomp runs a task once).
    let (header, parent, group, slot, after) = unsafe {
        let header = block.cast::<Header>().read();
        let parent = (!header.parent.is_null()).then(|| Arc::from_raw(header.parent));
        let group = (!header.group.is_null()).then(|| Arc::from_raw(header.group));
        let slot = (!header.end.is_null()).then(|| Arc::from_raw(header.end));
        let after = (!header.after.is_null()).then(|| Box::from_raw(header.after));
        (header, parent, group, slot, after)
    };
    let after: Vec<Record> = after.map_or_else(Vec::new, |after| {
        after
            .iter()
            .filter_map(|e| *e.lock().unwrap_or_else(|p| p.into_inner()))
            .collect()
    });
    started(header.created, header.binding.team, &after);
    let frame = Frame {
        children: None,
        group: group.clone(),
        binding: Some(header.binding),
        siblings: Siblings::default(),
    };
    // SAFETY: the program's body with its copied data, as libgomp would
    // call it.
    let end = run_body(frame, || unsafe {
        (header.body)(block.cast::<u8>().add(header.offset).cast());
    });
    if let Some(end) = end {
        if let Some(slot) = &slot {
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(end);
        }
        if let Some(parent) = &parent {
            parent.add(&end);
        }
        ended_in(&end, group.as_deref(), Some(header.binding));
    }
}

/// A task's start on this thread, made at `created` and bound to `team`:
/// merges `created` and `after` (the ends of the siblings it depends on,
/// which libgomp let it start after; R8), each unless this thread released
/// it itself (an undeferred task, a task run by its creator at a wait),
/// which its own history holds already; merged, its release would pass
/// for a transfer that took the whole wait (R5, case m.1).
fn started(created: Option<Record>, team: *const Team, after: &[Record]) {
    let waited = match WAITING.try_with(Cell::get).unwrap_or(Waiting::No) {
        Waiting::No => false,
        Waiting::Seen => true,
        Waiting::Final(final_team) => ptr::eq(final_team, team),
    };
    hook(|st| {
        with_current(|s| {
            let me = s.kernel().id();
            // In a wait heisen saw begin, the thread waited for the task
            // since its last event (R5); elsewhere (libgomp's own waits)
            // nothing says when it began to wait, and it waited for none.
            let begin = if waited {
                s.kernel().last_measured()
            } else {
                s.now()
            };
            let others = |r: &&Record| r.location != me;
            if after.is_empty() {
                if let Some(created) = created.as_ref().filter(others) {
                    s.end(begin, &[Dependency::immediate(created)], st.actions.join);
                }
                return;
            }
            let deps: Vec<_> = after
                .iter()
                .chain(created.as_ref())
                .filter(others)
                .map(Dependency::immediate)
                .collect();
            if !deps.is_empty() {
                s.end(begin, &deps, st.actions.join);
            }
        })
    });
}

/// Runs a task's `body` as the thread's task `frame` (no wait under way
/// inside it), then releases the task's end (R8), returned.
fn run_body(frame: Frame, body: impl FnOnce()) -> Option<Record> {
    let waiting = set_waiting(Waiting::No);
    within(frame, body);
    set_waiting(waiting);
    hook(|st| with_current(|s| s.release(st.actions.create))).flatten()
}

/// A task's `end` folded into what waits for it besides its creator and
/// its dependent siblings: its taskgroup, and its team's barrier episode
/// (`binding`; `None`: the task's waiter merges it otherwise).
fn ended_in(end: &Record, group: Option<&Group>, binding: Option<Binding>) {
    if let Some(group) = group {
        group.ends.add(end);
    }
    // SAFETY: a team outlives its tasks: its region's join waits for them
    // all (`Team`).
    if let Some(binding) = binding
        && let Some(team) = unsafe { binding.team.as_ref() }
    {
        team.barrier.task_ended(binding.episode, end);
    }
}

/// A wait by `call` for the tasks whose ends `ends` gives when it
/// returned (R6: as a barrier's exit, n-to-1).
fn wait_for(ends: Option<impl FnOnce() -> Exchange<SELECTED>>, call: impl FnOnce()) {
    let begin = ends
        .as_ref()
        .and_then(|_| hook(|st| with_current(|s| s.arrive(st.actions.join).0)).flatten());
    waiting(begin.is_some(), call);
    if let (Some(begin), Some(ends)) = (begin, ends) {
        let all = ends();
        hook(|st| with_current(|s| s.leave(begin, &all, st.actions.join)));
    }
}

/// `GOMP_taskwait`: merges the ends of the running task's children.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_taskwait() {
    let children = FRAME
        .try_with(|c| c.borrow().children.clone())
        .ok()
        .flatten();
    // SAFETY: no arguments; libgomp's contract.
    wait_for(children.map(|c| move || c.all()), || unsafe {
        real::GOMP_taskwait()
    });
    // Every child ended and was merged: later ones merge them through
    // this task's record.
    let _ = FRAME.try_with(|c| c.borrow_mut().siblings.clear());
}

/// `GOMP_taskgroup_start`: a taskgroup nested in the running task's.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_taskgroup_start() {
    let _ = FRAME.try_with(|c| {
        let mut frame = c.borrow_mut();
        let outer = frame.group.take();
        frame.group = Some(Arc::new(Group {
            ends: Ends::default(),
            outer,
        }));
    });
    // SAFETY: no arguments; libgomp's contract.
    unsafe { real::GOMP_taskgroup_start() };
}

/// `GOMP_taskgroup_end`: merges the ends of the group's tasks (those of
/// groups nested in it came by the tasks that ended those).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn GOMP_taskgroup_end() {
    let group = FRAME
        .try_with(|c| {
            let mut frame = c.borrow_mut();
            let group = frame.group.take();
            frame.group = group.as_ref().and_then(|g| g.outer.clone());
            group
        })
        .ok()
        .flatten();
    // SAFETY: no arguments; libgomp's contract.
    wait_for(group.map(|g| move || g.ends.all()), || unsafe {
        real::GOMP_taskgroup_end()
    });
}
