//! A barrier with std's API whose exits are n-to-n merges (R6, R8; 003
//! §4, Fig. 10b; 001 eq. 12-13): every participant leaves at the latest
//! approximated arrival plus the synchronisation time measured after the
//! latest real arrival, and takes over the longest critical path among
//! the arrivals.
//!
//! Each episode keeps its own result (R8): the combined arrivals of
//! episode `g` stay in slot `g % 2` until every participant of `g` has
//! read them, because episode `g + 2` cannot complete before they all
//! arrive again; a fast thread entering episode `g + 1` folds into a fresh
//! accumulator and never overwrites what the others still read.
//!
//! ```
//! # let _ = heisen_shmem::runtime::init_with(heisen_shmem::Config { output: std::env::temp_dir(), ..heisen_shmem::Config::from_env() });
//! use std::sync::Arc;
//! let barrier = Arc::new(heisen_shmem::Barrier::new(2));
//! let other = barrier.clone();
//! let t = heisen_shmem::spawn(move || other.wait().is_leader());
//! let here = barrier.wait().is_leader();
//! assert!(here ^ t.join().unwrap()); // exactly one leader
//! ```

use core::fmt;

use heisen_core::Exchange;

use crate::SELECTED;
use crate::actions::actions;
use crate::sync::{self, Condvar, Mutex};
use crate::thread::with_current;

/// `std::sync::Barrier` with compensated exits (see the module docs).
pub struct Barrier {
    episodes: Episodes,
}

/// Whether this thread was the one that completed the episode (std's
/// `BarrierWaitResult`, which cannot be built outside std).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BarrierWaitResult {
    leader: bool,
}

/// std's: `BarrierWaitResult { is_leader: .. }`.
impl fmt::Debug for BarrierWaitResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BarrierWaitResult")
            .field("is_leader", &self.leader)
            .finish()
    }
}

impl BarrierWaitResult {
    /// True for exactly one thread per episode: the last to arrive.
    pub fn is_leader(&self) -> bool {
        self.leader
    }
}

impl Barrier {
    sync::const_unless_loom! {
        /// A barrier for `n` threads (0 behaves as 1, as in std; `const`, as
        /// std's: it can be a `static`).
        pub fn new(n: usize) -> Barrier {
            Barrier {
                episodes: Episodes::new(n),
            }
        }
    }

    /// Blocks until `n` threads have called `wait` in this episode; every
    /// one merges all arrivals (R6).
    pub fn wait(&self) -> BarrierWaitResult {
        let a = actions();
        let entered = with_current(|s| s.arrive(a.barrier_wait));
        let entry = entered.map_or(Exchange::EMPTY, |(_, record)| Exchange::entry(&record, 0));
        let (all, leader) = self.episodes.arrive(entry);
        if let Some((begin, _)) = entered {
            with_current(|s| s.leave(begin, &all, a.barrier_wait));
        }
        BarrierWaitResult { leader }
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier").finish_non_exhaustive()
    }
}

/// The episodes of a barrier: arrivals fold their entry records until the
/// last one completes the episode (R6: one reduction, not a gather).
#[derive(Debug)]
pub struct Episodes {
    n: usize,
    state: Mutex<State>,
    done: Condvar,
}

#[derive(Debug)]
struct State {
    arrived: usize,
    /// Participants blocked on `done` (the last arrival wakes them only
    /// if there are any).
    waiting: usize,
    generation: u64,
    /// The episode under way.
    entries: Exchange<SELECTED>,
    /// Completed episodes `g` in slot `g % 2`.
    results: [Exchange<SELECTED>; 2],
}

impl Episodes {
    sync::const_unless_loom! {
        /// Episodes of `n` participants.
        pub fn new(n: usize) -> Episodes {
            Episodes {
                n: if n == 0 { 1 } else { n },
                state: Mutex::new(State {
                    arrived: 0,
                    waiting: 0,
                    generation: 0,
                    entries: Exchange::EMPTY,
                    results: [Exchange::EMPTY; 2],
                }),
                done: Condvar::new(),
            }
        }
    }

    /// Arrives with `entry`; returns the combined entries of the episode
    /// and whether this arrival completed it.
    pub fn arrive(&self, entry: Exchange<SELECTED>) -> (Exchange<SELECTED>, bool) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let generation = state.generation;
        let slot = (generation % 2) as usize;
        state.entries = state.entries.combine(&entry);
        state.arrived += 1;
        if state.arrived == self.n {
            state.results[slot] = core::mem::replace(&mut state.entries, Exchange::EMPTY);
            state.arrived = 0;
            state.generation += 1;
            let all = state.results[slot];
            let waiting = state.waiting;
            drop(state);
            if waiting > 0 {
                self.done.notify_all();
            }
            return (all, true);
        }
        state.waiting += 1;
        while state.generation == generation {
            state = self.done.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        state.waiting -= 1;
        (state.results[slot], false)
    }
}
