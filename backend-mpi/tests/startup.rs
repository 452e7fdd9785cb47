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

/// Every rank's location starts when `MPI_Init` returns (R1, R5): the
/// node's first rank's calibration pause is not in its location (it was
/// charged to it as overhead while the other ranks waited outside theirs,
/// so its timeline began that much earlier than theirs and its first
/// merges with them took the pause back as waiting: the critical path
/// and its compensated time kept heisen's start-up).
#[test]
fn every_rank_begins_when_mpi_init_returns() {
    let dir = scratch("startup-begin");
    let (reports, _) = reports(&dir, 3, &[]);
    for (rank, report) in reports.iter().enumerate() {
        let location = &report["locations"][0];
        let start = location["start"].as_u64().expect("start");
        let done = report["mpi"]["startup"]["done_at"]
            .as_u64()
            .expect("done_at");
        // The location began after the start-up's calibration, share and
        // alignment were done (`done_at` is read after the alignment,
        // before the restart; without the restart the location began on
        // the first wrapper's entry, before PMPI_Init).
        assert!(
            done > 0 && start >= done,
            "rank {rank}: location start {start} before the start-up was done at {done}"
        );
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

/// One machine run as two nodes (`HEISEN_NODE`, interleaved in world
/// order: ranks 0 and 2 on `a`, 1 and 3 on `b`): each node's first rank
/// calibrates for its node and the other takes its costs; each node
/// installs its own TSC conversion (or keeps the monotonic clock), so the
/// ranks do not share one clock and every rank applies an offset, the
/// node's leader's (R5, alignment across nodes). The rest of heisen's
/// MPI tests run on one node; this is the set-up of several.
#[test]
fn two_nodes_on_one_machine_calibrate_and_align_apart() {
    let dir = scratch("startup-two-nodes");
    let exe = build("startup", &dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("output directory");
    let run = common::run_on_nodes(&exe, &["a", "b", "a", "b"], Some(&library()), &out, &out);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "startup failed: {stderr}");
    assert!(stderr.is_empty(), "nothing on stderr: {stderr}");
    let reports: Vec<Value> = (0..4)
        .map(|r| {
            let text = std::fs::read_to_string(out.join(format!("heisen.rank{r}.json")))
                .expect("rank report");
            serde_json::from_str(&text).expect("rank report is JSON")
        })
        .collect();
    let calibration = |r: usize| reports[r]["mpi"]["startup"]["calibration"].clone();
    for first in [0, 1] {
        let own = calibration(first);
        assert_eq!(own["how"], "per-process", "rank {first}: {own}");
        assert_eq!(
            own["reason"],
            Value::Null,
            "rank {first} calibrated for its node"
        );
        assert_eq!(own["shared_with"], 2, "rank {first}: {own}");
        let other = first + 2;
        let from = calibration(other);
        assert_eq!(from["how"], "node", "rank {other}: {from}");
        assert_eq!(from["source_rank"], first, "rank {other}: {from}");
        assert_eq!(from["node_ranks"], 2, "rank {other}: {from}");
        assert_eq!(
            costs(&reports[other]),
            costs(&reports[first]),
            "rank {other} charges rank {first}'s costs"
        );
    }
    let clock = |r: usize| reports[r]["mpi"]["clock"].clone();
    for r in 0..4 {
        let c = clock(r);
        assert_eq!(c["aligned"], Value::Bool(true), "rank {r}: {c}");
        assert_eq!(c["one_node"], Value::Bool(false), "rank {r}: {c}");
        assert_eq!(c["node_ranks"], 2, "rank {r}: {c}");
        assert_eq!(c["one_clock"], Value::Bool(false), "rank {r}: {c}");
        assert_eq!(c["offset_applied"], Value::Bool(true), "rank {r}: {c}");
        assert!(c["error_ns"].as_u64().is_some(), "rank {r}: {c}");
    }
    assert_eq!(clock(0)["offset_init_ns"].as_i64(), Some(0));
    // a node keeps one clock: its second rank takes its leader's offset,
    // at MPI_Init and again at MPI_Finalize
    for (member, leader) in [(2, 0), (3, 1)] {
        for key in ["offset_init_ns", "offset_final_ns", "rtt_init_ns"] {
            assert_eq!(clock(member)[key], clock(leader)[key], "{key}");
        }
    }
}
