//! Point-to-point wrappers (issue items 1 and 2; MPI-4.0 §3), one generic
//! per call shape: blocking send (`Send`, `Bsend`, `Ssend`, `Rsend`),
//! blocking receive (`Recv`, `Mrecv`), nonblocking and persistent send
//! (`Isend` …, `Send_init` …), nonblocking and persistent receive
//! (`Irecv`, `Imrecv`, `Recv_init`), `Sendrecv`, `Sendrecv_replace`, and
//! the probes (`status::fix` on what they return).
//!
//! Every message is the sender's record followed by its data
//! (`datatype`); every receive merges the record it got (`merge`).
//! `MPI_PROC_NULL` peers pass straight through: no message moves.

use core::ffi::{c_int, c_void};

use crate::datatype::{self, Side};
use crate::large::{Count, MrecvFn, RecvFn};
use crate::merge::{self, Received};
use crate::piggyback::{self, LEN, Wire};
use crate::region::{self, Named};
use crate::setup::{Mpi, ensure};
use crate::status;
use crate::sys::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Message, MPI_Status};

/// A blocking send's `PMPI_*` function with `int` counts.
pub type SendFn = crate::large::SendFn<c_int>;

/// Whether a receive delivered a message: success, or a truncation (the
/// program gets the error and the data that fitted, as without heisen).
pub fn delivered(rc: c_int) -> bool {
    if rc == sys::success() {
        return true;
    }
    let mut class = 0;
    // SAFETY: writes `class` only.
    unsafe { sys::PMPI_Error_class(rc, &mut class) };
    class == sys::err_truncate()
}

/// Copies the `bytes` contiguous bytes at `buf` behind the record already
/// in `stage[..LEN]` and sends both as one message of bytes with `f`.
fn send_staged(
    f: SendFn,
    stage: &mut [u8],
    buf: *const c_void,
    bytes: usize,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    if bytes > 0 {
        // SAFETY: a predefined datatype (`datatype::stageable`): the
        // elements are `bytes` contiguous bytes at `buf` (MPI-4.0 §3.2.2).
        let data = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), bytes) };
        stage[LEN..LEN + bytes].copy_from_slice(data);
    }
    // SAFETY: the staging buffer holds LEN + bytes valid bytes.
    unsafe {
        f(
            stage.as_ptr().cast(),
            (LEN + bytes) as c_int,
            sys::byte(),
            dest,
            tag,
            comm,
        )
    }
}

/// Sends `wire` and `count × datatype` at `buf` as one message with `f`:
/// staged when small and contiguous, a struct type otherwise.
pub fn send_joined(
    f: SendFn,
    wire: &Wire,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    if let Some(bytes) = datatype::stageable(buf, count, datatype) {
        let staged = datatype::with_stage(Side::Send, |stage| {
            stage[..LEN].copy_from_slice(wire);
            send_staged(f, stage, buf, bytes, dest, tag, comm)
        });
        if let Some(rc) = staged {
            return rc;
        }
    }
    match datatype::joined_cached(wire.as_ptr(), buf, count, datatype) {
        Ok(t) => {
            // SAFETY: the joined type addresses the record and the
            // program's buffer absolutely, from MPI_BOTTOM.
            let rc = unsafe { f(sys::bottom(), 1, t.datatype, dest, tag, comm) };
            t.done();
            rc
        }
        Err(rc) => rc,
    }
}

/// Copies a staged message's payload (the `got` bytes the MPI wrote, the
/// record's `LEN` first) into the program's buffer of `bytes` bytes; a
/// longer payload is cut to the buffer, as a truncation error leaves it.
fn unstage(stage: &[u8], got: usize, buf: *mut c_void, bytes: usize) {
    let copied = (got - LEN).min(bytes);
    if copied > 0 {
        // SAFETY: the program's buffer holds `bytes` bytes of a predefined
        // datatype (`datatype::stageable`); `copied <= bytes`, and the
        // staging buffer holds `LEN + bytes` bytes.
        unsafe {
            core::ptr::copy_nonoverlapping(stage[LEN..].as_ptr(), buf.cast::<u8>(), copied);
        }
    }
}

