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
use crate::exchange::Exchange;
use crate::merge::{self, Dependency, Form};
use crate::path::Snapshot;
use crate::piggyback::{Flags, Pending, Piggyback};

/// Slot value of a frame whose region is not selected.
const NO_SLOT: u8 = u8::MAX;

/// Buckets of the open-region counts that short-cut the recursion check.
const OPEN_BUCKETS: usize = 64;

mod types;

pub use types::{Config, Exited, FrameKind, KernelError, Merged, Overcompensation, PathState};

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
    /// alike. Refused (false, nothing changed) while a region or loop is
    /// open or when `t` is earlier than the last event.
    pub fn restart(&mut self, t: u64) -> bool {
        if !self.stack.is_empty() || self.lost_open > 0 || t < self.last_measured {
            return false;
        }
        let config = Config {
            id: self.id,
            form: self.form,
            calibration: self.calibration,
            selected: self.selected,
            path: self.path_state,
        };
        *self = Location::new(config, t);
        true
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

    // ----- releases (R3) ----------------------------------------------------

    /// The record a release at `t` would carry, without changing the state:
    /// for the entry record of an n-to-n collective (R6), which is combined
    /// before [`Location::on_collective`] completes the event at the same `t`.
    pub fn peek(&self, t: u64) -> Piggyback<K> {
        let t = t.max(self.last_measured);
        let (now, dt) = self.interval(t, self.delay);
        let clock = if self.path_state == PathState::Active {
            self.clock + dt
        } else {
            self.clock
        };
        self.record(now, clock)
    }

    fn record(&self, now: i64, clock: i64) -> Piggyback<K> {
        let mut p = Piggyback::EMPTY;
        self.record_into(now, clock, &mut p);
        p
    }

    /// [`Location::record`] written into `p`, every field of it.
    #[inline]
    fn record_into(&self, now: i64, clock: i64, p: &mut Piggyback<K>) {
        if self.record_bases_into(now, clock, p) {
            // The lazy representation materialised in place (see path_at).
            p.add_path_clock(clock, &self.active, self.top_slot());
        }
    }

    /// Every field of a release's record at approximated time `now` and
    /// path clock `clock`, the selected regions' values as the location
    /// keeps them (their bases, before [`Piggyback::add_path_clock`]);
    /// false when the record carries no path data (R9: a stopped or
    /// not-yet-started location; the arrays are zero).
    #[inline(always)]
    fn record_bases_into(&self, now: i64, clock: i64, p: &mut Piggyback<K>) -> bool {
        let mut flags = Flags::DELAY;
        if self.form == Form::Timestamped {
            flags = flags.with(Flags::TIMESTAMP);
        }
        p.location = self.id;
        p.delay = self.delay;
        p.approximated = now;
        // Field by field, in place: a whole `Piggyback` built and assigned
        // goes through a copy on the stack (30 instructions a lock pair).
        if self.path_state != PathState::Active {
            p.flags = flags;
            p.longest = 0;
            p.transfer = 0;
            p.inclusive = [0; K];
            p.exclusive = [0; K];
            p.net = [0; K];
            return false;
        }
        p.flags = flags.with(Flags::PATH);
        p.longest = clock + self.longest;
        p.transfer = self.transfer;
        p.inclusive = self.inclusive;
        p.exclusive = self.exclusive;
        p.net = self.net;
        true
    }

    /// A release at measured time `t` — send, unlock, barrier arrival,
    /// enqueue, spawn, thread end: returns the piggyback it carries (R3).
    ///
    /// The release's cost (packing the piggyback) falls after its clock read
    /// but before the dependency leaves: the record's delay includes it, so
    /// that `approximated + delay` is the measured departure while
    /// `approximated` stays the release's approximated time.
    pub fn on_release(&mut self, t: u64) -> Result<Piggyback<K>, KernelError> {
        self.on_release_costing(t, self.calibration.send)
    }

    /// [`Location::on_release`] charging `cost` instead of the calibrated
    /// `send` cost: for backends whose release actions (unlock, enqueue,
    /// notify, spawn) are calibrated one by one (R1).
    #[inline]
    pub fn on_release_costing(&mut self, t: u64, cost: u64) -> Result<Piggyback<K>, KernelError> {
        let mut p = Piggyback::EMPTY;
        self.on_release_costing_into(t, cost, &mut p)?;
        Ok(p)
    }

    /// [`Location::on_release_costing`] writing the piggyback into `out`
    /// (every field), where the caller keeps it: a lock's hand-off slot
    /// is written once, not through a returned copy. On an error `out`
    /// is left as it was.
    #[inline]
    pub fn on_release_costing_into(
        &mut self,
        t: u64,
        cost: u64,
        out: &mut Piggyback<K>,
    ) -> Result<(), KernelError> {
        let now = self.release_at(t, cost)?;
        self.record_into(now, self.clock, out);
        Ok(())
    }

    /// What every release at `t` does before its record is taken: the
    /// interval up to `t` (R2), then its `cost` charged (R1: taking the
    /// record is an instrumentation action); the approximated time.
    #[inline(always)]
    fn release_at(&mut self, t: u64, cost: u64) -> Result<i64, KernelError> {
        self.check_time(t)?;
        let now = self.advance(t, 0);
        self.charge(cost);
        Ok(now)
    }

    /// [`Location::on_release_costing_into`] keeping the record in the
    /// location's lazy representation ([`Pending`]): the same release, the
    /// same delay; the reader materialises the values it needs.
    #[inline]
    pub fn on_release_costing_pending(
        &mut self,
        t: u64,
        cost: u64,
        out: &mut Pending<K>,
    ) -> Result<(), KernelError> {
        let now = self.release_at(t, cost)?;
        if self.record_bases_into(now, self.clock, &mut out.base) {
            out.clock = self.clock;
            out.active = self.active;
            out.top = self.top_slot();
        }
        Ok(())
    }

    // ----- merges (R4, R5, R6, R7) ------------------------------------------

    /// A merge that blocked from `begin` to `end` on `deps` — receive end,
    /// wait completion, lock acquired, dequeue, join (R4, R5; R6 n-to-1 and
    /// 1-to-n receivers).
    pub fn on_merge(
        &mut self,
        begin: u64,
        end: u64,
        deps: &[Dependency<'_, K>],
    ) -> Result<Merged, KernelError> {
        self.on_merge_costing(begin, end, deps, self.calibration.merge)
    }

    /// [`Location::on_merge`] charging `cost` instead of the calibrated
    /// `merge` cost: for backends whose merge actions (acquire, barrier
    /// exit, dequeue, join) are calibrated one by one (R1).
    pub fn on_merge_costing(
        &mut self,
        begin: u64,
        end: u64,
        deps: &[Dependency<'_, K>],
        cost: u64,
    ) -> Result<Merged, KernelError> {
        self.check_time(begin)?;
        if end < begin {
            return Err(KernelError::EndBeforeBegin { begin, end });
        }
        let at_begin = self.advance(begin, 0);
        let approx = merge::approximate(self.form, begin, end, self.delay, deps);
        Ok(self.complete(begin, end, at_begin, &approx, deps, cost))
    }

    /// The start of a location created by another — a spawned thread: its
    /// first point merges the creator's release, and its own start imposes
    /// nothing (R8: spawn is a release that the child's start merges). Like
    /// every merge it charges the calibrated `merge` cost (R1).
    pub fn on_start(&mut self, t: u64, parent: &Dependency<'_, K>) -> Result<Merged, KernelError> {
        self.on_start_costing(t, parent, self.calibration.merge)
    }

    /// [`Location::on_start`] charging `cost` instead of the calibrated
    /// `merge` cost (R1).
    pub fn on_start_costing(
        &mut self,
        t: u64,
        parent: &Dependency<'_, K>,
        cost: u64,
    ) -> Result<Merged, KernelError> {
        self.check_time(t)?;
        let at_begin = self.advance(t, 0);
        let deps = core::slice::from_ref(parent);
        // The child did not exist before: only the creator decides a(t).
        let approx = if parent.piggyback.flags.contains(Flags::DELAY) {
            merge::approximate_from(self.form, None, t, t, deps)
        } else {
            merge::approximate(self.form, t, t, self.delay, deps)
        };
        Ok(self.complete(t, t, at_begin, &approx, deps, cost))
    }

    fn complete(
        &mut self,
        begin: u64,
        end: u64,
        at_begin: i64,
        approx: &merge::Approximation,
        deps: &[Dependency<'_, K>],
        cost: u64,
    ) -> Merged {
        let approximated_end = approx.end;
        // R5: x' = e - a(e); R4: w' = w + x - x' = a(e) - a(b).
        self.delay = (end as i64 - approximated_end).max(0) as u64;
        let mut arrival = None;
        let mut transfer = 0;
        // R7 ties: compare against the running winner's location, not ours.
        let mut winner = self.id;
        for dep in deps {
            let p = dep.piggyback;
            let timestamped = p.flags.contains(Flags::DELAY.with(Flags::TIMESTAMP));
            // R5: l_j. merge::approximate computed it too; a visitor to share
            // it measured slower (merge K=0 21 -> 28 ns) than computing it twice.
            let l = if timestamped {
                dep.transfer(begin, end).estimate
            } else {
                0
            };
            if timestamped {
                // R11: the approximated arrival of the latest dependency.
                let a = p.approximated + l;
                arrival = Some(arrival.map_or(a, |b: i64| b.max(a)));
            }
            if !p.flags.contains(Flags::PATH) {
                continue;
            }
            match self.path_state {
                // R9, 003 §2.3 case 3: path data reaching an idle location starts it.
                PathState::Idle => self.begin_path(),
                PathState::Active => {}
                // R9: a stopped location ignores path data.
                PathState::Stopped => continue,
            }
            // R7: l_j is 0 in the delay-only form (Hollingsworth, 003
            // Fig. 2) and the R5 transfer estimate otherwise.
            let l = if self.form == Form::Timestamped { l } else { 0 };
            if self.merge_one(
                winner,
                p.longest,
                p.transfer,
                p.location,
                &p.inclusive,
                &p.exclusive,
                &p.net,
                l,
            ) {
                transfer = l;
                winner = p.location;
            }
        }
        self.last_approximated = approximated_end;
        self.last_measured = end;
        // R1: unpacking and merging is an instrumentation action.
        self.charge(cost);
        Merged {
            wait: end - begin,
            compensated_wait: approximated_end - at_begin,
            approximated_end,
            lower: approx.lower,
            upper: approx.upper,
            determined_by: approx.determined_by,
            arrival,
            transfer,
        }
    }

    /// R7 at a merge, for one incoming path, on the lazy representation:
    /// `n[k] = max(n[k], n_j[k] + l)` per k, and the shares of the winner of
    /// `(L, lower location)` against the running `winner` (003 Fig. 2
    /// l.23-25, Fig. 4 l.6-9). No `Snapshot` is materialised. Returns
    /// whether the incoming path won.
    #[inline]
    #[allow(clippy::too_many_arguments)] // reason: the fields of a Piggyback or a Snapshot, borrowed, so neither is copied
    fn merge_one(
        &mut self,
        winner: u32,
        longest: i64,
        transfer: i64,
        location: u32,
        inclusive: &[i64; K],
        exclusive: &[i64; K],
        net: &[i64; K],
        l: i64,
    ) -> bool {
        let clock = self.clock;
        // R7: n'[k] = max(n[k], n_j[k] + l) for each k; in the lazy form an
        // inactive region's net is stored minus `clock` (branch-free mask).
        for ((own, &theirs), &open) in self.net.iter_mut().zip(net).zip(&self.active) {
            let inactive = i64::from(open == 0).wrapping_neg();
            *own = (*own).max(theirs + l - (clock & inactive));
        }
        let incoming = longest + l;
        let local = clock + self.longest;
        let wins = match incoming.cmp(&local) {
            core::cmp::Ordering::Greater => true,
            core::cmp::Ordering::Less => false,
            core::cmp::Ordering::Equal => {
                if location != winner {
                    location < winner
                } else {
                    // Same length and location (rare): the full order of `beats`.
                    let mut cur = self.path_at(clock);
                    cur.location = winner;
                    let mut path = cur;
                    path.longest = incoming;
                    path.transfer = transfer + l;
                    path.inclusive = *inclusive;
                    path.exclusive = *exclusive;
                    path.location = location;
                    path.beats(&cur)
                }
            }
        };
        if wins {
            let top = self.top_slot();
            self.longest = incoming - clock;
            self.transfer = transfer + l;
            // The winner's shares, stored lazily: an active region's
            // inclusive share and the top region's exclusive share grow.
            for ((own, &theirs), &open) in
                self.inclusive.iter_mut().zip(inclusive).zip(&self.active)
            {
                let active = i64::from(open != 0).wrapping_neg();
                *own = theirs - (clock & active);
            }
            self.exclusive = *exclusive;
            if usize::from(top) < K {
                self.exclusive[usize::from(top)] -= clock;
            }
        }
        wins
    }

    /// R7 at a merge: `L' = max(L, max_j (L_j + l_j))` with the shares of
    /// the winner, and `n'[k] = max(n[k], max_j (n_j[k] + l_j))` for each k
    /// independently (003 Fig. 2 l.23-25; Fig. 4 l.6-9). Returns the
    /// transfer time taken over from the winning dependency.
    fn merge_paths<I>(&mut self, incoming: I) -> i64
    where
        I: Iterator<Item = (Snapshot<K>, i64)>,
    {
        let mut local: Option<Snapshot<K>> = None;
        let mut taken = 0;
        for (mut path, l) in incoming {
            match self.path_state {
                // R9, 003 §2.3 case 3: path data reaching an idle location starts it.
                PathState::Idle => self.begin_path(),
                PathState::Active => {}
                // R9: a stopped location ignores path data.
                PathState::Stopped => return 0,
            }
            let current = local.get_or_insert_with(|| self.path_at(self.clock));
            path.longest += l;
            path.transfer += l;
            for k in 0..K {
                path.net[k] += l;
                current.net[k] = current.net[k].max(path.net[k]);
            }
            if path.beats(current) {
                let nets = current.net;
                // The winner keeps its own id so that later ties compare
                // against it (R7: lower location id wins).
                *current = Snapshot { net: nets, ..path };
                taken = l;
            }
        }
        if let Some(mut s) = local {
            s.location = self.id;
            self.set_path(&s);
        }
        taken
    }

    /// Completes an n-to-n collective (barrier, allreduce, allgather,
    /// alltoall) that blocked from `begin` to `end`, given the reduction of
    /// every participant's entry record, this location's included (R6).
    ///
    /// Timestamped (001 eq. 13): `a(e) = max_j (b_j - x_j) + (e - max_j b_j)`,
    /// the latest approximated entry plus the synchronisation time measured
    /// after the latest measured entry. Delay-only:
    /// `x' = min_j (x_j + w_j) - min_j w_j`, exact when every participant
    /// leaves the synchronisation the same time after the last arrival.
    pub fn on_collective(
        &mut self,
        begin: u64,
        end: u64,
        exchange: &Exchange<K>,
    ) -> Result<Merged, KernelError> {
        self.on_collective_costing(begin, end, exchange, self.calibration.merge)
    }

    /// [`Location::on_collective`] charging `cost` instead of the
    /// calibrated `merge` cost (R1).
    pub fn on_collective_costing(
        &mut self,
        begin: u64,
        end: u64,
        exchange: &Exchange<K>,
        cost: u64,
    ) -> Result<Merged, KernelError> {
        self.check_time(begin)?;
        if end < begin {
            return Err(KernelError::EndBeforeBegin { begin, end });
        }
        let at_begin = self.advance(begin, 0);
        let unchanged = end as i64 - self.delay as i64;
        let (approximated_end, sync) = if !exchange.flags.contains(Flags::DELAY) {
            // R3: nobody carried a delay; the state is unchanged.
            (unchanged, 0)
        } else if self.form == Form::Timestamped && exchange.flags.contains(Flags::TIMESTAMP) {
            // 001 eq. 13: exit_a^i = enter_a^k + (exit_m^i - enter_m^j)
            let sync = end as i64 - exchange.max_measured;
            ((exchange.max_approximated + sync).max(at_begin), sync)
        } else {
            // R6 delay-only: x' = min_j (x_j + w_j) - S, S = min_j w_j
            let delay = exchange
                .min_delay_plus_wait
                .saturating_sub(exchange.min_wait);
            ((end as i64 - delay as i64).max(at_begin), 0)
        };
        let transfer = if exchange.flags.contains(Flags::PATH) {
            // R7: the exit follows every arrival; the synchronisation time
            // is the (transfer) of the timestamped form.
            self.merge_paths(core::iter::once((exchange.path, sync)))
        } else {
            0
        };
        self.delay = (end as i64 - approximated_end).max(0) as u64;
        self.last_approximated = approximated_end;
        self.last_measured = end;
        // R1: combining the exchange is an instrumentation action.
        self.charge(cost);
        Ok(Merged {
            wait: end - begin,
            compensated_wait: approximated_end - at_begin,
            approximated_end,
            lower: approximated_end,
            upper: approximated_end,
            determined_by: None,
            arrival: None,
            transfer,
        })
    }
}
