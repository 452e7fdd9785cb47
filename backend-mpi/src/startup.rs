//! Start-up at `MPI_Init`: the node's one calibration (R1), and how long
//! each part of set-up took on this rank (the report's `mpi.startup`).
//!
//! Calibrating every process on its own costs each about 0.1 s of CPU
//! (the runtime's actions, then the interposer's), and on a node with
//! more ranks than cores the ranks that finished busy-poll in the next
//! collective (MPICH does) while the others still calibrate: set-up
//! stretched to seconds, and each calibration timed the scheduler as
//! much as the actions. By default (`HEISEN_MPI_CALIBRATION=node`) the
//! node's first rank (the lowest world rank of the node, `node`)
//! calibrates while the node's other ranks wait without spinning (a
//! nonblocking receive polled with sleeps in between), and every rank of
//! the node installs the same costs: the
//! actions are the same code on the same machine (R1: 000 §2, 002
//! §5.3.1 — the cost of an action where it runs). Each rank's report
//! gives the costs it charged and, in `mpi.startup.calibration`, that
//! they came from the node and from which rank.
//! `HEISEN_MPI_CALIBRATION=per-process` calibrates every process on its
//! own, as before. A rank whose runtime existed before `MPI_Init` (the C
//! API or the thread interposer started it) keeps its own calibration,
//! and a program whose `MPI_Init` is not intercepted (a Fortran binding
//! heisen does not define) calibrates each process on first use.

use core::ffi::c_int;
use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use heisen_shmem::clock::monotonic_ns;
use heisen_shmem::runtime::{Calibrated, existing};

use crate::node::Group;
use crate::quiet;
use crate::setup::{Mpi, ensure, guarded};
use crate::sys::{self, MPI_Comm};

/// How the processes of a node get their calibration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The node's first rank calibrates; the others install its costs.
    Node,
    /// Every process calibrates on its own.
    PerProcess,
}

impl Mode {
    /// The mode `HEISEN_MPI_CALIBRATION` asks for, and a problem to report
    /// when it names none.
    pub fn from_value(value: Option<&str>) -> (Mode, Option<String>) {
        match value.map(str::trim) {
            None | Some("" | "node") => (Mode::Node, None),
            Some("per-process") => (Mode::PerProcess, None),
            Some(other) => (
                Mode::Node,
                Some(format!(
                    "HEISEN_MPI_CALIBRATION={other} is neither `node` nor `per-process`; using node"
                )),
            ),
        }
    }
}

/// Where this rank's calibrated costs came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Calibrated here; why not shared (`None` for the node's first rank,
    /// which calibrated for its node).
    Own {
        /// Why this rank did not take the node's costs, if it was not the
        /// node's first rank.
        reason: Option<&'static str>,
        /// Ranks of this node that installed this rank's costs (itself
        /// included), 0 where none was handed on.
        shared_with: c_int,
    },
    /// Installed from the node's first rank.
    Node {
        /// That rank, in `MPI_COMM_WORLD`.
        from: c_int,
        /// Ranks on the node.
        node_ranks: c_int,
    },
}

static SOURCE: Mutex<Option<Source>> = Mutex::new(None);

/// Nanoseconds spent in each part of `MPI_Init` on this rank.
static PMPI_INIT_NS: AtomicU64 = AtomicU64::new(0);
static NODE_SPLIT_NS: AtomicU64 = AtomicU64::new(0);
static CALIBRATION_NS: AtomicU64 = AtomicU64::new(0);
static SHARE_NS: AtomicU64 = AtomicU64::new(0);
static ALIGN_NS: AtomicU64 = AtomicU64::new(0);
/// The runtime clock's reading once the start-up's parts (node, costs,
/// alignment) were done: a location that began again when `MPI_Init`
/// returned has its `start` no earlier. 0 where they did not all run.
static DONE_AT: AtomicU64 = AtomicU64::new(0);

/// Records how long `PMPI_Init` took (called by the `MPI_Init` wrappers).
pub fn note_pmpi_init(ns: u64) {
    PMPI_INIT_NS.store(ns, Ordering::Relaxed);
}

