//! A hash of this crate's sources, `heisen_core::SOURCE_HASH`: the process
//! runtime folds it into the fingerprint two copies of its code must share
//! to share one runtime (DESIGN §2, "one runtime per real process";
//! heisen-shmem's `build.rs`), so that copies built on two versions of
//! this kernel's sources refuse each other wherever the crate comes from.

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
    let root =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("src");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut list = Vec::new();
    files(&root, &mut list);
    list.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for path in list {
        let relative = path.strip_prefix(&root).unwrap_or(&path);
        for b in relative
            .to_string_lossy()
            .as_bytes()
            .iter()
            .chain(&std::fs::read(&path).unwrap_or_default())
        {
            h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=HEISEN_CORE_SOURCE_HASH={h:016x}");
}
