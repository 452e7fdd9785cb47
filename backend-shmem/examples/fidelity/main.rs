//! Real-run fidelity (README "Threads"): the same threaded program run
//! without any heisen code and with heisen's wrappers and a heavy region
//! load, alternately; per thread, the medians of the uninstrumented wall
//! time, the instrumented wall time, heisen's compensated elapsed time
//! and the local-only estimate (measured minus the thread's own overhead);
//! then per worker the medians of its thread CPU time uninstrumented,
//! instrumented, and instrumented less the overhead heisen charged (R1).
//!
//! `cargo run --release -p heisen-shmem --example fidelity [runs] [threads]`

mod program;

fn main() {
    let mut args = std::env::args().skip(1);
    let runs = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let threads = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let shape = program::Shape {
        threads,
        phases: 40,
        cells: 4_000,
        tasks: std::env::var("TASKS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(200),
        own_every: std::env::var("OWN_EVERY")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(4),
        shared_every: std::env::var("SHARED_EVERY")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(64),
    };
    let measured = program::measure(shape, runs);
    let rows = &measured.wall;
    println!(
        "fidelity: {threads} workers, {runs} alternating runs, medians in ms; error against uninstrumented"
    );
    println!(
        "{:<10} {:>14} {:>22} {:>22} {:>22}",
        "thread", "uninstrumented", "instrumented", "compensated", "local-only"
    );
    let ms = |ns: f64| ns / 1e6;
    let pct = |v: f64, truth: f64| 100.0 * (v - truth) / truth;
    for (i, [plain, inst, comp, local]) in rows.iter().copied().enumerate() {
        let name = if i == 0 {
            "main".to_owned()
        } else {
            format!("worker {}", i - 1)
        };
        println!(
            "{name:<10} {:>14.3} {:>13.3} ({:>+6.1}%) {:>13.3} ({:>+6.1}%) {:>13.3} ({:>+6.1}%)",
            ms(plain),
            ms(inst),
            pct(inst, plain),
            ms(comp),
            pct(comp, plain),
            ms(local),
            pct(local, plain)
        );
    }
    println!(
        "thread CPU time, medians in ms (less charged: instrumented minus the overhead heisen charged, R1)"
    );
    println!(
        "{:<10} {:>14} {:>22} {:>22}",
        "thread", "uninstrumented", "instrumented", "less charged"
    );
    for (w, [plain, inst, charged]) in measured.cpu.iter().copied().enumerate().skip(1) {
        println!(
            "{:<10} {:>14.3} {:>13.3} ({:>+6.1}%) {:>13.3} ({:>+6.1}%)",
            format!("worker {}", w - 1),
            ms(plain),
            ms(inst),
            pct(inst, plain),
            ms(inst - charged),
            pct(inst - charged, plain)
        );
    }
}
