//! Completion calls (MPI-4.0 §3.7.3, §3.7.5, §3.9): `Wait`, `Waitall`,
//! `Waitany`, `Waitsome`, their `Test` twins, `Request_get_status`,
//! `Request_free`, `Start`, `Startall`. Each takes its requests' entries
//! out of the table before the MPI completes them (and sets the program's
//! handles to `MPI_REQUEST_NULL`), then finishes what completed: fixes the
//! status of a receive, merges the records received (R4, R5; R6's n-to-1
//! shape when several complete at once; seed 000 §4.3.2), runs a
//! registered [`Completion`](crate::requests::Completion), and puts back
//! what did not complete. A cancelled request merges nothing.
//! `MPI_Cancel` itself needs no wrapper.

use core::ffi::c_int;

use smallvec::SmallVec;

use crate::merge::{self, Received, ReceivedList};
use crate::p2p::delivered;
use crate::region::{self, Named};
use heisen_shmem::Record;

use crate::piggyback::{self, LEN, Wire};
use crate::requests::{Entry, Kind, Taken, TakenList, table};
use crate::setup::{Mpi, ensure};
use crate::status;
use crate::sys::{self, MPI_Request, MPI_Status};

/// The indices of the requests a multiple completion completed (no
/// allocation up to eight).
type Indices = SmallVec<[c_int; 8]>;

/// The program's request handles as they were before a completion call
/// (no allocation up to eight).
type Befores = SmallVec<[MPI_Request; 8]>;

/// Statuses heisen supplies where the program passed
/// `MPI_STATUSES_IGNORE`: on the stack up to four (no allocation, and no
/// `SmallVec::resize` loop, which cost about 60 instructions a `Waitall`
/// of two), on the heap beyond.
struct Scratch {
    small: [MPI_Status; 4],
    large: Vec<MPI_Status>,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            small: [sys::empty_status(); 4],
            large: Vec::new(),
        }
    }
}

/// Where [`finish`] puts what a completed receive got: a list for a
/// multiple completion, one place for a single one (no list: a
/// [`Received`] holds a 240-byte record, and a push moved it once more).
trait Sink {
    /// Keeps one received message; the place it is kept, for its record
    /// to be decoded into (no move of the record after).
    fn keep(&mut self, received: Received) -> Option<&mut Received>;
}

impl Sink for ReceivedList {
    #[inline]
    fn keep(&mut self, received: Received) -> Option<&mut Received> {
        self.push(received);
        self.last_mut()
    }
}

impl Sink for Option<Received> {
    #[inline]
    fn keep(&mut self, received: Received) -> Option<&mut Received> {
        Some(self.insert(received))
    }
}

/// Finishes one completed request whose outcome is `error` (its
/// status's error or the call's code): its merge goes into `received`.
/// `seen`: the program sees `st` (else it is heisen's scratch, whose count
/// needs no fixing). Whether the request was cancelled is asked only
/// where it matters (a receive, a hook), not for a send.
fn finish(
    request: MPI_Request,
    taken: Taken,
    begin: Option<u64>,
    st: *mut MPI_Status,
    seen: bool,
    error: c_int,
    received: &mut impl Sink,
) {
    let Taken { index, mut entry } = taken;
    match &entry.kind {
        Kind::Unmeasured if delivered(error) && !status::cancelled(st) => {
            status::fix(st);
        }
        Kind::Recv { site, wildcard } if delivered(error) && !status::cancelled(st) => {
            // A truncated staged receive merges nothing: the staging bytes
            // are not the message's.
            if let Some(bytes) = status::fix_if(st, seen)
                && (entry.staged.is_none() || error == sys::success())
                && let Some(kept) = received.keep(Received {
                    record: None,
                    site: *site,
                    wildcard: *wildcard,
                    bytes,
                    // SAFETY: the MPI wrote the status.
                    source: unsafe { (*st).MPI_SOURCE },
                })
            {
                received_record(index, &entry, bytes, &mut kept.record);
            }
        }
        _ => {}
    }
    if let Kind::Hook(hook) = &mut entry.kind {
        hook.complete(begin.unwrap_or(0), st, status::cancelled(st));
        if !entry.persistent {
            drop(entry);
            table().release(index);
            return;
        }
    }
    if entry.persistent {
        table().put_back(request, Taken { index, entry });
    } else {
        table().release_entry(index, entry);
    }
}

