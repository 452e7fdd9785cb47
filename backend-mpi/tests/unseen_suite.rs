//! Programs written from scratch after differences MPICH 4.0.2's own test
//! suite (`test/mpi`: `threads`, `f77`, `f90`, `rma`, `coll`, `part`)
//! showed between a run with and without the interposer. Each program in
//! `tests/c/unseen_*.c` runs under `mpiexec -n N` with and without
//! `LD_PRELOAD=libheisen_mpi.so`; per-rank lines, standard output and the
//! exit code must be the same, and heisen must add nothing on stderr
//! (MPICH's own warnings included: they come from what heisen did).

mod common;

use common::compare_with;

/// Runs `name` on `ranks` ranks both ways ([`common::compare`]); the plain
/// run must succeed, and the run with heisen may not print even MPICH's
/// abort line on its own. Returns the plain run's lines.
fn same_both_ways(name: &str, ranks: u32) -> Vec<String> {
    same_both_ways_with(name, ranks, &[])
}

/// [`same_both_ways`] with environment variables for every rank.
fn same_both_ways_with(name: &str, ranks: u32, vars: &[(&str, &str)]) -> Vec<String> {
    let (lines, plain, measured) = compare_with("suite", name, ranks, vars);
    assert!(
        plain.status.success(),
        "{name} without heisen failed: {}",
        String::from_utf8_lossy(&plain.stderr)
    );
    for line in String::from_utf8_lossy(&measured.stderr).lines() {
        assert!(
            String::from_utf8_lossy(&plain.stderr).contains(line),
            "{name} on {ranks} ranks: stderr with heisen only: {line}"
        );
    }
    lines
}

/// MPICH's `threads/pt2pt/mt_mpicancel`: 400 receives of one int pending
/// at once in four threads, all cancelled, were beyond heisen's 64 staging
/// buffers; the rest went with a struct type, and MPICH 4.0.2 printed
/// "yaksa: 144 leaked handle pool objects" at `MPI_Finalize` (380 here).
#[test]
fn hundreds_of_small_receives_cancelled_in_four_threads_leave_mpich_silent() {
    let lines = same_both_ways("unseen_cancel_many", 2);
    for line in [
        "r0 provided multiple=1",
        "r0 thread 0 cancelled 100 of 100",
        "r0 thread 3 cancelled 100 of 100",
        "r0 doubles cancelled 300 of 300",
        "r0 after got 8",
        "r1 after got 7",
    ] {
        assert!(lines.iter().any(|l| l == line), "{line} not in {lines:?}");
    }
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

/// MPICH's `errors/coll/bcastlength` (and `gatherlength`, the same with
/// the root failing alone): under `MPI_ERRORS_RETURN`, a broadcast whose
/// lengths differ between ranks fails on some ranks and succeeds on the
/// root. heisen made its extra exchange only where the call succeeded;
/// the ranks disagreed, the next broadcast returned `MPI_ERR_TRUNCATE` on
/// ranks 1 to 3 and `MPI_Finalize` hung (MPICH's `bcastlength` aborted in
/// it).
#[test]
fn collectives_that_fail_on_some_ranks_only_keep_the_ranks_in_step() {
    let lines = same_both_ways("unseen_coll_lengths", 4);
    for line in [
        "r0 bcast long ok",
        "r1 bcast long error",
        "r3 bcast short error",
        "r1 after bcast long allreduce rc=0 sum=10 bcast rc=0 word=42",
        "r3 after bcast short allreduce rc=0 sum=10 bcast rc=0 word=42",
        "r2 barrier rc=0",
    ] {
        assert!(lines.iter().any(|l| l == line), "{line} not in {lines:?}");
    }
}

/// MPICH's `errors/comm/ccreate1`: `MPI_Comm_create` with a group that is
/// not a subset of the parent fails on the ranks inside the group and
/// returns `MPI_COMM_NULL` on the others. heisen made its extra exchange on
/// the parent where the call succeeded, and those ranks waited in it for
/// ever (ccreate1 hung at 8 ranks). It now exchanges on the new
/// communicator; after an argument error there is still no exchange
/// (`errors/coll/noalias` makes up the failed call). Argument errors on
/// every rank (`MPI_OP_NULL`, a root out of range) must call the
/// program's error handler once each, as without heisen.
#[test]
fn collectives_rejected_for_their_arguments_on_some_ranks_do_not_hang() {
    let lines = same_both_ways("unseen_arg_errors", 4);
    for line in [
        "r0 create high from low rc=ok null=1",
        "r1 create high from low rc=error null=0",
        "r0 after create high allreduce rc=0 sum=3 barrier rc=0",
        "r1 after create high allreduce rc=0 sum=3 barrier rc=0",
        "r2 create odd from even rc=ok null=1",
        "r2 after create odd allreduce rc=0 sum=4 barrier rc=0",
        "r3 allreduce op null rc=9 handled=1",
        "r3 bcast root 99 rc=7 handled=2 word=3",
        "r0 after root 99 allreduce rc=0 sum=10 barrier rc=0",
        "r1 handled 2",
    ] {
        assert!(lines.iter().any(|l| l == line), "{line} not in {lines:?}");
    }
}

/// MPICH's `ft` tests, and `comm/dup` with `MPIR_CVAR_ENABLE_FT=1`: with
/// fault tolerance on, MPICH 4.0.2 aborts in `MPI_Test` or `MPI_Wait` of
/// any request not yet complete. heisen's `MPI_Init` polled a nonblocking
/// `MPI_Comm_idup`, and a correct program of blocking calls aborted on
/// every rank; heisen's own calls are now blocking when the variable is
/// set. The report shows heisen measured the run.
#[test]
fn blocking_programs_run_with_mpich_fault_tolerance_on() {
    let lines = same_both_ways_with("unseen_ft_env", 3, &[("MPIR_CVAR_ENABLE_FT", "1")]);
    for line in [
        "r0 sendrecv got 20",
        "r1 large recv rc=0 source=0 tag=2 count=131072 elements=131072",
        "r0 any source sum 5",
        "r2 gathered [ 0 1 2 ]",
        "r1 bcast 42 allreduce 3 half 1",
    ] {
        assert!(lines.iter().any(|l| l == line), "{line} not in {lines:?}");
    }
    let reports = common::scratch_path("suite-unseen_ft_env-3").join("reports");
    assert!(
        reports.join("heisen.mpi.json").exists(),
        "no run report in {}",
        reports.display()
    );
}
