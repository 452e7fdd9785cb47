//! Reads TOML scenarios (documented in `docs/scenario.md`, example in
//! `backend-sim/scenarios/`) into the same [`Program`] model the builder
//! writes. Every error names the file, the line and what was expected.

use serde::Deserialize;
use toml::Spanned;

use heisen_core::{Calibration, Cost, TransferModel};

use crate::input::{InputError, line_of};
use crate::program::{
    Collective, Dest, Duration, Kind, LocationSpec, MAX_LOCATIONS, Op, Program, Source,
};
use crate::transfer::{LogGops, Network};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    name: Option<String>,
    seed: Option<u64>,
    network: Option<Spanned<NetworkSpec>>,
    calibration: Option<CalibrationSpec>,
    #[serde(default)]
    location: Vec<Spanned<LocationFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NetworkSpec {
    model: Option<String>,
    #[serde(rename = "L")]
    latency_l: Option<u64>,
    o: Option<u64>,
    g: Option<u64>,
    #[serde(rename = "G")]
    gap_per_byte: Option<u64>,
    #[serde(rename = "O")]
    overhead_per_byte: Option<u64>,
    #[serde(rename = "S")]
    eager_limit: Option<u64>,
    latency: Option<u64>,
    per_byte_ps: Option<u64>,
    copy_per_byte_ps: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CalibrationSpec {
    enter: Option<u64>,
    enter_inside: Option<u64>,
    exit: Option<u64>,
    exit_inside: Option<u64>,
    send: Option<u64>,
    merge: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LocationFile {
    name: String,
    kind: Option<Spanned<String>>,
    count: Option<u32>,
    spawned: Option<bool>,
    #[serde(default)]
    ops: Vec<Spanned<OpFile>>,
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Peer {
    Index(u32),
    Name(String),
}

#[derive(Deserialize, Clone, Copy)]
#[serde(untagged)]
enum ComputeFile {
    Fixed(u64),
    Dist(DistFile),
}

#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct DistFile {
    uniform: Option<[u64; 2]>,
    normal: Option<[f64; 2]>,
    exponential: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpFile {
    compute: Option<ComputeFile>,
    region: Option<String>,
    #[serde(rename = "loop")]
    repeat: Option<u64>,
    ops: Option<Vec<Spanned<OpFile>>>,
    send: Option<Peer>,
    recv: Option<Peer>,
    isend: Option<Peer>,
    irecv: Option<Peer>,
    sendrecv: Option<Peer>,
    from: Option<Peer>,
    bytes: Option<u64>,
    recv_bytes: Option<u64>,
    tag: Option<u32>,
    request: Option<u32>,
    wait: Option<u32>,
    waitall: Option<bool>,
    barrier: Option<bool>,
    bcast: Option<Peer>,
    scatter: Option<Peer>,
    gather: Option<Peer>,
    reduce: Option<Peer>,
    allreduce: Option<bool>,
    alltoall: Option<bool>,
    lock: Option<u32>,
    unlock: Option<u32>,
    thread_barrier: Option<u32>,
    count: Option<u32>,
    enqueue: Option<u32>,
    dequeue: Option<u32>,
    spawn: Option<Peer>,
    join: Option<Peer>,
}

const VERBS: &str = "compute, region, loop, send, recv, isend, irecv, sendrecv, wait, waitall, barrier, bcast, \
                     scatter, gather, reduce, allreduce, alltoall, lock, unlock, thread_barrier, enqueue, dequeue, spawn, join";

struct Reader<'a> {
    file: &'a str,
    text: &'a str,
    names: Vec<String>,
    regions: Vec<String>,
    /// The path of the operation being read (indices into nested bodies).
    path: Vec<usize>,
    /// The line of every operation of the location being read, by path.
    lines: Vec<(Vec<usize>, usize)>,
}

impl Reader<'_> {
    fn error(&self, span: &core::ops::Range<usize>, message: impl Into<String>) -> InputError {
        InputError::new(self.file, line_of(self.text, span.start), message)
    }

    fn location(
        &self,
        span: &core::ops::Range<usize>,
        peer: &Peer,
        role: &str,
    ) -> Result<u32, InputError> {
        match peer {
            Peer::Index(i) if (*i as usize) < self.names.len() => Ok(*i),
            Peer::Index(i) => Err(self.error(
                span,
                format!(
                    "{role}: location {i} does not exist (expected 0..{})",
                    self.names.len().saturating_sub(1)
                ),
            )),
            Peer::Name(n) => self
                .names
                .iter()
                .position(|x| x == n)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    self.error(
                        span,
                        format!(
                            "{role}: no location is named {n:?} (expected one of {:?})",
                            self.names
                        ),
                    )
                }),
        }
    }

    fn source(&self, span: &core::ops::Range<usize>, peer: &Peer) -> Result<Source, InputError> {
        match peer {
            Peer::Name(n) if n == "any" => Ok(Source::Any),
            p => self
                .location(span, p, "receive source")
                .map(Source::Location),
        }
    }

    fn dest(&self, span: &core::ops::Range<usize>, peer: &Peer) -> Result<Dest, InputError> {
        match peer {
            Peer::Name(n) if n == "last" => Ok(Dest::LastSource),
            p => self
                .location(span, p, "send destination")
                .map(Dest::Location),
        }
    }

    fn region(&mut self, name: &str) -> u32 {
        match self.regions.iter().position(|r| r == name) {
            Some(i) => i as u32,
            None => {
                self.regions.push(name.to_string());
                (self.regions.len() - 1) as u32
            }
        }
    }

    fn ops(&mut self, ops: &[Spanned<OpFile>], loops: &mut u32) -> Result<Vec<Op>, InputError> {
        let mut out = Vec::with_capacity(ops.len());
        for (i, op) in ops.iter().enumerate() {
            self.path.push(i);
            let line = line_of(self.text, op.span().start);
            self.lines.push((self.path.clone(), line));
            out.push(self.op(op, loops)?);
            self.path.pop();
        }
        Ok(out)
    }

    // Long: one arm per scenario verb, each a few lines of checks; a table read top to bottom is easier to check than helpers spread out.
    fn op(&mut self, spanned: &Spanned<OpFile>, loops: &mut u32) -> Result<Op, InputError> {
        let span = spanned.span();
        let o = spanned.get_ref();
        let verbs: Vec<&str> = [
            ("compute", o.compute.is_some()),
            ("region", o.region.is_some()),
            ("loop", o.repeat.is_some()),
            ("send", o.send.is_some()),
            ("recv", o.recv.is_some()),
            ("isend", o.isend.is_some()),
            ("irecv", o.irecv.is_some()),
            ("sendrecv", o.sendrecv.is_some()),
            ("wait", o.wait.is_some()),
            ("waitall", o.waitall.is_some()),
            ("barrier", o.barrier.is_some()),
            ("bcast", o.bcast.is_some()),
            ("scatter", o.scatter.is_some()),
            ("gather", o.gather.is_some()),
            ("reduce", o.reduce.is_some()),
            ("allreduce", o.allreduce.is_some()),
            ("alltoall", o.alltoall.is_some()),
            ("lock", o.lock.is_some()),
            ("unlock", o.unlock.is_some()),
            ("thread_barrier", o.thread_barrier.is_some()),
            ("enqueue", o.enqueue.is_some()),
            ("dequeue", o.dequeue.is_some()),
            ("spawn", o.spawn.is_some()),
            ("join", o.join.is_some()),
        ]
        .into_iter()
        .filter(|v| v.1)
        .map(|v| v.0)
        .collect();
        let [verb] = verbs[..] else {
            return Err(self.error(
                &span,
                format!(
                    "expected exactly one operation key ({VERBS}), found {}",
                    if verbs.is_empty() {
                        "none".to_string()
                    } else {
                        verbs.join(", ")
                    }
                ),
            ));
        };
        let bytes = o.bytes.unwrap_or(0);
        let tag = o.tag.unwrap_or(0);
        let need_ops = |r: &Self| {
            o.ops.as_ref().ok_or_else(|| {
                r.error(
                    &span,
                    format!("a {verb} needs `ops = [...]`, the operations inside it"),
                )
            })
        };
        let request = |r: &Self| {
            o.request
                .ok_or_else(|| r.error(&span, format!("{verb} needs `request = N` to wait for it")))
        };
        let op = match verb {
            "compute" => {
                let d = match o.compute {
                    Some(ComputeFile::Fixed(ns)) => Duration::Fixed(ns),
                    Some(ComputeFile::Dist(DistFile {
                        uniform: Some([low, high]),
                        normal: None,
                        exponential: None,
                    })) => Duration::Uniform { low, high },
                    Some(ComputeFile::Dist(DistFile {
                        uniform: None,
                        normal: Some([mean, sd]),
                        exponential: None,
                    })) => Duration::Normal { mean, sd },
                    Some(ComputeFile::Dist(DistFile {
                        uniform: None,
                        normal: None,
                        exponential: Some(mean),
                    })) => Duration::Exponential { mean },
                    _ => {
                        return Err(self.error(
                            &span,
                            "compute expects ns, or one of { uniform = [low, high] }, { normal = [mean, sd] }, { exponential = mean }",
                        ));
                    }
                };
                Op::Compute(d)
            }
            "region" => {
                let body = need_ops(self)?;
                let region = self.region(o.region.as_deref().unwrap_or_default());
                Op::Region {
                    region,
                    body: self.ops(body, loops)?,
                }
            }
            "loop" => {
                let body = need_ops(self)?;
                let id = *loops;
                *loops += 1;
                Op::Loop {
                    id,
                    count: o.repeat.unwrap_or(0),
                    body: self.ops(body, loops)?,
                }
            }
            "send" => Op::Send {
                to: self.dest(&span, o.send.as_ref().unwrap_or(&Peer::Index(0)))?,
                bytes,
                tag,
            },
            "isend" => Op::Isend {
                to: self.dest(&span, o.isend.as_ref().unwrap_or(&Peer::Index(0)))?,
                bytes,
                tag,
                request: request(self)?,
            },
            "recv" => Op::Recv {
                from: self.source(&span, o.recv.as_ref().unwrap_or(&Peer::Index(0)))?,
                bytes,
                tag: o.tag,
            },
            "irecv" => Op::Irecv {
                from: self.source(&span, o.irecv.as_ref().unwrap_or(&Peer::Index(0)))?,
                bytes,
                tag: o.tag,
                request: request(self)?,
            },
            "sendrecv" => Op::Sendrecv {
                to: self.dest(&span, o.sendrecv.as_ref().unwrap_or(&Peer::Index(0)))?,
                send_bytes: bytes,
                from: match &o.from {
                    Some(p) => self.source(&span, p)?,
                    None => {
                        return Err(self.error(
                            &span,
                            "sendrecv needs `from = LOCATION`, where it receives from",
                        ));
                    }
                },
                recv_bytes: o.recv_bytes.unwrap_or(bytes),
                tag,
            },
            "wait" => Op::Wait {
                request: o.wait.unwrap_or(0),
            },
            "waitall" => Op::WaitAll,
            "barrier" | "allreduce" | "alltoall" => {
                let kind = match verb {
                    "barrier" => Collective::Barrier,
                    "allreduce" => Collective::Allreduce,
                    _ => Collective::Alltoall,
                };
                Op::Collective {
                    kind,
                    root: 0,
                    bytes,
                }
            }
            "bcast" | "scatter" | "gather" | "reduce" => {
                let (kind, peer) = match verb {
                    "bcast" => (Collective::Bcast, &o.bcast),
                    "scatter" => (Collective::Scatter, &o.scatter),
                    "gather" => (Collective::Gather, &o.gather),
                    _ => (Collective::Reduce, &o.reduce),
                };
                let root = self.location(
                    &span,
                    peer.as_ref().unwrap_or(&Peer::Index(0)),
                    "collective root",
                )?;
                Op::Collective { kind, root, bytes }
            }
            "lock" => Op::Lock {
                lock: o.lock.unwrap_or(0),
            },
            "unlock" => Op::Unlock {
                lock: o.unlock.unwrap_or(0),
            },
            "thread_barrier" => Op::ThreadBarrier {
                barrier: o.thread_barrier.unwrap_or(0),
                count: o.count.ok_or_else(|| {
                    self.error(&span, "thread_barrier needs `count = N`, its participants")
                })?,
            },
            "enqueue" => Op::Enqueue {
                queue: o.enqueue.unwrap_or(0),
            },
            "dequeue" => Op::Dequeue {
                queue: o.dequeue.unwrap_or(0),
            },
            "spawn" => Op::Spawn {
                child: self.location(
                    &span,
                    o.spawn.as_ref().unwrap_or(&Peer::Index(0)),
                    "spawn",
                )?,
            },
            _ => Op::Join {
                child: self.location(&span, o.join.as_ref().unwrap_or(&Peer::Index(0)), "join")?,
            },
        };
        Ok(op)
    }
}

