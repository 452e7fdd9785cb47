//! `MPI_Pcontrol` (MPI-4.0 §15.2.4): the program's switch for its
//! profiler. Level 0 stops critical-path collection on the calling
//! thread's location, level 1 starts it (R9, 003 §2.3); other levels are
//! accepted and ignored. Compensation itself never stops: stopping it
//! mid-run would make every later time wrong. A stopped location sends
//! records without path data; another location's path data starts it
//! again (R9), so a program that starts collection on one rank starts it
//! wherever its messages go.
//!
//! `MPI_Pcontrol` is variadic in C. Stable Rust cannot define a variadic
//! function, so the export takes the level alone: on the C calling
//! conventions MPI runs on (x86-64 and AArch64 System V) the fixed first
//! argument is passed the same way, and the levels heisen reads take no
//! further arguments. The MPI's own `PMPI_Pcontrol` is called with the
//! level only (MPICH ignores the rest).

use core::ffi::c_int;

use heisen_shmem::with_current;

use crate::setup::{self, guarded};
use crate::sys;

/// Stops (`false`) or starts (`true`) critical-path collection on the
/// calling thread's location (R9).
pub fn set_collecting(start: bool) {
    guarded(|| {
        with_current(|s| {
            let t = s.now();
            // The clamped clock never goes backwards: neither call fails.
            let _ = if start {
                s.kernel_mut().start_path(t)
            } else {
                s.kernel_mut().stop_path(t)
            };
        })
    });
}

/// `MPI_Pcontrol` (MPI-4.0 §15.2.4).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Pcontrol(level: c_int) -> c_int {
    if setup::ensure().is_some() {
        match level {
            0 => set_collecting(false),
            1 => set_collecting(true),
            _ => {}
        }
    }
    // SAFETY: the level alone is a valid call of the variadic function.
    unsafe { sys::PMPI_Pcontrol(level) }
}
