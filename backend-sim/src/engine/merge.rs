//! How a merge completes, whatever waited (DESIGN vocabulary: a receive's
//! wait, a collective's exit, a lock acquired, a barrier left, a dequeue,
//! a join): both kernels merge the dependencies (R4, R5) or the
//! collective's reduction (R6), the CPU clock skips the wait, the activity
//! graph and the trace get the merge, and the location goes on at the
//! merge's end after the merge's calibrated cost (R1). Point-to-point
//! waits add their statistics first ([`super::p2p`]).

use std::sync::Arc;

use heisen_core::{Exchange, Merged};

use crate::activity::{Edge, Step};
use crate::program::LocationId;

use super::options::{SimError, kerr};
use super::probe::{Dep, Pbs};
use super::record::{TraceKind, edges_of};
use super::world::World;

/// One participant's entry into an n-to-n merge (a collective, a thread
/// barrier): who, when, and its entry record (kernels only).
pub(super) type Entry = (LocationId, u64, Option<Pbs>);

impl World<'_> {
    /// A blocked location's merge on `deps` completes at `end` (R8: lock
    /// hand-off, dequeue, join; R6: a 1-to-n receiver or an n-to-1 root).
    pub(super) fn complete_merge(
        &mut self,
        l: LocationId,
        begin: u64,
        end: u64,
        deps: &[Dep],
    ) -> Result<(), SimError> {
        let li = l as usize;
        let err = kerr(l);
        let mut merged = None;
        if let Some(p) = &mut self.locs[li].probe {
            merged = Some(p.merge(begin, end, deps).map_err(err)?);
        }
        self.on_merged(l, begin, end, deps, merged);
        self.record_edges(l, deps);
        self.record_merged(l, TraceKind::Merge, begin, end, merged);
        let loc = &mut self.locs[li];
        loc.resume();
        loc.host.on_resume(end);
        self.charge_from(l, end, self.calibration.merge);
        self.next_step(l);
        Ok(())
    }

    /// Every participant of an n-to-n merge leaves at `end` (R6 n-to-n
    /// collective, R8 thread barrier): each merges all entries (001 eq.
    /// 12-13).
    pub(super) fn complete_n_to_n(&mut self, arrived: &[Entry], end: u64) -> Result<(), SimError> {
        let entries: Vec<(Pbs, u64)> = arrived
            .iter()
            .filter_map(|a| a.2.clone().map(|p| (p, end - a.1)))
            .collect();
        // R6, 001 eq. 12-13: every participant merges the reduction of all
        // entry records; it is the same for all, so it is folded once
        // (O(P) per collective, not O(P^2)).
        let folded =
            entries
                .iter()
                .fold((Exchange::EMPTY, Exchange::EMPTY), |(ts, dly), (p, w)| {
                    (
                        ts.combine(&Exchange::entry(&p.timestamped, *w)),
                        dly.combine(&Exchange::entry(&p.delay_only, *w)),
                    )
                });
        // R6: every entry (each exit's own too) is an arc into every exit.
        let all = self.recorder.keeps_graph().then(|| {
            let deps: Vec<Dep> = entries
                .iter()
                .map(|(pbs, _)| entry_dep(pbs.clone(), end))
                .collect();
            edges_of(&deps)
        });
        let merge = if entries.is_empty() {
            0
        } else {
            self.calibration.merge
        };
        for &(w, begin, _) in arrived {
            let err = kerr(w);
            let mut merged = None;
            if let Some(p) = &mut self.locs[w as usize].probe {
                merged = Some(p.collective(begin, end, &folded).map_err(err)?);
            }
            self.on_merged_edges(w, begin, end, all.clone(), true, merged);
            if self.recorder.tracing() {
                // Every other entry is an edge into this exit (R6 n-to-n).
                let edges: Vec<Dep> = arrived
                    .iter()
                    .filter(|a| a.0 != w)
                    .filter_map(|a| a.2.clone().map(|pbs| entry_dep(pbs, end)))
                    .collect();
                self.record_edges(w, &edges);
            }
            self.record_merged(w, TraceKind::Merge, begin, end, merged);
            self.locs[w as usize].resume();
            self.charge_from(w, end, merge);
            self.next_step(w);
        }
        Ok(())
    }

    /// A merge of `l` completed: its CPU clock skips the wait, and the
    /// activity graph gets the merge with its dependency arcs.
    pub(super) fn on_merged(
        &mut self,
        l: LocationId,
        begin: u64,
        end: u64,
        deps: &[Dep],
        merged: Option<Merged>,
    ) {
        let edges = self.recorder.keeps_graph().then(|| edges_of(deps));
        self.on_merged_edges(l, begin, end, edges, false, merged);
    }

    /// [`Self::on_merged`] with the arcs built already (shared by every
    /// exit of an n-to-n merge).
    fn on_merged_edges(
        &mut self,
        l: LocationId,
        begin: u64,
        end: u64,
        edges: Option<Arc<[Edge]>>,
        collective: bool,
        merged: Option<Merged>,
    ) {
        let Some(m) = merged else {
            return;
        };
        if let Some(p) = &mut self.locs[l as usize].probe {
            p.cpu
                .on_merge(m.approximated_end - m.compensated_wait, m.approximated_end);
        }
        if let Some(edges) = edges {
            self.log(
                l,
                Step::Merge {
                    begin,
                    end,
                    edges,
                    collective,
                    compensated_wait: m.compensated_wait,
                    approximated_end: m.approximated_end,
                },
            );
        }
    }
}

/// An n-to-n entry as a dependency of an exit at `end`: no transfer model,
/// the synchronisation is the merge's (R6).
fn entry_dep(pbs: Pbs, end: u64) -> Dep {
    Dep {
        pbs,
        model: 0,
        copy: 0,
        arrived: end,
    }
}
