//! `libheisen.so` opened with `dlopen` by a program not linked with it,
//! after the program started a thread: the thread-slot pointer is an
//! initial-exec TLS variable (`heisen_shmem`'s `current` module), so the
//! library needs room in the static TLS area and every thread, the one
//! that existed before the library did too, must get its own zeroed slot.
//! And instrumented plugins opened and closed in turn at one address by a
//! program linked with it: each function named after the plugin it is in.

mod common;

use std::path::Path;
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

/// Builds `tests/c/NAME.c` as `libNAME.so` in `dir`, instrumented.
fn build_plugin(dir: &Path, name: &str) {
    let out = Command::new("cc")
        .current_dir(dir)
        .args(["-shared", "-fPIC", "-O1", "-finstrument-functions", "-o"])
        .arg(format!("lib{name}.so"))
        .arg(source(&format!("tests/c/{name}.c")))
        .output()
        .expect("run cc");
    assert!(out.status.success(), "{}", describe(&out));
}

#[test]
fn a_plugin_loaded_where_an_unloaded_one_was_gets_its_own_names() {
    let dir = work_dir("plugins");
    build_plugin(&dir, "plugin_one");
    build_plugin(&dir, "plugin_two");
    let exe = build(
        Language::C,
        &dir,
        "plugins",
        &[source("tests/c/plugins.c")],
        &["-O1", "-finstrument-functions", "-ldl"],
    );
    let out = run(
        &exe,
        &dir,
        &[],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    assert_eq!(
        stdout(&out),
        "./libplugin_one.so 30200\n./libplugin_two.so 200800\n./libplugin_one.so 270600\n\
         same address yes\n./libplugin_two.so 540\nchild 0\n",
        "the loader reuses the address (else this test checks nothing): {}",
        describe(&out)
    );
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    let report = report(&dir);
    let count = |name: &str| {
        let id = region_id(&report, name).unwrap_or_else(|| panic!("no region {name}"));
        report["locations"]
            .as_array()
            .expect("locations")
            .iter()
            .map(|l| region_totals(l, id).0)
            .sum::<u64>()
    };
    // plugin_one called with 100 and 300, plugin_two with 200 (and in
    // the child, not measured).
    assert_eq!(count("alpha_mid"), 400);
    assert_eq!(count("alpha_leaf"), 800);
    assert_eq!(count("bravo_mid"), 200);
    assert_eq!(count("bravo_leaf"), 400);
    assert_eq!(count("plugin_run"), 3);
    assert_eq!(count("run_plugin"), 3);
    assert_eq!(report["runtime"]["exit_mismatches"], 0);
}
