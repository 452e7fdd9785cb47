//! Tests of the GOAL reader and the graph it builds.

use super::*;
use crate::engine::{RunOptions, run};
use crate::transfer::LogGops;

fn ends(text: &str) -> Vec<u64> {
    let schedule = parse("test.goal", text).unwrap();
    let program = schedule
        .to_program("test.goal", Network::LogGops(LogGops::default()))
        .unwrap();
    run(&program, RunOptions::TIMES).unwrap().ends
}

/// The dissemination pattern the way LogGOPSim's schedgen writes it:
/// in round k every rank sends to `r + 2^k` and receives from `r - 2^k`;
/// the next round's send requires this round's receive.
fn dissemination(p: u32) -> String {
    let mut s = format!("num_ranks {p}\n\n");
    for r in 0..p {
        s += &format!("rank {r} {{\n");
        let mut label = 1;
        let mut dist = 1;
        while dist < p {
            let send = label;
            s += &format!("l{send}: send 1b to {} tag 0\n", (r + dist) % p);
            if send > 1 {
                s += &format!("l{send} requires l{}\n", send - 1);
            }
            s += &format!("l{}: recv 1b from {} tag 0\n", send + 1, (r + p - dist) % p);
            label += 2;
            dist *= 2;
        }
        s += "}\n\n";
    }
    s
}

#[test]
fn dissemination_16_ends_at_22000_on_every_rank_as_loggopsim_readme_says() {
    // LogGOPSim README: "each host end time is printed (22000ns for our
    // example with default parameters)". Per round: o + L to the first
    // byte, o to handle it: 4 rounds of 5500 ns.
    assert_eq!(ends(&dissemination(16)), vec![22000; 16]);
}

#[test]
fn ping_pong_one_byte() {
    // r0 sends at 0 (o: CPU until 1500); the byte reaches r1 at
    // o + L = 4000, r1 handles it until 5500 and sends back at 5500
    // (CPU until 7000); it reaches r0 at 9500, handled until 11000.
    let text = "num_ranks 2\nrank 0 {\nl1: send 1b to 1 tag 0\nl2: recv 1b from 1 tag 0\n}\n\
                rank 1 {\nl1: recv 1b from 0 tag 0\nl2: send 1b to 0 tag 0\nl2 requires l1\n}\n";
    assert_eq!(ends(text), vec![11000, 7000]);
}

#[test]
fn rendezvous_message_above_s_completes_the_send_at_the_match() {
    // 100000 b > S = 65535: rendezvous. r0 starts the send at 0 (CPU
    // until 1500). The first byte reaches r1 at 4000, but r1 computes
    // until 10000, so it handles the arrival at 10000:
    // o + max((s-1)O, (s-1)G) = 1500 + 99999 * 6 = 601494 -> 611494.
    // r1 posts its receive at 10000 (posting needs no CPU), which
    // matches: r0's send completes at 10000.
    let text = "num_ranks 2\nrank 0 {\nl1: send 100000b to 1 tag 5\n}\n\
                rank 1 {\nl1: calc 10000\nl2: recv 100000b from 0 tag 5\nl2 requires l1\n}\n";
    assert_eq!(ends(text), vec![10000, 611494]);
}

#[test]
fn chain_of_four_with_calc() {
    // r0: calc 1000, send 8 b at 1000 (CPU until 2500). Each hop: the
    // first byte arrives o + L = 4000 after the send starts, is handled
    // in o + 7G = 1542, then calc 500 and the next send (o = 1500):
    // r1 handles at 5000 -> 6542, calc -> 7042, send until 8542;
    // r2 handles at 11042 -> 12584, calc -> 13084, send until 14584;
    // r3 handles at 17084 -> 18626, calc -> 19126.
    let mut text =
        String::from("num_ranks 4\nrank 0 {\nl1: calc 1000\nl2: send 8b to 1\nl2 requires l1\n}\n");
    for r in 1..4 {
        text += &format!(
            "rank {r} {{\n/* receive, work, pass on */\nl1: recv 8b from {} tag 0\nl2: calc 500\nl2 requires l1\n",
            r - 1
        );
        if r < 3 {
            text += &format!("l3: send 8b to {} // next\nl3 requires l2\n", r + 1);
        }
        text += "}\n";
    }
    assert_eq!(ends(&text), vec![2500, 8542, 14584, 19126]);
}

