//! Critical-path analysis of simulated runs: the activity graph the engine
//! records, its longest path computed offline on the truth run (with shares,
//! CPU times and zeroing for every region), the what-if re-simulation with a
//! region's work removed, and the critical-path profile (seed 003 Fig. 7-9)
//! computed both online (the measured run's kernels, R7, R10) and offline.
//! The graph's nodes and arcs, and how CPU time is counted, are described
//! with their records in [`crate::activity`].
//!
//! # Zeroing and what-if
//!
//! Zeroing a region (003 §3, Fig. 4) is the longest path of the same graph
//! with the region's local weights set to zero; transfers and
//! synchronisation keep theirs. The what-if run ([`whatif`]) re-simulates
//! the program with the region's compute removed. The two agree exactly
//! (`L - n[k] = truth end - what-if end`, the tests check it on thousands
//! of programs) when removing the work changes neither the graph nor its
//! weights: a deterministic program (no wildcard receive, no race on a lock
//! or queue) on the contention-free network, whose transfer times do not
//! depend on when messages leave. Otherwise they differ, for a reason: a
//! wildcard receive may match another sender, and under LogGOPS a message
//! that leaves earlier may queue behind another one for the NIC gap, or a
//! send's CPU overhead `o` inside the region counts for zeroing but is not
//! compute the what-if run removes. The offline profile shows both.
//!
//! # Ties
//!
//! Exactly the kernel's (R7, `Snapshot::beats`): the longer path wins; on
//! equal length the lower location id, the local predecessor carrying the
//! location's own id; on equal length and id the larger transfer, then the
//! larger inclusive and exclusive shares compared in region order.

use core::cmp::Ordering;
use core::fmt;
use core::fmt::Write as _;
use std::collections::HashMap;

use heisen_core::Snapshot;

use crate::activity::{CpuClock, CpuTimes, Edge, LocationActivity, RegionTime, Step};
use crate::engine::{RunOptions, RunResult, SELECTED, SimError, run};
use crate::program::{Duration, LocationId, Op, Program};

// ----- offline: the longest path of the activity graph ------------------------

/// A path of the activity graph ending at some point, with its shares
/// (R7): what the kernel keeps as `(L, s, n)`, here for every region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathValue {
    /// The location the path was last merged at (R7 ties).
    pub location: LocationId,
    /// Its length `L`.
    pub longest: i64,
    /// The part of `L` spent in transfers, the `(transfer)` pseudo-region.
    pub transfer: i64,
    /// Inclusive share per region id.
    pub inclusive: Vec<i64>,
    /// Exclusive share per region id.
    pub exclusive: Vec<i64>,
}

impl PathValue {
    fn empty(location: LocationId, regions: usize) -> Self {
        PathValue {
            location,
            longest: 0,
            transfer: 0,
            inclusive: vec![0; regions],
            exclusive: vec![0; regions],
        }
    }

    /// Whether `self` wins over `other` (R7, `Snapshot::beats`): longer,
    /// then lower location, then larger transfer, then larger shares in
    /// region order.
    pub fn beats(&self, other: &Self) -> bool {
        (self.longest, core::cmp::Reverse(self.location))
            .cmp(&(other.longest, core::cmp::Reverse(other.location)))
            .then_with(|| self.transfer.cmp(&other.transfer))
            .then_with(|| self.inclusive.cmp(&other.inclusive))
            .then_with(|| self.exclusive.cmp(&other.exclusive))
            == Ordering::Greater
    }
}

/// [`PathValue::beats`] for paths lengthened by a transfer `l`, without
/// building them.
fn beats_shifted(a: (&PathValue, i64), b: (&PathValue, i64)) -> bool {
    let ((a, la), (b, lb)) = (a, b);
    (a.longest + la, core::cmp::Reverse(a.location))
        .cmp(&(b.longest + lb, core::cmp::Reverse(b.location)))
        .then_with(|| (a.transfer + la).cmp(&(b.transfer + lb)))
        .then_with(|| a.inclusive.cmp(&b.inclusive))
        .then_with(|| a.exclusive.cmp(&b.exclusive))
        == Ordering::Greater
}

