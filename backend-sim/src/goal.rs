//! Reads LogGOPSim's GOAL text schedules unchanged (`num_ranks N`,
//! `rank r { … }`, `lX: send Nb to R tag T`, `recv Nb from R tag T`,
//! `calc N`, `lX requires lY`, `lX irequires lY`, `//` and `/* */`
//! comments), so that schedules from LogGOPSim's `schedgen` run here.
//!
//! A GOAL rank is a dependency graph. [`Schedule::to_graph`],
//! [`load_graph`] and [`load_file_graph`] (in chunks, for large files)
//! give it to the graph executor ([`engine::run_graph`]), which runs it as
//! LogGOPSim does (docs/goal.md). [`Schedule::to_program`] and
//! [`load_compiled`] give the earlier *sequence form* (the engine's
//! benches use it): each rank's operations in topological order
//! (file order among independent ones), sends and receives as nonblocking
//! requests, a wait right before the first operation that `requires` one,
//! and a wait for all at the end; it refuses `cpu`/`nic` above 0 and
//! equals LogGOPSim only when that order is LogGOPSim's.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::engine::{self, Code, Compiled, Edge, Graph, GraphOp, OpKind};
use crate::input::InputError;
use crate::program::{
    Dest, Duration, Kind, LocationSpec, MAX_BYTES, MAX_LOCATIONS, MAX_TIME, Op, Program, Source,
};
use crate::transfer::Network;

mod fast;

/// One GOAL operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoalOp {
    /// `send Nb to R tag T`.
    Send {
        /// Bytes.
        bytes: u64,
        /// Destination rank.
        to: u32,
        /// Tag.
        tag: u32,
    },
    /// `recv Nb from R tag T` (`-1`: any source / any tag).
    Recv {
        /// Bytes.
        bytes: u64,
        /// Source rank, `None` for any.
        from: Option<u32>,
        /// Tag, `None` for any.
        tag: Option<u32>,
    },
    /// `calc N`: N ns of CPU.
    Calc(u64),
}

/// One operation with its dependencies (indices into the rank's list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoalNode {
    /// The operation.
    pub op: GoalOp,
    /// Operations that must complete first (`requires`).
    pub requires: Vec<usize>,
    /// Operations that must start first (`irequires`).
    pub irequires: Vec<usize>,
    /// The CPU it runs on (`cpu N`, 0 if absent).
    pub cpu: u8,
    /// The NIC a send or receive uses (`nic N`, 0 if absent; a calc has none).
    pub nic: u8,
    /// Line of the operation in the file.
    pub line: usize,
}

/// A parsed GOAL schedule.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Schedule {
    /// Operations of each rank.
    pub ranks: Vec<Vec<GoalNode>>,
    /// The dependency lines of each rank, in file order (LogGOPSim keeps
    /// each operation's dependents in this order, docs/goal.md G2).
    pub edges: Vec<Vec<Edge>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token<'a> {
    Word(&'a str),
    Num(u64),
    AnyOne,
    Colon,
    Open,
    Close,
    Newline,
    End,
}

impl Token<'_> {
    fn describe(self) -> String {
        match self {
            Token::End => "the end of the file".into(),
            Token::Word(w) => format!("\"{w}\""),
            Token::Num(n) => format!("{n}"),
            Token::AnyOne => "-1".into(),
            Token::Colon => "\":\"".into(),
            Token::Open => "\"{\"".into(),
            Token::Close => "\"}\"".into(),
            Token::Newline => "the end of the line".into(),
        }
    }
}

/// A streaming lexer: the schedule is read token by token, so memory does
/// not grow with the file (schedules of 65,536 ranks are large).
struct Lexer<'a> {
    file: &'a str,
    text: &'a str,
    i: usize,
    line: usize,
    ended: bool,
}

