//! Calibrated per-action costs that the local overhead rule R1 adds to a
//! location's delay, and the contention-free transfer model of R5 case m.2.
//!
//! Calibration is the backend's job (R1): time N back-to-back actions and
//! divide; separate the part of an enter that falls after its clock read and
//! the part of an exit that falls before its clock read (inside the region's
//! own interval) from the whole cost (inside the parent's interval).

/// The cost of one instrumentation action kind, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(C)]
pub struct Cost {
    /// The whole cost of the action.
    pub whole: u64,
    /// The part of `whole` that falls inside the region's own interval: for
    /// an enter, after its clock read; for an exit, before it (R1).
    pub inside: u64,
}

impl Cost {
    /// A cost of `whole` ns, none of it inside the region.
    pub const fn whole(whole: u64) -> Self {
        Cost { whole, inside: 0 }
    }

    /// The part of `whole` outside the region (`whole - inside`, never below 0).
    #[inline]
    pub const fn outside(&self) -> u64 {
        self.whole.saturating_sub(self.inside)
    }
}

/// Calibrated costs of every action kind the kernel charges (R1).
///
/// Actions other than enter and exit charge their whole cost after their
/// clock read: a send packs the piggyback after reading the release time, a
/// merge unpacks and merges after reading its end, a sample is handled after
/// its interrupt's clock read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(C)]
pub struct Calibration {
    /// Region (or loop) entry.
    pub enter: Cost,
    /// Region (or loop) exit.
    pub exit: Cost,
    /// A release: send, unlock, barrier arrival, enqueue, spawn, thread end.
    pub send: u64,
    /// A merge: receive end, wait completion, acquire, barrier exit, dequeue, join.
    pub merge: u64,
    /// Handling one timer sample (R13 obeys R1).
    pub sample: u64,
}

impl Calibration {
    /// No instrumentation cost at all: the kernel then leaves measured time
    /// as it is (used to compute the truth's critical path directly).
    pub const ZERO: Calibration = Calibration {
        enter: Cost {
            whole: 0,
            inside: 0,
        },
        exit: Cost {
            whole: 0,
            inside: 0,
        },
        send: 0,
        merge: 0,
        sample: 0,
    };
}

/// A contention-free transfer model known to the kernel: latency plus a
/// per-byte cost (LogGOPS with `g = 0`), and the copy cost that bounds a
/// transfer from below (001 eq. 6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(C)]
pub struct TransferModel {
    /// Time from release to arrival of an empty message, in ns.
    pub latency: u64,
    /// Additional time per byte, in picoseconds.
    pub per_byte_ps: u64,
    /// Copy cost per byte at each end, in picoseconds (001: `C(size)`).
    pub copy_per_byte_ps: u64,
}

impl TransferModel {
    /// Estimated transfer time of a `bytes`-long message, in ns.
    #[inline]
    pub const fn transfer(&self, bytes: u64) -> u64 {
        self.latency + bytes.saturating_mul(self.per_byte_ps) / 1000
    }

    /// Lower bound of a transfer: a copy at the sender and one at the
    /// receiver, no network time (001 eq. 6: `2 * C(size) * size`).
    #[inline]
    pub const fn copy(&self, bytes: u64) -> u64 {
        2 * (bytes.saturating_mul(self.copy_per_byte_ps) / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_outside_is_whole_minus_inside() {
        assert_eq!(
            Cost {
                whole: 100,
                inside: 30
            }
            .outside(),
            70
        );
        assert_eq!(
            Cost {
                whole: 10,
                inside: 30
            }
            .outside(),
            0
        );
    }

    #[test]
    fn transfer_model_is_latency_plus_bytes() {
        let m = TransferModel {
            latency: 2500,
            per_byte_ps: 6000,
            copy_per_byte_ps: 250,
        };
        assert_eq!(m.transfer(0), 2500);
        assert_eq!(m.transfer(100), 2500 + 600);
        assert_eq!(m.copy(100), 50);
    }
}
