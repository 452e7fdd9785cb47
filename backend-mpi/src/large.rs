//! Counts of both widths (MPI-4.0 §19.2, the large-count `_c` bindings):
//! every point-to-point wrapper is generic over [`Count`], `int` for the
//! classic call and `MPI_Count` for its `_c` twin, so that each call shape
//! has one body for both (STYLE "MPI": one generic wrapper per shape) and
//! a message sent with one form and received with the other carries its
//! record the same way (R3: every point-to-point path wrapped on both
//! sides; the wire is the record, then the data in the type map's order,
//! whichever form posted it).
//!
//! heisen's own calls take `int` counts: a count that fits an `int` goes
//! through as it is, a larger one becomes one element of
//! `MPI_Type_contiguous_c(count, datatype)` (the same type map, so the
//! same bytes on the wire, MPI-4.0 §5.1.2), which heisen's struct type then
//! holds as it would hold `count × datatype`. The contiguous type is freed
//! once the call is posted (MPI keeps a type alive while an operation or
//! another type uses it, §5.1.9). Unmeasured calls (no set-up,
//! `MPI_PROC_NULL`) go to the program's own function (`Count::RECV` …, or
//! the `plain` function a family's row names), unchanged.
//!
//! Statuses need nothing of their own: `status::fix` sets the count with
//! the 64-bit call, which `MPI_Get_count_c` and `MPI_Get_elements_c` read.

use core::ffi::{c_int, c_void};

use crate::sys::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Message, MPI_Request, MPI_Status};

/// A blocking send's function (`PMPI_Send` …) with counts `C`.
pub type SendFn<C> =
    unsafe extern "C" fn(*const c_void, C, MPI_Datatype, c_int, c_int, MPI_Comm) -> c_int;

/// A nonblocking or persistent send's function (`PMPI_Isend` …,
/// `PMPI_Send_init` …) with counts `C`.
pub type PostFn<C> = unsafe extern "C" fn(
    *const c_void,
    C,
    MPI_Datatype,
    c_int,
    c_int,
    MPI_Comm,
    *mut MPI_Request,
) -> c_int;

/// A nonblocking or persistent receive's function (`PMPI_Irecv`,
/// `PMPI_Recv_init`) with counts `C`.
pub type RecvPostFn<C> = unsafe extern "C" fn(
    *mut c_void,
    C,
    MPI_Datatype,
    c_int,
    c_int,
    MPI_Comm,
    *mut MPI_Request,
) -> c_int;

/// `PMPI_Recv` with counts `C`.
pub type RecvFn<C> = unsafe extern "C" fn(
    *mut c_void,
    C,
    MPI_Datatype,
    c_int,
    c_int,
    MPI_Comm,
    *mut MPI_Status,
) -> c_int;

/// `PMPI_Mrecv` with counts `C`.
pub type MrecvFn<C> =
    unsafe extern "C" fn(*mut c_void, C, MPI_Datatype, *mut MPI_Message, *mut MPI_Status) -> c_int;

/// `PMPI_Imrecv` with counts `C`.
pub type ImrecvFn<C> =
    unsafe extern "C" fn(*mut c_void, C, MPI_Datatype, *mut MPI_Message, *mut MPI_Request) -> c_int;

/// `PMPI_Sendrecv` (`R` = `*mut MPI_Status`) and `PMPI_Isendrecv` (`R` =
/// `*mut MPI_Request`) with counts `C`.
pub type ExchangeFn<C, R> = unsafe extern "C" fn(
    *const c_void,
    C,
    MPI_Datatype,
    c_int,
    c_int,
    *mut c_void,
    C,
    MPI_Datatype,
    c_int,
    c_int,
    MPI_Comm,
    R,
) -> c_int;

/// `PMPI_Sendrecv_replace` (`R` = `*mut MPI_Status`) and
/// `PMPI_Isendrecv_replace` (`R` = `*mut MPI_Request`) with counts `C`.
pub type ReplaceFn<C, R> = unsafe extern "C" fn(
    *mut c_void,
    C,
    MPI_Datatype,
    c_int,
    c_int,
    c_int,
    c_int,
    MPI_Comm,
    R,
) -> c_int;

/// A count of the program's: `c_int` (the classic bindings) or
/// `MPI_Count` (the `_c` bindings). Holds the program's own functions of
/// the calls that are not a family (a family's row names its pair) and
/// the conversions to heisen's `int` calls.
pub trait Count: Copy + 'static {
    /// `PMPI_Recv` or `PMPI_Recv_c`.
    const RECV: RecvFn<Self>;
    /// `PMPI_Mrecv` or `PMPI_Mrecv_c`.
    const MRECV: MrecvFn<Self>;
    /// `PMPI_Imrecv` or `PMPI_Imrecv_c`.
    const IMRECV: ImrecvFn<Self>;
    /// `PMPI_Sendrecv` or `PMPI_Sendrecv_c`.
    const SENDRECV: ExchangeFn<Self, *mut MPI_Status>;
    /// `PMPI_Sendrecv_replace` or `PMPI_Sendrecv_replace_c`.
    const SENDRECV_REPLACE: ReplaceFn<Self, *mut MPI_Status>;
    /// `PMPI_Isendrecv` or `PMPI_Isendrecv_c`.
    const ISENDRECV: ExchangeFn<Self, *mut MPI_Request>;
    /// `PMPI_Isendrecv_replace` or `PMPI_Isendrecv_replace_c`.
    const ISENDRECV_REPLACE: ReplaceFn<Self, *mut MPI_Request>;

    /// The count as an `MPI_Count` (every `int` fits).
    fn wide(self) -> MPI_Count;

    /// Runs `f` with `self × datatype` as an `int` count and a type: the
    /// count itself when it fits, else one element of a contiguous type
    /// made for the call and freed after it.
    fn narrowed(
        self,
        datatype: MPI_Datatype,
        f: impl FnOnce(c_int, MPI_Datatype) -> c_int,
    ) -> c_int;
}

