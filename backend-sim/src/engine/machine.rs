//! The LogGOPS machine of one location, as LogGOPSim runs it (Hoefler,
//! Schneider, Lumsdaine, HPDC 2010): when its CPU, and its NIC's send and
//! receive sides, are free again. Plain state with one method per event;
//! what an event costs comes from [`crate::transfer`] (pure functions of
//! the message size and the network), and the engine asks a [`Host`]
//! when an operation may start:
//!
//! - a send starts when the CPU and the NIC's send gap are free
//!   ([`Host::cpu_free`], [`Host::send_free`]); it keeps the CPU for
//!   `o + (s-1)O` and the NIC for `g + (s-1)G` ([`Host::on_send`]);
//! - an arrival is handled when the CPU and the NIC's receive gap are
//!   free ([`Host::receive_free`]): CPU `o + max((s-1)O, (s-1)G)`, NIC
//!   `g + (s-1)G` ([`Host::on_receive`]);
//! - a rendezvous send holds the sender until the receiver matches it
//!   ([`Host::on_rendezvous_match`]);
//! - compute and instrumentation keep the CPU ([`Host::on_compute`],
//!   [`Host::on_overhead`]); posting a receive needs no CPU;
//! - an event that finds the CPU or NIC busy is re-inserted at the time
//!   they free up, keeping its place among equal times (the event loop).
//!
//! [`Host`] is one CPU and one NIC, a location of a program; [`Hosts`]
//! the LogGOPS machines of all ranks of a GOAL graph, each with several
//! CPUs and NICs (`cpu N`, `nic N`; LogGOPSim's `nexto`, `nextgs`,
//! `nextgr`), addressed by rank and number.

use crate::transfer::MessageCost;

use super::options::SimError;

/// When one location's CPU and NIC are free (simulated ns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Host {
    cpu_free: u64,
    send_nic_free: u64,
    recv_nic_free: u64,
}

impl Host {
    /// When the CPU is free.
    #[inline]
    pub(super) fn cpu_free(&self) -> u64 {
        self.cpu_free
    }

    /// When the NIC may start another send (LogGOPS `g + (s-1)G` after
    /// the previous one).
    #[inline]
    pub(super) fn send_free(&self) -> u64 {
        self.send_nic_free
    }

    /// When an arrival can be handled: the CPU and the NIC's receive side
    /// are both free (LogGOPSim's OP_MSG).
    #[inline]
    pub(super) fn receive_free(&self) -> u64 {
        self.cpu_free.max(self.recv_nic_free)
    }

    /// CPU work of `ns` from `now`, when the CPU is free at `now`.
    #[inline]
    pub(super) fn on_compute(&mut self, now: u64, ns: u64) {
        self.cpu_free = now + ns;
    }

    /// A send starts at `now` (CPU and NIC free): the CPU is busy for
    /// `o + (s-1)O`, the NIC's send side for `g + (s-1)G`.
    #[inline]
    pub(super) fn on_send(&mut self, now: u64, cost: &MessageCost) {
        self.cpu_free = now + cost.send_cpu;
        self.send_nic_free = now + cost.send_gap;
    }

    /// An arrival is handled at `now` (CPU and receive side free): the CPU
    /// is busy for `o + max((s-1)O, (s-1)G)`, the NIC for `g + (s-1)G`.
    #[inline]
    pub(super) fn on_receive(&mut self, now: u64, cost: &MessageCost) {
        self.cpu_free = now + cost.recv_cpu;
        self.recv_nic_free = now + cost.recv_gap;
    }

    /// A rendezvous send of this location is matched at `now`: LogGOPSim
    /// holds the sender's CPU and NIC until then.
    pub(super) fn on_rendezvous_match(&mut self, now: u64) {
        self.cpu_free = self.cpu_free.max(now);
        self.send_nic_free = self.send_nic_free.max(now);
    }

    /// Instrumentation work of `cost` from `from` on, after whatever keeps
    /// the CPU busy (R1: it takes CPU time like any work); returns when it
    /// starts.
    #[inline]
    pub(super) fn on_overhead(&mut self, from: u64, cost: u64) -> u64 {
        let start = self.cpu_free.max(from);
        self.cpu_free = start + cost;
        start
    }

    /// A spawned thread starts at `at`: its CPU is free from then on.
    #[inline]
    pub(super) fn on_start(&mut self, at: u64) {
        self.cpu_free = at;
    }

    /// The location cannot go on before `at`: a merge ended then, a
    /// collective's data left, a thread was started or ended.
    #[inline]
    pub(super) fn on_resume(&mut self, at: u64) {
        self.cpu_free = self.cpu_free.max(at);
    }
}

