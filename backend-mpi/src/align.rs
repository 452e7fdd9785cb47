//! Clock alignment for the timestamped form across processes (issue item
//! 3; R5, 001 §3.2): R5 compares a sender's approximated release time with
//! the receiver's clock, so the ranks' clocks must be comparable.
//!
//! - Ranks on one node share one clock when they read `CLOCK_MONOTONIC`,
//!   which the interposer makes the runtime's clock unless
//!   `HEISEN_CLOCK` says otherwise ([`runtime`]). The TSC clock is not
//!   shared: each process scales the TSC by its own calibration, and
//!   measured here two processes' TSC clocks were 14–840 µs apart at
//!   start and drifted 80–190 ppm apart (2 ms over a 10 s run), against
//!   0.2 µs and 0.3 ppm for `CLOCK_MONOTONIC` (within the ping-pong's
//!   half round trip). Which ranks share a node is found with
//!   `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`.
//! - At `MPI_Init`, every rank measures its clock's offset from rank 0's
//!   with a few ping-pongs (the sample with the shortest round trip wins,
//!   as OTF2 tools do; its half round trip bounds the error). When the
//!   ranks do not share one clock (several nodes, or the TSC clock),
//!   records are converted to rank 0's time base when sent and back to
//!   the receiver's when received ([`to_common`], [`to_local`]); on one
//!   node with `CLOCK_MONOTONIC` the offset is only measured and reported.
//! - At `MPI_Finalize` the offsets are measured again: the change is the
//!   drift over the run. The report's `mpi.clock` object gives, per rank,
//!   both offsets, the drift rate, and the residual alignment error
//!   (`|drift over the run| + half the shortest round trip`): the error
//!   bound every timestamped merge between ranks carries (R5's bounds).
//!   Online merges cannot be redone at the end, so drift is reported, not
//!   retroactively removed.
//! - When the offsets cannot be measured (an MPI error), the rank falls
//!   back to the delay-only form's record handling: it reports
//!   `aligned: false` and applies no offset.
//!
//! Rank 0 pings each rank in turn on a private duplicate of
//! `MPI_COMM_WORLD` (so no program message can match heisen's), so the
//! set-up costs O(P) round trips at rank 0: about 10 µs per rank here.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Mutex;

use heisen_core::piggyback::Flags;
use heisen_shmem::clock::ClockKind;
use heisen_shmem::runtime::Runtime;
use heisen_shmem::{Config, Record};

use crate::sys::{self, MPI_Comm};

/// The process runtime, created with the `CLOCK_MONOTONIC` clock unless
/// `HEISEN_CLOCK` chooses: that clock is the one processes of a node
/// share (see above). A runtime made before (by heisen's C API, say)
/// keeps its clock, and alignment then applies the measured offsets.
pub fn runtime() -> &'static Runtime {
    if heisen_shmem::runtime::existing().is_none() {
        let mut config = Config::from_env();
        if std::env::var_os("HEISEN_CLOCK").is_none() {
            config.clock = Some(ClockKind::Monotonic);
        }
        // another thread may have made it meanwhile: that one is used
        let _ = heisen_shmem::runtime::init_with(config);
    }
    heisen_shmem::runtime()
}

/// Ping-pongs per rank at each measurement.
pub const ROUNDS: usize = 12;

/// This rank's clock offset to rank 0's, applied to records (0 on one node).
static APPLIED: AtomicI64 = AtomicI64::new(0);
static APPLY: AtomicBool = AtomicBool::new(false);

/// What alignment measured on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    /// Offsets were measured.
    pub aligned: bool,
    /// Every rank runs on this rank's node.
    pub one_node: bool,
    /// Ranks on this rank's node.
    pub node_ranks: c_int,
    /// Offset to rank 0 at `MPI_Init`: rank 0's clock minus this rank's.
    pub offset_init: i64,
    /// Shortest round trip of those samples.
    pub rtt_init: u64,
    /// Offset at `MPI_Finalize`.
    pub offset_final: Option<i64>,
    /// Shortest round trip of those samples.
    pub rtt_final: Option<u64>,
    /// Clock reads of the two measurements.
    pub at_init: u64,
    /// Clock read of the final measurement.
    pub at_final: Option<u64>,
}

