//! heisen's kernel: the rules that remove measurement overhead from a
//! parallel program's profile and compute its critical path online.
//!
//! Everything here is a pure state machine: it never reads a clock, never
//! allocates, never locks and never does I/O. Backends read clocks, move
//! piggybacks, keep one [`Location`] per thread or rank, and write reports;
//! the kernel takes the measured time as an argument (`on_<event>(t, …)`).
//! The rules are those of DESIGN.md (R1–R13); each line that implements one
//! cites it and the seed figure it comes from.
//!
//! | module | rules |
//! |---|---|
//! | [`location`] | R1 local overhead, R2 compensated region times, R7 critical path, R9 partial runs, R10 snapshots |
//! | [`monitor`] | R10 the live monitor's shared table: layout and seqlock |
//! | [`merge`] | R4 delay-only and R5 timestamped merges, one or many dependencies (R6 n-to-1) |
//! | [`exchange`] | R6 n-to-n collectives as one reduction |
//! | [`piggyback`] | R3 the record and its wire encoding |
//! | [`wildcard`] | R11 wildcard-receive reorderings |
//! | [`stats`], [`report`] | R12 bounded statistics and the report every backend writes |
//! | [`sampling`] | R13 effective-interval weights of timer samples |
//!
//! # One kernel, four users
//!
//! **The simulator** drives thousands of locations deterministically: it
//! owns a `Location` per simulated thread or rank and calls it with
//! simulated times, here one message with a 5 ns transfer:
//!
//! ```
//! use heisen_core::{Calibration, Config, Cost, Dependency, Location};
//! let calibration = Calibration { enter: Cost { whole: 40, inside: 10 }, ..Calibration::ZERO };
//! let mut sender = Location::<1, 16>::new(Config::new(0, [7]).calibration(calibration), 0);
//! let mut receiver = Location::<1, 16>::new(Config::new(1, [7]).calibration(calibration), 0);
//! sender.on_enter(7, 0, 100)?;            // region 7 from call site 0
//! let times = sender.on_exit(7, 250)?.expect("the frame fits");
//! assert_eq!(times.inclusive, 150 - 10); // R2: minus the enter's cost inside the region
//! let piggyback = sender.on_release(260)?; // R3
//! let merged = receiver.on_merge(20, 265, &[Dependency::message(&piggyback, 5, 0)])?;
//! assert_eq!(merged.compensated_wait, 245 - 40); // the sender's 40 ns of overhead are not waited for
//! # Ok::<(), heisen_core::KernelError>(())
//! ```
//!
//! **Thread backends** keep the piggyback of the last release of a lock
//! (or of a barrier episode, a queue item) in shared state that other
//! threads read. [`Piggyback`] is plain `Copy` data, so a seqlock can copy it
//! out whole; the acquiring thread merges it:
//!
//! ```
//! use heisen_core::{Config, Dependency, Location, Piggyback};
//! let mut holder = Location::<0, 8>::new(Config::new(0, []), 0);
//! let mut waiter = Location::<0, 8>::new(Config::new(1, []), 0);
//! let released: Piggyback<0> = holder.on_release(500)?; // unlock: store in the lock's slot
//! let copy = released;                                   // what the seqlock reader copies out
//! waiter.on_merge(100, 510, &[Dependency::immediate(&copy)])?; // acquire
//! # Ok::<(), heisen_core::KernelError>(())
//! ```
//!
//! **The MPI backend** sends the record as bytes with every message, keeps
//! the bytes of a nonblocking receive alive in a request map until `Wait`,
//! and decodes them with a clear error when a peer sent something else.
//! `K` is fixed for the run:
//!
//! ```
//! use heisen_core::{Config, DecodeError, Dependency, Location, Piggyback};
//! let mut rank = Location::<4, 32>::new(Config::new(3, [1, 2, 3, 4]), 0);
//! let mut wire = [0u8; Piggyback::<4>::ENCODED_LEN];
//! rank.on_release(1_000)?.encode(&mut wire).expect("buffer is ENCODED_LEN long");
//! // ... at MPI_Wait of the matching receive, on another rank:
//! let record = Piggyback::<4>::decode(&wire).expect("a heisen peer with K = 4");
//! assert!(matches!(Piggyback::<8>::decode(&wire), Err(DecodeError::WrongK { found: 4, expected: 8 })));
//! let mut peer = Location::<4, 32>::new(Config::new(0, [1, 2, 3, 4]), 0);
//! peer.on_merge(900, 1_200, &[Dependency::message(&record, 250, 20)])?;
//! # Ok::<(), heisen_core::KernelError>(())
//! ```
//!
//! **The FFI** hands `#[repr(C)]` records ([`Piggyback`], [`Snapshot`],
//! [`Calibration`]) across the C boundary unchanged and names regions, call
//! sites and locations by plain integers; every kernel call returns a small
//! `Copy` error ([`KernelError`]) instead of panicking, so a C caller gets
//! a result code:
//!
//! ```
//! use heisen_core::{Config, KernelError, Location};
//! let mut location = Location::<0, 8>::new(Config::new(0, []), 0);
//! location.on_enter(12, 34, 10).unwrap();
//! assert_eq!(location.on_exit(99, 20), Err(KernelError::ExitMismatch { open: 12, exited: 99 }));
//! assert_eq!(location.on_enter(1, 1, 5), Err(KernelError::TimeWentBackwards { previous: 10, now: 5 }));
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]

pub mod calibration;
pub mod exchange;
pub mod hash;
pub mod location;
pub mod merge;
pub mod monitor;
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
pub use location::{
    Config, Exited, FrameKind, KernelError, Location, Merged, PathState, RestartError,
};
pub use merge::{Dependency, Form};
pub use path::Snapshot;
pub use piggyback::{DecodeError, EncodeError, Flags, Pending, Piggyback};

/// A hash of this crate's sources (`build.rs`), in hex: a runtime that
/// shares its state between copies of its code in one process (DESIGN
/// §2) folds it into the fingerprint the copies compare, so that copies
/// built on two versions of the kernel refuse each other even where every
/// type kept its size.
pub const SOURCE_HASH: &str = env!("HEISEN_CORE_SOURCE_HASH");
