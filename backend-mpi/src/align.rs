//! Clock alignment for the timestamped form across processes (issue item
//! 3; R5, 001 §3.2): R5 compares a sender's approximated release time with
//! the receiver's clock, so the ranks' clocks must be comparable.
//!
//! - **One clock per node** (`node_clock`). Each process's own TSC clock
//!   scales the TSC by its own calibration: measured here, two processes'
//!   were 14–840 µs apart at start and drifted 80–190 ppm apart. So at
//!   `MPI_Init` the node's first rank (the lowest world rank of the
//!   node, found by `node`) calibrates the TSC against
//!   `CLOCK_MONOTONIC` over at least [`NODE_SPAN_NS`] (from its clock's
//!   start sample) and broadcasts one conversion (scale, TSC base, ns
//!   base) to the node; every rank installs the same numbers
//!   (`tsc_node`), so raw `rdtsc` values convert identically in every
//!   process of the node: no offset, no drift within a node. The switch
//!   never sends a clock back: every rank measures how far its clock is
//!   ahead of the conversion, the node takes the largest, and the
//!   conversion is offset by it (plus [`SWITCH_MARGIN_NS`]) before anyone
//!   installs it; a rank whose clock was behind jumps forward by the
//!   difference (reported as `jump_ns`). Where a rank cannot share the
//!   TSC (not invariant, the kernel's clock source is not `tsc`, or
//!   `HEISEN_CLOCK` chose another clock), no rank of its node switches.
//!   `HEISEN_CLOCK=monotonic` keeps `CLOCK_MONOTONIC`, which a node's
//!   processes share too (about 16 ns more per read); `HEISEN_CLOCK=tsc`
//!   keeps each process's own TSC clock, aligned by offsets as if each
//!   rank were on a node of its own.
//! - At `MPI_Init`, every rank measures its clock's offset from rank 0's
//!   with a few ping-pongs to its parent in a binomial tree (the sample
//!   with the shortest round trip wins, as OTF2 tools do; half the round
//!   trips along the path to rank 0 bound the error). When the
//!   ranks do not share one clock (several nodes, or per-process TSC
//!   clocks), records are converted to rank 0's time base when sent and
//!   back to the receiver's when received ([`to_common`], [`to_local`]);
//!   ranks of one node with a node clock take their node leader's offset,
//!   so they stay one clock. On one node with a shared clock the offset is
//!   only measured and reported.
//! - At `MPI_Finalize` the offsets are measured again: the change is the
//!   drift over the run, which only ranks on different nodes (or with
//!   per-process clocks) can have. The report's `mpi.clock` object gives,
//!   per rank, both offsets, the drift rate, and the residual alignment
//!   error (`|drift over the run| + half the shortest round trip`): the
//!   error bound every timestamped merge between ranks carries (R5's
//!   bounds). Online merges cannot be redone at the end, so drift between
//!   nodes is reported, not retroactively removed.
//! - When the offsets cannot be measured (an MPI error), the rank falls
//!   back to the delay-only form's record handling: it reports
//!   `aligned: false` and applies no offset.
//!
//! The ping-pongs run on a private duplicate of `MPI_COMM_WORLD` (so no
//! program message can match heisen's) along a binomial tree: each rank
//! measures its offset to its parent and adds the parent's offset to rank
//! 0, so the set-up takes O(log P) steps of [`ROUNDS`] round trips (pairs
//! of one step at once) and no rank takes part in more than ⌈log2 P⌉+1
//! exchanges.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Mutex;

use heisen_core::piggyback::Flags;
use heisen_shmem::clock::{ClockKind, Conversion, Sample};
use heisen_shmem::runtime::Runtime;
use heisen_shmem::{Config, Record};

use crate::node::Group;
use crate::quiet;
use crate::sys::{self, MPI_Comm};

/// The process runtime, created with the process's own TSC clock where
/// the node can share one TSC conversion (installed at `MPI_Init`, see
/// above; the same read, so the calibrated costs stay right), with
/// `CLOCK_MONOTONIC` otherwise, unless `HEISEN_CLOCK` chooses. A runtime
/// made before (by heisen's C API, say) keeps its clock until `MPI_Init`.
pub fn runtime() -> &'static Runtime {
    if heisen_shmem::runtime::existing().is_none() {
        // another thread may have made it meanwhile: that one is used
        let _ = heisen_shmem::runtime::init_with(config());
    }
    heisen_shmem::runtime()
}

