//! Per-thread kernel state: one [`Location`](heisen_core::Location) per
//! thread, registered on first use, with its bounded statistics (R12),
//! reached through a thread-local pointer on every event.
//!
//! A thread's state is created once and never freed before the process
//! ends, so the report written at exit can read the states of threads that
//! finished long before. Only its own thread writes it; the report writer
//! reads a state only after its thread marked it done (release/acquire),
//! or the writer's own.

use core::cell::{Cell, UnsafeCell};
use core::ptr;

use heisen_core::stats::Communicated;
use heisen_core::wildcard::{Match, ReorderDetector};
use heisen_core::{Cost, Dependency, Exchange, Exited, KernelError, Merged, Snapshot};

use crate::current;
use crate::monitor::{self, Slot};
use crate::probe::{Path, Probe};
use crate::runtime::{ActionId, Runtime, runtime};
use crate::stack;
pub use crate::stack::with_stack_room;
use crate::{Kernel, Record, SELECTED, Stats};

/// Wildcard call sites whose reorderings each thread tracks (R11).
pub const SITES: usize = 64;

/// Kernel calls refused, per kind (kept for the report; never a panic).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelErrors {
    /// Exits of a region that was not the innermost open one.
    pub exit_mismatch: u64,
    /// Exits with no region open.
    pub exit_without_enter: u64,
    /// Anything else (cannot happen with the clamped clock; counted anyway).
    pub other: u64,
    /// Frames closed by an exit of a region open beneath them: their own
    /// exits never ran (a `longjmp` left them). Not refused, counted.
    pub unwound: u64,
    /// Runtime calls on this thread that never returned: a signal handler
    /// that interrupted one left it by a jump (`siglongjmp`), and the
    /// thread's later events went unmeasured until its location ended
    /// ([`finish_current`]). Counted.
    pub abandoned: u64,
}

impl KernelErrors {
    /// Adds another location's counts (for the run's totals).
    pub(crate) fn absorb(&mut self, other: &KernelErrors) {
        self.exit_mismatch += other.exit_mismatch;
        self.exit_without_enter += other.exit_without_enter;
        self.other += other.other;
        self.unwound += other.unwound;
        self.abandoned += other.abandoned;
    }

    pub(crate) fn count(&mut self, e: KernelError) {
        match e {
            KernelError::ExitMismatch { .. } => self.exit_mismatch += 1,
            KernelError::ExitWithoutEnter { .. } => self.exit_without_enter += 1,
            _ => self.other += 1,
        }
    }

    /// Total refused calls.
    pub fn total(&self) -> u64 {
        self.exit_mismatch + self.exit_without_enter + self.other
    }
}

/// The kernel state of one thread and what its report needs.
#[derive(Debug)]
pub struct ThreadState {
    pub(crate) rt: &'static Runtime,
    /// The location's kernel (R1–R9).
    pub(crate) kernel: Kernel,
    /// Its bounded statistics (R12).
    pub(crate) stats: Stats,
    /// Its wildcard-reorder detector (R11).
    pub(crate) reorders: ReorderDetector<SITES>,
    /// The location's number: registrations before it in this process
    /// (its location id in a thread-only run).
    pub(crate) index: u32,
    /// The registry slot the state lives in (reused once the thread is
    /// gone), also its slot in the live monitor's table.
    pub(crate) slot: u32,
    /// Measured time the thread began.
    pub(crate) start: u64,
    /// Approximated time the thread began (inherits a spawner's delay, R8).
    pub(crate) approximated_start: i64,
    /// Measured time the thread ended, once it did.
    pub(crate) end: Option<u64>,
    /// The record its end released, for a join (R8).
    pub(crate) end_record: Option<Record>,
    /// Refused kernel calls.
    pub(crate) errors: KernelErrors,
    /// The runtime's calibration epoch this kernel was last given.
    epoch: u64,
    /// This thread's slot in the live monitor's table (R10).
    monitor: Option<Slot>,
    /// Measured time from which a region enter or exit publishes again;
    /// `u64::MAX` without a monitor. The hot paths compare their clock
    /// read with it alone.
    pub(crate) publish_at: u64,
    /// The online costing of the region pair called hottest (R1, measured
    /// directly; `probe`).
    pub(crate) probe: Probe,
    /// Whether online costing is on (`Config::online`), kept here so that
    /// the hot path reads one byte of the state.
    pub(crate) online: bool,
}

/// The empty statistics every thread starts from, copied into its state
/// where the state lives (48 KiB: never built on a thread's stack).
static EMPTY_STATS: Stats = Stats::new();

/// The empty reorder detector every thread starts from (as
/// [`EMPTY_STATS`]).
static EMPTY_REORDERS: ReorderDetector<SITES> = ReorderDetector::new();

