//! `MPI_Sendrecv` and `MPI_Sendrecv_replace` (MPI-4.0 §3.10): one record
//! out, one in, each joined with its data by a struct type. With
//! `_replace` both travel in the same record memory, as the data share the
//! program's buffer: the MPI sends the outgoing record before the incoming
//! one overwrites it.

use core::ffi::{c_int, c_void};

use crate::datatype;
use crate::large::{Count, exchanges, replaces};
use crate::merge::{self, Received};
use crate::p2p::delivered;
use crate::piggyback::{self, LEN, Wire};
use crate::region::{self, Named};
use crate::setup::Mpi;
use crate::status;
use crate::sys::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Status};

/// Merges what an exchange received (none from `MPI_PROC_NULL`): the
/// record in `wire` (none when it is not a whole record); `seen`: the
/// program sees `st` (its count is fixed).
fn merge_in(
    m: &Mpi,
    region: &'static Named,
    begin: Option<u64>,
    wire: &[u8],
    rc: c_int,
    st: *mut MPI_Status,
    seen: bool,
    source: c_int,
) {
    if !delivered(rc) || source == sys::proc_null() {
        return;
    }
    if let Some(bytes) = status::fix_if(st, seen)
        && let Some(begin) = begin
    {
        let mut message = Received {
            record: None,
            site: region.id(),
            wildcard: source == sys::any_source(),
            bytes,
            // SAFETY: the MPI wrote the status.
            source: unsafe { (*st).MPI_SOURCE },
        };
        piggyback::unpack_into(wire, &mut message.record);
        merge::received(m, begin, core::slice::from_ref(&message));
    }
}

/// `MPI_Sendrecv`'s measured part with `int` counts, in region `region`.
fn sendrecv(
    m: &Mpi,
    region: &'static Named,
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
    region::call(region, || {
        // Both halves small and contiguous: staged, as a blocking send and
        // receive are (two struct types per call cost about 1.4 µs here).
        if let (Some(out_bytes), Some(in_bytes)) = (
            datatype::stageable(sendbuf, sendcount, sendtype),
            datatype::stageable(recvbuf, recvcount, recvtype),
        ) && let Some(rc) = datatype::with_both_stages(|out, inb| {
            staged_sendrecv(
                m,
                region,
                (out, out_bytes),
                sendbuf,
                dest,
                sendtag,
                (inb, in_bytes),
                recvbuf,
                source,
                recvtag,
                comm,
                st,
            )
        }) {
            return rc;
        }
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
        merge_in(m, region, begin, &inw, rc, status, status::seen(st), source);
        rc
    })
}

/// `MPI_Sendrecv` through the thread's two staging buffers: the record
/// encoded in front of the outgoing data, the incoming record and data
/// copied out when the MPI delivered them whole (on a truncation MPICH
/// writes nothing, so nothing is copied or merged, as `recv_joined` does).
#[allow(clippy::too_many_arguments)] // reason: MPI_Sendrecv's own arguments
fn staged_sendrecv(
    m: &Mpi,
    region: &'static Named,
    (out, out_bytes): (&mut [u8], usize),
    sendbuf: *const c_void,
    dest: c_int,
    sendtag: c_int,
    (inb, in_bytes): (&mut [u8], usize),
    recvbuf: *mut c_void,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    st: *mut MPI_Status,
) -> c_int {
    if let Ok(wire) = <&mut Wire>::try_from(&mut out[..LEN]) {
        merge::release(m, wire);
    }
    if out_bytes > 0 {
        // SAFETY: a predefined datatype: `out_bytes` contiguous bytes.
        let data = unsafe { core::slice::from_raw_parts(sendbuf.cast::<u8>(), out_bytes) };
        out[LEN..LEN + out_bytes].copy_from_slice(data);
    }
    let mut scratch = sys::empty_status();
    let status = status::or_scratch(st, &mut scratch);
    let begin = merge::begin(m);
    // SAFETY: both staging buffers hold LEN + their bytes.
    let rc = unsafe {
        sys::PMPI_Sendrecv(
            out.as_ptr().cast(),
            (LEN + out_bytes) as c_int,
            sys::byte(),
            dest,
            sendtag,
            inb.as_mut_ptr().cast(),
            (LEN + in_bytes) as c_int,
            sys::byte(),
            source,
            recvtag,
            comm,
            status,
        )
    };
    // the record decoded where it landed (no copy of it)
    let mut wire: &[u8] = &[];
    if rc == sys::success()
        && source != sys::proc_null()
        && let Some(got) = status::wire_bytes(status).filter(|&g| g >= LEN)
    {
        let payload = (got - LEN).min(in_bytes);
        if payload > 0 {
            // SAFETY: the program's buffer holds `in_bytes` bytes of a
            // predefined datatype; `payload <= in_bytes`.
            unsafe {
                core::ptr::copy_nonoverlapping(inb[LEN..].as_ptr(), recvbuf.cast::<u8>(), payload);
            }
        }
        wire = &inb[..LEN];
    }
    merge_in(m, region, begin, wire, rc, status, status::seen(st), source);
    rc
}

