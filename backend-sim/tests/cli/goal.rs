//! GOAL schedules on the command line: LogGOPSim's times (as released by
//! default, or as the fixed build), several CPUs, many ranks.

use super::*;

#[test]
fn goal_file_prints_loggopsim_times() {
    let o = ok(&["simulate", "scenarios/dissemination_16.goal"]);
    let out = stdout(&o);
    assert_eq!(
        out.lines().filter(|l| l.ends_with(": 22000")).count(),
        16,
        "{out}"
    );
    // L = 5000: 4 rounds of o + L + o = 8000.
    let o = heisen(&["simulate", "scenarios/dissemination_16.goal", "-L", "5000"]);
    assert!(stdout(&o).contains("Host 15: 32000"), "{}", stdout(&o));
}

/// `--loggopsim released` (docs/goal.md, "LogGOPSim as released"), the
/// default for end times: schedgen's allreduce_ring of 8 ranks with 1
/// byte (0-byte messages, A2) ends at 76916 as released, 77000 fixed; the
/// worked example of A3 at 10000 instead of 10100. Times only, GOAL only.
#[test]
fn goal_released_loggopsim_gives_its_times() {
    let ring = "tests/data/schedgen/allreduce_ring-8-1.goal";
    let o = ok(&["simulate", ring, "--loggopsim", "released"]);
    let out = stdout(&o);
    assert_eq!(out.matches(": 76916\n").count(), 8, "{out}");
    let o = heisen(&["simulate", ring, "--loggopsim", "fixed"]);
    assert_eq!(stdout(&o).matches(": 77000\n").count(), 8);
    // The default is LogGOPSim as released; an analysis (--json, --svg,
    // --trace) runs by the fixed build's rules and says so on stderr.
    let o = heisen(&["simulate", ring]);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    assert_eq!(stdout(&o).matches(": 76916\n").count(), 8);
    let json =
        std::env::temp_dir().join(format!("heisen-goal-default-{}.json", std::process::id()));
    let o = ok(&["simulate", ring, "--json", json.to_str().expect("utf-8")]);
    assert_eq!(stdout(&o).matches(": 77000\n").count(), 8);
    assert!(stderr(&o).contains("fixed build's rules"), "{}", stderr(&o));
    let _ = std::fs::remove_file(&json);
    let cpus = "tests/data/examples/several-cpus-causality.goal";
    let o = heisen(&["simulate", cpus, "--loggopsim", "released"]);
    assert!(stdout(&o).contains("Host 0: 10000\n"), "{}", stdout(&o));
    let refused =
        std::env::temp_dir().join(format!("heisen-goal-refused-{}.json", std::process::id()));
    let o = heisen(&[
        "simulate",
        ring,
        "--loggopsim",
        "released",
        "--json",
        refused.to_str().expect("utf-8"),
    ]);
    assert!(!refused.exists(), "nothing written for a refused run");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("end times only"), "{}", stderr(&o));
    let o = failed(&["simulate", "master-worker", "--loggopsim", "released"]);
    assert!(stderr(&o).contains("GOAL schedules"), "{}", stderr(&o));
    failed(&["simulate", ring, "--loggopsim", "unpatched"]);
}

#[test]
fn goal_graph_with_several_cpus_runs_as_loggopsim() {
    // docs/goal.md, "Several CPUs: a message is handled on the CPU
    // numbered like the send's": the fixed LogGOPSim prints 4500 and 6552,
    // LogGOPSim as released (the default) 4500 and 6542 (A3).
    let file = "tests/data/examples/several-cpus-message-cpu.goal";
    let o = ok(&["simulate", file, "--loggopsim", "fixed"]);
    let out = stdout(&o);
    assert!(out.contains("Host 0: 4500\nHost 1: 6552\n"), "{out}");
    let out = stdout(&heisen(&["simulate", file]));
    assert!(out.contains("Host 0: 4500\nHost 1: 6542\n"), "{out}");
    // An operation head-of-line behind a wait no longer deadlocks.
    let o = heisen(&["simulate", "tests/data/examples/no-head-of-line.goal"]);
    assert!(
        stdout(&o).contains("Host 0: 16000\nHost 1: 7000\n"),
        "{}",
        stdout(&o)
    );
    // A latency of 2^64 - 1 ns is refused as written, not run into a
    // wrapped end time.
    let o = failed(&[
        "simulate",
        "scenarios/dissemination_16.goal",
        "-L",
        "18446744073709551615",
    ]);
    assert!(
        stderr(&o).contains("-L 18446744073709551615: expected a whole number"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_goal_schedule_of_many_ranks_prints_a_summary_and_every_rank_on_request() {
    let dir = scratch("goal-summary");
    let file = dir.join("ring.goal");
    // 40 ranks in a ring: rank r sends to r + 1 after r * 100 ns of work.
    let mut text = String::from("num_ranks 40\n");
    for r in 0..40 {
        text += &format!(
            "rank {r} {{\nl1: calc {}\nl2: send 8b to {}\nl3: recv 8b from {}\nl2 requires l1\n}}\n",
            r * 100,
            (r + 1) % 40,
            (r + 39) % 40
        );
    }
    std::fs::write(&file, text).unwrap();
    let o = ok(&["simulate", file.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(out.starts_with("40 ranks, "), "{out}");
    for what in [
        "min    end: ",
        "median end: ",
        "max    end: ",
        "the 5 ranks that end last:",
    ] {
        assert!(out.contains(what), "no {what:?}\n{out}");
    }
    assert_eq!(
        out.lines().filter(|l| l.starts_with("Host ")).count(),
        5,
        "{out}"
    );
    let all = stdout(&heisen(&[
        "simulate",
        file.to_str().unwrap(),
        "--all-locations",
    ]));
    assert_eq!(
        all.lines().filter(|l| l.starts_with("Host ")).count(),
        40,
        "{all}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
