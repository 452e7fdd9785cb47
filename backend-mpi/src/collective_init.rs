//! Persistent collectives (MPI-4.0 §6.13, §8.8): `MPI_Barrier_init` …
//! `MPI_Neighbor_alltoallw_init` and their large-count `_c` forms, merged
//! with the shapes of R6 (000 §4.3.3, 001 §3.3) at each completion, like
//! their nonblocking twins (`collective`).
//!
//! Right after the program's `*_init`, heisen binds its own extra exchange
//! to a persistent request of its own (the matching `MPI_Bcast_init`,
//! `Reduce_init`, `Allreduce_init`, `Scan_init` or
//! `Neighbor_allgather_init` over boxed buffers) on a communicator of its
//! own over the same group (`private`; for a neighbourhood collective with
//! the same topology). The standard lets a program start its persistent
//! collectives in any order, different on each rank (MPI-4.0 §6.13), so
//! each request gets its own communicator: heisen's exchange for one can
//! never match another's, and none meets the program's messages (MPICH
//! 4.0.2 runs several persistent collectives alive on one communicator
//! wrong on 3 ranks and more; docs/development.md). The initialisation
//! calls are collective and ordered like blocking collectives (the
//! standard calls them non-local), so heisen makes its own collective
//! calls there: one allreduce on the program's communicator (every rank
//! has room, R12) and the split. Each successful
//! `MPI_Start`/`MPI_Startall` of the program's request takes this rank's
//! record (R3) into the buffers and starts heisen's request; the
//! completion (`Wait*`, `Test*`) completes it and merges what it brought
//! (R4/R5/R6), and `MPI_Request_free` frees it.
//!
//! Bounded (R12): at most [`CAPACITY`] tracked at once; the ranks agree on
//! room, so a persistent collective is tracked on all its ranks or none
//! (an untracked one is a region at its initialisation, counted in
//! `mpi.collectives.persistent.untracked`). A tracked one that finds the
//! request table full is kept beyond its slots (`mpi.requests.beyond`).
//! Collectives on intercommunicators are regions only, as their blocking
//! forms.

use core::ffi::{c_int, c_void as V};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::collective::{self, Arrival, Buffers, Post, Shape, UNMERGED};
use crate::private;
use crate::region::{self, Named};
use crate::requests::{self, Completion, Entry, Kind};
use crate::setup;
use crate::sys::{self, MPI_Comm, MPI_Info, MPI_Op, MPI_Request, MPI_Status};

/// Persistent collectives tracked at once (R12), each with a communicator
/// of heisen's (one of the MPI's context ids).
pub const CAPACITY: usize = 64;

/// Tracked persistent collectives alive, and those being made (their room
/// taken before the ranks agree).
static HELD: AtomicUsize = AtomicUsize::new(0);
static TRACKED: AtomicU64 = AtomicU64::new(0);
static UNTRACKED: AtomicU64 = AtomicU64::new(0);
static STARTS: AtomicU64 = AtomicU64::new(0);

/// Takes room for one more, if there is any.
fn take_room() -> bool {
    HELD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |h| {
        (h < CAPACITY).then_some(h + 1)
    })
    .is_ok()
}

fn give_room() {
    HELD.fetch_sub(1, Ordering::AcqRel);
}

/// The report's `collectives.persistent` object.
pub fn report_json() -> serde_json::Value {
    serde_json::json!({
        "capacity": CAPACITY,
        "tracked": TRACKED.load(Ordering::Relaxed),
        "untracked": UNTRACKED.load(Ordering::Relaxed),
        "open": HELD.load(Ordering::Relaxed),
        "starts": STARTS.load(Ordering::Relaxed),
    })
}

/// A persistent collective's own exchange, filed under the program's
/// request for as long as it lives.
#[derive(Debug)]
struct Persistent {
    shape: Shape,
    me: c_int,
    /// heisen's communicator for it.
    comm: MPI_Comm,
    /// heisen's persistent request on `comm`, bound to `buffers`.
    extra: MPI_Request,
    buffers: Box<Buffers>,
    /// Started and not yet completed: whether the start was measured.
    active: Option<bool>,
}