/// Receives a record and `count × datatype` into `wire` and `buf` with
/// `call(buffer, count, datatype, status)`; `status` is never ignored.
pub fn recv_joined(
    wire: &mut Wire,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    call: impl FnOnce(*mut c_void, c_int, MPI_Datatype, *mut MPI_Status) -> c_int,
) -> c_int {
    let mut call = Some(call);
    if let Some(bytes) = datatype::stageable(buf, count, datatype) {
        let staged = datatype::with_stage(Side::Receive, |stage| {
            let call = call.take()?;
            let rc = call(
                stage.as_mut_ptr().cast(),
                (LEN + bytes) as c_int,
                sys::byte(),
                status,
            );
            // A truncated message: what the MPI wrote is its own business
            // (MPICH over UCX writes nothing); the staging buffer's bytes
            // are not the message's, so nothing is copied or merged.
            if rc == sys::success()
                && let Some(got) = status::wire_bytes(status).filter(|&g| g >= LEN)
            {
                wire.copy_from_slice(&stage[..LEN]);
                unstage(stage, got, buf, bytes);
            }
            Some(rc)
        });
        if let Some(Some(rc)) = staged {
            return rc;
        }
    }
    let Some(call) = call else {
        return sys::err_intern();
    };
    match datatype::joined_cached(wire.as_ptr(), buf, count, datatype) {
        Ok(t) => {
            let rc = call(sys::bottom(), 1, t.datatype, status);
            t.done();
            rc
        }
        Err(rc) => rc,
    }
}

// ----- blocking sends --------------------------------------------------------

/// A blocking send of `count × datatype` through `f` (heisen's `int`
/// call), or unchanged through `plain` (the program's own) when it is not
/// measured.
pub(crate) fn blocking_send<C: Count>(
    region: &'static Named,
    plain: crate::large::SendFn<C>,
    f: SendFn,
    buf: *const c_void,
    count: C,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let Some(m) = ensure().filter(|_| dest != sys::proc_null()) else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe { plain(buf, count, datatype, dest, tag, comm) };
    };
    region::call(region, || {
        count.narrowed(datatype, |count, datatype| {
            send_measured(m, region, f, buf, count, datatype, dest, tag, comm)
        })
    })
}

/// [`blocking_send`]'s measured part with an `int` count.
fn send_measured(
    m: &Mpi,
    region: &'static Named,
    f: SendFn,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    // Small and contiguous: the record is encoded straight into the
    // staging buffer, in front of the data (no copy of the record).
    if let Some(bytes) = datatype::stageable(buf, count, datatype) {
        let staged = datatype::with_stage(Side::Send, |stage| {
            let wire: &mut Wire = (&mut stage[..LEN]).try_into().ok()?;
            let begin = merge::release(m, wire);
            let rc = send_staged(f, stage, buf, bytes, dest, tag, comm);
            merge::sent(region.id(), dest, bytes, begin);
            Some(rc)
        });
        if let Some(Some(rc)) = staged {
            return rc;
        }
    }
    datatype::with_record(Side::Send, |wire| {
        let begin = merge::release(m, wire);
        let rc = send_joined(f, wire, buf, count, datatype, dest, tag, comm);
        merge::sent(region.id(), dest, payload_bytes(count, datatype), begin);
        rc
    })
}

/// Bytes of `count × datatype` (for the report), 0 when unknown.
pub fn payload_bytes(count: c_int, datatype: MPI_Datatype) -> usize {
    // A zero count may come with any type, `MPI_DATATYPE_NULL` included,
    // whose query would be fatal (`datatype::stageable`).
    if count <= 0 {
        return 0;
    }
    let mut size: sys::MPI_Count = 0;
    // SAFETY: writes `size` only. 64-bit: a large-count type's size may
    // exceed `int` (`large`).
    unsafe { sys::PMPI_Type_size_x(datatype, &mut size) };
    (count.max(0) as usize).saturating_mul(usize::try_from(size).unwrap_or(0))
}

