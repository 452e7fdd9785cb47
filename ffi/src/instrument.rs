//! `-finstrument-functions` hooks: a C or C++ program compiled with that
//! flag and linked with `-lheisen` gets every function as a region, named
//! after the function in the report.
//!
//! This is the dilation case of seed 004 (§I, §III): many tiny functions,
//! each paying an enter and an exit. The hooks are therefore cheap:
//! a function's address maps to its region id through a lock-free table
//! shared by all threads (004 §II.A.2: "a hash table that maps start
//! addresses to their corresponding region identifiers, which eliminates
//! the name lookup and string matching except for each function's first
//! occurrence"). Only the first sight of a function resolves its name
//! (`crate::symbols`), under a lock, and charges the time that took to
//! the thread (R1: a directly measured cost adds its measured length).
//! Each hook's own cost is calibrated through the hook itself
//! ([`crate::actions`]).
//!
//! The hooks never recurse into themselves: heisen is not compiled with
//! the flag, and a hook that fires while the same thread resolves a name
//! (an instrumented `malloc`, say) returns at once — its enter and its
//! exit both, so the region stack stays balanced.

use core::cell::Cell;
use core::ffi::{c_int, c_void};
use core::panic::AssertUnwindSafe;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::collections::HashMap;
use std::panic::catch_unwind;
use std::sync::{Mutex, MutexGuard};

use heisen_core::Cost;
use heisen_shmem::calibrate::SCRATCH_REGION;
use heisen_shmem::probe::Path;
use heisen_shmem::runtime::{NO_REGION, Runtime};
use heisen_shmem::{runtime, thread, with_current};

use crate::actions::{Hot, Live, Mode};
use crate::symbols::{self, Symbols};

/// Slots of the address table (a power of two, twice the name table).
const SLOTS: usize = 1 << 15;
/// Probes before a lookup gives up and asks the locked map.
const PROBES: usize = 16;

/// The id of a function whose object was unloaded (`dlclose`): a lookup
/// of its address misses (the function is resolved again), and only the
/// same address is ever stored in its slot again. A slot never changes
/// address, so a hook that read a key reads that address's id, or this.
/// (No region has this id: ids count up from 0.)
const FORGOTTEN_ID: u32 = NO_REGION - 2;

/// Function address -> region id, written under [`RESOLVER`] (an id set
/// to [`FORGOTTEN_ID`] when its object is unloaded, and set again when the
/// same address is resolved again), read by every hook without a lock.
struct Table {
    /// 0 = empty; a key is published after its id (release/acquire).
    keys: [AtomicUsize; SLOTS],
    ids: [AtomicU32; SLOTS],
}

static TABLE: Table = Table {
    keys: [const { AtomicUsize::new(0) }; SLOTS],
    ids: [const { AtomicU32::new(NO_REGION) }; SLOTS],
};

#[inline(always)]
fn slot(address: usize) -> usize {
    // Fibonacci hashing of the address without its low (alignment) bits.
    ((address as u64 >> 2).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros()))
        as usize
}

impl Table {
    /// The slot holding `address`, if any (its key read with acquire).
    #[inline(always)]
    fn position(&self, address: usize) -> Option<usize> {
        let mut i = slot(address);
        for _ in 0..PROBES {
            let key = self.keys[i].load(Ordering::Acquire);
            if key == address {
                return Some(i);
            }
            if key == 0 {
                return None;
            }
            i = (i + 1) & (SLOTS - 1);
        }
        None
    }

    #[inline(always)]
    fn get(&self, address: usize) -> Option<u32> {
        let id = self.ids[self.position(address)?].load(Ordering::Acquire);
        (id != FORGOTTEN_ID).then_some(id)
    }

    /// Inserts under the resolver's lock (one writer); false when the
    /// probe window is full (the locked map keeps the address then). An
    /// address forgotten before gets its id again in its own slot.
    fn insert(&self, address: usize, id: u32) -> bool {
        let mut i = slot(address);
        for _ in 0..PROBES {
            let key = self.keys[i].load(Ordering::Relaxed);
            if key == address {
                self.ids[i].store(id, Ordering::Release);
                return true;
            }
            if key == 0 {
                self.ids[i].store(id, Ordering::Relaxed);
                self.keys[i].store(address, Ordering::Release);
                return true;
            }
            i = (i + 1) & (SLOTS - 1);
        }
        false
    }

