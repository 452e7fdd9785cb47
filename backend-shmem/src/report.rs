//! The report a process writes at its end: the core's report format
//! (`docs/report.md`) with one location per measured thread, the clock
//! and every calibrated cost in the header, and a `runtime` object with
//! what the runtime itself dropped or noticed. Problems go to stderr, and
//! only problems; a summary only when asked (`HEISEN_SUMMARY=1`).

use core::fmt::Write as _;
use std::path::PathBuf;

use heisen_core::report::{
    CriticalPath, LOCATION_NAME_LEN, LocationValues, Overcompensation, REGION_NAME_LEN, RegionName,
    ReportFile, RunHeader, truncated,
};
use serde::{Deserialize, Serialize};

use crate::runtime::{MAX_THREADS, NO_REGION, Runtime};
use crate::thread::{KernelErrors, ThreadState};
use crate::{Report, SELECTED};

/// What the runtime itself reports besides the locations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeInfo {
    /// Threads measured.
    pub threads: u64,
    /// Threads still running when the report was written (not reported).
    pub running_at_exit: u64,
    /// Threads beyond the table's capacity, run unmeasured (R12).
    pub threads_dropped: u64,
    /// Region names refused because the name table was full (R12).
    pub names_dropped: u64,
    /// Region exits refused because they did not match the open region.
    pub exit_mismatches: u64,
    /// Region exits with no region open.
    pub exits_without_enter: u64,
    /// Frames closed by the exit of a function open beneath them, their
    /// own exits skipped by a `longjmp` (compiler hooks only).
    #[serde(default)]
    pub frames_unwound: u64,
    /// Bytes the runtime's tables took (R12: independent of run length).
    pub memory_bytes: u64,
    /// Whether this runtime was shared by several heisen libraries.
    pub shared: bool,
    /// How each way of entering and exiting regions was calibrated (R1 in
    /// situ, docs/rules.md): back to back and interleaved with work.
    #[serde(default)]
    pub calibration: Vec<PairCalibration>,
}

/// The calibration of one enter+exit path (R1): its pair timed back to
/// back and in situ, and the costs charged.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairCalibration {
    /// The path: `enter+exit` (Rust), `c_enter+c_exit`,
    /// `cyg_profile_func_enter+exit`.
    pub path: String,
    /// The pair timed back to back, ns.
    pub back_to_back: u64,
    /// Steps of the work kernel between pairs, per in-situ measurement
    /// (empty where the pair was timed back to back only: the Rust API's
    /// inlined pairs, or `HEISEN_CALIBRATION=back-to-back`).
    pub work_steps: Vec<u32>,
    /// The pair's added cost at each of `work_steps`, ns.
    pub in_situ: Vec<u64>,
    /// The whole cost charged per pair (the median of `in_situ`), ns.
    pub whole: u64,
    /// The part of it inside the region, ns.
    pub inside: u64,
}

/// A whole process's report, as written.
#[derive(Debug)]
pub struct ProcessReport {
    /// The run header.
    pub header: RunHeader<SELECTED>,
    /// Every region name.
    pub regions: Vec<RegionName>,
    /// One report per finished thread, in registry order.
    pub locations: Vec<Report>,
    /// The runtime's own figures.
    pub runtime: RuntimeInfo,
}

#[derive(Serialize)]
struct File<'a> {
    #[serde(flatten)]
    file: ReportFile<'a, SELECTED, { crate::REGIONS }, { crate::COMMS }, { crate::LOOPS }>,
    runtime: &'a RuntimeInfo,
}

