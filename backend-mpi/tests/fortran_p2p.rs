//! Fortran programs under the interposer (issue 10 item 6): MPICH's
//! `use mpi` and `use mpi_f08` bindings, built with `mpif90`, print the
//! same with and without it, and both leave every rank's report and the
//! run report (`use mpi_f08` reaches `MPI_Finalize` only through
//! heisen's wrapper of `mpi_finalize_f08_`).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{library, require, run, scratch};

fn build_fortran(name: &str, dir: &Path) -> PathBuf {
    require("mpif90");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/f/{name}.f90"));
    let exe = dir.join(name);
    let out = Command::new("mpif90")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .current_dir(dir)
        .output()
        .expect("mpif90 runs");
    assert!(
        out.status.success(),
        "mpif90 {}: {}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Builds `name` and runs it on 2 ranks without and with the interposer:
/// the two outputs and the directory of the reports.
fn run_both(name: &str) -> (Output, Output, PathBuf) {
    let dir = scratch(name);
    let exe = build_fortran(name, &dir);
    let plain = run(&exe, 2, None, &dir, &dir);
    assert!(plain.status.success());
    let reports = dir.join("reports");
    std::fs::create_dir_all(&reports).expect("directory");
    let measured = run(&exe, 2, Some(&library()), &reports, &reports);
    (plain, measured, reports)
}

fn same_with_and_without(name: &str) {
    let (plain, measured, reports) = run_both(name);
    assert!(measured.status.success());
    assert_eq!(String::from_utf8_lossy(&measured.stderr), "");
    assert_eq!(
        String::from_utf8_lossy(&plain.stdout),
        String::from_utf8_lossy(&measured.stdout)
    );
    assert!(String::from_utf8_lossy(&plain.stdout).contains("count           3 tag           7"));
    for f in ["heisen.rank0.json", "heisen.rank1.json", "heisen.mpi.json"] {
        assert!(reports.join(f).exists(), "{name}: no {f}");
    }
}

#[test]
fn fortran_use_mpi_is_intercepted() {
    same_with_and_without("p2p_mpi");
}

#[test]
fn fortran_use_mpi_f08_is_intercepted_and_reported() {
    same_with_and_without("p2p_f08");
}

#[test]
fn fortran_use_mpi_f08_nonblocking_receives_get_their_data() {
    // MPICH's mpi_f08 Waitall/Wait call PMPI_* directly: a receive heisen
    // staged would never be copied out (found by the collectives work).
    let (plain, measured, _) = run_both("coll_f08_nonblocking");
    let out = String::from_utf8_lossy(&measured.stdout);
    assert!(measured.status.success(), "{out}");
    assert_eq!(String::from_utf8_lossy(&measured.stderr), "");
    assert_eq!(String::from_utf8_lossy(&plain.stdout), out);
    assert!(
        out.contains("mpi_f08 nonblocking: ranks 2 failed 0"),
        "{out}"
    );
}

#[test]
fn fortran_use_mpi_f08_procedures_that_call_pmpi_go_through_heisen() {
    // MPICH 4.0's mpi_f08 completions, probes, persistent starts,
    // Type_free, communicator constructors, barriers and Init_thread call
    // PMPI_* directly. Unwrapped, a Wait's status counted the record's
    // bytes (63 integers for 3) and the completions were never merged.
    let (plain, measured, reports) = run_both("f08_pmpi_paths");
    let out = String::from_utf8_lossy(&measured.stdout);
    assert!(measured.status.success(), "{out}");
    assert_eq!(String::from_utf8_lossy(&measured.stderr), "");
    assert_eq!(String::from_utf8_lossy(&plain.stdout), out);
    assert!(out.contains("mpi_f08 PMPI paths: failed 0"), "{out}");
    for rank in 0..2 {
        let path = reports.join(format!("heisen.rank{rank}.json"));
        let text = std::fs::read_to_string(&path).expect("report");
        let report: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let regions: Vec<&str> = report["regions"]
            .as_array()
            .expect("regions")
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        for call in [
            "MPI_Wait",
            "MPI_Waitall",
            "MPI_Waitany",
            "MPI_Waitsome",
            "MPI_Test",
            "MPI_Testall",
            "MPI_Testany",
            "MPI_Testsome",
            "MPI_Barrier",
            "MPI_Ibarrier",
            "MPI_Barrier_init",
            "MPI_Allreduce_init",
            "MPI_Comm_dup",
            "MPI_Intercomm_merge",
        ] {
            assert!(
                regions.contains(&call),
                "rank {rank}: no {call} in {regions:?}"
            );
        }
        let mpi = &report["mpi"];
        // MPI_Init_thread was seen: the clocks were aligned (R5)
        assert_eq!(mpi["clock"]["aligned"], true, "rank {rank}");
        assert_eq!(mpi["requests"]["overflow"], 0);
        assert_eq!(mpi["requests"]["unfixed"], 0);
        // the persistent barrier and allreduce, 3 starts each, each
        // completed through heisen (MPI_Barrier_init's f08 binding calls
        // PMPI_Barrier_init)
        let persistent = &mpi["collectives"]["persistent"];
        assert_eq!(persistent["tracked"], 2, "rank {rank}: {persistent}");
        assert_eq!(persistent["starts"], 6, "rank {rank}: {persistent}");
        assert_eq!(persistent["completions"], 6, "rank {rank}: {persistent}");
        assert_eq!(persistent["open"], 0, "rank {rank}: {persistent}");
    }
}

#[test]
fn fortran_2008_buffer_detach_gives_back_the_programs_buffer() {
    let dir = common::scratch("f08_detach");
    let exe = common::build("f08_detach", &dir);
    let plain = run(&exe, 2, None, &dir, &dir);
    let measured = run(&exe, 2, Some(&library()), &dir, &dir);
    for out in [&plain, &measured] {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert_eq!(text, "f08 detach: failed 0\n");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    }
}
