//! The per-location state machine: delay (R1), compensated region times
//! (R2), merges (R4-R6), the online critical path with shares and nets (R7),
//! partial runs (R9) and snapshots (R10).
//!
//! # Time keeping
//!
//! Every event carries the measured time `t` of its clock read. The kernel
//! keeps the delay `x` and the approximated time `a = t - x` of the last
//! event. An action's calibrated cost is split around its clock read (R1):
//! the part before it is added to `x` before `a(t)` is taken, the part after
//! it once the event is done, so that the time between two clock reads,
//! minus the overhead that fell between them, is the compensated time
//! `dt = a(t') - a(t)` of R2.
//!
//! # Critical path bookkeeping
//!
//! `L`, the shares and the nets grow with `dt` while their region is (or
//! is not) active (R7). Rather than touch `K` counters on every event, the
//! state keeps a local compensated clock `clock` (the sum of every `dt`
//! since the path started) and stores each value either frozen, or as an
//! offset from `clock` while it grows — Hollingsworth's `funcLastTime`
//! (003 Fig. 2, lines 5-6, 12-15, 35-41) generalised to shares, exclusive
//! shares and nets. Enter and exit are O(1); only sends and merges, which
//! must read or write all `K` values, are O(K).

use heapless::Vec;

use crate::calibration::{Calibration, Cost};
use crate::merge::Form;
use crate::path::Snapshot;

/// Slot value of a frame whose region is not selected.
const NO_SLOT: u8 = u8::MAX;

/// Buckets of the open-region counts that short-cut the recursion check.
const OPEN_BUCKETS: usize = 64;

mod dependencies;
mod types;

pub use types::{
    Config, Exited, FrameKind, KernelError, Merged, Overcompensation, PathState, RestartError,
};

#[derive(Clone, Copy, Debug)]
struct Frame {
    region: u32,
    site: u32,
    kind: FrameKind,
    /// The frame's own selected slot (regions only).
    slot: u8,
    /// The slot whose exclusive share grows while this frame is on top: its
    /// own for a region, the enclosing region's for a loop.
    top: u8,
    folded: bool,
    start_measured: u64,
    start_approximated: i64,
    child_measured: u64,
    child_compensated: i64,
}

/// One location's kernel: a thread or an MPI rank.
///
/// `K` is the number of selected regions, `D` the capacity of the region
/// stack (deeper frames are counted in [`Location::lost_frames`], not kept).
#[derive(Clone, Debug)]
pub struct Location<const K: usize, const D: usize> {
    id: u32,
    form: Form,
    calibration: Calibration,
    selected: [u32; K],
    /// Bit `r % 64` set for every selected region id `r`: a region whose
    /// bit is clear is not selected, found without searching `selected`
    /// (most regions are not; R7 keeps shares for `K` of them).
    selected_mask: u64,
    delay: u64,
    /// Sum of every instrumentation cost charged here (R1), whatever later
    /// merges did to the delay: what local-only compensation subtracts.
    overhead: u64,
    last_measured: u64,
    last_approximated: i64,
    path_state: PathState,
    /// Sum of non-waiting compensated time since the path started.
    clock: i64,
    /// `L = clock + longest` while active.
    longest: i64,
    transfer: i64,
    /// Offset from `clock` while the region is active, frozen value otherwise.
    inclusive: [i64; K],
    /// Offset from `clock` while the region is on top, frozen value otherwise.
    exclusive: [i64; K],
    /// Offset from `clock` while the region is NOT active, frozen otherwise.
    net: [i64; K],
    active: [u32; K],
    stack: Vec<Frame, D>,
    /// Open region frames per `region % OPEN_BUCKETS`: the stack is searched
    /// for a recursive call (002 Fig. 11) only when the bucket is non-zero,
    /// so a non-recursive enter costs O(1) whatever the depth.
    open: [u16; OPEN_BUCKETS],
    /// Open region frames beyond the stack's capacity per
    /// `region % OPEN_BUCKETS` (their regions are not kept): an exit whose
    /// bucket holds none cannot be theirs ([`Location::exit_unwinding`]).
    lost_in: [u32; OPEN_BUCKETS],
    lost_frames: u64,
    lost_open: u32,
    /// Direct recursive calls beyond the stack's capacity: counted, not
    /// lost (a folded frame would have changed nothing, 002 Fig. 11).
    recursion_beyond: u64,
    /// `lost_open` when the first lost frame that was not a direct
    /// recursive call opened; 0 while every open lost frame is one.
    lossy_from: u32,
    overcompensation: Overcompensation,
}

