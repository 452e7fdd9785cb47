//! Programs of the kind an unseen MPI test suite holds (MPICH's
//! `test/mpi/pt2pt` style, written here from scratch): issue 10 says the
//! interposer will run programs nobody showed it, and anything a correct
//! MPI program may do must keep working. Each program in
//! `tests/c/unseen_*.c` runs under `mpiexec -n N` with and without
//! `LD_PRELOAD=libheisen_mpi.so`; per-rank output, standard output and the
//! exit code must be the same, and heisen must print nothing on stderr.

mod common;

use std::path::Path;

use common::{build, library, run, scratch};

/// Every rank's lines, rank after rank.
fn by_rank(lines: &Path, ranks: u32) -> Vec<String> {
    (0..ranks)
        .flat_map(|r| {
            let text = std::fs::read_to_string(lines.join(format!("r{r}.txt"))).unwrap_or_default();
            text.lines().map(str::to_owned).collect::<Vec<_>>()
        })
        .collect()
}

/// Runs `name` both ways on `ranks` ranks and compares everything the
/// program shows: its per-rank lines, its standard output, its exit code,
/// and (with heisen) an empty stderr when the plain run's is empty.
fn same_both_ways(name: &str, ranks: u32) -> Vec<String> {
    let (lines, plain) = compare(name, ranks);
    assert!(
        plain.status.success(),
        "{name} without heisen failed: {}",
        String::from_utf8_lossy(&plain.stderr)
    );
    lines
}

/// [`same_both_ways`] without requiring success: the lines of the plain
/// run and its whole output.
fn compare(name: &str, ranks: u32) -> (Vec<String>, std::process::Output) {
    let dir = scratch(&format!("unseen-{name}-{ranks}"));
    let exe = build(name, &dir);
    let (plain_lines, measured_lines, reports) =
        (dir.join("plain"), dir.join("measured"), dir.join("reports"));
    for d in [&plain_lines, &measured_lines, &reports] {
        std::fs::create_dir_all(d).expect("scratch directory");
    }
    let plain = run(&exe, ranks, None, &plain_lines, &dir);
    let measured = run(&exe, ranks, Some(&library()), &measured_lines, &reports);
    assert_eq!(
        measured.status.code(),
        plain.status.code(),
        "{name} on {ranks} ranks: exit codes differ; with heisen: {}",
        String::from_utf8_lossy(&measured.stderr)
    );
    // Nothing on stderr but what MPICH itself prints; its MPI_Abort line
    // races with mpiexec killing the ranks, so it may be in one run only.
    let theirs = String::from_utf8_lossy(&plain.stderr).into_owned();
    for line in String::from_utf8_lossy(&measured.stderr).lines() {
        assert!(
            theirs.contains(line) || line.starts_with("Abort("),
            "{name} on {ranks} ranks: heisen printed on stderr: {line}"
        );
    }
    assert_eq!(
        String::from_utf8_lossy(&measured.stdout),
        String::from_utf8_lossy(&plain.stdout),
        "{name} on {ranks} ranks: standard output differs"
    );
    let (a, b) = (
        by_rank(&plain_lines, ranks),
        by_rank(&measured_lines, ranks),
    );
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "{name} on {ranks} ranks: first difference");
    }
    assert_eq!(
        a.len(),
        b.len(),
        "{name} on {ranks} ranks: line counts differ"
    );
    (a, plain)
}

#[test]
fn point_to_point_edges_on_2_3_and_4_ranks() {
    for ranks in [2, 3, 4] {
        let lines = same_both_ways("unseen_p2p", ranks);
        // every size from 0 B to 1 MiB arrived whole, both ways
        let sizes = lines.iter().filter(|l| l.starts_with("r0 size ")).count();
        assert_eq!(sizes, 59, "sizes exchanged on {ranks} ranks");
        assert!(lines.iter().any(|l| l.contains(" inter got=")));
    }
}

#[test]
fn derived_types_with_holes_negative_bounds_and_pending_frees_on_2_and_3_ranks() {
    for ranks in [2, 3] {
        let lines = same_both_ways("unseen_types", ranks);
        assert!(lines.iter().any(|l| l == "r1 pending-free rc=0"));
    }
}

/// MPICH's `datatype/hindexed_zeros`: a type of size 0 with a null buffer
/// failed with heisen ("Null buffer pointer") and passed plain.
#[test]
fn a_type_of_size_zero_with_a_null_buffer_on_2_and_3_ranks() {
    for ranks in [2, 3] {
        let lines = same_both_ways("unseen_zeros", ranks);
        assert!(lines.iter().any(|l| l == "r0 self irecv rc=0"), "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("r1 irecv wait rc=0 ") && l.ends_with("count=0 elements=0")),
            "{lines:?}"
        );
    }
}

#[test]
fn null_arrays_cancels_persistent_restarts_and_startall_on_2_and_3_ranks() {
    for ranks in [2, 3] {
        let lines = same_both_ways("unseen_requests", ranks);
        assert!(
            lines
                .iter()
                .any(|l| l == "r0 waitany null rc=0 idx=-32766 undefined=1 source=-2 tag=-1")
        );
        assert!(lines.iter().any(|l| l == "r1 persistent freed=1"));
    }
}

