//! The fidelity program (`examples/fidelity.c`) built both ways and run
//! briefly: the instrumented build computes what the plain one computes,
//! every tiny function is a region with its exact call count, the workers
//! meet at heisen's barrier, and the report has what the README's
//! fidelity table is made of. Times are measured by
//! `cargo run --release -p heisen-ffi --example ffi_fidelity`, not here.

mod common;

use common::*;
use serde_json::Value;

const STEPS: u64 = 5;

/// The line worker `worker` printed.
fn worker_line(text: &str, worker: usize) -> &str {
    text.lines()
        .find(|l| l.starts_with(&format!("worker {worker}:")))
        .unwrap_or_else(|| panic!("worker {worker} in {text}"))
}

/// The calls of region `name` on each location of `report`.
fn calls_per_location(report: &Value, name: &str) -> Vec<u64> {
    let id = region_id(report, name).unwrap_or_else(|| panic!("{name} is a region"));
    report["locations"]
        .as_array()
        .expect("locations")
        .iter()
        .map(|l| region_totals(l, id).0)
        .collect()
}

/// Region `twig` (one name of it) has exactly its calls on each worker:
/// 2,000 and 3,000 a step.
fn assert_twigs_per_worker(report: &Value, twig: &str) {
    let mut twigs = calls_per_location(report, twig);
    twigs.retain(|&n| n > 0);
    twigs.sort_unstable();
    assert_eq!(
        twigs,
        [2000 * STEPS, 3000 * STEPS],
        "calls per worker and step"
    );
}

