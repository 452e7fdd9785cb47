//! The reports of an MPI run (issue item 5): each rank writes its own
//! process report (the core format, `docs/report.md`) as
//! `heisen.rank<r>.json` in `HEISEN_OUTPUT`; after a barrier, rank 0 reads
//! them all and writes the run report `heisen.mpi.json`, which `heisen
//! report` reads like any other. Region ids are per process, so the merge
//! maps them through their names. With `HEISEN_SUMMARY=1` rank 0 prints a
//! one-screen summary to stderr; otherwise nothing is printed.

use core::fmt::Write as _;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use heisen_core::report::MIXED_SLOT;

use crate::requests;
use crate::setup::{Mpi, guarded};
use crate::sys;

/// The file name of rank `rank`'s report.
pub fn rank_file(rank: i32) -> String {
    format!("heisen.rank{rank}.json")
}

/// The file name of the merged run report.
pub const RUN_FILE: &str = "heisen.mpi.json";

/// Writes this rank's report, waits for every rank's, and on rank 0
/// merges them. Called by `MPI_Finalize` before `PMPI_Finalize`. The
/// barrier is reached whatever heisen's own parts do (they cannot
/// unwind out), so no rank is left waiting.
pub fn at_finalize(m: &Mpi) {
    let summary = m.runtime.summary();
    let own = guarded(|| write_rank(m)).flatten();
    // SAFETY: the MPI is initialised and not finalized (we are in
    // MPI_Finalize's wrapper before PMPI_Finalize).
    unsafe {
        sys::PMPI_Barrier(sys::comm_world());
    }
    if m.rank == 0
        && let Some(own) = own
    {
        guarded(|| write_run(m, &own, summary));
    }
}

/// Completes what heisen kept, notes what did not fit (R12) and writes
/// this rank's report; its path.
fn write_rank(m: &Mpi) -> Option<PathBuf> {
    let rt = m.runtime;
    rt.set_summary(false);
    requests::at_finalize(rt);
    crate::datatype::free_cached();
    let t = requests::table().figures();
    if t.overflow + t.lost > 0 {
        // R12: counted and reported (stderr carries problems only).
        rt.note(format!(
            "{} point-to-point operations beyond the request table of {} ran unmeasured",
            t.overflow + t.lost,
            t.capacity
        ));
    }
    if t.unfixed > 0 {
        rt.note(format!(
            "{} receives beyond every table: their statuses counted heisen's record too",
            t.unfixed
        ));
    }
    let x = crate::isendrecv::figures();
    if x.overflow > 0 {
        // R12: counted and reported.
        rt.note(format!(
            "{} MPI_Isendrecv exchanges beyond the exchange table of {} ran unmeasured",
            x.overflow, x.capacity
        ));
    }
    if x.lost > 0 {
        rt.note(format!(
            "{} freed MPI_Isendrecv_replace exchanges beyond the {} kept: their packed data stays for the run",
            x.lost, x.kept_capacity
        ));
    }
    let path = rt.finish()?.ok()?;
    add_mpi_figures(&path, m);
    Some(path)
}

/// Rank 0: the run report from every rank's file, and the summary when
/// asked.
fn write_run(m: &Mpi, own: &Path, summary: bool) {
    let dir = own.parent().unwrap_or(Path::new("."));
    match merge_files(dir, m.size) {
        Ok(run) => {
            for name in unentered(&run, m.runtime.config().regions.as_deref().unwrap_or(&[])) {
                eprintln!(
                    "heisen: HEISEN_REGIONS names `{name}`, which no rank entered (check the spelling)"
                );
            }
            let path = dir.join(RUN_FILE);
            let text = run.to_string() + "\n";
            if let Err(e) = std::fs::write(&path, text) {
                eprintln!("heisen: cannot write {} ({e})", path.display());
            } else if summary {
                eprint!("{}", summary_text(&run, &path));
            }
        }
        Err(e) => eprintln!("heisen: no run report: {e}"),
    }
}

/// The names of `listed` (HEISEN_REGIONS) that no location of the run
/// entered.
fn unentered<'a>(run: &Value, listed: &'a [String]) -> Vec<&'a str> {
    let entered: std::collections::HashSet<u64> = run["locations"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|l| l["regions"].as_array().into_iter().flatten())
        .filter_map(|r| r["region"].as_u64())
        .collect();
    listed
        .iter()
        .filter(|name| {
            !run["regions"].as_array().into_iter().flatten().any(|r| {
                r["name"] == name.as_str()
                    && r["id"].as_u64().is_some_and(|id| entered.contains(&id))
            })
        })
        .map(String::as_str)
        .collect()
}

