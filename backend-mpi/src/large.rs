//! The large-count point-to-point calls (MPI-4.0 §3 with `MPI_Count`
//! counts, the `_c` bindings of §19.2): `MPI_Send_c` …, each the wrapper of
//! its `int` twin with the count narrowed, so that a message sent with one
//! form and received with the other carries its record the same way (R3:
//! every point-to-point path wrapped on both sides; the wire is the record,
//! then the data in the type map's order, whichever form posted it).
//!
//! A count that fits an `int` goes to the `int` wrapper as it is. A larger
//! one becomes one element of `MPI_Type_contiguous_c(count, datatype)`
//! (the same type map, so the same bytes on the wire, MPI-4.0 §5.1.2):
//! heisen's struct type then holds that element as it would hold
//! `count × datatype`. The contiguous type is freed once the call is
//! posted (MPI keeps a type alive while an operation or another type uses
//! it, §5.1.9). Unmeasured calls (no set-up, `MPI_PROC_NULL`) go to the
//! `_c` function itself, unchanged.
//!
//! Statuses need nothing of their own: `status::fix` sets the count with
//! the 64-bit call, which `MPI_Get_count_c` and `MPI_Get_elements_c` read.

use core::ffi::{c_int, c_void};

use crate::exchange;
use crate::nonblocking::{Post, posted_recv, posted_send};
use crate::p2p::{blocking_recv, blocking_send};
use crate::region::Named;
use crate::setup::ensure;
use crate::sys::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Message, MPI_Request, MPI_Status};

/// Runs `f` with `count × datatype` as an `int` count and a type: the
/// count itself when it fits, else one element of a contiguous type made
/// for the call and freed after it.
pub(crate) fn narrowed(
    count: MPI_Count,
    datatype: MPI_Datatype,
    f: impl FnOnce(c_int, MPI_Datatype) -> c_int,
) -> c_int {
    if let Ok(small) = c_int::try_from(count) {
        return f(small, datatype);
    }
    let mut whole = datatype;
    // SAFETY: writes `whole` only; an invalid count or type is an error.
    let rc = unsafe { sys::PMPI_Type_contiguous_c(count, datatype, &mut whole) };
    if rc != sys::success() {
        return rc;
    }
    // Committed: heisen may hand it to the MPI as a message's type.
    // SAFETY: a type just created.
    let rc = unsafe { sys::PMPI_Type_commit(&mut whole) };
    let rc = if rc == sys::success() {
        f(1, whole)
    } else {
        rc
    };
    crate::datatype::free(whole);
    rc
}

// ----- blocking sends --------------------------------------------------------

macro_rules! blocking_sends_c {
    ($($name:ident => $pmpi_c:ident, $pmpi:ident),* $(,)?) => {$(
        /// A blocking send with a large count (MPI-4.0 §3.2.1, §3.4).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: MPI_Count,
            datatype: MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
        ) -> c_int {
            if ensure().is_none() || dest == sys::proc_null() {
                // SAFETY: the program's arguments, unchanged.
                return unsafe { sys::$pmpi_c(buf, count, datatype, dest, tag, comm) };
            }
            static REGION: Named = Named::new(stringify!($name));
            narrowed(count, datatype, |c, t| {
                blocking_send(&REGION, sys::$pmpi, buf, c, t, dest, tag, comm)
            })
        }
    )*};
}

blocking_sends_c! {
    MPI_Send_c => PMPI_Send_c, PMPI_Send,
    MPI_Bsend_c => PMPI_Bsend_c, PMPI_Bsend,
    MPI_Ssend_c => PMPI_Ssend_c, PMPI_Ssend,
    MPI_Rsend_c => PMPI_Rsend_c, PMPI_Rsend,
}

// ----- blocking receives -----------------------------------------------------

/// `MPI_Recv_c` (MPI-4.0 §3.2.4).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Recv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let Some(m) = ensure().filter(|_| source != sys::proc_null()) else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe { sys::PMPI_Recv_c(buf, count, datatype, source, tag, comm, status) };
    };
    static REGION: Named = Named::new("MPI_Recv_c");
    let wildcard = source == sys::any_source();
    narrowed(count, datatype, |c, t| {
        blocking_recv(m, &REGION, buf, c, t, wildcard, status, |b, c, t, s| {
            // SAFETY: a buffer and type from recv_joined, the program's peer.
            unsafe { sys::PMPI_Recv(b, c, t, source, tag, comm, s) }
        })
    })
}

/// `MPI_Mrecv_c` (MPI-4.0 §3.8.3).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Mrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the program's handle pointer.
    let no_proc = message.is_null() || unsafe { *message } == sys::message_no_proc();
    let Some(m) = ensure().filter(|_| !no_proc) else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe { sys::PMPI_Mrecv_c(buf, count, datatype, message, status) };
    };
    static REGION: Named = Named::new("MPI_Mrecv_c");
    narrowed(count, datatype, |c, t| {
        blocking_recv(m, &REGION, buf, c, t, false, status, |b, c, t, s| {
            // SAFETY: as in MPI_Recv_c.
            unsafe { sys::PMPI_Mrecv(b, c, t, message, s) }
        })
    })
}

