//! `taskloop` (`GOMP_taskloop`, `GOMP_taskloop_ull`): libgomp splits the
//! loop into tasks itself, each a copy of one data block whose first two
//! words it sets to the task's iteration range. heisen hands libgomp a
//! block of its own and a body of its own, as `GOMP_task` does, so that
//! each task's record travels with it (R8; 003 §4 Fig. 11):
//!
//! - the block begins with the program's first three words (libgomp
//!   writes the range into the first two and reads a reduction's pointer
//!   from the third), then heisen's header, then the program's data;
//! - each task's start merges the creator's release (`tasks::started`);
//!   its body copies the range into the program's data and runs the
//!   program's body there; its end is folded into the loop's taskgroup;
//! - the loop's return merges its tasks' ends (R6, as a taskgroup's end:
//!   libgomp waits for them inside the call, running some of them); with
//!   `nogroup` the tasks end into the enclosing taskgroup and the team's
//!   barrier episode instead, which merge them as they merge `GOMP_task`'s.
//!
//! The call waits for the tasks (without `nogroup`), so the header stays
//! in its frame and each task's block carries its address: 32 bytes more
//! than the program's per task, where libgomp copies every undeferred
//! task's data onto the stack at once (with a copy function). A `nogroup`
//! loop's tasks may outlive the call, so each block carries the whole
//! header (some 300 bytes).
//!
//! With the program's copy function heisen's stands in and calls it for
//! the data, as for `GOMP_task`; without one, libgomp copies heisen's
//! block as bytes, so the block holds a copy of the program's data (made
//! on the heap, freed when the call returns: libgomp has copied it into
//! every task by then, or run them all in place). A copy function of
//! heisen's would make libgomp copy every undeferred task's data onto the
//! stack at once (a million-task `taskloop` outside a parallel region
//! would not fit).
//!
//! Not merged: a `nogroup` loop's tasks at their creator's `taskwait`
//! (heisen would have to keep the creator's children alive for tasks it
//! cannot count; the wait stays a wait), and a `nogroup` loop with the
//! program's copy function, run as without heisen (its tasks would carry
//! the whole header onto the stack).

use core::alloc::Layout;
use core::ffi::{c_int, c_long, c_uint, c_ulong, c_void};
use core::mem::{align_of, size_of};
use core::ptr;
use std::sync::Arc;

use heisen_shmem::{Record, with_current};

use super::{Binding, FRAME, Frame, Group, Siblings, ended_in, run_body, started, wait_for};
use crate::hook;
use crate::openmp::own_team;
use crate::real::{self, Body, TaskCopy};

// The lead words are libgomp's `long` (`GOMP_taskloop`) or `unsigned long
// long` (`GOMP_taskloop_ull`): one layout for both on LP64 only.
const _: () = assert!(size_of::<c_long>() == size_of::<u64>());

/// `GOMP_TASK_FLAG_NOGROUP` (libgomp's `gomp-constants.h`).
const NOGROUP: c_uint = 1 << 11;

/// The program's words libgomp reads or writes at the block's start: the
/// task's first and end iteration, a task reduction's pointer.
const LEAD: usize = 3 * size_of::<u64>();

/// What follows the lead words in heisen's block.
#[repr(C)]
#[derive(Clone, Copy)]
struct Header {
    body: Body,
    copy: Option<TaskCopy>,
    /// The program's data (read by `copy_referenced` only).
    data: *mut c_void,
    /// Where the program's data begins in the block.
    offset: usize,
    created: Option<Record>,
    /// The taskgroup the tasks end into (the loop's, or with `nogroup` the
    /// enclosing one); not owned: a taskgroup's end waits for its tasks.
    group: *const Group,
    binding: Binding,
    /// Whether the tasks' ends go to their team's barrier episode too
    /// (`nogroup`: nothing in the call waits for them).
    into_team: bool,
}

