//! The process runtime: one per process, whatever reaches it — the Rust
//! API, the C API, the pthread interposer, the MPI interposer (DESIGN §2,
//! "One runtime per real process").
//!
//! It holds the clock, the configuration, the calibrated costs of every
//! instrumentation action (R1), the interned region names, the table of
//! thread states, and writes the report once at the end.
//!
//! # One runtime, several copies of its code
//!
//! The runtime's code is linked into every heisen library a process may
//! load (`libheisen.so`, `libheisen_pthread.so`, `libheisen_mpi.so`) and
//! into Rust programs directly. Each copy exports
//! `heisen_process_runtime_v1`; on first use a copy looks that symbol up in
//! the process's global scope (`dlsym(RTLD_DEFAULT)`), which finds the
//! copy loaded first, and uses that copy's runtime instead of making its
//! own. The function takes an ABI fingerprint (crate version, a hash of
//! the sources and the compiler, type sizes, `K`): copies from another
//! build refuse each other, and the one that cannot share keeps a runtime
//! of its own and says so at exit.

use core::ffi::c_void;
use core::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use heisen_core::{Calibration, Cost};

use crate::calibrate;
use crate::clock::Clock;
use crate::config::Config;
use crate::ids::LocationIds;
use crate::monitor::Monitor;
use crate::names::{NameError, Names};
use crate::report;
use crate::thread::Thread;
use crate::{SELECTED, Stats};

/// Threads measured at the same time per process; a thread that starts
/// while this many measured threads are alive runs unmeasured and is
/// counted (R12: bounded memory). A slot whose thread ended is reused: its
/// location's report moves to the registry's store of ended locations.
pub const MAX_THREADS: usize = 512;

/// Most ended locations kept for the report once their slots were reused
/// (R12); beyond it (or [`ENDED_BYTES`]) they are counted, not reported.
pub const ENDED_LOCATIONS: usize = 65_536;

/// Most bytes of report text the store of ended locations keeps (R12): a
/// thread's location takes about 500 bytes without regions, up to some
/// 100 KiB with full region tables.
pub const ENDED_BYTES: usize = 64 << 20;

/// Most named actions (R1 costs) a runtime keeps.
pub const MAX_ACTIONS: usize = heisen_core::report::MAX_ACTIONS;

/// Region id of no region (an unused selected slot).
pub const NO_REGION: u32 = u32::MAX;

/// A named instrumentation action whose calibrated cost the kernel charges
/// (R1): `enter`, `mutex_acquire`, `mpi_send`, …
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActionId(u8);

/// The actions every runtime has.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    /// A generic release (what the core calls `send`).
    pub release: ActionId,
    /// A generic merge.
    pub merge: ActionId,
    /// A spawned thread's start (R8).
    pub thread_start: ActionId,
    /// A thread's end, which a join merges (R8).
    pub thread_end: ActionId,
}

/// One action's cell in the runtime's table: its name and calibrated cost.
/// A hot path may keep a reference to it (the table never moves) and read
/// the cost with [`Action::cost`], without the id's lookup.
#[derive(Debug)]
pub struct Action {
    name: OnceLock<String>,
    whole: AtomicU64,
    inside: AtomicU64,
    /// The plain operation's own time inside the action's wait (R5).
    own: AtomicU64,
}

impl Action {
    /// The calibrated cost (R1; zero until calibrated).
    #[inline]
    pub fn cost(&self) -> Cost {
        Cost {
            whole: self.whole.load(Ordering::Relaxed),
            inside: self.inside.load(Ordering::Relaxed),
        }
    }
}

/// The registry of thread states: [`MAX_THREADS`] slots, each reused once
/// its thread is gone, and the store of the ended locations whose slots
/// were reused (R12: both bounded).
#[derive(Debug)]
pub struct Registry {
    slots: Box<[Slot]>,
    /// Slots handed out so far (a high-water mark).
    next: AtomicUsize,
    /// Locations registered so far: the next location's number.
    locations: AtomicU32,
    /// Where the search for a reusable slot goes on from.
    cursor: AtomicUsize,
    dropped: AtomicU64,
    ended: Mutex<Ended>,
}

/// A slot's life: [`FREE`] until first handed out, then [`LIVE`] while
/// its thread is measured, [`DONE`] once the thread ended (its state is
/// the report's), [`REUSING`] while another thread takes it over.
#[derive(Debug)]
struct Slot {
    thread: AtomicPtr<Thread>,
    tid: AtomicI32,
    life: AtomicU8,
}

const FREE: u8 = 0;
const LIVE: u8 = 1;
const DONE: u8 = 2;
const REUSING: u8 = 3;

/// How many rounds a registration looks for a slot whose ended thread is
/// gone from the kernel, yielding between rounds, before it gives up.
const REUSE_ROUNDS: usize = 64;

/// What a search for a reusable slot found.
enum Reuse {
    /// A slot, now the caller's.
    Taken(*const Thread),
    /// None yet: some threads that ended are still exiting.
    Exiting,
    /// None: every slot's thread is measured.
    Full,
}

