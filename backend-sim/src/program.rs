//! The simulated program: locations (ranks and threads) with their
//! operation lists, and the [`ProgramBuilder`] that writes them from Rust.
//!
//! A program is the same for the truth run and the measured run; only the
//! instrumentation cost differs (DESIGN §4). Loops are kept as loops (never
//! unrolled), so a program's size grows with its text, not with the number
//! of iterations it runs.

use heisen_core::Calibration;

use crate::transfer::Network;

/// Index of a location in [`Program::locations`].
pub type LocationId = u32;

/// Where a point-to-point receive takes its message from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A given location.
    Location(LocationId),
    /// Any location (`MPI_ANY_SOURCE`); matched in arrival order (R11).
    Any,
}

/// Where a point-to-point send goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dest {
    /// A given location.
    Location(LocationId),
    /// The source of this location's latest completed receive: a master
    /// answering whichever worker asked (seed 000 §5).
    LastSource,
}

/// A tag; `None` on a receive matches any tag (`MPI_ANY_TAG`).
pub type Tag = Option<u32>;

/// How long a compute operation takes, in ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Duration {
    /// Always the same.
    Fixed(u64),
    /// Uniform in `[low, high]`.
    Uniform {
        /// Smallest value.
        low: u64,
        /// Largest value.
        high: u64,
    },
    /// Normal with the given mean and standard deviation, clipped at 0
    /// (Box-Muller).
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        sd: f64,
    },
    /// Exponential with the given mean.
    Exponential {
        /// Mean.
        mean: f64,
    },
}

/// The collectives of MPI's world communicator; every rank takes part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    /// n-to-n, no data.
    Barrier,
    /// 1-to-n from `root`.
    Bcast,
    /// 1-to-n from `root`, a different part to each.
    Scatter,
    /// n-to-1 to `root`.
    Gather,
    /// n-to-1 to `root` with an operator.
    Reduce,
    /// n-to-n with an operator.
    Allreduce,
    /// n-to-n, every pair.
    Alltoall,
}

impl Collective {
    /// The collective's shape for the merge rules (R6).
    pub fn shape(self) -> Shape {
        match self {
            Collective::Bcast | Collective::Scatter => Shape::OneToN,
            Collective::Gather | Collective::Reduce => Shape::NToOne,
            Collective::Barrier | Collective::Allreduce | Collective::Alltoall => Shape::NToN,
        }
    }

    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Collective::Barrier => "barrier",
            Collective::Bcast => "bcast",
            Collective::Scatter => "scatter",
            Collective::Gather => "gather",
            Collective::Reduce => "reduce",
            Collective::Allreduce => "allreduce",
            Collective::Alltoall => "alltoall",
        }
    }
}

/// Who merges whom in a collective (R6, 000 §4.3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Each receiver merges the root.
    OneToN,
    /// The root merges everybody.
    NToOne,
    /// Everybody merges everybody.
    NToN,
}

