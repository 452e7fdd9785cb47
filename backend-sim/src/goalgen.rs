//! Random GOAL schedules, deterministic from a seed (ChaCha8), that cover
//! every GOAL feature LogGOPSim simulates and that LogGOPSim completes by
//! construction: the reference inputs of the differential test against
//! LogGOPSim (`tests/loggopsim.rs`, `docs/goal.md`, "How heisen matches
//! LogGOPSim").
//!
//! A schedule is built as a sequence of *actions* (a calc, a message, a
//! group of wildcard receives, a fan-out), each appending operations to
//! some ranks. Deadlock freedom follows from three rules:
//!
//! - an operation depends only on operations of earlier actions, and a
//!   message's send and receive are made in the same action, so every
//!   `requires` (rendezvous sends included: their receive exists already)
//!   and every `irequires` points backwards in one global order;
//! - a message to a specific source carries a tag used by no other message
//!   of the same pair (the pair's count), and any-source groups use a tag
//!   of their own, so a receive can only match the message it was made
//!   for, or one of its group's, whose sends never wait for the group;
//! - a receive that matches any tag matches everything sent to its rank,
//!   so such receives come in *windows*: a calc (the fence) requires every
//!   earlier receive of the rank, the window's receives require the fence,
//!   a closing calc requires them all, and every later send to that rank
//!   must follow the closing calc causally (a chain of `requires` and
//!   messages leads from it to the send). Window messages carry fresh tags.
//!
//! A message's receive names the message's own size (LogGOPSim ignores the
//! receive's size once the zero-byte and rendezvous fixes are in; a group's
//! messages share one size). No rank sends to itself (LogGOPSim and heisen
//! deliver such messages; `tests/data/edge/` and `loggopsim_fuzz.txt` check
//! them, docs/goal.md).

use core::fmt::Write as _;

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

/// The generator's version: bump it whenever a seed's schedule changes,
/// and regenerate the reference data (`tests/data/loggopsim_generated.txt`).
pub const VERSION: u32 = 1;

/// Message sizes the generator draws from, around LogGOPSim's default
/// eager limit S = 65535 (and around the smaller S of the parameter sweep).
const SIZES: [u64; 16] = [
    0, 1, 1, 2, 8, 8, 64, 1000, 1024, 1025, 4096, 65534, 65535, 65536, 70000, 100_000,
];

/// Tags of wildcard groups start here, far above any pair's count.
const GROUP_TAG: u32 = 1000;

/// What a schedule uses, for the summary of the differential test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features {
    /// Some operation `irequires` another.
    pub irequires: bool,
    /// A receive from any source (`from -1`).
    pub any_source: bool,
    /// A receive of any tag (`tag -1`).
    pub any_tag: bool,
    /// A message larger than 65535 bytes (rendezvous at the default S).
    pub rendezvous: bool,
    /// A 0-byte message.
    pub zero_byte: bool,
    /// An operation on a CPU other than 0.
    pub several_cpus: bool,
    /// A send or receive on a NIC other than 0.
    pub several_nics: bool,
    /// More than 16 operations become ready at once on some rank (a
    /// fan-out): LogGOPSim's unstable sort shows there.
    pub wide_fan_out: bool,
    /// A rank without any operation.
    pub idle_rank: bool,
    /// A rank written out of creation order (dependencies after all ops).
    pub shuffled: bool,
}

impl Features {
    /// Each feature's name and whether the schedule uses it.
    pub fn list(&self) -> [(&'static str, bool); 10] {
        [
            ("irequires", self.irequires),
            ("any-source", self.any_source),
            ("any-tag", self.any_tag),
            ("rendezvous", self.rendezvous),
            ("zero-byte", self.zero_byte),
            ("several-cpus", self.several_cpus),
            ("several-nics", self.several_nics),
            ("wide-fan-out", self.wide_fan_out),
            ("idle-rank", self.idle_rank),
            ("shuffled", self.shuffled),
        ]
    }

    /// The schedule uses only one CPU and one NIC per rank.
    pub fn single_cpu_nic(&self) -> bool {
        !self.several_cpus && !self.several_nics
    }
}

/// One generated schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    /// The seed it comes from.
    pub seed: u64,
    /// Number of ranks.
    pub ranks: usize,
    /// Operations over all ranks.
    pub operations: usize,
    /// Sends over all ranks (LogGOPSim counts one event per operation and
    /// one per message).
    pub sends: usize,
    /// The GOAL text.
    pub text: String,
    /// What it uses.
    pub features: Features,
}

