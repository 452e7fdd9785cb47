//! Collectives, communicators, `MPI_Pcontrol` and Fortran under the
//! interposer: the programs of `tests/c` and `tests/f` run under
//! `mpiexec -n 2..4` with and without `LD_PRELOAD=libheisen_mpi.so` and
//! must print byte for byte the same and exit 0; the reports of the
//! preloaded runs are read back and checked (one location per rank, the
//! collectives' regions and merges, compensated never above measured).
//! Also the extra exchange's record encoding and merge operator (R6).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use heisen_core::piggyback::Flags;
use heisen_mpi::collective::{BYTES, Encoded, Entries, decode, encode, fold_into};
use heisen_shmem::{Record, SELECTED};
use serde_json::Value;

// ----- the record of the extra exchange (R6) ---------------------------------

fn entry(delay: u64, approximated: i64, wait: u64) -> Entries {
    let mut r = Record::EMPTY;
    r.flags = Flags::DELAY.with(Flags::TIMESTAMP);
    r.delay = delay;
    r.approximated = approximated;
    Entries::entry(&r, wait)
}

#[test]
fn exchange_encoding_round_trips_every_field() {
    let mut e = entry(5, 1_000, 7);
    e.path.location = 3;
    e.path.active = true;
    e.path.longest = -4;
    e.path.net[SELECTED - 1] = 9;
    e.path.inclusive[0] = i64::MIN;
    e.path.exclusive[1] = i64::MAX;
    assert_eq!(decode(&encode(&e)), e);
    assert_eq!(decode(&encode(&Entries::EMPTY)), Entries::EMPTY);
    assert_eq!(BYTES, core::mem::size_of::<Encoded>());
}

#[test]
fn exchange_operator_folds_each_record_like_combine() {
    let (a, b, c) = (entry(5, 1_000, 7), entry(2, 1_500, 0), entry(9, 900, 30));
    let input = [encode(&a), encode(&a)];
    let mut inout = [encode(&b), encode(&c)];
    fold_into(&input, &mut inout);
    assert_eq!(decode(&inout[0]), a.combine(&b));
    assert_eq!(decode(&inout[1]), a.combine(&c));
    // any tree the MPI folds in gives the same: associative, commutative
    let left = a.combine(&b).combine(&c);
    assert_eq!(left, a.combine(&b.combine(&c)));
    assert_eq!(left, c.combine(&a).combine(&b));
    assert_eq!(left.participants, 3);
    assert_eq!(left.max_approximated, 1_500); // b entered last (001 eq. 12)
    assert_eq!(left.min_delay_plus_wait, 2); // R6 delay-only: min_j (x_j + w_j)
    assert_eq!(left.min_wait, 0);
}

#[test]
fn exchange_with_an_unmeasured_participant_keeps_the_others() {
    // R3: an empty record (an unmeasured participant) changes nothing
    let a = entry(5, 1_000, 7);
    let none = Entries::entry(&Record::EMPTY, 40);
    let folded = a.combine(&none);
    assert_eq!(folded.participants, 2);
    assert_eq!(folded.min_delay_plus_wait, a.min_delay_plus_wait);
    assert_eq!(folded.max_approximated, a.max_approximated);
    assert!(folded.flags.contains(Flags::TIMESTAMP));
}

// ----- running programs --------------------------------------------------------

/// The interposer cargo built for this test (`<target>/<profile>/deps`).
fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("test path");
    let deps = exe.parent().expect("<target>/<profile>/deps/test");
    let lib = deps.join("libheisen_mpi.so");
    assert!(lib.exists(), "{} is built with the tests", lib.display());
    lib
}

fn work_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("heisen-mpicoll-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("work directory");
        d
    })
}

fn check(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles `tests/<dir>/<name>` with `compiler`, once per test process:
/// tests run in parallel, and rewriting a program another test is running
/// fails with "text file busy".
fn build(dir: &str, name: &str, compiler: &str, flags: &[&str]) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(exe) = built.get(name) {
        return exe.clone();
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir)
        .join(name);
    let exe = work_dir().join(name.split('.').next().expect("a name"));
    let out = Command::new(compiler)
        .args(flags)
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("{compiler}: {e}"));
    check(&out, &format!("{compiler} {name}"));
    built.insert(name.to_owned(), exe.clone());
    exe
}