impl<const K: usize, const D: usize> Location<K, D> {
    /// A location whose execution begins at measured time `start`, with no
    /// delay yet.
    pub fn new(config: Config<K>, start: u64) -> Self {
        const {
            assert!(
                K < NO_SLOT as usize,
                "K must fit the encoding's one-byte count"
            );
        }
        Location {
            id: config.id,
            form: config.form,
            calibration: config.calibration,
            selected: config.selected,
            selected_mask: config
                .selected
                .iter()
                .fold(0, |mask, &r| mask | 1u64 << (r % 64)),
            delay: 0,
            overhead: 0,
            last_measured: start,
            last_approximated: start as i64,
            path_state: config.path,
            clock: 0,
            longest: 0,
            transfer: 0,
            inclusive: [0; K],
            exclusive: [0; K],
            net: [0; K],
            active: [0; K],
            stack: Vec::new(),
            open: [0; OPEN_BUCKETS],
            lost_in: [0; OPEN_BUCKETS],
            lost_frames: 0,
            lost_open: 0,
            recursion_beyond: 0,
            lossy_from: 0,
            overcompensation: Overcompensation::default(),
        }
    }

    /// Begins the location anew at measured time `t`, as [`Location::new`]
    /// would with its configuration as it is now (id, form, calibration,
    /// selection, whether the path is collected): no delay, no overhead,
    /// no critical-path values. For a backend whose own set-up ran on the
    /// location before the program's first event (an MPI rank's start-up:
    /// one rank calibrates the node's costs while the others wait for
    /// them): the program's execution begins after it, on every rank
    /// alike. Refused, nothing changed, while a region or loop is open or
    /// when `t` is earlier than the last event.
    pub fn restart(&mut self, t: u64) -> Result<(), RestartError> {
        let depth = self.stack.len() + self.lost_open as usize;
        if depth > 0 {
            return Err(RestartError::RegionsOpen { depth });
        }
        if t < self.last_measured {
            return Err(RestartError::TimeWentBackwards {
                previous: self.last_measured,
                now: t,
            });
        }
        *self = Location::new(self.config(), t);
        Ok(())
    }

    /// The location's configuration as it is now: what [`Location::new`]
    /// would be given to make it anew.
    pub fn config(&self) -> Config<K> {
        Config {
            id: self.id,
            form: self.form,
            calibration: self.calibration,
            selected: self.selected,
            path: self.path_state,
        }
    }

    /// The location's id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Gives the location another id: an MPI rank learns its rank only at
    /// `MPI_Init`, after its first regions. Records released from now on
    /// carry the new id (R7 ties compare it).
    pub fn set_id(&mut self, id: u32) {
        self.id = id;
    }

    /// The merge form.
    pub fn form(&self) -> Form {
        self.form
    }

    /// The calibrated costs.
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    /// Replaces the calibrated costs from the next action on: a process
    /// runtime may calibrate again (an MPI library initialised after the
    /// first regions) for locations that exist already (R1).
    pub fn set_calibration(&mut self, calibration: Calibration) {
        self.calibration = calibration;
    }

    /// Current delay `x` (after the last event's costs).
    pub fn delay(&self) -> u64 {
        self.delay
    }

    /// Sum of the instrumentation costs charged at this location so far
    /// (R1), not counting delay taken over from others at merges: the
    /// overhead that local-only compensation (seed 000 Table 1, "local")
    /// subtracts.
    pub fn overhead(&self) -> u64 {
        self.overhead
    }

