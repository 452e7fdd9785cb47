//! The request table (issue item 2; seed 000 §4.3.2): for every pending
//! nonblocking or persistent operation, the memory its record travels in
//! and what its completion must do. `Wait*` and `Test*` look a request up
//! **before** the MPI completes it (which sets the program's handle to
//! `MPI_REQUEST_NULL`) and merge after.
//!
//! Bounded (R12): a fixed number of slots, allocated once. A send posted
//! when the table is full carries the read-only empty record, a receive
//! writes its record into a scratch slot nobody reads; both run unmeasured
//! and are counted. Handles are unique among live requests only, so an
//! entry leaves the map before its completion call, and goes back if the
//! request did not complete: a handle the MPI reuses for another thread's
//! new request can never find a stale entry.

use core::cell::UnsafeCell;
use core::ffi::c_int;
use std::sync::{Mutex, OnceLock};

use heisen_shmem::runtime::Runtime;

use crate::piggyback::{self, LEN, Wire};
use crate::sys::{self, MPI_Datatype, MPI_Request, MPI_Status};

/// Pending requests heisen tracks at once per process.
pub const CAPACITY: usize = 4096;

/// Staging buffers for small contiguous nonblocking messages (record and
/// data copied together, no struct type; `datatype`).
pub const STAGES: usize = 64;

/// Bytes of one staging buffer.
pub const STAGE_BYTES: usize = LEN + crate::datatype::STAGE;

/// Largest payload of a small staging buffer, in bytes.
pub const SMALL_STAGE: usize = 128;

/// Small staging buffers: one per slot, so that every tracked message of
/// at most [`SMALL_STAGE`] bytes is staged however many are pending (see
/// [`Table::reserve_staged`]). Their memory is reserved at start (R12) and
/// stays zero pages until used.
pub const SMALL_STAGES: usize = CAPACITY;

/// Bytes of one small staging buffer.
pub const SMALL_STAGE_BYTES: usize = LEN + SMALL_STAGE;

/// Requests freed by the program while active (`MPI_Request_free`) that
/// heisen completes later, at most.
pub const ORPHANS: usize = 256;

/// What a completion does besides the MPI's own work: a module (a
/// nonblocking or persistent collective) registers a request with its own
/// completion.
pub trait Completion: Send {
    /// Runs once the request completed, on the completing thread, with the
    /// MPI's status (never `MPI_STATUS_IGNORE`) and the measured time the
    /// completion call began (its clock read after its own cost, R1). A
    /// persistent request's completion stays filed and runs again after
    /// each start.
    fn complete(&mut self, begin: u64, status: *mut MPI_Status, cancelled: bool);

    /// Runs after the program's `MPI_Start` or `MPI_Startall` started the
    /// (persistent) request successfully.
    fn started(&mut self) {}

    /// Runs instead of [`Completion::complete`] when the MPI handed out the
    /// request's handle again before heisen saw it complete (see
    /// [`Table::insert`]): the request is complete, but when is unknown, so
    /// nothing is merged; what the completion holds must still be let go
    /// of without blocking.
    fn displaced(self: Box<Self>) {}
}

impl core::fmt::Debug for dyn Completion {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Completion")
    }
}

/// What kind of operation a request is.
#[derive(Debug)]
pub enum Kind {
    /// A send: its record was taken when it was posted (R3); nothing to
    /// merge at completion.
    Send,
    /// A receive: its completion merges the record (R4, R5).
    Recv {
        /// Its call site (the posting call's region).
        site: u32,
        /// Posted with `MPI_ANY_SOURCE` (R11).
        wildcard: bool,
    },
    /// Another module's operation.
    Hook(Box<dyn Completion>),
    /// A receive posted while the table was full: no record slot, no
    /// merge, but its status must still be fixed (its message carries a
    /// record). Its `Taken::index` is [`NO_SLOT`].
    Unmeasured,
}

/// The slot index of an entry that has none ([`Kind::Unmeasured`]).
pub const NO_SLOT: u16 = u16::MAX;

/// Receives posted while the table was full whose statuses heisen still
/// fixes, at most; beyond, a status shows the record's bytes too (counted
/// as `unfixed`).
pub const UNMEASURED: usize = 16384;

