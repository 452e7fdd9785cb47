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
//! library in a process) has its own variable: the symbol is hidden.
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
