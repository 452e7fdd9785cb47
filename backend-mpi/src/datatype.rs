//! How a message and its record travel as one MPI message (R3; seed 000
//! §4.2): the record first, then the user's `count × datatype`.
//!
//! Two ways, chosen per message (measured on MPICH, see docs/performance.md, "MPI"):
//! - **staging**: a predefined (contiguous) datatype of at most
//!   [`STAGE`] bytes is copied behind the record into a per-thread buffer
//!   and sent as bytes (1.3× a plain 8-byte round trip);
//! - **struct**: otherwise a struct type `{record @&record, count ×
//!   datatype @buf}` from `MPI_BOTTOM` sends both without a copy. The
//!   record must come first: with it last, a receive posted larger than the
//!   message would put the record inside the user's buffer. A type costs
//!   about 0.4 µs to create, commit and free, small against a message that
//!   large or that scattered.
//!
//! Both sides decide independently and both layouts are the same bytes on
//! the wire (record, then the data in the datatype's type-map order), so a
//! staged send may meet a struct receive and the other way round.

use core::cell::RefCell;
use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::piggyback::{self, LEN, Wire};
use crate::sys::{self, MPI_Aint, MPI_Datatype};

/// Largest payload copied into the staging buffer, in bytes.
pub const STAGE: usize = 4096;

std::thread_local! {
    /// The calling thread's staging buffers: one for a send, one for a
    /// receive (a `Sendrecv` uses both).
    static STAGING: RefCell<[Box<[u8]>; 2]> =
        RefCell::new([vec![0; LEN + STAGE].into_boxed_slice(), vec![0; LEN + STAGE].into_boxed_slice()]);
}

std::thread_local! {
    /// The calling thread's record memory for blocking calls: a stable
    /// address, so that a struct type made for it can be cached.
    static RECORDS: RefCell<[Wire; 2]> = const { RefCell::new([piggyback::blank(); 2]) };
}

/// Runs `f` with the calling thread's record memory of `side` (a stack
/// copy when it is in use).
pub fn with_record<R>(side: Side, f: impl FnOnce(&mut Wire) -> R) -> R {
    let mut f = Some(f);
    let done = RECORDS
        .try_with(|r| {
            let mut r = r.try_borrow_mut().ok()?;
            let f = f.take()?;
            Some(f(&mut r[side as usize]))
        })
        .ok()
        .flatten();
    match (done, f) {
        (Some(result), _) => result,
        (None, Some(f)) => f(&mut piggyback::blank()),
        (None, None) => unreachable!("`f` ran, so it returned"),
    }
}

/// Which staging buffer a side uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The outgoing message.
    Send = 0,
    /// The incoming message.
    Receive = 1,
}

/// The payload of `count × datatype` at `buf` when it may be staged: its
/// byte length. `None`: send it with a struct type.
pub fn stageable(buf: *const c_void, count: c_int, datatype: MPI_Datatype) -> Option<usize> {
    if count < 0 {
        return None;
    }
    // No data whatever the type: a program may pass any datatype with a
    // zero count, `MPI_DATATYPE_NULL` included (MPICH's
    // `part/nonblocking_pready` sends `NULL, 0, MPI_DATATYPE_NULL`), and
    // querying that type is fatal under the default error handler.
    if count == 0 {
        return Some(0);
    }
    let size = named_size(datatype)?;
    let bytes = (count as usize).checked_mul(size)?;
    (bytes <= STAGE && (bytes == 0 || !buf.is_null())).then_some(bytes)
}

/// Predefined (named) datatypes whose sizes [`named_size`] keeps, at most;
/// a program's further named types are asked of the MPI each time.
const NAMED: usize = 32;

/// The named datatypes [`named_size`] met, for the whole process: a
/// handle's bits ([`sys::key`]; 0: a free entry) and its size plus one (0:
/// not written yet). Only named types are kept: their handles are the
/// MPI's constants, never freed or reused for another type, so an entry
/// is written once and never goes stale, and every thread may read it. No
/// thread-local lookup (a call through the cdylib's TLS, `__tls_get_addr`,
/// on every message before), no lock: a first entry that matches costs
/// two loads.
static NAMED_KEYS: [AtomicU64; NAMED] = [const { AtomicU64::new(0) }; NAMED];
/// Sizes plus one of [`NAMED_KEYS`]' types, in the same order.
static NAMED_SIZES: [AtomicUsize; NAMED] = [const { AtomicUsize::new(0) }; NAMED];

