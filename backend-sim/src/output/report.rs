//! Reads a report file that any heisen backend wrote (`docs/report.md`)
//! and renders it: a per-location table, a per-region table and the
//! critical path, with errors that name the file, the line and column, and
//! what was expected.

use core::fmt::Write as _;

use heisen_core::report::{LocationReport, RegionName, RunHeader};
use serde::Deserialize;

use crate::input::InputError;

/// Selected regions a report may carry (readers must be at least as large
/// as every writer, `docs/report.md` "Capacities").
pub const READ_SELECTED: usize = 16;
/// Region records per location a report may carry.
pub const READ_REGIONS: usize = 256;
/// Communication records per location a report may carry.
pub const READ_COMMS: usize = 256;
/// Loop records per location a report may carry.
pub const READ_LOOPS: usize = 64;

/// Communication records `render` lists (the longest waits).
const COMM_ROWS: usize = 12;

/// One location of a report as read.
pub type ReadLocation = LocationReport<READ_SELECTED, READ_REGIONS, READ_COMMS, READ_LOOPS>;

/// A report file as read.
#[derive(Clone, Debug, Deserialize)]
pub struct Report {
    /// The run header.
    pub header: RunHeader<READ_SELECTED>,
    /// Region names.
    pub regions: Vec<RegionName>,
    /// One record per location.
    pub locations: Vec<ReadLocation>,
}

const EXPECTED: &str = "expected a heisen report, a JSON object {\"header\", \"regions\", \"locations\"} (docs/report.md)";

/// Parses a report; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Report, InputError> {
    let report: Report = serde_json::from_str(text).map_err(|e| {
        // serde_json appends " at line L column C"; the error names them.
        let message = e.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m)
            .to_string();
        InputError::new(
            file,
            e.line(),
            format!("column {}: {message}; {EXPECTED}", e.column()),
        )
    })?;
    report
        .header
        .check()
        .map_err(|e| InputError::new(file, 0, format!("{e}; {EXPECTED}")))?;
    Ok(report)
}

fn us(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1000.0)
}