// ----- nonblocking and persistent ----------------------------------------------

macro_rules! posted_sends_c {
    ($($name:ident => $pmpi_c:ident, $pmpi:ident, $how:ident);* $(;)?) => {$(
        /// A nonblocking or persistent send with a large count (MPI-4.0
        /// §3.7.2, §3.9).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: MPI_Count,
            datatype: MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> c_int {
            if ensure().is_none() || dest == sys::proc_null() {
                // SAFETY: the program's arguments, unchanged.
                return unsafe { sys::$pmpi_c(buf, count, datatype, dest, tag, comm, request) };
            }
            static REGION: Named = Named::new(stringify!($name));
            narrowed(count, datatype, |c, t| {
                posted_send(&REGION, Post::$how, sys::$pmpi, buf, c, t, dest, tag, comm, request)
            })
        }
    )*};
}

posted_sends_c! {
    MPI_Isend_c => PMPI_Isend_c, PMPI_Isend, Now;
    MPI_Ibsend_c => PMPI_Ibsend_c, PMPI_Ibsend, Now;
    MPI_Issend_c => PMPI_Issend_c, PMPI_Issend, Now;
    MPI_Irsend_c => PMPI_Irsend_c, PMPI_Irsend, Now;
    MPI_Send_init_c => PMPI_Send_init_c, PMPI_Send_init, Persistent;
    MPI_Bsend_init_c => PMPI_Bsend_init_c, PMPI_Bsend_init, Persistent;
    MPI_Ssend_init_c => PMPI_Ssend_init_c, PMPI_Ssend_init, Persistent;
    MPI_Rsend_init_c => PMPI_Rsend_init_c, PMPI_Rsend_init, Persistent;
}

macro_rules! posted_recvs_c {
    ($($name:ident => $pmpi_c:ident, $pmpi:ident, $how:ident);* $(;)?) => {$(
        /// A nonblocking or persistent receive with a large count (MPI-4.0
        /// §3.7.2, §3.9).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            buf: *mut c_void,
            count: MPI_Count,
            datatype: MPI_Datatype,
            source: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> c_int {
            if ensure().is_none() || source == sys::proc_null() {
                // SAFETY: the program's arguments, unchanged.
                return unsafe { sys::$pmpi_c(buf, count, datatype, source, tag, comm, request) };
            }
            static REGION: Named = Named::new(stringify!($name));
            let wildcard = source == sys::any_source();
            narrowed(count, datatype, |c, t| {
                posted_recv(&REGION, Post::$how, wildcard, buf, c, t, request, |b, c, t, r| {
                    // SAFETY: a joined type from MPI_BOTTOM and the program's request.
                    unsafe { sys::$pmpi(b.cast_mut(), c, t, source, tag, comm, r) }
                })
            })
        }
    )*};
}

posted_recvs_c! {
    MPI_Irecv_c => PMPI_Irecv_c, PMPI_Irecv, Now;
    MPI_Recv_init_c => PMPI_Recv_init_c, PMPI_Recv_init, Persistent;
}

/// `MPI_Imrecv_c` (MPI-4.0 §3.8.3).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Imrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the program's handle pointer.
    let no_proc = message.is_null() || unsafe { *message } == sys::message_no_proc();
    if ensure().is_none() || no_proc {
        // SAFETY: the program's arguments, unchanged.
        return unsafe { sys::PMPI_Imrecv_c(buf, count, datatype, message, request) };
    }
    static REGION: Named = Named::new("MPI_Imrecv_c");
    narrowed(count, datatype, |c, t| {
        posted_recv(
            &REGION,
            Post::Now,
            false,
            buf,
            c,
            t,
            request,
            |b, c, t, r| {
                // SAFETY: as in MPI_Irecv_c.
                unsafe { sys::PMPI_Imrecv(b.cast_mut(), c, t, message, r) }
            },
        )
    })
}

// ----- exchanges -------------------------------------------------------------

/// `MPI_Sendrecv_c` (MPI-4.0 §3.10.1).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Sendrecv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    st: *mut MPI_Status,
) -> c_int {
    let Some(m) = ensure() else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe {
            sys::PMPI_Sendrecv_c(
                sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                recvtag, comm, st,
            )
        };
    };
    static REGION: Named = Named::new("MPI_Sendrecv_c");
    narrowed(sendcount, sendtype, |sc, stype| {
        narrowed(recvcount, recvtype, |rc, rtype| {
            exchange::sendrecv(
                m, &REGION, sendbuf, sc, stype, dest, sendtag, recvbuf, rc, rtype, source, recvtag,
                comm, st,
            )
        })
    })
}

/// `MPI_Sendrecv_replace_c` (MPI-4.0 §3.10.2).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Sendrecv_replace_c(
    buf: *mut c_void,
    count: MPI_Count,
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
            sys::PMPI_Sendrecv_replace_c(
                buf, count, datatype, dest, sendtag, source, recvtag, comm, st,
            )
        };
    };
    static REGION: Named = Named::new("MPI_Sendrecv_replace_c");
    narrowed(count, datatype, |c, t| {
        exchange::sendrecv_replace(
            m, &REGION, buf, c, t, dest, sendtag, source, recvtag, comm, st,
        )
    })
}