fn ends_with(text: &str, network: LogGops) -> Vec<u64> {
    let schedule = parse("test.goal", text).unwrap();
    let program = schedule
        .to_program("test.goal", Network::LogGops(network))
        .unwrap();
    run(&program, RunOptions::TIMES).unwrap().ends
}

/// Binomial broadcast on 4 ranks: 0 -> 2, 0 -> 1, 2 -> 3.
const BINOMIAL_4: &str = "num_ranks 4\n\
    rank 0 {\nl1: send 1b to 2 tag 0\nl2: send 1b to 1 tag 0\n}\n\
    rank 1 {\nl1: recv 1b from 0 tag 0\n}\n\
    rank 2 {\nl1: recv 1b from 0 tag 0\nl2: send 1b to 3 tag 0\nl2 requires l1\n}\n\
    rank 3 {\nl1: recv 1b from 2 tag 0\n}\n";

#[test]
fn binomial_broadcast_serialises_the_roots_sends_on_o() {
    // Defaults (o = 1500 > g = 1000): r0's second send waits for the
    // CPU: starts at 1500, CPU until 3000. r2 handles its byte at
    // 4000 -> 5500 and forwards at 5500 (CPU until 7000); r1's byte
    // arrives at 1500 + 4000 = 5500 -> 7000; r3's at 9500 -> 11000.
    assert_eq!(ends(BINOMIAL_4), vec![3000, 7000, 7000, 11000]);
}

#[test]
fn binomial_broadcast_serialises_the_roots_sends_on_g() {
    // o = 500 < g = 1000: r0's second send waits for the NIC's gap:
    // starts at 1000 (CPU until 1500). Bytes arrive o + L = 3000
    // after a send starts: r2 at 3000 -> 3500, forwards at 3500 (CPU
    // until 4000); r1 at 4000 -> 4500; r3 at 6500 -> 7000.
    let p = LogGops {
        overhead: 500,
        ..LogGops::default()
    };
    assert_eq!(ends_with(BINOMIAL_4, p), vec![1500, 4500, 4000, 7000]);
}

#[test]
fn two_arrivals_at_once_queue_on_the_receivers_cpu() {
    // r1 and r2 both send at 0; both bytes arrive at 4000. r0 handles
    // the first until 5500 (its NIC is busy until 5000), the second
    // from 5500 to 7000.
    let text = "num_ranks 3\nrank 0 {\nrecv 1b from 1 tag 0\nrecv 1b from 2 tag 0\n}\n\
                rank 1 {\nsend 1b to 0 tag 0\n}\nrank 2 {\nsend 1b to 0 tag 0\n}\n";
    assert_eq!(ends(text), vec![7000, 1500, 1500]);
}

#[test]
fn errors_name_file_line_and_expectation() {
    let e = parse("bad.goal", "num_ranks 2\nrank 0 {\nl1: send 8 to 1\n}\n").unwrap_err();
    assert_eq!(e.to_string(), "bad.goal:3: expected \"b\", found \"to\"");
    let e = parse(
        "bad.goal",
        "num_ranks 2\nrank 0 {\nl1: calc 5\nl1 requires l9\n}\n",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad.goal:4: a dependency references label l9, which is undefined"
    );
    let e = parse("bad.goal", "num_ranks 2\nrank 0 {\nl1: calc 5\n").unwrap_err();
    assert!(
        e.to_string().starts_with("bad.goal:4: expected \"}\""),
        "{e}"
    );
    let e = parse("bad.goal", "num_ranks 2\nrank 3 {\n}\n").unwrap_err();
    assert_eq!(e.to_string(), "bad.goal:2: rank 3 is not below num_ranks 2");
    let e = parse("bad.goal", "rank 0 {\n}\n").unwrap_err();
    assert!(e.to_string().contains("num_ranks"), "{e}");
    let e = parse(
        "bad.goal",
        "num_ranks 1\nrank 0 {\n\nl1: calc 9999999999999999999\n}\n",
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("bad.goal:4: calc 9999999999999999999 is longer"),
        "{e}"
    );
    // Several CPUs parse (as LogGOPSim reads them) and are refused
    // when the schedule becomes a program.
    let text = "num_ranks 1\nrank 0 {\nl1: calc 5 cpu 1\n}\n";
    assert_eq!(parse("bad.goal", text).unwrap().ranks[0][0].cpu, 1);
    let e = load("bad.goal", text, Network::default()).unwrap_err();
    assert!(e.to_string().starts_with("bad.goal:3: cpu 1"), "{e}");
    let e = load_compiled("bad.goal", text, Network::default()).unwrap_err();
    assert!(e.to_string().starts_with("bad.goal:3: cpu 1"), "{e}");
    let e = parse("bad.goal", "num_ranks 1\nrank 0 {\nl1: calc 5 cpu 256\n}\n").unwrap_err();
    assert_eq!(e.to_string(), "bad.goal:3: cpu 256 is above 255");
}

