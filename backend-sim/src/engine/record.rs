//! What a run keeps as it goes, for its result: the trace of every
//! operation (when asked), the approximated times of each traced event
//! (timestamped form), and the activity graph of the kernels' events
//! ([`crate::activity`]). The engine tells the [`Recorder`] what happened;
//! nothing here changes the run.

use std::sync::Arc;

use heisen_core::Merged;

use crate::activity::{Edge, LocationActivity, Step};
use crate::program::LocationId;

use super::options::RunOptions;
use super::probe::{Dep, Kernel};

/// One operation as it happened, kept only when a trace is requested.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// The location.
    pub location: LocationId,
    /// What happened.
    pub what: TraceKind,
    /// When it began.
    pub begin: u64,
    /// When it ended (equal to `begin` for instantaneous events).
    pub end: u64,
}

/// Kinds of [`TraceEvent`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// Region entered (its id).
    Enter(u32),
    /// Region left (its id).
    Exit(u32),
    /// Compute.
    Compute,
    /// A send started (its destination).
    Send(LocationId),
    /// A merge (wait, lock, dequeue, join, collective) from begin to end.
    Merge,
    /// Instrumentation overhead.
    Overhead,
    /// A dependency of the merge that follows: released by `from` at
    /// `begin`, satisfied here at `end` (an edge of the activity graph;
    /// recorded when kernels run, since the piggyback names the source).
    Edge {
        /// The releasing location.
        from: LocationId,
    },
}

/// The trace, approximated times and activity graph of a run, each kept
/// only when asked for.
#[derive(Debug)]
pub(super) struct Recorder {
    pub(super) trace: Option<Vec<TraceEvent>>,
    /// Index for index with `trace`, when kernels run.
    pub(super) approximated: Option<Vec<(i64, i64)>>,
    /// The activity graph, kept with a trace when kernels run.
    pub(super) activity: Option<Vec<LocationActivity>>,
}

impl Recorder {
    pub(super) fn new(options: RunOptions, locations: usize) -> Self {
        Recorder {
            trace: options.trace.then(Vec::new),
            approximated: (options.trace && options.kernels).then(Vec::new),
            activity: (options.trace && options.kernels)
                .then(|| vec![LocationActivity::default(); locations]),
        }
    }

    /// Whether a trace is kept.
    #[inline]
    pub(super) fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    /// Whether the activity graph is kept.
    #[inline]
    pub(super) fn keeps_graph(&self) -> bool {
        self.activity.is_some()
    }

    /// `location` did `what` from `begin` to `end`; `kernel` is its
    /// timestamped kernel after the event, `merged` that kernel's outcome
    /// when the event is a merge (its approximated wait is
    /// `[a(e) - w', a(e)]`).
    pub(super) fn on_event(
        &mut self,
        kernel: Option<&Kernel>,
        location: LocationId,
        what: TraceKind,
        begin: u64,
        end: u64,
        merged: Option<Merged>,
    ) {
        if let Some(t) = &mut self.trace {
            t.push(TraceEvent {
                location,
                what,
                begin,
                end,
            });
            if let Some(a) = &mut self.approximated {
                a.push(approximate(kernel, what, begin, end, merged));
            }
        }
    }

    /// The dependencies of a merge of `location`, as edges from the
    /// release at their source to their arrival here. Called after the
    /// merge: with kernels, an edge ends at the merge's `a(e)`,
    /// `end_approximated`.
    pub(super) fn on_edges(
        &mut self,
        end_approximated: Option<i64>,
        location: LocationId,
        deps: &[Dep],
    ) {
        if let Some(t) = &mut self.trace {
            for d in deps {
                let p = &d.pbs.timestamped;
                t.push(TraceEvent {
                    location,
                    what: TraceKind::Edge { from: p.location },
                    begin: p.measured().max(0) as u64,
                    end: d.arrived,
                });
                if let Some(a) = &mut self.approximated {
                    a.push((p.approximated, end_approximated.unwrap_or(d.arrived as i64)));
                }
            }
        }
    }

    /// A kernel event of `location`, for the activity graph.
    pub(super) fn on_step(&mut self, location: LocationId, step: Step) {
        if let Some(log) = &mut self.activity {
            log[location as usize].steps.push(step);
        }
    }

    /// A spawned `location` starts at `start`.
    pub(super) fn on_start(&mut self, location: LocationId, start: u64) {
        if let Some(log) = &mut self.activity {
            log[location as usize].start = start;
        }
    }
}

/// The approximated begin and end of a trace event (timestamped form):
/// a clock read (enter, exit) is at the kernel's `a = t - x`; a merge's
/// wait is `[a(e) - w', a(e)]` (R4: `w' = w + x - x'`); any other
/// interval keeps the delay that holds after it was recorded.
fn approximate(
    kernel: Option<&Kernel>,
    what: TraceKind,
    begin: u64,
    end: u64,
    merged: Option<Merged>,
) -> (i64, i64) {
    let Some(k) = kernel else {
        return (begin as i64, end as i64);
    };
    match (what, merged) {
        (TraceKind::Merge, Some(m)) => {
            (m.approximated_end - m.compensated_wait, m.approximated_end)
        }
        (TraceKind::Enter(_) | TraceKind::Exit(_), _) => {
            (k.last_approximated(), k.last_approximated())
        }
        _ => {
            let x = k.delay() as i64;
            (begin as i64 - x, end as i64 - x)
        }
    }
}

/// The arcs of the activity graph into a merge on `deps`.
pub(super) fn edges_of(deps: &[Dep]) -> Arc<[Edge]> {
    deps.iter()
        .map(|d| Edge {
            from: d.pbs.timestamped.location,
            release: d.pbs.id,
            released: d.pbs.timestamped.measured().max(0) as u64,
            arrival: d.arrived,
            model: d.model,
            copy: d.copy,
        })
        .collect()
}