/// Why the activity graph could not be walked.
fn graph_error(what: String) -> SimError {
    SimError::Program(format!("activity graph: {what}"))
}

/// One location's walk through its steps: the next step, the time
/// accounted up to, the open regions, and the longest path so far.
struct Cursor {
    location: LocationId,
    next: usize,
    last: u64,
    stack: Vec<u32>,
    path: PathValue,
}

impl Cursor {
    /// R7: non-waiting time up to `until` adds to L, to the share of every
    /// open region (inclusive) and of the innermost one (exclusive) —
    /// unless `zeroed` is open: zeroing counts its weights as nothing.
    fn work(&mut self, until: u64, zeroed: Option<u32>) {
        let dt = until as i64 - self.last as i64;
        self.last = until;
        if zeroed.is_some_and(|z| self.stack.contains(&z)) {
            return;
        }
        self.path.longest += dt;
        if let Some(e) = self
            .stack
            .last()
            .and_then(|&top| self.path.exclusive.get_mut(top as usize))
        {
            *e += dt;
        }
        for (i, &r) in self.stack.iter().enumerate() {
            if self.stack[..i].contains(&r) {
                continue; // recursion: a region counts once (002 Fig. 11)
            }
            if let Some(s) = self.path.inclusive.get_mut(r as usize) {
                *s += dt;
            }
        }
    }

    /// The step at `self.next`, unless it is a merge on a release not
    /// walked yet (`false`).
    fn take(
        &mut self,
        step: &Step,
        releases: &mut HashMap<u64, PathValue>,
        zeroed: Option<u32>,
    ) -> bool {
        match step {
            Step::Enter { region, at } => {
                self.work(*at, zeroed);
                self.stack.push(*region);
            }
            Step::Exit { region, at } => {
                self.work(*at, zeroed);
                if let Some(k) = self.stack.iter().rposition(|r| r == region) {
                    self.stack.remove(k);
                }
            }
            Step::Release { id, at } => {
                self.work(*at, zeroed);
                releases.insert(*id, self.path.clone());
            }
            Step::Merge {
                begin,
                end,
                edges,
                collective,
                ..
            } => {
                if edges.iter().any(|e| !releases.contains_key(&e.release)) {
                    return false;
                }
                self.work(*begin, zeroed);
                self.merge(*begin, *end, edges, *collective, releases);
            }
        }
        true
    }

    /// A merge from `begin` to `end` on `edges`: the path becomes the
    /// winner among the local one and each release's lengthened by its
    /// transfer (R7: `L' = max(L, max_j (L_j + l_j))`, ties as the kernel).
    fn merge(
        &mut self,
        begin: u64,
        end: u64,
        edges: &[Edge],
        collective: bool,
        releases: &HashMap<u64, PathValue>,
    ) {
        // R6, 001 eq. 13: the synchronisation after the last entry.
        let sync = end as i64 - edges.iter().map(|e| e.released).max().unwrap_or(0) as i64;
        // The winner: None for the local path, else (edge, l_j).
        let mut winner: Option<(&PathValue, i64)> = None;
        for e in edges {
            let Some(from) = releases.get(&e.release) else {
                continue;
            };
            // R7: L_j + l_j, the transfer in the (transfer) pseudo-region.
            let l = if collective {
                sync
            } else {
                e.transfer(begin, end)
            };
            let best = winner.map_or((&self.path, 0), |w| w);
            if beats_shifted((from, l), best) {
                winner = Some((from, l));
            }
        }
        if let Some((from, l)) = winner {
            self.path = from.clone();
            self.path.longest += l;
            self.path.transfer += l;
        }
        // Waiting never adds (R7): the location goes on from a(e).
        self.path.location = self.location;
        self.last = end;
    }
}