#[test]
fn wildcards_and_comments_parse() {
    let s = parse("w.goal", "num_ranks 2 // two\n/* a\n b */\nrank 1 {\nrecv 4b from -1 tag -1\n}\nrank 0 {\nsend 4b to 1 tag 3 cpu 0 nic 0\n}\n").unwrap();
    assert_eq!(
        s.ranks[1][0].op,
        GoalOp::Recv {
            bytes: 4,
            from: None,
            tag: None
        }
    );
    assert_eq!(
        s.ranks[0][0].op,
        GoalOp::Send {
            bytes: 4,
            to: 1,
            tag: 3
        }
    );
    assert_eq!(s.ranks[0][0].line, 8);
}

#[test]
fn cycle_is_an_error() {
    let s = parse(
        "c.goal",
        "num_ranks 1\nrank 0 {\nl1: calc 1\nl2: calc 2\nl1 requires l2\nl2 requires l1\n}\n",
    )
    .unwrap();
    assert!(s.to_program("c.goal", Network::default()).is_err());
}

fn same_as_parse(text: &str) {
    let network = Network::LogGops(LogGops::default());
    let slow = parse("s.goal", text).and_then(|s| s.to_program("s.goal", network));
    let fast = load("s.goal", text, network);
    let compiled = load_compiled("s.goal", text, network);
    match (&slow, fast) {
        (Ok(a), Ok(b)) => assert_eq!(a, &b),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("parse: {a:?}\nload: {b:?}"),
    }
    // Compiled as it is read: the same as compiling the whole program.
    let whole = slow
        .and_then(|p| engine::compile(p).map_err(|e| InputError::new("s.goal", 0, e.to_string())));
    match (whole, compiled) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("compile: {a:?}\nload_compiled: {b:?}"),
    }
}

#[test]
fn compiled_as_read_runs_as_the_program() {
    let network = Network::LogGops(LogGops::default());
    // Ranks out of order, one missing, a wildcard and a rendezvous.
    let text = "num_ranks 4\nrank 2 {\nl1: recv 70000b from -1 tag 5\nl2: calc 30\nl2 requires l1\n}\n\
                rank 0 {\nl1: send 70000b to 2 tag 5\nl2: send 8b to 1\n}\n\
                rank 1 {\nrecv 8b from 0\n}\n";
    let program = load("s.goal", text, network).unwrap();
    let compiled = load_compiled("s.goal", text, network).unwrap();
    assert_eq!(compiled.program.locations.len(), 4);
    assert!(compiled.program.locations.iter().all(|l| l.body.is_empty()));
    for options in [RunOptions::TIMES, RunOptions::TRUTH] {
        assert_eq!(
            run(&program, options),
            engine::run_compiled(&compiled, options)
        );
    }
    let ends = run(&program, RunOptions::TIMES).unwrap().ends;
    assert_eq!(ends[3], 0, "rank 3 is not in the file and does nothing");
    assert!(
        ends[2] > 70_000 * 6,
        "the rendezvous message costs G per byte"
    );
    // A check that only the engine makes still names the file.
    let own = load_compiled(
        "o.goal",
        "num_ranks 2\nrank 1 {\nsend 1b to 1\n}\n",
        network,
    );
    assert_eq!(
        own.unwrap_err().to_string(),
        "o.goal: location 1 (rank 1): a send to itself"
    );
}

