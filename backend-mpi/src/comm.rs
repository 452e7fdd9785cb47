//! Communicator creation (MPI-4.0 chapter 7): the calls that synchronise
//! their participants are n-to-n merges (R6), made like a barrier with the
//! extra exchange of [`crate::collective`] on a communicator every
//! participant belongs to:
//!
//! | call | exchange on |
//! |---|---|
//! | `Comm_dup`, `Comm_dup_with_info`, `Comm_split`, `Comm_split_type` | the parent (every rank of it took part) |
//! | `Comm_create` | the new communicator (the group; the others get `MPI_COMM_NULL`) |
//! | `Comm_create_group` | the new communicator (only the group took part) |
//! | `Intercomm_merge` | the new intracommunicator |
//!
//! Regions only, not merged: `Comm_free` (collective, but MPICH does not
//! synchronise in it), `Comm_idup` (nonblocking), `Intercomm_create` (only
//! the two leaders talk), and anything on an intercommunicator parent.
//! Messages and collectives on every new communicator, intercommunicators
//! included, carry records like any other.

use core::ffi::c_int;

use crate::collective::{Shape, blocking, blocking_on};
use crate::region::{self, Named};
use crate::sys::{self, MPI_Comm, MPI_Group, MPI_Info, MPI_Request};

/// A creation call whose exchange runs on the communicator it returns in
/// `*new`; `MPI_COMM_NULL` there (a rank left out) makes the call a
/// region only on that rank, which is right: it took no part.
fn on_new(region: &'static Named, new: *mut MPI_Comm, call: impl FnOnce() -> c_int) -> c_int {
    blocking_on(region, Shape::NToN, call, |rc| {
        if rc != sys::success() || new.is_null() {
            return None;
        }
        // SAFETY: the call succeeded, so the MPI wrote `*new`.
        let comm = unsafe { *new };
        // SAFETY: reading a constant handle.
        (comm != unsafe { sys::RSMPI_COMM_NULL }).then_some(comm)
    })
}

/// `MPI_Comm_dup` (MPI-4.0 §7.4.2): n-to-n on the parent.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    static REGION: Named = Named::new("MPI_Comm_dup");
    // SAFETY: the program's arguments, passed on unchanged.
    blocking(&REGION, comm, Shape::NToN, || unsafe {
        sys::PMPI_Comm_dup(comm, newcomm)
    })
}

/// `MPI_Comm_dup_with_info` (§7.4.2): n-to-n on the parent.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_dup_with_info(
    comm: MPI_Comm,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
) -> c_int {
    static REGION: Named = Named::new("MPI_Comm_dup_with_info");
    // SAFETY: as above.
    blocking(&REGION, comm, Shape::NToN, || unsafe {
        sys::PMPI_Comm_dup_with_info(comm, info, newcomm)
    })
}

/// `MPI_Comm_split` (§7.4.2): n-to-n on the parent.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_split(
    comm: MPI_Comm,
    color: c_int,
    key: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    static REGION: Named = Named::new("MPI_Comm_split");
    // SAFETY: as above.
    blocking(&REGION, comm, Shape::NToN, || unsafe {
        sys::PMPI_Comm_split(comm, color, key, newcomm)
    })
}

/// `MPI_Comm_split_type` (§7.4.2): n-to-n on the parent.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_split_type(
    comm: MPI_Comm,
    split_type: c_int,
    key: c_int,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
) -> c_int {
    static REGION: Named = Named::new("MPI_Comm_split_type");
    // SAFETY: as above.
    blocking(&REGION, comm, Shape::NToN, || unsafe {
        sys::PMPI_Comm_split_type(comm, split_type, key, info, newcomm)
    })
}

/// `MPI_Comm_create` (§7.4.2): every rank of the parent calls, those
/// outside the group get `MPI_COMM_NULL`; n-to-n on the new communicator,
/// among the group. Not on the parent: with a group that is not a subset
/// of the parent's (MPICH's `errors/comm/ccreate1`), MPICH fails the call
/// on the ranks inside the group and returns `MPI_COMM_NULL` on the
/// others, and an exchange on the parent after success only waited for
/// ever for the ranks that failed. On the new communicator every rank that
/// holds it has succeeded. The ranks left out merge nothing: their wait
/// for the group is lost to the critical path (a region only).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_create(
    comm: MPI_Comm,
    group: MPI_Group,
    newcomm: *mut MPI_Comm,
) -> c_int {
    static REGION: Named = Named::new("MPI_Comm_create");
    // SAFETY: as above.
    on_new(&REGION, newcomm, || unsafe {
        sys::PMPI_Comm_create(comm, group, newcomm)
    })
}

/// `MPI_Comm_create_group` (§7.4.2): only the group calls, so the merge
/// runs on the new communicator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_create_group(
    comm: MPI_Comm,
    group: MPI_Group,
    tag: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    static REGION: Named = Named::new("MPI_Comm_create_group");
    // SAFETY: as above.
    on_new(&REGION, newcomm, || unsafe {
        sys::PMPI_Comm_create_group(comm, group, tag, newcomm)
    })
}

/// `MPI_Intercomm_merge` (§7.6.2): n-to-n on the merged communicator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Intercomm_merge(
    intercomm: MPI_Comm,
    high: c_int,
    newintracomm: *mut MPI_Comm,
) -> c_int {
    static REGION: Named = Named::new("MPI_Intercomm_merge");
    // SAFETY: as above.
    on_new(&REGION, newintracomm, || unsafe {
        sys::PMPI_Intercomm_merge(intercomm, high, newintracomm)
    })
}

/// `MPI_Intercomm_create` (§7.6.2): a region; only the leaders talk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Intercomm_create(
    local_comm: MPI_Comm,
    local_leader: c_int,
    peer_comm: MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut MPI_Comm,
) -> c_int {
    static REGION: Named = Named::new("MPI_Intercomm_create");
    // SAFETY: as above.
    region::call(&REGION, || unsafe {
        sys::PMPI_Intercomm_create(
            local_comm,
            local_leader,
            peer_comm,
            remote_leader,
            tag,
            newintercomm,
        )
    })
}

/// `MPI_Comm_free` (§7.4.3): a region; MPICH does not synchronise in it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut MPI_Comm) -> c_int {
    static REGION: Named = Named::new("MPI_Comm_free");
    // SAFETY: as above.
    region::call(&REGION, || unsafe { sys::PMPI_Comm_free(comm) })
}

/// `MPI_Comm_idup` (§7.4.2): a region; nonblocking, not merged.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_idup(
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    static REGION: Named = Named::new("MPI_Comm_idup");
    // SAFETY: as above.
    region::call(&REGION, || unsafe {
        sys::PMPI_Comm_idup(comm, newcomm, request)
    })
}