/// The CPUs and NICs of every rank of a GOAL graph, all free at 0
/// (docs/goal.md G3, G6). One rank's free times sit side by side — its
/// CPUs, then each NIC's send and receive sides — so that an event, which
/// reads a CPU and a NIC of one rank, touches one cache line of a large
/// run instead of three.
#[derive(Clone, Debug)]
pub(super) struct Hosts {
    cpus: usize,
    /// Free times per rank: `cpus + 2 * nics`.
    stride: usize,
    free: Vec<u64>,
    /// LogGOPSim as released: times are added wrapping (A2).
    released: bool,
}

/// `a + b`, or an error when simulated time would pass 2^64 ns.
#[inline]
fn later(a: u64, b: u64) -> Result<u64, SimError> {
    a.checked_add(b).ok_or_else(|| {
        SimError::Program(format!(
            "simulated time passes {} ns (check the parameters and sizes)",
            u64::MAX
        ))
    })
}

impl Hosts {
    /// `ranks` ranks of `cpus` CPUs and `nics` NICs each.
    pub(super) fn new(ranks: usize, cpus: usize, nics: usize, released: bool) -> Self {
        let stride = cpus + 2 * nics;
        Hosts {
            cpus,
            stride,
            free: vec![0; ranks * stride],
            released,
        }
    }

    /// `now + charge`. As released, added wrapping as LogGOPSim's
    /// `uint64_t` clock: a 0-byte message's charge may be "negative"
    /// (A2), and a free time below 0 wraps to about 2^64, where LogGOPSim
    /// puts the waiting operation back and, from there, wraps its clock
    /// to small times again.
    #[inline]
    fn charge(&self, now: u64, charge: u64) -> Result<u64, SimError> {
        if self.released {
            Ok(now.wrapping_add(charge))
        } else {
            later(now, charge)
        }
    }

    /// Index of CPU `cpu` of `rank`.
    #[inline]
    fn c(&self, rank: u32, cpu: u8) -> usize {
        rank as usize * self.stride + usize::from(cpu)
    }

    /// Index of the send side of NIC `nic` of `rank`; its receive side
    /// follows.
    #[inline]
    fn n(&self, rank: u32, nic: u8) -> usize {
        rank as usize * self.stride + self.cpus + 2 * usize::from(nic)
    }

    /// When CPU `cpu` of `rank` is free.
    #[inline]
    pub(super) fn cpu_free(&self, rank: u32, cpu: u8) -> u64 {
        self.free[self.c(rank, cpu)]
    }

    /// When a send on `cpu` and `nic` may start (LogGOPSim's
    /// `max(nexto, nextgs)`).
    #[inline]
    pub(super) fn send_free(&self, rank: u32, cpu: u8, nic: u8) -> u64 {
        self.cpu_free(rank, cpu).max(self.free[self.n(rank, nic)])
    }

    /// When an arrival may be handled on `cpu` and `nic` (`max(nexto, nextgr)`).
    #[inline]
    pub(super) fn receive_free(&self, rank: u32, cpu: u8, nic: u8) -> u64 {
        self.cpu_free(rank, cpu)
            .max(self.free[self.n(rank, nic) + 1])
    }

    /// A calc of `ns` starts at `now`; returns its end.
    #[inline]
    pub(super) fn on_compute(
        &mut self,
        rank: u32,
        cpu: u8,
        now: u64,
        ns: u64,
    ) -> Result<u64, SimError> {
        let end = self.charge(now, ns)?;
        let c = self.c(rank, cpu);
        self.free[c] = end;
        Ok(end)
    }

    /// A send starts at `now`: CPU `o + (s-1)O`, NIC `g + (s-1)G`.
    #[inline]
    pub(super) fn on_send(
        &mut self,
        rank: u32,
        cpu: u8,
        nic: u8,
        now: u64,
        cost: &MessageCost,
    ) -> Result<(), SimError> {
        let (c, n) = (self.c(rank, cpu), self.n(rank, nic));
        self.free[c] = self.charge(now, cost.send_cpu)?;
        self.free[n] = self.charge(now, cost.send_gap)?;
        Ok(())
    }

    /// An arrival is handled at `now`: CPU `o + max((s-1)O, (s-1)G)`, NIC
    /// `g + (s-1)G`; returns when the CPU is free again.
    #[inline]
    pub(super) fn on_receive(
        &mut self,
        rank: u32,
        cpu: u8,
        nic: u8,
        now: u64,
        cost: &MessageCost,
    ) -> Result<u64, SimError> {
        let (c, n) = (self.c(rank, cpu), self.n(rank, nic));
        self.free[c] = self.charge(now, cost.recv_cpu)?;
        self.free[n + 1] = self.charge(now, cost.recv_gap)?;
        Ok(self.free[c])
    }

