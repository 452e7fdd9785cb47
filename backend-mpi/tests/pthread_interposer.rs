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

/// Five threads in `exit` at once (`heisen_shmem::exit`) leave a whole
/// report every time: under both interposers, each defining `exit`, with
/// no MPI call (each thread passes through both `exit`s before libc's;
/// the MPI interposer's, which has not met the runtime, goes straight on
/// and the thread interposer's waits), and under the MPI
/// interposer alone with MPI initialised and never finalised (without its
/// `exit`, 2 reports in 6 were empty).
#[test]
fn threads_calling_exit_at_once_leave_a_whole_report() {
    let dir = scratch("exit-together");
    let exe = build("exit_together", &dir);
    let both = format!("{} {}", library().display(), pthread_interposer().display());
    let mpi_only = library().display().to_string();
    for round in 0..10 {
        let out = dir.join(format!("out{round}"));
        std::fs::create_dir_all(&out).expect("directory");
        // The MPI interposer alone sees only the thread that made MPI calls.
        let (preload, args, threads): (&str, &[&str], u64) = if round % 2 == 0 {
            (&both, &[], 5)
        } else {
            (&mpi_only, &["mpi"], 1)
        };
        let o = Command::new(&exe)
            .args(args)
            .env("LD_PRELOAD", preload)
            .env("HEISEN_OUTPUT", &out)
            .output()
            .expect("runs");
        assert_eq!(o.status.code(), Some(5), "{o:?}");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "five threads exit at once\n"
        );
        assert!(
            o.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let reports: Vec<PathBuf> = std::fs::read_dir(&out)
            .expect("reports")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        assert_eq!(reports.len(), 1, "round {round}: {reports:?}");
        let text = std::fs::read_to_string(&reports[0]).expect("report");
        let report: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("round {round}: {e}: {text:?}"));
        // The four threads that waited in `exit` are running at exit, or
        // reported as they were between two of their calls.
        let locations = report["locations"].as_array().expect("locations").len() as u64;
        let running = report["runtime"]["running_at_exit"]
            .as_u64()
            .expect("running_at_exit");
        assert_eq!(locations + running, threads, "{}", report["runtime"]);
    }
}
