//! `-finstrument-functions`: a C program compiled with the flag and linked
//! with `-lheisen` gets every function as a region named after it —
//! static functions (from `.symtab`), exported ones (`dladdr`), functions
//! of a shared library — whether the program is a PIE or a classic
//! executable; a stripped one gets `0x<offset>@<object>` names whose
//! offsets are the symbols' values (relative to the load bias).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::Value;

/// Builds `tests/c/tiny.c` as `libtiny.so` in `dir`, instrumented.
fn build_tiny(dir: &Path) {
    let out = Command::new("cc")
        .current_dir(dir)
        .args([
            "-shared",
            "-fPIC",
            "-O1",
            "-finstrument-functions",
            "-o",
            "libtiny.so",
        ])
        .arg(source("tests/c/tiny.c"))
        .output()
        .expect("run cc");
    assert!(out.status.success(), "{}", describe(&out));
}

/// Builds `tests/c/instrumented.c` with `flags`, linked with libtiny.
fn build_instrumented(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    build_tiny(dir);
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    let ldir = format!("-L{}", dir.display());
    let mut all = vec!["-O1", "-finstrument-functions"];
    all.extend_from_slice(flags);
    all.extend_from_slice(&[ldir.as_str(), "-ltiny", rpath.as_str()]);
    build(
        Language::C,
        dir,
        name,
        &[source("tests/c/instrumented.c")],
        &all,
    )
}

/// Builds `tests/c/NAME.c` instrumented (`-O1 -finstrument-functions`)
/// and runs it with its report in its own directory.
fn run_hooked(name: &str) -> (PathBuf, std::process::Output) {
    run_instrumented(Language::C, name, "c", &[])
}

