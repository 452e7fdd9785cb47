//! A spawned thread's start (R8): the merge of its spawner's release.

use heisen_core::{Dependency, Flags};

use super::ThreadState;
use crate::Record;

/// The start of a thread whose registration ended at `registered` (its
/// state's start is its first clock read): merges the spawner's release
/// `parent`, and sets the location's approximated start.
pub(super) fn merge_spawner(state: &mut ThreadState, parent: &Record, registered: u64) {
    let began = state.start;
    let rt = state.runtime();
    let cost = rt.cost(rt.builtin().thread_start).whole;
    // R8: the child's start merges its spawner's release, with the
    // thread's creation as the hand-off's transfer (R5, case m.2, its
    // model): from the release to the child's first clock read (before
    // any of heisen's work) the system made and scheduled the thread, as
    // it does without heisen; what heisen did after (finding a slot,
    // building the state) is the registration's overhead, charged by the
    // caller. With no transfer (an immediate hand-off) the child started
    // at the spawner's release, and that latency was compensated away
    // (30 µs to 3.7 ms here): a joiner then took it over (a 3 ms
    // program's main, 10 µs of overhead, had a delay of 3.8 ms).
    let created = if parent.flags.contains(Flags::DELAY.with(Flags::TIMESTAMP)) {
        i64::try_from(began)
            .ok()
            .and_then(|b| b.checked_sub(parent.measured()))
            .and_then(|d| u64::try_from(d).ok())
            .unwrap_or(0)
    } else {
        0
    };
    if let Ok(m) =
        state
            .kernel
            .on_start_costing(registered, &Dependency::message(parent, created, 0), cost)
    {
        // The measured start stays where the thread first ran: its
        // overhead (R1) holds the registration, so its measured elapsed
        // time must too, or local-only (measured − overhead, seed 000
        // Table 1) goes below zero (a 4 µs thread charged 2.9 ms under the
        // pthread interposer). Its approximated start is the merge's (R8).
        state.began(began, m.approximated_end);
    } else {
        state.began(began, i64::try_from(began).unwrap_or(i64::MAX));
    }
}
