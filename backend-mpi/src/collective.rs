//! Collectives (MPI-4.0 chapter 6) with the shapes of R6 (000 §4.3.3,
//! 001 §3.3): each blocking or nonblocking collective is a region, and
//! after the program's own operation one extra collective of a fixed-size
//! record carries what the shape needs:
//!
//! | shape | calls | extra exchange | who merges |
//! |---|---|---|---|
//! | 1-to-n | `Bcast`, `Scatter(v)` | `Bcast` of the root's entry record | every non-root, as a receive (R4/R5) |
//! | n-to-1 | `Gather(v)`, `Reduce` | `Reduce` of [`Exchange`] entries to the root | the root (R6, 001 eq. 12-13) |
//! | n-to-n | `Barrier`, `Allgather(v)`, `Alltoall(v,w)`, `Allreduce`, `Reduce_scatter(_block)` | `Allreduce` of [`Exchange`] entries | everybody |
//! | prefix | `Scan`, `Exscan` | `Scan` of [`Exchange`] entries | rank `i` merges ranks `0..=i` |
//! | neighbourhood | `Neighbor_allgather(v)`, `Neighbor_alltoall(v,w)` | `Neighbor_allgather` of [`Exchange`] entries on the same topology | each rank merges its in-neighbours' entries and its own |
//!
//! The exchange is a reduction with a merge operator over a 272-byte
//! record (O(log P), R6), made after the program's operation so that each
//! participant's measured wait is known (the delay-only form needs
//! `x_j + w_j`); its measured time is charged to the delay (R1: a cost
//! measured directly). Nonblocking collectives post the exchange as the
//! matching nonblocking collective right after the program's, in the same
//! order on every rank, and merge when the program's request completes
//! (through the request table's completion hook).
//!
//! Every call has its large-count `_c` binding (MPI-4.0 §6.1) wrapped the
//! same way. Collectives on intercommunicators are regions, not merged.
//! Persistent collectives (`*_init`) bind the same exchange to a
//! persistent request of heisen's (`collective_init`).
//! A collective that returns an error before communicating skips the
//! exchange (`communicated`).

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use heisen_core::piggyback::Flags;
use heisen_core::{Cost, Dependency, Exchange};
use heisen_shmem::calibrate::{ns, per_call};
use heisen_shmem::runtime::{ActionId, Runtime};
use heisen_shmem::thread::calibrating;
use heisen_shmem::{Record, SELECTED, with_current};

use crate::piggyback::{self, LEN, Wire};
use crate::region::{self, Named};
use crate::requests::{self, Completion, Entry, Kind};
use crate::setup::{self, guarded};
use crate::sys::{self, MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request, MPI_Status};

/// The n-to-n record of R6 for this run's K.
pub type Entries = Exchange<SELECTED>;

/// Words of an encoded [`Entries`] record.
pub const WORDS: usize = 10 + 3 * SELECTED;

/// Bytes of an encoded [`Entries`] record: what the extra exchange moves.
pub const BYTES: usize = WORDS * 8;

/// An encoded [`Entries`] record.
pub type Encoded = [u64; WORDS];

/// Encodes `e` field by field (no padding, no `bool` bytes on the wire).
pub fn encode(e: &Entries) -> Encoded {
    let mut w = [0u64; WORDS];
    w[0] = u64::from(e.flags.0);
    w[1] = u64::from(e.participants);
    w[2] = e.min_delay_plus_wait;
    w[3] = e.min_wait;
    w[4] = e.max_approximated as u64;
    w[5] = e.max_measured as u64;
    w[6] = u64::from(e.path.location);
    w[7] = u64::from(e.path.active);
    w[8] = e.path.longest as u64;
    w[9] = e.path.transfer as u64;
    for k in 0..SELECTED {
        w[10 + k] = e.path.inclusive[k] as u64;
        w[10 + SELECTED + k] = e.path.exclusive[k] as u64;
        w[10 + 2 * SELECTED + k] = e.path.net[k] as u64;
    }
    w
}

/// Decodes what [`encode`] wrote.
pub fn decode(w: &Encoded) -> Entries {
    let mut e = Entries::EMPTY;
    e.flags = Flags(w[0] as u32);
    e.participants = w[1] as u32;
    e.min_delay_plus_wait = w[2];
    e.min_wait = w[3];
    e.max_approximated = w[4] as i64;
    e.max_measured = w[5] as i64;
    e.path.location = w[6] as u32;
    e.path.active = w[7] != 0;
    e.path.longest = w[8] as i64;
    e.path.transfer = w[9] as i64;
    for k in 0..SELECTED {
        e.path.inclusive[k] = w[10 + k] as i64;
        e.path.exclusive[k] = w[10 + SELECTED + k] as i64;
        e.path.net[k] = w[10 + 2 * SELECTED + k] as i64;
    }
    e
}

/// The merge operator of the extra exchange on decoded buffers:
/// `inout[i] = input[i] ⊕ inout[i]` (R6: associative and commutative, so
/// the MPI may fold in any tree).
pub fn fold_into(input: &[Encoded], inout: &mut [Encoded]) {
    for (a, b) in input.iter().zip(inout.iter_mut()) {
        *b = encode(&decode(a).combine(&decode(b)));
    }
}

/// [`fold_into`] as an MPI user function (MPI-4.0 §6.9.5).
unsafe extern "C" fn combine_op(
    input: *mut c_void,
    inout: *mut c_void,
    len: *mut c_int,
    _datatype: *mut MPI_Datatype,
) {
    // SAFETY: the MPI passes `len` records of our contiguous type in each
    // buffer; they are arrays of `WORDS` u64s, read unaligned (the MPI
    // promises no alignment for its temporary buffers).
    unsafe {
        let n = usize::try_from(*len).unwrap_or(0);
        let a = input.cast::<Encoded>();
        let b = inout.cast::<Encoded>();
        for i in 0..n {
            let mut out = [b.add(i).read_unaligned()];
            fold_into(&[a.add(i).read_unaligned()], &mut out);
            b.add(i).write_unaligned(out[0]);
        }
    }
}

/// The datatype and operator of the extra exchange, made once.
#[derive(Clone, Copy, Debug)]
struct Wire2 {
    datatype: MPI_Datatype,
    op: MPI_Op,
}

// SAFETY: MPI handles are plain values any thread may use.
unsafe impl Send for Wire2 {}
// SAFETY: as above; never written after creation.
unsafe impl Sync for Wire2 {}

static WIRE: OnceLock<Wire2> = OnceLock::new();
static FREED: AtomicBool = AtomicBool::new(false);