/// Where each operation of each location is written: per location, the
/// path of every operation (indices into nested bodies, as
/// [`crate::engine::call_sites`] gives them) and its 1-based line.
pub type OpLines = Vec<std::sync::Arc<Vec<(Vec<usize>, usize)>>>;

/// Parses a TOML scenario; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Program, InputError> {
    parse_with_lines(file, text).map(|(p, _)| p)
}

/// [`parse`], with the line of every operation.
// Long: the scenario file's sections in the order they are checked, with one error path; each section is a few lines.
pub fn parse_with_lines(file: &str, text: &str) -> Result<(Program, OpLines), InputError> {
    let scenario: ScenarioFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(0, |s| line_of(text, s.start));
        InputError::new(
            file,
            line,
            in_user_terms(text, e.span(), e.message().trim()),
        )
    })?;
    let mut names = Vec::new();
    let total: u64 = scenario
        .location
        .iter()
        .map(|l| u64::from(l.get_ref().count.unwrap_or(1)))
        .sum();
    if total > MAX_LOCATIONS {
        return Err(InputError::new(
            file,
            0,
            format!("{total} locations: at most {MAX_LOCATIONS} are allowed"),
        ));
    }
    check_names(file, text, &scenario.location)?;
    for loc in &scenario.location {
        let l = loc.get_ref();
        match l.count {
            None | Some(1) => names.push(l.name.clone()),
            Some(0) => {
                return Err(InputError::new(
                    file,
                    line_of(text, loc.span().start),
                    "count = 0: a location group needs at least one member",
                ));
            }
            Some(n) => names.extend((1..=n).map(|i| format!("{} {i}", l.name))),
        }
    }
    if names.is_empty() {
        return Err(InputError::new(
            file,
            0,
            "no [[location]]: a scenario needs at least one location",
        ));
    }
    let mut reader = Reader {
        file,
        text,
        names,
        regions: Vec::new(),
        path: Vec::new(),
        lines: Vec::new(),
    };
    let mut locations = Vec::new();
    let mut lines = Vec::new();
    // Loop ids are numbered across the whole file, in order.
    let mut loops = 0;
    for loc in &scenario.location {
        let l = loc.get_ref();
        let kind = match l.kind.as_ref().map(|k| (k.get_ref().as_str(), k.span())) {
            None | Some(("rank", _)) => Kind::Rank,
            Some(("thread", _)) => Kind::Thread,
            Some((other, span)) => {
                return Err(reader.error(
                    &span,
                    format!("kind = {other:?}: expected \"rank\" or \"thread\""),
                ));
            }
        };
        let body = reader.ops(&l.ops, &mut loops)?;
        let count = l.count.unwrap_or(1);
        let group = std::sync::Arc::new(core::mem::take(&mut reader.lines));
        lines.extend((0..count).map(|_| std::sync::Arc::clone(&group)));
        for i in 1..=count {
            let name = if count == 1 {
                l.name.clone()
            } else {
                format!("{} {i}", l.name)
            };
            locations.push(LocationSpec {
                name,
                kind,
                spawned: l.spawned.unwrap_or(false),
                body: body.clone(),
            });
        }
    }
    let network = match &scenario.network {
        None => Network::default(),
        Some(n) => network(file, text, n)?,
    };
    let c = scenario.calibration.unwrap_or(CalibrationSpec {
        enter: None,
        enter_inside: None,
        exit: None,
        exit_inside: None,
        send: None,
        merge: None,
    });
    let calibration = Calibration {
        enter: Cost {
            whole: c.enter.unwrap_or(0),
            inside: c.enter_inside.unwrap_or(0),
        },
        exit: Cost {
            whole: c.exit.unwrap_or(0),
            inside: c.exit_inside.unwrap_or(0),
        },
        send: c.send.unwrap_or(0),
        merge: c.merge.unwrap_or(0),
        sample: 0,
    };
    let program = Program {
        name: scenario.name.unwrap_or_else(|| file.to_string()),
        regions: reader.regions,
        locations,
        seed: scenario.seed.unwrap_or(0),
        network,
        calibration,
    };
    program
        .validate()
        .map_err(|e| InputError::new(file, 0, e))?;
    Ok((program, lines))
}

