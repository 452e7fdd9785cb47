//! Every built-in scenario has the shape of the published result it
//! reproduces: seed 000 §3 (parallel compensation exact where local-only is
//! not), a pipeline whose local-only error grows stage by stage, and seed
//! 003 Fig. 7, 8, 12 and 13 (critical-path shares against CPU shares).

use heisen_sim::analysis::{CpProfile, ProfileRow, profile};
use heisen_sim::builtin::{BUILTINS, program};
use heisen_sim::compare::{Comparison, compare, compare_with};
use heisen_sim::engine::TraceKind;

fn run(name: &str) -> Comparison {
    let p = program(name, None).unwrap_or_else(|| panic!("{name} is not a built-in"));
    compare(&p).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A critical-path profile read the way seed 003 reads its tables: each
/// selected region's percent of the critical path and of the CPU time.
struct Shares(CpProfile);

impl Shares {
    fn row(&self, name: &str) -> &ProfileRow {
        self.0
            .rows
            .iter()
            .find(|r| r.region == name)
            .unwrap_or_else(|| panic!("no region {name}\n{}", self.0))
    }

    fn cp(&self, r: &ProfileRow, exclusive: bool) -> f64 {
        let v = if exclusive {
            r.cp_exclusive
        } else {
            r.cp_inclusive
        };
        v.unwrap_or(0) as f64 * 100.0 / self.0.length as f64
    }

    fn cpu(&self, r: &ProfileRow, exclusive: bool) -> f64 {
        let v = if exclusive {
            r.cpu_exclusive
        } else {
            r.cpu_inclusive
        };
        v as f64 * 100.0 / self.0.cpu_total as f64
    }

    /// `(percent of CP, percent of CPU)` of region `name`.
    fn shares(&self, name: &str, exclusive: bool) -> (f64, f64) {
        let r = self.row(name);
        (self.cp(r, exclusive), self.cpu(r, exclusive))
    }

    /// Ranks (1 = largest) of region `name` by CP share and by CPU share
    /// among the regions the critical path covers.
    fn ranks(&self, name: &str, exclusive: bool) -> (usize, usize) {
        let me = self.row(name);
        let rows = self.0.rows.iter().filter(|r| r.cp_inclusive.is_some());
        let (cp, cpu) = (self.cp(me, exclusive), self.cpu(me, exclusive));
        let by_cp = 1 + rows.clone().filter(|r| self.cp(r, exclusive) > cp).count();
        let by_cpu = 1 + rows.filter(|r| self.cpu(r, exclusive) > cpu).count();
        (by_cp, by_cpu)
    }
}

/// Both critical-path profiles of a built-in: online from the measured
/// run's kernels, offline from the truth run's activity graph.
fn profiles(name: &str) -> [Shares; 2] {
    let p = program(name, None).unwrap();
    let both = profile(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
    print!("{both}");
    [Shares(both.online), Shares(both.offline)]
}

/// Seed 000 §3: timestamped compensation lands on the truth everywhere,
/// the uncompensated run is late everywhere, and local-only compensation
/// misses some receiver (it cannot know the overhead it waited for).
fn parallel_exact_local_only_not(c: &Comparison) {
    for r in &c.rows {
        assert!(r.measured > r.truth, "{r:?}\n{}", c.table());
        assert_eq!(r.timestamped, r.truth as i64, "{r:?}\n{}", c.table());
        assert!(r.delay_only >= r.truth as i64, "R4 upper bound: {r:?}");
    }
    assert!(
        c.rows.iter().any(|r| r.local_only > r.truth as i64),
        "{}",
        c.table()
    );
}

#[test]
fn every_builtin_is_listed_once_and_runs() {
    for (i, b) in BUILTINS.iter().enumerate() {
        assert!(
            BUILTINS[..i].iter().all(|o| o.name != b.name),
            "{} twice",
            b.name
        );
        assert!(!b.summary.is_empty());
        let c = compare(&(b.build)()).unwrap_or_else(|e| panic!("{}: {e}", b.name));
        assert!(!c.rows.is_empty());
    }
}

#[test]
fn one_send_fig_2_receiver_inherits_the_senders_overhead() {
    let c = run("one-send");
    parallel_exact_local_only_not(&c);
    // The receiver waited for the message: delay-only is exact too (R4).
    assert!(c.rows.iter().all(|r| r.delay_only == r.truth as i64));
    // P1 has no merge: local-only is exact for it, not for P2.
    assert_eq!(c.rows[0].local_only, c.rows[0].truth as i64);
    assert!(c.rows[1].local_only > c.rows[1].truth as i64);
}

#[test]
fn two_sends_fig_3_4_delay_carries_to_the_second_message() {
    let c = run("two-sends");
    parallel_exact_local_only_not(&c);
    assert!(c.rows.iter().all(|r| r.delay_only == r.truth as i64));
}

#[test]
fn handshake_fig_5_6_delay_comes_back_to_its_origin() {
    let c = run("handshake");
    parallel_exact_local_only_not(&c);
    assert!(c.rows.iter().all(|r| r.delay_only == r.truth as i64));
    // P1's own end depends on P2's answer: local-only misses it on both.
    assert!(c.rows.iter().all(|r| r.local_only > r.truth as i64));
}

#[test]
fn pipeline3_fig_8_delay_propagates_through_the_middle() {
    let c = run("pipeline3");
    parallel_exact_local_only_not(&c);
    assert!(c.rows.iter().all(|r| r.delay_only == r.truth as i64));
    // Local-only error grows along the chain.
    let err: Vec<i64> = c.rows.iter().map(|r| r.error(r.local_only)).collect();
    assert!(err[0] < err[1] && err[1] < err[2], "{err:?}");
}

#[test]
fn two_receive_fig_12_sends_swap_order_receives_do_not() {
    let c = run("two-receive");
    parallel_exact_local_only_not(&c);
    assert!(c.rows.iter().all(|r| r.delay_only == r.truth as i64));
    // When P1 (location 0) and P3 (location 2) send, measured and
    // approximated (timestamped form) side by side.
    let p = program("two-receive", None).unwrap();
    let measured = compare_with(&p, true).unwrap().measured;
    let trace = measured.trace.unwrap();
    let approximated = measured.approximated.unwrap();
    let send = |location: u32| {
        trace
            .iter()
            .zip(&approximated)
            .find(|(e, _)| e.location == location && matches!(e.what, TraceKind::Send(_)))
            .map(|(e, a)| (e.begin as i64, a.0))
            .unwrap()
    };
    let (p1, p3) = (send(0), send(2));
    assert!(p1.0 < p3.0, "measured: P1 sends first {p1:?} {p3:?}");
    assert!(p3.1 < p1.1, "approximated: P3 sends first {p1:?} {p3:?}");
    // The approximated sends are the truth's: 4.0 and 3.0 µs.
    assert_eq!((p1.1, p3.1), (4_000, 3_000));
}

#[test]
fn pipeline_local_only_error_grows_stage_by_stage() {
    let c = run("pipeline");
    for r in &c.rows {
        assert_eq!(r.timestamped, r.truth as i64, "{r:?}\n{}", c.table());
        assert!(r.delay_only >= r.truth as i64);
    }
    let err: Vec<i64> = c.rows.iter().map(|r| r.error(r.local_only)).collect();
    assert!(
        err.windows(2).all(|w| w[0] < w[1]),
        "{err:?}\n{}",
        c.table()
    );
}

#[test]
fn nas_is_fig_7_create_seq_third_by_cpu_first_by_critical_path() {
    for p in profiles("nas-is") {
        // 003 Fig. 7 ranks exclusive (self) times: create_seq 66.5% of the
        // path for 12.3% of the CPU.
        assert_eq!(p.ranks("create_seq", true), (1, 3), "{}", p.0);
        let (cp, cpu) = p.shares("create_seq", true);
        assert!(cp > 50.0 && cpu < 15.0, "{}", p.0);
        assert_eq!(p.ranks("nas_is_ben", true).1, 1, "{}", p.0);
    }
}

#[test]
fn tsp_fig_8_manager_large_cp_share_for_small_cpu_share() {
    for p in profiles("tsp") {
        // 003 Fig. 8: BeManager 19.3% CPU but 48% CP; MinCircuit 80.7% CPU.
        let (cp, cpu) = p.shares("BeManager", false);
        assert!(cpu < 20.0 && cp > 3.0 * cpu, "{}", p.0);
        assert!(p.shares("MinCircuit", false).1 > 75.0, "{}", p.0);
        assert_eq!(p.ranks("BeManager", false), (1, 2), "{}", p.0);
    }
}

#[test]
fn raytrace_fig_12_sequential_read_weighs_more_on_the_path() {
    for p in profiles("raytrace") {
        // 003 Fig. 12: 3.5% CPU, 13.5% CP (about four times).
        let (cp, cpu) = p.shares("ReadGeoFile", true);
        assert!(cp > 3.0 * cpu, "{}", p.0);
        // Zeroing it gains all of it: nothing else runs meanwhile.
        let read = p.row("ReadGeoFile");
        assert_eq!(read.zero, read.cp_inclusive, "{}", p.0);
        // The intersection routine is first by both metrics.
        assert_eq!(
            p.ranks("IntersectHuniformPrimlist", true),
            (1, 1),
            "{}",
            p.0
        );
    }
}

#[test]
fn cholesky_fig_13_sequential_routines_gain_parallel_ones_lose() {
    for p in profiles("cholesky") {
        // 003 Fig. 13: FillInNZ 3.3% CPU, 8.6% CP; GetBlock 4.6% CPU, 2.1%
        // CP; ModifyTwoBy 36.8% CPU, 24.7% CP.
        let (cp, cpu) = p.shares("FillInNZ", true);
        assert!(cp > 2.0 * cpu, "{}", p.0);
        let (cp, cpu) = p.shares("GetBlock", true);
        assert!(cp < cpu / 2.0, "{}", p.0);
        let (cp, cpu) = p.shares("ModifyTwoBy", true);
        assert!(cp < cpu, "{}", p.0);
        // FillInNZ overtakes GetBlock: behind it by CPU, ahead on the path.
        let fill = p.ranks("FillInNZ", true);
        let get = p.ranks("GetBlock", true);
        assert!(
            fill.0 < get.0 && fill.1 > get.1,
            "{fill:?} {get:?}\n{}",
            p.0
        );
    }
}

#[test]
fn random_programs_are_exact_and_named_by_seed() {
    for seed in 0..40 {
        let p = program(&format!("random-{seed}"), None).unwrap();
        assert_eq!(p, program("random", Some(seed)).unwrap());
        let c = compare(&p).unwrap_or_else(|e| panic!("random-{seed}: {e}"));
        for r in &c.rows {
            assert_eq!(
                r.timestamped,
                r.truth as i64,
                "seed {seed}: {r:?}\n{}",
                c.table()
            );
            assert!(r.delay_only >= r.truth as i64, "seed {seed}: {r:?}");
        }
    }
    assert!(program("random-x", None).is_none());
    assert_ne!(
        program("random-1", None).unwrap(),
        program("random-2", None).unwrap()
    );
}