impl<'a> Lexer<'a> {
    // Long: one arm per character class, as a lexer's table reads.
    fn next_token(&mut self) -> Result<(Token<'a>, usize), InputError> {
        let bytes = self.text.as_bytes();
        loop {
            let Some(&c) = bytes.get(self.i) else {
                // LogGOPSim's reader ends the file with a newline.
                if self.ended {
                    return Ok((Token::End, self.line));
                }
                self.ended = true;
                return Ok((Token::Newline, self.line));
            };
            let line = self.line;
            let token = match c {
                b'\n' => {
                    self.line += 1;
                    self.i += 1;
                    Token::Newline
                }
                b' ' | b'\t' | b'\r' => {
                    self.i += 1;
                    continue;
                }
                b'/' if bytes.get(self.i + 1) == Some(&b'/') => {
                    while self.i < bytes.len() && bytes[self.i] != b'\n' {
                        self.i += 1;
                    }
                    continue;
                }
                b'/' if bytes.get(self.i + 1) == Some(&b'*') => {
                    self.i += 2;
                    loop {
                        match bytes.get(self.i) {
                            None => {
                                return Err(InputError::new(
                                    self.file,
                                    line,
                                    "a /* comment is never closed (expected \"*/\")",
                                ));
                            }
                            Some(b'*') if bytes.get(self.i + 1) == Some(&b'/') => {
                                self.i += 2;
                                break;
                            }
                            Some(b'\n') => {
                                self.line += 1;
                                self.i += 1;
                            }
                            Some(_) => self.i += 1,
                        }
                    }
                    continue;
                }
                b':' => {
                    self.i += 1;
                    Token::Colon
                }
                b'{' => {
                    self.i += 1;
                    Token::Open
                }
                b'}' => {
                    self.i += 1;
                    Token::Close
                }
                b'-' if bytes.get(self.i + 1) == Some(&b'1')
                    && !bytes.get(self.i + 2).is_some_and(u8::is_ascii_digit) =>
                {
                    self.i += 2;
                    Token::AnyOne
                }
                b'0'..=b'9' => {
                    let start = self.i;
                    while self.i < bytes.len() && bytes[self.i].is_ascii_digit() {
                        self.i += 1;
                    }
                    let digits = &self.text[start..self.i];
                    let n = digits.parse::<u64>().map_err(|_| {
                        InputError::new(self.file, line, format!("number {digits} is too large"))
                    })?;
                    Token::Num(n)
                }
                b'-' if bytes.get(self.i + 1).is_some_and(u8::is_ascii_digit) => {
                    // Not -1 (handled above): say what was written.
                    let start = self.i;
                    self.i += 1;
                    while self.i < bytes.len() && bytes[self.i].is_ascii_digit() {
                        self.i += 1;
                    }
                    return Err(InputError::new(
                        self.file,
                        line,
                        format!(
                            "{}: a GOAL number is a whole number, 0 or more (-1 only as a source or tag meaning any)",
                            &self.text[start..self.i]
                        ),
                    ));
                }
                c if c.is_ascii_alphabetic() => {
                    let start = self.i;
                    while self.i < bytes.len()
                        && (bytes[self.i].is_ascii_alphanumeric() || bytes[self.i] == b'_')
                    {
                        self.i += 1;
                    }
                    Token::Word(&self.text[start..self.i])
                }
                _ => {
                    let ch = self.text[self.i..].chars().next().unwrap_or('?');
                    return Err(InputError::new(
                        self.file,
                        line,
                        format!("unexpected character {ch:?}"),
                    ));
                }
            };
            return Ok((token, line));
        }
    }
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    token: Token<'a>,
    line: usize,
}

impl<'a> Parser<'a> {
    fn new(file: &'a str, text: &'a str) -> Result<Self, InputError> {
        Self::at(file, text, 1)
    }

    /// A parser of `text`, whose first line is line `line` of the file.
    fn at(file: &'a str, text: &'a str, line: usize) -> Result<Self, InputError> {
        let mut lexer = Lexer {
            file,
            text,
            i: 0,
            line,
            ended: false,
        };
        let (token, line) = lexer.next_token()?;
        Ok(Parser { lexer, token, line })
    }

