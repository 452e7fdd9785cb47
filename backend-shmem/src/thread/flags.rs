//! A thread's flag word: whether a runtime call is under way on the
//! thread, its open quiet guards, whether its location ended — and a count
//! of its runtime calls, so that the report writer can copy the state of a
//! thread still running at exit between two of its calls (R12: a pool
//! thread that never ends, such as libgomp's or rayon's, still has its
//! location in the report).
//!
//! The owner writes its state only while [`BUSY`] is set, and every call
//! that set it counts one more when it clears it: a sequence lock whose
//! writer pays no more than the busy flag it already kept (a load and a
//! store at each end, both plain moves on x86-64). A reader copies the
//! state when the word shows no call under way, and keeps the copy when
//! the word is the same after it (`copy_between_calls`).

use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicU64, Ordering, fence};

use super::ThreadState;

/// A runtime call is under way on the thread.
pub(super) const BUSY: u32 = 1;
/// One open `quiet` guard.
pub(super) const QUIET: u32 = 2;
/// The thread's location ended (more than any count of quiet guards can
/// take away).
pub(super) const ENDED: u32 = 1 << 31;
/// The flags' half of the word; the calls counted are the other half.
const LOW: u64 = 0xFFFF_FFFF;
/// One call counted.
const CALL: u64 = 1 << 32;

/// The flag word ([`BUSY`], [`QUIET`]s, [`ENDED`]; calls counted above
/// them). Only the owner thread writes it.
#[derive(Debug)]
pub(super) struct Flags(AtomicU64);

impl Flags {
    /// No call under way, nothing counted.
    pub(super) const fn new() -> Flags {
        Flags(AtomicU64::new(0))
    }

    /// The flags (the owner's read).
    #[inline(always)]
    pub(super) fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed) as u32
    }

    /// The whole word (the owner's read), for [`Flags::hold`]: a call may
    /// begin when its flags half is 0.
    #[inline(always)]
    pub(super) fn word(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Sets the flags to `flags`, the count kept (the owner's write; not
    /// while it writes its state: see [`Flags::hold`]).
    #[inline(always)]
    pub(super) fn set(&self, flags: u32) {
        let w = self.0.load(Ordering::Relaxed);
        self.0
            .store((w & !LOW) | u64::from(flags), Ordering::Relaxed);
    }

    /// Sets [`BUSY`] in `word`, the word as the owner just read it
    /// ([`Flags::word`], without `BUSY`): from now until
    /// [`Flags::release`] the owner may write its state. The fence keeps
    /// the state's writes after this store for a reader (a compiler
    /// barrier on x86-64).
    #[inline(always)]
    pub(super) fn hold(&self, word: u64) {
        debug_assert_eq!(word as u32 & BUSY, 0);
        self.0.store(word | u64::from(BUSY), Ordering::Relaxed);
        fence(Ordering::Release);
    }

    /// Clears [`BUSY`], which [`Flags::hold`] set, and counts the call,
    /// after the state's writes (one add: a quiet guard opened meanwhile
    /// stays counted).
    #[inline(always)]
    pub(super) fn release(&self) {
        let w = self.0.load(Ordering::Relaxed);
        debug_assert_ne!(w as u32 & BUSY, 0);
        self.0
            .store(w.wrapping_add(CALL - u64::from(BUSY)), Ordering::Release);
    }
}

/// Tries a reader makes before it gives a thread up (each try copies the
/// whole state, about 150 KiB, and a thread that makes calls all the time
/// changes it during most copies).
const TRIES: usize = 200;

/// Copies `*src`, the state guarded by `flags`, to `dst` at a moment
/// between two of its owner's calls: `false` when no try found one.
///
/// # Safety
/// `src` and `dst` must be valid, aligned and `size_of::<T>()` bytes, a
/// multiple of 8; `src` may be written meanwhile only by the owner of
/// `flags` while [`BUSY`] is set (its `hold`/`release`). On `true`, `dst`
/// holds a bitwise copy of a value `*src` held; on `false`, bytes of no
/// value.
#[allow(unsafe_code)] // reason: see the safety section
pub(super) unsafe fn copy_between_calls<T>(flags: &Flags, src: *const T, dst: *mut T) -> bool {
    const { assert!(size_of::<T>().is_multiple_of(8) && align_of::<T>() >= 8) };
    let words = size_of::<T>() / 8;
    let (src, dst) = (src.cast::<u64>(), dst.cast::<u64>());
    for _ in 0..TRIES {
        let before = flags.0.load(Ordering::Acquire);
        if before & u64::from(BUSY) != 0 {
            std::thread::yield_now();
            continue;
        }
        for i in 0..words {
            // SAFETY: in bounds of both (the caller's sizes); volatile, so
            // that a word the owner writes meanwhile is read as some value
            // (the check below then throws the copy away), never assumed
            // stable by the compiler.
            unsafe { dst.add(i).write(src.add(i).read_volatile()) };
        }
        fence(Ordering::Acquire);
        if flags.0.load(Ordering::Relaxed) == before {
            return true;
        }
    }
    false
}

/// A bitwise copy of a running thread's state
/// ([`Thread::copy_between_calls`]): read, never dropped (the state owns
/// nothing on the heap; the original stays its owner's).
pub(crate) struct Copied(pub(super) Box<MaybeUninit<ThreadState>>);

impl Copied {
    /// The state as it was between two of its thread's calls.
    pub(crate) fn state(&self) -> &ThreadState {
        // SAFETY: `copy_between_calls` kept only a copy of a value the
        // state held.
        #[allow(unsafe_code)] // reason: the copy is a whole value
        unsafe {
            self.0.assume_init_ref()
        }
    }
}
