//! The live monitor (R10): with `HEISEN_MONITOR=1` every measured thread
//! publishes its `(L, s, n)` into a table in shared memory,
//! `/dev/shm/heisen.<pid>.monitor`, which `heisen monitor <pid>` reads
//! while the program runs, without stopping it.
//!
//! The table's layout and its seqlock are the core's
//! ([`heisen_core::monitor`], `docs/monitor.md`). This module makes the
//! file, maps it shared, hands each thread its slot (slot `i` belongs to
//! registry index `i`), names the selected regions as they are interned,
//! and removes the file when the report is written. A registry slot is
//! reused once its thread is gone: the ended locations whose slots were
//! reused are combined (R10: the maximum path, the winner's shares, each
//! net's maximum) into one more slot, [`ENDED_SLOT`], marked ended.
//!
//! When a thread publishes (see `ThreadState`): at every release and merge
//! (the path may have grown or jumped there), at its start and end, and at
//! a region enter or exit once [`INTERVAL`] of its measured time has passed
//! since its last publication. Without a monitor that check is the same one
//! compare against `u64::MAX`, so the hot path does not change.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use heisen_core::monitor::{
    DIRECTORY, FILE_PREFIX, FILE_SUFFIX, Header, Layout, SlotWriter, Writer,
};
use memmap2::{MmapOptions, MmapRaw};

use crate::SELECTED;
use crate::runtime::MAX_THREADS;

/// At most one publication per this many ns of a thread's measured time
/// at region enters and exits (1 ms); releases and merges always publish.
pub const INTERVAL: u64 = 1_000_000;

/// The registry index the calibration's scratch states use: they publish
/// to a private slot no reader sees, so that calibration times the
/// publications too (R1).
pub(crate) const SCRATCH: u32 = u32::MAX;

/// The table's slot of the ended locations whose registry slots were
/// reused (after the [`MAX_THREADS`] threads' slots).
pub const ENDED_SLOT: usize = MAX_THREADS;

/// A thread's slot in the table.
pub type Slot = SlotWriter<'static, AtomicU64, SELECTED>;

/// The table path of process `pid`.
pub fn path_of(pid: u32) -> PathBuf {
    Path::new(DIRECTORY).join(format!("{FILE_PREFIX}{pid}{FILE_SUFFIX}"))
}

/// The process's monitor table.
#[derive(Debug)]
pub struct Monitor {
    map: MmapRaw,
    path: PathBuf,
    layout: Layout,
    /// The calibration's slot, outside the shared table.
    scratch: Box<[AtomicU64]>,
    /// Which selected regions are named in the header already.
    named: [AtomicBool; SELECTED],
    /// One writer of the names at a time.
    naming: Mutex<()>,
    removed: AtomicBool,
}

impl Monitor {
    /// Creates `/dev/shm/heisen.<pid>.monitor` (replacing a stale one of a
    /// dead process with the same pid), sized for every thread the
    /// registry holds, and writes its header.
    pub(crate) fn create(pid: u32, start: u64) -> Result<Monitor, String> {
        let path = path_of(pid);
        let layout = Layout::new(SELECTED, MAX_THREADS + 1);
        let fail = |what: &str, e: std::io::Error| {
            format!(
                "HEISEN_MONITOR: cannot {what} {} ({e}); running without the live monitor",
                path.display()
            )
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| fail("create", e))?;
        // A new size after truncation: every word reads 0 (no slot written).
        file.set_len(layout.bytes() as u64)
            .map_err(|e| fail("size", e))?;
        let map = MmapOptions::new()
            .len(layout.bytes())
            .map_raw(&file)
            .map_err(|e| fail("map", e))?;
        // The mapping keeps the memory; the file descriptor can go.
        drop(file);
        let monitor = Monitor {
            map,
            path,
            layout,
            scratch: (0..layout.slot_words())
                .map(|_| AtomicU64::new(0))
                .collect(),
            named: [const { AtomicBool::new(false) }; SELECTED],
            naming: Mutex::new(()),
            removed: AtomicBool::new(false),
        };
        Writer::create(
            monitor.words(),
            layout,
            Header {
                pid: u64::from(pid),
                start,
            },
        )
        .map_err(|e| format!("HEISEN_MONITOR: {e}"))?;
        Ok(monitor)
    }

    /// The table's words.
    fn words(&self) -> &[AtomicU64] {
        let words = self.layout.words();
        debug_assert!(self.map.len() >= words * 8);
        // SAFETY: the mapping is page-aligned (so 8-byte aligned), at least
        // `words * 8` bytes long (sized in `create`), and lives as long as
        // `self`; `AtomicU64` has the size and alignment of `u64`. Every
        // access to it, here and in reader processes, is atomic (the core's
        // `Word`), and nothing takes a plain reference to the bytes.
        #[allow(unsafe_code)] // reason: the shared mapping seen as atomic words
        unsafe {
            core::slice::from_raw_parts(self.map.as_ptr().cast::<AtomicU64>(), words)
        }
    }

    fn writer(&self) -> Option<Writer<'_, AtomicU64>> {
        Writer::attach(self.words(), self.layout).ok()
    }

    /// The table's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The slot of registry index `index` (the calibration's private one
    /// for [`SCRATCH`]); `None` beyond the table.
    pub(crate) fn slot(&'static self, index: u32) -> Option<Slot> {
        if index == SCRATCH {
            return SlotWriter::new(&self.scratch);
        }
        Writer::attach(self.words(), self.layout)
            .ok()?
            .claim::<SELECTED>(index as usize)
    }

    /// Publishes `path`, the combined final paths of the ended locations
    /// whose registry slots were reused, at measured time `time`. One
    /// writer: the registry calls it under its store's lock.
    pub(crate) fn publish_ended(&self, time: u64, path: &heisen_core::Snapshot<SELECTED>) {
        if let Some(slot) = self.writer().and_then(|w| w.claim::<SELECTED>(ENDED_SLOT)) {
            slot.publish(time, true, path);
        }
    }

    /// Names region `id` in the header if it is a selected one (R7) not
    /// named yet, so that readers can label its share.
    pub(crate) fn name_selected(&self, selected: &[u32; SELECTED], id: u32, name: &str) {
        let Some(k) = selected.iter().position(|&s| s == id) else {
            return;
        };
        if self.named[k].load(Ordering::Acquire) {
            return;
        }
        let _lock = self.naming.lock().unwrap_or_else(|p| p.into_inner());
        if self.named[k].load(Ordering::Relaxed) {
            return;
        }
        if let Some(writer) = self.writer() {
            writer.set_name(k, id, name);
        }
        self.named[k].store(true, Ordering::Release);
    }

    /// Removes the file (once); threads still running keep writing to the
    /// mapping, which lives on unnamed until the process ends.
    pub(crate) fn remove(&self) {
        if !self.removed.swap(true, Ordering::AcqRel) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