    /// R1: `x += O(kind)`; the cost is also the location's own overhead.
    #[inline]
    fn charge(&mut self, cost: u64) {
        self.delay += cost;
        self.overhead += cost;
    }

    /// Measured time of the last event.
    pub fn last_measured(&self) -> u64 {
        self.last_measured
    }

    /// Approximated time `a = t - x` of the last event's clock read.
    pub fn last_approximated(&self) -> i64 {
        self.last_approximated
    }

    /// Critical-path collection state (R9).
    pub fn path_state(&self) -> PathState {
        self.path_state
    }

    /// Open frames (regions and loops), including those beyond capacity.
    pub fn depth(&self) -> usize {
        self.stack.len() + self.lost_open as usize
    }

    /// Frames that did not fit in the stack of capacity `D` (R12: counted,
    /// never a panic), except direct recursive calls of the innermost kept
    /// frame's region (see [`Location::recursion_beyond_capacity`]).
    pub fn lost_frames(&self) -> u64 {
        self.lost_frames
    }

    /// Direct recursive calls (the innermost kept frame's region entered
    /// again, and again) beyond the stack's capacity. Nothing of them is
    /// lost: a recursive call folds into its outermost frame (002 Fig. 11),
    /// so a kept frame would have changed no time, share or record; their
    /// time runs on in the kept frame exactly as a folded frame's would.
    pub fn recursion_beyond_capacity(&self) -> u64 {
        self.recursion_beyond
    }

    /// Negative compensated intervals seen so far.
    pub fn overcompensation(&self) -> Overcompensation {
        self.overcompensation
    }

    /// Selected slot of `region`, if it is one of the `K` selected regions.
    #[inline]
    pub fn slot_of(&self, region: u32) -> Option<usize> {
        if self.selected_mask & 1u64 << (region % 64) == 0 {
            return None;
        }
        self.selected.iter().position(|&r| r == region)
    }

    // ----- time keeping (R1, R2) -------------------------------------------

    #[inline]
    /// [`Self::check_time`] for `begin`, and `end` not before it (an
    /// action that blocked from `begin` to `end`).
    fn check_interval(&self, begin: u64, end: u64) -> Result<(), KernelError> {
        self.check_time(begin)?;
        if end < begin {
            return Err(KernelError::EndBeforeBegin { begin, end });
        }
        Ok(())
    }

    fn check_time(&self, t: u64) -> Result<(), KernelError> {
        if t < self.last_measured {
            return Err(KernelError::TimeWentBackwards {
                previous: self.last_measured,
                now: t,
            });
        }
        Ok(())
    }

    /// Compensated time between the last event and a clock read at `t`
    /// with delay `delay`: `dt = (t - x) - a_last` (R2).
    #[inline]
    fn interval(&self, t: u64, delay: u64) -> (i64, i64) {
        let now = t as i64 - delay as i64;
        (now, now - self.last_approximated)
    }

    /// Moves the location to a clock read at `t`, after the part `before`
    /// of the action's cost that precedes the read (R1), and lets the path
    /// grow by the compensated interval (R7). Returns `a(t)`.
    #[inline]
    fn advance(&mut self, t: u64, before: u64) -> i64 {
        // R1: x += O(kind), the part before the clock read.
        self.charge(before);
        let (now, dt) = self.interval(t, self.delay);
        if dt < 0 {
            self.overcompensation.count += 1;
            self.overcompensation.total += dt;
        }
        // R7: non-waiting compensated time adds to L (and, lazily, to the
        // shares of active regions and the nets of inactive ones).
        if self.path_state == PathState::Active {
            self.clock += dt;
        }
        self.last_approximated = now;
        self.last_measured = t;
        now
    }

    /// Adds a directly measured instrumentation cost (a buffer flush, a
    /// calibration pause) to the delay (R1).
    pub fn on_overhead(&mut self, duration: u64) {
        // R1: costs measured directly add their measured length.
        self.charge(duration);
    }