/// The longest path to every location's end (R7), with every region's
/// local weights counted, or with those of `zeroed` (inclusive) set to zero
/// (critical-path zeroing, 003 §3 Fig. 4). A plain reference: full vectors,
/// no lazy offsets, each merge compares every candidate. Locations are
/// walked in turns, each as far as its merges' releases were walked.
pub fn longest_paths(
    activity: &[LocationActivity],
    regions: usize,
    zeroed: Option<u32>,
) -> Result<Vec<PathValue>, SimError> {
    let mut cursors: Vec<Cursor> = activity
        .iter()
        .enumerate()
        .map(|(i, a)| Cursor {
            location: i as LocationId,
            next: 0,
            last: a.start,
            stack: Vec::new(),
            path: PathValue::empty(i as LocationId, regions),
        })
        .collect();
    let mut releases: HashMap<u64, PathValue> = HashMap::new();
    let total: usize = activity.iter().map(|a| a.steps.len()).sum();
    let mut done = 0;
    while done < total {
        let before = done;
        for (c, a) in cursors.iter_mut().zip(activity) {
            while let Some(step) = a.steps.get(c.next) {
                if !c.take(step, &mut releases, zeroed) {
                    break; // a release not walked yet
                }
                c.next += 1;
                done += 1;
            }
        }
        if done == before {
            return Err(graph_error(
                "a merge waits for a release that never happens".into(),
            ));
        }
    }
    Ok(cursors
        .into_iter()
        .zip(activity)
        .map(|(mut c, a)| {
            let end = a.end.max(c.last);
            c.work(end, zeroed);
            c.path
        })
        .collect())
}

/// The global path (R10): the winner over every location's end (R7 ties).
fn global(paths: &[PathValue]) -> Option<&PathValue> {
    paths
        .iter()
        .fold(None, |best: Option<&PathValue>, p| match best {
            Some(b) if !p.beats(b) => Some(b),
            _ => Some(p),
        })
}

/// The offline analysis of one run's activity graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Offline {
    /// The longest path over all locations (R7, R10).
    pub path: PathValue,
    /// Per region, the longest path with the region's weights set to zero
    /// (critical-path zeroing, 003 Fig. 4): the net length `n[k]`.
    pub net: Vec<i64>,
    /// CPU time per region summed over locations, and in total.
    pub cpu: CpuTimes,
}

/// Analyses the activity graph of a run of a program with `regions`
/// regions: longest path, shares, zeroing and CPU time of every region.
pub fn offline(activity: &[LocationActivity], regions: usize) -> Result<Offline, SimError> {
    let paths = longest_paths(activity, regions, None)?;
    let path = global(&paths)
        .cloned()
        .unwrap_or_else(|| PathValue::empty(0, regions));
    let mut net = Vec::with_capacity(regions);
    for k in 0..regions {
        // Lengths only: no share vectors (ties cannot change a length).
        let zeroed = longest_paths(activity, 0, Some(k as u32))?;
        net.push(zeroed.iter().map(|p| p.longest).max().unwrap_or(0));
    }
    let mut cpu = CpuTimes {
        total: 0,
        regions: vec![RegionTime::default(); regions],
    };
    for a in activity {
        let mut clock = CpuClock::new(a.start as i64);
        for step in &a.steps {
            match step {
                Step::Enter { region, at } => clock.on_enter(*region, *at as i64),
                Step::Exit { region, at } => clock.on_exit(*region, *at as i64),
                Step::Release { .. } => {}
                Step::Merge { begin, end, .. } => clock.on_merge(*begin as i64, *end as i64),
            }
        }
        clock.on_end(a.end as i64);
        add_cpu(&mut cpu, clock.times());
    }
    Ok(Offline { path, net, cpu })
}

fn add_cpu(sum: &mut CpuTimes, one: &CpuTimes) {
    sum.total += one.total;
    if sum.regions.len() < one.regions.len() {
        sum.regions.resize(one.regions.len(), RegionTime::default());
    }
    for (s, o) in sum.regions.iter_mut().zip(&one.regions) {
        s.inclusive += o.inclusive;
        s.exclusive += o.exclusive;
    }
}

// ----- what-if ----------------------------------------------------------------