/// Adds this rank's MPI figures to its report: rank, size, merge form,
/// and the request and exchange tables' capacity, peak, overflow and
/// memory (R12).
fn add_mpi_figures(path: &Path, m: &Mpi) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let Ok(mut report) = serde_json::from_str::<Value>(&text) else {
        return;
    };
    let t = requests::table().figures();
    let x = crate::isendrecv::figures();
    report["mpi"] = json!({
        "rank": m.rank,
        "size": m.size,
        "form": match m.form {
            heisen_core::Form::DelayOnly => "delay-only",
            heisen_core::Form::Timestamped => "timestamped",
        },
        "requests": {
            "capacity": t.capacity,
            "peak": t.peak,
            "overflow": t.overflow,
            "lost": t.lost,
            "unfixed": t.unfixed,
            "reissued": t.reissued,
            "beyond": t.beyond,
            "memory_bytes": t.memory_bytes,
        },
        // the pending MPI_Isendrecv exchanges (R12)
        "isendrecv": {
            "capacity": x.capacity,
            "peak": x.peak,
            "overflow": x.overflow,
            "kept_capacity": x.kept_capacity,
            "kept": x.kept,
            "kept_peak": x.kept_peak,
            "lost": x.lost,
            "memory_bytes": x.memory_bytes,
        },
        "memory_bytes": (t.memory_bytes + x.memory_bytes) as u64
            + report["runtime"]["memory_bytes"].as_u64().unwrap_or(0),
        // the collectives' extra exchanges and the clock alignment
        "collectives": crate::collective::report_json(),
        // one-sided windows tracked and their PSCW merges
        "windows": crate::window::report_json(),
        "clock": crate::align::report_json(),
        // where the calibrated costs came from, and MPI_Init's parts
        "startup": crate::startup::report_json(),
    });
    let _ = std::fs::write(path, report.to_string() + "\n");
}

/// Merges the rank reports `heisen.rank0.json` … in `dir` into one run
/// report: rank 0's header, the union of region names (ids renumbered
/// through the names), every location, and an `mpi` object with each
/// rank's runtime figures.
pub fn merge_files(dir: &Path, size: i32) -> Result<Value, String> {
    let mut reports = Vec::with_capacity(size as usize);
    for rank in 0..size {
        let path = dir.join(rank_file(rank));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {} ({e})", path.display()))?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a report ({e})", path.display()))?;
        reports.push(v);
    }
    Ok(merge(&reports))
}