    // ----- regions (R2, R7) ------------------------------------------------

    /// Enters region `region` (called from call site `site`) at measured time `t`.
    #[inline]
    pub fn on_enter(&mut self, region: u32, site: u32, t: u64) -> Result<(), KernelError> {
        self.enter(region, site, FrameKind::Region, t, self.calibration.enter)
    }

    /// [`Location::on_enter`] charging `cost` instead of the calibrated
    /// `enter` cost: for backends with several enter paths calibrated one
    /// by one (a C call, a compiler hook; R1).
    #[inline]
    pub fn on_enter_costing(
        &mut self,
        region: u32,
        site: u32,
        t: u64,
        cost: Cost,
    ) -> Result<(), KernelError> {
        self.enter(region, site, FrameKind::Region, t, cost)
    }

    /// Enters loop `id` at measured time `t` (R12: one record per loop).
    pub fn on_loop_enter(&mut self, id: u32, site: u32, t: u64) -> Result<(), KernelError> {
        self.enter(id, site, FrameKind::Loop, t, self.calibration.enter)
    }

    /// Exits region `region` at measured time `t`; returns its times (R2),
    /// or `None` when the frame was beyond the stack's capacity.
    #[inline]
    pub fn on_exit(&mut self, region: u32, t: u64) -> Result<Option<Exited>, KernelError> {
        self.exit(region, FrameKind::Region, t, self.calibration.exit)
    }

    /// [`Location::on_exit`] charging `cost` instead of the calibrated
    /// `exit` cost (R1).
    #[inline]
    pub fn on_exit_costing(
        &mut self,
        region: u32,
        t: u64,
        cost: Cost,
    ) -> Result<Option<Exited>, KernelError> {
        self.exit(region, FrameKind::Region, t, cost)
    }

    /// [`Location::on_exit_costing`] for exits that may come after a
    /// non-local jump: when `region` is open but not innermost, the frames
    /// above it are first closed at `t` with no cost (their exits never ran,
    /// so no instrumentation was spent on them; R1), each passed to
    /// `skipped`, and then `region` exits as usual (R2). A `longjmp` (or
    /// `siglongjmp`) out of code compiled with `-finstrument-functions`
    /// leaves functions without their exit hooks; without this the
    /// abandoned frames stayed open forever, every later exit of the
    /// enclosing function was refused, and once the stack was full every
    /// later frame was lost (R12). The innermost open frame of `region` is
    /// taken (recursion exits innermost first). Frames beyond the stack's
    /// capacity are open too when the jump left them: their regions are
    /// not kept, only counted per bucket of `region % 64`, so they are
    /// closed when they are all direct recursive calls of another region
    /// than `region`, or when none is in `region`'s bucket (then this exit
    /// cannot be one of theirs). When `region` is not open, or some frame
    /// beyond the capacity may be `region`'s, nothing is closed and the
    /// exit is handled as [`Location::on_exit_costing`] handles it.
    /// Always inlined: a compiler hook's exit calls it once per function,
    /// and out of line it cost its caller a call and the frame's spills.
    #[inline(always)]
    pub fn on_exit_unwinding_costing(
        &mut self,
        region: u32,
        t: u64,
        cost: Cost,
        skipped: impl FnMut(Exited),
    ) -> Result<Option<Exited>, KernelError> {
        // R2, the common case inlined: `region` is the innermost frame and
        // every open frame is kept, so nothing is above it to close (what
        // the general path below finds too: no frame above, the same exit).
        if self.lost_open == 0
            && self
                .stack
                .last()
                .is_some_and(|f| f.kind == FrameKind::Region && f.region == region)
        {
            return self.exit(region, FrameKind::Region, t, cost);
        }
        self.exit_unwinding(region, t, cost, skipped)
    }

