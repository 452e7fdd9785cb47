//! The location's dependencies: the record a release carries (R3), the
//! merges of one or many records (R4, R5, R7, R8) and collectives (R6).
//! Split from `location.rs` by concern; the state is the parent's.

use super::{KernelError, Location, Merged, PathState};
use crate::exchange::Exchange;
use crate::merge::{self, Dependency, Form};
use crate::path::Snapshot;
use crate::piggyback::{Flags, Pending, Piggyback};

impl<const K: usize, const D: usize> Location<K, D> {
    // ----- releases (R3) ----------------------------------------------------

    /// The record a release at `t` would carry, without changing the state:
    /// for the entry record of an n-to-n collective (R6), which is combined
    /// before [`Location::on_collective`] completes the event at the same `t`.
    pub fn peek(&self, t: u64) -> Piggyback<K> {
        let t = t.max(self.last_measured);
        let (now, dt) = self.interval(t, self.delay);
        let clock = if self.path_state == PathState::Active {
            self.clock + dt
        } else {
            self.clock
        };
        self.record(now, clock)
    }

    fn record(&self, now: i64, clock: i64) -> Piggyback<K> {
        let mut p = Piggyback::EMPTY;
        self.record_into(now, clock, &mut p);
        p
    }

    /// [`Location::record`] written into `p`, every field of it.
    #[inline]
    fn record_into(&self, now: i64, clock: i64, p: &mut Piggyback<K>) {
        if self.record_bases_into(now, clock, p) {
            // The lazy representation materialised in place (see path_at).
            p.add_path_clock(clock, &self.active, self.top_slot());
        }
    }

    /// Every field of a release's record at approximated time `now` and
    /// path clock `clock`, the selected regions' values as the location
    /// keeps them (their bases, before [`Piggyback::add_path_clock`]);
    /// false when the record carries no path data (R9: a stopped or
    /// not-yet-started location; the arrays are zero).
    #[inline(always)]
    fn record_bases_into(&self, now: i64, clock: i64, p: &mut Piggyback<K>) -> bool {
        let mut flags = Flags::DELAY;
        if self.form == Form::Timestamped {
            flags = flags.with(Flags::TIMESTAMP);
        }
        p.location = self.id;
        p.delay = self.delay;
        p.approximated = now;
        // Field by field, in place: a whole `Piggyback` built and assigned
        // goes through a copy on the stack (30 instructions a lock pair).
        if self.path_state != PathState::Active {
            p.flags = flags;
            p.longest = 0;
            p.transfer = 0;
            p.inclusive = [0; K];
            p.exclusive = [0; K];
            p.net = [0; K];
            return false;
        }
        p.flags = flags.with(Flags::PATH);
        p.longest = clock + self.longest;
        p.transfer = self.transfer;
        p.inclusive = self.inclusive;
        p.exclusive = self.exclusive;
        p.net = self.net;
        true
    }

    /// A release at measured time `t` — send, unlock, barrier arrival,
    /// enqueue, spawn, thread end: returns the piggyback it carries (R3).
    ///
    /// The release's cost (packing the piggyback) falls after its clock read
    /// but before the dependency leaves: the record's delay includes it, so
    /// that `approximated + delay` is the measured departure while
    /// `approximated` stays the release's approximated time.
    pub fn on_release(&mut self, t: u64) -> Result<Piggyback<K>, KernelError> {
        self.on_release_costing(t, self.calibration.send)
    }

    /// [`Location::on_release`] charging `cost` instead of the calibrated
    /// `send` cost: for backends whose release actions (unlock, enqueue,
    /// notify, spawn) are calibrated one by one (R1).
    #[inline]
    pub fn on_release_costing(&mut self, t: u64, cost: u64) -> Result<Piggyback<K>, KernelError> {
        let mut p = Piggyback::EMPTY;
        self.on_release_costing_into(t, cost, &mut p)?;
        Ok(p)
    }

    /// [`Location::on_release_costing`] writing the piggyback into `out`
    /// (every field), where the caller keeps it: a lock's hand-off slot
    /// is written once, not through a returned copy. On an error `out`
    /// is left as it was.
    #[inline]
    pub fn on_release_costing_into(
        &mut self,
        t: u64,
        cost: u64,
        out: &mut Piggyback<K>,
    ) -> Result<(), KernelError> {
        let now = self.release_at(t, cost)?;
        self.record_into(now, self.clock, out);
        Ok(())
    }

