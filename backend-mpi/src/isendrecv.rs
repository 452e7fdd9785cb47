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
//!
//! Bounded (R12): the wrappers find at most [`CAPACITY`] pending
//! exchanges by their request. An exchange posted beyond runs unmeasured
//! (both messages carry the empty record, the one received is not
//! merged) and completes through the MPI's poll callback of a generalized
//! request (MPICH's `MPIX_Grequest_start`), which needs no table; it is
//! counted (`overflow` in the report). A `_replace` exchange the program
//! frees while pending keeps its packed copy until its send completes,
//! in a list of [`KEPT`] entries swept at each new exchange.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use heapless::index_map::FnvIndexMap;

use crate::completion;
use crate::datatype;
use crate::large::{Count, exchanges, replaces};
use crate::nonblocking::{Post, recv_posted, send_posted};
use crate::piggyback;
use crate::region::{self, Named};
use crate::setup::{Mpi, ensure};
use crate::status;
use crate::sys::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Request, MPI_Status};

/// Pending exchanges the completion wrappers find by their request, at
/// most (R12); beyond, an exchange runs unmeasured (module doc).
pub const CAPACITY: usize = 256;

/// `_replace` exchanges freed by the program while pending whose send
/// still reads heisen's packed copy, kept at most; beyond, the copy is
/// kept for the rest of the run (counted `lost`).
pub const KEPT: usize = 256;

/// One exchange in flight: what the generalized request's callbacks and
/// the completion wrappers share.
struct Pair {
    inner: Mutex<Inner>,
}

struct Inner {
    /// The receive's and the send's requests (`MPI_REQUEST_NULL` once
    /// completed).
    requests: [MPI_Request; 2],
    /// The outer (generalized) request, once the MPI made it.
    outer: MPI_Request,
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

/// A freed `_replace` exchange's send still in flight, and the packed
/// data it reads.
struct Kept {
    send: MPI_Request,
    packed: Vec<u8>,
}

// SAFETY: as for `Inner`.
unsafe impl Send for Kept {}

/// The exchanges heisen tracks (R12: fixed capacities, overflow counted).
struct Pairs {
    /// Pending exchanges by their outer request's handle, each the address
    /// of the `Pair` the generalized request owns (freed by its free
    /// callback, which the MPI runs only after `MPI_Grequest_complete`, by
    /// which time the entry has left the map).
    pending: FnvIndexMap<u64, usize, CAPACITY>,
    /// Entries being posted (counted against the capacity).
    reserved: usize,
    /// Freed `_replace` exchanges whose send has not completed.
    kept: heapless::Vec<Kept, KEPT>,
    /// Most pending at once.
    peak: usize,
    /// Exchanges posted while the table was full (unmeasured).
    overflow: u64,
    /// Most kept at once.
    kept_peak: usize,
    /// Freed `_replace` exchanges beyond [`KEPT`]: their copy kept for the run.
    lost: u64,
}

static PAIRS: Mutex<Pairs> = Mutex::new(Pairs {
    pending: FnvIndexMap::new(),
    reserved: 0,
    kept: heapless::Vec::new(),
    peak: 0,
    overflow: 0,
    kept_peak: 0,
    lost: 0,
});

/// Entries in [`Pairs::pending`]: a completion wrapper of a program that
/// never calls `MPI_Isendrecv` checks this one atomic and nothing else.
static PENDING: AtomicUsize = AtomicUsize::new(0);

fn pairs() -> std::sync::MutexGuard<'static, Pairs> {
    PAIRS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The pending pair behind `request`, if it is one.
fn lookup(request: MPI_Request) -> Option<&'static Pair> {
    if PENDING.load(Ordering::Acquire) == 0 {
        return None;
    }
    let address = *pairs().pending.get(&sys::key(request))?;
    // SAFETY: an address in the map is a live `Pair` (see PAIRS).
    Some(unsafe { &*(address as *const Pair) })
}

