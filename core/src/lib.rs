//! heisen's kernel: the rules that remove measurement overhead from a
//! parallel program's profile and compute its critical path online.
//!
//! Everything here is a pure state machine: it never reads a clock, never
//! allocates, never locks and never does I/O. Backends read clocks, move
//! piggybacks, keep one [`Location`] per thread or rank, and write reports;
//! the kernel takes the measured time as an argument (`on_<event>(t, …)`).
//! The rules are those of DESIGN.md (R1–R13); each line that implements one
//! cites it and the seed figure it comes from.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]

pub mod calibration;
pub mod exchange;
pub mod location;
pub mod merge;
pub mod path;
pub mod piggyback;
pub mod report;
pub mod sampling;
pub mod stats;
pub mod wildcard;

#[cfg(test)]
mod figures;

pub use calibration::{Calibration, Cost, TransferModel};
pub use exchange::Exchange;
pub use location::{Config, Exited, FrameKind, KernelError, Location, Merged, PathState};
pub use merge::{Dependency, Form};
pub use path::Snapshot;
pub use piggyback::{DecodeError, EncodeError, Flags, Piggyback};
