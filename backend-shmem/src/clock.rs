//! The one clock every thread of the process reads: a calibrated TSC where
//! the CPU has an invariant one, `CLOCK_MONOTONIC` otherwise, chosen once
//! at start-up and named in the report.
//!
//! Times are nanoseconds on (about) the `CLOCK_MONOTONIC` scale: a TSC
//! reading goes through one [`Conversion`] (`base_ns + (tsc − base_raw) ×
//! scale`). All threads of a process therefore share one clock (DESIGN R5:
//! the timestamped form). At start each process scales the TSC by quanta's
//! calibration (`tsc`): processes of one machine then read nearly, not
//! exactly, the same clock. A backend that can agree on one conversion
//! across processes (the MPI interposer, at `MPI_Init`: the node's first
//! rank calibrates and every rank of the node installs the same numbers)
//! switches to it with [`Clock::switch_to`] (`tsc_node`): raw `rdtsc`
//! values are then converted identically in every process of the node,
//! so their times are directly comparable. The switch never makes the
//! clock go back: the new conversion is offset by at least how far the
//! old one was ahead (see [`Clock::gap`]); the kernel's TSC-synchronised
//! clock source is required ([`Clock::shareable`]).

use core::sync::atomic::{AtomicPtr, Ordering};

/// Which source the clock reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    /// The CPU's time-stamp counter, scaled by this process's calibration
    /// (quanta; about 8 ns a read here).
    Tsc,
    /// The TSC through one conversion shared by every process of a node
    /// (installed by [`Clock::switch_to`]; as cheap as [`ClockKind::Tsc`]).
    /// As a configured choice (`HEISEN_CLOCK=tsc-node`) it starts as
    /// [`ClockKind::Tsc`] until a backend installs the node's conversion.
    NodeTsc,
    /// `clock_gettime(CLOCK_MONOTONIC)` (about 16 ns a read here).
    Monotonic,
}

impl ClockKind {
    /// The name written in the report header.
    pub fn name(self) -> &'static str {
        match self {
            ClockKind::Tsc => "tsc",
            ClockKind::NodeTsc => "tsc_node",
            ClockKind::Monotonic => "clock_monotonic",
        }
    }
}

/// A TSC conversion: `ns = base_ns + ((raw − base_raw) × scale) >>`
/// `SCALE_SHIFT` (a raw value before `base_raw` reads as `base_ns`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conversion {
    /// TSC reading at `base_ns`.
    pub base_raw: u64,
    /// Nanoseconds at `base_raw`.
    pub base_ns: u64,
    /// ns per 2^`SCALE_SHIFT` ticks.
    pub scale: u64,
}

impl Conversion {
    /// The time of TSC reading `raw`.
    #[inline(always)]
    pub fn at(&self, raw: u64) -> u64 {
        let ticks = raw.saturating_sub(self.base_raw);
        self.base_ns + ((u128::from(ticks) * u128::from(self.scale)) >> SCALE_SHIFT) as u64
    }

    /// The conversion through two samples of the TSC against
    /// `CLOCK_MONOTONIC`, based at the later one; `None` when they do not
    /// span a positive interval on both clocks.
    pub fn through(first: Sample, second: Sample) -> Option<Conversion> {
        let ticks = second.raw.checked_sub(first.raw).filter(|&t| t > 0)?;
        let ns = second.ns.checked_sub(first.ns).filter(|&n| n > 0)?;
        let scale = (u128::from(ns) << SCALE_SHIFT) / u128::from(ticks);
        Some(Conversion {
            base_raw: second.raw,
            base_ns: second.ns,
            scale: u64::try_from(scale).ok()?,
        })
    }
}

/// One reading of `CLOCK_MONOTONIC` bracketed by two TSC readings: `raw`
/// is their midpoint, `width` how many ticks apart they were (the
/// sample's uncertainty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// TSC at `ns` (the bracket's midpoint).
    pub raw: u64,
    /// `CLOCK_MONOTONIC` in ns.
    pub ns: u64,
    /// Ticks between the bracketing TSC reads.
    pub width: u64,
}

