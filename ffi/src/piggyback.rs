//! Piggybacks over a transport heisen does not know — a tool's own RPC, a
//! task runtime, a pipe: the release packs a record into the program's
//! buffer (R3), the merge unpacks one or many and merges them (R4, R5),
//! and a thread's start and end do the same for spawn and join (R8).
//!
//! The record is the core's wire format (`docs/piggyback.md`),
//! `HEISEN_PIGGYBACK_SIZE` bytes. A merge passes the time it read with
//! `heisen_merge_begin()` before it blocked, so that the wait is measured
//! (R4: `w = e - b`). In a timestamped run (threads, processes of one
//! machine) records carry approximated times; a transport between clocks
//! that cannot be compared merges with `HEISEN_MERGE_DELAY_ONLY` (R4),
//! which ignores them (`core/src/merge.rs`: a dependency without the
//! TIMESTAMP flag is merged delay-only).

use heisen_core::{Dependency, Flags, Merged};
use heisen_shmem::{Record, runtime, thread, with_current};

use crate::HEISEN_MERGE_DELAY_ONLY;
use crate::actions::{Live, Mode};
use crate::lifecycle::live;
use crate::result::{Outcome, boundary, buffer_arg, bytes_arg, heisen_result, out_arg, write_out};

/// What a merge found (R4, R5): the measured and compensated wait and the
/// approximated end with its bounds.
#[allow(non_camel_case_types)] // reason: the C name
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct heisen_merge_result {
    /// Measured wait `w = e - b`, ns; 0 when every dependency was there
    /// (released, plus its model, or arrived) before `begin`: the merge
    /// did not wait (R5).
    pub wait: u64,
    /// Compensated wait `w' = w + x - x'` (R4): 0 when the thread would not
    /// have waited without measurement. May be negative; never clamped.
    pub compensated_wait: i64,
    /// Approximated end `a(e)` (R5), ns on the process clock.
    pub approximated_end: i64,
    /// Lower bound of `a(e)` (seed 001 eq. 11).
    pub lower: i64,
    /// Upper bound of `a(e)`.
    pub upper: i64,
    /// Transfer time the critical path took over from a dependency (R7).
    pub transfer: i64,
    /// Index of the dependency that determined `a(e)`; -1 when the
    /// thread's own begin did (it would not have waited).
    pub determined_by: i64,
}

impl From<Merged> for heisen_merge_result {
    fn from(m: Merged) -> Self {
        heisen_merge_result {
            wait: m.wait,
            compensated_wait: m.compensated_wait,
            approximated_end: m.approximated_end,
            lower: m.lower,
            upper: m.upper,
            transfer: m.transfer,
            determined_by: m.determined_by.map_or(-1, |j| j as i64),
        }
    }
}

/// One dependency of `heisen_piggyback_merge_many`.
#[allow(non_camel_case_types)] // reason: the C name
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct heisen_dependency {
    /// The record's bytes, as `heisen_piggyback_pack` wrote them.
    pub piggyback: *const u8,
    /// Their length (at least `HEISEN_PIGGYBACK_SIZE`).
    pub len: usize,
    /// Transfer estimate in ns, used when the transfer cannot be measured
    /// (R5, seed 001 case m.2); 0 for an immediate hand-over.
    pub model: u64,
    /// Lower bound of the transfer, the copy cost in ns; 0 for none.
    pub copy: u64,
    /// When this dependency was seen to arrive (`heisen_now()`), or 0 if
    /// not observed (the merge's end stands for it).
    pub arrival: u64,
}

/// The unmeasured outcome of a merge while heisen is switched off.
fn unmeasured(begin: u64, end: u64) -> heisen_merge_result {
    let wait = end.saturating_sub(begin);
    heisen_merge_result {
        wait,
        compensated_wait: wait as i64,
        approximated_end: end as i64,
        lower: end as i64,
        upper: end as i64,
        transfer: 0,
        determined_by: -1,
    }
}

