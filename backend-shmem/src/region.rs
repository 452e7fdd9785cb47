//! Code regions for Rust programs: a guard that exits the region when it
//! drops (`let _g = heisen_shmem::region("solve");`), a closure form, and a
//! [`Region`] handle for the cheapest path (interned once, entered by id).
//!
//! A region's name is interned once per process (see [`crate::names`]);
//! [`region`] keeps a small per-thread cache keyed by the name's address,
//! so a `&'static str` costs a lookup only the first time a thread uses it.

use core::cell::Cell;
use core::marker::PhantomData;

use crate::runtime::{NO_REGION, runtime};
use crate::thread::with_current_region;

/// A region interned once: enter it by id, with no string work per call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    id: u32,
}

impl Region {
    /// The region called `name`. A name the runtime cannot take (empty,
    /// longer than 4,096 bytes, or beyond the name table) gives a region
    /// that is never measured; the reason is reported at exit.
    pub fn new(name: &str) -> Region {
        let rt = runtime();
        match rt.region_id(name) {
            Ok(id) => Region { id },
            Err(e) => {
                rt.note(format!(
                    "region `{}`: {e}; not measured",
                    name.chars().take(40).collect::<String>()
                ));
                Region { id: NO_REGION }
            }
        }
    }

    /// The region's id (the report's region id), `None` if it is not measured.
    pub fn id(self) -> Option<u32> {
        (self.id != NO_REGION).then_some(self.id)
    }

    /// Enters the region; it is exited when the guard drops (R1, R2).
    #[inline]
    #[must_use = "the region is exited when the guard drops"]
    pub fn enter(self) -> RegionGuard {
        let entered =
            self.id != NO_REGION && with_current_region(|s| s.enter_rust(self.id, 0)).is_some();
        RegionGuard {
            id: self.id,
            entered,
            _not_send: PhantomData,
        }
    }

    /// Runs `f` inside the region.
    #[inline]
    pub fn run<R>(self, f: impl FnOnce() -> R) -> R {
        let _guard = self.enter();
        f()
    }
}

/// An open region; dropping it exits the region. It stays on the thread
/// that entered it.
#[derive(Debug)]
pub struct RegionGuard {
    id: u32,
    entered: bool,
    _not_send: PhantomData<*const ()>,
}

impl Drop for RegionGuard {
    #[inline]
    fn drop(&mut self) {
        if self.entered {
            // An exit out of order (a guard kept past an inner one's) is
            // refused by the kernel and counted in the report.
            let _ = with_current_region(|s| s.exit_rust(self.id));
        }
    }
}

/// Per-thread cache of `&'static str` addresses to region ids.
const CACHE: usize = 64;

std::thread_local! {
    static NAMES: [Cell<(usize, usize, u32)>; CACHE] =
        const { [const { Cell::new((0, 0, NO_REGION)) }; CACHE] };
}

/// The region of a static name, through the per-thread cache.
#[inline]
fn cached(name: &'static str) -> Region {
    let key = (name.as_ptr() as usize, name.len());
    let slot = (key.0 >> 3 ^ key.0 >> 9) % CACHE;
    let hit = NAMES.with(|c| {
        let (p, l, id) = c[slot].get();
        ((p, l) == key).then_some(id)
    });
    match hit {
        Some(id) => Region { id },
        None => {
            let r = Region::new(name);
            NAMES.with(|c| c[slot].set((key.0, key.1, r.id)));
            r
        }
    }
}

/// Enters the region called `name` until the guard drops:
/// `let _g = heisen_shmem::region("solve");`.
#[inline]
#[must_use = "the region is exited when the guard drops"]
pub fn region(name: &'static str) -> RegionGuard {
    cached(name).enter()
}

/// Runs `f` inside the region called `name`.
#[inline]
pub fn in_region<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
    cached(name).run(f)
}
