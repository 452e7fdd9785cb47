//! The live monitor's writer (R10): with HEISEN_MONITOR=1 the runtime
//! makes `/dev/shm/heisen.<pid>.monitor`, every thread publishes its
//! `(L, s, n)` there, the selected regions are named in the header, and the
//! file is gone after the exit; without it no file is made.

mod common;

use core::sync::atomic::AtomicU64;
use std::path::PathBuf;

use common::*;
use heisen_core::Dependency;
use heisen_core::monitor::{Reader, Sample};
use heisen_shmem::SELECTED;

/// A little work the optimiser cannot remove.
fn spin(n: u64) -> u64 {
    (0..n).fold(0u64, |a, i| core::hint::black_box(a.wrapping_add(i * i)))
}

/// A copy of the table file as atomic words (read once the threads are
/// done, so the copy is the table).
fn table_copy(path: &std::path::Path) -> Vec<AtomicU64> {
    let bytes = std::fs::read(path).expect("read the monitor table");
    bytes
        .chunks_exact(8)
        .map(|c| AtomicU64::new(u64::from_ne_bytes(c.try_into().expect("8 bytes"))))
        .collect()
}

/// Spawns a measured thread whose start merges this thread's release and
/// whose end this thread's join merges (R8), as the thread wrappers do.
fn spawn_joined(work: u64) {
    let rt = heisen_shmem::runtime();
    let parent = heisen_shmem::with_current(|s| s.release(rt.builtin().release))
        .expect("the main thread is measured");
    let child = std::thread::spawn(move || {
        assert!(heisen_shmem::thread::start_current(&parent));
        heisen_shmem::in_region("exchange", || spin(work));
        heisen_shmem::thread::finish_current().expect("the child's end record")
    });
    let begin = heisen_shmem::with_current(|s| s.now()).expect("measured");
    let end = child.join().expect("child");
    heisen_shmem::with_current(|s| {
        s.merge(begin, &[Dependency::immediate(&end)], rt.builtin().merge)
    });
}

