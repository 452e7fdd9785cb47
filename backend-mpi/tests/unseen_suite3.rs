//! Programs written from scratch after differences that more of MPICH
//! 4.0.2's own test suite (`test/mpi`: `part`, `io`, `spawn`, `mpi_t`,
//! `f08`, the rest of `rma` and `coll`) showed between a run with and
//! without the interposer. Each program in `tests/c/unseen_*.c` runs under
//! `mpiexec -n N` with and without `LD_PRELOAD=libheisen_mpi.so`
//! ([`common::compare`]): per-rank lines, standard output and the exit
//! code must be the same, and heisen must add nothing on stderr.

mod common;

use common::compare;

/// Runs `name` on `ranks` ranks both ways; the plain run must succeed and
/// the run with heisen may not print anything the plain run did not.
/// Returns the plain run's lines.
fn same_both_ways(name: &str, ranks: u32) -> Vec<String> {
    let (lines, plain, measured) = compare("suite3", name, ranks);
    assert!(
        plain.status.success(),
        "{name} without heisen failed: {}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let theirs = String::from_utf8_lossy(&plain.stderr).into_owned();
    for line in String::from_utf8_lossy(&measured.stderr).lines() {
        assert!(
            theirs.contains(line),
            "{name} on {ranks} ranks: stderr with heisen only: {line}"
        );
    }
    lines
}

/// MPICH's `part/nonblocking_pready`: rank 0 signals with `MPI_Send(NULL,
/// 0, MPI_DATATYPE_NULL, ...)`. heisen queried the datatype to choose how
/// to piggyback, and MPICH aborted both ranks in
/// `MPI_Type_get_envelope_c` ("Datatype for argument datatype is a null
/// datatype"). Empty messages of the null type in every point-to-point
/// shape (blocking, `_c`, nonblocking, exchanges, persistent, beside a
/// partitioned send) must work and report empty statuses; heisen's
/// `MPI_Isendrecv_replace` also aborted, in `MPI_Pack_size_c`.
#[test]
fn empty_messages_of_the_null_datatype_pass_in_every_shape() {
    let lines = same_both_ways("unseen_null_type", 2);
    for line in [
        "r1 recv rc=0 source=0 tag=5 count=0 elements=0",
        "r1 recv any rc=0 source=0 tag=6 count=0 elements=0",
        "r1 probe rc=0 source=0 tag=7 count=0 elements=0",
        "r1 recv_c rc=0 source=0 tag=7 count=0 elements=0",
        "r0 irecv rc=0 source=1 tag=8 count=0 elements=0",
        "r1 sendrecv rc=0 source=0 tag=9 count=0 elements=0",
        "r0 replace rc=0 source=1 tag=11 count=0 elements=0",
        "r1 isendrecv rc=0",
        "r0 isendrecv_replace rc=0",
        "r1 persistent rc=0 source=0 tag=10 count=0 elements=0",
        "r1 partitioned got 42",
        "r1 after rc=0 source=0 tag=5 count=1 elements=1",
        "r1 after got 7",
    ] {
        assert!(lines.iter().any(|l| l == line), "{line} not in {lines:?}");
    }
}
