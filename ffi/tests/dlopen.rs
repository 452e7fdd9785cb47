//! `libheisen.so` opened with `dlopen` by a program not linked with it,
//! after the program started a thread: the thread-slot pointer is an
//! initial-exec TLS variable (`heisen_shmem`'s `current` module), so the
//! library needs room in the static TLS area and every thread, the one
//! that existed before the library did too, must get its own zeroed slot.

mod common;

use std::process::Command;

use common::*;

#[test]
fn a_program_that_dlopens_libheisen_measures_its_threads() {
    let dir = work_dir("dlopen");
    let exe = dir.join("dlopened");
    let out = Command::new("cc")
        .arg("-g")
        .arg("-Wall")
        .arg(source("tests/c/dlopened.c"))
        .arg("-o")
        .arg(&exe)
        .args(["-ldl", "-lpthread"])
        .output()
        .expect("run cc");
    assert!(out.status.success(), "cc: {}", describe(&out));
    let lib = library_dir().join("libheisen.so");
    let out = run(
        &exe,
        &dir,
        &[lib.to_str().expect("utf-8")],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    assert_eq!(stdout(&out), "pairs 1000 1000\n", "{}", describe(&out));
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    let report = report(&dir);
    let region = region_id(&report, "dlopened").expect("the region");
    let locations = report["locations"].as_array().expect("locations");
    let counts: Vec<u64> = locations
        .iter()
        .map(|l| region_totals(l, region).0)
        .filter(|&n| n > 0)
        .collect();
    assert_eq!(counts, [1000, 1000], "one location per thread");
}
