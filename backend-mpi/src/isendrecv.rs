//! `MPI_Isendrecv` and `MPI_Isendrecv_replace` (MPI-4.0 §3.10.3, §3.10.4)
//! and their `_c` forms, built from heisen's own nonblocking receive and
//! send so that both messages carry records (R3) like any other
//! point-to-point message, and interoperate with `MPI_Recv`, `MPI_Send` …
//! on the other side. (MPICH 4.0.2's own `MPI_Isendrecv` is not usable
//! underneath: with derived types it releases a type once too often, and
//! it fails on `MPI_PROC_NULL` peers; see the README.)
//!
//! The program gets one request: a generalized request (§13.2) whose
//! state holds the two inner requests. The completion wrappers (`Wait*`,
//! `Test*`, `Request_get_status`, `Request_free`) see such a request
//! before they call the MPI and [`advance`] it: they complete its inner
//! requests through heisen's own completion (the receive's record merged
//! there, R4/R5), then call `MPI_Grequest_complete`, after which the MPI
//! completes the outer request as any other. Its status is the receive's
//! (source, tag, count; §3.10.3), given by the query callback.
//!
//! `_replace` packs the outgoing data (`MPI_Pack`, the datatype's own type
//! map: `MPI_BOTTOM` and derived types included) into a buffer the pair
//! owns and sends it as `MPI_PACKED`, while the receive lands in the
//! program's buffer.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicUsize, Ordering};
use std::collections::HashMap;
use std::sync::Mutex;

use crate::completion;
use crate::large::narrowed;
use crate::nonblocking::{Post, recv_posted, send_posted};
use crate::region::{self, Named};
use crate::setup::{Mpi, ensure};
use crate::sys::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Request, MPI_Status};

/// One exchange in flight: what the generalized request's callbacks and
/// the completion wrappers share.
struct Pair {
    inner: Mutex<Inner>,
}

struct Inner {
    /// The receive's and the send's requests (`MPI_REQUEST_NULL` once
    /// completed).
    requests: [MPI_Request; 2],
    /// Both completed and the outer request marked complete.
    done: bool,
    /// A thread is completing the inner requests now.
    busy: bool,
    /// The receive's status, for the query callback.
    status: MPI_Status,
    /// The first error of the two, returned by the query callback.
    error: c_int,
    /// `_replace`: the packed outgoing data, alive until the send completes.
    packed: Vec<u8>,
    /// The receive is from `MPI_PROC_NULL`.
    null_source: bool,
}

// SAFETY: MPI handles and statuses are plain values any thread may use
// under MPI_THREAD_MULTIPLE; the pair is only reached through its mutex.
unsafe impl Send for Inner {}

/// Pending exchanges by their outer request's handle. Each points at the
/// `Pair` the generalized request owns (freed by its free callback, which
/// the MPI runs only after `MPI_Grequest_complete`, by which time the
/// entry has left the map).
static PAIRS: Mutex<Option<HashMap<u64, usize>>> = Mutex::new(None);

/// Entries in [`PAIRS`]: a completion wrapper of a program that never
/// calls `MPI_Isendrecv` checks this one atomic and nothing else.
static PENDING: AtomicUsize = AtomicUsize::new(0);

fn pairs() -> std::sync::MutexGuard<'static, Option<HashMap<u64, usize>>> {
    PAIRS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The pending pair behind `request`, if it is one.
fn lookup(request: MPI_Request) -> Option<&'static Pair> {
    if PENDING.load(Ordering::Acquire) == 0 {
        return None;
    }
    let address = *pairs().as_ref()?.get(&sys::key(request))?;
    // SAFETY: an address in the map is a live `Pair` (see PAIRS).
    Some(unsafe { &*(address as *const Pair) })
}

// ----- the generalized request's callbacks (MPI-4.0 §13.2) -----------------

/// Query: the receive's status and the exchange's error.
unsafe extern "C" fn query(state: *mut c_void, status: *mut MPI_Status) -> c_int {
    // SAFETY: `state` is the pair this request was started with; it lives
    // until the free callback.
    let pair = unsafe { &*state.cast::<Pair>() };
    let inner = pair.inner.lock().unwrap_or_else(|p| p.into_inner());
    if !status.is_null() {
        // SAFETY: the MPI passes a valid status.
        unsafe { *status = inner.status };
    }
    inner.error
}

