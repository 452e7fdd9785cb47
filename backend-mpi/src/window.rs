//! One-sided communication (MPI-4.0 chapter 12): the synchronisation
//! calls that order processes merge like the messages and collectives
//! they are made of. A put's data reaches its target only at the epoch's
//! closing call, so an origin's delay reaches the target there and a
//! target's delay reaches its origins where they wait for it (R4/R5, R6;
//! Scalasca's wait-state patterns treat them the same way: the fence as a
//! collective, "late post" and "early wait" for general active target).
//!
//! | call | dependency | how the record travels |
//! |---|---|---|
//! | `Win_create`, `Win_allocate`, `Win_allocate_shared`, `Win_create_dynamic` (and `_c`) | n-to-n (R6) | the extra exchange on the window's own communicator, made here (a `Comm_split` of the program's, which copies no attributes) |
//! | `Win_fence` | n-to-n, whatever the assertions (MPICH synchronises in every fence) | the extra exchange on the window's communicator |
//! | `Win_start` | each target's `Win_post` → the origin (R4/R5) | one record message from each target, taken as it enters its post and sent once the post succeeded, received in the start (MPICH's start waits for the posts) |
//! | `Win_wait`, `Win_test` (once done) | each origin's `Win_complete` → the target | one record message from each origin, taken and sent as it enters its complete |
//! | `Win_free` | n-to-n | the extra exchange, then the window's communicator is freed |
//!
//! With `MPI_MODE_NOCHECK` (given at a post if and only if at its starts,
//! MPI-4.0 §12.5.5) the start waits for nothing and no post record
//! travels. Passive target synchronisation (`Win_lock`, `Win_unlock`,
//! `Win_lock_all`, `Win_unlock_all`, `Win_flush*`, `Win_sync`) is a region
//! only: no partner call exists to carry a record (the lock's previous
//! holder is not known to the next). The communication calls (`Put`,
//! `Get`, `Accumulate` …) pass straight to the MPI.
//!
//! The windows table has [`CAPACITY`] entries (R12). The ranks of a new
//! window agree whether it fits everywhere (one `MPI_Allreduce` at its
//! creation), so a window is tracked on all of its ranks or on none, and
//! every rank makes the same exchanges; an untracked window's calls are
//! regions only, counted in the report (`mpi.windows.untracked`).

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::collective::{Shape, blocking, blocking_on};
use crate::merge::{self, Received};
use crate::piggyback::{self, Wire};
use crate::private;
use crate::region::{self, Named};
use crate::setup::{self, Mpi};
use crate::sys::{self, MPI_Aint, MPI_Comm, MPI_Group, MPI_Info, MPI_Request, MPI_Win};

/// Windows tracked at once (R12); more run as regions only. Each holds
/// a communicator of heisen's, one of the MPI's context ids (MPICH has
/// 2,048 in all): a program with many windows alive could otherwise make
/// noticeably fewer communicators and windows than without heisen.
pub const CAPACITY: usize = 64;

/// Tag of a post's record on a window's communicator.
const TAG_POST: c_int = 1;
/// Tag of a complete's record.
const TAG_COMPLETE: c_int = 2;

/// Record messages sent by one call, kept until the MPI is done with them.
#[derive(Debug, Default)]
struct Outgoing {
    wire: Option<Box<Wire>>,
    requests: Vec<MPI_Request>,
}

impl Outgoing {
    /// Sends `wire` to every rank of `to` on `comm` with `tag`, once the
    /// previous sends are done (their buffer is reused).
    fn send(&mut self, wire: &Wire, to: &[c_int], tag: c_int, comm: MPI_Comm) {
        self.finish();
        let buffer = self
            .wire
            .get_or_insert_with(|| Box::new(piggyback::blank()));
        **buffer = *wire;
        for &rank in to {
            let mut request = sys::request_null();
            // SAFETY: the boxed record stays where it is until `finish`
            // waits for this request; `comm` is the window's own.
            unsafe {
                sys::PMPI_Isend(
                    buffer.as_ptr().cast(),
                    piggyback::LEN as c_int,
                    sys::byte(),
                    rank,
                    tag,
                    comm,
                    &mut request,
                )
            };
            self.requests.push(request);
        }
    }