macro_rules! blocking_sends {
    ($($name:ident($count:ty) => $plain:ident, $pmpi:ident);* $(;)?) => {$(
        /// A blocking send (MPI-4.0 §3.2.1, §3.4; `_c`: §19.2): the
        /// record, then the data.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: $count,
            datatype: MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
        ) -> c_int {
            static REGION: Named = Named::new(stringify!($name));
            blocking_send(&REGION, sys::$plain, sys::$pmpi, buf, count, datatype, dest, tag, comm)
        }
    )*};
}

blocking_sends! {
    MPI_Send(c_int) => PMPI_Send, PMPI_Send;
    MPI_Bsend(c_int) => PMPI_Bsend, PMPI_Bsend;
    MPI_Ssend(c_int) => PMPI_Ssend, PMPI_Ssend;
    MPI_Rsend(c_int) => PMPI_Rsend, PMPI_Rsend;
    MPI_Send_c(MPI_Count) => PMPI_Send_c, PMPI_Send;
    MPI_Bsend_c(MPI_Count) => PMPI_Bsend_c, PMPI_Bsend;
    MPI_Ssend_c(MPI_Count) => PMPI_Ssend_c, PMPI_Ssend;
    MPI_Rsend_c(MPI_Count) => PMPI_Rsend_c, PMPI_Rsend;
}

// ----- blocking receives ---------------------------------------------------------

/// A blocking receive through `call`: stages or joins, fixes the status,
/// merges the record (R4/R5).
fn blocking_recv(
    m: &Mpi,
    region: &'static Named,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    wildcard: bool,
    user_status: *mut MPI_Status,
    call: impl FnOnce(*mut c_void, c_int, MPI_Datatype, *mut MPI_Status) -> c_int,
) -> c_int {
    region::call(region, || {
        let mut scratch = sys::empty_status();
        let status = status::or_scratch(user_status, &mut scratch);
        let mut call = Some(call);
        // Small and contiguous: received into the staging buffer, the
        // record decoded where it landed (no copy of it), one count query.
        if let Some(bytes) = datatype::stageable(buf, count, datatype) {
            let staged = datatype::with_stage(Side::Receive, |stage| {
                let call = call.take()?;
                let begin = merge::begin(m);
                let rc = call(
                    stage.as_mut_ptr().cast(),
                    (LEN + bytes) as c_int,
                    sys::byte(),
                    status,
                );
                let (whole, payload) = if rc == sys::success()
                    && let Some(got) = status::wire_bytes(status).filter(|&g| g >= LEN)
                {
                    let payload = got - LEN;
                    unstage(stage, got, buf, bytes);
                    if status::seen(user_status) {
                        status::set_payload(status, payload);
                    }
                    (true, Some(payload))
                } else if delivered(rc) {
                    // a truncation: MPICH wrote nothing; the staging bytes
                    // are not the message's, so nothing is copied or merged
                    (false, status::fix(status))
                } else {
                    (false, None)
                };
                if let (Some(bytes), Some(begin)) = (payload, begin) {
                    // SAFETY: the MPI wrote the status.
                    let source = unsafe { (*status).MPI_SOURCE };
                    let mut message = Received {
                        record: None,
                        site: region.id(),
                        wildcard,
                        bytes,
                        source,
                    };
                    if whole {
                        // decoded where it is merged (no move of it)
                        piggyback::unpack_into(&stage[..LEN], &mut message.record);
                    }
                    merge::received(m, begin, core::slice::from_ref(&message));
                }
                Some(rc)
            });
            if let Some(Some(rc)) = staged {
                return rc;
            }
        }
        let Some(call) = call else {
            return sys::err_intern();
        };
        datatype::with_record(Side::Receive, |wire| {
            *wire = piggyback::blank();
            let begin = merge::begin(m);
            let rc = recv_joined(wire, buf, count, datatype, status, call);
            if delivered(rc)
                && let Some(bytes) = status::fix_if(status, status::seen(user_status))
                && let Some(begin) = begin
            {
                // SAFETY: the MPI wrote the status.
                let source = unsafe { (*status).MPI_SOURCE };
                let mut message = Received {
                    record: None,
                    site: region.id(),
                    wildcard,
                    bytes,
                    source,
                };
                piggyback::unpack_into(wire, &mut message.record);
                merge::received(m, begin, core::slice::from_ref(&message));
            }
            rc
        })
    })
}