    /// A rendezvous send of `rank` is matched at `now`: CPU `cpu` and the
    /// send side of NIC `nic` are busy until then at least.
    pub(super) fn on_rendezvous_match(&mut self, rank: u32, cpu: u8, nic: u8, now: u64) {
        let (c, n) = (self.c(rank, cpu), self.n(rank, nic));
        self.free[c] = self.free[c].max(now);
        self.free[n] = self.free[n].max(now);
    }

    /// The end of `rank`: its latest CPU free time (NICs do not count, G11).
    pub(super) fn end(&self, rank: u32) -> u64 {
        let c = self.c(rank, 0);
        self.free[c..c + self.cpus]
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transfer::{LogGops, Network};

    /// LogGOPSim's defaults (L=2500, o=1500, g=1000, G=6, O=0).
    fn loggops(bytes: u64) -> MessageCost {
        Network::LogGops(LogGops::default()).message(bytes)
    }

    mod sender {
        use super::*;

        #[test]
        fn second_send_waits_for_the_gap_not_the_cpu() {
            // 1 byte: CPU o = 1500, NIC g = 1000, so the CPU is the later.
            let mut h = Host::default();
            h.on_send(0, &loggops(1));
            assert_eq!((h.cpu_free(), h.send_free()), (1500, 1000));
            // 1,001 bytes: NIC g + 1000 G = 7000 outlasts o = 1500.
            let mut h = Host::default();
            h.on_send(0, &loggops(1001));
            assert_eq!((h.cpu_free(), h.send_free()), (1500, 7000));
            assert_eq!(h.receive_free(), 1500, "the receive side is free");
        }

        #[test]
        fn rendezvous_match_holds_cpu_and_nic_until_then() {
            let mut h = Host::default();
            h.on_send(0, &loggops(1));
            h.on_rendezvous_match(9000);
            assert_eq!((h.cpu_free(), h.send_free()), (9000, 9000));
            h.on_rendezvous_match(100);
            assert_eq!(h.cpu_free(), 9000, "an earlier match changes nothing");
        }
    }

    mod receiver {
        use super::*;

        #[test]
        fn arrival_keeps_cpu_o_plus_the_larger_per_byte_and_nic_g() {
            // 10 bytes: CPU o + max(9 O, 9 G) = 1554, NIC g + 9 G = 1054.
            let mut h = Host::default();
            h.on_receive(4000, &loggops(10));
            assert_eq!(h.cpu_free(), 5554);
            assert_eq!(h.receive_free(), 5554);
            assert_eq!(h.send_free(), 0, "the send side is free");
        }
    }

    mod hosts {
        use super::*;

        /// Each rank's CPUs and each NIC's two sides are separate free
        /// times, though a rank's sit side by side.
        #[test]
        fn every_cpu_and_nic_side_of_every_rank_is_its_own() {
            let mut h = Hosts::new(3, 2, 2, false);
            let cost = loggops(1);
            h.on_send(1, 1, 1, 100, &cost).unwrap();
            h.on_receive(1, 0, 0, 50, &loggops(10)).unwrap();
            assert_eq!(h.on_compute(2, 1, 7, 3).unwrap(), 10);
            // Rank 1: CPU 1 and NIC 1's send side from the send; CPU 0 and
            // NIC 0's receive side from the arrival.
            assert_eq!(h.cpu_free(1, 1), 1600);
            assert_eq!(h.send_free(1, 1, 1), 1600);
            assert_eq!(h.send_free(1, 0, 1), 1604, "CPU 0 after the arrival");
            assert_eq!(h.receive_free(1, 1, 1), 1600, "NIC 1 receives freely");
            assert_eq!(h.receive_free(1, 1, 0), 1600);
            assert_eq!(h.cpu_free(1, 0), 1604);
            assert_eq!((h.end(0), h.end(1), h.end(2)), (0, 1604, 10));
            h.on_rendezvous_match(0, 1, 1, 900);
            assert_eq!((h.cpu_free(0, 1), h.send_free(0, 0, 1)), (900, 900));
            assert_eq!((h.cpu_free(0, 0), h.receive_free(0, 0, 1)), (0, 0));
        }
    }

    mod cpu {
        use super::*;

        #[test]
        fn overhead_queues_behind_work_and_resume_never_goes_back() {
            let mut h = Host::default();
            h.on_compute(100, 400);
            assert_eq!(h.on_overhead(200, 50), 500, "starts after the compute");
            assert_eq!(h.cpu_free(), 550);
            assert_eq!(h.on_overhead(1000, 50), 1000, "starts when asked");
            h.on_resume(900);
            assert_eq!(h.cpu_free(), 1050);
            h.on_resume(2000);
            assert_eq!(h.cpu_free(), 2000);
        }
    }
}