/// `ops` with every compute inside `region` (inclusive: nested regions
/// too) taking no time. Draws are kept, so that the other computes of the
/// location draw the same durations as in the original run.
fn without(ops: &[Op], region: u32, inside: bool) -> Vec<Op> {
    ops.iter()
        .map(|op| match op {
            Op::Region { region: r, body } => Op::Region {
                region: *r,
                body: without(body, region, inside || *r == region),
            },
            Op::Loop { id, count, body } => Op::Loop {
                id: *id,
                count: *count,
                body: without(body, region, inside),
            },
            Op::Compute(d) if inside => Op::Compute(match *d {
                Duration::Fixed(_) => Duration::Fixed(0),
                // Same number of draws, every one of them 0.
                Duration::Uniform { .. } => Duration::Uniform { low: 0, high: 0 },
                Duration::Normal { .. } => Duration::Normal { mean: 0.0, sd: 0.0 },
                Duration::Exponential { .. } => Duration::Exponential { mean: 0.0 },
            }),
            other => other.clone(),
        })
        .collect()
}

/// `program` with the work of `region` removed: every compute operation
/// inside it (inclusive) takes no time.
pub fn without_region(program: &Program, region: u32) -> Program {
    let mut p = program.clone();
    for l in &mut p.locations {
        l.body = without(&l.body, region, false);
    }
    p
}

/// What-if re-simulation (DESIGN §4): the truth of `program` with the
/// compute of `region` removed; returns the latest end over all locations.
pub fn whatif(program: &Program, region: u32) -> Result<u64, SimError> {
    let r = run(&without_region(program, region), RunOptions::TIMES)?;
    Ok(r.ends.iter().copied().max().unwrap_or(0))
}

// ----- the critical-path profile ----------------------------------------------

/// One region's row of a critical-path profile (seed 003 Fig. 7-9).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProfileRow {
    /// Region id.
    pub id: u32,
    /// Region name.
    pub region: String,
    /// Inclusive share of the critical path (`None`: not among the
    /// kernel's selected regions).
    pub cp_inclusive: Option<i64>,
    /// Exclusive share of the critical path.
    pub cp_exclusive: Option<i64>,
    /// Inclusive CPU time summed over locations.
    pub cpu_inclusive: i64,
    /// Exclusive CPU time summed over locations.
    pub cpu_exclusive: i64,
    /// Zero-gain `L - n[k]`: how much shorter the critical path is when
    /// the region costs nothing (003 §3, Fig. 9).
    pub zero: Option<i64>,
    /// Truth end minus the what-if re-simulation's end (offline only).
    pub whatif: Option<i64>,
}

/// A critical-path profile: the shape of seed 003 Fig. 7-9.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CpProfile {
    /// What it was computed from.
    pub source: String,
    /// Critical-path length `L`.
    pub length: i64,
    /// Its `(transfer)` pseudo-region.
    pub transfer: i64,
    /// Name of the location the critical path ends at.
    pub ends_at: String,
    /// CPU time of all locations.
    pub cpu_total: i64,
    /// One row per region, by decreasing inclusive CPU time.
    pub rows: Vec<ProfileRow>,
    /// Regions beyond the kernel's `SELECTED`, whose critical-path columns
    /// are empty online (the offline analysis covers every region).
    pub uncovered: usize,
}

/// The legend under the profiles of `heisen simulate` (and docs/cli.md).
pub const LEGEND: &str = "\
legend: CP = the region's inclusive share of the critical path (time on the path inside it, nested regions
  included), CP excl = its exclusive share (nested regions not included); CPU = its CPU time summed over
  all locations (waiting excluded), CPU excl = exclusive; zero-gain = how much shorter the critical path
  is when the region costs nothing (critical-path zeroing, R10: L - n[k]); what-if = truth end minus the
  end of a re-simulation without the region's compute; % = of the critical path (CP, zero-gain, what-if)
  or of all CPU time (CPU). Regions form a tree by nesting, siblings sorted by CP share; (transfer) is the
  path's time in messages, (outside regions) its time in no region, so that top-level rows, (transfer)
  and (outside regions) add up to the critical path.
";

