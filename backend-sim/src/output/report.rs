//! Reads report files that heisen backends wrote (`docs/report.md`) and
//! renders them: where the times come from (clock, calibrated costs, the
//! runtime's problems), a per-location table (measured, compensated and
//! local-only elapsed times, delay), a per-region table, the communication
//! records and the run's critical-path profile, with errors that name the
//! file, the line and column, and what was expected.
//!
//! Several files (one per process: an MPI run's ranks, or several runs)
//! are merged into one view when they select the same regions in the same
//! order (the shares of their critical paths then mean the same thing):
//! the locations of all files, regions matched by name, one critical path
//! over all (R10). Files that select differently are rendered one by one.

use core::fmt::Write as _;

use heisen_core::report::{CommEntry, CriticalPath, LocationReport, RegionName, RunHeader};
use serde::Deserialize;

use crate::input::InputError;

/// Selected regions a report may carry (readers must be at least as large
/// as every writer, `docs/report.md` "Capacities").
pub const READ_SELECTED: usize = 16;
/// Region records per location a report may carry (the process runtime
/// keeps 2,048).
pub const READ_REGIONS: usize = 2048;
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
    /// What a process runtime adds about itself; absent in other files.
    #[serde(default)]
    pub runtime: Option<RuntimeInfo>,
}

/// The `runtime` object of a report written by heisen's process runtime
/// (threads, MPI ranks): what it dropped or noticed. The CLI's own copy of
/// its fields (the CLI does not depend on the runtime); fields it does not
/// know are ignored, missing ones read as 0.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct RuntimeInfo {
    /// Threads measured.
    pub threads: u64,
    /// Threads still running when the report was written (not reported).
    pub running_at_exit: u64,
    /// Threads beyond the runtime's table, run unmeasured (R12).
    pub threads_dropped: u64,
    /// Region names refused because the name table was full (R12).
    pub names_dropped: u64,
    /// Region exits refused because they did not match the open region.
    pub exit_mismatches: u64,
    /// Region exits with no region open.
    pub exits_without_enter: u64,
    /// heisen calls that never returned (a signal handler jumped out).
    pub calls_abandoned: u64,
    /// Calls of instrumented functions made while a heisen call was under
    /// way on their thread (a signal handler), unmeasured.
    pub calls_nested: u64,
    /// Bytes the runtime's tables took.
    pub memory_bytes: u64,
    /// Whether several heisen libraries shared the runtime.
    pub shared: bool,
}

impl RuntimeInfo {
    /// What went wrong, one phrase each; empty when nothing did.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut say = |n: u64, what: &str| {
            if n > 0 {
                out.push(format!("{n} {what}"));
            }
        };
        say(
            self.threads_dropped,
            "threads beyond the runtime's table ran unmeasured",
        );
        say(
            self.names_dropped,
            "region names did not fit the name table (those regions went unmeasured)",
        );
        say(
            self.exit_mismatches,
            "region exits did not match the innermost open region (ignored)",
        );
        say(
            self.exits_without_enter,
            "region exits came with no region open (ignored)",
        );
        say(
            self.calls_abandoned,
            "heisen calls were left by a jump out of a signal handler (their threads' later events unmeasured)",
        );
        say(
            self.calls_nested,
            "calls of instrumented functions interrupted a heisen call (signal handlers, or heisen's own work) and went unmeasured",
        );
        say(
            self.running_at_exit,
            "threads were still running at exit (not in the report)",
        );
        out
    }
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

use super::units::Unit;

/// The unit of a table whose times are `values` (ns).
fn unit_of(values: impl Iterator<Item = i64>) -> Unit {
    Unit::for_max(values.map(i64::abs).max().unwrap_or(0))
}

fn percent(part: i64, whole: i64) -> String {
    match super::units::percent(part, whole) {
        p if p == "-" => p,
        p => p + "%",
    }
}

fn form_name(form: heisen_core::Form) -> &'static str {
    match form {
        heisen_core::Form::Timestamped => "timestamped (R5)",
        heisen_core::Form::DelayOnly => "delay-only (R4)",
    }
}

fn selected_names<const K: usize>(h: &RunHeader<K>) -> Vec<&str> {
    h.selected.iter().map(|r| r.name.as_str()).collect()
}

/// Whether two selections label the same shares (R7): slot by slot alike
/// as far as both go. A process that entered fewer regions leaves its
/// later slots unused; its shares there are zero and carry nothing.
fn selections_agree(a: &[&str], b: &[&str]) -> bool {
    a.iter().zip(b).all(|(x, y)| x == y)
}

