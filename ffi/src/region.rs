//! Code regions from C: register a name once and enter and exit it by id
//! (the cheap path: no string work per call), or by name; and the start
//! and stop of critical-path collection on a thread (R9).
//!
//! Region names are interned per process (the same id on every thread and
//! for every heisen library in the process); an id comes only from
//! `heisen_region_register`, or from the selection (`heisen_config_select`,
//! `HEISEN_REGIONS`: ids 0, 1, ... in order).

use core::ffi::c_char;

use heisen_core::{Cost, KernelError};
use heisen_shmem::names::MAX_NAME_LEN;
use heisen_shmem::probe::Path;
use heisen_shmem::runtime::{self, Runtime};
use heisen_shmem::{thread, with_current};

use crate::actions::{Hot, Live, Mode};
use crate::lifecycle::live;
use crate::result::{Outcome, boundary, heisen_result, out_arg, str_arg, write_out, write_string};

/// The code of a refused exit.
fn exit_error(e: KernelError) -> heisen_result {
    match e {
        KernelError::ExitWithoutEnter { .. } => heisen_result::ExitWithoutEnter,
        KernelError::ExitMismatch { .. } => heisen_result::ExitMismatch,
        _ => heisen_result::InvalidArgument,
    }
}

/// A region name argument.
///
/// # Safety
/// `name` is NULL or a C string.
unsafe fn name_arg<'a>(name: *const c_char) -> Outcome<&'a str> {
    // SAFETY: the caller's contract.
    let name = unsafe { str_arg(name, MAX_NAME_LEN, heisen_result::NameTooLong) }?;
    if name.is_empty() {
        return Err(heisen_result::NameEmpty);
    }
    Ok(name)
}

/// Enters region `id` on the calling thread (the hot path, generic over
/// who calls it; see [`crate::actions`]).
///
/// The common case (the runtime live, the region known, the actions
/// calibrated) is tested with loads and compares only, none of which can
/// panic, and then makes one call, [`enter_thread`], which holds the panic
/// boundary around everything that could; the export then jumps there
/// (a tail call: no registers of its own to save). Every other case takes
/// [`enter_slow`], the whole path behind its own boundary.
#[inline(always)]
pub(crate) fn enter_id<M: Mode>(id: u32) -> heisen_result {
    if heisen_shmem::thread::light_enter(id, 0) {
        return heisen_result::Ok; // a light window's call (`probe`)
    }
    if let Some(rt) = runtime::existing()
        && !rt.is_off()
        && M::known(rt, id)
        && let Some(cost) = M::hot_cost(Hot::Enter)
    {
        return enter_thread(id, cost);
    }
    enter_slow::<M>(id)
}

/// The thread's enter of a known region: the fast path's one call.
/// `extern "C"`, so that the export can jump to it (same convention); no
/// panic leaves it (the boundary inside).
#[inline(never)]
extern "C" fn enter_thread(id: u32, cost: Cost) -> heisen_result {
    // R1, R2: the kernel stamps the enter and charges the C call's cost.
    boundary(|| thread::enter_region(id, 0, cost, Path::C).ok_or(heisen_result::NotMeasured))
}

/// [`enter_id`]'s cases other than the common one (start-up, calibration,
/// an unknown id, the runtime off).
#[cold]
#[inline(never)]
fn enter_slow<M: Mode>(id: u32) -> heisen_result {
    boundary(|| {
        let Some(rt) = live()? else {
            return Ok(());
        };
        if !M::known(rt, id) {
            return Err(heisen_result::UnknownRegion);
        }
        enter_known::<M>(rt, id)
    })
}

#[inline(always)]
fn enter_known<M: Mode>(rt: &'static Runtime, id: u32) -> Outcome {
    let cost = rt.cost(M::actions(rt).enter);
    // R1, R2: the kernel stamps the enter and charges the C call's cost.
    with_current(|s| s.enter_costing(id, 0, cost)).ok_or(heisen_result::NotMeasured)
}