/// Each region's parent (the region it is first seen nested in) in
/// `program`'s operations; `None` at top level.
pub fn region_parents(program: &Program) -> Vec<Option<u32>> {
    fn walk(ops: &[Op], open: Option<u32>, parents: &mut [Option<Option<u32>>]) {
        for op in ops {
            match op {
                Op::Region { region, body } => {
                    if let Some(p) = parents.get_mut(*region as usize)
                        && p.is_none()
                        && open != Some(*region)
                    {
                        *p = Some(open);
                    }
                    walk(body, Some(*region), parents);
                }
                Op::Loop { body, .. } => walk(body, open, parents),
                _ => {}
            }
        }
    }
    let mut parents = vec![None; program.regions.len()];
    for l in &program.locations {
        walk(&l.body, None, &mut parents);
    }
    let mut out: Vec<Option<u32>> = parents.into_iter().map(Option::flatten).collect();
    // A cycle (a region first seen inside one that is first seen inside
    // it) cannot be drawn as a tree: such regions go to the top level.
    for k in 0..out.len() {
        let mut at = out[k];
        let mut steps = 0;
        while let Some(p) = at {
            steps += 1;
            if p as usize == k || steps > out.len() {
                out[k] = None;
                break;
            }
            at = out.get(p as usize).copied().flatten();
        }
    }
    out
}

impl CpProfile {
    /// The profile as text with its regions as a tree by nesting in
    /// `program` (siblings by critical-path share), in a unit that fits.
    pub fn render(&self, program: &Program) -> String {
        self.render_tree(&region_parents(program))
    }

    /// The profile with `parents[k]` the parent of region id `k`.
    // Long: the order, widths and cell closures of one table are shared by every row.
    pub fn render_tree(&self, parents: &[Option<u32>]) -> String {
        use crate::output::units::{Unit, percent};
        let unit = Unit::for_max(self.length.max(self.cpu_total));
        let mut out = format!(
            "critical-path profile, {}: CP {} {u}, ends at {}; CPU {} {u}; regions by nesting, siblings by CP share\n",
            self.source,
            unit.fmt(self.length),
            self.ends_at,
            unit.fmt(self.cpu_total),
            u = unit.name()
        );
        let parent = |r: &ProfileRow| parents.get(r.id as usize).copied().flatten();
        // Depth-first order, siblings by decreasing CP share, then CPU.
        let mut order: Vec<(usize, &ProfileRow)> = Vec::new();
        fn visit<'a>(
            rows: &'a [ProfileRow],
            of: Option<u32>,
            depth: usize,
            parent: &dyn Fn(&ProfileRow) -> Option<u32>,
            order: &mut Vec<(usize, &'a ProfileRow)>,
        ) {
            let mut kids: Vec<&ProfileRow> = rows.iter().filter(|r| parent(r) == of).collect();
            kids.sort_by(|a, b| {
                (b.cp_inclusive, b.cpu_inclusive)
                    .cmp(&(a.cp_inclusive, a.cpu_inclusive))
                    .then(a.id.cmp(&b.id))
            });
            for k in kids {
                order.push((depth, k));
                if depth < 64 {
                    visit(rows, Some(k.id), depth + 1, parent, order);
                }
            }
        }
        visit(&self.rows, None, 0, &parent, &mut order);
        let width = order
            .iter()
            .map(|(d, r)| 2 * d + r.region.chars().count())
            .max()
            .unwrap_or(0)
            .max(17);
        let whatif = self.rows.iter().any(|r| r.whatif.is_some());
        let _ = write!(
            out,
            "{:<width$}  {:>11} {:>5}  {:>11} {:>5}  {:>11} {:>5}  {:>11} {:>5}  {:>11} {:>5}",
            "region", "CP", "%", "CP excl", "%", "CPU", "%", "CPU excl", "%", "zero-gain", "%"
        );
        if whatif {
            let _ = write!(out, "  {:>11} {:>5}", "what-if", "%");
        }
        out.push('\n');
        let cell = |v: Option<i64>, whole: i64| match v {
            Some(v) => format!("{:>11} {:>5}", unit.fmt(v), percent(v, whole)),
            None => format!("{:>11} {:>5}", "-", "-"),
        };
        for (depth, r) in &order {
            let name = format!("{}{}", "  ".repeat(*depth), r.region);
            let _ = write!(
                out,
                "{:<width$}  {}  {}  {}  {}  {}",
                name,
                cell(r.cp_inclusive, self.length),
                cell(r.cp_exclusive, self.length),
                cell(Some(r.cpu_inclusive), self.cpu_total),
                cell(Some(r.cpu_exclusive), self.cpu_total),
                cell(r.zero, self.length),
            );
            if whatif {
                let _ = write!(out, "  {}", cell(r.whatif, self.length));
            }
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{:<width$}  {}",
            "(transfer)",
            cell(Some(self.transfer), self.length)
        );
        let top: Option<i64> = order
            .iter()
            .filter(|(d, _)| *d == 0)
            .map(|(_, r)| r.cp_inclusive)
            .sum();
        if let Some(top) = top {
            let _ = writeln!(
                out,
                "{:<width$}  {}",
                "(outside regions)",
                cell(Some(self.length - self.transfer - top), self.length)
            );
        }
        if self.uncovered > 0 {
            let _ = writeln!(
                out,
                "{} regions beyond the kernel's {SELECTED} selected (program order) have no online CP columns",
                self.uncovered
            );
        }
        out
    }
}