/// Decodes the record a completed receive got into `record`, in place,
/// and for a staged one copies its data to the program's buffer (a
/// receive that completed without error: see [`finish`]).
fn received_record(index: u16, entry: &Entry, bytes: usize, record: &mut Option<Record>) {
    let Some(s) = entry.staged else {
        // SAFETY: the request completed: the MPI wrote its record into the
        // slot and nothing writes it until a new start.
        let wire = unsafe { &*table().wire(index).cast::<Wire>() };
        piggyback::unpack_into(wire, record);
        return;
    };
    let stage = table().stage(s.stage);
    let payload = bytes.min(s.bytes);
    // SAFETY: the staging buffer holds the record and `bytes` of payload
    // the MPI wrote; the program's buffer holds `s.bytes`.
    unsafe {
        if payload > 0 {
            core::ptr::copy_nonoverlapping(stage.add(LEN), s.buf.cast::<u8>(), payload);
        }
        piggyback::unpack_into(&*stage.cast::<Wire>(), record);
    }
}

/// Merges what a completion call received.
fn merge_all(m: &Mpi, begin: Option<u64>, received: &[Received]) {
    if let Some(b) = begin {
        merge::received(m, b, received);
    }
}

/// Whether the program passed no statuses (`MPI_STATUSES_IGNORE`).
fn ignored(user: *mut MPI_Status) -> bool {
    user.is_null() || user == sys::statuses_ignore() || user == sys::status_ignore()
}

/// Statuses for `n` requests: the program's array, or `n` of `scratch`'s
/// when it passed `MPI_STATUSES_IGNORE`.
fn statuses(user: *mut MPI_Status, n: usize, scratch: &mut Scratch) -> *mut MPI_Status {
    if ignored(user) {
        if n <= scratch.small.len() {
            scratch.small.as_mut_ptr()
        } else {
            scratch.large = vec![sys::empty_status(); n];
            scratch.large.as_mut_ptr()
        }
    } else {
        user
    }
}

/// The program's request array as a slice.
fn requests<'a>(array: *mut MPI_Request, n: c_int) -> &'a mut [MPI_Request] {
    if array.is_null() || n <= 0 {
        return &mut [];
    }
    // SAFETY: the MPI call's contract: `n` valid handles.
    unsafe { core::slice::from_raw_parts_mut(array, n as usize) }
}

// ----- one request -----------------------------------------------------------

/// `Wait` or `Test` of one request through `call(request, flag, status)`.
fn single(
    m: &Mpi,
    region: &'static Named,
    request: *mut MPI_Request,
    user_status: *mut MPI_Status,
    call: impl FnOnce(*mut MPI_Request, *mut c_int, *mut MPI_Status) -> c_int,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: the program's request.
    let before = unsafe { *request };
    let Some(taken) = table().take(before) else {
        return call(request, flag, user_status);
    };
    region::call(region, || {
        let mut scratch = sys::empty_status();
        let st = status::or_scratch(user_status, &mut scratch);
        let begin = merge::begin(m);
        let rc = call(request, flag, st);
        // SAFETY: `flag` is the wrapper's own or the program's.
        let done = unsafe { *flag } != 0;
        if !done {
            table().put_back(before, taken);
            return rc;
        }
        let mut received: Option<Received> = None;
        let seen = status::seen(user_status);
        finish(before, taken, begin, st, seen, rc, &mut received);
        merge_all(m, begin, received.as_slice());
        rc
    })
}

/// `MPI_Wait`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    let Some(m) = ensure().filter(|_| !request.is_null()) else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe { sys::PMPI_Wait(request, status) };
    };
    static REGION: Named = Named::new("MPI_Wait");
    // SAFETY: the program's request.
    crate::isendrecv::advance(&[unsafe { *request }], true);
    let mut flag: c_int = 1;
    single(
        m,
        &REGION,
        request,
        status,
        |r, _, s| unsafe { sys::PMPI_Wait(r, s) },
        &mut flag,
    )
}

/// `MPI_Test`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    let Some(m) = ensure().filter(|_| !request.is_null() && !flag.is_null()) else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe { sys::PMPI_Test(request, flag, status) };
    };
    static REGION: Named = Named::new("MPI_Test");
    // SAFETY: the program's request.
    crate::isendrecv::advance(&[unsafe { *request }], false);
    // SAFETY: the program's arguments, with the status heisen reads.
    single(
        m,
        &REGION,
        request,
        status,
        |r, f, s| unsafe { sys::PMPI_Test(r, f, s) },
        flag,
    )
}

// ----- many requests ---------------------------------------------------------

/// Which requests a multiple completion completed.
enum Done<'a> {
    /// All (`Waitall`, a true `Testall`), with the call's return code.
    All(c_int),
    /// One, at this index (`Waitany`, `Testany`).
    One(usize),
    /// Those at these indices (`Waitsome`, `Testsome`), statuses in order.
    Some(&'a [c_int]),
    /// None.
    Nothing,
}

