//! Transfer models: LogGOPS as LogGOPSim defines it (Hoefler, Schneider,
//! Lumsdaine, HPDC 2010), and the contention-free model that the kernel
//! knows exactly ([`TransferModel`], LogGOPS with `g = 0`, R5 case m.2).

use heisen_core::TransferModel;

/// Simulated time beyond which a run stops with the engine's
/// `SimError::Limit`: no sum of two in-range times (`MAX_TIME`, per-byte
/// costs times `MAX_BYTES`, all below 2^61 ns) past it can overflow `u64`.
pub const MAX_CLOCK: u64 = 1 << 62;

/// LogGOPS parameters, in ns (`G` and `O` per byte).
///
/// LogGOPSim's rules, which the engine follows:
/// - a send starts when the CPU (`o`) and the NIC's send gap are free; it
///   keeps the CPU for `o + (s-1)O` and the NIC for `g + (s-1)G`; its first
///   byte reaches the receiver `o + L` after the start;
/// - the receiver handles an arrival when its CPU and NIC receive gap are
///   free: CPU `o + max((s-1)O, (s-1)G)`, NIC `g + (s-1)G`;
/// - `s <= S` is eager (the send completes locally); above `S` it is
///   rendezvous: the send completes when the receiver matches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogGops {
    /// Latency `L`.
    pub latency: u64,
    /// CPU overhead per message `o`.
    pub overhead: u64,
    /// Gap between messages `g`.
    pub gap: u64,
    /// Gap per byte `G`.
    pub gap_per_byte: u64,
    /// CPU overhead per byte `O`.
    pub overhead_per_byte: u64,
    /// Eager/rendezvous threshold `S` in bytes.
    pub eager_limit: u64,
}

impl Default for LogGops {
    /// LogGOPSim's defaults: L=2500, o=1500, g=1000, G=6, O=0, S=65535.
    fn default() -> Self {
        LogGops {
            latency: 2500,
            overhead: 1500,
            gap: 1000,
            gap_per_byte: 6,
            overhead_per_byte: 0,
            eager_limit: 65535,
        }
    }
}

/// The network a program runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Network {
    /// LogGOPS with CPU overheads and gaps (contention possible).
    LogGops(LogGops),
    /// Latency plus per-byte cost, no CPU overhead, no gaps: the kernel's
    /// model is then exact (DESIGN §4).
    ContentionFree(TransferModel),
}

impl Default for Network {
    fn default() -> Self {
        Network::LogGops(LogGops::default())
    }
}

/// What a message costs where, as the engine applies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageCost {
    /// CPU time of the sender from the start of the send.
    pub send_cpu: u64,
    /// Send NIC busy time from the start.
    pub send_gap: u64,
    /// From the start of the send to the arrival of the first byte.
    pub wire: u64,
    /// Receiver CPU time once the arrival is handled.
    pub recv_cpu: u64,
    /// Receive NIC busy time once the arrival is handled.
    pub recv_gap: u64,
    /// Whether the send completes only when the receiver matches it.
    pub rendezvous: bool,
}

impl Network {
    /// The costs of one `bytes`-long message.
    pub fn message(&self, bytes: u64) -> MessageCost {
        match *self {
            Network::LogGops(p) => {
                // LogGOPSim charges per byte for s-1 bytes.
                let extra = bytes.saturating_sub(1);
                // Saturating: Program::validate bounds every factor, so
                // these never saturate for a validated program.
                let per_o = extra.saturating_mul(p.overhead_per_byte);
                let per_g = extra.saturating_mul(p.gap_per_byte);
                MessageCost {
                    send_cpu: p.overhead.saturating_add(per_o),
                    send_gap: p.gap.saturating_add(per_g),
                    wire: p.overhead.saturating_add(p.latency),
                    recv_cpu: p.overhead.saturating_add(per_o.max(per_g)),
                    recv_gap: p.gap.saturating_add(per_g),
                    rendezvous: bytes > p.eager_limit,
                }
            }
            Network::ContentionFree(m) => MessageCost {
                send_cpu: 0,
                send_gap: 0,
                wire: m.transfer(bytes),
                recv_cpu: 0,
                recv_gap: 0,
                rendezvous: false,
            },
        }
    }

    /// The transfer estimate the kernel gets for a message (R5 case m.2):
    /// from the start of the send to the point where the receiver's
    /// dependency is satisfied, without contention.
    pub fn model(&self, bytes: u64) -> u64 {
        self.message(bytes).wire
    }

    /// Lower bound of a transfer, the copy cost (001 eq. 6).
    pub fn copy(&self, bytes: u64) -> u64 {
        match *self {
            Network::LogGops(_) => 0,
            Network::ContentionFree(m) => m.copy(bytes),
        }
    }

    /// Time from the last entry of a collective to its completion, for
    /// `participants` ranks and `bytes` per rank: `ceil(log2 P)` rounds of
    /// one message (a binomial tree or dissemination), or `P - 1` rounds
    /// for alltoall. A model of the simulator, not of LogGOPSim (which has
    /// no collectives of its own).
    pub fn collective(&self, alltoall: bool, participants: u32, bytes: u64) -> u64 {
        let rounds = if participants <= 1 {
            0
        } else if alltoall {
            u64::from(participants - 1)
        } else {
            u64::from(32 - (participants - 1).leading_zeros())
        };
        let c = self.message(bytes);
        // Saturating, and at most one past the engine's clock bound: the
        // run then stops with a clear error instead of overflowing
        // (`now + time` stays below 2^63).
        rounds
            .saturating_mul(c.wire + c.recv_cpu)
            .min(MAX_CLOCK + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loggops_defaults_are_loggopsims() {
        let c = Network::default().message(1);
        assert_eq!(
            (c.send_cpu, c.send_gap, c.wire, c.recv_cpu, c.recv_gap),
            (1500, 1000, 4000, 1500, 1000)
        );
        assert!(!c.rendezvous);
        assert!(Network::default().message(65536).rendezvous);
    }

    #[test]
    fn contention_free_is_the_kernels_model() {
        let m = TransferModel {
            latency: 100,
            per_byte_ps: 2000,
            copy_per_byte_ps: 0,
        };
        let c = Network::ContentionFree(m).message(10);
        assert_eq!((c.send_cpu, c.wire, c.recv_cpu), (0, 120, 0));
    }

    #[test]
    fn collective_rounds_are_log2_or_p_minus_1() {
        let m = TransferModel {
            latency: 100,
            per_byte_ps: 0,
            copy_per_byte_ps: 0,
        };
        let n = Network::ContentionFree(m);
        assert_eq!(n.collective(false, 8, 0), 300);
        assert_eq!(n.collective(false, 5, 0), 300);
        assert_eq!(n.collective(true, 5, 0), 400);
        assert_eq!(n.collective(false, 1, 0), 0);
    }
}