/// Takes the pair behind `request` out of the map.
fn forget(request: MPI_Request) {
    if pairs().pending.remove(&sys::key(request)).is_some() {
        PENDING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The exchange table's figures for the report (R12).
#[derive(Clone, Copy, Debug)]
pub struct Figures {
    /// [`CAPACITY`].
    pub capacity: usize,
    /// Most exchanges pending at once in the table.
    pub peak: usize,
    /// Exchanges posted while it was full: they ran unmeasured.
    pub overflow: u64,
    /// [`KEPT`].
    pub kept_capacity: usize,
    /// Freed `_replace` exchanges whose packed copy is still kept now.
    pub kept: usize,
    /// Most kept at once.
    pub kept_peak: usize,
    /// Freed `_replace` exchanges beyond [`KEPT`]: copies kept for the run.
    pub lost: u64,
    /// The table's own memory (packed copies are the program's data's size).
    pub memory_bytes: usize,
}

/// The exchange table's figures; first completes the kept sends that
/// have completed (so `kept` counts those still in flight).
pub fn figures() -> Figures {
    if let Some(m) = ensure() {
        sweep_kept(m);
    }
    let p = pairs();
    Figures {
        capacity: CAPACITY,
        peak: p.peak,
        overflow: p.overflow,
        kept_capacity: KEPT,
        kept: p.kept.len(),
        kept_peak: p.kept_peak,
        lost: p.lost,
        memory_bytes: core::mem::size_of::<Pairs>(),
    }
}

/// Completes (tests, never waits) the kept sends and lets go of the
/// packed copies of those that completed.
fn sweep_kept(m: &Mpi) {
    let mut p = pairs();
    let mut i = 0;
    while i < p.kept.len() {
        let mut send = [p.kept[i].send];
        let mut st = sys::empty_status();
        // heisen's own completion: the send's request-table entry goes too
        let (_, done) = completion::settle(m, &mut send, &mut st, false);
        if done {
            drop(p.kept.swap_remove(i));
        } else {
            p.kept[i].send = send[0];
            i += 1;
        }
    }
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

/// Poll (MPICH's extension, `MPIX_Grequest_start`): an exchange beyond the
/// table, completed by the MPI's own `Wait*`/`Test*` of the outer request
/// calling this. Its inner requests are plain MPI requests (unmeasured,
/// not in heisen's tables): tested with `PMPI_Testall`, the receive's
/// status fixed to the program's count, nothing merged.
unsafe extern "C" fn poll(state: *mut c_void, _status: *mut MPI_Status) -> c_int {
    // SAFETY: as in `query`.
    let pair = unsafe { &*state.cast::<Pair>() };
    let mut inner = pair.inner.lock().unwrap_or_else(|p| p.into_inner());
    if inner.done || inner.outer == sys::request_null() {
        return sys::success();
    }
    let mut flag: c_int = 0;
    let mut statuses = [sys::empty_status(); 2];
    // SAFETY: the pair's two live (or null) inner requests; two statuses.
    let rc = unsafe {
        sys::PMPI_Testall(
            2,
            inner.requests.as_mut_ptr(),
            &mut flag,
            statuses.as_mut_ptr(),
        )
    };
    if flag == 0 && rc == sys::success() {
        return sys::success();
    }
    if !inner.null_source && !status::cancelled(&statuses[0]) {
        // the message carries a record: the program's own count
        status::fix(&mut statuses[0]);
    }
    inner.requests = [sys::request_null(); 2];
    finished(&mut inner, rc, &statuses);
    let outer = inner.outer;
    drop(inner);
    // SAFETY: the program's live generalized request.
    unsafe { sys::PMPI_Grequest_complete(outer) }
}

/// Wait (MPICH's extension; MPICH 4.0.2 refuses a null one): polls each
/// of the `count` exchanges once and returns; the MPI calls it again
/// until the requests it waits for are complete (it passes timeout 0).
unsafe extern "C" fn wait(
    count: c_int,
    states: *mut *mut c_void,
    _timeout: f64,
    _status: *mut MPI_Status,
) -> c_int {
    for i in 0..usize::try_from(count).unwrap_or(0) {
        // SAFETY: the MPI passes `count` states of requests started with
        // `poll` (this module's pairs).
        unsafe { poll(*states.add(i), core::ptr::null_mut()) };
    }
    sys::success()
}

// ----- completion ---------------------------------------------------------------

/// Records the end of an exchange whose inner requests completed with
/// `rc` and `statuses` (the receive's first): the status and error the
/// query callback gives, and the packed copy let go of.
fn finished(inner: &mut Inner, rc: c_int, statuses: &[MPI_Status; 2]) {
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
        status::set_payload(&mut inner.status, 0);
    }
    inner.status.MPI_ERROR = error;
    inner.error = error;
    inner.done = true;
    inner.packed = Vec::new();
}

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
    finished(&mut inner, rc, &statuses);
    drop(inner);
    forget(request);
    // SAFETY: the program's live generalized request; after this the MPI
    // may run the free callback (the pair has left the map).
    unsafe { sys::PMPI_Grequest_complete(request) };
    true
}

/// Advances the pending exchanges among `requests` (see `advance_one`);
/// returns whether any of them is still pending. Cheap when the process
/// has none.
#[inline]
pub fn advance(requests: &[MPI_Request], wait: bool) -> bool {
    if PENDING.load(Ordering::Acquire) == 0 {
        return false;
    }
    advance_pending(requests, wait)
}

/// [`advance`] when the process has pending exchanges.
#[cold]
#[inline(never)]
fn advance_pending(requests: &[MPI_Request], wait: bool) -> bool {
    let Some(m) = ensure() else { return false };
    let mut pending = false;
    for &r in requests {
        if lookup(r).is_some() && !advance_one(m, r, wait) {
            pending = true;
        }
    }
    pending
}

/// `MPI_Request_free` of a pending exchange (§3.7.3): the receive is
/// freed through heisen's `MPI_Request_free` (which keeps its record
/// memory until it completes); so is the send, unless it reads a packed
/// copy (`_replace`): then the send and the copy are kept until the send
/// completes (`sweep_kept`). The outer request is completed so the MPI
/// frees it.
pub fn free_pending(request: *mut MPI_Request) -> Option<c_int> {
    // SAFETY: the program's request.
    let handle = unsafe { *request };
    let pair = lookup(handle)?;
    let mut inner = pair.inner.lock().unwrap_or_else(|p| p.into_inner());
    if inner.done || inner.busy {
        return None;
    }
    let packed = core::mem::take(&mut inner.packed);
    let [recv, send] = &mut inner.requests;
    if *recv != sys::request_null() {
        // SAFETY: a live inner request; heisen's own free keeps what the
        // operation still needs.
        unsafe { crate::persistent::MPI_Request_free(recv) };
    }
    let mut keep = None;
    if *send != sys::request_null() {
        if packed.is_empty() {
            // SAFETY: as for the receive.
            unsafe { crate::persistent::MPI_Request_free(send) };
        } else {
            keep = Some(Kept {
                send: core::mem::replace(send, sys::request_null()),
                packed,
            });
        }
    }
    inner.done = true;
    inner.error = sys::success();
    drop(inner);
    forget(handle);
    if let Some(kept) = keep {
        let mut p = pairs();
        match p.kept.push(kept) {
            Ok(()) => p.kept_peak = p.kept_peak.max(p.kept.len()),
            Err(mut kept) => {
                // Beyond KEPT (R12): the send is freed, the copy it may
                // still read kept for the rest of the run, counted.
                p.lost += 1;
                drop(p);
                // SAFETY: as for the receive.
                unsafe { crate::persistent::MPI_Request_free(&mut kept.send) };
                core::mem::forget(kept.packed);
            }
        }
    }
    // SAFETY: the program's generalized request, then freed as it asked.
    unsafe {
        sys::PMPI_Grequest_complete(handle);
        Some(sys::PMPI_Request_free(request))
    }
}

// ----- posting ---------------------------------------------------------------------

/// Reserves a place in the table for an exchange about to be posted;
/// `false` (counted) when it is full.
fn reserve() -> bool {
    let mut p = pairs();
    if p.pending.len() + p.reserved >= CAPACITY {
        p.overflow += 1;
        return false;
    }
    p.reserved += 1;
    true
}

/// Posts `count × datatype` at `buf` behind the record at `record` through
/// `call(MPI_BOTTOM, 1, joined type)`; the type freed once posted.
fn framed(
    record: *const u8,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    call: impl FnOnce(*mut c_void, c_int, MPI_Datatype) -> c_int,
) -> c_int {
    match datatype::joined(record, buf, count, datatype) {
        Ok(t) => {
            let rc = call(sys::bottom(), 1, t);
            datatype::free(t);
            rc
        }
        Err(rc) => rc,
    }
}

/// One side of an exchange: buffer, count, type, peer, tag.
type Side<B> = (B, c_int, MPI_Datatype, c_int, c_int);

/// Posts the receive, then the send, of an exchange. `measured`: through
/// heisen's own nonblocking wrappers' parts (records taken and merged as
/// theirs). Otherwise (beyond the table) unmeasured: plain MPI requests
/// that heisen's tables do not hold, the send carrying the empty record,
/// the receive's record landing in the request table's scratch record
/// (R3: every message carries one, so the peer's receive, measured or
/// not, finds its data where it should). `MPI_PROC_NULL` sides pass
/// straight through.
fn post_both(
    measured: Option<(&Mpi, &'static Named)>,
    (sendbuf, sendcount, sendtype, dest, sendtag): Side<*const c_void>,
    (recvbuf, recvcount, recvtype, source, recvtag): Side<*mut c_void>,
    comm: MPI_Comm,
    [recv, send]: &mut [MPI_Request; 2],
) -> c_int {
    let irecv = |b: *mut c_void, c: c_int, t: MPI_Datatype, r: *mut MPI_Request| {
        // SAFETY: the program's arguments, or a buffer and type heisen
        // made for its receive.
        unsafe { sys::PMPI_Irecv(b, c, t, source, recvtag, comm, r) }
    };
    let rc = match measured {
        _ if source == sys::proc_null() => irecv(recvbuf, recvcount, recvtype, recv),
        Some((_, region)) => {
            let wildcard = source == sys::any_source();
            recv_posted(
                region,
                Post::Now,
                wildcard,
                recvbuf,
                recvcount,
                recvtype,
                recv,
                |b, c, t, r| irecv(b.cast_mut(), c, t, r),
            )
        }
        None => {
            let scratch = crate::requests::table().scratch();
            framed(scratch, recvbuf, recvcount, recvtype, |b, c, t| {
                irecv(b, c, t, recv)
            })
        }
    };
    if rc != sys::success() {
        return rc;
    }
    match measured {
        _ if dest == sys::proc_null() => {
            // SAFETY: the program's arguments; completes at once.
            unsafe { sys::PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, send) }
        }
        Some((m, region)) => send_posted(
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
        ),
        None => {
            let empty = piggyback::empty().as_ptr();
            framed(empty, sendbuf, sendcount, sendtype, |b, c, t| {
                // SAFETY: a joined type from MPI_BOTTOM over live memory;
                // the empty record is read-only.
                unsafe { sys::PMPI_Isend(b, c, t, dest, sendtag, comm, send) }
            })
        }
    }
}

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
    if !pairs().kept.is_empty() {
        sweep_kept(m);
    }
    let measured = reserve();
    let unreserve = || {
        if measured {
            pairs().reserved -= 1;
        }
    };
    let out = (sendbuf, sendcount, sendtype, dest, sendtag);
    let into = (recvbuf, recvcount, recvtype, source, recvtag);
    let mut inner_requests = [sys::request_null(); 2];
    let rc = post_both(
        measured.then_some((m, region)),
        out,
        into,
        comm,
        &mut inner_requests,
    );
    if rc != sys::success() {
        // A post failed: the receive stays posted, as the standard
        // leaves it undefined; the program sees the error.
        unreserve();
        return rc;
    }
    let pair = Box::new(Pair {
        inner: Mutex::new(Inner {
            requests: inner_requests,
            outer: sys::request_null(),
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
        if measured {
            sys::PMPI_Grequest_start(Some(query), Some(free), Some(cancel), state.cast(), request)
        } else {
            sys::PMPIX_Grequest_start(
                Some(query),
                Some(free),
                Some(cancel),
                Some(poll),
                Some(wait),
                state.cast(),
                request,
            )
        }
    };
    if rc != sys::success() {
        unreserve();
        // SAFETY: not handed to the MPI.
        drop(unsafe { Box::from_raw(state) });
        return rc;
    }
    // SAFETY: the MPI wrote the request handle.
    let handle = unsafe { *request };
    // SAFETY: `state` lives until the free callback, which runs only after
    // the outer request completed, which needs `outer` set (poll) or the
    // pair in the map (below).
    unsafe { &*state }
        .inner
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .outer = handle;
    if measured {
        let mut p = pairs();
        p.reserved -= 1;
        // Room was reserved: the insert cannot fail.
        if p.pending.insert(sys::key(handle), state as usize).is_ok() {
            PENDING.fetch_add(1, Ordering::AcqRel);
        }
        p.peak = p.peak.max(p.pending.len());
    }
    rc
}

/// `MPI_Isendrecv_replace` measured: the outgoing data packed first
/// (§3.10.4: the send reads the buffer before the receive writes it).
fn isendrecv_replace<C: Count>(
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
    request: *mut MPI_Request,
) -> c_int {
    region::call(region, || {
        let (packed, position) = if dest == sys::proc_null() {
            (Vec::new(), 0)
        } else {
            match pack(buf, count.wide(), datatype, comm) {
                Ok(p) => p,
                Err(rc) => return rc,
            }
        };
        let sendbuf: *const c_void = packed.as_ptr().cast();
        position.narrowed(sys::packed(), |sc, st| {
            count.narrowed(datatype, |rc, rt| {
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
    // No data whatever the type, `MPI_DATATYPE_NULL` included, which
    // `MPI_Pack_size` refuses (fatally, under the default handler).
    if count == 0 {
        return Ok((Vec::new(), 0));
    }
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

/// `MPI_Isendrecv` and `MPI_Isendrecv_c`'s measured body.
fn isendrecv<C: Count>(
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
    request: *mut MPI_Request,
) -> c_int {
    region::call(region, || {
        sendcount.narrowed(sendtype, |sc, st| {
            recvcount.narrowed(recvtype, |rc, rt| {
                start(
                    m,
                    region,
                    sendbuf,
                    sc,
                    st,
                    dest,
                    sendtag,
                    recvbuf,
                    rc,
                    rt,
                    source,
                    recvtag,
                    comm,
                    Vec::new(),
                    request,
                )
            })
        })
    })
}

exchanges! {
    "`MPI_Isendrecv` (MPI-4.0 §3.10.3; `_c`: §19.2).", ISENDRECV, isendrecv,
    request: *mut MPI_Request;
    MPI_Isendrecv(c_int);
    MPI_Isendrecv_c(MPI_Count);
}

replaces! {
    "`MPI_Isendrecv_replace` (MPI-4.0 §3.10.4; `_c`: §19.2).", ISENDRECV_REPLACE,
    isendrecv_replace, request: *mut MPI_Request;
    MPI_Isendrecv_replace(c_int);
    MPI_Isendrecv_replace_c(MPI_Count);
}
