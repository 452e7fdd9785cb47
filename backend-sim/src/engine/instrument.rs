//! The instrumentation layer: what each instrumentation action costs on
//! its location's CPU (R1, the calibrated cost of its kind, split around
//! its clock read) and what the kernels do at it — region and loop enters
//! and exits, releases (R3) and entry records. The kernels themselves are
//! [`super::probe`]'s; in the truth every cost is zero and the same calls
//! are made.

use crate::activity::Step;
use crate::program::LocationId;

use super::options::{SimError, kerr};
use super::probe::Pbs;
use super::record::TraceKind;
use super::world::{Flow, World};

impl World<'_> {
    /// Spends `cost` ns of instrumentation on location `l` from `now` on:
    /// the CPU is busy and the local-only estimate learns of it (R1, 000 §2:
    /// TAU's local compensation subtracts exactly this).
    pub(super) fn charge(&mut self, l: LocationId, cost: u64) {
        if cost == 0 {
            return;
        }
        let now = self.now;
        let loc = &mut self.locs[l as usize];
        let start = loc.host.on_overhead(now, cost);
        loc.overhead += cost;
        self.record(l, TraceKind::Overhead, start, start + cost);
    }

    /// Charges `cost` on `l` starting no earlier than `from`, when the
    /// location goes on at `from` (a merge's cost after its end, R1).
    pub(super) fn charge_from(&mut self, l: LocationId, from: u64, cost: u64) {
        let loc = &mut self.locs[l as usize];
        loc.host.on_resume(from);
        if cost > 0 {
            let start = loc.host.on_overhead(from, cost);
            loc.overhead += cost;
            self.record(l, TraceKind::Overhead, start, start + cost);
        }
    }

    /// The kernels' start of a spawned `child` at `start` is a merge: its
    /// cost follows the start's clock read on the child (R1). The child
    /// has no timeline before it starts, so nothing is traced.
    pub(super) fn charge_start(&mut self, child: LocationId, start: u64, cost: u64) {
        let c = &mut self.locs[child as usize];
        c.host.on_start(start + cost);
        c.overhead += cost;
    }

    /// R3: a send's release, its clock read first and its cost after.
    /// Returns whether the cost is being paid now: the send then goes on
    /// at `l`'s next step, with the records kept until then
    /// ([`Self::take_released`]).
    pub(super) fn release_for_send(&mut self, l: LocationId) -> Result<bool, SimError> {
        let now = self.now;
        if self.locs[l as usize].released.is_some() {
            return Ok(false);
        }
        let pbs = self.release(l, now)?;
        self.locs[l as usize].released = Some((now, pbs));
        if self.calibration.send > 0 {
            self.charge(l, self.calibration.send);
            return Ok(true);
        }
        Ok(false)
    }

    /// The records of `l`'s pending send release (none without kernels).
    pub(super) fn take_released(&mut self, l: LocationId) -> Option<Pbs> {
        let now = self.now;
        let (_, pbs) = self.locs[l as usize].released.take().unwrap_or((now, None));
        pbs
    }

    /// A release of `l` at `t` (R3): the records its dependency carries
    /// (none when kernels are off).
    pub(super) fn release(&mut self, l: LocationId, t: u64) -> Result<Option<Pbs>, SimError> {
        let err = kerr(l);
        let pbs = match &mut self.locs[l as usize].probe {
            Some(p) => p.release(t).map(Some).map_err(err)?,
            None => None,
        };
        if let Some(p) = &pbs {
            self.log(l, Step::Release { id: p.id, at: t });
        }
        Ok(pbs)
    }

    /// The record a release of `l` at `t` would carry, without changing
    /// its kernels: an n-to-n entry or a posted receive (R3, R6).
    pub(super) fn peek(&mut self, l: LocationId, t: u64) -> Option<Pbs> {
        let pbs = self.locs[l as usize].probe.as_mut().map(|p| p.peek(t));
        if let Some(p) = &pbs {
            self.log(l, Step::Release { id: p.id, at: t });
        }
        pbs
    }
}