    /// Waits for the sends in flight. Each is matched by its partner's
    /// next synchronisation call, which does not wait for this process.
    fn finish(&mut self) {
        for r in &mut self.requests {
            // SAFETY: our own live request.
            unsafe { sys::PMPI_Wait(r, sys::status_ignore()) };
        }
        self.requests.clear();
    }
}

/// Record messages one call is to receive, posted before it.
#[derive(Debug, Default)]
struct Incoming {
    wires: Vec<Wire>,
    sources: Vec<c_int>,
    requests: Vec<MPI_Request>,
}

impl Incoming {
    /// Posts a receive of one record from every rank of `from`.
    fn post(from: &[c_int], tag: c_int, comm: MPI_Comm) -> Incoming {
        let mut incoming = Incoming {
            wires: vec![piggyback::blank(); from.len()],
            sources: from.to_vec(),
            requests: vec![sys::request_null(); from.len()],
        };
        for ((wire, &rank), request) in incoming
            .wires
            .iter_mut()
            .zip(from)
            .zip(incoming.requests.iter_mut())
        {
            // SAFETY: the vector's heap buffer is never reallocated while
            // the receives are in flight (`finish` or `cancel` ends them).
            unsafe {
                sys::PMPI_Irecv(
                    wire.as_mut_ptr().cast(),
                    piggyback::LEN as c_int,
                    sys::byte(),
                    rank,
                    tag,
                    comm,
                    request,
                )
            };
        }
        incoming
    }

    /// Waits for every record and returns what each carried, received at
    /// call site `site` (R12).
    fn finish(mut self, site: u32) -> Vec<Received> {
        for r in &mut self.requests {
            // SAFETY: our own live request.
            unsafe { sys::PMPI_Wait(r, sys::status_ignore()) };
        }
        self.wires
            .iter()
            .zip(&self.sources)
            .map(|(wire, &source)| Received {
                record: piggyback::unpack(wire),
                site,
                wildcard: false,
                bytes: 0,
                source,
            })
            .collect()
    }

    /// Withdraws the receives (a call that failed, or a window freed with
    /// an epoch left open: an erroneous program).
    fn cancel(mut self) {
        for r in &mut self.requests {
            // SAFETY: our own live request; cancelled, then completed.
            unsafe {
                sys::PMPI_Cancel(r);
                sys::PMPI_Wait(r, sys::status_ignore());
            }
        }
    }
}

/// A tracked window's synchronisation state.
#[derive(Debug)]
struct Window {
    /// heisen's own communicator over the window's group.
    comm: MPI_Comm,
    /// Its group, to translate the program's groups into its ranks.
    group: MPI_Group,
    /// Target side: the post's record, sent to the origins.
    posted: Outgoing,
    /// Target side: the origins' complete records, received at the wait.
    completes: Option<Incoming>,
    /// Origin side: the start group's ranks in `comm`.
    targets: Vec<c_int>,
    /// Origin side: the complete's record, sent to the targets.
    completed: Outgoing,
}

// SAFETY: MPI handles and buffers the MPI writes only while a request is
// in flight; every access goes through the window's mutex.
unsafe impl Send for Window {}

type Shared = Arc<Mutex<Window>>;

/// The tracked windows by handle.
static WINDOWS: Mutex<Vec<(u64, Shared)>> = Mutex::new(Vec::new());

static TRACKED: AtomicU64 = AtomicU64::new(0);
static UNTRACKED: AtomicU64 = AtomicU64::new(0);
static EPOCHS: AtomicU64 = AtomicU64::new(0);

fn table() -> std::sync::MutexGuard<'static, Vec<(u64, Shared)>> {
    WINDOWS.lock().unwrap_or_else(|p| p.into_inner())
}

fn lock(w: &Shared) -> std::sync::MutexGuard<'_, Window> {
    w.lock().unwrap_or_else(|p| p.into_inner())
}

fn lookup(win: MPI_Win) -> Option<Shared> {
    let key = sys::key(win);
    table()
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, w)| w.clone())
}