/// The ended locations whose slots were reused, kept for the report as
/// their report text (R12: [`ENDED_LOCATIONS`] and [`ENDED_BYTES`] at most).
#[derive(Debug, Default)]
pub(crate) struct Ended {
    /// Location id and report text (JSON, critical-path arrays of all
    /// [`SELECTED`] regions: the report trims them to the named ones).
    pub(crate) kept: Vec<(u32, Box<str>)>,
    bytes: usize,
    /// Ended locations that did not fit.
    pub(crate) dropped: u64,
    /// The kept locations' refused kernel calls (not in their reports).
    pub(crate) errors: crate::thread::KernelErrors,
    /// R10: the combined final paths of the locations kept here, which the
    /// live monitor shows in a slot of its own once their slots are reused.
    path: Option<heisen_core::Snapshot<SELECTED>>,
}

impl Registry {
    fn new() -> Registry {
        Registry {
            slots: (0..MAX_THREADS)
                .map(|_| Slot {
                    thread: AtomicPtr::new(core::ptr::null_mut()),
                    tid: AtomicI32::new(0),
                    life: AtomicU8::new(FREE),
                })
                .collect(),
            next: AtomicUsize::new(0),
            locations: AtomicU32::new(0),
            cursor: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            ended: Mutex::new(Ended::default()),
        }
    }

    /// A slot for thread `tid` with a fresh location starting at `start`
    /// (`None`: now), or `None` (counted) when [`MAX_THREADS`] measured
    /// threads are alive (R12).
    pub(crate) fn register(
        &self,
        rt: &'static Runtime,
        tid: i32,
        start: Option<u64>,
    ) -> Option<*const Thread> {
        let fresh = self
            .next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < MAX_THREADS).then_some(n + 1)
            });
        if let Ok(slot) = fresh {
            let index = self.locations.fetch_add(1, Ordering::Relaxed);
            let start = start.unwrap_or_else(|| rt.now());
            let thread = Box::leak(Thread::boxed(rt, index, slot as u32, start));
            let s = &self.slots[slot];
            s.tid.store(tid, Ordering::Relaxed);
            s.thread.store(thread, Ordering::Release);
            s.life.store(LIVE, Ordering::Release);
            return Some(thread);
        }
        for _ in 0..REUSE_ROUNDS {
            match self.reuse(rt, tid, start) {
                Reuse::Taken(thread) => return Some(thread),
                // Threads that ended are still exiting: they are gone soon.
                Reuse::Exiting => std::thread::yield_now(),
                Reuse::Full => break,
            }
        }
        // R12: overflow is counted, never a panic.
        self.dropped.fetch_add(1, Ordering::Relaxed);
        None
    }

    /// Takes over the slot of a thread that ended and is gone: its
    /// location goes to the store of ended ones, its state is built anew
    /// in place for thread `tid`.
    fn reuse(&self, rt: &'static Runtime, tid: i32, start: Option<u64>) -> Reuse {
        let from = self.cursor.fetch_add(1, Ordering::Relaxed);
        let mut exiting = false;
        for k in 0..MAX_THREADS {
            let i = (from + k) % MAX_THREADS;
            let s = &self.slots[i];
            // A thread whose location ended may still run its last code
            // (thread-local destructors, another copy of this code holding
            // its slot): its slot is reused only once the kernel no longer
            // knows its tid.
            if s.life.load(Ordering::Acquire) != DONE {
                continue;
            }
            if alive(s.tid.load(Ordering::Relaxed)) {
                exiting = true;
                continue;
            }
            let p = s.thread.load(Ordering::Acquire);
            {
                // The report writer holds this lock while it reads the
                // slots: a done slot is either read there or kept here.
                let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
                if s.life
                    .compare_exchange(DONE, REUSING, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
                // SAFETY: the slot was done (acquire) and its thread is gone:
                // nobody writes the state until it is built anew below.
                #[allow(unsafe_code)] // reason: reading a finished thread's state
                let old = unsafe { (*p).state_of_finished() };
                ended.keep(rt, old);
            }
            let index = self.locations.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the slot is ours (REUSING) and no thread can reach
            // its state: its owner is gone, the report writer skips it.
            #[allow(unsafe_code)] // reason: rebuilding the slot's state in place
            unsafe {
                Thread::rebuild(p, rt, index, i as u32, start.unwrap_or_else(|| rt.now()));
            }
            s.tid.store(tid, Ordering::Relaxed);
            s.life.store(LIVE, Ordering::Release);
            return Reuse::Taken(p);
        }
        if exiting { Reuse::Exiting } else { Reuse::Full }
    }

    /// The live slot of thread `tid`, registered by any copy.
    pub(crate) fn find_live(&self, tid: i32) -> Option<*const Thread> {
        let n = self.len();
        self.slots[..n].iter().find_map(|slot| {
            (slot.life.load(Ordering::Acquire) == LIVE && slot.tid.load(Ordering::Relaxed) == tid)
                .then(|| slot.thread.load(Ordering::Acquire).cast_const())
        })
    }

    /// Marks slot `slot` done: its thread will not write its state again.
    pub(crate) fn mark_done(&self, slot: u32) {
        if let Some(s) = self.slots.get(slot as usize) {
            s.life.store(DONE, Ordering::Release);
        }
    }

    /// How many slots were ever taken.
    pub fn len(&self) -> usize {
        self.next.load(Ordering::Acquire)
    }

    /// Whether no thread registered yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Locations registered so far (threads measured).
    pub fn locations(&self) -> u64 {
        u64::from(self.locations.load(Ordering::Relaxed))
    }

    /// Threads refused because [`MAX_THREADS`] measured threads were alive.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The store of ended locations, locked: while held, no slot is reused.
    pub(crate) fn ended(&self) -> std::sync::MutexGuard<'_, Ended> {
        self.ended.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The slots whose threads are done; those of threads still running
    /// (measured); and how many more are being registered or taken over
    /// (no state to read yet). Call it holding [`Registry::ended`], so that
    /// no listed slot is reused while the caller reads it.
    pub(crate) fn finished(&self, _ended: &Ended) -> (Vec<&Thread>, Vec<&Thread>, usize) {
        let mut done = Vec::new();
        let mut running = Vec::new();
        let mut unread = 0;
        for slot in &self.slots[..self.len()] {
            let life = slot.life.load(Ordering::Acquire);
            let p = slot.thread.load(Ordering::Acquire);
            // SAFETY: slots are leaked, never freed (null until stored).
            #[allow(unsafe_code)]
            // reason: the leaked slot outlives the process's use of it
            match (life, unsafe { p.as_ref() }) {
                (DONE, Some(t)) => done.push(t),
                (LIVE, Some(t)) => running.push(t),
                _ => unread += 1,
            }
        }
        (done, running, unread)
    }
}

