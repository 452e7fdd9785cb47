//! Fixed-capacity tables of per-object state keyed by the object's
//! address (R12: bounded memory, overflow counted).
//!
//! A `pthread_mutex_t` has no room for heisen's state, and objects made
//! with `PTHREAD_MUTEX_INITIALIZER` are never seen by an `init` call, so
//! every object's state lives here, bound to its address on first use.
//! An entry stays bound to its address for the rest of the run; `init` and
//! `destroy` reset it, so a new object at a reused address starts fresh.
//! When no entry is free within [`PROBES`] slots the object goes
//! unmeasured (it still works: the original is always called) and the
//! miss is counted for the message at exit.

use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Slots examined before an object is declared beyond the table.
pub(crate) const PROBES: usize = 32;

/// Per-object state bound to addresses.
pub(crate) struct Table<E> {
    keys: Box<[AtomicUsize]>,
    entries: Box<[E]>,
    /// Calls on objects that found no entry.
    missed: AtomicU64,
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

    /// Linear probing from index `i`: finds `key`, or binds it to the
    /// first free entry; `None` (counted) after [`PROBES`] entries.
    #[inline(never)]
    fn probe(&self, key: usize, mut i: usize) -> Option<&E> {
        let mask = self.keys.len() - 1;
        for _ in 0..PROBES {
            let k = self.keys[i].load(Ordering::Acquire);
            if k == key {
                return Some(&self.entries[i]);
            }
            if k == 0 {
                match self.keys[i].compare_exchange(0, key, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => return Some(&self.entries[i]),
                    Err(k) if k == key => return Some(&self.entries[i]),
                    Err(_) => {}
                }
            }
            i = (i + 1) & mask;
        }
        self.missed.fetch_add(1, Ordering::Relaxed);
        None
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
