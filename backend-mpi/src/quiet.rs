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
//!
//! Except under MPICH's fault tolerance (`MPIR_CVAR_ENABLE_FT`, and its
//! older names `MPIR_PARAM_ENABLE_FT`, `MPICH_ENABLE_FT`): MPICH 4.0.2's
//! ch4 device then aborts in `MPI_Test` or `MPI_Wait` of any request not
//! yet complete ("Assertion failed in ... ch4_request.h at line 16"), a
//! program's own included, so a correct program of blocking calls ran
//! plain and aborted in heisen's `MPI_Init` (MPICH's `ft` tests,
//! `comm/dup` with the variable set). Set-up's calls are then blocking
//! ([`blocking_only`]).

use core::ffi::{c_int, c_void};
use core::time::Duration;
use std::sync::OnceLock;

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

/// Whether MPICH runs with fault tolerance on, where heisen's own calls
/// must be blocking (module docs). MPICH reads the variable as a boolean:
/// `1`, `true`, `yes` or `on` (any case) turn it on (MPL's `env2bool`).
pub fn blocking_only() -> bool {
    static FT: OnceLock<bool> = OnceLock::new();
    *FT.get_or_init(|| {
        [
            "MPIR_CVAR_ENABLE_FT",
            "MPIR_PARAM_ENABLE_FT",
            "MPICH_ENABLE_FT",
        ]
        .iter()
        .find_map(|name| std::env::var(name).ok())
        .is_some_and(|v| truthy(&v))
    })
}

/// MPICH's reading of a boolean control variable's value.
fn truthy(value: &str) -> bool {
    let v = value.trim();
    ["1", "true", "yes", "on"]
        .iter()
        .any(|t| v.eq_ignore_ascii_case(t))
}

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
    if blocking_only() {
        // SAFETY: the caller's arguments.
        return unsafe { sys::PMPI_Allreduce(send, recv, count, datatype, op, comm) };
    }
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
    if blocking_only() {
        // SAFETY: the caller's arguments.
        return unsafe { sys::PMPI_Allgather(send, count, datatype, recv, count, datatype, comm) };
    }
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
    if blocking_only() {
        // SAFETY: the caller's arguments.
        return unsafe { sys::PMPI_Bcast(buffer, count, datatype, root, comm) };
    }
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
    if blocking_only() {
        // SAFETY: the caller's arguments.
        return unsafe { sys::PMPI_Send(buffer, count, datatype, dest, tag, comm) };
    }
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
    if blocking_only() {
        // SAFETY: the caller's arguments.
        return unsafe {
            sys::PMPI_Recv(
                buffer,
                count,
                datatype,
                source,
                tag,
                comm,
                sys::status_ignore(),
            )
        };
    }
    let mut request = sys::request_null();
    // SAFETY: the caller's arguments; completed before returning.
    let rc = unsafe { sys::PMPI_Irecv(buffer, count, datatype, source, tag, comm, &mut request) };
    started(rc, request)
}

/// A duplicate of `comm` (`MPI_Comm_idup`, completed by [`wait`]).
pub fn dup(comm: MPI_Comm) -> Option<MPI_Comm> {
    let mut copy = sys::comm_world();
    if blocking_only() {
        // SAFETY: writes `copy` on success.
        let rc = unsafe { sys::PMPI_Comm_dup(comm, &mut copy) };
        return (rc == sys::success()).then_some(copy);
    }
    let mut request = sys::request_null();
    // SAFETY: `copy` is valid once the request completes, which `started`
    // waits for.
    let rc = unsafe { sys::PMPI_Comm_idup(comm, &mut copy, &mut request) };
    (started(rc, request) == sys::success()).then_some(copy)
}

#[cfg(test)]
mod tests {
    use super::truthy;

    #[test]
    fn fault_tolerance_values_read_as_mpich_reads_them() {
        for on in ["1", "true", "TRUE", "Yes", "on", " 1 "] {
            assert!(truthy(on), "{on}");
        }
        for off in ["0", "false", "no", "", "off", "2", "maybe"] {
            assert!(!truthy(off), "{off}");
        }
    }
}