/// As [`runtime`], made with `costs` (the node's first rank's
/// calibration, `startup`) instead of calibrating; `None` when the runtime
/// existed already (it keeps its own costs).
pub fn runtime_calibrated(costs: &heisen_shmem::runtime::Calibrated) -> Option<&'static Runtime> {
    if heisen_shmem::runtime::existing().is_some() {
        return None;
    }
    heisen_shmem::runtime::init_calibrated(config(), Some(costs)).ok()
}

/// The configuration the environment gives, with the node's TSC clock by
/// default where the node can share it.
fn config() -> Config {
    let mut config = Config::from_env();
    if config.clock.is_none() {
        config.clock = Some(if heisen_shmem::clock::tsc_shareable() {
            ClockKind::NodeTsc
        } else {
            ClockKind::Monotonic
        });
    }
    config
}

/// Ping-pongs per rank at each measurement where offsets are applied.
pub const ROUNDS: c_int = 12;

/// Ping-pongs per rank where every rank reads one clock (one node, with
/// the node's TSC conversion or `CLOCK_MONOTONIC`): the offsets are then a
/// check, not applied, and on ranks oversubscribing their cores each round
/// trip may wait for a time slice (MPICH's `comm/ic2`, 33 ranks on 2
/// cores, spent seconds in 12 of them per pair).
pub const CHECK_ROUNDS: c_int = 2;

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
    /// Every rank reads one clock by construction (one node, and the node's
    /// TSC conversion or `CLOCK_MONOTONIC`): the measured offsets are a
    /// check, not an error.
    pub one_clock: bool,
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
    /// Ranks this rank exchanged ping-pongs with at each measurement (its
    /// parent and children in the tree): at most ⌈log2 P⌉ + 1.
    pub partners: c_int,
    /// Ping-pongs per partner ([`ROUNDS`], or [`CHECK_ROUNDS`] where every
    /// rank reads one clock).
    pub rounds: c_int,
}

impl Clock {
    /// Drift of this rank's clock against rank 0's, parts per million.
    pub fn drift_ppm(&self) -> Option<f64> {
        let (end, t) = (self.offset_final?, self.at_final?);
        let span = t.checked_sub(self.at_init).filter(|&s| s > 0)?;
        Some((end - self.offset_init) as f64 * 1e6 / span as f64)
    }

