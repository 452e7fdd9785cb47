//! The runtime's configuration, read once from the environment.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `HEISEN_REGIONS` | comma-separated region names whose critical-path shares and nets are kept (R7), at most [`crate::SELECTED`] | the first regions the process enters |
//! | `HEISEN_OUTPUT` | directory the report is written to at exit | the current directory |
//! | `HEISEN_FORM` | `timestamped` (R5) or `delay-only` (R4) | `timestamped` |
//! | `HEISEN_CLOCK` | `tsc`, `tsc-node` (one TSC conversion per node, installed by the MPI interposer) or `monotonic` | `tsc` where the TSC is invariant (`tsc-node` under MPI) |
//! | `HEISEN_MONITOR` | `1`: publish live snapshots for `heisen monitor` (R10) | off |
//! | `HEISEN_SUMMARY` | `1`: print a one-screen summary to stderr at exit | off |
//! | `HEISEN_DISABLE` | `1`: measure nothing, write nothing | off |
//! | `HEISEN_CALIBRATION` | `online`: as `in-situ`, and each thread measures the pair of a region it calls as a leaf many times, in a row or a few at a time between other actions, in the running program and charges that (`probe`); `in-situ`: region pairs (Rust API, C API, compiler hooks) and the mutex pairs (the wrappers' and the thread interposer's) costed between pieces of work at start-up; `back-to-back`: timed in a loop of their own (R1) | `online` |
//!
//! A value the runtime does not understand is reported at exit (stderr)
//! and the default is used: a profiler must not stop the program it
//! measures.

use std::path::PathBuf;

use heisen_core::Form;

use crate::clock::ClockKind;

/// The configuration of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Region names selected for critical-path shares, in share order.
    pub regions: Option<Vec<String>>,
    /// Directory of the report.
    pub output: PathBuf,
    /// Merge form of every location.
    pub form: Form,
    /// A forced clock source.
    pub clock: Option<ClockKind>,
    /// Whether threads publish live snapshots.
    pub monitor: bool,
    /// Whether a summary goes to stderr at exit.
    pub summary: bool,
    /// Whether the runtime is switched off.
    pub disabled: bool,
    /// Whether region pairs are calibrated in situ (R1 refined,
    /// `calibrate::in_situ_cost`) or back to back.
    pub in_situ: bool,
    /// Whether a thread measures the pair of the region it calls hottest
    /// in the running program and charges that (R1 measured directly,
    /// `probe`; `HEISEN_CALIBRATION=online`, the default).
    pub online: bool,
    /// Problems found while reading the variables, reported at exit.
    pub problems: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            regions: None,
            output: PathBuf::from("."),
            form: Form::Timestamped,
            clock: None,
            monitor: false,
            summary: false,
            disabled: false,
            in_situ: true,
            online: true,
            problems: Vec::new(),
        }
    }
}

impl Config {
    /// The configuration the process environment gives.
    pub fn from_env() -> Config {
        Config::from_vars(|name| std::env::var(name).ok())
    }