    /// Forgets `address`'s id (under the resolver's lock): its object was
    /// unloaded, and another may be loaded at the same address.
    fn remove(&self, address: usize) {
        if let Some(i) = self.position(address) {
            self.ids[i].store(FORGOTTEN_ID, Ordering::Release);
        }
    }
}

/// Names resolved so far, and the symbol tables read.
#[derive(Default)]
struct Resolver {
    ids: HashMap<usize, u32>,
    symbols: Symbols,
}

static RESOLVER: Mutex<Option<Resolver>> = Mutex::new(None);

fn resolver() -> MutexGuard<'static, Option<Resolver>> {
    // A panic while resolving leaves at worst a name not interned.
    RESOLVER.lock().unwrap_or_else(|p| p.into_inner())
}

std::thread_local! {
    /// Set while this thread resolves a name: hooks fired meanwhile
    /// return at once.
    static RESOLVING: Cell<bool> = const { Cell::new(false) };
}

/// The region of `address`, resolving it on first sight: `(id, ns spent)`,
/// the time 0 unless the thread was measured before (R1: a cost within
/// the location's span; a thread's first call registers it after this);
/// `None` if this thread is resolving already.
#[cold]
#[inline(never)]
fn resolve(rt: &'static Runtime, address: usize) -> Option<(u32, u64)> {
    if RESOLVING.try_with(|r| r.replace(true)).unwrap_or(true) {
        return None;
    }
    let registered = thread::registered();
    let t0 = rt.now();
    let known = resolver()
        .as_ref()
        .and_then(|r| r.ids.get(&address).copied());
    let id = match known {
        Some(id) => id,
        None => {
            // The loader first, with the resolver's lock not held: a
            // thread in `dlopen` holds the loader's lock while it runs
            // the new object's constructors, whose first calls wait for
            // the resolver's (a plugin with an instrumented constructor
            // loaded while another thread resolved a name hung both).
            let place = symbols::locate(address);
            resolve_at(rt, address, place)
        }
    };
    let spent = if registered {
        rt.now().saturating_sub(t0)
    } else {
        0
    };
    let _ = RESOLVING.try_with(|r| r.set(false));
    Some((id, spent))
}

/// [`resolve`]'s part under the resolver's lock: the name from the
/// object's symbol table, its region id, the tables.
fn resolve_at(rt: &'static Runtime, address: usize, place: symbols::Place) -> u32 {
    {
        let mut guard = resolver();
        let resolver = guard.get_or_insert_with(Resolver::default);
        match resolver.ids.get(&address) {
            Some(&id) => id,
            None => {
                let name = resolver.symbols.name_of(address, place);
                // A name the table refuses (full) leaves the function
                // unmeasured; the runtime reports the count.
                let id = rt.region_id(&name).unwrap_or(NO_REGION);
                resolver.ids.insert(address, id);
                TABLE.insert(address, id);
                HOOKS_RESOLVED.store(true, Ordering::Release);
                id
            }
        }
    }
}

/// Forgets the functions of objects no longer loaded (after a `dlclose`
/// that unloaded one), so that a function of an object loaded later at
/// the same address gets its own name. Their regions stay, with what
/// was measured in them.
fn forget_unloaded() {
    if !resolving() {
        return;
    }
    // The loader first, the resolver's lock not held (see `resolve`).
    let loaded = symbols::Loaded::now();
    forget(|address| !loaded.contains(address));
    if let Some(resolver) = resolver().as_mut() {
        resolver.symbols.retain(&loaded);
    }
}

/// Set when a hook resolved a function of the program (not the
/// calibration's own address, [`calibration_address`]): until then a
/// `dlclose` has nothing to forget and takes no lock.
static HOOKS_RESOLVED: AtomicBool = AtomicBool::new(false);

/// Whether the program's functions are being resolved, so that there is
/// something to forget. Not once nothing is measured any more (after the
/// report, or in a forked child, where the resolver's lock may be held by
/// a thread of the parent that does not exist here): the names will not
/// be used.
fn resolving() -> bool {
    HOOKS_RESOLVED.load(Ordering::Acquire) && runtime::existing().is_some_and(|rt| !rt.is_off())
}