/// After `PMPI_Init`, on every rank (collective over `MPI_COMM_WORLD`):
/// calibrates (once per node or per process), sets up, and aligns the
/// clocks (R5, `align`). Nothing here fails the program's `MPI_Init`.
pub fn at_init() {
    if heisen_disabled() {
        return;
    }
    let (mode, problem) = Mode::from_value(std::env::var("HEISEN_MPI_CALIBRATION").ok().as_deref());
    // Whether the program's execution begins here (nothing measured before
    // MPI_Init): then what follows is heisen's start-up alone.
    let fresh = existing().is_none();
    let t0 = monotonic_ns();
    let node = split_node();
    let t1 = monotonic_ns();
    NODE_SPLIT_NS.store(t1 - t0, Ordering::Relaxed);
    let m = match &node {
        Some(Node { node, .. }) => calibrate_on_node(mode, node),
        None => {
            note(Source::Own {
                reason: Some("the node's communicator could not be made"),
                shared_with: 0,
            });
            timed(&CALIBRATION_NS, ensure)
        }
    };
    let Some(m) = m else {
        if let Some(node) = node {
            node.free();
        }
        return;
    };
    if let Some(p) = problem {
        m.runtime.note(p);
    }
    // every rank is here: the clock alignment's ping-pongs (R5), on the
    // duplicate and node found above (once at `MPI_Init`, not twice).
    // Without them the rank stays unaligned, and its report says so.
    if let Some(node) = node {
        timed(&ALIGN_NS, || {
            guarded(|| crate::align::at_init(m.rank, m.size, node))
        });
    }
    DONE_AT.store(m.runtime.now(), Ordering::Relaxed);
    // R1, R5: the node's first rank calibrated the node's costs (a pause
    // charged to it) while the others waited for them outside any
    // location, so their timelines began that pause later than its: every
    // first merge with it then pushed its approximated time forward by the
    // pause, and its compensated times and the critical path (into the
    // first collective) kept heisen's start-up. Every rank's program
    // begins when MPI_Init returns: its location starts there, on every
    // rank alike, with no delay (the start-up's figures stay in the
    // report's `mpi.startup`).
    // A location that recorded something before (another heisen library
    // of the process measured the program) keeps its start.
    if fresh {
        let refused = guarded(|| {
            heisen_shmem::with_current(|s| {
                if s.has_records() {
                    Ok(())
                } else {
                    s.restart_now()
                }
            })
        });
        if let Some(Some(Err(e))) = refused {
            m.runtime.note(format!(
                "this rank's location begins before MPI_Init returned: {e}"
            ));
        }
    }
}

/// Whether heisen is switched off in this process (then no rank takes
/// part in anything: the same on every rank).
fn heisen_disabled() -> bool {
    match existing() {
        Some(rt) => rt.config().disabled,
        None => heisen_shmem::Config::from_env().disabled,
    }
}

/// heisen's own communicator and this rank's node, found once at
/// `MPI_Init`.
#[derive(Clone, Debug)]
pub struct Node {
    /// A duplicate of `MPI_COMM_WORLD` (alignment keeps it until
    /// `MPI_Finalize`); the node's messages travel on it too.
    pub world: MPI_Comm,
    /// The ranks of this rank's node (`node`).
    pub node: Group,
}

impl Node {
    /// Frees the duplicate (nothing may be in flight on it).
    pub fn free(self) {
        let mut world = self.world;
        // SAFETY: heisen's own communicator, not used after this.
        unsafe { sys::PMPI_Comm_free(&mut world) };
    }
}

/// This rank's [`Node`]: one duplicate (`MPI_Comm_idup`) and one gather
/// of node keys (`node`), both completed without spinning, shared by
/// calibration and alignment.
fn split_node() -> Option<Node> {
    let (mut rank, mut size) = (0, 0);
    // SAFETY: the MPI is initialised.
    unsafe {
        sys::PMPI_Comm_rank(sys::comm_world(), &mut rank);
        sys::PMPI_Comm_size(sys::comm_world(), &mut size);
    }
    let world = quiet::dup(sys::comm_world())?;
    match Group::find(world, rank, size) {
        Some(node) => Some(Node { world, node }),
        None => {
            let mut world = world;
            // SAFETY: heisen's duplicate, unused.
            unsafe { sys::PMPI_Comm_free(&mut world) };
            None
        }
    }
}

