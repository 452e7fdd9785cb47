//! What the fidelity and overhead runners share: finding the libraries
//! built beside them, compiling the C examples with `mpicc`, running
//! `mpiexec` with or without the interposer, medians and the load.

#![allow(dead_code)] // reason: each runner uses part of it

use std::path::{Path, PathBuf};
use std::process::Command;

/// `<target>/<profile>` of this runner.
pub(crate) fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the runner's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("<target>/<profile>/examples/runner")
        .to_path_buf()
}

/// A shared library built in this profile (`lib<name>.so`; the copy in
/// `deps` is the one cargo rebuilt with the runner), with a clear message
/// when it is not there.
pub(crate) fn library(name: &str, package: &str) -> PathBuf {
    let profile = profile_dir();
    [profile.join("deps"), profile.clone()]
        .into_iter()
        .map(|d| d.join(format!("lib{name}.so")))
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            eprintln!(
                "lib{name}.so is not in {}: build it first (cargo build --release -p {package})",
                profile.display()
            );
            std::process::exit(2)
        })
}

/// A scratch directory for this run.
pub(crate) fn work_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("heisen-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("work directory");
    d
}

/// Compiles `examples/<source>` with `mpicc -O2` and `flags` into `exe`.
pub(crate) fn mpicc(source: &str, exe: &Path, flags: &[String]) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(source);
    let out = Command::new("mpicc")
        .arg("-O2")
        .arg(&src)
        .arg("-o")
        .arg(exe)
        .args(flags) // libraries after the source that uses them
        .output()
        .expect("run mpicc");
    if !out.status.success() {
        eprintln!("mpicc {source}: {}", String::from_utf8_lossy(&out.stderr));
        std::process::exit(2);
    }
}

/// Runs `exe args` on `ranks` ranks, under `nice -n -20` where allowed,
/// preloading `preload` with the environment `env`; returns stdout.
pub(crate) fn mpiexec(
    exe: &Path,
    args: &[String],
    ranks: u32,
    preload: Option<&Path>,
    env: &[(&str, String)],
) -> String {
    let mut cmd = Command::new("nice");
    cmd.args(["-n", "-20", "mpiexec", "-n"])
        .arg(ranks.to_string());
    if let Some(lib) = preload {
        cmd.arg("-genv").arg("LD_PRELOAD").arg(lib);
        for (k, v) in env {
            cmd.arg("-genv").arg(k).arg(v);
        }
    }
    let out = cmd
        .arg(exe)
        .args(args)
        .env_remove("HEISEN_DISABLE")
        .output()
        .expect("run mpiexec");
    if !out.status.success() {
        eprintln!(
            "{} failed: {}\n{}",
            exe.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        std::process::exit(1);
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The one-minute load average now.
pub(crate) fn load() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(f64::NAN)
}

/// The median (upper median for an even count); NaN when empty.
pub(crate) fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `min–max` of the loads seen.
pub(crate) fn load_range(loads: &[f64]) -> String {
    let min = loads.iter().copied().fold(f64::INFINITY, f64::min);
    let max = loads.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{min:.2}–{max:.2} (median {:.2})", median(loads))
}