impl Ended {
    /// Keeps the report of `state`, a location that ended (R12: counted
    /// when the store is full).
    fn keep(&mut self, rt: &Runtime, state: &crate::thread::ThreadState) {
        if let Some(m) = rt.monitor() {
            let last = state.snapshot();
            let path = self.path.map_or(last, |p| p.combine(&last));
            self.path = Some(path);
            m.publish_ended(state.kernel().last_measured(), &path);
        }
        self.errors.absorb(&state.errors());
        if self.kept.len() >= ENDED_LOCATIONS {
            self.dropped += 1;
            return;
        }
        // The taking thread may have a small stack (R12: it must not crash).
        let handed = crate::stack::Handed(state);
        let text = crate::stack::with_stack(crate::stack::REPORT_STACK, move || {
            let handed = handed;
            report::ended_text(handed.0)
        });
        if self.bytes + text.len() > ENDED_BYTES {
            self.dropped += 1;
            return;
        }
        self.bytes += text.len();
        self.kept.push((state.kernel().id(), text.into_boxed_str()));
    }

    /// Bytes of report text kept.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

/// Whether the kernel still knows thread `tid` of this process (a thread
/// that ended is gone once it finished exiting).
fn alive(tid: i32) -> bool {
    // SAFETY: signal 0 checks the thread's existence and sends nothing.
    #[allow(unsafe_code)] // reason: the libc calls
    let rc = unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, 0) };
    !(rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH))
}

/// The process runtime.
#[derive(Debug)]
pub struct Runtime {
    config: Config,
    clock: Clock,
    names: Names,
    selected: [u32; SELECTED],
    /// Indexed by an [`ActionId`], always below [`MAX_ACTIONS`]: a fixed
    /// array, so that a cost read on every event checks no length.
    actions: Box<[Action; MAX_ACTIONS]>,
    action_count: AtomicUsize,
    action_lock: Mutex<()>,
    builtin: OnceLock<Builtin>,
    calibration: Mutex<Calibration>,
    epoch: AtomicU64,
    /// The light pair of each probed path, ns (R1, online costing:
    /// `probe`); `u64::MAX` until calibrated, or always without online
    /// costing.
    light: [AtomicU64; crate::probe::PATHS],
    registry: Registry,
    /// How registry indices become location ids (an MPI backend sets
    /// rank-based ids, `ids`).
    ids: Mutex<LocationIds>,
    /// Whether a location id repeated another's (noted once).
    ids_repeated: AtomicBool,
    backend: Mutex<String>,
    report_name: Mutex<Option<String>>,
    /// Nothing is measured: `config.disabled`, or the report was written
    /// (or the process is a forked child). One flag, so that a hot path
    /// tests one byte; set, never cleared.
    off: AtomicBool,
    /// Who writes the report ([`Runtime::finish`]).
    report_writer: crate::exit::Writer,
    /// Calls of instrumented functions made while a runtime call was under
    /// way on their thread, so unmeasured ([`Runtime::count_nested`]).
    nested: AtomicU64,
    notes: Mutex<Vec<String>>,
    /// How each pair costed in situ was calibrated (R1): the region
    /// paths, the thread interposer's mutex pair.
    pairs: Mutex<Vec<crate::report::PairCalibration>>,
    shared: AtomicBool,
    /// Whether the report's summary goes to stderr (`HEISEN_SUMMARY`,
    /// turned off by a backend where another process prints it).
    summary: AtomicBool,
    /// The live monitor's table (R10), with `HEISEN_MONITOR=1`.
    monitor: Option<Monitor>,
}