/// The schedule of `seed`.
pub fn generate(seed: u64) -> Generated {
    let mut b = Builder::new(seed);
    b.build();
    b.finish(seed)
}

/// FNV-1a (64 bits) of a schedule's text: the reference data records it,
/// so that a changed generator is caught before any time is compared.
pub fn fingerprint(text: &str) -> u64 {
    heisen_core::hash::fnv1a(text.as_bytes())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Calc(u64),
    Send {
        to: usize,
        bytes: u64,
        tag: u32,
    },
    Recv {
        from: Option<usize>,
        bytes: u64,
        tag: Option<u32>,
    },
}

#[derive(Clone, Debug)]
struct Node {
    kind: Kind,
    cpu: u8,
    nic: u8,
    /// The action that made it: dependencies point to earlier actions.
    action: usize,
    requires: Vec<usize>,
    irequires: Vec<usize>,
    /// Per rank, the last window-closing epoch this operation follows
    /// causally once started / once done.
    knows_start: Vec<u32>,
    knows_done: Vec<u32>,
}

struct Builder {
    rng: ChaCha8Rng,
    ranks: Vec<Vec<Node>>,
    active: Vec<usize>,
    cpus: u64,
    nics: u64,
    action: usize,
    /// Windows closed so far per rank.
    epoch: Vec<u32>,
    /// Receives made on a rank since its last window's fence.
    pending_recvs: Vec<Vec<usize>>,
    /// The closing calc of a rank's last window.
    last_close: Vec<Option<usize>>,
    /// Messages so far per (sender, receiver): the next specific tag.
    pair_count: Vec<Vec<u32>>,
    next_group_tag: u32,
    wide_fan_out: bool,
    /// What this schedule may use (drawn once, so that some schedules are
    /// plain and the summary can group by feature).
    allow: Allow,
}

/// The features a schedule may use, drawn per seed.
#[derive(Clone, Copy, Debug)]
struct Allow {
    irequires: bool,
    any_source: bool,
    windows: bool,
    fan_out: bool,
    large: bool,
    zero: bool,
    shuffled: bool,
}

impl Builder {
    fn new(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = 2 + below(&mut rng, 15) as usize;
        let mut active: Vec<usize> = (0..n).collect();
        // Ranks with nothing to do, while at least two are left.
        if chance(&mut rng, 30) {
            let idle = 1 + below(&mut rng, 2) as usize;
            for _ in 0..idle {
                if active.len() > 2 {
                    let i = below(&mut rng, active.len() as u64) as usize;
                    active.remove(i);
                }
            }
        }
        let cpus = if chance(&mut rng, 35) {
            2 + below(&mut rng, 2)
        } else {
            1
        };
        let nics = if chance(&mut rng, 25) { 2 } else { 1 };
        let allow = Allow {
            irequires: chance(&mut rng, 60),
            any_source: chance(&mut rng, 50),
            windows: chance(&mut rng, 40),
            fan_out: chance(&mut rng, 50),
            large: chance(&mut rng, 60),
            zero: chance(&mut rng, 40),
            shuffled: chance(&mut rng, 25),
        };
        Builder {
            rng,
            ranks: vec![Vec::new(); n],
            active,
            cpus,
            nics,
            action: 0,
            epoch: vec![0; n],
            pending_recvs: vec![Vec::new(); n],
            last_close: vec![None; n],
            pair_count: vec![vec![0; n]; n],
            next_group_tag: GROUP_TAG,
            wide_fan_out: false,
            allow,
        }
    }

    fn n(&self) -> usize {
        self.ranks.len()
    }

    fn pick(&mut self, n: u64) -> u64 {
        below(&mut self.rng, n)
    }

    fn chance(&mut self, percent: u64) -> bool {
        chance(&mut self.rng, percent)
    }

    fn build(&mut self) {
        let n = self.active.len() as u64;
        let actions = (n + self.pick(2 * n + 1)).min(40);
        for _ in 0..actions {
            match self.pick(100) {
                0..=19 => self.calc_action(),
                65..=74 if self.allow.any_source => self.any_source_action(),
                75..=84 if self.allow.windows => self.window_action(),
                85..=99 if self.allow.fan_out => self.fan_out_action(),
                _ => self.message_action(),
            }
            self.action += 1;
        }
    }

    fn random_active(&mut self) -> usize {
        let i = self.pick(self.active.len() as u64) as usize;
        self.active[i]
    }