impl Report {
    /// The report as text: see [`render_files`].
    pub fn render(&self) -> String {
        self.render_with(false, false)
    }

    /// The report as text, every communication record when `all_comms`,
    /// every location's row when `all_locations`.
    pub fn render_with(&self, all_comms: bool, all_locations: bool) -> String {
        render_view(&View::single(self), all_comms, all_locations)
    }
}

/// Renders the reports of `files` (each named as the user named it): one
/// file as it is; several merged into one view when they select the same
/// regions in the same order and use one merge form, otherwise each on its
/// own after a line that says why.
/// Every communication record is listed when `all_comms`; otherwise the
/// longest waits.
pub fn render_files(files: &[(String, Report)], all_comms: bool, all_locations: bool) -> String {
    match files {
        [] => String::new(),
        [(_, one)] => one.render_with(all_comms, all_locations),
        _ => match merge(files) {
            Ok(view) => render_view(&view, all_comms, all_locations),
            Err(why) => {
                let mut out = format!("{} report files, rendered one by one: {why}\n", files.len());
                for (name, report) in files {
                    let _ = write!(
                        out,
                        "\n=== {name}\n\n{}",
                        report.render_with(all_comms, all_locations)
                    );
                }
                out
            }
        },
    }
}

/// What is rendered: one report, or several merged, with the file of
/// every location.
#[derive(Debug)]
struct View<'a> {
    /// The files with their own headers and runtime objects.
    files: Vec<(&'a str, &'a Report)>,
    /// Header (selection with merged region ids), regions and locations.
    report: std::borrow::Cow<'a, Report>,
    /// Index into `files` of every location of `report`.
    file_of: Vec<usize>,
}

impl<'a> View<'a> {
    fn single(report: &'a Report) -> View<'a> {
        View {
            files: vec![("", report)],
            report: std::borrow::Cow::Borrowed(report),
            file_of: vec![0; report.locations.len()],
        }
    }

    fn several(&self) -> bool {
        self.files.len() > 1
    }

    /// A location's label in sentences: its id, and its file if several.
    fn at(&self, index: usize) -> String {
        let l = &self.report.locations[index];
        if self.several() {
            format!("location {} (file {})", l.location, self.file_of[index] + 1)
        } else {
            format!("location {}", l.location)
        }
    }
}

/// Merges several reports into one view, or says why they cannot be.
fn merge(files: &[(String, Report)]) -> Result<View<'_>, String> {
    let (first_name, first) = &files[0];
    // The longest selection names the merged shares; every file's must
    // agree with it where it has slots.
    let (widest_name, widest) = files
        .iter()
        .max_by_key(|(_, r)| r.header.selected.len())
        .map_or((first_name, &first.header), |(n, r)| (n, &r.header));
    for (name, r) in files {
        if !selections_agree(&selected_names(&r.header), &selected_names(widest)) {
            return Err(format!(
                "{name} selects regions [{}], {widest_name} [{}]; their critical-path shares cannot be combined",
                selected_names(&r.header).join(", "),
                selected_names(widest).join(", ")
            ));
        }
        if r.header.form != first.header.form {
            return Err(format!(
                "{name} uses the {} form, {first_name} the {}",
                form_name(r.header.form),
                form_name(first.header.form)
            ));
        }
    }
    let mut header = first.header.clone();
    header.selected = widest.selected.clone();
    let mut merged = Report {
        header,
        regions: Vec::new(),
        locations: Vec::new(),
        runtime: None,
    };
    if files
        .iter()
        .any(|(_, r)| r.header.backend != first.header.backend)
    {
        merged.header.backend = heisen_core::report::truncated("mixed");
    }
    let mut file_of = Vec::new();
    for (i, (_, r)) in files.iter().enumerate() {
        // Region ids are per process: match them by name.
        let ids: Vec<(u32, u32)> = r
            .regions
            .iter()
            .map(|region| (region.id, merged_id(&mut merged.regions, &region.name)))
            .collect();
        let id = |old: u32| ids.iter().find(|(o, _)| *o == old).map(|&(_, n)| n);
        for l in &r.locations {
            let mut l = l.clone();
            for e in &mut l.regions {
                // A record of a region the file does not name keeps a
                // fresh id of its own ("region N" in the table).
                e.region = id(e.region).unwrap_or_else(|| {
                    merged_id(&mut merged.regions, &format!("region {}", e.region))
                });
            }
            merged.locations.push(l);
            file_of.push(i);
        }
    }
    // The selected regions' ids, renumbered by name like the others.
    for s in &mut merged.header.selected {
        if let Some(r) = merged.regions.iter().find(|r| r.name == s.name) {
            s.id = r.id;
        }
    }
    Ok(View {
        files: files.iter().map(|(n, r)| (n.as_str(), r)).collect(),
        report: std::borrow::Cow::Owned(merged),
        file_of,
    })
}

