//! What an MPI run leaves behind (issue 10 item 5, R12): every rank's
//! report and rank 0's merged run report, comm records per peer location,
//! the form asked for, one summary from rank 0 only when asked, and a
//! memory figure that does not grow with the number of messages.

mod common;

use std::path::Path;

use common::{build, library, run_with, scratch};
use heisen_core::report::MIXED_SLOT;
use serde_json::Value;

/// Runs the master/worker program with `tasks` tasks under heisen and
/// returns the run report and the run's standard error.
fn master_worker(dir: &Path, ranks: u32, tasks: u32, vars: &[(&str, &str)]) -> (Value, String) {
    let exe = build("master_worker", dir);
    let out = dir.join(format!("out-{tasks}"));
    std::fs::create_dir_all(&out).expect("output directory");
    let run = run_with(
        &exe,
        ranks,
        Some(&library()),
        &out,
        &out,
        &[&tasks.to_string()],
        vars,
    );
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "master_worker failed: {stderr}");
    let text = std::fs::read_to_string(out.join("heisen.mpi.json")).expect("run report");
    (
        serde_json::from_str(&text).expect("run report is JSON"),
        stderr,
    )
}

/// The location of rank `rank`'s main thread.
fn main_location(run: &Value, rank: u64) -> &Value {
    run["locations"]
        .as_array()
        .expect("locations")
        .iter()
        .find(|l| l["location"].as_u64() == Some(rank << 12))
        .unwrap_or_else(|| panic!("no location for rank {rank}"))
}

#[test]
fn master_records_each_worker_as_a_peer_and_memory_does_not_grow() {
    let dir = scratch("reports-peers");
    let (small, _) = master_worker(&dir, 3, 20, &[]);
    let (large, _) = master_worker(&dir, 3, 400, &[]);
    for (run, tasks) in [(&small, 20), (&large, 400)] {
        let master = main_location(run, 0);
        // Receives are recorded per sending location (R12): ranks 1 and 2.
        let received: u64 = master["comms"]
            .as_array()
            .expect("comms")
            .iter()
            .filter(|c| [4096, 8192].contains(&c["peer"].as_u64().unwrap_or(0)))
            .map(|c| c["count"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(received, tasks, "results received by the master");
        assert_eq!(run["header"]["form"], "timestamped");
    }
    // R12: the memory heisen holds is fixed at start, not per message.
    assert_eq!(small["mpi"]["memory_bytes"], large["mpi"]["memory_bytes"]);
    assert!(small["mpi"]["memory_bytes"].as_u64().unwrap_or(0) > 0);
}

#[test]
fn delay_only_form_and_one_summary_from_rank_0() {
    let dir = scratch("reports-summary");
    let vars = [("HEISEN_FORM", "delay-only"), ("HEISEN_SUMMARY", "1")];
    let (run, stderr) = master_worker(&dir, 3, 30, &vars);
    assert_eq!(run["header"]["form"], "delay-only");
    for l in run["locations"].as_array().expect("locations") {
        assert_eq!(l["form"], "delay-only");
    }
    let headers = stderr
        .lines()
        .filter(|l| l.starts_with("heisen: 3 ranks"))
        .count();
    assert_eq!(headers, 1, "one summary, from rank 0:\n{stderr}");
    assert!(stderr.contains("critical path"), "{stderr}");
}

/// Runs `selection.c` in `mode` on 2 ranks with the default selection
/// (HEISEN_REGIONS unset) and a summary; the run report and stderr.
fn selection_run(dir: &Path, mode: &str) -> (Value, String) {
    selection_run_with(dir, mode, &[("HEISEN_SUMMARY", "1")])
}

fn selection_run_with(dir: &Path, mode: &str, vars: &[(&str, &str)]) -> (Value, String) {
    let exe = build("selection", dir);
    let out = dir.join(mode);
    std::fs::create_dir_all(&out).expect("output directory");
    let run = run_with(&exe, 2, Some(&library()), &out, &out, &[mode], vars);
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "selection {mode} failed: {stderr}");
    let text = std::fs::read_to_string(out.join("heisen.mpi.json")).expect("run report");
    (serde_json::from_str(&text).expect("JSON"), stderr)
}

fn selected_names(run: &Value) -> Vec<&str> {
    run["header"]["selected"]
        .as_array()
        .expect("selected")
        .iter()
        .map(|s| s["name"].as_str().expect("a name"))
        .collect()
}

/// R7 across ranks with the default selection: the node's calibration,
/// which runs on rank 0 only, enters three MPI calls before the program
/// does; every rank interns those names first, so ranks that then enter
/// the same calls select alike, and a rank that entered fewer regions
/// leaves its later slots empty. The run report names the longest
/// selection.
#[test]
fn ranks_select_alike_by_default_whichever_rank_calibrates() {
    let dir = scratch("reports-selection");
    let (run, stderr) = selection_run(&dir, "same");
    assert_eq!(
        selected_names(&run),
        [
            "MPI_Irecv",
            "MPI_Send",
            "MPI_Wait",
            "MPI_Barrier",
            "MPI_Recv"
        ],
        "{}",
        run["mpi"]
    );
    assert!(run["mpi"]["selections_differ"].is_null());
    assert!(
        stderr.contains("MPI_Recv"),
        "the profile names it: {stderr}"
    );
}

/// Ranks whose first regions differ select different regions in one slot
/// (R7): that slot's shares were mixed on the way, so the run report
/// names it `MIXED_SLOT`, keeps the names of the slots the ranks agree
/// on, lists each rank's selection, and the summary names the slot and
/// says to set `HEISEN_REGIONS`.
#[test]
fn a_run_report_names_only_the_shares_ranks_selected_alike() {
    let dir = scratch("reports-selection-order");
    let (run, stderr) = selection_run(&dir, "order");
    let per_rank = run["mpi"]["selections_differ"]
        .as_array()
        .expect("each rank's selection");
    assert_eq!(per_rank.len(), 2);
    assert_eq!(per_rank[0][3], "MPI_Recv");
    assert_eq!(per_rank[1][3], "MPI_Barrier");
    let names = selected_names(&run);
    assert_eq!(
        names[..4],
        ["MPI_Irecv", "MPI_Send", "MPI_Wait", MIXED_SLOT],
        "{}",
        run["header"]
    );
    // every other slot is named where the ranks agree, mixed where not
    for (k, name) in names.iter().enumerate() {
        let mut slot = per_rank.iter().filter_map(|s| s.get(k));
        let first = slot.next();
        let alike = slot.all(|n| Some(n) == first);
        let mixed = run["mpi"]["mixed_slots"]
            .as_array()
            .expect("the mixed slots")
            .contains(&k.into());
        assert_eq!(mixed, !alike, "slot {k}: {}", run["mpi"]);
        assert_eq!(*name == MIXED_SLOT, mixed, "slot {k}");
    }
    assert!(
        stderr.contains("share slot 3 ") && stderr.contains("set HEISEN_REGIONS"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("  {MIXED_SLOT}")), "{stderr}");
    assert!(stderr.contains("  MPI_Send "), "{stderr}");
}

/// A listed region that only some ranks enter is no mistake (rank 0
/// receives, rank 1 sends); one that no rank enters is, and rank 0 says
/// so once, for the run.
#[test]
fn a_listed_region_no_rank_entered_is_one_line_from_rank_0() {
    let dir = scratch("reports-selection-listed");
    let (run, stderr) = selection_run_with(
        &dir,
        "order",
        &[("HEISEN_REGIONS", "MPI_Recv,MPI_Send,nosuch")],
    );
    assert_eq!(selected_names(&run), ["MPI_Recv", "MPI_Send", "nosuch"]);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("heisen:"))
        .collect();
    assert_eq!(
        lines,
        ["heisen: HEISEN_REGIONS names `nosuch`, which no rank entered (check the spelling)"],
        "{stderr}"
    );
}