static RUNTIME: AtomicPtr<Runtime> = AtomicPtr::new(core::ptr::null_mut());
static INIT: Mutex<()> = Mutex::new(());

/// Version, source and layout fingerprint two copies must share to share
/// a runtime: the crate version, a hash of this crate's sources and the
/// compiler (`build.rs`) and of heisen-core's (`SOURCE_HASH`): two builds
/// of one version may lay a type out alike in size and differently in
/// fields; and the types' sizes.
const ABI: u64 = {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let parts: [&[u8]; 3] = [
        env!("CARGO_PKG_VERSION").as_bytes(),
        env!("HEISEN_SOURCE_HASH").as_bytes(),
        heisen_core::SOURCE_HASH.as_bytes(),
    ];
    let mut p = 0;
    while p < parts.len() {
        let mut i = 0;
        while i < parts[p].len() {
            h = (h ^ parts[p][i] as u64).wrapping_mul(0x100_0000_01b3);
            i += 1;
        }
        p += 1;
    }
    let sizes = [
        core::mem::size_of::<Runtime>(),
        core::mem::size_of::<Thread>(),
        core::mem::size_of::<Stats>(),
        SELECTED,
        MAX_THREADS,
        MAX_ACTIONS,
    ];
    let mut j = 0;
    while j < sizes.len() {
        h = (h ^ sizes[j] as u64).wrapping_mul(0x100_0000_01b3);
        j += 1;
    }
    h
};

/// The process runtime, created on first use.
#[inline]
pub fn runtime() -> &'static Runtime {
    let p = RUNTIME.load(Ordering::Acquire);
    if p.is_null() {
        return init();
    }
    // SAFETY: a non-null RUNTIME points to a leaked Runtime.
    #[allow(unsafe_code)] // reason: the leaked singleton
    unsafe {
        &*p
    }
}

/// The runtime if it exists already (for exit handlers, and the C API's
/// hot paths, which leave a first call's start-up to their slow path).
#[inline]
pub fn existing() -> Option<&'static Runtime> {
    let p = RUNTIME.load(Ordering::Acquire);
    // SAFETY: as in `runtime`.
    #[allow(unsafe_code)] // reason: the leaked singleton
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Exported so that other copies of the runtime's code in this process
/// find this one (see the module docs). Returns null when the caller's
/// build differs.
#[allow(unsafe_code)] // reason: exported unmangled so other copies find it (module docs)
#[unsafe(no_mangle)]
pub extern "C" fn heisen_process_runtime_v1(abi: u64) -> *const c_void {
    if abi != ABI {
        return core::ptr::null();
    }
    std::panic::catch_unwind(runtime).map_or(core::ptr::null(), |rt| (rt as *const Runtime).cast())
}

#[cold]
fn init() -> &'static Runtime {
    match init_with(Config::from_env()) {
        Ok(rt) | Err(AlreadyRunning(rt)) => rt,
    }
}

/// The runtime existed already (made by an earlier call, or by another
/// heisen library in the process): the configuration was not applied.
#[derive(Clone, Copy, Debug)]
pub struct AlreadyRunning(pub &'static Runtime);

impl core::fmt::Display for AlreadyRunning {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the heisen runtime is already running; configure it before its first use")
    }
}

impl core::error::Error for AlreadyRunning {}

/// Creates the process runtime with `config` (the C API's `heisen_init`,
/// [`crate::select`]); an error if it exists already.
pub fn init_with(config: Config) -> Result<&'static Runtime, AlreadyRunning> {
    init_calibrated(config, None)
}

/// As [`init_with`], with the costs `given` (another process's
/// calibration on this machine, [`Runtime::calibrated`]) installed instead
/// of calibrating; `None` calibrates. A runtime that exists already keeps
/// its own costs.
pub fn init_calibrated(
    config: Config,
    given: Option<&Calibrated>,
) -> Result<&'static Runtime, AlreadyRunning> {
    let _lock = INIT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(rt) = existing() {
        return Err(AlreadyRunning(rt));
    }
    let result = match shared_runtime() {
        Some(rt) => {
            rt.shared.store(true, Ordering::Relaxed);
            Err(AlreadyRunning(rt))
        }
        None => {
            let rt: &'static Runtime = Box::leak(Box::new(Runtime::new(config)));
            rt.setup(given);
            Ok(rt)
        }
    };
    let (Ok(rt) | Err(AlreadyRunning(rt))) = result;
    RUNTIME.store((rt as *const Runtime).cast_mut(), Ordering::Release);
    result
}

