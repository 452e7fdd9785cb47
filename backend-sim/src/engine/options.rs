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
    /// The run passed a limit: `--max-events`, or simulated time beyond
    /// [`MAX_CLOCK`] (values so large that time would overflow).
    Limit(String),
    /// The kernel refused an event (a simulator bug; reported, not hidden).
    Kernel {
        /// Location name.
        location: String,
        /// The kernel's error.
        error: KernelError,
    },
}

/// Blocked locations a deadlock's message names; the rest are counted.
pub const SHOWN_BLOCKED: usize = 8;

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Program(s) | SimError::Limit(s) => write!(f, "{s}"),
            SimError::Deadlock { time, blocked } => {
                write!(f, "deadlock at {time} ns: the program blocks forever; ")?;
                // One line that reads at any scale: the first locations,
                // then how many more (all of them are in `blocked`).
                let shown = blocked.len().min(SHOWN_BLOCKED);
                write!(f, "{}", blocked[..shown].join("; "))?;
                if blocked.len() > shown {
                    write!(f, "; and {} more blocked", blocked.len() - shown)?;
                }
                Ok(())
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
    /// Stop with [`SimError::Limit`] after this many events (a runaway
    /// run's brake; `u64::MAX`: no limit).
    pub max_events: u64,
    /// A message larger than the receive that matches it is an error, as
    /// MPI's `MPI_ERR_TRUNCATE` (LogGOPSim's GOAL matching does not look
    /// at sizes: the GOAL path turns this off).
    pub truncation: bool,
    /// How a wildcard receive picks among pending messages (R11).
    pub matching: Matching,
    /// Which LogGOPSim a GOAL graph reproduces (docs/goal.md, A1-A5):
    /// the fixed build (default) or the released code.
    pub loggopsim: LogGopSim,
}

/// Which LogGOPSim the GOAL executor reproduces (docs/goal.md, "LogGOPSim
/// as released").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogGopSim {
    /// 76451de with the fixes A1-A4: a stable sort of ready operations,
    /// 0-byte messages charged as 1 byte, the causality raise on several
    /// CPUs, the message's size deciding rendezvous on both paths.
    #[default]
    Fixed,
    /// 76451de as released: libstdc++'s unstable `std::sort` (A1), a
    /// 0-byte message charged `(0 - 1)` bytes wrapped in 64 bits (A2), no
    /// causality raise (A3), the receive's size deciding rendezvous on
    /// the unexpected path (A4). Times only: no kernels, no trace.
    Released,
}

/// How a wildcard receive (any source) picks among the messages pending
/// when it is posted (DESIGN R11, docs/rules.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Matching {
    /// The observed order: the first message handled (MPI, LogGOPSim).
    #[default]
    Observed,
    /// The message with the earliest approximated send time `a = t - x`
    /// (R5) of the timestamped kernel; without kernels, observed order.
    /// R11's replay: what the reorderings it counts would change.
    Approximated,
}

/// The clock bound is defined beside the transfer times it caps, so that
/// `transfer` does not import the engine (imports go one way).
pub use crate::transfer::MAX_CLOCK;

impl RunOptions {
    /// The truth: no instrumentation cost, kernels on (their path is the
    /// truth's), no trace.
    pub const TRUTH: RunOptions = RunOptions {
        measured: false,
        kernels: true,
        trace: false,
        max_events: u64::MAX,
        truncation: true,
        matching: Matching::Observed,
        loggopsim: LogGopSim::Fixed,
    };
    /// The measured run with kernels.
    pub const MEASURED: RunOptions = RunOptions {
        measured: true,
        kernels: true,
        trace: false,
        max_events: u64::MAX,
        truncation: true,
        matching: Matching::Observed,
        loggopsim: LogGopSim::Fixed,
    };
    /// Times only (GOAL schedules, benches): sizes are not matched, as in
    /// LogGOPSim.
    pub const TIMES: RunOptions = RunOptions {
        measured: false,
        kernels: false,
        trace: false,
        max_events: u64::MAX,
        truncation: false,
        matching: Matching::Observed,
        loggopsim: LogGopSim::Fixed,
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