/// Runs `f` (a `dlclose`'s bookkeeping) marked as heisen's own work on
/// this thread, as [`resolve`] is: a hook that fires meanwhile (an
/// instrumented allocator freeing what the tables drop) returns at once
/// instead of waiting for the resolver's lock this thread holds.
fn own_work(f: impl FnOnce()) {
    if RESOLVING.try_with(|r| r.replace(true)).unwrap_or(true) {
        return; // already inside heisen's work: nothing forgotten now
    }
    let _ = catch_unwind(AssertUnwindSafe(f));
    let _ = RESOLVING.try_with(|r| r.set(false));
}

/// Forgets the resolved functions at the addresses `gone` picks.
fn forget(gone: impl Fn(usize) -> bool) {
    let mut guard = resolver();
    let Some(resolver) = guard.as_mut() else {
        return;
    };
    resolver.ids.retain(|&address, _| {
        let keep = !gone(address);
        if !keep {
            TABLE.remove(address);
            FORGOTTEN.store(true, Ordering::Relaxed);
        }
        keep
    });
}

/// Set once a resolved function was forgotten ([`forget`]): from then on
/// an exit of an unknown function may be one whose enter was measured.
static FORGOTTEN: AtomicBool = AtomicBool::new(false);

/// `dlclose` as the program's (this library comes before the C library
/// in the lookup order): the closed object's functions are forgotten,
/// the C library's `dlclose` runs, then, if objects were unloaded, the
/// functions of every object no longer loaded (`forget_unloaded`). Without
/// it, a library loaded where an unloaded one was kept the first one's
/// names for its functions.
///
/// # Safety
/// As `dlclose`: `handle` is one `dlopen` returned.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlclose(handle: *mut c_void) -> c_int {
    type Close = unsafe extern "C" fn(*mut c_void) -> c_int;
    static REAL: AtomicUsize = AtomicUsize::new(0);
    let mut real = REAL.load(Ordering::Acquire);
    if real == 0 {
        // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name.
        real = unsafe { libc::dlsym(libc::RTLD_NEXT, c"dlclose".as_ptr()) } as usize;
        if real == 0 {
            // A program linked statically with the C library: no other
            // dlclose to call. The handle stays open (README, "dlclose").
            static NOTED: AtomicBool = AtomicBool::new(false);
            if let Some(rt) = runtime::existing()
                && !NOTED.swap(true, Ordering::Relaxed)
            {
                rt.note("heisen: dlclose: no C library dlclose to call (a static program?): the objects stay loaded");
            }
            return -1;
        }
        REAL.store(real, Ordering::Release);
    }
    // SAFETY: `real` is the C library's dlclose, which has this type.
    let real: Close = unsafe { core::mem::transmute::<usize, Close>(real) };
    // The closed object's functions are forgotten before it may be
    // unmapped: once it is, another thread may load a library there and
    // call it at once (if the object stays loaded, its functions are only
    // resolved again, to the same names).
    if resolving() {
        own_work(|| {
            if let Some(closing) = symbols::Loaded::of_handle(handle) {
                forget(|address| closing.contains(address));
            }
        });
    }
    // Most closes only drop a reference. Those that unload something may
    // unload the object's dependencies too: forgotten after.
    let before = symbols::unloads();
    // SAFETY: the caller's handle, passed on.
    let rc = unsafe { real(handle) };
    if rc == 0 && symbols::unloads() != before {
        own_work(forget_unloaded);
    }
    rc
}

/// An address the calibration enters as a function; mapped to the
/// scratch region. No instrumented function has it: it is heisen's own.
pub(crate) fn calibration_address() -> usize {
    let address = calibration_address as fn() -> usize as usize;
    let mut guard = resolver();
    let resolver = guard.get_or_insert_with(Resolver::default);
    resolver.ids.insert(address, SCRATCH_REGION);
    TABLE.insert(address, SCRATCH_REGION);
    address
}

