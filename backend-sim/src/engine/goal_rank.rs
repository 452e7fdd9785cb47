//! The dependency state of every rank of a GOAL graph while it runs, as
//! LogGOPSim keeps it (`SerializedGraph::MarkNodeAsStarted`,
//! `MarkNodeAsDone`, `GetExecutableNodes`): how many dependencies each
//! operation still waits for, the operations that became executable in
//! the current event in the order they did (docs/goal.md G2), and each
//! operation's earliest time, the latest completion of what it
//! `requires` and start of what it `irequires` (the causality guard of
//! the fixed build, A3).

use super::graph::Graph;

/// Per operation: unmet dependencies and earliest time; the operations
/// made executable by the current event.
#[derive(Debug)]
pub(super) struct Deps {
    unmet: Vec<u32>,
    earliest: Vec<u64>,
    /// Operations started so far (an operation starts once).
    started: usize,
    /// Made executable by the current event, in the order they became so.
    fresh: Vec<u32>,
    /// LogGOPSim as released (A4: a send may complete twice).
    released: bool,
}

impl Deps {
    pub(super) fn new(g: &Graph, released: bool) -> Self {
        Deps {
            unmet: g.unmet.clone(),
            // With one CPU per rank the guard never acts (docs/goal.md
            // A3: the CPU free time is already later), and LogGOPSim as
            // released has none: not kept.
            earliest: if g.cpus > 1 && !released {
                vec![0; g.operations()]
            } else {
                Vec::new()
            },
            started: 0,
            fresh: Vec::new(),
            released,
        }
    }

    /// Rank `r`'s roots, in file order (G1), as fresh operations.
    pub(super) fn roots(&mut self, g: &Graph, r: usize) {
        for op in g.rank_ops(r) {
            if self.unmet[op as usize] == 0 {
                self.fresh.push(op);
            }
        }
    }

    /// Releases the operations waiting for `op`'s start (`start`) or
    /// completion, at `t`.
    #[inline]
    fn release(&mut self, g: &Graph, op: u32, start: bool, t: u64) {
        let waiting = g.waiting_for(op, start);
        if waiting.is_empty() {
            return;
        }
        self.release_all(waiting, t);
    }

    /// [`Self::release`] of a non-empty list of dependents.
    #[inline(never)]
    fn release_all(&mut self, waiting: &[u32], t: u64) {
        for &d in waiting {
            let d = d as usize;
            if let Some(e) = self.earliest.get_mut(d) {
                *e = (*e).max(t);
            }
            // Wrapping as LogGOPSim's `uint32_t` count: as released, a send
            // can complete twice (A4), and a dependent already released
            // then wraps (it never becomes executable again). The fixed
            // build never releases a dependent twice.
            debug_assert!(
                self.released || self.unmet[d] > 0,
                "operation {d} released twice"
            );
            self.unmet[d] = self.unmet[d].wrapping_sub(1);
            if self.unmet[d] == 0 {
                self.fresh.push(d as u32);
            }
        }
    }

    /// `op` starts at `t`: its `irequires` dependents are released.
    #[inline]
    pub(super) fn on_start(&mut self, g: &Graph, op: u32, t: u64) {
        self.started += 1;
        self.release(g, op, true, t);
    }

    /// `op` completes at `t`: its `requires` dependents are released.
    #[inline]
    pub(super) fn on_done(&mut self, g: &Graph, op: u32, t: u64) {
        self.release(g, op, false, t);
    }

    /// Puts the operations made executable since the last
    /// [`Self::clear_fresh`] in LogGOPSim's order: by rank, then sends,
    /// receives, calcs, each kind in the order they became executable (a
    /// stable sort, G5 and A1; as released, its unstable sort); then
    /// [`Self::fresh`] lists them and [`Self::earliest`] gives each one's
    /// earliest time.
    #[inline]
    pub(super) fn order_fresh(&mut self, g: &Graph) {
        if self.released {
            return self.order_fresh_released(g);
        }
        if self.fresh.len() > 1 {
            let key = |&op: &u32| (g.ops[op as usize].rank, g.ops[op as usize].kind);
            if self.fresh.windows(2).any(|w| key(&w[0]) > key(&w[1])) {
                self.fresh.sort_by_key(key);
            }
        }
    }

    /// [`Self::order_fresh`] as LogGOPSim as released orders them (A1):
    /// by rank (each rank's list is its own `executableNodes`), then each
    /// rank's operations sorted by kind with libstdc++'s `std::sort`,
    /// which is not stable above 16 operations ([`super::std_sort`]).
    fn order_fresh_released(&mut self, g: &Graph) {
        if self.fresh.len() < 2 {
            return;
        }
        let rank = |op: u32| g.ops[op as usize].rank;
        if self.fresh.windows(2).any(|w| rank(w[0]) > rank(w[1])) {
            self.fresh.sort_by_key(|&op| rank(op));
        }
        let kind_less = |a: &u32, b: &u32| g.ops[*a as usize].kind < g.ops[*b as usize].kind;
        let mut from = 0;
        while from < self.fresh.len() {
            let r = rank(self.fresh[from]);
            let to = from
                + self.fresh[from..]
                    .iter()
                    .take_while(|&&op| rank(op) == r)
                    .count();
            super::std_sort::sort(&mut self.fresh[from..to], &kind_less);
            from = to;
        }
    }

    /// The operations made executable since the last [`Self::clear_fresh`].
    #[inline]
    pub(super) fn fresh(&self) -> &[u32] {
        &self.fresh
    }

    /// Forgets the operations made executable so far (once scheduled).
    #[inline]
    pub(super) fn clear_fresh(&mut self) {
        self.fresh.clear();
    }

    /// `op`'s earliest time: the latest completion of what it requires and
    /// start of what it irequires (0 with one CPU per rank, and as
    /// released, A3).
    #[inline]
    pub(super) fn earliest(&self, op: u32) -> u64 {
        self.earliest.get(op as usize).copied().unwrap_or(0)
    }

    /// Whether every operation started.
    pub(super) fn all_started(&self, g: &Graph) -> bool {
        self.started == g.operations()
    }

    /// Whether `op` still waits for a dependency.
    pub(super) fn waiting(&self, op: u32) -> bool {
        self.unmet[op as usize] > 0
    }
}