/// The node's first rank calibrates and broadcasts its costs; the others
/// install them (module docs). Collective over `node`.
fn calibrate_on_node(mode: Mode, node: &Group) -> Option<&'static Mpi> {
    let node_ranks = node.size();
    // A rank whose runtime exists keeps its costs; one that asked for
    // its own calibration makes it before the broadcast, as it would alone.
    let keeps_own = existing().is_some() || mode == Mode::PerProcess;
    if node.rank() == 0 {
        let m = timed(&CALIBRATION_NS, ensure);
        let costs = match m {
            Some(m) if mode == Mode::Node => guarded(|| m.runtime.calibrated()),
            _ => None,
        };
        let taken = share(node, costs.as_ref());
        note(Source::Own {
            reason: None,
            shared_with: taken,
        });
        return m;
    }
    let early = if keeps_own {
        timed(&CALIBRATION_NS, ensure)
    } else {
        None
    };
    let t0 = monotonic_ns();
    let (costs, from) = receive(node);
    SHARE_NS.store(monotonic_ns() - t0, Ordering::Relaxed);
    // Tell the first rank whether its costs were taken.
    let taken = match (&costs, keeps_own) {
        (Some(costs), false) => guarded(|| crate::align::runtime_calibrated(costs)).is_some(),
        _ => false,
    };
    count_taken(node, taken);
    if keeps_own {
        note(Source::Own {
            reason: Some(if mode == Mode::PerProcess {
                "HEISEN_MPI_CALIBRATION=per-process"
            } else {
                "the runtime started before MPI_Init"
            }),
            shared_with: 0,
        });
        return early;
    }
    if taken {
        note(Source::Node { from, node_ranks });
        crate::setup::use_installed_costs();
    } else {
        note(Source::Own {
            reason: Some("the node's first rank shared no costs"),
            shared_with: 0,
        });
    }
    timed(&CALIBRATION_NS, ensure)
}

/// The first rank's side: broadcasts `costs` (nothing when `None`) with
/// its world rank, then learns how many ranks took them.
fn share(node: &Group, costs: Option<&Calibrated>) -> c_int {
    let mut body = costs
        .and_then(|c| serde_json::to_vec(c).ok())
        .unwrap_or_default();
    let mut head = [body.len() as i64, i64::from(node.first())];
    if node.bcast_i64(&mut head) && !body.is_empty() {
        node.bcast(&mut body);
    }
    count_taken(node, true)
}

/// The other ranks' side: the first rank's costs (if it shared any) and
/// its world rank.
///
/// The first rank's `[body length, world rank]` comes first; the ranks
/// that wait for it do so without spinning (`quiet`), leaving the cores to
/// the rank calibrating.
fn receive(node: &Group) -> (Option<Calibrated>, c_int) {
    let mut head = [0i64; 2];
    if !node.bcast_i64(&mut head) {
        return (None, -1);
    }
    let [len, from] = head;
    let Ok(len) = usize::try_from(len) else {
        return (None, from as c_int);
    };
    if len == 0 {
        return (None, from as c_int);
    }
    let mut body = vec![0u8; len];
    let costs = node
        .bcast(&mut body)
        .then(|| serde_json::from_slice(&body).ok())
        .flatten();
    (costs, from as c_int)
}

/// How many ranks of `node` installed the first rank's costs (`taken`
/// on this rank); the sum, on every rank.
fn count_taken(node: &Group, taken: bool) -> c_int {
    let mut all = [i64::from(taken)];
    if node.allreduce_i64(&mut all, |a, b| a + b) {
        all[0] as c_int
    } else {
        0
    }
}

fn note(source: Source) {
    *SOURCE.lock().unwrap_or_else(|p| p.into_inner()) = Some(source);
}

/// Runs `f`, adding its length to `into`.
fn timed<R>(into: &AtomicU64, f: impl FnOnce() -> R) -> R {
    let t0 = monotonic_ns();
    let r = f();
    into.fetch_add(monotonic_ns() - t0, Ordering::Relaxed);
    r
}

/// The report's `mpi.startup` object: where the costs came from and how
/// long each part of `MPI_Init` took on this rank, ns.
pub fn report_json() -> serde_json::Value {
    let calibration = match SOURCE.lock().unwrap_or_else(|p| p.into_inner()).clone() {
        Some(Source::Node { from, node_ranks }) => serde_json::json!({
            "how": "node",
            "source_rank": from,
            "node_ranks": node_ranks,
        }),
        Some(Source::Own {
            reason,
            shared_with,
        }) => serde_json::json!({
            "how": "per-process",
            "reason": reason,
            "shared_with": shared_with,
        }),
        None => serde_json::json!({
            "how": "per-process",
            "reason": "MPI_Init was not intercepted",
        }),
    };
    serde_json::json!({
        "calibration": calibration,
        "pmpi_init_ns": PMPI_INIT_NS.load(Ordering::Relaxed),
        "node_split_ns": NODE_SPLIT_NS.load(Ordering::Relaxed),
        "calibration_ns": CALIBRATION_NS.load(Ordering::Relaxed),
        "wait_for_node_ns": SHARE_NS.load(Ordering::Relaxed),
        "align_ns": ALIGN_NS.load(Ordering::Relaxed),
        "done_at": DONE_AT.load(Ordering::Relaxed),
    })
}