    /// [`Location::on_exit_unwinding_costing`] when frames may be above
    /// `region`, out of line.
    #[inline(never)]
    fn exit_unwinding(
        &mut self,
        region: u32,
        t: u64,
        cost: Cost,
        mut skipped: impl FnMut(Exited),
    ) -> Result<Option<Exited>, KernelError> {
        if self.lost_open > 0
            && (self.lossy_from == 0 && self.stack.last().is_some_and(|f| f.region != region)
                || self.lost_in[region as usize % OPEN_BUCKETS] == 0)
            && self
                .stack
                .iter()
                .any(|f| f.kind == FrameKind::Region && f.region == region)
        {
            // `region` is open on the stack and no frame beyond the capacity
            // is its: either those frames are all direct recursive calls of
            // the innermost kept frame, which is not `region`, or none of
            // them is in `region`'s bucket. So this exit is a kept frame's,
            // and the frames beyond the capacity were abandoned too (a jump
            // out of them, 004 §II.A.2's hooks never ran their exits). They
            // hold no record; closing them is forgetting them. Without this
            // a jump out of a deep indirect recursion left them open for
            // good, and every later frame was lost (R12).
            self.forget_lost();
        }
        if self.lost_open == 0 {
            let above = self
                .stack
                .iter()
                .rev()
                .position(|f| f.kind == FrameKind::Region && f.region == region);
            for _ in 0..above.unwrap_or(0) {
                let Some(&f) = self.stack.last() else { break };
                let zero = Cost {
                    whole: 0,
                    inside: 0,
                };
                if let Some(e) = self.exit(f.region, f.kind, t, zero)? {
                    skipped(e);
                }
            }
        }
        self.exit(region, FrameKind::Region, t, cost)
    }

    /// Exits loop `id` at measured time `t`.
    pub fn on_loop_exit(&mut self, id: u32, t: u64) -> Result<Option<Exited>, KernelError> {
        self.exit(id, FrameKind::Loop, t, self.calibration.exit)
    }

    /// Forgets every open frame beyond the stack's capacity (abandoned by
    /// a non-local jump; counted when they opened).
    fn forget_lost(&mut self) {
        self.lost_open = 0;
        self.lossy_from = 0;
        self.lost_in = [0; OPEN_BUCKETS];
    }

    #[inline(always)]
    fn enter(
        &mut self,
        region: u32,
        site: u32,
        kind: FrameKind,
        t: u64,
        cost: Cost,
    ) -> Result<(), KernelError> {
        self.check_time(t)?;
        // R1: the part of the enter before its clock read is the parent's.
        let now = self.advance(t, cost.outside());
        if self.lost_open > 0 || self.stack.is_full() {
            // R12: bounded memory; the frame is counted, not kept.
            self.lost_open += 1;
            if kind == FrameKind::Region {
                let n = &mut self.lost_in[region as usize % OPEN_BUCKETS];
                *n = n.saturating_add(1);
            }
            let recursive = self.lossy_from == 0
                && kind == FrameKind::Region
                && self
                    .stack
                    .last()
                    .is_some_and(|f| f.kind == FrameKind::Region && f.region == region);
            if recursive {
                // 002 Fig. 11: it would fold into the kept frame below,
                // whose region is on top either way; nothing is lost.
                self.recursion_beyond += 1;
            } else {
                self.lost_frames += 1;
                if self.lossy_from == 0 {
                    self.lossy_from = self.lost_open;
                }
            }
        } else {
            // 002 Fig. 11: a region already on the stack is a recursive call;
            // it folds into the outermost frame, as if the call did not exist.
            let folded = kind == FrameKind::Region && {
                let bucket = &mut self.open[region as usize % OPEN_BUCKETS];
                *bucket += 1;
                *bucket > 1
                    && self
                        .stack
                        .iter()
                        .any(|f| f.kind == FrameKind::Region && f.region == region)
            };
            let slot = match kind {
                FrameKind::Region => self.slot_of(region).map_or(NO_SLOT, |s| s as u8),
                FrameKind::Loop => NO_SLOT,
            };
            let previous_top = self.top_slot();
            // A loop is not a procedure: its time stays exclusive to the
            // enclosing region (R2), in the loop's own record too (R12).
            let top = match kind {
                FrameKind::Region => slot,
                FrameKind::Loop => previous_top,
            };
            let frame = Frame {
                region,
                site,
                kind,
                slot,
                top,
                folded,
                start_measured: t,
                start_approximated: now,
                child_measured: 0,
                child_compensated: 0,
            };
            // Capacity was checked above; a failed push cannot happen.
            let _ = self.stack.push(frame);
            self.switch_top(previous_top, top);
            if slot != NO_SLOT {
                self.activate(usize::from(slot));
            }
        }
        // R1: the part after the clock read is inside the region (R2).
        self.charge(cost.inside);
        Ok(())
    }