/// The merged id of region `name`, added if new.
fn merged_id(regions: &mut Vec<RegionName>, name: &str) -> u32 {
    if let Some(r) = regions.iter().find(|r| r.name.as_str() == name) {
        return r.id;
    }
    let id = regions.len() as u32;
    regions.push(RegionName {
        id,
        name: heisen_core::report::truncated(name),
    });
    id
}

fn render_view(view: &View<'_>, all_comms: bool, all_locations: bool) -> String {
    let mut out = String::new();
    let r = &*view.report;
    let h = &r.header;
    if view.several() {
        let _ = writeln!(
            out,
            "{} report of {} files merged, backend {}, {} form, {} locations",
            h.tool,
            view.files.len(),
            h.backend,
            form_name(h.form),
            r.locations.len()
        );
    } else {
        let _ = writeln!(
            out,
            "{} report from backend {}, {} form, {} locations",
            h.tool,
            h.backend,
            form_name(h.form),
            r.locations.len()
        );
    }
    render_sources(&mut out, view);
    let _ = writeln!(out);
    render_locations(&mut out, view, all_locations);
    render_regions(&mut out, r);
    render_loops(&mut out, view);
    render_comms(&mut out, view, all_comms);
    render_path(&mut out, view);
    render_notes(&mut out, r);
    let _ = writeln!(out);
    out.push_str(LEGEND);
    out
}

/// What the columns of a rendered report mean.
const LEGEND: &str = "\
legend: measured = end - start; compensated = approximated end - approximated start (R2); local-only =
  measured minus the location's own instrumentation overhead; delay = the time the location's compensation
  took out (R4, R5); critical path = the longest path ending at the location (R7); wait = time a call
  waited, compensated = that wait after compensation, transfer = the message transfer estimate (R5),
  reorders = wildcard matches that approximated times would have ordered otherwise (R11); % CP = share of
  the critical path; CP if zero = the critical path's length with the region costing nothing (n[k],
  critical-path zeroing, R10); zero-gain = how much shorter that is (L - n[k]) as % of the path.
";

/// R12: loop records (count and times of every loop id), summed over
/// locations.
fn render_loops(out: &mut String, view: &View<'_>) {
    let r = &*view.report;
    let mut loops: Vec<(u32, u64, u64, i64)> = Vec::new();
    for e in r.locations.iter().flat_map(|l| l.loops.iter()) {
        match loops.iter_mut().find(|x| x.0 == e.id) {
            Some(x) => {
                x.1 += e.count;
                x.2 += e.measured;
                x.3 += e.compensated;
            }
            None => loops.push((e.id, e.count, e.measured, e.compensated)),
        }
    }
    if loops.is_empty() {
        return;
    }
    loops.sort_by_key(|x| x.0);
    let unit = unit_of(loops.iter().flat_map(|x| [x.2 as i64, x.3]));
    let us = |ns: i64| unit.fmt(ns);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "loops, summed over locations (times in {}):",
        unit.name()
    );
    let _ = writeln!(
        out,
        "{:>6}  {:>10}  {:>14}  {:>14}",
        "loop", "instances", "measured", "compensated"
    );
    for (id, count, measured, compensated) in loops {
        let _ = writeln!(
            out,
            "{:>6}  {:>10}  {:>14}  {:>14}",
            id,
            count,
            us(measured as i64),
            us(compensated)
        );
    }
}

