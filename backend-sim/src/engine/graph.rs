//! The compiled form of a GOAL schedule as a dependency graph, the input
//! of the graph executor ([`super::goal_loop`]): every rank's operations
//! in file order (their *offset*, LogGOPSim's `Graph::addNode`), and for
//! each operation the operations that wait for its completion
//! (`requires`) and for its start (`irequires`), in the order of the
//! dependency lines in the file (docs/goal.md G1, G2). One flat array over
//! all ranks: about 36 bytes per operation and 4 per dependency.

/// Any source or any tag (LogGOPSim's `ANY_SOURCE`/`ANY_TAG`, `-1` read
/// as 32 bits).
pub const ANY: u32 = u32::MAX;

/// What an operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpKind {
    /// Sends `size` bytes to `peer`. Ordered first among operations made
    /// ready together (LogGOPSim's `OP_SEND` 1 < `OP_RECV` 2 < `OP_LOCOP` 3).
    Send,
    /// Receives from `peer` (or [`ANY`]).
    Recv,
    /// Keeps its CPU for `size` ns.
    Calc,
}

/// One operation of a rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphOp {
    /// Bytes of a message, ns of a calc.
    pub size: u64,
    /// Destination of a send, source of a receive ([`ANY`]); unused by a calc.
    pub peer: u32,
    /// Tag ([`ANY`] matches every tag, on either side).
    pub tag: u32,
    /// Its kind.
    pub kind: OpKind,
    /// The CPU it runs on.
    pub cpu: u8,
    /// The NIC a send or receive uses.
    pub nic: u8,
}

impl GraphOp {
    /// A calc of `ns` nanoseconds on CPU `cpu`.
    pub fn calc(ns: u64, cpu: u8) -> GraphOp {
        GraphOp {
            size: ns,
            peer: 0,
            tag: 0,
            kind: OpKind::Calc,
            cpu,
            nic: 0,
        }
    }
}

/// An operation as the graph keeps it: a [`GraphOp`] and its rank, in
/// 24 bytes (the rank fills the padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Node {
    pub(super) size: u64,
    pub(super) peer: u32,
    pub(super) tag: u32,
    pub(super) rank: u32,
    pub(super) kind: OpKind,
    pub(super) cpu: u8,
    pub(super) nic: u8,
}

/// A dependency line of a rank: `dependent requires dependency`
/// (`start: false`) or `dependent irequires dependency` (`start: true`),
/// operations numbered within the rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The operation that waits.
    pub dependent: u32,
    /// The operation it waits for.
    pub dependency: u32,
    /// It waits for the start, not the completion.
    pub start: bool,
}

