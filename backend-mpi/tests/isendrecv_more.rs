//! `MPI_Isendrecv` and `MPI_Isendrecv_replace` in numbers
//! (`tests/c/isendrecv_more.c`, 2 ranks): more exchanges pending than the
//! interposer's table holds (R12: counted, run unmeasured, data and
//! statuses unchanged), a thousand `_replace` exchanges freed while
//! pending (their packed copies let go of once their sends complete), and
//! four threads a rank under `MPI_THREAD_MULTIPLE`.

mod common;

use std::path::Path;

use common::{build, library, run_with, scratch};
use serde_json::Value;

/// The capacity of the interposer's exchange table (`isendrecv::CAPACITY`).
const CAPACITY: u64 = 256;

/// The note each rank of the overflow section leaves on stderr.
const NOTE: &str = "88 MPI_Isendrecv exchanges beyond the exchange table of 256 ran unmeasured";

/// Each rank's lines, rank after rank.
fn by_rank(lines: &Path) -> Vec<String> {
    (0..2)
        .flat_map(|r| {
            let text = std::fs::read_to_string(lines.join(format!("r{r}.txt"))).unwrap_or_default();
            text.lines().map(str::to_owned).collect::<Vec<_>>()
        })
        .collect()
}

/// Runs `section` on 2 ranks with heisen (checked to exit 0 with nothing
/// on stderr but heisen's note of an overflow) and, when `plain`,
/// without: the lines of each run, the ranks' `mpi` report objects and
/// the measured run's stderr.
fn runs(section: &str, plain: bool) -> (Vec<String>, Vec<String>, Vec<Value>, String) {
    let dir = scratch(&format!("isendrecv-more-{section}"));
    let exe = build("isendrecv_more", &dir);
    let (plain_lines, measured_lines, reports) =
        (dir.join("plain"), dir.join("measured"), dir.join("reports"));
    for d in [&plain_lines, &measured_lines, &reports] {
        std::fs::create_dir_all(d).expect("scratch directory");
    }
    let measured = run_with(
        &exe,
        2,
        Some(&library()),
        &measured_lines,
        &reports,
        &[section],
        &[],
    );
    // nothing on stderr but, beyond the table, heisen's note of it (R12;
    // the ranks' notes may interleave at their writes)
    let stderr = String::from_utf8_lossy(&measured.stderr);
    let rest = stderr.replace("heisen: ", "").replace(NOTE, "");
    assert!(
        measured.status.success() && rest.trim().is_empty(),
        "isendrecv_more {section} with heisen: {stderr}"
    );
    if plain {
        let run = run_with(&exe, 2, None, &plain_lines, &dir, &[section], &[]);
        assert!(run.status.success(), "isendrecv_more {section} plain");
    }
    let tables = (0..2)
        .map(|r| {
            let path = reports.join(format!("heisen.rank{r}.json"));
            let text = std::fs::read_to_string(&path).expect("rank report");
            let report: Value = serde_json::from_str(&text).expect("rank report is JSON");
            report["mpi"].clone()
        })
        .collect();
    (
        by_rank(&measured_lines),
        by_rank(&plain_lines),
        tables,
        stderr.into_owned(),
    )
}

#[test]
fn more_pending_exchanges_than_the_table_holds_run_unmeasured_with_the_same_data() {
    let (lines, plain, tables, stderr) = runs("overflow", true);
    // each rank notes its 88 (R12)
    assert_eq!(stderr.matches("heisen: ").count(), 2, "{stderr}");
    assert_eq!(stderr.matches(NOTE).count(), 2, "{stderr}");
    for rank in 0..2 {
        for line in [
            format!("r{rank} isendrecv posted=300 waitall rc=0 data=300 statuses=300 nulls=300"),
            format!("r{rank} replace posted=300 data=300 statuses=300"),
        ] {
            assert!(lines.contains(&line), "{line} not in {lines:?}");
        }
    }
    // MPICH 4.0.2's own MPI_Isendrecv leaves statuses empty: only the
    // payloads are compared with the plain run.
    let data = |l: &[String]| -> Vec<String> {
        l.iter()
            .map(|l| l.split(" statuses=").next().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(data(&lines), data(&plain));
    for (rank, mpi) in tables.iter().enumerate() {
        let t = &mpi["isendrecv"];
        assert_eq!(t["capacity"].as_u64(), Some(CAPACITY), "rank {rank}: {t}");
        assert_eq!(t["peak"].as_u64(), Some(CAPACITY), "rank {rank}: {t}");
        // 300 posted before any completion, twice: 44 beyond, twice
        assert_eq!(
            t["overflow"].as_u64(),
            Some(2 * (300 - CAPACITY)),
            "rank {rank}: {t}"
        );
        assert_eq!(t["lost"].as_u64(), Some(0), "rank {rank}: {t}");
    }
}

#[test]
fn freed_replace_exchanges_let_go_of_their_packed_copies() {
    let (lines, _, tables, stderr) = runs("freed", false);
    assert!(stderr.is_empty(), "{stderr}");
    assert!(
        lines.contains(&"r1 received 1000 right=1000 statuses=1000".to_owned()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"r0 freed 1000 last=1000".to_owned()),
        "{lines:?}"
    );
    let t = &tables[0]["isendrecv"];
    // every copy let go of by the end (the sends all completed), none
    // beyond the kept list, and never more kept at once than it holds
    assert_eq!(t["kept"].as_u64(), Some(0), "{t}");
    assert_eq!(t["lost"].as_u64(), Some(0), "{t}");
    let most = t["kept_peak"].as_u64().expect("kept_peak");
    assert!(
        most < t["kept_capacity"].as_u64().expect("kept_capacity"),
        "{t}"
    );
    assert_eq!(t["overflow"].as_u64(), Some(0), "{t}");
    // and the freed receives' record slots came back too: none lost
    let requests = &tables[0]["requests"];
    assert_eq!(requests["lost"].as_u64(), Some(0), "{requests}");
    assert_eq!(requests["overflow"].as_u64(), Some(0), "{requests}");
}

#[test]
fn four_threads_a_rank_exchange_with_isendrecv_and_replace() {
    let (lines, _, tables, stderr) = runs("threads", false);
    assert!(stderr.is_empty(), "{stderr}");
    for rank in 0..2 {
        let line = format!("r{rank} provided multiple=1");
        assert!(lines.contains(&line), "{line} not in {lines:?}");
        for t in 0..4 {
            let line = format!(
                "r{rank} thread {t} isendrecv data=200 statuses=200 replace data=200 statuses=200"
            );
            assert!(lines.contains(&line), "{line} not in {lines:?}");
        }
    }
    for mpi in &tables {
        let t = &mpi["isendrecv"];
        // at most one exchange a thread pending at once: never beyond
        assert_eq!(t["overflow"].as_u64(), Some(0), "{t}");
        assert!(
            t["peak"].as_u64().is_some_and(|p| (1..=4).contains(&p)),
            "{t}"
        );
    }
}