/// Free: the pair's memory.
unsafe extern "C" fn free(state: *mut c_void) -> c_int {
    // SAFETY: the pair leaked at start, freed once, here.
    drop(unsafe { Box::from_raw(state.cast::<Pair>()) });
    sys::success()
}

/// Cancel: cancels the inner operations still pending; the exchange then
/// completes (cancelled or not) as the MPI decides (§3.8.4).
unsafe extern "C" fn cancel(state: *mut c_void, complete: c_int) -> c_int {
    if complete != 0 {
        return sys::success();
    }
    // SAFETY: as in `query`.
    let pair = unsafe { &*state.cast::<Pair>() };
    let inner = pair.inner.lock().unwrap_or_else(|p| p.into_inner());
    for r in inner.requests {
        if r != sys::request_null() {
            let mut r = r;
            // SAFETY: a live inner request of this pair.
            unsafe { sys::PMPI_Cancel(&mut r) };
        }
    }
    sys::success()
}

// ----- completion ---------------------------------------------------------------

/// Completes the inner requests of the pair behind `request` (waiting for
/// them when `wait`, testing them otherwise) and, once both are done,
/// marks the outer request complete. Returns whether `request` is a pair
/// that is done now (or was already).
fn advance_one(m: &Mpi, request: MPI_Request, wait: bool) -> bool {
    let Some(pair) = lookup(request) else {
        return false;
    };
    let mut requests = {
        let mut inner = pair.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.done {
            return true;
        }
        if inner.busy {
            // another thread completes it (the program's concurrent
            // calls on one request are its own business, §3.7.3)
            return false;
        }
        inner.busy = true;
        inner.requests
    };
    let mut statuses = [sys::empty_status(); 2];
    let (rc, done) = completion::settle(m, &mut requests, statuses.as_mut_ptr(), wait);
    let mut inner = pair.inner.lock().unwrap_or_else(|p| p.into_inner());
    inner.busy = false;
    inner.requests = requests;
    if !done {
        return false;
    }
    let error = if rc == sys::err_in_status() {
        statuses
            .iter()
            .map(|s| s.MPI_ERROR)
            .find(|&e| e != sys::success())
            .unwrap_or(sys::success())
    } else {
        rc
    };
    inner.status = statuses[0];
    if inner.null_source {
        // MPI-4.0 §3.11: source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0.
        // MPICH 4.0.2 leaves a nonblocking receive's status from
        // MPI_PROC_NULL at zeroes (its blocking one is right).
        inner.status.MPI_SOURCE = sys::proc_null();
        inner.status.MPI_TAG = sys::any_tag();
        crate::status::set_payload(&mut inner.status, 0);
    }
    inner.status.MPI_ERROR = error;
    inner.error = error;
    inner.done = true;
    inner.packed = Vec::new();
    drop(inner);
    if let Some(map) = pairs().as_mut()
        && map.remove(&sys::key(request)).is_some()
    {
        PENDING.fetch_sub(1, Ordering::AcqRel);
    }
    // SAFETY: the program's live generalized request; after this the MPI
    // may run the free callback (the pair has left the map).
    unsafe { sys::PMPI_Grequest_complete(request) };
    true
}

/// Advances the pending exchanges among `requests` (see [`advance_one`]);
/// returns whether any of them is still pending. Cheap when the process
/// has none.
pub fn advance(requests: &[MPI_Request], wait: bool) -> bool {
    if PENDING.load(Ordering::Acquire) == 0 {
        return false;
    }
    let Some(m) = ensure() else { return false };
    let mut pending = false;
    for &r in requests {
        if lookup(r).is_some() && !advance_one(m, r, wait) {
            pending = true;
        }
    }
    pending
}

/// `MPI_Request_free` of a pending exchange (§3.7.3): the inner requests
/// are freed through heisen's `MPI_Request_free` (which keeps their
/// record memory until they complete), the packed data is kept for good
/// (the send may still read it; one buffer per exchange freed while
/// active), and the outer request is completed so the MPI frees it.
pub fn free_pending(request: *mut MPI_Request) -> Option<c_int> {
    // SAFETY: the program's request.
    let handle = unsafe { *request };
    let pair = lookup(handle)?;
    let mut inner = pair.inner.lock().unwrap_or_else(|p| p.into_inner());
    if inner.done || inner.busy {
        return None;
    }
    for r in inner.requests.iter_mut() {
        if *r != sys::request_null() {
            // SAFETY: a live inner request; heisen's own free keeps what
            // the operation still needs.
            unsafe { crate::persistent::MPI_Request_free(r) };
        }
    }
    core::mem::forget(core::mem::take(&mut inner.packed));
    inner.done = true;
    inner.error = sys::success();
    drop(inner);
    if let Some(map) = pairs().as_mut()
        && map.remove(&sys::key(handle)).is_some()
    {
        PENDING.fetch_sub(1, Ordering::AcqRel);
    }
    // SAFETY: the program's generalized request, then freed as it asked.
    unsafe {
        sys::PMPI_Grequest_complete(handle);
        Some(sys::PMPI_Request_free(request))
    }
}