/// The runtime of the copy of this code loaded first in the process, if
/// that is another copy of the same build.
fn shared_runtime() -> Option<&'static Runtime> {
    type Lookup = extern "C" fn(u64) -> *const c_void;
    let name = c"heisen_process_runtime_v1";
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
    #[allow(unsafe_code)] // reason: the dynamic linker lookup
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if found.is_null() || in_this_object(found) {
        return None;
    }
    // SAFETY: the symbol is this function's exported signature in another
    // copy of this crate (same name, versioned by the `_v1` suffix).
    #[allow(unsafe_code)] // reason: the dynamic linker lookup
    let lookup: Lookup = unsafe { core::mem::transmute::<*mut c_void, Lookup>(found) };
    let p = lookup(ABI).cast::<Runtime>();
    // SAFETY: a non-null answer is that copy's leaked Runtime, of the same
    // layout (the ABI fingerprint matched).
    #[allow(unsafe_code)] // reason: as above
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Whether `address` lies in the object (executable or shared library)
/// that holds this copy of the code. Comparing it with the address of our
/// own `heisen_process_runtime_v1` does not tell: inside a shared library,
/// the address of an exported function is read through the GOT, which the
/// dynamic linker bound to the first definition in the process — an
/// `LD_PRELOAD`ed interposer's copy — so both would look like "ours". The
/// address of `RUNTIME`, a static nobody else sees, is ours for sure.
fn in_this_object(address: *const c_void) -> bool {
    let object = |p: *const c_void| {
        let mut info = libc::Dl_info {
            dli_fname: core::ptr::null(),
            dli_fbase: core::ptr::null_mut(),
            dli_sname: core::ptr::null(),
            dli_saddr: core::ptr::null_mut(),
        };
        // SAFETY: dladdr only reads the address and writes `info`.
        #[allow(unsafe_code)] // reason: the dynamic linker lookup
        let found = unsafe { libc::dladdr(p, &raw mut info) };
        (found != 0).then_some(info.dli_fbase)
    };
    let ours = object((&raw const RUNTIME).cast());
    ours.is_some() && object(address) == ours
}

impl Runtime {
    fn new(config: Config) -> Runtime {
        let clock = Clock::new(config.clock);
        let names = Names::default();
        let mut selected = [NO_REGION; SELECTED];
        match &config.regions {
            // HEISEN_REGIONS: the listed names take ids 0.. and the slots.
            Some(list) => {
                for (slot, name) in selected.iter_mut().zip(list) {
                    if let Ok(id) = names.intern(name) {
                        *slot = id;
                    }
                }
            }
            // Otherwise the first SELECTED regions the process enters.
            None => {
                for (k, slot) in selected.iter_mut().enumerate() {
                    *slot = k as u32;
                }
            }
        }
        let mut problems = config.problems.clone();
        let monitor = (config.monitor && !config.disabled)
            .then(|| Monitor::create(std::process::id(), clock.now()))
            .and_then(|m| m.map_err(|e| problems.push(e)).ok());
        if let Some(m) = &monitor {
            for (id, name) in names.all().iter().enumerate() {
                m.name_selected(&selected, id as u32, name);
            }
            if config.summary {
                eprintln!(
                    "heisen: live monitor at {} (heisen monitor {})",
                    m.path().display(),
                    std::process::id()
                );
            }
        }
        Runtime {
            clock,
            names,
            selected,
            actions: Box::new(core::array::from_fn(|_| Action {
                name: OnceLock::new(),
                whole: AtomicU64::new(0),
                inside: AtomicU64::new(0),
                own: AtomicU64::new(0),
            })),
            action_count: AtomicUsize::new(0),
            action_lock: Mutex::new(()),
            builtin: OnceLock::new(),
            calibration: Mutex::new(Calibration::ZERO),
            epoch: AtomicU64::new(0),
            light: [const { AtomicU64::new(u64::MAX) }; crate::probe::PATHS],
            registry: Registry::new(),
            ids: Mutex::new(LocationIds::THREADS),
            ids_repeated: AtomicBool::new(false),
            backend: Mutex::new("shmem".to_owned()),
            report_name: Mutex::new(None),
            off: AtomicBool::new(config.disabled),
            report_writer: crate::exit::Writer::new(),
            nested: AtomicU64::new(0),
            notes: Mutex::new(problems),
            pairs: Mutex::new(Vec::new()),
            shared: AtomicBool::new(false),
            summary: AtomicBool::new(config.summary),
            monitor,
            config,
        }
    }

    /// Registers the built-in actions, calibrates (R1) — or installs
    /// `given`, another process's calibration on this machine — and
    /// arranges for the report at exit.
    fn setup(&'static self, given: Option<&Calibrated>) {
        let builtin = Builtin {
            release: self.action("release"),
            merge: self.action("merge"),
            thread_start: self.action("thread_start"),
            thread_end: self.action("thread_end"),
        };
        let _ = self.builtin.set(builtin);
        if self.config.disabled {
            return;
        }
        // A first use from a thread with a small stack calibrates on a
        // thread of its own (the calling one then runs unmeasured).
        match given {
            Some(costs) => self.install(costs),
            None => crate::thread::with_stack_room(|| calibrate::runtime(self)),
        }
        // SAFETY: registering plain extern "C" functions with atexit and
        // pthread_atfork.
        #[allow(unsafe_code)] // reason: the libc calls
        unsafe {
            libc::atexit(at_exit);
            libc::pthread_atfork(None, None, Some(in_forked_child));
        }
    }

