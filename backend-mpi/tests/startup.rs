//! Set-up at `MPI_Init` (R1): by default the node's first rank
//! calibrates and every rank of the node charges the same costs, and its
//! report says where they came from; `HEISEN_MPI_CALIBRATION=per-process`
//! calibrates each process on its own. All ranks of these runs share one
//! node.

mod common;

use std::path::Path;

use common::{build, library, run_with, scratch};
use serde_json::Value;

/// Runs `tests/c/startup.c` on `ranks` ranks under heisen with `vars`;
/// every rank's report, and the run's standard error.
fn reports(dir: &Path, ranks: u32, vars: &[(&str, &str)]) -> (Vec<Value>, String) {
    let exe = build("startup", dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("output directory");
    let run = run_with(&exe, ranks, Some(&library()), &out, &out, &[], vars);
    assert!(
        run.status.success(),
        "startup failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let reports = (0..ranks)
        .map(|r| {
            let text = std::fs::read_to_string(out.join(format!("heisen.rank{r}.json")))
                .expect("rank report");
            serde_json::from_str(&text).expect("rank report is JSON")
        })
        .collect();
    (reports, String::from_utf8_lossy(&run.stderr).into_owned())
}

/// What a rank charges: its header's calibration and every action's
/// cost, and how its region paths were calibrated.
fn costs(report: &Value) -> (Value, Value, Value) {
    (
        report["header"]["calibration"].clone(),
        report["header"]["actions"].clone(),
        report["runtime"]["calibration"].clone(),
    )
}

#[test]
fn every_rank_of_the_node_charges_the_first_ranks_costs() {
    let dir = scratch("startup-node");
    let (reports, stderr) = reports(&dir, 4, &[]);
    assert!(stderr.is_empty(), "nothing on stderr: {stderr}");
    let first = costs(&reports[0]);
    let actions = first.1.as_array().expect("actions");
    for name in ["mpi_send", "mpi_recv", "mpi_collective", "release", "merge"] {
        assert!(
            actions.iter().any(|a| a["action"] == name),
            "rank 0 calibrated {name}: {actions:?}"
        );
    }
    let own = &reports[0]["mpi"]["startup"]["calibration"];
    assert_eq!(own["how"], "per-process");
    assert_eq!(own["reason"], Value::Null, "rank 0 calibrated for its node");
    assert_eq!(own["shared_with"], 4, "{own}");
    for (rank, report) in reports.iter().enumerate().skip(1) {
        let from = &report["mpi"]["startup"]["calibration"];
        assert_eq!(from["how"], "node", "rank {rank}: {from}");
        assert_eq!(from["source_rank"], 0, "rank {rank}: {from}");
        assert_eq!(from["node_ranks"], 4, "rank {rank}: {from}");
        assert_eq!(costs(report), first, "rank {rank} charges rank 0's costs");
    }
}

#[test]
fn per_process_calibration_is_kept_on_request() {
    let dir = scratch("startup-per-process");
    let (reports, _) = reports(&dir, 3, &[("HEISEN_MPI_CALIBRATION", "per-process")]);
    assert_eq!(
        reports[0]["mpi"]["startup"]["calibration"]["shared_with"], 1,
        "no rank took rank 0's costs"
    );
    for (rank, report) in reports.iter().enumerate().skip(1) {
        let own = &report["mpi"]["startup"]["calibration"];
        assert_eq!(own["how"], "per-process", "rank {rank}: {own}");
        assert_eq!(own["reason"], "HEISEN_MPI_CALIBRATION=per-process");
        // calibrated here: its own interposer actions are in its header
        let actions = report["header"]["actions"].as_array().expect("actions");
        assert!(actions.iter().any(|a| a["action"] == "mpi_send"));
    }
}

#[test]
fn an_unknown_calibration_mode_is_told_and_the_node_calibrates() {
    let dir = scratch("startup-unknown");
    let (reports, stderr) = reports(&dir, 2, &[("HEISEN_MPI_CALIBRATION", "each")]);
    assert_eq!(reports[1]["mpi"]["startup"]["calibration"]["how"], "node");
    // problems go to stderr, once per rank
    assert_eq!(
        stderr.matches("HEISEN_MPI_CALIBRATION=each").count(),
        2,
        "{stderr}"
    );
}
