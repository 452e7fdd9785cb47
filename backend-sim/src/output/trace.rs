//! Writes a run's measured and approximated timelines as a Chrome
//! trace-event JSON file (opens in Perfetto or chrome://tracing): two
//! processes, "measured" and "approximated", one thread per location,
//! regions, compute and waits as complete events, messages as flows.

use core::fmt::Write as _;

use crate::engine::{RunResult, TraceEvent, TraceKind};
use crate::program::Program;

/// One interval of a timeline, paired from the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The location.
    pub location: u32,
    /// What it is: a region's name, "compute", "wait", "overhead", "send".
    pub name: String,
    /// Category: "region", "compute", "wait", "overhead", "send".
    pub category: &'static str,
    /// Region id for regions (the colour).
    pub region: Option<u32>,
    /// Nesting depth (regions).
    pub depth: usize,
    /// Begin and end, ns.
    pub begin: i64,
    /// End, ns.
    pub end: i64,
}

/// A message (or other dependency) from one location to another.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrow {
    /// The releasing location and when it released.
    pub from: u32,
    /// Release time, ns.
    pub begin: i64,
    /// The merging location and when the dependency was satisfied.
    pub to: u32,
    /// Satisfaction time, ns.
    pub end: i64,
}

/// The spans and arrows of one timeline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// Intervals.
    pub spans: Vec<Span>,
    /// Dependencies.
    pub arrows: Vec<Arrow>,
    /// Latest end.
    pub end: i64,
}

/// The measured (`approximated = false`) or the approximated timeline of
/// `run`, which must have kept a trace (and kernels, for the approximated
/// one). Overheads do not exist in the approximated run and are left out.
pub fn timeline(
    program: &Program,
    run: &RunResult,
    approximated: bool,
) -> Result<Timeline, String> {
    let trace = run
        .trace
        .as_ref()
        .ok_or("the run kept no trace (simulator bug)")?;
    let times: Vec<(i64, i64)> = if approximated {
        run.approximated
            .clone()
            .ok_or("the run kept no approximated times (kernels were off)")?
    } else {
        trace
            .iter()
            .map(|e: &TraceEvent| (e.begin as i64, e.end as i64))
            .collect()
    };
    let mut t = Timeline::default();
    let mut open: Vec<Vec<(u32, i64)>> = vec![Vec::new(); program.locations.len()];
    for (e, &(begin, end)) in trace.iter().zip(&times) {
        let l = e.location;
        let Some(stack) = open.get_mut(l as usize) else {
            continue;
        };
        t.end = t.end.max(end);
        let span = |name: String, category: &'static str, region, depth| Span {
            location: l,
            name,
            category,
            region,
            depth,
            begin,
            end,
        };
        match e.what {
            TraceKind::Enter(r) => stack.push((r, begin)),
            TraceKind::Exit(r) => {
                if let Some((region, start)) = stack.pop() {
                    let name = program
                        .regions
                        .get(region as usize)
                        .cloned()
                        .unwrap_or_else(|| format!("region {r}"));
                    let mut s = span(name, "region", Some(region), stack.len());
                    s.begin = start;
                    t.spans.push(s);
                }
            }
            TraceKind::Compute => t.spans.push(span("compute".into(), "compute", None, 0)),
            TraceKind::Merge => t.spans.push(span("wait".into(), "wait", None, 0)),
            TraceKind::Overhead if !approximated => {
                t.spans.push(span("overhead".into(), "overhead", None, 0));
            }
            TraceKind::Overhead => {}
            TraceKind::Send(_) => t.spans.push(span("send".into(), "send", None, 0)),
            TraceKind::Edge { from } => {
                if from != l && (from as usize) < program.locations.len() {
                    t.arrows.push(Arrow {
                        from,
                        begin,
                        to: l,
                        end,
                    });
                }
            }
        }
    }
    Ok(t)
}

fn micros(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// The Chrome trace-event JSON of the measured (pid 1) and approximated
/// (pid 2) timelines. Times are µs with ns precision.
// Long: both timelines written in one pass with a shared flow counter and separator state.
pub fn chrome_trace(program: &Program, run: &RunResult) -> Result<String, String> {
    let measured = timeline(program, run, false)?;
    let approximated = timeline(program, run, true)?;
    let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut first = true;
    let mut line = |out: &mut String, s: String| {
        if !first {
            out.push_str(",\n");
        }
        first = false;
        out.push_str(&s);
    };
    let mut flow = 0u64;
    for (pid, name, t) in [
        (1, "measured", &measured),
        (2, "approximated", &approximated),
    ] {
        line(
            &mut out,
            format!(
                "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":\"{name}\"}}}}"
            ),
        );
        line(
            &mut out,
            format!(
                "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{pid},\"tid\":0,\"args\":{{\"sort_index\":{pid}}}}}"
            ),
        );
        for (i, loc) in program.locations.iter().enumerate() {
            line(
                &mut out,
                format!(
                    "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{i},\"args\":{{\"name\":\"{}\"}}}}",
                    escape(&loc.name)
                ),
            );
        }
        // Outer regions first at equal begin, so that viewers nest them.
        let mut spans: Vec<&Span> = t.spans.iter().collect();
        spans.sort_by(|a, b| {
            (a.location, a.begin, a.category != "region", a.depth).cmp(&(
                b.location,
                b.begin,
                b.category != "region",
                b.depth,
            ))
        });
        for s in spans {
            line(
                &mut out,
                format!(
                    "{{\"ph\":\"X\",\"name\":\"{}\",\"cat\":\"{}\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"dur\":{}}}",
                    escape(&s.name),
                    s.category,
                    s.location,
                    micros(s.begin),
                    micros((s.end - s.begin).max(0))
                ),
            );
        }
        for a in &t.arrows {
            flow += 1;
            line(
                &mut out,
                format!(
                    "{{\"ph\":\"s\",\"name\":\"message\",\"cat\":\"message\",\"id\":{flow},\"pid\":{pid},\"tid\":{},\"ts\":{}}}",
                    a.from,
                    micros(a.begin)
                ),
            );
            line(
                &mut out,
                format!(
                    "{{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"message\",\"cat\":\"message\",\"id\":{flow},\"pid\":{pid},\"tid\":{},\"ts\":{}}}",
                    a.to,
                    micros(a.end)
                ),
            );
        }
    }
    out.push_str("\n]}\n");
    Ok(out)
}
