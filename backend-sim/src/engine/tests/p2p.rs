//! Point-to-point messages through the whole engine: LogGOPS costs,
//! nonblocking calls and sendrecv, compensation across a message, the
//! statistics of each call (R4, R5, R12).

use super::{FREE, two_ranks};
use crate::compare::compare;
use crate::engine::{RunOptions, run};
use crate::program::{Dest, Op, ProgramBuilder, Source};

#[test]
fn every_point_to_point_call_has_a_comm_record() {
    // R12 (002 Fig. 10 COM): r0's send never waits; r1's receive waits
    // from 0 to the arrival at 1000 + 500 in the truth, and in the
    // measured run its compensated wait is that true wait (R5).
    let comms = |options| {
        let r = run(&two_ranks(30), options).unwrap();
        let reports = r.reports.unwrap();
        (reports[0].comms.clone(), reports[1].comms.clone())
    };
    let (send, recv) = comms(RunOptions::TRUTH);
    assert_eq!(send.len(), 1);
    assert_eq!(
        (
            send[0].peer,
            send[0].count,
            send[0].bytes,
            send[0].measured_wait
        ),
        (1, 1, 100, 0)
    );
    assert_eq!(send[0].site, 3, "after enter, compute and exit");
    assert_eq!(recv.len(), 1);
    let truth = recv[0];
    assert_eq!(
        (truth.site, truth.peer, truth.count, truth.bytes),
        (0, 0, 1, 100)
    );
    assert_eq!(
        (truth.measured_wait, truth.compensated_wait, truth.transfer),
        (1500, 1500, 500)
    );
    let (_, recv) = comms(RunOptions::MEASURED);
    assert!(recv[0].measured_wait > truth.measured_wait);
    assert_eq!(recv[0].compensated_wait, 1500);
    assert_eq!(recv[0].transfer, 500);
}

#[test]
fn receiver_inherits_the_senders_delay_exactly() {
    // Truth: r0 sends at 1000, the message arrives at 1500, r1 ends
    // at 1700. Measured: enter (100) + exit (100) delay the send to
    // 1200, r1 ends at 1900. R4: x' = min(0 + 1700, 200) = 200;
    // R5: a(e) = a_j + (e - t_j) = 1000 + 500.
    let c = compare(&two_ranks(0)).unwrap();
    let r1 = &c.rows[1];
    assert_eq!((r1.truth, r1.measured), (1700, 1900));
    assert_eq!(r1.local_only, 1900, "r1 has no overhead of its own");
    assert_eq!((r1.timestamped, r1.delay_only), (1700, 1700));
    let r0 = &c.rows[0];
    assert_eq!(
        (r0.truth, r0.measured, r0.local_only, r0.timestamped),
        (1000, 1200, 1000, 1000)
    );
}

#[test]
fn send_cost_falls_before_the_departure_and_is_compensated() {
    // The send reads its clock, packs its piggyback for 50 ns, and
    // only then does the message leave: the record's delay includes
    // the 50 ns (R1, R3), so both forms land on the truth.
    let c = compare(&two_ranks(50)).unwrap();
    let r1 = &c.rows[1];
    assert_eq!((r1.truth, r1.measured), (1700, 1950));
    assert_eq!((r1.timestamped, r1.delay_only), (1700, 1700));
}

#[test]
fn loggops_eager_send_and_receive_costs() {
    // Default LogGOPS: send at 0 (o = 1500), first byte at 4000,
    // handled until 5500 + 9 * 6 = 5554 (o + (s-1)G, s = 10).
    let mut b = ProgramBuilder::new("p");
    let (r0, r1) = (b.rank("r0"), b.rank("r1"));
    b.on(r0).send(r1, 10, 0);
    b.on(r1).recv(Source::Any, 10, None);
    let r = run(&b.build().unwrap(), RunOptions::TIMES).unwrap();
    assert_eq!(r.ends, vec![1500, 5554]);
}

#[test]
fn nonblocking_and_sendrecv_exchange() {
    let mut b = ProgramBuilder::new("x");
    b.network(FREE);
    let (r0, r1) = (b.rank("r0"), b.rank("r1"));
    b.on(r0)
        .irecv(Source::Location(r1), 8, Some(1), 10)
        .isend(r1, 8, 1, 11)
        .compute(100)
        .waitall()
        .op(Op::Sendrecv {
            to: Dest::Location(r1),
            send_bytes: 8,
            from: Source::Location(r1),
            recv_bytes: 8,
            tag: 2,
        });
    b.on(r1)
        .compute(300)
        .isend(r0, 8, 1, 3)
        .irecv(Source::Location(r0), 8, Some(1), 4)
        .wait(4)
        .wait(3)
        .op(Op::Sendrecv {
            to: Dest::Location(r0),
            send_bytes: 8,
            from: Source::Location(r0),
            recv_bytes: 8,
            tag: 2,
        });
    // r0's message leaves at 0 and arrives at 500, after r1 posted
    // its receive (300), so r1's wait(4) ends at 500. r1's message
    // leaves at 300 and arrives at 800: r0's waitall ends at 800.
    // Sendrecv: r0 sends at 800 (arrives 1300), r1 at 500 (arrives
    // 1000): r0 ends at 1000, r1 at 1300.
    let r = run(&b.build().unwrap(), RunOptions::TIMES).unwrap();
    assert_eq!(r.ends, vec![1000, 1300]);
}
