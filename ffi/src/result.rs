//! The result code every fallible export returns, its messages, and the
//! boundary every export goes through: panics are caught there, pointers
//! are checked there, and outputs are written there, only on success.
//!
//! The numbers are stable: a code keeps its number in every later release,
//! new codes get new numbers, and `tests/c/bad_calls.c` checks the numbers
//! the header promises.

use core::ffi::{CStr, c_char};
use core::panic::AssertUnwindSafe;
use std::panic::catch_unwind;

use heisen_core::DecodeError;
use heisen_shmem::names::NameError;

/// What a call did. `HEISEN_RESULT_OK` is 0; every other code says what was
/// wrong, and `heisen_result_message` says it in words.
#[allow(non_camel_case_types)] // reason: the C name, as the header spells it (rustls-ffi's convention)
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum heisen_result {
    /// The call did what it says.
    Ok = 0,
    /// A pointer argument that must not be NULL was NULL.
    NullArgument = 1,
    /// An argument is out of its range (an unknown form or clock, a begin
    /// time later than now, a barrier of zero threads).
    InvalidArgument = 2,
    /// A string argument is not UTF-8.
    NotUtf8 = 3,
    /// An output buffer is too short for what the call would write.
    BufferTooShort = 4,
    /// Writing the report failed (the directory is missing or not writable).
    Io = 5,
    /// heisen failed inside (a bug: please report it); nothing was changed.
    Panic = 6,
    /// The runtime was running already: the configuration was not applied.
    AlreadyRunning = 100,
    /// `heisen_finalize` was called: nothing is measured any more.
    Finalized = 101,
    /// heisen is switched off (`HEISEN_DISABLE=1` or the configuration).
    Disabled = 102,
    /// This thread is not measured: the thread table is full, the thread
    /// ended, or a heisen call is already under way on it (a signal handler).
    NotMeasured = 103,
    /// The thread has a location already; its start record was not merged.
    ThreadStarted = 104,
    /// A region name is empty.
    NameEmpty = 200,
    /// A region name is longer than 4,096 bytes.
    NameTooLong = 201,
    /// The process has 8,192 region names already.
    NameTableFull = 202,
    /// No region has this id (or this name).
    UnknownRegion = 203,
    /// A region exit while no region is open on this thread.
    ExitWithoutEnter = 204,
    /// A region exit that is not the innermost open region's.
    ExitMismatch = 205,
    /// More regions selected than a run keeps (`HEISEN_SELECTED`).
    TooManySelected = 206,
    /// No instrumentation action has this name.
    UnknownAction = 207,
    /// A piggyback buffer is shorter than a record.
    PiggybackShort = 300,
    /// A buffer that is not a heisen piggyback.
    PiggybackForeign = 301,
    /// A piggyback of another encoding version.
    PiggybackVersion = 302,
    /// A piggyback of a run that selects another number of regions.
    PiggybackWrongK = 303,
    /// The call would have blocked (a lock held, a queue empty).
    WouldBlock = 400,
    /// The work queue is closed and empty.
    QueueClosed = 401,
    /// The calling thread does not hold the mutex (an unlock, a condition
    /// wait).
    NotOwner = 402,
}

/// Every code, in number order (for the message table and its tests).
const ALL: [heisen_result; 27] = [
    heisen_result::Ok,
    heisen_result::NullArgument,
    heisen_result::InvalidArgument,
    heisen_result::NotUtf8,
    heisen_result::BufferTooShort,
    heisen_result::Io,
    heisen_result::Panic,
    heisen_result::AlreadyRunning,
    heisen_result::Finalized,
    heisen_result::Disabled,
    heisen_result::NotMeasured,
    heisen_result::ThreadStarted,
    heisen_result::NameEmpty,
    heisen_result::NameTooLong,
    heisen_result::NameTableFull,
    heisen_result::UnknownRegion,
    heisen_result::ExitWithoutEnter,
    heisen_result::ExitMismatch,
    heisen_result::TooManySelected,
    heisen_result::UnknownAction,
    heisen_result::PiggybackShort,
    heisen_result::PiggybackForeign,
    heisen_result::PiggybackVersion,
    heisen_result::PiggybackWrongK,
    heisen_result::WouldBlock,
    heisen_result::QueueClosed,
    heisen_result::NotOwner,
];

impl heisen_result {
    /// The code of number `code`, if there is one.
    pub fn from_code(code: u32) -> Option<heisen_result> {
        ALL.iter().copied().find(|r| *r as u32 == code)
    }

