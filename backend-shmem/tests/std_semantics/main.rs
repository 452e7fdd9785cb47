//! std's own tests, run against heisen's drop-in wrappers: the tests of
//! `Mutex`, `RwLock`, `Condvar`, `Barrier` and of `thread::spawn`,
//! `Builder`, `JoinHandle` and `scope`, ported from Rust's standard library
//! tests (rust-lang/rust, `library/std/tests/sync/{mutex,rwlock,condvar,
//! barrier}.rs`, the older `library/std/src/sync/mutex/tests.rs` for
//! `test_arc_condvar_poison`, and `library/std/src/thread/tests.rs`;
//! MIT OR Apache-2.0, as this project) with std's types replaced by
//! heisen's. A user who swaps `std::sync::Mutex` for `heisen_shmem::Mutex`
//! expects every one of them to pass unchanged.
//!
//! Changes made in porting, none of which changes what a test asserts:
//! std runs most lock tests twice, for its unstable `nonpoison` locks and
//! for the poisoning ones; only the poisoning variant is ported (heisen's
//! locks poison, as std's stable ones). Sleeps that only widened a race
//! window are gone, and `test_is_finished` polls without a wall-clock
//! bound; `frob` draws from a seeded generator. Threads are spawned with
//! `heisen_shmem::spawn`, except where std's `thread::spawn` is kept on
//! purpose (`lots_and_lots` mixes both; the wrappers must work from threads
//! heisen did not start).
//!
//! 67 of std's tests are ported (mutex 14, rwlock 19, condvar 10,
//! barrier 2, thread 22); `test_rwlock_try_write` without its second half,
//! which maps the guard. 48 are skipped, with the reason:
//! - `test_needs_drop` (mutex, rwlock; 2): checks the test's helper
//!   types, not a lock.
//! - `test_get_cloned`, `test_set`, `test_set_drop` (mutex only),
//!   `test_replace` and the `_poison` variants of `get_cloned`, `set`,
//!   `replace` (mutex 7, rwlock 6): unstable `lock_value_accessors`, which
//!   heisen does not offer.
//! - mutex `test_mapping_mapped_guard`, `test_mutex_arc_poison_mapped`,
//!   `panic_while_mapping_unlocked_poison`; rwlock
//!   `test_mapped_read_guard_covariance`, `test_mapping_mapped_guard`,
//!   `test_rw_arc_poison_mapped_w_r`, `test_rw_arc_poison_mapped_w_w`,
//!   `test_rw_arc_no_poison_mapped_r_r`, `test_rw_arc_no_poison_mapped_r_w`,
//!   `panic_while_mapping_read_unlocked_no_poison`,
//!   `panic_while_mapping_write_unlocked_poison` (11): unstable
//!   `mapped_lock_guards` (`MutexGuard::map`, `Mapped*Guard`).
//! - `test_mutex_with_mut`, `test_mutex_guard_unlocked`, `test_rwlock_with`,
//!   `test_rwlock_with_mut`, `test_read_guard_unlocked`,
//!   `test_write_guard_unlocked`, `nonpoison_test_rwlock_try_write` (7):
//!   unstable `nonpoison` locks.
//! - thread: `test_park_*` (5), `sleep_ms_smoke`,
//!   `test_size_of_option_thread_id`, `test_thread_id_equal`,
//!   `test_thread_os_id_not_equal`, and all 5 of
//!   `library/std/tests/thread.rs` (`sleep`, `sleep_until`, two of
//!   `thread_local!`, `available_parallelism`): std's own functions, which
//!   heisen does not wrap (users keep calling std's) (14).
//! - `scope_join_race`: runs only under Miri (1).
//!
//! The second half checks what std documents but its tests do not cover:
//! auto traits, `Debug` output, poison clearing, `try_lock`'s two errors,
//! unsized locks, one barrier leader per episode, `scope`'s panic, locks
//! in thread-local destructors, `spawn_unchecked` and the pthread, a spawn
//! the system refuses.
//!
//! Every test runs three times: measured (this process), with the runtime
//! disabled (`HEISEN_DISABLE=1`) and after the runtime was turned off by
//! `heisen_shmem::finish()` (both in a child process running this whole
//! binary again): the wrappers' semantics must not depend on measurement.
#![cfg(not(loom))] // loom's primitives have no timed waits, no `is_poisoned`
#![allow(clippy::std_instead_of_core)] // reason: std's tests, ported with their paths
#![allow(clippy::redundant_closure)] // reason: std's `move || v()` is the body under test

use std::any::Any;
use std::fmt::Debug;
use std::panic::{self, AssertUnwindSafe, panic_any};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, TryRecvError, channel};
use std::sync::{Arc, TryLockError};
use std::thread;
use std::time::Duration;

use heisen_shmem::{
    Barrier, Builder, Condvar, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard, Scope, scope,
    spawn,
};

/// The variable telling a child process to turn the runtime off first.
const FINISHED: &str = "HEISEN_TEST_FINISHED";
/// The variable marking a child process (no further children).
const CHILD: &str = "HEISEN_TEST_CHILD";

/// Starts the runtime (reports go to the target directory); in the
/// "after finish" child, turns it off before the test's first lock.
fn setup() {
    let config = heisen_shmem::Config {
        output: env!("CARGO_TARGET_TMPDIR").into(),
        ..heisen_shmem::Config::from_env()
    };
    let _ = heisen_shmem::runtime::init_with(config);
    if std::env::var_os(FINISHED).is_some() {
        let _ = heisen_shmem::finish();
    }
}

mod barrier;
mod condvar;
mod documented;
mod mutex;
mod rwlock;
mod threads;

use mutex::{NonCopy, new_poisoned_mutex};
use rwlock::new_poisoned_rwlock;

// ---------------------------------------------------------------------------
// The same tests with the runtime disabled and after it was turned off
// ---------------------------------------------------------------------------

/// Runs every other test of this binary in a child process with `env`.
fn all_again(mode: &str, env: &[(&str, &str)]) {
    if std::env::var_os(CHILD).is_some() {
        return; // already a child: no grandchildren
    }
    let exe = std::env::current_exe().expect("test binary path");
    let out = std::process::Command::new(exe)
        .args(["--skip", "runtime_", "--test-threads=2"])
        .env(CHILD, mode)
        .env_remove("HEISEN_DISABLE")
        .env("HEISEN_OUTPUT", env!("CARGO_TARGET_TMPDIR"))
        .envs(env.iter().copied())
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test mutex::mutex_smoke ... ok"),
        "{mode}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn runtime_disabled_changes_no_semantics() {
    all_again("disabled", &[("HEISEN_DISABLE", "1")]);
}

#[test]
fn runtime_finished_changes_no_semantics() {
    all_again("finished", &[(FINISHED, "1")]);
}