// ----- posting ---------------------------------------------------------------------

/// The receive and the send of one exchange: posts the receive into
/// `(recvbuf, recvcount, recvtype)`, then the send of `(sendbuf,
/// sendcount, sendtype)`, and hands the program a generalized request for
/// both. `packed`: the buffer `sendbuf` points into (`_replace`).
fn start(
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
    packed: Vec<u8>,
    request: *mut MPI_Request,
) -> c_int {
    let mut inner_requests = [sys::request_null(); 2];
    let [recv, send] = &mut inner_requests;
    let rc = if source == sys::proc_null() {
        // SAFETY: the program's arguments; completes at once.
        unsafe { sys::PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, recv) }
    } else {
        let wildcard = source == sys::any_source();
        recv_posted(
            region,
            Post::Now,
            wildcard,
            recvbuf,
            recvcount,
            recvtype,
            recv,
            |b, c, t, r| {
                // SAFETY: a buffer and type heisen made for the program's receive.
                unsafe { sys::PMPI_Irecv(b.cast_mut(), c, t, source, recvtag, comm, r) }
            },
        )
    };
    if rc != sys::success() {
        return rc;
    }
    let rc = if dest == sys::proc_null() {
        // SAFETY: the program's arguments; completes at once.
        unsafe { sys::PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, send) }
    } else {
        send_posted(
            m,
            region,
            Post::Now,
            sys::PMPI_Isend,
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            comm,
            send,
        )
    };
    if rc != sys::success() {
        // The send failed: the receive stays posted, as the standard
        // leaves it undefined; the program sees the error.
        return rc;
    }
    let pair = Box::new(Pair {
        inner: Mutex::new(Inner {
            requests: inner_requests,
            done: false,
            busy: false,
            status: sys::empty_status(),
            error: sys::success(),
            packed,
            null_source: source == sys::proc_null(),
        }),
    });
    let state = Box::into_raw(pair);
    // SAFETY: callbacks of this module; `state` is freed by `free`.
    let rc = unsafe {
        sys::PMPI_Grequest_start(Some(query), Some(free), Some(cancel), state.cast(), request)
    };
    if rc != sys::success() {
        // SAFETY: not handed to the MPI.
        drop(unsafe { Box::from_raw(state) });
        return rc;
    }
    let mut map = pairs();
    // SAFETY: the MPI wrote the request handle.
    let key = sys::key(unsafe { *request });
    map.get_or_insert_with(HashMap::new)
        .insert(key, state as usize);
    PENDING.fetch_add(1, Ordering::AcqRel);
    rc
}

/// `MPI_Isendrecv` with `int` counts, measured.
fn isendrecv(
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
    request: *mut MPI_Request,
) -> c_int {
    region::call(region, || {
        start(
            m,
            region,
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount,
            recvtype,
            source,
            recvtag,
            comm,
            Vec::new(),
            request,
        )
    })
}

/// `MPI_Isendrecv_replace` with an `MPI_Count` count, measured: the
/// outgoing data packed first (§3.10.4: the send reads the buffer before
/// the receive writes it).
fn isendrecv_replace(
    m: &Mpi,
    region: &'static Named,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    region::call(region, || {
        let (packed, position) = if dest == sys::proc_null() {
            (Vec::new(), 0)
        } else {
            match pack(buf, count, datatype, comm) {
                Ok(p) => p,
                Err(rc) => return rc,
            }
        };
        let sendbuf: *const c_void = packed.as_ptr().cast();
        narrowed(position, sys::packed(), |sc, st| {
            narrowed(count, datatype, |rc, rt| {
                start(
                    m, region, sendbuf, sc, st, dest, sendtag, buf, rc, rt, source, recvtag, comm,
                    packed, request,
                )
            })
        })
    })
}