    fn random_size(&mut self) -> u64 {
        loop {
            let s = SIZES[self.pick(SIZES.len() as u64) as usize];
            if (s > 0 || self.allow.zero) && (s <= 4096 || self.allow.large) {
                return s;
            }
        }
    }

    fn random_calc(&mut self) -> u64 {
        match self.pick(4) {
            0 => 0,
            1 => self.pick(100),
            _ => self.pick(5000),
        }
    }

    /// Appends an operation to `rank` with the given dependencies, and
    /// computes what it knows.
    fn push(
        &mut self,
        rank: usize,
        kind: Kind,
        requires: Vec<usize>,
        irequires: Vec<usize>,
    ) -> usize {
        let cpu = self.pick(self.cpus) as u8;
        let nic = match kind {
            Kind::Calc(_) => 0,
            _ => self.pick(self.nics) as u8,
        };
        let n = self.n();
        let mut knows = vec![0; n];
        let nodes = &self.ranks[rank];
        for &d in &requires {
            max_into(&mut knows, &nodes[d].knows_done);
        }
        for &d in &irequires {
            max_into(&mut knows, &nodes[d].knows_start);
        }
        self.ranks[rank].push(Node {
            kind,
            cpu,
            nic,
            action: self.action,
            requires,
            irequires,
            knows_done: knows.clone(),
            knows_start: knows,
        });
        self.ranks[rank].len() - 1
    }

    /// Random dependencies of a new operation on `rank`, among operations
    /// of earlier actions: often a chain to the last one, sometimes more.
    fn random_deps(&mut self, rank: usize) -> (Vec<usize>, Vec<usize>) {
        let earlier = self.ranks[rank]
            .iter()
            .rposition(|x| x.action < self.action)
            .map_or(0, |i| i + 1);
        let (mut requires, mut irequires) = (Vec::new(), Vec::new());
        if earlier == 0 {
            return (requires, irequires);
        }
        let start = if self.allow.irequires { 15 } else { 0 };
        match self.pick(100) {
            0..=54 => requires.push(earlier - 1),
            p if p < 55 + start => irequires.push(earlier - 1),
            _ => {}
        }
        for _ in 0..self.pick(3) {
            let d = self.pick(earlier as u64) as usize;
            if requires.contains(&d) || irequires.contains(&d) {
                continue;
            }
            if !self.allow.irequires || self.chance(75) {
                requires.push(d);
            } else {
                irequires.push(d);
            }
        }
        (requires, irequires)
    }

    /// Whether `rank` can send to `to`: every window of `to` is closed
    /// and some operation of `rank` follows the last close.
    fn knower(&self, rank: usize, to: usize) -> Option<Option<usize>> {
        let need = self.epoch[to];
        if need == 0 {
            return Some(None);
        }
        self.ranks[rank]
            .iter()
            .rposition(|x| x.action < self.action && x.knows_done[to] >= need)
            .map(Some)
    }

    /// A send from `rank` to `to` (which [`Builder::knower`] allowed).
    fn send(&mut self, rank: usize, to: usize, bytes: u64, tag: u32) -> usize {
        let (mut requires, mut irequires) = self.random_deps(rank);
        if let Some(Some(k)) = self.knower(rank, to) {
            let knows = |d: &usize| self.ranks[rank][*d].knows_done[to] >= self.epoch[to];
            let known = requires.iter().any(knows)
                || irequires
                    .iter()
                    .any(|d| self.ranks[rank][*d].knows_start[to] >= self.epoch[to]);
            if !known {
                irequires.retain(|&d| d != k);
                if !requires.contains(&k) {
                    requires.push(k);
                }
            }
            return self.push_send(rank, to, bytes, tag, requires, irequires);
        }
        self.push_send(rank, to, bytes, tag, requires, irequires)
    }

    fn push_send(
        &mut self,
        rank: usize,
        to: usize,
        bytes: u64,
        tag: u32,
        requires: Vec<usize>,
        irequires: Vec<usize>,
    ) -> usize {
        self.push(rank, Kind::Send { to, bytes, tag }, requires, irequires)
    }

    /// A sender and a receiver that may exchange a message now.
    fn pair(&mut self) -> Option<(usize, usize)> {
        for _ in 0..20 {
            let (s, r) = (self.random_active(), self.random_active());
            if s != r && self.knower(s, r).is_some() {
                return Some((s, r));
            }
        }
        None
    }

    fn calc_action(&mut self) {
        let rank = self.random_active();
        let (requires, irequires) = self.random_deps(rank);
        let t = self.random_calc();
        self.push(rank, Kind::Calc(t), requires, irequires);
    }

