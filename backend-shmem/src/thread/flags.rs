//! A thread's flag word: whether a runtime call is under way on the
//! thread, its open quiet guards, whether its location ended — and a count
//! of its runtime calls, so that the report writer can copy the state of a
//! thread still running at exit between two of its calls (R12: a pool
//! thread that never ends, such as libgomp's or rayon's, still has its
//! location in the report).
//!
//! The owner writes its state only while [`BUSY`] is set, and every call
//! that set it counts one more when it clears it: a sequence lock (Boehm,
//! "Can seqlocks get along with programming language memory models?")
//! whose writer pays no more than the busy flag it already kept. A reader
//! copies the state when the word shows no call under way, and keeps the
//! copy when the word is the same after it (`copy_between_calls`).
//!
//! Every change of the word is one read-modify-write instruction on
//! x86-64 (`Flags::add`): a signal handler that makes a whole heisen call
//! between a load and a store of the owner's would otherwise have its
//! count rolled back, and a reader could keep a copy torn by the owner's
//! next write. The state itself is written with plain stores and copied
//! with volatile reads, as crossbeam's `AtomicCell` does; the copy is
//! thrown away whenever a write may have overlapped it.

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

    /// Sets the flags to `flags`, the count kept (the owner's write, where
    /// no signal handler's call can come between: a slot being rebuilt, a
    /// thread's end).
    #[inline(always)]
    pub(super) fn set(&self, flags: u32) {
        let w = self.0.load(Ordering::Relaxed);
        self.0
            .store((w & !LOW) | u64::from(flags), Ordering::Relaxed);
    }

    /// Adds `delta` (wrapping) to the word: on x86-64 one `add` to memory,
    /// which a signal cannot split (not `lock`ed: only the owner writes the
    /// word, readers only load it); elsewhere a load and a store.
    #[inline(always)]
    fn add(&self, delta: u64) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the word is the atomic's own aligned 8 bytes; an aligned
        // 8-byte store is atomic on x86-64, so a reader's load sees the
        // word before or after it. Not `nomem`: the asm orders the
        // compiler's memory accesses around it.
        #[allow(unsafe_code)] // reason: a signal-safe add to the owner's word
        unsafe {
            core::arch::asm!(
                "add qword ptr [{p}], {d}",
                p = in(reg) self.0.as_ptr(),
                d = in(reg) delta,
                options(nostack),
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let w = self.0.load(Ordering::Relaxed);
            self.0.store(w.wrapping_add(delta), Ordering::Release);
        }
    }

    /// Sets [`BUSY`] (clear: the caller checked): from now until
    /// [`Flags::release`] the owner may write its state. The fence keeps
    /// the state's writes after this change for a reader (a compiler
    /// barrier on x86-64).
    #[inline(always)]
    pub(super) fn hold(&self) {
        debug_assert_eq!(self.get() & BUSY, 0);
        self.add(u64::from(BUSY));
        fence(Ordering::Release);
    }

    /// Clears [`BUSY`], which [`Flags::hold`] set, and counts the call,
    /// after the state's writes (a quiet guard opened meanwhile stays
    /// counted). A load and a store suffice here: while `BUSY` is set a
    /// signal handler's call changes nothing (it goes unmeasured).
    #[inline(always)]
    pub(super) fn release(&self) {
        let w = self.0.load(Ordering::Relaxed);
        debug_assert_ne!(w as u32 & BUSY, 0);
        self.0
            .store(w.wrapping_add(CALL - u64::from(BUSY)), Ordering::Release);
    }

    /// Opens a quiet guard.
    #[inline(always)]
    pub(super) fn quiet(&self) {
        self.add(u64::from(QUIET));
    }

    /// Closes a quiet guard, if one is open.
    #[inline(always)]
    pub(super) fn unquiet(&self) {
        if self.get() & !ENDED >= QUIET {
            self.add(u64::from(QUIET).wrapping_neg());
        }
    }
}

/// Tries a reader makes before it gives a thread up (each try copies the
/// whole state, about 150 KiB, and a thread that makes calls all the time
/// changes it during most copies). A try that finds a call under way
/// yields for the first half, then sleeps [`WAIT`]: a thread preempted in
/// a call on a busy machine gets the core back (10 ms at most).
const TRIES: usize = 200;

/// A later try's wait while a call is under way.
const WAIT: core::time::Duration = core::time::Duration::from_micros(100);

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
    // As `MaybeUninit` words: padding bytes are read too.
    let (src, dst) = (
        src.cast::<MaybeUninit<u64>>(),
        dst.cast::<MaybeUninit<u64>>(),
    );
    for k in 0..TRIES {
        let before = flags.0.load(Ordering::Acquire);
        if before & u64::from(BUSY) != 0 {
            if k < TRIES / 2 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(WAIT);
            }
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

#[cfg(test)]
#[allow(unsafe_code)] // reason: the sequence lock's two sides, as the runtime uses them
mod tests {
    use super::*;
    use core::cell::UnsafeCell;

    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Pair {
        a: u64,
        b: u64,
    }

    struct Shared {
        flags: Flags,
        pair: UnsafeCell<Pair>,
    }

    // SAFETY: the pair is written by one thread inside hold/release only
    // and read through `copy_between_calls` only.
    unsafe impl Sync for Shared {}

    /// A copy is kept only if no write overlapped it: every kept copy has
    /// `a == b`, which the writer breaks inside each call; once the writer
    /// stops, a copy is kept at once and holds its last value.
    #[test]
    fn a_kept_copy_is_never_torn() {
        const CALLS: u64 = 200_000;
        let shared = Shared {
            flags: Flags::new(),
            pair: UnsafeCell::new(Pair { a: 0, b: 0 }),
        };
        let copy = |s: &Shared| {
            let mut out = MaybeUninit::<Pair>::uninit();
            // SAFETY: both are a `Pair`; only the writer below writes it,
            // inside hold/release.
            unsafe { copy_between_calls(&s.flags, s.pair.get(), out.as_mut_ptr()) }
                // SAFETY: kept copies are whole values.
                .then(|| unsafe { out.assume_init() })
        };
        let done = &core::sync::atomic::AtomicBool::new(false);
        let shared = &shared;
        std::thread::scope(|scope| {
            scope.spawn(move || {
                for i in 1..=CALLS {
                    shared.flags.hold();
                    let p = shared.pair.get();
                    // SAFETY: `BUSY` held: the writer's own data.
                    unsafe {
                        p.cast::<u64>().write_volatile(i);
                        core::hint::black_box(i);
                        p.cast::<u64>().add(1).write_volatile(i);
                    }
                    shared.flags.release();
                }
                done.store(true, Ordering::Release);
            });
            let mut kept = 0u64;
            while !done.load(Ordering::Acquire) {
                if let Some(p) = copy(shared) {
                    assert_eq!(p.a, p.b, "a torn copy was kept");
                    kept += 1;
                }
            }
            core::hint::black_box(kept);
        });
        let last = copy(shared).expect("no call under way");
        assert_eq!((last.a, last.b), (CALLS, CALLS));
        assert_eq!(shared.flags.get(), 0);
    }
}