/// Decodes a record from the program's bytes.
fn decode(bytes: &[u8], flags: u32) -> Outcome<Record> {
    let mut record = Record::decode(bytes)?;
    if flags & HEISEN_MERGE_DELAY_ONLY != 0 {
        // R4 for this merge: the clocks cannot be compared, so the
        // record's approximated time is not used (merge.rs, Case::DelayOnly).
        record.flags = Flags(record.flags.0 & !Flags::TIMESTAMP.0);
    }
    Ok(record)
}

fn check_flags(flags: u32) -> Outcome {
    if flags & !HEISEN_MERGE_DELAY_ONLY != 0 {
        return Err(heisen_result::InvalidArgument);
    }
    Ok(())
}

/// The signature of [`pack`], for the calibration.
pub(crate) type PackFn = unsafe fn(*mut u8, usize, *mut usize) -> heisen_result;

/// The signature of [`merge`], for the calibration.
pub(crate) type MergeFn =
    unsafe fn(u64, *const u8, usize, u64, u64, u32, *mut heisen_merge_result) -> heisen_result;

/// A release now, encoded into `buffer` (see `heisen_piggyback_pack`).
///
/// # Safety
/// As `heisen_piggyback_pack`.
#[inline(always)]
pub(crate) unsafe fn pack<M: Mode>(
    buffer: *mut u8,
    len: usize,
    out_written: *mut usize,
) -> heisen_result {
    boundary(|| {
        let out = out_arg(out_written)?;
        // SAFETY: the caller's contract.
        let buffer = unsafe { buffer_arg(buffer, len) }?;
        // Checked before the release, so that a short buffer changes nothing.
        if buffer.len() < Record::ENCODED_LEN {
            return Err(heisen_result::BufferTooShort);
        }
        let record = match live()? {
            // R3: an unmeasured sender's record carries nothing.
            None => Record::EMPTY,
            Some(rt) => {
                let action = M::actions(rt).pack;
                with_current(|s| s.release(action)).unwrap_or(Record::EMPTY)
            }
        };
        let n = record
            .encode(buffer)
            .map_err(|_| heisen_result::BufferTooShort)?;
        // SAFETY: checked by out_arg.
        unsafe { write_out(out, n) };
        Ok(())
    })
}

/// The begin time of a merge, charged (see `heisen_merge_begin`).
#[inline(always)]
pub(crate) fn merge_begin<M: Mode>() -> u64 {
    crate::result::boundary_value(0, || {
        let rt = runtime();
        if !rt.is_off() {
            let action = M::actions(rt).merge_begin;
            // R1: the read is instrumentation; its cost falls before the
            // blocking call, in the interval that ends at `begin`. Charged
            // before the read, so that a light window the thread had under
            // way ends first (`probe`): its calls come before `begin`.
            with_current(|s| s.overhead(rt.cost(action).whole));
        }
        rt.now()
    })
}

/// One merge (see `heisen_piggyback_merge`).
///
/// # Safety
/// As `heisen_piggyback_merge`.
#[inline(always)]
pub(crate) unsafe fn merge<M: Mode>(
    begin: u64,
    piggyback: *const u8,
    len: usize,
    model: u64,
    copy: u64,
    flags: u32,
    out: *mut heisen_merge_result,
) -> heisen_result {
    boundary(|| {
        check_flags(flags)?;
        // SAFETY: the caller's contract.
        let record = decode(unsafe { bytes_arg(piggyback, len) }?, flags)?;
        let deps = [Dependency::message(&record, model, copy)];
        merge_all::<M>(begin, &deps, out)
    })
}

