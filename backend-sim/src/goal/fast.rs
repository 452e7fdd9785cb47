//! The GOAL reader's fast path: the file's bytes read in large blocks and
//! scanned once, each rank appended to the [`Graph`] as soon as its
//! closing bracket is read. No line is copied, no string is allocated,
//! and the buffers of one rank (operations, dependency lines, labels) are
//! reused by the next, so the reader's memory is the graph plus one block.
//!
//! It takes exactly what the full parser ([`super::parse`] then
//! [`super::Schedule::to_graph`]) takes and builds the same graph; on
//! anything it does not handle (ranks out of order, a comment inside a
//! statement's line, and every error) it gives up with [`Slow`], and the caller reads the
//! file again with the full parser, whose messages name file and line.

use std::collections::HashMap;
use std::io::Read;

use crate::engine::{ANY, Edge, Graph, GraphOp, OpKind};
use crate::program::{MAX_BYTES, MAX_LOCATIONS};

/// Bytes read from the file at once: 64 KiB, so that the reader's
/// buffer (doubled only while one statement is larger) stays small beside
/// the graph — a schedule of 1 MB peaked 1 MiB higher with 4 MiB blocks,
/// which were no faster.
const BLOCK: usize = 1 << 16;

/// Numeric labels `l<digits>` (no leading zero) below this bound are
/// looked up in a flat table; other labels in a hash map.
const FLAT_LABELS: u64 = 1 << 20;

/// Give up: the full parser reads the file instead.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Slow;

/// Why a statement could not be read: the block ended inside it, or
/// the fast path does not take it.
enum Stop {
    More,
    Slow,
}

impl From<Slow> for Stop {
    fn from(_: Slow) -> Stop {
        Stop::Slow
    }
}

type Scan<T> = Result<T, Stop>;

/// Reads the whole schedule from `input` into a graph.
pub(super) fn read(input: impl Read) -> Result<Graph, Slow> {
    read_blocks(input, BLOCK)
}

/// [`read`], `block` bytes at a time.
pub(super) fn read_blocks(mut input: impl Read, block: usize) -> Result<Graph, Slow> {
    let mut reader = Reader::default();
    let mut buf: Vec<u8> = Vec::with_capacity(block);
    // Doubled while a block holds no whole statement (a rank larger than
    // a block), so that a large rank is re-read a few times only.
    let mut want = block;
    loop {
        let n = (&mut input)
            .take(want as u64)
            .read_to_end(&mut buf)
            .map_err(|_| Slow)?;
        let eof = n == 0;
        if eof {
            // LogGOPSim's reader ends the file with a newline.
            buf.push(b'\n');
        }
        let used = reader.block(&buf)?;
        if eof {
            return if used == buf.len() {
                reader.finish()
            } else {
                Err(Slow)
            };
        }
        want = if used == 0 { want * 2 } else { block };
        buf.drain(..used);
    }
}

/// The state kept across blocks.
#[derive(Default)]
struct Reader {
    /// `num_ranks`, once read.
    ranks: Option<u64>,
    graph: Graph,
    /// The rank being read: its operations and dependency lines.
    ops: Vec<GraphOp>,
    edges: Vec<Edge>,
    /// Flat label table: `(rank stamp, operation)` per label number.
    flat: Vec<(u32, u32)>,
    /// Stamp of the rank being read (1 + ranks read).
    stamp: u32,
    /// Kahn's algorithm's unmet counts and stack.
    unmet: Vec<u32>,
    stack: Vec<u32>,
}

