//! What a run is asked to do ([`RunOptions`]) and why it can fail
//! ([`SimError`]).

use core::fmt;

use heisen_core::KernelError;

use crate::program::LocationId;

/// Why a run could not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// The program is inconsistent (unknown request, unlock of a free lock…).
    Program(String),
    /// Some locations can never go on.
    Deadlock {
        /// Simulated time when nothing was left to do.
        time: u64,
        /// Each blocked location and what it waits for.
        blocked: Vec<String>,
    },
    /// The kernel refused an event (a simulator bug; reported, not hidden).
    Kernel {
        /// Location name.
        location: String,
        /// The kernel's error.
        error: KernelError,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Program(s) => write!(f, "{s}"),
            SimError::Deadlock { time, blocked } => {
                write!(f, "deadlock at {time} ns: the program blocks forever; ")?;
                write!(f, "{}", blocked.join("; "))
            }
            SimError::Kernel { location, error } => {
                write!(f, "kernel refused an event of {location}: {error}")
            }
        }
    }
}

impl core::error::Error for SimError {}

/// How to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Charge the program's calibration for every instrumentation action.
    pub measured: bool,
    /// Run the kernel online (both forms) at every location.
    pub kernels: bool,
    /// Keep one [`TraceEvent`](super::TraceEvent) per operation.
    pub trace: bool,
}

impl RunOptions {
    /// The truth: no instrumentation cost, kernels on (their path is the
    /// truth's), no trace.
    pub const TRUTH: RunOptions = RunOptions {
        measured: false,
        kernels: true,
        trace: false,
    };
    /// The measured run with kernels.
    pub const MEASURED: RunOptions = RunOptions {
        measured: true,
        kernels: true,
        trace: false,
    };
    /// Times only (GOAL schedules, benches).
    pub const TIMES: RunOptions = RunOptions {
        measured: false,
        kernels: false,
        trace: false,
    };
}

/// Maps a kernel refusal at location `l` to a [`SimError`] (lazily: the
/// name is formatted only when there is an error).
pub(super) fn kerr(l: LocationId) -> impl Fn(KernelError) -> SimError {
    move |error| SimError::Kernel {
        location: format!("location {l}"),
        error,
    }
}