/// A function's enter (the hot path, generic over who calls it).
///
/// As `region::enter_id`: the common case (runtime live, the function in
/// the lock-free table, the actions calibrated) is tested with atomic
/// loads and compares only (the table's index is masked below its
/// length), none of which can panic, then one call, [`enter_thread`],
/// holds the panic boundary around the thread's work. Every other case
/// takes [`enter_slow`], the whole path behind its own boundary.
#[inline(always)]
pub(crate) fn enter<M: Mode>(address: usize) {
    let known = TABLE.get(address);
    if let Some(id) = known
        && heisen_shmem::thread::light_enter(id, 0)
    {
        return; // a light window's call (`probe`)
    }
    if let Some(rt) = runtime::existing()
        && !rt.is_off()
        && let Some(id) = known
        && let Some(cost) = M::hot_cost(Hot::HookEnter)
    {
        if id != NO_REGION {
            enter_thread(id, cost);
        }
        return;
    }
    enter_slow::<M>(address);
}

/// The thread's enter of a known function: the fast path's one call.
#[inline(never)]
extern "C" fn enter_thread(id: u32, cost: Cost) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if thread::enter_region(id, 0, cost, Path::Hook).is_none() {
            unmeasured_enter();
        }
    }));
}

/// An enter the thread did not measure: counted if a runtime call was
/// under way on the thread (a signal handler interrupted it), so that the
/// report says how many calls it is missing.
#[cold]
#[inline(never)]
fn unmeasured_enter() {
    if thread::busy()
        && let Some(rt) = runtime::existing()
    {
        rt.count_nested();
    }
}

/// [`enter`]'s cases other than the common one (start-up, calibration, a
/// function seen for the first time, the runtime off).
#[cold]
#[inline(never)]
fn enter_slow<M: Mode>(address: usize) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let rt = runtime();
        if rt.is_off() {
            return;
        }
        let actions = M::actions(rt);
        let (id, spent) = match TABLE.get(address) {
            Some(id) => (id, 0),
            None => {
                match resolve(rt, address) {
                    Some(found) => found,
                    None => {
                        // A first call made while this thread resolves a
                        // name (a signal handler interrupted it).
                        rt.count_nested();
                        return;
                    }
                }
            }
        };
        if id == NO_REGION {
            return;
        }
        let cost = rt.cost(actions.hook_enter);
        let measured = with_current(|s| {
            if spent > 0 {
                // R1: the name's resolution, measured directly.
                s.overhead(spent);
            }
            s.enter_costing(id, 0, cost);
        });
        if measured.is_none() {
            unmeasured_enter();
        }
    }));
}

/// A function's exit (the hot path; as [`enter`]).
#[inline(always)]
pub(crate) fn exit<M: Mode>(address: usize) {
    let known = TABLE.get(address);
    if let Some(id) = known
        && heisen_shmem::thread::light_exit(id)
    {
        return; // a light window's call (`probe`)
    }
    if let Some(rt) = runtime::existing()
        && !rt.is_off()
        && let Some(id) = known
        && let Some(cost) = M::hot_cost(Hot::HookExit)
    {
        if id != NO_REGION {
            exit_thread(id, cost);
        }
        return;
    }
    exit_slow::<M>(address);
}

/// The thread's exit of a known function: the fast path's one call.
#[inline(never)]
extern "C" fn exit_thread(id: u32, cost: Cost) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // A longjmp skips the exits of the functions it leaves: the exit
        // of a function open beneath them closes them first (counted in
        // the report as `frames_unwound`); an exit of a function not open
        // is refused and counted.
        thread::exit_region_unwinding(id, cost)
    }));
}

/// [`exit`]'s cases other than the common one.
#[cold]
#[inline(never)]
fn exit_slow<M: Mode>(address: usize) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let rt = runtime();
        if rt.is_off() {
            return;
        }
        let actions = M::actions(rt);
        let id = match TABLE.get(address) {
            Some(id) => id,
            // Not in the lock-free table: known to the locked map if its
            // enter was measured (the table's probe window was full).
            None => match known(address) {
                Some(id) => id,
                // Forgotten since its enter (`dlclose` of its object by
                // another thread that still had it open, or a scan that
                // raced with its object's load): resolved again, to the
                // name its enter had. Its exit was dropped before, leaving
                // the frame open.
                None if FORGOTTEN.load(Ordering::Relaxed) => match resolve(rt, address) {
                    Some((id, spent)) => {
                        if spent > 0 {
                            with_current(|s| s.overhead(spent));
                        }
                        id
                    }
                    None => return,
                },
                None => return,
            },
        };
        if id == NO_REGION {
            return;
        }
        let cost = rt.cost(actions.hook_exit);
        with_current(|s| s.exit_unwinding_costing(id, cost));
    }));
}