/// One tracked request.
#[derive(Debug)]
pub struct Entry {
    /// What it is.
    pub kind: Kind,
    /// A persistent request: it stays in the table until `MPI_Request_free`.
    pub persistent: bool,
    /// A struct type heisen made for it that lives as long as the request
    /// (persistent requests).
    pub datatype: Option<MPI_Datatype>,
    /// The staging buffer its record and data travel in, if staged.
    pub staged: Option<Staged>,
}

/// A staged nonblocking message: record and data in a staging buffer.
#[derive(Clone, Copy, Debug)]
pub struct Staged {
    /// The staging buffer's index.
    pub stage: u16,
    /// The program's receive buffer (null for a send).
    pub buf: *mut core::ffi::c_void,
    /// Bytes the program's buffer holds (0 for a send).
    pub bytes: usize,
}

// SAFETY: MPI datatype handles are plain values the MPI lets any thread
// use (MPI_THREAD_MULTIPLE); `Kind::Hook` is `Send` by its trait bound.
unsafe impl Send for Entry {}

/// The entries a multiple completion took out, one per request (no
/// allocation up to eight).
pub type TakenList = smallvec::SmallVec<[Option<Taken>; 8]>;

/// A slot taken out of the table for a completion call.
#[derive(Debug)]
pub struct Taken {
    /// Slot index (its record memory stays reserved while taken).
    pub index: u16,
    /// The entry.
    pub entry: Entry,
}

/// Buckets of the handle map: twice the slots, so that it is at most half
/// full and a probe ends after a bucket or two.
const BUCKETS: usize = 2 * CAPACITY;

/// Which slot a request's handle is filed under: open addressing with
/// linear probing over a fixed array (R12: allocated once), no hashing of
/// bytes. A handle is an `int` on MPICH (a kind in its high bits, an
/// index in its low bits), so its bits spread by one multiplication
/// (Fibonacci hashing) find its bucket; a removal shifts the entries
/// behind it back, so there are no tombstones and a lookup never walks
/// further than the run it belongs to. Replaces a `heapless`
/// `FnvIndexMap`, whose FNV hash of eight bytes, index indirection and
/// `swap_remove` were about 10 % of an 8-byte self exchange's
/// instructions (docs/performance.md, "MPI").
struct Handles {
    /// The key of each bucket (meaningless where `slots` is [`NO_SLOT`]).
    keys: Box<[u64]>,
    /// The slot filed in each bucket; [`NO_SLOT`]: the bucket is empty.
    slots: Box<[u16]>,
    /// Keys filed.
    len: usize,
}

impl Handles {
    const MASK: usize = BUCKETS - 1;

    fn new() -> Handles {
        const { assert!(BUCKETS.is_power_of_two() && CAPACITY < NO_SLOT as usize) };
        Handles {
            keys: vec![0; BUCKETS].into_boxed_slice(),
            slots: vec![NO_SLOT; BUCKETS].into_boxed_slice(),
            len: 0,
        }
    }

    /// The bucket a key's probe starts at.
    #[inline]
    fn home(key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - BUCKETS.trailing_zeros())) as usize
    }

    /// `Ok(bucket)` holding `key`, or `Err(bucket)`: the empty bucket
    /// where it would go. Ends: at most `CAPACITY` of the buckets are full.
    #[inline]
    fn find(&self, key: u64) -> Result<usize, usize> {
        let mut i = Self::home(key);
        loop {
            if self.slots[i] == NO_SLOT {
                return Err(i);
            }
            if self.keys[i] == key {
                return Ok(i);
            }
            i = (i + 1) & Self::MASK;
        }
    }

    /// Files `slot` under `key`; returns the slot filed under it before,
    /// if any. `Err` (nothing filed) when `CAPACITY` keys are filed, which
    /// cannot happen: there is at most one key per reserved slot.
    #[inline]
    fn insert(&mut self, key: u64, slot: u16) -> Result<Option<u16>, ()> {
        match self.find(key) {
            Ok(i) => Ok(Some(core::mem::replace(&mut self.slots[i], slot))),
            Err(_) if self.len >= CAPACITY => Err(()),
            Err(i) => {
                self.keys[i] = key;
                self.slots[i] = slot;
                self.len += 1;
                Ok(None)
            }
        }
    }

    /// Takes `key` out; the slot it was filed under.
    #[inline]
    fn remove(&mut self, key: u64) -> Option<u16> {
        let mut hole = self.find(key).ok()?;
        let slot = self.slots[hole];
        // Backward shift: an entry further along the run moves into the
        // hole when the hole lies between its home and where it is.
        let mut j = hole;
        loop {
            j = (j + 1) & Self::MASK;
            if self.slots[j] == NO_SLOT {
                break;
            }
            let home = Self::home(self.keys[j]);
            if (j.wrapping_sub(home) & Self::MASK) >= (j.wrapping_sub(hole) & Self::MASK) {
                self.keys[hole] = self.keys[j];
                self.slots[hole] = self.slots[j];
                hole = j;
            }
        }
        self.slots[hole] = NO_SLOT;
        self.len -= 1;
        Some(slot)
    }
}