fn wire() -> Wire2 {
    *WIRE.get_or_init(|| {
        let mut datatype = sys::byte();
        // SAFETY: reading a constant handle (overwritten below).
        let mut op: MPI_Op = unsafe { sys::RSMPI_SUM };
        let mut key: c_int = 0;
        // SAFETY: the MPI is initialised (we are called from a wrapper
        // after `setup::ensure`); the calls write their out-parameters.
        unsafe {
            sys::PMPI_Type_contiguous(BYTES as c_int, sys::byte(), &mut datatype);
            sys::PMPI_Type_commit(&mut datatype);
            sys::PMPI_Op_create(Some(combine_op), 1, &mut op);
            // MPI-4.0 §11.2.2: `MPI_Finalize` deletes MPI_COMM_SELF's
            // attributes first, whoever calls it. Fortran `use mpi_f08`
            // calls `PMPI_Finalize` directly, past heisen's wrapper; the
            // delete callback frees our handles there too (MPICH reports
            // leaked handles on stderr, and heisen must print nothing).
            if sys::PMPI_Comm_create_keyval(
                None,
                Some(free_at_finalize),
                &mut key,
                core::ptr::null_mut(),
            ) == sys::success()
            {
                sys::PMPI_Comm_set_attr(sys::RSMPI_COMM_SELF, key, core::ptr::null_mut());
            }
        }
        Wire2 { datatype, op }
    })
}

/// Frees the exchange's datatype and operator once.
fn free_wire() {
    if let Some(mut w) = WIRE.get().copied()
        && !FREED.swap(true, Ordering::AcqRel)
    {
        // SAFETY: our own handles; no exchange is in flight any more.
        unsafe {
            sys::PMPI_Type_free(&mut w.datatype);
            sys::PMPI_Op_free(&mut w.op);
        }
    }
}

unsafe extern "C" fn free_at_finalize(
    _comm: MPI_Comm,
    mut key: c_int,
    _value: *mut c_void,
    _extra: *mut c_void,
) -> c_int {
    let _ = guarded(|| {
        requests::drop_persistent();
        complete_orphans();
        free_wire();
    });
    // SAFETY: our own key, no longer used.
    unsafe { sys::PMPI_Comm_free_keyval(&mut key) };
    sys::success()
}

// ----- actions and figures ---------------------------------------------------

/// heisen's own part of one collective (R1): the entry record, its
/// encoding, the fold and the merge; the extra exchange is measured.
pub fn action() -> ActionId {
    static ACTION: OnceLock<ActionId> = OnceLock::new();
    *ACTION.get_or_init(|| heisen_shmem::runtime().action("mpi_collective"))
}

/// Calibrates [`action`] back to back on a scratch state (R1). Called at
/// set-up, before the program's parallel work.
pub fn calibrate(rt: &'static Runtime) {
    let a = action();
    let cost = calibrating(rt, || {
        per_call(rt, || {
            if let Some((begin, entry)) = with_current(|s| s.arrive(a)) {
                let mine = encode(&Entries::entry(&entry, 0));
                let other = core::hint::black_box(mine);
                let folded = decode(&mine).combine(&decode(&other));
                let back = decode(&core::hint::black_box(encode(&folded)));
                with_current(|s| core::hint::black_box(s.collective(begin, begin, &back, a)));
            }
        })
    });
    let whole = ns(cost);
    rt.set_cost(
        a,
        Cost {
            whole,
            inside: whole,
        },
    );
}

static EXCHANGES: AtomicU64 = AtomicU64::new(0);
static EXCHANGE_NS: AtomicU64 = AtomicU64::new(0);
static MERGES: AtomicU64 = AtomicU64::new(0);
pub(crate) static UNMERGED: AtomicU64 = AtomicU64::new(0);

/// What the collectives did on this rank, for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Figures {
    /// Extra exchanges made (one per merged collective).
    pub exchanges: u64,
    /// Their total measured time, ns (charged to the delay, R1).
    pub exchange_ns: u64,
    /// Merges the collectives made on this rank's locations.
    pub merges: u64,
    /// Collectives run as regions only (intercommunicators, errors).
    pub unmerged: u64,
    /// Bytes of one exchanged record.
    pub record_bytes: usize,
}

/// This rank's figures so far.
pub fn figures() -> Figures {
    Figures {
        exchanges: EXCHANGES.load(Ordering::Relaxed),
        exchange_ns: EXCHANGE_NS.load(Ordering::Relaxed),
        merges: MERGES.load(Ordering::Relaxed),
        unmerged: UNMERGED.load(Ordering::Relaxed),
        record_bytes: BYTES,
    }
}

/// The report's `collectives` object.
pub fn report_json() -> serde_json::Value {
    let f = figures();
    serde_json::json!({
        "exchanges": f.exchanges,
        "exchange_ns": f.exchange_ns,
        "exchange_mean_ns": f.exchange_ns.checked_div(f.exchanges).unwrap_or(0),
        "merges": f.merges,
        "unmerged": f.unmerged,
        "record_bytes": f.record_bytes,
        "persistent": crate::collective_init::report_json(),
    })
}

// ----- the shapes ------------------------------------------------------------

/// How a collective's participants depend on each other (R6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Every non-root merges the root's record (bcast, scatter).
    OneToN {
        /// The root's rank in the communicator.
        root: c_int,
    },
    /// The root merges every participant's record (gather, reduce).
    NToOne {
        /// The root's rank in the communicator.
        root: c_int,
    },
    /// Every participant merges all (barrier, allreduce, allgather, alltoall).
    NToN,
    /// Rank `i` merges ranks `0..=i` (scan, exscan).
    Prefix,
    /// Each rank merges the ranks it receives from on the communicator's
    /// process topology, its in-neighbours (MPI-4.0 §8.6).
    Neighbours,
}

/// A participant's state at its entry: the clock read and the record it
/// contributes, `None` where the thread is not measured.
pub(crate) type Arrival = Option<(u64, Record)>;

pub(crate) fn arrive() -> Arrival {
    guarded(|| with_current(|s| s.arrive(action()))).flatten()
}

pub(crate) fn is_inter(comm: MPI_Comm) -> bool {
    let mut flag: c_int = 0;
    // SAFETY: `comm` was just used successfully by the program's call.
    unsafe { sys::PMPI_Comm_test_inter(comm, &mut flag) };
    flag != 0
}

/// How many ranks `comm`'s process topology has this rank receive from
/// in a neighbourhood collective (MPI-4.0 §8.6): `2 × ndims` on a
/// Cartesian topology (`MPI_PROC_NULL` ones included), the neighbours on
/// a graph, the sources on a distributed graph; 0 without a topology.
fn in_degree(comm: MPI_Comm) -> usize {
    let mut kind: c_int = sys::undefined();
    let mut n: c_int = 0;
    // SAFETY: `comm` is the program's, which its neighbourhood collective
    // just communicated on (`communicated`), so it is valid; without a
    // topology `kind` stays `MPI_UNDEFINED`; the calls write their
    // out-parameters only.
    unsafe {
        sys::PMPI_Topo_test(comm, &mut kind);
        if kind == sys::RSMPI_CART {
            sys::PMPI_Cartdim_get(comm, &mut n);
            n *= 2;
        } else if kind == sys::RSMPI_GRAPH {
            sys::PMPI_Graph_neighbors_count(comm, my_rank(comm), &mut n);
        } else if kind == sys::RSMPI_DIST_GRAPH {
            let (mut outdegree, mut weighted) = (0, 0);
            sys::PMPI_Dist_graph_neighbors_count(comm, &mut n, &mut outdegree, &mut weighted);
        }
    }
    usize::try_from(n).unwrap_or(0)
}