/// `examples/<example>` built plain (`cc` with `plain_flags`) and
/// instrumented (with libheisen and `instrumented_flags`) in `dir`, each
/// run for [`STEPS`] steps, the instrumented one writing its report into
/// `dir` with nothing on stderr: both runs' stdout.
fn both_ways(
    dir: &std::path::Path,
    example: &str,
    plain_flags: &[&str],
    instrumented_flags: &[&str],
) -> (String, String) {
    let program = source(&format!("examples/{example}"));
    let plain = dir.join("plain");
    let out = std::process::Command::new("cc")
        .arg("-O2")
        .args(plain_flags)
        .arg("-o")
        .arg(&plain)
        .arg(&program)
        .output()
        .expect("run cc");
    assert!(out.status.success(), "{}", describe(&out));
    let flags: Vec<&str> = ["-O2"]
        .into_iter()
        .chain(instrumented_flags.iter().copied())
        .collect();
    let instrumented = build(Language::C, dir, "instrumented", &[program], &flags);
    let steps = STEPS.to_string();
    let plain_out = stdout(&run(&plain, dir, &[&steps], &[]));
    let out = run(
        &instrumented,
        dir,
        &[&steps],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    (plain_out, stdout(&out))
}

#[test]
fn fidelity_program_instrumented_computes_what_the_plain_one_does() {
    let dir = work_dir("fidelity");
    let (plain_out, instrumented_out) = both_ways(
        &dir,
        "fidelity.c",
        &["-pthread"],
        &["-DHEISEN", "-finstrument-functions"],
    );
    for worker in 0..2 {
        let checksum = |text: &str| {
            let line = worker_line(text, worker);
            line.split("checksum ").nth(1).map(str::to_owned)
        };
        assert_eq!(
            checksum(&plain_out),
            checksum(&instrumented_out),
            "worker {worker}"
        );
    }

    let report = report(&dir);
    assert_twigs_per_worker(&report, "twig");
    let leaves: u64 = calls_per_location(&report, "leaf").iter().sum();
    assert_eq!(leaves, 2 * 5000 * STEPS);
    let actions: Vec<&str> = report["header"]["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .filter_map(|a| a["action"].as_str())
        .collect();
    assert!(actions.contains(&"barrier_wait"), "{actions:?}");
    assert!(actions.contains(&"cyg_profile_func_enter"), "{actions:?}");
    // R1 refined in situ (docs/rules.md): every region path's pair (the
    // hooks', the C API's, the Rust API's) was measured between pieces of
    // work at every size, and what was charged is the median of those
    // figures.
    let pairs = report["runtime"]["calibration"]
        .as_array()
        .expect("runtime.calibration");
    for name in [
        "cyg_profile_func_enter+exit",
        "c_enter+c_exit",
        "enter+exit",
    ] {
        let pair = pairs
            .iter()
            .find(|p| p["path"] == name)
            .unwrap_or_else(|| panic!("{name} in {pairs:?}"));
        let sizes = pair["in_situ"].as_array().expect("in_situ");
        assert_eq!(
            sizes.len(),
            pair["work_steps"].as_array().map_or(0, Vec::len)
        );
        assert_eq!(sizes.len(), 4, "{pair}");
        let mut by_size: Vec<u64> = sizes.iter().filter_map(Value::as_u64).collect();
        by_size.sort_unstable();
        let whole = pair["whole"].as_u64().expect("whole");
        assert!(by_size[0] <= whole && whole <= by_size[3], "{pair}");
        assert!(pair["inside"].as_u64() <= Some(whole), "{pair}");
    }
    for l in report["locations"].as_array().expect("locations") {
        let (measured, compensated) = elapsed(l);
        assert!(compensated < measured, "{l}");
    }
}

/// `examples/interleaved_hooks.c` (the fidelity workload, each step run
/// plain and instrumented in turn in one process; `ffi_fidelity
/// interleaved` times it): both copies compute the same, only the
/// instrumented copy's functions are regions, each with its exact count,
/// and every worker's instrumented steps are one `phaseN` record with a
/// compensated time below the measured one.
#[test]
fn interleaved_program_measures_only_its_instrumented_copy() {
    let dir = work_dir("interleaved_hooks");
    let exe = build(
        Language::C,
        &dir,
        "interleaved_hooks",
        &[source("examples/interleaved_hooks.c")],
        &["-O2", "-finstrument-functions"],
    );
    let steps = STEPS.to_string();
    let out = run(
        &exe,
        &dir,
        &[&steps],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    let text = stdout(&out);
    for worker in 0..2 {
        let line = worker_line(&text, worker);
        let sums: Vec<&str> = line
            .split("checksums ")
            .nth(1)
            .expect("checksums")
            .split_whitespace()
            .collect();
        assert_eq!(sums.len(), 2, "{line}");
        assert_eq!(sums[0], sums[1], "plain and instrumented copies: {line}");
    }

    let report = report(&dir);
    for plain in ["plain_twig", "plain_leaf", "plain_mix"] {
        assert_eq!(
            region_id(&report, plain),
            None,
            "{plain} is not instrumented"
        );
    }
    let locations = report["locations"].as_array().expect("locations");
    assert_twigs_per_worker(&report, "hooked_twig");
    for worker in 0..2 {
        let phase = region_id(&report, &format!("phase{worker}")).expect("a phase region");
        let records: Vec<(u64, u64, i64)> = locations
            .iter()
            .map(|l| region_totals(l, phase))
            .filter(|r| r.0 > 0)
            .collect();
        assert_eq!(records.len(), 1, "phase{worker} on one location");
        let (count, measured, compensated) = records[0];
        assert_eq!(count, STEPS, "one phase{worker} a step");
        assert!(compensated < measured as i64, "{records:?}");
    }
}

/// `examples/openmp_fidelity.c` (the workload as an OpenMP team of two)
/// built plain and with the hooks: the same checksum, every `twig` call of
/// each thread counted, the pool thread (still alive at exit, waiting for
/// work) reported as it was. Its times with and without the libgomp
/// wrappers: `ffi_fidelity openmp`.
#[test]
fn openmp_fidelity_program_counts_every_call_of_both_threads() {
    let report = openmp_fidelity("openmp_fidelity", &[]);
    assert_twigs_per_worker(&report, "twig");
    assert_eq!(
        report["runtime"]["running_reported"], 1,
        "{}",
        report["runtime"]
    );
}

/// The program's task form (`-DTASKS`: five tasks of 1,000 calls a step,
/// run by either thread): the same checksum both ways, and every `twig`
/// call counted once, on whichever thread ran it. Its times: `ffi_fidelity
/// openmp-tasks`.
#[test]
fn openmp_fidelity_task_form_counts_every_call() {
    let report = openmp_fidelity("openmp_fidelity_tasks", &["-DTASKS"]);
    let twigs: u64 = calls_per_location(&report, "twig").iter().sum();
    assert_eq!(twigs, 5000 * STEPS, "calls of every task");
}

/// `examples/openmp_fidelity.c` with `defines` built both ways in work
/// directory `name`: the same checksum both ways, and the instrumented
/// run's report.
fn openmp_fidelity(name: &str, defines: &[&str]) -> Value {
    let dir = work_dir(name);
    let plain: Vec<&str> = ["-fopenmp"].iter().chain(defines).copied().collect();
    let instrumented: Vec<&str> = plain
        .iter()
        .copied()
        .chain(["-finstrument-functions"])
        .collect();
    let (plain_out, instrumented_out) = both_ways(&dir, "openmp_fidelity.c", &plain, &instrumented);
    let checksum = |text: &str| text.split("checksum ").nth(1).map(str::to_owned);
    assert_eq!(checksum(&plain_out), checksum(&instrumented_out));
    report(&dir)
}