#[test]
fn load_is_parse_then_to_program() {
    same_as_parse(&dissemination(64));
    same_as_parse(BINOMIAL_4);
    for text in [
        "num_ranks 2\nrank 0 {\nl1: send 8 to 1\n}\n",
        "num_ranks 2\nrank 0 {\nl1: calc 5\nl1 requires l9\n}\n",
        "num_ranks 2\nrank 3 {\n}\n",
        "rank 0 {\n}\nnum_ranks 1\n",
        "num_ranks 2\nnum_ranks 3\nrank 2 {\n}\n",
        "num_ranks 2\nrank 0 {\n}\nrank 0 {\ncalc 1\n}\n",
        "num_ranks 2\nrank 0 {\ncalc 1\n}\nrank 0 {\ncalc 1\n}\n",
        "num_ranks 2\nrank 0 {\nsend 1b to 2\n}\n",
        "num_ranks 1\nrank 0 {\nl1: calc 1\nl2: calc 2\nl1 requires l2\nl2 requires l1\n}\n",
        "num_ranks 2 // two\n/* a\n b */\nrank 1 {\nrecv 4b from -1 tag -1\n}\nrank 0 {\nsend 4b to 1 tag 3 cpu 0 nic 0\n}\n",
        "num_ranks 3\nrank 1 {\nl1: calc 4\nl2: calc 5 cpu 0\nl3: send 9b to 0 tag 2\nl3 irequires l1\nl3 requires l2\n}\n",
        "num_ranks 0\n",
        "",
    ] {
        same_as_parse(text);
    }
}