struct Inner {
    map: Handles,
    free: heapless::Vec<u16, CAPACITY>,
    entries: Box<[Option<Entry>]>,
    orphans: heapless::Vec<(MPI_Request, u16), ORPHANS>,
    stages_free: heapless::Vec<u16, STAGES>,
    /// Free small staging buffers, numbered from `STAGES` on.
    small_free: heapless::Vec<u16, SMALL_STAGES>,
    peak: usize,
    overflow: u64,
    lost: u64,
    unmeasured: heapless::index_set::FnvIndexSet<u64, UNMEASURED>,
    unfixed: u64,
    reissued: u64,
    /// Persistent collectives filed while the table was full: they must be
    /// tracked on every rank or on none, or a tracked rank's exchange would
    /// wait for ranks that never start theirs (`collective_init`), so they
    /// are kept beyond the slots: at most `collective_init::CAPACITY`,
    /// room reserved at start (R12).
    beyond: Vec<(u64, Entry)>,
    beyond_peak: usize,
}

/// The table.
pub struct Table {
    inner: Mutex<Inner>,
    wires: Box<[UnsafeCell<Wire>]>,
    scratch: UnsafeCell<Wire>,
    stages: Box<[UnsafeCell<u8>]>,
    small_stages: Box<[UnsafeCell<u8>]>,
}

// SAFETY: `inner` is behind a mutex; a wire is written by the MPI and read
// by the one thread that completes its request, after the completion.
unsafe impl Sync for Table {}
// SAFETY: as above.
unsafe impl Send for Table {}

impl core::fmt::Debug for Table {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Table").finish_non_exhaustive()
    }
}

/// The process's request table.
pub fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| Table {
        inner: Mutex::new(Inner {
            map: Handles::new(),
            free: (0..CAPACITY as u16).rev().collect(),
            entries: (0..CAPACITY).map(|_| None).collect(),
            orphans: heapless::Vec::new(),
            stages_free: (0..STAGES as u16).rev().collect(),
            small_free: (STAGES as u16..(STAGES + SMALL_STAGES) as u16)
                .rev()
                .collect(),
            peak: 0,
            overflow: 0,
            lost: 0,
            unmeasured: heapless::index_set::FnvIndexSet::new(),
            unfixed: 0,
            reissued: 0,
            beyond: Vec::with_capacity(crate::collective_init::CAPACITY),
            beyond_peak: 0,
        }),
        wires: (0..CAPACITY)
            .map(|_| UnsafeCell::new(piggyback::blank()))
            .collect(),
        scratch: UnsafeCell::new(piggyback::blank()),
        stages: (0..STAGES * STAGE_BYTES)
            .map(|_| UnsafeCell::new(0))
            .collect(),
        small_stages: zeroed(SMALL_STAGES * SMALL_STAGE_BYTES),
    })
}

impl Table {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reserves a slot: its index and its record memory, stable until the
    /// slot is released. `None` (counted) when the table is full.
    pub fn reserve(&self) -> Option<(u16, *mut u8)> {
        let mut inner = self.lock();
        let Some(index) = inner.take_slot() else {
            inner.overflow += 1;
            return None;
        };
        Some((index, self.wires[usize::from(index)].get().cast()))
    }