    #[inline(always)]
    fn exit(
        &mut self,
        region: u32,
        kind: FrameKind,
        t: u64,
        cost: Cost,
    ) -> Result<Option<Exited>, KernelError> {
        self.check_time(t)?;
        if self.lost_open > 0 {
            // R12: a frame that did not fit; its exit only charges its cost.
            self.advance(t, cost.inside);
            if self.lost_open == self.lossy_from {
                self.lossy_from = 0;
            }
            self.lost_open -= 1;
            if self.lost_open == 0 {
                // whatever an exit of another region than its frame's left
                self.lost_in = [0; OPEN_BUCKETS];
            } else if kind == FrameKind::Region {
                let n = &mut self.lost_in[region as usize % OPEN_BUCKETS];
                *n = n.saturating_sub(1);
            }
            self.charge(cost.outside());
            return Ok(None);
        }
        let f = match self.stack.last() {
            None => return Err(KernelError::ExitWithoutEnter { region }),
            Some(f) if f.region != region || f.kind != kind => {
                return Err(KernelError::ExitMismatch {
                    open: f.region,
                    exited: region,
                });
            }
            Some(&f) => f,
        };
        // R1: the part of the exit before its clock read is inside the region.
        let now = self.advance(t, cost.inside);
        self.stack.truncate(self.stack.len() - 1);
        if f.kind == FrameKind::Region {
            self.open[f.region as usize % OPEN_BUCKETS] -= 1;
        }
        if f.slot != NO_SLOT {
            self.deactivate(usize::from(f.slot));
        }
        let new_top = self.top_slot();
        self.switch_top(f.top, new_top);
        let measured_inclusive = t - f.start_measured;
        // R2: (t1 - t0) - (x(t1) - x(t0)) = a(t1) - a(t0)
        let inclusive = now - f.start_approximated;
        if let Some(parent) = self.stack.last_mut() {
            if f.folded || (f.kind == FrameKind::Loop && parent.kind == FrameKind::Region) {
                // 002 Fig. 11: the folded call does not exist; its
                // children are the parent's children. Likewise a
                // loop is transparent to its region's exclusive time.
                parent.child_measured += f.child_measured;
                parent.child_compensated += f.child_compensated;
            } else {
                parent.child_measured += measured_inclusive;
                parent.child_compensated += inclusive;
            }
        }
        // R1: the rest of the exit is the parent's.
        self.charge(cost.outside());
        Ok(Some(Exited {
            region: f.region,
            site: f.site,
            kind: f.kind,
            folded: f.folded,
            measured_inclusive,
            measured_exclusive: measured_inclusive.saturating_sub(f.child_measured),
            inclusive,
            // R2: exclusive = inclusive - children's compensated inclusive
            exclusive: inclusive - f.child_compensated,
        }))
    }

    #[inline]
    fn top_slot(&self) -> u8 {
        self.stack.last().map_or(NO_SLOT, |f| f.top)
    }

    /// R7 exclusive shares: only the region on top of the stack grows.
    /// The test is inlined, the switch is not: an enter or exit that keeps
    /// the top slot (every pair of regions not selected) then makes no call
    /// and keeps its frame's values in registers.
    #[inline(always)]
    fn switch_top(&mut self, from: u8, to: u8) {
        if from != to {
            self.switch_top_slots(from, to);
        }
    }