    fn file(&self) -> &'a str {
        self.lexer.file
    }

    fn advance(&mut self) -> Result<Token<'a>, InputError> {
        let t = self.token;
        (self.token, self.line) = self.lexer.next_token()?;
        Ok(t)
    }

    fn error(&self, expected: &str) -> InputError {
        InputError::new(
            self.file(),
            self.line,
            format!("expected {expected}, found {}", self.token.describe()),
        )
    }

    fn number(&mut self, what: &str) -> Result<u64, InputError> {
        match self.token {
            Token::Num(n) => {
                self.advance()?;
                Ok(n)
            }
            _ => Err(self.error(what)),
        }
    }

    fn number_or_any(&mut self, what: &str) -> Result<Option<u64>, InputError> {
        if self.token == Token::AnyOne {
            self.advance()?;
            return Ok(None);
        }
        self.number(what).map(Some)
    }

    fn word(&mut self, w: &str) -> Result<(), InputError> {
        match self.token {
            Token::Word(x) if x == w => {
                self.advance()?;
                Ok(())
            }
            _ => Err(self.error(&format!("\"{w}\""))),
        }
    }

    fn label(&mut self) -> Result<&'a str, InputError> {
        match self.token {
            Token::Word(x) => {
                self.advance()?;
                Ok(x)
            }
            _ => Err(self.error("a label")),
        }
    }

    fn end_of_line(&mut self, expected: &str) -> Result<(), InputError> {
        match self.token {
            Token::Newline => {
                self.advance()?;
                Ok(())
            }
            _ => Err(self.error(expected)),
        }
    }
}

fn rank_id(file: &str, line: usize, n: u64) -> Result<u32, InputError> {
    u32::try_from(n).map_err(|_| InputError::new(file, line, format!("rank {n} is too large")))
}

/// Longest `calc` (ns, about 36 years). Longer than a program's
/// operations may take (`MAX_TIME`, 18 minutes): LogGOPSim adds any calc
/// to its clock, and a traced application may compute longer than that
/// between two messages. The graph executor's clock stops a run past
/// `MAX_CLOCK` (2^62), so one such calc after any in-range time cannot
/// overflow. The sequence form keeps `MAX_TIME` (`to_program`).
pub const MAX_CALC: u64 = 1 << 60;

/// Parses a GOAL schedule; `file` names it in errors.
// Long: the top-level statements, then the checks that need the whole schedule (ranks defined once, peers below num_ranks).
pub fn parse(file: &str, text: &str) -> Result<Schedule, InputError> {
    let mut p = Parser::new(file, text)?;
    let mut num_ranks: Option<(u64, usize)> = None;
    let mut ranks: Vec<(u32, usize, Rank)> = Vec::new();
    loop {
        let line = p.line;
        match p.token {
            Token::End => break,
            Token::Newline => {
                p.advance()?;
            }
            Token::Word("num_ranks") => {
                p.advance()?;
                num_ranks = Some((p.number("the number of ranks after \"num_ranks\"")?, line));
            }
            Token::Word("rank") => {
                p.advance()?;
                let r = p.number("a rank number after \"rank\"")?;
                let r = rank_id(file, line, r)?;
                if p.token != Token::Open {
                    return Err(p.error("\"{\""));
                }
                p.advance()?;
                let rank = parse_rank(&mut p)?;
                ranks.push((r, line, rank));
            }
            _ => return Err(p.error("\"num_ranks\", \"rank\" or the end of the line")),
        }
    }
    let Some((n, n_line)) = num_ranks else {
        return Err(InputError::new(
            file,
            0,
            "no \"num_ranks N\" line: the number of ranks is undefined",
        ));
    };
    if n == 0 || n > MAX_LOCATIONS {
        return Err(InputError::new(
            file,
            n_line,
            format!("num_ranks {n} is out of range (expected 1..={MAX_LOCATIONS})"),
        ));
    }
    let mut schedule = Schedule {
        ranks: vec![Vec::new(); n as usize],
        edges: vec![Vec::new(); n as usize],
    };
    for (r, line, (nodes, edges)) in ranks {
        let Some(slot) = schedule.ranks.get_mut(r as usize) else {
            return Err(InputError::new(
                file,
                line,
                format!("rank {r} is not below num_ranks {n}"),
            ));
        };
        if !slot.is_empty() {
            return Err(InputError::new(
                file,
                line,
                format!("rank {r} is defined twice"),
            ));
        }
        *slot = nodes;
        schedule.edges[r as usize] = edges;
    }
    for nodes in &schedule.ranks {
        for node in nodes {
            let peer = match node.op {
                GoalOp::Send { to, .. } => Some(to),
                GoalOp::Recv { from, .. } => from,
                GoalOp::Calc(_) => None,
            };
            if let Some(peer) = peer.filter(|&x| u64::from(x) >= n) {
                return Err(InputError::new(
                    file,
                    node.line,
                    format!("peer rank {peer} is not below num_ranks {n}"),
                ));
            }
        }
    }
    Ok(schedule)
}

