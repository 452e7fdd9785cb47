//! The report a process writes at its end: the core's report format
//! (`docs/report.md`) with one location per measured thread, the clock
//! and every calibrated cost in the header, and a `runtime` object with
//! what the runtime itself dropped or noticed. Problems go to stderr, and
//! only problems; a summary only when asked (`HEISEN_SUMMARY=1`).

use core::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use heisen_core::report::{
    CriticalPath, LOCATION_NAME_LEN, LocationValues, Overcompensation, RegionName, RunHeader,
    region_name, truncated,
};
use serde::{Deserialize, Serialize};

use crate::runtime::{ENDED_BYTES, ENDED_LOCATIONS, MAX_THREADS, NO_REGION, Runtime};
use crate::thread::ThreadState;
use crate::{Report, SELECTED};

/// What the runtime itself reports besides the locations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeInfo {
    /// Threads measured (locations registered).
    pub threads: u64,
    /// Threads still running when the report was written whose state could
    /// not be read between two of their calls (not reported).
    pub running_at_exit: u64,
    /// Threads still running when the report was written, reported as
    /// they were between two of their calls: each location ends at its
    /// thread's last event, a region it had open not counted.
    #[serde(default)]
    pub running_reported: u64,
    /// Threads that started while the table's every slot was held by a
    /// measured thread, run unmeasured (R12).
    pub threads_dropped: u64,
    /// Ended locations left out of the report because the store of ended
    /// locations whose slots were reused was full (R12).
    #[serde(default)]
    pub locations_dropped: u64,
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
    /// Runtime calls that never returned (a signal handler that
    /// interrupted one jumped out of it): their threads' later events went
    /// unmeasured until the thread ended.
    #[serde(default)]
    pub calls_abandoned: u64,
    /// Calls of instrumented functions made while a heisen call was under
    /// way on their thread (a signal handler that interrupted it): they
    /// and their exits went unmeasured.
    #[serde(default)]
    pub calls_nested: u64,
    /// Bytes the runtime's tables took (R12: independent of run length).
    pub memory_bytes: u64,
    /// Whether this runtime was shared by several heisen libraries.
    pub shared: bool,
    /// How each way of entering and exiting regions was calibrated (R1 in
    /// situ, docs/rules.md): back to back and interleaved with work.
    #[serde(default)]
    pub calibration: Vec<PairCalibration>,
    /// What the threads measured of their hottest region pairs in the
    /// running program (online costing, `probe`), per location and region;
    /// empty without it (`HEISEN_CALIBRATION=in-situ` or `back-to-back`).
    #[serde(default)]
    pub online: Vec<OnlineCosting>,
}

/// One region pair a thread costed in the running program (R1 measured
/// directly; `probe`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OnlineCosting {
    /// The location.
    pub location: u32,
    /// The region (an id of the report's region table) and call site.
    pub region: u32,
    /// Its call site.
    pub site: u32,
    /// Charged per pair above the start-up calibration, ns (negative: the
    /// pair costs this program less).
    pub surplus: i64,
    /// The location's window pairs compared, calls made light and light
    /// windows another action ended early (all regions).
    pub windows: u64,
    /// See `windows`.
    pub light_calls: u64,
    /// See `windows`.
    pub aborted: u64,
}

/// The calibration of one pair costed in situ (R1): an enter+exit path,
/// or the thread interposer's mutex lock+unlock pair; timed back to back
/// and in situ, and the costs charged.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairCalibration {
    /// The path: `enter+exit` (Rust), `c_enter+c_exit`,
    /// `cyg_profile_func_enter+exit`; and the thread interposer's
    /// `pthread_mutex_lock+unlock` pair, costed the same way against
    /// libc's own pair.
    pub path: String,
    /// The pair timed back to back, ns.
    pub back_to_back: u64,
    /// Steps of the work kernel between pairs, per in-situ measurement
    /// (empty where the pair was timed back to back only:
    /// `HEISEN_CALIBRATION=back-to-back`).
    pub work_steps: Vec<u32>,
    /// The pair's added cost at each of `work_steps`, ns.
    pub in_situ: Vec<u64>,
    /// The whole cost charged per pair (the median of `in_situ`, to
    /// rounding: for the lock pair the lock's and the unlock's charges
    /// added), ns.
    pub whole: u64,
    /// The part of it inside the region, ns (for a lock pair: the part
    /// after the actions' clock reads).
    pub inside: u64,
    /// The same path's light pair timed in situ, ns: what a call of
    /// a light window costs (online costing, `probe`); 0 for a lock pair.
    #[serde(default)]
    pub light: u64,
}

