//! The merge rules as pure functions: delay-only (R4) and timestamped (R5),
//! for one dependency and for many (R6's n-to-1 shape), and the n-to-n
//! exchange record of R6.
//!
//! One observation ties the two forms together. R4's
//! `x' = min(x + w, min_j x_j)` is, written as an approximated end time
//! `a(e) = e - x'`, exactly `a(e) = max(b - x, max_j (e - x_j))`, and
//! `e - x_j = a_j + (e - t_j)`: R4 is R5 with every transfer set to its
//! upper bound `e - t_j` (001 eq. 5). That is why the delay-only form is
//! never earlier than the timestamped one, and why both share this code.

use crate::piggyback::{Flags, Piggyback};

/// Which merge form a run uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[repr(u32)]
pub enum Form {
    /// R4: clocks of different locations are not comparable; only delays travel.
    DelayOnly = 0,
    /// R5: clocks are comparable; approximated release times travel too.
    #[default]
    Timestamped = 1,
}

/// One dependency of a merge: the record it carried and the transfer
/// estimate the backend knows for it.
#[derive(Clone, Copy, Debug)]
pub struct Dependency<'a, const K: usize> {
    /// The record taken at the release point (R3).
    pub piggyback: &'a Piggyback<K>,
    /// Calibrated transfer estimate, used when the transfer cannot be
    /// measured (R5 case m.2). Zero for locks, barriers and queues.
    pub model: u64,
    /// Lower bound of the transfer, the copy cost (001 eq. 6).
    pub copy: u64,
    /// The measured time this dependency was satisfied at the merging
    /// location, when the backend observed it (a simulator, a thread
    /// backend, an MPI `Waitsome` loop). `None`: the merge's end stands for
    /// it, which is exact for the last dependency to arrive but only an
    /// upper bound for the others of a wait-all or a gather root.
    pub arrival: Option<u64>,
}

impl<'a, const K: usize> Dependency<'a, K> {
    /// A dependency without transfer time (lock hand-off, queue item, join).
    pub const fn immediate(piggyback: &'a Piggyback<K>) -> Self {
        Dependency {
            piggyback,
            model: 0,
            copy: 0,
            arrival: None,
        }
    }

    /// A message dependency with a transfer estimate and its copy bound.
    pub const fn message(piggyback: &'a Piggyback<K>, model: u64, copy: u64) -> Self {
        Dependency {
            piggyback,
            model,
            copy,
            arrival: None,
        }
    }

    /// The same dependency, observed to arrive at measured time `arrival`.
    #[must_use]
    pub const fn arrived(mut self, arrival: u64) -> Self {
        self.arrival = Some(arrival);
        self
    }

    /// Its transfer time `l_j` into a merge that blocked from `begin` to
    /// `end` (R5): seed 001's case split with the dependency's own observed
    /// arrival standing for the receive's end when there is one. Case m.1
    /// measures `arrival - t_j`; case m.2 clips the model to
    /// `[copy, arrival - t_j]`.
    #[inline]
    pub fn transfer(&self, begin: u64, end: u64) -> Transfer {
        let arrival = self.arrival.map_or(end, |a| a.min(end));
        transfer(
            begin,
            arrival,
            self.piggyback.measured(),
            self.model,
            self.copy,
        )
    }
}

/// Whether a merge that began at measured time `begin` may have waited for
/// `deps` (R5's `w`): some dependency carrying a delay became available at
/// or after `begin` (its observed arrival where the backend saw one,
/// otherwise its release `t_j` plus its transfer model, at least the copy
/// cost: at once for an immediate hand-off, never for a model of
/// `u64::MAX`), or carries no comparable release time (R4, whose
/// `min(x + w, x_j)` bounds the merge by its delay anyway). A merge none
/// of whose dependencies carries a delay changes nothing (R3) and keeps
/// its wait as measured: it may have waited too.
///
/// Otherwise everything the merge depends on was there before it began,
/// and it did not wait: a backend of a real run merges it at its end
/// (`w = 0`), so that what the call took stays the program's time. Seed
/// 001 gives such a receive its modelled copy time (eq. 4, 8), which a
/// simulated merge lasts; in a real run the call may have been preempted
/// or copied a large message, which is not instrumentation. Counted as a
/// wait, `a(e) = max(b - x, a_j + l_j)` takes the whole call away
/// (`x' = x + w`). Ties count as waits, as in [`transfer`]'s case m.1.
pub fn may_have_waited<const K: usize>(begin: u64, deps: &[Dependency<'_, K>]) -> bool {
    let at = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
    let mut informed = false;
    for d in deps {
        let p = d.piggyback;
        if !p.flags.contains(Flags::DELAY) {
            continue; // R3: no record, nothing to wait for in it
        }
        informed = true;
        if !p.flags.contains(Flags::TIMESTAMP) {
            return true; // R4: no comparable release time
        }
        let available = match d.arrival {
            Some(arrival) => at(arrival),
            None => p.measured().saturating_add(at(d.model.max(d.copy))),
        };
        if available >= at(begin) {
            return true;
        }
    }
    !informed
}

/// Whether a transfer time was measured or estimated (001 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Case {
    /// m.1: the merge began before the release (`b <= t_j`), so the
    /// transfer is measured as `e - t_j` (001 eq. 2).
    Measured,
    /// m.2: the merge began after the release, so the transfer is the
    /// model clipped to `[copy, e - t_j]` (001 eq. 5-11).
    Bounded,
    /// The dependency carries a delay but no comparable timestamp: its
    /// transfer is taken at its upper bound `e - t_j`, the R4 form.
    DelayOnly,
}

