//! Region names interned once per process: a name becomes a dense id the
//! first time any thread uses it, and the same id for every thread after
//! (so selected slots and records agree across threads, R7, R12).
//!
//! The table has a fixed capacity (R12: memory does not grow with the run):
//! a name that does not fit is counted and its region goes uninstrumented.

use core::sync::atomic::{AtomicU32, Ordering};
use std::collections::HashMap;
use std::sync::Mutex;

/// Most distinct region names per process.
pub const MAX_NAMES: usize = 8192;

/// Longest region name accepted, in bytes. Reports shorten longer names
/// than the format's 256 bytes (`report::region_name`); the full name is
/// kept here.
pub const MAX_NAME_LEN: usize = 4096;

/// Why a name got no id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameError {
    /// The name is empty.
    Empty,
    /// The name is longer than [`MAX_NAME_LEN`] bytes.
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// [`MAX_NAMES`] names are interned already.
    TableFull,
}

impl core::fmt::Display for NameError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            NameError::Empty => f.write_str("empty region name"),
            NameError::TooLong { len } => write!(
                f,
                "region name of {len} bytes is longer than {MAX_NAME_LEN} bytes"
            ),
            NameError::TableFull => write!(f, "more than {MAX_NAMES} region names"),
        }
    }
}

impl core::error::Error for NameError {}

#[derive(Debug, Default)]
struct Inner {
    ids: HashMap<String, u32>,
    names: Vec<String>,
    dropped: u64,
}

/// The process's region names.
#[derive(Debug, Default)]
pub struct Names {
    inner: Mutex<Inner>,
    /// How many names are interned, readable without the lock: ids are
    /// dense, so `id < count` is the cheap validity check of a hot path.
    count: AtomicU32,
}

impl Names {
    /// The id of `name`, interning it on first use.
    pub fn intern(&self, name: &str) -> Result<u32, NameError> {
        if name.is_empty() {
            return Err(NameError::Empty);
        }
        if name.len() > MAX_NAME_LEN {
            return Err(NameError::TooLong { len: name.len() });
        }
        let mut inner = self.lock();
        if let Some(&id) = inner.ids.get(name) {
            return Ok(id);
        }
        if inner.names.len() >= MAX_NAMES {
            // R12: overflow is counted, never a panic.
            inner.dropped += 1;
            return Err(NameError::TableFull);
        }
        let id = inner.names.len() as u32;
        inner.names.push(name.to_owned());
        inner.ids.insert(name.to_owned(), id);
        self.count.store(id + 1, Ordering::Release);
        Ok(id)
    }

    /// The id of `name` if it is interned.
    pub fn lookup(&self, name: &str) -> Option<u32> {
        self.lock().ids.get(name).copied()
    }

    /// Whether `id` names an interned region, without taking the lock.
    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        id < self.count.load(Ordering::Acquire)
    }

    /// The name of `id`.
    pub fn name(&self, id: u32) -> Option<String> {
        self.lock().names.get(id as usize).cloned()
    }

    /// How many names are interned.
    pub fn len(&self) -> usize {
        self.lock().names.len()
    }

    /// Whether no name is interned yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every name in id order.
    pub fn all(&self) -> Vec<String> {
        self.lock().names.clone()
    }

    /// Names refused because the table was full.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while interning leaves the table consistent: every
        // push is followed by its insert, so a poisoned lock is usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_gets_one_dense_id() {
        let names = Names::default();
        assert_eq!(names.intern("solve"), Ok(0));
        assert_eq!(names.intern("io"), Ok(1));
        assert_eq!(names.intern("solve"), Ok(0));
        assert_eq!(names.lookup("io"), Some(1));
        assert_eq!(names.name(1).as_deref(), Some("io"));
        assert_eq!(names.all(), vec!["solve", "io"]);
        assert!(names.contains(1) && !names.contains(2));
    }

    #[test]
    fn bad_names_are_refused_with_the_reason() {
        let names = Names::default();
        assert_eq!(names.intern(""), Err(NameError::Empty));
        let long = "x".repeat(MAX_NAME_LEN + 1);
        assert_eq!(
            names.intern(&long),
            Err(NameError::TooLong {
                len: MAX_NAME_LEN + 1
            })
        );
        // A 10,000-byte name is an error, not a crash.
        assert!(names.intern(&"y".repeat(10_000)).is_err());
        assert!(names.is_empty());
    }

    #[test]
    fn a_full_table_counts_what_it_drops() {
        let names = Names::default();
        for i in 0..MAX_NAMES {
            assert!(names.intern(&format!("r{i}")).is_ok());
        }
        assert_eq!(names.intern("one more"), Err(NameError::TableFull));
        assert_eq!(names.intern("r7"), Ok(7));
        assert_eq!(names.dropped(), 1);
    }
}
