//! This thread's slot pointer, read on every event: the one thread-local
//! variable of the hot path.
//!
//! A `thread_local!` in a shared library (`libheisen.so`, the interposers)
//! uses the general-dynamic TLS model, a call to `__tls_get_addr` on every
//! read (about 13 instructions a read with the call; two a region pair).
//! On x86-64 Linux the pointer lives instead in a variable of the
//! initial-exec model, declared here in assembly (stable Rust cannot choose
//! the model of a `thread_local!`): a read is one load from the thread
//! pointer at an offset the dynamic linker fixes once. The library's TLS
//! block then has to go into the static TLS area, which holds every library
//! loaded at start-up (linked or `LD_PRELOAD`ed) and, since glibc 2.32, a
//! reserve of 512 bytes for libraries opened later with `dlopen` (the
//! block of `libheisen.so` is about 200 bytes); jemalloc's shared library
//! uses the same model. Each copy of the runtime code (one per heisen
//! library in a process) has its own variable: the symbol is hidden. The
//! interposers' re-entry flag ([`reentry`]) lives beside it the same way.
//! Elsewhere it is a plain `thread_local!`.

use crate::thread::Thread;

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[allow(unsafe_code)] // reason: global_asm declares the TLS variable (each asm! block says why it holds)
mod imp {
    use super::Thread;