#[test]
fn load_file_reads_in_chunks_as_load_reads_the_text() {
    let network = Network::LogGops(LogGops::default());
    let dir = std::env::temp_dir();
    let check = |text: &str, tag: &str| {
        let path = dir.join(format!("heisen-goal-{}-{tag}.goal", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let streamed = load_file("f.goal", &path, network);
        let compiled = load_file_compiled("f.goal", &path, network);
        let _ = std::fs::remove_file(&path);
        let whole = load("f.goal", text, network).map_err(|e| e.to_string());
        assert_eq!(streamed, whole);
        let whole = load_compiled("f.goal", text, network).map_err(|e| e.to_string());
        assert_eq!(compiled, whole);
    };
    // Several chunks, with brackets inside comments across lines.
    let mut text = dissemination(512);
    assert!(text.len() > 3 * CHUNK);
    let cut = text.len() / 2;
    let at = cut + text[cut..].find("rank ").unwrap();
    text.insert_str(
        at,
        "/* a comment { with\n brackets } across lines */ // {\n",
    );
    check(&text, "ok");
    // An error far into the file still names its line.
    let bad = text.replacen("send 1b to 7 ", "send 1 to 7 ", 1);
    assert_ne!(bad, text);
    check(&bad, "bad");
    let unclosed = format!("{text}rank 0 {{\n/* never closed\n");
    check(&unclosed, "unclosed");
}

mod graph {
    use super::*;
    use crate::engine::run_graph;

    fn graph_run(text: &str, p: LogGops) -> Result<Vec<u64>, String> {
        let g = load_graph("g.goal", text).map_err(|e| e.to_string())?;
        run_graph(&g, Network::LogGops(p))
            .map(|r| r.ends)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn dissemination_ends_as_loggopsims_readme_says() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/dissemination_16.goal"
        ))
        .unwrap();
        let ends = graph_run(&text, LogGops::default()).unwrap();
        assert_eq!(ends, vec![22000; 16]);
    }

    #[test]
    fn a_schedule_that_cannot_finish_says_which_ranks_and_why() {
        let text = "num_ranks 2\nrank 0 {\nl1: recv 1b from 1 tag 0\nl2: send 1b to 1 tag 0\nl2 requires l1\n}\nrank 1 {\nl1: recv 1b from 0 tag 0\nl2: calc 5\n}\n";
        let e = graph_run(text, LogGops::default()).unwrap_err();
        assert!(e.contains("deadlock"), "{e}");
        assert!(
            e.contains("rank 0: 1 operation waits for dependencies that never complete, 1 receive waits for a message"),
            "{e}"
        );
        assert!(e.contains("rank 1: 1 receive waits for a message"), "{e}");
    }

    #[test]
    fn a_deadlock_of_many_ranks_names_the_first_and_counts_the_rest() {
        // 40 ranks, each waiting for a message nobody sends.
        let mut text = String::from("num_ranks 40\n");
        for r in 0..40 {
            text += &format!("rank {r} {{\nl1: recv 1b from {} tag 0\n}}\n", (r + 1) % 40);
        }
        let e = graph_run(&text, LogGops::default()).unwrap_err();
        let shown = crate::engine::SHOWN_BLOCKED;
        assert_eq!(
            e.matches("1 receive waits for a message").count(),
            shown,
            "{e}"
        );
        assert!(e.contains(&format!("rank {}: ", shown - 1)), "{e}");
        assert!(!e.contains(&format!("rank {shown}: ")), "{e}");
        assert!(
            e.ends_with(&format!("; and {} more blocked", 40 - shown)),
            "{e}"
        );
    }

    #[test]
    fn time_past_two_to_the_64_is_an_error_not_a_wrap() {
        let p = LogGops {
            latency: u64::MAX,
            ..LogGops::default()
        };
        let text =
            "num_ranks 2\nrank 0 {\nsend 1b to 1 tag 0\n}\nrank 1 {\nrecv 1b from 0 tag 0\n}\n";
        let e = graph_run(text, p).unwrap_err();
        // Stopped at the clock bound (MAX_CLOCK) before any addition
        // could wrap.
        assert!(e.contains("simulated time passed"), "{e}");
    }

    #[test]
    fn cycles_are_refused_by_line() {
        let cycle =
            "num_ranks 1\nrank 0 {\nl1: calc 1\nl2: calc 2\nl1 requires l2\nl2 requires l1\n}\n";
        let e = load_graph("g.goal", cycle).unwrap_err().to_string();
        assert!(
            e.contains("g.goal:3: rank 0: the dependencies form a cycle"),
            "{e}"
        );
    }

    /// A rank's message to itself is handled like any other (G6), as
    /// LogGOPSim does (fixed LogGOPSim: `Host 0: 5654`, `Host 1: 5`): the
    /// send holds the CPU 0-1500, the message arrives at 4000 and is
    /// handled until 5554 (o + 9G), completing the receive posted at 0.
    #[test]
    fn a_rank_receives_its_own_message() {
        let own = "num_ranks 2\nrank 0 {\nl1: send 10b to 0 tag 3\nl2: recv 10b from 0 tag 3\nl3: calc 100\nl3 requires l2\n}\nrank 1 {\ncalc 5\n}\n";
        assert_eq!(graph_run(own, LogGops::default()).unwrap(), vec![5654, 5]);
    }

    /// A calc up to 2^60 ns runs as LogGOPSim runs it (fixed LogGOPSim,
    /// `tests/data/edge/big-calc.goal`), kernels and trace included, and
    /// nothing overflows (the test profile checks); longer is refused by
    /// line, and the sequence form keeps `MAX_TIME`.
    #[test]
    fn calcs_up_to_2_pow_60_run() {
        let text = "num_ranks 2\nrank 0 {\nl1: calc 1152921504606846976\nl2: send 1b to 1\nl2 requires l1\nl3: calc 2000000000000 cpu 1\n}\nrank 1 {\nl1: calc 2000000000000\nl2: recv 1b from 0\nl3: calc 7\nl3 requires l2\n}\n";
        let p = LogGops::default();
        let ends = vec![1_152_921_504_606_848_476, 1_152_921_504_606_852_483];
        assert_eq!(graph_run(text, p).unwrap(), ends);
        let g = load_graph("g.goal", text).unwrap();
        let options = crate::engine::RunOptions {
            trace: true,
            ..crate::engine::RunOptions::TRUTH
        };
        let r = crate::engine::run_graph_with(&g, Network::LogGops(p), options).unwrap();
        assert_eq!(r.ends, ends);
        assert!(r.trace.is_some());
        let longer = text.replace("1152921504606846976", "1152921504606846977");
        let e = load_graph("g.goal", &longer).unwrap_err().to_string();
        assert!(
            e.contains("g.goal:3: calc 1152921504606846977 is longer"),
            "{e}"
        );
        let one = "num_ranks 1\nrank 0 {\ncalc 1152921504606846976\n}\n";
        let e = load_compiled("g.goal", one, Network::LogGops(p)).unwrap_err();
        assert!(
            e.to_string()
                .contains("the sequence form takes calcs up to"),
            "{e}"
        );
    }

    /// `from 4294967295` is LogGOPSim's any source (its `-1`, G10).
    #[test]
    fn from_4294967295_is_any_source() {
        let text = "num_ranks 2\nrank 0 {\nsend 1b to 1 tag 6\n}\nrank 1 {\nrecv 1b from 4294967295 tag 6\n}\n";
        let any = text.replace("4294967295", "-1");
        let g = LogGops::default();
        assert_eq!(graph_run(text, g).unwrap(), graph_run(&any, g).unwrap());
        let beyond = text.replace("4294967295", "4294967294");
        assert!(load_graph("g.goal", &beyond).is_err());
    }

    #[test]
    fn idle_and_missing_ranks_end_at_zero() {
        let text = "num_ranks 3\nrank 2 {\ncalc 7 cpu 2\n}\n";
        assert_eq!(graph_run(text, LogGops::default()).unwrap(), vec![0, 0, 7]);
    }
}
