//! Communicators of heisen's own beside the program's: a window's
//! (`window`) and a persistent collective's (`collective_init`). heisen's
//! messages on them can never meet the program's, whatever the MPI does
//! with its tags.
//!
//! Each takes one of the MPI's context ids (MPICH has 2,048 in all), so
//! each user keeps a fixed number at once (R12), and the ranks of the
//! program's communicator first agree that every one of them has room
//! ([`everywhere`]): an object is tracked on all of its ranks or on none.

use core::ffi::c_int;

use crate::sys::{self, MPI_Comm};

/// Whether `mine` holds on every rank of `comm`: one `MPI_Allreduce` of an
/// int on the program's communicator, which every rank reaches inside the
/// same collective call of the program's.
pub fn everywhere(comm: MPI_Comm, mine: bool) -> bool {
    let mine = c_int::from(mine);
    let mut all: c_int = 0;
    // SAFETY: the program's communicator, valid (the program's collective
    // call on it just succeeded on every rank, each now here); one int each.
    unsafe {
        sys::PMPI_Allreduce(
            (&mine as *const c_int).cast(),
            (&mut all as *mut c_int).cast(),
            1,
            sys::RSMPI_INT32_T,
            sys::RSMPI_MIN,
            comm,
        )
    };
    all == 1
}

/// heisen's own communicator over `comm`'s group, in its rank order. A
/// split, not a dup: a dup would copy the program's attributes and run its
/// copy callbacks (and its delete callbacks when heisen frees the copy).
/// The split reports an error (no context id left, say) to heisen, not to
/// the program's error handler: the object then stays untracked.
pub fn private_copy(comm: MPI_Comm) -> Option<MPI_Comm> {
    // SAFETY: reading constant handles; `comm` is valid (the program's
    // collective call on it just succeeded, on every rank, which all make
    // this same collective call); the error handler is set back before
    // anything else runs on this thread.
    unsafe {
        let mut own = sys::RSMPI_COMM_NULL;
        let mut handler: sys::MPI_Errhandler = core::mem::zeroed();
        let mut rank: c_int = 0;
        sys::PMPI_Comm_rank(comm, &mut rank);
        sys::PMPI_Comm_get_errhandler(comm, &mut handler);
        sys::PMPI_Comm_set_errhandler(comm, sys::RSMPI_ERRORS_RETURN);
        let rc = sys::PMPI_Comm_split(comm, 0, rank, &mut own);
        sys::PMPI_Comm_set_errhandler(comm, handler);
        sys::PMPI_Errhandler_free(&mut handler);
        if rc != sys::success() {
            return None;
        }
        sys::PMPI_Comm_set_errhandler(own, sys::RSMPI_ERRORS_RETURN);
        Some(own)
    }
}

/// [`private_copy`] with `comm`'s process topology (MPI-4.0 §8.5), for a
/// neighbourhood exchange: the same Cartesian grid, graph or distributed
/// graph made again over heisen's copy, ranks not reordered, so each rank
/// has the in-neighbours it has on `comm`. Without a topology, the copy
/// itself. `None` where a step fails (on every rank alike: each is
/// collective over the same group).
pub fn topology_copy(comm: MPI_Comm) -> Option<MPI_Comm> {
    let mut copy = private_copy(comm)?;
    let mut kind: c_int = sys::undefined();
    // SAFETY: reading a constant handle.
    let mut own = unsafe { sys::RSMPI_COMM_NULL };
    // SAFETY: `comm` is the program's, valid; `copy` is ours with
    // `MPI_ERRORS_RETURN`; the arrays are sized from the MPI's own counts;
    // every rank makes the same collective constructor on `copy`.
    let rc = unsafe {
        sys::PMPI_Topo_test(comm, &mut kind);
        if kind == sys::RSMPI_CART {
            let mut n: c_int = 0;
            sys::PMPI_Cartdim_get(comm, &mut n);
            let len = usize::try_from(n).unwrap_or(0);
            let (mut dims, mut periods, mut coords) = (vec![0; len], vec![0; len], vec![0; len]);
            sys::PMPI_Cart_get(
                comm,
                n,
                dims.as_mut_ptr(),
                periods.as_mut_ptr(),
                coords.as_mut_ptr(),
            );
            sys::PMPI_Cart_create(copy, n, dims.as_ptr(), periods.as_ptr(), 0, &mut own)
        } else if kind == sys::RSMPI_GRAPH {
            let (mut nodes, mut edges): (c_int, c_int) = (0, 0);
            sys::PMPI_Graphdims_get(comm, &mut nodes, &mut edges);
            let mut index = vec![0; usize::try_from(nodes).unwrap_or(0)];
            let mut edge = vec![0; usize::try_from(edges).unwrap_or(0)];
            sys::PMPI_Graph_get(comm, nodes, edges, index.as_mut_ptr(), edge.as_mut_ptr());
            sys::PMPI_Graph_create(copy, nodes, index.as_ptr(), edge.as_ptr(), 0, &mut own)
        } else if kind == sys::RSMPI_DIST_GRAPH {
            let (mut ins, mut outs, mut weighted): (c_int, c_int, c_int) = (0, 0, 0);
            sys::PMPI_Dist_graph_neighbors_count(comm, &mut ins, &mut outs, &mut weighted);
            let mut sources = vec![0; usize::try_from(ins).unwrap_or(0)];
            let mut destinations = vec![0; usize::try_from(outs).unwrap_or(0)];
            let (mut sw, mut dw) = (vec![0; sources.len()], vec![0; destinations.len()]);
            sys::PMPI_Dist_graph_neighbors(
                comm,
                ins,
                sources.as_mut_ptr(),
                sw.as_mut_ptr(),
                outs,
                destinations.as_mut_ptr(),
                dw.as_mut_ptr(),
            );
            let unweighted = sys::RSMPI_UNWEIGHTED();
            sys::PMPI_Dist_graph_create_adjacent(
                copy,
                ins,
                sources.as_ptr(),
                unweighted,
                outs,
                destinations.as_ptr(),
                unweighted,
                sys::info_null(),
                0,
                &mut own,
            )
        } else {
            return Some(copy);
        }
    };
    // SAFETY: our own communicator; the topology one, if made, stands alone.
    unsafe { sys::PMPI_Comm_free(&mut copy) };
    if rc != sys::success() {
        return None;
    }
    // SAFETY: our own communicator.
    unsafe { sys::PMPI_Comm_set_errhandler(own, sys::RSMPI_ERRORS_RETURN) };
    Some(own)
}
