//! `heisen simulate master-worker` has the shape of seed 000 Table 1:
//! the master's uncompensated end is far above the truth, local-only
//! compensation is no better for it (its own overhead is small; it waited
//! for the workers' overhead), and parallel compensation is on the truth.

use heisen_sim::builtin::{find, master_worker};
use heisen_sim::compare::compare;

fn relative(error: i64, truth: u64) -> f64 {
    error as f64 / truth as f64
}

#[test]
fn master_worker_has_the_shape_of_seed_000_table_1() {
    let program = (find("master-worker").unwrap().build)();
    let c = compare(&program).unwrap();
    println!("{}", c.table());
    let master = &c.rows[0];
    assert_eq!(master.location, "master");
    // 000 Table 1: master 73.926 truth, 128.179 uncompensated.
    assert!(
        relative(master.error(master.measured as i64), master.truth) > 0.30,
        "{master:?}"
    );
    // Local compensation does not help the master (139.56 in the paper).
    assert!(
        relative(master.error(master.local_only), master.truth) > 0.30,
        "{master:?}"
    );
    // Parallel compensation: 73.926, the truth.
    assert!(
        relative(master.error(master.timestamped), master.truth).abs() < 0.005,
        "{master:?}"
    );
    assert!(
        master.error(master.delay_only) >= 0
            || relative(master.error(master.delay_only), master.truth).abs() < 0.005
    );
    for w in &c.rows[1..] {
        // Workers: local compensation works (73.212 vs 73.834), and so does
        // the parallel one (73.909).
        assert!(
            relative(w.error(w.measured as i64), w.truth) > 0.30,
            "{w:?}"
        );
        assert!(
            relative(w.error(w.local_only), w.truth).abs() < 0.01,
            "{w:?}"
        );
        assert!(
            relative(w.error(w.timestamped), w.truth).abs() < 0.005,
            "{w:?}"
        );
    }
}

#[test]
fn master_worker_is_deterministic() {
    let a = compare(&master_worker(3, 4, 20)).unwrap();
    let b = compare(&master_worker(3, 4, 20)).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.table(), b.table());
}
