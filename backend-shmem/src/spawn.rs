//! Threads whose start and end are merges (R8; 003 §4): a spawn is a
//! release that the child's start merges (the child inherits its
//! spawner's delay and critical path), and a join merges the child's end.
//! `spawn`, `Builder` and `scope` have std's API.
//!
//! ```
//! # let _ = heisen_shmem::runtime::init_with(heisen_shmem::Config { output: std::env::temp_dir(), ..heisen_shmem::Config::from_env() });
//! let child = heisen_shmem::spawn(|| heisen_shmem::in_region("work", || 6 * 7));
//! assert_eq!(child.join().unwrap(), 42);
//! let mut data = [1, 2, 3];
//! heisen_shmem::scope(|s| {
//!     s.spawn(|| data.iter().sum::<i32>()); // joined at the scope's end, merged
//! });
//! data[0] = 0;
//! ```

use core::fmt;
use std::sync::{Arc, OnceLock};

use heisen_core::Dependency;

use crate::Record;
use crate::actions::{actions, begun, released};
use crate::thread::{self, with_current};

/// Where a child leaves its end record for the join (R8).
#[derive(Debug, Default)]
struct End {
    record: OnceLock<Record>,
}

/// Ends the child's location when the child's closure returns or unwinds,
/// and leaves the end record for the join.
struct EndGuard(Arc<End>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        if let Some(record) = thread::finish_current() {
            let _ = self.0.record.set(record);
        }
    }
}

/// The spawner's release: the record the child's start merges.
fn spawn_record() -> Record {
    released(|a| a.thread_spawn)
}

/// The child's side: start (merging the spawner), run, end.
fn child_body<F, T>(parent: Record, end: Arc<End>, f: F) -> impl FnOnce() -> T
where
    F: FnOnce() -> T,
{
    move || {
        // R8: the child's start merges the spawner's release.
        thread::start_current(&parent);
        let _end = EndGuard(end);
        f()
    }
}

/// The join's merge of the child's end (R8).
fn joined(begin: Option<u64>, end: &End) {
    if let Some(begin) = begin {
        let record = end.record.get().copied().unwrap_or(Record::EMPTY);
        with_current(|s| {
            s.end(
                begin,
                &[Dependency::immediate(&record)],
                actions().thread_join,
            )
        });
    }
}

/// Spawns a measured thread (std's `thread::spawn`).
///
/// # Panics
/// If the operating system cannot create the thread, as std does.
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    Builder::new().spawn(f).expect("failed to spawn thread")
}

/// std's `thread::Builder` for measured threads.
#[derive(Debug)]
pub struct Builder {
    inner: std::thread::Builder,
}

impl Builder {
    /// A builder with std's defaults.
    pub fn new() -> Builder {
        Builder {
            inner: std::thread::Builder::new(),
        }
    }

    /// Names the thread.
    pub fn name(self, name: String) -> Builder {
        Builder {
            inner: self.inner.name(name),
        }
    }

    /// Sets the thread's stack size.
    pub fn stack_size(self, size: usize) -> Builder {
        Builder {
            inner: self.inner.stack_size(size),
        }
    }

    /// Spawns the thread; the spawn is a release its start merges (R8).
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let end = Arc::new(End::default());
        let body = child_body(spawn_record(), end.clone(), f);
        let inner = self.inner.spawn(body)?;
        Ok(JoinHandle { inner, end })
    }
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// A measured thread to join (std's `JoinHandle`).
pub struct JoinHandle<T> {
    inner: std::thread::JoinHandle<T>,
    end: Arc<End>,
}

impl<T> JoinHandle<T> {
    /// Waits for the thread to end; the join merges its end (R8).
    pub fn join(self) -> std::thread::Result<T> {
        let begin = begun(|a| a.thread_join);
        let result = self.inner.join();
        joined(begin, &self.end);
        result
    }

    /// The thread's handle.
    pub fn thread(&self) -> &std::thread::Thread {
        self.inner.thread()
    }

    /// Whether the thread has finished.
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").finish_non_exhaustive()
    }
}

/// A scope for threads that borrow from the caller (std's
/// `thread::scope`). Threads not joined explicitly are joined when the
/// scope ends, and that implicit join merges all their ends (R8).
///
/// Unlike std's, the `Scope` reference is not `'scope`: a spawned thread
/// cannot spawn into the same scope.
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&Scope<'scope, 'env>) -> T,
{
    let children = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut begin = None;
    let result = std::thread::scope(|s| {
        let scope = Scope {
            inner: s,
            children: children.clone(),
        };
        let result = f(&scope);
        begin = begun(|a| a.thread_join);
        result
    });
    if let Some(begin) = begin {
        let children = children.lock().unwrap_or_else(|p| p.into_inner());
        let records: Vec<Record> = children
            .iter()
            .filter(|c: &&Arc<Child>| !c.joined.load(core::sync::atomic::Ordering::Relaxed))
            .filter_map(|c| c.end.record.get().copied())
            .collect();
        let deps: Vec<Dependency<'_, { crate::SELECTED }>> =
            records.iter().map(Dependency::immediate).collect();
        let action = actions().thread_join;
        with_current(|s| s.end(begin, &deps, action));
    }
    result
}

#[derive(Debug, Default)]
struct Child {
    end: End,
    joined: core::sync::atomic::AtomicBool,
}

/// std's `thread::Scope` for measured threads; see [`scope`].
pub struct Scope<'scope, 'env: 'scope> {
    inner: &'scope std::thread::Scope<'scope, 'env>,
    children: Arc<std::sync::Mutex<Vec<Arc<Child>>>>,
}

impl<'scope> Scope<'scope, '_> {
    /// Spawns a scoped thread; its start merges this spawn (R8).
    pub fn spawn<F, T>(&self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let child = Arc::new(Child::default());
        self.children
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(child.clone());
        let parent = spawn_record();
        let end = child.clone();
        let inner = self.inner.spawn(move || {
            thread::start_current(&parent);
            let _end = ChildGuard(end);
            f()
        });
        ScopedJoinHandle { inner, child }
    }
}

impl fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

struct ChildGuard(Arc<Child>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(record) = thread::finish_current() {
            let _ = self.0.end.record.set(record);
        }
    }
}

/// A scoped thread to join; see [`scope`].
pub struct ScopedJoinHandle<'scope, T> {
    inner: std::thread::ScopedJoinHandle<'scope, T>,
    child: Arc<Child>,
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Waits for the thread to end; the join merges its end (R8).
    pub fn join(self) -> std::thread::Result<T> {
        let begin = begun(|a| a.thread_join);
        let result = self.inner.join();
        self.child
            .joined
            .store(true, core::sync::atomic::Ordering::Relaxed);
        joined(begin, &self.child.end);
        result
    }

    /// Whether the thread has finished.
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
}

impl<T> fmt::Debug for ScopedJoinHandle<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopedJoinHandle").finish_non_exhaustive()
    }
}