/// `count × datatype` at `buf` packed (`MPI_Pack`, the type map's order):
/// the bytes and their length.
fn pack(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
) -> Result<(Vec<u8>, MPI_Count), c_int> {
    let mut size: MPI_Count = 0;
    // SAFETY: writes `size` only.
    let rc = unsafe { sys::PMPI_Pack_size_c(count, datatype, comm, &mut size) };
    if rc != sys::success() {
        return Err(rc);
    }
    let mut packed = vec![0u8; usize::try_from(size).unwrap_or(0)];
    let mut position: MPI_Count = 0;
    // MPICH 4.0.2's MPI_Pack refuses a null input buffer, MPI_BOTTOM
    // included ("Invalid argument"), even for a type of absolute
    // addresses: such data is packed from a non-null anchor through a
    // type displaced by minus the anchor's address (MPI-4.0 §5.1.12:
    // the same absolute addresses).
    static ANCHOR: u8 = 0;
    let shifted = if buf.is_null() && count != 0 {
        let mut anchor: sys::MPI_Aint = 0;
        let mut t = datatype;
        // SAFETY: computes an address; creates and commits a type from
        // one-entry arrays; writes `anchor` and `t` only.
        let rc = unsafe {
            sys::PMPI_Get_address((&raw const ANCHOR).cast(), &mut anchor);
            let rc = sys::PMPI_Type_create_hindexed_c(1, &count, &-anchor, datatype, &mut t);
            if rc == sys::success() {
                sys::PMPI_Type_commit(&mut t)
            } else {
                rc
            }
        };
        if rc != sys::success() {
            return Err(rc);
        }
        Some(t)
    } else {
        None
    };
    let (inbuf, incount, intype) = match shifted {
        Some(t) => ((&raw const ANCHOR).cast::<c_void>(), 1, t),
        None => (buf, count, datatype),
    };
    // SAFETY: `packed` holds `size` bytes; the program's buffer holds
    // `count × datatype` (at absolute addresses when shifted).
    let rc = unsafe {
        sys::PMPI_Pack_c(
            inbuf,
            incount,
            intype,
            packed.as_mut_ptr().cast(),
            size,
            &mut position,
            comm,
        )
    };
    if let Some(t) = shifted {
        crate::datatype::free(t);
    }
    if rc != sys::success() {
        return Err(rc);
    }
    Ok((packed, position))
}

// ----- the exports -------------------------------------------------------------------

/// `MPI_Isendrecv` (MPI-4.0 §3.10.3).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Isendrecv(
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
    request: *mut MPI_Request,
) -> c_int {
    let Some(m) = ensure() else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe {
            sys::PMPI_Isendrecv(
                sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                recvtag, comm, request,
            )
        };
    };
    static REGION: Named = Named::new("MPI_Isendrecv");
    isendrecv(
        m, &REGION, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
        source, recvtag, comm, request,
    )
}

/// `MPI_Isendrecv_c` (MPI-4.0 §3.10.3, large counts).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Isendrecv_c(
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
    request: *mut MPI_Request,
) -> c_int {
    let Some(m) = ensure() else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe {
            sys::PMPI_Isendrecv_c(
                sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                recvtag, comm, request,
            )
        };
    };
    static REGION: Named = Named::new("MPI_Isendrecv_c");
    narrowed(sendcount, sendtype, |sc, st| {
        narrowed(recvcount, recvtype, |rc, rt| {
            isendrecv(
                m, &REGION, sendbuf, sc, st, dest, sendtag, recvbuf, rc, rt, source, recvtag, comm,
                request,
            )
        })
    })
}

/// `MPI_Isendrecv_replace` (MPI-4.0 §3.10.4).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Isendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let Some(m) = ensure() else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe {
            sys::PMPI_Isendrecv_replace(
                buf, count, datatype, dest, sendtag, source, recvtag, comm, request,
            )
        };
    };
    static REGION: Named = Named::new("MPI_Isendrecv_replace");
    isendrecv_replace(
        m,
        &REGION,
        buf,
        MPI_Count::from(count),
        datatype,
        dest,
        sendtag,
        source,
        recvtag,
        comm,
        request,
    )
}

/// `MPI_Isendrecv_replace_c` (MPI-4.0 §3.10.4, large counts).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Isendrecv_replace_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let Some(m) = ensure() else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe {
            sys::PMPI_Isendrecv_replace_c(
                buf, count, datatype, dest, sendtag, source, recvtag, comm, request,
            )
        };
    };
    static REGION: Named = Named::new("MPI_Isendrecv_replace_c");
    isendrecv_replace(
        m, &REGION, buf, count, datatype, dest, sendtag, source, recvtag, comm, request,
    )
}
