//! Real-run fidelity of the interposer (README "Threads"): builds
//! `examples/fidelity.c` with `cc`, runs it alternately without and with
//! `LD_PRELOAD=libheisen_pthread.so`, and prints per thread the medians
//! of the uninstrumented wall time, the instrumented wall time, heisen's
//! compensated elapsed time and the local-only estimate (instrumented
//! wall time minus the thread's own overhead); then per worker the
//! medians of its thread CPU time uninstrumented, instrumented, and
//! instrumented less the overhead heisen charged (R1): how well the
//! charged costs match what the calls cost the program, waits aside.
//!
//! `cargo run --release -p heisen-pthread --example c_fidelity [runs] [workers]`
//! (needs `cc`; the cdylib is found in `target/<profile>/deps/`). Every
//! `HEISEN_*` variable is removed from the program's environment but
//! `HEISEN_CALIBRATION` and `HEISEN_CALIBRATION_TRACE`, so that
//! calibrations can be compared (`HEISEN_CALIBRATION=back-to-back`; the
//! header names the one in use) and traced (the program's stderr is
//! passed on).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let workers: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let exe = std::env::current_exe().expect("example path");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("<target>/<profile>/examples");
    // The cdylib cargo built with this example (`deps/`; the copy in the
    // profile directory is refreshed only by `cargo build`).
    let lib = profile.join("deps/libheisen_pthread.so");
    assert!(lib.exists(), "build the cdylib first: {}", lib.display());
    let work = profile.join("fidelity-c");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("work directory");
    let program = work.join("fidelity");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fidelity.c");
    let built = Command::new("cc")
        .args(["-O2", "-pthread", "-Wall", "-o"])
        .arg(&program)
        .arg(&source)
        .status()
        .expect("run cc");
    assert!(built.success(), "cc {}", source.display());
    let mut plain: Vec<Vec<ThreadLine>> = vec![Vec::new(); workers + 1];
    let mut heisen: Vec<Vec<Compensated>> = vec![Vec::new(); workers + 1];
    for run in 0..=runs {
        let plain_run = execute(&program, None, workers);
        let out = work.join(format!("run{run}"));
        std::fs::create_dir_all(&out).expect("run directory");
        let heisen_run = execute(&program, Some((&lib, &out)), workers);
        if run == 0 {
            continue; // warm-up, not counted
        }
        let report = report(&out);
        for (i, (p, h)) in plain_run.iter().zip(&heisen_run).enumerate() {
            plain[i].push(*p);
            let l = report["locations"]
                .as_array()
                .expect("locations")
                .iter()
                .find(|l| l["location"].as_i64() == Some(h.location))
                .expect("the thread's location");
            let n = |k: &str| l[k].as_f64().expect("a number");
            let overhead = n("overhead");
            heisen[i].push(Compensated {
                wall: h.wall,
                compensated: n("approximated_end") - n("approximated_start"),
                local_only: h.wall - overhead,
                cpu: h.cpu,
                cpu_less_charged: h.cpu - overhead,
            });
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let calibration = std::env::var("HEISEN_CALIBRATION").unwrap_or_else(|_| "default".into());
    println!(
        "fidelity (C, LD_PRELOAD): {workers} workers, {runs} alternating runs, calibration {calibration}, medians in ms; error against uninstrumented"
    );
    println!(
        "{:<10} {:>14} {:>22} {:>22} {:>22}",
        "thread", "uninstrumented", "instrumented", "compensated", "local-only"
    );
    // A cell: the median of `f` over thread `i`'s preloaded runs, ms, and
    // its error against `truth`.
    let cell = |i: usize, f: fn(&Compensated) -> f64, truth: f64| {
        let v = median(heisen[i].iter().map(f).collect());
        format!("{:>13.3} ({:>+6.1}%)", v / 1e6, 100.0 * (v - truth) / truth)
    };
    for (i, lines) in plain.iter().enumerate() {
        let truth = median(lines.iter().map(|t| t.wall).collect());
        let name = if i == 0 {
            "main".to_owned()
        } else {
            format!("worker {}", i - 1)
        };
        println!(
            "{name:<10} {:>14.3} {} {} {}",
            truth / 1e6,
            cell(i, |c| c.wall, truth),
            cell(i, |c| c.compensated, truth),
            cell(i, |c| c.local_only, truth)
        );
    }
    println!(
        "thread CPU time, medians in ms (less charged: instrumented minus the overhead heisen charged, R1)"
    );
    println!(
        "{:<10} {:>14} {:>22} {:>22}",
        "thread", "uninstrumented", "instrumented", "less charged"
    );
    // Main only waits for the workers (and, preloaded, runs the start-up
    // calibration): its CPU time says nothing about the charges.
    for (i, lines) in plain.iter().enumerate().skip(1) {
        let truth = median(lines.iter().map(|t| t.cpu).collect());
        println!(
            "{:<10} {:>14.3} {} {}",
            format!("worker {}", i - 1),
            truth / 1e6,
            cell(i, |c| c.cpu, truth),
            cell(i, |c| c.cpu_less_charged, truth)
        );
    }
}

/// One thread's line of the program's output in one run: its wall and
/// CPU time (ns) and its heisen location (-1 without the interposer).
#[derive(Clone, Copy, Debug)]
struct ThreadLine {
    wall: f64,
    cpu: f64,
    location: i64,
}

/// One thread's figures in one preloaded run, ns.
#[derive(Clone, Copy, Debug)]
struct Compensated {
    /// Wall time as measured.
    wall: f64,
    /// Its location's compensated elapsed time (R2, R5).
    compensated: f64,
    /// Wall time less the thread's own charged overhead (R1 alone).
    local_only: f64,
    /// Thread CPU time as measured.
    cpu: f64,
    /// Thread CPU time less the thread's own charged overhead.
    cpu_less_charged: f64,
}

/// Runs the program; per thread (main first) its figures.
fn execute(program: &Path, preload: Option<(&Path, &PathBuf)>, workers: usize) -> Vec<ThreadLine> {
    let mut cmd = Command::new(program);
    cmd.arg(workers.to_string());
    for (k, _) in std::env::vars() {
        let kept = k == "HEISEN_CALIBRATION" || k == "HEISEN_CALIBRATION_TRACE";
        if (k.starts_with("HEISEN_") && !kept) || k == "LD_PRELOAD" {
            cmd.env_remove(k);
        }
    }
    if let Some((lib, out)) = preload {
        cmd.env("LD_PRELOAD", lib).env("HEISEN_OUTPUT", out);
    }
    let out = cmd.output().expect("run the C program");
    assert!(out.status.success(), "{out:?}");
    // Warnings (a misspelt HEISEN_CALIBRATION), the calibration trace.
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("thread "))
        .map(|l| {
            // thread NAME location L wall W cpu C
            let w: Vec<&str> = l.split_whitespace().collect();
            ThreadLine {
                wall: w[5].parse().expect("wall"),
                cpu: w[7].parse().expect("cpu"),
                location: w[3].parse().expect("location"),
            }
        })
        .collect()
}

fn report(dir: &Path) -> serde_json::Value {
    let file = std::fs::read_dir(dir)
        .expect("output directory")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a report");
    serde_json::from_str(&std::fs::read_to_string(file).expect("read")).expect("JSON")
}