/// Merges `deps` on the calling thread, blocked since `begin`.
fn merge_all<M: Mode>(
    begin: u64,
    deps: &[Dependency<'_, { heisen_shmem::SELECTED }>],
    out: *mut heisen_merge_result,
) -> Outcome {
    let rt = runtime();
    let now = rt.now();
    if begin > now {
        return Err(heisen_result::InvalidArgument);
    }
    if deps.iter().any(|d| d.arrival.is_some_and(|a| a > now)) {
        return Err(heisen_result::InvalidArgument);
    }
    let result = match live()? {
        None => unmeasured(begin, now),
        Some(rt) => {
            let action = M::actions(rt).merge;
            // R4, R5 (R6 n-to-1 for several): the kernel merges every
            // dependency at once, the end read now.
            with_current(|s| s.merge(begin, deps, action))
                .ok_or(heisen_result::NotMeasured)?
                .into()
        }
    };
    if !out.is_null() {
        // SAFETY: the caller's contract: NULL or writable.
        unsafe { write_out(out, result) };
    }
    Ok(())
}

/// Bytes of one record (`HEISEN_PIGGYBACK_SIZE`).
#[unsafe(no_mangle)]
pub extern "C" fn heisen_piggyback_size() -> usize {
    Record::ENCODED_LEN
}

/// A release now on the calling thread — before the program sends, hands
/// over or publishes something another thread or process will wait for:
/// writes the record it carries (R3) into `buffer` (`len` bytes, at least
/// `HEISEN_PIGGYBACK_SIZE`) and the bytes written into `*out_written`.
/// Send it with the data. An unmeasured thread (heisen switched off, or
/// `HEISEN_RESULT_NOT_MEASURED` cases) writes the record of no data,
/// which a merge ignores.
///
/// # Safety
/// `buffer` is NULL or `len` writable bytes; `out_written` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_piggyback_pack(
    buffer: *mut u8,
    len: usize,
    out_written: *mut usize,
) -> heisen_result {
    // SAFETY: the caller's contract.
    unsafe { pack::<Live>(buffer, len, out_written) }
}

/// Writes the record of no data (an uninstrumented sender's, R3) without
/// touching the runtime: for a transport that needs a record where heisen
/// has none to give (after `heisen_finalize`).
///
/// # Safety
/// `buffer` is NULL or `len` writable bytes; `out_written` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_piggyback_pack_empty(
    buffer: *mut u8,
    len: usize,
    out_written: *mut usize,
) -> heisen_result {
    boundary(|| {
        let out = out_arg(out_written)?;
        // SAFETY: the caller's contract.
        let buffer = unsafe { buffer_arg(buffer, len) }?;
        let n = Record::EMPTY
            .encode(buffer)
            .map_err(|_| heisen_result::BufferTooShort)?;
        // SAFETY: checked by out_arg.
        unsafe { write_out(out, n) };
        Ok(())
    })
}

/// Checks that `len` bytes hold a record of this run: `HEISEN_RESULT_OK`,
/// or why not (`HEISEN_RESULT_PIGGYBACK_SHORT`, `_FOREIGN`, `_VERSION`,
/// `_WRONG_K`). Changes nothing.
///
/// # Safety
/// `piggyback` is NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_piggyback_check(piggyback: *const u8, len: usize) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        decode(unsafe { bytes_arg(piggyback, len) }?, 0).map(|_| ())
    })
}

/// Reads the process clock as the begin of a merge, and charges the read
/// (R1). Call it right before the blocking call (a receive, a wait) and
/// pass the value to the merge.
#[unsafe(no_mangle)]
pub extern "C" fn heisen_merge_begin() -> u64 {
    merge_begin::<Live>()
}

/// A merge on the calling thread, which blocked from `begin`
/// (`heisen_merge_begin()`) until now on one dependency whose record is
/// `piggyback` (`len` bytes): unpacks it and merges it (R4, R5). `model`
/// and `copy` estimate the transfer (R5 case m.2) in ns; 0 and 0 mean an
/// immediate hand-over. A record released (plus `model`) before `begin`
/// did not make the thread wait: the time since `begin` stays the
/// program's (not with `HEISEN_MERGE_DELAY_ONLY`, whose records carry no
/// comparable time). `flags`: 0 or `HEISEN_MERGE_DELAY_ONLY`. Writes
/// what it found into `*out` unless `out` is NULL. A bad record changes
/// nothing and returns why (`HEISEN_RESULT_PIGGYBACK_*`); a record of no
/// data changes nothing and succeeds (R3).
///
/// # Safety
/// `piggyback` is NULL or `len` readable bytes; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_piggyback_merge(
    begin: u64,
    piggyback: *const u8,
    len: usize,
    model: u64,
    copy: u64,
    flags: u32,
    out: *mut heisen_merge_result,
) -> heisen_result {
    // SAFETY: the caller's contract.
    unsafe { merge::<Live>(begin, piggyback, len, model, copy, flags, out) }
}

