//! An MPI program with threads under the pthread interposer
//! (`LD_PRELOAD=libheisen_pthread.so`), not the MPI one. MPICH over UCX
//! hooks `sbrk` and `mmap` and takes a pthread lock in its hook, so the
//! interposer's wrappers run inside glibc's `malloc`; one that registered
//! the thread there allocated inside `malloc` and corrupted the heap
//! (every run: a garbage region stack, `free(): invalid size`). Fixed in
//! the interposer's constructor (heisen-pthread `lib.rs`, `CONSTRUCTING`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{build, library, run, scratch};

/// The pthread interposer, built into this test's target directory (not a
/// dependency: backends do not depend on each other).
fn pthread_interposer() -> PathBuf {
    let deps = library().parent().expect("deps").to_path_buf();
    let profile = deps.parent().expect("profile directory").to_path_buf();
    let target = profile.parent().expect("target directory");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-q", "-p", "heisen-pthread"])
        .env("CARGO_TARGET_DIR", target)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    match profile.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => {}
        Some("release") => {
            cmd.arg("--release");
        }
        Some(other) => {
            cmd.args(["--profile", other]);
        }
    }
    let status = cmd.status().expect("cargo runs");
    assert!(status.success(), "cargo build -p heisen-pthread");
    let lib = profile.join("libheisen_pthread.so");
    assert!(lib.exists(), "{} not built", lib.display());
    lib
}

#[test]
fn an_mpi_program_with_threads_runs_unchanged_under_the_pthread_interposer() {
    let dir = scratch("pthread-interposer");
    let exe = build("pthread_interposed", &dir);
    let preload = pthread_interposer();
    for round in 0..3 {
        let (plain, measured) = (
            dir.join(format!("plain{round}")),
            dir.join(format!("with{round}")),
        );
        for d in [&plain, &measured] {
            std::fs::create_dir_all(d).expect("directory");
        }
        let p = run(&exe, 2, None, &plain, &plain);
        let w = run(&exe, 2, Some(&preload), &measured, &measured);
        assert!(p.status.success(), "{p:?}");
        assert!(w.status.success(), "round {round}: {w:?}");
        assert!(
            w.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&w.stderr)
        );
        let sorted = |o: &std::process::Output| {
            let mut lines: Vec<String> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::to_owned)
                .collect();
            lines.sort();
            lines
        };
        assert_eq!(sorted(&p), sorted(&w));
        assert_eq!(
            sorted(&w),
            ["rank 0 counter 40 total 80", "rank 1 counter 40 total 80"]
        );
        // One report per rank process, both threads in it.
        let reports: Vec<_> = std::fs::read_dir(&measured)
            .expect("reports")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        assert_eq!(reports.len(), 2, "{reports:?}");
        for path in reports {
            let text = std::fs::read_to_string(&path).expect("report");
            let report: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            let locations = report["locations"].as_array().expect("locations");
            // main and the worker (and UCX's own thread, when it made one)
            assert!(locations.len() >= 2, "{}", path.display());
        }
    }
}
