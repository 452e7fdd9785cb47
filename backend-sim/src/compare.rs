//! Runs a program as the truth and as the measured run, and sets each
//! compensation estimate beside the truth, per location: the shape of seed
//! 000 Table 1 (no instrumentation, no compensation, local compensation,
//! parallel compensation), with both parallel forms (R4, R5).

use core::fmt::Write as _;

use crate::engine::{RunOptions, RunResult, SimError, run};
use crate::program::Program;

/// One location's end times, in ns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Location name.
    pub location: String,
    /// End in the uninstrumented run (the truth).
    pub truth: u64,
    /// End in the measured run, uncompensated.
    pub measured: u64,
    /// Measured end minus the location's own overhead (TAU-style local-only).
    pub local_only: i64,
    /// Delay-only parallel compensation (R4).
    pub delay_only: i64,
    /// Timestamped parallel compensation (R5).
    pub timestamped: i64,
    /// The location's own instrumentation overhead.
    pub overhead: u64,
}

impl Row {
    /// Signed error of an estimate against the truth, in ns.
    pub fn error(&self, estimate: i64) -> i64 {
        estimate - self.truth as i64
    }
}

/// The truth and the measured run of one program, side by side.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Program name.
    pub program: String,
    /// One row per location.
    pub rows: Vec<Row>,
    /// The truth run (its kernels ran with zero cost: their critical path
    /// is the truth's).
    pub truth: RunResult,
    /// The measured run.
    pub measured: RunResult,
}

/// Runs `program` twice — truth and measured — and compares (DESIGN §4).
pub fn compare(program: &Program) -> Result<Comparison, SimError> {
    compare_with(program, false)
}

/// [`compare`], keeping the per-operation traces of both runs when `trace`.
pub fn compare_with(program: &Program, trace: bool) -> Result<Comparison, SimError> {
    let truth = run(
        program,
        RunOptions {
            trace,
            ..RunOptions::TRUTH
        },
    )?;
    let measured = run(
        program,
        RunOptions {
            trace,
            ..RunOptions::MEASURED
        },
    )?;
    let estimates = measured.estimates.clone().unwrap_or_default();
    let rows = program
        .locations
        .iter()
        .zip(&truth.ends)
        .zip(&estimates)
        .map(|((spec, &t), e)| Row {
            location: spec.name.clone(),
            truth: t,
            measured: e.measured,
            local_only: e.local_only,
            delay_only: e.delay_only,
            timestamped: e.timestamped,
            overhead: e.overhead,
        })
        .collect();
    Ok(Comparison {
        program: program.name.clone(),
        rows,
        truth,
        measured,
    })
}

fn micros(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1000.0)
}

fn percent(error: i64, truth: u64) -> String {
    if error == 0 {
        return "exact".into();
    }
    if truth == 0 {
        return format!("{error:+} ns");
    }
    format!("{:+.1}%", error as f64 * 100.0 / truth as f64)
}

impl Comparison {
    /// The table of end times (µs) and errors against the truth.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let width = self
            .rows
            .iter()
            .map(|r| r.location.len())
            .max()
            .unwrap_or(8)
            .max(8);
        let _ = writeln!(
            out,
            "{}: end of every location in µs, error against the truth in parentheses",
            self.program
        );
        let _ = writeln!(
            out,
            "{:<width$}  {:>11}  {:>20}  {:>20}  {:>20}  {:>20}  {:>9}",
            "location",
            "truth",
            "no compensation",
            "local-only",
            "delay-only (R4)",
            "timestamped (R5)",
            "overhead"
        );
        for r in &self.rows {
            let cell = |estimate: i64| {
                let e = r.error(estimate);
                format!("{} ({})", micros(estimate), percent(e, r.truth))
            };
            let _ = writeln!(
                out,
                "{:<width$}  {:>11}  {:>20}  {:>20}  {:>20}  {:>20}  {:>9}",
                r.location,
                micros(r.truth as i64),
                cell(r.measured as i64),
                cell(r.local_only),
                cell(r.delay_only),
                cell(r.timestamped),
                micros(r.overhead as i64),
            );
        }
        let _ = writeln!(
            out,
            "overhead: the location's own instrumentation time, which local-only compensation subtracts"
        );
        out
    }
}
