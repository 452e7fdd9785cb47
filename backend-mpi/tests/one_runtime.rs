//! The C region API and the MPI interposer in one process share one
//! runtime (DESIGN §2): a program linked with `libheisen.so` and run with
//! `libheisen_mpi.so` preloaded has one location per rank whose report
//! holds both its C regions and its MPI calls; and rank 0's delay, caused
//! by its regions, reaches rank 1 through the message it waited for
//! (R3, R4/R5).

mod common;

use std::path::Path;
use std::process::Command;

use common::{library, require, run, scratch};
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

#[test]
fn c_regions_and_mpi_share_one_runtime_and_delay_crosses_ranks() {
    require("mpicc");
    let dir = scratch("one-runtime");
    let deps = library().parent().expect("deps").to_path_buf();
    assert!(deps.join("libheisen.so").exists(), "libheisen.so not built");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = dir.join("regions");
    let out = Command::new("mpicc")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(manifest.join("tests/c/regions.c"))
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