/// A merge on `count` dependencies at once — a wait-all, a gather root, a
/// task waiting for several inputs (R4, R5, R6 n-to-1): as
/// `heisen_piggyback_merge`, with each dependency's own transfer estimate
/// and, where the program saw it, its arrival time (which then stands
/// for its release plus its model in deciding whether the merge waited).
/// If any record is bad, nothing is merged and the first problem is
/// returned. `deps` may be NULL when `count` is 0 (the state is then
/// unchanged).
///
/// # Safety
/// `deps` is NULL or `count` readable `heisen_dependency`s whose buffers
/// are readable; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_piggyback_merge_many(
    begin: u64,
    deps: *const heisen_dependency,
    count: usize,
    flags: u32,
    out: *mut heisen_merge_result,
) -> heisen_result {
    boundary(|| {
        check_flags(flags)?;
        let deps: &[heisen_dependency] = if count == 0 {
            &[]
        } else if deps.is_null() {
            return Err(heisen_result::NullArgument);
        } else {
            // SAFETY: the caller's contract.
            unsafe { core::slice::from_raw_parts(deps, count) }
        };
        let records = deps
            .iter()
            // SAFETY: the caller's contract.
            .map(|d| decode(unsafe { bytes_arg(d.piggyback, d.len) }?, flags))
            .collect::<Outcome<Vec<Record>>>()?;
        let dependencies: Vec<_> = records
            .iter()
            .zip(deps)
            .map(|(record, d)| {
                let dep = Dependency::message(record, d.model, d.copy);
                if d.arrival == 0 {
                    dep
                } else {
                    dep.arrived(d.arrival)
                }
            })
            .collect();
        merge_all::<Live>(begin, &dependencies, out)
    })
}

/// Starts the calling thread's location as a thread another released (R8:
/// the spawner packed `parent` right before creating the thread, the
/// child's start merges it). Call it first thing in the new thread. NULL
/// starts it without a parent. `HEISEN_RESULT_THREAD_STARTED` if the
/// thread has a location already (it called heisen before, or an
/// interposer started it).
///
/// # Safety
/// `parent` is NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_thread_start(parent: *const u8, len: usize) -> heisen_result {
    boundary(|| {
        let record = if parent.is_null() {
            Record::EMPTY
        } else {
            // SAFETY: the caller's contract.
            decode(unsafe { bytes_arg(parent, len) }?, 0)?
        };
        if live()?.is_none() {
            return Ok(());
        }
        if thread::registered() {
            return Err(heisen_result::ThreadStarted);
        }
        if thread::start_current(&record) {
            Ok(())
        } else {
            Err(heisen_result::NotMeasured)
        }
    })
}

/// Ends the calling thread's location now (R8): its last release, which
/// the thread that joins it merges. Writes that record into `buffer`
/// unless `buffer` is NULL (then `len` and `out_written` are ignored).
/// Return it from the thread function; the joiner passes it to
/// `heisen_piggyback_merge` with the begin it read before `pthread_join`.
/// Nothing on this thread is measured after it.
///
/// # Safety
/// `buffer` is NULL or `len` writable bytes; `out_written` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_thread_finish(
    buffer: *mut u8,
    len: usize,
    out_written: *mut usize,
) -> heisen_result {
    boundary(|| {
        let output = if buffer.is_null() {
            None
        } else {
            let out = out_arg(out_written)?;
            // SAFETY: the caller's contract.
            let buffer = unsafe { buffer_arg(buffer, len) }?;
            if buffer.len() < Record::ENCODED_LEN {
                return Err(heisen_result::BufferTooShort);
            }
            Some((buffer, out))
        };
        let record = match live()? {
            None => Record::EMPTY,
            Some(_) => thread::finish_current().ok_or(heisen_result::NotMeasured)?,
        };
        if let Some((buffer, out)) = output {
            let n = record
                .encode(buffer)
                .map_err(|_| heisen_result::BufferTooShort)?;
            // SAFETY: checked by out_arg.
            unsafe { write_out(out, n) };
        }
        Ok(())
    })
}
