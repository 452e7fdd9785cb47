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
    if plain.stderr.is_empty() {
        assert_eq!(
            String::from_utf8_lossy(&measured.stderr),
            "",
            "{name} on {ranks} ranks: heisen printed on stderr"
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
    assert!(
        plain.status.success(),
        "{name} without heisen failed: {}",
        String::from_utf8_lossy(&plain.stderr)
    );
    a
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
