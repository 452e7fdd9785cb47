//! Task dependences (`depend` clauses) among one task's children: a task
//! starts only after the earlier siblings it depends on ended, so its
//! start merges their ends with its creator's record (R8; 003 §4: the
//! hand-off is the predecessor's end, whichever thread ran it). Without
//! them, a thread that waited for a dilated predecessor had the whole wait
//! compensated away.
//!
//! Followed: `out`/`inout` (after every earlier sibling on the address)
//! and `in` (after the last `out`/`inout` on it), among the children of a
//! task bound to a team heisen started. Not followed: `mutexinoutset`,
//! `inoutset` and depend objects (`depobj`), `omp_all_memory`'s order
//! against other addresses (it is the null address here), the children of
//! tasks heisen did not run. Leaving a sibling out is never
//! wrong, only less precise: whatever a later sibling would have merged
//! from it came before its own predecessors, which it still merges.
//! Bounded (R12): `ADDRESSES` addresses among one task's children and
//! `READERS` `in` siblings per address since its last `out`, until the
//! task's next `taskwait` or barrier; what did not fit is counted for the
//! note at exit (a sibling not tracked, which a later one may have needed).

use core::ffi::c_void;
use core::slice;
use core::sync::atomic::{AtomicU64, Ordering};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use heisen_shmem::Record;

/// A task's end, set when its body returns, for the siblings after it.
pub(super) type End = Mutex<Option<Record>>;

/// Addresses followed per task's children.
pub(crate) const ADDRESSES: usize = 1024;
/// `in` siblings kept per address since its last `out`.
pub(crate) const READERS: usize = 64;

/// Dependences that did not fit the bounds (a task's own dependence
/// merged nothing, or a sibling was left out).
static UNTRACKED: AtomicU64 = AtomicU64::new(0);

/// Dependences not followed for want of room, for the note at exit.
pub(crate) fn untracked() -> u64 {
    UNTRACKED.load(Ordering::Relaxed)
}

/// One task's children with dependences, by address.
#[derive(Default)]
pub(super) struct Siblings(HashMap<usize, Access>);

/// The siblings on one address a later one may depend on.
#[derive(Default)]
struct Access {
    /// The last `out`/`inout` sibling.
    writer: Option<Arc<End>>,
    /// The `in` siblings since it.
    readers: Vec<Arc<End>>,
}

impl Siblings {
    /// A new child with libgomp's `depend` array: the slot of its end,
    /// and the ends of the siblings it depends on.
    ///
    /// # Safety
    /// `depend` is the array GCC passed `GOMP_task` with
    /// `GOMP_TASK_FLAG_DEPEND`.
    pub(super) unsafe fn child(&mut self, depend: *mut *mut c_void) -> (Arc<End>, Vec<Arc<End>>) {
        let end = Arc::new(End::default());
        let mut after = Vec::new();
        // SAFETY: the caller's.
        let (outs, ins) = unsafe { kinds(depend) };
        for &a in outs {
            if let Some(access) = self.access(a as usize) {
                after.extend(access.writer.replace(Arc::clone(&end)));
                after.append(&mut access.readers);
            }
        }
        for &a in ins {
            if let Some(access) = self.access(a as usize) {
                after.extend(access.writer.iter().cloned());
                if access.readers.len() < READERS {
                    access.readers.push(Arc::clone(&end));
                } else {
                    UNTRACKED.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        (end, after)
    }

    /// Forgets every child: they all ended, and the task merged them
    /// (`taskwait`, a barrier), so later ones merge them through it.
    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    fn access(&mut self, address: usize) -> Option<&mut Access> {
        if self.0.len() >= ADDRESSES && !self.0.contains_key(&address) {
            UNTRACKED.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Some(self.0.entry(address).or_default())
    }
}

/// The `out`/`inout` and the `in` addresses of libgomp's `depend` array
/// (GOMP_task's comment in libgomp's `task.c`): `[n, n_out, addresses]`,
/// or, when its first word is 0, `[0, n, n_out, n_mutexinoutset, n_in,
/// addresses in that order, then depend objects]`.
///
/// # Safety
/// `depend` is such an array.
unsafe fn kinds<'a>(depend: *mut *mut c_void) -> (&'a [*mut c_void], &'a [*mut c_void]) {
    // SAFETY: the caller's: the counts come first, the addresses after.
    unsafe {
        let word = |i: usize| *depend.add(i) as usize;
        if word(0) != 0 {
            let n = word(0);
            let all = slice::from_raw_parts(depend.add(2), n);
            all.split_at(word(1).min(n))
        } else {
            let n = word(1);
            let all = slice::from_raw_parts(depend.add(5), n);
            let outs = word(2).min(n);
            let ins_from = outs.saturating_add(word(3)).min(n);
            let ins_to = ins_from.saturating_add(word(4)).min(n);
            (&all[..outs], &all[ins_from..ins_to])
        }
    }
}