/// One operation of a location, with nesting for regions and loops.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// An instrumented code region (a function) around `body`.
    Region {
        /// Region id, an index into [`Program::regions`].
        region: u32,
        /// The operations inside.
        body: Vec<Op>,
    },
    /// `body` repeated `count` times; instrumented as a loop frame.
    Loop {
        /// Loop id, reported to the kernel (R12).
        id: u32,
        /// Iterations.
        count: u64,
        /// The operations of one iteration.
        body: Vec<Op>,
    },
    /// CPU work.
    Compute(Duration),
    /// Blocking send.
    Send {
        /// Destination.
        to: Dest,
        /// Message size.
        bytes: u64,
        /// Tag.
        tag: u32,
    },
    /// Blocking receive.
    Recv {
        /// Source.
        from: Source,
        /// Message size.
        bytes: u64,
        /// Tag, `None` for any.
        tag: Tag,
    },
    /// Nonblocking send, completed by [`Op::Wait`] or [`Op::WaitAll`].
    Isend {
        /// Destination.
        to: Dest,
        /// Message size.
        bytes: u64,
        /// Tag.
        tag: u32,
        /// Request name, local to the location.
        request: u32,
    },
    /// Nonblocking receive.
    Irecv {
        /// Source.
        from: Source,
        /// Message size.
        bytes: u64,
        /// Tag, `None` for any.
        tag: Tag,
        /// Request name, local to the location.
        request: u32,
    },
    /// Waits for one request.
    Wait {
        /// Request name.
        request: u32,
    },
    /// Waits for every outstanding request of the location.
    WaitAll,
    /// A send and a receive that proceed together (`MPI_Sendrecv`).
    Sendrecv {
        /// Destination of the send.
        to: Dest,
        /// Size sent.
        send_bytes: u64,
        /// Source of the receive.
        from: Source,
        /// Size received.
        recv_bytes: u64,
        /// Tag of both.
        tag: u32,
    },
    /// A collective over every rank.
    Collective {
        /// Which one.
        kind: Collective,
        /// Root for 1-to-n and n-to-1 (ignored otherwise).
        root: LocationId,
        /// Bytes per participant.
        bytes: u64,
    },
    /// Acquires a lock.
    Lock {
        /// Lock id.
        lock: u32,
    },
    /// Releases a lock held by this location.
    Unlock {
        /// Lock id.
        lock: u32,
    },
    /// A thread barrier of `count` participants.
    ThreadBarrier {
        /// Barrier id.
        barrier: u32,
        /// Participants per episode.
        count: u32,
    },
    /// Puts one item on a work queue.
    Enqueue {
        /// Queue id.
        queue: u32,
    },
    /// Takes one item from a work queue, waiting if it is empty.
    Dequeue {
        /// Queue id.
        queue: u32,
    },
    /// Starts a thread location (one marked [`LocationSpec::spawned`]).
    Spawn {
        /// The child.
        child: LocationId,
    },
    /// Waits for a spawned location to end.
    Join {
        /// The child.
        child: LocationId,
    },
}

/// Whether a location is an MPI rank or a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A rank: takes part in collectives.
    Rank,
    /// A thread: shares locks, barriers and queues.
    Thread,
}

/// One location of a program.
#[derive(Clone, Debug, PartialEq)]
pub struct LocationSpec {
    /// Display name (`rank 0`, `master`, `worker 3`).
    pub name: String,
    /// Rank or thread.
    pub kind: Kind,
    /// Starts only when another location spawns it.
    pub spawned: bool,
    /// What it does.
    pub body: Vec<Op>,
}

/// A complete program and the conditions it runs under.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Name shown in reports.
    pub name: String,
    /// Region names; a region id indexes this list.
    pub regions: Vec<String>,
    /// The locations.
    pub locations: Vec<LocationSpec>,
    /// Seed of the compute-time distributions.
    pub seed: u64,
    /// The transfer model.
    pub network: Network,
    /// The instrumentation cost of the measured run (R1).
    pub calibration: Calibration,
}

impl Program {
    /// Ids of the locations that are ranks, in order: the collectives' world.
    pub fn ranks(&self) -> Vec<LocationId> {
        self.locations
            .iter()
            .enumerate()
            .filter(|(_, l)| l.kind == Kind::Rank)
            .map(|(i, _)| i as LocationId)
            .collect()
    }

    /// Checks references (locations, regions, requests) so that the engine
    /// never meets an impossible operation. Returns what is wrong and where.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_header()?;
        (0..self.locations.len()).try_for_each(|i| self.validate_location(i))
    }

    /// The checks of [`Self::validate`] that do not read any location's
    /// operations: there are locations, and the network and calibration
    /// are in range.
    pub fn validate_header(&self) -> Result<(), String> {
        if self.locations.is_empty() {
            return Err("the program has no locations".into());
        }
        check_network(&self.network)?;
        let c = &self.calibration;
        for (what, v) in [
            ("calibration enter", c.enter.whole),
            ("calibration exit", c.exit.whole),
            ("calibration send", c.send),
            ("calibration merge", c.merge),
        ] {
            limit(what, v, MAX_TIME)?;
        }
        Ok(())
    }

    /// The checks of [`Self::validate`] for location `i`'s operations (the
    /// other locations' operations are not read: they may have been
    /// compiled and dropped already).
    pub fn validate_location(&self, i: usize) -> Result<(), String> {
        let loc = &self.locations[i];
        let at = |what: String| format!("location {i} ({}): {what}", loc.name);
        check_ops(
            &loc.body,
            self.locations.len() as u64,
            self.regions.len() as u64,
            &self.locations,
            i,
        )
        .map_err(at)?;
        if loc.spawned && loc.kind == Kind::Rank {
            return Err(at("a spawned location must be a thread".into()));
        }
        Ok(())
    }
}