impl fmt::Display for CpProfile {
    /// Every region at top level (without the program, nesting is unknown).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_tree(&[]))
    }
}

/// The online profile of a run and the offline one of its truth.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProfileComparison {
    /// From the measured run's timestamped kernels (R7, R10).
    pub online: CpProfile,
    /// From the truth run's activity graph, with what-if re-simulations.
    pub offline: CpProfile,
}

impl fmt::Display for ProfileComparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.online)?;
        writeln!(f)?;
        write!(f, "{}", self.offline)
    }
}

fn sorted(mut rows: Vec<ProfileRow>) -> Vec<ProfileRow> {
    // 003 Fig. 7: ordered by decreasing CPU time.
    rows.sort_by(|a, b| {
        b.cpu_inclusive
            .cmp(&a.cpu_inclusive)
            .then_with(|| a.id.cmp(&b.id))
    });
    rows
}

fn location_name(program: &Program, l: LocationId) -> String {
    program
        .locations
        .get(l as usize)
        .map_or_else(|| format!("location {l}"), |s| s.name.clone())
}

/// The online global path of a run with kernels (R10): every location's
/// final snapshot folded with `Snapshot::combine`.
pub fn online_path(run: &RunResult) -> Option<Snapshot<SELECTED>> {
    let paths = run.paths.as_ref()?;
    Some(paths.iter().fold(Snapshot::ZERO, |acc, s| acc.combine(s)))
}

fn cpu_sum(run: &RunResult) -> CpuTimes {
    let mut sum = CpuTimes::default();
    for c in run.cpu.iter().flatten() {
        add_cpu(&mut sum, c);
    }
    sum
}

/// The online profile of a run with kernels: critical path, shares and
/// nets of the selected regions from the timestamped kernels' final
/// snapshots combined over locations (R7, R10), CPU time from their
/// compensated times.
pub fn online_profile(program: &Program, measured: &RunResult) -> CpProfile {
    let path = online_path(measured).unwrap_or(Snapshot::ZERO);
    let cpu = cpu_sum(measured);
    let rows = program
        .regions
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let c = cpu.regions.get(k).copied().unwrap_or_default();
            let selected = k < SELECTED;
            ProfileRow {
                id: k as u32,
                region: name.clone(),
                cp_inclusive: selected.then(|| path.inclusive[k]),
                cp_exclusive: selected.then(|| path.exclusive[k]),
                cpu_inclusive: c.inclusive,
                cpu_exclusive: c.exclusive,
                zero: selected.then(|| path.longest - path.net[k]),
                whatif: None,
            }
        })
        .collect();
    CpProfile {
        source: "online (measured run, timestamped kernels)".into(),
        length: path.longest,
        transfer: path.transfer,
        ends_at: location_name(program, path.location),
        cpu_total: cpu.total,
        rows: sorted(rows),
        uncovered: program.regions.len().saturating_sub(SELECTED),
    }
}

