//! Set-up on the first MPI call after the MPI is initialised, the
//! `MPI_Init`, `MPI_Init_thread` and `MPI_Finalize` wrappers, and the
//! calibration of the interposer's actions (R1).
//!
//! `MPI_Init` cannot be relied on to be intercepted (Fortran `use
//! mpi_f08` on MPICH calls `PMPI_Init` directly), so every wrapper calls
//! [`ensure`], which sets up once `PMPI_Initialized` says so. Until then,
//! and after `MPI_Finalize`, wrappers pass straight through: the MPI does
//! not move messages outside that interval.

use core::ffi::{c_char, c_int};
use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use heisen_core::Form;
use heisen_shmem::ids::LocationIds;
use heisen_shmem::runtime::{ActionId, Runtime};
use heisen_shmem::with_current;

use crate::sys;

/// The interposer's actions (R1), each calibrated at set-up.
#[derive(Clone, Copy, Debug)]
pub struct Actions {
    /// A send's release and the packing of its record (R3).
    pub send: ActionId,
    /// A receive's merge and the unpacking of its record (R4, R5).
    pub recv: ActionId,
}

/// What every wrapper needs, made once per process.
#[derive(Debug)]
pub struct Mpi {
    /// Rank in `MPI_COMM_WORLD`.
    pub rank: c_int,
    /// Size of `MPI_COMM_WORLD`.
    pub size: c_int,
    /// The merge form of this process's locations (R4 or R5).
    pub form: Form,
    /// The calibrated actions.
    pub actions: Actions,
    /// The process runtime (shared with heisen-ffi and heisen-pthread).
    pub runtime: &'static Runtime,
}

static MPI: OnceLock<Mpi> = OnceLock::new();
static FINALIZED: AtomicBool = AtomicBool::new(false);
/// The runtime was made with the node's costs (`startup`): set-up
/// registers the interposer's actions without calibrating them.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Set-up is to keep the costs installed from the node's first rank
/// (`startup`) rather than calibrate.
pub fn use_installed_costs() {
    INSTALLED.store(true, Ordering::Release);
}

/// The interposer's state, set up on first use: `None` before the MPI is
/// initialised, after `MPI_Finalize`, and when heisen is disabled — the
/// wrappers then pass straight through, on every rank alike (the decision
/// must be the same on both ends of every message).
#[inline]
pub fn ensure() -> Option<&'static Mpi> {
    if FINALIZED.load(Ordering::Acquire) {
        return None;
    }
    if let Some(m) = MPI.get() {
        return Some(m);
    }
    ensure_slow()
}

#[cold]
fn ensure_slow() -> Option<&'static Mpi> {
    let (mut initialized, mut finalized) = (0, 0);
    // SAFETY: both may be called at any time; they write their flag.
    unsafe {
        sys::PMPI_Initialized(&mut initialized);
        sys::PMPI_Finalized(&mut finalized);
    }
    if initialized == 0 || finalized != 0 {
        return None;
    }
    // the TSC by default, one conversion per node from MPI_Init (R5, `align`)
    let rt = crate::align::runtime();
    if rt.config().disabled {
        return None;
    }
    let start = rt.now();
    let m = std::panic::catch_unwind(|| MPI.get_or_init(|| set_up(rt))).ok()?;
    // The whole wrapper paths are timed through the wrappers themselves,
    // which need `MPI` set: once, after it is.
    static PATHS: std::sync::Once = std::sync::Once::new();
    let mut calibrated = false;
    PATHS.call_once(|| {
        if INSTALLED.load(Ordering::Acquire) {
            return; // the node's costs, wrapper paths included
        }
        guarded(|| crate::calibrate::wrapper_paths(m));
        calibrated = true;
    });
    if calibrated {
        // R1: a calibration pause is a directly measured cost of the
        // thread that paid it.
        let pause = rt.now().saturating_sub(start);
        guarded(|| with_current(|s| s.overhead(pause)));
    }
    Some(m)
}

