//! Where a lock keeps the record of its last release until the next
//! acquire merges it (R8; 003 §4, Fig. 10a: the n-th `endLock` depends on
//! the (n-1)-th `unLock`).
//!
//! A [`Slot`] needs no synchronisation of its own: only the thread that
//! holds the lock writes it (just before unlocking) or reads it (just after
//! locking), so the lock itself orders every access. [`Readers`] collects
//! the releases of a reader-writer lock's readers, which release
//! concurrently, for the next writer.

use crate::runtime::ActionId;
use crate::sync::{Mutex, UnsafeCell, const_unless_loom};
use crate::thread::with_current;
use crate::{PendingRecord, Record};

/// The transfer model (R5) of a hand-off whose waiter is let go some time
/// after the release it merges, by something heisen does not see and the
/// program does without heisen too: a thread's exit after its end record
/// (a join), a team's launch after its fork. The largest, which R5 clips
/// to the time from the release to the wait's end, so that the waiter's
/// delay becomes at most the releaser's (`x' = min(x + w, x_j)`). With no
/// transfer (an immediate hand-off), a waiter that began after the
/// release had that time compensated away: a join that began after the
/// thread's end record took the thread's exit for overhead.
pub const LET_GO_LATER: u64 = i64::MAX as u64;

/// The record of a lock's last release, guarded by the lock it belongs to.
/// It is kept lazily ([`PendingRecord`]): the next acquire is most often
/// the releasing thread's own, which merges nothing and reads only who
/// released; another thread's acquire materialises it.
#[derive(Debug)]
pub struct Slot(UnsafeCell<PendingRecord>);

// SAFETY: every access happens while the owning lock is held (see the
// module docs), so no two threads touch the record at once.
#[allow(unsafe_code)] // reason: the lock the slot belongs to is its synchronisation
unsafe impl Sync for Slot {}

// A panic can leave a slot's record half-stored, which misstates at most
// a measurement, never the user's data: the slot is unwind-safe, so that
// heisen's locks are, as std's (`impl RefUnwindSafe for Mutex<T>`, whose
// poisoning reports the user's broken invariants).
impl core::panic::RefUnwindSafe for Slot {}

impl Slot {
    const_unless_loom! {
        /// An empty slot: the first acquire merges nothing (R3).
        pub fn new() -> Slot {
            Slot(UnsafeCell::new(PendingRecord::EMPTY))
        }
    }

    /// The last release's record.
    ///
    /// # Safety
    /// The caller holds the lock this slot belongs to (for a reader-writer
    /// lock: in any mode).
    #[inline]
    #[allow(unsafe_code)] // reason: see the safety section
    pub unsafe fn read(&self) -> Record {
        // SAFETY: the lock is held, so no writer is active (module docs).
        self.0.with(|p| unsafe { (*p).piggyback() })
    }

    /// Runs `f` on the last release's record, materialised.
    ///
    /// # Safety
    /// As [`Slot::read`]: the caller holds the lock this slot belongs to.
    #[inline]
    #[allow(unsafe_code)] // reason: see the safety section
    pub unsafe fn with<R>(&self, f: impl FnOnce(&Record) -> R) -> R {
        // SAFETY: as `read`.
        f(&unsafe { self.read() })
    }

    /// Runs `f` on the last release's record as it is kept (no copy): for
    /// an acquire that first asks whose release it is.
    ///
    /// # Safety
    /// As [`Slot::read`]: the caller holds the lock this slot belongs to.
    #[inline]
    #[allow(unsafe_code)] // reason: see the safety section
    pub unsafe fn with_pending<R>(&self, f: impl FnOnce(&PendingRecord) -> R) -> R {
        // SAFETY: the lock is held, so no writer is active (module docs).
        self.0.with(|p| f(unsafe { &*p }))
    }

    /// Stores the calling thread's release of `action` (R3, R8), made by
    /// the thread's state where it is kept, lazily: the record is not
    /// passed out through the call and copied again, and its per-region
    /// values are left for a reader to materialise. An unmeasured
    /// thread's release carries no record (R3).
    ///
    /// # Safety
    /// As [`Slot::write`].
    #[inline]
    #[allow(unsafe_code)] // reason: see the safety section
    pub unsafe fn release_into(&self, action: ActionId) {
        // SAFETY: the lock is held exclusively (module docs).
        self.0.with_mut(|p| {
            let record = unsafe { &mut *p };
            if with_current(|s| s.release_split_pending(action, record)).is_none() {
                *record = PendingRecord::EMPTY;
            }
        });
    }

    /// Stores a release's record.
    ///
    /// # Safety
    /// The caller holds the lock this slot belongs to exclusively.
    #[inline]
    #[allow(unsafe_code)] // reason: see the safety section
    pub unsafe fn write(&self, record: Record) {
        // SAFETY: the lock is held exclusively (module docs).
        self.0
            .with_mut(|p| unsafe { *p = PendingRecord::from(record) });
    }
}

impl Default for Slot {
    fn default() -> Self {
        Slot::new()
    }
}

/// Readers' releases kept for the next writer. R8 makes a writer depend on
/// every reader that held the lock since the last writer; beyond
/// [`Readers::CAPACITY`] of them, the ones with the latest approximated
/// release are kept (R5: they bound the writer's `a(e) >= a_j + l_j` from
/// below when it did not wait; R12: bounded), and the rest are counted.
#[derive(Debug)]
pub struct Readers {
    records: Mutex<ReaderRecords>,
}

#[derive(Debug, Default)]
struct ReaderRecords {
    kept: heapless::Vec<Record, { Readers::CAPACITY }>,
    folded: u64,
}

impl Readers {
    /// Reader releases kept verbatim between two writers.
    pub const CAPACITY: usize = 4;

    const_unless_loom! {
        /// No reader released yet.
        pub fn new() -> Readers {
            Readers {
                records: Mutex::new(ReaderRecords {
                    kept: heapless::Vec::new(),
                    folded: 0,
                }),
            }
        }
    }

    /// A reader's release (called before it unlocks).
    pub fn push(&self, record: Record) {
        if !record.flags.contains(heisen_core::Flags::DELAY) {
            return; // an unmeasured reader: nothing to merge (R3)
        }
        let mut r = self.records.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(record) = r.kept.push(record) {
            r.folded += 1;
            // Keep the latest approximated releases (see the type's docs).
            if let Some(oldest) = r.kept.iter_mut().min_by_key(|k| k.approximated)
                && oldest.approximated < record.approximated
            {
                *oldest = record;
            }
        }
    }

    /// Takes every kept record for a writer that just acquired the lock,
    /// leaving none (the next writer depends on this one, not on them),
    /// and returns how many releases were folded away.
    pub fn take(&self) -> (heapless::Vec<Record, { Readers::CAPACITY }>, u64) {
        let mut r = self.records.lock().unwrap_or_else(|p| p.into_inner());
        let folded = core::mem::take(&mut r.folded);
        (core::mem::take(&mut r.kept), folded)
    }
}

impl Default for Readers {
    fn default() -> Self {
        Readers::new()
    }
}
