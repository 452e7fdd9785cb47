//! Runs a program as the truth and as the measured run, and sets each
//! compensation estimate beside the truth, per location: the shape of seed
//! 000 Table 1 (no instrumentation, no compensation, local compensation,
//! parallel compensation), with both parallel forms (R4, R5).

use core::fmt::Write as _;

use crate::output::units::Unit;

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
    compare_runs(
        program,
        RunOptions {
            trace,
            ..RunOptions::TRUTH
        },
        RunOptions {
            trace,
            ..RunOptions::MEASURED
        },
    )
}

/// [`compare`] with the options of each run given: `truth` must not
/// charge instrumentation (`measured: false`), `measured` must; both with
/// kernels.
pub fn compare_runs(
    program: &Program,
    truth: RunOptions,
    measured: RunOptions,
) -> Result<Comparison, SimError> {
    let truth = run(program, truth)?;
    let measured = run(program, measured)?;
    Ok(Comparison::of(program, truth, measured))
}

impl Comparison {
    /// The rows of a truth run and a measured run of `program`.
    pub fn of(program: &Program, truth: RunResult, measured: RunResult) -> Comparison {
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
        Comparison {
            program: program.name.clone(),
            rows,
            truth,
            measured,
        }
    }
}

fn percent(error: i64, truth: u64) -> String {
    if error == 0 {
        return "exact".into();
    }
    if truth == 0 {
        return format!("{error:+} ns");
    }
    let p = format!("{:+.1}%", error as f64 * 100.0 / truth as f64);
    // Not "+0.0%" nor "-0.0%": the error is there, but below 0.05 %.
    if p == "+0.0%" || p == "-0.0%" {
        return format!("{}<0.1%", if error > 0 { "+" } else { "-" });
    }
    p
}

/// Tables with more locations than this print a summary unless asked for
/// every row.
pub const SUMMARY_ABOVE: usize = 16;
/// Locations a summary lists by name (the latest ends of the truth).
pub const SUMMARY_TOP: usize = 5;

impl Comparison {
    /// The table of end times and errors against the truth, one row per
    /// location.
    pub fn table(&self) -> String {
        self.render(true)
    }

    /// The table, or with more than [`SUMMARY_ABOVE`] locations and not
    /// `all`, a summary: min, median and max of every column over the
    /// locations, then the [`SUMMARY_TOP`] locations that end last in the
    /// truth.
    // Long: table and summary share the widths, unit and row closure computed first.
    pub fn render(&self, all: bool) -> String {
        let max = self
            .rows
            .iter()
            .map(|r| r.truth.max(r.measured) as i64)
            .max()
            .unwrap_or(0);
        let unit = Unit::for_max(max);
        let mut out = String::new();
        let width = self
            .rows
            .iter()
            .map(|r| r.location.chars().count())
            .max()
            .unwrap_or(8)
            .max(10);
        let _ = writeln!(
            out,
            "{}: end of every location in {}, error against the truth in parentheses",
            self.program,
            unit.name()
        );
        let header = |out: &mut String, first: &str| {
            let _ = writeln!(
                out,
                "{:<width$}  {:>11}  {:>20}  {:>20}  {:>20}  {:>20}  {:>9}",
                first,
                "truth",
                "no compensation",
                "local-only",
                "delay-only (R4)",
                "timestamped (R5)",
                "overhead"
            );
        };
        let line = |out: &mut String, label: &str, r: &Row| {
            let cell = |estimate: i64| {
                let e = r.error(estimate);
                format!("{} ({})", unit.fmt(estimate), percent(e, r.truth))
            };
            let _ = writeln!(
                out,
                "{:<width$}  {:>11}  {:>20}  {:>20}  {:>20}  {:>20}  {:>9}",
                label,
                unit.fmt(r.truth as i64),
                cell(r.measured as i64),
                cell(r.local_only),
                cell(r.delay_only),
                cell(r.timestamped),
                unit.fmt(r.overhead as i64),
            );
        };
        if all || self.rows.len() <= SUMMARY_ABOVE {
            header(&mut out, "location");
            for r in &self.rows {
                line(&mut out, &r.location, r);
            }
        } else {
            let _ = writeln!(
                out,
                "{} locations: min, median and max of each column over the locations (--all-locations: every row)",
                self.rows.len()
            );
            let _ = writeln!(
                out,
                "{:<width$}  {:>11}  {:>20}  {:>20}  {:>20}  {:>20}  {:>9}",
                "",
                "truth",
                "no compensation",
                "local-only",
                "delay-only (R4)",
                "timestamped (R5)",
                "overhead"
            );
            let _ = writeln!(
                out,
                "{:<width$}  {:>11}  {:>20}  {:>20}  {:>20}  {:>20}  {:>9}",
                "", "end", "error", "error", "error", "error", ""
            );
            for (label, cells) in self.summary(unit) {
                let _ = writeln!(
                    out,
                    "{:<width$}  {:>11}  {:>20}  {:>20}  {:>20}  {:>20}  {:>9}",
                    label, cells[0], cells[1], cells[2], cells[3], cells[4], cells[5]
                );
            }
            let mut top: Vec<&Row> = self.rows.iter().collect();
            top.sort_by(|a, b| b.truth.cmp(&a.truth).then(a.location.cmp(&b.location)));
            let _ = writeln!(
                out,
                "the {SUMMARY_TOP} locations that end last in the truth:"
            );
            for r in top.into_iter().take(SUMMARY_TOP) {
                line(&mut out, &r.location, r);
            }
        }
        let _ = writeln!(
            out,
            "overhead: the location's own instrumentation time, which local-only compensation subtracts"
        );
        out
    }

    /// Min, median and max of every column, each over the locations on
    /// its own (a summary row is not one location): the truth's end, each
    /// estimate's error against the truth (relative), the overhead.
    fn summary(&self, unit: Unit) -> [(&'static str, [String; 6]); 3] {
        fn pick<T: Copy + PartialOrd>(mut v: Vec<T>) -> [T; 3] {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(core::cmp::Ordering::Equal));
            [v[0], v[v.len() / 2], v[v.len() - 1]]
        }
        let truth = pick(self.rows.iter().map(|r| r.truth).collect());
        let overhead = pick(self.rows.iter().map(|r| r.overhead).collect());
        let err = |f: fn(&Row) -> i64| {
            pick(
                self.rows
                    .iter()
                    .map(|r| (r.error(f(r)), r.truth))
                    .map(|(e, t)| {
                        if t == 0 {
                            e as f64
                        } else {
                            e as f64 / t as f64
                        }
                    })
                    .collect(),
            )
        };
        let errors = [
            err(|r| r.measured as i64),
            err(|r| r.local_only),
            err(|r| r.delay_only),
            err(|r| r.timestamped),
        ];
        let cell = |x: f64| {
            if x == 0.0 {
                "exact".to_string()
            } else {
                let p = format!("{:+.1}%", x * 100.0);
                if p == "+0.0%" || p == "-0.0%" {
                    format!("{}<0.1%", if x > 0.0 { "+" } else { "-" })
                } else {
                    p
                }
            }
        };
        let row = |i: usize| {
            [
                unit.fmt(truth[i] as i64),
                cell(errors[0][i]),
                cell(errors[1][i]),
                cell(errors[2][i]),
                cell(errors[3][i]),
                unit.fmt(overhead[i] as i64),
            ]
        };
        [("min", row(0)), ("median", row(1)), ("max", row(2))]
    }
}