/// A cursor over one block.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Scan<u8> {
        self.b.get(self.i).copied().ok_or(Stop::More)
    }

    /// Skips blanks (not newlines).
    #[inline]
    fn blanks(&mut self) -> Scan<()> {
        let rest = &self.b[self.i..];
        let k = rest
            .iter()
            .position(|&c| !matches!(c, b' ' | b'\t' | b'\r'))
            .ok_or(Stop::More)?;
        self.i += k;
        Ok(())
    }

    /// Skips blanks, newlines and comments.
    fn space(&mut self) -> Scan<()> {
        loop {
            match self.peek()? {
                b' ' | b'\t' | b'\r' | b'\n' => self.i += 1,
                b'/' => self.comment()?,
                _ => return Ok(()),
            }
        }
    }

    /// A `//` comment up to (not including) its newline, or a `/* */`
    /// comment. The full parser reads the file as UTF-8: anything but
    /// ASCII in a comment is its to report.
    fn comment(&mut self) -> Scan<()> {
        let rest = &self.b[self.i..];
        let (len, ascii) = match rest.get(1).ok_or(Stop::More)? {
            b'/' => {
                let k = rest.iter().position(|&c| c == b'\n').ok_or(Stop::More)?;
                (k, rest[..k].is_ascii())
            }
            b'*' => {
                let k = rest[2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .ok_or(Stop::More)?;
                (k + 4, rest[..k + 4].is_ascii())
            }
            _ => return Err(Stop::Slow),
        };
        if !ascii {
            return Err(Stop::Slow);
        }
        self.i += len;
        Ok(())
    }

    /// The end of a line: blanks, an optional `//` comment, a newline.
    fn end_of_line(&mut self) -> Scan<()> {
        self.blanks()?;
        while self.peek()? == b'/' {
            self.comment()?;
            self.blanks()?;
        }
        if self.peek()? != b'\n' {
            return Err(Stop::Slow);
        }
        self.i += 1;
        Ok(())
    }

    /// A word as the full parser's lexer reads it: a letter, then letters,
    /// digits and `_`; blanks before it are skipped.
    #[inline]
    fn word(&mut self) -> Scan<&'a [u8]> {
        self.blanks()?;
        let rest = &self.b[self.i..];
        if !rest[0].is_ascii_alphabetic() {
            return Err(Stop::Slow);
        }
        let len = rest
            .iter()
            .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
            .ok_or(Stop::More)?;
        self.i += len;
        Ok(&rest[..len])
    }

    /// The word `w`.
    #[inline]
    fn keyword(&mut self, w: &[u8]) -> Scan<()> {
        if self.word()? == w {
            Ok(())
        } else {
            Err(Stop::Slow)
        }
    }

    /// A decimal number, or `None` for `-1` (not followed by a digit).
    #[inline]
    fn number_or_any(&mut self) -> Scan<Option<u64>> {
        self.blanks()?;
        if self.peek()? == b'-' {
            if self.b.get(self.i + 1).ok_or(Stop::More)? != &b'1' {
                return Err(Stop::Slow);
            }
            if self.b.get(self.i + 2).ok_or(Stop::More)?.is_ascii_digit() {
                return Err(Stop::Slow);
            }
            self.i += 2;
            return Ok(None);
        }
        self.number().map(Some)
    }

    /// A decimal number (blanks before it skipped).
    #[inline]
    fn number(&mut self) -> Scan<u64> {
        self.blanks()?;
        let rest = &self.b[self.i..];
        let len = rest
            .iter()
            .position(|c| !c.is_ascii_digit())
            .ok_or(Stop::More)?;
        if len == 0 {
            return Err(Stop::Slow);
        }
        let mut n: u64 = 0;
        if len < 20 {
            // Below 10^19: no overflow.
            for &c in &rest[..len] {
                n = n * 10 + u64::from(c - b'0');
            }
        } else {
            for &c in &rest[..len] {
                n = n
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(u64::from(c - b'0')))
                    .ok_or(Stop::Slow)?;
            }
        }
        self.i += len;
        Ok(n)
    }

    /// `word` if the next token is that word, without consuming
    /// anything otherwise.
    fn next_is(&mut self, w: &[u8]) -> Scan<bool> {
        let at = self.i;
        match self.word() {
            Ok(x) if x == w => Ok(true),
            Err(Stop::More) => Err(Stop::More),
            _ => {
                self.i = at;
                Ok(false)
            }
        }
    }
}