impl Clock {
    /// Drift of this rank's clock against rank 0's, parts per million.
    pub fn drift_ppm(&self) -> Option<f64> {
        let (end, t) = (self.offset_final?, self.at_final?);
        let span = t.checked_sub(self.at_init).filter(|&s| s > 0)?;
        Some((end - self.offset_init) as f64 * 1e6 / span as f64)
    }

    /// The residual alignment error: how far apart two ranks' aligned
    /// clocks may be at any time of the run (R5's bounds widen by it).
    pub fn error_ns(&self) -> u64 {
        let half_rtt = self.rtt_init.max(self.rtt_final.unwrap_or(0)) / 2;
        let drift = self
            .offset_final
            .map_or(0, |end| end.abs_diff(self.offset_init));
        let unapplied = if APPLY.load(Ordering::Relaxed) {
            0
        } else {
            // a shared clock's measured offset is noise that is not removed
            self.offset_init
                .unsigned_abs()
                .max(self.offset_final.map_or(0, i64::unsigned_abs))
        };
        half_rtt + drift + unapplied
    }
}

static STATE: Mutex<Option<(Clock, MPI_Comm)>> = Mutex::new(None);

fn now() -> u64 {
    heisen_shmem::runtime().now()
}

/// `ROUNDS` ping-pongs between rank 0 and every other rank on `comm`:
/// this rank's offset to rank 0 (rank 0's clock minus this one's) and the
/// shortest round trip; `None` on an MPI error.
fn measure(comm: MPI_Comm, rank: c_int, size: c_int) -> Option<(i64, u64)> {
    const TAG: c_int = 1;
    // SAFETY: reading a constant handle.
    let byte = unsafe { sys::RSMPI_UINT64_T };
    let ok = |rc: c_int| (rc == sys::success()).then_some(());
    if rank == 0 {
        for peer in 1..size {
            for _ in 0..ROUNDS {
                let mut ping = 0u64;
                // SAFETY: one u64 each way on heisen's private communicator.
                unsafe {
                    ok(sys::PMPI_Recv(
                        (&raw mut ping).cast::<c_void>(),
                        1,
                        byte,
                        peer,
                        TAG,
                        comm,
                        sys::status_ignore(),
                    ))?;
                    let t0 = now();
                    ok(sys::PMPI_Send(
                        (&raw const t0).cast::<c_void>(),
                        1,
                        byte,
                        peer,
                        TAG,
                        comm,
                    ))?;
                }
            }
        }
        return Some((0, 0));
    }
    let mut best: Option<(i64, u64)> = None;
    for _ in 0..ROUNDS {
        let t1 = now();
        let mut t0 = 0u64;
        // SAFETY: as above.
        unsafe {
            ok(sys::PMPI_Send(
                (&raw const t1).cast::<c_void>(),
                1,
                byte,
                0,
                TAG,
                comm,
            ))?;
            ok(sys::PMPI_Recv(
                (&raw mut t0).cast::<c_void>(),
                1,
                byte,
                0,
                TAG,
                comm,
                sys::status_ignore(),
            ))?;
        }
        let t2 = now();
        let rtt = t2.saturating_sub(t1);
        // rank 0 read t0 halfway through the round trip (symmetric links)
        let offset = t0 as i64 - (t1 / 2 + t2 / 2 + (t1 % 2 + t2 % 2) / 2) as i64;
        if best.is_none_or(|(_, r)| rtt < r) {
            best = Some((offset, rtt));
        }
    }
    best
}

