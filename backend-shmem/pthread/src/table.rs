//! Fixed-capacity tables of per-object state keyed by the object's
//! address (R12: bounded memory, overflow counted).
//!
//! A `pthread_mutex_t` has no room for heisen's state, and objects made
//! with `PTHREAD_MUTEX_INITIALIZER` are never seen by an `init` call, so
//! every object's state lives here, bound to its address on first use.
//! An entry stays bound to its address until the object is destroyed
//! (`*_destroy`, [`Table::remove`]): its slot is then free for another
//! object, so a program that makes and destroys objects all run long
//! (CPython makes a semaphore per lock) never fills the table; `init`
//! resets an entry, so a new object at a reused address starts fresh.
//! When no entry is free within [`PROBES`] slots the object goes
//! unmeasured (it still works: the original is always called) and the
//! miss is counted for the message at exit.
//!
//! Lookups are lock-free. Binding and freeing slots take the table's
//! lock (first use and destruction of an object, not its hot path), so
//! two threads that use a new object at once bind it once.

use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// The key of a slot whose object was destroyed: skipped by lookups,
/// reused by the next binding.
const FREED: usize = usize::MAX;

/// Slots examined before an object is declared beyond the table.
pub(crate) const PROBES: usize = 32;

/// Per-object state bound to addresses.
pub(crate) struct Table<E> {
    keys: Box<[AtomicUsize]>,
    entries: Box<[E]>,
    /// Calls on objects that found no entry.
    missed: AtomicU64,
    /// Held to bind or free a slot.
    binding: Mutex<()>,
    /// What the objects are, for the message at exit.
    pub(crate) what: &'static str,
}

impl<E: Default> Table<E> {
    /// A table of `capacity` entries (a power of two).
    pub(crate) fn new(capacity: usize, what: &'static str) -> Table<E> {
        debug_assert!(capacity.is_power_of_two());
        Table {
            keys: (0..capacity).map(|_| AtomicUsize::new(0)).collect(),
            entries: (0..capacity).map(|_| E::default()).collect(),
            missed: AtomicU64::new(0),
            binding: Mutex::new(()),
            what,
        }
    }
}

impl<E> Table<E> {
    /// The entry of the object at `key`, bound on first use; `None` (and
    /// counted) when the table has no room for it. The common case, an
    /// object found at its home index, is inlined into the caller; the rest
    /// ([`Table::probe`]) is not.
    #[inline(always)]
    pub(crate) fn get(&self, key: usize) -> Option<&E> {
        let i = self.home(key);
        if let (Some(k), Some(e)) = (self.keys.get(i), self.entries.get(i))
            && k.load(Ordering::Acquire) == key
        {
            return Some(e);
        }
        self.probe(key, i)
    }

    /// The home index of `key`: Fibonacci hashing of the address without
    /// its alignment bits.
    #[inline(always)]
    fn home(&self, key: usize) -> usize {
        ((key >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) & (self.keys.len() - 1)
    }

    /// Linear probing from index `i`: finds `key`, or binds it to a free
    /// slot (the first freed one, else the first never used); `None`
    /// (counted) when none of [`PROBES`] slots has it or is free.
    #[inline(never)]
    fn probe(&self, key: usize, i: usize) -> Option<&E> {
        if let Some(j) = self.find(key, i) {
            return self.entries.get(j);
        }
        let _bind = self.binding.lock().unwrap_or_else(|p| p.into_inner());
        // Again under the lock: another thread may have bound it meanwhile.
        if let Some(j) = self.find(key, i) {
            return self.entries.get(j);
        }
        let mask = self.keys.len() - 1;
        let mut free = None;
        let mut j = i;
        for _ in 0..PROBES {
            match self.keys[j].load(Ordering::Acquire) {
                FREED => {
                    free.get_or_insert(j);
                }
                0 => {
                    free.get_or_insert(j);
                    break; // no key lies beyond a never-used slot
                }
                _ => {}
            }
            j = (j + 1) & mask;
        }
        match free {
            Some(j) => {
                self.keys[j].store(key, Ordering::Release);
                self.entries.get(j)
            }
            None => {
                self.missed.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// The index of `key` from its home index `i`, without binding.
    fn find(&self, key: usize, mut i: usize) -> Option<usize> {
        let mask = self.keys.len() - 1;
        for _ in 0..PROBES {
            match self.keys[i].load(Ordering::Acquire) {
                k if k == key => return Some(i),
                0 => return None,
                _ => i = (i + 1) & mask,
            }
        }
        None
    }

    /// The object at `key` was destroyed: `clear` empties its entry and the
    /// slot is free for the next object (an object never seen has none).
    /// The program uses no destroyed object (POSIX), so no thread holds
    /// the entry meanwhile.
    pub(crate) fn remove(&self, key: usize, clear: impl FnOnce(&E)) {
        let _bind = self.binding.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(j) = self.find(key, self.home(key))
            && let Some(e) = self.entries.get(j)
        {
            clear(e);
            self.keys[j].store(FREED, Ordering::Release);
        }
    }

    /// Calls that found no entry.
    pub(crate) fn missed(&self) -> u64 {
        self.missed.load(Ordering::Relaxed)
    }

    /// Entries.
    pub(crate) fn capacity(&self) -> usize {
        self.keys.len()
    }
}