    fn message_action(&mut self) {
        let Some((s, r)) = self.pair() else {
            return self.calc_action();
        };
        let bytes = self.random_size();
        let tag = self.pair_count[s][r];
        self.pair_count[s][r] += 1;
        let send = self.send(s, r, bytes, tag);
        let (requires, irequires) = self.random_deps(r);
        let recv = self.push(
            r,
            Kind::Recv {
                from: Some(s),
                bytes,
                tag: Some(tag),
            },
            requires,
            irequires,
        );
        // The receive knows what the send knew when it started.
        let sent = self.ranks[s][send].knows_start.clone();
        max_into(&mut self.ranks[r][recv].knows_done, &sent);
        self.pending_recvs[r].push(recv);
    }

    /// Senders allowed to send to `r` now, with repetition.
    fn senders(&mut self, r: usize, k: usize) -> Vec<usize> {
        let allowed: Vec<usize> = self
            .active
            .clone()
            .into_iter()
            .filter(|&s| s != r && self.knower(s, r).is_some())
            .collect();
        if allowed.is_empty() {
            return Vec::new();
        }
        (0..k)
            .map(|_| allowed[self.pick(allowed.len() as u64) as usize])
            .collect()
    }

    /// `k` messages from any sender to `r` with a tag of their own,
    /// received by `k` receives `from -1 tag T`.
    fn any_source_action(&mut self) {
        let r = self.random_active();
        let k = 2 + self.pick(3) as usize;
        let senders = self.senders(r, k);
        if senders.is_empty() {
            return self.calc_action();
        }
        let tag = self.next_group_tag;
        self.next_group_tag += 1;
        let bytes = self.random_size();
        for &s in &senders {
            self.send(s, r, bytes, tag);
        }
        let mut previous = None;
        for _ in 0..senders.len() {
            let (mut requires, mut irequires) = self.random_deps(r);
            chain_within_group(
                self.allow.irequires,
                &mut self.rng,
                previous,
                &mut requires,
                &mut irequires,
            );
            let recv = self.push(
                r,
                Kind::Recv {
                    from: None,
                    bytes,
                    tag: Some(tag),
                },
                requires,
                irequires,
            );
            self.pending_recvs[r].push(recv);
            previous = Some(recv);
        }
    }

    /// A window of receives of any tag on `r` (from one sender, or from
    /// any): fence, receives, close (see the module doc).
    fn window_action(&mut self) {
        let r = self.random_active();
        let k = 1 + self.pick(4) as usize;
        let one_sender = self.chance(50);
        let mut senders = self.senders(r, k);
        if senders.is_empty() {
            return self.calc_action();
        }
        if one_sender {
            senders = vec![senders[0]; k];
        }
        let bytes = self.random_size();
        for &s in &senders {
            let tag = self.next_group_tag;
            self.next_group_tag += 1;
            self.send(s, r, bytes, tag);
        }
        let mut fence_requires = core::mem::take(&mut self.pending_recvs[r]);
        fence_requires.extend(self.last_close[r]);
        let t = self.random_calc();
        let fence = self.push(r, Kind::Calc(t), fence_requires, Vec::new());
        let from = one_sender.then_some(senders[0]);
        let mut recvs = Vec::new();
        for _ in 0..k {
            let (mut requires, mut irequires) = (vec![fence], Vec::new());
            chain_within_group(
                self.allow.irequires,
                &mut self.rng,
                recvs.last().copied(),
                &mut requires,
                &mut irequires,
            );
            let recv = self.push(
                r,
                Kind::Recv {
                    from,
                    bytes,
                    tag: None,
                },
                requires,
                irequires,
            );
            recvs.push(recv);
        }
        let t = self.random_calc();
        let close = self.push(r, Kind::Calc(t), recvs, Vec::new());
        self.epoch[r] += 1;
        self.ranks[r][close].knows_done[r] = self.epoch[r];
        self.last_close[r] = Some(close);
    }