impl ThreadState {
    /// Builds a state in place at `s`, whatever `s` held (it is
    /// overwritten, not dropped): the statistics tables are copied from a
    /// static, so that registering a thread needs a few KiB of its stack,
    /// not the state's 146 KiB (a C thread may have 16 KiB).
    ///
    /// # Safety
    /// `s` must be valid for writes of a `ThreadState`, aligned, and not
    /// reachable by any other thread meanwhile.
    #[allow(unsafe_code)] // reason: field-by-field initialisation in place
    unsafe fn init_in_place(
        s: *mut ThreadState,
        rt: &'static Runtime,
        index: u32,
        slot: u32,
        start: u64,
    ) {
        let (calibration, epoch) = rt.calibration_with_epoch();
        let config = heisen_core::Config::new(rt.location_id(index), rt.selected())
            .form(rt.config().form)
            .calibration(calibration);
        let monitor = rt.monitor().and_then(|m| m.slot(slot));
        let publish_at = if monitor.is_some() { 0 } else { u64::MAX };
        // SAFETY: the caller's guarantees; every field is written once,
        // through raw pointers (no reference to the uninitialised state),
        // the two big tables by copying statics (plain bytes, no drop glue
        // owned: empty heapless tables).
        unsafe {
            ptr::addr_of_mut!((*s).rt).write(rt);
            ptr::addr_of_mut!((*s).kernel).write(Kernel::new(config, start));
            ptr::copy_nonoverlapping(&raw const EMPTY_STATS, ptr::addr_of_mut!((*s).stats), 1);
            ptr::copy_nonoverlapping(
                &raw const EMPTY_REORDERS,
                ptr::addr_of_mut!((*s).reorders),
                1,
            );
            ptr::addr_of_mut!((*s).index).write(index);
            ptr::addr_of_mut!((*s).slot).write(slot);
            ptr::addr_of_mut!((*s).start).write(start);
            ptr::addr_of_mut!((*s).approximated_start).write(start as i64);
            ptr::addr_of_mut!((*s).end).write(None);
            ptr::addr_of_mut!((*s).end_record).write(None);
            ptr::addr_of_mut!((*s).errors).write(KernelErrors::default());
            ptr::addr_of_mut!((*s).epoch).write(epoch);
            ptr::addr_of_mut!((*s).monitor).write(monitor);
            ptr::addr_of_mut!((*s).publish_at).write(publish_at);
            ptr::addr_of_mut!((*s).probe).write(Probe::new());
            ptr::addr_of_mut!((*s).online).write(rt.config().online);
        }
    }