/// A rank's operations and its dependency lines in file order.
type Rank = (Vec<GoalNode>, Vec<Edge>);

fn parse_rank(p: &mut Parser<'_>) -> Result<Rank, InputError> {
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    // Labels are local to a rank (LogGOPSim clears its table per rank).
    let mut labels: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    loop {
        let line = p.line;
        match p.token {
            Token::End => return Err(p.error("\"}\" (did you forget a closing bracket?)")),
            Token::Newline => {
                p.advance()?;
            }
            Token::Close => {
                p.advance()?;
                return Ok((nodes, edges));
            }
            Token::Word("send" | "recv" | "calc") => {
                let (op, cpu, nic) = parse_op(p)?;
                nodes.push(GoalNode {
                    op,
                    requires: Vec::new(),
                    irequires: Vec::new(),
                    cpu,
                    nic,
                    line,
                });
            }
            Token::Word(label) => {
                p.advance()?;
                match p.token {
                    Token::Colon => {
                        p.advance()?;
                        let (op, cpu, nic) = parse_op(p)?;
                        if labels.insert(label, nodes.len()).is_some() {
                            return Err(InputError::new(
                                p.file(),
                                line,
                                format!("label {label} is defined twice"),
                            ));
                        }
                        nodes.push(GoalNode {
                            op,
                            requires: Vec::new(),
                            irequires: Vec::new(),
                            cpu,
                            nic,
                            line,
                        });
                    }
                    Token::Word(kind @ ("requires" | "irequires")) => {
                        p.advance()?;
                        let other = p.label()?;
                        p.end_of_line("the end of the line")?;
                        let edge = dependency(p.file(), line, &labels, (label, other), kind)?;
                        let (a, b) = (edge.dependent as usize, edge.dependency as usize);
                        if edge.start {
                            nodes[a].irequires.push(b);
                        } else {
                            nodes[a].requires.push(b);
                        }
                        edges.push(edge);
                    }
                    _ => return Err(p.error("\":\", \"requires\" or \"irequires\"")),
                }
            }
            _ => return Err(p.error("\"calc\", \"send\", \"recv\", a label or \"}\"")),
        }
    }
}

/// The dependency line `label kind other` at `line`, by the rank's
/// `labels`.
fn dependency(
    file: &str,
    line: usize,
    labels: &std::collections::HashMap<&str, usize>,
    (label, other): (&str, &str),
    kind: &str,
) -> Result<Edge, InputError> {
    let find = |name: &str| {
        labels.get(name).copied().ok_or_else(|| {
            InputError::new(
                file,
                line,
                format!("a dependency references label {name}, which is undefined"),
            )
        })
    };
    let (a, b) = (find(label)?, find(other)?);
    if a == b {
        return Err(InputError::new(
            file,
            line,
            format!("{label} depends on itself"),
        ));
    }
    Ok(Edge {
        dependent: a as u32,
        dependency: b as u32,
        start: kind == "irequires",
    })
}