/// The offline profile of a truth run kept with a trace: every region's
/// shares, CPU time and zeroing from its activity graph and, when
/// `whatif`, each region's what-if re-simulation.
pub fn offline_profile(
    program: &Program,
    truth: &RunResult,
    whatif_runs: bool,
) -> Result<CpProfile, SimError> {
    let activity = truth
        .activity
        .as_ref()
        .ok_or_else(|| graph_error("the run kept no trace with kernels".into()))?;
    let o = offline(activity, program.regions.len())?;
    let end = truth.ends.iter().copied().max().unwrap_or(0) as i64;
    let mut rows = Vec::with_capacity(program.regions.len());
    for (k, name) in program.regions.iter().enumerate() {
        let c = o.cpu.regions.get(k).copied().unwrap_or_default();
        let whatif = if whatif_runs {
            Some(end - whatif(program, k as u32)? as i64)
        } else {
            None
        };
        rows.push(ProfileRow {
            id: k as u32,
            region: name.clone(),
            cp_inclusive: Some(o.path.inclusive[k]),
            cp_exclusive: Some(o.path.exclusive[k]),
            cpu_inclusive: c.inclusive,
            cpu_exclusive: c.exclusive,
            zero: Some(o.path.longest - o.net[k]),
            whatif,
        });
    }
    Ok(CpProfile {
        source: "offline (truth run's activity graph, what-if re-simulation)".into(),
        length: o.path.longest,
        transfer: o.path.transfer,
        ends_at: location_name(program, o.path.location),
        cpu_total: o.cpu.total,
        rows: sorted(rows),
        uncovered: 0,
    })
}