macro_rules! taskloops {
    ($($(#[$doc:meta])* $name:ident($iteration:ty);)*) => {$(
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $name(
            f: Body,
            data: *mut c_void,
            copy: Option<TaskCopy>,
            size: c_long,
            align: c_long,
            flags: c_uint,
            num_tasks: c_ulong,
            priority: c_int,
            start: $iteration,
            end: $iteration,
            step: $iteration,
        ) {
            taskloop(f, data, copy, size, align, flags, |f, data, copy, size, align| {
                // SAFETY: the caller's arguments, or heisen's block and
                // body for them (`taskloop`).
                unsafe {
                    real::$name(
                        f, data, copy, size, align, flags, num_tasks, priority, start, end, step,
                    );
                }
            });
        }
    )*};
}

taskloops! {
    /// `GOMP_taskloop`: the tasks carry their creator's record; every
    /// argument but the body, data and copy function passed on.
    GOMP_taskloop(c_long);
    /// `GOMP_taskloop_ull`: as `GOMP_taskloop`, for unsigned long long
    /// iteration variables.
    GOMP_taskloop_ull(u64);
}

/// A block aligned for heisen's header and the program's data.
struct Block {
    ptr: *mut u8,
    layout: Layout,
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `taskloop`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// A taskloop whose original is `call(body, data, copy, size, align)`:
/// with heisen's block and body when the program's data has room for the
/// range and heisen's runtime runs, else with the program's own.
fn taskloop(
    f: Body,
    data: *mut c_void,
    copy: Option<TaskCopy>,
    size: c_long,
    align: c_long,
    flags: c_uint,
    call: impl FnOnce(Body, *mut c_void, Option<TaskCopy>, c_long, c_long),
) {
    let (Ok(bytes), Ok(data_align)) = (usize::try_from(size), usize::try_from(align.max(1))) else {
        return call(f, data, copy, size, align);
    };
    if !data_align.is_power_of_two() || bytes < 2 * size_of::<u64>() || data.is_null() {
        return call(f, data, copy, size, align);
    }
    let nogroup = flags & NOGROUP != 0;
    if nogroup && copy.is_some() {
        // Its tasks may outlive the call, so each would carry the whole
        // header, which libgomp copies onto the stack for every undeferred
        // task at once when there is a copy function: run as without
        // heisen (`Not merged` above).
        return call(f, data, copy, size, align);
    }
    // The header travels in each task's block (`nogroup`: its tasks may
    // outlive the call), or stays in this frame and the tasks carry its
    // address (the call waits for every task).
    let inline = nogroup;
    let head = LEAD
        + if inline {
            size_of::<Header>()
        } else {
            size_of::<*const Header>()
        };
    let offset = head.next_multiple_of(data_align);
    let whole_align = data_align.max(align_of::<Header>());
    let Some(layout) = offset
        .checked_add(bytes)
        .and_then(|total| Layout::from_size_align(total, whole_align).ok())
    else {
        return call(f, data, copy, size, align);
    };
    let (Ok(total), Ok(whole_align)) = (
        c_long::try_from(layout.size()),
        c_long::try_from(whole_align),
    ) else {
        return call(f, data, copy, size, align);
    };
    // The creator's release (R8); without the runtime (a call from inside
    // heisen, a forked child) the loop runs as without heisen.
    let Some(created) = hook(|st| with_current(|s| s.release(st.actions.create))) else {
        return call(f, data, copy, size, align);
    };
    let (enclosing, binding) = FRAME
        .try_with(|c| {
            let frame = c.borrow();
            let binding = frame.binding.unwrap_or_else(|| {
                own_team().map_or(Binding::NONE, |t| Binding {
                    team: ptr::from_ref(t),
                    episode: t.barrier.generation(),
                })
            });
            (frame.group.clone(), binding)
        })
        .unwrap_or((None, Binding::NONE));
    let group = if nogroup {
        enclosing
    } else {
        Some(Arc::new(Group {
            ends: super::Ends::default(),
            outer: None,
        }))
    };
    let header = Header {
        body: f,
        copy,
        data,
        offset,
        created,
        group: group.as_ref().map_or(ptr::null(), Arc::as_ptr),
        binding,
        into_team: nogroup,
    };
    // SAFETY: a non-zero size (at least the lead words and the header).
    let block = unsafe { std::alloc::alloc(layout) };
    if block.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    let block = Block { ptr: block, layout };
    // SAFETY: the block holds `offset + bytes` bytes, aligned for the
    // header (or its address) and the data; the program's data holds
    // `bytes` of them.
    unsafe {
        let lead = bytes.min(LEAD);
        ptr::copy_nonoverlapping(data.cast::<u8>(), block.ptr, lead);
        if inline {
            block.ptr.add(LEAD).cast::<Header>().write(header);
        } else {
            block
                .ptr
                .add(LEAD)
                .cast::<*const Header>()
                .write(ptr::from_ref(&header));
        }
        if copy.is_none() {
            ptr::copy_nonoverlapping(data.cast::<u8>(), block.ptr.add(offset), bytes);
        }
    }
    let body: Body = if inline { run_carried } else { run_referenced };
    let copy_block: Option<TaskCopy> = copy.map(|_| copy_referenced as TaskCopy);
    let run = || call(body, block.ptr.cast(), copy_block, total, whole_align);
    match group.filter(|_| !nogroup) {
        // libgomp waits for the tasks inside the call (its own taskgroup):
        // a wait heisen saw begin, whose end merges theirs (R6).
        Some(group) => wait_for(Some(move || group.ends.all()), run),
        None => run(),
    }
    drop(block);
}

/// A task's copy when the program has a copy function (never with
/// `nogroup`): the lead words and the header's address, then the data by
/// the program's function.
unsafe extern "C" fn copy_referenced(to: *mut c_void, from: *mut c_void) {
    // SAFETY: `from` is heisen's block, `to` a task's of the same layout
    // (`taskloop`); the header it names lives until the loop's call
    // returns, after every task.
    unsafe {
        let size = LEAD + size_of::<*const Header>();
        ptr::copy_nonoverlapping(from.cast::<u8>(), to.cast::<u8>(), size);
        let header = from
            .cast::<u8>()
            .add(LEAD)
            .cast::<*const Header>()
            .read()
            .read();
        if let Some(copy) = header.copy {
            copy(to.cast::<u8>().add(header.offset).cast(), header.data);
        }
    }
}

/// A task whose block carries the header (`nogroup`).
unsafe extern "C" fn run_carried(block: *mut c_void) {
    // SAFETY: a block `taskloop` made or libgomp copied from one.
    let header = unsafe { block.cast::<u8>().add(LEAD).cast::<Header>().read() };
    // SAFETY: as above.
    unsafe { run_loop_task(block, header) };
}

/// A task whose block carries the header's address (the loop's call
/// waits for it, so the header outlives it).
unsafe extern "C" fn run_referenced(block: *mut c_void) {
    // SAFETY: a block `taskloop` made or libgomp copied from one.
    let header = unsafe {
        block
            .cast::<u8>()
            .add(LEAD)
            .cast::<*const Header>()
            .read()
            .read()
    };
    // SAFETY: as above.
    unsafe { run_loop_task(block, header) };
}

/// One task of the loop as libgomp runs it: the creator merged, the range
/// libgomp set passed on to the program's data, the program's body, the
/// end folded into the loop's taskgroup (and with `nogroup` the team's
/// episode).
///
/// # Safety
/// `block` is a task's block of the loop `header` describes.
unsafe fn run_loop_task(block: *mut c_void, header: Header) {
    // SAFETY: the lead words, then the program's data at its offset.
    let data = unsafe {
        let data = block.cast::<u8>().add(header.offset);
        ptr::copy_nonoverlapping(block.cast::<u8>(), data, 2 * size_of::<u64>());
        data
    };
    // SAFETY: the group outlives its tasks (the loop's call, or the
    // enclosing taskgroup's end, waits for them); one more count for the
    // task's frame.
    let group = unsafe {
        (!header.group.is_null()).then(|| {
            Arc::increment_strong_count(header.group);
            Arc::from_raw(header.group)
        })
    };
    started(header.created, header.binding.team, &[]);
    let frame = Frame {
        children: None,
        group: group.clone(),
        binding: Some(header.binding),
        siblings: Siblings::default(),
    };
    // SAFETY: the program's body with its data, the range set, as libgomp
    // would call it.
    let end = run_body(frame, || unsafe { (header.body)(data.cast()) });
    if let Some(end) = end {
        ended_in(
            &end,
            group.as_deref(),
            header.into_team.then_some(header.binding),
        );
    }
}