/// Finishes the requests `done` says completed and puts back the others.
fn finish_many(
    m: &Mpi,
    begin: Option<u64>,
    befores: &[MPI_Request],
    taken: &mut TakenList,
    sts: *mut MPI_Status,
    seen: bool,
    done: Done<'_>,
    rc: c_int,
) {
    let mut received = ReceivedList::new();
    let mut complete =
        |i: usize, st: *mut MPI_Status, error: c_int, received: &mut ReceivedList| {
            if let Some(t) = taken.get_mut(i).and_then(Option::take) {
                finish(befores[i], t, begin, st, seen, error, received);
            }
        };
    match done {
        Done::All(rc) => {
            for i in 0..befores.len() {
                // SAFETY: one status per request.
                let st = unsafe { sts.add(i) };
                // With MPI_ERR_IN_STATUS, each status says its outcome.
                let error = if rc == sys::err_in_status() {
                    unsafe { (*st).MPI_ERROR }
                } else {
                    rc
                };
                if error != sys::err_pending() {
                    complete(i, st, error, &mut received);
                }
            }
        }
        Done::One(i) => complete(i, sts, rc, &mut received),
        Done::Some(indices) => {
            for (j, &i) in indices.iter().enumerate() {
                // SAFETY: statuses are filled in the order of `indices`.
                let st = unsafe { sts.add(j) };
                let error = if rc == sys::err_in_status() {
                    unsafe { (*st).MPI_ERROR }
                } else {
                    rc
                };
                complete(i as usize, st, error, &mut received);
            }
        }
        Done::Nothing => {}
    }
    for (i, t) in taken.drain(..).enumerate() {
        if let Some(t) = t {
            table().put_back(befores[i], t);
        }
    }
    merge_all(m, begin, &received);
}

/// The common part of every multiple completion: takes the entries,
/// calls, finishes. `call(statuses)` returns the code and what completed.
fn many(
    m: &Mpi,
    region: &'static Named,
    array: *mut MPI_Request,
    n: c_int,
    user_statuses: *mut MPI_Status,
    status_count: usize,
    call: impl FnOnce(*mut MPI_Status) -> (c_int, Indices, bool),
) -> c_int {
    let befores = Befores::from_slice(requests(array, n));
    let mut taken = TakenList::new();
    table().take_all(&befores, &mut taken);
    if taken.iter().all(Option::is_none) {
        return call(user_statuses).0;
    }
    region::call(region, || {
        let mut scratch = Scratch::new();
        let sts = statuses(user_statuses, status_count, &mut scratch);
        let seen = !ignored(user_statuses);
        let begin = merge::begin(m);
        let (rc, indices, all) = call(sts);
        let done = if all {
            Done::All(rc)
        } else if indices.len() == 1 && status_count == 1 {
            Done::One(indices[0] as usize)
        } else if indices.is_empty() {
            Done::Nothing
        } else {
            Done::Some(&indices)
        };
        finish_many(m, begin, &befores, &mut taken, sts, seen, done, rc);
        rc
    })
}

/// Completes heisen's own inner requests (`isendrecv`) without a region of
/// their own: waits for all of `array` when `wait`, tests them otherwise,
/// and finishes what completed as the program's completions do (fixed
/// statuses, records merged). Returns the MPI's code and whether all
/// completed.
pub(crate) fn settle(
    m: &Mpi,
    array: &mut [MPI_Request],
    sts: *mut MPI_Status,
    wait: bool,
) -> (c_int, bool) {
    let befores = Befores::from_slice(array);
    let mut taken = TakenList::new();
    table().take_all(&befores, &mut taken);
    let begin = merge::begin(m);
    let n = array.len() as c_int;
    // SAFETY: `array.len()` live requests and as many statuses.
    let (rc, all) = unsafe {
        if wait {
            (sys::PMPI_Waitall(n, array.as_mut_ptr(), sts), true)
        } else {
            let mut flag: c_int = 0;
            let rc = sys::PMPI_Testall(n, array.as_mut_ptr(), &mut flag, sts);
            (rc, flag != 0 || rc == sys::err_in_status())
        }
    };
    let done = if all { Done::All(rc) } else { Done::Nothing };
    // isendrecv reads the inner statuses: fixed as the program's are
    finish_many(m, begin, &befores, &mut taken, sts, true, done, rc);
    (rc, all)
}

macro_rules! wrapper_or_pass {
    ($pass:expr) => {
        match ensure() {
            Some(m) => m,
            None => return $pass,
        }
    };
}

/// `MPI_Waitall`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Waitall(
    count: c_int,
    array: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    // SAFETY (every PMPI call in this section): the program's arguments,
    // or statuses heisen owns of the right length.
    let m = wrapper_or_pass!(unsafe { sys::PMPI_Waitall(count, array, statuses) });
    static REGION: Named = Named::new("MPI_Waitall");
    crate::isendrecv::advance(requests(array, count), true);
    many(
        m,
        &REGION,
        array,
        count,
        statuses,
        count.max(0) as usize,
        |s| {
            (
                unsafe { sys::PMPI_Waitall(count, array, s) },
                Indices::new(),
                true,
            )
        },
    )
}