    /// The message, NUL-terminated for C.
    pub fn message(self) -> &'static CStr {
        match self {
            heisen_result::Ok => c"ok",
            heisen_result::NullArgument => c"a pointer argument that must not be NULL was NULL",
            heisen_result::InvalidArgument => c"an argument is out of its range",
            heisen_result::NotUtf8 => c"a string argument is not UTF-8",
            heisen_result::BufferTooShort => {
                c"the output buffer is too short for what the call would write"
            }
            heisen_result::Io => {
                c"the report could not be written; set HEISEN_OUTPUT to a writable directory"
            }
            heisen_result::Panic => {
                c"heisen failed inside (a bug, please report it); nothing was changed"
            }
            heisen_result::AlreadyRunning => {
                c"the heisen runtime was running already (an earlier heisen call, an instrumented function or another heisen library started it); the configuration was not applied"
            }
            heisen_result::Finalized => {
                c"heisen_finalize was called: the report is written and nothing is measured any more"
            }
            heisen_result::Disabled => c"heisen is switched off (HEISEN_DISABLE=1)",
            heisen_result::NotMeasured => {
                c"this thread is not measured: the thread table is full, the thread ended, or a heisen call is already under way on it"
            }
            heisen_result::ThreadStarted => {
                c"this thread has a location already; its start record was not merged"
            }
            heisen_result::NameEmpty => c"the region name is empty",
            heisen_result::NameTooLong => c"the region name is longer than 4096 bytes",
            heisen_result::NameTableFull => c"the process has 8192 region names already",
            heisen_result::UnknownRegion => c"no region has this id or name",
            heisen_result::ExitWithoutEnter => c"region exit while no region is open on this thread",
            heisen_result::ExitMismatch => {
                c"region exit of a region that is not the innermost open one on this thread"
            }
            heisen_result::TooManySelected => {
                c"more regions selected than a run keeps (HEISEN_SELECTED)"
            }
            heisen_result::UnknownAction => c"no instrumentation action has this name",
            heisen_result::PiggybackShort => {
                c"the piggyback buffer is shorter than a record (heisen_piggyback_size bytes)"
            }
            heisen_result::PiggybackForeign => {
                c"the buffer is not a heisen piggyback (wrong magic or reserved bits)"
            }
            heisen_result::PiggybackVersion => {
                c"the piggyback has another encoding version than this heisen reads"
            }
            heisen_result::PiggybackWrongK => {
                c"the piggyback comes from a run that selects another number of regions"
            }
            heisen_result::WouldBlock => c"the call would have blocked",
            heisen_result::QueueClosed => c"the work queue is closed and empty",
            heisen_result::NotOwner => c"the calling thread does not hold the mutex",
        }
    }
}

impl From<NameError> for heisen_result {
    fn from(e: NameError) -> Self {
        match e {
            NameError::Empty => heisen_result::NameEmpty,
            NameError::TooLong { .. } => heisen_result::NameTooLong,
            NameError::TableFull => heisen_result::NameTableFull,
        }
    }
}

impl From<DecodeError> for heisen_result {
    fn from(e: DecodeError) -> Self {
        match e {
            DecodeError::Short { .. } => heisen_result::PiggybackShort,
            DecodeError::Foreign { .. } => heisen_result::PiggybackForeign,
            DecodeError::Version { .. } => heisen_result::PiggybackVersion,
            DecodeError::WrongK { .. } => heisen_result::PiggybackWrongK,
        }
    }
}

/// The message of result code `result`: a static NUL-terminated string,
/// never NULL; an unknown number gets "unknown result code".
#[unsafe(no_mangle)]
pub extern "C" fn heisen_result_message(result: u32) -> *const c_char {
    heisen_result::from_code(result)
        .map_or(c"unknown result code", heisen_result::message)
        .as_ptr()
}

/// An internal outcome: `Err` carries the code the export returns.
pub(crate) type Outcome<T = ()> = Result<T, heisen_result>;

/// Runs an export's body: a panic becomes [`heisen_result::Panic`] instead
/// of unwinding into C (which would abort the program).
#[inline(always)]
pub(crate) fn boundary(f: impl FnOnce() -> Outcome) -> heisen_result {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => heisen_result::Ok,
        Ok(Err(e)) => e,
        Err(_) => heisen_result::Panic,
    }
}

/// Runs the body of an export that returns a value, not a code: a panic
/// gives `fallback`.
#[inline(always)]
pub(crate) fn boundary_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// A C string argument of at most `max` bytes (without its NUL), read no
/// further than `max + 1` bytes.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string, or to at least
/// `max + 1` readable bytes.
pub(crate) unsafe fn str_arg<'a>(
    p: *const c_char,
    max: usize,
    too_long: heisen_result,
) -> Outcome<&'a str> {
    if p.is_null() {
        return Err(heisen_result::NullArgument);
    }
    // SAFETY: the caller's contract; strnlen reads at most max + 1 bytes.
    let len = unsafe { libc::strnlen(p, max + 1) };
    if len > max {
        return Err(too_long);
    }
    // SAFETY: `len` bytes from `p` are readable (strnlen found no NUL before).
    let bytes = unsafe { core::slice::from_raw_parts(p.cast::<u8>(), len) };
    core::str::from_utf8(bytes).map_err(|_| heisen_result::NotUtf8)
}