/// Largest time (ns) one operation or parameter may take: about 18 minutes,
/// so that simulated time never overflows.
pub const MAX_TIME: u64 = 1 << 40;
/// Most locations a program may have (readers refuse more before they
/// allocate).
pub const MAX_LOCATIONS: u64 = 1 << 24;
/// Largest message (bytes).
pub const MAX_BYTES: u64 = 1 << 40;
/// Largest request name (the engine keeps a name in 31 bits).
pub const MAX_REQUEST: u32 = (1 << 31) - 1;
/// Largest per-byte cost (ns, or ps for the contention-free model / 1000).
pub const MAX_PER_BYTE: u64 = 1 << 20;

fn limit(what: &str, value: u64, max: u64) -> Result<(), String> {
    if value > max {
        return Err(format!(
            "{what} = {value} is larger than the largest allowed, {max}"
        ));
    }
    Ok(())
}

fn check_network(network: &Network) -> Result<(), String> {
    match network {
        Network::LogGops(p) => {
            limit("L", p.latency, MAX_TIME)?;
            limit("o", p.overhead, MAX_TIME)?;
            limit("g", p.gap, MAX_TIME)?;
            limit("G", p.gap_per_byte, MAX_PER_BYTE)?;
            limit("O", p.overhead_per_byte, MAX_PER_BYTE)?;
        }
        Network::ContentionFree(m) => {
            limit("latency", m.latency, MAX_TIME)?;
            limit("per_byte_ps", m.per_byte_ps, MAX_PER_BYTE * 1000)?;
            limit("copy_per_byte_ps", m.copy_per_byte_ps, MAX_PER_BYTE * 1000)?;
        }
    }
    Ok(())
}

fn check_duration(d: &Duration) -> Result<(), String> {
    let finite = |what: &str, v: f64| {
        if v.is_finite() && v.abs() <= MAX_TIME as f64 {
            Ok(())
        } else {
            Err(format!(
                "compute {what} = {v} is not a finite time up to {MAX_TIME} ns"
            ))
        }
    };
    match *d {
        Duration::Fixed(ns) => limit("compute", ns, MAX_TIME),
        Duration::Uniform { low, high } => {
            limit("compute uniform low", low, MAX_TIME)?;
            limit("compute uniform high", high, MAX_TIME)
        }
        Duration::Normal { mean, sd } => {
            finite("normal mean", mean)?;
            finite("normal sd", sd)
        }
        Duration::Exponential { mean } => finite("exponential mean", mean),
    }
}

// Long: one arm per operation kind, each a bounds check; kept as one table of checks.
fn check_ops(
    ops: &[Op],
    n: u64,
    regions: u64,
    locs: &[LocationSpec],
    me: usize,
) -> Result<(), String> {
    let loc_ok = |l: LocationId, what: &str| {
        if u64::from(l) < n {
            Ok(())
        } else {
            Err(format!(
                "{what} names location {l}, but there are only {n} (0..{})",
                n - 1
            ))
        }
    };
    for op in ops {
        if let Op::Isend { request, .. } | Op::Irecv { request, .. } | Op::Wait { request } = op {
            limit("request", u64::from(*request), u64::from(MAX_REQUEST))?;
        }
        match op {
            Op::Region { region, body } => {
                if u64::from(*region) >= regions {
                    return Err(format!("region id {region} is not declared"));
                }
                check_ops(body, n, regions, locs, me)?;
            }
            Op::Loop { body, .. } => check_ops(body, n, regions, locs, me)?,
            Op::Compute(d) => check_duration(d)?,
            Op::Send { to, bytes, .. }
            | Op::Isend { to, bytes, .. }
            | Op::Sendrecv {
                to,
                send_bytes: bytes,
                ..
            } => {
                limit("bytes", *bytes, MAX_BYTES)?;
                if let Dest::Location(l) = to {
                    loc_ok(*l, "a send")?;
                    if *l as usize == me {
                        return Err("a send to itself".into());
                    }
                }
                if let Op::Sendrecv {
                    from: Source::Location(l),
                    ..
                } = op
                {
                    loc_ok(*l, "a receive")?;
                }
            }
            Op::Recv { from, .. } | Op::Irecv { from, .. } => {
                if let Source::Location(l) = from {
                    loc_ok(*l, "a receive")?;
                }
            }
            Op::Collective { kind, root, bytes } => {
                limit("bytes", *bytes, MAX_BYTES)?;
                if kind.shape() != Shape::NToN {
                    loc_ok(*root, "a collective root")?;
                    if locs[*root as usize].kind != Kind::Rank {
                        return Err(format!("collective root {root} is not a rank"));
                    }
                }
                if locs[me].kind != Kind::Rank {
                    return Err("a thread cannot take part in a collective".into());
                }
            }
            Op::Spawn { child } | Op::Join { child } => {
                loc_ok(*child, "a spawn or join")?;
                if !locs[*child as usize].spawned {
                    return Err(format!("location {child} is not marked spawned"));
                }
            }
            Op::ThreadBarrier { count, .. } if *count == 0 => {
                return Err("a thread barrier needs at least one participant".into());
            }
            _ => {}
        }
    }
    Ok(())
}