/// A blocking receive of the program's `count × datatype` (unmeasured:
/// `plain` with the program's arguments, or `None` for a receive from
/// `MPI_PROC_NULL`): the count narrowed, then [`blocking_recv`] through
/// `call`, heisen's `int` form.
fn receive<C: Count>(
    region: &'static Named,
    measured: bool,
    buf: *mut c_void,
    count: C,
    datatype: MPI_Datatype,
    wildcard: bool,
    status: *mut MPI_Status,
    plain: impl FnOnce() -> c_int,
    call: impl FnOnce(*mut c_void, c_int, MPI_Datatype, *mut MPI_Status) -> c_int,
) -> c_int {
    let Some(m) = ensure().filter(|_| measured) else {
        return plain();
    };
    count.narrowed(datatype, |c, t| {
        blocking_recv(m, region, buf, c, t, wildcard, status, call)
    })
}

/// `MPI_Recv` and `MPI_Recv_c`'s body.
fn recv<C: Count>(
    region: &'static Named,
    buf: *mut c_void,
    count: C,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let plain: RecvFn<C> = C::RECV;
    receive(
        region,
        source != sys::proc_null(),
        buf,
        count,
        datatype,
        source == sys::any_source(),
        status,
        // SAFETY: the program's arguments, unchanged.
        || unsafe { plain(buf, count, datatype, source, tag, comm, status) },
        // SAFETY: a buffer and type from recv_joined, the program's peer.
        |b, c, t, s| unsafe { sys::PMPI_Recv(b, c, t, source, tag, comm, s) },
    )
}

/// `MPI_Mrecv` and `MPI_Mrecv_c`'s body: the matched message, record
/// first.
fn mrecv<C: Count>(
    region: &'static Named,
    buf: *mut c_void,
    count: C,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the program's handle pointer.
    let no_proc = message.is_null() || unsafe { *message } == sys::message_no_proc();
    let plain: MrecvFn<C> = C::MRECV;
    receive(
        region,
        !no_proc,
        buf,
        count,
        datatype,
        false,
        status,
        // SAFETY: the program's arguments, unchanged.
        || unsafe { plain(buf, count, datatype, message, status) },
        // SAFETY: as in `recv`.
        |b, c, t, s| unsafe { sys::PMPI_Mrecv(b, c, t, message, s) },
    )
}

macro_rules! blocking_recvs {
    ($($name:ident($count:ty));* $(;)?) => {$(
        /// `MPI_Recv` (MPI-4.0 §3.2.4; `_c`: §19.2).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            buf: *mut c_void,
            count: $count,
            datatype: MPI_Datatype,
            source: c_int,
            tag: c_int,
            comm: MPI_Comm,
            status: *mut MPI_Status,
        ) -> c_int {
            static REGION: Named = Named::new(stringify!($name));
            recv(&REGION, buf, count, datatype, source, tag, comm, status)
        }
    )*};
}

blocking_recvs! {
    MPI_Recv(c_int);
    MPI_Recv_c(MPI_Count);
}

macro_rules! matched_recvs {
    ($($name:ident($count:ty));* $(;)?) => {$(
        /// `MPI_Mrecv` (MPI-4.0 §3.8.3; `_c`: §19.2).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            buf: *mut c_void,
            count: $count,
            datatype: MPI_Datatype,
            message: *mut MPI_Message,
            status: *mut MPI_Status,
        ) -> c_int {
            static REGION: Named = Named::new(stringify!($name));
            mrecv(&REGION, buf, count, datatype, message, status)
        }
    )*};
}

matched_recvs! {
    MPI_Mrecv(c_int);
    MPI_Mrecv_c(MPI_Count);
}