pub(crate) fn my_rank(comm: MPI_Comm) -> c_int {
    let mut rank: c_int = 0;
    // SAFETY: as above.
    unsafe { sys::PMPI_Comm_rank(comm, &mut rank) };
    rank
}

/// How an extra exchange is made: at once, posted (nonblocking), or bound
/// to a persistent request started with the program's (`collective_init`).
pub(crate) enum Post<'a> {
    Blocking,
    Nonblocking(&'a mut MPI_Request),
    Persistent(&'a mut MPI_Request),
}

/// The buffers of one extra exchange: what this rank sends and where the
/// result lands. Boxed for nonblocking and persistent exchanges, which the
/// MPI reads and writes until their completion (a persistent one's for as
/// long as its request lives: refilled in place at each start).
#[derive(Debug)]
pub(crate) struct Buffers {
    /// The root's record (1-to-n).
    record: Wire,
    /// This rank's entry (n-to-1, n-to-n, prefix).
    mine: Encoded,
    /// The fold (neighbourhood: this rank's own entry with its wait).
    folded: Encoded,
    /// The in-neighbours' entries (neighbourhood), one slot per
    /// in-neighbour; a slot of `MPI_PROC_NULL` keeps the empty entry,
    /// the identity of the fold.
    neighbours: Vec<Encoded>,
}

impl Buffers {
    pub(crate) fn new(shape: Shape, arrival: &Arrival, wait: u64) -> Buffers {
        let mut b = Buffers {
            record: *piggyback::empty(),
            mine: encode(&Entries::EMPTY),
            folded: encode(&Entries::EMPTY),
            neighbours: Vec::new(),
        };
        let mut record = arrival.map_or(Record::EMPTY, |(_, r)| r);
        match shape {
            // `pack` converts to rank 0's time base itself
            Shape::OneToN { .. } => piggyback::pack(&record, &mut b.record),
            _ => {
                // across nodes, entries travel in rank 0's time base
                crate::align::to_common(&mut record);
                // An unmeasured participant's empty record leaves the
                // others' state alone (R3).
                if shape == Shape::Neighbours {
                    // The in-neighbours do not all leave together, so R6's
                    // delay-only fold of waits does not hold: each entry is
                    // a message (wait 0), and this rank's own entry, kept
                    // here, carries its wait: R4's x' = min(x + w, min x_j).
                    b.mine = encode(&Entries::entry(&record, 0));
                    b.folded = encode(&Entries::entry(&record, wait));
                } else {
                    b.mine = encode(&Entries::entry(&record, wait));
                }
            }
        }
        b
    }

    /// A persistent exchange's buffers for a new start: this start's
    /// records where the old ones were, the in-neighbours' slots emptied
    /// (the exchange writes into the same memory at every start).
    pub(crate) fn refill(&mut self, shape: Shape, arrival: &Arrival) {
        let fresh = Buffers::new(shape, arrival, 0);
        self.record = fresh.record;
        self.mine = fresh.mine;
        self.folded = fresh.folded;
        self.neighbours.fill(encode(&Entries::EMPTY));
    }

    /// Runs, posts (nonblocking) or binds (persistent, `MPI_*_init`) the
    /// extra exchange on `comm`; its return code (a persistent binding
    /// that fails leaves the collective unmerged).
    ///
    /// # Safety
    /// `self` must stay where it is until the exchange completes (a
    /// persistent one's request is freed).
    pub(crate) unsafe fn exchange(
        &mut self,
        shape: Shape,
        comm: MPI_Comm,
        post: Post<'_>,
    ) -> c_int {
        let w = wire();
        if shape == Shape::Neighbours {
            self.neighbours = vec![encode(&Entries::EMPTY); in_degree(comm)];
        }
        let info = sys::info_null();
        let neighbours = self.neighbours.as_mut_ptr().cast::<c_void>();
        let mine = self.mine.as_ptr().cast::<c_void>();
        let folded = self.folded.as_mut_ptr().cast::<c_void>();
        let record = self.record.as_mut_ptr().cast::<c_void>();
        // SAFETY: the buffers are ours and sized for one record of the
        // datatype; the communicator is the program's, valid (its call
        // succeeded); every rank makes the same call in the same order.
        unsafe {
            match (shape, post) {
                (Shape::OneToN { root }, Post::Blocking) => {
                    sys::PMPI_Bcast(record, LEN as c_int, sys::byte(), root, comm)
                }
                (Shape::OneToN { root }, Post::Nonblocking(r)) => {
                    sys::PMPI_Ibcast(record, LEN as c_int, sys::byte(), root, comm, r)
                }
                (Shape::OneToN { root }, Post::Persistent(r)) => {
                    sys::PMPI_Bcast_init(record, LEN as c_int, sys::byte(), root, comm, info, r)
                }
                (Shape::NToOne { root }, Post::Blocking) => {
                    sys::PMPI_Reduce(mine, folded, 1, w.datatype, w.op, root, comm)
                }
                (Shape::NToOne { root }, Post::Nonblocking(r)) => {
                    sys::PMPI_Ireduce(mine, folded, 1, w.datatype, w.op, root, comm, r)
                }
                (Shape::NToOne { root }, Post::Persistent(r)) => {
                    sys::PMPI_Reduce_init(mine, folded, 1, w.datatype, w.op, root, comm, info, r)
                }
                (Shape::NToN, Post::Blocking) => {
                    sys::PMPI_Allreduce(mine, folded, 1, w.datatype, w.op, comm)
                }
                (Shape::NToN, Post::Nonblocking(r)) => {
                    sys::PMPI_Iallreduce(mine, folded, 1, w.datatype, w.op, comm, r)
                }
                (Shape::NToN, Post::Persistent(r)) => {
                    sys::PMPI_Allreduce_init(mine, folded, 1, w.datatype, w.op, comm, info, r)
                }
                (Shape::Prefix, Post::Blocking) => {
                    sys::PMPI_Scan(mine, folded, 1, w.datatype, w.op, comm)
                }
                (Shape::Prefix, Post::Nonblocking(r)) => {
                    sys::PMPI_Iscan(mine, folded, 1, w.datatype, w.op, comm, r)
                }
                (Shape::Prefix, Post::Persistent(r)) => {
                    sys::PMPI_Scan_init(mine, folded, 1, w.datatype, w.op, comm, info, r)
                }
                (Shape::Neighbours, Post::Blocking) => sys::PMPI_Neighbor_allgather(
                    mine, 1, w.datatype, neighbours, 1, w.datatype, comm,
                ),
                (Shape::Neighbours, Post::Nonblocking(r)) => sys::PMPI_Ineighbor_allgather(
                    mine, 1, w.datatype, neighbours, 1, w.datatype, comm, r,
                ),
                (Shape::Neighbours, Post::Persistent(r)) => sys::PMPI_Neighbor_allgather_init(
                    mine, 1, w.datatype, neighbours, 1, w.datatype, comm, info, r,
                ),
            }
        }
    }

    /// Merges what the exchange brought (R4/R5/R6), for a participant
    /// that entered at `begin` and left at `end`; `extra` is the measured
    /// time of the exchange itself, charged to the delay (R1).
    pub(crate) fn merge(&self, shape: Shape, me: c_int, begin: u64, end: u64, extra: u64) {
        EXCHANGES.fetch_add(1, Ordering::Relaxed);
        EXCHANGE_NS.fetch_add(extra, Ordering::Relaxed);
        let a = action();
        guarded(|| {
            with_current(|s| {
                let merged = match shape {
                    Shape::OneToN { root } if root != me => {
                        // 000 §4.3.3: each receiver merges the root's record
                        let record = piggyback::unpack(&self.record).unwrap_or(Record::EMPTY);
                        s.merge_at(begin, end, &[Dependency::message(&record, 0, 0)], a);
                        true
                    }
                    // the root of a 1-to-n and the leaves of an n-to-1 only
                    // contribute their records
                    Shape::OneToN { .. } => false,
                    Shape::NToOne { root } if root != me => false,
                    Shape::NToOne { .. } | Shape::NToN | Shape::Prefix | Shape::Neighbours => {
                        // 001 eq. 12-13: the common exit of all entries
                        // (a neighbourhood's: its in-neighbours' and its own)
                        let mut folded = if shape == Shape::Neighbours {
                            self.neighbours
                                .iter()
                                .fold(decode(&self.folded), |f, n| decode(n).combine(&f))
                        } else {
                            decode(&self.folded)
                        };
                        if folded.flags.contains(Flags::TIMESTAMP) {
                            // back to this rank's time base (0 on one node)
                            let offset = crate::align::applied_offset();
                            folded.max_approximated -= offset;
                            folded.max_measured -= offset;
                        }
                        s.collective(begin, end, &folded, a);
                        true
                    }
                };
                if !merged {
                    // a root that sends, a leaf that only contributes:
                    // heisen's part cost the same (R1)
                    s.overhead(heisen_shmem::runtime().cost(a).whole);
                } else {
                    MERGES.fetch_add(1, Ordering::Relaxed);
                }
                s.overhead(extra);
            })
        });
    }
}

/// Runs a blocking collective `call` on `comm` as region `region` with the
/// merge of `shape` (R6). The extra exchange is made on every rank where
/// heisen is set up, measured or not, so that every rank makes it: also
/// where the call failed while its data moved (`communicated`).
pub fn blocking(
    region: &'static Named,
    comm: MPI_Comm,
    shape: Shape,
    call: impl FnOnce() -> c_int,
) -> c_int {
    blocking_on(region, shape, call, |rc| communicated(rc).then_some(comm))
}

/// Whether a collective that returned `rc` reached its communication on
/// this rank, so that the other ranks' calls matched it: success, a
/// truncated receive (`MPI_ERR_TRUNCATE`), or `MPI_ERR_OTHER`, by which
/// MPICH tells the ranks below a failed one in its tree that the
/// collective failed. Under `MPI_ERRORS_RETURN` a collective of lengths
/// that differ between ranks fails on some ranks and succeeds on others
/// (MPICH's `errors/coll/bcastlength`: the root succeeds, the others
/// truncate); all of them must make the exchange or none, or the next
/// collective on the communicator meets heisen's. Argument errors
/// (`MPI_ERR_COUNT`, `_TYPE`, `_OP`, `_BUFFER`, `_ROOT`, `_COMM`) are
/// raised before any communication, and there is no exchange.
fn communicated(rc: c_int) -> bool {
    if rc == sys::success() {
        return true;
    }
    let mut class = 0;
    // SAFETY: writes `class` only.
    unsafe { sys::PMPI_Error_class(rc, &mut class) };
    class == sys::err_truncate() || class == sys::err_other()
}

/// [`blocking`] with the exchange on the communicator `exchange_on` names
/// from the call's return code (a communicator the call created); `None`
/// there makes the call a region only on this rank.
pub fn blocking_on(
    region: &'static Named,
    shape: Shape,
    call: impl FnOnce() -> c_int,
    exchange_on: impl FnOnce(c_int) -> Option<MPI_Comm>,
) -> c_int {
    if setup::ensure().is_none() {
        return call();
    }
    region::call(region, || {
        let arrival = arrive();
        let rc = call();
        // the program's call ends here: what `exchange_on` does (a window
        // made known to heisen) is heisen's, charged with the exchange (R1)
        let end = crate::merge::now().unwrap_or(0);
        let Some(comm) = exchange_on(rc).filter(|&c| !is_inter(c)) else {
            UNMERGED.fetch_add(1, Ordering::Relaxed);
            return rc;
        };
        let wait = arrival.map_or(0, |(b, _)| end.saturating_sub(b));
        let mut buffers = Buffers::new(shape, &arrival, wait);
        // SAFETY: `buffers` lives on this frame until the blocking
        // exchange returns.
        unsafe { buffers.exchange(shape, comm, Post::Blocking) };
        if let Some((begin, _)) = arrival {
            let after = crate::merge::now().unwrap_or(end);
            buffers.merge(shape, my_rank(comm), begin, end, after.saturating_sub(end));
        }
        rc
    })
}

/// A nonblocking collective's exchange in flight: completed and merged
/// when the program's request completes (the request table's hook).
#[derive(Debug)]
struct Pending {
    shape: Shape,
    me: c_int,
    measured: bool,
    extra: MPI_Request,
    buffers: Box<Buffers>,
}

// SAFETY: the request handle is a plain value; the buffers are owned.
unsafe impl Send for Pending {}

impl Completion for Pending {
    fn complete(&mut self, begin: u64, _status: *mut MPI_Status, cancelled: bool) {
        let end = crate::merge::now().unwrap_or(begin);
        // SAFETY: our own request, posted with the program's; every rank
        // posted it right after the program's collective, which has
        // completed here, so it completes too.
        unsafe { sys::PMPI_Wait(&mut self.extra, sys::status_ignore()) };
        if self.measured && !cancelled {
            let after = crate::merge::now().unwrap_or(end);
            self.buffers
                .merge(self.shape, self.me, begin, end, after.saturating_sub(end));
        }
    }

    fn displaced(self: Box<Self>) {
        // The exchange may still be under way on other ranks: completed
        // later, like one whose request found no room (R12 bound).
        let Pending { extra, buffers, .. } = *self;
        orphan(extra, buffers);
    }
}

/// Exchanges posted whose program request could not be tracked (the
/// request table was full): completed at later collectives (R12 bound).
static ORPHANS: Mutex<Vec<(MPI_Request, Box<Buffers>)>> = Mutex::new(Vec::new());
const ORPHANS_MAX: usize = 64;

fn orphan(extra: MPI_Request, buffers: Box<Buffers>) {
    let mut list = ORPHANS.lock().unwrap_or_else(|p| p.into_inner());
    list.retain_mut(|(r, _)| {
        let mut flag: c_int = 0;
        // SAFETY: our own live request.
        unsafe { sys::PMPI_Test(r, &mut flag, sys::status_ignore()) };
        flag == 0
    });
    if list.len() >= ORPHANS_MAX {
        let (mut r, _b) = list.remove(0);
        // SAFETY: our own live request; its buffers live until it is done.
        unsafe { sys::PMPI_Wait(&mut r, sys::status_ignore()) };
    }
    list.push((extra, buffers));
}

/// At `MPI_Finalize`: completes every orphaned exchange and frees the
/// exchange's datatype and operator (MPICH reports leaked handles on
/// stderr otherwise, and nothing may be printed by default).
pub fn at_finalize() {
    requests::drop_persistent();
    complete_orphans();
    free_wire();
}

fn complete_orphans() {
    let mut list = ORPHANS.lock().unwrap_or_else(|p| p.into_inner());
    for (r, _) in list.iter_mut() {
        // SAFETY: our own live requests.
        unsafe { sys::PMPI_Wait(r, sys::status_ignore()) };
    }
    list.clear();
}

/// What the wrappers of a nonblocking and a persistent collective share:
/// runs `call`, which writes `*request`, as region `region`; where it
/// succeeded on an intracommunicator, `file(arrival, request)` files
/// heisen's part under the program's request, and where it failed,
/// `failed(rc)` runs. `arrival`: this rank's entry taken before `call`
/// where `arrive_first` (a nonblocking collective's), else `None`.
///
/// # Safety
/// `request` is the program's request pointer, written by `call`.
pub(crate) unsafe fn with_request(
    region: &'static Named,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    arrive_first: bool,
    call: impl FnOnce() -> c_int,
    file: impl FnOnce(Arrival, MPI_Request),
    failed: impl FnOnce(c_int),
) -> c_int {
    if setup::ensure().is_none() {
        return call();
    }
    region::call(region, || {
        let arrival = if arrive_first { arrive() } else { None };
        let rc = call();
        if rc != sys::success() {
            UNMERGED.fetch_add(1, Ordering::Relaxed);
            failed(rc);
            return rc;
        }
        if request.is_null() || is_inter(comm) {
            UNMERGED.fetch_add(1, Ordering::Relaxed);
            return rc;
        }
        // SAFETY: `call` succeeded, so it wrote the request.
        file(arrival, unsafe { *request });
        rc
    })
}

/// Runs a nonblocking collective `call` that writes `*request`, then posts
/// the extra exchange and files both under the program's request.
///
/// # Safety
/// `request` is the program's request pointer, written by `call`.
pub unsafe fn nonblocking(
    region: &'static Named,
    comm: MPI_Comm,
    shape: Shape,
    request: *mut MPI_Request,
    call: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        let file = |arrival: Arrival, user| {
            let mut buffers = Box::new(Buffers::new(shape, &arrival, 0));
            let mut extra = sys::request_null();
            // SAFETY: the buffers are boxed and move into the pending entry
            // (the box's contents do not move) until the exchange completes.
            buffers.exchange(shape, comm, Post::Nonblocking(&mut extra));
            let pending = Pending {
                shape,
                me: my_rank(comm),
                measured: arrival.is_some(),
                extra,
                buffers,
            };
            let table = requests::table();
            match table.reserve() {
                Some((index, _)) => table.insert(
                    user,
                    index,
                    Entry {
                        kind: Kind::Hook(Box::new(pending)),
                        persistent: false,
                        datatype: None,
                        staged: None,
                    },
                ),
                None => orphan(pending.extra, pending.buffers),
            }
        };
        with_request(region, comm, request, true, call, file, |_| {})
    }
}