    /// In the child of a `fork`: nothing more is measured and no report is
    /// written. The child has one thread, copies of every other thread's
    /// state as the fork caught it (mid-update, perhaps) and of every lock
    /// of heisen's that another thread held; its report would repeat the
    /// parent's history (R12: the parent's report is the one report of
    /// this process). A child that `exec`s starts a fresh runtime of its
    /// own when heisen is preloaded or linked there.
    pub fn stop_in_forked_child(&self) {
        self.off.store(true, Ordering::Release);
    }

    /// The configuration read at start-up.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether the report was written ([`Runtime::finish`]): nothing is
    /// measured after that.
    pub fn is_finished(&self) -> bool {
        // A disabled runtime starts off and never writes a report.
        !self.config.disabled && self.off.load(Ordering::Acquire)
    }

    /// Counts a call of an instrumented function that went unmeasured
    /// because a runtime call was under way on its thread: a signal
    /// handler that interrupted that call (a hook takes a large share of
    /// an instrumented program's time), or code the call itself ran. Its
    /// exit goes unmeasured too, so the region stack stays balanced; the
    /// report counts the calls (`runtime.calls_nested`, R12: what is not
    /// measured is counted).
    #[cold]
    pub fn count_nested(&self) {
        self.nested.fetch_add(1, Ordering::Relaxed);
    }

    /// The calls [`Runtime::count_nested`] counted.
    pub fn nested(&self) -> u64 {
        self.nested.load(Ordering::Relaxed)
    }

    /// Whether nothing is measured: disabled, or the report was written.
    #[inline]
    pub fn is_off(&self) -> bool {
        self.off.load(Ordering::Acquire)
    }

    /// The process clock, in ns (see [`crate::clock`]).
    #[inline]
    pub fn now(&self) -> u64 {
        self.clock.now()
    }

    /// The clock in use.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The region names.
    #[inline]
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// The id of region `name`, interned on first use. A selected
    /// region's name also goes to the live monitor's header (R10).
    pub fn region_id(&self, name: &str) -> Result<u32, NameError> {
        let id = self.names.intern(name)?;
        if let Some(m) = &self.monitor {
            m.name_selected(&self.selected, id, name);
        }
        Ok(id)
    }

    /// The live monitor's table, with `HEISEN_MONITOR=1` (R10).
    pub fn monitor(&self) -> Option<&Monitor> {
        self.monitor.as_ref()
    }

    /// The selected region ids in share order (R7); unused slots hold
    /// [`NO_REGION`].
    pub fn selected(&self) -> [u32; SELECTED] {
        self.selected
    }

    /// The thread table.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The location id of registry index `index`.
    /// A location id that repeats another's (beyond the id space,
    /// `ids`) is noted in the report, once.
    pub fn location_id(&self, index: u32) -> u32 {
        let ids = *self.ids.lock().unwrap_or_else(|p| p.into_inner());
        let (id, unique) = ids.id(index);
        // calibration's scratch states (the top indices) report nothing
        let scratch = index >= crate::thread::SCRATCH_PEER;
        if !unique && !scratch && !self.ids_repeated.swap(true, Ordering::Relaxed) {
            self.note(format!(
                "location ids repeat from the thread registered {index}-th on: \
                 beyond the id space of this rank ({ids:?}); reports of such threads share ids"
            ));
        }
        id
    }

    /// Sets how location ids are made for threads registered from now on
    /// (an MPI rank's threads: [`LocationIds::rank`]).
    pub fn set_location_ids(&self, ids: LocationIds) {
        *self.ids.lock().unwrap_or_else(|p| p.into_inner()) = ids;
    }

    /// Names the backend in the report header (`shmem`, `pthread`, `mpi`).
    pub fn set_backend(&self, name: &str) {
        *self.backend.lock().unwrap_or_else(|p| p.into_inner()) = name.to_owned();
    }