/// Builds `tests/c/NAME.EXT` in `language` with `-O1
/// -finstrument-functions` and `flags`, and runs it with its report in
/// its own directory.
fn run_instrumented(
    language: Language,
    name: &str,
    ext: &str,
    flags: &[&str],
) -> (PathBuf, std::process::Output) {
    let dir = work_dir(&format!("instrument_{name}"));
    let file = format!("tests/c/{name}.{ext}");
    let mut all = vec!["-O1", "-finstrument-functions"];
    all.extend_from_slice(flags);
    let exe = build(language, &dir, name, &[source(&file)], &all);
    let out = run(
        &exe,
        &dir,
        &[],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    (dir, out)
}

/// Leaves the C++ standard library's functions uninstrumented.
const NO_STD: &str = "-finstrument-functions-exclude-file-list=/usr/include";

/// `(count, name)` of every region the report's locations entered.
fn counts(report: &Value) -> Vec<(u64, String)> {
    let names = report["regions"].as_array().expect("regions");
    names
        .iter()
        .map(|r| {
            let id = r["id"].as_u64().expect("id");
            let count = report["locations"]
                .as_array()
                .expect("locations")
                .iter()
                .map(|l| region_totals(l, id).0)
                .sum();
            (count, r["name"].as_str().expect("name").to_owned())
        })
        .filter(|(count, _)| *count > 0)
        .collect()
}

fn count_of(counts: &[(u64, String)], name: &str) -> u64 {
    counts
        .iter()
        .find(|(_, n)| n == name)
        .map_or(0, |(c, _)| *c)
}

/// The expected calls of `instrumented.c`: two threads call `api_function`
/// 100 times each.
const EXPECTED: [(&str, u64); 7] = [
    ("main", 1),
    ("worker", 2),
    ("api_function", 200),
    ("middle", 200),
    ("leaf", 2000),
    ("tiny_exported", 200),
    ("tiny_static", 200),
];

fn check_named_report(dir: &Path, exe: &Path) {
    let out = run(
        exe,
        dir,
        &[],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    assert!(stdout(&out).contains("total "), "{}", describe(&out));
    assert!(
        out.stderr.is_empty(),
        "nothing went wrong: {}",
        describe(&out)
    );
    let report = report(dir);
    let counts = counts(&report);
    for (name, count) in EXPECTED {
        assert_eq!(count_of(&counts, name), count, "{name} in {counts:?}");
    }
    let locations = report["locations"].as_array().expect("locations");
    assert_eq!(locations.len(), 3, "main and two threads");
    assert_eq!(report["runtime"]["exit_mismatches"], 0);
    assert_eq!(report["runtime"]["exits_without_enter"], 0);
    for l in locations {
        let (measured, compensated) = elapsed(l);
        assert!(compensated < measured, "{l}");
        assert!(l["overhead"].as_u64() > Some(0));
    }
    let hooks: Vec<&str> = action_names(&report)
        .into_iter()
        .filter(|a| a.starts_with("cyg_profile_func"))
        .collect();
    assert_eq!(hooks, ["cyg_profile_func_enter", "cyg_profile_func_exit"]);
}

#[test]
fn a_pie_gets_every_function_by_name() {
    let dir = work_dir("instrument_pie");
    let exe = build_instrumented(&dir, "pie", &["-fPIE", "-pie"]);
    check_named_report(&dir, &exe);
}

#[test]
fn a_classic_executable_gets_every_function_by_name() {
    let dir = work_dir("instrument_no_pie");
    let exe = build_instrumented(&dir, "classic", &["-fno-PIE", "-no-pie"]);
    check_named_report(&dir, &exe);
}

/// The value of symbol `name` in `exe`'s symbol table (`nm`).
fn symbol_value(exe: &Path, name: &str) -> u64 {
    let out = Command::new("nm").arg(exe).output().expect("run nm");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(name))
        .unwrap_or_else(|| panic!("{name} in nm {}", exe.display()));
    u64::from_str_radix(line.split_whitespace().next().expect("value"), 16).expect("hex")
}

#[test]
fn a_stripped_pie_gets_offsets_relative_to_its_load_bias() {
    let dir = work_dir("instrument_stripped");
    let exe = build_instrumented(&dir, "stripped", &["-fPIE", "-pie"]);
    let leaf = symbol_value(&exe, "leaf");
    let main = symbol_value(&exe, "main");
    let out = Command::new("strip").arg(&exe).output().expect("run strip");
    assert!(out.status.success(), "{}", describe(&out));
    let out = run(
        &exe,
        &dir,
        &[],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    assert!(out.status.success());
    let counts = counts(&report(&dir));
    // The static functions have no name left; their regions are named by
    // the symbol values nm gave before stripping (not the run-time
    // addresses, which move with the PIE's load address).
    assert_eq!(
        count_of(&counts, &format!("{leaf:#x}@stripped")),
        2000,
        "{counts:?}"
    );
    assert_eq!(
        count_of(&counts, &format!("{main:#x}@stripped")),
        1,
        "{counts:?}"
    );
    // The shared library kept its symbols.
    assert_eq!(count_of(&counts, "tiny_static"), 200, "{counts:?}");
    assert_eq!(count_of(&counts, "tiny_exported"), 200, "{counts:?}");
}

#[test]
fn instrumented_program_under_valgrind() {
    let dir = work_dir("instrument_valgrind");
    let exe = build_instrumented(&dir, "grind", &[]);
    valgrind(
        &exe,
        &dir,
        &[],
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8"))],
    );
    let counts = counts(&report(&dir));
    assert_eq!(count_of(&counts, "leaf"), 2000, "{counts:?}");
}

/// A `longjmp` (and a `siglongjmp` out of a signal handler) leaves
/// instrumented functions without their exits: the enclosing function's
/// exit closes them (`frames_unwound`), nothing is refused or lost, every
/// call is counted and nothing is printed; likewise for recursion deeper
/// than the region stack and for a jump out of one. A jump out of an
/// indirect recursion deeper than the stack loses the frames beyond it
/// (counted, one line at exit) and nothing after.
#[test]
fn a_longjmp_over_instrumented_functions_loses_nothing() {
    let (dir, out) = run_hooked("jumps");
    assert_eq!(
        stdout(&out).trim(),
        "recovered 2020 total 549545",
        "{}",
        describe(&out)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!(
            "heisen: location 0: {LOST} records did not fit its tables (regions 0, comms 0, loops 0, frames {LOST}, wildcard sites 0)"
        ),
        "only the zigzags' frames beyond the stack: {}",
        describe(&out)
    );
    let report = report(&dir);
    let counts = counts(&report);
    // Recursive `dive` calls fold into the outermost (002 Fig. 11).
    for (name, count) in [
        ("main", 1),
        ("recover", 1000),
        ("dive", 1010),
        ("interrupted", 1000),
        ("on_signal", 1000),
        ("recover_deep", 10),
        ("deep", 10),
        ("recover_zigzag", 10),
        ("work", 1010),
    ] {
        assert_eq!(count_of(&counts, name), count, "{name} in {counts:?}");
    }
    // 21 `dive` frames per recover, one `on_signal` frame per interrupt,
    // the `dive` frames of `recover_deep` that fit the region stack, and
    // the 62 `zig`/`zag` frames of each `recover_zigzag` that did.
    let unwound = report["runtime"]["frames_unwound"].as_u64().expect("count");
    let zigzag = 10 * 62;
    assert!(
        (22_010 + zigzag..=22_000 + 10 * 64 + zigzag).contains(&unwound),
        "{unwound}"
    );
    assert_eq!(report["runtime"]["exit_mismatches"], 0);
    assert_eq!(report["runtime"]["exits_without_enter"], 0);
    let location = &report["locations"][0];
    assert_eq!(location["overflow"]["frames"], LOST, "{location}");
}

/// Leaf regions called many times in a row, by a compiler hook and by
/// the C API, are costed in the running program through light windows
/// (online costing): every call is counted, each path is costed, and an
/// exit of a region that is not open in the middle of a light call is
/// refused with its code.
#[test]
fn hot_leaves_are_costed_online_and_every_call_counted() {
    let (dir, out) = run_hooked("hot_leaf");
    assert_eq!(
        stdout(&out).trim(),
        format!(
            "sum {} refused {}",
            (0..20_000i64).map(|i| 3 * i + 1).sum::<i64>()
                + (0..20_000i64).sum::<i64>()
                + (0..1000i64).sum::<i64>(),
            205 // HEISEN_RESULT_EXIT_MISMATCH (include/heisen.h)
        ),
        "{}",
        describe(&out)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "heisen: 1 region exits did not match the innermost open region and were ignored",
        "the refused exit, and nothing else: {}",
        describe(&out)
    );
    let report = report(&dir);
    let counts = counts(&report);
    for (name, count) in [
        ("main", 1),
        ("hot", 20_000),
        ("c_hot", 20_000),
        ("c_third", 1000),
    ] {
        assert_eq!(count_of(&counts, name), count, "{name} in {counts:?}");
    }
    assert_eq!(report["runtime"]["exit_mismatches"], 1);
    assert_eq!(report["runtime"]["exits_without_enter"], 0);
    let online: Vec<u64> = report["runtime"]["online"]
        .as_array()
        .expect("online")
        .iter()
        .filter_map(|o| o["region"].as_u64())
        .collect();
    for name in ["hot", "c_hot"] {
        let id = region_id(&report, name).expect("a region id");
        assert!(online.contains(&id), "{name} in {online:?}");
    }
    let light = report["runtime"]["online"][0]["light_calls"]
        .as_u64()
        .expect("light calls");
    assert!(light > 0, "{report}");
    // The refused exit ended `c_third`'s first light window early (the
    // loops over `hot` and `c_hot` end outside a light window: the
    // schedule depends on call counts only, backend-shmem/tests/online.rs).
    let aborted = report["runtime"]["online"][0]["aborted"].as_u64();
    assert_eq!(aborted, Some(1), "{report}");
}

/// A signal handler that jumps out of a hook call leaves the call
/// unfinished for good: the thread is still reported (its events before
/// the jump recorded), the abandoned call counted and said on stderr, the
/// program's output its own.
#[test]
fn a_jump_out_of_a_signal_handler_inside_a_hook_keeps_the_thread_in_the_report() {
    let (dir, out) = run_hooked("signal_jump");
    assert_eq!(
        stdout(&out),
        "a jump left a heisen call\nafter 1000\n",
        "{}",
        describe(&out)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "heisen: 1 threads left a heisen call by a jump out of a signal handler; their events after it went unmeasured",
        "{}",
        describe(&out)
    );
    let report = report(&dir);
    assert_eq!(report["runtime"]["calls_abandoned"], 1);
    assert_eq!(report["runtime"]["running_at_exit"], 0);
    let locations = report["locations"].as_array().expect("locations");
    assert_eq!(locations.len(), 1, "{}", report["runtime"]);
    assert!(count_of(&counts(&report), "leaf") > 0, "{report}");
}

/// An instrumented signal handler that returns normally, interrupting
/// instrumented code (most often inside a hook, which then holds the
/// thread's state): every call it makes is either measured or counted
/// in `runtime.calls_nested`, and the rest of the report is intact.
#[test]
fn a_handler_interrupting_a_hook_has_its_calls_counted() {
    let (dir, out) = run_hooked("signal_nested");
    let text = stdout(&out);
    assert_eq!(text, "handler 300 (1)\n", "{}", describe(&out));
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    let report = report(&dir);
    let counts = counts(&report);
    let nested = report["runtime"]["calls_nested"]
        .as_u64()
        .expect("calls_nested");
    // Each signal's 4 calls are all measured or all nested.
    assert_eq!(nested % 4, 0, "{}", report["runtime"]);
    let handler = count_of(&counts, "handler");
    assert_eq!(
        handler + nested / 4,
        300,
        "{counts:?} {}",
        report["runtime"]
    );
    // Two more of each from main, which resolves every name first.
    assert_eq!(count_of(&counts, "hmid"), handler + 2);
    assert_eq!(count_of(&counts, "hleaf"), 2 * handler + 4);
    // Most signals land inside a hook: before, those calls went uncounted.
    assert!(nested > 0, "{}", report["runtime"]);
    assert_eq!(report["runtime"]["exit_mismatches"], 0);
    assert_eq!(report["runtime"]["exits_without_enter"], 0);
    assert_eq!(count_of(&counts, "main"), 1);
}

/// `zig`/`zag` frames beyond the region stack in `jumps.c`: 10 jumps out
/// of 301 frames, above `main` and `recover_zigzag` in a stack of 64.
const LOST: u64 = 10 * (301 - 62);

/// C++ exceptions unwind instrumented frames through their exit hooks:
/// every call is counted, nothing is lost or mismatched, and a function
/// that catches in the middle of the stack goes on with its own children.
#[test]
fn cxx_exceptions_unwind_through_the_exit_hooks() {
    let (dir, out) = run_instrumented(Language::Cxx, "exceptions", "cpp", &[NO_STD]);
    assert_eq!(
        stdout(&out).trim(),
        "sum 4400 caught 200",
        "{}",
        describe(&out)
    );
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    let report = report(&dir);
    let counts = counts(&report);
    // Recursive calls fold into the outermost (002 Fig. 11): `thrower`
    // once per outer call (100 from main, 100 under `rethrower`), `ping`
    // and `pong` once per `catcher`; `after` twice per `catcher`.
    for (name, count) in [
        ("main", 1),
        ("thrower(int)", 200),
        ("catcher(int)", 100),
        ("ping(int)", 100),
        ("pong(int)", 100),
        ("after(int)", 200),
        ("rethrower(int)", 100),
    ] {
        assert_eq!(count_of(&counts, name), count, "{name} in {counts:?}");
    }
    assert_eq!(report["runtime"]["exit_mismatches"], 0);
    assert_eq!(report["runtime"]["exits_without_enter"], 0);
    assert_eq!(report["runtime"]["frames_unwound"], 0);
    let location = &report["locations"][0];
    assert_eq!(location["overflow"]["frames"], 0, "{location}");
}

/// Demangled C++ names longer than 64 bytes are kept whole up to 256;
/// beyond that, two template instances whose names share far more than
/// 256 bytes get two different names by the hash of the whole name
/// (reports are merged by name).
#[test]
fn long_cxx_names_are_whole_or_kept_apart() {
    let (dir, out) = run_instrumented(Language::Cxx, "long_names", "cpp", &[NO_STD]);
    assert_eq!(stdout(&out).trim(), "sum 158", "{}", describe(&out));
    let report = report(&dir);
    let counts = counts(&report);
    let method = "AStructWithAFairlyLongNameForItsMethods::method_with_a_long_name_too(int, long)";
    assert_eq!(count_of(&counts, method), 7, "{counts:?}");
    let uses: Vec<&(u64, String)> = counts
        .iter()
        .filter(|(_, n)| n.starts_with("int use<std::tuple<"))
        .collect();
    assert_eq!(uses.len(), 2, "{counts:?}");
    assert_ne!(uses[0].1, uses[1].1);
    let mut calls: Vec<u64> = uses.iter().map(|(c, _)| *c).collect();
    calls.sort_unstable();
    assert_eq!(calls, [30, 100]);
    // Cut to the same first bytes; only the hash of the whole name tells
    // the two apart.
    let heads: Vec<&str> = uses
        .iter()
        .map(|(_, name)| {
            assert!(name.len() <= 256, "{name}");
            name.split_once("…#").expect("cut with a hash").0
        })
        .collect();
    assert_eq!(heads[0], heads[1]);
}

/// A Fortran program compiled with `-finstrument-functions`: gfortran's
/// module procedures (`__work_MOD_fib`) are named `work::fib`.
#[test]
fn fortran_module_procedures_are_named_by_module() {
    let (dir, out) = run_instrumented(Language::Fortran, "modules", "f90", &[]);
    assert_eq!(
        stdout(&out).trim(),
        "fib 12200 sum 5050",
        "{}",
        describe(&out)
    );
    let report = report(&dir);
    let counts = counts(&report);
    for (name, count) in [("MAIN__", 1), ("work::fill", 20), ("work::fib", 20)] {
        assert_eq!(count_of(&counts, name), count, "{name} in {counts:?}");
    }
}

/// A C++20 program written without heisen in mind
/// (`tests/c/thread_lives.cpp`): 2,228 threads, thread_local destructors
/// that run instrumented functions (and start a thread) after the
/// thread's function returned, exceptions out of thread functions into
/// futures. The hooks change nothing it prints, every call of the
/// program's deterministic functions is counted, and nothing is
/// mismatched or lost.
#[test]
fn cxx_thread_lives_futures_and_thread_local_destructors_under_the_hooks() {
    let (dir, out) = run_instrumented(
        Language::Cxx,
        "thread_lives",
        "cpp",
        &["-std=c++20", NO_STD],
    );
    assert_eq!(
        stdout(&out).trim(),
        "exceptions 399607 futures 166 short 19000 dtors 21000 detached 50 tree 127",
        "{}",
        describe(&out)
    );
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    let report = report(&dir);
    let counts = counts(&report);
    for (name, count) in [
        ("main", 1),
        ("guarded(int, int)", 40),
        ("down(int, int)", 42),
        ("Boom::Boom(int)", 42),
        ("short_lived()::{lambda()#1}::operator()() const", 2000),
        ("tree(int)", 127),
        ("Nested::~Nested()::{lambda()#1}::operator()() const", 1),
    ] {
        assert_eq!(count_of(&counts, name), count, "{name} in {counts:?}");
    }
    // Every joined thread's destructor ran before its join returned; the
    // detached threads may still be running at exit (their locations then
    // are not in the report).
    assert!(
        count_of(&counts, "Tracker::~Tracker()") >= 2002,
        "{counts:?}"
    );
    for k in ["exit_mismatches", "exits_without_enter", "frames_unwound"] {
        assert_eq!(report["runtime"][k], 0, "{k}: {}", report["runtime"]);
    }
    assert!(report["runtime"]["threads"].as_u64() >= Some(2178));
}
