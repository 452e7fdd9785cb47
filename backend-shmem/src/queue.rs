//! A multi-producer, multi-consumer work queue whose items carry their
//! enqueue's record (R8; 003 §4, Fig. 11 right): a dequeue merges the
//! enqueue of the very item it takes, not whoever held the queue's lock
//! before, so the approximated run does not force item Y to follow item
//! X's enqueue.
//!
//! ```
//! # let _ = heisen_shmem::runtime::init_with(heisen_shmem::Config { output: std::env::temp_dir(), ..heisen_shmem::Config::from_env() });
//! let queue = heisen_shmem::WorkQueue::new();
//! queue.push(7);
//! queue.close(); // consumers get `None` once it is empty
//! assert_eq!(queue.pop(), Some(7));
//! assert_eq!(queue.pop(), None);
//! ```

use core::fmt;
use std::collections::VecDeque;

use heisen_core::Dependency;

use crate::Record;
use crate::actions::{actions, released};
use crate::sync::{Condvar, Mutex};
use crate::thread::with_current;

/// An unbounded FIFO of work items (see the module docs).
pub struct WorkQueue<T> {
    fifo: Fifo<T>,
}

impl<T> WorkQueue<T> {
    /// An empty, open queue.
    pub fn new() -> WorkQueue<T> {
        WorkQueue { fifo: Fifo::new() }
    }

    /// Appends `item`; the enqueue is a release whose record travels with
    /// the item (R3, R8).
    pub fn push(&self, item: T) {
        let record = released(|a| a.queue_push);
        self.fifo.push(item, record);
    }

    /// Takes the oldest item, waiting while the queue is empty and open;
    /// `None` once it is closed and empty. Merges the item's enqueue (or
    /// the close) (R8, Fig. 11).
    pub fn pop(&self) -> Option<T> {
        let a = actions();
        let begin = with_current(|s| s.begin(a.queue_pop));
        let (item, record) = self.fifo.pop();
        if let Some(begin) = begin {
            with_current(|s| s.end(begin, &[Dependency::immediate(&record)], a.queue_pop));
        }
        item
    }

    /// Takes the oldest item if there is one; merges its enqueue. An empty
    /// queue merges nothing.
    pub fn try_pop(&self) -> Option<T> {
        let (item, record) = self.fifo.try_pop()?;
        // A try shares the pop's whole cost: one clock read fewer than a
        // pop, so it is a few ns over (no calibration of its own).
        let action = actions().queue_pop;
        with_current(|s| s.merge_now(&[Dependency::immediate(&record)], action));
        Some(item)
    }

    /// Closes the queue: consumers waiting on an empty queue get `None`.
    /// The close is a release (R3) that those pops merge. Pushing after
    /// the close still works; the items are still handed out.
    pub fn close(&self) {
        let record = released(|a| a.queue_push);
        self.fifo.close(record);
    }

    /// Items waiting.
    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    /// Whether no item is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The queue's synchronisation without the instrumentation: items with
/// their records, a close record, and a condition variable for waiting
/// consumers (loom-checked in `tests/loom.rs`).
pub struct Fifo<T> {
    items: Mutex<Items<T>>,
    ready: Condvar,
}

struct Items<T> {
    queue: VecDeque<(T, Record)>,
    /// The close's record, once closed: a pop that finds the queue empty
    /// and closed merges it.
    closed: Option<Record>,
    /// Consumers blocked on `ready`: a push wakes one only if there is one
    /// (std's `notify_one` is a system call even with nobody waiting).
    waiting: usize,
}

impl<T> Fifo<T> {
    /// An empty, open FIFO.
    pub fn new() -> Fifo<T> {
        Fifo {
            items: Mutex::new(Items {
                queue: VecDeque::new(),
                closed: None,
                waiting: 0,
            }),
            ready: Condvar::new(),
        }
    }

    /// Appends `item` with its enqueue's record.
    pub fn push(&self, item: T, record: Record) {
        let waiting = {
            let mut items = self.lock();
            items.queue.push_back((item, record));
            items.waiting
        };
        if waiting > 0 {
            self.ready.notify_one();
        }
    }

    /// The oldest item and its record, waiting while empty and open; once
    /// closed and empty, `None` and the close's record.
    pub fn pop(&self) -> (Option<T>, Record) {
        let mut items = self.lock();
        loop {
            if let Some((item, record)) = items.queue.pop_front() {
                return (Some(item), record);
            }
            if let Some(record) = items.closed {
                return (None, record);
            }
            items.waiting += 1;
            items = self.ready.wait(items).unwrap_or_else(|p| p.into_inner());
            items.waiting -= 1;
        }
    }

    /// The oldest item and its record, if any.
    pub fn try_pop(&self) -> Option<(T, Record)> {
        self.lock().queue.pop_front()
    }

    /// Closes the FIFO with the close's record.
    pub fn close(&self, record: Record) {
        let waiting = {
            let mut items = self.lock();
            items.closed = Some(record);
            items.waiting
        };
        if waiting > 0 {
            self.ready.notify_all();
        }
    }

    /// Items waiting.
    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }

    /// Whether no item is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> crate::sync::MutexGuard<'_, Items<T>> {
        // A panic inside the queue's own short sections cannot leave the
        // deque half-updated, so a poisoned lock is still usable.
        self.items.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Fifo::new()
    }
}

impl<T> fmt::Debug for Fifo<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fifo").finish_non_exhaustive()
    }
}

impl<T> Default for WorkQueue<T> {
    fn default() -> Self {
        WorkQueue::new()
    }
}

impl<T> fmt::Debug for WorkQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkQueue")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}
