//! The ranks of this rank's node, found at `MPI_Init` without making a
//! communicator, and the few node-wide exchanges set-up needs over them.
//!
//! Set-up needs a node for two things: the node's first rank calibrates
//! for the node (`startup`, R1) and installs one TSC conversion for it
//! (`align`, R5). `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)` found the
//! node before, but MPICH makes a communicator with blocking, spinning
//! collectives: at 8 ranks on 2 cores it took 0.26–0.37 s of a 0.75–1.1 s
//! `MPI_Init`, at 33 ranks 2.3 s, and MPI has no nonblocking form of it.
//! Here one `MPI_Iallgather` of every rank's node key on heisen's own
//! duplicate of `MPI_COMM_WORLD`, completed without spinning (`quiet`),
//! gives every rank the world ranks of its node; the node's broadcasts and
//! reductions are point-to-point messages between the node's first rank
//! and the others on that duplicate, each completed the same way.
//!
//! The node key says which processes read one TSC and run one machine's
//! code at one cost: the running kernel's boot id
//! (`/proc/sys/kernel/random/boot_id`), else the host name. A process's
//! `HEISEN_NODE`, when set, is its key instead: ranks with different
//! values are treated as on different nodes, so one machine can run the
//! set-up of several (each "node" calibrates and installs its own TSC
//! conversion, and alignment measures and applies offsets between them).

use core::ffi::{c_int, c_void};

use crate::quiet;
use crate::sys::{self, MPI_Comm};

/// The tag of the node's messages on heisen's duplicate (alignment's
/// ping-pongs use 1).
const TAG: c_int = 2;

/// The ranks of one node, in world order, and this rank's place among them.
#[derive(Clone, Debug)]
pub struct Group {
    comm: MPI_Comm,
    members: Vec<c_int>,
    index: usize,
}

impl Group {
    /// This rank's node (collective over `comm`, a duplicate of
    /// `MPI_COMM_WORLD` in which this rank is `rank`); `None` after an MPI
    /// error.
    pub fn find(comm: MPI_Comm, rank: c_int, size: c_int) -> Option<Group> {
        let mine = node_key();
        let mut keys = vec![[0u64; 2]; usize::try_from(size).ok()?];
        // SAFETY: two u64 from every rank into `size` pairs, on heisen's
        // duplicate; completed before returning.
        let rc = unsafe {
            quiet::allgather(
                mine.as_ptr().cast::<c_void>(),
                keys.as_mut_ptr().cast::<c_void>(),
                2,
                sys::RSMPI_UINT64_T,
                comm,
            )
        };
        if rc != sys::success() {
            return None;
        }
        let (members, index) = members(&keys, usize::try_from(rank).ok()?)?;
        Some(Group {
            comm,
            members,
            index,
        })
    }

    /// This rank's index on the node (0: the node's first rank).
    pub fn rank(&self) -> c_int {
        self.index as c_int
    }

    /// How many ranks the node has.
    pub fn size(&self) -> c_int {
        self.members.len() as c_int
    }

    /// The node's first rank, in `MPI_COMM_WORLD`.
    pub fn first(&self) -> c_int {
        self.members[0]
    }

    /// `buf` from the node's first rank to every rank of the node (all pass
    /// buffers of one length). Whether every message went through.
    pub fn bcast(&self, buf: &mut [u8]) -> bool {
        let Ok(len) = c_int::try_from(buf.len()) else {
            return false;
        };
        if self.index != 0 {
            // SAFETY: `len` bytes into `buf`, from the node's first rank.
            return unsafe {
                quiet::recv(
                    buf.as_mut_ptr().cast(),
                    len,
                    sys::byte(),
                    self.first(),
                    TAG,
                    self.comm,
                )
            } == sys::success();
        }
        // One message after another, each completed by `quiet` (blocking
        // under MPICH's fault tolerance): a few dozen bytes, set-up only.
        self.members[1..].iter().all(|&to| {
            // SAFETY: `len` bytes of `buf` to a member of the node.
            let rc =
                unsafe { quiet::send(buf.as_ptr().cast(), len, sys::byte(), to, TAG, self.comm) };
            rc == sys::success()
        })
    }