/// A whole process's report, as written.
#[derive(Debug)]
pub struct ProcessReport {
    /// The run header.
    pub header: RunHeader<SELECTED>,
    /// Every region name.
    pub regions: Vec<RegionName>,
    /// One report per finished thread, by location id.
    pub locations: Vec<Report>,
    /// The runtime's own figures.
    pub runtime: RuntimeInfo,
}

/// The run header and the region names, as the report writes them.
fn header_and_regions(rt: &Runtime) -> (RunHeader<SELECTED>, Vec<RegionName>) {
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
                let _ = header.select(id, &region_name(name));
            }
            None => break, // the default selection beyond the regions seen
        }
    }
    let regions = names
        .iter()
        .enumerate()
        .map(|(id, name)| RegionName {
            id: id as u32,
            name: region_name(name),
        })
        .collect();
    (header, regions)
}

/// Where a location's report comes from: a done slot's state, or the
/// text kept when its slot was reused or made from a running thread's
/// copied state.
enum Source<'a> {
    Done(&'a ThreadState),
    Kept(std::borrow::Cow<'a, str>),
}

/// Every location by id (ended, and still running but read between two
/// of its thread's calls), with the runtime's figures; `ended` is the
/// registry's store, locked (no slot is reused meanwhile).
fn sources<'a>(
    rt: &'a Runtime,
    ended: &'a crate::runtime::Ended,
) -> (Vec<(u32, Source<'a>)>, RuntimeInfo) {
    let (done, running, mut unread) = rt.registry().finished(ended);
    let mut sources: Vec<(u32, Source<'a>)> =
        Vec::with_capacity(done.len() + running.len() + ended.kept.len());
    let mut errors = ended.errors;
    let mut online = Vec::new();
    let mut learned = |state: &ThreadState| {
        errors.absorb(&state.errors);
        let p = state.probe();
        online.extend(p.learned().map(|(region, site, surplus)| OnlineCosting {
            location: state.kernel.id(),
            region,
            site,
            surplus,
            windows: p.windows,
            light_calls: p.light_calls,
            aborted: p.aborted,
        }));
    };
    for thread in done {
        // SAFETY: `finished` lists only threads marked done (acquire), and
        // the store's lock keeps their slots from being reused.
        #[allow(unsafe_code)] // reason: reading a finished thread's state
        let state = unsafe { thread.state_of_finished() };
        learned(state);
        sources.push((state.kernel.id(), Source::Done(state)));
    }
    // A thread still running (a pool's, waiting for work that never comes)
    // is reported as it was between two of its calls: its location ends at
    // its last event, and a region it had open is not counted.
    let mut reported = 0;
    for thread in running {
        let Some(copy) = thread.copy_between_calls() else {
            unread += 1;
            continue;
        };
        let state = copy.state();
        learned(state);
        reported += 1;
        let text = ended_text(state);
        sources.push((state.kernel.id(), Source::Kept(text.into())));
    }
    for (id, text) in &ended.kept {
        sources.push((*id, Source::Kept(text.as_ref().into())));
    }
    sources.sort_by_key(|(id, _)| *id);
    let memory = core::mem::size_of::<Runtime>()
        + rt.registry().len() * core::mem::size_of::<crate::thread::Thread>()
        + ended.bytes()
        + rt.names()
            .all()
            .iter()
            .map(|n| 2 * n.len() + 64)
            .sum::<usize>();
    let info = RuntimeInfo {
        threads: rt.registry().locations(),
        running_at_exit: unread as u64,
        running_reported: reported,
        threads_dropped: rt.registry().dropped(),
        locations_dropped: ended.dropped,
        names_dropped: rt.names().dropped(),
        exit_mismatches: errors.exit_mismatch,
        exits_without_enter: errors.exit_without_enter,
        frames_unwound: errors.unwound,
        calls_abandoned: errors.abandoned,
        calls_nested: rt.nested(),
        memory_bytes: memory as u64,
        shared: rt.is_shared(),
        calibration: rt.pairs(),
        online,
    };
    (sources, info)
}

/// The text an ended location is kept as when its slot is reused: its
/// report with the critical-path arrays of all [`SELECTED`] regions (the
/// writer trims them to the regions named by then).
pub(crate) fn ended_text(s: &ThreadState) -> String {
    serde_json::to_string(&location(s, SELECTED)).unwrap_or_default()
}

/// The report of every thread that is done, the caller's included if it
/// ended, and of every thread still running that could be read between
/// two of its calls (all of them in memory at once: for tests and tools;
/// the report file is written one location at a time).
pub fn build(rt: &Runtime) -> ProcessReport {
    let (header, regions) = header_and_regions(rt);
    let selected = header.selected.len();
    let ended = rt.registry().ended();
    let (sources, info) = sources(rt, &ended);
    let mut locations = Vec::with_capacity(sources.len());
    for (_, source) in sources {
        let report = match source {
            Source::Done(state) => location(state, selected),
            Source::Kept(text) => match serde_json::from_str::<Report>(&text) {
                Ok(mut report) => {
                    if let Some(p) = &mut report.critical_path {
                        p.inclusive.truncate(selected);
                        p.exclusive.truncate(selected);
                        p.net.truncate(selected);
                    }
                    report
                }
                Err(_) => continue, // cannot happen: written by `ended_text`
            },
        };
        locations.push(report);
    }
    drop(ended);
    ProcessReport {
        header,
        regions,
        locations,
        runtime: info,
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
    // A location that stopped collecting (MPI_Pcontrol(0) after a phase)
    // reports the values frozen at its stop (R9); before, only a location
    // still collecting at the end had a path in its report.
    let critical_path = k.collected_path().map(|s| {
        let mut p = CriticalPath::new(s.longest, s.transfer, s.inclusive, s.exclusive, s.net);
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

/// Writes the report to `HEISEN_OUTPUT`, one location at a time (there
/// may be tens of thousands), noting what went wrong.
pub(crate) fn write(rt: &Runtime) -> Result<PathBuf, String> {
    let path = rt.report_path();
    let cannot = |e: std::io::Error| {
        format!(
            "cannot write the report to {} ({e}); set HEISEN_OUTPUT to a writable directory",
            path.display()
        )
    };
    let file = std::fs::File::create(&path).map_err(cannot)?;
    let mut out = std::io::BufWriter::new(file);
    let mut seen = Seen::default();
    let info = {
        let ended = rt.registry().ended();
        write_to(rt, &ended, &mut out, &mut seen).map_err(cannot)?
    };
    out.flush().map_err(cannot)?;
    notice_problems(rt, &info, &seen);
    if rt.summary() {
        eprint!("{}", summary(&build(rt), &path));
    }
    Ok(path)
}

/// What the report's locations showed, for [`notice_problems`].
#[derive(Default)]
struct Seen {
    /// Region ids entered anywhere.
    entered: std::collections::BTreeSet<u64>,
    /// Locations whose tables overflowed: how many, the first's id, and
    /// the records dropped over all of them (regions, comms, loops,
    /// frames, wildcard sites).
    overflowed: u64,
    first_overflowed: u64,
    dropped: [u64; 5],
}

/// The report file's text: `{"header", "regions", "locations", "runtime"}`
/// (the core's `ReportFile` and the runtime's figures), each location
/// encoded on its own.
fn write_to(
    rt: &Runtime,
    ended: &crate::runtime::Ended,
    out: &mut impl std::io::Write,
    seen: &mut Seen,
) -> std::io::Result<RuntimeInfo> {
    let (header, regions) = header_and_regions(rt);
    let selected = header.selected.len();
    let (sources, info) = sources(rt, ended);
    let json =
        |e: serde_json::Error| std::io::Error::other(format!("cannot encode the report: {e}"));
    out.write_all(b"{\"header\":")?;
    serde_json::to_writer(&mut *out, &header).map_err(json)?;
    out.write_all(b",\"regions\":")?;
    serde_json::to_writer(&mut *out, &regions).map_err(json)?;
    out.write_all(b",\"locations\":[")?;
    for (i, (_, source)) in sources.into_iter().enumerate() {
        let mut value = match source {
            Source::Done(state) => serde_json::to_value(location(state, selected)).map_err(json)?,
            Source::Kept(text) => serde_json::from_str(&text).map_err(json)?,
        };
        if let Some(path) = value.get_mut("critical_path") {
            for k in ["inclusive", "exclusive", "net"] {
                if let Some(serde_json::Value::Array(a)) = path.get_mut(k) {
                    a.truncate(selected);
                }
            }
        }
        see(&value, seen);
        if i > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, &value).map_err(json)?;
    }
    out.write_all(b"],\"runtime\":")?;
    serde_json::to_writer(&mut *out, &info).map_err(json)?;
    out.write_all(b"}\n")?;
    Ok(info)
}

/// Notes what one location's report shows for [`notice_problems`].
fn see(l: &serde_json::Value, seen: &mut Seen) {
    if let Some(regions) = l["regions"].as_array() {
        seen.entered
            .extend(regions.iter().filter_map(|r| r["region"].as_u64()));
    }
    let o = &l["overflow"];
    let kinds =
        ["regions", "comms", "loops", "frames", "sites"].map(|k| o[k].as_u64().unwrap_or(0));
    if kinds.iter().any(|&n| n > 0) {
        if seen.overflowed == 0 {
            seen.first_overflowed = l["location"].as_u64().unwrap_or(0);
        }
        seen.overflowed += 1;
        for (sum, n) in seen.dropped.iter_mut().zip(kinds) {
            *sum += n;
        }
    }
}

/// Notes, for stderr at exit, everything the report shows went wrong.
fn notice_problems(rt: &Runtime, info: &RuntimeInfo, seen: &Seen) {
    // An MPI rank need not enter every listed region (a master, its
    // workers): the interposer's rank 0 checks the whole run instead.
    let per_process = rt.backend() != "mpi";
    if let Some(listed) = rt.config().regions.as_ref().filter(|_| per_process) {
        for name in listed {
            let entered = rt
                .names()
                .lookup(name)
                .is_some_and(|id| seen.entered.contains(&u64::from(id)));
            if !entered {
                rt.note(format!(
                    "HEISEN_REGIONS names `{name}`, which no thread entered (check the spelling)"
                ));
            }
        }
    }
    if info.threads_dropped > 0 {
        rt.note(format!(
            "{} threads ran unmeasured: they started while {MAX_THREADS} measured threads were alive",
            info.threads_dropped
        ));
    }
    if info.locations_dropped > 0 {
        rt.note(format!(
            "{} ended threads are missing from the report: more than {ENDED_LOCATIONS} locations (or {} MiB of their reports) ended before the report was written",
            info.locations_dropped,
            ENDED_BYTES >> 20
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
    if info.calls_abandoned > 0 {
        rt.note(format!(
            "{} threads left a heisen call by a jump out of a signal handler; their events after it went unmeasured",
            info.calls_abandoned
        ));
    }
    if seen.overflowed > 0 {
        // R12: one line whatever the number of locations (a C++ program
        // built with -finstrument-functions had 80 threads deeper than the
        // region stack, and printed 80 lines); each location's counts are
        // in its report record (`overflow`).
        let [regions, comms, loops, frames, sites] = seen.dropped;
        let total: u64 = seen.dropped.iter().sum();
        let (which, after) = if seen.overflowed == 1 {
            (
                format!(
                    "location {}: {total} records did not fit its tables",
                    seen.first_overflowed
                ),
                "",
            )
        } else {
            (
                format!(
                    "{} locations: {total} records did not fit their tables",
                    seen.overflowed
                ),
                "; each location's in the report",
            )
        };
        rt.note(format!(
            "{which} (regions {regions}, comms {comms}, loops {loops}, frames {frames}, wildcard sites {sites}{after})"
        ));
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
