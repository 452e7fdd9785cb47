//! Starting and ending the runtime: a configuration handle applied by
//! `heisen_init`, `heisen_finalize` (which writes the report), and the
//! report's name and path.
//!
//! Calling `heisen_init` is optional: the runtime also starts on the first
//! heisen call, configured from the environment (`HEISEN_OUTPUT`,
//! `HEISEN_REGIONS`, `HEISEN_FORM`, `HEISEN_CLOCK`, `HEISEN_SUMMARY`,
//! `HEISEN_DISABLE`). Without `heisen_finalize` the report is written at
//! exit.

use core::ffi::c_char;
use std::path::PathBuf;

use heisen_core::Form;
use heisen_shmem::clock::ClockKind;
use heisen_shmem::names::MAX_NAME_LEN;
use heisen_shmem::runtime::{self, AlreadyRunning, Runtime};
use heisen_shmem::{Config, SELECTED};

use crate::actions::{Live, Mode};
use crate::result::{Outcome, boundary, heisen_result, str_arg, write_string};

/// Longest path or file name accepted, in bytes.
const MAX_PATH_LEN: usize = 4096;

/// The merge form of a run (R4, R5): `heisen_config_set_form` takes one.
#[allow(non_camel_case_types)] // reason: the C name
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum heisen_form {
    /// R4: only delays travel; for clocks that cannot be compared.
    DelayOnly = 0,
    /// R5: approximated times travel too; the default for threads.
    Timestamped = 1,
}

/// The clock source: `heisen_config_set_clock` takes one.
#[allow(non_camel_case_types)] // reason: the C name
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum heisen_clock {
    /// The TSC where the CPU has an invariant one, else `CLOCK_MONOTONIC`.
    Auto = 0,
    /// The CPU's time-stamp counter.
    Tsc = 1,
    /// `clock_gettime(CLOCK_MONOTONIC)`.
    Monotonic = 2,
}

/// A run's configuration before `heisen_init` applies it (opaque).
#[allow(non_camel_case_types)] // reason: the C name
#[derive(Debug)]
pub struct heisen_config {
    config: Config,
    /// Whether `heisen_config_select` replaced the environment's list yet.
    selected: bool,
}

/// The runtime for a call that measures: `Ok(None)` when heisen is switched
/// off (the call is then a successful no-op, so that `HEISEN_DISABLE=1`
/// never changes what a program does), `Err(Finalized)` after
/// `heisen_finalize`.
#[inline(always)]
pub(crate) fn live() -> Outcome<Option<&'static Runtime>> {
    let rt = runtime::runtime();
    if rt.is_off() {
        return if rt.config().disabled {
            Ok(None)
        } else {
            Err(heisen_result::Finalized)
        };
    }
    Ok(Some(rt))
}

/// Runs `f` on the configuration behind `config`.
///
/// # Safety
/// `config` is NULL or a live handle from `heisen_config_new`.
unsafe fn with_config(
    config: *mut heisen_config,
    f: impl FnOnce(&mut heisen_config) -> Outcome,
) -> heisen_result {
    boundary(|| {
        if config.is_null() {
            return Err(heisen_result::NullArgument);
        }
        // SAFETY: the caller's contract: a live handle, not shared with
        // another thread during the call.
        let config = unsafe { &mut *config };
        f(config)
    })
}

/// Makes a configuration with the environment's settings (the same as
/// the runtime reads when it starts on its own) in `*out`. Free it with
/// `heisen_config_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_config_new(out: *mut *mut heisen_config) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        unsafe {
            crate::result::new_handle(out, || {
                Ok(heisen_config {
                    config: Config::from_env(),
                    selected: false,
                })
            })
        }
    })
}

/// Frees a configuration; NULL is ignored.
///
/// # Safety
/// `config` is NULL or a handle from `heisen_config_new` not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_config_free(config: *mut heisen_config) {
    // SAFETY: the caller's contract (made by heisen_config_new).
    unsafe { crate::result::free_handle(config) }
}

/// Sets the directory the report is written to (default: `HEISEN_OUTPUT`,
/// else the current directory).
///
/// # Safety
/// `config` is NULL or a live handle; `dir` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_config_set_output(
    config: *mut heisen_config,
    dir: *const c_char,
) -> heisen_result {
    // SAFETY: the caller's contract.
    unsafe {
        with_config(config, |c| {
            let dir = str_arg(dir, MAX_PATH_LEN, heisen_result::InvalidArgument)?;
            if dir.is_empty() {
                return Err(heisen_result::InvalidArgument);
            }
            c.config.output = PathBuf::from(dir);
            Ok(())
        })
    }
}

/// Sets the merge form (a `heisen_form` value).
///
/// # Safety
/// `config` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_config_set_form(
    config: *mut heisen_config,
    form: u32,
) -> heisen_result {
    // SAFETY: the caller's contract.
    unsafe {
        with_config(config, |c| {
            c.config.form = match form {
                f if f == heisen_form::DelayOnly as u32 => Form::DelayOnly,
                f if f == heisen_form::Timestamped as u32 => Form::Timestamped,
                _ => return Err(heisen_result::InvalidArgument),
            };
            Ok(())
        })
    }
}

