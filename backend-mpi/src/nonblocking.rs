//! Nonblocking and persistent point-to-point (MPI-4.0 §3.7, §3.9): the
//! record travels in the request table's slot (stable memory, as a
//! request's buffers must be), joined with the data by a struct type; the
//! merge happens at completion (`completion`). One generic per shape:
//! posted sends (`Isend` … and `Send_init` …), posted receives (`Irecv`,
//! `Recv_init`, `Imrecv`).

use core::ffi::{c_int, c_void};

use crate::datatype;
use crate::large::{Count, ImrecvFn, PostFn, RecvPostFn};
use crate::merge;
use crate::piggyback::{self, LEN, Wire};
use crate::region::{self, Named};
use crate::requests::{Entry, Kind, Staged, table};
use crate::setup::{Mpi, ensure};
use crate::sys::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Message, MPI_Request};

/// How a posted operation starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Post {
    /// Active at once (`Isend`, `Irecv`): the type is freed right away.
    Now,
    /// Persistent (`*_init`): the type lives as long as the request, the
    /// record is taken at each `MPI_Start`.
    Persistent,
}

/// A record slot for a posted operation: `(slot, its memory)`, or no slot
/// and the shared memory `fallback` when the table is full (R12).
fn slot(fallback: *mut u8) -> (Option<u16>, *mut u8) {
    match table().reserve() {
        Some((index, wire)) => (Some(index), wire),
        None => (None, fallback),
    }
}

/// Posts `count × datatype` at `buf` with its record through `call(buffer,
/// count, type, request)`; files the request.
fn post(
    post: Post,
    kind: impl Fn() -> Kind,
    wire: *mut u8,
    index: Option<u16>,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    call: impl FnOnce(*const c_void, c_int, MPI_Datatype, *mut MPI_Request) -> c_int,
) -> c_int {
    let t = match datatype::joined(wire, buf, count, datatype) {
        Ok(t) => t,
        Err(rc) => {
            if let Some(i) = index {
                table().release(i);
            }
            return rc;
        }
    };
    let rc = call(sys::bottom(), 1, t, request);
    let keep = post == Post::Persistent && rc == sys::success();
    if !keep {
        datatype::free(t);
    }
    match index {
        Some(i) if rc == sys::success() => {
            let entry = Entry {
                kind: kind(),
                persistent: post == Post::Persistent,
                datatype: keep.then_some(t),
                staged: None,
            };
            // SAFETY: the MPI wrote the request handle.
            table().insert(unsafe { *request }, i, entry);
        }
        Some(i) => table().release(i),
        None if rc == sys::success() && matches!(kind(), Kind::Recv { .. }) => {
            // SAFETY: the MPI wrote the request handle.
            table().mark_unmeasured(unsafe { *request }, post == Post::Persistent);
            if keep {
                datatype::free(t);
            }
        }
        None => {
            if keep {
                // A persistent request without a slot cannot free its
                // type later; free it now (MPI keeps it while in use).
                datatype::free(t);
            }
        }
    }
    rc
}

/// Posts a small contiguous message staged: record and data in a staging
/// buffer (no struct type, `datatype`). `None` when no slot or staging
/// buffer is free (the caller joins with a struct type instead). The
/// message carries `length` payload bytes; a receive's are copied to
/// `buf` (`bytes` long) at completion.
/// `fill(stage)` writes the stage before the post (a send's record and
/// data); `call(stage, bytes, request)` posts it. A persistent receive
/// keeps its staging buffer until `MPI_Request_free`.
fn staged(
    kind: Kind,
    persistent: bool,
    buf: *mut c_void,
    bytes: usize,
    length: usize,
    request: *mut MPI_Request,
    fill: impl FnOnce(&mut [u8]),
    call: impl FnOnce(*mut c_void, c_int, *mut MPI_Request) -> c_int,
) -> Option<c_int> {
    let t = table();
    let (index, stage, memory) = t.reserve_staged(length)?;
    // SAFETY: a staging buffer reserved for LEN + length bytes.
    let stage_bytes = unsafe { core::slice::from_raw_parts_mut(memory, LEN + length) };
    fill(stage_bytes);
    let rc = call(memory.cast(), (LEN + length) as c_int, request);
    let entry = Entry {
        kind,
        persistent,
        datatype: None,
        staged: Some(Staged { stage, buf, bytes }),
    };
    if rc == sys::success() {
        // SAFETY: the MPI wrote the request handle.
        t.insert(unsafe { *request }, index, entry);
    } else {
        t.release_entry(index, entry);
    }
    Some(rc)
}

