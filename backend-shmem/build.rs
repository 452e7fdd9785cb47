//! A hash of the runtime's sources and of the compiler's version, for the
//! fingerprint that two copies of the runtime in one process must share
//! to share a runtime (DESIGN §2, one runtime per real process;
//! `src/runtime.rs`, `ABI`, which also folds in heisen-core's
//! `SOURCE_HASH`). The crate version and the types'
//! sizes alone let copies of two builds of one version share a runtime
//! whose layouts differ: a field that changed type within its padding
//! (2026-11-29) corrupted memory when a `libheisen_mpi.so` and a
//! `libheisen_pthread.so` of two commits were preloaded together.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    };
    // heisen-core's sources come in as `heisen_core::SOURCE_HASH` (its
    // own build.rs, which walks its sources the same way: two crates'
    // build scripts cannot share a file and still package alone).
    let root = manifest.join("src");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut list = Vec::new();
    files(&root, &mut list);
    list.sort();
    for path in list {
        let relative = path.strip_prefix(&root).unwrap_or(&path);
        feed(relative.to_string_lossy().as_bytes());
        feed(&std::fs::read(&path).unwrap_or_default());
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    if let Ok(out) = std::process::Command::new(rustc).arg("-V").output() {
        feed(&out.stdout);
    }
    println!("cargo:rustc-env=HEISEN_SOURCE_HASH={h:016x}");
}