/// The report's `windows` object.
pub fn report_json() -> serde_json::Value {
    serde_json::json!({
        "capacity": CAPACITY,
        "tracked": TRACKED.load(Ordering::Relaxed),
        "untracked": UNTRACKED.load(Ordering::Relaxed),
        "open": table().len(),
        "pscw_merges": EPOCHS.load(Ordering::Relaxed),
    })
}

/// Windows between their room check and their entry in the table:
/// counted with its entries, so that windows made at once by several
/// threads never take it past [`CAPACITY`] (R12). Changed under the
/// table's lock.
static RESERVED: AtomicUsize = AtomicUsize::new(0);

/// Tracks the window `win` just made on `comm`: agrees with the other
/// ranks (on `comm`, inside their common creation call) that every one
/// has room, then makes heisen's own communicator for it. Returns that
/// communicator, `None` where the window stays untracked (on every rank
/// alike: a split that fails, for want of a context id, fails on all).
fn register(comm: MPI_Comm, win: MPI_Win) -> Option<MPI_Comm> {
    // A handle still in the table belongs to a window freed past heisen:
    // the MPI has given its number to this one.
    if let Some(old) = take(win) {
        release(old);
    }
    let room = {
        let windows = table();
        let room = windows.len() + RESERVED.load(Ordering::Relaxed) < CAPACITY;
        if room {
            RESERVED.fetch_add(1, Ordering::Relaxed);
        }
        room
    };
    // only a window that is tracked takes a context id of the MPI's
    let own = if private::everywhere(comm, room) {
        private::private_copy(comm)
    } else {
        None
    };
    let mut windows = table();
    if room {
        RESERVED.fetch_sub(1, Ordering::Relaxed);
    }
    let Some(own) = own else {
        drop(windows);
        UNTRACKED.fetch_add(1, Ordering::Relaxed);
        return None;
    };
    // SAFETY: reading a constant handle, then our own communicator's group.
    let mut group = unsafe { sys::RSMPI_GROUP_NULL };
    unsafe { sys::PMPI_Comm_group(own, &mut group) };
    let window = Window {
        comm: own,
        group,
        posted: Outgoing::default(),
        completes: None,
        targets: Vec::new(),
        completed: Outgoing::default(),
    };
    windows.push((sys::key(win), Arc::new(Mutex::new(window))));
    TRACKED.fetch_add(1, Ordering::Relaxed);
    Some(own)
}

/// Takes window `win` out of the table.
fn take(win: MPI_Win) -> Option<Shared> {
    let key = sys::key(win);
    let mut windows = table();
    let i = windows.iter().position(|(k, _)| *k == key)?;
    Some(windows.swap_remove(i).1)
}

/// Frees what heisen kept for a window: waits for its record sends,
/// withdraws receives left open, frees its group and communicator.
fn release(w: Shared) {
    let mut w = lock(&w);
    w.posted.finish();
    w.completed.finish();
    if let Some(open) = w.completes.take() {
        open.cancel();
    }
    // SAFETY: our own handles, no longer used.
    unsafe {
        sys::PMPI_Group_free(&mut w.group);
        sys::PMPI_Comm_free(&mut w.comm);
    }
}

/// The ranks of `group` in the window's communicator.
fn ranks_in(group: MPI_Group, w: &Window) -> Vec<c_int> {
    let mut size: c_int = 0;
    // SAFETY: the program's group, valid for its call.
    unsafe { sys::PMPI_Group_size(group, &mut size) };
    let mine: Vec<c_int> = (0..size.max(0)).collect();
    let mut ranks = vec![sys::undefined(); mine.len()];
    // SAFETY: both arrays hold `size` ints.
    unsafe {
        sys::PMPI_Group_translate_ranks(group, size, mine.as_ptr(), w.group, ranks.as_mut_ptr())
    };
    ranks.retain(|&r| r != sys::undefined());
    ranks
}

fn has(assert: c_int, mode: u32) -> bool {
    assert as u32 & mode != 0
}

/// A window creation `call` writing `*win`: an n-to-n merge on the
/// window's new communicator (R6), the window tracked from here.
fn created(
    region: &'static Named,
    comm: MPI_Comm,
    win: *mut MPI_Win,
    call: impl FnOnce() -> c_int,
) -> c_int {
    blocking_on(region, Shape::NToN, call, |rc| {
        if rc != sys::success() || win.is_null() {
            return None;
        }
        // SAFETY: the call succeeded, so the MPI wrote `*win`.
        register(comm, unsafe { *win })
    })
}