/// The size of a predefined (named) datatype, `None` for a derived one:
/// two MPI queries the first time the process meets the type, a look in
/// [`NAMED_KEYS`] afterwards.
#[inline]
fn named_size(datatype: MPI_Datatype) -> Option<usize> {
    let key = sys::key(datatype);
    for (k, size) in NAMED_KEYS.iter().zip(&NAMED_SIZES) {
        match k.load(Ordering::Acquire) {
            0 => break,
            k if k == key => match size.load(Ordering::Acquire) {
                0 => break, // being written by another thread: ask the MPI
                size => return Some(size - 1),
            },
            _ => {}
        }
    }
    named_size_asked(datatype, key)
}

/// [`named_size`] past its table: asks the MPI, and keeps a named type's
/// size in the first free entry (none left: asked again next time).
#[cold]
#[inline(never)]
fn named_size_asked(datatype: MPI_Datatype, key: u64) -> Option<usize> {
    let (mut ints, mut addrs, mut large, mut types, mut combiner) = (0, 0, 0, 0, 0);
    // SAFETY: envelope queries write only the five out-parameters; an
    // invalid datatype returns an error (the struct path then reports it
    // through the user's own call). The `_c` query: the `int` one fails
    // (fatally, under the default error handler) on a type built with a
    // count beyond `int` (MPICH 4.0.2 says "use MPI_Type_get_envelope_c").
    let named = unsafe {
        sys::PMPI_Type_get_envelope_c(
            datatype,
            &mut ints,
            &mut addrs,
            &mut large,
            &mut types,
            &mut combiner,
        )
    } == sys::success()
        && combiner == sys::combiner_named();
    if !named {
        return None;
    }
    let mut size = 0;
    // SAFETY: writes `size` only.
    if unsafe { sys::PMPI_Type_size(datatype, &mut size) } != sys::success() || size < 0 {
        return None;
    }
    let size = size as usize;
    if key != 0 {
        for (k, s) in NAMED_KEYS.iter().zip(&NAMED_SIZES) {
            match k.compare_exchange(0, key, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    s.store(size + 1, Ordering::Release);
                    break;
                }
                Err(other) if other == key => break, // another thread keeps it
                Err(_) => {}
            }
        }
    }
    Some(size)
}

/// Runs `f` with the calling thread's staging buffer of `side`, `None`
/// when it is in use (a nested call): the caller takes the struct path.
pub fn with_stage<R>(side: Side, f: impl FnOnce(&mut [u8]) -> R) -> Option<R> {
    STAGING
        .try_with(|s| {
            let mut s = s.try_borrow_mut().ok()?;
            Some(f(&mut s[side as usize]))
        })
        .ok()
        .flatten()
}

/// Runs `f` with both of the calling thread's staging buffers (send,
/// receive), `None` when they are in use: for `MPI_Sendrecv`.
pub fn with_both_stages<R>(f: impl FnOnce(&mut [u8], &mut [u8]) -> R) -> Option<R> {
    STAGING
        .try_with(|s| {
            let mut s = s.try_borrow_mut().ok()?;
            let [out, inb] = &mut *s;
            Some(f(out, inb))
        })
        .ok()
        .flatten()
}

