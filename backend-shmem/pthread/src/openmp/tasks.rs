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
//!   its time since its last event a wait for the task (R5: a thread at a
//!   barrier or a `taskwait` that picks up a task waited until it
//!   existed).
//! - **End**: the thread that ran the task releases a record when the
//!   task's body returns, folded into what waits for the task: its
//!   creator's children (merged at the creator's `taskwait`), the
//!   innermost taskgroup it was created in (merged at that taskgroup's
//!   end; a task of a nested group ends before that group's end, which
//!   the outer group merges in turn), and its team's barrier episode (the
//!   barrier ending the episode the task was created in merges it with
//!   the arrivals, and the join the region's last episode's).
//!
//! Without this, task work run inside a wait heisen sees (a barrier, the
//! join) left no event, and was taken for the wait's time.
//!
//! Not merged, so run as without heisen: a task's `depend` predecessors
//! (its start merges its creator only), `taskwait depend`, tasks libgomp
//! makes itself (`taskloop`); a detached task's end is its body's return,
//! not its `omp_fulfill_event`; a cancelled task, never run, keeps its
//! header's references (a few bytes each).

use core::cell::RefCell;
use core::ffi::{c_int, c_long, c_uint, c_void};
use core::mem::{align_of, size_of};
use core::ptr;
use std::sync::{Arc, Mutex};

use heisen_core::{Dependency, Exchange};
use heisen_shmem::{Record, SELECTED, with_current};

use super::{Team, own_team};
use crate::hook;
use crate::real::{self, Body, TaskCopy};

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
    /// The team's episode it belongs to: an explicit task's is its
    /// creator's (a task made by a task run at a barrier still ends
    /// before that barrier's exit); an implicit task's is the barrier's.
    episode: Option<u64>,
}

std::thread_local! {
    static FRAME: RefCell<Frame> = RefCell::new(Frame::default());
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
    team: *const Team,
    episode: u64,
}

/// `GOMP_TASK_FLAG_DETACH` (libgomp's `gomp-constants.h`).
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
    if !data_align.is_power_of_two() || hook(|_| ()).is_none() {
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
    let team = own_team();
    let (parent, group, episode) = FRAME
        .try_with(|c| {
            let mut frame = c.borrow_mut();
            let children = frame.children.get_or_insert_with(Arc::default).clone();
            let episode = frame
                .episode
                .or_else(|| team.map(|t| t.barrier.generation()));
            (Some(children), frame.group.clone(), episode.unwrap_or(0))
        })
        .unwrap_or((None, None, 0));
    let header = Header {
        event: ptr::null_mut(),
        detach: flags & DETACH != 0 && !data.is_null(),
        body: f,
        copy,
        data,
        size: bytes,
        offset,
        created: hook(|st| with_current(|s| s.release(st.actions.create))).flatten(),
        parent: parent.map_or(ptr::null(), Arc::into_raw),
        group: group.map_or(ptr::null(), Arc::into_raw),
        team: team.map_or(ptr::null(), ptr::from_ref),
        episode,
    };
    // SAFETY: libgomp copies `total` bytes aligned to `whole_align` by
    // `copy_task`, which reads the header and the program's data.
    unsafe {
        real::GOMP_task(
            run_task,
            ptr::from_ref(&header).cast_mut().cast(),
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
        if header.detach {
            data.cast::<*mut c_void>().write(header.event);
        }
    }
}

/// The task as libgomp runs it: the creator merged, the body, its end
/// folded into its creator's children, its taskgroup and its team.
unsafe extern "C" fn run_task(block: *mut c_void) {
    // SAFETY: the block `copy_task` filled; the header's references are
    // this run's to take back (libgomp runs a task once).
    let (header, parent, group) = unsafe {
        let header = block.cast::<Header>().read();
        let parent = (!header.parent.is_null()).then(|| Arc::from_raw(header.parent));
        let group = (!header.group.is_null()).then(|| Arc::from_raw(header.group));
        (header, parent, group)
    };
    if let Some(created) = &header.created {
        hook(|st| {
            with_current(|s| {
                // The thread waited for the task since its last event (R5).
                let begin = s.kernel().last_measured();
                s.end(begin, &[Dependency::immediate(created)], st.actions.join)
            })
        });
    }
    let frame = Frame {
        children: None,
        group: group.clone(),
        episode: Some(header.episode),
    };
    within(frame, || {
        // SAFETY: the program's body with its copied data, as libgomp
        // would call it.
        unsafe { (header.body)(block.cast::<u8>().add(header.offset).cast()) }
    });
    let end = hook(|st| with_current(|s| s.release(st.actions.create))).flatten();
    if let Some(end) = end {
        if let Some(parent) = &parent {
            parent.add(&end);
        }
        if let Some(group) = &group {
            group.ends.add(&end);
        }
        // SAFETY: a team outlives its tasks: its region's join waits for
        // them all (`Team`).
        if let Some(team) = unsafe { header.team.as_ref() } {
            team.barrier.task_ended(header.episode, &end);
        }
    }
}

/// A wait by `call` for the tasks whose ends `ends` gives when it
/// returned (R6: as a barrier's exit, n-to-1).
fn wait_for(ends: Option<impl FnOnce() -> Exchange<SELECTED>>, call: impl FnOnce()) {
    let begin = ends
        .is_some()
        .then(|| hook(|st| with_current(|s| s.arrive(st.actions.join).0)).flatten())
        .flatten();
    call();
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