/// The report of every thread that is done, the caller's included if it
/// ended.
pub fn build(rt: &Runtime) -> ProcessReport {
    let mut header = RunHeader::<SELECTED>::new(&truncated::<16>(&rt.backend()), rt.config().form)
        .unwrap_or_else(|_| RunHeader::new("heisen", rt.config().form).expect("short names fit"));
    let _ = header.set_clock(rt.clock().kind().name());
    header.calibration = Some(rt.calibration());
    for (name, cost) in rt.actions() {
        let _ = header.add_action(&truncated::<32>(&name), cost.whole, cost.inside);
    }
    let names = rt.names().all();
    for &id in rt.selected().iter().take_while(|&&id| id != NO_REGION) {
        match names.get(id as usize) {
            Some(name) => {
                let _ = header.select(id, &truncated::<REGION_NAME_LEN>(name));
            }
            None => break, // the default selection beyond the regions seen
        }
    }
    let regions = names
        .iter()
        .enumerate()
        .map(|(id, name)| RegionName {
            id: id as u32,
            name: truncated::<REGION_NAME_LEN>(name),
        })
        .collect();
    let (done, running) = rt.registry().finished();
    let mut errors = KernelErrors::default();
    let mut locations = Vec::with_capacity(done.len());
    for thread in done {
        // SAFETY: `finished` lists only threads marked done (acquire).
        #[allow(unsafe_code)] // reason: reading a finished thread's state
        let state = unsafe { thread.state_of_finished() };
        errors.exit_mismatch += state.errors.exit_mismatch;
        errors.exit_without_enter += state.errors.exit_without_enter;
        errors.unwound += state.errors.unwound;
        locations.push(location(state, header.selected.len()));
    }
    let memory = core::mem::size_of::<Runtime>()
        + rt.registry().len() * core::mem::size_of::<crate::thread::Thread>()
        + rt.names()
            .all()
            .iter()
            .map(|n| 2 * n.len() + 64)
            .sum::<usize>();
    ProcessReport {
        header,
        regions,
        locations,
        runtime: RuntimeInfo {
            threads: rt.registry().len() as u64,
            running_at_exit: running as u64,
            threads_dropped: rt.registry().dropped(),
            names_dropped: rt.names().dropped(),
            exit_mismatches: errors.exit_mismatch,
            exits_without_enter: errors.exit_without_enter,
            frames_unwound: errors.unwound,
            memory_bytes: memory as u64,
            shared: rt.is_shared(),
            calibration: rt.pairs(),
        },
    }
}

/// One thread's location report.
fn location(s: &ThreadState, selected: usize) -> Report {
    let k = &s.kernel;
    let end = s.end.unwrap_or(k.last_measured());
    // The end's own cost falls after its clock read: a(end) is the
    // approximated time of that read.
    let approximated_end = k.last_approximated();
    let name = format!("thread {}", s.index);
    let o = k.overcompensation();
    let critical_path = CriticalPath::of_snapshot(&k.snapshot()).map(|mut p| {
        p.inclusive.truncate(selected);
        p.exclusive.truncate(selected);
        p.net.truncate(selected);
        p
    });
    let values = LocationValues {
        location: k.id(),
        name: Some(&name),
        form: k.form(),
        start: s.start,
        approximated_start: s.approximated_start,
        measured_end: end,
        approximated_end,
        delay: (end as i64 - approximated_end).max(0) as u64,
        overhead: k.overhead(),
        critical_path,
        frames_dropped: k.lost_frames(),
        sites_dropped: s.reorders.untracked(),
        overcompensation: Overcompensation {
            count: o.count,
            total: o.total,
        },
    };
    debug_assert!(name.len() <= LOCATION_NAME_LEN);
    Report::from_profile(values, &s.stats).expect("a thread's name fits")
}

/// Writes the report to `HEISEN_OUTPUT`, noting what went wrong.
pub(crate) fn write(rt: &Runtime) -> Result<PathBuf, String> {
    let report = build(rt);
    notice_problems(rt, &report);
    let path = rt.report_path();
    let file = File {
        file: ReportFile {
            header: &report.header,
            regions: &report.regions,
            locations: &report.locations,
        },
        runtime: &report.runtime,
    };
    let text =
        serde_json::to_string(&file).map_err(|e| format!("cannot encode the report: {e}"))?;
    std::fs::write(&path, text + "\n").map_err(|e| {
        format!(
            "cannot write the report to {} ({e}); set HEISEN_OUTPUT to a writable directory",
            path.display()
        )
    })?;
    if rt.summary() {
        eprint!("{}", summary(&report, &path));
    }
    Ok(path)
}