/// Where the times come from, per file: the clock, the calibrated costs
/// the kernel charged (R1) and what the runtime reports about itself.
fn render_sources(out: &mut String, view: &View<'_>) {
    for (i, (name, r)) in view.files.iter().enumerate() {
        let indent = if view.several() {
            let count = view.file_of.iter().filter(|&&f| f == i).count();
            let _ = writeln!(out, "file {}: {name} ({count} locations)", i + 1);
            "  "
        } else {
            ""
        };
        let h = &r.header;
        let clock = h.clock.as_ref().map_or("not recorded", |c| c.as_str());
        let _ = writeln!(out, "{indent}clock: {clock}");
        let costs = costs(h);
        if !costs.is_empty() {
            let _ = writeln!(
                out,
                "{indent}calibrated costs in ns (R1; in parentheses the part inside the region): {}",
                costs.join(", ")
            );
        }
        if let Some(info) = &r.runtime {
            let shared = if info.shared {
                ", shared by several heisen libraries"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "{indent}runtime: {} threads measured, tables {} KiB{shared}",
                info.threads,
                info.memory_bytes.div_ceil(1024)
            );
            let problems = info.problems();
            if !problems.is_empty() {
                let _ = writeln!(out, "{indent}runtime problems: {}", problems.join("; "));
            }
        }
    }
}

/// The calibrated actions of a header: enter and exit with their inside
/// parts, then every named action (or the generic release and merge).
fn costs(h: &RunHeader<READ_SELECTED>) -> Vec<String> {
    let mut costs = Vec::new();
    let with_inside = |name: &str, whole: u64, inside: u64| {
        if inside > 0 {
            format!("{name} {whole} ({inside})")
        } else {
            format!("{name} {whole}")
        }
    };
    if let Some(c) = &h.calibration {
        costs.push(with_inside("enter", c.enter.whole, c.enter.inside));
        costs.push(with_inside("exit", c.exit.whole, c.exit.inside));
        if h.actions.is_empty() {
            costs.push(format!("release {}", c.send));
            costs.push(format!("merge {}", c.merge));
            if c.sample > 0 {
                costs.push(format!("sample {}", c.sample));
            }
        }
    }
    for a in &h.actions {
        if !matches!(a.action.as_str(), "enter" | "exit") || h.calibration.is_none() {
            costs.push(with_inside(&a.action, a.whole, a.inside));
        }
    }
    costs
}

/// Per location: measured, compensated (R2) and local-only elapsed time,
/// the final delay and the critical path ending there; above
/// [`SUMMARY_ABOVE`](crate::compare::SUMMARY_ABOVE) locations, unless
/// `all`, the min, median and max of each column and the locations with
/// the longest measured times.
// Long: the table's header, row and summary closures share the column widths and unit computed first.
fn render_locations(out: &mut String, view: &View<'_>, all: bool) {
    let r = &*view.report;
    let unit = unit_of(r.locations.iter().flat_map(|l| {
        [
            l.measured_elapsed() as i64,
            l.compensated_elapsed(),
            l.critical_path.as_ref().map_or(0, |p| p.longest),
        ]
    }));
    let us = |ns: i64| unit.fmt(ns);
    let width = r
        .locations
        .iter()
        .filter_map(|l| l.name.as_ref().map(|n| n.len()))
        .max()
        .unwrap_or(8)
        .max(8);
    let file = |f: &str| {
        if view.several() {
            format!("{f:>4}  ")
        } else {
            String::new()
        }
    };
    let header = |out: &mut String| {
        let _ = writeln!(
            out,
            "{:>8}  {}{:<width$}  {:>12}  {:>12}  {:>12}  {:>12}  {:>14}",
            "location",
            file("file"),
            "name",
            "measured",
            "compensated",
            "local-only",
            "delay",
            "critical path"
        );
    };
    let row = |out: &mut String, i: usize| {
        let l = &r.locations[i];
        let name = l.name.as_ref().map_or("", |n| n.as_str());
        let path = l
            .critical_path
            .as_ref()
            .map_or_else(|| "-".to_string(), |p| us(p.longest));
        let _ = writeln!(
            out,
            "{:>8}  {}{:<width$}  {:>12}  {:>12}  {:>12}  {:>12}  {:>14}",
            l.location,
            file(&(view.file_of[i] + 1).to_string()),
            name,
            us(l.measured_elapsed() as i64),
            us(l.compensated_elapsed()),
            us(l.local_only_elapsed()),
            us(l.delay as i64),
            path
        );
    };
    let n = r.locations.len();
    let _ = writeln!(out, "per location (times in {}):", unit.name());
    if all || n <= crate::compare::SUMMARY_ABOVE {
        header(out);
        for i in 0..n {
            row(out, i);
        }
    } else {
        let _ = writeln!(
            out,
            "{n} locations: min, median and max of each column over the locations (--all-locations: every row)"
        );
        let _ = writeln!(
            out,
            "{:<8}  {:>12}  {:>12}  {:>12}  {:>12}  {:>14}",
            "", "measured", "compensated", "local-only", "delay", "critical path"
        );
        let column = |f: &dyn Fn(&ReadLocation) -> i64| {
            let mut v: Vec<i64> = r.locations.iter().map(f).collect();
            v.sort_unstable();
            [v[0], v[v.len() / 2], v[v.len() - 1]]
        };
        let cols = [
            column(&|l| l.measured_elapsed() as i64),
            column(&|l| l.compensated_elapsed()),
            column(&|l| l.local_only_elapsed()),
            column(&|l| l.delay as i64),
            column(&|l| l.critical_path.as_ref().map_or(0, |p| p.longest)),
        ];
        for (k, what) in ["min", "median", "max"].iter().enumerate() {
            let _ = writeln!(
                out,
                "{what:<8}  {:>12}  {:>12}  {:>12}  {:>12}  {:>14}",
                us(cols[0][k]),
                us(cols[1][k]),
                us(cols[2][k]),
                us(cols[3][k]),
                us(cols[4][k])
            );
        }
        let top = crate::compare::SUMMARY_TOP;
        let _ = writeln!(out, "the {top} locations with the longest measured time:");
        header(out);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| (core::cmp::Reverse(r.locations[i].measured_elapsed()), i));
        for i in order.into_iter().take(top) {
            row(out, i);
        }
    }
    let _ = writeln!(
        out,
        "measured: end - start; compensated: approximated end - approximated start (R2); local-only: measured - the location's own overhead"
    );
}