#[test]
fn requests_beyond_the_table_run_unmeasured_and_are_counted() {
    let dir = scratch("reports-overflow");
    let exe = build("overflow", &dir);
    let (plain, measured) = (dir.join("plain"), dir.join("measured"));
    for d in [&plain, &measured] {
        std::fs::create_dir_all(d).expect("directory");
    }
    let without = run_with(&exe, 2, None, &plain, &plain, &[], &[]);
    assert!(without.status.success());
    let with = run_with(&exe, 2, Some(&library()), &measured, &measured, &[], &[]);
    assert!(
        with.status.success(),
        "{}",
        String::from_utf8_lossy(&with.stderr)
    );
    let line = |d: &Path| std::fs::read_to_string(d.join("r0.txt")).expect("rank 0 output");
    assert_eq!(line(&plain), line(&measured));
    assert!(line(&measured).contains("bad statuses 0"));
    let text = std::fs::read_to_string(measured.join("heisen.rank0.json")).expect("report");
    let report: Value = serde_json::from_str(&text).expect("JSON");
    let requests = &report["mpi"]["requests"];
    let capacity = requests["capacity"].as_u64().expect("capacity");
    // 5000 receives: the staging pool's and the table's slots are taken
    // (a staged receive holds a slot too), the rest overflow.
    assert_eq!(requests["peak"].as_u64(), Some(capacity));
    assert_eq!(requests["overflow"].as_u64(), Some(5000 - capacity));
    // R12: counted, and said on stderr (a problem, not a summary).
    let stderr = String::from_utf8_lossy(&with.stderr);
    assert!(stderr.contains("beyond the request table"), "{stderr}");
}

#[test]
fn disabled_heisen_passes_everything_through_and_writes_nothing() {
    let dir = scratch("reports-disabled");
    let exe = build("master_worker", &dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("directory");
    let run = run_with(
        &exe,
        3,
        Some(&library()),
        &out,
        &out,
        &["40"],
        &[("HEISEN_DISABLE", "1")],
    );
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stderr), "");
    let lines = std::fs::read_to_string(out.join("r0.txt")).expect("rank 0 output");
    assert!(lines.contains("results 40"), "{lines}");
    let reports: Vec<_> = std::fs::read_dir(&out)
        .expect("directory")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("heisen."))
        .collect();
    assert!(
        reports.is_empty(),
        "reports written while disabled: {reports:?}"
    );
}