impl Reader {
    /// Reads the whole top-level statements at the start of `b`; returns
    /// how many bytes they take.
    fn block(&mut self, b: &[u8]) -> Result<usize, Slow> {
        let mut c = Cursor { b, i: 0 };
        let mut done = 0;
        loop {
            match self.statement(&mut c) {
                Ok(true) => done = c.i,
                // Only blanks and whole comments were left.
                Ok(false) => return Ok(c.i),
                Err(Stop::More) => return Ok(done),
                Err(Stop::Slow) => return Err(Slow),
            }
        }
    }

    /// One top-level statement; `false` at the end of the block.
    fn statement(&mut self, c: &mut Cursor<'_>) -> Scan<bool> {
        match c.space() {
            Err(Stop::More) => return Ok(false),
            r => r?,
        }
        let w = c.word()?;
        if w == b"num_ranks" && self.ranks.is_none() {
            let v = c.number()?;
            c.end_of_line()?;
            if v == 0 || v > MAX_LOCATIONS {
                return Err(Stop::Slow);
            }
            self.ranks = Some(v);
            self.graph = Graph::new();
            return Ok(true);
        }
        if w != b"rank" {
            return Err(Stop::Slow);
        }
        let n = self.ranks.ok_or(Stop::Slow)?;
        let r = c.number()?;
        // Only ranks in order: the graph is appended to.
        if r != self.graph.ranks() as u64 || r >= n {
            return Err(Stop::Slow);
        }
        c.blanks()?;
        if c.peek()? != b'{' {
            return Err(Stop::Slow);
        }
        c.i += 1;
        self.rank(c, n)?;
        Ok(true)
    }