    /// The configuration `var` gives (a test passes a map).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Config {
        let mut c = Config::default();
        if let Some(list) = var("HEISEN_REGIONS") {
            let names: Vec<String> = list
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(String::from)
                .collect();
            if names.len() > crate::SELECTED {
                c.problems.push(format!(
                    "HEISEN_REGIONS names {} regions; only the first {} are kept",
                    names.len(),
                    crate::SELECTED
                ));
            }
            c.regions = Some(names.into_iter().take(crate::SELECTED).collect());
        }
        if let Some(dir) = var("HEISEN_OUTPUT").filter(|d| !d.is_empty()) {
            c.output = PathBuf::from(dir);
        }
        if let Some(form) = var("HEISEN_FORM") {
            match form.trim() {
                "timestamped" | "" => {}
                "delay-only" => c.form = Form::DelayOnly,
                other => c.problems.push(format!(
                    "HEISEN_FORM={other} is neither `timestamped` nor `delay-only`; using timestamped"
                )),
            }
        }
        if let Some(clock) = var("HEISEN_CLOCK") {
            match clock.trim() {
                "" => {}
                "tsc" => c.clock = Some(ClockKind::Tsc),
                "monotonic" => c.clock = Some(ClockKind::Monotonic),
                "tsc-node" | "tsc_node" => c.clock = Some(ClockKind::NodeTsc),
                other => c.problems.push(format!(
                    "HEISEN_CLOCK={other} is none of `tsc`, `tsc-node`, `monotonic`; choosing by the CPU"
                )),
            }
        }
        if let Some(how) = var("HEISEN_CALIBRATION") {
            match how.trim() {
                "online" | "" => {}
                "in-situ" => c.online = false,
                "back-to-back" => {
                    c.in_situ = false;
                    c.online = false;
                }
                other => c.problems.push(format!(
                    "HEISEN_CALIBRATION={other} is none of `online`, `in-situ`, `back-to-back`; using online"
                )),
            }
        }
        c.monitor = flag(&var, "HEISEN_MONITOR", &mut c.problems);
        c.summary = flag(&var, "HEISEN_SUMMARY", &mut c.problems);
        c.disabled = flag(&var, "HEISEN_DISABLE", &mut c.problems);
        c
    }
}

/// A boolean variable: `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`.
fn flag(var: &impl Fn(&str) -> Option<String>, name: &str, problems: &mut Vec<String>) -> bool {
    match var(name).as_deref().map(str::trim) {
        None | Some("" | "0" | "false" | "no" | "off") => false,
        Some("1" | "true" | "yes" | "on") => true,
        Some(other) => {
            problems.push(format!("{name}={other} is not 0 or 1; taken as 0"));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn config(vars: &[(&str, &str)]) -> Config {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_vars(|name| map.get(name).cloned())
    }

    #[test]
    fn empty_environment_gives_the_defaults() {
        assert_eq!(config(&[]), Config::default());
    }

    #[test]
    fn every_variable_is_read() {
        let c = config(&[
            ("HEISEN_REGIONS", " solve, exchange ,,io"),
            ("HEISEN_OUTPUT", "/tmp/out"),
            ("HEISEN_FORM", "delay-only"),
            ("HEISEN_CLOCK", "monotonic"),
            ("HEISEN_MONITOR", "1"),
            ("HEISEN_SUMMARY", "yes"),
            ("HEISEN_CALIBRATION", "back-to-back"),
        ]);
        assert_eq!(
            c.regions,
            Some(vec!["solve".into(), "exchange".into(), "io".into()])
        );
        assert_eq!(c.output, PathBuf::from("/tmp/out"));
        assert_eq!(c.form, Form::DelayOnly);
        assert_eq!(c.clock, Some(ClockKind::Monotonic));
        assert!(c.monitor && c.summary && !c.disabled && !c.in_situ && !c.online);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        let c = config(&[("HEISEN_CALIBRATION", "in-situ")]);
        assert!(c.in_situ && !c.online && c.problems.is_empty());
    }

    #[test]
    fn bad_values_fall_back_and_say_what_was_wrong() {
        let many = (0..crate::SELECTED + 2)
            .map(|i| format!("r{i}"))
            .collect::<Vec<_>>()
            .join(",");
        let c = config(&[
            ("HEISEN_FORM", "exact"),
            ("HEISEN_CLOCK", "sundial"),
            ("HEISEN_MONITOR", "maybe"),
            ("HEISEN_REGIONS", &many),
            ("HEISEN_CALIBRATION", "guess"),
        ]);
        assert_eq!(c.form, Form::Timestamped);
        assert_eq!(c.clock, None);
        assert!(!c.monitor && c.in_situ && c.online);
        assert_eq!(c.regions.as_ref().map(Vec::len), Some(crate::SELECTED));
        assert_eq!(c.problems.len(), 5, "{:?}", c.problems);
        assert!(c.problems[1].contains("HEISEN_FORM=exact"));
    }
}