    /// The residual alignment error: how far apart two ranks' aligned
    /// clocks may be at any time of the run (R5's bounds widen by it): 0
    /// where every rank reads one clock (the same conversion of the same,
    /// kernel-synchronised TSC, or the kernel's `CLOCK_MONOTONIC`), whose
    /// measured offsets are then only the ping-pong's noise (under load
    /// its round trips reach milliseconds).
    pub fn error_ns(&self) -> u64 {
        if self.one_clock {
            return 0;
        }
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

/// What alignment measured, heisen's communicator, and the node whose
/// leader's offsets this rank takes (ranks of one node clock on several
/// nodes).
static STATE: Mutex<Option<(Clock, MPI_Comm, Option<Group>)>> = Mutex::new(None);

fn now() -> u64 {
    heisen_shmem::runtime().now()
}

/// The rank that measures `rank` in the binomial tree of `measure`
/// (rank minus its highest power of two), and the step at which it does.
pub fn tree_parent(rank: c_int) -> Option<(c_int, c_int)> {
    (rank > 0).then(|| {
        let step = 1 << (c_int::BITS - 1 - rank.leading_zeros());
        (rank - step, step)
    })
}

/// The ranks that `rank` measures, in order: `rank + step` for every power
/// of two `step` above `rank` (binomial tree, as MPICH's own bcast).
pub fn tree_children(rank: c_int, size: c_int) -> impl Iterator<Item = c_int> {
    let first = tree_parent(rank).map_or(1, |(_, step)| step << 1);
    core::iter::successors(Some(first), |&s| s.checked_mul(2))
        .take_while(move |&step| rank + step < size && step > rank)
        .map(move |step| rank + step)
}

/// This rank's offset to rank 0 (rank 0's clock minus this one's) and the
/// round trips it rests on; `None` on an MPI error.
///
/// Measured along a binomial tree (O(log P) steps, each rank in at most
/// ⌈log2 P⌉ exchanges; pairs of one step run at once): each rank
/// measures its offset to its parent with `rounds` ping-pongs (the
/// shortest round trip wins), then its parent, which knows its own offset
/// to rank 0 already, sends it, and the two add up. The round trip
/// reported is the sum of the shortest ones along the path to rank 0, so
/// half of it still bounds the error. (Rank 0 pinging every rank in turn
/// was O(P) sequential round trips: with 33 ranks busy-polling on 2 cores
/// each hand-over waited for a time slice, and `MPI_Init` took tens of
/// seconds.)
fn measure(comm: MPI_Comm, rank: c_int, size: c_int, rounds: c_int) -> Option<(i64, u64)> {
    const TAG: c_int = 1;
    // SAFETY: reading a constant handle.
    let word = unsafe { sys::RSMPI_UINT64_T };
    let ok = |rc: c_int| (rc == sys::success()).then_some(());
    let mut mine: (i64, u64) = (0, 0);
    if let Some((parent, _)) = tree_parent(rank) {
        let mut best: Option<(i64, u64)> = None;
        for _ in 0..rounds {
            let t1 = now();
            let mut t0 = 0u64;
            // SAFETY: one u64 each way on heisen's private communicator.
            unsafe {
                ok(quiet::send(
                    (&raw const t1).cast::<c_void>(),
                    1,
                    word,
                    parent,
                    TAG,
                    comm,
                ))?;
                ok(quiet::recv(
                    (&raw mut t0).cast::<c_void>(),
                    1,
                    word,
                    parent,
                    TAG,
                    comm,
                ))?;
            }
            let t2 = now();
            let rtt = t2.saturating_sub(t1);
            // the parent read t0 halfway through the round trip (symmetric links)
            let offset = t0 as i64 - (t1 / 2 + t2 / 2 + (t1 % 2 + t2 % 2) / 2) as i64;
            if best.is_none_or(|(_, r)| rtt < r) {
                best = Some((offset, rtt));
            }
        }
        let (offset, rtt) = best?;
        let mut path = [0u64; 2];
        // SAFETY: the parent's offset to rank 0 and its path's round trips.
        unsafe {
            ok(quiet::recv(
                path.as_mut_ptr().cast::<c_void>(),
                2,
                word,
                parent,
                TAG,
                comm,
            ))?;
        }
        mine = (offset + path[0] as i64, rtt.saturating_add(path[1]));
    }
    for child in tree_children(rank, size) {
        for _ in 0..rounds {
            let mut ping = 0u64;
            // SAFETY: as above.
            unsafe {
                ok(quiet::recv(
                    (&raw mut ping).cast::<c_void>(),
                    1,
                    word,
                    child,
                    TAG,
                    comm,
                ))?;
                let t0 = now();
                ok(quiet::send(
                    (&raw const t0).cast::<c_void>(),
                    1,
                    word,
                    child,
                    TAG,
                    comm,
                ))?;
            }
        }
        let path = [mine.0 as u64, mine.1];
        // SAFETY: as above.
        unsafe {
            ok(quiet::send(
                path.as_ptr().cast::<c_void>(),
                2,
                word,
                child,
                TAG,
                comm,
            ))?;
        }
    }
    Some(mine)
}

/// Least span of the node leader's TSC calibration (from its clock's start
/// sample to the one at `MPI_Init`): two samples of about 20 ns
/// uncertainty each give the scale within about 2 ppm.
pub const NODE_SPAN_NS: u64 = 20_000_000;

/// Added to the node's largest clock gap before the switch: what a
/// process clock scaled 200 ppm differently gains in the 5 ms between
/// measuring the gap and installing the conversion.
pub const SWITCH_MARGIN_NS: u64 = 1_000;

/// What installing the node's TSC conversion did on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeClock {
    /// The conversion is installed (`tsc_node`).
    pub installed: bool,
    /// The leader's calibration span (ns).
    pub span_ns: u64,
    /// How far this rank's clock was ahead of the leader's conversion
    /// (negative: behind) when it measured.
    pub gap_ns: i64,
    /// The offset the node added to the conversion (its largest gap plus
    /// the margin, at least 0).
    pub shift_ns: u64,
    /// How far this rank's clock jumped forward at the switch.
    pub jump_ns: i64,
    /// How far the old clock was still ahead at the switch (0 or less when
    /// the margin held; each thread's clamp covers a positive excess).
    pub excess_ns: i64,
}

/// The leader's calibration: its clock's start sample and one now, at
/// least [`NODE_SPAN_NS`] apart (sleeping out the rest: every other rank
/// of the node waits in the broadcast meanwhile). `[valid, base_raw,
/// base_ns, scale, span]`.
fn leader_conversion(rt: &Runtime) -> [u64; 5] {
    let start = rt.clock().start_sample();
    let elapsed = heisen_shmem::clock::monotonic_ns().saturating_sub(start.ns);
    if elapsed < NODE_SPAN_NS {
        std::thread::sleep(core::time::Duration::from_nanos(NODE_SPAN_NS - elapsed));
    }
    let now = Sample::take(64);
    match Conversion::through(start, now) {
        Some(c) => [1, c.base_raw, c.base_ns, c.scale, now.ns - start.ns],
        None => [0; 5],
    }
}

/// Installs one TSC conversion on every rank of the node (`node`, this
/// rank's index `node_rank` in it); see the module's first point. `None`
/// where the node keeps its clocks (a rank cannot share the TSC, or an MPI
/// error); collective over `node` either way.
fn node_clock(node: &Group) -> Option<NodeClock> {
    let rt = heisen_shmem::runtime();
    let clock = rt.clock();
    let wanted = matches!(rt.config().clock, None | Some(ClockKind::NodeTsc));
    let mut all = [i64::from(wanted && clock.shareable())];
    if !node.allreduce_i64(&mut all, i64::min) || all[0] == 0 {
        return None;
    }
    let mut numbers = if node.rank() == 0 {
        leader_conversion(rt).map(|n| n as i64)
    } else {
        [0; 5]
    };
    if !node.bcast_i64(&mut numbers) {
        return None;
    }
    let [valid, base_raw, base_ns, scale, span_ns] = numbers.map(|n| n as u64);
    if valid == 0 {
        return None;
    }
    let mut conversion = Conversion {
        base_raw,
        base_ns,
        scale,
    };
    let gap = clock.gap(&conversion);
    let mut largest = [gap];
    if !node.allreduce_i64(&mut largest, i64::max) {
        return None;
    }
    let shift = largest[0].saturating_add(SWITCH_MARGIN_NS as i64).max(0) as u64;
    conversion.base_ns += shift;
    let excess = clock.switch_to(conversion)?;
    Some(NodeClock {
        installed: true,
        span_ns,
        gap_ns: gap,
        shift_ns: shift,
        jump_ns: shift as i64 - gap,
        excess_ns: excess,
    })
}

static NODE_CLOCK: Mutex<Option<NodeClock>> = Mutex::new(None);

/// At `MPI_Init` (every rank, collectively, on the communicators
/// `startup` made): installs the node's clock and measures the offsets.
/// Every call completes without spinning (`quiet`). Errors leave the rank
/// unaligned, never failing the program's `MPI_Init`.
pub fn at_init(rank: c_int, size: c_int, made: crate::startup::Node) {
    let crate::startup::Node { world: comm, node } = &made;
    let (comm, node_ranks) = (*comm, node.size());
    // one TSC conversion for the node before anything is measured with it
    let installed = node_clock(node);
    *NODE_CLOCK.lock().unwrap_or_else(|p| p.into_inner()) = installed;
    let node_shared = installed.is_some();
    // every rank must make the same number of round trips: the fewer
    // only where all read one clock. One allreduce (minima) gives both the
    // smallest node, hence whether all ranks share one, and whether every
    // rank's clock is one a node shares.
    let kind = heisen_shmem::runtime().clock().kind();
    let mine = [
        node_ranks,
        c_int::from(matches!(kind, ClockKind::Monotonic | ClockKind::NodeTsc)),
    ];
    let mut least: [c_int; 2] = [0; 2];
    // SAFETY: two ints each, on heisen's communicator.
    let rc = unsafe {
        quiet::allreduce(
            mine.as_ptr().cast::<c_void>(),
            least.as_mut_ptr().cast::<c_void>(),
            2,
            sys::RSMPI_INT32_T,
            sys::RSMPI_MIN,
            comm,
        )
    };
    if rc != sys::success() {
        made.free();
        return;
    }
    let one_node = least[0] == size;
    let shared = one_node && least[1] != 0;
    let rounds = if shared { CHECK_ROUNDS } else { ROUNDS };
    let at_init = now();
    let mut measured = measure(comm, rank, size, rounds);
    // ranks of one node keep one clock: all take their leader's offset,
    // at `MPI_Init` and at `MPI_Finalize`
    let leaders = (node_shared && !one_node).then(|| node.clone());
    if let Some(node) = &leaders {
        measured = node_leaders(node, measured);
    }
    let mut clock = Clock {
        aligned: measured.is_some(),
        one_node,
        node_ranks,
        at_init,
        partners: tree_children(rank, size).count() as c_int + c_int::from(rank > 0),
        rounds,
        ..Clock::default()
    };
    if let Some((offset, rtt)) = measured {
        clock.offset_init = offset;
        clock.rtt_init = rtt;
        clock.one_clock = shared;
        if !shared {
            APPLY.store(true, Ordering::Relaxed);
            APPLIED.store(offset, Ordering::Relaxed);
        }
    }
    *STATE.lock().unwrap_or_else(|p| p.into_inner()) = Some((clock, comm, leaders));
}

/// The node leader's measured offset and round trip, for every rank of
/// its node (`None` on every rank where the leader's measurement failed).
fn node_leaders(node: &Group, mine: Option<(i64, u64)>) -> Option<(i64, u64)> {
    let mut numbers: [i64; 3] = match mine {
        Some((offset, rtt)) => [1, offset, rtt as i64],
        None => [0; 3],
    };
    (node.bcast_i64(&mut numbers) && numbers[0] == 1).then(|| (numbers[1], numbers[2] as u64))
}

/// At `MPI_Finalize` (every rank, collectively): measures the offsets
/// again (the drift) and frees heisen's communicator.
pub fn at_finalize(rank: c_int, size: c_int) {
    let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let Some((clock, comm, leaders)) = state.as_mut() else {
        return;
    };
    if clock.aligned && clock.at_final.is_none() {
        clock.at_final = Some(now());
        let mut measured = measure(*comm, rank, size, clock.rounds);
        if let Some(node) = leaders.take() {
            measured = node_leaders(&node, measured);
        }
        if let Some((offset, rtt)) = measured {
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
        .map(|(c, ..)| *c)
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
            "one_clock": c.one_clock,
            "offset_applied": APPLY.load(Ordering::Relaxed),
            "offset_init_ns": c.offset_init,
            "rtt_init_ns": c.rtt_init,
            "offset_final_ns": c.offset_final,
            "rtt_final_ns": c.rtt_final,
            "partners": c.partners,
            "rounds": c.rounds,
            "drift_ppm": c.drift_ppm(),
            "error_ns": c.error_ns(),
            "node_clock": node_clock_json(),
        }),
    }
}

