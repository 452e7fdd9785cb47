//! The instrumentation actions the C API charges (R1), each calibrated
//! through its own code path: a region enter and exit by id, the
//! `-finstrument-functions` hooks, a piggyback pack, the begin read of a
//! merge and a piggyback merge.
//!
//! The runtime calibrates its own enter and exit (the Rust path) at start;
//! a C call and a compiler hook cost more, so each is timed through its
//! own exported code, the way `calibrate::runtime` times the Rust path
//! (000 §2: time N back-to-back actions; R1: split each cost around its
//! clock read). That happens once per process, on the first C call that
//! measures anything (or in `heisen_init`). A thread that already had a
//! location when the calibration paused it is charged the pause (R1: a
//! calibration pause adds its measured length).
//!
//! Every hot path is written once, generic over [`Mode`]: the export runs
//! it [`Live`]; the calibration runs the very same code as [`Calibrating`],
//! which only differs in where it finds the action ids (not yet published)
//! and in accepting the scratch region id.

use core::hint::black_box;
use core::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use heisen_core::Cost;
use heisen_shmem::calibrate::{self, SCRATCH_REGION};
use heisen_shmem::probe::Path;
use heisen_shmem::runtime::{Action, ActionId, Runtime};
use heisen_shmem::{Record, thread};

use crate::{instrument, piggyback, region};

/// The ids of the C API's actions in the runtime's action table.
#[derive(Clone, Copy, Debug)]
pub struct Actions {
    /// `heisen_region_enter` (by id or by name).
    pub enter: ActionId,
    /// `heisen_region_exit` (by id or by name).
    pub exit: ActionId,
    /// `__cyg_profile_func_enter`.
    pub hook_enter: ActionId,
    /// `__cyg_profile_func_exit`.
    pub hook_exit: ActionId,
    /// `heisen_piggyback_pack`: a release and its encoding (R3).
    pub pack: ActionId,
    /// `heisen_merge_begin`: the clock read before a blocking call.
    pub merge_begin: ActionId,
    /// `heisen_piggyback_merge`: decoding and merging one record (R4, R5).
    pub merge: ActionId,
}

/// Action names, as the report header lists them.
pub mod names {
    /// See [`super::Actions::enter`].
    pub const ENTER: &str = "c_enter";
    /// See [`super::Actions::exit`].
    pub const EXIT: &str = "c_exit";
    /// See [`super::Actions::hook_enter`].
    pub const HOOK_ENTER: &str = "cyg_profile_func_enter";
    /// See [`super::Actions::hook_exit`].
    pub const HOOK_EXIT: &str = "cyg_profile_func_exit";
    /// See [`super::Actions::pack`].
    pub const PACK: &str = "piggyback_pack";
    /// See [`super::Actions::merge_begin`].
    pub const MERGE_BEGIN: &str = "merge_begin";
    /// See [`super::Actions::merge`].
    pub const MERGE: &str = "piggyback_merge";
}

impl Actions {
    fn register(rt: &Runtime) -> Actions {
        Actions {
            enter: rt.action(names::ENTER),
            exit: rt.action(names::EXIT),
            hook_enter: rt.action(names::HOOK_ENTER),
            hook_exit: rt.action(names::HOOK_EXIT),
            pack: rt.action(names::PACK),
            merge_begin: rt.action(names::MERGE_BEGIN),
            merge: rt.action(names::MERGE),
        }
    }
}

/// Published once calibrated.
static ACTIONS: OnceLock<Actions> = OnceLock::new();
/// The same ids while the calibration runs.
static PROVISIONAL: OnceLock<Actions> = OnceLock::new();

/// An action of a region hot path, whose cost cell is kept by reference.
#[derive(Clone, Copy, Debug)]
pub enum Hot {
    /// `heisen_region_enter`.
    Enter = 0,
    /// `heisen_region_exit`.
    Exit = 1,
    /// `__cyg_profile_func_enter`.
    HookEnter = 2,
    /// `__cyg_profile_func_exit`.
    HookExit = 3,
}

/// The cells of the hot actions in the runtime's table, each null until
/// its ids are published: a hot path reads its cost through one pointer,
/// and a null one sends it to its slow path (which calibrates).
type HotCells = [AtomicPtr<Action>; 4];

/// [`Hot`] cells of [`ACTIONS`], stored once they are published.
static LIVE_HOT: HotCells = [const { AtomicPtr::new(core::ptr::null_mut()) }; 4];
/// [`Hot`] cells of [`PROVISIONAL`].
static PROVISIONAL_HOT: HotCells = [const { AtomicPtr::new(core::ptr::null_mut()) }; 4];

/// Stores the cells of `actions`' hot actions (the runtime's table lives
/// as long as the process).
fn publish(cells: &HotCells, rt: &'static Runtime, actions: &Actions) {
    let ids = [
        actions.enter,
        actions.exit,
        actions.hook_enter,
        actions.hook_exit,
    ];
    for (cell, id) in cells.iter().zip(ids) {
        let p: *const Action = rt.action_cell(id);
        cell.store(p.cast_mut(), Ordering::Release);
    }
}

/// The cost of `which` if its cell is published: loads only, nothing that
/// could panic (the hot paths rely on it, `region::enter_id`).
#[inline(always)]
fn hot_cost(cells: &HotCells, which: Hot) -> Option<Cost> {
    let p = cells[which as usize].load(Ordering::Acquire);
    // SAFETY: a non-null cell points into the leaked runtime's action
    // table (`publish`), which is never freed.
    #[allow(unsafe_code)] // reason: the published 'static cell
    (!p.is_null()).then(|| unsafe { &*p }.cost())
}

