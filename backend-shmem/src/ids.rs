//! How a thread's registration number becomes its location id. R7 breaks
//! ties by location id, and the MPI run report puts every rank's
//! locations side by side, so ids must be unique across a whole run.
//!
//! A thread-only process numbers its threads 0, 1, 2, … An MPI rank `r`
//! of `P` numbers its first [`RANK_SPAN`] threads `r << 12` onwards (the
//! readable ids the reports have always had: rank 1's main thread is
//! 4096); its later threads take ids above 2^31, interleaved by rank:
//! `2^31 + (n - 4096) * P + r` for its `n`-th thread, so no two ranks'
//! ids meet however many threads each registers. Only when even that
//! space runs out (2^31 / P threads per rank beyond the first 4,096) do
//! ids repeat; [`LocationIds::id`] says so and the runtime notes it in
//! the report.

/// Threads of one MPI rank whose ids are `rank << 12` + their number.
pub const RANK_SPAN: u32 = 1 << 12;

/// Where the interleaved ids of threads beyond [`RANK_SPAN`] start.
pub const HIGH: u32 = 1 << 31;

/// The mapping from registration numbers to location ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocationIds {
    /// The id of the first thread.
    base: u32,
    /// Threads numbered from `base` on.
    span: u32,
    /// Ranks sharing the interleaved range.
    stride: u32,
    /// This rank's place in it.
    offset: u32,
}

impl LocationIds {
    /// A process of its own: the id is the registration number.
    pub const THREADS: LocationIds = LocationIds {
        base: 0,
        span: u32::MAX,
        stride: 1,
        offset: 0,
    };

    /// MPI rank `rank` of `size` (module docs). Ranks whose first
    /// [`RANK_SPAN`] ids would reach [`HIGH`] (from 2^19 on) take
    /// interleaved ids from their first thread.
    pub fn rank(rank: u32, size: u32) -> LocationIds {
        let fits = rank < HIGH / RANK_SPAN;
        LocationIds {
            base: if fits { rank * RANK_SPAN } else { 0 },
            span: if fits { RANK_SPAN } else { 0 },
            stride: size.max(rank + 1),
            offset: rank,
        }
    }

    /// The id of the thread registered `index`-th, and whether it is
    /// unique (`false`: beyond the id space, the id repeats another's).
    pub fn id(&self, index: u32) -> (u32, bool) {
        if self.span == u32::MAX {
            return (index, true); // THREADS: every u32 is its own id
        }
        if index < self.span {
            return (self.base + index, true);
        }
        let beyond = u64::from(index - self.span);
        let id = u64::from(HIGH) + beyond * u64::from(self.stride) + u64::from(self.offset);
        (id as u32, id <= u64::from(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn a_thread_only_process_numbers_its_threads() {
        let ids = LocationIds::THREADS;
        assert_eq!(ids.id(0), (0, true));
        assert_eq!(ids.id(70_000), (70_000, true));
        assert_eq!(ids.id(u32::MAX), (u32::MAX, true));
    }

    #[test]
    fn a_rank_keeps_its_readable_ids_for_its_first_4096_threads() {
        let ids = LocationIds::rank(1, 4);
        assert_eq!(ids.id(0), (4096, true));
        assert_eq!(ids.id(4095), (8191, true));
        // the 4,097th thread no longer runs into rank 2's main thread
        assert_eq!(ids.id(4096), (HIGH + 1, true));
        assert_ne!(ids.id(4096).0, LocationIds::rank(2, 4).id(0).0);
    }

    #[test]
    fn ranks_with_10000_threads_each_never_share_an_id() {
        let size = 5;
        let mut seen = HashSet::new();
        for rank in 0..size {
            let ids = LocationIds::rank(rank, size);
            for index in 0..10_000 {
                let (id, unique) = ids.id(index);
                assert!(unique);
                assert!(seen.insert(id), "rank {rank} thread {index}: id {id} twice");
            }
        }
    }

    #[test]
    fn beyond_the_id_space_the_repeat_is_told() {
        let ids = LocationIds::rank(3, 1 << 16);
        // 2^31 / 2^16 = 32,768 interleaved ids per rank
        assert!(ids.id(RANK_SPAN + 32_767).1);
        assert!(!ids.id(RANK_SPAN + 32_768).1);
    }

    #[test]
    fn ranks_from_2_19_on_interleave_from_their_first_thread() {
        let rank = HIGH / RANK_SPAN; // 2^19
        let ids = LocationIds::rank(rank, rank + 2);
        assert_eq!(ids.id(0), (HIGH + rank, true));
        assert_eq!(ids.id(1), (HIGH + (rank + 2) + rank, true));
        // below it, the last readable rank ends just under HIGH
        assert_eq!(
            LocationIds::rank(rank - 1, rank + 2).id(4095),
            (HIGH - 1, true)
        );
    }
}