/// A committed struct type `{LEN bytes @record, count × datatype @buf}`,
/// absolute addresses, to be used with `MPI_BOTTOM` and count 1. The
/// caller frees it ([`free`]) once the operation was started (MPI keeps a
/// type alive while operations use it).
pub fn joined(
    record: *const u8,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> Result<MPI_Datatype, c_int> {
    let mut at: [MPI_Aint; 2] = [0; 2];
    // SAFETY: Get_address only computes the address; it writes `at`.
    let ok = unsafe {
        sys::PMPI_Get_address(record.cast(), &mut at[0]) == sys::success()
            && sys::PMPI_Get_address(buf, &mut at[1]) == sys::success()
    };
    if !ok {
        return Err(sys::err_intern());
    }
    let lengths: [c_int; 2] = [LEN as c_int, count];
    let types = [sys::byte(), datatype];
    // No data (count 0, or a type of size 0 such as an hindexed type of
    // empty blocks): the record alone. With the empty part in, the struct's
    // true lower bound may be 0 (a null `buf` at displacement 0), and
    // MPICH then refuses `MPI_BOTTOM` as a null buffer although the
    // program's own call was valid (MPICH's `datatype/hindexed_zeros`).
    let mut size: c_int = -1;
    let empty = count == 0
        // SAFETY: writes `size` only; an invalid type leaves it at -1.
        || (unsafe { sys::PMPI_Type_size(datatype, &mut size) } == sys::success() && size == 0);
    let blocks: c_int = if empty { 1 } else { 2 };
    let mut joined = sys::byte();
    // SAFETY: three arrays of two valid entries, of which the first
    // `blocks` are read; writes `joined` only.
    let rc = unsafe {
        sys::PMPI_Type_create_struct(
            blocks,
            lengths.as_ptr(),
            at.as_ptr(),
            types.as_ptr(),
            &mut joined,
        )
    };
    if rc != sys::success() {
        return Err(rc);
    }
    // SAFETY: `joined` was just created.
    let rc = unsafe { sys::PMPI_Type_commit(&mut joined) };
    if rc != sys::success() {
        free(joined);
        return Err(rc);
    }
    Ok(joined)
}

/// Frees a type made by [`joined`].
pub fn free(mut datatype: MPI_Datatype) {
    // SAFETY: a type this module created and nobody else holds.
    unsafe {
        sys::PMPI_Type_free(&mut datatype);
    }
}

// ----- cached struct types ---------------------------------------------------

/// Struct types each thread keeps for its blocking calls.
const CACHED: usize = 8;

/// Bumped by every `MPI_Type_free` of the program: cached types are
/// rebuilt from then on. A cached struct type holds a reference to the
/// program's type (MPI-4.0 §5.1.9), so the MPI cannot reuse the handle
/// while it is cached; the bump lets those references go soon after the
/// program freed its type, instead of at `MPI_Finalize`.
static GENERATION: AtomicU64 = AtomicU64::new(0);

#[derive(Clone, Copy)]
struct Cached {
    key: (u64, c_int, usize, usize),
    generation: u64,
    datatype: MPI_Datatype,
}

#[derive(Default)]
struct Cache {
    entries: [Option<Cached>; CACHED],
    next: usize,
}

// SAFETY: MPI datatype handles are plain values any thread may use.
unsafe impl Send for Cache {}

/// Every thread's cache, so that `MPI_Finalize` frees them all.
static CACHES: Mutex<Vec<Arc<Mutex<Cache>>>> = Mutex::new(Vec::new());

/// Threads whose types are cached, at most (R12); later threads build a
/// type per call.
const CACHING_THREADS: usize = 512;

std::thread_local! {
    static CACHE: Option<Arc<Mutex<Cache>>> = {
        let mut all = CACHES.lock().unwrap_or_else(|p| p.into_inner());
        (all.len() < CACHING_THREADS).then(|| {
            let cache = Arc::new(Mutex::new(Cache::default()));
            all.push(Arc::clone(&cache));
            cache
        })
    };
}

/// A struct type for one call: cached (kept) or made for it (freed by
/// [`Joined::done`]).
#[derive(Debug)]
pub struct Joined {
    /// The type to pass with `MPI_BOTTOM` and count 1.
    pub datatype: MPI_Datatype,
    cached: bool,
}

impl Joined {
    /// The call is posted: frees the type unless the cache keeps it.
    pub fn done(self) {
        if !self.cached {
            free(self.datatype);
        }
    }
}

/// [`joined`], cached per thread by `(datatype, count, record, buffer)`:
/// a loop that sends the same buffer again pays the type's creation once
/// (it costs about 0.4 µs a message otherwise).
pub fn joined_cached(
    record: *const u8,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> Result<Joined, c_int> {
    let key = (sys::key(datatype), count, record as usize, buf as usize);
    let generation = GENERATION.load(Ordering::Acquire);
    let cache = CACHE.try_with(Option::clone).ok().flatten();
    let Some(cache) = cache else {
        return joined(record, buf, count, datatype).map(|datatype| Joined {
            datatype,
            cached: false,
        });
    };
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    for e in cache.entries.iter_mut() {
        match *e {
            Some(c) if c.generation != generation => {
                free(c.datatype);
                *e = None;
            }
            Some(c) if c.key == key => {
                return Ok(Joined {
                    datatype: c.datatype,
                    cached: true,
                });
            }
            _ => {}
        }
    }
    let made = joined(record, buf, count, datatype)?;
    let slot = cache.next;
    cache.next = (slot + 1) % CACHED;
    if let Some(old) = cache.entries[slot].take() {
        free(old.datatype);
    }
    cache.entries[slot] = Some(Cached {
        key,
        generation,
        datatype: made,
    });
    Ok(Joined {
        datatype: made,
        cached: true,
    })
}

/// Frees every cached type (at `MPI_Finalize`: the MPI reports types left
/// behind).
pub fn free_cached() {
    let all = CACHES.lock().unwrap_or_else(|p| p.into_inner());
    for cache in all.iter() {
        let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
        for e in cache.entries.iter_mut() {
            if let Some(c) = e.take() {
                free(c.datatype);
            }
        }
    }
}

/// `MPI_Type_free` (MPI-4.0 §5.1.9): cached types built on the program's
/// types are rebuilt from now on (the handle may be reused).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Type_free(datatype: *mut MPI_Datatype) -> c_int {
    GENERATION.fetch_add(1, Ordering::AcqRel);
    // SAFETY: the program's argument, unchanged.
    unsafe { sys::PMPI_Type_free(datatype) }
}