/// The transfer time `l_j` of one dependency (R5), with its bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The estimate used for the approximated end and the critical path.
    pub estimate: i64,
    /// Lower bound (001 eq. 6, 9).
    pub lower: i64,
    /// Upper bound `e - t_j` (001 eq. 5, 10).
    pub upper: i64,
    /// How the estimate was obtained.
    pub case: Case,
}

/// The transfer time of a dependency released at measured time `release`
/// (`t_j`) into a merge that blocked from `begin` to `end` (R5).
///
/// Case m.1 (`begin <= release`): measured, `end - release` (001 eq. 2).
/// Case m.2: the model clipped to `[copy, end - release]` (001 eq. 5-6,
/// 9-10); the upper bound wins when the copy bound exceeds it.
#[inline]
pub fn transfer(begin: u64, end: u64, release: i64, model: u64, copy: u64) -> Transfer {
    let upper = end as i64 - release;
    if (begin as i64) <= release {
        // 001 (m.1), eq. 2: Comm_m = recv_m - send_m
        return Transfer {
            estimate: upper,
            lower: upper,
            upper,
            case: Case::Measured,
        };
    }
    // 001 (m.2), eq. 9-10: lower = max(2C, ...), upper = recv_m - send_m
    let lower = (copy as i64).min(upper);
    let estimate = (model as i64).max(lower).min(upper);
    Transfer {
        estimate,
        lower,
        upper,
        case: Case::Bounded,
    }
}

/// The approximated end of a merge and how it came about (R4, R5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Approximation {
    /// Approximated end time `a(e)`.
    pub end: i64,
    /// Lower bound of `a(e)` (001 eq. 11, left).
    pub lower: i64,
    /// Upper bound of `a(e)` (001 eq. 11, right).
    pub upper: i64,
    /// Index of the dependency that determined `a(e)`, `None` when the
    /// location's own begin did (it would not have waited).
    pub determined_by: Option<usize>,
    /// New delay `x' = e - a(e)`.
    pub delay: u64,
}

/// Approximated end of a merge that blocked from `begin` to `end` with
/// delay `delay` on `deps`, in the given `form` (R4, R5, R6 n-to-1).
///
/// Timestamped: `a(e) = max(b - x, max_j (a_j + l_j))` (R5). Delay-only:
/// `x' = min(x + w, min_j x_j)` (R4; 000 Fig. 7: `x2' = min(x1, x2 + w)`).
/// Dependencies without [`Flags::DELAY`] are ignored (R3: an uninstrumented
/// peer leaves the state unchanged). A dependency with a delay but no
/// timestamp is merged in the R4 form even in a timestamped run.
pub fn approximate<const K: usize>(
    form: Form,
    begin: u64,
    end: u64,
    delay: u64,
    deps: &[Dependency<'_, K>],
) -> Approximation {
    approximate_from(form, Some(begin as i64 - delay as i64), begin, end, deps)
}

/// [`approximate`] with the location's own approximated begin `own` given
/// explicitly; `None` for a location that did not exist before the merge
/// (a spawned thread's start), so that only the dependencies decide.
pub fn approximate_from<const K: usize>(
    form: Form,
    own: Option<i64>,
    begin: u64,
    end: u64,
    deps: &[Dependency<'_, K>],
) -> Approximation {
    let own = own.unwrap_or(i64::MIN);
    let mut best = Approximation {
        end: own,
        lower: own,
        upper: own,
        determined_by: None,
        delay: 0,
    };
    let mut informed = false;
    for (j, dep) in deps.iter().enumerate() {
        let p = dep.piggyback;
        if !p.flags.contains(Flags::DELAY) {
            continue;
        }
        informed = true;
        let (candidate, lower, upper) =
            if form == Form::Timestamped && p.flags.contains(Flags::TIMESTAMP) {
                let l = dep.transfer(begin, end);
                (
                    p.approximated + l.estimate,
                    p.approximated + l.lower,
                    p.approximated + l.upper,
                )
            } else {
                // R4 / 000 Fig. 7: the dependency would have released x_j
                // earlier; a(e) = e - x_j.
                let c = end as i64 - p.delay as i64;
                (c, c, c)
            };
        if candidate > best.end {
            best.end = candidate;
            best.determined_by = Some(j);
        }
        best.lower = best.lower.max(lower);
        best.upper = best.upper.max(upper);
    }
    if !informed {
        // R3, 003 §2.3 case 4: no dependency carried a delay (an
        // uninstrumented peer, an empty dependency list): the state is
        // unchanged, the wait stays as measured.
        let unchanged = match own {
            i64::MIN => end as i64,
            own => own + (end - begin) as i64,
        };
        best = Approximation {
            end: unchanged,
            lower: unchanged,
            upper: unchanged,
            ..best
        };
    }
    // x' = e - a(e) >= 0: every candidate is at most e (a_j + (e - t_j) =
    // e - x_j, b - x <= e), so this never saturates for consistent input.
    best.delay = (end as i64).saturating_sub(best.end).max(0) as u64;
    best
}

/// Delay-only merge of 000 Fig. 7 for one dependency, as the paper writes
/// it: returns `(x2', w')` for receiver delay `x2`, wait `w` and sender
/// delay `x1`. Case 1 (`x1 >= x2 + w`): `x2' = x2 + w`, `w' = 0`; case 2:
/// `x2' = x1`, `w' = w + x2 - x1`.
#[inline]
pub const fn delay_only(x2: u64, w: u64, x1: u64) -> (u64, i64) {
    // 000 §3.1.4, Fig. 7: x2' = min(x1, x2 + w)
    let x2_new = if x1 >= x2 + w { x2 + w } else { x1 };
    // R4: w' = w + x - x'
    let w_new = w as i64 + x2 as i64 - x2_new as i64;
    (x2_new, w_new)
}