/// Notes, for stderr at exit, everything the report shows went wrong.
fn notice_problems(rt: &Runtime, report: &ProcessReport) {
    if let Some(listed) = &rt.config().regions {
        for name in listed {
            let id = rt.names().lookup(name);
            let entered = id.is_some_and(|id| {
                report
                    .locations
                    .iter()
                    .any(|l| l.regions.iter().any(|r| r.region == id))
            });
            if !entered {
                rt.note(format!(
                    "HEISEN_REGIONS names `{name}`, which no thread entered (check the spelling)"
                ));
            }
        }
    }
    let info = &report.runtime;
    if info.threads_dropped > 0 {
        rt.note(format!(
            "{} threads beyond the table of {MAX_THREADS} ran unmeasured",
            info.threads_dropped
        ));
    }
    if info.names_dropped > 0 {
        rt.note(format!(
            "{} region names did not fit the name table; those regions went unmeasured",
            info.names_dropped
        ));
    }
    if info.exit_mismatches + info.exits_without_enter > 0 {
        rt.note(format!(
            "{} region exits did not match the innermost open region and were ignored",
            info.exit_mismatches + info.exits_without_enter
        ));
    }
    for l in &report.locations {
        let o = &l.overflow;
        let dropped = o.regions + o.comms + o.loops + o.frames + o.sites;
        if dropped > 0 {
            rt.note(format!(
                "location {}: {dropped} records did not fit its tables (regions {}, comms {}, loops {}, frames {}, wildcard sites {})",
                l.location, o.regions, o.comms, o.loops, o.frames, o.sites
            ));
        }
    }
}

/// Prints what went wrong, if anything, to stderr.
pub(crate) fn stderr_at_exit(rt: &Runtime) {
    for line in rt.notes() {
        eprintln!("heisen: {line}");
    }
}

/// The one-screen summary (`HEISEN_SUMMARY=1`).
pub fn summary(report: &ProcessReport, path: &std::path::Path) -> String {
    let mut out = String::new();
    let ms = |ns: i64| ns as f64 / 1e6;
    let _ = writeln!(
        out,
        "heisen: {} locations, report {}",
        report.locations.len(),
        path.display()
    );
    let _ = writeln!(
        out,
        "{:<12} {:>12} {:>12} {:>12} {:>10}",
        "location", "measured ms", "compens. ms", "local ms", "delay ms"
    );
    for l in &report.locations {
        let _ = writeln!(
            out,
            "{:<12} {:>12.3} {:>12.3} {:>12.3} {:>10.3}",
            l.name.as_deref().unwrap_or("?"),
            ms(l.measured_elapsed() as i64),
            ms(l.compensated_elapsed()),
            ms(l.local_only_elapsed()),
            ms(l.delay as i64)
        );
    }
    let longest = report
        .locations
        .iter()
        .filter_map(|l| l.critical_path.as_ref().map(|p| (p, l)))
        .max_by_key(|(p, l)| (p.longest, core::cmp::Reverse(l.location)));
    if let Some((path, l)) = longest {
        let _ = writeln!(
            out,
            "critical path {:.3} ms, ends at {}; share of it and how much shorter with the region at zero:",
            ms(path.longest),
            l.name.as_deref().unwrap_or("?")
        );
        for (k, r) in report.header.selected.iter().enumerate() {
            let share = path.inclusive.get(k).copied().unwrap_or(0);
            // R10: the run's zeroed length is the maximum net over locations.
            let net = report
                .locations
                .iter()
                .filter_map(|l| l.critical_path.as_ref()?.net.get(k).copied())
                .max()
                .unwrap_or(path.longest);
            let pct = |v: i64| 100.0 * v as f64 / path.longest.max(1) as f64;
            let _ = writeln!(
                out,
                "  {:<24} {:>10.3} ms {:>5.1} %   zeroed -{:.3} ms",
                r.name.as_str(),
                ms(share),
                pct(share),
                ms(path.longest - net)
            );
        }
    }
    out
}
