//! `MPI_Sendrecv` and `MPI_Sendrecv_replace` (MPI-4.0 §3.10): one record
//! out, one in, each joined with its data by a struct type. With
//! `_replace` both travel in the same record memory, as the data share the
//! program's buffer: the MPI sends the outgoing record before the incoming
//! one overwrites it.

use core::ffi::{c_int, c_void};

use crate::datatype;
use crate::merge::{self, Received};
use crate::p2p::delivered;
use crate::piggyback::{self, Wire};
use crate::region::{self, Named};
use crate::setup::{Mpi, ensure};
use crate::status;
use crate::sys::{self, MPI_Comm, MPI_Datatype, MPI_Status};

/// Merges what an exchange received (none from `MPI_PROC_NULL`).
fn merge_in(
    m: &Mpi,
    region: &'static Named,
    begin: Option<u64>,
    wire: &Wire,
    rc: c_int,
    st: *mut MPI_Status,
    source: c_int,
) {
    if !delivered(rc) || source == sys::proc_null() {
        return;
    }
    if let Some(bytes) = status::fix(st)
        && let Some(begin) = begin
    {
        let message = Received {
            record: merge::record_of(wire),
            site: region.id(),
            wildcard: source == sys::any_source(),
            bytes,
            // SAFETY: the MPI wrote the status.
            source: unsafe { (*st).MPI_SOURCE },
        };
        merge::received(m, begin, &[message]);
    }
}

/// `MPI_Sendrecv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    st: *mut MPI_Status,
) -> c_int {
    let Some(m) = ensure() else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe {
            sys::PMPI_Sendrecv(
                sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                recvtag, comm, st,
            )
        };
    };
    static REGION: Named = Named::new("MPI_Sendrecv");
    region::call(&REGION, || {
        let (mut out, inw) = (piggyback::blank(), piggyback::blank());
        merge::release(m, &mut out);
        let send = match datatype::joined(out.as_ptr(), sendbuf, sendcount, sendtype) {
            Ok(t) => t,
            Err(rc) => return rc,
        };
        let recv = match datatype::joined(inw.as_ptr(), recvbuf, recvcount, recvtype) {
            Ok(t) => t,
            Err(rc) => {
                datatype::free(send);
                return rc;
            }
        };
        let mut scratch = sys::empty_status();
        let status = status::or_scratch(st, &mut scratch);
        let begin = merge::begin(m);
        // SAFETY: joined types from MPI_BOTTOM over live memory.
        let rc = unsafe {
            sys::PMPI_Sendrecv(
                sys::bottom(),
                1,
                send,
                dest,
                sendtag,
                sys::bottom(),
                1,
                recv,
                source,
                recvtag,
                comm,
                status,
            )
        };
        datatype::free(send);
        datatype::free(recv);
        merge_in(m, &REGION, begin, &inw, rc, status, source);
        rc
    })
}

/// `MPI_Sendrecv_replace`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    st: *mut MPI_Status,
) -> c_int {
    let Some(m) = ensure() else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe {
            sys::PMPI_Sendrecv_replace(
                buf, count, datatype, dest, sendtag, source, recvtag, comm, st,
            )
        };
    };
    static REGION: Named = Named::new("MPI_Sendrecv_replace");
    region::call(&REGION, || {
        let mut wire = piggyback::blank();
        merge::release(m, &mut wire);
        let t = match datatype::joined(wire.as_ptr(), buf, count, datatype) {
            Ok(t) => t,
            Err(rc) => return rc,
        };
        let mut scratch = sys::empty_status();
        let status = status::or_scratch(st, &mut scratch);
        let begin = merge::begin(m);
        // SAFETY: a joined type from MPI_BOTTOM over live memory.
        let rc = unsafe {
            sys::PMPI_Sendrecv_replace(
                sys::bottom(),
                1,
                t,
                dest,
                sendtag,
                source,
                recvtag,
                comm,
                status,
            )
        };
        datatype::free(t);
        merge_in(m, &REGION, begin, &wire, rc, status, source);
        rc
    })
}
