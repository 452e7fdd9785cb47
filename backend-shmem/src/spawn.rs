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
                &[Dependency::message(
                    &record,
                    crate::handoff::LET_GO_LATER,
                    0,
                )],
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
        // SAFETY: `f` and `T` are `'static`: nothing they borrow can go
        // away before the thread ends (std's `spawn` does the same).
        #[allow(unsafe_code)] // reason: one body for both spawns, as std
        unsafe {
            self.spawn_unchecked(f)
        }
    }

    /// Spawns a thread whose closure and result need not be `'static`
    /// (std's `Builder::spawn_unchecked`); the spawn is a release its
    /// start merges, the join merges its end (R8), as [`Builder::spawn`].
    ///
    /// # Safety
    /// std's: the caller ensures that the thread ends, or is joined,
    /// before anything `f` borrows or `T` refers to is gone.
    #[allow(unsafe_code)] // reason: std's unsafe API, wrapped with std's contract
    pub unsafe fn spawn_unchecked<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send,
        T: Send,
    {
        let end = Arc::new(End::default());
        let body = child_body(spawn_record(), end.clone(), f);
        // SAFETY: the caller keeps std's contract (see above); the body
        // adds only `'static` data of its own (the spawn record, `end`).
        let inner = unsafe { self.inner.spawn_unchecked(body) }?;
        Ok(JoinHandle { inner, end })
    }
}

/// std's: the builder's name and stack size.
impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner, f)
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

/// std's `JoinHandleExt`: the thread's pthread. A handle turned into its
/// pthread is never joined through heisen, so its end is never merged (a
/// detached thread's, R8).
#[cfg(unix)]
impl<T> std::os::unix::thread::JoinHandleExt for JoinHandle<T> {
    fn as_pthread_t(&self) -> std::os::unix::thread::RawPthread {
        self.inner.as_pthread_t()
    }

    fn into_pthread_t(self) -> std::os::unix::thread::RawPthread {
        self.inner.into_pthread_t()
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").finish_non_exhaustive()
    }
}

/// A scope for threads that borrow from the caller (std's
/// `thread::scope`, the same signature: a scoped thread may spawn into the
/// scope too). Threads not joined explicitly are joined when the scope
/// ends, and that implicit join merges all their ends (R8).
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    // Forgets the scope's children however the scope ends (a panic in
    // `f` or in a child unwinds through here).
    let registered = Registered(core::cell::Cell::new(None));
    let mut begin = None;
    let result = std::thread::scope(|s| {
        let scope = Scope::wrap(s);
        registered.0.set(Some(scope.register()));
        let result = f(scope);
        begin = begun(|a| a.thread_join);
        result
    });
    // std has joined every thread of the scope.
    let children = registered.0.take().map(unregister).unwrap_or_default();
    if let Some(begin) = begin {
        let records: Vec<Record> = children
            .iter()
            .filter(|c| !c.joined.load(core::sync::atomic::Ordering::Relaxed))
            .filter_map(|c| c.end.record.get().copied())
            .collect();
        // Each thread exits after its end record, as without heisen.
        let deps: Vec<Dependency<'_, { crate::SELECTED }>> = records
            .iter()
            .map(|r| Dependency::message(r, crate::handoff::LET_GO_LATER, 0))
            .collect();
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

/// The children of every live scope, by the address of std's scope object
/// (unique while the scope lives): a [`Scope`] is std's own, so it has no
/// room for them. Scoped spawns are rare next to thread creation's own
/// cost; one lock for all is enough.
static SCOPES: std::sync::Mutex<Vec<(usize, Vec<Arc<Child>>)>> = std::sync::Mutex::new(Vec::new());

fn scopes() -> std::sync::MutexGuard<'static, Vec<(usize, Vec<Arc<Child>>)>> {
    SCOPES.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes a scope's entry, returning its children.
fn unregister(key: usize) -> Vec<Arc<Child>> {
    let mut all = scopes();
    match all.iter().position(|(k, _)| *k == key) {
        Some(i) => all.swap_remove(i).1,
        None => Vec::new(),
    }
}

/// A scope's registry entry, removed when the scope ends, also by a panic.
struct Registered(core::cell::Cell<Option<usize>>);

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(key) = self.0.take() {
            unregister(key);
        }
    }
}

/// std's `thread::Scope` for measured threads; see [`scope`].
#[repr(transparent)]
pub struct Scope<'scope, 'env: 'scope> {
    inner: std::thread::Scope<'scope, 'env>,
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// std's scope seen as heisen's: the same object.
    fn wrap<'a>(inner: &'a std::thread::Scope<'scope, 'env>) -> &'a Scope<'scope, 'env> {
        // SAFETY: `Scope` is `repr(transparent)` over std's scope, so the
        // two references have one layout and the same lifetime.
        #[allow(unsafe_code)] // reason: a transparent wrapper's reference cast
        unsafe {
            &*core::ptr::from_ref(inner).cast::<Scope<'scope, 'env>>()
        }
    }

    /// This scope's key in [`SCOPES`]: its address.
    fn key(&self) -> usize {
        core::ptr::from_ref(self).addr()
    }

    /// Registers this scope with no children; returns its key.
    fn register(&self) -> usize {
        scopes().push((self.key(), Vec::new()));
        self.key()
    }

    /// A new child of this scope, registered so that the scope's end
    /// merges it if nobody joins it first.
    fn child(&self) -> Arc<Child> {
        let child = Arc::new(Child::default());
        let key = self.key();
        if let Some((_, children)) = scopes().iter_mut().find(|(k, _)| *k == key) {
            children.push(child.clone());
        }
        child
    }

    /// Spawns a scoped thread; its start merges this spawn (R8).
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        Builder::new()
            .spawn_scoped(self, f)
            .expect("failed to spawn thread")
    }
}

impl Builder {
    /// Spawns a scoped thread with this builder's name and stack size
    /// (std's `Builder::spawn_scoped`); its start merges this spawn (R8).
    pub fn spawn_scoped<'scope, 'env, F, T>(
        self,
        scope: &'scope Scope<'scope, 'env>,
        f: F,
    ) -> std::io::Result<ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let child = scope.child();
        let parent = spawn_record();
        let end = child.clone();
        let inner = self.inner.spawn_scoped(&scope.inner, move || {
            thread::start_current(&parent);
            let _end = ChildGuard(end);
            f()
        })?;
        Ok(ScopedJoinHandle { inner, child })
    }
}

/// std's: the scope's running threads and whether one panicked.
impl fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner, f)
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

    /// The thread's handle.
    pub fn thread(&self) -> &std::thread::Thread {
        self.inner.thread()
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