/// The report's `node_clock` object: what installing the node's TSC
/// conversion did on this rank (`installed: false` where it did not).
fn node_clock_json() -> serde_json::Value {
    match *NODE_CLOCK.lock().unwrap_or_else(|p| p.into_inner()) {
        None => serde_json::json!({"installed": false}),
        Some(n) => serde_json::json!({
            "installed": n.installed,
            "span_ns": n.span_ns,
            "gap_ns": n.gap_ns,
            "shift_ns": n.shift_ns,
            "jump_ns": n.jump_ns,
            "excess_ns": n.excess_ns,
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

#[cfg(test)]
mod tests {
    use super::{tree_children, tree_parent};

    /// Every rank but 0 has one parent, which lists it among its children
    /// and is measured before it; nobody has more than ⌈log2 P⌉ + 1
    /// partners, and rank 0's path is at most ⌈log2 P⌉ deep.
    #[test]
    fn the_tree_reaches_every_rank_in_log_steps() {
        for size in 1..=70 {
            let log = (size as u32).next_power_of_two().trailing_zeros() as usize;
            let mut parent_of = vec![None; size as usize];
            for r in 0..size {
                let children: Vec<_> = tree_children(r, size).collect();
                let partners = children.len() + usize::from(r > 0);
                assert!(partners <= log + 1, "size {size} rank {r}: {children:?}");
                for c in children {
                    assert!(c > r && c < size);
                    assert_eq!(tree_parent(c).map(|(p, _)| p), Some(r));
                    assert!(parent_of[c as usize].replace(r).is_none());
                }
            }
            assert_eq!(tree_parent(0), None);
            for r in 1..size {
                assert!(
                    parent_of[r as usize].is_some(),
                    "size {size}: rank {r} unreached"
                );
                let (mut depth, mut at) = (0, r);
                while let Some((p, _)) = tree_parent(at) {
                    (depth, at) = (depth + 1, p);
                }
                assert!(depth <= log, "size {size} rank {r}: depth {depth}");
            }
        }
    }
}