    /// What every release at `t` does before its record is taken: the
    /// interval up to `t` (R2), then its `cost` charged (R1: taking the
    /// record is an instrumentation action); the approximated time.
    #[inline(always)]
    fn release_at(&mut self, t: u64, cost: u64) -> Result<i64, KernelError> {
        self.check_time(t)?;
        let now = self.advance(t, 0);
        self.charge(cost);
        Ok(now)
    }

    /// [`Location::on_release_costing_into`] keeping the record in the
    /// location's lazy representation ([`Pending`]): the same release, the
    /// same delay; the reader materialises the values it needs.
    #[inline]
    pub fn on_release_costing_pending(
        &mut self,
        t: u64,
        cost: u64,
        out: &mut Pending<K>,
    ) -> Result<(), KernelError> {
        let now = self.release_at(t, cost)?;
        if self.record_bases_into(now, self.clock, &mut out.base) {
            out.clock = self.clock;
            out.active = self.active;
            out.top = self.top_slot();
        }
        Ok(())
    }

    // ----- merges (R4, R5, R6, R7) ------------------------------------------

    /// A merge that blocked from `begin` to `end` on `deps` — receive end,
    /// wait completion, lock acquired, dequeue, join (R4, R5; R6 n-to-1 and
    /// 1-to-n receivers).
    pub fn on_merge(
        &mut self,
        begin: u64,
        end: u64,
        deps: &[Dependency<'_, K>],
    ) -> Result<Merged, KernelError> {
        self.on_merge_costing(begin, end, deps, self.calibration.merge)
    }

    /// [`Location::on_merge`] charging `cost` instead of the calibrated
    /// `merge` cost: for backends whose merge actions (acquire, barrier
    /// exit, dequeue, join) are calibrated one by one (R1).
    pub fn on_merge_costing(
        &mut self,
        begin: u64,
        end: u64,
        deps: &[Dependency<'_, K>],
        cost: u64,
    ) -> Result<Merged, KernelError> {
        self.check_interval(begin, end)?;
        let at_begin = self.advance(begin, 0);
        let approx = merge::approximate(self.form, begin, end, self.delay, deps);
        Ok(self.complete(begin, end, at_begin, &approx, deps, cost))
    }

    /// The start of a location created by another — a spawned thread: its
    /// first point merges the creator's release, and its own start imposes
    /// nothing (R8: spawn is a release that the child's start merges). Like
    /// every merge it charges the calibrated `merge` cost (R1).
    pub fn on_start(&mut self, t: u64, parent: &Dependency<'_, K>) -> Result<Merged, KernelError> {
        self.on_start_costing(t, parent, self.calibration.merge)
    }

    /// [`Location::on_start`] charging `cost` instead of the calibrated
    /// `merge` cost (R1).
    pub fn on_start_costing(
        &mut self,
        t: u64,
        parent: &Dependency<'_, K>,
        cost: u64,
    ) -> Result<Merged, KernelError> {
        self.check_time(t)?;
        let at_begin = self.advance(t, 0);
        let deps = core::slice::from_ref(parent);
        // The child did not exist before: only the creator decides a(t).
        let approx = if parent.piggyback.flags.contains(Flags::DELAY) {
            merge::approximate_from(self.form, None, t, t, deps)
        } else {
            merge::approximate(self.form, t, t, self.delay, deps)
        };
        Ok(self.complete(t, t, at_begin, &approx, deps, cost))
    }

    fn complete(
        &mut self,
        begin: u64,
        end: u64,
        at_begin: i64,
        approx: &merge::Approximation,
        deps: &[Dependency<'_, K>],
        cost: u64,
    ) -> Merged {
        let approximated_end = approx.end;
        // R5: x' = e - a(e); R4: w' = w + x - x' = a(e) - a(b).
        self.delay = (end as i64 - approximated_end).max(0) as u64;
        let mut arrival = None;
        let mut transfer = 0;
        // R7 ties: compare against the running winner's location, not ours.
        let mut winner = self.id;
        for dep in deps {
            let p = dep.piggyback;
            let timestamped = p.flags.contains(Flags::DELAY.with(Flags::TIMESTAMP));
            // R5: l_j. merge::approximate computed it too; a visitor to share
            // it measured slower (merge K=0 21 -> 28 ns) than computing it twice.
            let l = if timestamped {
                dep.transfer(begin, end).estimate
            } else {
                0
            };
            if timestamped {
                // R11: the approximated arrival of the latest dependency.
                let a = p.approximated + l;
                arrival = Some(arrival.map_or(a, |b: i64| b.max(a)));
            }
            if !p.flags.contains(Flags::PATH) {
                continue;
            }
            match self.path_state {
                // R9, 003 §2.3 case 3: path data reaching an idle location starts it.
                PathState::Idle => self.begin_path(),
                PathState::Active => {}
                // R9: a stopped location ignores path data.
                PathState::Stopped => continue,
            }
            // R7: l_j is 0 in the delay-only form (Hollingsworth, 003
            // Fig. 2) and the R5 transfer estimate otherwise.
            let l = if self.form == Form::Timestamped { l } else { 0 };
            if self.merge_one(
                winner,
                p.longest,
                p.transfer,
                p.location,
                &p.inclusive,
                &p.exclusive,
                &p.net,
                l,
            ) {
                transfer = l;
                winner = p.location;
            }
        }
        self.last_approximated = approximated_end;
        self.last_measured = end;
        // R1: unpacking and merging is an instrumentation action.
        self.charge(cost);
        Merged {
            wait: end - begin,
            compensated_wait: approximated_end - at_begin,
            approximated_end,
            lower: approx.lower,
            upper: approx.upper,
            determined_by: approx.determined_by,
            arrival,
            transfer,
        }
    }

    /// R7 at a merge, for one incoming path, on the lazy representation:
    /// `n[k] = max(n[k], n_j[k] + l)` per k, and the shares of the winner of
    /// `(L, lower location)` against the running `winner` (003 Fig. 2
    /// l.23-25, Fig. 4 l.6-9). No `Snapshot` is materialised. Returns
    /// whether the incoming path won.
    #[inline]
    #[allow(clippy::too_many_arguments)] // reason: the fields of a Piggyback or a Snapshot, borrowed, so neither is copied
    fn merge_one(
        &mut self,
        winner: u32,
        longest: i64,
        transfer: i64,
        location: u32,
        inclusive: &[i64; K],
        exclusive: &[i64; K],
        net: &[i64; K],
        l: i64,
    ) -> bool {
        let clock = self.clock;
        // R7: n'[k] = max(n[k], n_j[k] + l) for each k; in the lazy form an
        // inactive region's net is stored minus `clock` (branch-free mask).
        for ((own, &theirs), &open) in self.net.iter_mut().zip(net).zip(&self.active) {
            let inactive = i64::from(open == 0).wrapping_neg();
            *own = (*own).max(theirs + l - (clock & inactive));
        }
        let incoming = longest + l;
        let local = clock + self.longest;
        let wins = match incoming.cmp(&local) {
            core::cmp::Ordering::Greater => true,
            core::cmp::Ordering::Less => false,
            core::cmp::Ordering::Equal => {
                if location != winner {
                    location < winner
                } else {
                    // Same length and location (rare): the full order of `beats`.
                    let mut cur = self.path_at(clock);
                    cur.location = winner;
                    let mut path = cur;
                    path.longest = incoming;
                    path.transfer = transfer + l;
                    path.inclusive = *inclusive;
                    path.exclusive = *exclusive;
                    path.location = location;
                    path.beats(&cur)
                }
            }
        };
        if wins {
            let top = self.top_slot();
            self.longest = incoming - clock;
            self.transfer = transfer + l;
            // The winner's shares, stored lazily: an active region's
            // inclusive share and the top region's exclusive share grow.
            for ((own, &theirs), &open) in
                self.inclusive.iter_mut().zip(inclusive).zip(&self.active)
            {
                let active = i64::from(open != 0).wrapping_neg();
                *own = theirs - (clock & active);
            }
            self.exclusive = *exclusive;
            if usize::from(top) < K {
                self.exclusive[usize::from(top)] -= clock;
            }
        }
        wins
    }

    /// R7 at a merge: `L' = max(L, max_j (L_j + l_j))` with the shares of
    /// the winner, and `n'[k] = max(n[k], max_j (n_j[k] + l_j))` for each k
    /// independently (003 Fig. 2 l.23-25; Fig. 4 l.6-9). Returns the
    /// transfer time taken over from the winning dependency.
    fn merge_paths<I>(&mut self, incoming: I) -> i64
    where
        I: Iterator<Item = (Snapshot<K>, i64)>,
    {
        let mut local: Option<Snapshot<K>> = None;
        let mut taken = 0;
        for (mut path, l) in incoming {
            match self.path_state {
                // R9, 003 §2.3 case 3: path data reaching an idle location starts it.
                PathState::Idle => self.begin_path(),
                PathState::Active => {}
                // R9: a stopped location ignores path data.
                PathState::Stopped => return 0,
            }
            let current = local.get_or_insert_with(|| self.path_at(self.clock));
            path.longest += l;
            path.transfer += l;
            for k in 0..K {
                path.net[k] += l;
                current.net[k] = current.net[k].max(path.net[k]);
            }
            if path.beats(current) {
                let nets = current.net;
                // The winner keeps its own id so that later ties compare
                // against it (R7: lower location id wins).
                *current = Snapshot { net: nets, ..path };
                taken = l;
            }
        }
        if let Some(mut s) = local {
            s.location = self.id;
            self.set_path(&s);
        }
        taken
    }

    /// Completes an n-to-n collective (barrier, allreduce, allgather,
    /// alltoall) that blocked from `begin` to `end`, given the reduction of
    /// every participant's entry record, this location's included (R6).
    ///
    /// Timestamped (001 eq. 13): `a(e) = max_j (b_j - x_j) + (e - max_j b_j)`,
    /// the latest approximated entry plus the synchronisation time measured
    /// after the latest measured entry. Delay-only:
    /// `x' = min_j (x_j + w_j) - min_j w_j`, exact when every participant
    /// leaves the synchronisation the same time after the last arrival.
    pub fn on_collective(
        &mut self,
        begin: u64,
        end: u64,
        exchange: &Exchange<K>,
    ) -> Result<Merged, KernelError> {
        self.on_collective_costing(begin, end, exchange, self.calibration.merge)
    }

    /// [`Location::on_collective`] charging `cost` instead of the
    /// calibrated `merge` cost (R1).
    pub fn on_collective_costing(
        &mut self,
        begin: u64,
        end: u64,
        exchange: &Exchange<K>,
        cost: u64,
    ) -> Result<Merged, KernelError> {
        self.check_interval(begin, end)?;
        let at_begin = self.advance(begin, 0);
        let unchanged = end as i64 - self.delay as i64;
        let (approximated_end, sync) = if !exchange.flags.contains(Flags::DELAY) {
            // R3: nobody carried a delay; the state is unchanged.
            (unchanged, 0)
        } else if self.form == Form::Timestamped && exchange.flags.contains(Flags::TIMESTAMP) {
            // 001 eq. 13: exit_a^i = enter_a^k + (exit_m^i - enter_m^j)
            let sync = end as i64 - exchange.max_measured;
            ((exchange.max_approximated + sync).max(at_begin), sync)
        } else {
            // R6 delay-only: x' = min_j (x_j + w_j) - S, S = min_j w_j
            let delay = exchange
                .min_delay_plus_wait
                .saturating_sub(exchange.min_wait);
            ((end as i64 - delay as i64).max(at_begin), 0)
        };
        let transfer = if exchange.flags.contains(Flags::PATH) {
            // R7: the exit follows every arrival; the synchronisation time
            // is the (transfer) of the timestamped form.
            self.merge_paths(core::iter::once((exchange.path, sync)))
        } else {
            0
        };
        self.delay = (end as i64 - approximated_end).max(0) as u64;
        self.last_approximated = approximated_end;
        self.last_measured = end;
        // R1: combining the exchange is an instrumentation action.
        self.charge(cost);
        Ok(Merged {
            wait: end - begin,
            compensated_wait: approximated_end - at_begin,
            approximated_end,
            lower: approximated_end,
            upper: approximated_end,
            determined_by: None,
            arrival: None,
            transfer,
        })
    }
}
