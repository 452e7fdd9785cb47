//! A single-writer sequence lock: one thread publishes a small `Copy`
//! record over and over, any number of readers copy out the latest one
//! without ever stopping the writer and without ever seeing a torn record
//! (R10, 003 §2.3 and App. A: intermediate values are sampled while the
//! program runs).
//!
//! The record is kept as 64-bit atomic words, so a reader racing the
//! writer reads stale or mixed words (never undefined behaviour) and
//! throws them away when the sequence number says a write overlapped
//! (Boehm, "Can seqlocks get along with programming language memory
//! models?", 2012: relaxed data, an acquire fence before the re-check).
//! Loom checks the protocol (`tests/loom.rs`).
//!
//! ```
//! use heisen_shmem::seqlock::SeqLock;
//! let slot = SeqLock::new([0u64; 4]);
//! slot.write([1, 2, 3, 4]); // one writer
//! assert_eq!(slot.read(), [1, 2, 3, 4]); // any reader, any thread
//! ```

use core::mem::{MaybeUninit, size_of};

use crate::sync::{AtomicU64, Ordering, fence, spin};

/// Plain data: `Copy`, no padding bytes, and every bit pattern a valid
/// value, so that it can be cut into 64-bit words and glued back.
///
/// # Safety
/// The type must have no padding and no invalid bit patterns (integers,
/// arrays of them, `#[repr(C)]` structs of them laid out without gaps).
#[allow(unsafe_code)] // reason: the marker trait's contract is a promise about layout
pub unsafe trait Plain: Copy + Send + Sync + 'static {}

macro_rules! plain {
    ($($t:ty),*) => {$(
        // SAFETY: an integer has no padding and no invalid bit patterns.
        #[allow(unsafe_code)] // reason: implementing the layout promise
        unsafe impl Plain for $t {}
    )*};
}
plain!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

// SAFETY: an array of padding-free elements has no padding.
#[allow(unsafe_code)] // reason: implementing the layout promise
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}

// SAFETY: `Piggyback` is `#[repr(C)]`: a `Flags(u32)` and a `u32`, then
// 8-byte integers only; no gap, and any bit pattern is a value (a record
// with unknown flag bits is still a record).
#[allow(unsafe_code)] // reason: implementing the layout promise
unsafe impl<const K: usize> Plain for heisen_core::Piggyback<K> {}

/// The latest record one writer published, readable by any thread.
#[derive(Debug)]
pub struct SeqLock<T: Plain> {
    /// Even when the words hold a whole record; odd while one is written.
    sequence: AtomicU64,
    words: Box<[AtomicU64]>,
    _record: core::marker::PhantomData<T>,
}

impl<T: Plain> SeqLock<T> {
    const WORDS: usize = size_of::<T>().div_ceil(8);

    /// A lock holding `initial`.
    pub fn new(initial: T) -> SeqLock<T> {
        let lock = SeqLock {
            sequence: AtomicU64::new(0),
            words: (0..Self::WORDS).map(|_| AtomicU64::new(0)).collect(),
            _record: core::marker::PhantomData,
        };
        lock.store_words(&initial);
        lock
    }

    /// Publishes `value`. Only one thread may write (the owner of the
    /// slot); a second concurrent writer would make readers spin.
    pub fn write(&self, value: T) {
        let s = self.sequence.load(Ordering::Relaxed);
        self.sequence.store(s.wrapping_add(1), Ordering::Relaxed);
        // The odd number is visible before any word changes.
        fence(Ordering::Release);
        self.store_words(&value);
        self.sequence.store(s.wrapping_add(2), Ordering::Release);
    }

    /// The latest published record, never a torn one: retries while the
    /// writer is in the middle of a write.
    pub fn read(&self) -> T {
        loop {
            if let Some(value) = self.try_read() {
                return value;
            }
            spin();
        }
    }

    /// The latest published record, or `None` if a write overlapped.
    pub fn try_read(&self) -> Option<T> {
        let before = self.sequence.load(Ordering::Acquire);
        if before % 2 == 1 {
            return None;
        }
        let mut out = MaybeUninit::<T>::uninit();
        let dst = out.as_mut_ptr().cast::<u8>();
        let size = size_of::<T>();
        for (i, word) in self.words.iter().enumerate() {
            let bytes = word.load(Ordering::Relaxed).to_ne_bytes();
            let n = (size - 8 * i).min(8);
            // SAFETY: `dst + 8 i .. + n` lies inside `out` (n <= size - 8 i).
            #[allow(unsafe_code)] // reason: filling the record byte by byte
            unsafe {
                core::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.add(8 * i), n);
            }
        }
        // Every word load above happens before the re-check.
        fence(Ordering::Acquire);
        if self.sequence.load(Ordering::Relaxed) != before {
            return None;
        }
        // SAFETY: every byte of `out` was written, no write overlapped (the
        // sequence did not move), so the bytes are those of one `T`, and
        // `T: Plain` has no padding and no invalid patterns.
        #[allow(unsafe_code)] // reason: as above
        Some(unsafe { out.assume_init() })
    }

    fn store_words(&self, value: &T) {
        let src = (value as *const T).cast::<u8>();
        let size = size_of::<T>();
        for (i, word) in self.words.iter().enumerate() {
            let mut bytes = [0u8; 8];
            let n = (size - 8 * i).min(8);
            // SAFETY: `src + 8 i .. + n` lies inside `*value`; `T: Plain`
            // has no padding, so every byte read is initialised.
            #[allow(unsafe_code)] // reason: cutting the record into words
            unsafe {
                core::ptr::copy_nonoverlapping(src.add(8 * i), bytes.as_mut_ptr(), n);
            }
            word.store(u64::from_ne_bytes(bytes), Ordering::Relaxed);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_record_of_odd_size_round_trips() {
        let lock = SeqLock::new([0u8; 13]);
        let v: [u8; 13] = core::array::from_fn(|i| i as u8 + 1);
        lock.write(v);
        assert_eq!(lock.read(), v);
    }

    #[test]
    fn a_reader_on_another_thread_sees_only_whole_records() {
        // Each record is four copies of one number: a torn read would mix two.
        let lock = std::sync::Arc::new(SeqLock::new([0u64; 4]));
        let writer = {
            let lock = lock.clone();
            std::thread::spawn(move || {
                for i in 1..=20_000u64 {
                    lock.write([i; 4]);
                }
            })
        };
        let mut last = 0;
        while last < 20_000 {
            let r = lock.read();
            assert!(r.iter().all(|&w| w == r[0]), "torn: {r:?}");
            assert!(r[0] >= last, "went back: {} after {last}", r[0]);
            last = r[0];
        }
        writer.join().expect("writer");
    }
}