/// A byte-buffer argument.
///
/// # Safety
/// `p` is NULL or points to `len` readable bytes.
pub(crate) unsafe fn bytes_arg<'a>(p: *const u8, len: usize) -> Outcome<&'a [u8]> {
    if p.is_null() {
        return Err(heisen_result::NullArgument);
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts(p, len) })
}

/// An output byte buffer argument.
///
/// # Safety
/// `p` is NULL or points to `len` writable bytes.
pub(crate) unsafe fn buffer_arg<'a>(p: *mut u8, len: usize) -> Outcome<&'a mut [u8]> {
    if p.is_null() {
        return Err(heisen_result::NullArgument);
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts_mut(p, len) })
}

/// Checks that an out-parameter is not NULL (before any work, so that a
/// NULL output changes nothing).
pub(crate) fn out_arg<T>(p: *mut T) -> Outcome<*mut T> {
    if p.is_null() {
        Err(heisen_result::NullArgument)
    } else {
        Ok(p)
    }
}

/// Writes `value` through an out-parameter checked by [`out_arg`].
///
/// # Safety
/// `p` is a non-NULL pointer the caller gave for writing a `T`.
pub(crate) unsafe fn write_out<T>(p: *mut T, value: T) {
    // SAFETY: the caller's contract; `write` does not drop the old value,
    // which may be uninitialised C memory.
    unsafe { p.write(value) }
}

/// The shape of every `heisen_<object>_new`: checks `out`, makes the
/// object (which may refuse its arguments), boxes it and writes the handle.
///
/// # Safety
/// `out` is NULL or writable.
pub(crate) unsafe fn new_handle<T>(out: *mut *mut T, make: impl FnOnce() -> Outcome<T>) -> Outcome {
    let out = out_arg(out)?;
    let handle = Box::into_raw(Box::new(make()?));
    // SAFETY: checked by out_arg.
    unsafe { write_out(out, handle) };
    Ok(())
}

/// The shape of every `heisen_<object>_free`: NULL is ignored, anything
/// else was made by [`new_handle`] and is dropped once.
///
/// # Safety
/// `handle` is NULL or a live handle of type `T` no thread uses any more.
pub(crate) unsafe fn free_handle<T>(handle: *mut T) {
    let _ = boundary(|| {
        if !handle.is_null() {
            // SAFETY: the caller's contract: from Box::into_raw, freed once.
            drop(unsafe { Box::from_raw(handle) });
        }
        Ok(())
    });
}

/// Copies `s` with a terminating NUL into `buf` of `len` bytes and its
/// length (without the NUL) into `out_len`, or fails with nothing written.
///
/// # Safety
/// `buf` is NULL or points to `len` writable bytes; `out_len` is NULL or
/// writable.
pub(crate) unsafe fn write_string(
    s: &str,
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> Outcome {
    let out_len = out_arg(out_len)?;
    // SAFETY: the caller's contract.
    let buf = unsafe { buffer_arg(buf.cast::<u8>(), len) }?;
    if buf.len() < s.len() + 1 {
        return Err(heisen_result::BufferTooShort);
    }
    buf[..s.len()].copy_from_slice(s.as_bytes());
    buf[s.len()] = 0;
    // SAFETY: checked by out_arg.
    unsafe { write_out(out_len, s.len()) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_own_number_and_a_message() {
        let codes = &ALL;
        for (i, a) in codes.iter().enumerate() {
            assert_eq!(heisen_result::from_code(*a as u32), Some(*a));
            assert!(!a.message().is_empty());
            for b in &codes[i + 1..] {
                assert_ne!(*a as u32, *b as u32, "{a:?} and {b:?}");
            }
        }
        assert_eq!(heisen_result::from_code(99), None);
    }

    #[test]
    fn unknown_codes_have_a_message_too() {
        // SAFETY: heisen_result_message returns a static C string.
        let m = unsafe { CStr::from_ptr(heisen_result_message(12345)) };
        assert_eq!(m.to_str(), Ok("unknown result code"));
    }

    #[test]
    fn a_panic_becomes_a_code() {
        let r = boundary(|| panic!("inside"));
        assert_eq!(r, heisen_result::Panic);
    }
}