    /// Reserves a slot and a staging buffer for `length` payload bytes
    /// together: `(slot, stage, its memory)`, the memory `LEN + length`
    /// bytes at least. `None`, counting nothing, when either is missing:
    /// the caller then posts with a struct type and [`Table::reserve`],
    /// which counts an overflow once. A small payload takes a small
    /// buffer, or a large one when none is left; a large payload only a
    /// large one.
    ///
    /// The small buffers make a struct type rare for a small receive:
    /// MPICH 4.0.2 leaks the type of a cancelled receive posted with a
    /// struct of large extent (record and buffer far apart) and prints
    /// "yaksa: N leaked handle pool objects" at `MPI_Finalize`, which a
    /// plain program does not (MPICH's `threads/pt2pt/mt_mpicancel`: 400
    /// pending receives of one int cancelled, beyond the `STAGES` large
    /// buffers).
    pub fn reserve_staged(&self, length: usize) -> Option<(u16, u16, *mut u8)> {
        let mut inner = self.lock();
        if inner.free.is_empty() && !inner.orphans.is_empty() {
            sweep(&mut inner);
        }
        let index = inner.free.pop()?;
        let small = if length <= SMALL_STAGE {
            inner.small_free.pop()
        } else {
            None
        };
        let Some(stage) = small.or_else(|| inner.stages_free.pop()) else {
            let _ = inner.free.push(index);
            return None;
        };
        let used = CAPACITY - inner.free.len();
        inner.peak = inner.peak.max(used);
        drop(inner);
        Some((index, stage, self.stage(stage)))
    }

    /// The memory of staging buffer `index`.
    pub fn stage(&self, index: u16) -> *mut u8 {
        let i = usize::from(index);
        if i < STAGES {
            self.stages[i * STAGE_BYTES].get()
        } else {
            self.small_stages[(i - STAGES) * SMALL_STAGE_BYTES].get()
        }
    }

    /// Gives back everything a finished request held: its struct type, its
    /// staging buffer, its slot.
    pub fn release_entry(&self, index: u16, entry: Entry) {
        free_datatype(entry.datatype);
        if index == NO_SLOT {
            return;
        }
        let mut inner = self.lock();
        if let Some(s) = entry.staged {
            inner.give_stage(s.stage);
        }
        inner.entries[usize::from(index)] = None;
        let _ = inner.free.push(index);
    }

    /// Memory a receive writes its record to when it has no slot: never
    /// read.
    pub fn scratch(&self) -> *mut u8 {
        self.scratch.get().cast()
    }

    /// The record memory of slot `index`.
    pub fn wire(&self, index: u16) -> *mut u8 {
        self.wires[usize::from(index)].get().cast()
    }

    /// Files a posted request under its handle.
    ///
    /// A handle already filed means the request filed under it is complete:
    /// the MPI never gives two live requests one handle, except a
    /// predefined request that is complete from the start, which MPICH
    /// returns for every send it finished at once (its lightweight
    /// requests: 64 `MPI_Isend`s of 1 byte, one handle). The older entry is
    /// then let go of here: its struct type and staging buffer are no
    /// longer in use (its message has left), and a send merges nothing at
    /// completion (R3: its record was taken when it was posted). Without
    /// this the entries of such sends stayed in the table for good, and a
    /// program's 4,097th such send ran unmeasured.
    pub fn insert(&self, request: MPI_Request, index: u16, entry: Entry) {
        let mut inner = self.lock();
        inner.entries[usize::from(index)] = Some(entry);
        // Cannot fail: the map holds at most one key per reserved slot.
        let old = match inner.map.insert(sys::key(request), index) {
            Ok(Some(old)) if old != index => old,
            _ => return,
        };
        inner.reissued += 1;
        let Some(entry) = inner.entries[usize::from(old)].take() else {
            return;
        };
        if let Some(s) = entry.staged {
            inner.give_stage(s.stage);
        }
        let _ = inner.free.push(old);
        drop(inner);
        free_datatype(entry.datatype);
        if let Kind::Hook(hook) = entry.kind {
            hook.displaced();
        }
    }

    /// Gives back a slot whose operation was never posted or is done.
    pub fn release(&self, index: u16) {
        if index == NO_SLOT {
            return;
        }
        let mut inner = self.lock();
        inner.entries[usize::from(index)] = None;
        let _ = inner.free.push(index);
    }

    /// Takes `request`'s entry out before a completion call.
    pub fn take(&self, request: MPI_Request) -> Option<Taken> {
        take_from(&mut self.lock(), request)
    }

