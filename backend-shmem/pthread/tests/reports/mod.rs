//! What the interposer's tests read from its reports: every location's
//! sanity, and a hand-off's merge seen from both of its threads.

use serde_json::Value;

/// Location records of a report, checked for the invariants every
/// report keeps whatever the program did.
pub(crate) fn sane_locations(r: &Value) -> &Vec<Value> {
    let locations = r["locations"].as_array().expect("locations");
    let n = |l: &Value, k: &str| l[k].as_i64().unwrap_or_else(|| panic!("{k} in {l}"));
    // A delay is overhead removed, the location's own or taken over (R4,
    // R5): never more than all the overhead charged, where every thread's
    // is in the report (none dropped, none caught running at exit). A
    // preemption inside a merge that had not waited once made it 16 times
    // that (`merge::may_have_waited`).
    let dropped = ["threads_dropped", "locations_dropped", "running_at_exit"]
        .iter()
        .any(|k| r["runtime"][k].as_u64() != Some(0));
    let charged: i64 = locations.iter().map(|l| n(l, "overhead")).sum();
    for l in locations {
        assert!(n(l, "measured_end") >= n(l, "start"), "{l}");
        assert_eq!(
            n(l, "approximated_end"),
            n(l, "measured_end") - n(l, "delay"),
            "{l}"
        );
        assert!(
            dropped || n(l, "delay") <= charged,
            "a delay beyond all {charged} ns of overhead charged: {l}"
        );
    }
    locations
}

/// Location `id`'s record in report `r` (checked by `sane_locations`).
pub(crate) fn location(r: &Value, id: i64) -> &Value {
    sane_locations(r)
        .iter()
        .find(|l| l["location"].as_i64() == Some(id))
        .unwrap_or_else(|| panic!("location {id} in {}", r["runtime"]))
}

/// What report `r` charged a pthread mutex pair, lock and unlock (their
/// actions' whole costs, R1), in ns.
pub(crate) fn mutex_pair_charge(r: &Value) -> u64 {
    let whole = |action: &str| {
        r["header"]["actions"]
            .as_array()
            .expect("actions")
            .iter()
            .find(|a| a["action"] == action)
            .and_then(|a| a["whole"].as_u64())
            .unwrap_or_else(|| panic!("{action}'s cost in {}", r["header"]))
    };
    whole("pthread_mutex_lock") + whole("pthread_mutex_unlock")
}

/// A report of two threads where main waited in `call` for the other
/// thread's heavily instrumented work: the hand-off was merged (R8).
pub(crate) fn main_took_over_the_other_threads_delay(r: &Value, call: &str) {
    assert_eq!(sane_locations(r).len(), 2, "{call}: {}", r["runtime"]);
    let (main, other) = (location(r, 0), location(r, 1));
    let n = |l: &Value, k: &str| {
        l[k].as_i64()
            .unwrap_or_else(|| panic!("{call}: {k} in {l}"))
    };
    // Without a merge main's delay is its own overhead exactly, which a
    // loaded machine may make larger (calls spin longer): the merge is
    // what main's delay holds beyond it, at least half of what the other
    // thread's 20,000 mutex pairs were charged (R1), which main's wait
    // covered (the other thread began them once main was asleep in it).
    // Not the other thread's whole overhead: that holds its registration,
    // which main's wait did not cover, and a preempted registration takes
    // milliseconds. Less what the pairs were charged beyond their measured
    // time, which the other thread's over-compensation record holds (R1: a
    // calibration on a loaded machine may charge a pair more than it takes,
    // 88 against 34 ns once): main's delay is at most its wait (R5:
    // `x' = min(x + w, x_j)`), and its wait covered the pairs' measured time
    // only (`wrlock`: 0.80 ms against 1.76 ms charged, 1.07 ms of it over).
    let (main_delay, main_overhead) = (n(main, "delay"), n(main, "overhead"));
    let other_overhead = n(other, "overhead");
    let overcharged = -n(&other["overcompensation"], "total");
    let pairs = 20_000 * i64::try_from(mutex_pair_charge(r)).expect("a cost in ns");
    assert!(
        2 * (main_delay - main_overhead) >= pairs - overcharged,
        "{call}: main's delay {main_delay} ns (its own overhead \
         {main_overhead} ns) took over the other thread's pairs (charged \
         {pairs} ns, {overcharged} ns of it beyond their measured time)"
    );
    // And no more: a delay is overhead removed, its own or taken over
    // (R4, R5). Before timed-out waits were the program's time, the
    // program's 1 ms timeouts before the hand-off gave main (and, through
    // its creation, the other thread) 4 ms of delay against 0.7 ms of
    // overhead in all; before a join's transfer was the thread's exit
    // (`LET_GO_LATER`), up to 40 µs more (C11's `mtx`, 1 run in 4); before
    // a merge that began after its release merged as one that did not
    // wait (`merge::may_have_waited`), a preemption inside it (`ordered`:
    // 12.7 ms in the other thread's next section start, 1 run in 3 with
    // four programs at once on two cores).
    assert!(
        main_delay <= main_overhead + other_overhead,
        "{call}: main's delay {main_delay} ns is more than all the overhead \
         charged ({main_overhead} + {other_overhead} ns)"
    );
}