/// A posted send: an immediate one takes its record now (R3); a
/// persistent one at each `MPI_Start`. `f` is heisen's `int` call,
/// `plain` the program's own (unmeasured calls).
fn posted_send<C: Count>(
    region: &'static Named,
    how: Post,
    plain: PostFn<C>,
    f: PostFn<c_int>,
    buf: *const c_void,
    count: C,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let Some(m) = ensure().filter(|_| dest != sys::proc_null()) else {
        // SAFETY: the program's arguments, unchanged.
        return unsafe { plain(buf, count, datatype, dest, tag, comm, request) };
    };
    region::call(region, || {
        count.narrowed(datatype, |count, datatype| {
            send_posted(
                m, region, how, f, buf, count, datatype, dest, tag, comm, request,
            )
        })
    })
}

/// [`posted_send`]'s measured part, inside the caller's region (a real
/// peer: not `MPI_PROC_NULL`); `MPI_Isendrecv` posts its send with it.
pub(crate) fn send_posted(
    m: &Mpi,
    region: &'static Named,
    how: Post,
    f: PostFn<c_int>,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let small = datatype::stageable(buf, count, datatype);
    let bytes = small.unwrap_or_else(|| crate::p2p::payload_bytes(count, datatype));
    if how == Post::Now
        && let Some(n) = small
    {
        let fill = |stage: &mut [u8]| {
            let (record, data) = stage.split_at_mut(LEN);
            let wire: &mut Wire = record.try_into().expect("a record's length");
            merge::release(m, wire);
            if n > 0 {
                // SAFETY: a predefined datatype: `n` contiguous bytes.
                data.copy_from_slice(unsafe { core::slice::from_raw_parts(buf.cast(), n) });
            }
        };
        let call = |b: *mut c_void, c, r| {
            // SAFETY: the staging buffer holds `c` bytes.
            unsafe { f(b, c, sys::byte(), dest, tag, comm, r) }
        };
        if let Some(rc) = staged(
            Kind::Send,
            false,
            core::ptr::null_mut(),
            0,
            n,
            request,
            fill,
            call,
        ) {
            merge::sent(region.id(), dest, bytes, None);
            return rc;
        }
    }
    let (index, wire) = slot(piggyback::empty().as_ptr().cast_mut());
    if let Some(i) = index {
        release_into(m, table().wire(i), how);
    }
    let rc = post(
        how,
        || Kind::Send,
        wire,
        index,
        buf,
        count,
        datatype,
        request,
        |b, c, t, r| {
            // SAFETY: a joined type from MPI_BOTTOM and the program's request.
            unsafe { f(b, c, t, dest, tag, comm, r) }
        },
    );
    if how == Post::Now {
        merge::sent(
            region.id(),
            dest,
            crate::p2p::payload_bytes(count, datatype),
            None,
        );
    }
    rc
}

/// Takes a send's record into slot memory `wire` now (an immediate send)
/// or writes the empty record until its first start (persistent).
fn release_into(m: &Mpi, wire: *mut u8, how: Post) {
    // SAFETY: a reserved slot's record memory, not in flight.
    let wire = unsafe { &mut *wire.cast::<Wire>() };
    match how {
        Post::Now => {
            merge::release(m, wire);
        }
        Post::Persistent => *wire = *piggyback::empty(),
    }
}

/// Takes a persistent send's record at `MPI_Start` (R3) into its slot.
pub fn restart_send(m: &Mpi, index: u16) {
    release_into(m, table().wire(index), Post::Now);
}

macro_rules! posted_sends {
    ($($name:ident($count:ty) => $plain:ident, $pmpi:ident, $how:ident);* $(;)?) => {$(
        /// A nonblocking or persistent send (MPI-4.0 §3.7.2, §3.9; `_c`:
        /// §19.2).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: $count,
            datatype: MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> c_int {
            static REGION: Named = Named::new(stringify!($name));
            posted_send(
                &REGION, Post::$how, sys::$plain, sys::$pmpi, buf, count, datatype, dest, tag,
                comm, request,
            )
        }
    )*};
}