/// Exits region `id` on the calling thread (the hot path; as
/// [`enter_id`]).
#[inline(always)]
pub(crate) fn exit_id<M: Mode>(id: u32) -> heisen_result {
    if heisen_shmem::thread::light_exit(id) {
        return heisen_result::Ok; // a light window's call (`probe`)
    }
    if let Some(rt) = runtime::existing()
        && !rt.is_off()
        && M::known(rt, id)
        && let Some(cost) = M::hot_cost(Hot::Exit)
    {
        return exit_thread(id, cost);
    }
    exit_slow::<M>(id)
}

/// The thread's exit of a known region: the fast path's one call.
/// `extern "C"` as [`enter_thread`].
#[inline(never)]
extern "C" fn exit_thread(id: u32, cost: Cost) -> heisen_result {
    boundary(|| {
        // The kernel's error is mapped inside, so that what comes back is
        // one word (not a `KernelError` through memory).
        match thread::exit_region(id, cost).map(|r| r.map_err(exit_error)) {
            Some(r) => r,
            None => Err(heisen_result::NotMeasured),
        }
    })
}

/// [`exit_id`]'s cases other than the common one.
#[cold]
#[inline(never)]
fn exit_slow<M: Mode>(id: u32) -> heisen_result {
    boundary(|| {
        let Some(rt) = live()? else {
            return Ok(());
        };
        if !M::known(rt, id) {
            return Err(heisen_result::UnknownRegion);
        }
        exit_known::<M>(rt, id)
    })
}

#[inline(always)]
fn exit_known<M: Mode>(rt: &'static Runtime, id: u32) -> Outcome {
    let cost = rt.cost(M::actions(rt).exit);
    // The kernel's error is mapped inside, so that what comes back is one
    // word (not a `KernelError` through memory) on every exit.
    match with_current(|s| s.exit_costing(id, cost).map_err(exit_error)) {
        Some(r) => r,
        None => Err(heisen_result::NotMeasured),
    }
}

/// Registers region `name` and writes its id to `*out_id`; the same name
/// gives the same id on every thread. Names are at most 4,096 bytes of
/// UTF-8; the report keeps names of up to 256 bytes whole and cuts longer
/// ones, ending them in a hash of the name.
///
/// # Safety
/// `name` is NULL or a C string; `out_id` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_region_register(
    name: *const c_char,
    out_id: *mut u32,
) -> heisen_result {
    boundary(|| {
        let out_id = out_arg(out_id)?;
        // SAFETY: the caller's contract.
        let name = unsafe { name_arg(name) }?;
        let rt = runtime::runtime();
        if rt.is_finished() {
            return Err(heisen_result::Finalized);
        }
        let id = rt.region_id(name)?;
        // SAFETY: checked by out_arg.
        unsafe { write_out(out_id, id) };
        Ok(())
    })
}

/// Enters region `id` (from `heisen_region_register`) on the calling
/// thread. The cheap path: no string work, one clock read.
#[unsafe(no_mangle)]
pub extern "C" fn heisen_region_enter(id: u32) -> heisen_result {
    enter_id::<Live>(id)
}

/// Exits region `id`, which must be the innermost region open on the
/// calling thread (`HEISEN_RESULT_EXIT_MISMATCH`, or
/// `HEISEN_RESULT_EXIT_WITHOUT_ENTER` when none is open; either way the
/// exit is ignored and counted in the report).
#[unsafe(no_mangle)]
pub extern "C" fn heisen_region_exit(id: u32) -> heisen_result {
    exit_id::<Live>(id)
}

/// Names this thread used recently, direct-mapped by the string's address.
const NAME_CACHE: usize = 32;
/// Longer names are not cached (they are looked up in the name table).
const CACHED_NAME_LEN: usize = 64;

/// A cached name: the address it was read from, its bytes, its id.
type CachedName = (usize, Box<[u8]>, u32);

std::thread_local! {
    /// Recently used names: a hit needs the same address and the same
    /// bytes (a C program may reuse a buffer for another name), so a call
    /// by name takes neither the name table's lock nor a hash of the string.
    static BY_NAME: core::cell::RefCell<Vec<CachedName>> =
        const { core::cell::RefCell::new(Vec::new()) };
}