    /// A rank's body after its `{`, up to and including its `}`.
    fn rank<'a>(&mut self, c: &mut Cursor<'a>, n: u64) -> Scan<()> {
        self.ops.clear();
        self.edges.clear();
        self.stamp += 1;
        let mut other: HashMap<&'a [u8], u32> = HashMap::new();
        loop {
            c.space()?;
            if c.peek()? == b'}' {
                c.i += 1;
                break;
            }
            let w = c.word()?;
            if matches!(w, b"send" | b"recv" | b"calc") {
                self.op(c, w, n)?;
                continue;
            }
            c.blanks()?;
            if c.peek()? == b':' {
                c.i += 1;
                let kind = c.word()?;
                if !matches!(kind, b"send" | b"recv" | b"calc") {
                    return Err(Stop::Slow);
                }
                let index = self.ops.len() as u32;
                if self.define(&mut other, w, index) {
                    return Err(Stop::Slow);
                }
                self.op(c, kind, n)?;
                continue;
            }
            let start = match c.word()? {
                b"requires" => false,
                b"irequires" => true,
                _ => return Err(Stop::Slow),
            };
            let dependency = c.word()?;
            c.end_of_line()?;
            let a = self.find(&other, w).ok_or(Stop::Slow)?;
            let b = self.find(&other, dependency).ok_or(Stop::Slow)?;
            if a == b {
                return Err(Stop::Slow);
            }
            self.edges.push(Edge {
                dependent: a,
                dependency: b,
                start,
            });
        }
        let base = self.graph.operations() as u32;
        self.graph
            .add_rank(&self.ops, &self.edges)
            .map_err(|_| Slow)?;
        if self.cyclic(base) {
            return Err(Stop::Slow);
        }
        Ok(())
    }

    /// Defines `label` as operation `index`; `true` if it was defined.
    fn define<'b>(
        &mut self,
        other: &mut HashMap<&'b [u8], u32>,
        label: &'b [u8],
        index: u32,
    ) -> bool {
        if let Some(k) = flat_label(label) {
            let k = k as usize;
            if k >= self.flat.len() {
                self.flat.resize(k + 1, (0, 0));
            }
            let slot = &mut self.flat[k];
            let was = slot.0 == self.stamp;
            *slot = (self.stamp, index);
            was
        } else {
            other.insert(label, index).is_some()
        }
    }

    fn find(&self, other: &HashMap<&[u8], u32>, label: &[u8]) -> Option<u32> {
        match flat_label(label) {
            Some(k) => self
                .flat
                .get(k as usize)
                .filter(|s| s.0 == self.stamp)
                .map(|s| s.1),
            None => other.get(label).copied(),
        }
    }

    /// An operation after its kind, up to the end of its line.
    fn op(&mut self, c: &mut Cursor<'_>, kind: &[u8], n: u64) -> Scan<()> {
        if kind == b"calc" {
            let ns = c.number()?;
            if ns > super::MAX_CALC {
                return Err(Stop::Slow);
            }
            let cpu = if c.peek()? == b'\n' {
                c.i += 1;
                0
            } else {
                let cpu = if c.next_is(b"cpu")? { unit(c)? } else { 0 };
                c.end_of_line()?;
                cpu
            };
            self.ops.push(GraphOp::calc(ns, cpu));
            return Ok(());
        }
        let bytes = c.number()?;
        if bytes > MAX_BYTES {
            return Err(Stop::Slow);
        }
        let send = kind == b"send";
        // schedgen's spelling read at once; the same tokens as below.
        let spelled: &[u8] = if send { b"b to " } else { b"b from " };
        if c.b[c.i..].starts_with(spelled) {
            c.i += spelled.len();
        } else {
            c.keyword(b"b")?;
            c.keyword(if send { b"to" } else { b"from" })?;
        }
        let peer = match c.number_or_any()? {
            Some(p) if p < n => p as u32,
            Some(_) => return Err(Stop::Slow),
            None if send => return Err(Stop::Slow),
            None => ANY,
        };
        let tag = if c.b[c.i..].starts_with(b" tag ") {
            c.i += 4;
            match c.number_or_any()? {
                Some(t) => u32::try_from(t).map_err(|_| Stop::Slow)?,
                None => ANY,
            }
        } else if c.next_is(b"tag")? {
            match c.number_or_any()? {
                Some(t) => u32::try_from(t).map_err(|_| Stop::Slow)?,
                None => ANY,
            }
        } else {
            0
        };
        let (cpu, nic) = if c.peek()? == b'\n' {
            c.i += 1;
            (0, 0)
        } else {
            let cpu = if c.next_is(b"cpu")? { unit(c)? } else { 0 };
            let nic = if c.next_is(b"nic")? { unit(c)? } else { 0 };
            c.end_of_line()?;
            (cpu, nic)
        };
        self.ops.push(GraphOp {
            size: bytes,
            peer,
            tag,
            kind: if send { OpKind::Send } else { OpKind::Recv },
            cpu,
            nic,
        });
        Ok(())
    }

    /// Whether the rank just added (its operations from `base`) has a
    /// dependency cycle: Kahn's algorithm over both kinds of dependents.
    fn cyclic(&mut self, base: u32) -> bool {
        let g = &self.graph;
        let ops = base..g.operations() as u32;
        self.unmet.clear();
        self.unmet
            .extend(ops.clone().map(|op| g.unmet_at_start(op)));
        self.stack.clear();
        self.stack.extend(
            ops.clone()
                .filter(|&op| self.unmet[(op - base) as usize] == 0),
        );
        let mut seen = 0;
        while let Some(op) = self.stack.pop() {
            seen += 1;
            for start in [false, true] {
                for &d in g.waiting_for(op, start) {
                    let u = &mut self.unmet[(d - base) as usize];
                    *u -= 1;
                    if *u == 0 {
                        self.stack.push(d);
                    }
                }
            }
        }
        seen != ops.len()
    }

    fn finish(mut self) -> Result<Graph, Slow> {
        let n = self.ranks.ok_or(Slow)?;
        while (self.graph.ranks() as u64) < n {
            self.graph.add_rank(&[], &[]).map_err(|_| Slow)?;
        }
        Ok(self.graph)
    }
}