/// How a hot path finds its actions and which region ids it accepts.
pub trait Mode {
    /// The action ids to charge.
    fn actions(rt: &'static Runtime) -> &'static Actions;
    /// Whether `id` is a region the path may enter.
    fn known(rt: &Runtime, id: u32) -> bool;
    /// The cost of hot action `which`, or `None` before its ids are
    /// published (the caller then takes its slow path). Never panics.
    fn hot_cost(which: Hot) -> Option<Cost>;
}

/// A program's call: the calibrated actions (calibrating first if needed).
#[derive(Debug)]
pub enum Live {}

/// The calibration's call of the same code.
#[derive(Debug)]
pub enum Calibrating {}

impl Mode for Live {
    #[inline(always)]
    fn actions(rt: &'static Runtime) -> &'static Actions {
        match ACTIONS.get() {
            Some(a) => a,
            None => calibrate(rt),
        }
    }

    #[inline(always)]
    fn known(rt: &Runtime, id: u32) -> bool {
        rt.names().contains(id)
    }

    #[inline(always)]
    fn hot_cost(which: Hot) -> Option<Cost> {
        hot_cost(&LIVE_HOT, which)
    }
}

impl Mode for Calibrating {
    #[inline(always)]
    fn actions(rt: &'static Runtime) -> &'static Actions {
        PROVISIONAL.get_or_init(|| {
            let actions = Actions::register(rt);
            publish(&PROVISIONAL_HOT, rt, &actions);
            actions
        })
    }

    #[inline(always)]
    fn known(rt: &Runtime, id: u32) -> bool {
        rt.names().contains(id) || id == SCRATCH_REGION
    }

    #[inline(always)]
    fn hot_cost(which: Hot) -> Option<Cost> {
        hot_cost(&PROVISIONAL_HOT, which)
    }
}

/// Calibrates the C API's actions once (the first caller does it, others
/// wait) and returns them; charges the pause to the calling thread if it
/// was measured before (R1).
#[cold]
#[inline(never)]
pub fn calibrate(rt: &'static Runtime) -> &'static Actions {
    let registered = thread::registered();
    let t0 = rt.now();
    let actions = ACTIONS.get_or_init(|| {
        let calibrate = move || {
            let actions = *Calibrating::actions(rt);
            calibrate_all(rt, &actions);
            actions
        };
        // A first call from a thread with a small stack (a C program may
        // give its threads 64 KiB): the calibration's scratch state would
        // overflow it, so it runs on a thread with the default stack. The
        // calling thread then runs unmeasured (thread::register_current).
        thread::with_stack_room(calibrate)
    });
    publish(&LIVE_HOT, rt, actions);
    if registered {
        let pause = rt.now().saturating_sub(t0);
        // R1: a calibration pause adds its measured length.
        thread::with_current(|s| s.overhead(pause));
    }
    actions
}

/// Times every C API action through its own exported code (R1).
fn calibrate_all(rt: &'static Runtime, actions: &Actions) {
    // Called through pointers, as a C program calls through the PLT.
    let enter: fn(u32) -> crate::heisen_result = black_box(region::enter_id::<Calibrating>);
    let exit: fn(u32) -> crate::heisen_result = black_box(region::exit_id::<Calibrating>);
    let pair = calibrate::region_pair(rt, Path::C, || {
        enter(SCRATCH_REGION);
        exit(SCRATCH_REGION);
    });
    rt.set_cost(actions.enter, pair.enter);
    rt.set_cost(actions.exit, pair.exit);

    let address = instrument::calibration_address();
    let hook_enter: fn(usize) = black_box(instrument::enter::<Calibrating>);
    let hook_exit: fn(usize) = black_box(instrument::exit::<Calibrating>);
    let pair = calibrate::region_pair(rt, Path::Hook, || {
        hook_enter(address);
        hook_exit(address);
    });
    rt.set_cost(actions.hook_enter, pair.enter);
    rt.set_cost(actions.hook_exit, pair.exit);

    let pack: piggyback::PackFn = black_box(piggyback::pack::<Calibrating>);
    let mut buffer = [0u8; Record::ENCODED_LEN];
    let mut written = 0usize;
    let per_pack = thread::calibrating(rt, || {
        calibrate::per_call(rt, || {
            // SAFETY: a buffer of ENCODED_LEN bytes and a writable count.
            unsafe { pack(buffer.as_mut_ptr(), buffer.len(), &raw mut written) };
        })
    });
    rt.set_cost(
        actions.pack,
        heisen_core::Cost::whole(calibrate::ns(per_pack)),
    );

    let begin: fn() -> u64 = black_box(piggyback::merge_begin::<Calibrating>);
    let merge: piggyback::MergeFn = black_box(piggyback::merge::<Calibrating>);
    let (per_begin, per_merge) = thread::calibrating(rt, || {
        let per_begin = calibrate::per_call(rt, || {
            black_box(begin());
        });
        // A record of the scratch state itself: a merge that decides
        // nothing, the cheapest case, as the runtime calibrates merges.
        // SAFETY: as above.
        unsafe { pack(buffer.as_mut_ptr(), buffer.len(), &raw mut written) };
        let both = calibrate::per_call(rt, || {
            let b = begin();
            // SAFETY: the record's bytes; no output.
            unsafe {
                merge(
                    b,
                    buffer.as_ptr(),
                    buffer.len(),
                    0,
                    0,
                    0,
                    core::ptr::null_mut(),
                )
            };
        });
        (per_begin, both - per_begin)
    });
    rt.set_cost(
        actions.merge_begin,
        heisen_core::Cost::whole(calibrate::ns(per_begin)),
    );
    rt.set_cost(
        actions.merge,
        heisen_core::Cost::whole(calibrate::ns(per_merge)),
    );
}