/// Runs window `win`'s synchronisation call `call` as region `region`:
/// through `tracked(m, w, call)` where heisen is set up and tracks the
/// window, as the region alone elsewhere.
fn synchronising<C: FnOnce() -> c_int>(
    region: &'static Named,
    win: MPI_Win,
    call: C,
    tracked: impl FnOnce(&'static Mpi, &Shared, C) -> c_int,
) -> c_int {
    match (setup::ensure(), lookup(win)) {
        (Some(m), Some(w)) => region::call(region, || tracked(m, &w, call)),
        _ => region::call(region, call),
    }
}

/// The calling thread's record now (R3, charging a send), for a post or a
/// complete; the empty record where the thread is not measured.
fn released(m: &Mpi) -> Wire {
    let mut wire = piggyback::blank();
    merge::release(m, &mut wire);
    wire
}

/// Waits for `incoming` and merges what it brought as messages received
/// since `begin` (R4/R5; R6's n-to-1 shape for several).
fn merge_records(m: &Mpi, site: &'static Named, begin: Option<u64>, incoming: Incoming) {
    let got = incoming.finish(site.id());
    if let Some(b) = begin {
        merge::received(m, b, &got);
        EPOCHS.fetch_add(1, Ordering::Relaxed);
    }
}

// ----- the exports -----------------------------------------------------------

macro_rules! creations {
    ($(
        $(#[$doc:meta])*
        $name:ident => $pmpi:ident ( $($arg:ident : $ty:ty),* $(,)? ) on $comm:ident;
    )*) => {$(
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty,)* win: *mut MPI_Win) -> c_int {
            static REGION: Named = Named::new(stringify!($name));
            // SAFETY: the program's arguments, passed on unchanged.
            created(&REGION, $comm, win, || unsafe { sys::$pmpi($($arg,)* win) })
        }
    )*};
}

type V = c_void;

creations! {
    /// `MPI_Win_create` (MPI-4.0 §12.2.1).
    MPI_Win_create => PMPI_Win_create(base: *mut V, size: MPI_Aint, disp_unit: c_int,
        info: MPI_Info, comm: MPI_Comm) on comm;
    /// `MPI_Win_create_c` (§12.2.1, large counts).
    MPI_Win_create_c => PMPI_Win_create_c(base: *mut V, size: MPI_Aint, disp_unit: MPI_Aint,
        info: MPI_Info, comm: MPI_Comm) on comm;
    /// `MPI_Win_allocate` (§12.2.2).
    MPI_Win_allocate => PMPI_Win_allocate(size: MPI_Aint, disp_unit: c_int, info: MPI_Info,
        comm: MPI_Comm, baseptr: *mut V) on comm;
    /// `MPI_Win_allocate_c` (§12.2.2, large counts).
    MPI_Win_allocate_c => PMPI_Win_allocate_c(size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info,
        comm: MPI_Comm, baseptr: *mut V) on comm;
    /// `MPI_Win_allocate_shared` (§12.2.3).
    MPI_Win_allocate_shared => PMPI_Win_allocate_shared(size: MPI_Aint, disp_unit: c_int,
        info: MPI_Info, comm: MPI_Comm, baseptr: *mut V) on comm;
    /// `MPI_Win_allocate_shared_c` (§12.2.3, large counts).
    MPI_Win_allocate_shared_c => PMPI_Win_allocate_shared_c(size: MPI_Aint, disp_unit: MPI_Aint,
        info: MPI_Info, comm: MPI_Comm, baseptr: *mut V) on comm;
    /// `MPI_Win_create_dynamic` (§12.2.4).
    MPI_Win_create_dynamic => PMPI_Win_create_dynamic(info: MPI_Info, comm: MPI_Comm) on comm;
}