fn region_label(r: &Report, id: u32) -> String {
    r.regions
        .iter()
        .find(|n| n.id == id)
        .map_or_else(|| format!("region {id}"), |n| shown(&n.name))
}

/// The width of a table column holding `names`, at least `least`
/// characters (format widths count characters).
pub fn column_width(names: &[String], least: usize) -> usize {
    names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(least)
        .max(least)
}

/// Characters of a region name a table shows whole.
const SHOWN: usize = 72;

/// A region name for a table column: whole up to [`SHOWN`] characters,
/// else its start, `…` and its last 20 characters (a C++ signature's
/// arguments, or the hash that tells two long names apart).
fn shown(name: &str) -> String {
    let count = name.chars().count();
    if count <= SHOWN {
        return name.to_owned();
    }
    let head: String = name.chars().take(SHOWN - 21).collect();
    let tail: String = name.chars().skip(count - 20).collect();
    format!("{head}…{tail}")
}

/// Regions summed over locations and call sites, by region id.
fn render_regions(out: &mut String, r: &Report) {
    let mut regions: Vec<(u32, u64, u64, i64, i64)> = Vec::new();
    for e in r.locations.iter().flat_map(|l| l.regions.iter()) {
        match regions.iter_mut().find(|x| x.0 == e.region) {
            Some(x) => {
                x.1 += e.count;
                x.2 += e.measured_inclusive;
                x.3 += e.inclusive;
                x.4 += e.exclusive;
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
    let unit = unit_of(regions.iter().flat_map(|x| [x.2 as i64, x.3, x.4]));
    let us = |ns: i64| unit.fmt(ns);
    let names: Vec<String> = regions.iter().map(|x| region_label(r, x.0)).collect();
    let rwidth = column_width(&names, 6);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "regions, summed over locations (times in {}):",
        unit.name()
    );
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
    for (x, name) in regions.iter().zip(&names) {
        let _ = writeln!(
            out,
            "{:<rwidth$}  {:>10}  {:>14}  {:>14}  {:>14}",
            name,
            x.1,
            us(x.2 as i64),
            us(x.3),
            us(x.4)
        );
    }
    if regions.is_empty() {
        let _ = writeln!(out, "(no region records)");
    }
}

/// R12: communication calls, the ones that waited longest first.
fn render_comms(out: &mut String, view: &View<'_>, all: bool) {
    let r = &*view.report;
    let mut comms: Vec<(u32, &CommEntry)> = r
        .locations
        .iter()
        .flat_map(|l| l.comms.iter().map(move |c| (l.location, c)))
        .collect();
    comms.sort_by(|a, b| {
        b.1.measured_wait
            .cmp(&a.1.measured_wait)
            .then((a.0, a.1.site, a.1.peer).cmp(&(b.0, b.1.site, b.1.peer)))
    });
    let unit = unit_of(
        comms
            .iter()
            .flat_map(|c| [c.1.measured_wait as i64, c.1.compensated_wait, c.1.transfer]),
    );
    let us = |ns: i64| unit.fmt(ns);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "communication, by location, call site and peer (longest waits first, times in {}):",
        unit.name()
    );
    let _ = writeln!(
        out,
        "{:>8}  {:>6}  {:>6}  {:>8}  {:>12}  {:>12}  {:>12}  {:>12}  {:>8}",
        "location", "site", "peer", "calls", "bytes", "wait", "compensated", "transfer", "reorders"
    );
    let shown = if all { comms.len() } else { COMM_ROWS };
    for (location, c) in comms.iter().take(shown) {
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
    if comms.len() > shown {
        let _ = writeln!(
            out,
            "({} more records: heisen report --all-comms lists them)",
            comms.len() - shown
        );
    }
    if comms.is_empty() {
        let _ = writeln!(out, "(no communication records)");
    }
}

/// R10: the run's path is the longest over locations (ties: lower
/// location, then earlier file); each "CP if zero" is the maximum net.
fn render_path(out: &mut String, view: &View<'_>) {
    let r = &*view.report;
    let h = &r.header;
    let _ = writeln!(out);
    let paths: Vec<(usize, &CriticalPath<READ_SELECTED>)> = r
        .locations
        .iter()
        .enumerate()
        .filter_map(|(i, l)| l.critical_path.as_ref().map(|p| (i, p)))
        .collect();
    let key = |&(i, p): &(usize, &CriticalPath<READ_SELECTED>)| {
        (
            p.longest,
            core::cmp::Reverse((r.locations[i].location, view.file_of[i])),
        )
    };
    let Some(&(at, best)) = paths.iter().max_by_key(|x| key(x)) else {
        let _ = writeln!(out, "critical path: not collected (R9)");
        return;
    };
    let unit = Unit::for_max(best.longest);
    let us = |ns: i64| unit.fmt(ns);
    let _ = writeln!(
        out,
        "critical path: {} {u}, ending at {}; {} {u} in transfers",
        us(best.longest),
        view.at(at),
        us(best.transfer),
        u = unit.name()
    );
    if h.selected.is_empty() {
        return;
    }
    let selected: Vec<String> = h.selected.iter().map(|s| shown(&s.name)).collect();
    let swidth = column_width(&selected, 6);
    let _ = writeln!(
        out,
        "{:<swidth$}  {:>12}  {:>7}  {:>12}  {:>7}  {:>12}  {:>9}",
        "selected", "inclusive", "% CP", "exclusive", "% CP", "CP if zero", "zero-gain"
    );
    for (k, name) in selected.iter().enumerate() {
        let net = paths
            .iter()
            .filter_map(|(_, p)| p.net.get(k).copied())
            .max()
            .unwrap_or(best.longest);
        let inc = best.inclusive.get(k).copied().unwrap_or(0);
        let exc = best.exclusive.get(k).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "{:<swidth$}  {:>12}  {:>7}  {:>12}  {:>7}  {:>12}  {:>9}",
            name,
            us(inc),
            percent(inc, best.longest),
            us(exc),
            percent(exc, best.longest),
            us(net),
            percent(best.longest - net, best.longest)
        );
    }
}

/// Dropped records (R12) and over-compensation (R2), summed.
fn render_notes(out: &mut String, r: &Report) {
    let dropped: u64 = r
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
    let over: i64 = r.locations.iter().map(|l| l.overcompensation.total).sum();
    if over < 0 {
        let unit = Unit::for_max(over);
        let _ = writeln!(
            out,
            "note: over-compensation of {} {} in total (R2: calibrated overheads too high?)",
            unit.fmt(over),
            unit.name()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::shown;

    /// A table shows a region name whole up to 72 characters; a longer one
    /// keeps its start and its last 20 characters, so that two long names
    /// that differ only at their ends (a C++ signature's arguments, the
    /// hash `region_name` appends) still differ on screen.
    #[test]
    fn long_region_names_are_shown_by_their_ends() {
        let short = "std::vector<int, std::allocator<int> >::push_back(int const&)";
        assert_eq!(shown(short), short);
        let long = heisen_core::report::region_name(&"f<std::tuple<".repeat(30));
        let other = heisen_core::report::region_name(&("f<std::tuple<".repeat(30) + "x"));
        let (a, b) = (shown(&long), shown(&other));
        assert_eq!(a.chars().count(), 72);
        assert!(a.starts_with("f<std::tuple<") && a.contains('…'), "{a}");
        assert_ne!(a, b);
        assert!(a.ends_with(&long[long.len() - 16..]), "{a}");
    }
}