    /// The runtime this thread belongs to.
    pub fn runtime(&self) -> &'static Runtime {
        self.rt
    }

    /// The thread's registry index (its location id in a thread-only run).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// A clock read, never earlier than the thread's last event (a thread
    /// that migrates between cores may see the TSC step back a few cycles).
    #[inline]
    pub fn now(&self) -> u64 {
        self.rt.now().max(self.kernel.last_measured())
    }

    /// Enters region `region` from call site `site` (R1, R2, R7).
    #[inline]
    pub fn enter(&mut self, region: u32, site: u32) {
        let t = self.now();
        if let Err(e) = self.kernel.on_enter(region, site, t) {
            self.errors.count(e);
        }
        if t >= self.publish_at {
            self.publish();
        }
    }

    /// Enters region `region` charging `cost` instead of the calibrated
    /// enter: a path calibrated as its own action (the C API, a compiler
    /// hook; R1).
    #[inline(always)]
    pub fn enter_costing(&mut self, region: u32, site: u32, cost: Cost) {
        let t = self.now();
        self.enter_costing_at(region, site, t, cost);
    }

    /// [`Self::enter_costing`] at clock read `t`.
    #[inline(always)]
    pub(crate) fn enter_costing_at(&mut self, region: u32, site: u32, t: u64, cost: Cost) {
        if let Err(e) = self.kernel.on_enter_costing(region, site, t, cost) {
            self.errors.count(e);
        }
        if t >= self.publish_at {
            self.publish();
        }
    }

    /// Exits region `region` charging `cost` instead of the calibrated exit
    /// (R1); otherwise as [`ThreadState::exit`].
    #[inline(always)]
    pub fn exit_costing(&mut self, region: u32, cost: Cost) -> Result<(), KernelError> {
        let t = self.now();
        let exited = self.kernel.on_exit_costing(region, t, cost);
        self.exited(t, exited)
    }

    /// Records what an exit at `t` gave (R2, R12), counts a refusal.
    #[inline(always)]
    pub(crate) fn exited(
        &mut self,
        t: u64,
        exited: Result<Option<Exited>, KernelError>,
    ) -> Result<(), KernelError> {
        let result = match exited {
            Ok(Some(exited)) => {
                self.stats.record_exit(&exited);
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => {
                self.errors.count(e);
                Err(e)
            }
        };
        if t >= self.publish_at {
            self.publish();
        }
        result
    }

    /// [`ThreadState::exit_costing`] for compiler hooks, whose exits may come
    /// after a `longjmp` skipped the exits of the functions it left: those
    /// frames are closed at this exit, at no cost, and recorded (R2;
    /// `Location::on_exit_unwinding_costing`). Counted in the report.
    #[inline(always)]
    pub fn exit_unwinding_costing(&mut self, region: u32, cost: Cost) -> Result<(), KernelError> {
        if self.exits_lightly(region) {
            return Ok(()); // a light window's call (`probe`)
        }
        let t = self.now();
        let (stats, errors) = (&mut self.stats, &mut self.errors);
        let exited = self
            .kernel
            .on_exit_unwinding_costing(region, t, cost, |skipped| {
                errors.unwound += 1;
                stats.record_exit(&skipped);
            });
        self.exited_probed(region, t, exited, cost.whole)
    }

    /// Exits region `region` and records its times (R2, R12). An exit of a
    /// region that is not the innermost open one is refused and counted.
    #[inline]
    pub fn exit(&mut self, region: u32) -> Result<(), KernelError> {
        let t = self.now();
        let exited = self.kernel.on_exit(region, t);
        self.exited(t, exited)
    }

    /// A release now — unlock, enqueue, notify, spawn, send: the record it
    /// carries (R3), charging `action`'s calibrated cost (R1).
    #[inline]
    pub fn release(&mut self, action: ActionId) -> Record {
        self.refresh();
        let t = self.now();
        let cost = self.rt.cost(action).whole;
        self.release_costing(t, cost)
    }

    /// The release at clock read `t`, charging `cost` after it.
    #[inline]
    fn release_costing(&mut self, t: u64, cost: u64) -> Record {
        let mut record = Record::EMPTY;
        self.release_costing_into(t, cost, &mut record);
        record
    }

    /// [`Self::release_costing`] writing the record into `out`.
    #[inline]
    fn release_costing_into(&mut self, t: u64, cost: u64, out: &mut Record) {
        self.release_with(t, |k| k.on_release_costing_into(t, cost, out))
            .unwrap_or_else(|()| *out = Record::EMPTY);
    }

    /// A release at clock read `t` made by `release` (the kernel's eager
    /// or lazy form), with what every release does around it: the live
    /// monitor's sample, a refused call counted (`Err`: the caller empties
    /// its record), the live monitor's next sample when due.
    #[inline(always)]
    fn release_with(
        &mut self,
        t: u64,
        release: impl FnOnce(&mut Kernel) -> Result<(), KernelError>,
    ) -> Result<(), ()> {
        if self.monitor.is_some() {
            // Before the release, from the record it is about to make: its
            // path values are those after it (the release's cost changes
            // only the delay). Publishing after it would put the record
            // through one more copy on every release, monitor or not.
            self.publish_release(t);
        }
        let result = release(&mut self.kernel).map_err(|e| self.errors.count(e));
        if t >= self.publish_at {
            self.publish();
        }
        result
    }

    /// The record a release now would carry, without releasing (R6 entry
    /// records).
    pub fn peek(&self) -> Record {
        self.kernel.peek(self.now())
    }

    /// A merge that blocked from `begin` until now on `deps` — acquire,
    /// barrier exit, dequeue, join, receive (R4, R5), charging `action`.
    #[inline]
    pub fn merge(
        &mut self,
        begin: u64,
        deps: &[Dependency<'_, SELECTED>],
        action: ActionId,
    ) -> Merged {
        let end = self.now();
        self.merge_at(begin, end, deps, action)
    }

    /// A merge that blocked from `begin` to `end` (both read by the caller).
    pub fn merge_at(
        &mut self,
        begin: u64,
        end: u64,
        deps: &[Dependency<'_, SELECTED>],
        action: ActionId,
    ) -> Merged {
        let cost = self.rt.cost(action).whole;
        self.merge_costing(begin, end, deps, cost)
    }

    // ----- actions split around their clock reads (R1) ----------------------
    //
    // A wrapper action's `Cost` is split at its clock read: `inside` is the
    // part after it, `outside()` the part before. For a merge action (lock,
    // pop, join, barrier) the part before is the wrapper's work before the
    // begin read, which falls before the wait; the part after the end read
    // is the merge's own cost. Charging the first part before the wait
    // matters when the thread waits: the dependency then decides `a(e)`
    // and only what follows the end read may be added to it.

    /// The begin of a merge action: charges the part of `action`'s cost
    /// that falls before its begin clock read (R1) and returns the read.
    #[inline]
    pub fn begin(&mut self, action: ActionId) -> u64 {
        self.kernel.on_overhead(self.rt.cost(action).outside());
        self.now()
    }

    /// Ends a merge action begun at `begin` (see [`Self::begin`]) that
    /// waited on `deps`: the end clock read now, then the part of
    /// `action`'s cost after it (R1, R5).
    #[inline]
    pub fn end(
        &mut self,
        begin: u64,
        deps: &[Dependency<'_, SELECTED>],
        action: ActionId,
    ) -> Merged {
        let end = self.now();
        let cost = self.rt.cost(action).inside;
        // R5 (001 eq. 5-11): the merge waited from `begin` to `end` less the
        // plain operation's own time (the lock's acquire, the deque's pop),
        // which the uninstrumented program spends as well: counted as a
        // wait, the part of it after the release that the transfer does
        // not explain is absorbed. (A merge whose release was done before
        // it began did not wait at all: `merge_costing`.)
        let begin = begin.saturating_add(self.rt.own_time(action)).min(end);
        self.merge_costing(begin, end, deps, cost)
    }

    /// Ends a merge action begun with [`Self::begin`] whose wait ran out of
    /// time (a timed condition wait that timed out): the end clock read
    /// now, `deps` merged there as by an action that did not wait, then
    /// the part of `action`'s cost after the read (R1). No dependency
    /// ended the wait, its timeout did, which the program waits without
    /// heisen too: the wait is the program's time, not compensated. Ended
    /// by [`Self::end`], R5's `a(e) = b - x` took the whole timeout away
    /// (a 1 ms `pthread_cond_clockwait` timeout gave 1 ms of delay, passed
    /// on to every thread that merged the waiter later).
    #[inline]
    pub fn end_timed_out(&mut self, deps: &[Dependency<'_, SELECTED>], action: ActionId) -> Merged {
        let end = self.now();
        let cost = self.rt.cost(action).inside;
        self.merge_costing(end, end, deps, cost)
    }

    /// A merge action that did not wait (a successful `try_lock`): one
    /// clock read, `action`'s whole cost after it (R1).
    #[inline]
    pub fn merge_now(&mut self, deps: &[Dependency<'_, SELECTED>], action: ActionId) -> Merged {
        let t = self.now();
        let cost = self.rt.cost(action).whole;
        self.merge_costing(t, t, deps, cost)
    }

    /// A merge action that did not wait (a lock taken at once), its cost
    /// split around its one clock read as a waiting one's is around its
    /// two (R1): what falls before the read is charged before it.
    #[inline]
    pub fn merge_now_split(
        &mut self,
        deps: &[Dependency<'_, SELECTED>],
        action: ActionId,
    ) -> Merged {
        let t = self.begin(action);
        let cost = self.rt.cost(action).inside;
        self.merge_costing(t, t, deps, cost)
    }

    /// A merge action that did not wait, of a dependency that decides
    /// nothing: the thread's own earlier release, taken back (an
    /// uncontended lock). R5 with `w = 0` gives `a(e) = b - x`, and R7
    /// leaves the path as it is (the record carries nothing the thread
    /// has not passed), so the merge is R1's charge of `action`'s whole
    /// cost alone, and needs no clock read: the next event's read closes
    /// the interval that holds it (R2). Only in the timestamped form,
    /// where an own record decides nothing (R4's `min` would take an
    /// earlier, smaller delay back).
    #[inline]
    pub fn merge_own(&mut self, action: ActionId) {
        debug_assert_eq!(self.kernel.form(), heisen_core::Form::Timestamped);
        self.kernel.on_overhead(self.rt.cost(action).whole);
    }

    /// A release action (unlock, push, notify, spawn), its cost split
    /// around the clock read (R1): returns the record it carries (R3).
    #[inline]
    pub fn release_split(&mut self, action: ActionId) -> Record {
        let mut record = Record::EMPTY;
        self.release_split_into(action, &mut record);
        record
    }

    /// [`Self::release_split`] writing the record into `out` where it is
    /// kept (a lock's hand-off slot): no copy of the 240-byte record
    /// passes through the call.
    #[inline]
    pub fn release_split_into(&mut self, action: ActionId, out: &mut Record) {
        let (t, inside) = self.release_split_begin(action);
        self.release_costing_into(t, inside, out);
    }

    /// The part of a split release (R1) before its clock read: the new
    /// calibration picked up, the cost outside charged; the read and the
    /// cost still to charge after it.
    #[inline(always)]
    fn release_split_begin(&mut self, action: ActionId) -> (u64, u64) {
        self.refresh();
        let cost = self.rt.cost(action);
        self.kernel.on_overhead(cost.outside());
        (self.now(), cost.inside)
    }

    /// [`Self::release_split_into`] keeping the record lazily
    /// ([`crate::PendingRecord`]: a copy of the kernel's path values; the
    /// per-region arithmetic is left to a reader that needs it).
    #[inline]
    pub fn release_split_pending(&mut self, action: ActionId, out: &mut crate::PendingRecord) {
        let (t, inside) = self.release_split_begin(action);
        self.release_with(t, |k| k.on_release_costing_pending(t, inside, out))
            .unwrap_or_else(|()| *out = crate::PendingRecord::EMPTY);
    }

    /// The arrival at an n-to-n synchronisation (barrier): charges the part
    /// of `action`'s cost before the arrival's clock read and returns the
    /// read with the entry record every participant combines (R6).
    #[inline]
    pub fn arrive(&mut self, action: ActionId) -> (u64, Record) {
        self.kernel.on_overhead(self.rt.cost(action).outside());
        let t = self.now();
        (t, self.kernel.peek(t))
    }

    /// The exit of an n-to-n synchronisation entered at `begin` (see
    /// [`Self::arrive`]): the exit clock read now, the combined entries of
    /// every participant, and the part of `action`'s cost after the read
    /// (R6; 001 eq. 12-13).
    #[inline]
    pub fn leave(&mut self, begin: u64, exchange: &Exchange<SELECTED>, action: ActionId) -> Merged {
        let end = self.now();
        let cost = self.rt.cost(action).inside;
        self.collective_costing(begin, end, exchange, cost)
    }

    fn merge_costing(
        &mut self,
        begin: u64,
        end: u64,
        deps: &[Dependency<'_, SELECTED>],
        cost: u64,
    ) -> Merged {
        self.refresh();
        let floor = self.kernel.last_measured();
        let (begin, end) = (begin.max(floor), end.max(floor));
        let end = end.max(begin);
        // R5 with `w = 0` where nothing made the merge wait: a preemption
        // in it, a message's own transfer are the program's time (a
        // thread preempted for 12.7 ms in an OpenMP ordered section's
        // start whose turn had come 2 ms before got it all as delay,
        // against 0.8 ms of overhead; one MPI run report in four of the
        // test suite gave a rank more delay than all the overhead charged).
        let begin = if begin < end && !heisen_core::merge::may_have_waited(begin, deps) {
            end
        } else {
            begin
        };
        let merged = self
            .kernel
            .on_merge_costing(begin, end, deps, cost)
            .unwrap_or_else(|e| {
                self.errors.count(e);
                unmerged(begin, end)
            });
        self.publish_if_monitored();
        if end >= self.publish_at {
            self.publish();
        }
        merged
    }

    /// Completes an n-to-n synchronisation that blocked from `begin` to
    /// `end`, given the reduction of every participant's entry record (R6).
    pub fn collective(
        &mut self,
        begin: u64,
        end: u64,
        exchange: &Exchange<SELECTED>,
        action: ActionId,
    ) -> Merged {
        let cost = self.rt.cost(action).whole;
        self.collective_costing(begin, end, exchange, cost)
    }

    fn collective_costing(
        &mut self,
        begin: u64,
        end: u64,
        exchange: &Exchange<SELECTED>,
        cost: u64,
    ) -> Merged {
        self.refresh();
        let floor = self.kernel.last_measured();
        let (begin, end) = (begin.max(floor), end.max(floor));
        let end = end.max(begin);
        let merged = self
            .kernel
            .on_collective_costing(begin, end, exchange, cost)
            .unwrap_or_else(|e| {
                self.errors.count(e);
                unmerged(begin, end)
            });
        self.publish_if_monitored();
        if end >= self.publish_at {
            self.publish();
        }
        merged
    }

    /// Adds a directly measured instrumentation cost to the delay (R1).
    pub fn overhead(&mut self, duration: u64) {
        self.kernel.on_overhead(duration);
    }

    /// Begins the thread's location anew now (`Location::restart`): what a
    /// backend's set-up did on it before the program's first event is
    /// forgotten. False, nothing changed, while a region is open.
    pub fn restart_now(&mut self) -> Result<(), heisen_core::RestartError> {
        let t = self.now();
        self.kernel.restart(t)?;
        self.began(t, t as i64);
        Ok(())
    }

    /// Whether the thread recorded anything yet (a region, a message, a
    /// loop): then the program's execution has begun on it.
    pub fn has_records(&self) -> bool {
        self.stats.regions().next().is_some()
            || self.stats.comms().next().is_some()
            || self.stats.loops().next().is_some()
    }

    /// The location begins at measured time `t`, approximated time
    /// `approximated` (a restart; a spawned thread's start merge, R8).
    fn began(&mut self, t: u64, approximated: i64) {
        self.start = t;
        self.approximated_start = approximated;
        self.publish_if_monitored();
    }

    /// Records one communication call (R12).
    pub fn record_comm(&mut self, c: &Communicated) {
        self.stats.record_comm(c);
    }

    /// Observes a wildcard match; true if measurement may have reordered
    /// it (R11).
    pub fn observe_wildcard(&mut self, m: Match) -> bool {
        self.reorders.observe(m)
    }

    /// The thread's `(L, s, n)` now (R10).
    pub fn snapshot(&self) -> Snapshot<SELECTED> {
        self.kernel.snapshot()
    }

    /// The kernel, for reading.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The kernel, for backends that drive it directly (the MPI backend's
    /// relabelling, critical-path start and stop, R9).
    pub fn kernel_mut(&mut self) -> &mut Kernel {
        &mut self.kernel
    }

    /// Refused kernel calls so far.
    pub fn errors(&self) -> KernelErrors {
        self.errors
    }

    /// Picks up a new calibration of the runtime (R1) at the next release
    /// or merge: regions entered before keep the costs they were charged.
    #[inline]
    fn refresh(&mut self) {
        let epoch = self.rt.calibration_epoch();
        if epoch != self.epoch {
            let (calibration, epoch) = self.rt.calibration_with_epoch();
            self.kernel.set_calibration(calibration);
            self.epoch = epoch;
        }
    }

    /// The thread ends now: its final release, for a join (R8).
    fn end_now(&mut self, action: ActionId) -> Record {
        let record = self.release(action);
        self.end = Some(self.kernel.last_measured());
        self.end_record = Some(record);
        self.publish_if_monitored(); // the final sample, marked ended
        record
    }

    /// Publishes the thread's `(L, s, n)` to the live monitor (R10) at a
    /// release or merge, where the path may have jumped.
    #[inline]
    fn publish_if_monitored(&mut self) {
        if self.monitor.is_some() {
            self.publish();
        }
    }

    /// Publishes now; the next enter or exit publishes again once
    /// [`monitor::INTERVAL`] of measured time has passed (`publish_at`,
    /// which stays at `u64::MAX` without a monitor: the hot paths call
    /// this only when their clock read reaches it).
    #[cold]
    #[inline(never)]
    pub(crate) fn publish(&mut self) {
        if let Some(slot) = &self.monitor {
            let time = self.kernel.last_measured();
            let path = self.kernel.snapshot();
            slot.publish(time, self.end.is_some(), &path);
            self.publish_at = time.saturating_add(monitor::INTERVAL);
        }
    }

    /// Publishes the values of the record a release at `t` makes (R3,
    /// R10), computed once by the kernel's `peek`.
    #[inline(never)]
    fn publish_release(&mut self, t: u64) {
        if let Some(slot) = &self.monitor {
            let record = self.kernel.peek(t);
            if record.flags.contains(heisen_core::Flags::PATH) {
                slot.publish_record(t, self.end.is_some(), &record);
            } else {
                // No path data (R9): the snapshot says so.
                let path = self.kernel.snapshot();
                slot.publish(t, self.end.is_some(), &path);
            }
            self.publish_at = t.saturating_add(monitor::INTERVAL);
        }
    }
}

/// The outcome reported for a merge the kernel refused: nothing changed.
fn unmerged(begin: u64, end: u64) -> Merged {
    Merged {
        wait: end - begin,
        compensated_wait: 0,
        approximated_end: 0,
        lower: 0,
        upper: 0,
        determined_by: None,
        arrival: None,
        transfer: 0,
    }
}

/// A thread's slot in the registry: its state and the flags other threads
/// may read.
#[derive(Debug)]
pub struct Thread {
    /// [`BUSY`] while a runtime call is under way on this thread, so that
    /// a nested call (an interposed lock taken inside an MPI call, a
    /// signal) goes uninstrumented instead of aliasing the state; plus
    /// `QUIET` for each open [`quiet`] guard: a backend quiets the thread
    /// while a library it wraps runs (MPI's own pthread locks are not the
    /// user's). One word, so that every event checks both with one compare;
    /// it also counts the calls, for a reader at exit (`flags`).
    blocked: Flags,
    state: UnsafeCell<ThreadState>,
}

// SAFETY: a `Thread` is only ever used by the thread it belongs to (the
// thread-local pointer), except by the report writer, which reads the
// state after the owner's release store of its `done` flag (see
// `Registry::finished`), or copies the state of a thread still running
// between two of its calls and keeps the copy only if no call came
// meanwhile (`Thread::copy_between_calls`).
#[allow(unsafe_code)] // reason: the cross-thread hand-over of a finished state
unsafe impl Sync for Thread {}
// SAFETY: as above; the state holds no thread-bound handles.
#[allow(unsafe_code)] // reason: as above
unsafe impl Send for Thread {}

impl Thread {
    /// A thread's slot on the heap, its state built there in place (see
    /// `ThreadState::init_in_place`) for location number `index` in
    /// registry slot `slot`.
    #[allow(unsafe_code)] // reason: initialisation in place
    pub(crate) fn boxed(rt: &'static Runtime, index: u32, slot: u32, start: u64) -> Box<Thread> {
        let mut b = Box::<Thread>::new_uninit();
        let p = b.as_mut_ptr();
        // SAFETY: `p` is the box's own, aligned, uninitialised memory;
        // both fields are written before `assume_init`.
        unsafe {
            ptr::addr_of_mut!((*p).blocked).write(Flags::new());
            ThreadState::init_in_place(
                UnsafeCell::raw_get(ptr::addr_of!((*p).state)),
                rt,
                index,
                slot,
                start,
            );
            b.assume_init()
        }
    }

    /// Builds the state of the slot at `p` anew for location number
    /// `index` (a reused registry slot).
    ///
    /// # Safety
    /// No thread may use the slot meanwhile: its previous owner is gone
    /// and the registry handed it to the caller.
    #[allow(unsafe_code)] // reason: see the safety section
    pub(crate) unsafe fn rebuild(
        p: *const Thread,
        rt: &'static Runtime,
        index: u32,
        slot: u32,
        start: u64,
    ) {
        // SAFETY: the caller's guarantee; the old state owns nothing on
        // the heap (fixed tables), so overwriting it leaks nothing.
        unsafe {
            (*p).blocked.set(0);
            ThreadState::init_in_place((*p).state.get(), rt, index, slot, start);
        }
    }

    /// A copy of the state of a thread that may still be running, taken
    /// between two of its runtime calls, for the report writer at exit;
    /// `None` when the thread was in a call at every try (`flags`).
    pub(crate) fn copy_between_calls(&self) -> Option<Copied> {
        let mut copy = Box::<ThreadState>::new_uninit();
        // SAFETY: both are a `ThreadState`'s memory; the owner writes its
        // state only while `BUSY` is set (`with_state`, `light`,
        // `register_current`, `finish_current`).
        #[allow(unsafe_code)] // reason: the sequence lock's read
        let ok = unsafe {
            flags::copy_between_calls(&self.blocked, self.state.get(), copy.as_mut_ptr())
        };
        ok.then_some(Copied(copy))
    }

    /// The state of a thread that is done, for the report writer.
    ///
    /// # Safety
    /// The owning thread must have marked the slot done (acquire-ordered
    /// before this call) or be the caller, and must not touch it again.
    #[allow(unsafe_code)] // reason: see the safety section
    pub(crate) unsafe fn state_of_finished(&self) -> &ThreadState {
        // SAFETY: guaranteed by the caller.
        unsafe { &*self.state.get() }
    }
}

mod flags;
mod start;
pub(crate) use flags::Copied;
use flags::{BUSY, ENDED, Flags};

std::thread_local! {
    /// Set once this thread ended (or the process is exiting): no new
    /// registration, no more events.
    static RETIRED: Cell<bool> = const { Cell::new(false) };
    /// Ends the thread's location when the thread exits.
    static EXIT: ExitGuard = const { ExitGuard };
}

/// Its drop runs when the thread exits (for the main thread: when `exit`
/// runs the thread-local destructors, before the `atexit` handlers).
#[derive(Debug)]
struct ExitGuard;

impl Drop for ExitGuard {
    fn drop(&mut self) {
        finish_current();
    }
}

/// Runs `f` on this thread's state, registering the thread on first use.
/// `None` when the thread is not measured: the runtime is disabled or
/// finished, the thread table is full, the thread ended, or a runtime call
/// is already under way on this thread.
#[inline]
pub fn with_current<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    with_current_inline(f)
}

/// [`with_current`], always inlined: for a hot path's one out-of-line
/// function (the C API's `enter_thread`), so that the thread's slot, the
/// kernel and the statistics are one function with one prologue.
#[inline(always)]
pub fn with_current_inline<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    with_state(|s| {
        // Any action ends a light window or a timed segment first, and
        // ends the segment of leaf calls (`probe`; R1, R2: the kernel sees
        // every event in order).
        s.settle();
        s.probe.interrupt();
        f(s)
    })
}

/// [`with_current_inline`] for a region's enter or exit by a probed path
/// (`ThreadState::enter_probed`, `exit_probed`, `exit_unwinding_costing`),
/// which end a light window themselves unless the call is one of its own.
/// Nothing else may use it.
#[inline(always)]
pub(crate) fn with_current_region<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    with_state(f)
}

/// Enters region `region` from `site` by the probed path `path` on this
/// thread, charging `cost` (`ThreadState::enter_probed`); `None` when the
/// thread is not measured. For another crate's hot path (the C API, the
/// compiler hooks): the one way in that keeps a light window going.
#[inline(always)]
pub fn enter_region(region: u32, site: u32, cost: Cost, path: Path) -> Option<()> {
    with_current_region(|s| s.enter_probed(region, site, cost, path))
}

/// Exits region `region` on this thread, charging `cost`
/// (`ThreadState::exit_probed`); `None` when the thread is not measured.
#[inline(always)]
pub fn exit_region(region: u32, cost: Cost) -> Option<Result<(), KernelError>> {
    with_current_region(|s| s.exit_probed(region, cost))
}

/// [`exit_region`] for compiler hooks, closing the frames a `longjmp`
/// left open (`ThreadState::exit_unwinding_costing`).
#[inline(always)]
pub fn exit_region_unwinding(region: u32, cost: Cost) -> Option<Result<(), KernelError>> {
    with_current_region(|s| s.exit_unwinding_costing(region, cost))
}

/// The call of a light window, if an enter of (`region`, `site`) on this
/// thread is one (`probe`): `true` when it is, and then nothing else is to
/// be done. The first thing a probed path's export does, before any other
/// check: a light call should cost the program as little as can be.
#[inline(always)]
pub fn light_enter(region: u32, site: u32) -> bool {
    light(region, |p| p.light_enter(region, site))
}

/// [`light_enter`] for an exit of `region`.
#[inline(always)]
pub fn light_exit(region: u32) -> bool {
    light(region, |p| p.light_exit(region))
}

/// `step` on this thread's probe when a light window of `region` is under
/// way (and no runtime call is, `Thread::blocked`). Another region's call
/// returns at once, as it does with no light window: the action that ends
/// a window costs the same whatever the window (a segment pair is timed
/// to it, `probe`).
#[inline(always)]
fn light(region: u32, step: impl FnOnce(&mut Probe) -> bool) -> bool {
    let p = current::get();
    if p.is_null() {
        return false;
    }
    // SAFETY: as in `with_state`.
    #[allow(unsafe_code)] // reason: the thread-local pointer to a leaked slot
    let thread = unsafe { &*p };
    if thread.blocked.get() != 0 {
        return false;
    }
    // SAFETY: no runtime call is under way on this thread (`blocked`), so
    // no other reference to the state lives; this one ends at once. Most
    // calls end here: no light window, nothing written.
    #[allow(unsafe_code)] // reason: as above
    if !unsafe { &*thread.state.get() }.probe.is_light_for(region) {
        return false;
    }
    // After the runtime finished (the report written), a call is answered
    // as it would be without a light window (`heisen_finalize`).
    if crate::runtime::existing().is_none_or(|rt| rt.is_off()) {
        return false;
    }
    thread.blocked.hold();
    // SAFETY: as in `with_state` (`BUSY` held).
    #[allow(unsafe_code)] // reason: as above
    let probe = unsafe { &mut (*thread.state.get()).probe };
    let light = step(probe);
    thread.blocked.release();
    light
}

/// Whether a runtime call is under way on this thread (not counting
/// [`quiet`] guards): a call made now is nested in it (a signal handler
/// interrupted it, or it ran the caller's code) and goes unmeasured.
pub fn busy() -> bool {
    let p = current::get();
    if p.is_null() {
        return false;
    }
    // SAFETY: as in `with_state`.
    #[allow(unsafe_code)] // reason: the thread-local pointer to a leaked slot
    let thread = unsafe { &*p };
    thread.blocked.get() & BUSY != 0
}

/// This thread's state, without settling (see the two above).
#[inline(always)]
fn with_state<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    // This thread's slot, once registered with this copy of the runtime.
    let mut p = current::get();
    if p.is_null() {
        p = register_current(None)?;
    }
    // SAFETY: `p` is this thread's slot, which lives until the process
    // ends (the registry never frees it).
    #[allow(unsafe_code)] // reason: the thread-local pointer to a leaked slot
    let thread = unsafe { &*p };
    if thread.blocked.get() != 0 {
        return None;
    }
    thread.blocked.hold();
    // SAFETY: only this thread reaches its state, and `BUSY` makes this
    // the only live reference to it.
    #[allow(unsafe_code)] // reason: as above
    let state = unsafe { &mut *thread.state.get() };
    let r = f(state);
    // Not a plain store of 0: `f` may have opened a quiet guard that
    // outlives this call.
    thread.blocked.release();
    Some(r)
}

/// Leaves this thread's calls uninstrumented until the guard drops: a
/// backend wraps a library call whose own synchronisation is not the
/// user's. Nests.
pub fn quiet() -> QuietGuard {
    let p = current::get();
    if !p.is_null() {
        // SAFETY: as in `with_current`; `quiet` is a `Cell` owned by this thread.
        #[allow(unsafe_code)] // reason: as in with_current
        let thread = unsafe { &*p };
        thread.blocked.quiet();
    }
    QuietGuard { thread: p }
}

/// Keeps a thread quiet; see [`quiet`].
#[derive(Debug)]
pub struct QuietGuard {
    thread: *const Thread,
}

impl Drop for QuietGuard {
    fn drop(&mut self) {
        if !self.thread.is_null() {
            // SAFETY: the same slot `quiet` counted up, still alive.
            #[allow(unsafe_code)] // reason: as in with_current
            let thread = unsafe { &*self.thread };
            thread.blocked.unquiet();
        }
    }
}

/// Registers this thread as a location that another released: a spawned
/// thread's start merges its spawner's record (R8). Returns false when the
/// thread is not measured (see [`with_current`]).
pub fn start_current(parent: &Record) -> bool {
    register_current(Some(parent)).is_some()
}

/// Ends this thread's location now: its final release, which a join merges
/// (R8). `None` if the thread was not measured or had ended already.
pub fn finish_current() -> Option<Record> {
    let p = current::get();
    let _ = RETIRED.try_with(|r| r.set(true));
    if p.is_null() {
        return None;
    }
    let rt = runtime();
    // SAFETY: as in `with_current`.
    #[allow(unsafe_code)] // reason: as in with_current
    let thread = unsafe { &*p };
    let blocked = thread.blocked.get();
    if blocked & BUSY != 0 && blocked & ENDED == 0 {
        // A runtime call on this thread is still marked under way, yet the
        // thread is ending: a signal handler interrupted that call and
        // left it by a jump (or ends the thread or the process from inside
        // it), so the call never returns and nothing else holds the state.
        // Without taking it over the thread's location was missing from
        // the report, reported as running at exit.
        // SAFETY: the call that held the state is gone (above); its BUSY
        // still keeps a reader's copy out until `release` counts it.
        #[allow(unsafe_code)] // reason: as above
        unsafe {
            (*thread.state.get()).errors.abandoned += 1;
        }
        thread.blocked.release();
    }
    let record = with_current(|s| s.end_now(rt.builtin().thread_end));
    if record.is_some() {
        // Another copy of this code that found the slot (`find_live`) may
        // still hold it: its events go unmeasured from now on.
        thread.blocked.set(ENDED);
        // SAFETY: our own state, no other reference live.
        #[allow(unsafe_code)] // reason: as above
        let slot = unsafe { (*thread.state.get()).slot };
        rt.registry().mark_done(slot);
    }
    current::set(ptr::null());
    record
}

#[cold]
fn register_current(parent: Option<&Record>) -> Option<*const Thread> {
    if RETIRED.try_with(Cell::get).unwrap_or(true) {
        return None;
    }
    if !current::get().is_null() {
        return None; // registered already: a second start is ignored
    }
    let rt = runtime();
    if rt.is_off() {
        return None;
    }
    // A spawned thread's first clock read, before any of heisen's work:
    // the end of its creation (below).
    let arrived = parent.map(|_| rt.now());
    let tid = stack::current_tid();
    // Another copy of the runtime in this process may have registered
    // this thread already (one location per thread, DESIGN §2).
    let p = match rt.registry().find_live(tid) {
        Some(p) => p,
        None => {
            if !stack::room_to_register(tid) {
                // R12: a thread with a small stack (a C program may give
                // its threads 16 KiB) runs unmeasured rather than crash.
                let _ = RETIRED.try_with(|r| r.set(true));
                if !stack::SMALL_STACK_NOTED.swap(true, core::sync::atomic::Ordering::Relaxed) {
                    rt.note(format!(
                        "threads with less than {} KiB of stack left ran unmeasured",
                        stack::REGISTER_STACK / 1024
                    ));
                }
                return None;
            }
            let Some(p) = rt.registry().register(rt, tid, arrived) else {
                // The table is full (R12): this thread runs unmeasured
                // from now on and is counted once, not once per call (the
                // message at exit counts threads).
                let _ = RETIRED.try_with(|r| r.set(true));
                return None;
            };
            // The thread's end ends its location.
            let _ = EXIT.try_with(|_| ());
            // SAFETY: the slot was created just now for this thread.
            #[allow(unsafe_code)] // reason: as in with_current
            let thread = unsafe { &*p };
            // The slot is live: a report writer may copy it (`flags`).
            thread.blocked.hold();
            // SAFETY: as above; `BUSY` held.
            #[allow(unsafe_code)] // reason: as in with_current
            let state = unsafe { &mut *thread.state.get() };
            // R1: registering (building and zeroing the thread's tables,
            // 100 µs and more on first touch) is instrumentation, measured
            // directly from the state's start. Uncharged, it counted as the
            // thread's own work: a spawned child's local path then beat
            // its spawner's at the start merge (R8) and lost its shares.
            // A spawned thread's state starts when it first ran (`arrived`).
            let registered = state.now();
            state.overhead(registered - state.start);
            if let Some(parent) = parent {
                start::merge_spawner(state, parent, registered);
            }
            thread.blocked.release();
            p
        }
    };
    current::set(p);
    Some(p)
}

/// Runs `f` with this thread's events going to a scratch state that is
/// dropped afterwards: calibration loops take the program's own code path
/// (R1) without leaving a location behind. Backends calibrate their own
/// actions (a C call, a compiler hook, a wrapper) this way.
pub fn calibrating<R>(rt: &'static Runtime, f: impl FnOnce() -> R) -> R {
    calibrating_as(rt, SCRATCH, f)
}

/// The registry index of calibration's scratch states.
pub const SCRATCH: u32 = u32::MAX;

/// The index of a second thread's scratch state in a two-thread
/// calibration (`calibrating_as`): another location, so that the hand-offs
/// between the two are merges of another thread's records.
pub const SCRATCH_PEER: u32 = u32::MAX - 1;

/// As [`calibrating`], with a scratch state of registry index `index`
/// ([`SCRATCH`] or [`SCRATCH_PEER`]).
pub fn calibrating_as<R>(rt: &'static Runtime, index: u32, f: impl FnOnce() -> R) -> R {
    struct Restore(*const Thread);
    impl Drop for Restore {
        fn drop(&mut self) {
            current::set(self.0);
        }
    }
    let scratch = Thread::boxed(rt, index, index, rt.now());
    let previous = current::get();
    current::set(&*scratch);
    let restore = Restore(previous);
    let r = f();
    drop(restore);
    drop(scratch);
    r
}

/// Whether the calling thread already has a location with this copy of
/// the runtime (a directly measured cost may then be charged to it, R1).
pub fn registered() -> bool {
    !current::get().is_null()
}