/// A whole schedule as a graph (built rank by rank with [`Graph::add_rank`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Graph {
    /// Every operation, rank after rank.
    pub(super) ops: Vec<Node>,
    /// First operation of each rank, then the number of operations.
    pub(super) first: Vec<u32>,
    /// Unmet dependencies of each operation at the start.
    pub(super) unmet: Vec<u32>,
    /// Per operation `i`: its completion dependents are
    /// `dependents[lists[2i]..lists[2i+1]]`, its start dependents
    /// `dependents[lists[2i+1]..lists[2i+2]]` (global operation numbers).
    pub(super) lists: Vec<u32>,
    pub(super) dependents: Vec<u32>,
    /// One more than the largest CPU and NIC number used (G3).
    pub(super) cpus: usize,
    pub(super) nics: usize,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Graph {
            first: vec![0],
            lists: vec![0],
            cpus: 1,
            nics: 1,
            ..Graph::default()
        }
    }

    /// Appends the next rank: its operations in file order and its
    /// dependency lines in file order. Fails on an edge naming an
    /// operation that the rank does not have, or on too many operations.
    pub fn add_rank(&mut self, ops: &[GraphOp], edges: &[Edge]) -> Result<(), String> {
        let base = self.ops.len();
        let rank = (self.first.len() - 1) as u32;
        let n = ops.len();
        if base + n >= u32::MAX as usize {
            return Err("more than 4294967294 operations".into());
        }
        if let Some(e) = edges
            .iter()
            .find(|e| e.dependent as usize >= n || e.dependency as usize >= n)
        {
            return Err(format!(
                "rank {rank}: a dependency names operation {e:?} beyond the rank"
            ));
        }
        for op in ops {
            self.cpus = self.cpus.max(usize::from(op.cpu) + 1);
            if op.kind != OpKind::Calc {
                self.nics = self.nics.max(usize::from(op.nic) + 1);
            }
        }
        self.ops.extend(ops.iter().map(|o| Node {
            size: o.size,
            peer: o.peer,
            tag: o.tag,
            rank,
            kind: o.kind,
            cpu: o.cpu,
            nic: o.nic,
        }));
        self.unmet.extend(core::iter::repeat_n(0, n));
        // Counting sort of the edges by (dependency, completion before
        // start), stable: each list keeps the order of the lines.
        let mut count = vec![0u32; 2 * n];
        for e in edges {
            count[2 * e.dependency as usize + usize::from(e.start)] += 1;
            self.unmet[base + e.dependent as usize] += 1;
        }
        let start = self.dependents.len();
        let mut next = Vec::with_capacity(2 * n);
        let mut at = start as u32;
        for c in &count {
            next.push(at);
            at += c;
            self.lists.push(at);
        }
        self.dependents.resize(at as usize, 0);
        for e in edges {
            let slot = &mut next[2 * e.dependency as usize + usize::from(e.start)];
            self.dependents[*slot as usize] = (base as u32) + e.dependent;
            *slot += 1;
        }
        self.first.push((base + n) as u32);
        Ok(())
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.first.len() - 1
    }

    /// Operations over all ranks.
    pub fn operations(&self) -> usize {
        self.ops.len()
    }

    /// The global numbers of rank `r`'s operations.
    pub(super) fn rank_ops(&self, r: usize) -> core::ops::Range<u32> {
        self.first[r]..self.first[r + 1]
    }

    /// Unmet dependencies of `op` before the run (each dependency line
    /// counts once).
    pub fn unmet_at_start(&self, op: u32) -> u32 {
        self.unmet[op as usize]
    }

    /// The operations waiting for `op`'s completion (`start: false`) or start.
    #[inline]
    pub fn waiting_for(&self, op: u32, start: bool) -> &[u32] {
        let i = 2 * op as usize + usize::from(start);
        &self.dependents[self.lists[i] as usize..self.lists[i + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calc(ns: u64, cpu: u8) -> GraphOp {
        GraphOp::calc(ns, cpu)
    }

    #[test]
    fn lists_keep_the_order_of_the_lines_and_count_twice() {
        let mut g = Graph::new();
        g.add_rank(&[calc(1, 0)], &[]).unwrap();
        let edges = [
            Edge {
                dependent: 2,
                dependency: 0,
                start: false,
            },
            Edge {
                dependent: 1,
                dependency: 0,
                start: false,
            },
            Edge {
                dependent: 1,
                dependency: 0,
                start: true,
            },
            Edge {
                dependent: 2,
                dependency: 0,
                start: false,
            },
        ];
        g.add_rank(&[calc(1, 0), calc(2, 3), calc(3, 0)], &edges)
            .unwrap();
        assert_eq!((g.ranks(), g.operations(), g.cpus, g.nics), (2, 4, 4, 1));
        assert_eq!((g.ops[0].rank, g.ops[3].rank), (0, 1));
        assert_eq!(core::mem::size_of::<Node>(), 24);
        assert_eq!(g.rank_ops(1), 1..4);
        assert_eq!(g.waiting_for(1, false), &[3, 2, 3]);
        assert_eq!(g.waiting_for(1, true), &[2]);
        assert!(g.waiting_for(0, false).is_empty());
        assert_eq!(g.unmet, vec![0, 0, 2, 2]);
        let bad = [Edge {
            dependent: 5,
            dependency: 0,
            start: false,
        }];
        assert!(g.add_rank(&[calc(1, 0)], &bad).is_err());
    }
}
