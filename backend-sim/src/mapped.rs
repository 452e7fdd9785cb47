//! Part of the `heisen` binary (declared in `main.rs`), not of the
//! library, which forbids unsafe code: maps a live monitor table
//! read-only and lends it out as the atomic words the core's reader takes.
//!
//! Why a mapping and not `pread`: the seqlock needs each word read by one
//! atomic load, with fences between the sequence and the record
//! (`heisen_core::monitor`); a `pread` copy gives neither. Loads from the
//! mapping are plain relaxed loads, which Rust allows on read-only memory,
//! and never touch the writer's cache lines for writing, so reading never
//! slows the program.

use core::sync::atomic::AtomicU64;
use std::fs::File;
use std::path::Path;

use memmap2::{MmapOptions, MmapRaw};

/// A table mapped read-only.
pub(crate) struct Mapped {
    map: MmapRaw,
    words: usize,
}

impl Mapped {
    /// Maps `path`, a file whose size is a whole number of 8-byte words.
    pub(crate) fn open(path: &Path) -> Result<Mapped, String> {
        let name = path.display();
        let file = File::open(path).map_err(|e| format!("{name}: cannot open: {e}"))?;
        let len = file
            .metadata()
            .map_err(|e| format!("{name}: cannot read its size: {e}"))?
            .len();
        if len == 0 || len % 8 != 0 {
            return Err(format!(
                "{name}: {len} bytes is not a heisen monitor table (a whole number of 8-byte words)"
            ));
        }
        let len = usize::try_from(len).map_err(|_| format!("{name}: too large to map"))?;
        let map = MmapOptions::new()
            .len(len)
            .map_raw_read_only(&file)
            .map_err(|e| format!("{name}: cannot map: {e}"))?;
        Ok(Mapped {
            map,
            words: len / 8,
        })
    }

    /// The table's words.
    pub(crate) fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is page-aligned (so aligned for `AtomicU64`,
        // which has the size and alignment of `u64`), `words * 8` bytes
        // long, and lives as long as `self`. It is read only through the
        // core reader's relaxed atomic loads (allowed on read-only memory);
        // the writing process writes it only with atomic stores. The writer
        // never shrinks the file (it sizes it once and unlinks it at exit,
        // which keeps the mapped pages); only another process truncating it
        // could make a read fault.
        #[allow(unsafe_code)] // reason: the shared mapping seen as atomic words
        unsafe {
            core::slice::from_raw_parts(self.map.as_ptr().cast::<AtomicU64>(), self.words)
        }
    }
}