/// The id of region `name` (read from `address`), through this thread's
/// cache; `intern` registers an unknown name, otherwise it is an error.
fn id_of_name(rt: &Runtime, name: &str, address: usize, intern: bool) -> Outcome<u32> {
    let slot = (address >> 3) % NAME_CACHE;
    let hit = BY_NAME
        .try_with(|cache| {
            let cache = cache.borrow();
            cache
                .get(slot)
                .filter(|(a, bytes, _)| *a == address && **bytes == *name.as_bytes())
                .map(|&(_, _, id)| id)
        })
        .ok()
        .flatten();
    if let Some(id) = hit {
        return Ok(id);
    }
    let id = if intern {
        rt.region_id(name)?
    } else {
        rt.names()
            .lookup(name)
            .ok_or(heisen_result::UnknownRegion)?
    };
    if name.len() <= CACHED_NAME_LEN {
        // A thread being torn down has no cache any more: no matter.
        let _ = BY_NAME.try_with(|cache| {
            let mut cache = cache.borrow_mut();
            if cache.is_empty() {
                cache.resize_with(NAME_CACHE, || (0, Box::default(), 0));
            }
            cache[slot] = (address, name.as_bytes().into(), id);
        });
    }
    Ok(id)
}

/// Enters region `name`, registering it on first use: the convenient path
/// (the name's bytes are compared with a per-thread cache on every call;
/// use ids where it matters).
///
/// # Safety
/// `name` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_region_enter_name(name: *const c_char) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        let text = unsafe { name_arg(name) }?;
        let Some(rt) = live()? else {
            return Ok(());
        };
        let id = id_of_name(rt, text, name as usize, true)?;
        enter_known::<Live>(rt, id)
    })
}

/// Exits region `name` (see `heisen_region_exit`);
/// `HEISEN_RESULT_UNKNOWN_REGION` if no region has that name.
///
/// # Safety
/// `name` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_region_exit_name(name: *const c_char) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        let text = unsafe { name_arg(name) }?;
        let Some(rt) = live()? else {
            return Ok(());
        };
        let id = id_of_name(rt, text, name as usize, false)?;
        exit_known::<Live>(rt, id)
    })
}

/// Copies the name of region `id` into `buffer` (`len` bytes,
/// NUL-terminated) and its length without the NUL into `*out_len`;
/// `HEISEN_RESULT_BUFFER_TOO_SHORT` (nothing written) if it does not fit.
/// `HEISEN_MAX_NAME_LEN + 1` bytes always suffice. Also names the regions
/// of functions seen by the `-finstrument-functions` hooks.
///
/// # Safety
/// `buffer` is NULL or `len` writable bytes; `out_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_region_name(
    id: u32,
    buffer: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> heisen_result {
    boundary(|| {
        if buffer.is_null() || out_len.is_null() {
            return Err(heisen_result::NullArgument);
        }
        let name = runtime::runtime()
            .names()
            .name(id)
            .ok_or(heisen_result::UnknownRegion)?;
        // SAFETY: the caller's contract.
        unsafe { write_string(&name, buffer, len, out_len) }
    })
}

/// Starts critical-path collection on the calling thread now, with an
/// empty path (R9, 003 §2.3). Threads collect from their start unless
/// stopped; a stopped thread sends records without path data.
#[unsafe(no_mangle)]
pub extern "C" fn heisen_path_start() -> heisen_result {
    path(true)
}

/// Stops critical-path collection on the calling thread: its values
/// freeze, its records carry no path data (R9).
#[unsafe(no_mangle)]
pub extern "C" fn heisen_path_stop() -> heisen_result {
    path(false)
}

fn path(start: bool) -> heisen_result {
    boundary(|| {
        if live()?.is_none() {
            return Ok(());
        }
        with_current(|s| {
            let t = s.now();
            // The clamped clock never goes backwards: neither call fails.
            let _ = if start {
                s.kernel_mut().start_path(t)
            } else {
                s.kernel_mut().stop_path(t)
            };
        })
        .ok_or(heisen_result::NotMeasured)
    })
}