/// Builds a [`Program`] from Rust.
///
/// ```
/// use heisen_sim::program::{ProgramBuilder, Source};
/// let mut b = ProgramBuilder::new("ping");
/// let work = b.region("work");
/// let r0 = b.rank("rank 0");
/// let r1 = b.rank("rank 1");
/// b.on(r0).region(work, |b| { b.compute(1000); }).send(r1, 8, 0);
/// b.on(r1).recv(Source::Location(r0), 8, Some(0));
/// let program = b.build().unwrap();
/// assert_eq!(program.locations.len(), 2);
/// ```
#[derive(Debug)]
pub struct ProgramBuilder {
    program: Program,
}

impl ProgramBuilder {
    /// An empty program with the default LogGOPS network and no
    /// instrumentation cost.
    pub fn new(name: &str) -> Self {
        ProgramBuilder {
            program: Program {
                name: name.to_string(),
                regions: Vec::new(),
                locations: Vec::new(),
                seed: 0,
                network: Network::default(),
                calibration: Calibration::ZERO,
            },
        }
    }

    /// Declares a region (or returns the id of one declared before).
    pub fn region(&mut self, name: &str) -> u32 {
        if let Some(i) = self.program.regions.iter().position(|r| r == name) {
            return i as u32;
        }
        self.program.regions.push(name.to_string());
        (self.program.regions.len() - 1) as u32
    }

    fn location(&mut self, name: &str, kind: Kind, spawned: bool) -> LocationId {
        self.program.locations.push(LocationSpec {
            name: name.to_string(),
            kind,
            spawned,
            body: Vec::new(),
        });
        (self.program.locations.len() - 1) as LocationId
    }

    /// Adds an MPI rank.
    pub fn rank(&mut self, name: &str) -> LocationId {
        self.location(name, Kind::Rank, false)
    }

    /// Adds a thread that runs from the start.
    pub fn thread(&mut self, name: &str) -> LocationId {
        self.location(name, Kind::Thread, false)
    }

    /// Adds a thread that starts when another location spawns it.
    pub fn spawned_thread(&mut self, name: &str) -> LocationId {
        self.location(name, Kind::Thread, true)
    }

    /// Sets the seed of the compute distributions.
    pub fn seed(&mut self, seed: u64) -> &mut Self {
        self.program.seed = seed;
        self
    }

    /// Sets the network model.
    pub fn network(&mut self, network: Network) -> &mut Self {
        self.program.network = network;
        self
    }

    /// Sets the measured run's instrumentation costs.
    pub fn calibration(&mut self, calibration: Calibration) -> &mut Self {
        self.program.calibration = calibration;
        self
    }

    /// Appends operations to location `id`'s body. Unknown ids are
    /// reported by [`ProgramBuilder::build`].
    pub fn on(&mut self, id: LocationId) -> Ops<'_> {
        let index = id as usize;
        if index >= self.program.locations.len() {
            // Recorded on a placeholder that validation rejects, instead of
            // panicking here.
            self.program.locations.push(LocationSpec {
                name: format!("<unknown location {id}>"),
                kind: Kind::Rank,
                spawned: true,
                body: Vec::new(),
            });
        }
        let index = index.min(self.program.locations.len() - 1);
        let ops = &mut self.program.locations[index].body;
        Ops { ops }
    }

    /// The program without validation (the engine validates before running).
    pub fn build_unchecked(self) -> Program {
        self.program
    }

    /// Finishes and validates the program.
    pub fn build(self) -> Result<Program, String> {
        self.program.validate()?;
        Ok(self.program)
    }
}

