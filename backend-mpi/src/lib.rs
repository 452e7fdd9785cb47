//! heisen-mpi: `mpiexec -genv LD_PRELOAD=libheisen_mpi.so ./app` gives an
//! unmodified C, C++ or Fortran MPI program compensated profiles and its
//! critical path: every message carries the sender's piggyback (R3,
//! `docs/piggyback.md`), every completion merges it (R4, R5), and every
//! MPI call is a region.
//!
//! Each `MPI_*` export calls its `PMPI_*` twin (MPI standard §14.2, the
//! profiling interface) and keeps the program's behaviour: payloads,
//! statuses, counts and error codes are what the program sees without
//! heisen. heisen's work runs inside `catch_unwind`; nothing panics across
//! the MPI boundary.
//!
//! # Modules and the internal API other modules build on
//!
//! | module | what it holds |
//! |---|---|
//! | [`sys`] | mpi-sys re-exports and the shim's macro handles (`byte()`, `bottom()`, …), `key()` of a handle |
//! | [`setup`] | lazy set-up on the first MPI call after init ([`setup::ensure`] → `&'static Mpi`: rank, size, actions, form), `MPI_Init`, `MPI_Init_thread`, `MPI_Finalize`, the per-rank and merged reports |
//! | [`region`] | [`region::call`]`(name, f)`: every MPI call is a region (R1, R2) and nothing unwinds out of `f`'s heisen part |
//! | [`piggyback`] | the wire record (R3): pack, unpack, record length, the empty record for unmeasured sends |
//! | [`datatype`] | how a message and its record travel together: staging copy for small contiguous data, a struct type from `MPI_BOTTOM` otherwise (`Wire`) |
//! | [`status`] | fixing a status so the program sees its own counts (`fix`), `MPI_STATUS_IGNORE` handling |
//! | [`requests`] | the fixed-capacity request → record table and the merge at completion; [`requests::Completion`] lets other modules (nonblocking and persistent collectives) register requests that complete through the same `Wait*`/`Test*` wrappers |
//! | [`merge`] | a send's release (`merge::release`) and the merge of what a completion received (`merge::begin`, `merge::received`), with R12's comm records and R11's reorderings |
//! | [`p2p`] | blocking point-to-point wrappers (`int` and `_c`), one generic per call shape, and `send_joined`/`recv_joined` |
//! | [`nonblocking`] | `Isend` …, `Send_init` …, `Irecv`, `Recv_init`, `Imrecv`: the record in the request's slot |
//! | [`completion`] | `Wait*`, `Test*`: finish what completed, merge, put back the rest |
//! | [`persistent`] | `Start`, `Startall`, `Request_free`, `Request_get_status` |
//! | [`exchange`] | `Sendrecv`, `Sendrecv_replace` |
//! | [`isendrecv`] | `Isendrecv`, `Isendrecv_replace` (and `_c`): heisen's own receive and send behind one generalized request, which the completion wrappers advance |
//! | [`large`] | [`large::Count`]: `int` and `MPI_Count`, the program's own `PMPI_*` function of each width, and the count narrowed to heisen's `int` calls (a contiguous type above `int`); every point-to-point wrapper is generic over it, so `MPI_Send` and `MPI_Send_c` … share one body |
//! | [`probe`] | `Probe`, `Iprobe`, `Mprobe`, `Improbe`: fixed statuses |
//! | [`fortran08`] | MPICH's `mpi_f08` procedures that call `PMPI_*` directly (completions, probes, starts, `Type_free`, communicators, barriers, `Init`): the binding's conversion, then the C wrappers |
//! | [`bsend`] | `Buffer_attach`/`_detach`: room for the records of buffered sends |
//! | [`node`] | the ranks of this rank's node, from one `Iallgather` of node keys (no communicator made), and set-up's node-wide broadcasts and reductions over them |
//! | [`startup`] | `MPI_Init`'s part after `PMPI_Init`: one calibration per node handed to its ranks (R1), then the clock alignment; how long each part took |
//! | [`window`] | one-sided communication: windows tracked with a communicator of heisen's own; `Win_fence` and creation/free n-to-n, `Win_post`→`Win_start` and `Win_complete`→`Win_wait`/`Win_test` as record messages; passive target as regions |
//! | [`collective_init`] | persistent collectives (`Barrier_init` … `Neighbor_alltoallw_init`, `_c`): heisen's exchange bound to a persistent request of its own on a communicator of its own, started with the program's and merged at each completion |
//! | [`private`] | heisen's own communicators beside the program's (windows, persistent collectives): the ranks' agreement on room, the split, the copy of a topology |
//! | [`report`] | each rank's report at `MPI_Finalize`, rank 0's merged run report and summary |
//!
//! Collectives, persistent collectives, communicators, clock alignment and
//! `MPI_Pcontrol` live in their own modules (`collective`,
//! `collective_init`, `comm`, `align`, `pcontrol`) and use
//! `setup::ensure` (the rank, the form, the actions), `region::call`
//! (every call a region, no panic across the boundary),
//! `merge::{release, begin, received}` and `heisen_shmem::with_current`
//! (the kernel of the calling thread: `arrive`/`leave` for R6's n-to-n
//! shape), `piggyback::{pack, unpack, LEN}`, `requests::register` (a
//! nonblocking collective's request with its own `Completion`), and
//! `report::merge_files` (the run report from the rank files).
#![allow(unsafe_code)]
// reason: an interposer is C ABI exports over raw MPI buffers and handles; every block says why it holds
#![allow(clippy::missing_safety_doc)] // reason: the exports' contracts are the MPI standard's
#![allow(non_snake_case)] // reason: the exports carry the MPI standard's names
#![allow(clippy::too_many_arguments)] // reason: the helpers mirror the MPI calls' own argument lists
#![allow(clippy::not_unsafe_ptr_arg_deref)]
// reason: the helpers pass the program's buffers and statuses to the MPI as the program did; their validity is the MPI call's contract

pub mod align;
pub mod bsend;
pub mod calibrate;
pub mod collective;
pub mod collective_init;
pub mod comm;
pub mod completion;
pub mod datatype;
pub mod exchange;
pub mod fortran08;
pub mod isendrecv;
pub mod large;
pub mod merge;
pub mod node;
pub mod nonblocking;
pub mod p2p;
pub mod pcontrol;
pub mod persistent;
pub mod piggyback;
pub mod private;
pub mod probe;
pub mod quiet;
pub mod region;
pub mod report;
pub mod requests;
pub mod setup;
pub mod startup;
pub mod status;
pub mod sys;
pub mod window;

// Two threads in `exit` at once must not cut the report short
// (`heisen_shmem::exit`).
heisen_shmem::interpose_exit!();