/// Region `region` entered (`enter`) or left by `l`. R1: an enter's clock
/// read follows its outside part, an exit's follows its inside part (they
/// are the region's); each part keeps the CPU, and the step goes on after.
#[inline]
pub(super) fn region(
    w: &mut World<'_>,
    l: LocationId,
    region: u32,
    enter: bool,
) -> Result<Flow, SimError> {
    let li = l as usize;
    let now = w.now;
    let cost = if enter {
        w.calibration.enter
    } else {
        w.calibration.exit
    };
    let before = if enter { cost.outside() } else { cost.inside };
    let loc = &mut w.locs[li];
    if !loc.read_done && before > 0 {
        loc.read_done = true;
        w.charge(l, before);
        w.next_step(l);
        return Ok(Flow::Stop);
    }
    let site = loc.site();
    if let Some(p) = &mut loc.probe {
        if enter {
            p.on_enter(region, site, now).map_err(kerr(l))?;
            w.log(l, Step::Enter { region, at: now });
        } else {
            p.on_exit(region, now).map_err(kerr(l))?;
            w.log(l, Step::Exit { region, at: now });
        }
    }
    let what = if enter {
        TraceKind::Enter(region)
    } else {
        TraceKind::Exit(region)
    };
    w.record(l, what, now, now);
    let loc = &mut w.locs[li];
    loc.read_done = false;
    loc.advance();
    let after = cost.whole - before.min(cost.whole);
    if after > 0 {
        w.charge(l, after);
        w.next_step(l);
        return Ok(Flow::Stop);
    }
    Ok(Flow::Next)
}

/// Loop `id` starts at `l` with `count` iterations (an index into the
/// code's counts); `end` is its last instruction. R1, R12: a loop is one
/// frame, charged like a region's enter on entry and exit on leaving (not
/// per iteration).
#[inline]
pub(super) fn loop_start(
    w: &mut World<'_>,
    l: LocationId,
    id: u32,
    count: u32,
    end: u32,
) -> Result<Flow, SimError> {
    let li = l as usize;
    let now = w.now;
    let count = w.code.count(count);
    let enter = w.calibration.enter;
    let loc = &mut w.locs[li];
    if count == 0 {
        loc.jump_after(end);
        return Ok(Flow::Next);
    }
    if !loc.read_done && enter.outside() > 0 {
        loc.read_done = true;
        w.charge(l, enter.outside());
        w.next_step(l);
        return Ok(Flow::Stop);
    }
    let site = loc.site();
    if let Some(p) = &mut loc.probe {
        p.on_loop_enter(id, site, now).map_err(kerr(l))?;
    }
    loc.read_done = false;
    loc.loops.push(count);
    loc.advance();
    let inside = enter.inside.min(enter.whole);
    if inside > 0 {
        w.charge(l, inside);
        w.next_step(l);
        return Ok(Flow::Stop);
    }
    Ok(Flow::Next)
}

/// The end of loop `id`'s body at `l`: back to its first instruction
/// (`start` + 1) while iterations are left, else the loop's exit (R1).
#[inline]
pub(super) fn loop_end(
    w: &mut World<'_>,
    l: LocationId,
    id: u32,
    start: u32,
) -> Result<Flow, SimError> {
    let now = w.now;
    let cost = w.calibration.exit;
    let loc = &mut w.locs[l as usize];
    let remaining = loc.loops.last().copied().unwrap_or(1);
    if remaining > 1 {
        if let Some(r) = loc.loops.last_mut() {
            *r -= 1;
        }
        loc.jump_after(start);
        return Ok(Flow::Next);
    }
    if !loc.read_done && cost.inside > 0 {
        loc.read_done = true;
        w.charge(l, cost.inside);
        w.next_step(l);
        return Ok(Flow::Stop);
    }
    if let Some(p) = &mut loc.probe {
        p.on_loop_exit(id, now).map_err(kerr(l))?;
    }
    loc.read_done = false;
    loc.loops.pop();
    loc.advance();
    if cost.outside() > 0 {
        w.charge(l, cost.outside());
        w.next_step(l);
        return Ok(Flow::Stop);
    }
    Ok(Flow::Next)
}