/// An operation, its CPU and its NIC.
fn parse_op(p: &mut Parser<'_>) -> Result<(GoalOp, u8, u8), InputError> {
    let line = p.line;
    let kind = match p.token {
        Token::Word(k @ ("calc" | "send" | "recv")) => k,
        _ => return Err(p.error("\"calc\", \"send\" or \"recv\"")),
    };
    p.advance()?;
    let file = p.file();
    let op = if kind == "calc" {
        let n = p.number("an integer (calc time in ns)")?;
        if n > MAX_CALC {
            return Err(InputError::new(
                file,
                line,
                format!("calc {n} is longer than the largest allowed, {MAX_CALC} ns"),
            ));
        }
        let o = options(p, false)?;
        (GoalOp::Calc(n), o.cpu, o.nic)
    } else {
        let bytes = p.number("an integer (message size)")?;
        if bytes > MAX_BYTES {
            return Err(InputError::new(
                file,
                line,
                format!("{bytes} b is larger than the largest allowed message, {MAX_BYTES} b"),
            ));
        }
        p.word("b")?;
        let send = kind == "send";
        p.word(if send { "to" } else { "from" })?;
        let peer = p.number_or_any("an integer (peer rank)")?;
        let o = options(p, true)?;
        let tag = o.tag;
        let op = if send {
            let Some(to) = peer else {
                return Err(InputError::new(
                    file,
                    line,
                    "a send needs a destination rank, not -1",
                ));
            };
            GoalOp::Send {
                bytes,
                to: rank_id(file, line, to)?,
                tag: tag.map_or(0, |t| t.unwrap_or(u32::MAX)),
            }
        } else {
            // G10: LogGOPSim keeps `-1` as 4294967295 (`ANY_SOURCE`), so
            // `from 4294967295` is any source to it too.
            let from = peer
                .filter(|&r| r != u64::from(u32::MAX))
                .map(|r| rank_id(file, line, r))
                .transpose()?;
            GoalOp::Recv {
                bytes,
                from,
                tag: tag.unwrap_or(Some(0)),
            }
        };
        (op, o.cpu, o.nic)
    };
    Ok(op)
}

/// What follows an operation: its tag (`None` if absent, `Some(None)`
/// for `-1`), CPU and NIC.
struct Options {
    tag: Option<Option<u32>>,
    cpu: u8,
    nic: u8,
}

/// Reads `tag T`, `cpu C`, `nic N` (in that order) and the end of the line.
/// Several CPUs and NICs are read here and refused by
/// [`Schedule::to_program`], so that the parser takes every schedule
/// LogGOPSim takes.
fn options(p: &mut Parser<'_>, message: bool) -> Result<Options, InputError> {
    let mut tag = None;
    let mut units = [0u8; 2];
    let line = p.line;
    let file = p.file();
    if message && p.token == Token::Word("tag") {
        p.advance()?;
        let t = p.number_or_any("an integer (tag)")?;
        let t = t
            .map(|t| {
                u32::try_from(t)
                    .map_err(|_| InputError::new(file, line, format!("tag {t} is too large")))
            })
            .transpose()?;
        tag = Some(t);
    }
    for (what, unit) in ["cpu", "nic"].into_iter().zip(&mut units) {
        if !message && what == "nic" {
            break;
        }
        if p.token == Token::Word(what) {
            p.advance()?;
            let n = p.number(&format!("an integer ({what})"))?;
            // LogGOPSim keeps CPU and NIC numbers in 8 bits.
            *unit = u8::try_from(n)
                .map_err(|_| InputError::new(file, line, format!("{what} {n} is above 255")))?;
        }
    }
    let expected = if message {
        "\"tag\", \"cpu\", \"nic\" or the end of the line"
    } else {
        "\"cpu\" or the end of the line"
    };
    p.end_of_line(expected)?;
    let [cpu, nic] = units;
    Ok(Options { tag, cpu, nic })
}

impl Schedule {
    /// The schedule as a program on `network` (see the module doc for the
    /// mapping). Fails on a dependency cycle.
    pub fn to_program(&self, name: &str, network: Network) -> Result<Program, InputError> {
        let mut locations = Vec::with_capacity(self.ranks.len());
        for (r, nodes) in self.ranks.iter().enumerate() {
            locations.push(rank(r, convert(name, r, nodes)?));
        }
        Ok(goal_program(name, locations, network))
    }
}

impl Schedule {
    /// The schedule as a dependency graph, to run as LogGOPSim does
    /// ([`engine::run_graph`], docs/goal.md). `name` names the file in
    /// errors. Refuses what LogGOPSim would take silently: a dependency
    /// cycle (its operations would never run). A send to the sending rank
    /// is a message like any other, as in LogGOPSim (G6).
    pub fn to_graph(&self, name: &str) -> Result<Graph, InputError> {
        let mut graph = Graph::new();
        let mut ops = Vec::new();
        for (r, nodes) in self.ranks.iter().enumerate() {
            ops.clear();
            for node in nodes {
                ops.push(graph_op(node));
            }
            if topological(nodes).is_none() {
                return Err(InputError::new(
                    name,
                    nodes.first().map_or(0, |n| n.line),
                    format!("rank {r}: the dependencies form a cycle"),
                ));
            }
            let edges = self.edges.get(r).map_or(&[][..], Vec::as_slice);
            graph
                .add_rank(&ops, edges)
                .map_err(|e| InputError::new(name, 0, e))?;
        }
        Ok(graph)
    }
}