    /// [`Location::switch_top`] between two different slots.
    #[inline]
    fn switch_top_slots(&mut self, from: u8, to: u8) {
        if from != NO_SLOT {
            let k = usize::from(from);
            self.exclusive[k] += self.clock; // freeze
        }
        if to != NO_SLOT {
            let k = usize::from(to);
            self.exclusive[k] -= self.clock; // start growing
        }
    }

    /// R7: region `k` becomes active: its share starts growing, its net
    /// stops (003 Fig. 2 l.35-38: `if funcActive is one, funcLastTime = now`).
    #[inline]
    fn activate(&mut self, k: usize) {
        if self.active[k] == 0 {
            self.inclusive[k] -= self.clock;
            self.net[k] += self.clock;
        }
        self.active[k] += 1;
    }

    /// R7: region `k` is left by its outermost frame (003 Fig. 2 l.39-41).
    #[inline]
    fn deactivate(&mut self, k: usize) {
        self.active[k] -= 1;
        if self.active[k] == 0 {
            self.inclusive[k] += self.clock;
            self.net[k] -= self.clock;
        }
    }

    // ----- critical path values (R7, R9, R10) -------------------------------

    /// The path values at local compensated clock `clock`.
    fn path_at(&self, clock: i64) -> Snapshot<K> {
        let top = self.top_slot();
        let mut s = Snapshot {
            location: self.id,
            active: self.path_state == PathState::Active,
            longest: clock + self.longest,
            transfer: self.transfer,
            inclusive: self.inclusive,
            exclusive: self.exclusive,
            net: self.net,
        };
        for k in 0..K {
            if self.active[k] > 0 {
                s.inclusive[k] += clock;
            } else {
                s.net[k] += clock;
            }
        }
        if top != NO_SLOT {
            s.exclusive[usize::from(top)] += clock;
        }
        s
    }

    /// Stores materialised path values back in the lazy representation.
    fn set_path(&mut self, s: &Snapshot<K>) {
        let clock = self.clock;
        let top = self.top_slot();
        self.longest = s.longest - clock;
        self.transfer = s.transfer;
        self.inclusive = s.inclusive;
        self.exclusive = s.exclusive;
        self.net = s.net;
        for k in 0..K {
            if self.active[k] > 0 {
                self.inclusive[k] -= clock;
            } else {
                self.net[k] -= clock;
            }
        }
        if top != NO_SLOT {
            self.exclusive[usize::from(top)] -= clock;
        }
    }

    /// The location's `(L, s, n)` at its last event, for a monitor (R10).
    pub fn snapshot(&self) -> Snapshot<K> {
        self.path_at(self.clock)
    }

    /// The critical-path values the location collected, for its report:
    /// while collecting, as [`Location::snapshot`]; once stopped, the values
    /// frozen at the stop (R9: a partial run reports the part it
    /// collected); `None` if collection never started.
    pub fn collected_path(&self) -> Option<Snapshot<K>> {
        (self.path_state != PathState::Idle).then(|| self.path_at(self.clock))
    }

    /// Starts critical-path collection at `t` with an empty path (R9, 003
    /// §2.3: the start node precedes the first selected event).
    pub fn start_path(&mut self, t: u64) -> Result<(), KernelError> {
        self.check_time(t)?;
        self.advance(t, 0);
        self.begin_path();
        Ok(())
    }

    fn begin_path(&mut self) {
        self.path_state = PathState::Active;
        let mut zero = Snapshot::ZERO;
        zero.location = self.id;
        self.set_path(&zero);
    }

    /// Stops critical-path collection at `t`: values freeze, later sends
    /// are data-less (R9).
    pub fn stop_path(&mut self, t: u64) -> Result<(), KernelError> {
        self.check_time(t)?;
        self.advance(t, 0);
        self.path_state = PathState::Stopped;
        Ok(())
    }
}