/// The TOML reader's message (serde's vocabulary: `u64`, untagged enums)
/// in the scenario's terms: the key and value as written, and what is
/// allowed there (docs/scenario.md).
fn in_user_terms(text: &str, span: Option<core::ops::Range<usize>>, message: &str) -> String {
    let Some(span) = span else {
        return message.to_string();
    };
    let value = text.get(span.clone()).unwrap_or("").trim();
    // The key: the last `name =` before the value on its line.
    let before = text.get(..span.start).unwrap_or("");
    let line = before.rsplit('\n').next().unwrap_or("");
    let key = line
        .trim_end()
        .strip_suffix('=')
        .map(|k| {
            k.trim_end()
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("")
        })
        .filter(|k| !k.is_empty());
    let what = match key {
        Some(k) => format!("{k} = {value}"),
        None => value.to_string(),
    };
    let allowed = if message.contains("untagged enum ComputeFile") {
        "a compute time is ns (a whole number, 0 or more) or one of { uniform = [low, high] }, { normal = [mean, sd] }, { exponential = mean }"
    } else if message.contains("untagged enum Peer") {
        "a location is its name (a string, e.g. \"master\") or its index (0 or more); a receive also takes \"any\", a send \"last\""
    } else if message.contains("expected u64") {
        "expected a whole number, 0 or more"
    } else if message.contains("expected u32") {
        "expected a whole number from 0 to 4294967295"
    } else if message.contains("expected f64") {
        "expected a number"
    } else {
        return message.to_string();
    };
    format!("{what}: {allowed}")
}