/// `node` as the graph executor's operation.
fn graph_op(node: &GoalNode) -> GraphOp {
    let (kind, size, peer, tag) = match node.op {
        GoalOp::Calc(ns) => (OpKind::Calc, ns, 0, 0),
        GoalOp::Send { bytes, to, tag } => (OpKind::Send, bytes, to, tag),
        GoalOp::Recv { bytes, from, tag } => (
            OpKind::Recv,
            bytes,
            from.unwrap_or(engine::ANY),
            tag.unwrap_or(engine::ANY),
        ),
    };
    GraphOp {
        size,
        peer,
        tag,
        kind,
        cpu: node.cpu,
        nic: if kind == OpKind::Calc { 0 } else { node.nic },
    }
}

/// Reads a GOAL schedule into a dependency graph ([`parse`] followed by
/// [`Schedule::to_graph`]).
pub fn load_graph(file: &str, text: &str) -> Result<Graph, InputError> {
    parse(file, text).and_then(|s| s.to_graph(file))
}

/// [`load_graph`] from the file at `path` (`name` in messages), read in
/// chunks and each rank added to the graph as soon as it is read, so that
/// neither the text nor the parsed schedule is ever whole in memory. On
/// any problem, or ranks out of order, the file is read again whole to
/// report exactly what [`load_graph`] reports.
pub fn load_file_graph(name: &str, path: &Path) -> Result<Graph, String> {
    if let Ok(file) = File::open(path)
        && let Ok(graph) = fast::read(file)
    {
        return Ok(graph);
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    load_graph(name, &text).map_err(|e| e.to_string())
}

/// A program that names the `ranks` ranks of a GOAL schedule (`rank i`,
/// no operations) on `network`: what outputs need beside a
/// [`Graph`]'s run.
pub fn header(name: &str, ranks: usize, network: Network) -> Program {
    goal_program(
        name,
        (0..ranks).map(|r| rank(r, Vec::new())).collect(),
        network,
    )
}

fn goal_program(name: &str, locations: Vec<LocationSpec>, network: Network) -> Program {
    Program {
        name: name.to_string(),
        regions: Vec::new(),
        locations,
        seed: 0,
        network,
        calibration: heisen_core::Calibration::ZERO,
    }
}

/// One rank's operations as a location's (see the module doc).
fn convert(name: &str, r: usize, nodes: &[GoalNode]) -> Result<Vec<Op>, InputError> {
    for node in nodes {
        if let GoalOp::Calc(ns) = node.op
            && ns > MAX_TIME
        {
            return Err(InputError::new(
                name,
                node.line,
                format!("calc {ns}: the sequence form takes calcs up to {MAX_TIME} ns"),
            ));
        }
        for (what, n) in [("cpu", node.cpu), ("nic", node.nic)] {
            if n != 0 {
                return Err(InputError::new(
                    name,
                    node.line,
                    format!(
                        "{what} {n}: heisen simulates one CPU and one NIC per rank (only {what} 0)"
                    ),
                ));
            }
        }
    }
    let order = topological(nodes).ok_or_else(|| {
        InputError::new(
            name,
            nodes.first().map_or(0, |n| n.line),
            format!("rank {r}: the dependencies form a cycle"),
        )
    })?;
    let waits = nodes.iter().map(|n| n.requires.len()).sum::<usize>();
    let mut body = Vec::with_capacity(nodes.len() + 1 + waits.min(nodes.len()));
    let mut waited = vec![false; nodes.len()];
    for i in order {
        let node = &nodes[i];
        for &d in &node.requires {
            if !waited[d] && !matches!(nodes[d].op, GoalOp::Calc(_)) {
                waited[d] = true;
                body.push(Op::Wait { request: d as u32 });
            }
        }
        body.push(match node.op {
            GoalOp::Calc(ns) => Op::Compute(Duration::Fixed(ns)),
            GoalOp::Send { bytes, to, tag } => Op::Isend {
                to: Dest::Location(to),
                bytes,
                tag,
                request: i as u32,
            },
            GoalOp::Recv { bytes, from, tag } => Op::Irecv {
                from: from.map_or(Source::Any, Source::Location),
                bytes,
                tag,
                request: i as u32,
            },
        });
    }
    body.push(Op::WaitAll);
    body.shrink_to_fit();
    Ok(body)
}

/// Reads a GOAL schedule into a program on `network`: [`parse`] followed
/// by [`Schedule::to_program`]. For large schedules, [`load_compiled`]
/// never holds the whole graph nor the whole program.
pub fn load(file: &str, text: &str, network: Network) -> Result<Program, InputError> {
    parse(file, text).and_then(|s| s.to_program(file, network))
}

/// Reads a GOAL schedule straight into the engine's compiled form
/// ([`engine::compile`]): each rank is checked and compiled as soon as it
/// is read, so that neither its graph nor its operations outlive it (a
/// 65,536-rank dissemination schedule: 3.1 million operations). The result
/// and every error are those of [`load`] followed by [`engine::compile`]:
/// on any problem, or on an unusual layout (`num_ranks` after a rank or
/// given twice), this reads the text again the slow way to report exactly
/// the same thing.
pub fn load_compiled(file: &str, text: &str, network: Network) -> Result<Compiled, InputError> {
    let mut fast = Fast::default();
    if fast.chunk(file, text, 1).is_some()
        && let Some(compiled) = fast.finish(network)
    {
        return Ok(compiled);
    }
    let program = load(file, text, network)?;
    engine::compile(program).map_err(|e| InputError::new(file, 0, e.to_string()))
}

/// [`load`] from the file at `path` (`name` in messages).
pub fn load_file(name: &str, path: &Path, network: Network) -> Result<Program, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    load(name, &text, network).map_err(|e| e.to_string())
}