posted_sends! {
    MPI_Isend(c_int) => PMPI_Isend, PMPI_Isend, Now;
    MPI_Ibsend(c_int) => PMPI_Ibsend, PMPI_Ibsend, Now;
    MPI_Issend(c_int) => PMPI_Issend, PMPI_Issend, Now;
    MPI_Irsend(c_int) => PMPI_Irsend, PMPI_Irsend, Now;
    MPI_Send_init(c_int) => PMPI_Send_init, PMPI_Send_init, Persistent;
    MPI_Bsend_init(c_int) => PMPI_Bsend_init, PMPI_Bsend_init, Persistent;
    MPI_Ssend_init(c_int) => PMPI_Ssend_init, PMPI_Ssend_init, Persistent;
    MPI_Rsend_init(c_int) => PMPI_Rsend_init, PMPI_Rsend_init, Persistent;
    MPI_Isend_c(MPI_Count) => PMPI_Isend_c, PMPI_Isend, Now;
    MPI_Ibsend_c(MPI_Count) => PMPI_Ibsend_c, PMPI_Ibsend, Now;
    MPI_Issend_c(MPI_Count) => PMPI_Issend_c, PMPI_Issend, Now;
    MPI_Irsend_c(MPI_Count) => PMPI_Irsend_c, PMPI_Irsend, Now;
    MPI_Send_init_c(MPI_Count) => PMPI_Send_init_c, PMPI_Send_init, Persistent;
    MPI_Bsend_init_c(MPI_Count) => PMPI_Bsend_init_c, PMPI_Bsend_init, Persistent;
    MPI_Ssend_init_c(MPI_Count) => PMPI_Ssend_init_c, PMPI_Ssend_init, Persistent;
    MPI_Rsend_init_c(MPI_Count) => PMPI_Rsend_init_c, PMPI_Rsend_init, Persistent;
}

/// Whether a small nonblocking receive may be staged. A staged receive's
/// data reaches the program's buffer only in heisen's completion
/// wrappers. MPICH's `use mpi_f08` binding completes requests through
/// `PMPI_Wait*`/`PMPI_Test*` directly; heisen defines that binding's
/// symbols itself (`fortran08`), so its completions are heisen's as long
/// as the process resolves them to heisen's. Where it resolves them to
/// another library's (heisen linked after MPICH's Fortran library instead
/// of preloaded), receives take the struct type, whose data lands in the
/// program's buffer by itself (the merge of a completion heisen never
/// sees is lost, not the data).
fn receives_staged() -> bool {
    static STAGED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *STAGED.get_or_init(|| {
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
        let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"mpi_waitall_f08_".as_ptr()) };
        let ours = crate::fortran08::mpi_waitall_f08_ as *const () as usize;
        found.is_null() || found as usize == ours
    })
}

/// A posted receive of the program's `count × datatype` (unmeasured:
/// `plain()`, the program's own call, when not `measured`): its record
/// lands in its slot; the merge is at completion. `call` is heisen's
/// `int` post.
fn posted_recv<C: Count>(
    region: &'static Named,
    how: Post,
    measured: bool,
    wildcard: bool,
    buf: *mut c_void,
    count: C,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    plain: impl FnOnce() -> c_int,
    call: impl Fn(*const c_void, c_int, MPI_Datatype, *mut MPI_Request) -> c_int,
) -> c_int {
    if !measured || ensure().is_none() {
        return plain();
    }
    region::call(region, || {
        count.narrowed(datatype, |count, datatype| {
            recv_posted(region, how, wildcard, buf, count, datatype, request, call)
        })
    })
}