fn c_program(name: &str) -> PathBuf {
    build("c", name, "mpicc", &["-O1", "-Wall"])
}

fn fortran_program(name: &str) -> PathBuf {
    // mpif.h's generic buffers trip gfortran ≥ 10's argument checks
    build(
        "f",
        name,
        "mpif90",
        &["-O1", "-fallow-argument-mismatch", "-w"],
    )
}

/// Runs `exe` on `ranks` ranks, preloaded when `output` names a report
/// directory; returns stdout (checked: exit 0, nothing on stderr).
fn run(exe: &Path, ranks: u32, output: Option<&Path>, env: &[(&str, &str)]) -> Vec<u8> {
    run_on(exe, &Nodes::One(ranks), output, env)
}

/// Where the ranks of a run are: all on this machine's node, or one rank
/// per entry, each on the node its `HEISEN_NODE` names.
enum Nodes<'a> {
    One(u32),
    Named(&'a [&'a str]),
}

fn run_on(exe: &Path, nodes: &Nodes, output: Option<&Path>, env: &[(&str, &str)]) -> Vec<u8> {
    // one mpiexec at a time: MPICH's ranks busy-poll, and the tests run
    // in parallel threads on a machine of two cores
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let mut cmd = Command::new("mpiexec");
    if let Some(dir) = output {
        cmd.arg("-genv")
            .arg("LD_PRELOAD")
            .arg(library())
            .arg("-genv")
            .arg("HEISEN_OUTPUT")
            .arg(dir);
        for (k, v) in env {
            cmd.arg("-genv").arg(k).arg(v);
        }
    }
    let ranks = match nodes {
        Nodes::One(ranks) => {
            cmd.arg("-n").arg(ranks.to_string()).arg(exe);
            *ranks
        }
        Nodes::Named(names) => {
            for (i, node) in names.iter().enumerate() {
                if i > 0 {
                    cmd.arg(":");
                }
                cmd.args(["-n", "1", "-env", "HEISEN_NODE", node]).arg(exe);
            }
            names.len() as u32
        }
    };
    cmd.env_remove("HEISEN_DISABLE").env_remove("HEISEN_NODE");
    let out = cmd.output().expect("run mpiexec");
    let what = format!("{} on {ranks} ranks", exe.display());
    check(&out, &what);
    assert!(
        out.stderr.is_empty(),
        "{what} printed on stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The reports of one preloaded run.
struct Reports {
    ranks: Vec<Value>,
    run: Option<Value>,
}

fn reports(dir: &Path, ranks: u32) -> Reports {
    let read = |p: PathBuf| -> Value {
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let ranks = (0..ranks)
        .map(|r| read(dir.join(format!("heisen.rank{r}.json"))))
        .collect();
    let run = dir.join("heisen.mpi.json");
    let run = run.exists().then(|| read(run));
    if let Some(run) = &run {
        common::delays_within_overhead(run);
    }
    Reports { ranks, run }
}

fn fresh_dir(tag: &str) -> PathBuf {
    let d = work_dir().join(tag);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("report directory");
    d
}

/// Asserts a rank report's window figures (`mpi.windows`): none left
/// open, the table's capacity 64.
fn assert_windows(report: &Value, tracked: u64, untracked: u64, pscw_merges: u64, what: &str) {
    let w = &mpi(report)["windows"];
    assert_eq!(w["capacity"].as_u64(), Some(64), "{what}: {w}");
    assert_eq!(w["tracked"].as_u64(), Some(tracked), "{what}: {w}");
    assert_eq!(w["untracked"].as_u64(), Some(untracked), "{what}: {w}");
    assert_eq!(w["open"].as_u64(), Some(0), "{what}: {w}");
    assert_eq!(w["pscw_merges"].as_u64(), Some(pscw_merges), "{what}: {w}");
}

/// Asserts that a rank report knows every region of `regions`.
fn assert_regions(report: &Value, regions: &[&str], what: &str) {
    let names = region_names(report);
    for region in regions {
        assert!(
            names.iter().any(|n| n == region),
            "{what}: no {region} in {names:?}"
        );
    }
}

/// The names of the regions a rank report knows.
fn region_names(report: &Value) -> Vec<String> {
    report["regions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str().map(str::to_owned))
        .collect()
}

/// Every location's compensated elapsed time is at most its measured one
/// (compensation removes time, R2), and is not negative beyond a clock
/// tick: over-compensation would show, not be clamped.
fn compensated_not_above_measured(report: &Value, what: &str) {
    for l in report["locations"].as_array().expect("locations") {
        let n = |k: &str| {
            l[k].as_f64()
                .unwrap_or_else(|| panic!("{what}: {k} in {l}"))
        };
        let measured = n("measured_end") - n("start");
        let compensated = n("approximated_end") - n("approximated_start");
        assert!(
            compensated <= measured,
            "{what}: location {} compensated {compensated} > measured {measured}",
            l["location"]
        );
    }
}

/// Runs `exe` plain and preloaded on `ranks`, compares the outputs byte
/// for byte, and returns the preloaded run's reports.
fn same_output(exe: &Path, ranks: u32, tag: &str, env: &[(&str, &str)]) -> (String, Reports) {
    let plain = run(exe, ranks, None, &[]);
    let dir = fresh_dir(&format!("{tag}-{ranks}"));
    let measured = run(exe, ranks, Some(&dir), env);
    assert_eq!(
        String::from_utf8_lossy(&plain),
        String::from_utf8_lossy(&measured),
        "{tag} on {ranks} ranks: output differs with the interposer"
    );
    (
        String::from_utf8_lossy(&plain).into_owned(),
        reports(&dir, ranks),
    )
}

/// The window calls both the C and the `mpi_f08` one-sided programs make
/// (each makes a few more).
const WINDOW_CALLS: [&str; 16] = [
    "MPI_Win_create",
    "MPI_Win_allocate",
    "MPI_Win_allocate_shared",
    "MPI_Win_create_dynamic",
    "MPI_Win_fence",
    "MPI_Win_post",
    "MPI_Win_start",
    "MPI_Win_complete",
    "MPI_Win_wait",
    "MPI_Win_test",
    "MPI_Win_lock",
    "MPI_Win_unlock",
    "MPI_Win_lock_all",
    "MPI_Win_flush",
    "MPI_Win_flush_local_all",
    "MPI_Win_free",
];

/// The collectives with a large-count (`_c`) binding: all but `Barrier`.
const LARGE_COUNT: [&str; 21] = [
    "Bcast",
    "Gather",
    "Gatherv",
    "Scatter",
    "Scatterv",
    "Allgather",
    "Allgatherv",
    "Alltoall",
    "Alltoallv",
    "Alltoallw",
    "Reduce",
    "Allreduce",
    "Reduce_scatter",
    "Reduce_scatter_block",
    "Scan",
    "Exscan",
    "Neighbor_allgather",
    "Neighbor_allgatherv",
    "Neighbor_alltoall",
    "Neighbor_alltoallv",
    "Neighbor_alltoallw",
];

fn mpi(report: &Value) -> &Value {
    &report["mpi"]
}

// ----- the programs ------------------------------------------------------------

#[test]
fn collectives_are_transparent_and_merged_on_2_to_4_ranks() {
    let exe = c_program("collectives.c");
    for ranks in 2..=4 {
        let (text, reports) = same_output(&exe, ranks, "collectives", &[]);
        assert!(text.contains(" 0 failed checks"), "{text}");
        for (r, report) in reports.ranks.iter().enumerate() {
            let what = format!("collectives rank {r} of {ranks}");
            assert_regions(
                report,
                &[
                    "MPI_Barrier",
                    "MPI_Bcast",
                    "MPI_Gatherv",
                    "MPI_Scatterv",
                    "MPI_Allgatherv",
                    "MPI_Alltoallw",
                    "MPI_Reduce",
                    "MPI_Allreduce",
                    "MPI_Reduce_scatter_block",
                    "MPI_Scan",
                    "MPI_Exscan",
                    "MPI_Ibcast",
                    "MPI_Ialltoallw",
                    "MPI_Iscan",
                ],
                &what,
            );
            assert_eq!(
                report["locations"].as_array().map(Vec::len),
                Some(1),
                "{what}"
            );
            compensated_not_above_measured(report, &what);
            let coll = &mpi(report)["collectives"];
            let exchanges = coll["exchanges"].as_u64().expect("exchanges");
            let merges = coll["merges"].as_u64().expect("merges");
            // 16 blocking calls in the program's checks alone, plus one
            // gather per result line, plus the nonblocking ones
            assert!(exchanges >= 40, "{what}: {coll}");
            assert!(merges >= 20 && merges <= exchanges, "{what}: {coll}");
            assert_eq!(coll["record_bytes"].as_u64(), Some(BYTES as u64));
        }
        if let Some(run) = reports.run {
            assert_eq!(
                run["locations"].as_array().map(Vec::len),
                Some(ranks as usize)
            );
        }
    }
}

#[test]
fn large_count_collectives_are_transparent_and_merged_on_2_and_3_ranks() {
    let exe = c_program("coll_large.c");
    for ranks in [2, 3] {
        let (text, reports) = same_output(&exe, ranks, "coll-large", &[]);
        assert!(text.contains(" 0 failed checks"), "{text}");
        for (r, report) in reports.ranks.iter().enumerate() {
            let what = format!("coll_large rank {r} of {ranks}");
            let names = region_names(report);
            for call in LARGE_COUNT {
                let nonblocking = format!("I{}{}", call[..1].to_lowercase(), &call[1..]);
                for region in [format!("MPI_{call}_c"), format!("MPI_{nonblocking}_c")] {
                    assert!(names.contains(&region), "{what}: no {region} in {names:?}");
                }
            }
            compensated_not_above_measured(report, &what);
            let coll = &mpi(report)["collectives"];
            // 42 calls, one exchange each, plus the program's own result
            // gathers and Cart_create, Comm_free aside
            let exchanges = coll["exchanges"].as_u64().expect("exchanges");
            assert!(exchanges >= 42, "{what}: {coll}");
        }
    }
}

#[test]
fn persistent_collectives_are_transparent_and_merged_at_each_completion_on_2_to_4_ranks() {
    let exe = c_program("coll_persistent.c");
    for ranks in 2..=4 {
        let (text, reports) = same_output(&exe, ranks, "coll-persistent", &[]);
        assert!(text.contains(" 0 failed checks"), "{text}");
        for (r, report) in reports.ranks.iter().enumerate() {
            let what = format!("coll_persistent rank {r} of {ranks}");
            let names = region_names(report);
            for call in LARGE_COUNT {
                for region in [format!("MPI_{call}_init"), format!("MPI_{call}_init_c")] {
                    assert!(names.contains(&region), "{what}: no {region} in {names:?}");
                }
            }
            assert!(names.contains(&"MPI_Barrier_init".to_owned()), "{what}");
            compensated_not_above_measured(report, &what);
            let coll = &mpi(report)["collectives"];
            let persistent = &coll["persistent"];
            // 22 int and 21 large-count requests, the barrier made with
            // the table full on rank 0 and the allreduce left for
            // MPI_Finalize: each with heisen's own exchange, freed with it
            // (at MPI_Finalize for the last)
            assert_eq!(
                persistent["tracked"].as_u64(),
                Some(45),
                "{what}: {persistent}"
            );
            // the gather whose initialisation failed on rank 0 alone: the
            // others made it and agreed with rank 0 on no room
            assert_eq!(
                persistent["untracked"].as_u64(),
                Some(u64::from(r != 0)),
                "{what}: {persistent}"
            );
            assert_eq!(persistent["open"].as_u64(), Some(0), "{what}: {persistent}");
            // three rounds (one beyond 2 ranks: coll_persistent.c says
            // why) of 18 and of 17, the 4 + 4 started once, the barrier 3
            // times: each start starts heisen's exchange, and each
            // completion makes it
            let starts = if ranks == 2 { 117 } else { 47 };
            for figure in ["starts", "completions"] {
                assert_eq!(
                    persistent[figure].as_u64(),
                    Some(starts),
                    "{what}: {figure}: {persistent}"
                );
            }
            let exchanges = coll["exchanges"].as_u64().expect("exchanges");
            assert!(exchanges >= starts, "{what}: {coll}");
            // the barrier found rank 0's table full and was kept beyond
            // it, tracked: not an overflow
            let requests = &mpi(report)["requests"];
            assert_eq!(requests["overflow"].as_u64(), Some(0), "{what}: {requests}");
            assert_eq!(
                requests["beyond"].as_u64(),
                Some(u64::from(r == 0)),
                "{what}: {requests}"
            );
        }
    }
}

#[test]
fn windows_are_transparent_and_their_synchronisation_merged_on_2_to_4_ranks() {
    let exe = c_program("rma.c");
    for ranks in 2..=4 {
        let (text, reports) = same_output(&exe, ranks, "rma", &[]);
        assert!(text.contains(" 0 failed checks"), "{text}");
        for (r, report) in reports.ranks.iter().enumerate() {
            let what = format!("rma rank {r} of {ranks}");
            assert_regions(report, &WINDOW_CALLS, &what);
            assert_regions(report, &["MPI_Win_create_c"], &what);
            compensated_not_above_measured(report, &what);
            // five windows made each way; on 2 ranks also 200 in turn,
            // and of 300 at once the first 64 (the table's capacity), on
            // every rank alike
            let two = ranks == 2;
            let (tracked, untracked) = if two { (5 + 200 + 64, 236) } else { (5, 0) };
            // a start and a wait or successful test of a tracked window
            // merged in each of three rings, one gather, one NOCHECK epoch
            // (its wait only), one ring on Win_allocate, and on 2 ranks
            // one on the first of the 300 (none on the untracked last)
            let merges = if two { 12 } else { 10 };
            assert_windows(report, tracked, untracked, merges, &what);
        }
    }
}

#[test]
fn communicators_are_transparent_and_merged_on_2_to_4_ranks() {
    let exe = c_program("comm.c");
    for ranks in 2..=4 {
        let (text, reports) = same_output(&exe, ranks, "comm", &[]);
        assert!(text.contains(" 0 failed checks"), "{text}");
        for (r, report) in reports.ranks.iter().enumerate() {
            let what = format!("comm rank {r} of {ranks}");
            assert_regions(
                report,
                &[
                    "MPI_Comm_dup",
                    "MPI_Comm_dup_with_info",
                    "MPI_Comm_split",
                    "MPI_Comm_split_type",
                    "MPI_Comm_create",
                    "MPI_Comm_free",
                    "MPI_Intercomm_create",
                    "MPI_Intercomm_merge",
                ],
                &what,
            );
            compensated_not_above_measured(report, &what);
            let coll = &mpi(report)["collectives"];
            // 200 splits in the churn alone, each merged
            assert!(
                coll["merges"].as_u64().expect("merges") >= 200,
                "{what}: {coll}"
            );
            // collectives on the intercommunicator are regions only
            assert!(
                coll["unmerged"].as_u64().expect("unmerged") >= 2,
                "{what}: {coll}"
            );
        }
    }
}

#[test]
fn pcontrol_is_transparent_and_starts_and_stops_the_path() {
    let exe = c_program("pcontrol.c");
    for ranks in [2, 3] {
        let (text, reports) = same_output(&exe, ranks, "pcontrol", &[]);
        assert!(text.contains(" 0 failed checks"), "{text}");
        for report in &reports.ranks {
            compensated_not_above_measured(report, "pcontrol");
            // the last level the program set is 1: collection runs (R9)
            let l = &report["locations"][0];
            assert!(l["critical_path"].is_object(), "critical path in {l}");
        }
    }
}

#[test]
fn a_path_stopped_by_pcontrol_is_reported_as_frozen_at_the_stop() {
    // miniFE's pattern: stop after MPI_Init, start for the solver, stop
    // after it. The report used to hold no critical path at all (R9).
    let exe = c_program("pcontrol_phase.c");
    let (text, reports) = same_output(&exe, 2, "pcontrol_phase", &[]);
    assert!(text.contains(" 0 failed checks"), "{text}");
    for report in &reports.ranks {
        compensated_not_above_measured(report, "pcontrol_phase");
        let l = &report["locations"][0];
        let path = &l["critical_path"];
        assert!(path.is_object(), "critical path in {l}");
        assert!(path["longest"].as_i64().unwrap_or(0) > 0, "{path}");
    }
}

#[test]
fn delay_only_form_keeps_the_output_and_reports_its_form() {
    let exe = c_program("collectives.c");
    let (_, reports) = same_output(&exe, 3, "delay-only", &[("HEISEN_FORM", "delay-only")]);
    for report in &reports.ranks {
        compensated_not_above_measured(report, "delay-only");
        assert_eq!(report["header"]["form"].as_str(), Some("delay-only"));
    }
}

#[test]
fn clock_alignment_is_reported_per_rank() {
    let exe = c_program("collectives.c");
    let (_, reports) = same_output(&exe, 3, "clock", &[]);
    for (r, report) in reports.ranks.iter().enumerate() {
        let clock = &mpi(report)["clock"];
        assert_eq!(clock["aligned"], Value::Bool(true), "rank {r}: {clock}");
        // one machine: every rank shares the node, offsets are not applied
        assert_eq!(clock["one_node"], Value::Bool(true), "rank {r}: {clock}");
        assert_eq!(clock["node_ranks"].as_u64(), Some(3));
        // one TSC conversion for the node where it can be shared
        let expected = if tsc_shareable() {
            "tsc_node"
        } else {
            "clock_monotonic"
        };
        assert_eq!(clock["clock"].as_str(), Some(expected), "rank {r}: {clock}");
        assert_eq!(clock["offset_applied"], Value::Bool(false));
        assert!(clock["error_ns"].as_u64().is_some(), "rank {r}: {clock}");
        if r == 0 {
            assert_eq!(clock["offset_init_ns"].as_i64(), Some(0));
        }
        assert!(
            clock["offset_final_ns"].as_i64().is_some(),
            "rank {r}: {clock}"
        );
    }
}

/// The same programs with their ranks on two nodes (`HEISEN_NODE`, one
/// machine, interleaved: ranks 0 and 2 on `a`, 1 and 3 on `b`): each
/// node has its own clock, so every record crossing nodes is shifted by
/// the measured offsets (`align::to_common`, `to_local`, R5). Output
/// byte for byte the plain run's, compensated never above measured.
#[test]
fn collectives_and_communicators_are_transparent_across_two_nodes() {
    let nodes = ["a", "b", "a", "b"];
    for name in ["collectives.c", "comm.c", "unseen_silent.c"] {
        let exe = c_program(name);
        let plain = run(&exe, 4, None, &[]);
        let dir = fresh_dir(&format!("nodes-{name}"));
        let measured = run_on(&exe, &Nodes::Named(&nodes), Some(&dir), &[]);
        assert_eq!(
            String::from_utf8_lossy(&plain),
            String::from_utf8_lossy(&measured),
            "{name} on two nodes: output differs with the interposer"
        );
        for (r, report) in reports(&dir, 4).ranks.iter().enumerate() {
            compensated_not_above_measured(report, &format!("{name} rank {r}"));
            let clock = &mpi(report)["clock"];
            assert_eq!(clock["one_node"], Value::Bool(false), "rank {r}: {clock}");
            assert_eq!(
                clock["offset_applied"],
                Value::Bool(true),
                "rank {r}: {clock}"
            );
        }
    }
}

/// The set-up's ping-pongs run along a binomial tree, not from rank 0 to
/// every rank in turn: MPICH's `comm/ic2` (33 ranks on 2 cores) timed out
/// with heisen because 32 × 12 sequential round trips each waited for a
/// time slice of busy-polling ranks. Each rank's partners are its tree
/// parent and children (at most ⌈log2 P⌉ + 1; rank 0 has 3 of 7 others
/// at 8 ranks), and every rank still gets its offsets measured.
#[test]
fn clock_alignment_runs_along_a_tree_on_8_ranks() {
    // a ring, a wildcard and a collective, printing nothing
    let exe = c_program("unseen_silent.c");
    let ranks = 8u32;
    let (_, reports) = same_output(&exe, ranks, "tree", &[]);
    for (r, report) in reports.ranks.iter().enumerate() {
        let clock = &mpi(report)["clock"];
        assert_eq!(clock["aligned"], Value::Bool(true), "rank {r}: {clock}");
        // parent (all but rank 0) and children r + 2^k, 2^k > r
        let children = (0..3)
            .map(|k| 1usize << k)
            .filter(|&step| step > r && r + step < ranks as usize)
            .count();
        let expected = children + usize::from(r > 0);
        assert_eq!(
            clock["partners"].as_u64(),
            Some(expected as u64),
            "rank {r}: {clock}"
        );
        assert!(
            clock["offset_init_ns"].as_i64().is_some(),
            "rank {r}: {clock}"
        );
        assert!(
            clock["offset_final_ns"].as_i64().is_some(),
            "rank {r}: {clock}"
        );
    }
    let zero = &mpi(&reports.ranks[0])["clock"];
    assert_eq!(zero["partners"].as_u64(), Some(3), "{zero}");
}

/// Whether this machine's processes can share one TSC conversion (as
/// `tests/common`'s, which this file does not include).
fn tsc_shareable() -> bool {
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    cfg!(target_arch = "x86_64")
        && has("constant_tsc")
        && has("nonstop_tsc")
        && source.trim() == "tsc"
}

#[test]
fn tsc_clocks_are_aligned_by_their_measured_offsets() {
    // each process scales its TSC by its own calibration: not one clock
    let exe = c_program("pcontrol.c");
    let (_, reports) = same_output(&exe, 2, "clock-tsc", &[("HEISEN_CLOCK", "tsc")]);
    for report in &reports.ranks {
        let clock = &mpi(report)["clock"];
        if clock["clock"].as_str() == Some("tsc") {
            assert_eq!(clock["offset_applied"], Value::Bool(true), "{clock}");
        }
        compensated_not_above_measured(report, "tsc");
    }
}

#[test]
fn fortran_mpif_h_and_use_mpi_are_intercepted() {
    for name in ["coll_mpif.f90", "coll_usempi.f90"] {
        let exe = fortran_program(name);
        for ranks in [2, 3] {
            let (text, reports) = same_output(&exe, ranks, name, &[]);
            assert!(text.contains(" failed 0"), "{text}");
            for report in &reports.ranks {
                assert_regions(
                    report,
                    &[
                        "MPI_Send",
                        "MPI_Recv",
                        "MPI_Bcast",
                        "MPI_Allreduce",
                        "MPI_Barrier",
                    ],
                    name,
                );
                compensated_not_above_measured(report, name);
            }
            assert!(reports.run.is_some(), "{name}: a run report");
        }
    }
}

#[test]
fn fortran_mpi_f08_is_transparent_and_intercepted() {
    let exe = fortran_program("coll_f08.f90");
    for ranks in [2, 3] {
        let (text, reports) = same_output(&exe, ranks, "f08", &[]);
        assert!(text.contains(" failed 0"), "{text}");
        for report in &reports.ranks {
            // MPICH's mpi_f08 calls these through their C names, and
            // MPI_Barrier through PMPI_Barrier, which heisen reaches by
            // defining the binding's mpi_barrier_f08_ (src/fortran08.rs)
            assert_regions(
                report,
                &[
                    "MPI_Send",
                    "MPI_Recv",
                    "MPI_Bcast",
                    "MPI_Allreduce",
                    "MPI_Barrier",
                ],
                "f08",
            );
        }
    }
}

#[test]
fn windows_synchronise_from_two_threads_of_a_rank() {
    let exe = c_program("rma_threads.c");
    let (text, reports) = same_output(&exe, 2, "rma-threads", &[]);
    assert!(text.contains(" 0 failed checks"), "{text}");
    for report in &reports.ranks {
        // the shared window and 2 × 20 made in two threads at once, the
        // table never past its capacity; 20 epochs on the rank itself,
        // a start and a successful test merged in each
        assert_windows(report, 41, 0, 40, "rma threads");
        compensated_not_above_measured(report, "rma threads");
    }
}

#[test]
fn fortran_mpi_f08_windows_are_transparent_and_synchronised_through_heisen() {
    let exe = fortran_program("rma_f08.f90");
    for ranks in [2, 3] {
        let (text, reports) = same_output(&exe, ranks, "rma-f08", &[]);
        assert!(text.contains("rma_f08 failed 0"), "{text}");
        for report in &reports.ranks {
            // MPICH's mpi_f08 calls these through PMPI_* (all but
            // MPI_Win_create): heisen defines the binding's symbols
            assert_regions(report, &WINDOW_CALLS, "f08");
            assert_regions(report, &["MPI_Win_allocate_c", "MPI_Win_sync"], "f08");
            // five windows, each freed through heisen; a start and a wait
            // or test merged in each of two epochs
            assert_windows(report, 5, 0, 4, "rma f08");
            compensated_not_above_measured(report, "rma f08");
        }
    }
}