/// [`load_compiled`] from the file at `path` (`name` in messages), read
/// line by line so that the text is never whole in memory either: the way
/// to run a large schedule in the least memory. Errors are those of
/// [`load_file`] followed by [`engine::compile`]: on any problem the file
/// is read again whole to report exactly that.
pub fn load_file_compiled(name: &str, path: &Path, network: Network) -> Result<Compiled, String> {
    if let Some(compiled) = load_stream(name, path, network) {
        return Ok(compiled);
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    load_compiled(name, &text, network).map_err(|e| e.to_string())
}

/// Text read at once by [`load_stream`] before it is parsed (whole
/// top-level statements: the cut is never inside a rank or a comment).
const CHUNK: usize = 1 << 16;

fn load_stream(name: &str, path: &Path, network: Network) -> Option<Compiled> {
    let mut fast = Fast::default();
    stream(path, |text, line| fast.chunk(name, text, line))?;
    fast.finish(network)
}

/// Reads the file at `path` in chunks of whole top-level statements and
/// hands each to `chunk` with its first line; `None` when the file cannot
/// be read or `chunk` gives up.
fn stream(path: &Path, mut chunk_of: impl FnMut(&str, usize) -> Option<()>) -> Option<()> {
    let mut reader = BufReader::new(File::open(path).ok()?);
    let mut chunk = String::new();
    let (mut line, mut first_line) = (1, 1);
    let (mut depth, mut comment) = (0i64, false);
    loop {
        let before = chunk.len();
        if reader.read_line(&mut chunk).ok()? == 0 {
            break;
        }
        // Brackets and comments as the lexer sees them.
        let bytes = &chunk.as_bytes()[before..];
        let mut i = 0;
        while i < bytes.len() {
            let next = bytes.get(i + 1).copied();
            if comment {
                if bytes[i] == b'*' && next == Some(b'/') {
                    comment = false;
                    i += 1;
                }
            } else {
                match (bytes[i], next) {
                    (b'/', Some(b'/')) => break,
                    (b'/', Some(b'*')) => {
                        comment = true;
                        i += 1;
                    }
                    (b'{', _) => depth += 1,
                    (b'}', _) => depth -= 1,
                    _ => {}
                }
            }
            i += 1;
        }
        line += 1;
        if depth <= 0 && !comment && chunk.len() >= CHUNK {
            chunk_of(&chunk, first_line)?;
            chunk.clear();
            first_line = line;
            depth = 0;
        }
    }
    chunk_of(&chunk, first_line)
}

/// The state of [`load_compiled`]'s direct path: `None` from a step means
/// "read the schedule the slow way".
#[derive(Default)]
struct Fast {
    /// The program's header (every rank named, no operations), once
    /// `num_ranks` is read.
    program: Option<Program>,
    /// The ranks read so far.
    defined: Vec<bool>,
    /// Their code.
    code: Code,
}

impl Fast {
    /// Reads whole top-level statements; `line` is the first one's line.
    fn chunk(&mut self, file: &str, text: &str, line: usize) -> Option<()> {
        let mut p = Parser::at(file, text, line).ok()?;
        loop {
            match p.token {
                Token::End => return Some(()),
                Token::Newline => {
                    p.advance().ok()?;
                }
                Token::Word("num_ranks") => {
                    if self.program.is_some() {
                        return None;
                    }
                    p.advance().ok()?;
                    let v = p.number("").ok()?;
                    if v == 0 || v > MAX_LOCATIONS {
                        return None;
                    }
                    let locations = (0..v as usize).map(|r| rank(r, Vec::new())).collect();
                    self.program = Some(goal_program(file, locations, Network::default()));
                    self.defined = vec![false; v as usize];
                }
                Token::Word("rank") => {
                    let program = self.program.as_mut()?;
                    let n = program.locations.len() as u64;
                    p.advance().ok()?;
                    let r = p.number("").ok()?;
                    if r >= n || self.defined[r as usize] || p.token != Token::Open {
                        return None;
                    }
                    p.advance().ok()?;
                    let (nodes, _) = parse_rank(&mut p).ok()?;
                    let bad_peer = nodes.iter().any(|node| {
                        let peer = match node.op {
                            GoalOp::Send { to, .. } => Some(to),
                            GoalOp::Recv { from, .. } => from,
                            GoalOp::Calc(_) => None,
                        };
                        peer.is_some_and(|x| u64::from(x) >= n)
                    });
                    if bad_peer {
                        return None;
                    }
                    let r = r as usize;
                    let body = convert(file, r, &nodes).ok()?;
                    drop(nodes);
                    self.defined[r] = true;
                    // Checked and compiled now; only the name stays.
                    program.locations[r].body = body;
                    program.validate_location(r).ok()?;
                    self.code.add(r, &program.locations[r].body);
                    program.locations[r].body = Vec::new();
                }
                _ => return None,
            }
        }
    }

    fn finish(mut self, network: Network) -> Option<Compiled> {
        let mut program = self.program?;
        for (r, defined) in self.defined.iter().enumerate() {
            if !defined {
                self.code.add(r, &[Op::WaitAll]);
            }
        }
        program.network = network;
        program.validate_header().ok()?;
        self.code.shrink();
        Some(Compiled::new(program, self.code))
    }
}

/// Rank `r` doing `body`.
fn rank(r: usize, body: Vec<Op>) -> LocationSpec {
    LocationSpec {
        name: format!("rank {r}"),
        kind: Kind::Rank,
        spawned: false,
        body,
    }
}

/// Kahn's algorithm over `requires` and `irequires`, taking the earliest
/// ready operation in file order; `None` on a cycle.
fn topological(nodes: &[GoalNode]) -> Option<Vec<usize>> {
    let n = nodes.len();
    let mut indegree = vec![0usize; n];
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, node) in nodes.iter().enumerate() {
        for &d in node.requires.iter().chain(&node.irequires) {
            indegree[i] += 1;
            after[d].push(i);
        }
    }
    let mut ready: std::collections::BTreeSet<usize> =
        (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &j in &after[i] {
            indegree[j] -= 1;
            if indegree[j] == 0 {
                ready.insert(j);
            }
        }
    }
    (order.len() == n).then_some(order)
}

#[cfg(test)]
mod tests;