/// A CPU or NIC number (LogGOPSim keeps them in 8 bits).
fn unit(c: &mut Cursor<'_>) -> Scan<u8> {
    u8::try_from(c.number()?).map_err(|_| Stop::Slow)
}

/// `l<digits>` without a leading zero, below [`FLAT_LABELS`]: its number.
fn flat_label(label: &[u8]) -> Option<u64> {
    let digits = label.strip_prefix(b"l")?;
    if digits.is_empty() || digits.len() > 7 || (digits[0] == b'0' && digits.len() > 1) {
        return None;
    }
    let mut k = 0u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        k = k * 10 + u64::from(d - b'0');
    }
    (k < FLAT_LABELS).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::dissemination_goal;
    use crate::goalgen::generate;

    /// The fast path either gives up or builds what the full parser
    /// builds, whatever the block size; it gives up whenever the full
    /// parser refuses.
    fn same(text: &str) -> bool {
        let full = super::super::load_graph("f.goal", text);
        let mut took = true;
        for block in [1, 7, 64, 4096, BLOCK, 1 << 22] {
            match read_blocks(text.as_bytes(), block) {
                Ok(g) => assert_eq!(Ok(&g), full.as_ref(), "block {block}:\n{text}"),
                Err(Slow) => took = false,
            }
        }
        took
    }

    #[test]
    fn generated_schedules_read_as_the_full_parser_reads_them() {
        for seed in 0..300 {
            assert!(same(&generate(seed).text), "seed {seed} not taken");
        }
        assert!(same(&dissemination_goal(64)));
    }

    #[test]
    fn everything_the_full_parser_refuses_is_left_to_it() {
        let ok = "num_ranks 3\nrank 0 {\nl1: send 8b to 1 tag 5 cpu 1 nic 2 // x\nl2: calc 100cpu 1\nl2 requires l1\n}\nrank 1 { la_1: recv 8b from -1 tag -1\n}\n";
        assert!(same(ok));
        let variants = [
            ("tag 5", "tag 4294967296"),
            ("tag 5", "tag -2"),
            ("cpu 1 nic 2", "nic 2 cpu 1"),
            ("cpu 1 nic 2", "cpu 256"),
            ("to 1", "to 3"),
            ("to 1", "to 0"),
            ("to 1", "to -1"),
            ("8b to", "8 b to"),
            ("8b to", "8bytes to"),
            ("l2 requires l1", "l2 requires l3"),
            ("l2 requires l1", "l2 requires l2"),
            ("l2 requires l1", "l1 requires l2\nl2 requires l1"),
            ("l2: calc", "l1: calc"),
            ("100cpu", "100nic"),
            ("100cpu", "1099511627777 cpu"),
            ("// x", "/* x */"),
            ("// x", "/* x"),
            ("// x", "// \u{e9}"),
            ("rank 1 {", "rank 2 {"),
            ("rank 1 {", "rank 0 {"),
            ("num_ranks 3", "num_ranks 0"),
            ("}\n", "}}\n"),
            ("from -1", "from -12"),
        ];
        for (from, to) in variants {
            let text = ok.replacen(from, to, 1);
            assert_ne!(text, ok);
            let full = super::super::load_graph("f.goal", &text);
            let took = same(&text);
            if full.is_err() {
                assert!(!took, "{to}");
            }
        }
        // Missing trailing newline, ranks left out, comments at the end.
        assert!(same("num_ranks 4\nrank 0 {\ncalc 5 /* a\n b */\n}"));
        assert!(!same("num_ranks 4\nrank 0 {\ncalc 5\n} /* never closed\n"));
        assert!(same("num_ranks 2\n// only a comment"));
        assert!(!same("num_ranks 2\nrank 0 {\ncalc 5\n"));
    }
}
