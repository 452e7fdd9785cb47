//! The values a [`Location`](super::Location) takes and gives: frame
//! kinds, exited region times (R2), merge outcomes (R4-R6), path states
//! (R9), the configuration, refused calls and over-compensation.

use core::fmt;

use crate::calibration::Calibration;
use crate::merge::Form;

/// What kind of frame a region-stack entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(u8)]
pub enum FrameKind {
    /// A code region: a procedure, a phase, an MPI call.
    Region = 0,
    /// A loop (R12: one record per loop).
    Loop = 1,
}

/// The times of a region or loop instance that just ended (R2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exited {
    /// Region id, or loop id for [`FrameKind::Loop`].
    pub region: u32,
    /// Call site id.
    pub site: u32,
    /// Region or loop.
    pub kind: FrameKind,
    /// A recursive re-entry of a region already on the stack: it is folded
    /// into the outermost frame (002 Fig. 11), and statistics skip it.
    pub folded: bool,
    /// Measured inclusive time `t1 - t0`.
    pub measured_inclusive: u64,
    /// Measured inclusive time minus that of the (unfolded) children.
    pub measured_exclusive: u64,
    /// Compensated inclusive time `(t1 - t0) - (x(t1) - x(t0))` (R2).
    /// Negative means over-compensation; it is reported, never clamped.
    pub inclusive: i64,
    /// Compensated exclusive time: inclusive minus the compensated
    /// inclusive times of the children (R2).
    pub exclusive: i64,
}

/// The outcome of a merge (R4-R6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Merged {
    /// Measured wait `w = e - b`.
    pub wait: u64,
    /// Compensated wait `w' = w + x - x'` (R4): zero when the location
    /// would not have waited, more than `w` when its delay shrank.
    pub compensated_wait: i64,
    /// Approximated end `a(e)` (R5).
    pub approximated_end: i64,
    /// Lower bound of `a(e)` (001 eq. 11); equal to the estimate when
    /// every transfer was measured.
    pub lower: i64,
    /// Upper bound of `a(e)` (001 eq. 11).
    pub upper: i64,
    /// The dependency that determined `a(e)`; `None` if the location's own
    /// begin did, i.e. it would not have waited.
    pub determined_by: Option<usize>,
    /// Latest approximated arrival `max_j (a_j + l_j)` over the
    /// dependencies with timestamps, for wildcard-reorder detection (R11).
    pub arrival: Option<i64>,
    /// Transfer time that the critical path took over from a dependency,
    /// attributed to the `(transfer)` pseudo-region (R7); 0 if the local
    /// path won.
    pub transfer: i64,
}

/// Critical-path collection state of a location (R9, 003 §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum PathState {
    /// Not started: sends data-less piggybacks, starts on the first merge
    /// with critical-path data (003 §2.3 case 3) or when told.
    Idle,
    /// Collecting.
    Active,
    /// Stopped: values frozen, sends data-less piggybacks, ignores path data.
    Stopped,
}

/// How a [`Location`](super::Location) is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config<const K: usize> {
    /// The location's id; lower ids win critical-path ties (R7).
    pub id: u32,
    /// Merge form of the run (R4 or R5).
    pub form: Form,
    /// Calibrated action costs (R1).
    pub calibration: Calibration,
    /// Region ids of the `K` selected regions whose shares and nets are kept.
    pub selected: [u32; K],
    /// Whether critical-path collection starts with the location.
    pub path: PathState,
}

impl<const K: usize> Config<K> {
    /// A timestamped location with no instrumentation cost, collecting the
    /// critical path of `selected` from the start.
    pub const fn new(id: u32, selected: [u32; K]) -> Self {
        Config {
            id,
            form: Form::Timestamped,
            calibration: Calibration::ZERO,
            selected,
            path: PathState::Active,
        }
    }

    /// The same configuration with another merge form.
    #[must_use]
    pub const fn form(mut self, form: Form) -> Self {
        self.form = form;
        self
    }

    /// The same configuration with other calibrated costs.
    #[must_use]
    pub const fn calibration(mut self, calibration: Calibration) -> Self {
        self.calibration = calibration;
        self
    }

    /// The same configuration with another initial path state.
    #[must_use]
    pub const fn path(mut self, path: PathState) -> Self {
        self.path = path;
        self
    }
}

/// A kernel call the state machine refused; the state is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelError {
    /// A measured time earlier than the previous event's.
    TimeWentBackwards {
        /// The previous event's measured time.
        previous: u64,
        /// The time passed now.
        now: u64,
    },
    /// A merge whose end is before its begin.
    EndBeforeBegin {
        /// Merge begin.
        begin: u64,
        /// Merge end.
        end: u64,
    },
    /// An exit with no open region or loop.
    ExitWithoutEnter {
        /// The region (or loop) id passed to the exit.
        region: u32,
    },
    /// An exit of another region than the innermost open one.
    ExitMismatch {
        /// The innermost open region (or loop).
        open: u32,
        /// The region (or loop) id passed to the exit.
        exited: u32,
    },
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KernelError::TimeWentBackwards { previous, now } => write!(
                f,
                "measured time went backwards: {now} ns after an event at {previous} ns"
            ),
            KernelError::EndBeforeBegin { begin, end } => {
                write!(f, "merge ends at {end} ns, before it began at {begin} ns")
            }
            KernelError::ExitWithoutEnter { region } => {
                write!(f, "exit of region {region} with no region open")
            }
            KernelError::ExitMismatch { open, exited } => write!(
                f,
                "exit of region {exited} while region {open} is the innermost open one"
            ),
        }
    }
}

impl core::error::Error for KernelError {}

/// Why [`Location::restart`](super::Location::restart) refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestartError {
    /// Regions or loops are open (`depth` of them, lost frames included):
    /// the program's execution has begun.
    RegionsOpen {
        /// Open frames.
        depth: usize,
    },
    /// The restart time is earlier than the last event's.
    TimeWentBackwards {
        /// The last event's measured time.
        previous: u64,
        /// The restart time passed.
        now: u64,
    },
}

impl fmt::Display for RestartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RestartError::RegionsOpen { depth } => {
                write!(f, "cannot restart a location with {depth} regions open")
            }
            RestartError::TimeWentBackwards { previous, now } => write!(
                f,
                "cannot restart a location at {now} ns, before its last event at {previous} ns"
            ),
        }
    }
}

impl core::error::Error for RestartError {}

/// Over-compensation seen on a location: intervals whose compensated
/// length came out negative because the calibrated costs exceed the real
/// ones. Reported, never clamped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Overcompensation {
    /// Number of negative intervals.
    pub count: u64,
    /// Their sum (zero or negative), in ns.
    pub total: i64,
}