#[test]
fn every_thread_publishes_and_the_file_goes_at_exit() {
    if is_child("every_thread_publishes_and_the_file_goes_at_exit") {
        let rt = heisen_shmem::runtime();
        let path: PathBuf = rt.monitor().expect("HEISEN_MONITOR=1").path().to_owned();
        assert_eq!(path, heisen_shmem::monitor::path_of(std::process::id()));
        println!("\nchild pid {}", std::process::id());
        let _solve = heisen_shmem::region("solve");
        spin(10_000);
        spawn_joined(20_000);
        spawn_joined(5_000);
        // The second join was this thread's last event, and it published.
        let last_join =
            heisen_shmem::with_current(|s| s.kernel().last_measured()).expect("measured");
        let words = table_copy(&path);
        let reader = Reader::<_, SELECTED>::open(&words).expect("a valid table");
        assert_eq!(reader.header().pid, u64::from(std::process::id()));
        let name = |k| {
            reader
                .name(k)
                .expect("not being written")
                .map(|n| String::from_utf8(n.as_bytes().to_vec()).expect("utf-8"))
        };
        assert_eq!(name(0).as_deref(), Some("solve"));
        assert_eq!(name(1).as_deref(), Some("exchange"));
        assert_eq!(name(2), None);
        let samples: Vec<Sample<SELECTED>> = (0..reader.used())
            .map(|i| reader.sample(i).expect("not being written"))
            .map(|s| s.expect("every claimed slot was written"))
            .collect();
        assert_eq!(samples.len(), 3, "main and two children: {samples:?}");
        let main = &samples[0];
        assert!(!main.ended && main.path.active);
        assert_eq!(main.time, last_join);
        // The main thread's path runs through `solve` from the start, and
        // each join took the longer of its own path and the child's (R7,
        // R8); which one won depends on the machine's timing.
        assert!(main.path.inclusive[0] > 0, "{main:?}");
        for child in &samples[1..] {
            assert!(child.ended, "{child:?}");
            assert!(child.path.inclusive[1] > 0, "{child:?}");
            // R8: a child starts on its spawner's path, `solve` share and
            // all (its registration is overhead, not work that would beat
            // that path).
            assert!(child.path.inclusive[0] > 0, "{child:?}");
            assert!(
                main.path.longest >= child.path.longest,
                "{main:?} {child:?}"
            );
        }
        return;
    }
    let dir = out_dir("monitor_publishes");
    let out = child(
        "every_thread_publishes_and_the_file_goes_at_exit",
        &[
            ("HEISEN_OUTPUT", dir.to_str().expect("utf-8 path")),
            ("HEISEN_MONITOR", "1"),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("heisen:"),
        "no note without HEISEN_SUMMARY: {stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let pid: u32 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("child pid "))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("the child's pid: {stdout}"));
    assert!(
        !heisen_shmem::monitor::path_of(pid).exists(),
        "the table is removed at exit"
    );
    assert_eq!(
        report_in(&dir)["locations"].as_array().map(Vec::len),
        Some(3)
    );
}

#[test]
fn the_summary_says_where_the_table_is() {
    if is_child("the_summary_says_where_the_table_is") {
        heisen_shmem::in_region("a", || spin(100));
        return;
    }
    let dir = out_dir("monitor_summary");
    let out = child(
        "the_summary_says_where_the_table_is",
        &[
            ("HEISEN_OUTPUT", dir.to_str().expect("utf-8 path")),
            ("HEISEN_MONITOR", "1"),
            ("HEISEN_SUMMARY", "1"),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("heisen: live monitor at /dev/shm/heisen.")
            && stderr.contains("heisen monitor "),
        "{stderr}"
    );
}

#[test]
fn without_heisen_monitor_there_is_no_table() {
    if is_child("without_heisen_monitor_there_is_no_table") {
        heisen_shmem::in_region("a", || spin(100));
        assert!(heisen_shmem::runtime().monitor().is_none());
        assert!(!heisen_shmem::monitor::path_of(std::process::id()).exists());
        return;
    }
    let dir = out_dir("monitor_off");
    let out = child(
        "without_heisen_monitor_there_is_no_table",
        &[("HEISEN_OUTPUT", dir.to_str().expect("utf-8 path"))],
    );
    assert!(out.status.success(), "{out:?}");
}

/// A registry slot reused by a later thread loses its sample to it; the
/// ended location's last values first go into the table's last slot,
/// combined (R10), so the maximum over the table still counts it: here
/// the first thread, which did the most work, ended long before the
/// table was read and its slot is someone else's. (Compared with the
/// first thread's own path as it saw it, not with the other threads':
/// any of those may have been preempted for longer than the first one
/// worked.)
#[test]
fn ended_threads_whose_slots_were_reused_still_count_in_the_table() {
    const THREADS: u64 = 600;
    let name = "ended_threads_whose_slots_were_reused_still_count_in_the_table";
    if is_child(name) {
        let rt = heisen_shmem::runtime();
        let path: PathBuf = rt.monitor().expect("HEISEN_MONITOR=1").path().to_owned();
        heisen_shmem::in_region("main", || spin(10));
        let mut first = 0;
        for i in 0..THREADS {
            let work = if i == 0 { 2_000_000 } else { 1_000 };
            let longest = std::thread::spawn(move || {
                heisen_shmem::in_region("work", || spin(work));
                heisen_shmem::with_current(|s| s.snapshot().longest).expect("measured")
            })
            .join()
            .expect("thread");
            if i == 0 {
                first = longest;
            }
        }
        let words = table_copy(&path);
        let reader = Reader::<_, SELECTED>::open(&words).expect("a valid table");
        let ended_slot = heisen_shmem::monitor::ENDED_SLOT;
        assert_eq!(reader.used(), ended_slot + 1);
        let ended = reader
            .sample(ended_slot)
            .expect("not being written")
            .expect("written when a slot was reused");
        assert!(ended.ended, "{ended:?}");
        assert!(first > 0);
        assert!(
            ended.path.longest >= first,
            "the first thread's path ({first}) is not in the ended slot ({})",
            ended.path.longest
        );
        let slot_of_first = (0..ended_slot)
            .filter_map(|i| reader.sample(i).expect("not being written"))
            .any(|s| s.path.location == 1);
        assert!(!slot_of_first, "the first thread's slot was reused");
        return;
    }
    let dir = out_dir("monitor_reused");
    let out = child(
        name,
        &[
            ("HEISEN_OUTPUT", dir.to_str().expect("utf-8 path")),
            ("HEISEN_MONITOR", "1"),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("heisen:"),
        "{out:?}"
    );
    let report = report_in(&dir);
    assert_eq!(
        report["locations"].as_array().map(Vec::len),
        Some(THREADS as usize + 1)
    );
}