#[cold]
fn known(address: usize) -> Option<u32> {
    if RESOLVING.try_with(Cell::get).unwrap_or(true) {
        return None;
    }
    resolver().as_ref()?.ids.get(&address).copied()
}

/// Called by code compiled with `-finstrument-functions` at the start of
/// every function: enters the function's region.
///
/// # Safety
/// Called by the compiler's instrumentation with the function's address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __cyg_profile_func_enter(this_fn: *mut c_void, call_site: *mut c_void) {
    let _ = call_site;
    // The panic boundaries are inside (`enter_thread`, `enter_slow`).
    enter::<Live>(this_fn as usize);
}

/// Called by code compiled with `-finstrument-functions` at the end of
/// every function: exits the function's region.
///
/// # Safety
/// Called by the compiler's instrumentation with the function's address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __cyg_profile_func_exit(this_fn: *mut c_void, call_site: *mut c_void) {
    let _ = call_site;
    // The panic boundaries are inside (`exit_thread`, `exit_slow`).
    exit::<Live>(this_fn as usize);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_finds_what_was_inserted_and_nothing_else() {
        let table = Box::new(Table {
            keys: [const { AtomicUsize::new(0) }; SLOTS],
            ids: [const { AtomicU32::new(NO_REGION) }; SLOTS],
        });
        // Addresses 16 bytes apart, as functions are aligned.
        for i in 1..=1000usize {
            assert!(table.insert(0x40_0000 + 16 * i, i as u32));
        }
        for i in 1..=1000usize {
            assert_eq!(table.get(0x40_0000 + 16 * i), Some(i as u32));
        }
        assert_eq!(table.get(0x40_0008), None);
        assert_eq!(table.get(0x7f00_0000_0000), None);
    }

    #[test]
    fn a_removed_address_is_forgotten_and_keeps_its_slot() {
        let table = Box::new(Table {
            keys: [const { AtomicUsize::new(0) }; SLOTS],
            ids: [const { AtomicU32::new(NO_REGION) }; SLOTS],
        });
        // Three addresses in one probe chain: the same slot.
        let a = 0x40_0000;
        let chain: Vec<usize> = (1..)
            .map(|i| a + 16 * i)
            .filter(|&x| slot(x) == slot(a))
            .take(2)
            .collect();
        let (b, c) = (chain[0], chain[1]);
        for (x, id) in [(a, 1), (b, 2), (c, 3)] {
            assert!(table.insert(x, id));
        }
        table.remove(b);
        assert_eq!(table.get(b), None);
        // Probes go on past the forgotten slot.
        assert_eq!(table.get(c), Some(3));
        assert_eq!(table.get(a), Some(1));
        // Another function at the removed address gets its own id, in the
        // same slot; the slot never takes another address, so a hook that
        // read its key reads that address's id or none.
        assert!(table.insert(b, 4));
        assert_eq!(table.get(b), Some(4));
        let b_slot = (slot(a) + 1) & (SLOTS - 1);
        assert_eq!(table.keys[b_slot].load(Ordering::Relaxed), b);
        table.remove(b);
        let d = (1..)
            .map(|i| c + 16 * i)
            .find(|&x| slot(x) == slot(a))
            .expect("a fourth address in the chain");
        assert!(table.insert(d, 5));
        assert_eq!(table.keys[b_slot].load(Ordering::Relaxed), b);
        assert_eq!(table.get(d), Some(5));
        assert_eq!(table.get(b), None);
    }

    #[test]
    fn a_full_probe_window_is_refused_not_overwritten() {
        let table = Box::new(Table {
            keys: [const { AtomicUsize::new(0) }; SLOTS],
            ids: [const { AtomicU32::new(NO_REGION) }; SLOTS],
        });
        // Fill every slot so that any window is full.
        for (i, key) in table.keys.iter().enumerate() {
            key.store(usize::MAX - i, Ordering::Relaxed);
        }
        assert!(!table.insert(0x1000, 7));
        assert_eq!(table.get(0x1000), None);
    }
}
