//! Threads that end the process at once (`heisen_shmem::exit`): a second
//! `finish`, and a second thread in `exit`, go on only once the report is
//! whole, and the first thread in `exit` is told apart from the others.
//! One test: the runtime and the `exit` marker are the process's.

use std::path::{Path, PathBuf};

/// The one report in `dir`, parsed; panics if it is missing or not whole.
fn whole_report(dir: &Path) -> serde_json::Value {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("output directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "one report in {}: {files:?}", dir.display());
    let text = std::fs::read_to_string(&files[0]).expect("read");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("a whole report ({e}): {text:?}"))
}

#[test]
fn the_first_thread_in_exit_goes_on_and_a_second_finish_waits_for_the_report() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("exit_together");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("output directory");
    let config = heisen_shmem::Config {
        output: out.clone(),
        ..heisen_shmem::Config::from_env()
    };
    let rt = heisen_shmem::runtime::init_with(config).unwrap_or_else(|e| e.0);

    // The first thread in `exit`, again from one of its handlers, and
    // another thread meanwhile.
    assert!(rt.enter_exit());
    assert!(rt.enter_exit());
    let other = std::thread::spawn(move || rt.enter_exit());
    assert!(!other.join().expect("thread"));
    let me = heisen_shmem::exit::this_thread();
    assert!(heisen_shmem::exit::of_this_process(me));
    assert!(!heisen_shmem::exit::of_this_process(me ^ (1 << 32)));

    // Many threads with locations, each finishing the runtime at once:
    // one writes the report, every other returns only once it is whole.
    let barrier = std::sync::Barrier::new(8);
    let outcomes: Vec<(bool, Option<serde_json::Value>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (barrier, out) = (&barrier, &out);
                s.spawn(move || {
                    heisen_shmem::in_region("work", || (0..1000 * (i as u64 + 1)).sum::<u64>());
                    barrier.wait();
                    match rt.finish() {
                        Some(written) => (written.is_ok(), None),
                        None => (false, Some(whole_report(out))),
                    }
                })
            })
            .collect();
        // Another thread in `exit` once the writing has begun, as an
        // interposed `exit` begins it: it goes on only once the report is
        // whole (this thread was first in `exit`).
        while !rt.is_finished() {
            std::thread::yield_now();
        }
        let exiting = s.spawn(|| {
            heisen_shmem::exit::before_exit();
            whole_report(&out)
        });
        assert!(exiting.join().is_ok(), "a whole report when exit went on");
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    let writers = outcomes.iter().filter(|(wrote, _)| *wrote).count();
    assert_eq!(writers, 1, "one thread wrote the report");
    for (_, seen) in outcomes.iter().filter(|(wrote, _)| !wrote) {
        let r = seen.as_ref().expect("a report seen on return");
        assert!(!r["locations"].as_array().expect("locations").is_empty());
    }
    // Written: a later call returns at once.
    assert!(rt.finish().is_none());
    whole_report(&out);
}