    /// Takes the entries of `requests` (see [`Table::take`]) into `into`
    /// (filled in place: the list is too large to move cheaply).
    pub fn take_all(&self, requests: &[MPI_Request], into: &mut TakenList) {
        let mut inner = self.lock();
        into.extend(requests.iter().map(|r| take_from(&mut inner, *r)));
    }

    /// Files a receive posted without a slot (the table was full): its
    /// status will be fixed at completion (R12: counted when even this
    /// set is full).
    pub fn mark_unmeasured(&self, request: MPI_Request, persistent: bool) {
        let mut inner = self.lock();
        let key = sys::key(request) << 1 | u64::from(persistent);
        if inner.unmeasured.insert(key).is_err() {
            inner.unfixed += 1;
        }
    }

    /// Files a persistent collective's entry (`collective_init`): in a
    /// slot, or beyond the slots when none is free (see `Inner::beyond`),
    /// where [`Table::take`] finds it like any other, with the index
    /// [`NO_SLOT`]. Not an overflow: it is tracked.
    pub fn file_persistent(&self, request: MPI_Request, entry: Entry) {
        let slot = self.lock().take_slot();
        match slot {
            Some(index) => self.insert(request, index, entry),
            None => self.keep_beyond(request, entry),
        }
    }

    /// Keeps a persistent collective's entry beyond the slots.
    fn keep_beyond(&self, request: MPI_Request, entry: Entry) {
        let mut inner = self.lock();
        inner.beyond.push((sys::key(request), entry));
        inner.beyond_peak = inner.beyond_peak.max(inner.beyond.len());
    }

    /// Puts an entry back under `request` (not completed, or persistent).
    pub fn put_back(&self, request: MPI_Request, taken: Taken) {
        if taken.index == NO_SLOT && matches!(taken.entry.kind, Kind::Hook(_)) {
            self.keep_beyond(request, taken.entry);
        } else if taken.index == NO_SLOT {
            self.mark_unmeasured(request, taken.entry.persistent);
        } else {
            self.insert(request, taken.index, taken.entry);
        }
    }

    /// Keeps a request the program freed while active; heisen completes it
    /// later and then gives its slot back. When the kept list is full, the
    /// kept requests that have completed leave it first (a program that
    /// frees many requests, each completing soon after, keeps a short
    /// list). `false` when too many are still active: the caller frees it
    /// and the slot stays reserved for good (counted).
    pub fn orphan(&self, request: MPI_Request, taken: Taken) -> bool {
        let mut inner = self.lock();
        let index = taken.index;
        inner.entries[usize::from(index)] = Some(taken.entry);
        if inner.orphans.is_full() {
            sweep(&mut inner);
        }
        if inner.orphans.push((request, index)).is_ok() {
            true
        } else {
            inner.lost += 1;
            false
        }
    }

    /// The table's figures for the report.
    pub fn figures(&self) -> Figures {
        let inner = self.lock();
        Figures {
            capacity: CAPACITY,
            peak: inner.peak,
            overflow: inner.overflow,
            lost: inner.lost,
            unfixed: inner.unfixed,
            reissued: inner.reissued,
            beyond: inner.beyond_peak,
            memory_bytes: core::mem::size_of::<Inner>()
                + BUCKETS * (core::mem::size_of::<u64>() + core::mem::size_of::<u16>())
                + CAPACITY * (LEN + core::mem::size_of::<Option<Entry>>())
                + STAGES * STAGE_BYTES
                + SMALL_STAGES * SMALL_STAGE_BYTES,
        }
    }
}

impl Inner {
    /// A free slot, after completing the kept requests that are done when
    /// none is left; the peak of slots in use follows.
    fn take_slot(&mut self) -> Option<u16> {
        if self.free.is_empty() && !self.orphans.is_empty() {
            sweep(self);
        }
        let index = self.free.pop()?;
        self.peak = self.peak.max(CAPACITY - self.free.len());
        Some(index)
    }

    /// Puts staging buffer `index` back on its free list.
    fn give_stage(&mut self, index: u16) {
        let _ = if usize::from(index) < STAGES {
            self.stages_free.push(index)
        } else {
            self.small_free.push(index)
        };
    }
}

