//! heisen's own MPI calls at `MPI_Init` and `MPI_Finalize`, completed
//! without holding a core.
//!
//! MPICH's blocking calls spin until they complete. On a node with more
//! ranks than cores, a rank spinning in one of set-up's collectives takes
//! a core from the ranks that collective waits for, and each step waits
//! for a time slice: at 8 ranks on 2 cores set-up's dozen collectives
//! and ping-pongs took about 0.9 s on top of `MPI_Init`'s own 0.5 s. So
//! every call of set-up is made nonblocking and completed by [`wait`],
//! which tests the request, yielding the core between tests for
//! [`SPIN_NS`] (enough for a collective among ranks that each have a
//! core), then sleeps between tests, the sleeps growing to
//! [`MAX_POLL_SLEEP_NS`]. The program's own calls are never made this
//! way: only set-up's, whose latency nobody measures.

use core::ffi::{c_int, c_void};
use core::time::Duration;

use heisen_shmem::clock::monotonic_ns;

use crate::sys::{self, MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};

/// How long [`wait`] tests with only a yield in between, ns.
pub const SPIN_NS: u64 = 200_000;

/// First sleep between two tests after [`SPIN_NS`], ns; it doubles.
pub const FIRST_SLEEP_NS: u64 = 20_000;

/// Longest sleep between two tests, ns: short enough not to lengthen
/// set-up noticeably, long enough that dozens of waiting ranks leave the
/// cores to the ones the call waits for.
pub const MAX_POLL_SLEEP_NS: u64 = 1_000_000;

/// Completes `request` (module docs). MPI's return code.
pub fn wait(request: &mut MPI_Request) -> c_int {
    let start = monotonic_ns();
    let mut sleep = FIRST_SLEEP_NS;
    loop {
        let mut flag: c_int = 0;
        // SAFETY: the caller's active request.
        let rc = unsafe { sys::PMPI_Test(request, &mut flag, sys::status_ignore()) };
        if rc != sys::success() || flag != 0 {
            return rc;
        }
        if monotonic_ns().saturating_sub(start) < SPIN_NS {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_nanos(sleep));
            sleep = (sleep * 2).min(MAX_POLL_SLEEP_NS);
        }
    }
}

/// Completes the request a nonblocking call wrote, if it returned success.
fn started(rc: c_int, mut request: MPI_Request) -> c_int {
    if rc == sys::success() {
        wait(&mut request)
    } else {
        rc
    }
}

/// `MPI_Allreduce`, completed by [`wait`].
///
/// # Safety
/// As `MPI_Allreduce`'s arguments.
pub unsafe fn allreduce(
    send: *const c_void,
    recv: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    let mut request = sys::request_null();
    // SAFETY: the caller's arguments; completed before returning.
    let rc = unsafe { sys::PMPI_Iallreduce(send, recv, count, datatype, op, comm, &mut request) };
    started(rc, request)
}

/// `MPI_Allgather` of `count` elements of one type per rank, completed
/// by [`wait`].
///
/// # Safety
/// As `MPI_Allgather`'s arguments, with one count and type for both sides.
pub unsafe fn allgather(
    send: *const c_void,
    recv: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let mut request = sys::request_null();
    // SAFETY: the caller's arguments; completed before returning.
    let rc = unsafe {
        sys::PMPI_Iallgather(
            send,
            count,
            datatype,
            recv,
            count,
            datatype,
            comm,
            &mut request,
        )
    };
    started(rc, request)
}

/// `MPI_Bcast`, completed by [`wait`].
///
/// # Safety
/// As `MPI_Bcast`'s arguments.
pub unsafe fn bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let mut request = sys::request_null();
    // SAFETY: the caller's arguments; completed before returning.
    let rc = unsafe { sys::PMPI_Ibcast(buffer, count, datatype, root, comm, &mut request) };
    started(rc, request)
}

/// `MPI_Send`, completed by [`wait`].
///
/// # Safety
/// As `MPI_Send`'s arguments.
pub unsafe fn send(
    buffer: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let mut request = sys::request_null();
    // SAFETY: the caller's arguments; completed before returning.
    let rc = unsafe { sys::PMPI_Isend(buffer, count, datatype, dest, tag, comm, &mut request) };
    started(rc, request)
}

/// `MPI_Recv` with `MPI_STATUS_IGNORE`, completed by [`wait`].
///
/// # Safety
/// As `MPI_Recv`'s arguments.
pub unsafe fn recv(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let mut request = sys::request_null();
    // SAFETY: the caller's arguments; completed before returning.
    let rc = unsafe { sys::PMPI_Irecv(buffer, count, datatype, source, tag, comm, &mut request) };
    started(rc, request)
}

/// A duplicate of `comm` (`MPI_Comm_idup`, completed by [`wait`]).
pub fn dup(comm: MPI_Comm) -> Option<MPI_Comm> {
    let mut copy = sys::comm_world();
    let mut request = sys::request_null();
    // SAFETY: `copy` is valid once the request completes, which `started`
    // waits for.
    let rc = unsafe { sys::PMPI_Comm_idup(comm, &mut copy, &mut request) };
    (started(rc, request) == sys::success()).then_some(copy)
}