fn percent(part: i64, whole: i64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

impl Report {
    fn region_name(&self, id: u32) -> String {
        self.regions
            .iter()
            .find(|r| r.id == id)
            .map_or_else(|| format!("region {id}"), |r| r.name.to_string())
    }

    /// The report as text: locations, regions (summed over locations),
    /// and the critical path with each selected region's share and
    /// zeroing (times in µs).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let h = &self.header;
        let form = match h.form {
            heisen_core::Form::Timestamped => "timestamped (R5)",
            heisen_core::Form::DelayOnly => "delay-only (R4)",
        };
        let _ = writeln!(
            out,
            "{} report from backend {}, {} form, {} locations (times in µs)",
            h.tool,
            h.backend,
            form,
            self.locations.len()
        );
        let _ = writeln!(out);
        let width = self
            .locations
            .iter()
            .filter_map(|l| l.name.as_ref().map(|n| n.len()))
            .max()
            .unwrap_or(8)
            .max(8);
        let _ = writeln!(
            out,
            "{:>8}  {:<width$}  {:>14}  {:>16}  {:>12}  {:>14}",
            "location", "name", "measured end", "approximated end", "delay", "critical path"
        );
        for l in &self.locations {
            let name = l.name.as_ref().map_or("", |n| n.as_str());
            let path = l
                .critical_path
                .as_ref()
                .map_or_else(|| "-".to_string(), |p| us(p.longest));
            let _ = writeln!(
                out,
                "{:>8}  {:<width$}  {:>14}  {:>16}  {:>12}  {:>14}",
                l.location,
                name,
                us(l.measured_end as i64),
                us(l.approximated_end),
                us(l.delay as i64),
                path
            );
        }

        // Regions summed over locations and call sites, by region id.
        let mut regions: Vec<(u32, u64, u64, i64, i64)> = Vec::new();
        for e in self.locations.iter().flat_map(|l| l.regions.iter()) {
            match regions.iter_mut().find(|r| r.0 == e.region) {
                Some(r) => {
                    r.1 += e.count;
                    r.2 += e.measured_inclusive;
                    r.3 += e.inclusive;
                    r.4 += e.exclusive;
                }
                None => regions.push((
                    e.region,
                    e.count,
                    e.measured_inclusive,
                    e.inclusive,
                    e.exclusive,
                )),
            }
        }
        regions.sort_by(|a, b| b.3.cmp(&a.3).then(a.0.cmp(&b.0)));
        let names: Vec<String> = regions.iter().map(|r| self.region_name(r.0)).collect();
        let rwidth = names.iter().map(String::len).max().unwrap_or(6).max(6);
        let _ = writeln!(out);
        let _ = writeln!(out, "regions, summed over locations:");
        let _ = writeln!(
            out,
            "{:<rwidth$}  {:>10}  {:>14}  {:>14}  {:>14}",
            "region", "count", "measured incl", "compensated", "compensated"
        );
        let _ = writeln!(
            out,
            "{:<rwidth$}  {:>10}  {:>14}  {:>14}  {:>14}",
            "", "", "", "inclusive", "exclusive"
        );
        for (r, name) in regions.iter().zip(&names) {
            let _ = writeln!(
                out,
                "{:<rwidth$}  {:>10}  {:>14}  {:>14}  {:>14}",
                name,
                r.1,
                us(r.2 as i64),
                us(r.3),
                us(r.4)
            );
        }
        if regions.is_empty() {
            let _ = writeln!(out, "(no region records)");
        }

        // R12: communication calls, the ones that waited longest first.
        let mut comms: Vec<(u32, &heisen_core::report::CommEntry)> = self
            .locations
            .iter()
            .flat_map(|l| l.comms.iter().map(move |c| (l.location, c)))
            .collect();
        comms.sort_by(|a, b| {
            b.1.measured_wait
                .cmp(&a.1.measured_wait)
                .then((a.0, a.1.site, a.1.peer).cmp(&(b.0, b.1.site, b.1.peer)))
        });
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "communication, by location, call site and peer (longest waits first):"
        );
        let _ = writeln!(
            out,
            "{:>8}  {:>6}  {:>6}  {:>8}  {:>12}  {:>12}  {:>12}  {:>12}  {:>8}",
            "location",
            "site",
            "peer",
            "calls",
            "bytes",
            "wait",
            "compensated",
            "transfer",
            "reorders"
        );
        for (location, c) in comms.iter().take(COMM_ROWS) {
            let peer = if c.peer == u32::MAX {
                "-".to_string()
            } else {
                c.peer.to_string()
            };
            let _ = writeln!(
                out,
                "{:>8}  {:>6}  {:>6}  {:>8}  {:>12}  {:>12}  {:>12}  {:>12}  {:>8}",
                location,
                c.site,
                peer,
                c.count,
                c.bytes,
                us(c.measured_wait as i64),
                us(c.compensated_wait),
                us(c.transfer),
                c.reorders
            );
        }
        if comms.len() > COMM_ROWS {
            let _ = writeln!(out, "({} more records)", comms.len() - COMM_ROWS);
        }
        if comms.is_empty() {
            let _ = writeln!(out, "(no communication records)");
        }

        // R10: the run's path is the longest over locations (ties: lower
        // location); each zeroed length is the maximum net.
        let _ = writeln!(out);
        let paths: Vec<(u32, &heisen_core::report::CriticalPath<READ_SELECTED>)> = self
            .locations
            .iter()
            .filter_map(|l| l.critical_path.as_ref().map(|p| (l.location, p)))
            .collect();
        let Some(&(at, best)) = paths
            .iter()
            .max_by(|a, b| a.1.longest.cmp(&b.1.longest).then(b.0.cmp(&a.0)))
        else {
            let _ = writeln!(out, "critical path: not collected (R9)");
            return out;
        };
        let _ = writeln!(
            out,
            "critical path: {} µs, ending at location {at}; {} µs in transfers",
            us(best.longest),
            us(best.transfer)
        );
        if !h.selected.is_empty() {
            let swidth = h
                .selected
                .iter()
                .map(|s| s.name.len())
                .max()
                .unwrap_or(6)
                .max(6);
            let _ = writeln!(
                out,
                "{:<swidth$}  {:>12}  {:>7}  {:>12}  {:>7}  {:>12}  {:>7}",
                "selected", "inclusive", "% CP", "exclusive", "% CP", "zeroed", "gain"
            );
            for (k, s) in h.selected.iter().enumerate() {
                let net = paths
                    .iter()
                    .filter_map(|(_, p)| p.net.get(k).copied())
                    .max()
                    .unwrap_or(best.longest);
                let inc = best.inclusive.get(k).copied().unwrap_or(0);
                let exc = best.exclusive.get(k).copied().unwrap_or(0);
                let _ = writeln!(
                    out,
                    "{:<swidth$}  {:>12}  {:>7}  {:>12}  {:>7}  {:>12}  {:>7}",
                    s.name.as_str(),
                    us(inc),
                    percent(inc, best.longest),
                    us(exc),
                    percent(exc, best.longest),
                    us(net),
                    percent(best.longest - net, best.longest)
                );
            }
        }
        let dropped: u64 = self
            .locations
            .iter()
            .map(|l| {
                l.overflow.regions
                    + l.overflow.comms
                    + l.overflow.loops
                    + l.overflow.frames
                    + l.overflow.sites
            })
            .sum();
        if dropped > 0 {
            let _ = writeln!(
                out,
                "note: {dropped} records were dropped because a table was full (R12)"
            );
        }
        let over: i64 = self
            .locations
            .iter()
            .map(|l| l.overcompensation.total)
            .sum();
        if over < 0 {
            let _ = writeln!(
                out,
                "note: over-compensation of {} µs in total (R2: calibrated overheads too high?)",
                us(over)
            );
        }
        out
    }
}