/// `bytes` zero bytes, allocated zeroed: the pages stay untouched (and
/// take no memory) until used.
fn zeroed(bytes: usize) -> Box<[UnsafeCell<u8>]> {
    let memory: Box<[u8]> = vec![0u8; bytes].into_boxed_slice();
    // SAFETY: `UnsafeCell<u8>` has the layout of `u8` (repr(transparent)).
    unsafe { Box::from_raw(Box::into_raw(memory) as *mut [UnsafeCell<u8>]) }
}

/// Takes `request`'s entry, or its unmeasured mark, out of the table.
fn take_from(inner: &mut Inner, request: MPI_Request) -> Option<Taken> {
    let key = sys::key(request);
    if let Some(index) = inner.map.remove(key) {
        let entry = inner.entries[usize::from(index)].take()?;
        return Some(Taken { index, entry });
    }
    if !inner.beyond.is_empty()
        && let Some(i) = inner.beyond.iter().position(|(k, _)| *k == key)
    {
        let (_, entry) = inner.beyond.swap_remove(i);
        return Some(Taken {
            index: NO_SLOT,
            entry,
        });
    }
    if inner.unmeasured.is_empty() {
        return None;
    }
    let persistent = inner.unmeasured.remove(&(key << 1 | 1));
    if !persistent && !inner.unmeasured.remove(&(key << 1)) {
        return None;
    }
    Some(Taken {
        index: NO_SLOT,
        entry: Entry {
            kind: Kind::Unmeasured,
            persistent,
            datatype: None,
            staged: None,
        },
    })
}

/// Files `request` with its own completion (a nonblocking collective): the
/// `Wait*`/`Test*` wrappers run `completion` once the MPI completed it.
/// `false` when the table is full (counted): the request then completes
/// without it.
pub fn register(request: MPI_Request, completion: Box<dyn Completion>) -> bool {
    let t = table();
    let Some((index, _)) = t.reserve() else {
        return false;
    };
    let entry = Entry {
        kind: Kind::Hook(completion),
        persistent: false,
        datatype: None,
        staged: None,
    };
    t.insert(request, index, entry);
    true
}

/// At `MPI_Finalize`: lets go of the persistent collectives the program
/// never freed (it may finalize with inactive persistent requests), each
/// entry's drop freeing heisen's own request and communicator; they hold
/// heisen's datatype and operator, which MPICH would otherwise report as
/// leaked on stderr. Dropped after the table's lock is let go of.
pub fn drop_persistent() {
    let t = table();
    let kept: Vec<Entry> = {
        let mut inner = t.lock();
        let keys: Vec<u64> = (0..BUCKETS)
            .filter(|&b| {
                let slot = inner.map.slots[b];
                slot != NO_SLOT
                    && matches!(
                        inner.entries[usize::from(slot)],
                        Some(Entry {
                            kind: Kind::Hook(_),
                            persistent: true,
                            ..
                        })
                    )
            })
            .map(|b| inner.map.keys[b])
            .collect();
        let mut kept: Vec<Entry> = inner.beyond.drain(..).map(|(_, e)| e).collect();
        for key in keys {
            if let Some(index) = inner.map.remove(key) {
                kept.extend(inner.entries[usize::from(index)].take());
                let _ = inner.free.push(index);
            }
        }
        kept
    };
    drop(kept);
}

/// Completes the orphaned requests that are done and frees their slots.
fn sweep(inner: &mut Inner) {
    let mut i = 0;
    while i < inner.orphans.len() {
        let (mut request, index) = inner.orphans[i];
        let mut flag: c_int = 0;
        // SAFETY: a live request heisen kept; Test writes the flag and the
        // handle (to MPI_REQUEST_NULL once done, or stays for persistent).
        unsafe { sys::PMPI_Test(&mut request, &mut flag, sys::status_ignore()) };
        if flag != 0 {
            if let Some(entry) = inner.entries[usize::from(index)].take() {
                free_datatype(entry.datatype);
                if let Some(s) = entry.staged {
                    inner.give_stage(s.stage);
                }
                if entry.persistent && request != sys::request_null() {
                    // SAFETY: the persistent request is inactive now.
                    unsafe { sys::PMPI_Request_free(&mut request) };
                }
            }
            let _ = inner.free.push(index);
            inner.orphans.swap_remove(i);
        } else {
            inner.orphans[i].0 = request;
            i += 1;
        }
    }
}