/// `MPI_Testall`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Testall(
    count: c_int,
    array: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    let m = wrapper_or_pass!(unsafe { sys::PMPI_Testall(count, array, flag, statuses) });
    static REGION: Named = Named::new("MPI_Testall");
    crate::isendrecv::advance(requests(array, count), false);
    many(
        m,
        &REGION,
        array,
        count,
        statuses,
        count.max(0) as usize,
        |s| {
            let rc = unsafe { sys::PMPI_Testall(count, array, flag, s) };
            let all = unsafe { *flag } != 0 || rc == sys::err_in_status();
            (rc, Indices::new(), all)
        },
    )
}

/// `MPI_Waitany`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Waitany(
    count: c_int,
    array: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    let m = wrapper_or_pass!(unsafe { sys::PMPI_Waitany(count, array, index, status) });
    static REGION: Named = Named::new("MPI_Waitany");
    // A pending MPI_Isendrecv completes only through heisen: poll.
    let pairs = crate::isendrecv::advance(requests(array, count), false);
    many(m, &REGION, array, count, status, 1, |s| {
        let rc = if pairs {
            let mut flag: c_int = 0;
            loop {
                let rc = unsafe { sys::PMPI_Testany(count, array, index, &mut flag, s) };
                if flag != 0 || rc != sys::success() {
                    break rc;
                }
                crate::isendrecv::advance(requests(array, count), false);
            }
        } else {
            unsafe { sys::PMPI_Waitany(count, array, index, s) }
        };
        let i = unsafe { *index };
        (
            rc,
            if i == sys::undefined() {
                Indices::new()
            } else {
                Indices::from_slice(&[i])
            },
            false,
        )
    })
}

/// `MPI_Testany`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Testany(
    count: c_int,
    array: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    let m = wrapper_or_pass!(unsafe { sys::PMPI_Testany(count, array, index, flag, status) });
    static REGION: Named = Named::new("MPI_Testany");
    crate::isendrecv::advance(requests(array, count), false);
    many(m, &REGION, array, count, status, 1, |s| {
        let rc = unsafe { sys::PMPI_Testany(count, array, index, flag, s) };
        let i = unsafe { *index };
        let done = unsafe { *flag } != 0 && i != sys::undefined();
        let done = if done {
            Indices::from_slice(&[i])
        } else {
            Indices::new()
        };
        (rc, done, false)
    })
}

/// `Waitsome` or `Testsome` through `call(statuses)`.
fn some(
    m: &Mpi,
    region: &'static Named,
    count: c_int,
    array: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
    call: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    many(
        m,
        region,
        array,
        count,
        statuses,
        count.max(0) as usize,
        |s| {
            let rc = call(s);
            // SAFETY: the MPI wrote `outcount` and that many indices.
            let n = unsafe { *outcount };
            let done = if n == sys::undefined() || n <= 0 {
                Indices::new()
            } else {
                Indices::from_slice(unsafe { core::slice::from_raw_parts(indices, n as usize) })
            };
            (rc, done, false)
        },
    )
}

/// `MPI_Waitsome`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Waitsome(
    count: c_int,
    array: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    let m =
        wrapper_or_pass!(unsafe { sys::PMPI_Waitsome(count, array, outcount, indices, statuses) });
    static REGION: Named = Named::new("MPI_Waitsome");
    // A pending MPI_Isendrecv completes only through heisen: poll.
    let pairs = crate::isendrecv::advance(requests(array, count), false);
    some(
        m,
        &REGION,
        count,
        array,
        outcount,
        indices,
        statuses,
        |s| unsafe {
            if !pairs {
                return sys::PMPI_Waitsome(count, array, outcount, indices, s);
            }
            loop {
                let rc = sys::PMPI_Testsome(count, array, outcount, indices, s);
                if *outcount != 0 || rc != sys::success() {
                    break rc;
                }
                crate::isendrecv::advance(requests(array, count), false);
            }
        },
    )
}

/// `MPI_Testsome`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Testsome(
    count: c_int,
    array: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    let m =
        wrapper_or_pass!(unsafe { sys::PMPI_Testsome(count, array, outcount, indices, statuses) });
    static REGION: Named = Named::new("MPI_Testsome");
    crate::isendrecv::advance(requests(array, count), false);
    some(
        m,
        &REGION,
        count,
        array,
        outcount,
        indices,
        statuses,
        |s| unsafe { sys::PMPI_Testsome(count, array, outcount, indices, s) },
    )
}