/// `MPI_Win_free` (§12.2.5): n-to-n on the window's communicator, which
/// is freed after. The window leaves the table before the MPI frees it:
/// the MPI may give its handle to a window another thread makes at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_free(win: *mut MPI_Win) -> c_int {
    static REGION: Named = Named::new("MPI_Win_free");
    // SAFETY: the program's argument; read only where it is not null.
    let handle = (!win.is_null()).then(|| unsafe { *win });
    let Some((key, w)) = handle.and_then(|h| take(h).map(|w| (sys::key(h), w))) else {
        // SAFETY: the program's argument, passed on unchanged.
        return region::call(&REGION, || unsafe { sys::PMPI_Win_free(win) });
    };
    let comm = lock(&w).comm;
    // SAFETY: as above.
    let rc = blocking(&REGION, comm, Shape::NToN, || unsafe {
        sys::PMPI_Win_free(win)
    });
    if rc != sys::success() {
        table().push((key, w));
        return rc;
    }
    // heisen's own work after the program's call (R1)
    let before = merge::now();
    release(w);
    merge::charge_since(before);
    rc
}

/// `MPI_Win_fence` (§12.5.1): n-to-n on the window's communicator,
/// whatever the assertions: MPICH synchronises in every fence (a barrier
/// even with `MPI_MODE_NOPRECEDE`), so a rank waits there for the others
/// without heisen too.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_fence(assert: c_int, win: MPI_Win) -> c_int {
    static REGION: Named = Named::new("MPI_Win_fence");
    // SAFETY: the program's arguments, passed on unchanged.
    let call = || unsafe { sys::PMPI_Win_fence(assert, win) };
    // (`blocking` passes straight through where heisen is not set up)
    match lookup(win).map(|w| lock(&w).comm) {
        Some(comm) => blocking(&REGION, comm, Shape::NToN, call),
        None => region::call(&REGION, call),
    }
}

/// `MPI_Win_post` (§12.5.2): the target's record, taken as it enters,
/// goes to each origin of `group` once the post succeeded (merged at the
/// origin's start), and the receives of their complete records are
/// posted (merged at the wait). The group's ranks are translated only
/// after the MPI accepted the group.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_post(group: MPI_Group, assert: c_int, win: MPI_Win) -> c_int {
    static REGION: Named = Named::new("MPI_Win_post");
    // SAFETY: the program's arguments, passed on unchanged.
    let call = || unsafe { sys::PMPI_Win_post(group, assert, win) };
    synchronising(&REGION, win, call, |m, w, call| {
        let check = !has(assert, sys::MPI_MODE_NOCHECK);
        let wire = check.then(|| released(m));
        let rc = call();
        if rc == sys::success() {
            let (comm, origins) = {
                let w = lock(w);
                (w.comm, ranks_in(group, &w))
            };
            let incoming = Incoming::post(&origins, TAG_COMPLETE, comm);
            let mut w = lock(w);
            if let Some(stale) = w.completes.replace(incoming) {
                stale.cancel();
            }
            if let Some(wire) = wire {
                w.posted.send(&wire, &origins, TAG_POST, comm);
            }
        }
        rc
    })
}

/// `MPI_Win_start` (§12.5.2): merges each target's post record (R4/R5),
/// received once the MPI's start has seen the posts (each target sends
/// it as its post returns).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_start(group: MPI_Group, assert: c_int, win: MPI_Win) -> c_int {
    static REGION: Named = Named::new("MPI_Win_start");
    // SAFETY: the program's arguments, passed on unchanged.
    let call = || unsafe { sys::PMPI_Win_start(group, assert, win) };
    synchronising(&REGION, win, call, |m, w, call| {
        let check = !has(assert, sys::MPI_MODE_NOCHECK);
        let begin = if check { merge::begin(m) } else { None };
        let rc = call();
        if rc == sys::success() {
            let (comm, targets) = {
                let mut w = lock(w);
                let targets = ranks_in(group, &w);
                w.targets.clone_from(&targets);
                (w.comm, targets)
            };
            if check {
                let incoming = Incoming::post(&targets, TAG_POST, comm);
                merge_records(m, &REGION, begin, incoming);
            }
        }
        rc
    })
}