impl Sample {
    /// The narrowest of `tries` bracketed readings.
    pub fn take(tries: usize) -> Sample {
        let mut best = Sample {
            raw: 0,
            ns: 0,
            width: u64::MAX,
        };
        for _ in 0..tries.max(1) {
            let a = read_tsc_ordered();
            let ns = monotonic_ns();
            let b = read_tsc_ordered();
            let width = b.saturating_sub(a);
            if width < best.width {
                best = Sample {
                    raw: a + width / 2,
                    ns,
                    width,
                };
            }
        }
        best
    }
}

/// What the clock reads now.
#[derive(Clone, Copy, Debug)]
struct State {
    kind: ClockKind,
    conversion: Conversion,
    /// The hot read is `rdtsc` and `conversion` (a TSC kind and
    /// [`Clock::direct`]): one flag, so that `now` tests one byte of the
    /// state it loads anyway instead of the kind and the clock's flag.
    direct_tsc: bool,
}

/// The process clock.
#[derive(Debug)]
pub struct Clock {
    /// The state in use: replaced whole (never freed: a thread may still
    /// read the old one) when a node's conversion is installed.
    state: AtomicPtr<State>,
    tsc: quanta::Clock,
    /// Whether quanta's raw value is the TSC itself, so that the clock may
    /// read the counter directly: the hot read is then `rdtsc`, a
    /// subtraction and a multiplication, with no call into quanta.
    direct: bool,
    /// A bracketed TSC/`CLOCK_MONOTONIC` sample taken at start: the first
    /// point of a node calibration ([`Clock::start_sample`]).
    start: Sample,
}

impl Clock {
    /// Chooses the source: `HEISEN_CLOCK=monotonic` forces the monotonic
    /// clock; otherwise the TSC where the CPU says it is invariant.
    pub fn new(forced: Option<ClockKind>) -> Clock {
        let kind = match forced {
            Some(ClockKind::NodeTsc) | None => {
                if invariant_tsc() {
                    ClockKind::Tsc
                } else {
                    ClockKind::Monotonic
                }
            }
            Some(k) => k,
        };
        let tsc = quanta::Clock::new();
        let start = Sample::take(16);
        let (scale, direct) = direct_scale(&tsc);
        let conversion = if direct {
            Conversion {
                base_raw: start.raw,
                base_ns: start.ns,
                scale,
            }
        } else {
            // quanta's own raw units (see `now`)
            Conversion {
                base_raw: tsc.raw(),
                base_ns: monotonic_ns(),
                scale,
            }
        };
        let direct_tsc = direct && matches!(kind, ClockKind::Tsc | ClockKind::NodeTsc);
        let state = Box::leak(Box::new(State {
            kind,
            conversion,
            direct_tsc,
        }));
        Clock {
            state: AtomicPtr::new(state),
            tsc,
            direct,
            start,
        }
    }

    #[inline(always)]
    fn state(&self) -> &State {
        // SAFETY: every state is leaked at creation, never freed.
        #[allow(unsafe_code)] // reason: a pointer to a leaked, immutable state
        unsafe {
            &*self.state.load(Ordering::Acquire)
        }
    }

    /// The source in use.
    pub fn kind(&self) -> ClockKind {
        self.state().kind
    }

    /// Nanoseconds on the monotonic scale.
    #[inline]
    pub fn now(&self) -> u64 {
        let s = self.state();
        if s.direct_tsc {
            return s.conversion.at(read_tsc());
        }
        match s.kind {
            ClockKind::Tsc | ClockKind::NodeTsc => {
                let raw = self.tsc.raw();
                s.conversion.base_ns + self.tsc.delta_as_nanos(s.conversion.base_raw, raw)
            }
            ClockKind::Monotonic => monotonic_ns(),
        }
    }

    /// Whether this process may share one TSC conversion with the other
    /// processes of its machine: the clock reads the TSC directly, the CPU
    /// says the TSC is invariant (constant rate in every power state), and
    /// the kernel itself keeps `CLOCK_MONOTONIC` on the TSC (its clock
    /// source is `tsc`, which it only chooses when the TSCs of all CPUs
    /// passed its synchronisation check).
    pub fn shareable(&self) -> bool {
        self.direct
            && matches!(self.kind(), ClockKind::Tsc | ClockKind::NodeTsc)
            && invariant_tsc()
            && kernel_clocksource_is_tsc()
    }