    /// [`Group::bcast`] of integers.
    pub fn bcast_i64<const N: usize>(&self, values: &mut [i64; N]) -> bool {
        let mut bytes = to_bytes(values);
        let ok = self.bcast(&mut bytes);
        *values = from_bytes(&bytes);
        ok
    }

    /// Every rank's `values` folded element by element with `fold` at the
    /// node's first rank (in node order), the result given to every rank.
    pub fn allreduce_i64<const N: usize>(
        &self,
        values: &mut [i64; N],
        fold: fn(i64, i64) -> i64,
    ) -> bool {
        let mut bytes = to_bytes(values);
        let len = bytes.len() as c_int;
        let mut ok = true;
        if self.index == 0 {
            for &from in &self.members[1..] {
                let mut theirs = vec![0u8; bytes.len()];
                // SAFETY: `len` bytes from a rank of the node.
                let rc = unsafe {
                    quiet::recv(
                        theirs.as_mut_ptr().cast(),
                        len,
                        sys::byte(),
                        from,
                        TAG,
                        self.comm,
                    )
                };
                ok &= rc == sys::success();
                let theirs: [i64; N] = from_bytes(&theirs);
                for (v, t) in values.iter_mut().zip(theirs) {
                    *v = fold(*v, t);
                }
            }
            bytes = to_bytes(values);
        } else {
            // SAFETY: `len` bytes to the node's first rank.
            let rc = unsafe {
                quiet::send(
                    bytes.as_ptr().cast(),
                    len,
                    sys::byte(),
                    self.first(),
                    TAG,
                    self.comm,
                )
            };
            ok &= rc == sys::success();
        }
        ok &= self.bcast(&mut bytes);
        *values = from_bytes(&bytes);
        ok
    }
}

fn to_bytes<const N: usize>(values: &[i64; N]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn from_bytes<const N: usize>(bytes: &[u8]) -> [i64; N] {
    let mut out = [0i64; N];
    for (v, chunk) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        *v = i64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
    }
    out
}

/// The world ranks whose key is `keys[me]`, ascending, and `me`'s index
/// among them; `None` when `me` is not a rank of `keys`.
pub fn members(keys: &[[u64; 2]], me: usize) -> Option<(Vec<c_int>, usize)> {
    let key = keys.get(me)?;
    let members: Vec<c_int> = (0..keys.len())
        .filter(|&r| keys[r] == *key)
        .map(|r| r as c_int)
        .collect();
    let index = members.iter().position(|&r| r as usize == me)?;
    Some((members, index))
}

/// This process's node key (module docs): 128 bits of `HEISEN_NODE`, else
/// of the kernel's boot id, else of the host name.
pub fn node_key() -> [u64; 2] {
    let name = std::env::var("HEISEN_NODE")
        .ok()
        .map(|n| format!("HEISEN_NODE={n}"))
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .ok()
                .map(|id| format!("boot_id={}", id.trim()))
        })
        .unwrap_or_else(|| format!("host={}", host_name()));
    key_of(name.as_bytes())
}

/// Two 64-bit FNV-1a hashes of `bytes` with different offsets.
fn key_of(bytes: &[u8]) -> [u64; 2] {
    use heisen_core::hash::{OFFSET, fnv1a_from};
    [
        fnv1a_from(OFFSET, bytes),
        fnv1a_from(0x6c62_272e_07bb_0142, bytes),
    ]
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf.len()` writable bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{key_of, members};

    /// Every rank finds the ranks of its own key, in world order, and its
    /// index among them; two nodes interleaved in world order stay apart.
    #[test]
    fn members_are_the_ranks_of_one_key_in_world_order() {
        let (a, b) = (key_of(b"node a"), key_of(b"node b"));
        assert_ne!(a, b);
        let keys = [a, b, a, a, b];
        assert_eq!(members(&keys, 0), Some((vec![0, 2, 3], 0)));
        assert_eq!(members(&keys, 3), Some((vec![0, 2, 3], 2)));
        assert_eq!(members(&keys, 1), Some((vec![1, 4], 0)));
        assert_eq!(members(&keys, 4), Some((vec![1, 4], 1)));
        assert_eq!(members(&keys, 5), None);
        assert_eq!(members(&[a], 0), Some((vec![0], 0)));
    }
}