fn set_up(rt: &'static Runtime) -> Mpi {
    let (mut rank, mut size) = (0, 1);
    // SAFETY: the MPI is initialised (checked by the caller).
    unsafe {
        sys::PMPI_Comm_rank(sys::comm_world(), &mut rank);
        sys::PMPI_Comm_size(sys::comm_world(), &mut size);
    }
    rt.set_backend("mpi");
    rt.set_report_name(&crate::report::rank_file(rank));
    // R7 ties break by location id: unique across the run (`ids`),
    // `rank << 12` onwards for a rank's first 4,096 threads.
    rt.set_location_ids(LocationIds::rank(rank as u32, size as u32));
    // R7: without HEISEN_REGIONS the first names a process interns are
    // its selected regions. The node's calibration enters the regions of
    // its wrapper paths on one rank only; every rank interns them now, in
    // that order, so that they select alike.
    for name in crate::calibrate::PATH_REGIONS {
        let _ = rt.region_id(name);
    }
    // A thread measured before the MPI started (a C region, a thread
    // interposer) takes its rank-based id now.
    with_current(|s| {
        let id = rt.location_id(s.index());
        s.kernel_mut().set_id(id);
    });
    let actions = Actions {
        send: rt.action("mpi_send"),
        recv: rt.action("mpi_recv"),
    };
    if !INSTALLED.load(Ordering::Acquire) {
        crate::calibrate::kernel_parts(rt, &actions);
        crate::collective::calibrate(rt);
    } else {
        // registered by name with the node's costs: only the id is made
        let _ = crate::collective::action();
    }
    Mpi {
        rank,
        size,
        form: rt.config().form,
        actions,
        runtime: rt,
    }
}

/// Catches a panic of heisen's part of a wrapper: the program goes on
/// unmeasured for this call.
#[inline]
pub fn guarded<R>(f: impl FnOnce() -> R) -> Option<R> {
    std::panic::catch_unwind(core::panic::AssertUnwindSafe(f)).ok()
}

/// Ends the run after heisen's own code failed inside `call`: whether the
/// program's call happened cannot be known, so going on could change what
/// the program computes. Says so on stderr and aborts every rank.
#[cold]
pub fn fatal(call: &str) -> ! {
    eprintln!(
        "heisen: internal error in the {call} wrapper; aborting the run (set HEISEN_DISABLE=1 to run without heisen)"
    );
    // SAFETY: MPI_Abort may be called at any time after init.
    unsafe {
        sys::PMPI_Abort(sys::comm_world(), 70);
    }
    std::process::abort()
}

/// `MPI_Init` (MPI-4.0 §11.2.1).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    let t0 = heisen_shmem::clock::monotonic_ns();
    let rc = unsafe { sys::PMPI_Init(argc, argv) };
    crate::startup::note_pmpi_init(heisen_shmem::clock::monotonic_ns() - t0);
    if rc == sys::success() {
        // every rank is here: the node's calibration, then the clock
        // alignment's ping-pongs (R1, R5)
        crate::startup::at_init();
    }
    rc
}

/// `MPI_Init_thread` (MPI-4.0 §11.2.1). Every level is supported: each
/// thread has its own location, and the request table is shared.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    let t0 = heisen_shmem::clock::monotonic_ns();
    let rc = unsafe { sys::PMPI_Init_thread(argc, argv, required, provided) };
    crate::startup::note_pmpi_init(heisen_shmem::clock::monotonic_ns() - t0);
    if rc == sys::success() {
        // every rank is here: the node's calibration, then the clock
        // alignment's ping-pongs (R1, R5)
        crate::startup::at_init();
    }
    rc
}

/// `MPI_Finalize` (MPI-4.0 §11.2.2): each rank writes its report, then
/// rank 0 writes the merged run report once every rank's file is there.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    before_finalize();
    // SAFETY: no arguments.
    unsafe { sys::PMPI_Finalize() }
}

/// What `MPI_Finalize` does before the MPI's own (once).
fn before_finalize() {
    if let Some(m) = ensure() {
        // the collectives' handles, then the clock's drift (collective:
        // every rank is here), then the reports that carry both
        guarded(crate::collective::at_finalize);
        guarded(|| crate::align::at_finalize(m.rank, m.size));
        crate::report::at_finalize(m);
    }
    FINALIZED.store(true, Ordering::Release);
}

/// MPICH's `use mpi_f08` binding of `MPI_Finalize`, which calls
/// `PMPI_Finalize` directly and so never reaches the C wrapper: the
/// reports are written here, then the binding runs (found with
/// `dlsym(RTLD_NEXT)`). `ierror` is the optional Fortran argument.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpi_finalize_f08_(ierror: *mut c_int) {
    type Binding = unsafe extern "C" fn(*mut c_int);
    before_finalize();
    // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name.
    let next = unsafe { libc::dlsym(libc::RTLD_NEXT, c"mpi_finalize_f08_".as_ptr()) };
    if next.is_null() {
        // No f08 binding after this library: finalize as it would have.
        // SAFETY: no arguments; `ierror` is the caller's or null.
        let rc = unsafe { sys::PMPI_Finalize() };
        if !ierror.is_null() {
            // SAFETY: the caller's integer.
            unsafe { *ierror = rc };
        }
        return;
    }
    // SAFETY: the binding's own symbol, with the signature of its
    // Fortran interface (one optional integer, passed by reference).
    let binding: Binding = unsafe { core::mem::transmute::<*mut libc::c_void, Binding>(next) };
    // SAFETY: the caller's argument, unchanged.
    unsafe { binding(ierror) }
}