/// Refuses two locations with the same name (names are how operations
/// and the output refer to locations): a `count = N` group's members are
/// "NAME 1" .. "NAME N".
fn check_names(
    file: &str,
    text: &str,
    locations: &[Spanned<LocationFile>],
) -> Result<(), InputError> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for loc in locations {
        let l = loc.get_ref();
        let line = line_of(text, loc.span().start);
        let names: Vec<String> = match l.count {
            None | Some(1) => vec![l.name.clone()],
            Some(n) => (1..=n).map(|i| format!("{} {i}", l.name)).collect(),
        };
        for name in names {
            if let Some(first) = seen.insert(name.clone(), line) {
                return Err(InputError::new(
                    file,
                    line,
                    format!(
                        "a second location named {name:?} (the first is on line {first}): location names must differ"
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn network(file: &str, text: &str, n: &Spanned<NetworkSpec>) -> Result<Network, InputError> {
    let line = line_of(text, n.span().start);
    let s = n.get_ref();
    match s.model.as_deref().unwrap_or("loggops") {
        "loggops" => {
            if s.latency.is_some() || s.per_byte_ps.is_some() || s.copy_per_byte_ps.is_some() {
                return Err(InputError::new(
                    file,
                    line,
                    "latency/per_byte_ps/copy_per_byte_ps belong to model = \"contention-free\"; LogGOPS takes L, o, g, G, O, S",
                ));
            }
            let d = LogGops::default();
            Ok(Network::LogGops(LogGops {
                latency: s.latency_l.unwrap_or(d.latency),
                overhead: s.o.unwrap_or(d.overhead),
                gap: s.g.unwrap_or(d.gap),
                gap_per_byte: s.gap_per_byte.unwrap_or(d.gap_per_byte),
                overhead_per_byte: s.overhead_per_byte.unwrap_or(d.overhead_per_byte),
                eager_limit: s.eager_limit.unwrap_or(d.eager_limit),
            }))
        }
        "contention-free" => {
            if s.latency_l.is_some()
                || s.o.is_some()
                || s.g.is_some()
                || s.gap_per_byte.is_some()
                || s.overhead_per_byte.is_some()
                || s.eager_limit.is_some()
            {
                return Err(InputError::new(
                    file,
                    line,
                    "L, o, g, G, O, S belong to model = \"loggops\"; contention-free takes latency, per_byte_ps, copy_per_byte_ps",
                ));
            }
            Ok(Network::ContentionFree(TransferModel {
                latency: s.latency.unwrap_or(0),
                per_byte_ps: s.per_byte_ps.unwrap_or(0),
                copy_per_byte_ps: s.copy_per_byte_ps.unwrap_or(0),
            }))
        }
        other => Err(InputError::new(
            file,
            line,
            format!("model = {other:?}: expected \"loggops\" or \"contention-free\""),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::master_worker_default;

    fn error(text: &str) -> String {
        parse("s.toml", text).unwrap_err().to_string()
    }

    #[test]
    fn example_file_is_the_master_worker_builtin() {
        let text = include_str!("../scenarios/master-worker.toml");
        assert_eq!(
            parse("master-worker.toml", text).unwrap(),
            master_worker_default()
        );
    }

    #[test]
    fn every_operation_kind_reads() {
        let text = r#"
[network]
model = "contention-free"
latency = 500
[[location]]
name = "a"
ops = [
  { isend = "b", bytes = 8, tag = 1, request = 1 },
  { irecv = 1, bytes = 8, request = 2 },
  { wait = 1 }, { waitall = true },
  { sendrecv = "b", from = "b", bytes = 4, tag = 3 },
  { barrier = true }, { bcast = "a", bytes = 8 }, { scatter = 0 }, { gather = 1 }, { reduce = "b" },
  { allreduce = true, bytes = 8 }, { alltoall = true },
  { compute = { exponential = 10.0 } },
]
[[location]]
name = "b"
ops = [
  { recv = "a", bytes = 8, tag = 1 }, { send = 0, bytes = 8 },
  { sendrecv = "a", from = "a", bytes = 4, tag = 3 },
  { barrier = true }, { bcast = "a", bytes = 8 }, { scatter = 0 }, { gather = 1 }, { reduce = "b" },
  { allreduce = true, bytes = 8 }, { alltoall = true },
]
[[location]]
name = "t"
kind = "thread"
ops = [ { lock = 1 }, { unlock = 1 }, { enqueue = 0 }, { dequeue = 0 }, { spawn = "c" }, { join = "c" },
        { thread_barrier = 0, count = 1 } ]
[[location]]
name = "c"
kind = "thread"
spawned = true
ops = [ { compute = 5 } ]
"#;
        let p = parse("all.toml", text).unwrap();
        assert_eq!(p.locations.len(), 4);
        assert_eq!(p.locations[0].body.len(), 13);
        assert!(crate::engine::run(&p, crate::engine::RunOptions::TRUTH).is_ok());
    }

    #[test]
    fn errors_name_file_line_and_expectation() {
        let e = error("[[location]]\nname = \"a\"\nops = [\n  { compute = 5, send = 0 },\n]\n");
        assert!(
            e.starts_with("s.toml:4: expected exactly one operation key"),
            "{e}"
        );
        assert!(e.ends_with("found compute, send"), "{e}");
        let e =
            error("[[location]]\nname = \"a\"\nops = [\n  { send = \"nobody\", bytes = 8 },\n]\n");
        assert!(
            e.starts_with("s.toml:4: send destination: no location is named \"nobody\""),
            "{e}"
        );
        let e = error("[[location]]\nname = \"a\"\nops = [\n  { fly = 3 },\n]\n");
        assert!(e.starts_with("s.toml:4: unknown field `fly`"), "{e}");
        let e = error("[[location]]\nname = \"a\"\nkind = \"process\"\n");
        assert_eq!(
            e,
            "s.toml:3: kind = \"process\": expected \"rank\" or \"thread\""
        );
        let e = error("[network]\nmodel = \"loggops\"\nlatency = 3\n[[location]]\nname = \"a\"\n");
        assert!(e.starts_with("s.toml:1: latency/per_byte_ps"), "{e}");
        let e = error("seed = \"x\"\n");
        assert_eq!(
            e,
            "s.toml:1: seed = \"x\": expected a whole number, 0 or more"
        );
        let e = error("[[location]]\nname = \"a\"\nops = [ { compute = 9999999999999999 } ]\n");
        assert!(
            e.contains("compute = 9999999999999999 is larger than the largest allowed"),
            "{e}"
        );
        let e = error("name = \"empty\"\n");
        assert!(e.contains("no [[location]]"), "{e}");
        let e = error("[[location]]\nname = \"a\"\nops = [ { region = \"r\" } ]\n");
        assert!(
            e.starts_with("s.toml:3: a region needs `ops = [...]`"),
            "{e}"
        );
    }
}

#[cfg(test)]
mod files {
    use super::*;
    use crate::compare::compare;

    #[test]
    fn every_example_scenario_parses_and_runs() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.display().to_string();
            let program = parse(&name, &text).unwrap_or_else(|e| panic!("{e}"));
            let c = compare(&program).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                c.rows.iter().all(|r| r.measured >= r.truth),
                "{name}\n{}",
                c.table()
            );
            seen += 1;
        }
        assert!(seen >= 2);
    }
}