/// Sets the clock source (a `heisen_clock` value).
///
/// # Safety
/// `config` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_config_set_clock(
    config: *mut heisen_config,
    clock: u32,
) -> heisen_result {
    // SAFETY: the caller's contract.
    unsafe {
        with_config(config, |c| {
            c.config.clock = match clock {
                k if k == heisen_clock::Auto as u32 => None,
                k if k == heisen_clock::Tsc as u32 => Some(ClockKind::Tsc),
                k if k == heisen_clock::Monotonic as u32 => Some(ClockKind::Monotonic),
                _ => return Err(heisen_result::InvalidArgument),
            };
            Ok(())
        })
    }
}

/// Selects region `name` for critical-path shares and nets (R7), after
/// the ones selected before; at most `HEISEN_SELECTED`. The first call
/// replaces the environment's `HEISEN_REGIONS`. The selected regions get
/// the ids 0, 1, ... in this order.
///
/// # Safety
/// `config` is NULL or a live handle; `name` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_config_select(
    config: *mut heisen_config,
    name: *const c_char,
) -> heisen_result {
    // SAFETY: the caller's contract.
    unsafe {
        with_config(config, |c| {
            let name = str_arg(name, MAX_NAME_LEN, heisen_result::NameTooLong)?;
            if name.is_empty() {
                return Err(heisen_result::NameEmpty);
            }
            if !c.selected {
                c.selected = true;
                c.config.regions = Some(Vec::new());
            }
            let selected = c.config.regions.get_or_insert_with(Vec::new);
            if selected.iter().any(|n| n == name) {
                return Ok(());
            }
            if selected.len() == SELECTED {
                return Err(heisen_result::TooManySelected);
            }
            selected.push(name.to_owned());
            Ok(())
        })
    }
}

/// Sets whether a one-screen summary goes to stderr at the end.
///
/// # Safety
/// `config` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_config_set_summary(
    config: *mut heisen_config,
    on: bool,
) -> heisen_result {
    // SAFETY: the caller's contract.
    unsafe {
        with_config(config, |c| {
            c.config.summary = on;
            Ok(())
        })
    }
}

/// Switches heisen off (`true`) or on: off, every call is a successful
/// no-op and no report is written.
///
/// # Safety
/// `config` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_config_set_disabled(
    config: *mut heisen_config,
    off: bool,
) -> heisen_result {
    // SAFETY: the caller's contract.
    unsafe {
        with_config(config, |c| {
            c.config.disabled = off;
            Ok(())
        })
    }
}

/// Starts the runtime with `config` (NULL: the environment's settings) and
/// calibrates the instrumentation (a few milliseconds; the synchronisation
/// objects calibrate when the first one is made). Returns
/// `HEISEN_RESULT_ALREADY_RUNNING` if the runtime runs already — started by
/// an earlier heisen call, by a function compiled with
/// `-finstrument-functions` (`main` itself: mark it
/// `__attribute__((no_instrument_function))` to configure it first), or by
/// another heisen library — and then `config` was not applied. The
/// configuration handle may be freed right after.
///
/// # Safety
/// `config` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_init(config: *const heisen_config) -> heisen_result {
    boundary(|| {
        let config = if config.is_null() {
            Config::from_env()
        } else {
            // SAFETY: the caller's contract.
            unsafe { &*config }.config.clone()
        };
        match runtime::init_with(config) {
            Ok(rt) => {
                if !rt.is_off() {
                    Live::actions(rt);
                }
                Ok(())
            }
            Err(AlreadyRunning(rt)) if rt.is_finished() => Err(heisen_result::Finalized),
            Err(AlreadyRunning(_)) => Err(heisen_result::AlreadyRunning),
        }
    })
}

/// Ends the calling thread's location, writes the report and stops
/// measuring. Later calls that measure return `HEISEN_RESULT_FINALIZED`, a
/// second finalize too. Without this call the report is written at exit.
/// A finalize while another thread is writing the report returns once it
/// is written (at most a minute). `HEISEN_RESULT_IO` if the report could
/// not be written (the reason is also printed to stderr).
#[unsafe(no_mangle)]
pub extern "C" fn heisen_finalize() -> heisen_result {
    boundary(|| {
        let rt = runtime::runtime();
        match rt.finish() {
            Some(Ok(_)) => Ok(()),
            Some(Err(_)) => Err(heisen_result::Io),
            None if rt.config().disabled => Ok(()),
            None => Err(heisen_result::Finalized),
        }
    })
}

/// Names the report file inside the output directory (default
/// `heisen.<pid>.json`), e.g. to tell the processes of a run apart.
///
/// # Safety
/// `name` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_report_set_name(name: *const c_char) -> heisen_result {
    boundary(|| {
        // SAFETY: the caller's contract.
        let name = unsafe { str_arg(name, MAX_PATH_LEN, heisen_result::InvalidArgument) }?;
        if name.is_empty() {
            return Err(heisen_result::InvalidArgument);
        }
        let rt = runtime::runtime();
        if rt.is_finished() {
            return Err(heisen_result::Finalized);
        }
        rt.set_report_name(name);
        Ok(())
    })
}

/// Copies the path the report is (or will be) written to into `buffer`
/// (`len` bytes, NUL-terminated) and its length without the NUL into
/// `*out_len`. `HEISEN_RESULT_BUFFER_TOO_SHORT` (nothing written) if it
/// does not fit.
///
/// # Safety
/// `buffer` is NULL or `len` writable bytes; `out_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_report_path(
    buffer: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> heisen_result {
    boundary(|| {
        let path = runtime::runtime().report_path();
        let path = path.to_str().ok_or(heisen_result::NotUtf8)?;
        // SAFETY: the caller's contract.
        unsafe { write_string(path, buffer, len, out_len) }
    })
}