// ----- the exports -----------------------------------------------------------
//
// One generic wrapper per shape (STYLE.md, Caliper's `Wrapper.w`): each row
// names a collective's blocking, nonblocking and persistent bindings, its
// arguments, its communicator and its shape; each export names its region
// and passes the program's arguments unchanged to its `PMPI_` twin (the
// nonblocking one with the program's request, the persistent one with its
// `info` and request too: `collective_init`).

use core::ffi::c_void as V;

macro_rules! collectives {
    ($(
        $(#[$doc:meta])*
        $name:ident, $iname:ident, $pname:ident => $pmpi:ident, $ipmpi:ident, $ppmpi:ident
            ( $($arg:ident : $ty:ty),* $(,)? ) on $comm:ident as $shape:expr;
    )*) => {$(
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            static REGION: Named = Named::new(stringify!($name));
            // SAFETY: the program's arguments, passed on unchanged.
            blocking(&REGION, $comm, $shape, || unsafe { sys::$pmpi($($arg),*) })
        }

        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $iname($($arg: $ty,)* request: *mut MPI_Request) -> c_int {
            static REGION: Named = Named::new(stringify!($iname));
            // SAFETY: the program's arguments, passed on unchanged; the
            // MPI writes `request` before `nonblocking` reads it.
            unsafe { nonblocking(&REGION, $comm, $shape, request, || sys::$ipmpi($($arg,)* request)) }
        }

        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $pname(
            $($arg: $ty,)*
            info: sys::MPI_Info,
            request: *mut MPI_Request,
        ) -> c_int {
            static REGION: Named = Named::new(stringify!($pname));
            // SAFETY: the program's arguments, passed on unchanged; the
            // MPI writes `request` before `init` reads it.
            unsafe {
                crate::collective_init::init(&REGION, $comm, $shape, request, || {
                    sys::$ppmpi($($arg,)* info, request)
                })
            }
        }
    )*};
}