impl Count for c_int {
    const RECV: RecvFn<Self> = sys::PMPI_Recv;
    const MRECV: MrecvFn<Self> = sys::PMPI_Mrecv;
    const IMRECV: ImrecvFn<Self> = sys::PMPI_Imrecv;
    const SENDRECV: ExchangeFn<Self, *mut MPI_Status> = sys::PMPI_Sendrecv;
    const SENDRECV_REPLACE: ReplaceFn<Self, *mut MPI_Status> = sys::PMPI_Sendrecv_replace;
    const ISENDRECV: ExchangeFn<Self, *mut MPI_Request> = sys::PMPI_Isendrecv;
    const ISENDRECV_REPLACE: ReplaceFn<Self, *mut MPI_Request> = sys::PMPI_Isendrecv_replace;

    #[inline]
    fn wide(self) -> MPI_Count {
        MPI_Count::from(self)
    }

    #[inline]
    fn narrowed(
        self,
        datatype: MPI_Datatype,
        f: impl FnOnce(c_int, MPI_Datatype) -> c_int,
    ) -> c_int {
        f(self, datatype)
    }
}

impl Count for MPI_Count {
    const RECV: RecvFn<Self> = sys::PMPI_Recv_c;
    const MRECV: MrecvFn<Self> = sys::PMPI_Mrecv_c;
    const IMRECV: ImrecvFn<Self> = sys::PMPI_Imrecv_c;
    const SENDRECV: ExchangeFn<Self, *mut MPI_Status> = sys::PMPI_Sendrecv_c;
    const SENDRECV_REPLACE: ReplaceFn<Self, *mut MPI_Status> = sys::PMPI_Sendrecv_replace_c;
    const ISENDRECV: ExchangeFn<Self, *mut MPI_Request> = sys::PMPI_Isendrecv_c;
    const ISENDRECV_REPLACE: ReplaceFn<Self, *mut MPI_Request> = sys::PMPI_Isendrecv_replace_c;

    #[inline]
    fn wide(self) -> MPI_Count {
        self
    }

    fn narrowed(
        self,
        datatype: MPI_Datatype,
        f: impl FnOnce(c_int, MPI_Datatype) -> c_int,
    ) -> c_int {
        if let Ok(small) = c_int::try_from(self) {
            return f(small, datatype);
        }
        let mut whole = datatype;
        // SAFETY: writes `whole` only; an invalid count or type is an error.
        let rc = unsafe { sys::PMPI_Type_contiguous_c(self, datatype, &mut whole) };
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
}

/// Stamps out the exports of an exchange shape for both count widths:
/// `MPI_Sendrecv`/`MPI_Isendrecv` (`exchanges!`, ending in a status or a
/// request `$last`) and their `_replace` forms (`replaces!`). Unmeasured
/// (before set-up) the program's own function, `Count::$plain`, runs
/// unchanged; otherwise `$body(m, region, …)`, which takes the program's
/// counts (`Count`) and narrows them itself.
macro_rules! exchanges {
    ($doc:literal, $plain:ident, $body:ident, $last:ident: $last_ty:ty;
     $($name:ident($count:ty));* $(;)?) => {$(
        #[doc = $doc]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            sendbuf: *const c_void,
            sendcount: $count,
            sendtype: MPI_Datatype,
            dest: c_int,
            sendtag: c_int,
            recvbuf: *mut c_void,
            recvcount: $count,
            recvtype: MPI_Datatype,
            source: c_int,
            recvtag: c_int,
            comm: MPI_Comm,
            $last: $last_ty,
        ) -> c_int {
            let Some(m) = $crate::setup::ensure() else {
                let plain: $crate::large::ExchangeFn<$count, $last_ty> =
                    <$count as $crate::large::Count>::$plain;
                // SAFETY: the program's arguments, unchanged.
                return unsafe {
                    plain(
                        sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                        source, recvtag, comm, $last,
                    )
                };
            };
            static REGION: $crate::region::Named = $crate::region::Named::new(stringify!($name));
            $body(
                m, &REGION, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                recvtype, source, recvtag, comm, $last,
            )
        }
    )*};
}

/// See [`exchanges!`].
macro_rules! replaces {
    ($doc:literal, $plain:ident, $body:ident, $last:ident: $last_ty:ty;
     $($name:ident($count:ty));* $(;)?) => {$(
        #[doc = $doc]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            buf: *mut c_void,
            count: $count,
            datatype: MPI_Datatype,
            dest: c_int,
            sendtag: c_int,
            source: c_int,
            recvtag: c_int,
            comm: MPI_Comm,
            $last: $last_ty,
        ) -> c_int {
            let Some(m) = $crate::setup::ensure() else {
                let plain: $crate::large::ReplaceFn<$count, $last_ty> =
                    <$count as $crate::large::Count>::$plain;
                // SAFETY: the program's arguments, unchanged.
                return unsafe {
                    plain(buf, count, datatype, dest, sendtag, source, recvtag, comm, $last)
                };
            };
            static REGION: $crate::region::Named = $crate::region::Named::new(stringify!($name));
            $body(m, &REGION, buf, count, datatype, dest, sendtag, source, recvtag, comm, $last)
        }
    )*};
}

pub(crate) use {exchanges, replaces};
