//! The process runtime end to end: threads registered on first use, one
//! report at exit with every thread, the clock and calibration, the
//! selection from HEISEN_REGIONS, and problems on stderr only.

mod common;

use common::*;

/// A little work the optimiser cannot remove.
fn spin(n: u64) -> u64 {
    (0..n).fold(0u64, |a, i| core::hint::black_box(a.wrapping_add(i * i)))
}

#[test]
fn report_at_exit_has_every_thread_its_regions_and_the_calibration() {
    if is_child("report_at_exit_has_every_thread_its_regions_and_the_calibration") {
        let _main = heisen_shmem::region("main");
        let handles: Vec<_> = (0..3)
            .map(|i| {
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        heisen_shmem::in_region("work", || spin(1000 * (i + 1)));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("worker");
        }
        println!("program output");
        return;
    }
    let dir = out_dir("report_at_exit");
    let out = child(
        "report_at_exit_has_every_thread_its_regions_and_the_calibration",
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8 path"))],
    );
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("heisen:"), "nothing went wrong: {stderr}");
    let report = report_in(&dir);
    let header = &report["header"];
    assert_eq!(header["backend"], "shmem");
    assert_eq!(header["form"], "timestamped");
    assert!(matches!(
        header["clock"].as_str(),
        Some("tsc" | "clock_monotonic")
    ));
    let enter = &header["calibration"]["enter"];
    assert!(enter["whole"].as_u64().expect("enter cost") > 0, "{header}");
    let actions: Vec<&str> = header["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .filter_map(|a| a["action"].as_str())
        .collect();
    for a in [
        "release",
        "merge",
        "thread_start",
        "thread_end",
        "clock_read",
    ] {
        assert!(actions.contains(&a), "{a} in {actions:?}");
    }
    // Default selection: the first regions entered, in order.
    let selected: Vec<&str> = header["selected"]
        .as_array()
        .expect("selected")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(selected, ["main", "work"]);
    let locations = report["locations"].as_array().expect("locations");
    assert_eq!(locations.len(), 4, "main and three workers");
    let work = region_id(&report, "work");
    for l in locations {
        check_location(l);
    }
    for i in 1..=3 {
        let w = location(&report, &format!("thread {i}"));
        let r = w["regions"]
            .as_array()
            .expect("regions")
            .iter()
            .find(|r| r["region"] == work)
            .expect("a work record");
        assert_eq!(r["count"], 100);
        assert!(w["overhead"].as_u64().expect("overhead") > 0);
        assert!(w["critical_path"]["longest"].as_i64().expect("L") > 0);
    }
    assert_eq!(report["runtime"]["threads"], 4);
    assert_eq!(report["runtime"]["running_at_exit"], 0);
}

#[test]
fn heisen_regions_selects_and_an_unknown_name_is_reported_at_exit() {
    if is_child("heisen_regions_selects_and_an_unknown_name_is_reported_at_exit") {
        heisen_shmem::in_region("a", || heisen_shmem::in_region("b", || spin(100)));
        return;
    }
    let dir = out_dir("regions_env");
    let out = child(
        "heisen_regions_selects_and_an_unknown_name_is_reported_at_exit",
        &[
            ("HEISEN_OUTPUT", dir.to_str().expect("utf-8 path")),
            ("HEISEN_REGIONS", "b,nosuch"),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("HEISEN_REGIONS names `nosuch`, which no thread entered"),
        "{stderr}"
    );
    assert!(!stderr.contains("`b`"), "{stderr}");
    let report = report_in(&dir);
    let selected: Vec<&str> = report["header"]["selected"]
        .as_array()
        .expect("selected")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(selected, ["b", "nosuch"]);
}

#[test]
fn an_output_directory_that_cannot_be_written_is_one_line_on_stderr() {
    if is_child("an_output_directory_that_cannot_be_written_is_one_line_on_stderr") {
        heisen_shmem::in_region("a", || spin(100));
        println!("the program's own output");
        return;
    }
    let out = child(
        "an_output_directory_that_cannot_be_written_is_one_line_on_stderr",
        &[("HEISEN_OUTPUT", "/nonexistent/heisen/dir")],
    );
    assert!(
        out.status.success(),
        "the program's exit code is unchanged: {out:?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("the program's own output"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("heisen:"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("cannot write the report to /nonexistent/heisen/dir/heisen."),
        "{stderr}"
    );
}

#[test]
fn disabled_runtime_measures_and_writes_nothing() {
    if is_child("disabled_runtime_measures_and_writes_nothing") {
        heisen_shmem::in_region("a", || spin(100));
        assert!(heisen_shmem::with_current(|_| ()).is_none());
        return;
    }
    let dir = out_dir("disabled");
    let out = child(
        "disabled_runtime_measures_and_writes_nothing",
        &[
            ("HEISEN_OUTPUT", dir.to_str().expect("utf-8 path")),
            ("HEISEN_DISABLE", "1"),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_dir(&dir).expect("dir").count(), 0);
}