/// Frees a struct type heisen made for a request.
pub fn free_datatype(datatype: Option<MPI_Datatype>) {
    if let Some(t) = datatype {
        crate::datatype::free(t);
    }
}

/// The request table's figures (R12: the memory is fixed at start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figures {
    /// Slots.
    pub capacity: usize,
    /// Most slots in use at once.
    pub peak: usize,
    /// Operations posted while the table was full (run unmeasured).
    pub overflow: u64,
    /// Requests freed while active beyond [`ORPHANS`]: their slots stayed
    /// reserved.
    pub lost: u64,
    /// Receives beyond the table and beyond [`UNMEASURED`]: their statuses
    /// count the record's bytes too.
    pub unfixed: u64,
    /// Requests whose handle the MPI handed out again before heisen saw
    /// them complete (MPICH's completed-at-once sends): let go of at once.
    pub reissued: u64,
    /// Most persistent collectives kept beyond the slots at once (the
    /// table was full when they were made; see [`Table::file_persistent`]).
    pub beyond: usize,
    /// Bytes the table takes.
    pub memory_bytes: usize,
}

/// Before the report at `MPI_Finalize`: completes the orphans that are
/// done and frees the others, as the program's `MPI_Request_free` would
/// have (the MPI completes them before it finalizes).
pub fn at_finalize(_rt: &Runtime) {
    let t = table();
    let mut inner = t.lock();
    sweep(&mut inner);
    while let Some((mut request, index)) = inner.orphans.pop() {
        if let Some(entry) = inner.entries[usize::from(index)].take() {
            free_datatype(entry.datatype);
            if let Some(s) = entry.staged {
                inner.give_stage(s.stage);
            }
        }
        // SAFETY: a live request heisen kept for the program, which freed it.
        unsafe { sys::PMPI_Request_free(&mut request) };
        let _ = inner.free.push(index);
    }
}

#[cfg(test)]
mod tests {
    use super::{BUCKETS, CAPACITY, Handles, NO_SLOT};
    use std::collections::HashMap;

    /// The handle map against `std`'s on a seeded random sequence of
    /// inserts, replacements and removals, keys both spread and clustered
    /// (MPICH's handles differ in their low bits), filled to capacity.
    #[test]
    fn handles_match_a_hash_map() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut map = Handles::new();
        let mut model: HashMap<u64, u16> = HashMap::new();
        for step in 0..200_000u32 {
            let r = next();
            // a small key space makes replacements and misses common
            let key = if r & 1 == 0 {
                0xac00_0000 | ((r >> 8) % 6000)
            } else {
                (r >> 8) % 6000 * 0x1_0000
            };
            if r & 0x30 != 0 && model.len() < CAPACITY {
                let slot = (step % CAPACITY as u32) as u16;
                assert_eq!(map.insert(key, slot), Ok(model.insert(key, slot)));
            } else {
                assert_eq!(map.remove(key), model.remove(&key));
            }
            assert_eq!(map.len, model.len());
            if step % 10_000 == 0 {
                for (k, v) in &model {
                    assert_eq!(map.find(*k).map(|i| map.slots[i]), Ok(*v));
                }
                let filed = map.slots.iter().filter(|&&s| s != NO_SLOT).count();
                assert_eq!(filed, model.len());
            }
        }
    }

    /// Full: the insert beyond `CAPACITY` keys files nothing; every key
    /// still found, and removable down to empty.
    #[test]
    fn handles_full_and_emptied() {
        let mut map = Handles::new();
        for k in 0..CAPACITY as u64 {
            assert_eq!(map.insert(k * 7 + 3, k as u16), Ok(None));
        }
        assert_eq!(map.insert(u64::MAX, 1), Err(()));
        assert_eq!(map.insert(3, 9), Ok(Some(0)));
        for k in (0..CAPACITY as u64).rev() {
            let want = if k == 0 { 9 } else { k as u16 };
            assert_eq!(map.remove(k * 7 + 3), Some(want));
        }
        assert_eq!(map.len, 0);
        assert!(map.slots.iter().all(|&s| s == NO_SLOT));
        assert_eq!(map.slots.len(), BUCKETS);
    }
}