// SAFETY: the request handle is a plain value; the buffers are owned.
unsafe impl Send for Persistent {}

impl Completion for Persistent {
    fn started(&mut self) {
        let arrival: Arrival = collective::arrive();
        self.buffers.refill(self.shape, &arrival);
        // SAFETY: our own persistent request, inactive (the program's was,
        // or its start would have failed), bound to the boxed buffers.
        unsafe { sys::PMPI_Start(&mut self.extra) };
        self.active = Some(arrival.is_some());
        STARTS.fetch_add(1, Ordering::Relaxed);
    }

    fn complete(&mut self, begin: u64, _status: *mut MPI_Status, cancelled: bool) {
        // An inactive request completes at once: nothing was exchanged.
        let Some(measured) = self.active.take() else {
            return;
        };
        let end = crate::merge::now().unwrap_or(begin);
        // SAFETY: our own request, started with the program's on every
        // rank; the program's has completed here, so ours completes too.
        unsafe { sys::PMPI_Wait(&mut self.extra, sys::status_ignore()) };
        if measured && !cancelled {
            let after = crate::merge::now().unwrap_or(end);
            self.buffers
                .merge(self.shape, self.me, begin, end, after.saturating_sub(end));
        }
    }
}

impl Drop for Persistent {
    /// The program freed its request: heisen's goes too, with its
    /// communicator. Still active here only when the program freed a
    /// request it saw complete through `MPI_Request_get_status` alone;
    /// every rank started ours, so the wait ends.
    fn drop(&mut self) {
        // SAFETY: our own request and communicator, the request completed
        // before it is freed.
        unsafe {
            if self.active.take().is_some() {
                sys::PMPI_Wait(&mut self.extra, sys::status_ignore());
            }
            sys::PMPI_Request_free(&mut self.extra);
            sys::PMPI_Comm_free(&mut self.comm);
        }
        give_room();
    }
}

/// Runs a persistent collective's initialisation `call`, which writes
/// `*request`, then binds heisen's own exchange beside it and files both
/// under the program's request.
///
/// # Safety
/// `request` is the program's request pointer, written by `call`.
pub unsafe fn init(
    region: &'static Named,
    comm: MPI_Comm,
    shape: Shape,
    request: *mut MPI_Request,
    call: impl FnOnce() -> c_int,
) -> c_int {
    if setup::ensure().is_none() {
        return call();
    }
    region::call(region, || {
        let rc = call();
        if rc != sys::success() || request.is_null() || collective::is_inter(comm) {
            UNMERGED.fetch_add(1, Ordering::Relaxed);
            return rc;
        }
        let room = take_room();
        // only a tracked one takes a context id of the MPI's
        let own = match private::everywhere(comm, room) {
            true if shape == Shape::Neighbours => private::topology_copy(comm),
            true => private::private_copy(comm),
            false => None,
        };
        let mut buffers = Box::new(Buffers::new(shape, &None, 0));
        let mut extra = sys::request_null();
        // SAFETY: the buffers are boxed and move into the entry (the box's
        // contents do not move) until the request is freed; `own` is ours.
        let bound = own.filter(|&c| unsafe {
            buffers.exchange(shape, c, Post::Persistent(&mut extra)) == sys::success()
        });
        let Some(own) = bound else {
            if let Some(mut c) = own {
                // SAFETY: our own communicator, unused.
                unsafe { sys::PMPI_Comm_free(&mut c) };
            }
            if room {
                give_room();
            }
            UNTRACKED.fetch_add(1, Ordering::Relaxed);
            UNMERGED.fetch_add(1, Ordering::Relaxed);
            return rc;
        };
        TRACKED.fetch_add(1, Ordering::Relaxed);
        let entry = Entry {
            kind: Kind::Hook(Box::new(Persistent {
                shape,
                me: collective::my_rank(comm),
                comm: own,
                extra,
                buffers,
                active: None,
            })),
            persistent: true,
            datatype: None,
            staged: None,
        };
        // SAFETY: `call` succeeded, so it wrote the request.
        let user = unsafe { *request };
        requests::table().file_persistent(user, entry);
        rc
    })
}

