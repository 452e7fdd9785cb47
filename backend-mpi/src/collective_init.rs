//! Persistent collectives (MPI-4.0 §6.13, §8.8): `MPI_Barrier_init` …
//! `MPI_Neighbor_alltoallw_init` and their large-count `_c` forms (the
//! exports are `collective`'s, a row for each collective's blocking,
//! nonblocking and persistent bindings), merged with the shapes of R6
//! (000 §4.3.3, 001 §3.3) at each completion, like their nonblocking
//! twins.
//!
//! Right after the program's `*_init`, heisen binds its own extra exchange
//! to a persistent request of its own (the matching `MPI_Bcast_init`,
//! `Reduce_init`, `Allreduce_init`, `Scan_init` or
//! `Neighbor_allgather_init` over boxed buffers) on a communicator of its
//! own over the same group (`private`; for a neighbourhood collective with
//! the same topology). The standard lets a program start its persistent
//! collectives in any order, different on each rank (MPI-4.0 §6.13), so
//! each request gets its own communicator: heisen's exchange for one can
//! never match another's, and none meets the program's messages. The
//! initialisation
//! calls are collective and ordered like blocking collectives (the
//! standard calls them non-local), so heisen makes its own collective
//! calls there: an allreduce on the program's communicator (every rank
//! has room, R12), the split, and a second allreduce (every rank made its
//! exchange). Each successful
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

use core::ffi::c_int;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::collective::{self, Arrival, Buffers, Post, Shape, UNMERGED};
use crate::merge;
use crate::private;
use crate::region::Named;
use crate::requests::{self, Completion, Entry, Kind};
use crate::sys::{self, MPI_Comm, MPI_Request, MPI_Status};

/// Persistent collectives tracked at once (R12), each with a communicator
/// of heisen's (one of the MPI's context ids).
pub const CAPACITY: usize = 64;

/// Tracked persistent collectives alive, and those being made (their room
/// taken before the ranks agree).
static HELD: AtomicUsize = AtomicUsize::new(0);
static TRACKED: AtomicU64 = AtomicU64::new(0);
static UNTRACKED: AtomicU64 = AtomicU64::new(0);
static STARTS: AtomicU64 = AtomicU64::new(0);
static COMPLETIONS: AtomicU64 = AtomicU64::new(0);

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
        "completions": COMPLETIONS.load(Ordering::Relaxed),
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
        // Not charged apart, as a nonblocking collective's post is not: a
        // charge here, after the entry was taken, would put this rank's
        // exit later than its entry allows (R6, 001 eq. 12-13).
        unsafe { sys::PMPI_Start(&mut self.extra) };
        self.active = Some(arrival.is_some());
        STARTS.fetch_add(1, Ordering::Relaxed);
    }

    fn complete(&mut self, begin: u64, _status: *mut MPI_Status, cancelled: bool) {
        // An inactive request completes at once: nothing was exchanged.
        let Some(measured) = self.active.take() else {
            return;
        };
        let end = merge::now().unwrap_or(begin);
        // SAFETY: our own request, started with the program's on every
        // rank; the program's has completed here, so ours completes too.
        unsafe { sys::PMPI_Wait(&mut self.extra, sys::status_ignore()) };
        COMPLETIONS.fetch_add(1, Ordering::Relaxed);
        if measured && !cancelled {
            let after = merge::now().unwrap_or(end);
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
    let bound = |_, user| bind(comm, shape, user);
    // An initialisation that failed here may have succeeded on other ranks
    // (MPICH checks some arguments on some ranks only): they are in
    // `bind`'s agreement, so this rank takes part too, with no room,
    // unless the communicator itself is what failed.
    let failed = |rc| {
        let mut class = 0;
        // SAFETY: writes `class` only.
        unsafe { sys::PMPI_Error_class(rc, &mut class) };
        if class != sys::err_comm() && !collective::is_inter(comm) {
            let before = merge::now();
            private::everywhere(comm, false);
            merge::charge_since(before);
        }
    };
    // SAFETY: the caller's contract.
    unsafe { collective::with_request(region, comm, request, false, call, bound, failed) }
}

/// Binds heisen's own exchange for the persistent collective the program
/// just made on `comm` under `user` and files it, where every rank has
/// room (else a region only, on every rank alike). Its time is heisen's:
/// the program's initialisation makes no collective call (R1).
fn bind(comm: MPI_Comm, shape: Shape, user: MPI_Request) {
    let before = merge::now();
    let room = take_room();
    // only a tracked one takes a context id of the MPI's
    let agreed = private::everywhere(comm, room);
    let own = match agreed {
        true if shape == Shape::Neighbours => private::topology_copy(comm),
        true => private::private_copy(comm),
        false => None,
    };
    let mut buffers = Box::new(Buffers::new(shape, &None, 0));
    let mut extra = sys::request_null();
    // SAFETY: the buffers are boxed and move into the entry (the box's
    // contents do not move) until the request is freed; `own` is ours.
    let made = own.filter(|&c| unsafe {
        buffers.exchange(shape, c, Post::Persistent(&mut extra)) == sys::success()
    });
    // A step after the agreement may fail on one rank only (no memory
    // left): then no rank keeps it. Asked only where all agreed, as every
    // rank then is here (a rank whose initialisation failed agreed on no
    // room and made one allreduce only).
    let everywhere = agreed && private::everywhere(comm, made.is_some());
    let Some(own) = made.filter(|_| everywhere) else {
        // SAFETY: our own request and communicator, never started.
        unsafe {
            if extra != sys::request_null() {
                sys::PMPI_Request_free(&mut extra);
            }
            if let Some(mut c) = own {
                sys::PMPI_Comm_free(&mut c);
            }
        }
        if room {
            give_room();
        }
        UNTRACKED.fetch_add(1, Ordering::Relaxed);
        UNMERGED.fetch_add(1, Ordering::Relaxed);
        merge::charge_since(before);
        return;
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
    requests::table().file_persistent(user, entry);
    merge::charge_since(before);
}
