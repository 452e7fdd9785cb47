//! Bad input: every error a failure status and one line that names what
//! was wrong and where.

use super::*;

// ----- class "wrong successes": values that overflow, MPI errors -------------

#[test]
fn loggops_values_beyond_range_are_refused_not_overflowed() {
    let goal = "scenarios/dissemination_16.goal";
    refused(
        &["simulate", goal, "-L", "18446744073709551615"],
        &["-L 18446744073709551615", "from 0 to 1099511627776"],
    );
    refused(
        &["simulate", goal, "-G", "2000000"],
        &["-G 2000000", "from 0 to"],
    );
    refused(
        &["simulate", "master-worker", "-o", "99999999999999"],
        &["-o 99999999999999"],
    );
    // At the limit, the run's time stays in range (2^40 per hop).
    let o = ok(&["simulate", goal, "-L", "1099511627776"]);
    assert!(
        stdout(&o).contains("Host 15: 4398046523104"),
        "{}",
        stdout(&o)
    );
}

// ----- class "memory and progress" ------------------------------------------

#[test]
fn a_runaway_program_is_announced_and_stopped_by_max_events() {
    // 4e9 x 4e9 turns: announced at once, stopped at the event limit.
    let file = scenario_file(
        "runaway",
        "r.toml",
        "[[location]]\nname = \"a\"\nops = [ { loop = 4000000000, ops = [ { loop = 4000000000, ops = [ { compute = 1 } ] } ] } ]\n",
    );
    let o = heisen(&["simulate", &file, "--max-events", "20000"]);
    let err = stderr(&o);
    assert!(!o.status.success() && o.status.code() != Some(101), "{err}");
    assert!(
        err.contains("heisen: error: ")
            && err.contains("stopped after 20000 events (--max-events)"),
        "{err}"
    );
    assert!(
        err.contains("warning: ")
            && err.contains("runs about 3.20e19 operations")
            && err.contains("--max-events stops it after 20000 events"),
        "{err}"
    );
    // GOAL schedules too.
    let g = heisen(&[
        "simulate",
        "scenarios/dissemination_16.goal",
        "--max-events",
        "10",
    ]);
    assert!(
        !g.status.success() && stderr(&g).contains("stopped after 10 events (--max-events)"),
        "{}",
        stderr(&g)
    );
    let o = heisen(&["simulate", &file, "--max-events", "0"]);
    assert!(
        stderr(&o).contains("stopped after 0 events"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_goal_schedule_is_stopped_by_max_events_too() {
    // The graph executor (GOAL) honours the same limit as programs.
    let file = scenario_file(
        "goal-limit",
        "g.goal",
        "num_ranks 2\nrank 0 {\nl1: calc 100000\nl2: send 8b to 1\nl2 requires l1\n}\nrank 1 {\nl1: recv 8b from 0\n}\n",
    );
    ok(&["simulate", &file]);
    let o = heisen(&["simulate", &file, "--max-events", "2"]);
    let err = stderr(&o);
    assert!(!o.status.success() && o.status.code() != Some(101), "{err}");
    assert!(
        err.contains("stopped after 2 events (--max-events)"),
        "{err}"
    );
}

#[test]
fn a_message_larger_than_its_receive_is_a_truncation_error() {
    let file = scenario_file(
        "truncate",
        "t.toml",
        "[[location]]\nname = \"a\"\nops = [ { send = \"b\", bytes = 1000 } ]\n\
         [[location]]\nname = \"b\"\nops = [ { recv = \"a\", bytes = 8 } ]\n",
    );
    refused(
        &["simulate", &file],
        &[
            "truncated",
            "a sent 1000 B",
            "to b",
            "at most 8 B",
            "MPI_ERR_TRUNCATE",
        ],
    );
}

#[test]
fn a_message_nobody_receives_is_warned_about() {
    let file = scenario_file(
        "unreceived",
        "u.toml",
        "[[location]]\nname = \"a\"\nops = [ { send = \"b\", bytes = 8, tag = 3 } ]\n\
         [[location]]\nname = \"b\"\nops = [ { compute = 5 } ]\n",
    );
    let o = ok(&["simulate", &file]);
    let err = stderr(&o);
    assert!(
        err.contains("warning: 1 messages were sent but never received: a to b (tag 3, 8 B)"),
        "{err}"
    );
}

#[test]
fn two_locations_with_one_name_are_refused() {
    let file = scenario_file(
        "names",
        "n.toml",
        "[[location]]\nname = \"w\"\ncount = 2\n\n[[location]]\nname = \"w 2\"\n",
    );
    refused(
        &["simulate", &file],
        &[
            "n.toml:5:",
            "a second location named \"w 2\"",
            "first is on line 1",
        ],
    );
}

// ----- class "messages in Rust terms": what, where, what is allowed ----------

#[test]
fn bad_values_are_named_as_written_with_what_is_allowed() {
    let toml = |ops: &str| format!("[[location]]\nname = \"a\"\nops = [\n  {ops}\n]\n");
    let file = scenario_file("terms", "c.toml", &toml("{ compute = -5 }"));
    refused(
        &["simulate", &file],
        &[
            "c.toml:4: compute = -5:",
            "whole number, 0 or more",
            "uniform",
        ],
    );
    for (op, expect) in [
        (
            "{ send = 0, bytes = -8 }",
            "c.toml:4: bytes = -8: expected a whole number, 0 or more",
        ),
        (
            "{ send = -1 }",
            "c.toml:4: send = -1: a location is its name",
        ),
        (
            "{ recv = 0, tag = -2 }",
            "c.toml:4: tag = -2: expected a whole number from 0 to 4294967295",
        ),
    ] {
        let file = scenario_file("terms", "c.toml", &toml(op));
        refused(&["simulate", &file], &[expect]);
    }
    for e in ["u64", "untagged", "ComputeFile", "Peer"] {
        let o = heisen(&["simulate", &file]);
        assert!(!stderr(&o).contains(e), "{}", stderr(&o));
    }
}

#[test]
fn a_negative_number_in_a_goal_schedule_is_named() {
    let file = scenario_file(
        "goal-negative",
        "n.goal",
        "num_ranks 1\nrank 0 {\nl1: calc -5\n}\n",
    );
    refused(
        &["simulate", &file],
        &["n.goal:3: -5: a GOAL number is a whole number, 0 or more"],
    );
}

#[test]
fn negative_options_are_named_not_taken_for_flags() {
    refused(
        &["simulate", "scenarios/dissemination_16.goal", "-L", "-5"],
        &["-L -5: expected a whole number of ns from 0 to"],
    );
    refused(
        &["simulate", "master-worker", "--seed", "-3"],
        &["--seed -3: expected a whole number"],
    );
    refused(
        &["simulate", "master-worker", "--max-events", "x"],
        &["--max-events x"],
    );
    refused(
        &["simulate", "master-worker", "--match", "random"],
        &["random", "observed", "approximated"],
    );
    let o = heisen(&["simulate", "master-worker", "-L", "-5"]);
    assert!(!stderr(&o).contains("-- -5"), "{}", stderr(&o));
}
