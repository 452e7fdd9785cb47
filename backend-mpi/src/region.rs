//! Every MPI call is a region (issue item 4; R1, R2): `MPI_Send`'s time is
//! the region `MPI_Send`, with its compensated inclusive time and its
//! share of the critical path like any user region.

use std::sync::OnceLock;

use heisen_shmem::runtime::NO_REGION;
use heisen_shmem::with_current;

/// A region named after an MPI function, interned on first use.
#[derive(Debug)]
pub struct Named {
    name: &'static str,
    id: OnceLock<u32>,
}

impl Named {
    /// The region `name` (interned on its first call).
    pub const fn new(name: &'static str) -> Named {
        Named {
            name,
            id: OnceLock::new(),
        }
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its id, interning the name on first use; `NO_REGION` when the name
    /// table is full.
    #[inline]
    pub fn id(&self) -> u32 {
        *self.id.get_or_init(|| {
            heisen_shmem::runtime()
                .region_id(self.name)
                .unwrap_or(NO_REGION)
        })
    }
}

/// Runs `f` inside region `region` on the calling thread's location. The
/// enter and exit are skipped where the thread is not measured; `f` runs
/// either way. A panic in `f` never crosses the MPI boundary: the run is
/// aborted with a message naming the call (`setup::fatal`). The region's call site is the region itself: an exported
/// wrapper cannot cheaply see its caller's address.
#[inline]
pub fn call<R>(region: &'static Named, f: impl FnOnce() -> R) -> R {
    let id = region.id();
    let entered = id != NO_REGION
        && crate::setup::guarded(|| with_current(|s| s.enter(id, id)).is_some()).unwrap_or(false);
    let result = match std::panic::catch_unwind(core::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => crate::setup::fatal(region.name()),
    };
    if entered {
        crate::setup::guarded(|| with_current(|s| s.exit(id)));
    }
    result
}