/// `MPI_Sendrecv_replace`'s measured part with an `int` count, in region
/// `region`.
fn sendrecv_replace(
    m: &Mpi,
    region: &'static Named,
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
    region::call(region, || {
        // Small and contiguous: as MPI_Sendrecv through both staging
        // buffers; the outgoing data is copied out of `buf` before the
        // incoming data is copied into it, as the replace requires.
        if let Some(bytes) = datatype::stageable(buf, count, datatype)
            && let Some(rc) = datatype::with_both_stages(|out, inb| {
                staged_sendrecv(
                    m,
                    region,
                    (out, bytes),
                    buf,
                    dest,
                    sendtag,
                    (inb, bytes),
                    buf,
                    source,
                    recvtag,
                    comm,
                    st,
                )
            })
        {
            return rc;
        }
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
        merge_in(
            m,
            region,
            begin,
            &wire,
            rc,
            status,
            status::seen(st),
            source,
        );
        rc
    })
}

// ----- the exports -------------------------------------------------------------

/// `MPI_Sendrecv` and `MPI_Sendrecv_c`'s measured body: the counts
/// narrowed, then [`sendrecv`].
fn sendrecv_counted<C: Count>(
    m: &Mpi,
    region: &'static Named,
    sendbuf: *const c_void,
    sendcount: C,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: C,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    st: *mut MPI_Status,
) -> c_int {
    sendcount.narrowed(sendtype, |sc, stype| {
        recvcount.narrowed(recvtype, |rc, rtype| {
            sendrecv(
                m, region, sendbuf, sc, stype, dest, sendtag, recvbuf, rc, rtype, source, recvtag,
                comm, st,
            )
        })
    })
}

exchanges! {
    "`MPI_Sendrecv` (MPI-4.0 §3.10.1; `_c`: §19.2).", SENDRECV, sendrecv_counted,
    st: *mut MPI_Status;
    MPI_Sendrecv(c_int);
    MPI_Sendrecv_c(MPI_Count);
}

/// `MPI_Sendrecv_replace` and `_c`'s measured body: the count narrowed,
/// then [`sendrecv_replace`].
fn sendrecv_replace_counted<C: Count>(
    m: &Mpi,
    region: &'static Named,
    buf: *mut c_void,
    count: C,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    st: *mut MPI_Status,
) -> c_int {
    count.narrowed(datatype, |c, t| {
        sendrecv_replace(
            m, region, buf, c, t, dest, sendtag, source, recvtag, comm, st,
        )
    })
}

replaces! {
    "`MPI_Sendrecv_replace` (MPI-4.0 §3.10.2; `_c`: §19.2).", SENDRECV_REPLACE,
    sendrecv_replace_counted, st: *mut MPI_Status;
    MPI_Sendrecv_replace(c_int);
    MPI_Sendrecv_replace_c(MPI_Count);
}