    // The variable itself, in the thread-local BSS section.
    core::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".p2align 3",
        ".globl heisen_shmem_current_thread",
        ".hidden heisen_shmem_current_thread",
        ".type heisen_shmem_current_thread, @object",
        ".size heisen_shmem_current_thread, 8",
        "heisen_shmem_current_thread:",
        ".zero 8",
        ".popsection",
    );

    // The interposers' re-entry flag (`super::inside`), beside it.
    core::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".globl heisen_shmem_inside",
        ".hidden heisen_shmem_inside",
        ".type heisen_shmem_inside, @object",
        ".size heisen_shmem_inside, 1",
        "heisen_shmem_inside:",
        ".zero 1",
        ".popsection",
    );

    /// The calling thread's re-entry flag.
    #[inline(always)]
    pub(crate) fn inside() -> bool {
        let v: u32;
        // SAFETY: reads this thread's instance of the 1-byte TLS variable
        // declared above, by the initial-exec sequence (see `get`).
        #[allow(unsafe_code)] // reason: the initial-exec TLS read
        unsafe {
            core::arch::asm!(
                "mov {o}, qword ptr [rip + heisen_shmem_inside@GOTTPOFF]",
                "movzx {v:e}, byte ptr fs:[{o}]",
                o = out(reg) _,
                v = out(reg) v,
                options(nostack, readonly, preserves_flags),
            );
        }
        v != 0
    }

    /// An identity of the calling thread, unique among live threads and
    /// never 0: the address of its instance of the re-entry flag.
    #[inline(always)]
    pub(crate) fn thread_key() -> usize {
        let a: usize;
        // SAFETY: computes an address from the thread pointer (`fs:0`
        // holds it, x86-64 TLS ABI) and the GOT's offset; reads nothing
        // else.
        #[allow(unsafe_code)] // reason: the initial-exec TLS address
        unsafe {
            core::arch::asm!(
                "mov {a}, qword ptr fs:[0]",
                "add {a}, qword ptr [rip + heisen_shmem_inside@GOTTPOFF]",
                a = out(reg) a,
                options(nostack, readonly, pure),
            );
        }
        a
    }

    /// Sets the calling thread's re-entry flag.
    #[inline(always)]
    pub(crate) fn set_inside(on: bool) {
        // SAFETY: writes this thread's instance of the variable (see
        // `inside`).
        #[allow(unsafe_code)] // reason: the initial-exec TLS write
        unsafe {
            core::arch::asm!(
                "mov {o}, qword ptr [rip + heisen_shmem_inside@GOTTPOFF]",
                "mov byte ptr fs:[{o}], {v}",
                o = out(reg) _,
                v = in(reg_byte) u8::from(on),
                options(nostack, preserves_flags),
            );
        }
    }

    /// The calling thread's slot pointer (null: none).
    #[inline(always)]
    pub(crate) fn get() -> *const Thread {
        let p: *const Thread;
        // SAFETY: reads this thread's instance of the 8-byte TLS variable
        // declared above, through the initial-exec sequence the x86-64
        // TLS ABI defines (GOT entry with the offset from the thread
        // pointer, then a load relative to %fs); it touches no other memory.
        #[allow(unsafe_code)] // reason: the initial-exec TLS read
        unsafe {
            core::arch::asm!(
                "mov {p}, qword ptr [rip + heisen_shmem_current_thread@GOTTPOFF]",
                "mov {p}, qword ptr fs:[{p}]",
                p = out(reg) p,
                options(nostack, readonly, preserves_flags, pure),
            );
        }
        p
    }

    /// Sets the calling thread's slot pointer.
    #[inline]
    pub(crate) fn set(p: *const Thread) {
        // SAFETY: writes this thread's instance of the variable (see `get`).
        #[allow(unsafe_code)] // reason: the initial-exec TLS write
        unsafe {
            core::arch::asm!(
                "mov {o}, qword ptr [rip + heisen_shmem_current_thread@GOTTPOFF]",
                "mov qword ptr fs:[{o}], {p}",
                o = out(reg) _,
                p = in(reg) p,
                options(nostack, preserves_flags),
            );
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
mod imp {
    use super::Thread;
    use core::cell::Cell;

    std::thread_local! {
        static CURRENT: Cell<*const Thread> = const { Cell::new(core::ptr::null()) };
        static INSIDE: Cell<bool> = const { Cell::new(false) };
    }

    /// The calling thread's re-entry flag.
    #[inline]
    pub(crate) fn inside() -> bool {
        INSIDE.with(Cell::get)
    }

    /// Sets the calling thread's re-entry flag.
    #[inline]
    pub(crate) fn set_inside(on: bool) {
        INSIDE.with(|c| c.set(on));
    }

    /// An identity of the calling thread, unique among live threads and
    /// never 0: the address of its instance of the re-entry flag.
    #[inline]
    pub(crate) fn thread_key() -> usize {
        INSIDE.with(|c| core::ptr::from_ref(c) as usize)
    }

    /// The calling thread's slot pointer (null: none, or the thread is
    /// being torn down).
    #[inline]
    pub(crate) fn get() -> *const Thread {
        CURRENT.try_with(Cell::get).unwrap_or(core::ptr::null())
    }

    /// Sets the calling thread's slot pointer (ignored once the thread is
    /// being torn down).
    #[inline]
    pub(crate) fn set(p: *const Thread) {
        let _ = CURRENT.try_with(|c| c.set(p));
    }
}

pub(crate) use imp::{get, set};

/// A per-thread re-entry flag for interposers (the pthread interposer's
/// calls made from heisen's own code go straight to the originals): set
/// while heisen's part of an interposed call runs. Initial-exec like the
/// slot pointer, so that testing it costs a load, not a call to
/// `__tls_get_addr` (about 11 instructions a call). Each copy of this code
/// has its own flag.
pub mod reentry {
    /// Whether heisen's part of an interposed call runs on this thread.
    #[inline(always)]
    pub fn inside() -> bool {
        super::imp::inside()
    }

    /// Sets or clears it.
    #[inline(always)]
    pub fn set_inside(on: bool) {
        super::imp::set_inside(on);
    }

    /// An identity of the calling thread for owner fields: unique among
    /// the live threads of the process and never 0 (the address of the
    /// thread's flag; a load and an add, where `pthread_self` is a call).
    #[inline(always)]
    pub fn thread_key() -> usize {
        super::imp::thread_key()
    }
}