/// Merges process reports (see [`merge_files`]).
pub fn merge(reports: &[Value]) -> Value {
    let mut ids: HashMap<String, u64> = HashMap::new();
    let mut regions = Vec::new();
    let mut locations = Vec::new();
    let mut runtimes = Vec::new();
    for report in reports {
        let mut map: HashMap<u64, u64> = HashMap::new();
        for r in report["regions"].as_array().into_iter().flatten() {
            let (Some(id), Some(name)) = (r["id"].as_u64(), r["name"].as_str()) else {
                continue;
            };
            let next = ids.len() as u64;
            let new = *ids.entry(name.to_owned()).or_insert_with(|| {
                regions.push(json!({"id": next, "name": name}));
                next
            });
            map.insert(id, new);
        }
        for l in report["locations"].as_array().into_iter().flatten() {
            let mut l = l.clone();
            for r in l["regions"].as_array_mut().into_iter().flatten() {
                if let Some(new) = r["region"].as_u64().and_then(|id| map.get(&id)) {
                    r["region"] = json!(new);
                }
            }
            locations.push(l);
        }
        runtimes.push(json!({"runtime": report["runtime"], "mpi": report["mpi"]}));
    }
    let mut header = reports.first().map_or(Value::Null, |r| r["header"].clone());
    // R7: share k is region k of the selection of the rank that computed
    // it, and the shares travel between ranks. A slot every rank that uses
    // it gave the same region is that region's share (ranks that entered
    // fewer regions leave later slots unused: they carry nothing there).
    // A slot ranks gave different regions (HEISEN_REGIONS unset,
    // different first regions) mixed them on the way: it is named
    // `MIXED_SLOT`, and `mpi.selections_differ` says which rank selected
    // what. The other slots keep their names.
    let entries: Vec<&[Value]> = reports
        .iter()
        .map(|r| {
            r["header"]["selected"]
                .as_array()
                .map_or(&[][..], Vec::as_slice)
        })
        .collect();
    let selections: Vec<Vec<&str>> = entries
        .iter()
        .map(|s| {
            s.iter()
                .map(|s| s["name"].as_str().unwrap_or("?"))
                .collect()
        })
        .collect();
    let width = selections.iter().map(Vec::len).max().unwrap_or(0);
    let mut mixed = Vec::new();
    let selected: Vec<Value> = (0..width)
        .map(|k| {
            let mut names = selections.iter().filter_map(|s| s.get(k));
            let first = names.next().copied().unwrap_or("?");
            if names.all(|&n| n == first) {
                // the entry of a rank that uses the slot, renumbered like
                // the other regions
                let mut s = entries
                    .iter()
                    .find_map(|e| e.get(k))
                    .cloned()
                    .unwrap_or(Value::Null);
                if let Some(new) = ids.get(first) {
                    s["id"] = json!(new);
                }
                s
            } else {
                mixed.push(k);
                json!({"id": u32::MAX, "name": MIXED_SLOT})
            }
        })
        .collect();
    header["selected"] = json!(selected);
    let differ = !mixed.is_empty();
    // Each rank's memory: the runtime's tables and the request table (R12).
    let memory: u64 = runtimes
        .iter()
        .filter_map(|r| {
            r["mpi"]["memory_bytes"]
                .as_u64()
                .or(r["runtime"]["memory_bytes"].as_u64())
        })
        .sum();
    json!({
        "header": header,
        "regions": regions,
        "locations": locations,
        "mpi": {
            "ranks": reports.len(),
            "memory_bytes": memory,
            // the largest residual clock alignment error of any rank (`align`)
            "clock_error_ns": reports.iter().filter_map(|r| r["mpi"]["clock"]["error_ns"].as_u64()).max(),
            // each rank's selection, when they differ (R7; see above),
            // and the slots they differ in
            "selections_differ": differ.then_some(&selections),
            "mixed_slots": differ.then_some(&mixed),
            "ranks_detail": runtimes,
        },
    })
}

/// The one-screen summary of a run report: per location its measured and
/// compensated elapsed time, the run's critical path and its profile, and
/// the wildcard reorderings found (R11).
pub fn summary_text(run: &Value, path: &Path) -> String {
    let mut out = String::new();
    let ms = |ns: f64| ns / 1e6;
    let locations = run["locations"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(
        out,
        "heisen: {} ranks, {} locations, form {}, report {}",
        run["mpi"]["ranks"],
        locations.len(),
        run["header"]["form"].as_str().unwrap_or("?"),
        path.display()
    );
    let _ = writeln!(
        out,
        "{:<20} {:>12} {:>14} {:>10}",
        "location", "measured ms", "compensated ms", "reorders"
    );
    let num = |v: &Value| v.as_f64().unwrap_or(0.0);
    for l in &locations {
        let reorders: u64 = l["comms"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["reorders"].as_u64())
            .sum();
        let _ = writeln!(
            out,
            "{:<20} {:>12.3} {:>14.3} {:>10}",
            format!("{} ({})", l["name"].as_str().unwrap_or("?"), l["location"]),
            ms(num(&l["measured_end"]) - num(&l["start"])),
            ms(num(&l["approximated_end"]) - num(&l["approximated_start"])),
            reorders
        );
    }
    if let Some(slots) = run["mpi"]["mixed_slots"].as_array() {
        let slots: Vec<String> = slots.iter().map(Value::to_string).collect();
        let _ = writeln!(
            out,
            "ranks selected different regions in share slot{} {} (HEISEN_REGIONS unset): shown as {MIXED_SLOT}, they mix regions; set HEISEN_REGIONS to name every share",
            if slots.len() == 1 { "" } else { "s" },
            slots.join(", ")
        );
    }
    let longest = locations
        .iter()
        .filter(|l| l["critical_path"].is_object())
        .max_by_key(|l| l["critical_path"]["longest"].as_i64().unwrap_or(0));
    if let Some(l) = longest {
        let path = &l["critical_path"];
        let total = num(&path["longest"]).max(1.0);
        let _ = writeln!(
            out,
            "critical path {:.3} ms, ends at location {}",
            ms(num(&path["longest"])),
            l["location"]
        );
        for (k, r) in run["header"]["selected"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let share = num(&path["inclusive"][k]);
            let _ = writeln!(
                out,
                "  {:<24} {:>10.3} ms {:>5.1} %",
                r["name"].as_str().unwrap_or("?"),
                ms(share),
                100.0 * share / total
            );
        }
    }
    out
}
