//! Calibration of the interposer's actions (R1), at set-up, per process.
//!
//! First the kernel's part alone (a release and packing its record, a
//! merge and unpacking one), so that the first calls are charged
//! something. Then the whole wrapper paths against the MPI's own, on
//! `MPI_COMM_SELF` so that no other rank is involved: an 8-byte
//! `MPI_Irecv` + `MPI_Send` + `MPI_Wait` through heisen's wrappers
//! against the same through `PMPI_*`, in alternating batches. That
//! difference holds what a message costs more with heisen — the record's
//! 240 bytes, the staging copies, the status fixing, the table — besides
//! the three regions' enter and exit, which are charged as such. What is
//! left is shared between `mpi_send` and `mpi_recv` in the proportion of
//! their kernel parts, never below those.

use core::ffi::{c_int, c_void};
use core::hint::black_box;

use heisen_core::{Cost, Dependency};
use heisen_shmem::calibrate::{ns, overhead, per_call};
use heisen_shmem::runtime::Runtime;
use heisen_shmem::thread::calibrating;
use heisen_shmem::{Record, with_current};

use crate::piggyback;
use crate::setup::{Actions, Mpi};
use crate::sys;

/// Tag of the calibration messages (on `MPI_COMM_SELF`, which no other
/// rank shares).
const TAG: c_int = 32_000;

/// Times the kernel's part of each action back to back (R1) on a scratch
/// state; returns `(send, recv)` in ns.
pub fn kernel_parts(rt: &'static Runtime, a: &Actions) -> (f64, f64) {
    let mut wire = piggyback::blank();
    let send = calibrating(rt, || {
        per_call(rt, || {
            if let Some(r) = with_current(|s| s.release_split(a.send)) {
                piggyback::pack(&r, &mut wire);
            }
            black_box(&wire);
        })
    });
    let recv = calibrating(rt, || {
        per_call(rt, || {
            if let Some(begin) = with_current(|s| s.begin(a.recv)) {
                let r = piggyback::unpack(black_box(&wire)).unwrap_or(Record::EMPTY);
                with_current(|s| black_box(s.end(begin, &[Dependency::immediate(&r)], a.recv)));
            }
        })
    });
    rt.set_cost(a.send, whole(send));
    rt.set_cost(a.recv, whole(recv));
    (send, recv)
}

/// The regions [`wrapper_paths`] enters, in its order: every rank interns
/// them at set-up, calibrating or not (`setup`), so that a default
/// selection (R7) is the same on every rank.
pub const PATH_REGIONS: [&str; 3] = ["MPI_Irecv", "MPI_Send", "MPI_Wait"];

/// Times the whole wrapper paths (module docs) and sets the costs.
pub fn wrapper_paths(m: &Mpi) {
    let rt = m.runtime;
    let (send, recv) = (
        rt.cost(m.actions.send).whole as f64,
        rt.cost(m.actions.recv).whole as f64,
    );
    let (mut out, mut into) = ([0u8; 8], [0u8; 8]);
    let (o, b): (*mut c_void, *mut c_void) = (out.as_mut_ptr().cast(), into.as_mut_ptr().cast());
    // SAFETY (both closures): 8-byte buffers that live across the loops,
    // a receive posted before its send, completed before the next.
    let extra = calibrating(rt, || {
        overhead(
            rt,
            || unsafe {
                let mut r = sys::request_null();
                crate::nonblocking::MPI_Irecv(b, 8, sys::byte(), 0, TAG, self_comm(), &mut r);
                crate::p2p::MPI_Send(o, 8, sys::byte(), 0, TAG, self_comm());
                crate::completion::MPI_Wait(&mut r, sys::status_ignore());
            },
            || unsafe {
                let mut r = sys::request_null();
                sys::PMPI_Irecv(b, 8, sys::byte(), 0, TAG, self_comm(), &mut r);
                sys::PMPI_Send(o, 8, sys::byte(), 0, TAG, self_comm());
                sys::PMPI_Wait(&mut r, sys::status_ignore());
            },
        )
    });
    let c = rt.calibration();
    let regions = 3.0 * (c.enter.whole + c.exit.whole) as f64;
    let rest = (extra - regions).max(send + recv);
    let share = send / (send + recv).max(1.0);
    rt.set_cost(m.actions.send, whole(rest * share));
    rt.set_cost(m.actions.recv, whole(rest * (1.0 - share)));
}

/// `MPI_COMM_SELF`.
fn self_comm() -> sys::MPI_Comm {
    // SAFETY: a constant handle of the MPI.
    unsafe { sys::RSMPI_COMM_SELF }
}

/// A cost that falls after its clock read.
fn whole(per_call: f64) -> Cost {
    let whole = ns(per_call);
    Cost {
        whole,
        inside: whole,
    }
}