    /// The sample taken when the clock was made (a node calibration's
    /// first point: the longer before the second, the better the scale).
    pub fn start_sample(&self) -> Sample {
        self.start
    }

    /// How far this clock is ahead of `conversion` now, in ns (negative:
    /// behind): both read at one TSC reading where the clock reads the TSC,
    /// else against `CLOCK_MONOTONIC` read between two TSC readings.
    pub fn gap(&self, conversion: &Conversion) -> i64 {
        let s = self.state();
        let (ours, theirs) = if s.kind == ClockKind::Monotonic {
            let sample = Sample::take(8);
            (sample.ns, conversion.at(sample.raw))
        } else if self.direct {
            let raw = read_tsc_ordered();
            (s.conversion.at(raw), conversion.at(raw))
        } else {
            (self.now(), conversion.at(read_tsc_ordered()))
        };
        ours as i64 - theirs as i64
    }

    /// Installs `conversion` as the clock ([`ClockKind::NodeTsc`]) and
    /// returns how far the clock was ahead of it at that moment (a
    /// positive excess: times read before the switch may be later than
    /// the first ones after it, by at most that much; each thread's clamp
    /// to its last event keeps its own events in order). The caller
    /// offsets `conversion` by at least [`Clock::gap`] beforehand so the
    /// excess is not positive. Refused (`false`) where the clock is not
    /// [`Clock::shareable`].
    pub fn switch_to(&self, conversion: Conversion) -> Option<i64> {
        if !self.shareable() {
            return None;
        }
        let excess = self.gap(&conversion);
        let state = Box::leak(Box::new(State {
            kind: ClockKind::NodeTsc,
            conversion,
            direct_tsc: true, // shareable: the clock reads the TSC directly
        }));
        self.state.store(state, Ordering::Release);
        Some(excess)
    }

    /// The conversion in use.
    pub fn conversion(&self) -> Conversion {
        self.state().conversion
    }
}

/// Bits of [`Clock`]'s fixed-point scale.
const SCALE_SHIFT: u32 = 40;

/// quanta's scale as a fixed-point factor (ns per 2^[`SCALE_SHIFT`] raw
/// units), and whether quanta's raw value is the TSC, so that the clock
/// may read the counter itself: a TSC read taken between two of quanta's
/// raw reads falls between them only when quanta reads the TSC too (its
/// fallback reads nanoseconds of the monotonic clock, a different scale).
fn direct_scale(tsc: &quanta::Clock) -> (u64, bool) {
    let scale = tsc.delta_as_nanos(1, 1 + (1u64 << SCALE_SHIFT));
    let before = tsc.raw();
    let ours = read_tsc();
    let after = tsc.raw();
    let direct = cfg!(target_arch = "x86_64") && before <= ours && ours <= after;
    (scale, direct)
}

/// The TSC read after every earlier instruction finished (`lfence` first,
/// as the kernel's vDSO reads it): for samples against another clock.
#[inline(always)]
fn read_tsc_ordered() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `lfence` has no preconditions on x86-64 (SSE2 is baseline).
        #[allow(unsafe_code)] // reason: the intrinsic is declared unsafe
        unsafe {
            core::arch::x86_64::_mm_lfence();
        }
    }
    read_tsc()
}