    /// Up to 24 operations on one rank that become ready together when one
    /// operation completes: LogGOPSim sorts them by kind (sends, receives,
    /// calcs), stably once fixed.
    fn fan_out_action(&mut self) {
        let rank = self.random_active();
        let (requires, irequires) = self.random_deps(rank);
        let t = self.random_calc();
        let root = self.push(rank, Kind::Calc(t), requires, irequires);
        // Operations of this action may depend on the root: it is a calc,
        // done when it ends, and it depends on earlier actions only.
        let width = if self.chance(30) {
            17 + self.pick(8)
        } else {
            2 + self.pick(10)
        } as usize;
        self.wide_fan_out |= width > 16;
        let start = self.allow.irequires && self.chance(25);
        for _ in 0..width {
            let (requires, irequires) = if start {
                (vec![], vec![root])
            } else {
                (vec![root], vec![])
            };
            let to = self.random_active();
            if to != rank && self.chance(50) && self.knower(rank, to).is_some() {
                let bytes = self.random_size();
                let tag = self.pair_count[rank][to];
                self.pair_count[rank][to] += 1;
                let mut requires = requires;
                if let Some(Some(k)) = self.knower(rank, to)
                    && self.ranks[rank][root].knows_start[to] < self.epoch[to]
                {
                    requires.push(k);
                }
                let send = self.push_send(rank, to, bytes, tag, requires, irequires);
                let (rr, ri) = self.random_deps(to);
                let recv = self.push(
                    to,
                    Kind::Recv {
                        from: Some(rank),
                        bytes,
                        tag: Some(tag),
                    },
                    rr,
                    ri,
                );
                let sent = self.ranks[rank][send].knows_start.clone();
                max_into(&mut self.ranks[to][recv].knows_done, &sent);
                self.pending_recvs[to].push(recv);
            } else {
                let t = self.random_calc();
                self.push(rank, Kind::Calc(t), requires, irequires);
            }
        }
    }

    fn finish(mut self, seed: u64) -> Generated {
        let n = self.n();
        let mut features = Features {
            idle_rank: self.ranks.iter().any(Vec::is_empty),
            wide_fan_out: self.wide_fan_out,
            ..Features::default()
        };
        let mut text = format!("num_ranks {n}\n");
        let (mut operations, mut sends) = (0, 0);
        for r in 0..n {
            let nodes = core::mem::take(&mut self.ranks[r]);
            operations += nodes.len();
            for node in &nodes {
                note(&mut features, node);
                sends += usize::from(matches!(node.kind, Kind::Send { .. }));
            }
            let shuffled = self.allow.shuffled && nodes.len() > 2 && self.chance(50);
            features.shuffled |= shuffled;
            text.push('\n');
            self.write_rank(&mut text, r, &nodes, shuffled);
        }
        Generated {
            seed,
            ranks: n,
            operations,
            sends,
            text,
            features,
        }
    }

    fn write_rank(&mut self, text: &mut String, r: usize, nodes: &[Node], shuffled: bool) {
        let mut referenced = vec![false; nodes.len()];
        for node in nodes {
            for &d in node.requires.iter().chain(&node.irequires) {
                referenced[d] = true;
            }
        }
        let _ = writeln!(text, "rank {r} {{");
        if self.chance(10) {
            text.push_str("/* made by heisen's goalgen */\n");
        }
        let mut order: Vec<usize> = (0..nodes.len()).collect();
        if shuffled {
            shuffle(&mut self.rng, &mut order);
        }
        let mut deps = Vec::new();
        for &i in &order {
            let node = &nodes[i];
            let labelled = referenced[i]
                || !node.requires.is_empty()
                || !node.irequires.is_empty()
                || self.chance(50);
            // LogGOPSim's reader takes comments only where a statement
            // may start, never after an operation on its line.
            if self.chance(5) {
                text.push_str("// a comment\n");
            }
            let line = self.op_text(node);
            if labelled {
                let _ = writeln!(text, "l{}: {line}", i + 1);
            } else {
                let _ = writeln!(text, "{line}");
            }
            let mut own: Vec<String> = node
                .requires
                .iter()
                .map(|d| format!("l{} requires l{}", i + 1, d + 1))
                .chain(
                    node.irequires
                        .iter()
                        .map(|d| format!("l{} irequires l{}", i + 1, d + 1)),
                )
                .collect();
            shuffle(&mut self.rng, &mut own);
            if shuffled {
                deps.extend(own);
            } else {
                for d in own {
                    let _ = writeln!(text, "{d}");
                }
            }
        }
        shuffle(&mut self.rng, &mut deps);
        for d in deps {
            let _ = writeln!(text, "{d}");
        }
        text.push_str("}\n");
    }