/// [`posted_recv`]'s part inside the caller's region; `MPI_Isendrecv`
/// posts its receive with it.
pub(crate) fn recv_posted(
    region: &'static Named,
    how: Post,
    wildcard: bool,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    call: impl Fn(*const c_void, c_int, MPI_Datatype, *mut MPI_Request) -> c_int,
) -> c_int {
    let site = region.id();
    // Persistent receives are staged too: cancelling a receive posted
    // with a struct type of large extent makes MPICH 4.0.2 print
    // "yaksa: leaked handle pool objects" at MPI_Finalize, output a
    // plain program does not have (MPI-4.0 §3.8.4 allows the cancel).
    // Not under the mpi_f08 binding (see receives_staged).
    if receives_staged()
        && let Some(n) = datatype::stageable(buf, count, datatype)
    {
        let kind = Kind::Recv { site, wildcard };
        let post = |b: *mut c_void, c, r| call(b.cast_const(), c, sys::byte(), r);
        let persistent = how == Post::Persistent;
        if let Some(rc) = staged(kind, persistent, buf, n, n, request, |_| {}, post) {
            return rc;
        }
    }
    let (index, wire) = slot(table().scratch());
    let kind = || Kind::Recv { site, wildcard };
    post(how, kind, wire, index, buf, count, datatype, request, call)
}

/// `MPI_Irecv`, `MPI_Recv_init` and their `_c` forms' body.
fn irecv<C: Count>(
    region: &'static Named,
    how: Post,
    plain: RecvPostFn<C>,
    f: RecvPostFn<c_int>,
    buf: *mut c_void,
    count: C,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    posted_recv(
        region,
        how,
        source != sys::proc_null(),
        source == sys::any_source(),
        buf,
        count,
        datatype,
        request,
        // SAFETY: the program's arguments, unchanged.
        || unsafe { plain(buf, count, datatype, source, tag, comm, request) },
        // SAFETY: a joined type from MPI_BOTTOM and the program's request.
        |b, c, t, r| unsafe { f(b.cast_mut(), c, t, source, tag, comm, r) },
    )
}

macro_rules! posted_recvs {
    ($($name:ident($count:ty) => $plain:ident, $pmpi:ident, $how:ident);* $(;)?) => {$(
        /// A nonblocking or persistent receive (MPI-4.0 §3.7.2, §3.9;
        /// `_c`: §19.2).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            buf: *mut c_void,
            count: $count,
            datatype: MPI_Datatype,
            source: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> c_int {
            static REGION: Named = Named::new(stringify!($name));
            irecv(
                &REGION, Post::$how, sys::$plain, sys::$pmpi, buf, count, datatype, source, tag,
                comm, request,
            )
        }
    )*};
}

posted_recvs! {
    MPI_Irecv(c_int) => PMPI_Irecv, PMPI_Irecv, Now;
    MPI_Recv_init(c_int) => PMPI_Recv_init, PMPI_Recv_init, Persistent;
    MPI_Irecv_c(MPI_Count) => PMPI_Irecv_c, PMPI_Irecv, Now;
    MPI_Recv_init_c(MPI_Count) => PMPI_Recv_init_c, PMPI_Recv_init, Persistent;
}

/// `MPI_Imrecv` and `MPI_Imrecv_c`'s body.
fn imrecv<C: Count>(
    region: &'static Named,
    buf: *mut c_void,
    count: C,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the program's handle pointer.
    let no_proc = message.is_null() || unsafe { *message } == sys::message_no_proc();
    let plain: ImrecvFn<C> = C::IMRECV;
    posted_recv(
        region,
        Post::Now,
        !no_proc,
        false,
        buf,
        count,
        datatype,
        request,
        // SAFETY: the program's arguments, unchanged.
        || unsafe { plain(buf, count, datatype, message, request) },
        // SAFETY: as in `irecv`.
        |b, c, t, r| unsafe { sys::PMPI_Imrecv(b.cast_mut(), c, t, message, r) },
    )
}

macro_rules! matched_posted_recvs {
    ($($name:ident($count:ty));* $(;)?) => {$(
        /// `MPI_Imrecv` (MPI-4.0 §3.8.3; `_c`: §19.2).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            buf: *mut c_void,
            count: $count,
            datatype: MPI_Datatype,
            message: *mut MPI_Message,
            request: *mut MPI_Request,
        ) -> c_int {
            static REGION: Named = Named::new(stringify!($name));
            imrecv(&REGION, buf, count, datatype, message, request)
        }
    )*};
}

matched_posted_recvs! {
    MPI_Imrecv(c_int);
    MPI_Imrecv_c(MPI_Count);
}
