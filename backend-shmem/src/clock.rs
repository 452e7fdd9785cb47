//! The one clock every thread of the process reads: a calibrated TSC where
//! the CPU has an invariant one, `CLOCK_MONOTONIC` otherwise, chosen once
//! at start-up and named in the report.
//!
//! Times are nanoseconds on the `CLOCK_MONOTONIC` scale: the TSC reading
//! is scaled by quanta's calibration and offset to the monotonic clock read
//! at the same moment. All threads of a process therefore share one clock
//! (DESIGN R5: the timestamped form), and processes of one machine read
//! nearly the same clock; the MPI backend measures and carries the
//! residual difference.

use core::time::Duration;
use std::time::Instant;

/// Which source the clock reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    /// The CPU's time-stamp counter, scaled by quanta (about 8 ns a read here).
    Tsc,
    /// `clock_gettime(CLOCK_MONOTONIC)` (about 16 ns a read here).
    Monotonic,
}

impl ClockKind {
    /// The name written in the report header.
    pub fn name(self) -> &'static str {
        match self {
            ClockKind::Tsc => "tsc",
            ClockKind::Monotonic => "clock_monotonic",
        }
    }
}

/// The process clock.
#[derive(Debug)]
pub struct Clock {
    kind: ClockKind,
    tsc: quanta::Clock,
    /// TSC reading at `base_ns`.
    base_raw: u64,
    /// quanta's scale as one fixed-point factor: ns = ticks × `scale` >>
    /// [`SCALE_SHIFT`], read straight from the counter when quanta itself
    /// reads the TSC (`direct`): the hot read is then `rdtsc`, a subtraction
    /// and a multiplication, with no call into quanta.
    scale: u64,
    /// Whether quanta's raw value is the TSC itself (see `scale`).
    direct: bool,
    /// `CLOCK_MONOTONIC` in ns when `base_raw` was read.
    base_ns: u64,
    /// std's monotonic clock at `base_ns`, for the `Monotonic` source.
    base_instant: Instant,
}

impl Clock {
    /// Chooses the source: `HEISEN_CLOCK=monotonic` forces the monotonic
    /// clock; otherwise the TSC where the CPU says it is invariant.
    pub fn new(forced: Option<ClockKind>) -> Clock {
        let kind = forced.unwrap_or(if invariant_tsc() {
            ClockKind::Tsc
        } else {
            ClockKind::Monotonic
        });
        let tsc = quanta::Clock::new();
        let base_instant = Instant::now();
        let base_raw = tsc.raw();
        let (scale, direct) = direct_scale(&tsc);
        let base_ns = monotonic_ns();
        Clock {
            kind,
            tsc,
            base_raw,
            scale,
            direct,
            base_ns,
            base_instant,
        }
    }

    /// The source in use.
    pub fn kind(&self) -> ClockKind {
        self.kind
    }

    /// Nanoseconds on the monotonic scale.
    #[inline]
    pub fn now(&self) -> u64 {
        match self.kind {
            ClockKind::Tsc if self.direct => {
                let ticks = read_tsc().saturating_sub(self.base_raw);
                self.base_ns + ((u128::from(ticks) * u128::from(self.scale)) >> SCALE_SHIFT) as u64
            }
            ClockKind::Tsc => {
                let raw = self.tsc.raw();
                self.base_ns + self.tsc.delta_as_nanos(self.base_raw, raw)
            }
            ClockKind::Monotonic => self.base_ns + duration_ns(self.base_instant.elapsed()),
        }
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

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `CLOCK_MONOTONIC` in nanoseconds.
fn monotonic_ns() -> u64 {
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
            // Both are offset to CLOCK_MONOTONIC: far closer than a
            // millisecond to it right after start-up.
            let m = monotonic_ns();
            assert!(m.abs_diff(b) < 1_000_000, "{kind:?}: {b} vs {m}");
            assert_eq!(clock.kind(), kind);
        }
        assert_eq!(ClockKind::Tsc.name(), "tsc");
    }
}