#[test]
fn errors_returned_with_the_same_class_on_2_and_3_ranks() {
    for ranks in [2, 3] {
        let lines = same_both_ways("unseen_errors", ranks);
        // the classes themselves (MPI 4.0 §9.4): rank 6, tag 4, truncate 14,
        // in status 17; the pending request completes afterwards
        assert!(lines.iter().any(|l| l == "r0 send bad rank class=6"));
        assert!(
            lines
                .iter()
                .any(|l| l == "r1 trunc class=14 source=0 tag=5")
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("r1 trunc waitall class=17 e0=14"))
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("r1 trunc waitall second rc=0 count=2 data=1 2"))
        );
    }
}

#[test]
fn a_silent_program_stays_silent_on_2_and_4_ranks() {
    for ranks in [2, 4] {
        let (lines, plain) = compare("unseen_silent", ranks);
        assert!(
            plain.status.success(),
            "unseen_silent failed on {ranks} ranks"
        );
        assert!(lines.is_empty() && plain.stdout.is_empty() && plain.stderr.is_empty());
    }
}

#[test]
fn abort_exit_code_is_kept_on_2_and_3_ranks() {
    for ranks in [2, 3] {
        let (lines, plain) = compare("unseen_abort", ranks);
        assert_eq!(
            plain.status.code(),
            Some(42),
            "MPI_Abort's code on {ranks} ranks"
        );
        assert_eq!(lines.len(), ranks as usize);
    }
}

#[test]
fn finalize_from_another_thread_under_thread_multiple_on_2_and_4_ranks() {
    for ranks in [2, 4] {
        let lines = same_both_ways("unseen_thread_finalize", ranks);
        assert!(lines.iter().any(|l| l == "r0 finalized 1"));
        assert!(lines.iter().any(|l| l == "r1 thread 1 got 19 tag=1"));
    }
}

#[test]
fn mixed_request_kinds_bottom_subarray_exact_ibsend_and_persistent_cancel_on_2_and_3_ranks() {
    for ranks in [2, 3] {
        // includes a persistent receive cancelled while active: posted with
        // a struct type, MPICH printed "yaksa: leaked handle pool objects"
        // on stderr at MPI_Finalize (the compare above fails on it)
        let lines = same_both_ways("unseen_more", ranks);
        assert!(
            lines
                .iter()
                .any(|l| l == "r0 persistent cancel cancelled=1 inactive-kept=1")
        );
        assert!(
            lines
                .iter()
                .any(|l| l == "r1 ibsend exact rc=0 0 got 4 1499.5")
        );
        assert!(lines.iter().any(|l| l.starts_with("r0 grequest source=")));
    }
}

#[test]
fn truncated_large_messages_zero_size_types_ignored_probe_statuses_and_threaded_wildcards() {
    for ranks in [2, 3] {
        let lines = same_both_ways("unseen_edges2", ranks);
        assert!(
            lines
                .iter()
                .any(|l| l == "r1 big into small class=14 source=0 tag=1")
        );
        assert!(
            lines
                .iter()
                .any(|l| l == "r1 big into small nonblocking class=14")
        );
        assert!(lines.iter().any(|l| l == "r1 uneven sum=3"));
        // 200 sends of k with tag k % 3, both threads' receives together
        assert!(lines.iter().any(|l| l == "r1 threads total=20099"));
    }
}

#[test]
fn a_message_of_more_than_2_gib_is_counted_as_the_program_sent_it() {
    let lines = same_both_ways("unseen_huge", 2);
    assert!(
        lines
            .iter()
            .any(|l| l == "r1 huge rc=0 source=0 tag=7 count=270000000 elements=270000000"),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l == "r1 huge bytes=2160000000"));
    assert!(lines.iter().any(|l| l == "r1 huge data whole"));
}

/// Windows of nonblocking sends as the OSU bandwidth tests post them: every
/// rank's request table stays small (MPICH's completed-at-once sends share
/// one handle; their entries are let go of when the handle comes again)
/// and nothing runs unmeasured or is printed.
#[test]
fn windows_of_sends_completed_at_once_keep_the_request_table_small() {
    for ranks in [2, 3] {
        let lines = same_both_ways("unseen_windows", ranks);
        assert_eq!(lines.len(), ranks as usize, "{lines:?}");
        // compare()'s scratch directory, not cleared by asking its path.
        let dir = std::env::temp_dir()
            .join(format!(
                "heisen-mpi-{}-unseen-unseen_windows-{ranks}",
                std::process::id()
            ))
            .join("reports");
        for rank in 0..ranks {
            let path = dir.join(format!("heisen.rank{rank}.json"));
            let text = std::fs::read_to_string(&path).expect("rank report");
            let report: serde_json::Value = serde_json::from_str(&text).expect("json");
            let t = &report["mpi"]["requests"];
            assert_eq!(t["overflow"], 0, "rank {rank} of {ranks}: {t}");
            assert_eq!(t["lost"], 0, "rank {rank} of {ranks}: {t}");
            let peak = t["peak"].as_u64().expect("peak");
            assert!(peak <= 2 * 64 + 8, "rank {rank} of {ranks}: {t}");
        }
    }
}
