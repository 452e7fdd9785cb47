//! `libheisen.so` opened with `dlopen` by a program not linked with it,
//! after the program started a thread: the thread-slot pointer is an
//! initial-exec TLS variable (`heisen_shmem`'s `current` module), so the
//! library needs room in the static TLS area and every thread, the one
//! that existed before the library did too, must get its own zeroed slot.
//! And instrumented plugins opened and closed in turn at one address by a
//! program linked with it: each function named after the plugin it is in;
//! plugins with instrumented constructors loaded while another thread
//! resolves names: no hang.

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
    build_plugin_as(dir, name, name, &[]);
}

/// Builds `tests/c/NAME.c` with `flags` as `libLIB.so` in `dir`,
/// instrumented.
fn build_plugin_as(dir: &Path, name: &str, lib: &str, flags: &[&str]) {
    let out = Command::new("cc")
        .current_dir(dir)
        .args(["-shared", "-fPIC", "-O1", "-finstrument-functions"])
        .args(flags)
        .arg("-o")
        .arg(format!("lib{lib}.so"))
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
    let count = |name: &str| calls(&report, name);
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

#[test]
fn a_plugin_constructor_resolving_names_does_not_hang_another_thread() {
    let dir = work_dir("plugin_threads");
    build_plugin(&dir, "plugin_init");
    build_plugin_as(&dir, "plugin_init", "plugin_run", &["-DMANY_RUN"]);
    let exe = build(
        Language::C,
        &dir,
        "plugin_threads",
        &[source("tests/c/plugin_threads.c")],
        &["-O1", "-finstrument-functions", "-ldl"],
    );
    // A hang fails the test (exit 124) instead of stopping the suite.
    let out = run(
        Path::new("timeout"),
        &dir,
        &["120", exe.to_str().expect("utf-8")],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    // plugin_run(i) is i + 3104 (the 64 functions add their numbers).
    assert_eq!(stdout(&out), "total 976050\n", "{}", describe(&out));
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    let report = report(&dir);
    let count = |name: &str| calls(&report, name);
    // Each f is called once per constructor and once per run.
    assert_eq!(count("plugin_init"), 300);
    assert_eq!(count("plugin_run"), 300);
    assert_eq!(count("all"), 600);
    assert_eq!(count("f10"), 600);
    assert_eq!(count("f87"), 600);
    // No exit dropped: a function forgotten between its enter and exit
    // (a scan after one thread's unload racing with the other's load)
    // left its frame open before, closed later by unwinding.
    assert_eq!(report["runtime"]["exit_mismatches"], 0);
    assert_eq!(report["runtime"]["frames_unwound"], 0);
}