    fn op_text(&mut self, node: &Node) -> String {
        let mut s = match node.kind {
            Kind::Calc(t) => format!("calc {t}"),
            Kind::Send { to, bytes, tag } => {
                let mut s = format!("send {bytes}b to {to}");
                if tag != 0 || self.chance(70) {
                    let _ = write!(s, " tag {tag}");
                }
                s
            }
            Kind::Recv { from, bytes, tag } => {
                let from = from.map_or("-1".to_string(), |f| f.to_string());
                let mut s = format!("recv {bytes}b from {from}");
                match tag {
                    None => s.push_str(" tag -1"),
                    Some(t) if t != 0 || self.chance(70) => {
                        let _ = write!(s, " tag {t}");
                    }
                    Some(_) => {}
                }
                s
            }
        };
        if node.cpu != 0 || self.chance(5) {
            let _ = write!(s, " cpu {}", node.cpu);
        }
        let message = !matches!(node.kind, Kind::Calc(_));
        if message && (node.nic != 0 || self.chance(5)) {
            let _ = write!(s, " nic {}", node.nic);
        }
        s
    }
}

fn note(f: &mut Features, node: &Node) {
    f.irequires |= !node.irequires.is_empty();
    f.several_cpus |= node.cpu != 0;
    f.several_nics |= node.nic != 0;
    match node.kind {
        Kind::Calc(_) => {}
        Kind::Send { bytes, .. } => {
            f.rendezvous |= bytes > 65535;
            f.zero_byte |= bytes == 0;
        }
        Kind::Recv { from, tag, .. } => {
            f.any_source |= from.is_none();
            f.any_tag |= tag.is_none();
        }
    }
}

/// Within a group of receives: the next one sometimes requires or
/// irequires the previous one.
fn chain_within_group(
    irequires_allowed: bool,
    rng: &mut ChaCha8Rng,
    previous: Option<usize>,
    requires: &mut Vec<usize>,
    irequires: &mut Vec<usize>,
) {
    let Some(p) = previous else { return };
    match below(rng, 10) {
        0..=2 => requires.push(p),
        3..=4 if irequires_allowed => irequires.push(p),
        _ => {}
    }
}

fn max_into(into: &mut [u32], from: &[u32]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

/// A number below `n` (> 0); the modulo bias is irrelevant here, the
/// sequence only has to be reproducible.
fn below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    rng.next_u64() % n
}

fn chance(rng: &mut ChaCha8Rng, percent: u64) -> bool {
    below(rng, 100) < percent
}

fn shuffle<T>(rng: &mut ChaCha8Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = below(rng, i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goal;
    use crate::transfer::Network;

    #[test]
    fn a_seed_gives_one_schedule() {
        for seed in 0..20 {
            assert_eq!(generate(seed), generate(seed));
        }
        assert_ne!(generate(1).text, generate(2).text);
    }

    #[test]
    fn seeds_cover_every_feature_and_rank_count() {
        let mut seen = [0usize; 10];
        let mut plain = 0;
        let mut ranks = [false; 17];
        for seed in 0..300 {
            let g = generate(seed);
            ranks[g.ranks] = true;
            let list = g.features.list();
            for (count, (_, on)) in seen.iter_mut().zip(list) {
                *count += usize::from(on);
            }
            plain += usize::from(list.iter().all(|(_, on)| !on));
        }
        for ((name, _), count) in Features::default().list().iter().zip(seen) {
            assert!(count >= 20, "{name}: only {count} of 300 schedules");
        }
        assert!(plain >= 5, "only {plain} schedules without any feature");
        assert!(ranks[2..=16].iter().all(|&r| r), "rank counts: {ranks:?}");
        assert!(!ranks[0] && !ranks[1]);
    }

    #[test]
    fn heisens_parser_takes_every_schedule() {
        for seed in 0..300 {
            let g = generate(seed);
            let name = format!("seed-{seed}.goal");
            let schedule = goal::parse(&name, &g.text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(schedule.ranks.len(), g.ranks);
            let operations: usize = schedule.ranks.iter().map(Vec::len).sum();
            assert_eq!(operations, g.operations, "seed {seed}");
            let loaded = goal::load_compiled(&name, &g.text, Network::default());
            match loaded {
                Ok(_) => assert!(g.features.single_cpu_nic(), "seed {seed}"),
                // Several CPUs or NICs: read, then refused by name.
                Err(e) => {
                    assert!(!g.features.single_cpu_nic(), "seed {seed}: {e}");
                    assert!(e.to_string().contains("heisen simulates one CPU"), "{e}");
                }
            }
        }
    }

    #[test]
    fn fingerprint_is_fnv1a() {
        // FNV-1a 64 test vectors.
        assert_eq!(fingerprint(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fingerprint("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