/// `MPI_Win_complete` (§12.5.2): the origin's record, taken as it enters,
/// goes to each target of its start before the MPI's complete runs, so
/// that it waits at the target when the complete's own message arrives.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_complete(win: MPI_Win) -> c_int {
    static REGION: Named = Named::new("MPI_Win_complete");
    // SAFETY: the program's argument, passed on unchanged.
    let call = || unsafe { sys::PMPI_Win_complete(win) };
    synchronising(&REGION, win, call, |m, w, call| {
        let wire = released(m);
        {
            let mut w = lock(w);
            let (comm, targets) = (w.comm, core::mem::take(&mut w.targets));
            w.completed.send(&wire, &targets, TAG_COMPLETE, comm);
        }
        call()
    })
}

/// `MPI_Win_wait` (§12.5.2): merges each origin's complete record.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_wait(win: MPI_Win) -> c_int {
    static REGION: Named = Named::new("MPI_Win_wait");
    // SAFETY: the program's argument, passed on unchanged.
    let call = || unsafe { sys::PMPI_Win_wait(win) };
    synchronising(&REGION, win, call, |m, w, call| {
        let begin = merge::begin(m);
        let rc = call();
        if rc == sys::success() {
            // the window's lock is let go of before the records are
            // waited for: a complete in another thread needs it
            let incoming = lock(w).completes.take();
            if let Some(incoming) = incoming {
                merge_records(m, &REGION, begin, incoming);
            }
        }
        rc
    })
}

/// `MPI_Win_test` (§12.5.2): once it reports the epoch done, merges each
/// origin's complete record like the wait.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_test(win: MPI_Win, flag: *mut c_int) -> c_int {
    static REGION: Named = Named::new("MPI_Win_test");
    // SAFETY: the program's arguments, passed on unchanged.
    let call = || unsafe { sys::PMPI_Win_test(win, flag) };
    synchronising(&REGION, win, call, |m, w, call| {
        let rc = call();
        // SAFETY: the call succeeded, so it wrote `*flag`.
        if rc == sys::success() && !flag.is_null() && unsafe { *flag } != 0 {
            let begin = merge::begin(m);
            let incoming = lock(w).completes.take();
            if let Some(incoming) = incoming {
                merge_records(m, &REGION, begin, incoming);
            }
        }
        rc
    })
}

macro_rules! regions {
    ($(
        $(#[$doc:meta])*
        $name:ident => $pmpi:ident ( $($arg:ident : $ty:ty),* $(,)? );
    )*) => {$(
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            static REGION: Named = Named::new(stringify!($name));
            // SAFETY: the program's arguments, passed on unchanged.
            region::call(&REGION, || unsafe { sys::$pmpi($($arg),*) })
        }
    )*};
}

regions! {
    /// `MPI_Win_lock` (§12.5.3): a region (passive target).
    MPI_Win_lock => PMPI_Win_lock(lock_type: c_int, rank: c_int, assert: c_int, win: MPI_Win);
    /// `MPI_Win_unlock` (§12.5.3): a region.
    MPI_Win_unlock => PMPI_Win_unlock(rank: c_int, win: MPI_Win);
    /// `MPI_Win_lock_all` (§12.5.3): a region.
    MPI_Win_lock_all => PMPI_Win_lock_all(assert: c_int, win: MPI_Win);
    /// `MPI_Win_unlock_all` (§12.5.3): a region.
    MPI_Win_unlock_all => PMPI_Win_unlock_all(win: MPI_Win);
    /// `MPI_Win_flush` (§12.5.4): a region.
    MPI_Win_flush => PMPI_Win_flush(rank: c_int, win: MPI_Win);
    /// `MPI_Win_flush_all` (§12.5.4): a region.
    MPI_Win_flush_all => PMPI_Win_flush_all(win: MPI_Win);
    /// `MPI_Win_flush_local` (§12.5.4): a region.
    MPI_Win_flush_local => PMPI_Win_flush_local(rank: c_int, win: MPI_Win);
    /// `MPI_Win_flush_local_all` (§12.5.4): a region.
    MPI_Win_flush_local_all => PMPI_Win_flush_local_all(win: MPI_Win);
    /// `MPI_Win_sync` (§12.5.4): a region.
    MPI_Win_sync => PMPI_Win_sync(win: MPI_Win);
}
