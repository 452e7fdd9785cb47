//! Real-run fidelity, checked loosely: the fidelity example's program
//! (`examples/fidelity/program.rs`) run without any heisen code and with
//! heisen's wrappers and a heavy region load, alternately.
//!
//! The bounds are loose on purpose, so that the test never fails on a
//! busy machine: wall times of real threads move with whatever else runs
//! (other builds on the same two cores stretch a run by tens of percent,
//! and contention changes with it), and this test runs unoptimised. It
//! checks what must hold however noisy the run: the instrumentation
//! dilates the run, and the compensated elapsed time of every thread is
//! closer to the uninstrumented one than the instrumented wall time is.
//! The figures (within a few percent on a quiet machine, optimised) are
//! measured by the example and given in the README.

#[path = "../examples/fidelity/program.rs"]
#[allow(dead_code)] // reason: the example's printing helpers are not used here
mod program;

#[test]
fn compensated_thread_times_are_closer_to_the_uninstrumented_run() {
    let config = heisen_shmem::Config {
        output: env!("CARGO_TARGET_TMPDIR").into(),
        ..heisen_shmem::Config::from_env()
    };
    let _ = heisen_shmem::runtime::init_with(config);
    let shape = program::Shape {
        threads: 2,
        phases: 8,
        cells: 400,
        tasks: 40,
        own_every: 4,
        shared_every: 16,
    };
    let rows = program::measure(shape, 3);
    for (i, [plain, instrumented, compensated, local]) in rows.iter().copied().enumerate() {
        eprintln!(
            "thread {i}: uninstrumented {plain:.0} ns, instrumented {instrumented:.0}, compensated {compensated:.0}, local-only {local:.0}"
        );
        assert!(
            instrumented > plain,
            "thread {i}: the instrumentation load dilates the run"
        );
        assert!(
            (compensated - plain).abs() < (instrumented - plain).abs(),
            "thread {i}: compensation brings the time back towards the truth \
             ({compensated:.0} vs uninstrumented {plain:.0}, instrumented {instrumented:.0})"
        );
    }
}