type Ints = *const c_int;
type Types = *const MPI_Datatype;
type Aints = *const sys::MPI_Aint;
type T = MPI_Datatype;

collectives! {
    /// `MPI_Barrier` (MPI-4.0 §6.3): n-to-n.
    /// Also `MPI_Ibarrier` (§6.12.1) and `MPI_Barrier_init` (§6.13), merged at completion.
    MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init
        => PMPI_Barrier, PMPI_Ibarrier, PMPI_Barrier_init
        (comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Bcast` (§6.4): 1-to-n.
    /// Also `MPI_Ibcast` (§6.12.2) and `MPI_Bcast_init` (§6.13), merged at completion.
    MPI_Bcast, MPI_Ibcast, MPI_Bcast_init
        => PMPI_Bcast, PMPI_Ibcast, PMPI_Bcast_init
        (buf: *mut V, count: c_int, datatype: T, root: c_int, comm: MPI_Comm)
        on comm as Shape::OneToN { root };
    /// `MPI_Gather` (§6.5): n-to-1.
    /// Also `MPI_Igather` (§6.12.3) and `MPI_Gather_init` (§6.13), merged at completion.
    MPI_Gather, MPI_Igather, MPI_Gather_init
        => PMPI_Gather, PMPI_Igather, PMPI_Gather_init
        (sb: *const V, sc: c_int, st: T, rb: *mut V, rc: c_int, rt: T, root: c_int,
        comm: MPI_Comm)
        on comm as Shape::NToOne { root };
    /// `MPI_Gatherv` (§6.5): n-to-1.
    /// Also `MPI_Igatherv` (§6.12.3) and `MPI_Gatherv_init` (§6.13), merged at completion.
    MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init
        => PMPI_Gatherv, PMPI_Igatherv, PMPI_Gatherv_init
        (sb: *const V, sc: c_int, st: T, rb: *mut V, rcs: Ints, displs: Ints, rt: T, root: c_int,
        comm: MPI_Comm)
        on comm as Shape::NToOne { root };
    /// `MPI_Scatter` (§6.6): 1-to-n.
    /// Also `MPI_Iscatter` (§6.12.4) and `MPI_Scatter_init` (§6.13), merged at completion.
    MPI_Scatter, MPI_Iscatter, MPI_Scatter_init
        => PMPI_Scatter, PMPI_Iscatter, PMPI_Scatter_init
        (sb: *const V, sc: c_int, st: T, rb: *mut V, rc: c_int, rt: T, root: c_int,
        comm: MPI_Comm)
        on comm as Shape::OneToN { root };
    /// `MPI_Scatterv` (§6.6): 1-to-n.
    /// Also `MPI_Iscatterv` (§6.12.4) and `MPI_Scatterv_init` (§6.13), merged at completion.
    MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init
        => PMPI_Scatterv, PMPI_Iscatterv, PMPI_Scatterv_init
        (sb: *const V, scs: Ints, displs: Ints, st: T, rb: *mut V, rc: c_int, rt: T, root: c_int,
        comm: MPI_Comm)
        on comm as Shape::OneToN { root };
    /// `MPI_Allgather` (§6.7): n-to-n.
    /// Also `MPI_Iallgather` (§6.12.5) and `MPI_Allgather_init` (§6.13), merged at completion.
    MPI_Allgather, MPI_Iallgather, MPI_Allgather_init
        => PMPI_Allgather, PMPI_Iallgather, PMPI_Allgather_init
        (sb: *const V, sc: c_int, st: T, rb: *mut V, rc: c_int, rt: T, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Allgatherv` (§6.7): n-to-n.
    /// Also `MPI_Iallgatherv` (§6.12.5) and `MPI_Allgatherv_init` (§6.13), merged at completion.
    MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init
        => PMPI_Allgatherv, PMPI_Iallgatherv, PMPI_Allgatherv_init
        (sb: *const V, sc: c_int, st: T, rb: *mut V, rcs: Ints, displs: Ints, rt: T,
        comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Alltoall` (§6.8): n-to-n.
    /// Also `MPI_Ialltoall` (§6.12.6) and `MPI_Alltoall_init` (§6.13), merged at completion.
    MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init
        => PMPI_Alltoall, PMPI_Ialltoall, PMPI_Alltoall_init
        (sb: *const V, sc: c_int, st: T, rb: *mut V, rc: c_int, rt: T, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Alltoallv` (§6.8): n-to-n.
    /// Also `MPI_Ialltoallv` (§6.12.6) and `MPI_Alltoallv_init` (§6.13), merged at completion.
    MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init
        => PMPI_Alltoallv, PMPI_Ialltoallv, PMPI_Alltoallv_init
        (sb: *const V, scs: Ints, sd: Ints, st: T, rb: *mut V, rcs: Ints, rd: Ints, rt: T,
        comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Alltoallw` (§6.8): n-to-n.
    /// Also `MPI_Ialltoallw` (§6.12.6) and `MPI_Alltoallw_init` (§6.13), merged at completion.
    MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init
        => PMPI_Alltoallw, PMPI_Ialltoallw, PMPI_Alltoallw_init
        (sb: *const V, scs: Ints, sd: Ints, st: Types, rb: *mut V, rcs: Ints, rd: Ints,
        rt: Types, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Reduce` (§6.9.1): n-to-1.
    /// Also `MPI_Ireduce` (§6.12.7) and `MPI_Reduce_init` (§6.13), merged at completion.
    MPI_Reduce, MPI_Ireduce, MPI_Reduce_init
        => PMPI_Reduce, PMPI_Ireduce, PMPI_Reduce_init
        (sb: *const V, rb: *mut V, count: c_int, datatype: T, op: MPI_Op, root: c_int,
        comm: MPI_Comm)
        on comm as Shape::NToOne { root };
    /// `MPI_Allreduce` (§6.9.6): n-to-n.
    /// Also `MPI_Iallreduce` (§6.12.8) and `MPI_Allreduce_init` (§6.13), merged at completion.
    MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init
        => PMPI_Allreduce, PMPI_Iallreduce, PMPI_Allreduce_init
        (sb: *const V, rb: *mut V, count: c_int, datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Reduce_scatter` (§6.10.2): n-to-n.
    /// Also `MPI_Ireduce_scatter` (§6.12.10) and `MPI_Reduce_scatter_init` (§6.13), merged at completion.
    MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init
        => PMPI_Reduce_scatter, PMPI_Ireduce_scatter, PMPI_Reduce_scatter_init
        (sb: *const V, rb: *mut V, rcs: Ints, datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Reduce_scatter_block` (§6.10.1): n-to-n.
    /// Also `MPI_Ireduce_scatter_block` (§6.12.9) and `MPI_Reduce_scatter_block_init` (§6.13), merged at completion.
    MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init
        => PMPI_Reduce_scatter_block, PMPI_Ireduce_scatter_block, PMPI_Reduce_scatter_block_init
        (sb: *const V, rb: *mut V, rc: c_int, datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Scan` (§6.11.1): rank i merges ranks 0..=i.
    /// Also `MPI_Iscan` (§6.12.11) and `MPI_Scan_init` (§6.13), merged at completion.
    MPI_Scan, MPI_Iscan, MPI_Scan_init
        => PMPI_Scan, PMPI_Iscan, PMPI_Scan_init
        (sb: *const V, rb: *mut V, count: c_int, datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::Prefix;
    /// `MPI_Exscan` (§6.11.2): rank i merges ranks 0..=i.
    /// Also `MPI_Iexscan` (§6.12.12) and `MPI_Exscan_init` (§6.13), merged at completion.
    MPI_Exscan, MPI_Iexscan, MPI_Exscan_init
        => PMPI_Exscan, PMPI_Iexscan, PMPI_Exscan_init
        (sb: *const V, rb: *mut V, count: c_int, datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::Prefix;
    /// `MPI_Neighbor_allgather` (§8.6.1): each rank merges its in-neighbours.
    /// Also `MPI_Ineighbor_allgather` (§8.7.1) and `MPI_Neighbor_allgather_init` (§8.8), merged at completion.
    MPI_Neighbor_allgather, MPI_Ineighbor_allgather, MPI_Neighbor_allgather_init
        => PMPI_Neighbor_allgather, PMPI_Ineighbor_allgather, PMPI_Neighbor_allgather_init
        (sb: *const V, sc: c_int, st: T, rb: *mut V, rc: c_int, rt: T, comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_allgatherv` (§8.6.1).
    /// Also `MPI_Ineighbor_allgatherv` (§8.7.1) and `MPI_Neighbor_allgatherv_init` (§8.8), merged at completion.
    MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv, MPI_Neighbor_allgatherv_init
        => PMPI_Neighbor_allgatherv, PMPI_Ineighbor_allgatherv, PMPI_Neighbor_allgatherv_init
        (sb: *const V, sc: c_int, st: T, rb: *mut V, rcs: Ints, displs: Ints, rt: T,
        comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoall` (§8.6.2).
    /// Also `MPI_Ineighbor_alltoall` (§8.7.2) and `MPI_Neighbor_alltoall_init` (§8.8), merged at completion.
    MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall, MPI_Neighbor_alltoall_init
        => PMPI_Neighbor_alltoall, PMPI_Ineighbor_alltoall, PMPI_Neighbor_alltoall_init
        (sb: *const V, sc: c_int, st: T, rb: *mut V, rc: c_int, rt: T, comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoallv` (§8.6.2).
    /// Also `MPI_Ineighbor_alltoallv` (§8.7.2) and `MPI_Neighbor_alltoallv_init` (§8.8), merged at completion.
    MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv, MPI_Neighbor_alltoallv_init
        => PMPI_Neighbor_alltoallv, PMPI_Ineighbor_alltoallv, PMPI_Neighbor_alltoallv_init
        (sb: *const V, scs: Ints, sd: Ints, st: T, rb: *mut V, rcs: Ints, rd: Ints, rt: T,
        comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoallw` (§8.6.2).
    /// Also `MPI_Ineighbor_alltoallw` (§8.7.2) and `MPI_Neighbor_alltoallw_init` (§8.8), merged at completion.
    MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw, MPI_Neighbor_alltoallw_init
        => PMPI_Neighbor_alltoallw, PMPI_Ineighbor_alltoallw, PMPI_Neighbor_alltoallw_init
        (sb: *const V, scs: Ints, sd: Aints, st: Types, rb: *mut V, rcs: Ints, rd: Aints,
        rt: Types, comm: MPI_Comm)
        on comm as Shape::Neighbours;
}

// The large-count (`MPI_Count`, MPI-4.0 §6.1) bindings: the same shapes;
// the extra exchange does not depend on the counts. `MPI_Barrier` has no
// large-count form.

type C = sys::MPI_Count;
type Counts = *const sys::MPI_Count;

collectives! {
    /// `MPI_Bcast_c` (MPI-4.0 large counts): as `MPI_Bcast`.
    /// Also `MPI_Ibcast_c` and `MPI_Bcast_init_c`.
    MPI_Bcast_c, MPI_Ibcast_c, MPI_Bcast_init_c
        => PMPI_Bcast_c, PMPI_Ibcast_c, PMPI_Bcast_init_c
        (buf: *mut V, count: C, datatype: T, root: c_int, comm: MPI_Comm)
        on comm as Shape::OneToN { root };
    /// `MPI_Gather_c` (MPI-4.0 large counts): as `MPI_Gather`.
    /// Also `MPI_Igather_c` and `MPI_Gather_init_c`.
    MPI_Gather_c, MPI_Igather_c, MPI_Gather_init_c
        => PMPI_Gather_c, PMPI_Igather_c, PMPI_Gather_init_c
        (sb: *const V, sc: C, st: T, rb: *mut V, rc: C, rt: T, root: c_int, comm: MPI_Comm)
        on comm as Shape::NToOne { root };
    /// `MPI_Gatherv_c` (MPI-4.0 large counts): as `MPI_Gatherv`.
    /// Also `MPI_Igatherv_c` and `MPI_Gatherv_init_c`.
    MPI_Gatherv_c, MPI_Igatherv_c, MPI_Gatherv_init_c
        => PMPI_Gatherv_c, PMPI_Igatherv_c, PMPI_Gatherv_init_c
        (sb: *const V, sc: C, st: T, rb: *mut V, rcs: Counts, displs: Aints, rt: T, root: c_int,
        comm: MPI_Comm)
        on comm as Shape::NToOne { root };
    /// `MPI_Scatter_c` (MPI-4.0 large counts): as `MPI_Scatter`.
    /// Also `MPI_Iscatter_c` and `MPI_Scatter_init_c`.
    MPI_Scatter_c, MPI_Iscatter_c, MPI_Scatter_init_c
        => PMPI_Scatter_c, PMPI_Iscatter_c, PMPI_Scatter_init_c
        (sb: *const V, sc: C, st: T, rb: *mut V, rc: C, rt: T, root: c_int, comm: MPI_Comm)
        on comm as Shape::OneToN { root };
    /// `MPI_Scatterv_c` (MPI-4.0 large counts): as `MPI_Scatterv`.
    /// Also `MPI_Iscatterv_c` and `MPI_Scatterv_init_c`.
    MPI_Scatterv_c, MPI_Iscatterv_c, MPI_Scatterv_init_c
        => PMPI_Scatterv_c, PMPI_Iscatterv_c, PMPI_Scatterv_init_c
        (sb: *const V, scs: Counts, displs: Aints, st: T, rb: *mut V, rc: C, rt: T, root: c_int,
        comm: MPI_Comm)
        on comm as Shape::OneToN { root };
    /// `MPI_Allgather_c` (MPI-4.0 large counts): as `MPI_Allgather`.
    /// Also `MPI_Iallgather_c` and `MPI_Allgather_init_c`.
    MPI_Allgather_c, MPI_Iallgather_c, MPI_Allgather_init_c
        => PMPI_Allgather_c, PMPI_Iallgather_c, PMPI_Allgather_init_c
        (sb: *const V, sc: C, st: T, rb: *mut V, rc: C, rt: T, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Allgatherv_c` (MPI-4.0 large counts): as `MPI_Allgatherv`.
    /// Also `MPI_Iallgatherv_c` and `MPI_Allgatherv_init_c`.
    MPI_Allgatherv_c, MPI_Iallgatherv_c, MPI_Allgatherv_init_c
        => PMPI_Allgatherv_c, PMPI_Iallgatherv_c, PMPI_Allgatherv_init_c
        (sb: *const V, sc: C, st: T, rb: *mut V, rcs: Counts, displs: Aints, rt: T,
        comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Alltoall_c` (MPI-4.0 large counts): as `MPI_Alltoall`.
    /// Also `MPI_Ialltoall_c` and `MPI_Alltoall_init_c`.
    MPI_Alltoall_c, MPI_Ialltoall_c, MPI_Alltoall_init_c
        => PMPI_Alltoall_c, PMPI_Ialltoall_c, PMPI_Alltoall_init_c
        (sb: *const V, sc: C, st: T, rb: *mut V, rc: C, rt: T, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Alltoallv_c` (MPI-4.0 large counts): as `MPI_Alltoallv`.
    /// Also `MPI_Ialltoallv_c` and `MPI_Alltoallv_init_c`.
    MPI_Alltoallv_c, MPI_Ialltoallv_c, MPI_Alltoallv_init_c
        => PMPI_Alltoallv_c, PMPI_Ialltoallv_c, PMPI_Alltoallv_init_c
        (sb: *const V, scs: Counts, sd: Aints, st: T, rb: *mut V, rcs: Counts, rd: Aints, rt: T,
        comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Alltoallw_c` (MPI-4.0 large counts): as `MPI_Alltoallw`.
    /// Also `MPI_Ialltoallw_c` and `MPI_Alltoallw_init_c`.
    MPI_Alltoallw_c, MPI_Ialltoallw_c, MPI_Alltoallw_init_c
        => PMPI_Alltoallw_c, PMPI_Ialltoallw_c, PMPI_Alltoallw_init_c
        (sb: *const V, scs: Counts, sd: Aints, st: Types, rb: *mut V, rcs: Counts, rd: Aints,
        rt: Types, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Reduce_c` (MPI-4.0 large counts): as `MPI_Reduce`.
    /// Also `MPI_Ireduce_c` and `MPI_Reduce_init_c`.
    MPI_Reduce_c, MPI_Ireduce_c, MPI_Reduce_init_c
        => PMPI_Reduce_c, PMPI_Ireduce_c, PMPI_Reduce_init_c
        (sb: *const V, rb: *mut V, count: C, datatype: T, op: MPI_Op, root: c_int,
        comm: MPI_Comm)
        on comm as Shape::NToOne { root };
    /// `MPI_Allreduce_c` (MPI-4.0 large counts): as `MPI_Allreduce`.
    /// Also `MPI_Iallreduce_c` and `MPI_Allreduce_init_c`.
    MPI_Allreduce_c, MPI_Iallreduce_c, MPI_Allreduce_init_c
        => PMPI_Allreduce_c, PMPI_Iallreduce_c, PMPI_Allreduce_init_c
        (sb: *const V, rb: *mut V, count: C, datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Reduce_scatter_c` (MPI-4.0 large counts): as `MPI_Reduce_scatter`.
    /// Also `MPI_Ireduce_scatter_c` and `MPI_Reduce_scatter_init_c`.
    MPI_Reduce_scatter_c, MPI_Ireduce_scatter_c, MPI_Reduce_scatter_init_c
        => PMPI_Reduce_scatter_c, PMPI_Ireduce_scatter_c, PMPI_Reduce_scatter_init_c
        (sb: *const V, rb: *mut V, rcs: Counts, datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Reduce_scatter_block_c` (MPI-4.0 large counts): as `MPI_Reduce_scatter_block`.
    /// Also `MPI_Ireduce_scatter_block_c` and `MPI_Reduce_scatter_block_init_c`.
    MPI_Reduce_scatter_block_c, MPI_Ireduce_scatter_block_c, MPI_Reduce_scatter_block_init_c
        => PMPI_Reduce_scatter_block_c, PMPI_Ireduce_scatter_block_c, PMPI_Reduce_scatter_block_init_c
        (sb: *const V, rb: *mut V, rc: C, datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Scan_c` (MPI-4.0 large counts): as `MPI_Scan`.
    /// Also `MPI_Iscan_c` and `MPI_Scan_init_c`.
    MPI_Scan_c, MPI_Iscan_c, MPI_Scan_init_c
        => PMPI_Scan_c, PMPI_Iscan_c, PMPI_Scan_init_c
        (sb: *const V, rb: *mut V, count: C, datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::Prefix;
    /// `MPI_Exscan_c` (MPI-4.0 large counts): as `MPI_Exscan`.
    /// Also `MPI_Iexscan_c` and `MPI_Exscan_init_c`.
    MPI_Exscan_c, MPI_Iexscan_c, MPI_Exscan_init_c
        => PMPI_Exscan_c, PMPI_Iexscan_c, PMPI_Exscan_init_c
        (sb: *const V, rb: *mut V, count: C, datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::Prefix;
    /// `MPI_Neighbor_allgather_c` (MPI-4.0 large counts): as `MPI_Neighbor_allgather`.
    /// Also `MPI_Ineighbor_allgather_c` and `MPI_Neighbor_allgather_init_c`.
    MPI_Neighbor_allgather_c, MPI_Ineighbor_allgather_c, MPI_Neighbor_allgather_init_c
        => PMPI_Neighbor_allgather_c, PMPI_Ineighbor_allgather_c, PMPI_Neighbor_allgather_init_c
        (sb: *const V, sc: C, st: T, rb: *mut V, rc: C, rt: T, comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_allgatherv_c` (MPI-4.0 large counts): as `MPI_Neighbor_allgatherv`.
    /// Also `MPI_Ineighbor_allgatherv_c` and `MPI_Neighbor_allgatherv_init_c`.
    MPI_Neighbor_allgatherv_c, MPI_Ineighbor_allgatherv_c, MPI_Neighbor_allgatherv_init_c
        => PMPI_Neighbor_allgatherv_c, PMPI_Ineighbor_allgatherv_c, PMPI_Neighbor_allgatherv_init_c
        (sb: *const V, sc: C, st: T, rb: *mut V, rcs: Counts, displs: Aints, rt: T,
        comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoall_c` (MPI-4.0 large counts): as `MPI_Neighbor_alltoall`.
    /// Also `MPI_Ineighbor_alltoall_c` and `MPI_Neighbor_alltoall_init_c`.
    MPI_Neighbor_alltoall_c, MPI_Ineighbor_alltoall_c, MPI_Neighbor_alltoall_init_c
        => PMPI_Neighbor_alltoall_c, PMPI_Ineighbor_alltoall_c, PMPI_Neighbor_alltoall_init_c
        (sb: *const V, sc: C, st: T, rb: *mut V, rc: C, rt: T, comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoallv_c` (MPI-4.0 large counts): as `MPI_Neighbor_alltoallv`.
    /// Also `MPI_Ineighbor_alltoallv_c` and `MPI_Neighbor_alltoallv_init_c`.
    MPI_Neighbor_alltoallv_c, MPI_Ineighbor_alltoallv_c, MPI_Neighbor_alltoallv_init_c
        => PMPI_Neighbor_alltoallv_c, PMPI_Ineighbor_alltoallv_c, PMPI_Neighbor_alltoallv_init_c
        (sb: *const V, scs: Counts, sd: Aints, st: T, rb: *mut V, rcs: Counts, rd: Aints, rt: T,
        comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoallw_c` (MPI-4.0 large counts): as `MPI_Neighbor_alltoallw`.
    /// Also `MPI_Ineighbor_alltoallw_c` and `MPI_Neighbor_alltoallw_init_c`.
    MPI_Neighbor_alltoallw_c, MPI_Ineighbor_alltoallw_c, MPI_Neighbor_alltoallw_init_c
        => PMPI_Neighbor_alltoallw_c, PMPI_Ineighbor_alltoallw_c, PMPI_Neighbor_alltoallw_init_c
        (sb: *const V, scs: Counts, sd: Aints, st: Types, rb: *mut V, rcs: Counts, rd: Aints,
        rt: Types, comm: MPI_Comm)
        on comm as Shape::Neighbours;
}
