//! What a program or tool can read while it runs: the calling thread's
//! live critical-path values (R10) and the calibrated costs of every
//! instrumentation action (R1).

use core::ffi::c_char;

use heisen_core::Cost;
use heisen_shmem::{SELECTED, runtime, with_current};

use crate::actions::{Live, Mode};
use crate::result::{boundary, heisen_result, out_arg, str_arg, write_out};

/// One thread's critical-path values now (R7, R10; 003 §2.3): the length
/// `L` of the longest chain of non-waiting compensated work ending here,
/// each selected region's share of it, and each one's net length (the
/// longest chain with that region counted as zero: `longest - net[k]` is
/// how much shorter the run would be without region `k`). Times in ns.
#[allow(non_camel_case_types)] // reason: the C name
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct heisen_snapshot {
    /// The thread's location id (its index in the report).
    pub location: u32,
    /// Whether the thread collects critical-path data (R9).
    pub active: bool,
    /// Critical-path length `L`.
    pub longest: i64,
    /// The part of `L` spent in transfers.
    pub transfer: i64,
    /// The selected region ids, in slot order; `HEISEN_NO_REGION` for an
    /// unused slot.
    pub selected: [u32; crate::HEISEN_SELECTED],
    /// Inclusive share of `L` per selected slot.
    pub inclusive: [i64; crate::HEISEN_SELECTED],
    /// Exclusive share of `L` per selected slot.
    pub exclusive: [i64; crate::HEISEN_SELECTED],
    /// Net length per selected slot.
    pub net: [i64; crate::HEISEN_SELECTED],
}

/// A calibrated cost (R1), in ns: the whole cost of one action and the
/// part of it inside the region's own interval (for an enter, after its
/// clock read; for an exit, before it).
#[allow(non_camel_case_types)] // reason: the C name
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct heisen_cost {
    /// The whole cost, ns.
    pub whole: u64,
    /// The part inside the region, ns.
    pub inside: u64,
}

impl From<Cost> for heisen_cost {
    fn from(c: Cost) -> Self {
        heisen_cost {
            whole: c.whole,
            inside: c.inside,
        }
    }
}

/// The calibrated costs the C API charges (R1), measured at start-up
/// through each action's own code path.
#[allow(non_camel_case_types)] // reason: the C name
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct heisen_calibration {
    /// `heisen_region_enter`.
    pub enter: heisen_cost,
    /// `heisen_region_exit`.
    pub exit: heisen_cost,
    /// `__cyg_profile_func_enter` (`-finstrument-functions`).
    pub hook_enter: heisen_cost,
    /// `__cyg_profile_func_exit`.
    pub hook_exit: heisen_cost,
    /// `heisen_piggyback_pack`.
    pub pack: u64,
    /// `heisen_merge_begin`.
    pub merge_begin: u64,
    /// `heisen_piggyback_merge`.
    pub merge: u64,
    /// One read of the process clock.
    pub clock_read: u64,
}

/// Writes the calling thread's critical-path values now into `*out`.
/// `HEISEN_RESULT_DISABLED` when heisen is switched off.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_snapshot_thread(out: *mut heisen_snapshot) -> heisen_result {
    boundary(|| {
        let out = out_arg(out)?;
        let rt = crate::lifecycle::live()?.ok_or(heisen_result::Disabled)?;
        let s = with_current(|s| s.snapshot()).ok_or(heisen_result::NotMeasured)?;
        const { assert!(SELECTED == crate::HEISEN_SELECTED) };
        let snapshot = heisen_snapshot {
            location: s.location,
            active: s.active,
            longest: s.longest,
            transfer: s.transfer,
            selected: rt.selected(),
            inclusive: s.inclusive,
            exclusive: s.exclusive,
            net: s.net,
        };
        // SAFETY: checked by out_arg.
        unsafe { write_out(out, snapshot) };
        Ok(())
    })
}

/// Writes the calibrated costs of the C API's actions into `*out`
/// (calibrating first if the runtime has not yet). The report header
/// lists them too, with every other action's.
/// `HEISEN_RESULT_DISABLED` when heisen is switched off.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_calibration_get(out: *mut heisen_calibration) -> heisen_result {
    boundary(|| {
        let out = out_arg(out)?;
        let rt = crate::lifecycle::live()?.ok_or(heisen_result::Disabled)?;
        let a = Live::actions(rt);
        let clock = rt.action("clock_read");
        let calibration = heisen_calibration {
            enter: rt.cost(a.enter).into(),
            exit: rt.cost(a.exit).into(),
            hook_enter: rt.cost(a.hook_enter).into(),
            hook_exit: rt.cost(a.hook_exit).into(),
            pack: rt.cost(a.pack).whole,
            merge_begin: rt.cost(a.merge_begin).whole,
            merge: rt.cost(a.merge).whole,
            clock_read: rt.cost(clock).whole,
        };
        // SAFETY: checked by out_arg.
        unsafe { write_out(out, calibration) };
        Ok(())
    })
}

/// Writes the calibrated cost of the action called `name` (as the report
/// header lists it: `c_enter`, `release`, `mutex_acquire`, ...) into
/// `*out`; `HEISEN_RESULT_UNKNOWN_ACTION` if there is none.
///
/// # Safety
/// `name` is NULL or a C string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heisen_action_cost(
    name: *const c_char,
    out: *mut heisen_cost,
) -> heisen_result {
    boundary(|| {
        let out = out_arg(out)?;
        // SAFETY: the caller's contract.
        let name = unsafe { str_arg(name, 256, heisen_result::UnknownAction) }?;
        let rt = runtime();
        if !rt.is_off() {
            Live::actions(rt);
        }
        let cost = rt
            .actions()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
            .ok_or(heisen_result::UnknownAction)?;
        // SAFETY: checked by out_arg.
        unsafe { write_out(out, cost.into()) };
        Ok(())
    })
}