// ----- the exports -----------------------------------------------------------
//
// One generic wrapper for the shape (STYLE.md, Caliper's `Wrapper.w`): each
// export names its region, the communicator, the shape, and passes the
// program's arguments unchanged to its `PMPI_` twin. The rows are the
// nonblocking ones' (`collective`), with the `info` argument.

macro_rules! persistent_collectives {
    ($(
        $(#[$doc:meta])*
        $name:ident => $pmpi:ident ( $($arg:ident : $ty:ty),* $(,)? ) on $comm:ident as $shape:expr;
    )*) => {$(
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            $($arg: $ty,)*
            info: MPI_Info,
            request: *mut MPI_Request,
        ) -> c_int {
            static REGION: Named = Named::new(stringify!($name));
            // SAFETY: the program's arguments, passed on unchanged; the
            // MPI writes `request` before `init` reads it.
            unsafe { init(&REGION, $comm, $shape, request, || sys::$pmpi($($arg,)* info, request)) }
        }
    )*};
}

type Ints = *const c_int;
type Types = *const sys::MPI_Datatype;
type Aints = *const sys::MPI_Aint;
type T = sys::MPI_Datatype;
type C = sys::MPI_Count;
type Counts = *const sys::MPI_Count;

persistent_collectives! {
    /// `MPI_Barrier_init` (MPI-4.0 §6.13): n-to-n, merged at each completion.
    MPI_Barrier_init => PMPI_Barrier_init(comm: MPI_Comm) on comm as Shape::NToN;
    /// `MPI_Bcast_init` (§6.13): 1-to-n.
    MPI_Bcast_init => PMPI_Bcast_init(buf: *mut V, count: c_int, datatype: T, root: c_int, comm: MPI_Comm)
        on comm as Shape::OneToN { root };
    /// `MPI_Gather_init` (§6.13): n-to-1.
    MPI_Gather_init => PMPI_Gather_init(sb: *const V, sc: c_int, st: T, rb: *mut V, rc: c_int, rt: T,
        root: c_int, comm: MPI_Comm) on comm as Shape::NToOne { root };
    /// `MPI_Gatherv_init` (§6.13): n-to-1.
    MPI_Gatherv_init => PMPI_Gatherv_init(sb: *const V, sc: c_int, st: T, rb: *mut V, rcs: Ints,
        displs: Ints, rt: T, root: c_int, comm: MPI_Comm) on comm as Shape::NToOne { root };
    /// `MPI_Scatter_init` (§6.13): 1-to-n.
    MPI_Scatter_init => PMPI_Scatter_init(sb: *const V, sc: c_int, st: T, rb: *mut V, rc: c_int, rt: T,
        root: c_int, comm: MPI_Comm) on comm as Shape::OneToN { root };
    /// `MPI_Scatterv_init` (§6.13): 1-to-n.
    MPI_Scatterv_init => PMPI_Scatterv_init(sb: *const V, scs: Ints, displs: Ints, st: T, rb: *mut V,
        rc: c_int, rt: T, root: c_int, comm: MPI_Comm) on comm as Shape::OneToN { root };
    /// `MPI_Allgather_init` (§6.13): n-to-n.
    MPI_Allgather_init => PMPI_Allgather_init(sb: *const V, sc: c_int, st: T, rb: *mut V, rc: c_int, rt: T,
        comm: MPI_Comm) on comm as Shape::NToN;
    /// `MPI_Allgatherv_init` (§6.13): n-to-n.
    MPI_Allgatherv_init => PMPI_Allgatherv_init(sb: *const V, sc: c_int, st: T, rb: *mut V, rcs: Ints,
        displs: Ints, rt: T, comm: MPI_Comm) on comm as Shape::NToN;
    /// `MPI_Alltoall_init` (§6.13): n-to-n.
    MPI_Alltoall_init => PMPI_Alltoall_init(sb: *const V, sc: c_int, st: T, rb: *mut V, rc: c_int, rt: T,
        comm: MPI_Comm) on comm as Shape::NToN;
    /// `MPI_Alltoallv_init` (§6.13): n-to-n.
    MPI_Alltoallv_init => PMPI_Alltoallv_init(sb: *const V, scs: Ints, sd: Ints, st: T, rb: *mut V,
        rcs: Ints, rd: Ints, rt: T, comm: MPI_Comm) on comm as Shape::NToN;
    /// `MPI_Alltoallw_init` (§6.13): n-to-n.
    MPI_Alltoallw_init => PMPI_Alltoallw_init(sb: *const V, scs: Ints, sd: Ints, st: Types, rb: *mut V,
        rcs: Ints, rd: Ints, rt: Types, comm: MPI_Comm) on comm as Shape::NToN;
    /// `MPI_Reduce_init` (§6.13): n-to-1.
    MPI_Reduce_init => PMPI_Reduce_init(sb: *const V, rb: *mut V, count: c_int, datatype: T, op: MPI_Op,
        root: c_int, comm: MPI_Comm) on comm as Shape::NToOne { root };
    /// `MPI_Allreduce_init` (§6.13): n-to-n.
    MPI_Allreduce_init => PMPI_Allreduce_init(sb: *const V, rb: *mut V, count: c_int, datatype: T,
        op: MPI_Op, comm: MPI_Comm) on comm as Shape::NToN;
    /// `MPI_Reduce_scatter_init` (§6.13): n-to-n.
    MPI_Reduce_scatter_init => PMPI_Reduce_scatter_init(sb: *const V, rb: *mut V, rcs: Ints, datatype: T,
        op: MPI_Op, comm: MPI_Comm) on comm as Shape::NToN;
    /// `MPI_Reduce_scatter_block_init` (§6.13): n-to-n.
    MPI_Reduce_scatter_block_init => PMPI_Reduce_scatter_block_init(sb: *const V, rb: *mut V, rc: c_int,
        datatype: T, op: MPI_Op, comm: MPI_Comm) on comm as Shape::NToN;
    /// `MPI_Scan_init` (§6.13): prefix.
    MPI_Scan_init => PMPI_Scan_init(sb: *const V, rb: *mut V, count: c_int, datatype: T, op: MPI_Op,
        comm: MPI_Comm) on comm as Shape::Prefix;
    /// `MPI_Exscan_init` (§6.13): prefix.
    MPI_Exscan_init => PMPI_Exscan_init(sb: *const V, rb: *mut V, count: c_int, datatype: T, op: MPI_Op,
        comm: MPI_Comm) on comm as Shape::Prefix;
    /// `MPI_Neighbor_allgather_init` (§8.8): neighbourhood.
    MPI_Neighbor_allgather_init => PMPI_Neighbor_allgather_init(sb: *const V, sc: c_int, st: T,
        rb: *mut V, rc: c_int, rt: T, comm: MPI_Comm) on comm as Shape::Neighbours;
    /// `MPI_Neighbor_allgatherv_init` (§8.8).
    MPI_Neighbor_allgatherv_init => PMPI_Neighbor_allgatherv_init(sb: *const V, sc: c_int, st: T,
        rb: *mut V, rcs: Ints, displs: Ints, rt: T, comm: MPI_Comm) on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoall_init` (§8.8).
    MPI_Neighbor_alltoall_init => PMPI_Neighbor_alltoall_init(sb: *const V, sc: c_int, st: T, rb: *mut V,
        rc: c_int, rt: T, comm: MPI_Comm) on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoallv_init` (§8.8).
    MPI_Neighbor_alltoallv_init => PMPI_Neighbor_alltoallv_init(sb: *const V, scs: Ints, sd: Ints, st: T,
        rb: *mut V, rcs: Ints, rd: Ints, rt: T, comm: MPI_Comm) on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoallw_init` (§8.8).
    MPI_Neighbor_alltoallw_init => PMPI_Neighbor_alltoallw_init(sb: *const V, scs: Ints, sd: Aints,
        st: Types, rb: *mut V, rcs: Ints, rd: Aints, rt: Types, comm: MPI_Comm)
        on comm as Shape::Neighbours;
}

// The large-count (`MPI_Count`, MPI-4.0 §6.1) bindings: the same shapes.

persistent_collectives! {
    /// `MPI_Bcast_init_c` (MPI-4.0 large counts): as `MPI_Bcast_init`.
    MPI_Bcast_init_c => PMPI_Bcast_init_c(buf: *mut V, count: C, datatype: T, root: c_int, comm: MPI_Comm)
        on comm as Shape::OneToN { root };
    /// `MPI_Gather_init_c` (MPI-4.0 large counts): as `MPI_Gather_init`.
    MPI_Gather_init_c => PMPI_Gather_init_c(sb: *const V, sc: C, st: T, rb: *mut V, rc: C, rt: T,
        root: c_int, comm: MPI_Comm)
        on comm as Shape::NToOne { root };
    /// `MPI_Gatherv_init_c` (MPI-4.0 large counts): as `MPI_Gatherv_init`.
    MPI_Gatherv_init_c => PMPI_Gatherv_init_c(sb: *const V, sc: C, st: T, rb: *mut V, rcs: Counts,
        displs: Aints, rt: T, root: c_int, comm: MPI_Comm)
        on comm as Shape::NToOne { root };
    /// `MPI_Scatter_init_c` (MPI-4.0 large counts): as `MPI_Scatter_init`.
    MPI_Scatter_init_c => PMPI_Scatter_init_c(sb: *const V, sc: C, st: T, rb: *mut V, rc: C, rt: T,
        root: c_int, comm: MPI_Comm)
        on comm as Shape::OneToN { root };
    /// `MPI_Scatterv_init_c` (MPI-4.0 large counts): as `MPI_Scatterv_init`.
    MPI_Scatterv_init_c => PMPI_Scatterv_init_c(sb: *const V, scs: Counts, displs: Aints, st: T,
        rb: *mut V, rc: C, rt: T, root: c_int, comm: MPI_Comm)
        on comm as Shape::OneToN { root };
    /// `MPI_Allgather_init_c` (MPI-4.0 large counts): as `MPI_Allgather_init`.
    MPI_Allgather_init_c => PMPI_Allgather_init_c(sb: *const V, sc: C, st: T, rb: *mut V, rc: C, rt: T,
        comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Allgatherv_init_c` (MPI-4.0 large counts): as `MPI_Allgatherv_init`.
    MPI_Allgatherv_init_c => PMPI_Allgatherv_init_c(sb: *const V, sc: C, st: T, rb: *mut V, rcs: Counts,
        displs: Aints, rt: T, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Alltoall_init_c` (MPI-4.0 large counts): as `MPI_Alltoall_init`.
    MPI_Alltoall_init_c => PMPI_Alltoall_init_c(sb: *const V, sc: C, st: T, rb: *mut V, rc: C, rt: T,
        comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Alltoallv_init_c` (MPI-4.0 large counts): as `MPI_Alltoallv_init`.
    MPI_Alltoallv_init_c => PMPI_Alltoallv_init_c(sb: *const V, scs: Counts, sd: Aints, st: T, rb: *mut V,
        rcs: Counts, rd: Aints, rt: T, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Alltoallw_init_c` (MPI-4.0 large counts): as `MPI_Alltoallw_init`.
    MPI_Alltoallw_init_c => PMPI_Alltoallw_init_c(sb: *const V, scs: Counts, sd: Aints, st: Types,
        rb: *mut V, rcs: Counts, rd: Aints, rt: Types, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Reduce_init_c` (MPI-4.0 large counts): as `MPI_Reduce_init`.
    MPI_Reduce_init_c => PMPI_Reduce_init_c(sb: *const V, rb: *mut V, count: C, datatype: T, op: MPI_Op,
        root: c_int, comm: MPI_Comm)
        on comm as Shape::NToOne { root };
    /// `MPI_Allreduce_init_c` (MPI-4.0 large counts): as `MPI_Allreduce_init`.
    MPI_Allreduce_init_c => PMPI_Allreduce_init_c(sb: *const V, rb: *mut V, count: C, datatype: T,
        op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Reduce_scatter_init_c` (MPI-4.0 large counts): as `MPI_Reduce_scatter_init`.
    MPI_Reduce_scatter_init_c => PMPI_Reduce_scatter_init_c(sb: *const V, rb: *mut V, rcs: Counts,
        datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Reduce_scatter_block_init_c` (MPI-4.0 large counts): as `MPI_Reduce_scatter_block_init`.
    MPI_Reduce_scatter_block_init_c => PMPI_Reduce_scatter_block_init_c(sb: *const V, rb: *mut V, rc: C,
        datatype: T, op: MPI_Op, comm: MPI_Comm)
        on comm as Shape::NToN;
    /// `MPI_Scan_init_c` (MPI-4.0 large counts): as `MPI_Scan_init`.
    MPI_Scan_init_c => PMPI_Scan_init_c(sb: *const V, rb: *mut V, count: C, datatype: T, op: MPI_Op,
        comm: MPI_Comm)
        on comm as Shape::Prefix;
    /// `MPI_Exscan_init_c` (MPI-4.0 large counts): as `MPI_Exscan_init`.
    MPI_Exscan_init_c => PMPI_Exscan_init_c(sb: *const V, rb: *mut V, count: C, datatype: T, op: MPI_Op,
        comm: MPI_Comm)
        on comm as Shape::Prefix;
    /// `MPI_Neighbor_allgather_init_c` (MPI-4.0 large counts): as `MPI_Neighbor_allgather_init`.
    MPI_Neighbor_allgather_init_c => PMPI_Neighbor_allgather_init_c(sb: *const V, sc: C, st: T, rb: *mut V,
        rc: C, rt: T, comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_allgatherv_init_c` (MPI-4.0 large counts): as `MPI_Neighbor_allgatherv_init`.
    MPI_Neighbor_allgatherv_init_c => PMPI_Neighbor_allgatherv_init_c(sb: *const V, sc: C, st: T,
        rb: *mut V, rcs: Counts, displs: Aints, rt: T, comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoall_init_c` (MPI-4.0 large counts): as `MPI_Neighbor_alltoall_init`.
    MPI_Neighbor_alltoall_init_c => PMPI_Neighbor_alltoall_init_c(sb: *const V, sc: C, st: T, rb: *mut V,
        rc: C, rt: T, comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoallv_init_c` (MPI-4.0 large counts): as `MPI_Neighbor_alltoallv_init`.
    MPI_Neighbor_alltoallv_init_c => PMPI_Neighbor_alltoallv_init_c(sb: *const V, scs: Counts, sd: Aints,
        st: T, rb: *mut V, rcs: Counts, rd: Aints, rt: T, comm: MPI_Comm)
        on comm as Shape::Neighbours;
    /// `MPI_Neighbor_alltoallw_init_c` (MPI-4.0 large counts): as `MPI_Neighbor_alltoallw_init`.
    MPI_Neighbor_alltoallw_init_c => PMPI_Neighbor_alltoallw_init_c(sb: *const V, scs: Counts, sd: Aints,
        st: Types, rb: *mut V, rcs: Counts, rd: Aints, rt: Types, comm: MPI_Comm)
        on comm as Shape::Neighbours;
}
