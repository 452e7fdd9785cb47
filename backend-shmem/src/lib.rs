//! heisen-shmem: the process runtime every heisen backend shares, and
//! compensated critical-path profiling of threaded programs.
//!
//! Each thread gets one kernel [`Location`](heisen_core::Location),
//! registered on first use (R1, R2, R7). All threads read one clock, so
//! merges use the timestamped form (R5). Regions are entered with guards:
//!
//! ```
//! # let _ = heisen_shmem::runtime::init_with(heisen_shmem::Config { output: std::env::temp_dir(), ..heisen_shmem::Config::from_env() });
//! let total = heisen_shmem::in_region("solve", || {
//!     let _g = heisen_shmem::region("inner"); // exits when `_g` drops
//!     (1..=10).sum::<u32>()
//! });
//! assert_eq!(total, 55);
//! ```
//!
//! The report (`docs/report.md`) is written when the process exits, to
//! `HEISEN_OUTPUT` (a directory, default the current one), or earlier by
//! [`finish`]. The environment variables are listed in [`config`].
//!
//! One process has one runtime, however many heisen libraries it loads
//! (see [`runtime`](mod@runtime)).
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod actions;
pub mod barrier;
pub mod calibrate;
pub mod clock;
pub mod condvar;
pub mod config;
mod current;
pub mod exit;
pub use current::reentry;
pub mod handoff;
pub mod ids;
pub mod monitor;
pub mod mutex;
pub mod names;
mod online;
pub mod probe;
pub mod queue;
pub mod region;
pub mod report;
pub mod runtime;
pub mod rwlock;
pub mod seqlock;
pub mod spawn;
mod stack;
pub(crate) mod sync;
pub mod thread;

pub use config::Config;
pub use region::{Region, RegionGuard, in_region, region};
pub use runtime::{ActionId, AlreadyRunning, Runtime, runtime};
pub use thread::{ThreadState, with_current, with_current_inline};

pub use barrier::{Barrier, BarrierWaitResult};
pub use condvar::{Condvar, WaitTimeoutResult};
pub use mutex::{Mutex, MutexGuard};
pub use queue::WorkQueue;
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use seqlock::SeqLock;
pub use spawn::{Builder, JoinHandle, Scope, ScopedJoinHandle, scope, spawn};

/// Regions whose critical-path shares and nets every location keeps and
/// every piggyback carries (R7): `K` of the kernel.
pub const SELECTED: usize = 8;

/// Region-stack depth kept per thread; deeper frames are counted (R12).
pub const DEPTH: usize = 64;

/// Region records per thread (one per region and call site, R12): 2,048,
/// so that a C program of a thousand or two functions compiled with
/// `-finstrument-functions` is profiled whole (512 lost 11 % of the
/// exits of Lua's test suite); 146 KiB of tables a thread.
pub const REGIONS: usize = 2048;

/// Communication records per thread (one per call site and peer, R12).
pub const COMMS: usize = 256;

/// Loop records per thread (R12).
pub const LOOPS: usize = 16;

/// A thread's kernel.
pub type Kernel = heisen_core::Location<SELECTED, DEPTH>;

/// The record a release carries (R3).
pub type Record = heisen_core::Piggyback<SELECTED>;

/// A release's record kept lazily where it waits for its merge (a lock's
/// hand-off slot): materialised only by a reader that merges another
/// thread's release (`heisen_core::Pending`).
pub type PendingRecord = heisen_core::Pending<SELECTED>;

/// A thread's bounded statistics (R12).
pub type Stats = heisen_core::stats::Profile<REGIONS, COMMS, LOOPS>;

/// One location's report.
pub type Report = heisen_core::report::LocationReport<SELECTED, REGIONS, COMMS, LOOPS>;

/// Selects the regions whose critical-path shares and nets are kept (R7),
/// in share order, instead of `HEISEN_REGIONS`. Must come before the
/// runtime's first use (the first region, lock or thread).
pub fn select(names: &[&str]) -> Result<(), AlreadyRunning> {
    let mut config = Config::from_env();
    config.regions = Some(
        names
            .iter()
            .take(SELECTED)
            .map(|n| (*n).to_owned())
            .collect(),
    );
    runtime::init_with(config).map(|_| ())
}

/// Writes the report now, ending the calling thread's location; later
/// events are not measured. Returns the report's path, `None` when the
/// runtime is disabled or the report was written already, or what went
/// wrong. Without this call the report is written at exit. A call while
/// another thread is writing the report returns once it is written (at
/// most a minute: [`exit::WAIT_WRITE`]).
pub fn finish() -> Option<Result<std::path::PathBuf, String>> {
    runtime().finish()
}