/// Runs `program` as the truth (with its activity graph) and as the
/// measured run, and returns the critical-path profile of both: online
/// from the measured run's kernels, offline from the truth with a what-if
/// re-simulation per region. The `heisen simulate` table under Table 1.
pub fn profile(program: &Program) -> Result<ProfileComparison, SimError> {
    let truth = run(
        program,
        RunOptions {
            trace: true,
            ..RunOptions::TRUTH
        },
    )?;
    let measured = run(program, RunOptions::MEASURED)?;
    Ok(ProfileComparison {
        online: online_profile(program, &measured),
        offline: offline_profile(program, &truth, true)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::FREE;
    use crate::program::{ProgramBuilder, Source};

    fn truth(program: &Program) -> RunResult {
        run(
            program,
            RunOptions {
                trace: true,
                ..RunOptions::TRUTH
            },
        )
        .expect("runs")
    }

    mod longest_path {
        use super::*;

        /// r0: f { 1000 }, send to r1; r1: g { 200 }, receive, g { 300 }.
        fn message() -> Program {
            let mut b = ProgramBuilder::new("message");
            let (f, g) = (b.region("f"), b.region("g"));
            b.network(FREE);
            let (r0, r1) = (b.rank("r0"), b.rank("r1"));
            b.on(r0)
                .region(f, |b| {
                    b.compute(1000);
                })
                .send(r1, 8, 0);
            b.on(r1)
                .region(g, |b| {
                    b.compute(200);
                })
                .recv(Source::Location(r0), 8, Some(0))
                .region(g, |b| {
                    b.compute(300);
                });
            b.build().expect("valid")
        }

        #[test]
        fn follows_the_message_and_attributes_its_transfer() {
            // 003 Fig. 1: the path runs f (1000) -> message (500) -> g (300);
            // r1's first 200 ns in g waited, off the path (R7).
            let p = message();
            let o = offline(truth(&p).activity.as_deref().expect("graph"), 2).expect("walks");
            assert_eq!(
                (o.path.longest, o.path.transfer, o.path.location),
                (1800, 500, 1)
            );
            assert_eq!(
                (o.path.inclusive.clone(), o.path.exclusive.clone()),
                (vec![1000, 300], vec![1000, 300])
            );
            assert_eq!(o.cpu.total, 1500);
            assert_eq!(
                o.cpu.regions,
                vec![
                    RegionTime {
                        inclusive: 1000,
                        exclusive: 1000
                    },
                    RegionTime {
                        inclusive: 500,
                        exclusive: 500
                    },
                ]
            );
        }

        #[test]
        fn zeroing_is_the_what_if_reduction() {
            // 003 Fig. 4: with f free the message leaves at 0, r1 waits until
            // 500 and ends at 800: n[f] = 800, L - n[f] = 1000. With g free
            // the path is 1000 + 500: n[g] = 1500.
            let p = message();
            let o = offline(truth(&p).activity.as_deref().expect("graph"), 2).expect("walks");
            assert_eq!(o.net, vec![800, 1500]);
            assert_eq!((whatif(&p, 0), whatif(&p, 1)), (Ok(800), Ok(1500)));
        }

        #[test]
        fn equal_paths_go_to_the_lower_location() {
            // R7: r1 and r2 reach r0 with equal paths (1000 + 500); the
            // lower location id, r1, wins, so its region gets the share.
            let mut b = ProgramBuilder::new("tie");
            let (f, g) = (b.region("f"), b.region("g"));
            b.network(FREE);
            let (r0, r1, r2) = (b.rank("r0"), b.rank("r1"), b.rank("r2"));
            b.on(r0)
                .irecv(Source::Location(r2), 8, Some(0), 2)
                .irecv(Source::Location(r1), 8, Some(0), 1)
                .waitall();
            for (r, region) in [(r2, g), (r1, f)] {
                b.on(r).region(region, |b| {
                    b.compute(1000);
                });
                b.on(r).send(r0, 8, 0);
            }
            let p = b.build().expect("valid");
            let o = offline(truth(&p).activity.as_deref().expect("graph"), 2).expect("walks");
            assert_eq!((o.path.longest, o.path.location), (1500, 0));
            assert_eq!(o.path.inclusive, vec![1000, 0]);
            let measured = run(&p, RunOptions::MEASURED).expect("runs");
            let online = online_path(&measured).expect("kernels ran");
            assert_eq!(
                (online.longest, online.inclusive[0], online.inclusive[1]),
                (1500, 1000, 0)
            );
        }
    }

    mod whatif {
        use super::*;

        #[test]
        fn removed_work_keeps_the_other_draws() {
            // The zeroed region's draws still happen, so the next compute
            // draws what it drew in the original run.
            let mut b = ProgramBuilder::new("draws");
            let (f, g) = (b.region("f"), b.region("g"));
            let r0 = b.rank("r0");
            let uniform = Duration::Uniform {
                low: 100,
                high: 10_000,
            };
            b.on(r0)
                .region(f, |b| {
                    b.compute_dist(uniform).compute_dist(Duration::Normal {
                        mean: 500.0,
                        sd: 100.0,
                    });
                })
                .region(g, |b| {
                    b.compute_dist(uniform);
                });
            let p = b.build().expect("valid");
            let o = offline(truth(&p).activity.as_deref().expect("graph"), 2).expect("walks");
            let g_alone = o.cpu.regions[1].inclusive as u64;
            assert_eq!(whatif(&p, 0), Ok(g_alone));
        }
    }

    mod profile_table {
        use super::*;

        #[test]
        fn rows_follow_cpu_time_and_say_what_the_kernel_did_not_select() {
            // 003 Fig. 7: ordered by decreasing CPU time.
            let mut b = ProgramBuilder::new("many");
            let regions: Vec<u32> = (0..SELECTED as u32 + 2)
                .map(|i| b.region(&format!("r{i}")))
                .collect();
            b.network(FREE);
            let r0 = b.rank("r0");
            for (i, &r) in regions.iter().enumerate() {
                b.on(r0).region(r, |b| {
                    b.compute(100 * (i as u64 + 1));
                });
            }
            let p = b.build().expect("valid");
            let c = profile(&p).expect("runs");
            assert_eq!(c.online.uncovered, 2);
            assert_eq!(c.offline.uncovered, 0);
            let first = &c.online.rows[0];
            assert_eq!(
                (first.id as usize, first.cp_inclusive),
                (SELECTED + 1, None)
            );
            let selected = c.online.rows.iter().find(|r| r.id == 0).expect("row");
            assert_eq!(
                (selected.cp_inclusive, selected.zero),
                (Some(100), Some(100))
            );
            let text = c.to_string();
            assert!(
                text.contains("2 regions beyond the kernel's 16 selected"),
                "{text}"
            );
            assert!(text.contains("(transfer)"), "{text}");
            let offline_first = &c.offline.rows[0];
            assert_eq!(offline_first.whatif, offline_first.zero);
        }
    }
}