/// The CPU's time-stamp counter (0 where there is none: never used then).
#[inline(always)]
fn read_tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` has no preconditions on x86-64 (every such CPU
        // has it; quanta reads it the same way).
        #[allow(unsafe_code)] // reason: the intrinsic is declared unsafe
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Whether this machine's processes could share one TSC conversion (see
/// [`Clock::shareable`], which also checks the clock reads the TSC).
pub fn tsc_shareable() -> bool {
    cfg!(target_arch = "x86_64") && invariant_tsc() && kernel_clocksource_is_tsc()
}

/// Whether the kernel's clock source is the TSC (Linux: it is chosen only
/// after the TSCs of all CPUs passed the kernel's synchronisation checks,
/// so one conversion fits every core).
fn kernel_clocksource_is_tsc() -> bool {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .is_ok_and(|s| s.trim() == "tsc")
}

/// `CLOCK_MONOTONIC` in nanoseconds, read with `clock_gettime` directly
/// (not through `std::time::Instant`, whose arithmetic cost about a third
/// as much again per read here).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC exists on
    // every Linux.
    #[allow(unsafe_code)] // reason: the libc call that reads the clock
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// Whether the CPU's TSC runs at a constant rate in every power state
/// (CPUID leaf 0x8000_0007, EDX bit 8), so that one scale fits the run.
#[cfg(target_arch = "x86_64")]
fn invariant_tsc() -> bool {
    let max = core::arch::x86_64::__cpuid(0x8000_0000).eax;
    if max < 0x8000_0007 {
        return false;
    }
    let edx = core::arch::x86_64::__cpuid(0x8000_0007).edx;
    edx & (1 << 8) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn invariant_tsc() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sources_are_monotonic_and_on_one_scale() {
        for kind in [ClockKind::Tsc, ClockKind::Monotonic] {
            let clock = Clock::new(Some(kind));
            let a = clock.now();
            let b = clock.now();
            assert!(b >= a, "{kind:?}: {b} < {a}");
            // Both are based on CLOCK_MONOTONIC: far closer than a
            // millisecond to it right after start-up.
            let m = monotonic_ns();
            assert!(m.abs_diff(b) < 1_000_000, "{kind:?}: {b} vs {m}");
            assert_eq!(clock.kind(), kind);
        }
        assert_eq!(ClockKind::Tsc.name(), "tsc");
        assert_eq!(ClockKind::NodeTsc.name(), "tsc_node");
        // a node clock asked for starts as the process's own TSC clock
        if invariant_tsc() {
            assert_eq!(Clock::new(Some(ClockKind::NodeTsc)).kind(), ClockKind::Tsc);
        }
    }

    #[test]
    fn a_conversion_through_two_samples_reproduces_them() {
        let first = Sample {
            raw: 1_000,
            ns: 5_000,
            width: 0,
        };
        let second = Sample {
            raw: 3_001_000,
            ns: 5_000 + 1_000_000,
            width: 0,
        };
        let c = Conversion::through(first, second).expect("a positive span");
        assert_eq!(c.at(second.raw), second.ns);
        // 3 ticks a ns: 3,000 ticks later is 1,000 ns later (fixed point)
        assert!(c.at(second.raw + 3_000).abs_diff(second.ns + 1_000) <= 1);
        // before the base reads as the base (never earlier)
        assert_eq!(c.at(0), second.ns);
        assert_eq!(Conversion::through(second, first), None);
        assert_eq!(Conversion::through(first, first), None);
    }

    #[test]
    fn switching_to_a_conversion_offset_by_the_gap_never_goes_back() {
        let clock = Clock::new(None);
        if !clock.shareable() {
            // no invariant, kernel-synchronised TSC: nothing to switch to
            let any = Conversion {
                base_raw: 0,
                base_ns: 0,
                scale: 1 << SCALE_SHIFT,
            };
            assert_eq!(clock.switch_to(any), None);
            return;
        }
        let mut c = Conversion::through(clock.start_sample(), Sample::take(16)).expect("span");
        // a conversion deliberately behind the clock by 50 µs: the caller
        // offsets it by the gap, as the MPI interposer does
        c.base_ns -= 50_000;
        let gap = clock.gap(&c);
        assert!(gap >= 49_000, "gap {gap}");
        c.base_ns += gap.unsigned_abs() + 1_000;
        let before = clock.now();
        let excess = clock.switch_to(c).expect("shareable");
        let after = clock.now();
        assert!(excess <= 0, "excess {excess}");
        assert!(after >= before, "{after} < {before}");
        assert_eq!(clock.kind(), ClockKind::NodeTsc);
        assert_eq!(clock.conversion(), c);
        // another process installing the same numbers reads the same
        // time for the same TSC value: one clock
        assert_eq!(c.at(12_345_678_901), clock.conversion().at(12_345_678_901));
    }
}
