//! The C region API and the MPI interposer in one process share one
//! runtime (DESIGN §2): a program linked with `libheisen.so` and run with
//! `libheisen_mpi.so` preloaded has one location per rank whose report
//! holds both its C regions and its MPI calls; and rank 0's delay, caused
//! by its regions, reaches rank 1 through the message it waited for
//! (R3, R4/R5).

mod common;

use std::path::Path;
use std::process::Command;

use common::{library, require, run, run_with, scratch, tsc_shareable};
use serde_json::Value;

fn report(dir: &Path, rank: u32) -> Value {
    let text =
        std::fs::read_to_string(dir.join(format!("heisen.rank{rank}.json"))).expect("rank report");
    serde_json::from_str(&text).expect("JSON")
}

fn region_names(r: &Value) -> Vec<String> {
    let names = &r["regions"];
    let location = &r["locations"][0];
    location["regions"]
        .as_array()
        .expect("regions")
        .iter()
        .filter_map(|e| {
            let id = e["region"].as_u64()?;
            names
                .as_array()?
                .iter()
                .find(|n| n["id"].as_u64() == Some(id))
                .and_then(|n| n["name"].as_str().map(str::to_owned))
        })
        .collect()
}

/// `tests/c/<name>.c` built with mpicc against `libheisen.so`, in `dir`.
fn with_libheisen(dir: &Path, name: &str) -> std::path::PathBuf {
    require("mpicc");
    let deps = library().parent().expect("deps").to_path_buf();
    assert!(deps.join("libheisen.so").exists(), "libheisen.so not built");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = dir.join(name);
    let out = Command::new("mpicc")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(manifest.join(format!("tests/c/{name}.c")))
        .arg(format!("-I{}", manifest.join("../ffi/include").display()))
        .arg(format!("-L{}", deps.display()))
        .arg(format!("-Wl,-rpath,{}", deps.display()))
        .arg("-lheisen")
        .output()
        .expect("mpicc runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

#[test]
fn c_regions_and_mpi_share_one_runtime_and_delay_crosses_ranks() {
    let dir = scratch("one-runtime");
    let exe = with_libheisen(&dir, "regions");
    let (plain, measured) = (dir.join("plain"), dir.join("measured"));
    for d in [&plain, &measured] {
        std::fs::create_dir_all(d).expect("directory");
    }
    assert!(run(&exe, 2, None, &plain, &plain).status.success());
    let with = run(&exe, 2, Some(&library()), &measured, &measured);
    assert!(
        with.status.success(),
        "{}",
        String::from_utf8_lossy(&with.stderr)
    );
    for r in 0..2 {
        let name = format!("r{r}.txt");
        let read = |d: &Path| std::fs::read_to_string(d.join(&name)).expect("output");
        assert_eq!(read(&plain), read(&measured));
    }
    let (r0, r1) = (report(&measured, 0), report(&measured, 1));
    for r in [&r0, &r1] {
        assert_eq!(
            r["locations"].as_array().map(Vec::len),
            Some(1),
            "one location"
        );
        assert_eq!(
            r["runtime"]["shared"], true,
            "the two libraries shared one runtime"
        );
    }
    let names = region_names(&r0);
    assert!(
        names.contains(&"work".to_owned()) && names.contains(&"MPI_Send".to_owned()),
        "{names:?}"
    );
    assert!(region_names(&r1).contains(&"MPI_Recv".to_owned()));
    let delay = |r: &Value| r["locations"][0]["delay"].as_u64().expect("delay");
    let (d0, d1) = (delay(&r0), delay(&r1));
    // 200,000 region pairs cost milliseconds of delay on rank 0 (R1) ...
    assert!(d0 > 1_000_000, "rank 0's delay {d0} ns");
    // ... which rank 1, waiting for its message all along, inherits (R4:
    // x' = min(x + w, x_0); R5 with the transfer measured).
    assert!(
        d1 * 10 >= d0 * 8,
        "rank 1's delay {d1} ns against rank 0's {d0} ns"
    );
}

#[test]
fn window_synchronisation_neighbourhood_and_persistent_collectives_carry_delay_across_ranks() {
    // (scenario, the rank that works, the rank that waits for it)
    for (how, works, waits) in [
        ("fence", 0, 1),
        ("wait", 0, 1),
        ("start", 1, 0),
        ("neighbours", 0, 1),
        ("ineighbours", 0, 1),
        ("persistent", 0, 1),
        ("pneighbours", 0, 1),
    ] {
        let dir = scratch(&format!("sync-delay-{how}"));
        let exe = with_libheisen(&dir, "sync_delay");
        let (plain, measured) = (dir.join("plain"), dir.join("measured"));
        for d in [&plain, &measured] {
            std::fs::create_dir_all(d).expect("directory");
        }
        let args = [how];
        assert!(
            run_with(&exe, 2, None, &plain, &plain, &args, &[])
                .status
                .success()
        );
        let with = run_with(&exe, 2, Some(&library()), &measured, &measured, &args, &[]);
        assert!(
            with.status.success(),
            "{how}: {}",
            String::from_utf8_lossy(&with.stderr)
        );
        for r in 0..2 {
            let name = format!("r{r}.txt");
            let read = |d: &Path| std::fs::read_to_string(d.join(&name)).expect("output");
            assert_eq!(read(&plain), read(&measured), "{how}: rank {r}'s output");
        }
        // a region's measured and compensated inclusive time on a rank
        let times = |rank: u32, name: &str| -> (i64, i64) {
            let r = report(&measured, rank);
            let id = r["regions"]
                .as_array()
                .expect("regions")
                .iter()
                .find(|n| n["name"] == name)
                .unwrap_or_else(|| panic!("{how}: rank {rank} has no {name}"))["id"]
                .clone();
            let e = r["locations"][0]["regions"]
                .as_array()
                .expect("regions")
                .iter()
                .find(|e| e["region"] == id)
                .unwrap_or_else(|| panic!("{how}: {name} not entered on rank {rank}"))
                .clone();
            let n = |k: &str| e[k].as_i64().expect("a time");
            (n("measured_inclusive"), n("inclusive"))
        };
        // 1,000,000 region pairs cost milliseconds of the working rank's
        // time (R1): what compensation removes from its work ...
        let (work_measured, work_compensated) = times(works, "work");
        let charged = work_measured - work_compensated;
        assert!(
            charged > 1_000_000,
            "{how}: the work was charged {charged} ns"
        );
        // ... the rank waiting for it inherits in the window's
        // synchronisation call or the neighbourhood collective (R4/R5 for
        // post/start and complete/wait, R6 for the fence and the
        // neighbourhood)
        let call = match how {
            "fence" => "MPI_Win_fence",
            "wait" => "MPI_Win_wait",
            "start" => "MPI_Win_start",
            "neighbours" => "MPI_Neighbor_alltoall",
            // a nonblocking or persistent collective merges where it
            // completes
            _ => "MPI_Wait",
        };
        let (wait, compensated) = times(waits, call);
        // At most the whole wait can go: where the work was charged more
        // than the wait lasted (costs calibrated on a loaded machine), the
        // call is compensated to nothing, never below (no
        // over-compensation hidden: a negative time fails here).
        let expected = charged.min(wait);
        let removed = wait - compensated;
        assert!(
            removed * 10 >= expected * 8 && compensated >= 0,
            "{how}: {call} compensated from {wait} ns to {compensated} ns; \
             the work was charged {charged} ns"
        );
    }
}

#[test]
fn ranks_of_a_node_read_one_clock_and_no_message_arrives_before_it_left() {
    let dir = scratch("clock-sync");
    let exe = with_libheisen(&dir, "clocksync");
    let expected = if tsc_shareable() {
        "tsc_node"
    } else {
        "clock_monotonic"
    };
    // the default (one TSC conversion per node where it can be) and the
    // monotonic clock, which a node's processes share too
    for (name, vars, clock) in [
        ("default", vec![], expected),
        (
            "monotonic",
            vec![("HEISEN_CLOCK", "monotonic")],
            "clock_monotonic",
        ),
    ] {
        let out_dir = dir.join(name);
        std::fs::create_dir_all(&out_dir).expect("directory");
        let with = common::run_with(&exe, 2, Some(&library()), &out_dir, &out_dir, &[], &vars);
        assert!(
            with.status.success(),
            "{}",
            String::from_utf8_lossy(&with.stderr)
        );
        for r in 0..2 {
            let line = std::fs::read_to_string(out_dir.join(format!("r{r}.txt"))).expect("output");
            let f: Vec<&str> = line.split_whitespace().collect();
            // "r<r> went_back B negative N least_ns L"
            assert_eq!(
                f[2], "0",
                "{name}: rank {r}'s clock went back at MPI_Init: {line}"
            );
            assert_eq!(
                f[4], "0",
                "{name}: rank {r} received messages before they were sent: {line}"
            );
            let least: i64 = f[6].parse().expect("least_ns");
            assert!(least >= 0, "{name}: {line}");
            let report = report(&out_dir, r);
            let c = &report["mpi"]["clock"];
            assert_eq!(c["clock"].as_str(), Some(clock), "{name}: {c}");
            assert_eq!(
                report["header"]["clock"].as_str(),
                Some(clock),
                "{name}: the header"
            );
            assert_eq!(
                c["node_clock"]["installed"].as_bool(),
                Some(clock == "tsc_node"),
                "{name}: {c}"
            );
            // one clock: nothing to apply between the two ranks, no error
            assert_eq!(c["offset_applied"], Value::Bool(false), "{name}: {c}");
            assert_eq!(c["one_clock"], Value::Bool(true), "{name}: {c}");
            assert_eq!(c["error_ns"].as_u64(), Some(0), "{name}: {c}");
            if clock == "tsc_node" {
                // the switch was offset by the node's largest gap: no
                // rank's clock was still ahead of the new one
                assert!(
                    c["node_clock"]["excess_ns"].as_i64().expect("excess") <= 0,
                    "{c}"
                );
                assert!(
                    c["node_clock"]["span_ns"].as_u64().expect("span") >= 20_000_000,
                    "{c}"
                );
            }
        }
    }
}