    /// The backend named in the report header.
    pub fn backend(&self) -> String {
        self.backend
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sets the report's file name inside `HEISEN_OUTPUT` (default
    /// `heisen.<pid>.json`).
    pub fn set_report_name(&self, name: &str) {
        *self.report_name.lock().unwrap_or_else(|p| p.into_inner()) = Some(name.to_owned());
    }

    /// Where the report goes.
    pub fn report_path(&self) -> PathBuf {
        let name = self
            .report_name
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_else(|| format!("heisen.{}.json", std::process::id()));
        self.config.output.join(name)
    }

    /// Whether the report's summary goes to stderr at the end.
    pub fn summary(&self) -> bool {
        self.summary.load(Ordering::Relaxed)
    }

    /// Turns the summary on stderr on or off (the MPI backend prints one
    /// summary for the run, from rank 0, instead of one per process).
    pub fn set_summary(&self, on: bool) {
        self.summary.store(on, Ordering::Relaxed);
    }

    /// Adds a line to what is reported on stderr at exit (problems only).
    pub fn note(&self, line: impl Into<String>) {
        self.notes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(line.into());
    }

    pub(crate) fn notes(&self) -> Vec<String> {
        self.notes.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether this runtime came from another copy of the code (see the
    /// module docs).
    pub fn is_shared(&self) -> bool {
        self.shared.load(Ordering::Relaxed)
    }

    // ----- actions and calibration (R1) --------------------------------

    /// The id of action `name`, registered on first use with cost 0.
    /// When [`MAX_ACTIONS`] are registered, further names share the last
    /// slot (and are noted at exit).
    pub fn action(&self, name: &str) -> ActionId {
        let n = self.action_count.load(Ordering::Acquire);
        if let Some(i) = self.find_action(name, n) {
            return ActionId(i as u8);
        }
        let _lock = self.action_lock.lock().unwrap_or_else(|p| p.into_inner());
        let n = self.action_count.load(Ordering::Acquire);
        if let Some(i) = self.find_action(name, n) {
            return ActionId(i as u8);
        }
        if n == MAX_ACTIONS {
            self.note(format!(
                "more than {MAX_ACTIONS} instrumentation actions; `{name}` shares the last one's cost"
            ));
            return ActionId((MAX_ACTIONS - 1) as u8);
        }
        let _ = self.actions[n].name.set(name.to_owned());
        self.action_count.store(n + 1, Ordering::Release);
        ActionId(n as u8)
    }

    fn find_action(&self, name: &str, n: usize) -> Option<usize> {
        self.actions[..n]
            .iter()
            .position(|a| a.name.get().is_some_and(|a| a == name))
    }

    /// The actions every runtime has.
    pub fn builtin(&self) -> Builtin {
        *self.builtin.get_or_init(|| Builtin {
            release: self.action("release"),
            merge: self.action("merge"),
            thread_start: self.action("thread_start"),
            thread_end: self.action("thread_end"),
        })
    }

    /// The calibrated cost of `action`.
    #[inline]
    pub fn cost(&self, action: ActionId) -> Cost {
        self.action_cell(action).cost()
    }

    /// The table's cell of `action`: it lives as long as the runtime, so a
    /// hot path can keep it and read the cost without the lookup.
    #[inline]
    pub fn action_cell(&self, action: ActionId) -> &Action {
        const { assert!(MAX_ACTIONS.is_power_of_two()) };
        // Ids are below MAX_ACTIONS (`action`): the mask changes nothing
        // and spares the bounds check.
        &self.actions[usize::from(action.0) % MAX_ACTIONS]
    }

    /// Sets the calibrated cost of `action` (R1); threads charge it from
    /// their next release or merge on.
    pub fn set_cost(&self, action: ActionId, cost: Cost) {
        let a = &self.actions[usize::from(action.0)];
        a.whole.store(cost.whole, Ordering::Relaxed);
        a.inside.store(cost.inside, Ordering::Relaxed);
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// Every registered action with its cost.
    pub fn actions(&self) -> Vec<(String, Cost)> {
        let n = self.action_count.load(Ordering::Acquire);
        (0..n)
            .map(|i| {
                let name = self.actions[i].name.get().cloned().unwrap_or_default();
                (name, self.cost(ActionId(i as u8)))
            })
            .collect()
    }

    /// The time the plain operation a merge action wraps (std's or libc's
    /// lock acquire, a deque's pop) takes between the action's begin and
    /// end reads when it does not wait, ns (R5: that is the program's own
    /// work, not a wait; see `ThreadState::end`).
    #[inline]
    pub fn own_time(&self, action: ActionId) -> u64 {
        self.actions[usize::from(action.0)]
            .own
            .load(Ordering::Relaxed)
    }

    /// Sets [`Runtime::own_time`] of `action` (calibration).
    pub fn set_own_time(&self, action: ActionId, ns: u64) {
        self.actions[usize::from(action.0)]
            .own
            .store(ns, Ordering::Relaxed);
    }

    /// The kernel's calibration: enter and exit, and the generic release
    /// and merge costs (R1).
    pub fn calibration(&self) -> Calibration {
        self.calibration_with_epoch().0
    }

    pub(crate) fn calibration_with_epoch(&self) -> (Calibration, u64) {
        let epoch = self.epoch.load(Ordering::Acquire);
        let mut c = *self.calibration.lock().unwrap_or_else(|p| p.into_inner());
        let b = self.builtin();
        c.send = self.cost(b.release).whole;
        c.merge = self.cost(b.merge).whole;
        (c, epoch)
    }

    #[inline]
    pub(crate) fn calibration_epoch(&self) -> u64 {
        self.epoch.load(Ordering::Relaxed)
    }

    /// Keeps how a pair (a region path, a lock pair) was calibrated, for
    /// the report (R1).
    pub fn note_pair(&self, pair: crate::report::PairCalibration) {
        if let Some(path) = crate::probe::Path::named(&pair.path)
            && self.config.online
        {
            self.light[path as usize].store(pair.light, Ordering::Relaxed);
        }
        let mut pairs = self.pairs.lock().unwrap_or_else(|p| p.into_inner());
        pairs.retain(|p| p.path != pair.path);
        pairs.push(pair);
    }

    /// How every pair costed in situ was calibrated (R1).
    pub fn pairs(&self) -> Vec<crate::report::PairCalibration> {
        self.pairs.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Every calibrated cost of this runtime (R1), to hand to another
    /// process of the same machine ([`init_calibrated`]).
    pub fn calibrated(&self) -> Calibrated {
        let c = *self.calibration.lock().unwrap_or_else(|p| p.into_inner());
        let n = self.action_count.load(Ordering::Acquire);
        Calibrated {
            enter: (c.enter.whole, c.enter.inside),
            exit: (c.exit.whole, c.exit.inside),
            actions: (0..n)
                .map(|i| {
                    let a = &self.actions[i];
                    CalibratedAction {
                        name: a.name.get().cloned().unwrap_or_default(),
                        whole: a.whole.load(Ordering::Relaxed),
                        inside: a.inside.load(Ordering::Relaxed),
                        own: a.own.load(Ordering::Relaxed),
                    }
                })
                .collect(),
            pairs: self.pairs(),
        }
    }

    /// Installs costs calibrated elsewhere ([`Runtime::calibrated`]):
    /// actions by name, registered where new.
    pub fn install(&self, costs: &Calibrated) {
        for a in &costs.actions {
            let id = self.action(&a.name);
            self.set_cost(
                id,
                Cost {
                    whole: a.whole,
                    inside: a.inside,
                },
            );
            self.set_own_time(id, a.own);
        }
        let cost = |(whole, inside): (u64, u64)| Cost { whole, inside };
        self.set_region_costs(cost(costs.enter), cost(costs.exit));
        for pair in &costs.pairs {
            self.note_pair(pair.clone());
        }
    }

    /// The light pair of `path`, ns, once calibrated; `None` before, or
    /// without online costing (`HEISEN_CALIBRATION`; `probe`).
    #[inline(always)]
    pub fn light_pair(&self, path: crate::probe::Path) -> Option<u64> {
        let ns = self.light[path as usize].load(Ordering::Relaxed);
        (ns != u64::MAX).then_some(ns)
    }

    /// Sets the enter and exit costs (R1).
    pub fn set_region_costs(&self, enter: Cost, exit: Cost) {
        {
            let mut c = self.calibration.lock().unwrap_or_else(|p| p.into_inner());
            c.enter = enter;
            c.exit = exit;
        }
        self.epoch.fetch_add(1, Ordering::Release);
    }

    // ----- the end ----------------------------------------------------------

    /// Ends the calling thread's location and writes the report, once;
    /// later calls do nothing and return `None`. Errors are returned and
    /// noted for stderr. After this, nothing is measured.
    ///
    /// A call from another thread while the report is being written waits
    /// until it is ([`Runtime::wait_for_report`]): an `exit` must not end
    /// the process in the middle of it.
    pub fn finish(&self) -> Option<Result<PathBuf, String>> {
        if self.config.disabled {
            return None;
        }
        let Some(_writing) = self.report_writer.claim() else {
            self.wait_for_report();
            return None;
        };
        if self.off.swap(true, Ordering::AcqRel) {
            // A forked child: nothing to write.
            return None;
        }
        crate::thread::finish_current();
        // The thread ending the process may have a small stack.
        let result = crate::stack::with_stack(crate::stack::REPORT_STACK, || report::write(self));
        if let Err(e) = &result {
            self.note(e.clone());
        }
        if let Some(m) = &self.monitor {
            m.remove();
        }
        report::stderr_at_exit(self);
        Some(result)
    }

    /// Waits until the report is written by another thread of this
    /// process ([`Runtime::finish`]; `exit`, for a thread that calls `exit`
    /// while another is already in it), bounded (`exit::Writer::wait`).
    pub fn wait_for_report(&self) {
        self.report_writer.wait(|| self.off.load(Ordering::Acquire));
    }

    /// Notes that the calling thread is in `exit` (`exit`): true when it
    /// is the first thread of the process there (or was already).
    pub fn enter_exit(&self) -> bool {
        self.report_writer.entered()
    }
}

/// Every calibrated cost of a runtime (R1), as one process hands them to
/// the others of its machine: the same code on the same machine costs the
/// same (the MPI interposer's node calibration).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Calibrated {
    /// The region enter's cost, (whole, inside), ns.
    pub enter: (u64, u64),
    /// The region exit's cost, (whole, inside), ns.
    pub exit: (u64, u64),
    /// Every registered action's costs.
    pub actions: Vec<CalibratedAction>,
    /// How each pair costed in situ was calibrated.
    pub pairs: Vec<crate::report::PairCalibration>,
}

/// One action's calibrated costs ([`Calibrated`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CalibratedAction {
    /// The action's name.
    pub name: String,
    /// Its whole cost, ns.
    pub whole: u64,
    /// The part inside the region, ns.
    pub inside: u64,
    /// The plain operation's own time, ns ([`Runtime::own_time`]).
    pub own: u64,
}

/// `pthread_atfork`'s child handler: see [`Runtime::stop_in_forked_child`].
/// Runs in the child, which has one thread: only an atomic store.
extern "C" fn in_forked_child() {
    if let Some(rt) = existing() {
        rt.stop_in_forked_child();
    }
}

extern "C" fn at_exit() {
    // A panic must not unwind into libc.
    let _ = std::panic::catch_unwind(|| {
        if let Some(rt) = existing() {
            // A thread that calls an interposed `exit` from now on waits
            // for the report (`exit`).
            rt.enter_exit();
            rt.finish();
        }
    });
}