/// At `MPI_Init` (every rank, collectively): finds who shares a node and
/// measures the offsets. Errors leave the rank unaligned, never failing
/// the program's `MPI_Init`.
pub fn at_init(rank: c_int, size: c_int) {
    let mut comm = sys::comm_world();
    let mut node = sys::comm_world();
    let mut node_ranks: c_int = 0;
    let mut max_node: c_int = 0;
    // SAFETY: the MPI is initialised; each call writes its out-parameter.
    let ready = unsafe {
        sys::PMPI_Comm_dup(sys::comm_world(), &mut comm) == sys::success()
            && sys::PMPI_Comm_split_type(
                comm,
                sys::RSMPI_COMM_TYPE_SHARED,
                rank,
                sys::RSMPI_INFO_NULL,
                &mut node,
            ) == sys::success()
            && sys::PMPI_Comm_size(node, &mut node_ranks) == sys::success()
            && sys::PMPI_Allreduce(
                (&raw const node_ranks).cast::<c_void>(),
                (&raw mut max_node).cast::<c_void>(),
                1,
                sys::RSMPI_INT32_T,
                sys::RSMPI_MIN,
                comm,
            ) == sys::success()
    };
    if !ready {
        return;
    }
    // SAFETY: our own communicator, no longer needed.
    unsafe { sys::PMPI_Comm_free(&mut node) };
    let one_node = max_node == size;
    let at_init = now();
    let measured = measure(comm, rank, size);
    let mut clock = Clock {
        aligned: measured.is_some(),
        one_node,
        node_ranks,
        at_init,
        ..Clock::default()
    };
    if let Some((offset, rtt)) = measured {
        clock.offset_init = offset;
        clock.rtt_init = rtt;
        let shared = one_node && heisen_shmem::runtime().clock().kind() == ClockKind::Monotonic;
        if !shared {
            APPLY.store(true, Ordering::Relaxed);
            APPLIED.store(offset, Ordering::Relaxed);
        }
    }
    *STATE.lock().unwrap_or_else(|p| p.into_inner()) = Some((clock, comm));
}

/// At `MPI_Finalize` (every rank, collectively): measures the offsets
/// again (the drift) and frees heisen's communicator.
pub fn at_finalize(rank: c_int, size: c_int) {
    let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let Some((clock, comm)) = state.as_mut() else {
        return;
    };
    if clock.aligned && clock.at_final.is_none() {
        clock.at_final = Some(now());
        if let Some((offset, rtt)) = measure(*comm, rank, size) {
            clock.offset_final = Some(offset);
            clock.rtt_final = Some(rtt);
        }
    }
    if *comm != sys::comm_world() {
        // SAFETY: heisen's own communicator; nothing is in flight on it.
        unsafe { sys::PMPI_Comm_free(comm) };
        *comm = sys::comm_world();
    }
}

/// What alignment measured, `None` before `MPI_Init` ran it.
pub fn clock() -> Option<Clock> {
    STATE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(|(c, _)| *c)
}

/// The report's `clock` object for this rank.
pub fn report_json() -> serde_json::Value {
    match clock() {
        None => serde_json::json!({"aligned": false}),
        Some(c) => serde_json::json!({
            "aligned": c.aligned,
            "one_node": c.one_node,
            "node_ranks": c.node_ranks,
            "clock": heisen_shmem::runtime().clock().kind().name(),
            "offset_applied": APPLY.load(Ordering::Relaxed),
            "offset_init_ns": c.offset_init,
            "rtt_init_ns": c.rtt_init,
            "offset_final_ns": c.offset_final,
            "rtt_final_ns": c.rtt_final,
            "drift_ppm": c.drift_ppm(),
            "error_ns": c.error_ns(),
        }),
    }
}

/// A record about to be sent, in rank 0's time base (identity where the
/// ranks share one clock).
#[inline]
pub fn to_common(record: &mut Record) {
    let offset = APPLIED.load(Ordering::Relaxed);
    if offset != 0 && record.flags.contains(Flags::TIMESTAMP) {
        record.approximated += offset;
    }
}

/// A received record, in this rank's time base (identity where the ranks
/// share one clock).
#[inline]
pub fn to_local(record: &mut Record) {
    let offset = APPLIED.load(Ordering::Relaxed);
    if offset != 0 && record.flags.contains(Flags::TIMESTAMP) {
        record.approximated -= offset;
    }
}

/// The offset applied to this rank's records (rank 0's clock minus this
/// one's; 0 where the ranks share one clock).
#[inline]
pub fn applied_offset() -> i64 {
    APPLIED.load(Ordering::Relaxed)
}