/// Appends operations to one location's body (or a region's, a loop's).
#[derive(Debug)]
pub struct Ops<'a> {
    ops: &'a mut Vec<Op>,
}

impl Ops<'_> {
    /// Appends any operation.
    pub fn op(&mut self, op: Op) -> &mut Self {
        self.ops.push(op);
        self
    }

    /// Fixed compute of `ns`.
    pub fn compute(&mut self, ns: u64) -> &mut Self {
        self.op(Op::Compute(Duration::Fixed(ns)))
    }

    /// Compute drawn from a distribution.
    pub fn compute_dist(&mut self, d: Duration) -> &mut Self {
        self.op(Op::Compute(d))
    }

    /// A region around what `f` appends.
    pub fn region(&mut self, region: u32, f: impl FnOnce(&mut Ops<'_>)) -> &mut Self {
        let mut body = Vec::new();
        f(&mut Ops { ops: &mut body });
        self.op(Op::Region { region, body })
    }

    /// A loop of `count` iterations of what `f` appends.
    pub fn repeat(&mut self, id: u32, count: u64, f: impl FnOnce(&mut Ops<'_>)) -> &mut Self {
        let mut body = Vec::new();
        f(&mut Ops { ops: &mut body });
        self.op(Op::Loop { id, count, body })
    }

    /// Blocking send.
    pub fn send(&mut self, to: LocationId, bytes: u64, tag: u32) -> &mut Self {
        self.op(Op::Send {
            to: Dest::Location(to),
            bytes,
            tag,
        })
    }

    /// Blocking send to the source of the latest receive.
    pub fn reply(&mut self, bytes: u64, tag: u32) -> &mut Self {
        self.op(Op::Send {
            to: Dest::LastSource,
            bytes,
            tag,
        })
    }

    /// Blocking receive.
    pub fn recv(&mut self, from: Source, bytes: u64, tag: Tag) -> &mut Self {
        self.op(Op::Recv { from, bytes, tag })
    }

    /// Nonblocking send.
    pub fn isend(&mut self, to: LocationId, bytes: u64, tag: u32, request: u32) -> &mut Self {
        self.op(Op::Isend {
            to: Dest::Location(to),
            bytes,
            tag,
            request,
        })
    }

    /// Nonblocking receive.
    pub fn irecv(&mut self, from: Source, bytes: u64, tag: Tag, request: u32) -> &mut Self {
        self.op(Op::Irecv {
            from,
            bytes,
            tag,
            request,
        })
    }

    /// Waits for one request.
    pub fn wait(&mut self, request: u32) -> &mut Self {
        self.op(Op::Wait { request })
    }

    /// Waits for all outstanding requests.
    pub fn waitall(&mut self) -> &mut Self {
        self.op(Op::WaitAll)
    }

    /// A collective.
    pub fn collective(&mut self, kind: Collective, root: LocationId, bytes: u64) -> &mut Self {
        self.op(Op::Collective { kind, root, bytes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_names_above_31_bits_are_refused_where_they_are() {
        let mut b = ProgramBuilder::new("requests");
        let r0 = b.rank("rank 0");
        let r1 = b.rank("rank 1");
        b.on(r0).isend(r1, 8, 0, MAX_REQUEST).wait(MAX_REQUEST);
        b.on(r1).recv(Source::Location(r0), 8, Some(0));
        assert!(b.build().is_ok());
        let mut b = ProgramBuilder::new("requests");
        let r0 = b.rank("rank 0");
        let r1 = b.rank("rank 1");
        b.on(r0).isend(r1, 8, 0, MAX_REQUEST + 1);
        b.on(r1).recv(Source::Location(r0), 8, Some(0));
        assert_eq!(
            b.build().unwrap_err(),
            "location 0 (rank 0): request = 2147483648 is larger than the largest allowed, 2147483647"
        );
    }
}
